//! `aidlc compile`'s warning that a composed plugin changed at its source since it was composed
//! (docs/decisions.md D55): the compile reads the installed copies, so a graph compiled after
//! the author edited the plugin is not the plugin's as it now is, and the compile says so
//! rather than reporting green in silence.
//!
//! Data flow: `aidlc.lock.json` (absent: nothing to say) → the no-op sync's record, whose stamps
//! prove that nothing a sync reads changed since it last composed (D51) → else each recorded
//! path plugin's source read and its integrity compared with the lock's
//! (`operations::changed_sources`) → one `stale-plugin-copy` warning on `aidlc.lock.json`.
//!
//! Invariants: nothing here writes or takes the audit lock; a lock file or a source that cannot
//! be read is a warning that says so, never silence.

use crate::compile::discover::Layout;
use crate::leaves::diagnostics::{Code, Diagnostic};
use crate::plugin::PluginError;
use crate::plugin::lock_file::{self, LOCK_FILE_NAME};
use crate::plugin::operations::{self, RecordedSource};
use crate::plugin::sync_record;
use crate::plugin::tree::FromDisk;

const SYNC_HELP: &str =
    "run `aidlc plugin sync` to compose it again (`aidlc compile --watch` does it on each change)";

/// The warnings for the install `layout` names: none without composed plugins or when no
/// recorded path plugin's source changed.
pub fn compile_warnings(layout: &Layout) -> Vec<Diagnostic> {
    if !lock_file::lock_path(&layout.project_dir).is_file()
        || sync_record::check(layout, &[]).is_some()
    {
        return Vec::new();
    }
    match operations::changed_sources(layout, &FromDisk) {
        Ok(check) if check.changed.is_empty() => Vec::new(),
        Ok(check) => vec![changed_warning(&check.changed)],
        Err(error) => vec![unreadable_warning(&error)],
    }
}

fn changed_warning(changed: &[RecordedSource]) -> Diagnostic {
    let names: Vec<String> = changed
        .iter()
        .map(|plugin| {
            format!(
                "plugin \"{}\" changed at its source {}",
                plugin.name, plugin.source
            )
        })
        .collect();
    let their = if changed.len() == 1 { "its" } else { "their" };
    Diagnostic::warning(
        Code::StalePluginCopy,
        format!(
            "{} since it was composed: this compile read {their} installed copies, which are stale",
            names.join(", ")
        ),
    )
    .in_file(LOCK_FILE_NAME)
    .with_help(SYNC_HELP)
}

fn unreadable_warning(error: &PluginError) -> Diagnostic {
    Diagnostic::warning(
        Code::StalePluginCopy,
        format!(
            "cannot tell whether the composed plugins are current: {}",
            error.headline()
        ),
    )
    .in_file(LOCK_FILE_NAME)
    .with_help("fix the lock file or the plugin's source, then run `aidlc plugin sync`")
}
