//! Completion of the values the compile checks against a known set: sensor ids in a stage's
//! `sensors:`, stage slugs in `requires_stage`, agent names, and the enum fields (`kind`,
//! `default_severity`, `fire_on` of a manifest; `phase`, `execution`, `mode` of a stage).
//!
//! While the author types, the frontmatter is often not valid YAML yet (`sensors:` then `  - `),
//! so the field under the cursor is found from the lines themselves: the cursor's line is either
//! `key: value` at the top level (a scalar, or a flow list after `[`), or an indented `- item`
//! whose field is the nearest top-level `key:` above it. Only the candidates come from the
//! database.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionTextEdit, Documentation, TextEdit,
};

use super::positions::TextPositions;
use super::server_state::{FileKind, ServerState};
use crate::compile::db::SourceFile;
use crate::compile::resolve::{SiteName, SiteRole, known_sensor_ids, name_index};
use crate::compile::syntax::frontmatter::{self, FrontmatterError};
use crate::compile::syntax::vocabulary::{EXECUTIONS, MODES, PHASES, SENSOR_KINDS};
use crate::protocol::selection::{FireOn, Severity};
use strum::VariantArray as _;

/// Where the cursor is, in terms of the frontmatter: which top-level field, and the byte range
/// of the word being typed (what a chosen item replaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldContext {
    pub key: String,
    pub word: std::ops::Range<usize>,
}

/// The completion list at a byte offset of a project file; `None` outside a frontmatter field
/// that has a known set of values.
pub fn completion(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    offset: usize,
) -> Option<CompletionList> {
    let text = state.text_of(file)?;
    let context = field_context(text, offset)?;
    let mut items = candidates(state, file, kind, &context.key);
    if items.is_empty() {
        return None;
    }
    // A chosen item replaces the word being typed with its label.
    let range = TextPositions::new(text, state.unit).range(&context.word);
    for item in &mut items {
        let edit = TextEdit::new(range, item.label.clone());
        item.text_edit = Some(CompletionTextEdit::Edit(edit));
    }
    Some(CompletionList {
        is_incomplete: false,
        items,
    })
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail,
        ..CompletionItem::default()
    }
}

/// The items of the field `key`, without their edits.
fn candidates(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    key: &str,
) -> Vec<CompletionItem> {
    match (kind, key) {
        (FileKind::Stage, "sensors") => sensor_candidates(state),
        (FileKind::Stage, "requires_stage") => stage_candidates(state, file),
        (FileKind::Stage, "lead_agent" | "support_agents" | "reviewer") => agent_candidates(state),
        // An enum field: its values, each detailed with the field's name.
        _ => enum_values(kind, key)
            .unwrap_or_default()
            .into_iter()
            .map(|value| item(value, CompletionItemKind::ENUM_MEMBER, Some(key.to_owned())))
            .collect(),
    }
}

/// The values of a frontmatter field the compile checks against a fixed set (completion's
/// candidates, and the quick fixes that add a missing one); `None` for any other field.
pub fn enum_values(kind: FileKind, key: &str) -> Option<Vec<&'static str>> {
    Some(match (kind, key) {
        (FileKind::Stage, "phase") => PHASES.to_vec(),
        (FileKind::Stage, "execution") => EXECUTIONS.to_vec(),
        (FileKind::Stage, "mode") => MODES.to_vec(),
        (FileKind::Manifest, "kind") => SENSOR_KINDS.to_vec(),
        (FileKind::Manifest, "default_severity") => Severity::VARIANTS
            .iter()
            .map(|value| value.as_str())
            .collect(),
        (FileKind::Manifest, "fire_on") => FireOn::VARIANTS
            .iter()
            .map(|value| value.as_str())
            .collect(),
        _ => return None,
    })
}

/// The ids the registry loaded: an import of any other id is an error.
fn sensor_candidates(state: &ServerState) -> Vec<CompletionItem> {
    let db = &state.db;
    let index = name_index(db);
    known_sensor_ids(db)
        .iter()
        .map(|id| {
            let manifest = index
                .get(&SiteName::Sensor(id.clone()))
                .and_then(|sites| sites.iter().find(|site| site.role == SiteRole::Declaration))
                .and_then(|site| {
                    crate::compile::parse::parsed_manifest(db, site.file)
                        .manifest
                        .as_ref()
                });
            let detail = manifest.map(|manifest| {
                format!(
                    "sensor: {}, fires on {}",
                    manifest.default_severity.as_str(),
                    manifest.fire_on.as_str()
                )
            });
            CompletionItem {
                documentation: manifest
                    .map(|manifest| Documentation::String(manifest.description.trim().to_owned())),
                ..item(id, CompletionItemKind::REFERENCE, detail)
            }
        })
        .collect()
}

/// Every slug a stage file declares, except the stage's own.
fn stage_candidates(state: &ServerState, file: SourceFile) -> Vec<CompletionItem> {
    let index = name_index(&state.db);
    index
        .iter()
        .filter_map(|(name, sites)| {
            let SiteName::Stage(slug) = name else {
                return None;
            };
            let declaration = sites
                .iter()
                .find(|site| site.role == SiteRole::Declaration)?;
            (declaration.file != file).then(|| {
                let detail = format!("stage in {}", declaration.file.path(&state.db));
                item(slug, CompletionItemKind::REFERENCE, Some(detail))
            })
        })
        .collect()
}

fn agent_candidates(state: &ServerState) -> Vec<CompletionItem> {
    crate::compile::parse::agent_roster(&state.db)
        .names
        .iter()
        .map(|(name, path)| {
            item(
                name,
                CompletionItemKind::REFERENCE,
                Some(format!("agent in {path}")),
            )
        })
        .chain(std::iter::once(item(
            "orchestrator",
            CompletionItemKind::ENUM_MEMBER,
            Some("the conductor (needs no agent file)".to_owned()),
        )))
        .collect()
}

/// The frontmatter field the cursor is in, and the word it is typing; `None` outside the
/// frontmatter, on a key, or in a nested mapping.
pub fn field_context(text: &str, offset: usize) -> Option<FieldContext> {
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let yaml = match frontmatter::split(text) {
        Ok(frontmatter) => frontmatter.yaml,
        // Still being written: everything after the opening fence is frontmatter.
        Err(FrontmatterError::MissingClosingFence) => {
            let start = text.find('\n').map_or(text.len(), |newline| newline + 1);
            start..text.len()
        }
        Err(FrontmatterError::MissingOpeningFence) => return None,
    };
    if offset < yaml.start || offset > yaml.end {
        return None;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
    let before = &text[line_start..offset];
    let word = word_around(text, offset);
    if let Some((key, value)) = top_level_key(before) {
        // `key: value` on this line: a scalar, or a flow list after `[`.
        let value_start = line_start + key.len() + 1;
        if value.contains(']') || (value.trim_start().starts_with('{')) || offset < value_start {
            return None;
        }
        return Some(FieldContext {
            key: key.to_owned(),
            word,
        });
    }
    let trimmed = before.trim_start();
    let indented = before.len() > trimmed.len();
    if !(trimmed.starts_with('-') && (indented || before.starts_with('-'))) {
        return None;
    }
    let item = trimmed.trim_start_matches('-');
    if item.contains(':') {
        // `- artifact: x`: a mapping inside a list, not a plain value.
        return None;
    }
    let key = governing_key(&text[yaml.start..line_start])?;
    Some(FieldContext {
        key: key.to_owned(),
        word,
    })
}

/// `("key", rest)` when the line so far is a top-level `key:` (no indentation).
fn top_level_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let is_key = key
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    is_key.then_some((key, rest))
}

/// The nearest top-level `key:` above the cursor's line, within the frontmatter.
fn governing_key(above: &str) -> Option<&str> {
    above
        .lines()
        .rev()
        .find(|line| {
            let first = line.chars().next();
            first.is_some_and(|c| !c.is_whitespace() && c != '-' && c != '#')
        })
        .and_then(|line| top_level_key(line).map(|(key, _)| key))
}

/// The byte range of the word around the cursor (letters, digits, `-`, `_`, `.`), possibly
/// empty.
fn word_around(text: &str, offset: usize) -> std::ops::Range<usize> {
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_word(c))
        .last()
        .map_or(offset, |(index, _)| index);
    let end = text[offset..]
        .char_indices()
        .find(|&(_, c)| !is_word(c))
        .map_or(text.len(), |(index, _)| offset + index);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context_at_bar(marked: &str) -> Option<(String, String)> {
        let offset = marked.find('|').unwrap();
        let text = marked.replacen('|', "", 1);
        field_context(&text, offset).map(|context| (context.key, text[context.word].to_owned()))
    }

    #[test]
    fn finds_the_field_of_block_items_flow_items_and_scalars() {
        let some = |key: &str, word: &str| Some((key.to_owned(), word.to_owned()));
        assert_eq!(
            context_at_bar("---\nsensors:\n  - lin|\n---\n"),
            some("sensors", "lin")
        );
        assert_eq!(
            context_at_bar("---\nsensors:\n  - a\n  - |\n---\n"),
            some("sensors", "")
        );
        assert_eq!(
            context_at_bar("---\nsensors: [a, li|nt]\n---\n"),
            some("sensors", "lint")
        );
        assert_eq!(context_at_bar("---\nmode: in|\n---\n"), some("mode", "in"));
        assert_eq!(
            context_at_bar("---\nrequires_stage:\n- x|\n"),
            some("requires_stage", "x")
        );
        assert_eq!(
            context_at_bar(
                "---\nconsumes:\n  - artifact: x\n    required: true\nsensors:\n  - |\n---\n"
            ),
            some("sensors", "")
        );
    }

    #[test]
    fn no_field_outside_frontmatter_on_keys_or_in_nested_mappings() {
        assert_eq!(
            context_at_bar("---\nmode: inline\n---\nsensors:\n  - |\n"),
            None
        );
        assert_eq!(context_at_bar("no frontmatter |\n"), None);
        assert_eq!(context_at_bar("---\nmo|de: inline\n---\n"), None);
        assert_eq!(
            context_at_bar("---\nconsumes:\n  - artifact: |\n---\n"),
            None
        );
        assert_eq!(context_at_bar("---\nsensors: [a]|\n---\n"), None);
    }
}
