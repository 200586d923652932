//! The salsa event log proves which queries re-run after an edit.

use aidlc::db::{CompilerDatabase, ExecutionLog, FileContents, Project, SourceFile};
use aidlc::discover::{Harness, Layout};

use crate::support::TestProject;

struct Session {
    db: CompilerDatabase,
    log: ExecutionLog,
}

impl Session {
    fn new(project: &TestProject) -> Self {
        let log = ExecutionLog::default();
        let mut db = CompilerDatabase::with_execution_log(log.clone());
        let layout = Layout::new(&project.root, Harness::Claude, &|_| None);
        aidlc::discover::load_project(&mut db, &layout);
        let outcome = aidlc::compile::compile(&db);
        assert_eq!(outcome.n_errors(), 0, "{:?}", outcome.diagnostics);
        Self { db, log }
    }

    fn file(&self, path: &str) -> SourceFile {
        let project = Project::get(&self.db);
        let stages = project.stage_files(&self.db).iter().map(|entry| entry.file);
        let all: Vec<SourceFile> = stages
            .chain(project.sensor_files(&self.db).iter().copied())
            .collect();
        all.into_iter()
            .find(|file| file.path(&self.db) == path)
            .unwrap_or_else(|| panic!("no input {path}"))
    }

    /// Apply `edit` to a file's text, recompile, and return the queries that executed.
    fn edit(&mut self, path: &str, edit: impl Fn(&str) -> String) -> Vec<String> {
        let file = self.file(path);
        let FileContents::Text(text) = file.contents(&self.db).clone() else {
            panic!("not text")
        };
        assert!(self.db.update_file(file, FileContents::Text(edit(&text))));
        self.log.lock().unwrap().clear();
        let outcome = aidlc::compile::compile(&self.db);
        assert_eq!(outcome.n_errors(), 0, "{:?}", outcome.diagnostics);
        self.log.lock().unwrap().clone()
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
}
