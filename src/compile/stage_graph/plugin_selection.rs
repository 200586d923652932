//! The plugin selection at compile (docs/decisions.md D14): `harness.json`'s `plugins` key read
//! into the enabled set, which stages it disables (`"enabled": false` on their nodes, written by
//! `emit`), the closure check (an enabled stage's required artifact whose only producers are
//! disabled is an error), and the ordering edges the selection makes vacuous (for `doctor`).
//!
//! Invariants, as the reference's `applyPluginSelection` / `validateSelectionClosure` /
//! `selectionDroppedOrderingEdges`:
//! - with no `harness.json`, or one without `plugins`, every stage is enabled and the outputs
//!   are the bytes of a compile that knows nothing of selection;
//! - a stage is enabled when it is an initialization stage or its plugin (`aidlc` for a stage
//!   that names none) is selected;
//! - a malformed selection is an error diagnostic pointing into `harness.json`, never "all
//!   enabled".

use std::collections::{BTreeMap, BTreeSet};

use camino::Utf8PathBuf;

use crate::compile::db::{Project, SourceFile};
use crate::compile::parse::{scope_catalog, source_text};
use crate::compile::stage_graph::numbering::dedup;
use crate::compile::stage_graph::plugins_key::{
    CORE_PLUGIN, Selection, is_stage_enabled, selection_of_text,
};
use crate::compile::stage_graph::stage_chunks::{
    StageChunk, each_stage_with, gathered_facts_of_chunk,
};
use crate::compile::syntax::stage::Located;
use crate::leaves::diagnostics::{Code, Diagnostic};

/// The selection `harness.json` makes, and what is wrong with the file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompiledSelection {
    /// The enabled plugins; `None` when every plugin is enabled (no file, no key, or a file
    /// refused below: its error keeps the compile from writing anything).
    pub enabled: Selection,
    /// `harness.json`'s display path and the span of its `plugins` value, when it has one.
    pub plugins_at: Option<(Utf8PathBuf, std::ops::Range<usize>)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// `harness.json`'s selection. Reads only that file, so editing anything else leaves it (and
/// every stage's node, which reads it) as it was.
#[salsa::tracked(returns(ref))]
pub fn plugin_selection(db: &dyn salsa::Database) -> CompiledSelection {
    let Some(file) = *Project::get(db).harness_json(db) else {
        return CompiledSelection::default();
    };
    let path = file.path(db).clone();
    let refused = |diagnostic| CompiledSelection {
        diagnostics: vec![diagnostic],
        ..CompiledSelection::default()
    };
    let text = match source_text(db, file) {
        Ok(text) => text,
        Err(diagnostic) => return refused(diagnostic),
    };
    match selection_of_text(text) {
        Ok(enabled) => CompiledSelection {
            plugins_at: enabled
                .as_ref()
                .and_then(|_| crate::compile::stage_graph::plugins_key::plugins_value_span(text))
                .map(|span| (path, span)),
            enabled,
            diagnostics: Vec::new(),
        },
        Err(error) => refused(
            Diagnostic::error(Code::InvalidPluginSelection, error.message)
                .in_file(&path)
                .with_help(error.help)
                .at_opt(error.span),
        ),
    }
}

/// The parts of one stage the selection checks read: a projection of `parsed_stage`, so an
/// edit to anything else in a stage does not re-run them over every stage.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageSelectionFacts {
    pub slug: String,
    pub plugin: Option<String>,
    pub phase: String,
    /// `produces` then `optional_produces`, first occurrence of each.
    pub produced: Vec<String>,
    /// The artifacts of the `consumes` items marked `required: true`.
    pub required: Vec<Located<String>>,
    pub requires_stage: Vec<String>,
}

impl StageSelectionFacts {
    fn owner(&self) -> &str {
        self.plugin.as_deref().unwrap_or(CORE_PLUGIN)
    }

    fn is_enabled(&self, selection: Option<&BTreeSet<String>>) -> bool {
        is_stage_enabled(selection, self.plugin.as_deref(), &self.phase)
    }
}

/// The selection facts of one chunk of the stage list (see [`crate::compile::stage_graph::stage_chunks`]).
#[salsa::tracked(returns(ref))]
pub fn stage_selection_facts_in_chunk<'db>(
    db: &'db dyn salsa::Database,
    chunk: StageChunk<'db>,
) -> Vec<Option<StageSelectionFacts>> {
    gathered_facts_of_chunk(db, chunk, |stage| StageSelectionFacts {
        slug: stage.slug.value.clone(),
        plugin: stage.plugin.as_ref().map(|plugin| plugin.value.clone()),
        phase: stage.phase.value.clone(),
        produced: dedup(stage.produced_artifacts().map(str::to_owned)),
        required: stage
            .consumes
            .iter()
            .filter(|consume| consume.required)
            .map(|consume| consume.artifact.clone())
            .collect(),
        requires_stage: stage
            .requires_stage
            .iter()
            .map(|required| required.value.clone())
            .collect(),
    })
}

/// The selection's diagnostics: `harness.json`'s own, a selected name no stage or scope
/// belongs to, and the closure (each enabled stage's required artifact whose producers are all
/// disabled). Empty when every plugin is enabled.
#[salsa::tracked(returns(ref))]
pub fn selection_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let selection = plugin_selection(db);
    let mut diagnostics = selection.diagnostics.clone();
    diagnostics.extend(freeform_default_diagnostics(db, selection));
    let Some(enabled) = selection.enabled.as_ref() else {
        return diagnostics;
    };
    let stages: Vec<(&SourceFile, &StageSelectionFacts)> =
        each_stage_with(db, stage_selection_facts_in_chunk)
            .filter_map(|(entry, facts)| Some((&entry.file, facts?)))
            .collect();
    diagnostics.extend(unknown_selected_plugins(db, selection, &stages));
    let mut producers: BTreeMap<&str, Vec<&StageSelectionFacts>> = BTreeMap::new();
    for (_, stage) in &stages {
        for artifact in &stage.produced {
            producers.entry(artifact.as_str()).or_default().push(stage);
        }
    }
    for &(&file, stage) in &stages {
        if !stage.is_enabled(Some(enabled)) {
            continue;
        }
        for artifact in &stage.required {
            let Some(producers) = producers.get(artifact.value.as_str()) else {
                continue;
            };
            if producers
                .iter()
                .any(|producer| producer.is_enabled(Some(enabled)))
            {
                continue;
            }
            diagnostics.push(closure_diagnostic(
                db, file, stage, artifact, producers, selection,
            ));
        }
    }
    diagnostics
}

/// More than one enabled scope nominating the freeform default, as the reference refuses it
/// when its compile loads the scopes (docs/decisions.md D51): one error on each nominating
/// scope's `freeform_default` value. A scope is enabled when its plugin (`aidlc` for a scope
/// that names none) is selected, so a disabled plugin's nomination does not count.
fn freeform_default_diagnostics(
    db: &dyn salsa::Database,
    selection: &CompiledSelection,
) -> Vec<Diagnostic> {
    let catalog = scope_catalog(db);
    let owner = |name: &str| catalog.owners.get(name).map_or(CORE_PLUGIN, String::as_str);
    let nominated: Vec<(&String, &(Utf8PathBuf, std::ops::Range<usize>))> = catalog
        .freeform_defaults
        .iter()
        .filter(|(name, _)| {
            selection
                .enabled
                .as_ref()
                .is_none_or(|enabled| enabled.contains(owner(name)))
        })
        .collect();
    if nominated.len() < 2 {
        return Vec::new();
    }
    let names: Vec<&str> = nominated.iter().map(|(name, _)| name.as_str()).collect();
    let owners: Vec<String> = nominated
        .iter()
        .map(|(name, _)| format!("{name} (plugin {})", owner(name)))
        .collect();
    nominated
        .iter()
        .map(|(name, (path, span))| {
            let mut diagnostic = Diagnostic::error(
                Code::InvalidScopeFile,
                format!(
                    "Multiple enabled scopes declare freeform_default: true ({}). At most one enabled scope may nominate the freeform default.",
                    names.join(", ")
                ),
            )
            .in_file(path.clone())
            .at(span.clone())
            .with_label(format!("scope \"{name}\" of plugin {} nominates it here", owner(name)))
            .with_help(format!(
                "the nominating scopes are {}: keep `freeform_default: true` in one of them, or leave the other plugins out of harness.json's `plugins`",
                owners.join(", ")
            ));
            for (other, (other_path, other_span)) in &nominated {
                if other != name {
                    diagnostic = diagnostic.with_related(
                        other_path.clone(),
                        Some(other_span.clone()),
                        format!("scope \"{other}\" nominates it too"),
                    );
                }
            }
            diagnostic
        })
        .collect()
}

/// A selected name that is neither `aidlc` nor the plugin of a stage or a scope: a typo would
/// otherwise disable the plugin it meant, silently.
fn unknown_selected_plugins(
    db: &dyn salsa::Database,
    selection: &CompiledSelection,
    stages: &[(&SourceFile, &StageSelectionFacts)],
) -> Vec<Diagnostic> {
    let mut known: BTreeSet<&str> = BTreeSet::from([CORE_PLUGIN]);
    known.extend(
        stages
            .iter()
            .filter_map(|(_, stage)| stage.plugin.as_deref()),
    );
    let catalog = scope_catalog(db);
    known.extend(catalog.owners.values().map(String::as_str));
    let Some(enabled) = selection.enabled.as_ref() else {
        return Vec::new();
    };
    enabled
        .iter()
        .filter(|name| !known.contains(name.as_str()))
        .map(|name| {
            let mut diagnostic = Diagnostic::error(
                Code::InvalidPluginSelection,
                format!(
                    "harness.json field \"plugins\" names \"{name}\", which no stage or scope of this install belongs to (known: {})",
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            )
            .with_help("name a composed plugin (`aidlc plugin list`), or compose it first with `aidlc plugin add`");
            if let Some((path, span)) = &selection.plugins_at {
                diagnostic = diagnostic.in_file(path.clone()).at(span.clone());
            }
            diagnostic
        })
        .collect()
}

fn closure_diagnostic(
    db: &dyn salsa::Database,
    file: SourceFile,
    stage: &StageSelectionFacts,
    artifact: &Located<String>,
    producers: &[&StageSelectionFacts],
    selection: &CompiledSelection,
) -> Diagnostic {
    let mut producer_list: Vec<String> = producers
        .iter()
        .map(|producer| format!("{} ({})", producer.slug, producer.owner()))
        .collect();
    producer_list.sort();
    let plugins: BTreeSet<&str> = producers.iter().map(|producer| producer.owner()).collect();
    let plugins = plugins.into_iter().collect::<Vec<_>>().join(", ");
    let mut diagnostic = Diagnostic::error(
        Code::DisabledProducers,
        format!(
            "Plugin selection closure failed: enabled stage \"{}\" consumes required artifact \"{}\", but its only producer(s) are disabled: {}. Enable plugin(s) {plugins} or disable the consuming stage.",
            stage.slug,
            artifact.value,
            producer_list.join(", ")
        ),
    )
    .in_file(file.path(db).clone())
    .at(artifact.span.clone())
    .with_help(format!(
        "add {plugins} to \"plugins\" in harness.json, or leave out the plugin of stage \"{}\"",
        stage.slug
    ));
    if let Some((path, span)) = &selection.plugins_at {
        diagnostic = diagnostic.with_related(path.clone(), Some(span.clone()), "the selection");
    }
    diagnostic
}

/// Whether the stage of `plugin` in `phase` is enabled by the compiled selection.
pub fn stage_is_enabled(db: &dyn salsa::Database, plugin: Option<&str>, phase: &str) -> bool {
    is_stage_enabled(plugin_selection(db).enabled.as_ref(), plugin, phase)
}

/// Enabled stages' `requires_stage` edges to a stage the selection disables, as the
/// reference's doctor lists them: `<slug> requires <dependency> (<plugin>, disabled)`, sorted.
/// Not an error: the edge is vacuous when the dependency never runs.
pub fn dropped_ordering_edges(db: &dyn salsa::Database) -> Vec<String> {
    let selection = plugin_selection(db);
    let Some(enabled) = selection.enabled.as_ref() else {
        return Vec::new();
    };
    let stages: Vec<&StageSelectionFacts> = each_stage_with(db, stage_selection_facts_in_chunk)
        .filter_map(|(_, facts)| facts)
        .collect();
    let by_slug: BTreeMap<&str, &StageSelectionFacts> = stages
        .iter()
        .map(|stage| (stage.slug.as_str(), *stage))
        .collect();
    let mut dropped = Vec::new();
    for stage in stages
        .iter()
        .filter(|stage| stage.is_enabled(Some(enabled)))
    {
        for dependency in &stage.requires_stage {
            let Some(dependency_stage) = by_slug.get(dependency.as_str()) else {
                continue;
            };
            if dependency_stage.is_enabled(Some(enabled)) {
                continue;
            }
            dropped.push(format!(
                "{} requires {dependency} ({}, disabled)",
                stage.slug,
                dependency_stage.owner()
            ));
        }
    }
    dropped.sort();
    dropped
}
