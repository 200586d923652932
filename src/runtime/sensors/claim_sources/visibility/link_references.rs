//! Link-reference definitions (`CommonMark`), read through block quotes and list items: which
//! labels a document defines (so `[Q1][Q2]` is two tags, not a link) and which lines the
//! definitions take (they are not claims).
//!
//! Pure text functions over the document's visible lines.

use std::collections::{BTreeSet, HashSet};

use super::{
    first_content, is_atx_heading_start, is_escaped, is_thematic_break, leading_ascii_digits,
    normalized_reference_label, starts_html_block, strip_up_to_three_spaces,
    visible_markdown_lines,
};
use crate::leaves::js_text::js_trim;

/// How deeply a bare link destination may nest parentheses.
const DESTINATION_PAREN_DEPTH_MAX: usize = 32;
/// The longest link label, in characters.
const REFERENCE_LABEL_CHARS_MAX: usize = 999;

/// A line with its container markers taken off, and the containers it sits in (`quote`,
/// `list` or `list#<n>`, joined with `/`).
#[derive(Debug, Clone)]
struct ContainerLine {
    text: String,
    context: String,
}

struct ActiveListContainer {
    before_quotes: usize,
    content_indent: usize,
    list_context: String,
}

struct ReferenceDefinition {
    label: String,
    end_line: usize,
}

pub(in crate::runtime::sensors::claim_sources) struct ReferenceAnalysis {
    pub(in crate::runtime::sensors::claim_sources) labels: HashSet<String>,
    pub(in crate::runtime::sensors::claim_sources) definition_lines: BTreeSet<usize>,
}

/// The labels the document defines, and the lines its definitions take.
pub(in crate::runtime::sensors::claim_sources) fn reference_analysis(
    body: &str,
) -> ReferenceAnalysis {
    let lines = document_container_lines(&visible_markdown_lines(body));
    let mut analysis = ReferenceAnalysis {
        labels: HashSet::new(),
        definition_lines: BTreeSet::new(),
    };
    let mut index = 0;
    while index < lines.len() {
        let Some(definition) = reference_definition_at(&lines, index) else {
            index += 1;
            continue;
        };
        analysis
            .labels
            .insert(normalized_reference_label(&definition.label));
        analysis
            .definition_lines
            .extend(index..=definition.end_line);
        index = definition.end_line + 1;
    }
    analysis
}

pub(in crate::runtime::sensors::claim_sources) fn without_reference_definitions(
    text: &str,
) -> String {
    let analysis = reference_analysis(text);
    visible_markdown_lines(text)
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            if analysis.definition_lines.contains(&index) {
                String::new()
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` with every leading block-quote and list marker taken off, until it stops changing.
fn container_line(line: &str) -> ContainerLine {
    let mut stripped = line;
    let mut context: Vec<&str> = Vec::new();
    loop {
        if let Some(rest) = after_quote_marker(stripped) {
            stripped = rest;
            context.push("quote");
        } else if let Some(length) = container_list_marker_length(stripped) {
            stripped = &stripped[length..];
            context.push("list");
        } else {
            return ContainerLine {
                text: stripped.to_owned(),
                context: context.join("/"),
            };
        }
    }
}

/// `> ` (the space optional) after up to three spaces.
fn after_quote_marker(text: &str) -> Option<&str> {
    let rest = strip_up_to_three_spaces(text).strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// The byte length of a list marker that opens a container: up to three spaces, the marker,
/// then a tab or one to four spaces (five would start indented code).
fn container_list_marker_length(text: &str) -> Option<usize> {
    let indent = text
        .bytes()
        .take(3)
        .take_while(|&byte| byte == b' ')
        .count();
    let rest = &text[indent..];
    let marker = if rest.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = leading_ascii_digits(rest);
        if !(1..=9).contains(&digits) || !rest[digits..].starts_with(['.', ')']) {
            return None;
        }
        digits + 1
    };
    let after = &rest[marker..];
    let gap = if after.starts_with('\t') {
        1
    } else {
        let spaces = after.bytes().take_while(|&byte| byte == b' ').count();
        if !(1..=4).contains(&spaces) {
            return None;
        }
        spaces
    };
    Some(indent + marker + gap)
}

fn context_parts(context: &str) -> Vec<&str> {
    if context.is_empty() {
        Vec::new()
    } else {
        context.split('/').collect()
    }
}

fn text_columns(text: &str) -> usize {
    text.chars().fold(0, |column, character| {
        if character == '\t' {
            column + 4 - column % 4
        } else {
            column + 1
        }
    })
}

fn strip_indent_columns(text: &str, required: usize) -> Option<String> {
    let mut column = 0;
    let mut index = 0;
    let bytes = text.as_bytes();
    while column < required && index < bytes.len() {
        match bytes[index] {
            b' ' => column += 1,
            b'\t' => column += 4 - column % 4,
            _ => return None,
        }
        index += 1;
    }
    if column < required {
        return None;
    }
    Some(format!(
        "{}{}",
        " ".repeat(column - required),
        &text[index..]
    ))
}

fn strip_leading_quotes(line: &str, count: usize) -> Option<&str> {
    (0..count).try_fold(line, |text, _| after_quote_marker(text))
}

/// A line that opens list item number `list_item`, after any block quotes.
fn explicit_list_container(
    line: &str,
    list_item: usize,
) -> Option<(ContainerLine, ActiveListContainer)> {
    let mut text = line;
    let mut before_quotes = 0;
    while let Some(rest) = after_quote_marker(text) {
        text = rest;
        before_quotes += 1;
    }
    let marker_length = container_list_marker_length(text)?;
    let after = container_line(&text[marker_length..]);
    let list_context = format!("list#{list_item}");
    let mut context = vec!["quote"; before_quotes];
    context.push(&list_context);
    context.extend(context_parts(&after.context));
    let line = ContainerLine {
        text: after.text.clone(),
        context: context.join("/"),
    };
    let active = ActiveListContainer {
        before_quotes,
        content_indent: text_columns(&text[..marker_length]),
        list_context: list_context.clone(),
    };
    Some((line, active))
}

/// Every line with its containers, carrying an open list item over its continuation lines
/// (which do not repeat its marker) but never into a sibling item.
fn document_container_lines(lines: &[String]) -> Vec<ContainerLine> {
    let mut result = Vec::with_capacity(lines.len());
    let mut active_list: Option<ActiveListContainer> = None;
    let mut list_item = 0;
    for line in lines {
        if let Some((container, active)) = explicit_list_container(line, list_item + 1) {
            list_item += 1;
            active_list = Some(active);
            result.push(container);
            continue;
        }
        if js_trim(line).is_empty() {
            result.push(ContainerLine {
                text: line.clone(),
                context: active_list
                    .as_ref()
                    .map(|active| active.list_context.clone())
                    .unwrap_or_default(),
            });
            continue;
        }
        if let Some(active) = &active_list
            && let Some(container) = list_continuation(line, active)
        {
            result.push(container);
            continue;
        }
        active_list = None;
        result.push(container_line(line));
    }
    result
}

fn list_continuation(line: &str, active: &ActiveListContainer) -> Option<ContainerLine> {
    let quoted = strip_leading_quotes(line, active.before_quotes)?;
    let mut context = vec!["quote"; active.before_quotes];
    context.push(&active.list_context);
    if quoted.bytes().all(|byte| byte == b' ' || byte == b'\t') {
        return Some(ContainerLine {
            text: String::new(),
            context: context.join("/"),
        });
    }
    let continuation = strip_indent_columns(quoted, active.content_indent)?;
    let after = container_line(&continuation);
    context.extend(context_parts(&after.context));
    Some(ContainerLine {
        text: after.text.clone(),
        context: context.join("/"),
    })
}

/// Whether a line would end a definition in progress (a blank line or a block start).
fn interrupts_reference_continuation(text: &str) -> bool {
    let Some((index, column)) = first_content(text) else {
        return true;
    };
    if column > 3 {
        return false;
    }
    let rest = &text[index..];
    is_atx_heading_start(rest)
        || is_thematic_break(text)
        || is_setext_underline(rest)
        || starts_html_block(rest)
}

/// `=+` or `-+`, then only spaces or tabs.
fn is_setext_underline(rest: &str) -> bool {
    let Some(&marker) = rest.as_bytes().first() else {
        return false;
    };
    if marker != b'=' && marker != b'-' {
        return false;
    }
    let run = rest.bytes().take_while(|&byte| byte == marker).count();
    rest[run..]
        .bytes()
        .all(|byte| byte == b' ' || byte == b'\t')
}

fn can_continue_reference(lines: &[ContainerLine], index: usize, context: &str) -> bool {
    let Some(line) = lines.get(index) else {
        return false;
    };
    let same_or_lazily_elided_context = line.context == context
        || (line.context.is_empty() && !context.is_empty())
        || (!line.context.is_empty() && context.starts_with(&format!("{}/", line.context)));
    same_or_lazily_elided_context && !interrupts_reference_continuation(&line.text)
}

/// One complete definition starting at `start_line`: label, destination and optional title
/// must all be valid, or nothing is consumed and the text stays a claim (fail closed).
fn reference_definition_at(
    lines: &[ContainerLine],
    start_line: usize,
) -> Option<ReferenceDefinition> {
    let context = lines[start_line].context.as_str();
    let (label, label_line, label_end) = reference_label(lines, start_line, context)?;
    let text = lines[label_line].text.as_str();
    if text.as_bytes().get(label_end + 1) != Some(&b':')
        || !label
            .chars()
            .any(|character| !matches!(character, ' ' | '\t' | '\n' | '\r'))
        || label.chars().count() > REFERENCE_LABEL_CHARS_MAX
    {
        return None;
    }
    let mut destination_line = label_line;
    let mut destination_offset = label_end + 2;
    let mut destination_start = first_content(&text[destination_offset..]).map(|(index, _)| index);
    if destination_start.is_none() {
        if !can_continue_reference(lines, destination_line + 1, context) {
            return None;
        }
        destination_line += 1;
        destination_offset = 0;
        destination_start = Some(first_content(&lines[destination_line].text)?.0);
    }
    let destination_text = &lines[destination_line].text[destination_offset..];
    let destination_end = reference_destination_end(destination_text, destination_start?)?;
    let raw_trailing = &destination_text[destination_end..];
    if raw_trailing
        .bytes()
        .any(|byte| byte != b' ' && byte != b'\t')
    {
        if !raw_trailing.starts_with([' ', '\t']) {
            return None;
        }
        let (trailing_index, _) = first_content(raw_trailing)?;
        let title_start = destination_offset + destination_end + trailing_index;
        let end_line = reference_title_end(lines, destination_line, title_start)?;
        return Some(ReferenceDefinition { label, end_line });
    }
    let end_line =
        next_line_title_end(lines, destination_line, context).unwrap_or(destination_line);
    Some(ReferenceDefinition { label, end_line })
}

/// The label of a definition opening with `[` at `start_line`: its text (lines joined with
/// `\n`), and the line and byte index of its closing `]`.
fn reference_label(
    lines: &[ContainerLine],
    start_line: usize,
    context: &str,
) -> Option<(String, usize, usize)> {
    let mut line_index = start_line;
    let mut text = lines[line_index].text.as_str();
    let (start, column) = first_content(text)?;
    if column > 3 || text.as_bytes()[start] != b'[' {
        return None;
    }
    let mut cursor = start + 1;
    let mut label = String::new();
    loop {
        while cursor < text.len() {
            let character = text[cursor..].chars().next()?;
            if !is_escaped(text, cursor) {
                if character == '[' {
                    return None;
                }
                if character == ']' {
                    return Some((label, line_index, cursor));
                }
            }
            label.push(character);
            cursor += character.len_utf8();
        }
        if !can_continue_reference(lines, line_index + 1, context) {
            return None;
        }
        label.push('\n');
        line_index += 1;
        text = lines[line_index].text.as_str();
        cursor = 0;
    }
}

/// A title on the line after the destination, when it is one.
fn next_line_title_end(
    lines: &[ContainerLine],
    destination_line: usize,
    context: &str,
) -> Option<usize> {
    if !can_continue_reference(lines, destination_line + 1, context) {
        return None;
    }
    let text = &lines[destination_line + 1].text;
    let (title_index, _) = first_content(text)?;
    if !matches!(text.as_bytes()[title_index], b'"' | b'\'' | b'(') {
        return None;
    }
    reference_title_end(lines, destination_line + 1, title_index)
}

/// The index just past a link destination starting at `start`: `<…>` closing on the line with
/// no bare `<`, or a bare run up to white space or a control character with balanced
/// parentheses.
fn reference_destination_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(start) == Some(&b'<') {
        for (index, &byte) in bytes.iter().enumerate().skip(start + 1) {
            if is_escaped(text, index) {
                continue;
            }
            match byte {
                b'>' => return Some(index + 1),
                b'<' => return None,
                _ => {}
            }
        }
        return None;
    }
    let mut depth = 0_usize;
    let mut index = start;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte <= 0x20 || byte == 0x7f {
            break;
        }
        if !is_escaped(text, index) {
            if byte == b'(' {
                depth += 1;
                if depth > DESTINATION_PAREN_DEPTH_MAX {
                    return None;
                }
            } else if byte == b')' {
                depth = depth.checked_sub(1)?;
            }
        }
        index += 1;
    }
    (depth == 0 && index > start).then_some(index)
}

/// The line on which a title opened at `start` closes, when only spaces or tabs follow it.
fn reference_title_end(lines: &[ContainerLine], start_line: usize, start: usize) -> Option<usize> {
    let context = lines[start_line].context.as_str();
    let opening = *lines[start_line].text.as_bytes().get(start)?;
    let closing = match opening {
        b'"' | b'\'' => opening,
        b'(' => b')',
        _ => return None,
    };
    let mut line_index = start_line;
    let mut cursor = start + 1;
    loop {
        let text = lines[line_index].text.as_str();
        while cursor < text.len() {
            let byte = text.as_bytes()[cursor];
            if !is_escaped(text, cursor) {
                if opening == b'(' && byte == b'(' {
                    return None;
                }
                if byte == closing {
                    let rest_is_blank = text[cursor + 1..]
                        .bytes()
                        .all(|byte| byte == b' ' || byte == b'\t');
                    return rest_is_blank.then_some(line_index);
                }
            }
            cursor += 1;
        }
        if !can_continue_reference(lines, line_index + 1, context) {
            return None;
        }
        line_index += 1;
        cursor = 0;
    }
}
