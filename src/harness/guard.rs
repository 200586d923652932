//! The pre-tool guard (`aidlc engine hook guard`, issue 26 item 6): where each harness lets a
//! hook refuse a tool call before it runs, and how the refusal is said. Modelled here as data
//! for the command that will use it; `hook install` registers a guard only once that command
//! exists.
//!
//! Every harness with hooks refuses the same way on the command line: exit status 2 with the
//! reason on stderr (Claude Code, Codex, Kiro CLI and Kiro IDE, as the reference's own guards
//! do); opencode has no exit status to read, so its plugin throws the reason as an error from
//! `tool.execute.before`, which refuses the call.

use crate::harness::Harness;

/// Where a harness runs a pre-tool hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardSite {
    /// The event, as the harness's registration names it.
    pub event: &'static str,
    /// The file (project-relative) that registers it.
    pub registered_in: &'static str,
}

/// How a refusal reaches the harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The hook exits with `status` and the reason on stderr.
    ExitStatus { status: u8, stderr: String },
    /// The plugin throws an error whose message is the reason.
    ThrownError { message: String },
}

/// `harness`'s guard site, or `None` for a harness without hooks.
pub fn guard_site(harness: Harness) -> Option<GuardSite> {
    let site = |event, registered_in| {
        Some(GuardSite {
            event,
            registered_in,
        })
    };
    match harness {
        Harness::Claude => site("PreToolUse", ".claude/settings.json"),
        Harness::Codex => site("PreToolUse", ".codex/hooks.json"),
        Harness::Kiro => site("preToolUse", ".kiro/agents/aidlc.json"),
        Harness::KiroIde => site("PreToolUse", ".kiro/hooks/aidlc-engine-guard.json"),
        Harness::Opencode => site("tool.execute.before", ".opencode/plugin/aidlc-engine.ts"),
        Harness::Cursor => None,
    }
}

/// How `harness` is told that a tool call is refused for `reason`.
pub fn refusal(harness: Harness, reason: &str) -> Refusal {
    match harness {
        Harness::Opencode => Refusal::ThrownError {
            message: reason.to_owned(),
        },
        _ => Refusal::ExitStatus {
            status: 2,
            stderr: format!("{}\n", reason.trim_end()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_with_hooks_has_a_guard_site_and_a_refusal() {
        for harness in Harness::WITH_HOOKS {
            assert!(guard_site(harness).is_some(), "{harness}");
        }
        assert_eq!(guard_site(Harness::Cursor), None);
        assert_eq!(
            refusal(Harness::Kiro, "gate open"),
            Refusal::ExitStatus {
                status: 2,
                stderr: "gate open\n".to_owned()
            }
        );
        assert_eq!(
            refusal(Harness::Opencode, "gate open"),
            Refusal::ThrownError {
                message: "gate open".to_owned()
            }
        );
    }
}
