//! The gate's sensor step as the conductor calls it (`aidlc engine gate start|revise`, D10):
//! fire the stage's gate sensors on its deliverables, enforce the blocking ones, prove that the
//! bytes did not move, and append the gate row `STAGE_AWAITING_APPROVAL` (upstream §5.1 steps
//! 3–5, §5.3–§5.8; D4, D6, D9). The conductor owns the state machine: the state file is only
//! read here.
//!
//! Invariants:
//! - the §5.2 refusals (a deliverable or produce folder escaping) come before any audit row;
//! - every blocking (sensor, path) is fingerprinted with BLAKE3 before the first dispatch,
//!   re-hashed just before and just after its own fire, and every fingerprint is checked once
//!   more under the audit lock right before the gate row is appended; moved bytes refuse the
//!   gate (D6);
//! - only an unnoted pass passes a blocking binding (D4): findings, non-evaluations, budget
//!   overrides, refused fires and moved bytes are all issues, and so is a blocking gate binding
//!   that fired on no deliverable at all (failure-modes §5.12);
//! - advisory gate sensors are dispatched (their rows exist) but never decide; under
//!   Construction autonomy they are not dispatched, and no override is accepted;
//! - an override needs a fresh receipt in the audit shards (§5.6); the gate row it writes is a
//!   boundary itself, so one receipt opens the gate once.

use std::fmt::Write as _;
use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use crate::audit::ledger::{
    self, AuditBlock, AuditRow, LedgerError, SENSOR_BUDGET_OVERRIDE, SENSOR_FAILED, SENSOR_PASSED,
    STAGE_AWAITING_APPROVAL,
};
use crate::audit::lock::{self, LockError};
use crate::discover::Layout;
use crate::dispatch::fire::FireRequest;
use crate::dispatch::registry::LiveRegistry;
use crate::dispatch::stage_graph::{FireOn, GraphNode, unknown_stage_message};
use crate::dispatch::verdict::Verdict;
use crate::gate::deliverables::{DeliverableError, StageDeliverables, existing_deliverables};
use crate::gate::dispatch::{GatePlan, PlannedFire, fire_planned, plan_entry, unfired_binding};
pub use crate::gate::fingerprints::{Fingerprints, fingerprint_file};
use crate::gate::report::Severity;
use crate::workspace::{self, WorkspaceError};

/// The decision the conductor records before it offers an override (§5.6).
pub const BLOCKING_SENSOR_OVERRIDE_DECISION: &str = "Blocking gate sensor failure";
/// The options that decision must offer, both of them.
pub const BLOCKING_SENSOR_OVERRIDE_OPTIONS: [&str; 2] =
    ["Fix findings", "Override blocking sensors"];
/// The exact answer that authorises an override, and the exact `--user-input`.
pub const BLOCKING_SENSOR_OVERRIDE_CHOICE: &str = "Override blocking sensors";

/// The sensors that read the whole stage's output and fire once per output folder (D6).
/// At most this many failed-check sentences; the rest are counted in one more line (§5.8).
const MAX_NOTICE_SENTENCES: usize = 3;

const DECISION_RECORDED: &str = "DECISION_RECORDED";
const QUESTION_ANSWERED: &str = "QUESTION_ANSWERED";
const HUMAN_TURN: &str = "HUMAN_TURN";
/// Rows after which an earlier override answer no longer counts (§5.6).
const RECEIPT_BOUNDARY_EVENTS: [&str; 3] =
    ["STAGE_STARTED", STAGE_AWAITING_APPROVAL, "GATE_REJECTED"];
/// Rows that move a stage's gate; the newest one says whether the gate is open.
const GATE_STATE_EVENTS: [&str; 7] = [
    "STAGE_STARTED",
    STAGE_AWAITING_APPROVAL,
    "STAGE_REVISING",
    "GATE_REJECTED",
    "GATE_APPROVED",
    "STAGE_COMPLETED",
    "STAGE_SKIPPED",
];
const TERMINAL_SENSOR_EVENTS: [&str; 3] = [SENSOR_PASSED, SENSOR_FAILED, SENSOR_BUDGET_OVERRIDE];

// --- Requests, issues and errors ----------------------------------------------------------------

/// Which conductor step asked for the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateEntry {
    /// `gate start`: opening the approval gate (`report --result awaiting-approval`).
    Start,
    /// `gate revise`: re-entering the gate after revision work (`report --result revised`).
    Revise,
}

impl GateEntry {
    /// The subcommand word of `aidlc engine gate <word>`.
    pub fn command_word(self) -> &'static str {
        match self {
            GateEntry::Start => "start",
            GateEntry::Revise => "revise",
        }
    }
}

/// What the conductor asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateStepRequest {
    pub entry: GateEntry,
    pub stage: String,
    /// The raw `--artifacts` value (comma-separated tokens), recorded as given.
    pub artifacts: Option<String>,
    /// A unit's own gate (`--unit`).
    pub unit: Option<String>,
    pub override_requested: bool,
    pub user_input: Option<String>,
    /// `AIDLC_DISABLE_SENSORS=1`: nothing is dispatched (the notices are still said).
    pub dispatch_disabled_by_environment: bool,
}

/// One reason the blocking sensors did not pass (§5.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockingIssue {
    pub sensor_id: String,
    /// Project-relative, `/` separators.
    pub output_path: String,
    /// Project-relative detail file of a reported failure.
    pub detail_path: Option<String>,
    pub reason: String,
}

/// Why the gate step stopped.
#[derive(Debug, thiserror::Error)]
pub enum GateStepError {
    #[error("no intent record in space \"{space}\": there is no gate to open")]
    NoIntent { space: String },
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error("{0}")]
    UnknownStage(String),
    #[error(
        "\"{unit}\" cannot name a unit: use the unit's folder name (no separators, not `.` or `..`)"
    )]
    InvalidUnit { unit: String },
    #[error(transparent)]
    Deliverables(#[from] DeliverableError),
    /// The §5.6 refusals: blocking issues without an accepted override.
    #[error("{message}")]
    Refused { message: String },
    #[error(
        "Refusing to open the gate for \"{slug}\": blocking sensor artifact \"{path}\" changed after evaluation. Retry so every blocking sensor checks the bytes that enter the gate."
    )]
    ChangedAfterEvaluation { slug: String, path: String },
    #[error("cannot name the audit shard: {0}")]
    AuditShard(std::io::Error),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("cannot write the gate row: {0}")]
    Ledger(#[from] LedgerError),
    #[error("interrupted: the gate row was not written")]
    Interrupted,
}

impl GateStepError {
    /// Whether the gate was refused (findings, non-evaluations, moved bytes, an override
    /// without authority), as opposed to the step being unable to run at all.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            GateStepError::Refused { .. } | GateStepError::ChangedAfterEvaluation { .. }
        )
    }

    /// A line saying how to get going again, where there is one.
    pub fn help(&self) -> Option<&'static str> {
        match self {
            GateStepError::NoIntent { .. } => {
                Some("create one with `aidlc engine intent new <label>`")
            }
            GateStepError::ChangedAfterEvaluation { .. } => {
                Some("nothing was written; run the same command again")
            }
            _ => None,
        }
    }
}

// --- The step -----------------------------------------------------------------------------------

/// What dispatch did, so that a reply can say how much was checked (D4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchSummary {
    pub deliverables: usize,
    pub blocking_fires: usize,
    pub advisory_fires: usize,
    /// Advisory fires that evaluated nothing (a noted pass or a budget override): they do not
    /// decide, but they are said (D4).
    pub advisory_not_evaluated: usize,
    /// Blocking fires not dispatched because the bytes moved first.
    pub skipped_fires: usize,
    /// Paths named like a declared output that are not regular files: skipped, never opened.
    pub not_regular_files: usize,
    /// Why nothing was dispatched, when nothing was.
    pub nothing_dispatched_because: Option<&'static str>,
}

/// The fires, their issues and the fingerprints the gate row must still match.
#[derive(Debug, Default)]
pub struct GateEvaluation {
    pub issues: Vec<BlockingIssue>,
    pub fingerprints: Fingerprints,
    pub summary: DispatchSummary,
}

impl GateEvaluation {
    /// No fire at all, and why: nothing to fingerprint, no issue.
    fn nothing_dispatched(n_deliverables: usize, because: &'static str) -> Self {
        Self {
            summary: DispatchSummary {
                deliverables: n_deliverables,
                nothing_dispatched_because: Some(because),
                ..DispatchSummary::default()
            },
            ..Self::default()
        }
    }
}

/// The gate step's answer to the conductor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateStepReply {
    pub slug: String,
    pub unit: Option<String>,
    /// The gate row's timestamp; `None` when the gate was already open.
    pub timestamp: Option<String>,
    pub already_open: bool,
    /// Whether a gate row was appended (always, unless the gate was already open and no
    /// override was applied).
    pub row_written: bool,
    /// The §5.8 sentences, one per line.
    pub narration: Vec<String>,
    pub summary: DispatchSummary,
}

impl GateStepReply {
    /// `{"slug","new_state":"awaiting-approval","timestamp"}`, or for a gate already open
    /// `{"slug","new_state","already_awaiting_approval":true,"revalidated":true}`, plus
    /// `narration` when a check still fails (§5.7, §5.8).
    pub fn json(&self) -> Value {
        let mut reply = Map::new();
        reply.insert("slug".to_owned(), self.slug.as_str().into());
        if let Some(unit) = &self.unit {
            reply.insert("unit".to_owned(), unit.as_str().into());
        }
        reply.insert("new_state".to_owned(), "awaiting-approval".into());
        if let Some(timestamp) = &self.timestamp {
            reply.insert("timestamp".to_owned(), timestamp.as_str().into());
        }
        if self.already_open {
            reply.insert("already_awaiting_approval".to_owned(), true.into());
            reply.insert("revalidated".to_owned(), true.into());
        }
        if !self.narration.is_empty() {
            reply.insert("narration".to_owned(), self.narration.join("\n").into());
        }
        Value::Object(reply)
    }
}

/// The whole step for the active intent: deliverables, fires, enforcement, the gate row.
/// `registry` must be free of errors; `nodes` is the compiled graph.
pub fn run_gate_step(
    layout: &Layout,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    request: &GateStepRequest,
) -> Result<GateStepReply, GateStepError> {
    let record = active_record(&layout.project_dir)?;
    let node = nodes
        .iter()
        .find(|node| node.slug == request.stage)
        .ok_or_else(|| GateStepError::UnknownStage(unknown_stage_message(&request.stage, nodes)))?;
    check_unit_name(request.unit.as_deref())?;
    let state_text = workspace::read_state_text(&record).unwrap_or_default();
    let autonomous = is_autonomous(&state_text);
    let deliverables = stage_deliverables(layout, &record, node, request)?;
    let evaluation = if request.dispatch_disabled_by_environment
        || workspace::sensors_off_in_state(&state_text)
    {
        GateEvaluation::nothing_dispatched(deliverables.files.len(), "Sensors are off")
    } else {
        let fires = plan_stage_fires(&layout.project_dir, node, &deliverables.files, autonomous);
        let mut evaluation =
            evaluate_gate_sensors(layout, registry, nodes, &fires, deliverables.files.len());
        evaluation.summary.not_regular_files = deliverables.not_regular.len();
        evaluation.issues.extend(unfired_blocking_issues(
            &layout.project_dir,
            &record,
            node,
            &deliverables,
            &fires,
        ));
        evaluation
    };
    if crate::interrupt::requested() {
        return Err(GateStepError::Interrupted);
    }
    enforce_blocking_sensors(layout, &record, request, autonomous, &evaluation.issues)?;
    commit_gate_row(
        layout,
        &record,
        request,
        &evaluation,
        &deliverables.files,
        &state_text,
    )
}

/// One issue per blocking gate binding of the stage that got no fire (§5.12): a sensor that
/// never looked at the stage has not passed it. The gate's stage is reached by definition.
fn unfired_blocking_issues(
    project_dir: &Utf8Path,
    record: &Utf8Path,
    node: &GraphNode,
    deliverables: &StageDeliverables,
    fires: &[PlannedFire],
) -> Vec<BlockingIssue> {
    node.sensors_applicable
        .iter()
        .filter(|entry| {
            entry.fire_on == FireOn::Gate
                && entry.default_severity == Severity::Blocking
                && !fires.iter().any(|fire| fire.sensor_id == entry.id)
        })
        .map(|entry| {
            let unfired = unfired_binding(project_dir, record, node, entry, deliverables);
            BlockingIssue {
                sensor_id: unfired.sensor_id.clone(),
                output_path: unfired.stage.clone(),
                detail_path: None,
                reason: unfired.reason(),
            }
        })
        .collect()
}

/// The active intent record; several records without a cursor, or none, stop the step.
fn active_record(project_dir: &Utf8Path) -> Result<Utf8PathBuf, GateStepError> {
    let space = workspace::active_space(project_dir);
    workspace::unambiguous_active_intent(project_dir, &space, None)?
        .ok_or(GateStepError::NoIntent { space })
}

fn check_unit_name(unit: Option<&str>) -> Result<(), GateStepError> {
    match unit {
        Some(unit) if !workspace::is_plain_folder_name(unit) => Err(GateStepError::InvalidUnit {
            unit: unit.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// `- **Construction Autonomy Mode**: autonomous` (its first word, so a `(set by you)` note
/// after it does not matter).
pub fn is_autonomous(state_text: &str) -> bool {
    first_word_of_state_field(state_text, "Construction Autonomy Mode").as_deref()
        == Some("autonomous")
}

fn first_word_of_state_field(state_text: &str, field: &str) -> Option<String> {
    workspace::read_state_field(state_text, field)
        .and_then(|value| value.split_whitespace().next().map(str::to_owned))
}

/// The stage's deliverables (§5.2, with the `--artifacts` tokens); a unit's own gate keeps
/// that unit's folders of a per-unit stage (unless the stage writes one stage-level folder).
fn stage_deliverables(
    layout: &Layout,
    record: &Utf8Path,
    node: &GraphNode,
    request: &GateStepRequest,
) -> Result<StageDeliverables, GateStepError> {
    let tokens: Vec<String> = request
        .artifacts
        .as_deref()
        .map(|csv| csv.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let deliverables = existing_deliverables(&layout.project_dir, record, node, &tokens)?;
    Ok(match request.unit.as_deref() {
        Some(unit) => keep_unit_deliverables(record, node, unit, deliverables),
        None => deliverables,
    })
}

fn keep_unit_deliverables(
    record: &Utf8Path,
    node: &GraphNode,
    unit: &str,
    deliverables: StageDeliverables,
) -> StageDeliverables {
    let stage_level = record.join("construction").join(&node.slug);
    if !node.is_per_unit() || stage_level.is_dir() {
        return deliverables;
    }
    let unit_dirs: Vec<Utf8PathBuf> = [
        record.join("construction").join(unit).join(&node.slug),
        record
            .join("construction/units")
            .join(unit)
            .join(&node.slug),
    ]
    .iter()
    .filter_map(|dir| dir.canonicalize_utf8().ok())
    .collect();
    let in_unit = |path: &Utf8Path| unit_dirs.iter().any(|dir| path.starts_with(dir));
    StageDeliverables {
        files: deliverables
            .files
            .into_iter()
            .filter(|path| in_unit(path))
            .collect(),
        not_regular: deliverables
            .not_regular
            .into_iter()
            .filter(|special| in_unit(&special.path))
            .collect(),
    }
}

// --- Planning -----------------------------------------------------------------------------------

/// The gate fires of one stage, sensor-major in authored order (§5.3): each gate binding on
/// each deliverable its graph glob matches; `upstream-coverage` and `claim-sources` once per
/// output folder, on its first deliverable that is not a marker (D6). Under autonomy only the
/// blocking bindings fire (D6).
pub fn plan_stage_fires(
    project_dir: &Utf8Path,
    node: &GraphNode,
    deliverables: &[Utf8PathBuf],
    autonomous: bool,
) -> Vec<PlannedFire> {
    let mut plan = GatePlan::default();
    for entry in node
        .sensors_applicable
        .iter()
        .filter(|entry| entry.fire_on == FireOn::Gate)
    {
        if autonomous && entry.default_severity != Severity::Blocking {
            continue;
        }
        plan_entry(project_dir, node, entry, deliverables, None, &mut plan);
    }
    plan.fires
}

// --- Fingerprints -------------------------------------------------------------------------------

/// Fingerprint each blocking deliverable once, before anything is dispatched (§5.4 step 1).
fn fingerprint_blocking_deliverables(
    project_dir: &Utf8Path,
    fires: &[PlannedFire],
) -> (Fingerprints, Vec<BlockingIssue>) {
    let mut fingerprints = Fingerprints::default();
    let mut issues = Vec::new();
    for fire in fires
        .iter()
        .filter(|fire| fire.severity == Severity::Blocking)
    {
        if fingerprints.get(&fire.deliverable).is_some() {
            continue;
        }
        match fingerprint_file(&fire.deliverable) {
            Some(hash) => fingerprints.insert(&fire.deliverable, hash),
            None => issues.push(issue(
                project_dir,
                fire,
                "artifact became unreadable before sensor dispatch",
            )),
        }
    }
    (fingerprints, issues)
}

fn issue(project_dir: &Utf8Path, fire: &PlannedFire, reason: &str) -> BlockingIssue {
    BlockingIssue {
        sensor_id: fire.sensor_id.clone(),
        output_path: relative(project_dir, &fire.deliverable),
        detail_path: None,
        reason: reason.to_owned(),
    }
}

fn relative(project_dir: &Utf8Path, path: &Utf8Path) -> String {
    ledger::relative_path_field(project_dir, path.as_str())
}

// --- Dispatch -----------------------------------------------------------------------------------

/// Fire every planned fire in order, one at a time, and collect the blocking issues (§5.3–§5.5).
/// Advisory fires are recorded like any other but never raise an issue.
pub fn evaluate_gate_sensors(
    layout: &Layout,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    fires: &[PlannedFire],
    n_deliverables: usize,
) -> GateEvaluation {
    let project_dir = &layout.project_dir;
    let (fingerprints, mut issues) = fingerprint_blocking_deliverables(project_dir, fires);
    let mut summary = DispatchSummary {
        deliverables: n_deliverables,
        ..DispatchSummary::default()
    };
    for fire in fires {
        if fire.severity != Severity::Blocking {
            let (verdict, _) = dispatch_fire(layout, registry, nodes, fire);
            summary.advisory_fires += 1;
            if !matches!(verdict, Verdict::Passed | Verdict::Failed { .. }) {
                summary.advisory_not_evaluated += 1;
            }
            continue;
        }
        let expected = fingerprints.get(&fire.deliverable);
        if expected.is_none() || fingerprint_file(&fire.deliverable) != expected {
            issues.push(issue(
                project_dir,
                fire,
                "artifact changed before sensor dispatch",
            ));
            summary.skipped_fires += 1;
            continue;
        }
        let (verdict, detail_path) = dispatch_fire(layout, registry, nodes, fire);
        summary.blocking_fires += 1;
        issues.extend(blocking_fire_issue(
            project_dir,
            fire,
            expected,
            &verdict,
            detail_path,
        ));
    }
    if fires.is_empty() {
        summary.nothing_dispatched_because = Some(if n_deliverables == 0 {
            "no deliverable of the stage is on disk"
        } else {
            "no gate sensor of the stage matches its deliverables"
        });
    }
    GateEvaluation {
        issues,
        fingerprints,
        summary,
    }
}

/// The issue one dispatched blocking fire raises, if any. Bytes that moved while the sensor ran
/// outrank its verdict: whatever it said was about other bytes.
fn blocking_fire_issue(
    project_dir: &Utf8Path,
    fire: &PlannedFire,
    expected: Option<blake3::Hash>,
    verdict: &Verdict,
    detail_path: Option<String>,
) -> Option<BlockingIssue> {
    if fingerprint_file(&fire.deliverable) != expected {
        return Some(issue(
            project_dir,
            fire,
            "artifact changed during sensor evaluation",
        ));
    }
    let reason = issue_reason(verdict, detail_path.is_some())?;
    Some(BlockingIssue {
        detail_path: detail_path.filter(|_| matches!(verdict, Verdict::Failed { .. })),
        ..issue(project_dir, fire, &reason)
    })
}

/// One recorded fire (audit rows, detail file), in-process for shipped sensors (D8). A fire
/// the dispatcher refuses is a `script-error: refused: …` non-evaluation, as in `gate check`.
fn dispatch_fire(
    layout: &Layout,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    fire: &PlannedFire,
) -> (Verdict, Option<String>) {
    let request = FireRequest {
        sensor_id: fire.sensor_id.clone(),
        stage: fire.stage.clone(),
        output_path: fire.deliverable.clone(),
        cwd: layout.project_dir.clone(),
    };
    let (verdict, _, detail_path) = fire_planned(layout, registry, nodes, &request, true);
    (
        verdict,
        detail_path.map(|path| relative(&layout.project_dir, &path)),
    )
}

/// The §5.5 reason a verdict blocks, or `None` for the one verdict that passes: an unnoted
/// pass. A noted pass blocks with its note (`tool-unavailable`, `script-error: …`).
pub fn issue_reason(verdict: &Verdict, has_detail_path: bool) -> Option<String> {
    match verdict {
        Verdict::Passed => None,
        Verdict::Failed { .. } if has_detail_path => Some("reported findings".to_owned()),
        Verdict::Failed { .. } => Some("failed verdict omitted its detail path".to_owned()),
        Verdict::BudgetOverride { .. } => Some("sensor execution exceeded its budget".to_owned()),
        Verdict::ToolUnavailable | Verdict::ScriptError(_) => verdict.note(),
    }
}

// --- Enforcement --------------------------------------------------------------------------------

/// §5.6: no issues, or an override with authority, lets the gate proceed; anything else is a
/// refusal naming what to do.
fn enforce_blocking_sensors(
    layout: &Layout,
    record: &Utf8Path,
    request: &GateStepRequest,
    autonomous: bool,
    issues: &[BlockingIssue],
) -> Result<(), GateStepError> {
    if issues.is_empty() {
        return Ok(());
    }
    if !request.override_requested {
        return Err(GateStepError::Refused {
            message: refusal_message(request, layout.harness.dir_name(), issues),
        });
    }
    let refusal = override_refusal(
        &request.stage,
        autonomous,
        request.user_input.as_deref(),
        || has_override_authorization(&read_ledger(record), &request.stage),
    );
    match refusal {
        Some(message) => Err(GateStepError::Refused { message }),
        None => Ok(()),
    }
}

/// The three override checks of §5.6, in order; `None` when the override stands.
pub fn override_refusal(
    slug: &str,
    autonomous: bool,
    user_input: Option<&str>,
    has_receipt: impl FnOnce() -> bool,
) -> Option<String> {
    if autonomous {
        return Some(format!(
            "Refusing blocking sensor override for \"{slug}\": Construction Autonomy Mode is autonomous. Unattended runs must halt on blocking sensor findings or unavailable evaluations."
        ));
    }
    if user_input.map(crate::js_text::js_trim) != Some(BLOCKING_SENSOR_OVERRIDE_CHOICE) {
        return Some(format!(
            "Refusing blocking sensor override for \"{slug}\": --user-input must be the exact offered choice \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\"."
        ));
    }
    if !has_receipt() {
        return Some(format!(
            "Refusing blocking sensor override for \"{slug}\": no fresh authorization receipt proves that \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\" was offered and selected after a HUMAN_TURN. Record the decision and exact answer through aidlc-log.ts, then retry."
        ));
    }
    None
}

/// The reference's refusal text (§5.6). The decision and answer are still recorded with the
/// conductor's `aidlc-log.ts`; the retry names this engine's command.
pub fn refusal_message(
    request: &GateStepRequest,
    harness_dir: &str,
    issues: &[BlockingIssue],
) -> String {
    let slug = &request.stage;
    let log = format!("bun {harness_dir}/tools/aidlc-log.ts");
    let detail_paths: Vec<&str> = issues
        .iter()
        .filter_map(|issue| issue.detail_path.as_deref())
        .collect();
    let detail_paths = if detail_paths.is_empty() {
        "none".to_owned()
    } else {
        detail_paths.join(", ")
    };
    let reasons: Vec<String> = issues
        .iter()
        .map(|issue| {
            format!(
                "{}@{}: {}",
                issue.sensor_id, issue.output_path, issue.reason
            )
        })
        .collect();
    format!(
        "Blocking gate sensor evaluation did not pass for \"{slug}\". Sensors: {}. Detail paths: {detail_paths}. Reasons: {}. Fix the findings and retry, or first run {log} decision --stage {slug} --decision \"{BLOCKING_SENSOR_OVERRIDE_DECISION}\" --options \"{}\", present those choices, and after the human selects \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\" record it with {log} answer. Then retry: {} --override-blocking-sensors --user-input \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\". Autonomous mode cannot override.",
        unique_sensor_ids(issues).join(", "),
        reasons.join("; "),
        BLOCKING_SENSOR_OVERRIDE_OPTIONS.join(","),
        retry_command(request),
    )
}

/// `aidlc engine gate <start|revise> <slug>` with the same `--unit` and `--artifacts`.
fn retry_command(request: &GateStepRequest) -> String {
    let mut command = format!(
        "aidlc engine gate {} {}",
        request.entry.command_word(),
        request.stage
    );
    if let Some(unit) = &request.unit {
        let _ = write!(command, " --unit {unit}");
    }
    if let Some(artifacts) = &request.artifacts {
        let _ = write!(command, " --artifacts {}", Value::from(artifacts.as_str()));
    }
    command
}

fn unique_sensor_ids(issues: &[BlockingIssue]) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for issue in issues {
        if !ids.contains(&issue.sensor_id.as_str()) {
            ids.push(&issue.sensor_id);
        }
    }
    ids
}

/// The fields an applied override adds to the gate row (§5.6).
pub fn override_fields(issues: &[BlockingIssue]) -> Vec<(&'static str, String)> {
    let mut fields = vec![
        ("Blocking Sensor Override", "true".to_owned()),
        ("Blocking Sensor IDs", unique_sensor_ids(issues).join(",")),
    ];
    let detail_paths: Vec<&str> = issues
        .iter()
        .filter_map(|issue| issue.detail_path.as_deref())
        .collect();
    if !detail_paths.is_empty() {
        fields.push(("Blocking Sensor Detail Paths", detail_paths.join(",")));
    }
    let reasons: Vec<String> = issues
        .iter()
        .map(|issue| format!("{}: {}", issue.sensor_id, issue.reason))
        .collect();
    fields.push(("Blocking Sensor Reasons", reasons.join("; ")));
    fields
}

// --- The ledger as the gate reads it ------------------------------------------------------------

/// One audit block with where it sits: its shard, its position there, and its timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRow {
    pub shard: usize,
    pub position: usize,
    pub timestamp: String,
    pub block: AuditBlock,
}

impl LedgerRow {
    /// The reference's `auditEventIsAfter`: the position decides within one shard, the
    /// timestamp across shards.
    pub fn is_after(&self, earlier: &LedgerRow) -> bool {
        if self.shard == earlier.shard {
            self.position > earlier.position
        } else {
            self.timestamp > earlier.timestamp
        }
    }

    fn event(&self) -> &str {
        &self.block.event
    }

    fn field(&self, key: &str) -> Option<&str> {
        self.block.field(key)
    }

    /// A main-workflow row of `slug`: `Stage` is the slug and `Workflow` is not a
    /// `single-stage:` run.
    fn is_main_workflow_row_of(&self, slug: &str) -> bool {
        self.field("Stage") == Some(slug)
            && !self
                .field("Workflow")
                .is_some_and(|workflow| workflow.starts_with("single-stage:"))
    }
}

/// Every block of every shard in `<record>/audit/` (`*.md`, by file name), in shard then
/// position order. Unreadable shards are skipped.
pub fn read_ledger(record: &Utf8Path) -> Vec<LedgerRow> {
    let mut shards: Vec<Utf8PathBuf> = workspace::audit_dir(record)
        .read_dir_utf8()
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path().to_owned())
                .filter(|path| path.extension() == Some("md") && path.is_file())
                .collect()
        })
        .unwrap_or_default();
    shards.sort();
    let mut rows = Vec::new();
    for (shard, path) in shards.iter().enumerate() {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        rows.extend(ledger_rows(shard, &String::from_utf8_lossy(&bytes)));
    }
    rows
}

/// The rows of one shard's text.
pub fn ledger_rows(shard: usize, text: &str) -> Vec<LedgerRow> {
    ledger::parse_blocks(text)
        .into_iter()
        .enumerate()
        .map(|(position, block)| LedgerRow {
            shard,
            position,
            timestamp: block.timestamp.clone().unwrap_or_default(),
            block,
        })
        .collect()
}

/// §5.6 `hasBlockingSensorOverrideAuthorization`: an answer `Override blocking sensors` after
/// every boundary of the stage, newer than every other interaction, with an earlier decision
/// offering both options in the same shard and a `HUMAN_TURN` strictly between the two.
pub fn has_override_authorization(rows: &[LedgerRow], slug: &str) -> bool {
    let stage_rows: Vec<&LedgerRow> = rows
        .iter()
        .filter(|row| row.is_main_workflow_row_of(slug))
        .collect();
    let boundaries: Vec<&LedgerRow> = stage_rows
        .iter()
        .copied()
        .filter(|row| RECEIPT_BOUNDARY_EVENTS.contains(&row.event()))
        .collect();
    let interactions: Vec<&LedgerRow> = stage_rows
        .iter()
        .copied()
        .filter(|row| [DECISION_RECORDED, QUESTION_ANSWERED].contains(&row.event()))
        .collect();
    interactions
        .iter()
        .filter(|row| {
            row.event() == QUESTION_ANSWERED
                && row.field("Details") == Some(BLOCKING_SENSOR_OVERRIDE_CHOICE)
        })
        .any(|answer| answer_is_authorised(rows, &boundaries, &interactions, answer))
}

fn answer_is_authorised(
    rows: &[LedgerRow],
    boundaries: &[&LedgerRow],
    interactions: &[&LedgerRow],
    answer: &LedgerRow,
) -> bool {
    let after_every_boundary = boundaries.iter().all(|boundary| answer.is_after(boundary));
    let newest_interaction = interactions
        .iter()
        .all(|row| std::ptr::eq(*row, answer) || answer.is_after(row));
    if !after_every_boundary || !newest_interaction {
        return false;
    }
    offering_decision(interactions, answer).is_some_and(|decision| {
        rows.iter().any(|row| {
            row.event() == HUMAN_TURN
                && row.shard == answer.shard
                && row.position > decision.position
                && row.position < answer.position
        })
    })
}

/// The newest decision before `answer` in its shard that offered both override options.
fn offering_decision<'r>(
    interactions: &[&'r LedgerRow],
    answer: &LedgerRow,
) -> Option<&'r LedgerRow> {
    interactions.iter().rev().copied().find(|row| {
        row.event() == DECISION_RECORDED
            && row.shard == answer.shard
            && row.position < answer.position
            && row.field("Decision") == Some(BLOCKING_SENSOR_OVERRIDE_DECISION)
            && offers_both_options(row.field("Options").unwrap_or_default())
    })
}

fn offers_both_options(options: &str) -> bool {
    let offered: Vec<&str> = options.split(',').map(crate::js_text::js_trim).collect();
    BLOCKING_SENSOR_OVERRIDE_OPTIONS
        .iter()
        .all(|option| offered.contains(option))
}

/// Whether the stage's gate is open: its newest gate-moving row is `STAGE_AWAITING_APPROVAL`.
/// A unit's gate reads only that unit's rows; a stage's gate only rows without a unit.
pub fn gate_is_open(rows: &[LedgerRow], slug: &str, unit: Option<&str>) -> bool {
    let mut newest: Option<&LedgerRow> = None;
    for row in rows.iter().filter(|row| {
        row.is_main_workflow_row_of(slug)
            && GATE_STATE_EVENTS.contains(&row.event())
            && row.field("Unit") == unit
    }) {
        if newest.is_none_or(|newest| row.is_after(newest)) {
            newest = Some(row);
        }
    }
    newest.is_some_and(|row| row.event() == STAGE_AWAITING_APPROVAL)
}

/// Whether the ledger shows the stage started: it has a gate-moving main-workflow row, and the
/// newest one is not `STAGE_SKIPPED` (a stage the scope skipped has nothing to check).
pub fn stage_was_started(rows: &[LedgerRow], slug: &str) -> bool {
    let mut newest: Option<&LedgerRow> = None;
    for row in rows
        .iter()
        .filter(|row| row.is_main_workflow_row_of(slug) && GATE_STATE_EVENTS.contains(&row.event()))
    {
        if newest.is_none_or(|newest| row.is_after(newest)) {
            newest = Some(row);
        }
    }
    newest.is_some_and(|row| row.event() != "STAGE_SKIPPED")
}

// --- What the checks say (§5.8) ----------------------------------------------------------------

/// The newest results the ledger holds for one (sensor, output) pair of a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensorResult {
    pub sensor_id: String,
    /// Project-relative, as the audit row holds it.
    pub output_path: String,
    /// The newest terminal row: `passed`, `failed(<n>)`, the note of a noted pass, or
    /// `budget-override`.
    pub state: String,
    /// The newest evaluation that decided, when it is a failure: a noted pass or a budget
    /// override evaluated nothing, so it neither clears nor replaces it.
    pub failure: Option<CheckFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    pub findings_count: u64,
    pub detail_path: Option<String>,
}

/// The results for `outputs` (project-relative) of stage `slug`, in order of first appearance.
/// A unit's gate skips rows that name another unit.
pub fn latest_sensor_results(
    rows: &[LedgerRow],
    slug: &str,
    outputs: &[String],
    unit: Option<&str>,
) -> Vec<SensorResult> {
    let mut pairs: Vec<(String, String, &LedgerRow, Option<&LedgerRow>)> = Vec::new();
    for row in rows
        .iter()
        .filter(|row| is_terminal_row_for(row, slug, outputs, unit))
    {
        let sensor_id = row.field("Sensor ID").unwrap_or_default();
        let output = row.field("Output path").unwrap_or_default();
        let decisive = is_decisive(row);
        match pairs
            .iter_mut()
            .find(|(id, path, _, _)| id == sensor_id && path == output)
        {
            Some((_, _, newest, newest_decisive)) => {
                if row.is_after(newest) {
                    *newest = row;
                }
                if decisive && newest_decisive.is_none_or(|known| row.is_after(known)) {
                    *newest_decisive = Some(row);
                }
            }
            None => pairs.push((
                sensor_id.to_owned(),
                output.to_owned(),
                row,
                decisive.then_some(row),
            )),
        }
    }
    pairs
        .into_iter()
        .map(|(sensor_id, output_path, newest, decisive)| SensorResult {
            sensor_id,
            output_path,
            state: result_state(newest),
            failure: decisive.and_then(failure_of),
        })
        .collect()
}

fn is_terminal_row_for(
    row: &LedgerRow,
    slug: &str,
    outputs: &[String],
    unit: Option<&str>,
) -> bool {
    TERMINAL_SENSOR_EVENTS.contains(&row.event())
        && row.field("Stage slug") == Some(slug)
        && row
            .field("Output path")
            .is_some_and(|path| outputs.iter().any(|output| output == path))
        && (unit.is_none()
            || row
                .field("Unit")
                .is_none_or(|row_unit| Some(row_unit) == unit))
}

/// A failure, or a pass that really evaluated (no note).
fn is_decisive(row: &LedgerRow) -> bool {
    row.event() == SENSOR_FAILED || (row.event() == SENSOR_PASSED && row.field("Note").is_none())
}

fn findings_count_of(row: &LedgerRow) -> u64 {
    row.field("Findings count")
        .and_then(|count| count.parse().ok())
        .unwrap_or(0)
}

fn result_state(row: &LedgerRow) -> String {
    match row.event() {
        SENSOR_FAILED => format!("failed({})", findings_count_of(row)),
        SENSOR_PASSED => row.field("Note").unwrap_or("passed").to_owned(),
        _ => "budget-override".to_owned(),
    }
}

fn failure_of(row: &LedgerRow) -> Option<CheckFailure> {
    (row.event() == SENSOR_FAILED).then(|| CheckFailure {
        findings_count: findings_count_of(row),
        detail_path: row.field("Detail path").map(str::to_owned),
    })
}

/// The gate row's `Sensor State`: `<id>@<path>=<state>` joined with `; `; `None` when no check
/// has a result on the stage's outputs.
pub fn sensor_state_field(results: &[SensorResult]) -> Option<String> {
    let entries: Vec<String> = results
        .iter()
        .map(|result| {
            format!(
                "{}@{}={}",
                result.sensor_id, result.output_path, result.state
            )
        })
        .collect();
    (!entries.is_empty()).then(|| entries.join("; "))
}

/// One sentence per check that still fails, at most three, then one line counting the rest.
pub fn failed_check_notices(results: &[SensorResult]) -> Vec<String> {
    let failing: Vec<(&SensorResult, &CheckFailure)> = results
        .iter()
        .filter_map(|result| result.failure.as_ref().map(|failure| (result, failure)))
        .collect();
    let mut notices: Vec<String> = failing
        .iter()
        .take(MAX_NOTICE_SENTENCES)
        .map(|(result, failure)| notice_sentence(result, failure))
        .collect();
    match failing.len().saturating_sub(MAX_NOTICE_SENTENCES) {
        0 => {}
        1 => notices.push("1 more check reports findings on this stage's outputs.".to_owned()),
        more => notices.push(format!(
            "{more} more checks report findings on this stage's outputs."
        )),
    }
    notices
}

/// `The <sensor-id> check reports <n> finding[s] in <basename> (details: <detail path>).`
fn notice_sentence(result: &SensorResult, failure: &CheckFailure) -> String {
    let basename = result
        .output_path
        .rsplit('/')
        .next()
        .unwrap_or(&result.output_path);
    let plural = if failure.findings_count == 1 { "" } else { "s" };
    format!(
        "The {} check reports {} finding{plural} in {basename} (details: {}).",
        result.sensor_id,
        failure.findings_count,
        failure.detail_path.as_deref().unwrap_or("none")
    )
}

// --- The gate row -------------------------------------------------------------------------------

/// §5.1 step 5: under the audit lock, prove every blocking fingerprint, then append the gate row
/// (or, on a gate already open, only a revalidation row when an override applied).
fn commit_gate_row(
    layout: &Layout,
    record: &Utf8Path,
    request: &GateStepRequest,
    evaluation: &GateEvaluation,
    deliverables: &[Utf8PathBuf],
    state_text: &str,
) -> Result<GateStepReply, GateStepError> {
    let project_dir = &layout.project_dir;
    let shard = workspace::audit_shard_path_under(project_dir, record)
        .map_err(GateStepError::AuditShard)?;
    // Held across the fingerprint proof, the ledger read and the append, so that no other
    // writer's row (a reference process included) lands between what is read and what is written.
    let _lock = lock::acquire(project_dir)?;
    if let Some(path) = evaluation.fingerprints.first_changed() {
        return Err(GateStepError::ChangedAfterEvaluation {
            slug: request.stage.clone(),
            path: relative(project_dir, path),
        });
    }
    let rows = read_ledger(record);
    let outputs: Vec<String> = deliverables
        .iter()
        .map(|path| relative(project_dir, path))
        .collect();
    let results = latest_sensor_results(&rows, &request.stage, &outputs, request.unit.as_deref());
    let narration = if workspace::sensors_off_in_state(state_text) {
        Vec::new()
    } else {
        failed_check_notices(&results)
    };
    let override_applied = request.override_requested && !evaluation.issues.is_empty();
    let already_open = request.entry == GateEntry::Start
        && gate_is_open(&rows, &request.stage, request.unit.as_deref());
    let row_written = !already_open || override_applied;
    let now = SystemTime::now();
    if row_written {
        let fields = gate_row_fields(
            request,
            already_open,
            override_applied,
            evaluation,
            &results,
        );
        let row = AuditRow::stage_awaiting_approval(fields)?;
        ledger::append_row(project_dir, &shard, &row, now)?;
    }
    Ok(GateStepReply {
        slug: request.stage.clone(),
        unit: request.unit.clone(),
        timestamp: (!already_open).then(|| ledger::iso_timestamp(now)),
        already_open,
        row_written,
        narration,
        summary: evaluation.summary.clone(),
    })
}

/// Stage, Unit, then Artifacts (start) or Details (revise) or Revalidated (a gate already
/// open), the override fields when an override applied, and `Sensor State`.
fn gate_row_fields(
    request: &GateStepRequest,
    already_open: bool,
    override_applied: bool,
    evaluation: &GateEvaluation,
    results: &[SensorResult],
) -> Vec<(&'static str, String)> {
    let mut fields = vec![("Stage", request.stage.clone())];
    if let Some(unit) = &request.unit {
        fields.push(("Unit", unit.clone()));
    }
    if already_open {
        fields.push(("Revalidated", "true".to_owned()));
    } else if request.entry == GateEntry::Revise {
        fields.push(("Details", "Re-entering gate after revision".to_owned()));
    } else if let Some(artifacts) = request.artifacts.as_deref().filter(|a| !a.is_empty()) {
        fields.push(("Artifacts", artifacts.to_owned()));
    }
    if override_applied {
        fields.extend(override_fields(&evaluation.issues));
    }
    if let Some(state) = sensor_state_field(results) {
        fields.push(("Sensor State", state));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(event: &str, fields: &[(&str, &str)]) -> String {
        let mut text =
            format!("\n## Row\n**Timestamp**: 2026-09-04T10:00:00Z\n**Event**: {event}\n");
        for (key, value) in fields {
            let _ = writeln!(text, "**{key}**: {value}");
        }
        text.push_str("\n---\n");
        text
    }

    fn shard(blocks: &[String]) -> Vec<LedgerRow> {
        ledger_rows(0, &format!("# AI-DLC Audit Log\n{}", blocks.concat()))
    }

    fn decision() -> String {
        block(
            DECISION_RECORDED,
            &[
                ("Stage", "s"),
                ("Decision", BLOCKING_SENSOR_OVERRIDE_DECISION),
                ("Options", "Fix findings, Override blocking sensors"),
            ],
        )
    }

    fn human_turn() -> String {
        block(HUMAN_TURN, &[("Session", "x")])
    }

    fn answer(details: &str) -> String {
        block(QUESTION_ANSWERED, &[("Stage", "s"), ("Details", details)])
    }

    fn gate_row() -> String {
        block(STAGE_AWAITING_APPROVAL, &[("Stage", "s")])
    }

    #[test]
    fn a_receipt_needs_the_decision_a_human_turn_and_the_exact_answer() {
        let choice = BLOCKING_SENSOR_OVERRIDE_CHOICE;
        let full = shard(&[decision(), human_turn(), answer(choice)]);
        assert!(has_override_authorization(&full, "s"));
        assert!(!has_override_authorization(&full, "other-stage"));
        let no_turn = shard(&[decision(), answer(choice)]);
        assert!(!has_override_authorization(&no_turn, "s"));
        let turn_first = shard(&[human_turn(), decision(), answer(choice)]);
        assert!(!has_override_authorization(&turn_first, "s"));
        let paraphrase = shard(&[decision(), human_turn(), answer("Override")]);
        assert!(!has_override_authorization(&paraphrase, "s"));
        let no_decision = shard(&[human_turn(), answer(choice)]);
        assert!(!has_override_authorization(&no_decision, "s"));
    }

    #[test]
    fn a_receipt_is_spent_by_a_later_boundary_or_interaction() {
        let choice = BLOCKING_SENSOR_OVERRIDE_CHOICE;
        let spent = shard(&[decision(), human_turn(), answer(choice), gate_row()]);
        assert!(!has_override_authorization(&spent, "s"));
        let stale = shard(&[decision(), human_turn(), answer(choice), decision()]);
        assert!(!has_override_authorization(&stale, "s"));
        let single = shard(&[
            decision(),
            human_turn(),
            answer(choice),
            block(
                STAGE_AWAITING_APPROVAL,
                &[("Stage", "s"), ("Workflow", "single-stage:s")],
            ),
        ]);
        assert!(
            has_override_authorization(&single, "s"),
            "single-stage rows are not the main workflow's"
        );
    }

    #[test]
    fn the_decision_must_offer_both_options() {
        let narrow = block(
            DECISION_RECORDED,
            &[
                ("Stage", "s"),
                ("Decision", BLOCKING_SENSOR_OVERRIDE_DECISION),
                ("Options", "Override blocking sensors"),
            ],
        );
        let rows = shard(&[
            narrow,
            human_turn(),
            answer(BLOCKING_SENSOR_OVERRIDE_CHOICE),
        ]);
        assert!(!has_override_authorization(&rows, "s"));
    }

    #[test]
    fn across_shards_the_timestamp_orders_rows() {
        let early = LedgerRow {
            shard: 0,
            position: 9,
            timestamp: "2026-09-04T10:00:00Z".to_owned(),
            block: ledger::parse_blocks(&gate_row()).remove(0),
        };
        let later = LedgerRow {
            shard: 1,
            position: 0,
            timestamp: "2026-09-04T10:00:01Z".to_owned(),
            ..early.clone()
        };
        assert!(later.is_after(&early));
        assert!(!early.is_after(&later));
    }

    #[test]
    fn the_override_checks_run_in_the_reference_order() {
        let choice = Some(BLOCKING_SENSOR_OVERRIDE_CHOICE);
        let autonomous = override_refusal("s", true, choice, || true).unwrap();
        assert!(autonomous.contains("Construction Autonomy Mode is autonomous"));
        let wrong = override_refusal("s", false, Some("override"), || true).unwrap();
        assert!(wrong.contains("--user-input must be the exact offered choice"));
        let padded = override_refusal("s", false, Some("  Override blocking sensors "), || true);
        assert_eq!(padded, None, "the input is trimmed");
        let no_receipt = override_refusal("s", false, choice, || false).unwrap();
        assert_eq!(
            no_receipt,
            "Refusing blocking sensor override for \"s\": no fresh authorization receipt proves that \"Override blocking sensors\" was offered and selected after a HUMAN_TURN. Record the decision and exact answer through aidlc-log.ts, then retry."
        );
    }

    fn sample_issues() -> Vec<BlockingIssue> {
        vec![
            BlockingIssue {
                sensor_id: "shape".to_owned(),
                output_path: "a/doc-a.md".to_owned(),
                detail_path: Some("a/.aidlc-engine/sensors/s/shape-0000000a.md".to_owned()),
                reason: "reported findings".to_owned(),
            },
            BlockingIssue {
                sensor_id: "shape".to_owned(),
                output_path: "a/doc-b.md".to_owned(),
                detail_path: None,
                reason: "tool-unavailable".to_owned(),
            },
        ]
    }

    fn start_request() -> GateStepRequest {
        GateStepRequest {
            entry: GateEntry::Start,
            stage: "s".to_owned(),
            artifacts: None,
            unit: None,
            override_requested: false,
            user_input: None,
            dispatch_disabled_by_environment: false,
        }
    }

    #[test]
    fn the_refusal_message_keeps_the_reference_wording() {
        let message = refusal_message(&start_request(), ".claude", &sample_issues());
        assert_eq!(
            message,
            "Blocking gate sensor evaluation did not pass for \"s\". Sensors: shape. Detail paths: a/.aidlc-engine/sensors/s/shape-0000000a.md. Reasons: shape@a/doc-a.md: reported findings; shape@a/doc-b.md: tool-unavailable. Fix the findings and retry, or first run bun .claude/tools/aidlc-log.ts decision --stage s --decision \"Blocking gate sensor failure\" --options \"Fix findings,Override blocking sensors\", present those choices, and after the human selects \"Override blocking sensors\" record it with bun .claude/tools/aidlc-log.ts answer. Then retry: aidlc engine gate start s --override-blocking-sensors --user-input \"Override blocking sensors\". Autonomous mode cannot override."
        );
        let revise = GateStepRequest {
            entry: GateEntry::Revise,
            ..start_request()
        };
        let issues = &sample_issues()[1..];
        let message = refusal_message(&revise, ".kiro", issues);
        assert!(message.contains("Detail paths: none."), "{message}");
        assert!(
            message.contains("retry: aidlc engine gate revise s --override"),
            "{message}"
        );
    }

    #[test]
    fn override_fields_name_ids_once_and_only_existing_detail_paths() {
        let fields = override_fields(&sample_issues());
        assert_eq!(
            fields,
            [
                ("Blocking Sensor Override", "true".to_owned()),
                ("Blocking Sensor IDs", "shape".to_owned()),
                (
                    "Blocking Sensor Detail Paths",
                    "a/.aidlc-engine/sensors/s/shape-0000000a.md".to_owned()
                ),
                (
                    "Blocking Sensor Reasons",
                    "shape: reported findings; shape: tool-unavailable".to_owned()
                ),
            ]
        );
        let without_detail = override_fields(&sample_issues()[1..]);
        assert!(
            without_detail
                .iter()
                .all(|(key, _)| *key != "Blocking Sensor Detail Paths")
        );
    }

    #[test]
    fn only_an_unnoted_pass_raises_no_issue() {
        assert_eq!(issue_reason(&Verdict::Passed, false), None);
        let failed = Verdict::Failed {
            findings_count: 2,
            worker_json: serde_json::json!({"pass": false}),
        };
        assert_eq!(issue_reason(&failed, true).unwrap(), "reported findings");
        assert_eq!(
            issue_reason(&failed, false).unwrap(),
            "failed verdict omitted its detail path"
        );
        assert_eq!(
            issue_reason(&Verdict::ToolUnavailable, false).unwrap(),
            "tool-unavailable"
        );
        assert_eq!(
            issue_reason(
                &Verdict::ScriptError(crate::dispatch::verdict::ScriptError::Exit(2)),
                false
            )
            .unwrap(),
            "script-error: exit-2"
        );
        let budget = Verdict::BudgetOverride {
            cap_seconds: 1,
            observed_seconds: 2,
        };
        assert_eq!(
            issue_reason(&budget, false).unwrap(),
            "sensor execution exceeded its budget"
        );
    }

    fn sensor_row(event: &str, id: &str, output: &str, extra: &[(&str, &str)]) -> String {
        let mut fields = vec![
            ("Fire id", "0000000a"),
            ("Sensor ID", id),
            ("Stage slug", "s"),
            ("Output path", output),
        ];
        fields.extend_from_slice(extra);
        block(event, &fields)
    }

    fn failed(id: &str, output: &str, count: &str) -> String {
        sensor_row(
            SENSOR_FAILED,
            id,
            output,
            &[("Detail path", "d.md"), ("Findings count", count)],
        )
    }

    #[test]
    fn the_latest_decisive_result_counts_and_a_noted_pass_clears_nothing() {
        let outputs = vec!["x/a.md".to_owned()];
        let noted = sensor_row(
            SENSOR_PASSED,
            "c",
            "x/a.md",
            &[("Note", "tool-unavailable")],
        );
        let rows = shard(&[failed("c", "x/a.md", "3"), noted]);
        let results = latest_sensor_results(&rows, "s", &outputs, None);
        assert_eq!(results[0].state, "tool-unavailable");
        assert_eq!(
            failed_check_notices(&results),
            ["The c check reports 3 findings in a.md (details: d.md)."]
        );
        let cleared = shard(&[
            failed("c", "x/a.md", "1"),
            sensor_row(SENSOR_PASSED, "c", "x/a.md", &[]),
        ]);
        let results = latest_sensor_results(&cleared, "s", &outputs, None);
        assert!(failed_check_notices(&results).is_empty());
        assert_eq!(sensor_state_field(&results).unwrap(), "c@x/a.md=passed");
        let other_output = latest_sensor_results(&rows, "s", &["x/b.md".to_owned()], None);
        assert!(
            other_output.is_empty(),
            "a check that never ran says nothing"
        );
    }

    #[test]
    fn at_most_three_sentences_then_a_count() {
        let outputs: Vec<String> = ["a.md", "b.md", "c.md"].map(str::to_owned).to_vec();
        let rows = shard(&[
            failed("one", "a.md", "1"),
            failed("one", "b.md", "2"),
            failed("one", "c.md", "4"),
            failed("two", "a.md", "5"),
        ]);
        let notices = failed_check_notices(&latest_sensor_results(&rows, "s", &outputs, None));
        assert_eq!(
            notices,
            [
                "The one check reports 1 finding in a.md (details: d.md).",
                "The one check reports 2 findings in b.md (details: d.md).",
                "The one check reports 4 findings in c.md (details: d.md).",
                "1 more check reports findings on this stage's outputs.",
            ]
        );
        let state = sensor_state_field(&latest_sensor_results(&rows, "s", &outputs, None));
        assert_eq!(
            state.unwrap(),
            "one@a.md=failed(1); one@b.md=failed(2); one@c.md=failed(4); two@a.md=failed(5)"
        );
    }

    #[test]
    fn a_units_gate_skips_rows_of_other_units() {
        let outputs = vec!["a.md".to_owned()];
        let rows = shard(&[sensor_row(
            SENSOR_FAILED,
            "c",
            "a.md",
            &[("Unit", "beta"), ("Findings count", "5")],
        )]);
        assert!(latest_sensor_results(&rows, "s", &outputs, Some("alpha")).is_empty());
        assert_eq!(latest_sensor_results(&rows, "s", &outputs, None).len(), 1);
    }

    #[test]
    fn the_gate_is_open_until_the_stage_moves_on() {
        assert!(!gate_is_open(&shard(&[]), "s", None));
        assert!(gate_is_open(&shard(&[gate_row()]), "s", None));
        let rejected = shard(&[gate_row(), block("GATE_REJECTED", &[("Stage", "s")])]);
        assert!(!gate_is_open(&rejected, "s", None));
        let unit_row = block(
            STAGE_AWAITING_APPROVAL,
            &[("Stage", "s"), ("Unit", "alpha")],
        );
        let rows = shard(&[unit_row]);
        assert!(gate_is_open(&rows, "s", Some("alpha")));
        assert!(!gate_is_open(&rows, "s", None));
    }

    #[test]
    fn autonomy_and_the_sensors_switch_read_the_first_word() {
        let state = "- **Construction Autonomy Mode**: autonomous (set by you)\n- **Sensors**: off (set by you)\n";
        assert!(is_autonomous(state));
        assert!(workspace::sensors_off_in_state(state));
        assert!(!is_autonomous("- **Construction Autonomy Mode**: guided\n"));
        assert!(!workspace::sensors_off_in_state(""));
    }

    #[test]
    fn the_reply_has_the_reference_keys_in_order() {
        let reply = GateStepReply {
            slug: "s".to_owned(),
            unit: None,
            timestamp: Some("2026-09-04T10:00:00Z".to_owned()),
            already_open: false,
            row_written: true,
            narration: vec!["one.".to_owned(), "two.".to_owned()],
            summary: DispatchSummary::default(),
        };
        assert_eq!(
            reply.json().to_string(),
            r#"{"slug":"s","new_state":"awaiting-approval","timestamp":"2026-09-04T10:00:00Z","narration":"one.\ntwo."}"#
        );
        let open = GateStepReply {
            timestamp: None,
            already_open: true,
            narration: Vec::new(),
            ..reply
        };
        assert_eq!(
            open.json().to_string(),
            r#"{"slug":"s","new_state":"awaiting-approval","already_awaiting_approval":true,"revalidated":true}"#
        );
    }

    fn node_with(sensors: &serde_json::Value) -> GraphNode {
        crate::dispatch::stage_graph::node_from_json(&serde_json::json!({
            "slug": "s", "phase": "inception", "produces": ["a", "b", "b-questions"],
            "consumes": [], "sensors_applicable": sensors,
        }))
        .unwrap()
    }

    #[test]
    fn plans_are_sensor_major_and_autonomy_keeps_blocking_bindings() {
        let node = node_with(&serde_json::json!([
            {"id": "shape", "path": "s.md", "fire_on": "gate", "default_severity": "blocking", "matches": "**/*.md"},
            {"id": "upstream-coverage", "path": "u.md", "fire_on": "gate", "default_severity": "advisory"},
            {"id": "linter", "path": "l.md", "fire_on": "write", "default_severity": "blocking"},
        ]));
        let project = Utf8Path::new("/p");
        let deliverables: Vec<Utf8PathBuf> = ["/p/x/b-questions.md", "/p/x/a.md", "/p/x/b.md"]
            .map(Utf8PathBuf::from)
            .to_vec();
        let fires = plan_stage_fires(project, &node, &deliverables, false);
        let names: Vec<(&str, &str)> = fires
            .iter()
            .map(|fire| {
                (
                    fire.sensor_id.as_str(),
                    fire.deliverable.file_name().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("shape", "b-questions.md"),
                ("shape", "a.md"),
                ("shape", "b.md"),
                ("upstream-coverage", "a.md"),
            ]
        );
        let autonomous = plan_stage_fires(project, &node, &deliverables, true);
        assert!(autonomous.iter().all(|fire| fire.sensor_id == "shape"));
    }

    #[test]
    fn a_units_gate_keeps_that_units_folders_of_a_per_unit_stage() {
        let dir = tempfile::tempdir().unwrap();
        let record = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let node = crate::dispatch::stage_graph::node_from_json(&serde_json::json!({
            "slug": "design", "phase": "construction", "for_each": "unit-of-work",
            "produces": [], "consumes": [], "sensors_applicable": [],
        }))
        .unwrap();
        let mut files = Vec::new();
        for unit in ["alpha", "beta"] {
            let folder = record.join("construction").join(unit).join("design");
            std::fs::create_dir_all(&folder).unwrap();
            files.push(folder.join("spec.md"));
        }
        let deliverables = StageDeliverables {
            files: files.clone(),
            not_regular: Vec::new(),
        };
        let kept = keep_unit_deliverables(&record, &node, "alpha", deliverables.clone());
        assert_eq!(kept.files, files[..1]);
        std::fs::create_dir_all(record.join("construction/design")).unwrap();
        let stage_level = keep_unit_deliverables(&record, &node, "alpha", deliverables.clone());
        assert_eq!(
            stage_level, deliverables,
            "one stage-level folder serves every unit"
        );
    }
}
