//! The gitlab format: a GitLab Code Quality report (a JSON array of issues, each with a
//! `description`, a `check_name`, a `fingerprint`, a `severity` and a repository-relative
//! `location`), for a merge request's code quality widget.
//!
//! Every finding is an issue, and so is every not-evaluated fire, every blocking binding that
//! never fired and a run that checked nothing (D4: the widget must not look clean when nothing
//! was checked). Severity follows the binding: blocking failures and blocking non-evaluations
//! are `critical`, advisory findings `minor`, advisory non-evaluations `info`. Fingerprints are
//! the ones SARIF uses, so that an issue keeps its identity when lines move.

use camino::Utf8Path;
use serde_json::{Value, json};

use crate::report::finding_identity::Fingerprints;
use crate::report::messages::{
    dead_binding_message, failed_without_findings_message, finding_message_with_help,
    not_evaluated_help, not_evaluated_message, nothing_checked_message, unfired_message,
};
use crate::runtime::gate::report::Severity;
use crate::runtime::gate::report::{GateFire, GateReport, NEVER_FIRED, Outcome};

/// The Code Quality report (pretty-printed JSON, no trailing newline).
pub fn render_gitlab(report: &GateReport) -> String {
    let mut fingerprints = Fingerprints::default();
    let mut issues: Vec<Value> = Vec::new();
    for fire in &report.fires {
        issues.extend(fire_issues(report, fire, &mut fingerprints));
    }
    for unfired in &report.unfired_bindings {
        let manifest = report.repository_path(Utf8Path::new(&unfired.manifest_path));
        issues.push(issue(
            &unfired_message(unfired),
            &format!("{}/{NEVER_FIRED}", unfired.sensor_id),
            &fingerprints.next(&[
                &unfired.sensor_id,
                NEVER_FIRED,
                manifest.as_str(),
                &unfired.stage,
                &unfired.intent,
            ]),
            "critical",
            &manifest,
            None,
        ));
    }
    if let Some(nothing) = report.nothing_checked() {
        let message = nothing_checked_message(&nothing);
        let place = report.repository_path(Utf8Path::new("."));
        issues.push(issue(
            &format!("{message}; {}", nothing.help()),
            "aidlc/nothing-checked",
            &fingerprints.next(&["nothing-checked", &message]),
            "major",
            &place,
            None,
        ));
    }
    for dead in &report.dead_bindings {
        let message = dead_binding_message(dead);
        let place = report.repository_path(Utf8Path::new("."));
        issues.push(issue(
            &message,
            &format!("{}/dead-binding", dead.sensor_id),
            &fingerprints.next(&["dead-binding", &message]),
            "info",
            &place,
            None,
        ));
    }
    serde_json::to_string_pretty(&Value::Array(issues)).expect("a JSON value always serialises")
}

fn fire_issues(
    report: &GateReport,
    fire: &GateFire,
    fingerprints: &mut Fingerprints,
) -> Vec<Value> {
    let blocking = fire.severity == Severity::Blocking;
    let deliverable = report.repository_path(&fire.deliverable);
    let issues = match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![issue(
            &failed_without_findings_message(fire),
            &fire.sensor_id,
            &fingerprints.next(&[&fire.sensor_id, "failed", deliverable.as_str()]),
            if blocking { "critical" } else { "minor" },
            &deliverable,
            None,
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| {
                let file = report.repository_path(&finding.file);
                issue(
                    &finding_message_with_help(finding),
                    &finding_check_name(&fire.sensor_id, &finding.rule),
                    &fingerprints.next(&[
                        &fire.sensor_id,
                        &finding.rule,
                        file.as_str(),
                        &finding.message,
                    ]),
                    if blocking { "critical" } else { "minor" },
                    &file,
                    finding.position().0,
                )
            })
            .collect(),
        Outcome::NotEvaluated => {
            let reason = fire.not_evaluated_reason().unwrap_or_default();
            let mut message = not_evaluated_message(fire);
            if let Some(help) = not_evaluated_help(fire) {
                message.push('\n');
                message.push_str(&help);
            }
            vec![issue(
                &message,
                &format!("{}/not-evaluated", fire.sensor_id),
                &fingerprints.next(&[&fire.sensor_id, &reason, deliverable.as_str()]),
                if blocking { "critical" } else { "info" },
                &deliverable,
                None,
            )]
        }
    };
    with_plugin(issues, fire)
}

/// D50: a plugin stage's issues end their description with ` [plugin <name>]` (the one field
/// GitLab shows that can hold it); a core stage's are unchanged, and no fingerprint moves.
fn with_plugin(mut issues: Vec<Value>, fire: &GateFire) -> Vec<Value> {
    if let Some(plugin) = &fire.plugin {
        for issue in &mut issues {
            if let Some(Value::String(description)) = issue.get_mut("description") {
                description.push_str(" [plugin ");
                description.push_str(plugin);
                description.push(']');
            }
        }
    }
    issues
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

fn issue(
    description: &str,
    check_name: &str,
    fingerprint: &str,
    severity: &str,
    path: &Utf8Path,
    line: Option<u64>,
) -> Value {
    json!({
        "type": "issue",
        "description": description,
        "check_name": check_name,
        "fingerprint": fingerprint,
        "severity": severity,
        "location": {"path": path.as_str(), "lines": {"begin": line.unwrap_or(1)}},
    })
}

#[cfg(test)]
mod tests {
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
