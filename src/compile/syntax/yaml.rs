//! A spanned YAML tree built from the event stream of serde-saphyr's parser (granit-parser).
//!
//! Every node knows the absolute byte range it came from in the `.md` file, so diagnostics can
//! underline the exact key or value. This module is pure: no salsa, no file system.
//!
//! Invariant: parsing never fails outright. A malformed document yields whatever nodes were
//! complete plus a [`YamlProblem`] with the position the parser stopped at.

use std::ops::Range;

use compact_str::CompactString;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span, StructureStyle};

use crate::compile::syntax::yaml_subset::{EventSink, read_block_subset};
use crate::leaves::diagnostics::Code;
use crate::leaves::text_lines::lines_with_starts;

/// One YAML node with its absolute byte range in the source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub kind: NodeKind,
    pub span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    /// Short scalars (keys, slugs, ids: up to 24 bytes) are held inline, without an allocation
    /// each: a stage's frontmatter has dozens of them.
    Scalar {
        text: CompactString,
        style: Style,
    },
    Sequence {
        items: Vec<Node>,
        flow: bool,
    },
    Mapping {
        entries: Vec<Entry>,
        flow: bool,
    },
}

/// How a scalar was written (defined beside the subset reader, which reports it too).
pub use crate::compile::syntax::yaml_subset::Style;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

/// A syntax error reported by the YAML parser, or a structural problem we refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlProblem {
    pub message: String,
    pub span: Range<usize>,
    /// A second location (for example the first occurrence of a duplicated key).
    pub related: Option<Range<usize>>,
    /// `yaml-syntax`, `duplicate-key` or `unsupported-yaml`.
    pub code: Code,
}

impl Node {
    /// The scalar text, if this node is a scalar (quoted or not).
    pub fn as_scalar(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// YAML null: an empty plain scalar, `~` or `null`.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { text, style: Style::Plain }
            if text.is_empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
    }

    pub fn as_mapping(&self) -> Option<&[Entry]> {
        match &self.kind {
            NodeKind::Mapping { entries, .. } => Some(entries),
            _ => None,
        }
    }

    pub fn as_sequence(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Sequence { items, .. } => Some(items),
            _ => None,
        }
    }

    /// The plain-scalar boolean value (`true`/`false`, YAML 1.2 core schema only).
    pub fn as_bool(&self) -> Option<bool> {
        match &self.kind {
            NodeKind::Scalar {
                text,
                style: Style::Plain,
            } => match text.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// The type name used in messages, mirroring the reference's `typeof` wording:
    /// `null`, `array`, `object`, `boolean`, `number` or `string`.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Sequence { .. } => "array",
            NodeKind::Mapping { .. } => "object",
            NodeKind::Scalar { text, style } => {
                if self.is_null() {
                    "null"
                } else if self.as_bool().is_some() {
                    "boolean"
                } else if *style == Style::Plain && looks_like_number(text) {
                    "number"
                } else {
                    "string"
                }
            }
        }
    }

    /// Look a key up in a mapping node (first occurrence).
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_mapping()?
            .iter()
            .find(|entry| entry.key.as_scalar() == Some(key))
            .map(|entry| &entry.value)
    }
}

fn looks_like_number(text: &str) -> bool {
    let trimmed = text.strip_prefix(['-', '+']).unwrap_or(text);
    !trimmed.is_empty()
        && (trimmed.parse::<f64>().is_ok()
            || trimmed.starts_with("0x")
            || trimmed.starts_with("0o")
            || matches!(trimmed, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"))
}

/// Parse `source[range]` as one YAML document. Offsets in the result are absolute: they index
/// `source`, not the slice.
///
/// A document in the block subset most frontmatter is written in (`syntax::yaml_subset`) is
/// read by a reader of its own, which gives the very events the general parser would, about ten
/// times faster; any other document goes to the general parser.
///
/// A plain value that starts with `*` (`matches: **/*.{ts,js}`, `- *.md`) is read as the text
/// it is, as the reference's frontmatter reader reads it, not as a YAML alias: aliases are
/// refused in frontmatter anyway, so no document that parsed before reads differently.
pub fn parse_document(source: &str, range: Range<usize>) -> (Option<Node>, Vec<YamlProblem>) {
    parse_reading_starred_values_as_text(source, range, parse_slice)
}

/// A reader of a YAML slice that starts at an offset of its file: the tree and the problems.
type SliceReader = fn(&str, usize) -> (Option<Node>, Vec<YamlProblem>);

/// Parse `source[range]` with `parse` (a reader of a slice at an offset), after reading each
/// plain value that starts with `*` as its text (see [`parse_document`]).
fn parse_reading_starred_values_as_text(
    source: &str,
    range: Range<usize>,
    parse: SliceReader,
) -> (Option<Node>, Vec<YamlProblem>) {
    let slice = &source[range.clone()];
    let starred = starred_plain_value_offsets(slice);
    if starred.is_empty() {
        return parse(slice, range.start);
    }
    let mut masked = slice.as_bytes().to_vec();
    for &offset in &starred {
        masked[offset] = STAR_STAND_IN;
    }
    let masked = String::from_utf8(masked)
        .unwrap_or_else(|_| unreachable!("one ASCII byte replaced another"));
    let (mut root, problems) = parse(&masked, range.start);
    let absolute: Vec<usize> = starred.iter().map(|offset| range.start + offset).collect();
    if let Some(root) = &mut root {
        restore_starred_plain_values(root, &absolute);
    }
    (root, problems)
}

/// The byte a leading `*` of a plain value is parsed as: a letter, which starts a plain scalar
/// of the same length wherever the `*` did.
const STAR_STAND_IN: u8 = b'a';

/// A slice that starts at `base` in its file, read by the block subset or else the general
/// parser.
fn parse_slice(slice: &str, base: usize) -> (Option<Node>, Vec<YamlProblem>) {
    let mut builder = TreeBuilder::new(base, slice.len());
    if read_block_subset(slice, &mut builder).is_some() {
        return (builder.root, builder.problems);
    }
    parse_slice_with_general_parser(slice, base)
}

/// The offsets (in `text`) of each `*` that starts a plain value on a line of its own: after
/// `key:` and blanks, or after `- ` of a block sequence item. Lines inside a block scalar
/// (`|` or `>`) are text, and left alone.
fn starred_plain_value_offsets(text: &str) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut block_scalar_indent: Option<usize> = None;
    for (line_start, line) in lines_with_starts(text) {
        let content = line.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start_matches(' ').len();
        let is_blank = content.trim().is_empty();
        if let Some(scalar_indent) = block_scalar_indent {
            if is_blank || indent > scalar_indent {
                continue;
            }
            block_scalar_indent = None;
        }
        if let Some(value_start) = plain_value_start(content, indent) {
            let value = &content[value_start..];
            if value.starts_with('*') {
                offsets.push(line_start + value_start);
            } else if starts_a_block_scalar(value) {
                block_scalar_indent = Some(indent);
            }
        }
    }
    offsets
}

/// Where the value of a `key: value` or `- value` line starts, after its blanks.
fn plain_value_start(line: &str, indent: usize) -> Option<usize> {
    let after_item_dashes = {
        let mut at = indent;
        while line[at..].starts_with("- ") {
            at += 2;
            at += line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len();
        }
        at
    };
    let rest = &line[after_item_dashes..];
    let key_length = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .unwrap_or(rest.len());
    let value_at = if key_length > 0 && rest[key_length..].starts_with(':') {
        let after_colon = &rest[key_length + 1..];
        let blanks = after_colon.len() - after_colon.trim_start_matches([' ', '\t']).len();
        if blanks == 0 {
            return None;
        }
        after_item_dashes + key_length + 1 + blanks
    } else if after_item_dashes > indent {
        after_item_dashes
    } else {
        return None;
    };
    (value_at < line.len()).then_some(value_at)
}

/// Whether a value is a block scalar's header (`|`, `>-`, `|2+`, with an optional comment).
fn starts_a_block_scalar(value: &str) -> bool {
    let header = value.split(" #").next().unwrap_or(value).trim_end();
    header.starts_with(['|', '>'])
        && header[1..]
            .chars()
            .all(|c| c.is_ascii_digit() || c == '+' || c == '-')
}

/// Put the `*` back at the start of each plain scalar that starts at one of `offsets`.
fn restore_starred_plain_values(node: &mut Node, offsets: &[usize]) {
    match &mut node.kind {
        NodeKind::Scalar { text, style } => {
            if *style == Style::Plain
                && offsets.contains(&node.span.start)
                && text.as_bytes().first() == Some(&STAR_STAND_IN)
            {
                text.replace_range(0..1, "*");
            }
        }
        NodeKind::Sequence { items, .. } => {
            for item in items {
                restore_starred_plain_values(item, offsets);
            }
        }
        NodeKind::Mapping { entries, .. } => {
            for entry in entries {
                restore_starred_plain_values(&mut entry.value, offsets);
            }
        }
    }
}

/// [`parse_document`] through the general parser only (granit, behind serde-saphyr), whatever
/// the document: the reference the block subset is tested against.
pub fn parse_document_with_general_parser(
    source: &str,
    range: Range<usize>,
) -> (Option<Node>, Vec<YamlProblem>) {
    parse_reading_starred_values_as_text(source, range, parse_slice_with_general_parser)
}

fn parse_slice_with_general_parser(slice: &str, base: usize) -> (Option<Node>, Vec<YamlProblem>) {
    let mut builder = TreeBuilder::new(base, slice.len());
    for result in Parser::new_from_str(slice) {
        match result {
            Ok((event, span)) => {
                if let Err(problem) = builder.push(event, span) {
                    builder.problems.push(problem);
                    break;
                }
            }
            Err(error) => {
                let offset = error.marker().byte_offset().unwrap_or(0).min(slice.len());
                builder.problems.push(YamlProblem {
                    message: error.info(),
                    span: base + offset..base + offset,
                    related: None,
                    code: Code::YamlSyntax,
                });
                break;
            }
        }
    }
    (builder.root, builder.problems)
}

enum Open {
    Sequence {
        items: Vec<Node>,
        flow: bool,
        start: usize,
    },
    Mapping {
        entries: Vec<Entry>,
        pending_key: Option<Node>,
        flow: bool,
        start: usize,
    },
}

struct TreeBuilder {
    base: usize,
    slice_len: usize,
    stack: Vec<Open>,
    root: Option<Node>,
    problems: Vec<YamlProblem>,
}

impl EventSink for TreeBuilder {
    fn scalar(&mut self, text: &str, style: Style, span: Range<usize>) {
        let range = self.absolute(span.start, span.end);
        self.attach(Node {
            kind: NodeKind::Scalar {
                text: CompactString::from(text),
                style,
            },
            span: range,
        });
    }

    fn start_sequence(&mut self, flow: bool, start: usize) {
        let start = self.absolute(start, start).start;
        self.stack.push(Open::Sequence {
            items: Vec::new(),
            flow,
            start,
        });
    }

    fn start_mapping(&mut self, flow: bool, start: usize) {
        let start = self.absolute(start, start).start;
        self.stack.push(Open::Mapping {
            entries: Vec::new(),
            pending_key: None,
            flow,
            start,
        });
    }

    fn end_collection(&mut self, end: usize) {
        let end = self.absolute(end, end).end;
        let Some(open) = self.stack.pop() else {
            return;
        };
        // A collection ends no earlier than its last child, nor before it starts.
        let (kind, start, last_child_end) = match open {
            Open::Sequence { items, flow, start } => {
                let last_end = items.last().map(|item| item.span.end);
                (NodeKind::Sequence { items, flow }, start, last_end)
            }
            Open::Mapping {
                entries,
                flow,
                start,
                ..
            } => {
                let last_end = entries.last().map(|entry| entry.value.span.end);
                (NodeKind::Mapping { entries, flow }, start, last_end)
            }
        };
        let end = last_child_end.map_or(end, |last| last.max(end)).max(start);
        self.attach(Node {
            kind,
            span: start..end,
        });
    }
}

impl TreeBuilder {
    fn new(base: usize, slice_len: usize) -> Self {
        Self {
            base,
            slice_len,
            stack: Vec::new(),
            root: None,
            problems: Vec::new(),
        }
    }

    /// A span of the slice as an absolute range of the source, clamped to the slice.
    fn absolute(&self, start: usize, end: usize) -> Range<usize> {
        let start = start.min(self.slice_len);
        let end = end.clamp(start, self.slice_len);
        self.base + start..self.base + end
    }

    fn offset(&self, span: &Span) -> Range<usize> {
        let start = span.start.byte_offset().unwrap_or(0).min(self.slice_len);
        let end = span.end.byte_offset().unwrap_or(start);
        self.absolute(start, end)
    }

    fn push(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlProblem> {
        let range = self.offset(&span);
        let (start, end) = (range.start - self.base, range.end - self.base);
        match event {
            Event::Scalar(text, style, _, _) => {
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
                    ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
                };
                self.scalar(&text, style, start..end);
            }
            Event::SequenceStart(style, _, _) => {
                self.start_sequence(style == StructureStyle::Flow, start);
            }
            Event::MappingStart(style, _, _) => {
                self.start_mapping(style == StructureStyle::Flow, start);
            }
            Event::SequenceEnd | Event::MappingEnd => self.end_collection(end),
            Event::Alias(_) | Event::UnresolvedAlias(_) | Event::Anchor(..) => {
                return Err(YamlProblem {
                    message: "YAML anchors and aliases are not supported in frontmatter".to_owned(),
                    span: range,
                    related: None,
                    code: Code::UnsupportedYaml,
                });
            }
            // Stream and document markers (and comments) carry no data.
            _ => {}
        }
        Ok(())
    }

    fn attach(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Open::Sequence { items, .. }) => items.push(node),
            Some(Open::Mapping {
                entries,
                pending_key,
                ..
            }) => match pending_key.take() {
                None => *pending_key = Some(node),
                Some(key) => {
                    if let Some(key_text) = key.as_scalar()
                        && let Some(first) = entries
                            .iter()
                            .find(|entry| entry.key.as_scalar() == Some(key_text))
                    {
                        self.problems.push(YamlProblem {
                            message: format!("duplicate key `{key_text}`"),
                            span: key.span.clone(),
                            related: Some(first.key.span.clone()),
                            code: Code::DuplicateKey,
                        });
                        return;
                    }
                    entries.push(Entry { key, value: node });
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Option<Node>, Vec<YamlProblem>) {
        parse_document(text, 0..text.len())
    }

    #[test]
    fn spans_slice_back_to_their_text() {
        let text = "id: linter\nsensors:\n  - a\n  - \"b\"\nflow: [x, y]\n";
        let (root, problems) = parse(text);
        assert!(problems.is_empty());
        let root = root.unwrap();
        let id = root.get("id").unwrap();
        assert_eq!(&text[id.span.clone()], "linter");
        let sensors = root.get("sensors").unwrap().as_sequence().unwrap();
        assert_eq!(&text[sensors[1].span.clone()], "\"b\"");
        assert_eq!(sensors[1].as_scalar(), Some("b"));
        let flow = root.get("flow").unwrap().as_sequence().unwrap();
        assert_eq!(&text[flow[1].span.clone()], "y");
    }

    /// A plain value starting with `*` is its text, as the reference reads it, with its span;
    /// a block scalar's lines and an alias inside a flow list are left to YAML.
    #[test]
    fn a_plain_value_starting_with_a_star_is_its_text() {
        let text =
            "id: x\nmatches: **/*.{ts,js}\nsensors:\n  - *.md\n  - b\nnote: |\n  key: *kept\n";
        let (root, problems) = parse(text);
        assert!(problems.is_empty(), "{problems:?}");
        let root = root.unwrap();
        let matches = root.get("matches").unwrap();
        assert_eq!(matches.as_scalar(), Some("**/*.{ts,js}"));
        assert_eq!(&text[matches.span.clone()], "**/*.{ts,js}");
        assert_eq!(matches.type_name(), "string");
        let sensors = root.get("sensors").unwrap().as_sequence().unwrap();
        assert_eq!(sensors[0].as_scalar(), Some("*.md"));
        assert_eq!(root.get("note").unwrap().as_scalar(), Some("key: *kept\n"));
        let (_, problems) = parse("flow: [*a]\n");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn empty_value_is_null_not_the_next_line() {
        let (root, _) = parse("category:\nmatches: \"x\"\n");
        let root = root.unwrap();
        assert!(root.get("category").unwrap().is_null());
        assert_eq!(root.get("matches").unwrap().as_scalar(), Some("x"));
    }

    #[test]
    fn duplicate_keys_name_both_places() {
        let text = "id: a\nid: b\n";
        let (_, problems) = parse(text);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].code, Code::DuplicateKey);
        assert_eq!(&text[problems[0].span.clone()], "id");
        assert_eq!(problems[0].related, Some(0..2));
    }

    #[test]
    fn multibyte_text_keeps_byte_offsets() {
        let text = "name: \"ünï — x\"\nid: z\n";
        let (root, _) = parse(text);
        let id = root.unwrap().get("id").unwrap().span.clone();
        assert_eq!(&text[id], "z");
    }

    #[test]
    fn syntax_errors_are_reported_not_panicked() {
        let (_, problems) = parse("a: [b, c\nd: e\n");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].code, Code::YamlSyntax);
    }
}
