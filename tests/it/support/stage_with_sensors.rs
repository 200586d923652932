//! A stage with two deliverables and fake gate or write sensors (shell one-liners), compiled
//! with each sensor's glob written into the graph as given, and the gate commands run on it:
//! the project the gate's and the dispatch's fail-closed tests start from.

use std::time::SystemTime;

use aidlc::runtime::audit::ledger::{AuditBlock, AuditRow, append_row, parse_blocks};
use serde_json::Value;

use super::{GRAPH, Run, TestProject};

pub(crate) const STAGE: &str = "first-stage";
pub(crate) const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
pub(crate) const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";
pub(crate) const CHOICE: &str = "Override blocking sensors";

/// Fails on a file containing FAIL, else passes.
pub(crate) const SHAPE_WORKER: &str = "if grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":1}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
/// Appends to the file it checks, then passes.
pub(crate) const EDITING_WORKER: &str =
    "echo edited >> \"$4\"\necho '{\"pass\":true,\"findings_count\":0}'";
pub(crate) const PASSING_WORKER: &str = "echo '{\"pass\":true,\"findings_count\":0}'";

/// One sensor of the test stage, run as `sh <id>.sh`.
pub(crate) struct Sensor {
    pub(crate) id: &'static str,
    pub(crate) worker: &'static str,
    pub(crate) severity: &'static str,
    pub(crate) fire_on: &'static str,
    pub(crate) matches: &'static str,
}

pub(crate) const fn gate_sensor(
    id: &'static str,
    worker: &'static str,
    severity: &'static str,
    matches: &'static str,
) -> Sensor {
    Sensor {
        id,
        worker,
        severity,
        fire_on: "gate",
        matches,
    }
}

pub(crate) fn write_manifest(project: &TestProject, sensor: &Sensor, matches: &str) {
    project.write(
        &format!(".claude/sensors/aidlc-{}.md", sensor.id),
        &format!(
            "---\nid: {id}\nkind: deterministic\ncommand: sh {id}.sh\ndefault_severity: {severity}\nfire_on: {fire_on}\ndescription: A fake sensor\ncategory: demo\nmatches: \"{matches}\"\n---\n\n# {id}\n",
            id = sensor.id,
            severity = sensor.severity,
            fire_on = sensor.fire_on,
        ),
    );
}

/// Sets each binding's `matches` in the compiled graph to its sensor's glob. `aidlc compile`
/// refuses a blocking gate binding whose glob can never match the stage's outputs
/// (`dead-sensor-binding`), but the reference's compiler writes such a graph, and a manifest
/// edited after the compile leaves one behind: the runtime must refuse the gate on its own.
pub(crate) fn set_graph_globs(project: &TestProject, sensors: &[Sensor]) {
    let mut graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    for node in graph.as_array_mut().unwrap() {
        for entry in node["sensors_applicable"].as_array_mut().unwrap() {
            let sensor = sensors.iter().find(|s| s.id == entry["id"]).unwrap();
            entry["matches"] = Value::from(sensor.matches);
        }
    }
    let text = serde_json::to_string_pretty(&graph).unwrap() + "\n";
    project.write(GRAPH, &text);
}

/// A compiled project whose stage `first-stage` produces `doc-a` and `doc-b` (both on disk,
/// Markdown) and imports `sensors` in order; the intent's current stage is `first-stage`. The
/// manifests and the graph carry each sensor's `matches`, even one the compile would refuse
/// (see [`set_graph_globs`]).
pub(crate) fn stage_project(sensors: &[Sensor]) -> TestProject {
    let project = TestProject::empty();
    for sensor in sensors {
        project.write(
            &format!("{}.sh", sensor.id),
            &format!("#!/bin/sh\n{}\n", sensor.worker),
        );
        write_manifest(&project, sensor, "**");
    }
    let ids: Vec<&str> = sensors.iter().map(|sensor| sensor.id).collect();
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        &format!(".claude/aidlc-common/stages/inception/{STAGE}.md"),
        &format!(
            "---\nslug: {STAGE}\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n  - doc-a\n  - doc-b\nconsumes: []\nrequires_stage: []\nsensors: [{}]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# {STAGE}\n",
            ids.join(", ")
        ),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    for sensor in sensors {
        write_manifest(&project, sensor, sensor.matches);
    }
    set_graph_globs(&project, sensors);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("# State\n\n- **Current Stage**: {STAGE}\n"),
    );
    project.write(&format!("{STAGE_DIR}/doc-a.md"), "# A\n");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\n");
    project
}

/// `aidlc <args>`, killed and failed if it has not finished within [`super::HANG`] (a FIFO
/// opened for reading would block forever).
pub(crate) fn run_bounded(project: &TestProject, args: &[&str]) -> Run {
    project.run_watched(args, &[], None)
}

pub(crate) fn gate_start(project: &TestProject, extra: &[&str]) -> Run {
    let mut args = vec!["engine", "gate", "start", STAGE];
    args.extend(extra);
    run_bounded(project, &args)
}

pub(crate) fn check_json(project: &TestProject, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["gate", "check", "--format", "json", "--quiet"];
    args.extend(extra);
    let run = run_bounded(project, &args);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

pub(crate) fn audit_blocks(project: &TestProject) -> Vec<AuditBlock> {
    let Ok(entries) = std::fs::read_dir(project.path(&format!("{RECORD}/audit"))) else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        blocks.extend(parse_blocks(
            &std::fs::read_to_string(entry.path()).unwrap(),
        ));
    }
    blocks
}

pub(crate) fn gate_rows(project: &TestProject) -> Vec<AuditBlock> {
    audit_blocks(project)
        .into_iter()
        .filter(|block| block.event == "STAGE_AWAITING_APPROVAL")
        .collect()
}

/// The conductor's decision, a human turn with its receipt and the exact answer naming it
/// (docs/decisions.md D34).
pub(crate) fn record_override_receipt(project: &TestProject) {
    let shard = project.audit_shard();
    let (human_turn, receipt) = super::verifiable_human_turn(project, "Override blocking sensors");
    let rows = [
        AuditRow::new(
            "DECISION_RECORDED",
            vec![
                ("Stage", STAGE.to_owned()),
                ("Decision", "Blocking gate sensor failure".to_owned()),
                (
                    "Options",
                    "Fix findings,Override blocking sensors".to_owned(),
                ),
            ],
        ),
        AuditRow::new("HUMAN_TURN", human_turn),
        AuditRow::new(
            "QUESTION_ANSWERED",
            vec![
                ("Stage", STAGE.to_owned()),
                ("Details", CHOICE.to_owned()),
                ("Human Turn Receipt", receipt),
            ],
        ),
    ];
    for row in rows {
        append_row(&project.root, &shard, &row.unwrap(), SystemTime::now()).unwrap();
    }
}
