//! The 18 scenarios S1–S18 of docs/failure-modes.md (issue 10's proof), one test each, named
//! `scenario_NN_<what it proves>`, end to end through the real binary.
//!
//! Each test asserts its scenario's sentence as far as this engine implements it. A clause it
//! does not assert is named in a comment: covered by an existing test (`module::name`), or not
//! applicable, with the reason (plugins are not built yet, ARCHITECTURE.md "What is not built
//! yet"; doctor is issue 14; the conductor's completion paths stay in the reference, D10). Issue
//! 10's closing note carries the scenario → test map, with every clause not asserted and why.
//!
//! These tests read only what another process could read: the binary's exit status and output,
//! and the files it writes (the audit shards through `support::parse_ledger_text`, which
//! follows the reference's format, not the library's parser).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{
    GRAPH, GRID, HANG, LedgerBlock, Run, SHARD_HEADER, TestProject, audit_block, audit_lock_path,
    ledger_blocks, parse_ledger_text,
};

const STAGE: &str = "first-stage";
const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";
const DOC_A: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage/doc-a.md";
const DOC_B: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage/doc-b.md";
const STAGE_FILE: &str = ".claude/aidlc-common/stages/inception/first-stage.md";
const OVERRIDE_CHOICE: &str = "Override blocking sensors";

/// A worker that passes.
const PASS: &str = "echo '{\"pass\":true,\"findings_count\":0}'";
/// A worker that fails (2 findings) on a file containing FAIL, and passes otherwise.
const SHAPE: &str = "if grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":2}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
/// A worker that appends to the file it checks, then passes.
const EDITOR: &str = "echo edited >> \"$4\"\necho '{\"pass\":true,\"findings_count\":0}'";

/// The terminal events of a fire.
const TERMINAL_EVENTS: [&str; 3] = ["SENSOR_PASSED", "SENSOR_FAILED", "SENSOR_BUDGET_OVERRIDE"];

// --- The project every scenario starts from ------------------------------------------------------

/// One sensor of the test stage. Its worker is `sh workers/<id>.sh` (body `worker`; `$4` is the
/// file) unless `command` says otherwise.
#[derive(Debug, Clone, Copy)]
struct Sensor {
    id: &'static str,
    worker: &'static str,
    command: Option<&'static str>,
    severity: &'static str,
    fire_on: &'static str,
    matches: &'static str,
    extra: &'static str,
}

impl Sensor {
    /// A gate-fired sensor on every Markdown file.
    const fn gate(id: &'static str, worker: &'static str, severity: &'static str) -> Self {
        Self {
            id,
            worker,
            command: None,
            severity,
            fire_on: "gate",
            matches: "**/*.md",
            extra: "",
        }
    }

    /// An advisory write-fired sensor on `matches`.
    const fn write(id: &'static str, worker: &'static str, matches: &'static str) -> Self {
        Self {
            id,
            worker,
            command: None,
            severity: "advisory",
            fire_on: "write",
            matches,
            extra: "",
        }
    }

    const fn command(self, command: &'static str) -> Self {
        Self {
            command: Some(command),
            ..self
        }
    }

    const fn matches(self, matches: &'static str) -> Self {
        Self { matches, ..self }
    }

    const fn extra(self, extra: &'static str) -> Self {
        Self { extra, ..self }
    }

    fn manifest(&self) -> String {
        let command = self
            .command
            .map_or_else(|| format!("sh workers/{}.sh", self.id), str::to_owned);
        format!(
            "---\nid: {id}\nkind: deterministic\ncommand: {command}\ndefault_severity: {severity}\nfire_on: {fire_on}\ndescription: A sensor of the scenario tests\ncategory: demo\nmatches: \"{matches}\"\n{extra}---\n\n# {id}\n",
            id = self.id,
            severity = self.severity,
            fire_on = self.fire_on,
            matches = self.matches,
            extra = self.extra,
        )
    }
}

/// A stage file: `produces` artifacts, `requires` stages, `sensors` imported, and `consumes`
/// (a YAML value).
fn stage_file(
    slug: &str,
    phase: &str,
    produces: &[&str],
    requires: &[&str],
    sensors: &[&str],
    consumes: &str,
) -> String {
    let produces: String = produces.iter().fold(String::new(), |mut list, name| {
        let _ = write!(list, "\n  - {name}");
        list
    });
    let produces = if produces.is_empty() {
        " []".to_owned()
    } else {
        produces
    };
    format!(
        "---\nslug: {slug}\nphase: {phase}\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:{produces}\nconsumes: {consumes}\nrequires_stage: [{requires}]\nsensors: [{sensors}]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# {slug}\n\nProse about the stage.\n",
        requires = requires.join(", "),
        sensors = sensors.join(", "),
    )
}

fn write_agent(project: &TestProject) {
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
}

/// The intent record's state, on `stage`, with `lines` more.
fn write_state(project: &TestProject, stage: &str, lines: &str) {
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("# State\n\n- **Current Stage**: {stage}\n{lines}"),
    );
}

/// A compiled project: stage `first-stage` (inception) produces `doc-a` and `doc-b`, both on
/// disk with two sections each, and imports `sensors` in order; stage `second-stage` requires
/// it, produces `second-doc` and imports nothing. The intent record is on `first-stage`.
fn scenario_project(sensors: &[Sensor]) -> TestProject {
    let project = TestProject::empty();
    for sensor in sensors {
        project.write(
            &format!("workers/{}.sh", sensor.id),
            &format!("#!/bin/sh\n{}\n", sensor.worker),
        );
        project.write(
            &format!(".claude/sensors/aidlc-{}.md", sensor.id),
            &sensor.manifest(),
        );
    }
    write_agent(&project);
    let ids: Vec<&str> = sensors.iter().map(|sensor| sensor.id).collect();
    project.write(
        STAGE_FILE,
        &stage_file(STAGE, "inception", &["doc-a", "doc-b"], &[], &ids, "[]"),
    );
    project.write(
        ".claude/aidlc-common/stages/inception/second-stage.md",
        &stage_file(
            "second-stage",
            "inception",
            &["second-doc"],
            &[STAGE],
            &[],
            "[]",
        ),
    );
    let compiled = project.run_watched(&["compile"], &[], None);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    write_state(&project, STAGE, "");
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    project.write(DOC_B, "# B\n\n## Scope\n\n## Risks\n");
    project
}

// --- Running the binary ------------------------------------------------------------------------

fn run(project: &TestProject, args: &[&str]) -> Run {
    project.run_watched(args, &[], None)
}

/// `aidlc engine sensor fire <sensor> --stage <stage> --output-path <path>`.
fn fire_on_stage(project: &TestProject, sensor: &str, stage: &str, path: &str) -> Run {
    run(
        project,
        &[
            "engine",
            "sensor",
            "fire",
            sensor,
            "--stage",
            stage,
            "--output-path",
            path,
        ],
    )
}

fn fire(project: &TestProject, sensor: &str, path: &str) -> Run {
    fire_on_stage(project, sensor, STAGE, path)
}

/// The one verdict line of a fire that recorded its verdict.
fn verdict_line(run: &Run) -> Value {
    assert_eq!(run.status, 0, "the fire was refused: {}", run.stderr);
    assert_eq!(run.stdout.trim().lines().count(), 1, "{}", run.stdout);
    serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}", run.stdout))
}

/// The worker's JSON a failed fire kept in its detail file (the fenced `json` block).
fn detail_findings(project: &TestProject, verdict: &Value) -> Value {
    let detail = project.read(verdict["detail_path"].as_str().expect("a detail path"));
    let start = detail.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start
        + detail[start..]
            .find("\n```")
            .expect("the end of the json block");
    serde_json::from_str(&detail[start..end]).unwrap_or_else(|error| panic!("{error}: {detail}"))
}

fn gate_start(project: &TestProject, extra: &[&str]) -> Run {
    let mut args = vec!["engine", "gate", "start", STAGE];
    args.extend(extra);
    run(project, &args)
}

/// `aidlc gate check --format json --quiet <extra>` and its parsed report.
fn gate_check_json(project: &TestProject, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["gate", "check", "--format", "json", "--quiet"];
    args.extend(extra);
    let run = run(project, &args);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

/// The write hook, told that the agent wrote `file_path` (as given: absolute or not).
fn hook(project: &TestProject, file_path: &str) -> Run {
    let payload = serde_json::json!({"tool_input": {"file_path": file_path}}).to_string();
    project.run_watched(&["engine", "hook", "run-sensors"], &[], Some(&payload))
}

fn drops(project: &TestProject) -> String {
    std::fs::read_to_string(
        project.path(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.drops")),
    )
    .unwrap_or_default()
}

// --- Reading the ledger --------------------------------------------------------------------------

fn blocks(project: &TestProject) -> Vec<LedgerBlock> {
    ledger_blocks(project, RECORD)
}

fn events<'b>(blocks: &'b [LedgerBlock], event: &str) -> Vec<&'b LedgerBlock> {
    blocks
        .iter()
        .filter(|block| block.event() == event)
        .collect()
}

fn gate_rows(project: &TestProject) -> Vec<LedgerBlock> {
    blocks(project)
        .into_iter()
        .filter(|block| block.event() == "STAGE_AWAITING_APPROVAL")
        .collect()
}

/// Every fire in the ledger, by fire id: its `SENSOR_FIRED` and its terminal rows. Asserts
/// that every block is whole (a heading, a timestamp and an event) and that every sensor row
/// carries a fire id.
fn fires_by_id(blocks: &[LedgerBlock]) -> BTreeMap<String, (usize, Vec<LedgerBlock>)> {
    let mut fires: BTreeMap<String, (usize, Vec<LedgerBlock>)> = BTreeMap::new();
    for block in blocks {
        assert!(
            block.field("Timestamp").is_some() && !block.event().is_empty(),
            "a block that is not whole: {block:?}"
        );
        if !block.event().starts_with("SENSOR_") {
            continue;
        }
        let fire_id = block
            .field("Fire id")
            .unwrap_or_else(|| panic!("a sensor row without a fire id: {block:?}"))
            .to_owned();
        let entry = fires.entry(fire_id).or_default();
        if block.event() == "SENSOR_FIRED" {
            entry.0 += 1;
        } else {
            assert!(
                TERMINAL_EVENTS.contains(&block.event()),
                "an unknown sensor event: {block:?}"
            );
            entry.1.push(block.clone());
        }
    }
    fires
}

/// Asserts that every fire in the ledger has exactly one `SENSOR_FIRED` and exactly one
/// terminal row with its fire id, and returns the terminal rows by fire id.
fn assert_every_fire_paired(project: &TestProject) -> BTreeMap<String, LedgerBlock> {
    fires_by_id(&blocks(project))
        .into_iter()
        .map(|(fire_id, (fired, terminals))| {
            assert_eq!(fired, 1, "fire {fire_id}: {fired} SENSOR_FIRED rows");
            assert_eq!(
                terminals.len(),
                1,
                "fire {fire_id}: {} terminal rows",
                terminals.len()
            );
            (fire_id, terminals[0].clone())
        })
        .collect()
}

/// The terminal row of the fire whose verdict line is `verdict`, once every fire is paired.
fn terminal_of(project: &TestProject, verdict: &Value) -> LedgerBlock {
    let fire_id = verdict["fire_id"].as_str().expect("a fire id");
    assert_every_fire_paired(project)
        .remove(fire_id)
        .unwrap_or_else(|| panic!("fire {fire_id} is not in the ledger"))
}

// --- Processes -----------------------------------------------------------------------------------

/// Whether `pid` is gone (or a zombie nobody reaped yet), waiting up to 10 s for it to go.
fn pid_is_gone_soon(pid: &str) -> bool {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|text| {
                let after_name = &text[text.rfind(')')? + 1..];
                after_name.split_whitespace().next().map(str::to_owned)
            });
        if state.is_none_or(|state| state == "Z") {
            return true;
        }
        if Instant::now() > give_up {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The trimmed content of `relative` once a worker has written it whole (`<pid>\n`).
fn wait_for_pid_file(project: &TestProject, relative: &str) -> String {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(project.path(relative)).unwrap_or_default();
        if text.ends_with('\n') && !text.trim().is_empty() {
            return text.trim().to_owned();
        }
        assert!(started.elapsed() < HANG, "{relative} was never written");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for_file(project: &TestProject, relative: &str) {
    let started = Instant::now();
    while !project.exists(relative) {
        assert!(started.elapsed() < HANG, "{relative} never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `aidlc <args>` started in the background; its output is read by [`finish`].
fn spawn(project: &TestProject, args: &[&str]) -> std::process::Child {
    project
        .command(&project.root, args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start aidlc")
}

/// Wait for a background run, at most [`HANG`].
fn finish(mut child: std::process::Child) -> Run {
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("aidlc did not finish within {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::from(child.wait_with_output().expect("collect the output"))
}

fn kill(signal: &str, pid: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), pid])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Every regular file under the project folder with its bytes.
fn tree_bytes(project: &TestProject) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut folders = vec![project.root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in folder.read_dir_utf8().unwrap().filter_map(Result::ok) {
            let path = entry.path().to_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                folders.push(path);
            } else {
                files.insert(
                    path.strip_prefix(&project.root).unwrap().to_string(),
                    std::fs::read(&path).unwrap_or_default(),
                );
            }
        }
    }
    files
}

// === 1. Workers that give no verdict ============================================================

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
            Sensor::gate("probe", "exit 127", "blocking"),
            "tool-unavailable",
        ),
        (
            "exit 2",
            Sensor::gate(
                "probe",
                "echo 'cannot read the config' >&2\nexit 2",
                "blocking",
            ),
            "script-error: exit-2",
        ),
        (
            "SIGKILL",
            Sensor::gate("probe", "kill -9 $$", "blocking"),
            "script-error: signal-SIGKILL",
        ),
        (
            "spawn failure",
            Sensor::gate("probe", PASS, "blocking").command("./no-such-worker --check"),
            "script-error: spawn-failed: ENOENT",
        ),
    ];
    for (name, sensor, note) in cases {
        let project = scenario_project(&[sensor]);

        let verdict = verdict_line(&fire(&project, "probe", DOC_A));
        assert_eq!(verdict["result"], "passed", "{name}: {verdict}");
        assert_eq!(verdict["note"], note, "{name}: {verdict}");
        let terminal = terminal_of(&project, &verdict);
        assert_eq!(terminal.event(), "SENSOR_PASSED", "{name}");
        assert_eq!(terminal.field("Note"), Some(note), "{name}: a noted pass");

        let start = gate_start(&project, &[]);
        assert_eq!(start.status, 1, "{name}: {}", start.stderr);
        for expected in [
            "Blocking gate sensor evaluation did not pass for \"first-stage\".".to_owned(),
            format!("probe@{DOC_A}: {note}"),
            format!("probe@{DOC_B}: {note}"),
        ] {
            assert!(start.stderr.contains(&expected), "{name}: {}", start.stderr);
        }
        assert!(gate_rows(&project).is_empty(), "{name}: the gate opened");
        let terminals = assert_every_fire_paired(&project);
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

        let (check, report) = gate_check_json(&project, &["--no-record"]);
        assert_eq!(check.status, 3, "{name}: {}", check.stderr);
        assert_eq!(report["counts"]["blocking_not_evaluated"], 2, "{name}");
        assert_eq!(report["counts"]["passed"], 0, "{name}");
    }
}

// === 2. Worker output ==========================================================================

/// S2: a package-manager banner before the JSON still gives the verdict after it; garbage,
/// `{"pass":"false"}`, a missing `pass` and two verdict lines are bad output (a non-evaluation
/// whose stderr names the rule it broke), not passes, and do not pass a blocking gate. (A
/// missing `findings_count` is read as the reference reads it, D4.)
///
/// Also covered by `fail_closed_dispatch::ambiguous_worker_output_is_bad_output_that_names_the_rule_it_broke`,
/// `fail_closed_dispatch::a_banner_line_holding_a_brace_does_not_hide_the_verdict_after_it` and
/// `engine::a_negative_findings_count_is_bad_output`.
#[test]
fn scenario_02_a_banner_before_the_verdict_parses_and_malformed_output_is_never_a_pass() {
    let project = scenario_project(&[
        Sensor::write(
            "banner-fail",
            "echo '> demo@1.0.0 check /work'\necho '$ eslint {src,test}/**'\necho '{\"pass\":false,\"findings_count\":2}'",
            "**/*.md",
        ),
        Sensor::write(
            "banner-pass",
            "echo 'yarn run v1.22.19'\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
        Sensor::write(
            "garbage",
            "echo 'Segmentation fault (core dumped)'",
            "**/*.md",
        ),
        Sensor::write(
            "pass-string",
            "echo '{\"pass\":\"false\",\"findings_count\":0}'",
            "**/*.md",
        ),
        Sensor::write("no-pass", "echo '{\"findings_count\":0}'", "**/*.md"),
        Sensor::write(
            "two-verdicts",
            "echo '{\"pass\":false,\"findings_count\":1}'\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
    ]);

    let failed = verdict_line(&fire(&project, "banner-fail", DOC_A));
    assert_eq!(failed["result"], "failed", "{failed}");
    assert_eq!(
        terminal_of(&project, &failed).field("Findings count"),
        Some("2")
    );
    let passed = verdict_line(&fire(&project, "banner-pass", DOC_A));
    assert_eq!(passed["result"], "passed", "{passed}");
    assert!(passed.get("note").is_none(), "an unnoted pass: {passed}");

    for (sensor, rule) in [
        ("garbage", "stdout holds no JSON object"),
        ("pass-string", "`pass` is \"false\", not a boolean"),
        ("no-pass", "`pass` is missing"),
        ("two-verdicts", "lines that are each a verdict"),
    ] {
        let run = fire(&project, sensor, DOC_A);
        let verdict = verdict_line(&run);
        assert_eq!(verdict["result"], "passed", "{sensor}: {verdict}");
        assert_eq!(verdict["note"], "script-error: bad-output", "{sensor}");
        assert!(
            run.stderr.contains("script-error: bad-output: ") && run.stderr.contains(rule),
            "{sensor}: {}",
            run.stderr
        );
        let terminal = terminal_of(&project, &verdict);
        assert_eq!(terminal.event(), "SENSOR_PASSED", "{sensor}");
        assert_eq!(terminal.field("Note"), Some("script-error: bad-output"));
    }

    // The same output from a blocking gate sensor is not a pass either.
    let blocking = scenario_project(&[Sensor::gate(
        "two-verdicts",
        "echo '{\"pass\":false,\"findings_count\":1}'\necho '{\"pass\":true,\"findings_count\":0}'",
        "blocking",
    )]);
    let (check, report) = gate_check_json(&blocking, &["--no-record"]);
    assert_eq!(check.status, 3, "{}", check.stderr);
    assert_eq!(report["counts"]["blocking_not_evaluated"], 2);
    let start = gate_start(&blocking, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains("script-error: bad-output"),
        "{}",
        start.stderr
    );
}

// === 3. Timeouts ================================================================================

/// S3: a worker that sleeps past `timeout_seconds` is killed with its children and classified
/// as a timeout (`SENSOR_BUDGET_OVERRIDE`), distinct from an external SIGTERM
/// (`script-error: external-sigterm`); the run ends soon after the cap (the time is printed,
/// and only a generous "did not hang" bound is asserted). A blocking sensor past its budget
/// refuses the gate.
///
/// The in-process variant (a shipped check that blocks) is
/// `fail_closed_dispatch::an_in_process_sensor_that_blocks_is_a_budget_override_at_its_timeout`;
/// also `engine::a_timeout_kills_the_worker_and_its_children`.
#[test]
fn scenario_03_a_worker_past_its_timeout_dies_with_its_children_as_a_budget_override() {
    let project = scenario_project(&[
        Sensor::gate(
            "sleeper",
            "sleep 300 &\necho $! > sleeper-child.pid\nsleep 300",
            "blocking",
        )
        .extra("timeout_seconds: 1\n"),
        Sensor::write("terminated", "kill -TERM $$\nsleep 5", "**/*.md"),
    ]);

    let started = Instant::now();
    let run = fire(&project, "sleeper", DOC_A);
    println!(
        "scenario 3: a fire whose worker outlives timeout_seconds: 1 ended after {:?}",
        started.elapsed()
    );
    let verdict = verdict_line(&run);
    assert_eq!(verdict["result"], "budget-override", "{verdict}");
    let terminal = terminal_of(&project, &verdict);
    assert_eq!(terminal.event(), "SENSOR_BUDGET_OVERRIDE");
    assert_eq!(terminal.field("Cap layer"), Some("registry"));
    assert_eq!(terminal.field("Cap value"), Some("1"));
    assert!(terminal.field("Note").is_none(), "{terminal:?}");
    let child = wait_for_pid_file(&project, "sleeper-child.pid");
    assert!(
        pid_is_gone_soon(&child),
        "the worker's child {child} outlived the fire"
    );

    let external = verdict_line(&fire(&project, "terminated", DOC_A));
    assert_eq!(external["result"], "passed", "{external}");
    assert_eq!(external["note"], "script-error: external-sigterm");

    let start = gate_start(&project, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains(&format!(
            "sleeper@{DOC_A}: sensor execution exceeded its budget"
        )),
        "{}",
        start.stderr
    );
    assert!(gate_rows(&project).is_empty());
}

// === 4. Manifest edge cases =====================================================================

/// S4: BOM and CRLF frontmatter and unknown extra keys are accepted (and the sensor fires);
/// unknown `kind`, `default_severity` or `fire_on` values, a zero, negative or fractional
/// timeout and an id that is not the file stem are refused by `compile` (which leaves the graph
/// as it was) and by the live registry before any audit row; two files with one id are both
/// named; an empty sensors folder is an empty registry, not an error.
///
/// `matches: ""` is not refused: the seed (D1's first source) says it is dropped at parse time
/// and acts as an omitted glob, and issue 10 item 17 keeps that. This test asserts that
/// behaviour instead (the graph entry has no `matches`, and the write hook never fires it).
///
/// Also covered by `bad_input::manifest_missing_fields_and_bad_enums`,
/// `bad_input::manifest_id_must_match_file_name`,
/// `bad_input::manifest_timeouts_must_be_positive_integers`,
/// `bad_input::duplicate_sensor_ids_name_both_files`,
/// `compile::empty_sensors_folder_is_an_empty_registry` and
/// `fail_closed_compile::an_empty_matches_is_dropped_as_if_omitted`.
#[test]
fn scenario_04_manifest_edge_cases_are_accepted_or_refused_before_any_audit_row() {
    let project = scenario_project(&[Sensor::write("probe", PASS, "**/*.md")]);
    let manifest_path = ".claude/sensors/aidlc-probe.md";
    let good = project.read(manifest_path);

    // Accepted: a BOM, CRLF line ends and a key this version does not know.
    let odd_but_valid = format!(
        "\u{feff}{}",
        good.replace("category: demo\n", "category: demo\nowner: team-docs\n")
            .replace('\n', "\r\n")
    );
    project.write(manifest_path, &odd_but_valid);
    let compiled = run(&project, &["compile", "--format", "json"]);
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
        verdict_line(&fire(&project, "probe", DOC_A))["result"],
        "passed"
    );
    let rows_before = blocks(&project).len();

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
        let compiled = run(&project, &["compile"]);
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
        let fired = fire(&project, "probe", DOC_A);
        assert_eq!(fired.status, 2, "{expected}: {}", fired.stderr);
        assert!(
            fired.stderr.contains("the sensor manifests have errors"),
            "{expected}: {}",
            fired.stderr
        );
        assert_eq!(
            blocks(&project).len(),
            rows_before,
            "{expected}: a row was written"
        );
    }

    // Two files with one id: both are named.
    project.write(manifest_path, &good);
    project.write(".claude/sensors/aidlc-probe-copy.md", &good);
    let compiled = run(&project, &["compile", "--format", "json"]);
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
    let fired = fire(&project, "probe", DOC_A);
    assert_eq!(fired.status, 2, "{}", fired.stderr);
    assert_eq!(blocks(&project).len(), rows_before);
    project.remove(".claude/sensors/aidlc-probe-copy.md");

    // `matches: ""` is dropped: the binding compiles without a glob and the hook skips it.
    project.write(manifest_path, &good.replace("\"**/*.md\"", "\"\""));
    let compiled = run(&project, &["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    assert!(
        graph[0]["sensors_applicable"][0].get("matches").is_none(),
        "{}",
        graph[0]["sensors_applicable"][0]
    );
    assert_eq!(hook(&project, project.path(DOC_A).as_str()).status, 0);
    assert_eq!(
        blocks(&project).len(),
        rows_before,
        "an entry without a glob fired"
    );
    assert_eq!(drops(&project), "");

    // An empty sensors folder is an empty registry.
    let empty = TestProject::empty();
    std::fs::create_dir_all(empty.path(".claude/sensors")).unwrap();
    write_agent(&empty);
    empty.write(
        STAGE_FILE,
        &stage_file(STAGE, "inception", &["doc-a"], &[], &[], "[]"),
    );
    let compiled = run(&empty, &["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let list = run(&empty, &["engine", "sensor", "list"]);
    assert_eq!(
        (list.status, list.stdout.as_str()),
        (0, ""),
        "{}",
        list.stderr
    );
}

// === 5. Discovery ===============================================================================

/// S5: a manifest without the `aidlc-` prefix, with an upper-case id, in a subfolder (or with
/// another extension) does not load, as the seed says, and each is reported with the file and
/// the rename that would load it (D3) instead of being ignored in silence.
///
/// Not applicable: "a plugin sensor present on disk but not declared" — plugin selection is not
/// built yet (ARCHITECTURE.md "What is not built yet"); every file found is compiled.
///
/// Also covered by `bad_input::near_miss_sensor_files_are_warned_not_loaded` (a snapshot).
#[test]
fn scenario_05_discovery_reports_every_manifest_it_does_not_load() {
    let project = scenario_project(&[Sensor::write("probe", PASS, "**/*.md")]);
    let near_misses = [
        ".claude/sensors/lint-check.md",
        ".claude/sensors/aidlc-Upper.md",
        ".claude/sensors/nested/aidlc-deep.md",
        ".claude/sensors/aidlc-yaml.yaml",
    ];
    for (path, id) in near_misses
        .iter()
        .zip(["lint-check", "upper", "deep", "yaml"])
    {
        project.write(path, &Sensor::write(id, PASS, "**/*.md").manifest());
    }
    let compiled = run(&project, &["compile", "--force", "--format", "json"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let warnings: Vec<Value> = compiled
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .collect();
    for path in near_misses {
        let warning = warnings
            .iter()
            .find(|warning| warning["file"] == path)
            .unwrap_or_else(|| panic!("{path} is not reported: {}", compiled.stdout));
        assert_eq!(warning["code"], "skipped-sensor-file", "{warning}");
        assert_eq!(warning["severity"], "warning", "{warning}");
        assert!(
            warning["help"]
                .as_str()
                .is_some_and(|help| help.contains("aidlc-")),
            "the rename that would load it: {warning}"
        );
    }
    let list = run(&project, &["engine", "sensor", "list"]);
    let ids: Vec<&str> = list
        .stdout
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(ids, ["probe"], "near misses do not load");
}

// === 6. Compile =================================================================================

/// The JSON diagnostics of a `compile --format json` run.
fn json_diagnostics(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

/// S6: a stage importing an unknown id fails, naming the stage (file, line and column) and
/// the known ids, and leaves the graph as it was; the output is byte-stable across runs and
/// across folders; `compile --check` detects drift, names the stage, and writes nothing.
///
/// Not applicable: "a plugin stage importing a plugin-provided sensor compiles identically from
/// the package tree and the installed tree" — plugin selection is not built yet (ARCHITECTURE.md
/// "What is not built yet"): there is one tree, the installed one.
///
/// Also covered by `bad_input::unknown_sensor_import_suggests_the_closest_id`,
/// `compile::graph_and_grid_bytes_are_canonical_and_stable`,
/// `compile::output_does_not_depend_on_file_creation_order_or_threads`,
/// `compile::check_writes_nothing_and_names_changed_stages` and
/// `fail_closed_compile::compile_check_writes_nothing_with_or_without_drift_or_a_record`.
#[test]
fn scenario_06_compile_names_unknown_imports_and_is_byte_stable_with_a_drift_check() {
    let sensors = [
        Sensor::write("probe", PASS, "**/*.md"),
        Sensor::gate("shape", SHAPE, "advisory"),
    ];
    let project = scenario_project(&sensors);
    let graph = project.read(GRAPH);
    let grid = project.read(GRID);
    let good_stage = project.read(STAGE_FILE);

    project.write(
        STAGE_FILE,
        &good_stage.replace("[probe, shape]", "[probe, shpe]"),
    );
    let compiled = run(&project, &["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stderr);
    let diagnostics = json_diagnostics(&compiled);
    let unknown = diagnostics
        .iter()
        .find(|diagnostic| diagnostic["code"] == "unknown-sensor-import")
        .unwrap_or_else(|| panic!("{}", compiled.stdout));
    assert_eq!(unknown["file"], STAGE_FILE, "{unknown}");
    let stage_text = project.read(STAGE_FILE);
    let offset = stage_text.find("shpe").unwrap();
    let line = stage_text[..offset].matches('\n').count() + 1;
    assert_eq!(unknown["line"], line, "{unknown}");
    let text = format!("{} {}", unknown["message"], unknown["help"]);
    for expected in ["shpe", "probe, shape", "shape"] {
        assert!(text.contains(expected), "{expected} in {unknown}");
    }
    assert_eq!(
        project.read(GRAPH),
        graph,
        "a failing compile keeps the graph"
    );

    // Byte-stable: again, forced, and from scratch in another folder.
    project.write(STAGE_FILE, &good_stage);
    assert_eq!(run(&project, &["compile", "--force"]).status, 0);
    assert_eq!(
        (project.read(GRAPH), project.read(GRID)),
        (graph.clone(), grid.clone())
    );
    let elsewhere = scenario_project(&sensors);
    assert_eq!(
        elsewhere.read(GRAPH),
        graph,
        "the bytes do not depend on the folder"
    );
    assert_eq!(elsewhere.read(GRID), grid);

    // The drift guard.
    let in_sync = run(&project, &["compile", "--check"]);
    assert_eq!(in_sync.status, 0, "{}", in_sync.stderr);
    project.write(STAGE_FILE, &good_stage.replace("[probe, shape]", "[probe]"));
    let data_before = tree_bytes(&project);
    let drift = run(&project, &["compile", "--check"]);
    assert_eq!(drift.status, 1, "{}", drift.stderr);
    assert!(
        format!("{}{}", drift.stdout, drift.stderr).contains(STAGE),
        "the drifted stage is named: {}",
        drift.stderr
    );
    assert_eq!(tree_bytes(&project), data_before, "--check wrote something");
}

// === 7. Globs ===================================================================================

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
/// Also covered by `fail_closed_compile::a_blocking_gate_sensor_whose_glob_misses_every_output_is_a_compile_error`,
/// `fail_closed_compile::an_advisory_gate_sensor_whose_glob_misses_is_a_warning_and_still_compiles`
/// and `fail_closed_compile::reverse_engineering_outputs_are_in_the_codekb_so_a_glob_without_it_is_dead`.
#[test]
fn scenario_07_one_matcher_for_every_glob_and_manual_and_hook_fires_agree() {
    let sensors = [
        Sensor::write("code", PASS, "**/*.{ts,tsx}"),
        Sensor::write("phases", PASS, "**/{inception,construction}/**"),
        Sensor::write(
            "two-groups",
            PASS,
            "**/{inception,construction}/*/*.{md,txt}",
        ),
        Sensor::write("deep-x", PASS, "**/x/**/*.md"),
        Sensor::gate("ts-gate", PASS, "advisory").matches("**/*.ts"),
    ];
    let project = scenario_project(&sensors);
    // The gate sensor can never fire on the stage's Markdown outputs: a warning while it is
    // advisory, an error once it is blocking.
    let compiled = run(&project, &["compile", "--force", "--format", "json"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stdout);
    let diagnostics = json_diagnostics(&compiled);
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
    let compiled = run(&project, &["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stdout);
    assert_eq!(json_diagnostics(&compiled)[0]["severity"], "error");
    project.write(ts_gate, &advisory);
    assert_eq!(run(&project, &["compile"]).status, 0);

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
                let fired = fire(&project, sensor, &spelling);
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
        let before = events(&blocks(&project), "SENSOR_FIRED").len();
        assert_eq!(hook(&project, project.path(path).as_str()).status, 0);
        let all = blocks(&project);
        let fired_by_hook: BTreeSet<&str> = events(&all, "SENSOR_FIRED")[before..]
            .iter()
            .map(|block| block.field("Sensor ID").unwrap())
            .collect();
        assert_eq!(fired_by_hook, expected, "the hook on {path}");
        assert_eq!(drops(&project), "", "the hook dropped a write of {path}");
    }
    assert_every_fire_paired(&project);

    // A backslash spelling: a manual fire takes it as the file name it is, which does not exist;
    // the hook reads a payload's backslashes as separators (Windows harnesses send them, N5),
    // so it fires what the `/` spelling fires.
    let backslashed = DOC_A.replace('/', "\\");
    let rows = blocks(&project).len();
    for sensor in ["phases", "two-groups"] {
        let fired = fire(&project, sensor, &backslashed);
        assert_eq!(fired.status, 2, "{}", fired.stderr);
        assert!(
            fired.stderr.contains("output path does not exist"),
            "{}",
            fired.stderr
        );
    }
    assert_eq!(
        blocks(&project).len(),
        rows,
        "the manual fires wrote nothing"
    );
    assert_eq!(hook(&project, &backslashed).status, 0);
    let all = blocks(&project);
    let fired_by_hook: BTreeSet<&str> = events(&all, "SENSOR_FIRED")
        .iter()
        .skip(events(&all[..rows], "SENSOR_FIRED").len())
        .map(|block| block.field("Sensor ID").unwrap())
        .collect();
    assert_eq!(fired_by_hook, BTreeSet::from(["phases", "two-groups"]));
    assert_eq!(
        drops(&project),
        "",
        "the hook dropped the backslash spelling"
    );
    assert_every_fire_paired(&project);

    // Outside the project: refused by both, and the hook says why.
    let rows = blocks(&project).len();
    let outside = TestProject::empty();
    outside.write("x/far.md", "# Far\n");
    let far = outside.path("x/far.md");
    let fired = fire(&project, "deep-x", far.as_str());
    assert_eq!(fired.status, 2, "{}", fired.stderr);
    assert!(
        fired.stderr.contains("is outside the project"),
        "{}",
        fired.stderr
    );
    assert_eq!(hook(&project, far.as_str()).status, 0);
    assert!(
        drops(&project).contains(&format!("deep-x: output path {far} is outside the project")),
        "{}",
        drops(&project)
    );
    assert_eq!(blocks(&project).len(), rows);
}

// === 8. Paths that leave the project ============================================================

/// S8: `--output-path ../outside`, an absolute path outside the project, and a symbolic link
/// inside the project pointing outside are refused, as are a sensor id or stage slug holding
/// `..`, all before any audit row; a gate deliverable that links outside is refused before any
/// fire; detail files stay inside the record's sensors folder; writes into that folder (with
/// either separator) do not trigger sensors.
///
/// Not applicable: a plugin name holding `..` (plugins are not built yet). The folders the
/// engine writes into resolving outside the project are
/// `ledger_integrity::a_symlinked_audit_folder_is_refused_before_any_row`,
/// `ledger_integrity::a_symlinked_engine_folder_is_refused_before_any_row` and
/// `ledger_integrity::a_symlinked_stage_detail_folder_is_refused_before_any_row`; also
/// `engine::pre_flight_refusals_write_no_audit_row`,
/// `gate::a_symlinked_deliverable_pointing_outside_is_refused_before_any_fire`,
/// `gate_step::a_symlinked_deliverable_pointing_outside_is_refused_before_any_fire` and
/// `gate_step::usage_and_environment_errors_exit_2` (`--unit ../x`).
#[test]
fn scenario_08_paths_that_leave_the_project_are_refused_before_any_row() {
    let project = scenario_project(&[
        Sensor::write("probe", SHAPE, "**/*.md"),
        Sensor::gate("shape", SHAPE, "blocking"),
    ]);
    let outside = TestProject::empty();
    outside.write("elsewhere.md", "# Elsewhere\n\nFAIL\n");
    let outside_name = outside.root.file_name().unwrap();
    std::os::unix::fs::symlink(
        outside.path("elsewhere.md"),
        project.path(&format!("{STAGE_DIR}/linked.md")),
    )
    .unwrap();
    let relative_outside = format!("../{outside_name}/elsewhere.md");
    let absolute_outside = outside.path("elsewhere.md").to_string();
    let linked = format!("{STAGE_DIR}/linked.md");
    let refused: [([&str; 3], &str); 5] = [
        (
            ["probe", STAGE, &relative_outside],
            "is outside the project",
        ),
        (
            ["probe", STAGE, &absolute_outside],
            "is outside the project",
        ),
        (["probe", STAGE, &linked], "is outside the project"),
        (
            ["../../probe", STAGE, DOC_A],
            "unknown sensor id: \"../../probe\"",
        ),
        (
            ["probe", "../../etc", DOC_A],
            "unknown stage slug: \"../../etc\"",
        ),
    ];
    for (words, expected) in refused {
        let fired = fire_on_stage(&project, words[0], words[1], words[2]);
        assert_eq!(fired.status, 2, "{words:?}: {}", fired.stderr);
        assert!(
            fired.stderr.contains(expected),
            "{words:?}: {}",
            fired.stderr
        );
        assert!(fired.stdout.is_empty(), "{words:?}: {}", fired.stdout);
    }
    assert!(
        !project.exists(&format!("{RECORD}/audit")),
        "a row was written"
    );
    assert_eq!(
        tree_bytes(&outside).len(),
        1,
        "something was written outside"
    );

    // A detail file lands in the record's sensors folder, inside the project.
    project.write(DOC_B, "# B\n\nFAIL\n");
    let failed = verdict_line(&fire(&project, "probe", DOC_B));
    assert_eq!(failed["result"], "failed");
    let detail = failed["detail_path"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("{RECORD}/.aidlc-engine/sensors/{STAGE}/probe-")),
        "{detail}"
    );
    let real_detail = project.path(detail).canonicalize_utf8().unwrap();
    assert!(real_detail.starts_with(&project.root), "{real_detail}");

    // Writes into the sensors folder do not fire sensors, whichever separator the path uses.
    let rows = blocks(&project).len();
    let detail_with_backslashes = format!("{}/{}", project.root, detail.replace('/', "\\"));
    for written in [project.path(detail).to_string(), detail_with_backslashes] {
        assert_eq!(hook(&project, &written).status, 0);
        assert_eq!(blocks(&project).len(), rows, "{written} fired a sensor");
        assert_eq!(drops(&project), "", "{written}");
    }

    // A deliverable that links outside is refused before any gate fire, by both gates.
    project.remove(&format!("{STAGE_DIR}/linked.md"));
    project.remove(DOC_A);
    std::os::unix::fs::symlink(outside.path("elsewhere.md"), project.path(DOC_A)).unwrap();
    let start = gate_start(&project, &[]);
    assert_eq!(start.status, 2, "{}", start.stderr);
    assert!(
        start.stderr.contains("Refusing gate sensor artifact"),
        "{}",
        start.stderr
    );
    let check = run(&project, &["gate", "check", "--no-record"]);
    assert_eq!(check.status, 2, "{}", check.stderr);
    assert!(
        check.stderr.contains("Refusing gate sensor artifact"),
        "{}",
        check.stderr
    );
    assert_eq!(
        blocks(&project).len(),
        rows,
        "a gate fired through the link"
    );
}

// === 9. Arguments ===============================================================================

/// S9: a flag followed by another flag and a trailing flag without a value are loud usage
/// errors, for the dispatcher (`fire`, exit 2, no row), the gate commands and the worker
/// protocol (`sensor-<id>`, exit 1 with the flag named, failure mode F9).
///
/// Section names never travel as a comma-separated flag here: `required-sections` reads the
/// headings a deliverable needs from its template file (the stage's `required_sections:` list is
/// shape-checked only), so a heading holding commas and quotes is one heading. This test asserts
/// that instead.
///
/// Also covered by `engine::pre_flight_refusals_write_no_audit_row` and the flag tests of each
/// worker (the unit tests of `src/runtime/worker_process.rs`).
#[test]
fn scenario_09_flags_without_values_are_loud_usage_errors() {
    let project = scenario_project(&[Sensor::write("probe", PASS, "**/*.md")]);
    project.write("src/app.ts", "export const a = 1;\n");
    let dispatcher_cases: [(&[&str], &str); 4] = [
        (
            &[
                "engine",
                "sensor",
                "fire",
                "probe",
                "--stage",
                "--output-path",
                DOC_A,
            ],
            "--stage expects a value, got another flag: \"--output-path\".",
        ),
        (
            &[
                "engine",
                "sensor",
                "fire",
                "probe",
                "--stage",
                STAGE,
                "--output-path",
            ],
            "--output-path expects a value, got end of arguments.",
        ),
        (
            &[
                "engine",
                "gate",
                "start",
                STAGE,
                "--override-blocking-sensors",
                "--user-input",
            ],
            "a value is required for '--user-input",
        ),
        (
            &["gate", "check", "--stage", "--no-record"],
            "a value is required for '--stage",
        ),
    ];
    for (args, expected) in dispatcher_cases {
        let refused = run(&project, args);
        assert_eq!(refused.status, 2, "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(expected),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let doc = project.path(DOC_A);
    let worker_cases: [(&[&str], &str); 4] = [
        (
            &[
                "engine",
                "sensor-required-sections",
                "--stage",
                STAGE,
                "--output-path",
            ],
            "--output-path expects a value, got end of arguments.",
        ),
        (
            &[
                "engine",
                "sensor-required-sections",
                "--templates-dir",
                "--stage",
                STAGE,
                "--output-path",
                doc.as_str(),
            ],
            "--templates-dir expects a value, got another flag: \"--stage\".",
        ),
        (
            &[
                "engine",
                "sensor-upstream-coverage",
                "--stage",
                STAGE,
                "--output-path",
                doc.as_str(),
                "--consumes",
            ],
            "--consumes expects a value, got end of arguments.",
        ),
        (
            &[
                "engine",
                "sensor-linter",
                "--stage",
                "--file-path",
                "src/app.ts",
            ],
            "missing value for --stage",
        ),
    ];
    for (args, expected) in worker_cases {
        let refused = run(&project, args);
        assert_eq!(refused.status, 1, "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(expected),
            "{args:?}: {}",
            refused.stderr
        );
        assert!(refused.stdout.is_empty(), "{args:?}: {}", refused.stdout);
    }
    assert!(
        !project.exists(&format!("{RECORD}/audit")),
        "a usage error wrote a row"
    );

    // A heading with commas and quotes, from the template, is one heading.
    let headings = TestProject::empty();
    write_agent(&headings);
    headings.write(
        ".claude/sensors/aidlc-required-sections.md",
        &crate::support::manifest("required-sections", ""),
    );
    headings.write(
        STAGE_FILE,
        &stage_file(
            STAGE,
            "inception",
            &["doc-a"],
            &[],
            &["required-sections"],
            "[]",
        ),
    );
    assert_eq!(run(&headings, &["compile"]).status, 0);
    write_state(&headings, STAGE, "");
    headings.write(
        "aidlc/spaces/default/memory/templates/doc-a.md",
        "# Doc A\n\n## Scope, goals and \"non-goals\"\n\n## Risks, open\n",
    );
    headings.write(
        DOC_A,
        "# A\n\n## Scope\n\n## Goals and \"non-goals\"\n\n## Risks, open\n",
    );
    let failed = verdict_line(&fire(&headings, "required-sections", DOC_A));
    assert_eq!(failed["result"], "failed", "{failed}");
    let findings = detail_findings(&headings, &failed);
    assert_eq!(
        findings["template_missing"],
        serde_json::json!(["## Scope, goals and \"non-goals\""]),
        "{findings}"
    );
    headings.write(
        DOC_A,
        "# A\n\n## Scope, goals and \"non-goals\"\n\n## Risks, open\n",
    );
    let passed = verdict_line(&fire(&headings, "required-sections", DOC_A));
    assert_eq!(passed["result"], "passed", "{passed}");
    assert!(passed.get("note").is_none(), "{passed}");
}

// === 10. Concurrency ============================================================================

/// S10: ten fires in parallel against one ledger leave twenty whole blocks, each
/// `SENSOR_FIRED` paired with exactly one terminal row by fire id; the audit lock is not held
/// while a worker runs (a second fire completes while the first one's worker waits for it); a
/// dispatcher killed between `SENSOR_FIRED` and its terminal row leaves that fire unpaired
/// (incomplete) and nothing that blocks the next fire, even when it died holding the lock.
///
/// This engine never reads an unpaired `SENSOR_FIRED` as a verdict (the gates fire afresh; see
/// scenario 11), so it has no "incomplete after a cutoff" rule to test (R3). Also covered by
/// `engine::ten_parallel_fires_leave_ten_intact_pairs`,
/// `engine::a_lock_left_by_a_dead_process_is_reaped`,
/// `ledger_integrity::an_old_unstamped_lock_folder_is_reaped` and
/// `ledger_integrity::a_fire_after_a_torn_tail_starts_its_own_block_and_pairs`.
#[test]
fn scenario_10_parallel_fires_pair_by_fire_id_and_no_lock_is_held_while_a_worker_runs() {
    let project = scenario_project(&[
        Sensor::write(
            "quick",
            "sleep 0.2\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
        Sensor::write(
            "waiting",
            "touch waiting-started\ni=0\nwhile [ ! -f release ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
        Sensor::write(
            "sleeping",
            "echo $$ > sleeping.pid.tmp && mv sleeping.pid.tmp sleeping.pid\nexec sleep 300",
            "**/*.md",
        ),
    ]);
    let fire_args = |sensor: &'static str| -> [&'static str; 8] {
        [
            "engine",
            "sensor",
            "fire",
            sensor,
            "--stage",
            STAGE,
            "--output-path",
            DOC_A,
        ]
    };

    let parallel: Vec<_> = (0..10)
        .map(|_| spawn(&project, &fire_args("quick")))
        .collect();
    for child in parallel {
        let run = finish(child);
        assert_eq!(verdict_line(&run)["result"], "passed");
    }
    let all = blocks(&project);
    assert_eq!(all.len(), 20, "no torn or lost block");
    assert_eq!(assert_every_fire_paired(&project).len(), 10);

    // The lock is free while a worker runs: another fire completes meanwhile.
    let waiting = spawn(&project, &fire_args("waiting"));
    wait_for_file(&project, "waiting-started");
    let meanwhile = fire(&project, "quick", DOC_A);
    assert_eq!(verdict_line(&meanwhile)["result"], "passed");
    project.write("release", "");
    assert_eq!(verdict_line(&finish(waiting))["result"], "passed");
    assert_eq!(assert_every_fire_paired(&project).len(), 12);

    // A dispatcher killed while its worker runs: its fire stays unpaired.
    let mut doomed = spawn(&project, &fire_args("sleeping"));
    let worker_pid = wait_for_pid_file(&project, "sleeping.pid");
    let dispatcher_pid = doomed.id();
    kill("KILL", &dispatcher_pid.to_string());
    let _ = doomed.wait();
    kill("KILL", &worker_pid);
    let fires = fires_by_id(&blocks(&project));
    let unpaired: Vec<&String> = fires
        .iter()
        .filter(|(_, (_, terminals))| terminals.is_empty())
        .map(|(fire_id, _)| fire_id)
        .collect();
    assert_eq!(unpaired.len(), 1, "{fires:?}");
    // Had it died holding the audit lock, the lock names a dead owner: the next fire reaps it.
    let lock = audit_lock_path(&project);
    std::fs::create_dir(&lock).unwrap();
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::fs::write(
        lock.join("owner.json"),
        format!("{{\"pid\":{dispatcher_pid},\"startedAtMs\":{started_ms},\"reapLiveOwnerAfterStale\":true}}"),
    )
    .unwrap();
    let after = fire(&project, "quick", DOC_A);
    assert_eq!(verdict_line(&after)["result"], "passed");
    assert!(!lock.exists(), "the dead owner's lock was not reaped");
    let fires = fires_by_id(&blocks(&project));
    assert_eq!(fires.len(), 14);
    assert_eq!(
        fires
            .values()
            .filter(|(_, terminals)| terminals.is_empty())
            .count(),
        1,
        "only the killed fire is incomplete"
    );
}

// === Rows other processes write =================================================================

/// `time` as an audit timestamp, `YYYY-MM-DDTHH:MM:SSZ` (UTC), as the ledger writes it.
fn iso_timestamp(time: std::time::SystemTime) -> String {
    aidlc::leaves::timestamp::iso_timestamp(time)
}

/// One fire as the reference's dispatcher records it, in a shard of another clone: `SENSOR_FIRED`
/// and its `SENSOR_PASSED`, or its `SENSOR_FAILED` with `findings` and a detail path. The
/// reference fires any file under any stage slug, so its rows can name a stage that does not
/// declare the file.
fn record_reference_fire(
    project: &TestProject,
    sensor: &str,
    stage: &str,
    output: &str,
    findings: Option<u32>,
) {
    let shard_path = format!("{RECORD}/audit/reference-host-0123456789ab.md");
    let mut shard = if project.exists(&shard_path) {
        project.read(&shard_path)
    } else {
        SHARD_HEADER.to_owned()
    };
    let timestamp = iso_timestamp(std::time::SystemTime::now());
    let fire_id = format!("{:08x}", shard.len());
    let identity = [
        ("Fire id", fire_id.as_str()),
        ("Sensor ID", sensor),
        ("Stage slug", stage),
        ("Output path", output),
    ];
    shard.push_str(&audit_block(
        "Sensor Fired",
        "SENSOR_FIRED",
        &timestamp,
        &identity,
    ));
    let detail = format!("{RECORD}/.aidlc-engine/sensors/{stage}/{sensor}-{fire_id}.md");
    let count = findings.map(|n| n.to_string());
    let mut fields = identity.to_vec();
    let (heading, event) = if let Some(count) = &count {
        fields.push(("Detail path", detail.as_str()));
        fields.push(("Findings count", count.as_str()));
        ("Sensor Failed", "SENSOR_FAILED")
    } else {
        fields.push(("Duration ms", "12"));
        ("Sensor Passed", "SENSOR_PASSED")
    };
    shard.push_str(&audit_block(heading, event, &timestamp, &fields));
    project.write(&shard_path, &shard);
}

/// The conductor's override receipt (docs/decisions.md D34): the decision offering both
/// options, a human turn with its receipt and the exact answer naming it, as blocks for a shard.
fn override_receipt(project: &TestProject, timestamp: &str) -> String {
    let (human_turn, receipt) = crate::support::verifiable_human_turn(project, OVERRIDE_CHOICE);
    let human_turn: Vec<(&str, &str)> = human_turn
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    [
        audit_block(
            "Decision Recorded",
            "DECISION_RECORDED",
            timestamp,
            &[
                ("Stage", STAGE),
                ("Decision", "Blocking gate sensor failure"),
                ("Options", "Fix findings,Override blocking sensors"),
            ],
        ),
        audit_block("Human Turn", "HUMAN_TURN", timestamp, &human_turn),
        audit_block(
            "Question Answered",
            "QUESTION_ANSWERED",
            timestamp,
            &[
                ("Stage", STAGE),
                ("Details", OVERRIDE_CHOICE),
                ("Human Turn Receipt", &receipt),
            ],
        ),
    ]
    .concat()
}

/// Append `text` to this clone's shard (the only shard of the record, which the engine's rows
/// created), as the conductor appends its rows while no engine process runs.
fn append_to_the_only_shard(project: &TestProject, text: &str) {
    let shards: Vec<_> = std::fs::read_dir(project.path(&format!("{RECORD}/audit")))
        .expect("the engine wrote a shard")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    assert_eq!(shards.len(), 1, "{shards:?}");
    let mut shard = std::fs::OpenOptions::new()
        .append(true)
        .open(&shards[0])
        .unwrap();
    std::io::Write::write_all(&mut shard, text.as_bytes()).unwrap();
}

// === 11. Staleness ==============================================================================

/// S11: a pass recorded before the artifact was edited, or a re-fire still running when the
/// gate is asked, never stands in for a verdict on the bytes that enter the gate: both gates
/// fire afresh on the current bytes. Bytes that change between evaluation and the gate row
/// refuse the gate (and are not evaluated in `gate check`), until a retry evaluates bytes that
/// held still.
///
/// Also covered by `gate_step::a_worker_that_edits_the_file_refuses_the_gate`,
/// `gate_step::bytes_moved_by_another_fire_refuse_the_gate` and
/// `fail_closed_gate::a_blocking_worker_that_edits_its_file_is_not_evaluated_in_gate_check`.
#[test]
fn scenario_11_the_gate_judges_a_fresh_verdict_on_the_bytes_that_enter_it() {
    let project = scenario_project(&[Sensor::gate("shape", SHAPE, "blocking")]);
    let earlier = verdict_line(&fire(&project, "shape", DOC_A));
    assert_eq!(earlier["result"], "passed");
    project.write(DOC_A, "# A\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let start = gate_start(&project, &[]);
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
    let (check, _) = gate_check_json(&project, &["--no-record"]);
    assert_eq!(check.status, 1, "{}", check.stderr);

    // A re-fire that wrote SENSOR_FIRED and is still running when the gate opens.
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    append_to_the_only_shard(
        &project,
        &audit_block(
            "Sensor Fired",
            "SENSOR_FIRED",
            &iso_timestamp(std::time::SystemTime::now()),
            &[
                ("Fire id", "0badf1re"),
                ("Sensor ID", "shape"),
                ("Stage slug", STAGE),
                ("Output path", DOC_B),
            ],
        ),
    );
    let fired_before = events(&blocks(&project), "SENSOR_FIRED").len();
    let opened = gate_start(&project, &[]);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    assert_eq!(
        events(&blocks(&project), "SENSOR_FIRED").len(),
        fired_before + 2,
        "the gate fired on both deliverables itself"
    );
    assert_eq!(
        gate_rows(&project)[0].field("Sensor State"),
        Some(format!("shape@{DOC_A}=passed; shape@{DOC_B}=passed").as_str())
    );

    // Bytes that move during or after evaluation.
    let moving = scenario_project(&[Sensor::gate("editor", EDITOR, "blocking")]);
    let start = gate_start(&moving, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains(&format!(
            "editor@{DOC_A}: artifact changed during sensor evaluation"
        )),
        "{}",
        start.stderr
    );
    let (check, report) = gate_check_json(&moving, &["--no-record"]);
    assert_eq!(check.status, 3, "{}", check.stderr);
    assert!(
        report["fires"]
            .as_array()
            .unwrap()
            .iter()
            .all(|fire| fire["note"] == "artifact-changed"),
        "{report}"
    );
    let after = scenario_project(&[
        Sensor::gate("shape", SHAPE, "blocking"),
        Sensor::gate("toucher", EDITOR, "advisory"),
    ]);
    let start = gate_start(&after, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains(&format!(
            "blocking sensor artifact \"{DOC_A}\" changed after evaluation"
        )),
        "{}",
        start.stderr
    );
    assert!(gate_rows(&after).is_empty());
    // Once the bytes hold still, the retry evaluates them and the gate opens.
    after.write("workers/toucher.sh", &format!("#!/bin/sh\n{PASS}\n"));
    let retried = gate_start(&after, &[]);
    assert_eq!(retried.status, 0, "{}", retried.stderr);
    assert_eq!(gate_rows(&after).len(), 1);
}

// === 12. Never fired, and the wrong stage =======================================================

/// S12: a blocking sensor with no fire for the stage has not passed (the gate refuses with a
/// reason naming the sensor, its glob and the declared outputs; `gate check` exits 3), and a
/// pass recorded under another stage slug does not count for this stage, neither at the gate
/// nor in the failed-check notices.
///
/// Also covered by `fail_closed_gate::a_blocking_gate_sensor_whose_glob_matches_no_deliverable_refuses_the_gate`,
/// `fail_closed_gate::a_deleted_deliverable_leaves_its_blocking_sensor_unfired`,
/// `fail_closed_gate::gate_check_reports_a_blocking_binding_that_never_fired_the_same_way_in_every_format`
/// and `fail_closed_gate::a_stage_the_workflow_has_not_reached_is_not_counted_as_unfired`.
#[test]
fn scenario_12_no_fire_for_the_stage_is_not_a_pass_and_another_stage_s_pass_does_not_count() {
    // Passes whatever the file says when fired for `second-stage`.
    const STAGE_AWARE: &str = "if [ \"$2\" = second-stage ]; then echo '{\"pass\":true,\"findings_count\":0}'; elif grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":2}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
    let project = scenario_project(&[
        Sensor::gate("shape", STAGE_AWARE, "blocking"),
        Sensor::write("cover", SHAPE, "**/*.md"),
    ]);

    // No deliverable on disk: the blocking binding never fired.
    project.remove(DOC_A);
    project.remove(DOC_B);
    let never = "shape@first-stage: blocking sensor never fired: none of the stage's declared outputs is on disk; glob \"**/*.md\"; declared outputs: doc-a.md, doc-b.md";
    let start = gate_start(&project, &[]);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(start.stderr.contains(never), "{}", start.stderr);
    let (check, report) = gate_check_json(&project, &["--no-record"]);
    assert_eq!(check.status, 3, "{}", check.stderr);
    assert_eq!(report["unfired_bindings"][0]["sensor_id"], "shape");
    assert_eq!(report["counts"]["never_fired"], 1);

    // A pass under another stage slug, on a deliverable that fails for this stage. `fire`
    // refuses this stage's file under another stage's slug (scenario 14, Z4); the reference's
    // dispatcher does not, so such a row can be in the ledger: it is written as it writes it.
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let refused = fire_on_stage(&project, "shape", "second-stage", DOC_B);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("is not a declared output of stage \"second-stage\""),
        "{}",
        refused.stderr
    );
    record_reference_fire(&project, "shape", "second-stage", DOC_B, None);
    let start = gate_start(&project, &[]);
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
    record_reference_fire(&project, "cover", "second-stage", DOC_A, Some(2));
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    let opened = gate_start(&project, &[]);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    let reply: Value = serde_json::from_str(opened.stdout.trim()).unwrap();
    assert!(reply.get("narration").is_none(), "{reply}");
    project.write(DOC_A, "# A\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let own = verdict_line(&fire(&project, "cover", DOC_A));
    assert_eq!(own["result"], "failed");
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    let revised = run(&project, &["engine", "gate", "revise", STAGE]);
    assert_eq!(revised.status, 0, "{}", revised.stderr);
    let reply: Value = serde_json::from_str(revised.stdout.trim()).unwrap();
    let narration = reply["narration"].as_str().unwrap_or_default();
    assert!(
        narration.starts_with("The cover check reports 2 findings in doc-a.md"),
        "{reply}"
    );
}

// === 13. Every completion path and the override =================================================

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
    let project = scenario_project(&[Sensor::gate("shape", SHAPE, "blocking")]);
    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let reasons = format!("Reasons: shape@{DOC_B}: reported findings.");
    for step in ["start", "revise"] {
        let refused = run(&project, &["engine", "gate", step, STAGE]);
        assert_eq!(refused.status, 1, "{step}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(&reasons),
            "{step}: {}",
            refused.stderr
        );
        assert!(refused.stdout.is_empty(), "{step}: {}", refused.stdout);
    }
    let bare = gate_start(&project, &["--override-blocking-sensors"]);
    assert_eq!(bare.status, 1);
    assert!(
        bare.stderr.contains(
            "--user-input must be the exact offered choice \"Override blocking sensors\"."
        ),
        "{}",
        bare.stderr
    );
    let paraphrased = gate_start(
        &project,
        &["--override-blocking-sensors", "--user-input", "override"],
    );
    assert_eq!(paraphrased.status, 1, "{}", paraphrased.stderr);
    let with_override = [
        "--override-blocking-sensors",
        "--user-input",
        OVERRIDE_CHOICE,
    ];
    let no_receipt = gate_start(&project, &with_override);
    assert_eq!(no_receipt.status, 1);
    assert!(
        no_receipt.stderr.contains("no fresh authorization receipt"),
        "{}",
        no_receipt.stderr
    );
    assert!(gate_rows(&project).is_empty());

    append_to_the_only_shard(
        &project,
        &override_receipt(&project, &iso_timestamp(std::time::SystemTime::now())),
    );
    let opened = gate_start(&project, &with_override);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    let rows = gate_rows(&project);
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
    let reused = run(
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
    write_state(
        &project,
        STAGE,
        "- **Construction Autonomy Mode**: autonomous\n",
    );
    append_to_the_only_shard(
        &project,
        &override_receipt(&project, &iso_timestamp(std::time::SystemTime::now())),
    );
    let autonomous = run(
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
    assert_eq!(gate_rows(&project).len(), 1);
}

// === 14. False reds =============================================================================

/// S14: marker files (`*-questions.md`, `*-timestamp.md`) are exempt from the heading floor;
/// `requirements` is not found inside `nfr-requirements`; a citation of the producer's folder
/// counts; an input whose producer was skipped (nothing on disk) is not a failure; and a manual
/// fire on a file of the record the stage does not declare is refused before any row, naming
/// the declared outputs, while the write hook fires nothing on such a file (failure mode Z4;
/// files outside the record still fire). The gates only ever fire on declared deliverables (D6).
///
/// Also covered by the unit tests of `dispatch::workers::required_sections` and
/// `dispatch::workers::upstream_coverage`, and by `workers::upstream_coverage_agrees_both_ways`.
#[test]
fn scenario_14_markers_word_boundaries_producer_folders_and_skipped_producers_are_not_red() {
    let project = TestProject::empty();
    write_agent(&project);
    for id in ["required-sections", "upstream-coverage"] {
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &crate::support::manifest(id, ""),
        );
    }
    let stages = ".claude/aidlc-common/stages/inception";
    project.write(
        &format!("{stages}/requirements-analysis.md"),
        &stage_file(
            "requirements-analysis",
            "inception",
            &["requirements"],
            &[],
            &[],
            "[]",
        ),
    );
    project.write(
        &format!("{stages}/nfr-requirements.md"),
        &stage_file(
            "nfr-requirements",
            "inception",
            &["nfr-requirements"],
            &[],
            &[],
            "[]",
        ),
    );
    project.write(
        &format!("{stages}/user-stories.md"),
        &stage_file(
            "user-stories",
            "inception",
            &["stories", "user-stories-questions"],
            &["requirements-analysis", "nfr-requirements"],
            &["required-sections", "upstream-coverage"],
            "\n  - artifact: requirements\n    required: false\n  - artifact: nfr-requirements\n    required: false",
        ),
    );
    let compiled = run(&project, &["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    write_state(&project, "user-stories", "");
    let requirements = format!("{RECORD}/inception/requirements-analysis/requirements.md");
    project.write(&requirements, "# Requirements\n\n## Scope\n\n## Risks\n");
    project.write(
        &format!("{RECORD}/inception/nfr-requirements/nfr-requirements.md"),
        "# NFR\n\n## Scope\n\n## Risks\n",
    );
    let folder = format!("{RECORD}/inception/user-stories");
    let stories = format!("{folder}/stories.md");
    let questions = format!("{folder}/user-stories-questions.md");
    let fire_stories = |sensor: &str, path: &str| {
        verdict_line(&fire_on_stage(&project, sensor, "user-stories", path))
    };

    // Markers are not held to the two-heading floor; a deliverable is.
    project.write(&questions, "# Questions\n\n## Open\n");
    project.write(&stories, "# Stories\n\n## Only one section\n");
    let marker = fire_stories("required-sections", &questions);
    assert_eq!(marker["result"], "passed", "{marker}");
    assert!(marker.get("note").is_none(), "{marker}");
    assert_eq!(
        fire_stories("required-sections", &stories)["result"],
        "failed"
    );

    // `requirements` inside `nfr-requirements` is not a citation of it.
    project.write(
        &stories,
        "# Stories\n\nBuilt on the nfr-requirements.\n\n## A\n\n## B\n",
    );
    let missed = fire_stories("upstream-coverage", &stories);
    assert_eq!(missed["result"], "failed", "{missed}");
    assert_eq!(
        detail_findings(&project, &missed)["unreferenced"],
        serde_json::json!(["requirements"])
    );
    // The producer's folder counts as a citation.
    project.write(
        &stories,
        "# Stories\n\nFrom inception/requirements-analysis/ and the nfr-requirements.\n\n## A\n\n## B\n",
    );
    let cited = fire_stories("upstream-coverage", &stories);
    assert_eq!(cited["result"], "passed", "{cited}");
    assert!(cited.get("note").is_none(), "{cited}");
    // A producer the scope skipped left nothing on disk: its artifact is not asked for.
    project.remove(&requirements);
    project.write(
        &stories,
        "# Stories\n\nBuilt on the nfr-requirements.\n\n## A\n\n## B\n",
    );
    let skipped = fire_stories("upstream-coverage", &stories);
    assert_eq!(skipped["result"], "passed", "{skipped}");
    assert!(skipped.get("note").is_none(), "{skipped}");

    // A file of the record the stage does not declare (a diary beside the record's state, a
    // note in the stage's folder, another stage's deliverable) is refused before any row by a
    // manual fire, and fires nothing from the write hook.
    let rows = blocks(&project).len();
    let undeclared = [
        format!("{RECORD}/diary.md"),
        format!("{folder}/notes.md"),
        format!("{RECORD}/inception/nfr-requirements/nfr-requirements.md"),
    ];
    for path in &undeclared {
        if !project.exists(path) {
            project.write(path, "# Notes\n\n## One\n");
        }
        for sensor in ["required-sections", "upstream-coverage"] {
            let refused = fire_on_stage(&project, sensor, "user-stories", path);
            assert_eq!(refused.status, 2, "{sensor} on {path}: {}", refused.stderr);
            assert!(
                refused.stderr.contains(
                    "is not a declared output of stage \"user-stories\" (it declares: stories.md, user-stories-questions.md"
                ),
                "{}",
                refused.stderr
            );
        }
        assert_eq!(hook(&project, project.path(path).as_str()).status, 0);
    }
    assert_eq!(blocks(&project).len(), rows, "nothing was recorded");
    assert_eq!(drops(&project), "", "a rule, not a drop");
    // Outside the record nothing changes: the hook fires the matching sensors.
    project.write("docs/guide.md", "# Guide\n\n## A\n\n## B\n");
    assert_eq!(
        hook(&project, project.path("docs/guide.md").as_str()).status,
        0
    );
    assert_eq!(
        events(&blocks(&project), "SENSOR_FIRED").len(),
        rows / 2 + 2
    );
    // The stage's own deliverable still fires from the hook.
    assert_eq!(hook(&project, project.path(&stories).as_str()).status, 0);
    assert_eq!(
        events(&blocks(&project), "SENSOR_FIRED").len(),
        rows / 2 + 4
    );
    assert_every_fire_paired(&project);
}

// === 15. Environment ============================================================================

/// S15: only an old `eslint` on PATH, no lint configuration, a broken one, a `tsconfig` that
/// matches no inputs (TS18003) and a missing interpreter each give a classification that is
/// not green (tool-unavailable, or a script error), and the broken configuration is told apart
/// from the missing one. The tools are small fakes on a PATH of the test's own.
///
/// The two shipped code sensors' manifests name the reference's Bun workers, as a reference
/// install's do (`bun .claude/tools/aidlc-sensor-linter.ts`, `bun .claude/tools/aidlc.ts engine
/// sensor-type-check`), and there is no Bun on that PATH: they run natively all the same (D8,
/// issue 12), so their verdicts below are the native checks'. Only the custom `bun-check` is
/// spawned, and without its interpreter it is `spawn-failed`.
///
/// Also covered by the unit tests of `dispatch::workers::linter` and
/// `dispatch::workers::type_check`, `workers::linter_and_type_check_agree_both_ways_without_their_tools`,
/// and, with the real eslint, tsc and Biome, by the node-tool tests that `.ci/run` enables.
#[test]
fn scenario_15_missing_old_or_broken_tools_are_never_green() {
    let project = TestProject::empty();
    write_agent(&project);
    for (id, reference_command) in [
        ("linter", "bun .claude/tools/aidlc-sensor-linter.ts"),
        (
            "type-check",
            "bun .claude/tools/aidlc.ts engine sensor-type-check",
        ),
    ] {
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &crate::support::manifest(id, "")
                .replace("\"**/*.md\"", "\"**/*.ts\"")
                .replace(
                    &format!("command: aidlc engine sensor-{id}"),
                    &format!("command: {reference_command}"),
                ),
        );
    }
    let interpreted = Sensor::gate("bun-check", PASS, "blocking")
        .command("bun .claude/tools/aidlc-sensor-bun-check.ts");
    project.write(
        ".claude/sensors/aidlc-bun-check.md",
        &interpreted.manifest(),
    );
    project.write(
        STAGE_FILE,
        &stage_file(
            STAGE,
            "inception",
            &["doc-a"],
            &[],
            &["linter", "type-check", "bun-check"],
            "[]",
        ),
    );
    assert_eq!(run(&project, &["compile"]).status, 0);
    write_state(&project, STAGE, "");
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    project.write("package.json", "{}\n");
    project.write("src/app.ts", "export const a = 1;\n");
    let bin = project.path("bin");
    let path_env = [("PATH", bin.as_str())];
    let fire_with_path = |sensor: &str, path: &str| {
        let run = project.run_watched(
            &[
                "engine",
                "sensor",
                "fire",
                sensor,
                "--stage",
                STAGE,
                "--output-path",
                path,
            ],
            &path_env,
            None,
        );
        verdict_line(&run)
    };
    let executable = |relative: &str, body: &str| {
        project.write(relative, &format!("#!/bin/sh\n{body}\n"));
        let mut permissions = std::fs::metadata(project.path(relative))
            .unwrap()
            .permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(project.path(relative), permissions).unwrap();
    };

    // Only a distro eslint 6 on PATH: it cannot read flat config, so it is not used.
    executable(
        "bin/eslint",
        "if [ \"$1\" = --version ]; then echo v6.4.0; exit 0; fi\necho 'eslint 6 ran' >&2\nexit 2",
    );
    let old = fire_with_path("linter", "src/app.ts");
    assert_eq!(old["note"], "tool-unavailable", "{old}");

    // The project's eslint: no configuration (unavailable) versus a broken one (an error).
    executable(
        "node_modules/.bin/eslint",
        "if [ -f eslint.config.js ]; then\n  echo 'Oops! Something went wrong! :(' >&2\n  echo \"SyntaxError: Unexpected token '}'\" >&2\n  exit 2\nfi\necho \"ESLint couldn't find an eslint.config.(js|mjs|cjs) file.\" >&2\nexit 2",
    );
    let unconfigured = fire_with_path("linter", "src/app.ts");
    assert_eq!(unconfigured["note"], "tool-unavailable", "{unconfigured}");
    project.write("eslint.config.js", "export default [ } ];\n");
    let broken = fire_with_path("linter", "src/app.ts");
    assert_eq!(broken["result"], "passed", "{broken}");
    assert!(
        broken["note"]
            .as_str()
            .unwrap()
            .starts_with("script-error: "),
        "a broken configuration is an error, not an absent tool: {broken}"
    );

    // tsc finds no inputs (TS18003): a configuration problem, not a clean pass.
    project.write("tsconfig.json", "{\"include\": [\"lib\"]}\n");
    executable(
        "node_modules/.bin/tsc",
        "echo \"error TS18003: No inputs were found in config file '$PWD/tsconfig.json'. Specified 'include' paths were '[\\\"lib\\\"]' and 'exclude' paths were '[]'.\"\nexit 2",
    );
    let no_inputs = fire_with_path("type-check", "src/app.ts");
    assert_eq!(no_inputs["result"], "passed", "{no_inputs}");
    assert!(
        no_inputs["note"]
            .as_str()
            .unwrap()
            .starts_with("script-error: "),
        "{no_inputs}"
    );

    // A custom sensor whose interpreter is not installed: not evaluated, and a blocking gate
    // refuses.
    let missing = fire_with_path("bun-check", DOC_A);
    assert_eq!(
        missing["note"], "script-error: spawn-failed: ENOENT",
        "{missing}"
    );
    let check = project.run_watched(
        &[
            "gate",
            "check",
            "--no-record",
            "--format",
            "json",
            "--quiet",
        ],
        &path_env,
        None,
    );
    assert_eq!(check.status, 3, "{}", check.stderr);
    let start = project.run_watched(&["engine", "gate", "start", STAGE], &path_env, None);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains("script-error: spawn-failed: ENOENT"),
        "{}",
        start.stderr
    );
    assert_every_fire_paired(&project);
}

// === 16. Scale ==================================================================================

/// S16, for correctness at scale (the timings are printed, never asserted; issue 16 and the
/// benches measure them): 1,000 stages compile with no diagnostic into a graph of 1,000 nodes;
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
    write_agent(&big);
    big.write(
        ".claude/sensors/aidlc-probe.md",
        &Sensor::write("probe", PASS, "**/*.md").manifest(),
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
            &stage_file(
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
    let compiled = run(&big, &["compile", "--format", "json"]);
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
    let checked = run(&big, &["compile", "--check"]);
    println!(
        "scenario 16: compile --check of 1,000 stages took {:?}",
        started.elapsed()
    );
    assert_eq!(checked.status, 0, "{}", checked.stderr);

    let project = scenario_project(&[
        Sensor::gate("required-sections", "", "advisory")
            .command("aidlc engine sensor-required-sections"),
        Sensor::gate("shape", SHAPE, "blocking"),
        Sensor::write("lint", PASS, "**/*.md"),
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
            verdict_line(&fire(&project, "lint", DOC_A))["result"],
            "passed"
        );
    }
    println!(
        "scenario 16: 119 fires on one path took {:?}",
        started.elapsed()
    );
    let paired = assert_every_fire_paired(&project);
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
        let timestamp = iso_timestamp(base + Duration::from_secs(index));
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
    shard.push_str(&override_receipt(
        &project,
        &iso_timestamp(base + Duration::from_secs(30_000)),
    ));
    let foreign_shard = format!("{RECORD}/audit/ci-host-0123456789ab.md");
    project.write(&foreign_shard, &shard);
    assert_eq!(
        events(&parse_ledger_text(&shard), "SENSOR_FIRED").len(),
        25_000,
        "the shard holds 50,000 sensor rows"
    );
    println!(
        "scenario 16: writing a shard of 50,000 sensor rows ({} MB) took {:?}",
        shard.len() / (1024 * 1024),
        started.elapsed()
    );

    let started = Instant::now();
    let opened = gate_start(
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
    let row = gate_rows(&project).pop().expect("the gate row");
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

// === 17. CI mode ================================================================================

/// S17, for `gate check` (this engine's CI mode): a missing, malformed or `null` stage graph
/// is a clear error with exit 2, never a crash or a fallback; advisory findings never change the
/// exit code (unless `--strict`); the JSON document, GitHub annotations and SARIF are produced;
/// exit codes follow D9 (0 verified, 1 findings, 2 environment, 3 could not
/// evaluate).
///
/// Not applicable: doctor ("on a pristine project doctor writes nothing", its rows and its exit
/// code) is issue 14, not built yet. A CI check that writes nothing is scenario 18.
///
/// Also covered by `gate::exit_codes_follow_severity_and_evaluation`,
/// `gate::no_intent_is_an_error_not_a_green_check`,
/// `fail_closed_gate::a_check_that_evaluated_nothing_exits_2_and_says_why`,
/// `fail_closed_gate::duplicate_stage_slugs_and_a_graph_that_is_not_an_array_are_refused`, and the
/// unit tests of `src/report/` (every format; SARIF against the OASIS schema).
#[test]
fn scenario_17_gate_check_exit_codes_and_formats_and_a_broken_graph_is_an_error() {
    // Fails on a file containing WARN.
    const COVER: &str = "if grep -q WARN \"$4\"; then echo '{\"pass\":false,\"findings_count\":1}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
    let project = scenario_project(&[
        Sensor::gate("shape", SHAPE, "blocking"),
        Sensor::gate("cover", COVER, "advisory"),
    ]);
    let check = |extra: &[&str]| {
        let mut args = vec!["gate", "check", "--no-record", "--quiet"];
        args.extend(extra);
        run(&project, &args)
    };
    assert_eq!(check(&[]).status, 0, "everything verified");

    project.write(DOC_A, "# A\n\n## Scope\n\nWARN\n\n## Risks\n");
    let advisory = check(&[]);
    assert_eq!(
        advisory.status, 0,
        "an advisory finding is reported, not fatal: {}",
        advisory.stderr
    );
    assert!(advisory.stdout.contains("cover"), "{}", advisory.stdout);
    assert_eq!(check(&["--strict"]).status, 1);

    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let (blocking, report) = gate_check_json(&project, &["--no-record"]);
    assert_eq!(blocking.status, 1, "{}", blocking.stderr);
    assert_eq!(report["counts"]["blocking_failed"], 1, "{report}");
    assert_eq!(report["counts"]["failed"], 2, "{report}");
    let github = check(&["--format", "github"]);
    assert_eq!(github.status, 1);
    assert!(
        github
            .stdout
            .lines()
            .any(|line| line.starts_with(&format!("::error file={DOC_B}"))),
        "{}",
        github.stdout
    );
    assert!(
        github
            .stdout
            .lines()
            .any(|line| line.starts_with(&format!("::warning file={DOC_A}"))),
        "{}",
        github.stdout
    );
    let sarif = check(&["--format", "sarif"]);
    assert_eq!(sarif.status, 1);
    let sarif: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().unwrap().len(),
        2,
        "{sarif}"
    );

    project.write("workers/shape.sh", "#!/bin/sh\nexit 127\n");
    let (unevaluated, report) = gate_check_json(&project, &["--no-record"]);
    assert_eq!(unevaluated.status, 3, "{}", unevaluated.stderr);
    assert_eq!(report["counts"]["blocking_not_evaluated"], 2, "{report}");

    let graph = project.read(GRAPH);
    for (broken, expected) in [
        (None, "cannot read the stage graph"),
        (Some("{not json\n"), "is malformed"),
        (
            Some("null\n"),
            "recompile: the graph is not one this version wrote",
        ),
    ] {
        match broken {
            None => project.remove(GRAPH),
            Some(text) => {
                project.write(GRAPH, text);
            }
        }
        for format in ["human", "json"] {
            let failed = check(&["--format", format]);
            assert_eq!(failed.status, 2, "{broken:?} {format}: {}", failed.stderr);
            assert!(
                failed.stderr.contains(expected),
                "{broken:?}: {}",
                failed.stderr
            );
            assert!(
                failed.stderr.contains("aidlc compile"),
                "what to do: {}",
                failed.stderr
            );
            assert!(
                !failed.stderr.contains("internal error"),
                "{}",
                failed.stderr
            );
        }
    }
    project.write(GRAPH, &graph);
    project.remove("aidlc");
    let no_intent = check(&[]);
    assert_eq!(no_intent.status, 2, "{}", no_intent.stderr);
}

// === 18. Hermeticity ============================================================================

/// S18: a CI check (`compile --check`, `gate check --no-record` in every format, `sensor list`
/// and `describe`) leaves the project byte-identical; and a test-style run aimed at a fixture
/// project (`--project-dir`), even from inside the real project and with `CLAUDE_PROJECT_DIR`
/// naming it (as in an agent's session), writes only into the fixture: no fixture sensor, row or
/// temp path leaks into the real project's ledger.
///
/// The test suite itself runs every command through `support::TestProject::command`, which
/// removes the caller's `AIDLC_*` and `CLAUDE_PROJECT_DIR` variables and always names the
/// fixture's folder. Also covered by `gate::no_record_leaves_the_project_byte_identical` and
/// `fail_closed_compile::compile_check_writes_nothing_with_or_without_drift_or_a_record`.
#[test]
fn scenario_18_ci_checks_and_fixture_runs_leave_the_real_project_byte_identical() {
    let real = scenario_project(&[
        Sensor::gate("shape", SHAPE, "blocking"),
        Sensor::write("probe", PASS, "**/*.md"),
    ]);
    // A real project has a history: one recorded fire, and a clone id.
    assert_eq!(
        verdict_line(&fire(&real, "probe", DOC_A))["result"],
        "passed"
    );
    let before = tree_bytes(&real);
    for args in [
        vec!["compile", "--check"],
        vec!["gate", "check", "--no-record"],
        vec!["gate", "check", "--no-record", "--format", "json"],
        vec!["gate", "check", "--no-record", "--format", "github"],
        vec!["gate", "check", "--no-record", "--format", "sarif"],
        vec!["gate", "check", "--no-record", "--fire-on", "all"],
        vec!["engine", "sensor", "list"],
        vec!["engine", "sensor", "describe", "shape"],
    ] {
        let ran = run(&real, &args);
        assert_eq!(ran.status, 0, "{args:?}: {}", ran.stderr);
        assert!(
            tree_bytes(&real) == before,
            "{args:?} wrote into the project"
        );
    }

    let fixture = scenario_project(&[
        Sensor::gate("fixture-only-gate", SHAPE, "blocking"),
        Sensor::write("fixture-only-probe", PASS, "**/*.md"),
    ]);
    let aimed = |args: &[&str], stdin: Option<&str>| {
        let mut full = args.to_vec();
        full.extend(["--project-dir", fixture.root.as_str()]);
        fixture.run_watched_in(
            &real.root,
            &full,
            &[("CLAUDE_PROJECT_DIR", real.root.as_str())],
            stdin,
        )
    };
    let fired = aimed(
        &[
            "engine",
            "sensor",
            "fire",
            "fixture-only-probe",
            "--stage",
            STAGE,
            "--output-path",
            fixture.path(DOC_A).as_str(),
        ],
        None,
    );
    assert_eq!(verdict_line(&fired)["result"], "passed");
    let payload = serde_json::json!({"tool_input": {"file_path": fixture.path(DOC_B)}}).to_string();
    assert_eq!(
        aimed(&["engine", "hook", "run-sensors"], Some(&payload)).status,
        0
    );
    assert_eq!(aimed(&["engine", "gate", "start", STAGE], None).status, 0);
    assert_eq!(aimed(&["gate", "check"], None).status, 0);
    assert_eq!(aimed(&["compile", "--force"], None).status, 0);

    assert!(
        tree_bytes(&real) == before,
        "a fixture run wrote into the real project"
    );
    let fixture_rows = blocks(&fixture);
    assert_eq!(
        events(&fixture_rows, "SENSOR_FIRED").len(),
        1 + 1 + 2 + 2,
        "fire, hook, gate start and gate check all wrote into the fixture"
    );
    assert_eq!(gate_rows(&fixture).len(), 1);
    for (path, bytes) in &before {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains("fixture-only") && !text.contains(fixture.root.as_str()),
            "{path} holds a fixture's trace"
        );
    }
}
