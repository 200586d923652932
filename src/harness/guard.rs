//! The pre-tool guard (`aidlc engine hook guard`, docs/decisions.md D34): where each harness
//! lets a hook refuse a tool call before it runs, what the guard refuses, and how the refusal
//! is said.
//!
//! The guard refuses an agent's tool call that writes into an audit folder (`…/aidlc/…/audit/`),
//! the hooks-health folder, the engine's record folder (`.aidlc-engine/`, which keeps the
//! prompts of harnesses without a transcript; its one exception is the learning loop's
//! `learnings/<stage>-selections.json` handoff), the human-turn marker or the session's
//! transcript; and a command that runs the human-turn hook, `engine log answer` or an override
//! (`--override-blocking-sensors`): those are the human's, from the human's own shell. Reading
//! any of them stays allowed.
//!
//! A command is taken apart as a shell takes it apart (`shell_words`): quotes and escapes
//! removed, lists, pipelines, subshells and substitutions split into simple commands, scripts
//! handed to `sh -c` or `eval` read in turn. The human's commands are found by their words in
//! order, wherever options stand (`command_effects`). Paths, in a tool's input or a command's
//! words and redirections, are resolved against the file system before they are compared
//! (`protected_places`): relative to the payload's folder (or a `cd` earlier in the list), links
//! followed, `..` folded, globs expanded. A command the guard cannot take apart is refused when
//! it mentions a human's command in any spelling or names a protected place. The guard is a
//! fence against an agent following its instructions, not a sandbox (the receipt's
//! verification is what an agent cannot get round).
//!
//! Invariants: it reads only its payload and the file system's entries and links (no project,
//! no graph, no file's contents), so it is fast on every tool call; a payload it cannot read is
//! refused with the reason, never allowed; its refusals say what to do instead.
//!
//! How each harness reads a refusal ([`guard_output`]) and which of Cursor's events call the
//! guard (`cursor_verdict`): docs/decisions.md D34 and D61.

mod command_effects;
mod protected_places;
mod shell_words;

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use crate::harness::Harness;
use crate::harness::payload::{codex_patch_paths, copilot_tool_input, text_field};
use command_effects::CommandEffect;
use protected_places::ProtectedPlaces;
use shell_words::{ShellCommand, SimpleCommand};

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
/// How deep scripts handed to a shell (`sh -c`, `eval`) are followed before the command is
/// refused.
const MAX_SCRIPT_NESTING: usize = 8;

/// The verdict on `harness`'s pre-tool `payload`, or why the payload cannot be read (which the
/// caller refuses too).
pub fn guard_verdict(harness: Harness, payload: &[u8]) -> Result<GuardVerdict, String> {
    let value: Value = serde_json::from_slice(payload)
        .map_err(|error| format!("the pre-tool payload is not JSON ({error})"))?;
    let Value::Object(object) = value else {
        return Err("the pre-tool payload is not a JSON object".to_owned());
    };
    let text = |key: &str| text_field(&object, key);
    if harness == Harness::Cursor {
        return cursor_verdict(&object);
    }
    // The keys naming the tool, the one a refusal names first.
    let tool_keys: &[&str] = match harness {
        Harness::Copilot => &["tool_name", "toolName"],
        Harness::Opencode => &["tool"],
        Harness::KiroIde => &["toolName", "tool_name"],
        _ => &["tool_name"],
    };
    let tool = tool_keys
        .iter()
        .find_map(|key| text(key))
        .ok_or_else(|| format!("the pre-tool payload names no tool (\"{}\")", tool_keys[0]))?;
    let empty = Value::Object(Map::new());
    let copilot_input;
    let input = if harness == Harness::Copilot {
        copilot_input = copilot_tool_input(&object)?;
        &copilot_input
    } else {
        ["tool_input", "toolArgs", "args"]
            .iter()
            .find_map(|key| object.get(*key))
            .unwrap_or(&empty)
    };
    Ok(verdict_in_place(&object, tool, input))
}

/// Cursor's `beforeShellExecution`, judged as a shell tool's call of its `command`, and its
/// `preToolUse`, judged as any harness's tool call (`tool_name`, `tool_input`: its file tools
/// name their file `file_path`, its shell tool is `Shell`), each in its `cwd` (else its first
/// workspace root).
fn cursor_verdict(object: &Map<String, Value>) -> Result<GuardVerdict, String> {
    let event = object
        .get("hook_event_name")
        .and_then(Value::as_str)
        .ok_or("the pre-tool payload has no \"hook_event_name\"")?;
    let (tool, input) = match event {
        "beforeShellExecution" => {
            let command = object
                .get("command")
                .and_then(Value::as_str)
                .ok_or("the beforeShellExecution payload has no \"command\" string")?;
            ("Shell", serde_json::json!({ "command": command }))
        }
        "preToolUse" => {
            let tool = text_field(object, "tool_name")
                .ok_or("the preToolUse payload names no tool (\"tool_name\")")?;
            let input = match object.get("tool_input") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(input @ Value::Object(_)) => input.clone(),
                Some(_) => {
                    return Err(
                        "the preToolUse payload's \"tool_input\" is not an object".to_owned()
                    );
                }
            };
            (tool, input)
        }
        other => {
            return Err(format!(
                "the event \"{other}\" is not one the guard reads (beforeShellExecution, preToolUse)"
            ));
        }
    };
    let mut in_place = object.clone();
    if !in_place.get("cwd").is_some_and(Value::is_string)
        && let Some(root) = object
            .get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|roots| roots.first())
            .filter(|root| root.is_string())
    {
        in_place.insert("cwd".to_owned(), root.clone());
    }
    Ok(verdict_in_place(&in_place, tool, &input))
}

/// The verdict on a call of `tool` with `input`, in the folder and with the transcript
/// `object` names.
fn verdict_in_place(object: &Map<String, Value>, tool: &str, input: &Value) -> GuardVerdict {
    let text = |key: &str| text_field(object, key);
    let home = std::env::var("HOME")
        .ok()
        .filter(|home| !home.is_empty())
        .map(Utf8PathBuf::from);
    let places = ProtectedPlaces::new(text("transcript_path").map(Utf8Path::new), home);
    let cwd = text("cwd")
        .or_else(|| text("directory"))
        .map(|cwd| places.resolve(cwd, None));
    let guarded = Guarded {
        cwd: cwd.as_deref(),
        places: &places,
    };
    judge(tool, input, &guarded)
}

/// The folder the tool call runs in and the places it must not write.
struct Guarded<'p> {
    cwd: Option<&'p Utf8Path>,
    places: &'p ProtectedPlaces,
}

fn deny(reason: String) -> GuardVerdict {
    GuardVerdict::Deny { reason }
}

/// The refusal of the human's command `named`.
fn human_only_refusal(named: &str) -> GuardVerdict {
    deny(format!(
        "aidlc: `{named}` is the human's to run, never an agent's tool call. Ask the human to type their choice in the session (or pick it in the question widget); the engine records the turn and the answer."
    ))
}

/// The refusal of a write by `writer` to `path`, which is `what`.
fn protected_path_refusal(writer: &str, path: &Utf8Path, what: &str) -> GuardVerdict {
    deny(format!(
        "aidlc: {writer} would write {path}, {what}; agents do not write there: the engine writes it. Reading it is fine (the read tool, `cat`, `grep`). To record a decision, run `aidlc engine log decision`; the human's turns and answers are recorded when the human types them in the session."
    ))
}

fn judge(tool: &str, input: &Value, guarded: &Guarded<'_>) -> GuardVerdict {
    let mut commands = Vec::new();
    let mut paths = Vec::new();
    // A patch names the files it writes in its text, and runs no command.
    let writer = if tool == "apply_patch" {
        let patch = strings_of(input).join("\n");
        paths.extend(codex_patch_paths(&patch).into_iter().map(str::to_owned));
        "this patch"
    } else {
        collect(input, &mut commands, &mut paths);
        tool
    };
    for command in &commands {
        let mut state = ShellState {
            folder: guarded.cwd.map(Utf8Path::to_path_buf),
            variables: BTreeMap::new(),
            previous_operands: Vec::new(),
        };
        if let Err(refusal) = judge_command_text(command, &mut state, guarded, 0) {
            return refusal;
        }
    }
    if READ_ONLY_TOOLS.contains(&tool) {
        return GuardVerdict::Allow;
    }
    for path in &paths {
        let resolved = guarded.places.resolve(path, guarded.cwd);
        if let Some(what) = guarded.places.what_is(&resolved) {
            return protected_path_refusal(writer, &resolved, what);
        }
    }
    GuardVerdict::Allow
}

/// A command text judged as a shell runs it, from `state` (its folder and variables); a `cd`
/// or an assignment in it holds for what follows.
fn judge_command_text(
    text: &str,
    state: &mut ShellState,
    guarded: &Guarded<'_>,
    nesting: usize,
) -> Result<(), GuardVerdict> {
    if nesting > MAX_SCRIPT_NESTING {
        return Err(deny(
            "aidlc: this command hands scripts to a shell too many times over for the guard to read; run the inner command directly.".to_owned(),
        ));
    }
    match shell_words::parse_command_text(text) {
        Ok(commands) => judge_commands(&commands, state, guarded, nesting),
        Err(problem) => judge_unreadable_command(text, &problem, state.folder.as_deref(), guarded),
    }
}

/// A command the guard cannot take apart: refused when it mentions a human's command in any
/// spelling, or names a protected place in any word.
fn judge_unreadable_command(
    text: &str,
    problem: &shell_words::ShellSyntaxError,
    folder: Option<&Utf8Path>,
    guarded: &Guarded<'_>,
) -> Result<(), GuardVerdict> {
    if let Some(named) = command_effects::human_only_mention(text) {
        return Err(human_only_refusal(named));
    }
    for word in text.split(|c: char| c.is_whitespace() || "<>|;&()'\"=`".contains(c)) {
        if word.is_empty() {
            continue;
        }
        let resolved = guarded.places.resolve(word, folder);
        let what = guarded.places.what_is(&resolved).or_else(|| {
            word.split('/')
                .any(|component| component == "audit")
                .then_some("an audit folder")
        });
        if let Some(what) = what {
            return Err(deny(format!(
                "aidlc: the guard cannot read this command as a shell would ({}) and it names {word}, {what}; agents do not write there: the engine writes it. Reading it is fine with the read tool; fix the command's quoting.",
                problem.0
            )));
        }
    }
    Ok(())
}

fn judge_commands(
    commands: &[ShellCommand],
    state: &mut ShellState,
    guarded: &Guarded<'_>,
    nesting: usize,
) -> Result<(), GuardVerdict> {
    for command in commands {
        match command {
            ShellCommand::Simple(simple) => judge_simple_command(simple, state, guarded, nesting)?,
            ShellCommand::Group {
                subshell: true,
                commands,
            } => judge_commands(commands, &mut state.clone(), guarded, nesting)?,
            ShellCommand::Group {
                subshell: false,
                commands,
            } => judge_commands(commands, state, guarded, nesting)?,
        }
    }
    Ok(())
}

/// One simple command, in the order a shell runs it: its substitutions (in a subshell), the
/// human's commands among its words (variables assigned earlier put in), code and scripts it
/// hands on, its redirections' targets, then the paths it names when its program may write
/// them (and, behind `xargs`, those the command before named).
fn judge_simple_command(
    simple: &SimpleCommand,
    state: &mut ShellState,
    guarded: &Guarded<'_>,
    nesting: usize,
) -> Result<(), GuardVerdict> {
    judge_commands(&simple.substitutions, &mut state.clone(), guarded, nesting)?;
    let expanded: Vec<String> = simple
        .words
        .iter()
        .map(|word| state.expand_known_variables(&word.text))
        .collect();
    let words: Vec<&str> = expanded.iter().map(String::as_str).collect();
    state.remember_assignments(&simple.assignments, &words);
    let program_words = command_effects::after_wrappers(&words);
    let program = program_words.first().copied().unwrap_or_default();
    let fields: Vec<&str> = words
        .iter()
        .zip(&simple.words)
        .flat_map(|(expanded, word)| {
            if *expanded == word.text {
                vec![*expanded]
            } else {
                expanded.split_whitespace().collect()
            }
        })
        .collect();
    if let Some(named) = command_effects::human_only_command(&fields, program) {
        return Err(human_only_refusal(named));
    }
    for code in command_effects::interpreter_code(&words, &simple.here_documents) {
        if let Some(named) = command_effects::human_only_mention(code) {
            return Err(human_only_refusal(named));
        }
    }
    for script in command_effects::shell_scripts(&words, &simple.here_documents) {
        judge_command_text(&script, &mut state.clone(), guarded, nesting + 1)?;
    }
    for redirection in simple
        .redirections
        .iter()
        .filter(|redirection| redirection.writes)
    {
        let target = &redirection.target;
        if let Some((path, what)) =
            guarded
                .places
                .reached_by(&target.text, target.glob, state.folder.as_deref(), false)
        {
            return Err(protected_path_refusal(
                "this command's redirection",
                &path,
                what,
            ));
        }
    }
    let arguments = program_words.get(1..).unwrap_or_default();
    let argument_words = &simple.words[simple.words.len() - arguments.len()..];
    let operands: Vec<(String, bool)> = command_effects::path_operands(arguments)
        .into_iter()
        .map(|(index, operand)| (operand.to_owned(), argument_words[index].glob))
        .chain(
            command_effects::implied_operands(program_words)
                .iter()
                .map(|operand| ((*operand).to_owned(), false)),
        )
        .collect();
    // What the command before it names, which `xargs` may hand on as its arguments.
    let previous_operands = std::mem::replace(&mut state.previous_operands, operands.clone());
    let removes = match command_effects::command_effect(program_words) {
        CommandEffect::Reads => return Ok(()),
        CommandEffect::ChangesFolder => {
            change_folder(&mut state.folder, program_words, guarded);
            return Ok(());
        }
        CommandEffect::Writes { removes } => removes,
    };
    let fed_by_xargs = words[..words.len() - program_words.len()]
        .iter()
        .any(|word| command_effects::file_name(word) == "xargs");
    let handed_on = if fed_by_xargs {
        previous_operands
    } else {
        Vec::new()
    };
    let writer = format!("`{program}`");
    for (operand, glob) in operands.iter().chain(&handed_on) {
        if let Some((path, what)) =
            guarded
                .places
                .reached_by(operand, *glob, state.folder.as_deref(), removes)
        {
            return Err(protected_path_refusal(&writer, &path, what));
        }
        if state.folder.is_none()
            && let Some(what) = protected_by_name(operand)
        {
            return Err(protected_path_refusal(
                &writer,
                Utf8Path::new(operand),
                what,
            ));
        }
    }
    Ok(())
}

/// What a path names by its words alone, for a folder the guard cannot tell: an `audit`
/// component or a guarded name anywhere in it.
fn protected_by_name(operand: &str) -> Option<&'static str> {
    let relative = Utf8PathBuf::from("/aidlc").join(operand.trim_start_matches('/'));
    ProtectedPlaces::new(None, None).what_is(&relative)
}

/// What the shell knows while a list runs: its folder (`None`: one the guard cannot tell,
/// after `cd $X`), the variables assigned so far in the text, and what the command before
/// named.
#[derive(Clone)]
struct ShellState {
    folder: Option<Utf8PathBuf>,
    variables: BTreeMap<String, String>,
    /// The words that may name paths in the simple command before (with whether each is a
    /// glob): what an `xargs` after it may be handed.
    previous_operands: Vec<(String, bool)>,
}

impl ShellState {
    /// `NAME=value` alone, or after `export`, `declare`, `local`, `typeset` or `readonly`,
    /// holds for the commands after it.
    fn remember_assignments(&mut self, assignments: &[String], words: &[&str]) {
        let declared: &[&str] = match words.split_first() {
            None => &[],
            Some((first, rest))
                if matches!(
                    *first,
                    "export" | "declare" | "local" | "typeset" | "readonly"
                ) =>
            {
                rest
            }
            Some(_) => return,
        };
        for assignment in assignments
            .iter()
            .map(String::as_str)
            .chain(declared.iter().copied())
        {
            if let Some((name, value)) = assignment.split_once('=') {
                let value = self.expand_known_variables(value);
                self.variables.insert(name.to_owned(), value);
            }
        }
    }

    /// `text` with `$NAME` and `${NAME}` of the variables assigned so far put in.
    fn expand_known_variables(&self, text: &str) -> String {
        if !text.contains('$') {
            return text.to_owned();
        }
        let mut expanded = text.to_owned();
        for (name, value) in &self.variables {
            expanded = expanded.replace(&format!("${{{name}}}"), value);
            let mut rest = expanded.as_str();
            let mut replaced = String::new();
            let pattern = format!("${name}");
            while let Some(at) = rest.find(&pattern) {
                let after = &rest[at + pattern.len()..];
                replaced.push_str(&rest[..at]);
                if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                    replaced.push_str(&pattern);
                } else {
                    replaced.push_str(value);
                }
                rest = after;
            }
            replaced.push_str(rest);
            expanded = replaced;
        }
        expanded
    }
}

/// `cd DIR`/`pushd DIR`: later commands run in `DIR`; a folder the guard cannot tell (a
/// parameter, `cd -`) makes the folder unknown.
fn change_folder(folder: &mut Option<Utf8PathBuf>, words: &[&str], guarded: &Guarded<'_>) {
    let operand = words[1..]
        .iter()
        .find(|word| !word.starts_with('-') || **word == "-");
    *folder = match operand {
        None => guarded.places.home().map(Utf8Path::to_path_buf),
        Some(operand) if operand.contains('$') || *operand == "-" => None,
        Some(operand) => match folder.as_deref() {
            Some(current) => Some(guarded.places.resolve(operand, Some(current))),
            None if Utf8Path::new(operand).is_absolute() || operand.starts_with('~') => {
                Some(guarded.places.resolve(operand, None))
            }
            None => None,
        },
    };
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
                    commands.push(command_text(member));
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

/// A command's text: a string as given, a list of words (`["bash", "-lc", "…"]`) each
/// single-quoted so the shell reading reads back the same words.
fn command_text(member: &Value) -> String {
    match member {
        Value::Array(words) if words.iter().all(Value::is_string) => words
            .iter()
            .filter_map(Value::as_str)
            .map(|word| format!("'{}'", word.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" "),
        other => strings_of(other).join(" "),
    }
}

/// What the guard prints and its exit status, for `harness`: Claude Code's deny decision on
/// stdout (exit 0, `hookSpecificOutput.permissionDecision: "deny"` with the reason); elsewhere the
/// harness's refusal; nothing at all for an allowed call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GuardOutput {
    pub status: u8,
    pub stdout: String,
    pub stderr: String,
}

pub fn guard_output(harness: Harness, verdict: &GuardVerdict) -> GuardOutput {
    let GuardVerdict::Deny { reason } = verdict else {
        return GuardOutput::default();
    };
    match deny_on_stdout(harness, reason) {
        Some(stdout) => GuardOutput {
            stdout,
            ..GuardOutput::default()
        },
        None => unreadable_output(reason),
    }
}

/// What the guard answers on stdout when it allows a call: Cursor's `{"permission": "allow"}`,
/// nothing for the others.
pub fn allow_output(harness: Harness) -> GuardOutput {
    GuardOutput {
        stdout: if harness == Harness::Cursor {
            format!("{}\n", serde_json::json!({ "permission": "allow" }))
        } else {
            String::new()
        },
        ..GuardOutput::default()
    }
}

/// The refusal a harness reads on stdout, where it has one.
fn deny_on_stdout(harness: Harness, reason: &str) -> Option<String> {
    let hook_specific = serde_json::json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    });
    let decision = match harness {
        Harness::Claude => serde_json::json!({ "hookSpecificOutput": hook_specific }),
        Harness::Copilot => serde_json::json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
            "hookSpecificOutput": hook_specific,
        }),
        // Cursor's documentation names the messages in camelCase, its agent reads them in
        // snake_case too: both are given.
        Harness::Cursor => serde_json::json!({
            "permission": "deny",
            "userMessage": reason,
            "agentMessage": reason,
            "user_message": reason,
            "agent_message": reason,
        }),
        _ => return None,
    };
    Some(format!("{decision}\n"))
}

/// A payload the guard cannot read: refused with the reason, exit 2 on every harness (Claude
/// Code reads exit 2 as a block too, with stderr as the reason; the engine's opencode plugin
/// throws it).
pub fn unreadable_output(reason: &str) -> GuardOutput {
    GuardOutput {
        status: 2,
        stderr: format!("{}\n", reason.trim_end()),
        ..GuardOutput::default()
    }
}

/// [`unreadable_output`] for `harness`, with its deny on stdout where it reads one (Cursor and
/// Copilot), so that the refusal stands whichever of the two the harness reads.
pub fn unreadable_output_for(harness: Option<Harness>, reason: &str) -> GuardOutput {
    let mut output = unreadable_output(reason);
    if let Some(harness @ (Harness::Cursor | Harness::Copilot)) = harness
        && let Some(stdout) = deny_on_stdout(harness, reason.trim_end())
    {
        output.stdout = stdout;
    }
    output
}

#[cfg(test)]
mod human_only_spellings_tests;

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
            (
                "Bash",
                r#"{"command":"echo x | tee -a aidlc/spaces/default/intents/r/audit/x.md"}"#,
            ),
            (
                "Bash",
                r#"{"command":"sed -i s/a/b/ ./src/../aidlc/spaces/default/intents/r/audit/x.md"}"#,
            ),
            (
                "Bash",
                r#"{"command":"cd aidlc/spaces/default/intents/r; rm -f .aidlc-human-turn"}"#,
            ),
            (
                "Bash",
                r#"{"command":"ln -s aidlc/spaces/default/intents/r/audit rec"}"#,
            ),
            (
                "Bash",
                r#"{"command":"printf x 2>/h/.claude/projects/p/s.jsonl"}"#,
            ),
            (
                "Bash",
                r#"{"command":"my-tool --out=aidlc/x/.aidlc-engine/prompts/a.txt"}"#,
            ),
            (
                "Bash",
                r#"{"command":"cd \"$DIR\" && rm -rf aidlc/r/audit"}"#,
            ),
            (
                "Bash",
                r#"{"command":"aidlc engine hook 'record-human-turn"}"#,
            ),
            ("Bash", r#"{"command":"cat 'x > aidlc/r/audit/x.md"}"#),
            (
                "Bash",
                r#"{"command":"python3 -c \"import os; os.system('aidlc engine hook record-human-turn')\""}"#,
            ),
            (
                "Write",
                r#"{"file_path":"/p/aidlc/x/.aidlc-engine/learnings/s-selections.json/../../prompts/a"}"#,
            ),
            (
                "Bash",
                r#"{"command":"X=record-human-turn; aidlc engine hook $X"}"#,
            ),
            (
                "Bash",
                r#"{"command":"export H='hook record-human-turn' && aidlc engine ${H}"}"#,
            ),
            (
                "Bash",
                r#"{"command":"D=aidlc/r/audit; rm -rf \"$D\"/x.md"}"#,
            ),
            (
                "shell",
                r#"{"command":["bash","-lc","echo x > 'aidlc/r/audit/a b.md'"]}"#,
            ),
            (
                "Bash",
                r#"{"command":"python3 <<'PY'\nimport os\nos.system('aidlc engine log answer')\nPY"}"#,
            ),
            (
                "Bash",
                r#"{"command":"ls -d aidlc/r/audit | xargs -0 rm -rf"}"#,
            ),
            (
                "Bash",
                r#"{"command":"echo aidlc/r/audit/x.md | xargs -I{} sh -c 'true > {}'"}"#,
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
            (
                "Bash",
                r#"{"command":"cat aidlc/spaces/default/intents/r/audit/x.md > /tmp/x.md"}"#,
            ),
            (
                "Bash",
                r#"{"command":"grep -rn HUMAN_TURN aidlc/spaces/default/intents/r/audit | head"}"#,
            ),
            (
                "Bash",
                r#"{"command":"(cd aidlc/spaces/default/intents/r) && touch audit/x.md"}"#,
            ),
            (
                "Bash",
                r#"{"command":"git log -- aidlc/spaces/default/intents/r/audit"}"#,
            ),
            (
                "Bash",
                r#"{"command":"find aidlc -name '*.md' -exec grep -l x {} +"}"#,
            ),
            ("Bash", r#"{"command":"ls src/*.rs | xargs rm"}"#),
            (
                "Bash",
                r#"{"command":"X=$Y; echo \"$X\" && aidlc engine hook guard"}"#,
            ),
            (
                "Bash",
                r#"{"command":"cat > notes.md <<'EOF'\nthe human runs aidlc engine hook record-human-turn, it's theirs\nEOF"}"#,
            ),
            (
                "Write",
                r#"{"file_path":"/p/aidlc/x/.aidlc-engine/learnings/requirements-analysis-selections.json"}"#,
            ),
            (
                "Bash",
                r#"{"command":"aidlc engine learnings persist --slug s --selections-json aidlc/x/.aidlc-engine/learnings/s-selections.json"}"#,
            ),
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

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 1_000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(26),
            ..proptest::test_runner::Config::default()
        })]

        /// Any command is judged, never a panic.
        #[test]
        fn any_command_is_judged_without_a_panic(
            command in "(aidlc|rm|cd|ln|xargs|sh -c|eval|env|/|\\.\\.|\\*|audit|[a-z $'\"\\\\`(){}<>|&;#\n?=~-]){0,24}"
        ) {
            let input = serde_json::json!({ "command": command });
            let _ = claude("Bash", &input.to_string());
        }
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
}
