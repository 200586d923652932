//! `aidlc gate check` end to end: which deliverables fire, parallel and sharded runs, hermetic
//! `--no-record`, refusals, and exit codes (D4, D6, D9).

use aidlc::report::ReportFormat;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::stage_with_sensors::{
    CHOICE, EDITING_WORKER, PASSING_WORKER, SHAPE_WORKER, STAGE, Sensor, check_json, gate_rows,
    gate_sensor, gate_start, record_override_receipt, run_bounded, stage_project,
};
use crate::support::{GRAPH, Run, TestProject, example_project};

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";

fn gate_manifest(id: &str, worker: &str, severity: &str, matches: &str) -> String {
    format!(
        "---\nid: {id}\nkind: deterministic\ncommand: sh {worker}\ndefault_severity: {severity}\nfire_on: gate\ndescription: A fake gate sensor\ncategory: demo\nmatches: \"{matches}\"\n---\n\n# {id}\n"
    )
}

/// A project whose stage `first-stage` produces `doc-a`, `doc-b` and `doc-questions`, with gate
/// sensors `shape` (blocking when `blocking`, passes unless the file contains FAIL) and
/// `upstream-coverage` (a fake stage-level sensor that always passes).
fn gate_project(shape_severity: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        "shape.sh",
        "#!/bin/sh\nfile=\"$4\"\nif grep -q FAIL \"$file\"; then echo '{\"pass\":false,\"findings_count\":1}'; elif grep -q N/A \"$file\"; then exit 127; else echo '{\"pass\":true,\"findings_count\":0}'; fi\n",
    );
    project.write(
        "cover.sh",
        "#!/bin/sh\necho '{\"pass\":true,\"findings_count\":0}'\n",
    );
    project.write(
        ".claude/sensors/aidlc-shape.md",
        &gate_manifest("shape", "shape.sh", shape_severity, "**/*.md"),
    );
    project.write(
        ".claude/sensors/aidlc-upstream-coverage.md",
        &gate_manifest("upstream-coverage", "cover.sh", "advisory", "**/*.md"),
    );
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        "---\nslug: first-stage\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n  - doc-a\n  - doc-b\n  - doc-questions\nconsumes: []\nrequires_stage: []\nsensors: [shape, upstream-coverage]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# first-stage\n",
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n",
    );
    project.write(&format!("{STAGE_DIR}/doc-a.md"), "# A\n");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\n");
    project.write(&format!("{STAGE_DIR}/doc-questions.md"), "# Q\n");
    project
}

fn gate_json(project: &TestProject, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["gate", "check", "--format", "json", "--quiet"];
    args.extend(extra);
    let run = project.run(&args);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

/// `(stage, sensor, deliverable, result)` of every fire, in report order.
fn fire_rows(json: &Value) -> Vec<(String, String, String, String)> {
    json["fires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fire| {
            let field = |key: &str| fire[key].as_str().unwrap_or_default().to_owned();
            (
                field("stage"),
                field("sensor_id"),
                field("deliverable"),
                field("result"),
            )
        })
        .collect()
}

#[test]
fn each_deliverable_fires_and_stage_level_sensors_fire_once_per_folder() {
    let project = gate_project("blocking");
    let (run, json) = gate_json(&project, &["--no-record"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let rows = fire_rows(&json);
    let shape: Vec<&str> = rows
        .iter()
        .filter(|row| row.1 == "shape")
        .map(|row| row.2.as_str())
        .collect();
    assert_eq!(
        shape,
        [
            format!("{STAGE_DIR}/doc-a.md"),
            format!("{STAGE_DIR}/doc-b.md"),
            format!("{STAGE_DIR}/doc-questions.md")
        ],
        "one fire per deliverable"
    );
    let coverage: Vec<&str> = rows
        .iter()
        .filter(|row| row.1 == "upstream-coverage")
        .map(|row| row.2.as_str())
        .collect();
    assert_eq!(
        coverage,
        [format!("{STAGE_DIR}/doc-a.md")],
        "once per folder, not on a marker"
    );
}

#[test]
fn exit_codes_follow_severity_and_evaluation() {
    let blocking = gate_project("blocking");
    blocking.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let (run, json) = gate_json(&blocking, &[]);
    assert_eq!(run.status, 1, "a blocking failure fails the check");
    assert_eq!(json["counts"]["blocking_failed"], 1);

    let advisory = gate_project("advisory");
    advisory.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let (run, _) = gate_json(&advisory, &[]);
    assert_eq!(run.status, 0, "an advisory failure is reported, not fatal");
    let (run, _) = gate_json(&advisory, &["--strict"]);
    assert_eq!(run.status, 1, "--strict makes it fatal");

    let unevaluated = gate_project("blocking");
    unevaluated.write(&format!("{STAGE_DIR}/doc-a.md"), "# A\nN/A\n");
    let (run, json) = gate_json(&unevaluated, &[]);
    assert_eq!(
        run.status, 3,
        "a blocking sensor that could not run is not a pass"
    );
    assert_eq!(json["counts"]["blocking_not_evaluated"], 1);
    let human = unevaluated.run(&["gate", "check", "--quiet"]);
    assert!(
        human.stdout.contains("tool-unavailable"),
        "{}",
        human.stdout
    );
}

#[test]
fn parallel_and_serial_runs_report_the_same() {
    let project = gate_project("blocking");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let (_, serial) = gate_json(&project, &["--no-record", "--jobs", "1"]);
    let (_, parallel) = gate_json(&project, &["--no-record", "--jobs", "8"]);
    assert_eq!(fire_rows(&serial), fire_rows(&parallel));
    assert_eq!(serial["counts"], parallel["counts"]);
}

#[test]
fn shards_partition_the_work() {
    let project = gate_project("blocking");
    let (_, whole) = gate_json(&project, &["--no-record"]);
    let mut union = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let (run, json) = gate_json(&project, &["--no-record", "--shard", shard]);
        let rows = fire_rows(&json);
        if rows.is_empty() {
            // A shard that got none of a non-empty plan's work is no failure: exit 0, and
            // nothing-checked is left to `gate merge`, which judges the whole plan.
            assert_eq!(run.status, 0, "{}", run.stderr);
            assert_eq!(json["nothing_checked"], Value::Null, "{shard}");
        } else {
            assert_eq!(run.status, 0, "{}", run.stderr);
        }
        union.extend(rows);
    }
    let mut expected = fire_rows(&whole);
    expected.sort();
    union.sort();
    assert_eq!(union, expected);
    let bad = project.run(&["gate", "check", "--shard", "4/3"]);
    assert_eq!(bad.status, 2);
}

fn snapshot_tree(project: &TestProject) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![project.root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in dir.read_dir_utf8().unwrap().filter_map(Result::ok) {
            let path = entry.path().to_owned();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.to_string(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn no_record_leaves_the_project_byte_identical() {
    let project = gate_project("blocking");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    // Mint the clone id first, as any real workspace has one.
    aidlc::runtime::workspace::clone_id(&project.root).unwrap();
    let before = snapshot_tree(&project);
    let (run, json) = gate_json(&project, &["--no-record"]);
    assert_eq!(run.status, 1);
    assert_eq!(json["recorded"], false);
    assert_eq!(snapshot_tree(&project), before);
    // Recorded, the same check writes audit rows and a detail file.
    let (_, recorded) = gate_json(&project, &[]);
    assert_eq!(recorded["recorded"], true);
    assert_ne!(snapshot_tree(&project), before);
}

#[test]
fn a_symlinked_deliverable_pointing_outside_is_refused_before_any_fire() {
    let project = gate_project("blocking");
    project.write("outside.md", "# outside\n");
    project.remove(&format!("{STAGE_DIR}/doc-a.md"));
    std::os::unix::fs::symlink(
        project.path("outside.md"),
        project.path(&format!("{STAGE_DIR}/doc-a.md")),
    )
    .unwrap();
    let run = project.run(&["gate", "check"]);
    assert_eq!(run.status, 2, "{}", run.stdout);
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
fn no_intent_is_an_error_not_a_green_check() {
    let project = gate_project("blocking");
    project.remove("aidlc");
    let run = project.run(&["gate", "check"]);
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("nothing to check"), "{}", run.stderr);
}

#[test]
fn init_example_gives_a_first_gate_check_with_real_findings() {
    let project = TestProject::empty();
    let init = project.run(&["init", ".", "--example"]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    assert_eq!(project.compile().status, 0);
    let (run, json) = gate_json(&project, &["--no-record"]);
    assert_eq!(run.status, 0, "advisory findings only: {}", run.stderr);
    let counts = &json["counts"];
    assert!(counts["passed"].as_u64().unwrap() >= 1, "{counts}");
    assert!(counts["failed"].as_u64().unwrap() >= 1, "{counts}");
    assert_eq!(
        counts["not_evaluated"], 0,
        "every shipped check is native: {counts}"
    );
}

#[test]
fn intent_new_creates_the_record_and_moves_the_cursor() {
    let project = gate_project("advisory");
    let run = project.run(&["engine", "intent", "new", "checkout-flow"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let created: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let folder = created["folder"].as_str().unwrap();
    assert!(folder.ends_with("-checkout-flow"), "{folder}");
    assert!(project.exists(&format!(
        "aidlc/spaces/default/intents/{folder}/aidlc-state.md"
    )));
    assert_eq!(
        project
            .read("aidlc/spaces/default/intents/active-intent")
            .trim(),
        folder
    );
    let registry: Value =
        serde_json::from_str(&project.read("aidlc/spaces/default/intents/intents.json")).unwrap();
    assert_eq!(registry[0]["slug"], "checkout-flow");
    assert_eq!(registry[0]["uuid"].as_str().unwrap().len(), 36);
    let again = project.run(&["engine", "intent", "new", "Bad Label"]);
    assert_eq!(again.status, 2);
}

/// A recorded `gate check` takes the audit lock per batch of fires, not per row: every fire's
/// `SENSOR_FIRED` is written before any worker of its batch starts, and the terminal rows after
/// the last of them, each fire paired by id with exactly one terminal row and the report's fire
/// ids being the ledger's. Serial (`--jobs 1`) so that an unbatched run would
/// interleave `SENSOR_FIRED` and terminal rows fire by fire.
#[test]
fn a_recorded_check_writes_its_audit_rows_in_batches_and_pairs_every_fire() {
    let project = gate_project("blocking");
    let (run, json) = gate_json(&project, &["--jobs", "1"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let blocks = crate::support::ledger_blocks(&project, RECORD);
    let events: Vec<&str> = blocks
        .iter()
        .map(crate::support::LedgerBlock::event)
        .collect();
    let fires = fire_rows(&json).len();
    assert_eq!(fires, 4, "three shape fires and one upstream-coverage fire");
    let fired = vec!["SENSOR_FIRED"; fires];
    let passed = vec!["SENSOR_PASSED"; fires];
    assert_eq!(events, [fired, passed].concat(), "one batch of each");
    let ids_of = |event: &str| -> Vec<String> {
        blocks
            .iter()
            .filter(|block| block.event() == event)
            .map(|block| block.field("Fire id").unwrap_or_default().to_owned())
            .collect()
    };
    let reported: Vec<String> = json["fires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fire| fire["fire_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids_of("SENSOR_FIRED"), reported, "in plan order");
    assert_eq!(
        ids_of("SENSOR_PASSED"),
        reported,
        "each fire its own terminal row"
    );
}

/// Each binding of the compiled graph with `id` changed by `edit`, written over the graph
/// without a recompile.
fn edit_graph_binding(project: &TestProject, id: &str, edit: impl Fn(&mut Value)) {
    let mut graph: Value = serde_json::from_str(&project.read(crate::support::GRAPH)).unwrap();
    for node in graph.as_array_mut().unwrap() {
        for entry in node["sensors_applicable"].as_array_mut().unwrap() {
            if entry["id"] == id {
                edit(entry);
            }
        }
    }
    project.write(
        crate::support::GRAPH,
        &serde_json::to_string_pretty(&graph).unwrap(),
    );
}

#[test]
fn allow_stale_never_takes_a_graph_whose_blocking_binding_differs() {
    let project = gate_project("blocking");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    edit_graph_binding(&project, "shape", |entry| {
        entry["default_severity"] = Value::from("advisory");
    });
    for args in [
        &["gate", "check", "--no-record"][..],
        &["gate", "check", "--no-record", "--allow-stale"][..],
    ] {
        let run = project.run(args);
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
        assert!(
            run.stderr.contains(
                "  sensor shape: default_severity advisory → blocking (stage first-stage)"
            ) && run.stderr.contains(
                "  help: run `aidlc compile` to rebuild it from its sources, then check again\n"
            ),
            "{args:?}: {}",
            run.stderr
        );
    }
    let refused = project.run(&["gate", "check", "--no-record", "--allow-stale"]);
    assert!(
        refused.stderr.contains(
            "  --allow-stale does not apply: a blocking binding differs (stage first-stage)"
        ),
        "{}",
        refused.stderr
    );
}

#[test]
fn allow_stale_checks_a_graph_whose_advisory_bindings_differ_as_it_is() {
    let project = gate_project("blocking");
    edit_graph_binding(&project, "upstream-coverage", |entry| {
        entry["matches"] = Value::from("**/doc-b.md");
    });
    let refused = project.run(&["gate", "check", "--no-record"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "`--allow-stale` checks against the graph as it is (no blocking binding differs)"
        ),
        "{}",
        refused.stderr
    );
    let (run, json) = gate_json(&project, &["--no-record", "--allow-stale"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("checking against it as it is (--allow-stale: no blocking binding differs)"),
        "{}",
        run.stderr
    );
    let coverage: Vec<String> = fire_rows(&json)
        .into_iter()
        .filter(|row| row.1 == "upstream-coverage")
        .map(|row| row.2)
        .collect();
    assert_eq!(
        coverage,
        [format!("{STAGE_DIR}/doc-b.md")],
        "the graph's glob, as it is"
    );
}

#[test]
fn allow_stale_never_takes_a_graph_whose_sources_do_not_compile() {
    let project = gate_project("advisory");
    let stage = ".claude/aidlc-common/stages/inception/first-stage.md";
    let text = project.read(stage);
    project.write(
        stage,
        &text.replace(
            "sensors: [shape, upstream-coverage]",
            "sensors: [shape, no-such-sensor]",
        ),
    );
    let run = project.run(&["gate", "check", "--no-record", "--allow-stale"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("its sources do not compile")
            && run
                .stderr
                .contains("--allow-stale does not apply: its sources do not compile"),
        "{}",
        run.stderr
    );
}

#[test]
fn allow_empty_never_passes_a_blocking_binding_the_sensors_switch_kept_from_running() {
    let project = gate_project("blocking");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\nFAIL\n");
    let args = ["gate", "check", "--no-record", "--allow-empty"];
    let by_environment = project.run_with_env(&args, &[("AIDLC_DISABLE_SENSORS", "1")]);
    assert_eq!(by_environment.status, 3, "{}", by_environment.stderr);
    assert!(
        by_environment.stderr.contains(
            "error: 1 blocking binding not evaluated: sensors are off (AIDLC_DISABLE_SENSORS=1): shape@first-stage"
        ),
        "{}",
        by_environment.stderr
    );
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n- **Sensors**: off (set by you)\n",
    );
    let by_state = project.run(&args);
    assert_eq!(by_state.status, 3, "{}", by_state.stderr);
    assert!(
        by_state
            .stderr
            .contains("sensors are off (`- **Sensors**: off` in the state of 261130-demo)"),
        "{}",
        by_state.stderr
    );
    let without_allow_empty = project.run(&["gate", "check", "--no-record"]);
    assert_eq!(
        without_allow_empty.status, 2,
        "nothing was checked: {}",
        without_allow_empty.stderr
    );

    let advisory = gate_project("advisory");
    let run = advisory.run_with_env(&args, &[("AIDLC_DISABLE_SENSORS", "1")]);
    assert_eq!(run.status, 0, "no blocking binding: {}", run.stderr);
}

/// A blocking verdict is about the bytes the sensor read: an advisory sensor that edits the
/// deliverable after the blocking one read it leaves bytes no blocking sensor checked, and the
/// check fails in every format, as `aidlc engine gate start` refuses the same case.
#[test]
fn a_deliverable_edited_by_another_sensor_after_the_blocking_one_read_it_fails_the_check() {
    let project = gate_project("blocking");
    // An advisory sensor authored after `shape` fires after it on doc-a (one job) and edits it.
    project.write(
        "editor.sh",
        "#!/bin/sh\nprintf 'edited by a sensor\\n' >> \"$4\"\necho '{\"pass\":true,\"findings_count\":0}'\n",
    );
    project.write(
        ".claude/sensors/aidlc-editor.md",
        &gate_manifest("editor", "editor.sh", "advisory", "**/doc-a.md"),
    );
    let stage = ".claude/aidlc-common/stages/inception/first-stage.md";
    let text = project.read(stage).replace(
        "sensors: [shape, upstream-coverage]",
        "sensors: [shape, upstream-coverage, editor]",
    );
    project.write(stage, &text);
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let doc_a = format!("{STAGE_DIR}/doc-a.md");
    let (run, json) = gate_json(&project, &["--jobs", "1"]);
    assert!(
        project.read(&doc_a).contains("edited by a sensor"),
        "{}",
        project.read(&doc_a)
    );
    assert_eq!(run.status, 3, "{}{}", run.stdout, run.stderr);
    let rows = fire_rows(&json);
    let shape_on_a = rows
        .iter()
        .find(|row| row.1 == "shape" && row.2 == doc_a)
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(shape_on_a.3, "not-evaluated", "{rows:?}");
    assert_eq!(json["counts"]["blocking_not_evaluated"], 1, "{json}");
    // Every other format (json was read above).
    let others = ReportFormat::all()
        .iter()
        .filter(|format| **format != ReportFormat::Json);
    for format in others.map(|format| format.name()) {
        let run = project.run(&["gate", "check", "--jobs", "1", "--format", format]);
        assert_eq!(run.status, 3, "{format}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("artifact-changed"),
            "{format}: {}",
            run.stdout
        );
    }
}

// --- A graph its sources no longer compile to is refused at the gate ----------------------------

const REQUIRED_SECTIONS: &str = ".claude/sensors/aidlc-required-sections.md";

const GATE_CHECK: [&str; 3] = ["gate", "check", "--no-record"];

/// `manifest` with its severity set to blocking, written without a recompile.
fn make_blocking(project: &TestProject, manifest: &str) {
    let text = project.read(manifest);
    assert!(text.contains("default_severity: advisory"), "{text}");
    project.write(
        manifest,
        &text.replace("default_severity: advisory", "default_severity: blocking"),
    );
}

#[test]
fn gate_check_refuses_a_manifest_made_blocking_without_a_recompile() {
    let (project, _) = example_project();
    let before = project.run(&GATE_CHECK);
    assert_eq!(
        before.status, 0,
        "advisory findings only: {}",
        before.stderr
    );
    make_blocking(&project, REQUIRED_SECTIONS);
    let stale = project.run(&GATE_CHECK);
    assert_eq!(stale.status, 2, "{}{}", stale.stdout, stale.stderr);
    assert!(
        stale.stdout.is_empty(),
        "no report on a stale graph: {}",
        stale.stdout
    );
    for expected in [
        "error: the stage graph .claude/tools/data/stage-graph.json is stale: its sources compile to another graph (30 stages differ)",
        "  sensor required-sections: default_severity advisory → blocking (30 stages: intent-capture, market-research, feasibility, scope-definition, team-formation and 25 more)",
        "  since the last recorded compile: .claude/sensors/aidlc-required-sections.md changed",
        "  help: run `aidlc compile` to rebuild it from its sources, then check again\n",
    ] {
        assert!(
            stale.stderr.contains(expected),
            "{expected}\n{}",
            stale.stderr
        );
    }
    let allowed = project.run(&["gate", "check", "--no-record", "--allow-stale"]);
    assert_eq!(
        allowed.status, 2,
        "a blocking binding differs, so --allow-stale does not apply: {}",
        allowed.stderr
    );
    assert!(
        allowed
            .stderr
            .contains("  --allow-stale does not apply: a blocking binding differs (30 stages: "),
        "{}",
        allowed.stderr
    );
    assert_eq!(project.compile().status, 0);
    let recompiled = project.run(&GATE_CHECK);
    assert_eq!(
        recompiled.status, 1,
        "now blocking findings fail: {}",
        recompiled.stderr
    );
    assert!(
        !recompiled.stderr.contains("stale"),
        "{}",
        recompiled.stderr
    );
}

#[test]
fn gate_check_refuses_a_blocking_sensor_bound_in_a_stage_without_a_recompile() {
    let (project, _) = example_project();
    project.write(
        ".claude/sensors/aidlc-story-shape.md",
        &crate::support::manifest("story-shape", "fire_on: gate\n")
            .replace("default_severity: advisory", "default_severity: blocking"),
    );
    let stage = ".claude/aidlc-common/stages/inception/user-stories.md";
    let text = project.read(stage);
    project.write(
        stage,
        &text.replacen("sensors:\n", "sensors:\n  - story-shape\n", 1),
    );
    let run = project.run(&GATE_CHECK);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("  sensor story-shape: bound (stage user-stories)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("since the last recorded compile: "),
        "{}",
        run.stderr
    );
}

#[test]
fn gate_check_refuses_the_graph_a_failed_compile_left_behind() {
    let (project, _) = example_project();
    make_blocking(&project, REQUIRED_SECTIONS);
    let stage = ".claude/aidlc-common/stages/inception/user-stories.md";
    let text = project.read(stage);
    project.write(
        stage,
        &text.replacen("sensors:\n", "sensors:\n  - no-such-sensor\n", 1),
    );
    let graph_before = project.read(crate::support::GRAPH);
    assert_eq!(project.compile().status, 1, "the compile fails");
    assert_eq!(
        project.read(crate::support::GRAPH),
        graph_before,
        "and keeps the old graph"
    );
    let run = project.run(&GATE_CHECK);
    assert_eq!(run.status, 2, "{}", run.stderr);
    for expected in [
        "unknown-sensor-import",
        "error: the stage graph .claude/tools/data/stage-graph.json is stale: its sources do not compile (1 error), so it is what an earlier compile wrote",
        "help: fix the errors above and run `aidlc compile`, then check again",
    ] {
        assert!(run.stderr.contains(expected), "{expected}\n{}", run.stderr);
    }
}

#[test]
fn gate_check_without_a_compile_record_compiles_the_sources_to_compare() {
    let (project, _) = example_project();
    let record = ".claude/tools/data/.aidlc-compile-fingerprint";
    project.remove(record);
    let fresh = project.run(&GATE_CHECK);
    assert_eq!(
        fresh.status, 0,
        "a current graph passes without a record: {}",
        fresh.stderr
    );
    make_blocking(&project, REQUIRED_SECTIONS);
    let run = project.run(&GATE_CHECK);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no aidlc compile of these sources is recorded (a fresh clone, or an install another compiler wrote), so they were compiled in memory to compare"),
        "{}",
        run.stderr
    );
    assert!(!project.exists(record), "the check writes no record");
}

#[test]
fn the_reference_installs_are_checked_against_their_own_sources() {
    for version in crate::support::REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        assert_eq!(
            project.run(&["engine", "intent", "new", "demo"]).status,
            0,
            "{version}"
        );
        let pristine = project.run(&GATE_CHECK);
        assert!(
            !pristine.stderr.contains("stale"),
            "{version}: {}",
            pristine.stderr
        );
        // Every graph version carries `matches` (2.5 has no severity to drift).
        let manifest = project.read(REQUIRED_SECTIONS);
        let edited: Vec<&str> = manifest
            .lines()
            .map(|line| {
                if line.starts_with("matches:") {
                    "matches: \"**/*.md\""
                } else {
                    line
                }
            })
            .collect();
        project.write(REQUIRED_SECTIONS, &(edited.join("\n") + "\n"));
        let run = project.run(&GATE_CHECK);
        assert_eq!(run.status, 2, "{version}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("is stale: its sources compile to another graph")
                && run
                    .stderr
                    .contains("no aidlc compile of these sources is recorded"),
            "{version}: {}",
            run.stderr
        );
    }
}

#[test]
fn engine_gate_start_refuses_a_stale_graph() {
    let (project, _) = example_project();
    make_blocking(&project, REQUIRED_SECTIONS);
    let run = project.run(&["engine", "gate", "start", "user-stories"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error: the stage graph .claude/tools/data/stage-graph.json is stale: its sources compile to another graph"
        ) && run.stderr.contains(
            "help: run `aidlc compile` to rebuild it from its sources, then run the gate step again (nothing was written; a stale graph exits 2)"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

// --- A blocking binding that never fired has not passed -----------------------------------------

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

// --- Nothing checked is not green ---------------------------------------------------------------

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

// --- The staleness bracket: a worker that edits its file is not evaluated -----------------------

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

// --- Deliverables that are not regular files are skipped, never opened --------------------------

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
