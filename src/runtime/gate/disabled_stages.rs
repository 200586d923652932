//! The stages the plugin selection disabled, as the gates see them (docs/decisions.md D49).
//!
//! The runtime's loader sets a disabled node aside (`StageGraph::disabled`), so the gates never
//! plan, fire or open anything for it. What this file adds is what the user hears:
//!
//! Invariants:
//! - a gate asked for a disabled stage by name refuses (exit 2), naming the stage, its plugin
//!   and the fix, never "nothing to check" and never "unknown stage";
//! - a check over every stage skips the disabled ones and says how many and why
//!   ([`skipped_disabled_note`]); a graph whose every stage is disabled is a refusal, since
//!   checking it would check nothing (D4).

use camino::Utf8Path;

use crate::compile::stage_graph::plugins_key::CORE_PLUGIN;
use crate::leaves::english::{counted, plural};
use crate::protocol::graph_reader::StageGraph;
use crate::protocol::stage_node::GraphNode;

/// The plugin a node belongs to, as `harness.json`'s `plugins` names it.
fn plugin_of(node: &GraphNode) -> &str {
    node.plugin.as_deref().unwrap_or(CORE_PLUGIN)
}

/// Why a gate cannot run on the stages it was asked for (`gate::command` says it as an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisabledStageRefusal {
    pub message: String,
    pub help: String,
}

/// `harness_json` as the user finds it: relative to the project when it is inside.
fn shown_path(project_dir: &Utf8Path, harness_json: &Utf8Path) -> String {
    harness_json
        .strip_prefix(project_dir)
        .unwrap_or(harness_json)
        .to_string()
}

/// Refuses the first of `requested` that names a disabled stage; with nothing requested (every
/// stage), refuses a graph that has disabled stages and no enabled one.
pub fn refuse_disabled_stages(
    graph: &StageGraph,
    requested: &[String],
    project_dir: &Utf8Path,
    harness_json: &Utf8Path,
) -> Result<(), DisabledStageRefusal> {
    if let Some(node) = requested
        .iter()
        .find_map(|stage| graph.disabled_stage(stage))
    {
        let plugin = plugin_of(node);
        let path = shown_path(project_dir, harness_json);
        return Err(DisabledStageRefusal {
            message: format!(
                "stage \"{}\" is disabled: its plugin \"{plugin}\" is not selected by `plugins` in {path}, so the graph leaves it out of every gate",
                node.slug
            ),
            help: format!(
                "add \"{plugin}\" to `plugins` in {path} (or remove the `plugins` key to select every plugin), then run `aidlc compile`"
            ),
        });
    }
    if requested.is_empty() && graph.nodes.is_empty() && !graph.disabled.is_empty() {
        let path = shown_path(project_dir, harness_json);
        let count = graph.disabled.len();
        return Err(DisabledStageRefusal {
            message: format!(
                "every stage of the graph is disabled ({} whose plugins `plugins` in {path} does not select): nothing to check",
                counted(count, "stage")
            ),
            help: format!(
                "select the plugins whose stages should be checked in `plugins` in {path} (or remove the key), then run `aidlc compile`"
            ),
        });
    }
    Ok(())
}

/// For a check over every stage: how many disabled stages it skips and why, `None` when it
/// skips none (or when stages were named: a named disabled stage is refused instead).
pub fn skipped_disabled_note(
    graph: &StageGraph,
    requested: &[String],
    project_dir: &Utf8Path,
    harness_json: &Utf8Path,
) -> Option<String> {
    if !requested.is_empty() || graph.disabled.is_empty() {
        return None;
    }
    let count = graph.disabled.len();
    let mut plugins: Vec<&str> = graph.disabled.iter().map(plugin_of).collect();
    plugins.sort_unstable();
    plugins.dedup();
    let slugs: Vec<&str> = graph
        .disabled
        .iter()
        .map(|node| node.slug.as_str())
        .collect();
    Some(format!(
        "note: {} skipped (plugin{} {} not selected by `plugins` in {}): {}",
        counted(count, "disabled stage"),
        plural(plugins.len()),
        plugins
            .iter()
            .map(|plugin| format!("\"{plugin}\""))
            .collect::<Vec<_>>()
            .join(", "),
        shown_path(project_dir, harness_json),
        slugs.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parts(refusal: DisabledStageRefusal) -> (String, String) {
        (refusal.message, refusal.help)
    }
    use crate::protocol::graph_reader::parse_graph;

    fn graph(nodes: &serde_json::Value) -> StageGraph {
        parse_graph(&nodes.to_string())
            .unwrap()
            .with_disabled_set_aside()
    }

    fn node(slug: &str, plugin: Option<&str>, enabled: bool) -> serde_json::Value {
        let mut node = json!({
            "slug": slug, "phase": "inception", "produces": ["doc"], "consumes": [],
            "sensors_applicable": [],
        });
        if let Some(plugin) = plugin {
            node["plugin"] = json!(plugin);
        }
        if !enabled {
            node["enabled"] = json!(false);
        }
        node
    }

    const PROJECT: &str = "/p";
    const HARNESS_JSON: &str = "/p/.claude/tools/data/harness.json";

    #[test]
    fn a_named_disabled_stage_is_refused_with_its_plugin_and_the_fix() {
        let graph = graph(&json!([
            node("a", None, true),
            node("b", Some("extra"), false)
        ]));
        let refusal = refuse_disabled_stages(
            &graph,
            &["a".to_owned(), "b".to_owned()],
            Utf8Path::new(PROJECT),
            Utf8Path::new(HARNESS_JSON),
        )
        .unwrap_err();
        let (message, help) = parts(refusal);
        assert_eq!(
            message,
            "stage \"b\" is disabled: its plugin \"extra\" is not selected by `plugins` in .claude/tools/data/harness.json, so the graph leaves it out of every gate"
        );
        assert_eq!(
            help,
            "add \"extra\" to `plugins` in .claude/tools/data/harness.json (or remove the `plugins` key to select every plugin), then run `aidlc compile`"
        );
        assert!(
            refuse_disabled_stages(
                &graph,
                &["a".to_owned()],
                Utf8Path::new(PROJECT),
                Utf8Path::new(HARNESS_JSON)
            )
            .is_ok()
        );
    }

    #[test]
    fn a_core_stage_names_the_core_plugin() {
        let graph = graph(&json!([node("a", Some("x"), true), node("b", None, false)]));
        let refusal = refuse_disabled_stages(
            &graph,
            &["b".to_owned()],
            Utf8Path::new(PROJECT),
            Utf8Path::new(HARNESS_JSON),
        )
        .unwrap_err();
        let (message, _) = parts(refusal);
        assert!(message.contains("plugin \"aidlc\""), "{message}");
    }

    #[test]
    fn every_stage_disabled_is_refused_and_some_disabled_is_a_note() {
        let all_off = graph(&json!([
            node("a", Some("x"), false),
            node("b", Some("y"), false)
        ]));
        let refusal = refuse_disabled_stages(
            &all_off,
            &[],
            Utf8Path::new(PROJECT),
            Utf8Path::new(HARNESS_JSON),
        )
        .unwrap_err();
        let (message, _) = parts(refusal);
        assert!(
            message.starts_with("every stage of the graph is disabled (2 stages"),
            "{message}"
        );
        let some_off = graph(&json!([
            node("a", None, true),
            node("b", Some("y"), false),
            node("c", Some("y"), false)
        ]));
        assert!(
            refuse_disabled_stages(
                &some_off,
                &[],
                Utf8Path::new(PROJECT),
                Utf8Path::new(HARNESS_JSON)
            )
            .is_ok()
        );
        assert_eq!(
            skipped_disabled_note(
                &some_off,
                &[],
                Utf8Path::new(PROJECT),
                Utf8Path::new(HARNESS_JSON)
            )
            .as_deref(),
            Some(
                "note: 2 disabled stages skipped (plugin \"y\" not selected by `plugins` in .claude/tools/data/harness.json): b, c"
            )
        );
        assert_eq!(
            skipped_disabled_note(
                &some_off,
                &["a".to_owned()],
                Utf8Path::new(PROJECT),
                Utf8Path::new(HARNESS_JSON)
            ),
            None
        );
    }
}
