//! Canonical bytes of `stage-graph.json` (reference §3.5–§3.6, D2).
//!
//! Invariant: the output equals `JSON.stringify(nodes, null, 2) + "\n"` of the reference, with
//! node keys in the [gate] `FIELD_ORDER` and nested objects in construction order. Each node's
//! bytes are a tracked value, so the file is assembled from memoised pieces.
//!
//! The keys a node and a `sensors_applicable` entry carry follow the install's graph format
//! ([`graph_format`], D13): an older format leaves out the keys its reference version never
//! writes, in the same order otherwise.

use serde_json::{Map, Value, json};

use crate::db::SourceFile;
use crate::diagnostics::{Code, Diagnostic};
use crate::graph::format::GraphFormat;
use crate::graph::format_choice::graph_format;
use crate::graph::numbering::{dedup, stage_number, stage_numbering};
use crate::js_json::pretty_json;
use crate::parse::{parsed_stage, rule_set};
use crate::resolve::{sensor_registry, sensors_applicable};
use crate::syntax::manifest::{FireOn, Severity};
use camino::Utf8Path;

/// The [gate] `FIELD_ORDER`: the 29 top-level keys of a node, in order.
pub const FIELD_ORDER: [&str; 29] = [
    "slug",
    "number",
    "name",
    "plugin",
    "enabled",
    "phase",
    "execution",
    "condition",
    "lead_agent",
    "support_agents",
    "mode",
    "for_each",
    "workspace_requires",
    "produces",
    "optional_produces",
    "produces_kinds",
    "consumes",
    "requires_stage",
    "sensors",
    "scopes",
    "reviewer",
    "review_artifact",
    "reviewer_max_iterations",
    "review_class",
    "summary_confirmation",
    "inputs",
    "outputs",
    "rules_in_context",
    "sensors_applicable",
];

/// Manifests whose `fire_on: gate` or `default_severity: blocking` the install's graph format
/// cannot carry: without those keys in `sensors_applicable` the reference (and this engine)
/// read every binding as write-fired and advisory, so the manifest's wish is said out loud.
#[salsa::tracked(returns(ref))]
pub fn format_registry_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let (format, source) = *graph_format(db);
    if format.carries_dispatch_fields() {
        return Vec::new();
    }
    sensor_registry(db)
        .by_id
        .values()
        .filter_map(|binding| {
            let gate = binding.fire_on == FireOn::Gate;
            let blocking = binding.default_severity == Severity::Blocking;
            let declared = match (gate, blocking) {
                (true, true) => "fire_on: gate and default_severity: blocking",
                (true, false) => "fire_on: gate",
                (false, true) => "default_severity: blocking",
                (false, false) => return None,
            };
            Some(
                Diagnostic::warning(
                    Code::NotInGraphFormat,
                    format!(
                        "sensor \"{}\" declares {declared}, but this install's graph format ({format}, {}) carries neither: it fires on writes and is advisory",
                        binding.id,
                        source.describe()
                    ),
                )
                .in_file(Utf8Path::new(&binding.path))
                .with_help(
                    "write the newest format with `aidlc compile --graph-format gate`, or drop the declaration",
                ),
            )
        })
        .collect()
}

/// The node as a JSON value with keys in `FIELD_ORDER`; `None` when the stage did not parse.
pub fn stage_node_value(db: &dyn salsa::Database, file: SourceFile) -> Option<Value> {
    let stage = parsed_stage(db, file).definition.as_ref()?;
    let (format, _) = *graph_format(db);
    let (number, name) = stage_number(db, file).clone()?;
    let strings = |items: &[crate::syntax::stage::Located<String>]| {
        Value::from(
            items
                .iter()
                .map(|item| item.value.clone())
                .collect::<Vec<_>>(),
        )
    };
    let mut fields: Vec<(&str, Value)> = vec![
        ("slug", json!(stage.slug.value)),
        ("number", json!(number)),
        ("name", json!(name)),
    ];
    if let Some(plugin) = &stage.plugin {
        fields.push(("plugin", json!(plugin.value)));
    }
    fields.push(("phase", json!(stage.phase.value)));
    fields.push(("execution", json!(stage.execution)));
    if let Some(condition) = &stage.condition {
        fields.push(("condition", json!(condition)));
    }
    fields.push(("lead_agent", json!(stage.lead_agent.value)));
    fields.push(("support_agents", strings(&stage.support_agents)));
    fields.push(("mode", json!(stage.mode)));
    if let Some(for_each) = &stage.for_each {
        fields.push(("for_each", json!(for_each)));
    }
    if let Some(workspace_requires) = stage.workspace_requires {
        fields.push(("workspace_requires", json!(workspace_requires)));
    }
    fields.push(("produces", strings(&stage.produces)));
    if let Some(optional) = &stage.optional_produces {
        fields.push(("optional_produces", json!(optional)));
    }
    if let Some(kinds) = &stage.produces_kinds {
        let map: Map<String, Value> = kinds
            .iter()
            .map(|(artifact, kinds)| (artifact.clone(), json!(kinds)))
            .collect();
        fields.push(("produces_kinds", Value::Object(map)));
    }
    let consumes: Vec<Value> = stage
        .consumes
        .iter()
        .map(|consume| {
            let mut entry = Map::new();
            entry.insert("artifact".to_owned(), json!(consume.artifact.value));
            entry.insert("required".to_owned(), json!(consume.required));
            if let Some(condition) = &consume.conditional_on {
                entry.insert("conditional_on".to_owned(), json!(condition));
            }
            Value::Object(entry)
        })
        .collect();
    fields.push(("consumes", Value::from(consumes)));
    fields.push((
        "requires_stage",
        json!(dedup(
            stage.requires_stage.iter().map(|dep| dep.value.clone())
        )),
    ));
    fields.push(("sensors", strings(&stage.sensors)));
    fields.push(("scopes", json!(stage.scopes)));
    if let Some(reviewer) = &stage.reviewer {
        fields.push(("reviewer", json!(reviewer.value)));
        if let Some(artifact) = stage
            .review_artifact
            .as_ref()
            .filter(|_| format.carries_review_artifact())
        {
            fields.push(("review_artifact", json!(artifact.value)));
        }
        fields.push((
            "reviewer_max_iterations",
            json!(stage.reviewer_max_iterations.unwrap_or(2)),
        ));
        if format.carries_review_class() {
            let class = stage
                .review_class
                .as_ref()
                .map_or("adversarial", |class| class.value.as_str());
            fields.push(("review_class", json!(class)));
        }
    }
    if let Some(confirmation) = stage
        .summary_confirmation
        .as_ref()
        .filter(|_| format.carries_review_class())
    {
        fields.push(("summary_confirmation", json!(confirmation.value)));
    }
    fields.push(("inputs", json!(stage.inputs.as_deref().unwrap_or(""))));
    fields.push(("outputs", json!(stage.outputs.as_deref().unwrap_or(""))));
    fields.push(("rules_in_context", rules_value(db, &stage.phase.value)));
    fields.push(("sensors_applicable", sensors_value(db, file, format)));
    let mut node = Map::new();
    for (key, value) in fields {
        debug_assert!(FIELD_ORDER.contains(&key), "{key} is not in FIELD_ORDER");
        node.insert(key.to_owned(), value);
    }
    Some(Value::Object(node))
}

fn rules_value(db: &dyn salsa::Database, phase: &str) -> Value {
    let rules = rule_set(db);
    let entries: Vec<Value> = rules
        .entries
        .iter()
        .filter(|rule| {
            rule.phase
                .as_deref()
                .is_none_or(|rule_phase| rule_phase == phase)
        })
        .map(|rule| {
            let mut entry = Map::new();
            entry.insert("path".to_owned(), json!(rule.display_path));
            entry.insert("scope".to_owned(), json!(rule.scope));
            Value::Object(entry)
        })
        .collect();
    Value::from(entries)
}

/// `{id, path, fire_on, default_severity, category?, matches?}`, or `{id, path, matches?}` in
/// the formats before the gate.
fn sensors_value(db: &dyn salsa::Database, file: SourceFile, format: GraphFormat) -> Value {
    let entries: Vec<Value> = sensors_applicable(db, file)
        .entries
        .iter()
        .map(|binding| {
            let mut entry = Map::new();
            entry.insert("id".to_owned(), json!(binding.id));
            entry.insert("path".to_owned(), json!(binding.path));
            if format.carries_dispatch_fields() {
                entry.insert("fire_on".to_owned(), json!(binding.fire_on.as_str()));
                entry.insert(
                    "default_severity".to_owned(),
                    json!(binding.default_severity.as_str()),
                );
                if let Some(category) = &binding.category {
                    entry.insert("category".to_owned(), json!(category));
                }
            }
            if let Some(matches) = &binding.matches {
                entry.insert("matches".to_owned(), json!(matches));
            }
            Value::Object(entry)
        })
        .collect();
    Value::from(entries)
}

/// The node's bytes as they appear inside the graph array: pretty JSON indented one level,
/// without the separating comma.
#[salsa::tracked(returns(ref))]
pub fn stage_node_json(db: &dyn salsa::Database, file: SourceFile) -> Option<String> {
    let value = stage_node_value(db, file)?;
    Some(indent_one_level(&pretty_json(&value)))
}

fn indent_one_level(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str("  ");
        out.push_str(line);
    }
    out
}

/// The whole `stage-graph.json`, nodes in numeric order, with the trailing newline. Shared
/// (`Arc`), so handing out the megabytes of a large project's graph copies nothing.
#[salsa::tracked]
pub fn stage_graph_json(db: &dyn salsa::Database) -> std::sync::Arc<str> {
    let nodes: Vec<&String> = stage_numbering(db)
        .order
        .iter()
        .filter_map(|&file| stage_node_json(db, file).as_ref())
        .collect();
    if nodes.is_empty() {
        return std::sync::Arc::from("[]\n");
    }
    let mut out = String::with_capacity(nodes.iter().map(|node| node.len() + 2).sum::<usize>() + 4);
    out.push_str("[\n");
    for (index, node) in nodes.iter().enumerate() {
        if index > 0 {
            out.push_str(",\n");
        }
        out.push_str(node);
    }
    out.push_str("\n]\n");
    std::sync::Arc::from(out)
}
