//! The keys of `stage-graph.json`, each spelled once, in the order the reference writes them
//! (D2): a node's top-level keys ([`NodeField`], the [gate] `FIELD_ORDER`), a
//! `sensors_applicable` entry's ([`EntryField`]), and those of a `consumes` and a
//! `rules_in_context` item. Which of them an older graph format leaves out is the format's to say
//! (`GraphFormat::carries_node_field`, `GraphFormat::carries_entry_field`); the writer
//! (`stage_node`), the strict reader (`stage_graph`) and the format's detection
//! (`graph_format::format_written_by`) all take the keys from here.

/// A top-level key of a stage node, spelled as its variant's name in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray, strum::VariantNames)]
#[strum(serialize_all = "snake_case")]
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
    pub const ALL: &[NodeField] = <NodeField as strum::VariantArray>::VARIANTS;

    /// The fields of a node's body: everything after its head (`slug`, `number`, `name`).
    pub const BODY: &[NodeField] = NodeField::ALL.split_at(3).1;

    /// The key as the graph spells it.
    pub const fn key(self) -> &'static str {
        FIELD_ORDER[self as usize]
    }
}

/// The reference's [gate] `FIELD_ORDER`: the 29 top-level keys of a node, in order, the key of
/// each [`NodeField`] at its place.
pub const FIELD_ORDER: &[&str] = <NodeField as strum::VariantNames>::VARIANTS;

/// A key of a `sensors_applicable` entry, spelled as its variant's name in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray, strum::VariantNames)]
#[strum(serialize_all = "snake_case")]
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
    pub const ALL: &[EntryField] = <EntryField as strum::VariantArray>::VARIANTS;

    pub const fn key(self) -> &'static str {
        ENTRY_KEYS[self as usize]
    }
}

/// A binding's keys in their order, the key of each [`EntryField`] at its place.
pub const ENTRY_KEYS: &[&str] = <EntryField as strum::VariantNames>::VARIANTS;

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

    #[test]
    fn a_binding_s_keys_are_the_reference_s_six() {
        assert_eq!(
            ENTRY_KEYS.join(" "),
            "id path fire_on default_severity category matches"
        );
        assert_eq!(EntryField::FireOn.key(), "fire_on");
    }
}
