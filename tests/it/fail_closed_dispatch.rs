//! Issue 10, the dispatch part, through the real binary: ambiguous worker output is bad output
//! (item 3), a worker's children die with it (item 5), signals stop every worker and record
//! every started fire (item 12), special files and slow in-process checks (item 13), and
//! output failures (item 14).

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use aidlc::runtime::audit::ledger::{AuditBlock, pair_fires, parse_blocks};
use serde_json::Value;

use crate::support::{Run, TestProject, manifest, stage};

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";
const OUTPUT: &str =
    "aidlc/spaces/default/intents/261130-demo/inception/first-stage/first-stage-doc.md";

/// Longer than any of these runs takes when it works; a run past it is a hang.
const HANG: Duration = Duration::from_secs(60);

// --- Projects -----------------------------------------------------------------------------------

/// A compiled project with sensor `fake` (worker `sh fake-worker.sh`, whose body is `body`;
/// `extra` frontmatter lines in its manifest), one stage importing it, an intent record on that
/// stage, and the output file.
fn project_with_worker(body: &str, extra: &str) -> TestProject {
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

/// The only fire's terminal row.
fn only_terminal(project: &TestProject) -> AuditBlock {
    let blocks = audit_blocks(project);
    let pairs = pair_fires(&blocks);
    assert_eq!(pairs.len(), 1, "{blocks:?}");
    pairs[0].terminal.expect("a terminal row").clone()
}

// --- Processes ----------------------------------------------------------------------------------

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

    /// Wait for the exit, at most [`HANG`]; a run that takes longer is killed and fails the
    /// test.
    fn finish(mut self) -> Run {
        let give_up = Instant::now() + HANG;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > give_up {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("aidlc did not finish within {HANG:?}");
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

/// `aidlc <args>` with a watchdog: a hang fails the test instead of stalling it.
fn run_bounded(project: &TestProject, args: &[&str]) -> Run {
    Background::start(project, args).finish()
}

/// The trimmed content of `relative` once it is non-empty (a worker writes its pid there).
fn wait_for_pid(project: &TestProject, relative: &str) -> String {
    let give_up = Instant::now() + HANG;
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

// --- Item 3: ambiguous worker output ------------------------------------------------------------

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
        let project = project_with_worker(&format!("echo '{stdout}'"), "");
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
    let project = project_with_worker(
        "echo '> eslint {src,test}/**'\necho '{\"pass\":false,\"findings_count\":2}'",
        "",
    );
    let verdict = verdict_line(&run_bounded(&project, &fire_args()));
    assert_eq!(verdict["result"], "failed", "{verdict}");
    assert_eq!(only_terminal(&project).field("Findings count"), Some("2"));
}

/// The fail-open the issue found: a duplicate `pass` key opened a blocking gate.
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

// --- Item 5: a worker's children ----------------------------------------------------------------

/// A worker leaves `sleep 300 &` holding its stdout and exits with a verdict: the fire returns
/// at once (not after the 1200 s fallback budget), and the child is gone.
#[test]
fn a_worker_s_background_child_neither_holds_the_fire_nor_outlives_it() {
    let project = project_with_worker(
        "sleep 300 &\necho $! > child.pid\necho '{\"pass\":true,\"findings_count\":0}'\nexit 0",
        "",
    );
    let started = Instant::now();
    let run = run_bounded(&project, &fire_args());
    let verdict = verdict_line(&run);
    assert_eq!(verdict["result"], "passed");
    assert!(verdict.get("note").is_none(), "{verdict}");
    assert!(started.elapsed() < HANG);
    assert_gone(&[wait_for_pid(&project, "child.pid")]);
}

// --- Item 12: signals ---------------------------------------------------------------------------

#[test]
fn a_signal_to_fire_stops_the_worker_records_the_fire_and_exits_130() {
    for signal in ["INT", "TERM", "HUP"] {
        let project = project_with_worker(SLEEPING_WORKER, "");
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

/// Issue 26 item 15: a dispatcher killed with SIGKILL runs no handler of its own, and its
/// worker (and the worker's child, in the worker's group) must not run on without it.
#[test]
fn a_dispatcher_killed_with_sigkill_takes_its_worker_and_its_group_with_it() {
    let project = project_with_worker(SLEEPING_WORKER, "");
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
        let project = project_with_worker(SLEEPING_WORKER, "");
        let shard = aidlc::runtime::workspace::audit_shard_path(&project.root).unwrap();
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

// --- Item 13: special files and in-process timeouts ---------------------------------------------

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
    let project = project_with_worker("echo '{\"pass\":true,\"findings_count\":0}'", "");
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
    let started = std::time::Instant::now();
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
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the FIFO was waited on"
    );
    let verdict = verdict_line(&run);
    // A noted pass is no pass (D4): the note says the check could not run.
    let note = verdict["note"].as_str().unwrap_or_default();
    assert!(note.starts_with("script-error"), "{verdict}");
    let terminal = only_terminal(&project);
    assert_ne!(terminal.event, "SENSOR_BUDGET_OVERRIDE", "{verdict}");
}

// --- Item 14: output failures -------------------------------------------------------------------

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
    let project = project_with_worker("echo '{\"pass\":true,\"findings_count\":0}'", "");
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
