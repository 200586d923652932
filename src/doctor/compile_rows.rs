//! The compile's rows: the compile run in memory as `compile --check` runs it (nothing written),
//! and what it says: errors, drift of the two outputs, dead bindings (a fail for a blocking one),
//! files discovery skips, the reference's paired sensor coverage, and pairings that name no
//! manifest.

use std::collections::BTreeSet;

use crate::compile::db::CompilerDatabase;
use crate::compile::discover::{self, Layout};
use crate::compile::{self, CompileOutcome};
use crate::leaves::diagnostics::{Code, Diagnostic, Severity};
use crate::runtime::dispatch::compiled_graph::load_graph;

use super::Row;

pub(super) fn rows(db: &CompilerDatabase, layout: &Layout) -> Vec<Row> {
    compile::compute_in_parallel(db);
    let outcome = compile::compile(db);
    let mut rows = vec![errors_row(&outcome), drift_row(layout, &outcome)];
    rows.extend(stage_file_rows(layout));
    rows.extend([
        dead_bindings_row(&outcome.diagnostics),
        skipped_files_row(&outcome.diagnostics),
    ]);
    rows.extend(pairing_rows(layout));
    rows.push(linked_outside_row(layout));
    rows
}

/// The sensor manifests and stage files read through a link that leaves the project: a warning
/// row naming each and where it leads (a team may share them so on purpose; never silent).
fn linked_outside_row(layout: &Layout) -> Row {
    let linked = discover::links_out::inputs_linked_outside(layout);
    if linked.is_empty() {
        return Row::pass(
            "Linked inputs: no sensor manifest or stage file leads out of the project",
        );
    }
    Row::warn(
        format!(
            "Linked inputs: {} read through a link that leaves the project ({})",
            crate::leaves::english::counted(linked.len(), "file"),
            linked
                .iter()
                .map(|linked| format!("{} -> {}", linked.shown, linked.target))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        discover::links_out::LINKED_OUTSIDE_HELP,
    )
}

fn shown(diagnostic: &Diagnostic) -> String {
    match &diagnostic.file {
        Some(file) => format!("{file}: {}", diagnostic.message),
        None => diagnostic.message.clone(),
    }
}

fn errors_row(outcome: &CompileOutcome) -> Row {
    let errors: Vec<&Diagnostic> = outcome
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .collect();
    match errors.first() {
        None => Row::pass(format!(
            "Compile: {} stages and {} sensors, no errors",
            outcome.n_stages, outcome.n_sensors
        )),
        Some(first) => Row::fail(
            format!(
                "Compile: {} (first: {})",
                crate::leaves::english::counted(errors.len(), "error"),
                shown(first)
            ),
            "run `aidlc compile` and fix what it reports",
        ),
    }
}

/// What `compile --check` sees: the outputs on disk against the compile's.
fn drift_row(layout: &Layout, outcome: &CompileOutcome) -> Row {
    if outcome.n_errors() > 0 {
        return Row::fail(
            "Stage graph drift: not checked (the compile has errors)",
            "fix the compile errors, then run `aidlc compile`",
        );
    }
    let graph = layout.display(&layout.stage_graph_path);
    if !layout.stage_graph_path.is_file() {
        return Row::fail(
            format!("Stage graph: {graph} does not exist"),
            "run `aidlc compile`",
        );
    }
    if let Err(error) = load_graph(&layout.stage_graph_path) {
        return Row::fail(
            format!("Stage graph: {graph} cannot be used: {error}"),
            "run `aidlc compile`",
        );
    }
    let drift = compile::check_outputs(layout, outcome);
    if drift.is_clean() {
        return Row::pass(format!(
            "Stage graph drift: none ({graph} and scope-grid.json match the sources)"
        ));
    }
    let mut parts = Vec::new();
    if let Some(changes) = &drift.graph {
        let mut stages: Vec<&str> = Vec::new();
        for (kind, slugs) in [
            ("changed", &changes.modified),
            ("added", &changes.added),
            ("removed", &changes.removed),
        ] {
            if !slugs.is_empty() {
                stages.push(kind);
                parts.push(format!("{kind}: {}", slugs.join(", ")));
            }
        }
        if stages.is_empty() {
            parts.push("stage-graph.json framing".to_owned());
        }
    }
    if drift.grid {
        parts.push("scope-grid.json".to_owned());
    }
    Row::fail(
        format!(
            "Stage graph drift: the compiled files are stale ({})",
            parts.join("; ")
        ),
        "run `aidlc compile` (the hook and the gates read the stale graph until then)",
    )
}

/// The reference's graph rows (D46): graph entries with no stage file (a fail: the hook and the
/// gates would run a stage that no longer exists), and stage files the graph does not have yet
/// (advisory until the next compile). Every entry counts, the ones the plugin selection
/// disabled (`"enabled": false`) too: a disabled stage is compiled, and its file is its file.
/// Nothing when the graph cannot be read (the drift row says why).
fn stage_file_rows(layout: &Layout) -> Vec<Row> {
    let Ok(graph) = load_graph(&layout.stage_graph_path) else {
        return Vec::new();
    };
    let on_disk: BTreeSet<String> = discover::list_stage_files(&layout.stages_dir)
        .into_iter()
        .filter_map(|(_, path)| path.file_stem().map(str::to_owned))
        .collect();
    let in_graph: BTreeSet<String> = graph
        .nodes
        .iter()
        .chain(&graph.disabled)
        .map(|node| node.slug.clone())
        .collect();
    let orphans: Vec<&str> = in_graph.difference(&on_disk).map(String::as_str).collect();
    let uncompiled: Vec<&str> = on_disk.difference(&in_graph).map(String::as_str).collect();
    let orphan_row = if orphans.is_empty() {
        Row::pass(format!(
            "Orphan stage files: {} graph entries all have files",
            in_graph.len()
        ))
    } else {
        Row::fail(
            format!(
                "Orphan stage files: {} graph entries have no file on disk ({})",
                orphans.len(),
                orphans.join(", ")
            ),
            "run `aidlc compile` to drop them from the graph, or restore the stage files",
        )
    };
    let uncompiled_row = if uncompiled.is_empty() {
        Row::pass("Uncompiled stage files: 0 stage files missing from the compiled graph")
    } else {
        Row::warn(
            format!(
                "Uncompiled stage files: {} stage file(s) not in the compiled graph (advisory, will not execute until recompiled): {}",
                uncompiled.len(),
                uncompiled.join(", ")
            ),
            "run `aidlc compile` to include them",
        )
    };
    vec![orphan_row, uncompiled_row]
}

fn dead_bindings_row(diagnostics: &[Diagnostic]) -> Row {
    let dead: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Code::DeadSensorBinding)
        .collect();
    if dead.is_empty() {
        return Row::pass(
            "Dead sensor bindings: none (every gate glob can match its stage's outputs)",
        );
    }
    let blocking = dead.iter().any(|diagnostic| diagnostic.is_error());
    let label = format!(
        "Dead sensor bindings: {} ({})",
        dead.len(),
        dead.iter()
            .map(|diagnostic| shown(diagnostic))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let fix = "fix the sensor's `matches` or the stage's outputs (`aidlc compile` shows where)";
    if blocking {
        Row::fail(label, fix)
    } else {
        Row::warn(label, fix)
    }
}

fn skipped_files_row(diagnostics: &[Diagnostic]) -> Row {
    let skipped: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|diagnostic| {
            matches!(
                diagnostic.code,
                Code::SkippedSensorFile | Code::SkippedStageFile
            ) && diagnostic.severity == Severity::Warning
        })
        .collect();
    if skipped.is_empty() {
        return Row::pass("Files discovery skips: none in the sensors and stages folders");
    }
    Row::warn(
        format!(
            "Files discovery skips: {} never load ({})",
            crate::leaves::english::counted(skipped.len(), "file"),
            skipped
                .iter()
                .filter_map(|diagnostic| diagnostic.file.as_ref().map(ToString::to_string))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        skipped
            .iter()
            .filter_map(|diagnostic| diagnostic.help.clone())
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// The `pairing:` of each rule file that sets one, as `(display path, value)`.
fn rule_pairings(layout: &Layout) -> Vec<(String, String)> {
    discover::list_rule_files(&layout.rules_dir)
        .into_iter()
        .filter_map(|(_, path)| {
            let text = crate::leaves::fs_util::read_input_text(&path).ok()?;
            let pairing = frontmatter_value(&text, "pairing")?;
            Some((layout.display(&path).to_string(), pairing))
        })
        .collect()
}

/// A top-level `key: value` of a file's frontmatter (quotes removed).
fn frontmatter_value(text: &str, key: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    lines
        .take_while(|line| line.trim_end() != "---")
        .find_map(|line| {
            let value = line.strip_prefix(key)?.strip_prefix(':')?.trim();
            Some(value.trim_matches(['"', '\'']).to_owned())
        })
        .filter(|value| !value.is_empty())
}

/// The reference's paired-sensor coverage row (always a pass), and ours: a pairing whose
/// sensor has no manifest at all.
fn pairing_rows(layout: &Layout) -> Vec<Row> {
    let pairings = rule_pairings(layout);
    let bound: BTreeSet<String> = load_graph(&layout.stage_graph_path)
        .map(|graph| {
            graph
                .nodes
                .iter()
                .flat_map(|node| node.sensors_applicable.iter().map(|entry| entry.id.clone()))
                .collect()
        })
        .unwrap_or_default();
    let feedforward = pairings
        .iter()
        .filter(|(_, pairing)| pairing == "feedforward-only")
        .count();
    let needing: Vec<&(String, String)> = pairings
        .iter()
        .filter(|(_, pairing)| pairing != "feedforward-only")
        .collect();
    let bare = |pairing: &str| pairing.strip_prefix("aidlc-").unwrap_or(pairing).to_owned();
    let unpaired: Vec<String> = needing
        .iter()
        .filter(|(_, pairing)| !bound.contains(&bare(pairing)))
        .map(|(file, pairing)| format!("unpaired: {file} → {pairing} (no stage binds it)"))
        .collect();
    let mut coverage = if needing.is_empty() {
        format!("Paired sensor coverage: no sensor-bound rules ({feedforward} feedforward-only)")
    } else {
        format!(
            "Paired sensor coverage: {}/{} guardrails paired ({feedforward} feedforward-only)",
            needing.len() - unpaired.len(),
            needing.len()
        )
    };
    if !unpaired.is_empty() {
        coverage = format!("{coverage}; {}", unpaired.join("; "));
    }
    let registry = crate::runtime::dispatch::registry::load_live_registry(layout);
    let missing: Vec<String> = needing
        .iter()
        .filter(|(_, pairing)| !registry.sensors.contains_key(&bare(pairing)))
        .map(|(file, pairing)| format!("{file} → {pairing}"))
        .collect();
    let manifests = if missing.is_empty() {
        Row::pass("Rule pairings: every paired sensor has a manifest")
    } else {
        Row::fail(
            format!(
                "Rule pairings: {} name{} no sensor manifest ({})",
                missing.len(),
                if missing.len() == 1 { "s" } else { "" },
                missing.join("; ")
            ),
            format!(
                "write {}/aidlc-<id>.md for each, or fix the rule's `pairing:`",
                layout.display(&layout.sensors_dir)
            ),
        )
    };
    vec![Row::pass(coverage), manifests]
}
