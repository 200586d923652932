//! Turning [`Diagnostic`] values into text: miette's graphical report for people, JSON lines
//! for tools, and GitHub Actions workflow commands for CI annotations.

use std::fmt::Write as _;

use camino::Utf8Path;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};

use crate::diagnostics::{Diagnostic, Severity};
use crate::syntax::frontmatter::LineIndex;

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
pub fn render_human(diagnostic: &Diagnostic, sources: &dyn SourceLookup, color: bool) -> String {
    let severity = match diagnostic.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    };
    let mut report = MietteDiagnostic::new(diagnostic.message.clone())
        .with_code(diagnostic.code.as_str())
        .with_severity(severity);
    if let Some(help) = &diagnostic.help {
        report = report.with_help(help.clone());
    }
    let file_text = diagnostic
        .file
        .as_deref()
        .and_then(|file| Some((file, sources.text(file)?)));
    if let (Some(span), Some(_)) = (&diagnostic.span, file_text) {
        let label =
            LabeledSpan::new_primary_with_span(diagnostic.label.clone(), span.start..span.end);
        report = report.and_label(label);
        for related in &diagnostic.related {
            if Some(related.file.as_path()) == diagnostic.file.as_deref()
                && let Some(span) = &related.span
            {
                report = report.and_label(LabeledSpan::new_with_span(
                    Some(related.message.clone()),
                    span.start..span.end,
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
    let rendered = match file_text {
        Some((file, text)) if diagnostic.span.is_some() => {
            let report = Report::new(report)
                .with_source_code(NamedSource::new(file.as_str(), text.to_owned()));
            handler.render_report(&mut out, report.as_ref())
        }
        _ => handler.render_report(&mut out, &report),
    };
    if rendered.is_err() {
        out = format!("{}: {}\n", diagnostic.severity.as_str(), diagnostic.message);
    }
    if diagnostic.span.is_none()
        && let Some(file) = &diagnostic.file
    {
        let _ = writeln!(out, "  in {file}");
    }
    for related in &diagnostic.related {
        let same_file_with_span =
            Some(related.file.as_path()) == diagnostic.file.as_deref() && related.span.is_some();
        if !same_file_with_span {
            let _ = writeln!(out, "  note: {}: {}", related.file, related.message);
        }
    }
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
    let mut properties = Vec::new();
    if let Some(file) = &diagnostic.file {
        properties.push(format!("file={}", escape_property(file.as_str())));
    }
    if let Some(((line, column), (end_line, end_column))) = primary_position(diagnostic, sources) {
        properties.push(format!("line={line}"));
        properties.push(format!("col={column}"));
        properties.push(format!("endLine={end_line}"));
        properties.push(format!("endColumn={end_column}"));
    }
    properties.push(format!(
        "title={}",
        escape_property(diagnostic.code.as_str())
    ));
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    format!(
        "::{command} {}::{}",
        properties.join(","),
        escape_data(&message)
    )
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}
