//! The conductor's interaction receipts: `aidlc engine log decision|answer` and the human-turn
//! hook (`aidlc engine hook record-human-turn`), the three rows a blocking-sensor override needs
//! before `engine gate start|revise --override-blocking-sensors` accepts it. D34 states the
//! invariants: the rows byte for byte as the reference's tools write them (D2), only inside an
//! active workflow (a row in the bare space record root would be a shard no gate reads), an
//! answer checked and appended under one audit lock, and the receipt rule.
//!
//! Must not: print, or decide the gate (that is `gate::step`).

use std::time::SystemTime;

use camino::Utf8Path;
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::harness::payload::{self, PromptEvent, PromptSource};
use crate::harness::transcript::{self, ASK_USER_QUESTION_TOOL, Transcript};
use crate::leaves::audit_lock::{self, LockError};
use crate::leaves::write_folder;
use crate::protocol::stage_node::Phase;
use crate::runtime::audit::human_turn::{
    HARNESS_FIELD, HUMAN_TURN_RECEIPT_FIELD, PROMPT_ALREADY_WRITTEN_WINDOW, PROMPT_DIGEST_FIELD,
    PROMPT_SOURCE_FIELD, RECEIPT_FIELD, ReceiptInstall, SESSION_FIELD, TRANSCRIPT_FIELD,
    TRANSCRIPT_LINE_FIELD, block_of, prompt_contains_answer, prompt_copy_path,
    read_ledger_with_blocks, receipt_digest, verify_human_turn,
};
use crate::runtime::audit::ledger::{
    self, AuditBlock, AuditEvent, AuditRow, DecisionRecorded, LedgerEntry, LedgerError,
    QuestionAnswered, SINGLE_STAGE_WORKFLOW_PREFIX, StageScope,
};
use crate::runtime::dispatch::compiled_graph::load_graph;
use crate::runtime::dispatch::hook_workspace::{HookPlace, first_delivery, hook_workspace};
use crate::runtime::gate::step::{
    BLOCKING_SENSOR_OVERRIDE_DECISION, BLOCKING_SENSOR_OVERRIDE_OPTIONS, is_autonomous,
};
use crate::runtime::workspace::{self, Workspace};

/// How much of a refused reply a message quotes (the reference's display limit).
const REPLY_DISPLAY_LIMIT: usize = 120;

// `engine log decision`: the decision the conductor is about to offer, as its arguments. No
// doc comment on the struct: clap would make it the `about` of the command that flattens it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DecisionRequest {
    /// The stage the decision belongs to.
    #[arg(long, value_name = "SLUG")]
    pub stage: String,
    /// The decision, e.g. "Blocking gate sensor failure".
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub decision: String,
    /// The options offered, comma-separated, e.g. "Fix findings,Override blocking sensors".
    #[arg(long, value_name = "CSV", allow_hyphen_values = true)]
    pub options: Option<String>,
    /// Why the decision is asked.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub rationale: Option<String>,
    /// The unit, for a per-unit stage.
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    /// A single-stage run (`Workflow: single-stage:<slug>`), which no gate of the main
    /// workflow reads.
    #[arg(long)]
    pub single: bool,
}

// `engine log answer`: the human's answer, as its arguments (no doc comment, as above).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AnswerRequest {
    /// The stage the answer belongs to.
    #[arg(long, value_name = "SLUG")]
    pub stage: String,
    /// The human's answer, word for word (e.g. "Override blocking sensors").
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub details: String,
    /// The unit, for a per-unit stage.
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    /// A single-stage run (`Workflow: single-stage:<slug>`).
    #[arg(long)]
    pub single: bool,
}

/// Why a receipt was not recorded. The messages keep the reference's wording where it has one.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    #[error(
        "No active workflow — refusing to log an interaction event with no resolvable intent. Start a workflow first by describing what to build (/aidlc \"build the auth service\"), or switch to an intent (/aidlc intent <name>) if several exist."
    )]
    NoActiveWorkflow,
    #[error("Missing --{0} <text>")]
    Missing(&'static str),
    #[error(
        "Refusing to record received reply {reply} as an answer: it is cancellation boilerplate, not a human decision. If the user dismissed the question, re-present it and wait for a real answer; do not log the dismissal."
    )]
    NonAnswer { reply: String },
    #[error(
        "Refusing to record this answer: a real human has not acted at this checkpoint this turn. Type your answer in the session (which records a human turn) before logging it."
    )]
    NoHumanTurn,
    /// An answer for `stage` the checks of the module's invariants refuse, and why.
    #[error("Refusing to record this answer for \"{stage}\": {reason}")]
    AnswerRefused { stage: String, reason: String },
    #[error(
        "Refusing to acknowledge this approval choice: a real human has not acted at this gate this turn. The gate is report-owned - after the human types their choice, call aidlc-orchestrate.ts report --result approved or rejected; do not log it as an answer."
    )]
    ApprovalNotActed,
    #[error("cannot keep the prompt for its receipt: {0}")]
    PromptCopy(std::io::Error),
    #[error("cannot name this clone's audit shard: {0}")]
    Shard(std::io::Error),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("Audit emission failed: {0}")]
    Ledger(#[from] LedgerError),
}

fn active_record(workspace: &Workspace) -> Result<&Utf8Path, ReceiptError> {
    let record = workspace.record_root();
    if workspace::state_file_path(record).is_file() {
        Ok(record)
    } else {
        Err(ReceiptError::NoActiveWorkflow)
    }
}

fn scope(stage: &str, unit: Option<&String>, single: bool) -> StageScope {
    StageScope {
        stage: Some(stage.to_owned()),
        unit: unit.cloned(),
        workflow: single.then(|| format!("{SINGLE_STAGE_WORKFLOW_PREFIX}{stage}")),
    }
}

fn non_empty(value: &str, flag: &'static str) -> Result<(), ReceiptError> {
    if value.is_empty() {
        Err(ReceiptError::Missing(flag))
    } else {
        Ok(())
    }
}

/// `DECISION_RECORDED` in this clone's shard of the active record. Replies
/// `{"emitted":"DECISION_RECORDED","stage":…}`.
pub fn record_decision(
    workspace: &Workspace,
    request: &DecisionRequest,
    now: SystemTime,
) -> Result<Value, ReceiptError> {
    non_empty(&request.stage, "stage")?;
    non_empty(&request.decision, "decision")?;
    let record = active_record(workspace)?;
    let row = DecisionRecorded {
        scope: scope(&request.stage, request.unit.as_ref(), request.single),
        decision: Some(request.decision.clone()),
        options: request
            .options
            .clone()
            .filter(|options| !options.is_empty()),
        rationale: request
            .rationale
            .clone()
            .filter(|rationale| !rationale.is_empty()),
    }
    .to_row();
    append(workspace, record, &row, now)?;
    Ok(json!({"emitted": "DECISION_RECORDED", "stage": request.stage}))
}

/// `QUESTION_ANSWERED` in this clone's shard of the active record, after the checks of the
/// module's invariants, all under one audit lock. Replies
/// `{"emitted":"QUESTION_ANSWERED","stage":…}`.
pub fn record_answer(
    workspace: &Workspace,
    request: &AnswerRequest,
    now: SystemTime,
) -> Result<Value, ReceiptError> {
    non_empty(&request.stage, "stage")?;
    non_empty(&request.details, "details")?;
    if is_non_answer(&request.details) {
        return Err(ReceiptError::NonAnswer {
            reply: received_reply(&request.details),
        });
    }
    let record = active_record(workspace)?;
    let shard = workspace
        .audit_shard_under(record)
        .map_err(ReceiptError::Shard)?;
    let _lock = audit_lock::acquire(workspace.project_dir())?;
    let (entries, blocks) = read_ledger_with_blocks(record);
    let shard_index = shard_index(record, &shard);
    let autonomous = autonomous_construction_answer(workspace, record, &request.stage);
    let human_acted = autonomous || human_acted_since_last_resolution(&entries);
    // The reference's rule: at an open approval gate with no question asked since it opened,
    // the choice is the gate's (the conductor reports it), so no QUESTION_ANSWERED is written:
    // it would spend the human turn the approval needs.
    let at_open_gate = workspace::read_state_text(record)
        .is_some_and(|state| stage_awaits_approval(&state, &request.stage));
    if at_open_gate && !decision_pending_at_gate(&entries, &request.stage) {
        if !human_acted {
            return Err(ReceiptError::ApprovalNotActed);
        }
        return Ok(json!({
            "skipped": "QUESTION_ANSWERED",
            "stage": request.stage,
            "reason": "approval-gate-report-owned",
        }));
    }
    if !human_acted {
        return Err(ReceiptError::NoHumanTurn);
    }
    let answers_the_override =
        !request.single && check_override_answer(&entries, shard_index, request)?;
    let mut row = QuestionAnswered {
        scope: scope(&request.stage, request.unit.as_ref(), request.single),
        details: Some(request.details.clone()),
    }
    .to_row();
    if !autonomous {
        let receipt = answered_turn_receipt(
            receipt_install(workspace),
            record,
            &entries,
            &blocks,
            shard_index,
            request,
            answers_the_override,
        )?;
        let mut fields = row.fields().to_vec();
        fields.push((HUMAN_TURN_RECEIPT_FIELD, receipt));
        row = AuditRow::new(row.event(), fields)?;
    }
    ledger::append_row(workspace.project_dir(), &shard, &row, now)?;
    Ok(json!({"emitted": "QUESTION_ANSWERED", "stage": request.stage}))
}

/// What the human-turn hook did with one payload.
#[derive(Debug)]
pub enum HumanTurnHook {
    /// The payload is not the harness's real prompt event, and why: refused, since the receipt
    /// is made from it (D34).
    NotAPromptEvent(String),
    /// Recorded, or nothing to record: a prompt that is not the human's, outside a project, a
    /// second delivery, or a record without a workflow.
    Handled,
    /// A real prompt whose row could not be written (never blocks the turn).
    NotRecorded(ReceiptError),
}

/// The human-turn hook over one payload of `harness` (the registration's, never read from the
/// payload's shape, so a payload shaped for another harness is refused): the prompt event, its
/// workspace, its transcript's place, Codex's second delivery dropped, then the row.
pub fn human_turn_hook(
    place: &HookPlace<'_>,
    harness: Harness,
    payload: &[u8],
    now: SystemTime,
) -> HumanTurnHook {
    let kiro_ide_prompt = (place.env)(payload::KIRO_IDE_LEGACY_PAYLOAD_VARIABLE);
    let event = match payload::prompt_event(harness, payload, kiro_ide_prompt) {
        Ok(event) => event,
        Err(problem) => return HumanTurnHook::NotAPromptEvent(problem),
    };
    if !payload::prompt_is_human(harness, payload) {
        return HumanTurnHook::Handled;
    }
    let Some(workspace) = hook_workspace(place, harness, payload) else {
        return HumanTurnHook::Handled;
    };
    if let Err(problem) = transcript_in_its_place(&event, workspace.project_dir(), place.env) {
        return HumanTurnHook::NotAPromptEvent(problem);
    }
    if !first_delivery(
        harness,
        workspace.project_dir(),
        "record-human-turn",
        payload,
    ) {
        return HumanTurnHook::Handled;
    }
    match record_human_turn(&workspace, &event, harness.name(), now) {
        Ok(()) => HumanTurnHook::Handled,
        Err(error) => HumanTurnHook::NotRecorded(error),
    }
}

/// A Claude Code or Codex prompt's transcript is the harness's own for this project and session,
/// under the home folder the harness runs its hooks with.
fn transcript_in_its_place(
    event: &PromptEvent,
    project_dir: &Utf8Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let Transcript::At { path, format } = &event.transcript else {
        return Ok(());
    };
    let home = transcript::harness_home(*format, env)
        .ok_or("HOME is not set, so the harness's transcript folder cannot be known")?;
    let session = event.session.as_deref().unwrap_or_default();
    transcript::check_transcript_place(*format, path, project_dir, session, Some(&home))
}

/// `HUMAN_TURN` with its receipt fields (D34) in this clone's shard, and the human-turn marker,
/// when the active record has a workflow; nothing written when it has none, as the reference's
/// hook does, so a prompt in a project that never ran the framework grows nothing.
#[expect(
    clippy::disallowed_methods,
    reason = "the prompt copy and the human-turn marker, at paths the engine names in the record's runtime folder (the marker only once write_folder resolved the record inside the project)"
)]
fn record_human_turn(
    workspace: &Workspace,
    event: &PromptEvent,
    harness_name: &str,
    now: SystemTime,
) -> Result<(), ReceiptError> {
    let Ok(record) = active_record(workspace) else {
        return Ok(());
    };
    let digest = transcript::prompt_digest(&event.prompt);
    let mut fields: Vec<(&'static str, String)> = vec![(HARNESS_FIELD, harness_name.to_owned())];
    if let Some(session) = &event.session {
        fields.push((SESSION_FIELD, session.clone()));
    }
    fields.push((PROMPT_DIGEST_FIELD, digest.clone()));
    if event.source == PromptSource::Picked {
        fields.push((PROMPT_SOURCE_FIELD, ASK_USER_QUESTION_TOOL.to_owned()));
    }
    match &event.transcript {
        Transcript::At { path, format } => {
            fields.push((TRANSCRIPT_FIELD, path.to_string()));
            let line =
                transcript::prompt_line_now(path, *format, &digest, PROMPT_ALREADY_WRITTEN_WINDOW);
            fields.push((TRANSCRIPT_LINE_FIELD, line.to_string()));
        }
        Transcript::None => {
            let copy = prompt_copy_path(record, &digest);
            if let Some(parent) = copy.parent() {
                std::fs::create_dir_all(parent).map_err(ReceiptError::PromptCopy)?;
            }
            crate::leaves::fs_util::write_atomic(&copy, event.prompt.as_bytes())
                .map_err(ReceiptError::PromptCopy)?;
        }
    }
    let receipt = receipt_digest(&fields);
    fields.push((RECEIPT_FIELD, receipt));
    // The reference's hook writes no fields (presence only); its readers ignore these.
    let row = AuditRow::new(ledger::event::HUMAN_TURN, fields)?;
    append(workspace, record, &row, now)?;
    // The marker beside the state file, which the reference's Stop hook compares with the
    // engine's last advance.
    let marker = record.join(".aidlc-human-turn");
    let stamp = format!("{}\n", crate::leaves::timestamp::iso_timestamp(now));
    // The marker is advisory (the ledger row is the receipt); a failed write is not a lost turn.
    if write_folder::check_write_folder(workspace.project_dir(), record).is_ok() {
        let _ = crate::leaves::fs_util::write_atomic(&marker, stamp.as_bytes());
    }
    Ok(())
}

/// The receipt of the human turn an answer answers: the newest `HUMAN_TURN` in this clone's
/// shard after the latest resolution, verified, whose prompt contains the answer; for the
/// override decision (`exact_choice`), whose prompt is the answer itself or picked it.
fn answered_turn_receipt(
    install: ReceiptInstall<'_>,
    record: &Utf8Path,
    entries: &[LedgerEntry],
    blocks: &[Vec<AuditBlock>],
    shard_index: Option<usize>,
    request: &AnswerRequest,
    exact_choice: bool,
) -> Result<String, ReceiptError> {
    let refused = |reason: String| ReceiptError::AnswerRefused {
        stage: request.stage.clone(),
        reason,
    };
    let unverified = |reason: String| {
        refused(format!(
            "the human turn it answers cannot be verified: {reason}. Only a prompt the harness reported to `aidlc engine hook record-human-turn` counts; type the answer in the session, then record it."
        ))
    };
    let turn = unspent_human_turns(entries)
        .into_iter()
        .rev()
        .find(|entry| Some(entry.shard) == shard_index)
        .ok_or_else(|| {
            unverified("no HUMAN_TURN in this clone's audit shard since the last answer".to_owned())
        })?;
    let block = block_of(blocks, turn)
        .ok_or_else(|| unverified("the audit shard changed while it was read".to_owned()))?;
    let verified = verify_human_turn(install, record, block).map_err(unverified)?;
    if exact_choice && !verified.chose(&request.details) {
        let how = if verified.picked {
            "picked in the question widget"
        } else {
            "typed"
        };
        return Err(refused(format!(
            "the human {how} {} this turn, which is not the choice {} itself. A receipt for an offered choice is the choice alone, typed as the whole prompt (quotes, case and a final full stop aside) or picked in the question widget; a longer sentence, a negation or a quote of it is not. Ask again and record the choice only if the human gives it.",
            received_reply(&verified.prompt),
            received_reply(&request.details),
        )));
    }
    if !exact_choice && !prompt_contains_answer(&verified.prompt, &request.details) {
        return Err(refused(format!(
            "received reply {} is not in the human's prompt of this turn. Record the answer the human typed, word for word.",
            received_reply(&request.details)
        )));
    }
    Ok(verified.receipt)
}

/// The install whose harness makes this workspace's receipts.
pub fn receipt_install(workspace: &Workspace) -> ReceiptInstall<'_> {
    ReceiptInstall {
        project_dir: workspace.project_dir(),
        harness: workspace.layout.harness,
    }
}

fn append(
    workspace: &Workspace,
    record: &Utf8Path,
    row: &AuditRow,
    now: SystemTime,
) -> Result<(), ReceiptError> {
    let shard = workspace
        .audit_shard_under(record)
        .map_err(ReceiptError::Shard)?;
    ledger::append_row(workspace.project_dir(), &shard, row, now)?;
    Ok(())
}

/// The index `read_record_ledger` gives this clone's shard (its shards sorted by path), or
/// `None` while the shard does not exist yet.
fn shard_index(record: &Utf8Path, shard: &Utf8Path) -> Option<usize> {
    ledger::record_shards(record)
        .iter()
        .position(|path| path == shard)
}

/// The reference's Construction carve-out: under `Construction Autonomy Mode: autonomous`, an
/// answer for a construction stage is not a human's and needs no human turn. The stage's phase
/// comes from the compiled graph; a graph that cannot be read grants nothing.
fn autonomous_construction_answer(workspace: &Workspace, record: &Utf8Path, stage: &str) -> bool {
    if !workspace::read_state_text(record).is_some_and(|state| is_autonomous(&state)) {
        return false;
    }
    load_graph(&workspace.layout.stage_graph_path).is_ok_and(|graph| {
        graph
            .nodes
            .iter()
            .any(|node| node.slug == stage && node.phase == Phase::Construction)
    })
}

/// The state's checkbox line `- [?] <slug> — …` (the reference's `parseCheckboxes`): the stage
/// sits at its approval gate.
pub fn stage_awaits_approval(state_text: &str, slug: &str) -> bool {
    state_text.lines().any(|line| {
        line.strip_prefix("- [?] ")
            .and_then(|rest| rest.split_once('\u{2014}'))
            .is_some_and(|(name, _)| {
                let name = name.trim_end();
                name == slug && !name.contains(char::is_whitespace)
            })
    })
}

/// The reference's `hasPendingDecisionAtGate`: after the stage's latest gate row, a decision
/// for the stage with no answer after it (rows ordered by timestamp, then position).
fn decision_pending_at_gate(entries: &[LedgerEntry], stage: &str) -> bool {
    let mut of_stage: Vec<&LedgerEntry> = entries
        .iter()
        .filter(|entry| {
            matches!(
                entry.event,
                AuditEvent::StageAwaitingApproval(_)
                    | AuditEvent::DecisionRecorded(_)
                    | AuditEvent::QuestionAnswered(_)
            ) && entry
                .event
                .stage_scope()
                .is_some_and(|scope| scope.stage.as_deref() == Some(stage))
        })
        .collect();
    of_stage.sort_by_key(|entry| (entry.timestamp.as_str(), entry.shard, entry.position));
    let Some(gate) = of_stage
        .iter()
        .rposition(|entry| matches!(entry.event, AuditEvent::StageAwaitingApproval(_)))
    else {
        return false;
    };
    // Every row after the latest gate row is a decision or an answer: the newest decides.
    of_stage[gate + 1..]
        .last()
        .is_some_and(|entry| matches!(entry.event, AuditEvent::DecisionRecorded(_)))
}

/// The reference's `humanActedSinceGate`: a `HUMAN_TURN` after the latest row that resolved
/// one (positions order rows of one shard, timestamps rows of different shards; a tie across
/// shards is unordered and so refused). An empty ledger has no presence tracking yet and passes.
pub fn human_acted_since_last_resolution(entries: &[LedgerEntry]) -> bool {
    entries.is_empty() || !unspent_human_turns(entries).is_empty()
}

/// The `HUMAN_TURN` rows after every row that resolved one, in ledger order.
fn unspent_human_turns(entries: &[LedgerEntry]) -> Vec<&LedgerEntry> {
    let resolutions: Vec<&LedgerEntry> = entries
        .iter()
        .filter(|entry| entry.event.spends_a_human_turn())
        .collect();
    entries
        .iter()
        .filter(|entry| {
            matches!(entry.event, AuditEvent::HumanTurn)
                && resolutions
                    .iter()
                    .all(|resolution| entry.is_after(resolution))
        })
        .collect()
}

/// The newest main-workflow interaction of the stage in the whole record: when it is the
/// override decision, the answer must be one of its options, with a human turn after it in
/// this clone's shard (the shard the answer goes to). `Ok(true)` when the answer answers it.
fn check_override_answer(
    entries: &[LedgerEntry],
    shard_index: Option<usize>,
    request: &AnswerRequest,
) -> Result<bool, ReceiptError> {
    let newest_interaction = entries
        .iter()
        .filter(|entry| {
            matches!(
                entry.event,
                AuditEvent::DecisionRecorded(_) | AuditEvent::QuestionAnswered(_)
            ) && entry
                .event
                .stage_scope()
                .is_some_and(|scope| scope.is_main_workflow_of(&request.stage))
        })
        .reduce(|newest, entry| {
            if entry.is_after(newest) {
                entry
            } else {
                newest
            }
        });
    let Some(decision_entry) = newest_interaction else {
        return Ok(false);
    };
    let AuditEvent::DecisionRecorded(decision) = &decision_entry.event else {
        return Ok(false);
    };
    if decision.decision.as_deref() != Some(BLOCKING_SENSOR_OVERRIDE_DECISION) {
        return Ok(false);
    }
    let offered: Vec<&str> = decision
        .options
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(crate::leaves::js_text::js_trim)
        .filter(|option| !option.is_empty())
        .collect();
    let details = crate::leaves::js_text::js_trim(&request.details);
    if !offered.contains(&details) {
        let shown = if offered.is_empty() {
            &BLOCKING_SENSOR_OVERRIDE_OPTIONS[..]
        } else {
            &offered[..]
        };
        let shown: Vec<String> = shown.iter().map(|option| format!("\"{option}\"")).collect();
        return Err(ReceiptError::AnswerRefused {
            stage: request.stage.clone(),
            reason: format!(
                "received reply {} is not one of the choices the decision \"{BLOCKING_SENSOR_OVERRIDE_DECISION}\" offered ({}). Re-present those choices and record the one the human selects, word for word.",
                received_reply(&request.details),
                shown.join(", ")
            ),
        });
    }
    let human_after_decision = shard_index == Some(decision_entry.shard)
        && entries.iter().any(|entry| {
            matches!(entry.event, AuditEvent::HumanTurn)
                && entry.shard == decision_entry.shard
                && entry.position > decision_entry.position
        });
    if human_after_decision {
        Ok(true)
    } else {
        Err(ReceiptError::AnswerRefused {
            stage: request.stage.clone(),
            reason: format!(
                "no human turn was recorded in this clone's audit shard after the decision \"{BLOCKING_SENSOR_OVERRIDE_DECISION}\", so the gate would not accept it as a receipt. Present the choices, end the turn, and record the answer after the human replies."
            ),
        })
    }
}

/// The reference's `isNonAnswer`: an empty reply, or the whole trimmed reply being
/// cancellation, dismissal or time-out boilerplate (a reply that merely contains such a word is
/// an answer).
pub fn is_non_answer(text: &str) -> bool {
    let trimmed = crate::leaves::js_text::js_trim(text);
    if trimmed.is_empty() {
        return true;
    }
    let lower = trimmed.to_lowercase();
    let bare = lower.strip_suffix(['.', '!']).unwrap_or(lower.as_str());
    NON_ANSWERS.contains(&bare)
}

/// Every whole reply the reference's `NON_ANSWER_RE` matches (lower case, without the one
/// trailing `.` or `!` it allows).
const NON_ANSWERS: [&str; 22] = [
    "cancel",
    "cancelled",
    "canceled",
    "cancellation",
    "dismiss",
    "dismissed",
    "abort",
    "aborted",
    "timeout",
    "time out",
    "time-out",
    "timedout",
    "timed out",
    "timed-out",
    "no answer",
    "no response",
    "user cancelled",
    "user canceled",
    "user dismissed",
    "question cancelled",
    "question canceled",
    "question dismissed",
];

/// The reference's `formatReceivedReply`: the reply trimmed, whitespace runs folded, cut at 120
/// characters, as a JSON string; `"(empty)"` for an empty one.
pub fn received_reply(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let folded = if folded.is_empty() {
        "(empty)".to_owned()
    } else {
        folded
    };
    let display = if folded.chars().count() <= REPLY_DISPLAY_LIMIT {
        folded
    } else {
        let kept: String = folded.chars().take(REPLY_DISPLAY_LIMIT - 3).collect();
        format!("{kept}...")
    };
    Value::from(display).to_string()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::runtime::audit::ledger::{parse_blocks, shard_entries};

    fn entries(shards: &[&[&str]]) -> Vec<LedgerEntry> {
        shards
            .iter()
            .enumerate()
            .flat_map(|(index, events)| {
                let text = events.iter().fold(String::new(), |mut text, event| {
                    let _ = write!(
                        text,
                        "\n## {event}\n**Timestamp**: T\n**Event**: {event}\n\n---\n"
                    );
                    text
                });
                shard_entries(index, parse_blocks(&text))
            })
            .collect()
    }

    #[test]
    fn a_human_turn_counts_only_after_the_latest_resolution() {
        assert!(human_acted_since_last_resolution(&[]));
        assert!(!human_acted_since_last_resolution(&entries(&[&[
            "SENSOR_FIRED"
        ]])));
        assert!(human_acted_since_last_resolution(&entries(&[&[
            "QUESTION_ANSWERED",
            "HUMAN_TURN"
        ]])));
        assert!(!human_acted_since_last_resolution(&entries(&[&[
            "HUMAN_TURN",
            "GATE_APPROVED"
        ]])));
        // Same second in two shards: unordered, so refused.
        assert!(!human_acted_since_last_resolution(&entries(&[
            &["HUMAN_TURN"],
            &["QUESTION_ANSWERED"]
        ])));
    }

    #[test]
    fn a_stage_awaits_approval_by_its_checkbox_line() {
        let state = "## Stages\n- [x] intent-capture \u{2014} Intent Capture\n- [?] user-stories \u{2014} User Stories\n";
        assert!(stage_awaits_approval(state, "user-stories"));
        assert!(!stage_awaits_approval(state, "intent-capture"));
        assert!(!stage_awaits_approval(
            "- [-] user-stories \u{2014} x\n",
            "user-stories"
        ));
    }

    #[test]
    fn non_answers_are_whole_boilerplate_replies_only() {
        for reply in [
            "",
            "  ",
            "Cancelled",
            "dismissed.",
            "Timed out!",
            "user dismissed",
            "No response",
        ] {
            assert!(is_non_answer(reply), "{reply:?}");
        }
        for reply in [
            "cancel the standing order",
            "Override blocking sensors",
            "Cancelled..",
        ] {
            assert!(!is_non_answer(reply), "{reply:?}");
        }
    }

    #[test]
    fn a_received_reply_is_folded_cut_and_quoted() {
        assert_eq!(received_reply("  a \n b "), "\"a b\"");
        assert_eq!(received_reply(""), "\"(empty)\"");
        let long = "x".repeat(200);
        assert_eq!(received_reply(&long), format!("\"{}...\"", "x".repeat(117)));
    }
}
