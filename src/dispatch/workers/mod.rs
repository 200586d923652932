//! The six shipped sensors (D8): their ids, their shipped command, and the in-process entry
//! point `fire`, the write hook and gate dispatch call.
//!
//! Invariant: a shipped check that is not built yet never pretends to pass. It returns a
//! script-error non-evaluation whose note names what is missing, so the audit shows that
//! nothing was checked.

use camino::Utf8PathBuf;

use crate::dispatch::verdict::{ScriptError, Verdict};

/// The shipped sensor ids, sorted.
pub const SHIPPED_SENSOR_IDS: [&str; 6] = [
    "claim-sources",
    "linter",
    "required-sections",
    "traceability",
    "type-check",
    "upstream-coverage",
];

pub fn is_shipped(sensor_id: &str) -> bool {
    SHIPPED_SENSOR_IDS.contains(&sensor_id)
}

/// The command a shipped manifest declares: `aidlc engine sensor-<id>`.
pub fn shipped_command(sensor_id: &str) -> String {
    format!("aidlc engine sensor-{sensor_id}")
}

/// What a shipped worker is given: the project and the worker arguments of upstream §4.3.
#[derive(Debug, Clone)]
pub struct ShippedInput {
    pub project_dir: Utf8PathBuf,
    pub args: Vec<String>,
}

/// Why a shipped check cannot run in this build, when it cannot.
pub fn missing_check(sensor_id: &str) -> Option<String> {
    is_shipped(sensor_id).then(|| {
        format!(
            "the native {sensor_id} check is not built into this aidlc yet, so nothing was checked"
        )
    })
}

/// Run one shipped sensor in-process and give its verdict.
pub fn run_shipped(sensor_id: &str, _input: &ShippedInput) -> Verdict {
    let what =
        missing_check(sensor_id).unwrap_or_else(|| format!("{sensor_id} is not a shipped sensor"));
    Verdict::ScriptError(ScriptError::NotImplemented(what))
}
