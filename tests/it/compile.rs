//! `aidlc init` and `aidlc compile` on the default framework and small projects.

use std::collections::BTreeMap;
use std::time::SystemTime;

use aidlc::compile::discover::Layout;
use aidlc::harness::Harness;
use camino::Utf8PathBuf;
use serde_json::Value;

use crate::support::scenario_project::{self as scenario, PASS, SHAPE, STAGE, STAGE_FILE};
use crate::support::{GRAPH, GRID, Run, TestProject, manifest, stage};

fn graph_nodes(project: &TestProject) -> Vec<serde_json::Value> {
    serde_json::from_str(&project.read(GRAPH)).expect("graph is JSON")
}

/// The seed's per-stage sensor matrix (33 framework stages).
fn seed_matrix(slug: &str) -> Vec<&'static str> {
    const DOCS: [&str; 2] = ["required-sections", "upstream-coverage"];
    match slug {
        "workspace-scaffold" | "workspace-detection" | "state-init" => vec![],
        "intent-capture" => vec!["claim-sources", "required-sections", "upstream-coverage"],
        "user-stories" | "domain-design" | "units-generation" => {
            vec!["required-sections", "upstream-coverage", "traceability"]
        }
        "build-and-test" => vec!["required-sections", "upstream-coverage", "type-check"],
        "ci-pipeline" => vec![
            "required-sections",
            "upstream-coverage",
            "linter",
            "type-check",
        ],
        "functional-design" | "infrastructure-design" | "nfr-design" | "nfr-requirements" => {
            vec![
                "required-sections",
                "upstream-coverage",
                "linter",
                "type-check",
                "traceability",
            ]
        }
        "code-generation" => vec!["required-sections", "traceability"],
        _ => DOCS.to_vec(),
    }
}

#[test]
fn init_then_compile_gives_the_seed_matrix() {
    let project = TestProject::empty();
    let init = project.run(&["init", "demo"]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    let run = project.run(&["compile", "--project-dir", "demo"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("compiled 33 stages and 6 sensors"),
        "{}",
        run.stderr
    );
    let nodes: Vec<serde_json::Value> =
        serde_json::from_str(&project.read("demo/.claude/tools/data/stage-graph.json")).unwrap();
    assert_eq!(nodes.len(), 33);
    for node in &nodes {
        let slug = node["slug"].as_str().unwrap();
        let ids: Vec<&str> = node["sensors_applicable"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, seed_matrix(slug), "{slug}");
    }
    let numbers: Vec<&str> = nodes
        .iter()
        .map(|node| node["number"].as_str().unwrap())
        .collect();
    assert_eq!(&numbers[..5], ["0.1", "0.2", "0.3", "1.1", "1.2"]);
    assert_eq!(numbers[32], "4.7");
}

#[test]
fn sensors_applicable_entries_have_the_gate_shape() {
    let project = TestProject::default_framework();
    assert_eq!(project.compile().status, 0);
    let nodes = graph_nodes(&project);
    let intent = nodes
        .iter()
        .find(|node| node["slug"] == "intent-capture")
        .unwrap();
    let entry = serde_json::to_string(&intent["sensors_applicable"][0]).unwrap();
    assert_eq!(
        entry,
        r#"{"id":"claim-sources","path":".claude/sensors/aidlc-claim-sources.md","fire_on":"gate","default_severity":"advisory","category":"document-provenance","matches":"**/{aidlc-docs,intents}/**"}"#
    );
    let keys: Vec<&String> = intent.as_object().unwrap().keys().collect();
    insta::assert_debug_snapshot!("intent_capture_keys", keys);
}

#[test]
fn graph_and_grid_bytes_are_canonical_and_stable() {
    let project = TestProject::default_framework();
    assert_eq!(project.compile().status, 0);
    let graph = project.read(GRAPH);
    let grid = project.read(GRID);
    assert!(graph.starts_with("[\n  {\n    \"slug\": \"workspace-scaffold\",\n"));
    assert!(graph.ends_with("\n  }\n]\n"));
    let reparsed: serde_json::Value = serde_json::from_str(&graph).unwrap();
    assert_eq!(
        format!("{}\n", serde_json::to_string_pretty(&reparsed).unwrap()),
        graph
    );
    assert!(grid.starts_with(
        "{\n  \"bugfix\": {\n    \"stages\": {\n      \"workspace-scaffold\": \"EXECUTE\","
    ));
    let second = project.compile();
    assert_eq!(second.status, 0);
    assert!(second.stderr.contains("up to date"), "{}", second.stderr);
    assert_eq!(project.read(GRAPH), graph);
    assert_eq!(project.read(GRID), grid);
}

#[test]
fn output_does_not_depend_on_file_creation_order_or_threads() {
    let forward = TestProject::default_framework();
    assert_eq!(forward.compile().status, 0);
    let reversed = TestProject::empty();
    let mut files: Vec<_> = aidlc::compile::framework::DEFAULT_FRAMEWORK
        .iter()
        .collect();
    files.reverse();
    for file in files {
        reversed.write(
            file.project_path(aidlc::harness::Harness::Claude).as_str(),
            file.contents,
        );
    }
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aidlc"));
    let status = command
        .args(["compile", "--project-dir", reversed.root.as_str()])
        .env("RAYON_NUM_THREADS", "1")
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(reversed.read(GRAPH), forward.read(GRAPH));
    assert_eq!(reversed.read(GRID), forward.read(GRID));
}

#[test]
fn check_writes_nothing_and_names_changed_stages() {
    let project = TestProject::default_framework();
    let missing = project.run(&["compile", "--check"]);
    assert_eq!(missing.status, 1);
    assert!(!project.exists(GRAPH));
    assert_eq!(project.compile().status, 0);
    assert_eq!(project.run(&["compile", "--check"]).status, 0);
    let stage_path = ".claude/aidlc-common/stages/inception/requirements-analysis.md";
    let edited = project
        .read(stage_path)
        .replacen("condition: ", "condition: Edited. ", 1);
    project.write(stage_path, &edited);
    let before = project.read(GRAPH);
    let run = project.run(&["compile", "--check"]);
    assert_eq!(run.status, 1);
    assert_eq!(project.read(GRAPH), before);
    insta::assert_snapshot!("check_names_changed_stage", project.scrub(&run.stderr));
}

#[test]
fn existing_numbers_and_names_are_pinned() {
    let project = TestProject::minimal();
    assert_eq!(project.compile().status, 0);
    let graph = project
        .read(GRAPH)
        .replace("\"number\": \"2.2\"", "\"number\": \"2.7\"")
        .replace("\"name\": \"First Stage\"", "\"name\": \"The First\"");
    project.write(GRAPH, &graph);
    project.write(
        ".claude/aidlc-common/stages/inception/third-stage.md",
        &stage("third-stage", "inception", "[]", "[]", ""),
    );
    assert_eq!(project.compile().status, 0);
    let nodes = graph_nodes(&project);
    let summary: Vec<String> = nodes
        .iter()
        .map(|n| format!("{} {} {}", n["number"], n["slug"], n["name"]))
        .collect();
    assert_eq!(
        summary,
        [
            "\"2.1\" \"first-stage\" \"The First\"",
            "\"2.7\" \"second-stage\" \"Second Stage\"",
            "\"2.8\" \"third-stage\" \"Third Stage\""
        ]
    );
}

#[test]
fn json_and_github_formats() {
    let project = TestProject::minimal();
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", "inception", "[]", "[demo-chek]", ""),
    );
    let json = project.run(&["compile", "--format", "json"]);
    assert_eq!(json.status, 1);
    let lines: Vec<serde_json::Value> = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["code"], "unknown-sensor-import");
    assert_eq!(
        lines[0]["file"],
        ".claude/aidlc-common/stages/inception/first-stage.md"
    );
    assert_eq!(
        (lines[0]["line"].as_u64(), lines[0]["column"].as_u64()),
        (Some(13), Some(11))
    );
    let github = project.run(&["compile", "--format", "github"]);
    assert_eq!(github.status, 1);
    insta::assert_snapshot!("github_annotation", github.stdout);
}

#[test]
fn harness_choice_changes_sensor_paths() {
    let project = TestProject::empty();
    assert_eq!(project.run(&["init", ".", "--harness", "codex"]).status, 0);
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let graph = project.read(".codex/tools/data/stage-graph.json");
    assert!(graph.contains("\"path\": \".codex/sensors/aidlc-linter.md\""));
    assert!(!graph.contains(".claude/"));
}

#[test]
fn project_folder_comes_from_env_or_an_ancestor() {
    let project = TestProject::minimal();
    std::fs::create_dir_all(project.path("deep/inside")).unwrap();
    let from_ancestor = project.run_in(&project.path("deep/inside"), &["compile"]);
    assert_eq!(from_ancestor.status, 0, "{}", from_ancestor.stderr);
    let outside = TestProject::empty();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aidlc"));
    let output = command
        .arg("compile")
        .current_dir(&outside.root)
        .env("AIDLC_PROJECT_DIR", project.root.as_str())
        .output()
        .unwrap();
    assert!(output.status.success());
    let none = outside.compile();
    assert_eq!(none.status, 2);
    insta::assert_snapshot!("no_project_found", outside.scrub(&none.stderr));
}

#[test]
fn init_never_overwrites_without_force() {
    let project = TestProject::default_framework();
    let path = ".claude/sensors/aidlc-linter.md";
    project.write(path, &manifest("linter", "timeout_seconds: 60\n"));
    let run = project.run(&["init", "."]);
    assert_eq!(run.status, 0);
    assert!(run.stderr.contains("1 skipped"), "{}", run.stderr);
    assert!(project.read(path).contains("timeout_seconds: 60"));
    assert_eq!(project.run(&["init", ".", "--force"]).status, 0);
    assert!(project.read(path).contains("timeout_seconds: 1200"));
}

#[test]
fn empty_sensors_folder_is_an_empty_registry() {
    let project = TestProject::minimal();
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", "inception", "[]", "[]", ""),
    );
    project.remove(".claude/sensors");
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("0 sensors"));
}

#[test]
fn help_explains_every_command() {
    let project = TestProject::empty();
    for args in [&["--help"][..], &["compile", "--help"], &["init", "--help"]] {
        let run = project.run(args);
        assert_eq!(run.status, 0);
        assert!(run.stdout.contains("Usage: aidlc"), "{}", run.stdout);
    }
    let bad = project.run(&["compile", "--format", "xml"]);
    assert_eq!(bad.status, 2);
}

/// The outputs grow with the project (about 1.7 KB per stage): reading an existing graph back
/// must not hit the 4 MiB limit meant for hand-written files.
#[test]
fn an_existing_graph_larger_than_the_input_limit_is_read() {
    let project = TestProject::minimal();
    let padding = " ".repeat(5 * 1024 * 1024);
    project.write(GRAPH, &format!("[{padding}]\n"));
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(project.read(GRAPH).len() < 10_000);
}

/// Numbers are pinned from an existing graph even when some of its nodes are odd (not
/// objects, or with a non-string slug): those nodes are skipped, the others still pin.
#[test]
fn pinned_numbers_survive_odd_nodes_in_the_existing_graph() {
    for odd in ["5", "{\"slug\": 3}", "{\"slug\": \"x\", \"slug\": \"y\"}"] {
        let project = TestProject::minimal();
        project.write(
            GRAPH,
            &format!("[{odd}, {{\"slug\": \"first-stage\", \"number\": \"1.7\", \"name\": \"Pinned\"}}]\n"),
        );
        let run = project.compile();
        assert_eq!(run.status, 0, "{odd}: {}", run.stderr);
        let nodes = graph_nodes(&project);
        let first = nodes.iter().find(|n| n["slug"] == "first-stage").unwrap();
        assert_eq!(
            (first["number"].as_str(), first["name"].as_str()),
            (Some("1.7"), Some("Pinned")),
            "{odd}"
        );
    }
}

/// A stage file discovery skips is a warning naming the path that would load
/// it, and a new one defeats "up to date" (its path is in the fingerprint).
#[test]
fn stage_files_discovery_skips_are_warned_with_the_path_that_loads_them() {
    let project = TestProject::minimal();
    let first = project.compile();
    assert_eq!(first.status, 0, "{}", first.stderr);
    let body = crate::support::stage("lost-stage", "inception", "[]", "[]", "");
    let near_misses = [
        (
            ".claude/aidlc-common/stages/lost-stage.md",
            "is not in a phase folder",
            ".claude/aidlc-common/stages/<phase>/lost-stage.md",
        ),
        (
            ".claude/aidlc-common/stages/inception/lost-stage.markdown",
            "does not end in `.md`",
            "rename it to .claude/aidlc-common/stages/inception/lost-stage.md",
        ),
        (
            ".claude/aidlc-common/stages/inception/drafts/lost-stage.md",
            "is nested below its phase folder",
            "move it to .claude/aidlc-common/stages/inception/lost-stage.md",
        ),
    ];
    for (path, _, _) in near_misses {
        project.write(path, &body);
    }
    project.write(".claude/aidlc-common/stages/README.md", "# Stages\n");
    let compiled = project.run(&["compile", "--format", "json"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let warnings: Vec<serde_json::Value> = compiled
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(warnings.len(), 3, "{}", compiled.stdout);
    for (path, reason, help) in near_misses {
        let warning = warnings
            .iter()
            .find(|warning| warning["file"] == path)
            .unwrap_or_else(|| panic!("{path} is not reported: {}", compiled.stdout));
        assert_eq!(warning["code"], "skipped-stage-file", "{warning}");
        assert_eq!(warning["severity"], "warning", "{warning}");
        assert!(
            warning["message"].as_str().unwrap().contains(reason),
            "{warning}"
        );
        assert!(
            warning["help"].as_str().unwrap().contains(help),
            "{warning}"
        );
    }
    let graph = project.read(crate::support::GRAPH);
    assert!(
        !graph.contains("lost-stage"),
        "skipped files are not compiled"
    );
}

/// A project of fewer files than the thread pool is worth but at least
/// `HELPER_THREAD_THRESHOLD` stage files is compiled by `load_and_compile_once` (`aidlc
/// compile`'s path) on two threads: a scoped helper reads half the files, checks half the
/// stages and writes the graph. The outcome, diagnostics and their order included, is the one
/// the memoised queries give on one thread, with the same inputs and stamps. Shown on a
/// synthetic project of 40 stages with two broken stages added, one in each half of the list.
#[test]
fn a_compile_with_a_helper_thread_gives_the_one_thread_outcome() {
    use aidlc::compile::db::CompilerDatabase;
    use aidlc::compile::discover::Layout;
    use aidlc::harness::Harness;
    if !std::thread::available_parallelism().is_ok_and(|cores| cores.get() > 1) {
        eprintln!(
            "SKIPPED a_compile_with_a_helper_thread_gives_the_one_thread_outcome: this machine gives the process one core, so no helper thread is started (run it where two cores are available)"
        );
        return;
    }
    let project = TestProject::empty();
    crate::synthetic::SyntheticProject::new(40, 9)
        .write_to(&project.root)
        .unwrap();
    let stages_folder = ".claude/aidlc-common/stages";
    project.write(
        &format!("{stages_folder}/inception/aaa-broken.md"),
        &stage(
            "aaa-broken",
            "inception",
            "[no-such-stage]",
            "[no-such-sensor]",
            "",
        ),
    );
    project.write(
        &format!("{stages_folder}/operation/zzz-broken.md"),
        &stage(
            "zzz-broken",
            "operation",
            "[]",
            "[]",
            "execution: SOMETIMES\n",
        ),
    );
    let layout = Layout::new(&project.root, Harness::Claude, &|_| None);

    let mut one_thread = CompilerDatabase::default();
    let one_thread_inputs = aidlc::compile::discover::load_project(&mut one_thread, &layout);
    let n_stage_files = aidlc::compile::db::Project::get(&one_thread)
        .stage_files(&one_thread)
        .len();
    assert!(n_stage_files >= aidlc::compile::discover::HELPER_THREAD_THRESHOLD);
    assert!(n_stage_files < aidlc::compile::discover::PARALLEL_THRESHOLD);
    assert!(aidlc::compile::discover::worth_a_helper_thread(
        n_stage_files
    ));
    let outcome = aidlc::compile::compile(&one_thread);
    // The helper reads half the files, before any input exists.
    let mut loaded_on_two_threads = CompilerDatabase::default();
    let (inputs, loaded_outcome) =
        aidlc::compile::load_and_compile_once(&mut loaded_on_two_threads, &layout);
    assert_eq!(loaded_outcome, outcome);
    let read_files: Vec<_> = inputs
        .read_files()
        .map(|(path, stamp)| (path.to_owned(), stamp.cloned()))
        .collect();
    let one_thread_reads: Vec<_> = one_thread_inputs
        .read_files()
        .map(|(path, stamp)| (path.to_owned(), stamp.cloned()))
        .collect();
    assert_eq!(
        read_files, one_thread_reads,
        "the same files, in the same order, with the same stamps"
    );
    assert!(outcome.n_errors() >= 2, "{:#?}", outcome.diagnostics);
    let files: Vec<_> = outcome
        .diagnostics
        .iter()
        .filter_map(|diagnostic| diagnostic.file.as_ref().map(ToString::to_string))
        .collect();
    assert!(
        files.iter().any(|file| file.ends_with("aaa-broken.md"))
            && files.iter().any(|file| file.ends_with("zzz-broken.md")),
        "{files:?}"
    );
}

/// A project whose demo-check manifest and second stage are links to files in a folder outside
/// it; returns the project and that folder.
pub(crate) fn project_with_inputs_linked_outside() -> (TestProject, tempfile::TempDir) {
    let project = TestProject::minimal();
    let shared = tempfile::tempdir().unwrap();
    for relative in [
        ".claude/sensors/aidlc-demo-check.md",
        ".claude/aidlc-common/stages/inception/second-stage.md",
    ] {
        let name = relative.rsplit('/').next().unwrap();
        let target = shared.path().join(name);
        std::fs::write(&target, project.read(relative)).unwrap();
        project.remove(relative);
        std::os::unix::fs::symlink(&target, project.path(relative)).unwrap();
    }
    (project, shared)
}

#[test]
fn an_input_linked_outside_the_project_is_compiled_and_named_in_a_warning_in_every_format() {
    let (project, shared) = project_with_inputs_linked_outside();
    let shared = shared.path().canonicalize().unwrap();
    let names_both = |output: &str| {
        output.contains("linked-input-outside-project")
            && output.contains("aidlc-demo-check.md")
            && output.contains("second-stage.md")
            && output.contains(&*shared.to_string_lossy())
    };
    let first = project.compile();
    assert_eq!(first.status, 0, "{}", first.stderr);
    assert!(names_both(&first.stderr), "{}", first.stderr);
    assert!(first.stderr.contains("(2 warnings)"), "{}", first.stderr);
    // The no-op path says it too.
    let again = project.compile();
    assert!(again.stderr.contains("up to date:"), "{}", again.stderr);
    assert!(names_both(&again.stderr), "{}", again.stderr);
    for format in ["json", "github", "sarif"] {
        let run = project.run(&["compile", "--force", "--format", format]);
        assert_eq!(run.status, 0, "{format}: {}", run.stderr);
        let output = format!("{}{}", run.stdout, run.stderr);
        assert!(names_both(&output), "{format}: {output}");
    }
}

/// A manifest that declares `default_severity: blocking` and fires on writes compiles with a
/// warning that it is advisory there (blocking is enforced at the gate); gate-fired, it is
/// silent.
#[test]
fn a_write_fired_blocking_manifest_compiles_with_a_warning_that_it_stays_advisory() {
    const LINTER: &str = ".claude/sensors/aidlc-linter.md";
    let project = TestProject::empty();
    assert_eq!(project.run(&["init", "."]).status, 0);
    let advisory = project.read(LINTER);
    let blocking = advisory.replace(
        "default_severity: advisory\n",
        "default_severity: blocking\n",
    );
    project.write(LINTER, &blocking);
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    assert!(
        compiled.stderr.contains("write-fired-blocking")
            && compiled.stderr.contains(
                "sensor \"linter\" declares default_severity: blocking but fires on writes"
            )
            && compiled.stderr.contains("add `fire_on: gate`"),
        "{}",
        compiled.stderr
    );
    project.write(
        LINTER,
        &blocking
            .replace(
                "default_severity: blocking\n",
                "default_severity: blocking\nfire_on: gate\n",
            )
            .replace("matches: \"**/*.{ts,js}\"", "matches: \"**\""),
    );
    let gate_fired = project.compile();
    assert_eq!(gate_fired.status, 0, "{}", gate_fired.stderr);
    assert!(
        !gate_fired.stderr.contains("write-fired-blocking"),
        "{}",
        gate_fired.stderr
    );
}

// --- Broken input: a diagnostic (snapshotted), exit 1, no panic, the old graph kept -------------

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

// --- One-sensor projects and the compile's JSON diagnostics ------------------------------------

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

// --- A gate-fired binding that can never fire is reported ---------------------------------------

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

// --- Manifests are as strict at compile time as at fire time ------------------------------------

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

// --- A diagnostic past column 65,535 is drawn cut around its span -------------------------------

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

// --- `compile --check` writes nothing -----------------------------------------------------------

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
        // check that may write would hash the files and rewrite the record.
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

#[test]
fn compile_refuses_a_fifo_among_its_inputs_instead_of_waiting_for_a_writer() {
    let project = TestProject::minimal();
    let fifo = project.path(".claude/sensors/aidlc-piped.md");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.as_str())
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo");
    let run = project.run_watched(&["compile"], &[], None);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("it is a FIFO (named pipe), not a regular file"),
        "{}",
        run.stderr
    );
    assert!(!project.exists(crate::support::GRAPH), "nothing is written");
}

// --- Failure scenario S5 (docs/failure-modes.md): discovery -------------------------------------

/// S5: a manifest without the `aidlc-` prefix, with an upper-case id, in a subfolder (or with
/// another extension) does not load, as the seed says, and each is reported with the file and
/// the rename that would load it (D3) instead of being ignored in silence.
///
/// Not applicable: "a plugin sensor present on disk but not declared" — plugin selection is not
/// built yet (ARCHITECTURE.md "What is not built yet"); every file found is compiled.
///
/// Also covered by `compile::near_miss_sensor_files_are_warned_not_loaded` (a snapshot).
#[test]
fn scenario_05_discovery_reports_every_manifest_it_does_not_load() {
    let project = scenario::scenario_project(&[scenario::Sensor::write("probe", PASS, "**/*.md")]);
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
        project.write(
            path,
            &scenario::Sensor::write(id, PASS, "**/*.md").manifest(),
        );
    }
    let compiled = scenario::run(&project, &["compile", "--force", "--format", "json"]);
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
    let list = scenario::run(&project, &["engine", "sensor", "list"]);
    let ids: Vec<&str> = list
        .stdout
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(ids, ["probe"], "near misses do not load");
}

// --- Failure scenario S6 (docs/failure-modes.md): compile ---------------------------------------

/// S6: a stage importing an unknown id fails, naming the stage (file, line and column) and
/// the known ids, and leaves the graph as it was; the output is byte-stable across runs and
/// across folders; `compile --check` detects drift, names the stage, and writes nothing.
///
/// Not applicable: "a plugin stage importing a plugin-provided sensor compiles identically from
/// the package tree and the installed tree" — plugin selection is not built yet (ARCHITECTURE.md
/// "What is not built yet"): there is one tree, the installed one.
///
/// Also covered by `compile::unknown_sensor_import_suggests_the_closest_id`,
/// `compile::graph_and_grid_bytes_are_canonical_and_stable`,
/// `compile::output_does_not_depend_on_file_creation_order_or_threads`,
/// `compile::check_writes_nothing_and_names_changed_stages` and
/// `compile::compile_check_writes_nothing_with_or_without_drift_or_a_record`.
#[test]
fn scenario_06_compile_names_unknown_imports_and_is_byte_stable_with_a_drift_check() {
    let sensors = [
        scenario::Sensor::write("probe", PASS, "**/*.md"),
        scenario::Sensor::gate("shape", SHAPE, "advisory"),
    ];
    let project = scenario::scenario_project(&sensors);
    let graph = project.read(GRAPH);
    let grid = project.read(GRID);
    let good_stage = project.read(STAGE_FILE);

    project.write(
        STAGE_FILE,
        &good_stage.replace("[probe, shape]", "[probe, shpe]"),
    );
    let compiled = scenario::run(&project, &["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stderr);
    let diagnostics = scenario::json_diagnostics(&compiled);
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
    assert_eq!(scenario::run(&project, &["compile", "--force"]).status, 0);
    assert_eq!(
        (project.read(GRAPH), project.read(GRID)),
        (graph.clone(), grid.clone())
    );
    let elsewhere = scenario::scenario_project(&sensors);
    assert_eq!(
        elsewhere.read(GRAPH),
        graph,
        "the bytes do not depend on the folder"
    );
    assert_eq!(elsewhere.read(GRID), grid);

    // The drift guard.
    let in_sync = scenario::run(&project, &["compile", "--check"]);
    assert_eq!(in_sync.status, 0, "{}", in_sync.stderr);
    project.write(STAGE_FILE, &good_stage.replace("[probe, shape]", "[probe]"));
    let data_before = scenario::tree_bytes(&project);
    let drift = scenario::run(&project, &["compile", "--check"]);
    assert_eq!(drift.status, 1, "{}", drift.stderr);
    assert!(
        format!("{}{}", drift.stdout, drift.stderr).contains(STAGE),
        "the drifted stage is named: {}",
        drift.stderr
    );
    assert_eq!(
        scenario::tree_bytes(&project),
        data_before,
        "--check wrote something"
    );
}
