//! [`Workspace`]: the project as one command sees it, resolved once at the command line's edge
//! and passed down, so that no runtime path re-reads the cursors from the disk. The hook's
//! health files, the detail folder and the learnings selections folder are functions of its
//! install version, so every writer and reader agrees on them.
//!
//! Invariant: the cursors (`aidlc/active-space`, the space's `active-intent`) and the record
//! listing are read exactly once, in [`Workspace::resolve`]; the methods only combine what was
//! read then. A command that must not guess asks [`Workspace::unambiguous_active_intent`], which
//! refuses several records without a cursor from the same reading. The clone id is read (or
//! minted) at most once per value.
//!
//! Must not: print, or read the ledger or the manifests; of the graph it reads only the keys
//! that tell its version, and only when the tools stamp does not.

use std::sync::{Arc, Mutex, OnceLock};

use camino::{Utf8Path, Utf8PathBuf};

use super::clone_id::{audit_dir, clone_id, host_name};
use super::error::WorkspaceError;
use super::intents::{IntentResolution, intent_records, resolve_intent_among};
use super::spaces::{active_space, intents_dir, space_dir};
use super::write_folders::{FIRST_RUN_MARKER_FILE, hooks_health_dir};
use crate::compile::discover::Layout;
use crate::protocol::graph_format::GraphFormat;

/// The project one command works on, with its space and intent resolved (D11).
#[derive(Debug)]
pub struct Workspace {
    /// Where the inputs and the compiled graph are.
    pub layout: Layout,
    space: String,
    records: Vec<Utf8PathBuf>,
    intent: IntentResolution,
    record_root: Utf8PathBuf,
    version: GraphFormat,
    /// The compiled graph's text as this command first read it (the version detection, else
    /// the first reader of the graph), shared by every later reader, so that one command reads
    /// `stage-graph.json` once however many files it fires on. Only the compile writes the
    /// graph, and it holds no workspace. (`Arc<String>`, not `Arc<str>`: sharing the text read
    /// moves it, where `Arc<str>` would copy every byte.)
    graph_text: Mutex<Option<Arc<String>>>,
    clone_id: OnceLock<String>,
}

impl Workspace {
    /// Read the active space, its intent records, the active-intent cursor and the install's
    /// version, once.
    pub fn resolve(layout: Layout) -> Self {
        let (version, graph_text) = GraphFormat::of_install_files_keeping_graph(
            &layout.reference_tools_path,
            &layout.stage_graph_path,
        );
        let project_dir = &layout.project_dir;
        let space = active_space(project_dir);
        let records = intent_records(project_dir, &space);
        // Without an explicit choice the resolution cannot fail: it only reads the cursor.
        let intent = resolve_intent_among(project_dir, &space, &records, None)
            .unwrap_or(IntentResolution::NoRecords);
        let record_root = match &intent {
            IntentResolution::Record(record) => record.clone(),
            IntentResolution::NoRecords | IntentResolution::SeveralWithoutCursor(_) => {
                intents_dir(project_dir, &space)
            }
        };
        Self {
            layout,
            space,
            records,
            intent,
            record_root,
            version,
            graph_text: Mutex::new(graph_text.map(Arc::new)),
            clone_id: OnceLock::new(),
        }
    }

    /// The reference version whose record-local files this install keeps: its graph format.
    pub fn version(&self) -> GraphFormat {
        self.version
    }

    /// The compiled graph's text this command read, once it has read it.
    pub fn graph_text(&self) -> Option<Arc<String>> {
        self.graph_text
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Keep `text`, the graph's text as the first reader read it, for every later reader.
    pub fn keep_graph_text(&self, text: Arc<String>) {
        *self
            .graph_text
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(text);
    }

    pub fn project_dir(&self) -> &Utf8Path {
        &self.layout.project_dir
    }

    pub fn space(&self) -> &str {
        &self.space
    }

    /// `aidlc/spaces/<space>/`.
    pub fn space_dir(&self) -> Utf8PathBuf {
        space_dir(self.project_dir(), &self.space)
    }

    /// `aidlc/spaces/<space>/intents/`: the space record root.
    pub fn intents_dir(&self) -> Utf8PathBuf {
        intents_dir(self.project_dir(), &self.space)
    }

    /// Every intent record of the active space, sorted by folder name.
    pub fn intent_records(&self) -> &[Utf8PathBuf] {
        &self.records
    }

    /// The active intent record: the cursor's, else the lone record; `None` when there is no
    /// record, or several and no cursor (paths then resolve to the space record root).
    pub fn active_intent(&self) -> Option<&Utf8Path> {
        match &self.intent {
            IntentResolution::Record(record) => Some(record),
            IntentResolution::NoRecords | IntentResolution::SeveralWithoutCursor(_) => None,
        }
    }

    /// The active intent record for a command that must not guess: several records and no
    /// usable cursor is an error saying how to set the cursor; no record at all is `Ok(None)`.
    pub fn unambiguous_active_intent(&self) -> Result<Option<Utf8PathBuf>, WorkspaceError> {
        self.intent
            .clone()
            .unambiguous(self.project_dir(), &self.space)
    }

    /// The record `explicit` names (a folder name, or a uuid or slug of `intents.json`), else
    /// the active one as [`Workspace::unambiguous_active_intent`] gives it.
    pub fn chosen_intent(
        &self,
        explicit: Option<&str>,
    ) -> Result<Option<Utf8PathBuf>, WorkspaceError> {
        match explicit {
            None => self.unambiguous_active_intent(),
            Some(requested) => resolve_intent_among(
                self.project_dir(),
                &self.space,
                &self.records,
                Some(requested),
            )?
            .unambiguous(self.project_dir(), &self.space),
        }
    }

    /// The record root paths resolve to: the active intent record, else the space record root.
    pub fn record_root(&self) -> &Utf8Path {
        &self.record_root
    }

    /// `<record_root>/.aidlc-hooks-health`: the write hook's heartbeat, drop log and first-run
    /// marker (every version).
    pub fn hooks_health_dir(&self) -> Utf8PathBuf {
        hooks_health_dir(&self.record_root)
    }

    /// The write hook's heartbeat, `<health>/<hook>.last` (`run-sensors`, or 2.5's
    /// `sensor-fire`), holding the ISO time of its latest run.
    pub fn write_hook_heartbeat_file(&self) -> Utf8PathBuf {
        self.hooks_health_dir()
            .join(format!("{}.last", self.version.write_hook_name()))
    }

    /// The write hook's drop log, `<health>/<hook>.drops`: one `<ISO time><TAB><reason>` line per
    /// write that was not checked.
    pub fn write_hook_drops_file(&self) -> Utf8PathBuf {
        self.hooks_health_dir()
            .join(format!("{}.drops", self.version.write_hook_name()))
    }

    /// `<health>/.first-fired`: present once sensors have run in this record.
    pub fn first_run_marker_file(&self) -> Utf8PathBuf {
        self.hooks_health_dir().join(FIRST_RUN_MARKER_FILE)
    }

    /// Where detail files go, by the install's version; one folder per stage below it.
    pub fn sensor_detail_dir(&self) -> Utf8PathBuf {
        self.version.sensor_detail_dir(&self.record_root)
    }

    /// This clone's id, read or minted on first use and kept for the rest of the command.
    pub fn clone_id(&self) -> std::io::Result<&str> {
        if let Some(id) = self.clone_id.get() {
            return Ok(id);
        }
        let id = clone_id(self.project_dir())?;
        Ok(self.clone_id.get_or_init(|| id))
    }

    /// This clone's audit shard under the record root: `<record_root>/audit/<host>-<id>.md`.
    pub fn audit_shard(&self) -> std::io::Result<Utf8PathBuf> {
        self.audit_shard_under(&self.record_root)
    }

    /// This clone's audit shard under another record root (a gate checks the record it names).
    pub fn audit_shard_under(&self, record_root: &Utf8Path) -> std::io::Result<Utf8PathBuf> {
        let id = self.clone_id()?;
        Ok(audit_dir(record_root).join(format!("{}-{id}.md", host_name())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;
    use crate::runtime::workspace::record_root;
    use crate::runtime::workspace::test_support::{
        audit_shard_path, make_record, set_intent_cursor, temp_project, unambiguous_active_intent,
        write,
    };

    fn resolved(project: &Utf8Path) -> Workspace {
        Workspace::resolve(Layout::new(project, Harness::Claude, &|_| None))
    }

    #[test]
    fn it_agrees_with_the_free_functions_it_replaces() {
        let (_dir, project) = temp_project();
        let workspace = resolved(&project);
        assert_eq!(workspace.space(), "default");
        assert_eq!(workspace.active_intent(), None);
        assert_eq!(workspace.record_root(), record_root(&project));
        assert_eq!(workspace.unambiguous_active_intent(), Ok(None));

        write(&project.join("aidlc/active-space"), "team\n");
        let record = make_record(&project, "team", "260904-x");
        let workspace = resolved(&project);
        assert_eq!(workspace.space(), "team");
        assert_eq!(workspace.active_intent(), Some(record.as_path()));
        assert_eq!(workspace.record_root(), record_root(&project));
        assert_eq!(workspace.space_dir(), project.join("aidlc/spaces/team"));
        assert_eq!(workspace.intent_records(), std::slice::from_ref(&record));
        assert_eq!(workspace.audit_shard().unwrap(), audit_shard_path(&project));
    }

    #[test]
    fn several_records_without_a_cursor_are_refused_only_where_a_guess_is_not_allowed() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260903-a");
        let b = make_record(&project, "default", "260904-b");
        let workspace = resolved(&project);
        assert_eq!(workspace.active_intent(), None);
        assert_eq!(workspace.record_root(), workspace.intents_dir());
        assert_eq!(
            workspace.unambiguous_active_intent(),
            unambiguous_active_intent(&project, "default", None)
        );
        assert!(workspace.unambiguous_active_intent().is_err());
        assert_eq!(
            workspace.chosen_intent(Some("260904-b")),
            Ok(Some(b.clone()))
        );
        assert!(workspace.chosen_intent(Some("nope")).is_err());

        set_intent_cursor(&project, "default", "260904-b");
        assert_eq!(resolved(&project).unambiguous_active_intent(), Ok(Some(b)));
    }

    #[test]
    fn the_record_local_files_follow_the_install_s_version() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260904-x");
        let workspace = resolved(&project);
        assert_eq!(workspace.version(), GraphFormat::Gate);
        let health = record.join(".aidlc-hooks-health");
        assert_eq!(workspace.hooks_health_dir(), health);
        assert_eq!(
            workspace.write_hook_heartbeat_file(),
            health.join("run-sensors.last")
        );
        assert_eq!(
            workspace.write_hook_drops_file(),
            health.join("run-sensors.drops")
        );
        assert_eq!(
            workspace.first_run_marker_file(),
            health.join(".first-fired")
        );
        assert_eq!(
            workspace.sensor_detail_dir(),
            record.join(".aidlc-engine/sensors")
        );

        write(
            &project.join(".claude/tools/aidlc-version.ts"),
            "export const AIDLC_VERSION = \"2.6.54\";\n",
        );
        let v26 = resolved(&project);
        assert_eq!(v26.version(), GraphFormat::Reference26);
        assert_eq!(
            v26.write_hook_heartbeat_file(),
            health.join("run-sensors.last")
        );
        assert_eq!(v26.sensor_detail_dir(), record.join(".aidlc-sensors"));

        write(
            &project.join(".claude/tools/aidlc-version.ts"),
            "export const AIDLC_VERSION = \"2.5.36\";\n",
        );
        let v25 = resolved(&project);
        assert_eq!(v25.version(), GraphFormat::Reference25);
        assert_eq!(
            v25.write_hook_heartbeat_file(),
            health.join("sensor-fire.last")
        );
        assert_eq!(
            v25.write_hook_drops_file(),
            health.join("sensor-fire.drops")
        );
        assert_eq!(v25.sensor_detail_dir(), record.join(".aidlc-sensors"));
    }

    #[test]
    fn the_cursors_are_read_once() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260904-x");
        let workspace = resolved(&project);
        // A cursor written after the resolution does not move this command's workspace.
        write(&project.join("aidlc/active-space"), "elsewhere\n");
        assert_eq!(workspace.space(), "default");
        assert_eq!(workspace.record_root(), record);
        let first = workspace.clone_id().unwrap().to_owned();
        std::fs::remove_file(project.join("aidlc/.aidlc-clone-id")).unwrap();
        assert_eq!(workspace.clone_id().unwrap(), first);
    }
}
