//! The gate's sensor step as the conductor calls it (`aidlc engine gate start|revise`, D10):
//! fire the stage's gate sensors on its deliverables, enforce the blocking ones, prove that the
//! bytes did not move, and append the gate row `STAGE_AWAITING_APPROVAL` (D29 steps
//! 3–5, D31–D36; D4, D6, D9). The conductor owns the state machine: the state file is only
//! read here.
//!
//! Invariants:
//! - the D30 refusals (a deliverable or produce folder escaping) come before any audit row;
//! - every blocking (sensor, path) is fingerprinted with BLAKE3 before the first dispatch,
//!   re-hashed just before and just after its own fire, and every fingerprint is checked once
//!   more under the audit lock right before the gate row is appended; moved bytes refuse the
//!   gate (D6);
//! - only an unnoted pass passes a blocking binding (D4): findings, non-evaluations, budget
//!   overrides, refused fires and moved bytes are all issues, and so is a blocking gate binding
//!   that fired on no deliverable at all (scenario S12);
//! - advisory gate sensors are dispatched (their rows exist) but never decide; under
//!   Construction autonomy they are not dispatched, and no override is accepted;
//! - with the Sensors ceremony off (`AIDLC_DISABLE_SENSORS=1`, or `- **Sensors**: off` in the
//!   state file) nothing is dispatched, and every blocking gate binding of the stage is an
//!   issue naming the switch: nothing the agent can switch opens a gate a blocking sensor
//!   guards; the gate row records the switch (`Sensors Off`);
//! - an override needs a fresh receipt in the audit shards (D34); the gate row it writes is a
//!   boundary itself, so one receipt opens the gate once;
//! - the ledger is read through `audit::ledger`'s typed events only.

pub mod command;
mod gate_row;
mod notices;
mod plan;
mod receipt;
mod request;

pub use gate_row::GateStepReply;
pub use plan::{
    BlockingIssue, DispatchSummary, GateEvaluation, evaluate_gate_sensors, plan_stage_fires,
};
pub use receipt::{BLOCKING_SENSOR_OVERRIDE_DECISION, BLOCKING_SENSOR_OVERRIDE_OPTIONS};
pub use request::{GateEntry, GateStepError, GateStepRequest};

use camino::{Utf8Path, Utf8PathBuf};

use crate::protocol::graph_reader::unknown_stage_message;
use crate::protocol::stage_node::GraphNode;
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::time_limit::GateLimits;
use crate::runtime::gate::deliverables::{
    ArtifactRefusal, DeliverableError, StageDeliverables, artifact_tokens, existing_deliverables,
};
use crate::runtime::gate::gate_fires::{PlannedFire, unfired_binding};
use crate::runtime::workspace::{self, SensorsOffSwitch, Workspace};
use gate_row::commit_gate_row;
use plan::stage_level_issues;
use receipt::enforce_blocking_sensors;

// --- The step -----------------------------------------------------------------------------------

/// The whole step for the active intent: deliverables, fires, enforcement, the gate row.
/// `registry` must be free of errors; `nodes` is the compiled graph.
pub fn run_gate_step(
    workspace: &Workspace,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    request: &GateStepRequest,
) -> Result<GateStepReply, GateStepError> {
    // Several records without a cursor, or none, stop the step.
    let record = workspace
        .unambiguous_active_intent()?
        .ok_or_else(|| GateStepError::NoIntent {
            space: workspace.space().to_owned(),
        })?;
    let node = nodes
        .iter()
        .find(|node| node.slug == request.stage)
        .ok_or_else(|| GateStepError::UnknownStage(unknown_stage_message(&request.stage, nodes)))?;
    if let Some(unit) = request.unit.as_deref()
        && !workspace::is_plain_folder_name(unit)
    {
        return Err(GateStepError::InvalidUnit {
            unit: unit.to_owned(),
        });
    }
    let state_text = workspace::read_state_text(&record).unwrap_or_default();
    let autonomous = is_autonomous(&state_text);
    let deliverables = stage_deliverables(workspace, &record, node, request)?;
    let sensors_off = SensorsOffSwitch::of(request.dispatch_disabled_by_environment, &state_text);
    let evaluation = if let Some(switch) = sensors_off {
        GateEvaluation::sensors_switched_off(node, deliverables.files.len(), switch)
    } else {
        let fires = plan_stage_fires(workspace.project_dir(), node, &deliverables, autonomous);
        let mut evaluation = evaluate_gate_sensors(
            workspace,
            registry,
            nodes,
            &fires,
            deliverables.files.len(),
            &GateLimits {
                dispatch_cap: request.dispatch_cap.clone(),
                run: None,
            },
        );
        evaluation.summary.not_regular_files = deliverables.not_regular.len();
        evaluation.issues.extend(unfired_blocking_issues(
            workspace.project_dir(),
            &record,
            node,
            &deliverables,
            &fires,
        ));
        evaluation
    };
    if crate::leaves::interrupt::requested() {
        return Err(GateStepError::Interrupted);
    }
    enforce_blocking_sensors(
        &workspace.layout,
        &record,
        request,
        autonomous,
        &evaluation.issues,
    )?;
    commit_gate_row(
        workspace,
        &record,
        request,
        &evaluation,
        &deliverables.files,
        &state_text,
    )
}

/// One issue per blocking gate binding of the stage that got no fire (scenario S12): a sensor that
/// never looked at the stage has not passed it. The gate's stage is reached by definition.
fn unfired_blocking_issues(
    project_dir: &Utf8Path,
    record: &Utf8Path,
    node: &GraphNode,
    deliverables: &StageDeliverables,
    fires: &[PlannedFire],
) -> Vec<BlockingIssue> {
    stage_level_issues(node, |entry| {
        let fired = fires.iter().any(|fire| fire.sensor_id == entry.id);
        (!fired).then(|| unfired_binding(project_dir, record, node, entry, deliverables).reason())
    })
}

/// `- **Construction Autonomy Mode**: autonomous` (its first word, so a `(set by you)` note
/// after it does not matter).
pub fn is_autonomous(state_text: &str) -> bool {
    workspace::read_state_field(state_text, "Construction Autonomy Mode")
        .is_some_and(|value| value.split_whitespace().next() == Some("autonomous"))
}

/// The stage's deliverables (D30, with the `--artifacts` tokens); a unit's own gate keeps
/// that unit's folders of a per-unit stage (unless the stage writes one stage-level folder).
fn stage_deliverables(
    workspace: &Workspace,
    record: &Utf8Path,
    node: &GraphNode,
    request: &GateStepRequest,
) -> Result<StageDeliverables, GateStepError> {
    let tokens = match request.artifacts.as_deref() {
        Some(value) => artifact_tokens(&node.slug, value)?,
        None => Vec::new(),
    };
    let deliverables = existing_deliverables(workspace, record, node, &tokens)?;
    let Some(unit) = request.unit.as_deref() else {
        return Ok(deliverables);
    };
    let kept = keep_unit_deliverables(record, node, unit, deliverables);
    // An explicit artifact of another unit's folders is refused, not dropped unseen.
    if let Some((token, _)) = kept
        .explicit
        .iter()
        .find(|(_, path)| !kept.files.contains(path))
    {
        return Err(DeliverableError::ArtifactRefused {
            slug: node.slug.clone(),
            candidate: token.clone(),
            why: ArtifactRefusal::OutsideUnit(unit.to_owned()),
        }
        .into());
    }
    Ok(kept)
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
        explicit: deliverables.explicit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autonomy_and_the_sensors_switch_read_the_first_word() {
        let state = "- **Construction Autonomy Mode**: autonomous (set by you)\n- **Sensors**: off (set by you)\n";
        assert!(is_autonomous(state));
        assert!(workspace::sensors_off_in_state(state));
        assert!(!is_autonomous("- **Construction Autonomy Mode**: guided\n"));
        assert!(!workspace::sensors_off_in_state(""));
        assert_eq!(
            SensorsOffSwitch::of(true, state),
            Some(SensorsOffSwitch::Environment),
            "the environment is named first"
        );
        assert_eq!(
            SensorsOffSwitch::of(false, state),
            Some(SensorsOffSwitch::StateFile)
        );
        assert_eq!(SensorsOffSwitch::of(false, ""), None);
    }

    #[test]
    fn a_units_gate_keeps_that_units_folders_of_a_per_unit_stage() {
        let dir = tempfile::tempdir().unwrap();
        let record = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let node = crate::protocol::graph_reader::tests::node_from_json(&serde_json::json!({
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
            explicit: Vec::new(),
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

#[cfg(test)]
pub(crate) mod test_support;
