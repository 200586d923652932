//! One node of `stage-graph.json` as the compile writes it ([`NodeBody`], the one writer of a
//! node), and the node and its sensor bindings as the runtime reads them back ([`GraphNode`],
//! [`SensorEntry`]).
//!
//! The writer goes through the node's keys in order (`graph_keys::NodeField::BODY`, the
//! reference's [gate] `FIELD_ORDER`) and writes each one the graph format carries
//! (`GraphFormat::carries_node_field`, D13); a binding the same way (`EntryField`). The compile
//! fills a [`NodeBody`] from a stage, borrowing every value, and `stage_graph::parse_graph` reads
//! a node back under the same keys. Adding a graph field is then two edits: the protocol's (its
//! key in its place in `graph_keys`, its type in [`NodeBody`] and how it is written, and the
//! format rule when an older format has no place for it) and the compile's (where its value
//! comes from, in `stage_graph::emit`).
//!
//! Invariant: the bytes [`NodeBody::write`] gives equal `js_json::pretty_json` of the same node
//! (`JSON.stringify(node, null, 2)`), written straight into the graph's buffer with
//! [`PrettyWriter`], no value tree built: strings, booleans and lists of them directly, a
//! number or a `produces_kinds` map (whose artifact names may be array indices, which
//! JavaScript lists first) through [`PrettyWriter::value`].

use serde_json::{Map, Value, json};
use strum::{EnumString, IntoStaticStr, VariantArray, VariantNames};

use crate::protocol::graph_format::GraphFormat;
use crate::protocol::graph_keys::{
    CONSUME_ARTIFACT, CONSUME_CONDITIONAL_ON, CONSUME_REQUIRED, EntryField, NodeField, RULE_PATH,
    RULE_SCOPE,
};
use crate::protocol::output_paths::StageOutputs;
use crate::protocol::pretty_writer::{PrettyWriter, push_json_string};
use crate::protocol::selection::{FireOn, Severity};

/// One sensor binding of a stage: what the compile copies from a manifest into the stage's
/// `sensors_applicable`, and what the dispatcher, the write hook and the gates read back (D6:
/// selection comes from the graph).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SensorEntry {
    pub id: String,
    /// The manifest's path, project-relative (`.claude/sensors/aidlc-linter.md`).
    pub path: String,
    /// In a graph of a format before the gate's, where the entry has no `fire_on`, read as
    /// `write`, as the reference reads it.
    pub fire_on: FireOn,
    /// Likewise read as `advisory` there.
    pub default_severity: Severity,
    pub category: Option<String>,
    pub matches: Option<String>,
}

impl SensorEntry {
    /// The entry's fields as `format` writes them, into the writer's open object.
    fn write(&self, format: GraphFormat, writer: &mut PrettyWriter<'_>) {
        for &field in EntryField::ALL {
            if !format.carries_entry_field(field) {
                continue;
            }
            let key = field.key();
            match field {
                EntryField::Id => writer.string_field(key, &self.id),
                EntryField::Path => writer.string_field(key, &self.path),
                EntryField::FireOn => writer.string_field(key, self.fire_on.as_str()),
                EntryField::DefaultSeverity => {
                    writer.string_field(key, self.default_severity.as_str());
                }
                EntryField::Category => optional_string(writer, key, self.category.as_deref()),
                EntryField::Matches => optional_string(writer, key, self.matches.as_deref()),
            }
        }
    }
}

/// One `consumes` item as the compile writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsumeEntry<'a> {
    pub artifact: &'a str,
    pub required: bool,
    pub conditional_on: Option<&'a str>,
}

/// One `rules_in_context` item: a rule file's display path and its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleEntry<'a> {
    pub path: &'a str,
    pub scope: &'a str,
}

/// Every field of a node after its head, as the compile writes it: each value borrowed from the
/// stage (or the rule set and the registry), `None` for a field the node leaves out. A field
/// the format has no place for is left out whatever its value
/// (`GraphFormat::carries_node_field`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeBody<'a> {
    pub plugin: Option<&'a str>,
    /// `Some(false)` on a stage the plugin selection disables; `None` (the key left out) on an
    /// enabled one, as the reference writes it (docs/decisions.md D14).
    pub enabled: Option<bool>,
    pub phase: &'a str,
    pub execution: &'a str,
    pub condition: Option<&'a str>,
    pub lead_agent: &'a str,
    pub support_agents: Vec<&'a str>,
    pub mode: &'a str,
    pub for_each: Option<&'a str>,
    pub workspace_requires: Option<bool>,
    pub produces: Vec<&'a str>,
    pub optional_produces: Option<&'a [String]>,
    /// Artifact → unit kinds, in authored order.
    pub produces_kinds: Option<&'a [(String, Vec<String>)]>,
    pub consumes: Vec<ConsumeEntry<'a>>,
    pub requires_stage: Vec<&'a str>,
    pub sensors: Vec<&'a str>,
    pub scopes: &'a [String],
    pub reviewer: Option<&'a str>,
    pub review_artifact: Option<&'a str>,
    pub reviewer_max_iterations: Option<u64>,
    pub review_class: Option<&'a str>,
    pub summary_confirmation: Option<&'a str>,
    pub inputs: &'a str,
    pub outputs: &'a str,
    pub rules_in_context: Vec<RuleEntry<'a>>,
    pub sensors_applicable: &'a [SensorEntry],
}

impl NodeBody<'_> {
    /// Append the body as `format` writes it: from the `,` that ends the head's `name` field to
    /// the node's closing brace, indented for a node of the graph's array (see
    /// [`write_node_head`]).
    pub fn write(&self, format: GraphFormat, out: &mut String) {
        let mut node = PrettyWriter::continuing_object(out, 1);
        for &field in NodeField::BODY {
            if format.carries_node_field(field) {
                self.write_field(field, format, &mut node);
            }
        }
        node.end_object();
    }

    fn write_field(&self, field: NodeField, format: GraphFormat, node: &mut PrettyWriter<'_>) {
        let key = field.key();
        match field {
            // The head's fields, written by `write_node_head`.
            NodeField::Slug | NodeField::Number | NodeField::Name => {}
            NodeField::Enabled => optional_bool(node, key, self.enabled),
            NodeField::Plugin => optional_string(node, key, self.plugin),
            NodeField::Phase => node.string_field(key, self.phase),
            NodeField::Execution => node.string_field(key, self.execution),
            NodeField::Condition => optional_string(node, key, self.condition),
            NodeField::LeadAgent => node.string_field(key, self.lead_agent),
            NodeField::SupportAgents => {
                node.string_list_field(key, self.support_agents.iter().copied());
            }
            NodeField::Mode => node.string_field(key, self.mode),
            NodeField::ForEach => optional_string(node, key, self.for_each),
            NodeField::WorkspaceRequires => optional_bool(node, key, self.workspace_requires),
            NodeField::Produces => node.string_list_field(key, self.produces.iter().copied()),
            NodeField::OptionalProduces => {
                if let Some(optional) = self.optional_produces {
                    node.string_list_field(key, optional.iter().map(String::as_str));
                }
            }
            NodeField::ProducesKinds => {
                if let Some(kinds) = self.produces_kinds {
                    // Artifact names may be array indices, which JavaScript lists first: the
                    // one field written through the general path.
                    let map: Map<String, Value> = kinds
                        .iter()
                        .map(|(artifact, kinds)| (artifact.clone(), json!(kinds)))
                        .collect();
                    node.key(key);
                    node.value(&Value::Object(map));
                }
            }
            NodeField::Consumes => object_list(node, key, &self.consumes, |item, consume| {
                item.string_field(CONSUME_ARTIFACT, consume.artifact);
                item.key(CONSUME_REQUIRED);
                item.bool(consume.required);
                optional_string(item, CONSUME_CONDITIONAL_ON, consume.conditional_on);
            }),
            NodeField::RequiresStage => {
                node.string_list_field(key, self.requires_stage.iter().copied());
            }
            NodeField::Sensors => node.string_list_field(key, self.sensors.iter().copied()),
            NodeField::Scopes => {
                node.string_list_field(key, self.scopes.iter().map(String::as_str));
            }
            NodeField::Reviewer => optional_string(node, key, self.reviewer),
            NodeField::ReviewArtifact => optional_string(node, key, self.review_artifact),
            NodeField::ReviewerMaxIterations => {
                if let Some(iterations) = self.reviewer_max_iterations {
                    node.key(key);
                    // A number prints as JavaScript prints it (an integer past 2^53 is rounded).
                    node.value(&json!(iterations));
                }
            }
            NodeField::ReviewClass => optional_string(node, key, self.review_class),
            NodeField::SummaryConfirmation => {
                optional_string(node, key, self.summary_confirmation);
            }
            NodeField::Inputs => node.string_field(key, self.inputs),
            NodeField::Outputs => node.string_field(key, self.outputs),
            NodeField::RulesInContext => {
                object_list(node, key, &self.rules_in_context, |item, rule| {
                    item.string_field(RULE_PATH, rule.path);
                    item.string_field(RULE_SCOPE, rule.scope);
                });
            }
            NodeField::SensorsApplicable => {
                object_list(node, key, self.sensors_applicable, |item, entry| {
                    entry.write(format, item);
                });
            }
        }
    }
}

/// `"key": [ {…}, {…} ]`, each object's fields written by `write_fields`.
fn object_list<T>(
    writer: &mut PrettyWriter<'_>,
    key: &str,
    items: &[T],
    write_fields: impl Fn(&mut PrettyWriter<'_>, &T),
) {
    writer.key(key);
    writer.begin_array();
    for item in items {
        writer.element();
        writer.begin_object();
        write_fields(writer, item);
        writer.end_object();
    }
    writer.end_array();
}

fn optional_string(writer: &mut PrettyWriter<'_>, key: &str, text: Option<&str>) {
    if let Some(text) = text {
        writer.string_field(key, text);
    }
}

fn optional_bool(writer: &mut PrettyWriter<'_>, key: &str, value: Option<bool>) {
    if let Some(value) = value {
        writer.key(key);
        writer.bool(value);
    }
}

/// `  {`, then the `slug`, `number` and `name` fields: the start of a node in the graph's
/// array, the bytes a [`PrettyWriter`] at depth 1 writes for them (joining a large graph writes
/// ten thousand of these, so the fixed parts are written whole). [`NodeBody::write`] continues
/// it.
pub fn write_node_head(slug: &str, number: &str, name: &str, out: &mut String) {
    const _: () = assert!(
        matches!(NodeField::ALL[0], NodeField::Slug)
            && matches!(NodeField::ALL[1], NodeField::Number)
            && matches!(NodeField::ALL[2], NodeField::Name),
        "the head is the first three fields"
    );
    out.push_str("  {\n    \"slug\": ");
    push_json_string(out, slug);
    out.push_str(",\n    \"number\": ");
    push_json_string(out, number);
    out.push_str(",\n    \"name\": ");
    push_json_string(out, name);
}

// --- The node as the runtime reads it ---------------------------------------------------------

/// One node of the compiled graph, as far as dispatch and the gates need it; read strictly by
/// `stage_graph::parse_graph`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphNode {
    pub slug: String,
    /// The plugin that owns the stage, as the node names it (`None`: the core framework's).
    pub plugin: Option<String>,
    /// `false` when the compile's plugin selection disabled the stage (`"enabled": false`,
    /// docs/decisions.md D14); the runtime's loader sets such nodes aside (D49).
    pub enabled: bool,
    pub phase: Phase,
    pub for_each: Option<ForEach>,
    pub produces: Vec<String>,
    pub optional_produces: Vec<String>,
    pub consumes: Vec<GraphConsume>,
    pub sensors_applicable: Vec<SensorEntry>,
}

impl GraphNode {
    /// Whether the stage runs once per unit of work (`for_each: unit-of-work`).
    pub fn is_per_unit(&self) -> bool {
        self.for_each == Some(ForEach::UnitOfWork)
    }

    /// The fields that decide where the stage's declared outputs are written, for the one
    /// layout function the compile and the gate share (`output_paths`).
    pub fn stage_outputs(&self) -> StageOutputs<'_> {
        StageOutputs {
            slug: &self.slug,
            phase: self.phase.as_str(),
            for_each: self.for_each.map(ForEach::as_str),
            artifacts: self
                .produces
                .iter()
                .chain(&self.optional_produces)
                .map(String::as_str)
                .collect(),
        }
    }
}

/// A stage's phase, which is also the folder of its outputs under the intent record; the
/// variants are in the framework's order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr, EnumString, VariantArray, VariantNames,
)]
#[strum(serialize_all = "lowercase")]
pub enum Phase {
    Initialization,
    Ideation,
    Inception,
    Construction,
    Operation,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What a stage repeats over. The framework knows one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr, EnumString, VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum ForEach {
    UnitOfWork,
}

impl ForEach {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One `consumes` item, as far as dispatch needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphConsume {
    pub artifact: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_writes_the_reference_s_keys_of_a_binding() {
        let entry = SensorEntry {
            id: "x".to_owned(),
            path: ".claude/sensors/aidlc-x.md".to_owned(),
            fire_on: FireOn::Gate,
            default_severity: Severity::Blocking,
            category: Some("shape".to_owned()),
            matches: Some("**/*.md".to_owned()),
        };
        let keys = |format: GraphFormat| {
            let mut out = String::new();
            let mut writer = PrettyWriter::new(&mut out, 0);
            writer.begin_object();
            entry.write(format, &mut writer);
            writer.end_object();
            let value: Map<String, Value> = serde_json::from_str(&out).unwrap();
            value.keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(keys(GraphFormat::Reference25), ["id", "path", "matches"]);
        assert_eq!(keys(GraphFormat::Reference26), ["id", "path", "matches"]);
        assert_eq!(
            keys(GraphFormat::Gate),
            [
                "id",
                "path",
                "fire_on",
                "default_severity",
                "category",
                "matches"
            ]
        );
    }
}
