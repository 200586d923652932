//! The Node tools the code sensors run: eslint and Biome (the linter) and tsc (type-check), each
//! found as the sensors find them (the project's `node_modules/.bin` first, then `PATH`), with
//! its version, or why there is none.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

use crate::runtime::worker_process::{WorkerCommand, run_worker};

use super::{Row, is_executable_file, on_search_path};

/// How long `<tool> --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

pub(super) fn rows(project_dir: &Utf8Path) -> Vec<Row> {
    let eslint = find(project_dir, "eslint");
    let biome = find(project_dir, "biome");
    let linter = match (&eslint, &biome) {
        (Some(path), _) => tool_row(project_dir, "Linter", "eslint", path),
        (None, Some(path)) => tool_row(project_dir, "Linter", "biome", path),
        (None, None) => Row::warn(
            "Linter: no eslint or Biome in node_modules/.bin or on the PATH; the linter sensor reports tool-unavailable",
            "`npm install --save-dev eslint` (with an eslint.config.js) or `@biomejs/biome`",
        ),
    };
    let type_check = match find(project_dir, "tsc") {
        Some(path) => tool_row(project_dir, "Type-check", "tsc", &path),
        None => Row::warn(
            "Type-check: no tsc in node_modules/.bin or on the PATH; the type-check sensor reports tool-unavailable",
            "`npm install --save-dev typescript` (with a tsconfig.json)",
        ),
    };
    vec![linter, type_check]
}

fn find(project_dir: &Utf8Path, tool: &str) -> Option<Utf8PathBuf> {
    let local = project_dir.join("node_modules/.bin").join(tool);
    if is_executable_file(&local) {
        return Some(local);
    }
    on_search_path(tool)
}

fn tool_row(project_dir: &Utf8Path, name: &str, tool: &str, path: &Utf8Path) -> Row {
    let mut command = WorkerCommand::new(path.as_std_path(), project_dir);
    command.args = vec!["--version".to_owned()];
    command.timeout = VERSION_TIMEOUT;
    let run = run_worker(&command);
    let version = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_owned);
    match (run.exit_code, version) {
        (Some(0), Some(version)) => Row::pass(format!("{name}: {tool} {version} ({path})")),
        _ => Row::fail(
            format!(
                "{name}: {tool} at {path} does not run (`--version` {})",
                if run.timed_out {
                    "timed out".to_owned()
                } else {
                    format!("exited {:?}: {}", run.exit_code, run.stderr_tail.trim())
                }
            ),
            format!("reinstall {tool}"),
        ),
    }
}
