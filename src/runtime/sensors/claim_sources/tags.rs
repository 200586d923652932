//! Source tags: `[desc]`, `[scope]`, `[assumption]`, `[Q<n>]`, `[memory:<id>]`, and the tags a
//! piece of text visibly carries.
//!
//! Pure text functions; which tags resolve is the register's business.

use std::collections::HashSet;

use super::visibility::html::visible_html_text;
use super::visibility::link_references::without_reference_definitions;
use super::visibility::{
    after_list_marker, collapsed_whitespace, visible_markdown_link_text, without_inline_code,
    without_ranges,
};
use crate::leaves::js_text::js_trim;
use crate::runtime::sensors::text::is_plain_name;

/// The tags a claim visibly carries, in order (duplicates kept).
pub(super) fn source_tags(text: &str, labels: &HashSet<String>) -> Vec<String> {
    let visible = visible_markdown_link_text(
        &without_reference_definitions(&visible_html_text(&without_inline_code(text))),
        labels,
    );
    source_tag_spans(&visible)
        .map(|(start, end)| visible[start + 1..end - 1].to_owned())
        .collect()
}

/// `text` without its tags (a tag holds no line feed, so nothing of it stays).
fn without_source_tags(text: &str) -> String {
    without_ranges(
        text,
        source_tag_spans(text)
            .map(|(start, end)| start..end)
            .collect(),
    )
}

/// The byte spans of `[<tag id>]`, left to right, not overlapping.
fn source_tag_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let start = from + text.get(from..)?.find('[')?;
            let rest = &text[start + 1..];
            let id_length = rest
                .bytes()
                .take_while(|&byte| is_tag_id_byte(byte))
                .count();
            if rest[id_length..].starts_with(']') && is_source_tag_id(&rest[..id_length]) {
                let end = start + id_length + 2;
                from = end;
                return Some((start, end));
            }
            from = start + 1;
        }
    })
}

pub(super) fn is_tag_id_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b':' | b'.' | b'_' | b'-')
}

fn is_source_tag_id(id: &str) -> bool {
    id == "assumption"
        || is_register_id(id)
        || id
            .strip_prefix('Q')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

pub(super) fn is_register_id(id: &str) -> bool {
    id == "desc" || id == "scope" || id.strip_prefix("memory:").is_some_and(is_plain_name)
}

/// An assumption as compared with the confirmed list: no list marker, no tags, white space
/// collapsed, lower case.
pub(super) fn normalized_assumption(text: &str) -> String {
    let text = after_list_marker(text).unwrap_or(text);
    collapsed_whitespace(js_trim(&without_source_tags(text))).to_lowercase()
}
