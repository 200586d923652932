//! The plugin trees as salsa inputs, for a process that composes again and again: the language
//! server (docs/decisions.md D54).
//!
//! Data flow: a root read once through a recording [`DiskSource`] → its mirror
//! ([`MirroredRoot`], one [`MirroredFile`] per file read) → the tracked [`plugin_tree`], read
//! from the mirror; how a change reaches the mirror is D54's.
//!
//! Invariants:
//! - the mirror holds exactly the answers the reader asked for on its last read from the disk,
//!   with bytes kept current by [`PluginTrees::changed`]; the questions the reader asks depend
//!   only on the manifest's bytes and on those structural answers, never on another file's
//!   bytes, which is why a byte change of another file needs no new read from the disk;
//! - a question the mirror has no answer for is never answered by a guess: the read is marked
//!   incomplete, and the root is read from the disk again before its tree is handed out;
//! - [`plugin_tree`] does no I/O: its only inputs are the mirror's.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

use crate::plugin::Problem;
use crate::plugin::manifest::manifest_candidates;
use crate::plugin::tree::{self, PluginTree};
use crate::plugin::tree_source::{
    DiskSource, EntryKind, Follow, ListedName, Overlay, RecordedAnswers, TreeSource,
};

/// One file a plugin tree's read read: its bytes (an editor's unsaved text, when it has one).
#[salsa::input(debug)]
pub struct MirroredFile {
    #[returns(ref)]
    pub path: Utf8PathBuf,
    #[returns(ref)]
    pub bytes: Result<Arc<Vec<u8>>, String>,
}

/// The structural answers of one root's last read from the disk, and its files' inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootAnswers {
    pub kinds: BTreeMap<(Utf8PathBuf, Follow), EntryKind>,
    pub listings: BTreeMap<Utf8PathBuf, Result<Vec<ListedName>, String>>,
    pub canonicals: BTreeMap<Utf8PathBuf, Result<Utf8PathBuf, String>>,
    pub files: BTreeMap<Utf8PathBuf, MirroredFile>,
}

impl RootAnswers {
    /// Whether a change at `path` may change what the reader asks or is answered, other than
    /// a read file's bytes: something at or beneath it was asked about (it was removed or
    /// renamed whole), or it is at or beneath a path asked about (a folder listed, whose
    /// walk goes all the way down; a folder or file looked for, which may be appearing with
    /// everything in it, in one batch or in several).
    fn is_touched_by(&self, path: &Utf8Path) -> bool {
        let asked = |asked: &Utf8Path| asked.starts_with(path) || path.starts_with(asked);
        self.kinds.keys().any(|(asked_path, _)| asked(asked_path))
            || self.listings.keys().any(|folder| asked(folder))
            || self.canonicals.keys().any(|linked| asked(linked))
    }
}

/// A plugin root and its mirror.
#[salsa::input(debug)]
pub struct MirroredRoot {
    #[returns(ref)]
    pub root: Utf8PathBuf,
    #[returns(ref)]
    pub answers: Arc<RootAnswers>,
}

/// A tree read from its root's mirror.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRead {
    pub tree: Result<PluginTree, Vec<Problem>>,
    /// False when the reader asked something the mirror has no answer for (the tree is then
    /// not used: the root is read from the disk again).
    pub complete: bool,
}

/// The plugin at `root`, read from its mirror.
#[salsa::tracked(returns(ref))]
pub fn plugin_tree(db: &dyn salsa::Database, root: MirroredRoot) -> TreeRead {
    let source = MirrorSource {
        db,
        answers: root.answers(db),
        missed: Cell::new(false),
    };
    let tree = tree::read_tree_from(&source, root.root(db));
    TreeRead {
        tree,
        complete: !source.missed.get(),
    }
}

/// The reader's questions, answered from a root's mirror.
struct MirrorSource<'db> {
    db: &'db dyn salsa::Database,
    answers: &'db RootAnswers,
    missed: Cell<bool>,
}

const NOT_MIRRORED: &str = "not in the language server's copy of the plugin's tree";

impl MirrorSource<'_> {
    /// The mirror's answer when it has one, else `missing` (and the read is incomplete).
    fn answer<T: Clone>(&self, found: Option<&T>, missing: T) -> T {
        found.cloned().unwrap_or_else(|| {
            self.missed.set(true);
            missing
        })
    }
}

impl TreeSource for MirrorSource<'_> {
    fn kind(&self, path: &Utf8Path, follow: Follow) -> EntryKind {
        let found = self.answers.kinds.get(&(path.to_owned(), follow));
        self.answer(found, EntryKind::Unreadable(NOT_MIRRORED.to_owned()))
    }

    fn list(&self, folder: &Utf8Path) -> Result<Vec<ListedName>, String> {
        let found = self.answers.listings.get(folder);
        self.answer(found, Err(NOT_MIRRORED.to_owned()))
    }

    fn read(&self, path: &Utf8Path) -> Result<Vec<u8>, String> {
        let Some(file) = self.answers.files.get(path) else {
            return self.answer(None, Err(NOT_MIRRORED.to_owned()));
        };
        file.bytes(self.db)
            .as_ref()
            .map(|bytes| bytes.as_ref().clone())
            .map_err(Clone::clone)
    }

    fn canonical(&self, path: &Utf8Path) -> Result<Utf8PathBuf, String> {
        let found = self.answers.canonicals.get(path);
        self.answer(found, Err(NOT_MIRRORED.to_owned()))
    }
}

/// The database of [`PluginTrees`]. In tests it records which queries executed.
#[salsa::db]
#[derive(Clone, Default)]
pub struct PluginTreesDatabase {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for PluginTreesDatabase {}

/// The warm plugin trees of one process: each root mirrored once, kept current by the changes
/// it is told about.
#[derive(Default)]
pub struct PluginTrees {
    state: RefCell<MirrorState>,
}

#[derive(Default)]
struct MirrorState {
    db: PluginTreesDatabase,
    roots: BTreeMap<Utf8PathBuf, MirroredRoot>,
    /// The editor's unsaved texts, standing for the bytes of the files they name.
    overlay: Overlay,
    /// The folders a file watcher keeps the mirror current for: a root inside none of them is
    /// read from the disk each time (a mirror nothing keeps current would go stale).
    watched: BTreeSet<Utf8PathBuf>,
    /// Every root asked for, mirrored or not: the folders the caller should watch.
    asked: BTreeSet<Utf8PathBuf>,
    /// How many times a root was read from the disk (the tests count them).
    disk_reads: usize,
    /// Whether [`MirrorState::answers_of`] set a file's bytes (read by `read_root_again`).
    bytes_set: bool,
}

impl PluginTrees {
    /// The plugin at `root` (canonical), from its mirror (or the reader's problems, as a read
    /// from the disk gives them); the root is read from the disk the first time, and again
    /// when its mirror cannot answer.
    pub fn tree(&self, root: &Utf8Path) -> Result<PluginTree, Vec<Problem>> {
        let mut state = self.state.borrow_mut();
        state.asked.insert(root.to_owned());
        if !state
            .watched
            .iter()
            .any(|watched| root.starts_with(watched))
        {
            state.disk_reads += 1;
            return tree::read_tree_over(root, &state.overlay);
        }
        let mirrored = match state.roots.get(root) {
            Some(mirrored) => *mirrored,
            None => state.mirror_root(root),
        };
        let read = plugin_tree(&state.db, mirrored);
        if read.complete {
            return read.tree.clone();
        }
        state.read_root_again(mirrored);
        let read = plugin_tree(&state.db, mirrored);
        if read.complete {
            return read.tree.clone();
        }
        // Not reached while the reader asks the same questions for the same answers (a fresh
        // mirror holds every answer its recording read gave); if it ever did not, the tree
        // is read from the disk as every command reads it, never guessed.
        drop(state);
        tree::read_tree_over(root, &self.state.borrow().overlay)
    }

    /// Tell the mirror that `paths` changed on disk (a watcher's batch); `everything` when the
    /// watcher may have missed some (an overflow), which reads every root again. Returns
    /// whether a tree asked for may now be different: a mirror changed, or a path is in a root
    /// that is read from the disk each time.
    pub fn changed(&self, paths: &BTreeSet<Utf8PathBuf>, everything: bool) -> bool {
        let mut state = self.state.borrow_mut();
        let touches =
            |root: &Utf8Path, path: &Utf8Path| path.starts_with(root) || root.starts_with(path);
        let mut may_differ = state
            .asked
            .iter()
            .filter(|root| !state.roots.contains_key(*root))
            .any(|root| everything || paths.iter().any(|path| touches(root, path)));
        let roots: Vec<MirroredRoot> = state.roots.values().copied().collect();
        for mirrored in roots {
            let root = mirrored.root(&state.db).clone();
            let inside: Vec<&Utf8PathBuf> =
                paths.iter().filter(|path| touches(&root, path)).collect();
            if everything {
                may_differ |= state.read_root_again(mirrored);
            } else if !inside.is_empty() {
                may_differ |= state.apply_changes(mirrored, &inside);
            }
        }
        may_differ
    }

    /// Replace the editor's unsaved texts: a file whose text came, changed or went is read
    /// again (from the new text, or from the disk).
    pub fn set_overlay(&self, overlay: Overlay) -> bool {
        let changed: BTreeSet<Utf8PathBuf> = {
            let state = self.state.borrow();
            let paths: BTreeSet<&Utf8PathBuf> =
                state.overlay.keys().chain(overlay.keys()).collect();
            paths
                .into_iter()
                .filter(|path| state.overlay.get(*path) != overlay.get(*path))
                .cloned()
                .collect()
        };
        self.state.borrow_mut().overlay = overlay;
        !changed.is_empty() && self.changed(&changed, false)
    }

    /// Trust the mirror for the roots inside `watched` only, the folders a file watcher now
    /// reports changes in (the watcher already running: a change after this call is reported).
    /// A root that leaves them is forgotten, and one that enters them is mirrored afresh the
    /// next time it is asked for, so no mirror predates the watch that keeps it current.
    pub fn watch_only(&self, watched: BTreeSet<Utf8PathBuf>) {
        let mut state = self.state.borrow_mut();
        let covered = |set: &BTreeSet<Utf8PathBuf>, root: &Utf8Path| {
            set.iter().any(|folder| root.starts_with(folder))
        };
        let previous = std::mem::take(&mut state.watched);
        state
            .roots
            .retain(|root, _| covered(&previous, root) && covered(&watched, root));
        state.watched = watched;
    }

    /// Every root asked for so far (canonical), mirrored or read from the disk.
    pub fn asked_roots(&self) -> BTreeSet<Utf8PathBuf> {
        self.state.borrow().asked.clone()
    }
}

impl tree::TreeReader for PluginTrees {
    fn read_tree(&self, root: &Utf8Path) -> Result<PluginTree, Vec<Problem>> {
        self.tree(root)
    }
}

impl MirrorState {
    fn mirror_root(&mut self, root: &Utf8Path) -> MirroredRoot {
        let recorded = self.record_root(root);
        let answers = self.answers_of(recorded, &RootAnswers::default());
        let mirrored = MirroredRoot::new(&self.db, root.to_owned(), Arc::new(answers));
        self.roots.insert(root.to_owned(), mirrored);
        mirrored
    }

    fn record_root(&mut self, root: &Utf8Path) -> RecordedAnswers {
        self.disk_reads += 1;
        let source = DiskSource::recording(&self.overlay);
        // The tree is read again from the mirror; this read is for its answers.
        let _ = tree::read_tree_from(&source, root);
        source.into_recorded()
    }

    /// `recorded` as a root's answers, each file keeping the input it has in `previous` (its
    /// bytes set when they changed).
    fn answers_of(&mut self, recorded: RecordedAnswers, previous: &RootAnswers) -> RootAnswers {
        let mut files = BTreeMap::new();
        for (path, bytes) in recorded.reads {
            let bytes = bytes.map(Arc::new);
            let file = match previous.files.get(&path) {
                Some(file) => {
                    self.bytes_set |= self.set_bytes(*file, bytes);
                    *file
                }
                None => MirroredFile::new(&self.db, path.clone(), bytes),
            };
            files.insert(path, file);
        }
        RootAnswers {
            kinds: recorded.kinds,
            listings: recorded.listings,
            canonicals: recorded.canonicals,
            files,
        }
    }

    /// Returns whether the bytes changed.
    fn set_bytes(&mut self, file: MirroredFile, bytes: Result<Arc<Vec<u8>>, String>) -> bool {
        use salsa::Setter;
        if *file.bytes(&self.db) == bytes {
            return false;
        }
        let _previous_bytes = file.set_bytes(&mut self.db).to(bytes);
        true
    }

    /// Returns whether the mirror changed.
    fn read_root_again(&mut self, mirrored: MirroredRoot) -> bool {
        use salsa::Setter;
        let root = mirrored.root(&self.db).clone();
        let recorded = self.record_root(&root);
        let previous = mirrored.answers(&self.db).clone();
        self.bytes_set = false;
        let answers = self.answers_of(recorded, &previous);
        let structure_changed = answers != *previous;
        if structure_changed {
            let _previous_answers = mirrored.set_answers(&mut self.db).to(Arc::new(answers));
        }
        structure_changed || std::mem::take(&mut self.bytes_set)
    }

    /// Apply changes at `paths` inside a root: a read file that is still the same kind of
    /// thing gets its bytes again; anything else reads the root from the disk again.
    fn apply_changes(&mut self, mirrored: MirroredRoot, paths: &[&Utf8PathBuf]) -> bool {
        let answers = mirrored.answers(&self.db).clone();
        let root = mirrored.root(&self.db).clone();
        let mut new_bytes = Vec::new();
        for path in paths {
            let Some(file) = answers.files.get(*path) else {
                if answers.is_touched_by(path) {
                    return self.read_root_again(mirrored);
                }
                continue;
            };
            let same_kind = [Follow::No, Follow::Yes].iter().all(|follow| {
                answers
                    .kinds
                    .get(&((*path).clone(), *follow))
                    .is_none_or(|kind| *kind == DiskSource::new(&self.overlay).kind(path, *follow))
            });
            // A manifest's bytes decide which folders are read.
            if !same_kind || manifest_candidates(&root).any(|manifest| manifest == **path) {
                return self.read_root_again(mirrored);
            }
            let bytes = DiskSource::new(&self.overlay).read(path).map(Arc::new);
            new_bytes.push((*file, bytes));
        }
        let mut changed = false;
        for (file, bytes) in new_bytes {
            changed |= self.set_bytes(file, bytes);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::tree::TreeReader;

    /// A plugin `name` under `parent` with a stage, a knowledge file and a contribution.
    fn write_plugin(parent: &Utf8Path, name: &str) -> Utf8PathBuf {
        let root = parent.join(name);
        std::fs::create_dir_all(root.join(".aidlc-plugin")).unwrap();
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            format!("{{\"name\": \"{name}\", \"version\": \"1.0.0\"}}"),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("stages/inception")).unwrap();
        std::fs::write(
            root.join("stages/inception/review.md"),
            "---\nslug: review\n---\n# Review\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("knowledge/deep")).unwrap();
        std::fs::write(root.join("knowledge/deep/notes.md"), "notes\n").unwrap();
        root.canonicalize_utf8().unwrap()
    }

    fn temp_folder() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        (dir, path)
    }

    fn logged_trees() -> (PluginTrees, crate::compile::db::ExecutionLog) {
        let log = crate::compile::db::ExecutionLog::default();
        let db = PluginTreesDatabase {
            storage: salsa::Storage::new(Some(crate::compile::db::execution_logger(
                log.clone(),
                false,
            ))),
        };
        let trees = PluginTrees {
            state: RefCell::new(MirrorState {
                db,
                ..MirrorState::default()
            }),
        };
        (trees, log)
    }

    /// How many times a root was read from the disk so far.
    fn disk_reads(trees: &PluginTrees) -> usize {
        trees.state.borrow().disk_reads
    }

    fn tree_executions(log: &crate::compile::db::ExecutionLog) -> usize {
        let entries = std::mem::take(&mut *log.lock().unwrap());
        entries
            .iter()
            .filter(|entry| entry.starts_with("plugin_tree"))
            .count()
    }

    fn watching(trees: &PluginTrees, folder: &Utf8Path) {
        trees.watch_only(BTreeSet::from([folder.to_owned()]));
    }

    /// A plugin `acme` in a watched folder, its tree asked for once.
    fn one_watched_plugin_read_once() -> (tempfile::TempDir, Utf8PathBuf, PluginTrees) {
        let (dir, folder) = temp_folder();
        let acme = write_plugin(&folder, "acme");
        let trees = PluginTrees::default();
        watching(&trees, &folder);
        trees.tree(&acme).unwrap();
        (dir, acme, trees)
    }

    #[test]
    fn the_mirror_gives_the_tree_the_disk_gives() {
        let (_dir, folder) = temp_folder();
        let root = write_plugin(&folder, "acme");
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            r#"{"name": "acme", "version": "1.0.0", "aidlc": {"contributes": {"knowledge": "docs"}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/a.md"), "a\n").unwrap();
        std::fs::create_dir_all(root.join("memory")).unwrap();
        let trees = PluginTrees::default();
        watching(&trees, &folder);
        assert_eq!(trees.tree(&root), tree::FromDisk.read_tree(&root));
        // A second ask is the memo: no read of the disk.
        assert_eq!(trees.tree(&root), tree::FromDisk.read_tree(&root));
        assert_eq!(disk_reads(&trees), 1);
    }

    #[test]
    fn a_refused_tree_is_refused_the_same_from_the_mirror() {
        let (_dir, folder) = temp_folder();
        let root = write_plugin(&folder, "acme");
        std::os::unix::fs::symlink("/etc/passwd", root.join("stages/inception/link.md")).unwrap();
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            "{\"name\": \"acme\"",
        )
        .unwrap();
        let trees = PluginTrees::default();
        watching(&trees, &folder);
        let from_mirror = trees.tree(&root);
        assert!(from_mirror.is_err());
        assert_eq!(from_mirror, tree::FromDisk.read_tree(&root));
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            "{\"name\": \"acme\"}",
        )
        .unwrap();
        trees.changed(
            &BTreeSet::from([root.join(".aidlc-plugin/plugin.json")]),
            false,
        );
        let from_mirror = trees.tree(&root);
        assert!(
            from_mirror.as_ref().unwrap_err()[0]
                .message()
                .contains("symbolic link")
        );
        assert_eq!(from_mirror, tree::FromDisk.read_tree(&root));
    }

    #[test]
    fn an_edit_of_one_plugins_file_reads_that_tree_again_from_memory_only() {
        let (_dir, folder) = temp_folder();
        let acme = write_plugin(&folder, "acme");
        let beta = write_plugin(&folder, "beta");
        let (trees, log) = logged_trees();
        watching(&trees, &folder);
        trees.tree(&acme).unwrap();
        trees.tree(&beta).unwrap();
        assert_eq!(tree_executions(&log), 2);
        assert_eq!(disk_reads(&trees), 2);

        let edited = acme.join("knowledge/deep/notes.md");
        std::fs::write(&edited, "more notes\n").unwrap();
        assert!(trees.changed(&BTreeSet::from([edited]), false));
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
        assert_eq!(trees.tree(&beta), tree::FromDisk.read_tree(&beta));
        assert_eq!(tree_executions(&log), 1, "only acme's tree is read again");
        assert_eq!(
            disk_reads(&trees),
            2,
            "from its mirror, not by walking its folders"
        );
    }

    #[test]
    fn the_same_bytes_saved_again_read_nothing_again() {
        let (_dir, folder) = temp_folder();
        let acme = write_plugin(&folder, "acme");
        let (trees, log) = logged_trees();
        watching(&trees, &folder);
        trees.tree(&acme).unwrap();
        tree_executions(&log);
        let saved = acme.join("stages/inception/review.md");
        std::fs::write(&saved, "---\nslug: review\n---\n# Review\n").unwrap();
        assert!(!trees.changed(&BTreeSet::from([saved]), false));
        trees.tree(&acme).unwrap();
        assert_eq!(tree_executions(&log), 0);
    }

    #[test]
    fn a_file_added_or_removed_or_a_manifest_edit_reads_the_root_from_the_disk_again() {
        let (_dir, acme, trees) = one_watched_plugin_read_once();

        let added = acme.join("knowledge/deep/more.md");
        std::fs::write(&added, "more\n").unwrap();
        assert!(trees.changed(&BTreeSet::from([added.clone()]), false));
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
        assert_eq!(disk_reads(&trees), 2);

        std::fs::remove_file(&added).unwrap();
        trees.changed(&BTreeSet::from([added]), false);
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
        assert_eq!(disk_reads(&trees), 3);

        let manifest = acme.join(".aidlc-plugin/plugin.json");
        std::fs::write(
            &manifest,
            r#"{"name": "acme", "aidlc": {"contributes": {"knowledge": "knowledge/deep"}}}"#,
        )
        .unwrap();
        trees.changed(&BTreeSet::from([manifest]), false);
        let tree = trees.tree(&acme).unwrap();
        assert_eq!(Ok(tree.clone()), tree::FromDisk.read_tree(&acme));
        assert_eq!(disk_reads(&trees), 4);
        assert!(tree.files.iter().any(|file| file.relative == "notes.md"));

        // A folder removed whole, reported only as the folder.
        std::fs::remove_dir_all(acme.join("knowledge")).unwrap();
        trees.changed(&BTreeSet::from([acme.join("knowledge")]), false);
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
    }

    #[test]
    fn a_change_the_reader_never_asked_about_reads_nothing_again() {
        let (_dir, acme, trees) = one_watched_plugin_read_once();
        std::fs::create_dir_all(acme.join(".git/objects")).unwrap();
        std::fs::write(acme.join(".git/objects/ab"), "x").unwrap();
        assert!(!trees.changed(&BTreeSet::from([acme.join(".git/objects/ab")]), false));
        trees.tree(&acme).unwrap();
        assert_eq!(disk_reads(&trees), 1);
    }

    #[test]
    fn an_unwatched_root_is_read_from_the_disk_every_time() {
        let (_dir, folder) = temp_folder();
        let acme = write_plugin(&folder, "acme");
        let trees = PluginTrees::default();
        trees.tree(&acme).unwrap();
        let edited = acme.join("knowledge/deep/notes.md");
        std::fs::write(&edited, "changed, and nobody said so\n").unwrap();
        assert!(trees.changed(&BTreeSet::from([edited.clone()]), false));
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
        assert_eq!(disk_reads(&trees), 2);
        assert_eq!(trees.asked_roots(), BTreeSet::from([acme.clone()]));

        // Watched from now on: mirrored afresh, then trusted.
        watching(&trees, &folder);
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
        assert_eq!(disk_reads(&trees), 3);
        trees.tree(&acme).unwrap();
        assert_eq!(disk_reads(&trees), 3);

        // No longer watched: forgotten, so a later watch starts from the disk again.
        trees.watch_only(BTreeSet::new());
        std::fs::write(&edited, "changed while unwatched\n").unwrap();
        watching(&trees, &folder);
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
    }

    #[test]
    fn an_overflow_reads_every_root_again() {
        let (_dir, acme, trees) = one_watched_plugin_read_once();
        let edited = acme.join("knowledge/deep/notes.md");
        std::fs::write(&edited, "changed, the event lost\n").unwrap();
        trees.changed(&BTreeSet::new(), true);
        assert_eq!(trees.tree(&acme), tree::FromDisk.read_tree(&acme));
    }

    #[test]
    fn the_editors_text_stands_for_a_files_bytes_and_goes_with_the_buffer() {
        let (_dir, folder) = temp_folder();
        let acme = write_plugin(&folder, "acme");
        let beta = write_plugin(&folder, "beta");
        let (trees, log) = logged_trees();
        watching(&trees, &folder);
        trees.tree(&acme).unwrap();
        trees.tree(&beta).unwrap();
        tree_executions(&log);

        let notes = beta.join("knowledge/deep/notes.md");
        let overlay = Overlay::from([(notes.clone(), "unsaved\n".to_owned())]);
        trees.set_overlay(overlay.clone());
        assert_eq!(trees.tree(&beta), tree::read_tree_over(&beta, &overlay));
        trees.tree(&acme).unwrap();
        assert_eq!(tree_executions(&log), 1);
        let file = |tree: PluginTree| {
            tree.files
                .into_iter()
                .find(|file| file.source == notes)
                .unwrap()
                .bytes
        };
        assert_eq!(file(trees.tree(&beta).unwrap()), b"unsaved\n");

        // A buffer for a path the tree lacks adds no file.
        let ghost = beta.join("knowledge/ghost.md");
        trees.set_overlay(Overlay::from([(ghost.clone(), "ghost\n".to_owned())]));
        let tree = trees.tree(&beta).unwrap();
        assert_eq!(file(tree.clone()), b"notes\n");
        assert!(tree.files.iter().all(|file| file.source != ghost));
        assert_eq!(Ok(tree), tree::FromDisk.read_tree(&beta));
    }

    /// A small deterministic generator (no dependency): the same seed, the same steps.
    struct Steps(u64);

    impl Steps {
        fn below(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(self.0 >> 33).unwrap() % bound
        }
    }

    /// Differential: after every one of many random edits (files written and removed,
    /// folders made and removed, the manifest changed, a link, editor buffers opened and
    /// closed), reported as a watcher reports them, the warm tree is the tree a read from the
    /// disk gives.
    #[test]
    fn the_mirror_follows_random_edits_as_a_read_from_the_disk_would() {
        const FILES: [&str; 8] = [
            "stages/inception/review.md",
            "stages/inception/other.md",
            "knowledge/deep/notes.md",
            "knowledge/deep/deeper/more.md",
            "knowledge/top.md",
            "docs/guide.md",
            "sensors/aidlc-acme-lint.md",
            "contributions/inception/review.md",
        ];
        const FOLDERS: [&str; 3] = ["knowledge/deep", "docs", "stages/inception"];
        const MANIFESTS: [&str; 4] = [
            r#"{"name": "acme", "version": "1.0.0"}"#,
            r#"{"name": "acme", "aidlc": {"contributes": {"knowledge": "docs"}}}"#,
            r#"{"name": "acme", "aidlc": {"contributes": {"knowledge": "knowledge/deep"}}}"#,
            r#"{"name": "acme""#,
        ];
        for seed in 1..=10_u64 {
            let (_dir, folder) = temp_folder();
            let acme = write_plugin(&folder, "acme");
            let trees = PluginTrees::default();
            watching(&trees, &folder);
            let mut overlay = Overlay::new();
            let mut steps = Steps(seed);
            trees.tree(&acme).ok();
            for step in 0..200 {
                let mut touched = BTreeSet::new();
                match steps.below(7) {
                    0 | 1 => {
                        let path = acme.join(FILES[steps.below(FILES.len())]);
                        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                        std::fs::write(&path, format!("text {}\n", steps.below(3))).unwrap();
                        touched.insert(path);
                    }
                    2 => {
                        let path = acme.join(FILES[steps.below(FILES.len())]);
                        let _ = std::fs::remove_file(&path);
                        touched.insert(path);
                    }
                    3 => {
                        let path = acme.join(FOLDERS[steps.below(FOLDERS.len())]);
                        let _ = std::fs::remove_dir_all(&path);
                        touched.insert(path);
                    }
                    4 => {
                        let path = acme.join(".aidlc-plugin/plugin.json");
                        std::fs::write(&path, MANIFESTS[steps.below(MANIFESTS.len())]).unwrap();
                        touched.insert(path);
                    }
                    5 => {
                        let path = acme.join("knowledge/link.md");
                        if path.symlink_metadata().is_ok() {
                            std::fs::remove_file(&path).unwrap();
                        } else if acme.join("knowledge").is_dir() {
                            std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
                        }
                        touched.insert(path);
                    }
                    _ => {
                        let path = acme.join(FILES[steps.below(FILES.len())]);
                        if overlay.remove(&path).is_none() {
                            overlay.insert(path, format!("unsaved {step}\n"));
                        }
                        trees.set_overlay(overlay.clone());
                    }
                }
                trees.changed(&touched, false);
                assert_eq!(
                    trees.tree(&acme),
                    tree::read_tree_over(&acme, &overlay),
                    "seed {seed}, step {step}, after touching {touched:?}"
                );
            }
        }
    }

    #[test]
    fn a_question_the_mirror_cannot_answer_marks_the_read_incomplete() {
        let (_dir, folder) = temp_folder();
        let acme = write_plugin(&folder, "acme");
        let db = PluginTreesDatabase::default();
        let empty = MirroredRoot::new(&db, acme, Arc::new(RootAnswers::default()));
        let read = plugin_tree(&db, empty);
        assert!(!read.complete);
        assert!(read.tree.is_err());
    }
}
