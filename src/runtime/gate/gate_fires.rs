//! The plan of gate fires and their parallel run (D6).
//!
//! Invariants:
//! - selection (`fire_on`, severity, `matches`) comes from the compiled graph; the worker,
//!   its arguments and its timeout from the live manifest (through `prepare_fire_with`);
//! - a sensor fires once per deliverable, except a shipped sensor whose descriptor reads the
//!   whole stage (`GateUnit::OutputFolder`), which fires once per output folder, on its first
//!   deliverable that is not a marker (`*-questions`, `*-timestamp`);
//! - the plan is built in a stable order (graph order of stages, authored order of sensors,
//!   deliverable order), and results keep that order whatever the number of threads;
//! - sharding keeps a deterministic share of (stage, deliverable) units by BLAKE3 hash, so the
//!   union of all shards is the unsharded plan.

use std::cell::OnceCell;
use std::time::Instant;

use camino::{Utf8Path, Utf8PathBuf};
use rayon::prelude::*;

use crate::compile::stage_graph::dead_bindings::binding_never_fires_at_the_gate;
use crate::protocol::glob::SensorGlob;
use crate::protocol::output_paths::{
    FolderNames, declared_output_file_names, declared_output_paths, is_marker_artifact,
};
use crate::protocol::selection::Severity;
use crate::protocol::stage_node::{GraphNode, SensorEntry};
use crate::protocol::verdict::{ScriptError, Verdict};
use crate::runtime::audit::ledger::{self, read_record_ledger};
use crate::runtime::dispatch::compiled_graph::produce_dirs;
use crate::runtime::dispatch::fire::{
    BegunFire, EvaluatedFire, FireContext, FireRequest, PreparedFire, begin_fire,
    evaluate_begun_fire, evaluate_without_recording, prepare_fire_with,
};
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::time_limit::GateLimits;
use crate::runtime::gate::deliverables::{
    DeliverableError, StageDeliverables, existing_deliverables,
};
use crate::runtime::gate::fingerprints::{Bracket, Fingerprints, fingerprint_file};
use crate::runtime::gate::progress::stage_was_started;
use crate::runtime::gate::report::{
    DeadBinding, FireOnFilter, FireResult, GateFire, GateSkip, STDERR_LINES_KEPT, SkipReason,
    UnfiredBinding, UnfiredCause, last_lines,
};
use crate::runtime::sensors;
use crate::runtime::sensors::descriptor::GateUnit;
use crate::runtime::workspace::{self, Workspace};

/// One fire to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFire {
    pub stage: String,
    pub sensor_id: String,
    pub severity: Severity,
    /// Canonical absolute path.
    pub deliverable: Utf8PathBuf,
    /// Its place in the whole (unsharded) plan, from 0.
    pub plan_index: usize,
    /// The plugin of the stage (the graph node's `plugin`); `None` for a core stage.
    pub plugin: Option<String>,
}

/// What planning one intent found.
#[derive(Debug, Clone, Default)]
pub struct GatePlan {
    pub fires: Vec<PlannedFire>,
    pub skips: Vec<GateSkip>,
    pub dead_bindings: Vec<DeadBinding>,
    /// Blocking bindings with no fire on a stage the workflow has reached (scenario S12).
    pub unfired_bindings: Vec<UnfiredBinding>,
    pub stages_checked: usize,
    pub deliverables_found: usize,
    /// Bindings of the checked stages that `--fire-on` selected, and the others.
    pub bindings_selected: usize,
    pub bindings_not_selected: usize,
    /// The fires of the whole plan, this shard's and the others' (the next `plan_index`).
    pub planned_units: usize,
    /// BLAKE3 over every planned (stage, sensor, deliverable) unit, in plan order, whatever
    /// the shard: the same in every shard of one check.
    pub units_hash: blake3::Hasher,
}

impl GatePlan {
    /// Count one unit of the whole plan (before the shard decides whose it is) and give its
    /// index.
    fn note_unit(&mut self, stage: &str, sensor_id: &str, deliverable: &Utf8Path) -> usize {
        for part in [stage, sensor_id, deliverable.as_str()] {
            self.units_hash.update(part.as_bytes());
            self.units_hash.update(b"\0");
        }
        self.planned_units += 1;
        self.planned_units - 1
    }
}

/// Plan the fires of `stages` (all when empty) for the intent record `record`.
///
/// A selected blocking binding that gets no fire (and no other shard's fire) on a stage the
/// workflow has reached is an [`UnfiredBinding`]: a stage named in `stages`, one with a
/// produce folder or anything on disk under a declared name, the state's current stage, or a
/// stage the ledger shows started (and not skipped since). Stages not reached yet only get
/// `no deliverable` skips, so a check in the middle of a workflow is not red for stages to come.
pub fn plan_gate_fires(
    workspace: &Workspace,
    nodes: &[GraphNode],
    record: &Utf8Path,
    stages: &[String],
    fire_on: FireOnFilter,
    shard: Option<(u64, u64)>,
) -> Result<GatePlan, DeliverableError> {
    let project_dir = workspace.project_dir();
    let mut plan = GatePlan::default();
    let current_stage =
        workspace::read_state_text(record).and_then(|text| workspace::current_stage(&text));
    // Read only when a stage's folders do not already say it was reached.
    let ledger = OnceCell::new();
    let started = |slug: &str| {
        current_stage.as_deref() == Some(slug)
            || stage_was_started(
                &ledger.get_or_init(|| read_record_ledger(record)).entries,
                slug,
            )
    };
    for node in nodes
        .iter()
        .filter(|node| stages.is_empty() || stages.contains(&node.slug))
    {
        plan.stages_checked += 1;
        let (entries, not_selected): (Vec<&SensorEntry>, Vec<&SensorEntry>) = node
            .sensors_applicable
            .iter()
            .partition(|entry| fire_on.admits(entry.fire_on));
        plan.bindings_selected += entries.len();
        plan.bindings_not_selected += not_selected.len();
        plan.dead_bindings
            .extend(dead_bindings(workspace, record, node, &entries));
        let deliverables = existing_deliverables(workspace, record, node, &[])?;
        plan.deliverables_found += deliverables.files.len();
        let reached = || {
            stages.contains(&node.slug)
                || !deliverables.files.is_empty()
                || !deliverables.not_regular.is_empty()
                || !produce_dirs(workspace, record, node).is_empty()
                || started(&node.slug)
        };
        for entry in entries {
            // A unit is noted exactly when it gets a fire, in this shard or another.
            let units_before = plan.planned_units;
            if deliverables.files.is_empty() && deliverables.not_regular.is_empty() {
                plan.skips.push(GateSkip {
                    stage: node.slug.clone(),
                    sensor_id: entry.id.clone(),
                    deliverable: None,
                    reason: SkipReason::NoDeliverable,
                });
            } else {
                plan_entry(project_dir, node, entry, &deliverables, shard, &mut plan);
            }
            let fired = plan.planned_units > units_before;
            if entry.default_severity == Severity::Blocking && !fired && reached() {
                plan.unfired_bindings.push(unfired_binding(
                    project_dir,
                    record,
                    node,
                    entry,
                    &deliverables,
                ));
            }
        }
    }
    Ok(plan)
}

/// The binding's glob; a binding without one (or with one that does not compile, which the
/// fire's pre-flight then refuses) is planned on every deliverable.
fn binding_glob(entry: &SensorEntry) -> Option<SensorGlob> {
    entry
        .matches
        .as_deref()
        .filter(|pattern| !pattern.is_empty())
        .and_then(|pattern| SensorGlob::new(pattern).ok())
}

fn glob_admits(glob: Option<&SensorGlob>, project_dir: &Utf8Path, path: &Utf8Path) -> bool {
    glob.is_none_or(|glob| glob.matches(project_dir, path))
}

/// The fires of one binding over a stage's deliverables, the skips of the ones its glob does
/// not match, then a `not a regular file` skip for each such path it matches (said, and never
/// opened), appended to `plan`.
pub fn plan_entry(
    project_dir: &Utf8Path,
    node: &GraphNode,
    entry: &SensorEntry,
    deliverables: &StageDeliverables,
    shard: Option<(u64, u64)>,
    plan: &mut GatePlan,
) {
    let glob = binding_glob(entry);
    let skip = |relative: Utf8PathBuf, reason| GateSkip {
        stage: node.slug.clone(),
        sensor_id: entry.id.clone(),
        deliverable: Some(relative),
        reason,
    };
    // A sensor that reads the whole stage's output fires once per output folder.
    let per_output_folder = sensors::shipped(&entry.id)
        .is_some_and(|sensor| sensor.gate_unit == GateUnit::OutputFolder);
    let mut folders_done: Vec<Utf8PathBuf> = Vec::new();
    for deliverable in &deliverables.files {
        let relative = relative(project_dir, deliverable);
        if !glob_admits(glob.as_ref(), project_dir, deliverable) {
            plan.skips.push(skip(relative, SkipReason::NoGlobMatch));
            continue;
        }
        if per_output_folder {
            let folder = deliverable
                .parent()
                .map(Utf8Path::to_owned)
                .unwrap_or_default();
            let marker = deliverable.file_stem().is_some_and(is_marker_artifact);
            if marker || folders_done.contains(&folder) {
                continue;
            }
            folders_done.push(folder);
        }
        let plan_index = plan.note_unit(&node.slug, &entry.id, &relative);
        if let Some((index, count)) = shard
            && shard_of(&node.slug, &relative, count) != index
        {
            plan.skips.push(skip(relative, SkipReason::OtherShard));
            continue;
        }
        plan.fires.push(PlannedFire {
            stage: node.slug.clone(),
            sensor_id: entry.id.clone(),
            severity: entry.default_severity,
            deliverable: deliverable.clone(),
            plan_index,
            plugin: node.plugin.clone(),
        });
    }
    for special in &deliverables.not_regular {
        if glob_admits(glob.as_ref(), project_dir, &special.path) {
            plan.skips.push(skip(
                relative(project_dir, &special.path),
                SkipReason::NotARegularFile,
            ));
        }
    }
}

/// The record of a blocking binding that got no fire on the stage, with why: nothing on disk,
/// a glob that matches no deliverable, only markers for a stage-level sensor, or only paths
/// that are not regular files. Shared by `gate check` and `engine gate start|revise`.
pub fn unfired_binding(
    project_dir: &Utf8Path,
    record: &Utf8Path,
    node: &GraphNode,
    entry: &SensorEntry,
    deliverables: &StageDeliverables,
) -> UnfiredBinding {
    let glob = binding_glob(entry);
    let matching_files = deliverables
        .files
        .iter()
        .filter(|path| glob_admits(glob.as_ref(), project_dir, path))
        .count();
    let matching_special: Vec<String> = deliverables
        .not_regular
        .iter()
        .filter(|special| glob_admits(glob.as_ref(), project_dir, &special.path))
        .map(|special| {
            format!(
                "{} is {}",
                relative(project_dir, &special.path),
                special.kind
            )
        })
        .collect();
    let cause = if deliverables.files.is_empty() && deliverables.not_regular.is_empty() {
        UnfiredCause::NoDeliverable
    } else if matching_files > 0 {
        UnfiredCause::OnlyMarkers
    } else if !matching_special.is_empty() {
        UnfiredCause::NotRegularFiles {
            described: matching_special,
        }
    } else {
        UnfiredCause::NoGlobMatch {
            deliverables: deliverables.files.len() + deliverables.not_regular.len(),
        }
    };
    UnfiredBinding {
        stage: node.slug.clone(),
        sensor_id: entry.id.clone(),
        intent: record.file_name().unwrap_or_default().to_owned(),
        manifest_path: entry.path.clone(),
        pattern: entry.matches.clone().filter(|pattern| !pattern.is_empty()),
        declared_outputs: declared_output_file_names(&node.stage_outputs()),
        cause,
        plugin: node.plugin.clone(),
    }
}

/// The 1-based shard a (stage, deliverable) unit belongs to, out of `count`.
pub fn shard_of(stage: &str, deliverable: &Utf8Path, count: u64) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(stage.as_bytes());
    hasher.update(b"\0");
    hasher.update(deliverable.as_str().as_bytes());
    let first: [u8; 8] = hasher.finalize().as_bytes()[..8]
        .try_into()
        .unwrap_or_default();
    u64::from_le_bytes(first) % count.max(1) + 1
}

/// The selected bindings that can never fire at the gate, by the compile's own rule
/// ([`binding_never_fires_at_the_gate`]): a write-fired binding selected by `--fire-on` is
/// never dead. Checked against where the stage's outputs would be written, existing or not.
fn dead_bindings(
    workspace: &Workspace,
    record: &Utf8Path,
    node: &GraphNode,
    entries: &[&SensorEntry],
) -> Vec<DeadBinding> {
    let project_dir = workspace.project_dir();
    let record = relative(project_dir, record);
    let names = FolderNames {
        space: workspace.space(),
        record: record.as_str(),
        ..FolderNames::REPRESENTATIVE
    };
    let possible = declared_output_paths(&node.stage_outputs(), &names);
    entries
        .iter()
        .filter_map(|entry| {
            let pattern = entry.matches.as_deref().filter(|p| !p.is_empty());
            // A binding whose glob does not compile is not called dead: its fires are refused.
            let glob = pattern.map(SensorGlob::new).transpose().ok()?;
            let dead = binding_never_fires_at_the_gate(entry.fire_on, &possible, |path| {
                glob_admits(glob.as_ref(), project_dir, path)
            });
            dead.then(|| DeadBinding {
                stage: node.slug.clone(),
                sensor_id: entry.id.clone(),
                pattern: pattern.unwrap_or_default().to_owned(),
            })
        })
        .collect()
}

pub(crate) fn relative(project_dir: &Utf8Path, path: &Utf8Path) -> Utf8PathBuf {
    let canonical_project = project_dir
        .canonicalize_utf8()
        .unwrap_or_else(|_| project_dir.to_owned());
    path.strip_prefix(&canonical_project)
        .or_else(|_| path.strip_prefix(project_dir))
        .map_or_else(|_| path.to_owned(), Utf8Path::to_owned)
}

/// Run the planned fires on `jobs` threads, recording each (audit rows, detail files) unless
/// `record` is false, each under `limits`. Results come back in plan order.
#[expect(
    clippy::too_many_arguments,
    reason = "the resolved inputs and the request's independent settings, passed as they are"
)]
pub fn run_gate_fires(
    workspace: &Workspace,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    fires: &[PlannedFire],
    jobs: usize,
    record: bool,
    limits: &GateLimits,
    on_fire_done: &(dyn Fn() + Sync),
) -> Vec<GateFire> {
    let (before_dispatch, _) = fingerprint_blocking_deliverables(fires);
    let run_all = || -> Vec<GateFire> {
        if record {
            return fires
                .chunks(jobs.max(1) * RECORDED_BATCH_PER_JOB)
                .flat_map(|batch| {
                    run_recorded_batch(workspace, registry, nodes, batch, limits, on_fire_done)
                })
                .collect();
        }
        fires
            .par_iter()
            .map(|planned| {
                let fire = run_one(workspace, registry, nodes, planned, limits);
                on_fire_done();
                fire
            })
            .collect()
    };
    let mut results = match rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(run_all),
        Err(_) => run_all(),
    };
    set_aside_verdicts_on_changed_deliverables(&mut results, fires, &before_dispatch);
    results
}

/// The fingerprint of every blocking fire's deliverable, taken once before the first dispatch,
/// and each blocking fire whose deliverable cannot be fingerprinted then: such a deliverable has
/// no fingerprint, so every blocking fire on it is bracketed, and so not evaluated, already.
pub(crate) fn fingerprint_blocking_deliverables(
    fires: &[PlannedFire],
) -> (Fingerprints, Vec<&PlannedFire>) {
    let mut fingerprints = Fingerprints::default();
    let mut unreadable: Vec<&PlannedFire> = Vec::new();
    for planned in fires
        .iter()
        .filter(|planned| planned.severity == Severity::Blocking)
    {
        if fingerprints.get(&planned.deliverable).is_some() {
            continue;
        }
        match fingerprint_file(&planned.deliverable) {
            Some(hash) => fingerprints.insert(&planned.deliverable, hash),
            None => unreadable.push(planned),
        }
    }
    (fingerprints, unreadable)
}

/// Once every fire of the run ended, as `aidlc engine gate start` proves before its gate row:
/// a blocking verdict (passed or failed) on a deliverable whose bytes differ from those before
/// the first dispatch is about bytes that no longer enter the gate (another sensor, or anyone,
/// changed them after the blocking sensor read them). It becomes `artifact-changed`, not
/// evaluated, without its findings. `results` and `fires` are in the same order.
fn set_aside_verdicts_on_changed_deliverables(
    results: &mut [GateFire],
    fires: &[PlannedFire],
    before_dispatch: &Fingerprints,
) {
    let changed: Vec<&Utf8Path> = before_dispatch.changed_paths().collect();
    for (result, planned) in results.iter_mut().zip(fires) {
        let evaluated = matches!(
            result.result,
            FireResult::Passed | FireResult::Failed { .. }
        );
        if planned.severity == Severity::Blocking
            && evaluated
            && changed.contains(&planned.deliverable.as_path())
        {
            result.result = FireResult::of(&Verdict::Passed, true);
            result.findings.clear();
        }
    }
}

/// How many recorded fires share one batch of audit rows: every fire of a batch has its
/// `SENSOR_FIRED` written in one append before any of their workers starts, and their terminal
/// rows in one append after the last of them ends. Larger batches take the audit lock fewer
/// times; smaller ones leave fewer fires without a terminal row should `aidlc` be killed, and
/// wait less for a batch's slowest worker.
const RECORDED_BATCH_PER_JOB: usize = 8;

/// One fire of a batch on its way, with its start time: begun with its prepared worker, or
/// refused (nothing recorded).
type BatchFire = (Instant, Result<(PreparedFire, BegunFire), FiredPlan>);

/// One batch of the recorded run of [`run_gate_fires`]: every fire's pre-flight, one
/// append of their `SENSOR_FIRED` rows, their workers in parallel (each bracketed, D6, and
/// under its dispatch cap), then one append of their terminal rows. The lock is taken twice per
/// batch instead of twice per fire, and never while a worker runs. Once the run's deadline has
/// passed, a fire of a later batch is not started (nothing recorded) and a begun fire whose
/// worker has not started is cut short (its terminal row says so).
fn run_recorded_batch(
    workspace: &Workspace,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    batch: &[PlannedFire],
    limits: &GateLimits,
    on_fire_done: &(dyn Fn() + Sync),
) -> Vec<GateFire> {
    let context = FireContext::default();
    let mut begun: Vec<BatchFire> = batch
        .par_iter()
        .map(|planned| {
            let started = Instant::now();
            let request = fire_request(workspace, planned);
            let begun =
                prepare_fire_with(workspace, &request, registry, nodes).and_then(|prepared| {
                    begin_fire(workspace, &prepared, &context, limits.run.as_ref())
                        .map(|begun| (prepared, begun))
                });
            (
                started,
                begun.map_err(|refusal| FiredPlan::refused(refusal.message)),
            )
        })
        .collect();
    append_fired_rows(workspace, &mut begun, &context);
    let evaluated: Vec<_> = begun
        .into_par_iter()
        .zip(batch.par_iter())
        .map(|((started, fire), planned)| {
            let outcome = match fire {
                Err(fired) => (Err(fired), false, started),
                Ok((prepared, begun)) => {
                    let bracket = open_bracket(planned);
                    // The dispatch cap counts from the worker's start, not the batch's.
                    let limit = limits.for_one_fire();
                    let evaluated = evaluate_begun_fire(&prepared, &context, begun, limit.as_ref());
                    let artifact_changed =
                        bracket.is_some_and(|bracket| bracket.changed(&planned.deliverable));
                    (Ok(evaluated), artifact_changed, started)
                }
            };
            on_fire_done();
            outcome
        })
        .collect();
    let written = append_terminal_rows(workspace, &evaluated, &context);
    evaluated
        .into_iter()
        .zip(batch)
        .map(|((evaluated, artifact_changed, started), planned)| {
            let fired = match (evaluated, &written) {
                (Err(refused), _) => refused,
                (Ok(_), Err(message)) => FiredPlan::refused(message.clone()),
                (Ok(evaluated), Ok(())) => {
                    let report = evaluated.into_report(workspace.project_dir());
                    FiredPlan {
                        verdict: report.verdict,
                        fire_id: Some(report.fire_id),
                        detail_path: report.detail_path,
                        stderr_tail: report.stderr_tail,
                    }
                }
            };
            gate_fire_of(workspace, planned, fired, artifact_changed, started)
        })
        .collect()
}

/// Append the `SENSOR_FIRED` rows of a batch's begun fires in one go (they share the clone's
/// shard). When the append fails, no row of the batch was written (all or none), so each of its
/// fires is refused with the reason, never run.
fn append_fired_rows(workspace: &Workspace, fires: &mut [BatchFire], context: &FireContext) {
    let begun: Vec<&BegunFire> = fires
        .iter()
        .filter_map(|(_, fire)| fire.as_ref().ok().map(|(_, begun)| begun))
        .collect();
    let Some(first) = begun.first() else {
        return;
    };
    let rows: Vec<_> = begun
        .iter()
        .map(|begun| (begun.fired_row.clone(), (context.now)()))
        .collect();
    if let Err(error) = ledger::append_rows(workspace.project_dir(), &first.shard, &rows) {
        let message = format!("cannot write the audit row: {error}");
        for (_, fire) in fires.iter_mut().filter(|(_, fire)| fire.is_ok()) {
            *fire = Err(FiredPlan::refused(message.clone()));
        }
    }
}

type EvaluatedInBatch = (Result<EvaluatedFire, FiredPlan>, bool, Instant);

/// Append the terminal rows of a batch's evaluated fires in one go, waiting for the lock as
/// long as its stale rule allows (their `SENSOR_FIRED` rows are written). The error names every
/// fire left incomplete.
fn append_terminal_rows(
    workspace: &Workspace,
    fires: &[EvaluatedInBatch],
    context: &FireContext,
) -> Result<(), String> {
    let evaluated: Vec<&EvaluatedFire> = fires
        .iter()
        .filter_map(|(fire, _, _)| fire.as_ref().ok())
        .collect();
    let Some(first) = evaluated.first() else {
        return Ok(());
    };
    let rows: Vec<_> = evaluated
        .iter()
        .map(|fire| (fire.terminal_row.clone(), (context.now)()))
        .collect();
    ledger::append_terminal_rows(workspace.project_dir(), &first.begun.shard, &rows)
        .map_err(|error| error.to_string())
}

fn run_one(
    workspace: &Workspace,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    planned: &PlannedFire,
    limits: &GateLimits,
) -> GateFire {
    let started = Instant::now();
    let request = fire_request(workspace, planned);
    let bracket = open_bracket(planned);
    let limit = limits.for_one_fire();
    let fired = match prepare_fire_with(workspace, &request, registry, nodes) {
        Err(refusal) => FiredPlan::refused(refusal.message),
        Ok(prepared) => {
            let (verdict, stderr_tail) = evaluate_without_recording(&prepared, limit.as_ref());
            FiredPlan {
                verdict,
                fire_id: None,
                detail_path: None,
                stderr_tail,
            }
        }
    };
    let artifact_changed = bracket.is_some_and(|bracket| bracket.changed(&planned.deliverable));
    gate_fire_of(workspace, planned, fired, artifact_changed, started)
}

/// The fire request of a planned gate fire.
pub(crate) fn fire_request(workspace: &Workspace, planned: &PlannedFire) -> FireRequest {
    FireRequest {
        sensor_id: planned.sensor_id.clone(),
        stage: planned.stage.clone(),
        output_path: planned.deliverable.clone(),
        cwd: workspace.project_dir().to_owned(),
    }
}

/// D6: a blocking verdict counts only for the bytes it read; the bracket, opened just before the
/// worker and closed just after it, proves they held still.
pub(crate) fn open_bracket(planned: &PlannedFire) -> Option<Bracket> {
    (planned.severity == Severity::Blocking).then(|| Bracket::open(&planned.deliverable))
}

/// The report's entry for one fire: its result (not evaluated when its blocking deliverable
/// changed under it), its findings, and its paths relative to the project.
pub(crate) fn gate_fire_of(
    workspace: &Workspace,
    planned: &PlannedFire,
    fired: FiredPlan,
    artifact_changed: bool,
    started: Instant,
) -> GateFire {
    let deliverable = relative(workspace.project_dir(), &planned.deliverable);
    let detail_path = fired
        .detail_path
        .map(|path| relative(workspace.project_dir(), &path));
    let findings = if artifact_changed {
        Vec::new()
    } else {
        sensors::findings_of(
            workspace.project_dir(),
            &planned.sensor_id,
            &deliverable,
            &fired.verdict,
        )
    };
    GateFire {
        stage: planned.stage.clone(),
        sensor_id: planned.sensor_id.clone(),
        severity: planned.severity,
        deliverable,
        result: FireResult::of(&fired.verdict, artifact_changed),
        fire_id: fired.fire_id,
        detail_path,
        findings,
        duration: started.elapsed(),
        stderr_tail: last_lines(&fired.stderr_tail, STDERR_LINES_KEPT),
        plan_index: planned.plan_index,
        plugin: planned.plugin.clone(),
    }
}

/// What one fire gave: its verdict, its fire id and absolute detail path (both `None` when
/// nothing was recorded), and the tail of its worker's stderr.
pub struct FiredPlan {
    pub verdict: Verdict,
    pub fire_id: Option<String>,
    pub detail_path: Option<Utf8PathBuf>,
    pub stderr_tail: String,
}

impl FiredPlan {
    /// A fire its pre-flight, or the audit, refused: `script-error: refused: …`, never a pass.
    pub(crate) fn refused(message: String) -> Self {
        FiredPlan {
            verdict: Verdict::ScriptError(ScriptError::Refused(message)),
            fire_id: None,
            detail_path: None,
            stderr_tail: String::new(),
        }
    }
}
