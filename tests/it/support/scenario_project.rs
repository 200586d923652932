//! The project the failure scenarios (docs/failure-modes.md S1–S18) start from, and the ways
//! they drive and read it. Each scenario is one end-to-end test named `scenario_NN_<what it
//! proves>`, in the file of the capability it checks; it asserts its scenario's sentence as far
//! as this engine implements it, and names in a comment each clause it does not assert, with
//! the test that covers it or why it does not apply.
//!
//! These helpers read only what another process could read: the binary's exit status and
//! output, and the files it writes (the audit shards through `super::parse_ledger_text`, which
//! follows the reference's format, not the library's parser).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{HANG, LedgerBlock, Run, SHARD_HEADER, TestProject, audit_block, ledger_blocks};

pub(crate) const STAGE: &str = "first-stage";

pub(crate) const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";

pub(crate) const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";

pub(crate) const DOC_A: &str =
    "aidlc/spaces/default/intents/261130-demo/inception/first-stage/doc-a.md";

pub(crate) const DOC_B: &str =
    "aidlc/spaces/default/intents/261130-demo/inception/first-stage/doc-b.md";

pub(crate) const STAGE_FILE: &str = ".claude/aidlc-common/stages/inception/first-stage.md";

pub(crate) const OVERRIDE_CHOICE: &str = "Override blocking sensors";

/// A worker that passes.
pub(crate) const PASS: &str = "echo '{\"pass\":true,\"findings_count\":0}'";

/// A worker that fails (2 findings) on a file containing FAIL, and passes otherwise.
pub(crate) const SHAPE: &str = "if grep -q FAIL \"$4\"; then echo '{\"pass\":false,\"findings_count\":2}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";

/// A worker that appends to the file it checks, then passes.
pub(crate) const EDITOR: &str =
    "echo edited >> \"$4\"\necho '{\"pass\":true,\"findings_count\":0}'";

/// The terminal events of a fire.
pub(crate) const TERMINAL_EVENTS: [&str; 3] =
    ["SENSOR_PASSED", "SENSOR_FAILED", "SENSOR_BUDGET_OVERRIDE"];

/// One sensor of the test stage. Its worker is `sh workers/<id>.sh` (body `worker`; `$4` is the
/// file) unless `command` says otherwise.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sensor {
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
    pub(crate) const fn gate(
        id: &'static str,
        worker: &'static str,
        severity: &'static str,
    ) -> Self {
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
    pub(crate) const fn write(
        id: &'static str,
        worker: &'static str,
        matches: &'static str,
    ) -> Self {
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

    pub(crate) const fn command(self, command: &'static str) -> Self {
        Self {
            command: Some(command),
            ..self
        }
    }

    pub(crate) const fn matches(self, matches: &'static str) -> Self {
        Self { matches, ..self }
    }

    pub(crate) const fn extra(self, extra: &'static str) -> Self {
        Self { extra, ..self }
    }

    pub(crate) fn manifest(&self) -> String {
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
pub(crate) fn stage_file(
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

pub(crate) fn write_agent(project: &TestProject) {
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
}

/// The intent record's state, on `stage`, with `lines` more.
pub(crate) fn write_state(project: &TestProject, stage: &str, lines: &str) {
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        &format!("# State\n\n- **Current Stage**: {stage}\n{lines}"),
    );
}

/// A compiled project: stage `first-stage` (inception) produces `doc-a` and `doc-b`, both on
/// disk with two sections each, and imports `sensors` in order; stage `second-stage` requires
/// it, produces `second-doc` and imports nothing. The intent record is on `first-stage`.
pub(crate) fn scenario_project(sensors: &[Sensor]) -> TestProject {
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

pub(crate) fn run(project: &TestProject, args: &[&str]) -> Run {
    project.run_watched(args, &[], None)
}

/// `aidlc engine sensor fire <sensor> --stage <stage> --output-path <path>`.
pub(crate) fn fire_on_stage(project: &TestProject, sensor: &str, stage: &str, path: &str) -> Run {
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

pub(crate) fn fire(project: &TestProject, sensor: &str, path: &str) -> Run {
    fire_on_stage(project, sensor, STAGE, path)
}

/// The one verdict line of a fire that recorded its verdict.
pub(crate) fn verdict_line(run: &Run) -> Value {
    assert_eq!(run.status, 0, "the fire was refused: {}", run.stderr);
    assert_eq!(run.stdout.trim().lines().count(), 1, "{}", run.stdout);
    serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}", run.stdout))
}

/// The worker's JSON a failed fire kept in its detail file (the fenced `json` block).
pub(crate) fn detail_findings(project: &TestProject, verdict: &Value) -> Value {
    let detail = project.read(verdict["detail_path"].as_str().expect("a detail path"));
    let start = detail.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start
        + detail[start..]
            .find("\n```")
            .expect("the end of the json block");
    serde_json::from_str(&detail[start..end]).unwrap_or_else(|error| panic!("{error}: {detail}"))
}

pub(crate) fn gate_start(project: &TestProject, extra: &[&str]) -> Run {
    let mut args = vec!["engine", "gate", "start", STAGE];
    args.extend(extra);
    run(project, &args)
}

/// `aidlc gate check --format json --quiet <extra>` and its parsed report.
pub(crate) fn gate_check_json(project: &TestProject, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["gate", "check", "--format", "json", "--quiet"];
    args.extend(extra);
    let run = run(project, &args);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

/// The write hook, told that the agent wrote `file_path` (as given: absolute or not).
pub(crate) fn hook(project: &TestProject, file_path: &str) -> Run {
    let payload = serde_json::json!({"tool_input": {"file_path": file_path}}).to_string();
    project.run_watched(&["engine", "hook", "run-sensors"], &[], Some(&payload))
}

pub(crate) fn drops(project: &TestProject) -> String {
    std::fs::read_to_string(
        project.path(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.drops")),
    )
    .unwrap_or_default()
}

pub(crate) fn blocks(project: &TestProject) -> Vec<LedgerBlock> {
    ledger_blocks(project, RECORD)
}

pub(crate) fn events<'b>(blocks: &'b [LedgerBlock], event: &str) -> Vec<&'b LedgerBlock> {
    blocks
        .iter()
        .filter(|block| block.event() == event)
        .collect()
}

pub(crate) fn gate_rows(project: &TestProject) -> Vec<LedgerBlock> {
    blocks(project)
        .into_iter()
        .filter(|block| block.event() == "STAGE_AWAITING_APPROVAL")
        .collect()
}

/// Every fire in the ledger, by fire id: its `SENSOR_FIRED` and its terminal rows. Asserts
/// that every block is whole (a heading, a timestamp and an event) and that every sensor row
/// carries a fire id.
pub(crate) fn fires_by_id(blocks: &[LedgerBlock]) -> BTreeMap<String, (usize, Vec<LedgerBlock>)> {
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
pub(crate) fn assert_every_fire_paired(project: &TestProject) -> BTreeMap<String, LedgerBlock> {
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
pub(crate) fn terminal_of(project: &TestProject, verdict: &Value) -> LedgerBlock {
    let fire_id = verdict["fire_id"].as_str().expect("a fire id");
    assert_every_fire_paired(project)
        .remove(fire_id)
        .unwrap_or_else(|| panic!("fire {fire_id} is not in the ledger"))
}

/// Whether `pid` is gone (or a zombie nobody reaped yet), waiting up to 10 s for it to go.
pub(crate) fn pid_is_gone_soon(pid: &str) -> bool {
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
pub(crate) fn wait_for_pid_file(project: &TestProject, relative: &str) -> String {
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

pub(crate) fn wait_for_file(project: &TestProject, relative: &str) {
    let started = Instant::now();
    while !project.exists(relative) {
        assert!(started.elapsed() < HANG, "{relative} never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `aidlc <args>` started in the background; its output is read by [`finish`].
pub(crate) fn spawn(project: &TestProject, args: &[&str]) -> std::process::Child {
    project
        .command(&project.root, args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start aidlc")
}

/// Wait for a background run, at most [`HANG`].
pub(crate) fn finish(mut child: std::process::Child) -> Run {
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

pub(crate) fn kill(signal: &str, pid: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), pid])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Every regular file under the project folder with its bytes.
pub(crate) fn tree_bytes(project: &TestProject) -> BTreeMap<String, Vec<u8>> {
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

/// The JSON diagnostics of a `compile --format json` run.
pub(crate) fn json_diagnostics(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

/// `time` as an audit timestamp, `YYYY-MM-DDTHH:MM:SSZ` (UTC), as the ledger writes it.
pub(crate) fn iso_timestamp(time: std::time::SystemTime) -> String {
    aidlc::leaves::timestamp::iso_timestamp(time)
}

/// One fire as the reference's dispatcher records it, in a shard of another clone: `SENSOR_FIRED`
/// and its `SENSOR_PASSED`, or its `SENSOR_FAILED` with `findings` and a detail path. The
/// reference fires any file under any stage slug, so its rows can name a stage that does not
/// declare the file.
pub(crate) fn record_reference_fire(
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
pub(crate) fn override_receipt(project: &TestProject, timestamp: &str) -> String {
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
pub(crate) fn append_to_the_only_shard(project: &TestProject, text: &str) {
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
