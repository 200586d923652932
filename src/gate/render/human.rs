//! The human format: diagnostics in the compile's look (`error[sensor]: message`, then
//! `--> file:line:col` and one `=` note), one per finding of a failed fire, per not-evaluated
//! fire and per blocking binding that never fired, then the summary block. Passed fires are
//! only counted. ANSI colour only when the settings ask for it.

use std::fmt::Write as _;

use crate::gate::render::messages::{
    NOT_RECORDED_MESSAGE, blocking_line, dead_binding_message, duration_ms,
    failed_without_findings_message, finding_location, finding_message, not_evaluated_detail,
    nothing_checked_message, scope_line, shard_message, summary_line,
};
use crate::gate::report::{Finding, GateFire, GateReport, Outcome, UnfiredBinding};
use crate::syntax::manifest::Severity;

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
struct Paint {
    color: bool,
}

impl Paint {
    const RESET: &'static str = "\u{1b}[0m";
    const BOLD_RED: &'static str = "\u{1b}[1;31m";
    const BOLD_YELLOW: &'static str = "\u{1b}[1;33m";
    const BOLD_BLUE: &'static str = "\u{1b}[1;34m";
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

    fn accent(self, text: &str) -> String {
        self.style(Self::BOLD_BLUE, text)
    }

    fn bold(self, text: &str) -> String {
        self.style(Self::BOLD, text)
    }

    /// `error` for a blocking binding, `warning` for an advisory one.
    fn level(self, severity: Severity) -> String {
        match severity {
            Severity::Blocking => self.error("error"),
            Severity::Advisory => self.warning("warning"),
        }
    }
}

/// Diagnostics in the compile's look (`error[code]: message` then `--> file:line:col`), one
/// per finding of a failed fire and one per not-evaluated fire, then the summary block.
/// Passed fires are only counted. `color` adds ANSI styles.
pub fn render_human(report: &GateReport, color: bool) -> String {
    let paint = Paint { color };
    let mut blocks: Vec<String> = report
        .fires
        .iter()
        .flat_map(|fire| human_fire_blocks(fire, report.recorded, paint))
        .collect();
    blocks.extend(
        report
            .unfired_bindings
            .iter()
            .map(|unfired| human_unfired_block(unfired, paint)),
    );
    blocks.push(human_summary(report, paint));
    blocks.join("\n\n")
}

fn human_unfired_block(unfired: &UnfiredBinding, paint: Paint) -> String {
    human_diagnostic(
        &paint.error("error"),
        &unfired.sensor_id,
        &format!("not evaluated: {}", unfired.reason()),
        &format!("stage {} of intent {}", unfired.stage, unfired.intent),
        &format!(
            "stage {}, blocking; its glob is set in {}",
            unfired.stage, unfired.manifest_path
        ),
        paint,
    )
}

fn human_fire_blocks(fire: &GateFire, recorded: bool, paint: Paint) -> Vec<String> {
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => {
            vec![human_failed_fire_block(fire, recorded, paint)]
        }
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| human_finding_block(fire, finding, recorded, paint))
            .collect(),
        Outcome::NotEvaluated => vec![human_not_evaluated_block(fire, paint)],
    }
}

/// `error[sensor]: message`, the location arrow, and one `=` note line.
fn human_diagnostic(
    level: &str,
    sensor_id: &str,
    message: &str,
    location: &str,
    note: &str,
    paint: Paint,
) -> String {
    format!(
        "{level}{}\n  {} {location}\n  {} {note}",
        paint.bold(&format!("[{sensor_id}]: {message}")),
        paint.accent("-->"),
        paint.accent("="),
    )
}

fn human_finding_block(fire: &GateFire, finding: &Finding, recorded: bool, paint: Paint) -> String {
    human_diagnostic(
        &paint.level(fire.severity),
        &fire.sensor_id,
        &finding_message(finding),
        &finding_location(finding),
        &human_failure_note(fire, recorded),
        paint,
    )
}

fn human_failed_fire_block(fire: &GateFire, recorded: bool, paint: Paint) -> String {
    human_diagnostic(
        &paint.level(fire.severity),
        &fire.sensor_id,
        &failed_without_findings_message(fire),
        fire.deliverable.as_str(),
        &human_failure_note(fire, recorded),
        paint,
    )
}

/// `stage X, blocking; details in P`, saying so when the details were not recorded and when
/// the sensor counted more findings than it listed.
fn human_failure_note(fire: &GateFire, recorded: bool) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    let listed = u64::try_from(fire.findings.len()).unwrap_or(u64::MAX);
    if !fire.findings.is_empty() && fire.findings_count() > listed {
        let _ = write!(note, ", {} findings in all", fire.findings_count());
    }
    match (&fire.detail_path, recorded) {
        (Some(detail_path), _) => {
            let _ = write!(note, "; details in {detail_path}");
        }
        (None, false) => note.push_str("; details not recorded (--no-record)"),
        (None, true) => {}
    }
    note
}

fn human_not_evaluated_block(fire: &GateFire, paint: Paint) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    if fire.severity == Severity::Blocking {
        note.push_str(": a blocking sensor that was not evaluated does not pass the gate");
    }
    human_diagnostic(
        &paint.warning("warning"),
        &fire.sensor_id,
        &format!("not evaluated: {}", not_evaluated_detail(fire)),
        fire.deliverable.as_str(),
        &note,
        paint,
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
    use crate::gate::render::test_reports::{no_record_report, sample_report};

    // --- human

    #[test]
    fn human_output_matches_the_snapshot() {
        insta::assert_snapshot!("human", render_human(&sample_report(), false));
    }

    #[test]
    fn human_output_shows_every_piece() {
        let text = render_human(&sample_report(), false);
        let expected = [
            "error[required-sections]: missing section \"## Risks\" (missing-heading)\n  --> aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md:12:3",
            "requirements.md:40\n",
            "warning[upstream-coverage]: the upstream artifact intent.md is never referenced (unreferenced-artifact)\n  --> aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md\n",
            "warning[claim-sources]: failed with 4 findings\n  --> aidlc/spaces/default/intents/260101-login/construction/application-design/components.md\n",
            "details in aidlc/spaces/default/intents/260101-login/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md",
            "stage requirements-analysis, blocking, 3 findings in all",
            "warning[linter]: not evaluated: tool-unavailable",
            "a blocking sensor that was not evaluated does not pass the gate",
            "warning[type-check]: not evaluated: sensor execution exceeded its budget (cap 300 s, observed 301 s)",
            "warning[traceability]: not evaluated: script-error: exit-2",
            "gate check of intent 260101-login: 3 stages, 2 deliverables found",
            "warning[required-sections]: not evaluated: artifact-changed\n  --> aidlc/spaces/default/intents/260101-login/construction/application-design/components.md",
            "error[api-contract]: not evaluated: blocking sensor never fired: its glob matches none of the stage's 2 deliverables; glob \"**/*.ts\"; declared outputs: components.md, services.md; a blocking sensor that never fired has not passed\n  --> stage application-design of intent 260101-login\n  = stage application-design, blocking; its glob is set in .claude/sensors/aidlc-api-contract.md",
            "checked 6 sensors × 2 files: 1 passed, 3 failed, 5 not evaluated (1 tool-unavailable, 1 sensor execution exceeded its budget, 1 script-error: exit-2, 1 artifact-changed, 1 never-fired), 7 skipped (2 no glob match, 1 no deliverable, 1 sensors off, 1 not selected by --fire-on, 1 another shard, 1 not a regular file) in 48.3 ms",
            "blocking sensors: 1 failed, 3 not evaluated; the gate does not pass",
            "dead binding: sensor required-sections on stage reverse-engineering can never fire: its glob **/{aidlc-docs,intents}/** matches none of the stage's declared outputs",
            "shard 2 of 4",
        ];
        for piece in expected {
            assert!(text.contains(piece), "missing {piece:?} in:\n{text}");
        }
        assert!(!text.contains("--no-record"), "{text}");
        assert!(!text.contains('\u{1b}'), "no colour unless asked");
        assert!(!text.ends_with('\n'));
    }

    #[test]
    fn passed_fires_are_counted_not_listed() {
        let mut report = sample_report();
        report.fires.truncate(1);
        report.unfired_bindings.clear();
        let text = render_human(&report, false);
        assert!(!text.contains("claim-sources"), "{text}");
        assert!(text.contains("checked 1 sensor × 1 file: 1 passed, 0 failed"));
        assert!(!text.contains("the gate does not pass"));
    }

    #[test]
    fn human_no_record_says_so() {
        let text = render_human(&no_record_report(), false);
        insta::assert_snapshot!("human_no_record", text);
        assert!(text.contains("details not recorded (--no-record)"));
        assert!(text.contains(NOT_RECORDED_MESSAGE));
        assert!(text.contains("gate check of 2 intents (260101-login, 260102-billing)"));
    }

    #[test]
    fn an_empty_report_is_never_green() {
        let text = render_human(&GateReport::default(), false);
        assert!(text.contains(
            "checked 0 sensors × 0 files: 0 passed, 0 failed, 0 not evaluated, 0 skipped"
        ));
        assert!(text.contains("nothing was checked"));
    }

    #[test]
    fn colour_is_ansi_only_when_asked() {
        let text = render_human(&sample_report(), true);
        assert!(text.contains("\u{1b}[1;31merror\u{1b}[0m"), "{text}");
        assert!(text.contains("\u{1b}[1;33mwarning\u{1b}[0m"), "{text}");
        let stripped = strip_ansi(&text);
        assert_eq!(stripped, render_human(&sample_report(), false));
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
