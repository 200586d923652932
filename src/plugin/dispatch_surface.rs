//! Whether the install's harness can run the agents a plugin stage dispatches.
//!
//! Claude Code dispatches any Markdown persona of the agents folder. The other harnesses
//! dispatch only an agent they have their own surface for: Kiro an agent JSON in
//! `<harness>/agents/` that the conductor (`<harness>/agents/aidlc.json`) trusts, Codex an agent
//! TOML in `<harness>/agents/`, `OpenCode` a subagent of its own roster (`.opencode/agents/`).
//! A plugin stage that dispatches an agent without that surface would wedge the conductor, so
//! the composer leaves it out and warns in the sentence the reference composer's users search
//! for: `[degraded] plugin "<plugin>" stage "<slug>" references agent "<agent>" … was not
//! composed: author …`.
//!
//! Invariants:
//! - pure: names in, names and sentences out; the caller looks at the files;
//! - an `inline` stage dispatches only its reviewer; any other mode dispatches its lead, its
//!   support agents and its reviewer (the reviewer runs on every gated stage, whatever its mode);
//! - each agent is listed once, in the order lead, support agents, reviewer; an empty name is
//!   no agent;
//! - a warning is one line, and always names a fix on the harness and the stage-side
//!   alternative (inline mode, or no reviewer).

use crate::harness::Harness;

/// The folder of `OpenCode`'s native agent roster, project-relative.
const OPENCODE_NATIVE_AGENTS_FOLDER: &str = crate::plugin::opencode_agents::NATIVE_AGENTS_FOLDER;

/// What a harness needs of an agent before it can dispatch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchSurface {
    /// `<harness>/agents/<agent>.json`, trusted by `<harness>/agents/aidlc.json`.
    KiroAgentJson,
    /// `<harness>/agents/<agent>.toml`.
    CodexAgentToml,
    /// `.opencode/agents/<agent>.md`.
    OpencodeSubagent,
}

impl DispatchSurface {
    /// The surface `harness` needs, or `None` when it dispatches any Markdown persona.
    pub fn of_harness(harness: Harness) -> Option<Self> {
        match harness {
            Harness::Kiro | Harness::KiroCliV3 | Harness::KiroIde => Some(Self::KiroAgentJson),
            Harness::Codex => Some(Self::CodexAgentToml),
            Harness::Opencode => Some(Self::OpencodeSubagent),
            Harness::Claude | Harness::Cursor | Harness::Copilot => None,
        }
    }

    /// The project-relative file that lets the harness dispatch `agent`.
    pub fn surface_file(self, harness_dir: &str, agent: &str) -> String {
        match self {
            Self::KiroAgentJson => format!("{harness_dir}/agents/{agent}.json"),
            Self::CodexAgentToml => format!("{harness_dir}/agents/{agent}.toml"),
            Self::OpencodeSubagent => format!("{OPENCODE_NATIVE_AGENTS_FOLDER}/{agent}.md"),
        }
    }

    /// Whether the harness also needs the conductor to trust the agent.
    pub fn needs_conductor_trust(self) -> bool {
        self == Self::KiroAgentJson
    }

    /// What the author writes so that the harness has the agent, in words.
    fn authoring_fix(self, harness_dir: &str, agent: &str) -> String {
        let file = self.surface_file(harness_dir, agent);
        let what = match self {
            Self::KiroAgentJson => "a Kiro agent in agent-v1 JSON",
            Self::CodexAgentToml => {
                "a Codex agent config, shaped as the shipped aidlc-*-agent.toml"
            }
            Self::OpencodeSubagent => "an OpenCode subagent whose frontmatter is closed",
        };
        format!("author {file} ({what})")
    }
}

/// The conductor file whose `toolsSettings.subagent.trustedAgents` a Kiro install dispatches.
pub fn kiro_conductor_file(harness_dir: &str) -> String {
    format!("{harness_dir}/agents/aidlc.json")
}

/// An agent a stage dispatches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchedAgent {
    pub name: String,
    /// The stage dispatches it only as its reviewer (not as lead or support of a dispatched
    /// body).
    pub reviewer_only: bool,
}

/// The agents a stage of `mode`, led by `lead`, helped by `supports`, reviewed by `reviewer`,
/// dispatches, each once.
pub fn dispatched_agents(
    mode: &str,
    lead: &str,
    supports: &[&str],
    reviewer: Option<&str>,
) -> Vec<DispatchedAgent> {
    let body_is_dispatched = mode != "inline";
    let body_agents: Vec<&str> = if body_is_dispatched {
        std::iter::once(lead)
            .chain(supports.iter().copied())
            .collect()
    } else {
        Vec::new()
    };
    let mut agents: Vec<DispatchedAgent> = Vec::new();
    for name in body_agents.iter().copied().chain(reviewer) {
        if name.is_empty() || agents.iter().any(|agent| agent.name == name) {
            continue;
        }
        agents.push(DispatchedAgent {
            name: name.to_owned(),
            reviewer_only: !body_agents.contains(&name),
        });
    }
    agents
}

/// What the harness lacks to dispatch one agent of a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchGap {
    pub agent: DispatchedAgent,
    pub missing_surface: bool,
    pub missing_trust: bool,
}

impl DispatchGap {
    /// Whether anything is lacking.
    pub fn is_gap(&self) -> bool {
        self.missing_surface || self.missing_trust
    }
}

/// The stage, named by its plugin and slug, as a warning is about it.
#[derive(Debug, Clone, Copy)]
pub struct UndispatchableStage<'a> {
    pub plugin: &'a str,
    pub slug: &'a str,
    pub mode: &'a str,
    /// The install holds the stage already (composed by an earlier run): it is kept, and the
    /// warning says it stays undispatchable rather than that it was left out.
    pub already_composed: bool,
}

/// The one-line warning for `gap` of `stage` on a harness needing `surface`, with the fix.
pub fn undispatchable_stage_warning(
    stage: UndispatchableStage<'_>,
    gap: &DispatchGap,
    surface: DispatchSurface,
    harness_dir: &str,
) -> String {
    let agent = &gap.agent.name;
    let role = if gap.agent.reviewer_only {
        "as reviewer".to_owned()
    } else {
        format!("with mode \"{}\"", stage.mode)
    };
    let outcome = if stage.already_composed {
        "is already composed but remains undispatchable"
    } else {
        "was not composed"
    };
    format!(
        "[degraded] plugin \"{}\" stage \"{}\" references agent \"{agent}\" {role} and {outcome}: {}",
        stage.plugin,
        stage.slug,
        fix_for_gap(gap, surface, harness_dir)
    )
}

/// The harness-side fix of `gap`, then the stage-side alternative.
fn fix_for_gap(gap: &DispatchGap, surface: DispatchSurface, harness_dir: &str) -> String {
    let agent = &gap.agent.name;
    let mut harness_side: Vec<String> = Vec::new();
    if gap.missing_surface {
        harness_side.push(surface.authoring_fix(harness_dir, agent));
    }
    if gap.missing_trust {
        harness_side.push(format!(
            "add \"{agent}\" to toolsSettings.subagent.trustedAgents in {}",
            kiro_conductor_file(harness_dir)
        ));
    }
    let stage_side = if gap.agent.reviewer_only {
        "drop the stage's `reviewer:`"
    } else {
        "make the stage's mode inline"
    };
    format!("{}, or {stage_side}", harness_side.join(" and "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gap(name: &str, reviewer_only: bool, surface: bool, trust: bool) -> DispatchGap {
        DispatchGap {
            agent: DispatchedAgent {
                name: name.to_owned(),
                reviewer_only,
            },
            missing_surface: surface,
            missing_trust: trust,
        }
    }

    #[test]
    fn an_inline_stage_dispatches_only_its_reviewer() {
        let agents = dispatched_agents("inline", "lead", &["helper"], Some("critic"));
        assert_eq!(
            agents,
            vec![DispatchedAgent {
                name: "critic".to_owned(),
                reviewer_only: true
            }]
        );
        assert!(dispatched_agents("inline", "lead", &["helper"], None).is_empty());
    }

    #[test]
    fn a_dispatched_stage_names_each_agent_once_in_order() {
        let agents = dispatched_agents("pipeline", "lead", &["helper", "lead", ""], Some("helper"));
        let names: Vec<(&str, bool)> = agents
            .iter()
            .map(|agent| (agent.name.as_str(), agent.reviewer_only))
            .collect();
        assert_eq!(names, vec![("lead", false), ("helper", false)]);
    }

    #[test]
    fn only_claude_code_and_cursor_dispatch_any_persona() {
        assert_eq!(DispatchSurface::of_harness(Harness::Claude), None);
        assert_eq!(DispatchSurface::of_harness(Harness::Cursor), None);
        assert_eq!(
            DispatchSurface::of_harness(Harness::KiroIde),
            Some(DispatchSurface::KiroAgentJson)
        );
        assert_eq!(
            DispatchSurface::OpencodeSubagent.surface_file(".aidlc", "a"),
            ".opencode/agents/a.md"
        );
    }

    #[test]
    fn the_warning_is_the_references_sentence_with_both_fixes() {
        let stage = UndispatchableStage {
            plugin: "acme",
            slug: "acme-build",
            mode: "subagent",
            already_composed: false,
        };
        let warning = undispatchable_stage_warning(
            stage,
            &gap("acme-agent", false, true, true),
            DispatchSurface::KiroAgentJson,
            ".kiro",
        );
        assert!(
            warning.starts_with(
                "[degraded] plugin \"acme\" stage \"acme-build\" references agent \"acme-agent\" with mode \"subagent\" and was not composed: author .kiro/agents/acme-agent.json ("
            ),
            "{warning}"
        );
        assert!(
            warning.contains(" and add \"acme-agent\" to toolsSettings.subagent.trustedAgents in .kiro/agents/aidlc.json, or make the stage's mode inline"),
            "{warning}"
        );
        assert!(!warning.contains('\n'));

        let kept = undispatchable_stage_warning(
            UndispatchableStage {
                already_composed: true,
                ..stage
            },
            &gap("critic", true, true, false),
            DispatchSurface::CodexAgentToml,
            ".codex",
        );
        assert!(
            kept.contains("\"critic\" as reviewer and is already composed but remains undispatchable: author .codex/agents/critic.toml (")
                && kept.ends_with(", or drop the stage's `reviewer:`"),
            "{kept}"
        );
    }
}
