//! The composed plugins `compile --watch` follows (D53): [`FollowedPlugins`] is the watch's
//! [`PluginFolders`], reading the lock file each time the watch arms and running
//! [`recompose`] for the plugins a batch touched. It reports what it does as
//! [`FollowEvent`]s; the caller renders them.

use std::collections::HashSet;

use camino::Utf8PathBuf;

use crate::compile::discover::Layout;
use crate::compile::watch::PluginFolders;
use crate::plugin::operations::RecordedSource;
use crate::plugin::recompose::{ComposedSources, Recomposition, recompose};
use crate::plugin::tree::FromDisk;

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
        let check = match crate::plugin::operations::changed_sources(layout, &FromDisk) {
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
