//! Issues 26 and 30, the CI reports' items: the exit status is the verdict's whatever happens
//! to stdout, `--report FORMAT=PATH` writes special files by opening them and follows links,
//! `gate merge` re-plans from the project and refuses reports that do not match it, a shard
//! with no fire of its own is not an error, `JUnit` keeps advisory findings out of `<failure>`,
//! and the human output groups by file and names paths from the working folder.

use std::io::Read as _;
use std::process::Stdio;

use camino::Utf8Path;

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
    for format in ["json", "github", "sarif", "human"] {
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
