//! `aidlc init` and `aidlc compile` on the default framework and small projects.

use crate::support::{GRAPH, GRID, TestProject, manifest, stage};

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

/// Issue 14, item 5: a stage file discovery skips is a warning naming the path that would load
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
/// `HELPER_THREAD_THRESHOLD` stage files is compiled by `compile_once` on two threads (a
/// scoped helper checks half the stages and writes the graph); the outcome, diagnostics and
/// their order included, is the one the memoised queries give on one thread, and so is that of
/// `load_and_compile_once` (`aidlc compile`'s path, whose helper also reads half the files),
/// with the same inputs and stamps. Shown on a synthetic project of 40 stages with two broken
/// stages added, one in each half of the list.
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

    let mut two_threads = CompilerDatabase::default();
    let _inputs = aidlc::compile::discover::load_project(&mut two_threads, &layout);
    let n_stage_files = aidlc::compile::db::Project::get(&two_threads)
        .stage_files(&two_threads)
        .len();
    assert!(n_stage_files >= aidlc::compile::discover::HELPER_THREAD_THRESHOLD);
    assert!(n_stage_files < aidlc::compile::discover::PARALLEL_THRESHOLD);
    assert!(aidlc::compile::discover::worth_a_helper_thread(
        n_stage_files
    ));
    let outcome = aidlc::compile::compile_once(&two_threads);

    let mut one_thread = CompilerDatabase::default();
    let one_thread_inputs = aidlc::compile::discover::load_project(&mut one_thread, &layout);
    assert_eq!(outcome, aidlc::compile::compile(&one_thread));
    // `aidlc compile`'s path: the helper also reads half the files, before any input exists.
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
