//! `aidlc compile` in a plugin's own tree (docs/decisions.md D52): the plugin is
//! composed as `aidlc plugin add` composes it into a temporary default framework; the graph is
//! the install's byte for byte, an error in a plugin file names the plugin's file and span, and
//! the plugin's folder is never written.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{GRAPH, Run, TestProject};

/// A plugin for the default framework in its own tree (inside a folder holding `.git`, as an
/// author's checkout is): a stage importing the plugin's own sensor (its tool named through
/// `{{HARNESS_DIR}}`), the sensor, an agent, and a contribution binding the sensor to
/// `build-and-test`.
pub fn own_tree(shelf: &TestProject) -> Utf8PathBuf {
    shelf.write(".git/HEAD", "ref: refs/heads/main\n");
    let files = [
        (
            ".aidlc-plugin/plugin.json",
            "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\"]}\n"
                .to_owned(),
        ),
        ("stages/construction/acme-check.md", acme_stage("inline")),
        (
            "sensors/aidlc-acme-lint.md",
            "---\nid: acme-lint\nkind: deterministic\ncommand: sh {{HARNESS_DIR}}/tools/aidlc-sensor-acme-lint.sh\ndefault_severity: advisory\ndescription: Checks the acme report\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# acme-lint sensor\n"
                .to_owned(),
        ),
        (
            "tools/aidlc-sensor-acme-lint.sh",
            "#!/bin/sh\necho '{\"pass\": true, \"findings_count\": 0}'\n".to_owned(),
        ),
        (
            "agents/acme-helper-agent.md",
            "---\nname: acme-helper-agent\nplugin: acme\ndisplay_name: acme helper\ndescription: Helps with acme\n---\n\n# acme helper\n"
                .to_owned(),
        ),
        (
            "contributions/construction/build-and-test.md",
            "---\ntarget: build-and-test\nplugin: acme\nadds:\n  sensors:\n    - acme-lint\nfragments:\n  - anchor: in:Sensors\n    order: 100\n---\n\n## fragment: in:Sensors\n\n- `acme-lint` checks the acme report.\n"
                .to_owned(),
        ),
    ];
    for (path, text) in files {
        shelf.write(&format!("acme/{path}"), &text);
    }
    shelf.path("acme")
}

/// The plugin's stage; `mode` is its `mode:` value (the one the tests break).
pub fn acme_stage(mode: &str) -> String {
    format!(
        "---\nslug: acme-check\nname: acme check\nplugin: acme\nphase: construction\nexecution: CONDITIONAL\ncondition: When the acme plugin is active\nlead_agent: aidlc-quality-agent\nsupport_agents:\n  - acme-helper-agent\nmode: {mode}\nproduces:\n  - acme-report\nrequires_stage:\n  - build-and-test\nsensors:\n  - acme-lint\nscopes:\n  - feature\ninputs: The build summary in {{{{HARNESS_DIR}}}}/tools\noutputs: acme-report.md\n---\n\n# acme check\n\nWrite the report.\n"
    )
}

/// Every file under `root` by path, with its BLAKE3 hash (and every folder, by an empty hash).
fn hashes(root: &Utf8Path) -> BTreeMap<String, String> {
    fn visit(root: &Utf8Path, folder: &Utf8Path, out: &mut BTreeMap<String, String>) {
        for entry in folder.read_dir_utf8().unwrap() {
            let entry = entry.unwrap();
            let relative = entry.path().strip_prefix(root).unwrap().to_string();
            if entry.file_type().unwrap().is_dir() {
                out.insert(format!("{relative}/"), String::new());
                visit(root, entry.path(), out);
            } else {
                let bytes = std::fs::read(entry.path()).unwrap();
                out.insert(relative, blake3::hash(&bytes).to_hex().to_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, root, &mut out);
    out
}

fn node<'a>(graph: &'a Value, slug: &str) -> &'a Value {
    graph
        .as_array()
        .unwrap()
        .iter()
        .find(|node| node["slug"] == slug)
        .unwrap_or_else(|| panic!("no stage {slug} in the graph"))
}

#[test]
fn a_plugin_compiled_in_its_own_tree_gives_the_installed_graph_and_writes_nothing() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    let before = hashes(&shelf.root);

    let run = shelf.run_in(&root.join("stages/construction"), &["compile"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("plugin \"acme\" composed into a temporary copy of the default framework (.claude); nothing was written"),
        "{}",
        run.stderr
    );
    assert_eq!(
        before,
        hashes(&shelf.root),
        "the plugin's tree is unchanged"
    );

    // The same plugin added to the default framework by `aidlc plugin add`.
    let project = TestProject::default_framework();
    let added = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(added.status, 0, "{}{}", added.stdout, added.stderr);
    let installed = project.read(GRAPH);
    let compiled =
        aidlc::plugin::own_tree::compile_own_tree(&root, Some(aidlc::harness::Harness::Claude))
            .expect("compiled");
    assert!(compiled.refusals.is_empty(), "{:?}", compiled.refusals);
    assert_eq!(compiled.n_errors(), 0, "{:?}", compiled.diagnostics);
    let outcome = compiled.compiled.expect("a compile");
    assert_eq!(
        *outcome.stage_graph, installed,
        "the whole graph, byte for byte"
    );
    let graph: Value = serde_json::from_str(&installed).unwrap();
    let plugin_stage = node(&graph, "acme-check");
    assert_eq!(plugin_stage["plugin"], "acme");
    assert_eq!(plugin_stage["sensors_applicable"][0]["id"], "acme-lint");
    assert!(
        node(&graph, "build-and-test")["sensors_applicable"]
            .as_array()
            .unwrap()
            .iter()
            .any(|entry| entry["id"] == "acme-lint")
    );
    assert_eq!(before, hashes(&shelf.root), "still unchanged");
}

/// `aidlc compile --format json` in `cwd`, which must fail (exit 1): the diagnostic whose line
/// contains `needle`, parsed, the line itself, and the run.
fn failed_json_compile_diagnostic(
    shelf: &TestProject,
    cwd: &Utf8Path,
    needle: &str,
) -> (Value, String, Run) {
    let run = shelf.run_in(cwd, &["compile", "--format", "json"]);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no diagnostic with {needle}: {}", run.stdout))
        .to_owned();
    (serde_json::from_str(&line).unwrap(), line, run)
}

#[test]
fn an_error_in_a_plugin_file_is_reported_at_the_plugins_file_and_span() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    // An unknown mode, after a `{{HARNESS_DIR}}` placeholder, so the span must be carried back
    // across the substitution.
    let stage =
        acme_stage("sideways").replace("condition: When", "condition: Under {{HARNESS_DIR}} when");
    shelf.write("acme/stages/construction/acme-check.md", &stage);
    let before = hashes(&shelf.root);
    let (diagnostic, line, run) = failed_json_compile_diagnostic(&shelf, &root, "sideways");
    assert_eq!(
        diagnostic["file"], "stages/construction/acme-check.md",
        "{line}"
    );
    let mode_line = stage.lines().position(|l| l == "mode: sideways").unwrap() + 1;
    assert_eq!(diagnostic["line"], mode_line, "{line}");
    assert_eq!(diagnostic["column"], 7, "{line}");
    assert!(run.stderr.contains("nothing was written"), "{}", run.stderr);
    assert_eq!(
        before,
        hashes(&shelf.root),
        "the plugin's tree is unchanged"
    );

    // The human form points at the plugin's file as the author's folder names it.
    let human = shelf.run_in(&root.join("stages"), &["compile"]);
    assert_eq!(human.status, 1, "{}", human.stderr);
    assert!(
        human.stderr.contains(&format!(
            "../stages/construction/acme-check.md:{mode_line}:7"
        )),
        "{}",
        human.stderr
    );
}

#[test]
fn watch_in_a_plugins_own_tree_is_refused_and_a_nearer_project_still_wins() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    let run = shelf.run_in(&root, &["compile", "--watch"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--watch is not available in a plugin's own tree"),
        "{}",
        run.stderr
    );
    // A project inside the plugin's folder is nearer: it is compiled as a project.
    aidlc::compile::framework::init_project(
        &root.join("demo"),
        aidlc::harness::Harness::Claude,
        false,
    )
    .unwrap();
    let run = shelf.run_in(&root.join("demo"), &["compile"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("wrote"), "{}", run.stderr);
    assert!(shelf.exists("acme/demo/.claude/tools/data/stage-graph.json"));
}

#[test]
fn a_compile_error_in_a_plugin_stage_is_carried_back_to_the_plugins_file() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    // A typo'd import, after a placeholder: the composition accepts the stage, the compile
    // refuses the import, and the span must come back across the substitution.
    let stage = acme_stage("inline")
        .replace("  - acme-lint\nscopes:", "  - acme-lnt\nscopes:")
        .replace("condition: When", "condition: Under {{HARNESS_DIR}} when");
    shelf.write("acme/stages/construction/acme-check.md", &stage);
    let before = hashes(&shelf.root);
    let (diagnostic, line, _run) =
        failed_json_compile_diagnostic(&shelf, &root, "unknown-sensor-import");
    assert_eq!(
        diagnostic["file"], "stages/construction/acme-check.md",
        "{line}"
    );
    let import_line = stage.lines().position(|l| l == "  - acme-lnt").unwrap() + 1;
    assert_eq!(diagnostic["line"], import_line, "{line}");
    assert_eq!(diagnostic["column"], 5, "{line}");
    assert_eq!(
        before,
        hashes(&shelf.root),
        "the plugin's tree is unchanged"
    );
}

/// D52: a path printed inside a message names the plugin's file by its path in the
/// plugin, as the location does; a core stage's path is left as the compile printed it.
#[test]
fn a_path_in_a_compile_message_names_the_plugins_file() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    let stage =
        acme_stage("inline").replace("  - acme-report\n", "  - acme-report\n  - cd-config\n");
    shelf.write("acme/stages/construction/acme-check.md", &stage);
    let (diagnostic, line, _run) =
        failed_json_compile_diagnostic(&shelf, &root, "duplicate-producer");
    let message = diagnostic["message"].as_str().unwrap();
    assert!(
        message.contains("in stages/construction/acme-check.md (stage \"acme-check\")"),
        "{line}"
    );
    assert!(
        message.contains(
            ", .claude/aidlc-common/stages/operation/deployment-pipeline.md (stage \"deployment-pipeline\")"
        ),
        "{line}"
    );
    assert!(
        !line.contains(".claude/aidlc-common/stages/construction/acme-check.md"),
        "{line}"
    );
}

/// D52: a refusal of the composition without a span of its own is shown on the file
/// at fault, with a span on the key, list item or line the refusal names.
#[test]
fn a_composition_refusal_is_shown_on_the_manifest_key_or_contribution_line_at_fault() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    let manifest = "{\n  \"name\": \"acme\",\n  \"version\": \"1.0.0\",\n  \"dependencies\": [\"core\", \"lib@not-a-range\"]\n}\n";
    shelf.write("acme/.aidlc-plugin/plugin.json", manifest);
    let before = hashes(&shelf.root);
    let (diagnostic, line, run) = failed_json_compile_diagnostic(&shelf, &root, "lib@not-a-range");
    assert_eq!(diagnostic["code"], "plugin-refused", "{line}");
    assert_eq!(diagnostic["file"], ".aidlc-plugin/plugin.json", "{line}");
    assert_eq!(diagnostic["line"], 4, "{line}");
    let column = manifest.lines().nth(3).unwrap().find("\"lib@").unwrap() + 1;
    assert_eq!(diagnostic["column"], column, "{line}");
    assert_eq!(
        diagnostic["end_column"],
        column + "\"lib@not-a-range\"".len(),
        "{line}"
    );
    assert!(
        run.stderr
            .contains("was refused with 1 error in its files; nothing was written"),
        "{}",
        run.stderr
    );
    assert_eq!(
        before,
        hashes(&shelf.root),
        "the plugin's tree is unchanged"
    );

    // A contribution whose target the framework does not have: on its `target:` line.
    shelf.write(
        "acme/.aidlc-plugin/plugin.json",
        "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\"]}\n",
    );
    let contribution = "acme/contributions/construction/build-and-test.md";
    let text = shelf
        .read(contribution)
        .replace("target: build-and-test", "target: build-and-tset");
    shelf.write(contribution, &text);
    let (diagnostic, line, _run) = failed_json_compile_diagnostic(&shelf, &root, "build-and-tset");
    assert_eq!(
        diagnostic["file"], "contributions/construction/build-and-test.md",
        "{line}"
    );
    assert_eq!(
        (diagnostic["line"].as_u64(), diagnostic["column"].as_u64()),
        (Some(2), Some(1)),
        "{line}"
    );
    assert_eq!(
        diagnostic["end_column"],
        1 + "target: build-and-tset".len(),
        "{line}"
    );

    // The human form points at the plugin's file too.
    let human = shelf.run_in(&root, &["compile"]);
    assert_eq!(human.status, 1, "{}", human.stderr);
    assert!(
        human
            .stderr
            .contains("contributions/construction/build-and-test.md:2:1"),
        "{}",
        human.stderr
    );
}

/// A plugin and a sibling that depend on each other.
pub fn cyclic_sibling(shelf: &TestProject) {
    shelf.write(
        "acme/.aidlc-plugin/plugin.json",
        "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\", \"lib\"]}\n",
    );
    shelf.write(
        "lib/.aidlc-plugin/plugin.json",
        "{\"name\": \"lib\", \"version\": \"1.0.0\", \"dependencies\": [\"acme\"]}\n",
    );
}

#[test]
fn a_dependency_cycle_with_a_sibling_is_shown_on_the_manifests_dependencies() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    cyclic_sibling(&shelf);
    let (diagnostic, line, _run) = failed_json_compile_diagnostic(&shelf, &root, "form a cycle");
    assert_eq!(diagnostic["file"], ".aidlc-plugin/plugin.json", "{line}");
    let manifest = shelf.read("acme/.aidlc-plugin/plugin.json");
    let column = manifest.find("\"dependencies\"").unwrap() + 1;
    assert_eq!(diagnostic["column"], column, "{line}");
    assert_eq!(
        diagnostic["end_column"],
        manifest.rfind(']').unwrap() + 2,
        "{line}"
    );
}

/// D52: a diagnostic in a core stage a contribution changed is shown on the
/// contribution when its span is in text the contribution wrote (a merged `adds` value), naming
/// the core stage; in the stage's own text it stays on the composed framework.
#[test]
fn a_diagnostic_in_contributed_text_is_on_the_contribution_and_core_text_stays_composed() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    // The plugin's stage produces what the core's deployment-execution consumes (a duplicate
    // producer, at the consumer's own `consumes` line), and a contribution adds an unknown
    // sensor to that stage.
    let stage =
        acme_stage("inline").replace("  - acme-report\n", "  - acme-report\n  - cd-config\n");
    shelf.write("acme/stages/construction/acme-check.md", &stage);
    let contribution =
        "---\ntarget: deployment-execution\nplugin: acme\nadds:\n  sensors:\n    - acme-lnt\n---\n";
    shelf.write(
        "acme/contributions/operation/deployment-execution.md",
        contribution,
    );
    let before = hashes(&shelf.root);
    let (diagnostic, line, run) =
        failed_json_compile_diagnostic(&shelf, &root, "unknown-sensor-import");
    assert_eq!(
        diagnostic["file"], "contributions/operation/deployment-execution.md",
        "{line}"
    );
    assert_eq!(
        (
            diagnostic["line"].as_u64(),
            diagnostic["column"].as_u64(),
            diagnostic["end_column"].as_u64()
        ),
        (Some(6), Some(7), Some(15)),
        "{line}"
    );
    assert!(
        diagnostic["message"].as_str().unwrap().contains(
            "core stage \"deployment-execution\", <composed default framework>/.claude/aidlc-common/stages/operation/deployment-execution.md"
        ),
        "{line}"
    );
    let core = run
        .stdout
        .lines()
        .find(|line| line.contains("duplicate-producer"))
        .unwrap_or_else(|| panic!("no duplicate producer: {}", run.stdout));
    let core: Value = serde_json::from_str(core).unwrap();
    assert_eq!(
        core["file"],
        "<composed default framework>/.claude/aidlc-common/stages/operation/deployment-execution.md",
        "{core}"
    );
    assert_eq!(
        core["related"][0]["file"], "stages/construction/acme-check.md",
        "{core}"
    );
    assert_eq!(
        before,
        hashes(&shelf.root),
        "the plugin's tree is unchanged"
    );
}

/// The own tree with its authored manifest replaced by host projections' manifests in
/// `folders` (package name `aidlc-acme`, as the reference's packager writes them).
fn as_projections(shelf: &TestProject, folders: &[&str]) {
    let authored = shelf.path("acme/.aidlc-plugin");
    if authored.exists() {
        std::fs::remove_dir_all(authored).unwrap();
    }
    for folder in folders {
        shelf.write(
            &format!("acme/{folder}/plugin.json"),
            "{\"name\": \"aidlc-acme\", \"version\": \"1.0.0\"}\n",
        );
    }
}

/// D52: a tree that carries only a host projection composes for that projection's
/// harness; two projections and no `--harness` is a refusal naming both and the flag.
#[test]
fn a_host_projection_composes_for_its_harness_and_two_need_the_harness_flag() {
    let shelf = TestProject::empty();
    let root = own_tree(&shelf);
    as_projections(&shelf, &[".codex-plugin"]);
    let run = shelf.run_in(&root, &["compile"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "plugin \"acme\" composed into a temporary copy of the default framework (.codex)"
        ),
        "{}",
        run.stderr
    );
    let run = shelf.run_in(&root, &["compile", "--harness", "claude"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("default framework (.claude)"),
        "{}",
        run.stderr
    );

    as_projections(&shelf, &[".claude-plugin"]);
    let before = hashes(&shelf.root);
    let run = shelf.run_in(&root, &["compile"]);
    assert_eq!(run.status, 2, "{}{}", run.stdout, run.stderr);
    for needed in [
        ".claude-plugin/plugin.json (claude)",
        ".codex-plugin/plugin.json (codex)",
        "choose the harness with --harness claude or --harness codex",
        "was refused (1 problem); nothing was written",
    ] {
        assert!(run.stderr.contains(needed), "{needed}: {}", run.stderr);
    }
    let run = shelf.run_in(&root, &["compile", "--harness", "codex"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("default framework (.codex)"),
        "{}",
        run.stderr
    );
    assert_eq!(
        before,
        hashes(&shelf.root),
        "the plugin's tree is unchanged"
    );
}
