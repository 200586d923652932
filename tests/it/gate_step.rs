//! `aidlc engine gate start|revise`, the gate's sensor step as the conductor calls it, through
//! the real binary with shell-script workers: the reference's t311 scenarios (fires per
//! deliverable, refusal, the override receipt, escapes, moved bytes), D4 non-evaluations,
//! Construction autonomy, and the failed-check notices (D33–D36, D6, D9).

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};

use aidlc::runtime::audit::ledger::{AuditBlock, AuditRow, append_row, parse_blocks};
use serde_json::Value;

use crate::support::scenario_project::{
    self as scenario, DOC_A, DOC_B, EDITOR, OVERRIDE_CHOICE, PASS, SHAPE,
};
use crate::support::{GRAPH, Run, SHARD_HEADER, TestProject, audit_block, parse_ledger_text};

const STAGE: &str = "first-stage";
const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";
const CHOICE: &str = "Override blocking sensors";

/// Fails (2 findings) on a file containing FAIL, exits 127 on one containing N/A, else passes.
const SHAPE_WORKER: &str = "file=\"$4\"\nif grep -q FAIL \"$file\"; then echo '{\"pass\":false,\"findings_count\":2}'; elif grep -q N/A \"$file\"; then exit 127; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
/// Fails while `cover-fail` exists, exits 127 while `cover-na` exists, else passes.
const COVER_WORKER: &str = "if [ -f cover-fail ]; then echo '{\"pass\":false,\"findings_count\":2}'; elif [ -f cover-na ]; then exit 127; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
/// Appends to the file it checks, then passes.
const EDITING_WORKER: &str = "echo edited >> \"$4\"\necho '{\"pass\":true,\"findings_count\":0}'";

/// One gate sensor of the test stage: its id, its worker's body and its severity.
struct GateSensor {
    id: &'static str,
    worker: &'static str,
    severity: &'static str,
}

const fn sensor(id: &'static str, worker: &'static str, severity: &'static str) -> GateSensor {
    GateSensor {
        id,
        worker,
        severity,
    }
}

/// A compiled project whose stage `first-stage` produces `doc-a` and `doc-b` (both on disk) and
/// imports `sensors` in order, each a gate sensor run as `sh <id>.sh`; the intent's state holds
/// `state_lines` too.
fn gate_step_project(sensors: &[GateSensor], state_lines: &str) -> TestProject {
    let project = TestProject::empty();
    for gate_sensor in sensors {
        project.write(
            &format!("{}.sh", gate_sensor.id),
            &format!("#!/bin/sh\n{}\n", gate_sensor.worker),
        );
        project.write(
            &format!(".claude/sensors/aidlc-{}.md", gate_sensor.id),
            &format!(
                "---\nid: {id}\nkind: deterministic\ncommand: sh {id}.sh\ndefault_severity: {severity}\nfire_on: gate\ndescription: A fake gate sensor\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {id}\n",
                id = gate_sensor.id,
                severity = gate_sensor.severity
            ),
        );
    }
    let ids: Vec<&str> = sensors.iter().map(|gate_sensor| gate_sensor.id).collect();
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
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("# State\n\n- **Current Stage**: {STAGE}\n{state_lines}"),
    );
    project.write(&format!("{STAGE_DIR}/doc-a.md"), "# A\n");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\n");
    project
}

fn blocking_shape() -> TestProject {
    gate_step_project(&[sensor("shape", SHAPE_WORKER, "blocking")], "")
}

fn gate(project: &TestProject, args: &[&str]) -> Run {
    let mut all = vec!["engine", "gate"];
    all.extend(args);
    project.run(&all)
}

fn start_with_override(project: &TestProject) -> Run {
    gate(
        project,
        &[
            "start",
            STAGE,
            "--override-blocking-sensors",
            "--user-input",
            CHOICE,
        ],
    )
}

fn reply(run: &Run) -> Value {
    assert_eq!(run.status, 0, "gate step failed: {}", run.stderr);
    let line = run.stdout.trim();
    assert_eq!(line.lines().count(), 1, "one JSON reply: {line}");
    serde_json::from_str(line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"))
}

fn audit_blocks(project: &TestProject) -> Vec<AuditBlock> {
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

fn events<'b>(blocks: &'b [AuditBlock], event: &str) -> Vec<&'b AuditBlock> {
    blocks.iter().filter(|block| block.event == event).collect()
}

fn gate_rows(project: &TestProject) -> Vec<AuditBlock> {
    audit_blocks(project)
        .into_iter()
        .filter(|block| block.event == "STAGE_AWAITING_APPROVAL")
        .collect()
}

fn fired_sensor_ids(project: &TestProject) -> Vec<String> {
    events(&audit_blocks(project), "SENSOR_FIRED")
        .iter()
        .map(|block| block.field("Sensor ID").unwrap_or_default().to_owned())
        .collect()
}

/// The rows the conductor and the engine's hooks write before an override: the decision
/// offering both options, a human turn with its receipt (docs/decisions.md D34), and the exact
/// answer naming it.
fn record_override_receipt(project: &TestProject) {
    let shard = project.audit_shard();
    let (human_turn, receipt) =
        crate::support::verifiable_human_turn(project, "Override blocking sensors");
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

#[test]
fn two_deliverables_fire_twice_and_the_gate_opens() {
    let project = blocking_shape();
    let run = gate(&project, &["start", STAGE, "--artifacts", "doc-a"]);
    let reply = reply(&run);
    assert_eq!(reply["slug"], STAGE);
    assert_eq!(reply["new_state"], "awaiting-approval");
    assert!(
        reply["timestamp"].as_str().unwrap().ends_with('Z'),
        "{reply}"
    );
    assert!(reply.get("narration").is_none(), "{reply}");
    assert!(
        run.stderr
            .contains("2 fires on 2 deliverables (2 blocking, 0 advisory)"),
        "{}",
        run.stderr
    );
    assert_eq!(fired_sensor_ids(&project), ["shape", "shape"]);
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 1);
    let keys: Vec<&str> = rows[0].fields.iter().map(|(key, _)| key.as_str()).collect();
    assert_eq!(keys, ["Stage", "Artifacts", "Sensor State"]);
    assert_eq!(rows[0].field("Stage"), Some(STAGE));
    assert_eq!(rows[0].field("Artifacts"), Some("doc-a"));
    assert_eq!(
        rows[0].field("Sensor State").unwrap(),
        format!("shape@{STAGE_DIR}/doc-a.md=passed; shape@{STAGE_DIR}/doc-b.md=passed")
    );
}

#[test]
fn a_blocking_failure_refuses_and_names_the_override_steps() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let run = gate(&project, &["start", STAGE]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let failed = events(&audit_blocks(&project), "SENSOR_FAILED")
        .first()
        .and_then(|block| block.field("Detail path"))
        .expect("a SENSOR_FAILED row")
        .to_owned();
    assert!(project.exists(&failed), "{failed}");
    for expected in [
        "Blocking gate sensor evaluation did not pass for \"first-stage\".".to_owned(),
        "Sensors: shape.".to_owned(),
        format!("Detail paths: {failed}."),
        format!("Reasons: shape@{STAGE_DIR}/doc-b.md: reported findings."),
        "aidlc engine log decision --stage first-stage --decision \"Blocking gate sensor failure\" --options \"Fix findings,Override blocking sensors\"".to_owned(),
        "record it with aidlc engine log answer --stage first-stage --details \"Override blocking sensors\".".to_owned(),
        "Then retry: aidlc engine gate start first-stage --override-blocking-sensors --user-input \"Override blocking sensors\". Autonomous mode cannot override.".to_owned(),
    ] {
        assert!(run.stderr.contains(&expected), "missing {expected:?} in {}", run.stderr);
    }
    assert!(
        gate_rows(&project).is_empty(),
        "a refused gate writes no gate row"
    );
}

#[test]
fn on_an_install_with_the_reference_tools_the_refusal_names_them() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    project.write(".claude/tools/aidlc-log.ts", "// the reference's logger\n");
    let run = gate(&project, &["start", STAGE]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("first run bun .claude/tools/aidlc-log.ts decision --stage first-stage"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("record it with bun .claude/tools/aidlc-log.ts answer. Then retry"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_override_needs_the_exact_choice_and_a_receipt() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let bare = gate(&project, &["start", STAGE, "--override-blocking-sensors"]);
    assert_eq!(bare.status, 1);
    assert!(
        bare.stderr.contains(
            "--user-input must be the exact offered choice \"Override blocking sensors\"."
        ),
        "{}",
        bare.stderr
    );
    let paraphrased = gate(
        &project,
        &[
            "start",
            STAGE,
            "--override-blocking-sensors",
            "--user-input",
            "override",
        ],
    );
    assert_eq!(paraphrased.status, 1);
    let no_receipt = start_with_override(&project);
    assert_eq!(no_receipt.status, 1);
    assert!(
        no_receipt.stderr.contains(
            "Refusing blocking sensor override for \"first-stage\": no fresh authorization receipt proves that \"Override blocking sensors\" was offered and selected after a HUMAN_TURN."
        ),
        "{}",
        no_receipt.stderr
    );
    assert!(gate_rows(&project).is_empty());
}

#[test]
fn a_receipt_opens_the_gate_once_and_a_revalidation_spends_the_next() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    assert_eq!(gate(&project, &["start", STAGE]).status, 1);
    record_override_receipt(&project);
    let opened = reply(&start_with_override(&project));
    assert!(opened["timestamp"].is_string(), "{opened}");
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let keys: Vec<&str> = row.fields.iter().map(|(key, _)| key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "Stage",
            "Blocking Sensor Override",
            "Blocking Sensor IDs",
            "Blocking Sensor Detail Paths",
            "Blocking Sensor Reasons",
            "Sensor State"
        ]
    );
    assert_eq!(row.field("Blocking Sensor Override"), Some("true"));
    assert_eq!(row.field("Blocking Sensor IDs"), Some("shape"));
    assert!(
        row.field("Blocking Sensor Detail Paths")
            .unwrap()
            .starts_with(&format!("{RECORD}/.aidlc-engine/sensors/{STAGE}/shape-")),
        "{row:?}"
    );
    assert_eq!(
        row.field("Blocking Sensor Reasons"),
        Some("shape: reported findings")
    );
    assert!(
        row.field("Sensor State")
            .unwrap()
            .contains(&format!("shape@{STAGE_DIR}/doc-b.md=failed(2)")),
        "{row:?}"
    );

    let reused = start_with_override(&project);
    assert_eq!(reused.status, 1, "the receipt was consumed by the gate row");
    assert!(
        reused.stderr.contains("no fresh authorization receipt"),
        "{}",
        reused.stderr
    );

    record_override_receipt(&project);
    let revalidated = reply(&start_with_override(&project));
    assert_eq!(
        revalidated["already_awaiting_approval"], true,
        "{revalidated}"
    );
    assert_eq!(revalidated["revalidated"], true);
    assert!(revalidated.get("timestamp").is_none(), "{revalidated}");
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].field("Revalidated"), Some("true"));
    assert_eq!(rows[1].field("Blocking Sensor Override"), Some("true"));
    assert_eq!(
        start_with_override(&project).status,
        1,
        "the revalidation row spent the second receipt"
    );
    assert_eq!(gate(&project, &["start", STAGE]).status, 1);
    assert_eq!(gate_rows(&project).len(), 2);
}

#[test]
fn rerunning_start_on_an_open_gate_writes_nothing_without_an_override() {
    let project = blocking_shape();
    reply(&gate(&project, &["start", STAGE]));
    let again = reply(&gate(&project, &["start", STAGE]));
    assert_eq!(again["already_awaiting_approval"], true, "{again}");
    assert_eq!(again["revalidated"], true);
    assert_eq!(gate_rows(&project).len(), 1);
    let revised = reply(&gate(&project, &["revise", STAGE]));
    assert!(revised["timestamp"].is_string(), "{revised}");
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[1].field("Details"),
        Some("Re-entering gate after revision")
    );
}

#[test]
fn a_symlinked_deliverable_pointing_outside_is_refused_before_any_fire() {
    let project = blocking_shape();
    project.write("outside.md", "# outside\n");
    project.remove(&format!("{STAGE_DIR}/doc-a.md"));
    std::os::unix::fs::symlink(
        project.path("outside.md"),
        project.path(&format!("{STAGE_DIR}/doc-a.md")),
    )
    .unwrap();
    let run = gate(&project, &["start", STAGE]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("Refusing gate sensor artifact"),
        "{}",
        run.stderr
    );
    assert!(
        !project.exists(&format!("{RECORD}/audit")),
        "no SENSOR_FIRED was written"
    );
}

#[test]
fn a_worker_that_edits_the_file_refuses_the_gate() {
    let project = gate_step_project(&[sensor("editor", EDITING_WORKER, "blocking")], "");
    let run = gate(&project, &["start", STAGE]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "editor@{STAGE_DIR}/doc-a.md: artifact changed during sensor evaluation"
        )),
        "{}",
        run.stderr
    );
    assert!(gate_rows(&project).is_empty());
}

#[test]
fn bytes_moved_by_another_fire_refuse_the_gate() {
    let after = gate_step_project(
        &[
            sensor("shape", SHAPE_WORKER, "blocking"),
            sensor("toucher", EDITING_WORKER, "advisory"),
        ],
        "",
    );
    let run = gate(&after, &["start", STAGE]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "Refusing to open the gate for \"first-stage\": blocking sensor artifact \"{STAGE_DIR}/doc-a.md\" changed after evaluation. Retry so every blocking sensor checks the bytes that enter the gate."
        )),
        "{}",
        run.stderr
    );
    assert!(gate_rows(&after).is_empty());

    let before = gate_step_project(
        &[
            sensor("toucher", EDITING_WORKER, "advisory"),
            sensor("shape", SHAPE_WORKER, "blocking"),
        ],
        "",
    );
    let run = gate(&before, &["start", STAGE]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("shape@aidlc/spaces/default/intents/261130-demo/inception/first-stage/doc-a.md: artifact changed before sensor dispatch"),
        "{}",
        run.stderr
    );
    assert_eq!(
        fired_sensor_ids(&before),
        ["toucher", "toucher"],
        "a blocking fire on moved bytes is not dispatched"
    );
}

#[test]
fn a_noted_pass_on_a_blocking_sensor_refuses_the_gate() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-a.md"), "# A\nN/A\n");
    let run = gate(&project, &["start", STAGE]);
    assert_eq!(
        run.status, 1,
        "a blocking sensor that evaluated nothing is not a pass: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("shape@{STAGE_DIR}/doc-a.md: tool-unavailable")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Detail paths: none."), "{}", run.stderr);
}

#[test]
fn autonomy_dispatches_only_blocking_sensors_and_refuses_overrides() {
    let project = gate_step_project(
        &[
            sensor("shape", SHAPE_WORKER, "blocking"),
            sensor("cover", COVER_WORKER, "advisory"),
        ],
        "- **Construction Autonomy Mode**: autonomous\n",
    );
    reply(&gate(&project, &["start", STAGE]));
    assert_eq!(fired_sensor_ids(&project), ["shape", "shape"]);

    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    record_override_receipt(&project);
    let run = gate(
        &project,
        &[
            "revise",
            STAGE,
            "--override-blocking-sensors",
            "--user-input",
            CHOICE,
        ],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "Refusing blocking sensor override for \"first-stage\": Construction Autonomy Mode is autonomous. Unattended runs must halt on blocking sensor findings or unavailable evaluations."
        ),
        "{}",
        run.stderr
    );
    assert_eq!(gate_rows(&project).len(), 1);
}

#[test]
fn failed_check_notices_follow_the_latest_evaluation() {
    let project = gate_step_project(
        &[
            sensor("shape", SHAPE_WORKER, "blocking"),
            sensor("cover", COVER_WORKER, "advisory"),
        ],
        "",
    );
    project.write("cover-fail", "");
    let opened = reply(&gate(&project, &["start", STAGE]));
    let narration = opened["narration"].as_str().expect("narration").to_owned();
    let lines: Vec<&str> = narration.lines().collect();
    assert_eq!(lines.len(), 2, "{narration}");
    assert!(
        lines[0].starts_with(&format!(
            "The cover check reports 2 findings in doc-a.md (details: {RECORD}/.aidlc-engine/sensors/{STAGE}/cover-"
        )),
        "{narration}"
    );
    assert!(lines[1].contains("in doc-b.md"), "{narration}");
    let state = gate_rows(&project)[0]
        .field("Sensor State")
        .unwrap()
        .to_owned();
    assert!(
        state.contains(&format!("cover@{STAGE_DIR}/doc-a.md=failed(2)")),
        "{state}"
    );

    project.remove("cover-fail");
    project.write("cover-na", "");
    let run = gate(&project, &["revise", STAGE]);
    assert!(
        run.stderr.contains("2 advisory fires evaluated nothing"),
        "{}",
        run.stderr
    );
    let noted = reply(&run);
    assert_eq!(
        noted["narration"].as_str(),
        Some(narration.as_str()),
        "a noted pass evaluated nothing and clears nothing"
    );
    let state = gate_rows(&project)[1]
        .field("Sensor State")
        .unwrap()
        .to_owned();
    assert!(
        state.contains(&format!("cover@{STAGE_DIR}/doc-a.md=tool-unavailable")),
        "{state}"
    );

    project.remove("cover-na");
    let passed = reply(&gate(&project, &["revise", STAGE]));
    assert!(passed.get("narration").is_none(), "{passed}");
}

const SENSORS_OFF_IN_STATE: &str = "- **Sensors**: off (set by you)\n";

/// A blocking sensor that would fail `doc-b`, switched off by the environment or the state:
/// refused (exit 1) with the switch named, nothing fired, no gate row.
fn assert_switched_off_blocking_gate_is_refused(project: &TestProject, run: &Run, switch: &str) {
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "shape@{STAGE}: not evaluated: sensors are off ({switch})"
        )),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(fired_sensor_ids(project).is_empty());
    assert!(gate_rows(project).is_empty(), "no gate row");
}

#[test]
fn sensors_off_in_the_environment_refuses_a_gate_a_blocking_sensor_guards() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    for entry in ["start", "revise"] {
        let run = project.run_with_env(
            &["engine", "gate", entry, STAGE],
            &[("AIDLC_DISABLE_SENSORS", "1")],
        );
        assert_switched_off_blocking_gate_is_refused(&project, &run, "AIDLC_DISABLE_SENSORS=1");
    }
}

#[test]
fn sensors_off_in_the_state_refuses_a_gate_a_blocking_sensor_guards() {
    let project = gate_step_project(
        &[sensor("shape", SHAPE_WORKER, "blocking")],
        SENSORS_OFF_IN_STATE,
    );
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let run = gate(&project, &["start", STAGE]);
    assert_switched_off_blocking_gate_is_refused(
        &project,
        &run,
        "`- **Sensors**: off` in aidlc-state.md",
    );
}

#[test]
fn a_gate_switched_off_opens_with_the_human_override_and_the_row_names_the_switch() {
    let project = blocking_shape();
    record_override_receipt(&project);
    let run = project.run_with_env(
        &[
            "engine",
            "gate",
            "start",
            STAGE,
            "--override-blocking-sensors",
            "--user-input",
            CHOICE,
        ],
        &[("AIDLC_DISABLE_SENSORS", "1")],
    );
    reply(&run);
    assert!(fired_sensor_ids(&project).is_empty());
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].field("Blocking Sensor Override"), Some("true"));
    assert_eq!(rows[0].field("Blocking Sensor IDs"), Some("shape"));
    assert_eq!(rows[0].field("Sensors Off"), Some("environment"));
}

#[test]
fn with_sensors_off_an_advisory_only_gate_opens_and_its_row_says_so() {
    let project = gate_step_project(
        &[sensor("shape", SHAPE_WORKER, "advisory")],
        SENSORS_OFF_IN_STATE,
    );
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let run = gate(&project, &["start", STAGE]);
    let answer = reply(&run);
    assert_eq!(
        answer["narration"].as_str(),
        Some(
            "Sensors are off (`- **Sensors**: off` in aidlc-state.md): no gate sensor ran on this stage's outputs."
        ),
        "{answer}"
    );
    assert!(fired_sensor_ids(&project).is_empty());
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].field("Sensors Off"), Some("state"));
    assert_eq!(rows[0].field("Blocking Sensor Override"), None);

    let by_environment = gate_step_project(&[sensor("shape", SHAPE_WORKER, "advisory")], "");
    let run = by_environment.run_with_env(
        &["engine", "gate", "start", STAGE],
        &[("AIDLC_DISABLE_SENSORS", "1")],
    );
    reply(&run);
    assert_eq!(
        gate_rows(&by_environment)[0].field("Sensors Off"),
        Some("environment")
    );
}

/// The compiled graph with every binding's `default_severity` set to `severity`, written over
/// the graph without a recompile (as an agent's Write of `stage-graph.json` would).
fn rewrite_graph_severity(project: &TestProject, severity: &str) {
    let mut graph: Value = serde_json::from_str(&project.read(crate::support::GRAPH)).unwrap();
    for node in graph.as_array_mut().unwrap() {
        for entry in node["sensors_applicable"].as_array_mut().unwrap() {
            entry["default_severity"] = Value::from(severity);
        }
    }
    project.write(
        crate::support::GRAPH,
        &serde_json::to_string_pretty(&graph).unwrap(),
    );
}

#[test]
fn a_graph_edited_to_make_a_blocking_binding_advisory_refuses_the_gate() {
    let project = blocking_shape();
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    rewrite_graph_severity(&project, "advisory");
    for entry in ["start", "revise"] {
        let run = gate(&project, &[entry, STAGE]);
        assert_eq!(run.status, 2, "{entry}: {}", run.stderr);
        for expected in [
            "error: the stage graph .claude/tools/data/stage-graph.json is stale: its sources compile to another graph (1 stage differs)",
            "  sensor shape: default_severity advisory → blocking (stage first-stage)",
            "  help: run `aidlc compile` to rebuild it from its sources, then run the gate step again (nothing was written; a stale graph exits 2)",
        ] {
            assert!(
                run.stderr.contains(expected),
                "{entry}: {expected}\n{}",
                run.stderr
            );
        }
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    assert!(fired_sensor_ids(&project).is_empty());
    assert!(gate_rows(&project).is_empty());
    assert_eq!(project.compile().status, 0);
    assert_eq!(
        gate(&project, &["start", STAGE]).status,
        1,
        "the compiled graph blocks"
    );
}

#[test]
fn usage_and_environment_errors_exit_2() {
    let project = blocking_shape();
    let unknown = gate(&project, &["start", "no-such-stage"]);
    assert_eq!(unknown.status, 2);
    assert!(
        unknown
            .stderr
            .contains("unknown stage slug: \"no-such-stage\""),
        "{}",
        unknown.stderr
    );
    let bad_unit = gate(&project, &["start", STAGE, "--unit", "../x"]);
    assert_eq!(bad_unit.status, 2, "{}", bad_unit.stderr);
    project.remove("aidlc");
    let no_intent = gate(&project, &["start", STAGE]);
    assert_eq!(no_intent.status, 2);
    assert!(
        no_intent.stderr.contains("no intent record"),
        "{}",
        no_intent.stderr
    );
}

// --- Explicit artifacts: resolved canonically, inside the produce folders, fired on -------------

/// A compiled project whose `first-stage` produces `first-stage-doc` (on disk, passing) and
/// imports one blocking gate sensor that fails any Markdown file holding `FAIL`; the intent's
/// current stage is `first-stage`, and `extra-notes.md` (failing, not a declared output) lies
/// in the stage's folder.
fn blocking_gate_project() -> TestProject {
    let project = TestProject::minimal();
    project.write(
        "shape.sh",
        "#!/bin/sh\nif grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":1}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi\n",
    );
    project.write(
        ".claude/sensors/aidlc-demo-check.md",
        &crate::support::manifest("demo-check", "fire_on: gate\n")
            .replace("default_severity: advisory", "default_severity: blocking")
            .replace(
                "command: aidlc engine sensor-demo-check",
                "command: sh shape.sh",
            ),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(&format!("{STAGE_DIR}/first-stage-doc.md"), "# Doc\n");
    project.write(&format!("{STAGE_DIR}/extra-notes.md"), "FAIL\n");
    project.write("README.md", "# Readme\n");
    project.write("docs/outside.md", "# Outside\n");
    project
}

fn gate_start_with_artifacts(project: &TestProject, artifacts: &str) -> Run {
    project.run_watched(
        &[
            "engine",
            "gate",
            "start",
            "first-stage",
            "--artifacts",
            artifacts,
        ],
        &[],
        None,
    )
}

#[test]
fn gate_start_refuses_explicit_artifacts_outside_the_produce_folders_before_any_row() {
    let project = blocking_gate_project();
    let inside_but_absolute = project.path(&format!("{STAGE_DIR}/first-stage-doc.md"));
    for (artifacts, why) in [
        (
            inside_but_absolute.as_str(),
            "an absolute path is not accepted",
        ),
        (
            "../first-stage/first-stage-doc.md",
            "a `..` component is not accepted",
        ),
        (
            "missing.md",
            "no such file in the stage's produce directories",
        ),
        (
            "README.md",
            "no such file in the stage's produce directories",
        ),
        (
            "docs/outside.md",
            "the canonical path is outside the stage's resolved produce directories",
        ),
        (
            "first-stage-doc.md\n**Event**: GATE_APPROVED",
            "a line break or other control character",
        ),
    ] {
        let run = gate_start_with_artifacts(&project, artifacts);
        assert_eq!(run.status, 2, "{artifacts:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("Refusing gate sensor artifact") && run.stderr.contains(why),
            "{artifacts:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{artifacts:?}: {}", run.stdout);
        assert!(
            !project.exists(&format!("{RECORD}/audit")),
            "{artifacts:?}: no audit row before the refusal"
        );
    }
}

#[test]
fn an_explicit_artifact_that_fails_a_blocking_sensor_refuses_the_gate() {
    let project = blocking_gate_project();
    let run = gate_start_with_artifacts(&project, "extra-notes");
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("extra-notes.md"), "{}", run.stderr);
    let fired: Vec<String> = crate::support::ledger_blocks(&project, RECORD)
        .iter()
        .filter(|block| block.event() == "SENSOR_FIRED")
        .filter_map(|block| block.field("Output path").map(str::to_owned))
        .collect();
    assert_eq!(
        fired,
        [
            format!("{STAGE_DIR}/first-stage-doc.md"),
            format!("{STAGE_DIR}/extra-notes.md")
        ],
        "the explicit artifact is fired on with the discovered deliverable"
    );
    assert!(
        !crate::support::ledger_blocks(&project, RECORD)
            .iter()
            .any(|block| block.event() == "STAGE_AWAITING_APPROVAL"),
        "the gate stays closed"
    );
}

// --- Failure scenario S11 (docs/failure-modes.md): staleness ------------------------------------

/// S11: a pass recorded before the artifact was edited, or a re-fire still running when the
/// gate is asked, never stands in for a verdict on the bytes that enter the gate: both gates
/// fire afresh on the current bytes. Bytes that change between evaluation and the gate row
/// refuse the gate (and are not evaluated in `gate check`), until a retry evaluates bytes that
/// held still.
///
/// Also covered by `gate_step::a_worker_that_edits_the_file_refuses_the_gate`,
/// `gate_step::bytes_moved_by_another_fire_refuse_the_gate` and
/// `gate::a_blocking_worker_that_edits_its_file_is_not_evaluated_in_gate_check`.
#[test]
fn scenario_11_the_gate_judges_a_fresh_verdict_on_the_bytes_that_enter_it() {
    let project = scenario::scenario_project(&[scenario::Sensor::gate("shape", SHAPE, "blocking")]);
    let earlier = scenario::verdict_line(&scenario::fire(&project, "shape", DOC_A));
    assert_eq!(earlier["result"], "passed");
    project.write(DOC_A, "# A\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let start = scenario::gate_start(&project, &[]);
    assert_eq!(
        start.status, 1,
        "the earlier pass stood in: {}",
        start.stderr
    );
    assert!(
        start
            .stderr
            .contains(&format!("shape@{DOC_A}: reported findings")),
        "{}",
        start.stderr
    );
    let (check, _) = scenario::gate_check_json(&project, &["--no-record"]);
    assert_eq!(check.status, 1, "{}", check.stderr);

    // A re-fire that wrote SENSOR_FIRED and is still running when the gate opens.
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    scenario::append_to_the_only_shard(
        &project,
        &audit_block(
            "Sensor Fired",
            "SENSOR_FIRED",
            &scenario::iso_timestamp(std::time::SystemTime::now()),
            &[
                ("Fire id", "0badf1re"),
                ("Sensor ID", "shape"),
                ("Stage slug", STAGE),
                ("Output path", DOC_B),
            ],
        ),
    );
    let fired_before = scenario::events(&scenario::blocks(&project), "SENSOR_FIRED").len();
    let opened = scenario::gate_start(&project, &[]);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    assert_eq!(
        scenario::events(&scenario::blocks(&project), "SENSOR_FIRED").len(),
        fired_before + 2,
        "the gate fired on both deliverables itself"
    );
    assert_eq!(
        scenario::gate_rows(&project)[0].field("Sensor State"),
        Some(format!("shape@{DOC_A}=passed; shape@{DOC_B}=passed").as_str())
    );

    // Bytes that move during or after evaluation.
    let moving =
        scenario::scenario_project(&[scenario::Sensor::gate("editor", EDITOR, "blocking")]);
    let start = scenario::gate_start(&moving, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains(&format!(
            "editor@{DOC_A}: artifact changed during sensor evaluation"
        )),
        "{}",
        start.stderr
    );
    let (check, report) = scenario::gate_check_json(&moving, &["--no-record"]);
    assert_eq!(check.status, 3, "{}", check.stderr);
    assert!(
        report["fires"]
            .as_array()
            .unwrap()
            .iter()
            .all(|fire| fire["note"] == "artifact-changed"),
        "{report}"
    );
    let after = scenario::scenario_project(&[
        scenario::Sensor::gate("shape", SHAPE, "blocking"),
        scenario::Sensor::gate("toucher", EDITOR, "advisory"),
    ]);
    let start = scenario::gate_start(&after, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains(&format!(
            "blocking sensor artifact \"{DOC_A}\" changed after evaluation"
        )),
        "{}",
        start.stderr
    );
    assert!(scenario::gate_rows(&after).is_empty());
    // Once the bytes hold still, the retry evaluates them and the gate opens.
    after.write("workers/toucher.sh", &format!("#!/bin/sh\n{PASS}\n"));
    let retried = scenario::gate_start(&after, &[]);
    assert_eq!(retried.status, 0, "{}", retried.stderr);
    assert_eq!(scenario::gate_rows(&after).len(), 1);
}

// --- Failure scenario S12 (docs/failure-modes.md): never fired, and the wrong stage -------------

/// S12: a blocking sensor with no fire for the stage has not passed (the gate refuses with a
/// reason naming the sensor, its glob and the declared outputs; `gate check` exits 3), and a
/// pass recorded under another stage slug does not count for this stage, neither at the gate
/// nor in the failed-check notices.
///
/// Also covered by `gate::a_blocking_gate_sensor_whose_glob_matches_no_deliverable_refuses_the_gate`,
/// `gate::a_deleted_deliverable_leaves_its_blocking_sensor_unfired`,
/// `gate::gate_check_reports_a_blocking_binding_that_never_fired_the_same_way_in_every_format`
/// and `gate::a_stage_the_workflow_has_not_reached_is_not_counted_as_unfired`.
#[test]
fn scenario_12_no_fire_for_the_stage_is_not_a_pass_and_another_stage_s_pass_does_not_count() {
    // Passes whatever the file says when fired for `second-stage`.
    const STAGE_AWARE: &str = "if [ \"$2\" = second-stage ]; then echo '{\"pass\":true,\"findings_count\":0}'; elif grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":2}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
    let project = scenario::scenario_project(&[
        scenario::Sensor::gate("shape", STAGE_AWARE, "blocking"),
        scenario::Sensor::write("cover", SHAPE, "**/*.md"),
    ]);

    // No deliverable on disk: the blocking binding never fired.
    project.remove(DOC_A);
    project.remove(DOC_B);
    let never = "shape@first-stage: blocking sensor never fired: none of the stage's declared outputs is on disk; glob \"**/*.md\"; declared outputs: doc-a.md, doc-b.md";
    let start = scenario::gate_start(&project, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(start.stderr.contains(never), "{}", start.stderr);
    let (check, report) = scenario::gate_check_json(&project, &["--no-record"]);
    assert_eq!(check.status, 3, "{}", check.stderr);
    assert_eq!(report["unfired_bindings"][0]["sensor_id"], "shape");
    assert_eq!(report["counts"]["never_fired"], 1);

    // A pass under another stage slug, on a deliverable that fails for this stage. `fire`
    // refuses this stage's file under another stage's slug (scenario 14, Z4); the reference's
    // dispatcher does not, so such a row can be in the ledger: it is written as it writes it.
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let refused = scenario::fire_on_stage(&project, "shape", "second-stage", DOC_B);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("is not a declared output of stage \"second-stage\""),
        "{}",
        refused.stderr
    );
    scenario::record_reference_fire(&project, "shape", "second-stage", DOC_B, None);
    let start = scenario::gate_start(&project, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start
            .stderr
            .contains(&format!("shape@{DOC_B}: reported findings")),
        "{}",
        start.stderr
    );

    // A failure recorded under another stage is not this stage's notice; its own is.
    project.write(DOC_B, "# B\n\n## Scope\n\n## Risks\n");
    project.write(DOC_A, "# A\n\n## Scope\n\nFAIL\n\n## Risks\n");
    scenario::record_reference_fire(&project, "cover", "second-stage", DOC_A, Some(2));
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    let opened = scenario::gate_start(&project, &[]);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    let reply: Value = serde_json::from_str(opened.stdout.trim()).unwrap();
    assert!(reply.get("narration").is_none(), "{reply}");
    project.write(DOC_A, "# A\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let own = scenario::verdict_line(&scenario::fire(&project, "cover", DOC_A));
    assert_eq!(own["result"], "failed");
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    let revised = scenario::run(&project, &["engine", "gate", "revise", STAGE]);
    assert_eq!(revised.status, 0, "{}", revised.stderr);
    let reply: Value = serde_json::from_str(revised.stdout.trim()).unwrap();
    let narration = reply["narration"].as_str().unwrap_or_default();
    assert!(
        narration.starts_with("The cover check reports 2 findings in doc-a.md"),
        "{reply}"
    );
}

// --- Failure scenario S13 (docs/failure-modes.md): every completion path and the override -------

/// S13: `gate start` and `gate revise` run the same blocking check; an override needs the
/// exact offered choice and a fresh receipt (the decision, a human turn, the answer) recorded in
/// the audit, is spent by the gate row it opens, and is refused under Construction autonomy; the
/// gate row records the override, the sensors, their reasons and detail paths.
///
/// Not applicable here: approve, advance, finalize, complete-workflow and the approve-time
/// recovered re-entry are the conductor's transitions, which stay in the reference (D10); this
/// engine owns the gate's sensor step they call (`engine gate start|revise`).
///
/// Also covered by `gate_step::a_blocking_failure_refuses_and_names_the_override_steps`,
/// `gate_step::an_override_needs_the_exact_choice_and_a_receipt`,
/// `gate_step::a_receipt_opens_the_gate_once_and_a_revalidation_spends_the_next` and
/// `gate_step::autonomy_dispatches_only_blocking_sensors_and_refuses_overrides`.
#[test]
fn scenario_13_start_and_revise_run_one_blocking_check_and_an_override_needs_a_human_receipt() {
    let project = scenario::scenario_project(&[scenario::Sensor::gate("shape", SHAPE, "blocking")]);
    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let reasons = format!("Reasons: shape@{DOC_B}: reported findings.");
    for step in ["start", "revise"] {
        let refused = scenario::run(&project, &["engine", "gate", step, STAGE]);
        assert_eq!(refused.status, 1, "{step}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(&reasons),
            "{step}: {}",
            refused.stderr
        );
        assert!(refused.stdout.is_empty(), "{step}: {}", refused.stdout);
    }
    let bare = scenario::gate_start(&project, &["--override-blocking-sensors"]);
    assert_eq!(bare.status, 1);
    assert!(
        bare.stderr.contains(
            "--user-input must be the exact offered choice \"Override blocking sensors\"."
        ),
        "{}",
        bare.stderr
    );
    let paraphrased = scenario::gate_start(
        &project,
        &["--override-blocking-sensors", "--user-input", "override"],
    );
    assert_eq!(paraphrased.status, 1, "{}", paraphrased.stderr);
    let with_override = [
        "--override-blocking-sensors",
        "--user-input",
        OVERRIDE_CHOICE,
    ];
    let no_receipt = scenario::gate_start(&project, &with_override);
    assert_eq!(no_receipt.status, 1);
    assert!(
        no_receipt.stderr.contains("no fresh authorization receipt"),
        "{}",
        no_receipt.stderr
    );
    assert!(scenario::gate_rows(&project).is_empty());

    scenario::append_to_the_only_shard(
        &project,
        &scenario::override_receipt(
            &project,
            &scenario::iso_timestamp(std::time::SystemTime::now()),
        ),
    );
    let opened = scenario::gate_start(&project, &with_override);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    let rows = scenario::gate_rows(&project);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].field("Blocking Sensor Override"), Some("true"));
    assert_eq!(rows[0].field("Blocking Sensor IDs"), Some("shape"));
    assert_eq!(
        rows[0].field("Blocking Sensor Reasons"),
        Some("shape: reported findings")
    );
    let detail = rows[0].field("Blocking Sensor Detail Paths").unwrap();
    assert!(
        detail.starts_with(&format!("{RECORD}/.aidlc-engine/sensors/{STAGE}/shape-"))
            && project.exists(detail),
        "{detail}"
    );
    let reused = scenario::run(
        &project,
        &[
            "engine",
            "gate",
            "revise",
            STAGE,
            "--override-blocking-sensors",
            "--user-input",
            OVERRIDE_CHOICE,
        ],
    );
    assert_eq!(reused.status, 1, "the receipt was spent: {}", reused.stderr);

    // Under Construction autonomy nobody can override, receipt or not.
    scenario::write_state(
        &project,
        STAGE,
        "- **Construction Autonomy Mode**: autonomous\n",
    );
    scenario::append_to_the_only_shard(
        &project,
        &scenario::override_receipt(
            &project,
            &scenario::iso_timestamp(std::time::SystemTime::now()),
        ),
    );
    let autonomous = scenario::run(
        &project,
        &[
            "engine",
            "gate",
            "revise",
            STAGE,
            "--override-blocking-sensors",
            "--user-input",
            OVERRIDE_CHOICE,
        ],
    );
    assert_eq!(autonomous.status, 1, "{}", autonomous.stderr);
    assert!(
        autonomous
            .stderr
            .contains("Construction Autonomy Mode is autonomous"),
        "{}",
        autonomous.stderr
    );
    assert_eq!(scenario::gate_rows(&project).len(), 1);
}

// --- Failure scenario S16 (docs/failure-modes.md): scale ----------------------------------------

/// S16, for correctness at scale (the timings are printed, never asserted; the benches
/// measure them): 1,000 stages compile with no diagnostic into a graph of 1,000 nodes;
/// a deliverable of several MB is checked at the gate; 119 fires on one path all pair; and a
/// ledger of 50,000 sensor rows (plus those fires) is read by `gate start`, which finds the
/// newest failure of each check on this stage's outputs among them, ignores another stage's
/// rows, and finds the override receipt written after them.
///
/// "100 plugins add negligible time" is `plugins::a_hundred_plugins_compose_compile_and_go_again`
/// (correctness) and `benches/plugins.rs` (the time, beside the same install without plugins).
#[test]
fn scenario_16_a_thousand_stages_a_large_deliverable_and_a_ledger_of_50000_rows_are_right() {
    // 1,000 stages over the four phases, each requiring the one before it in its phase.
    let big = TestProject::empty();
    scenario::write_agent(&big);
    big.write(
        ".claude/sensors/aidlc-probe.md",
        &scenario::Sensor::write("probe", PASS, "**/*.md").manifest(),
    );
    let phases = ["ideation", "inception", "construction", "operation"];
    for index in 0..1000 {
        let phase = phases[index % 4];
        let position = index / 4;
        let slug = format!("{phase}-stage-{position}");
        let before = format!("{phase}-stage-{}", position.saturating_sub(1));
        let requires: Vec<&str> = if position == 0 { vec![] } else { vec![&before] };
        big.write(
            &format!(".claude/aidlc-common/stages/{phase}/{slug}.md"),
            &scenario::stage_file(
                &slug,
                phase,
                &[&format!("{slug}-doc")],
                &requires,
                &["probe"],
                "[]",
            ),
        );
    }
    let started = Instant::now();
    let compiled = scenario::run(&big, &["compile", "--format", "json"]);
    println!(
        "scenario 16: compiling 1,000 stages took {:?}",
        started.elapsed()
    );
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    assert_eq!(compiled.stdout, "", "no diagnostic");
    let nodes: Vec<Value> = serde_json::from_str(&big.read(GRAPH)).unwrap();
    assert_eq!(nodes.len(), 1000);
    let slugs: BTreeSet<&str> = nodes
        .iter()
        .map(|node| node["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs.len(), 1000, "every stage once");
    assert!(
        nodes
            .iter()
            .all(|node| node["sensors_applicable"][0]["id"] == "probe")
    );
    let started = Instant::now();
    let checked = scenario::run(&big, &["compile", "--check"]);
    println!(
        "scenario 16: compile --check of 1,000 stages took {:?}",
        started.elapsed()
    );
    assert_eq!(checked.status, 0, "{}", checked.stderr);

    let project = scenario::scenario_project(&[
        scenario::Sensor::gate("required-sections", "", "advisory")
            .command("aidlc engine sensor-required-sections"),
        scenario::Sensor::gate("shape", SHAPE, "blocking"),
        scenario::Sensor::write("lint", PASS, "**/*.md"),
    ]);
    // A deliverable of several MB: two sections around 6 MB of prose.
    let mut large = String::from("# A\n\n## Scope\n\n");
    while large.len() < 6 * 1024 * 1024 {
        large.push_str("Every line of this deliverable is prose that names no heading at all.\n");
    }
    large.push_str("\n## Risks\n\nNone known.\n");
    project.write(DOC_A, &large);
    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");

    // 119 fires on one path.
    let started = Instant::now();
    for _ in 0..119 {
        assert_eq!(
            scenario::verdict_line(&scenario::fire(&project, "lint", DOC_A))["result"],
            "passed"
        );
    }
    println!(
        "scenario 16: 119 fires on one path took {:?}",
        started.elapsed()
    );
    let paired = scenario::assert_every_fire_paired(&project);
    assert_eq!(paired.len(), 119);
    assert!(
        paired
            .values()
            .all(|row| row.event() == "SENSOR_PASSED" && row.field("Note").is_none())
    );

    // Another clone's shard: 25,000 fires (50,000 sensor rows) from the past. Among them every
    // tenth is for another stage and fails on doc-a.md; the newest for this stage on doc-b.md
    // fails with 7 findings. The override receipt follows them.
    let started = Instant::now();
    let base = std::time::UNIX_EPOCH + Duration::from_secs(1_767_225_600); // 2026-01-01
    let detail = format!("{RECORD}/.aidlc-engine/sensors/{STAGE}/lint-00006a0f.md");
    let mut shard = String::from(SHARD_HEADER);
    for index in 0..25_000_u64 {
        let timestamp = scenario::iso_timestamp(base + Duration::from_secs(index));
        let fire_id = format!("{index:08x}");
        let other_stage = index % 10 == 3;
        let (stage, output) = if other_stage {
            ("second-stage", DOC_A)
        } else {
            (STAGE, DOC_B)
        };
        let identity = [
            ("Fire id", fire_id.as_str()),
            ("Sensor ID", "lint"),
            ("Stage slug", stage),
            ("Output path", output),
        ];
        shard.push_str(&audit_block(
            "Sensor Fired",
            "SENSOR_FIRED",
            &timestamp,
            &identity,
        ));
        if other_stage || index == 24_999 {
            let findings = if other_stage { "3" } else { "7" };
            let mut fields = identity.to_vec();
            fields.push(("Detail path", &detail));
            fields.push(("Findings count", findings));
            shard.push_str(&audit_block(
                "Sensor Failed",
                "SENSOR_FAILED",
                &timestamp,
                &fields,
            ));
        } else {
            let mut fields = identity.to_vec();
            fields.push(("Duration ms", "41"));
            shard.push_str(&audit_block(
                "Sensor Passed",
                "SENSOR_PASSED",
                &timestamp,
                &fields,
            ));
        }
    }
    shard.push_str(&scenario::override_receipt(
        &project,
        &scenario::iso_timestamp(base + Duration::from_secs(30_000)),
    ));
    let foreign_shard = format!("{RECORD}/audit/ci-host-0123456789ab.md");
    project.write(&foreign_shard, &shard);
    assert_eq!(
        scenario::events(&parse_ledger_text(&shard), "SENSOR_FIRED").len(),
        25_000,
        "the shard holds 50,000 sensor rows"
    );
    println!(
        "scenario 16: writing a shard of 50,000 sensor rows ({} MB) took {:?}",
        shard.len() / (1024 * 1024),
        started.elapsed()
    );

    let started = Instant::now();
    let opened = scenario::gate_start(
        &project,
        &[
            "--override-blocking-sensors",
            "--user-input",
            OVERRIDE_CHOICE,
        ],
    );
    println!(
        "scenario 16: gate start over a 6 MB deliverable and a ledger of 50,000+ rows took {:?}",
        started.elapsed()
    );
    assert_eq!(
        opened.status, 0,
        "the receipt after 50,000 rows was found: {}",
        opened.stderr
    );
    let reply: Value = serde_json::from_str(opened.stdout.trim()).unwrap();
    let narration = reply["narration"].as_str().unwrap_or_default();
    assert!(
        narration.contains(&format!(
            "The lint check reports 7 findings in doc-b.md (details: {detail}"
        )),
        "{reply}"
    );
    assert!(
        !narration.contains("in doc-a.md"),
        "another stage's failure was said: {reply}"
    );
    let row = scenario::gate_rows(&project).pop().expect("the gate row");
    assert_eq!(row.field("Blocking Sensor Override"), Some("true"));
    let state = row.field("Sensor State").unwrap();
    assert!(
        state.contains(&format!("required-sections@{DOC_A}=passed")),
        "{state}"
    );
    assert!(
        state.contains(&format!("shape@{DOC_B}=failed(2)")),
        "{state}"
    );
}
