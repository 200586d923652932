//! Turning [`Diagnostic`] values into text: miette's graphical report for people, JSON lines
//! for tools, and GitHub Actions workflow commands for CI annotations.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

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
    let handler = report_handler(color);
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

/// Something to draw in the compile's look that is not a compile [`Diagnostic`] (a gate
/// finding, a sensor that was not evaluated): a code, a message, and where it is.
#[derive(Debug, Clone)]
pub struct HumanItem<'a> {
    pub severity: Severity,
    /// Shown as the diagnostic code (a sensor id).
    pub code: &'a str,
    pub message: &'a str,
    /// The file, shown as `in <file>` when there is no snippet.
    pub file: Option<&'a Utf8Path>,
    /// The file's text and the primary span in it, for a snippet.
    pub snippet: Option<(Arc<str>, Range<usize>)>,
    pub label: Option<&'a str>,
    pub help: Option<&'a str>,
    /// Lines after the report, each shown as `  = <note>`.
    pub notes: &'a [String],
}

/// A graphical report of `item`, in the look of [`render_human`]; never panics (long lines
/// are windowed, long words shortened).
pub fn render_human_item(item: &HumanItem<'_>, color: bool) -> String {
    let severity = match item.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    };
    let mut report = MietteDiagnostic::new(shorten_long_words(item.message))
        .with_code(item.code)
        .with_severity(severity);
    if let Some(help) = item.help {
        report = report.with_help(shorten_long_words(help));
    }
    let mut out = String::new();
    let rendered = match (item.file, &item.snippet) {
        (Some(file), Some((text, span))) => {
            let snippet = match WindowedSource::new(text, &[span.start, span.end]) {
                Some(mut windowed) => {
                    windowed.set_primary(text, span);
                    Snippet::Windowed(windowed)
                }
                None => Snippet::Shared(Arc::clone(text)),
            };
            let label = LabeledSpan::new_primary_with_span(
                item.label.map(shorten_long_words),
                snippet.map_span(span),
            );
            let report = Report::new(report.and_label(label))
                .with_source_code(NamedSource::new(file.as_str(), snippet));
            item_handler(color).render_report(&mut out, report.as_ref())
        }
        _ => item_handler(color).render_report(&mut out, &report),
    };
    if rendered.is_err() {
        out = format!(
            "{}: {}\n",
            match item.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            },
            shorten_long_words(item.message)
        );
    }
    if item.snippet.is_none()
        && let Some(file) = item.file
    {
        let _ = writeln!(out, "  in {file}");
    }
    for note in item.notes {
        let _ = writeln!(out, "  = {}", shorten_long_words(note));
    }
    out
}

/// The handler of [`render_human_item`]: lines are not wrapped, so that a sentence of the gate
/// report reads (and greps) the same in every format.
fn item_handler(color: bool) -> GraphicalReportHandler {
    report_handler(color).with_wrap_lines(false)
}

fn report_handler(color: bool) -> GraphicalReportHandler {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false)
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
    let line_start = line_start(text, line)?;
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

/// The byte offset where the 1-based `line` starts.
fn line_start(text: &str, line: u64) -> Option<usize> {
    line_start_from(text, 0, 1, line)
}

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

/// The text miette draws the snippet from: the file as it is, or with its long lines cut.
enum Snippet {
    Whole(String),
    Shared(Arc<str>),
    Windowed(WindowedSource),
}

impl Snippet {
    fn map_span(&self, span: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        match self {
            Snippet::Whole(_) | Snippet::Shared(_) => span.clone(),
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
            Snippet::Shared(text) => {
                text.as_ref()
                    .read_span(span, context_lines_before, context_lines_after)
            }
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

/// A relative path as a URI reference for SARIF: `/` separators kept, every byte outside the
/// unreserved and sub-delimiter characters percent-encoded. `:` is encoded too, so that a first
/// segment like `c:` is never read as a scheme.
pub fn sarif_uri_reference(path: &Utf8Path) -> String {
    let mut uri = String::with_capacity(path.as_str().len());
    for byte in path.as_str().replace('\\', "/").bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@/".contains(&byte);
        if keep {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
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
    render_github_in(diagnostic, sources, Utf8Path::new(""))
}

/// [`render_github`] with the file made repository-relative: `prefix` is the project folder
/// relative to the repository root (empty when they are the same).
pub fn render_github_in(
    diagnostic: &Diagnostic,
    sources: &dyn SourceLookup,
    prefix: &Utf8Path,
) -> String {
    let command = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut properties: Vec<(&str, String)> = Vec::new();
    if let Some(file) = &diagnostic.file {
        properties.push(("file", prefix.join(file).as_str().to_owned()));
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

/// An output file `compile --check` found out of date, and why: one per stage whose node would
/// change (on its stage file), one per removed stage and one for the scope grid (on the output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Project-relative: the stage file, or the output file.
    pub file: camino::Utf8PathBuf,
    /// The output that would change (`stage-graph.json`, `scope-grid.json`).
    pub output: String,
    /// The stage, when one is concerned.
    pub stage: Option<String>,
    /// `changed`, `added`, `removed`, or `framing`/`grid` for the whole file.
    pub change: &'static str,
    pub message: String,
}

/// The help every drift shares.
pub const DRIFT_HELP: &str = "run `aidlc compile` and commit the outputs it writes";

/// One `::error` workflow command per drift, on its (repository-relative) file.
pub fn render_drift_github(drift: &Drift, prefix: &Utf8Path) -> String {
    let file = prefix.join(&drift.file);
    workflow_command(
        "error",
        &[
            ("file", file.as_str()),
            ("title", &format!("{} is out of date", drift.output)),
        ],
        &format!("{}\nhelp: {DRIFT_HELP}", drift.message),
    )
}

/// One JSON object per drift (no trailing newline), `kind: "drift"` beside the diagnostics'
/// objects.
pub fn render_drift_json(drift: &Drift) -> String {
    serde_json::json!({
        "kind": "drift",
        "severity": "error",
        "file": drift.file.as_str(),
        "output": drift.output,
        "stage": drift.stage,
        "change": drift.change,
        "message": drift.message,
        "help": DRIFT_HELP,
    })
    .to_string()
}

/// The rule id of drift results in the compile's SARIF.
const DRIFT_RULE: &str = "stale-output";

/// The compile's diagnostics (and drift, under `--check`) as one SARIF 2.1.0 log: one rule per
/// diagnostic code that occurs, one result per diagnostic with its region, URIs relative to the
/// repository root (`prefix` is the project folder in it).
pub fn render_sarif_log(
    diagnostics: &[Diagnostic],
    drifts: &[Drift],
    sources: &dyn SourceLookup,
    prefix: &Utf8Path,
    tool_version: &str,
) -> String {
    use serde_json::{Value, json};
    let mut rule_ids: Vec<&str> = Vec::new();
    let rule_index = |id: &'static str, rule_ids: &mut Vec<&str>| -> usize {
        rule_ids
            .iter()
            .position(|seen| *seen == id)
            .unwrap_or_else(|| {
                rule_ids.push(id);
                rule_ids.len() - 1
            })
    };
    let location = |file: Option<&Utf8Path>, position: Option<((usize, usize), (usize, usize))>| {
        let uri = file.map_or_else(String::new, |file| sarif_uri_reference(&prefix.join(file)));
        let region = match position {
            Some(((line, column), (end_line, end_column))) => json!({
                "startLine": line, "startColumn": column,
                "endLine": end_line, "endColumn": end_column.max(1),
            }),
            None => json!({"startLine": 1}),
        };
        json!({"physicalLocation": {
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "region": region,
        }})
    };
    let mut results: Vec<Value> = Vec::new();
    for diagnostic in diagnostics {
        let index = rule_index(diagnostic.code.as_str(), &mut rule_ids);
        let mut text = diagnostic.message.clone();
        if let Some(help) = &diagnostic.help {
            let _ = write!(text, "\nhelp: {help}");
        }
        let position = primary_position(diagnostic, sources);
        let file = diagnostic.file.as_deref();
        let fingerprint = blake3::hash(
            format!(
                "{}\0{}\0{}",
                diagnostic.code.as_str(),
                file.map_or("", Utf8Path::as_str),
                diagnostic.message
            )
            .as_bytes(),
        );
        results.push(json!({
            "ruleId": diagnostic.code.as_str(),
            "ruleIndex": index,
            "level": diagnostic.severity.as_str(),
            "message": {"text": text},
            "locations": [location(file, position)],
            "partialFingerprints": {"aidlcDiagnostic/v1": fingerprint.to_hex()[..32].to_owned()},
        }));
    }
    for drift in drifts {
        let index = rule_index(DRIFT_RULE, &mut rule_ids);
        let fingerprint = blake3::hash(format!("{}\0{}", drift.file, drift.message).as_bytes());
        results.push(json!({
            "ruleId": DRIFT_RULE,
            "ruleIndex": index,
            "level": "error",
            "message": {"text": format!("{}\nhelp: {DRIFT_HELP}", drift.message)},
            "locations": [location(Some(&drift.file), None)],
            "partialFingerprints": {"aidlcDiagnostic/v1": fingerprint.to_hex()[..32].to_owned()},
        }));
    }
    let rules: Vec<Value> = rule_ids
        .iter()
        .map(|id| {
            let name: String = id
                .split('-')
                .map(|word| {
                    let mut characters = word.chars();
                    characters.next().map_or_else(String::new, |first| {
                        first.to_ascii_uppercase().to_string() + characters.as_str()
                    })
                })
                .collect();
            json!({
                "id": id,
                "name": name,
                "shortDescription": {"text": format!("aidlc compile: {id}")},
                "fullDescription": {"text": format!("The aidlc compile diagnostic `{id}`; docs/diagnostics.md has a section for each code.")},
                "help": {
                    "text": format!("See the `{id}` section of docs/diagnostics.md: what it means, an example and how to fix it."),
                    "markdown": format!("See the `{id}` section of `docs/diagnostics.md`: what it means, an example and how to fix it."),
                },
            })
        })
        .collect();
    let document = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "aidlc",
                "version": tool_version,
                "semanticVersion": tool_version,
                "informationUri": "https://github.com/awslabs/aidlc-workflows",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The root of the repository that holds the project."}}},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&document).expect("a JSON value always serialises")
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
