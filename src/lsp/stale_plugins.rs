//! The warning that a composed plugin's installed copies are stale (docs/decisions.md D53):
//! its source changed since `aidlc plugin add|sync` composed it, and the language server,
//! which writes nothing, says so where the author looks until `aidlc plugin sync` runs.
//!
//! Data flow: `plugin::operations::stale_composition` (the sync planned, not applied) →
//! one `stale-plugin-copy` warning at the first line of each installed file the sync would
//! rewrite, and one on `aidlc.lock.json` naming the files it would add or remove, or the
//! refusal it would give → published with the compile's diagnostics.
//!
//! Invariants:
//! - nothing here writes, nor takes the audit lock: a plan, then values;
//! - no source changed (or an interrupted composition waits for its rollback) means no
//!   warning: an installed copy edited by hand is `plugin list`'s and `doctor`'s drift.

use std::fmt::Write as _;

use camino::Utf8Path;

use crate::compile::discover::Layout;
use crate::leaves::diagnostics::{Code, Diagnostic};
use crate::plugin::PluginError;
use crate::plugin::lock_file::LOCK_FILE_NAME;
use crate::plugin::operations::{self, StaleComposition};
use crate::plugin::tree::TreeReader;

const SYNC_HELP: &str = "run `aidlc plugin sync` (or keep `aidlc compile --watch` running); the language server does not write into the install";

/// The staleness warnings of the install `layout` names, by project-relative file, the plugin
/// trees read from `trees` (the server's warm trees, docs/decisions.md D54).
pub fn stale_plugin_diagnostics(layout: &Layout, trees: &dyn TreeReader) -> Vec<Diagnostic> {
    match operations::stale_composition(layout, trees) {
        Ok(None) => Vec::new(),
        Ok(Some(stale)) => stale_copy_warnings(layout, &stale),
        Err(error) => vec![refusal_warning(&error)],
    }
}

fn stale_copy_warnings(layout: &Layout, stale: &StaleComposition) -> Vec<Diagnostic> {
    let changed: Vec<String> = stale
        .changed_plugins
        .iter()
        .map(|(name, source)| format!("plugin \"{name}\" changed at its source {source}"))
        .collect();
    let changed = changed.join(", ");
    let mut warnings: Vec<Diagnostic> = stale
        .rewritten
        .iter()
        .map(|path| {
            Diagnostic::warning(
                Code::StalePluginCopy,
                format!(
                    "this installed file is stale: {changed} since it was composed; `aidlc plugin sync` rewrites it"
                ),
            )
            .in_file(layout.display(path))
            .with_help(SYNC_HELP)
        })
        .collect();
    if !stale.added.is_empty() || !stale.removed.is_empty() || stale.rewritten.is_empty() {
        let mut message = format!("the composition is stale: {changed} since it was composed");
        for (verb, paths) in [("adds", &stale.added), ("removes", &stale.removed)] {
            if !paths.is_empty() {
                let names: Vec<String> = paths
                    .iter()
                    .map(|path| layout.display(path).to_string())
                    .collect();
                let _ = write!(message, "; `aidlc plugin sync` {verb} {}", names.join(", "));
            }
        }
        warnings.push(
            Diagnostic::warning(Code::StalePluginCopy, message)
                .in_file(Utf8Path::new(LOCK_FILE_NAME))
                .with_help(SYNC_HELP),
        );
    }
    warnings
}

fn refusal_warning(error: &PluginError) -> Diagnostic {
    let help = error
        .problems()
        .iter()
        .find_map(|problem| problem.help().map(str::to_owned))
        .unwrap_or_else(|| "fix the plugin's source, then run `aidlc plugin sync`".to_owned());
    Diagnostic::warning(
        Code::StalePluginCopy,
        format!(
            "the composed plugins cannot be recomposed now: {}; `aidlc plugin sync` would refuse the same way",
            error.headline()
        ),
    )
    .in_file(Utf8Path::new(LOCK_FILE_NAME))
    .with_help(help)
}
