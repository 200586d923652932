//! The pre-tool guard (`aidlc engine hook guard`, issue 26 item 6, docs/decisions.md D34):
//! where each harness lets a hook refuse a tool call before it runs, what the guard refuses,
//! and how the refusal is said.
//!
//! The guard refuses an agent's tool call that writes into an audit folder (`…/aidlc/…/audit/`),
//! the hooks-health folder, the engine's record folder (`.aidlc-engine/`, which keeps the
//! prompts of harnesses without a transcript), the human-turn marker or the session's
//! transcript; and a command that runs the human-turn hook, `engine log answer` or an override
//! (`--override-blocking-sensors`): those are the human's, from the human's own shell. Reading
//! any of them stays allowed. Commands are read as text: the guard is a fence against an agent
//! following its instructions, not a sandbox (the receipt's verification is what an agent
//! cannot get round).
//!
//! Invariants: it reads only its payload (no project, no graph), so it is fast on every tool
//! call; a payload it cannot read is refused with the reason, never allowed.
//!
//! Every harness with hooks refuses the same way on the command line: exit status 2 with the
//! reason on stderr (Claude Code, Codex, Kiro CLI and Kiro IDE, as the reference's own guards
//! do); opencode has no exit status to read, so its plugin throws the reason as an error from
//! `tool.execute.before`, which refuses the call.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use crate::harness::Harness;

/// Where a harness runs a pre-tool hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardSite {
    /// The event, as the harness's registration names it.
    pub event: &'static str,
    /// The file (project-relative) that registers it.
    pub registered_in: &'static str,
}

/// How a refusal reaches the harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The hook exits with `status` and the reason on stderr.
    ExitStatus { status: u8, stderr: String },
    /// The plugin throws an error whose message is the reason.
    ThrownError { message: String },
}

/// `harness`'s guard site, or `None` for a harness without hooks.
pub fn guard_site(harness: Harness) -> Option<GuardSite> {
    let site = |event, registered_in| {
        Some(GuardSite {
            event,
            registered_in,
        })
    };
    match harness {
        Harness::Claude => site("PreToolUse", ".claude/settings.json"),
        Harness::Codex => site("PreToolUse", ".codex/hooks.json"),
        Harness::Kiro => site("preToolUse", ".kiro/agents/aidlc.json"),
        Harness::KiroIde => site("PreToolUse", ".kiro/hooks/aidlc-engine-guard.json"),
        Harness::Opencode => site("tool.execute.before", ".opencode/plugin/aidlc-engine.ts"),
        Harness::Cursor => None,
    }
}

/// How `harness` is told that a tool call is refused for `reason`.
pub fn refusal(harness: Harness, reason: &str) -> Refusal {
    match harness {
        Harness::Opencode => Refusal::ThrownError {
            message: reason.to_owned(),
        },
        _ => Refusal::ExitStatus {
            status: 2,
            stderr: format!("{}\n", reason.trim_end()),
        },
    }
}

/// What the guard says of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardVerdict {
    Allow,
    Deny { reason: String },
}

/// The tools that only read: their paths are never refused.
const READ_ONLY_TOOLS: [&str; 12] = [
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "fs_read",
    "read",
    "glob",
    "grep",
    "list",
    "readFile",
    "listDirectory",
];
/// The keys under which a tool's input names a file it writes.
const PATH_KEYS: [&str; 5] = [
    "file_path",
    "path",
    "filePath",
    "notebook_path",
    "target_file",
];
/// The keys under which a tool's input holds a command to run.
const COMMAND_KEYS: [&str; 3] = ["command", "cmd", "script"];
/// The commands that are the human's to run (whitespace runs folded before the match).
const HUMAN_ONLY_COMMANDS: [&str; 4] = [
    "record-human-turn",
    "engine log answer",
    "--override-blocking-sensors",
    "aidlc-record-human-turn",
];
/// The folders and files of a project an agent never writes.
const GUARDED_NAMES: [&str; 3] = [".aidlc-hooks-health", ".aidlc-engine", ".aidlc-human-turn"];

/// The verdict on `harness`'s pre-tool `payload`, or why the payload cannot be read (which the
/// caller refuses too).
pub fn guard_verdict(harness: Harness, payload: &[u8]) -> Result<GuardVerdict, String> {
    let value: Value = serde_json::from_slice(payload)
        .map_err(|error| format!("the pre-tool payload is not JSON ({error})"))?;
    let Value::Object(object) = value else {
        return Err("the pre-tool payload is not a JSON object".to_owned());
    };
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    let tool = match harness {
        Harness::Opencode => text("tool"),
        Harness::KiroIde => text("toolName").or_else(|| text("tool_name")),
        _ => text("tool_name"),
    }
    .ok_or_else(|| {
        format!(
            "the pre-tool payload names no tool (\"{}\")",
            tool_key(harness)
        )
    })?;
    let empty = Value::Object(Map::new());
    let input = ["tool_input", "toolArgs", "args"]
        .iter()
        .find_map(|key| object.get(*key))
        .unwrap_or(&empty);
    let cwd = text("cwd")
        .or_else(|| text("directory"))
        .map(Utf8PathBuf::from);
    let transcript = text("transcript_path").map(Utf8PathBuf::from);
    let guarded = Guarded {
        cwd: cwd.as_deref(),
        transcript: transcript.as_deref(),
    };
    Ok(judge(tool, input, &guarded))
}

fn tool_key(harness: Harness) -> &'static str {
    match harness {
        Harness::Opencode => "tool",
        Harness::KiroIde => "toolName",
        _ => "tool_name",
    }
}

/// What the guard protects beyond the fixed names: the session's transcript.
struct Guarded<'p> {
    cwd: Option<&'p Utf8Path>,
    transcript: Option<&'p Utf8Path>,
}

fn judge(tool: &str, input: &Value, guarded: &Guarded<'_>) -> GuardVerdict {
    let deny = |reason: String| GuardVerdict::Deny { reason };
    if tool == "apply_patch" {
        for path in crate::harness::payload::codex_patch_paths(&strings_of(input).join("\n")) {
            if let Some(what) = guarded.protects(path) {
                return deny(format!(
                    "aidlc: this patch writes {path}, {what}; agents do not write there"
                ));
            }
        }
        return GuardVerdict::Allow;
    }
    let mut commands = Vec::new();
    let mut paths = Vec::new();
    collect(input, &mut commands, &mut paths);
    for command in &commands {
        let folded = command.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(phrase) = HUMAN_ONLY_COMMANDS
            .iter()
            .find(|phrase| folded.contains(**phrase))
        {
            return deny(format!(
                "aidlc: `{phrase}` is the human's to run, from their own terminal, not from an agent's tool call (docs/decisions.md D34). Ask the human to type their choice in the session; they record the answer and the override themselves."
            ));
        }
        for word in command.split(|c: char| c.is_whitespace() || "<>|;&()'\"=`".contains(c)) {
            if word.is_empty()
                || !(word.contains('/') || GUARDED_NAMES.iter().any(|name| word.contains(name)))
            {
                continue;
            }
            if let Some(what) = guarded.protects_in_command(word) {
                return deny(format!(
                    "aidlc: this command touches {word}, {what}; agents do not write there (read it with the read tool)"
                ));
            }
        }
    }
    if READ_ONLY_TOOLS.contains(&tool) {
        return GuardVerdict::Allow;
    }
    for path in &paths {
        if let Some(what) = guarded.protects(path) {
            return deny(format!(
                "aidlc: {tool} would write {path}, {what}; agents do not write there"
            ));
        }
    }
    GuardVerdict::Allow
}

impl Guarded<'_> {
    /// What `path` is, when it is something agents do not write.
    fn protects(&self, path: &str) -> Option<&'static str> {
        let path = Utf8PathBuf::from(path.replace('\\', "/"));
        let path = match self.cwd {
            Some(cwd) if path.is_relative() => cwd.join(path),
            _ => path,
        };
        let components: Vec<&str> = path
            .components()
            .map(|component| component.as_str())
            .collect();
        if let Some(transcript) = self.transcript
            && (path == transcript
                || transcript
                    .parent()
                    .is_some_and(|folder| path.starts_with(folder)))
        {
            return Some("the session's transcript");
        }
        if let Some(name) = components
            .iter()
            .find(|component| GUARDED_NAMES.contains(component))
        {
            return Some(match *name {
                ".aidlc-hooks-health" => "the hooks-health folder",
                ".aidlc-human-turn" => "the human-turn marker",
                _ => "the engine's record folder",
            });
        }
        let under_aidlc = components
            .iter()
            .position(|component| *component == "aidlc");
        let audit = components
            .iter()
            .rposition(|component| *component == "audit");
        match (under_aidlc, audit) {
            (Some(root), Some(audit)) if audit > root => Some("an audit folder"),
            _ => None,
        }
    }

    /// As [`Self::protects`], for a word of a command: a path with an `audit` folder in it counts
    /// wherever it is relative to (the command may have changed folder).
    fn protects_in_command(&self, word: &str) -> Option<&'static str> {
        self.protects(word).or_else(|| {
            word.split('/')
                .any(|component| component == "audit")
                .then_some("an audit folder")
        })
    }
}

/// Every string in `value`, depth first.
fn strings_of(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items.iter().flat_map(strings_of).collect(),
        Value::Object(members) => members.values().flat_map(strings_of).collect(),
        _ => Vec::new(),
    }
}

/// The command texts and written paths of a tool's input: strings under [`COMMAND_KEYS`] (a
/// list of words is joined) and [`PATH_KEYS`], at any depth (`MultiEdit`'s edits, a patch list).
fn collect(value: &Value, commands: &mut Vec<String>, paths: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                if COMMAND_KEYS.contains(&key.as_str()) {
                    commands.push(strings_of(member).join(" "));
                } else if PATH_KEYS.contains(&key.as_str()) {
                    paths.extend(strings_of(member));
                } else {
                    collect(member, commands, paths);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                collect(item, commands, paths);
            }
        }
        _ => {}
    }
}

/// What the guard prints and its exit status, for `harness`: Claude Code's deny decision on
/// stdout (exit 0, `hookSpecificOutput.permissionDecision: "deny"` with the reason); elsewhere the
/// harness's [`refusal`]; nothing at all for an allowed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardOutput {
    pub status: u8,
    pub stdout: String,
    pub stderr: String,
}

pub fn guard_output(harness: Harness, verdict: &GuardVerdict) -> GuardOutput {
    let GuardVerdict::Deny { reason } = verdict else {
        return GuardOutput {
            status: 0,
            stdout: String::new(),
            stderr: String::new(),
        };
    };
    if harness == Harness::Claude {
        let decision = serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        });
        return GuardOutput {
            status: 0,
            stdout: format!("{decision}\n"),
            stderr: String::new(),
        };
    }
    unreadable_output(reason)
}

/// A payload the guard cannot read: refused with the reason, exit 2 on every harness (Claude
/// Code reads exit 2 as a block too, with stderr as the reason; the engine's opencode plugin
/// throws it).
pub fn unreadable_output(reason: &str) -> GuardOutput {
    GuardOutput {
        status: 2,
        stdout: String::new(),
        stderr: format!("{}\n", reason.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(tool: &str, input: &str) -> GuardVerdict {
        let payload = format!(
            r#"{{"hook_event_name":"PreToolUse","cwd":"/p","transcript_path":"/h/.claude/projects/p/s.jsonl","tool_name":"{tool}","tool_input":{input}}}"#
        );
        guard_verdict(Harness::Claude, payload.as_bytes()).unwrap()
    }

    #[test]
    fn the_guard_refuses_writes_to_guarded_places_and_human_only_commands() {
        for (tool, input) in [
            (
                "Write",
                r#"{"file_path":"/p/aidlc/spaces/default/intents/r/audit/x.md"}"#,
            ),
            ("Edit", r#"{"file_path":"aidlc/spaces/default/audit/x.md"}"#),
            (
                "Write",
                r#"{"file_path":"/p/aidlc/spaces/default/intents/r/.aidlc-hooks-health/run-sensors.drops"}"#,
            ),
            ("Write", r#"{"file_path":"/h/.claude/projects/p/s.jsonl"}"#),
            (
                "MultiEdit",
                r#"{"edits":[{"file_path":"/p/aidlc/x/.aidlc-engine/prompts/a.txt"}]}"#,
            ),
            (
                "Bash",
                r#"{"command":"echo {} | aidlc engine hook record-human-turn"}"#,
            ),
            (
                "Bash",
                r#"{"command":"aidlc  engine log   answer --stage s --details x"}"#,
            ),
            (
                "Bash",
                r#"{"command":"aidlc engine gate start s --override-blocking-sensors"}"#,
            ),
            (
                "Bash",
                r#"{"command":"cd aidlc/spaces/default/intents/r && cat >> audit/x.md"}"#,
            ),
        ] {
            assert!(
                matches!(claude(tool, input), GuardVerdict::Deny { .. }),
                "{tool} {input}"
            );
        }
        for (tool, input) in [
            (
                "Read",
                r#"{"file_path":"/p/aidlc/spaces/default/intents/r/audit/x.md"}"#,
            ),
            (
                "Write",
                r#"{"file_path":"/p/aidlc/spaces/default/intents/r/requirements.md"}"#,
            ),
            (
                "Bash",
                r#"{"command":"aidlc engine log decision --stage s --decision d"}"#,
            ),
            ("Bash", r#"{"command":"npm audit"}"#),
        ] {
            assert_eq!(claude(tool, input), GuardVerdict::Allow, "{tool} {input}");
        }
        let patch = r#"{"hook_event_name":"PreToolUse","cwd":"/p","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: aidlc/spaces/default/intents/r/audit/x.md\n+x\n*** End Patch"}}"#;
        assert!(matches!(
            guard_verdict(Harness::Codex, patch.as_bytes()),
            Ok(GuardVerdict::Deny { .. })
        ));
        assert!(
            guard_verdict(Harness::Claude, b"{}")
                .unwrap_err()
                .contains("names no tool")
        );
        assert!(
            guard_verdict(Harness::Claude, b"nope")
                .unwrap_err()
                .contains("not JSON")
        );
    }

    #[test]
    fn claude_code_is_told_with_its_deny_decision_and_the_others_with_exit_2() {
        let deny = GuardVerdict::Deny {
            reason: "no".to_owned(),
        };
        let output = guard_output(Harness::Claude, &deny);
        assert_eq!(
            (output.status, output.stdout.as_str()),
            (
                0,
                "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no\"}}\n"
            )
        );
        let output = guard_output(Harness::Codex, &deny);
        assert_eq!((output.status, output.stderr.as_str()), (2, "no\n"));
        assert_eq!(
            guard_output(Harness::Claude, &GuardVerdict::Allow).stdout,
            ""
        );
    }

    #[test]
    fn every_harness_with_hooks_has_a_guard_site_and_a_refusal() {
        for harness in Harness::WITH_HOOKS {
            assert!(guard_site(harness).is_some(), "{harness}");
        }
        assert_eq!(guard_site(Harness::Cursor), None);
        assert_eq!(
            refusal(Harness::Kiro, "gate open"),
            Refusal::ExitStatus {
                status: 2,
                stderr: "gate open\n".to_owned()
            }
        );
        assert_eq!(
            refusal(Harness::Opencode, "gate open"),
            Refusal::ThrownError {
                message: "gate open".to_owned()
            }
        );
    }
}
