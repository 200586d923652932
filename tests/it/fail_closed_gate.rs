//! Issue 10, the gate and graph-reading part: nothing unverified opens a gate or shows green.
//!
//! - item 1 (scenario S12): a blocking binding that never fired has not passed, at
//!   `engine gate start` and in `gate check`, with one reason in every format;
//! - item 2: values read back from the graph are parsed strictly on every dispatch path, and
//!   both reference installs' older graphs still load (D13);
//! - item 4: a `gate check` that evaluated nothing exits 2 and says why (`--allow-empty` for 0);
//! - item 5 (first half): `gate check` brackets every blocking fire with BLAKE3 fingerprints;
//! - item 13 (gate half): a deliverable that is not a regular file is skipped with a reason and
//!   never opened;
//! - item 16 (failure mode N6): the write hook fires in a clone that has no shard of its own.

use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use aidlc::runtime::audit::ledger::{AuditBlock, AuditRow, append_row, parse_blocks};
use serde_json::Value;

use crate::support::{GRAPH, REFERENCE_VERSIONS, Run, TestProject};

const STAGE: &str = "first-stage";
const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";
const CHOICE: &str = "Override blocking sensors";

/// Fails on a file containing FAIL, else passes.
const SHAPE_WORKER: &str = "if grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":1}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
/// Appends to the file it checks, then passes.
const EDITING_WORKER: &str = "echo edited >> \"$4\"\necho '{\"pass\":true,\"findings_count\":0}'";
const PASSING_WORKER: &str = "echo '{\"pass\":true,\"findings_count\":0}'";

/// One sensor of the test stage, run as `sh <id>.sh`.
struct Sensor {
    id: &'static str,
    worker: &'static str,
    severity: &'static str,
    fire_on: &'static str,
    matches: &'static str,
}

const fn gate_sensor(
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

fn write_manifest(project: &TestProject, sensor: &Sensor, matches: &str) {
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
fn set_graph_globs(project: &TestProject, sensors: &[Sensor]) {
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
fn stage_project(sensors: &[Sensor]) -> TestProject {
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

/// `aidlc <args>`, killed and failed if it has not finished within a generous bound (a FIFO
/// opened for reading would block forever).
fn run_bounded(project: &TestProject, args: &[&str]) -> Run {
    let mut child = project
        .command(&project.root, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("aidlc {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::from(child.wait_with_output().unwrap())
}

fn gate_start(project: &TestProject, extra: &[&str]) -> Run {
    let mut args = vec!["engine", "gate", "start", STAGE];
    args.extend(extra);
    run_bounded(project, &args)
}

fn check_json(project: &TestProject, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["gate", "check", "--format", "json", "--quiet"];
    args.extend(extra);
    let run = run_bounded(project, &args);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}\n{}", run.stdout, run.stderr));
    (run, json)
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

fn gate_rows(project: &TestProject) -> Vec<AuditBlock> {
    audit_blocks(project)
        .into_iter()
        .filter(|block| block.event == "STAGE_AWAITING_APPROVAL")
        .collect()
}

/// The conductor's decision, a human turn with its receipt and the exact answer naming it
/// (docs/decisions.md D34).
fn record_override_receipt(project: &TestProject) {
    let shard = aidlc::runtime::workspace::audit_shard_path(&project.root).unwrap();
    let (human_turn, receipt) =
        crate::support::verifiable_human_turn(project, "Override blocking sensors");
    let rows = [
        AuditRow::new(
            "Decision Recorded",
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
        AuditRow::new("Human Turn", "HUMAN_TURN", human_turn),
        AuditRow::new(
            "Question Answered",
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

const A_NEVER_FIRED: &str = "blocking sensor never fired: its glob matches none of the stage's 1 deliverable; glob \"**/doc-a.md\"; declared outputs: doc-a.md, doc-b.md; a blocking sensor that never fired has not passed";

/// A blocking `a-check` whose glob matches only `doc-a.md`, which is not on disk, with
/// `others` after it: the compile takes the binding (it can match a declared output), and the
/// gate finds no deliverable it matches.
fn project_without_doc_a(others: impl IntoIterator<Item = Sensor>) -> TestProject {
    let mut sensors = vec![gate_sensor(
        "a-check",
        PASSING_WORKER,
        "blocking",
        "**/doc-a.md",
    )];
    sensors.extend(others);
    let project = stage_project(&sensors);
    project.remove(&format!("{STAGE_DIR}/doc-a.md"));
    project
}

// --- Item 1: a blocking binding that never fired has not passed ----------------------------------

#[test]
fn a_blocking_gate_sensor_whose_glob_matches_no_deliverable_refuses_the_gate() {
    let project = project_without_doc_a([]);
    let run = gate_start(&project, &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("Reasons: a-check@{STAGE}: {A_NEVER_FIRED}.")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("--override-blocking-sensors"),
        "the override flow applies: {}",
        run.stderr
    );
    assert!(gate_rows(&project).is_empty(), "no STAGE_AWAITING_APPROVAL");

    record_override_receipt(&project);
    let overridden = gate_start(
        &project,
        &["--override-blocking-sensors", "--user-input", CHOICE],
    );
    assert_eq!(overridden.status, 0, "{}", overridden.stderr);
    let rows = gate_rows(&project);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].field("Blocking Sensor IDs"), Some("a-check"));
    assert_eq!(
        rows[0].field("Blocking Sensor Reasons"),
        Some(format!("a-check: {A_NEVER_FIRED}").as_str())
    );
}

#[test]
fn a_deleted_deliverable_leaves_its_blocking_sensor_unfired() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    project.remove(&format!("{STAGE_DIR}/doc-a.md"));
    project.remove(&format!("{STAGE_DIR}/doc-b.md"));
    let expected = "shape@first-stage: blocking sensor never fired: none of the stage's declared outputs is on disk; glob \"**/*.md\"; declared outputs: doc-a.md, doc-b.md";
    let run = gate_start(&project, &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains(expected), "{}", run.stderr);
    assert!(gate_rows(&project).is_empty());

    let (run, json) = check_json(&project, &["--no-record"]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(json["counts"]["never_fired"], 1);
    assert_eq!(json["counts"]["blocking_not_evaluated"], 1);
    assert_eq!(json["unfired_bindings"][0]["sensor_id"], "shape");
}

#[test]
fn gate_check_reports_a_blocking_binding_that_never_fired_the_same_way_in_every_format() {
    let project =
        project_without_doc_a([gate_sensor("shape", SHAPE_WORKER, "advisory", "**/*.md")]);
    let message = format!("a-check was not evaluated on stage {STAGE}: {A_NEVER_FIRED}");
    let (run, json) = check_json(&project, &["--no-record"]);
    assert_eq!(run.status, 3, "a blocking non-evaluation: {}", run.stderr);
    assert_eq!(json["counts"]["passed"], 1, "shape ran on doc-b.md");
    assert_eq!(json["unfired_bindings"][0]["message"], A_NEVER_FIRED);
    assert_eq!(json["unfired_bindings"][0]["pattern"], "**/doc-a.md");
    for format in ["human", "github", "sarif"] {
        let run = run_bounded(
            &project,
            &[
                "gate",
                "check",
                "--no-record",
                "--quiet",
                "--format",
                format,
            ],
        );
        assert_eq!(run.status, 3, "{format}: {}", run.stderr);
        let shown = match format {
            "human" => run.stdout.contains(A_NEVER_FIRED),
            "github" => run.stdout.contains(&message),
            _ => {
                let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
                sarif["runs"][0]["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|result| result["message"]["text"] == message.as_str())
            }
        };
        assert!(shown, "{format} lacks the reason:\n{}", run.stdout);
    }

    // An advisory binding that never fired stays visible (a dead binding) and decides nothing.
    let advisory = project_with_advisory_ts_check();
    let (run, json) = check_json(&advisory, &["--no-record"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(json["counts"]["never_fired"], 0);
    assert_eq!(json["dead_bindings"][0]["sensor_id"], "ts-check");
}

fn project_with_advisory_ts_check() -> TestProject {
    stage_project(&[
        gate_sensor("ts-check", PASSING_WORKER, "advisory", "**/*.ts"),
        gate_sensor("shape", SHAPE_WORKER, "advisory", "**/*.md"),
    ])
}

#[test]
fn a_stage_the_workflow_has_not_reached_is_not_counted_as_unfired() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    project.remove(STAGE_DIR);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: some-earlier-stage\n",
    );
    let (run, json) = check_json(&project, &["--no-record"]);
    assert_eq!(run.status, 2, "nothing to check yet: {}", run.stderr);
    assert_eq!(json["counts"]["never_fired"], 0);
    assert_eq!(
        json["nothing_checked"]["reason"],
        "no declared output of the checked stages is on disk"
    );
    let (named, _) = check_json(&project, &["--no-record", "--stage", STAGE]);
    assert_eq!(
        named.status, 3,
        "a stage asked for by name is checked: {}",
        named.stderr
    );
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("- **Current Stage**: {STAGE}\n"),
    );
    let (current, _) = check_json(&project, &["--no-record"]);
    assert_eq!(
        current.status, 3,
        "the current stage is reached: {}",
        current.stderr
    );
}

// --- Item 2: values read from the graph are parsed strictly --------------------------------------

/// Rewrite the compiled graph's first binding with `edit`.
fn edit_first_binding(project: &TestProject, edit: impl Fn(&mut serde_json::Map<String, Value>)) {
    let mut graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    let entry = graph[0]["sensors_applicable"][0].as_object_mut().unwrap();
    edit(entry);
    project.write(GRAPH, &serde_json::to_string_pretty(&graph).unwrap());
}

fn hook_payload(project: &TestProject, relative: &str) -> String {
    serde_json::json!({"tool_input": {"file_path": project.path(relative)}}).to_string()
}

fn run_hook(project: &TestProject, payload: &str) -> Run {
    project.run_watched(&["engine", "hook", "run-sensors"], &[], Some(payload))
}

fn drops(project: &TestProject) -> String {
    let path = format!("{RECORD}/.aidlc-hooks-health/run-sensors.drops");
    if project.exists(&path) {
        project.read(&path)
    } else {
        String::new()
    }
}

#[test]
fn a_graph_value_this_version_never_writes_refuses_every_dispatch_path() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    edit_first_binding(&project, |entry| {
        entry.insert("default_severity".to_owned(), "critical".into());
    });
    let refusal = "recompile: the graph is not one this version wrote: stage \"first-stage\", key sensors_applicable[0].default_severity, value \"critical\" (expected one of advisory | blocking)";
    let check = run_bounded(&project, &["gate", "check", "--no-record"]);
    let start = gate_start(&project, &[]);
    let fire = run_bounded(
        &project,
        &[
            "engine",
            "sensor",
            "fire",
            "shape",
            "--stage",
            STAGE,
            "--output-path",
            &format!("{STAGE_DIR}/doc-a.md"),
        ],
    );
    for (name, run) in [("gate check", check), ("gate start", start), ("fire", fire)] {
        assert_eq!(run.status, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(refusal), "{name}: {}", run.stderr);
    }
    assert!(gate_rows(&project).is_empty());
    assert!(audit_blocks(&project).is_empty(), "no fire was recorded");
    // The hook never fails the write, and says why nothing was checked.
    let hook = run_hook(
        &project,
        &hook_payload(&project, &format!("{STAGE_DIR}/doc-a.md")),
    );
    assert_eq!(hook.status, 0);
    assert!(drops(&project).contains(refusal), "{}", drops(&project));

    for (key, value) in [("fire_on", "bogus"), ("default_severity", "Blocking")] {
        edit_first_binding(&project, |entry| {
            entry.insert("default_severity".to_owned(), "blocking".into());
            entry.insert("fire_on".to_owned(), "gate".into());
            entry.insert(key.to_owned(), value.into());
        });
        let run = run_bounded(&project, &["gate", "check", "--no-record"]);
        assert_eq!(run.status, 2, "{key}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "key sensors_applicable[0].{key}, value \"{value}\""
            )),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_gate_shape_graph_with_one_entry_missing_fire_on_is_refused() {
    let project = stage_project(&[
        gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md"),
        Sensor {
            id: "lint",
            worker: PASSING_WORKER,
            severity: "advisory",
            fire_on: "write",
            matches: "**/*.md",
        },
    ]);
    let mut graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    graph[0]["sensors_applicable"][1]
        .as_object_mut()
        .unwrap()
        .remove("fire_on");
    project.write(GRAPH, &serde_json::to_string_pretty(&graph).unwrap());
    let run = run_bounded(&project, &["gate", "check", "--no-record"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("recompile: the graph is not one this version wrote: stage \"first-stage\", key sensors_applicable[1].fire_on, value missing (expected one of write | gate)"),
        "{}",
        run.stderr
    );
}

#[test]
fn duplicate_stage_slugs_and_a_graph_that_is_not_an_array_are_refused() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    let twice = Value::Array(vec![graph[0].clone(), graph[0].clone()]);
    project.write(GRAPH, &twice.to_string());
    let run = gate_start(&project, &[]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "stage \"first-stage\", key slug, value \"first-stage\" (node 1 has the same slug"
        ),
        "{}",
        run.stderr
    );
    project.write(GRAPH, &serde_json::json!({"nodes": graph}).to_string());
    let run = run_bounded(&project, &["gate", "check"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "the graph, key (top level), value an object (expected an array of stage nodes)"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn both_reference_install_graphs_load_and_read_every_binding_as_write_fired_and_advisory() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        project.write(
            &format!("{RECORD}/aidlc-state.md"),
            "- **Current Stage**: requirements-analysis\n",
        );
        project.write(
            &format!("{RECORD}/inception/requirements-analysis/requirements.md"),
            "# Requirements\n\n## Scope\n\n## Risks\n",
        );
        let (run, json) = check_json(&project, &["--no-record"]);
        assert_eq!(run.status, 2, "{version}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("no gate-fired binding: the install's sensors are all write-fired")
                && run.stderr.contains("`--fire-on all` checks them"),
            "{version}: {}",
            run.stderr
        );
        assert!(json["counts"]["stages_checked"].as_u64().unwrap() >= 32);
        let (run, json) = check_json(
            &project,
            &[
                "--no-record",
                "--fire-on",
                "all",
                "--stage",
                "requirements-analysis",
            ],
        );
        assert!(
            run.status == 0 || run.status == 2,
            "{version}: advisory bindings never exit 1 or 3: {}",
            run.stderr
        );
        let fires = json["fires"].as_array().unwrap();
        assert!(!fires.is_empty(), "{version}: the write-fired bindings ran");
        assert!(
            fires.iter().all(|fire| fire["severity"] == "advisory"),
            "{version}: {fires:?}"
        );
    }
}

// --- Item 4: nothing checked is not green --------------------------------------------------------

fn assert_nothing_checked(run: &Run, why: &str) {
    assert_eq!(run.status, 2, "{why}: {}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("error: nothing was checked: {why}")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--allow-empty"), "{}", run.stderr);
}

#[test]
fn a_check_that_evaluated_nothing_exits_2_and_says_why() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    let args = ["gate", "check", "--no-record"];
    assert_nothing_checked(
        &project.run_with_env(&args, &[("AIDLC_DISABLE_SENSORS", "1")]),
        "sensors are off (AIDLC_DISABLE_SENSORS=1)",
    );
    let allowed = project.run_with_env(
        &["gate", "check", "--no-record", "--allow-empty"],
        &[("AIDLC_DISABLE_SENSORS", "1")],
    );
    assert_eq!(
        allowed.status, 3,
        "--allow-empty never passes a blocking binding switched off: {}",
        allowed.stderr
    );

    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("- **Current Stage**: {STAGE}\n- **Sensors**: off (set by you)\n"),
    );
    assert_nothing_checked(
        &run_bounded(&project, &args),
        "sensors are off in the state of 261130-demo",
    );

    // Advisory: `--allow-stale` never takes a graph that lacks a blocking binding.
    let empty = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "advisory", "**/*.md")]);
    empty.write(GRAPH, "[]\n");
    assert_nothing_checked(
        &run_bounded(&empty, &["gate", "check", "--no-record", "--allow-stale"]),
        "the stage graph has no stage to check",
    );
}

#[test]
fn only_write_fired_bindings_point_at_fire_on_all() {
    let project = stage_project(&[Sensor {
        id: "lint",
        worker: PASSING_WORKER,
        severity: "advisory",
        fire_on: "write",
        matches: "**/*.md",
    }]);
    let run = run_bounded(&project, &["gate", "check", "--no-record"]);
    assert_nothing_checked(
        &run,
        "no gate-fired binding: the install's sensors are all write-fired (1 binding)",
    );
    assert!(
        run.stderr.contains("`--fire-on all` checks them"),
        "{}",
        run.stderr
    );
    let all = run_bounded(
        &project,
        &["gate", "check", "--no-record", "--fire-on", "all"],
    );
    assert_eq!(all.status, 0, "{}", all.stderr);
}

#[test]
fn every_fire_refused_is_nothing_checked_for_advisory_and_3_for_blocking() {
    let advisory = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "advisory", "**/*.md")]);
    // The graph still names `shape`, but its worker cannot start: every fire is a script error.
    advisory.remove("shape.sh");
    let run = run_bounded(&advisory, &["gate", "check", "--no-record"]);
    assert_nothing_checked(
        &run,
        "none of the 2 fires could be evaluated (the first: script-error",
    );
    let blocking = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    blocking.remove("shape.sh");
    let run = run_bounded(&blocking, &["gate", "check", "--no-record"]);
    assert_eq!(
        run.status, 3,
        "blocking non-evaluations outrank 2: {}",
        run.stderr
    );
}

// --- Item 5 (first half): the staleness bracket in gate check ------------------------------------

#[test]
fn a_blocking_worker_that_edits_its_file_is_not_evaluated_in_gate_check() {
    let project = stage_project(&[gate_sensor("editor", EDITING_WORKER, "blocking", "**/*.md")]);
    let (run, json) = check_json(&project, &["--no-record"]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let fires = json["fires"].as_array().unwrap();
    assert_eq!(fires.len(), 2);
    for fire in fires {
        assert_eq!(fire["result"], "not-evaluated", "{fire}");
        assert_eq!(fire["note"], "artifact-changed", "{fire}");
    }
    let advisory = stage_project(&[gate_sensor("editor", EDITING_WORKER, "advisory", "**/*.md")]);
    let (run, _) = check_json(&advisory, &["--no-record"]);
    assert_eq!(
        run.status, 0,
        "advisory fires are not bracketed: {}",
        run.stderr
    );
}

// --- Item 13 (gate half): deliverables that are not regular files --------------------------------

fn make_fifo(project: &TestProject, relative: &str) {
    project.remove(relative);
    let made = std::process::Command::new("mkfifo")
        .arg(project.path(relative).as_str())
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn a_fifo_named_like_a_deliverable_is_skipped_with_a_reason_and_never_opened() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    make_fifo(&project, &format!("{STAGE_DIR}/doc-a.md"));
    let (run, json) = check_json(&project, &["--no-record"]);
    assert_eq!(run.status, 0, "doc-b.md was checked: {}", run.stderr);
    let skip = json["skips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|skip| skip["reason"] == "not-a-regular-file")
        .unwrap_or_else(|| panic!("no skip for the FIFO: {json}"));
    assert_eq!(skip["deliverable"], format!("{STAGE_DIR}/doc-a.md"));
    let opened = gate_start(&project, &[]);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    assert!(
        opened
            .stderr
            .contains("1 path named like an output skipped: not a regular file"),
        "{}",
        opened.stderr
    );

    // With nothing else to fire on, the blocking binding never fired.
    let only_fifo = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    make_fifo(&only_fifo, &format!("{STAGE_DIR}/doc-a.md"));
    only_fifo.remove(&format!("{STAGE_DIR}/doc-b.md"));
    let (run, json) = check_json(&only_fifo, &["--no-record"]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let reason = json["unfired_bindings"][0]["message"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "not regular files ({STAGE_DIR}/doc-a.md is a FIFO (named pipe))"
        )),
        "{reason}"
    );
    let refused = gate_start(&only_fifo, &[]);
    assert_eq!(refused.status, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("is a FIFO"), "{}", refused.stderr);
}

#[test]
fn a_folder_named_like_a_deliverable_is_skipped_too() {
    let project = stage_project(&[gate_sensor("shape", SHAPE_WORKER, "blocking", "**/*.md")]);
    project.remove(&format!("{STAGE_DIR}/doc-a.md"));
    std::fs::create_dir(project.path(&format!("{STAGE_DIR}/doc-a.md"))).unwrap();
    let (run, json) = check_json(&project, &["--no-record"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(json["counts"]["skipped_by_reason"]["not-a-regular-file"], 1);
}

// --- Item 16: the write hook in a fresh clone ----------------------------------------------------

#[test]
fn the_write_hook_fires_in_a_clone_that_has_no_shard_of_its_own() {
    let project = stage_project(&[Sensor {
        id: "lint",
        worker: PASSING_WORKER,
        severity: "advisory",
        fire_on: "write",
        matches: "**/*.md",
    }]);
    // The record arrives from another clone: its shard is there, this clone's is not.
    let other_shard = format!("{RECORD}/audit/other-host-0123456789ab.md");
    project.write(
        &other_shard,
        "# AI-DLC Audit Log\n\n## Stage Started\n**Timestamp**: 2026-09-04T10:00:00Z\n**Event**: STAGE_STARTED\n**Stage**: first-stage\n\n---\n",
    );
    let before = project.read(&other_shard);
    let run = run_hook(
        &project,
        &hook_payload(&project, &format!("{STAGE_DIR}/doc-a.md")),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(drops(&project), "", "nothing was dropped");
    let own_shard = aidlc::runtime::workspace::audit_shard_path(&project.root).unwrap();
    assert_ne!(own_shard, project.path(&other_shard));
    let rows = parse_blocks(
        &std::fs::read_to_string(&own_shard).expect("the fire created this clone's shard"),
    );
    let events: Vec<&str> = rows.iter().map(|row| row.event.as_str()).collect();
    assert_eq!(events, ["SENSOR_FIRED", "SENSOR_PASSED"]);
    assert_eq!(rows[0].field("Fire id"), rows[1].field("Fire id"));
    assert_eq!(
        project.read(&other_shard),
        before,
        "the other clone's shard is untouched"
    );
}

#[test]
fn a_matching_write_the_hook_cannot_fire_is_recorded_as_a_drop() {
    let project = stage_project(&[Sensor {
        id: "lint",
        worker: PASSING_WORKER,
        severity: "advisory",
        fire_on: "write",
        matches: "**/*.md",
    }]);
    let payload = hook_payload(&project, &format!("{STAGE_DIR}/doc-a.md"));
    edit_first_binding(&project, |entry| {
        entry.insert("matches".to_owned(), "**/[x".into());
    });
    assert_eq!(run_hook(&project, &payload).status, 0);
    let logged = drops(&project);
    assert!(
        logged.contains("\tlint: ")
            && logged.contains(&format!(
                "the write to {STAGE_DIR}/doc-a.md was not checked"
            )),
        "{logged}"
    );

    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: no-such-stage\n",
    );
    assert_eq!(run_hook(&project, &payload).status, 0);
    assert!(
        drops(&project).contains("the current stage \"no-such-stage\" is not in the stage graph"),
        "{}",
        drops(&project)
    );
}
