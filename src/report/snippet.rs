//! Snippets of long lines: a source whose lines longer than [`MAX_SHOWN_LINE_CHARS`] are cut
//! to a window around the spans on them, with `…` where text was left out.
//!
//! Why: miette's graphical handler pads each label to its column with a formatting width, and a
//! width of 65,536 or more panics ("Formatting argument out of range"); and nobody can read a
//! 4 MB line in a terminal anyway. So the snippet shows a window of the line, and the labels
//! point into the window at the same characters they point at in the file.
//!
//! Invariants:
//! - the windowed text has the same lines as the original (miette's line breaks: `\n`, `\r\n`
//!   or a lone `\r`), so line numbers in the gutter stay true;
//! - every offset maps into the windowed text: inside a window to the same character, before
//!   it to the leading `…`, after it to just past the trailing `…`;
//! - the `file:line:column` header names the primary span's place in the original file, as
//!   miette computes it for an uncut source.

use std::ops::Range;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// A line longer than this many characters is shown as a window.
pub const MAX_SHOWN_LINE_CHARS: usize = 160;
/// The characters a window shows.
const WINDOW_CHARS: usize = 120;
/// The characters a window shows before the first span that starts or ends on its line.
const WINDOW_CHARS_BEFORE_ANCHOR: usize = 40;
const ELLIPSIS: &str = "…";

/// One line of the original text and where it went in the windowed text.
#[derive(Debug, Clone)]
struct Line {
    /// Byte range of the line's content (without its line break) in the original.
    start: usize,
    content_end: usize,
    /// The part of the content that is shown (all of it for a line that is not cut).
    window: Range<usize>,
    /// Where the line starts in the windowed text.
    new_start: usize,
}

impl Line {
    fn prefix_len(&self) -> usize {
        if self.window.start > self.start {
            ELLIPSIS.len()
        } else {
            0
        }
    }

    fn suffix_len(&self) -> usize {
        if self.window.end < self.content_end {
            ELLIPSIS.len()
        } else {
            0
        }
    }

    fn new_content_end(&self) -> usize {
        self.new_start + self.prefix_len() + self.window.len() + self.suffix_len()
    }
}

/// A source for miette with its long lines cut to windows.
#[derive(Debug, Clone)]
pub struct WindowedSource {
    text: String,
    original_len: usize,
    lines: Vec<Line>,
    /// The mapped primary span and its `(line, column)` (0-based) in the original, for the
    /// header miette prints above the snippet.
    primary: Option<(SourceSpan, usize, usize)>,
}

impl WindowedSource {
    /// `None` when no line of `text` is longer than [`MAX_SHOWN_LINE_CHARS`]: then the text is
    /// shown as it is. `anchors` are byte offsets in the order of preference: a long line's
    /// window is placed around the first anchor that lies on it (its start when none does).
    pub fn new(text: &str, anchors: &[usize]) -> Option<Self> {
        let raw_lines = split_lines(text);
        if !raw_lines
            .iter()
            .any(|&(start, end, _)| is_long(&text[start..end]))
        {
            return None;
        }
        let mut windowed = String::new();
        let mut lines = Vec::with_capacity(raw_lines.len());
        for (start, content_end, next_start) in raw_lines {
            let content = &text[start..content_end];
            let window = if is_long(content) {
                let anchor = anchors
                    .iter()
                    .copied()
                    .find(|&anchor| (start..=content_end).contains(&anchor))
                    .unwrap_or(start);
                window_around(text, start..content_end, anchor)
            } else {
                start..content_end
            };
            let line = Line {
                start,
                content_end,
                window,
                new_start: windowed.len(),
            };
            if line.prefix_len() > 0 {
                windowed.push_str(ELLIPSIS);
            }
            windowed.push_str(&text[line.window.clone()]);
            if line.suffix_len() > 0 {
                windowed.push_str(ELLIPSIS);
            }
            windowed.push_str(&text[content_end..next_start]);
            lines.push(line);
        }
        Some(Self {
            text: windowed,
            original_len: text.len(),
            lines,
            primary: None,
        })
    }

    /// Where an offset of the original text lands in the windowed text.
    pub fn map_offset(&self, offset: usize) -> usize {
        if offset > self.original_len {
            return self.text.len() + (offset - self.original_len);
        }
        let index = self
            .lines
            .partition_point(|line| line.start <= offset)
            .saturating_sub(1);
        let Some(line) = self.lines.get(index) else {
            return offset;
        };
        if offset > line.content_end {
            return line.new_content_end() + (offset - line.content_end);
        }
        if offset < line.window.start {
            line.new_start
        } else if offset <= line.window.end {
            line.new_start + line.prefix_len() + (offset - line.window.start)
        } else {
            line.new_content_end()
        }
    }

    pub fn map_span(&self, span: &Range<usize>) -> Range<usize> {
        let start = self.map_offset(span.start);
        start..self.map_offset(span.end).max(start)
    }

    /// Make the header above the snippet name `original`'s place in `original_text` (miette
    /// would otherwise count columns in the windowed line).
    pub fn set_primary(&mut self, original_text: &str, original: &Range<usize>) {
        let span = SourceSpan::from(original.start..original.end.max(original.start));
        let Ok(contents) = original_text.read_span(&span, 0, 0) else {
            return;
        };
        let mapped = self.map_span(original);
        self.primary = Some((SourceSpan::from(mapped), contents.line(), contents.column()));
    }
}

impl SourceCode for WindowedSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        match &self.primary {
            Some((primary, line, column))
                if primary == span && context_lines_before == 0 && context_lines_after == 0 =>
            {
                let read = *contents.span();
                let data = &self.text.as_bytes()[read.offset()..read.offset() + read.len()];
                Ok(Box::new(MietteSpanContents::new(
                    data,
                    read,
                    *line,
                    *column,
                    contents.line_count(),
                )))
            }
            _ => Ok(contents),
        }
    }
}

fn is_long(content: &str) -> bool {
    content.len() > MAX_SHOWN_LINE_CHARS && content.chars().count() > MAX_SHOWN_LINE_CHARS
}

/// `(content start, content end, next line start)` of every line, split where miette splits:
/// at `\n`, `\r\n` and a lone `\r`. The last line may be empty.
fn split_lines(text: &str) -> Vec<(usize, usize, usize)> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    for index in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        // A `\n` before `start` is the second byte of a `\r\n` already taken.
        if index < start {
            continue;
        }
        let crlf = bytes[index] == b'\r' && bytes.get(index + 1) == Some(&b'\n');
        let next = index + 1 + usize::from(crlf);
        lines.push((start, index, next));
        start = next;
    }
    lines.push((start, bytes.len(), bytes.len()));
    lines
}

/// The byte range of [`WINDOW_CHARS`] characters of `text[line]` that starts
/// [`WINDOW_CHARS_BEFORE_ANCHOR`] characters before `anchor` (or earlier, to stay full at the
/// end of the line). Both ends are character boundaries.
fn window_around(text: &str, line: Range<usize>, anchor: usize) -> Range<usize> {
    let mut anchor = anchor.clamp(line.start, line.end);
    while !text.is_char_boundary(anchor) {
        anchor -= 1;
    }
    let start = text[line.start..anchor]
        .char_indices()
        .rev()
        .nth(WINDOW_CHARS_BEFORE_ANCHOR - 1)
        .map_or(line.start, |(index, _)| line.start + index);
    let end = chars_after(text, start, line.end, WINDOW_CHARS);
    if end < line.end {
        return start..end;
    }
    let full_start = text[line.start..line.end]
        .char_indices()
        .rev()
        .nth(WINDOW_CHARS - 1)
        .map_or(line.start, |(index, _)| line.start + index);
    full_start.min(start)..line.end
}

/// The byte offset `count` characters after `from`, or `limit` if the text ends first.
fn chars_after(text: &str, from: usize, limit: usize, count: usize) -> usize {
    text[from..limit]
        .char_indices()
        .nth(count)
        .map_or(limit, |(index, _)| from + index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_left_alone() {
        assert!(WindowedSource::new("a: b\nc: d\n", &[0]).is_none());
        let line = "x".repeat(MAX_SHOWN_LINE_CHARS);
        assert!(WindowedSource::new(&line, &[0]).is_none());
    }

    #[test]
    fn a_long_line_is_cut_around_the_anchor_and_offsets_follow() {
        let text = format!(
            "key: {}TARGET{}\nnext: line\n",
            "a".repeat(1000),
            "b".repeat(1000)
        );
        let target = text.find("TARGET").unwrap();
        let source = WindowedSource::new(&text, &[target]).unwrap();
        let shown = source.text.as_str();
        let first_line = shown.lines().next().unwrap();
        assert!(first_line.starts_with(ELLIPSIS) && first_line.ends_with(ELLIPSIS));
        assert_eq!(first_line.chars().count(), WINDOW_CHARS + 2);
        assert!(shown.ends_with("\nnext: line\n"));
        let mapped = source.map_span(&(target..target + 6));
        assert_eq!(&shown[mapped], "TARGET");
        let next = text.find("next").unwrap();
        assert_eq!(&shown[source.map_offset(next)..][..4], "next");
    }

    #[test]
    fn offsets_outside_the_window_land_on_the_ellipses() {
        let text = format!("{}\n", "é".repeat(500));
        let anchor = text.char_indices().nth(250).unwrap().0;
        let source = WindowedSource::new(&text, &[anchor]).unwrap();
        let shown = source.text.as_str();
        assert_eq!(source.map_offset(0), 0);
        assert!(shown[..source.map_offset(anchor)].starts_with(ELLIPSIS));
        let end = text.len() - 1;
        assert_eq!(source.map_offset(end), shown.len() - 1);
        assert_eq!(source.map_offset(text.len()), shown.len());
        // A span that runs past the window ends after the trailing ellipsis.
        let span = source.map_span(&(anchor..end));
        assert!(shown[span].ends_with(ELLIPSIS));
    }

    #[test]
    fn the_end_of_a_line_keeps_a_full_window() {
        let text = "z".repeat(1000);
        let source = WindowedSource::new(&text, &[999]).unwrap();
        assert_eq!(source.text.as_str().chars().count(), WINDOW_CHARS + 1);
        assert!(source.text.as_str().starts_with(ELLIPSIS));
        assert_eq!(source.map_offset(999), source.text.as_str().len() - 1);
    }

    #[test]
    fn line_breaks_are_split_as_miette_splits_them() {
        assert_eq!(
            split_lines("a\r\nb\rc\n"),
            [(0, 1, 3), (3, 4, 5), (5, 6, 7), (7, 7, 7)]
        );
        assert_eq!(
            split_lines("\r\r\n\n"),
            [(0, 0, 1), (1, 1, 3), (3, 3, 4), (4, 4, 4)]
        );
        assert_eq!(split_lines("x"), [(0, 1, 1)]);
    }

    #[test]
    fn the_header_names_the_original_place() {
        let text = format!("id: x\nkey: {} # c\n", "v".repeat(70_000));
        let hash = text.find('#').unwrap();
        let mut source = WindowedSource::new(&text, &[hash]).unwrap();
        source.set_primary(&text, &(hash..hash + 3));
        let mapped = SourceSpan::from(source.map_span(&(hash..hash + 3)));
        let contents = source.read_span(&mapped, 0, 0).unwrap();
        assert_eq!((contents.line(), contents.column()), (1, hash - 6));
    }
}
