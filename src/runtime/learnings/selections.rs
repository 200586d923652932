//! The selections file: the conductor's picks, read strictly and only at the path `surface`
//! named (D44 states why).

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use super::LearningsError;

/// One pick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Learning(LearningSelection),
    Sensor(SensorSelection),
}

/// A learning to append to a practice file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningSelection {
    pub candidate_id: String,
    /// `project` or `team` as given (another value, or none, is refused before any write;
    /// a value that is not a string is kept as its JSON text).
    pub scope: Option<String>,
    pub heading: String,
    pub text: String,
    pub source: Option<String>,
}

/// A sensor to scaffold and bind to its origin stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensorSelection {
    pub candidate_id: String,
    pub origin_stage: String,
    pub fields: ManifestFields,
    pub source: Option<String>,
}

/// The manifest a sensor selection scaffolds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFields {
    pub id: String,
    pub kind: String,
    pub command: String,
    pub default_severity: String,
    pub description: String,
    pub matches: String,
    pub timeout_seconds: Option<u64>,
    pub category: Option<String>,
}

/// `{stage_slug, space, intent, selections[]}`, with `space` and `intent` pinned at surface time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectionsFile {
    pub stage_slug: String,
    pub space: String,
    pub intent: Option<String>,
    pub selections: Vec<Selection>,
}

fn malformed(detail: &str) -> LearningsError {
    LearningsError::Refused(format!("selections-json is malformed: {detail}"))
}

/// Read `given` (absolute), refusing a link anywhere on its way, then parse it strictly.
pub fn read_selections_file(given: &Utf8Path) -> Result<SelectionsFile, LearningsError> {
    let metadata = std::fs::symlink_metadata(given)
        .map_err(|_| LearningsError::Refused(format!("selections-json not found: {given}")))?;
    if metadata.file_type().is_symlink() || !metadata.is_file() {
        return Err(LearningsError::Refused(format!(
            "refusing selections-json {given}: it is a symbolic link or not a regular file"
        )));
    }
    let canonical = given
        .canonicalize_utf8()
        .map_err(|error| LearningsError::Refused(format!("selections-json {given}: {error}")))?;
    if canonical != given {
        return Err(LearningsError::Refused(format!(
            "refusing selections-json {given}: it is reached through a symbolic link ({canonical})"
        )));
    }
    let text = crate::leaves::fs_util::read_input_text(given)
        .map_err(|error| LearningsError::Refused(format!("selections-json {given}: {error}")))?;
    parse_selections(&text)
}

/// The reference's `parseSelectionsFile`, with its messages.
pub fn parse_selections(text: &str) -> Result<SelectionsFile, LearningsError> {
    let value: Value = serde_json::from_str(text).map_err(|error| malformed(&error.to_string()))?;
    let shaped = value.as_object().and_then(|object| {
        let stage_slug = object.get("stage_slug")?.as_str()?;
        Some((object, stage_slug, object.get("selections")?.as_array()?))
    });
    let Some((object, stage_slug, selections)) = shaped else {
        return Err(malformed(
            "expected { stage_slug, space, intent, selections[] }",
        ));
    };
    let Some(space) = object.get("space").and_then(Value::as_str) else {
        return Err(malformed(
            "missing or non-string space (bind it from surface's output)",
        ));
    };
    if !crate::compile::syntax::stage::is_kebab_case(space) {
        return Err(malformed(
            "space must be a lowercase slug beginning with a letter and containing only lowercase letters, digits, or hyphens",
        ));
    }
    let intent = match object.get("intent") {
        Some(Value::Null) => None,
        Some(Value::String(intent)) => {
            if intent.is_empty()
                || intent.contains(['/', '\\'])
                || intent == "."
                || intent.contains("..")
            {
                return Err(malformed(
                    "intent must be a non-empty record-directory name without path separators or \"..\"",
                ));
            }
            Some(intent.clone())
        }
        _ => return Err(malformed("intent must be a string or null")),
    };
    let selections = selections
        .iter()
        .map(read_selection)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SelectionsFile {
        stage_slug: stage_slug.to_owned(),
        space: space.to_owned(),
        intent,
        selections,
    })
}

fn string(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn read_selection(value: &Value) -> Result<Selection, LearningsError> {
    let Some(object) = value.as_object() else {
        return Err(malformed("each selection must be an object"));
    };
    let Some(candidate_id) = string(object, "candidate_id") else {
        return Err(malformed("selection missing candidate_id"));
    };
    let source = string(object, "source");
    if object.get("type").and_then(Value::as_str) == Some("sensor") {
        let (Some(origin_stage), Some(fields)) = (
            string(object, "origin_stage"),
            object.get("manifest_fields").and_then(Value::as_object),
        ) else {
            return Err(malformed(
                "sensor selection needs origin_stage + manifest_fields",
            ));
        };
        let required = |key: &str| {
            string(fields, key)
                .ok_or_else(|| malformed(&format!("manifest_fields.{key} must be a string")))
        };
        let timeout_seconds = match fields.get("timeout_seconds") {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.as_u64().filter(|seconds| *seconds > 0).ok_or_else(
                || malformed("manifest_fields.timeout_seconds must be a positive whole number"),
            )?),
        };
        let category = match fields.get("category") {
            None | Some(Value::Null) => None,
            Some(Value::String(category)) => Some(category.clone()),
            Some(_) => return Err(malformed("manifest_fields.category must be a string")),
        };
        return Ok(Selection::Sensor(SensorSelection {
            candidate_id,
            origin_stage,
            fields: ManifestFields {
                id: required("id")?,
                kind: required("kind")?,
                command: required("command")?,
                default_severity: required("default_severity")?,
                description: required("description")?,
                matches: required("matches")?,
                timeout_seconds,
                category,
            },
            source,
        }));
    }
    let (Some(heading), Some(text)) = (string(object, "heading"), string(object, "text")) else {
        return Err(malformed("learning selection needs heading + text"));
    };
    let scope = object.get("scope").map(|scope| match scope {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    });
    Ok(Selection::Learning(LearningSelection {
        candidate_id,
        scope,
        heading,
        text,
        source,
    }))
}

/// The one path the selections file may be at: the pinned record's learnings folder, in the
/// install's layout.
pub(super) fn expected_path(learnings_dir: &Utf8Path, stage_slug: &str) -> Utf8PathBuf {
    learnings_dir.join(format!("{stage_slug}-selections.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> String {
        parse_selections(text).unwrap_err().to_string()
    }

    #[test]
    fn each_validation_message_of_the_reference() {
        assert!(message("{").starts_with("selections-json is malformed: "));
        assert_eq!(
            message("[]"),
            "selections-json is malformed: expected { stage_slug, space, intent, selections[] }"
        );
        assert_eq!(
            message(r#"{"stage_slug":"s","selections":[]}"#),
            "selections-json is malformed: missing or non-string space (bind it from surface's output)"
        );
        assert!(
            message(r#"{"stage_slug":"s","space":"Bad","intent":null,"selections":[]}"#)
                .contains("lowercase slug")
        );
        assert_eq!(
            message(r#"{"stage_slug":"s","space":"default","intent":3,"selections":[]}"#),
            "selections-json is malformed: intent must be a string or null"
        );
        assert!(
            message(r#"{"stage_slug":"s","space":"default","intent":"../x","selections":[]}"#)
                .contains("without path separators")
        );
        assert_eq!(
            message(r#"{"stage_slug":"s","space":"default","intent":null,"selections":[1]}"#),
            "selections-json is malformed: each selection must be an object"
        );
        assert_eq!(
            message(r#"{"stage_slug":"s","space":"default","intent":null,"selections":[{}]}"#),
            "selections-json is malformed: selection missing candidate_id"
        );
        assert_eq!(
            message(
                r#"{"stage_slug":"s","space":"default","intent":null,"selections":[{"candidate_id":"c1","type":"sensor"}]}"#
            ),
            "selections-json is malformed: sensor selection needs origin_stage + manifest_fields"
        );
        assert_eq!(
            message(
                r#"{"stage_slug":"s","space":"default","intent":null,"selections":[{"candidate_id":"c1","type":"sensor","origin_stage":"s","manifest_fields":{"id":"x"}}]}"#
            ),
            "selections-json is malformed: manifest_fields.kind must be a string"
        );
        assert_eq!(
            message(
                r#"{"stage_slug":"s","space":"default","intent":null,"selections":[{"candidate_id":"c1","type":"learning"}]}"#
            ),
            "selections-json is malformed: learning selection needs heading + text"
        );
    }
}
