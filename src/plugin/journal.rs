//! The multi-file commit of a composition: an undo journal.
//!
//! Renaming one file over another is atomic; replacing dozens of files (copies, merged stages,
//! sidecars, the lock file, the compiled graph and grid, the conductor's generated skills) is
//! not. So before the first change, the journal `<project>/.aidlc-plugin-journal/` records the
//! before-image of every file the transaction may touch (and the list of files under each folder
//! a generator may rewrite), and only then its `manifest.json` (written atomically and flushed):
//! from that moment the transaction is armed. Each change is then an atomic replacement or a
//! removal. Committing removes the manifest (one unlink: the commit point), then the journal.
//!
//! A run that fails rolls back: every before-image is put back, every file that did not exist is
//! removed, and the folders it created go with them. A run that is killed leaves an armed
//! journal, which the next `aidlc plugin` command rolls back the same way before it does
//! anything else ([`recover`]); a journal without a manifest was killed before the first change
//! and is only deleted. Rolling back is idempotent, so a kill during the rollback is recovered by
//! the next one. Between the kill and that next command the install may be torn; nothing else
//! in the install changes meanwhile as long as every writer holds the workspace lock the
//! transaction held.

use std::collections::BTreeSet;

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::fs_util::{self, Flush};

pub const JOURNAL_DIR: &str = ".aidlc-plugin-journal";
const MANIFEST: &str = "manifest.json";
const IMAGES: &str = "images";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// Project-relative.
    path: String,
    /// The image file holding the before bytes; `None` when the file did not exist.
    image: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TreeSnapshot {
    /// Project-relative folder.
    root: String,
    /// Project-relative files under it before the transaction (each also an entry).
    files: Vec<String>,
    existed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    entries: Vec<Entry>,
    trees: Vec<TreeSnapshot>,
    /// Project-relative folders that did not exist (created by the transaction's writes).
    absent_dirs: Vec<String>,
}

/// An armed transaction. Dropping it without [`Transaction::commit`] leaves it armed (the next
/// command rolls it back); call [`Transaction::rollback`] on failure.
#[derive(Debug)]
pub struct Transaction {
    project_dir: Utf8PathBuf,
    manifest: Manifest,
    /// Folders never removed when a removal leaves them empty.
    kept_dirs: BTreeSet<Utf8PathBuf>,
    /// A test hook: pause (in milliseconds) after each change, so a test can kill the process in
    /// the middle of a transaction. Read from `AIDLC_TEST_PLUGIN_PAUSE_MS` by the caller.
    pause: Option<std::time::Duration>,
}

fn journal_dir(project_dir: &Utf8Path) -> Utf8PathBuf {
    project_dir.join(JOURNAL_DIR)
}

fn relative(project_dir: &Utf8Path, path: &Utf8Path) -> String {
    path.strip_prefix(project_dir).map_or_else(
        |_| path.to_string(),
        |relative| fs_util::to_posix(relative.as_str()),
    )
}

fn io_context(error: &std::io::Error, what: &str, path: &Utf8Path) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("{what} {path}: {error}"))
}

/// [`io_context`] for a refused or failed [`fs_util::read_input`].
fn input_context(error: &fs_util::InputError, what: &str, path: &Utf8Path) -> std::io::Error {
    std::io::Error::other(format!("{what} {path}: {error}"))
}

impl Transaction {
    /// Record the before-images of `paths` and of every file under `trees`, then arm.
    pub fn begin(
        project_dir: &Utf8Path,
        paths: &[Utf8PathBuf],
        trees: &[Utf8PathBuf],
        kept_dirs: BTreeSet<Utf8PathBuf>,
        pause: Option<std::time::Duration>,
    ) -> std::io::Result<Self> {
        let journal = journal_dir(project_dir);
        if journal.exists() {
            std::fs::remove_dir_all(&journal)
                .map_err(|e| io_context(&e, "cannot clear", &journal))?;
        }
        let images = journal.join(IMAGES);
        std::fs::create_dir_all(&images).map_err(|e| io_context(&e, "cannot create", &images))?;
        let mut manifest = Manifest {
            entries: Vec::new(),
            trees: Vec::new(),
            absent_dirs: Vec::new(),
        };
        let mut seen = BTreeSet::new();
        let mut all_paths: Vec<Utf8PathBuf> = paths.to_vec();
        for tree in trees {
            let mut files = Vec::new();
            collect_files(tree, &mut files)?;
            manifest.trees.push(TreeSnapshot {
                root: relative(project_dir, tree),
                files: files
                    .iter()
                    .map(|file| relative(project_dir, file))
                    .collect(),
                existed: tree.is_dir(),
            });
            all_paths.extend(files);
        }
        let mut absent_dirs = BTreeSet::new();
        for path in all_paths {
            if !seen.insert(path.clone()) {
                continue;
            }
            let mut ancestor = path.parent();
            while let Some(dir) = ancestor {
                if dir == project_dir || dir.as_str().is_empty() || dir.exists() {
                    break;
                }
                absent_dirs.insert(relative(project_dir, dir));
                ancestor = dir.parent();
            }
            let image = match fs_util::read_input(&path) {
                Ok(bytes) => {
                    let name = manifest.entries.len().to_string();
                    fs_util::replace_atomically(&images.join(&name), &bytes, Flush::No)?;
                    Some(name)
                }
                Err(error) if error.is_not_found() => None,
                Err(error) => return Err(input_context(&error, "cannot read", &path)),
            };
            manifest.entries.push(Entry {
                path: relative(project_dir, &path),
                image,
            });
        }
        manifest.absent_dirs = absent_dirs.into_iter().collect();
        let text = serde_json::to_string(&manifest).map_err(std::io::Error::other)?;
        fs_util::replace_atomically(&journal.join(MANIFEST), text.as_bytes(), Flush::Yes)?;
        Ok(Self {
            project_dir: project_dir.to_owned(),
            manifest,
            kept_dirs,
            pause,
        })
    }

    fn is_armed_for(&self, path: &Utf8Path) -> bool {
        let relative = relative(&self.project_dir, path);
        self.manifest
            .entries
            .iter()
            .any(|entry| entry.path == relative)
            || self
                .manifest
                .trees
                .iter()
                .any(|tree| relative.starts_with(&format!("{}/", tree.root)))
    }

    fn paused(&self) {
        if let Some(pause) = self.pause {
            std::thread::sleep(pause);
        }
    }

    /// Replace `path` with `bytes`. The path must be one the transaction recorded.
    pub fn write(&self, path: &Utf8Path, bytes: &[u8]) -> std::io::Result<()> {
        if !self.is_armed_for(path) {
            return Err(std::io::Error::other(format!(
                "internal error: {path} was not recorded before the transaction"
            )));
        }
        fs_util::replace_atomically(path, bytes, Flush::No)
            .map_err(|e| io_context(&e, "cannot write", path))?;
        self.paused();
        Ok(())
    }

    /// Remove `path` (recorded), and the folders above it that this leaves empty.
    pub fn remove(&self, path: &Utf8Path) -> std::io::Result<()> {
        if !self.is_armed_for(path) {
            return Err(std::io::Error::other(format!(
                "internal error: {path} was not recorded before the transaction"
            )));
        }
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(io_context(&error, "cannot remove", path)),
        }
        remove_empty_parents(path, &self.project_dir, &self.kept_dirs);
        self.paused();
        Ok(())
    }

    /// The commit point: the manifest's removal. Then the journal goes.
    pub fn commit(self) -> std::io::Result<()> {
        let journal = journal_dir(&self.project_dir);
        std::fs::remove_file(journal.join(MANIFEST))
            .map_err(|e| io_context(&e, "cannot commit", &journal))?;
        let _ = std::fs::remove_dir_all(&journal);
        Ok(())
    }

    /// Put every file back as it was.
    pub fn rollback(self) -> std::io::Result<()> {
        roll_back(&self.project_dir, &self.manifest)
    }
}

fn collect_files(folder: &Utf8Path, files: &mut Vec<Utf8PathBuf>) -> std::io::Result<()> {
    let entries = match folder.read_dir_utf8() {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io_context(&error, "cannot list", folder)),
    };
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_files(entry.path(), files)?;
        } else {
            files.push(entry.path().to_owned());
        }
    }
    Ok(())
}

/// Remove the empty folders above `path`, up to (not including) the project folder and the
/// kept folders.
fn remove_empty_parents(path: &Utf8Path, project_dir: &Utf8Path, kept: &BTreeSet<Utf8PathBuf>) {
    let mut folder = path.parent();
    while let Some(dir) = folder {
        if dir == project_dir || !dir.starts_with(project_dir) || kept.contains(dir) {
            return;
        }
        if std::fs::remove_dir(dir).is_err() {
            return;
        }
        folder = dir.parent();
    }
}

fn roll_back(project_dir: &Utf8Path, manifest: &Manifest) -> std::io::Result<()> {
    let journal = journal_dir(project_dir);
    let images = journal.join(IMAGES);
    for entry in manifest.entries.iter().rev() {
        let path = project_dir.join(&entry.path);
        if let Some(parent) = path.parent()
            && parent.is_dir()
        {
            fs_util::sweep_stale_temporaries(parent);
        }
        match &entry.image {
            Some(image) => {
                let bytes = fs_util::read_input(&images.join(image))
                    .map_err(|e| input_context(&e, "cannot read the journal's image of", &path))?;
                let current = fs_util::read_input(&path).ok();
                if current.as_deref() != Some(bytes.as_slice()) {
                    fs_util::replace_atomically(&path, &bytes, Flush::No)?;
                }
            }
            None => match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(io_context(&error, "cannot remove", &path)),
            },
        }
    }
    for tree in &manifest.trees {
        let root = project_dir.join(&tree.root);
        let before: BTreeSet<&str> = tree.files.iter().map(String::as_str).collect();
        let mut now = Vec::new();
        collect_files(&root, &mut now)?;
        for file in now {
            if !before.contains(relative(project_dir, &file).as_str()) {
                let _ = std::fs::remove_file(&file);
            }
        }
        remove_empty_folders_below(&root, tree.existed);
    }
    let mut absent: Vec<&String> = manifest.absent_dirs.iter().collect();
    absent.sort_by_key(|dir| std::cmp::Reverse(dir.len()));
    for dir in absent {
        let dir = project_dir.join(dir);
        if dir.is_dir() {
            fs_util::sweep_stale_temporaries(&dir);
            let _ = std::fs::remove_dir(&dir);
        }
    }
    std::fs::remove_file(journal.join(MANIFEST)).or_else(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            Ok(())
        } else {
            Err(error)
        }
    })?;
    let _ = std::fs::remove_dir_all(&journal);
    Ok(())
}

/// Remove the empty folders under `root` (deepest first), and `root` itself when it did not
/// exist before.
fn remove_empty_folders_below(root: &Utf8Path, root_existed: bool) {
    fn visit(folder: &Utf8Path) -> bool {
        let Ok(entries) = folder.read_dir_utf8() else {
            return false;
        };
        let mut empty = true;
        for entry in entries.filter_map(Result::ok) {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                if visit(entry.path()) {
                    let _ = std::fs::remove_dir(entry.path());
                } else {
                    empty = false;
                }
            } else {
                empty = false;
            }
        }
        empty
    }
    if visit(root) && !root_existed {
        let _ = std::fs::remove_dir(root);
    }
}

/// What [`recover`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// No journal: the last transaction ended.
    Clean,
    /// A journal killed before its first change: deleted.
    Discarded,
    /// An armed journal: the install was rolled back to the state before it.
    RolledBack,
}

/// Finish what a killed transaction left: roll an armed journal back, delete an unarmed one.
/// Call it under the workspace lock, before reading the install.
pub fn recover(project_dir: &Utf8Path) -> std::io::Result<Recovery> {
    let journal = journal_dir(project_dir);
    if !journal.exists() {
        return Ok(Recovery::Clean);
    }
    let manifest_path = journal.join(MANIFEST);
    let text = match fs_util::read_input_text(&manifest_path) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => {
            std::fs::remove_dir_all(&journal)
                .map_err(|e| io_context(&e, "cannot remove", &journal))?;
            return Ok(Recovery::Discarded);
        }
        Err(error) => return Err(input_context(&error, "cannot read", &manifest_path)),
    };
    let manifest: Manifest = serde_json::from_str(&text).map_err(|error| {
        std::io::Error::other(format!(
            "the plugin journal {manifest_path} cannot be read ({error}); restore the install from version control and delete {journal}"
        ))
    })?;
    roll_back(project_dir, &manifest)?;
    Ok(Recovery::RolledBack)
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;

    #[test]
    fn a_rolled_back_or_recovered_transaction_leaves_the_files_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let kept = project.join("a/b");
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::write(kept.join("old.md"), "old").unwrap();
        std::fs::create_dir_all(project.join("tree/x")).unwrap();
        std::fs::write(project.join("tree/x/one"), "1").unwrap();
        let paths = [kept.join("old.md"), project.join("new/deep/new.md")];
        for kill in [false, true] {
            let transaction = Transaction::begin(
                &project,
                &paths,
                &[project.join("tree")],
                BTreeSet::new(),
                None,
            )
            .unwrap();
            transaction.write(&paths[0], b"changed").unwrap();
            transaction.write(&paths[1], b"created").unwrap();
            std::fs::write(project.join("tree/x/two"), "2").unwrap();
            std::fs::create_dir_all(project.join("tree/y")).unwrap();
            std::fs::write(project.join("tree/y/three"), "3").unwrap();
            assert!(transaction.write(&project.join("elsewhere"), b"x").is_err());
            if kill {
                drop(transaction);
                assert_eq!(recover(&project).unwrap(), Recovery::RolledBack);
            } else {
                transaction.rollback().unwrap();
            }
            assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), "old");
            assert!(!project.join("new").exists(), "created folders are removed");
            assert!(!project.join("tree/x/two").exists() && !project.join("tree/y").exists());
            assert_eq!(
                std::fs::read_to_string(project.join("tree/x/one")).unwrap(),
                "1"
            );
            assert!(!project.join(JOURNAL_DIR).exists());
            assert_eq!(recover(&project).unwrap(), Recovery::Clean);
        }
        let transaction = Transaction::begin(&project, &paths, &[], BTreeSet::new(), None).unwrap();
        transaction.remove(&paths[0]).unwrap();
        assert!(!kept.exists(), "a folder left empty by a removal goes");
        transaction.commit().unwrap();
        assert!(!project.join(JOURNAL_DIR).exists());
        std::fs::create_dir_all(project.join(JOURNAL_DIR).join(IMAGES)).unwrap();
        assert_eq!(recover(&project).unwrap(), Recovery::Discarded);
    }
}
