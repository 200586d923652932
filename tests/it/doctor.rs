//! `aidlc doctor`, each row driven to pass and to fail (or warn), in human and
//! JSON form, exit 1 when a row fails, and nothing written (not even the reference doctor's
//! `GUARDRAIL_LOADED` row).

use serde_json::Value;

use crate::support::{Run, SearchPath, TestProject, audit_lock_path};

const STAGE_FILE: &str = ".claude/aidlc-common/stages/inception/first-stage.md";

/// A compiled minimal project with both hooks registered to this test's own binary (an
/// executable that exists), and fake eslint and tsc in `node_modules/.bin`.
fn healthy() -> TestProject {
    let project = TestProject::minimal();
    assert_eq!(project.compile().status, 0);
    let program = env!("CARGO_BIN_EXE_aidlc");
    let installed = project.run(&["hook", "install", "--program", program]);
    assert_eq!(installed.status, 0, "{}", installed.stderr);
    fake_tool(&project, "eslint", "echo v9.9.9");
    fake_tool(&project, "tsc", "echo Version 5.5.5");
    project
}

fn fake_tool(project: &TestProject, name: &str, body: &str) {
    let path = format!("node_modules/.bin/{name}");
    project.write(&path, &format!("#!/bin/sh\n{body}\n"));
    set_executable(&project.path(&path));
}

fn set_executable(path: &camino::Utf8Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `PATH` of one empty folder: no Node tool, no Bun, whatever the machine has installed.
fn no_programs() -> SearchPath {
    SearchPath::of_programs_found_on(&[], "".as_ref())
}

/// `aidlc doctor --format json` with a `PATH` that finds no program (no Node tools, no Bun).
fn doctor(project: &TestProject) -> (Run, Vec<Value>) {
    let no_programs = no_programs();
    let run = project.run_with_env(
        &["doctor", "--format", "json"],
        &[("PATH", no_programs.as_str())],
    );
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}{}", run.stdout, run.stderr));
    let rows = report["rows"].as_array().unwrap().clone();
    (run, rows)
}

/// The row whose label starts with `prefix`.
fn row<'r>(rows: &'r [Value], prefix: &str) -> &'r Value {
    rows.iter()
        .find(|row| row["label"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no row {prefix:?} in {rows:#?}"))
}

fn status<'r>(rows: &'r [Value], prefix: &str) -> &'r str {
    row(rows, prefix)["status"].as_str().unwrap()
}

/// Every file of the project, with its bytes.
fn snapshot(project: &TestProject) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut folders = vec![project.root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in folder.read_dir_utf8().unwrap() {
            let path = entry.unwrap().path().to_owned();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push((path.to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn a_healthy_project_passes_every_row_and_nothing_is_written() {
    let project = healthy();
    let before = snapshot(&project);
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 0, "{rows:#?}");
    for row in &rows {
        assert_eq!(row["status"], "pass", "{row}");
        assert!(row.get("fix").is_none(), "{row}");
    }
    assert!(
        row(&rows, "Linter:")["label"]
            .as_str()
            .unwrap()
            .starts_with("Linter: eslint v9.9.9 ("),
        "{rows:#?}"
    );
    assert!(
        row(&rows, "Type-check:")["label"]
            .as_str()
            .unwrap()
            .contains("tsc Version 5.5.5"),
        "{rows:#?}"
    );
    assert_eq!(snapshot(&project), before, "doctor writes nothing");
    let no_programs = no_programs();
    let human = project.run_with_env(&["doctor"], &[("PATH", no_programs.as_str())]);
    assert_eq!(human.status, 0);
    assert!(
        human.stdout.starts_with("aidlc doctor\n"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("\u{2713}  Compile: 2 stages and 1 sensors, no errors\n"),
        "{}",
        human.stdout
    );
}

#[test]
fn compile_errors_and_drift_fail() {
    let project = healthy();
    let stage = project.read(STAGE_FILE);
    project.write(STAGE_FILE, &stage.replace("Always runs", "Runs always"));
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert_eq!(status(&rows, "Stage graph drift"), "fail", "{rows:#?}");
    assert!(
        row(&rows, "Stage graph drift")["label"]
            .as_str()
            .unwrap()
            .contains("changed: first-stage"),
        "{rows:#?}"
    );
    project.write(
        STAGE_FILE,
        &stage.replace("lead_agent: aidlc-demo-agent", "lead_agent: nobody"),
    );
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert_eq!(status(&rows, "Compile:"), "fail", "{rows:#?}");
    project.write(STAGE_FILE, &stage);
    project.remove(crate::support::GRAPH);
    let (_, rows) = doctor(&project);
    assert_eq!(status(&rows, "Stage graph:"), "fail", "{rows:#?}");
}

#[test]
fn dead_bindings_fail_when_blocking_and_warn_when_advisory() {
    let project = healthy();
    let manifest = ".claude/sensors/aidlc-demo-check.md";
    let advisory = project.read(manifest).replace(
        "matches: \"**/*.md\"",
        "fire_on: gate\nmatches: \"**/*.never\"",
    );
    project.write(manifest, &advisory);
    let (_, rows) = doctor(&project);
    assert_eq!(status(&rows, "Dead sensor bindings"), "warn", "{rows:#?}");
    project.write(
        manifest,
        &advisory.replace("default_severity: advisory", "default_severity: blocking"),
    );
    let (run, rows) = doctor(&project);
    assert_eq!(status(&rows, "Dead sensor bindings"), "fail", "{rows:#?}");
    assert_eq!(run.status, 1);
}

#[test]
fn files_discovery_skips_warn_with_the_path_that_loads_them() {
    let project = healthy();
    project.write(".claude/sensors/Lint.md", "# not loaded\n");
    project.write(
        ".claude/aidlc-common/stages/inception/third.markdown",
        "---\n---\n",
    );
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 0, "a warning does not fail: {rows:#?}");
    let skipped = row(&rows, "Files discovery skips");
    assert_eq!(skipped["status"], "warn");
    let fix = skipped["fix"].as_str().unwrap();
    assert!(fix.contains("aidlc-lint.md"), "{fix}");
    assert!(
        fix.contains(".claude/aidlc-common/stages/inception/third.md"),
        "{fix}"
    );
}

#[test]
fn a_pairing_that_names_no_manifest_fails_and_coverage_names_it() {
    let project = healthy();
    let (_, rows) = doctor(&project);
    assert_eq!(status(&rows, "Rule pairings"), "pass");
    project.write(
        "aidlc/spaces/default/memory/org.md",
        "---\npairing: aidlc-demo-check\n---\n# Org\n",
    );
    project.write(
        "aidlc/spaces/default/memory/team.md",
        "---\npairing: aidlc-missing-check\n---\n# Team\n",
    );
    project.write(
        "aidlc/spaces/default/memory/project.md",
        "---\npairing: feedforward-only\n---\n# Project\n",
    );
    assert_eq!(project.compile().status, 0);
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert_eq!(
        row(&rows, "Paired sensor coverage")["label"],
        "Paired sensor coverage: 1/2 guardrails paired (1 feedforward-only); unpaired: aidlc/spaces/default/memory/team.md → aidlc-missing-check (no stage binds it)"
    );
    assert_eq!(status(&rows, "Paired sensor coverage"), "pass");
    assert_eq!(status(&rows, "Rule pairings"), "fail", "{rows:#?}");
}

#[test]
fn the_hooks_fail_unregistered_or_pointing_at_nothing() {
    let project = healthy();
    project.remove(".claude/settings.json");
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert_eq!(status(&rows, "Write hook"), "fail");
    assert_eq!(status(&rows, "Human-turn hook"), "warn");
    assert!(
        row(&rows, "Write hook")["fix"]
            .as_str()
            .unwrap()
            .contains("aidlc hook install"),
    );
    let installed = project.run(&["hook", "install", "--program", "/nowhere/aidlc"]);
    assert_eq!(installed.status, 0);
    let (_, rows) = doctor(&project);
    assert_eq!(status(&rows, "Write hook"), "fail");
    assert!(
        row(&rows, "Write hook")["label"]
            .as_str()
            .unwrap()
            .contains("/nowhere/aidlc is not an executable file"),
        "{rows:#?}"
    );
    project.write(".claude/settings.json", "{\"hooks\": [}");
    let (_, rows) = doctor(&project);
    assert!(
        row(&rows, "Write hook")["label"]
            .as_str()
            .unwrap()
            .contains("is not valid JSON (line 1, column 12)"),
        "{rows:#?}"
    );
}

#[test]
fn node_tools_warn_when_missing_and_fail_when_broken() {
    let project = healthy();
    project.remove("node_modules");
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 0);
    assert_eq!(status(&rows, "Linter:"), "warn");
    assert_eq!(status(&rows, "Type-check:"), "warn");
    fake_tool(&project, "biome", "echo 'Version: 1.9.4'");
    fake_tool(&project, "tsc", "echo broken >&2; exit 3");
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert!(
        row(&rows, "Linter:")["label"]
            .as_str()
            .unwrap()
            .starts_with("Linter: biome Version: 1.9.4"),
        "{rows:#?}"
    );
    assert_eq!(status(&rows, "Type-check:"), "fail");
}

#[test]
fn a_torn_shard_a_stale_lock_and_stale_temporaries_warn() {
    let project = healthy();
    project.write(
        "aidlc/spaces/default/intents/261201-demo/aidlc-state.md",
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write("aidlc/.aidlc-clone-id", "0123456789ab\n");
    let (_, rows) = doctor(&project);
    assert_eq!(status(&rows, "Audit shard"), "pass");
    assert_eq!(status(&rows, "Audit lock"), "pass");
    assert_eq!(status(&rows, "Temporary files"), "pass");
    let host = aidlc::runtime::workspace::host_name();
    project.write(
        &format!("aidlc/spaces/default/intents/261201-demo/audit/{host}-0123456789ab.md"),
        "# AI-DLC Audit Log\n\n## Human Turn\n**Timestamp**: 2026-12-01T10:00:00Z\n**Event**: HUMAN_TURN\n\n---\n\n## Sensor Fired\n**Timestamp**: 2026-12-01T10:00:01Z\n**Event**: SENS",
    );
    let lock = audit_lock_path(&project);
    std::fs::create_dir_all(&lock).unwrap();
    std::fs::write(
        lock.join("owner.json"),
        "{\"pid\":999999,\"startedAtMs\":1,\"token\":\"t\"}",
    )
    .unwrap();
    project.write(
        ".claude/tools/data/.stage-graph.json.aidlc-999999-0123456789ab.tmp",
        "{",
    );
    let (run, rows) = doctor(&project);
    let _ = std::fs::remove_dir_all(&lock);
    assert_eq!(run.status, 0, "{rows:#?}");
    assert_eq!(status(&rows, "Audit shard"), "warn", "{rows:#?}");
    assert!(
        row(&rows, "Audit shard")["label"]
            .as_str()
            .unwrap()
            .contains("1 torn piece (first at line 9"),
        "{rows:#?}"
    );
    assert_eq!(status(&rows, "Audit lock"), "warn", "{rows:#?}");
    assert_eq!(status(&rows, "Temporary files"), "warn", "{rows:#?}");
    assert!(
        row(&rows, "Temporary files")["label"]
            .as_str()
            .unwrap()
            .contains(".claude/tools/data/.stage-graph.json.aidlc-999999-0123456789ab.tmp"),
        "{rows:#?}"
    );
}

#[test]
fn hook_heartbeats_pass_and_drops_warn_or_fail_where_the_install_keeps_them() {
    let project = healthy();
    let record = "aidlc/spaces/default/intents/261201-demo";
    project.write(
        &format!("{record}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    let (_, rows) = doctor(&project);
    assert_eq!(
        row(&rows, "Hook heartbeats")["label"],
        "Hook heartbeats: not yet fired (first workflow stage will populate)"
    );
    assert_eq!(
        row(&rows, "Hook drops")["label"],
        "Hook drops: none recorded"
    );
    let health = format!("{record}/.aidlc-hooks-health");
    project.write(
        &format!("{health}/run-sensors.last"),
        "2026-12-01T10:00:00Z\n",
    );
    project.write(
        &format!("{health}/run-sensors.drops"),
        "2026-12-01T10:00:00Z\tno graph\n2026-12-01T10:05:00Z\tpayload unreadable\n",
    );
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 0);
    assert_eq!(
        row(&rows, "Hooks last fired")["label"],
        "Hooks last fired: run-sensors 2026-12-01T10:00:00Z"
    );
    let drops = row(&rows, "Hook drops recorded");
    assert_eq!(drops["status"], "warn");
    assert_eq!(
        drops["label"],
        "Hook drops recorded (advisory): run-sensors x2 (last 2026-12-01T10:05:00Z)"
    );
    project.write(
        &format!("{health}/compose.drops"),
        "2026-12-01T10:06:00Z\t[degraded] plugin dropped\n",
    );
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert_eq!(status(&rows, "Hook drops (compose)"), "fail", "{rows:#?}");
}

/// The rows both doctors print say the same on the 2.6.54 install: paired sensor coverage, the
/// graph's orphan and uncompiled stage files, and the hooks' heartbeats and drops (with a heartbeat and drops written where that version keeps
/// them).
#[test]
fn the_shared_rows_read_as_the_reference_doctor_prints_them() {
    let Some(bun) = crate::support::node_tool("bun") else {
        return;
    };
    let project = TestProject::reference_install("2.6.54");
    let record = "aidlc/spaces/default/intents/261201-demo";
    project.write(
        &format!("{record}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: user-stories\n",
    );
    let health = format!("{record}/.aidlc-hooks-health");
    project.write(
        &format!("{health}/run-sensors.last"),
        "2026-12-01T10:00:00Z\n",
    );
    project.write(
        &format!("{health}/run-sensors.drops"),
        "2026-12-01T10:05:00Z\tpayload unreadable\n",
    );
    let output = std::process::Command::new(bun.as_str())
        .args([".claude/tools/aidlc-utility.ts", "doctor"])
        .current_dir(&project.root)
        .env("CLAUDE_PROJECT_DIR", project.root.as_str())
        .output()
        .expect("run the reference doctor");
    let reference = String::from_utf8_lossy(&output.stdout).into_owned();
    let (_, rows) = doctor(&project);
    for prefix in [
        "Paired sensor coverage",
        "Hooks last fired",
        "Hook drops recorded",
    ] {
        let theirs = reference
            .lines()
            .find_map(|line| {
                line.split_once("  ")
                    .map(|(_, label)| label)
                    .filter(|label| label.starts_with(prefix))
            })
            .unwrap_or_else(|| panic!("the reference prints no {prefix:?} row: {reference}"));
        let ours = row(&rows, prefix)["label"].as_str().unwrap();
        if prefix == "Hook drops recorded" {
            // The reference's label goes on with its advice; ours puts advice in the fix.
            assert!(theirs.starts_with(ours), "{theirs:?} vs {ours:?}");
        } else {
            assert_eq!(ours, theirs);
        }
    }
}

#[test]
fn graph_entries_without_a_file_fail_and_files_not_yet_compiled_warn() {
    let project = healthy();
    let (_, rows) = doctor(&project);
    assert_eq!(
        row(&rows, "Orphan stage files")["label"],
        "Orphan stage files: 2 graph entries all have files"
    );
    assert_eq!(
        row(&rows, "Uncompiled stage files")["label"],
        "Uncompiled stage files: 0 stage files missing from the compiled graph"
    );
    project.write(
        ".claude/aidlc-common/stages/inception/third-stage.md",
        &crate::support::stage("third-stage", "inception", "[]", "[]", ""),
    );
    let (_, rows) = doctor(&project);
    assert_eq!(status(&rows, "Uncompiled stage files"), "warn");
    assert!(
        row(&rows, "Uncompiled stage files")["label"]
            .as_str()
            .unwrap()
            .ends_with(": third-stage"),
        "{rows:#?}"
    );
    project.remove(".claude/aidlc-common/stages/inception/third-stage.md");
    project.remove(".claude/aidlc-common/stages/inception/second-stage.md");
    let (run, rows) = doctor(&project);
    assert_eq!(run.status, 1);
    assert_eq!(status(&rows, "Orphan stage files"), "fail", "{rows:#?}");
    assert!(
        row(&rows, "Orphan stage files")["label"]
            .as_str()
            .unwrap()
            .contains("(second-stage)"),
        "{rows:#?}"
    );
}

/// Under a plugin selection the disabled stages are in the compiled graph as
/// `"enabled": false`: the graph-entry rows count them as the reference's doctor does (every
/// entry has its file, no stage file is uncompiled).
#[test]
fn the_graph_rows_count_the_stages_a_selection_disabled_as_the_reference_doctor_does() {
    let Some(bun) = crate::support::node_tool("bun") else {
        return;
    };
    let shelf = crate::plugins::PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    let project = TestProject::reference_install("2.5.36");
    let path = crate::plugins::path_with(&bun);
    let added = project.run_with_env(&["plugin", "add", projection.as_str()], &[("PATH", &path)]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    let selected = crate::plugins::reference_select_plugins(&bun, &project, &["test-pro"]);
    assert_eq!(selected.status, 0, "{}", selected.stderr);
    let graph: Value = serde_json::from_str(&project.read(crate::support::GRAPH)).unwrap();
    let disabled = graph
        .as_array()
        .unwrap()
        .iter()
        .filter(|stage| stage["enabled"] == false)
        .count();
    assert_eq!(disabled, 29, "the stages test-pro's selection disables");

    let output = std::process::Command::new(bun.as_str())
        .args([".claude/tools/aidlc-utility.ts", "doctor"])
        .current_dir(&project.root)
        .env("CLAUDE_PROJECT_DIR", project.root.as_str())
        .env_remove("AIDLC_PROJECT_DIR")
        .output()
        .expect("run the reference doctor");
    let reference = String::from_utf8_lossy(&output.stdout).into_owned();
    let (_, rows) = doctor(&project);
    for (prefix, expected) in [
        (
            "Orphan stage files",
            "Orphan stage files: 34 graph entries all have files",
        ),
        (
            "Uncompiled stage files",
            "Uncompiled stage files: 0 stage files missing from the compiled graph",
        ),
    ] {
        assert!(
            reference.lines().any(|line| line.ends_with(expected)),
            "the reference doctor prints {expected:?}: {reference}"
        );
        assert_eq!(row(&rows, prefix)["label"], expected, "{rows:#?}");
        assert_eq!(status(&rows, prefix), "pass");
    }
}

/// `aidlc doctor` writes nothing and takes no audit lock, not even once the
/// record has an audit shard (here another clone's): no `GUARDRAIL_LOADED` row, no shard, no
/// clone id, and a stale lock it reports stays as it was (taking the lock would have reaped
/// it), so a read-only checkout cannot make it fail. The `GUARDRAIL_LOADED` row is the
/// reference doctor's to record: run with Bun, the 2.6.54 install's own doctor appends it.
#[test]
fn doctor_writes_nothing_and_takes_no_lock_even_once_the_record_has_an_audit_shard() {
    let project = TestProject::reference_install("2.6.54");
    let record = "aidlc/spaces/default/intents/261201-demo";
    project.write(
        &format!("{record}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: user-stories\n",
    );
    project.write(
        &format!("{record}/audit/other-host-aaaaaaaaaaaa.md"),
        "# AI-DLC Audit Log\n\n## Human Turn\n**Timestamp**: 2026-12-01T10:00:00Z\n**Event**: HUMAN_TURN\n\n---\n",
    );
    let lock = audit_lock_path(&project);
    std::fs::create_dir_all(&lock).unwrap();
    let stamp = "{\"pid\":999999,\"startedAtMs\":1,\"token\":\"t\"}";
    std::fs::write(lock.join("owner.json"), stamp).unwrap();
    let before = snapshot(&project);
    let (run, rows) = doctor(&project);
    let lock_kept = std::fs::read_to_string(lock.join("owner.json")).ok();
    let _ = std::fs::remove_dir_all(&lock);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert_eq!(status(&rows, "Audit lock"), "warn", "{rows:#?}");
    assert_eq!(
        lock_kept.as_deref(),
        Some(stamp),
        "the stale lock was not taken"
    );
    assert_eq!(snapshot(&project), before, "doctor writes nothing");
    let rows_of = |event: &str| {
        crate::support::ledger_blocks(&project, record)
            .into_iter()
            .filter(|block| block.event() == event)
            .count()
    };
    assert_eq!(rows_of("GUARDRAIL_LOADED"), 0);
    let Some(bun) = crate::support::node_tool("bun") else {
        return;
    };
    let output = std::process::Command::new(bun.as_str())
        .args([".claude/tools/aidlc-utility.ts", "doctor"])
        .current_dir(&project.root)
        .env("CLAUDE_PROJECT_DIR", project.root.as_str())
        .output()
        .expect("run the reference doctor");
    assert!(output.status.code().is_some(), "the reference doctor ran");
    assert_eq!(
        rows_of("GUARDRAIL_LOADED"),
        1,
        "the reference's doctor records its own row"
    );
}

#[test]
fn a_row_names_each_input_read_through_a_link_that_leaves_the_project() {
    let (project, shared) = crate::compile::project_with_inputs_linked_outside();
    let (_, rows) = doctor(&project);
    let linked = row(&rows, "Linked inputs");
    assert_eq!(linked["status"], "warn", "{linked}");
    let label = linked["label"].as_str().unwrap();
    let shared = shared.path().canonicalize().unwrap();
    assert!(
        label.contains("2 files")
            && label.contains(".claude/sensors/aidlc-demo-check.md -> ")
            && label.contains(&*shared.to_string_lossy()),
        "{label}"
    );

    let (_, rows) = doctor(&TestProject::minimal());
    assert_eq!(status(&rows, "Linked inputs"), "pass");
}

/// How many dead bindings the doctor row counts (`none` is 0).
fn doctor_dead_binding_count(rows: &[Value]) -> usize {
    let label = row(rows, "Dead sensor bindings")["label"].as_str().unwrap();
    let count = label
        .trim_start_matches("Dead sensor bindings: ")
        .split([' ', '('])
        .next()
        .unwrap();
    if count == "none" {
        0
    } else {
        count.parse().unwrap()
    }
}

/// How many dead bindings `gate check --fire-on all` reports for a new intent.
fn gate_dead_binding_count(project: &TestProject) -> usize {
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--fire-on",
        "all",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}{}", run.stdout, run.stderr));
    report["dead_bindings"].as_array().unwrap().len()
}

/// `doctor` and `gate check` give one answer on dead bindings: a write-fired binding selected
/// by `--fire-on all` is no dead binding for either, and a gate-fired one whose glob matches
/// no output is one for both.
#[test]
fn doctor_and_gate_check_count_the_same_dead_bindings() {
    let reference = TestProject::reference_install("2.6.54");
    assert_eq!(reference.compile().status, 0);
    let intent = reference.run(&["engine", "intent", "new", "demo"]);
    assert_eq!(intent.status, 0, "{}", intent.stderr);
    let (_, rows) = doctor(&reference);
    assert_eq!(doctor_dead_binding_count(&rows), 0, "{rows:#?}");
    assert_eq!(gate_dead_binding_count(&reference), 0);

    let project = healthy();
    let intent = project.run(&["engine", "intent", "new", "demo"]);
    assert_eq!(intent.status, 0, "{}", intent.stderr);
    let manifest = ".claude/sensors/aidlc-demo-check.md";
    let dead = project.read(manifest).replace(
        "matches: \"**/*.md\"",
        "fire_on: gate\nmatches: \"**/*.never\"",
    );
    project.write(manifest, &dead);
    assert_eq!(project.compile().status, 0);
    let (_, rows) = doctor(&project);
    let counted = doctor_dead_binding_count(&rows);
    assert!(counted >= 1, "{rows:#?}");
    assert_eq!(gate_dead_binding_count(&project), counted);
}
