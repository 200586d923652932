//! How a worker ends, in the worker protocol (D21–D24, D8): the exit status and the
//! stdout each ending stands for. A shipped sensor's native check returns a [`WorkerOutcome`],
//! whether it runs in process or as `aidlc engine sensor-<id>`; [`protocol_output`] turns it into
//! the `(exit status, stdout)` pair a worker process would have produced, which
//! `verdict::verdict_of` reads back exactly as it reads a spawned custom worker's. So a check
//! run in process and the same check run as a process are judged by the same code.
//!
//! This file owns the shape of a worker's answer, not its meaning: it never prints, never writes
//! audit rows, and never decides a verdict.

use serde_json::Value;

use crate::protocol::verdict::EXIT_TOOL_UNAVAILABLE;

/// The exit status of a worker that could not run its check (a broken config, unreadable input).
pub const EXIT_SCRIPT_ERROR: i32 = 2;

/// The exit status of a worker given the wrong arguments.
pub const EXIT_USAGE_ERROR: i32 = 1;

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

/// The exit status and stdout a worker process would have produced for `outcome` (the worker
/// protocol), so that in-process and out-of-process fires are judged by the same code.
pub fn protocol_output(outcome: &WorkerOutcome) -> (i32, String) {
    match outcome {
        WorkerOutcome::Verdict(json) => (0, format!("{json}\n")),
        WorkerOutcome::ToolUnavailable(json) => (EXIT_TOOL_UNAVAILABLE, format!("{json}\n")),
        WorkerOutcome::ScriptError(_) => (EXIT_SCRIPT_ERROR, String::new()),
        WorkerOutcome::UsageError(_) => (EXIT_USAGE_ERROR, String::new()),
    }
}
