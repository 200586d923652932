//! The allowed values of the enumerated frontmatter fields: the parser checks a value against
//! these lists (`syntax::manifest`, `syntax::stage`) and `aidlc schema` writes them into the JSON
//! Schemas (`syntax::field_schema`), so an editor and the compile accept the same values.
//!
//! Must not: import the parser; both readers depend on this file, not on each other.

use crate::protocol::stage_node::Phase;

/// The kinds of sensor this release runs (others are reserved for later releases).
pub const SENSOR_KINDS: [&str; 1] = ["deterministic"];

/// The phases, in the framework's order: the graph's own ([`Phase`]).
pub const PHASES: &[&str] = <Phase as strum::VariantNames>::VARIANTS;
pub const EXECUTIONS: [&str; 2] = ["ALWAYS", "CONDITIONAL"];
pub const MODES: [&str; 5] = ["inline", "subagent", "pipeline", "mob", "agent-team"];
/// The one `for_each` value the runtime knows: gate dispatch places a per-unit stage's outputs
/// under the unit folders, and refuses a graph with any other value (D4), so the compile refuses
/// it first, where the author can fix it (the reference accepts any string).
pub const FOR_EACH_VALUES: [&str; 1] = ["unit-of-work"];
/// The kinds of unit: a stage's `produces_kinds`, and a unit's `kind` in the Bolt DAG block.
pub const UNIT_KINDS: [&str; 5] = ["service", "spec", "ui", "packaging", "library"];
pub const REVIEW_CLASSES: [&str; 2] = ["adversarial", "advisory"];
pub const SUMMARY_CONFIRMATIONS: [&str; 2] = ["required", "if-present"];
pub const CONDITIONAL_ON_VALUES: [&str; 2] = ["brownfield", "greenfield"];
