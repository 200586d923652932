//! Stage definitions: `<harness>/aidlc-common/stages/<phase>/<slug>.md` → [`StageDefinition`].
//!
//! Checks every field's shape as the reference's stage schema does (reporting all problems of a
//! file at once). Checks that need other files (agent roster, sensor registry, other stages)
//! live in `resolve` and `graph`.

use std::ops::Range;

use camino::Utf8Path;
use schemars::{JsonSchema, Schema};

use crate::compile::syntax::document::{self, DocumentKind, FrontmatterChecker};
use crate::compile::syntax::field_schema::{
    ExecutionName, ForEachName, KEBAB_CASE_PATTERN, KebabCase, ModeName, NonEmptyText, PhaseName,
    PositiveInteger, ProducesKinds, ProjectKindName, ReviewClassName, StageNumber,
    SummaryConfirmationName, Text,
};
use crate::compile::syntax::yaml::Node;
use crate::leaves::diagnostics::{Code, Diagnostic};

/// A value with the byte range it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Located<T> {
    pub value: T,
    pub span: Range<usize>,
}

/// One artifact a stage reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, JsonSchema)]
pub struct Consume {
    /// The artifact's slug, as another stage's `produces` names it.
    #[schemars(with = "KebabCase")]
    pub artifact: Located<String>,
    /// Whether the stage cannot run without it.
    pub required: bool,
    /// Read only in a `brownfield` (existing code) or `greenfield` (new) project.
    #[schemars(with = "Option<ProjectKindName>")]
    pub conditional_on: Option<String>,
}

/// A stage definition: the YAML frontmatter of `<harness>/aidlc-common/stages/<phase>/<slug>.md`,
/// as `aidlc compile` reads it into a node of `stage-graph.json`. Any other key is refused.
/// List fields the file omits are empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash, JsonSchema)]
#[schemars(
    title = "AI-DLC stage definition",
    deny_unknown_fields,
    transform = add_checked_only_keys
)]
pub struct StageDefinition {
    /// The stage's id, kebab-case; the file is named `<slug>.md`.
    #[schemars(with = "KebabCase")]
    pub slug: Located<String>,
    /// A hint `<phase index>.<position>`, e.g. `2.3`, ordering a new stage among the new stages
    /// of its phase; the compile numbers stages itself, and a stage already in the graph keeps
    /// its number.
    #[schemars(rename = "number", with = "Option<StageNumber>")]
    pub number_hint: Option<String>,
    /// The display name of a new stage (default: the slug in title case); a stage already in
    /// the graph keeps its name.
    #[schemars(with = "Option<Text>")]
    pub name: Option<String>,
    /// The plugin that owns the stage (not `aidlc`, nor starting `aidlc-`); the slug must then
    /// start with `<plugin>-`. Core stages leave it out.
    #[schemars(with = "Option<Text>")]
    pub plugin: Option<Located<String>>,
    /// The phase the stage belongs to; the file lives in the folder of that name.
    #[schemars(with = "PhaseName")]
    pub phase: Located<String>,
    /// `ALWAYS`, or `CONDITIONAL` when `condition` decides whether the stage runs.
    #[schemars(with = "ExecutionName")]
    pub execution: String,
    /// When the stage runs, in words (for `CONDITIONAL` stages the conductor asks about it).
    #[schemars(with = "Text")]
    pub condition: Option<String>,
    /// The agent that leads the stage: an agent file's name under `<harness>/agents/`.
    #[schemars(with = "Text")]
    pub lead_agent: Located<String>,
    /// Agents that help the lead; needed by `pipeline` and `mob` stages.
    #[schemars(with = "Option<Vec<Text>>")]
    pub support_agents: Vec<Located<String>>,
    /// How the agents work the stage.
    #[schemars(with = "ModeName")]
    pub mode: String,
    /// `unit-of-work`: the stage runs once per unit of work, writing under each unit's folder.
    #[schemars(with = "Option<ForEachName>")]
    pub for_each: Option<String>,
    /// Whether the stage needs a workspace (a checked-out repository) to run.
    #[schemars(with = "Option<bool>")]
    pub workspace_requires: Option<bool>,
    /// The artifacts the stage writes, each `<artifact>.md` in the stage's output folder.
    #[schemars(with = "Option<Vec<Text>>")]
    pub produces: Vec<Located<String>>,
    /// Artifacts the stage may write (kebab-case slugs).
    #[schemars(with = "Option<Vec<KebabCase>>")]
    pub optional_produces: Option<Vec<String>>,
    /// For each produced artifact, the kinds of unit it applies to.
    #[schemars(with = "Option<ProducesKinds>")]
    pub produces_kinds: Option<Vec<(String, Vec<String>)>>,
    /// The artifacts the stage reads, each with whether it is required.
    #[schemars(with = "Option<Vec<Consume>>")]
    pub consumes: Vec<Consume>,
    /// The slugs of the stages that must be done before this one.
    #[schemars(with = "Option<Vec<Text>>")]
    pub requires_stage: Vec<Located<String>>,
    /// The ids of the sensors that check the stage's outputs (`<harness>/sensors/aidlc-<id>.md`).
    #[schemars(with = "Option<Vec<NonEmptyText>>")]
    pub sensors: Vec<Located<String>>,
    /// The scopes that include the stage (`<harness>/scopes/aidlc-<scope>.md`).
    #[schemars(with = "Option<Vec<NonEmptyText>>")]
    pub scopes: Vec<String>,
    /// The agent that reviews the stage's outputs.
    #[schemars(with = "Option<Text>")]
    pub reviewer: Option<Located<String>>,
    /// The artifact the reviewer writes.
    #[schemars(with = "Option<Text>")]
    pub review_artifact: Option<Located<String>>,
    /// How many review rounds at most.
    #[schemars(with = "Option<PositiveInteger>")]
    pub reviewer_max_iterations: Option<u64>,
    /// How the reviewer works: `adversarial` or `advisory`; needs `reviewer`.
    #[schemars(with = "Option<ReviewClassName>")]
    pub review_class: Option<Located<String>>,
    /// Whether the human confirms a summary of the outputs at the gate.
    #[schemars(with = "Option<SummaryConfirmationName>")]
    pub summary_confirmation: Option<Located<String>>,
    /// What the stage reads, in words.
    #[schemars(with = "Text")]
    pub inputs: Option<String>,
    /// What the stage writes, in words.
    #[schemars(with = "Text")]
    pub outputs: Option<String>,
}

impl StageDefinition {
    /// `produces` then `optional_produces`, as written.
    pub fn produced_artifacts(&self) -> impl Iterator<Item = &str> {
        let produces = self.produces.iter().map(|artifact| artifact.value.as_str());
        produces.chain(self.optional_produces.iter().flatten().map(String::as_str))
    }
}

/// The keys the parser checks but does not keep (the conductor reads them from the file): they
/// are in the schema so that an editor neither flags nor forgets them.
fn add_checked_only_keys(schema: &mut Schema) {
    let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    properties.insert(
        "when".to_owned(),
        serde_json::json!({
            "description": "A predicate deciding whether the stage is planned: `producer-in-plan: <artifact>` plans it only when the producer of that artifact is in the plan.",
            "type": ["object", "null"],
            "properties": {
                "producer-in-plan": { "type": "string", "pattern": KEBAB_CASE_PATTERN }
            },
            "required": ["producer-in-plan"],
            "additionalProperties": false
        }),
    );
    properties.insert(
        "required_sections".to_owned(),
        serde_json::json!({
            "description": "The `## ` headings each deliverable of the stage must have (for the required-sections sensor).",
            "type": ["array", "null"],
            "items": { "type": ["string", "number", "boolean"], "pattern": "\\S" }
        }),
    );
}

pub use crate::compile::syntax::vocabulary::{
    CONDITIONAL_ON_VALUES, EXECUTIONS, FOR_EACH_VALUES, MODES, PHASES, REVIEW_CLASSES,
    SUMMARY_CONFIRMATIONS, UNIT_KINDS,
};

const REQUIRED_SCALARS: [&str; 7] = [
    "slug",
    "phase",
    "execution",
    "condition",
    "lead_agent",
    "mode",
    "inputs",
];
pub const KNOWN_KEYS: [&str; 28] = [
    "slug",
    "phase",
    "execution",
    "condition",
    "lead_agent",
    "support_agents",
    "mode",
    "produces",
    "consumes",
    "requires_stage",
    "inputs",
    "outputs",
    "number",
    "name",
    "plugin",
    "for_each",
    "workspace_requires",
    "optional_produces",
    "produces_kinds",
    "sensors",
    "scopes",
    "reviewer",
    "reviewer_max_iterations",
    "when",
    "required_sections",
    "review_class",
    "summary_confirmation",
    "review_artifact",
];
const KEBAB_CASE_HELP: &str = "use lowercase letters, digits and hyphens, starting with a letter";
const RESERVED_KEYS: [(&str, &str); 4] = [
    ("on_failure", "loop driver"),
    ("blocks_on", "construction worktrees"),
    ("timeout", "sensor binding"),
    ("retry", "loop driver"),
];

/// `^[a-z][a-z0-9-]*$`: a stage slug, a sensor id, a space, an intent label.
pub fn is_kebab_case(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

pub fn parse_stage(text: &str, file: &Utf8Path) -> (Option<StageDefinition>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some(map) = document::read_frontmatter(text, file, DocumentKind::Stage, &mut diagnostics)
    else {
        return (None, diagnostics);
    };
    let mut checker = FrontmatterChecker {
        map: &map,
        file,
        diagnostics,
    };
    let definition = checker.check_stage();
    let FrontmatterChecker { diagnostics, .. } = checker;
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    (if has_errors { None } else { definition }, diagnostics)
}

/// The stage definition's checks.
impl FrontmatterChecker<'_> {
    fn invalid(&mut self, message: impl Into<String>, span: Range<usize>, help: impl Into<String>) {
        self.error(Code::InvalidStageField, message, span, help);
    }

    fn check_stage(&mut self) -> Option<StageDefinition> {
        self.check_keys();
        let required = REQUIRED_SCALARS.into_iter().chain(["outputs"]);
        let missing = self.map.missing_required(required, self.file, "");
        self.diagnostics.extend(missing);
        let slug = self
            .string("slug")
            .and_then(|slug| self.kebab(slug, "slug", KEBAB_CASE_HELP));
        let number_hint = self.number_hint();
        let name = self.string("name").map(|located| located.value);
        let plugin = self.string("plugin");
        let phase = self.enum_scalar("phase", PHASES);
        let execution = self.enum_scalar("execution", &EXECUTIONS);
        let condition = self.string("condition").map(|located| located.value);
        let lead_agent = self.string("lead_agent");
        let support_agents = self.string_list("support_agents");
        let mode = self.enum_scalar("mode", &MODES);
        let for_each = self
            .enum_scalar("for_each", &FOR_EACH_VALUES)
            .map(|located| located.value);
        let workspace_requires = self
            .map
            .value("workspace_requires")
            .and_then(|node| self.boolean(node, "workspace_requires", "workspace_requires"));
        let produces = self.string_list("produces");
        let optional_produces = self
            .map
            .value("optional_produces")
            .map(|_| self.kebab_list("optional_produces"));
        let declared_outputs: Vec<&str> = produces
            .iter()
            .map(|p| p.value.as_str())
            .chain(optional_produces.iter().flatten().map(String::as_str))
            .collect();
        let produces_kinds = self.produces_kinds(&declared_outputs);
        let consumes = self.consumes();
        let requires_stage = self.string_list("requires_stage");
        let sensors = self.non_empty_list("sensors");
        let scopes = self
            .non_empty_list("scopes")
            .into_iter()
            .map(|located| located.value)
            .collect();
        let reviewer = self.string("reviewer");
        let review_artifact = self.string("review_artifact");
        let reviewer_max_iterations = self.positive_integer("reviewer_max_iterations");
        let review_class = self.one_of(
            "review_class",
            &REVIEW_CLASSES,
            |_| "review_class must be \"adversarial\" or \"advisory\"".to_owned(),
            "use `adversarial` or `advisory`",
        );
        let summary_confirmation = self.one_of(
            "summary_confirmation",
            &SUMMARY_CONFIRMATIONS,
            |value| {
                format!("summary_confirmation must be one of required, if-present, got \"{value}\"")
            },
            "use `required` or `if-present`",
        );
        let inputs = self.string("inputs").map(|located| located.value);
        let outputs = self.string("outputs").map(|located| located.value);
        self.check_when();
        self.non_empty_list("required_sections");
        self.check_couplings(mode.as_ref(), &support_agents, reviewer.as_ref());
        if let (Some(plugin), Some(slug)) = (&plugin, &slug) {
            self.check_plugin(plugin, slug);
        }
        Some(StageDefinition {
            slug: slug?,
            number_hint,
            name,
            plugin,
            phase: phase?,
            execution: execution?.value,
            condition,
            lead_agent: lead_agent?,
            support_agents,
            mode: mode?.value,
            for_each,
            workspace_requires,
            produces,
            optional_produces,
            produces_kinds,
            consumes,
            requires_stage,
            sensors,
            scopes,
            reviewer,
            review_artifact,
            reviewer_max_iterations,
            review_class,
            summary_confirmation,
            inputs,
            outputs,
        })
    }

    fn check_keys(&mut self) {
        for entry in &self.map.entries {
            let Some(key) = entry.key.as_scalar() else {
                continue;
            };
            let span = entry.key.span.clone();
            if let Some((_, reason)) = RESERVED_KEYS.iter().find(|(reserved, _)| *reserved == key) {
                self.error(
                    Code::ReservedStageKey,
                    format!("{key} is reserved ({reason}); not active yet"),
                    span,
                    format!("remove `{key}:`; it has no effect in this release"),
                );
            } else if key == "bundle" {
                self.error(
                    Code::RenamedStageKey,
                    "bundle: was renamed; write plugin: for ownership",
                    span,
                    "rename `bundle:` to `plugin:`",
                );
            } else if !KNOWN_KEYS.contains(&key) {
                let help = match key {
                    "rules_in_context" | "sensors_applicable" | "enabled" => {
                        format!(
                            "`{key}` exists only on compiled graph nodes; remove it from the stage file"
                        )
                    }
                    _ => match crate::leaves::diagnostics::closest_match(key, KNOWN_KEYS) {
                        Some(known) => format!("did you mean `{known}`?"),
                        None => format!(
                            "remove `{key}:`; stage files accept only the documented fields"
                        ),
                    },
                };
                self.error(
                    Code::UnknownStageKey,
                    format!("unknown key: {key}"),
                    span,
                    help,
                );
            }
        }
    }

    /// The scalar `node` with its span; anything else is refused as `<label> must be string`.
    fn text_of(
        &mut self,
        node: &Node,
        label: impl std::fmt::Display,
        help: impl std::fmt::Display,
    ) -> Option<Located<String>> {
        let Some(text) = document::scalar_string(node) else {
            self.invalid(
                format!("{label} must be string, got {}", node.type_name()),
                node.span.clone(),
                help.to_string(),
            );
            return None;
        };
        Some(Located {
            value: text.to_owned(),
            span: node.span.clone(),
        })
    }

    fn string(&mut self, field: &str) -> Option<Located<String>> {
        let node = self.map.value(field)?;
        self.text_of(
            node,
            field,
            format_args!("write `{field}:` followed by one value on the same line"),
        )
    }

    /// `located` when it is kebab-case; otherwise `<label> must be kebab-case` is refused.
    fn kebab(
        &mut self,
        located: Located<String>,
        label: impl std::fmt::Display,
        help: &str,
    ) -> Option<Located<String>> {
        if is_kebab_case(&located.value) {
            return Some(located);
        }
        self.invalid(
            format!("{label} must be kebab-case, got \"{}\"", located.value),
            located.span,
            help,
        );
        None
    }

    fn enum_scalar(&mut self, field: &str, allowed: &[&str]) -> Option<Located<String>> {
        let located = self.string(field)?;
        if !allowed.contains(&located.value.as_str()) {
            let suggestion =
                crate::leaves::diagnostics::closest_match(&located.value, allowed.iter().copied())
                    .map_or_else(String::new, |close| format!(" (did you mean `{close}`?)"));
            self.invalid(
                format!(
                    "{field} must be one of {}, got \"{}\"",
                    allowed.join(" | "),
                    located.value
                ),
                located.span,
                format!("use one of: {}{suggestion}", allowed.join(", ")),
            );
            return None;
        }
        Some(located)
    }

    fn number_hint(&mut self) -> Option<String> {
        let located = self.string("number")?;
        let valid = located.value.split_once('.').is_some_and(|(major, minor)| {
            !major.is_empty()
                && !minor.is_empty()
                && major.bytes().all(|b| b.is_ascii_digit())
                && minor.bytes().all(|b| b.is_ascii_digit())
        });
        if !valid {
            self.invalid(
                format!("number must be <phase-prefix>.<index>, got \"{}\"", located.value),
                located.span,
                "write it as `<phase index>.<position>`, e.g. `2.3`, or leave it out to have it seeded",
            );
            return None;
        }
        Some(located.value)
    }

    /// The boolean `node` (the value of `key`, named `label` in the message).
    fn boolean(&mut self, node: &Node, label: impl std::fmt::Display, key: &str) -> Option<bool> {
        if let Some(value) = node.as_bool() {
            return Some(value);
        }
        self.invalid(
            format!("{label} must be boolean, got {}", node.type_name()),
            node.span.clone(),
            format!("write `{key}: true` or `{key}: false`"),
        );
        None
    }

    fn positive_integer(&mut self, field: &str) -> Option<u64> {
        let node = self.map.value(field)?;
        let text = document::scalar_string(node).unwrap_or_default();
        match text.parse::<u64>() {
            Ok(value) if value > 0 && node.type_name() == "number" => Some(value),
            _ => {
                self.invalid(
                    format!(
                        "{field} must be a positive integer, got {}",
                        document::shown_value(node)
                    ),
                    node.span.clone(),
                    format!("write a whole number greater than zero, e.g. `{field}: 2`"),
                );
                None
            }
        }
    }

    /// A list of strings, block or flow form. Absent or empty means `[]`.
    fn string_list(&mut self, field: &str) -> Vec<Located<String>> {
        let Some(node) = self.map.value(field) else {
            return Vec::new();
        };
        let Some(items) = node.as_sequence() else {
            self.invalid(
                format!("{field} must be array, got {}", node.type_name()),
                node.span.clone(),
                format!("write `{field}:` followed by `  - item` lines, or `{field}: [a, b]`"),
            );
            return Vec::new();
        };
        let help = "each list item must be a single value";
        (items.iter().enumerate())
            .filter_map(|(index, item)| self.text_of(item, format_args!("{field}[{index}]"), help))
            .collect()
    }

    fn non_empty_list(&mut self, field: &str) -> Vec<Located<String>> {
        let values = self.string_list(field);
        for (index, located) in values.iter().enumerate() {
            if located.value.trim().is_empty() {
                self.invalid(
                    format!("{field}[{index}] must be non-empty"),
                    located.span.clone(),
                    "remove the empty item",
                );
            }
        }
        values
    }

    /// The kebab-case items of a list; any other item is refused (so the stage is too).
    fn kebab_list(&mut self, field: &str) -> Vec<String> {
        let values = self.string_list(field).into_iter().enumerate();
        values
            .filter_map(|(index, located)| {
                self.kebab(located, format_args!("{field}[{index}]"), KEBAB_CASE_HELP)
            })
            .map(|located| located.value)
            .collect()
    }

    fn produces_kinds(&mut self, declared_outputs: &[&str]) -> Option<Vec<(String, Vec<String>)>> {
        let node = self.map.value("produces_kinds")?;
        let Some(entries) = node.as_mapping() else {
            self.invalid(
                format!("produces_kinds must be object, got {}", node.type_name()),
                node.span.clone(),
                "write one `artifact: [kind, ...]` line per produced artifact",
            );
            return None;
        };
        let mut kinds = Vec::new();
        for entry in entries {
            let key = entry.key.as_scalar().unwrap_or_default().to_owned();
            if !is_kebab_case(&key) {
                self.invalid(
                    format!("produces_kinds key \"{key}\" is not kebab-case"),
                    entry.key.span.clone(),
                    "keys are artifact slugs",
                );
            } else if !declared_outputs.contains(&key.as_str()) {
                self.invalid(
                    format!("produces_kinds key \"{key}\" is not in produces"),
                    entry.key.span.clone(),
                    "list the artifact under `produces:` or remove this line",
                );
            }
            let list: Vec<&Node> = entry
                .value
                .as_sequence()
                .map(|items| items.iter().collect())
                .unwrap_or_default();
            if list.is_empty() {
                self.invalid(
                    format!("produces_kinds.{key} must be a non-empty list of unit kinds"),
                    entry.value.span.clone(),
                    format!(
                        "e.g. `{key}: [service, library]`; kinds: {}",
                        UNIT_KINDS.join(", ")
                    ),
                );
                continue;
            }
            let mut values = Vec::new();
            for item in list {
                let text = document::scalar_string(item).unwrap_or_default();
                if UNIT_KINDS.contains(&text) {
                    values.push(text.to_owned());
                } else {
                    self.invalid(
                        format!("produces_kinds.{key} lists unknown kind \"{text}\""),
                        item.span.clone(),
                        format!("kinds are: {}", UNIT_KINDS.join(", ")),
                    );
                }
            }
            kinds.push((key, values));
        }
        Some(kinds)
    }

    fn consumes(&mut self) -> Vec<Consume> {
        let Some(node) = self.map.value("consumes") else {
            return Vec::new();
        };
        let Some(items) = node.as_sequence() else {
            self.invalid(
                format!("consumes must be array, got {}", node.type_name()),
                node.span.clone(),
                "write `consumes:` followed by `  - artifact: <slug>` items with `required: true|false`",
            );
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| self.consume(index, item))
            .collect()
    }

    fn consume(&mut self, index: usize, item: &Node) -> Option<Consume> {
        if item.as_mapping().is_none() {
            self.invalid(
                format!("consumes[{index}] must be object, got {}", item.type_name()),
                item.span.clone(),
                "each item is a mapping: `- artifact: <slug>` then `required: true|false`",
            );
            return None;
        }
        let field = |key: &str| item.get(key).filter(|value| !value.is_null());
        let label = |key: &str| format!("consumes[{index}].{key}");
        let artifact = match field("artifact") {
            None => self.missing(
                &label("artifact"),
                item,
                "add `artifact: <slug>` to the item",
            ),
            Some(value) => self
                .text_of(
                    value,
                    format_args!("consumes[{index}].artifact"),
                    "name one artifact slug",
                )
                .and_then(|artifact| {
                    let help = "artifact slugs use lowercase letters, digits and hyphens";
                    self.kebab(artifact, format_args!("consumes[{index}].artifact"), help)
                }),
        };
        let required = match field("required") {
            None => self.missing(
                &label("required"),
                item,
                "add `required: true` or `required: false`",
            ),
            Some(value) => self.boolean(
                value,
                format_args!("consumes[{index}].required"),
                "required",
            ),
        };
        let conditional_on = field("conditional_on").and_then(|value| {
            let help = "use `brownfield` or `greenfield`";
            let text = self.text_of(
                value,
                format_args!("consumes[{index}].conditional_on"),
                help,
            )?;
            if CONDITIONAL_ON_VALUES.contains(&text.value.as_str()) {
                return Some(text.value);
            }
            self.invalid(
                format!(
                    "{} must be one of brownfield | greenfield, got \"{}\"",
                    label("conditional_on"),
                    text.value
                ),
                text.span,
                help,
            );
            None
        });
        Some(Consume {
            artifact: artifact?,
            required: required?,
            conditional_on,
        })
    }

    /// `<label> missing`, at `item` (the mapping that lacks the key).
    fn missing<T>(&mut self, label: &str, item: &Node, help: &str) -> Option<T> {
        self.invalid(format!("{label} missing"), item.span.clone(), help);
        None
    }

    /// `field`'s text when it is one of `allowed`; otherwise `message` is refused with `help`.
    fn one_of(
        &mut self,
        field: &str,
        allowed: &[&str],
        message: impl FnOnce(&str) -> String,
        help: &str,
    ) -> Option<Located<String>> {
        let located = self.string(field)?;
        if !allowed.contains(&located.value.as_str()) {
            self.invalid(message(&located.value), located.span, help);
            return None;
        }
        Some(located)
    }

    fn check_when(&mut self) {
        let Some(node) = self.map.value("when") else {
            return;
        };
        let Some(entries) = node.as_mapping() else {
            self.invalid(
                format!("when must be object, got {}", node.type_name()),
                node.span.clone(),
                "write `when: {producer-in-plan: <artifact>}`",
            );
            return;
        };
        if entries.len() != 1 {
            self.invalid(
                format!(
                    "when must have exactly one predicate key, got {}",
                    entries.len()
                ),
                node.span.clone(),
                "keep a single `producer-in-plan:` predicate",
            );
            return;
        }
        let entry = &entries[0];
        let key = entry.key.as_scalar().unwrap_or_default();
        if key != "producer-in-plan" {
            self.invalid(
                format!("when has unknown predicate \"{key}\"; allowed: producer-in-plan"),
                entry.key.span.clone(),
                "use `producer-in-plan`",
            );
        } else if !document::scalar_string(&entry.value).is_some_and(is_kebab_case) {
            self.invalid(
                format!("when.{key} must be a non-empty artifact slug"),
                entry.value.span.clone(),
                "name the artifact whose producer must be in the plan",
            );
        }
    }

    fn check_couplings(
        &mut self,
        mode: Option<&Located<String>>,
        support_agents: &[Located<String>],
        reviewer: Option<&Located<String>>,
    ) {
        if let Some(mode) = mode
            && (mode.value == "pipeline" || mode.value == "mob")
            && support_agents.is_empty()
        {
            self.invalid(
                format!(
                    "mode \"{}\" requires a non-empty support_agents",
                    mode.value
                ),
                mode.span.clone(),
                "list at least one agent under `support_agents:`",
            );
        }
        if reviewer.is_none() {
            for field in ["reviewer_max_iterations", "review_class"] {
                if let Some(entry) = self.map.get(field).filter(|entry| !entry.value.is_null()) {
                    let span = entry.key.span.clone();
                    self.invalid(
                        format!("{field} requires a reviewer"),
                        span,
                        "add `reviewer: <agent>` or remove this field",
                    );
                }
            }
        }
    }

    fn check_plugin(&mut self, plugin: &Located<String>, slug: &Located<String>) {
        let name = &plugin.value;
        if name == "aidlc" {
            self.error(
                Code::InvalidPluginField,
                format!(
                    "stage \"{}\" declares plugin \"aidlc\"; omit plugin for core stages.",
                    slug.value
                ),
                plugin.span.clone(),
                "remove the `plugin:` line",
            );
        } else if name.starts_with("aidlc-") {
            self.error(
                Code::InvalidPluginField,
                format!("stage \"{}\" declares plugin \"{name}\"; the \"aidlc-\" prefix is reserved for core (a plugin named aidlc-<x> collides with core runner paths). Rename the plugin.", slug.value),
                plugin.span.clone(),
                "pick a plugin name without the `aidlc-` prefix",
            );
        } else if !slug.value.starts_with(&format!("{name}-")) {
            self.error(
                Code::InvalidPluginField,
                format!("stage \"{}\" declares plugin \"{name}\", but plugin-owned stage slugs must start with \"{name}-\". Rename the slug or fix the plugin field.", slug.value),
                slug.span.clone(),
                format!("rename the stage to `{name}-{}`", slug.value),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "---\nslug: demo\nphase: inception\nexecution: ALWAYS\ncondition: Always\nlead_agent: orchestrator\nsupport_agents: []\nmode: inline\nproduces:\n  - demo-doc\nconsumes:\n  - artifact: intent-statement\n    required: false\n    conditional_on: brownfield\nrequires_stage: [other]\nsensors: [required-sections]\nscopes: [feature]\ninputs: x\noutputs: y\n---\n# Demo\n";

    fn problems(text: &str) -> Vec<String> {
        parse_stage(text, Utf8Path::new("s.md"))
            .1
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn parses_flow_and_block_lists() {
        let (stage, diagnostics) = parse_stage(GOOD, Utf8Path::new("s.md"));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let stage = stage.unwrap();
        assert_eq!(stage.requires_stage[0].value, "other");
        assert_eq!(stage.sensors[0].value, "required-sections");
        assert_eq!(
            stage.consumes[0].conditional_on.as_deref(),
            Some("brownfield")
        );
        assert!(!stage.consumes[0].required);
    }

    #[test]
    fn reserved_renamed_and_unknown_keys() {
        let text = GOOD.replace(
            "inputs: x",
            "inputs: x\nretry: 3\nbundle: b\nsensors_applicable: []\nreviwer: a",
        );
        assert_eq!(
            problems(&text),
            [
                "retry is reserved (loop driver); not active yet",
                "bundle: was renamed; write plugin: for ownership",
                "unknown key: sensors_applicable",
                "unknown key: reviwer",
            ]
        );
    }

    #[test]
    fn enum_and_shape_errors_are_all_reported() {
        let text = GOOD
            .replace("phase: inception", "phase: design")
            .replace("mode: inline", "mode: mob")
            .replace("slug: demo", "slug: Demo");
        assert_eq!(
            problems(&text),
            [
                "slug must be kebab-case, got \"Demo\"",
                "phase must be one of initialization | ideation | inception | construction | operation, got \"design\"",
                "mode \"mob\" requires a non-empty support_agents",
            ]
        );
    }

    #[test]
    fn for_each_other_than_unit_of_work_is_refused() {
        let text = GOOD.replace("mode: inline", "mode: inline\nfor_each: unit-of-wrok");
        assert_eq!(
            problems(&text),
            ["for_each must be one of unit-of-work, got \"unit-of-wrok\""]
        );
        let good = GOOD.replace("mode: inline", "mode: inline\nfor_each: unit-of-work");
        assert!(problems(&good).is_empty());
    }

    #[test]
    fn consumes_items_are_checked() {
        let text = GOOD.replace("    required: false\n", "    required: maybe\n");
        assert_eq!(
            problems(&text),
            ["consumes[0].required must be boolean, got string"]
        );
    }
}
