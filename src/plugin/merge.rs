//! Structural set-union into a stage's frontmatter text.
//!
//! A contribution's `adds` are merged into the target stage's source as the reference composer
//! writes them, so both produce the same bytes: a block list (`field:` then `  - value` lines)
//! gets the new values appended after its last item; an empty flow list (`field: []`) becomes a
//! block; `consumes` entries are written `  - artifact: x` / `    required: false`;
//! `required_sections` values are double-quoted. Values already present are not added again,
//! and the values actually added are returned (the sidecar records exactly those).
//!
//! Where the reference composer silently drops an addition (a field written another way, such
//! as `sensors: [a, b]`), this module refuses with the reason; a field the stage lacks is
//! created just before the closing `---`, as the reference does for `required_sections`.
//! Only the frontmatter is edited: the body is never matched.

use crate::plugin::contribution::ConsumeEntry;
use std::fmt::Write as _;

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

/// Set-union `items` into the block list `field` (produces, sensors, scopes). Returns the
/// values added, in order.
pub fn merge_names(
    text: &mut String,
    field: &str,
    items: &[String],
) -> Result<Vec<String>, String> {
    let mut wanted: Vec<&String> = Vec::new();
    for item in items {
        if !wanted.contains(&item) {
            wanted.push(item);
        }
    }
    merge_list(text, field, wanted, str::to_owned, scalar_value).map(|(added, _)| added)
}

/// Set-union `wanted` into the block list `field`, each value written `  - <write(value)>` and
/// each existing item read back by `read`. Returns the values added, in order, and whether the
/// field was created.
fn merge_list(
    text: &mut String,
    field: &str,
    wanted: Vec<&String>,
    write: impl Fn(&str) -> String,
    read: impl Fn(&str) -> Option<String>,
) -> Result<(Vec<String>, bool), String> {
    if wanted.is_empty() {
        return Ok((Vec::new(), false));
    }
    let fence = closing_fence(text).ok_or("the stage has no frontmatter block")?;
    let render = |values: &[&String]| -> String {
        values.iter().fold(String::new(), |mut out, value| {
            let _ = writeln!(out, "  - {}", write(value));
            out
        })
    };
    match field_form(text, fence, field, "  - ", false) {
        FieldForm::EmptyFlow(start, end) => {
            let block = format!("{field}:\n{}", render(&wanted));
            text.replace_range(start..end, block.trim_end_matches('\n'));
            Ok((wanted.into_iter().cloned().collect(), false))
        }
        FieldForm::Block { after_items, items } => {
            let existing: Vec<String> = items.iter().filter_map(|item| read(item)).collect();
            let new: Vec<&String> = wanted
                .into_iter()
                .filter(|item| !existing.contains(item))
                .collect();
            text.insert_str(after_items, &render(&new));
            Ok((new.into_iter().cloned().collect(), false))
        }
        FieldForm::Absent => {
            text.insert_str(fence, &format!("{field}:\n{}", render(&wanted)));
            Ok((wanted.into_iter().cloned().collect(), true))
        }
        FieldForm::Other => Err(other_form(field)),
    }
}

fn render_consume(entry: &ConsumeEntry) -> String {
    let mut text = format!(
        "  - artifact: {}\n    required: {}",
        entry.artifact, entry.required
    );
    if let Some(condition) = &entry.conditional_on {
        let _ = write!(text, "\n    conditional_on: {condition}");
    }
    text
}

/// Each entry rendered, with a line break after each.
fn rendered_consumes<'e>(entries: impl Iterator<Item = &'e ConsumeEntry>) -> String {
    entries.fold(String::new(), |mut out, entry| {
        let _ = writeln!(out, "{}", render_consume(entry));
        out
    })
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

/// Set-union `entries` into `consumes` by artifact. Returns the artifacts added, and the ones
/// the stage already consumes with a different `required` (kept as the stage has them: a
/// contribution never relaxes or tightens an existing edge).
pub fn merge_consumes(
    text: &mut String,
    entries: &[ConsumeEntry],
) -> Result<(Vec<String>, Vec<KeptConsume>), String> {
    if entries.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let fence = closing_fence(text).ok_or("the stage has no frontmatter block")?;
    match field_form(text, fence, "consumes", "  - ", true) {
        FieldForm::EmptyFlow(start, end) => {
            let block = format!(
                "consumes:\n{}",
                entries
                    .iter()
                    .map(render_consume)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            text.replace_range(start..end, &block);
            Ok((
                entries.iter().map(|e| e.artifact.clone()).collect(),
                Vec::new(),
            ))
        }
        FieldForm::Block { after_items, items } => {
            let existing: Vec<(String, bool)> = items
                .iter()
                .filter_map(|item| Some((consumed_artifact(item)?, consumed_required(item))))
                .collect();
            let mut kept = Vec::new();
            let mut new = Vec::new();
            for entry in entries {
                match existing
                    .iter()
                    .find(|(artifact, _)| *artifact == entry.artifact)
                {
                    Some((_, required)) => {
                        if *required != entry.required {
                            kept.push(KeptConsume {
                                artifact: entry.artifact.clone(),
                                stage_required: *required,
                            });
                        }
                    }
                    None => new.push(entry),
                }
            }
            let rendered = rendered_consumes(new.iter().copied());
            text.insert_str(after_items, &rendered);
            Ok((new.iter().map(|e| e.artifact.clone()).collect(), kept))
        }
        FieldForm::Absent => {
            let rendered = rendered_consumes(entries.iter());
            text.insert_str(fence, &format!("consumes:\n{rendered}"));
            Ok((
                entries.iter().map(|e| e.artifact.clone()).collect(),
                Vec::new(),
            ))
        }
        FieldForm::Other => Err(other_form("consumes")),
    }
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
    if let Some(inner) = item
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        return inner.to_owned();
    }
    if let Some(inner) = item
        .strip_prefix('\'')
        .and_then(|rest| rest.strip_suffix('\''))
    {
        return inner.to_owned();
    }
    item.to_owned()
}

/// Set-union `sections` into `required_sections`. Returns the sections added and whether the
/// field was created (the sidecar's `required_sections_created`).
pub fn merge_required_sections(
    text: &mut String,
    sections: &[String],
) -> Result<(Vec<String>, bool), String> {
    let wanted: Vec<&String> = sections.iter().collect();
    merge_list(text, "required_sections", wanted, quote_section, |item| {
        Some(unquote_section(item))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGE: &str = "---\nslug: s\nproduces:\n  - a\n  - \"b\" # kept\nconsumes:\n  - artifact: x\n    required: true\n    conditional_on: brownfield\nsensors: []\nscopes:\n  - feature\n---\n\n# s\n\nproduces: []\n";

    #[test]
    fn a_block_list_gets_new_values_after_its_last_item() {
        let mut text = STAGE.to_owned();
        let added =
            merge_names(&mut text, "produces", &["b".into(), "c".into(), "c".into()]).unwrap();
        assert_eq!(added, ["c"]);
        assert!(
            text.contains("  - \"b\" # kept\n  - c\nconsumes:"),
            "{text}"
        );
        assert!(text.ends_with("produces: []\n"), "the body is not edited");
    }

    #[test]
    fn an_empty_flow_list_becomes_a_block_and_an_absent_field_is_created() {
        let mut text = STAGE.to_owned();
        assert_eq!(
            merge_names(&mut text, "sensors", &["s1".into(), "s2".into()]).unwrap(),
            ["s1", "s2"]
        );
        assert!(text.contains("sensors:\n  - s1\n  - s2\nscopes:"), "{text}");
        let (added, created) =
            merge_required_sections(&mut text, &["Branch Coverage".into(), "Say \"Hi\"".into()])
                .unwrap();
        assert!(created);
        assert_eq!(added.len(), 2);
        assert!(text.contains("  - feature\nrequired_sections:\n  - \"Branch Coverage\"\n  - \"Say \\\"Hi\\\"\"\n---\n"), "{text}");
        let (again, created) =
            merge_required_sections(&mut text, &["Branch Coverage".into()]).unwrap();
        assert!(again.is_empty() && !created);
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
        let (added, kept) = merge_consumes(&mut text, &entries).unwrap();
        assert_eq!(added, ["y"]);
        assert_eq!(
            kept,
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
