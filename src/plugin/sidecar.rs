//! The per-plugin sidecar `<harness>/tools/data/plugin-contrib-<name>.json`: what composition
//! merged into each stage it did not ship, in the reference composer's format (its
//! `select-plugins` reads it to strip a disabled plugin's additions).
//!
//! ```json
//! {
//!   "build-and-test": {
//!     "produces": ["…"], "sensors": ["…"], "consumes": ["…"], "scopes": ["…"],
//!     "required_sections": ["…"], "required_sections_created": true
//!   }
//! }
//! ```
//!
//! Stages in the order the plugin's contributions were read, keys in that order, each list sorted
//! and holding only values actually added; a stage with nothing added has no entry, and a plugin
//! that added nothing has no file.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The lists of a stage's record, in the order the reference composer writes them.
const LISTS: [&str; 5] = [
    "produces",
    "sensors",
    "consumes",
    "scopes",
    "required_sections",
];

/// What one plugin added to one stage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageAdditions {
    /// The values added to each of the [`LISTS`], by its name.
    pub added: BTreeMap<&'static str, Vec<String>>,
    pub required_sections_created: bool,
}

/// The sidecar's file name for `plugin` (its name with anything but `\w`, `.` and `-` as `_`).
pub fn sidecar_file_name(plugin: &str) -> String {
    let key: String = plugin
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("plugin-contrib-{key}.json")
}

fn sorted_array(values: &[String]) -> Value {
    let mut values = values.to_vec();
    values.sort();
    values.dedup();
    Value::Array(values.into_iter().map(Value::String).collect())
}

/// The sidecar's JSON value, or `None` when nothing was added.
pub fn sidecar_value(stages: &[(String, StageAdditions)]) -> Option<Value> {
    let mut object = Map::new();
    for (stage, additions) in stages {
        if additions.added.values().all(Vec::is_empty) {
            continue;
        }
        let mut record = Map::new();
        for key in LISTS {
            if let Some(values) = additions.added.get(key).filter(|values| !values.is_empty()) {
                record.insert(key.to_owned(), sorted_array(values));
            }
        }
        if additions.required_sections_created {
            record.insert("required_sections_created".to_owned(), Value::Bool(true));
        }
        object.insert(stage.clone(), Value::Object(record));
    }
    (!object.is_empty()).then_some(Value::Object(object))
}

/// The bytes to write for `value`, keeping `existing` when it already holds the same JSON in
/// another key order (the order follows a folder listing, which differs between machines).
pub fn sidecar_bytes(value: &Value, existing: Option<&[u8]>) -> Vec<u8> {
    if let Some(existing) = existing
        && let Ok(parsed) = serde_json::from_slice::<Value>(existing)
        // `Value`'s equality ignores the key order of objects.
        && parsed == *value
    {
        return existing.to_vec();
    }
    format!("{}\n", crate::leaves::js_json::pretty_json(value)).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sidecar_lists_sorted_additions_per_stage_in_reading_order() {
        let value = sidecar_value(&[
            (
                "performance-validation".into(),
                StageAdditions {
                    added: BTreeMap::from([
                        ("produces", vec!["b".into(), "a".into()]),
                        ("required_sections", vec!["Load".into()]),
                    ]),
                    required_sections_created: true,
                },
            ),
            ("empty".into(), StageAdditions::default()),
            (
                "build-and-test".into(),
                StageAdditions {
                    added: BTreeMap::from([("sensors", vec!["s".into()])]),
                    ..StageAdditions::default()
                },
            ),
        ])
        .unwrap();
        let text = String::from_utf8(sidecar_bytes(&value, None)).unwrap();
        assert_eq!(
            text,
            "{\n  \"performance-validation\": {\n    \"produces\": [\n      \"a\",\n      \"b\"\n    ],\n    \"required_sections\": [\n      \"Load\"\n    ],\n    \"required_sections_created\": true\n  },\n  \"build-and-test\": {\n    \"sensors\": [\n      \"s\"\n    ]\n  }\n}\n"
        );
        let reordered = "{\"build-and-test\": {\"sensors\": [\"s\"]}, \"performance-validation\": {\"required_sections_created\": true, \"produces\": [\"a\", \"b\"], \"required_sections\": [\"Load\"]}}";
        assert_eq!(
            sidecar_bytes(&value, Some(reordered.as_bytes())),
            reordered.as_bytes()
        );
        assert_eq!(
            sidecar_value(&[("x".into(), StageAdditions::default())]),
            None
        );
        assert_eq!(
            sidecar_file_name("test-pro"),
            "plugin-contrib-test-pro.json"
        );
    }
}
