//! What the code sensors (`linter`, `type_check`) share: their flags, the fired file, the folders above it,
//! finding a Node tool (the project's `node_modules/.bin` first, then `PATH`), and running it
//! within the sensor's budget.
//!
//! Invariants:
//!
//! - Every tool run ends within the sensor's budget (`WorkerContext::timeout`): each run gets
//!   what is left of it, capped per step, and its whole process group is stopped at the
//!   deadline (through `run_worker`).
//! - A run that gave no usable exit status is already an outcome, never a pass: a missing
//!   program or a missing interpreter (exit 127) is tool-unavailable, a timeout, a signal or a
//!   failed spawn is a script error.
//!
//! This file knows no particular tool's output: reading eslint's, Biome's or tsc's report is
//! the sensor's.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::json;

use crate::protocol::verdict::WorkerRun;
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::descriptor::{FILE_PATH_FLAG, STAGE_FLAG, ShippedSensor};
use crate::runtime::sensors::worker_args::{FlagGrammar, WorkerArgs, lexically_normal};
use crate::runtime::worker_process::{WorkerCommand, run_worker};

/// How much of a tool's stdout is kept. eslint's JSON report carries the source of every file
/// with a message, so it can be far larger than the dispatcher's default cap.
pub(super) const TOOL_STDOUT_CAP_BYTES: usize = 32 * 1024 * 1024;

/// How often a spawn refused with ETXTBSY is tried again, 20 ms apart.
const BUSY_EXECUTABLE_ATTEMPTS: u32 = 50;

/// The file a code sensor's fire names: `--stage <slug> --file-path <path>` read with the strict
/// grammar (an unknown flag, a flag given twice, and a flag with no value, at the end or
/// followed by another flag, are refused, never guessed: failure modes F9, F10; both flags are
/// required and non-empty), the path resolved with [`resolve_fired_file`]; any refusal is the
/// usage error.
pub(super) fn fired_file(
    args: &[String],
    sensor: &ShippedSensor,
    project_dir: &Utf8Path,
) -> Result<Utf8PathBuf, String> {
    let flags = WorkerArgs::parse(args, sensor, FlagGrammar::Strict)?;
    flags.required(STAGE_FLAG)?;
    resolve_fired_file(project_dir, flags.required(FILE_PATH_FLAG)?)
}

/// The fired file as an absolute path (a relative one is taken from the project folder), or the
/// usage error that names it. A path written with `\` separators that does not exist as written
/// is tried again with `/`.
pub(super) fn resolve_fired_file(project_dir: &Utf8Path, raw: &str) -> Result<Utf8PathBuf, String> {
    let as_written = lexically_normal(&project_dir.join(raw));
    if as_written.is_file() {
        return Ok(as_written);
    }
    if raw.contains('\\') {
        let with_slashes = raw.replace('\\', "/");
        let candidate = lexically_normal(&project_dir.join(with_slashes));
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    if as_written.exists() {
        return Err(format!("file-path is not a file: {raw}"));
    }
    Err(format!("file-path not found: {raw}"))
}

/// The folders from `start` upward: up to and including `boundary` when `start` is inside it,
/// else up to the filesystem root. Nearest first.
pub(super) fn folders_upward(start: &Utf8Path, boundary: &Utf8Path) -> Vec<Utf8PathBuf> {
    let inside = start.starts_with(boundary);
    start
        .ancestors()
        .take_while(|folder| !inside || folder.starts_with(boundary))
        .map(Utf8Path::to_path_buf)
        .collect()
}

/// Whether `path` is a file this process may execute (following links).
pub(crate) fn is_executable_file(path: impl AsRef<Path>) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    if !metadata.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Every executable named `tool` in `folders`, in their order (on Windows, `<tool>.cmd` and
/// `<tool>.exe` before `<tool>` in each folder).
fn executables_in<'tool>(
    folders: impl IntoIterator<Item = PathBuf> + 'tool,
    tool: &'tool str,
) -> impl Iterator<Item = PathBuf> + 'tool {
    let extensions: &[&str] = if cfg!(windows) {
        &[".cmd", ".exe", ""]
    } else {
        &[""]
    };
    folders
        .into_iter()
        .flat_map(move |folder| {
            extensions
                .iter()
                .map(move |extension| folder.join(format!("{tool}{extension}")))
        })
        .filter(|candidate| is_executable_file(candidate))
}

/// The first `node_modules/.bin/<tool>` in `folders`, nearest first.
pub(super) fn local_node_tool(folders: &[Utf8PathBuf], tool: &str) -> Option<PathBuf> {
    let bins = folders
        .iter()
        .map(|folder| folder.join("node_modules").join(".bin").into_std_path_buf());
    executables_in(bins, tool).next()
}

/// The first `node_modules/.bin/<tool>` in `folders`, else the first `tool` on `search_path`;
/// or the `<tool>-unavailable` outcome, its message `lead` then where neither was found.
pub(super) fn project_or_path_tool(
    folders: &[Utf8PathBuf],
    search_path: Option<&OsStr>,
    tool: &str,
    lead: &str,
) -> Result<PathBuf, WorkerOutcome> {
    local_node_tool(folders, tool)
        .or_else(|| executables_on_search_path(search_path, tool).next())
        .ok_or_else(|| {
            tool_unavailable(
                &format!("{tool}-unavailable"),
                format!(
                    "{lead}no node_modules/.bin/{tool} {} and no {tool} on PATH",
                    describe_folders_upward(folders)
                ),
            )
        })
}

/// Every executable named `tool` in the absolute folders of `search_path`, in order. Empty and
/// relative entries are skipped: they would name the current folder, which is not the project's
/// choice of tool.
pub(super) fn executables_on_search_path<'tool>(
    search_path: Option<&'tool OsStr>,
    tool: &'tool str,
) -> impl Iterator<Item = PathBuf> + 'tool {
    let folders = search_path.map(std::env::split_paths).into_iter().flatten();
    executables_in(folders.filter(|folder| folder.is_absolute()), tool)
}

/// The worker's time budget: every tool run gets what is left of it, capped per step.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToolBudget {
    started: Instant,
    total: Duration,
}

impl ToolBudget {
    pub(super) fn starting_now(total: Duration) -> Self {
        Self {
            started: Instant::now(),
            total,
        }
    }

    /// The timeout of the next step, or `None` when the budget is spent.
    fn next_step_timeout(&self, step_cap: Duration) -> Option<Duration> {
        let remaining = self.total.saturating_sub(self.started.elapsed());
        (!remaining.is_zero()).then(|| remaining.min(step_cap))
    }
}

/// Run the Node tool `tool` (its name in messages and reasons: `eslint` gives
/// `eslint-unavailable`) as `command` within the budget; its timeout and stdout cap are set
/// here. `Ok` holds a run that ended with an exit status other than 127; every other ending is
/// already the outcome: the budget spent (before or during the run), a failed spawn, exit 127
/// (the tool's interpreter is missing), a signal.
pub(super) fn run_tool_within(
    tool: &str,
    mut command: WorkerCommand,
    step_cap: Duration,
    budget: &ToolBudget,
) -> Result<WorkerRun, WorkerOutcome> {
    command.stdout_cap_bytes = TOOL_STDOUT_CAP_BYTES;
    let mut attempts = 0;
    loop {
        let Some(timeout) = budget.next_step_timeout(step_cap) else {
            return Err(WorkerOutcome::ScriptError(format!(
                "timeout: the sensor's budget of {} was spent before {tool} could run",
                describe_duration(budget.total)
            )));
        };
        command.timeout = timeout;
        let run = run_worker(&command);
        attempts += 1;
        // ETXTBSY: the executable is open for writing somewhere (being installed, or inherited
        // for a moment by a process another thread is forking); it clears by itself.
        if run.spawn_error.as_deref() == Some("ETXTBSY") && attempts < BUSY_EXECUTABLE_ATTEMPTS {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let limit = if timeout == step_cap {
            format!("its step limit of {}", describe_duration(step_cap))
        } else {
            format!("the sensor's budget of {}", describe_duration(budget.total))
        };
        return match run_that_did_not_finish(tool, &command.program, &run, &limit) {
            Some(outcome) => Err(outcome),
            None => Ok(run),
        };
    }
}

/// The outcome of a run that gave no usable exit status, or `None` for one that did.
fn run_that_did_not_finish(
    tool: &str,
    program: &Path,
    run: &WorkerRun,
    limit: &str,
) -> Option<WorkerOutcome> {
    let program = program.display();
    if run.timed_out {
        return Some(WorkerOutcome::ScriptError(format!(
            "timeout: {tool} did not finish within {limit} and was stopped"
        )));
    }
    if let Some(code) = &run.spawn_error {
        return Some(if code == "ENOENT" {
            tool_unavailable(
                &format!("{tool}-unavailable"),
                format!("{program} could not be started: {code}"),
            )
        } else {
            WorkerOutcome::ScriptError(format!(
                "{tool}-failed: {program} could not be started: {code}"
            ))
        });
    }
    match (run.exit_code, run.signal) {
        (Some(127), _) => Some(tool_unavailable(
            &format!("{tool}-unavailable"),
            format!(
                "{program} exited 127 (a command it needs was not found): {}",
                most_telling_line(&run.stderr_tail)
            ),
        )),
        (Some(_), _) => None,
        (None, Some(signal)) => Some(WorkerOutcome::ScriptError(format!(
            "{tool}-failed: {program} was stopped by signal {signal}"
        ))),
        (None, None) => Some(WorkerOutcome::ScriptError(format!(
            "{tool}-failed: the exit status of {program} could not be read"
        ))),
    }
}

/// `1 s`, `1200 s`, or `250 ms` below a second.
fn describe_duration(duration: Duration) -> String {
    if duration >= Duration::from_secs(1) {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// `from /p/src up to /p`, or `in /p` for one folder: a walk of `folders_upward`, for messages.
pub(super) fn describe_folders_upward(folders: &[Utf8PathBuf]) -> String {
    match (folders.first(), folders.last()) {
        (Some(first), Some(last)) if first != last => format!("from {first} up to {last}"),
        (Some(first), _) => format!("in {first}"),
        _ => "nowhere".to_owned(),
    }
}

/// The tool-unavailable outcome: `{reason, message}`, printed with exit 127.
pub(super) fn tool_unavailable(reason: &str, message: impl Into<String>) -> WorkerOutcome {
    WorkerOutcome::ToolUnavailable(json!({ "reason": reason, "message": message.into() }))
}

/// The line of a tool's error output that says most: the first one mentioning an error that is
/// not a stack frame, else the first line that is not a frame, else `no output`.
pub(super) fn most_telling_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("at "))
        .collect();
    lines
        .iter()
        .find(|line| line.to_lowercase().contains("error"))
        .or_else(|| lines.first())
        .map_or_else(|| "no output".to_owned(), |line| (*line).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sensors::linter;
    use crate::runtime::sensors::test_support::words;

    #[test]
    fn upward_walks_stop_at_the_project_folder_only_inside_it() {
        let inside = folders_upward(Utf8Path::new("/p/a/b"), Utf8Path::new("/p"));
        assert_eq!(inside, ["/p/a/b", "/p/a", "/p"].map(Utf8PathBuf::from));
        let outside = folders_upward(Utf8Path::new("/q/a"), Utf8Path::new("/p"));
        assert_eq!(outside, ["/q/a", "/q", "/"].map(Utf8PathBuf::from));
    }

    #[test]
    fn lexical_absolute_paths_resolve_dots() {
        let base = Utf8Path::new("/p");
        assert_eq!(lexically_normal(&base.join("a/./b/../c.ts")), "/p/a/c.ts");
        assert_eq!(lexically_normal(&base.join("/x/../y.ts")), "/y.ts");
    }

    #[test]
    fn the_most_telling_line_skips_stack_frames() {
        let stderr = "Oops! Something went wrong! :(\n\n    at foo (x.js:1:1)\nSyntaxError: Unexpected end of input\n";
        assert_eq!(
            most_telling_line(stderr),
            "SyntaxError: Unexpected end of input"
        );
        assert_eq!(most_telling_line("  \n"), "no output");
        assert_eq!(most_telling_line("plain\n"), "plain");
    }

    #[test]
    fn flags_parse_in_any_order() {
        let fired = fired_file(
            &words("--file-path /p/absent.ts --stage s"),
            &linter::SENSOR,
            Utf8Path::new("/p"),
        );
        assert_eq!(fired, Err("file-path not found: /p/absent.ts".to_owned()));
    }

    #[test]
    fn bad_flags_are_usage_errors_with_the_reference_wording() {
        let cases = [
            (
                "--stage s --file-path /a --output-path /b",
                "unknown flag: --output-path",
            ),
            ("--file-path /a", "missing required flag: --stage"),
            ("--stage s", "missing required flag: --file-path"),
            ("--stage s --file-path", "missing value for --file-path"),
            ("--stage --file-path /a", "missing value for --stage"),
            (
                "--stage s --stage t --file-path /a",
                "flag given twice: --stage",
            ),
        ];
        for (args, message) in cases {
            assert_eq!(
                fired_file(&words(args), &linter::SENSOR, Utf8Path::new("/p")),
                Err(message.to_owned()),
                "{args}"
            );
        }
        let empty = vec!["--stage".to_owned(), String::new()];
        assert_eq!(
            fired_file(&empty, &linter::SENSOR, Utf8Path::new("/p")),
            Err("missing required flag: --stage".to_owned())
        );
    }
}
