//! The hooks a project registers with its harness, as `aidlc doctor` reads them: for each role
//! (the write hook, the human-turn hook), the commands registered for it, where, and whether
//! they are the engine's or the reference's.
//!
//! Invariant: an absent file registers nothing; a file that is not JSON, or not the shape the
//! harness reads, is a problem (with the file), never "nothing registered".

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::Harness;
use crate::harness::commands::{HookRole, engine_role, hook_role};
use crate::harness::install::{
    HookRegistration, KIRO_IDE_HOOKS_DIR, OPENCODE_PLUGIN_FILE, REFERENCE_OPENCODE_PLUGIN_FILE,
    RegistrationFiles, Shape, hook_list_entries, hook_registration, ide_hook_commands, json_text,
    opencode_plugin_commands,
};

/// One command registered for a role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub role: HookRole,
    /// The file that registers it.
    pub file: Utf8PathBuf,
    /// The event as the harness names it.
    pub event: String,
    pub command: String,
    /// Whether the command is the reference's rather than the engine's.
    pub reference: bool,
    /// Kiro IDE: registered only in the 0.12 format, which Kiro IDE 1.x does not run.
    pub legacy_format: bool,
}

/// A file that cannot be read as the harness reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationProblem {
    pub file: Utf8PathBuf,
    pub problem: String,
}

/// Every command `project_dir` registers for the engine's roles with `harness`.
pub fn registered(
    project_dir: &Utf8Path,
    harness: Harness,
) -> Result<Vec<Registered>, RegistrationProblem> {
    let registration = hook_registration(harness);
    match registration.files {
        RegistrationFiles::KiroIdeHookFiles => in_kiro_ide_files(project_dir, harness),
        RegistrationFiles::OpencodePlugin => Ok(in_opencode_plugins(project_dir, &registration)),
        RegistrationFiles::HookList(file) => {
            in_hook_list(project_dir, harness, &registration.path, file.shape)
        }
    }
}

/// A command's role, and whether it is the reference's; `None` for anyone else's.
fn classify(harness: Harness, command: &str) -> Option<(HookRole, bool)> {
    hook_role(harness, command).map(|role| (role, engine_role(command).is_none()))
}

fn read_text(path: &Utf8Path, shown: &Utf8Path) -> Result<Option<String>, RegistrationProblem> {
    match crate::leaves::fs_util::read_input_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(RegistrationProblem {
            file: shown.to_owned(),
            problem: format!("cannot be read: {error}"),
        }),
    }
}

fn in_hook_list(
    project_dir: &Utf8Path,
    harness: Harness,
    relative: &Utf8Path,
    shape: Shape,
) -> Result<Vec<Registered>, RegistrationProblem> {
    let problem = |problem: String| RegistrationProblem {
        file: relative.to_owned(),
        problem,
    };
    let Some(text) = read_text(&project_dir.join(relative), relative)? else {
        return Ok(Vec::new());
    };
    let Some(root) = parse_settings(&text).map_err(problem)? else {
        return Ok(Vec::new());
    };
    let entries = hook_list_entries(&root, shape, relative).map_err(|error| {
        problem(match error {
            crate::harness::install::HookInstallError::WrongShape { what, expected, .. } => {
                format!("has {what} that is not {expected}")
            }
            other => other.to_string(),
        })
    })?;
    Ok(entries
        .into_iter()
        .filter_map(|entry| {
            let (role, reference) = classify(harness, &entry.command)?;
            Some(Registered {
                role,
                file: relative.to_owned(),
                event: entry.event,
                command: entry.command,
                reference,
                legacy_format: false,
            })
        })
        .collect())
}

fn in_kiro_ide_files(
    project_dir: &Utf8Path,
    harness: Harness,
) -> Result<Vec<Registered>, RegistrationProblem> {
    let dir = project_dir.join(KIRO_IDE_HOOKS_DIR);
    let Ok(listing) = dir.read_dir_utf8() else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_owned())
        .collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        let shown = Utf8PathBuf::from(KIRO_IDE_HOOKS_DIR).join(&name);
        let Some(text) = read_text(&dir.join(&name), &shown)? else {
            continue;
        };
        for (event, command, legacy_format) in ide_hook_commands(harness, &name, &text) {
            if let Some((role, reference)) = classify(harness, &command) {
                found.push(Registered {
                    role,
                    file: shown.clone(),
                    event,
                    command,
                    reference,
                    legacy_format,
                });
            }
        }
    }
    Ok(found)
}

/// The engine's plugin registers its two commands; the reference's plugin registers the
/// reference's hooks for both roles.
fn in_opencode_plugins(project_dir: &Utf8Path, registration: &HookRegistration) -> Vec<Registered> {
    let mut found = Vec::new();
    let plugin = Utf8PathBuf::from(OPENCODE_PLUGIN_FILE);
    if let Some(commands) = crate::leaves::fs_util::read_input_text(&project_dir.join(&plugin))
        .ok()
        .as_deref()
        .and_then(opencode_plugin_commands)
    {
        for (role, command) in commands {
            found.push(Registered {
                role,
                file: plugin.clone(),
                event: registration.event(role).to_owned(),
                command,
                reference: false,
                legacy_format: false,
            });
        }
    }
    let reference = Utf8PathBuf::from(REFERENCE_OPENCODE_PLUGIN_FILE);
    if project_dir.join(&reference).is_file() {
        // The reference's plugin has no guard of the engine's kind.
        for role in [HookRole::Write, HookRole::HumanTurn] {
            found.push(Registered {
                role,
                file: reference.clone(),
                event: registration.event(role).to_owned(),
                command: format!("the reference's plugin {reference}"),
                reference: true,
                legacy_format: false,
            });
        }
    }
    found
}

/// `text` parsed as a settings file the harness reads, or why it cannot be.
pub(crate) fn parse_settings(text: &str) -> Result<Option<json_text::Node>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    json_text::parse(text)
        .map(Some)
        .map_err(|error| match error {
            json_text::JsonTextError::Syntax { line, column, .. } => {
                format!("is not valid JSON (line {line}, column {column})")
            }
            other @ json_text::JsonTextError::DuplicateKey { .. } => {
                format!("cannot be read: {other}")
            }
        })
}
