//! `aidlc engine sensor fire`: one sensor on one file, from pre-flight to printed verdict.
//! D20–D27 and D4–D8 state its invariants (the pre-flight's order and refusals, the argv, the
//! audit rows and their lock windows, the detail files); beyond them:
//! - an output path that is not a regular file is refused: a worker opening a FIFO would block,
//!   and no stage produces any of them;
//! - no fire starts after an interrupt of `aidlc` (nothing is written for it), and a fire
//!   interrupted while its worker runs still writes its terminal row, `script-error:
//!   interrupted`;
//! - the gates fire only on declared deliverables, so [`prepare_fire_with`] does not ask
//!   [`undeclared_record_file`] (D20), as a manual fire and the write hook do.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::interrupt;
use crate::protocol::glob::SensorGlob;
use crate::protocol::graph_reader::{producers_of, unknown_stage_message};
use crate::protocol::output_paths::{
    artifact_file_name, declared_output_file_names, is_marker_artifact,
};
use crate::protocol::stage_node::GraphNode;
use crate::protocol::verdict::{ScriptError, Verdict, verdict_of};
use crate::runtime::audit::ledger;
use crate::runtime::dispatch::compiled_graph::{load_workspace_graph, produce_dirs};
use crate::runtime::dispatch::registry::{LiveRegistry, LiveSensor, load_live_registry};
use crate::runtime::dispatch::time_limit::EnclosingLimit;
use crate::runtime::sensors::descriptor::{
    CONSUMES_FLAG, DELIVERABLES_FLAG, ExtraFlag, FRAMEWORK_TEMPLATES_DIR_FLAG, PathFlag,
    STAGE_FLAG, TEMPLATE_ELIGIBLE_FLAG, TEMPLATES_DIR_FLAG,
};
use crate::runtime::sensors::{self, ShippedSensor};
use crate::runtime::worker_process::{FALLBACK_TIMEOUT, WorkerCommand, run_worker};
use crate::runtime::workspace::Workspace;

#[derive(Debug, Clone)]
pub struct FireRequest {
    pub sensor_id: String,
    pub stage: String,
    /// As given: absolute, or relative to `cwd`.
    pub output_path: Utf8PathBuf,
    pub cwd: Utf8PathBuf,
}

/// Where fire ids and the time come from; tests inject fixed ones.
pub struct FireContext {
    pub new_fire_id: Box<dyn Fn() -> String + Send + Sync>,
    pub now: Box<dyn Fn() -> SystemTime + Send + Sync>,
}

impl Default for FireContext {
    fn default() -> Self {
        Self {
            new_fire_id: Box::new(ledger::new_fire_id),
            now: Box::new(SystemTime::now),
        }
    }
}

/// Why a fire stopped before writing any audit row.
#[derive(Debug, Clone)]
pub struct FireRefusal {
    pub message: String,
    pub help: Option<String>,
    /// Manifest problems that make the registry unusable, with their texts for snippets.
    pub diagnostics: Vec<Diagnostic>,
    pub sources: BTreeMap<Utf8PathBuf, String>,
}

impl FireRefusal {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            help: None,
            diagnostics: Vec::new(),
            sources: BTreeMap::new(),
        }
    }

    fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

#[derive(Debug, Clone)]
pub enum WorkerKind {
    /// A shipped sensor, whatever its manifest's command: native, in-process (D8).
    Shipped(&'static ShippedSensor),
    /// Anything else: a process with cwd = project.
    Process {
        program: String,
        leading_args: Vec<String>,
    },
}

/// A fire that passed pre-flight: everything needed to run it.
#[derive(Debug, Clone)]
pub struct PreparedFire {
    pub sensor_id: String,
    pub stage: String,
    pub absolute_output_path: Utf8PathBuf,
    pub worker: WorkerKind,
    pub worker_args: Vec<String>,
    pub timeout: Duration,
    pub project_dir: Utf8PathBuf,
}

#[derive(Debug, Clone)]
pub struct FireReport {
    pub fire_id: String,
    pub verdict: Verdict,
    pub audit_shard: Utf8PathBuf,
    pub detail_path: Option<Utf8PathBuf>,
    /// The one compact JSON line printed on stdout (D27).
    pub verdict_line: String,
    /// The last bytes the worker wrote on stderr (empty when none), also kept in the detail
    /// file.
    pub stderr_tail: String,
}

/// The pre-flight of D20, in order, plus refusals of our own: a path outside the
/// project, a `matches` that is not a valid glob, and a file of the record the stage does not
/// declare.
pub fn prepare_fire(
    workspace: &Workspace,
    request: &FireRequest,
) -> Result<PreparedFire, FireRefusal> {
    let registry = load_live_registry(&workspace.layout);
    usable_registry(&registry)?;
    known_sensor(&registry, &request.sensor_id)?;
    let graph =
        load_workspace_graph(workspace).map_err(|error| FireRefusal::new(error.to_string()))?;
    let prepared = prepare_fire_with(workspace, request, &registry, &graph.nodes)?;
    if let Some(node) = graph.nodes.iter().find(|node| node.slug == request.stage)
        && let Some(refusal) =
            undeclared_record_file(workspace, node, &prepared.absolute_output_path)
    {
        return Err(refusal);
    }
    Ok(prepared)
}

/// The refusal of a live registry with manifest errors: nothing fires from it.
pub fn usable_registry(registry: &LiveRegistry) -> Result<(), FireRefusal> {
    if registry.errors.is_empty() {
        return Ok(());
    }
    Err(FireRefusal {
        diagnostics: registry.errors.clone(),
        sources: registry.sources.clone(),
        ..FireRefusal::new("the sensor manifests have errors; fix them before firing")
    })
}

/// The refusal of a file under the intent record (or one of the stage's produce folders) that
/// is not a declared output of `node` where the stage writes it; `None` for a declared output
/// and for any file elsewhere (code the linter checks, a file outside every record).
pub fn undeclared_record_file(
    workspace: &Workspace,
    node: &GraphNode,
    path: &Utf8Path,
) -> Option<FireRefusal> {
    let canonical = path.canonicalize_utf8().ok()?;
    let produce_dirs: Vec<Utf8PathBuf> = produce_dirs(workspace, workspace.record_root(), node)
        .iter()
        .filter_map(|dir| dir.canonicalize_utf8().ok())
        .collect();
    let under_record = workspace
        .record_root()
        .canonicalize_utf8()
        .is_ok_and(|record| canonical.starts_with(record));
    let in_produce_dir = produce_dirs.iter().any(|dir| canonical.starts_with(dir));
    if !under_record && !in_produce_dir {
        return None;
    }
    let declared = declared_output_file_names(&node.stage_outputs());
    let is_declared = canonical
        .parent()
        .is_some_and(|folder| produce_dirs.iter().any(|dir| dir == folder))
        && canonical
            .file_name()
            .is_some_and(|name| declared.iter().any(|declared| declared == name));
    if is_declared {
        return None;
    }
    let shown = ledger::relative_path_field(workspace.project_dir(), path.as_str());
    let names = if declared.is_empty() {
        "no output".to_owned()
    } else {
        declared.join(", ")
    };
    Some(
        FireRefusal::new(format!(
            "output path {shown} is not a declared output of stage \"{}\" (it declares: {names}, in its produce folders)",
            node.slug
        ))
        .with_help(
            "fire sensors on the stage's own outputs: a verdict on another file of the record is kept in the ledger where no gate reads it",
        ),
    )
}

fn known_sensor<'r>(
    registry: &'r LiveRegistry,
    sensor_id: &str,
) -> Result<&'r LiveSensor, FireRefusal> {
    registry.known(sensor_id).map_err(FireRefusal::new)
}

/// [`prepare_fire`] with the registry (free of errors) and the graph already loaded: gate
/// dispatch prepares many fires from one load.
pub fn prepare_fire_with(
    workspace: &Workspace,
    request: &FireRequest,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
) -> Result<PreparedFire, FireRefusal> {
    // Absolute against the working folder, `.` and `..` resolved lexically (no realpath, as the
    // reference); an absolute output path replaces the folder.
    let absolute_output_path =
        sensors::worker_args::lexically_normal(&request.cwd.join(&request.output_path));
    let sensor = known_sensor(registry, &request.sensor_id)?;
    let Some(node) = nodes.iter().find(|node| node.slug == request.stage) else {
        return Err(FireRefusal::new(unknown_stage_message(
            &request.stage,
            nodes,
        )));
    };
    if !absolute_output_path.exists() {
        return Err(FireRefusal::new(format!(
            "output path does not exist: {absolute_output_path}"
        )));
    }
    // Reading a FIFO blocks until someone writes to it, and a device or socket is never a
    // deliverable, so nothing reads such a path.
    if let Some(kind) = crate::leaves::fs_util::not_regular_file_kind(&absolute_output_path) {
        return Err(FireRefusal::new(format!(
            "output path {absolute_output_path} is {kind}, not a regular file"
        ))
        .with_help("fire sensors on regular files only"));
    }
    check_inside_project(workspace.project_dir(), &absolute_output_path)?;
    check_matches(
        workspace.project_dir(),
        sensor,
        &request.sensor_id,
        &absolute_output_path,
    )?;
    let worker = worker_kind(&sensor.manifest.id, &sensor.manifest.command)?;
    let worker_args = worker_args(workspace, sensor, node, nodes, &absolute_output_path);
    Ok(PreparedFire {
        sensor_id: request.sensor_id.clone(),
        stage: request.stage.clone(),
        absolute_output_path,
        worker,
        worker_args,
        timeout: sensor
            .manifest
            .timeout_seconds
            .map_or(FALLBACK_TIMEOUT, Duration::from_secs),
        project_dir: workspace.project_dir().to_owned(),
    })
}

/// A file outside the project (by its path, or through a symlink) is refused: its audit row
/// could not name it relative to the project, and no stage produces files there.
fn check_inside_project(project_dir: &Utf8Path, path: &Utf8Path) -> Result<(), FireRefusal> {
    let lexically_inside = path.starts_with(project_dir);
    let really_inside = match (project_dir.canonicalize_utf8(), path.canonicalize_utf8()) {
        (Ok(project), Ok(target)) => target.starts_with(project),
        _ => false,
    };
    if lexically_inside && really_inside {
        return Ok(());
    }
    Err(FireRefusal::new(format!(
        "output path {path} is outside the project {project_dir}"
    ))
    .with_help("fire sensors on files inside the project folder"))
}

fn check_matches(
    project_dir: &Utf8Path,
    sensor: &LiveSensor,
    sensor_id: &str,
    path: &Utf8Path,
) -> Result<(), FireRefusal> {
    let Some(pattern) = &sensor.manifest.matches else {
        return Ok(());
    };
    let glob = SensorGlob::new(pattern).map_err(|error| {
        FireRefusal::new(format!("sensor \"{sensor_id}\" has {error}"))
            .with_help(format!("fix `matches:` in {}", sensor.registry_path))
    })?;
    if glob.matches(project_dir, path) {
        return Ok(());
    }
    Err(FireRefusal::new(format!(
        "output path \"{path}\" does not match sensor \"{sensor_id}\" filter \"{pattern}\""
    )))
}

/// A shipped id runs natively whatever its command (D8); any other id's command words are the
/// program and its first arguments.
fn worker_kind(sensor_id: &str, command: &str) -> Result<WorkerKind, FireRefusal> {
    if let Some(sensor) = sensors::shipped(sensor_id) {
        return Ok(WorkerKind::Shipped(sensor));
    }
    let mut words = command.split_whitespace().map(str::to_owned);
    let Some(program) = words.next() else {
        return Err(FireRefusal::new(format!(
            "sensor \"{sensor_id}\" has an empty command"
        )));
    };
    Ok(WorkerKind::Process {
        program,
        leading_args: words.collect(),
    })
}

/// `--stage`, one path flag, then a shipped sensor's extras (D21).
fn worker_args(
    workspace: &Workspace,
    sensor: &LiveSensor,
    node: &GraphNode,
    nodes: &[GraphNode],
    output_path: &Utf8Path,
) -> Vec<String> {
    let shipped = sensors::shipped(&sensor.manifest.id);
    let path_flag = path_flag(shipped, sensor.manifest.input_schema_keys.as_deref());
    let mut args = vec![
        STAGE_FLAG.name.to_owned(),
        node.slug.clone(),
        path_flag.worker_flag().name.to_owned(),
        output_path.to_string(),
    ];
    for extra in shipped.map_or(&[][..], |shipped| shipped.extra_flags) {
        match extra {
            ExtraFlag::Consumes => {
                let present = present_consumes(workspace, node, nodes);
                args.extend([CONSUMES_FLAG.name.to_owned(), present.join(",")]);
            }
            ExtraFlag::Deliverables => args.extend([
                DELIVERABLES_FLAG.name.to_owned(),
                template_eligible(node).join(","),
            ]),
            ExtraFlag::Templates => args.extend(template_args(workspace, node)),
        }
    }
    args
}

/// `--templates-dir` (the team's templates: `AIDLC_TEMPLATES_DIR`, else the active space's
/// `memory/templates`), `--template-eligible` and `--framework-templates-dir`
/// (`AIDLC_FRAMEWORK_TEMPLATES_DIR`, else the harness's `tools/data/templates`).
fn template_args(workspace: &Workspace, node: &GraphNode) -> [String; 6] {
    let templates_dir = std::env::var("AIDLC_TEMPLATES_DIR")
        .unwrap_or_else(|_| workspace.space_dir().join("memory/templates").to_string());
    let framework_dir = std::env::var("AIDLC_FRAMEWORK_TEMPLATES_DIR").unwrap_or_else(|_| {
        workspace
            .project_dir()
            .join(workspace.layout.harness.dir_name())
            .join("tools/data/templates")
            .to_string()
    });
    [
        TEMPLATES_DIR_FLAG.name.to_owned(),
        templates_dir,
        TEMPLATE_ELIGIBLE_FLAG.name.to_owned(),
        template_eligible(node).join(","),
        FRAMEWORK_TEMPLATES_DIR_FLAG.name.to_owned(),
        framework_dir,
    ]
}

/// `input_schema` keys decide when declared (`file_path` present → `--file-path`, failure mode
/// F10); with no declaration a shipped sensor takes its own path flag, any other sensor
/// `--output-path`.
fn path_flag(shipped: Option<&ShippedSensor>, schema_keys: Option<&[String]>) -> PathFlag {
    match schema_keys {
        Some(keys) if keys.iter().any(|key| key == "file_path") => PathFlag::FilePath,
        Some(keys) if !keys.is_empty() => PathFlag::OutputPath,
        _ => shipped.map_or(PathFlag::OutputPath, |shipped| shipped.default_path_flag),
    }
}

/// `produces ∪ optional_produces` without `*-questions` and `*-timestamp`, in order.
fn template_eligible(node: &GraphNode) -> Vec<String> {
    node.produces
        .iter()
        .chain(&node.optional_produces)
        .filter(|name| !name.is_empty() && !is_marker_artifact(name))
        .cloned()
        .collect()
}

/// The stage's consumed artifacts that exist on disk, as `artifact:producer` (bare when no
/// stage produces it). Nothing is filtered when no intent record resolves.
fn present_consumes(workspace: &Workspace, node: &GraphNode, nodes: &[GraphNode]) -> Vec<String> {
    let record = workspace.active_intent();
    node.consumes
        .iter()
        .map(|consume| consume.artifact.clone())
        .filter(|artifact| !artifact.is_empty())
        .filter_map(|artifact| {
            let Some(producer) = producers_of(nodes, &artifact).into_iter().next() else {
                return Some(artifact);
            };
            let present = record.is_none_or(|record| {
                let file_name = artifact_file_name(&artifact);
                produce_dirs(workspace, record, producer)
                    .iter()
                    .any(|dir| dir.join(&file_name).is_file())
            });
            present.then(|| format!("{artifact}:{}", producer.slug))
        })
        .collect()
}

/// Run a prepared fire: the two audit rows around the worker, the detail file, the prune rule
/// (D6) and the verdict line, under `limit`, an enclosing time limit above the fire's own cap
/// (the write hook's allowance, a gate's dispatch cap; see [`evaluate_without_recording`]).
pub fn run_fire(
    workspace: &Workspace,
    prepared: &PreparedFire,
    context: &FireContext,
    limit: Option<&EnclosingLimit>,
) -> Result<FireReport, FireRefusal> {
    let begun = begin_fire(workspace, prepared, context, limit)?;
    ledger::append_row(
        &prepared.project_dir,
        &begun.shard,
        &begun.fired_row,
        (context.now)(),
    )
    .map_err(|error| FireRefusal::new(format!("cannot write the audit row: {error}")))?;
    let evaluated = evaluate_begun_fire(prepared, context, begun, limit);
    // SENSOR_FIRED is written: wait for the lock as long as its stale rule allows rather than
    // leave the fire incomplete.
    ledger::append_terminal_rows(
        &prepared.project_dir,
        &evaluated.begun.shard,
        &[(evaluated.terminal_row.clone(), (context.now)())],
    )
    .map_err(|error| FireRefusal::new(error.to_string()))?;
    Ok(evaluated.into_report(&prepared.project_dir))
}

/// A recorded fire past its pre-flight: its id, shard, detail path and `SENSOR_FIRED` row,
/// which the caller appends (alone, or with other fires' in one batch) before the worker runs.
#[derive(Debug, Clone)]
pub struct BegunFire {
    pub fire_id: String,
    pub shard: Utf8PathBuf,
    pub detail_path: Utf8PathBuf,
    identity: ledger::FireIdentity,
    pub fired_row: ledger::AuditRow,
}

/// The recording pre-flight of one fire (nothing is written): a fire id, the audit shard and the
/// detail path, each folder checked to stay inside the project, and the `SENSOR_FIRED` row.
/// Refused once `aidlc` is interrupted or `limit` has run out: nothing new starts then.
pub fn begin_fire(
    workspace: &Workspace,
    prepared: &PreparedFire,
    context: &FireContext,
    limit: Option<&EnclosingLimit>,
) -> Result<BegunFire, FireRefusal> {
    if interrupt::requested() {
        return Err(FireRefusal::new(
            "interrupted: the fire was not started and nothing was recorded",
        ));
    }
    if let Some(limit) = limit.filter(|limit| limit.ran_out()) {
        return Err(FireRefusal::new(limit.not_started_reason()));
    }
    let project_dir = &prepared.project_dir;
    let fire_id = (context.new_fire_id)();
    let shard = workspace.audit_shard().map_err(|error| {
        FireRefusal::new(format!("cannot name the audit shard: {error}"))
            .with_help("check that the aidlc/ folder is writable")
    })?;
    let detail_dir = workspace.sensor_detail_dir();
    let detail_path =
        ledger::detail_file_path(&detail_dir, &prepared.stage, &prepared.sensor_id, &fire_id);
    ledger::check_fire_folders(project_dir, &detail_dir, &shard, &detail_path).map_err(
        |error| {
            FireRefusal::new(error.to_string())
                .with_help("replace the symbolic link with a folder inside the project")
        },
    )?;
    let identity = ledger::FireIdentity::new(
        project_dir,
        &fire_id,
        &prepared.sensor_id,
        &prepared.stage,
        prepared.absolute_output_path.as_str(),
    );
    let fired_row = ledger::AuditRow::sensor_fired(&identity);
    Ok(BegunFire {
        fire_id,
        shard,
        detail_path,
        identity,
        fired_row,
    })
}

/// A begun fire whose worker has run and whose detail file is written: its terminal row, which
/// the caller appends (alone, or in a batch) before the fire counts as recorded.
#[derive(Debug)]
pub struct EvaluatedFire {
    pub begun: BegunFire,
    pub verdict: Verdict,
    detail_written: bool,
    pub stderr_tail: String,
    pub terminal_row: ledger::AuditRow,
}

/// Run the worker of a begun fire (whose `SENSOR_FIRED` the caller has written) under `limit`,
/// write its detail file, prune earlier ones on an unnoted pass (D6), and build the terminal
/// row. After an interrupt, or once `limit` has run out, the worker is not started and the fire
/// is a `script-error`, so every written `SENSOR_FIRED` gets its terminal row and none is a pass.
pub fn evaluate_begun_fire(
    prepared: &PreparedFire,
    context: &FireContext,
    begun: BegunFire,
    limit: Option<&EnclosingLimit>,
) -> EvaluatedFire {
    let started = std::time::Instant::now();
    let (verdict, stderr_tail) = if interrupt::requested() {
        (
            Verdict::ScriptError(ScriptError::Interrupted),
            String::new(),
        )
    } else {
        evaluate_without_recording(prepared, limit)
    };
    let duration_ms = started.elapsed().as_millis();
    let (verdict, detail_written) = write_detail_if_failed(
        prepared,
        context,
        (&begun.fire_id, &begun.detail_path),
        verdict,
        &stderr_tail,
    );
    if verdict.is_unnoted_pass() {
        prune_earlier_details(
            &begun.detail_path,
            &prepared.sensor_id,
            &prepared.absolute_output_path,
        );
    }
    let terminal_row = terminal_row(
        &begun.identity,
        &prepared.project_dir,
        &begun.detail_path,
        &verdict,
        duration_ms,
    );
    EvaluatedFire {
        begun,
        verdict,
        detail_written,
        stderr_tail,
        terminal_row,
    }
}

impl EvaluatedFire {
    /// The fire's report once its terminal row is written.
    pub fn into_report(self, project_dir: &Utf8Path) -> FireReport {
        let begun = self.begun;
        // The printed line names a detail file for a failure only, as the reference's does.
        let printed_detail = (self.detail_written
            && matches!(self.verdict, Verdict::Failed { .. }))
        .then(|| ledger::relative_path_field(project_dir, begun.detail_path.as_str()));
        FireReport {
            verdict_line: verdict_line(&begun.identity, printed_detail.as_deref(), &self.verdict),
            fire_id: begun.fire_id,
            verdict: self.verdict,
            audit_shard: begun.shard,
            detail_path: self.detail_written.then_some(begun.detail_path),
            stderr_tail: self.stderr_tail,
        }
    }
}

/// Run the worker of a prepared fire and give its verdict and the tail of its stderr, recording
/// nothing (`aidlc gate check --no-record`, and the recorded path's worker run).
///
/// Once `limit` has run out the worker is not started (`script-error: refused: not started:
/// …`). Otherwise it runs under its own cap, or under what is left of `limit` when that is
/// shorter: the worker is then stopped (its whole group, as at its own timeout) when `limit`
/// runs out, and that stop is `script-error: cut-short`, since the worker's own budget was not
/// what ran out.
pub fn evaluate_without_recording(
    prepared: &PreparedFire,
    limit: Option<&EnclosingLimit>,
) -> (Verdict, String) {
    if let Some(limit) = limit.filter(|limit| limit.ran_out()) {
        return (
            Verdict::ScriptError(ScriptError::Refused(limit.not_started_reason())),
            String::new(),
        );
    }
    let enclosing = limit
        .map(|limit| (limit, limit.remaining()))
        .filter(|(_, remaining)| *remaining < prepared.timeout);
    let Some((limit, remaining)) = enclosing else {
        return run_worker_for(prepared, prepared.timeout);
    };
    match run_worker_for(prepared, remaining) {
        (Verdict::BudgetOverride { .. }, stderr_tail) => (
            Verdict::ScriptError(ScriptError::CutShort(limit.name.clone())),
            stderr_tail,
        ),
        run => run,
    }
}

fn run_worker_for(prepared: &PreparedFire, timeout: Duration) -> (Verdict, String) {
    match &prepared.worker {
        WorkerKind::Shipped(sensor) => sensors::run_shipped_with_stderr(
            sensor,
            prepared.worker_args.clone(),
            sensors::WorkerContext {
                project_dir: prepared.project_dir.clone(),
                timeout,
            },
        ),
        WorkerKind::Process {
            program,
            leading_args,
        } => {
            let program = resolve_program(&prepared.project_dir, program);
            let run = run_worker(&WorkerCommand {
                args: leading_args
                    .iter()
                    .chain(&prepared.worker_args)
                    .cloned()
                    .collect(),
                timeout,
                env: crate::harness::environment::worker_environment(prepared.project_dir.as_str()),
                ..WorkerCommand::new(program, prepared.project_dir.clone())
            });
            (verdict_of(&run, timeout), run.stderr_tail)
        }
    }
}

/// A program with a `/` but not absolute is relative to the project; a bare name is looked up
/// on `PATH` by the OS.
fn resolve_program(project_dir: &Utf8Path, program: &str) -> std::path::PathBuf {
    let path = Utf8Path::new(program);
    if program.contains('/') && path.is_relative() {
        project_dir.join(path).into_std_path_buf()
    } else {
        path.as_std_path().to_path_buf()
    }
}

/// The detail file: the reference's for a failure (with our stderr section after it), and ours
/// for a non-evaluation whose worker wrote on stderr, so that its reason is kept; none for a
/// pass or a budget override.
fn write_detail_if_failed(
    prepared: &PreparedFire,
    context: &FireContext,
    (fire_id, detail_path): (&str, &Utf8Path),
    verdict: Verdict,
    stderr_tail: &str,
) -> (Verdict, bool) {
    let timestamp = crate::leaves::timestamp::iso_timestamp((context.now)());
    let fire = ledger::DetailFire {
        sensor_id: &prepared.sensor_id,
        stage: &prepared.stage,
        timestamp: &timestamp,
        fire_id,
        absolute_output_path: prepared.absolute_output_path.as_str(),
    };
    let note = verdict.note();
    let detail = match (&verdict, &note) {
        (Verdict::Failed { worker_json, .. }, _) => ledger::DetailVerdict::Failed(worker_json),
        (_, Some(note)) if !stderr_tail.trim().is_empty() => {
            ledger::DetailVerdict::NotEvaluated(note)
        }
        _ => return (verdict, false),
    };
    let body = ledger::detail_file_body(&fire, detail, stderr_tail);
    match ledger::write_detail_file(&prepared.project_dir, detail_path, &body) {
        Ok(()) => (verdict, true),
        Err(error) if matches!(verdict, Verdict::Failed { .. }) => (
            Verdict::ScriptError(ScriptError::DetailWriteFailed(error.to_string())),
            false,
        ),
        // A non-evaluation stays what it was: its reason is in the audit note already.
        Err(_) => (verdict, false),
    }
}

/// D6: a later unnoted pass removes this sensor's earlier detail files for the same output
/// (and only those), so a fixed finding does not linger.
#[expect(
    clippy::disallowed_methods,
    reason = "earlier detail files of this sensor, in the fire's detail folder that write_folder resolved inside the project"
)]
fn prune_earlier_details(detail_path: &Utf8Path, sensor_id: &str, output_path: &Utf8Path) {
    let Some(folder) = detail_path.parent() else {
        return;
    };
    let Ok(entries) = folder.read_dir_utf8() else {
        return;
    };
    let prefix = format!("{sensor_id}-");
    let wanted = format!("**Output path**: {output_path}");
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        // `<id>-<8 hex fire id>.md`, exactly as this dispatcher names them.
        let is_this_sensors = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".md"))
            .is_some_and(|fire| fire.len() == 8 && fire.bytes().all(|b| b.is_ascii_hexdigit()));
        if !is_this_sensors {
            continue;
        }
        // A detail file is ours and grows with the findings: the generated files' limit.
        let same_output = crate::leaves::fs_util::read_bounded_text(
            entry.path(),
            crate::compile::discover::MAX_GENERATED_BYTES,
        )
        .is_ok_and(|text| text.lines().any(|line| line == wanted));
        if same_output {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn terminal_row(
    identity: &ledger::FireIdentity,
    project_dir: &Utf8Path,
    detail_path: &Utf8Path,
    verdict: &Verdict,
    duration_ms: u128,
) -> ledger::AuditRow {
    match verdict {
        Verdict::Failed { findings_count, .. } => {
            ledger::AuditRow::sensor_failed(identity, project_dir, detail_path, *findings_count)
        }
        Verdict::BudgetOverride {
            cap_seconds,
            observed_seconds,
        } => ledger::AuditRow::sensor_budget_override(identity, *cap_seconds, *observed_seconds),
        Verdict::Passed | Verdict::ToolUnavailable | Verdict::ScriptError(_) => {
            ledger::AuditRow::sensor_passed(identity, duration_ms, verdict.note().as_deref())
        }
    }
}

/// `{"fire_id","sensor_id","stage","output_path","result","detail_path"[,"note"]}`.
fn verdict_line(
    identity: &ledger::FireIdentity,
    relative_detail: Option<&str>,
    verdict: &Verdict,
) -> String {
    let mut line = serde_json::json!({
        "fire_id": identity.fire_id,
        "sensor_id": identity.sensor_id,
        "stage": identity.stage_slug,
        "output_path": identity.output_path_field,
        "result": verdict.result_word(),
        "detail_path": relative_detail,
    });
    if let Some(note) = verdict.note() {
        line["note"] = note.into();
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_id_runs_natively_whatever_its_command_says() {
        for command in [
            "aidlc engine sensor-required-sections",
            "bun .claude/tools/aidlc-sensor-required-sections.ts",
            "bun .claude/tools/aidlc.ts engine sensor-required-sections",
            "sh my-own-check.sh",
            "",
        ] {
            let kind = worker_kind("required-sections", command).unwrap();
            assert!(
                matches!(kind, WorkerKind::Shipped(sensor) if sensor.id == "required-sections"),
                "{command:?}: {kind:?}"
            );
        }
    }

    #[test]
    fn a_custom_id_is_spawned_with_its_command() {
        let kind = worker_kind("glossary", "sh tools/check-glossary.sh --strict").unwrap();
        assert!(
            matches!(
                &kind,
                WorkerKind::Process { program, leading_args }
                    if program == "sh" && leading_args == &["tools/check-glossary.sh", "--strict"]
            ),
            "{kind:?}"
        );
        let empty = worker_kind("glossary", "  ").unwrap_err();
        assert_eq!(empty.message, "sensor \"glossary\" has an empty command");
    }
}
