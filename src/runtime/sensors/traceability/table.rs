//! The shape of `traceability.json`: `{stage?, unit?, upstream_ids, coverage, reverse?}`, read
//! strictly into a [`Table`]; any other shape is the reason the check fails with one finding.

use serde_json::{Map, Value};

use crate::leaves::js_text::js_trim;

/// One row of `coverage` or `reverse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) id: String,
    pub(super) status: String,
    pub(super) target: Option<String>,
}

impl Entry {
    /// The target, trimmed; empty when there is none.
    pub(super) fn trimmed_target(&self) -> &str {
        self.target.as_deref().map(js_trim).unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Table {
    pub(super) stage: Option<String>,
    pub(super) upstream_ids: Vec<String>,
    pub(super) coverage: Vec<Entry>,
    pub(super) reverse: Vec<Entry>,
}

/// The table in `body`, or the reason (in the reference's words) it is not one.
pub(super) fn parse_table(body: &str) -> Result<Table, String> {
    let value: Value =
        serde_json::from_str(body).map_err(|_| "invalid JSON in traceability file".to_owned())?;
    let Value::Object(object) = value else {
        return Err("traceability.json must contain a JSON object".to_owned());
    };
    let upstream_ids = non_empty_strings(object.get("upstream_ids"))
        .ok_or_else(|| "upstream_ids must be an array of non-empty strings".to_owned())?;
    let Some(Value::Array(coverage)) = object.get("coverage") else {
        return Err("coverage must be an array".to_owned());
    };
    let reverse = match object.get("reverse") {
        None => &[][..],
        Some(Value::Array(reverse)) => reverse.as_slice(),
        Some(_) => return Err("reverse must be an array when present".to_owned()),
    };
    let coverage = entries_of("coverage", coverage)?;
    let reverse = entries_of("reverse", reverse)?;
    let stage = optional_string(&object, "stage")?;
    optional_string(&object, "unit")?;
    Ok(Table {
        stage,
        upstream_ids,
        coverage,
        reverse,
    })
}

fn non_empty_strings(value: Option<&Value>) -> Option<Vec<String>> {
    let Some(Value::Array(items)) = value else {
        return None;
    };
    items
        .iter()
        .map(|item| non_empty_string(Some(item)).map(str::to_owned))
        .collect()
}

/// The value when it is a string that is not blank (kept untrimmed, as the reference keeps it).
fn non_empty_string(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|text| !js_trim(text).is_empty())
}

fn entries_of(field: &str, values: &[Value]) -> Result<Vec<Entry>, String> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| entry_of(field, index, value))
        .collect()
}

fn entry_of(field: &str, index: usize, value: &Value) -> Result<Entry, String> {
    let Value::Object(entry) = value else {
        return Err(format!("{field}[{index}] must be an object"));
    };
    let id = non_empty_string(entry.get("id"))
        .ok_or_else(|| format!("{field}[{index}].id must be a non-empty string"))?;
    let status = non_empty_string(entry.get("status"))
        .ok_or_else(|| format!("{field}[{index}].status must be a non-empty string"))?;
    let target = match entry.get("target") {
        None => None,
        Some(Value::String(target)) => Some(target.clone()),
        Some(_) => {
            return Err(format!(
                "{field}[{index}].target must be a string when present"
            ));
        }
    };
    Ok(Entry {
        id: id.to_owned(),
        status: status.to_owned(),
        target,
    })
}

/// A key that must be a string when present (JSON `null` is present and not a string).
fn optional_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("{key} must be a string when present")),
    }
}
