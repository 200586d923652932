//! `aidlc compile --watch`: keep one salsa database warm, feed it the files that change, and
//! recompile only what those changes affect.
//!
//! Data flow: notify (through notify-debouncer-full) → [`WatchMessage`] on a channel →
//! [`WatchSession::rebuild`] → [`ProjectInputs::refresh`] (re-list the folders, re-read only the
//! named files, set only inputs whose bytes changed) → [`compile::compile`] → write the outputs
//! only when error-free and only when their bytes change.
//!
//! Invariants:
//! - the database always mirrors the disk as of the last refresh, including the outputs this
//!   session wrote, so a rebuild gives exactly the bytes a one-shot `aidlc compile` would;
//! - the outputs on disk are only ever the result of an error-free compile;
//! - nothing here prints: the caller renders each [`WatchEvent`] [`watch`] hands it;
//! - a composed plugin's folder is watched too ([`PluginFolders`], D53), and a change there is
//!   composed into the install by `aidlc plugin sync`'s own code before the compile; the
//!   database never reads a plugin's tree, only the install files the sync wrote.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::compile::db::CompilerDatabase;
use crate::compile::discover::{self, InputChanges, Layout, ProjectInputs, Reread};
use crate::compile::{self, CompileOutcome, WriteSummary};
use crate::harness::Harness;
use crate::protocol::graph_format::GraphFormat;

/// What the watcher threads tell the loop.
#[derive(Debug)]
pub enum WatchMessage {
    /// Files or folders changed. `rescan` asks to re-read everything (events were lost).
    Changed {
        paths: HashSet<Utf8PathBuf>,
        rescan: bool,
    },
    /// The watcher reported a problem (for example the inotify watch limit).
    WatcherError(String),
    /// Ctrl-C.
    Interrupted,
}

/// What happened to the outputs in one rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputsState {
    /// Written: which of the two files changed on disk (neither, when both were identical).
    Written(WriteSummary),
    /// The inputs have errors: the last good outputs stay on disk.
    KeptBecauseOfErrors,
    /// Writing failed; the message says why. The previous files are untouched.
    WriteFailed(String),
}

/// One compile of the watch session and what it did.
#[derive(Debug)]
pub struct Rebuild {
    /// What changed on disk since the previous rebuild (empty for the first compile).
    pub changes: InputChanges,
    pub outcome: CompileOutcome,
    /// Texts of the files the diagnostics point into.
    pub sources: BTreeMap<Utf8PathBuf, String>,
    /// From the refresh to the outputs being on disk.
    pub duration: Duration,
    pub outputs: OutputsState,
}

/// The warm database of a watch session and the inputs it mirrors.
pub struct WatchSession {
    layout: Layout,
    db: CompilerDatabase,
    inputs: ProjectInputs,
    /// The latest compile, when it was error-free and its outputs are on disk: what
    /// [`WatchSession::record_fingerprint`] records, and what the next rebuild compares with.
    last_written: Option<CompileOutcome>,
}

/// Whether `outcome` has the very output texts of `previous` (the same shared allocation,
/// which salsa hands back when the emitting queries did not change).
fn same_output_texts(outcome: &CompileOutcome, previous: &CompileOutcome) -> bool {
    std::sync::Arc::ptr_eq(&outcome.stage_graph, &previous.stage_graph)
        && std::sync::Arc::ptr_eq(&outcome.scope_grid, &previous.scope_grid)
}

impl WatchSession {
    /// Load every input and compile once.
    pub fn start(layout: Layout) -> (Self, Rebuild) {
        let started = Instant::now();
        let mut db = CompilerDatabase::default();
        let inputs = discover::load_project(&mut db, &layout);
        compile::compute_in_parallel(&db);
        let mut session = Self {
            layout,
            db,
            inputs,
            last_written: None,
        };
        let rebuild = session.compile_and_write(InputChanges::default(), started);
        (session, rebuild)
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Record the latest compile's fingerprint (when it was error-free and written), so a
    /// one-shot `aidlc compile` after the watch has nothing to do. Done once, when the watch
    /// stops, rather than after every rebuild: the record of 10,000 files costs more than the
    /// rebuild itself, and a record that is missing or stale only costs a real compile.
    pub fn record_fingerprint(&self) -> std::io::Result<()> {
        match &self.last_written {
            Some(outcome) => {
                crate::compile::up_to_date::record(&self.layout, outcome, &self.inputs)
            }
            None => Ok(()),
        }
    }

    /// Bring the inputs up to date with the disk and, if any input changed, compile again.
    /// `None` when nothing the compile reads changed (for example our own output writes).
    pub fn rebuild(&mut self, reread: Reread<'_>) -> Option<Rebuild> {
        let started = Instant::now();
        let changes = self.inputs.refresh(&mut self.db, &self.layout, reread);
        if changes.is_empty() {
            return None;
        }
        Some(self.compile_and_write(changes, started))
    }

    fn compile_and_write(&mut self, changes: InputChanges, started: Instant) -> Rebuild {
        let outcome = compile::compile_warm(&self.db);
        let sources = compile::source_texts(&self.db, &outcome.diagnostics);
        let outputs_untouched = !self.touches_outputs(&changes);
        let previous = self.last_written.take();
        let outputs = if outcome.n_errors() > 0 {
            OutputsState::KeptBecauseOfErrors
        } else if outputs_untouched
            && previous
                .as_ref()
                .is_some_and(|previous| same_output_texts(&outcome, previous))
        {
            // The outputs on disk are the ones written from these very texts, and no event
            // said they were touched since: nothing to compare or write.
            self.last_written = Some(outcome.clone());
            OutputsState::Written(WriteSummary::default())
        } else {
            match compile::write_outputs(&self.layout, &outcome) {
                Ok(summary) => {
                    self.note_outputs_written(&outcome, summary);
                    self.last_written = Some(outcome.clone());
                    OutputsState::Written(summary)
                }
                Err(error) => OutputsState::WriteFailed(error.to_string()),
            }
        };
        Rebuild {
            changes,
            outcome,
            sources,
            duration: started.elapsed(),
            outputs,
        }
    }

    /// Whether `changes` include one of the outputs (edited, replaced or deleted by someone else).
    fn touches_outputs(&self, changes: &InputChanges) -> bool {
        let outputs = [
            self.layout.display(&self.layout.stage_graph_path),
            self.layout.display(&self.layout.scope_grid_path),
        ];
        [&changes.modified, &changes.added, &changes.removed]
            .into_iter()
            .flatten()
            .any(|path| outputs.contains(path))
    }

    /// The outputs are also inputs (numbering is pinned by the existing graph): mirror what was
    /// just written, so the watcher's events for our own writes find nothing new, and hand
    /// over the graph's rows (also when the graph on disk already held these bytes) so the
    /// next compile does not parse the file back.
    fn note_outputs_written(&mut self, outcome: &CompileOutcome, summary: WriteSummary) {
        // Taken before any input changes, while the numbering's memo still holds. The rows
        // are exactly those a reader of the emitted graph would pin (every numbered stage is a
        // node), shared without a copy.
        let numbering = crate::compile::stage_graph::numbering::stage_numbering(&self.db);
        let rows = std::sync::Arc::clone(&numbering.by_slug);
        if summary.graph_written {
            let text = std::sync::Arc::clone(&outcome.stage_graph);
            let path = &self.layout.stage_graph_path;
            self.inputs
                .note_output_written(&mut self.db, &self.layout, path, text);
        }
        if summary.grid_written {
            let text = std::sync::Arc::clone(&outcome.scope_grid);
            let path = &self.layout.scope_grid_path;
            self.inputs
                .note_output_written(&mut self.db, &self.layout, path, text);
        }
        self.inputs.note_graph_on_disk(&mut self.db, rows);
    }
}

/// The folders to watch for `layout`: each input folder recursively when it exists, else its
/// nearest existing ancestor (non-recursively, to see it appear); the project folder itself,
/// to see a harness folder appear or vanish; and each composed plugin's folder in
/// `plugin_roots` the same way (D53).
pub fn watch_roots(
    project_dir: &Utf8Path,
    layout: Option<&Layout>,
    plugin_roots: &[Utf8PathBuf],
) -> Vec<(PathBuf, bool)> {
    let mut wanted: Vec<(Utf8PathBuf, bool)> = vec![(project_dir.to_owned(), false)];
    wanted.extend(plugin_roots.iter().map(|root| existing_root(root)));
    if let Some(layout) = layout {
        let harness_root = layout.project_dir.join(layout.harness.dir_name());
        let folders = [
            harness_root,
            layout.sensors_dir.clone(),
            layout.stages_dir.clone(),
            layout.agents_dir.clone(),
            layout.scopes_dir.clone(),
            layout.rules_dir.clone(),
            parent_of(&layout.stage_graph_path),
            parent_of(&layout.scope_grid_path),
        ];
        wanted.extend(folders.iter().map(|folder| existing_root(folder)));
    }
    let mut roots: Vec<(PathBuf, bool)> = Vec::new();
    for (path, is_recursive) in &wanted {
        let covered = wanted.iter().any(|(root, root_is_recursive)| {
            *root_is_recursive && path.starts_with(root) && (path != root || !is_recursive)
        });
        let duplicate = roots
            .iter()
            .any(|(existing, _)| existing.as_path() == path.as_std_path());
        if !covered && !duplicate {
            roots.push((path.clone().into_std_path_buf(), *is_recursive));
        }
    }
    roots
}

fn parent_of(path: &Utf8Path) -> Utf8PathBuf {
    path.parent()
        .map_or_else(|| path.to_owned(), Utf8Path::to_owned)
}

/// `(folder, true)` when it exists, else `(nearest existing ancestor, false)`.
fn existing_root(folder: &Utf8Path) -> (Utf8PathBuf, bool) {
    if folder.is_dir() {
        return (folder.to_owned(), true);
    }
    let ancestor = folder
        .ancestors()
        .skip(1)
        .find(|ancestor| ancestor.is_dir())
        .unwrap_or(folder);
    (ancestor.to_owned(), false)
}

/// The notify watcher with its debouncer, and the roots it currently watches.
pub struct FolderWatcher {
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    watched: HashMap<PathBuf, bool>,
}

impl FolderWatcher {
    /// Start the debouncer; batches go to `sender` as [`WatchMessage`]s.
    pub fn start(debounce: Duration, sender: Sender<WatchMessage>) -> Result<Self, String> {
        let handler = move |result: DebounceEventResult| {
            let _ = sender.send(message_of(result));
        };
        let debouncer = new_debouncer(debounce, None, handler).map_err(|e| e.to_string())?;
        Ok(Self {
            debouncer,
            watched: HashMap::new(),
        })
    }

    /// The folders watched with everything beneath them (UTF-8 paths only).
    pub fn watched_recursively(&self) -> std::collections::BTreeSet<Utf8PathBuf> {
        self.watched
            .iter()
            .filter(|(_, recursive)| **recursive)
            .filter_map(|(path, _)| Utf8PathBuf::from_path_buf(path.clone()).ok())
            .collect()
    }

    /// Watch exactly `roots`: add the new ones, drop the ones no longer wanted. Returns
    /// whether any root was added, and the problems met (a root that vanished meanwhile is
    /// retried on the next call).
    pub fn watch_exactly(&mut self, roots: &[(PathBuf, bool)]) -> (bool, Vec<String>) {
        let mut problems = Vec::new();
        let mut added = false;
        let wanted: HashMap<PathBuf, bool> = roots.iter().cloned().collect();
        let stale: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|(path, recursive)| wanted.get(*path) != Some(recursive))
            .map(|(path, _)| path.clone())
            .collect();
        for path in stale {
            let _ = self.debouncer.unwatch(&path);
            self.watched.remove(&path);
        }
        for (path, recursive) in wanted {
            if self.watched.contains_key(&path) {
                continue;
            }
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            match self.debouncer.watch(&path, mode) {
                Ok(()) => {
                    self.watched.insert(path, recursive);
                    added = true;
                }
                Err(error) => problems.push(format!("cannot watch {}: {error}", path.display())),
            }
        }
        (added, problems)
    }
}

/// Turn one debounced batch into a message: the paths of every non-access event.
fn message_of(result: DebounceEventResult) -> WatchMessage {
    match result {
        Ok(events) => {
            let mut paths = HashSet::new();
            let mut rescan = false;
            for event in events {
                rescan |= event.need_rescan();
                if matches!(event.kind, EventKind::Access(_)) {
                    continue;
                }
                paths.extend(
                    event
                        .paths
                        .iter()
                        .filter_map(|path| Utf8PathBuf::from_path_buf(path.clone()).ok()),
                );
            }
            WatchMessage::Changed { paths, rescan }
        }
        Err(errors) => WatchMessage::WatcherError(
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}

/// What the watch loop tells its caller, in order; the caller renders each and prints nothing
/// else between them.
#[derive(Debug)]
pub enum WatchEvent<'a> {
    /// The watch began: `compiled` when a harness folder was found (and compiled), else the
    /// loop waits for one to appear.
    Began { compiled: bool },
    /// A compile of the session.
    Rebuilt {
        layout: &'a Layout,
        rebuild: &'a Rebuild,
    },
    /// The watcher met a problem; every input is re-read on the next change.
    WatcherError(&'a str),
}

/// The composed plugins of the install (D53), of which the compile half knows nothing: the
/// watch asks for their folders each time it arms, and has the ones a batch touched composed
/// into the install before it rebuilds. `plugin::recompose::FollowedPlugins` is the one
/// implementation, and reports what it does itself.
pub trait PluginFolders {
    /// The folders of the plugins `layout`'s install composes (none without a layout).
    fn roots(&mut self, layout: Option<&Layout>) -> Vec<Utf8PathBuf>;

    /// Compose into the install the plugins whose folders `paths` touch (every plugin after
    /// `rescan`): the absolute paths the composition wrote, for the rebuild to re-read.
    fn recompose_touched(
        &mut self,
        layout: &Layout,
        paths: &HashSet<Utf8PathBuf>,
        rescan: bool,
    ) -> HashSet<Utf8PathBuf>;

    /// Compose the plugins that changed at their source before the watch began (D55), so the
    /// first compile is of the plugins as they are.
    fn recompose_changed_before_the_watch(&mut self, layout: &Layout);
}

/// What the watch of one project is asked to do.
pub struct WatchRequest<'a> {
    pub project_dir: &'a Utf8Path,
    /// The harness asked for; `None` lets the first harness folder found decide.
    pub harness: Option<Harness>,
    pub graph_format: Option<GraphFormat>,
    pub debounce: Duration,
    /// The environment, for the folders `Layout::new` lets it override.
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Watch the project until Ctrl-C (or until `reader_gone` says so, checked before each wait):
/// compile once, then after each batch of changes have `plugins` recompose the composed plugins
/// it touched (D53) and rebuild, re-arm the watcher, and on the way out record the last
/// compile's fingerprint. Each step is handed to `report` as it happens. `Err` when the watch
/// cannot start (the interrupt handler or the watcher).
pub fn watch(
    request: &WatchRequest<'_>,
    plugins: &mut dyn PluginFolders,
    reader_gone: impl Fn() -> bool,
    report: &mut dyn FnMut(WatchEvent<'_>),
) -> Result<(), String> {
    let (sender, receiver) = mpsc::channel();
    crate::leaves::interrupt::install().map_err(|error| error.to_string())?;
    let interrupt = sender.clone();
    crate::leaves::interrupt::on_interrupt(move || {
        let _ = interrupt.send(WatchMessage::Interrupted);
    });
    let watcher = FolderWatcher::start(request.debounce, sender)
        .map_err(|error| format!("cannot watch files: {error}"))?;
    let mut watching = Watching {
        request,
        plugins,
        report,
        watcher,
    };
    let mut session = watching.start_session();
    (watching.report)(WatchEvent::Began {
        compiled: session.is_some(),
    });
    while !reader_gone()
        && let Some(batch) = Batch::collect(&receiver)
    {
        for error in &batch.errors {
            (watching.report)(WatchEvent::WatcherError(error));
        }
        if batch.interrupted {
            break;
        }
        match &mut session {
            Some(active) => watching.rebuild(active, batch),
            None => session = watching.start_session(),
        }
    }
    if let Some(session) = &session
        && let Err(error) = session.record_fingerprint()
    {
        let error = format!("could not record the last compile: {error}");
        (watching.report)(WatchEvent::WatcherError(&error));
    }
    Ok(())
}

/// Everything that arrived while the previous rebuild ran, merged.
#[derive(Default)]
struct Batch {
    paths: HashSet<Utf8PathBuf>,
    rescan: bool,
    errors: Vec<String>,
    interrupted: bool,
}

impl Batch {
    fn absorb(&mut self, message: WatchMessage) {
        match message {
            WatchMessage::Changed { paths, rescan } => {
                self.paths.extend(paths);
                self.rescan |= rescan;
            }
            WatchMessage::WatcherError(error) => {
                self.errors.push(error);
                self.rescan = true;
            }
            WatchMessage::Interrupted => self.interrupted = true,
        }
    }

    /// Block for one message, then take whatever else is already queued.
    fn collect(receiver: &Receiver<WatchMessage>) -> Option<Self> {
        let mut batch = Self::default();
        batch.absorb(receiver.recv().ok()?);
        while let Ok(message) = receiver.try_recv() {
            batch.absorb(message);
        }
        Some(batch)
    }
}

/// The loop's state between batches: what it watches, and whom it tells.
struct Watching<'r, 'e> {
    request: &'r WatchRequest<'r>,
    plugins: &'e mut dyn PluginFolders,
    report: &'e mut dyn FnMut(WatchEvent<'_>),
    watcher: FolderWatcher,
}

impl Watching<'_, '_> {
    /// Compile once if the project has a harness folder yet; `None` while it has none. The
    /// folders are watched before anything is read, so no write can fall between the two.
    fn start_session(&mut self) -> Option<WatchSession> {
        let project_dir = self.request.project_dir;
        let Ok(harness) = crate::harness::pick_harness(project_dir, self.request.harness) else {
            self.arm(None);
            return None;
        };
        let layout = Layout::new(project_dir, harness, self.request.env)
            .with_graph_format(self.request.graph_format);
        self.arm(Some(&layout));
        // The folders are already watched: an edit from here on is a change of its own.
        self.plugins.recompose_changed_before_the_watch(&layout);
        let (session, rebuild) = WatchSession::start(layout);
        self.report_rebuild(session.layout(), &rebuild);
        Some(session)
    }

    fn rebuild(&mut self, session: &mut WatchSession, batch: Batch) {
        let mut paths = batch.paths;
        // A composed plugin changed: compose it into the install first (D53), then re-read
        // what the sync wrote with the batch, so the compile below sees the new composition
        // and the watcher's events for the sync's own writes find nothing new.
        let written = self
            .plugins
            .recompose_touched(session.layout(), &paths, batch.rescan);
        paths.extend(written);
        let reread = if batch.rescan {
            Reread::Everything
        } else {
            Reread::Paths(&paths)
        };
        if let Some(rebuild) = session.rebuild(reread) {
            self.report_rebuild(session.layout(), &rebuild);
        }
        // A folder that appeared gets its own watch only now: anything written into it before
        // that is found by re-reading everything once.
        if self.arm(Some(session.layout()))
            && let Some(rebuild) = session.rebuild(Reread::Everything)
        {
            self.report_rebuild(session.layout(), &rebuild);
        }
    }

    fn report_rebuild(&mut self, layout: &Layout, rebuild: &Rebuild) {
        (self.report)(WatchEvent::Rebuilt { layout, rebuild });
    }

    /// Watch the folders `layout` reads and the folders of the plugins its lock file records;
    /// true when a folder was newly added.
    fn arm(&mut self, layout: Option<&Layout>) -> bool {
        let plugin_roots = self.plugins.roots(layout);
        let roots = watch_roots(self.request.project_dir, layout, &plugin_roots);
        let (added, problems) = self.watcher.watch_exactly(&roots);
        for problem in problems {
            (self.report)(WatchEvent::WatcherError(&problem));
        }
        added
    }
}
