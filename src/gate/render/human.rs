//! The human format: each finding drawn as the compile draws its diagnostics (miette, through
//! `diagnostics::render`): the sensor as the code, the message, the source line(s) with the
//! rule as the label, the help, and a note with the stage, the severity and the detail file.
//! A finding without a line points at its file. Not-evaluated fires and blocking bindings that
//! never fired are drawn the same way. Everything is grouped by file (in the order files first
//! appear in the report), then comes the summary block. Passed fires are only counted. ANSI
//! colour only when the settings ask for it.

use std::fmt::Write as _;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

use crate::diagnostics::Severity as Level;
use crate::diagnostics::render::{HumanItem, line_span, render_human_item};
use crate::gate::render::RenderSettings;
use crate::gate::render::messages::{
    NOT_RECORDED_MESSAGE, blocking_line, dead_binding_message, duration_ms,
    failed_without_findings_message, not_evaluated_detail, not_evaluated_help,
    nothing_checked_message, scope_line, shard_message, summary_line,
};
use crate::gate::report::{Finding, GateFire, GateReport, Outcome, UnfiredBinding};
use crate::protocol::selection::Severity;

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

/// Every finding, not-evaluated fire and never-fired blocking binding, grouped by file, then
/// the summary block. `settings.sources` gives the snippets; `settings.color` adds ANSI styles.
pub fn render_human(report: &GateReport, settings: &RenderSettings) -> String {
    let paint = Paint {
        color: settings.color,
    };
    let mut by_file: Vec<(Utf8PathBuf, Vec<String>)> = Vec::new();
    let mut add = |file: &Utf8Path, block: String| {
        // Files are few next to blocks: a linear search keeps first-appearance order.
        match by_file.iter_mut().find(|(seen, _)| seen == file) {
            Some((_, blocks)) => blocks.push(block),
            None => by_file.push((file.to_owned(), vec![block])),
        }
    };
    for fire in &report.fires {
        match fire.outcome() {
            Outcome::Passed => {}
            Outcome::Failed if fire.findings.is_empty() => {
                add(&fire.deliverable, failed_fire_block(fire, report, settings));
            }
            Outcome::Failed => {
                for finding in &fire.findings {
                    add(
                        &finding.file,
                        finding_block(fire, finding, report, settings),
                    );
                }
            }
            Outcome::NotEvaluated => {
                add(&fire.deliverable, not_evaluated_block(fire, settings));
            }
        }
    }
    for unfired in &report.unfired_bindings {
        add(
            Utf8Path::new(&unfired.manifest_path),
            unfired_block(unfired, settings),
        );
    }
    let mut blocks: Vec<String> = by_file
        .into_iter()
        .flat_map(|(_, blocks)| blocks)
        .map(|block| block.trim_end().to_owned())
        .collect();
    blocks.push(human_summary(report, paint));
    blocks.join("\n\n")
}

fn level(severity: Severity) -> Level {
    match severity {
        Severity::Blocking => Level::Error,
        Severity::Advisory => Level::Warning,
    }
}

/// `stage X, blocking; details in P`, saying so when the details were not recorded.
fn fire_note(fire: &GateFire, report: &GateReport) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    match (&fire.detail_path, report.recorded) {
        (Some(detail_path), _) => {
            let _ = write!(note, "; details in {detail_path}");
        }
        (None, false) => note.push_str("; details not recorded (--no-record)"),
        (None, true) => {}
    }
    note
}

fn finding_block(
    fire: &GateFire,
    finding: &Finding,
    report: &GateReport,
    settings: &RenderSettings,
) -> String {
    let (line, column) = finding.position();
    let snippet = line.and_then(|line| {
        let text = settings.sources.get(&finding.file)?;
        let end = finding
            .end_line
            .map(|end_line| (end_line, finding.end_column));
        let span = line_span(text, line, column, end)?;
        Some((Arc::clone(text), span))
    });
    let location = match (line, column) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", finding.file),
        (Some(line), None) => format!("{}:{line}", finding.file),
        _ => finding.file.to_string(),
    };
    let mut notes = Vec::new();
    if snippet.is_none() && line.is_some() {
        notes.push(format!("at {location}"));
    }
    notes.push(fire_note(fire, report));
    render_human_item(
        &HumanItem {
            severity: level(fire.severity),
            code: &fire.sensor_id,
            message: &finding.message,
            file: Some(&finding.file),
            snippet,
            label: Some(&finding.rule),
            help: finding.help.as_deref(),
            notes: &notes,
        },
        settings.color,
    )
}

fn failed_fire_block(fire: &GateFire, report: &GateReport, settings: &RenderSettings) -> String {
    render_human_item(
        &HumanItem {
            severity: level(fire.severity),
            code: &fire.sensor_id,
            message: &failed_without_findings_message(fire),
            file: Some(&fire.deliverable),
            snippet: None,
            label: None,
            help: None,
            notes: &[fire_note(fire, report)],
        },
        settings.color,
    )
}

fn not_evaluated_block(fire: &GateFire, settings: &RenderSettings) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    if fire.severity == Severity::Blocking {
        note.push_str(": a blocking sensor that was not evaluated does not pass the gate");
    }
    let help = not_evaluated_help(fire);
    render_human_item(
        &HumanItem {
            severity: level(fire.severity),
            code: &fire.sensor_id,
            message: &format!("not evaluated: {}", not_evaluated_detail(fire)),
            file: Some(&fire.deliverable),
            snippet: None,
            label: None,
            help: help.as_deref(),
            notes: &[note],
        },
        settings.color,
    )
}

fn unfired_block(unfired: &UnfiredBinding, settings: &RenderSettings) -> String {
    render_human_item(
        &HumanItem {
            severity: Level::Error,
            code: &unfired.sensor_id,
            message: &format!("not evaluated: {}", unfired.reason()),
            file: Some(Utf8Path::new(&unfired.manifest_path)),
            snippet: None,
            label: None,
            help: Some("make the glob match a declared output of the stage, or write that output"),
            notes: &[format!(
                "stage {} of intent {}, blocking; its glob is set in this manifest",
                unfired.stage, unfired.intent
            )],
        },
        settings.color,
    )
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
    if let Some((index, count)) = report.shard {
        lines.push(shard_message(index, count));
    }
    if !report.recorded {
        lines.push(NOT_RECORDED_MESSAGE.to_owned());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::render::test_reports::{RECORD, no_record_report, sample_report};

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
            "required-sections\n\n  × missing section \"## Risks\"",
            "12 │ ## Scope and Risks",
            "missing-heading",
            "help: add a `## Risks` section",
            "40 │ ## Scope",
            "= stage requirements-analysis, blocking; details in aidlc/spaces/default/intents/260101-login/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md",
            "⚠ the upstream artifact intent.md is never referenced\n  help: cite `intent` in one of the stage's deliverables\n  in aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md",
            "claim block has no source tag",
            "= at aidlc/spaces/default/intents/260101-login/construction/application-design/components.md:3",
            "not evaluated: tool-unavailable",
            "a blocking sensor that was not evaluated does not pass the gate",
            "not evaluated: sensor execution exceeded its budget (cap 300 s, observed 301 s)",
            "not evaluated: script-error: exit-2",
            "help: the worker's stderr ended with:\n        loading rules\n        error: cannot parse rules.md",
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
}
