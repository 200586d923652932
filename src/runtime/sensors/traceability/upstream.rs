//! Which upstream ids a stage's table must cover, per stage: the requirements for
//! `user-stories`, the stories (else the requirements) for `domain-design`, the stories and
//! units for `units-generation`, and for a construction stage its unit's upstream (the unit
//! derived from where the table lives).
//!
//! Invariant: an upstream the check cannot resolve (an unknown stage, a unit that cannot be
//! derived, a missing file) is a reason, so the check fails closed.

use std::collections::{BTreeMap, BTreeSet};

use camino::{Utf8Path, Utf8PathBuf};

use super::findings::FiredTable;
use super::ids::{IdPattern, extract_ids};
use super::record::{RecordFiles, ids_from_existing_files, ids_from_file, read_upstream};
use super::units::{BoltDag, bolt_dag, story_assignments, unit_aliases};

/// The NFR artifacts a construction stage reads: the unit's folder of the stage that wrote
/// them, their file names, and what they are, for reasons.
struct NfrArtifacts {
    folder: &'static str,
    files: &'static [&'static str],
    kind: &'static str,
}

const NFR_REQUIREMENTS: NfrArtifacts = NfrArtifacts {
    folder: "nfr-requirements",
    files: &[
        "performance-requirements.md",
        "security-requirements.md",
        "scalability-requirements.md",
        "reliability-requirements.md",
    ],
    kind: "requirement",
};

const NFR_DESIGN: NfrArtifacts = NfrArtifacts {
    folder: "nfr-design",
    files: &[
        "performance-design.md",
        "security-design.md",
        "scalability-design.md",
        "reliability-design.md",
        "logical-components.md",
    ],
    kind: "design",
};

/// What the authored upstream artifacts say.
#[derive(Debug, Default)]
pub(super) struct Upstream {
    pub(super) ids: BTreeSet<String>,
    pub(super) reasons: Vec<String>,
    /// Upstream stories no unit takes (units-generation only).
    pub(super) extra_gaps: Vec<String>,
    pub(super) units: Option<UnitContext>,
    /// Story id → the units the story map assigns it to.
    pub(super) story_assignments: Option<BTreeMap<String, BTreeSet<String>>>,
}

impl Upstream {
    fn add(&mut self, (ids, reason): (BTreeSet<String>, Option<String>)) -> BTreeSet<String> {
        self.reasons.extend(reason);
        self.ids.extend(ids.iter().cloned());
        ids
    }
}

/// The unit a construction table belongs to, and the units of the workflow.
#[derive(Debug, Clone)]
pub(super) struct UnitContext {
    unit_name: String,
    /// `<record>/construction/[units/]<unit>`.
    pub(super) unit_folder: Utf8PathBuf,
    pub(super) units: Vec<String>,
    /// Unit → its `U<n>` alias from `unit-of-work.md`, in first-seen order.
    pub(super) unit_aliases: Vec<(String, String)>,
}

pub(super) fn resolve_upstream(fired: &FiredTable<'_>, record: Option<&RecordFiles>) -> Upstream {
    let mut upstream = Upstream::default();
    let Some(record) = record else {
        upstream
            .reasons
            .push("cannot resolve the active intent record directory".to_owned());
        return upstream;
    };
    match fired.stage {
        "user-stories" => {
            upstream.add(requirement_ids(record, &[IdPattern::Fr, IdPattern::Nfr]));
        }
        "domain-design" => {
            upstream.add(stories_else_requirements(record));
        }
        "units-generation" => resolve_units_generation(record, &mut upstream),
        _ => resolve_construction_stage(fired, record, &mut upstream),
    }
    upstream
}

/// The story ids when `stories.md` exists, else the requirement FR ids.
fn stories_else_requirements(record: &RecordFiles) -> (BTreeSet<String>, Option<String>) {
    if record.stories.exists() {
        ids_from_file(&record.stories, &[IdPattern::Us], "stories.md")
    } else {
        requirement_ids(record, &[IdPattern::Fr])
    }
}

/// The ids of `patterns` in `requirements.md`, and the reason when it has none.
fn requirement_ids(
    record: &RecordFiles,
    patterns: &[IdPattern],
) -> (BTreeSet<String>, Option<String>) {
    ids_from_file(&record.requirements, patterns, "requirements.md")
}

fn resolve_units_generation(record: &RecordFiles, upstream: &mut Upstream) {
    let source_ids = upstream.add(stories_else_requirements(record));
    let units = match bolt_dag(&record.dependency) {
        BoltDag::Units(units) => units,
        BoltDag::Missing => {
            upstream.reasons.push(
                "unit-of-work-dependency.md is missing; cannot verify traceability targets"
                    .to_owned(),
            );
            return;
        }
        BoltDag::Malformed(reason) => {
            upstream.reasons.push(reason);
            return;
        }
    };
    let unit_aliases = unit_aliases(&record.unit_of_work, &units);
    let (assignments, reason) = story_assignments(&record.story_map, &units, &unit_aliases);
    upstream.reasons.extend(reason);
    upstream.extra_gaps = source_ids
        .into_iter()
        .filter(|id| !assignments.contains_key(id))
        .collect();
    upstream.story_assignments = Some(assignments);
    upstream.units = Some(UnitContext {
        unit_name: String::new(),
        unit_folder: record.record.join("construction"),
        units,
        unit_aliases,
    });
}

fn resolve_construction_stage(
    fired: &FiredTable<'_>,
    record: &RecordFiles,
    upstream: &mut Upstream,
) {
    let context = match unit_context(fired, record) {
        Ok(context) => context,
        Err(reason) => {
            upstream.reasons.push(reason);
            return;
        }
    };
    match fired.stage {
        "functional-design" => resolve_functional_design(record, &context, upstream),
        "nfr-requirements" => {
            upstream.add(requirement_ids(record, &[IdPattern::Nfr]));
        }
        "nfr-design" => resolve_nfr_ids(&context, &NFR_REQUIREMENTS, upstream),
        "infrastructure-design" => resolve_nfr_ids(&context, &NFR_DESIGN, upstream),
        "code-generation" => resolve_code_generation(record, &context, upstream),
        stage => upstream.reasons.push(format!(
            "stage \"{stage}\" has no traceability upstream resolver"
        )),
    }
    upstream.units = Some(context);
}

/// The unit of a construction table: derived from its path and, when the Bolt DAG exists,
/// declared there.
fn unit_context(fired: &FiredTable<'_>, record: &RecordFiles) -> Result<UnitContext, String> {
    let (unit_name, units_layout) = unit_of_output_path(fired.output_path).ok_or_else(|| {
        format!(
            "cannot derive the construction unit from output path: {}",
            fired.output_path_as_given
        )
    })?;
    let units = match bolt_dag(&record.dependency) {
        BoltDag::Malformed(reason) => return Err(reason),
        BoltDag::Missing => vec![unit_name.clone()],
        BoltDag::Units(units) if units.contains(&unit_name) => units,
        BoltDag::Units(_) => {
            return Err(format!(
                "unit \"{unit_name}\" is not declared in unit-of-work-dependency.md"
            ));
        }
    };
    let construction = record.record.join("construction");
    let parent = if units_layout {
        construction.join("units")
    } else {
        construction
    };
    Ok(UnitContext {
        unit_folder: parent.join(&unit_name),
        unit_aliases: unit_aliases(&record.unit_of_work, &units),
        unit_name,
        units,
    })
}

/// The unit named by `…/construction/<unit>/<stage>/traceability.json`, or by
/// `…/construction/units/<unit>/<stage>/traceability.json` (then `true`).
pub(super) fn unit_of_output_path(output_path: &Utf8Path) -> Option<(String, bool)> {
    let text = output_path.as_str().replace('\\', "/");
    let parts: Vec<&str> = text.split('/').collect();
    let tail = |from_end: usize| parts.len().checked_sub(from_end).map(|i| parts[i]);
    if tail(1)? != "traceability.json" || tail(2)?.is_empty() || tail(3)?.is_empty() {
        return None;
    }
    let preceded_by_separator = |from_end: usize| parts.len() > from_end;
    if tail(5) == Some("construction") && tail(4) == Some("units") && preceded_by_separator(5) {
        return Some((tail(3)?.to_owned(), true));
    }
    (tail(4) == Some("construction") && preceded_by_separator(4))
        .then(|| (tail(3).unwrap_or_default().to_owned(), false))
}

/// The stories the story map assigns to the unit.
fn stories_of_unit(
    record: &RecordFiles,
    context: &UnitContext,
    upstream: &mut Upstream,
) -> BTreeSet<String> {
    let (assignments, reason) =
        story_assignments(&record.story_map, &context.units, &context.unit_aliases);
    upstream.reasons.extend(reason);
    let stories = assignments
        .iter()
        .filter(|(_, units)| units.contains(&context.unit_name))
        .map(|(story, _)| story.clone())
        .collect();
    upstream.story_assignments = Some(assignments);
    stories
}

/// The acceptance-criterion ids in `stories_text` whose story (`ACg.s.n` → `USg.s`) is in
/// `stories`.
fn acceptance_criteria_of(stories_text: &str, stories: &BTreeSet<String>) -> BTreeSet<String> {
    extract_ids(stories_text, &[IdPattern::Ac])
        .into_iter()
        .filter(|ac| {
            story_of_acceptance_criterion(ac).is_some_and(|story| stories.contains(&story))
        })
        .collect()
}

pub(super) fn story_of_acceptance_criterion(ac: &str) -> Option<String> {
    let mut parts = ac.strip_prefix("AC")?.split('.');
    let group = parts.next()?;
    let story = parts.next()?;
    Some(format!("US{group}.{story}"))
}

fn resolve_functional_design(record: &RecordFiles, context: &UnitContext, upstream: &mut Upstream) {
    if !(record.stories.exists() && record.story_map.exists()) {
        upstream.add(requirement_ids(record, &[IdPattern::Fr]));
        return;
    }
    let unit = &context.unit_name;
    let stories = stories_of_unit(record, context, upstream);
    if stories.is_empty() {
        upstream.reasons.push(format!(
            "no stories in unit-of-work-story-map.md map to unit \"{unit}\""
        ));
        return;
    }
    match read_upstream(&record.stories) {
        Err(reason) => upstream.reasons.push(reason),
        Ok(text) => {
            upstream.ids.extend(acceptance_criteria_of(&text, &stories));
            if upstream.ids.is_empty() {
                upstream.reasons.push(format!(
                    "stories mapped to unit \"{unit}\" contain no acceptance-criterion IDs"
                ));
            }
        }
    }
}

/// `NFRx.y` ids from the unit's `nfr` artifacts.
fn resolve_nfr_ids(context: &UnitContext, nfr: &NfrArtifacts, upstream: &mut Upstream) {
    let folder = context.unit_folder.join(nfr.folder);
    let (ids, saw_file) = ids_from_existing_files(&folder, nfr.files, IdPattern::NfrDetail);
    upstream.ids.extend(ids);
    let kind = nfr.kind;
    if !saw_file {
        upstream.reasons.push(format!(
            "required upstream NFR {kind} artifacts are missing under {folder}"
        ));
    } else if upstream.ids.is_empty() {
        upstream.reasons.push(format!(
            "NFR {kind} artifacts for unit \"{}\" contain no NFRx.y IDs",
            context.unit_name
        ));
    }
}

fn resolve_code_generation(record: &RecordFiles, context: &UnitContext, upstream: &mut Upstream) {
    if !record.stories.exists() {
        upstream.add(requirement_ids(record, &[IdPattern::Fr, IdPattern::Nfr]));
    } else if !record.story_map.exists() {
        upstream.add(ids_from_file(
            &record.stories,
            &[IdPattern::Ac],
            "stories.md",
        ));
    } else {
        let stories = stories_of_unit(record, context, upstream);
        if let Ok(text) = read_upstream(&record.stories) {
            upstream.ids.extend(acceptance_criteria_of(&text, &stories));
        }
    }
    let nfr_folder = context.unit_folder.join(NFR_REQUIREMENTS.folder);
    let (nfr_ids, _) =
        ids_from_existing_files(&nfr_folder, NFR_REQUIREMENTS.files, IdPattern::NfrDetail);
    upstream.ids.extend(nfr_ids);
    let rules_folder = context.unit_folder.join("functional-design");
    let (rule_ids, _) = ids_from_existing_files(&rules_folder, &["rules.md"], IdPattern::Br);
    upstream.ids.extend(rule_ids);
    if upstream.ids.is_empty() {
        upstream.reasons.push(format!(
            "upstream ID set is empty for unit \"{}\"",
            context.unit_name
        ));
    }
}
