//! The ledger's rows: this clone's audit shard (a torn tail), the audit lock (stale), and
//! temporary files an interrupted write left behind. Nothing is repaired here: the next writer
//! closes a torn tail, reaps a stale lock and sweeps stale temporaries; the rows say so.

use camino::{Utf8Path, Utf8PathBuf};

use crate::audit::ledger::parse_ledger;
use crate::audit_lock::{LockStatus, lock_path, lock_status};
use crate::workspace::{self, Workspace};

use super::Row;

pub(super) fn rows(workspace: &Workspace) -> Vec<Row> {
    vec![
        shard_row(workspace),
        lock_row(workspace.project_dir()),
        temporaries_row(workspace),
    ]
}

fn shard_row(workspace: &Workspace) -> Row {
    let Some(shard) =
        workspace::existing_audit_shard(workspace.project_dir(), workspace.record_root())
    else {
        return Row::pass("Audit shard: none for this clone yet (nothing recorded)");
    };
    let shown = workspace.layout.display(&shard);
    let text = match std::fs::read(&shard) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) => {
            return Row::fail(
                format!("Audit shard: {shown} cannot be read: {error}"),
                "check the file's permissions",
            );
        }
    };
    let parsed = parse_ledger(&text);
    match parsed.torn.first() {
        None => Row::pass(format!(
            "Audit shard: {shown}, {} rows, no torn block",
            parsed.blocks.len()
        )),
        Some(torn) => Row::warn(
            format!(
                "Audit shard: {shown} has {} torn piece{} (first at line {}: {:?})",
                parsed.torn.len(),
                crate::english::plural(parsed.torn.len()),
                torn.line,
                torn.kind
            ),
            "readers skip it and the next append closes a torn tail; if no aidlc or reference process is writing, nothing else is needed",
        ),
    }
}

fn lock_row(project_dir: &Utf8Path) -> Row {
    let path = lock_path(project_dir);
    match lock_status(project_dir) {
        Ok(LockStatus::Free) => Row::pass("Audit lock: free"),
        Ok(LockStatus::Held { pid }) => Row::pass(format!(
            "Audit lock: held by a live process{} ({path})",
            pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default()
        )),
        Ok(LockStatus::Unstamped) => Row::pass(format!(
            "Audit lock: being taken (no owner stamp yet) ({path})"
        )),
        Ok(LockStatus::Stale { pid }) => Row::warn(
            format!(
                "Audit lock: stale{} ({path})",
                pid.map(|pid| format!(", its owner pid {pid} is gone or it is too old"))
                    .unwrap_or_default()
            ),
            format!(
                "the next writer reaps it; or remove {path} when no aidlc or reference process runs"
            ),
        ),
        Err(error) => Row::fail(format!("Audit lock: {error}"), "fix the setting"),
    }
}

/// The folders the engine and the reference write atomically into.
fn temporary_folders(workspace: &Workspace) -> Vec<Utf8PathBuf> {
    let layout = &workspace.layout;
    let mut folders = vec![
        layout.stage_graph_path.parent().map(Utf8Path::to_owned),
        Some(workspace::audit_dir(workspace.record_root())),
        Some(workspace.record_root().to_owned()),
        Some(layout.project_dir.join(layout.harness.dir_name())),
    ];
    folders.dedup();
    folders.into_iter().flatten().collect()
}

fn temporaries_row(workspace: &Workspace) -> Row {
    let mut stale = Vec::new();
    for folder in temporary_folders(workspace) {
        let Ok(entries) = folder.read_dir_utf8() else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let Some(temporary) = crate::fs_util::parse_temporary_name(entry.file_name()) else {
                continue;
            };
            if entry
                .metadata()
                .is_ok_and(|metadata| crate::fs_util::temporary_is_stale(temporary.pid, &metadata))
            {
                stale.push(workspace.layout.display(entry.path()).to_string());
            }
        }
    }
    if stale.is_empty() {
        Row::pass("Temporary files: none left by an interrupted write")
    } else {
        Row::warn(
            format!(
                "Temporary files: {} left by an interrupted write ({})",
                stale.len(),
                stale.join(", ")
            ),
            "their writers are gone; remove them (the next write to the same folder sweeps them too)",
        )
    }
}
