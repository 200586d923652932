//! What the check works on ([`FiredTable`]) and what it found ([`Findings`]), and the verdict
//! JSON: the six lists de-duplicated and sorted as JavaScript sorts, `findings_count`, and the
//! joined `reason`.

use std::cmp::Ordering;

use camino::Utf8Path;
use serde_json::{Map, Value};

use super::table::Table;

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
    pub(super) fn into_verdict(self) -> Value {
        let lists = [
            ("gaps", unique_sorted(self.gaps)),
            ("orphans", unique_sorted(self.orphans)),
            ("missing_from_table", unique_sorted(self.missing_from_table)),
            (
                "missing_from_upstream_ids",
                unique_sorted(self.missing_from_upstream_ids),
            ),
            ("invalid_entries", unique_sorted(self.invalid_entries)),
            ("invalid_targets", unique_sorted(self.invalid_targets)),
        ];
        let findings_count =
            lists.iter().map(|(_, list)| list.len()).sum::<usize>() + self.reasons.len();
        let mut object = Map::new();
        object.insert("pass".to_owned(), Value::Bool(findings_count == 0));
        for (key, list) in lists {
            object.insert(key.to_owned(), Value::from(list));
        }
        object.insert("findings_count".to_owned(), Value::from(findings_count));
        if !self.reasons.is_empty() {
            let reason = unique_sorted(self.reasons).join("; ");
            object.insert("reason".to_owned(), Value::from(reason));
        }
        Value::Object(object)
    }
}

/// The verdict of a table that cannot be checked at all: one finding, the reason, no lists.
pub(super) fn single_finding_verdict(reason: &str) -> Value {
    let mut object = Map::new();
    object.insert("pass".to_owned(), Value::Bool(false));
    for key in [
        "gaps",
        "orphans",
        "missing_from_table",
        "missing_from_upstream_ids",
        "invalid_entries",
        "invalid_targets",
    ] {
        object.insert(key.to_owned(), Value::Array(Vec::new()));
    }
    object.insert("findings_count".to_owned(), Value::from(1));
    object.insert("reason".to_owned(), Value::from(reason));
    Value::Object(object)
}

/// Distinct values in JavaScript's default sort order (UTF-16 code units).
pub(super) fn unique_sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort_by(|a, b| utf16_order(a, b));
    values.dedup();
    values
}

fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}
