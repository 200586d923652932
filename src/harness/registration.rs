//! The hook commands a harness's settings register, as `aidlc doctor` reads them.
//!
//! Today every harness is read as Claude Code's `<harness>/settings.json`:
//! `{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type": "command", "command": …}]}]}}`.
//!
//! Invariant: an absent or blank file registers nothing; a file that is not JSON, or whose
//! `hooks` is not an object, is a problem, never "nothing registered".

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::harness::Harness;
use crate::harness::install::SETTINGS_FILE;

/// The file that registers `harness`'s hooks in `project_dir`.
pub fn settings_path(project_dir: &Utf8Path, harness: Harness) -> Utf8PathBuf {
    project_dir.join(harness.dir_name()).join(SETTINGS_FILE)
}

/// `(event, command)` of every hook command the settings register; an absent file registers
/// nothing. A file that is not JSON, or not the shape Claude Code reads, is a problem.
pub fn registered_commands(path: &Utf8Path) -> Result<Vec<(String, String)>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(format!("cannot be read: {error}")),
    };
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|error| {
            format!(
                "is not valid JSON (line {}, column {})",
                error.line(),
                error.column()
            )
        })?;
    let mut commands = Vec::new();
    let Some(hooks) = value.get("hooks") else {
        return Ok(commands);
    };
    let hooks = hooks
        .as_object()
        .ok_or("has a \"hooks\" that is not an object")?;
    for (event, groups) in hooks {
        for group in groups.as_array().into_iter().flatten() {
            for hook in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(command) = hook.get("command").and_then(Value::as_str) {
                    commands.push((event.clone(), command.to_owned()));
                }
            }
        }
    }
    Ok(commands)
}
