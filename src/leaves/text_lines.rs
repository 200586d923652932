//! Positions in a text, for every module that names a place in one: the 1-based line and
//! column of a byte offset, and the lines of a text with the byte offset each starts at.
//!
//! Lines end at `\n`. Pure functions over `&str`; nothing here panics on any offset.

/// 1-based `(line, column)` of a byte offset (clamped to the text); the column counts
/// characters, or bytes when the offset is inside a character.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line_start = before
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |newline| newline + 1);
    // One more piece than line breaks: the line the offset is on.
    let line = before.split(|byte| *byte == b'\n').count();
    let column = text
        .get(line_start..offset)
        .map_or(offset - line_start, |part| part.chars().count());
    (line, column + 1)
}

/// Each line of `text` (its `\n` kept, as `split_inclusive('\n')` gives it) with the byte
/// offset where it starts.
pub fn lines_with_starts(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut next_start = 0;
    text.split_inclusive('\n').map(move |line| {
        let start = next_start;
        next_start += line.len();
        (start, line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters_from_one() {
        let text = "ab\nçd\r\nxyz";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 5), (2, 2), "ç is one character");
        assert_eq!(line_column(text, 4), (2, 2), "inside ç: bytes");
        assert_eq!(line_column(text, 8), (3, 1));
        assert_eq!(line_column(text, 99), (3, 4), "clamped to the end");
    }

    #[test]
    fn each_line_keeps_its_line_break_and_knows_its_start() {
        let lines: Vec<_> = lines_with_starts("ab\n\r\nc").collect();
        assert_eq!(lines, [(0, "ab\n"), (3, "\r\n"), (5, "c")]);
    }
}
