//! A stage's deliverables: its declared output files that exist on disk (D30, D6).
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
//!   a FIFO cannot hang a sensor;
//! - an explicit artifact (`engine gate start --artifacts`) is a file name or a project-relative
//!   path that names an existing regular file inside the stage's canonical produce folders, by
//!   the same containment check as the discovered deliverables; anything else (a line break in
//!   the value, an absolute path, a `..` component, a file that does not exist, one that
//!   resolves outside the folders, one that is not a regular file) refuses the gate before any
//!   row. An accepted one is a deliverable whatever its name, so it is fired on with the
//!   discovered ones.

use camino::{Utf8Path, Utf8PathBuf};

use crate::protocol::output_paths::{artifact_file_name, declared_output_file_names};
use crate::protocol::stage_node::GraphNode;
use crate::runtime::dispatch::compiled_graph::produce_dirs;
use crate::runtime::workspace::Workspace;

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
    #[error("Refusing gate sensor artifact {candidate:?} for \"{slug}\": {why}.")]
    ArtifactRefused {
        slug: String,
        candidate: String,
        why: ArtifactRefusal,
    },
}

/// Why an explicit artifact names no deliverable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactRefusal {
    #[error("a line break or other control character cannot be part of a file name here")]
    ControlCharacter,
    #[error(
        "an absolute path is not accepted; name the file by its name or by its path from the project folder"
    )]
    Absolute,
    #[error("a `..` component is not accepted; name the file by its path from the project folder")]
    ParentComponent,
    #[error("no such file in the stage's produce directories")]
    Missing,
    #[error("it is {0}, not a regular file")]
    NotARegularFile(&'static str),
    #[error("it lies outside the produce directories of unit \"{0}\"")]
    OutsideUnit(String),
}

/// What a stage has on disk under its declared output names, and the explicit artifacts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageDeliverables {
    /// Regular files: the deliverables sensors fire on (the explicit artifacts among them).
    pub files: Vec<Utf8PathBuf>,
    /// Paths named like a declared output that are not regular files: skipped, never opened.
    pub not_regular: Vec<NotARegularFile>,
    /// The explicit artifacts, each as given and as resolved (also in `files`).
    pub explicit: Vec<(String, Utf8PathBuf)>,
}

/// A canonical path named like a declared output that is not a regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotARegularFile {
    pub path: Utf8PathBuf,
    /// What it is, as `fs_util::not_regular_file_kind` names it (`a directory`, `a FIFO (named pipe)`, …).
    pub kind: &'static str,
}

/// The stage's deliverables on disk, canonical and absolute, in folder then declaration order,
/// then the explicit `artifacts` (the `--artifacts` tokens) in the order given.
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
    let folders = ProduceFolders {
        slug: &node.slug,
        canonical_dirs: &canonical_dirs,
    };
    // `produces ∪ optional_produces`, markers included.
    let names = declared_output_file_names(&node.stage_outputs());
    let mut found = StageDeliverables::default();
    for dir in &canonical_dirs {
        for name in &names {
            let candidate = dir.join(name);
            if !candidate.exists() {
                continue;
            }
            let Ok(canonical) = candidate.canonicalize_utf8() else {
                continue;
            };
            folders.check_inside(&canonical, name)?;
            match crate::leaves::fs_util::not_regular_file_kind(&canonical) {
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
    }
    for token in artifacts
        .iter()
        .map(|token| token.trim())
        .filter(|t| !t.is_empty())
    {
        let canonical = folders.explicit_artifact(project_dir, &names, token)?;
        if !found.files.contains(&canonical) {
            found.files.push(canonical.clone());
        }
        found.explicit.push((token.to_owned(), canonical));
    }
    Ok(found)
}

/// The `--artifacts` value split into its tokens, refusing a value with a line break or any
/// other control character before a token is looked at (such a value could not name a file
/// the conductor meant, and would not stay on its line in the gate row).
pub fn artifact_tokens(slug: &str, value: &str) -> Result<Vec<String>, DeliverableError> {
    if value.chars().any(char::is_control) {
        return Err(DeliverableError::ArtifactRefused {
            slug: slug.to_owned(),
            candidate: value.to_owned(),
            why: ArtifactRefusal::ControlCharacter,
        });
    }
    Ok(value.split(',').map(str::to_owned).collect())
}

/// A stage's canonical produce folders: the one containment check of every deliverable,
/// discovered or explicit.
struct ProduceFolders<'a> {
    slug: &'a str,
    canonical_dirs: &'a [Utf8PathBuf],
}

impl ProduceFolders<'_> {
    /// `canonical` lies inside one of the folders; else the reference's refusal, naming
    /// `shown` (the path as it was given or found).
    fn check_inside(&self, canonical: &Utf8Path, shown: &str) -> Result<(), DeliverableError> {
        if self
            .canonical_dirs
            .iter()
            .any(|dir| canonical.starts_with(dir))
        {
            Ok(())
        } else {
            Err(DeliverableError::ArtifactEscapes {
                slug: self.slug.to_owned(),
                candidate: shown.to_owned(),
            })
        }
    }

    fn refused(&self, token: &str, why: ArtifactRefusal) -> DeliverableError {
        DeliverableError::ArtifactRefused {
            slug: self.slug.to_owned(),
            candidate: token.to_owned(),
            why,
        }
    }

    /// The canonical path of one explicit artifact: a file name (looked up in each produce
    /// folder) or a project-relative path, with `.md` added when its base name is not itself a
    /// declared output (as the reference's `artifactFilename` does); the first form that
    /// exists is taken.
    fn explicit_artifact(
        &self,
        project_dir: &Utf8Path,
        names: &[String],
        token: &str,
    ) -> Result<Utf8PathBuf, DeliverableError> {
        let normal = token.replace('\\', "/");
        let path = Utf8Path::new(&normal);
        if path.is_absolute() || normal.starts_with('/') || has_drive_letter(&normal) {
            return Err(self.refused(token, ArtifactRefusal::Absolute));
        }
        if path
            .components()
            .any(|component| component == camino::Utf8Component::ParentDir)
        {
            return Err(self.refused(token, ArtifactRefusal::ParentComponent));
        }
        let base = normal.rsplit('/').next().unwrap_or(&normal);
        let mut forms = vec![normal.clone()];
        if !names.iter().any(|name| name == base) {
            forms.push(artifact_file_name(&normal));
        }
        let mut candidates: Vec<Utf8PathBuf> = Vec::new();
        for form in &forms {
            if form.contains('/') {
                candidates.push(project_dir.join(form));
            }
            candidates.extend(self.canonical_dirs.iter().map(|dir| dir.join(form)));
        }
        let Some(candidate) = candidates.iter().find(|candidate| candidate.exists()) else {
            return Err(self.refused(token, ArtifactRefusal::Missing));
        };
        let canonical = candidate
            .canonicalize_utf8()
            .map_err(|_| self.refused(token, ArtifactRefusal::Missing))?;
        self.check_inside(&canonical, token)?;
        if let Some(kind) = crate::leaves::fs_util::not_regular_file_kind(&canonical) {
            return Err(self.refused(token, ArtifactRefusal::NotARegularFile(kind)));
        }
        Ok(canonical)
    }
}

/// `C:/…` or `c:…`: absolute (or drive-relative) on Windows, never a project-relative path.
fn has_drive_letter(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(slug: &str, phase: &str, produces: &[&str]) -> GraphNode {
        crate::protocol::graph_reader::tests::node_from_json(&serde_json::json!({
            "slug": slug, "phase": phase, "produces": produces, "consumes": [],
            "sensors_applicable": [],
        }))
        .unwrap()
    }

    fn workspace_of(root: &Utf8Path) -> Workspace {
        Workspace::resolve(crate::compile::discover::Layout::new(
            root,
            crate::harness::Harness::Claude,
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

    fn refusal(root: &Utf8Path, record: &Utf8Path, token: &str) -> DeliverableError {
        let stage = node("user-stories", "inception", &["stories"]);
        existing_deliverables(&workspace_of(root), record, &stage, &[token.to_owned()]).unwrap_err()
    }

    fn why(error: &DeliverableError) -> Option<&ArtifactRefusal> {
        match error {
            DeliverableError::ArtifactRefused { why, .. } => Some(why),
            _ => None,
        }
    }

    #[test]
    fn an_explicit_artifact_must_name_a_regular_file_inside_the_produce_folders() {
        let (_dir, root, record) = project();
        let folder = record.join("inception/user-stories");
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::fs::write(root.join("elsewhere/stories.md"), "x").unwrap();
        std::fs::write(root.join("README.md"), "x").unwrap();
        std::fs::create_dir(folder.join("drafts.md")).unwrap();
        let dot_dot = refusal(&root, &record, "aidlc/spaces/../../elsewhere/stories.md");
        assert_eq!(
            why(&dot_dot),
            Some(&ArtifactRefusal::ParentComponent),
            "{dot_dot}"
        );
        let absolute = refusal(&root, &record, folder.join("stories.md").as_str());
        assert_eq!(
            why(&absolute),
            Some(&ArtifactRefusal::Absolute),
            "{absolute}"
        );
        assert_eq!(
            why(&refusal(&root, &record, "C:\\stories.md")),
            Some(&ArtifactRefusal::Absolute)
        );
        let missing = refusal(&root, &record, "personas.md");
        assert_eq!(why(&missing), Some(&ArtifactRefusal::Missing), "{missing}");
        assert_eq!(
            missing.to_string(),
            "Refusing gate sensor artifact \"personas.md\" for \"user-stories\": no such file in the stage's produce directories."
        );
        let outside = refusal(&root, &record, "elsewhere/stories.md");
        assert!(
            matches!(outside, DeliverableError::ArtifactEscapes { .. }),
            "{outside}"
        );
        let root_file = refusal(&root, &record, "README.md");
        assert_eq!(
            why(&root_file),
            Some(&ArtifactRefusal::Missing),
            "a bare name is looked up in the produce folders only"
        );
        let folder_named = refusal(&root, &record, "drafts.md");
        assert_eq!(
            why(&folder_named),
            Some(&ArtifactRefusal::NotARegularFile("a directory"))
        );
        let line_break = artifact_tokens("user-stories", "stories.md\nEvent: forged").unwrap_err();
        assert_eq!(why(&line_break), Some(&ArtifactRefusal::ControlCharacter));
        assert!(
            line_break
                .to_string()
                .contains(r#""stories.md\nEvent: forged""#),
            "{line_break}"
        );
    }

    #[test]
    fn an_explicit_artifact_of_any_name_joins_the_discovered_ones() {
        let (_dir, root, record) = project();
        let stage = node("user-stories", "inception", &["stories"]);
        let folder = record.join("inception/user-stories");
        std::fs::write(folder.join("stories.md"), "x").unwrap();
        std::fs::write(folder.join("extra-notes.md"), "x").unwrap();
        let tokens = artifact_tokens("user-stories", " extra-notes , stories.md,").unwrap();
        let found = existing_deliverables(&workspace_of(&root), &record, &stage, &tokens).unwrap();
        let names: Vec<&str> = found.files.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(names, ["stories.md", "extra-notes.md"]);
        let explicit: Vec<&str> = found
            .explicit
            .iter()
            .map(|(token, _)| token.as_str())
            .collect();
        assert_eq!(explicit, ["extra-notes", "stories.md"]);
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
