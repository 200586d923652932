//! JSON text edited in place: a settings file is parsed into a tree of spans over its own bytes,
//! and a change is a few byte ranges replaced, so everything outside them (compact arrays,
//! spacing, key order, a byte-order mark, line endings) stays byte for byte.
//!
//! Invariants:
//! - [`parse`] accepts exactly what `serde_json` accepts (it is asked first, so a malformed
//!   file is reported with its line, column and message), and refuses a key written twice in
//!   one object, naming both lines: a reader keeps one of the two, and which one differs
//!   between tools; nesting is bounded by `serde_json`'s own limit (128 levels), which the
//!   recursive parser here relies on;
//! - an inserted value is laid out like its container: on lines of its own, indented one unit
//!   deeper, when the container spans lines; on the container's line, spaced as the container
//!   is, when it does not;
//! - removing what an insertion added gives back the bytes before the insertion (the separator
//!   and the value go together).
//!
//! Written here rather than with a CST crate: `jsonc-parser` 0.34 (feature `cst`) keeps the bytes
//! it does not touch, but lays out what it inserts its own way, which breaks the invariants
//! above: it writes a nested array on one line inside a multi-line object, spreads an insert
//! into a one-line object over new lines, puts an element appended to a one-line array on lines
//! of its own (and removing it leaves a line break behind), writes `\n` into a container whose
//! line ends in `\r\n`, accepts a key written twice without a word, and refuses a byte-order
//! mark.

use std::ops::Range;

use serde_json::Value;

/// A value and where it is in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// From its first byte to one past its last (`{` to `}` for an object).
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    /// A number, `true`, `false` or `null`: never edited, only kept.
    Scalar,
}

/// One `"key": value` of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_span: Range<usize>,
    pub value: Node,
}

impl Member {
    /// From the key's opening quote to the value's last byte.
    pub fn span(&self) -> Range<usize> {
        self.key_span.start..self.value.span.end
    }
}

impl Node {
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(elements) => Some(elements),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(text) => Some(text),
            _ => None,
        }
    }

    /// The member `key` of an object (keys are unique: [`parse`] refuses duplicates).
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().find(|member| member.key == key)
    }
}

/// Why a text is not a JSON document this module edits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonTextError {
    #[error("{line}:{column}: not valid JSON: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "{line}: the key \"{key}\" is written twice in one object (first on line {first_line}); a reader keeps only one of them"
    )]
    DuplicateKey {
        key: String,
        first_line: usize,
        line: usize,
    },
}

/// The tree of `text` (a leading byte-order mark is skipped; spans count it).
pub fn parse(text: &str) -> Result<Node, JsonTextError> {
    let body_start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    if let Err(error) = serde_json::from_str::<Value>(&text[body_start..]) {
        return Err(JsonTextError::Syntax {
            line: error.line(),
            column: error.column(),
            message: without_position(&error),
        });
    }
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        at: body_start,
    };
    parser.skip_whitespace();
    let root = parser.value()?;
    parser.skip_whitespace();
    if parser.at != parser.bytes.len() {
        return Err(parser.syntax("trailing characters"));
    }
    Ok(root)
}

/// The parser's message without the ` at line L column C` it appends (the error names them).
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message
        .strip_suffix(&suffix)
        .map_or_else(|| message.clone(), str::to_owned)
}

/// The 1-based line of byte `offset`.
pub fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
}

impl Parser<'_> {
    fn syntax(&self, message: &str) -> JsonTextError {
        let line = line_of(self.text, self.at);
        let line_start = self.text[..self.at]
            .rfind('\n')
            .map_or(0, |index| index + 1);
        JsonTextError::Syntax {
            line,
            column: self.text[line_start..self.at].chars().count() + 1,
            message: message.to_owned(),
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), JsonTextError> {
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.syntax(&format!("expected `{}`", char::from(byte))))
        }
    }

    fn value(&mut self) -> Result<Node, JsonTextError> {
        let start = self.at;
        let kind = match self.bytes.get(self.at) {
            Some(b'{') => Kind::Object(self.object()?),
            Some(b'[') => Kind::Array(self.array()?),
            Some(b'"') => Kind::String(self.string()?),
            Some(_) => {
                self.scalar()?;
                Kind::Scalar
            }
            None => return Err(self.syntax("expected value")),
        };
        Ok(Node {
            span: start..self.at,
            kind,
        })
    }

    fn object(&mut self) -> Result<Vec<Member>, JsonTextError> {
        self.expect(b'{')?;
        let mut members: Vec<Member> = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(members);
        }
        loop {
            self.skip_whitespace();
            let key_start = self.at;
            let key = self.string()?;
            let key_span = key_start..self.at;
            if let Some(first) = members.iter().find(|member| member.key == key) {
                return Err(JsonTextError::DuplicateKey {
                    key,
                    first_line: line_of(self.text, first.key_span.start),
                    line: line_of(self.text, key_start),
                });
            }
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            let value = self.value()?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(members);
                }
                _ => return Err(self.syntax("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self) -> Result<Vec<Node>, JsonTextError> {
        self.expect(b'[')?;
        let mut elements = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(elements);
        }
        loop {
            self.skip_whitespace();
            elements.push(self.value()?);
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(elements);
                }
                _ => return Err(self.syntax("expected `,` or `]`")),
            }
        }
    }

    /// A string token, decoded by `serde_json` (which already accepted the whole text).
    fn string(&mut self) -> Result<String, JsonTextError> {
        let start = self.at;
        self.expect(b'"')?;
        loop {
            match self.bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(b'\\') => self.at += 2,
                Some(_) => self.at += 1,
                None => return Err(self.syntax("unterminated string")),
            }
        }
        serde_json::from_str::<String>(&self.text[start..self.at])
            .map_err(|_| self.syntax("invalid string"))
    }

    fn scalar(&mut self) -> Result<(), JsonTextError> {
        let start = self.at;
        while let Some(byte) = self.bytes.get(self.at) {
            if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.at += 1;
        }
        if start == self.at {
            Err(self.syntax("expected value"))
        } else {
            Ok(())
        }
    }
}

/// One replaced range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

/// `text` with `edits` applied; the edits do not overlap (two inserts at one offset apply in
/// the order given).
pub fn apply_edits(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|edit| (edit.range.start, edit.range.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for edit in &edits {
        debug_assert!(edit.range.start >= at, "overlapping edits: {edits:?}");
        out.push_str(&text[at..edit.range.start]);
        out.push_str(&edit.text);
        at = edit.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// How a file is laid out, for the values inserted into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// One level of indentation (the first indented line's, or two spaces).
    pub indent: String,
    /// `\r\n` when the file uses it, else `\n`.
    pub newline: &'static str,
}

impl Layout {
    /// The layout of `text`; an empty text gets two spaces and `\n`.
    pub fn of(text: &str) -> Self {
        let indent = text
            .lines()
            .skip(1)
            .map(|line| {
                let width = line.len() - line.trim_start_matches([' ', '\t']).len();
                &line[..width]
            })
            .find(|indent| !indent.is_empty())
            .map_or_else(|| "  ".to_owned(), str::to_owned);
        // A file indented with tabs is indented with one tab per level.
        let indent = if indent.starts_with('\t') {
            "\t".to_owned()
        } else {
            indent
        };
        Self {
            indent,
            newline: if text.contains("\r\n") { "\r\n" } else { "\n" },
        }
    }

    /// A whole new document holding `value`, pretty, with a final newline.
    pub fn document(&self, value: &Value) -> String {
        let mut text = String::new();
        self.write_pretty(value, "", &mut text);
        text.push_str(self.newline);
        text
    }

    fn write_pretty(&self, value: &Value, base: &str, out: &mut String) {
        let deeper = format!("{base}{}", self.indent);
        match value {
            Value::Object(map) if !map.is_empty() => {
                out.push('{');
                for (index, (key, item)) in map.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    out.push_str(self.newline);
                    out.push_str(&deeper);
                    out.push_str(&Value::from(key.as_str()).to_string());
                    out.push_str(": ");
                    self.write_pretty(item, &deeper, out);
                }
                out.push_str(self.newline);
                out.push_str(base);
                out.push('}');
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    out.push_str(self.newline);
                    out.push_str(&deeper);
                    self.write_pretty(item, &deeper, out);
                }
                out.push_str(self.newline);
                out.push_str(base);
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

/// How an inserted value is written on one line: spaced after `:` and `,` or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Compact {
    colon_space: bool,
    comma_space: bool,
}

impl Compact {
    /// The spacing `container` (a one-line object or array) already uses.
    fn of(text: &str, container: &Node) -> Self {
        let inner = &text[container.span.clone()];
        Self {
            colon_space: inner.contains(": ") || !inner.contains(':'),
            comma_space: inner.contains(", ") || !inner.contains(','),
        }
    }

    fn write(self, value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                out.push('{');
                for (index, (key, item)) in map.iter().enumerate() {
                    if index > 0 {
                        out.push_str(if self.comma_space { ", " } else { "," });
                    }
                    out.push_str(&Value::from(key.as_str()).to_string());
                    out.push_str(if self.colon_space { ": " } else { ":" });
                    self.write(item, out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push_str(if self.comma_space { ", " } else { "," });
                    }
                    self.write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

/// The indentation of the line `offset` is on.
fn indent_of_line_at(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind('\n').map_or(0, |index| index + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Whether `node` spans more than one line.
fn spans_lines(text: &str, node: &Node) -> bool {
    text[node.span.clone()].contains('\n')
}

/// The edit that adds `key: value` as the last member of `object`.
pub fn insert_member(text: &str, layout: &Layout, object: &Node, key: &str, value: &Value) -> Edit {
    let members = object.members().unwrap_or_default();
    let key_text = Value::from(key).to_string();
    match members {
        [] => fill_empty(text, layout, object, |base, out| {
            out.push_str(&key_text);
            out.push_str(": ");
            write_value(text, layout, object, value, base, out);
        }),
        [first, ..] => {
            let last = members.last().unwrap_or(first);
            // The separator and the key-value spacing of the members already there.
            let spans: Vec<Range<usize>> = members.iter().map(Member::span).collect();
            let separator = separator_of(text, object, &spans);
            let colon = &text[first.key_span.end..first.value.span.start];
            let base = indent_of_line_at(text, first.key_span.start);
            let mut inserted = String::from(",");
            inserted.push_str(separator);
            inserted.push_str(&key_text);
            inserted.push_str(colon);
            write_value(text, layout, object, value, base, &mut inserted);
            Edit {
                range: last.value.span.end..last.value.span.end,
                text: inserted,
            }
        }
    }
}

/// The edit that adds `value` as the last element of `array`.
pub fn append_element(text: &str, layout: &Layout, array: &Node, value: &Value) -> Edit {
    let elements = array.elements().unwrap_or_default();
    match elements {
        [] => fill_empty(text, layout, array, |base, out| {
            write_value(text, layout, array, value, base, out);
        }),
        [first, ..] => {
            let last = elements.last().unwrap_or(first);
            let spans: Vec<Range<usize>> = elements.iter().map(|node| node.span.clone()).collect();
            let separator = separator_of(text, array, &spans);
            let base = indent_of_line_at(text, first.span.start);
            let mut inserted = String::from(",");
            inserted.push_str(separator);
            write_value(text, layout, array, value, base, &mut inserted);
            Edit {
                range: last.span.end..last.span.end,
                text: inserted,
            }
        }
    }
}

/// What goes between a comma and the next item in `container` (whose items are at `spans`):
/// what follows the last comma, or what precedes the only item.
fn separator_of<'t>(text: &'t str, container: &Node, spans: &[Range<usize>]) -> &'t str {
    match spans {
        [.., before, last] => {
            let between = &text[before.end..last.start];
            &between[between.find(',').map_or(0, |comma| comma + 1)..]
        }
        [only] => &text[container.span.start + 1..only.start],
        [] => "",
    }
}

/// An empty `{}` or `[]` (spaces inside allowed) rewritten to hold one item: on lines of its
/// own when the file spans lines, else on the container's line.
fn fill_empty(
    text: &str,
    layout: &Layout,
    container: &Node,
    item: impl FnOnce(&str, &mut String),
) -> Edit {
    let open = &text[container.span.start..=container.span.start];
    let close = &text[container.span.end - 1..container.span.end];
    let mut out = String::from(open);
    if text.contains('\n') {
        let outer = indent_of_line_at(text, container.span.start).to_owned();
        let base = format!("{outer}{}", layout.indent);
        out.push_str(layout.newline);
        out.push_str(&base);
        item(&base, &mut out);
        out.push_str(layout.newline);
        out.push_str(&outer);
    } else {
        item("", &mut out);
    }
    out.push_str(close);
    Edit {
        range: container.span.clone(),
        text: out,
    }
}

/// `value` laid out for a place in `container` whose line is indented `base`.
fn write_value(
    text: &str,
    layout: &Layout,
    container: &Node,
    value: &Value,
    base: &str,
    out: &mut String,
) {
    if spans_lines(text, container) || container_is_empty(container) && text.contains('\n') {
        layout.write_pretty(value, base, out);
    } else {
        Compact::of(text, container).write(value, out);
    }
}

fn container_is_empty(container: &Node) -> bool {
    match &container.kind {
        Kind::Object(members) => members.is_empty(),
        Kind::Array(elements) => elements.is_empty(),
        _ => false,
    }
}

/// The edit that removes element `index` of `array` with its separator.
pub fn remove_element(text: &str, array: &Node, index: usize) -> Edit {
    let spans: Vec<Range<usize>> = array
        .elements()
        .unwrap_or_default()
        .iter()
        .map(|node| node.span.clone())
        .collect();
    remove_item(text, array, &spans, index)
}

/// The edit that removes member `index` of `object` with its separator.
pub fn remove_member(text: &str, object: &Node, index: usize) -> Edit {
    let spans: Vec<Range<usize>> = object
        .members()
        .unwrap_or_default()
        .iter()
        .map(Member::span)
        .collect();
    remove_item(text, object, &spans, index)
}

fn remove_item(text: &str, container: &Node, spans: &[Range<usize>], index: usize) -> Edit {
    let range = if index > 0 {
        // From the end of the item before: the comma and the separator go with this one.
        spans[index - 1].end..spans[index].end
    } else if let Some(next) = spans.get(1) {
        spans[0].start..next.start
    } else {
        // The only item: the container becomes empty, as `{}` or `[]`.
        return Edit {
            range: container.span.clone(),
            text: format!(
                "{}{}",
                &text[container.span.start..=container.span.start],
                &text[container.span.end - 1..container.span.end]
            ),
        };
    };
    Edit {
        range,
        text: String::new(),
    }
}

/// The edit that replaces string `node` with `value`.
pub fn replace_string(node: &Node, value: &str) -> Edit {
    Edit {
        range: node.span.clone(),
        text: Value::from(value).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(text: &str) -> Node {
        parse(text).unwrap()
    }

    #[test]
    fn spans_cover_each_value_and_key() {
        let text = "{\"a\": [1, {\"b\": \"c\"}], \"d\": null}";
        let node = root(text);
        let a = node.get("a").unwrap();
        assert_eq!(&text[a.key_span.clone()], "\"a\"");
        assert_eq!(&text[a.value.span.clone()], "[1, {\"b\": \"c\"}]");
        let inner = &a.value.elements().unwrap()[1];
        assert_eq!(inner.get("b").unwrap().value.as_str(), Some("c"));
        assert_eq!(&text[node.get("d").unwrap().value.span.clone()], "null");
    }

    #[test]
    fn a_key_written_twice_is_refused_with_both_lines() {
        let error = parse("{\n  \"hooks\": {},\n  \"hooks\": {}\n}").unwrap_err();
        assert_eq!(
            error,
            JsonTextError::DuplicateKey {
                key: "hooks".to_owned(),
                first_line: 2,
                line: 3
            }
        );
        assert!(parse("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}").is_ok());
        assert!(matches!(
            parse("[{\"k\": 1, \"k\": 2}]"),
            Err(JsonTextError::DuplicateKey { .. })
        ));
    }

    #[test]
    fn malformed_text_is_refused_with_serde_json_position() {
        let error = parse("{\n  \"a\": [,]\n}").unwrap_err();
        assert_eq!(
            error,
            JsonTextError::Syntax {
                line: 2,
                column: 9,
                message: "expected value".to_owned()
            }
        );
    }

    #[test]
    fn a_bom_is_skipped_and_kept_by_edits() {
        let text = "\u{feff}{\"a\": \"x\"}";
        let node = root(text);
        let edit = replace_string(&node.get("a").unwrap().value, "y");
        assert_eq!(apply_edits(text, vec![edit]), "\u{feff}{\"a\": \"y\"}");
    }

    #[test]
    fn a_member_is_added_in_the_layout_of_its_object() {
        let text = "{\n    \"model\": \"opus\"\n}\n";
        let node = root(text);
        let layout = Layout::of(text);
        let edit = insert_member(text, &layout, &node, "hooks", &json!({"E": [1, 2]}));
        assert_eq!(
            apply_edits(text, vec![edit]),
            "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"E\": [\n            1,\n            2\n        ]\n    }\n}\n"
        );
        let compact = "{\"model\":\"opus\"}";
        let node = root(compact);
        let edit = insert_member(
            compact,
            &Layout::of(compact),
            &node,
            "k",
            &json!({"a": [1]}),
        );
        assert_eq!(
            apply_edits(compact, vec![edit]),
            "{\"model\":\"opus\",\"k\":{\"a\":[1]}}"
        );
    }

    #[test]
    fn an_element_is_appended_like_its_siblings_and_removed_back_to_the_same_bytes() {
        for text in [
            "{\"x\": [\n  {\"a\": 1},\n  {\"b\": 2}\n]}",
            "{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
            "{\"x\": [{\"a\":1},{\"b\":2}]}",
        ] {
            let node = root(text);
            let array = &node.get("x").unwrap().value;
            let edit = append_element(text, &Layout::of(text), array, &json!({"c": 3}));
            let added = apply_edits(text, vec![edit]);
            let node = root(&added);
            let array = &node.get("x").unwrap().value;
            assert_eq!(array.elements().unwrap().len(), 3, "{added}");
            let removed = apply_edits(&added, vec![remove_element(&added, array, 2)]);
            assert_eq!(removed, text);
        }
    }

    #[test]
    fn an_empty_container_is_filled_on_lines_of_its_own_in_a_multi_line_file() {
        let text = "{\n\t\"hooks\": {}\r\n}";
        let node = root(text);
        let hooks = &node.get("hooks").unwrap().value;
        let layout = Layout::of(text);
        assert_eq!(layout.indent, "\t");
        let edit = insert_member(text, &layout, hooks, "E", &json!([]));
        assert_eq!(
            apply_edits(text, vec![edit]),
            "{\n\t\"hooks\": {\r\n\t\t\"E\": []\r\n\t}\r\n}"
        );
    }

    #[test]
    fn removing_the_only_item_leaves_an_empty_container() {
        let text = "{\"x\": [ 1 ], \"y\": 2}";
        let node = root(text);
        let array = &node.get("x").unwrap().value;
        assert_eq!(
            apply_edits(text, vec![remove_element(text, array, 0)]),
            "{\"x\": [], \"y\": 2}"
        );
        assert_eq!(
            apply_edits(text, vec![remove_member(text, &node, 0)]),
            "{\"y\": 2}"
        );
    }

    #[test]
    fn nesting_beyond_serde_json_s_limit_is_refused_as_malformed() {
        let text = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert!(matches!(parse(&text), Err(JsonTextError::Syntax { .. })));
    }
}
