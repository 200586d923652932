//! Reading `harness.json`'s `plugins` key for the plugin commands: the strict reader is the
//! compile's (`crate::stage_graph::plugins_key`); this wraps its refusal as a plugin problem.

use camino::Utf8Path;

use crate::plugin::Problem;
use crate::stage_graph::plugins_key::{Selection, selection_of_text};

/// The enabled set in the file at `harness_json`, or `None` when every plugin is enabled.
pub fn read_selection(harness_json: &Utf8Path) -> Result<Selection, Problem> {
    let text = match std::fs::read_to_string(harness_json) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(
                Problem::new(format!("cannot read the file: {error}")).at_path(harness_json)
            );
        }
    };
    selection_of_text(&text).map_err(|error| {
        Problem::new(error.message)
            .at_path(harness_json)
            .with_help(error.help)
    })
}
