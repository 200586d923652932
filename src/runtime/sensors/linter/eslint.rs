//! eslint: which one, its run with `--format json`, and its outcome.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use camino::Utf8Path;
use serde_json::{Map, Value};

use super::place::{LINT_STEP_CAP, LintPlace};
use super::report::{
    LintReport, Severity, Violation, count_of, json_after_banner, json_count, json_text,
    output_excerpt, report_was_cut,
};
use crate::protocol::verdict::WorkerRun;
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::node_tool::{
    ToolBudget, describe_folders_upward, executables_on_search_path, local_node_tool,
    most_telling_line, run_tool_within, tool_unavailable,
};
use crate::runtime::worker_process::WorkerCommand;

/// The oldest eslint accepted from `PATH`: 9 made flat config the default.
const OLDEST_PATH_ESLINT_MAJOR: u32 = 9;

/// The longest a version probe may run (the seed: five minutes per eslint subprocess).
const PROBE_STEP_CAP: Duration = Duration::from_secs(5 * 60);

pub(super) fn run_eslint(
    place: &LintPlace,
    config_present: bool,
    search_path: Option<&OsStr>,
    budget: &ToolBudget,
) -> WorkerOutcome {
    let program = match find_eslint(place, search_path, budget) {
        Ok(program) => program,
        Err(outcome) => return outcome,
    };
    let command = WorkerCommand {
        // The `=` form: ESLint reads a separate `-1` as an unknown option.
        args: ["--format", "json", "--max-warnings=-1", place.file.as_str()]
            .map(str::to_owned)
            .to_vec(),
        ..WorkerCommand::new(program, place.lint_root.clone())
    };
    run_tool_within("eslint", command, LINT_STEP_CAP, budget).map_or_else(
        |outcome| outcome,
        |run| eslint_outcome(&run, config_present),
    )
}

/// The first `node_modules/.bin/eslint` from the lint root up to the project folder (a
/// workspace hoists it to the root), else the first `eslint` on `PATH` whose `--version` says
/// [`OLDEST_PATH_ESLINT_MAJOR`] or newer (an older one, a distro package, cannot read flat
/// config: failure mode F14); or the tool-unavailable outcome.
fn find_eslint(
    place: &LintPlace,
    search_path: Option<&OsStr>,
    budget: &ToolBudget,
) -> Result<PathBuf, WorkerOutcome> {
    if let Some(local) = local_node_tool(&place.tool_folders, "eslint") {
        return Ok(local);
    }
    let mut skipped = Vec::new();
    for candidate in executables_on_search_path(search_path, "eslint") {
        let (text, major) = eslint_version(&candidate, &place.lint_root, budget)?;
        if major.is_some_and(|major| major >= OLDEST_PATH_ESLINT_MAJOR) {
            return Ok(candidate);
        }
        skipped.push(format!("{} ({text})", candidate.display()));
    }
    let skipped_note = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            "; skipped as older than {OLDEST_PATH_ESLINT_MAJOR} (no flat config): {}",
            skipped.join(", ")
        )
    };
    Err(tool_unavailable(
        "eslint-unavailable",
        format!(
            "no node_modules/.bin/eslint {} and no eslint {OLDEST_PATH_ESLINT_MAJOR} or newer on \
             PATH{skipped_note}",
            describe_folders_upward(&place.tool_folders)
        ),
    ))
}

/// What `eslint --version` said, and the major version in it.
fn eslint_version(
    program: &Path,
    cwd: &Utf8Path,
    budget: &ToolBudget,
) -> Result<(String, Option<u32>), WorkerOutcome> {
    let command = WorkerCommand {
        args: vec!["--version".to_owned()],
        ..WorkerCommand::new(program, cwd)
    };
    let run = match run_tool_within("eslint", command, PROBE_STEP_CAP, budget) {
        Ok(run) => run,
        Err(WorkerOutcome::ScriptError(message)) if message.starts_with("timeout:") => {
            return Err(WorkerOutcome::ScriptError(message));
        }
        Err(_) => return Ok(("did not run".to_owned(), None)),
    };
    let text = String::from_utf8_lossy(&run.stdout).trim().to_owned();
    let major = (run.exit_code == Some(0))
        .then(|| major_version(&text))
        .flatten();
    if text.is_empty() {
        return Ok(("no version".to_owned(), major));
    }
    Ok((text, major))
}

/// `9` from `v9.1.0` or `9.1.0`.
pub(super) fn major_version(text: &str) -> Option<u32> {
    let first_line = text.lines().next()?.trim();
    let digits = first_line.strip_prefix('v').unwrap_or(first_line);
    digits.split('.').next()?.parse().ok()
}

/// eslint's outcome from its exit status, report and error output. Exit 0 and 1 carry a JSON
/// report; any other status is a failure to lint (2: a configuration problem or a crash).
fn eslint_outcome(run: &WorkerRun, config_present: bool) -> WorkerOutcome {
    let stderr = &run.stderr_tail;
    let exit = run.exit_code.unwrap_or(-1);
    if exit != 0 && exit != 1 {
        if let Some(problem) = eslint_config_problem(stderr) {
            return problem;
        }
        let line = eslint_problem_line(stderr);
        return WorkerOutcome::ScriptError(if config_present {
            format!("config-parse-error: {line}")
        } else {
            format!("eslint-failed: exit {exit}: {line}")
        });
    }
    if run.stdout_truncated {
        return report_was_cut("eslint");
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    match parse_eslint_report(&stdout) {
        Ok(report) => match ignored_file_notice(&report) {
            Some(notice) => tool_unavailable("file-ignored", notice),
            None => report.verdict(),
        },
        Err(why) => eslint_config_problem(stderr)
            .unwrap_or_else(|| WorkerOutcome::ScriptError(format!("eslint-bad-output: {why}"))),
    }
}

/// A configuration problem eslint reported on stderr: none found (tool-unavailable,
/// `no-eslint-config`), or one that does not load (a script error). `None` for anything else.
fn eslint_config_problem(stderr: &str) -> Option<WorkerOutcome> {
    let text = stderr.to_lowercase().replace('\u{2019}', "'");
    let none_found = [
        "no eslint configuration found",
        "could not find config file",
        "eslint couldn't find an eslint.config",
        "eslint couldn't find a eslint.config",
        "eslint couldn't find a configuration",
    ];
    if none_found.iter().any(|phrase| text.contains(phrase)) {
        // eslint's own sentence ("ESLint couldn't find …"), else the most telling line.
        let couldn = stderr
            .lines()
            .map(str::trim)
            .find(|line| line.to_lowercase().contains("couldn"));
        let line = couldn.map_or_else(|| most_telling_line(stderr), str::to_owned);
        return Some(tool_unavailable("no-eslint-config", line));
    }
    let does_not_load = [
        "parse error",
        "syntaxerror",
        "unexpected token",
        "unable to load",
        "failed to load config",
        "failed to load plugin",
        "cannot find package",
        "cannot find module",
    ];
    let invalid_configuration = text
        .lines()
        .any(|line| line.contains("configuration") && line.contains("is invalid"));
    (invalid_configuration || does_not_load.iter().any(|phrase| text.contains(phrase))).then(|| {
        WorkerOutcome::ScriptError(format!(
            "config-parse-error: {}",
            eslint_problem_line(stderr)
        ))
    })
}

/// The line that says what went wrong, followed by where when eslint names the configuration
/// file on a line of its own (`/p/eslint.config.js:2`).
fn eslint_problem_line(stderr: &str) -> String {
    let line = most_telling_line(stderr);
    let location = stderr.lines().map(str::trim).find(|candidate| {
        (candidate.contains("eslint.config.") || candidate.contains(".eslintrc"))
            && !candidate.starts_with("at ")
            && *candidate != line
    });
    match location {
        Some(location) if !line.contains(location) => format!("{line} ({location})"),
        _ => line,
    }
}

/// eslint's `--format json` report: an array with one result per file.
pub(super) fn parse_eslint_report(stdout: &str) -> Result<LintReport, String> {
    let Some(Value::Array(results)) = json_after_banner(stdout, '[') else {
        return Err(format!(
            "the report is not a JSON array ({})",
            output_excerpt(stdout)
        ));
    };
    let mut report = LintReport::default();
    for result in &results {
        let Value::Object(result) = result else {
            return Err("a result in the report is not an object".to_owned());
        };
        add_eslint_result(&mut report, result);
    }
    Ok(report)
}

/// Add one file's result. The counts are eslint's own (`errorCount` includes fatal parse
/// errors), or counted from the messages when a count is missing.
fn add_eslint_result(report: &mut LintReport, result: &Map<String, Value>) {
    let file = json_text(result.get("filePath"));
    let violations: Vec<Violation> = result
        .get("messages")
        .and_then(Value::as_array)
        .map(|messages| {
            messages
                .iter()
                .filter_map(|message| eslint_violation(&file, message))
                .collect()
        })
        .unwrap_or_default();
    report.error_count += json_count(result.get("errorCount"))
        .unwrap_or_else(|| count_of(&violations, Severity::Error));
    report.warning_count += json_count(result.get("warningCount"))
        .unwrap_or_else(|| count_of(&violations, Severity::Warning));
    report.violations.extend(violations);
}

fn eslint_violation(file: &str, message: &Value) -> Option<Violation> {
    let message = message.as_object()?;
    let severity = if message.get("severity").and_then(Value::as_u64) == Some(2) {
        Severity::Error
    } else {
        Severity::Warning
    };
    Some(Violation {
        file: file.to_owned(),
        line: json_count(message.get("line")).unwrap_or(0),
        column: json_count(message.get("column")).unwrap_or(0),
        rule: json_text(message.get("ruleId")),
        severity,
        message: json_text(message.get("message")),
        end: json_count(message.get("endLine")).zip(json_count(message.get("endColumn"))),
    })
}

/// eslint's notice when it linted nothing ("File ignored because …", a warning with no rule):
/// the only messages, and no error.
fn ignored_file_notice(report: &LintReport) -> Option<String> {
    let only_notices = report.error_count == 0
        && !report.violations.is_empty()
        && report.violations.iter().all(|violation| {
            violation.rule.is_empty() && violation.message.starts_with("File ignored")
        });
    only_notices.then(|| {
        let first = &report.violations[0];
        format!("eslint linted nothing: {} ({})", first.message, first.file)
    })
}
