//! The gate row (D29 step 5, D35): under the audit lock, the last fingerprint proof, the ledger
//! read, and `STAGE_AWAITING_APPROVAL` appended; and the step's reply to the conductor.
//!
//! Invariant: the lock is held from the fingerprint proof through the append, so no other
//! writer's row (a reference process included) lands between what is read and what is written.

use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use super::notices::{
    SensorResult, failed_check_notices, latest_sensor_results, sensor_state_field,
};
use super::plan::{DispatchSummary, GateEvaluation};
use super::receipt::blocking_override;
use super::request::{GateEntry, GateStepError, GateStepRequest};
use crate::leaves::audit_lock;
use crate::runtime::audit::ledger::{
    self, GateRow, StageScope, read_record_ledger, relative_path_field,
};
use crate::runtime::gate::progress::gate_is_open;
use crate::runtime::workspace::{self, SensorsOffSwitch, Workspace};

/// The gate step's answer to the conductor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateStepReply {
    pub slug: String,
    pub unit: Option<String>,
    /// The gate row's timestamp; `None` when the gate was already open.
    pub timestamp: Option<String>,
    pub already_open: bool,
    /// The D36 sentences, one per line.
    pub narration: Vec<String>,
    pub summary: DispatchSummary,
}

impl GateStepReply {
    /// `{"slug","new_state":"awaiting-approval","timestamp"}`, or for a gate already open
    /// `{"slug","new_state","already_awaiting_approval":true,"revalidated":true}`, plus
    /// `narration` when a check still fails (D35, D36).
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

// --- The gate row -------------------------------------------------------------------------------

/// The `Details` of a gate row written on `gate revise`.
const REVISION_DETAILS: &str = "Re-entering gate after revision";

/// D29 step 5: under the audit lock, prove every blocking fingerprint, then append the gate row
/// (or, on a gate already open, only a revalidation row when an override applied).
pub(super) fn commit_gate_row(
    workspace: &Workspace,
    record: &Utf8Path,
    request: &GateStepRequest,
    evaluation: &GateEvaluation,
    deliverables: &[Utf8PathBuf],
    state_text: &str,
) -> Result<GateStepReply, GateStepError> {
    let project_dir = workspace.project_dir();
    let shard = workspace
        .audit_shard_under(record)
        .map_err(GateStepError::AuditShard)?;
    // Held across the fingerprint proof, the ledger read and the append (the module's invariant).
    let _lock = audit_lock::acquire(project_dir)?;
    if let Some(path) = evaluation.fingerprints.changed_paths().next() {
        return Err(GateStepError::ChangedAfterEvaluation {
            slug: request.stage.clone(),
            path: relative_path_field(project_dir, path.as_str()),
        });
    }
    let ledger = read_record_ledger(record);
    let outputs: Vec<String> = deliverables
        .iter()
        .map(|path| relative_path_field(project_dir, path.as_str()))
        .collect();
    let results = latest_sensor_results(
        &ledger.entries,
        &request.stage,
        &outputs,
        request.unit.as_deref(),
    );
    let mut narration = gate_narration(evaluation, state_text, &results);
    if let Some(unseen) =
        crate::runtime::gate::unseen_writes::unseen_writes(workspace, deliverables)
    {
        narration.push(unseen.sentence(&request.stage));
    }
    let override_applied = request.override_requested && !evaluation.issues.is_empty();
    let already_open = request.entry == GateEntry::Start
        && gate_is_open(&ledger.entries, &request.stage, request.unit.as_deref());
    let now = SystemTime::now();
    // A gate row is appended unless the gate was already open and no override applied.
    if !already_open || override_applied {
        let row = gate_row(
            request,
            already_open,
            override_applied,
            evaluation,
            &results,
        );
        ledger::append_row(project_dir, &shard, &row.to_row(), now)?;
    }
    Ok(GateStepReply {
        slug: request.stage.clone(),
        unit: request.unit.clone(),
        timestamp: (!already_open).then(|| crate::leaves::timestamp::iso_timestamp(now)),
        already_open,
        narration,
        summary: evaluation.summary.clone(),
    })
}

/// The D36 sentences, after one saying that the Sensors ceremony was off and by which switch
/// when it was; the failed-check sentences are not said when the state file turned it off.
fn gate_narration(
    evaluation: &GateEvaluation,
    state_text: &str,
    results: &[SensorResult],
) -> Vec<String> {
    let mut narration: Vec<String> = evaluation
        .sensors_off
        .map(sensors_off_sentence)
        .into_iter()
        .collect();
    if !workspace::sensors_off_in_state(state_text) {
        narration.extend(failed_check_notices(results));
    }
    narration
}

/// `Sensors are off (AIDLC_DISABLE_SENSORS=1): no gate sensor ran on this stage's outputs.`
fn sensors_off_sentence(switch: SensorsOffSwitch) -> String {
    format!(
        "Sensors are off ({}): no gate sensor ran on this stage's outputs.",
        switch.described()
    )
}

/// Stage, Unit, then Revalidated (a gate already open), Details (revise) or Artifacts (start),
/// the override fields when an override applied, `Sensor State`, and `Sensors Off` (the switch)
/// when the Sensors ceremony was off.
fn gate_row(
    request: &GateStepRequest,
    already_open: bool,
    override_applied: bool,
    evaluation: &GateEvaluation,
    results: &[SensorResult],
) -> GateRow {
    let entering = !already_open;
    GateRow {
        scope: StageScope {
            stage: Some(request.stage.clone()),
            unit: request.unit.clone(),
            workflow: None,
        },
        revalidated: already_open,
        details: (entering && request.entry == GateEntry::Revise)
            .then(|| REVISION_DETAILS.to_owned()),
        artifacts: request.artifacts.clone().filter(|artifacts| {
            entering && request.entry == GateEntry::Start && !artifacts.is_empty()
        }),
        blocking_override: override_applied.then(|| blocking_override(&evaluation.issues)),
        sensor_state: sensor_state_field(results),
        sensors_off: evaluation
            .sensors_off
            .map(|switch| switch.field_value().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_has_the_reference_keys_in_order() {
        let reply = GateStepReply {
            slug: "s".to_owned(),
            unit: None,
            timestamp: Some("2026-09-04T10:00:00Z".to_owned()),
            already_open: false,
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
}
