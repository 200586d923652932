//! The keys of `stage-graph.json`, each spelled once, in the order the reference writes them
//! (D2): a node's top-level keys ([`NodeField`], the [gate] `FIELD_ORDER`), a
//! `sensors_applicable` entry's ([`EntryField`]), and those of a `consumes` and a
//! `rules_in_context` item. Which of them an older graph format leaves out is the format's to say
//! (`GraphFormat::carries_node_field`, `GraphFormat::carries_entry_field`); the writer
//! (`stage_node`), the strict reader (`stage_graph`) and the format's detection
//! (`graph_format::format_written_by`) all take the keys from here.

/// A top-level key of a stage node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
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
pub const FIELD_ORDER: [&str; 29] = [
    "slug",
    "number",
    "name",
    "plugin",
    "enabled",
    "phase",
    "execution",
    "condition",
    "lead_agent",
    "support_agents",
    "mode",
    "for_each",
    "workspace_requires",
    "produces",
    "optional_produces",
    "produces_kinds",
    "consumes",
    "requires_stage",
    "sensors",
    "scopes",
    "reviewer",
    "review_artifact",
    "reviewer_max_iterations",
    "review_class",
    "summary_confirmation",
    "inputs",
    "outputs",
    "rules_in_context",
    "sensors_applicable",
];

/// A key of a `sensors_applicable` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
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
pub const ENTRY_KEYS: [&str; 6] = [
    "id",
    "path",
    "fire_on",
    "default_severity",
    "category",
    "matches",
];

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

    /// Each field's key is its variant's name in snake case: the tables and the enums agree.
    #[test]
    fn each_key_is_its_field_s_name_in_snake_case() {
        fn snake_case(name: &str) -> String {
            let mut snake = String::new();
            for (index, letter) in name.char_indices() {
                if letter.is_ascii_uppercase() && index > 0 {
                    snake.push('_');
                }
                snake.push(letter.to_ascii_lowercase());
            }
            snake
        }
        for field in NodeField::ALL {
            assert_eq!(field.key(), snake_case(&format!("{field:?}")));
        }
        for field in EntryField::ALL {
            assert_eq!(field.key(), snake_case(&format!("{field:?}")));
        }
    }
}
