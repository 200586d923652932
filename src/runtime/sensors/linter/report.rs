//! The report every linter's output is turned into (`errorCount`, `warningCount`,
//! `violations`), and its verdict with the reference's keys in order (then `diagnostics`, the
//! errors as the gate report shows them); helpers for reading a
//! tool's JSON after a banner.

use serde_json::{Value, json};

use crate::protocol::finding::Finding;
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::finding::verdict_json;
use crate::runtime::sensors::node_tool::TOOL_STDOUT_CAP_BYTES;

/// A violation's severity; the verdict names it in lower case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Severity {
    Error,
    Warning,
}

/// One message of the linter, as the verdict lists it: serialised with the fields in this order
/// (`end` is not listed).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(super) struct Violation {
    pub(super) file: String,
    pub(super) line: u64,
    pub(super) column: u64,
    /// Empty when the linter names no rule (a parse error, an "ignored" notice).
    pub(super) rule: String,
    pub(super) severity: Severity,
    pub(super) message: String,
    /// Where the linter says the problem ends (eslint's `endLine`, `endColumn`), when it does.
    #[serde(skip)]
    pub(super) end: Option<(u64, u64)>,
}

impl Violation {
    /// The finding the gate report shows (an error; warnings never fail).
    fn located(&self) -> Finding {
        let rule = if self.rule.is_empty() {
            "lint-error"
        } else {
            self.rule.as_str()
        };
        Finding::at_file(self.file.clone(), rule, self.message.clone())
            .at(self.line, self.column)
            .until(
                self.end.map(|(line, _)| line),
                self.end.map(|(_, column)| column),
            )
    }
}

/// What one lint found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct LintReport {
    pub(super) error_count: u64,
    pub(super) warning_count: u64,
    pub(super) violations: Vec<Violation>,
}

impl LintReport {
    /// The verdict, keys in the reference's order.
    pub(super) fn verdict(&self) -> WorkerOutcome {
        let located: Vec<Finding> = self
            .violations
            .iter()
            .filter(|violation| self.error_count > 0 && violation.severity == Severity::Error)
            .map(Violation::located)
            .collect();
        let violations = json!(self.violations);
        WorkerOutcome::Verdict(verdict_json(
            [
                ("pass", Some(json!(self.error_count == 0))),
                ("errorCount", Some(json!(self.error_count))),
                ("warningCount", Some(json!(self.warning_count))),
                ("violations", Some(violations)),
                ("findings_count", Some(json!(self.error_count))),
            ],
            &located,
        ))
    }
}

/// How many of `violations` have `severity`: the count when a linter's report gives none.
pub(super) fn count_of(violations: &[Violation], severity: Severity) -> u64 {
    violations
        .iter()
        .filter(|violation| violation.severity == severity)
        .count() as u64
}

/// The script error of a report cut at the stdout cap: a cut report cannot be read.
pub(super) fn report_was_cut(tool: &str) -> WorkerOutcome {
    WorkerOutcome::ScriptError(format!(
        "{tool}-bad-output: the report was over {} MiB and was cut",
        TOOL_STDOUT_CAP_BYTES / (1024 * 1024)
    ))
}

/// The first JSON value in `stdout` that starts with `opening` and runs to the end: tried from
/// the first `opening`, then from each line that starts with it (a banner may hold one too).
pub(super) fn json_after_banner(stdout: &str, opening: char) -> Option<Value> {
    let line_opening = format!("\n{opening}");
    let first = stdout.find(opening).into_iter();
    let line_starts = stdout
        .match_indices(line_opening.as_str())
        .map(|(index, _)| index + 1);
    first
        .chain(line_starts)
        .find_map(|start| serde_json::from_str::<Value>(&stdout[start..]).ok())
}

/// The start of `text`, for a message about output that could not be read.
pub(super) fn output_excerpt(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return "stdout was empty".to_owned();
    }
    let excerpt: String = trimmed.chars().take(120).collect();
    if excerpt.len() < trimmed.len() {
        format!("stdout began: {excerpt}…")
    } else {
        format!("stdout was: {excerpt}")
    }
}

pub(super) fn json_count(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64)
}

pub(super) fn json_text(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or_default().to_owned()
}
