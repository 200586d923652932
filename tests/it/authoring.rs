//! The authoring tools (issue 15): shell completions, the man page, the JSON Schemas of
//! manifests, stages and the gate report, and `aidlc graph`.

use std::io::Write as _;
use std::process::{Command, Stdio};

use camino::Utf8Path;
use serde_json::Value;

use crate::support::{REFERENCE_VERSIONS, TestProject, system_tool};

const SUBCOMMANDS: [&str; 8] = [
    "init",
    "compile",
    "engine",
    "gate",
    "graph",
    "schema",
    "completions",
    "man",
];

/// `program args` with `stdin`, its status, stdout and stderr.
fn pipe_through(program: &Utf8Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("start {program}: {error}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let output = child.wait_with_output().expect("wait");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

// --- completions and man

#[test]
fn each_shells_completion_script_names_every_subcommand() {
    let project = TestProject::empty();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = project.run(&["completions", shell]);
        assert_eq!(run.status, 0, "{shell}: {}", run.stderr);
        for subcommand in SUBCOMMANDS {
            assert!(
                run.stdout.contains(subcommand),
                "{shell}'s script does not mention `{subcommand}`"
            );
        }
        assert!(run.stdout.contains("project-dir"), "{shell}: no flags");
    }
    let unknown = project.run(&["completions", "tcsh"]);
    assert_eq!(unknown.status, 2, "{}", unknown.stderr);
}

#[test]
fn the_bash_script_registers_a_completion_that_answers() {
    let Some(bash) = system_tool("bash") else {
        return;
    };
    let project = TestProject::empty();
    let script = project.run(&["completions", "bash"]).stdout;
    project.write("aidlc.bash", &script);
    // Complete `aidlc gr` as bash would, through the function the script registered.
    let probe = format!(
        "source {}\nCOMP_WORDS=(aidlc gr); COMP_CWORD=1; COMP_LINE='aidlc gr'; COMP_POINT=8\n_aidlc aidlc gr aidlc\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        project.path("aidlc.bash")
    );
    let (status, stdout, stderr) = pipe_through(&bash, &["--norc", "-s"], &probe);
    assert_eq!(status, 0, "{stderr}");
    let offered: Vec<&str> = stdout.lines().collect();
    assert_eq!(offered, ["graph"], "{stdout}{stderr}");
}

#[test]
fn the_man_page_is_roff_that_groff_reads_without_warnings() {
    let project = TestProject::empty();
    let run = project.run(&["man"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains(".TH aidlc 1"), "{}", run.stdout);
    for subcommand in SUBCOMMANDS {
        assert!(
            run.stdout.contains(&format!("aidlc\\-{subcommand}")),
            "the page does not list `{subcommand}`"
        );
    }
    let Some(groff) = system_tool("groff") else {
        return;
    };
    let (status, text, warnings) =
        pipe_through(&groff, &["-man", "-Tutf8", "-ww", "-P-cbu"], &run.stdout);
    assert_eq!(status, 0, "{warnings}");
    assert!(warnings.trim().is_empty(), "groff warned: {warnings}");
    assert!(text.contains("SUBCOMMANDS"), "{text}");
    assert!(text.contains("A fast, strict engine"), "{text}");
    if let Some(man) = which_quietly("man") {
        let (status, text, stderr) = pipe_through(&man, &["-l", "-"], &run.stdout);
        assert_eq!(status, 0, "man -l -: {stderr}");
        assert!(text.contains("SUBCOMMANDS"), "{text}");
    }
}

/// `program` on `PATH`, without printing anything when it is not (an extra check, not a need).
fn which_quietly(program: &str) -> Option<camino::Utf8PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|path| camino::Utf8PathBuf::from_path_buf(path).ok())
}

// --- schemas

fn schema(project: &TestProject, kind: &str) -> jsonschema::Validator {
    let run = project.run(&["schema", kind]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).expect("a JSON schema");
    assert_eq!(
        document["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "{kind}"
    );
    jsonschema::draft202012::new(&document).unwrap_or_else(|error| panic!("{kind}: {error}"))
}

/// The YAML frontmatter of a Markdown file, as JSON (what yaml-language-server checks).
fn frontmatter(path: &Utf8Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read a frontmatter file");
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .unwrap_or_else(|| panic!("{path} has no frontmatter"));
    let end = body
        .find("\n---")
        .unwrap_or_else(|| panic!("{path} has no closing fence"));
    serde_saphyr::from_str(&body[..=end]).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn markdown_files(folder: &Utf8Path, recursive: bool) -> Vec<camino::Utf8PathBuf> {
    let mut files = Vec::new();
    for entry in folder.read_dir_utf8().expect("list a folder") {
        let path = entry.expect("an entry").into_path();
        if path.is_dir() {
            if recursive {
                files.extend(markdown_files(&path, true));
            }
        } else if path.extension() == Some("md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Every sensor manifest and stage file of the project under `harness`, each validated against
/// its schema; returns how many of each there were.
fn validate_project(project: &TestProject, harness: &str) -> (usize, usize) {
    let manifest_schema = schema(project, "manifest");
    let stage_schema = schema(project, "stage");
    let manifests: Vec<_> = markdown_files(&project.path(&format!("{harness}/sensors")), false)
        .into_iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.starts_with("aidlc-"))
        })
        .collect();
    let stages = markdown_files(
        &project.path(&format!("{harness}/aidlc-common/stages")),
        true,
    );
    for (schema, files) in [(&manifest_schema, &manifests), (&stage_schema, &stages)] {
        for file in files {
            let errors: Vec<String> = schema
                .iter_errors(&frontmatter(file))
                .map(|error| format!("{error} at {}", error.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{file}: {errors:#?}");
        }
    }
    (manifests.len(), stages.len())
}

#[test]
fn the_default_framework_validates_against_the_schemas() {
    let project = TestProject::default_framework();
    assert_eq!(validate_project(&project, ".claude"), (6, 33));
}

#[test]
fn both_reference_installs_validate_against_the_schemas() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let (manifests, stages) = validate_project(&project, ".claude");
        assert!(
            manifests >= 5 && stages >= 30,
            "{version}: {manifests}, {stages}"
        );
    }
}

#[test]
fn a_manifest_of_kind_llm_is_refused_by_the_schema_and_by_the_compile() {
    let project = TestProject::default_framework();
    let path = ".claude/sensors/aidlc-linter.md";
    let text = project.read(path);
    project.write(path, &text.replace("kind: deterministic", "kind: llm"));
    let manifest_schema = schema(&project, "manifest");
    let instance = frontmatter(&project.path(path));
    assert_eq!(instance["kind"], "llm");
    let errors: Vec<String> = manifest_schema
        .iter_errors(&instance)
        .map(|error| error.instance_path().to_string())
        .collect();
    assert_eq!(errors, ["/kind"]);
    assert_eq!(project.compile().status, 1);
}

#[test]
fn the_gate_report_schema_describes_real_gate_check_output() {
    let project = TestProject::empty();
    let init = project.run(&["init", ".", "--example"]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    assert_eq!(project.compile().status, 0);
    let report_schema = schema(&project, "gate-report");
    let runs = [
        vec!["gate", "check", "--no-record", "--format", "json"],
        vec!["gate", "check", "--format", "json", "--fire-on", "all"],
        vec![
            "gate",
            "check",
            "--no-record",
            "--format",
            "json",
            "--shard",
            "2/3",
        ],
        vec![
            "gate",
            "check",
            "--no-record",
            "--format",
            "json",
            "--stage",
            "workspace-scaffold",
        ],
    ];
    for args in runs {
        let run = project.run(&args);
        assert!(matches!(run.status, 0..=3), "{args:?}: {}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout).expect("one JSON document");
        let errors: Vec<String> = report_schema
            .iter_errors(&report)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
    }
}

// --- graph

fn compiled_framework() -> TestProject {
    let project = TestProject::default_framework();
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    project
}

#[test]
fn the_default_frameworks_mermaid_graph() {
    let project = compiled_framework();
    let run = project.run(&["graph", "--sensors"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "", "a current graph is read without a note");
    assert_eq!(
        run.stdout,
        project.run(&["graph", "--sensors"]).stdout,
        "the output is deterministic"
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn the_dot_graph_renders_with_graphviz() {
    let Some(dot) = system_tool("dot") else {
        return;
    };
    let project = compiled_framework();
    for args in [
        vec!["graph", "--format", "dot", "--sensors"],
        vec!["graph", "--format", "dot", "--stage", "code-generation"],
    ] {
        let run = project.run(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let (status, svg, warnings) = pipe_through(&dot, &["-Tsvg"], &run.stdout);
        assert_eq!(status, 0, "{args:?}: {warnings}");
        assert!(
            warnings.trim().is_empty(),
            "{args:?}: dot warned: {warnings}"
        );
        assert!(svg.contains("<svg"), "{svg}");
        assert!(svg.contains("Code Generation"), "{args:?}");
    }
}

#[test]
fn a_stages_neighbourhood_and_an_unknown_stage() {
    let project = compiled_framework();
    let run = project.run(&["graph", "--format", "json", "--stage", "feasibility"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    let slugs: Vec<&str> = document["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| stage["slug"].as_str().unwrap())
        .collect();
    assert_eq!(
        slugs,
        [
            "intent-capture",
            "market-research",
            "feasibility",
            "scope-definition",
            "approval-handoff"
        ]
    );
    assert!(
        document["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|edge| edge["from"] == "feasibility" || edge["to"] == "feasibility")
    );
    let unknown = project.run(&["graph", "--stage", "feasability"]);
    assert_eq!(unknown.status, 2);
    assert!(unknown.stdout.is_empty());
    assert!(
        unknown
            .stderr
            .contains("no stage \"feasability\" in the stage graph"),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stderr.contains("did you mean `feasibility`?"));
}

#[test]
fn a_missing_or_stale_graph_is_compiled_in_memory_and_nothing_is_written() {
    let project = TestProject::default_framework();
    let graph_path = ".claude/tools/data/stage-graph.json";
    assert!(!project.exists(graph_path));
    let run = project.run(&["graph", "--format", "json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("is missing or out of date"),
        "{}",
        run.stderr
    );
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(document["stages"].as_array().unwrap().len(), 33);
    assert!(!project.exists(graph_path), "graph wrote the stage graph");

    assert_eq!(project.compile().status, 0);
    let stage = ".claude/aidlc-common/stages/ideation/team-formation.md";
    let text = project.read(stage);
    assert!(text.contains("requires_stage:"));
    let before = project.read(graph_path);
    project.write(
        stage,
        &text.replacen(
            "requires_stage:\n",
            "requires_stage:\n  - market-research\n",
            1,
        ),
    );
    let run = project.run(&["graph", "--format", "json", "--stage", "team-formation"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("is missing or out of date"),
        "{}",
        run.stderr
    );
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        document["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|edge| edge["from"] == "market-research" && edge["to"] == "team-formation"),
        "the edit is drawn: {}",
        run.stdout
    );
    assert_eq!(
        project.read(graph_path),
        before,
        "graph rewrote the stage graph"
    );
}

#[test]
fn sources_with_compile_errors_draw_nothing() {
    let project = compiled_framework();
    let stage = ".claude/aidlc-common/stages/ideation/feasibility.md";
    let text = project.read(stage);
    project.write(stage, &text.replace("phase: ideation", "phase: design"));
    let run = project.run(&["graph"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("phase must be one of"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing to draw"), "{}", run.stderr);
}

#[test]
fn the_reference_installs_are_drawn() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let run = project.run(&["graph", "--format", "json", "--sensors"]);
        assert_eq!(run.status, 0, "{version}: {}", run.stderr);
        assert_eq!(
            run.stderr, "",
            "{version}: its graph is what its sources compile to"
        );
        let document: Value = serde_json::from_str(&run.stdout).unwrap();
        assert!(document["stages"].as_array().unwrap().len() >= 30);
        assert!(!document["edges"].as_array().unwrap().is_empty());
    }
}
