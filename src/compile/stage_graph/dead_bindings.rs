//! The gate-fired bindings of a stage that can never fire: gate dispatch runs a sensor over the
//! stage's declared outputs only, so an imported gate-fired sensor whose `matches` none of the
//! places those outputs can be written matches (or a stage that declares no outputs) is a
//! `dead-sensor-binding`. The check belongs to the graph because it depends on the graph format
//! being written (D13): in a format without `fire_on` every binding is write-fired, and none can
//! be dead at the gate.

use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::db::SourceFile;
use crate::compile::parse::parsed_stage;
use crate::compile::resolve::{SensorName, compiled_matches, sensor_binding, sensor_registry};
use crate::compile::stage_graph::format_choice::graph_format;
use crate::compile::syntax::stage::StageDefinition;
use crate::leaves::diagnostics::{Code, Diagnostic};
use crate::protocol::output_paths::{FolderNames, StageOutputs, declared_output_paths};
use crate::protocol::selection::{FireOn, Severity};
use crate::protocol::stage_node::SensorEntry;

/// Where the stage's declared outputs can be written, placed in
/// [`FolderNames::REPRESENTATIVE`]: the compile knows no real space, record, unit or repository.
fn representative_output_paths(stage: &StageDefinition) -> Vec<Utf8PathBuf> {
    let outputs = StageOutputs {
        slug: &stage.slug.value,
        phase: &stage.phase.value,
        for_each: stage.for_each.as_deref(),
        artifacts: stage.produced_artifacts().collect(),
    };
    declared_output_paths(&outputs, &FolderNames::REPRESENTATIVE)
}

/// Whether a binding can never fire at the gate: it is gate-fired, and no place where the
/// stage's outputs can be written (`output_paths`) is one its glob matches (`glob_matches`,
/// true for every path when the binding has no glob).
///
/// The one rule for a dead binding: the compile's `dead-sensor-binding` (which `doctor`
/// counts) and the gate report's dead bindings both ask it, so they name the same bindings.
pub fn binding_never_fires_at_the_gate(
    fire_on: FireOn,
    output_paths: &[Utf8PathBuf],
    glob_matches: impl Fn(&Utf8Path) -> bool,
) -> bool {
    fire_on == FireOn::Gate && !output_paths.iter().any(|path| glob_matches(path))
}

/// The stage's dead gate bindings (see the module comment): an error for a blocking sensor (its
/// gate would wait for a verdict that never comes), a warning for an advisory one.
///
/// Reads the stage, the binding and compiled glob of each import, and the whole registry only
/// when it has found a dead binding (for the manifest's `matches` span).
#[salsa::tracked(returns(ref))]
pub fn dead_gate_bindings(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let Some(stage) = &parsed_stage(db, file).definition else {
        return Vec::new();
    };
    // A graph format without `fire_on` makes every binding write-fired (D13): nothing fires at
    // the gate, so no gate binding can be dead (the format's own warning says so instead).
    if !graph_format(db).0.carries_dispatch_fields() {
        return Vec::new();
    }
    let mut output_paths: Option<Vec<Utf8PathBuf>> = None;
    let mut checked = std::collections::BTreeSet::new();
    let mut diagnostics = Vec::new();
    for import in &stage.sensors {
        if !checked.insert(import.value.as_str()) {
            continue;
        }
        let name = SensorName::new(db, import.value.clone());
        let Some(binding) = sensor_binding(db, name) else {
            continue;
        };
        if binding.fire_on != FireOn::Gate {
            continue;
        }
        let paths = output_paths.get_or_insert_with(|| representative_output_paths(stage));
        let glob = compiled_matches(db, name);
        let dead = binding_never_fires_at_the_gate(binding.fire_on, paths, |path| {
            glob.as_ref().is_none_or(|glob| glob.matches_relative(path))
        });
        if dead {
            diagnostics.push(dead_binding_diagnostic(
                db,
                file.path(db),
                stage,
                &import.span,
                binding,
                paths,
            ));
        }
    }
    diagnostics
}

fn dead_binding_diagnostic(
    db: &dyn salsa::Database,
    stage_file: &Utf8Path,
    stage: &StageDefinition,
    import_span: &Range<usize>,
    binding: &SensorEntry,
    output_paths: &[Utf8PathBuf],
) -> Diagnostic {
    let id = &binding.id;
    let slug = &stage.slug.value;
    let severity = binding.default_severity.as_str();
    let matches_site = sensor_registry(db).matches_sites.get(id);
    let manifest = matches_site.map_or(binding.path.as_str(), |(path, _)| path.as_str());
    let (message, help) = match (output_paths.first(), binding.matches.as_deref()) {
        (Some(example), Some(pattern)) => (
            format!(
                "{severity} gate sensor \"{id}\" can never fire for stage \"{slug}\": its matches \"{pattern}\" matches none of the stage's declared outputs"
            ),
            format!(
                "change `matches` in {manifest} so that it covers where the stage's outputs are written (such as {example}), or remove `{id}` from this stage's `sensors:`"
            ),
        ),
        _ => (
            format!(
                "{severity} gate sensor \"{id}\" can never fire for stage \"{slug}\": the stage declares no outputs for it to check"
            ),
            format!(
                "declare the stage's outputs in `produces:`, or remove `{id}` from this stage's `sensors:`"
            ),
        ),
    };
    let diagnostic = match binding.default_severity {
        Severity::Blocking => Diagnostic::error(Code::DeadSensorBinding, message),
        Severity::Advisory => Diagnostic::warning(Code::DeadSensorBinding, message),
    }
    .in_file(stage_file)
    .at(import_span.clone())
    .with_label("gate dispatch never runs this sensor for this stage")
    .with_help(help);
    match (matches_site, output_paths.is_empty()) {
        (Some((path, span)), false) => diagnostic.with_related(
            path.clone(),
            Some(span.clone()),
            format!(
                "this glob matches none of the {} paths where the outputs of \"{slug}\" can be written",
                output_paths.len()
            ),
        ),
        _ => diagnostic,
    }
}
