//! The harnesses that read one file per hook: Kiro IDE and Kiro CLI 3 (`.kiro/hooks/*.json`, the
//! IDE 1.x format, which Kiro CLI 3 reads too
//! `{"version": "v1", "hooks": [{name, trigger, matcher, description, action: {type,
//! command}}]}`, and `*.kiro.hook`, the 0.12 format `{version, enabled, name, description,
//! when: {type, toolTypes}, then: {type: "runCommand", command}}`, which 1.x ignores), and
//! opencode (a plugin, `.opencode/plugin/aidlc-engine.ts`, that opencode loads and that passes
//! its events to the engine's commands).
//!
//! Invariants:
//! - the engine's own files are written whole and removed whole, and only when they are the
//!   engine's (a file of that name that is not is refused, never replaced);
//! - in a reference file, only the exact reference command is replaced (`json_text`, the rest
//!   of the file byte for byte); a role one format already registers through a reference file
//!   gets no file of the engine's in that format, so it never fires twice;
//! - an uninstall takes the engine's commands out of every hook file, the reference's included
//!   (whose own commands are not restored), and removes a file left with no hook.

use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};

use super::json_text::{self, Layout, Member, Node};
use super::{FilePlan, HookAction, HookInstallError, InstallRequest, read_for_edit};
use crate::harness::Harness;
use crate::harness::commands::{
    HookRole, engine_command, engine_role, flag_value, hook_role, takeover_command,
};
use crate::harness::reference_hooks::audit_hook_of;
use crate::leaves::fs_util::contained::FileError;

/// Kiro IDE's two hook formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdeFormat {
    /// `*.json`, read by Kiro IDE 1.x.
    Current,
    /// `*.kiro.hook`, read by Kiro IDE 0.12 and ignored by 1.x.
    Legacy,
}

impl IdeFormat {
    const ALL: [IdeFormat; 2] = [IdeFormat::Current, IdeFormat::Legacy];

    fn extension(self) -> &'static str {
        match self {
            IdeFormat::Current => ".json",
            IdeFormat::Legacy => ".kiro.hook",
        }
    }

    #[expect(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "Kiro IDE reads hook files by their exact extension"
    )]
    fn of(name: &str) -> Option<IdeFormat> {
        if name.ends_with(".kiro.hook") {
            Some(IdeFormat::Legacy)
        } else if name.ends_with(".json") {
            Some(IdeFormat::Current)
        } else {
            None
        }
    }
}

/// The folder Kiro IDE reads hook files from.
pub const KIRO_IDE_HOOKS_DIR: &str = ".kiro/hooks";
/// The engine's Kiro IDE hook files are `<name><extension>`; Kiro CLI 3's, which it reads from
/// the same folder, have names of their own (`aidlc-engine-cli-…`), so that neither harness's
/// install touches the other's.
fn ide_hook_name(harness: Harness, role: HookRole) -> &'static str {
    match (harness, role) {
        (Harness::KiroCliV3, HookRole::Write) => "aidlc-engine-cli-run-sensors",
        (Harness::KiroCliV3, HookRole::HumanTurn) => "aidlc-engine-cli-record-human-turn",
        (Harness::KiroCliV3, HookRole::Guard) => "aidlc-engine-cli-guard",
        (_, HookRole::Write) => "aidlc-engine-run-sensors",
        (_, HookRole::HumanTurn) => "aidlc-engine-record-human-turn",
        (_, HookRole::Guard) => "aidlc-engine-guard",
    }
}

/// The formats `harness` reads: Kiro CLI 3 only the current one.
fn ide_formats(harness: Harness) -> &'static [IdeFormat] {
    if harness == Harness::KiroCliV3 {
        &[IdeFormat::Current]
    } else {
        &IdeFormat::ALL
    }
}

/// The tools whose writes fire the write hook, in Kiro IDE 1.x's names, and 0.12's category.
const IDE_WRITE_MATCHER: &str = "fs_write|str_replace|fs_append";
/// Kiro CLI 3's: its file tools, and its shell tool (`dispatch::shell_writes`).
const KIRO_CLI_V3_WRITE_MATCHER: &str = "write|fs_write|str_replace|fs_append|execute_bash|shell";
const IDE_LEGACY_WRITE_TOOL_TYPE: &str = "write";

/// One hook command in a Kiro IDE hook file: where its string is.
#[derive(Debug, Clone)]
struct IdeCommand {
    /// The index in `hooks` (1.x files; a 0.12 file holds one hook).
    index: Option<usize>,
    /// The event: 1.x's `trigger`, 0.12's `when.type`.
    event: String,
    command: String,
    /// Where the command's string is in the file's text.
    span: Range<usize>,
}

/// The commands of one hook file, or `None` when it is not a hook file of its format.
fn ide_commands(root: &Node, format: IdeFormat) -> Option<Vec<IdeCommand>> {
    let at = |index, event: Option<&Member>, command: &Node| {
        Some(IdeCommand {
            index,
            event: event
                .and_then(|member| member.value.as_str())
                .unwrap_or_default()
                .to_owned(),
            command: command.as_str()?.to_owned(),
            span: command.span.clone(),
        })
    };
    match format {
        IdeFormat::Current => {
            let hooks = root.get("hooks")?.value.elements()?;
            Some(
                hooks
                    .iter()
                    .enumerate()
                    .filter_map(|(index, hook)| {
                        let command = &hook.get("action")?.value.get("command")?.value;
                        at(Some(index), hook.get("trigger"), command)
                    })
                    .collect(),
            )
        }
        IdeFormat::Legacy => {
            let command = &root.get("then")?.value.get("command")?.value;
            let event = root.get("when").and_then(|member| member.value.get("type"));
            Some(vec![at(None, event, command)?])
        }
    }
}

/// Whether `command` is the engine's command for the other harness of the Kiro hooks folder
/// (Kiro IDE's beside Kiro CLI 3's): that harness's registration, not `harness`'s.
fn is_another_harness_command(harness: Harness, command: &str) -> bool {
    engine_role(command).is_some() && flag_value(command, "--harness") != Some(harness.name())
}

/// `(event, command, legacy format)` of every hook command `harness` runs from the Kiro IDE
/// hook file `name` holding `text` (Kiro CLI 3 reads only the current format); nothing for a
/// file that is not one.
pub fn ide_hook_commands(harness: Harness, name: &str, text: &str) -> Vec<(String, String, bool)> {
    let Some(format) = IdeFormat::of(name).filter(|format| ide_formats(harness).contains(format))
    else {
        return Vec::new();
    };
    let Ok(root) = json_text::parse(text) else {
        return Vec::new();
    };
    ide_commands(&root, format)
        .unwrap_or_default()
        .into_iter()
        .filter(|at| !is_another_harness_command(harness, &at.command))
        .map(|at| (at.event, at.command, format == IdeFormat::Legacy))
        .collect()
}

/// The engine's own file for `role` in `format`, whole; `None` where the format has no such
/// hook (Kiro IDE 0.12 runs no pre-tool hook the guard can refuse with).
fn ide_file_text(
    harness: Harness,
    role: HookRole,
    format: IdeFormat,
    command: &str,
) -> Option<String> {
    let name = ide_hook_name(harness, role);
    let write_matcher = if harness == Harness::KiroCliV3 {
        KIRO_CLI_V3_WRITE_MATCHER
    } else {
        IDE_WRITE_MATCHER
    };
    let description = match role {
        HookRole::Write => {
            "aidlc: fire the active stage's write-fired sensors on each written file."
        }
        HookRole::HumanTurn => {
            "aidlc: record a HUMAN_TURN in the active intent's audit on each prompt."
        }
        HookRole::Guard => {
            "aidlc: refuse agent tool calls that write into the audit or run the human's commands."
        }
    };
    let value = match (format, role) {
        (IdeFormat::Current, role) => {
            let trigger = super::hook_registration(harness).event(role);
            let matcher = match role {
                HookRole::Write => Some(write_matcher),
                HookRole::HumanTurn => None,
                HookRole::Guard => Some("*"),
            };
            let mut hook = json!({
                "name": name,
                "trigger": trigger,
                "matcher": matcher,
                "description": description,
                "action": {"type": "command", "command": command},
            });
            if matcher.is_none()
                && let Some(hook) = hook.as_object_mut()
            {
                hook.shift_remove("matcher");
            }
            json!({"version": "v1", "hooks": [hook]})
        }
        (IdeFormat::Legacy, HookRole::Guard) => return None,
        (IdeFormat::Legacy, role) => json!({
            "version": "1.0.0",
            "enabled": true,
            "name": name,
            "description": description,
            "when": if role == HookRole::Write {
                json!({"type": "postToolUse", "toolTypes": [IDE_LEGACY_WRITE_TOOL_TYPE]})
            } else {
                json!({"type": "promptSubmit"})
            },
            "then": {"type": "runCommand", "command": command},
        }),
    };
    Some(Layout::of("").document(&value))
}

/// Whether `text` is one of the engine's own Kiro IDE files (whatever its command says).
fn is_engine_ide_file(text: &str, format: IdeFormat) -> bool {
    json_text::parse(text).is_ok_and(|root| {
        ide_commands(&root, format).is_some_and(|commands| {
            !commands.is_empty()
                && commands
                    .iter()
                    .all(|command| engine_role(&command.command).is_some())
        })
    })
}

/// The Kiro IDE plan: the reference's files with their commands taken over, and the engine's
/// own files where no reference file registers a role.
pub fn plan_kiro_ide(request: &InstallRequest<'_>) -> Result<Vec<FilePlan>, HookInstallError> {
    let dir = request.project_dir.join(KIRO_IDE_HOOKS_DIR);
    let own_names: Vec<String> = [Harness::KiroIde, Harness::KiroCliV3]
        .iter()
        .flat_map(|harness| {
            HookRole::ALL.iter().flat_map(move |role| {
                IdeFormat::ALL.iter().map(move |format| {
                    format!("{}{}", ide_hook_name(*harness, *role), format.extension())
                })
            })
        })
        .collect();
    let audit_hook = audit_hook_of(request.project_dir, request.harness.dir_name());
    let mut plans = Vec::new();
    // Which roles each format registers through a file that is not the engine's own.
    let mut registered_elsewhere: Vec<(IdeFormat, HookRole)> = Vec::new();
    for path in hook_files(&dir)? {
        let name = path.file_name().unwrap_or_default().to_owned();
        let Some(format) =
            IdeFormat::of(&name).filter(|format| ide_formats(request.harness).contains(format))
        else {
            continue;
        };
        if own_names.contains(&name) {
            continue;
        }
        let before = read_for_edit(&path)?;
        let mut plan = FilePlan::unchanged(path, before);
        let Some(text) = plan.before.clone() else {
            continue;
        };
        // A file that is not a hook file of its format is someone else's: left alone.
        let Ok(root) = json_text::parse(&text) else {
            continue;
        };
        let Some(commands) = ide_commands(&root, format) else {
            continue;
        };
        let mut edits = Vec::new();
        let mut removed = Vec::new();
        for at in &commands {
            let Some(role) = hook_role(request.harness, &at.command) else {
                continue;
            };
            if is_another_harness_command(request.harness, &at.command) {
                continue;
            }
            match request.action {
                HookAction::Install => {
                    registered_elsewhere.push((format, role));
                    let wanted = takeover_command(
                        request.program,
                        role,
                        request.harness,
                        &at.command,
                        audit_hook.as_deref(),
                    );
                    if at.command != wanted {
                        plan.changes.push(format!("replaced {}", at.command));
                        edits.push(json_text::replace_string(at.span.clone(), &wanted));
                    }
                }
                HookAction::Uninstall => {
                    if engine_role(&at.command).is_some() {
                        plan.changes.push(format!("removed {}", at.command));
                        removed.push(at.clone());
                    }
                }
            }
        }
        plan.after = Some(json_text::apply_edits(&text, edits));
        if !removed.is_empty() {
            plan.after = without_ide_hooks(&text, &root, format, &removed);
        }
        plans.push(plan);
    }
    for role in HookRole::ALL {
        for &format in ide_formats(request.harness) {
            let path = dir.join(format!(
                "{}{}",
                ide_hook_name(request.harness, role),
                format.extension()
            ));
            let before = read_for_edit(&path)?;
            if let Some(text) = &before
                && !is_engine_ide_file(text, format)
            {
                return Err(HookInstallError::Refused {
                    path,
                    reason: super::NOT_OURS,
                });
            }
            let wanted = match request.action {
                HookAction::Install if !registered_elsewhere.contains(&(format, role)) => {
                    let command = engine_command(request.program, role, request.harness, None);
                    ide_file_text(request.harness, role, format, &command)
                }
                _ => None,
            };
            plans.push(FilePlan::whole(path, before, wanted, "added"));
        }
    }
    Ok(plans)
}

/// The hook files under `dir`, sorted (none when it does not exist).
fn hook_files(dir: &Utf8Path) -> Result<Vec<Utf8PathBuf>, HookInstallError> {
    let entries = match dir.read_dir_utf8() {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(FileError::io("read", dir, source).into());
        }
    };
    let mut paths: Vec<Utf8PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_type()
                .is_ok_and(|kind| kind.is_file() || kind.is_symlink())
        })
        .map(|entry| entry.path().to_owned())
        .collect();
    paths.sort();
    Ok(paths)
}

/// A reference hook file without the engine's hooks: a 1.x file keeps its other hooks, and a
/// file left with none (a 0.12 file holds one) goes (`None`).
fn without_ide_hooks(
    text: &str,
    root: &Node,
    format: IdeFormat,
    removed: &[IdeCommand],
) -> Option<String> {
    let hook_count = root
        .get("hooks")
        .and_then(|member| member.value.elements())
        .map_or(0, <[Node]>::len);
    if format == IdeFormat::Legacy || removed.len() >= hook_count {
        return None;
    }
    let mut text = text.to_owned();
    let mut indices: Vec<usize> = removed.iter().filter_map(|at| at.index).collect();
    indices.sort_unstable_by(|a, b| b.cmp(a));
    for index in indices {
        // Each removal keeps the text valid JSON, so it parses again.
        let Ok(current) = json_text::parse(&text) else {
            break;
        };
        let Some(list) = current.get("hooks").map(|member| &member.value) else {
            break;
        };
        let edit = json_text::remove_item(&text, list, index);
        text = json_text::apply_edits(&text, vec![edit]);
    }
    Some(text)
}

/// The opencode plugin the engine writes.
pub const OPENCODE_PLUGIN_FILE: &str = ".opencode/plugin/aidlc-engine.ts";
/// The reference's own opencode plugin.
pub const REFERENCE_OPENCODE_PLUGIN_FILE: &str = ".opencode/plugin/aidlc-opencode-adapter.ts";
/// The first line of the engine's plugin, by which it is known as the engine's.
const OPENCODE_PLUGIN_MARK: &str =
    "// aidlc-engine.ts: written by `aidlc hook install --harness opencode`";

/// The plugin's text, with the three commands written in.
pub fn opencode_plugin_text(run_sensors: &str, record_human_turn: &str, guard: &str) -> String {
    include_str!("opencode_plugin.ts")
        .replace("@RUN_SENSORS@", &Value::from(run_sensors).to_string())
        .replace("@GUARD@", &Value::from(guard).to_string())
        .replace(
            "@RECORD_HUMAN_TURN@",
            &Value::from(record_human_turn).to_string(),
        )
}

/// The commands the engine's plugin `text` runs, by role (a plugin written before the guard
/// existed has none for it).
pub fn opencode_plugin_commands(text: &str) -> Option<Vec<(HookRole, String)>> {
    let constant = |name: &str| -> Option<String> {
        let start = text.find(&format!("const {name} = "))? + name.len() + 9;
        let line = text[start..].lines().next()?;
        serde_json::from_str(line.trim_end_matches(';')).ok()
    };
    text.starts_with(OPENCODE_PLUGIN_MARK)
        .then(|| {
            let mut commands = vec![
                (HookRole::Write, constant("RUN_SENSORS")?),
                (HookRole::HumanTurn, constant("RECORD_HUMAN_TURN")?),
            ];
            if let Some(guard) = constant("GUARD") {
                commands.push((HookRole::Guard, guard));
            }
            Some(commands)
        })
        .flatten()
}

/// The opencode plan: the engine's plugin file, whole.
pub fn plan_opencode(request: &InstallRequest<'_>) -> Result<FilePlan, HookInstallError> {
    let path = request.project_dir.join(OPENCODE_PLUGIN_FILE);
    let reference = request.project_dir.join(REFERENCE_OPENCODE_PLUGIN_FILE);
    if request.action == HookAction::Install && reference.exists() {
        return Err(HookInstallError::Refused {
            path: reference,
            reason: "is the reference's opencode plugin, which already runs the reference's write and prompt hooks; aidlc's plugin beside it would fire every sensor twice, and aidlc does not edit its code (remove it to use aidlc's hooks instead)",
        });
    }
    let before = read_for_edit(&path)?;
    if let Some(text) = &before
        && opencode_plugin_commands(text).is_none()
    {
        return Err(HookInstallError::Refused {
            path,
            reason: super::NOT_OURS,
        });
    }
    let wanted = match request.action {
        HookAction::Install => {
            let [run_sensors, record_human_turn, guard] = HookRole::ALL
                .map(|role| engine_command(request.program, role, Harness::Opencode, None));
            Some(opencode_plugin_text(
                &run_sensors,
                &record_human_turn,
                &guard,
            ))
        }
        HookAction::Uninstall => None,
    };
    Ok(FilePlan::whole(
        path,
        before,
        wanted,
        "added (tool.execute.after, chat.message, tool.execute.before)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A current-format file names its hook's keys in one order, `matcher` after `trigger`
    /// where the role has one and absent where it has none.
    #[test]
    fn current_format_files_keep_their_key_order() {
        let human_turn = ide_file_text(
            Harness::KiroIde,
            HookRole::HumanTurn,
            IdeFormat::Current,
            "x",
        )
        .unwrap();
        assert_eq!(
            human_turn,
            "{\n  \"version\": \"v1\",\n  \"hooks\": [\n    {\n      \"name\": \"aidlc-engine-record-human-turn\",\n      \"trigger\": \"UserPromptSubmit\",\n      \"description\": \"aidlc: record a HUMAN_TURN in the active intent's audit on each prompt.\",\n      \"action\": {\n        \"type\": \"command\",\n        \"command\": \"x\"\n      }\n    }\n  ]\n}\n"
        );
        for (role, trigger, matcher) in [
            (HookRole::Write, "PostToolUse", IDE_WRITE_MATCHER),
            (HookRole::Guard, "PreToolUse", "*"),
        ] {
            let text = ide_file_text(Harness::KiroIde, role, IdeFormat::Current, "x").unwrap();
            let expected = format!(
                "\"trigger\": \"{trigger}\",\n      \"matcher\": \"{matcher}\",\n      \"description\": "
            );
            assert!(text.contains(&expected), "{text}");
        }
    }
}
