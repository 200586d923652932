//! The reference doctor's one write (upstream §8): once the active record has an audit trail
//! (a shard of any clone), each doctor run appends `GUARDRAIL_LOADED` (`Scope: all`, `Path:
//! <harness>/<rules folder>/` as the reference names it, and the number of rule files the
//! compile reads) to this clone's shard, as the reference's doctor does, so a
//! ledger reader sees the same rows whichever doctor ran.
//!
//! Invariant: on a project with no audit shard nothing is written (no shard, no folder, no
//! clone id): a doctor in CI or in a fresh clone stays read-only.

use camino::Utf8PathBuf;

use crate::audit::ledger::{self, GuardrailLoaded, LedgerError};
use crate::discover;
use crate::workspace::{self, Workspace};

/// Append `GUARDRAIL_LOADED` when the record already has an audit shard; the shard written,
/// or `None` when there was none to join.
pub fn record_guardrails_loaded(workspace: &Workspace) -> Result<Option<Utf8PathBuf>, LedgerError> {
    if ledger::record_shards(workspace.record_root()).is_empty() {
        return Ok(None);
    }
    let layout = &workspace.layout;
    let rule_count = discover::list_rule_files(&layout.rules_dir).len();
    let rules_path = format!(
        "{}/{}/",
        layout.harness.dir_name(),
        rules_subdir_label(layout.harness)
    );
    let row = GuardrailLoaded::of_all_rules(&rules_path, rule_count).to_row();
    let shard = workspace.audit_shard().map_err(|source| LedgerError::Io {
        path: workspace::audit_dir(workspace.record_root()),
        source,
    })?;
    ledger::append_row(
        workspace.project_dir(),
        &shard,
        &row,
        std::time::SystemTime::now(),
    )?;
    Ok(Some(shard))
}

/// The rules folder's name in the row's `Path`: `AIDLC_RULES_SUBDIR` when set (the reference's
/// override), else the harness's own. The value is only written as a label, never opened.
fn rules_subdir_label(harness: crate::harness::Harness) -> String {
    std::env::var(RULES_SUBDIR_VARIABLE)
        .ok()
        .filter(|value| !value.trim().is_empty())
        .unwrap_or_else(|| harness.rules_subdir().to_owned())
}

const RULES_SUBDIR_VARIABLE: &str = "AIDLC_RULES_SUBDIR";
