//! The gitlab format: a GitLab Code Quality report (a JSON array of issues, each with a
//! `description`, a `check_name`, a `fingerprint`, a `severity` and a repository-relative
//! `location`), for a merge request's code quality widget.
//!
//! Every finding is an issue, and so is every not-evaluated fire, every blocking binding that
//! never fired and a run that checked nothing (D4: the widget must not look clean when nothing
//! was checked). Severity follows the binding: blocking failures and blocking non-evaluations
//! are `critical`, advisory findings `minor`, advisory non-evaluations `info`. Fingerprints are
//! the ones SARIF uses, so that an issue keeps its identity when lines move.

use std::borrow::Cow;

use serde::Serialize;

use crate::report::gate_problems::{gate_problems, repository_file};
use crate::report::problem::{Level, Origin, Problem};
use crate::runtime::gate::report::{GateReport, NEVER_FIRED};

/// The Code Quality report (pretty-printed JSON, no trailing newline).
pub fn render_gitlab(report: &GateReport) -> String {
    let issues: Vec<Issue> = gate_problems(report)
        .iter()
        .map(|problem| problem_issue(report, problem))
        .collect();
    serde_json::to_string_pretty(&issues).expect("an issue always serialises")
}

/// One problem as an issue: its description, `check_name` and severity as the module
/// documentation says, on its repository-relative file (the project folder for a run-wide
/// problem).
fn problem_issue(report: &GateReport, problem: &Problem<'_>) -> Issue {
    let rule = problem.rule;
    let blocking = problem.level == Level::Error;
    let (description, check_name, severity): (Cow<'_, str>, Cow<'_, str>, &str) =
        match problem.origin {
            Origin::Finding(..) => (
                Cow::Owned(problem.one_line_text()),
                Cow::Owned(finding_check_name(rule, problem.kind.unwrap_or_default())),
                if blocking { "critical" } else { "minor" },
            ),
            Origin::FailedWithoutFindings(_) | Origin::Diagnostic | Origin::Drift => (
                Cow::Borrowed(&*problem.message),
                Cow::Borrowed(rule),
                if blocking { "critical" } else { "minor" },
            ),
            Origin::NotEvaluated(_) => (
                Cow::Owned(problem.message_then_help()),
                Cow::Owned(format!("{rule}/not-evaluated")),
                if blocking { "critical" } else { "info" },
            ),
            Origin::NeverFired(_) => (
                Cow::Borrowed(&*problem.message),
                Cow::Owned(format!("{rule}/{NEVER_FIRED}")),
                "critical",
            ),
            Origin::NothingChecked => (
                Cow::Owned(format!(
                    "{}; {}",
                    problem.message,
                    problem.help.as_deref().unwrap_or_default()
                )),
                Cow::Borrowed("aidlc/nothing-checked"),
                "major",
            ),
            Origin::DeadBinding(_) => (
                Cow::Borrowed(&*problem.message),
                Cow::Owned(format!("{rule}/dead-binding")),
                "info",
            ),
            Origin::UnseenWrites(_) => (
                Cow::Borrowed(&*problem.message),
                Cow::Borrowed("aidlc/write-hook-never-saw"),
                "info",
            ),
        };
    let description = match (&problem.plugin, problem.origin.fire()) {
        (Some(plugin), Some(_)) => Cow::Owned(format!("{description} [plugin {plugin}]")),
        _ => description,
    };
    Issue {
        kind: "issue",
        description: description.into_owned(),
        check_name: check_name.into_owned(),
        fingerprint: problem.fingerprint.clone().unwrap_or_default(),
        severity,
        location: IssueLocation {
            path: repository_file(report, problem).into_string(),
            lines: IssueLines {
                begin: problem.region().map_or(1, |region| region.line),
            },
        },
    }
}

/// A finding's `check_name`: the sensor id alone when the finding's rule is the sensor itself
/// (a sensor that reports one kind of finding), else `sensor/rule`; never the id twice.
fn finding_check_name(sensor_id: &str, rule: &str) -> String {
    if rule.is_empty() || rule == sensor_id {
        sensor_id.to_owned()
    } else {
        format!("{sensor_id}/{rule}")
    }
}

/// One Code Quality issue, its keys in the order GitLab documents them.
#[derive(Debug, Serialize)]
struct Issue {
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: IssueLocation,
}

/// The repository-relative file and the line an issue is on (line 1 when none is known).
#[derive(Debug, Serialize)]
struct IssueLocation {
    path: String,
    lines: IssueLines,
}

#[derive(Debug, Serialize)]
struct IssueLines {
    begin: u64,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::report::test_reports::sample_report;

    #[test]
    fn a_check_name_names_the_sensor_once() {
        assert_eq!(finding_check_name("no-todo", "no-todo"), "no-todo");
        assert_eq!(finding_check_name("no-todo", ""), "no-todo");
        assert_eq!(
            finding_check_name("required-sections", "missing-heading"),
            "required-sections/missing-heading"
        );
    }

    #[test]
    fn gitlab_matches_the_snapshot() {
        insta::assert_snapshot!("gitlab", render_gitlab(&sample_report()));
    }

    #[test]
    fn every_finding_is_an_issue_with_a_location_and_a_distinct_fingerprint() {
        let issues: Vec<Value> = serde_json::from_str(&render_gitlab(&sample_report())).unwrap();
        // 7 findings, 4 non-evaluations, 1 never-fired binding, 1 dead binding.
        assert_eq!(issues.len(), 13);
        for issue in &issues {
            for key in ["description", "check_name", "fingerprint", "severity"] {
                assert!(issue[key].is_string(), "{key} in {issue}");
            }
            assert!(issue["location"]["path"].is_string());
            assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        }
        assert_eq!(issues[0]["severity"], json!("critical"));
        assert_eq!(
            issues[0]["location"],
            json!({"path": "services/shop/aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md", "lines": {"begin": 12}})
        );
        assert_eq!(
            issues[0]["check_name"],
            json!("required-sections/missing-heading")
        );
        assert_eq!(issues[2]["severity"], json!("minor"));
        let fingerprints: std::collections::BTreeSet<String> = issues
            .iter()
            .map(|issue| issue["fingerprint"].to_string())
            .collect();
        assert_eq!(fingerprints.len(), issues.len());
    }
}
