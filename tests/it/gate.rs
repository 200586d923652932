//! `aidlc gate check` end to end: which deliverables fire, parallel and sharded runs, hermetic
//! `--no-record`, refusals, and exit codes (D4, D6, D9).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{Run, TestProject};

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
/// ids being the ledger's (issue 16). Serial (`--jobs 1`) so that an unbatched run would
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
    for format in ["human", "sarif", "github", "gitlab", "junit"] {
        let run = project.run(&["gate", "check", "--jobs", "1", "--format", format]);
        assert_eq!(run.status, 3, "{format}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("artifact-changed"),
            "{format}: {}",
            run.stdout
        );
    }
}
