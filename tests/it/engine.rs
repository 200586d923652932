//! `aidlc engine sensor list|describe|fire`, the worker protocol and the write hook, driven
//! through the real binary with small fake workers (shell scripts) the tests write: verdicts,
//! ambiguous output, the lock, values read back from the graph, the worker's processes and
//! signals, special files and output that cannot be written.

use std::collections::BTreeSet;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime};

use aidlc::runtime::audit::ledger::{AuditBlock, parse_blocks};
use serde_json::Value;

use crate::support::scenario_project::{self as scenario, DOC_A, DOC_B, PASS, STAGE_FILE};
use crate::support::stage_with_sensors::{
    PASSING_WORKER, SHAPE_WORKER, STAGE, STAGE_DIR, Sensor, check_json, gate_rows, gate_sensor,
    gate_start, run_bounded, stage_project,
};
use crate::support::{GRAPH, REFERENCE_VERSIONS, Run, TestProject, manifest, pair_fires, stage};

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const OUTPUT: &str =
    "aidlc/spaces/default/intents/261130-demo/inception/first-stage/first-stage-doc.md";

/// A manifest for `id` whose worker is `command`, with `extra` frontmatter lines.
fn fake_manifest(id: &str, command: &str, extra: &str) -> String {
    format!(
        "---\nid: {id}\nkind: deterministic\ncommand: {command}\ndefault_severity: advisory\ndescription: A fake sensor for tests\ncategory: demo\nmatches: \"**/*.md\"\n{extra}---\n\n# {id}\n"
    )
}

/// A compiled project with sensor `fake` (worker: `sh fake-worker.sh`, whose body is
/// `script`), one stage importing it, an intent record on that stage, and the output file.
fn project_with_worker(script: &str, extra_manifest: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        ".claude/sensors/aidlc-fake.md",
        &fake_manifest("fake", "sh fake-worker.sh", extra_manifest),
    );
    project.write("fake-worker.sh", script);
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", "inception", "[]", "[fake]", ""),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(OUTPUT, "# First stage doc\n");
    project
}

const FIRE_ARGS: [&str; 8] = [
    "engine",
    "sensor",
    "fire",
    "fake",
    "--stage",
    "first-stage",
    "--output-path",
    OUTPUT,
];

/// One fire of `fake`, failed if it runs past [`crate::support::HANG`].
fn fire(project: &TestProject) -> Run {
    project.run_watched(&FIRE_ARGS, &[], None)
}

fn verdict(run: &Run) -> Value {
    assert_eq!(run.status, 0, "fire failed: {}", run.stderr);
    let line = run.stdout.trim();
    assert_eq!(line.lines().count(), 1, "one verdict line: {line}");
    serde_json::from_str(line).expect("verdict line is JSON")
}

fn audit_blocks(project: &TestProject) -> Vec<AuditBlock> {
    let audit_dir = project.path(&format!("{RECORD}/audit"));
    let Ok(entries) = std::fs::read_dir(&audit_dir) else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        blocks.extend(parse_blocks(&text));
    }
    blocks
}

fn script(body: &str) -> String {
    format!("#!/bin/sh\n{body}\n")
}

#[test]
fn list_and_describe_the_default_framework() {
    let project = TestProject::default_framework();
    let list = project.run(&["engine", "sensor", "list"]);
    assert_eq!(list.status, 0, "{}", list.stderr);
    let ids: Vec<&str> = list
        .stdout
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "claim-sources",
            "linter",
            "required-sections",
            "traceability",
            "type-check",
            "upstream-coverage"
        ]
    );
    assert!(
        list.stdout
            .lines()
            .all(|line| line.split('\t').count() == 3)
    );
    let linter = project.run(&["engine", "sensor", "describe", "linter"]);
    insta::assert_snapshot!("describe_linter", linter.stdout);
    let gate = project.run(&["engine", "sensor", "describe", "upstream-coverage"]);
    let keys: Vec<&str> = gate
        .stdout
        .lines()
        .map(|line| line.split(':').next().unwrap())
        .collect();
    assert_eq!(
        &keys[..6],
        [
            "id",
            "kind",
            "command",
            "default_severity",
            "fire_on",
            "description"
        ]
    );
    let unknown = project.run(&["engine", "sensor", "describe", "lintr"]);
    assert_eq!(unknown.status, 2);
    assert!(
        unknown
            .stderr
            .contains("unknown sensor id: \"lintr\". Known ids: claim-sources, linter"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_passing_worker_is_an_unnoted_pass_with_two_paired_rows() {
    let project = project_with_worker(
        &script("echo '> npm run check'\necho '{\"pass\": true, \"findings_count\": 0}'"),
        "",
    );
    let verdict = verdict(&fire(&project));
    assert_eq!(verdict["result"], "passed");
    assert_eq!(verdict["output_path"], OUTPUT);
    assert!(verdict.get("note").is_none(), "{verdict}");
    let blocks = audit_blocks(&project);
    let pairs = pair_fires(&blocks);
    assert_eq!(pairs.len(), 1);
    let terminal = pairs[0].terminal.expect("terminal row");
    assert_eq!(terminal.event, "SENSOR_PASSED");
    assert!(terminal.field("Note").is_none());
    assert!(terminal.field("Duration ms").is_some());
    assert_eq!(terminal.field("Output path"), Some(OUTPUT));
}

#[test]
fn a_failing_worker_writes_the_detail_file_and_a_later_pass_prunes_it() {
    let project = project_with_worker(
        &script(
            "if [ -f pass-now ]; then echo '{\"pass\":true,\"findings_count\":0}'; else echo '{\"pass\":false,\"findings_count\":3,\"findings\":[\"a\"]}'; fi",
        ),
        "",
    );
    let failed = verdict(&fire(&project));
    assert_eq!(failed["result"], "failed");
    let detail = failed["detail_path"]
        .as_str()
        .expect("detail path")
        .to_owned();
    assert!(detail.starts_with(&format!("{RECORD}/.aidlc-engine/sensors/first-stage/fake-")));
    let body = project.read(&detail);
    assert!(body.contains("**Pass**: false"), "{body}");
    assert!(
        body.contains(&format!("**Output path**: {}", project.path(OUTPUT))),
        "{body}"
    );
    let blocks = audit_blocks(&project);
    let terminal = pair_fires(&blocks)[0].terminal.expect("terminal");
    assert_eq!(terminal.event, "SENSOR_FAILED");
    assert_eq!(terminal.field("Findings count"), Some("3"));
    assert_eq!(terminal.field("Detail path"), Some(detail.as_str()));

    project.write("pass-now", "");
    let passed = verdict(&fire(&project));
    assert_eq!(passed["result"], "passed");
    assert!(
        !project.exists(&detail),
        "the earlier detail file for this output is pruned"
    );
}

/// Every way a worker can fail to give a verdict is a noted pass (a non-evaluation), never an
/// unnoted one (D4).
#[test]
fn worker_faults_are_recorded_as_non_evaluations() {
    let cases: &[(&str, &str, &str)] = &[
        ("exit 127", "exit 127", "tool-unavailable"),
        ("exit 2", "echo oops >&2; exit 2", "script-error: exit-2"),
        ("SIGKILL", "kill -9 $$", "script-error: signal-SIGKILL"),
        (
            "garbage",
            "echo 'not json at all'",
            "script-error: bad-output",
        ),
        (
            "pass not a boolean",
            "echo '{\"pass\":\"yes\"}'",
            "script-error: bad-output",
        ),
        (
            "50 MB on stdout",
            "head -c 52428800 /dev/zero | tr '\\0' x",
            "script-error: bad-output",
        ),
    ];
    for (name, body, note) in cases {
        let project = project_with_worker(&script(body), "");
        let verdict = verdict(&fire(&project));
        assert_eq!(verdict["result"], "passed", "{name}: {verdict}");
        assert_eq!(verdict["note"], *note, "{name}: {verdict}");
        let blocks = audit_blocks(&project);
        let pairs = pair_fires(&blocks);
        assert_eq!(pairs.len(), 1, "{name}");
        assert_eq!(
            pairs[0].terminal.unwrap().field("Note"),
            Some(*note),
            "{name}"
        );
    }
}

/// D4 replaced the reference's rule (a missing or negative `findings_count` counted 0): such a
/// verdict is bad output, a non-evaluation, never a failure with 0 findings or a pass.
#[test]
fn a_negative_findings_count_is_bad_output() {
    for body in [
        "echo '{\"pass\":false,\"findings_count\":-4}'",
        "echo '{\"pass\":false,\"findings_count\":null}'",
    ] {
        let project = project_with_worker(&script(body), "");
        let verdict = verdict(&fire(&project));
        assert_eq!(verdict["result"], "passed", "{body}");
        assert_eq!(verdict["note"], "script-error: bad-output", "{body}");
        let blocks = audit_blocks(&project);
        let terminal = pair_fires(&blocks)[0].terminal.unwrap();
        assert_eq!(terminal.event, "SENSOR_PASSED", "{body}");
        assert_eq!(
            terminal.field("Note"),
            Some("script-error: bad-output"),
            "{body}"
        );
    }
}

/// The reference reads a missing `findings_count` as 0 (its own fixture worker prints
/// `{"pass": true, "h2_count": 5}`), so a custom worker written for it passes here too (D4).
#[test]
fn a_pass_without_findings_count_is_an_unnoted_pass() {
    let project = project_with_worker(&script("echo '{\"pass\": true, \"h2_count\": 5}'"), "");
    let verdict = verdict(&fire(&project));
    assert_eq!(verdict["result"], "passed", "{verdict}");
    assert!(verdict.get("note").is_none(), "an unnoted pass: {verdict}");
    let blocks = audit_blocks(&project);
    let terminal = pair_fires(&blocks)[0].terminal.unwrap();
    assert_eq!(terminal.event, "SENSOR_PASSED");
    assert_eq!(terminal.field("Note"), None);
}

/// A failure that names no count records the number of its `findings` (or 0), as the
/// reference does.
#[test]
fn a_failure_without_findings_count_records_the_number_of_its_findings() {
    let project = project_with_worker(
        &script("echo '{\"pass\": false, \"findings\": [\"one\", \"two\"]}'"),
        "",
    );
    let verdict = verdict(&fire(&project));
    assert_eq!(verdict["result"], "failed", "{verdict}");
    let blocks = audit_blocks(&project);
    let terminal = pair_fires(&blocks)[0].terminal.unwrap();
    assert_eq!(terminal.event, "SENSOR_FAILED");
    assert_eq!(terminal.field("Findings count"), Some("2"));
}

/// Two lines that each read as a verdict are refused as the reference's parse refuses them,
/// never read as the last one (which would let a later pass hide a failure).
#[test]
fn two_verdict_lines_are_bad_output_not_the_last_one() {
    let project = project_with_worker(
        &script(
            "echo '{\"pass\":false,\"findings_count\":1}'\necho '{\"pass\":true,\"findings_count\":0}'",
        ),
        "",
    );
    let run = fire(&project);
    let verdict = verdict(&run);
    assert_eq!(verdict["result"], "passed", "{verdict}");
    assert_eq!(verdict["note"], "script-error: bad-output", "{verdict}");
    assert!(
        run.stderr.contains("lines that are each a verdict"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_worker_that_cannot_be_spawned_is_spawn_failed() {
    let project = project_with_worker("", "");
    project.write(
        ".claude/sensors/aidlc-fake.md",
        &fake_manifest("fake", "./no-such-worker", ""),
    );
    let verdict = verdict(&fire(&project));
    assert_eq!(verdict["note"], "script-error: spawn-failed: ENOENT");
}

/// The worker outlives its timeout and starts a child: the whole process group dies, and the
/// fire ends in a budget override.
#[test]
fn a_timeout_kills_the_worker_and_its_children() {
    let project = project_with_worker(
        &script("sleep 100 &\necho $! > child.pid\nsleep 100"),
        "timeout_seconds: 1\n",
    );
    let verdict = verdict(&fire(&project));
    assert_eq!(verdict["result"], "budget-override");
    let blocks = audit_blocks(&project);
    let terminal = pair_fires(&blocks)[0].terminal.unwrap();
    assert_eq!(terminal.event, "SENSOR_BUDGET_OVERRIDE");
    assert_eq!(terminal.field("Cap value"), Some("1"));
    let pid = project.read("child.pid").trim().to_owned();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(
        status.is_empty() || status.contains("State:\tZ"),
        "the worker's child {pid} still runs: {status}"
    );
}

/// Each refusal happens before any audit row.
#[test]
fn pre_flight_refusals_write_no_audit_row() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let outside = TestProject::empty();
    outside.write("elsewhere.md", "# x\n");
    project.write(&format!("{RECORD}/notes.txt"), "not markdown\n");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "fire".into(),
                "nope".into(),
                "--stage".into(),
                "first-stage".into(),
                "--output-path".into(),
                OUTPUT.into(),
            ],
            "unknown sensor id: \"nope\". Known ids: fake",
        ),
        (
            vec![
                "fire".into(),
                "fake".into(),
                "--stage".into(),
                "second".into(),
                "--output-path".into(),
                OUTPUT.into(),
            ],
            "unknown stage slug: \"second\". Known (first 10): first-stage",
        ),
        (
            vec![
                "fire".into(),
                "fake".into(),
                "--stage".into(),
                "first-stage".into(),
                "--output-path".into(),
                "missing.md".into(),
            ],
            "output path does not exist: ",
        ),
        (
            vec![
                "fire".into(),
                "fake".into(),
                "--stage".into(),
                "first-stage".into(),
                "--output-path".into(),
                outside.path("elsewhere.md").to_string(),
            ],
            "is outside the project",
        ),
        (
            vec![
                "fire".into(),
                "fake".into(),
                "--stage".into(),
                "first-stage".into(),
                "--output-path".into(),
                format!("{RECORD}/notes.txt"),
            ],
            "does not match sensor \"fake\" filter \"**/*.md\"",
        ),
        (
            vec![
                "fire".into(),
                "fake".into(),
                "--stage".into(),
                "first-stage".into(),
                "--output-path".into(),
            ],
            "--output-path expects a value, got end of arguments.",
        ),
        (
            vec![
                "fire".into(),
                "fake".into(),
                "--stage".into(),
                "--output-path".into(),
                OUTPUT.into(),
            ],
            "--stage expects a value, got another flag: \"--output-path\".",
        ),
    ];
    for (args, expected) in cases {
        let mut full = vec!["engine", "sensor"];
        full.extend(args.iter().map(String::as_str));
        let run = project.run(&full);
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
        assert!(
            audit_blocks(&project).is_empty(),
            "{args:?} wrote an audit row"
        );
    }
}

#[test]
fn a_relative_output_path_is_taken_from_the_working_folder() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let folder = project.path(&format!("{RECORD}/inception"));
    let run = project.run_in(
        &folder,
        &[
            "engine",
            "sensor",
            "fire",
            "fake",
            "--stage",
            "first-stage",
            "--output-path",
            "first-stage/first-stage-doc.md",
            "--project-dir",
            project.root.as_str(),
        ],
    );
    assert_eq!(verdict(&run)["output_path"], OUTPUT);
}

#[test]
fn ten_parallel_fires_leave_ten_intact_pairs() {
    let project = project_with_worker(
        &script("sleep 0.2\necho '{\"pass\":true,\"findings_count\":0}'"),
        "",
    );
    let children: Vec<_> = (0..10)
        .map(|_| {
            project
                .command(
                    &project.root,
                    &[
                        "engine",
                        "sensor",
                        "fire",
                        "fake",
                        "--stage",
                        "first-stage",
                        "--output-path",
                        OUTPUT,
                    ],
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let blocks = audit_blocks(&project);
    assert_eq!(blocks.len(), 20, "no torn or lost blocks");
    let pairs = pair_fires(&blocks);
    assert_eq!(pairs.len(), 10);
    for pair in &pairs {
        let fire_id = pair.fired.field("Fire id").unwrap();
        let terminals = blocks
            .iter()
            .filter(|block| {
                block.event != "SENSOR_FIRED" && block.field("Fire id") == Some(fire_id)
            })
            .count();
        assert_eq!(terminals, 1, "fire {fire_id}");
    }
}

fn write_lock_owner(project: &TestProject, pid: u32) -> camino::Utf8PathBuf {
    let lock = aidlc::leaves::audit_lock::lock_path(&project.root);
    std::fs::create_dir_all(&lock).unwrap();
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::fs::write(
        lock.join("owner.json"),
        format!("{{\"pid\":{pid},\"startedAtMs\":{started},\"reapLiveOwnerAfterStale\":true}}"),
    )
    .unwrap();
    lock
}

/// The lock is taken (for this live test process) while the worker runs, and given back only
/// once the fire has reaped the worker, whose next write is the terminal row: the fire is still
/// running then, with no terminal row, and ends passed after the release.
#[test]
fn a_lock_held_by_a_live_process_is_waited_for() {
    let project = project_with_worker(
        &script(
            "echo $$ > worker.pid.tmp && mv worker.pid.tmp worker.pid\ni=0\nwhile [ ! -f lock-taken ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\necho '{\"pass\":true,\"findings_count\":0}'",
        ),
        "",
    );
    let mut child = project
        .command(&project.root, &FIRE_ARGS)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::wait_for_path(&project.path("worker.pid"));
    let lock = write_lock_owner(&project, std::process::id());
    project.write("lock-taken", "");
    crate::support::wait_until_reaped(project.read("worker.pid").trim());
    assert!(
        child.try_wait().unwrap().is_none(),
        "the fire waits for the lock"
    );
    assert!(
        pair_fires(&audit_blocks(&project))
            .iter()
            .all(|pair| pair.terminal.is_none()),
        "no terminal row while the lock is held"
    );
    std::fs::remove_dir_all(lock).unwrap();
    let verdict = verdict(&Run::from(child.wait_with_output().unwrap()));
    assert_eq!(verdict["result"], "passed");
}

#[test]
fn a_lock_left_by_a_dead_process_is_reaped() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    write_lock_owner(&project, dead_pid);
    let verdict = verdict(&fire(&project));
    assert_eq!(verdict["result"], "passed");
}

#[test]
fn shipped_sensors_run_natively_both_through_fire_and_the_worker_protocol() {
    let project = TestProject::default_framework();
    assert_eq!(project.compile().status, 0);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: intent-capture\n",
    );
    let output = format!("{RECORD}/ideation/intent-capture/intent-statement.md");
    project.write(&output, "# Intent\n\n## Goal\n\nSell more.\n");
    let run = project.run(&[
        "engine",
        "sensor",
        "fire",
        "claim-sources",
        "--stage",
        "intent-capture",
        "--output-path",
        &output,
    ]);
    let verdict = verdict(&run);
    // No questions file, so no claim can be traced to a source: a real failure, not a pass.
    assert_eq!(verdict["result"], "failed", "{verdict}");
    assert!(verdict.get("note").is_none(), "{verdict}");
    let worker = project.run(&[
        "engine",
        "sensor-claim-sources",
        "--stage",
        "intent-capture",
        "--output-path",
        &output,
    ]);
    assert_eq!(worker.status, 0, "{}", worker.stderr);
    let line: Value = serde_json::from_str(worker.stdout.trim()).unwrap();
    assert_eq!(line["pass"], false);
    for id in aidlc::runtime::sensors::SHIPPED_SENSOR_IDS {
        assert!(
            aidlc::runtime::sensors::native_check(id).is_some(),
            "{id} has a native check"
        );
    }
}

/// The conductor starts a workflow's audit shard before any agent writes. (The hook does not
/// need this clone's shard to see a workflow, failure mode N6; most tests start one anyway,
/// as a real workflow has.)
fn start_audit_shard(project: &TestProject) {
    let shard = project.audit_shard();
    std::fs::create_dir_all(shard.parent().unwrap()).unwrap();
    std::fs::write(&shard, "# AI-DLC Audit Log\n").unwrap();
}

fn run_hook(project: &TestProject, payload: &str) -> Run {
    project.run_watched(&["engine", "hook", "run-sensors"], &[], Some(payload))
}

#[test]
fn the_hook_fires_matching_write_sensors_and_records_a_heartbeat() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    let state = project.read(&format!("{RECORD}/aidlc-state.md"));
    project.remove(&format!("{RECORD}/aidlc-state.md"));
    assert_eq!(run_hook(&project, &payload).status, 0);
    assert!(
        audit_blocks(&project).is_empty(),
        "no readable state, no workflow: nothing fires"
    );
    project.write(&format!("{RECORD}/aidlc-state.md"), &state);
    start_audit_shard(&project);
    let first = run_hook(&project, &payload);
    assert_eq!(first.status, 0, "{}", first.stderr);
    // stdout is the hook protocol's channel: the banner goes to stderr.
    assert!(
        first.stderr.contains("Sensors are now watching"),
        "{}",
        first.stderr
    );
    assert_eq!(first.stdout, "");
    assert!(project.exists(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.last")));
    assert_eq!(pair_fires(&audit_blocks(&project)).len(), 1);
    let second = run_hook(&project, &payload);
    assert!(!second.stderr.contains("Sensors are now watching"));
    assert_eq!(second.stdout, "");
    assert_eq!(pair_fires(&audit_blocks(&project)).len(), 2);
}

#[test]
fn the_hook_stays_quiet_when_nothing_should_fire() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    start_audit_shard(&project);
    project.write(&format!("{RECORD}/notes.txt"), "x\n");
    let cases = [
        String::new(),
        "not json".to_owned(),
        "{}".to_owned(),
        serde_json::json!({"tool_input": {"file_path": project.path(&format!("{RECORD}/notes.txt"))}}).to_string(),
        serde_json::json!({"tool_input": {"file_path": project.path(&format!("{RECORD}/.aidlc-engine/sensors/x.md"))}}).to_string(),
    ];
    for payload in cases {
        let run = run_hook(&project, &payload);
        assert_eq!(run.status, 0, "{payload}: {}", run.stderr);
        assert!(
            audit_blocks(&project).is_empty(),
            "{payload} fired a sensor"
        );
    }
}

#[test]
fn the_hook_never_fires_gate_sensors() {
    let project = project_with_worker(
        &script("echo '{\"pass\":true,\"findings_count\":0}'"),
        "fire_on: gate\n",
    );
    start_audit_shard(&project);
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    assert_eq!(run_hook(&project, &payload).status, 0);
    assert!(audit_blocks(&project).is_empty());
}

#[test]
fn a_hook_whose_stdin_never_closes_gives_up_in_bounded_time() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let mut child = project
        .command(&project.root, &["engine", "hook", "run-sensors"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _keep_open = child.stdin.take();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the hook hung");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One fire with its id and clock fixed: the audit blocks, the detail file and the verdict line
/// byte for byte in the reference's format (D25–D27).
#[test]
fn one_fixed_fire_is_byte_exact() {
    use aidlc::runtime::dispatch::fire::{FireContext, FireRequest, prepare_fire, run_fire};
    let project = project_with_worker(
        &script(
            "echo '{\"pass\":false,\"findings_count\":1,\"findings\":[{\"heading\":\"## Scope\"}]}'",
        ),
        "",
    );
    let workspace =
        aidlc::runtime::workspace::Workspace::resolve(aidlc::compile::discover::Layout::new(
            &project.root,
            aidlc::harness::Harness::Claude,
            &|_| None,
        ));
    let request = FireRequest {
        sensor_id: "fake".into(),
        stage: "first-stage".into(),
        output_path: project.path(OUTPUT),
        cwd: project.root.clone(),
    };
    let context = FireContext {
        new_fire_id: Box::new(|| "a65d19af".to_owned()),
        now: Box::new(|| SystemTime::UNIX_EPOCH + Duration::from_secs(1_788_480_000)),
    };
    let prepared = prepare_fire(&workspace, &request).unwrap();
    let report = run_fire(&workspace, &prepared, &context, None).unwrap();
    let detail = format!("{RECORD}/.aidlc-engine/sensors/first-stage/fake-a65d19af.md");
    assert_eq!(
        report.verdict_line,
        format!(
            "{{\"fire_id\":\"a65d19af\",\"sensor_id\":\"fake\",\"stage\":\"first-stage\",\"output_path\":\"{OUTPUT}\",\"result\":\"failed\",\"detail_path\":\"{detail}\"}}"
        )
    );
    let shard = std::fs::read_to_string(&report.audit_shard).unwrap();
    let expected_shard = format!(
        "# AI-DLC Audit Log\n\n## Sensor Fired\n**Timestamp**: 2026-09-04T00:00:00Z\n**Event**: SENSOR_FIRED\n**Fire id**: a65d19af\n**Sensor ID**: fake\n**Stage slug**: first-stage\n**Output path**: {OUTPUT}\n\n---\n\n## Sensor Failed\n**Timestamp**: 2026-09-04T00:00:00Z\n**Event**: SENSOR_FAILED\n**Fire id**: a65d19af\n**Sensor ID**: fake\n**Stage slug**: first-stage\n**Output path**: {OUTPUT}\n**Detail path**: {detail}\n**Findings count**: 1\n\n---\n"
    );
    assert_eq!(shard, expected_shard);
    let expected_detail = format!(
        "# fake finding \u{2014} first-stage\n\n**Timestamp**: 2026-09-04T00:00:00Z\n**Fire id**: a65d19af\n**Output path**: {}\n**Pass**: false\n\n## Findings\n\n```json\n{{\n  \"pass\": false,\n  \"findings_count\": 1,\n  \"findings\": [\n    {{\n      \"heading\": \"## Scope\"\n    }}\n  ]\n}}\n```\n",
        project.path(OUTPUT)
    );
    assert_eq!(project.read(&detail), expected_detail);
}

#[test]
fn the_hook_records_a_drop_when_a_fire_cannot_run_and_skips_entries_without_a_glob() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    start_audit_shard(&project);
    // The graph still lists `fake`, but its manifest is gone: the fire is refused, and the
    // hook records why instead of losing it.
    project.remove(".claude/sensors/aidlc-fake.md");
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    assert_eq!(run_hook(&project, &payload).status, 0);
    let drops = project.read(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.drops"));
    assert!(
        drops.contains("\tfake: unknown sensor id: \"fake\""),
        "{drops}"
    );
    assert_eq!(drops.lines().count(), 1);

    // An entry without `matches` never fires from the hook.
    let unglobbed = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    unglobbed.write(
        ".claude/sensors/aidlc-fake.md",
        &fake_manifest("fake", "sh fake-worker.sh", "").replace("matches: \"**/*.md\"\n", ""),
    );
    assert_eq!(unglobbed.run(&["compile", "--force"]).status, 0);
    start_audit_shard(&unglobbed);
    assert_eq!(
        run_hook(
            &unglobbed,
            &payload.replace(project.root.as_str(), unglobbed.root.as_str())
        )
        .status,
        0
    );
    assert!(audit_blocks(&unglobbed).is_empty());
}

#[test]
fn the_hook_respects_the_sensors_switch() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    start_audit_shard(&project);
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n- **Sensors**: off (set by you)\n",
    );
    assert_eq!(run_hook(&project, &payload).status, 0);
    assert!(audit_blocks(&project).is_empty(), "state says off");
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n",
    );
    let off = project.run_watched(
        &["engine", "hook", "run-sensors"],
        &[("AIDLC_DISABLE_SENSORS", "1")],
        Some(&payload),
    );
    assert_eq!(off.status, 0, "{}", off.stderr);
    assert!(audit_blocks(&project).is_empty(), "AIDLC_DISABLE_SENSORS=1");
    assert_eq!(run_hook(&project, &payload).status, 0);
    assert_eq!(pair_fires(&audit_blocks(&project)).len(), 1, "on again");
}

/// A health folder that links out of the project gets no heartbeat, no marker and no drop
/// line (they would be written outside); the hook still exits 0, prints nothing on stdout, and
/// says on stderr why, with the drop it could not log.
#[cfg(unix)]
#[test]
fn a_hooks_health_folder_that_links_outside_gets_nothing_and_the_drop_is_told_on_stderr() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let outside = TestProject::empty();
    std::fs::create_dir_all(project.path(RECORD)).unwrap();
    std::os::unix::fs::symlink(
        &outside.root,
        project.path(&format!("{RECORD}/.aidlc-hooks-health")),
    )
    .unwrap();
    // The graph still lists `fake`, but its manifest is gone: the fire is refused, a drop.
    project.remove(".claude/sensors/aidlc-fake.md");
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    let run = run_hook(&project, &payload);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains(
            "warning: the hook's heartbeat and drop log are not written: Refusing to write into"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("warning: a write was not checked: fake: unknown sensor id: \"fake\""),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("Sensors are now watching"),
        "no marker, no banner"
    );
    assert_eq!(
        std::fs::read_dir(&outside.root).unwrap().count(),
        0,
        "nothing was written outside the project"
    );
}

/// `--project-dir .` names the working folder: every path the ledger records is relative to
/// it, exactly as with the absolute folder (the rows hold no `/./`).
#[test]
fn a_project_dir_of_dot_records_paths_relative_to_the_project() {
    let project = project_with_worker(&script("echo '{\"pass\":true,\"findings_count\":0}'"), "");
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
    let hook = project.run_watched(
        &["engine", "hook", "run-sensors", "--project-dir", "."],
        &[],
        Some(&payload),
    );
    assert_eq!(hook.status, 0, "{}", hook.stderr);
    let fired = project.run(&[
        "engine",
        "sensor",
        "fire",
        "fake",
        "--stage",
        "first-stage",
        "--output-path",
        OUTPUT,
        "--project-dir",
        ".",
    ]);
    assert_eq!(verdict(&fired)["output_path"], OUTPUT);
    let blocks = audit_blocks(&project);
    assert_eq!(blocks.len(), 4, "two fires, paired");
    for block in blocks {
        assert_eq!(block.field("Output path"), Some(OUTPUT), "{block:?}");
    }
}

/// The write hook reads the compiled graph once and each live manifest once per run, however
/// many bindings the write fires: on the 2.6.54 install a write of `intent-statement.md` at
/// `intent-capture` fires its three document sensors, and the run opens `stage-graph.json` once
/// and each of the six manifests once (before: the graph four times and the registry three
/// times). Counted with `strace -f -e trace=openat`.
#[test]
fn the_write_hook_reads_the_graph_and_each_manifest_once_however_many_sensors_fire() {
    let Some(strace) = crate::support::system_tool("strace") else {
        return;
    };
    let project = TestProject::reference_install("2.6.54");
    let record = "aidlc/spaces/default/intents/260901-hook";
    let deliverable = format!("{record}/ideation/intent-capture/intent-statement.md");
    project.write(
        &format!("{record}/aidlc-state.md"),
        "# AI-DLC State Tracking\n\n## Current Status\n- **Current Stage**: intent-capture\n",
    );
    project.write(&deliverable, "# Intent\n\n## Scope\n\nOne section only.\n");
    let payload =
        serde_json::json!({"tool_input": {"file_path": project.path(&deliverable)}}).to_string();
    let trace = project.path(".hook.strace");
    let hook = project.command(&project.root, &["engine", "hook", "run-sensors"]);
    let mut traced = std::process::Command::new(strace);
    traced
        .args(["-f", "-e", "trace=openat", "-o", trace.as_str()])
        .arg(hook.get_program())
        .args(hook.get_args())
        .current_dir(&project.root)
        .envs(
            hook.get_envs()
                .filter_map(|(name, value)| Some((name, value?))),
        );
    for (name, value) in hook.get_envs() {
        if value.is_none() {
            traced.env_remove(name);
        }
    }
    let mut child = traced
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run the hook under strace");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());

    let blocks: Vec<AuditBlock> = std::fs::read_dir(project.path(&format!("{record}/audit")))
        .unwrap()
        .filter_map(Result::ok)
        .flat_map(|entry| parse_blocks(&std::fs::read_to_string(entry.path()).unwrap()))
        .collect();
    assert_eq!(pair_fires(&blocks).len(), 3, "three document sensors fire");
    let opens = std::fs::read_to_string(&trace).unwrap();
    let opened = |suffix: &str| {
        opens
            .lines()
            .filter(|line| line.contains("openat(") && !line.contains("ENOENT"))
            .filter(|line| line.contains(&format!("{suffix}\"")))
            .count()
    };
    assert_eq!(opened("/tools/data/stage-graph.json"), 1, "{opens}");
    let manifests: Vec<String> = std::fs::read_dir(project.path(".claude/sensors"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.starts_with("aidlc-") && camino::Utf8Path::new(name).extension() == Some("md")
        })
        .collect();
    assert_eq!(manifests.len(), 6);
    for manifest in manifests {
        assert_eq!(
            opened(&format!("/.claude/sensors/{manifest}")),
            1,
            "{manifest}: {opens}"
        );
    }
}

// --- Values read back from the graph are parsed strictly on every dispatch path -----------------

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

// --- The write hook in a clone that has no shard of its own -------------------------------------

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
    let own_shard = project.audit_shard();
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

// --- Fake-worker projects of the process tests --------------------------------------------------

/// A compiled project with sensor `fake` (worker `sh fake-worker.sh`, whose body is `body`;
/// `extra` frontmatter lines in its manifest), one stage importing it, an intent record on that
/// stage, and the output file.
fn project_with_worker_body(body: &str, extra: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        ".claude/sensors/aidlc-fake.md",
        &format!(
            "---\nid: fake\nkind: deterministic\ncommand: sh fake-worker.sh\ndefault_severity: advisory\ndescription: A fake sensor for tests\ncategory: demo\nmatches: \"**/*.md\"\n{extra}---\n\n# fake\n"
        ),
    );
    project.write("fake-worker.sh", &format!("#!/bin/sh\n{body}\n"));
    write_agent_stage_and_record(&project, "[fake]");
    project
}

/// The demo agent, stage `first-stage` (producing `first-stage-doc`, importing `sensors`), the
/// compile, the intent record on that stage and its output file.
fn write_agent_stage_and_record(project: &TestProject, sensors: &str) {
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", "inception", "[]", sensors, ""),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(OUTPUT, "# First stage doc\n\n## A\n\n## B\n");
}

/// A compiled project whose stage `first-stage` produces `doc-a` and `doc-b` (both on disk) and
/// imports one gate sensor `shape` of `severity`, run as `sh shape.sh` with `body`.
fn gate_project(body: &str, severity: &str) -> TestProject {
    let project = TestProject::empty();
    project.write("shape.sh", &format!("#!/bin/sh\n{body}\n"));
    project.write(
        ".claude/sensors/aidlc-shape.md",
        &format!(
            "---\nid: shape\nkind: deterministic\ncommand: sh shape.sh\ndefault_severity: {severity}\nfire_on: gate\ndescription: A fake gate sensor\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# shape\n"
        ),
    );
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        "---\nslug: first-stage\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n  - doc-a\n  - doc-b\nconsumes: []\nrequires_stage: []\nsensors: [shape]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# first-stage\n",
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(&format!("{STAGE_DIR}/doc-a.md"), "# A\n");
    project.write(&format!("{STAGE_DIR}/doc-b.md"), "# B\n");
    project
}

fn fire_args() -> Vec<&'static str> {
    vec![
        "engine",
        "sensor",
        "fire",
        "fake",
        "--stage",
        "first-stage",
        "--output-path",
        OUTPUT,
    ]
}

fn verdict_line(run: &Run) -> Value {
    assert_eq!(run.status, 0, "fire failed: {}", run.stderr);
    serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|error| panic!("not one JSON line ({error}): {}", run.stdout))
}

/// The only fire's terminal row.
fn only_terminal(project: &TestProject) -> AuditBlock {
    let blocks = audit_blocks(project);
    let pairs = pair_fires(&blocks);
    assert_eq!(pairs.len(), 1, "{blocks:?}");
    pairs[0].terminal.expect("a terminal row").clone()
}

// --- Processes in the background ----------------------------------------------------------------

/// `aidlc <args>` started in the background, stdout and stderr going to files.
struct Background {
    child: Child,
    outputs: tempfile::TempDir,
}

impl Background {
    fn start(project: &TestProject, args: &[&str]) -> Self {
        Self::start_with_stdin(project, args, None)
    }

    fn start_with_stdin(project: &TestProject, args: &[&str], stdin: Option<&str>) -> Self {
        let outputs = tempfile::tempdir().unwrap();
        let stdout = std::fs::File::create(outputs.path().join("stdout")).unwrap();
        let stderr = std::fs::File::create(outputs.path().join("stderr")).unwrap();
        let mut command = project.command(&project.root, args);
        command.stdout(stdout).stderr(stderr);
        command.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut child = command.spawn().expect("start aidlc");
        if let Some(text) = stdin {
            use std::io::Write as _;
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(text.as_bytes()).unwrap();
        }
        Self { child, outputs }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Wait for the exit, at most [`crate::support::HANG`]; a run that takes longer is killed and fails the
    /// test.
    fn finish(mut self) -> Run {
        let give_up = Instant::now() + crate::support::HANG;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > give_up {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("aidlc did not finish within {:?}", crate::support::HANG);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let read = |name: &str| {
            std::fs::read_to_string(self.outputs.path().join(name)).unwrap_or_default()
        };
        Run {
            status: status.code().unwrap_or(-1),
            stdout: read("stdout"),
            stderr: read("stderr"),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The trimmed content of `relative` once it is non-empty (a worker writes its pid there).
fn wait_for_pid(project: &TestProject, relative: &str) -> String {
    let give_up = Instant::now() + crate::support::HANG;
    loop {
        let pid = std::fs::read_to_string(project.path(relative)).unwrap_or_default();
        if pid.ends_with('\n') && !pid.trim().is_empty() {
            return pid.trim().to_owned();
        }
        assert!(Instant::now() < give_up, "{relative} was never written");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send_signal(signal: &str, pid: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), pid])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Whether `pid` is gone: `kill -0` fails (or it is a zombie nobody reaped yet). Waits up to
/// 10 s for it to go.
fn pid_is_gone_soon(pid: &str) -> bool {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let alive = std::process::Command::new("kill")
            .args(["-0", pid])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|text| {
                let after_name = &text[text.rfind(')')? + 1..];
                after_name
                    .split_whitespace()
                    .next()
                    .map(|state| state == "Z")
            })
            .unwrap_or(false);
        if !alive || zombie {
            return true;
        }
        if Instant::now() > give_up {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A worker that records its pid and its child's, then sleeps until killed.
const SLEEPING_WORKER: &str = "echo $$ > worker.pid.tmp && mv worker.pid.tmp worker.pid\nsleep 300 &\necho $! > child.pid.tmp && mv child.pid.tmp child.pid\nwait";

/// Both pids the sleeping worker wrote, once it wrote them.
fn sleeping_worker_pids(project: &TestProject) -> [String; 2] {
    [
        wait_for_pid(project, "worker.pid"),
        wait_for_pid(project, "child.pid"),
    ]
}

fn assert_gone(pids: &[String]) {
    for pid in pids {
        assert!(pid_is_gone_soon(pid), "worker process {pid} outlived aidlc");
    }
}

/// Every fire that wrote `SENSOR_FIRED` has its terminal row, `script-error: interrupted`;
/// returns how many there are.
fn assert_every_started_fire_ended_interrupted(project: &TestProject) -> usize {
    let blocks = audit_blocks(project);
    let pairs = pair_fires(&blocks);
    assert!(!pairs.is_empty(), "no fire was started: {blocks:?}");
    for pair in &pairs {
        let terminal = pair.terminal.unwrap_or_else(|| {
            panic!("fire {:?} has no terminal row", pair.fired.field("Fire id"))
        });
        assert_eq!(terminal.event, "SENSOR_PASSED");
        assert_eq!(terminal.field("Note"), Some("script-error: interrupted"));
    }
    pairs.len()
}

// --- Ambiguous worker output is bad output ------------------------------------------------------

/// Each ambiguous verdict is recorded as `script-error: bad-output` (the reference's note, byte
/// for byte), never as a pass, and `fire` says on stderr which rule it broke.
#[test]
fn ambiguous_worker_output_is_bad_output_that_names_the_rule_it_broke() {
    let cases = [
        (
            r#"{"pass":false,"pass":true,"findings_count":0}"#,
            "the key \"pass\" appears more than once",
        ),
        (
            "{\"pass\":false,\"findings_count\":1}\n{\"pass\":true,\"findings_count\":0}",
            "2 lines that are each a verdict",
        ),
        (
            r#"{"pass":true,"findings_count":5}"#,
            "`pass` is true but `findings_count` is 5",
        ),
        (
            r#"{"pass":false,"findings_count":1.5}"#,
            "`findings_count` is 1.5, not a non-negative whole number",
        ),
        (
            r#"{"pass":"true","findings_count":0}"#,
            "`pass` is \"true\"",
        ),
    ];
    for (stdout, rule) in cases {
        let project = project_with_worker_body(&format!("echo '{stdout}'"), "");
        let run = run_bounded(&project, &fire_args());
        let verdict = verdict_line(&run);
        assert_eq!(verdict["result"], "passed", "{stdout}");
        assert_eq!(verdict["note"], "script-error: bad-output", "{stdout}");
        assert!(
            run.stderr.contains("script-error: bad-output: ") && run.stderr.contains(rule),
            "{stdout}: {}",
            run.stderr
        );
        let terminal = only_terminal(&project);
        assert_eq!(terminal.event, "SENSOR_PASSED", "{stdout}");
        assert_eq!(
            terminal.field("Note"),
            Some("script-error: bad-output"),
            "{stdout}"
        );
    }
}

#[test]
fn a_banner_line_holding_a_brace_does_not_hide_the_verdict_after_it() {
    let project = project_with_worker_body(
        "echo '> eslint {src,test}/**'\necho '{\"pass\":false,\"findings_count\":2}'",
        "",
    );
    let verdict = verdict_line(&run_bounded(&project, &fire_args()));
    assert_eq!(verdict["result"], "failed", "{verdict}");
    assert_eq!(only_terminal(&project).field("Findings count"), Some("2"));
}

/// A duplicate `pass` key of a blocking sensor neither opens the gate nor passes `gate check`.
#[test]
fn ambiguous_output_of_a_blocking_sensor_neither_opens_the_gate_nor_passes_gate_check() {
    let project = gate_project(
        "echo '{\"pass\":false,\"pass\":true,\"findings_count\":0}'",
        "blocking",
    );
    let check = run_bounded(
        &project,
        &[
            "gate",
            "check",
            "--format",
            "json",
            "--quiet",
            "--no-record",
        ],
    );
    assert_eq!(check.status, 3, "{}\n{}", check.stdout, check.stderr);
    let start = run_bounded(&project, &["engine", "gate", "start", "first-stage"]);
    assert_eq!(start.status, 1, "{}\n{}", start.stdout, start.stderr);
    assert!(
        start.stderr.contains("script-error: bad-output"),
        "{}",
        start.stderr
    );
    assert!(
        !audit_blocks(&project)
            .iter()
            .any(|block| block.event == "STAGE_AWAITING_APPROVAL"),
        "the gate row was written"
    );
}

// --- A worker's children die with it ------------------------------------------------------------

/// A worker leaves `sleep 300 &` holding its stdout and exits with a verdict: the fire returns
/// at once (not after the 1200 s fallback budget), and the child is gone.
#[test]
fn a_worker_s_background_child_neither_holds_the_fire_nor_outlives_it() {
    let project = project_with_worker_body(
        "sleep 300 &\necho $! > child.pid\necho '{\"pass\":true,\"findings_count\":0}'\nexit 0",
        "",
    );
    let run = run_bounded(&project, &fire_args());
    let verdict = verdict_line(&run);
    assert_eq!(verdict["result"], "passed");
    assert!(verdict.get("note").is_none(), "{verdict}");
    assert_gone(&[wait_for_pid(&project, "child.pid")]);
}

// --- Signals stop every worker and record every started fire ------------------------------------

#[test]
fn a_signal_to_fire_stops_the_worker_records_the_fire_and_exits_130() {
    for signal in ["INT", "TERM", "HUP"] {
        let project = project_with_worker_body(SLEEPING_WORKER, "");
        let fire = Background::start(&project, &fire_args());
        let pids = sleeping_worker_pids(&project);
        send_signal(signal, &fire.pid());
        let run = fire.finish();
        assert_eq!(run.status, 130, "SIG{signal}: {}", run.stderr);
        let terminal = only_terminal(&project);
        assert_eq!(terminal.event, "SENSOR_PASSED", "SIG{signal}");
        assert_eq!(
            terminal.field("Note"),
            Some("script-error: interrupted"),
            "SIG{signal}"
        );
        let verdict: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(verdict["note"], "script-error: interrupted", "SIG{signal}");
        assert_eq!(
            verdict["fire_id"].as_str(),
            terminal.field("Fire id"),
            "SIG{signal}"
        );
        assert_gone(&pids);
    }
}

/// A dispatcher killed with SIGKILL runs no handler of its own, and its
/// worker (and the worker's child, in the worker's group) must not run on without it.
#[test]
fn a_dispatcher_killed_with_sigkill_takes_its_worker_and_its_group_with_it() {
    let project = project_with_worker_body(SLEEPING_WORKER, "");
    let fire = Background::start(&project, &fire_args());
    let pids = sleeping_worker_pids(&project);
    send_signal("KILL", &fire.pid());
    let run = fire.finish();
    assert_ne!(run.status, 0, "{}", run.stderr);
    assert_gone(&pids);
}

#[test]
fn a_signal_to_gate_check_stops_every_worker_records_every_started_fire_and_exits_130() {
    for signal in ["INT", "TERM", "HUP"] {
        let project = gate_project(SLEEPING_WORKER, "blocking");
        let check = Background::start(
            &project,
            &[
                "gate", "check", "--format", "json", "--quiet", "--jobs", "1",
            ],
        );
        let pids = sleeping_worker_pids(&project);
        send_signal(signal, &check.pid());
        let run = check.finish();
        assert_eq!(run.status, 130, "SIG{signal}: {}", run.stderr);
        // A recorded gate check writes a batch's `SENSOR_FIRED` rows (here both deliverables')
        // before the first worker starts; after the interrupt no other worker starts, and every
        // begun fire ends `script-error: interrupted`.
        let started = assert_every_started_fire_ended_interrupted(&project);
        assert_eq!(
            started, 2,
            "SIG{signal}: both fires of the batch are recorded"
        );
        assert_eq!(
            project.read("worker.pid").trim(),
            pids[0],
            "SIG{signal}: a worker started after the interrupt"
        );
        assert_gone(&pids);
    }
}

#[test]
fn a_signal_to_gate_start_stops_the_worker_writes_no_gate_row_and_exits_130() {
    for (signal, severity) in [
        ("INT", "blocking"),
        ("TERM", "advisory"),
        ("HUP", "blocking"),
    ] {
        let project = gate_project(SLEEPING_WORKER, severity);
        let start = Background::start(&project, &["engine", "gate", "start", "first-stage"]);
        let pids = sleeping_worker_pids(&project);
        send_signal(signal, &start.pid());
        let run = start.finish();
        assert_eq!(run.status, 130, "SIG{signal} {severity}: {}", run.stderr);
        assert_eq!(
            assert_every_started_fire_ended_interrupted(&project),
            1,
            "SIG{signal} {severity}"
        );
        assert!(
            !audit_blocks(&project)
                .iter()
                .any(|block| block.event == "STAGE_AWAITING_APPROVAL"),
            "SIG{signal} {severity}: the gate row was written after the interrupt"
        );
        assert_gone(&pids);
    }
}

#[test]
fn a_signal_to_the_write_hook_stops_the_worker_records_the_fire_and_exits_130() {
    for signal in ["INT", "TERM", "HUP"] {
        let project = project_with_worker_body(SLEEPING_WORKER, "");
        let shard = project.audit_shard();
        std::fs::create_dir_all(shard.parent().unwrap()).unwrap();
        std::fs::write(&shard, "# AI-DLC Audit Log\n").unwrap();
        let payload =
            serde_json::json!({"tool_input": {"file_path": project.path(OUTPUT)}}).to_string();
        let hook = Background::start_with_stdin(
            &project,
            &["engine", "hook", "run-sensors"],
            Some(&payload),
        );
        let pids = sleeping_worker_pids(&project);
        send_signal(signal, &hook.pid());
        let run = hook.finish();
        assert_eq!(run.status, 130, "SIG{signal}: {}", run.stderr);
        assert_eq!(
            assert_every_started_fire_ended_interrupted(&project),
            1,
            "SIG{signal}"
        );
        assert_gone(&pids);
    }
}

// --- Special files and slow in-process checks ---------------------------------------------------

fn mkfifo(path: &camino::Utf8Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {path}");
}

#[test]
fn fire_refuses_an_output_path_that_is_not_a_regular_file_before_any_row() {
    let project = project_with_worker_body("echo '{\"pass\":true,\"findings_count\":0}'", "");
    let fifo = "fifo.md".to_owned();
    mkfifo(&project.path(&fifo));
    let folder = "folder.md".to_owned();
    std::fs::create_dir_all(project.path(&folder)).unwrap();
    let socket = "socket.md".to_owned();
    let _listener = std::os::unix::net::UnixListener::bind(project.path(&socket)).unwrap();
    let device = "device.md".to_owned();
    std::os::unix::fs::symlink("/dev/null", project.path(&device)).unwrap();
    for (path, kind) in [
        (&fifo, "is a FIFO (named pipe), not a regular file"),
        (&folder, "is a directory, not a regular file"),
        (&socket, "is a socket, not a regular file"),
        (&device, "is a character device, not a regular file"),
    ] {
        let run = run_bounded(
            &project,
            &[
                "engine",
                "sensor",
                "fire",
                "fake",
                "--stage",
                "first-stage",
                "--output-path",
                path,
            ],
        );
        assert_eq!(run.status, 2, "{path}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("{} {kind}", project.path(path))),
            "{path}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{path}: {}", run.stdout);
        assert!(
            audit_blocks(&project).is_empty(),
            "{path}: a row was written"
        );
    }
}

/// `required-sections` runs in-process (D8); its template is a FIFO nobody writes. The template
/// is read as every input is (D57): refused at once, so the fire is a script error (a noted pass,
/// D4) long before its timeout, never a hang and never a pass. (An in-process
/// check that does block ends at its timeout: `sensors::in_process`'s unit tests.)
#[test]
fn an_in_process_sensor_whose_template_is_a_fifo_is_not_evaluated_at_once() {
    let project = TestProject::empty();
    project.write(
        ".claude/sensors/aidlc-required-sections.md",
        &manifest("required-sections", "timeout_seconds: 300\n"),
    );
    write_agent_stage_and_record(&project, "[required-sections]");
    let template = "aidlc/spaces/default/memory/templates/first-stage-doc.md";
    mkfifo(&project.path(template));
    let run = run_bounded(
        &project,
        &[
            "engine",
            "sensor",
            "fire",
            "required-sections",
            "--stage",
            "first-stage",
            "--output-path",
            OUTPUT,
        ],
    );
    let verdict = verdict_line(&run);
    // A noted pass is no pass (D4): the note says the check could not run.
    let note = verdict["note"].as_str().unwrap_or_default();
    assert!(note.starts_with("script-error"), "{verdict}");
    let terminal = only_terminal(&project);
    assert_ne!(terminal.event, "SENSOR_BUDGET_OVERRIDE", "{verdict}");
}

// --- Output that cannot be written --------------------------------------------------------------

/// `aidlc <args>` with stdout on `/dev/full`, or `None` (after printing `SKIPPED`) where there
/// is no `/dev/full`.
#[expect(
    clippy::print_stdout,
    reason = "a skipped check says so in the test output"
)]
fn run_into_dev_full(project: &TestProject, args: &[&str]) -> Option<Run> {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIPPED: /dev/full is missing, so a failing stdout cannot be tested here");
        return None;
    };
    let output = project
        .command(&project.root, args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("run aidlc");
    Some(Run::from(output))
}

fn assert_output_failure(run: &Run, what: &str) {
    assert_eq!(run.status, 2, "{what}: {}", run.stderr);
    assert!(
        run.stderr
            .contains("error: cannot write the output to stdout: No space left on device"),
        "{what}: {}",
        run.stderr
    );
}

#[test]
fn a_verdict_that_cannot_be_written_is_exit_2_and_the_fire_is_still_recorded() {
    let project = project_with_worker_body("echo '{\"pass\":true,\"findings_count\":0}'", "");
    let Some(run) = run_into_dev_full(&project, &fire_args()) else {
        return;
    };
    assert_output_failure(&run, "fire");
    assert_eq!(only_terminal(&project).event, "SENSOR_PASSED");
}

#[test]
fn a_gate_check_report_that_cannot_be_written_is_exit_2() {
    let project = gate_project("echo '{\"pass\":true,\"findings_count\":0}'", "blocking");
    let Some(run) = run_into_dev_full(
        &project,
        &[
            "gate",
            "check",
            "--format",
            "json",
            "--quiet",
            "--no-record",
        ],
    ) else {
        return;
    };
    assert_output_failure(&run, "gate check");
}

#[test]
fn a_sensor_list_that_cannot_be_written_is_exit_2() {
    let project = TestProject::default_framework();
    let Some(run) = run_into_dev_full(&project, &["engine", "sensor", "list"]) else {
        return;
    };
    assert_output_failure(&run, "sensor list");
}

#[test]
fn a_closed_stdout_pipe_still_ends_quietly() {
    let project = TestProject::default_framework();
    let mut child = project
        .command(&project.root, &["engine", "sensor", "list"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let run = Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

// --- Failure scenario S1 (docs/failure-modes.md): workers that give no verdict ------------------

/// S1: a worker that exits 127 (tool missing), exits 2, is killed by SIGKILL or cannot be
/// spawned is "could not evaluate" (a noted `SENSOR_PASSED`, D4), never a pass; a blocking gate
/// refuses (and `gate check` exits 3); the audit gets exactly one terminal row per fire.
///
/// Also covered by `engine::worker_faults_are_recorded_as_non_evaluations`,
/// `engine::a_worker_that_cannot_be_spawned_is_spawn_failed`,
/// `gate_step::a_noted_pass_on_a_blocking_sensor_refuses_the_gate` and
/// `gate::exit_codes_follow_severity_and_evaluation`.
#[test]
fn scenario_01_a_worker_that_gives_no_verdict_never_passes_and_refuses_a_blocking_gate() {
    let cases = [
        (
            "exit 127",
            scenario::Sensor::gate("probe", "exit 127", "blocking"),
            "tool-unavailable",
        ),
        (
            "exit 2",
            scenario::Sensor::gate(
                "probe",
                "echo 'cannot read the config' >&2\nexit 2",
                "blocking",
            ),
            "script-error: exit-2",
        ),
        (
            "SIGKILL",
            scenario::Sensor::gate("probe", "kill -9 $$", "blocking"),
            "script-error: signal-SIGKILL",
        ),
        (
            "spawn failure",
            scenario::Sensor::gate("probe", PASS, "blocking").command("./no-such-worker --check"),
            "script-error: spawn-failed: ENOENT",
        ),
    ];
    for (name, sensor, note) in cases {
        let project = scenario::scenario_project(&[sensor]);

        let verdict = scenario::verdict_line(&scenario::fire(&project, "probe", DOC_A));
        assert_eq!(verdict["result"], "passed", "{name}: {verdict}");
        assert_eq!(verdict["note"], note, "{name}: {verdict}");
        let terminal = scenario::terminal_of(&project, &verdict);
        assert_eq!(terminal.event(), "SENSOR_PASSED", "{name}");
        assert_eq!(terminal.field("Note"), Some(note), "{name}: a noted pass");

        let start = scenario::gate_start(&project, &[]);
        assert_eq!(start.status, 1, "{name}: {}", start.stderr);
        for expected in [
            "Blocking gate sensor evaluation did not pass for \"first-stage\".".to_owned(),
            format!("probe@{DOC_A}: {note}"),
            format!("probe@{DOC_B}: {note}"),
        ] {
            assert!(start.stderr.contains(&expected), "{name}: {}", start.stderr);
        }
        assert!(
            scenario::gate_rows(&project).is_empty(),
            "{name}: the gate opened"
        );
        let terminals = scenario::assert_every_fire_paired(&project);
        assert_eq!(
            terminals.len(),
            3,
            "{name}: one manual fire, two at the gate"
        );
        assert!(
            terminals
                .values()
                .all(|row| row.field("Note") == Some(note)),
            "{name}: {terminals:?}"
        );

        let (check, report) = scenario::gate_check_json(&project, &["--no-record"]);
        assert_eq!(check.status, 3, "{name}: {}", check.stderr);
        assert_eq!(report["counts"]["blocking_not_evaluated"], 2, "{name}");
        assert_eq!(report["counts"]["passed"], 0, "{name}");
    }
}

// --- Failure scenario S2 (docs/failure-modes.md): worker output ---------------------------------

/// S2: a package-manager banner before the JSON still gives the verdict after it; garbage,
/// `{"pass":"false"}`, a missing `pass` and two verdict lines are bad output (a non-evaluation
/// whose stderr names the rule it broke), not passes, and do not pass a blocking gate. (A
/// missing `findings_count` is read as the reference reads it, D4.)
///
/// Also covered by `engine::ambiguous_worker_output_is_bad_output_that_names_the_rule_it_broke`,
/// `engine::a_banner_line_holding_a_brace_does_not_hide_the_verdict_after_it` and
/// `engine::a_negative_findings_count_is_bad_output`.
#[test]
fn scenario_02_a_banner_before_the_verdict_parses_and_malformed_output_is_never_a_pass() {
    let project = scenario::scenario_project(&[
        scenario::Sensor::write(
            "banner-fail",
            "echo '> demo@1.0.0 check /work'\necho '$ eslint {src,test}/**'\necho '{\"pass\":false,\"findings_count\":2}'",
            "**/*.md",
        ),
        scenario::Sensor::write(
            "banner-pass",
            "echo 'yarn run v1.22.19'\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
        scenario::Sensor::write(
            "garbage",
            "echo 'Segmentation fault (core dumped)'",
            "**/*.md",
        ),
        scenario::Sensor::write(
            "pass-string",
            "echo '{\"pass\":\"false\",\"findings_count\":0}'",
            "**/*.md",
        ),
        scenario::Sensor::write("no-pass", "echo '{\"findings_count\":0}'", "**/*.md"),
        scenario::Sensor::write(
            "two-verdicts",
            "echo '{\"pass\":false,\"findings_count\":1}'\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
    ]);

    let failed = scenario::verdict_line(&scenario::fire(&project, "banner-fail", DOC_A));
    assert_eq!(failed["result"], "failed", "{failed}");
    assert_eq!(
        scenario::terminal_of(&project, &failed).field("Findings count"),
        Some("2")
    );
    let passed = scenario::verdict_line(&scenario::fire(&project, "banner-pass", DOC_A));
    assert_eq!(passed["result"], "passed", "{passed}");
    assert!(passed.get("note").is_none(), "an unnoted pass: {passed}");

    for (sensor, rule) in [
        ("garbage", "stdout holds no JSON object"),
        ("pass-string", "`pass` is \"false\", not a boolean"),
        ("no-pass", "`pass` is missing"),
        ("two-verdicts", "lines that are each a verdict"),
    ] {
        let run = scenario::fire(&project, sensor, DOC_A);
        let verdict = scenario::verdict_line(&run);
        assert_eq!(verdict["result"], "passed", "{sensor}: {verdict}");
        assert_eq!(verdict["note"], "script-error: bad-output", "{sensor}");
        assert!(
            run.stderr.contains("script-error: bad-output: ") && run.stderr.contains(rule),
            "{sensor}: {}",
            run.stderr
        );
        let terminal = scenario::terminal_of(&project, &verdict);
        assert_eq!(terminal.event(), "SENSOR_PASSED", "{sensor}");
        assert_eq!(terminal.field("Note"), Some("script-error: bad-output"));
    }

    // The same output from a blocking gate sensor is not a pass either.
    let blocking = scenario::scenario_project(&[scenario::Sensor::gate(
        "two-verdicts",
        "echo '{\"pass\":false,\"findings_count\":1}'\necho '{\"pass\":true,\"findings_count\":0}'",
        "blocking",
    )]);
    let (check, report) = scenario::gate_check_json(&blocking, &["--no-record"]);
    assert_eq!(check.status, 3, "{}", check.stderr);
    assert_eq!(report["counts"]["blocking_not_evaluated"], 2);
    let start = scenario::gate_start(&blocking, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains("script-error: bad-output"),
        "{}",
        start.stderr
    );
}

// --- Failure scenario S3 (docs/failure-modes.md): timeouts --------------------------------------

/// S3: a worker that sleeps past `timeout_seconds` is killed with its children and classified
/// as a timeout (`SENSOR_BUDGET_OVERRIDE`), distinct from an external SIGTERM
/// (`script-error: external-sigterm`); the run ends soon after the cap (the time is printed,
/// and only a generous "did not hang" bound is asserted). A blocking sensor past its budget
/// refuses the gate.
///
/// The in-process variant (a shipped check that blocks) is the unit test
/// `sensors::in_process::tests::a_shipped_check_that_blocks_is_a_budget_override_at_its_timeout`;
/// also `engine::a_timeout_kills_the_worker_and_its_children`.
#[test]
fn scenario_03_a_worker_past_its_timeout_dies_with_its_children_as_a_budget_override() {
    let project = scenario::scenario_project(&[
        scenario::Sensor::gate(
            "sleeper",
            "sleep 300 &\necho $! > sleeper-child.pid\nsleep 300",
            "blocking",
        )
        .extra("timeout_seconds: 1\n"),
        scenario::Sensor::write("terminated", "kill -TERM $$\nsleep 5", "**/*.md"),
    ]);

    let started = Instant::now();
    let run = scenario::fire(&project, "sleeper", DOC_A);
    println!(
        "scenario 3: a fire whose worker outlives timeout_seconds: 1 ended after {:?}",
        started.elapsed()
    );
    let verdict = scenario::verdict_line(&run);
    assert_eq!(verdict["result"], "budget-override", "{verdict}");
    let terminal = scenario::terminal_of(&project, &verdict);
    assert_eq!(terminal.event(), "SENSOR_BUDGET_OVERRIDE");
    assert_eq!(terminal.field("Cap layer"), Some("registry"));
    assert_eq!(terminal.field("Cap value"), Some("1"));
    assert!(terminal.field("Note").is_none(), "{terminal:?}");
    let child = scenario::wait_for_pid_file(&project, "sleeper-child.pid");
    assert!(
        scenario::pid_is_gone_soon(&child),
        "the worker's child {child} outlived the fire"
    );

    let external = scenario::verdict_line(&scenario::fire(&project, "terminated", DOC_A));
    assert_eq!(external["result"], "passed", "{external}");
    assert_eq!(external["note"], "script-error: external-sigterm");

    let start = scenario::gate_start(&project, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains(&format!(
            "sleeper@{DOC_A}: sensor execution exceeded its budget"
        )),
        "{}",
        start.stderr
    );
    assert!(scenario::gate_rows(&project).is_empty());
}

// --- Failure scenario S4 (docs/failure-modes.md): manifest edge cases ---------------------------

/// S4: BOM and CRLF frontmatter and unknown extra keys are accepted (and the sensor fires);
/// unknown `kind`, `default_severity` or `fire_on` values, a zero, negative or fractional
/// timeout and an id that is not the file stem are refused by `compile` (which leaves the graph
/// as it was) and by the live registry before any audit row; two files with one id are both
/// named; an empty sensors folder is an empty registry, not an error.
///
/// `matches: ""` is not refused: the seed (D1's first source) says it is dropped at parse time
/// and acts as an omitted glob, and the compile keeps that. This test asserts that
/// behaviour instead (the graph entry has no `matches`, and the write hook never fires it).
///
/// Also covered by `compile::manifest_missing_fields_and_bad_enums`,
/// `compile::manifest_id_must_match_file_name`,
/// `compile::manifest_timeouts_must_be_positive_integers`,
/// `compile::duplicate_sensor_ids_name_both_files`,
/// `compile::empty_sensors_folder_is_an_empty_registry` and
/// `compile::an_empty_matches_is_dropped_as_if_omitted`.
#[test]
fn scenario_04_manifest_edge_cases_are_accepted_or_refused_before_any_audit_row() {
    let project = scenario::scenario_project(&[scenario::Sensor::write("probe", PASS, "**/*.md")]);
    let manifest_path = ".claude/sensors/aidlc-probe.md";
    let good = project.read(manifest_path);

    // Accepted: a BOM, CRLF line ends and a key this version does not know.
    let odd_but_valid = format!(
        "\u{feff}{}",
        good.replace("category: demo\n", "category: demo\nowner: team-docs\n")
            .replace('\n', "\r\n")
    );
    project.write(manifest_path, &odd_but_valid);
    let compiled = scenario::run(&project, &["compile", "--format", "json"]);
    assert_eq!(
        compiled.status, 0,
        "{}\n{}",
        compiled.stdout, compiled.stderr
    );
    assert!(
        !compiled.stdout.contains("\"severity\":\"error\""),
        "{}",
        compiled.stdout
    );
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    assert_eq!(graph[0]["sensors_applicable"][0]["id"], "probe");
    assert_eq!(graph[0]["sensors_applicable"][0]["matches"], "**/*.md");
    assert_eq!(
        scenario::verdict_line(&scenario::fire(&project, "probe", DOC_A))["result"],
        "passed"
    );
    let rows_before = scenario::blocks(&project).len();

    // Refused, each by compile (the graph stays) and by the fire's own registry (no row).
    let graph_before = project.read(GRAPH);
    let refusals = [
        (good.replace("kind: deterministic", "kind: llm"), "kind"),
        (
            good.replace("default_severity: advisory", "default_severity: critical"),
            "default_severity",
        ),
        (good.replace("fire_on: write", "fire_on: always"), "fire_on"),
        (
            good.replace("category: demo\n", "category: demo\ntimeout_seconds: 0\n"),
            "timeout_seconds must be a positive integer",
        ),
        (
            good.replace("category: demo\n", "category: demo\ntimeout_seconds: -5\n"),
            "timeout_seconds must be a positive integer",
        ),
        (
            good.replace("category: demo\n", "category: demo\ntimeout_seconds: 1.5\n"),
            "timeout_seconds must be a positive integer",
        ),
        (good.replace("id: probe", "id: other-probe"), "other-probe"),
    ];
    for (text, expected) in &refusals {
        project.write(manifest_path, text);
        let compiled = scenario::run(&project, &["compile"]);
        assert_eq!(compiled.status, 1, "{expected}: {}", compiled.stderr);
        assert!(
            compiled.stderr.contains(expected),
            "{expected}: {}",
            compiled.stderr
        );
        assert_eq!(
            project.read(GRAPH),
            graph_before,
            "{expected}: the graph moved"
        );
        let fired = scenario::fire(&project, "probe", DOC_A);
        assert_eq!(fired.status, 2, "{expected}: {}", fired.stderr);
        assert!(
            fired.stderr.contains("the sensor manifests have errors"),
            "{expected}: {}",
            fired.stderr
        );
        assert_eq!(
            scenario::blocks(&project).len(),
            rows_before,
            "{expected}: a row was written"
        );
    }

    // Two files with one id: both are named.
    project.write(manifest_path, &good);
    project.write(".claude/sensors/aidlc-probe-copy.md", &good);
    let compiled = scenario::run(&project, &["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stdout);
    let duplicate: Value = compiled
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|diagnostic| diagnostic["code"] == "duplicate-sensor-id")
        .unwrap_or_else(|| panic!("no duplicate-sensor-id: {}", compiled.stdout));
    let named: BTreeSet<&str> = std::iter::once(duplicate["file"].as_str().unwrap())
        .chain(
            duplicate["related"]
                .as_array()
                .unwrap()
                .iter()
                .map(|related| related["file"].as_str().unwrap()),
        )
        .collect();
    assert!(
        named.contains(manifest_path) && named.contains(".claude/sensors/aidlc-probe-copy.md"),
        "{duplicate}"
    );
    let fired = scenario::fire(&project, "probe", DOC_A);
    assert_eq!(fired.status, 2, "{}", fired.stderr);
    assert_eq!(scenario::blocks(&project).len(), rows_before);
    project.remove(".claude/sensors/aidlc-probe-copy.md");

    // `matches: ""` is dropped: the binding compiles without a glob and the hook skips it.
    project.write(manifest_path, &good.replace("\"**/*.md\"", "\"\""));
    let compiled = scenario::run(&project, &["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    assert!(
        graph[0]["sensors_applicable"][0].get("matches").is_none(),
        "{}",
        graph[0]["sensors_applicable"][0]
    );
    assert_eq!(
        scenario::hook(&project, project.path(DOC_A).as_str()).status,
        0
    );
    assert_eq!(
        scenario::blocks(&project).len(),
        rows_before,
        "an entry without a glob fired"
    );
    assert_eq!(scenario::drops(&project), "");

    // An empty sensors folder is an empty registry.
    let empty = TestProject::empty();
    std::fs::create_dir_all(empty.path(".claude/sensors")).unwrap();
    scenario::write_agent(&empty);
    empty.write(
        STAGE_FILE,
        &scenario::stage_file(STAGE, "inception", &["doc-a"], &[], &[], "[]"),
    );
    let compiled = scenario::run(&empty, &["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let list = scenario::run(&empty, &["engine", "sensor", "list"]);
    assert_eq!(
        (list.status, list.stdout.as_str()),
        (0, ""),
        "{}",
        list.stderr
    );
}

// --- Failure scenario S7 (docs/failure-modes.md): globs -----------------------------------------

/// S7: `**/*.{ts,tsx}`, `**/{a,b}/**`, two brace groups and `**/x/**/*.md` match as written, on
/// project-relative and absolute paths; a manual fire and the write hook agree on every case
/// (one matcher, D5); a path written with backslashes is matched as with `/`; a file outside
/// the project is refused by both; a gate-fired sensor whose glob cannot match any declared
/// output of its stage is flagged at compile.
///
/// On this platform a backslash is a file-name character, so a manual fire of the backslash
/// spelling names no file and is refused; a hook payload's backslashes are separators (the
/// harness sent a Windows path, N5), so the hook fires what the `/` spelling fires. Matching
/// itself is unit-tested in `src/protocol/glob/` (with a differential test against globset).
///
/// Also covered by `compile::a_blocking_gate_sensor_whose_glob_misses_every_output_is_a_compile_error`,
/// `compile::an_advisory_gate_sensor_whose_glob_misses_is_a_warning_and_still_compiles`
/// and `compile::reverse_engineering_outputs_are_in_the_codekb_so_a_glob_without_it_is_dead`.
#[test]
fn scenario_07_one_matcher_for_every_glob_and_manual_and_hook_fires_agree() {
    let sensors = [
        scenario::Sensor::write("code", PASS, "**/*.{ts,tsx}"),
        scenario::Sensor::write("phases", PASS, "**/{inception,construction}/**"),
        scenario::Sensor::write(
            "two-groups",
            PASS,
            "**/{inception,construction}/*/*.{md,txt}",
        ),
        scenario::Sensor::write("deep-x", PASS, "**/x/**/*.md"),
        scenario::Sensor::gate("ts-gate", PASS, "advisory").matches("**/*.ts"),
    ];
    let project = scenario::scenario_project(&sensors);
    // The gate sensor can never fire on the stage's Markdown outputs: a warning while it is
    // advisory, an error once it is blocking.
    let compiled = scenario::run(&project, &["compile", "--force", "--format", "json"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stdout);
    let diagnostics = scenario::json_diagnostics(&compiled);
    assert_eq!(diagnostics.len(), 1, "{}", compiled.stdout);
    assert_eq!(diagnostics[0]["code"], "dead-sensor-binding");
    assert_eq!(diagnostics[0]["severity"], "warning");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("\"ts-gate\""),
        "{}",
        diagnostics[0]
    );
    let ts_gate = ".claude/sensors/aidlc-ts-gate.md";
    let advisory = project.read(ts_gate);
    project.write(
        ts_gate,
        &advisory.replace("default_severity: advisory", "default_severity: blocking"),
    );
    let compiled = scenario::run(&project, &["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stdout);
    assert_eq!(
        scenario::json_diagnostics(&compiled)[0]["severity"],
        "error"
    );
    project.write(ts_gate, &advisory);
    assert_eq!(scenario::run(&project, &["compile"]).status, 0);

    let write_sensors = ["code", "phases", "two-groups", "deep-x"];
    // Files of the record the stage does not declare fire nothing (scenario 14, Z4), so the
    // other spellings the globs must match live outside the record.
    let cases: Vec<(String, &[&str])> = vec![
        (DOC_A.to_owned(), &["phases", "two-groups"]),
        (
            "docs/inception/first-stage/notes.txt".to_owned(),
            &["phases", "two-groups"],
        ),
        (
            "docs/construction/unit-a/code-generation/plan.md".to_owned(),
            &["phases"],
        ),
        ("src/app.ts".to_owned(), &["code"]),
        ("src/ui/app.tsx".to_owned(), &["code"]),
        ("src/app.js".to_owned(), &[]),
        ("x/top.md".to_owned(), &["deep-x"]),
        ("docs/x/a/b/deep.md".to_owned(), &["deep-x"]),
        ("docs/xx/a.md".to_owned(), &[]),
    ];
    for (path, expected) in &cases {
        if !project.exists(path) {
            project.write(path, "# A file\n");
        }
        let expected: BTreeSet<&str> = expected.iter().copied().collect();
        // Manual fires, with the relative and with the absolute path.
        for spelling in [path.clone(), project.path(path).to_string()] {
            let mut manual = BTreeSet::new();
            for sensor in write_sensors {
                let fired = scenario::fire(&project, sensor, &spelling);
                match fired.status {
                    0 => {
                        manual.insert(sensor);
                    }
                    2 => assert!(
                        fired
                            .stderr
                            .contains(&format!("does not match sensor \"{sensor}\"")),
                        "{sensor} on {spelling}: {}",
                        fired.stderr
                    ),
                    other => panic!("{sensor} on {spelling}: exit {other}: {}", fired.stderr),
                }
            }
            assert_eq!(manual, expected, "manual fires on {spelling}");
        }
        // The hook, told of the absolute path as an agent harness tells it.
        let before = scenario::events(&scenario::blocks(&project), "SENSOR_FIRED").len();
        assert_eq!(
            scenario::hook(&project, project.path(path).as_str()).status,
            0
        );
        let all = scenario::blocks(&project);
        let fired_by_hook: BTreeSet<&str> = scenario::events(&all, "SENSOR_FIRED")[before..]
            .iter()
            .map(|block| block.field("Sensor ID").unwrap())
            .collect();
        assert_eq!(fired_by_hook, expected, "the hook on {path}");
        assert_eq!(
            scenario::drops(&project),
            "",
            "the hook dropped a write of {path}"
        );
    }
    scenario::assert_every_fire_paired(&project);

    // A backslash spelling: a manual fire takes it as the file name it is, which does not exist;
    // the hook reads a payload's backslashes as separators (Windows harnesses send them, N5),
    // so it fires what the `/` spelling fires.
    let backslashed = DOC_A.replace('/', "\\");
    let rows = scenario::blocks(&project).len();
    for sensor in ["phases", "two-groups"] {
        let fired = scenario::fire(&project, sensor, &backslashed);
        assert_eq!(fired.status, 2, "{}", fired.stderr);
        assert!(
            fired.stderr.contains("output path does not exist"),
            "{}",
            fired.stderr
        );
    }
    assert_eq!(
        scenario::blocks(&project).len(),
        rows,
        "the manual fires wrote nothing"
    );
    assert_eq!(scenario::hook(&project, &backslashed).status, 0);
    let all = scenario::blocks(&project);
    let fired_by_hook: BTreeSet<&str> = scenario::events(&all, "SENSOR_FIRED")
        .iter()
        .skip(scenario::events(&all[..rows], "SENSOR_FIRED").len())
        .map(|block| block.field("Sensor ID").unwrap())
        .collect();
    assert_eq!(fired_by_hook, BTreeSet::from(["phases", "two-groups"]));
    assert_eq!(
        scenario::drops(&project),
        "",
        "the hook dropped the backslash spelling"
    );
    scenario::assert_every_fire_paired(&project);

    // Outside the project: refused by both, and the hook says why.
    let rows = scenario::blocks(&project).len();
    let outside = TestProject::empty();
    outside.write("x/far.md", "# Far\n");
    let far = outside.path("x/far.md");
    let fired = scenario::fire(&project, "deep-x", far.as_str());
    assert_eq!(fired.status, 2, "{}", fired.stderr);
    assert!(
        fired.stderr.contains("is outside the project"),
        "{}",
        fired.stderr
    );
    assert_eq!(scenario::hook(&project, far.as_str()).status, 0);
    assert!(
        scenario::drops(&project)
            .contains(&format!("deep-x: output path {far} is outside the project")),
        "{}",
        scenario::drops(&project)
    );
    assert_eq!(scenario::blocks(&project).len(), rows);
}
