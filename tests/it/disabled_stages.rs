//! Stages the plugin selection disabled, at run time (docs/decisions.md D49): the compile
//! writes `"enabled": false` on an unselected plugin's nodes (D14), and the runtime leaves
//! those nodes out as the reference's loader does. The write hook fires nothing for a disabled
//! stage; a gate asked for one by name refuses with its plugin and the fix; a check over every
//! stage says how many it skipped, and a graph whose every stage is disabled checks nothing,
//! which is exit 2.

use crate::support::{GRAPH, Run, TestProject, stage};

const RECORD: &str = "aidlc/spaces/default/intents/261201-demo";
const HARNESS_JSON: &str = ".claude/tools/data/harness.json";
const EXTRA_OUTPUT: &str =
    "aidlc/spaces/default/intents/261201-demo/inception/extra-stage/extra-stage-doc.md";
const FIRST_OUTPUT: &str =
    "aidlc/spaces/default/intents/261201-demo/inception/first-stage/first-stage-doc.md";

/// A core stage and a stage of plugin `extra`, both importing the write-fired sensor `fake`
/// (a worker that passes), an intent whose current stage is `current`, both deliverables
/// written, and `harness.json` selecting `plugins` (none: the key left out).
fn project(plugins: Option<&str>, current: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        ".claude/sensors/aidlc-fake.md",
        "---\nid: fake\nkind: deterministic\ncommand: sh fake-worker.sh\ndefault_severity: advisory\ndescription: A fake sensor for tests\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# fake\n",
    );
    project.write(
        "fake-worker.sh",
        "#!/bin/sh\necho '{\"pass\":true,\"findings_count\":0}'\n",
    );
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", "inception", "[]", "[fake]", ""),
    );
    project.write(
        ".claude/aidlc-common/stages/inception/extra-stage.md",
        &stage(
            "extra-stage",
            "inception",
            "[]",
            "[fake]",
            "plugin: extra\n",
        ),
    );
    let plugins = plugins.map_or(String::new(), |list| format!(",\n  \"plugins\": {list}"));
    project.write(
        HARNESS_JSON,
        &format!("{{\n  \"harnessDir\": \".claude\"{plugins}\n}}\n"),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("# State\n\n- **Current Stage**: {current}\n"),
    );
    project.write(EXTRA_OUTPUT, "# Extra stage doc\n");
    project.write(FIRST_OUTPUT, "# First stage doc\n");
    project
}

/// Every audit row of the record, as text (empty when no shard exists).
fn audit_text(project: &TestProject) -> String {
    let Ok(entries) = std::fs::read_dir(project.path(&format!("{RECORD}/audit"))) else {
        return String::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
        .collect()
}

fn run_hook(project: &TestProject, written: &str) -> Run {
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(written)}}).to_string();
    project.run_watched(&["engine", "hook", "run-sensors"], &[], Some(&payload))
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
fn the_compile_marks_the_unselected_plugin_s_stage_disabled() {
    let selected = project(Some("[\"aidlc\"]"), "first-stage");
    let graph: serde_json::Value = serde_json::from_str(&selected.read(GRAPH)).unwrap();
    let enabled: Vec<(String, Option<bool>)> = graph
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            (
                node["slug"].as_str().unwrap().to_owned(),
                node.get("enabled").and_then(serde_json::Value::as_bool),
            )
        })
        .collect();
    assert!(enabled.contains(&("extra-stage".to_owned(), Some(false))));
    assert!(enabled.contains(&("first-stage".to_owned(), None)));
}

#[test]
fn the_write_hook_fires_nothing_for_a_disabled_stage_and_drops_nothing() {
    let disabled = project(Some("[\"aidlc\"]"), "extra-stage");
    let run = run_hook(&disabled, EXTRA_OUTPUT);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        !audit_text(&disabled).contains("SENSOR_FIRED"),
        "{}",
        audit_text(&disabled)
    );
    assert_eq!(drops(&disabled), "", "a disabled stage is no lost write");
    // The same write with every plugin selected fires the sensor: the test can fail.
    let enabled = project(None, "extra-stage");
    let run = run_hook(&enabled, EXTRA_OUTPUT);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(audit_text(&enabled).matches("SENSOR_FIRED").count(), 1);
    // And an enabled stage of the same graph still fires.
    let core = project(Some("[\"aidlc\"]"), "first-stage");
    assert_eq!(run_hook(&core, FIRST_OUTPUT).status, 0);
    assert_eq!(audit_text(&core).matches("SENSOR_FIRED").count(), 1);
}

fn assert_names_the_stage_plugin_and_fix(run: &Run) {
    assert_eq!(run.status, 2, "{}\n{}", run.stdout, run.stderr);
    for expected in [
        "stage \"extra-stage\" is disabled",
        "plugin \"extra\"",
        HARNESS_JSON,
        "add \"extra\" to `plugins`",
        "remove the `plugins` key",
    ] {
        assert!(
            run.stderr.contains(expected),
            "{expected:?} missing from: {}",
            run.stderr
        );
    }
}

#[test]
fn a_gate_on_a_disabled_stage_refuses_with_its_plugin_and_the_fix() {
    let project = project(Some("[\"aidlc\"]"), "extra-stage");
    let start = project.run(&["engine", "gate", "start", "extra-stage"]);
    assert_names_the_stage_plugin_and_fix(&start);
    let revise = project.run(&["engine", "gate", "revise", "extra-stage"]);
    assert_names_the_stage_plugin_and_fix(&revise);
    let check = project.run(&["gate", "check", "--no-record", "--stage", "extra-stage"]);
    assert_names_the_stage_plugin_and_fix(&check);
    assert!(
        !audit_text(&project).contains("GATE"),
        "a refused gate writes no row: {}",
        audit_text(&project)
    );
}

#[test]
fn a_check_of_every_stage_skips_the_disabled_ones_and_says_so() {
    let project = project(Some("[\"aidlc\"]"), "first-stage");
    let check = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--fire-on",
        "all",
        "--format",
        "json",
    ]);
    assert_eq!(check.status, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stderr.contains(
            "note: 1 disabled stage skipped (plugin \"extra\" not selected by `plugins` in .claude/tools/data/harness.json): extra-stage"
        ),
        "{}",
        check.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("first-stage"), "{text}");
    assert!(!text.contains("extra-stage"), "{text}");
    // With every plugin selected, nothing is skipped and nothing is said.
    let every = self::project(None, "first-stage");
    let check = every.run(&["gate", "check", "--no-record", "--fire-on", "all"]);
    assert!(!check.stderr.contains("disabled"), "{}", check.stderr);
}

#[test]
fn a_graph_whose_every_stage_is_disabled_checks_nothing_and_exits_2() {
    let project = project(Some("[]"), "first-stage");
    let graph = project.read(GRAPH);
    assert_eq!(graph.matches("\"enabled\": false").count(), 2, "{graph}");
    let check = project.run(&["gate", "check", "--no-record", "--fire-on", "all"]);
    assert_eq!(check.status, 2, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check
            .stderr
            .contains("every stage of the graph is disabled (2 stages"),
        "{}",
        check.stderr
    );
    // --allow-empty does not turn it green: the selection, not an empty record, emptied it.
    let allowed = project.run(&["gate", "check", "--no-record", "--allow-empty"]);
    assert_eq!(allowed.status, 2, "{}", allowed.stderr);
}
