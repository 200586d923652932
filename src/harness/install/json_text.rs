//! JSON text edited in place: a settings file is parsed into a tree of spans over its own bytes,
//! and a change is a few byte ranges replaced, so everything outside them (compact arrays,
//! spacing, key order, a byte-order mark, line endings) stays byte for byte.
//!
//! Invariants:
//! - [`parse`] accepts exactly what `serde_json` accepts (it is asked first, so a malformed
//!   file is reported with its line, column and message), and refuses a key written twice in
//!   one object, naming both lines: a reader keeps one of the two, and which one differs
//!   between tools; nesting is bounded by `serde_json`'s own limit (128 levels), which the
//!   recursive parsers (`jsonc-parser`'s, and `node`) rely on;
//! - an inserted value is laid out like its container: on lines of its own, indented one unit
//!   deeper, when the container spans lines; on the container's line, spaced as the container
//!   is, when it does not;
//! - removing what an insertion added gives back the bytes before the insertion (the separator
//!   and the value go together).
//!
//! Spans come from `jsonc-parser`'s syntax tree (byte ranges), once `serde_json` accepted the
//! text; the edits are written here rather than with its CST (feature `cst`), which lays out
//! what it inserts its own way and so breaks the invariants above: it writes a nested array on
//! one line inside a multi-line object, spreads an insert into a one-line object over new lines,
//! puts an element appended to a one-line array on lines of its own (and removing it leaves a
//! line break behind), writes `\n` into a container whose line ends in `\r\n`, accepts a key
//! written twice without a word, and refuses a byte-order mark.

use std::io;
use std::ops::Range;

use jsonc_parser::ast;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde::Serialize as _;
use serde_json::Value;
use serde_json::ser::{Formatter, PrettyFormatter};

use crate::leaves::text_lines::line_column;

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
    // `serde_json` accepted the text, so what `jsonc-parser` accepts beyond JSON (comments,
    // trailing commas) is not in it; `jsonc-parser` gives each value's byte range.
    let body = &text[body_start..];
    let parsed =
        jsonc_parser::parse_to_ast(body, &CollectOptions::default(), &ParseOptions::default())
            .map_err(|error| JsonTextError::Syntax {
                line: error.line_display(),
                column: error.column_display(),
                message: error.kind().to_string(),
            })?;
    let Some(root) = parsed.value else {
        return Err(JsonTextError::Syntax {
            line: 1,
            column: 1,
            message: "expected value".to_owned(),
        });
    };
    node(text, body_start, root)
}

/// The parser's message without the ` at line L column C` it appends (the error names them).
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message
        .strip_suffix(&suffix)
        .map_or_else(|| message.clone(), str::to_owned)
}

/// `value` (parsed from `text` after its first `offset` bytes) as a [`Node`], spans counted
/// from the start of `text`; a key written twice in one object is refused, the first found in
/// document order.
fn node(text: &str, offset: usize, value: ast::Value<'_>) -> Result<Node, JsonTextError> {
    let span = |range: jsonc_parser::common::Range| range.start + offset..range.end + offset;
    let (range, kind) = match value {
        ast::Value::Object(object) => {
            let mut members: Vec<Member> = Vec::new();
            for property in object.properties {
                let (key, key_range) = match property.name {
                    ast::ObjectPropName::String(key) => (key.value.into_owned(), key.range),
                    ast::ObjectPropName::Word(word) => (word.value.to_owned(), word.range),
                };
                let key_span = span(key_range);
                if let Some(first) = members.iter().find(|member| member.key == key) {
                    return Err(JsonTextError::DuplicateKey {
                        key,
                        first_line: line_column(text, first.key_span.start).0,
                        line: line_column(text, key_span.start).0,
                    });
                }
                let value = node(text, offset, property.value)?;
                members.push(Member {
                    key,
                    key_span,
                    value,
                });
            }
            (object.range, Kind::Object(members))
        }
        ast::Value::Array(array) => {
            let elements = array
                .elements
                .into_iter()
                .map(|element| node(text, offset, element))
                .collect::<Result<_, _>>()?;
            (array.range, Kind::Array(elements))
        }
        ast::Value::StringLit(string) => (string.range, Kind::String(string.value.into_owned())),
        ast::Value::NumberLit(number) => (number.range, Kind::Scalar),
        ast::Value::BooleanLit(boolean) => (boolean.range, Kind::Scalar),
        ast::Value::NullKeyword(null) => (null.range, Kind::Scalar),
    };
    Ok(Node {
        span: span(range),
        kind,
    })
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

    /// `value` pretty (`serde_json`'s layout, one indent unit per level), its lines after the
    /// first indented by `base`.
    fn write_pretty(&self, value: &Value, base: &str, out: &mut String) {
        let pretty = serialized(value, PrettyFormatter::with_indent(self.indent.as_bytes()));
        // JSON writes a line break in a string as `\n`: each one here is the layout's.
        out.push_str(&pretty.replace('\n', &format!("{}{base}", self.newline)));
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
}

impl Formatter for Compact {
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.begin_array_value(out, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(if self.colon_space { b": " } else { b":" })
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            return Ok(());
        }
        out.write_all(if self.comma_space { b", " } else { b"," })
    }
}

/// `value` written by `serde_json` with `formatter`.
fn serialized(value: &Value, formatter: impl Formatter) -> String {
    let mut serializer = serde_json::Serializer::with_formatter(Vec::new(), formatter);
    // A `Value` has string keys only, and a `Vec` takes every byte: nothing can fail.
    let _ = value.serialize(&mut serializer);
    String::from_utf8_lossy(&serializer.into_inner()).into_owned()
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
    let key_text = Value::from(key).to_string();
    match object.members().unwrap_or_default() {
        [] => fill_empty(text, layout, object, |base, out| {
            out.push_str(&key_text);
            out.push_str(": ");
            write_value(text, layout, object, value, base, out);
        }),
        // The key-value spacing of the members already there.
        [first, ..] => append_after_last(
            text,
            layout,
            object,
            first.key_span.start,
            &format!(
                "{key_text}{}",
                &text[first.key_span.end..first.value.span.start]
            ),
            value,
        ),
    }
}

/// The edit that adds `value` as the last element of `array`.
pub fn append_element(text: &str, layout: &Layout, array: &Node, value: &Value) -> Edit {
    match array.elements().unwrap_or_default() {
        [] => fill_empty(text, layout, array, |base, out| {
            write_value(text, layout, array, value, base, out);
        }),
        [first, ..] => append_after_last(text, layout, array, first.span.start, "", value),
    }
}

/// The edit that adds `lead` and `value` after the last item of `container` (which has one, the
/// first starting at `first_start`), with the separator the items already there use.
fn append_after_last(
    text: &str,
    layout: &Layout,
    container: &Node,
    first_start: usize,
    lead: &str,
    value: &Value,
) -> Edit {
    let spans = item_spans(container);
    let end = spans.last().map_or(container.span.start, |last| last.end);
    let mut inserted = String::from(",");
    inserted.push_str(separator_of(text, container, &spans));
    inserted.push_str(lead);
    let base = indent_of_line_at(text, first_start);
    write_value(text, layout, container, value, base, &mut inserted);
    Edit {
        range: end..end,
        text: inserted,
    }
}

/// Where the items of `container` are: an object's members (key to value), an array's
/// elements; none for a scalar.
fn item_spans(container: &Node) -> Vec<Range<usize>> {
    match &container.kind {
        Kind::Object(members) => members.iter().map(Member::span).collect(),
        Kind::Array(elements) => elements.iter().map(|node| node.span.clone()).collect(),
        Kind::String(_) | Kind::Scalar => Vec::new(),
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
    if spans_lines(text, container) || item_spans(container).is_empty() && text.contains('\n') {
        layout.write_pretty(value, base, out);
    } else {
        out.push_str(&serialized(value, Compact::of(text, container)));
    }
}

/// The edit that removes item `index` of `container` (an object's member, an array's element)
/// with its separator.
pub fn remove_item(text: &str, container: &Node, index: usize) -> Edit {
    let spans = item_spans(container);
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

/// The edit that replaces the string at `span` (a string node's) with `value`.
pub fn replace_string(span: Range<usize>, value: &str) -> Edit {
    Edit {
        range: span,
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
        let edit = replace_string(node.get("a").unwrap().value.span.clone(), "y");
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
            let removed = apply_edits(&added, vec![remove_item(&added, array, 2)]);
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
            apply_edits(text, vec![remove_item(text, array, 0)]),
            "{\"x\": [], \"y\": 2}"
        );
        assert_eq!(
            apply_edits(text, vec![remove_item(text, &node, 0)]),
            "{\"y\": 2}"
        );
    }

    #[test]
    fn nesting_beyond_serde_json_s_limit_is_refused_as_malformed() {
        let text = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert!(matches!(parse(&text), Err(JsonTextError::Syntax { .. })));
    }
}
