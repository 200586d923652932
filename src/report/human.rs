//! The human format, for people: each problem drawn with miette, with the source line(s)
//! where the file's text is known, its label, its help and its notes. The compile prints its
//! diagnostics one by one through [`render_diagnostic`]; the gate report ([`render_human`])
//! draws each finding the same way, then the summary block.
//!
//! The gate report is grouped as eslint and ruff group: one header per file (in the order files
//! first appear in the report) with its count of problems, then one per sensor in that file
//! with the stage, the severity and the detail file, and under it each finding: the message,
//! the source line(s) with the finding's rule as the label, the help; a finding without a source
//! line names its rule and line in a note. Not-evaluated fires and blocking bindings that never
//! fired are drawn the same way. Passed fires are only counted. ANSI colour only when the
//! settings ask for it.
//!
//! Every path shown starts with the project folder as seen from the working folder
//! ([`HumanStyle::path_prefix`]), so that it opens from where the command ran.
//!
//! Invariant: drawing never panics, whatever the file holds: a line longer than
//! [`MAX_SHOWN_LINE_CHARS`](crate::report::snippet::MAX_SHOWN_LINE_CHARS) is shown as a window
//! around the span, and a very long word in the text is shortened.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};

use crate::leaves::diagnostics::{Diagnostic, Related};
use crate::leaves::english::counted;
use crate::leaves::text_lines::line_column;
use crate::report::RenderSettings;
use crate::report::counts::entry_in_order;
use crate::report::gate_problems::gate_problems;
use crate::report::messages::{
    blocking_line, closing_lines, dead_binding_message, duration_ms, not_evaluated_detail,
    nothing_checked_message, scope_line, summary_line,
};
use crate::report::problem::{Level, Origin, Problem};
use crate::report::snippet::WindowedSource;
use crate::report::source::{SourceLookup, line_span};
use crate::runtime::gate::report::{Finding, GateFire, GateReport, Severity, UnfiredBinding};

/// A word (a run without whitespace) longer than this many characters is shortened in the
/// human rendering of a message, help or label: a value quoted from a file can be megabytes.
const MAX_SHOWN_WORD_CHARS: usize = 200;
/// What a shortened word keeps of its start and of its end.
const SHORTENED_WORD_HEAD_CHARS: usize = 120;
const SHORTENED_WORD_TAIL_CHARS: usize = 40;

/// How a problem is drawn.
#[derive(Debug, Clone, Copy)]
pub struct HumanStyle<'a> {
    /// ANSI colours.
    pub color: bool,
    /// Wrap long lines at 100 columns (the compile's diagnostics on a terminal); off a terminal,
    /// and in the gate report, a message is one line, so that a sentence reads (and greps) the
    /// same in every format.
    pub wrap_lines: bool,
    /// The project folder as seen from the working folder (empty when they are the same): put
    /// before every project-relative path shown, so that it opens from where the user is.
    pub path_prefix: &'a Utf8Path,
    /// Drawn under a header that names its file and its rule (the gate report): no code line
    /// and no `in <file>` line of its own.
    pub under_header: bool,
}

impl HumanStyle<'_> {
    /// `path` as the user opens it from the working folder.
    pub fn shown_path(&self, path: &Utf8Path) -> Utf8PathBuf {
        self.path_prefix.join(path)
    }
}

/// A compile diagnostic drawn for people (what `aidlc compile` prints on stderr); its paths
/// start with `path_prefix` (see [`HumanStyle::path_prefix`]). Its long lines are wrapped only
/// when `for_a_terminal`: read by a program, each message, label and help is one line.
pub fn render_diagnostic(
    diagnostic: &Diagnostic,
    sources: &dyn SourceLookup,
    color: bool,
    for_a_terminal: bool,
    path_prefix: &Utf8Path,
) -> String {
    render_problem(
        &Problem::of_diagnostic(diagnostic).with_plugin(sources),
        sources,
        HumanStyle {
            color,
            wrap_lines: for_a_terminal,
            path_prefix,
            under_header: false,
        },
    )
}

/// A graphical report of `problem` with the snippet of its span when `sources` has the file's
/// text; then `in <file>` when no snippet was drawn, a `note:` with the position of each related
/// place that is not drawn in the snippet, and `= <note>` for each of the problem's notes.
/// Never panics (see the module documentation).
pub fn render_problem(
    problem: &Problem<'_>,
    sources: &dyn SourceLookup,
    style: HumanStyle<'_>,
) -> String {
    let severity = match problem.level {
        Level::Error => miette::Severity::Error,
        Level::Warning => miette::Severity::Warning,
    };
    let message = match &problem.plugin {
        Some(plugin) => format!("{} [plugin {plugin}]", problem.message),
        None => problem.message.clone().into_owned(),
    };
    let mut report = MietteDiagnostic::new(shorten_long_words(&message)).with_severity(severity);
    if !style.under_header {
        report = report.with_code(problem.rule);
    }
    if let Some(help) = &problem.help {
        report = report.with_help(shorten_long_words(help));
    }
    let file = problem.file();
    // The file's text, and its windowed copy when a line is too long to show whole.
    let snippet = problem.location.as_ref().and_then(|location| {
        let span = location.span.as_ref()?;
        let text = sources.snippet_text(&location.file)?;
        let windowed = windowed_source(problem, span, &text);
        Some((&*location.file, span, text, windowed))
    });
    let drew_snippet = snippet.is_some();
    let handler = report_handler(style);
    let mut out = String::new();
    let rendered = match snippet {
        Some((file, span, text, windowed)) => {
            let map_span = |span: &Range<usize>| {
                windowed
                    .as_ref()
                    .map_or_else(|| span.clone(), |windowed| windowed.map_span(span))
            };
            let label = LabeledSpan::new_primary_with_span(
                problem.label.or(problem.kind).map(shorten_long_words),
                map_span(span),
            );
            report = report.and_label(label);
            for related in same_file_related(problem) {
                if let Some(span) = &related.span {
                    report = report.and_label(LabeledSpan::new_with_span(
                        Some(shorten_long_words(&related.message)),
                        map_span(span),
                    ));
                }
            }
            let name = style.shown_path(file);
            let report = Report::new(report);
            let report = match windowed {
                Some(windowed) => report.with_source_code(NamedSource::new(name, windowed)),
                None => report.with_source_code(NamedSource::new(name, text)),
            };
            handler.render_report(&mut out, report.as_ref())
        }
        None => handler.render_report(&mut out, &report),
    };
    if rendered.is_err() {
        out = format!(
            "{}: {}\n",
            problem.level.as_str(),
            shorten_long_words(&problem.message)
        );
    }
    if !drew_snippet
        && !style.under_header
        && let Some(file) = file
    {
        let _ = writeln!(out, "  in {}", style.shown_path(file));
    }
    for related in problem.related {
        let drawn = Some(&*related.file) == file && related.span.is_some() && drew_snippet;
        if drawn {
            continue;
        }
        let position = related
            .span
            .as_ref()
            .zip(sources.text(&related.file))
            .map(|(span, text)| {
                let (line, column) = line_column(text, span.start);
                format!(":{line}:{column}")
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  note: {}{position}: {}",
            style.shown_path(&related.file),
            shorten_long_words(&related.message)
        );
    }
    for note in &problem.notes {
        let _ = writeln!(out, "  = {}", shorten_long_words(note));
    }
    out
}

/// The related places in the problem's own file that have a span: drawn as labels.
fn same_file_related<'p>(problem: &'p Problem<'_>) -> impl Iterator<Item = &'p Related> {
    let file = problem.file();
    problem
        .related
        .iter()
        .filter(move |related| Some(&*related.file) == file && related.span.is_some())
}

fn report_handler(style: HumanStyle<'_>) -> GraphicalReportHandler {
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    if style.wrap_lines {
        handler
    } else {
        handler.with_wrap_lines(false)
    }
}

/// `text` windowed around the primary span and the related spans in the same file, when a line
/// is too long to show whole.
fn windowed_source(
    problem: &Problem<'_>,
    span: &Range<usize>,
    text: &str,
) -> Option<WindowedSource> {
    let mut anchors = vec![span.start, span.end];
    for related in same_file_related(problem) {
        if let Some(related_span) = &related.span {
            anchors.extend([related_span.start, related_span.end]);
        }
    }
    let mut windowed = WindowedSource::new(text, &anchors)?;
    windowed.set_primary(text, span);
    Some(windowed)
}

/// `text` with every word longer than [`MAX_SHOWN_WORD_CHARS`] cut to its head, `…` and its
/// tail; text without such a word is returned as it is.
pub fn shorten_long_words(text: &str) -> String {
    if text.len() <= MAX_SHOWN_WORD_CHARS {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len().min(4096));
    // Each piece is a word and the one whitespace character after it (none at the end).
    for piece in text.split_inclusive(char::is_whitespace) {
        let (word, space) = piece.split_at(piece.trim_end_matches(char::is_whitespace).len());
        let n_chars = word.chars().count();
        if n_chars > MAX_SHOWN_WORD_CHARS {
            out.extend(word.chars().take(SHORTENED_WORD_HEAD_CHARS));
            out.push('…');
            out.extend(word.chars().skip(n_chars - SHORTENED_WORD_TAIL_CHARS));
        } else {
            out.push_str(word);
        }
        out.push_str(space);
    }
    out
}

// --- The gate report -------------------------------------------------------------------------

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
struct Paint {
    color: bool,
}

impl Paint {
    const RESET: &'static str = "\u{1b}[0m";
    const BOLD_RED: &'static str = "\u{1b}[1;31m";
    const BOLD_YELLOW: &'static str = "\u{1b}[1;33m";
    const BOLD: &'static str = "\u{1b}[1m";

    fn style(self, style: &str, text: &str) -> String {
        if self.color {
            format!("{style}{text}{}", Self::RESET)
        } else {
            text.to_owned()
        }
    }

    fn error(self, text: &str) -> String {
        self.style(Self::BOLD_RED, text)
    }

    fn warning(self, text: &str) -> String {
        self.style(Self::BOLD_YELLOW, text)
    }

    fn bold(self, text: &str) -> String {
        self.style(Self::BOLD, text)
    }
}

/// Every finding, not-evaluated fire and never-fired blocking binding, grouped by file (with
/// its count of problems) and then by sensor (with the stage, the severity and the detail file
/// once), then the summary block. Paths start with `settings.path_prefix`, so that they open
/// from the working folder. `settings.sources` gives the snippets; `settings.color` adds ANSI
/// styles.
pub fn render_human(report: &GateReport, settings: &RenderSettings) -> String {
    let paint = Paint {
        color: settings.color,
    };
    let style = HumanStyle {
        color: settings.color,
        wrap_lines: false,
        path_prefix: &settings.path_prefix,
        under_header: true,
    };
    let mut files: Vec<(Utf8PathBuf, FileGroup)> = Vec::new();
    let mut add = |file: &Utf8Path, header: String, problem: &Problem<'_>| {
        let block = render_problem(problem, &settings.sources, style);
        let group = entry_in_order(&mut files, file.to_owned());
        match problem.level {
            Level::Error => group.errors += 1,
            Level::Warning => group.warnings += 1,
        }
        entry_in_order(&mut group.rules, (problem.rule.to_owned(), header)).push(block);
    };
    for problem in &gate_problems(report) {
        // The plugin of a problem's stage is in its group's header (D50), not after its
        // message.
        let problem = &Problem {
            plugin: None,
            ..problem.clone()
        };
        match problem.origin {
            Origin::Finding(fire, finding) => {
                let header = fire_note(fire, report, &style);
                add(
                    &finding.file,
                    header,
                    &with_finding_span(problem.clone(), finding, settings),
                );
            }
            Origin::FailedWithoutFindings(fire) => {
                let header = fire_note(fire, report, &style);
                add(&fire.deliverable, header, problem);
            }
            Origin::NotEvaluated(fire) => {
                let (header, problem) = not_evaluated_problem(fire, problem);
                add(&fire.deliverable, header, &problem);
            }
            Origin::NeverFired(unfired) => {
                let (header, problem) = unfired_problem(unfired, problem);
                add(Utf8Path::new(&unfired.manifest_path), header, &problem);
            }
            Origin::Diagnostic
            | Origin::Drift
            | Origin::NothingChecked
            | Origin::DeadBinding(_)
            | Origin::UnseenWrites(_) => {}
        }
    }
    let mut blocks: Vec<String> = files
        .iter()
        .map(|(file, group)| group.text(file, paint, &style))
        .collect();
    blocks.push(human_summary(report, paint));
    blocks.join("\n\n")
}

/// The problems of one file, by sensor and the header each sensor's group gets.
#[derive(Default)]
struct FileGroup {
    errors: usize,
    warnings: usize,
    rules: Vec<((String, String), Vec<String>)>,
}

impl FileGroup {
    /// `<file>: N problems (E errors, W warnings)`, then each sensor's `<sensor>: <header>` and
    /// its problems, indented under it.
    fn text(&self, file: &Utf8Path, paint: Paint, style: &HumanStyle<'_>) -> String {
        let total = self.errors + self.warnings;
        let levels: Vec<String> = [(self.errors, "error"), (self.warnings, "warning")]
            .into_iter()
            .filter(|(count, _)| *count > 0)
            .map(|(count, level)| counted(count, level))
            .collect();
        let mut text = paint.bold(&format!(
            "{}: {} ({})",
            style.shown_path(file),
            counted(total, "problem"),
            levels.join(", ")
        ));
        for ((rule, header), blocks) in &self.rules {
            let _ = write!(text, "\n\n  {}: {header}", paint.bold(rule));
            for block in blocks {
                text.push_str("\n\n");
                text.push_str(&indented(block.trim_end(), "  "));
            }
        }
        text
    }
}

/// `text` with `indent` before each line that is not empty.
fn indented(text: &str, indent: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("{indent}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `stage X, blocking; details in P`, saying so when the details were not recorded.
fn fire_note(fire: &GateFire, report: &GateReport, style: &HumanStyle<'_>) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    match (&fire.detail_path, report.recorded) {
        (Some(detail_path), _) => {
            let _ = write!(note, "; details in {}", style.shown_path(detail_path));
        }
        (None, false) => note.push_str("; details not recorded (--no-record)"),
        (None, true) => {}
    }
    push_plugin(&mut note, fire.plugin.as_deref());
    note
}

/// ` [plugin <name>]` at the end of a plugin stage's header (D50); a core stage's header is
/// unchanged.
fn push_plugin(header: &mut String, plugin: Option<&str>) {
    if let Some(plugin) = plugin {
        let _ = write!(header, " [plugin {plugin}]");
    }
}

/// A finding's problem with the span of its line (and end) when the file's text is in
/// `settings.sources`, for a snippet labelled with the finding's rule; else with a note giving
/// the rule and the line.
fn with_finding_span<'r>(
    mut problem: Problem<'r>,
    finding: &Finding,
    settings: &RenderSettings,
) -> Problem<'r> {
    let (line, column) = finding.position();
    let span = line.and_then(|line| {
        let text = settings.sources.get(&finding.file)?;
        let end = finding
            .end_line
            .map(|end_line| (end_line, finding.end_column));
        line_span(text, line, column, end)
    });
    if span.is_none() {
        problem.notes.push(match (line, column) {
            (Some(line), Some(column)) => {
                format!("{} at line {line}, column {column}", finding.rule)
            }
            (Some(line), None) => format!("{} at line {line}", finding.rule),
            _ => finding.rule.clone(),
        });
    }
    if let Some(location) = &mut problem.location {
        location.span = span;
    }
    problem
}

/// The header of a not-evaluated fire's group, and its problem as people read it
/// (`not evaluated: <reason>`).
fn not_evaluated_problem<'r>(fire: &GateFire, problem: &Problem<'r>) -> (String, Problem<'r>) {
    let mut header = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    if fire.severity == Severity::Blocking {
        header.push_str("; a blocking sensor that was not evaluated does not pass the gate");
    }
    push_plugin(&mut header, fire.plugin.as_deref());
    let problem = Problem {
        message: Cow::Owned(format!("not evaluated: {}", not_evaluated_detail(fire))),
        ..problem.clone()
    };
    (header, problem)
}

/// The header of a never-fired binding's group, and its problem as people read it.
fn unfired_problem<'r>(unfired: &UnfiredBinding, problem: &Problem<'r>) -> (String, Problem<'r>) {
    let mut header = format!(
        "stage {} of intent {}, blocking; its glob is set in this manifest",
        unfired.stage, unfired.intent
    );
    push_plugin(&mut header, unfired.plugin.as_deref());
    let problem = Problem {
        message: Cow::Owned(format!("not evaluated: {}", unfired.reason())),
        help: Some(Cow::Borrowed(
            "make the glob match a declared output of the stage, or write that output",
        )),
        ..problem.clone()
    };
    (header, problem)
}

/// The closing block: what was checked, the counts, the blocking verdict, dead bindings, the
/// shard and whether anything was recorded.
fn human_summary(report: &GateReport, paint: Paint) -> String {
    let counts = report.counts();
    let mut lines = vec![paint.bold(&scope_line(report))];
    lines.push(format!(
        "{} in {:.1} ms",
        summary_line(report),
        duration_ms(report.duration)
    ));
    if let Some(line) = blocking_line(&counts) {
        lines.push(paint.error(&line));
    } else if let Some(nothing) = report.nothing_checked() {
        lines.push(paint.warning(&nothing_checked_message(&nothing)));
    }
    for dead in &report.dead_bindings {
        lines.push(format!(
            "{}: {}",
            paint.warning("dead binding"),
            dead_binding_message(dead)
        ));
    }
    if let Some(unseen) = &report.unseen_writes {
        lines.push(format!("{}: {}", paint.warning("notice"), unseen.message));
    }
    lines.extend(closing_lines(report));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::leaves::diagnostics::Code;
    use crate::report::messages::NOT_RECORDED_MESSAGE;
    use crate::report::test_reports::{RECORD, no_record_report, sample_report};

    /// The sample's requirements document, with lines 12 and 40 the findings point at.
    fn sample_sources() -> RenderSettings {
        let mut text = String::new();
        for line in 1..=45 {
            let _ = match line {
                12 => writeln!(text, "## Scope and Risks"),
                40 => writeln!(text, "## Scope"),
                _ => writeln!(text, "line {line} of the requirements"),
            };
        }
        let mut settings = RenderSettings::default();
        settings.sources.insert(
            format!("{RECORD}/inception/requirements-analysis/requirements.md").into(),
            Arc::from(text.as_str()),
        );
        settings
    }

    #[test]
    fn human_output_matches_the_snapshot() {
        insta::assert_snapshot!("human", render_human(&sample_report(), &sample_sources()));
    }

    #[test]
    fn human_output_shows_every_piece() {
        let text = render_human(&sample_report(), &sample_sources());
        let expected = [
            "  required-sections: stage requirements-analysis, blocking; details in aidlc/spaces/default/intents/260101-login/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md\n\n    × missing section \"## Risks\"",
            "12 │ ## Scope and Risks",
            "missing-heading",
            "help: add a `## Risks` section",
            "40 │ ## Scope",
            "⚠ the upstream artifact intent.md is never referenced\n    help: cite `intent` in one of the stage's deliverables\n    = unreferenced-artifact",
            "claim block has no source tag",
            "= untagged-claim at line 3",
            "not evaluated: tool-unavailable",
            "a blocking sensor that was not evaluated does not pass the gate",
            "not evaluated: sensor execution exceeded its budget (cap 300 s, observed 301 s)",
            "not evaluated: script-error: exit-2",
            "help: the worker's stderr ended with:\n          loading rules\n          error: cannot parse rules.md",
            "not evaluated: artifact-changed",
            "not evaluated: blocking sensor never fired: its glob matches none of the stage's 2 deliverables",
            "gate check of intent 260101-login: 3 stages, 2 deliverables found",
            "checked 6 sensors × 2 files: 1 passed, 3 failed, 5 not evaluated (1 tool-unavailable, 1 sensor execution exceeded its budget, 1 script-error: exit-2, 1 artifact-changed, 1 never-fired), 7 skipped (2 no glob match, 1 no deliverable, 1 sensors off, 1 not selected by --fire-on, 1 another shard, 1 not a regular file) in 48.3 ms",
            "blocking sensors: 1 failed, 3 not evaluated; the gate does not pass",
            "dead binding: sensor required-sections on stage reverse-engineering can never fire",
            "shard 2 of 4",
        ];
        for piece in expected {
            assert!(text.contains(piece), "missing {piece:?} in:\n{text}");
        }
        assert!(!text.contains("--no-record"), "{text}");
        assert!(!text.contains('\u{1b}'), "no colour unless asked");
        assert!(!text.ends_with('\n'));
    }

    /// One header per file, with its count, and one per sensor in it: the four claim-sources
    /// findings of one file share one header.
    #[test]
    fn each_file_and_each_sensor_in_it_has_one_header() {
        let text = render_human(&sample_report(), &sample_sources());
        let design = "aidlc/spaces/default/intents/260101-login/construction/application-design/components.md";
        assert_eq!(
            text.matches(&format!("{design}: 8 problems (2 errors, 6 warnings)"))
                .count(),
            1,
            "{text}"
        );
        assert_eq!(
            text.matches("  claim-sources: stage application-design")
                .count(),
            1
        );
        assert_eq!(text.matches("⚠ claim block has no source tag").count(), 4);
        assert!(text.contains(".claude/sensors/aidlc-api-contract.md: 1 problem (1 error)"));
        assert!(
            !text.contains("\n  in "),
            "the header names the file: {text}"
        );
    }

    /// With the project in `services/shop` of the working folder, every path shown starts there.
    #[test]
    fn paths_open_from_the_working_folder() {
        let settings = RenderSettings {
            path_prefix: "services/shop".into(),
            ..sample_sources()
        };
        let text = render_human(&sample_report(), &settings);
        assert!(
            text.contains(&format!(
                "services/shop/{RECORD}/inception/requirements-analysis/requirements.md: 3 problems"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "╭─[services/shop/{RECORD}/inception/requirements-analysis/requirements.md:12:3]"
            )),
            "{text}"
        );
        assert!(text.contains(&format!(
            "details in services/shop/{RECORD}/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md"
        )));
        let diagnostic = Diagnostic::error(Code::UnknownAgent, "unknown agent")
            .in_file("s.md")
            .at(4..5)
            .with_related("o.md", None, "declared here");
        let files = texts(&[("s.md", "---\nx\n---\n")]);
        let out = render_diagnostic(&diagnostic, &files, false, true, Utf8Path::new("../shop"));
        assert!(out.contains("╭─[../shop/s.md:2:1]"), "{out}");
        assert!(out.contains("note: ../shop/o.md: declared here"), "{out}");
    }

    /// Findings are grouped by file: both requirements findings come before the design file's.
    #[test]
    fn findings_are_grouped_by_file() {
        let text = render_human(&sample_report(), &sample_sources());
        let risks = text.find("## Risks").unwrap();
        let scope = text.find("## Scope\"").unwrap();
        let coverage = text.find("intent.md is never referenced").unwrap();
        let claims = text.find("claim block has no source tag").unwrap();
        assert!(
            risks < scope && scope < coverage && coverage < claims,
            "{text}"
        );
    }

    #[test]
    fn passed_fires_are_counted_not_listed() {
        let mut report = sample_report();
        report.fires.truncate(1);
        report.unfired_bindings.clear();
        let text = render_human(&report, &RenderSettings::default());
        assert!(!text.contains("claim-sources"), "{text}");
        assert!(text.contains("checked 1 sensor × 1 file: 1 passed, 0 failed"));
        assert!(!text.contains("the gate does not pass"));
    }

    #[test]
    fn human_no_record_says_so() {
        let text = render_human(&no_record_report(), &RenderSettings::default());
        insta::assert_snapshot!("human_no_record", text);
        assert!(text.contains("details not recorded (--no-record)"));
        assert!(text.contains(NOT_RECORDED_MESSAGE));
        assert!(text.contains("gate check of 2 intents (260101-login, 260102-billing)"));
    }

    #[test]
    fn an_empty_report_is_never_green() {
        let text = render_human(&GateReport::default(), &RenderSettings::default());
        assert!(text.contains(
            "checked 0 sensors × 0 files: 0 passed, 0 failed, 0 not evaluated, 0 skipped"
        ));
        assert!(text.contains("nothing was checked"));
    }

    #[test]
    fn colour_is_ansi_only_when_asked() {
        let colored = RenderSettings {
            color: true,
            ..sample_sources()
        };
        let text = render_human(&sample_report(), &colored);
        assert!(text.contains("\u{1b}[1;31m"), "{text}");
        let stripped = strip_ansi(&text);
        assert!(!stripped.contains('\u{1b}'));
        assert!(stripped.contains("missing section \"## Risks\""));
    }

    fn strip_ansi(text: &str) -> String {
        let mut out = String::new();
        let mut in_escape = false;
        for character in text.chars() {
            match (in_escape, character) {
                (false, '\u{1b}') => in_escape = true,
                (true, 'm') => in_escape = false,
                (true, _) => {}
                (false, _) => out.push(character),
            }
        }
        out
    }

    // --- The compile's diagnostics

    fn texts(files: &[(&str, &str)]) -> BTreeMap<Utf8PathBuf, String> {
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
        let out = render_diagnostic(
            &diagnostic,
            &texts(&[("a.md", &text)]),
            false,
            true,
            Utf8Path::new(""),
        );
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
        let files = texts(&[("a.md", &text)]);
        for (index, &start) in boundaries.iter().enumerate() {
            let end = boundaries[(index * 7) % boundaries.len()].max(start);
            let diagnostic = Diagnostic::warning(Code::YamlSyntax, "x")
                .in_file("a.md")
                .at(start..end)
                .with_related("a.md", Some(end..end), "related");
            let out = render_diagnostic(&diagnostic, &files, true, true, Utf8Path::new(""));
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
        let files = texts(&[
            ("stage.md", "---\nshape\n---\n"),
            ("sensor.md", "---\nid: x\nmatches: \"**\"\n---\n"),
        ]);
        let out = render_diagnostic(&diagnostic, &files, false, true, Utf8Path::new(""));
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
        // Every whitespace character is kept where it was, runs and line breaks included.
        let spaced = format!("a  \n\t{}\r\n  é", "é".repeat(250));
        assert_eq!(
            shorten_long_words(&spaced),
            format!("a  \n\t{}…{}\r\n  é", "é".repeat(120), "é".repeat(40))
        );
    }
}
