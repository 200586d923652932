//! The compiled graph on disk, as the runtime uses it: [`load_graph`] reads `stage-graph.json` and
//! hands its text to the protocol's strict reader (`protocol::graph_reader::parse_graph`), and
//! [`produce_dirs`] lists the folders that exist where a node's stage writes.
//!
//! Invariant: a graph that cannot be read or is not one this version wrote is a
//! [`GraphLoadError`] naming the file and saying to recompile, never an empty graph.

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::fs_util::sorted_children;
use crate::protocol::graph_reader::{GraphRefusal, GraphTextError, StageGraph, parse_graph};
use crate::protocol::output_paths::CODEKB_STAGE;
use crate::protocol::stage_node::GraphNode;
use crate::runtime::workspace::Workspace;

/// Why the graph could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GraphLoadError {
    #[error("cannot read the stage graph {path}: {source}; run `aidlc compile` first")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("the stage graph {path} is malformed ({reason}); run `aidlc compile` to rebuild it")]
    Malformed { path: String, reason: String },
    #[error("{refusal} (in {path}); run `aidlc compile` to rebuild it")]
    NotOurs { path: String, refusal: GraphRefusal },
}

/// The node of the active stage: the directive marker's stage, else the state's current stage
/// (`None` when the graph holds neither).
pub fn active_stage_node<'n>(
    nodes: &'n [GraphNode],
    choice: &crate::runtime::workspace::ActiveStageChoice,
) -> Option<&'n GraphNode> {
    nodes
        .iter()
        .find(|node| node.slug == choice.preferred_stage())
        .or_else(|| nodes.iter().find(|node| node.slug == choice.current_stage))
}

/// The graph at `path`, read whole and parsed strictly by the protocol's one reader, with the
/// stages the plugin selection disabled set aside (`StageGraph::disabled`, docs/decisions.md
/// D49): every runtime path reads `nodes`, so a disabled stage is not there for it.
pub fn load_graph(path: &Utf8Path) -> Result<StageGraph, GraphLoadError> {
    graph_of_text(path, &read_graph_text(path)?)
}

fn read_graph_text(path: &Utf8Path) -> Result<String, GraphLoadError> {
    crate::leaves::fs_util::read_bounded_text(path, crate::compile::discover::MAX_GENERATED_BYTES)
        .map_err(|error| GraphLoadError::Unreadable {
            path: path.to_string(),
            source: error.into_io_error(),
        })
}

/// The workspace's graph, as [`load_graph`] reads it, from the text this command already read
/// when it did (the version detection, or an earlier reader), else from the file, whose text is
/// then kept for the next reader: one command, however many files it fires on, reads the
/// graph once.
pub fn load_workspace_graph(workspace: &Workspace) -> Result<StageGraph, GraphLoadError> {
    let path = &workspace.layout.stage_graph_path;
    let text = if let Some(text) = workspace.graph_text() {
        text
    } else {
        let text = std::sync::Arc::new(read_graph_text(path)?);
        workspace.keep_graph_text(std::sync::Arc::clone(&text));
        text
    };
    graph_of_text(path, &text)
}

/// The text of the graph at `path`, parsed by the protocol's strict reader.
fn graph_of_text(path: &Utf8Path, text: &str) -> Result<StageGraph, GraphLoadError> {
    parse_graph(text)
        .map(StageGraph::with_disabled_set_aside)
        .map_err(|error| match error {
            GraphTextError::Json(reason) => GraphLoadError::Malformed {
                path: path.to_string(),
                reason,
            },
            GraphTextError::Refused(refusal) => GraphLoadError::NotOurs {
                path: path.to_string(),
                refusal,
            },
        })
}

/// Where a stage writes: the codekb repositories for a codekb stage, the per-unit folders (or
/// the stage-level fallback) for a per-unit stage, else `<record>/<phase>/<slug>`. Only folders
/// that exist are returned. The one definition the dispatcher (`--consumes` on-disk filter) and
/// gate dispatch (deliverables) share.
pub fn produce_dirs(
    workspace: &Workspace,
    record: &Utf8Path,
    node: &GraphNode,
) -> Vec<Utf8PathBuf> {
    if node.slug == CODEKB_STAGE {
        return sorted_children(&workspace.space_dir().join("codekb"), Utf8Path::is_dir);
    }
    if node.is_per_unit() {
        let stage_level = record.join("construction").join(&node.slug);
        if stage_level.is_dir() {
            return vec![stage_level];
        }
        return [
            record.join("construction"),
            record.join("construction/units"),
        ]
        .iter()
        .flat_map(|root| sorted_children(root, Utf8Path::is_dir))
        .map(|unit| unit.join(&node.slug))
        .filter(|dir| dir.is_dir())
        .collect();
    }
    let dir = record.join(node.phase.as_str()).join(&node.slug);
    if dir.is_dir() { vec![dir] } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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

    #[test]
    fn the_load_error_names_the_file_and_says_to_recompile() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().join("stage-graph.json")).unwrap();
        std::fs::write(
            &path,
            json!([node("s", &json!([gate_entry("shape", "gate", "critical")]))]).to_string(),
        )
        .unwrap();
        let message = load_graph(&path).unwrap_err().to_string();
        assert!(message.starts_with("recompile: the graph is not one this version wrote: stage \"s\", key sensors_applicable[0].default_severity, value \"critical\""), "{message}");
        assert!(
            message.ends_with(&format!("(in {path}); run `aidlc compile` to rebuild it")),
            "{message}"
        );
    }

    #[test]
    fn the_workspace_s_graph_is_read_once_from_the_version_detection_s_text() {
        let (_dir, layout) = project_with_a_graph();
        let workspace = Workspace::resolve(layout);
        std::fs::remove_file(&workspace.layout.stage_graph_path).unwrap();
        for reader in ["the first", "a later"] {
            let graph = load_workspace_graph(&workspace)
                .unwrap_or_else(|error| panic!("{reader} reader read the file again: {error}"));
            assert_eq!(graph.nodes.len(), 1);
        }
    }

    #[test]
    fn when_the_detection_did_not_read_the_graph_its_first_reader_s_text_serves_the_next() {
        let (_dir, layout) = project_with_a_graph();
        // The reference's tools name the version, so the detection reads no graph.
        std::fs::create_dir_all(layout.reference_tools_path.parent().unwrap()).unwrap();
        std::fs::write(
            &layout.reference_tools_path,
            "export const AIDLC_VERSION = \"2.6.54\";\n",
        )
        .unwrap();
        let workspace = Workspace::resolve(layout);
        assert!(workspace.graph_text().is_none());
        assert_eq!(load_workspace_graph(&workspace).unwrap().nodes.len(), 1);
        std::fs::remove_file(&workspace.layout.stage_graph_path).unwrap();
        assert_eq!(load_workspace_graph(&workspace).unwrap().nodes.len(), 1);
    }

    fn project_with_a_graph() -> (tempfile::TempDir, crate::compile::discover::Layout) {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        let layout = crate::compile::discover::Layout::new(
            &project,
            crate::harness::Harness::Claude,
            &|_| None,
        );
        std::fs::create_dir_all(layout.stage_graph_path.parent().unwrap()).unwrap();
        std::fs::write(
            &layout.stage_graph_path,
            json!([node("s", &json!([gate_entry("shape", "gate", "blocking")]))]).to_string(),
        )
        .unwrap();
        (dir, layout)
    }
}
