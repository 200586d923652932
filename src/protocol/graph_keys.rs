//! The keys of `stage-graph.json`, each spelled once, in the order the reference writes them
//! (D2): a node's top-level keys ([`NodeField`], the [gate] `FIELD_ORDER`), a
//! `sensors_applicable` entry's ([`EntryField`]), and those of a `consumes` and a
//! `rules_in_context` item. Which of them an older graph format leaves out is the format's to say
//! (`GraphFormat::carries_node_field`, `GraphFormat::carries_entry_field`); the writer
//! (`stage_node`), the strict reader (`stage_graph`) and the format's detection
//! (`graph_format::format_written_by`) all take the keys from here.

/// A top-level key of a stage node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeField {
    Slug,
    Number,
    Name,
    Plugin,
    /// Written only as `false`, on a stage the plugin selection (`harness.json` `plugins`)
    /// disables; an enabled stage's node leaves it out (docs/decisions.md D14).
    Enabled,
    Phase,
    Execution,
    Condition,
    LeadAgent,
    SupportAgents,
    Mode,
    ForEach,
    WorkspaceRequires,
    Produces,
    OptionalProduces,
    ProducesKinds,
    Consumes,
    RequiresStage,
    Sensors,
    Scopes,
    Reviewer,
    ReviewArtifact,
    ReviewerMaxIterations,
    ReviewClass,
    SummaryConfirmation,
    Inputs,
    Outputs,
    RulesInContext,
    SensorsApplicable,
}

impl NodeField {
    /// Every key, in the order a node holds them: the reference's [gate] `FIELD_ORDER`.
    pub const ALL: [NodeField; 29] = [
        NodeField::Slug,
        NodeField::Number,
        NodeField::Name,
        NodeField::Plugin,
        NodeField::Enabled,
        NodeField::Phase,
        NodeField::Execution,
        NodeField::Condition,
        NodeField::LeadAgent,
        NodeField::SupportAgents,
        NodeField::Mode,
        NodeField::ForEach,
        NodeField::WorkspaceRequires,
        NodeField::Produces,
        NodeField::OptionalProduces,
        NodeField::ProducesKinds,
        NodeField::Consumes,
        NodeField::RequiresStage,
        NodeField::Sensors,
        NodeField::Scopes,
        NodeField::Reviewer,
        NodeField::ReviewArtifact,
        NodeField::ReviewerMaxIterations,
        NodeField::ReviewClass,
        NodeField::SummaryConfirmation,
        NodeField::Inputs,
        NodeField::Outputs,
        NodeField::RulesInContext,
        NodeField::SensorsApplicable,
    ];

    /// The fields of a node's body: everything after its head (`slug`, `number`, `name`).
    pub const BODY: &[NodeField] = NodeField::ALL.split_at(3).1;

    /// The key as the graph spells it.
    pub const fn key(self) -> &'static str {
        match self {
            NodeField::Slug => "slug",
            NodeField::Number => "number",
            NodeField::Name => "name",
            NodeField::Plugin => "plugin",
            NodeField::Enabled => "enabled",
            NodeField::Phase => "phase",
            NodeField::Execution => "execution",
            NodeField::Condition => "condition",
            NodeField::LeadAgent => "lead_agent",
            NodeField::SupportAgents => "support_agents",
            NodeField::Mode => "mode",
            NodeField::ForEach => "for_each",
            NodeField::WorkspaceRequires => "workspace_requires",
            NodeField::Produces => "produces",
            NodeField::OptionalProduces => "optional_produces",
            NodeField::ProducesKinds => "produces_kinds",
            NodeField::Consumes => "consumes",
            NodeField::RequiresStage => "requires_stage",
            NodeField::Sensors => "sensors",
            NodeField::Scopes => "scopes",
            NodeField::Reviewer => "reviewer",
            NodeField::ReviewArtifact => "review_artifact",
            NodeField::ReviewerMaxIterations => "reviewer_max_iterations",
            NodeField::ReviewClass => "review_class",
            NodeField::SummaryConfirmation => "summary_confirmation",
            NodeField::Inputs => "inputs",
            NodeField::Outputs => "outputs",
            NodeField::RulesInContext => "rules_in_context",
            NodeField::SensorsApplicable => "sensors_applicable",
        }
    }
}

/// The reference's [gate] `FIELD_ORDER`: the 29 top-level keys of a node, in order.
pub const FIELD_ORDER: [&str; 29] = {
    let mut keys = [""; 29];
    let mut index = 0;
    while index < keys.len() {
        keys[index] = NodeField::ALL[index].key();
        index += 1;
    }
    keys
};

/// A key of a `sensors_applicable` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryField {
    Id,
    Path,
    FireOn,
    DefaultSeverity,
    Category,
    Matches,
}

impl EntryField {
    /// Every key, in the order an entry holds them: `{id, path, fire_on, default_severity,
    /// category?, matches?}`.
    pub const ALL: [EntryField; 6] = [
        EntryField::Id,
        EntryField::Path,
        EntryField::FireOn,
        EntryField::DefaultSeverity,
        EntryField::Category,
        EntryField::Matches,
    ];

    pub const fn key(self) -> &'static str {
        match self {
            EntryField::Id => "id",
            EntryField::Path => "path",
            EntryField::FireOn => "fire_on",
            EntryField::DefaultSeverity => "default_severity",
            EntryField::Category => "category",
            EntryField::Matches => "matches",
        }
    }
}

/// The keys of a `consumes` item.
pub const CONSUME_ARTIFACT: &str = "artifact";
pub const CONSUME_REQUIRED: &str = "required";
pub const CONSUME_CONDITIONAL_ON: &str = "conditional_on";

/// The keys of a `rules_in_context` item.
pub const RULE_PATH: &str = "path";
pub const RULE_SCOPE: &str = "scope";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_order_is_the_reference_s_29_keys() {
        assert_eq!(
            FIELD_ORDER.join(" "),
            "slug number name plugin enabled phase execution condition lead_agent support_agents mode for_each workspace_requires produces optional_produces produces_kinds consumes requires_stage sensors scopes reviewer review_artifact reviewer_max_iterations review_class summary_confirmation inputs outputs rules_in_context sensors_applicable"
        );
        assert_eq!(NodeField::BODY[0], NodeField::Plugin);
        assert_eq!(NodeField::BODY.len(), 26);
    }
}
