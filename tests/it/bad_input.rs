//! Broken input: each case gets a clear diagnostic (snapshotted), exit 1, no panic, and the
//! graph compiled before the breakage stays byte for byte on disk.

use crate::support::{GRAPH, TestProject, manifest, stage};

const SENSOR: &str = ".claude/sensors/aidlc-demo-check.md";
const FIRST: &str = ".claude/aidlc-common/stages/inception/first-stage.md";

/// A minimal project that has already compiled once.
fn compiled() -> TestProject {
    let project = TestProject::minimal();
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    project
}

/// Compile, expect failure with the previous graph untouched, return the scrubbed stderr.
fn failing_compile(project: &TestProject) -> String {
    let before = project.read(GRAPH);
    let run = project.compile();
    assert_eq!(run.status, 1, "expected compile errors:\n{}", run.stderr);
    assert!(!run.stderr.contains("internal error"), "{}", run.stderr);
    assert_eq!(
        project.read(GRAPH),
        before,
        "the previous graph must stay untouched"
    );
    project.scrub(&run.stderr)
}

/// Write one file into a compiled project and return the failing compile's output.
fn file_case(relative: &str, contents: &str) -> String {
    let project = compiled();
    project.write(relative, contents);
    failing_compile(&project)
}

fn sensor_case(extra_or_replacement: &str) -> String {
    let project = compiled();
    project.write(SENSOR, extra_or_replacement);
    failing_compile(&project)
}

#[test]
fn manifest_missing_fields_and_bad_enums() {
    let text = "---\nid: demo-check\nkind: llm\ndefault_severity: critical\nfire_on: always\n---\n";
    insta::assert_snapshot!(sensor_case(text));
}

#[test]
fn manifest_id_must_match_file_name() {
    insta::assert_snapshot!(sensor_case(&manifest("demo", "")));
}

#[test]
fn manifest_timeouts_must_be_positive_integers() {
    for bad in ["300s", "0", "-5", "1.5"] {
        let output = sensor_case(&manifest(
            "demo-check",
            &format!("timeout_seconds: {bad}\n"),
        ));
        assert!(
            output.contains("timeout_seconds must be a positive integer"),
            "{bad}: {output}"
        );
    }
    insta::assert_snapshot!(sensor_case(&manifest(
        "demo-check",
        "timeout_seconds: 300s\n"
    )));
}

#[test]
fn comment_after_a_value_is_refused() {
    let text = manifest("demo-check", "")
        .replace("kind: deterministic", "kind: deterministic # the only kind");
    insta::assert_snapshot!(sensor_case(&text));
}

#[test]
fn empty_value_does_not_swallow_the_next_line() {
    let text =
        manifest("demo-check", "").replace("description: Checks a demo property", "description:");
    insta::assert_snapshot!(sensor_case(&text));
}

#[test]
fn duplicate_key_names_both_lines() {
    insta::assert_snapshot!(sensor_case(&manifest(
        "demo-check",
        "kind: deterministic\n"
    )));
}

#[test]
fn duplicate_sensor_ids_name_both_files() {
    insta::assert_snapshot!(file_case(
        ".claude/sensors/aidlc-other-check.md",
        &manifest("demo-check", ""),
    ));
}

#[test]
fn missing_frontmatter() {
    insta::assert_snapshot!(sensor_case("# demo-check\n\nNo frontmatter here.\n"));
}

#[test]
fn unreadable_inputs_are_diagnosed() {
    let project = compiled();
    project.write_bytes(SENSOR, b"---\nid: demo-check\ndescription: caf\xe9\n---\n");
    let invalid_utf8 = failing_compile(&project);
    assert!(invalid_utf8.contains("invalid-utf8"), "{invalid_utf8}");
    project.write_bytes(SENSOR, b"\x7fELF\x00\x00\x01binary");
    let binary = failing_compile(&project);
    assert!(binary.contains("binary-file"), "{binary}");
    let mut huge = manifest("demo-check", "");
    huge.push_str(&"x".repeat(10 * 1024 * 1024));
    project.write(SENSOR, &huge);
    let too_large = failing_compile(&project);
    assert!(too_large.contains("file-too-large"), "{too_large}");
    project.remove(SENSOR);
    std::os::unix::fs::symlink(project.path("nowhere.md"), project.path(SENSOR)).unwrap();
    let unreadable = failing_compile(&project);
    assert!(unreadable.contains("unreadable-file"), "{unreadable}");
}

#[test]
fn near_miss_sensor_files_are_warned_not_loaded() {
    let project = compiled();
    project.write(".claude/sensors/lint-check.md", &manifest("lint-check", ""));
    project.write(".claude/sensors/aidlc-Upper.md", &manifest("upper", ""));
    project.write(
        ".claude/sensors/nested/aidlc-deep.md",
        &manifest("deep", ""),
    );
    project.write(".claude/sensors/aidlc-yaml.yaml", &manifest("yaml", ""));
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    insta::assert_snapshot!(project.scrub(&run.stderr));
}

#[test]
fn unknown_sensor_import_suggests_the_closest_id() {
    insta::assert_snapshot!(file_case(
        FIRST,
        &stage("first-stage", "inception", "[]", "[demo-chek]", ""),
    ));
}

#[test]
fn reserved_renamed_and_unknown_stage_keys() {
    insta::assert_snapshot!(file_case(
        FIRST,
        &stage(
            "first-stage",
            "inception",
            "[]",
            "[]",
            "retry: 3\nbundle: x\nrules_in_context: []\nreveiwer: a\n",
        ),
    ));
}

#[test]
fn stage_field_shapes() {
    let project = compiled();
    let text = stage(
        "first-stage",
        "design",
        "[]",
        "[]",
        "reviewer_max_iterations: 0\nworkspace_requires: yes\n",
    )
    .replace("execution: ALWAYS", "execution: sometimes")
    .replace(
        "lead_agent: aidlc-demo-agent",
        "lead_agent: aidlc-demo-agnet",
    );
    project.write(FIRST, &text);
    insta::assert_snapshot!(failing_compile(&project));
}

#[test]
fn unknown_agent_is_refused() {
    insta::assert_snapshot!(file_case(
        FIRST,
        &stage("first-stage", "inception", "[]", "[]", "").replace(
            "lead_agent: aidlc-demo-agent",
            "lead_agent: aidlc-demo-agnet",
        ),
    ));
}

#[test]
fn requires_stage_cycle_among_new_stages() {
    let project = TestProject::minimal();
    project.write(
        FIRST,
        &stage("first-stage", "inception", "[second-stage]", "[]", ""),
    );
    let run = project.compile();
    assert_eq!(run.status, 1);
    assert!(!project.exists(GRAPH));
    insta::assert_snapshot!(project.scrub(&run.stderr));
}

#[test]
fn stage_in_an_unknown_phase_folder() {
    insta::assert_snapshot!(file_case(
        ".claude/aidlc-common/stages/design/third-stage.md",
        &stage("third-stage", "inception", "[]", "[]", ""),
    ));
}

#[test]
fn slug_must_match_file_stem_and_be_unique() {
    insta::assert_snapshot!(file_case(
        ".claude/aidlc-common/stages/inception/zz-copy.md",
        &stage("first-stage", "inception", "[]", "[]", ""),
    ));
}

#[test]
fn unknown_requires_stage_and_number_invariant() {
    insta::assert_snapshot!(file_case(
        FIRST,
        &stage(
            "first-stage",
            "inception",
            "[second-stage, no-such-stage]",
            "[]",
            "",
        ),
    ));
}

#[test]
fn duplicate_producer_of_a_consumed_artifact() {
    let project = compiled();
    let producer = stage("third-stage", "inception", "[]", "[]", "")
        .replace("  - third-stage-doc", "  - first-stage-doc");
    project.write(
        ".claude/aidlc-common/stages/inception/third-stage.md",
        &producer,
    );
    let consumer = stage("second-stage", "inception", "[first-stage]", "[]", "").replace(
        "consumes: []",
        "consumes:\n  - artifact: first-stage-doc\n    required: true",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/second-stage.md",
        &consumer,
    );
    insta::assert_snapshot!(failing_compile(&project));
}

#[test]
fn no_harness_folder_is_an_environment_error() {
    let project = TestProject::empty();
    let run = project.run(&["compile", "--project-dir", "."]);
    assert_eq!(run.status, 2);
    insta::assert_snapshot!(project.scrub(&run.stderr));
}

#[test]
fn many_problems_are_reported_in_one_run() {
    let project = compiled();
    project.write(SENSOR, "---\nid: demo-check\nkind: llm\n---\n");
    project.write(
        FIRST,
        &stage("first-stage", "inception", "[]", "[]", "retry: 1\n"),
    );
    let output = failing_compile(&project);
    assert!(output.contains("compile failed with 5 errors"), "{output}");
}

#[test]
fn plugin_ownership_rules() {
    for (plugin, expected) in [
        (
            "aidlc",
            "declares plugin \"aidlc\"; omit plugin for core stages.",
        ),
        ("aidlc-extra", "the \"aidlc-\" prefix is reserved for core"),
        (
            "other",
            "plugin-owned stage slugs must start with \"other-\"",
        ),
    ] {
        let project = compiled();
        project.write(
            FIRST,
            &stage(
                "first-stage",
                "inception",
                "[]",
                "[]",
                &format!("plugin: {plugin}\n"),
            ),
        );
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, 1, "{}", run.stderr);
        let diagnostic: serde_json::Value =
            serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
        assert_eq!(diagnostic["code"], "invalid-plugin-field");
        assert!(
            diagnostic["message"].as_str().unwrap().contains(expected),
            "{plugin}: {diagnostic}"
        );
    }
}

// --- Inputs that are not bounded regular files ------------------------------------------------

/// A FIFO nobody writes at `relative` in `project` (an open for reading would wait forever).
fn fifo_at(project: &TestProject, relative: &str) {
    let path = project.path(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    let made = std::process::Command::new("mkfifo")
        .arg(path.as_str())
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {path}");
}

/// Make the file at `path` a sparse 1 GiB file: far past every input limit, written in no time.
fn oversized(path: &camino::Utf8Path) {
    std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
}

/// What a run said, on either stream.
fn said(run: &crate::support::Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

#[test]
fn a_fifo_lock_file_is_refused_at_once_by_every_command_that_reads_it() {
    let project = TestProject::default_framework();
    fifo_at(&project, "aidlc.lock.json");
    for args in [
        &["doctor"][..],
        &["plugin", "list"],
        &["plugin", "sync"],
        &["sensors"],
    ] {
        let run = project.run_watched(args, &[], None);
        let output = said(&run);
        assert!(!output.contains("panicked"), "{args:?}: {output}");
        assert!(
            output.contains("aidlc.lock.json") && output.contains("FIFO"),
            "{args:?} names the lock file and what it is: {output}"
        );
    }
}

#[test]
fn an_oversized_lock_file_is_refused_by_its_size_by_every_command_that_reads_it() {
    let project = TestProject::default_framework();
    oversized(&project.path("aidlc.lock.json"));
    for args in [
        &["doctor"][..],
        &["plugin", "list"],
        &["plugin", "sync"],
        &["sensors"],
    ] {
        let run = project.run_watched(args, &[], None);
        let output = said(&run);
        assert!(
            output.contains("aidlc.lock.json") && output.contains("1073741824 bytes"),
            "{args:?} names the lock file and its size: {output}"
        );
    }
}

#[test]
fn a_fifo_journal_manifest_is_refused_at_once_by_plugin_sync() {
    let project = TestProject::default_framework();
    fifo_at(&project, ".aidlc-plugin-journal/manifest.json");
    let run = project.run_watched(&["plugin", "sync"], &[], None);
    let output = said(&run);
    assert_ne!(run.status, 0, "{output}");
    assert!(
        output.contains("manifest.json") && output.contains("FIFO"),
        "{output}"
    );
}

#[test]
fn a_fifo_harness_json_is_refused_at_once_by_plugin_list() {
    let project = TestProject::default_framework();
    fifo_at(&project, ".claude/tools/data/harness.json");
    let run = project.run_watched(&["plugin", "list"], &[], None);
    let output = said(&run);
    assert_ne!(run.status, 0, "{output}");
    assert!(
        output.contains("harness.json") && output.contains("FIFO"),
        "{output}"
    );
}

#[test]
fn an_oversized_plugin_file_is_refused_by_its_size_before_it_is_read() {
    let shelf = crate::plugins::PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let notes = root.join("knowledge/acme-helper-agent/notes.md");

    // Composed while small, then grown at its source: `compile` and `doctor` read the source.
    let project = TestProject::default_framework();
    let added = project.run_watched(&["plugin", "add", root.as_str()], &[], None);
    assert_eq!(added.status, 0, "{}", said(&added));
    oversized(&notes);
    for args in [&["compile"][..], &["doctor"]] {
        let run = project.run_watched(args, &[], None);
        let output = said(&run);
        assert!(
            output.contains("notes.md") && output.contains("1073741824 bytes"),
            "{args:?} names the oversized plugin file: {output}"
        );
    }

    // Added while oversized: refused, naming the file.
    let fresh = TestProject::default_framework();
    let refused = fresh.run_watched(&["plugin", "add", root.as_str()], &[], None);
    let output = said(&refused);
    assert_ne!(refused.status, 0, "{output}");
    assert!(
        output.contains("notes.md") && output.contains("1073741824 bytes"),
        "{output}"
    );
    assert!(!fresh.exists("aidlc.lock.json"), "{output}");
}

#[test]
fn a_fifo_or_oversized_settings_file_is_refused_at_once_by_hook_install_and_doctor() {
    for make in [
        (|project: &TestProject| fifo_at(project, ".claude/settings.json")) as fn(&TestProject),
        |project: &TestProject| {
            project.write(".claude/settings.json", "{}");
            oversized(&project.path(".claude/settings.json"));
        },
    ] {
        let project = TestProject::one_stage();
        make(&project);
        let installed = project.run_watched(&["hook", "install"], &[], None);
        let output = said(&installed);
        assert_ne!(installed.status, 0, "{output}");
        assert!(output.contains("settings.json"), "{output}");
        let doctor = project.run_watched(&["doctor"], &[], None);
        let output = said(&doctor);
        assert!(output.contains("settings.json"), "{output}");
    }
}
