//! `JSON.stringify(value, null, 2)` written straight into a buffer, for the two output files whose
//! shape the compile knows field by field: no `serde_json::Value` tree is built and dropped per
//! stage, and every piece lands in the one buffer that becomes the file. What this saves a
//! compile over `pretty_json` of a value per node is measured by `benches/twins.sh` (the figures
//! are in `benches/whole_process.rs`).
//!
//! Invariant: for the values it is given, the bytes equal `js_json::pretty_json` of the same
//! value (tests compare both on every node and grid they can generate). That holds because the
//! callers only write strings, booleans, whole numbers no larger than 2^53 and objects whose
//! keys are not array indices in the order JavaScript would enumerate them; anything else (a
//! `produces_kinds` map, whose artifact names may be array indices) is written through
//! [`PrettyWriter::value`], which takes `pretty_json`'s path.

use serde_json::Value;

use crate::leaves::js_json::pretty_json;

/// A pretty-printing JSON writer over a `String`, two spaces per level, starting at `depth`
/// levels of indentation (the layout of an element nested that deep in a larger document).
pub struct PrettyWriter<'o> {
    out: &'o mut String,
    depth: usize,
    /// Per open container: whether it has an element yet.
    has_elements: Vec<bool>,
}

impl<'o> PrettyWriter<'o> {
    pub fn new(out: &'o mut String, depth: usize) -> Self {
        Self {
            out,
            depth,
            has_elements: Vec::new(),
        }
    }

    /// A writer that continues an object opened at `depth` whose first fields were written
    /// by another writer: the next key is preceded by a comma, and [`Self::end_object`]
    /// closes it at `depth`. Lets a memoised tail of an object be written apart from its head.
    pub fn continuing_object(out: &'o mut String, depth: usize) -> Self {
        Self {
            out,
            depth: depth + 1,
            has_elements: vec![true],
        }
    }

    pub fn begin_object(&mut self) {
        self.out.push('{');
        self.open();
    }

    pub fn end_object(&mut self) {
        self.close('}');
    }

    pub fn begin_array(&mut self) {
        self.out.push('[');
        self.open();
    }

    pub fn end_array(&mut self) {
        self.close(']');
    }

    /// `"key": ` on a new line of the open object; the value follows.
    pub fn key(&mut self, key: &str) {
        self.element();
        push_json_string(self.out, key);
        self.out.push_str(": ");
    }

    pub fn bool(&mut self, value: bool) {
        self.out.push_str(if value { "true" } else { "false" });
    }

    /// Any JSON value, exactly as `pretty_json` prints it at this depth.
    pub fn value(&mut self, value: &Value) {
        let text = pretty_json(value);
        let indent = self.indent_width();
        for (index, line) in text.split('\n').enumerate() {
            if index > 0 {
                self.out.push('\n');
                push_spaces(self.out, indent);
            }
            self.out.push_str(line);
        }
    }

    /// `"key": "text"`.
    pub fn string_field(&mut self, key: &str, text: &str) {
        self.key(key);
        push_json_string(self.out, text);
    }

    /// `"key": [ "a", "b" ]` over strings.
    pub fn string_list_field<'s>(&mut self, key: &str, items: impl IntoIterator<Item = &'s str>) {
        self.key(key);
        self.begin_array();
        for item in items {
            self.element();
            push_json_string(self.out, item);
        }
        self.end_array();
    }

    fn open(&mut self) {
        self.depth += 1;
        self.has_elements.push(false);
    }

    fn close(&mut self, bracket: char) {
        let had_elements = self.has_elements.pop().unwrap_or(false);
        self.depth = self.depth.saturating_sub(1);
        if had_elements {
            self.out.push('\n');
            push_spaces(self.out, self.indent_width());
        }
        self.out.push(bracket);
    }

    /// The prefix of the next element of the open container (after a comma when it has one); the
    /// value follows.
    pub fn element(&mut self) {
        if let Some(has_elements) = self.has_elements.last_mut() {
            if *has_elements {
                self.out.push(',');
            }
            *has_elements = true;
        }
        self.out.push('\n');
        push_spaces(self.out, self.indent_width());
    }

    fn indent_width(&self) -> usize {
        self.depth * 2
    }
}

fn push_spaces(out: &mut String, width: usize) {
    const SPACES: &str = "                                ";
    let mut left = width;
    while left > 0 {
        let take = left.min(SPACES.len());
        out.push_str(&SPACES[..take]);
        left -= take;
    }
}

/// A JSON string literal as `JSON.stringify` writes it: `"` and `\` escaped, the C0 controls as
/// `\b \t \n \f \r` or `\u00xx` (lower-case hex), everything else (`/`, DEL, any non-ASCII
/// character) as itself.
pub fn push_json_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(offset) = first_byte_to_escape(&bytes[start..]) {
        let index = start + offset;
        let byte = bytes[index];
        // Every escaped byte is ASCII, so `index` is a character boundary.
        out.push_str(&text[start..index]);
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(byte >> 4)]));
                out.push(char::from(HEX[usize::from(byte & 0x0f)]));
            }
        }
        start = index + 1;
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// Whether `byte` is written escaped: `"`, `\` or a C0 control.
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The offset of the first byte of `bytes` that [`needs_escape`], eight bytes at a time: most
/// strings of a graph (slugs, paths, prose) hold none, and this scan is most of the cost of
/// writing them. A word with no flagged byte has none to escape (the flags have no false
/// negatives); a flagged word is searched byte by byte, so a false positive costs only time.
fn first_byte_to_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let has_zero_byte = |word: u64| word.wrapping_sub(ONES) & !word & HIGH_BITS;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("chunks of eight bytes"));
        let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH_BITS;
        let flags = below_space
            | has_zero_byte(word ^ (ONES * u64::from(b'"')))
            | has_zero_byte(word ^ (ONES * u64::from(b'\\')));
        if flags != 0
            && let Some(position) = chunk.iter().position(|&byte| needs_escape(byte))
        {
            return Some(offset + position);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&byte| needs_escape(byte))
        .map(|position| offset + position)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn written(depth: usize, write: impl FnOnce(&mut PrettyWriter<'_>)) -> String {
        let mut out = String::new();
        write(&mut PrettyWriter::new(&mut out, depth));
        out
    }

    #[test]
    fn every_ascii_and_some_other_characters_escape_as_json_stringify_does() {
        let mut text: String = (0u8..0x80).map(char::from).collect();
        text.push_str("é — \u{2028}\u{2029}\u{feff}😀");
        let mut out = String::new();
        push_json_string(&mut out, &text);
        assert_eq!(out, pretty_json(&json!(text)));
    }

    #[test]
    fn nested_containers_match_pretty_json_at_any_depth() {
        let value = json!({
            "a": "x",
            "empty_list": [],
            "empty_object": {},
            "list": ["p", "q"],
            "objects": [{"k": true, "l": false}, {}],
            "nested": {"0": 1, "b": [[], ["z"]]},
        });
        for depth in 0..3 {
            let text = written(depth, |writer| writer.value(&value));
            let expected = pretty_json(&value).replace('\n', &format!("\n{}", "  ".repeat(depth)));
            assert_eq!(text, expected);
        }
        let by_hand = written(0, |writer| {
            writer.begin_object();
            writer.string_field("a", "x");
            writer.string_list_field("empty_list", []);
            writer.key("empty_object");
            writer.begin_object();
            writer.end_object();
            writer.string_list_field("list", ["p", "q"]);
            writer.key("objects");
            writer.begin_array();
            writer.element();
            writer.begin_object();
            writer.key("k");
            writer.bool(true);
            writer.key("l");
            writer.bool(false);
            writer.end_object();
            writer.element();
            writer.begin_object();
            writer.end_object();
            writer.end_array();
            writer.key("nested");
            writer.value(&json!({"0": 1, "b": [[], ["z"]]}));
            writer.end_object();
        });
        assert_eq!(by_hand, pretty_json(&value));
    }

    proptest! {
        #[test]
        fn any_string_escapes_as_pretty_json(text in any::<String>()) {
            let mut out = String::new();
            push_json_string(&mut out, &text);
            prop_assert_eq!(out, pretty_json(&json!(text)));
        }

        /// Long runs of plain bytes with an escape at any offset of an eight-byte word, and
        /// bytes just around the escaped ranges (`!`, `#`, `[`, `]`, 0x1f, 0x20, DEL, non-ASCII).
        #[test]
        fn escapes_at_every_offset_of_a_word_are_found(
            text in "[a-z!#\\[\\] \u{1f}\u{7f}é\"\\\\\n\t\u{1}\u{8}\u{c}]{0,40}",
        ) {
            let mut out = String::new();
            push_json_string(&mut out, &text);
            prop_assert_eq!(out, pretty_json(&json!(text)));
        }

        #[test]
        fn string_lists_match_pretty_json(
            items in proptest::collection::vec(any::<String>(), 0..4),
            depth in 0usize..4,
        ) {
            let text = written(depth, |writer| {
                writer.begin_object();
                writer.string_list_field("k", items.iter().map(String::as_str));
                writer.end_object();
            });
            let expected = pretty_json(&json!({ "k": items }))
                .replace('\n', &format!("\n{}", "  ".repeat(depth)));
            prop_assert_eq!(text, expected);
        }
    }
}
