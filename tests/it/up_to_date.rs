//! The no-op path: a second `aidlc compile` with nothing changed stops at the fingerprint, and
//! every kind of change (or doubt about the record) leads to a real compile.

use crate::support::{GRAPH, GRID, Run, TestProject, manifest, stage};

const FINGERPRINT: &str = ".claude/tools/data/.aidlc-compile-fingerprint";
const FIRST_STAGE: &str = ".claude/aidlc-common/stages/inception/first-stage.md";
const SECOND_STAGE: &str = ".claude/aidlc-common/stages/inception/second-stage.md";

fn was_up_to_date(run: &Run) -> bool {
    run.status == 0 && run.stderr.starts_with("up to date:")
}

fn compiled_for_real(run: &Run) -> bool {
    run.stderr.contains("compiled ") || run.stderr.contains("error: compile failed")
}

/// The minimal project, compiled once, with its fingerprint on disk.
fn compiled_minimal() -> TestProject {
    let project = TestProject::minimal();
    let first = project.compile();
    assert!(
        compiled_for_real(&first) && first.status == 0,
        "{}",
        first.stderr
    );
    assert!(project.exists(FINGERPRINT));
    project
}

#[test]
fn second_compile_is_up_to_date_and_writes_nothing() {
    let project = compiled_minimal();
    let graph_before = std::fs::metadata(project.path(GRAPH)).unwrap();
    let second = project.compile();
    assert!(was_up_to_date(&second), "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("(2 stages and 1 sensor; 6 files checked"),
        "{}",
        second.stderr
    );
    let graph_after = std::fs::metadata(project.path(GRAPH)).unwrap();
    assert_eq!(
        graph_before.modified().unwrap(),
        graph_after.modified().unwrap()
    );
    let check = project.run(&["compile", "--check"]);
    assert_eq!(check.status, 0);
    assert!(
        check.stderr.contains("are up to date (2 stages)"),
        "{}",
        check.stderr
    );
}

#[test]
fn force_compiles_even_when_nothing_changed() {
    let project = compiled_minimal();
    let forced = project.run(&["compile", "--force"]);
    assert!(compiled_for_real(&forced), "{}", forced.stderr);
}

#[test]
fn touching_files_rehashes_them_but_does_not_compile() {
    let project = compiled_minimal();
    for relative in [FIRST_STAGE, SECOND_STAGE, GRAPH] {
        let file = std::fs::File::options()
            .write(true)
            .open(project.path(relative))
            .unwrap();
        file.set_modified(std::time::SystemTime::now()).unwrap();
    }
    let run = project.compile();
    assert!(was_up_to_date(&run), "{}", run.stderr);
    assert!(run.stderr.contains("re-hashed"), "{}", run.stderr);
}

/// Each change, applied to a freshly compiled minimal project, must lead to a real compile.
#[test]
fn every_kind_of_change_defeats_the_no_op() {
    type Change = fn(&TestProject);
    let changes: &[(&str, Change)] = &[
        ("same-size edit of a stage, right after the compile", |p| {
            let text = p.read(FIRST_STAGE).replace("Prose about", "Prose abouT");
            p.write(FIRST_STAGE, &text);
        }),
        ("new stage", |p| {
            p.write(
                ".claude/aidlc-common/stages/inception/third-stage.md",
                &stage("third-stage", "inception", "[]", "[]", ""),
            );
        }),
        ("deleted stage", |p| p.remove(SECOND_STAGE)),
        ("stage moved to another phase folder", |p| {
            let text = p.read(SECOND_STAGE);
            p.remove(SECOND_STAGE);
            p.write(
                ".claude/aidlc-common/stages/construction/second-stage.md",
                &text,
            );
        }),
        ("edited manifest", |p| {
            p.write(
                ".claude/sensors/aidlc-demo-check.md",
                &manifest("demo-check", "timeout_seconds: 60\n"),
            );
        }),
        ("new manifest", |p| {
            p.write(".claude/sensors/aidlc-other.md", &manifest("other", ""));
        }),
        ("deleted manifest", |p| {
            p.remove(".claude/sensors/aidlc-demo-check.md");
        }),
        ("near-miss sensor file", |p| {
            p.write(".claude/sensors/Notes.md", "# notes\n");
        }),
        ("edited agent", |p| {
            p.write(
                ".claude/agents/aidlc-demo-agent.md",
                "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent Two\n---\n# Demo\n",
            );
        }),
        ("new agent", |p| {
            p.write(
                ".claude/agents/aidlc-other-agent.md",
                "---\nname: aidlc-other-agent\ndisplay_name: Other\n---\n# Other\n",
            );
        }),
        ("new scope file", |p| {
            p.write(
                ".claude/scopes/feature.md",
                "---\nname: feature\n---\n# Feature\n",
            );
        }),
        ("new rule file", |p| {
            p.write("aidlc/spaces/default/memory/org.md", "# Org rules\n");
        }),
        ("hand-edited graph", |p| {
            let text = p.read(GRAPH);
            p.write(GRAPH, &text.replacen('[', "[ ", 1));
        }),
        ("deleted graph", |p| p.remove(GRAPH)),
        ("deleted grid", |p| p.remove(GRID)),
        ("corrupt fingerprint", |p| {
            p.write(FINGERPRINT, "not a fingerprint");
        }),
        ("truncated fingerprint", |p| {
            let text = p.read(FINGERPRINT);
            p.write(FINGERPRINT, &text[..text.len() / 2]);
        }),
        ("fingerprint body edited to claim other stamps", |p| {
            let text = p.read(FINGERPRINT);
            p.write(FINGERPRINT, &text.replace("\"size\":", "\"size\": "));
        }),
    ];
    for (name, change) in changes {
        let project = compiled_minimal();
        change(&project);
        let run = project.compile();
        assert!(
            compiled_for_real(&run),
            "{name}: expected a real compile, got:\n{}",
            run.stderr
        );
    }
}

#[test]
fn a_layout_override_or_another_folder_defeats_the_no_op() {
    let project = compiled_minimal();
    std::fs::create_dir_all(project.path("elsewhere")).unwrap();
    let overridden = project.run_with_env(&["compile"], &[("AIDLC_SCOPES_DIR", "elsewhere")]);
    assert!(compiled_for_real(&overridden), "{}", overridden.stderr);

    let copy = TestProject::empty();
    let status = std::process::Command::new("cp")
        .args(["-a", &format!("{}/.", project.root), copy.root.as_str()])
        .status()
        .unwrap();
    assert!(status.success());
    let in_copy = copy.compile();
    assert!(compiled_for_real(&in_copy), "{}", in_copy.stderr);
}

#[test]
fn a_failed_compile_never_leaves_a_record_that_hides_its_errors() {
    let project = compiled_minimal();
    project.write(FIRST_STAGE, "---\nslug: first-stage\n---\n");
    for _ in 0..2 {
        let run = project.compile();
        assert_eq!(run.status, 1, "{}", run.stderr);
        assert!(compiled_for_real(&run));
    }
}

#[test]
fn warnings_are_repeated_when_up_to_date() {
    let project = TestProject::minimal();
    project.write(".claude/sensors/Notes.md", "# notes\n");
    let first = project.compile();
    assert_eq!(first.status, 0, "{}", first.stderr);
    assert!(first.stderr.contains("Notes.md"), "{}", first.stderr);
    let second = project.compile();
    assert!(
        second.stderr.contains("up to date: nothing changed"),
        "{}",
        second.stderr
    );
    assert!(second.stderr.contains("(1 warning)"), "{}", second.stderr);
    let first_warning = first.stderr.split("compiled ").next().unwrap();
    let second_warning = second.stderr.split("up to date:").next().unwrap();
    assert_eq!(first_warning, second_warning);
}

/// `up_to_date::RACY_WINDOW_NS`: a stamp within it of the record's time is not trusted.
const RACY_WINDOW_NS: u64 = 2_000_000_000;

/// The fingerprint record's header line and JSON body.
fn record_parts(project: &TestProject) -> (String, serde_json::Value) {
    let text = project.read(FINGERPRINT);
    let (header, body) = text.split_once('\n').expect("a header line, then the body");
    (
        header.to_owned(),
        serde_json::from_str(body).expect("a JSON body"),
    )
}

/// The newest of a stamp's modification and change times, for every file in the record
/// (inputs and outputs), by path.
fn newest_stamps(body: &serde_json::Value) -> Vec<(String, u64)> {
    ["inputs", "outputs"]
        .iter()
        .flat_map(|list| body[list].as_array().cloned().unwrap_or_default())
        .map(|file| {
            let stat = &file["stamp"]["stat"];
            let newest = stat["modified_ns"]
                .as_u64()
                .unwrap()
                .max(stat["changed_ns"].as_u64().unwrap());
            (file["path"].as_str().unwrap().to_owned(), newest)
        })
        .collect()
}

/// Rewrite the record as if it had been written at `written_at_ns` (the body's time and the
/// header's checksum of the body), in place: the file's inode stays. This stands for the time
/// that passes between a compile and a later one without waiting for it; an inode change time
/// cannot be set back, so the record's time moves forward instead.
fn record_written_at(project: &TestProject, written_at_ns: u64) {
    let (header, mut body) = record_parts(project);
    body["written_at_ns"] = written_at_ns.into();
    let body_text = serde_json::to_string(&body).unwrap();
    let magic_and_format = header.rsplit_once(' ').expect("MAGIC FORMAT CHECKSUM").0;
    let checksum = blake3::hash(body_text.as_bytes()).to_hex();
    std::fs::write(
        project.path(FINGERPRINT),
        format!("{magic_and_format} {checksum}\n{body_text}"),
    )
    .unwrap();
}

/// The record as if written past the racy window of every stamp in it: `stat` alone is trusted.
fn record_written_past_the_racy_window(project: &TestProject) {
    let (_, body) = record_parts(project);
    let newest = newest_stamps(&body)
        .into_iter()
        .map(|(_, ns)| ns)
        .max()
        .unwrap();
    record_written_at(project, newest + RACY_WINDOW_NS + 1);
}

/// After the racy window has passed, the check trusts `stat` alone; an edit that keeps the
/// size and puts the modification time back is still caught through the inode change time.
#[test]
fn settled_stamps_are_trusted_and_a_restored_mtime_is_still_caught() {
    let project = compiled_minimal();
    let rehash = project.compile();
    assert!(was_up_to_date(&rehash), "{}", rehash.stderr);
    record_written_past_the_racy_window(&project);
    let settled = project.compile();
    assert!(was_up_to_date(&settled), "{}", settled.stderr);
    assert!(!settled.stderr.contains("re-hashed"), "{}", settled.stderr);

    let path = project.path(FIRST_STAGE);
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    edit_first_stage_prose(&project);
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(modified).unwrap();
    drop(file);
    let run = project.compile();
    assert!(compiled_for_real(&run), "{}", run.stderr);
}

/// What tells one version of the record file from another: its inode (a rewrite renames a new
/// file over it), its modification time and its bytes.
#[cfg(unix)]
fn record_file_state(project: &TestProject) -> (u64, std::time::SystemTime, String) {
    use std::os::unix::fs::MetadataExt as _;
    let metadata = std::fs::metadata(project.path(FINGERPRINT)).unwrap();
    (
        metadata.ino(),
        metadata.modified().unwrap(),
        project.read(FINGERPRINT),
    )
}

/// A forced compile that would record exactly what the record on disk says, apart from its
/// time, leaves the file alone once no stamp in it is within the racy window of its time; the
/// no-op check after it still trusts it, and still notices a later edit.
#[cfg(unix)]
#[test]
fn an_unchanged_forced_compile_leaves_a_settled_record_untouched() {
    let project = compiled_minimal();
    let first = record_file_state(&project);
    // The first record was written right after the outputs, so their stamps are racy
    // relative to it: the next forced compile rewrites it.
    let settling = project.run(&["compile", "--force"]);
    assert!(compiled_for_real(&settling), "{}", settling.stderr);
    assert_ne!(
        record_file_state(&project).0,
        first.0,
        "the racy record was rewritten"
    );
    record_written_past_the_racy_window(&project);
    let settled = record_file_state(&project);

    let forced = project.run(&["compile", "--force"]);
    assert!(
        compiled_for_real(&forced) && forced.status == 0,
        "{}",
        forced.stderr
    );
    assert_eq!(
        record_file_state(&project),
        settled,
        "the record was left alone"
    );

    let check = project.compile();
    assert!(was_up_to_date(&check), "{}", check.stderr);
    assert!(!check.stderr.contains("re-hashed"), "{}", check.stderr);
    edit_first_stage_prose(&project);
    let after_edit = project.compile();
    assert!(compiled_for_real(&after_edit), "{}", after_edit.stderr);
}

/// A forced compile rewrites a record that would say the same when an input in it was
/// modified within the racy window of the record's time, as every forced compile did before:
/// keeping the old time would keep that stamp from ever being trusted by `stat` alone, and
/// only a rewrite with the new time may trust it.
#[cfg(unix)]
#[test]
fn a_forced_compile_still_rewrites_a_record_with_a_racy_input() {
    let project = compiled_minimal();
    let graph_before = std::fs::metadata(project.path(GRAPH)).unwrap();
    edit_first_stage_prose(&project);
    let compiled = project.compile();
    assert!(compiled_for_real(&compiled), "{}", compiled.stderr);
    let graph_after = std::fs::metadata(project.path(GRAPH)).unwrap();
    assert_eq!(
        graph_before.modified().unwrap(),
        graph_after.modified().unwrap(),
        "a prose edit leaves the graph as it was"
    );
    // The record as if written just past the window of every stamp but the edited input's,
    // which is newer than all of them: that input alone is racy.
    let (_, body) = record_parts(&project);
    let stamps = newest_stamps(&body);
    let edited = stamps
        .iter()
        .find(|(path, _)| path == FIRST_STAGE)
        .unwrap()
        .1;
    let others = stamps
        .iter()
        .filter(|(path, _)| path != FIRST_STAGE)
        .map(|(_, ns)| *ns)
        .max()
        .unwrap();
    assert!(edited > others, "the edit is newer than every other stamp");
    record_written_at(&project, others + RACY_WINDOW_NS + 1);
    let recorded = record_file_state(&project);

    let forced = project.run(&["compile", "--force"]);
    assert!(
        compiled_for_real(&forced) && forced.status == 0,
        "{}",
        forced.stderr
    );
    let rewritten = record_file_state(&project);
    assert_ne!(rewritten.0, recorded.0, "the record was rewritten");
    assert_ne!(rewritten.2, recorded.2, "with a new time");
    let check = project.compile();
    assert!(was_up_to_date(&check), "{}", check.stderr);
}

/// A same-size edit of the first stage's prose: only its hash can tell it apart.
fn edit_first_stage_prose(project: &TestProject) {
    let text = project
        .read(FIRST_STAGE)
        .replace("Prose about", "Prose abouT");
    project.write(FIRST_STAGE, &text);
}
