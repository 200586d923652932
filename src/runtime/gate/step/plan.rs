//! Planning, fingerprints and dispatch of the gate step (D31–D33, D6): which gate fires a
//! stage gets, the BLAKE3 fingerprints of its blocking deliverables, each fire in order, and the
//! issue each blocking fire raises.
//!
//! Invariants:
//! - every blocking (sensor, path) is fingerprinted before the first dispatch and re-hashed just
//!   before and just after its own fire; moved bytes outrank whatever the sensor said;
//! - only an unnoted pass raises no issue (D4); advisory fires are recorded but never raise one.

use camino::Utf8Path;

use crate::protocol::selection::{FireOn, Severity};
use crate::protocol::stage_node::{GraphNode, SensorEntry};
use crate::protocol::verdict::{ScriptError, Verdict};
use crate::runtime::audit::ledger::relative_path_field;
use crate::runtime::dispatch::fire::{FireContext, prepare_fire_with, run_fire};
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::time_limit::GateLimits;
use crate::runtime::gate::deliverables::StageDeliverables;
use crate::runtime::gate::fingerprints::{Fingerprints, fingerprint_file};
use crate::runtime::gate::gate_fires::{
    GatePlan, PlannedFire, fingerprint_blocking_deliverables, fire_request, plan_entry,
};
use crate::runtime::workspace::{SensorsOffSwitch, Workspace};

/// One reason the blocking sensors did not pass (D33).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockingIssue {
    pub sensor_id: String,
    /// Project-relative, `/` separators.
    pub output_path: String,
    /// Project-relative detail file of a reported failure.
    pub detail_path: Option<String>,
    pub reason: String,
}

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
    /// The switch that turned the Sensors ceremony off, when one did: nothing was dispatched.
    pub sensors_off: Option<SensorsOffSwitch>,
}

impl GateEvaluation {
    /// With the Sensors ceremony off nothing is dispatched, and nothing is fingerprinted; every
    /// blocking gate binding of the stage is an issue of its own, saying which switch kept it
    /// from running and how to turn it back on, since a sensor that was not run has not passed
    /// (D4). A stage without a blocking gate binding has no issue.
    pub(super) fn sensors_switched_off(
        node: &GraphNode,
        n_deliverables: usize,
        switch: SensorsOffSwitch,
    ) -> Self {
        Self {
            issues: stage_level_issues(node, |_| Some(switched_off_reason(switch))),
            summary: DispatchSummary {
                deliverables: n_deliverables,
                nothing_dispatched_because: Some(match switch {
                    SensorsOffSwitch::Environment => "Sensors are off: AIDLC_DISABLE_SENSORS=1",
                    SensorsOffSwitch::StateFile => {
                        "Sensors are off: `- **Sensors**: off` in aidlc-state.md"
                    }
                }),
                ..DispatchSummary::default()
            },
            sensors_off: Some(switch),
            ..Self::default()
        }
    }
}

/// One issue per blocking gate binding of the stage that `reason` gives a reason for, in
/// authored order, named by the stage (not by a deliverable).
pub(super) fn stage_level_issues(
    node: &GraphNode,
    reason: impl Fn(&SensorEntry) -> Option<String>,
) -> Vec<BlockingIssue> {
    node.sensors_applicable
        .iter()
        .filter(|entry| {
            entry.fire_on == FireOn::Gate && entry.default_severity == Severity::Blocking
        })
        .filter_map(|entry| {
            Some(BlockingIssue {
                reason: reason(entry)?,
                sensor_id: entry.id.clone(),
                output_path: node.slug.clone(),
                detail_path: None,
            })
        })
        .collect()
}

/// `not evaluated: sensors are off (AIDLC_DISABLE_SENSORS=1); unset AIDLC_DISABLE_SENSORS to
/// run it`.
pub fn switched_off_reason(switch: SensorsOffSwitch) -> String {
    format!(
        "not evaluated: sensors are off ({}); {} to run it",
        switch.described(),
        switch.turned_on_by()
    )
}

// --- Planning -----------------------------------------------------------------------------------

/// The gate fires of one stage, sensor-major in authored order (D31): each gate binding on
/// each deliverable its graph glob matches; `upstream-coverage` and `claim-sources` once per
/// output folder, on its first deliverable that is not a marker (D6). Under autonomy only the
/// blocking bindings fire (D6).
pub fn plan_stage_fires(
    project_dir: &Utf8Path,
    node: &GraphNode,
    deliverables: &StageDeliverables,
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

fn issue(project_dir: &Utf8Path, fire: &PlannedFire, reason: &str) -> BlockingIssue {
    BlockingIssue {
        sensor_id: fire.sensor_id.clone(),
        output_path: relative_path_field(project_dir, fire.deliverable.as_str()),
        detail_path: None,
        reason: reason.to_owned(),
    }
}

// --- Dispatch -----------------------------------------------------------------------------------

/// Fire every planned fire in order, one at a time, and collect the blocking issues (D31–D33).
/// Advisory fires are recorded like any other but never raise an issue.
pub fn evaluate_gate_sensors(
    workspace: &Workspace,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    fires: &[PlannedFire],
    n_deliverables: usize,
    limits: &GateLimits,
) -> GateEvaluation {
    let project_dir = workspace.project_dir();
    // Each blocking deliverable is fingerprinted once, before anything is dispatched (D32 step 1).
    let (fingerprints, unreadable) = fingerprint_blocking_deliverables(fires);
    let mut issues: Vec<BlockingIssue> = unreadable
        .into_iter()
        .map(|fire| {
            issue(
                project_dir,
                fire,
                "artifact became unreadable before sensor dispatch",
            )
        })
        .collect();
    let mut summary = DispatchSummary {
        deliverables: n_deliverables,
        ..DispatchSummary::default()
    };
    for fire in fires {
        if fire.severity != Severity::Blocking {
            let (verdict, _) = dispatch_fire(workspace, registry, nodes, fire, limits);
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
        let (verdict, detail_path) = dispatch_fire(workspace, registry, nodes, fire, limits);
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
        sensors_off: None,
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

/// One recorded fire (audit rows, detail file), in-process for shipped sensors (D8). A fire its
/// pre-flight refuses is a `script-error: refused: …` non-evaluation, never a pass, as in `gate
/// check`; so is one that `limits` keep from starting, and one they cut short is
/// `script-error: cut-short: …`. Returns the verdict and the project-relative detail path
/// (`None` when none was written).
fn dispatch_fire(
    workspace: &Workspace,
    registry: &LiveRegistry,
    nodes: &[GraphNode],
    fire: &PlannedFire,
    limits: &GateLimits,
) -> (Verdict, Option<String>) {
    let limit = limits.for_one_fire();
    let request = fire_request(workspace, fire);
    let run = prepare_fire_with(workspace, &request, registry, nodes).and_then(|prepared| {
        run_fire(
            workspace,
            &prepared,
            &FireContext::default(),
            limit.as_ref(),
        )
    });
    match run {
        Ok(report) => (
            report.verdict,
            report
                .detail_path
                .map(|path| relative_path_field(workspace.project_dir(), path.as_str())),
        ),
        Err(refusal) => (
            Verdict::ScriptError(ScriptError::Refused(refusal.message)),
            None,
        ),
    }
}

/// The D33 reason a verdict blocks, or `None` for the one verdict that passes: an unnoted
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

#[cfg(test)]
mod tests {
    use super::*;

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
            issue_reason(&Verdict::ScriptError(ScriptError::Exit(2)), false).unwrap(),
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

    fn node_with(sensors: &serde_json::Value) -> GraphNode {
        crate::protocol::graph_reader::tests::node_from_json(&serde_json::json!({
            "slug": "s", "phase": "inception", "produces": ["a", "b", "b-questions"],
            "consumes": [], "sensors_applicable": sensors,
        }))
        .unwrap()
    }

    #[test]
    fn sensors_off_makes_each_blocking_gate_binding_an_issue_and_nothing_else() {
        let node = node_with(&serde_json::json!([
            {"id": "shape", "path": "s.md", "fire_on": "gate", "default_severity": "blocking"},
            {"id": "cover", "path": "c.md", "fire_on": "gate", "default_severity": "advisory"},
            {"id": "linter", "path": "l.md", "fire_on": "write", "default_severity": "blocking"},
        ]));
        let evaluation =
            GateEvaluation::sensors_switched_off(&node, 2, SensorsOffSwitch::StateFile);
        assert_eq!(
            evaluation.issues,
            [BlockingIssue {
                sensor_id: "shape".to_owned(),
                output_path: "s".to_owned(),
                detail_path: None,
                reason: "not evaluated: sensors are off (`- **Sensors**: off` in aidlc-state.md); set `- **Sensors**: on` in aidlc-state.md to run it".to_owned(),
            }]
        );
        assert_eq!(evaluation.sensors_off, Some(SensorsOffSwitch::StateFile));
        assert_eq!(evaluation.summary.deliverables, 2);
        let advisory_only = node_with(&serde_json::json!([
            {"id": "cover", "path": "c.md", "fire_on": "gate", "default_severity": "advisory"},
        ]));
        assert!(
            GateEvaluation::sensors_switched_off(&advisory_only, 2, SensorsOffSwitch::Environment)
                .issues
                .is_empty()
        );
    }

    #[test]
    fn plans_are_sensor_major_and_autonomy_keeps_blocking_bindings() {
        let node = node_with(&serde_json::json!([
            {"id": "shape", "path": "s.md", "fire_on": "gate", "default_severity": "blocking", "matches": "**/*.md"},
            {"id": "upstream-coverage", "path": "u.md", "fire_on": "gate", "default_severity": "advisory"},
            {"id": "linter", "path": "l.md", "fire_on": "write", "default_severity": "blocking"},
        ]));
        let project = Utf8Path::new("/p");
        let deliverables = StageDeliverables {
            files: ["/p/x/b-questions.md", "/p/x/a.md", "/p/x/b.md"]
                .map(camino::Utf8PathBuf::from)
                .to_vec(),
            ..StageDeliverables::default()
        };
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
}
