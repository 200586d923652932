//! The one strict reader of `stage-graph.json`'s text: only the fields the dispatcher, the
//! write hook and gate dispatch use, each parsed strictly into a typed value (D4, D13), under
//! the keys `graph_keys` spells. Selection (`fire_on`, severity, `matches`) comes from here
//! (D6). The caller reads the file and hands over its text.
//!
//! The text is read in one pass ([`gathered`]): each node's object is parsed straight into the
//! values of the keys the reader reads (every other value is parsed as JSON and dropped), then
//! those values are checked in a fixed order ([`checked`]) into [`GraphNode`]s.
//!
//! Invariants:
//! - nothing read here is defaulted: an unknown enum value (`fire_on`, `default_severity`,
//!   `phase`, `for_each`), a value of the wrong type, a missing key, a key written twice, a slug
//!   two nodes share, or a file that is not an array of objects refuses the whole graph with
//!   one [`GraphRefusal`] ("recompile: the graph is not one this version wrote"), never a quiet
//!   advisory or "nothing to do";
//! - of several problems, the one named is the first in the check order (the nodes in file
//!   order; in a node, a repeated key, then `slug`, `plugin`, `enabled`, `phase`, `for_each`,
//!   `produces`, `optional_produces`, `consumes`, `sensors_applicable`), never the first in the
//!   text, so that the message does not depend on how the keys were ordered;
//! - the binding shape is decided once per graph ([`GraphShape`]), never per entry: a graph in
//!   which no binding carries `fire_on` or `default_severity` is a reference 2.5/2.6 graph, read
//!   as the reference reads it (every binding write-fired and advisory); once any binding carries
//!   either key, every binding must carry both.

mod checked;
mod gathered;

pub(crate) use gathered::UnreadValue;

use crate::protocol::stage_node::GraphNode;

/// The longest value a refusal quotes; a longer one is cut with an ellipsis.
const MAX_SHOWN_VALUE_CHARS: usize = 80;

/// The loaded graph: its nodes in file order, and the binding shape they were read with.
#[derive(Debug, Clone)]
pub struct StageGraph {
    pub shape: GraphShape,
    /// Every node [`parse_graph`] read; after [`StageGraph::with_disabled_set_aside`], only the
    /// enabled ones.
    pub nodes: Vec<GraphNode>,
    /// The nodes the plugin selection disabled, in file order, once set aside (empty from
    /// [`parse_graph`]).
    pub disabled: Vec<GraphNode>,
}

impl StageGraph {
    /// The graph as the runtime uses it (docs/decisions.md D49): the disabled nodes moved out
    /// of `nodes` into `disabled`, as the reference's loader drops them before anything reads
    /// the graph, but kept, so that a command asked about one can say why it is not there.
    #[must_use]
    pub fn with_disabled_set_aside(self) -> StageGraph {
        // Most graphs select every plugin: nothing to move, no second vector.
        if self.nodes.iter().all(|node| node.enabled) {
            return self;
        }
        let (nodes, disabled): (Vec<GraphNode>, Vec<GraphNode>) =
            self.nodes.into_iter().partition(|node| node.enabled);
        StageGraph {
            shape: self.shape,
            nodes,
            disabled: self.disabled.into_iter().chain(disabled).collect(),
        }
    }

    /// The disabled node whose slug is `slug`, if any.
    pub fn disabled_stage(&self, slug: &str) -> Option<&GraphNode> {
        self.disabled.iter().find(|node| node.slug == slug)
    }
}

/// Which `sensors_applicable` entry shape a graph has (D13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphShape {
    /// The reference 2.5/2.6 shape `{id, path, matches?}`: no binding says when it fires or how
    /// severe it is, and the reference reads every one as write-fired and advisory.
    PreGate,
    /// The [gate] shape `{id, path, fire_on, default_severity, category?, matches?}`, which this
    /// compile writes: every binding carries both keys.
    Gate,
}

/// A value in the graph that this version would never have written: where, which key, and
/// what was found. The one message format for every such refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("recompile: the graph is not one this version wrote: {place}, key {key}, value {value}")]
pub struct GraphRefusal {
    /// `stage "<slug>"`, `node <n>` (1-based, for a node without a usable slug) or `the graph`.
    pub place: String,
    /// The key as a path inside the node, e.g. `sensors_applicable[2].fire_on`.
    pub key: String,
    /// The value found (as JSON, shortened), `missing`, or what is wrong with it.
    pub value: String,
}

/// Why a graph text was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphTextError {
    /// Not JSON at all.
    Json(String),
    /// JSON, but not a graph this version wrote.
    Refused(GraphRefusal),
}

/// The graph in `text`, strictly parsed.
pub fn parse_graph(text: &str) -> Result<StageGraph, GraphTextError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let gathered = gathered::gather_graph(&mut deserializer)
        .and_then(|gathered| deserializer.end().map(|()| gathered))
        .map_err(|error| GraphTextError::Json(error.to_string()))?;
    checked::check_graph(gathered).map_err(GraphTextError::Refused)
}

/// `unknown stage slug: "<slug>". Known (first 10): <first ten slugs sorted, joined ", ">`.
pub fn unknown_stage_message(slug: &str, nodes: &[GraphNode]) -> String {
    let mut slugs: Vec<&str> = nodes.iter().map(|node| node.slug.as_str()).collect();
    slugs.sort_unstable();
    slugs.truncate(10);
    format!(
        "unknown stage slug: \"{slug}\". Known (first 10): {}",
        slugs.join(", ")
    )
}

/// The stages that produce `artifact` (in `produces` or `optional_produces`), in graph order.
pub fn producers_of<'a>(nodes: &'a [GraphNode], artifact: &str) -> Vec<&'a GraphNode> {
    nodes
        .iter()
        .filter(|node| {
            node.produces.iter().any(|p| p == artifact)
                || node.optional_produces.iter().any(|p| p == artifact)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fmt::Write as _;

    use crate::protocol::selection::{FireOn, Severity};
    use crate::protocol::stage_node::Phase;
    use serde_json::json;

    use super::*;

    /// One node from its JSON, read as a one-node graph (for the tests that build nodes).
    pub(crate) fn node_from_json(value: &serde_json::Value) -> Result<GraphNode, GraphTextError> {
        let mut graph = parse_graph(&serde_json::Value::Array(vec![value.clone()]).to_string())?;
        Ok(graph.nodes.remove(0))
    }

    fn gate_entry(id: &str, fire_on: &str, severity: &str) -> serde_json::Value {
        json!({"id": id, "path": format!(".claude/sensors/aidlc-{id}.md"), "fire_on": fire_on, "default_severity": severity, "matches": "**/*.md"})
    }

    fn node(slug: &str, sensors: &serde_json::Value) -> serde_json::Value {
        json!({
            "slug": slug, "number": "2.1", "phase": "inception", "produces": ["doc"],
            "consumes": [{"artifact": "intent-statement", "required": true}],
            "sensors_applicable": sensors,
        })
    }

    fn parse(value: &serde_json::Value) -> Result<StageGraph, GraphTextError> {
        parse_graph(&value.to_string())
    }

    fn refusal(value: &serde_json::Value) -> GraphRefusal {
        match parse(value) {
            Err(GraphTextError::Refused(refusal)) => refusal,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_gate_graph_reads_typed_values() {
        let graph = parse(&json!([node(
            "s",
            &json!([
                gate_entry("shape", "gate", "blocking"),
                gate_entry("linter", "write", "advisory")
            ])
        )]))
        .unwrap();
        assert_eq!(graph.shape, GraphShape::Gate);
        let node = &graph.nodes[0];
        assert_eq!(node.phase, Phase::Inception);
        assert_eq!(node.for_each, None);
        assert_eq!(node.consumes[0].artifact, "intent-statement");
        let selection: Vec<(FireOn, Severity)> = node
            .sensors_applicable
            .iter()
            .map(|entry| (entry.fire_on, entry.default_severity))
            .collect();
        assert_eq!(
            selection,
            [
                (FireOn::Gate, Severity::Blocking),
                (FireOn::Write, Severity::Advisory)
            ]
        );
    }

    #[test]
    fn a_graph_without_selection_keys_is_the_pre_gate_shape_write_fired_and_advisory() {
        let entry = json!({"id": "linter", "path": ".claude/sensors/aidlc-linter.md", "matches": "**/*.ts"});
        let graph = parse(&json!([node("s", &json!([entry])), node("t", &json!([]))])).unwrap();
        assert_eq!(graph.shape, GraphShape::PreGate);
        let entry = &graph.nodes[0].sensors_applicable[0];
        assert_eq!(entry.fire_on, FireOn::Write);
        assert_eq!(entry.default_severity, Severity::Advisory);
    }

    #[test]
    fn once_one_entry_carries_a_selection_key_every_entry_must_carry_both() {
        let bare = json!({"id": "linter", "path": "l.md"});
        let mixed = json!([
            node("s", &json!([gate_entry("shape", "gate", "blocking")])),
            node("t", &json!([bare]))
        ]);
        assert_eq!(
            refusal(&mixed).to_string(),
            "recompile: the graph is not one this version wrote: stage \"t\", key sensors_applicable[0].fire_on, value missing (expected one of write | gate)"
        );
        let only_severity = json!([node(
            "s",
            &json!([{"id": "x", "path": "x.md", "default_severity": "blocking"}])
        )]);
        assert_eq!(refusal(&only_severity).key, "sensors_applicable[0].fire_on");
        let no_severity = json!([node(
            "s",
            &json!([{"id": "x", "path": "x.md", "fire_on": "gate"}])
        )]);
        assert_eq!(
            refusal(&no_severity).key,
            "sensors_applicable[0].default_severity"
        );
    }

    #[test]
    fn unknown_enum_values_are_refused_never_read_as_advisory() {
        for (fire_on, severity, key, shown) in [
            ("gate", "critical", "default_severity", "\"critical\""),
            ("gate", "Blocking", "default_severity", "\"Blocking\""),
            ("bogus", "blocking", "fire_on", "\"bogus\""),
            ("Gate", "advisory", "fire_on", "\"Gate\""),
        ] {
            let found = refusal(&json!([node(
                "s",
                &json!([gate_entry("shape", fire_on, severity)])
            )]));
            assert_eq!(found.place, "stage \"s\"");
            assert_eq!(found.key, format!("sensors_applicable[0].{key}"));
            assert!(found.value.starts_with(shown), "{found}");
        }
        let number = refusal(&json!([node(
            "s",
            &json!([{"id": "x", "path": "x.md", "fire_on": 1, "default_severity": "advisory"}])
        )]));
        assert_eq!(number.value, "1 (expected one of write | gate)", "{number}");
    }

    #[test]
    fn phase_and_for_each_are_read_strictly() {
        let mut bad_phase = node("s", &json!([]));
        bad_phase["phase"] = json!("design");
        let found = refusal(&json!([bad_phase]));
        assert_eq!(
            (found.key.as_str(), found.value.as_str()),
            (
                "phase",
                "\"design\" (expected one of initialization | ideation | inception | construction | operation)"
            )
        );
        let mut no_phase = node("s", &json!([]));
        no_phase.as_object_mut().unwrap().remove("phase");
        assert!(refusal(&json!([no_phase])).value.starts_with("missing"));
        let mut per_team = node("s", &json!([]));
        per_team["for_each"] = json!("team");
        assert_eq!(refusal(&json!([per_team])).key, "for_each");
        let mut per_unit = node("s", &json!([]));
        per_unit["for_each"] = json!("unit-of-work");
        assert!(parse(&json!([per_unit])).unwrap().nodes[0].is_per_unit());
    }

    /// The compile writes `enabled` only as `false` (D14); the loader sets such nodes aside
    /// (D49). Any other value is one this version never wrote.
    #[test]
    fn enabled_is_read_strictly_and_disabled_nodes_are_set_aside() {
        let mut off = node("off", &json!([]));
        off["enabled"] = json!(false);
        off["plugin"] = json!("extra");
        let graph = parse(&json!([node("on", &json!([])), off.clone()])).unwrap();
        assert_eq!(
            graph
                .nodes
                .iter()
                .map(|node| (node.slug.as_str(), node.enabled, node.plugin.as_deref()))
                .collect::<Vec<_>>(),
            [("on", true, None), ("off", false, Some("extra"))]
        );
        let set_aside = graph.with_disabled_set_aside();
        assert_eq!(set_aside.nodes.len(), 1);
        assert_eq!(set_aside.nodes[0].slug, "on");
        assert_eq!(
            set_aside.disabled_stage("off").unwrap().plugin.as_deref(),
            Some("extra")
        );
        assert!(set_aside.disabled_stage("on").is_none());
        for (value, shown) in [
            (json!(true), "true"),
            (json!("false"), "\"false\""),
            (json!(0), "0"),
            (json!(null), "null"),
        ] {
            let mut bad = node("s", &json!([]));
            bad["enabled"] = value;
            let found = refusal(&json!([bad]));
            assert_eq!(found.key, "enabled");
            assert_eq!(
                found.value,
                format!("{shown} (expected false, or no key for an enabled stage)")
            );
        }
        let mut bad_plugin = node("s", &json!([]));
        bad_plugin["plugin"] = json!(7);
        assert_eq!(refusal(&json!([bad_plugin])).key, "plugin");
    }

    #[test]
    fn duplicate_slugs_and_duplicate_keys_are_refused() {
        let twice = refusal(&json!([node("s", &json!([])), node("s", &json!([]))]));
        assert_eq!(
            twice.to_string(),
            "recompile: the graph is not one this version wrote: stage \"s\", key slug, value \"s\" (node 1 has the same slug; slugs are unique)"
        );
        let text = r#"[{"slug": "s", "phase": "inception", "produces": [], "consumes": [],
            "sensors_applicable": [{"id": "x", "path": "x.md", "fire_on": "write", "fire_on": "gate", "default_severity": "blocking"}]}]"#;
        match parse_graph(text) {
            Err(GraphTextError::Refused(found)) => {
                assert_eq!(found.key, "sensors_applicable[0].fire_on");
                assert_eq!(found.value, "written twice in the same object");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_graph_that_is_not_an_array_of_objects_is_refused() {
        let object = refusal(&json!({"nodes": []}));
        assert_eq!(
            object.to_string(),
            "recompile: the graph is not one this version wrote: the graph, key (top level), value an object (expected an array of stage nodes)"
        );
        let scalar = refusal(&json!([node("s", &json!([])), "t"]));
        assert_eq!(scalar.place, "node 2");
        assert_eq!(scalar.value, "\"t\" (expected an object)");
        let entry = refusal(&json!([node("s", &json!(["shape"]))]));
        assert_eq!(entry.key, "sensors_applicable[0]");
        assert!(matches!(parse_graph("[{"), Err(GraphTextError::Json(_))));
        assert!(parse(&json!([])).unwrap().nodes.is_empty());
    }

    #[test]
    fn values_of_the_wrong_type_are_refused_and_long_values_are_cut() {
        let mut produces = node("s", &json!([]));
        produces["produces"] = json!(["doc", 7]);
        let found = refusal(&json!([produces]));
        assert_eq!(
            (found.key.as_str(), found.value.as_str()),
            ("produces[1]", "7 (expected a string)")
        );
        let mut long = node("s", &json!([]));
        long["phase"] = json!("x".repeat(500));
        let found = refusal(&json!([long]));
        assert!(found.value.chars().count() < 200, "{found}");
        assert!(found.value.contains('…'), "{found}");
        let no_slug = refusal(&json!([{"phase": "inception"}]));
        assert_eq!(
            (no_slug.place.as_str(), no_slug.key.as_str()),
            ("node 1", "slug")
        );
    }

    /// The values the reader skips are parsed and checked all the same: a number JSON cannot
    /// hold, nesting past `serde_json`'s limit, a broken string are refused wherever they are.
    #[test]
    fn a_value_the_reader_does_not_read_is_still_checked_as_json() {
        let base = node("s", &json!([]));
        let with = |key: &str, raw: &str| {
            let text = base.to_string();
            format!("[{}, \"{key}\": {raw}}}]", &text[..text.len() - 1])
        };
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for key in ["inputs", "rules_in_context", "produces"] {
            for raw in ["1e400", deep.as_str(), "\"\\x\""] {
                assert!(
                    matches!(parse_graph(&with(key, raw)), Err(GraphTextError::Json(_))),
                    "{key}: {raw:.20}"
                );
            }
        }
        let unread = parse_graph(&with("inputs", "{\"any\": [1, \"two\", null]}")).unwrap();
        assert_eq!(unread.nodes[0].slug, "s");
    }

    // --- Every read key broken in every way, against the recorded answers -----------------

    const REFERENCE_2_5_GRAPH: &str = include_str!(
        "../../../tests/fixtures/reference-installs/2.5.36/.claude/tools/data/stage-graph.json"
    );
    const REFERENCE_2_6_GRAPH: &str = include_str!(
        "../../../tests/fixtures/reference-installs/2.6.54/.claude/tools/data/stage-graph.json"
    );
    const EVERY_FIELD_GATE_NODE: &str = include_str!(
        "../../compile/stage_graph/snapshots/aidlc__compile__stage_graph__emit__tests__every_field_gate.snap"
    );

    /// The reader's answer for `text` on one line: the nodes and shape read, the refusal
    /// (place, key and value), or the JSON error.
    fn answer(text: &str) -> String {
        match parse_graph(text) {
            Ok(graph) => format!("read {} nodes, {:?}", graph.nodes.len(), graph.shape),
            Err(GraphTextError::Refused(refusal)) => format!(
                "refused: {}, key {}, value {}",
                refusal.place, refusal.key, refusal.value
            ),
            Err(GraphTextError::Json(error)) => format!("not JSON: {error}"),
        }
    }

    /// The reference 2.6 graph with every binding in the [gate] shape, as this compile writes it.
    fn gate_shaped(graph: &serde_json::Value) -> serde_json::Value {
        let mut graph = graph.clone();
        let severities = ["blocking", "advisory"];
        for (index, node) in graph.as_array_mut().unwrap().iter_mut().enumerate() {
            for entry in node["sensors_applicable"].as_array_mut().unwrap() {
                let entry = entry.as_object_mut().unwrap();
                entry.insert(
                    "fire_on".into(),
                    json!(if index % 2 == 0 { "gate" } else { "write" }),
                );
                entry.insert("default_severity".into(), json!(severities[index % 2]));
                entry.insert("category".into(), json!("document"));
            }
        }
        graph
    }

    /// The values a mutation puts where a read key's value was: each shape JSON has, the
    /// values the checks accept, and the edge cases of what a refusal shows.
    fn replacement_values() -> Vec<serde_json::Value> {
        vec![
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-1),
            json!(1.5),
            json!(u64::MAX),
            json!(""),
            json!("x"),
            json!("inception"),
            json!("unit-of-work"),
            json!("gate"),
            json!("blocking"),
            json!("a \"quoted\" \n line"),
            json!("é".repeat(100)),
            json!([]),
            json!(["a", 1, null, [], {}]),
            json!([{"artifact": "a"}, "b"]),
            json!([{"id": "i", "path": "p"}]),
            json!({}),
            json!({"artifact": 1}),
        ]
    }

    /// The graph `nodes` with node `index` changed by `change`.
    fn with_node_changed(
        nodes: &[serde_json::Value],
        index: usize,
        change: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
    ) -> String {
        let mut nodes = nodes.to_vec();
        change(nodes[index].as_object_mut().unwrap());
        serde_json::Value::Array(nodes).to_string()
    }

    /// `text` with `insert` written right after its first `{` at or after byte `from`: a key
    /// written twice, which a `serde_json::Value` cannot hold.
    fn with_text_after_brace(text: &str, from: usize, insert: &str) -> String {
        let brace = from + text[from..].find('{').unwrap() + 1;
        format!("{}{insert}{}", &text[..brace], &text[brace..])
    }

    /// Every mutation of one node of a small graph cut from `graph`: each read key removed or
    /// replaced by each value of [`replacement_values`], the same for the node's first binding
    /// and first `consumes` item, and keys (read, unread, unknown) written twice.
    fn node_mutations(graph: &serde_json::Value) -> Vec<(String, String)> {
        let all = graph.as_array().unwrap();
        let nodes: Vec<serde_json::Value> = [0, 1, all.len() / 2, all.len() - 1]
            .iter()
            .map(|index| all[*index].clone())
            .collect();
        let node_keys = [
            "slug",
            "plugin",
            "enabled",
            "phase",
            "for_each",
            "produces",
            "optional_produces",
            "consumes",
            "sensors_applicable",
        ];
        let entry_keys = [
            "id",
            "path",
            "fire_on",
            "default_severity",
            "category",
            "matches",
        ];
        let mut mutations = Vec::new();
        for index in [0, 2, 3] {
            for key in node_keys {
                mutations.push((
                    format!("node {index}: {key} removed"),
                    with_node_changed(&nodes, index, |node| {
                        node.remove(key);
                    }),
                ));
                for value in replacement_values() {
                    mutations.push((
                        format!("node {index}: {key} = {value}"),
                        with_node_changed(&nodes, index, |node| {
                            node.insert(key.to_owned(), value.clone());
                        }),
                    ));
                }
            }
            for key in entry_keys.iter().chain(&["zzz-unknown"]) {
                let entry_changed = |value: Option<serde_json::Value>| {
                    with_node_changed(&nodes, index, |node| {
                        let entries = node["sensors_applicable"].as_array_mut().unwrap();
                        if entries.is_empty() {
                            entries.push(json!({"id": "linter", "path": "p"}));
                        }
                        let entry = entries[0].as_object_mut().unwrap();
                        match &value {
                            None => {
                                entry.remove(*key);
                            }
                            Some(value) => {
                                entry.insert((*key).to_owned(), value.clone());
                            }
                        }
                    })
                };
                mutations.push((
                    format!("node {index}: binding {key} removed"),
                    entry_changed(None),
                ));
                for value in replacement_values() {
                    mutations.push((
                        format!("node {index}: binding {key} = {value}"),
                        entry_changed(Some(value)),
                    ));
                }
            }
            for value in replacement_values() {
                mutations.push((
                    format!("node {index}: consumes[0].artifact = {value}"),
                    with_node_changed(&nodes, index, |node| {
                        node.insert(
                            "consumes".into(),
                            json!([{"artifact": value, "required": true}]),
                        );
                    }),
                ));
                mutations.push((
                    format!("node {index}: the node is {value}"),
                    with_node_changed(&nodes, index, |node| {
                        *node =
                            serde_json::Map::from_iter([("replaced".to_owned(), value.clone())]);
                    }),
                ));
            }
        }
        let text = serde_json::Value::Array(nodes.clone()).to_string();
        let second_node = text.find("},{").unwrap() + 2;
        let first_binding = text.find("\"sensors_applicable\":[{").unwrap_or(0);
        for repeated in [
            "\"slug\":\"again\",",
            "\"number\":\"9\",",
            "\"sensors_applicable\":[{\"id\":\"x\",\"path\":\"p\",\"fire_on\":\"gate\"}],",
            "\"zzz\":1,\"zzz\":2,",
            "\"phase\":1,\"enabled\":true,\"enabled\":false,",
            "\"s\\u006cug\":\"escaped-key\",",
        ] {
            mutations.push((
                format!("first node starts with {repeated}"),
                with_text_after_brace(&text, 1, repeated),
            ));
            mutations.push((
                format!("second node starts with {repeated}"),
                with_text_after_brace(&text, second_node, repeated),
            ));
        }
        for repeated in [
            "\"id\":\"again\",",
            "\"fire_on\":\"gate\",",
            "\"other\":1,\"other\":2,",
        ] {
            mutations.push((
                format!("first binding starts with {repeated}"),
                with_text_after_brace(&text, first_binding, repeated),
            ));
        }
        let first_slug = nodes[0]["slug"].clone();
        mutations.push((
            "two nodes share a slug".to_owned(),
            with_node_changed(&nodes, 3, |node| {
                node.insert("slug".into(), first_slug);
            }),
        ));
        mutations.push((
            "a number JSON cannot hold in an unread key".to_owned(),
            with_text_after_brace(&text, second_node, "\"inputs\":1e400,"),
        ));
        mutations.push((
            "a number JSON cannot hold in a read key".to_owned(),
            with_text_after_brace(&text, second_node, "\"plugin\":1e400,"),
        ));
        mutations.push(("trailing text".to_owned(), format!("{text} x")));
        mutations.push(("cut short".to_owned(), text[..text.len() / 2].to_owned()));
        mutations
    }

    /// The reader's answer to every graph of a fixed set, recorded: the two reference
    /// installs' (the 2.5 and 2.6 shapes), the 2.6 graph in the [gate] shape, a node with every
    /// field, the top level of every shape, and the node mutations of the 2.5 and the
    /// gate-shaped graph. The record is the behaviour to keep: a change in any node count,
    /// shape, refusal (place, key, value) or JSON error shows in the snapshot's diff.
    #[test]
    fn every_graph_of_the_fixed_set_gets_its_recorded_answer() {
        let reference_2_6: serde_json::Value = serde_json::from_str(REFERENCE_2_6_GRAPH).unwrap();
        let reference_2_5: serde_json::Value = serde_json::from_str(REFERENCE_2_5_GRAPH).unwrap();
        let gate = gate_shaped(&reference_2_6);
        let every_field_node = EVERY_FIELD_GATE_NODE.splitn(3, "---\n").nth(2).unwrap();
        let every_field = format!("[{every_field_node}]");
        let mut answers = String::new();
        for (what, text) in [
            ("the 2.5.36 install's graph", REFERENCE_2_5_GRAPH.to_owned()),
            ("the 2.6.54 install's graph", REFERENCE_2_6_GRAPH.to_owned()),
            ("the gate-shaped graph", gate.to_string()),
            ("a node with every field", every_field),
        ] {
            assert!(parse_graph(&text).is_ok(), "{what}");
            let _ = writeln!(answers, "{what} => {}", answer(&text));
        }
        for top in [
            "{}",
            "1",
            "\"graph\"",
            "null",
            "[]",
            "[1]",
            "[{}]",
            "[[]]",
            "",
            "[{\"slug\":\"s\"}]",
        ] {
            let _ = writeln!(answers, "{top} => {}", answer(top));
        }
        for (name, graph) in [("2.5", &reference_2_5), ("gate", &gate)] {
            for (what, text) in node_mutations(graph) {
                let _ = writeln!(answers, "{name}, {what} => {}", answer(&text));
            }
        }
        insta::assert_snapshot!(answers);
    }
}
