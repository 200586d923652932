//! The graph format a compile writes: the one tracked query over the inputs that decide it
//! (`--graph-format`, the existing graph, the install's reference tools), applying the pure
//! rules of `protocol::graph_format`.

use crate::compile::db::Project;
use crate::compile::parse::source_text;
use crate::protocol::graph_format::{
    FormatSource, GraphFormat, reference_tools_version, resolve_graph_format_from_evidence,
};

/// The graph format this compile writes, and why: `--graph-format`, else what the existing
/// graph's keys say ([`Project::existing_graph_evidence`]), else the install's reference
/// tools, else the newest (see `protocol::graph_format`). An unreadable graph or tools file says nothing
/// (its own diagnostic comes from the numbering or is not needed). With the flag, nothing else
/// is read, so the format depends on nothing else.
#[salsa::tracked]
pub fn graph_format(db: &dyn salsa::Database) -> (GraphFormat, FormatSource) {
    let project = Project::get(db);
    if let Some(format) = *project.graph_format_flag(db) {
        return (format, FormatSource::Flag);
    }
    let tools = project
        .reference_tools(db)
        .and_then(|file| source_text(db, file).ok());
    resolve_graph_format_from_evidence(
        None,
        *project.existing_graph_evidence(db),
        tools.and_then(reference_tools_version),
    )
}
