//! The reference's artifact audit hook, run the way its adapters run it: where the engine's
//! write hook took over an adapter's write entry (`--audit-hook`), each written file is first
//! handed to the install's own `aidlc-audit-logger.ts` (or `aidlc-write-audit-log.ts`) under
//! Bun, as a Claude Code payload, so the install keeps its `ARTIFACT_CREATED` and
//! `ARTIFACT_UPDATED` rows byte for byte; then the engine fires the sensors.
//!
//! This module says what to run; the caller runs it (`dispatch::process::run_worker`, so it is
//! bounded in time and leaves nothing running).

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::json;

use crate::harness::environment::worker_environment;
use crate::harness::payload::WriteTool;

/// How long the audit hook may take for one file (the reference's adapters wait for it; this
/// only keeps a hung Bun from holding the write hook forever).
pub const AUDIT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);
/// The program that runs the reference's hooks.
pub const BUN: &str = "bun";

/// One run of the audit hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditHookRun {
    pub program: &'static str,
    pub args: Vec<String>,
    pub cwd: Utf8PathBuf,
    pub env: Vec<(String, String)>,
    /// The Claude Code payload for the write, on the hook's stdin.
    pub stdin: Vec<u8>,
}

/// The run of `hook` (project-relative, or absolute) for `written` (absolute).
pub fn audit_hook_run(
    project_dir: &Utf8Path,
    hook: &Utf8Path,
    written: &Utf8Path,
    tool: WriteTool,
) -> AuditHookRun {
    let payload = json!({
        "hook_event_name": "PostToolUse",
        "tool_name": <&str>::from(tool),
        "tool_input": {"file_path": written.as_str()},
    });
    AuditHookRun {
        program: BUN,
        args: vec![project_dir.join(hook).to_string()],
        cwd: project_dir.to_owned(),
        env: worker_environment(project_dir.as_str()),
        stdin: payload.to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_hook_gets_a_claude_code_payload_for_the_absolute_file() {
        let run = audit_hook_run(
            Utf8Path::new("/p"),
            Utf8Path::new(".kiro/hooks/aidlc-audit-logger.ts"),
            Utf8Path::new("/p/a.md"),
            WriteTool::Edit,
        );
        assert_eq!(run.args, ["/p/.kiro/hooks/aidlc-audit-logger.ts"]);
        assert_eq!(
            String::from_utf8(run.stdin).unwrap(),
            r#"{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/p/a.md"}}"#
        );
        assert!(
            run.env
                .iter()
                .any(|(name, value)| name == "CLAUDE_PROJECT_DIR" && value == "/p")
        );
    }
}
