//! The offending text of a plugin problem found in its file's text, as a span, where the
//! problem is made (docs/decisions.md D52: a refusal is shown on the offending text).
//!
//! Pure: it takes the text and returns offsets into it. A place that is not in the text (a key
//! the file lacks, a line it does not have) gives `None`, and the problem is shown on the file
//! without a span; a JSON file that does not parse points at the syntax error, whatever the
//! key, because that is what the file's reader stopped at.

use std::ops::Range;

use crate::compile::syntax::{frontmatter, yaml};
use crate::harness::install::json_text::{self, JsonTextError};
use crate::leaves::text_lines::lines_with_starts;

/// The span of `key` (a path of keys from the top; with `item`, the element of that key's list,
/// or its scalar value, whose text is `item`) in `text`, read as JSON when `is_json`, else as
/// Markdown with frontmatter.
pub fn key_span(
    text: &str,
    is_json: bool,
    key: &[&str],
    item: Option<&str>,
) -> Option<Range<usize>> {
    if !is_json {
        return frontmatter_key_span(text, key, item);
    }
    match json_text::parse(text) {
        Ok(root) => json_key_span(&root, key, item),
        Err(JsonTextError::Syntax { line, column, .. }) => Some(
            crate::compile::stage_graph::plugins_key::offset_of(text, line, column),
        ),
        Err(JsonTextError::DuplicateKey { .. }) => None,
    }
}

/// `path` walked down from `root`: the member's span (key to value), or with `item` the
/// element whose string is `item`. An empty path is the whole document.
fn json_key_span(
    root: &json_text::Node,
    path: &[&str],
    item: Option<&str>,
) -> Option<Range<usize>> {
    let Some((last, parents)) = path.split_last() else {
        return Some(root.span.clone());
    };
    let mut node = root;
    for key in parents {
        node = &node.get(key)?.value;
    }
    let member = node.get(last)?;
    let Some(item) = item else {
        return Some(member.span());
    };
    if member.value.as_str() == Some(item) {
        return Some(member.value.span.clone());
    }
    member
        .value
        .elements()?
        .iter()
        .find(|element| element.as_str() == Some(item))
        .map(|element| element.span.clone())
}

/// `path` walked down the frontmatter's mapping: the key through its value, or with `item` the
/// list element (or the scalar value, or a scalar value of a list element's mapping) that reads
/// `item`.
fn frontmatter_key_span(text: &str, path: &[&str], item: Option<&str>) -> Option<Range<usize>> {
    let fences = frontmatter::split(text).ok()?;
    let (Some(root), _) = yaml::parse_document(text, fences.yaml) else {
        return None;
    };
    let (last, parents) = path.split_last()?;
    let mut node = &root;
    for key in parents {
        node = node.get(key)?;
    }
    let entry = node
        .as_mapping()?
        .iter()
        .find(|entry| entry.key.as_scalar() == Some(*last))?;
    let Some(item) = item else {
        return Some(entry.key.span.start..entry.value.span.end);
    };
    if entry.value.as_scalar() == Some(item) {
        return Some(entry.value.span.clone());
    }
    entry.value.as_sequence()?.iter().find_map(|element| {
        if element.as_scalar() == Some(item) {
            return Some(element.span.clone());
        }
        element
            .as_mapping()?
            .iter()
            .find(|entry| entry.value.as_scalar() == Some(item))
            .map(|entry| entry.value.span.clone())
    })
}

/// The first line that reads `wanted` once trimmed, without its line break and indentation.
pub fn line_span(text: &str, wanted: &str) -> Option<Range<usize>> {
    let (start, line) = lines_with_starts(text).find(|(_, line)| line.trim() == wanted)?;
    let at = start + (line.len() - line.trim_start().len());
    Some(at..at + wanted.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_key_and_a_list_item_are_found_in_the_json() {
        let text = "{\n  \"name\": \"acme\",\n  \"dependencies\": [\"core\", \"lib@nope\"],\n  \"aidlc\": {\"contributes\": {\"stages\": 3}}\n}\n";
        let span = key_span(text, true, &["name"], None).unwrap();
        assert_eq!(&text[span], "\"name\": \"acme\"");
        let span = key_span(text, true, &["dependencies"], Some("lib@nope")).unwrap();
        assert_eq!(&text[span], "\"lib@nope\"");
        let span = key_span(text, true, &["aidlc", "contributes", "stages"], None).unwrap();
        assert_eq!(&text[span], "\"stages\": 3");
        assert_eq!(key_span(text, true, &["version"], None), None);
        assert_eq!(key_span(text, true, &[], None), Some(0..text.len() - 1));
    }

    #[test]
    fn a_json_syntax_error_is_pointed_at_whatever_the_place() {
        let text = "{\"name\": \"acme\",,}";
        let span = key_span(text, true, &["name"], None).unwrap();
        assert_eq!(&text[span], ",");
    }

    #[test]
    fn a_frontmatter_key_a_list_item_and_a_mapping_value_are_found() {
        let text = "---\ntarget: build-and-test\nadds:\n  scopes:\n    - nope\nfragments:\n  - anchor: in:Sensors\n    order: 100\n---\n\n## fragment: in:Sensors\n\ntext\n";
        let span = key_span(text, false, &["target"], None).unwrap();
        assert_eq!(&text[span], "target: build-and-test");
        let span = key_span(text, false, &["adds", "scopes"], Some("nope")).unwrap();
        assert_eq!(&text[span], "nope");
        let span = key_span(text, false, &["fragments"], Some("in:Sensors")).unwrap();
        assert_eq!(text.find("in:Sensors"), Some(span.start));
        assert_eq!(&text[span], "in:Sensors");
        let span = line_span(text, "## fragment: in:Sensors").unwrap();
        assert_eq!(&text[span], "## fragment: in:Sensors");
        assert_eq!(key_span(text, false, &["mode"], None), None);
    }
}
