//! The process exit statuses (D9), one enum for the commands that decide them (the gate's in
//! `runtime::gate`) and the CLI that exits with them; `cli/exit_statuses.rs` says what each
//! means for each command.

/// Process exit statuses (D9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything checked out.
    Success = 0,
    /// Compile errors, drift under `--check`, findings or a failed gate.
    Failure = 1,
    /// Usage or environment error (bad flag, no project, unwritable output); for `gate check`
    /// also nothing checked without `--allow-empty`, or a `--report` file not written.
    Error = 2,
    /// A blocking sensor could not be evaluated or was switched off (gate check).
    NotEvaluated = 3,
    /// A sensor worker's tool is unavailable (the worker protocol's 127).
    ToolUnavailable = 127,
    /// Stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP.
    Interrupted = 130,
}

impl ExitStatus {
    pub fn code(self) -> i32 {
        self as i32
    }
}
