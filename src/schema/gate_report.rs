//! The shape of the document `aidlc gate check --format json` prints (`report::json`),
//! as types for the schema derive.
//!
//! The renderer builds its JSON from the report directly, so these types describe it rather
//! than produce it: every object here denies unknown keys, and the tests validate the
//! renderer's own snapshot of the report with every case (and real `gate check` runs) against
//! the schema, so a key the renderer adds, drops or renames fails them until this file says
//! the same. The closed sets (results, skip reasons, severities, the format version) are read
//! from the gate's own values, not spelled again here.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use strum::VariantArray as _;

use crate::protocol::selection::Severity;
use crate::runtime::gate::report::{FireOnFilter, NEVER_FIRED, Outcome, SkipReason};
use crate::runtime::gate::report::{JSON_SCHEMA_VERSION, skip_reason_key};

/// The report of one `aidlc gate check --format json` run.
#[derive(JsonSchema)]
#[schemars(title = "aidlc gate check report", deny_unknown_fields)]
pub struct GateReportDocument {
    /// The version of this document's shape; it changes when a key changes meaning or goes
    /// away (new keys may appear within a version).
    #[schemars(with = "SchemaVersion")]
    pub schema_version: u64,
    /// The program that wrote the report.
    pub tool: Tool,
    /// The intent records checked (their folder names).
    pub intents: Vec<String>,
    /// The whole run's plan, which every shard of it shares (`aidlc gate merge` joins only
    /// shards of one plan).
    pub plan: Plan,
    /// The share of the work this run did with `--shard K/N`; null for the whole run.
    pub shard: Option<Shard>,
    /// The project folder relative to the repository root (empty when they are the same).
    pub project_path: String,
    /// Whether the run wrote audit rows and detail files (false with `--no-record`).
    pub recorded: bool,
    /// The denominator: what ran on what, and what did not and why.
    pub counts: Counts,
    /// The run's wall-clock time in milliseconds.
    pub duration_ms: f64,
    /// What the manifest of each sensor the report names says, by sensor id.
    pub sensors: std::collections::BTreeMap<String, SensorInfo>,
    /// Every sensor fired on every deliverable, in plan order.
    pub fires: Vec<Fire>,
    /// Every binding that did not fire somewhere it might have, with why.
    pub skips: Vec<Skip>,
    /// Bindings whose glob can never match the outputs their stage declares.
    pub dead_bindings: Vec<DeadBinding>,
    /// Blocking bindings that fired on no deliverable of a stage the workflow has reached;
    /// each counts as a blocking non-evaluation.
    pub unfired_bindings: Vec<UnfiredBinding>,
    /// Why the run evaluated nothing (it then exits 2 unless `--allow-empty`); null when
    /// something was evaluated.
    pub nothing_checked: Option<NothingChecked>,
    /// The active stage's deliverables changed after the write hook last ran on the machine
    /// that ran the check (a notice, never a failure); left out when there are none.
    pub unseen_writes: Option<UnseenWrites>,
}

/// The program that wrote the report.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Tool {
    /// Always `aidlc`.
    #[schemars(with = "ToolName")]
    pub name: (),
    /// Its version.
    pub version: String,
}

/// The identity of a run's plan.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Plan {
    /// BLAKE3 (hex) of everything that decides the plan: the intents, the selection, every
    /// planned unit in order, and the skips, dead and never-fired bindings.
    pub id: String,
    /// The number of fires of the whole plan (all shards together).
    pub size: u64,
    /// The `--fire-on` selection.
    #[schemars(with = "FireOnName")]
    pub fire_on: String,
    /// The `--stage` selection (every stage of the graph when empty).
    pub stages: Vec<String>,
    /// Bindings the selection took.
    pub bindings_selected: u64,
    /// Bindings the selection left out.
    pub bindings_not_selected: u64,
    /// Whether the Sensors switch was off, and where: `{"environment": true}` or
    /// `{"state": [intents]}`; null when it was on.
    pub sensors_off: Option<SensorsOff>,
}

/// Where the Sensors switch was off.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SensorsOff {
    /// `AIDLC_DISABLE_SENSORS=1`.
    pub environment: Option<bool>,
    /// The intents whose state file turned sensors off.
    pub state: Option<Vec<String>>,
}

/// What a sensor's manifest says.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SensorInfo {
    /// The manifest's `description`; null when the manifest could not be read.
    pub description: Option<String>,
    /// The manifest's path as the graph recorded it.
    pub manifest_path: Option<String>,
}

/// `--shard K/N`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Shard {
    /// K, from 1.
    pub index: u64,
    /// N.
    pub count: u64,
}

/// The figures every format shows.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Counts {
    /// Stages with at least one selected binding.
    pub stages_checked: u64,
    /// Declared deliverables found on disk.
    pub deliverables_found: u64,
    /// Distinct sensors among the fires.
    pub sensors: u64,
    /// Distinct files fired on.
    pub files: u64,
    /// Fires run.
    pub fires: u64,
    /// Fires that passed.
    pub passed: u64,
    /// Fires that failed with findings.
    pub failed: u64,
    /// Failed fires of blocking sensors.
    pub blocking_failed: u64,
    /// Fires that evaluated nothing, plus blocking bindings that never fired.
    pub not_evaluated: u64,
    /// The blocking ones among `not_evaluated`.
    pub blocking_not_evaluated: u64,
    /// Blocking bindings that never fired.
    pub never_fired: u64,
    /// Skips.
    pub skipped: u64,
    /// Skips by reason; every reason is present, with 0 when it did not occur.
    #[schemars(with = "SkippedByReason")]
    pub skipped_by_reason: (),
    /// Dead bindings.
    pub dead_bindings: u64,
}

/// One sensor fired on one deliverable.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Fire {
    /// The fire's position in the whole plan (all shards), from 0.
    pub plan_index: u64,
    /// The stage's slug.
    pub stage: String,
    /// The sensor's id.
    pub sensor_id: String,
    /// The binding's severity.
    pub severity: Severity,
    /// The file fired on, project-relative with `/` separators.
    pub deliverable: String,
    /// How the fire ended; only `passed` passed.
    #[schemars(with = "ResultName")]
    pub result: String,
    /// Why a `not-evaluated` fire evaluated nothing (`tool-unavailable`, `script-error: …`,
    /// `artifact-changed`, a budget override); null otherwise.
    pub note: Option<String>,
    /// The cap and the time observed, for a fire stopped at its budget; null otherwise.
    pub budget: Option<Budget>,
    /// The findings the sensor counted (0 unless failed).
    pub findings_count: u64,
    /// The detail file of a failure, project-relative; null when passed or with `--no-record`.
    pub detail_path: Option<String>,
    /// The audit fire id (8 hex digits); null with `--no-record`.
    pub fire_id: Option<String>,
    /// How long the fire took, in milliseconds.
    pub duration_ms: f64,
    /// The last lines the worker wrote on stderr; null when it wrote nothing.
    pub stderr_tail: Option<String>,
    /// Every finding the sensor reported, each with its own message and location.
    pub findings: Vec<Finding>,
    /// The plugin of the stage that fired it (the graph node's `plugin`); absent on a core
    /// stage's fire.
    pub plugin: Option<String>,
}

/// A fire stopped at its budget.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Budget {
    /// The cap, in seconds.
    pub cap_seconds: u64,
    /// The time observed, in whole seconds rounded up.
    pub observed_seconds: u64,
}

/// One finding, anchored to its file.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Finding {
    /// Project-relative, `/` separators.
    pub file: String,
    /// 1-based line, when the sensor knows it.
    pub line: Option<u64>,
    /// 1-based column, when the sensor knows it.
    pub column: Option<u64>,
    /// The rule id (an eslint rule, `missing-heading`, `unreferenced-artifact`, …).
    pub rule: Option<String>,
    /// What is wrong.
    pub message: String,
    /// 1-based last line, when the finding spans lines.
    pub end_line: Option<u64>,
    /// 1-based last column, when the sensor knows it.
    pub end_column: Option<u64>,
    /// How to fix it, when the sensor knows.
    pub help: Option<String>,
}

/// A binding that did not fire somewhere it might have.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Skip {
    /// The stage's slug.
    pub stage: String,
    /// The sensor's id.
    pub sensor_id: String,
    /// The deliverable, project-relative; null when the skip concerns the whole stage.
    pub deliverable: Option<String>,
    /// Why it did not fire.
    #[schemars(with = "SkipReasonKey")]
    pub reason: String,
}

/// A binding whose glob can never match the stage's declared outputs.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DeadBinding {
    /// The stage's slug.
    pub stage: String,
    /// The sensor's id.
    pub sensor_id: String,
    /// The sensor's `matches` glob.
    pub pattern: String,
}

/// A blocking binding that fired on nothing in a stage the workflow has reached.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnfiredBinding {
    /// The stage's slug.
    pub stage: String,
    /// The sensor's id.
    pub sensor_id: String,
    /// The intent record's folder name.
    pub intent: String,
    /// Always `blocking`: only blocking bindings are reported as never fired.
    #[schemars(with = "BlockingOnly")]
    pub severity: (),
    /// Always `not-evaluated`.
    #[schemars(with = "NotEvaluatedOnly")]
    pub result: (),
    /// Always `never-fired`.
    #[schemars(with = "NeverFiredOnly")]
    pub note: (),
    /// The sensor's `matches` glob; null when it has none.
    pub pattern: Option<String>,
    /// The stage's declared output file names.
    pub declared_outputs: Vec<String>,
    /// The manifest's path as the graph recorded it.
    pub manifest_path: String,
    /// Why it fired on nothing, for machines.
    pub cause: UnfiredCause,
    /// The sentence every format shows: what did not happen and why.
    pub message: String,
    /// The plugin of the stage (the graph node's `plugin`); absent on a core stage's binding.
    pub plugin: Option<String>,
}

/// Why a blocking binding fired on nothing: `{"kind": "no-deliverable"}`,
/// `{"kind": "no-glob-match", "deliverables": n}`, `{"kind": "only-markers"}` or
/// `{"kind": "not-regular-files", "described": [...]}`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnfiredCause {
    /// Which cause.
    #[schemars(with = "UnfiredKind")]
    pub kind: String,
    /// With `no-glob-match`: how many deliverables the glob matched none of.
    pub deliverables: Option<u64>,
    /// With `not-regular-files`: each path and what it is.
    pub described: Option<Vec<String>>,
}

/// Why a run evaluated nothing.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NothingChecked {
    /// Why, in a sentence.
    pub reason: String,
    /// What to do about it.
    pub help: String,
}

/// Deliverables the write hook never saw.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnseenWrites {
    /// The active stage.
    pub stage: String,
    /// The deliverables, project-relative.
    pub files: Vec<String>,
    /// Which files, since when, and the two fixes, in a sentence.
    pub message: String,
}

macro_rules! schema_marker {
    ($name:ident, $schema:expr) => {
        struct $name;

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

schema_marker!(
    SchemaVersion,
    json_schema!({ "const": JSON_SCHEMA_VERSION })
);
schema_marker!(ToolName, json_schema!({ "const": "aidlc" }));
schema_marker!(FireOnName, {
    let names =
        [FireOnFilter::Gate, FireOnFilter::Write, FireOnFilter::All].map(FireOnFilter::name);
    json_schema!({ "enum": names })
});
schema_marker!(
    UnfiredKind,
    json_schema!({
        "enum": ["no-deliverable", "no-glob-match", "only-markers", "not-regular-files"]
    })
);
schema_marker!(
    ResultName,
    json_schema!({
        "enum": Outcome::VARIANTS.iter().map(|outcome| outcome.as_str()).collect::<Vec<_>>()
    })
);
schema_marker!(
    SkipReasonKey,
    json_schema!({
        "enum": SkipReason::VARIANTS.iter().map(skip_reason_key).collect::<Vec<_>>()
    })
);
schema_marker!(SkippedByReason, {
    let keys: Vec<&str> = SkipReason::VARIANTS.iter().map(skip_reason_key).collect();
    let properties: serde_json::Map<String, serde_json::Value> = keys
        .iter()
        .map(|key| {
            (
                (*key).to_owned(),
                serde_json::json!({ "type": "integer", "minimum": 0 }),
            )
        })
        .collect();
    json_schema!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false
    })
});
schema_marker!(
    BlockingOnly,
    json_schema!({ "const": Severity::Blocking.as_str() })
);
schema_marker!(
    NotEvaluatedOnly,
    json_schema!({ "const": Outcome::NotEvaluated.as_str() })
);
schema_marker!(NeverFiredOnly, json_schema!({ "const": NEVER_FIRED }));

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use serde_json::Value;

    use crate::schema::{SchemaKind, schema_of};

    fn validator() -> jsonschema::Validator {
        jsonschema::draft202012::new(&schema_of(SchemaKind::GateReport).to_value())
            .expect("a valid schema")
    }

    /// The JSON body of an insta snapshot file (after its `---` header).
    fn snapshot_body(relative: &str) -> Value {
        let path = format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let body = text.splitn(3, "---\n").nth(2).expect("an insta header");
        serde_json::from_str(body).expect("a JSON snapshot")
    }

    /// The renderer's snapshot of the report with every case (every result, skip reason, a
    /// dead and an unfired binding, a shard) is valid: the schema says what the renderer writes.
    #[test]
    fn the_json_renderers_snapshot_of_every_case_validates() {
        let document = snapshot_body("src/report/snapshots/aidlc__report__json__tests__json.snap");
        let errors: Vec<String> = validator()
            .iter_errors(&document)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        for key in ["fires", "skips", "dead_bindings", "unfired_bindings"] {
            assert!(
                document[key]
                    .as_array()
                    .is_some_and(|items| !items.is_empty()),
                "the snapshot lost its {key}: the test would prove less"
            );
        }
    }

    #[test]
    fn a_key_the_schema_does_not_know_or_a_wrong_value_is_refused() {
        let document = snapshot_body("src/report/snapshots/aidlc__report__json__tests__json.snap");
        let mutated = |what: &'static str, mutate: &dyn Fn(&mut Value)| {
            let mut copy = document.clone();
            mutate(&mut copy);
            (what, copy)
        };
        let cases = [
            mutated("an extra top-level key", &|d| {
                d["extra"] = Value::Bool(true);
            }),
            mutated("an extra fire key", &|d| {
                d["fires"][0]["extra"] = Value::Null;
            }),
            mutated("an unknown result", &|d| {
                d["fires"][0]["result"] = "green".into();
            }),
            mutated("an unknown skip reason", &|d| {
                d["skips"][0]["reason"] = "bored".into();
            }),
            mutated("another version", &|d| {
                d["schema_version"] = 99.into();
            }),
            mutated("a missing count", &|d| {
                d["counts"].as_object_mut().unwrap().remove("passed");
            }),
        ];
        let validator = validator();
        for (what, case) in cases {
            assert!(!validator.is_valid(&case), "{what} was accepted");
        }
    }
}
