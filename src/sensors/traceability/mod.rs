//! The native `traceability` worker (upstream §6.4): does a stage's `traceability.json` cover
//! every upstream element, point each covered element at a real downstream target, and leave no
//! orphan behind?
//!
//! The check, in order:
//!
//! 1. The flags (`--stage`, `--output-path`) are read positionally. A missing, unknown or
//!    unreadable `--output-path` is a usage error (exit 1 out of process); nothing else is.
//! 2. The file must hold `{stage?, unit?, upstream_ids: [string], coverage: [{id, status,
//!    target?}], reverse?: [...]}`. A file of any other shape, or with no coverage row, fails
//!    with one finding and a `reason` naming the first problem.
//! 3. Each row's status is one of `OK`, `GAP`, `ORPHAN`, `Deferred`, `N/A`. `GAP` rows are
//!    `gaps`, `ORPHAN` rows `orphans`; `OK`, `Deferred` and `N/A` need a non-empty target. An
//!    upstream id with no coverage row is `missing_from_table`; a coverage row whose id is not
//!    an upstream id is an invalid entry.
//! 4. The upstream ids are also read from the authored upstream artifacts of the active intent
//!    record (which files depends on the stage: `--stage`, else the file's `stage`). An id found
//!    there but not declared is `missing_from_upstream_ids`. Every upstream that cannot be
//!    resolved (a missing file, a file with no ids, an unknown stage, a unit that cannot be
//!    derived) is a `reason` and counts as a finding: the check fails closed.
//! 5. The targets of `OK` rows are checked where the stage allows: user stories must exist in
//!    `stories.md`; units must be declared and mapped in the story map; business rules must exist
//!    in the unit's `rules.md` (and every rule neither targeted nor listed in `reverse` is an
//!    orphan); code paths must be workspace-relative files inside the project.
//!
//! Output keys, in order: `pass`, `gaps`, `orphans`, `missing_from_table`,
//! `missing_from_upstream_ids`, `invalid_entries`, `invalid_targets`, `findings_count`, then
//! `reason` (only when there is one). The six lists are de-duplicated and sorted (by UTF-16 code
//! units, as JavaScript sorts); `findings_count` is their total length plus the number of
//! reasons (each one counted, repeats too, as the reference counts them); `reason` joins the
//! distinct reasons, sorted, with `"; "`. No input makes this worker panic, so the reference's
//! last-resort `traceability sensor failed safely: <e>` verdict has no counterpart here.
//!
//! Where this differs from the reference, on purpose:
//!
//! - A flag with no value, or followed by another `--flag`, is a usage error (failure mode F9).
//!   The reference read a trailing `--stage` as no stage, and took a following flag as a value.
//! - Backslashes in paths are separators, and a relative `--output-path` is taken from the
//!   project folder (the reference's working folder).
//! - The unit is also read from the `construction/units/<unit>/<stage>/traceability.json`
//!   layout of the newest reference line; its upstream files are then read under
//!   `construction/units/<unit>/`.
//! - The Bolt DAG (`unit-of-work-dependency.md`) is read for its unit names only: the first
//!   ```` ```yaml ```` block declaring `units:`, its `- name:` entries, each a valid unit name,
//!   none twice. Broken dependency lists and cycles are left to `required-sections`, which
//!   checks that file; the reference also judged them here. Units keep the block's order, and
//!   the compiled graph's cached DAG is not consulted.
//! - A code target that leaves the project through a symlink is reported as escaping (failure
//!   mode E3); the reference checked the path text only. A target whose first folder merely
//!   starts with `..` (`..data/x`) is a path inside the project; the reference reported it as
//!   escaping.
//! - JSON that `serde_json` rejects but JavaScript accepts (lone UTF-16 surrogate escapes,
//!   nesting deeper than 128) is reported as invalid JSON.
//! - Read errors quote the operating system's message, not Node's.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use crate::js_text::{js_trim, js_trim_start};
use crate::sensors::descriptor::{GateUnit, OUTPUT_PATH_FLAG, PathFlag, STAGE_FLAG, ShippedSensor};
use crate::sensors::finding;
use crate::sensors::protocol::{WorkerContext, WorkerOutcome};
use crate::sensors::required_sections::units_block;
use crate::sensors::text::{lines_of, read_text_lossy};
use crate::sensors::worker_args::{FlagGrammar, WorkerArgs, resolve_worker_path};

/// The statuses a coverage or reverse row may carry.
const VALID_STATUSES: [&str; 5] = ["OK", "GAP", "ORPHAN", "Deferred", "N/A"];

/// The statuses that must name a target.
const STATUSES_NEEDING_A_TARGET: [&str; 3] = ["OK", "Deferred", "N/A"];

const NFR_REQUIREMENT_FILES: [&str; 4] = [
    "performance-requirements.md",
    "security-requirements.md",
    "scalability-requirements.md",
    "reliability-requirements.md",
];

const NFR_DESIGN_FILES: [&str; 5] = [
    "performance-design.md",
    "security-design.md",
    "scalability-design.md",
    "reliability-design.md",
    "logical-components.md",
];

/// The longest unit name the Bolt DAG accepts, in UTF-16 code units.
const UNIT_NAME_MAX_LENGTH: usize = 64;

/// The `traceability` sensor: one `traceability.json` per fire; its findings are lists of ids
/// without a line, so the report counts them.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "traceability",
    check: run,
    extra_flags: &[],
    default_path_flag: PathFlag::OutputPath,
    gate_unit: GateUnit::Deliverable,
    findings: finding::summary_only,
};

/// Run the check on `args` (the worker argv after `sensor-traceability`).
pub fn run(args: &[String], context: &WorkerContext) -> WorkerOutcome {
    match check(args, &context.project_dir) {
        Ok(verdict) => WorkerOutcome::Verdict(verdict),
        Err(message) => WorkerOutcome::UsageError(message),
    }
}

fn check(args: &[String], project_dir: &Utf8Path) -> Result<Value, String> {
    let flags = WorkerArgs::parse(args, &SENSOR, FlagGrammar::Lenient)?;
    let output_path_as_given = flags.required(OUTPUT_PATH_FLAG)?;
    let output_path = resolve_worker_path(project_dir, output_path_as_given);
    if !output_path.exists() {
        return Err(format!("--output-path not found: {output_path_as_given}"));
    }
    let body = read_text_lossy(&output_path)
        .map_err(|error| format!("failed to read --output-path {output_path_as_given}: {error}"))?;
    let table = match parse_table(&body) {
        Ok(table) => table,
        Err(reason) => return Ok(single_finding_verdict(&reason)),
    };
    if table.coverage.is_empty() {
        return Ok(single_finding_verdict(
            "no coverage entries found in traceability.json",
        ));
    }
    let stage = flags
        .value(STAGE_FLAG)
        .map(str::to_owned)
        .or_else(|| table.stage.clone())
        .unwrap_or_default();
    let fired = FiredTable {
        table: &table,
        stage: &stage,
        project_dir,
        output_path: &output_path,
        output_path_as_given: &output_path_as_given.replace('\\', "/"),
    };
    Ok(findings_of(&fired).into_verdict())
}

// ---------------------------------------------------------------------------------------------
// The shape of traceability.json

/// One row of `coverage` or `reverse`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    id: String,
    status: String,
    target: Option<String>,
}

impl Entry {
    /// The target, trimmed; empty when there is none.
    fn trimmed_target(&self) -> &str {
        self.target.as_deref().map(js_trim).unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Table {
    stage: Option<String>,
    upstream_ids: Vec<String>,
    coverage: Vec<Entry>,
    reverse: Vec<Entry>,
}

/// The table in `body`, or the reason (in the reference's words) it is not one.
fn parse_table(body: &str) -> Result<Table, String> {
    let value: Value =
        serde_json::from_str(body).map_err(|_| "invalid JSON in traceability file".to_owned())?;
    let Value::Object(object) = value else {
        return Err("traceability.json must contain a JSON object".to_owned());
    };
    let upstream_ids = non_empty_strings(object.get("upstream_ids"))
        .ok_or_else(|| "upstream_ids must be an array of non-empty strings".to_owned())?;
    let Some(Value::Array(coverage)) = object.get("coverage") else {
        return Err("coverage must be an array".to_owned());
    };
    let reverse = match object.get("reverse") {
        None => &[][..],
        Some(Value::Array(reverse)) => reverse.as_slice(),
        Some(_) => return Err("reverse must be an array when present".to_owned()),
    };
    let coverage = entries_of("coverage", coverage)?;
    let reverse = entries_of("reverse", reverse)?;
    let stage = optional_string(&object, "stage")?;
    optional_string(&object, "unit")?;
    Ok(Table {
        stage,
        upstream_ids,
        coverage,
        reverse,
    })
}

fn non_empty_strings(value: Option<&Value>) -> Option<Vec<String>> {
    let Some(Value::Array(items)) = value else {
        return None;
    };
    items
        .iter()
        .map(|item| non_empty_string(Some(item)).map(str::to_owned))
        .collect()
}

/// The value when it is a string that is not blank (kept untrimmed, as the reference keeps it).
fn non_empty_string(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|text| !js_trim(text).is_empty())
}

fn entries_of(field: &str, values: &[Value]) -> Result<Vec<Entry>, String> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| entry_of(field, index, value))
        .collect()
}

fn entry_of(field: &str, index: usize, value: &Value) -> Result<Entry, String> {
    let Value::Object(entry) = value else {
        return Err(format!("{field}[{index}] must be an object"));
    };
    let id = non_empty_string(entry.get("id"))
        .ok_or_else(|| format!("{field}[{index}].id must be a non-empty string"))?;
    let status = non_empty_string(entry.get("status"))
        .ok_or_else(|| format!("{field}[{index}].status must be a non-empty string"))?;
    let target = match entry.get("target") {
        None => None,
        Some(Value::String(target)) => Some(target.clone()),
        Some(_) => {
            return Err(format!(
                "{field}[{index}].target must be a string when present"
            ));
        }
    };
    Ok(Entry {
        id: id.to_owned(),
        status: status.to_owned(),
        target,
    })
}

/// A key that must be a string when present (JSON `null` is present and not a string).
fn optional_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("{key} must be a string when present")),
    }
}

// ---------------------------------------------------------------------------------------------
// Findings

/// What the check works on: the table, the effective stage and where the table lives.
struct FiredTable<'fire> {
    table: &'fire Table,
    stage: &'fire str,
    project_dir: &'fire Utf8Path,
    /// The absolute, normal path the unit is derived from.
    output_path: &'fire Utf8Path,
    /// The path as given, with `/` separators, for messages.
    output_path_as_given: &'fire str,
}

#[derive(Debug, Default)]
struct Findings {
    gaps: Vec<String>,
    orphans: Vec<String>,
    missing_from_table: Vec<String>,
    missing_from_upstream_ids: Vec<String>,
    invalid_entries: Vec<String>,
    invalid_targets: Vec<String>,
    reasons: Vec<String>,
}

fn findings_of(fired: &FiredTable<'_>) -> Findings {
    let mut findings = Findings::default();
    check_statuses(fired.table, &mut findings);
    check_declared_ids(fired.table, &mut findings);
    let record = active_record(fired.project_dir);
    let upstream = resolve_upstream(fired, record.as_ref());
    let declared: BTreeSet<&str> = fired
        .table
        .upstream_ids
        .iter()
        .map(String::as_str)
        .collect();
    findings.missing_from_upstream_ids = upstream
        .ids
        .iter()
        .filter(|id| !declared.contains(id.as_str()))
        .cloned()
        .collect();
    if upstream.ids.is_empty() && upstream.reasons.is_empty() {
        findings.reasons.push(format!(
            "upstream ID set is empty for stage \"{}\"",
            fired.stage
        ));
    }
    findings.reasons.extend(upstream.reasons.iter().cloned());
    findings.gaps.extend(upstream.extra_gaps.iter().cloned());
    check_targets(fired, record.as_ref(), &upstream, &mut findings);
    findings
}

/// Statuses of every row, coverage first: unknown ones, gaps, orphans and missing targets.
fn check_statuses(table: &Table, findings: &mut Findings) {
    let fields = [("coverage", &table.coverage), ("reverse", &table.reverse)];
    for (field, entries) in fields {
        for entry in entries {
            check_status(field, entry, findings);
        }
    }
}

fn check_status(field: &str, entry: &Entry, findings: &mut Findings) {
    let (id, status) = (&entry.id, entry.status.as_str());
    if !VALID_STATUSES.contains(&status) {
        findings
            .invalid_entries
            .push(format!("{field}:{id}: unknown status \"{status}\""));
        return;
    }
    match status {
        "GAP" => findings.gaps.push(id.clone()),
        "ORPHAN" => findings.orphans.push(id.clone()),
        _ => {}
    }
    if STATUSES_NEEDING_A_TARGET.contains(&status) && entry.trimmed_target().is_empty() {
        findings.invalid_entries.push(format!(
            "{field}:{id}: status {status} requires a non-empty target"
        ));
    }
}

/// Upstream ids without a coverage row, and coverage rows that no upstream id declares.
fn check_declared_ids(table: &Table, findings: &mut Findings) {
    let covered: BTreeSet<&str> = table.coverage.iter().map(|e| e.id.as_str()).collect();
    let declared: BTreeSet<&str> = table.upstream_ids.iter().map(String::as_str).collect();
    findings.missing_from_table = table
        .upstream_ids
        .iter()
        .filter(|id| !covered.contains(id.as_str()))
        .cloned()
        .collect();
    for entry in &table.coverage {
        if !declared.contains(entry.id.as_str()) {
            findings.invalid_entries.push(format!(
                "coverage:{}: id is absent from upstream_ids",
                entry.id
            ));
        }
    }
}

impl Findings {
    fn into_verdict(self) -> Value {
        let lists = [
            ("gaps", unique_sorted(self.gaps)),
            ("orphans", unique_sorted(self.orphans)),
            ("missing_from_table", unique_sorted(self.missing_from_table)),
            (
                "missing_from_upstream_ids",
                unique_sorted(self.missing_from_upstream_ids),
            ),
            ("invalid_entries", unique_sorted(self.invalid_entries)),
            ("invalid_targets", unique_sorted(self.invalid_targets)),
        ];
        let findings_count =
            lists.iter().map(|(_, list)| list.len()).sum::<usize>() + self.reasons.len();
        let mut object = Map::new();
        object.insert("pass".to_owned(), Value::Bool(findings_count == 0));
        for (key, list) in lists {
            object.insert(key.to_owned(), Value::from(list));
        }
        object.insert("findings_count".to_owned(), Value::from(findings_count));
        if !self.reasons.is_empty() {
            let reason = unique_sorted(self.reasons).join("; ");
            object.insert("reason".to_owned(), Value::from(reason));
        }
        Value::Object(object)
    }
}

/// The verdict of a table that cannot be checked at all: one finding, the reason, no lists.
fn single_finding_verdict(reason: &str) -> Value {
    let mut object = Map::new();
    object.insert("pass".to_owned(), Value::Bool(false));
    for key in [
        "gaps",
        "orphans",
        "missing_from_table",
        "missing_from_upstream_ids",
        "invalid_entries",
        "invalid_targets",
    ] {
        object.insert(key.to_owned(), Value::Array(Vec::new()));
    }
    object.insert("findings_count".to_owned(), Value::from(1));
    object.insert("reason".to_owned(), Value::from(reason));
    Value::Object(object)
}

/// Distinct values in JavaScript's default sort order (UTF-16 code units).
fn unique_sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort_by(|a, b| utf16_order(a, b));
    values.dedup();
    values
}

fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

// ---------------------------------------------------------------------------------------------
// The active intent record and its upstream files

/// The upstream files of the active intent record.
struct RecordFiles {
    record: Utf8PathBuf,
    requirements: Utf8PathBuf,
    stories: Utf8PathBuf,
    story_map: Utf8PathBuf,
    unit_of_work: Utf8PathBuf,
    dependency: Utf8PathBuf,
}

fn active_record(project_dir: &Utf8Path) -> Option<RecordFiles> {
    let space = crate::workspace::active_space(project_dir);
    let record = crate::workspace::active_intent(project_dir, &space, None).ok()??;
    let inception = record.join("inception");
    let units_generation = inception.join("units-generation");
    Some(RecordFiles {
        requirements: inception.join("requirements-analysis/requirements.md"),
        stories: inception.join("user-stories/stories.md"),
        story_map: units_generation.join("unit-of-work-story-map.md"),
        unit_of_work: units_generation.join("unit-of-work.md"),
        dependency: units_generation.join("unit-of-work-dependency.md"),
        record,
    })
}

/// An upstream file's text, or the reason it cannot be used.
fn read_upstream(path: &Utf8Path) -> Result<String, String> {
    if !path.exists() {
        return Err(format!("required upstream artifact is missing: {path}"));
    }
    if !path.is_file() {
        return Err(format!("required upstream artifact is not a file: {path}"));
    }
    read_text_lossy(path).map_err(|error| format!("cannot read upstream artifact {path}: {error}"))
}

/// The ids of `patterns` in the file, and the reason when it cannot be read or holds none.
fn ids_from_file(
    path: &Utf8Path,
    patterns: &[IdPattern],
    label: &str,
) -> (BTreeSet<String>, Option<String>) {
    match read_upstream(path) {
        Err(reason) => (BTreeSet::new(), Some(reason)),
        Ok(text) => {
            let ids = extract_ids(&text, patterns);
            let reason = ids
                .is_empty()
                .then(|| format!("{label} contains no traceable IDs: {path}"));
            (ids, reason)
        }
    }
}

/// The ids of `patterns` in every file of `names` under `folder` that exists (unreadable files
/// and their reasons are left out, as the reference does), and whether any existed.
fn ids_from_existing_files(
    folder: &Utf8Path,
    names: &[&str],
    pattern: IdPattern,
) -> (BTreeSet<String>, bool) {
    let mut ids = BTreeSet::new();
    let mut saw_file = false;
    for name in names {
        let path = folder.join(name);
        if !path.exists() {
            continue;
        }
        saw_file = true;
        if let Ok(text) = read_upstream(&path) {
            ids.extend(extract_ids(&text, &[pattern]));
        }
    }
    (ids, saw_file)
}

// ---------------------------------------------------------------------------------------------
// Upstream resolution per stage

/// What the authored upstream artifacts say.
#[derive(Debug, Default)]
struct Upstream {
    ids: BTreeSet<String>,
    reasons: Vec<String>,
    /// Upstream stories no unit takes (units-generation only).
    extra_gaps: Vec<String>,
    units: Option<UnitContext>,
    /// Story id → the units the story map assigns it to.
    story_assignments: Option<BTreeMap<String, BTreeSet<String>>>,
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
struct UnitContext {
    unit_name: String,
    /// `<record>/construction/[units/]<unit>`.
    unit_folder: Utf8PathBuf,
    units: Vec<String>,
    /// Unit → its `U<n>` alias from `unit-of-work.md`, in first-seen order.
    unit_aliases: Vec<(String, String)>,
}

fn resolve_upstream(fired: &FiredTable<'_>, record: Option<&RecordFiles>) -> Upstream {
    let mut upstream = Upstream::default();
    let Some(record) = record else {
        upstream
            .reasons
            .push("cannot resolve the active intent record directory".to_owned());
        return upstream;
    };
    match fired.stage {
        "user-stories" => {
            let ids = ids_from_file(
                &record.requirements,
                &[IdPattern::Fr, IdPattern::Nfr],
                "requirements.md",
            );
            upstream.add(ids);
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
        ids_from_file(&record.requirements, &[IdPattern::Fr], "requirements.md")
    }
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
            let ids = ids_from_file(&record.requirements, &[IdPattern::Nfr], "requirements.md");
            upstream.add(ids);
        }
        "nfr-design" => resolve_nfr_ids(
            &context,
            "nfr-requirements",
            &NFR_REQUIREMENT_FILES,
            "requirement",
            upstream,
        ),
        "infrastructure-design" => {
            resolve_nfr_ids(
                &context,
                "nfr-design",
                &NFR_DESIGN_FILES,
                "design",
                upstream,
            );
        }
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
fn unit_of_output_path(output_path: &Utf8Path) -> Option<(String, bool)> {
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

fn story_of_acceptance_criterion(ac: &str) -> Option<String> {
    let mut parts = ac.strip_prefix("AC")?.split('.');
    let group = parts.next()?;
    let story = parts.next()?;
    Some(format!("US{group}.{story}"))
}

fn resolve_functional_design(record: &RecordFiles, context: &UnitContext, upstream: &mut Upstream) {
    if !(record.stories.exists() && record.story_map.exists()) {
        let ids = ids_from_file(&record.requirements, &[IdPattern::Fr], "requirements.md");
        upstream.add(ids);
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

/// `NFRx.y` ids from the unit's `<stage_folder>/<names>`; `kind` is `requirement` or `design`.
fn resolve_nfr_ids(
    context: &UnitContext,
    stage_folder: &str,
    names: &[&str],
    kind: &str,
    upstream: &mut Upstream,
) {
    let folder = context.unit_folder.join(stage_folder);
    let (ids, saw_file) = ids_from_existing_files(&folder, names, IdPattern::NfrDetail);
    upstream.ids.extend(ids);
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
        let ids = ids_from_file(
            &record.requirements,
            &[IdPattern::Fr, IdPattern::Nfr],
            "requirements.md",
        );
        upstream.add(ids);
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
    let nfr_folder = context.unit_folder.join("nfr-requirements");
    let (nfr_ids, _) =
        ids_from_existing_files(&nfr_folder, &NFR_REQUIREMENT_FILES, IdPattern::NfrDetail);
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

// ---------------------------------------------------------------------------------------------
// Target checks on OK rows

fn check_targets(
    fired: &FiredTable<'_>,
    record: Option<&RecordFiles>,
    upstream: &Upstream,
    findings: &mut Findings,
) {
    let ok_entries: Vec<&Entry> = fired
        .table
        .coverage
        .iter()
        .filter(|entry| entry.status == "OK")
        .collect();
    match (fired.stage, record) {
        ("user-stories", Some(record)) => check_story_targets(record, &ok_entries, findings),
        ("units-generation", _) => check_unit_targets(upstream, &ok_entries, findings),
        ("functional-design", Some(record)) => {
            check_rule_targets(fired, record, upstream, &ok_entries, findings);
        }
        ("code-generation", _) => {
            for entry in &ok_entries {
                findings
                    .invalid_targets
                    .extend(code_target_problem(fired.project_dir, entry));
            }
        }
        _ => {}
    }
}

fn check_story_targets(record: &RecordFiles, ok_entries: &[&Entry], findings: &mut Findings) {
    let (stories, reason) = ids_from_file(&record.stories, &[IdPattern::Us], "stories.md");
    findings.reasons.extend(reason);
    for entry in ok_entries {
        let targets = extract_ids(
            entry.target.as_deref().unwrap_or_default(),
            &[IdPattern::Us],
        );
        if targets.is_empty() {
            findings.invalid_targets.push(format!(
                "{}: target must name at least one USx.y ID",
                entry.id
            ));
        }
        for target in targets.iter().filter(|target| !stories.contains(*target)) {
            findings.invalid_targets.push(format!(
                "{}: target {target} is absent from stories.md",
                entry.id
            ));
        }
    }
}

fn check_unit_targets(upstream: &Upstream, ok_entries: &[&Entry], findings: &mut Findings) {
    let (Some(context), Some(assignments)) = (&upstream.units, &upstream.story_assignments) else {
        return;
    };
    let mut unit_of_alias: BTreeMap<&str, &str> = BTreeMap::new();
    for (unit, alias) in &context.unit_aliases {
        unit_of_alias.insert(alias, unit);
    }
    for entry in ok_entries {
        let raw_target = entry.trimmed_target();
        let unit = if context.units.iter().any(|unit| unit == raw_target) {
            Some(raw_target)
        } else {
            unit_of_alias
                .get(raw_target.to_uppercase().as_str())
                .copied()
        };
        let id = &entry.id;
        match unit {
            None => findings.invalid_targets.push(format!(
                "{id}: target \"{raw_target}\" is not a declared unit"
            )),
            Some(unit)
                if !assignments
                    .get(id)
                    .is_some_and(|units| units.contains(unit)) =>
            {
                findings.invalid_targets.push(format!(
                    "{id}: target \"{raw_target}\" is not mapped in unit-of-work-story-map.md"
                ));
            }
            Some(_) => {}
        }
    }
}

fn check_rule_targets(
    fired: &FiredTable<'_>,
    record: &RecordFiles,
    upstream: &Upstream,
    ok_entries: &[&Entry],
    findings: &mut Findings,
) {
    let unit_folder = match &upstream.units {
        Some(context) => context.unit_folder.clone(),
        None => match unit_of_output_path(fired.output_path) {
            Some((unit, true)) => record.record.join("construction/units").join(unit),
            Some((unit, false)) => record.record.join("construction").join(unit),
            None => return,
        },
    };
    let rules_path = unit_folder.join("functional-design/rules.md");
    let (rules, reason) = ids_from_file(&rules_path, &[IdPattern::Br], "rules.md");
    findings.reasons.extend(reason);
    let mut targeted = BTreeSet::new();
    for entry in ok_entries {
        let targets = extract_ids(
            entry.target.as_deref().unwrap_or_default(),
            &[IdPattern::Br],
        );
        if targets.is_empty() {
            findings.invalid_targets.push(format!(
                "{}: target must name at least one BRx.y ID",
                entry.id
            ));
        }
        for target in targets {
            if !rules.contains(&target) {
                findings.invalid_targets.push(format!(
                    "{}: target {target} is absent from rules.md",
                    entry.id
                ));
            }
            targeted.insert(target);
        }
    }
    let explained: BTreeSet<&str> = fired.table.reverse.iter().map(|e| e.id.as_str()).collect();
    findings.orphans.extend(
        rules
            .into_iter()
            .filter(|rule| !targeted.contains(rule) && !explained.contains(rule.as_str())),
    );
}

/// Why a code-generation target is not a file of the project, if it is not.
fn code_target_problem(project_dir: &Utf8Path, entry: &Entry) -> Option<String> {
    let id = &entry.id;
    let target = entry.trimmed_target().replace('\\', "/");
    if target.is_empty() || target.starts_with('/') || is_drive_absolute(&target) {
        return Some(format!(
            "{id}: target must be a workspace-relative file path"
        ));
    }
    let root = resolve_worker_path(project_dir, ".");
    let absolute = resolve_worker_path(&root, &target);
    if !absolute.starts_with(&root) || escapes_through_a_link(&root, &absolute) {
        return Some(format!("{id}: target escapes the project directory"));
    }
    match std::fs::metadata(&absolute) {
        Ok(metadata) if metadata.is_file() => None,
        _ => Some(format!("{id}: target file does not exist: {target}")),
    }
}

/// `C:/…` (after backslashes became `/`).
fn is_drive_absolute(target: &str) -> bool {
    let bytes = target.as_bytes();
    bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/'
}

/// Whether `absolute`, once its links are followed, lies outside the project's real folder.
fn escapes_through_a_link(root: &Utf8Path, absolute: &Utf8Path) -> bool {
    match (root.canonicalize_utf8(), absolute.canonicalize_utf8()) {
        (Ok(real_root), Ok(real_target)) => !real_target.starts_with(real_root),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Units: the Bolt DAG, unit aliases and the story map

enum BoltDag {
    Units(Vec<String>),
    /// No `unit-of-work-dependency.md`: a workflow without units.
    Missing,
    /// The file is there but its units cannot be known; the reason, in full.
    Malformed(String),
}

fn bolt_dag(path: &Utf8Path) -> BoltDag {
    if !path.exists() {
        return BoltDag::Missing;
    }
    let malformed = |state: &str, detail: &str| {
        BoltDag::Malformed(format!("unit-of-work-dependency.md is {state}: {detail}"))
    };
    let body = match read_text_lossy(path) {
        Ok(body) => body,
        Err(error) => return malformed("unreadable", &error.to_string()),
    };
    let Some(block) = units_block(&body) else {
        return malformed("absent", "no fenced ```yaml units: block found");
    };
    let block: Vec<&str> = lines_of(&block).collect();
    match unit_names(&block) {
        Ok(units) => BoltDag::Units(units),
        Err(detail) => malformed("malformed", &detail),
    }
}

/// What follows `units:` on a line that is `\s*units\s*:…`.
fn units_key_value(line: &str) -> Option<&str> {
    let rest = js_trim_start(line).strip_prefix("units")?;
    js_trim_start(rest).strip_prefix(':')
}

/// The `- name:` entries below `units:`, each a valid unit name, none twice.
fn unit_names(block: &[&str]) -> Result<Vec<String>, String> {
    let start = block
        .iter()
        .position(|line| units_key_value(line).is_some())
        .ok_or_else(|| "missing units: key".to_owned())?;
    if !js_trim(units_key_value(block[start]).unwrap_or_default()).is_empty() {
        return Err("units: must be a block list, not an inline value".to_owned());
    }
    let names: Vec<String> = block[start + 1..]
        .iter()
        .filter_map(|line| unit_name_of_line(line))
        .collect();
    if names.is_empty() {
        return Err("units: block has no entries".to_owned());
    }
    for name in &names {
        validate_unit_name(name)?;
    }
    let mut seen = BTreeSet::new();
    if let Some(duplicate) = names.iter().find(|name| !seen.insert(name.as_str())) {
        return Err(format!("duplicate unit name: {duplicate}"));
    }
    Ok(names)
}

/// The name of a `\s*-\s+name\s*:\s*<name>` line, unquoted.
fn unit_name_of_line(line: &str) -> Option<String> {
    let item = js_trim_start(line).strip_prefix('-')?;
    if !item.starts_with(crate::js_text::is_js_whitespace) {
        return None;
    }
    let rest = js_trim_start(item).strip_prefix("name")?;
    let value = js_trim(js_trim_start(rest).strip_prefix(':')?);
    (!value.is_empty()).then(|| unquote_scalar(value).to_owned())
}

fn unquote_scalar(value: &str) -> &str {
    let quoted = value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\'')));
    if quoted {
        &value[1..value.len() - 1]
    } else {
        value
    }
}

fn validate_unit_name(name: &str) -> Result<(), String> {
    let length = name.encode_utf16().count();
    if name.is_empty() {
        return Err("Unit name is empty".to_owned());
    }
    if length > UNIT_NAME_MAX_LENGTH {
        let start: String = name.chars().take(32).collect();
        return Err(format!(
            "Unit name \"{start}...\" is {length} chars; max is {UNIT_NAME_MAX_LENGTH}"
        ));
    }
    let mut bytes = name.bytes();
    let valid = bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphanumeric())
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "Invalid Unit name \"{name}\" - must match /^[A-Za-z0-9][A-Za-z0-9._-]*$/ (ASCII letter/digit, then ASCII letters/digits/dot/underscore/hyphen)"
        ))
    }
}

/// The cells of a Markdown table row (trimmed, outer pipes dropped); none for any other line
/// or for a separator row.
fn markdown_cells(line: &str) -> Vec<&str> {
    let is_separator_row = line.chars().all(|character| {
        crate::js_text::is_js_whitespace(character) || matches!(character, ':' | '|' | '-')
    });
    if !js_trim(line).starts_with('|') || is_separator_row {
        return Vec::new();
    }
    let parts: Vec<&str> = line.split('|').collect();
    parts[1..parts.len() - 1]
        .iter()
        .map(|cell| js_trim(cell))
        .collect()
}

/// Each unit's `U<n>` alias: from every table row of `unit-of-work.md` that has one (the first
/// `U<n>` of the row, any case, upper-cased) and names a unit as a whole cell. A later row wins;
/// an unreadable file gives no aliases.
fn unit_aliases(unit_of_work: &Utf8Path, units: &[String]) -> Vec<(String, String)> {
    let mut aliases: Vec<(String, String)> = Vec::new();
    let Ok(text) = read_upstream(unit_of_work) else {
        return aliases;
    };
    for line in lines_of(&text) {
        let cells = markdown_cells(line);
        let Some(alias) = cells.iter().find_map(|cell| first_unit_alias(cell)) else {
            continue;
        };
        let named = units.iter().find(|unit| {
            cells
                .iter()
                .any(|cell| *cell == unit.as_str() || *cell == format!("`{unit}`"))
        });
        if let Some(unit) = named {
            match aliases.iter_mut().find(|(known, _)| known == unit) {
                Some(entry) => entry.1 = alias,
                None => aliases.push((unit.clone(), alias)),
            }
        }
    }
    aliases
}

/// The first `U<digits>` (any case) standing as a whole word in `cell`, upper-cased.
fn first_unit_alias(cell: &str) -> Option<String> {
    let bytes = cell.as_bytes();
    (0..bytes.len()).find_map(|start| {
        if !matches!(bytes[start], b'U' | b'u') || is_word_byte_before(bytes, start) {
            return None;
        }
        let end = digits_end(bytes, start + 1)?;
        (!is_word_byte_at(bytes, end)).then(|| cell[start..end].to_ascii_uppercase())
    })
}

/// Which units each story goes to, from the table rows of the story map that name a story and
/// a unit (by name or alias, as a token of a cell); the reason when the map cannot be read or
/// maps nothing.
fn story_assignments(
    story_map: &Utf8Path,
    units: &[String],
    aliases: &[(String, String)],
) -> (BTreeMap<String, BTreeSet<String>>, Option<String>) {
    let mut assignments: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let text = match read_upstream(story_map) {
        Ok(text) => text,
        Err(reason) => return (assignments, Some(reason)),
    };
    for line in lines_of(&text) {
        let cells = markdown_cells(line);
        if cells.is_empty() {
            continue;
        }
        let stories = extract_ids(line, &[IdPattern::Us]);
        for unit in units {
            let alias = aliases
                .iter()
                .find(|(known, _)| known == unit)
                .map(|(_, a)| a);
            let names: Vec<&String> = std::iter::once(unit).chain(alias).collect();
            let row_names_unit = cells
                .iter()
                .any(|cell| names.iter().any(|name| token_present(cell, name)));
            if !row_names_unit {
                continue;
            }
            for story in &stories {
                assignments
                    .entry(story.clone())
                    .or_default()
                    .insert(unit.clone());
            }
        }
    }
    let reason = assignments.is_empty().then(|| {
        format!("unit-of-work-story-map.md contains no story-to-unit mappings: {story_map}")
    });
    (assignments, reason)
}

/// Whether `token` (ASCII, any case) occurs in `cell` between the cell's ends, white space,
/// `,`, `;` or `/`.
fn token_present(cell: &str, token: &str) -> bool {
    let is_delimiter = |character: Option<char>| {
        character
            .is_none_or(|c| crate::js_text::is_js_whitespace(c) || matches!(c, ',' | ';' | '/'))
    };
    let (bytes, needle) = (cell.as_bytes(), token.as_bytes());
    if needle.is_empty() || needle.len() > bytes.len() {
        return false;
    }
    (0..=bytes.len() - needle.len()).any(|start| {
        let end = start + needle.len();
        bytes[start..end].eq_ignore_ascii_case(needle)
            && cell.is_char_boundary(start)
            && cell.is_char_boundary(end)
            && is_delimiter(cell[..start].chars().next_back())
            && is_delimiter(cell[end..].chars().next())
    })
}

// ---------------------------------------------------------------------------------------------
// Element ids

/// The id shapes of the reference: `FR1`/`FR1.2`, `NFR1` (not followed by `.<digit>`),
/// `NFR1.2`, `US1.2`, `AC1.2.3`, `BR1.2`; each a whole word (ASCII word characters), case kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdPattern {
    Fr,
    Nfr,
    NfrDetail,
    Us,
    Ac,
    Br,
}

impl IdPattern {
    fn prefix(self) -> &'static [u8] {
        match self {
            Self::Fr => b"FR",
            Self::Nfr | Self::NfrDetail => b"NFR",
            Self::Us => b"US",
            Self::Ac => b"AC",
            Self::Br => b"BR",
        }
    }

    /// How many `.<digits>` parts follow the first number.
    fn dotted_parts(self) -> usize {
        match self {
            Self::Fr | Self::Nfr => 0,
            Self::NfrDetail | Self::Us | Self::Br => 1,
            Self::Ac => 2,
        }
    }
}

fn extract_ids(text: &str, patterns: &[IdPattern]) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut ids = BTreeSet::new();
    for &pattern in patterns {
        for start in 0..bytes.len() {
            if let Some(end) = id_end_at(bytes, start, pattern) {
                ids.insert(text[start..end].to_owned());
            }
        }
    }
    ids
}

/// Where the id of `pattern` starting at `start` ends, if one starts there.
fn id_end_at(bytes: &[u8], start: usize, pattern: IdPattern) -> Option<usize> {
    let prefix = pattern.prefix();
    if !bytes[start..].starts_with(prefix) || is_word_byte_before(bytes, start) {
        return None;
    }
    let mut end = digits_end(bytes, start + prefix.len())?;
    for _ in 0..pattern.dotted_parts() {
        end = dotted_digits_end(bytes, end)?;
    }
    let word_ends_at = |offset: usize| !is_word_byte_at(bytes, offset);
    match pattern {
        IdPattern::Fr => dotted_digits_end(bytes, end)
            .filter(|&longer| word_ends_at(longer))
            .or_else(|| word_ends_at(end).then_some(end)),
        IdPattern::Nfr => {
            (word_ends_at(end) && dotted_digits_end(bytes, end).is_none()).then_some(end)
        }
        _ => word_ends_at(end).then_some(end),
    }
}

/// The end of the run of ASCII digits at `from`, when there is at least one.
fn digits_end(bytes: &[u8], from: usize) -> Option<usize> {
    let count = bytes
        .get(from..)?
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    (count > 0).then_some(from + count)
}

/// The end of `.<digits>` at `from`, when there is one.
fn dotted_digits_end(bytes: &[u8], from: usize) -> Option<usize> {
    (bytes.get(from) == Some(&b'.'))
        .then(|| digits_end(bytes, from + 1))
        .flatten()
}

fn is_word_byte_before(bytes: &[u8], offset: usize) -> bool {
    offset
        .checked_sub(1)
        .is_some_and(|before| is_word_byte_at(bytes, before))
}

/// `[A-Za-z0-9_]`; a byte of a multi-byte character is never one (JavaScript's ASCII `\w`).
fn is_word_byte_at(bytes: &[u8], offset: usize) -> bool {
    bytes
        .get(offset)
        .is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const RECORD: &str = "aidlc/spaces/default/intents/demo-0001";

    const REQUIREMENTS: &str = "## Functional\n- FR1 login\n- FR2 logout\n## NFR\n- NFR1 fast\n";

    const STORIES: &str = "\
## US1.1 Log in\n- AC1.1.1 valid password\n- AC1.1.2 bad password\n\
## US1.2 Log out\n- AC1.2.1 session ends\n\
## US2.1 Report\n- AC2.1.1 export\n";

    const DAG: &str = "## Units\n```yaml\nunits:\n  - name: auth\n    depends_on: []\n  - name: reports\n    depends_on: [auth]\n```\n";

    const UNIT_OF_WORK: &str = "| Id | Unit |\n|----|------|\n| U1 | auth |\n| U2 | `reports` |\n";

    const STORY_MAP: &str =
        "| Story | Unit |\n|---|---|\n| US1.1 | auth |\n| US1.2 | U1 |\n| US2.1 | reports |\n";

    const RULES: &str = "## Rules\n- BR1.1 lock after 3 tries\n- BR1.2 expire sessions\n";

    struct Project {
        dir: tempfile::TempDir,
    }

    impl Project {
        /// A project whose one intent record is the active one.
        fn new() -> Self {
            let project = Self {
                dir: tempfile::tempdir().unwrap(),
            };
            project.write(&format!("{RECORD}/aidlc-state.md"), "# State\n");
            project
        }

        fn without_record() -> Self {
            Self {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn root(&self) -> Utf8PathBuf {
            Utf8PathBuf::from_path_buf(self.dir.path().to_path_buf()).unwrap()
        }

        fn write(&self, relative: &str, text: &str) -> Utf8PathBuf {
            let path = self.root().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        }

        /// Write `<RECORD>/<relative>`.
        fn record_file(&self, relative: &str, text: &str) -> Utf8PathBuf {
            self.write(&format!("{RECORD}/{relative}"), text)
        }

        /// The inception files every construction example uses.
        fn with_inception(&self) -> &Self {
            self.record_file(
                "inception/requirements-analysis/requirements.md",
                REQUIREMENTS,
            );
            self.record_file("inception/user-stories/stories.md", STORIES);
            self.record_file("inception/units-generation/unit-of-work-dependency.md", DAG);
            self.record_file("inception/units-generation/unit-of-work.md", UNIT_OF_WORK);
            self.record_file(
                "inception/units-generation/unit-of-work-story-map.md",
                STORY_MAP,
            );
            self
        }

        fn run(&self, args: &[&str]) -> WorkerOutcome {
            let args: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
            let context = WorkerContext {
                project_dir: self.root(),
                timeout: Duration::from_secs(300),
            };
            run(&args, &context)
        }

        fn verdict(&self, args: &[&str]) -> Value {
            match self.run(args) {
                WorkerOutcome::Verdict(json) => json,
                other => panic!("expected a verdict, got {other:?}"),
            }
        }

        fn usage_error(&self, args: &[&str]) -> String {
            match self.run(args) {
                WorkerOutcome::UsageError(message) => message,
                other => panic!("expected a usage error, got {other:?}"),
            }
        }

        /// Write `table` at `<RECORD>/<relative>` and fire on it with `--stage`.
        fn fire(&self, relative: &str, stage: &str, table: &Value) -> Value {
            let path = self.record_file(relative, &table.to_string());
            self.verdict(&["--stage", stage, "--output-path", path.as_str()])
        }
    }

    fn entry(id: &str, status: &str, target: &str) -> Value {
        serde_json::json!({ "id": id, "status": status, "target": target })
    }

    fn table(upstream_ids: &[&str], coverage: &[Value], reverse: &[Value]) -> Value {
        serde_json::json!({
            "upstream_ids": upstream_ids,
            "coverage": coverage,
            "reverse": reverse,
        })
    }

    fn keys(verdict: &Value) -> Vec<&str> {
        verdict
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    fn list<'verdict>(verdict: &'verdict Value, key: &str) -> Vec<&'verdict str> {
        verdict[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item.as_str().unwrap())
            .collect()
    }

    const FUNCTIONAL_DESIGN_TABLE: &str = "construction/auth/functional-design/traceability.json";

    fn functional_design_project() -> Project {
        let project = Project::new();
        project.with_inception();
        project.record_file("construction/auth/functional-design/rules.md", RULES);
        project
    }

    // --- complete matrices ---------------------------------------------------------------------

    #[test]
    fn a_complete_functional_design_matrix_passes() {
        let project = functional_design_project();
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(
                &["AC1.1.1", "AC1.1.2", "AC1.2.1"],
                &[
                    entry("AC1.1.1", "OK", "BR1.1"),
                    entry("AC1.1.2", "OK", "BR1.1, BR1.2"),
                    entry("AC1.2.1", "Deferred", "later bolt"),
                ],
                &[],
            ),
        );
        assert_eq!(
            verdict.to_string(),
            r#"{"pass":true,"gaps":[],"orphans":[],"missing_from_table":[],"missing_from_upstream_ids":[],"invalid_entries":[],"invalid_targets":[],"findings_count":0}"#
        );
    }

    #[test]
    fn a_complete_user_stories_matrix_passes() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2", "NFR1"],
                &[
                    entry("FR1", "OK", "US1.1"),
                    entry("FR2", "OK", "US1.2 and US2.1"),
                    entry("NFR1", "N/A", "covered at nfr-requirements"),
                ],
                &[],
            ),
        );
        assert_eq!(verdict["pass"], true, "{verdict}");
        assert_eq!(verdict["findings_count"], 0);
    }

    #[test]
    fn the_stage_comes_from_the_file_when_no_flag_names_it() {
        let project = Project::new();
        project.with_inception();
        let mut data = table(&["NFR1"], &[entry("NFR1", "OK", "perf doc")], &[]);
        data["stage"] = Value::from("nfr-requirements");
        data["unit"] = Value::from("auth");
        let path = project.record_file(
            "construction/auth/nfr-requirements/traceability.json",
            &data.to_string(),
        );
        let verdict = project.verdict(&["--output-path", path.as_str()]);
        assert_eq!(verdict["pass"], true, "{verdict}");
    }

    // --- missing upstream coverage -------------------------------------------------------------

    #[test]
    fn missing_upstream_coverage_fails() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2"],
                &[entry("FR1", "OK", "US1.1"), entry("FR2", "GAP", "")],
                &[],
            ),
        );
        assert_eq!(
            verdict.to_string(),
            r#"{"pass":false,"gaps":["FR2"],"orphans":[],"missing_from_table":[],"missing_from_upstream_ids":["NFR1"],"invalid_entries":[],"invalid_targets":[],"findings_count":2}"#
        );
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(&["FR1", "FR2", "NFR1"], &[entry("FR1", "OK", "US1.1")], &[]),
        );
        assert_eq!(list(&verdict, "missing_from_table"), ["FR2", "NFR1"]);
        assert_eq!(verdict["findings_count"], 2);
    }

    #[test]
    fn entry_problems_are_invalid_entries() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2", "NFR1"],
                &[
                    entry("FR1", "OK", "US1.1"),
                    entry("FR2", "Done", "US1.2"),
                    entry("NFR1", "N/A", "  "),
                    entry("FR9", "Deferred", "later"),
                ],
                &[entry("X1", "ORPHAN", "")],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_entries"),
            [
                "coverage:FR2: unknown status \"Done\"",
                "coverage:FR9: id is absent from upstream_ids",
                "coverage:NFR1: status N/A requires a non-empty target",
            ]
        );
        assert_eq!(list(&verdict, "orphans"), ["X1"]);
        assert_eq!(verdict["findings_count"], 4);
    }

    #[test]
    fn an_unresolvable_upstream_fails_closed() {
        let project = Project::new();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(&["FR1"], &[entry("FR1", "GAP", "")], &[]),
        );
        let requirements = project
            .root()
            .join(RECORD)
            .join("inception/requirements-analysis/requirements.md");
        let stories = project
            .root()
            .join(RECORD)
            .join("inception/user-stories/stories.md");
        assert_eq!(verdict["findings_count"], 3);
        assert_eq!(
            verdict["reason"],
            format!(
                "required upstream artifact is missing: {requirements}; required upstream artifact is missing: {stories}"
            )
        );
        let verdict = project.fire(
            "inception/other/traceability.json",
            "workspace-detection",
            &table(&["X"], &[entry("X", "GAP", "")], &[]),
        );
        assert!(
            verdict["reason"]
                .as_str()
                .unwrap()
                .starts_with("cannot derive the construction unit from output path: "),
            "{verdict}"
        );
        let verdict = project.fire(
            "construction/auth/review/traceability.json",
            "review",
            &table(&["X"], &[entry("X", "GAP", "")], &[]),
        );
        assert_eq!(
            verdict["reason"],
            "stage \"review\" has no traceability upstream resolver"
        );
    }

    #[test]
    fn without_an_intent_record_nothing_passes() {
        let project = Project::without_record();
        let path = project.write(
            "traceability.json",
            &table(&["FR1"], &[entry("FR1", "OK", "US1.1")], &[]).to_string(),
        );
        let verdict = project.verdict(&["--stage", "user-stories", "--output-path", path.as_str()]);
        assert_eq!(verdict["pass"], false);
        assert_eq!(
            verdict["reason"],
            "cannot resolve the active intent record directory"
        );
        assert_eq!(verdict["findings_count"], 1);
    }

    #[test]
    fn an_undeclared_or_broken_unit_dag_fails_closed() {
        let project = functional_design_project();
        let verdict = project.fire(
            "construction/billing/functional-design/traceability.json",
            "functional-design",
            &table(&["AC1.1.1"], &[entry("AC1.1.1", "OK", "BR1.1")], &[]),
        );
        assert!(
            verdict["reason"]
                .as_str()
                .unwrap()
                .contains("unit \"billing\" is not declared in unit-of-work-dependency.md"),
            "{verdict}"
        );
        project.record_file(
            "inception/units-generation/unit-of-work-dependency.md",
            "## Units\nno block\n",
        );
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&["AC1.1.1"], &[entry("AC1.1.1", "OK", "BR1.1")], &[]),
        );
        assert!(
            verdict["reason"].as_str().unwrap().contains(
                "unit-of-work-dependency.md is absent: no fenced ```yaml units: block found"
            ),
            "{verdict}"
        );
    }

    // --- dangling downstream targets -----------------------------------------------------------

    #[test]
    fn a_dangling_story_target_fails() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2", "NFR1"],
                &[
                    entry("FR1", "OK", "US9.9"),
                    entry("FR2", "OK", "the login story"),
                    entry("NFR1", "Deferred", "later"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            [
                "FR1: target US9.9 is absent from stories.md",
                "FR2: target must name at least one USx.y ID",
            ]
        );
        assert_eq!(verdict["pass"], false);
        assert_eq!(verdict["findings_count"], 2);
    }

    #[test]
    fn a_dangling_rule_target_fails() {
        let project = functional_design_project();
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(
                &["AC1.1.1", "AC1.1.2", "AC1.2.1"],
                &[
                    entry("AC1.1.1", "OK", "BR1.1"),
                    entry("AC1.1.2", "OK", "BR1.2, BR7.7"),
                    entry("AC1.2.1", "OK", "none"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            [
                "AC1.1.2: target BR7.7 is absent from rules.md",
                "AC1.2.1: target must name at least one BRx.y ID",
            ]
        );
    }

    #[test]
    fn unit_targets_must_be_declared_and_mapped() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/units-generation/traceability.json",
            "units-generation",
            &table(
                &["US1.1", "US1.2", "US2.1"],
                &[
                    entry("US1.1", "OK", "auth"),
                    entry("US1.2", "OK", "u1"),
                    entry("US2.1", "OK", "auth"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            ["US2.1: target \"auth\" is not mapped in unit-of-work-story-map.md"]
        );
        let verdict = project.fire(
            "inception/units-generation/traceability.json",
            "units-generation",
            &table(
                &["US1.1", "US1.2", "US2.1"],
                &[
                    entry("US1.1", "OK", "billing"),
                    entry("US1.2", "OK", "U1"),
                    entry("US2.1", "OK", "U2"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            ["US1.1: target \"billing\" is not a declared unit"]
        );
    }

    #[test]
    fn unmapped_stories_become_gaps() {
        let project = Project::new();
        project.with_inception();
        project.record_file(
            "inception/units-generation/unit-of-work-story-map.md",
            "| Story | Unit |\n|---|---|\n| US1.1, US1.2 | auth |\n",
        );
        let verdict = project.fire(
            "inception/units-generation/traceability.json",
            "units-generation",
            &table(
                &["US1.1", "US1.2", "US2.1"],
                &[
                    entry("US1.1", "OK", "auth"),
                    entry("US1.2", "OK", "auth"),
                    entry("US2.1", "Deferred", "phase 2"),
                ],
                &[],
            ),
        );
        assert_eq!(list(&verdict, "gaps"), ["US2.1"]);
        assert_eq!(verdict["findings_count"], 1);
    }

    #[test]
    fn code_targets_must_be_files_inside_the_project() {
        let project = Project::new();
        project.with_inception();
        project.write("src/auth/login.rs", "fn login() {}\n");
        project.record_file("construction/auth/functional-design/rules.md", RULES);
        let verdict = project.fire(
            "construction/auth/code-generation/traceability.json",
            "code-generation",
            &table(
                &["AC1.1.1", "AC1.1.2", "AC1.2.1", "BR1.1", "BR1.2"],
                &[
                    entry("AC1.1.1", "OK", "src/auth/login.rs"),
                    entry("AC1.1.2", "OK", "src\\auth\\login.rs"),
                    entry("AC1.2.1", "OK", "src/auth/logout.rs"),
                    entry("BR1.1", "OK", "../outside.rs"),
                    entry("BR1.2", "OK", "/etc/passwd"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            [
                "AC1.2.1: target file does not exist: src/auth/logout.rs",
                "BR1.1: target escapes the project directory",
                "BR1.2: target must be a workspace-relative file path",
            ]
        );
        assert_eq!(verdict["findings_count"], 3);
    }

    #[cfg(unix)]
    #[test]
    fn a_code_target_that_leaves_through_a_symlink_escapes_e3() {
        let project = Project::new();
        project.with_inception();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), project.root().join("linked")).unwrap();
        let verdict = project.fire(
            "construction/auth/code-generation/traceability.json",
            "code-generation",
            &table(
                &["AC1.1.1", "AC1.1.2"],
                &[
                    entry("AC1.1.1", "OK", "linked/secret.rs"),
                    entry("AC1.1.2", "GAP", ""),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            ["AC1.1.1: target escapes the project directory"]
        );
    }

    // --- orphans -------------------------------------------------------------------------------

    #[test]
    fn a_rule_no_row_targets_is_a_derived_orphan() {
        let project = functional_design_project();
        let coverage = [
            entry("AC1.1.1", "OK", "BR1.1"),
            entry("AC1.1.2", "OK", "BR1.1"),
            entry("AC1.2.1", "OK", "BR1.1"),
        ];
        let ids = ["AC1.1.1", "AC1.1.2", "AC1.2.1"];
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&ids, &coverage, &[]),
        );
        assert_eq!(list(&verdict, "orphans"), ["BR1.2"]);
        assert_eq!(verdict["pass"], false);
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&ids, &coverage, &[entry("BR1.2", "N/A", "platform rule")]),
        );
        assert_eq!(verdict["pass"], true, "{verdict}");
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&ids, &coverage, &[entry("BR1.2", "ORPHAN", "")]),
        );
        assert_eq!(list(&verdict, "orphans"), ["BR1.2"]);
    }

    #[test]
    fn nfr_design_reads_the_units_nfr_requirements() {
        let project = Project::new();
        project.with_inception();
        project.record_file(
            "construction/auth/nfr-requirements/performance-requirements.md",
            "NFR1.1 p95 under 200 ms; NFR1.2 cold start\n",
        );
        let verdict = project.fire(
            "construction/auth/nfr-design/traceability.json",
            "nfr-design",
            &table(&["NFR1.1"], &[entry("NFR1.1", "OK", "cache layer")], &[]),
        );
        assert_eq!(list(&verdict, "missing_from_upstream_ids"), ["NFR1.2"]);
        let verdict = project.fire(
            "construction/reports/infrastructure-design/traceability.json",
            "infrastructure-design",
            &table(&["NFR1.1"], &[entry("NFR1.1", "OK", "x")], &[]),
        );
        let folder = project
            .root()
            .join(RECORD)
            .join("construction/reports/nfr-design");
        assert_eq!(
            verdict["reason"],
            format!("required upstream NFR design artifacts are missing under {folder}")
        );
    }

    // --- malformed tables ----------------------------------------------------------------------

    fn single_finding(reason: &str) -> String {
        format!(
            r#"{{"pass":false,"gaps":[],"orphans":[],"missing_from_table":[],"missing_from_upstream_ids":[],"invalid_entries":[],"invalid_targets":[],"findings_count":1,"reason":"{reason}"}}"#
        )
    }

    #[test]
    fn malformed_json_is_one_finding_not_an_error() {
        let project = Project::new();
        for body in ["{\"upstream_ids\": [", "", "not json", "\u{feff}{}"] {
            let path = project.record_file("inception/user-stories/traceability.json", body);
            let verdict = project.verdict(&["--output-path", path.as_str()]);
            assert_eq!(
                verdict.to_string(),
                single_finding("invalid JSON in traceability file"),
                "{body:?}"
            );
        }
    }

    #[test]
    fn each_shape_failure_names_its_reason() {
        let project = Project::new();
        let cases = [
            ("[]", "traceability.json must contain a JSON object"),
            ("null", "traceability.json must contain a JSON object"),
            ("{}", "upstream_ids must be an array of non-empty strings"),
            (
                r#"{"upstream_ids":["a"," "],"coverage":[]}"#,
                "upstream_ids must be an array of non-empty strings",
            ),
            (
                r#"{"upstream_ids":[],"coverage":{}}"#,
                "coverage must be an array",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[],"reverse":null}"#,
                "reverse must be an array when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[1]}"#,
                "coverage[0] must be an object",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[{"id":"a","status":"OK"}],"reverse":[{"id":"","status":"OK"}]}"#,
                "reverse[0].id must be a non-empty string",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[{"id":"a","status":7}]}"#,
                "coverage[0].status must be a non-empty string",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[{"id":"a","status":"OK","target":null}]}"#,
                "coverage[0].target must be a string when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[],"stage":3}"#,
                "stage must be a string when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[],"unit":false}"#,
                "unit must be a string when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[]}"#,
                "no coverage entries found in traceability.json",
            ),
        ];
        for (body, reason) in cases {
            let path = project.record_file("inception/user-stories/traceability.json", body);
            let verdict = project.verdict(&["--output-path", path.as_str()]);
            assert_eq!(verdict.to_string(), single_finding(reason), "{body}");
        }
    }

    #[test]
    fn the_output_keys_keep_the_reference_order() {
        let project = Project::new();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(&["FR1"], &[entry("FR1", "GAP", "")], &[]),
        );
        assert_eq!(
            keys(&verdict),
            [
                "pass",
                "gaps",
                "orphans",
                "missing_from_table",
                "missing_from_upstream_ids",
                "invalid_entries",
                "invalid_targets",
                "findings_count",
                "reason",
            ]
        );
    }

    // --- paths ---------------------------------------------------------------------------------

    #[test]
    fn windows_style_paths_work() {
        let project = functional_design_project();
        let data = table(
            &["AC1.1.1", "AC1.1.2", "AC1.2.1"],
            &[
                entry("AC1.1.1", "OK", "BR1.1"),
                entry("AC1.1.2", "OK", "BR1.2"),
                entry("AC1.2.1", "OK", "BR1.1"),
            ],
            &[],
        );
        project.record_file(FUNCTIONAL_DESIGN_TABLE, &data.to_string());
        let relative = format!("{RECORD}/.\\{FUNCTIONAL_DESIGN_TABLE}").replace('/', "\\");
        let verdict =
            project.verdict(&["--stage", "functional-design", "--output-path", &relative]);
        assert_eq!(verdict["pass"], true, "{verdict}");
        let code = project.fire(
            "construction/auth/code-generation/traceability.json",
            "code-generation",
            &table(
                &["AC1.1.1"],
                &[entry("AC1.1.1", "OK", "C:\\src\\login.rs")],
                &[],
            ),
        );
        assert_eq!(
            list(&code, "invalid_targets"),
            ["AC1.1.1: target must be a workspace-relative file path"]
        );
    }

    #[test]
    fn the_unit_comes_from_either_construction_layout() {
        assert_eq!(
            unit_of_output_path(Utf8Path::new(
                "/r/construction/auth/nfr-design/traceability.json"
            )),
            Some(("auth".to_owned(), false))
        );
        assert_eq!(
            unit_of_output_path(Utf8Path::new(
                "/r/construction/units/auth/nfr-design/traceability.json"
            )),
            Some(("auth".to_owned(), true))
        );
        for path in [
            "construction/auth/nfr-design/traceability.json",
            "/r/construction/code-generation/traceability.json",
            "/r/construction/auth/nfr-design/other.json",
            "traceability.json",
        ] {
            assert_eq!(unit_of_output_path(Utf8Path::new(path)), None, "{path}");
        }
    }

    // --- flags and errors ----------------------------------------------------------------------

    #[test]
    fn a_missing_output_path_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--stage", "user-stories"]),
            "--output-path is required"
        );
    }

    #[test]
    fn an_output_path_that_does_not_exist_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--output-path", "no\\traceability.json"]),
            "--output-path not found: no\\traceability.json"
        );
    }

    #[test]
    fn an_unreadable_output_path_is_a_usage_error() {
        let project = Project::new();
        let folder = project.root().join("traceability.json");
        std::fs::create_dir_all(&folder).unwrap();
        let message = project.usage_error(&["--output-path", folder.as_str()]);
        assert!(
            message.starts_with(&format!("failed to read --output-path {folder}: ")),
            "{message}"
        );
    }

    #[test]
    fn a_flag_without_a_value_is_a_usage_error_f9() {
        let project = Project::new();
        let path = project.write("traceability.json", "{}");
        assert_eq!(
            project.usage_error(&["--output-path", path.as_str(), "--stage"]),
            "--stage expects a value, got end of arguments."
        );
        assert_eq!(
            project.usage_error(&["--output-path", "--stage", "user-stories"]),
            "--output-path expects a value, got another flag: \"--stage\"."
        );
    }

    // --- element ids ---------------------------------------------------------------------------

    fn ids(text: &str, patterns: &[IdPattern]) -> Vec<String> {
        extract_ids(text, patterns).into_iter().collect()
    }

    #[test]
    fn ids_follow_the_reference_patterns() {
        assert_eq!(
            ids(
                "FR1, FR2.3, FR4.5.6, FR7x, xFR8, FR9.1a, NFR1",
                &[IdPattern::Fr]
            ),
            ["FR1", "FR2.3", "FR4.5", "FR9"]
        );
        assert_eq!(
            ids("NFR1 NFR2.1 NFR3. NFR4_ éNFR5é", &[IdPattern::Nfr]),
            ["NFR1", "NFR3", "NFR5"]
        );
        assert_eq!(
            ids("NFR2.1 NFR2 NFR2.1.4", &[IdPattern::NfrDetail]),
            ["NFR2.1"]
        );
        assert_eq!(
            ids("AC1.2.3 AC1.2 AC1.2.3.4 ac1.2.3", &[IdPattern::Ac]),
            ["AC1.2.3"]
        );
        assert_eq!(ids("[US1.2](x) US3", &[IdPattern::Us]), ["US1.2"]);
        assert_eq!(story_of_acceptance_criterion("AC10.2.3").unwrap(), "US10.2");
    }

    #[test]
    fn table_cells_and_tokens_follow_the_reference() {
        assert_eq!(markdown_cells("| a | `b` | c"), ["a", "`b`"]);
        assert!(markdown_cells("|---|:--:|").is_empty());
        assert!(markdown_cells("text | a |").is_empty());
        assert!(token_present("auth, reports", "AUTH"));
        assert!(token_present("x/auth", "auth"));
        assert!(!token_present("auth-v2", "auth"));
        assert_eq!(first_unit_alias("see u12 and U3").unwrap(), "U12");
        assert_eq!(first_unit_alias("U1x"), None);
    }

    #[test]
    fn lists_are_sorted_by_utf16_code_units() {
        assert_eq!(
            unique_sorted(vec![
                "\u{ff5e}".to_owned(),
                "\u{1f600}".to_owned(),
                "b".to_owned(),
                "B".to_owned(),
                "b".to_owned(),
            ]),
            ["B", "b", "\u{1f600}", "\u{ff5e}"]
        );
    }
}
