//! The stage graph: numbering, cross-stage checks, and the canonical JSON of
//! `stage-graph.json` and `scope-grid.json`.

pub mod checks;
pub mod dead_bindings;
pub mod emit;
pub mod format_choice;
pub mod numbering;
pub mod plugin_selection;
pub mod plugins_key;
pub mod scope_grid;
pub mod stage_chunks;
#[cfg(test)]
pub(crate) mod test_projects;
