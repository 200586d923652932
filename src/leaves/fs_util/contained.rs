//! A path the engine writes, replaces or removes inside a project: [`ProjectPath`].
//!
//! Invariants:
//! - a [`ProjectPath`] is made only by [`ProjectPath::parse`] or [`ProjectPath::of_absolute`]:
//!   it is relative to the project root, has at least one component, no `..`, no root or
//!   prefix, and no `.git` component (the project's repository is never written through data);
//! - every write and removal through this module resolves the path's folder first
//!   ([`crate::leaves::write_folder`]): a folder on the way that is a link leading out of the project
//!   refuses the write, and nothing is written;
//! - the last component itself is never followed: a link there is replaced or removed, never
//!   written through.

#![expect(
    clippy::disallowed_methods,
    reason = "the file-system layer: every path is resolved inside the project (write_folder) before anything is written or removed there; `remove_dir_all` follows no link below a real folder"
)]

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};

use crate::leaves::fs_util::{self, Flush};
use crate::leaves::write_folder::{self, WriteFolderError};

/// The name of a git repository's folder, never written through a [`ProjectPath`].
const GIT_FOLDER: &str = ".git";

/// Why a path cannot be written in the project.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefusal {
    #[error("the path is empty")]
    Empty,
    #[error("\"{path}\" is absolute, not relative to the project")]
    Absolute { path: String },
    #[error("\"{path}\" is not inside the project \"{project}\"")]
    NotUnderProject { path: String, project: Utf8PathBuf },
    #[error("\"{path}\" leaves the project (\"..\")")]
    LeavesProject { path: String },
    #[error("\"{path}\" is inside a git repository folder (\".git\")")]
    InsideGit { path: String },
    #[error("{0}")]
    Resolution(WriteFolderError),
}

/// A path inside the project, relative to its root, checked as the module says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProjectPath {
    project: Utf8PathBuf,
    relative: Utf8PathBuf,
}

impl ProjectPath {
    /// `relative` (as written in data: a lock, a journal, a manifest) under `project`, or why
    /// it cannot be written.
    pub fn parse(project: &Utf8Path, relative: &str) -> Result<Self, PathRefusal> {
        let mut inside = Utf8PathBuf::new();
        for component in Utf8Path::new(relative).components() {
            match component {
                Utf8Component::Normal(GIT_FOLDER) => {
                    return Err(PathRefusal::InsideGit {
                        path: relative.to_owned(),
                    });
                }
                Utf8Component::Normal(part) => inside.push(part),
                Utf8Component::CurDir => {}
                Utf8Component::ParentDir => {
                    return Err(PathRefusal::LeavesProject {
                        path: relative.to_owned(),
                    });
                }
                Utf8Component::RootDir | Utf8Component::Prefix(_) => {
                    return Err(PathRefusal::Absolute {
                        path: relative.to_owned(),
                    });
                }
            }
        }
        if inside.as_str().is_empty() {
            return Err(PathRefusal::Empty);
        }
        Ok(Self {
            project: project.to_owned(),
            relative: inside,
        })
    }

    /// `path` (absolute, as the engine joined it) as a path under `project`, or why not.
    pub fn of_absolute(project: &Utf8Path, path: &Utf8Path) -> Result<Self, PathRefusal> {
        let relative = path
            .strip_prefix(project)
            .map_err(|_| PathRefusal::NotUnderProject {
                path: path.to_string(),
                project: project.to_owned(),
            })?;
        Self::parse(project, relative.as_str())
    }

    /// The project root the path is under.
    pub fn project(&self) -> &Utf8Path {
        &self.project
    }

    /// The path relative to the project root, with `/` separators on every platform.
    pub fn relative_text(&self) -> String {
        fs_util::to_posix(self.relative.as_str())
    }

    /// The path joined to the project root.
    pub fn absolute(&self) -> Utf8PathBuf {
        self.project.join(&self.relative)
    }

    /// The folder holding the path: the project root for a path at the top.
    pub fn folder(&self) -> Utf8PathBuf {
        self.absolute()
            .parent()
            .map_or_else(|| self.project.clone(), Utf8Path::to_owned)
    }

    /// The folder holding the path as a path of its own, `None` at the top of the project.
    pub fn parent(&self) -> Option<Self> {
        let parent = self.relative.parent()?;
        (!parent.as_str().is_empty()).then(|| Self {
            project: self.project.clone(),
            relative: parent.to_owned(),
        })
    }

    /// Whether `self` is `folder` or lies under it.
    pub fn is_under(&self, folder: &Self) -> bool {
        self.project == folder.project && self.relative.starts_with(&folder.relative)
    }

    /// Check, now, that every existing folder on the way resolves inside the project. Writes
    /// nothing.
    pub fn check_resolves_inside(&self) -> Result<(), PathRefusal> {
        write_folder::check_write_folder(&self.project, &self.folder())
            .map(drop)
            .map_err(PathRefusal::Resolution)
    }
}

/// Why a write through a [`ProjectPath`] failed: refused before anything was written, or the
/// file system's own error.
#[derive(Debug, thiserror::Error)]
pub enum ContainedWriteError {
    #[error("{0}")]
    Refused(PathRefusal),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Why a command could not handle one project file, named by its path: the file system's
/// refusal to `action` it (`create`, `read`, `write`, `remove`), or the project's refusal of
/// the path: the one text for each.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: Utf8PathBuf,
        source: std::io::Error,
    },
    #[error("refusing to write {path}: {refusal}")]
    Outside {
        path: Utf8PathBuf,
        refusal: PathRefusal,
    },
}

impl FileError {
    /// The file system's refusal to `action` the file at `path`.
    pub fn io(action: &'static str, path: &Utf8Path, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }

    /// The project's refusal of `path`.
    pub fn outside(path: &Utf8Path, refusal: PathRefusal) -> Self {
        Self::Outside {
            path: path.to_owned(),
            refusal,
        }
    }

    /// A failed [`write_file`] of the file shown as `path`: a refused path stays a refusal.
    pub fn of_write(path: &Utf8Path, error: ContainedWriteError) -> Self {
        match error {
            ContainedWriteError::Refused(refusal) => Self::outside(path, refusal),
            ContainedWriteError::Io(source) => Self::io("write", path, source),
        }
    }
}

impl From<ContainedWriteError> for std::io::Error {
    fn from(error: ContainedWriteError) -> Self {
        match error {
            ContainedWriteError::Refused(refusal) => {
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, refusal.to_string())
            }
            ContainedWriteError::Io(error) => error,
        }
    }
}

/// Replace `path` with `bytes` atomically ([`fs_util::replace_atomically`]), its missing folders
/// created inside the project and checked again once made.
pub fn write_file(
    path: &ProjectPath,
    bytes: &[u8],
    flush: Flush,
) -> Result<(), ContainedWriteError> {
    write_folder::create_write_folder(&path.project, &path.folder())
        .map_err(|error| ContainedWriteError::Refused(PathRefusal::Resolution(error)))?;
    fs_util::replace_atomically(&path.absolute(), bytes, flush)?;
    Ok(())
}

/// Remove the file (or link) at `path`; a path that is not there is not an error.
pub fn remove_file(path: &ProjectPath) -> Result<(), ContainedWriteError> {
    path.check_resolves_inside()
        .map_err(ContainedWriteError::Refused)?;
    match std::fs::remove_file(path.absolute()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Remove the folder at `path` when it is empty; whether it went.
pub fn remove_empty_folder(path: &ProjectPath) -> bool {
    if path.check_resolves_inside().is_err() {
        return false;
    }
    std::fs::remove_dir(path.absolute()).is_ok()
}

/// Remove the folder at `path` with everything under it; a link or a file in its place is
/// removed itself (never followed), and a path that is not there is not an error.
pub fn remove_tree(path: &ProjectPath) -> Result<(), ContainedWriteError> {
    path.check_resolves_inside()
        .map_err(ContainedWriteError::Refused)?;
    let absolute = path.absolute();
    match std::fs::symlink_metadata(&absolute) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error.into()),
        Ok(metadata) if metadata.is_dir() => Ok(std::fs::remove_dir_all(&absolute)?),
        Ok(_) => remove_file(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        (dir, root)
    }

    #[test]
    fn only_a_relative_path_inside_the_project_and_outside_git_parses() {
        let root = Utf8Path::new("/p");
        for refused in [
            "",
            ".",
            "/etc/passwd",
            "../x",
            "a/../../x",
            ".git/config",
            "a/.git/x",
        ] {
            assert!(ProjectPath::parse(root, refused).is_err(), "{refused}");
        }
        let path = ProjectPath::parse(root, "./a/b.md").unwrap();
        assert_eq!(path.relative_text(), "a/b.md");
        assert_eq!(path.absolute(), Utf8Path::new("/p/a/b.md"));
        assert!(ProjectPath::of_absolute(root, Utf8Path::new("/q/a")).is_err());
        assert_eq!(
            ProjectPath::of_absolute(root, Utf8Path::new("/p/a/b.md")).unwrap(),
            path
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_linked_out_of_the_project_is_never_written_through() {
        let (_dir, root) = project();
        let (_outside_dir, outside) = project();
        let project = root.join("project");
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::os::unix::fs::symlink(&outside, project.join(".claude/knowledge")).unwrap();
        let path = ProjectPath::parse(&project, ".claude/knowledge/authorized_keys").unwrap();
        assert!(matches!(
            write_file(&path, b"key", Flush::No),
            Err(ContainedWriteError::Refused(_))
        ));
        std::fs::write(outside.join("kept"), "kept").unwrap();
        let kept = ProjectPath::parse(&project, ".claude/knowledge/kept").unwrap();
        assert!(remove_file(&kept).is_err());
        assert!(outside.join("kept").exists());
        assert!(!outside.join("authorized_keys").exists());
        let inside = ProjectPath::parse(&project, ".claude/new/file.md").unwrap();
        write_file(&inside, b"x", Flush::No).unwrap();
        assert_eq!(
            std::fs::read(project.join(".claude/new/file.md")).unwrap(),
            b"x"
        );
    }
}
