//! The hooks' rows: whether the harness's hook registration (Claude Code's
//! `.claude/settings.json`, Codex's `.codex/hooks.json`, the Kiro CLI conductor agent, Kiro IDE's
//! and Kiro CLI 3's hook files, Cursor's `.cursor/hooks.json`, Copilot's
//! `.github/hooks/aidlc.json`, the opencode plugin: `harness::registration`) registers the write
//! hook (and the
//! human-turn hook) and whether the program it runs is there; the write hook's heartbeat and
//! drops, read where the install's version puts them.

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::commands::{AUDIT_HOOK_FLAG, HookRole, flag_value};
use crate::harness::install::{HookRegistration, hook_registration};
use crate::harness::registration::{Registered, registered};
use crate::harness::{Harness, hook_harness};
use crate::runtime::workspace::Workspace;

use super::{Row, is_executable_file, on_search_path};

pub(super) fn rows(workspace: &Workspace) -> Vec<Row> {
    let layout = &workspace.layout;
    let harness = hook_harness(&layout.project_dir, layout.harness, None);
    let mut rows = registration_rows(&layout.project_dir, harness);
    rows.extend(health_rows(workspace));
    rows.extend(unseen_writes_row(workspace));
    rows
}

/// The active stage's deliverables changed after the write hook last ran, when there are any
/// and the write hook is registered (with none registered, the registration row fails).
fn unseen_writes_row(workspace: &Workspace) -> Option<Row> {
    let found = crate::runtime::gate::unseen_writes::active_stage_unseen_writes(workspace)?;
    let since = match found.unseen.hook_last_ran {
        Some(time) => format!(
            "changed after it last ran ({})",
            crate::leaves::timestamp::iso_timestamp(time)
        ),
        None => "changed, and it has never run in this record".to_owned(),
    };
    let first = found.unseen.files.first().map_or("<file>", String::as_str);
    let sensor = found
        .write_fired_sensors
        .first()
        .map_or("<sensor>", String::as_str);
    Some(Row::warn(
        format!(
            "Write hook never saw {} of stage {}: {} {since}",
            crate::leaves::english::counted(found.unseen.files.len(), "deliverable"),
            found.stage,
            found.unseen.files.join(", ")
        ),
        format!(
            "make sure the harness runs the hook (`aidlc hook install`, then restart the agent), or run the stage's write-fired sensors ({}) on each now: `aidlc engine sensor fire {sensor} --stage {} --output-path {first}`",
            if found.write_fired_sensors.is_empty() {
                "none".to_owned()
            } else {
                found.write_fired_sensors.join(", ")
            },
            found.stage
        ),
    ))
}

fn registration_rows(project_dir: &Utf8Path, harness: Harness) -> Vec<Row> {
    let registration = hook_registration(harness);
    let found = match registered(project_dir, harness) {
        Ok(found) => found,
        Err(problem) => {
            return vec![Row::fail(
                format!("Write hook: {} {}", problem.file, problem.problem),
                "fix the file (or remove it), then run `aidlc hook install`",
            )];
        }
    };
    HookRole::ALL
        .into_iter()
        .map(|role| hook_row(project_dir, harness, &registration, &found, role))
        .collect()
}

/// The reference's heartbeat and drop rows (D46), read from the health folder the install's
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
            let stamp = crate::leaves::fs_util::read_input_text(&health_dir.join(name)).ok()?;
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
        // A drops file grows with every drop: the generated files' limit, not the inputs'.
        let Ok(text) = crate::leaves::fs_util::read_bounded_text(
            &path,
            crate::compile::discover::MAX_GENERATED_BYTES,
        ) else {
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
    harness: Harness,
    registration: &HookRegistration,
    found: &[Registered],
    role: HookRole,
) -> Row {
    let name = role.label();
    let event = registration.event(role);
    let shown = &registration.path;
    let of_role: Vec<&Registered> = found.iter().filter(|entry| entry.role == role).collect();
    let registered = of_role
        .iter()
        .find(|entry| entry.event == event && !entry.legacy_format)
        .or_else(|| of_role.iter().find(|entry| entry.legacy_format));
    let Some(entry) = registered else {
        let label = format!("{name}: not registered under {event} in {shown}");
        let fix = if harness == Harness::Claude {
            "run `aidlc hook install` (`--program \"npx aidlc\"` for a project-local npm install)"
                .to_owned()
        } else {
            format!(
                "run `aidlc hook install --harness {}` (`--program \"npx aidlc\"` for a project-local npm install)",
                harness.name()
            )
        };
        return if role == HookRole::Write {
            Row::fail(label, fix)
        } else {
            Row::warn(label, fix)
        };
    };
    let Registered { file, command, .. } = entry;
    if entry.legacy_format {
        return Row::warn(
            format!(
                "{name}: registered only in {file} ({command}), the Kiro IDE 0.12 format, which Kiro IDE 1.x does not run"
            ),
            format!(
                "run `aidlc hook install --harness {}` to add the current format",
                harness.name()
            ),
        );
    }
    if entry.reference && harness == Harness::Opencode {
        return Row::pass(format!("{name}: registered under {event} by {command}"));
    }
    match program_of(project_dir, command) {
        Ok(program) => Row::pass(format!(
            "{name}: registered under {event} in {file} ({command}; runs {program}){}",
            widget_note(harness, role, &of_role)
        )),
        Err(problem) => Row::fail(
            format!("{name}: {file} registers `{command}`, but {problem}"),
            "install it, or run `aidlc hook install` so the hook runs aidlc (`--program` names how to run it)",
        ),
    }
}

/// On Claude Code, the human-turn hook registered under `PostToolUse` too (the reference's
/// `AskUserQuestion` entry, taken over by `hook install`): a person's pick in the question
/// widget is recorded as a human turn.
fn widget_note(harness: Harness, role: HookRole, of_role: &[&Registered]) -> &'static str {
    let under_post_tool_use = of_role
        .iter()
        .any(|entry| entry.event == "PostToolUse" && !entry.reference);
    if harness == Harness::Claude && role == HookRole::HumanTurn && under_post_tool_use {
        "; under PostToolUse too, so answers picked in the question widget are human turns too"
    } else {
        ""
    }
}

/// The executable a hook command starts: its first word, from `PATH` or as a path (relative to
/// the project); `npx` must also find `aidlc` in the project's `node_modules/.bin`.
fn program_of(project_dir: &Utf8Path, command: &str) -> Result<Utf8PathBuf, String> {
    if let Some(audit_hook) = flag_value(command, AUDIT_HOOK_FLAG) {
        if !project_dir.join(audit_hook).is_file() {
            return Err(format!("its audit hook {audit_hook} does not exist"));
        }
        if on_search_path("bun").is_none() {
            return Err(format!(
                "its audit hook {audit_hook} runs with bun, which is not on the PATH"
            ));
        }
    }
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
