//! What a sensor found, as the gate report shows it: one [`Finding`] per problem, anchored
//! where the sensor knows (a lint error has a line; a missing heading or an unreferenced
//! artifact only has the file).
//!
//! Each shipped sensor's descriptor names its reader, built from the pieces here; a custom
//! sensor's JSON is read by [`read_any`], which tries every key a shipped sensor uses. A reader
//! never returns nothing for a failure: without a key it knows, the failure is one finding that
//! says how many the sensor counted.
//!
//! This file reads a worker's JSON only; it never runs a sensor and never decides a verdict.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

/// One finding a sensor reported, anchored where the sensor knows (a lint error has a line; a
/// missing heading or an unreferenced artifact only has the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Project-relative, `/` separators.
    pub file: Utf8PathBuf,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// e.g. the eslint rule id, or `missing-heading`, `unreferenced-artifact`.
    pub rule: Option<String>,
    pub message: String,
}

/// The findings of a custom sensor's failed verdict: lint violations, type errors, missing
/// headings and unreferenced artifacts, in that order, whichever its JSON carries.
pub fn read_any(deliverable: &Utf8Path, worker_json: &Value, findings_count: u64) -> Vec<Finding> {
    let mut findings = lint_violations(deliverable, worker_json);
    findings.extend(type_errors(deliverable, worker_json));
    findings.extend(missing_headings(deliverable, worker_json));
    findings.extend(unreferenced_artifacts(deliverable, worker_json));
    or_summary(deliverable, worker_json, findings_count, findings)
}

/// The failure as one finding on the file (see [`or_summary`]), for a sensor whose JSON holds
/// no located findings.
pub fn summary_only(
    deliverable: &Utf8Path,
    worker_json: &Value,
    findings_count: u64,
) -> Vec<Finding> {
    or_summary(deliverable, worker_json, findings_count, Vec::new())
}

/// `found`, or when it is empty, one finding on the file: too few headings when the JSON has an
/// `h2_count`, else how many findings the sensor counted.
pub fn or_summary(
    deliverable: &Utf8Path,
    worker_json: &Value,
    findings_count: u64,
    mut found: Vec<Finding>,
) -> Vec<Finding> {
    if found.is_empty() {
        let detail = match worker_json["h2_count"].as_u64() {
            Some(count) => {
                format!("has {count} distinct `## ` heading(s); at least 2 are required")
            }
            None => format!("{findings_count} finding(s)"),
        };
        found.push(at_file(deliverable, "findings", detail));
    }
    found
}

/// `violations[]`, each with its file, line, column, rule and message; a warning given as
/// eslint's numeric severity 1 is not a finding.
pub fn lint_violations(deliverable: &Utf8Path, worker_json: &Value) -> Vec<Finding> {
    worker_json["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["severity"].as_u64() != Some(1))
        .map(|item| located(deliverable, item))
        .collect()
}

/// `errors[]`, each with its file, line, column and message.
pub fn type_errors(deliverable: &Utf8Path, worker_json: &Value) -> Vec<Finding> {
    worker_json["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| located(deliverable, item))
        .collect()
}

/// `template_missing[]`: each heading the template requires and the file lacks.
pub fn missing_headings(deliverable: &Utf8Path, worker_json: &Value) -> Vec<Finding> {
    worker_json["template_missing"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|heading| {
            at_file(
                deliverable,
                "missing-heading",
                format!("missing the heading `{heading}` its template requires"),
            )
        })
        .collect()
}

/// `unreferenced[]`: each upstream artifact the stage's output does not cite.
pub fn unreferenced_artifacts(deliverable: &Utf8Path, worker_json: &Value) -> Vec<Finding> {
    worker_json["unreferenced"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| {
            at_file(
                deliverable,
                "unreferenced-artifact",
                format!("does not reference the upstream artifact `{name}`"),
            )
        })
        .collect()
}

fn at_file(deliverable: &Utf8Path, rule: &str, message: String) -> Finding {
    Finding {
        file: deliverable.to_owned(),
        line: None,
        column: None,
        rule: Some(rule.to_owned()),
        message,
    }
}

/// One item of a located list: its `file` (the deliverable when absent), `line`, `column`,
/// `rule` and `message`.
fn located(deliverable: &Utf8Path, item: &Value) -> Finding {
    Finding {
        file: item["file"].as_str().map_or_else(
            || deliverable.to_owned(),
            |file| relative_text(deliverable, file),
        ),
        line: item["line"].as_u64(),
        column: item["column"].as_u64(),
        rule: item["rule"].as_str().map(str::to_owned),
        message: item["message"].as_str().unwrap_or_default().to_owned(),
    }
}

/// A worker-reported file name made project-relative when it names the deliverable.
fn relative_text(deliverable: &Utf8Path, file: &str) -> Utf8PathBuf {
    let normal = file.replace('\\', "/");
    if normal.ends_with(deliverable.as_str()) {
        deliverable.to_owned()
    } else {
        Utf8PathBuf::from(normal)
    }
}
