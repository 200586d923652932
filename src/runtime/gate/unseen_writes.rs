//! Deliverables the write hook has not seen: files changed after the write hook last ran in
//! the record (its heartbeat, `<health>/<hook>.last`), so their write-fired sensors never
//! checked them. `gate start`/`revise` narrate them, `gate check` reports them as a notice and
//! `aidlc doctor` has a row naming them.
//!
//! Invariants:
//! - only where the write hook is registered with the harness (by the engine or the reference):
//!   with no registration at all, the doctor's registration row is the one that fails, and
//!   nothing here is said;
//! - the time compared is the heartbeat file's modification time (nanoseconds), not the
//!   seconds its text holds, so a file the hook saw within the same second is not unseen;
//! - a record without a heartbeat has never had its write hook run: every deliverable is
//!   unseen.

use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::commands::HookRole;
use crate::harness::hook_harness;
use crate::harness::registration::registered;
use crate::runtime::audit::ledger::relative_path_field;
use crate::runtime::workspace::Workspace;

/// The deliverables changed after the write hook last ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnseenWrites {
    /// When the write hook last ran in this record; `None`: never.
    pub hook_last_ran: Option<SystemTime>,
    /// Project-relative paths, in the order given.
    pub files: Vec<String>,
}

impl UnseenWrites {
    /// The sentence `gate start`/`revise` and `gate check` say: which files, since when, and
    /// the two fixes.
    pub fn sentence(&self, stage: &str) -> String {
        let since = match self.hook_last_ran {
            Some(time) => format!(
                "changed after the write hook last ran ({})",
                crate::leaves::timestamp::iso_timestamp(time)
            ),
            None => "changed, and the write hook has never run in this record".to_owned(),
        };
        let first = self.files.first().map_or("<file>", String::as_str);
        format!(
            "The write hook never saw {} of stage {stage}: {} {since}; their write-fired sensors did not check them. Check that the hook runs (`aidlc hook install`, then `aidlc doctor`), or run a sensor on each now: `aidlc engine sensor fire <sensor> --stage {stage} --output-path {first}`.",
            crate::leaves::english::counted(self.files.len(), "file"),
            self.files.join(", ")
        )
    }
}

/// Of `deliverables` (absolute), those modified after the write hook last ran; `None` when
/// none is, or when the write hook is not registered.
pub fn unseen_writes(workspace: &Workspace, deliverables: &[Utf8PathBuf]) -> Option<UnseenWrites> {
    let layout = &workspace.layout;
    // A registration that cannot be read registers no write hook.
    let write_hook_registered = || {
        let harness = hook_harness(&layout.project_dir, layout.harness, None);
        registered(&layout.project_dir, harness)
            .is_ok_and(|found| found.iter().any(|entry| entry.role == HookRole::Write))
    };
    if deliverables.is_empty() || !write_hook_registered() {
        return None;
    }
    // The heartbeat file's modification time; `None` when the hook never ran.
    let hook_last_ran = std::fs::metadata(workspace.write_hook_heartbeat_file())
        .and_then(|metadata| metadata.modified())
        .ok();
    let files: Vec<String> = deliverables
        .iter()
        .filter(|path| changed_after(path, hook_last_ran))
        .map(|path| relative_path_field(workspace.project_dir(), path.as_str()))
        .collect();
    (!files.is_empty()).then_some(UnseenWrites {
        hook_last_ran,
        files,
    })
}

/// The active stage's deliverables the write hook has not seen, with the stage and its
/// write-fired sensors; `None` outside an active workflow, for a stage the graph lacks, or when
/// every deliverable was seen.
pub fn active_stage_unseen_writes(workspace: &Workspace) -> Option<ActiveStageUnseen> {
    let workflow = crate::runtime::workspace::present_workflow(workspace.record_root())?;
    let graph =
        crate::runtime::dispatch::compiled_graph::load_graph(&workspace.layout.stage_graph_path)
            .ok()?;
    active_stage_unseen_writes_in(workspace, &workflow, &graph.nodes)
}

/// [`active_stage_unseen_writes`] of `workflow`, with the graph's nodes already read
/// (`gate check`).
pub fn active_stage_unseen_writes_in(
    workspace: &Workspace,
    workflow: &crate::runtime::workspace::PresentWorkflow,
    nodes: &[crate::protocol::stage_node::GraphNode],
) -> Option<ActiveStageUnseen> {
    let choice = &workflow.stage_choice;
    let node = crate::runtime::dispatch::compiled_graph::active_stage_node(nodes, choice)?;
    let deliverables = crate::runtime::gate::deliverables::existing_deliverables(
        workspace,
        &workflow.record_root,
        node,
        &[],
    )
    .ok()?;
    let unseen = unseen_writes(workspace, &deliverables.files)?;
    Some(ActiveStageUnseen {
        stage: node.slug.clone(),
        write_fired_sensors: node
            .sensors_applicable
            .iter()
            .filter(|entry| entry.fire_on == crate::protocol::selection::FireOn::Write)
            .map(|entry| entry.id.clone())
            .collect(),
        unseen,
    })
}

/// What [`active_stage_unseen_writes`] finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveStageUnseen {
    pub stage: String,
    pub write_fired_sensors: Vec<String>,
    pub unseen: UnseenWrites,
}

fn changed_after(path: &Utf8Path, hook_last_ran: Option<SystemTime>) -> bool {
    let Ok(modified) = std::fs::metadata(path).and_then(|metadata| metadata.modified()) else {
        return false;
    };
    hook_last_ran.is_none_or(|last| modified > last)
}
