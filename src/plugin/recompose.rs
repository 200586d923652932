//! Composition in the watch loop (docs/decisions.md D53): which folders of the composed
//! plugins `compile --watch` watches, which plugins a batch of changes touched, and the sync it
//! runs then.
//!
//! Data flow: `aidlc.lock.json` → [`ComposedSources::read`] (each path plugin's folder, each
//! git plugin named but not watched) → the watcher's roots; a batch of changed paths →
//! [`ComposedSources::touched_by`] → [`recompose`], which is `aidlc plugin sync`'s own
//! `plugin::operations::sync` (the audit lock, the journal, the compile, D51's no-op) → the
//! install paths it wrote, which the caller re-reads into its warm database before compiling.
//!
//! Invariants:
//! - the install changes only through `operations::sync`, so a refusal or a failed compile
//!   leaves it as it was (rolled back, nothing half-copied) and the last good outputs stay;
//! - plugin trees are read only through `operations` (`FromDisk`), and nothing here prints:
//!   the caller renders;
//! - a git plugin's kept copy under `aidlc/plugins/<name>/` is never watched: it is a clone of a
//!   commit, not the author's tree, and `sync` refuses an edit of it (D53).
//!
//! [`FollowedPlugins`] is the watch's [`PluginFolders`], reading the lock file each time the
//! watch arms and running [`recompose`] for the plugins a batch touched. It reports what it does
//! as [`FollowEvent`]s; the caller renders them.

use std::collections::HashSet;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::Layout;
use crate::compile::watch::PluginFolders;
use crate::plugin::PluginError;
use crate::plugin::lock_file::{self, SourceKind};
use crate::plugin::operations::{self, ComposeOutcome, RecordedSource};
use crate::plugin::tree::FromDisk;

/// The composed plugins of an install, as the watch sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComposedSources {
    /// The path plugins, whose folders the watch follows; each root is canonical when it
    /// exists (the watcher reports paths under the folder it was given).
    pub watched: Vec<RecordedSource>,
    /// The git plugins, composed from a commit's clone, which the watch does not follow.
    pub unwatched: Vec<RecordedSource>,
}

impl ComposedSources {
    /// The lock file's plugins (none when the install has no lock file). Reads only the lock
    /// file, takes no lock and writes nothing; an unreadable lock is refused as `aidlc plugin
    /// sync` refuses it; the caller says so and watches no plugin.
    pub fn read(layout: &Layout) -> Result<Self, PluginError> {
        let lock = lock_file::read_lock(&layout.project_dir, layout.harness.dir_name())?;
        let mut sources = Self::default();
        for mut recorded in operations::recorded_sources(layout, &lock) {
            match recorded.kind {
                SourceKind::Path => {
                    recorded.root = recorded.root.canonicalize_utf8().unwrap_or(recorded.root);
                    sources.watched.push(recorded);
                }
                SourceKind::Git => sources.unwatched.push(recorded),
            }
        }
        Ok(sources)
    }

    /// The folders to watch, one per path plugin.
    pub fn roots(&self) -> Vec<Utf8PathBuf> {
        self.watched
            .iter()
            .map(|plugin| plugin.root.clone())
            .collect()
    }

    /// The plugins whose folder holds one of `paths` (or, for a folder that is gone, whose
    /// folder lies under one of them: its reappearance), in the lock's order, each once; every
    /// watched plugin after `rescan` (events were lost).
    pub fn touched_by(&self, paths: &HashSet<Utf8PathBuf>, rescan: bool) -> Vec<String> {
        self.watched
            .iter()
            .filter(|plugin| rescan || touch_plugin_root(paths, &plugin.root))
            .map(|plugin| plugin.name.clone())
            .collect()
    }

    /// Whether `paths` touch the folder of a watched plugin whose root is not in `except`
    /// (the language server's warm trees answer for those, docs/decisions.md D54).
    pub fn touched_outside(
        &self,
        paths: &HashSet<Utf8PathBuf>,
        except: &std::collections::BTreeSet<Utf8PathBuf>,
    ) -> bool {
        self.watched
            .iter()
            .filter(|plugin| !except.contains(&plugin.root))
            .any(|plugin| touch_plugin_root(paths, &plugin.root))
    }
}

/// Whether a changed path of `paths` is inside `root`, or is a folder on the way to a `root`
/// that does not exist (it is being created or restored).
fn touch_plugin_root(paths: &HashSet<Utf8PathBuf>, root: &Utf8Path) -> bool {
    paths
        .iter()
        .any(|path| path.starts_with(root) || (root.starts_with(path) && !root.is_dir()))
}

/// What one sync of the watch did.
#[derive(Debug)]
pub enum Recomposition {
    /// The composition is what the install already holds (D51's no-op sync): nothing written.
    Unchanged,
    /// The install was recomposed and compiled, in one committed transaction.
    Recomposed {
        /// The plugins whose folder changed.
        touched: Vec<String>,
        outcome: ComposeOutcome,
    },
    /// The sync refused or its compile failed: rolled back, the install is as it was.
    Failed {
        touched: Vec<String>,
        error: PluginError,
    },
}

impl Recomposition {
    /// The absolute paths the sync wrote or removed in the install, the lock file, and the
    /// two outputs (the sync's own compile may have rewritten them, and the graph is an input
    /// of the next compile): what the watch's database must re-read so that it mirrors the
    /// disk again, before the watcher's events for those writes arrive.
    pub fn install_paths(&self, layout: &Layout) -> HashSet<Utf8PathBuf> {
        let Self::Recomposed { outcome, .. } = self else {
            return HashSet::new();
        };
        let project_dir = &layout.project_dir;
        outcome
            .written
            .iter()
            .chain(&outcome.removed)
            .map(|path| project_dir.join(path))
            .chain([
                lock_file::lock_path(project_dir),
                layout.stage_graph_path.clone(),
                layout.scope_grid_path.clone(),
            ])
            .collect()
    }
}

/// Run `aidlc plugin sync`'s own code for the plugins the lock records (no host plugin roots:
/// the watch recomposes what the install composed, D53) because `touched` changed.
pub fn recompose(layout: &Layout, touched: Vec<String>) -> Recomposition {
    match operations::sync(layout, &[]) {
        Ok(outcome) if outcome.written.is_empty() && outcome.removed.is_empty() => {
            Recomposition::Unchanged
        }
        Ok(outcome) => Recomposition::Recomposed { touched, outcome },
        Err(error) => Recomposition::Failed { touched, error },
    }
}

/// What following the composed plugins met.
#[derive(Debug)]
pub enum FollowEvent<'a> {
    /// The lock file cannot say which plugins to watch (said once per distinct reason, as `aidlc
    /// plugin sync` would word it in one line).
    Unreadable(&'a str),
    /// A composed git plugin the watch does not follow (said once).
    NotWatched(&'a RecordedSource),
    /// Whether a path plugin changed before the watch began could not be told: its folder or
    /// its files are refused as `aidlc plugin sync` would refuse them (one line).
    Unchecked(&'a str),
    /// Composed plugins changed and were composed into the install, or refused.
    Recomposed(&'a Recomposition),
}

/// The composed plugins as of the watch's last arming, and what was said about them.
pub struct FollowedPlugins<'r> {
    sources: ComposedSources,
    /// Why the lock file could not say which plugins to watch, as last reported (so a lock
    /// that stays unreadable is reported once, not after every change).
    unreadable_lock: Option<String>,
    /// The git plugins last reported as not watched.
    reported_unwatched: Vec<RecordedSource>,
    report: &'r mut dyn FnMut(FollowEvent<'_>),
}

impl<'r> FollowedPlugins<'r> {
    pub fn new(report: &'r mut dyn FnMut(FollowEvent<'_>)) -> Self {
        Self {
            sources: ComposedSources::default(),
            unreadable_lock: None,
            reported_unwatched: Vec::new(),
            report,
        }
    }

    /// The lock file's plugins; none, said once, when it cannot be read (the next `plugin sync`
    /// refuses it the same way).
    fn read_composed_sources(&mut self, layout: &Layout) -> ComposedSources {
        match ComposedSources::read(layout) {
            Ok(sources) => {
                self.unreadable_lock = None;
                sources
            }
            Err(error) => {
                let why = error.headline();
                if self.unreadable_lock.as_deref() != Some(why.as_str()) {
                    (self.report)(FollowEvent::Unreadable(&why));
                    self.unreadable_lock = Some(why);
                }
                ComposedSources::default()
            }
        }
    }
}

impl PluginFolders for FollowedPlugins<'_> {
    fn roots(&mut self, layout: Option<&Layout>) -> Vec<Utf8PathBuf> {
        self.sources = layout.map_or_else(ComposedSources::default, |layout| {
            self.read_composed_sources(layout)
        });
        if self.sources.unwatched != self.reported_unwatched {
            for plugin in &self.sources.unwatched {
                if !self.reported_unwatched.contains(plugin) {
                    (self.report)(FollowEvent::NotWatched(plugin));
                }
            }
            self.reported_unwatched.clone_from(&self.sources.unwatched);
        }
        self.sources.roots()
    }

    fn recompose_touched(
        &mut self,
        layout: &Layout,
        paths: &HashSet<Utf8PathBuf>,
        rescan: bool,
    ) -> HashSet<Utf8PathBuf> {
        let touched = self.sources.touched_by(paths, rescan);
        if touched.is_empty() {
            return HashSet::new();
        }
        let recomposition = recompose(layout, touched);
        (self.report)(FollowEvent::Recomposed(&recomposition));
        recomposition.install_paths(layout)
    }

    /// A lock file that cannot be read was said by [`PluginFolders::roots`] in the same words;
    /// any other refusal is said here, never passed over.
    fn recompose_changed_before_the_watch(&mut self, layout: &Layout) {
        let check = match operations::changed_sources(layout, &FromDisk) {
            Ok(check) => check,
            Err(error) => {
                let why = error.headline();
                if self.unreadable_lock.as_deref() != Some(why.as_str()) {
                    (self.report)(FollowEvent::Unchecked(&why));
                }
                return;
            }
        };
        if check.changed.is_empty() {
            return;
        }
        let names = check
            .changed
            .into_iter()
            .map(|plugin| plugin.name)
            .collect();
        (self.report)(FollowEvent::Recomposed(&recompose(layout, names)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_plugin(name: &str, source: &str, root: &Utf8Path) -> RecordedSource {
        RecordedSource {
            name: name.to_owned(),
            kind: SourceKind::Path,
            source: source.to_owned(),
            root: root.to_owned(),
        }
    }

    fn sources() -> ComposedSources {
        ComposedSources {
            watched: vec![
                path_plugin("acme", "../acme", Utf8Path::new("/shelf/acme")),
                path_plugin("beta", "/shelf/beta", Utf8Path::new("/shelf/beta")),
            ],
            unwatched: Vec::new(),
        }
    }

    fn paths(paths: &[&str]) -> HashSet<Utf8PathBuf> {
        paths.iter().map(Utf8PathBuf::from).collect()
    }

    #[test]
    fn a_change_inside_a_plugin_folder_touches_that_plugin_only() {
        let touched = sources().touched_by(&paths(&["/shelf/acme/stages/a.md"]), false);
        assert_eq!(touched, ["acme"]);
    }

    #[test]
    fn a_sibling_folder_with_a_longer_name_is_not_the_plugin() {
        let touched = sources().touched_by(&paths(&["/shelf/acme-two/stages/a.md"]), false);
        assert!(touched.is_empty(), "{touched:?}");
    }

    #[test]
    fn the_parent_of_a_missing_plugin_folder_touches_it_and_of_a_present_one_does_not() {
        let touched = sources().touched_by(&paths(&["/shelf"]), false);
        assert_eq!(
            touched,
            ["acme", "beta"],
            "neither /shelf/acme nor /shelf/beta exists"
        );
        let here = Utf8PathBuf::from_path_buf(std::env::current_dir().unwrap()).unwrap();
        let present = ComposedSources {
            watched: vec![path_plugin("here", here.as_str(), &here)],
            unwatched: Vec::new(),
        };
        let parent = here.parent().unwrap().as_str();
        assert!(present.touched_by(&paths(&[parent]), false).is_empty());
    }

    #[test]
    fn a_rescan_touches_every_watched_plugin_and_no_paths_touch_none() {
        assert_eq!(sources().touched_by(&paths(&[]), true), ["acme", "beta"]);
        assert!(sources().touched_by(&paths(&[]), false).is_empty());
    }
}
