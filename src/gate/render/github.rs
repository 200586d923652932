//! The github format's annotations: GitHub Actions workflow commands on stdout, one per line,
//! written through the one escaper in `github_actions`. Its Markdown step summary is
//! `step_summary.rs`.

use crate::gate::render::messages::{
    dead_binding_message, failed_without_findings_message, finding_message, known_position,
    not_evaluated_message, nothing_checked_message, summary_line, unfired_message,
    with_detail_path,
};
use crate::gate::report::{Finding, GateFire, GateReport, Outcome};
use crate::github_actions::workflow_command;
use crate::syntax::manifest::Severity;

/// Workflow commands, one per line: `::error` for each finding of a blocking failure and for
/// each blocking binding that never fired (anchored to its manifest), `::warning` for an
/// advisory finding, for every not-evaluated fire and when nothing was checked, `::notice` for
/// each dead binding, and a closing `::notice` with the summary line.
pub fn render_github_annotations(report: &GateReport) -> String {
    let mut lines: Vec<String> = report.fires.iter().flat_map(github_fire_lines).collect();
    for unfired in &report.unfired_bindings {
        lines.push(workflow_command(
            "error",
            &[
                ("file", unfired.manifest_path.as_str()),
                ("title", &format!("{} never fired", unfired.sensor_id)),
            ],
            &unfired_message(unfired),
        ));
    }
    if let Some(nothing) = report.nothing_checked() {
        lines.push(workflow_command(
            "warning",
            &[("title", "nothing checked")],
            &nothing_checked_message(&nothing),
        ));
    }
    for dead in &report.dead_bindings {
        lines.push(workflow_command(
            "notice",
            &[("title", "dead sensor binding")],
            &dead_binding_message(dead),
        ));
    }
    lines.push(workflow_command(
        "notice",
        &[("title", "aidlc gate check")],
        &summary_line(report),
    ));
    lines.join("\n")
}

fn github_fire_lines(fire: &GateFire) -> Vec<String> {
    let command = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![workflow_command(
            command,
            &[
                ("file", fire.deliverable.as_str()),
                ("title", &fire.sensor_id),
            ],
            &with_detail_path(failed_without_findings_message(fire), fire),
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| github_finding_line(command, fire, finding))
            .collect(),
        Outcome::NotEvaluated => vec![workflow_command(
            "warning",
            &[
                ("file", fire.deliverable.as_str()),
                ("title", &format!("{} not evaluated", fire.sensor_id)),
            ],
            &not_evaluated_message(fire),
        )],
    }
}

fn github_finding_line(command: &str, fire: &GateFire, finding: &Finding) -> String {
    let (line, column) = known_position(finding);
    let line = line.map(|line| line.to_string());
    let column = column.map(|column| column.to_string());
    let mut properties = vec![("file", finding.file.as_str())];
    if let Some(line) = &line {
        properties.push(("line", line));
    }
    if let Some(column) = &column {
        properties.push(("col", column));
    }
    properties.push(("title", &fire.sensor_id));
    workflow_command(command, &properties, &finding_message(finding))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::render::test_reports::{no_record_report, sample_report};

    // --- GitHub

    #[test]
    fn github_annotations_match_the_snapshot() {
        insta::assert_snapshot!("github", render_github_annotations(&sample_report()));
    }

    #[test]
    fn github_annotations_use_the_level_of_each_case() {
        let text = render_github_annotations(&sample_report());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(
            "::error file=aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md,line=12,col=3,title=required-sections::missing section"
        ));
        assert!(lines[1].contains(",line=40,title=required-sections::"));
        assert!(lines[2].starts_with("::warning file="));
        assert!(!lines[2].contains("line="));
        assert!(lines[3].contains("title=claim-sources::failed with 4 findings; details in "));
        assert!(lines[4].starts_with("::warning file="));
        assert!(lines[4].contains("title=linter not evaluated::linter was not evaluated on stage application-design: tool-unavailable; a blocking sensor"));
        assert!(
            lines[5].contains("sensor execution exceeded its budget (cap 300 s, observed 301 s)")
        );
        assert!(lines[6].contains("script-error: exit-2"));
        assert!(lines[7].starts_with("::warning file="));
        assert!(lines[7].contains("title=required-sections not evaluated::required-sections was not evaluated on stage application-design: artifact-changed; a blocking sensor"));
        assert!(lines[8].starts_with("::error file=.claude/sensors/aidlc-api-contract.md,title=api-contract never fired::api-contract was not evaluated on stage application-design: blocking sensor never fired: its glob matches none"), "{}", lines[8]);
        assert!(lines[9].starts_with("::notice title=dead sensor binding::sensor required-sections on stage reverse-engineering can never fire"));
        assert!(
            lines[10].starts_with("::notice title=aidlc gate check::checked 6 sensors × 2 files")
        );
        assert_eq!(lines.len(), 11);
    }

    #[test]
    fn github_escapes_data_and_properties() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![Finding {
            file: "docs/a:b,c%.md".into(),
            line: Some(1),
            column: Some(2),
            rule: None,
            message: "100% wrong\r\nsecond: line, here".to_owned(),
        }];
        report.fires[0].sensor_id = "odd:id,x".to_owned();
        let text = render_github_annotations(&report);
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "::warning file=docs/a%3Ab%2Cc%25.md,line=1,col=2,title=odd%3Aid%2Cx::100%25 wrong%0D%0Asecond: line, here"
        );
    }
}
