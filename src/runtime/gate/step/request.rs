//! What the conductor asks of the gate step, and why the step stops.
//!
//! Must not: decide anything; these are the values the other files pass around.

use crate::leaves::audit_lock::LockError;
use crate::runtime::audit::ledger::LedgerError;
use crate::runtime::dispatch::time_limit::LimitValue;
use crate::runtime::gate::deliverables::DeliverableError;
use crate::runtime::workspace::WorkspaceError;

/// Which conductor step asked for the gate; its lowercase name is the subcommand word of
/// `aidlc engine gate <word>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum GateEntry {
    /// `gate start`: opening the approval gate (`report --result awaiting-approval`).
    Start,
    /// `gate revise`: re-entering the gate after revision work (`report --result revised`).
    Revise,
}

/// What the conductor asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateStepRequest {
    pub entry: GateEntry,
    pub stage: String,
    /// The raw `--artifacts` value (comma-separated tokens), recorded as given.
    pub artifacts: Option<String>,
    /// A unit's own gate (`--unit`).
    pub unit: Option<String>,
    pub override_requested: bool,
    pub user_input: Option<String>,
    /// `AIDLC_DISABLE_SENSORS=1`: nothing is dispatched (the notices are still said), and each
    /// blocking gate binding is an issue.
    pub dispatch_disabled_by_environment: bool,
    /// `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS`: each fire's enclosing cap (none when unset).
    pub dispatch_cap: Option<LimitValue>,
}

/// Why the gate step stopped.
#[derive(Debug, thiserror::Error)]
pub enum GateStepError {
    #[error("no intent record in space \"{space}\": there is no gate to open")]
    NoIntent { space: String },
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error("{0}")]
    UnknownStage(String),
    #[error(
        "\"{unit}\" cannot name a unit: use the unit's folder name (no separators, not `.` or `..`)"
    )]
    InvalidUnit { unit: String },
    #[error(transparent)]
    Deliverables(#[from] DeliverableError),
    /// The D34 refusals: blocking issues without an accepted override.
    #[error("{message}")]
    Refused { message: String },
    #[error(
        "Refusing to open the gate for \"{slug}\": blocking sensor artifact \"{path}\" changed after evaluation. Retry so every blocking sensor checks the bytes that enter the gate."
    )]
    ChangedAfterEvaluation { slug: String, path: String },
    #[error("cannot name the audit shard: {0}")]
    AuditShard(std::io::Error),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("cannot write the gate row: {0}")]
    Ledger(#[from] LedgerError),
    #[error("interrupted: the gate row was not written")]
    Interrupted,
}

impl GateStepError {
    /// Whether the gate was refused (findings, non-evaluations, moved bytes, an override
    /// without authority), as opposed to the step being unable to run at all.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            GateStepError::Refused { .. } | GateStepError::ChangedAfterEvaluation { .. }
        )
    }

    /// A line saying how to get going again, where there is one.
    pub fn help(&self) -> Option<&'static str> {
        match self {
            GateStepError::NoIntent { .. } => {
                Some("create one with `aidlc engine intent new <label>`")
            }
            GateStepError::ChangedAfterEvaluation { .. } => {
                Some("nothing was written; run the same command again")
            }
            _ => None,
        }
    }
}
