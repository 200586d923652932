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
//! journal, which the next `aidlc plugin add|remove|sync` rolls back the same way before it does
//! anything else ([`recover`]); a journal without a manifest was killed before the first change
//! and is only deleted. Rolling back is idempotent, so a kill during the rollback is recovered by
//! the next one. Between the kill and that next command the install may be torn; nothing else
//! in the install changes meanwhile as long as every writer holds the workspace lock the
//! transaction held.

use std::collections::BTreeSet;

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::leaves::fs_util::contained::{self, PathRefusal, ProjectPath};
use crate::leaves::fs_util::{self, Flush};
use crate::plugin::{PluginError, Problem};

pub const JOURNAL_DIR: &str = ".aidlc-plugin-journal";
const MANIFEST: &str = "manifest.json";
const IMAGES: &str = "images";

/// The journal's paths are `P`: as its file holds them (`String`, project-relative; an image
/// by its name in the images folder), or parsed into the project and checked to resolve inside
/// it (`ProjectPath`; an image by its path), the only form a rollback reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry<P> {
    path: P,
    /// The image file holding the before bytes; `None` when the file did not exist.
    image: Option<P>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TreeSnapshot<P> {
    root: P,
    /// The files under it before the transaction (each also an entry).
    files: Vec<P>,
    existed: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Manifest<P> {
    entries: Vec<Entry<P>>,
    trees: Vec<TreeSnapshot<P>>,
    /// The folders that did not exist (created by the transaction's writes).
    absent_dirs: Vec<P>,
}

/// A manifest as a rollback reads it.
type CheckedManifest = Manifest<ProjectPath>;

/// An armed transaction. Dropping it without [`Transaction::commit`] leaves it armed (the next
/// command that writes rolls it back); call [`Transaction::rollback`] on failure.
#[derive(Debug)]
pub struct Transaction {
    project_dir: Utf8PathBuf,
    manifest: CheckedManifest,
    /// Folders never removed when a removal leaves them empty.
    kept_dirs: BTreeSet<Utf8PathBuf>,
    /// A test hook: pause (in milliseconds) after each change, so a test can kill the process in
    /// the middle of a transaction. Read from `AIDLC_TEST_PLUGIN_PAUSE_MS` by the caller.
    pause: Option<std::time::Duration>,
}

fn journal_dir(project_dir: &Utf8Path) -> Utf8PathBuf {
    project_dir.join(JOURNAL_DIR)
}

/// A file of the journal's own, by its name relative to the journal folder.
fn journal_file(project_dir: &Utf8Path, name: &str) -> std::io::Result<ProjectPath> {
    ProjectPath::parse(project_dir, &format!("{JOURNAL_DIR}/{name}"))
        .map_err(|refusal| refusal_error(&refusal))
}

fn refusal_error(refusal: &PathRefusal) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, refusal.to_string())
}

fn io_context(error: &std::io::Error, what: &str, path: &Utf8Path) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("{what} {path}: {error}"))
}

/// Refuse `path` unless every existing folder on its way resolves inside the project now.
fn resolved_inside(path: &ProjectPath) -> std::io::Result<()> {
    path.check_resolves_inside().map_err(|refusal| {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("refusing to write {}: {refusal}", path.relative_text()),
        )
    })
}

/// [`io_context`] for a refused or failed [`fs_util::read_bounded`].
fn input_context(error: &fs_util::InputError, what: &str, path: &Utf8Path) -> std::io::Error {
    std::io::Error::other(format!("{what} {path}: {error}"))
}

/// A project file the journal keeps an image of, or restores: any file the engine may replace,
/// bounded by the generated files' limit (not the inputs' 4 MiB: a large project file is kept
/// whole, never refused for its size).
fn read_journaled(path: &Utf8Path) -> Result<Vec<u8>, fs_util::InputError> {
    fs_util::read_bounded(path, crate::compile::discover::MAX_GENERATED_BYTES)
}

impl Transaction {
    /// Record the before-images of `paths` and of every file under `trees`, then arm. Every
    /// path is checked to resolve inside the project before the journal is written.
    pub fn begin(
        project_dir: &Utf8Path,
        paths: &[ProjectPath],
        trees: &[ProjectPath],
        kept_dirs: BTreeSet<Utf8PathBuf>,
        pause: Option<std::time::Duration>,
    ) -> std::io::Result<Self> {
        for path in paths.iter().chain(trees) {
            resolved_inside(path)?;
        }
        remove_journal(project_dir)?;
        let mut manifest = Manifest::<String>::default();
        let mut seen = BTreeSet::new();
        let mut all_paths: Vec<ProjectPath> = paths.to_vec();
        for tree in trees {
            let files = files_under(tree)?;
            manifest.trees.push(TreeSnapshot {
                root: tree.relative_text(),
                files: files.iter().map(ProjectPath::relative_text).collect(),
                existed: tree.absolute().is_dir(),
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
                if dir.absolute().exists() {
                    break;
                }
                ancestor = dir.parent();
                absent_dirs.insert(dir);
            }
            let image = match read_journaled(&path.absolute()) {
                Ok(bytes) => {
                    let name = manifest.entries.len().to_string();
                    let image = journal_file(project_dir, &format!("{IMAGES}/{name}"))?;
                    contained::write_file(&image, &bytes, Flush::No)?;
                    Some(name)
                }
                Err(error) if error.is_not_found() => None,
                Err(error) => return Err(input_context(&error, "cannot read", &path.absolute())),
            };
            manifest.entries.push(Entry {
                path: path.relative_text(),
                image,
            });
        }
        manifest.absent_dirs = absent_dirs.iter().map(ProjectPath::relative_text).collect();
        // The manifest a rollback reads, parsed as a recovery parses the journal's file.
        let checked = checked_manifest(project_dir, &manifest)
            .map_err(|problem| std::io::Error::other(problem.message().to_owned()))?;
        let text = serde_json::to_string(&manifest).map_err(std::io::Error::other)?;
        contained::write_file(
            &journal_file(project_dir, MANIFEST)?,
            text.as_bytes(),
            Flush::Yes,
        )?;
        Ok(Self {
            project_dir: project_dir.to_owned(),
            manifest: checked,
            kept_dirs,
            pause,
        })
    }

    fn is_armed_for(&self, path: &ProjectPath) -> bool {
        self.manifest
            .entries
            .iter()
            .any(|entry| entry.path == *path)
            || self
                .manifest
                .trees
                .iter()
                .any(|tree| path.is_under(&tree.root) && *path != tree.root)
    }

    fn paused(&self) {
        if let Some(pause) = self.pause {
            std::thread::sleep(pause);
        }
    }

    fn refuse_unrecorded(path: &ProjectPath) -> std::io::Error {
        std::io::Error::other(format!(
            "internal error: {} was not recorded before the transaction",
            path.relative_text()
        ))
    }

    /// Replace `path` with `bytes`. The path must be one the transaction recorded.
    pub fn write(&self, path: &ProjectPath, bytes: &[u8]) -> std::io::Result<()> {
        if !self.is_armed_for(path) {
            return Err(Self::refuse_unrecorded(path));
        }
        contained::write_file(path, bytes, Flush::No)
            .map_err(|e| io_context(&e.into(), "cannot write", &path.absolute()))?;
        self.paused();
        Ok(())
    }

    /// Remove `path` (recorded), and the folders above it that this leaves empty.
    pub fn remove(&self, path: &ProjectPath) -> std::io::Result<()> {
        if !self.is_armed_for(path) {
            return Err(Self::refuse_unrecorded(path));
        }
        contained::remove_file(path)
            .map_err(|e| io_context(&e.into(), "cannot remove", &path.absolute()))?;
        remove_empty_parents(path, &self.kept_dirs);
        self.paused();
        Ok(())
    }

    /// The commit point: the manifest's removal. Then the journal goes.
    pub fn commit(self) -> std::io::Result<()> {
        let manifest = journal_file(&self.project_dir, MANIFEST)?;
        contained::remove_file(&manifest)
            .map_err(|e| io_context(&e.into(), "cannot commit", &journal_dir(&self.project_dir)))?;
        let _ = remove_journal(&self.project_dir);
        Ok(())
    }

    /// Put every file back as it was.
    pub fn rollback(self) -> std::io::Result<()> {
        roll_back(&self.project_dir, &self.manifest)
    }
}

/// Remove the journal folder (a link in its place is removed, never followed).
fn remove_journal(project_dir: &Utf8Path) -> std::io::Result<()> {
    let journal =
        ProjectPath::parse(project_dir, JOURNAL_DIR).map_err(|refusal| refusal_error(&refusal))?;
    contained::remove_tree(&journal)
        .map_err(|e| io_context(&e.into(), "cannot clear", &journal.absolute()))
}

/// The files under `folder` now (links and other non-folders count as files; folders are
/// never followed through a link).
fn files_under(folder: &ProjectPath) -> std::io::Result<Vec<ProjectPath>> {
    let mut absolute = Vec::new();
    collect_files(&folder.absolute(), &mut absolute)?;
    absolute
        .iter()
        .map(|file| {
            ProjectPath::of_absolute(folder.project(), file)
                .map_err(|refusal| refusal_error(&refusal))
        })
        .collect()
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
fn remove_empty_parents(path: &ProjectPath, kept: &BTreeSet<Utf8PathBuf>) {
    let mut folder = path.parent();
    while let Some(dir) = folder {
        if kept.contains(&dir.absolute()) || !contained::remove_empty_folder(&dir) {
            return;
        }
        folder = dir.parent();
    }
}

/// Parse every path of a journal read from the disk into the project, and check that each
/// resolves inside it now; the first that does not refuses the whole rollback, before anything
/// is written.
fn checked_manifest(
    project_dir: &Utf8Path,
    manifest: &Manifest<String>,
) -> Result<CheckedManifest, Problem> {
    let manifest_path = format!("{JOURNAL_DIR}/{MANIFEST}");
    let refuse = |key: &str, entry: &str, refusal: &PathRefusal| {
        Problem::new(format!(
            "the plugin journal's {key} entry \"{entry}\" cannot be rolled back: {refusal}"
        ))
        .at_path(manifest_path.as_str())
        .with_help(format!(
            "a journal names only files inside the project; restore the install from version control and delete {JOURNAL_DIR}/"
        ))
    };
    let parse = |key: &str, entry: &str| {
        ProjectPath::parse(project_dir, entry)
            .and_then(|path| path.check_resolves_inside().map(|()| path))
            .map_err(|refusal| refuse(key, entry, &refusal))
    };
    let mut entries = Vec::new();
    for entry in &manifest.entries {
        let image = match &entry.image {
            Some(name) if !name.is_empty() && name.bytes().all(|byte| byte.is_ascii_digit()) => {
                Some(parse("image", &format!("{JOURNAL_DIR}/{IMAGES}/{name}"))?)
            }
            Some(name) => {
                let refusal = PathRefusal::LeavesProject { path: name.clone() };
                return Err(refuse("image", name, &refusal));
            }
            None => None,
        };
        let path = parse("entries", &entry.path)?;
        entries.push(Entry { path, image });
    }
    let mut trees = Vec::new();
    for tree in &manifest.trees {
        let files = tree.files.iter().map(|file| parse("trees", file));
        trees.push(TreeSnapshot {
            root: parse("trees", &tree.root)?,
            files: files.collect::<Result<_, _>>()?,
            existed: tree.existed,
        });
    }
    let absent_dirs = manifest
        .absent_dirs
        .iter()
        .map(|dir| parse("absentDirs", dir))
        .collect::<Result<_, _>>()?;
    Ok(Manifest {
        entries,
        trees,
        absent_dirs,
    })
}

fn roll_back(project_dir: &Utf8Path, manifest: &CheckedManifest) -> std::io::Result<()> {
    for entry in manifest.entries.iter().rev() {
        let path = entry.path.absolute();
        if let Some(parent) = path.parent()
            && parent.is_dir()
        {
            fs_util::sweep_stale_temporaries(parent);
        }
        match &entry.image {
            Some(image) => {
                let bytes = read_journaled(&image.absolute())
                    .map_err(|e| input_context(&e, "cannot read the journal's image of", &path))?;
                let current = read_journaled(&path).ok();
                if current.as_deref() != Some(bytes.as_slice()) {
                    contained::write_file(&entry.path, &bytes, Flush::No)?;
                }
            }
            None => contained::remove_file(&entry.path)
                .map_err(|e| io_context(&e.into(), "cannot remove", &path))?,
        }
    }
    for tree in &manifest.trees {
        let before: BTreeSet<&ProjectPath> = tree.files.iter().collect();
        for file in files_under(&tree.root)? {
            if !before.contains(&file) {
                let _ = contained::remove_file(&file);
            }
        }
        remove_empty_folders_below(&tree.root, tree.existed);
    }
    let mut absent: Vec<&ProjectPath> = manifest.absent_dirs.iter().collect();
    absent.sort_by_key(|dir| std::cmp::Reverse(dir.relative_text().len()));
    for dir in absent {
        if dir.absolute().is_dir() {
            fs_util::sweep_stale_temporaries(&dir.absolute());
            contained::remove_empty_folder(dir);
        }
    }
    let manifest_file = journal_file(project_dir, MANIFEST)?;
    contained::remove_file(&manifest_file)?;
    let _ = remove_journal(project_dir);
    Ok(())
}

/// Remove the empty folders under `root` (deepest first), and `root` itself when it did not
/// exist before. Folders are never followed through a link.
fn remove_empty_folders_below(root: &ProjectPath, root_existed: bool) {
    fn visit(folder: &ProjectPath) -> bool {
        let Ok(entries) = folder.absolute().read_dir_utf8() else {
            return false;
        };
        let mut empty = true;
        for entry in entries.filter_map(Result::ok) {
            let below = ProjectPath::of_absolute(folder.project(), entry.path());
            match below {
                Ok(below) if entry.file_type().is_ok_and(|kind| kind.is_dir()) => {
                    if !(visit(&below) && contained::remove_empty_folder(&below)) {
                        empty = false;
                    }
                }
                _ => empty = false,
            }
        }
        empty
    }
    if visit(root) && !root_existed {
        contained::remove_empty_folder(root);
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

/// Whether an interrupted composition's journal waits in the project (read-only commands
/// report it; only a command that writes rolls it back).
pub fn is_waiting(project_dir: &Utf8Path) -> bool {
    std::fs::symlink_metadata(journal_dir(project_dir)).is_ok()
}

/// Finish what a killed transaction left: roll an armed journal back, delete an unarmed one.
/// Call it under the workspace lock, before reading the install, and only from a command that
/// writes. Every path the journal names is parsed into the project before the first write: a
/// journal naming a path outside it is refused, and nothing is written.
pub fn recover(project_dir: &Utf8Path) -> Result<Recovery, PluginError> {
    let failed = |error: std::io::Error| {
        PluginError::environment(format!(
            "cannot finish the interrupted composition: {error}"
        ))
    };
    if !is_waiting(project_dir) {
        return Ok(Recovery::Clean);
    }
    let manifest_path = journal_dir(project_dir).join(MANIFEST);
    let text = match fs_util::read_input_text(&manifest_path) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => {
            remove_journal(project_dir).map_err(failed)?;
            return Ok(Recovery::Discarded);
        }
        Err(error) => return Err(failed(input_context(&error, "cannot read", &manifest_path))),
    };
    let manifest: Manifest<String> = serde_json::from_str(&text).map_err(|error| {
        Problem::new(format!("the plugin journal cannot be read ({error})"))
            .at_path(format!("{JOURNAL_DIR}/{MANIFEST}"))
            .with_help(format!(
                "restore the install from version control and delete {JOURNAL_DIR}/"
            ))
    })?;
    let checked = checked_manifest(project_dir, &manifest)?;
    roll_back(project_dir, &checked).map_err(failed)?;
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
        let paths = [
            ProjectPath::parse(&project, "a/b/old.md").unwrap(),
            ProjectPath::parse(&project, "new/deep/new.md").unwrap(),
        ];
        let tree = ProjectPath::parse(&project, "tree").unwrap();
        for kill in [false, true] {
            let transaction = Transaction::begin(
                &project,
                &paths,
                std::slice::from_ref(&tree),
                BTreeSet::new(),
                None,
            )
            .unwrap();
            transaction.write(&paths[0], b"changed").unwrap();
            transaction.write(&paths[1], b"created").unwrap();
            std::fs::write(project.join("tree/x/two"), "2").unwrap();
            std::fs::create_dir_all(project.join("tree/y")).unwrap();
            std::fs::write(project.join("tree/y/three"), "3").unwrap();
            let elsewhere = ProjectPath::parse(&project, "elsewhere").unwrap();
            assert!(transaction.write(&elsewhere, b"x").is_err());
            if kill {
                drop(transaction);
                assert_eq!(recover(&project).unwrap(), Recovery::RolledBack);
            } else {
                transaction.rollback().unwrap();
            }
            assert_eq!(std::fs::read_to_string(paths[0].absolute()).unwrap(), "old");
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

    #[test]
    fn a_journal_naming_a_path_outside_the_project_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let project = root.join("project");
        let outside = root.join("outside");
        std::fs::create_dir_all(project.join(JOURNAL_DIR).join(IMAGES)).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("canary"), "canary").unwrap();
        std::fs::write(project.join(JOURNAL_DIR).join(IMAGES).join("0"), "planted").unwrap();
        let canary = outside.join("canary");
        for (entries, trees) in [
            (
                format!(r#"[{{"path": "{canary}", "image": "0"}}]"#),
                "[]".to_owned(),
            ),
            (
                r#"[{"path": "../outside/canary", "image": null}]"#.to_owned(),
                "[]".to_owned(),
            ),
            (
                r#"[{"path": ".git/config", "image": "0"}]"#.to_owned(),
                "[]".to_owned(),
            ),
            (
                r#"[{"path": "a", "image": "../../../outside/canary"}]"#.to_owned(),
                "[]".to_owned(),
            ),
            (
                "[]".to_owned(),
                format!(r#"[{{"root": "{outside}", "files": [], "existed": true}}]"#),
            ),
        ] {
            let manifest =
                format!(r#"{{"entries": {entries}, "trees": {trees}, "absent_dirs": []}}"#);
            std::fs::write(project.join(JOURNAL_DIR).join(MANIFEST), &manifest).unwrap();
            assert!(
                matches!(recover(&project), Err(PluginError::Refused(_))),
                "{manifest}"
            );
            assert_eq!(std::fs::read_to_string(&canary).unwrap(), "canary");
            assert!(project.join(JOURNAL_DIR).join(MANIFEST).exists());
        }
        assert!(!project.join(".git").exists() && !project.join("a").exists());
    }
}
