//! Structural set-union into a stage's frontmatter text.
//!
//! A contribution's `adds` are merged into the target stage's source as the reference composer
//! writes them, so both produce the same bytes: a block list (`field:` then `  - value` lines)
//! gets the new values appended after its last item; an empty flow list (`field: []`) becomes a
//! block; `consumes` entries are written `  - artifact: x` / `    required: false`;
//! `required_sections` values are double-quoted. Values already present are not added again,
//! and the values actually added are returned (the sidecar records exactly those), with the
//! range of the text the merge wrote (the composition records it as the contribution's text).
//!
//! Where the reference composer silently drops an addition (a field written another way, such
//! as `sensors: [a, b]`), this module refuses with the reason; a field the stage lacks is
//! created just before the closing `---`, as the reference does for `required_sections`.
//! Only the frontmatter is edited: the body is never matched.

use crate::plugin::contribution::ConsumeEntry;
use std::fmt::Write as _;
use std::ops::Range;

/// What one merge did to a stage's text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// The values added, in order (the sidecar records exactly those).
    pub added: Vec<String>,
    /// Whether the field was created (the sidecar's `required_sections_created`).
    pub created: bool,
    /// Additions naming an artifact the stage already consumes with another `required`.
    pub kept: Vec<KeptConsume>,
    /// The bytes of the new text the merge wrote; empty when it wrote nothing.
    pub written: Range<usize>,
}

impl Merged {
    fn of(added: Vec<String>, created: bool, at: usize, written: &str) -> Self {
        Self {
            added,
            created,
            kept: Vec::new(),
            written: at..at + written.len(),
        }
    }
}

/// The offset of the closing `---` line of `text`'s frontmatter (the first `\n---` followed by
/// a line break or the end), when `text` opens with `---\n`.
pub fn closing_fence(text: &str) -> Option<usize> {
    if !text.starts_with("---\n") {
        return None;
    }
    let mut from = 3;
    while let Some(found) = text[from..].find("\n---") {
        let fence = from + found + 1;
        let after = &text[fence + 3..];
        if after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n") {
            return Some(fence);
        }
        from = fence;
    }
    None
}

/// The frontmatter lines as (start, end without `\n`) offsets, between the fences.
fn frontmatter_lines(text: &str, fence: usize) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 4;
    while start < fence {
        let end = text[start..fence].find('\n').map_or(fence, |i| start + i);
        lines.push((start, end));
        start = end + 1;
    }
    lines
}

/// How a top-level field is written.
enum FieldForm {
    Absent,
    /// `field: []` (the line's range, without its `\n`).
    EmptyFlow(usize, usize),
    /// `field:` on its own line; the items are the following lines with the given prefix.
    Block {
        after_items: usize,
        items: Vec<String>,
    },
    /// Anything else (a flow list with items, a scalar, items indented another way).
    Other,
}

fn is_empty_flow(rest: &str) -> bool {
    let rest = rest.trim_matches([' ', '\t']);
    rest.strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .is_some_and(|inner| inner.trim_matches([' ', '\t']).is_empty())
}

fn field_form(
    text: &str,
    fence: usize,
    field: &str,
    item_prefix: &str,
    continuation: bool,
) -> FieldForm {
    let lines = frontmatter_lines(text, fence);
    let key = format!("{field}:");
    let Some(index) = lines
        .iter()
        .position(|(start, end)| text[*start..*end].starts_with(&key))
    else {
        return FieldForm::Absent;
    };
    let (start, end) = lines[index];
    let rest = &text[start + key.len()..end];
    if is_empty_flow(rest) {
        return FieldForm::EmptyFlow(start, end);
    }
    if !rest.is_empty() {
        return FieldForm::Other;
    }
    let mut after_items = end + 1;
    let mut items = Vec::new();
    for (item_start, item_end) in &lines[index + 1..] {
        let line = &text[*item_start..*item_end];
        if let Some(item) = line.strip_prefix(item_prefix)
            && !item.is_empty()
        {
            items.push(item.to_owned());
        } else if continuation && line.starts_with("    ") && !items.is_empty() {
            if let Some(last) = items.last_mut() {
                last.push('\n');
                last.push_str(line);
            }
        } else if line.starts_with(' ') || line.starts_with('\t') {
            return FieldForm::Other;
        } else {
            break;
        }
        after_items = item_end + 1;
    }
    FieldForm::Block { after_items, items }
}

/// A YAML scalar as the reference composer's `yamlScalarValue` reads a list item: a double- or
/// single-quoted string unquoted, a plain one without a trailing ` # comment`.
pub fn scalar_value(raw: &str) -> Option<String> {
    let value = raw.trim();
    if let Some(inner) = quoted(value, '"') {
        return Some(
            serde_json::from_str::<String>(&format!("\"{inner}\""))
                .unwrap_or_else(|_| inner.to_owned()),
        );
    }
    if let Some(inner) = quoted(value, '\'') {
        return Some(inner.replace("''", "'"));
    }
    let bare = match value.find(" #").or_else(|| value.find("\t#")) {
        Some(at) => value[..at].trim(),
        None => value,
    };
    (!bare.is_empty()).then(|| bare.to_owned())
}

/// The inside of `value` when it is one quoted string (optionally followed by a comment).
fn quoted(value: &str, quote: char) -> Option<&str> {
    let rest = value.strip_prefix(quote)?;
    // `escaped`: the previous character was a `\` inside double quotes, or the first of a
    // doubled `''` inside single quotes; either way this character is part of the text.
    let mut escaped = false;
    for (index, character) in rest.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        if quote == '"' && character == '\\' {
            escaped = true;
            continue;
        }
        if character == quote {
            if quote == '\'' && rest[index + 1..].starts_with('\'') {
                escaped = true;
                continue;
            }
            let after = rest[index + 1..].trim();
            return (after.is_empty() || after.starts_with('#')).then(|| &rest[..index]);
        }
    }
    None
}

/// The reason a field cannot be extended.
fn other_form(field: &str) -> String {
    format!(
        "the stage writes `{field}:` in a form that cannot be extended (a flow list with items, a scalar, or items not indented `  - `); write it as a block list with one `  - value` line per item"
    )
}

/// Set-union `items` into the block list `field` (produces, sensors, scopes).
pub fn merge_names(text: &mut String, field: &str, items: &[String]) -> Result<Merged, String> {
    let mut wanted: Vec<(String, String)> = Vec::new();
    for item in items {
        if !wanted.iter().any(|(name, _)| name == item) {
            wanted.push((item.clone(), item.clone()));
        }
    }
    merge_list(text, field, wanted, false, scalar_value).map(|(merged, _)| merged)
}

/// Set-union `wanted` (each value's name and its rendering) into the block list `field`: a
/// value whose name `read` finds among the field's items is not added again, the others are
/// written `  - <rendering>` (`continuation`: an item goes on over the `    ` lines after it).
/// Returns the merge and the field's existing items.
fn merge_list(
    text: &mut String,
    field: &str,
    wanted: Vec<(String, String)>,
    continuation: bool,
    read: impl Fn(&str) -> Option<String>,
) -> Result<(Merged, Vec<String>), String> {
    if wanted.is_empty() {
        return Ok((Merged::default(), Vec::new()));
    }
    let fence = closing_fence(text).ok_or("the stage has no frontmatter block")?;
    let render = |values: &[(String, String)]| -> String {
        values.iter().fold(String::new(), |mut out, (_, rendered)| {
            let _ = writeln!(out, "  - {rendered}");
            out
        })
    };
    let names = |values: Vec<(String, String)>| values.into_iter().map(|(name, _)| name).collect();
    match field_form(text, fence, field, "  - ", continuation) {
        FieldForm::EmptyFlow(start, end) => {
            let block = format!("{field}:\n{}", render(&wanted));
            let block = block.trim_end_matches('\n');
            text.replace_range(start..end, block);
            Ok((Merged::of(names(wanted), false, start, block), Vec::new()))
        }
        FieldForm::Block { after_items, items } => {
            let existing: Vec<String> = items.iter().filter_map(|item| read(item)).collect();
            let new: Vec<(String, String)> = wanted
                .into_iter()
                .filter(|(name, _)| !existing.contains(name))
                .collect();
            let rendered = render(&new);
            text.insert_str(after_items, &rendered);
            Ok((Merged::of(names(new), false, after_items, &rendered), items))
        }
        FieldForm::Absent => {
            let block = format!("{field}:\n{}", render(&wanted));
            text.insert_str(fence, &block);
            Ok((Merged::of(names(wanted), true, fence, &block), Vec::new()))
        }
        FieldForm::Other => Err(other_form(field)),
    }
}

/// A `consumes` entry as its item is written after `  - `.
fn render_consume(entry: &ConsumeEntry) -> String {
    let mut text = format!(
        "artifact: {}\n    required: {}",
        entry.artifact, entry.required
    );
    if let Some(condition) = &entry.conditional_on {
        let _ = write!(text, "\n    conditional_on: {condition}");
    }
    text
}

/// The artifact an existing `consumes` entry names (`- artifact: x` or a later `artifact:` line).
fn consumed_artifact(entry: &str) -> Option<String> {
    entry.lines().find_map(|line| {
        let line = line.trim_start().trim_start_matches("- ");
        let value = line.strip_prefix("artifact:")?;
        scalar_value(value)
    })
}

/// What an existing `consumes` entry says about `required` (true when it does not say).
fn consumed_required(entry: &str) -> bool {
    !entry.lines().any(|line| {
        line.trim_start()
            .trim_start_matches("- ")
            .strip_prefix("required:")
            .is_some_and(|value| value.trim() == "false")
    })
}

/// An addition that names an artifact the stage already consumes with another `required`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptConsume {
    pub artifact: String,
    pub stage_required: bool,
}

/// Set-union `entries` into `consumes` by artifact. `kept` names the artifacts the stage
/// already consumes with a different `required` (kept as the stage has them: a contribution
/// never relaxes or tightens an existing edge).
pub fn merge_consumes(text: &mut String, entries: &[ConsumeEntry]) -> Result<Merged, String> {
    let wanted = entries
        .iter()
        .map(|entry| (entry.artifact.clone(), render_consume(entry)))
        .collect();
    let (merged, items) = merge_list(text, "consumes", wanted, true, consumed_artifact)?;
    let kept = entries
        .iter()
        .filter_map(|entry| {
            let item = items
                .iter()
                .find(|item| consumed_artifact(item).as_ref() == Some(&entry.artifact))?;
            let stage_required = consumed_required(item);
            (stage_required != entry.required).then(|| KeptConsume {
                artifact: entry.artifact.clone(),
                stage_required,
            })
        })
        .collect();
    Ok(Merged { kept, ..merged })
}

/// A section title as a double-quoted YAML scalar (JSON escaping is valid YAML).
fn quote_section(section: &str) -> String {
    if section.contains(['"', '\\']) || section.chars().any(char::is_control) {
        serde_json::to_string(section).unwrap_or_else(|_| format!("\"{section}\""))
    } else {
        format!("\"{section}\"")
    }
}

fn unquote_section(item: &str) -> String {
    let item = item.trim_end();
    ['"', '\'']
        .into_iter()
        .find_map(|quote| item.strip_prefix(quote)?.strip_suffix(quote))
        .unwrap_or(item)
        .to_owned()
}

pub fn merge_required_sections(text: &mut String, sections: &[String]) -> Result<Merged, String> {
    let wanted = sections
        .iter()
        .map(|section| (section.clone(), quote_section(section)))
        .collect();
    merge_list(text, "required_sections", wanted, false, |item| {
        Some(unquote_section(item))
    })
    .map(|(merged, _)| merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGE: &str = "---\nslug: s\nproduces:\n  - a\n  - \"b\" # kept\nconsumes:\n  - artifact: x\n    required: true\n    conditional_on: brownfield\nsensors: []\nscopes:\n  - feature\n---\n\n# s\n\nproduces: []\n";

    #[test]
    fn a_block_list_gets_new_values_after_its_last_item() {
        let mut text = STAGE.to_owned();
        let merged =
            merge_names(&mut text, "produces", &["b".into(), "c".into(), "c".into()]).unwrap();
        assert_eq!(merged.added, ["c"]);
        assert_eq!(&text[merged.written], "  - c\n");
        assert!(
            text.contains("  - \"b\" # kept\n  - c\nconsumes:"),
            "{text}"
        );
        assert!(text.ends_with("produces: []\n"), "the body is not edited");
    }

    #[test]
    fn an_empty_flow_list_becomes_a_block_and_an_absent_field_is_created() {
        let mut text = STAGE.to_owned();
        let merged = merge_names(&mut text, "sensors", &["s1".into(), "s2".into()]).unwrap();
        assert_eq!(merged.added, ["s1", "s2"]);
        assert_eq!(&text[merged.written], "sensors:\n  - s1\n  - s2");
        assert!(text.contains("sensors:\n  - s1\n  - s2\nscopes:"), "{text}");
        let merged =
            merge_required_sections(&mut text, &["Branch Coverage".into(), "Say \"Hi\"".into()])
                .unwrap();
        assert!(merged.created);
        assert_eq!(merged.added.len(), 2);
        assert!(text[merged.written].starts_with("required_sections:\n"));
        assert!(text.contains("  - feature\nrequired_sections:\n  - \"Branch Coverage\"\n  - \"Say \\\"Hi\\\"\"\n---\n"), "{text}");
        let again = merge_required_sections(&mut text, &["Branch Coverage".into()]).unwrap();
        assert!(again.added.is_empty() && !again.created && again.written.is_empty());
    }

    #[test]
    fn consumes_entries_are_appended_after_the_whole_block() {
        let mut text = STAGE.to_owned();
        let entries = [
            ConsumeEntry {
                artifact: "x".into(),
                required: false,
                conditional_on: None,
            },
            ConsumeEntry {
                artifact: "y".into(),
                required: false,
                conditional_on: None,
            },
        ];
        let merged = merge_consumes(&mut text, &entries).unwrap();
        assert_eq!(merged.added, ["y"]);
        assert_eq!(
            &text[merged.written],
            "  - artifact: y\n    required: false\n"
        );
        assert_eq!(
            merged.kept,
            [KeptConsume {
                artifact: "x".into(),
                stage_required: true
            }]
        );
        assert!(
            text.contains(
                "    conditional_on: brownfield\n  - artifact: y\n    required: false\nsensors:"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_field_written_another_way_is_refused() {
        let mut text = "---\nsensors: [a, b]\n---\n".to_owned();
        assert!(merge_names(&mut text, "sensors", &["c".into()]).is_err());
        let mut text = "---\nsensors:\n    - a\n---\n".to_owned();
        assert!(merge_names(&mut text, "sensors", &["c".into()]).is_err());
    }

    #[test]
    fn scalars_are_read_as_the_reference_reads_them() {
        assert_eq!(scalar_value("\"a\\\"b\" # c").as_deref(), Some("a\"b"));
        assert_eq!(scalar_value("'it''s'").as_deref(), Some("it's"));
        assert_eq!(scalar_value("plain # note").as_deref(), Some("plain"));
        assert_eq!(scalar_value("  ").as_deref(), None);
    }
}
