//! The github format: GitHub Actions workflow commands on stdout, one per line, written through
//! the one escaper in `github_actions`. [`annotation`] writes one problem, whoever found it: the
//! compile's diagnostics and drift (`aidlc compile --format github`) and the gate report's
//! findings and non-evaluations. The gate report's Markdown step summary is `step_summary.rs`.
//!
//! Invariants:
//! - paths are repository-relative (the project folder's prefix), so that GitHub pins each
//!   annotation to its file in a monorepo;
//! - the level follows the problem: a compile error, a blocking failure, a blocking
//!   non-evaluation and a blocking binding that never fired are `::error` (the job fails for
//!   them), warnings and advisory ones `::warning`;
//! - in the gate report, GitHub shows at most [`MAX_ANNOTATIONS_PER_LEVEL`] annotations of each
//!   level per step: past that, the rest of a level is held back and a notice says how many, and
//!   where the whole report is; the summary notice is always there.

use std::borrow::Cow;

use camino::Utf8Path;

use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::english::plural;
use crate::leaves::github_actions::workflow_command;
use crate::report::gate_problems::gate_problems;
use crate::report::messages::{summary_line, with_detail_path};
use crate::report::problem::{Origin, Problem};
use crate::report::source::SourceLookup;
use crate::runtime::gate::report::GateReport;

/// One problem as a workflow command: `::error file=…,line=…,col=…,endLine=…,endColumn=…,
/// title=…::message`, the file made repository-relative by `repository_prefix` (the project
/// folder relative to the repository root, empty when they are the same), the position where
/// the region knows it, the title (the rule unless the problem has its own), and the one-line
/// text (message, kind, help).
pub fn annotation(problem: &Problem<'_>, repository_prefix: &Utf8Path) -> String {
    let mut properties: Vec<(&str, String)> = Vec::new();
    if let Some(file) = problem.file() {
        properties.push(("file", repository_prefix.join(file).into_string()));
    }
    if let Some(region) = problem.region() {
        properties.push(("line", region.line.to_string()));
        if let Some(column) = region.column {
            properties.push(("col", column.to_string()));
        }
        if let Some(end_line) = region.end_line {
            properties.push(("endLine", end_line.to_string()));
        }
        if let Some(end_column) = region.end_column {
            properties.push(("endColumn", end_column.to_string()));
        }
    }
    properties.push(("title", problem.title().to_owned()));
    let properties: Vec<(&str, &str)> = properties
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    workflow_command(
        problem.level.as_str(),
        &properties,
        &problem.one_line_text(),
    )
}

/// A compile diagnostic as a workflow command (see [`annotation`]).
pub fn diagnostic_annotation(
    diagnostic: &Diagnostic,
    sources: &dyn SourceLookup,
    repository_prefix: &Utf8Path,
) -> String {
    annotation(
        &Problem::of_diagnostic(diagnostic).with_region(sources),
        repository_prefix,
    )
}

// --- The gate report -------------------------------------------------------------------------

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
    let problems = gate_problems(report);
    let annotations: Vec<Annotation> = problems
        .iter()
        .filter_map(|problem| gate_annotation(report, problem))
        .collect();
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
    notices.extend(
        problems
            .iter()
            .filter(|problem| {
                matches!(
                    problem.origin,
                    Origin::DeadBinding(_) | Origin::UnseenWrites(_)
                )
            })
            .map(|notice| {
                workflow_command("notice", &[("title", notice.title())], &notice.message)
            }),
    );
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
    let plural = plural(count);
    let whole = full_report.unwrap_or("run `aidlc gate check` to see them all");
    workflow_command(
        "notice",
        &[("title", "more annotations")],
        &format!(
            "{count} more {level} annotation{plural} not shown (GitHub shows {MAX_ANNOTATIONS_PER_LEVEL} per level and step); the whole report: {whole}"
        ),
    )
}

/// One problem of the gate report as an annotation before the cap: a fire's problem says the
/// plugin of its stage in its title (D50; a core stage's are unchanged), the run that checked
/// nothing is a warning without help, and a dead binding is no annotation (a notice).
fn gate_annotation(report: &GateReport, problem: &Problem<'_>) -> Option<Annotation> {
    let shown = match problem.origin {
        Origin::DeadBinding(_) | Origin::UnseenWrites(_) | Origin::Diagnostic | Origin::Drift => {
            return None;
        }
        Origin::NothingChecked => Problem {
            help: None,
            ..problem.clone()
        },
        Origin::FailedWithoutFindings(fire) => Problem {
            message: Cow::Owned(with_detail_path(problem.message.clone().into_owned(), fire)),
            ..plugin_in_title(problem)
        },
        Origin::Finding(..) | Origin::NotEvaluated(_) => plugin_in_title(problem),
        Origin::NeverFired(_) => problem.clone(),
    };
    Some(Annotation {
        level: shown.level.as_str(),
        command: annotation(&shown, &report.project_path),
    })
}

/// The problem titled `<title> [plugin <name>]` when its stage is a plugin's.
fn plugin_in_title<'a>(problem: &Problem<'a>) -> Problem<'a> {
    match &problem.plugin {
        Some(plugin) => Problem {
            title: Some(Cow::Owned(format!("{} [plugin {plugin}]", problem.title()))),
            ..problem.clone()
        },
        None => problem.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_reports::{no_record_report, sample_report};
    use crate::runtime::gate::report::Finding;

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

    /// A finding's end is written as a compile diagnostic's is: the one writer orders the
    /// position `line, col, endLine, endColumn`, and leaves out an end before the start.
    #[test]
    fn a_finding_and_a_diagnostic_place_their_ends_alike() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![
            Finding {
                line: Some(3),
                column: Some(2),
                end_line: Some(4),
                end_column: Some(7),
                ..Finding::at_file("a.md", "r", "m")
            },
            Finding {
                line: Some(3),
                end_line: Some(2),
                end_column: Some(7),
                ..Finding::at_file("a.md", "r", "m")
            },
        ];
        let text = render_github_annotations(&report, None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "::warning file=a.md,line=3,col=2,endLine=4,endColumn=7,title=claim-sources::m (r)"
        );
        assert_eq!(
            lines[1],
            "::warning file=a.md,line=3,title=claim-sources::m (r)"
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
