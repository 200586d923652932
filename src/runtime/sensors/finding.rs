//! What a sensor found, as the gate report shows it: one `Finding` (the protocol's) per problem,
//! with its own rule, message and help, anchored where the sensor knows (a line and column, an
//! end, or only the file).
//!
//! Two halves, one shape: a shipped worker builds [`Finding`]s (with the builders below) and
//! writes them into its JSON under [`DIAGNOSTICS_KEY`] with [`verdict_json`], beside the
//! reference's own keys (so its JSON, its detail file and `aidlc engine sensor-<id>` stay a
//! superset of the reference's output); the gate report reads them back with [`read_shipped`],
//! and a custom worker's with [`read_custom`].
//!
//! Invariant: a reader never returns nothing for a failure. When the JSON lists nothing it can
//! read, the failure is one finding on the file that says the sensor counted findings and listed
//! none; a count is never shown where messages exist.
//!
//! This file reads and writes JSON values only; it never runs a sensor, reads a file or decides
//! a verdict.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use crate::leaves::english::counted;
use crate::protocol::finding::Finding;

/// The key under which a shipped worker lists its findings, beside the reference's keys.
pub const DIAGNOSTICS_KEY: &str = "diagnostics";

/// The rule of the one finding a failure gets when its JSON lists none.
pub const UNLISTED_RULE: &str = "unlisted-findings";

/// What a findings reader is given: where the project is, the deliverable the sensor fired on
/// (project-relative), the sensor's id, its JSON and its `findings_count`.
#[derive(Debug, Clone, Copy)]
pub struct FindingsInput<'a> {
    pub project_dir: &'a Utf8Path,
    pub deliverable: &'a Utf8Path,
    pub sensor_id: &'a str,
    pub worker_json: &'a Value,
    pub findings_count: u64,
}

// --- The worker side ---------------------------------------------------------------------------

/// The worker side's builders: a shipped worker makes a [`Finding`] on the file as it knows it
/// (absolute, or relative to the project; [`read_shipped`] makes it project-relative) with
/// [`Finding::at_file`], then places it. A position below 1 is no position.
impl Finding {
    /// At a 1-based line (0 means "no line").
    #[must_use]
    pub fn at_line(mut self, line: usize) -> Self {
        self.line = u64::try_from(line).ok().filter(|line| *line >= 1);
        self
    }

    /// At a 1-based line and column.
    #[must_use]
    pub fn at(mut self, line: u64, column: u64) -> Self {
        self.line = Some(line).filter(|line| *line >= 1);
        self.column = Some(column).filter(|column| *column >= 1);
        self
    }

    /// Ending at a 1-based line and column.
    #[must_use]
    pub fn until(mut self, end_line: Option<u64>, end_column: Option<u64>) -> Self {
        self.end_line = end_line.filter(|line| *line >= 1);
        self.end_column = end_column.filter(|column| *column >= 1);
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// A finding as a shipped worker writes it under [`DIAGNOSTICS_KEY`]: the keys in the order of
/// [`Finding`]'s fields (`file`, `rule`, `message`, the positions, `help`); absent values are
/// left out.
fn diagnostic_json(finding: &Finding) -> Value {
    let Ok(Value::Object(mut object)) = serde_json::to_value(finding) else {
        unreachable!("a Finding serialises to a JSON object")
    };
    object.retain(|_, value| !value.is_null());
    Value::Object(object)
}

/// A shipped worker's verdict JSON: `fields` in order, a field whose value is `None` left out,
/// then `diagnostics` when there is at least one finding (a passing verdict keeps exactly the
/// reference's keys).
pub fn verdict_json<'key>(
    fields: impl IntoIterator<Item = (&'key str, Option<Value>)>,
    findings: &[Finding],
) -> Value {
    let mut object: Map<String, Value> = fields
        .into_iter()
        .filter_map(|(key, value)| Some((key.to_owned(), value?)))
        .collect();
    if !findings.is_empty() {
        object.insert(
            DIAGNOSTICS_KEY.to_owned(),
            findings.iter().map(diagnostic_json).collect(),
        );
    }
    Value::Object(object)
}

// --- The report side ---------------------------------------------------------------------------

/// How the gate report reads a shipped sensor's failure: its `diagnostics`, or the one finding
/// that says the sensor listed none.
pub fn read_shipped(input: &FindingsInput<'_>) -> Vec<Finding> {
    let found = items(input, list(input, DIAGNOSTICS_KEY));
    or_unlisted(input, found)
}

/// How the gate report reads a custom sensor's failure: its `findings[]` (or `diagnostics[]`),
/// then the keys the reference's workers used, in that order; or the one finding that says the
/// sensor listed none.
pub fn read_custom(input: &FindingsInput<'_>) -> Vec<Finding> {
    let mut found = items(input, list(input, "findings"));
    found.extend(items(input, list(input, DIAGNOSTICS_KEY)));
    found.extend(lint_violations(input));
    found.extend(items(input, list(input, "errors")));
    found.extend(named_findings(
        input,
        "template_missing",
        "missing-heading",
        |heading| format!("missing the heading `{heading}` its template requires"),
    ));
    found.extend(named_findings(
        input,
        "unreferenced",
        "unreferenced-artifact",
        |name| format!("does not reference the upstream artifact `{name}`"),
    ));
    or_unlisted(input, found)
}

/// `found`, or when it is empty, one finding on the deliverable saying how many findings the
/// sensor counted without listing them.
fn or_unlisted(input: &FindingsInput<'_>, mut found: Vec<Finding>) -> Vec<Finding> {
    if found.is_empty() {
        let message = match input.findings_count {
            0 => "failed without counting or listing a finding".to_owned(),
            n => format!(
                "failed with {} and listed none of them",
                counted(n, "finding")
            ),
        };
        found.push(Finding::at_file(input.deliverable, UNLISTED_RULE, message).with_help(format!(
            "the sensor {} wrote no `findings[]` with a `message` per finding into its JSON; its detail file holds what it did write",
            input.sensor_id
        )));
    }
    found
}

/// Each item of a list: an object with a `message` (and optionally `line`, `column`,
/// `end_line`, `end_column`, `rule`, `help`, `file`), or a string (the message alone). An
/// object without a usable `message` is shown as its JSON, never dropped.
fn items<'json>(
    input: &FindingsInput<'_>,
    list: impl Iterator<Item = &'json Value>,
) -> Vec<Finding> {
    list.map(|item| match item {
        Value::String(message) => {
            Finding::at_file(input.deliverable, input.sensor_id, message.clone())
        }
        Value::Object(_) => item_finding(input, item),
        other => Finding::at_file(
            input.deliverable,
            input.sensor_id,
            format!("finding without a message: {other}"),
        ),
    })
    .collect()
}

fn item_finding(input: &FindingsInput<'_>, item: &Value) -> Finding {
    let message = match item["message"]
        .as_str()
        .filter(|text| !text.trim().is_empty())
    {
        Some(message) => message.to_owned(),
        None => format!("finding without a message: {item}"),
    };
    let rule = item["rule"]
        .as_str()
        .or_else(|| item["ruleId"].as_str())
        .filter(|rule| !rule.is_empty())
        .unwrap_or(input.sensor_id);
    Finding {
        file: item["file"].as_str().map_or_else(
            || input.deliverable.to_owned(),
            |file| project_relative(input.project_dir, input.deliverable, file),
        ),
        rule: rule.to_owned(),
        message,
        line: positive(&item["line"]),
        column: positive(&item["column"]),
        end_line: positive(&item["end_line"]).or_else(|| positive(&item["endLine"])),
        end_column: positive(&item["end_column"]).or_else(|| positive(&item["endColumn"])),
        help: item["help"].as_str().map(str::to_owned),
    }
}

fn positive(value: &Value) -> Option<u64> {
    value.as_u64().filter(|number| *number >= 1)
}

/// `violations[]`, as the reference's linter writes them; a warning given as eslint's numeric
/// severity 1 (or as `"warning"`) is not a finding.
fn lint_violations(input: &FindingsInput<'_>) -> Vec<Finding> {
    let errors = list(input, "violations")
        .filter(|item| item["severity"].as_u64() != Some(1) && item["severity"] != "warning");
    items(input, errors)
}

/// A finding with `rule` on the deliverable per string of `key`'s list: `template_missing[]`
/// as the reference's required-sections writes it, `unreferenced[]` as its upstream-coverage
/// does.
fn named_findings(
    input: &FindingsInput<'_>,
    key: &str,
    rule: &str,
    message: fn(&str) -> String,
) -> Vec<Finding> {
    list(input, key)
        .filter_map(Value::as_str)
        .map(|name| Finding::at_file(input.deliverable, rule, message(name)))
        .collect()
}

/// The items of the list under `key` in the worker's JSON; none when it holds no list.
fn list<'json>(input: &FindingsInput<'json>, key: &str) -> impl Iterator<Item = &'json Value> {
    input.worker_json[key].as_array().into_iter().flatten()
}

/// A worker-reported file made project-relative: the project's prefix stripped (as given or
/// canonical), `\` read as `/`; a file naming the deliverable by a suffix is the deliverable.
fn project_relative(project_dir: &Utf8Path, deliverable: &Utf8Path, file: &str) -> Utf8PathBuf {
    let normal = file.replace('\\', "/");
    let path = Utf8Path::new(&normal);
    if path.is_relative() {
        return path.to_owned();
    }
    let canonical = project_dir.canonicalize_utf8().ok();
    for base in std::iter::once(project_dir).chain(canonical.as_deref()) {
        if let Ok(relative) = path.strip_prefix(base) {
            return relative.to_owned();
        }
    }
    if normal.ends_with(&format!("/{deliverable}")) {
        return deliverable.to_owned();
    }
    path.to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input<'a>(json: &'a Value, sensor_id: &'a str) -> FindingsInput<'a> {
        FindingsInput {
            project_dir: Utf8Path::new("/p"),
            deliverable: Utf8Path::new("docs/a.md"),
            sensor_id,
            worker_json: json,
            findings_count: json["findings_count"].as_u64().unwrap_or(0),
        }
    }

    #[test]
    fn shipped_diagnostics_round_trip_with_paths_made_relative() {
        let located = [
            Finding::at_file(
                "/p/docs/b.md",
                "untagged-claim",
                "claim block has no source tag",
            )
            .at(3, 1)
            .until(Some(4), Some(9))
            .with_help("tag it"),
            Finding::at_file("/p/docs/a.md", "missing-heading", "missing `## Risks`"),
        ];
        let json = verdict_json([("pass", Some(json!(false)))], &located);
        let found = read_shipped(&input(&json, "claim-sources"));
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].file, "docs/b.md");
        assert_eq!(found[0].rule, "untagged-claim");
        assert_eq!(found[0].line, Some(3));
        assert_eq!(found[0].column, Some(1));
        assert_eq!(found[0].end_line, Some(4));
        assert_eq!(found[0].end_column, Some(9));
        assert_eq!(found[0].help.as_deref(), Some("tag it"));
        assert_eq!(found[1].line, None);
    }

    #[test]
    fn no_diagnostics_key_when_there_is_none() {
        assert_eq!(verdict_json([], &[]), json!({}));
    }

    #[test]
    fn a_custom_worker_with_only_a_count_gets_one_finding_saying_so() {
        let json = json!({"pass": false, "findings_count": 3});
        let found = read_custom(&input(&json, "glossary"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, UNLISTED_RULE);
        assert_eq!(
            found[0].message,
            "failed with 3 findings and listed none of them"
        );
        assert!(found[0].help.as_deref().unwrap().contains("glossary"));
    }

    #[test]
    fn custom_findings_objects_and_strings_each_become_a_finding() {
        let json = json!({"pass": false, "findings_count": 3, "findings": [
            {"message": "term `foo` is undefined", "line": 4, "column": 2, "rule": "undefined-term", "help": "define it"},
            "a plain sentence",
            {"line": 2},
        ]});
        let found = read_custom(&input(&json, "glossary"));
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].message, "term `foo` is undefined");
        assert_eq!(found[0].rule, "undefined-term");
        assert_eq!((found[0].line, found[0].column), (Some(4), Some(2)));
        assert_eq!(found[0].help.as_deref(), Some("define it"));
        assert_eq!(found[1].message, "a plain sentence");
        assert_eq!(found[1].rule, "glossary");
        assert_eq!(found[1].file, "docs/a.md");
        assert!(found[2].message.starts_with("finding without a message"));
        assert_eq!(found[2].line, Some(2));
    }

    #[test]
    fn the_reference_shapes_are_read_for_custom_workers() {
        let json = json!({"pass": false, "findings_count": 4,
            "violations": [
                {"file": "/p/src/a.js", "line": 1, "column": 5, "rule": "no-debugger", "severity": 2, "message": "debugger"},
                {"file": "src/a.js", "line": 3, "column": 1, "rule": "eqeqeq", "severity": 1, "message": "a warning"},
            ],
            "errors": [{"file": "src\\a.ts", "line": 4, "column": 2, "message": "TS2322: no"}],
            "template_missing": ["## C"],
            "unreferenced": ["b"],
        });
        let found = read_custom(&input(&json, "custom"));
        let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "debugger",
                "TS2322: no",
                "missing the heading `## C` its template requires",
                "does not reference the upstream artifact `b`"
            ]
        );
        assert_eq!(found[0].file, "src/a.js");
        assert_eq!(found[1].file, "src/a.ts");
    }

    #[test]
    fn positions_below_one_are_not_positions() {
        let mut finding = Finding::at_file("a.md", "r", "m");
        finding.line = Some(0);
        finding.column = Some(4);
        assert_eq!(finding.position(), (None, None));
        finding.line = Some(2);
        assert_eq!(finding.position(), (Some(2), Some(4)));
    }
}
