//! Where the project sits in its repository, so that the CI formats (SARIF, GitHub annotations,
//! GitLab Code Quality, `JUnit`) name files relative to the repository root, as code scanning and
//! annotations need, when the project is a subfolder of a monorepo.
//!
//! The root is `GITHUB_WORKSPACE` when it is set and holds the project, else the git work tree
//! that holds the project (the nearest ancestor with a `.git` folder or file, as worktrees and
//! submodules have), else the project folder itself. `gate::command` reads the variable and hands it in.
//!
//! Invariant: a path is only ever made longer by the prefix; a root that does not hold the
//! project is never used.

use camino::{Utf8Path, Utf8PathBuf};

/// The repository root found for a project, and the project folder relative to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryRoot {
    /// Absolute.
    pub root: Utf8PathBuf,
    /// The project folder relative to `root`, `/` separators; empty when they are the same.
    pub project_path: Utf8PathBuf,
}

impl RepositoryRoot {
    /// The root of `project_dir`'s repository: `github_workspace` when it holds the project,
    /// else the nearest ancestor (the project included) with a `.git` entry, else the project.
    pub fn find(project_dir: &Utf8Path, github_workspace: Option<&Utf8Path>) -> Self {
        let project = canonical(project_dir);
        let from_workspace = github_workspace
            .filter(|workspace| !workspace.as_str().is_empty())
            .map(canonical)
            .filter(|workspace| project.starts_with(workspace));
        let root = from_workspace
            .or_else(|| {
                project
                    .ancestors()
                    .find(|folder| folder.join(".git").symlink_metadata().is_ok())
                    .map(Utf8Path::to_owned)
            })
            .unwrap_or_else(|| project.clone());
        let project_path = project
            .strip_prefix(&root)
            .map(Utf8Path::to_owned)
            .unwrap_or_default();
        Self {
            root,
            project_path: Utf8PathBuf::from(project_path.as_str().replace('\\', "/")),
        }
    }

    /// The root as a `file://` URI ending in `/` (SARIF's `originalUriBaseIds`).
    pub fn root_uri(&self) -> String {
        crate::leaves::file_uri::folder_file_uri(&self.root)
    }
}

fn canonical(path: &Utf8Path) -> Utf8PathBuf {
    path.canonicalize_utf8().unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> (tempfile::TempDir, Utf8PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(folder.path().canonicalize().unwrap()).unwrap();
        (folder, root)
    }

    #[test]
    fn a_project_in_a_subfolder_of_a_work_tree_gets_its_prefix() {
        let (_folder, root) = temp();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/apps/sub")).unwrap();
        let found = RepositoryRoot::find(&root.join("repo/apps/sub"), None);
        assert_eq!(found.root, root.join("repo"));
        assert_eq!(found.project_path, "apps/sub");
    }

    #[test]
    fn a_git_file_marks_a_worktree_too() {
        let (_folder, root) = temp();
        std::fs::create_dir_all(root.join("wt/sub")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: /elsewhere\n").unwrap();
        let found = RepositoryRoot::find(&root.join("wt/sub"), None);
        assert_eq!(found.project_path, "sub");
    }

    #[test]
    fn github_workspace_wins_when_it_holds_the_project() {
        let (_folder, root) = temp();
        std::fs::create_dir_all(root.join("ws/.git")).unwrap();
        std::fs::create_dir_all(root.join("ws/a/b/.git")).unwrap();
        let found = RepositoryRoot::find(&root.join("ws/a/b"), Some(&root.join("ws")));
        assert_eq!(found.project_path, "a/b");
        let elsewhere = RepositoryRoot::find(&root.join("ws/a/b"), Some(&root.join("other")));
        assert_eq!(
            elsewhere.project_path, "",
            "a workspace that does not hold it is ignored"
        );
    }

    #[test]
    fn without_a_repository_the_project_is_the_root() {
        let (_folder, root) = temp();
        std::fs::create_dir_all(root.join("p")).unwrap();
        let found = RepositoryRoot::find(&root.join("p"), None);
        // The temp folder may itself sit in a git work tree; either way the prefix is relative.
        assert!(found.project_path.is_relative());
        assert!(found.root_uri().starts_with("file:///"));
        assert!(found.root_uri().ends_with('/'));
    }
}
