//! The JSON Schema of the gate report's JSON document (`aidlc schema gate-report`), for the
//! `JsonSchema` derives on the document's own types in `json.rs`: the doc comments of their
//! fields are the schema's descriptions.
//!
//! The report's own values the document embeds as they serialise (a sensor, a dead binding, a
//! finding, a budget, the unseen writes) derive their schema themselves. Here are only what no
//! type can say itself: the two values whose derived schema would have another shape than the
//! one published (a skip, a never-fired binding's cause), described by mirror types that deny
//! unknown keys, and the closed sets (results, skip reasons, severities, the format version),
//! read from the gate's own values rather than spelled again. The tests validate the renderer's
//! snapshot of the report with every case against the schema, so a key a mirror misses fails
//! them.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use strum::VariantArray as _;

use crate::compile::syntax::field_schema::{inline_schema, marker_schemas};
use crate::protocol::selection::Severity;
use crate::runtime::gate::report::{FireOnFilter, NEVER_FIRED, Outcome, SkipReason};
use crate::runtime::gate::report::{JSON_SCHEMA_VERSION, skip_reason_key};

/// A binding that did not fire somewhere it might have.
//
// A mirror of `GateSkip`: its `reason` is a `SkipReason`, whose derived schema would be a
// `oneOf` of described constants rather than the plain `enum` of `SkipReasonKey`, and
// `runtime::gate` cannot name this module's `SkipReasonKey` (the formats read the gate, not
// the other way round).
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

/// Why a blocking binding fired on nothing: `{"kind": "no-deliverable"}`,
/// `{"kind": "no-glob-match", "deliverables": n}`, `{"kind": "only-markers"}` or
/// `{"kind": "not-regular-files", "described": [...]}`.
//
// A mirror of `runtime::gate::report::UnfiredCause`: that enum is internally tagged, so its
// derived schema would be a `oneOf` of one object per kind, not this one object whose `kind`
// is an `enum` and whose other keys are optional.
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

marker_schemas! {
    SchemaVersion => json_schema!({ "const": JSON_SCHEMA_VERSION });
    ToolName => json_schema!({ "const": "aidlc" });
    FireOnName => {
        let names: Vec<&str> = FireOnFilter::VARIANTS
            .iter()
            .map(|filter| filter.name())
            .collect();
        json_schema!({ "enum": names })
    };
    UnfiredKind => json_schema!({
        "enum": ["no-deliverable", "no-glob-match", "only-markers", "not-regular-files"]
    });
    ResultName => json_schema!({
        "enum": Outcome::VARIANTS.iter().map(|outcome| outcome.as_str()).collect::<Vec<_>>()
    });
    SkipReasonKey => json_schema!({
        "enum": SkipReason::VARIANTS.iter().map(skip_reason_key).collect::<Vec<_>>()
    });
    SkippedByReason => {
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
    };
    BlockingOnly => json_schema!({ "const": Severity::Blocking.as_str() });
    NotEvaluatedOnly => json_schema!({ "const": Outcome::NotEvaluated.as_str() });
    NeverFiredOnly => json_schema!({ "const": NEVER_FIRED });
}

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
