//! A plugin's files, read once, in the order the reference composer lists them.
//!
//! Each subtree (`stages/`, `scopes/`, `agents/`, `knowledge/`, `sensors/`, `tools/`,
//! `contributions/`) is walked depth first in the folder's own listing order (what
//! `readdirSync` gives the reference composer, and what decides the key order of the sidecar it
//! writes). A plugin tree holds regular files and folders only: a symbolic link (which could
//! point outside the root), a FIFO or a name that is not UTF-8 is refused before anything is
//! read further.

use camino::{Utf8Path, Utf8PathBuf};

use crate::plugin::Problem;
use crate::plugin::guards;
use crate::plugin::manifest::{self, PluginManifest, Subtree};
use crate::plugin::tree_source::{DiskSource, EntryKind, Follow, ListedName, Overlay, TreeSource};

/// The subtrees composition reads, in the reference composer's order of copying.
pub const READ_SUBTREES: [Subtree; 7] = [
    Subtree::Stages,
    Subtree::Scopes,
    Subtree::Agents,
    Subtree::Knowledge,
    Subtree::Sensors,
    Subtree::Tools,
    Subtree::Overlays,
];

/// One file of a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginFile {
    pub subtree: Subtree,
    /// Relative to the subtree's folder, with `/` separators.
    pub relative: String,
    /// Where it was read.
    pub source: Utf8PathBuf,
    pub bytes: Vec<u8>,
}

impl PluginFile {
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    pub fn is_markdown(&self) -> bool {
        has_extension(&self.relative, "md")
    }
}

/// Whether `name` ends with `.<extension>`, compared as the reference compares it (exactly).
pub fn has_extension(name: &str, extension: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(stem, found)| found == extension && !stem.ends_with('/'))
}

/// A plugin, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginTree {
    pub root: Utf8PathBuf,
    pub manifest: PluginManifest,
    pub files: Vec<PluginFile>,
    /// BLAKE3 over the manifest and every file (path and bytes), `blake3:<hex>`.
    pub integrity: String,
    /// Things read but not composed (a `memory/` subtree, a subtree folder that is missing).
    pub notes: Vec<Problem>,
}

impl PluginTree {
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    pub fn files_of(&self, subtree: Subtree) -> impl Iterator<Item = &PluginFile> {
        self.files
            .iter()
            .filter(move |file| file.subtree == subtree)
    }
}

/// Where composition gets a plugin's tree: [`FromDisk`] for a command, which reads each tree
/// once; a process that composes again and again keeps them warm (`plugin::tree_db`).
pub trait TreeReader {
    /// The plugin at `root` (canonical), or what [`read_tree`] refuses.
    fn read_tree(&self, root: &Utf8Path) -> Result<PluginTree, Vec<Problem>>;
}

/// Every tree read from the disk when it is asked for.
pub struct FromDisk;

impl TreeReader for FromDisk {
    fn read_tree(&self, root: &Utf8Path) -> Result<PluginTree, Vec<Problem>> {
        read_tree_over(root, &Overlay::new())
    }
}

/// Read the plugin at `root`, each file `overlay` holds a text for as that text.
pub fn read_tree_over(root: &Utf8Path, overlay: &Overlay) -> Result<PluginTree, Vec<Problem>> {
    read_tree_from(&DiskSource::new(overlay), root)
}

/// Read the plugin at `root` from `source`'s answers.
pub fn read_tree_from(
    source: &dyn TreeSource,
    root: &Utf8Path,
) -> Result<PluginTree, Vec<Problem>> {
    let manifest = manifest::read_manifest_from(source, root).map_err(|problem| vec![problem])?;
    let name = manifest.name.clone();
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    for subtree in READ_SUBTREES {
        let declared = manifest.folder(subtree).to_owned();
        let folder = match guards::contained_path(source, root, &declared) {
            Ok(folder) => folder,
            Err(reason) => {
                problems.push(
                    Problem::new(format!("`aidlc.contributes.{}`: {reason}", subtree.key()))
                        .of_plugin_at(&name, &manifest.path)
                        .at_key_in(&manifest.text, &["aidlc", "contributes", subtree.key()])
                        .with_help("name a folder inside the plugin, relative to its root"),
                );
                continue;
            }
        };
        // As `Path::exists`: anything but a missing path or one whose kind cannot be read.
        if matches!(
            source.kind(&folder, Follow::Yes),
            EntryKind::Missing | EntryKind::Unreadable(_)
        ) {
            if manifest.folders.iter().any(|(kind, _)| *kind == subtree) {
                notes.push(
                    Problem::warning(format!(
                        "`aidlc.contributes.{}` names {declared}/, which does not exist",
                        subtree.key()
                    ))
                    .of_plugin_at(&name, &manifest.path)
                    .at_key_in(&manifest.text, &["aidlc", "contributes", subtree.key()]),
                );
            }
            continue;
        }
        let mut walk_into = Walk {
            base: &folder,
            subtree,
            plugin: &name,
            source,
            files: &mut files,
            problems: &mut problems,
        };
        walk_into.folder(&folder);
    }
    let memory = root.join(manifest.folder(Subtree::Memory));
    if source.kind(&memory, Follow::Yes) == EntryKind::Folder {
        notes.push(
            Problem::warning(
                "its memory/ subtree is not composed (method and rule additions are not projected yet)",
            )
            .of_plugin_at(&name, memory),
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let manifest_bytes = source.read(&manifest.path).unwrap_or_default();
    let integrity = tree_integrity(&manifest_bytes, &files);
    Ok(PluginTree {
        root: root.to_owned(),
        manifest,
        files,
        integrity,
        notes,
    })
}

/// A git repository's own folder: never part of a plugin tree, wherever it is (a git plugin
/// whose subtree is its root `.` has its clone's `.git/` there), so composed files, the kept
/// copy (which leaves it out too) and the lock agree.
const GIT_FOLDER: &str = ".git";

/// One subtree's walk: where it starts, whose it is, and what it has found.
struct Walk<'a> {
    base: &'a Utf8Path,
    subtree: Subtree,
    plugin: &'a str,
    source: &'a dyn TreeSource,
    files: &'a mut Vec<PluginFile>,
    problems: &'a mut Vec<Problem>,
}

impl Walk<'_> {
    fn problem(&self, message: impl Into<String>, path: &Utf8Path) -> Problem {
        Problem::new(message).of_plugin_at(self.plugin, path)
    }

    fn folder(&mut self, folder: &Utf8Path) {
        let entries = match self.source.list(folder) {
            Ok(entries) => entries,
            Err(error) => {
                self.problems
                    .push(self.problem(format!("cannot list the folder: {error}"), folder));
                return;
            }
        };
        for entry in entries {
            let path = match entry {
                ListedName::Entry(path) => path,
                ListedName::Failed(error) => {
                    self.problems
                        .push(self.problem(format!("cannot list the folder: {error}"), folder));
                    continue;
                }
                ListedName::NotUtf8(shown) => {
                    self.problems
                        .push(self.problem(format!("a file name is not UTF-8: {shown}"), folder));
                    continue;
                }
            };
            if path.file_name() == Some(GIT_FOLDER) {
                continue;
            }
            let problem = match self.source.kind(&path, Follow::No) {
                EntryKind::Folder => {
                    self.folder(&path);
                    continue;
                }
                EntryKind::File => {
                    self.file(path);
                    continue;
                }
                EntryKind::Missing | EntryKind::Unreadable(_) => {
                    self.problem("cannot read the file's type", &path)
                }
                EntryKind::Link => self
                    .problem("is a symbolic link; a plugin holds regular files and folders only (a link may point outside the plugin root)", &path)
                    .with_help("replace the link with a copy of the file"),
                EntryKind::Other => {
                    self.problem("is not a regular file (a FIFO, socket or device)", &path)
                }
            };
            self.problems.push(problem);
        }
    }

    fn file(&mut self, path: Utf8PathBuf) {
        match self.source.read(&path) {
            Ok(bytes) => {
                let relative = path
                    .strip_prefix(self.base)
                    .map(|relative| crate::leaves::fs_util::to_posix(relative.as_str()))
                    .unwrap_or_default();
                self.files.push(PluginFile {
                    subtree: self.subtree,
                    relative,
                    source: path,
                    bytes,
                });
            }
            Err(error) => self
                .problems
                .push(self.problem(format!("cannot read the file: {error}"), &path)),
        }
    }
}

/// `blake3:<hex>` over the manifest's bytes and each file's subtree, path and bytes, in path
/// order (not the listing order, which differs between machines).
fn tree_integrity(manifest_bytes: &[u8], files: &[PluginFile]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(manifest_bytes);
    let mut sorted: Vec<&PluginFile> = files.iter().collect();
    sorted.sort_by(|a, b| (a.subtree, &a.relative).cmp(&(b.subtree, &b.relative)));
    for file in sorted {
        hasher.update(file.subtree.key().as_bytes());
        hasher.update(&[0]);
        hasher.update(file.relative.as_bytes());
        hasher.update(&[0]);
        hasher.update(&(file.bytes.len() as u64).to_le_bytes());
        hasher.update(&file.bytes);
    }
    format!("blake3:{}", hasher.finalize().to_hex())
}
