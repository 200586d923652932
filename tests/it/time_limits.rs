//! The enclosing time limits above each fire's own cap: the write hook's allowance
//! (`AIDLC_SENSOR_TIMEOUT_MS`, the project's then the user's `sensorTimeoutMs`), the gate's
//! dispatch cap (`AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS`) and `gate check --timeout`. The
//! workers sleep far past the limits and would pass if they finished: a limit that runs out
//! must stop them (their whole group), record that nothing was checked, and never pass.

use aidlc::runtime::audit::ledger::{AuditBlock, parse_blocks};

use crate::support::{Run, TestProject, pair_fires, stage};

const RECORD: &str = "aidlc/spaces/default/intents/261201-limits";
const OUTPUT: &str =
    "aidlc/spaces/default/intents/261201-limits/inception/first-stage/first-stage-doc.md";
const DROPS: &str =
    "aidlc/spaces/default/intents/261201-limits/.aidlc-hooks-health/run-sensors.drops";

/// A worker that records its pid and a background child's, sleeps 5 s, then passes.
const SLEEPER: &str = "#!/bin/sh\necho $$ >> worker.pids\nsleep 100 &\necho $! >> worker.pids\nsleep 5\necho '{\"pass\":true,\"findings_count\":0}'\n";

/// A compiled project whose stage `first-stage` binds the sleeping sensors `ids` (each with
/// `fire_on` and `severity`), an intent record on that stage, and its deliverable.
fn project_with_sleepers(ids: &[&str], fire_on: &str, severity: &str) -> TestProject {
    let project = TestProject::empty();
    for id in ids {
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &format!(
                "---\nid: {id}\nkind: deterministic\ncommand: sh sleeper.sh\ndefault_severity: {severity}\nfire_on: {fire_on}\ntimeout_seconds: 60\ndescription: Sleeps past every enclosing limit\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {id}\n"
            ),
        );
    }
    project.write("sleeper.sh", SLEEPER);
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage(
            "first-stage",
            "inception",
            "[]",
            &format!("[{}]", ids.join(", ")),
            "",
        ),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(OUTPUT, "# First stage doc\n\n## One\n\n## Two\n");
    project
}

fn hook(project: &TestProject, env: &[(&str, &str)]) -> Run {
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    project.run_watched(&["engine", "hook", "run-sensors"], env, Some(&payload))
}

fn audit_blocks(project: &TestProject) -> Vec<AuditBlock> {
    let Ok(entries) = std::fs::read_dir(project.path(&format!("{RECORD}/audit"))) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .flat_map(|entry| parse_blocks(&std::fs::read_to_string(entry.path()).unwrap()))
        .collect()
}

/// Every pid the sleepers wrote is gone (or a zombie nobody waits for).
fn assert_no_worker_survives(project: &TestProject) {
    let pids = project.read("worker.pids");
    assert!(!pids.trim().is_empty(), "the worker ran");
    for pid in pids.split_whitespace() {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        assert!(
            status.is_empty() || status.contains("State:\tZ"),
            "worker process {pid} still runs: {status}"
        );
    }
}

/// The one fire's terminal row: a noted `SENSOR_PASSED` whose note says it was cut short.
fn assert_cut_short_row(project: &TestProject, limit: &str) {
    let blocks = audit_blocks(project);
    let fires = pair_fires(&blocks);
    assert_eq!(fires.len(), 1, "{blocks:?}");
    let terminal = fires[0].terminal.expect("a terminal row");
    assert_eq!(terminal.event, "SENSOR_PASSED");
    assert_eq!(
        terminal.field("Note"),
        Some(format!("script-error: cut-short: {limit} ran out").as_str()),
        "{terminal:?}"
    );
}

fn empty_home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn the_hook_s_allowance_stops_the_worker_records_a_drop_and_never_passes() {
    let project = project_with_sleepers(&["sleeper"], "write", "advisory");
    let home = empty_home();
    let run = hook(
        &project,
        &[
            ("AIDLC_SENSOR_TIMEOUT_MS", "1000"),
            ("HOME", home.path().to_str().unwrap()),
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let limit = "the write hook's allowance (AIDLC_SENSOR_TIMEOUT_MS=1000)";
    assert_cut_short_row(&project, limit);
    let drops = project.read(DROPS);
    assert!(
        drops.contains(&format!(
            "sleeper: cut short: {limit} ran out; the write to {OUTPUT} was not checked"
        )),
        "{drops}"
    );
    assert_no_worker_survives(&project);
}

#[test]
fn the_allowance_is_read_from_the_project_settings_then_the_user_s() {
    let project = project_with_sleepers(&["sleeper"], "write", "advisory");
    let home = empty_home();
    let home_dir = camino::Utf8Path::from_path(home.path()).unwrap();
    std::fs::create_dir_all(home_dir.join(".claude")).unwrap();
    let user_settings = home_dir.join(".claude/settings.json");
    std::fs::write(&user_settings, r#"{"sensorTimeoutMs": 1000}"#).unwrap();
    let env = [("HOME", home_dir.as_str())];

    let from_user = hook(&project, &env);
    assert_eq!(from_user.status, 0, "{}", from_user.stderr);
    assert_cut_short_row(
        &project,
        &format!("the write hook's allowance (sensorTimeoutMs=1000 in {user_settings})"),
    );

    // The project's setting comes first.
    project.write(
        ".claude/settings.json",
        r#"{"hooks": {}, "sensorTimeoutMs": 1200}"#,
    );
    let from_project = hook(&project, &env);
    assert_eq!(from_project.status, 0, "{}", from_project.stderr);
    let drops = project.read(DROPS);
    let project_settings = project.path(".claude/settings.json");
    assert!(
        drops.contains(&format!(
            "(sensorTimeoutMs=1200 in {project_settings}) ran out"
        )),
        "{drops}"
    );
    assert_no_worker_survives(&project);
}

#[test]
fn a_malformed_allowance_fires_nothing_and_says_so() {
    let project = project_with_sleepers(&["sleeper"], "write", "advisory");
    let home = empty_home();
    let home_env = ("HOME", home.path().to_str().unwrap());
    let run = hook(&project, &[("AIDLC_SENSOR_TIMEOUT_MS", "soon"), home_env]);
    assert_eq!(run.status, 0);
    assert_eq!(run.stdout, "");
    let expected =
        "AIDLC_SENSOR_TIMEOUT_MS must be a positive whole number of milliseconds, got \"soon\"";
    assert!(run.stderr.contains(expected), "{}", run.stderr);
    assert!(project.read(DROPS).contains(expected));
    assert!(audit_blocks(&project).is_empty(), "nothing fired");

    project.write(".claude/settings.json", r#"{"sensorTimeoutMs": "fast"}"#);
    let run = hook(&project, &[home_env]);
    assert_eq!(run.status, 0);
    let expected = format!(
        "sensorTimeoutMs in {} must be a positive whole number of milliseconds, got \"fast\"",
        project.path(".claude/settings.json")
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(audit_blocks(&project).is_empty(), "nothing fired");
}

#[test]
fn a_gate_fire_cut_short_under_a_blocking_binding_refuses_the_gate() {
    let project = project_with_sleepers(&["sleeper"], "gate", "blocking");
    let cap = [("AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS", "1000")];
    let limit = "the gate's dispatch cap (AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS=1000)";

    let check = project.run_watched(&["gate", "check", "--format", "json"], &cap, None);
    assert_eq!(check.status, 3, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check
            .stdout
            .contains(&format!("script-error: cut-short: {limit} ran out")),
        "{}",
        check.stdout
    );
    assert_cut_short_row(&project, limit);
    assert_no_worker_survives(&project);

    let start = project.run_watched(&["engine", "gate", "start", "first-stage"], &cap, None);
    assert_eq!(start.status, 1, "{}\n{}", start.stdout, start.stderr);
    assert!(
        start
            .stderr
            .contains(&format!("script-error: cut-short: {limit} ran out")),
        "{}",
        start.stderr
    );
    assert!(
        !audit_blocks(&project)
            .iter()
            .any(|block| block.event == "STAGE_AWAITING_APPROVAL"),
        "the gate stays closed"
    );
    assert_no_worker_survives(&project);
}

#[test]
fn gate_check_timeout_bounds_the_whole_run() {
    let project = project_with_sleepers(&["sleeper-a", "sleeper-b"], "gate", "blocking");
    let check = project.run_watched(
        &[
            "gate",
            "check",
            "--timeout",
            "1s",
            "--jobs",
            "1",
            "--format",
            "json",
        ],
        &[],
        None,
    );
    assert_eq!(check.status, 3, "{}\n{}", check.stdout, check.stderr);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).expect("one JSON report");
    let text = report.to_string();
    assert!(
        text.contains("script-error: cut-short: gate check --timeout 1s ran out"),
        "{text}"
    );
    assert!(
        text.contains("not started: gate check --timeout 1s ran out"),
        "{text}"
    );
    assert_eq!(report["counts"]["passed"], 0, "{text}");
    let results: Vec<&str> = report["fires"]
        .as_array()
        .expect("fires")
        .iter()
        .map(|fire| fire["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["not-evaluated", "not-evaluated"], "{text}");
    assert_no_worker_survives(&project);
}

#[test]
fn malformed_gate_limits_are_refused_naming_the_value() {
    let project = project_with_sleepers(&["sleeper"], "gate", "blocking");
    for value in ["0", "soon", "1.5"] {
        let env = [("AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS", value)];
        let expected = format!(
            "AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS must be a positive whole number of milliseconds, got \"{value}\""
        );
        for args in [
            &["gate", "check"][..],
            &["engine", "gate", "start", "first-stage"][..],
        ] {
            let run = project.run_with_env(args, &env);
            assert_eq!(run.status, 2, "{args:?} {value}: {}", run.stderr);
            assert!(run.stderr.contains(&expected), "{args:?}: {}", run.stderr);
        }
    }
    for value in ["90", "soon", "0s", "1.5m"] {
        let run = project.run(&["gate", "check", "--timeout", value]);
        assert_eq!(run.status, 2, "{value}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("\"{value}\" is not a duration")),
            "{value}: {}",
            run.stderr
        );
    }
    assert!(audit_blocks(&project).is_empty(), "nothing fired");
}
