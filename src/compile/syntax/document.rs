//! Shared frontmatter handling: split the fences, parse the YAML, apply the checks every
//! frontmatter gets (a mapping at the top, no duplicate keys, no comment after a value).

use camino::Utf8Path;

use crate::compile::syntax::frontmatter::{self, FrontmatterError};
use crate::compile::syntax::yaml::{self, Entry, Node, NodeKind, Style};
use crate::leaves::diagnostics::{Code, Diagnostic};

/// The top-level mapping of a document's frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterMap {
    pub entries: Vec<Entry>,
    /// Byte range of the YAML between the fences.
    pub yaml_span: std::ops::Range<usize>,
}

impl FrontmatterMap {
    pub fn get(&self, key: &str) -> Option<&Entry> {
        note_key_read(key);
        self.entries
            .iter()
            .find(|entry| entry.key.as_scalar() == Some(key))
    }

    /// The value of `key` unless it is absent or YAML null.
    pub fn value(&self, key: &str) -> Option<&Node> {
        self.get(key)
            .map(|entry| &entry.value)
            .filter(|value| !value.is_null())
    }

    /// Span to point at when a key is missing: the opening fence.
    pub fn missing_span(&self) -> std::ops::Range<usize> {
        let start = self.yaml_span.start.saturating_sub(4);
        start..start + 3
    }

    /// A `missing required field` error for each of `fields` that has no value: at its key when
    /// the key is written with no value, else at the opening fence. The help is `add `<field>:`
    /// with a value` followed by `help_tail`.
    pub fn missing_required<'f>(
        &self,
        fields: impl IntoIterator<Item = &'f str>,
        file: &Utf8Path,
        help_tail: &str,
    ) -> Vec<Diagnostic> {
        fields
            .into_iter()
            .filter(|field| self.value(field).is_none())
            .map(|field| {
                let span = self
                    .get(field)
                    .map_or_else(|| self.missing_span(), |entry| entry.key.span.clone());
                Diagnostic::error(
                    Code::MissingRequiredField,
                    format!("missing required field: {field}"),
                )
                .in_file(file)
                .at(span)
                .with_help(format!("add `{field}:` with a value{help_tail}"))
            })
            .collect()
    }
}

/// What kind of document is being read, for the wording of "missing frontmatter".
#[derive(Debug, Clone, Copy)]
pub enum DocumentKind {
    SensorManifest,
    Stage,
    Agent,
    Scope,
    Rule,
}

impl DocumentKind {
    fn missing_message(self) -> &'static str {
        match self {
            DocumentKind::SensorManifest => "Sensor manifest missing YAML frontmatter (---...---)",
            DocumentKind::Stage => "Stage file missing YAML frontmatter (---...---)",
            DocumentKind::Agent => "Agent file missing frontmatter",
            DocumentKind::Scope => "Scope file missing frontmatter",
            DocumentKind::Rule => "Rule file missing frontmatter",
        }
    }
}

/// A frontmatter being checked: its map, the file its diagnostics name, and the diagnostics so
/// far. The stage and manifest checkers (`stage.rs`, `manifest.rs`) add their own methods.
pub(super) struct FrontmatterChecker<'a> {
    pub(super) map: &'a FrontmatterMap,
    pub(super) file: &'a Utf8Path,
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl FrontmatterChecker<'_> {
    pub(super) fn error(
        &mut self,
        code: Code,
        message: impl Into<String>,
        span: std::ops::Range<usize>,
        help: impl Into<String>,
    ) {
        self.diagnostics.push(
            Diagnostic::error(code, message)
                .in_file(self.file)
                .at(span)
                .with_help(help),
        );
    }
}

/// Split and parse the frontmatter of `text`. Returns `None` (with diagnostics) when there is no
/// usable top-level mapping.
pub fn read_frontmatter(
    text: &str,
    file: &Utf8Path,
    kind: DocumentKind,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<FrontmatterMap> {
    let fm = match frontmatter::split(text) {
        Ok(fm) => fm,
        Err(error) => {
            let help = match error {
                FrontmatterError::MissingOpeningFence => {
                    "start the file with a line `---`, the YAML fields, then a closing `---` line"
                }
                FrontmatterError::MissingClosingFence => {
                    "close the frontmatter with a line that is exactly `---`"
                }
            };
            let end = text.find('\n').unwrap_or(text.len());
            diagnostics.push(
                Diagnostic::error(Code::MissingFrontmatter, kind.missing_message())
                    .in_file(file)
                    .at(0..end)
                    .with_help(help),
            );
            return None;
        }
    };
    let (root, problems) = yaml::parse_document(text, fm.yaml.clone());
    let mut fatal = false;
    for problem in problems {
        fatal |= problem.code != Code::DuplicateKey;
        let mut diagnostic = Diagnostic::error(problem.code, problem.message.clone())
            .in_file(file)
            .at(problem.span.clone());
        if let Some(first) = problem.related.clone() {
            diagnostic = diagnostic
                .with_label("declared again here")
                .with_related(file, Some(first), "first declared here")
                .with_help("remove one of the two lines; a key may appear only once");
        }
        diagnostics.push(diagnostic);
    }
    if fatal {
        return None;
    }
    let entries = match root {
        None => Vec::new(),
        Some(node) if node.is_null() => Vec::new(),
        Some(Node {
            kind: NodeKind::Mapping { entries, .. },
            ..
        }) => entries,
        Some(other) => {
            diagnostics.push(
                Diagnostic::error(
                    Code::YamlSyntax,
                    format!(
                        "frontmatter must be a YAML mapping of `key: value` lines, got {}",
                        other.type_name()
                    ),
                )
                .in_file(file)
                .at(other.span),
            );
            return None;
        }
    };
    diagnostics.extend(trailing_comment_diagnostics(text, &entries, file));
    Some(FrontmatterMap {
        entries,
        yaml_span: fm.yaml,
    })
}

/// D3: a `# comment` after a top-level value is refused. The reference implementation reads
/// such a comment into the value, so a file that means one thing to us would mean another to it.
fn trailing_comment_diagnostics(text: &str, entries: &[Entry], file: &Utf8Path) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for entry in entries {
        let is_single_line_scalar =
            matches!(&entry.value.kind, NodeKind::Scalar { style, .. } if *style != Style::Block);
        if !is_single_line_scalar {
            continue;
        }
        let key_line_end = memchr::memchr(b'\n', &text.as_bytes()[entry.key.span.end..])
            .map_or(text.len(), |i| entry.key.span.end + i);
        let scan_from = if entry.value.is_null() || entry.value.span.end <= entry.key.span.end {
            entry.key.span.end + 1
        } else {
            entry.value.span.end
        };
        if entry.value.span.start > key_line_end || scan_from > key_line_end {
            continue;
        }
        let rest = &text[scan_from..key_line_end];
        if let Some(hash) = rest.find('#') {
            let at = scan_from + hash;
            let key = entry.key.as_scalar().unwrap_or_default();
            diagnostics.push(
                Diagnostic::error(
                    Code::TrailingComment,
                    format!("comment after the value of `{key}`"),
                )
                .in_file(file)
                .at(at..key_line_end)
                .with_label("the reference reads this comment as part of the value")
                .with_help("move the comment to its own line above the field"),
            );
        }
    }
    diagnostics.extend(
        entries
            .iter()
            .flat_map(|entry| trailing_comment_after_list_items(text, entry, file)),
    );
    diagnostics
}

/// A `# comment` after an item of a top-level block list (`- upstream-coverage  # why`) is
/// refused too: the reference reads the comment into the item (an unknown sensor id, stage or
/// agent), so the file would mean one thing to us and another to it.
fn trailing_comment_after_list_items(
    text: &str,
    entry: &Entry,
    file: &Utf8Path,
) -> Vec<Diagnostic> {
    let NodeKind::Sequence { items, flow: false } = &entry.value.kind else {
        return Vec::new();
    };
    let key = entry.key.as_scalar().unwrap_or_default();
    items
        .iter()
        .filter(
            |item| matches!(&item.kind, NodeKind::Scalar { style, .. } if *style != Style::Block),
        )
        .filter_map(|item| {
            let line_end = memchr::memchr(b'\n', &text.as_bytes()[item.span.end..])
                .map_or(text.len(), |i| item.span.end + i);
            let hash = text[item.span.end..line_end].find('#')?;
            let at = item.span.end + hash;
            let shown = item.as_scalar().unwrap_or_default();
            Some(
                Diagnostic::error(
                    Code::TrailingComment,
                    format!("comment after the item `{shown}` of `{key}`"),
                )
                .in_file(file)
                .at(at..line_end.min(text.len()))
                .with_label("the reference reads this comment as part of the item")
                .with_help("move the comment to its own line above the item"),
            )
        })
        .collect()
}

/// The text of a scalar node; `None` for YAML null, sequences and mappings.
pub fn scalar_string(node: &Node) -> Option<&str> {
    match &node.kind {
        NodeKind::Scalar { text, .. } if !node.is_null() => Some(text.as_str()),
        _ => None,
    }
}

/// A value as a message quotes it: a scalar's text in quotes, anything else its type name.
pub fn shown_value(node: &Node) -> String {
    match scalar_string(node) {
        Some(text) => format!("\"{text}\""),
        None => node.type_name().to_owned(),
    }
}

/// Unit tests record the keys `get` looks up (`keys_read`); a shipped build records nothing.
#[cfg(not(test))]
fn note_key_read(_key: &str) {}

#[cfg(test)]
fn note_key_read(key: &str) {
    key_log::note(key);
}

/// The top-level keys looked up while `run` parsed a document on this thread, and its result.
#[cfg(test)]
pub fn keys_read<R>(run: impl FnOnce() -> R) -> (std::collections::BTreeSet<String>, R) {
    key_log::record(run)
}

/// Which top-level keys the checkers look up, for the test that every key a parser reads is in
/// its JSON Schema (`schema`'s tests): the parser's reads are the truth the schema must cover.
#[cfg(test)]
mod key_log {
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    thread_local! {
        static KEYS: RefCell<Option<BTreeSet<String>>> = const { RefCell::new(None) };
    }

    pub(super) fn note(key: &str) {
        KEYS.with(|keys| {
            if let Some(keys) = keys.borrow_mut().as_mut() {
                keys.insert(key.to_owned());
            }
        });
    }

    pub fn record<R>(run: impl FnOnce() -> R) -> (BTreeSet<String>, R) {
        KEYS.with(|keys| *keys.borrow_mut() = Some(BTreeSet::new()));
        let result = run();
        let read = KEYS.with(|keys| keys.borrow_mut().take().unwrap_or_default());
        (read, result)
    }
}
