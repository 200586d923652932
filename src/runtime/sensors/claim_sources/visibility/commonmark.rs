//! The `CommonMark` reading of a document, by `pulldown-cmark`: which byte ranges a reader does
//! not see (fenced code, HTML comments, code spans, images, the syntax around link text) and
//! which reference definitions the document makes. Every range is a byte range of the text it
//! was read from, so the callers cut text without moving the lines around it.
//!
//! Invariant: nothing here decides more than the parser reports, except that an HTML comment
//! an HTML block leaves open hides the rest of the document (as a browser shows it).

use std::collections::HashSet;
use std::ops::Range;

use pulldown_cmark::{
    BrokenLink, CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd,
};

use super::normalized_reference_label;

/// `body` as `CommonMark` reads it here: without a byte-order mark and with `\n` line endings.
pub(super) fn normalized_markdown(body: &str) -> String {
    body.strip_prefix('\u{feff}')
        .unwrap_or(body)
        .replace("\r\n", "\n")
}

/// The byte ranges of `body` a reader never sees as text: the whole lines of every fenced code
/// block, and every HTML comment (inline, or inside an HTML block).
pub(super) fn hidden_block_ranges(body: &str) -> Vec<Range<usize>> {
    let mut hidden = Vec::new();
    // A fence needs ``` or ~~~ and a comment `<!--`: without them there is nothing to read.
    if !(body.contains("```") || body.contains("~~~") || body.contains("<!--")) {
        return hidden;
    }
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                hidden.push(whole_lines(body, range));
            }
            Event::Start(Tag::HtmlBlock) => {
                hidden.extend(html_block_comments(body, range));
            }
            Event::InlineHtml(html) if html.starts_with("<!--") => hidden.push(range),
            _ => {}
        }
    }
    hidden
}

/// `range` widened to the start of its first line and the end of its last (without the `\n`).
fn whole_lines(text: &str, range: Range<usize>) -> Range<usize> {
    let start = text[..range.start]
        .rfind('\n')
        .map_or(0, |newline| newline + 1);
    let last = range.end.max(range.start + 1) - 1;
    let end = if text.as_bytes().get(last) == Some(&b'\n') {
        last
    } else {
        text[last..]
            .find('\n')
            .map_or(text.len(), |newline| last + newline)
    };
    start..end
}

/// The comments inside the HTML block at `block`: `<!--` up to the next `-->` (so `<!-->` is an
/// empty comment, as in HTML); a comment the block leaves open runs to the end of `text`.
fn html_block_comments(text: &str, block: Range<usize>) -> Vec<Range<usize>> {
    let mut comments = Vec::new();
    let mut from = block.start;
    while let Some(found) = text[from..block.end].find("<!--") {
        let start = from + found;
        let Some(close) = text[start + 2..].find("-->") else {
            comments.push(start..text.len());
            break;
        };
        let end = start + 2 + close + 3;
        comments.push(start..end);
        if end >= block.end {
            break;
        }
        from = end;
    }
    comments
}

/// `text` without the bytes of `ranges`, except the line feeds inside them (so every line keeps
/// its number).
pub(in crate::runtime::sensors::claim_sources) fn without_ranges(
    text: &str,
    mut ranges: Vec<Range<usize>>,
) -> String {
    ranges.sort_by_key(|range| range.start);
    let mut kept = String::with_capacity(text.len());
    let mut copied_to = 0;
    for range in ranges {
        if range.start > copied_to {
            kept.push_str(&text[copied_to..range.start]);
        }
        let hidden_from = range.start.max(copied_to);
        if range.end > hidden_from {
            let line_feeds = text[hidden_from..range.end].matches('\n').count();
            kept.extend(std::iter::repeat_n('\n', line_feeds));
            copied_to = range.end;
        }
    }
    kept.push_str(&text[copied_to..]);
    kept
}

/// `text` from its first byte that is not a space or a tab, and that byte's index: a piece of
/// a document read alone must not turn into indented code because it was indented in place.
fn without_leading_indent(text: &str) -> (&str, usize) {
    let indent = text.len() - text.trim_start_matches([' ', '\t']).len();
    (&text[indent..], indent)
}

/// The byte ranges of `text`'s code spans, backticks included.
pub(super) fn code_span_ranges(text: &str) -> Vec<Range<usize>> {
    if !text.contains('`') {
        return Vec::new();
    }
    let (read, offset) = without_leading_indent(text);
    Parser::new_ext(read, Options::empty())
        .into_offset_iter()
        .filter(|(event, _)| matches!(event, Event::Code(_)))
        .map(|(_, range)| range.start + offset..range.end + offset)
        .collect()
}

/// The byte ranges of `text` that its links and images do not show: a whole image, and a
/// link's brackets and destination around its text (the text stays as written, escapes
/// included). A reference whose label `labels` holds (folded by [`normalized_reference_label`])
/// is a link; any other bracket pair is text. Autolinks stay as written (the HTML reading takes
/// them away).
pub(super) fn link_syntax_ranges(text: &str, labels: &HashSet<String>) -> Vec<Range<usize>> {
    // An inline link or image needs `](`; a reference one needs a definition, in `labels` or
    // in `text` (closed by `]:`).
    let may_link = text.contains("](") || !labels.is_empty() || text.contains("]:");
    if !text.contains('[') || !may_link {
        return Vec::new();
    }
    let (read, offset) = without_leading_indent(text);
    let defined_label = |link: BrokenLink<'_>| {
        labels
            .contains(&normalized_reference_label(&link.reference))
            .then(|| (CowStr::from(""), CowStr::from("")))
    };
    let events = Parser::new_with_broken_link_callback(read, Options::empty(), Some(defined_label))
        .into_offset_iter();
    let mut open_links: Vec<OpenLink> = Vec::new();
    let mut hidden = Vec::new();
    for (event, range) in events {
        if matches!(event, Event::End(TagEnd::Link)) {
            if let Some(link) = open_links.pop() {
                hidden.extend(link.hidden_syntax());
            }
            continue;
        }
        if let Some(parent) = open_links.last_mut() {
            parent.shows(&range);
        }
        match event {
            Event::Start(Tag::Image { .. }) => hidden.push(range),
            Event::Start(Tag::Link { link_type, .. }) => open_links.push(OpenLink {
                whole: range,
                text: None,
                as_written: matches!(link_type, LinkType::Autolink | LinkType::Email),
            }),
            _ => {}
        }
    }
    hidden
        .into_iter()
        .map(|range| range.start + offset..range.end + offset)
        .collect()
}

/// A link being read: its whole range, the range its text takes so far, and whether it stays
/// as written (an autolink).
struct OpenLink {
    whole: Range<usize>,
    text: Option<Range<usize>>,
    as_written: bool,
}

impl OpenLink {
    fn shows(&mut self, child: &Range<usize>) {
        self.text = Some(match self.text.take() {
            Some(text) => text.start.min(child.start)..text.end.max(child.end),
            None => child.clone(),
        });
    }

    /// The link's syntax around its text; the whole link when it has no text.
    fn hidden_syntax(self) -> Vec<Range<usize>> {
        if self.as_written {
            return Vec::new();
        }
        match self.text {
            Some(text) => vec![self.whole.start..text.start, text.end..self.whole.end],
            None => vec![self.whole],
        }
    }
}

/// Every reference definition of `body`: its label as written (white space collapsed) and its
/// byte span. The parser keeps only a label's first definition, so each round blanks the
/// definitions found and reads again, until a round finds none; a later definition of a label
/// is still a definition, and its lines are not claims.
pub(super) fn reference_definitions(body: &str) -> Vec<(String, Range<usize>)> {
    let mut found: Vec<(String, Range<usize>)> = Vec::new();
    // A definition's label is closed by `]:`.
    if !body.contains("]:") {
        return found;
    }
    let mut text = body.to_owned();
    loop {
        let round: Vec<(String, Range<usize>)> = Parser::new_ext(&text, Options::empty())
            .reference_definitions()
            .iter()
            .map(|(label, definition)| (label.to_owned(), definition.span.clone()))
            .collect();
        if round.is_empty() {
            return found;
        }
        text = blanked(text, round.iter().map(|(_, span)| span.clone()));
        found.extend(round);
    }
}

/// `text` with every byte inside `spans` but a line feed replaced by a space, so every other
/// offset stays where it was (a character of several bytes becomes as many spaces).
fn blanked(text: String, spans: impl Iterator<Item = Range<usize>>) -> String {
    let mut bytes = text.into_bytes();
    for span in spans {
        for byte in bytes[span].iter_mut().filter(|byte| **byte != b'\n') {
            *byte = b' ';
        }
    }
    String::from_utf8(bytes).expect("the parser's spans start and end at character boundaries")
}
