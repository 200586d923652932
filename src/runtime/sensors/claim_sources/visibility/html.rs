//! HTML visibility: text without its HTML tags and autolinks, and without the content of the
//! elements a reader cannot see (`<code>`, `<pre>`, `<script>`, `<style>`, `<template>`, and
//! any element that is `hidden`, `aria-hidden="true"` or styled `display: none` /
//! `visibility: hidden`).
//!
//! Pure text functions; a `<` that no `>` closes stays visible text.

use super::is_escaped;
use crate::leaves::js_text::{is_js_whitespace, js_trim_start};
use crate::runtime::sensors::text::is_word_byte;

const NON_VISIBLE_HTML_ELEMENTS: [&str; 5] = ["code", "pre", "script", "style", "template"];

struct HtmlTag {
    end: usize,
    name: String,
    closing: bool,
    self_closing: bool,
    hides_content: bool,
}

/// `text` without HTML tags, and without the content of elements that are not shown.
pub(in crate::runtime::sensors::claim_sources) fn visible_html_text(text: &str) -> String {
    let mut visible = String::with_capacity(text.len());
    let mut hidden_element = String::new();
    let mut hidden_depth = 0_usize;
    let mut index = 0;
    while index < text.len() {
        if let Some(tag) = html_tag_at(text, index) {
            if !hidden_element.is_empty() && tag.name == hidden_element {
                if tag.closing {
                    hidden_depth = hidden_depth.saturating_sub(1);
                    if hidden_depth == 0 {
                        hidden_element.clear();
                    }
                } else if !tag.self_closing {
                    hidden_depth += 1;
                }
            } else if hidden_element.is_empty() && tag.hides_content && !tag.self_closing {
                hidden_element = tag.name;
                hidden_depth = 1;
            }
            index = tag.end + 1;
            continue;
        }
        let character = text[index..].chars().next().unwrap_or_default();
        if hidden_element.is_empty() {
            visible.push(character);
        }
        index += character.len_utf8().max(1);
    }
    visible
}

fn html_tag_at(text: &str, start: usize) -> Option<HtmlTag> {
    if text.as_bytes().get(start) != Some(&b'<') || is_escaped(text, start) {
        return None;
    }
    let tail = &text[start..];
    let named = named_tag_start(tail);
    if named.is_none() && !is_autolink_start(tail) {
        return None;
    }
    let end = html_tag_end(text, start)?;
    let Some((closing, name)) = named else {
        return Some(HtmlTag {
            end,
            name: String::new(),
            closing: false,
            self_closing: true,
            hides_content: false,
        });
    };
    let raw = &text[start..=end];
    let name = name.to_ascii_lowercase();
    let hides_content = !closing
        && (NON_VISIBLE_HTML_ELEMENTS.contains(&name.as_str()) || has_hiding_attribute(raw));
    Some(HtmlTag {
        end,
        name,
        closing,
        self_closing: raw[..raw.len() - 1]
            .trim_end_matches(is_js_whitespace)
            .ends_with('/'),
        hides_content,
    })
}

/// `<name` or `</name`: whether it closes, and the name (letters, digits, `-`; ending at a word
/// boundary).
fn named_tag_start(tail: &str) -> Option<(bool, &str)> {
    let rest = tail.strip_prefix('<')?;
    let (closing, rest) = match rest.strip_prefix('/') {
        Some(after) => (true, after),
        None => (false, rest),
    };
    let bytes = rest.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let greedy = bytes
        .iter()
        .take_while(|&&byte| byte.is_ascii_alphanumeric() || byte == b'-')
        .count();
    (1..=greedy)
        .rev()
        .find(|&length| is_word_byte(bytes.get(length - 1)) != is_word_byte(bytes.get(length)))
        .map(|length| (closing, &rest[..length]))
}

/// `<http://`, `<https://`, `<mailto:` (any case) or `<…@` without `<`, `>` or white space.
fn is_autolink_start(tail: &str) -> bool {
    let lower = tail.get(..9).unwrap_or(tail).to_ascii_lowercase();
    if ["<http://", "<https://", "<mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
    {
        return true;
    }
    tail[1..]
        .chars()
        .take_while(|&character| {
            character != '<' && character != '>' && !is_js_whitespace(character)
        })
        .skip(1)
        .any(|character| character == '@')
}

/// The `>` closing the tag at `start`, outside quoted attribute values.
fn html_tag_end(text: &str, start: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (index, &byte) in text.as_bytes().iter().enumerate().skip(start + 1) {
        if let Some(open_quote) = quote {
            if byte == open_quote && !is_escaped(text, index) {
                quote = None;
            }
            continue;
        }
        match byte {
            b'"' | b'\'' => quote = Some(byte),
            b'>' => return Some(index),
            _ => {}
        }
    }
    None
}

/// `hidden`, `aria-hidden="true"`, or a `style` with `display: none` or `visibility: hidden`.
fn has_hiding_attribute(raw: &str) -> bool {
    let lower = raw.to_ascii_lowercase();
    let is_true = |value: &str| {
        ["\"true\"", "'true'", "true"]
            .iter()
            .find(|form| value.starts_with(**form))
            .is_some_and(|form| ends_attribute(&value[form.len()..]))
    };
    let hides_by_style =
        |value: &str| declares(value, "display", "none") || declares(value, "visibility", "hidden");
    attribute_tails(&lower, "hidden").any(|rest| ends_attribute(rest) || rest.starts_with('='))
        || attribute_tails(&lower, "aria-hidden")
            .filter_map(attribute_value)
            .any(is_true)
        || attribute_tails(&lower, "style")
            .filter_map(attribute_value)
            .filter_map(quoted_attribute_value)
            .any(hides_by_style)
}

/// The text after each `name` in the tag `lower` that follows white space (the tag starts with
/// `<`, so an attribute never starts it).
fn attribute_tails<'tag>(lower: &'tag str, name: &'tag str) -> impl Iterator<Item = &'tag str> {
    lower
        .match_indices(name)
        .filter(|&(index, _)| {
            lower[..index]
                .chars()
                .next_back()
                .is_some_and(is_js_whitespace)
        })
        .map(move |(index, _)| &lower[index + name.len()..])
}

fn ends_attribute(rest: &str) -> bool {
    rest.chars().next().is_some_and(is_js_whitespace)
        || rest.starts_with('>')
        || rest.starts_with("/>")
}

/// The text after `\s*=\s*`.
fn attribute_value(after_name: &str) -> Option<&str> {
    Some(js_trim_start(js_trim_start(after_name).strip_prefix('=')?))
}

fn quoted_attribute_value(value: &str) -> Option<&str> {
    let quote = value
        .chars()
        .next()
        .filter(|&quote| quote == '"' || quote == '\'')?;
    let inner = &value[1..];
    inner.find(quote).map(|end| &inner[..end])
}

/// Whether `css` contains `<property>\s*:\s*<value>`.
fn declares(css: &str, property: &str, value: &str) -> bool {
    css.match_indices(property).any(|(index, _)| {
        js_trim_start(&css[index + property.len()..])
            .strip_prefix(':')
            .is_some_and(|rest| js_trim_start(rest).starts_with(value))
    })
}
