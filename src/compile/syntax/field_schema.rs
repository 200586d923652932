//! The JSON Schema shape of each kind of frontmatter value, for the `JsonSchema` derives on the
//! parser's own types (`SensorManifest`, `StageDefinition`): `aidlc schema` prints what those derives
//! give, so the schema an editor checks a file with and the parser that reads it are one
//! description, and the field doc comments are the schema's descriptions.
//!
//! The parser reads YAML into a spanned tree and takes a field's text from any scalar (a
//! `name: 2` is the text `2`), so [`Text`] admits every scalar; the allowed values of the
//! enumerated fields are the parser's own lists (`syntax::vocabulary`).
//!
//! These are marker types: nothing holds a value of them; a field names one with
//! `#[schemars(with = "…")]`.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// The pattern of a kebab-case name (a slug, an artifact, a sensor id): what
/// the stage parser's `is_kebab_case` accepts.
pub const KEBAB_CASE_PATTERN: &str = "^[a-z][a-z0-9-]*$";

/// An inline `JsonSchema` named `$name` whose schema is `$schema`.
macro_rules! inline_schema {
    ($name:ident, $schema:expr) => {
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

pub(crate) use inline_schema;

/// A string that must be one of `values` (the parser's constant for the field).
pub fn one_of(values: &[&str]) -> Schema {
    json_schema!({ "type": "string", "enum": values })
}

/// Marker types, each with the schema it stands for.
macro_rules! marker_schemas {
    ($($(#[$doc:meta])* $name:ident => $schema:expr;)*) => {$(
        $(#[$doc])*
        pub struct $name;

        inline_schema!($name, $schema);
    )*};
}

pub(crate) use marker_schemas;

marker_schemas! {
    /// Any YAML scalar, read as its text: a string, a number or a boolean (not null).
    Text => json_schema!({ "type": ["string", "number", "boolean"] });
    /// A scalar whose text must not be blank.
    NonEmptyText => json_schema!({ "type": ["string", "number", "boolean"], "pattern": "\\S" });
    /// A kebab-case name: lowercase letters, digits and hyphens, starting with a letter.
    KebabCase => json_schema!({ "type": "string", "pattern": KEBAB_CASE_PATTERN });
    /// A whole number greater than zero, written as a plain YAML number.
    PositiveInteger => json_schema!({ "type": "integer", "minimum": 1 });
    /// A stage's `number`: the text `<digits>.<digits>`; YAML reads an unquoted `2.3` as a
    /// number, whose text the parser checks.
    StageNumber => json_schema!({
        "anyOf": [
            { "type": "string", "pattern": "^[0-9]+\\.[0-9]+$" },
            { "type": "number" }
        ]
    });
    /// A manifest's `kind`.
    SensorKind => one_of(&super::vocabulary::SENSOR_KINDS);
    /// A stage's `phase`.
    PhaseName => one_of(super::vocabulary::PHASES);
    /// A stage's `execution`.
    ExecutionName => one_of(&super::vocabulary::EXECUTIONS);
    /// A stage's `mode`.
    ModeName => one_of(&super::vocabulary::MODES);
    /// A stage's `for_each`.
    ForEachName => one_of(&super::vocabulary::FOR_EACH_VALUES);
    /// A stage's `review_class`.
    ReviewClassName => one_of(&super::vocabulary::REVIEW_CLASSES);
    /// A stage's `summary_confirmation`.
    SummaryConfirmationName => one_of(&super::vocabulary::SUMMARY_CONFIRMATIONS);
    /// A consumed artifact's `conditional_on`.
    ProjectKindName => one_of(&super::vocabulary::CONDITIONAL_ON_VALUES);
    /// `produces_kinds`: for each produced artifact, the non-empty list of unit kinds it applies
    /// to.
    ProducesKinds => json_schema!({
        "type": "object",
        "propertyNames": { "pattern": KEBAB_CASE_PATTERN },
        "additionalProperties": {
            "type": "array",
            "minItems": 1,
            "items": one_of(&super::vocabulary::UNIT_KINDS)
        }
    });
    /// A YAML mapping whose keys matter and whose values are free (a manifest's `input_schema`).
    AnyMapping => json_schema!({ "type": "object" });
}
