//! The salsa event log proves which queries re-run after an edit.

use std::collections::HashSet;

use aidlc::compile::db::{CompilerDatabase, ExecutionLog, FileContents, Project};
use aidlc::compile::discover::{InputChanges, Layout, ProjectInputs, Reread};
use aidlc::harness::Harness;
use camino::Utf8PathBuf;

use crate::synthetic::SyntheticProject;

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
        Self::over(
            project,
            CompilerDatabase::with_execution_log(log.clone()),
            log,
        )
    }

    /// A session whose log also names every memo validated without re-running.
    fn logging_validations(project: &'p TestProject) -> Self {
        let log = ExecutionLog::default();
        Self::over(
            project,
            CompilerDatabase::with_validation_log(log.clone()),
            log,
        )
    }

    fn over(project: &'p TestProject, mut db: CompilerDatabase, log: ExecutionLog) -> Self {
        let layout = Layout::new(&project.root, Harness::Claude, &|_| None);
        let inputs = aidlc::compile::discover::load_project(&mut db, &layout);
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
        "stage_node_body",
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
    assert_eq!(count(&log, "stage_node_body"), 5, "{log:#?}");
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
    assert_eq!(count(&log, "stage_node_body"), 1, "{log:#?}");
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
    assert_eq!(count(&log, "stage_node_body"), 1, "{log:#?}");
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
    crate::synthetic::SyntheticProject::new(120, 9)
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
        assert_eq!(
            *aidlc::compile::stage_graph::numbering::stage_numbering(&session.db).by_slug,
            parsed
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Large projects: sources start durable (`discover::durability_for`)
// ---------------------------------------------------------------------------------------------

const LARGE_PROJECT_SENSORS: usize = 12;

/// A synthetic project of more input files than `DURABLE_THRESHOLD`, compiled once.
fn large_project() -> (TestProject, SyntheticProject) {
    let synthetic = SyntheticProject::new(
        aidlc::compile::discover::DURABLE_THRESHOLD,
        LARGE_PROJECT_SENSORS,
    );
    let project = TestProject::empty();
    synthetic.write_to(&project.root).unwrap();
    assert_eq!(project.compile().status, 0);
    (project, synthetic)
}

/// A sensor id of the project that stage `stage_index` does not import.
fn sensor_not_imported_by(synthetic: &SyntheticProject, stage_index: usize) -> String {
    let imported = synthetic.stage_sensor_ids(stage_index);
    (0..LARGE_PROJECT_SENSORS)
        .map(|index| synthetic.sensor_id(index))
        .find(|id| !imported.contains(id))
        .unwrap()
}

/// `text` with one more entry, `  - <sensor>`, at the top of its `sensors:` list.
fn with_extra_import(text: &str, sensor: &str) -> String {
    assert!(
        text.contains("\nsensors:\n"),
        "a block sensors list: {text}"
    );
    text.replacen("\nsensors:\n", &format!("\nsensors:\n  - {sensor}\n"), 1)
}

/// In a large project, the first edit of a stage lowers that file's durability, so its own
/// memos re-run even where their values come out equal; the per-stage facts the whole-project
/// queries gather keep their durability, so those queries still do not re-run for a prose
/// edit. A later edit of the same file re-runs exactly what the same edit of a small project
/// does.
#[test]
fn a_large_project_re_runs_one_stage_on_its_first_and_later_edits() {
    let (project, synthetic) = large_project();
    let mut session = Session::new(&project);
    let path = synthetic.stage_path(7);
    let first = session.edit(path.as_str(), |text| format!("{text}\nOne more line.\n"));
    assert_eq!(count(&first, "parsed_stage"), 1, "{first:#?}");
    assert_eq!(count(&first, "stage_node_body"), 1, "{first:#?}");
    for query in ["stage_numbering", "graph_diagnostics", "scope_grid_json"] {
        assert_eq!(count(&first, query), 0, "{query} re-ran: {first:#?}");
    }
    let later = session.edit(path.as_str(), |text| format!("{text}Another line.\n"));
    assert_eq!(count(&later, "parsed_stage"), 1, "{later:#?}");
    for query in [
        "sensors_applicable",
        "dead_gate_bindings",
        "stage_node_body",
        "stage_numbering",
        "graph_diagnostics",
        "stage_graph_json",
    ] {
        assert_eq!(count(&later, query), 0, "{query} re-ran: {later:#?}");
    }
    let unlisted = sensor_not_imported_by(&synthetic, 7);
    let import = session.edit(path.as_str(), |text| with_extra_import(text, &unlisted));
    assert_eq!(count(&import, "sensors_applicable"), 1, "{import:#?}");
    assert_eq!(count(&import, "stage_node_body"), 1, "{import:#?}");
    assert_eq!(count(&import, "stage_graph_json"), 1, "{import:#?}");
    assert_eq!(count(&import, "stage_numbering"), 0, "{import:#?}");
}

/// The point of durable sources: after one stage's edit, the memos of every untouched stage
/// are trusted by a durability check, not re-validated dependency by dependency. With every
/// input `LOW` (as in a small project), each stage's imports would be looked at again.
#[test]
fn a_later_edit_in_a_large_project_looks_at_no_untouched_stage_s_imports() {
    let (project, synthetic) = large_project();
    let mut session = Session::logging_validations(&project);
    let path = synthetic.stage_path(3);
    session.edit(path.as_str(), |text| format!("{text}\nOne more line.\n"));
    let log = session.edit(path.as_str(), |text| format!("{text}Another line.\n"));
    let looked_at = |query: &str| count(&log, &format!("validated {query}"));
    // Only the edited stage's own: re-validated (it was parsed again), never another's.
    assert!(looked_at("sensors_applicable") <= 1, "{log:#?}");
    assert!(looked_at("dead_gate_bindings") <= 1, "{log:#?}");
    // Yet every stage's diagnostics and node were confirmed, one check each.
    let untouched_stages = aidlc::compile::discover::DURABLE_THRESHOLD - 1;
    assert!(
        looked_at("stage_file_diagnostics") >= untouched_stages,
        "{log:#?}"
    );
}

/// Joining the graph after an edit reads the node bodies a chunk of the stage list at a time,
/// and a chunk whose files are untouched is trusted by one durability check: only the edited
/// stage's chunk looks at its bodies one by one, never every stage's. The per-stage facts the
/// whole-project queries gather are chunked the same way, so no query looks at each stage.
#[test]
fn a_later_edit_in_a_large_project_confirms_untouched_nodes_a_chunk_at_a_time() {
    use aidlc::compile::stage_graph::stage_chunks::stage_chunk_len;
    let (project, synthetic) = large_project();
    let mut session = Session::logging_validations(&project);
    let path = synthetic.stage_path(5);
    let unlisted = sensor_not_imported_by(&synthetic, 5);
    session.edit(path.as_str(), |text| with_extra_import(text, &unlisted));
    let log = session.edit(path.as_str(), |text| {
        text.replacen(&format!("  - {unlisted}\n"), "", 1)
    });
    assert_eq!(
        count(&log, "stage_graph_json"),
        1,
        "the graph changed: {log:#?}"
    );
    let looked_at = |query: &str| count(&log, &format!("validated {query}"));
    let stages = aidlc::compile::discover::DURABLE_THRESHOLD;
    let chunk_len = stage_chunk_len(stages);
    assert!(stages > 2 * chunk_len, "more than two chunks");
    assert!(
        looked_at("stage_node_body") <= chunk_len,
        "{} bodies looked at: {log:#?}",
        looked_at("stage_node_body")
    );
    for chunk_query in [
        "stage_node_bodies_in_chunk",
        "stage_headers_in_chunk",
        "stage_check_facts_in_chunk",
        "stage_scope_rows_in_chunk",
    ] {
        assert!(
            looked_at(chunk_query) + count(&log, chunk_query) <= stages.div_ceil(chunk_len),
            "{chunk_query}: {log:#?}"
        );
    }
}

/// Whatever the sequence of edits, a durable session's rebuild gives what a fresh compile of
/// the same files gives: the graph, the grid and every diagnostic, byte for byte. Covers the
/// handed-over graph rows and format evidence, including after someone else rewrites the
/// graph in another format with another number.
#[test]
fn a_durable_watch_session_compiles_what_a_fresh_compile_does() {
    let (project, synthetic) = large_project();
    let layout = Layout::new(&project.root, Harness::Claude, &|_| None);
    let (mut session, first) = aidlc::compile::watch::WatchSession::start(layout.clone());
    assert_eq!(
        first.outcome.n_errors(),
        0,
        "{:?}",
        first.outcome.diagnostics
    );
    let stage = synthetic.stage_path(11).to_string();
    let other_stage = synthetic.stage_path(40).to_string();
    let sensor = synthetic.sensor_path(2).to_string();
    let unlisted = sensor_not_imported_by(&synthetic, 11);
    let original_stage = project.read(&stage);
    let new_stage = stage_path_beside(&stage, "late-extra-stage");
    let edits: Vec<(&str, EditOnDisk)> = vec![
        (
            "an import",
            Box::new(|p| edit(p, &stage, |t| with_extra_import(t, &unlisted))),
        ),
        (
            "prose",
            Box::new(|p| edit(p, &stage, |t| format!("{t}\nMore prose.\n"))),
        ),
        (
            "the same stage back",
            Box::new(|p| {
                p.write(&stage, &original_stage);
                vec![stage.clone()]
            }),
        ),
        (
            "another stage's import",
            Box::new(|p| edit(p, &other_stage, |t| with_extra_import(t, &unlisted))),
        ),
        (
            "a manifest's matches",
            Box::new(|p| {
                edit(p, &sensor, |t| {
                    t.replace("matches:", "matches: \"**/*.md\"\nold_matches:")
                })
            }),
        ),
        (
            "a new stage",
            Box::new(|p| {
                // Its slug also names what it produces, so those stay unique.
                let text = p
                    .read(&stage)
                    .replace(&synthetic.stage_slug(11), "late-extra-stage");
                p.write(&new_stage, &text);
                vec![new_stage.clone()]
            }),
        ),
        (
            "a deleted stage",
            Box::new(|p| {
                p.remove(&new_stage);
                vec![new_stage.clone()]
            }),
        ),
        (
            "the graph rewritten in the 2.6 format with a moved number",
            Box::new(|p| {
                let mut older = layout.clone();
                older.graph_format = Some(aidlc::protocol::graph_format::GraphFormat::Reference26);
                let mut db = CompilerDatabase::default();
                let _inputs = aidlc::compile::discover::load_project(&mut db, &older);
                let graph = aidlc::compile::compile_once(&db).stage_graph;
                // The last node, moved further on within its phase: still after what it requires.
                let number_at = graph.rfind("\"number\": \"").unwrap() + "\"number\": \"".len();
                let end = number_at + graph[number_at..].find('"').unwrap();
                let (major, _) = graph[number_at..end].split_once('.').unwrap();
                let moved = format!("{}{major}.999{}", &graph[..number_at], &graph[end..]);
                p.write(".claude/tools/data/stage-graph.json", &moved);
                vec![".claude/tools/data/stage-graph.json".to_owned()]
            }),
        ),
    ];
    for (what, make_edit) in edits {
        let changed = make_edit(&project);
        let expected = fresh_compile(&layout);
        let named: HashSet<Utf8PathBuf> = changed.iter().map(|path| project.path(path)).collect();
        let rebuild = session
            .rebuild(Reread::Paths(&named))
            .unwrap_or_else(|| panic!("{what}: no rebuild"));
        assert_eq!(
            rebuild.outcome.stage_graph, expected.stage_graph,
            "{what}: the graph differs from a fresh compile's"
        );
        assert_eq!(
            rebuild.outcome.scope_grid, expected.scope_grid,
            "{what}: the grid differs"
        );
        assert_eq!(
            format!("{:?}", rebuild.outcome.diagnostics),
            format!("{:?}", expected.diagnostics),
            "{what}: the diagnostics differ"
        );
        assert_eq!(
            rebuild.outcome.n_errors(),
            0,
            "{what}: {:?}",
            rebuild.outcome.diagnostics
        );
    }
    let graph = project.read(".claude/tools/data/stage-graph.json");
    assert!(graph.contains(".999\""), "the moved number is kept");
    assert!(!graph.contains("\"fire_on\""), "the 2.6 format is kept");
}

/// An edit of the project's files, returning the project-relative paths it changed.
type EditOnDisk<'a> = Box<dyn Fn(&TestProject) -> Vec<String> + 'a>;

fn edit(project: &TestProject, path: &str, change: impl Fn(&str) -> String) -> Vec<String> {
    let text = project.read(path);
    let changed = change(&text);
    assert_ne!(changed, text, "the edit of {path} changes nothing");
    project.write(path, &changed);
    vec![path.to_owned()]
}

fn stage_path_beside(stage: &str, slug: &str) -> String {
    let (folder, _) = stage.rsplit_once('/').unwrap();
    format!("{folder}/{slug}.md")
}

/// The outcome of a one-shot compile of the files as they are on disk.
fn fresh_compile(layout: &Layout) -> aidlc::compile::CompileOutcome {
    let mut db = CompilerDatabase::default();
    let _inputs = aidlc::compile::discover::load_project(&mut db, layout);
    aidlc::compile::compile_once(&db)
}

/// In a generated stage `summary_confirmation:` follows `sensors:`, so a sensor id added to
/// the list moves it; the cross-stage checks must still not re-run over every stage (the
/// watch-mode edit the benches time).
#[test]
fn a_sensors_edit_that_moves_a_format_dependent_field_does_not_rerun_the_graph_checks() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    let synthetic = SyntheticProject::new(12, 6);
    synthetic.write_to(&root).unwrap();
    let log = ExecutionLog::default();
    let mut db = CompilerDatabase::with_execution_log(log.clone());
    let layout = Layout::new(&root, Harness::Claude, &|_| None);
    let _inputs = aidlc::compile::discover::load_project(&mut db, &layout);
    let before = aidlc::compile::compile(&db);
    assert_eq!(before.n_errors(), 0, "{:?}", before.diagnostics);

    let edited = 5;
    let listed = synthetic.stage_sensor_ids(edited);
    let extra = (0..6)
        .map(|index| synthetic.sensor_id(index))
        .find(|id| !listed.contains(id))
        .unwrap();
    let text = synthetic.stage_text(edited);
    assert!(
        text.find("\nsensors:\n") < text.find("\nsummary_confirmation:"),
        "{text}"
    );
    let new_text = text.replacen("\nsensors:\n", &format!("\nsensors:\n  - {extra}\n"), 1);
    let path = synthetic.stage_path(edited);
    let file = Project::get(&db)
        .stage_files(&db)
        .iter()
        .find(|entry| *entry.file.path(&db) == path)
        .unwrap()
        .file;
    log.lock().unwrap().clear();
    assert!(db.update_file(file, FileContents::Text(std::sync::Arc::new(new_text))));
    let after = aidlc::compile::compile(&db);
    assert_eq!(after.n_errors(), 0, "{:?}", after.diagnostics);
    assert_ne!(
        after.stage_graph, before.stage_graph,
        "the edit changes the graph"
    );
    let log = log.lock().unwrap();
    assert!(
        log.iter().any(|entry| entry.starts_with("parsed_stage(")),
        "{log:#?}"
    );
    assert!(
        !log.iter()
            .any(|entry| entry.starts_with("graph_diagnostics(")),
        "graph_diagnostics re-ran: {log:#?}"
    );
}
