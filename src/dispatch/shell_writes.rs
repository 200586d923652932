//! Writes through the shell: the pre-tool guard keeps what the project holds before a shell
//! tool call ([`record_shell_snapshot`]), and the write hook, after the call, fires on what
//! changed ([`shell_call_changes`]), as for a file tool's write of each changed file.
//!
//! Invariants:
//! - the snapshot is kept in the active record's hooks-health folder, one file per call
//!   (`shell-snapshots/<call key>.snapshot`), taken only inside an active workflow, and read
//!   once: the write hook removes it whatever it finds;
//! - the guard and the write hook walk the same project with the same folders left out
//!   ([`walk_skips`]), so a call that changed nothing shows no change;
//! - a shell call whose snapshot is missing or unreadable is [`ShellCallChanges::Unchecked`]
//!   with the reason (a drop), never taken for "nothing changed";
//! - deleting a file fires nothing (there is nothing to check); a deleted file the stage's
//!   write-fired sensors match is recorded by the write hook as a drop naming it. A rename is
//!   a deletion of the old path and a creation of the new one.

use camino::{Utf8Path, Utf8PathBuf};

use crate::dispatch::project_snapshot::{
    ProjectSnapshot, SnapshotChanges, load_snapshot, save_snapshot, snapshot_changes, take_snapshot,
};
use crate::harness::payload::ShellCall;
use crate::workspace::{self, Workspace};
use crate::write_folder;

/// The folder under the hooks-health folder that holds the snapshots of calls in progress.
pub const SHELL_SNAPSHOTS_DIR: &str = "shell-snapshots";

/// Where the snapshot taken before `call` is kept.
pub fn snapshot_file(workspace: &Workspace, call: &ShellCall) -> Utf8PathBuf {
    workspace
        .hooks_health_dir()
        .join(SHELL_SNAPSHOTS_DIR)
        .join(format!("{}.snapshot", call.key))
}

/// The folders the walk leaves out besides `.git`, `node_modules` and `target`: the
/// hooks-health folder (the snapshots themselves) and the dispatcher's detail folders.
pub fn walk_skips(workspace: &Workspace) -> Vec<Utf8PathBuf> {
    let record = workspace.record_root();
    vec![
        workspace.hooks_health_dir(),
        workspace.sensor_detail_dir(),
        workspace::sensor_detail_dir(record),
        workspace::legacy_sensor_detail_dir(record),
    ]
}

/// The project as the walk sees it now.
pub fn project_now(workspace: &Workspace) -> ProjectSnapshot {
    take_snapshot(workspace.project_dir(), &walk_skips(workspace))
}

/// Keep what the project holds before `call`, inside an active workflow; why it could not be
/// kept, when it could not (the write hook then records the call as unchecked).
pub fn record_shell_snapshot(workspace: &Workspace, call: &ShellCall) -> Result<(), String> {
    if workspace::present_workflow(workspace.record_root()).is_none() {
        return Ok(());
    }
    let file = snapshot_file(workspace, call);
    let folder = file.parent().unwrap_or(workspace.project_dir());
    write_folder::create_write_folder(workspace.project_dir(), folder)
        .map_err(|error| error.to_string())?;
    save_snapshot(&file, &project_now(workspace)).map_err(|error| error.to_string())
}

/// What the write hook learns of one shell call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellCallChanges {
    /// The files the call created, modified and deleted (possibly none).
    Known(SnapshotChanges),
    /// No snapshot to compare with, and why: nothing the call changed can be known.
    Unchecked(String),
}

/// What `call` changed: the project now against the snapshot the guard kept, which is then
/// removed.
pub fn shell_call_changes(workspace: &Workspace, call: &ShellCall) -> ShellCallChanges {
    let file = snapshot_file(workspace, call);
    let before = load_snapshot(&file);
    let _ = std::fs::remove_file(&file);
    match before {
        Ok(Some(before)) => {
            ShellCallChanges::Known(snapshot_changes(&before, &project_now(workspace)))
        }
        Ok(None) => ShellCallChanges::Unchecked(format!(
            "no snapshot of the project was taken before this shell call ({} is missing: the pre-tool guard `aidlc engine hook guard` did not run for it; register it with `aidlc hook install`); the files it changed were not checked",
            shown(workspace, &file)
        )),
        Err(reason) => ShellCallChanges::Unchecked(format!(
            "the snapshot taken before this shell call ({}) cannot be read: {reason}; the files it changed were not checked",
            shown(workspace, &file)
        )),
    }
}

fn shown(workspace: &Workspace, file: &Utf8Path) -> String {
    crate::audit::ledger::relative_path_field(workspace.project_dir(), file.as_str())
}
