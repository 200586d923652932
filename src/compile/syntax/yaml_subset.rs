//! The block-style subset of YAML that frontmatter almost always is, read without the general
//! parser: a mapping of `key: value` lines whose values are plain or simply quoted scalars on
//! one line, one-line flow sequences, block sequences, and mappings nested in either.
//!
//! The general parser (granit, behind serde-saphyr) spends a few hundred instructions per byte;
//! this reader does the same documents in a tenth of that, which is most of the cost of
//! compiling a large project.
//!
//! Invariant: when [`read_block_subset`] returns `Some`, it has fed the sink exactly the events,
//! with exactly the spans, that the general parser gives for the same text (a differential test
//! compares both on every frontmatter of the fixtures, the default framework, generated
//! projects and generated near-YAML text). Anything it is not sure of (comments, tabs, anchors,
//! tags, block scalars, multi-line scalars, escapes, flow mappings, odd indentation, a key longer
//! than YAML's limit for implicit keys, nesting deeper than the general parser's limit, a document
//! the general parser would refuse) makes it return `None` at once, having fed the sink a
//! prefix of the events at most, and the caller parses the text with the general parser
//! instead. So the subset changes speed, never a result.

use std::ops::Range;

/// How a scalar was written. Only plain scalars can be null, booleans or numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Quoted,
    Block,
}

/// The longest key the subset takes, in bytes. YAML limits an implicit key to 1024 characters
/// and the general parser refuses a longer one ("simple key expected"); a byte count is never
/// below the character count, so a key the subset takes is never one the general parser
/// refuses.
const MAX_KEY_BYTES: usize = 1024;

/// The deepest nesting of collections the subset takes. The general parser refuses more than
/// 255 nested collections (counting in ways that differ between block and flow, indented and
/// indentless); frontmatter nests three or four deep, so the subset stays far below the limit
/// rather than mirror its counting.
const MAX_OPEN_COLLECTIONS: usize = 64;

/// What the reader produces, in the order the general parser's events come. Offsets are byte
/// offsets into the text handed to [`read_block_subset`].
pub trait EventSink {
    fn scalar(&mut self, text: &str, style: Style, span: Range<usize>);
    /// A sequence opens; `start` is where the general parser's event starts.
    fn start_sequence(&mut self, flow: bool, start: usize);
    /// A mapping opens.
    fn start_mapping(&mut self, flow: bool, start: usize);
    /// The innermost open collection closes; `end` is where the general parser's event ends.
    fn end_collection(&mut self, end: usize);
}

/// Feed `sink` the events of `text`, a whole YAML document, if it lies in the subset; `None`
/// (with a prefix of the events fed at most) when it does not.
pub fn read_block_subset(text: &str, sink: &mut impl EventSink) -> Option<()> {
    let lines = significant_lines(text)?;
    let first = *lines.first()?;
    if first.indent != 0 {
        return None;
    }
    let mut reader = Reader {
        text,
        lines,
        next: 0,
        open_collections: 0,
        sink,
    };
    reader.block_mapping(0, first.content_start())?;
    (reader.next == reader.lines.len()).then_some(())
}

/// One line that is not blank: where it starts, its indentation (spaces) and where it ends
/// (its `\n`, or the end of the text).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    indent: usize,
    end: usize,
}

impl Line {
    fn content_start(self) -> usize {
        self.start + self.indent
    }
}

/// The lines that hold something, or `None` when the text holds anything outside the subset at
/// the character level: a tab, a carriage return or another control character, a character
/// YAML counts as non-printable or as a line break, a comment line, or a document marker.
fn significant_lines(text: &str) -> Option<Vec<Line>> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(32);
    let mut start = 0;
    let mut any_non_ascii = false;
    while start < bytes.len() {
        // Whole-line scans (the newline found with the `memchr` crate, then one pass for control
        // characters): a byte-by-byte walk was a visible part of every compile, and so was
        // `str::find`, whose set-up costs more than a short line's search.
        let end =
            memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |offset| start + offset);
        let line = &bytes[start..end];
        if line.iter().any(|&byte| byte < 0x20 || byte == 0x7f) {
            return None;
        }
        any_non_ascii |= !line.is_ascii();
        let indent = line.iter().take_while(|&&byte| byte == b' ').count();
        let content = &bytes[start + indent..end];
        if !content.is_empty() {
            if content[0] == b'#'
                || (indent == 0 && (content.starts_with(b"---") || content.starts_with(b"...")))
            {
                return None;
            }
            lines.push(Line { start, indent, end });
        }
        start = end + 1;
    }
    if any_non_ascii && !text.chars().all(plain_text_character) {
        return None;
    }
    Some(lines)
}

/// A non-ASCII character the subset passes through: printable, not a byte order mark, not a
/// Unicode line or paragraph separator.
fn plain_text_character(character: char) -> bool {
    character.is_ascii()
        || !(character.is_control()
            || matches!(
                character,
                '\u{feff}' | '\u{fffe}' | '\u{ffff}' | '\u{2028}' | '\u{2029}'
            ))
}

struct Reader<'t, S> {
    text: &'t str,
    lines: Vec<Line>,
    /// The first line not yet consumed.
    next: usize,
    /// How many collections are open at this point of the reading.
    open_collections: usize,
    sink: &'t mut S,
}

impl<S: EventSink> Reader<'_, S> {
    /// Where the token after a closing block collection starts: the next line's content, or the
    /// end of the text.
    fn next_token_start(&self) -> usize {
        self.lines
            .get(self.next)
            .map_or(self.text.len(), |line| line.content_start())
    }

    /// Count a collection about to open; `None` past [`MAX_OPEN_COLLECTIONS`].
    fn open_collection(&mut self) -> Option<()> {
        self.open_collections += 1;
        (self.open_collections <= MAX_OPEN_COLLECTIONS).then_some(())
    }

    fn close_collection(&mut self, end: usize) {
        self.open_collections -= 1;
        self.sink.end_collection(end);
    }

    /// A block mapping whose keys sit at column `indent`; the first key starts at `key_at` on
    /// line `self.next` (mid-line for a mapping that opens a sequence item).
    fn block_mapping(&mut self, indent: usize, key_at: usize) -> Option<()> {
        self.open_collection()?;
        self.sink.start_mapping(false, key_at);
        let mut key_at = key_at;
        loop {
            let line = self.lines[self.next];
            let content = &self.text[key_at..line.end];
            let colon = mapping_colon(content)?;
            let key = &content[..colon];
            if !plain_scalar_ok(key) || key.ends_with(' ') || key.len() > MAX_KEY_BYTES {
                return None;
            }
            self.sink.scalar(key, Style::Plain, key_at..key_at + colon);
            let colon_at = key_at + colon;
            let value = &self.text[colon_at + 1..line.end];
            let value_at = colon_at + 1 + (value.len() - value.trim_start_matches(' ').len());
            self.next += 1;
            if value_at == line.end {
                self.value_below(indent, colon_at)?;
            } else {
                self.inline_value(value_at, line.end)?;
            }
            match self.lines.get(self.next) {
                Some(next) if next.indent == indent => {
                    if self.text[next.content_start()..].starts_with('-') {
                        return None;
                    }
                    key_at = next.content_start();
                }
                Some(next) if next.indent > indent => return None,
                _ => break,
            }
        }
        self.close_collection(self.next_token_start());
        Some(())
    }

    /// The value of a key whose line ends after its colon: a block collection on the lines
    /// below, or null.
    fn value_below(&mut self, indent: usize, colon_at: usize) -> Option<()> {
        let Some(&line) = self.lines.get(self.next) else {
            self.sink.scalar("~", Style::Plain, colon_at..colon_at);
            return Some(());
        };
        let content = &self.text[line.content_start()..line.end];
        let is_item = is_sequence_item(content);
        if line.indent > indent {
            if is_item {
                return self.block_sequence(line.indent, false);
            }
            if content.starts_with('-') || mapping_colon(content).is_none() {
                return None;
            }
            return self.block_mapping(line.indent, line.content_start());
        }
        if line.indent == indent && is_item {
            return self.block_sequence(indent, true);
        }
        if line.indent == indent && content.starts_with('-') {
            return None;
        }
        self.sink.scalar("~", Style::Plain, colon_at..colon_at);
        Some(())
    }

    /// A block sequence whose `- ` sit at column `indent`, from line `self.next`. An indentless
    /// sequence (the value of a key at the same column) opens where its first item's content
    /// starts; an indented one at its first dash.
    fn block_sequence(&mut self, indent: usize, indentless: bool) -> Option<()> {
        let first = self.lines[self.next];
        let first_item_at = item_content_start(self.text, first)?;
        let start = if indentless {
            first_item_at
        } else {
            first.content_start()
        };
        self.open_collection()?;
        self.sink.start_sequence(false, start);
        loop {
            let line = self.lines[self.next];
            let item_at = item_content_start(self.text, line)?;
            let item = &self.text[item_at..line.end];
            if item.starts_with('-') {
                return None;
            }
            let opens_mapping = !item.starts_with(['"', '\'', '['])
                && mapping_colon(item).is_some_and(|colon| colon > 0);
            if opens_mapping {
                self.block_mapping(item_at - line.start, item_at)?;
            } else {
                self.next += 1;
                self.inline_value(item_at, line.end)?;
            }
            match self.lines.get(self.next) {
                Some(next) if next.indent == indent => {
                    if !is_sequence_item(&self.text[next.content_start()..next.end]) {
                        if indentless {
                            break;
                        }
                        return None;
                    }
                }
                Some(next) if next.indent > indent => return None,
                _ => break,
            }
        }
        self.close_collection(self.next_token_start());
        Some(())
    }

    /// A value that starts at `at` on its line and ends with the line (`line_end`): a plain or
    /// quoted scalar, or a one-line flow sequence.
    fn inline_value(&mut self, at: usize, line_end: usize) -> Option<()> {
        let rest = &self.text[at..line_end];
        match rest.as_bytes().first()? {
            b'[' => {
                let end = self.flow_sequence(at, line_end)?;
                only_spaces(&self.text[end..line_end]).then_some(())
            }
            b'"' | b'\'' => {
                let (inner, end) = quoted_scalar(self.text, at, line_end)?;
                if !only_spaces(&self.text[end..line_end]) {
                    return None;
                }
                self.sink.scalar(inner, Style::Quoted, at..end);
                Some(())
            }
            _ => {
                let value = rest.trim_end_matches(' ');
                if !plain_scalar_ok(value) || mapping_colon(value).is_some() {
                    return None;
                }
                self.sink.scalar(value, Style::Plain, at..at + value.len());
                Some(())
            }
        }
    }

    /// `[a, "b", c]` on one line, from the `[` at `at`; returns the offset after the `]`.
    fn flow_sequence(&mut self, at: usize, line_end: usize) -> Option<usize> {
        self.open_collection()?;
        self.sink.start_sequence(true, at);
        let bytes = self.text.as_bytes();
        let mut position = skip_spaces(bytes, at + 1, line_end);
        if bytes.get(position) == Some(&b']') && position < line_end {
            self.close_collection(position + 1);
            return Some(position + 1);
        }
        loop {
            if position >= line_end {
                return None;
            }
            position = match bytes[position] {
                b'"' | b'\'' => {
                    let (inner, end) = quoted_scalar(self.text, position, line_end)?;
                    self.sink.scalar(inner, Style::Quoted, position..end);
                    end
                }
                _ => {
                    let length = self.text[position..line_end]
                        .find([',', ']'])
                        .unwrap_or(line_end - position);
                    let item = self.text[position..position + length].trim_end_matches(' ');
                    if !plain_scalar_ok(item) || item.contains([':', '[', '{', '}', '"', '\'']) {
                        return None;
                    }
                    self.sink
                        .scalar(item, Style::Plain, position..position + item.len());
                    position + length
                }
            };
            position = skip_spaces(bytes, position, line_end);
            match bytes.get(position) {
                Some(b',') if position < line_end => {
                    position = skip_spaces(bytes, position + 1, line_end);
                    if matches!(bytes.get(position), Some(b']' | b',')) {
                        return None;
                    }
                }
                Some(b']') if position < line_end => {
                    self.close_collection(position + 1);
                    return Some(position + 1);
                }
                _ => return None,
            }
        }
    }
}

/// Where the content of a `- item` line starts (after the dash and its spaces); `None` when the
/// line is not an item with content.
fn item_content_start(text: &str, line: Line) -> Option<usize> {
    let content = &text[line.content_start()..line.end];
    if !is_sequence_item(content) {
        return None;
    }
    let after_dash = &content[1..];
    let spaces = after_dash.len() - after_dash.trim_start_matches(' ').len();
    (spaces < after_dash.len()).then_some(line.content_start() + 1 + spaces)
}

/// `- something` (a dash, a space, then more).
fn is_sequence_item(content: &str) -> bool {
    content.starts_with("- ") && !only_spaces(&content[2..])
}

/// The offset of the colon that makes `content` a `key: value` (or `key:`) line: the first
/// colon followed by a space or ending the content.
fn mapping_colon(content: &str) -> Option<usize> {
    let bytes = content.as_bytes();
    bytes.iter().enumerate().find_map(|(index, &byte)| {
        (byte == b':' && bytes.get(index + 1).is_none_or(|&next| next == b' ')).then_some(index)
    })
}

/// A plain scalar the subset takes as it stands: it starts with a character that cannot open
/// anything else (an indicator, a quote, a bracket), holds no comment marker, and is not empty.
fn plain_scalar_ok(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let first_ok = first.is_ascii_alphanumeric()
        || matches!(first, '_' | '.' | '/' | '(' | '~' | '$' | '+' | '<' | '=')
        || (!first.is_ascii() && first.is_alphabetic());
    first_ok && !text.contains('#')
}

/// A quoted scalar from the quote at `at`, closed on the same line, with no escapes; its text
/// and the offset after the closing quote.
fn quoted_scalar(text: &str, at: usize, line_end: usize) -> Option<(&str, usize)> {
    let quote = text.as_bytes()[at];
    let inner_start = at + 1;
    let length = text[inner_start..line_end].find(char::from(quote))?;
    let inner = &text[inner_start..inner_start + length];
    let end = inner_start + length + 1;
    if (quote == b'"' && inner.contains('\\')) || text.as_bytes().get(end) == Some(&quote) {
        return None;
    }
    Some((inner, end))
}

fn skip_spaces(bytes: &[u8], from: usize, limit: usize) -> usize {
    let mut position = from;
    while position < limit && bytes[position] == b' ' {
        position += 1;
    }
    position
}

fn only_spaces(text: &str) -> bool {
    text.bytes().all(|byte| byte == b' ')
}

#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
#[cfg(test)]
mod tests;
