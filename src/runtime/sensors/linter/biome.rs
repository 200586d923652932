//! Biome: found as eslint is (the project's `node_modules/.bin`, else `PATH`), run with the JSON
//! reporter, and its report read into the linter's shape (failure mode F15: a Biome project
//! is linted, not reported unavailable).

use std::ffi::OsStr;

use camino::Utf8Path;
use serde_json::{Map, Value};

use super::place::{LINT_STEP_CAP, LintPlace};
use super::report::{
    LintReport, Severity, Violation, count_of, json_after_banner, json_count, json_text,
    output_excerpt, report_was_cut,
};
use crate::leaves::text_lines::line_column;
use crate::protocol::verdict::WorkerRun;
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::node_tool::{
    ToolBudget, most_telling_line, project_or_path_tool, run_tool_within, tool_unavailable,
};
use crate::runtime::sensors::worker_args::lexically_normal;
use crate::runtime::worker_process::WorkerCommand;

pub(super) fn run_biome(
    place: &LintPlace,
    config: &Utf8Path,
    search_path: Option<&OsStr>,
    budget: &ToolBudget,
) -> WorkerOutcome {
    let lead = format!("the project is configured for Biome ({config}) but there is ");
    let program = match project_or_path_tool(&place.tool_folders, search_path, "biome", &lead) {
        Ok(program) => program,
        Err(outcome) => return outcome,
    };
    let command = WorkerCommand {
        args: ["lint", "--reporter=json", place.file.as_str()]
            .map(str::to_owned)
            .to_vec(),
        env: vec![("NO_COLOR".to_owned(), "1".to_owned())],
        ..WorkerCommand::new(program, place.lint_root.clone())
    };
    run_tool_within("biome", command, LINT_STEP_CAP, budget)
        .map_or_else(|outcome| outcome, |run| biome_outcome(&run, place))
}

/// Biome's outcome. Biome exits 0 or 1 with a JSON report on stdout; a configuration that does
/// not load gives no report and names the configuration on stderr.
fn biome_outcome(run: &WorkerRun, place: &LintPlace) -> WorkerOutcome {
    if run.stdout_truncated {
        return report_was_cut("biome");
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    match json_after_banner(&stdout, '{') {
        Some(Value::Object(report)) if report.get("diagnostics").is_some_and(Value::is_array) => {
            biome_report_outcome(&report, place)
        }
        _ => biome_failure(run, &stdout),
    }
}

fn biome_failure(run: &WorkerRun, stdout: &str) -> WorkerOutcome {
    let stderr = &run.stderr_tail;
    let lower = stderr.to_lowercase();
    if lower.contains("configuration resulted in errors") || lower.contains("biome.json") {
        return WorkerOutcome::ScriptError(format!(
            "config-parse-error: {}",
            biome_problem_line(stderr)
        ));
    }
    WorkerOutcome::ScriptError(format!(
        "biome-bad-output: exit {}: the report is not a JSON object with diagnostics ({}); {}",
        run.exit_code.unwrap_or(-1),
        output_excerpt(stdout),
        most_telling_line(stderr)
    ))
}

/// Biome's message about its configuration (its `×` line), with the configuration location
/// line before it when there is one (`/p/biome.json:2:1 parse`).
fn biome_problem_line(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    let location = lines
        .iter()
        .find(|line| line.contains("biome.json"))
        .map(|line| line.trim_end_matches(['━', ' ']).trim().to_owned());
    let message = lines
        .iter()
        .filter_map(|line| line.strip_prefix('×'))
        .map(str::trim)
        .find(|message| {
            !message.starts_with("Some errors were emitted")
                && !message.starts_with("Biome exited because")
        });
    match (message, location) {
        (Some(message), Some(location)) => format!("{message} ({location})"),
        (Some(message), None) => message.to_owned(),
        (None, Some(location)) => location,
        (None, None) => most_telling_line(stderr),
    }
}

fn biome_report_outcome(report: &Map<String, Value>, place: &LintPlace) -> WorkerOutcome {
    let diagnostics = report
        .get("diagnostics")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let summary = report.get("summary").and_then(Value::as_object);
    if diagnostics.is_empty() && summary.is_some_and(biome_processed_no_file) {
        return tool_unavailable(
            "file-ignored",
            format!(
                "biome linted nothing: {} is ignored by its configuration",
                place.file
            ),
        );
    }
    let violations: Vec<Violation> = diagnostics
        .iter()
        .filter_map(|diagnostic| biome_violation(diagnostic, place))
        .collect();
    // The summary counts every diagnostic; the list holds only the first ones Biome printed.
    let summary_count = |key| summary.and_then(|summary| json_count(summary.get(key)));
    LintReport {
        error_count: summary_count("errors")
            .unwrap_or_else(|| count_of(&violations, Severity::Error)),
        warning_count: summary_count("warnings")
            .unwrap_or_else(|| count_of(&violations, Severity::Warning)),
        violations,
    }
    .verdict()
}

/// Whether Biome's summary says it read no file (`changed` and `unchanged` both 0).
fn biome_processed_no_file(summary: &Map<String, Value>) -> bool {
    ["changed", "unchanged"]
        .into_iter()
        .all(|key| json_count(summary.get(key)) == Some(0))
}

/// One Biome diagnostic. Two report shapes exist: Biome 2 gives `location.path` as a string and
/// `location.start` as a line and column; Biome 1 gives `location.path.file`, a byte `span` and
/// the `sourceCode`, from which the line and column are computed. Diagnostics that are neither
/// errors nor warnings (information, hints) are left out.
pub(super) fn biome_violation(diagnostic: &Value, place: &LintPlace) -> Option<Violation> {
    let severity = match diagnostic.get("severity").and_then(Value::as_str)? {
        "error" | "fatal" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return None,
    };
    let location = diagnostic.get("location");
    let path = location
        .and_then(|location| location.get("path"))
        .and_then(|path| path.as_str().or_else(|| path.get("file")?.as_str()));
    let file = match path {
        Some(path) if !path.is_empty() => lexically_normal(&place.lint_root.join(path)).to_string(),
        _ => place.file.to_string(),
    };
    let (line, column) = location.map_or((0, 0), biome_line_and_column);
    Some(Violation {
        file,
        line,
        column,
        rule: json_text(diagnostic.get("category")),
        severity,
        message: biome_message(diagnostic),
        end: None,
    })
}

fn biome_line_and_column(location: &Value) -> (u64, u64) {
    if let Some(start) = location.get("start") {
        return (
            json_count(start.get("line")).unwrap_or(0),
            json_count(start.get("column")).unwrap_or(0),
        );
    }
    let offset = location
        .get("span")
        .and_then(|span| span.get(0))
        .and_then(Value::as_u64);
    let source = location.get("sourceCode").and_then(Value::as_str);
    match (offset, source) {
        (Some(offset), Some(source)) => line_and_column_at(source, offset),
        _ => (0, 0),
    }
}

/// The 1-based line and column (in characters) of a byte offset; `(0, 0)` past the end or inside
/// a character.
pub(super) fn line_and_column_at(source: &str, offset: u64) -> (u64, u64) {
    match usize::try_from(offset) {
        Ok(offset) if source.is_char_boundary(offset) => {
            let (line, column) = line_column(source, offset);
            (line as u64, column as u64)
        }
        _ => (0, 0),
    }
}

/// The message as text: Biome 2's `message` string, else Biome 1's `description`, else the
/// contents of a markup `message` array.
fn biome_message(diagnostic: &Value) -> String {
    match (diagnostic.get("message"), diagnostic.get("description")) {
        (Some(Value::String(message)), _) => message.clone(),
        (_, Some(Value::String(description))) => description.clone(),
        (Some(Value::Array(parts)), _) => parts
            .iter()
            .filter_map(|part| part.get("content").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}
