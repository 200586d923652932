//! The github format's annotations: GitHub Actions workflow commands on stdout, one per line,
//! written through the one escaper in `github_actions`. Its Markdown step summary is
//! `step_summary.rs`.
//!
//! Invariants:
//! - paths are repository-relative (the report's `project_path` prefix), so that GitHub pins
//!   each annotation to its file in a monorepo;
//! - the level follows the severity: a blocking failure, a blocking non-evaluation and a
//!   blocking binding that never fired are `::error` (the job fails for them), advisory ones
//!   `::warning`;
//! - GitHub shows at most [`MAX_ANNOTATIONS_PER_LEVEL`] annotations of each level per step:
//!   past that, the rest of a level is held back and a notice says how many, and where the whole
//!   report is; the summary notice is always there.

use camino::Utf8Path;

use crate::gate::render::messages::{
    dead_binding_message, failed_without_findings_message, finding_message_with_help,
    not_evaluated_help, not_evaluated_message, nothing_checked_message, summary_line,
    unfired_message, with_detail_path,
};
use crate::gate::report::{Finding, GateFire, GateReport, Outcome};
use crate::github_actions::workflow_command;
use crate::protocol::selection::Severity;

/// How many annotations of one level GitHub shows for a step.
pub const MAX_ANNOTATIONS_PER_LEVEL: usize = 10;

/// One annotation before the cap: its level and its workflow command.
struct Annotation {
    level: &'static str,
    command: String,
}

/// Workflow commands, one per line, at most [`MAX_ANNOTATIONS_PER_LEVEL`] per level (see the
/// module documentation). `full_report` says where the whole report is, for the notice about
/// annotations held back.
pub fn render_github_annotations(report: &GateReport, full_report: Option<&str>) -> String {
    let mut annotations: Vec<Annotation> = report
        .fires
        .iter()
        .flat_map(|fire| fire_annotations(report, fire))
        .collect();
    for unfired in &report.unfired_bindings {
        annotations.push(annotation(
            "error",
            &[
                (
                    "file",
                    report
                        .repository_path(Utf8Path::new(&unfired.manifest_path))
                        .as_str(),
                ),
                ("title", &format!("{} never fired", unfired.sensor_id)),
            ],
            &unfired_message(unfired),
        ));
    }
    if let Some(nothing) = report.nothing_checked() {
        annotations.push(annotation(
            "warning",
            &[("title", "nothing checked")],
            &nothing_checked_message(&nothing),
        ));
    }
    let mut lines = Vec::new();
    let mut notices = vec![workflow_command(
        "notice",
        &[("title", "aidlc gate check")],
        &summary_line(report),
    )];
    for level in ["error", "warning"] {
        let of_level = annotations.iter().filter(|a| a.level == level).count();
        if of_level > MAX_ANNOTATIONS_PER_LEVEL {
            notices.push(held_back_notice(
                of_level - MAX_ANNOTATIONS_PER_LEVEL,
                level,
                full_report,
            ));
        }
    }
    let mut shown = [0_usize; 2];
    for annotation in annotations {
        let slot = usize::from(annotation.level == "warning");
        if shown[slot] < MAX_ANNOTATIONS_PER_LEVEL {
            shown[slot] += 1;
            lines.push(annotation.command);
        }
    }
    notices.extend(report.dead_bindings.iter().map(|dead| {
        workflow_command(
            "notice",
            &[("title", "dead sensor binding")],
            &dead_binding_message(dead),
        )
    }));
    if notices.len() > MAX_ANNOTATIONS_PER_LEVEL {
        let held_back = notices.len() - (MAX_ANNOTATIONS_PER_LEVEL - 1);
        notices.truncate(MAX_ANNOTATIONS_PER_LEVEL - 1);
        notices.push(held_back_notice(held_back, "notice", full_report));
    }
    lines.extend(notices);
    lines.join("\n")
}

/// `N more <level> annotations were not shown (GitHub shows 10 per step); <where>`.
fn held_back_notice(count: usize, level: &str, full_report: Option<&str>) -> String {
    let plural = if count == 1 { "" } else { "s" };
    let whole = full_report.unwrap_or("run `aidlc gate check` to see them all");
    workflow_command(
        "notice",
        &[("title", "more annotations")],
        &format!(
            "{count} more {level} annotation{plural} not shown (GitHub shows {MAX_ANNOTATIONS_PER_LEVEL} per level and step); the whole report: {whole}"
        ),
    )
}

fn annotation(level: &'static str, properties: &[(&str, &str)], message: &str) -> Annotation {
    Annotation {
        level,
        command: workflow_command(level, properties, message),
    }
}

fn fire_annotations(report: &GateReport, fire: &GateFire) -> Vec<Annotation> {
    let level = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    let deliverable = report.repository_path(&fire.deliverable);
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![annotation(
            level,
            &[("file", deliverable.as_str()), ("title", &fire.sensor_id)],
            &with_detail_path(failed_without_findings_message(fire), fire),
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| finding_annotation(report, level, fire, finding))
            .collect(),
        Outcome::NotEvaluated => {
            let mut message = not_evaluated_message(fire);
            if let Some(help) = not_evaluated_help(fire) {
                message.push_str("\nhelp: ");
                message.push_str(&help);
            }
            vec![annotation(
                level,
                &[
                    ("file", deliverable.as_str()),
                    ("title", &format!("{} not evaluated", fire.sensor_id)),
                ],
                &message,
            )]
        }
    }
}

fn finding_annotation(
    report: &GateReport,
    level: &'static str,
    fire: &GateFire,
    finding: &Finding,
) -> Annotation {
    let (line, column) = finding.position();
    let file = report.repository_path(&finding.file);
    let line = line.map(|line| line.to_string());
    let column = column.map(|column| column.to_string());
    let end_line = finding
        .end_line
        .filter(|_| line.is_some())
        .map(|end| end.to_string());
    let mut properties = vec![("file", file.as_str())];
    if let Some(line) = &line {
        properties.push(("line", line));
    }
    if let Some(end_line) = &end_line {
        properties.push(("endLine", end_line));
    }
    if let Some(column) = &column {
        properties.push(("col", column));
    }
    properties.push(("title", &fire.sensor_id));
    annotation(level, &properties, &finding_message_with_help(finding))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::render::test_reports::{no_record_report, sample_report};

    // --- GitHub

    #[test]
    fn github_annotations_match_the_snapshot() {
        insta::assert_snapshot!("github", render_github_annotations(&sample_report(), None));
    }

    #[test]
    fn github_annotations_use_the_level_of_each_case() {
        let text = render_github_annotations(&sample_report(), None);
        let lines: Vec<&str> = text.lines().collect();
        let prefix = "services/shop/aidlc/spaces/default/intents/260101-login";
        assert!(lines[0].starts_with(&format!(
            "::error file={prefix}/inception/requirements-analysis/requirements.md,line=12,col=3,title=required-sections::missing section \"## Risks\" (missing-heading)%0Ahelp: add a `## Risks` section"
        )), "{}", lines[0]);
        assert!(lines[1].contains(",line=40,title=required-sections::"));
        assert!(lines[2].starts_with("::warning file="));
        assert!(!lines[2].contains("line="));
        for (index, line) in lines[3..7].iter().enumerate() {
            assert!(
                line.contains(&format!(
                    ",line={},title=claim-sources::claim block has no source tag (untagged-claim)",
                    index * 2 + 3
                )),
                "{line}"
            );
        }
        assert!(
            lines[7].starts_with("::error file="),
            "a blocking non-evaluation is an error"
        );
        assert!(lines[7].contains("title=linter not evaluated::linter was not evaluated on stage application-design: tool-unavailable; a blocking sensor"));
        assert!(
            lines[8].contains("sensor execution exceeded its budget (cap 300 s, observed 301 s)")
        );
        assert!(lines[9].starts_with("::warning file="));
        assert!(lines[9].contains("script-error: exit-2%0Ahelp: the worker's stderr ended with:%0Aloading rules%0Aerror: cannot parse rules.md"), "{}", lines[9]);
        assert!(lines[10].starts_with("::error file="));
        assert!(lines[10].contains("title=required-sections not evaluated::required-sections was not evaluated on stage application-design: artifact-changed; a blocking sensor"));
        assert!(lines[11].starts_with("::error file=services/shop/.claude/sensors/aidlc-api-contract.md,title=api-contract never fired::api-contract was not evaluated on stage application-design: blocking sensor never fired: its glob matches none"), "{}", lines[11]);
        assert!(
            lines[12].starts_with("::notice title=aidlc gate check::checked 6 sensors × 2 files")
        );
        assert!(lines[13].starts_with("::notice title=dead sensor binding::sensor required-sections on stage reverse-engineering can never fire"));
        assert_eq!(lines.len(), 14);
    }

    /// GitHub shows ten annotations per level: the rest is held back with a notice that says
    /// how many and where the whole report is.
    #[test]
    fn at_most_ten_annotations_per_level_and_a_notice_for_the_rest() {
        let mut report = sample_report();
        let template = report.fires[3].clone();
        report.fires[3].findings = (1..=25)
            .map(|line| Finding {
                line: Some(line),
                ..template.findings[0].clone()
            })
            .collect();
        let text = render_github_annotations(&report, Some("the step summary"));
        let count = |prefix: &str| text.lines().filter(|line| line.starts_with(prefix)).count();
        assert_eq!(count("::error "), 5);
        assert_eq!(count("::warning "), MAX_ANNOTATIONS_PER_LEVEL);
        assert!(count("::notice ") <= MAX_ANNOTATIONS_PER_LEVEL);
        let held_back = 1 + 25 + 2 - MAX_ANNOTATIONS_PER_LEVEL;
        assert!(
            text.contains(&format!("::notice title=more annotations::{held_back} more warning annotations not shown (GitHub shows 10 per level and step); the whole report: the step summary")),
            "{text}"
        );
    }

    #[test]
    fn github_escapes_data_and_properties() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![Finding {
            line: Some(1),
            column: Some(2),
            ..Finding::at_file("docs/a:b,c%.md", "r", "100% wrong\r\nsecond: line, here")
        }];
        report.fires[0].sensor_id = "odd:id,x".to_owned();
        let text = render_github_annotations(&report, None);
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "::warning file=docs/a%3Ab%2Cc%25.md,line=1,col=2,title=odd%3Aid%2Cx::100%25 wrong%0D%0Asecond: line, here (r)"
        );
    }
}
