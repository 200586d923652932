//! The six shipped sensors (D8): their ids, their shipped command, and the in-process entry
//! point `fire`, the write hook and gate dispatch call.
//!
//! Invariant: a shipped check that is not built yet never pretends to pass. It returns a
//! script-error non-evaluation whose note names what is missing, so the audit shows that
//! nothing was checked.

pub mod claim_sources;
pub mod linter;
pub mod required_sections;
pub mod traceability;
pub mod type_check;
pub mod upstream_coverage;

use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::Value;

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
    /// The manifest's timeout: the budget for any tool the check starts.
    pub timeout: Duration,
}

/// Where a native worker runs: the project folder, and the time budget for any tool it starts
/// (the manifest's timeout; the worker must stop its tool within it).
#[derive(Debug, Clone)]
pub struct WorkerContext {
    pub project_dir: Utf8PathBuf,
    pub timeout: Duration,
}

/// How a native worker ended. Out of process each variant is one exit status (worker
/// protocol): `Verdict` → the JSON line and exit 0; `ToolUnavailable` → the JSON line (with its
/// `reason`) and exit 127; `ScriptError` → the message on stderr and exit 2; `UsageError` → the
/// message on stderr and exit 1. In process the dispatcher maps them to the same verdicts a
/// spawned worker's exit would give, so both ways record the same rows.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerOutcome {
    /// One JSON object with a boolean `pass` and a numeric `findings_count`, keys in the
    /// documented order.
    Verdict(Value),
    /// The tool the check wraps is missing or unconfigured; `json` carries `reason`.
    ToolUnavailable(Value),
    /// The check could not run (a broken config, unreadable input): exit 2.
    ScriptError(String),
    /// The arguments were wrong: exit 1.
    UsageError(String),
}

/// A native check: the worker argv after `sensor-<id>`, and where it runs.
pub type NativeCheck = fn(&[String], &WorkerContext) -> WorkerOutcome;

/// The native check of a shipped sensor, when this build has one.
pub fn native_check(sensor_id: &str) -> Option<NativeCheck> {
    match sensor_id {
        "claim-sources" => Some(claim_sources::run),
        "required-sections" => Some(required_sections::run),
        "traceability" => Some(traceability::run),
        "upstream-coverage" => Some(upstream_coverage::run),
        "linter" => Some(linter::run),
        "type-check" => Some(type_check::run),
        _ => None,
    }
}

/// Why a shipped check cannot run in this build, when it cannot.
pub fn missing_check(sensor_id: &str) -> Option<String> {
    (is_shipped(sensor_id) && native_check(sensor_id).is_none()).then(|| {
        format!(
            "the native {sensor_id} check is not built into this aidlc yet, so nothing was checked"
        )
    })
}

/// The exit status and stdout a worker process would have produced for `outcome` (the worker
/// protocol), so that in-process and out-of-process fires are judged by the same code.
pub fn protocol_output(outcome: &WorkerOutcome) -> (i32, String) {
    match outcome {
        WorkerOutcome::Verdict(json) => (0, format!("{json}\n")),
        WorkerOutcome::ToolUnavailable(json) => (127, format!("{json}\n")),
        WorkerOutcome::ScriptError(_) => (2, String::new()),
        WorkerOutcome::UsageError(_) => (1, String::new()),
    }
}

/// Run one shipped sensor in-process and give its verdict: exactly the verdict the dispatcher
/// would read from the same worker run as a process (see [`protocol_output`]).
pub fn run_shipped(sensor_id: &str, input: &ShippedInput) -> Verdict {
    let Some(check) = native_check(sensor_id) else {
        let what = missing_check(sensor_id)
            .unwrap_or_else(|| format!("{sensor_id} is not a shipped sensor"));
        return Verdict::ScriptError(ScriptError::NotImplemented(what));
    };
    let context = WorkerContext {
        project_dir: input.project_dir.clone(),
        timeout: input.timeout,
    };
    let started = std::time::Instant::now();
    let outcome = check(&input.args, &context);
    let (exit_code, stdout) = protocol_output(&outcome);
    let run = crate::dispatch::process::WorkerRun {
        exit_code: Some(exit_code),
        elapsed: started.elapsed(),
        stdout: stdout.into_bytes(),
        ..crate::dispatch::process::WorkerRun::default()
    };
    crate::dispatch::verdict::verdict_of(&run, input.timeout)
}
