//! The language server's one database and what it mirrors: the project's files as on disk,
//! overlaid by the editor's text for the files it has open.
//!
//! Invariants:
//! - file text enters the database only through `discover::ProjectInputs::refresh` (disk) and
//!   [`ServerState::apply_overlays`] (editor text), each calling a setter only when the bytes
//!   differ, exactly as watch mode does; so the diagnostics of a session are the ones
//!   `aidlc compile` would print for the same bytes;
//! - an open document's text wins over the disk until it is closed; closing it reads the disk
//!   again (the editor may close without saving);
//! - nothing here writes to disk.

use std::collections::{HashMap, HashSet};

use camino::{Utf8Path, Utf8PathBuf};
use lsp_types::{TextDocumentContentChangeEvent, Uri};

use crate::compile::db::{CompilerDatabase, FileContents, Project, SourceFile};
use crate::compile::discover::{
    self, InputChanges, Layout, MAX_INPUT_BYTES, ProjectInputs, Reread,
};
use crate::compile::syntax::frontmatter::ColumnUnit;

/// What a project file is, which decides what its keys mean to the editor features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    Manifest,
    Stage,
    Agent,
    Scope,
    Rule,
    /// `<harness>/tools/data/harness.json`, whose `plugins` key the compile reads strictly:
    /// its diagnostics are published with their spans, and the editor's text overlays it.
    HarnessSettings,
    /// `stage-graph.json`, `scope-grid.json` or the reference's version stamp: read by the
    /// compile, never overlaid by an editor (the compile owns the outputs).
    Generated,
}

/// A document the editor has open.
#[derive(Debug, Clone)]
pub struct OpenDocument {
    /// The URI exactly as the client sent it, used when publishing back.
    pub uri: Uri,
    pub version: i32,
    pub text: String,
}

pub struct ServerState {
    pub layout: Layout,
    /// The project folder with every link resolved, to recognise a path the editor reached
    /// through a symbolic link.
    canonical_project_dir: Option<Utf8PathBuf>,
    pub db: CompilerDatabase,
    inputs: ProjectInputs,
    pub unit: ColumnUnit,
    /// By absolute path.
    documents: HashMap<Utf8PathBuf, OpenDocument>,
    /// Every file of the project by display path (project-relative, `/` separators).
    files: HashMap<Utf8PathBuf, (SourceFile, FileKind)>,
}

impl ServerState {
    /// Read the whole project into a fresh database and run the per-file queries on every core
    /// once, as a cold `aidlc compile` does.
    pub fn load(layout: Layout, unit: ColumnUnit) -> Self {
        let mut db = CompilerDatabase::default();
        let inputs = discover::load_project(&mut db, &layout);
        crate::compile::compute_in_parallel(&db);
        let canonical_project_dir = layout
            .project_dir
            .canonicalize_utf8()
            .ok()
            .filter(|canonical| *canonical != layout.project_dir);
        let mut state = Self {
            layout,
            canonical_project_dir,
            db,
            inputs,
            unit,
            documents: HashMap::new(),
            files: HashMap::new(),
        };
        state.index_files();
        state
    }

    fn index_files(&mut self) {
        let db = &self.db;
        let project = Project::get(db);
        let mut files = HashMap::new();
        let mut add = |file: SourceFile, kind: FileKind| {
            files.insert(file.path(db).clone(), (file, kind));
        };
        for &file in project.sensor_files(db) {
            add(file, FileKind::Manifest);
        }
        for entry in project.stage_files(db) {
            add(entry.file, FileKind::Stage);
        }
        for &file in project.agent_files(db) {
            add(file, FileKind::Agent);
        }
        for &file in project.scope_files(db) {
            add(file, FileKind::Scope);
        }
        for entry in project.rule_files(db) {
            add(entry.file, FileKind::Rule);
        }
        if let Some(file) = *project.harness_json(db) {
            add(file, FileKind::HarnessSettings);
        }
        let generated = [
            *project.existing_graph(db),
            *project.existing_grid(db),
            *project.reference_tools(db),
        ];
        for file in generated.into_iter().flatten() {
            add(file, FileKind::Generated);
        }
        self.files = files;
    }

    /// The path the project's listing uses for an absolute path the editor sent: the same
    /// path, unless it reaches the project folder through a different spelling (a symbolic
    /// link), when it is rewritten under the project folder as the compile spells it.
    pub fn project_path(&self, absolute: &Utf8Path) -> Utf8PathBuf {
        if absolute.starts_with(&self.layout.project_dir) {
            return absolute.to_owned();
        }
        let canonical = absolute.canonicalize_utf8().ok().or_else(|| {
            let parent = absolute.parent()?.canonicalize_utf8().ok()?;
            Some(parent.join(absolute.file_name()?))
        });
        let Some(canonical) = canonical else {
            return absolute.to_owned();
        };
        let project_dirs = [
            self.canonical_project_dir.as_deref(),
            Some(self.layout.project_dir.as_path()),
        ];
        for project_dir in project_dirs.into_iter().flatten() {
            if let Ok(relative) = canonical.strip_prefix(project_dir) {
                return self.layout.project_dir.join(relative);
            }
        }
        absolute.to_owned()
    }

    /// The absolute path of a display path.
    pub fn absolute_path(&self, display: &Utf8Path) -> Utf8PathBuf {
        if display.is_absolute() {
            display.to_owned()
        } else {
            self.layout.project_dir.join(display)
        }
    }

    /// The project file at an absolute path, with its kind; `None` for anything the compile
    /// does not read.
    pub fn file_at(&self, absolute: &Utf8Path) -> Option<(SourceFile, FileKind)> {
        self.files.get(&self.layout.display(absolute)).copied()
    }

    /// The project file with a display path.
    pub fn file_named(&self, display: &Utf8Path) -> Option<(SourceFile, FileKind)> {
        self.files.get(display).copied()
    }

    /// The text the database holds for a file; `None` when it is not text (the compile reports
    /// why).
    pub fn text_of(&self, file: SourceFile) -> Option<&str> {
        match file.contents(&self.db) {
            FileContents::Text(text) => Some(text.as_str()),
            _ => None,
        }
    }

    pub fn document(&self, absolute: &Utf8Path) -> Option<&OpenDocument> {
        self.documents.get(absolute)
    }

    /// Open a document with the editor's text. Returns whether the database changed.
    pub fn open(&mut self, absolute: &Utf8Path, uri: Uri, version: i32, text: String) -> bool {
        self.documents
            .insert(absolute.to_owned(), OpenDocument { uri, version, text });
        self.apply_overlay(absolute)
    }

    /// Apply the editor's changes to an open document, in order. Returns whether the database
    /// changed; a change to a document that was never opened is ignored (the client broke the
    /// protocol, and guessing its text would show wrong diagnostics).
    pub fn change(
        &mut self,
        absolute: &Utf8Path,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> bool {
        let unit = self.unit;
        let Some(document) = self.documents.get_mut(absolute) else {
            return false;
        };
        for change in changes {
            super::positions::apply_change(&mut document.text, change, unit);
        }
        document.version = version;
        self.apply_overlay(absolute)
    }

    /// Close a document: the file goes back to its bytes on disk. Returns whether the database
    /// changed.
    pub fn close(&mut self, absolute: &Utf8Path) -> bool {
        if self.documents.remove(absolute).is_none() {
            return false;
        }
        let paths: HashSet<Utf8PathBuf> = std::iter::once(absolute.to_owned()).collect();
        !self.refresh_from_disk(Reread::Paths(&paths)).is_empty()
    }

    /// Bring the files that are not open up to date with the disk (the watcher's or the
    /// client's file events), then put the open documents' text back over any file the refresh
    /// found or re-listed. Returns whether the database changed.
    pub fn refresh_changed_paths(&mut self, paths: &HashSet<Utf8PathBuf>, rescan: bool) -> bool {
        let closed_paths: HashSet<Utf8PathBuf> = paths
            .iter()
            .filter(|path| !self.documents.contains_key(*path))
            .cloned()
            .collect();
        let changes = if rescan {
            self.refresh_from_disk(Reread::Everything)
        } else {
            self.refresh_from_disk(Reread::Paths(&closed_paths))
        };
        let overlaid = self.apply_overlays();
        !changes.is_empty() || overlaid
    }

    fn refresh_from_disk(&mut self, reread: Reread<'_>) -> InputChanges {
        let changes = self.inputs.refresh(&mut self.db, &self.layout, reread);
        if !changes.added.is_empty() || !changes.removed.is_empty() {
            self.index_files();
        }
        changes
    }

    fn apply_overlays(&mut self) -> bool {
        let open: Vec<Utf8PathBuf> = self.documents.keys().cloned().collect();
        let mut changed = false;
        for path in open {
            changed |= self.apply_overlay(&path);
        }
        changed
    }

    /// Set the database's text of an open document's file to the editor's text. A document
    /// the compile does not read (another Markdown file, a file not saved yet) changes
    /// nothing; once it is saved into an input folder, the watcher's refresh finds it and
    /// [`Self::refresh_changed_paths`] overlays it.
    fn apply_overlay(&mut self, absolute: &Utf8Path) -> bool {
        let Some(document) = self.documents.get(absolute) else {
            return false;
        };
        let Some((file, kind)) = self.file_at(absolute) else {
            return false;
        };
        if kind == FileKind::Generated {
            return false;
        }
        let contents = editor_contents(&document.text);
        self.db.update_file(file, contents)
    }
}

/// The editor's text as the compile would read the same bytes from disk: an oversized or
/// binary text is refused the same way (`discover::read_input`), so an open file never passes
/// where the saved one would not.
fn editor_contents(text: &str) -> FileContents {
    let size = text.len() as u64;
    if size > MAX_INPUT_BYTES {
        return FileContents::TooLarge {
            size,
            limit: MAX_INPUT_BYTES,
        };
    }
    if text.bytes().take(8192).any(|byte| byte == 0) {
        return FileContents::Binary;
    }
    FileContents::Text(std::sync::Arc::new(text.to_owned()))
}
