//! `aidlc hook install`: registers the engine's two hooks in `<harness>/settings.json` (Claude
//! Code's hook settings): the write hook (`engine hook run-sensors`) under `PostToolUse` for
//! `Write|Edit`, and the human-turn hook (`engine hook record-human-turn`) under
//! `UserPromptSubmit`. The reference's equivalent entries (`aidlc-run-sensors.ts`, its 2.5 name
//! `aidlc-sensor-fire.ts`, and `aidlc-record-human-turn.ts`) are replaced in place, so an install
//! of the reference runs the engine instead of its TypeScript hook.
//!
//! Invariants:
//! - every other key, every other hook and the order of everything stay as they were; the file
//!   keeps its indentation (the first indented line's), its line endings and whether it ends
//!   with a newline;
//! - a run that changes nothing writes nothing (a second run changes no byte);
//! - the file is replaced atomically, or not at all: a malformed file is refused with its line
//!   and column and never overwritten, and so is one whose `hooks` is not the shape Claude Code
//!   reads, or a settings file reached through a link.
//!
//! Must not: print (the plan is returned to `cli`), or touch any other file.

use camino::{Utf8Path, Utf8PathBuf};
use serde::Serialize as _;
use serde_json::{Map, Value, json};

use crate::harness::reference_hooks::{self, ReferenceHook};

/// The settings file under the harness folder.
pub const SETTINGS_FILE: &str = "settings.json";
/// The subcommand of the write hook, after the program.
pub const RUN_SENSORS_SUBCOMMAND: &str = "engine hook run-sensors";
/// The subcommand of the human-turn hook, after the program.
pub const RECORD_HUMAN_TURN_SUBCOMMAND: &str = "engine hook record-human-turn";
/// The program written when none is given: `aidlc` on the `PATH` (a cargo or global install).
pub const DEFAULT_PROGRAM: &str = "aidlc";

const POST_TOOL_USE: &str = "PostToolUse";
const USER_PROMPT_SUBMIT: &str = "UserPromptSubmit";
const WRITE_MATCHER: &str = "Write|Edit";

/// Install or remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAction {
    Install,
    Uninstall,
}

/// What a run would do to the settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPlan {
    pub settings_path: Utf8PathBuf,
    /// The file's text before (`None` when it does not exist).
    pub before: Option<String>,
    /// The file's text after.
    pub after: String,
    /// One line per change, e.g. `PostToolUse: replaced bun ".claude/hooks/aidlc-run-sensors.ts"`.
    pub changes: Vec<String>,
}

impl HookPlan {
    /// Whether the run changes any byte.
    pub fn changes_the_file(&self) -> bool {
        self.before.as_deref() != Some(self.after.as_str())
    }
}

/// Why the settings file was not changed.
#[derive(Debug, thiserror::Error)]
pub enum HookInstallError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: not valid JSON: {message}; the file was not changed")]
    Malformed {
        path: Utf8PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {what} is not {expected}; the file was not changed")]
    WrongShape {
        path: Utf8PathBuf,
        what: String,
        expected: &'static str,
    },
    #[error("{path} is a symbolic link; refusing to replace it (edit the file it points to)")]
    Link { path: Utf8PathBuf },
    #[error("cannot write {path}: {source}")]
    Write {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Folder(#[from] crate::workspace::WriteFolderError),
}

/// The two commands written for `program` (e.g. `aidlc`, `npx aidlc`, an absolute path).
pub fn hook_commands(program: &str) -> (String, String) {
    (
        format!("{program} {RUN_SENSORS_SUBCOMMAND}"),
        format!("{program} {RECORD_HUMAN_TURN_SUBCOMMAND}"),
    )
}

/// Plan the run against `<harness_dir>/settings.json`; writes nothing.
pub fn plan(
    harness_dir: &Utf8Path,
    program: &str,
    action: HookAction,
) -> Result<HookPlan, HookInstallError> {
    let settings_path = harness_dir.join(SETTINGS_FILE);
    if settings_path
        .symlink_metadata()
        .is_ok_and(|metadata| metadata.file_type().is_symlink())
    {
        return Err(HookInstallError::Link {
            path: settings_path,
        });
    }
    let before = match std::fs::read_to_string(&settings_path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(HookInstallError::Read {
                path: settings_path,
                source,
            });
        }
    };
    let style = Style::of(before.as_deref());
    let mut settings = parse_settings(&settings_path, before.as_deref())?;
    let original = settings.clone();
    let (write_command, turn_command) = hook_commands(program);
    let mut changes = Vec::new();
    let root = settings
        .as_object_mut()
        .ok_or_else(|| wrong_shape(&settings_path, "the top level", "an object"))?;
    match action {
        HookAction::Install => {
            let hooks = object_entry(root, "hooks", &settings_path)?;
            install_hook(
                hooks,
                &settings_path,
                POST_TOOL_USE,
                Some(WRITE_MATCHER),
                &write_command,
                &reference_hooks::WRITE_HOOKS,
                &mut changes,
            )?;
            install_hook(
                hooks,
                &settings_path,
                USER_PROMPT_SUBMIT,
                None,
                &turn_command,
                &reference_hooks::HUMAN_TURN_HOOKS,
                &mut changes,
            )?;
            // The reference also records a human turn after AskUserQuestion (PostToolUse):
            // that entry becomes ours too, so one writer records human turns.
            replace_everywhere(
                hooks,
                &settings_path,
                &reference_hooks::HUMAN_TURN_HOOKS,
                &turn_command,
                &mut changes,
            )?;
        }
        HookAction::Uninstall => {
            if let Some(hooks) = root.get_mut("hooks") {
                let hooks = hooks
                    .as_object_mut()
                    .ok_or_else(|| wrong_shape(&settings_path, "\"hooks\"", "an object"))?;
                remove_ours(hooks, &settings_path, &mut changes)?;
                if hooks.is_empty() && !changes.is_empty() {
                    root.shift_remove("hooks");
                }
            }
        }
    }
    let after = if settings == original {
        before.clone().unwrap_or_else(|| style.render(&settings))
    } else {
        style.render(&settings)
    };
    Ok(HookPlan {
        settings_path,
        before,
        after,
        changes,
    })
}

/// Write the planned file atomically, when it changes any byte. Returns whether it wrote.
pub fn apply(plan: &HookPlan, project_dir: &Utf8Path) -> Result<bool, HookInstallError> {
    if !plan.changes_the_file() {
        return Ok(false);
    }
    let folder = plan
        .settings_path
        .parent()
        .unwrap_or(Utf8Path::new("."))
        .to_owned();
    crate::workspace::create_write_folder(project_dir, &folder)?;
    crate::fs_util::write_atomic(&plan.settings_path, plan.after.as_bytes()).map_err(|source| {
        HookInstallError::Write {
            path: plan.settings_path.clone(),
            source,
        }
    })?;
    Ok(true)
}

fn wrong_shape(path: &Utf8Path, what: &str, expected: &'static str) -> HookInstallError {
    HookInstallError::WrongShape {
        path: path.to_owned(),
        what: what.to_owned(),
        expected,
    }
}

/// The settings as a value: a missing, empty or blank file is `{}`.
fn parse_settings(path: &Utf8Path, text: Option<&str>) -> Result<Value, HookInstallError> {
    let Some(text) = text.filter(|text| !text.trim().is_empty()) else {
        return Ok(Value::Object(Map::new()));
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).map_err(|error| HookInstallError::Malformed {
        path: path.to_owned(),
        line: error.line(),
        column: error.column(),
        message: without_position(&error),
    })
}

/// The parser's message without the ` at line L column C` it appends (the error names them).
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message
        .strip_suffix(&suffix)
        .map_or_else(|| message.clone(), str::to_owned)
}

/// `root[key]` as an object, created when missing.
fn object_entry<'v>(
    root: &'v mut Map<String, Value>,
    key: &str,
    path: &Utf8Path,
) -> Result<&'v mut Map<String, Value>, HookInstallError> {
    root.entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| wrong_shape(path, &format!("\"{key}\""), "an object"))
}

/// The groups of `hooks[event]` (an array, created when missing).
fn event_groups<'v>(
    hooks: &'v mut Map<String, Value>,
    event: &str,
    path: &Utf8Path,
) -> Result<&'v mut Vec<Value>, HookInstallError> {
    hooks
        .entry(event.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| wrong_shape(path, &format!("\"hooks\".\"{event}\""), "an array"))
}

/// Every hook command object of a group (`group.hooks[]`), checked for shape.
fn group_hooks<'v>(
    group: &'v mut Value,
    event: &str,
    path: &Utf8Path,
) -> Result<Option<&'v mut Vec<Value>>, HookInstallError> {
    let Some(group) = group.as_object_mut() else {
        return Err(wrong_shape(
            path,
            &format!("an entry of \"hooks\".\"{event}\""),
            "an object",
        ));
    };
    match group.get_mut("hooks") {
        None => Ok(None),
        Some(Value::Array(hooks)) => Ok(Some(hooks)),
        Some(_) => Err(wrong_shape(
            path,
            &format!("\"hooks\" of an entry of \"hooks\".\"{event}\""),
            "an array",
        )),
    }
}

fn command_of(hook: &Value) -> Option<&str> {
    hook.get("command").and_then(Value::as_str)
}

/// Ours already there: nothing; else the reference's replaced in place; else a new group.
fn install_hook(
    hooks: &mut Map<String, Value>,
    path: &Utf8Path,
    event: &str,
    matcher: Option<&str>,
    command: &str,
    reference_hooks: &[ReferenceHook],
    changes: &mut Vec<String>,
) -> Result<(), HookInstallError> {
    let groups = event_groups(hooks, event, path)?;
    let mut present = false;
    let mut replaced = false;
    for group in groups.iter_mut() {
        let Some(group_hooks) = group_hooks(group, event, path)? else {
            continue;
        };
        for hook in group_hooks.iter_mut() {
            let Some(existing) = command_of(hook) else {
                continue;
            };
            if existing == command {
                present = true;
            } else if names_any(existing, reference_hooks) {
                changes.push(format!("{event}: replaced {existing}"));
                hook["command"] = Value::from(command);
                replaced = true;
            }
        }
    }
    if !present && !replaced {
        let group = match matcher {
            Some(matcher) => json!({
                "matcher": matcher,
                "hooks": [{"type": "command", "command": command}],
            }),
            None => json!({"hooks": [{"type": "command", "command": command}]}),
        };
        groups.push(group);
        changes.push(format!("{event}: added {command}"));
    }
    Ok(())
}

/// Replace the reference's `reference_hooks` under every event with `command`.
fn replace_everywhere(
    hooks: &mut Map<String, Value>,
    path: &Utf8Path,
    reference_hooks: &[ReferenceHook],
    command: &str,
    changes: &mut Vec<String>,
) -> Result<(), HookInstallError> {
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        for group in groups.iter_mut() {
            let Some(group_hooks) = group_hooks(group, event, path)? else {
                continue;
            };
            for hook in group_hooks.iter_mut() {
                if let Some(existing) = command_of(hook)
                    && names_any(existing, reference_hooks)
                {
                    changes.push(format!("{event}: replaced {existing}"));
                    hook["command"] = Value::from(command);
                }
            }
        }
    }
    Ok(())
}

fn names_any(command: &str, hooks: &[ReferenceHook]) -> bool {
    hooks.iter().any(|hook| command.contains(hook.file))
}

/// Whether `command` is one of the two this tool writes, whatever the program.
pub fn is_our_command(command: &str) -> bool {
    [RUN_SENSORS_SUBCOMMAND, RECORD_HUMAN_TURN_SUBCOMMAND]
        .iter()
        .any(|subcommand| {
            command
                .strip_suffix(subcommand)
                .is_some_and(|program| program.ends_with(' ') && program.contains("aidlc"))
        })
}

/// Remove our hooks; a group, or an event, that only held ours goes too.
fn remove_ours(
    hooks: &mut Map<String, Value>,
    path: &Utf8Path,
    changes: &mut Vec<String>,
) -> Result<(), HookInstallError> {
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        let mut emptied_groups = Vec::new();
        for (index, group) in groups.iter_mut().enumerate() {
            let Some(group_hooks) = group_hooks(group, &event, path)? else {
                continue;
            };
            let before = group_hooks.len();
            group_hooks.retain(|hook| {
                let ours = command_of(hook).is_some_and(is_our_command);
                if ours {
                    changes.push(format!(
                        "{event}: removed {}",
                        command_of(hook).unwrap_or_default()
                    ));
                }
                !ours
            });
            if group_hooks.is_empty() && before > 0 {
                emptied_groups.push(index);
            }
        }
        for index in emptied_groups.into_iter().rev() {
            groups.remove(index);
        }
        let prefix = format!("{event}:");
        if groups.is_empty() && changes.iter().any(|change| change.starts_with(&prefix)) {
            hooks.shift_remove(&event);
        }
    }
    Ok(())
}

/// How the file is laid out: its indentation unit, line ending and final newline.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Style {
    indent: String,
    crlf: bool,
    final_newline: bool,
}

impl Style {
    /// The style of `text`; a new or empty file gets two spaces, LF and a final newline.
    fn of(text: Option<&str>) -> Self {
        let Some(text) = text.filter(|text| !text.trim().is_empty()) else {
            return Self {
                indent: "  ".to_owned(),
                crlf: false,
                final_newline: true,
            };
        };
        let indent = text
            .lines()
            .skip(1)
            .map(|line| {
                let width = line.len() - line.trim_start_matches([' ', '\t']).len();
                &line[..width]
            })
            .find(|indent| !indent.is_empty())
            .map_or_else(|| "  ".to_owned(), str::to_owned);
        // A file indented with tabs is indented with one tab per level.
        let indent = if indent.starts_with('\t') {
            "\t".to_owned()
        } else {
            indent
        };
        Self {
            indent,
            crlf: text.contains("\r\n"),
            final_newline: text.ends_with('\n'),
        }
    }

    fn render(&self, value: &Value) -> String {
        let mut bytes = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
        value
            .serialize(&mut serializer)
            .unwrap_or_else(|error| unreachable!("serialising a JSON value cannot fail: {error}"));
        let mut text = String::from_utf8(bytes)
            .unwrap_or_else(|error| unreachable!("serde_json wrote invalid UTF-8: {error}"));
        if self.final_newline {
            text.push('\n');
        }
        if self.crlf {
            text = text.replace('\n', "\r\n");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_harness(settings: Option<&str>) -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let harness = Utf8PathBuf::from_path_buf(dir.path().join(".claude")).unwrap();
        std::fs::create_dir_all(&harness).unwrap();
        if let Some(settings) = settings {
            std::fs::write(harness.join(SETTINGS_FILE), settings).unwrap();
        }
        (dir, harness)
    }

    #[test]
    fn a_missing_file_gets_both_hooks_in_two_space_json() {
        let (_dir, harness) = temp_harness(None);
        let plan = plan(&harness, "aidlc", HookAction::Install).unwrap();
        assert_eq!(
            plan.after,
            "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Write|Edit\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"aidlc engine hook run-sensors\"\n          }\n        ]\n      }\n    ],\n    \"UserPromptSubmit\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"aidlc engine hook record-human-turn\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
        );
        assert_eq!(plan.changes.len(), 2);
    }

    #[test]
    fn tabs_crlf_and_no_final_newline_are_kept() {
        let text = "{\r\n\t\"model\": \"x\"\r\n}";
        let (_dir, harness) = temp_harness(Some(text));
        let plan = plan(&harness, "aidlc", HookAction::Install).unwrap();
        assert!(
            plan.after
                .starts_with("{\r\n\t\"model\": \"x\",\r\n\t\"hooks\": {\r\n\t\t\"")
        );
        assert!(plan.after.ends_with("\r\n}"), "{:?}", plan.after);
    }

    #[test]
    fn our_commands_are_recognised_whatever_the_program() {
        assert!(is_our_command("aidlc engine hook run-sensors"));
        assert!(is_our_command("npx aidlc engine hook record-human-turn"));
        assert!(is_our_command("/opt/bin/aidlc engine hook run-sensors"));
        assert!(!is_our_command("bun .claude/hooks/aidlc-run-sensors.ts"));
        assert!(!is_our_command("other engine hook run-sensors"));
    }
}
