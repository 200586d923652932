//! The salsa event log proves which queries re-run after an edit.

use std::collections::HashSet;

use aidlc::db::{CompilerDatabase, ExecutionLog};
use aidlc::discover::{Harness, InputChanges, Layout, ProjectInputs, Reread};
use camino::Utf8PathBuf;

use crate::support::{TestProject, stage};

/// A warm database over a temp project, changed the way watch mode changes it: edit the file
/// on disk, then refresh the inputs naming that file.
struct Session<'p> {
    project: &'p TestProject,
    layout: Layout,
    db: CompilerDatabase,
    inputs: ProjectInputs,
    log: ExecutionLog,
}

impl<'p> Session<'p> {
    fn new(project: &'p TestProject) -> Self {
        let log = ExecutionLog::default();
        let mut db = CompilerDatabase::with_execution_log(log.clone());
        let layout = Layout::new(&project.root, Harness::Claude, &|_| None);
        let inputs = aidlc::discover::load_project(&mut db, &layout);
        let outcome = aidlc::compile::compile(&db);
        assert_eq!(outcome.n_errors(), 0, "{:?}", outcome.diagnostics);
        Self {
            project,
            layout,
            db,
            inputs,
            log,
        }
    }

    /// Refresh after the files at `paths` changed on disk, recompile, and return what the
    /// refresh saw and the queries that executed.
    fn refresh(&mut self, paths: &[&str]) -> (InputChanges, Vec<String>) {
        let named: HashSet<Utf8PathBuf> = paths.iter().map(|p| self.project.path(p)).collect();
        self.log.lock().unwrap().clear();
        let changes = self
            .inputs
            .refresh(&mut self.db, &self.layout, Reread::Paths(&named));
        let outcome = aidlc::compile::compile(&self.db);
        assert_eq!(outcome.n_errors(), 0, "{:?}", outcome.diagnostics);
        (changes, self.log.lock().unwrap().clone())
    }

    /// Apply `edit` to a file on disk, refresh, recompile, and return the queries that ran.
    fn edit(&mut self, path: &str, edit: impl Fn(&str) -> String) -> Vec<String> {
        let text = self.project.read(path);
        self.project.write(path, &edit(&text));
        let (changes, log) = self.refresh(&[path]);
        assert_eq!(changes.modified, [path], "{changes:?}");
        log
    }
}

fn count(log: &[String], query: &str) -> usize {
    log.iter()
        .filter(|entry| entry.starts_with(&format!("{query}(")))
        .count()
}

#[test]
fn a_prose_edit_reparses_one_stage_and_resolves_nothing() {
    let project = TestProject::default_framework();
    let mut session = Session::new(&project);
    let log = session.edit(
        ".claude/aidlc-common/stages/inception/requirements-analysis.md",
        |text| format!("{text}\nOne more line of prose.\n"),
    );
    assert_eq!(count(&log, "parsed_stage"), 1, "{log:#?}");
    for query in [
        "sensors_applicable",
        "dead_gate_bindings",
        "stage_node_json",
        "stage_numbering",
        "sensor_registry",
        "graph_diagnostics",
        "stage_graph_json",
    ] {
        assert_eq!(count(&log, query), 0, "{query} re-ran: {log:#?}");
    }
}

#[test]
fn a_manifest_edit_re_resolves_only_the_stages_importing_it() {
    let project = TestProject::default_framework();
    let mut session = Session::new(&project);
    let log = session.edit(".claude/sensors/aidlc-linter.md", |text| {
        text.replace("\"**/*.{ts,js}\"", "\"**/*.{ts,js,mjs}\"")
    });
    assert_eq!(count(&log, "parsed_manifest"), 1, "{log:#?}");
    assert_eq!(count(&log, "parsed_stage"), 0, "{log:#?}");
    // functional-design, nfr-requirements, nfr-design, infrastructure-design, ci-pipeline.
    assert_eq!(count(&log, "sensors_applicable"), 5, "{log:#?}");
    assert_eq!(count(&log, "stage_node_json"), 5, "{log:#?}");
    assert_eq!(count(&log, "stage_numbering"), 0, "{log:#?}");
}

#[test]
fn a_sensor_import_edit_re_resolves_that_stage_only() {
    let project = TestProject::default_framework();
    let mut session = Session::new(&project);
    let log = session.edit(
        ".claude/aidlc-common/stages/construction/build-and-test.md",
        |text| text.replace("  - type-check\n", "  - type-check\n  - linter\n"),
    );
    assert_eq!(count(&log, "parsed_stage"), 1, "{log:#?}");
    assert_eq!(count(&log, "sensors_applicable"), 1, "{log:#?}");
    assert_eq!(count(&log, "stage_node_json"), 1, "{log:#?}");
    // The projections the whole-project queries read stay equal, so those do not re-run.
    for query in ["stage_numbering", "graph_diagnostics", "scope_grid_json"] {
        assert_eq!(count(&log, query), 0, "{query} re-ran: {log:#?}");
    }
}

#[test]
fn rewriting_a_file_with_the_same_bytes_runs_nothing() {
    let project = TestProject::default_framework();
    let mut session = Session::new(&project);
    let path = ".claude/aidlc-common/stages/inception/requirements-analysis.md";
    project.write(path, &project.read(path));
    let (changes, log) = session.refresh(&[path]);
    assert!(changes.is_empty(), "{changes:?}");
    assert!(log.is_empty(), "{log:#?}");
}

#[test]
fn a_new_stage_is_parsed_alone_and_emits_only_its_own_node() {
    let project = TestProject::default_framework();
    // The existing graph pins every other stage's number, so only the new node is emitted.
    assert_eq!(project.compile().status, 0);
    let mut session = Session::new(&project);
    let path = ".claude/aidlc-common/stages/operation/extra-stage.md";
    project.write(
        path,
        &stage("extra-stage", "operation", "[]", "[]", "").replace(
            "lead_agent: aidlc-demo-agent",
            "lead_agent: aidlc-architect-agent",
        ),
    );
    let (changes, log) = session.refresh(&[path]);
    assert_eq!(changes.added, [path], "{changes:?}");
    assert_eq!(count(&log, "parsed_stage"), 1, "{log:#?}");
    assert_eq!(count(&log, "parsed_manifest"), 0, "{log:#?}");
    assert_eq!(count(&log, "stage_numbering"), 1, "{log:#?}");
    assert_eq!(count(&log, "stage_node_json"), 1, "{log:#?}");
}

#[test]
fn a_deleted_stage_drops_out_without_reparsing_the_others() {
    let project = TestProject::default_framework();
    let mut session = Session::new(&project);
    let path = ".claude/aidlc-common/stages/operation/feedback-optimization.md";
    assert!(project.exists(path), "a stage no other stage requires");
    project.remove(path);
    let (changes, log) = session.refresh(&[path]);
    assert_eq!(changes.removed, [path], "{changes:?}");
    assert_eq!(count(&log, "parsed_stage"), 0, "{log:#?}");
    assert_eq!(count(&log, "sensors_applicable"), 0, "{log:#?}");
}

/// Watch mode hands the rows of the graph it wrote to the next compile instead of parsing the
/// file back; those rows must be exactly what parsing the emitted graph gives.
#[test]
fn graph_rows_equal_the_rows_parsed_back_from_the_emitted_graph() {
    let synthetic = TestProject::empty();
    aidlc::synthetic::SyntheticProject::new(120, 9)
        .write_to(&synthetic.root)
        .unwrap();
    let default = TestProject::default_framework();
    assert_eq!(default.compile().status, 0);
    let new_stage = ".claude/aidlc-common/stages/operation/extra-stage.md";
    default.write(
        new_stage,
        &stage("extra-stage", "operation", "[]", "[]", "")
            .replace("aidlc-demo-agent", "aidlc-architect-agent"),
    );
    for project in [&synthetic, &default] {
        let session = Session::new(project);
        let outcome = aidlc::compile::compile(&session.db);
        let nodes: Vec<serde_json::Value> = serde_json::from_str(&outcome.stage_graph).unwrap();
        let parsed: std::collections::BTreeMap<String, (String, String)> = nodes
            .iter()
            .map(|node| {
                let field = |key: &str| node[key].as_str().unwrap().to_owned();
                (field("slug"), (field("number"), field("name")))
            })
            .collect();
        assert_eq!(*aidlc::graph::numbering::graph_rows(&session.db), parsed);
    }
}
