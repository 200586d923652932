//! Splits a Markdown document into its YAML frontmatter and its body.
//!
//! The frontmatter opens with `---` on the very first line (after an optional UTF-8 BOM) and
//! closes at the first following line that is exactly `---` (trailing spaces and `\r` allowed).
//! Offsets are absolute byte offsets into the original text, BOM included.

use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    /// The YAML between the fences (may be empty).
    pub yaml: Range<usize>,
    /// Where the body starts (just after the closing fence's line break).
    pub body_start: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The first line is not `---`.
    MissingOpeningFence,
    /// `---` opens a block that never closes.
    MissingClosingFence,
}

const BYTE_ORDER_MARK: &str = "\u{feff}";

pub fn split(text: &str) -> Result<Frontmatter, FrontmatterError> {
    let start = if text.starts_with(BYTE_ORDER_MARK) {
        BYTE_ORDER_MARK.len()
    } else {
        0
    };
    let rest = &text[start..];
    let after_open = if rest.starts_with("---\r\n") {
        start + 5
    } else if rest.starts_with("---\n") {
        start + 4
    } else {
        return Err(FrontmatterError::MissingOpeningFence);
    };
    let mut line_start = after_open;
    while line_start <= text.len() {
        // `memchr`, not `str::find`: the set-up of the latter costs more than a short line.
        let line_end = memchr::memchr(b'\n', &text.as_bytes()[line_start..])
            .map_or(text.len(), |i| line_start + i);
        let line = text[line_start..line_end].trim_end_matches([' ', '\t', '\r']);
        if line == "---" {
            let body_start = (line_end + 1).min(text.len());
            return Ok(Frontmatter {
                yaml: after_open..line_start,
                body_start,
            });
        }
        if line_end >= text.len() {
            break;
        }
        line_start = line_end + 1;
    }
    Err(FrontmatterError::MissingClosingFence)
}

/// Maps byte offsets to 1-based line and column numbers (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { line_starts }
    }

    /// The 0-based line of byte `offset` (an offset past the end is on the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    /// The 0-based lines `span` touches (a span ending with its line feed ends on that line).
    pub fn lines_of(&self, span: &std::ops::Range<usize>) -> std::ops::RangeInclusive<usize> {
        let last = span.end.max(span.start + 1) - 1;
        self.line_of(span.start)..=self.line_of(last)
    }

    /// 0-based `(line, column)` of a byte offset, the column counted in `unit` (what an editor
    /// protocol sends). An offset past the end is the end; one inside a character is that
    /// character's start.
    pub fn position(&self, text: &str, offset: usize, unit: ColumnUnit) -> (usize, usize) {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let line_start = self.line_starts[line];
        let width = text[line_start..offset]
            .chars()
            .map(|c| unit.char_width(c))
            .sum();
        (line, width)
    }

    /// The byte offset of a 0-based `(line, column)` whose column counts `unit`s. Never fails,
    /// so that no position an editor sends can panic: a line past the end gives the end of the
    /// text, a column past the end of its line the line's end (before `\r\n` or `\n`), and a
    /// column inside a character (half a UTF-16 surrogate pair) that character's start.
    pub fn offset(&self, text: &str, line: usize, column: usize, unit: ColumnUnit) -> usize {
        let Some(&line_start) = self.line_starts.get(line) else {
            return text.len();
        };
        let line_end = self
            .line_starts
            .get(line + 1)
            .map_or(text.len(), |&next| next - 1);
        let content = text[line_start..line_end].trim_end_matches('\r');
        let mut counted = 0;
        for (index, character) in content.char_indices() {
            let width = unit.char_width(character);
            if counted + width > column {
                return line_start + index;
            }
            counted += width;
        }
        line_start + content.len()
    }
}

/// How a protocol counts the columns of a line: the LSP's `positionEncoding` (`utf-8`,
/// `utf-16`, the protocol's default, or `utf-32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    Utf8Bytes,
    Utf16CodeUnits,
    Utf32Chars,
}

impl ColumnUnit {
    fn char_width(self, character: char) -> usize {
        match self {
            ColumnUnit::Utf8Bytes => character.len_utf8(),
            ColumnUnit::Utf16CodeUnits => character.len_utf16(),
            ColumnUnit::Utf32Chars => 1,
        }
    }
}

/// The largest character boundary at or below `offset` (which is at most `text.len()`).
fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lf_crlf_and_bom() {
        let text = "---\nid: x\n---\nbody\n";
        let fm = split(text).unwrap();
        assert_eq!(&text[fm.yaml.clone()], "id: x\n");
        assert_eq!(&text[fm.body_start..], "body\n");
        let crlf = "\u{feff}---\r\nid: x\r\n---\r\nbody";
        let fm = split(crlf).unwrap();
        assert_eq!(&crlf[fm.yaml], "id: x\r\n");
    }

    #[test]
    fn empty_block_and_missing_fences() {
        assert_eq!(split("---\n---\n").unwrap().yaml, 4..4);
        assert_eq!(
            split("# title\n"),
            Err(FrontmatterError::MissingOpeningFence)
        );
        assert_eq!(
            split("---\nid: x\n"),
            Err(FrontmatterError::MissingClosingFence)
        );
        assert_eq!(
            split("---\nid: x\n----\n"),
            Err(FrontmatterError::MissingClosingFence)
        );
    }

    #[test]
    fn protocol_positions_count_each_unit() {
        // `é` is 2 bytes and 1 UTF-16 unit; `𝄞` is 4 bytes and 2 UTF-16 units (a surrogate pair).
        let text = "id: é𝄞x\r\nnext\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(text, x, ColumnUnit::Utf8Bytes), (0, 10));
        assert_eq!(index.position(text, x, ColumnUnit::Utf16CodeUnits), (0, 7));
        assert_eq!(index.position(text, x, ColumnUnit::Utf32Chars), (0, 6));
        for unit in [
            ColumnUnit::Utf8Bytes,
            ColumnUnit::Utf16CodeUnits,
            ColumnUnit::Utf32Chars,
        ] {
            let (line, column) = index.position(text, x, unit);
            assert_eq!(index.offset(text, line, column, unit), x, "{unit:?}");
        }
        let next = text.find("next").unwrap();
        assert_eq!(
            index.position(text, next, ColumnUnit::Utf16CodeUnits),
            (1, 0)
        );
        assert_eq!(index.offset(text, 1, 0, ColumnUnit::Utf16CodeUnits), next);
    }

    #[test]
    fn protocol_positions_out_of_range_are_clamped_never_panic() {
        let text = "a𝄞b\r\nc";
        let index = LineIndex::new(text);
        let clef = text.find('𝄞').unwrap();
        // Column 2 in UTF-16 is inside the surrogate pair: the character's start.
        assert_eq!(index.offset(text, 0, 2, ColumnUnit::Utf16CodeUnits), clef);
        // Past the line's end: before the `\r\n`.
        assert_eq!(
            index.offset(text, 0, 99, ColumnUnit::Utf16CodeUnits),
            text.find('\r').unwrap()
        );
        assert_eq!(index.offset(text, 7, 0, ColumnUnit::Utf8Bytes), text.len());
        // An offset inside a character maps to that character's start.
        assert_eq!(
            index.position(text, clef + 1, ColumnUnit::Utf16CodeUnits),
            (0, 1)
        );
        assert_eq!(index.position(text, 999, ColumnUnit::Utf8Bytes), (1, 1));
    }
}
