//! The report model: one [`Problem`] is what every renderer draws, whatever found it (a compile
//! diagnostic, a sensor's finding, a fire that was not evaluated, an output out of date): a rule,
//! a level, a message, where it is, the help, and the places related to it. Its [`Origin`] is
//! the kind of problem, which decides the words each format has for it; the gate report is
//! lowered into its ordered list of problems once (`gate_problems.rs`).
//!
//! Values of the model borrow from what they describe and are built where a report is rendered;
//! nothing here reads a file or prints. A problem's file is project-relative (as the compile and
//! the gate report name files); each format decides how it shows the path (relative to the
//! working folder for people, to the repository root for CI).

use std::borrow::Cow;
use std::ops::Range;

use camino::Utf8Path;
use serde::Serialize;

use crate::leaves::diagnostics::{Diagnostic, Related, Severity};
use crate::leaves::text_lines::line_column;
use crate::report::source::SourceLookup;
use crate::runtime::gate::report::{
    DeadBinding, Finding, GateFire, Severity as BindingSeverity, UnfiredBinding, UnseenWritesNotice,
};

/// How serious a problem is in every format's terms: an error fails the run (a compile error,
/// a blocking finding or non-evaluation), a warning does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
}

impl Level {
    /// `error` or `warning`: the word of the JSON lines, SARIF's `level` and the workflow
    /// command.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl From<Severity> for Level {
    fn from(severity: Severity) -> Self {
        match severity {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
        }
    }
}

/// A blocking binding's problems are errors, an advisory one's warnings.
impl From<BindingSeverity> for Level {
    fn from(severity: BindingSeverity) -> Self {
        match severity {
            BindingSeverity::Blocking => Level::Error,
            BindingSeverity::Advisory => Level::Warning,
        }
    }
}

/// A 1-based place in a file: a line and, where known, a column and an end. It serialises as
/// a SARIF `region`, an unknown value left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    #[serde(rename = "startLine")]
    pub line: u64,
    #[serde(rename = "startColumn", skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// Only with a line at or after `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// Only with an end line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u64>,
}

impl Region {
    /// The first line of a file, all of it: where SARIF places a result whose line is not known.
    pub const FIRST_LINE: Self = Self {
        line: 1,
        column: None,
        end_line: None,
        end_column: None,
    };

    /// A region from positions as a sensor reports them: a line of 0 is no line, a column of 0
    /// no column, and an end is kept only when it is a real position at or after the start.
    pub fn of_reported(
        line: Option<u64>,
        column: Option<u64>,
        end_line: Option<u64>,
        end_column: Option<u64>,
    ) -> Option<Self> {
        let line = line.filter(|line| *line >= 1)?;
        let end_line = end_line.filter(|end| *end >= line);
        Some(Self {
            line,
            column: column.filter(|column| *column >= 1),
            end_line,
            end_column: end_line.and(end_column.filter(|column| *column >= 1)),
        })
    }

    /// The region of the byte span `span` in `text`: start and end line and column.
    pub fn of_span(text: &str, span: &Range<usize>) -> Self {
        let (line, column) = line_column(text, span.start);
        let (end_line, end_column) = line_column(text, span.end);
        let whole = |value: usize| u64::try_from(value).unwrap_or(u64::MAX);
        Self {
            line: whole(line),
            column: Some(whole(column)),
            end_line: Some(whole(end_line)),
            end_column: Some(whole(end_column)),
        }
    }
}

/// Where a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location<'a> {
    /// Project-relative with `/` separators (absolute only for a file outside the project).
    pub file: Cow<'a, Utf8Path>,
    pub region: Option<Region>,
    /// The byte span in the file's text, when a renderer can draw a snippet of it.
    pub span: Option<Range<usize>>,
}

impl<'a> Location<'a> {
    /// The whole file.
    pub fn file(file: &'a Utf8Path) -> Self {
        Self {
            file: Cow::Borrowed(file),
            region: None,
            span: None,
        }
    }
}

/// What kind of problem a [`Problem`] is, with what it came from: the compile's two kinds, and
/// the gate report's seven. A format reads the payload only for what it alone shows (SARIF's
/// property bag, a `JUnit` case's time); the words every format shares are the problem's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// A compile diagnostic.
    Diagnostic,
    /// A compiled output out of date (`aidlc compile --check`).
    Drift,
    /// One finding of a failed fire, as the sensor reported it.
    Finding(&'a GateFire, &'a Finding),
    /// A failed fire that listed no finding.
    FailedWithoutFindings(&'a GateFire),
    /// A fire that was not evaluated; the reason is in the message.
    NotEvaluated(&'a GateFire),
    /// A blocking binding that fired on nothing, anchored to its manifest.
    NeverFired(&'a UnfiredBinding),
    /// A run that checked nothing (D4: it is never green).
    NothingChecked,
    /// A binding whose glob matches none of its stage's declared outputs.
    DeadBinding(&'a DeadBinding),
    /// Deliverables the write hook never saw: a notice, like a dead binding.
    UnseenWrites(&'a UnseenWritesNotice),
}

impl<'a> Origin<'a> {
    /// The fire a gate report's problem came from, for the kinds that have one.
    pub fn fire(self) -> Option<&'a GateFire> {
        match self {
            Origin::Finding(fire, _)
            | Origin::FailedWithoutFindings(fire)
            | Origin::NotEvaluated(fire) => Some(fire),
            Origin::Diagnostic
            | Origin::Drift
            | Origin::NeverFired(_)
            | Origin::NothingChecked
            | Origin::DeadBinding(_)
            | Origin::UnseenWrites(_) => None,
        }
    }
}

/// One problem, as every format draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem<'a> {
    /// The kind of problem and what it came from.
    pub origin: Origin<'a>,
    /// What found it: a diagnostic code, a sensor id, `stale-output`.
    pub rule: &'a str,
    /// The finer rule of a sensor's finding (`missing-heading`): the label under the snippet
    /// for people, `message (kind)` in the one-line formats.
    pub kind: Option<&'a str>,
    pub level: Level,
    /// One sentence that stands alone, without the location.
    pub message: Cow<'a, str>,
    pub location: Option<Location<'a>>,
    /// The text under the primary span (a compile diagnostic's label).
    pub label: Option<&'a str>,
    pub help: Option<Cow<'a, str>>,
    /// The places that explain the problem ("first declared here"): a compile diagnostic's.
    pub related: &'a [Related],
    /// Lines shown after the problem for people (`= stage …, blocking; details in …`).
    pub notes: Vec<String>,
    /// The title of an annotation when it is not the rule (`stage-graph.json is out of date`).
    pub title: Option<Cow<'a, str>>,
    /// The plugin the problem's file belongs to (`None`: the core's, or not known): a JSON
    /// field, SARIF `properties.plugin`, a `[plugin <name>]` suffix for people.
    pub plugin: Option<String>,
    /// The stage of a gate report's problem (`None` for a run-wide one and the compile's).
    pub stage: Option<&'a str>,
    /// The gate report's identity of the problem across runs (SARIF's partial fingerprint,
    /// Code Quality's `fingerprint`): what it is and where, never its line; `None` for the
    /// compile's problems, whose SARIF fingerprint is made by the log.
    pub fingerprint: Option<String>,
}

impl<'a> Problem<'a> {
    /// A problem with nothing but its rule, level and message.
    pub fn new(rule: &'a str, level: Level, message: impl Into<Cow<'a, str>>) -> Self {
        Self {
            origin: Origin::Diagnostic,
            rule,
            kind: None,
            level,
            message: message.into(),
            location: None,
            label: None,
            help: None,
            related: &[],
            notes: Vec::new(),
            title: None,
            plugin: None,
            stage: None,
            fingerprint: None,
        }
    }

    /// A compile diagnostic, with its byte span and no region yet (a snippet needs only the
    /// span; see [`Self::with_region`]).
    pub fn of_diagnostic(diagnostic: &'a Diagnostic) -> Self {
        let location = diagnostic.file.as_deref().map(|file| Location {
            file: Cow::Borrowed(file),
            region: None,
            span: diagnostic.span.clone(),
        });
        Self {
            location,
            label: diagnostic.label.as_deref(),
            help: diagnostic.help.as_deref().map(Cow::Borrowed),
            related: &diagnostic.related,
            ..Self::new(
                diagnostic.code.as_str(),
                diagnostic.severity.into(),
                diagnostic.message.as_str(),
            )
        }
    }

    /// A sensor's finding as the one-line formats show it: the sensor as the rule, the
    /// finding's rule as its kind, its level from the binding's severity, its region and help.
    pub fn of_finding(fire: &'a GateFire, finding: &'a Finding) -> Self {
        Self {
            origin: Origin::Finding(fire, finding),
            stage: Some(&fire.stage),
            kind: Some(&finding.rule),
            location: Some(Location {
                file: Cow::Borrowed(&finding.file),
                region: Region::of_reported(
                    finding.line,
                    finding.column,
                    finding.end_line,
                    finding.end_column,
                ),
                span: None,
            }),
            help: finding.help.as_deref().map(Cow::Borrowed),
            ..Self::new(
                &fire.sensor_id,
                fire.severity.into(),
                finding.message.as_str(),
            )
        }
    }

    /// The problem with the region of its span, computed from the file's text when `sources`
    /// has it (what the one-line formats show as line and column).
    #[must_use]
    pub fn with_region(mut self, sources: &dyn SourceLookup) -> Self {
        if let Some(location) = &mut self.location
            && location.region.is_none()
            && let Some((span, text)) = location.span.as_ref().zip(sources.text(&location.file))
        {
            location.region = Some(Region::of_span(text, span));
        }
        self
    }

    /// The problem with the plugin of its file, when `sources` knows it.
    #[must_use]
    pub fn with_plugin(mut self, sources: &dyn SourceLookup) -> Self {
        if let Some(file) = self.file() {
            self.plugin = sources.plugin_of(file).map(str::to_owned);
        }
        self
    }

    /// The problem's file, when it has one.
    pub fn file(&self) -> Option<&Utf8Path> {
        self.location.as_ref().map(|location| &*location.file)
    }

    /// The region, when it is known.
    pub fn region(&self) -> Option<Region> {
        self.location.as_ref().and_then(|location| location.region)
    }

    /// The text of the one-line formats (an annotation, a SARIF result): the message, the kind
    /// in parentheses, then `help: …` on its own line.
    pub fn one_line_text(&self) -> String {
        let mut text = self.message_and_kind();
        if let Some(help) = &self.help {
            text.push_str("\nhelp: ");
            text.push_str(help);
        }
        text
    }

    /// The message, then the help on the next line (a non-evaluation's stderr and detail file).
    pub fn message_then_help(&self) -> String {
        match &self.help {
            Some(help) => format!("{}\n{help}", self.message),
            None => self.message.clone().into_owned(),
        }
    }

    /// The message, then the kind in parentheses when there is one (`missing section (missing-heading)`).
    pub fn message_and_kind(&self) -> String {
        let mut text = self.message.clone().into_owned();
        if let Some(kind) = self.kind {
            text.push_str(" (");
            text.push_str(kind);
            text.push(')');
        }
        text
    }

    /// The annotation's title: [`Self::title`], else the rule.
    pub fn title(&self) -> &str {
        self.title.as_deref().unwrap_or(self.rule)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use camino::Utf8PathBuf;

    use super::*;
    use crate::leaves::diagnostics::Code;

    #[test]
    fn a_diagnostic_becomes_a_problem_with_its_region() {
        let diagnostic = Diagnostic::error(Code::UnknownAgent, "unknown agent \"x\"")
            .in_file("s.md")
            .at(8..9)
            .with_help("add it");
        let sources: BTreeMap<Utf8PathBuf, String> =
            BTreeMap::from([(Utf8PathBuf::from("s.md"), "---\nby: x\n---\n".to_owned())]);
        let problem = Problem::of_diagnostic(&diagnostic).with_region(&sources);
        assert_eq!(problem.rule, "unknown-agent");
        assert_eq!(problem.level, Level::Error);
        assert_eq!(
            problem.region(),
            Some(Region {
                line: 2,
                column: Some(5),
                end_line: Some(2),
                end_column: Some(6)
            })
        );
        assert_eq!(problem.one_line_text(), "unknown agent \"x\"\nhelp: add it");
        let without_text = Problem::of_diagnostic(&diagnostic)
            .with_region(&BTreeMap::<Utf8PathBuf, String>::new());
        assert_eq!(without_text.region(), None);
        assert_eq!(without_text.file(), Some(Utf8Path::new("s.md")));
    }

    #[test]
    fn reported_positions_of_zero_are_no_positions() {
        assert_eq!(Region::of_reported(Some(0), Some(4), None, None), None);
        let region = Region::of_reported(Some(3), Some(0), Some(2), Some(5)).unwrap();
        assert_eq!(
            region,
            Region {
                line: 3,
                column: None,
                end_line: None,
                end_column: None
            }
        );
        let region = Region::of_reported(Some(3), Some(1), Some(4), Some(0)).unwrap();
        assert_eq!((region.end_line, region.end_column), (Some(4), None));
    }
}
