//! Writes through the shell fire sensors: the pre-tool guard keeps what the project holds before
//! a shell tool call, and the write hook, after it, fires the active stage's write-fired sensors
//! on each file the call created or modified, as for a file tool's write. Driven through the
//! real binary with a fake worker; the test itself plays the shell command.

use aidlc::report::ReportFormat;
use aidlc::runtime::audit::ledger::{AuditBlock, parse_blocks};
use serde_json::json;

use crate::support::{Run, TestProject, stage};

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const OUTPUT: &str =
    "aidlc/spaces/default/intents/261130-demo/inception/first-stage/first-stage-doc.md";
const DROPS: &str =
    "aidlc/spaces/default/intents/261130-demo/.aidlc-hooks-health/run-sensors.drops";

/// A compiled project whose one stage imports sensor `fake` (write-fired on `**/*.md`; its
/// worker fails with three findings, so each fire writes a detail file), an intent record on
/// that stage with its audit shard started, and the stage's output.
fn project() -> TestProject {
    project_in(".claude")
}

/// [`project`] with its harness folder `dir` (`.cursor`, `.aidlc`, `.kiro`).
fn project_in(dir: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        &format!("{dir}/sensors/aidlc-fake.md"),
        "---\nid: fake\nkind: deterministic\ncommand: sh fake-worker.sh\ndefault_severity: advisory\ndescription: A fake sensor for tests\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# fake\n",
    );
    project.write(
        "fake-worker.sh",
        "#!/bin/sh\necho '{\"pass\":false,\"findings_count\":3,\"findings\":[\"a\"]}'\n",
    );
    project.write(
        &format!("{dir}/agents/aidlc-demo-agent.md"),
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        &format!("{dir}/aidlc-common/stages/inception/first-stage.md"),
        &stage("first-stage", "inception", "[]", "[fake]", ""),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(OUTPUT, "# First stage doc\n");
    let shard = project.audit_shard();
    std::fs::create_dir_all(shard.parent().unwrap()).unwrap();
    std::fs::write(&shard, "# AI-DLC Audit Log\n").unwrap();
    project
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

/// The rows without what differs from one fire to the next (ids, times, durations, the detail
/// file's random name), for comparing two fires of the same content.
fn comparable_rows(project: &TestProject) -> Vec<(String, Vec<(String, String)>)> {
    let root = format!("{}/", project.root);
    audit_blocks(project)
        .into_iter()
        .filter(|block| block.event.starts_with("SENSOR_"))
        .map(|block| {
            let fields = block
                .fields
                .into_iter()
                .filter(|(name, _)| {
                    ![
                        "Fire id", "ID", "Time", "Duration", "Detail", "Started", "Finished",
                    ]
                    .iter()
                    .any(|volatile| name.contains(volatile))
                })
                .map(|(name, value)| (name, value.replace(&root, "")))
                .collect();
            (block.event, fields)
        })
        .collect()
}

fn detail_files(project: &TestProject) -> usize {
    let dir = project.path(&format!("{RECORD}/.aidlc-engine/sensors/first-stage"));
    dir.read_dir_utf8().map_or(0, Iterator::count)
}

fn bash_payload(project: &TestProject, event: &str, id: &str) -> String {
    json!({
        "hook_event_name": event,
        "session_id": "s1",
        "tool_use_id": id,
        "cwd": project.root,
        "tool_name": "Bash",
        "tool_input": {"command": "sh ./generate.sh"},
    })
    .to_string()
}

fn guard(project: &TestProject, id: &str) -> Run {
    project.run_watched(
        &["engine", "hook", "guard"],
        &[],
        Some(&bash_payload(project, "PreToolUse", id)),
    )
}

fn after_bash(project: &TestProject, id: &str) -> Run {
    project.run_watched(
        &["engine", "hook", "run-sensors"],
        &[],
        Some(&bash_payload(project, "PostToolUse", id)),
    )
}

/// A shell call: the guard before it, `change` as its command, the write hook after it.
fn shell_call(project: &TestProject, id: &str, change: impl FnOnce(&TestProject)) -> Run {
    let before = guard(project, id);
    assert_eq!(before.status, 0, "{}", before.stderr);
    change(project);
    let after = after_bash(project, id);
    assert_eq!(after.status, 0, "{}", after.stderr);
    assert_eq!(after.stdout, "");
    after
}

#[test]
fn a_shell_call_that_writes_a_deliverable_fires_as_a_file_tool_write_of_the_same_content() {
    let through_the_shell = project();
    shell_call(&through_the_shell, "toolu_1", |project| {
        project.write(OUTPUT, "# First stage doc\n\nWritten by a script.\n");
    });
    let through_write = project();
    through_write.write(OUTPUT, "# First stage doc\n\nWritten by a script.\n");
    let written = through_write.run_watched(
        &["engine", "hook", "run-sensors"],
        &[],
        Some(
            &json!({
                "hook_event_name": "PostToolUse",
                "cwd": through_write.root,
                "tool_name": "Write",
                "tool_input": {"file_path": through_write.path(OUTPUT)},
            })
            .to_string(),
        ),
    );
    assert_eq!(written.status, 0, "{}", written.stderr);
    let rows = comparable_rows(&through_the_shell);
    assert_eq!(rows.len(), 2, "SENSOR_FIRED and its terminal row: {rows:?}");
    assert_eq!(rows, comparable_rows(&through_write));
    assert_eq!(detail_files(&through_the_shell), 1);
    assert_eq!(detail_files(&through_write), 1);
    assert!(!through_the_shell.exists(DROPS));
    assert!(
        !through_the_shell.exists(&format!(
            "{RECORD}/.aidlc-hooks-health/shell-snapshots/toolu_1.snapshot"
        )),
        "the snapshot is read once and removed"
    );
}

#[test]
fn a_shell_call_that_changes_nothing_fires_nothing_and_writes_no_row() {
    let project = project();
    let before = audit_blocks(&project).len();
    let run = shell_call(&project, "toolu_2", |_| {});
    assert_eq!(run.stderr, "");
    assert_eq!(audit_blocks(&project).len(), before);
    assert!(!project.exists(DROPS));
    assert!(!project.exists(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.last")));
}

#[test]
fn ignored_files_and_never_walked_folders_fire_nothing() {
    let project = project();
    project.write(".gitignore", "generated/\n");
    shell_call(&project, "toolu_3", |project| {
        project.write("generated/notes.md", "x\n");
        project.write("node_modules/pkg/README.md", "x\n");
        project.write("target/doc/index.md", "x\n");
    });
    assert!(comparable_rows(&project).is_empty());
}

#[test]
fn a_deleted_deliverable_fires_nothing_and_is_a_drop_naming_it_and_a_rename_fires_on_the_new_name()
{
    let project = project();
    shell_call(&project, "toolu_4", |project| project.remove(OUTPUT));
    assert!(comparable_rows(&project).is_empty(), "nothing fires");
    let drops = project.read(DROPS);
    assert!(
        drops.contains(&format!(
            "a shell call deleted {OUTPUT}, which fake would check"
        )),
        "{drops}"
    );
    // A rename is the old name deleted and the new one created (outside the record, where
    // any file the glob matches fires).
    project.write("docs/notes.md", "# Notes\n");
    shell_call(&project, "toolu_5", |project| {
        std::fs::rename(
            project.path("docs/notes.md"),
            project.path("docs/renamed.md"),
        )
        .unwrap();
    });
    let rows = comparable_rows(&project);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows[0]
            .1
            .iter()
            .any(|(name, value)| name == "Output path" && value == "docs/renamed.md"),
        "{rows:?}"
    );
    let drops = project.read(DROPS);
    assert_eq!(drops.lines().count(), 2, "{drops}");
    assert!(
        drops.contains("a shell call deleted docs/notes.md"),
        "{drops}"
    );
}

#[test]
fn a_shell_call_with_no_snapshot_is_a_drop_saying_the_guard_did_not_run() {
    let project = project();
    project.write(OUTPUT, "# Changed with no guard\n");
    let run = after_bash(&project, "toolu_6");
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(comparable_rows(&project).is_empty());
    let drops = project.read(DROPS);
    assert!(
        drops.contains("Claude Code: no snapshot of the project was taken before this shell call")
            && drops.contains("aidlc hook install"),
        "{drops}"
    );
}

#[test]
fn notebook_edit_and_multi_edit_fire_like_edit() {
    let project = project();
    for (tool, key) in [
        ("NotebookEdit", "notebook_path"),
        ("MultiEdit", "file_path"),
    ] {
        let run = project.run_watched(
            &["engine", "hook", "run-sensors"],
            &[],
            Some(
                &json!({
                    "hook_event_name": "PostToolUse",
                    "cwd": project.root,
                    "tool_name": tool,
                    "tool_input": {key: project.path(OUTPUT)},
                })
                .to_string(),
            ),
        );
        assert_eq!(run.status, 0, "{}", run.stderr);
    }
    assert_eq!(comparable_rows(&project).len(), 4);
}

fn gate_start_narration(project: &TestProject) -> String {
    let run = project.run(&["engine", "gate", "start", "first-stage"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let reply: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    reply["narration"].as_str().unwrap_or_default().to_owned()
}

fn doctor_labels(project: &TestProject) -> Vec<(String, String, String)> {
    let run = project.run(&["doctor", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}{}", run.stdout, run.stderr));
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["status"].as_str().unwrap().to_owned(),
                row["label"].as_str().unwrap().to_owned(),
                row["fix"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn unseen_row(project: &TestProject) -> Option<(String, String, String)> {
    doctor_labels(project)
        .into_iter()
        .find(|(_, label, _)| label.starts_with("Write hook never saw"))
}

#[test]
fn a_write_hook_that_never_saw_a_deliverable_is_named_by_gate_start_and_doctor() {
    let project = project();
    // No hook registered: the doctor's registration row is the one that fails, nothing more.
    assert!(unseen_row(&project).is_none());
    assert!(
        doctor_labels(&project)
            .iter()
            .any(|(status, label, _)| status == "fail"
                && label.starts_with("Write hook: not registered")),
        "{:?}",
        doctor_labels(&project)
    );
    assert!(!gate_start_narration(&project).contains("never saw"));

    let installed = project.run(&["hook", "install"]);
    assert_eq!(installed.status, 0, "{}", installed.stderr);
    let narration = gate_start_narration(&project);
    assert!(
        narration.contains(&format!(
            "The write hook never saw 1 file of stage first-stage: {OUTPUT} changed, and the write hook has never run in this record"
        )) && narration.contains("aidlc hook install")
            && narration.contains(&format!(
                "aidlc engine sensor fire <sensor> --stage first-stage --output-path {OUTPUT}"
            )),
        "{narration}"
    );
    let (status, label, fix) = unseen_row(&project).expect("the doctor names it");
    assert_eq!(status, "warn");
    assert!(
        label.ends_with(&format!(
            "{OUTPUT} changed, and it has never run in this record"
        )),
        "{label}"
    );
    assert!(
        fix.contains("aidlc hook install")
            && fix.contains(&format!(
                "aidlc engine sensor fire fake --stage first-stage --output-path {OUTPUT}"
            )),
        "{fix}"
    );

    // The hook sees the deliverable: nothing is unseen.
    let seen = project.run_watched(
        &["engine", "hook", "run-sensors"],
        &[],
        Some(&json!({"cwd": project.root, "tool_name": "Write", "tool_input": {"file_path": project.path(OUTPUT)}}).to_string()),
    );
    assert_eq!(seen.status, 0, "{}", seen.stderr);
    let heartbeat = project.path(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.last"));
    let heartbeat_time = std::fs::metadata(&heartbeat).unwrap().modified().unwrap();
    let file = std::fs::File::options()
        .write(true)
        .open(project.path(OUTPUT))
        .unwrap();
    file.set_modified(heartbeat_time - std::time::Duration::from_secs(1))
        .unwrap();
    assert!(unseen_row(&project).is_none());
    assert!(!gate_start_narration(&project).contains("never saw"));

    // Changed after the hook last ran, by something the hook never saw.
    file.set_modified(heartbeat_time + std::time::Duration::from_secs(5))
        .unwrap();
    drop(file);
    let narration = gate_start_narration(&project);
    assert!(
        narration.contains(&format!("{OUTPUT} changed after the write hook last ran (")),
        "{narration}"
    );
    let (_, label, _) = unseen_row(&project).expect("the doctor names it");
    assert!(label.contains("changed after it last ran ("), "{label}");
    // `gate check` reports it as a notice in every format, and it never fails the check.
    let notice = format!(
        "The write hook never saw 1 file of stage first-stage: {OUTPUT} changed after the write hook last ran ("
    );
    for format in ReportFormat::all() {
        let check = project.run(&[
            "gate",
            "check",
            "--format",
            format.name(),
            "--no-record",
            "--allow-empty",
        ]);
        assert_eq!(check.status, 0, "{format:?}: {}", check.stderr);
        assert!(
            check.stdout.contains(&notice),
            "{format:?}: {}",
            check.stdout
        );
        if *format == ReportFormat::Json {
            let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
            assert_eq!(report["unseen_writes"]["files"], json!([OUTPUT]));
            assert_eq!(report["unseen_writes"]["stage"], "first-stage");
            let schema = project.run(&["schema", "gate-report"]);
            let schema: serde_json::Value = serde_json::from_str(&schema.stdout).unwrap();
            let validator = jsonschema::draft202012::new(&schema).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&report)
                .map(|error| error.to_string())
                .collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
    }
}

/// The harnesses whose shell calls come in their own payload shapes, with their folder.
const OTHER_SHAPES: [(&str, &str); 6] = [
    ("codex", ".codex"),
    ("kiro", ".kiro"),
    ("opencode", ".aidlc"),
    ("cursor", ".cursor"),
    ("copilot", ".aidlc"),
    ("kiro-cli-v3", ".kiro"),
];

/// `harness`'s payload for the shell call `id` running `sh ./generate.sh`, before it runs
/// (`before`) or after: Codex's `Bash` tool, Kiro CLI 2's `execute_bash` (its agent file's
/// hooks name no call), opencode's `bash` (as the engine's plugin passes it), Cursor's shell
/// events (no tool name; the call is its generation), Copilot's `bash` tool, Kiro CLI 3's
/// `shell` tool.
fn other_shell_payload(project: &TestProject, harness: &str, before: bool, id: &str) -> String {
    let root = project.root.as_str();
    match harness {
        "codex" => json!({
            "hook_event_name": if before { "PreToolUse" } else { "PostToolUse" },
            "session_id": "s1",
            "turn_id": "t1",
            "tool_use_id": id,
            "cwd": root,
            "tool_name": "Bash",
            "tool_input": {"command": "sh ./generate.sh"},
        }),
        "kiro" => json!({
            "hook_event_name": if before { "preToolUse" } else { "postToolUse" },
            "cwd": root,
            "tool_name": "execute_bash",
            "tool_input": {"command": "sh ./generate.sh"},
        }),
        "opencode" => json!({
            "hook_event_name": if before { "tool.execute.before" } else { "tool.execute.after" },
            "directory": root,
            "tool": "bash",
            "sessionID": "s1",
            "callID": id,
            "args": {"command": "sh ./generate.sh"},
        }),
        "cursor" => json!({
            "hook_event_name": if before { "beforeShellExecution" } else { "afterShellExecution" },
            "conversation_id": "c1",
            "generation_id": id,
            "command": "sh ./generate.sh",
            "cwd": root,
            "workspace_roots": [root],
        }),
        "copilot" => json!({
            "hook_event_name": if before { "PreToolUse" } else { "PostToolUse" },
            "session_id": id,
            "cwd": root,
            "tool_name": "bash",
            "tool_input": {"command": "sh ./generate.sh"},
        }),
        "kiro-cli-v3" => json!({
            "hook_event_name": if before { "PreToolUse" } else { "PostToolUse" },
            "cwd": root,
            "session_id": id,
            "tool_name": "shell",
            "tool_input": {"command": "sh ./generate.sh"},
        }),
        other => panic!("no harness {other}"),
    }
    .to_string()
}

/// A shell call on `harness`: its guard before, `change` as its command, its write hook after.
fn other_shell_call(
    project: &TestProject,
    harness: &str,
    id: &str,
    change: impl FnOnce(&TestProject),
) -> Run {
    let before = project.run_watched(
        &["engine", "hook", "guard", "--harness", harness],
        &[],
        Some(&other_shell_payload(project, harness, true, id)),
    );
    assert_eq!(before.status, 0, "{harness}: {}", before.stderr);
    if harness == "cursor" {
        assert_eq!(before.stdout, "{\"permission\":\"allow\"}\n");
    } else {
        assert_eq!(before.stdout, "", "{harness}");
    }
    change(project);
    let after = project.run_watched(
        &["engine", "hook", "run-sensors", "--harness", harness],
        &[],
        Some(&other_shell_payload(project, harness, false, id)),
    );
    assert_eq!(after.status, 0, "{harness}: {}", after.stderr);
    assert_eq!(after.stdout, "", "{harness}");
    after
}

#[test]
fn every_other_harness_s_shell_calls_fire_as_claude_code_s_write_of_the_same_content() {
    let through_write = project();
    through_write.write(OUTPUT, "# First stage doc\n\nWritten by a script.\n");
    let written = through_write.run_watched(
        &["engine", "hook", "run-sensors"],
        &[],
        Some(
            &json!({
                "hook_event_name": "PostToolUse",
                "cwd": through_write.root,
                "tool_name": "Write",
                "tool_input": {"file_path": through_write.path(OUTPUT)},
            })
            .to_string(),
        ),
    );
    assert_eq!(written.status, 0, "{}", written.stderr);
    let expected = comparable_rows(&through_write);
    assert_eq!(expected.len(), 2, "{expected:?}");
    for (harness, dir) in OTHER_SHAPES {
        let project = project_in(dir);
        other_shell_call(&project, harness, "gen-1", |project| {
            project.write(OUTPUT, "# First stage doc\n\nWritten by a script.\n");
        });
        assert_eq!(comparable_rows(&project), expected, "{harness}");
        assert_eq!(detail_files(&project), 1, "{harness}");
        assert!(!project.exists(DROPS), "{harness}");
    }
}

#[test]
fn every_other_harness_s_shell_calls_that_change_nothing_fire_nothing() {
    for (harness, dir) in OTHER_SHAPES {
        let project = project_in(dir);
        let before = audit_blocks(&project).len();
        let run = other_shell_call(&project, harness, "gen-2", |_| {});
        assert_eq!(run.stderr, "", "{harness}");
        assert_eq!(audit_blocks(&project).len(), before, "{harness}");
        assert!(!project.exists(DROPS), "{harness}");
    }
}

#[test]
fn every_other_harness_s_deletes_and_renames_are_read_as_for_claude_code() {
    for (harness, dir) in OTHER_SHAPES {
        let project = project_in(dir);
        other_shell_call(&project, harness, "gen-3", |project| project.remove(OUTPUT));
        assert!(
            comparable_rows(&project).is_empty(),
            "{harness}: nothing fires"
        );
        let drops = project.read(DROPS);
        assert!(
            drops.contains(&format!(
                "a shell call deleted {OUTPUT}, which fake would check"
            )),
            "{harness}: {drops}"
        );
        project.write("docs/notes.md", "# Notes\n");
        other_shell_call(&project, harness, "gen-4", |project| {
            std::fs::rename(
                project.path("docs/notes.md"),
                project.path("docs/renamed.md"),
            )
            .unwrap();
        });
        let rows = comparable_rows(&project);
        assert_eq!(rows.len(), 2, "{harness}: {rows:?}");
        assert!(
            rows[0]
                .1
                .iter()
                .any(|(name, value)| name == "Output path" && value == "docs/renamed.md"),
            "{harness}: {rows:?}"
        );
        assert!(
            project
                .read(DROPS)
                .contains("a shell call deleted docs/notes.md"),
            "{harness}"
        );
    }
}

#[test]
fn a_cursor_shell_call_the_guard_never_saw_is_a_drop() {
    let project = project_in(".cursor");
    project.write(OUTPUT, "# Changed with no guard\n");
    let run = project.run_watched(
        &["engine", "hook", "run-sensors", "--harness", "cursor"],
        &[],
        Some(&other_shell_payload(&project, "cursor", false, "gen-5")),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(comparable_rows(&project).is_empty());
    let drops = project.read(DROPS);
    assert!(
        drops.contains("Cursor: no snapshot of the project was taken before this shell call"),
        "{drops}"
    );
}

const LATEST: &str =
    "aidlc/spaces/default/intents/261130-demo/.aidlc-hooks-health/shell-snapshots/.latest.snapshot";

/// Set every folder's modification time an hour back, as a project no one has touched for a
/// while: a walk then trusts the folders' stamps, and the next snapshot re-stamps the watched
/// files without listing a folder.
fn settle(project: &TestProject) {
    fn settle_folder(folder: &std::path::Path, when: std::time::SystemTime) {
        for entry in std::fs::read_dir(folder).unwrap().filter_map(Result::ok) {
            if entry.file_type().unwrap().is_dir() {
                settle_folder(&entry.path(), when);
            }
        }
        std::fs::File::open(folder)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    settle_folder(project.root.as_std_path(), an_hour_ago);
}

#[test]
fn a_settled_project_is_restamped_between_calls_and_every_change_still_fires() {
    let project = project();
    // The first call makes the hooks-health folder, which changes the record's folder.
    shell_call(&project, "toolu_6", |_| {});
    settle(&project);
    let before = audit_blocks(&project).len();
    shell_call(&project, "toolu_7", |_| {});
    assert_eq!(audit_blocks(&project).len(), before);
    assert!(
        project.read(LATEST).contains("\ntrusted yes\n"),
        "the hook keeps the project now for the next call's guard"
    );

    // Rewritten in place: no folder changes, the re-stamp sees the file's new stamp.
    shell_call(&project, "toolu_8", |project| {
        project.write(OUTPUT, "# First stage doc\n\nRewritten in place.\n");
    });
    assert_eq!(comparable_rows(&project).len(), 2);

    // Created in a settled folder: the folder's stamp changes, and the walk finds the file.
    settle(&project);
    shell_call(&project, "toolu_9", |_| {});
    shell_call(&project, "toolu_10", |project| {
        project.write(
            &format!("{RECORD}/inception/first-stage/notes.md"),
            "# Notes\n",
        );
        project.write("docs/new.md", "# New\n");
    });
    let rows = comparable_rows(&project);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(
        rows.iter().any(|(_, fields)| fields
            .iter()
            .any(|(name, value)| name == "Output path" && value == "docs/new.md")),
        "{rows:?}"
    );

    // Deleted from a settled folder: a drop names it.
    settle(&project);
    shell_call(&project, "toolu_11", |_| {});
    shell_call(&project, "toolu_12", |project| project.remove(OUTPUT));
    assert!(
        project.read(DROPS).contains(&format!(
            "a shell call deleted {OUTPUT}, which fake would check"
        )),
        "{}",
        project.read(DROPS)
    );
}

#[test]
fn a_shell_call_that_changes_only_files_no_sensor_matches_fires_nothing_and_writes_nothing() {
    let project = project();
    project.write("src/main.rs", "fn main() {}\n");
    let before = audit_blocks(&project).len();
    let run = shell_call(&project, "toolu_13", |project| {
        project.write("src/main.rs", "fn main() { println!(\"changed\"); }\n");
        project.write("src/generated.rs", "// new\n");
        project.remove("fake-worker.sh");
    });
    assert_eq!(run.stderr, "");
    assert_eq!(audit_blocks(&project).len(), before);
    assert!(comparable_rows(&project).is_empty());
    assert!(!project.exists(DROPS));
    assert!(!project.exists(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.last")));
}

#[test]
fn a_snapshot_cut_short_or_garbled_is_a_drop_saying_it_cannot_be_read_never_nothing_changed() {
    let project = project();
    let snapshot = format!("{RECORD}/.aidlc-hooks-health/shell-snapshots/toolu_14.snapshot");
    for (id, damage) in [("toolu_14", "cut"), ("toolu_15", "garbled")] {
        let snapshot = snapshot.replace("toolu_14", id);
        let guarded = guard(&project, id);
        assert_eq!(guarded.status, 0, "{}", guarded.stderr);
        let text = project.read(&snapshot);
        let damaged = if damage == "cut" {
            let end = text.rfind("end ").expect("an end line");
            text[..end].to_owned()
        } else {
            text.replacen("\nfile ", "\nfile x", 1)
        };
        project.write(&snapshot, &damaged);
        project.write(
            OUTPUT,
            &format!("# Changed while the snapshot was {damage}\n"),
        );
        let run = after_bash(&project, id);
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert!(
            !project.exists(&snapshot),
            "a damaged snapshot is removed too"
        );
    }
    assert!(
        comparable_rows(&project).is_empty(),
        "nothing is taken as checked"
    );
    let drops = project.read(DROPS);
    assert_eq!(drops.lines().count(), 2, "{drops}");
    assert!(
        drops.contains(&format!(
            "the snapshot taken before this shell call ({snapshot}) cannot be read: it has no `end` line"
        )),
        "{drops}"
    );
    assert!(
        drops.contains("toolu_15.snapshot) cannot be read: line"),
        "{drops}"
    );
}

#[test]
fn a_latest_snapshot_that_cannot_be_read_is_walked_past_and_replaced() {
    let project = project();
    shell_call(&project, "toolu_16", |_| {});
    settle(&project);
    project.write(LATEST, "aidlc-project-snapshot 2\nwatched \"cut");
    let guarded = guard(&project, "toolu_17");
    assert_eq!(guarded.status, 0, "{}", guarded.stderr);
    assert!(
        project.read(LATEST).contains("\ntrusted yes\n"),
        "the guard walked and kept its walk: {}",
        project.read(LATEST)
    );
    project.write("docs/after.md", "# After\n");
    let after = after_bash(&project, "toolu_17");
    assert_eq!(after.status, 0, "{}", after.stderr);
    let rows = comparable_rows(&project);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(!project.exists(DROPS), "{}", project.read(DROPS));
}
