//! `harness.json`'s `plugins` key: which plugins the install enables (docs/decisions.md D14).
//!
//! Absent (or no `harness.json`): every plugin is enabled. Present: a list of plugin names
//! (`aidlc` is the core). The compile marks every stage of an unselected plugin
//! `"enabled": false` (the three initialization stages excepted) and keeps only the selected
//! plugins' scopes in the grid; composition copies an unselected plugin's own files (the
//! runtime filters them out) but merges none of its contributions into other stages, which no
//! selection filter reaches.
//!
//! Read strictly, where the reference accepts any non-empty string: anything but a list of
//! distinct names (`aidlc` or kebab case) is refused with a span into the file, never read as
//! "all enabled". One reader, [`selection_of_text`], serves the compile (as a diagnostic) and
//! the plugin commands (which wrap its refusal as a plugin problem).

use std::collections::BTreeSet;
use std::ops::Range;

use crate::harness::install::json_text::{self, JsonTextError, Kind};

/// The core's name in a selection: stages and scopes that name no plugin belong to it.
pub const CORE_PLUGIN: &str = "aidlc";

/// The enabled set, or `None` when every plugin is enabled.
pub type Selection = Option<BTreeSet<String>>;

/// Why a `harness.json` text gives no selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectionError {
    pub message: String,
    /// The bytes the problem is at, when it has a place.
    pub span: Option<Range<usize>>,
    pub help: &'static str,
}

const LIST_HELP: &str =
    "write e.g. \"plugins\": [\"aidlc\", \"test-pro\"], or remove the key to enable every plugin";

/// The selection `text` (the whole of a `harness.json`) holds.
pub fn selection_of_text(text: &str) -> Result<Selection, SelectionError> {
    let root = json_text::parse(text).map_err(|error| SelectionError {
        span: match &error {
            JsonTextError::Syntax { line, column, .. } => Some(offset_of(text, *line, *column)),
            JsonTextError::DuplicateKey { .. } => None,
        },
        message: format!("harness.json is not a JSON document this engine reads: {error}"),
        help: "fix the JSON (each key once)",
    })?;
    let Some(members) = root.members() else {
        return Err(SelectionError {
            message: "harness.json must hold a JSON object".to_owned(),
            span: Some(root.span.clone()),
            help: "write an object such as {\"harnessDir\": \".claude\"}",
        });
    };
    let Some(plugins) = members.iter().find(|member| member.key == "plugins") else {
        return Ok(None);
    };
    let Kind::Array(items) = &plugins.value.kind else {
        return Err(SelectionError {
            message: "harness.json field \"plugins\" must be a list of plugin names (kebab case; `aidlc` is the core)".to_owned(),
            span: Some(plugins.value.span.clone()),
            help: LIST_HELP,
        });
    };
    let mut names = BTreeSet::new();
    for (index, item) in items.iter().enumerate() {
        let name = match &item.kind {
            Kind::String(name) if name == CORE_PLUGIN || is_kebab_name(name) => name,
            Kind::String(name) => {
                return Err(SelectionError {
                    message: format!(
                        "harness.json field \"plugins\" entry {index} (\"{name}\") is not a plugin name: plugin names are kebab case (lower-case letters, digits, single dashes), and `aidlc` is the core"
                    ),
                    span: Some(item.span.clone()),
                    help: LIST_HELP,
                });
            }
            _ => {
                return Err(SelectionError {
                    message: format!(
                        "harness.json field \"plugins\" entry {index} must be a plugin name (a string)"
                    ),
                    span: Some(item.span.clone()),
                    help: LIST_HELP,
                });
            }
        };
        if !names.insert(name.clone()) {
            return Err(SelectionError {
                message: format!(
                    "harness.json field \"plugins\" names \"{name}\" twice (entry {index})"
                ),
                span: Some(item.span.clone()),
                help: "name each plugin once",
            });
        }
    }
    Ok(Some(names))
}

/// The span of the `plugins` key's value in `text`, when it has one (for pointing at the
/// selection from a diagnostic about its consequences).
pub fn plugins_value_span(text: &str) -> Option<Range<usize>> {
    let root = json_text::parse(text).ok()?;
    root.get("plugins").map(|member| member.value.span.clone())
}

/// The byte offset of a 1-based `line`, `column` (as `serde_json` reports them), as a
/// one-byte span (empty at the end of the text).
pub fn offset_of(text: &str, line: usize, column: usize) -> Range<usize> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    at..end
}

pub fn is_enabled(selection: Option<&BTreeSet<String>>, plugin: &str) -> bool {
    selection.is_none_or(|names| names.contains(plugin))
}

/// Whether a stage of `plugin` (`None`: the core) in `phase` is enabled: the initialization
/// stages always are (bootstrap has no plugin identity), as in the reference's
/// `stageEnabledBySelection`.
pub fn is_stage_enabled(
    selection: Option<&BTreeSet<String>>,
    plugin: Option<&str>,
    phase: &str,
) -> bool {
    phase == "initialization" || is_enabled(selection, plugin.unwrap_or(CORE_PLUGIN))
}

/// `a`, `test-pro`, `x2-y`: a lower-case letter, then lower-case letters, digits and single
/// dashes, not ending with a dash.
pub fn is_kebab_name(name: &str) -> bool {
    let mut previous_dash = false;
    for (index, character) in name.chars().enumerate() {
        let ok = match character {
            'a'..='z' => true,
            '0'..='9' => index > 0,
            '-' => index > 0 && !previous_dash,
            _ => false,
        };
        if !ok {
            return false;
        }
        previous_dash = character == '-';
    }
    !name.is_empty() && !previous_dash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_entry_is_pointed_at() {
        let text = "{\n  \"plugins\": [\"aidlc\", \"Test_Pro\"]\n}\n";
        let error = selection_of_text(text).unwrap_err();
        assert_eq!(&text[error.span.unwrap()], "\"Test_Pro\"");
        assert!(error.message.contains("entry 1"), "{}", error.message);
        let text = "{\n  \"plugins\": {\"a\": 1}\n}\n";
        let error = selection_of_text(text).unwrap_err();
        assert_eq!(&text[error.span.unwrap()], "{\"a\": 1}");
        let text = "{\n  \"plugins\": [\n}\n";
        assert!(selection_of_text(text).unwrap_err().span.is_some());
    }

    #[test]
    fn initialization_stages_are_always_enabled() {
        let none: BTreeSet<String> = BTreeSet::new();
        assert!(is_stage_enabled(Some(&none), None, "initialization"));
        assert!(!is_stage_enabled(Some(&none), None, "inception"));
        assert!(!is_stage_enabled(Some(&none), Some("x"), "inception"));
        assert!(is_stage_enabled(None, Some("x"), "inception"));
    }
}
