//! The hook commands: the engine's own (`<program> engine hook run-sensors [--harness H]
//! [--audit-hook FILE]`, `… record-human-turn [--harness H]`), and the reference's, exactly as
//! each of its projections registers them, with what `hook install` may do with each.
//!
//! Invariants:
//! - a command is the engine's only when it is the program, the subcommand and nothing but the
//!   flags the engine writes: a command that also runs something else (`… && my-hook`, a pipe,
//!   a redirection) is the user's, whatever it contains;
//! - a command is the reference's only when it is exactly one its projections register (the
//!   whitespace around it aside), so a user's command that merely mentions a reference hook is
//!   never replaced.

use std::fmt::Write as _;

use crate::harness::Harness;
use crate::harness::reference_hooks::{self, MINT_PRESENCE, RECORD_HUMAN_TURN, ReferenceHook};

/// The program written when none is given: `aidlc` on the `PATH` (a cargo or global install).
pub const DEFAULT_PROGRAM: &str = "aidlc";
/// The flag naming the reference's artifact audit hook the write hook runs first.
pub const AUDIT_HOOK_FLAG: &str = "--audit-hook";

/// What a hook is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookRole {
    /// After a file is written: fire the stage's write-fired sensors.
    Write,
    /// When the human submits a prompt: record a `HUMAN_TURN`.
    HumanTurn,
    /// Before each tool call: refuse the agent's writes into the ledger and its human-only
    /// commands (`harness::guard`).
    Guard,
}

impl HookRole {
    pub const ALL: [HookRole; 3] = [HookRole::Write, HookRole::HumanTurn, HookRole::Guard];

    /// The hook's subcommand, after the program.
    pub fn subcommand(self) -> &'static str {
        match self {
            HookRole::Write => "engine hook run-sensors",
            HookRole::HumanTurn => "engine hook record-human-turn",
            HookRole::Guard => "engine hook guard",
        }
    }

    /// How the doctor and `hook install` name it.
    pub fn label(self) -> &'static str {
        match self {
            HookRole::Write => "Write hook",
            HookRole::HumanTurn => "Human-turn hook",
            HookRole::Guard => "Pre-tool guard",
        }
    }
}

/// The engine's command for `role` on `harness`, run by `program`. Claude Code's has no
/// `--harness` (its payload is the default one); `audit_hook` is the reference's artifact
/// audit hook to run first, where the write hook takes over an adapter's write entry.
pub fn engine_command(
    program: &str,
    role: HookRole,
    harness: Harness,
    audit_hook: Option<&str>,
) -> String {
    let mut command = format!("{program} {}", role.subcommand());
    if harness != Harness::Claude {
        let _ = write!(command, " --harness {}", harness.name());
    }
    if let (HookRole::Write, Some(audit_hook)) = (role, audit_hook) {
        let _ = write!(command, " {AUDIT_HOOK_FLAG} {audit_hook}");
    }
    command
}

/// The role of `command` when it is one of the engine's (whatever the program and flags).
pub fn engine_role(command: &str) -> Option<HookRole> {
    let command = command.trim();
    if command.contains(['&', ';', '|', '<', '>', '`', '\n', '\r']) || command.contains("$(") {
        return None;
    }
    HookRole::ALL.into_iter().find(|role| {
        let Some((program, flags)) = split_at_subcommand(command, role.subcommand()) else {
            return false;
        };
        is_aidlc_program(program) && only_engine_flags(flags, *role)
    })
}

/// The role `command` plays: the engine's, or an exact reference command's.
pub fn hook_role(harness: Harness, command: &str) -> Option<HookRole> {
    engine_role(command).or_else(|| reference_command(harness, command).map(|known| known.role))
}

/// The engine's command for `role` that takes the place of `command` (the engine's, or a
/// reference command for `role`): it runs the reference's audit hook `audit_hook` first when
/// `command` did (an adapter's write entry, or the engine's with `--audit-hook`).
pub fn takeover_command(
    program: &str,
    role: HookRole,
    harness: Harness,
    command: &str,
    audit_hook: Option<&str>,
) -> String {
    let takes_audit = reference_command(harness, command)
        .is_some_and(|known| known.takeover == Takeover::ReplaceRunningAudit)
        || engine_role(command).is_some() && flag_value(command, AUDIT_HOOK_FLAG).is_some();
    engine_command(program, role, harness, audit_hook.filter(|_| takes_audit))
}

/// `(program, flags)` around the first ` <subcommand>` of `command` that ends a word.
fn split_at_subcommand<'c>(command: &'c str, subcommand: &str) -> Option<(&'c str, &'c str)> {
    let needle = format!(" {subcommand}");
    let at = command.find(&needle)?;
    let rest = &command[at + needle.len()..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((&command[..at], rest))
}

/// A program phrase that runs aidlc: its last word (without quotes) is a file named `aidlc`
/// (`aidlc`, `npx aidlc`, `npx --no-install aidlc`, `node_modules/.bin/aidlc`, an absolute
/// path, `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/aidlc`).
fn is_aidlc_program(program: &str) -> bool {
    let Some(last) = program.split_whitespace().last() else {
        return false;
    };
    let last = last.replace(['"', '\''], "");
    let file = last.rsplit(['/', '\\']).next().unwrap_or(&last);
    matches!(file, "aidlc" | "aidlc.exe" | "aidlc.cmd")
}

/// Only `--harness <name>` (and, for the write hook, `--audit-hook <file>`), each at most once.
fn only_engine_flags(flags: &str, role: HookRole) -> bool {
    let words: Vec<&str> = flags.split_whitespace().collect();
    let mut seen = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let flag = words[index];
        let allowed = flag == "--harness" || (role == HookRole::Write && flag == AUDIT_HOOK_FLAG);
        if !allowed || seen.contains(&flag) || index + 1 >= words.len() {
            return false;
        }
        seen.push(flag);
        index += 2;
    }
    true
}

/// The value of `flag` in one of the engine's commands.
pub fn flag_value<'c>(command: &'c str, flag: &str) -> Option<&'c str> {
    let mut words = command.split_whitespace();
    words.by_ref().find(|word| *word == flag)?;
    words.next()
}

/// What `hook install` does with a reference command it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// It only does what the engine's hook does: the engine's command replaces it.
    Replace,
    /// It also writes the reference's artifact audit rows, through its core audit hook
    /// (`reference_hooks::AUDIT_HOOKS`, the one the install has): the engine's write hook
    /// replaces it and runs that hook first, as the reference's adapter did.
    ReplaceRunningAudit,
    /// It does more than the engine's hook (and records what the engine's would): it stays,
    /// and counts as the role's registration.
    Keep,
}

/// One command a reference projection registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceCommand {
    pub command: String,
    pub role: HookRole,
    pub takeover: Takeover,
}

/// The reference's adapter targets that carry the write and human-turn events.
const ADAPTER_WRITE_TARGET: &str = "audit-and-sensors";
const ADAPTER_MINT_TARGET: &str = "mint";
/// Kiro CLI's prompt target: it records the human turn, and intercepts terminal commands too.
const KIRO_CLI_PROMPT_TARGET: &str = "verb-intercept";

/// Every command `harness`'s reference projections register for the engine's roles.
pub fn reference_commands(harness: Harness) -> Vec<ReferenceCommand> {
    let dir = harness.dir_name();
    let known = |command: String, role, takeover| ReferenceCommand {
        command,
        role,
        takeover,
    };
    // Every other harness with reference hooks runs them through its adapter (Kiro IDE through
    // Kiro CLI's); Kiro CLI 3 and opencode have none.
    let adapter_file = match harness {
        Harness::Claude => {
            let direct = |hook: ReferenceHook, role| {
                let command = format!("bun \"$CLAUDE_PROJECT_DIR/{dir}/hooks/{}\"", hook.file);
                known(command, role, Takeover::Replace)
            };
            let mut commands: Vec<ReferenceCommand> = reference_hooks::WRITE_HOOKS
                .iter()
                .map(|hook| direct(*hook, HookRole::Write))
                .collect();
            commands.push(direct(RECORD_HUMAN_TURN, HookRole::HumanTurn));
            commands.push(direct(MINT_PRESENCE, HookRole::HumanTurn));
            return commands;
        }
        Harness::Codex => "aidlc-codex-adapter.ts",
        Harness::Kiro | Harness::KiroIde => "aidlc-kiro-adapter.ts",
        Harness::Copilot => "aidlc-copilot-adapter.ts",
        Harness::Cursor => "aidlc-cursor-adapter.ts",
        Harness::KiroCliV3 | Harness::Opencode => return Vec::new(),
    };
    let adapter = |target: &str, role, takeover| {
        let command = format!("bun {dir}/hooks/{adapter_file} {target}");
        known(command, role, takeover)
    };
    // Kiro CLI's prompt entry does more than record the turn: it stays.
    let human_turn = if harness == Harness::Kiro {
        adapter(KIRO_CLI_PROMPT_TARGET, HookRole::HumanTurn, Takeover::Keep)
    } else {
        adapter(ADAPTER_MINT_TARGET, HookRole::HumanTurn, Takeover::Replace)
    };
    // Copilot's and Cursor's adapter entries the engine takes over are the prompt's only.
    if matches!(harness, Harness::Copilot | Harness::Cursor) {
        return vec![human_turn];
    }
    let write = adapter(
        ADAPTER_WRITE_TARGET,
        HookRole::Write,
        Takeover::ReplaceRunningAudit,
    );
    vec![write, human_turn]
}

/// The reference command `command` is, exactly.
pub fn reference_command(harness: Harness, command: &str) -> Option<ReferenceCommand> {
    let command = command.trim();
    reference_commands(harness)
        .into_iter()
        .find(|known| known.command == command)
}

/// Whether `command` mentions one of the reference's hook files without being exactly one of
/// its commands (a user's command that also runs it).
pub fn mentions_a_reference_hook(harness: Harness, command: &str) -> bool {
    reference_command(harness, command).is_none()
        && reference_hooks::ALL
            .iter()
            .any(|hook| command.contains(hook.file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_engine(command: &str) -> bool {
        engine_role(command).is_some()
    }

    #[test]
    fn the_engine_s_commands_are_recognised_whatever_the_program() {
        assert_eq!(
            engine_role("aidlc engine hook run-sensors"),
            Some(HookRole::Write)
        );
        assert_eq!(
            engine_role("npx aidlc engine hook record-human-turn"),
            Some(HookRole::HumanTurn)
        );
        assert!(is_engine("/opt/bin/aidlc engine hook run-sensors"));
        assert!(is_engine(
            "\"$CLAUDE_PROJECT_DIR\"/node_modules/.bin/aidlc engine hook run-sensors"
        ));
        assert!(is_engine(
            "npx --no-install aidlc engine hook run-sensors --harness codex --audit-hook .codex/hooks/aidlc-audit-logger.ts"
        ));
        assert!(!is_engine("bun .claude/hooks/aidlc-run-sensors.ts"));
        assert!(!is_engine("other engine hook run-sensors"));
        assert!(!is_engine("my-aidlc engine hook run-sensors"));
    }

    #[test]
    fn a_command_that_runs_something_else_too_is_the_user_s() {
        for command in [
            "aidlc engine hook run-sensors && my-important-hook",
            "aidlc engine hook run-sensors; echo done",
            "aidlc engine hook run-sensors | tee log",
            "aidlc engine hook run-sensors > log",
            "aidlc engine hook run-sensors --verbose",
            "aidlc engine hook run-sensors --harness",
            "aidlc engine hook run-sensors --harness codex --harness kiro",
            "aidlc engine hook record-human-turn --audit-hook x.ts",
            "$(which aidlc) engine hook run-sensors",
            "aidlc engine hook run-sensors-extra",
        ] {
            assert_eq!(engine_role(command), None, "{command}");
        }
    }

    #[test]
    fn only_harnesses_other_than_claude_code_name_themselves() {
        assert_eq!(
            engine_command("aidlc", HookRole::Write, Harness::Claude, None),
            "aidlc engine hook run-sensors"
        );
        assert_eq!(
            engine_command(
                "aidlc",
                HookRole::Write,
                Harness::KiroIde,
                Some(".kiro/hooks/aidlc-audit-logger.ts")
            ),
            "aidlc engine hook run-sensors --harness kiro-ide --audit-hook .kiro/hooks/aidlc-audit-logger.ts"
        );
        assert_eq!(
            engine_command("npx aidlc", HookRole::HumanTurn, Harness::Codex, Some("x")),
            "npx aidlc engine hook record-human-turn --harness codex"
        );
        let command = engine_command("aidlc", HookRole::Write, Harness::Codex, Some("a.ts"));
        assert_eq!(flag_value(&command, "--harness"), Some("codex"));
        assert_eq!(flag_value(&command, AUDIT_HOOK_FLAG), Some("a.ts"));
    }

    #[test]
    fn reference_commands_are_matched_exactly() {
        let known = reference_command(
            Harness::Claude,
            "  bun \"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-run-sensors.ts\" ",
        )
        .unwrap();
        assert_eq!(known.role, HookRole::Write);
        assert_eq!(
            reference_command(
                Harness::Codex,
                "bun .codex/hooks/aidlc-codex-adapter.ts mint"
            )
            .map(|known| known.role),
            Some(HookRole::HumanTurn)
        );
        let chained = "node .claude/hooks/aidlc-run-sensors.ts && my-important-hook";
        assert_eq!(reference_command(Harness::Claude, chained), None);
        assert!(mentions_a_reference_hook(Harness::Claude, chained));
        assert!(!mentions_a_reference_hook(Harness::Claude, "./lint.sh"));
    }
}
