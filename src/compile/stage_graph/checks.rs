//! Checks across stage files: file stem vs slug, phase folders, duplicate slugs, duplicate
//! producers of a consumed artifact, unknown `requires_stage`, the edge-local number invariant
//! and the swarm advisory (D14 and D18).

use std::collections::BTreeMap;

use crate::compile::db::SourceFile;
use crate::compile::parse::parsed_stage;
use crate::compile::stage_graph::format_choice::graph_format;
use crate::compile::stage_graph::numbering::{dedup, number_key, stage_numbering};
use crate::compile::stage_graph::stage_chunks::{
    StageChunk, each_stage_with, gathered_facts_of_chunk,
};
use crate::compile::syntax::stage::{Located, PHASES};
use crate::leaves::diagnostics::{Code, Diagnostic};

/// The parts of one stage the cross-stage checks read, with the spans their diagnostics point
/// at. A projection of `parsed_stage`: an edit to a stage's `sensors:`, `scopes:` or prose
/// leaves it equal, so [`graph_diagnostics`] does not re-run over every stage.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageCheckFacts {
    pub slug: Located<String>,
    pub phase: Located<String>,
    pub mode: String,
    /// `for_each: unit-of-work` together with `workspace_requires: true`.
    pub is_unit_build: bool,
    /// `produces` then `optional_produces`, first occurrence of each.
    pub produced: Vec<String>,
    pub consumed: Vec<Located<String>>,
    pub requires_stage: Vec<Located<String>>,
    /// The authored fields that only some graph formats carry (`review_artifact`,
    /// `review_class`, `summary_confirmation`), by key alone: the span of a refused one is read
    /// from the parse when the diagnostic is made, so an edit that only moves these fields (a
    /// line added to `sensors:` above them) leaves the facts equal and the cross-stage checks
    /// do not re-run over every stage.
    pub format_dependent: Vec<&'static str>,
}

/// The check facts of one chunk of the stage list (see [`crate::compile::stage_graph::stage_chunks`]).
#[salsa::tracked(returns(ref))]
pub fn stage_check_facts_in_chunk<'db>(
    db: &'db dyn salsa::Database,
    chunk: StageChunk<'db>,
) -> Vec<Option<StageCheckFacts>> {
    gathered_facts_of_chunk(db, chunk, |stage| StageCheckFacts {
        slug: stage.slug.clone(),
        phase: stage.phase.clone(),
        mode: stage.mode.clone(),
        is_unit_build: stage.for_each.as_deref() == Some("unit-of-work")
            && stage.workspace_requires == Some(true),
        produced: dedup(stage.produced_artifacts().map(str::to_owned)),
        consumed: stage
            .consumes
            .iter()
            .map(|consume| consume.artifact.clone())
            .collect(),
        requires_stage: stage.requires_stage.clone(),
        format_dependent: [
            ("review_artifact", &stage.review_artifact),
            ("review_class", &stage.review_class),
            ("summary_confirmation", &stage.summary_confirmation),
        ]
        .into_iter()
        .filter_map(|(key, value)| value.as_ref().map(|_| key))
        .collect(),
    })
}

#[salsa::tracked(returns(ref))]
pub fn graph_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut first_file_by_slug: BTreeMap<String, camino::Utf8PathBuf> = BTreeMap::new();
    let mut stages = Vec::new();
    for (entry, stage) in each_stage_with(db, stage_check_facts_in_chunk) {
        let Some(stage) = stage else {
            continue;
        };
        let path = entry.file.path(db).clone();
        let stem = path.file_stem().unwrap_or_default();
        let slug = &stage.slug.value;
        if stem != slug {
            diagnostics.push(
                Diagnostic::error(
                    Code::StageSlugMismatch,
                    format!("stage filename stem \"{stem}\" does not match frontmatter slug \"{slug}\". Rename the file or fix the slug."),
                )
                .in_file(&path)
                .at(stage.slug.span.clone())
                .with_help(format!("rename the file to {slug}.md, or set `slug: {stem}`")),
            );
        }
        if !PHASES.contains(&entry.phase_dir.as_str()) {
            diagnostics.push(
                Diagnostic::error(
                    Code::UnknownPhaseDirectory,
                    format!(
                        "Stage \"{slug}\" ({path}) is in an unknown phase directory \"{}\". Stage phase directories must be one of: {}.",
                        entry.phase_dir,
                        PHASES.join(", ")
                    ),
                )
                .in_file(&path)
                .with_help(format!("move the file to the `{}` folder", stage.phase.value)),
            );
        } else if entry.phase_dir != stage.phase.value {
            diagnostics.push(
                Diagnostic::warning(
                    Code::UnknownPhaseDirectory,
                    format!(
                        "stage \"{slug}\" declares phase \"{}\" but sits in the \"{}\" folder",
                        stage.phase.value, entry.phase_dir
                    ),
                )
                .in_file(&path)
                .at(stage.phase.span.clone())
                .with_help(format!(
                    "move the file to the `{}` folder, or fix `phase:`",
                    stage.phase.value
                )),
            );
        }
        if let Some(first) = first_file_by_slug.get(slug) {
            diagnostics.push(
                Diagnostic::error(
                    Code::DuplicateStageSlug,
                    format!("Duplicate stage slug \"{slug}\" in {path} — already declared in {first}. Rename one of them."),
                )
                .in_file(&path)
                .at(stage.slug.span.clone())
                .with_related(first.clone(), None, "first declared in this file")
                .with_help("every stage needs a unique slug"),
            );
            continue;
        }
        first_file_by_slug.insert(slug.clone(), path.clone());
        if stage.is_unit_build && stage.mode != "subagent" {
            diagnostics.push(
                Diagnostic::warning(
                    Code::SwarmAdvisory,
                    format!("[advisory] stage \"{slug}\" is the per-unit build stage (for_each: unit-of-work + workspace_requires) but mode is \"{}\", not \"subagent\" — the autonomous Construction swarm will NOT fire for it; units build serially.", stage.mode),
                )
                .in_file(&path),
            );
        }
        diagnostics.extend(format_field_diagnostics(db, entry.file, &path, stage));
        stages.push((path, stage));
    }
    diagnostics.extend(duplicate_producer_diagnostics(&stages));
    diagnostics.extend(edge_diagnostics(db, &stages));
    diagnostics
}

/// A field the install's graph format does not carry would be dropped from the graph without a
/// word; it is refused instead, with the two ways out (D13: the install keeps its format).
fn format_field_diagnostics(
    db: &dyn salsa::Database,
    file: SourceFile,
    path: &camino::Utf8Path,
    stage: &StageCheckFacts,
) -> Vec<Diagnostic> {
    let (format, source) = *graph_format(db);
    stage
        .format_dependent
        .iter()
        .filter(|key| match **key {
            "review_artifact" => !format.carries_review_artifact(),
            _ => !format.carries_review_class(),
        })
        .map(|&key| {
            // Read only for a refused field: the facts hold no spans (see `format_dependent`).
            let definition = parsed_stage(db, file).definition.as_ref();
            let span = definition
                .and_then(|stage| match key {
                    "review_artifact" => stage.review_artifact.as_ref(),
                    "review_class" => stage.review_class.as_ref(),
                    _ => stage.summary_confirmation.as_ref(),
                })
                .map(|value| value.span.clone());
            Diagnostic::error(
                Code::NotInGraphFormat,
                format!(
                    "stage \"{}\" sets {key}, which this install's graph format ({format}, {source}) does not carry",
                    stage.slug.value
                ),
            )
            .in_file(path)
            .at_opt(span)
            .with_help(format!(
                "remove `{key}:`, or write the newest format with `aidlc compile --graph-format gate` (the install's own reference tools then see a graph they did not write)"
            ))
        })
        .collect()
}

type StageRef<'a> = (camino::Utf8PathBuf, &'a StageCheckFacts);

fn duplicate_producer_diagnostics(stages: &[StageRef<'_>]) -> Vec<Diagnostic> {
    let mut producers: BTreeMap<String, Vec<&StageRef<'_>>> = BTreeMap::new();
    for stage_ref in stages {
        let (_, stage) = stage_ref;
        for artifact in &stage.produced {
            producers
                .entry(artifact.clone())
                .or_default()
                .push(stage_ref);
        }
    }
    let mut diagnostics = Vec::new();
    let mut reported = std::collections::BTreeSet::new();
    for (consumer_path, consumer) in stages {
        for consumed in &consumer.consumed {
            let artifact = consumed.value.as_str();
            let Some(list) = producers.get(artifact).filter(|list| list.len() > 1) else {
                continue;
            };
            if !reported.insert(artifact) {
                continue;
            }
            let (path1, stage1) = list[0];
            let (path2, stage2) = list[1];
            diagnostics.push(
                Diagnostic::error(
                    Code::DuplicateProducer,
                    format!(
                        "Duplicate producers for consumed artifact \"{artifact}\" in {path1} (stage \"{}\"), {path2} (stage \"{}\") — consumed by stage \"{}\" in {consumer_path}. Rename one produced artifact or update the consumer.",
                        stage1.slug.value, stage2.slug.value, consumer.slug.value
                    ),
                )
                .in_file(consumer_path)
                .at(consumed.span.clone())
                .with_related(path1.clone(), None, format!("produced by \"{}\"", stage1.slug.value))
                .with_related(path2.clone(), None, format!("also produced by \"{}\"", stage2.slug.value))
                .with_help("an artifact that another stage consumes must have exactly one producer"),
            );
        }
    }
    diagnostics
}

fn edge_diagnostics(db: &dyn salsa::Database, stages: &[StageRef<'_>]) -> Vec<Diagnostic> {
    let numbering = stage_numbering(db);
    let slugs_of_invalid_files: std::collections::BTreeSet<String> =
        each_stage_with(db, stage_check_facts_in_chunk)
            .filter(|(_, stage)| stage.is_none())
            .map(|(entry, _)| entry)
            .filter_map(|entry| entry.file.path(db).file_stem().map(str::to_owned))
            .collect();
    let mut diagnostics = Vec::new();
    for (path, stage) in stages {
        let slug = &stage.slug.value;
        let mut seen = std::collections::BTreeSet::new();
        for dep in &stage.requires_stage {
            if !seen.insert(dep.value.as_str()) {
                continue;
            }
            let Some((dep_number, _)) = numbering.by_slug.get(&dep.value) else {
                let is_known_stage = stages
                    .iter()
                    .any(|(_, other)| other.slug.value == dep.value);
                if is_known_stage || slugs_of_invalid_files.contains(dep.value.as_str()) {
                    // The stage exists but has no number (a seeding cycle) or failed to parse;
                    // those have their own diagnostics.
                    continue;
                }
                let known = stages.iter().map(|(_, s)| s.slug.value.as_str());
                let help = crate::leaves::diagnostics::closest_match(&dep.value, known)
                    .map_or_else(
                        || "name an existing stage slug, or remove the entry".to_owned(),
                        |close| format!("did you mean `{close}`?"),
                    );
                diagnostics.push(
                    Diagnostic::error(Code::UnknownRequiresStage, format!("Unknown requires_stage: \"{}\" on stage \"{slug}\". Every requires_stage entry must reference a known stage slug.", dep.value))
                        .in_file(path)
                        .at(dep.span.clone())
                        .with_help(help),
                );
                continue;
            };
            let Some((number, _)) = numbering.by_slug.get(slug) else {
                continue;
            };
            if number_key(dep_number) >= number_key(number) {
                diagnostics.push(
                    Diagnostic::error(
                        Code::NumberInvariant,
                        format!("Compile invariant violated: stage \"{slug}\" ({number}) requires \"{}\" ({dep_number}) — dependency must be lower-numbered. Fix: either renumber in stage-graph.json to match the dependency direction, or remove the offending requires_stage edge.", dep.value),
                    )
                    .in_file(path)
                    .at(dep.span.clone()),
                );
            }
        }
    }
    diagnostics
}
