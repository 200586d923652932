//! What the check works on ([`FiredTable`]) and what it found ([`Findings`]), and the verdict
//! JSON: the six lists de-duplicated and sorted as JavaScript sorts, `findings_count` (their
//! lengths plus every reason, repeats too, as the reference counts), and `reason` (the distinct
//! reasons, sorted, joined with `"; "`, only when there is one); then ours, on a failure:
//! `diagnostics`, one located finding per entry.

use camino::Utf8Path;
use serde_json::{Value, json};

use super::table::Table;
use crate::leaves::text_lines::line_column;
use crate::protocol::finding::Finding;
use crate::runtime::sensors::finding::verdict_json;

/// What the check works on: the table, the effective stage and where the table lives.
pub(super) struct FiredTable<'fire> {
    pub(super) table: &'fire Table,
    pub(super) stage: &'fire str,
    pub(super) project_dir: &'fire Utf8Path,
    /// The absolute, normal path the unit is derived from.
    pub(super) output_path: &'fire Utf8Path,
    /// The path as given, with `/` separators, for messages.
    pub(super) output_path_as_given: &'fire str,
}

/// How one of the verdict's lists is shown in the gate report: its key, and for each entry a
/// finding with this rule, message and help, at the line of the table `line` finds (the body,
/// the entry) when it finds one.
struct ListReport {
    key: &'static str,
    rule: &'static str,
    message: fn(&str) -> String,
    help: fn(&str) -> String,
    line: fn(&str, &str) -> Option<usize>,
}

/// The verdict's lists, in the reference's order (the order of [`Findings`]' fields).
const LISTS: [ListReport; 6] = [
    ListReport {
        key: "gaps",
        rule: "gap",
        message: |id| format!("`{id}` is marked GAP: nothing downstream covers it"),
        help: |_| {
            "cover it and mark it OK with its target, or Deferred or N/A with a target saying why"
                .to_owned()
        },
        line: line_of_row,
    },
    ListReport {
        key: "orphans",
        rule: "orphan",
        message: |id| format!("`{id}` is an ORPHAN: it traces to no upstream element"),
        help: |_| "trace it to an upstream id, or remove what it stands for".to_owned(),
        line: line_of_row,
    },
    ListReport {
        key: "missing_from_table",
        rule: "missing-from-table",
        message: |id| format!("upstream id `{id}` has no coverage row"),
        help: |id| format!("add a coverage row `{{\"id\": \"{id}\", \"status\": …}}`"),
        line: line_of_string,
    },
    ListReport {
        key: "missing_from_upstream_ids",
        rule: "missing-from-upstream-ids",
        message: |id| format!("`{id}` is in the upstream artifacts but not in upstream_ids"),
        help: |id| format!("add `{id}` to upstream_ids and give it a coverage row"),
        line: |_, _| None,
    },
    ListReport {
        key: "invalid_entries",
        rule: "invalid-entry",
        message: str::to_owned,
        help: |_| {
            "give the row a known status (OK, GAP, ORPHAN, Deferred, N/A), a target where the status needs one, and an id from upstream_ids".to_owned()
        },
        line: |body, entry| entry_id(entry).and_then(|id| line_of_row(body, id)),
    },
    ListReport {
        key: "invalid_targets",
        rule: "invalid-target",
        message: str::to_owned,
        help: |_| "point the row's target at something that exists downstream".to_owned(),
        line: |body, target| {
            let (id, _) = target.split_once(": ")?;
            line_of_row(body, id)
        },
    },
];

#[derive(Debug, Default)]
pub(super) struct Findings {
    pub(super) gaps: Vec<String>,
    pub(super) orphans: Vec<String>,
    pub(super) missing_from_table: Vec<String>,
    pub(super) missing_from_upstream_ids: Vec<String>,
    pub(super) invalid_entries: Vec<String>,
    pub(super) invalid_targets: Vec<String>,
    pub(super) reasons: Vec<String>,
}

impl Findings {
    /// The verdict, keys in the reference's order, then `diagnostics` on a failure: one finding
    /// per entry of each list (and per distinct reason) in `file`, the table as fired, at the
    /// line of the row or id it names where `body` has one.
    pub(super) fn into_verdict(self, file: &Utf8Path, body: &str) -> Value {
        let lists = [
            self.gaps,
            self.orphans,
            self.missing_from_table,
            self.missing_from_upstream_ids,
            self.invalid_entries,
            self.invalid_targets,
        ]
        .map(unique_sorted);
        let findings_count = lists.iter().map(Vec::len).sum::<usize>() + self.reasons.len();
        let reasons = unique_sorted(self.reasons);
        let file = file.as_str();
        let mut located: Vec<Finding> = LISTS
            .iter()
            .zip(&lists)
            .flat_map(|(list, entries)| {
                entries.iter().map(move |entry| {
                    Finding::at_file(file, list.rule, (list.message)(entry))
                        .at_line((list.line)(body, entry).unwrap_or(0))
                        .with_help((list.help)(entry))
                })
            })
            .collect();
        located.extend(reasons.iter().map(|reason| {
            Finding::at_file(file, "unresolved-upstream", reason.clone())
                .with_help("write the upstream artifacts the stage traces from, or check the stage and unit the table belongs to")
        }));
        let reason = (!reasons.is_empty()).then(|| reasons.join("; "));
        let lists = LISTS
            .iter()
            .map(|list| list.key)
            .zip(lists.map(|list| Some(json!(list))));
        let fields = std::iter::once(("pass", Some(json!(findings_count == 0))))
            .chain(lists)
            .chain([("findings_count", Some(json!(findings_count)))])
            .chain([("reason", reason.map(Value::from))]);
        verdict_json(fields, &located)
    }
}

/// The id an invalid entry names: `coverage:<id>: …` or `reverse:<id>: …`.
fn entry_id(entry: &str) -> Option<&str> {
    let (_, rest) = entry.split_once(':')?;
    rest.split_once(": ").map(|(id, _)| id)
}

/// The 1-based line of the row whose `"id"` is `id`.
fn line_of_row(body: &str, id: &str) -> Option<usize> {
    let quoted = serde_json::to_string(id).ok()?;
    body.match_indices(&quoted).find_map(|(position, _)| {
        let before = body[..position].trim_end();
        let before = before.strip_suffix(':')?.trim_end();
        before
            .ends_with("\"id\"")
            .then(|| line_column(body, position).0)
    })
}

/// The 1-based line of the first occurrence of `text` as a JSON string.
fn line_of_string(body: &str, text: &str) -> Option<usize> {
    let quoted = serde_json::to_string(text).ok()?;
    body.find(&quoted)
        .map(|position| line_column(body, position).0)
}

/// The verdict of a table that cannot be checked at all: one finding, the reason, no lists.
pub(super) fn single_finding_verdict(reason: &str, file: &Utf8Path) -> Value {
    let fields = std::iter::once(("pass", Some(json!(false))))
        .chain(LISTS.iter().map(|list| (list.key, Some(json!([])))))
        .chain([("findings_count", Some(json!(1)))])
        .chain([("reason", Some(json!(reason)))]);
    verdict_json(
        fields,
        &[Finding::at_file(file.as_str(), "invalid-table", reason).with_help(
            "write {\"upstream_ids\": [...], \"coverage\": [{\"id\", \"status\", \"target\"}]} with at least one coverage row",
        )],
    )
}

/// Distinct values in JavaScript's default sort order (UTF-16 code units).
pub(super) fn unique_sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    values.dedup();
    values
}
