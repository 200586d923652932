//! The graph format a compile writes: the one tracked query over the inputs that decide it
//! (`--graph-format`, the existing graph, the install's reference tools), applying the pure
//! rules of `graph::format`.

use crate::db::{Project, SourceFile};
use crate::graph::format::{
    FormatSource, GraphFormat, reference_tools_version, resolve_graph_format,
};
use crate::parse::source_text;

/// The graph format this compile writes, and why: `--graph-format`, else what the existing
/// graph's keys say, else the install's reference tools, else the newest (see
/// `graph::format`). An unreadable graph or tools file says nothing (its own diagnostic comes
/// from the numbering or is not needed).
#[salsa::tracked]
pub fn graph_format(db: &dyn salsa::Database) -> (GraphFormat, FormatSource) {
    let project = Project::get(db);
    let text_of = |file: Option<SourceFile>| file.and_then(|file| source_text(db, file).ok());
    let existing_graph = text_of(*project.existing_graph(db));
    let tools = text_of(*project.reference_tools(db));
    resolve_graph_format(
        *project.graph_format_flag(db),
        existing_graph,
        tools.and_then(reference_tools_version),
    )
}
