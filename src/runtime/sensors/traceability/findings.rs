//! What the check works on ([`FiredTable`]) and what it found ([`Findings`]), and the verdict
//! JSON: the six lists de-duplicated and sorted as JavaScript sorts, `findings_count`, and the
//! joined `reason`; then ours, on a failure: `diagnostics`, one located finding per entry.

use camino::Utf8Path;
use serde_json::{Value, json};

use super::table::Table;
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

/// The verdict's lists, in the reference's order (the order of [`Findings`]' fields).
const LIST_KEYS: [&str; 6] = [
    "gaps",
    "orphans",
    "missing_from_table",
    "missing_from_upstream_ids",
    "invalid_entries",
    "invalid_targets",
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
    /// The verdict, keys in the reference's order, then `diagnostics` (each finding located in
    /// `file`, the table as fired, whose text `body` gives the lines of its rows) on a failure.
    pub(super) fn into_verdict(self, file: &Utf8Path, body: &str) -> Value {
        let located = self.located(file, body);
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
        let reason = (!self.reasons.is_empty()).then(|| unique_sorted(self.reasons).join("; "));
        let lists = LIST_KEYS
            .into_iter()
            .zip(lists.map(|list| Some(json!(list))));
        let fields = std::iter::once(("pass", Some(json!(findings_count == 0))))
            .chain(lists)
            .chain([("findings_count", Some(json!(findings_count)))])
            .chain([("reason", reason.map(Value::from))]);
        verdict_json(fields, &located)
    }

    /// One finding per entry of each list (and per distinct reason), at the line of the row or
    /// id it names where the table has one.
    fn located(&self, file: &Utf8Path, body: &str) -> Vec<Finding> {
        let file = file.as_str();
        let row = |id: &str| line_of_row(body, id).unwrap_or(0);
        let mut located = Vec::new();
        for id in unique_sorted(self.gaps.clone()) {
            located.push(
                Finding::at_file(file, "gap", format!("`{id}` is marked GAP: nothing downstream covers it"))
                    .at_line(row(&id))
                    .with_help("cover it and mark it OK with its target, or Deferred or N/A with a target saying why"),
            );
        }
        for id in unique_sorted(self.orphans.clone()) {
            located.push(
                Finding::at_file(
                    file,
                    "orphan",
                    format!("`{id}` is an ORPHAN: it traces to no upstream element"),
                )
                .at_line(row(&id))
                .with_help("trace it to an upstream id, or remove what it stands for"),
            );
        }
        for id in unique_sorted(self.missing_from_table.clone()) {
            located.push(
                Finding::at_file(
                    file,
                    "missing-from-table",
                    format!("upstream id `{id}` has no coverage row"),
                )
                .at_line(line_of_string(body, &id).unwrap_or(0))
                .with_help(format!(
                    "add a coverage row `{{\"id\": \"{id}\", \"status\": …}}`"
                )),
            );
        }
        for id in unique_sorted(self.missing_from_upstream_ids.clone()) {
            located.push(
                Finding::at_file(
                    file,
                    "missing-from-upstream-ids",
                    format!("`{id}` is in the upstream artifacts but not in upstream_ids"),
                )
                .with_help(format!(
                    "add `{id}` to upstream_ids and give it a coverage row"
                )),
            );
        }
        for entry in unique_sorted(self.invalid_entries.clone()) {
            let id = entry_id(&entry);
            located.push(
                Finding::at_file(file, "invalid-entry", entry.clone())
                    .at_line(id.and_then(|id| line_of_row(body, id)).unwrap_or(0))
                    .with_help("give the row a known status (OK, GAP, ORPHAN, Deferred, N/A), a target where the status needs one, and an id from upstream_ids"),
            );
        }
        for target in unique_sorted(self.invalid_targets.clone()) {
            let id = target.split_once(": ").map(|(id, _)| id);
            located.push(
                Finding::at_file(file, "invalid-target", target.clone())
                    .at_line(id.and_then(|id| line_of_row(body, id)).unwrap_or(0))
                    .with_help("point the row's target at something that exists downstream"),
            );
        }
        for reason in unique_sorted(self.reasons.clone()) {
            located.push(
                Finding::at_file(file, "unresolved-upstream", reason)
                    .with_help("write the upstream artifacts the stage traces from, or check the stage and unit the table belongs to"),
            );
        }
        located
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
        before.ends_with("\"id\"").then(|| line_at(body, position))
    })
}

/// The 1-based line of the first occurrence of `text` as a JSON string.
fn line_of_string(body: &str, text: &str) -> Option<usize> {
    let quoted = serde_json::to_string(text).ok()?;
    body.find(&quoted).map(|position| line_at(body, position))
}

fn line_at(body: &str, position: usize) -> usize {
    body[..position].matches('\n').count() + 1
}

/// The verdict of a table that cannot be checked at all: one finding, the reason, no lists.
pub(super) fn single_finding_verdict(reason: &str, file: &Utf8Path) -> Value {
    let fields = std::iter::once(("pass", Some(json!(false))))
        .chain(LIST_KEYS.map(|key| (key, Some(json!([])))))
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
