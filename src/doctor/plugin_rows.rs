//! The plugin rows (docs/decisions.md D14): what is composed (`aidlc.lock.json`) and
//! selected (`harness.json` `plugins`, with each plugin's enabled-stage count, as the
//! reference's doctor reports it), the drift between what was composed and the installed copies
//! (the lock's recorded hashes against the files' bytes), the drift between what was composed
//! and each path plugin's own folder (D55), an interrupted composition, and the
//! ordering edges the selection drops (an advisory, as the reference's doctor lists them).
//!
//! Invariant: reads only, takes no lock, recovers nothing (the next `aidlc plugin add|remove|sync`
//! finishes an interrupted composition; this row only says one is pending).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::compile::db::CompilerDatabase;
use crate::compile::discover::Layout;
use crate::compile::stage_graph::plugin_selection::{
    CompiledSelection, dropped_ordering_edges, plugin_selection, stage_selection_facts_in_chunk,
};
use crate::compile::stage_graph::plugins_key::{CORE_PLUGIN, is_enabled};
use crate::compile::stage_graph::stage_chunks::each_stage_with;
use crate::leaves::english::counted;
use crate::plugin::journal::JOURNAL_DIR;
use crate::plugin::lock_file::{self, Lock};
use crate::plugin::operations::{RecordedSource, changed_sources};
use crate::plugin::tree::FromDisk;

use super::Row;

/// The most paths or edges a row names before it says how many more there are.
const SHOWN: usize = 5;

pub(super) fn rows(db: &CompilerDatabase, layout: &Layout) -> Vec<Row> {
    let mut rows = Vec::new();
    let lock = lock_file::read_lock(&layout.project_dir, layout.harness.dir_name());
    let interrupted = layout.project_dir.join(JOURNAL_DIR).exists();
    if !interrupted
        && lock.as_ref().is_ok_and(Lock::is_empty)
        && *plugin_selection(db) == CompiledSelection::default()
        && !each_stage_with(db, stage_selection_facts_in_chunk)
            .any(|(_, facts)| facts.is_some_and(|facts| facts.plugin.is_some()))
    {
        // An install that knows nothing of plugins gets no plugin rows.
        return rows;
    }
    rows.push(match &lock {
        Ok(lock) => selection_row(db, lock),
        Err(problem) => Row::fail(
            format!(
                "Plugins: {} cannot be read: {}",
                lock_file::LOCK_FILE_NAME,
                problem.headline()
            ),
            "fix or restore aidlc.lock.json (it records what was composed)",
        ),
    });
    if let Ok(lock) = &lock {
        rows.push(drift_row(layout, lock));
        if let Some(row) = source_row(layout) {
            rows.push(row);
        }
    }
    if interrupted {
        rows.push(Row::warn(
            format!("Plugin composition: interrupted ({JOURNAL_DIR}/ is pending)"),
            "run `aidlc plugin sync`: it finishes or rolls back the interrupted composition first",
        ));
    }
    if plugin_selection(db).enabled.is_some() {
        rows.push(dropped_edges_row(db));
    }
    rows
}

/// Composed and selected, with each plugin's enabled stages of its stages.
fn selection_row(db: &CompilerDatabase, lock: &Lock) -> Row {
    let selection = plugin_selection(db);
    if !selection.diagnostics.is_empty() {
        let first = &selection.diagnostics[0];
        return Row::fail(
            format!("Plugin selection: {}", first.message),
            "fix `plugins` in harness.json (a list of plugin names), or remove the key to enable every plugin",
        );
    }
    let enabled = selection.enabled.as_ref();
    let mut stages_by_plugin: BTreeMap<String, (usize, usize)> = std::iter::once(CORE_PLUGIN)
        .chain(lock.plugins.keys().map(String::as_str))
        .map(|name| (name.to_owned(), (0, 0)))
        .collect();
    for (_, facts) in each_stage_with(db, stage_selection_facts_in_chunk) {
        let Some(facts) = facts else { continue };
        let owner = facts
            .plugin
            .clone()
            .unwrap_or_else(|| CORE_PLUGIN.to_owned());
        let counts = stages_by_plugin.entry(owner).or_default();
        counts.1 += 1;
        if crate::compile::stage_graph::plugins_key::is_stage_enabled(
            enabled,
            facts.plugin.as_deref(),
            &facts.phase,
        ) {
            counts.0 += 1;
        }
    }
    let described: Vec<String> = stages_by_plugin
        .iter()
        .map(|(name, (on, all))| {
            let state = if is_enabled(enabled, name) {
                "enabled"
            } else {
                "disabled"
            };
            let version = lock
                .plugins
                .get(name)
                .map_or(String::new(), |plugin| format!(" {}", plugin.version));
            format!("{name}{version} {state}, {on} of {all} stages enabled")
        })
        .collect();
    let selected = match enabled {
        None => "all enabled (no selection)".to_owned(),
        Some(names) if names.is_empty() => "selected none".to_owned(),
        Some(names) => format!(
            "selected {}",
            names.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
    };
    Row::pass(format!(
        "Plugins: {} composed, {selected} ({})",
        lock.plugins.len(),
        described.join("; ")
    ))
}

/// The installed copies against the bytes the lock records.
fn drift_row(layout: &Layout, lock: &Lock) -> Row {
    let mut changed: Vec<String> = Vec::new();
    for (name, plugin) in &lock.plugins {
        changed.extend(
            plugin
                .changed_files(&layout.project_dir)
                .into_iter()
                .map(|path| format!("{path} ({name})")),
        );
    }
    changed.extend(
        lock.changed_stages(&layout.project_dir)
            .into_iter()
            .map(|path| format!("{path} (composed stage)")),
    );
    if changed.is_empty() {
        return Row::pass(format!(
            "Plugin files: every composed file holds the bytes {} records",
            lock_file::LOCK_FILE_NAME
        ));
    }
    Row::warn(
        format!(
            "Plugin files: {} installed cop{} differ{} from what was composed: {}",
            changed.len(),
            if changed.len() == 1 { "y" } else { "ies" },
            if changed.len() == 1 { "s" } else { "" },
            shortened(&changed)
        ),
        "edit the plugin's own files and run `aidlc plugin sync`; an edited installed copy is kept, not overwritten, and is lost to the plugin's updates",
    )
}

/// The path plugins' own folders against what was composed from them (D55): `None` when the
/// lock records no path plugin.
fn source_row(layout: &Layout) -> Option<Row> {
    let check = match changed_sources(layout, &FromDisk) {
        Ok(check) => check,
        Err(error) => {
            return Some(Row::fail(
                format!("Plugin sources: cannot be read: {}", error.headline()),
                "fix the plugin's source, then run `aidlc plugin sync`",
            ));
        }
    };
    let named = |plugins: &[RecordedSource]| -> Vec<String> {
        plugins
            .iter()
            .map(|plugin| format!("{} ({})", plugin.name, plugin.source))
            .collect()
    };
    if !check.changed.is_empty() {
        return Some(Row::warn(
            format!(
                "Plugin sources: {} changed since {} composed ({} records another integrity); the installed copies are stale",
                shortened(&named(&check.changed)),
                if check.changed.len() == 1 {
                    "it was"
                } else {
                    "they were"
                },
                lock_file::LOCK_FILE_NAME
            ),
            "run `aidlc plugin sync` to compose them again",
        ));
    }
    if !check.not_there.is_empty() {
        return Some(Row::warn(
            format!(
                "Plugin sources: not there, so not compared with the installed copies: {}",
                shortened(&named(&check.not_there))
            ),
            "restore the plugin's folder (or run `aidlc plugin remove <name>`); `aidlc plugin sync` refuses a source that is not there",
        ));
    }
    (check.checked > 0).then(|| {
        Row::pass(format!(
            "Plugin sources: {} as composed",
            counted(check.checked, "path plugin")
        ))
    })
}

/// Enabled stages' `requires_stage` edges to a stage the selection disables.
fn dropped_edges_row(db: &CompilerDatabase) -> Row {
    let dropped = dropped_ordering_edges(db);
    if dropped.is_empty() {
        return Row::pass("Selection ordering edges: none dropped");
    }
    Row::warn(
        format!(
            "Selection ordering edges: {} dropped (the required stage is disabled, so the edge orders nothing): {}",
            dropped.len(),
            shortened(&dropped)
        ),
        "advisory: enable the required stages' plugins in harness.json if the order matters",
    )
}

fn shortened(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        let _ = write!(text, " and {} more", items.len() - SHOWN);
    }
    text
}
