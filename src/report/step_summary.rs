//! The github format's step summary: Markdown for `$GITHUB_STEP_SUMMARY` (the summary line, a
//! table of counts, a table per stage, then the failures with each finding and their detail
//! files, the non-evaluations, the dead bindings and the skips). Every piece of text from the
//! report is escaped or put in a code span, so that a file or sensor name cannot turn into
//! markup.
//!
//! Unlike the other formats, the text ends with a newline (and starts a new block): it is
//! appended to a file other runs append to as well, and two summaries must not fuse.

use std::fmt::Write as _;

use crate::leaves::english::counted;
use crate::report::counts::{distinct_sensor_count, skip_reason_counts, stage_counts};
use crate::report::gate_problems::{gate_problems, repository_file, split_by_fire};
use crate::report::messages::{
    STDERR_LINES_IN_HELP, blocking_line, closing_lines, not_evaluated_detail,
    nothing_checked_message, scope_line, summary_line,
};
use crate::report::problem::{Origin, Problem};
use crate::runtime::gate::report::{
    DeadBinding, GateFire, GateReport, Outcome, UnfiredBinding, last_lines,
};

/// How many findings of one failed fire the summary lists (the rest are counted).
const FINDINGS_LISTED_PER_FIRE: usize = 50;

/// Markdown for `$GITHUB_STEP_SUMMARY`: the summary line, a table of counts, then the
/// failures (with their detail files), the non-evaluations, the dead bindings and the skips.
pub fn render_github_step_summary(report: &GateReport) -> String {
    let mut sections = vec![
        format!(
            "### aidlc {}\n\n{}",
            markdown_text(&scope_line(report)),
            markdown_text(&summary_line(report))
        ),
        markdown_counts_table(report),
    ];
    sections.extend(markdown_stage_table(report));
    let verdict = blocking_line(&report.counts()).or_else(|| {
        report
            .nothing_checked()
            .map(|nothing| nothing_checked_message(&nothing))
    });
    sections.extend(verdict.map(|line| format!("**{}**", markdown_text(&line))));
    let problems = gate_problems(report);
    let (by_fire, of_no_fire) = split_by_fire(report, &problems);
    let failures: Vec<String> = by_fire
        .iter()
        .filter(|(fire, _)| fire.outcome() == Outcome::Failed)
        .map(|(fire, of_fire)| markdown_failure_item(report, fire, of_fire))
        .collect();
    push_markdown_list(&mut sections, "Failures", &failures);
    let not_evaluated: Vec<String> = problems
        .iter()
        .filter_map(|problem| match problem.origin {
            Origin::NotEvaluated(fire) => Some(markdown_not_evaluated_item(fire)),
            Origin::NeverFired(unfired) => Some(markdown_unfired_item(unfired)),
            _ => None,
        })
        .collect();
    push_markdown_list(&mut sections, "Not evaluated", &not_evaluated);
    let dead: Vec<String> = of_no_fire
        .iter()
        .filter_map(|problem| match problem.origin {
            Origin::DeadBinding(dead) => Some(markdown_dead_binding_item(dead)),
            _ => None,
        })
        .collect();
    push_markdown_list(&mut sections, "Dead bindings", &dead);
    let unseen: Vec<String> = of_no_fire
        .iter()
        .filter(|problem| matches!(problem.origin, Origin::UnseenWrites(_)))
        .map(|notice| format!("- {}", markdown_text(&notice.message)))
        .collect();
    push_markdown_list(&mut sections, "Never seen by the write hook", &unseen);
    let skipped: Vec<String> = skip_reason_counts(&report.skips)
        .iter()
        .map(|(reason, count)| format!("- {}: {count}", markdown_text(reason.as_str())))
        .collect();
    push_markdown_list(&mut sections, "Skipped", &skipped);
    sections.extend(closing_lines(report).iter().map(|line| markdown_text(line)));
    format!("{}\n", sections.join("\n\n"))
}

/// One row per stage the report touched: its fires by outcome, and its skips (`None` when it
/// touched none).
fn markdown_stage_table(report: &GateReport) -> Option<String> {
    let stages = stage_counts(report);
    if stages.is_empty() {
        return None;
    }
    let mut table = String::from(
        "| stage | fires | passed | failed | not evaluated | skipped |\n| --- | ---: | ---: | ---: | ---: | ---: |",
    );
    for (stage, counts) in stages {
        let _ = write!(
            table,
            "\n| {} | {} | {} | {} | {} | {} |",
            code_span(stage),
            counts.fires,
            counts.passed,
            counts.failed,
            counts.not_evaluated,
            counts.skipped
        );
    }
    Some(table)
}

fn markdown_counts_table(report: &GateReport) -> String {
    let counts = report.counts();
    let with_blocking = |total: usize, blocking: usize| {
        if blocking > 0 {
            format!("{total} ({blocking} blocking)")
        } else {
            total.to_string()
        }
    };
    let rows = [
        ("stages", report.stages_checked.to_string()),
        ("deliverables", report.deliverables_found.to_string()),
        ("sensors", distinct_sensor_count(report).to_string()),
        ("files", counts.files.to_string()),
        ("fires", counts.fires.to_string()),
        ("passed", counts.passed.to_string()),
        (
            "failed",
            with_blocking(counts.failed, counts.blocking_failed),
        ),
        (
            "not evaluated",
            with_blocking(counts.not_evaluated, counts.blocking_not_evaluated),
        ),
        ("never fired (blocking)", counts.never_fired.to_string()),
        ("skipped", counts.skipped.to_string()),
        ("dead bindings", report.dead_bindings.len().to_string()),
    ];
    let mut table = String::from("| | count |\n| --- | ---: |");
    for (what, count) in rows {
        let _ = write!(table, "\n| {what} | {count} |");
    }
    table
}

fn push_markdown_list(sections: &mut Vec<String>, heading: &str, items: &[String]) {
    if !items.is_empty() {
        sections.push(format!("#### {heading}\n\n{}", items.join("\n")));
    }
}

/// One list item: the sensor in bold, its severity, deliverable and stage, the detail file,
/// then each finding (file, line, message, rule) as a nested item.
fn markdown_failure_item(report: &GateReport, fire: &GateFire, problems: &[Problem<'_>]) -> String {
    let count = fire.findings_count();
    let mut item = format!(
        "- **{}** ({}) on {} (stage {}): {}",
        markdown_text(&fire.sensor_id),
        fire.severity.as_str(),
        code_span(report.repository_path(&fire.deliverable).as_str()),
        code_span(&fire.stage),
        counted(count, "finding"),
    );
    if let Some(detail_path) = &fire.detail_path {
        let _ = write!(item, "; details in {}", code_span(detail_path.as_str()));
    }
    let findings: Vec<&Problem<'_>> = problems
        .iter()
        .filter(|problem| matches!(problem.origin, Origin::Finding(..)))
        .collect();
    for finding in findings.iter().take(FINDINGS_LISTED_PER_FIRE) {
        let file = repository_file(report, finding);
        let place = match finding.region() {
            Some(region) => format!("{file}:{}", region.line),
            None => file.into_string(),
        };
        let _ = write!(
            item,
            "\n  - {} {} ({})",
            code_span(&place),
            markdown_text(&finding.message),
            code_span(finding.kind.unwrap_or_default())
        );
    }
    if findings.len() > FINDINGS_LISTED_PER_FIRE {
        let _ = write!(
            item,
            "\n  - and {} more",
            findings.len() - FINDINGS_LISTED_PER_FIRE
        );
    }
    item
}

fn markdown_not_evaluated_item(fire: &GateFire) -> String {
    let mut item = format!(
        "- **{}** ({}) on {} (stage {}): {}",
        markdown_text(&fire.sensor_id),
        fire.severity.as_str(),
        code_span(fire.deliverable.as_str()),
        code_span(&fire.stage),
        markdown_text(&not_evaluated_detail(fire)),
    );
    let tail = last_lines(&fire.stderr_tail, STDERR_LINES_IN_HELP);
    if !tail.is_empty() {
        let _ = write!(
            item,
            "; its stderr ended with {}",
            code_span(&tail.replace('\n', " ⏎ "))
        );
    }
    item
}

fn markdown_unfired_item(unfired: &UnfiredBinding) -> String {
    format!(
        "- **{}** (blocking) on stage {} of intent {}: {}",
        markdown_text(&unfired.sensor_id),
        code_span(&unfired.stage),
        code_span(&unfired.intent),
        markdown_text(&unfired.reason()),
    )
}

fn markdown_dead_binding_item(dead: &DeadBinding) -> String {
    format!(
        "- sensor {} on stage {} can never fire: its glob {} matches none of the stage's declared outputs",
        code_span(&dead.sensor_id),
        code_span(&dead.stage),
        code_span(&dead.pattern),
    )
}

/// Plain text that Markdown shows as typed: one line, punctuation that could start markup
/// escaped with a backslash.
fn markdown_text(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '&' | '!' => {
                escaped.push('\\');
                escaped.push(character);
            }
            '\r' | '\n' => escaped.push(' '),
            _ => escaped.push(character),
        }
    }
    escaped
}

/// A Markdown code span holding `text` verbatim, whatever backticks it contains.
fn code_span(text: &str) -> String {
    let one_line = text.replace(['\r', '\n'], " ");
    let longest_run = one_line
        .split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    let padding = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{padding}{one_line}{padding}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_reports::sample_report;

    #[test]
    fn step_summary_matches_the_snapshot() {
        insta::assert_snapshot!("step_summary", render_github_step_summary(&sample_report()));
    }

    #[test]
    fn step_summary_has_the_table_and_the_failures_with_detail_paths() {
        let text = render_github_step_summary(&sample_report());
        assert!(text.contains("| | count |\n| --- | ---: |\n| stages | 3 |"));
        assert!(text.contains("| failed | 3 (1 blocking) |"));
        assert!(text.contains("| not evaluated | 5 (3 blocking) |"));
        assert!(text.contains("| never fired (blocking) | 1 |"));
        assert!(
            text.contains(
                "**blocking sensors: 1 failed, 3 not evaluated; the gate does not pass**"
            )
        );
        assert!(text.contains("- **api-contract** (blocking) on stage `application-design` of intent `260101-login`: blocking sensor never fired: its glob matches none"), "{text}");
        assert!(text.contains("#### Failures\n\n- **required-sections** (blocking) on `services/shop/aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md` (stage `requirements-analysis`): 3 findings; details in `aidlc/spaces/default/intents/260101-login/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md`\n  - `services/shop/aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md:12` missing section \"\\#\\# Risks\" (`missing-heading`)"), "{text}");
        assert!(text.contains("| stage | fires | passed | failed | not evaluated | skipped |\n| --- | ---: | ---: | ---: | ---: | ---: |\n| `requirements-analysis` | 3 | 1 | 2 | 0 | 1 |"), "{text}");
        assert!(
            text.ends_with("shard 2 of 4: only this shard's share of the fires ran\n"),
            "{text:?}"
        );
        assert!(!text.ends_with("\n\n"));
        assert!(text.contains("#### Not evaluated\n\n- **linter** (blocking)"));
        assert!(text.contains("#### Dead bindings\n\n- sensor `required-sections` on stage `reverse-engineering` can never fire: its glob `**/{aidlc-docs,intents}/**`"));
        assert!(text.contains("#### Skipped\n\n- no glob match: 2\n- no deliverable: 1"));
        assert!(text.contains("shard 2 of 4"));
    }

    #[test]
    fn markdown_escaping_keeps_text_literal() {
        assert_eq!(markdown_text("a*b_c|d\ne"), "a\\*b\\_c\\|d e");
        assert_eq!(code_span("plain"), "`plain`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x``"), "``` `x`` ```");
    }
}
