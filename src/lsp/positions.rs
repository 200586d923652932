//! Byte spans of the compile ↔ the protocol's line and column positions, and the editor's
//! incremental edits applied to a document's text.
//!
//! The compile's spans are byte ranges; the protocol counts columns in the negotiated
//! `positionEncoding` (UTF-16 unless the client offers UTF-8 or UTF-32), so every conversion
//! goes through `syntax::frontmatter::LineIndex` with a `ColumnUnit`. No position a client
//! sends can panic: out-of-range lines and columns are clamped (see `LineIndex::offset`).

use std::ops::Range;

use lsp_types::{
    ClientCapabilities, Position, PositionEncodingKind, TextDocumentContentChangeEvent,
};

use crate::compile::syntax::frontmatter::{ColumnUnit, LineIndex};

/// The column unit to use with a client: UTF-8 when it offers it (no conversion at all), else
/// UTF-16 (the protocol's default, which every client supports), else UTF-32 when that is all
/// it offers.
pub fn negotiate_encoding(capabilities: &ClientCapabilities) -> (ColumnUnit, PositionEncodingKind) {
    let offered = capabilities
        .general
        .as_ref()
        .and_then(|general| general.position_encodings.clone())
        .unwrap_or_default();
    if offered.contains(&PositionEncodingKind::UTF8) {
        (ColumnUnit::Utf8Bytes, PositionEncodingKind::UTF8)
    } else if !offered.contains(&PositionEncodingKind::UTF16)
        && offered.contains(&PositionEncodingKind::UTF32)
    {
        (ColumnUnit::Utf32Chars, PositionEncodingKind::UTF32)
    } else {
        (ColumnUnit::Utf16CodeUnits, PositionEncodingKind::UTF16)
    }
}

/// One text with its line index, for converting many positions.
pub struct TextPositions<'a> {
    text: &'a str,
    index: LineIndex,
    unit: ColumnUnit,
}

impl<'a> TextPositions<'a> {
    pub fn new(text: &'a str, unit: ColumnUnit) -> Self {
        Self {
            text,
            index: LineIndex::new(text),
            unit,
        }
    }

    pub fn position(&self, offset: usize) -> Position {
        let (line, column) = self.index.position(self.text, offset, self.unit);
        Position::new(saturating_u32(line), saturating_u32(column))
    }

    pub fn range(&self, span: &Range<usize>) -> lsp_types::Range {
        lsp_types::Range::new(self.position(span.start), self.position(span.end))
    }

    pub fn offset(&self, position: Position) -> usize {
        self.index.offset(
            self.text,
            position.line as usize,
            position.character as usize,
            self.unit,
        )
    }

    /// The byte range of a protocol range, start and end in order.
    pub fn span(&self, range: lsp_types::Range) -> Range<usize> {
        let start = self.offset(range.start);
        let end = self.offset(range.end);
        start.min(end)..start.max(end)
    }
}

/// The protocol carries `u32`s; no file the compile accepts (4 MiB at most) comes near.
fn saturating_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Apply one `didChange` content change: a whole new text, or a range replaced.
pub fn apply_change(text: &mut String, change: TextDocumentContentChangeEvent, unit: ColumnUnit) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let span = TextPositions::new(text, unit).span(range);
            text.replace_range(span, &change.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(
        range: Option<((u32, u32), (u32, u32))>,
        text: &str,
    ) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: range.map(|((l1, c1), (l2, c2))| {
                lsp_types::Range::new(Position::new(l1, c1), Position::new(l2, c2))
            }),
            range_length: None,
            text: text.to_owned(),
        }
    }

    #[test]
    fn incremental_edits_after_non_ascii_text_land_where_the_editor_meant() {
        // "é" is one UTF-16 unit and two bytes; "𝄞" two units and four bytes.
        let mut text = "name: é𝄞 x\nsensors: [lintr]\n".to_owned();
        apply_change(
            &mut text,
            change(Some(((0, 6), (0, 7))), "y"),
            ColumnUnit::Utf16CodeUnits,
        );
        assert_eq!(text, "name: y𝄞 x\nsensors: [lintr]\n");
        apply_change(
            &mut text,
            change(Some(((1, 10), (1, 15))), "linter"),
            ColumnUnit::Utf16CodeUnits,
        );
        assert_eq!(text, "name: y𝄞 x\nsensors: [linter]\n");
        apply_change(
            &mut text,
            change(Some(((0, 7), (0, 11))), ""),
            ColumnUnit::Utf8Bytes,
        );
        assert_eq!(text, "name: y x\nsensors: [linter]\n");
        apply_change(&mut text, change(None, "whole"), ColumnUnit::Utf16CodeUnits);
        assert_eq!(text, "whole");
    }

    #[test]
    fn ranges_beyond_the_text_or_reversed_are_clamped() {
        let mut text = "ab\n".to_owned();
        apply_change(
            &mut text,
            change(Some(((9, 9), (0, 1))), "X"),
            ColumnUnit::Utf16CodeUnits,
        );
        assert_eq!(text, "aX");
        let positions = TextPositions::new("a𝄞", ColumnUnit::Utf16CodeUnits);
        assert_eq!(
            positions.range(&(1..5)),
            lsp_types::Range::new(Position::new(0, 1), Position::new(0, 3))
        );
    }
}
