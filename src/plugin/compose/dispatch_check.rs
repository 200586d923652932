//! The composer's check that the install's harness can dispatch the agents a plugin stage
//! dispatches.
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
//! - a stage whose agents the harness cannot dispatch is left out of the plan, with a
//!   `[degraded]` warning per agent, unless the install already holds it (then it is kept);
//! - an `inline` stage dispatches only its reviewer; any other mode dispatches its lead, its
//!   support agents and its reviewer (the reviewer runs on every gated stage, whatever its mode);
//! - each agent is checked once, in the order lead, support agents, reviewer; an empty name is
//!   no agent;
//! - a warning is one line, and always names a fix on the harness and the stage-side
//!   alternative (inline mode, or no reviewer).

use super::{Planner, frontmatter_scalar};
use crate::compile::syntax::stage::StageDefinition;
use crate::harness::Harness;
use crate::plugin::Problem;
use crate::plugin::manifest::Subtree;
use crate::plugin::opencode_agents;
use crate::plugin::tree::{PluginFile, PluginTree};

/// What a harness needs of an agent before it can dispatch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DispatchSurface {
    /// `<harness>/agents/<agent>.json`, trusted by `<harness>/agents/aidlc.json`.
    KiroAgentJson,
    /// `<harness>/agents/<agent>.toml`.
    CodexAgentToml,
    /// `.opencode/agents/<agent>.md`.
    OpencodeSubagent,
}

impl DispatchSurface {
    /// The surface `harness` needs, or `None` when it dispatches any Markdown persona.
    fn of_harness(harness: Harness) -> Option<Self> {
        match harness {
            Harness::Kiro | Harness::KiroCliV3 | Harness::KiroIde => Some(Self::KiroAgentJson),
            Harness::Codex => Some(Self::CodexAgentToml),
            Harness::Opencode => Some(Self::OpencodeSubagent),
            Harness::Claude | Harness::Cursor | Harness::Copilot => None,
        }
    }

    /// The project-relative file that lets the harness dispatch `agent`.
    fn surface_file(self, harness_dir: &str, agent: &str) -> String {
        match self {
            Self::KiroAgentJson => format!("{harness_dir}/agents/{agent}.json"),
            Self::CodexAgentToml => format!("{harness_dir}/agents/{agent}.toml"),
            Self::OpencodeSubagent => {
                format!("{}/{agent}.md", opencode_agents::NATIVE_AGENTS_FOLDER)
            }
        }
    }

    /// What the author writes so that the harness has the agent.
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
fn kiro_conductor_file(harness_dir: &str) -> String {
    format!("{harness_dir}/agents/aidlc.json")
}

/// The agents a stage of `mode`, led by `lead`, helped by `supports`, reviewed by `reviewer`,
/// dispatches, each once, with whether it dispatches the agent only as its reviewer.
fn dispatched_agents<'s>(
    mode: &str,
    lead: &'s str,
    supports: &[&'s str],
    reviewer: Option<&'s str>,
) -> Vec<(&'s str, bool)> {
    let body_agents: Vec<&str> = if mode == "inline" {
        Vec::new()
    } else {
        std::iter::once(lead)
            .chain(supports.iter().copied())
            .collect()
    };
    let mut agents: Vec<(&str, bool)> = Vec::new();
    for name in body_agents.iter().copied().chain(reviewer) {
        if !name.is_empty() && !agents.iter().any(|(agent, _)| *agent == name) {
            agents.push((name, !body_agents.contains(&name)));
        }
    }
    agents
}

/// The one-line `[degraded]` warning for `agent`, dispatched by stage `slug` of `plugin` with
/// `mode` (or only as its reviewer), that the harness cannot dispatch until `harness_fix`.
fn degraded_warning(
    (plugin, slug, mode): (&str, &str, &str),
    (agent, reviewer_only): (&str, bool),
    already_composed: bool,
    harness_fix: &str,
) -> String {
    let (role, stage_fix) = if reviewer_only {
        ("as reviewer".to_owned(), "drop the stage's `reviewer:`")
    } else {
        (
            format!("with mode \"{mode}\""),
            "make the stage's mode inline",
        )
    };
    let outcome = if already_composed {
        "is already composed but remains undispatchable"
    } else {
        "was not composed"
    };
    format!(
        "[degraded] plugin \"{plugin}\" stage \"{slug}\" references agent \"{agent}\" {role} and {outcome}: {harness_fix}, or {stage_fix}"
    )
}

impl Planner<'_> {
    /// Whether the stage goes into the plan as far as its agents are concerned: `true` when the
    /// install's harness can dispatch every agent the stage dispatches, or when the install
    /// already holds the stage (it is kept, as the reference composer keeps it); else `false`.
    /// Every agent the harness cannot dispatch is a `[degraded]` warning naming the fix.
    pub(super) fn harness_can_dispatch_or_keeps(
        &mut self,
        tree: &PluginTree,
        stage: &StageDefinition,
        relative: &str,
    ) -> bool {
        let Some(surface) = DispatchSurface::of_harness(self.layout.harness) else {
            return true;
        };
        let supports: Vec<&str> = stage
            .support_agents
            .iter()
            .map(|agent| agent.value.as_str())
            .collect();
        let reviewer = stage.reviewer.as_ref().map(|agent| agent.value.as_str());
        let agents = dispatched_agents(&stage.mode, &stage.lead_agent.value, &supports, reviewer);
        // Each agent the harness cannot dispatch, with what the harness lacks for it: its
        // surface file (on `OpenCode`, one the plugin's own persona becomes counts), and on
        // Kiro the conductor's trust.
        let mut gaps: Vec<((&str, bool), String)> = Vec::new();
        for (agent, reviewer_only) in agents {
            let mut harness_fixes = Vec::new();
            if self
                .view(&surface.surface_file(self.harness_dir, agent))
                .is_none()
                && !(surface == DispatchSurface::OpencodeSubagent
                    && self.plugin_ships_viable_opencode_subagent(tree, agent))
            {
                harness_fixes.push(surface.authoring_fix(self.harness_dir, agent));
            }
            if surface == DispatchSurface::KiroAgentJson && !self.kiro_conductor_trusts(agent) {
                harness_fixes.push(format!(
                    "add \"{agent}\" to toolsSettings.subagent.trustedAgents in {}",
                    kiro_conductor_file(self.harness_dir)
                ));
            }
            if !harness_fixes.is_empty() {
                gaps.push(((agent, reviewer_only), harness_fixes.join(" and ")));
            }
        }
        if gaps.is_empty() {
            return true;
        }
        let already_composed = self.disk(relative).is_some();
        let help = if already_composed {
            "the stage stays as it is; fix the agent (or the stage), then run `aidlc plugin sync`"
        } else {
            "the rest of the plugin is composed; fix the agent (or the stage), then run `aidlc plugin sync` to compose the stage"
        };
        for (agent, harness_fix) in gaps {
            let of_stage = (tree.name(), stage.slug.value.as_str(), stage.mode.as_str());
            let warning = degraded_warning(of_stage, agent, already_composed, &harness_fix);
            self.warnings
                .push(Problem::warning(warning).with_help(help));
        }
        already_composed
    }

    /// Whether `<harness>/agents/aidlc.json` lists `agent` under
    /// `toolsSettings.subagent.trustedAgents` (a missing or unreadable conductor trusts none).
    fn kiro_conductor_trusts(&self, agent: &str) -> bool {
        let Some(bytes) = self.view(&kiro_conductor_file(self.harness_dir)) else {
            return false;
        };
        let Ok(conductor) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return false;
        };
        conductor
            .pointer("/toolsSettings/subagent/trustedAgents")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|trusted| trusted.iter().any(|name| name.as_str() == Some(agent)))
    }

    /// Whether the plugin ships `agents/<agent>.md` that this composition copies into
    /// `OpenCode`'s roster as `<agent>.md`: a persona of no `aidlc-` plugin, that has a native
    /// form, whose `name:` no other file of the roster holds.
    fn plugin_ships_viable_opencode_subagent(&mut self, tree: &PluginTree, agent: &str) -> bool {
        let file_name = format!("{agent}.md");
        let Some(text) = tree
            .files_of(Subtree::Agents)
            .find(|file| file.relative == file_name)
            .and_then(PluginFile::text)
        else {
            return false;
        };
        if frontmatter_scalar(text, "plugin").is_some_and(|owner| owner.starts_with("aidlc-"))
            || opencode_agents::native_agent(text).is_err()
        {
            return false;
        }
        let Some(name) = frontmatter_scalar(text, "name") else {
            return true;
        };
        let native_file = format!("{}/{file_name}", opencode_agents::NATIVE_AGENTS_FOLDER);
        let roster_folder = self.absolute(opencode_agents::NATIVE_AGENTS_FOLDER);
        self.roster(&roster_folder)
            .get(&name)
            .is_none_or(|(holder, _)| *holder == native_file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_stage_dispatches_only_its_reviewer() {
        let agents = dispatched_agents("inline", "lead", &["helper"], Some("critic"));
        assert_eq!(agents, vec![("critic", true)]);
        assert!(dispatched_agents("inline", "lead", &["helper"], None).is_empty());
    }

    #[test]
    fn a_dispatched_stage_names_each_agent_once_in_order() {
        let agents = dispatched_agents("pipeline", "lead", &["helper", "lead", ""], Some("helper"));
        assert_eq!(agents, vec![("lead", false), ("helper", false)]);
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
        let stage = ("acme", "acme-build", "subagent");
        let warning = degraded_warning(stage, ("acme-agent", false), false, "author X (y) and add");
        assert_eq!(
            warning,
            "[degraded] plugin \"acme\" stage \"acme-build\" references agent \"acme-agent\" with mode \"subagent\" and was not composed: author X (y) and add, or make the stage's mode inline"
        );
        let kept = degraded_warning(stage, ("critic", true), true, "author Z");
        assert!(
            kept.contains("\"critic\" as reviewer and is already composed but remains undispatchable: author Z")
                && kept.ends_with(", or drop the stage's `reviewer:`"),
            "{kept}"
        );
    }
}
