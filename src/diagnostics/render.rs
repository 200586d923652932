//! Turning [`Diagnostic`] values into text: miette's graphical report for people, JSON lines
//! for tools, and GitHub Actions workflow commands for CI annotations.

use std::fmt::Write as _;

use camino::Utf8Path;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};

use crate::diagnostics::snippet::WindowedSource;
use crate::diagnostics::{Diagnostic, Severity};
use crate::github_actions::workflow_command;
use crate::syntax::frontmatter::LineIndex;

/// A word (a run without whitespace) longer than this many characters is shortened in the
/// human rendering of a message, help or label: a value quoted from a file can be megabytes.
const MAX_SHOWN_WORD_CHARS: usize = 200;
/// What a shortened word keeps of its start and of its end.
const SHORTENED_WORD_HEAD_CHARS: usize = 120;
const SHORTENED_WORD_TAIL_CHARS: usize = 40;

/// Looks up a file's text by its project-relative path (for snippets and line numbers).
pub trait SourceLookup {
    fn text(&self, path: &Utf8Path) -> Option<&str>;
}

impl SourceLookup for std::collections::BTreeMap<camino::Utf8PathBuf, String> {
    fn text(&self, path: &Utf8Path) -> Option<&str> {
        self.get(path).map(String::as_str)
    }
}

/// 1-based `(line, column)` of the diagnostic's primary span, when it has one.
pub fn primary_position(
    diagnostic: &Diagnostic,
    sources: &dyn SourceLookup,
) -> Option<((usize, usize), (usize, usize))> {
    let span = diagnostic.span.clone()?;
    let text = sources.text(diagnostic.file.as_deref()?)?;
    let index = LineIndex::new(text);
    Some((
        index.line_col(text, span.start),
        index.line_col(text, span.end),
    ))
}

/// A graphical report with the source snippet. `color` picks the colour theme.
///
/// Never panics, whatever the file holds: a line longer than
/// [`snippet::MAX_SHOWN_LINE_CHARS`](crate::diagnostics::snippet::MAX_SHOWN_LINE_CHARS) is shown
/// as a window around the span, and a very long word in the text is shortened.
pub fn render_human(diagnostic: &Diagnostic, sources: &dyn SourceLookup, color: bool) -> String {
    let severity = match diagnostic.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    };
    let mut report = MietteDiagnostic::new(shorten_long_words(&diagnostic.message))
        .with_code(diagnostic.code.as_str())
        .with_severity(severity);
    if let Some(help) = &diagnostic.help {
        report = report.with_help(shorten_long_words(help));
    }
    let file_text = diagnostic
        .file
        .as_deref()
        .and_then(|file| Some((file, sources.text(file)?)));
    let snippet = match (&diagnostic.span, file_text) {
        (Some(span), Some((_, text))) => Some(snippet_source(diagnostic, span, text)),
        _ => None,
    };
    if let (Some(span), Some(snippet)) = (&diagnostic.span, &snippet) {
        let label = LabeledSpan::new_primary_with_span(
            diagnostic.label.as_deref().map(shorten_long_words),
            snippet.map_span(span),
        );
        report = report.and_label(label);
        for related in &diagnostic.related {
            if Some(related.file.as_path()) == diagnostic.file.as_deref()
                && let Some(span) = &related.span
            {
                report = report.and_label(LabeledSpan::new_with_span(
                    Some(shorten_long_words(&related.message)),
                    snippet.map_span(span),
                ));
            }
        }
    }
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    let rendered = match (file_text, snippet) {
        (Some((file, _)), Some(snippet)) => {
            let report =
                Report::new(report).with_source_code(NamedSource::new(file.as_str(), snippet));
            handler.render_report(&mut out, report.as_ref())
        }
        _ => handler.render_report(&mut out, &report),
    };
    if rendered.is_err() {
        out = format!(
            "{}: {}\n",
            diagnostic.severity.as_str(),
            shorten_long_words(&diagnostic.message)
        );
    }
    if diagnostic.span.is_none()
        && let Some(file) = &diagnostic.file
    {
        let _ = writeln!(out, "  in {file}");
    }
    for related in &diagnostic.related {
        let same_file_with_span =
            Some(related.file.as_path()) == diagnostic.file.as_deref() && related.span.is_some();
        if same_file_with_span {
            continue;
        }
        let position = related
            .span
            .as_ref()
            .zip(sources.text(&related.file))
            .map(|(span, text)| {
                let (line, column) = LineIndex::new(text).line_col(text, span.start);
                format!(":{line}:{column}")
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  note: {}{position}: {}",
            related.file,
            shorten_long_words(&related.message)
        );
    }
    out
}

/// The text miette draws the snippet from: the file as it is, or with its long lines cut.
enum Snippet {
    Whole(String),
    Windowed(WindowedSource),
}

impl Snippet {
    fn map_span(&self, span: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        match self {
            Snippet::Whole(_) => span.clone(),
            Snippet::Windowed(windowed) => windowed.map_span(span),
        }
    }
}

impl miette::SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        match self {
            Snippet::Whole(text) => text.read_span(span, context_lines_before, context_lines_after),
            Snippet::Windowed(windowed) => {
                windowed.read_span(span, context_lines_before, context_lines_after)
            }
        }
    }
}

fn snippet_source(diagnostic: &Diagnostic, span: &std::ops::Range<usize>, text: &str) -> Snippet {
    let mut anchors = vec![span.start, span.end];
    for related in &diagnostic.related {
        if Some(related.file.as_path()) == diagnostic.file.as_deref()
            && let Some(related_span) = &related.span
        {
            anchors.extend([related_span.start, related_span.end]);
        }
    }
    match WindowedSource::new(text, &anchors) {
        Some(mut windowed) => {
            windowed.set_primary(text, span);
            Snippet::Windowed(windowed)
        }
        None => Snippet::Whole(text.to_owned()),
    }
}

/// `text` with every word longer than [`MAX_SHOWN_WORD_CHARS`] cut to its head, `…` and its
/// tail; text without such a word is returned as it is.
pub fn shorten_long_words(text: &str) -> String {
    if text.len() <= MAX_SHOWN_WORD_CHARS {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len().min(4096));
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let n_chars = word.chars().count();
        if n_chars > MAX_SHOWN_WORD_CHARS {
            out.extend(word.chars().take(SHORTENED_WORD_HEAD_CHARS));
            out.push('…');
            out.extend(word.chars().skip(n_chars - SHORTENED_WORD_TAIL_CHARS));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for character in text.chars() {
        if character.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(character);
        } else {
            word.push(character);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// One JSON object (no trailing newline) with stable keys.
pub fn render_json(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> String {
    json_value(diagnostic, sources).to_string()
}

/// The JSON object of [`render_json`], for embedding in a larger event.
pub fn json_value(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> serde_json::Value {
    let position = primary_position(diagnostic, sources);
    serde_json::json!({
        "code": diagnostic.code.as_str(),
        "severity": diagnostic.severity.as_str(),
        "message": diagnostic.message,
        "file": diagnostic.file.as_ref().map(|f| f.as_str()),
        "line": position.map(|((line, _), _)| line),
        "column": position.map(|((_, column), _)| column),
        "end_line": position.map(|(_, (line, _))| line),
        "end_column": position.map(|(_, (_, column))| column),
        "label": diagnostic.label,
        "help": diagnostic.help,
        "related": diagnostic.related.iter().map(|related| serde_json::json!({
            "file": related.file.as_str(),
            "message": related.message,
        })).collect::<Vec<_>>(),
    })
}

/// A GitHub Actions workflow command: `::error file=…,line=…,col=…::message`.
pub fn render_github(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> String {
    let command = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut properties: Vec<(&str, String)> = Vec::new();
    if let Some(file) = &diagnostic.file {
        properties.push(("file", file.as_str().to_owned()));
    }
    if let Some(((line, column), (end_line, end_column))) = primary_position(diagnostic, sources) {
        properties.push(("line", line.to_string()));
        properties.push(("col", column.to_string()));
        properties.push(("endLine", end_line.to_string()));
        properties.push(("endColumn", end_column.to_string()));
    }
    properties.push(("title", diagnostic.code.as_str().to_owned()));
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let properties: Vec<(&str, &str)> = properties
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    workflow_command(command, &properties, &message)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use camino::Utf8PathBuf;

    use super::*;
    use crate::diagnostics::Code;

    fn sources(files: &[(&str, &str)]) -> BTreeMap<Utf8PathBuf, String> {
        files
            .iter()
            .map(|(path, text)| (Utf8PathBuf::from(*path), (*text).to_owned()))
            .collect()
    }

    #[test]
    fn a_span_past_column_65535_is_drawn_in_a_window() {
        let text = format!("---\nkind: {} # c\n---\n", "v".repeat(70_000));
        let hash = text.find('#').unwrap();
        let diagnostic = Diagnostic::error(Code::TrailingComment, "comment after the value")
            .in_file("a.md")
            .at(hash..hash + 3)
            .with_label("here");
        let out = render_human(&diagnostic, &sources(&[("a.md", &text)]), false);
        assert!(out.contains(&format!("[a.md:2:{}]", hash - 4 + 1)), "{out}");
        let shown = out.lines().find(|line| line.contains("# c")).unwrap();
        assert!(
            shown.contains("…vvv") && shown.chars().count() < 200,
            "{shown}"
        );
        assert!(
            !out.starts_with("error: "),
            "drawn, not the plain fallback: {out}"
        );
    }

    #[test]
    fn spans_anywhere_on_long_lines_never_panic() {
        let line = "\t".repeat(20_000) + &"é".repeat(30_000) + &"🎉".repeat(20_000);
        let text = format!("a: b\n{line}\r{line}\nz\n");
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(997).collect();
        let files = sources(&[("a.md", &text)]);
        for (index, &start) in boundaries.iter().enumerate() {
            let end = boundaries[(index * 7) % boundaries.len()].max(start);
            let diagnostic = Diagnostic::warning(Code::YamlSyntax, "x")
                .in_file("a.md")
                .at(start..end)
                .with_related("a.md", Some(end..end), "related");
            let out = render_human(&diagnostic, &files, true);
            assert!(
                out.lines().all(|l| l.chars().count() < 2_000),
                "{start}..{end}"
            );
        }
    }

    #[test]
    fn a_related_place_in_another_file_is_a_note_with_its_position() {
        let diagnostic = Diagnostic::error(Code::DeadSensorBinding, "dead")
            .in_file("stage.md")
            .at(4..9)
            .with_related("sensor.md", Some(8..12), "this glob");
        let files = sources(&[
            ("stage.md", "---\nshape\n---\n"),
            ("sensor.md", "---\nid: x\nmatches: \"**\"\n---\n"),
        ]);
        let out = render_human(&diagnostic, &files, false);
        assert!(out.contains("note: sensor.md:2:5: this glob"), "{out}");
    }

    #[test]
    fn only_very_long_words_are_shortened() {
        let short = "a message with `words` and a path/like/this.md";
        assert_eq!(shorten_long_words(short), short);
        let long = format!("got \"{}\" here", "y".repeat(10_000));
        let shown = shorten_long_words(&long);
        assert!(
            shown.starts_with("got \"yyy") && shown.ends_with("yy\" here"),
            "{shown}"
        );
        assert!(
            shown.contains('…') && shown.chars().count() < 200,
            "{shown}"
        );
    }
}
