//! Drop-in on the two real installs the reference made (2.5.36 and 2.6.54, vendored under
//! `tests/fixtures/reference-installs`): `aidlc` reads them as they are and writes exactly the
//! bytes their own reference tools write (D13), and the reference's drift guard accepts what
//! `aidlc` wrote. The side-by-side tests run the real reference with Bun from
//! `.ci/install-node-tools`; without it they print SKIPPED.

use std::process::Command;

use camino::Utf8Path;
use serde_json::Value;

use crate::support::{GRAPH, GRID, REFERENCE_VERSIONS, Run, TestProject, node_tool};

/// A stage of both installs that has a reviewer.
const REVIEWED_STAGE: &str = ".claude/aidlc-common/stages/ideation/intent-capture.md";

fn graph_format_of(version: &str) -> &'static str {
    if version.starts_with("2.5") {
        "2.5"
    } else {
        "2.6"
    }
}

/// `bun <args>` in the project, with Bun's folder first on `PATH`.
fn run_bun(bun: &Utf8Path, project: &TestProject, args: &[&str]) -> Run {
    let folder = bun.parent().expect("bun's folder");
    let path = format!("{folder}:{}", std::env::var("PATH").unwrap_or_default());
    let output = Command::new(bun)
        .args(args)
        .current_dir(&project.root)
        .env("PATH", path)
        .env_remove("AIDLC_PROJECT_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .output()
        .expect("run bun");
    Run::from(output)
}

/// The one diagnostic a `--format json` run printed.
fn only_diagnostic(run: &Run) -> Value {
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    serde_json::from_str(lines[0]).expect("a JSON diagnostic")
}

#[test]
fn compile_rewrites_nothing_on_either_install_and_says_which_format_it_kept() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let (graph, grid) = (project.read(GRAPH), project.read(GRID));
        let compiled = project.run(&["compile", "--force"]);
        assert_eq!(compiled.status, 0, "{version}: {}", compiled.stderr);
        assert_eq!(
            project.read(GRAPH),
            graph,
            "{version}: stage-graph.json changed"
        );
        assert_eq!(
            project.read(GRID),
            grid,
            "{version}: scope-grid.json changed"
        );
        let lines: Vec<&str> = compiled.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "{version}: a diagnostic was printed: {}",
            compiled.stderr
        );
        assert!(
            lines[0].contains(&format!(
                "up to date: .claude/tools/data/stage-graph.json and scope-grid.json (graph format {}, kept from the existing stage-graph.json)",
                graph_format_of(version)
            )),
            "{version}: {}",
            lines[0]
        );
        let check = project.run(&["compile", "--check"]);
        assert_eq!(check.status, 0, "{version}: {}", check.stderr);
    }
}

#[test]
fn the_older_formats_leave_out_what_their_reference_never_writes() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let nodes: Vec<Value> = serde_json::from_str(&project.read(GRAPH)).unwrap();
        let entries: Vec<&Value> = nodes
            .iter()
            .flat_map(|node| node["sensors_applicable"].as_array().unwrap())
            .collect();
        assert!(!entries.is_empty());
        for entry in entries {
            let keys: Vec<&str> = entry
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert!(
                keys == ["id", "path", "matches"] || keys == ["id", "path"],
                "{version}: {keys:?}"
            );
        }
        let has_review_class = nodes.iter().any(|node| node.get("review_class").is_some());
        assert_eq!(has_review_class, version.starts_with("2.6"), "{version}");
    }
}

#[test]
fn graph_format_overrides_the_detection_and_a_new_project_gets_the_newest() {
    let project = TestProject::reference_install("2.6.54");
    let upgraded = project.run(&["compile", "--graph-format", "gate"]);
    assert_eq!(upgraded.status, 0, "{}", upgraded.stderr);
    assert!(
        !upgraded.stderr.contains("graph format"),
        "{}",
        upgraded.stderr
    );
    let graph = project.read(GRAPH);
    assert!(graph.contains("\"fire_on\": \"write\""));
    // The graph now has the newest shape, so a plain compile keeps it.
    let again = project.run(&["compile", "--force"]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(project.read(GRAPH), graph);
    assert!(again.stderr.contains("up to date:"), "{}", again.stderr);

    // The default framework sets review fields 2.5 has no place for, and gate-fired sensors
    // 2.6 cannot express: the first is refused, the second compiles with warnings.
    let fresh = TestProject::default_framework();
    let oldest = fresh.run(&["compile", "--graph-format", "2.5"]);
    assert_eq!(oldest.status, 1, "{}", oldest.stderr);
    assert!(
        oldest
            .stderr
            .contains("(2.5, from --graph-format) does not carry"),
        "{}",
        oldest.stderr
    );
    assert!(!fresh.exists(GRAPH), "nothing written");
    let older = fresh.run(&["compile", "--graph-format", "2.6"]);
    assert_eq!(older.status, 0, "{}", older.stderr);
    assert!(
        older
            .stderr
            .contains("(graph format 2.6, from --graph-format)"),
        "{}",
        older.stderr
    );
    assert!(
        older.stderr.contains("declares fire_on: gate"),
        "{}",
        older.stderr
    );
    let graph = fresh.read(GRAPH);
    assert!(!graph.contains("\"fire_on\""));
    assert!(graph.contains("\"review_class\""));
    let newest = fresh.run(&["compile", "--graph-format", "gate"]);
    assert_eq!(newest.status, 0, "{}", newest.stderr);
    assert!(fresh.read(GRAPH).contains("\"fire_on\""));

    let bad = fresh.run(&["compile", "--graph-format", "2.7"]);
    assert_eq!(bad.status, 2);
    assert!(
        bad.stderr.contains("unknown graph format \"2.7\""),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_field_the_installs_format_cannot_carry_is_refused_and_nothing_is_written() {
    let project = TestProject::reference_install("2.6.54");
    let graph = project.read(GRAPH);
    let text = project.read(REVIEWED_STAGE);
    assert!(text.contains("\nreviewer:"), "the stage has a reviewer");
    project.write(
        REVIEWED_STAGE,
        &text.replacen(
            "\nreviewer:",
            "\nreview_artifact: intent-statement\nreviewer:",
            1,
        ),
    );
    let compiled = project.run(&["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stderr);
    let diagnostic = only_diagnostic(&compiled);
    assert_eq!(diagnostic["code"], "not-in-graph-format");
    assert_eq!(diagnostic["severity"], "error");
    assert_eq!(
        diagnostic["message"],
        "stage \"intent-capture\" sets review_artifact, which this install's graph format (2.6, kept from the existing stage-graph.json) does not carry"
    );
    assert_eq!(project.read(GRAPH), graph);
    let upgraded = project.run(&["compile", "--graph-format", "gate"]);
    assert_eq!(upgraded.status, 0, "{}", upgraded.stderr);
    assert!(
        project
            .read(GRAPH)
            .contains("\"review_artifact\": \"intent-statement\"")
    );
}

#[test]
fn a_gate_fired_or_blocking_manifest_in_an_older_format_is_warned_about() {
    let project = TestProject::reference_install("2.6.54");
    let manifest = ".claude/sensors/aidlc-required-sections.md";
    let text = project.read(manifest);
    project.write(
        manifest,
        &text.replacen(
            "default_severity: advisory",
            "default_severity: blocking\nfire_on: gate",
            1,
        ),
    );
    let compiled = project.run(&["compile", "--format", "json"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let diagnostic = only_diagnostic(&compiled);
    assert_eq!(diagnostic["code"], "not-in-graph-format");
    assert_eq!(diagnostic["severity"], "warning");
    assert_eq!(
        diagnostic["message"],
        "sensor \"required-sections\" declares fire_on: gate and default_severity: blocking, but this install's graph format (2.6, kept from the existing stage-graph.json) carries neither: it fires on writes and is advisory"
    );
}

#[test]
fn the_references_drift_guard_passes_on_the_tree_aidlc_compiled_and_ours_on_the_references() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    for version in REFERENCE_VERSIONS {
        let ours = TestProject::reference_install(version);
        let compiled = ours.run(&["compile", "--force"]);
        assert_eq!(compiled.status, 0, "{version}: {}", compiled.stderr);
        let their_check = run_bun(
            &bun,
            &ours,
            &[".claude/tools/aidlc-graph.ts", "compile", "--check"],
        );
        assert_eq!(
            their_check.status, 0,
            "{version}: the reference's compile --check failed after aidlc compile:\n{}{}",
            their_check.stdout, their_check.stderr
        );

        let theirs = TestProject::reference_install(version);
        let reference = run_bun(&bun, &theirs, &[".claude/tools/aidlc-graph.ts", "compile"]);
        assert_eq!(
            reference.status, 0,
            "{version}: the reference's compile failed:\n{}{}",
            reference.stdout, reference.stderr
        );
        let our_check = theirs.run(&["compile", "--check"]);
        assert_eq!(
            our_check.status, 0,
            "{version}: aidlc compile --check failed after the reference's compile: {}",
            our_check.stderr
        );
    }
}
