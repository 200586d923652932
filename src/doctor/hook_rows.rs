//! The hooks' rows: whether `<harness>/settings.json` registers the write hook (and the
//! human-turn hook) and whether the program it runs is there; the write hook's heartbeat and
//! drops, read where the install's version puts them.

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::install::{
    RECORD_HUMAN_TURN_SUBCOMMAND, RUN_SENSORS_SUBCOMMAND, is_our_command,
};
use crate::harness::reference_hooks::{self, ReferenceHook};
use crate::harness::registration::{registered_commands, settings_path};
use crate::workspace::Workspace;

use super::{Row, is_executable_file, on_search_path};

/// One hook the doctor looks for.
struct ExpectedHook {
    name: &'static str,
    event: &'static str,
    subcommand: &'static str,
    /// The reference's hooks, whose registration counts as registered (its own doctor checks
    /// them).
    reference_hooks: &'static [ReferenceHook],
    /// A missing required hook fails; a missing optional one warns.
    required: bool,
}

const WRITE_HOOK: ExpectedHook = ExpectedHook {
    name: "Write hook",
    event: "PostToolUse",
    subcommand: RUN_SENSORS_SUBCOMMAND,
    reference_hooks: &reference_hooks::WRITE_HOOKS,
    required: true,
};

const HUMAN_TURN_HOOK: ExpectedHook = ExpectedHook {
    name: "Human-turn hook",
    event: "UserPromptSubmit",
    subcommand: RECORD_HUMAN_TURN_SUBCOMMAND,
    reference_hooks: &reference_hooks::HUMAN_TURN_HOOKS,
    required: false,
};

pub(super) fn rows(workspace: &Workspace) -> Vec<Row> {
    let layout = &workspace.layout;
    let settings_path = settings_path(&layout.project_dir, layout.harness);
    let shown = layout.display(&settings_path);
    let commands = match registered_commands(&settings_path) {
        Ok(commands) => commands,
        Err(problem) => {
            return vec![Row::fail(
                format!("Write hook: {shown} {problem}"),
                "fix the file (or remove it), then run `aidlc hook install`",
            )];
        }
    };
    let mut rows: Vec<Row> = [WRITE_HOOK, HUMAN_TURN_HOOK]
        .iter()
        .map(|hook| hook_row(workspace.project_dir(), &shown, &commands, hook))
        .collect();
    rows.extend(health_rows(workspace));
    rows
}

/// The reference's heartbeat and drop rows (§8), read from the health folder the install's
/// version uses (`Workspace::hooks_health_dir`).
fn health_rows(workspace: &Workspace) -> Vec<Row> {
    let health_dir = workspace.hooks_health_dir();
    let shown = workspace.layout.display(&health_dir);
    let mut names: Vec<String> = match health_dir.read_dir_utf8() {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_owned())
            .collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            return vec![Row::fail(
                format!("Hook health: {shown} cannot be read: {error}"),
                format!("check the permissions on {shown}"),
            )];
        }
    };
    names.sort();
    let heartbeats: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let hook = name.strip_suffix(".last")?;
            let stamp = std::fs::read_to_string(health_dir.join(name)).ok()?;
            Some(format!("{hook} {}", stamp.trim()))
        })
        .collect();
    let heartbeat = if heartbeats.is_empty() {
        Row::pass("Hook heartbeats: not yet fired (first workflow stage will populate)")
    } else {
        Row::pass(format!("Hooks last fired: {}", heartbeats.join(", ")))
    };
    let mut rows = vec![heartbeat];
    let mut advisory = Vec::new();
    for name in &names {
        let Some(hook) = name.strip_suffix(".drops") else {
            continue;
        };
        let path = health_dir.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            rows.push(Row::fail(
                format!(
                    "Hook drops ({hook}): {} cannot be read",
                    workspace.layout.display(&path)
                ),
                format!("check the permissions on {shown}"),
            ));
            continue;
        };
        let lines: Vec<&str> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .collect();
        let Some(last) = lines.last() else {
            continue;
        };
        let degraded = lines
            .iter()
            .filter(|line| line.contains("[degraded]"))
            .count();
        if degraded > 0 {
            rows.push(Row::fail(
                format!(
                    "Hook drops ({hook}): {degraded} degraded of {}",
                    lines.len()
                ),
                format!(
                    "read {} (latest: {}); fix the cause",
                    workspace.layout.display(&path),
                    last.split('\t').skip(1).collect::<Vec<_>>().join(" ")
                ),
            ));
        } else {
            let stamp = last.split('\t').next().unwrap_or_default().trim();
            let stamp = if stamp.len() >= 20 && stamp.as_bytes()[10] == b'T' {
                stamp
            } else {
                "unparseable line"
            };
            advisory.push(format!("{hook} x{} (last {stamp})", lines.len()));
        }
    }
    rows.push(if advisory.is_empty() {
        Row::pass("Hook drops: none recorded")
    } else {
        Row::warn(
            format!("Hook drops recorded (advisory): {}", advisory.join(", ")),
            format!(
                "a hook swallowed a failure and let the write through unchecked; read the .drops file(s) under {shown} for the reasons, then delete them"
            ),
        )
    });
    rows
}

fn hook_row(
    project_dir: &Utf8Path,
    shown: &Utf8Path,
    commands: &[(String, String)],
    hook: &ExpectedHook,
) -> Row {
    let ExpectedHook {
        name,
        event,
        subcommand,
        reference_hooks,
        required,
    } = *hook;
    let registered = commands.iter().find(|(registered_event, command)| {
        registered_event == event
            && ((is_our_command(command) && command.ends_with(subcommand))
                || reference_hooks
                    .iter()
                    .any(|hook| command.contains(hook.file)))
    });
    let Some((_, command)) = registered else {
        let label = format!("{name}: not registered under {event} in {shown}");
        let fix =
            "run `aidlc hook install` (`--program \"npx aidlc\"` for a project-local npm install)";
        return if required {
            Row::fail(label, fix)
        } else {
            Row::warn(label, fix)
        };
    };
    match program_of(project_dir, command) {
        Ok(program) => Row::pass(format!(
            "{name}: registered under {event} in {shown} ({command}; runs {program})"
        )),
        Err(problem) => Row::fail(
            format!("{name}: {shown} registers `{command}`, but {problem}"),
            "install it, or run `aidlc hook install` so the hook runs aidlc (`--program` names how to run it)",
        ),
    }
}

/// The executable a hook command starts: its first word, from `PATH` or as a path (relative to
/// the project); `npx` must also find `aidlc` in the project's `node_modules/.bin`.
fn program_of(project_dir: &Utf8Path, command: &str) -> Result<Utf8PathBuf, String> {
    let mut words = command.split_whitespace();
    let first = words.next().ok_or("the command is empty")?;
    let first = first.trim_matches('"');
    let program = if first.contains('/') {
        let path = if Utf8Path::new(first).is_absolute() {
            Utf8PathBuf::from(first)
        } else {
            project_dir.join(first)
        };
        is_executable_file(&path)
            .then_some(path)
            .ok_or_else(|| format!("{first} is not an executable file"))?
    } else {
        on_search_path(first).ok_or_else(|| format!("`{first}` is not on the PATH"))?
    };
    if first == "npx" && words.next() == Some("aidlc") {
        let local = project_dir.join("node_modules/.bin/aidlc");
        if !is_executable_file(&local) {
            return Err(format!(
                "npx finds no aidlc in {} (install the npm package in the project)",
                local.parent().unwrap_or(project_dir)
            ));
        }
        return Ok(local);
    }
    Ok(program)
}
