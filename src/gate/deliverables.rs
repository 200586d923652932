//! A stage's deliverables: its declared output files that exist on disk (upstream §5.2, D6).
//!
//! Invariants:
//! - every deliverable returned is a canonical absolute path of a regular file whose base name
//!   is a declared output of the stage and which lies inside one of the stage's canonical
//!   produce folders;
//! - a produce folder or deliverable that resolves outside the project or the produce folders
//!   (an absolute path, `..`, a symlink) is refused with the reference's message, before any
//!   sensor fires;
//! - a path named like a declared output that is not a regular file (a folder, FIFO, socket or
//!   device) is returned apart, with its kind, and never opened: only its metadata is read, so
//!   a FIFO cannot hang a sensor (issue 10, item 13).

use camino::{Utf8Path, Utf8PathBuf};

use crate::dispatch::graph_file::produce_dirs;
use crate::protocol::output_paths::{artifact_file_name, declared_output_file_names};
use crate::protocol::stage_node::GraphNode;
use crate::workspace::Workspace;

/// Why a stage's deliverables cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliverableError {
    #[error(
        "Refusing gate sensor dispatch for \"{slug}\": resolved produce directory \"{dir}\" escapes the project root after canonicalization."
    )]
    ProduceDirEscapes { slug: String, dir: Utf8PathBuf },
    #[error(
        "Refusing gate sensor artifact \"{candidate}\" for \"{slug}\": the canonical path is outside the stage's resolved produce directories."
    )]
    ArtifactEscapes { slug: String, candidate: String },
}

/// The declared file names of a stage: `produces ∪ optional_produces`, markers included.
pub fn declared_file_names(node: &GraphNode) -> Vec<String> {
    declared_output_file_names(&node.stage_outputs())
}

/// What a stage has on disk under its declared output names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageDeliverables {
    /// Regular files: the deliverables sensors fire on.
    pub files: Vec<Utf8PathBuf>,
    /// Paths named like a declared output that are not regular files: skipped, never opened.
    pub not_regular: Vec<NotARegularFile>,
}

/// A canonical path named like a declared output that is not a regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotARegularFile {
    pub path: Utf8PathBuf,
    /// What it is, as `fs_util::not_regular_file_kind` names it (`a directory`, `a FIFO (named pipe)`, …).
    pub kind: &'static str,
}

/// The stage's deliverables on disk, canonical and absolute, in folder then declaration order;
/// `artifacts` adds the `--artifacts` tokens of the reference.
pub fn existing_deliverables(
    workspace: &Workspace,
    record: &Utf8Path,
    node: &GraphNode,
    artifacts: &[String],
) -> Result<StageDeliverables, DeliverableError> {
    let project_dir = workspace.project_dir();
    let canonical_project = project_dir
        .canonicalize_utf8()
        .unwrap_or_else(|_| project_dir.to_owned());
    let mut canonical_dirs = Vec::new();
    for dir in produce_dirs(workspace, record, node) {
        let Ok(canonical) = dir.canonicalize_utf8() else {
            continue;
        };
        if !canonical.starts_with(&canonical_project) {
            return Err(DeliverableError::ProduceDirEscapes {
                slug: node.slug.clone(),
                dir: canonical,
            });
        }
        canonical_dirs.push(canonical);
    }
    let names = declared_file_names(node);
    let mut candidates: Vec<(String, Utf8PathBuf)> = Vec::new();
    for dir in &canonical_dirs {
        for name in &names {
            candidates.push((name.clone(), dir.join(name)));
        }
    }
    for token in artifacts
        .iter()
        .map(|token| token.trim())
        .filter(|t| !t.is_empty())
    {
        candidates.extend(token_candidates(
            project_dir,
            &canonical_dirs,
            &names,
            token,
        ));
    }
    let mut found = StageDeliverables::default();
    for (shown, candidate) in candidates {
        let Some(name) = candidate.file_name() else {
            continue;
        };
        if !names.iter().any(|declared| declared == name) || !candidate.exists() {
            continue;
        }
        let Ok(canonical) = candidate.canonicalize_utf8() else {
            continue;
        };
        if !canonical_dirs.iter().any(|dir| canonical.starts_with(dir)) {
            return Err(DeliverableError::ArtifactEscapes {
                slug: node.slug.clone(),
                candidate: shown,
            });
        }
        match crate::fs_util::not_regular_file_kind(&canonical) {
            None if !found.files.contains(&canonical) => found.files.push(canonical),
            Some(kind)
                if !found
                    .not_regular
                    .iter()
                    .any(|known| known.path == canonical) =>
            {
                found.not_regular.push(NotARegularFile {
                    path: canonical,
                    kind,
                });
            }
            _ => {}
        }
    }
    Ok(found)
}

/// The paths an `--artifacts` token stands for: as given (against the project when it has a
/// separator or is absolute) and inside each produce folder; with `.md` added when its base
/// name is not itself declared.
fn token_candidates(
    project_dir: &Utf8Path,
    dirs: &[Utf8PathBuf],
    names: &[String],
    token: &str,
) -> Vec<(String, Utf8PathBuf)> {
    let base = token.rsplit(['/', '\\']).next().unwrap_or(token);
    let mut forms = vec![token.to_owned()];
    if !names.iter().any(|name| name == base) {
        forms.push(artifact_file_name(token));
    }
    let mut candidates = Vec::new();
    for form in forms {
        let normal = form.replace('\\', "/");
        if Utf8Path::new(&normal).is_absolute() || normal.contains('/') {
            candidates.push((form.clone(), project_dir.join(&normal)));
        }
        for dir in dirs {
            candidates.push((form.clone(), dir.join(&normal)));
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(slug: &str, phase: &str, produces: &[&str]) -> GraphNode {
        crate::protocol::stage_graph::node_from_json(&serde_json::json!({
            "slug": slug, "phase": phase, "produces": produces, "consumes": [],
            "sensors_applicable": [],
        }))
        .unwrap()
    }

    fn workspace_of(root: &Utf8Path) -> Workspace {
        Workspace::resolve(crate::discover::Layout::new(
            root,
            crate::discover::Harness::Claude,
            &|_| None,
        ))
    }

    fn project() -> (tempfile::TempDir, Utf8PathBuf, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let record = root.join("aidlc/spaces/default/intents/261130-x");
        std::fs::create_dir_all(record.join("inception/user-stories")).unwrap();
        (dir, root, record)
    }

    #[test]
    fn declared_outputs_that_exist_are_found_in_order() {
        let (_dir, root, record) = project();
        let stage = node(
            "user-stories",
            "inception",
            &["stories", "personas", "traceability"],
        );
        let folder = record.join("inception/user-stories");
        std::fs::write(folder.join("personas.md"), "x").unwrap();
        std::fs::write(folder.join("stories.md"), "x").unwrap();
        std::fs::write(folder.join("notes.md"), "not declared").unwrap();
        std::fs::write(folder.join("traceability.json"), "{}").unwrap();
        let found = existing_deliverables(&workspace_of(&root), &record, &stage, &[]).unwrap();
        let names: Vec<&str> = found.files.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(names, ["stories.md", "personas.md", "traceability.json"]);
        assert!(found.not_regular.is_empty());
    }

    #[test]
    fn outputs_that_are_not_regular_files_are_set_apart_unopened() {
        let (_dir, root, record) = project();
        let stage = node(
            "user-stories",
            "inception",
            &["stories", "personas", "notes"],
        );
        let folder = record.join("inception/user-stories");
        std::fs::write(folder.join("stories.md"), "x").unwrap();
        std::fs::create_dir(folder.join("personas.md")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(folder.join("notes.md").as_str())
            .status()
            .unwrap();
        assert!(made.success());
        let found = existing_deliverables(&workspace_of(&root), &record, &stage, &[]).unwrap();
        let names: Vec<&str> = found.files.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(names, ["stories.md"]);
        let special: Vec<(&str, &str)> = found
            .not_regular
            .iter()
            .map(|entry| (entry.path.file_name().unwrap(), entry.kind))
            .collect();
        assert_eq!(
            special,
            [
                ("personas.md", "a directory"),
                ("notes.md", "a FIFO (named pipe)")
            ]
        );
    }

    #[test]
    fn a_symlink_out_of_the_produce_folder_is_refused() {
        let (_dir, root, record) = project();
        let stage = node("user-stories", "inception", &["stories"]);
        std::fs::write(root.join("outside.md"), "x").unwrap();
        std::os::unix::fs::symlink(
            root.join("outside.md"),
            record.join("inception/user-stories/stories.md"),
        )
        .unwrap();
        let error = existing_deliverables(&workspace_of(&root), &record, &stage, &[]).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("Refusing gate sensor artifact"),
            "{error}"
        );
    }

    #[test]
    fn artifacts_tokens_with_dot_dot_cannot_escape() {
        let (_dir, root, record) = project();
        let stage = node("user-stories", "inception", &["stories"]);
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::fs::write(root.join("elsewhere/stories.md"), "x").unwrap();
        let token = "aidlc/spaces/../../elsewhere/stories.md".to_owned();
        let error =
            existing_deliverables(&workspace_of(&root), &record, &stage, &[token]).unwrap_err();
        assert!(
            matches!(error, DeliverableError::ArtifactEscapes { .. }),
            "{error}"
        );
    }

    #[test]
    fn no_folder_means_no_deliverables() {
        let (_dir, root, record) = project();
        let stage = node("domain-design", "construction", &["domain-model"]);
        assert_eq!(
            existing_deliverables(&workspace_of(&root), &record, &stage, &[]).unwrap(),
            StageDeliverables::default()
        );
    }
}
