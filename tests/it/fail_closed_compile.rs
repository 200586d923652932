//! Issue 10, the compile half: a gate-fired binding that can never fire is reported, manifests
//! are as strict at compile time as at fire time, a diagnostic far to the right of a long line
//! is drawn rather than panicking, and `compile --check` writes nothing.

use std::collections::BTreeMap;
use std::time::SystemTime;

use aidlc::compile::discover::Layout;
use aidlc::harness::Harness;
use camino::Utf8PathBuf;
use serde_json::Value;

use crate::support::{GRAPH, Run, TestProject, manifest, stage};

const FIRST: &str = ".claude/aidlc-common/stages/inception/first-stage.md";
const AGENT: &str = ".claude/agents/aidlc-demo-agent.md";

/// A manifest of a gate-fired sensor `id` with `severity` and `matches`.
fn gate_manifest(id: &str, severity: &str, matches: &str) -> String {
    format!(
        "---\nid: {id}\nkind: deterministic\ncommand: sh {id}.sh\ndefault_severity: {severity}\nfire_on: gate\ndescription: A gate sensor for tests\ncategory: demo\nmatches: \"{matches}\"\n---\n\n# {id}\n"
    )
}

/// A project with the demo agent and one stage `first-stage` (inception, producing
/// `first-stage-doc`) that imports `sensor_id`, whose manifest is `manifest_text`.
fn one_sensor_project(sensor_id: &str, manifest_text: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        AGENT,
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        &format!(".claude/sensors/aidlc-{sensor_id}.md"),
        manifest_text,
    );
    project.write(
        FIRST,
        &stage(
            "first-stage",
            "inception",
            "[]",
            &format!("[{sensor_id}]"),
            "",
        ),
    );
    project
}

/// The diagnostics of a `compile --format json` run, one JSON object each.
fn json_diagnostics(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn codes(diagnostics: &[Value]) -> Vec<(String, String)> {
    diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["severity"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// 1-based line and column of the first occurrence of `needle` in `text`.
fn position_of(text: &str, needle: &str) -> (u64, u64) {
    let offset = text.find(needle).unwrap();
    let line = text[..offset].matches('\n').count() + 1;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line as u64, column as u64)
}

// --- Item 1: a gate-fired binding that can never fire -----------------------------------------

#[test]
fn a_blocking_gate_sensor_whose_glob_misses_every_output_is_a_compile_error() {
    let manifest_text = gate_manifest("shape", "blocking", "**/*.ts");
    let project = one_sensor_project("shape", &manifest_text);
    let run = project.run(&["compile", "--format", "json"]);
    assert_eq!(run.status, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(!project.exists(GRAPH), "nothing is written on an error");
    let diagnostics = json_diagnostics(&run);
    assert_eq!(
        codes(&diagnostics),
        [("dead-sensor-binding".to_owned(), "error".to_owned())]
    );
    let dead = &diagnostics[0];
    assert_eq!(
        dead["message"],
        "blocking gate sensor \"shape\" can never fire for stage \"first-stage\": its matches \"**/*.ts\" matches none of the stage's declared outputs"
    );
    assert_eq!(dead["file"], FIRST);
    let stage_text = project.read(FIRST);
    let (line, column) = position_of(&stage_text, "shape]");
    assert_eq!(
        (&dead["line"], &dead["column"]),
        (&line.into(), &column.into())
    );
    assert_eq!(dead["related"][0]["file"], ".claude/sensors/aidlc-shape.md");
    let help = dead["help"].as_str().unwrap();
    assert!(
        help.contains("change `matches` in .claude/sensors/aidlc-shape.md")
            && help.contains(
                "aidlc/spaces/default/intents/260101-intent/inception/first-stage/first-stage-doc.md"
            )
            && help.contains("remove `shape` from this stage's `sensors:`"),
        "{help}"
    );

    // The human rendering points at the import and, as a note, at the manifest's `matches`.
    let human = project.compile();
    assert_eq!(human.status, 1);
    let (matches_line, matches_column) = position_of(&manifest_text, "\"**/*.ts\"");
    assert!(
        human.stderr.contains(&format!(
            "note: .claude/sensors/aidlc-shape.md:{matches_line}:{matches_column}: this glob matches none of"
        )),
        "{}",
        human.stderr
    );
}

#[test]
fn an_advisory_gate_sensor_whose_glob_misses_is_a_warning_and_still_compiles() {
    let project = one_sensor_project("shape", &gate_manifest("shape", "advisory", "**/*.ts"));
    let run = project.run(&["compile", "--format", "json"]);
    assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        codes(&json_diagnostics(&run)),
        [("dead-sensor-binding".to_owned(), "warning".to_owned())]
    );
    assert!(project.exists(GRAPH));
}

#[test]
fn a_write_fired_sensor_is_not_held_to_the_stage_outputs() {
    let linter = gate_manifest("code-lint", "blocking", "**/*.ts")
        .replace("fire_on: gate", "fire_on: write");
    let project = one_sensor_project("code-lint", &linter);
    let run = project.run(&["compile", "--format", "json"]);
    assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
    // No dead binding; only the warning that a write-fired sensor is advisory.
    assert_eq!(
        codes(&json_diagnostics(&run)),
        [("write-fired-blocking".to_owned(), "warning".to_owned())]
    );
}

#[test]
fn a_gate_sensor_matching_the_outputs_compiles_clean() {
    for glob in [
        "**/*.md",
        "**/intents/**",
        "aidlc/spaces/*/intents/*/inception/first-stage/*.md",
    ] {
        let project = one_sensor_project("shape", &gate_manifest("shape", "blocking", glob));
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, 0, "{glob}: {}\n{}", run.stdout, run.stderr);
        assert!(json_diagnostics(&run).is_empty(), "{glob}: {}", run.stdout);
    }
}

/// failure mode N2: `reverse-engineering` writes only under the space's `codekb/`, so the old
/// document glob never fires there.
#[test]
fn reverse_engineering_outputs_are_in_the_codekb_so_a_glob_without_it_is_dead() {
    for (glob, dead) in [
        ("**/{aidlc-docs,intents}/**", true),
        ("**/{aidlc-docs,intents,codekb}/**", false),
    ] {
        let project =
            one_sensor_project("doc-shape", &gate_manifest("doc-shape", "advisory", glob));
        project.remove(FIRST);
        project.write(
            ".claude/aidlc-common/stages/inception/reverse-engineering.md",
            &stage("reverse-engineering", "inception", "[]", "[doc-shape]", ""),
        );
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let expected: Vec<(String, String)> = if dead {
            vec![("dead-sensor-binding".to_owned(), "warning".to_owned())]
        } else {
            Vec::new()
        };
        assert_eq!(codes(&json_diagnostics(&run)), expected, "{glob}");
    }
}

#[test]
fn per_unit_outputs_are_under_construction_whatever_the_phase_says() {
    for (glob, dead) in [
        ("**/construction/*/unit-stage/*.md", false),
        ("**/construction/unit-stage/*.md", false),
        ("**/inception/**", true),
    ] {
        let project = one_sensor_project("shape", &gate_manifest("shape", "blocking", glob));
        project.remove(FIRST);
        project.write(
            ".claude/aidlc-common/stages/construction/unit-stage.md",
            &stage(
                "unit-stage",
                "construction",
                "[]",
                "[shape]",
                "for_each: unit-of-work\n",
            ),
        );
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, i32::from(dead), "{glob}: {}", run.stdout);
    }
}

#[test]
fn a_gate_sensor_on_a_stage_that_declares_no_outputs_never_fires() {
    let project = one_sensor_project("shape", &gate_manifest("shape", "blocking", "**/*.md"));
    project.write(
        FIRST,
        &stage("first-stage", "inception", "[]", "[shape]", "")
            .replace("produces:\n  - first-stage-doc\n", "produces: []\n"),
    );
    let run = project.run(&["compile", "--format", "json"]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let diagnostics = json_diagnostics(&run);
    assert_eq!(
        diagnostics[0]["message"],
        "blocking gate sensor \"shape\" can never fire for stage \"first-stage\": the stage declares no outputs for it to check"
    );
}

#[test]
fn the_default_framework_still_compiles_with_no_diagnostic() {
    let project = TestProject::default_framework();
    let layout = Layout::new(&project.root, Harness::Claude, &|_| None);
    let mut db = aidlc::compile::db::CompilerDatabase::default();
    let _inputs = aidlc::compile::discover::load_project(&mut db, &layout);
    let outcome = aidlc::compile::compile(&db);
    assert_eq!(outcome.diagnostics, [], "the default framework is clean");
    // Its gate-fired document sensors do fire on every stage that imports them: making one
    // blocking and pointing it away from the records and the codekb is caught everywhere.
    let sensor = ".claude/sensors/aidlc-required-sections.md";
    project.write(
        sensor,
        &project
            .read(sensor)
            .replace("**/{aidlc-docs,intents,codekb}/**", "**/aidlc-docs/**"),
    );
    let run = project.run(&["compile", "--format", "json"]);
    let dead: Vec<Value> = json_diagnostics(&run);
    assert_eq!(
        dead.len(),
        30,
        "every stage importing required-sections: {}",
        run.stdout
    );
}

// --- Item 17: manifests as strict at compile time as at fire time -----------------------------

#[test]
fn a_matches_that_is_not_a_glob_is_a_compile_error_with_its_span() {
    for glob in ["**/{x", "**/[x", "[z-a]"] {
        let manifest_text =
            manifest("demo-check", "").replace("\"**/*.md\"", &format!("\"{glob}\""));
        let project = TestProject::minimal();
        project.write(".claude/sensors/aidlc-demo-check.md", &manifest_text);
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, 1, "{glob}: {}", run.stdout);
        let diagnostics = json_diagnostics(&run);
        assert_eq!(diagnostics.len(), 1, "{glob}: {}", run.stdout);
        let problem = &diagnostics[0];
        assert_eq!(problem["code"], "invalid-field-value");
        assert!(
            problem["message"]
                .as_str()
                .unwrap()
                .starts_with("matches is not a valid glob: "),
            "{problem}"
        );
        let (line, column) = position_of(&manifest_text, &format!("\"{glob}\""));
        assert_eq!(
            (&problem["line"], &problem["column"]),
            (&line.into(), &column.into())
        );
    }
}

#[test]
fn a_quoted_timeout_is_a_compile_error() {
    for quoted in ["\"30\"", "'30'"] {
        let project = TestProject::minimal();
        project.write(
            ".claude/sensors/aidlc-demo-check.md",
            &manifest("demo-check", &format!("timeout_seconds: {quoted}\n")),
        );
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, 1, "{quoted}: {}", run.stdout);
        let diagnostics = json_diagnostics(&run);
        assert_eq!(
            diagnostics[0]["message"],
            format!("timeout_seconds must be a positive integer, not a quoted string (got \"30\")")
        );
    }
}

#[test]
fn an_empty_matches_is_dropped_as_if_omitted() {
    let project = TestProject::minimal();
    project.write(
        ".claude/sensors/aidlc-demo-check.md",
        &manifest("demo-check", "").replace("\"**/*.md\"", "\"\""),
    );
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    let entry = &graph[0]["sensors_applicable"][0];
    assert_eq!(entry["id"], "demo-check");
    assert!(entry.get("matches").is_none(), "{entry}");
}

/// `fire`, `list` and the gate load manifests with the compile's own rules, so an invalid glob
/// is refused before anything fires.
#[test]
fn the_live_registry_refuses_an_invalid_glob_before_any_fire() {
    let project = TestProject::minimal();
    assert_eq!(project.compile().status, 0);
    project.write(
        ".claude/sensors/aidlc-demo-check.md",
        &manifest("demo-check", "").replace("\"**/*.md\"", "\"**/{x\""),
    );
    project.write("notes.md", "# Notes\n");
    for (args, expected_status) in [
        (vec!["engine", "sensor", "list"], 1),
        (vec!["engine", "sensor", "describe", "demo-check"], 1),
        (
            vec![
                "engine",
                "sensor",
                "fire",
                "demo-check",
                "--stage",
                "first-stage",
                "--output-path",
                "notes.md",
            ],
            2,
        ),
    ] {
        let run = project.run(&args);
        assert_eq!(run.status, expected_status, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("matches is not a valid glob"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

// --- Item 11: a diagnostic past column 65,535 ------------------------------------------------

#[test]
fn a_diagnostic_past_column_65535_is_drawn_cut_around_its_span() {
    let project = TestProject::minimal();
    assert_eq!(project.compile().status, 0);
    let sensor = ".claude/sensors/aidlc-demo-check.md";
    let padding = "z".repeat(70_000);
    let broken = manifest("demo-check", "").replace(
        "category: demo",
        &format!("category: demo {padding} # a comment"),
    );
    project.write(sensor, &broken);
    project.write(
        "aidlc/spaces/default/intents/261130-demo/aidlc-state.md",
        "- **Current Stage**: first-stage\n",
    );
    project.write("notes.md", "# Notes\n");
    let (line, column) = position_of(&broken, "# a comment");
    let header = format!("[{sensor}:{line}:{column}]");
    for args in [
        vec!["compile"],
        vec!["engine", "sensor", "list"],
        vec!["engine", "sensor", "describe", "demo-check"],
        vec!["gate", "check"],
        vec!["engine", "gate", "start", "first-stage"],
        vec![
            "engine",
            "sensor",
            "fire",
            "demo-check",
            "--stage",
            "first-stage",
            "--output-path",
            "notes.md",
        ],
    ] {
        let run = project.run(&args);
        assert!(
            run.status == 1 || run.status == 2,
            "{args:?} exited {}: {}",
            run.status,
            run.stderr
        );
        assert!(run.stderr.contains(&header), "{args:?}: {}", run.stderr);
        let cut_line = run
            .stderr
            .lines()
            .find(|text| text.contains("# a comment"))
            .unwrap_or_else(|| panic!("{args:?}: {}", run.stderr));
        assert!(
            cut_line.contains("…zzz") && cut_line.chars().count() < 200,
            "{args:?}: the line is shown as a window: {cut_line}"
        );
        // The underline below the window starts under the `#` and spans `# a comment`.
        let lines: Vec<&str> = run.stderr.lines().collect();
        let cut_index = lines.iter().position(|text| *text == cut_line).unwrap();
        let underline = lines[cut_index + 1];
        let hash_column = cut_line.chars().position(|c| c == '#').unwrap();
        let underline_start = underline.chars().position(|c| c == '─').unwrap();
        let underline_len = underline.chars().filter(|c| matches!(c, '─' | '┬')).count();
        assert_eq!(
            (underline_start, underline_len),
            (hash_column, "# a comment".len()),
            "{cut_line}\n{underline}"
        );
    }
}

// --- Item 15: `compile --check` writes nothing -----------------------------------------------

/// Every file under the project with its bytes and modification time.
fn snapshot_files(root: &camino::Utf8Path) -> BTreeMap<Utf8PathBuf, (Vec<u8>, SystemTime)> {
    let mut files = BTreeMap::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in folder.read_dir_utf8().unwrap() {
            let entry = entry.unwrap();
            let path = entry.path().to_owned();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            if metadata.is_dir() {
                folders.push(path);
            } else {
                files.insert(
                    path.clone(),
                    (std::fs::read(&path).unwrap(), metadata.modified().unwrap()),
                );
            }
        }
    }
    files
}

/// How a case changes a freshly compiled project before `compile --check` runs.
type Prepare = fn(&TestProject);

fn leave_as_compiled(_: &TestProject) {}

fn drift_a_stage(project: &TestProject) {
    project.write(
        FIRST,
        &project
            .read(FIRST)
            .replace("condition: Always runs", "condition: Sometimes"),
    );
}

fn remove_the_record(project: &TestProject) {
    project.remove(".claude/tools/data/.aidlc-compile-fingerprint");
}

fn remove_the_record_and_drift(project: &TestProject) {
    remove_the_record(project);
    drift_a_stage(project);
}

#[test]
fn compile_check_writes_nothing_with_or_without_drift_or_a_record() {
    let cases: [(&str, Prepare, i32); 4] = [
        ("a record, no drift", leave_as_compiled, 0),
        ("a record, drift", drift_a_stage, 1),
        ("no record, no drift", remove_the_record, 0),
        ("no record, drift", remove_the_record_and_drift, 1),
    ];
    for (name, prepare, expected_status) in cases {
        let project = TestProject::minimal();
        assert_eq!(project.compile().status, 0);
        prepare(&project);
        let temp = tempfile::tempdir().unwrap();
        let before = snapshot_files(&project.root);
        // Straight after the compile every stamp is within the racy window, which is when a
        // check used to hash the files and rewrite the record.
        let run = project.run_with_env(
            &["compile", "--check"],
            &[("TMPDIR", temp.path().to_str().unwrap())],
        );
        assert_eq!(run.status, expected_status, "{name}: {}", run.stderr);
        let after = snapshot_files(&project.root);
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>(),
            "{name}: no file is created or removed"
        );
        for (path, (bytes, modified)) in &before {
            let (bytes_after, modified_after) = &after[path];
            assert!(
                bytes == bytes_after && modified == modified_after,
                "{name}: {path} was rewritten"
            );
        }
        assert_eq!(
            std::fs::read_dir(temp.path()).unwrap().count(),
            0,
            "{name}: no lock folder or temporary file is left in TMPDIR"
        );
    }
}
