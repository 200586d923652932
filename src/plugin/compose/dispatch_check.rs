//! The composer's check that the install's harness can dispatch a plugin stage's agents
//! (`plugin::dispatch_surface` says what each harness needs; this looks at the files the plan
//! and the disk hold).
//!
//! Invariant: a stage whose agents the harness cannot dispatch is left out of the plan, with a
//! `[degraded]` warning per agent, unless the install already holds it (then it is kept).

use super::{Planner, frontmatter_scalar};
use crate::compile::syntax::stage::StageDefinition;
use crate::plugin::Problem;
use crate::plugin::dispatch_surface::{
    self, DispatchGap, DispatchSurface, DispatchedAgent, UndispatchableStage,
};
use crate::plugin::manifest::Subtree;
use crate::plugin::opencode_agents;
use crate::plugin::tree::{PluginFile, PluginTree};

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
        let gaps: Vec<DispatchGap> = dispatch_surface::dispatched_agents(
            &stage.mode,
            &stage.lead_agent.value,
            &supports,
            stage
                .reviewer
                .as_ref()
                .map(|reviewer| reviewer.value.as_str()),
        )
        .into_iter()
        .map(|agent| self.dispatch_gap(surface, tree, agent))
        .filter(DispatchGap::is_gap)
        .collect();
        if gaps.is_empty() {
            return true;
        }
        let already_composed = self.disk(relative).is_some();
        let undispatchable = UndispatchableStage {
            plugin: tree.name(),
            slug: &stage.slug.value,
            mode: &stage.mode,
            already_composed,
        };
        for gap in &gaps {
            let warning = dispatch_surface::undispatchable_stage_warning(
                undispatchable,
                gap,
                surface,
                self.harness_dir,
            );
            self.warnings.push(Problem::warning(warning).with_help(if already_composed {
                "the stage stays as it is; fix the agent (or the stage), then run `aidlc plugin sync`"
            } else {
                "the rest of the plugin is composed; fix the agent (or the stage), then run `aidlc plugin sync` to compose the stage"
            }));
        }
        already_composed
    }

    /// What the harness lacks to dispatch `agent`: its surface file (on `OpenCode`, one the
    /// plugin's own persona becomes counts), and on Kiro the conductor's trust.
    fn dispatch_gap(
        &mut self,
        surface: DispatchSurface,
        tree: &PluginTree,
        agent: DispatchedAgent,
    ) -> DispatchGap {
        let surface_file = surface.surface_file(self.harness_dir, &agent.name);
        let missing_surface = self.view(&surface_file).is_none()
            && !(surface == DispatchSurface::OpencodeSubagent
                && self.plugin_ships_viable_opencode_subagent(tree, &agent.name));
        let missing_trust =
            surface.needs_conductor_trust() && !self.kiro_conductor_trusts(&agent.name);
        DispatchGap {
            agent,
            missing_surface,
            missing_trust,
        }
    }

    /// Whether `<harness>/agents/aidlc.json` lists `agent` under
    /// `toolsSettings.subagent.trustedAgents` (a missing or unreadable conductor trusts none).
    fn kiro_conductor_trusts(&self, agent: &str) -> bool {
        let Some(bytes) = self.view(&dispatch_surface::kiro_conductor_file(self.harness_dir))
        else {
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
