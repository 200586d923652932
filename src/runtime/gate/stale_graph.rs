//! Whether the compiled `stage-graph.json` a gate reads is the graph its sources compile to now.
//!
//! The gate takes each binding's selection (`fire_on`, severity, `matches`) from the compiled
//! graph (D6), so a manifest set to `default_severity: blocking`, or a stage given a blocking
//! sensor, changes nothing until the next compile, and a compile that failed leaves the older
//! graph behind. [`check_graph_against_sources`] proves the graph current, or says what the
//! sources would change.
//!
//! Invariants:
//! - the cheap proof comes first: the last compile's record (`up_to_date::check`, read-only,
//!   one `stat` per file) proves that nothing that compile read or wrote has changed;
//! - without that proof (no record, as in a fresh clone where the record is ignored by Git or
//!   in an install the reference compiled; a record of another build; any changed file) the
//!   sources are compiled in memory and compared with the graph: the same bytes, or the same
//!   JSON value laid out otherwise (a graph another writer formatted), are current; anything
//!   else, and sources that do not compile, are stale, never "probably fine";
//! - nothing is written: no record, no lock, no graph;
//! - each stage's drift says whether a blocking binding differs (blocking in the graph or in the
//!   sources, bound in one and not the other, or changed): `gate check --allow-stale` takes a
//!   stale graph as it is only when none does and the sources compile
//!   ([`StaleGraph::allow_stale_refusal`]); `engine gate start|revise` never take one.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use camino::Utf8PathBuf;
use serde_json::Value;

use crate::compile;
use crate::compile::db::CompilerDatabase;
use crate::compile::discover::Layout;
use crate::compile::up_to_date::{self, Stale};
use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::english::{counted, plural};

/// Why the graph on disk is not the graph its sources compile to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleGraph {
    /// The graph as the user sees it (project-relative).
    pub graph: Utf8PathBuf,
    /// Why the record proved nothing (the first difference it met).
    pub since: Stale,
    pub kind: StaleKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaleKind {
    /// The sources do not compile (the last compile failed, or the next one would): their
    /// errors, with the texts of the files they point into.
    CompileErrors {
        errors: Vec<Diagnostic>,
        sources: BTreeMap<Utf8PathBuf, String>,
    },
    /// The sources compile to another graph: what differs, stage by stage.
    Drifted { changes: Vec<StageDrift> },
}

/// One stage whose node the sources would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageDrift {
    pub slug: String,
    pub change: NodeChange,
    /// Whether a binding that is blocking in the graph or in the sources differs: a stage added
    /// or removed with a blocking binding, a blocking binding bound or unbound, or any field of
    /// a binding blocking on either side changed.
    pub blocking_binding_differs: bool,
}

/// Why `gate check --allow-stale` does not take a stale graph as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowStaleRefusal {
    /// The sources do not compile: what they mean is unknown.
    SourcesDoNotCompile,
    /// A blocking binding differs in these stages.
    BlockingBindingDiffers { stages: Vec<String> },
    /// The graph differs in bytes, not stage by stage: what differs cannot be said.
    DifferenceUnknown,
}

impl AllowStaleRefusal {
    /// The line said under the stale graph's message.
    pub fn sentence(&self) -> String {
        let cause = match self {
            Self::SourcesDoNotCompile => "its sources do not compile".to_owned(),
            Self::BlockingBindingDiffers { stages } => {
                format!("a blocking binding differs ({})", stage_list(stages))
            }
            Self::DifferenceUnknown => "what differs cannot be said binding by binding".to_owned(),
        };
        format!(
            "--allow-stale does not apply: {cause}; it takes a stale graph as it is only when the sources compile and no blocking binding differs"
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeChange {
    Added,
    Removed,
    /// The node's keys whose values differ; for `sensors_applicable`, one line per binding.
    Changed {
        keys: Vec<String>,
        bindings: Vec<String>,
    },
}

impl StaleGraph {
    /// The error line: what is stale, what drifted, and since when.
    pub fn message(&self) -> String {
        let mut message = format!("the stage graph {} is stale: ", self.graph);
        match &self.kind {
            StaleKind::CompileErrors { errors, .. } => {
                let _ = write!(
                    message,
                    "its sources do not compile ({}), so it is what an earlier compile wrote",
                    counted(errors.len(), "error")
                );
            }
            StaleKind::Drifted { changes } if changes.is_empty() => {
                message.push_str("its sources compile to other bytes (the same stages)");
            }
            StaleKind::Drifted { changes } => {
                let _ = write!(
                    message,
                    "its sources compile to another graph ({} stage{} differ{})",
                    changes.len(),
                    plural(changes.len()),
                    if changes.len() == 1 { "s" } else { "" }
                );
                for (change, stages) in grouped_changes(changes) {
                    let _ = write!(message, "\n  {change} ({})", stage_list(&stages));
                }
            }
        }
        let _ = write!(message, "\n  {}", since_line(&self.since));
        message
    }

    /// `gate check`'s help line: how to get a current graph, and `--allow-stale` where it
    /// applies.
    pub fn check_help(&self) -> String {
        let fix = self.fix_then("check again");
        if self.allow_stale_refusal().is_some() {
            fix
        } else {
            format!(
                "{fix}; `--allow-stale` checks against the graph as it is (no blocking binding differs)"
            )
        }
    }

    /// `engine gate start|revise`'s help line: a gate never opens on a stale graph.
    pub fn gate_step_help(&self) -> String {
        self.fix_then("run the gate step again (nothing was written; a stale graph exits 2)")
    }

    /// How to get a current graph, then what to run `again`.
    fn fix_then(&self, again: &str) -> String {
        match self.kind {
            StaleKind::CompileErrors { .. } => {
                format!("fix the errors above and run `aidlc compile`, then {again}")
            }
            StaleKind::Drifted { .. } => {
                format!("run `aidlc compile` to rebuild it from its sources, then {again}")
            }
        }
    }

    /// Why `gate check --allow-stale` may not take this graph as it is, or `None` when only
    /// advisory bindings or other fields differ.
    pub fn allow_stale_refusal(&self) -> Option<AllowStaleRefusal> {
        match &self.kind {
            StaleKind::CompileErrors { .. } => Some(AllowStaleRefusal::SourcesDoNotCompile),
            StaleKind::Drifted { changes } if changes.is_empty() => {
                Some(AllowStaleRefusal::DifferenceUnknown)
            }
            StaleKind::Drifted { changes } => {
                let stages: Vec<String> = changes
                    .iter()
                    .filter(|drift| drift.blocking_binding_differs)
                    .map(|drift| drift.slug.clone())
                    .collect();
                (!stages.is_empty()).then_some(AllowStaleRefusal::BlockingBindingDiffers { stages })
            }
        }
    }
}

/// Why the record of the last compile proved nothing, as the last line of the message.
fn since_line(since: &Stale) -> String {
    match since {
        Stale::NoRecord => {
            "no aidlc compile of these sources is recorded (a fresh clone, or an install another compiler wrote), so they were compiled in memory to compare".to_owned()
        }
        Stale::Unreadable(_) | Stale::OtherTool | Stale::OtherLayout => format!(
            "{since}, so the sources were compiled in memory to compare"
        ),
        Stale::FilesAddedOrRemoved | Stale::FileChanged(_) | Stale::OutputChanged(_) => {
            format!("since the last recorded compile: {since}")
        }
    }
}

impl StageDrift {
    /// What differs in this stage's node, one line per change.
    fn change_lines(&self) -> Vec<String> {
        match &self.change {
            NodeChange::Added => vec!["a stage the graph does not have".to_owned()],
            NodeChange::Removed => vec!["a stage no stage file defines any more".to_owned()],
            NodeChange::Changed { keys, bindings } => {
                let mut lines: Vec<String> = keys
                    .iter()
                    .filter(|key| *key != "sensors_applicable" || bindings.is_empty())
                    .map(|key| format!("{key} changed"))
                    .collect();
                lines.extend(bindings.iter().cloned());
                lines
            }
        }
    }
}

/// Each change line with the stages it applies to, in the order the lines first appear: a
/// manifest edit changes the same binding in every stage that imports it, said once.
fn grouped_changes(changes: &[StageDrift]) -> Vec<(String, Vec<&str>)> {
    let mut grouped: Vec<(String, Vec<&str>)> = Vec::new();
    for drift in changes {
        for line in drift.change_lines() {
            match grouped.iter_mut().find(|(known, _)| *known == line) {
                Some((_, stages)) => stages.push(&drift.slug),
                None => grouped.push((line, vec![&drift.slug])),
            }
        }
    }
    grouped
}

/// `stage a`, `3 stages: a, b, c`, or the first five of more and how many others.
fn stage_list<S: std::borrow::Borrow<str>>(stages: &[S]) -> String {
    const SHOWN: usize = 5;
    match stages {
        [one] => format!("stage {}", one.borrow()),
        _ if stages.len() <= SHOWN => format!("{} stages: {}", stages.len(), stages.join(", ")),
        _ => format!(
            "{} stages: {} and {} more",
            stages.len(),
            stages[..SHOWN].join(", "),
            stages.len() - SHOWN
        ),
    }
}

/// Prove the graph at `layout` current (by the last compile's record, else by compiling the
/// sources in memory), or say why it is stale. A graph that cannot be read
/// counts as stale (drifted, every stage added).
pub fn check_graph_against_sources(layout: &Layout) -> Result<(), StaleGraph> {
    let Err(since) = up_to_date::check(layout, up_to_date::CheckMode::ReadOnly) else {
        return Ok(());
    };
    let mut db = CompilerDatabase::default();
    let (_inputs, outcome) = compile::load_and_compile_once(&mut db, layout);
    let graph = layout.display(&layout.stage_graph_path);
    if outcome.n_errors() > 0 {
        let errors: Vec<Diagnostic> = outcome
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .cloned()
            .collect();
        let sources = compile::source_texts(&db, &errors);
        return Err(StaleGraph {
            graph,
            since,
            kind: StaleKind::CompileErrors { errors, sources },
        });
    }
    let on_disk = crate::leaves::fs_util::read_bounded_text(
        &layout.stage_graph_path,
        crate::compile::discover::MAX_GENERATED_BYTES,
    )
    .unwrap_or_default();
    if on_disk == *outcome.stage_graph || same_json(&on_disk, &outcome.stage_graph) {
        return Ok(());
    }
    Err(StaleGraph {
        graph,
        since,
        kind: StaleKind::Drifted {
            changes: stage_drift(&on_disk, &outcome.stage_graph),
        },
    })
}

/// Whether two graph texts hold the same JSON value (object keys in any order): a graph another
/// writer laid out differently still selects the same sensors.
fn same_json(left: &str, right: &str) -> bool {
    match (
        serde_json::from_str::<Value>(left),
        serde_json::from_str::<Value>(right),
    ) {
        (Ok(left), Ok(right)) => left == right,
        _ => false,
    }
}

/// The objects of a JSON array by their string `key` (a graph's nodes by `slug`, a
/// `sensors_applicable` list's entries by `id`), in order; objects without it are left out, and
/// anything but an array gives nothing.
fn objects_by(list: Option<&Value>, key: &str) -> Vec<(String, serde_json::Map<String, Value>)> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let object = entry.as_object()?;
            Some((object.get(key)?.as_str()?.to_owned(), object.clone()))
        })
        .collect()
}

/// What the sources change, stage by stage: added and changed stages in the new graph's order,
/// then removed ones in the old graph's.
fn stage_drift(old: &str, new: &str) -> Vec<StageDrift> {
    let nodes_by_slug =
        |text: &str| objects_by(serde_json::from_str::<Value>(text).ok().as_ref(), "slug");
    let old_nodes = nodes_by_slug(old);
    let new_nodes = nodes_by_slug(new);
    let old_by_slug: BTreeMap<&str, &serde_json::Map<String, Value>> = old_nodes
        .iter()
        .map(|(slug, node)| (slug.as_str(), node))
        .collect();
    let mut drift = Vec::new();
    for (slug, node) in &new_nodes {
        let (change, blocking_binding_differs) = match old_by_slug.get(slug.as_str()) {
            None => (NodeChange::Added, has_blocking_binding(node)),
            Some(old_node) => {
                let keys = changed_keys(old_node, node);
                if keys.is_empty() {
                    continue;
                }
                let bindings = if keys.iter().any(|key| key == "sensors_applicable") {
                    binding_changes(
                        old_node.get("sensors_applicable"),
                        node.get("sensors_applicable"),
                    )
                } else {
                    Vec::new()
                };
                let blocking = bindings.iter().any(|change| change.blocking);
                let lines = bindings.into_iter().map(|change| change.line).collect();
                (
                    NodeChange::Changed {
                        keys,
                        bindings: lines,
                    },
                    blocking,
                )
            }
        };
        drift.push(StageDrift {
            slug: slug.clone(),
            change,
            blocking_binding_differs,
        });
    }
    for (slug, node) in &old_nodes {
        if !new_nodes.iter().any(|(new_slug, _)| new_slug == slug) {
            drift.push(StageDrift {
                slug: slug.clone(),
                change: NodeChange::Removed,
                blocking_binding_differs: has_blocking_binding(node),
            });
        }
    }
    drift
}

/// Whether a binding entry is blocking (the graph carries `default_severity` for blocking
/// bindings; an entry without it is advisory).
fn is_blocking_entry(entry: &serde_json::Map<String, Value>) -> bool {
    entry.get("default_severity").and_then(Value::as_str) == Some("blocking")
}

/// Whether a node has a blocking binding in its `sensors_applicable`.
fn has_blocking_binding(node: &serde_json::Map<String, Value>) -> bool {
    objects_by(node.get("sensors_applicable"), "id")
        .iter()
        .any(|(_, entry)| is_blocking_entry(entry))
}

/// One binding that differs: its line, and whether it is blocking on either side.
struct BindingChange {
    line: String,
    blocking: bool,
}

/// The keys of either node whose values differ, in the new node's order, then keys only the
/// old node has.
fn changed_keys(
    old: &serde_json::Map<String, Value>,
    new: &serde_json::Map<String, Value>,
) -> Vec<String> {
    let mut keys: Vec<String> = new
        .iter()
        .filter(|(key, value)| old.get(*key) != Some(*value))
        .map(|(key, _)| key.clone())
        .collect();
    keys.extend(old.keys().filter(|key| !new.contains_key(*key)).cloned());
    keys
}

/// One change per sensor binding that differs: `blocking-check: default_severity advisory →
/// blocking`, `new-check: bound` or `old-check: no longer bound`.
fn binding_changes(old: Option<&Value>, new: Option<&Value>) -> Vec<BindingChange> {
    let old_entries = objects_by(old, "id");
    let new_entries = objects_by(new, "id");
    let mut lines = Vec::new();
    for (id, entry) in &new_entries {
        match old_entries.iter().find(|(old_id, _)| old_id == id) {
            None => lines.push(BindingChange {
                line: format!("sensor {id}: bound"),
                blocking: is_blocking_entry(entry),
            }),
            Some((_, old_entry)) => {
                let fields: Vec<String> = changed_keys(old_entry, entry)
                    .into_iter()
                    .map(|key| {
                        format!(
                            "{key} {} → {}",
                            shown_value(old_entry.get(&key)),
                            shown_value(entry.get(&key))
                        )
                    })
                    .collect();
                if !fields.is_empty() {
                    lines.push(BindingChange {
                        line: format!("sensor {id}: {}", fields.join(", ")),
                        blocking: is_blocking_entry(old_entry) || is_blocking_entry(entry),
                    });
                }
            }
        }
    }
    for (id, entry) in &old_entries {
        if !new_entries.iter().any(|(new_id, _)| new_id == id) {
            lines.push(BindingChange {
                line: format!("sensor {id}: no longer bound"),
                blocking: is_blocking_entry(entry),
            });
        }
    }
    lines
}

fn shown_value(value: Option<&Value>) -> String {
    match value {
        None => "(none)".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_names_each_changed_binding_field_and_each_added_or_removed_stage() {
        let old = r#"[
  {"slug": "a", "number": 1, "sensors_applicable": [{"id": "x", "fire_on": "gate", "default_severity": "advisory"}, {"id": "gone", "fire_on": "write", "default_severity": "advisory"}]},
  {"slug": "b", "number": 2, "sensors_applicable": []},
  {"slug": "old", "number": 3, "sensors_applicable": []}
]"#;
        let new = r#"[
  {"slug": "a", "number": 1, "sensors_applicable": [{"id": "x", "fire_on": "gate", "default_severity": "blocking"}, {"id": "new", "fire_on": "gate", "default_severity": "blocking"}]},
  {"slug": "b", "number": 2, "sensors_applicable": []},
  {"slug": "c", "number": 4, "sensors_applicable": []}
]"#;
        let drift = stage_drift(old, new);
        let grouped: Vec<String> = grouped_changes(&drift)
            .into_iter()
            .map(|(line, stages)| format!("{line} ({})", stage_list(&stages)))
            .collect();
        assert_eq!(
            grouped,
            [
                "sensor x: default_severity advisory → blocking (stage a)",
                "sensor new: bound (stage a)",
                "sensor gone: no longer bound (stage a)",
                "a stage the graph does not have (stage c)",
                "a stage no stage file defines any more (stage old)",
            ]
        );
        let blocking: Vec<(&str, bool)> = drift
            .iter()
            .map(|stage| (stage.slug.as_str(), stage.blocking_binding_differs))
            .collect();
        assert_eq!(
            blocking,
            [("a", true), ("c", false), ("old", false)],
            "a binding blocking on either side differs in stage a only"
        );
        let many: Vec<&str> = vec!["s1", "s2", "s3", "s4", "s5", "s6", "s7"];
        assert_eq!(stage_list(&many), "7 stages: s1, s2, s3, s4, s5 and 2 more");
        assert_eq!(stage_list(&many[..2]), "2 stages: s1, s2");
        assert!(stage_drift(new, new).is_empty());
        let unreadable = stage_drift("not json", new);
        assert_eq!(
            unreadable.len(),
            3,
            "every stage is new to a graph that cannot be read"
        );
    }

    fn drifted(old: &str, new: &str) -> StaleGraph {
        StaleGraph {
            graph: Utf8PathBuf::from("g.json"),
            since: Stale::NoRecord,
            kind: StaleKind::Drifted {
                changes: stage_drift(old, new),
            },
        }
    }

    #[test]
    fn allow_stale_takes_only_a_difference_among_advisory_bindings_or_other_fields() {
        let graph = |severity: &str, matches: &str, number: u32| {
            format!(
                r#"[{{"slug": "a", "number": {number}, "sensors_applicable": [{{"id": "b", "fire_on": "gate", "default_severity": "blocking"}}, {{"id": "x", "fire_on": "gate", "default_severity": "{severity}", "matches": "{matches}"}}]}}]"#
            )
        };
        let advisory = graph("advisory", "**/*.md", 1);
        assert_eq!(
            drifted(&advisory, &graph("advisory", "**/*.txt", 2)).allow_stale_refusal(),
            None,
            "an advisory binding's glob and another field"
        );
        for (old, new) in [
            (advisory.clone(), graph("blocking", "**/*.md", 1)),
            (graph("blocking", "**/*.md", 1), advisory.clone()),
            (
                graph("blocking", "**/*.md", 1),
                graph("blocking", "**/*.txt", 1),
            ),
        ] {
            assert_eq!(
                drifted(&old, &new).allow_stale_refusal(),
                Some(AllowStaleRefusal::BlockingBindingDiffers {
                    stages: vec!["a".to_owned()]
                }),
                "{old} → {new}"
            );
        }
        let unbound = advisory.replace(
            r#"{"id": "b", "fire_on": "gate", "default_severity": "blocking"}, "#,
            "",
        );
        assert!(drifted(&unbound, &advisory).allow_stale_refusal().is_some());
        assert!(drifted(&advisory, &unbound).allow_stale_refusal().is_some());
        assert!(drifted("[]", &advisory).allow_stale_refusal().is_some());
        let compile_errors = StaleGraph {
            kind: StaleKind::CompileErrors {
                errors: Vec::new(),
                sources: BTreeMap::new(),
            },
            ..drifted(&advisory, &advisory)
        };
        assert_eq!(
            compile_errors.allow_stale_refusal(),
            Some(AllowStaleRefusal::SourcesDoNotCompile)
        );
    }
}
