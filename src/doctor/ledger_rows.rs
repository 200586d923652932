//! The ledger's rows: this clone's audit shard (a torn tail), the audit lock (stale),
//! temporary files an interrupted write left behind, and the receipt rows the engine cannot
//! verify (docs/decisions.md D34: a `HUMAN_TURN` without a receipt whose prompt the engine
//! re-reads, a `QUESTION_ANSWERED` naming no human turn's receipt; they never count for an
//! override). Nothing is repaired here: the next writer
//! closes a torn tail, reaps a stale lock and sweeps stale temporaries; the rows say so.

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::audit_lock::{LockStatus, lock_path, lock_status};
use crate::runtime::audit::human_turn::{
    HUMAN_TURN_RECEIPT_FIELD, read_ledger_with_blocks, verify_human_turn,
};
use crate::runtime::audit::ledger::event::{HUMAN_TURN, QUESTION_ANSWERED};
use crate::runtime::audit::ledger::{parse_ledger, record_shards};
use crate::runtime::receipts::receipt_install;
use crate::runtime::workspace::{self, Workspace};

use super::Row;

pub(super) fn rows(workspace: &Workspace) -> Vec<Row> {
    vec![
        shard_row(workspace),
        lock_row(workspace.project_dir()),
        temporaries_row(workspace),
        receipts_row(workspace),
    ]
}

/// The receipt rows of the active record the engine did not write or can no longer verify.
fn receipts_row(workspace: &Workspace) -> Row {
    let record = workspace.record_root();
    let shards = record_shards(record);
    let (_, blocks) = read_ledger_with_blocks(record);
    let mut unverified = Vec::new();
    let mut checked = 0;
    for (shard, shard_blocks) in blocks.iter().enumerate() {
        let shown = shards
            .get(shard)
            .map(|path| workspace.layout.display(path).to_string())
            .unwrap_or_default();
        // The receipts of this shard's verified human turns so far: an answer names one before it.
        let mut verified_receipts: Vec<String> = Vec::new();
        for (position, block) in shard_blocks.iter().enumerate() {
            let problem = match block.event.as_str() {
                HUMAN_TURN => match verify_human_turn(receipt_install(workspace), record, block) {
                    Ok(verified) => {
                        verified_receipts.push(verified.receipt);
                        None
                    }
                    Err(problem) => Some(problem),
                },
                QUESTION_ANSWERED => match block.field(HUMAN_TURN_RECEIPT_FIELD) {
                    None => Some(
                        "names no human turn's receipt (not written by `aidlc engine log answer`)"
                            .to_owned(),
                    ),
                    Some(receipt) if !verified_receipts.iter().any(|known| known == receipt) => {
                        Some("names a receipt no verified human turn before it has".to_owned())
                    }
                    Some(_) => None,
                },
                _ => continue,
            };
            checked += 1;
            if let Some(problem) = problem {
                unverified.push(format!(
                    "{shown} row {} ({}): {problem}",
                    position + 1,
                    block.event
                ));
            }
        }
    }
    if unverified.is_empty() {
        return Row::pass(format!(
            "Receipt rows: {} verified",
            crate::leaves::english::counted(checked, "human-turn and answer row")
        ));
    }
    Row::warn(
        format!(
            "Receipt rows: {} of {checked} the engine cannot verify, and they never count for an override: {}",
            unverified.len(),
            unverified.join("; ")
        ),
        "rows appended by hand or by another tool are not receipts; a human who means to override records the answer through the hooks `aidlc hook install` registers",
    )
}

fn shard_row(workspace: &Workspace) -> Row {
    let Some(shard) =
        workspace::existing_audit_shard(workspace.project_dir(), workspace.record_root())
    else {
        return Row::pass("Audit shard: none for this clone yet (nothing recorded)");
    };
    let shown = workspace.layout.display(&shard);
    let text = match crate::leaves::fs_util::read_bounded(
        &shard,
        crate::compile::discover::MAX_GENERATED_BYTES,
    ) {
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
                "Audit shard: {shown} has {} (first at line {}: {:?})",
                crate::leaves::english::counted(parsed.torn.len(), "torn piece"),
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
        Ok(LockStatus::Unstamped { .. }) => Row::pass(format!(
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
    let stale: Vec<String> = temporary_folders(workspace)
        .iter()
        .flat_map(|folder| crate::leaves::fs_util::stale_temporaries(folder, |_, _| true))
        .map(|path| workspace.layout.display(&path).to_string())
        .collect();
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
