//! The JavaScript string semantics the reference's file formats rely on: what `trim` removes
//! and what `.` in a regular expression does not match. Every port of a reference rule that
//! trims or splits text uses these, so the engines agree on the same bytes.

/// A JavaScript line terminator: `\n`, `\r`, U+2028, U+2029.
pub fn is_js_line_terminator(character: char) -> bool {
    matches!(character, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// JavaScript white space (what `String.prototype.trim` removes): Unicode spaces, U+FEFF and
/// the line terminators, but not U+0085 (which Rust's `char::is_whitespace` includes).
pub fn is_js_whitespace(character: char) -> bool {
    matches!(
        character,
        '\t' | '\u{b}' | '\u{c}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    ) || is_js_line_terminator(character)
}

/// JavaScript's `String.prototype.trim`.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// JavaScript's `String.prototype.trimStart`.
pub fn js_trim_start(text: &str) -> &str {
    text.trim_start_matches(is_js_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_what_javascript_trims() {
        assert_eq!(js_trim("\u{feff}\u{a0} x \u{2028}\t"), "x");
        assert_eq!(js_trim("\u{85}x\u{85}"), "\u{85}x\u{85}");
        assert_eq!(js_trim_start("\u{3000} x "), "x ");
    }

    #[test]
    fn agrees_with_rust_white_space_except_nel_and_bom() {
        for code in 0..=0x3000_u32 {
            let Some(character) = char::from_u32(code) else {
                continue;
            };
            let rust =
                (character.is_whitespace() && character != '\u{85}') || character == '\u{feff}';
            assert_eq!(is_js_whitespace(character), rust, "U+{code:04X}");
        }
    }
}
