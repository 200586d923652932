//! What a reader of a Markdown document sees, as far as `claim-sources` needs it: the lines
//! outside fenced code and HTML comments, H2 headings and their sections, block starts, list
//! markers, and inline text without code spans or link syntax. [`commonmark`] reads the
//! document with `pulldown-cmark` (fenced code, comments, code spans, links, images),
//! [`html`] takes away non-visible HTML and [`link_references`] finds link-reference
//! definitions.
//!
//! Invariants: pure functions over text (no file system); the line predicates here read one
//! line as the reference does, and where that disagrees with `CommonMark` they hide less, so a
//! disagreement gives a false failure, never a false pass.

mod commonmark;
pub(super) mod html;
pub(super) mod link_references;

use std::collections::HashSet;

pub(super) use self::commonmark::without_ranges;
use self::commonmark::{
    code_span_ranges, hidden_block_ranges, link_syntax_ranges, normalized_markdown,
};
use crate::leaves::js_text::{
    is_js_line_terminator as is_line_terminator, is_js_whitespace, js_trim, js_trim_start,
};

const RAW_HTML_BLOCK_ELEMENTS: [&str; 4] = ["script", "pre", "style", "textarea"];
/// The `CommonMark` HTML block (kind 6) element names, separated by spaces.
const HTML_BLOCK_ELEMENTS: &str = concat!(
    "address article aside base basefont blockquote body caption center col colgroup dd ",
    "details dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 ",
    "h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol ",
    "optgroup option p param search section summary table tbody td tfoot th thead title tr ",
    "track ul",
);

/// The document's lines with fenced code and HTML comments taken out, as `CommonMark` reads
/// them (a fenced block's lines, its fences included, become empty; a comment's bytes go, the
/// rest of its lines stays), so line numbers are kept.
pub(super) fn visible_markdown_lines(body: &str) -> Vec<String> {
    let body = normalized_markdown(body);
    without_ranges(&body, hidden_block_ranges(&body))
        .split('\n')
        .map(str::to_owned)
        .collect()
}

/// The text of a `## ` heading, without a closing run of `#` and trimmed.
pub(super) fn h2_heading(line: &str) -> Option<String> {
    let rest = strip_up_to_three_spaces(line).strip_prefix("##")?;
    let text = rest.trim_start_matches([' ', '\t']);
    if text.len() == rest.len() && !rest.is_empty() {
        return None;
    }
    if text.contains(is_line_terminator) {
        return None;
    }
    Some(js_trim(without_closing_hashes(text)).to_owned())
}

fn without_closing_hashes(text: &str) -> &str {
    let trimmed = text.trim_end_matches([' ', '\t']);
    let before_hashes = trimmed.trim_end_matches('#');
    let before_spaces = before_hashes.trim_end_matches([' ', '\t']);
    if before_hashes.len() == trimmed.len() || before_spaces.len() == before_hashes.len() {
        text
    } else {
        before_spaces
    }
}

/// Every `## ` section of `lines`, in order: its heading and its lines up to the next `## `
/// heading (the lines before the first heading are in none).
pub(super) fn h2_sections(lines: &[String]) -> impl Iterator<Item = (String, &[String])> {
    let headings = lines.iter().filter_map(|line| h2_heading(line));
    let bodies = lines.split(|line| h2_heading(line).is_some()).skip(1);
    headings.zip(bodies)
}

/// The bodies of every `## <heading>` section, in order.
pub(super) fn sections_named<'lines>(
    lines: &'lines [String],
    heading: &str,
) -> Vec<&'lines [String]> {
    h2_sections(lines)
        .filter(|(found, _)| found == heading)
        .map(|(_, body)| body)
        .collect()
}

/// `#` to `######` followed by a space, a tab or the end.
pub(super) fn is_atx_heading_start(rest: &str) -> bool {
    let hashes = rest.bytes().take_while(|&byte| byte == b'#').count();
    (1..=6).contains(&hashes) && matches!(rest.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
}

pub(super) fn is_thematic_break(line: &str) -> bool {
    let Some((index, column)) = first_content(line) else {
        return false;
    };
    let rest = &line[index..];
    let marker = rest.as_bytes()[0];
    column <= 3
        && matches!(marker, b'*' | b'-' | b'_')
        && rest
            .bytes()
            .all(|byte| byte == marker || byte == b' ' || byte == b'\t')
        && rest.bytes().filter(|&byte| byte == marker).count() >= 3
}

pub(super) fn is_html_block_start(line: &str) -> bool {
    first_content(line)
        .is_some_and(|(index, column)| column <= 3 && starts_html_block(&line[index..]))
}

/// Whether `rest` opens an HTML block (`CommonMark` kinds 1 to 6, any case).
fn starts_html_block(rest: &str) -> bool {
    let lower = rest.to_ascii_lowercase();
    let Some(after) = lower.strip_prefix('<') else {
        return false;
    };
    if after.starts_with("!--") || after.starts_with('?') || after.starts_with("![cdata[") {
        return true;
    }
    if after.strip_prefix('!').is_some_and(|bang| {
        bang.bytes()
            .next()
            .is_some_and(|byte| byte.is_ascii_alphabetic())
    }) {
        return true;
    }
    let raw_name_length = after.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if RAW_HTML_BLOCK_ELEMENTS.contains(&&after[..raw_name_length])
        && matches!(
            after.as_bytes().get(raw_name_length),
            None | Some(b' ' | b'\t' | b'>')
        )
    {
        return true;
    }
    let name_part = after.strip_prefix('/').unwrap_or(after);
    let name_length = name_part
        .bytes()
        .take_while(u8::is_ascii_alphanumeric)
        .count();
    HTML_BLOCK_ELEMENTS
        .split(' ')
        .any(|element| element == &name_part[..name_length])
        && matches!(
            name_part.as_bytes().get(name_length),
            None | Some(b' ' | b'\t' | b'\n' | b'\x0c' | b'\r' | b'/' | b'>')
        )
}

pub(super) fn is_list_item(line: &str) -> bool {
    after_list_marker(line).is_some()
}

/// The text after a list marker (`-`, `*`, `+`, `<1-9 digits>.` or `)`) and its white space,
/// after any indent.
pub(super) fn after_list_marker(line: &str) -> Option<&str> {
    let rest = js_trim_start(line);
    let after_marker = if let Some(after) = rest.strip_prefix(['-', '*', '+']) {
        after
    } else {
        let digits = leading_ascii_digits(rest);
        if !(1..=9).contains(&digits) {
            return None;
        }
        rest[digits..].strip_prefix(['.', ')'])?
    };
    let after_space = js_trim_start(after_marker);
    (after_space.len() < after_marker.len()).then_some(after_space)
}

/// `text` without its code spans (`CommonMark`: a backtick run up to the next run of as many).
pub(super) fn without_inline_code(text: &str) -> String {
    without_ranges(text, code_span_ranges(text))
}

/// Whether the byte at `index` follows an odd number of backslashes.
fn is_escaped(text: &str, index: usize) -> bool {
    text.as_bytes()[..index]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b'\\')
        .count()
        % 2
        == 1
}

/// The visible text of links: an inline link or a reference link whose label is defined shows
/// its text without brackets; an image shows nothing; any other bracket pair stays as written.
pub(super) fn visible_markdown_link_text(text: &str, labels: &HashSet<String>) -> String {
    without_ranges(text, link_syntax_ranges(text, labels))
}

/// A link label as `CommonMark` matches it: trimmed, white space collapsed, case folded.
fn normalized_reference_label(label: &str) -> String {
    collapsed_whitespace(js_trim(label))
        .to_lowercase()
        .to_uppercase()
}

pub(super) fn collapsed_whitespace(text: &str) -> String {
    let mut collapsed = String::with_capacity(text.len());
    for character in text.chars() {
        // A space is pushed only for white space, so ending in one means a run is open.
        if !is_js_whitespace(character) {
            collapsed.push(character);
        } else if !collapsed.ends_with(' ') {
            collapsed.push(' ');
        }
    }
    collapsed
}

/// The byte index and column of the first character that is not a space or a tab.
fn first_content(text: &str) -> Option<(usize, usize)> {
    let mut column = 0;
    for (index, byte) in text.bytes().enumerate() {
        match byte {
            b' ' => column += 1,
            b'\t' => column += 4 - column % 4,
            _ => return Some((index, column)),
        }
    }
    None
}

pub(super) fn strip_up_to_three_spaces(line: &str) -> &str {
    let spaces = line
        .bytes()
        .take(3)
        .take_while(|&byte| byte == b' ')
        .count();
    &line[spaces..]
}

pub(super) fn leading_ascii_digits(text: &str) -> usize {
    text.bytes().take_while(u8::is_ascii_digit).count()
}
