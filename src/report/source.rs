//! The texts of the files a report points into, and positions in them: the renderers look a
//! file up by its project-relative path to draw a snippet and to turn a line and a column into
//! a byte span (`leaves::text_lines::line_column` goes the other way).
//!
//! Lines end at `\n` (a `\r` before it is part of no line's text); columns are 1-based and
//! count characters. Nothing here panics on any offset, line or column.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::Layout;
use crate::leaves::diagnostics::Diagnostic;

/// The texts of the files findings point into, by project-relative path; shared, so that many
/// findings in one file cost one copy.
pub type SourceTexts = BTreeMap<Utf8PathBuf, Arc<str>>;

/// Looks up a file's text by its project-relative path (for snippets and line numbers).
pub trait SourceLookup {
    fn text(&self, path: &Utf8Path) -> Option<&str>;

    /// The text for a snippet, which owns it (miette keeps its source for the report's
    /// lifetime); a copy unless the lookup shares its texts.
    fn snippet_text(&self, path: &Utf8Path) -> Option<Arc<str>> {
        self.text(path).map(Arc::from)
    }

    /// The plugin the file belongs to, when the lookup knows (every report names the
    /// owner of the file it points at); `None` for the core's files and when unknown.
    fn plugin_of(&self, _path: &Utf8Path) -> Option<&str> {
        None
    }
}

/// File texts and the plugin each file belongs to (the files of the core are not listed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourcesWithPlugins {
    pub texts: BTreeMap<Utf8PathBuf, String>,
    pub plugins: BTreeMap<Utf8PathBuf, String>,
}

impl SourceLookup for SourcesWithPlugins {
    fn text(&self, path: &Utf8Path) -> Option<&str> {
        self.texts.text(path)
    }

    fn plugin_of(&self, path: &Utf8Path) -> Option<&str> {
        self.plugins.get(path).map(String::as_str)
    }
}

impl SourceLookup for BTreeMap<Utf8PathBuf, String> {
    fn text(&self, path: &Utf8Path) -> Option<&str> {
        self.get(path).map(String::as_str)
    }
}

impl SourceLookup for SourceTexts {
    fn text(&self, path: &Utf8Path) -> Option<&str> {
        self.get(path).map(AsRef::as_ref)
    }

    fn snippet_text(&self, path: &Utf8Path) -> Option<Arc<str>> {
        self.get(path).map(Arc::clone)
    }
}

/// The byte span of a 1-based `line` (and `column`, counted in characters, to an end line and
/// column or else to the end of the word at the column) in `text`; the whole line without its
/// indentation when there is no column. `None` when the line is past the end of the text.
pub fn line_span(
    text: &str,
    line: u64,
    column: Option<u64>,
    end: Option<(u64, Option<u64>)>,
) -> Option<Range<usize>> {
    let line_start = line_start_from(text, 0, 1, line)?;
    let line_text = line_text_at(text, line_start);
    let Some(column) = column else {
        let indent = line_text.len() - line_text.trim_start().len();
        return Some(line_start + indent..line_start + line_text.trim_end().len().max(indent));
    };
    let start = line_start + char_offset(line_text, column);
    let end = match end {
        Some((end_line, end_column)) if end_line >= line => {
            let end_start = line_start_from(text, line_start, line, end_line).unwrap_or(start);
            let end_text = line_text_at(text, end_start);
            end_start + end_column.map_or(end_text.len(), |column| char_offset(end_text, column))
        }
        _ => {
            let rest = &text[start..line_start + line_text.len()];
            start
                + rest
                    .find(char::is_whitespace)
                    .unwrap_or(rest.len())
                    .max(rest.chars().next().map_or(0, char::len_utf8))
        }
    };
    Some(start..end.max(start))
}

/// The byte offset where the 1-based `line` starts, searched from `offset`, where line `at_line`
/// starts (`None` for line 0 or past the end).
fn line_start_from(text: &str, mut offset: usize, mut at_line: u64, line: u64) -> Option<usize> {
    if line == 0 {
        return None;
    }
    while at_line < line {
        offset += text[offset..].find('\n')? + 1;
        at_line += 1;
    }
    Some(offset)
}

/// The line starting at `start`, without its line ending.
fn line_text_at(text: &str, start: usize) -> &str {
    let rest = &text[start..];
    let line = rest.split('\n').next().unwrap_or_default();
    line.strip_suffix('\r').unwrap_or(line)
}

/// The byte offset of the 1-based character `column` in `line` (its end when past it).
fn char_offset(line: &str, column: u64) -> usize {
    let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    line.char_indices()
        .nth(skip)
        .map_or(line.len(), |(offset, _)| offset)
}

/// [`crate::compile::source_texts`] with the plugin each named file belongs to: a file the lock file records as
/// a plugin's copy, or a stage file whose `plugin:` names one (docs/decisions.md D14). An
/// unreadable lock names no owner here (`aidlc doctor` reports it).
pub fn sources_with_plugins(
    db: &dyn salsa::Database,
    layout: &Layout,
    diagnostics: &[Diagnostic],
) -> SourcesWithPlugins {
    let texts = crate::compile::source_texts(db, diagnostics);
    let wanted = crate::compile::files_named_by(diagnostics);
    let mut plugins = BTreeMap::new();
    if wanted.is_empty() {
        return SourcesWithPlugins { texts, plugins };
    }
    let lock =
        crate::plugin::lock_file::read_lock(&layout.project_dir, layout.harness.dir_name()).ok();
    for entry in crate::compile::db::Project::get(db).stage_files(db) {
        let path = entry.file.path(db);
        if !wanted.contains(path.as_path()) {
            continue;
        }
        if let Some(plugin) = crate::compile::parse::parsed_stage(db, entry.file)
            .definition
            .as_ref()
            .and_then(|stage| stage.plugin.as_ref())
        {
            plugins.insert(path.clone(), plugin.value.clone());
        }
    }
    if let Some(lock) = &lock {
        for path in &wanted {
            if let Some(owner) = lock.owner_of(path.as_str()) {
                plugins
                    .entry(path.to_path_buf())
                    .or_insert_with(|| owner.to_owned());
            }
        }
    }
    SourcesWithPlugins { texts, plugins }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_span_covers_the_word_or_the_line() {
        let text = "first line\n  ## Scope here\nlast";
        assert_eq!(
            &text[line_span(text, 2, None, None).unwrap()],
            "## Scope here"
        );
        assert_eq!(&text[line_span(text, 2, Some(6), None).unwrap()], "Scope");
        assert_eq!(
            &text[line_span(text, 2, Some(3), Some((3, Some(3)))).unwrap()],
            "## Scope here\nla"
        );
        assert_eq!(line_span(text, 0, None, None), None);
        assert_eq!(line_span(text, 9, None, None), None);
    }
}
