//! Issues 26 and 30, the CI reports' items: the exit status is the verdict's whatever happens
//! to stdout, `--report FORMAT=PATH` writes special files by opening them and follows links,
//! `gate merge` re-plans from the project and refuses reports that do not match it, a shard
//! with no fire of its own is not an error, `JUnit` keeps advisory findings out of `<failure>`,
//! and the human output groups by file and names paths from the working folder.

use std::io::Read as _;
use std::process::Stdio;

use aidlc::report::ReportFormat;
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{Run, TestProject};

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";

/// Fails with one finding (on line 2) on a file containing FAIL, else passes.
const SHAPE_WORKER: &str = r#"if grep -q FAIL "$4"; then echo '{"pass":false,"findings_count":1,"findings":[{"message":"the file says FAIL","line":2,"rule":"no-fail"}]}'; else echo '{"pass":true,"findings_count":0}'; fi"#;

/// A compiled project whose stage `first-stage` produces `doc-1` … `doc-<deliverables>` (each
/// on disk, failing for the shape worker when its number is in `failing`), with one gate sensor
/// per `(id, severity)`, each running [`SHAPE_WORKER`].
fn gate_project(sensors: &[(&str, &str)], deliverables: usize, failing: &[usize]) -> TestProject {
    let project = TestProject::empty();
    for (id, severity) in sensors {
        project.write(&format!("{id}.sh"), &format!("#!/bin/sh\n{SHAPE_WORKER}\n"));
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &format!(
                "---\nid: {id}\nkind: deterministic\ncommand: sh {id}.sh\ndefault_severity: {severity}\nfire_on: gate\ndescription: A shape sensor\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {id}\n"
            ),
        );
    }
    let ids: Vec<&str> = sensors.iter().map(|(id, _)| *id).collect();
    let produces = (1..=deliverables)
        .map(|index| format!("  - doc-{index}"))
        .collect::<Vec<_>>()
        .join("\n");
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &format!(
            "---\nslug: first-stage\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n{produces}\nconsumes: []\nrequires_stage: []\nsensors: [{}]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# first-stage\n",
            ids.join(", ")
        ),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n",
    );
    for index in 1..=deliverables {
        let body = if failing.contains(&index) {
            "# Doc\nFAIL here\n"
        } else {
            "# Doc\nfine\n"
        };
        project.write(&format!("{STAGE_DIR}/doc-{index}.md"), body);
    }
    project
}

/// `aidlc <args>` in `cwd` whose stdout's reader has gone before it writes anything (the read
/// end of the pipe is closed at once), as `aidlc … | true` does.
fn run_with_stdout_closed(project: &TestProject, cwd: &Utf8Path, args: &[&str]) -> Run {
    let mut child = project
        .command(cwd, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run aidlc");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let status = child.wait().expect("wait for aidlc");
    Run {
        status: status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr,
    }
}

// --- Issue 26, item 1: the exit status is the verdict's whatever happens to stdout ------------

#[test]
fn a_failing_gate_exits_1_when_the_reader_of_stdout_is_gone() {
    let project = gate_project(&[("shape", "blocking")], 2, &[1]);
    for format in ReportFormat::all().iter().map(|format| format.name()) {
        let run = run_with_stdout_closed(
            &project,
            &project.root,
            &["gate", "check", "--no-record", "--format", format],
        );
        assert_eq!(run.status, 1, "{format}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("stdout was closed by its reader before the output ended"),
            "{format}: {}",
            run.stderr
        );
    }
    let passing = gate_project(&[("shape", "blocking")], 2, &[]);
    let run = run_with_stdout_closed(
        &passing,
        &passing.root,
        &["gate", "check", "--no-record", "--format", "json"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        !run.stderr.contains("stdout was closed"),
        "a passing check whose reader left is quiet: {}",
        run.stderr
    );
}

#[test]
fn a_pipeline_with_pipefail_sees_the_failing_gate_through_head() {
    let project = gate_project(&[("shape", "blocking")], 2, &[1]);
    let aidlc = env!("CARGO_BIN_EXE_aidlc");
    let script = format!(
        "set -o pipefail; '{aidlc}' gate check --no-record --format json | true; echo \"status=$?\""
    );
    let run = Run::from(
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&project.root)
            .env("NO_COLOR", "1")
            .output()
            .expect("bash"),
    );
    assert!(
        run.stdout.contains("status=1"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn compile_and_gate_merge_keep_their_status_when_stdout_is_closed() {
    let project = gate_project(&[("shape", "blocking")], 2, &[1]);
    project.write(
        ".claude/aidlc-common/stages/inception/broken.md",
        "---\nslug: broken\nphase: inception\n---\n",
    );
    let run = run_with_stdout_closed(&project, &project.root, &["compile", "--format", "json"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    project.remove(".claude/aidlc-common/stages/inception/broken.md");
    let listed = run_with_stdout_closed(&project, &project.root, &["engine", "sensor", "list"]);
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    let shard = project.run(&["gate", "check", "--no-record", "--format", "json"]);
    assert_eq!(shard.status, 1, "{}", shard.stderr);
    project.write("whole.json", &shard.stdout);
    let merged = run_with_stdout_closed(
        &project,
        &project.root,
        &["gate", "merge", "whole.json", "--format", "json"],
    );
    assert_eq!(merged.status, 1, "{}", merged.stderr);
}

// --- Issue 26, item 3: `--report FORMAT=PATH` whatever PATH is ---------------------------------

/// Whether this process may make device nodes (root), for the tests that make their own.
fn can_make_devices() -> bool {
    rustix::process::geteuid().is_root()
}

/// A character device `major, minor` at `path` (1,3 is null, 1,7 is full), made with `mknod`.
fn make_char_device(path: &Utf8Path, major: u32, minor: u32) {
    let made = std::process::Command::new("mknod")
        .args([path.as_str(), "c", &major.to_string(), &minor.to_string()])
        .status()
        .expect("mknod");
    assert!(made.success(), "mknod {path}");
}

fn is_char_device(path: &Utf8Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_char_device())
}

#[test]
fn a_report_into_a_character_device_stays_a_device_and_a_full_one_is_an_error() {
    if !can_make_devices() {
        println!("SKIPPED: making device nodes with mknod needs root");
        return;
    }
    let project = gate_project(&[("shape", "blocking")], 1, &[]);
    let null = project.path("null");
    make_char_device(&null, 1, 3);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        &format!("json={null}"),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(is_char_device(&null), "the device was replaced by a file");
    let full = project.path("full");
    make_char_device(&full, 1, 7);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        &format!("sarif={full}"),
    ]);
    assert_eq!(
        run.status, 2,
        "a report that could not be written: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("cannot write the sarif report to")
            && run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
    assert!(is_char_device(&full), "the device was replaced by a file");
}

/// Reads a FIFO from before `aidlc` starts until `aidlc` has written and closed it, for at most
/// half a minute, without ever blocking: a FIFO that `aidlc` replaced instead of writing is read as
/// nothing.
fn read_fifo_in_background(fifo: &Utf8Path) -> std::thread::JoinHandle<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed())
        .open(fifo)
        .expect("open the FIFO's read end");
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let mut received = Vec::new();
        let mut buffer = [0_u8; 8192];
        while started.elapsed() < std::time::Duration::from_secs(30) {
            match reader.read(&mut buffer) {
                // No writer (yet, or any more): done once something came.
                Ok(0) if !received.is_empty() => break,
                Ok(0) => std::thread::sleep(std::time::Duration::from_millis(10)),
                Ok(n) => received.extend_from_slice(&buffer[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(error) => panic!("reading the FIFO: {error}"),
            }
        }
        received
    })
}

#[test]
fn a_report_into_a_fifo_reaches_its_reader() {
    use std::os::unix::fs::FileTypeExt as _;
    let project = gate_project(&[("shape", "blocking")], 1, &[1]);
    let fifo = project.path("report.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.as_str())
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let reader = read_fifo_in_background(&fifo);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        &format!("json={fifo}"),
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let received = String::from_utf8(reader.join().unwrap()).unwrap();
    let document: Value = serde_json::from_str(&received)
        .unwrap_or_else(|error| panic!("the reader got no report ({error}): {received:?}"));
    assert_eq!(document["counts"]["blocking_failed"], 1);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced by a file"
    );
}

#[test]
fn a_report_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let project = gate_project(&[("shape", "blocking")], 1, &[]);
    project.write("reports/real.json", "old");
    let link = project.path("latest.json");
    std::os::unix::fs::symlink("reports/real.json", &link).unwrap();
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        "json=latest.json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    let document: Value = serde_json::from_str(&project.read("reports/real.json")).unwrap();
    assert_eq!(document["schema_version"], 2);
}

#[test]
fn a_report_into_process_substitution_and_dev_stdout_is_written() {
    let project = gate_project(&[("shape", "blocking")], 1, &[1]);
    let aidlc = env!("CARGO_BIN_EXE_aidlc");
    let script = format!(
        "'{aidlc}' gate check --no-record --quiet --format json --report 'junit=>(cat > got.xml)'; status=$?; wait; echo \"status=$status\""
    )
    .replace("'junit=>(cat > got.xml)'", "junit=>(cat > got.xml)");
    let run = Run::from(
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&project.root)
            .env("NO_COLOR", "1")
            .output()
            .expect("bash"),
    );
    assert!(
        run.stdout.contains("status=1"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    // `wait` does not wait for a process substitution in every bash; give `cat` a moment.
    let started = std::time::Instant::now();
    while !read_or_empty(&project, "got.xml").ends_with("</testsuites>\n")
        && started.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        read_or_empty(&project, "got.xml").starts_with("<?xml"),
        "{}",
        run.stderr
    );
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "github",
        "--report",
        "json=/dev/stdout",
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("\"schema_version\": 2"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("::error file="), "{}", run.stdout);
}

fn read_or_empty(project: &TestProject, relative: &str) -> String {
    std::fs::read_to_string(project.path(relative)).unwrap_or_default()
}

// --- Issue 26, item 4: `gate merge` checks the shards against the project's own plan -----------

/// The JSON reports of shards 1/2 and 2/2 of `project`, parsed.
fn two_shards(project: &TestProject) -> [Value; 2] {
    [1, 2].map(|index| {
        let run = project.run(&[
            "gate",
            "check",
            "--no-record",
            "--quiet",
            "--allow-empty",
            "--format",
            "json",
            "--shard",
            &format!("{index}/2"),
        ]);
        assert!(run.status == 0 || run.status == 1, "{}", run.stderr);
        serde_json::from_str(&run.stdout).expect("a shard's JSON report")
    })
}

/// `aidlc gate merge` of `shards` written as `shard-1.json`, `shard-2.json`.
fn merge_shards(project: &TestProject, shards: &[Value]) -> Run {
    let mut args = vec!["gate".to_owned(), "merge".to_owned()];
    for (index, shard) in shards.iter().enumerate() {
        let name = format!("shard-{}.json", index + 1);
        project.write(&name, &serde_json::to_string_pretty(shard).unwrap());
        args.push(name);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    project.run(&args)
}

/// Which shard holds the failing fire (on `doc-1.md`), and its place in that shard's fires.
fn failing_fire(shards: &[Value; 2]) -> (usize, usize) {
    for (shard, report) in shards.iter().enumerate() {
        for (place, fire) in report["fires"].as_array().unwrap().iter().enumerate() {
            if fire["result"] == "failed" {
                return (shard, place);
            }
        }
    }
    panic!("no failing fire in {shards:?}");
}

/// A project whose six deliverables spread over both shards, `doc-1.md` failing a blocking
/// sensor.
fn sharded_project() -> TestProject {
    let project = gate_project(&[("shape", "blocking")], 6, &[1]);
    let shards = two_shards(&project);
    for shard in &shards {
        assert!(
            !shard["fires"].as_array().unwrap().is_empty(),
            "each shard has fires of its own: {shard}"
        );
    }
    project
}

fn assert_refused(run: &Run, words: &[&str]) {
    assert_eq!(run.status, 2, "refused with exit 2: {}", run.stderr);
    for word in words {
        assert!(run.stderr.contains(word), "{word:?} in {}", run.stderr);
    }
    assert!(run.stdout.is_empty(), "nothing rendered: {}", run.stdout);
}

#[test]
fn unchanged_shards_merge_with_the_unsharded_status() {
    let project = sharded_project();
    let run = merge_shards(&project, &two_shards(&project));
    assert_eq!(run.status, 1, "{}", run.stderr);
}

#[test]
fn a_failure_turned_into_a_pass_is_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    let (shard, place) = failing_fire(&shards);
    shards[shard]["fires"][place]["result"] = "passed".into();
    let run = merge_shards(&project, &shards);
    assert_refused(
        &run,
        &[
            &format!("shard-{}.json", shard + 1),
            "is passed but carries 1 finding",
        ],
    );
    let mut shards = two_shards(&project);
    shards[shard]["fires"][place]["result"] = "passed".into();
    shards[shard]["fires"][place]["findings"] = Value::Array(Vec::new());
    let run = merge_shards(&project, &shards);
    assert_refused(&run, &["findings_count 1"]);
}

#[test]
fn a_blocking_fire_turned_advisory_is_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    let (shard, place) = failing_fire(&shards);
    shards[shard]["fires"][place]["severity"] = "advisory".into();
    let run = merge_shards(&project, &shards);
    let plan_index = shards[shard]["fires"][place]["plan_index"].to_string();
    assert_refused(
        &run,
        &[
            &format!("shard-{}.json (shard {}/2)", shard + 1, shard + 1),
            &format!("fire {plan_index} (shape on"),
            "is advisory in the report, but the project's graph makes it blocking",
        ],
    );
}

#[test]
fn a_fire_moved_to_another_shard_is_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    let (from, place) = failing_fire(&shards);
    let to = 1 - from;
    let fire = shards[from]["fires"].as_array_mut().unwrap().remove(place);
    let fires = shards[to]["fires"].as_array_mut().unwrap();
    fires.push(fire);
    fires.sort_by_key(|fire| fire["plan_index"].as_u64());
    let run = merge_shards(&project, &shards);
    assert_refused(
        &run,
        &[&format!("shard-{}.json (shard {}/2)", to + 1, to + 1)],
    );
    assert!(
        run.stderr.contains("is not one of this shard's fires")
            || run.stderr.contains("is missing from the report"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_edited_plan_id_and_an_unrepresentable_number_are_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    for shard in &mut shards {
        shard["plan"]["id"] = "0".repeat(64).into();
    }
    let run = merge_shards(&project, &shards);
    assert_refused(
        &run,
        &[
            "shard-1.json (shard 1/2): plan 000000000000",
            "is not the plan the project gives",
        ],
    );
    for huge in ["1e300", "-1", "18446744073709551616"] {
        let mut shards = two_shards(&project);
        shards[0]["duration_ms"] = serde_json::from_str(huge).unwrap();
        let run = merge_shards(&project, &shards);
        assert_refused(&run, &["shard-1.json", "`duration_ms` is missing or not"]);
        let mut shards = two_shards(&project);
        shards[1]["fires"][0]["duration_ms"] = serde_json::from_str(huge).unwrap();
        let run = merge_shards(&project, &shards);
        assert_refused(&run, &["shard-2.json", "`fires[].duration_ms`"]);
    }
}

#[test]
fn merge_re_plans_from_the_project_it_is_given() {
    let project = sharded_project();
    let shards = two_shards(&project);
    // The same reports against a project whose stage has one deliverable less.
    project.remove(&format!("{STAGE_DIR}/doc-6.md"));
    let run = merge_shards(&project, &shards);
    assert_refused(&run, &["is not the plan the project gives"]);
    // From another folder, `--project-dir` names the project.
    let elsewhere = TestProject::empty();
    for (index, shard) in shards.iter().enumerate() {
        elsewhere.write(
            &format!("shard-{}.json", index + 1),
            &serde_json::to_string(shard).unwrap(),
        );
    }
    project.write(&format!("{STAGE_DIR}/doc-6.md"), "# Doc\nfine\n");
    let run = elsewhere.run(&[
        "gate",
        "merge",
        "shard-1.json",
        "shard-2.json",
        "--project-dir",
        project.root.as_str(),
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
}

// --- Issue 30, item 3: a shard with no fire of its own ------------------------------------------

/// The README's matrix: four shards of a plan with one fire, three of them with no fire of
/// their own; each exits 0 (the one with the fire by its verdict), and the merge gives the
/// unsharded status.
#[test]
fn shards_with_no_fire_of_their_own_pass_and_the_merge_judges_the_whole_plan() {
    let project = gate_project(&[("shape", "advisory")], 1, &[]);
    let mut files = Vec::new();
    let mut empty = 0;
    for index in 1..=4 {
        let run = project.run(&[
            "gate",
            "check",
            "--no-record",
            "--format",
            "github",
            "--shard",
            &format!("{index}/4"),
            "--report",
            &format!("json=gate-{index}.json"),
        ]);
        assert_eq!(run.status, 0, "shard {index}/4: {}", run.stderr);
        let report: Value =
            serde_json::from_str(&project.read(&format!("gate-{index}.json"))).unwrap();
        if report["fires"].as_array().unwrap().is_empty() {
            empty += 1;
            assert!(
                run.stderr.contains(&format!(
                    "note: shard {index}/4 has no fire of its own (the plan's 1 fire is in other shards)"
                )),
                "{}",
                run.stderr
            );
            assert_eq!(report["nothing_checked"], Value::Null);
            let human = project.run(&[
                "gate",
                "check",
                "--no-record",
                "--shard",
                &format!("{index}/4"),
            ]);
            assert!(
                human.stdout.contains(&format!(
                    "shard {index} of 4: none of the plan's 1 fire is this shard's"
                )),
                "{}",
                human.stdout
            );
        }
        files.push(format!("gate-{index}.json"));
    }
    assert_eq!(empty, 3);
    let mut args = vec!["gate", "merge", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let merged = project.run(&args);
    assert_eq!(merged.status, 0, "{}", merged.stderr);
}

/// A plan with nothing to fire is "nothing checked" in every shard and in the merge.
#[test]
fn nothing_checked_stays_an_error_for_the_whole_plan() {
    let project = gate_project(&[("shape", "advisory")], 1, &[]);
    project.remove(&format!("{STAGE_DIR}/doc-1.md"));
    let mut files = Vec::new();
    for index in 1..=2 {
        let run = project.run(&[
            "gate",
            "check",
            "--no-record",
            "--quiet",
            "--format",
            "json",
            "--shard",
            &format!("{index}/2"),
        ]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert!(run.stderr.contains("nothing was checked"), "{}", run.stderr);
        project.write(&format!("empty-{index}.json"), &run.stdout);
        files.push(format!("empty-{index}.json"));
    }
    let mut args = vec!["gate", "merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = project.run(&args);
    assert_eq!(merged.status, 2, "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("nothing was checked: no declared output"),
        "{}",
        merged.stderr
    );
}

// --- Issue 30, item 4: advisory findings are no `<failure>` in JUnit -----------------------------

/// The `failures` count of the whole `JUnit` document.
fn junit_failures(xml: &str) -> &str {
    let start = xml.find("<testsuites ").expect("a testsuites element");
    let attribute = &xml[start..];
    let value = &attribute[attribute.find("failures=\"").expect("failures") + 10..];
    &value[..value.find('"').unwrap()]
}

/// `xml` is valid against the vendored `JUnit` schema (with `xmllint`).
fn assert_valid_junit(project: &TestProject, xml: &str) {
    let Some(xmllint) = crate::support::system_tool("xmllint") else {
        return;
    };
    let schema =
        Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit-10.xsd");
    let file = project.path("gate.xml");
    std::fs::write(&file, xml).unwrap();
    let validation = std::process::Command::new(&xmllint)
        .args(["--noout", "--schema", schema.as_str(), file.as_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&validation.stderr);
    assert!(validation.status.success(), "{stderr}\n{xml}");
}

#[test]
fn advisory_findings_are_no_junit_failures_and_blocking_ones_are() {
    let advisory = gate_project(&[("shape", "advisory")], 2, &[1, 2]);
    let run = advisory.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "junit",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(junit_failures(&run.stdout), "0", "{}", run.stdout);
    assert!(!run.stdout.contains("<failure"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("<property name=\"aidlc.advisory-findings\" value=\"2\"/>"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "<system-out>advisory: 1 finding; an advisory sensor's findings do not fail the gate"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("the file says FAIL (no-fail)"),
        "{}",
        run.stdout
    );
    assert_valid_junit(&advisory, &run.stdout);
    let strict = advisory.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--strict",
        "--format",
        "junit",
    ]);
    assert_eq!(strict.status, 1, "{}", strict.stderr);
    assert_eq!(junit_failures(&strict.stdout), "2", "{}", strict.stdout);
    assert_valid_junit(&advisory, &strict.stdout);
    let blocking = gate_project(&[("shape", "blocking")], 2, &[1]);
    let run = blocking.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "junit",
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert_eq!(junit_failures(&run.stdout), "1", "{}", run.stdout);
    assert!(
        run.stdout
            .contains("<failure message=\"the file says FAIL (no-fail)\" type=\"blocking\">"),
        "{}",
        run.stdout
    );
    assert_valid_junit(&blocking, &run.stdout);
}

// --- Issue 30, item 5: human output grouped by file and rule, paths from the working folder ----

/// Fails with eleven findings, each on its own line of the file.
const ELEVEN_FINDINGS_WORKER: &str = r#"printf '{"pass":false,"findings_count":11,"findings":['; for line in 1 2 3 4 5 6 7 8 9 10; do printf '{"message":"claim without a source","line":%s,"rule":"untagged-claim"},' "$line"; done; printf '{"message":"claim without a source","line":11,"rule":"untagged-claim"}]}\n'"#;

/// A repository folder holding the project in `services/shop`, whose one deliverable gets eleven
/// findings from one advisory sensor.
fn monorepo_with_eleven_findings() -> (TestProject, Utf8PathBuf) {
    let repository = TestProject::empty();
    let project = gate_project(&[("claims", "advisory")], 1, &[]);
    project.write(
        "claims.sh",
        &format!("#!/bin/sh\n{ELEVEN_FINDINGS_WORKER}\n"),
    );
    let lines: Vec<String> = (1..=12).map(|line| format!("line {line}")).collect();
    project.write(&format!("{STAGE_DIR}/doc-1.md"), &(lines.join("\n") + "\n"));
    let shop = repository.path("services/shop");
    crate::support::copy_tree(&project.root, &shop);
    (repository, shop)
}

#[test]
fn human_output_has_one_header_per_file_and_sensor_with_a_count() {
    let (repository, _shop) = monorepo_with_eleven_findings();
    let run = repository.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--project-dir",
        "services/shop",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let file = format!("services/shop/{STAGE_DIR}/doc-1.md");
    assert_eq!(
        run.stdout
            .matches(&format!("{file}: 11 problems (11 warnings)"))
            .count(),
        1,
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout
            .matches("  claims: stage first-stage, advisory")
            .count(),
        1,
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.matches("⚠ claim without a source").count(), 11);
    for line in [1, 7, 11] {
        assert!(
            run.stdout.contains(&format!("╭─[{file}:{line}:1]")),
            "each finding's snippet opens from the working folder: {}",
            run.stdout
        );
    }
    assert!(
        repository.path(&file).is_file(),
        "the path shown exists from here"
    );
}

#[test]
fn compile_diagnostics_name_files_from_the_working_folder() {
    let (repository, shop) = monorepo_with_eleven_findings();
    std::fs::write(
        shop.join(".claude/aidlc-common/stages/inception/first-stage.md"),
        std::fs::read_to_string(shop.join(".claude/aidlc-common/stages/inception/first-stage.md"))
            .unwrap()
            .replace("lead_agent: aidlc-demo-agent", "lead_agent: aidlc-nobody"),
    )
    .unwrap();
    let run = repository.run(&["compile", "--project-dir", "services/shop"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("╭─[services/shop/.claude/aidlc-common/stages/inception/first-stage.md:"),
        "{}",
        run.stderr
    );
    let run = repository.run_in(&shop, &["compile"]);
    assert!(
        run.stderr
            .contains("╭─[.claude/aidlc-common/stages/inception/first-stage.md:"),
        "in the project, paths are the project's: {}",
        run.stderr
    );
}
