//! The worker protocol a shipped sensor speaks (upstream §4.3–§4.6, D8): what a native check is
//! given, how it ends, and the exit status and stdout each ending stands for.
//!
//! This file owns the shape of a check's answer, not its meaning: it never prints, never writes
//! audit rows, and never decides a verdict. The dispatcher reads the `(exit status, stdout)`
//! pair [`protocol_output`] gives exactly as it reads a spawned worker's, so a check run in
//! process and the same check run as `aidlc engine sensor-<id>` are judged by the same code.

use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::Value;

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
