//! Reading the compiled `stage-graph.json` at fire time: only the fields the dispatcher and
//! the write hook use. Selection (`fire_on`, severity, `matches`) comes from here (D6).

use camino::{Utf8Path, Utf8PathBuf};
use serde::Deserialize;

use crate::workspace;

/// One node of the compiled graph, as far as dispatch needs it.
#[derive(Debug, Clone, Deserialize)]
pub struct GraphNode {
    pub slug: String,
    #[serde(default)]
    pub phase: String,
    #[serde(default)]
    pub for_each: Option<String>,
    #[serde(default)]
    pub produces: Vec<String>,
    #[serde(default)]
    pub optional_produces: Vec<String>,
    #[serde(default)]
    pub consumes: Vec<GraphConsume>,
    #[serde(default)]
    pub sensors_applicable: Vec<GraphSensorEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GraphConsume {
    #[serde(default)]
    pub artifact: Option<String>,
}

/// One `sensors_applicable` entry: `{id, path, fire_on, default_severity, category?, matches?}`.
#[derive(Debug, Clone, Deserialize)]
pub struct GraphSensorEntry {
    pub id: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub fire_on: String,
    #[serde(default)]
    pub default_severity: String,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub matches: Option<String>,
}

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
}

/// Every node of the graph at `path`.
pub fn load_graph(path: &Utf8Path) -> Result<Vec<GraphNode>, GraphLoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| GraphLoadError::Unreadable {
        path: path.to_string(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|error| GraphLoadError::Malformed {
        path: path.to_string(),
        reason: error.to_string(),
    })
}

/// The file name an artifact is written as: `<name>.md`, except `traceability.json`.
pub fn artifact_file_name(artifact: &str) -> String {
    if artifact == "traceability" {
        "traceability.json".to_owned()
    } else {
        format!("{artifact}.md")
    }
}

/// Where a stage writes: the codekb repositories for a codekb stage, the per-unit folders (or
/// the stage-level fallback) for a per-unit stage, else `<record>/<phase>/<slug>`. Only folders
/// that exist are returned. The one definition the dispatcher (`--consumes` on-disk filter) and
/// gate dispatch (deliverables) share.
pub fn produce_dirs(
    project_dir: &Utf8Path,
    record: &Utf8Path,
    node: &GraphNode,
) -> Vec<Utf8PathBuf> {
    if node.slug == "reverse-engineering" {
        let space = workspace::active_space(project_dir);
        return subfolders(&workspace::space_dir(project_dir, &space).join("codekb"));
    }
    if node.for_each.as_deref() == Some("unit-of-work") {
        let stage_level = record.join("construction").join(&node.slug);
        if stage_level.is_dir() {
            return vec![stage_level];
        }
        let mut dirs = Vec::new();
        for root in [
            record.join("construction"),
            record.join("construction/units"),
        ] {
            for unit in subfolders(&root) {
                let dir = unit.join(&node.slug);
                if dir.is_dir() {
                    dirs.push(dir);
                }
            }
        }
        return dirs;
    }
    let dir = record.join(&node.phase).join(&node.slug);
    if dir.is_dir() { vec![dir] } else { Vec::new() }
}

fn subfolders(root: &Utf8Path) -> Vec<Utf8PathBuf> {
    let Ok(entries) = root.read_dir_utf8() else {
        return Vec::new();
    };
    let mut folders: Vec<Utf8PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path().to_owned())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    folders
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
