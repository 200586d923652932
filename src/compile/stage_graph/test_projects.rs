//! Projects loaded into a database, for the tests that compare the graph's and the grid's
//! direct writers with the general `pretty_json` path on every stage they can find.

use camino::Utf8PathBuf;

use crate::compile::db::CompilerDatabase;
use crate::compile::discover::{self, Layout, ProjectInputs};
use crate::harness::Harness;
use crate::protocol::graph_format::GraphFormat;

/// A project on disk, loaded into a fresh database.
pub struct LoadedProject {
    pub name: String,
    pub db: CompilerDatabase,
    _inputs: ProjectInputs,
    _dir: tempfile::TempDir,
}

/// A stage that sets every optional field, with strings that need escaping (a quote, a
/// backslash, a control character, non-ASCII text).
const EVERY_FIELD_STAGE: &str = "---
slug: acme-every-field
number: \"2.9\"
name: Every \"Field\"
plugin: acme
phase: inception
execution: CONDITIONAL
condition: \"Runs when \\\"asked\\\" \\\\ or \\u0007 — ü\"
lead_agent: aidlc-product-agent
support_agents: [aidlc-architect-agent]
mode: subagent
for_each: unit-of-work
workspace_requires: true
produces:
  - acme-one
  - acme-two
optional_produces: [acme-three]
produces_kinds:
  acme-two: [service, ui]
  acme-one: [library]
consumes:
  - artifact: requirements
    required: true
    conditional_on: brownfield
  - artifact: acme-none
    required: false
requires_stage: [requirements-analysis, requirements-analysis]
sensors: [required-sections]
scopes: [feature, 'mvp']
reviewer: aidlc-architect-agent
review_artifact: acme-one
reviewer_max_iterations: 9007199254740993
review_class: advisory
summary_confirmation: required
inputs: \"Reads: everything\"
outputs: Writes acme-one.md
---

# Every field
";

/// The default framework, both reference installs, generated projects, and the default
/// framework with [`EVERY_FIELD_STAGE`] in each graph format.
pub fn loaded_projects() -> Vec<LoadedProject> {
    let mut projects = Vec::new();
    projects.push(load("default framework", None, |root| {
        crate::compile::framework::init_project(root, Harness::Claude, false).unwrap();
    }));
    for version in ["2.5.36", "2.6.54"] {
        let source = Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference-installs")
            .join(version);
        projects.push(load(&format!("reference {version}"), None, |root| {
            copy_tree(&source, root);
        }));
    }
    for seed in [1, 2] {
        projects.push(load(&format!("synthetic seed {seed}"), None, |root| {
            crate::synthetic::SyntheticProject::new(120, 9)
                .with_seed(seed)
                .write_to(root)
                .unwrap();
        }));
    }
    for format in [
        GraphFormat::Reference25,
        GraphFormat::Reference26,
        GraphFormat::Gate,
    ] {
        projects.push(load(
            &format!("every field, {format}"),
            Some(format),
            |root| {
                crate::compile::framework::init_project(root, Harness::Claude, false).unwrap();
                std::fs::write(
                    root.join(".claude/aidlc-common/stages/inception/acme-every-field.md"),
                    EVERY_FIELD_STAGE,
                )
                .unwrap();
            },
        ));
    }
    projects
}

fn load(
    name: &str,
    format: Option<GraphFormat>,
    write: impl FnOnce(&camino::Utf8Path),
) -> LoadedProject {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    write(&root);
    let layout = Layout::new(&root, Harness::Claude, &|_| None).with_graph_format(format);
    let mut db = CompilerDatabase::default();
    let inputs = discover::load_project(&mut db, &layout);
    LoadedProject {
        name: name.to_owned(),
        db,
        _inputs: inputs,
        _dir: dir,
    }
}

fn copy_tree(from: &camino::Utf8Path, to: &camino::Utf8Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in from.read_dir_utf8().unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
