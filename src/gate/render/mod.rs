//! Turning a [`GateReport`] into text, one format per file: diagnostics and a summary for
//! people (`human.rs`), one JSON document for tools (`json.rs`), GitHub Actions workflow
//! commands (`github.rs`) and a step summary (`step_summary.rs`) for CI, and SARIF 2.1.0 for
//! code scanning (`sarif.rs`). [`render`] is the one `match` on [`ReportFormat`]; the wording
//! and the counts every format shares live in `messages.rs` and `counts.rs`, so that the
//! formats cannot drift apart.
//!
//! Every renderer is a pure function of the report (and of the arguments it names): it reads
//! no environment, prints nothing, and returns text without a trailing newline, which the
//! printer adds. Fires, findings, skips and dead bindings keep the report's order. Nothing here
//! decides an exit status or writes a file; `cli::gate` prints what [`render`] returns.
//!
//! Invariants every format keeps (D4, failure-modes N2 and §5.12):
//! - a not-evaluated fire is always shown with its reason, never folded into the passes;
//! - a blocking binding that never fired is shown as a blocking non-evaluation, with the same
//!   reason ([`UnfiredBinding::reason`]) in every format;
//! - the denominator is always there: how many sensors ran on how many files, and what was
//!   skipped and why, and a report that evaluated nothing says why ([`NothingChecked`]), so
//!   that "nothing was checked" cannot look green;
//! - a dead binding is always named.
//!
//! [`UnfiredBinding::reason`]: super::report::UnfiredBinding::reason
//! [`NothingChecked`]: super::report::NothingChecked

mod counts;
mod github;
mod human;
mod json;
mod messages;
mod sarif;
mod step_summary;

use crate::gate::report::GateReport;

pub use counts::skip_reason_key;
pub use github::render_github_annotations;
pub use human::render_human;
pub use json::{JSON_FORMAT_VERSION, json_document, render_json};
pub use messages::summary_line;
pub use sarif::{SARIF_SCHEMA_URI, SARIF_VERSION, render_sarif, sarif_document};
pub use step_summary::render_github_step_summary;

/// The formats of `aidlc gate check --format`, one file each in this folder.
//
// The variants carry no doc comments on purpose: clap would show them as the values' help and
// change `--help`; each format's file documents it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Human,
    Json,
    Github,
    Sarif,
}

/// What a renderer may need besides the report, decided at the edge.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderSettings {
    /// ANSI colours in the human format (the CLI turns them on for a terminal without
    /// `NO_COLOR`).
    pub color: bool,
}

/// A report in one format: the text for stdout, and the Markdown a CI step summary gets
/// (`$GITHUB_STEP_SUMMARY`; only the github format has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedReport {
    pub stdout: String,
    pub step_summary: Option<String>,
}

impl RenderedReport {
    fn stdout_only(stdout: String) -> Self {
        Self {
            stdout,
            step_summary: None,
        }
    }
}

/// `report` in `format`. Adding a format is a file in this folder, a variant of
/// [`ReportFormat`] and an arm here.
pub fn render(
    report: &GateReport,
    format: ReportFormat,
    settings: RenderSettings,
) -> RenderedReport {
    match format {
        ReportFormat::Human => RenderedReport::stdout_only(render_human(report, settings.color)),
        ReportFormat::Json => RenderedReport::stdout_only(render_json(report)),
        ReportFormat::Github => RenderedReport {
            stdout: render_github_annotations(report),
            step_summary: Some(render_github_step_summary(report)),
        },
        ReportFormat::Sarif => {
            RenderedReport::stdout_only(render_sarif(report, env!("CARGO_PKG_VERSION")))
        }
    }
}

#[cfg(test)]
/// The reports the renderers' tests share: one with every case a format must show, and a
/// `--no-record` one.
mod test_reports {
    use std::time::Duration;

    use camino::Utf8PathBuf;
    use serde_json::json;

    use crate::dispatch::verdict::{ScriptError, Verdict};
    use crate::gate::report::{
        DeadBinding, Finding, GateFire, GateReport, GateSkip, SkipReason, UnfiredBinding,
        UnfiredCause,
    };
    use crate::syntax::manifest::Severity;

    pub(super) const RECORD: &str = "aidlc/spaces/default/intents/260101-login";

    fn path(relative: &str) -> Utf8PathBuf {
        Utf8PathBuf::from(format!("{RECORD}/{relative}"))
    }

    fn fire(stage: &str, sensor_id: &str, severity: Severity, deliverable: &str) -> GateFire {
        GateFire {
            stage: stage.to_owned(),
            sensor_id: sensor_id.to_owned(),
            severity,
            deliverable: path(deliverable),
            verdict: Verdict::Passed,
            fire_id: Some("0a1b2c3d".to_owned()),
            detail_path: None,
            findings: Vec::new(),
            duration: Duration::from_micros(12_345),
            artifact_changed: false,
        }
    }

    fn failed(mut fire: GateFire, findings_count: u64, fire_id: &str) -> GateFire {
        fire.verdict = Verdict::Failed {
            findings_count,
            worker_json: json!({"pass": false, "findings_count": findings_count}),
        };
        fire.fire_id = Some(fire_id.to_owned());
        fire.detail_path = Some(
            format!(
                "{RECORD}/.aidlc-engine/sensors/{}/{}-{fire_id}.md",
                fire.stage, fire.sensor_id
            )
            .into(),
        );
        fire
    }

    fn not_evaluated(mut fire: GateFire, verdict: Verdict) -> GateFire {
        fire.verdict = verdict;
        fire
    }

    fn skip(
        stage: &str,
        sensor_id: &str,
        deliverable: Option<&str>,
        reason: SkipReason,
    ) -> GateSkip {
        GateSkip {
            stage: stage.to_owned(),
            sensor_id: sensor_id.to_owned(),
            deliverable: deliverable.map(path),
            reason,
        }
    }

    /// Every case the renderers must show: a pass, a blocking failure with positions, an
    /// advisory failure with a finding but no line, an advisory failure without structured
    /// findings, a blocking tool-unavailable, a budget override, a script error, a blocking
    /// fire whose file changed under it, a blocking binding that never fired, one skip of each
    /// reason, a dead binding, and shard 2 of 4.
    pub(super) fn sample_report() -> GateReport {
        let requirements = "inception/requirements-analysis/requirements.md";
        let design = "construction/application-design/components.md";
        let mut blocking_failure = failed(
            fire(
                "requirements-analysis",
                "required-sections",
                Severity::Blocking,
                requirements,
            ),
            3,
            "1b2c3d4e",
        );
        blocking_failure.findings = vec![
            Finding {
                file: path(requirements),
                line: Some(12),
                column: Some(3),
                rule: Some("missing-heading".to_owned()),
                message: "missing section \"## Risks\"".to_owned(),
            },
            Finding {
                file: path(requirements),
                line: Some(40),
                column: None,
                rule: None,
                message: "section \"## Scope\" is empty".to_owned(),
            },
        ];
        let mut advisory_failure = failed(
            fire(
                "requirements-analysis",
                "upstream-coverage",
                Severity::Advisory,
                requirements,
            ),
            1,
            "2c3d4e5f",
        );
        advisory_failure.findings = vec![Finding {
            file: path(requirements),
            line: None,
            column: None,
            rule: Some("unreferenced-artifact".to_owned()),
            message: "the upstream artifact intent.md is never referenced".to_owned(),
        }];
        GateReport {
            intents: vec!["260101-login".to_owned()],
            stages_checked: 3,
            deliverables_found: 2,
            fires: vec![
                fire(
                    "requirements-analysis",
                    "claim-sources",
                    Severity::Advisory,
                    requirements,
                ),
                blocking_failure,
                advisory_failure,
                failed(
                    fire(
                        "application-design",
                        "claim-sources",
                        Severity::Advisory,
                        design,
                    ),
                    4,
                    "3d4e5f60",
                ),
                not_evaluated(
                    fire("application-design", "linter", Severity::Blocking, design),
                    Verdict::ToolUnavailable,
                ),
                not_evaluated(
                    fire(
                        "application-design",
                        "type-check",
                        Severity::Advisory,
                        design,
                    ),
                    Verdict::BudgetOverride {
                        cap_seconds: 300,
                        observed_seconds: 301,
                    },
                ),
                not_evaluated(
                    fire(
                        "application-design",
                        "traceability",
                        Severity::Advisory,
                        design,
                    ),
                    Verdict::ScriptError(ScriptError::Exit(2)),
                ),
                GateFire {
                    artifact_changed: true,
                    ..fire(
                        "application-design",
                        "required-sections",
                        Severity::Blocking,
                        design,
                    )
                },
            ],
            skips: vec![
                skip(
                    "requirements-analysis",
                    "linter",
                    Some(requirements),
                    SkipReason::NoGlobMatch,
                ),
                skip(
                    "application-design",
                    "required-sections",
                    Some(design),
                    SkipReason::NoGlobMatch,
                ),
                skip(
                    "units-generation",
                    "required-sections",
                    None,
                    SkipReason::NoDeliverable,
                ),
                skip(
                    "workflow-planning",
                    "claim-sources",
                    None,
                    SkipReason::SensorsOff,
                ),
                skip(
                    "application-design",
                    "upstream-coverage",
                    Some(design),
                    SkipReason::OtherFireOn,
                ),
                skip(
                    "application-design",
                    "required-sections",
                    Some("construction/application-design/services.md"),
                    SkipReason::OtherShard,
                ),
                skip(
                    "application-design",
                    "claim-sources",
                    Some("construction/application-design/interfaces.md"),
                    SkipReason::NotARegularFile,
                ),
            ],
            dead_bindings: vec![DeadBinding {
                stage: "reverse-engineering".to_owned(),
                sensor_id: "required-sections".to_owned(),
                pattern: "**/{aidlc-docs,intents}/**".to_owned(),
            }],
            unfired_bindings: vec![UnfiredBinding {
                stage: "application-design".to_owned(),
                sensor_id: "api-contract".to_owned(),
                intent: "260101-login".to_owned(),
                manifest_path: ".claude/sensors/aidlc-api-contract.md".to_owned(),
                pattern: Some("**/*.ts".to_owned()),
                declared_outputs: vec!["components.md".to_owned(), "services.md".to_owned()],
                cause: UnfiredCause::NoGlobMatch { deliverables: 2 },
            }],
            bindings_selected: 9,
            duration: Duration::from_micros(48_300),
            shard: Some((2, 4)),
            recorded: true,
            ..GateReport::default()
        }
    }

    /// A `--no-record` run: no fire ids, no detail files, one advisory failure.
    pub(super) fn no_record_report() -> GateReport {
        let mut failure = fire(
            "requirements-analysis",
            "claim-sources",
            Severity::Advisory,
            "inception/requirements-analysis/requirements.md",
        );
        failure.verdict = Verdict::Failed {
            findings_count: 1,
            worker_json: json!({"pass": false, "findings_count": 1}),
        };
        failure.fire_id = None;
        GateReport {
            intents: vec!["260101-login".to_owned(), "260102-billing".to_owned()],
            stages_checked: 1,
            deliverables_found: 1,
            fires: vec![failure],
            duration: Duration::from_millis(5),
            recorded: false,
            ..GateReport::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::gate::render::test_reports::{no_record_report, sample_report};
    use crate::gate::report::Finding;

    /// The one match sends each `--format` value to its own renderer, and only github has a
    /// step summary; colour reaches the human format only.
    #[test]
    fn each_format_goes_to_its_renderer() {
        let report = sample_report();
        let plain = RenderSettings::default();
        let expected = [
            (ReportFormat::Human, render_human(&report, false), None),
            (ReportFormat::Json, render_json(&report), None),
            (
                ReportFormat::Github,
                render_github_annotations(&report),
                Some(render_github_step_summary(&report)),
            ),
            (
                ReportFormat::Sarif,
                render_sarif(&report, env!("CARGO_PKG_VERSION")),
                None,
            ),
        ];
        for (format, stdout, step_summary) in expected {
            let rendered = render(&report, format, plain);
            assert_eq!(rendered.stdout, stdout, "{format:?}");
            assert_eq!(rendered.step_summary, step_summary, "{format:?}");
        }
        let colored = render(&report, ReportFormat::Human, RenderSettings { color: true });
        assert_eq!(colored.stdout, render_human(&report, true));
        let json_with_color = render(&report, ReportFormat::Json, RenderSettings { color: true });
        assert_eq!(json_with_color.stdout, render_json(&report));
    }

    #[test]
    fn an_empty_report_says_why_nothing_was_checked_in_every_format() {
        let report = GateReport {
            intents: vec!["260101-login".to_owned()],
            stages_checked: 2,
            bindings_not_selected: 4,
            ..GateReport::default()
        };
        let nothing = report.nothing_checked().expect("nothing was checked");
        let sentence = "nothing was checked: no gate-fired binding: the install's sensors are all write-fired (4 bindings)";
        assert!(nothing.help().contains("`--fire-on all` checks them"));
        assert!(render_human(&report, false).contains(sentence));
        let json: Value = serde_json::from_str(&render_json(&report)).unwrap();
        assert_eq!(json["nothing_checked"]["reason"], json!(nothing.reason()));
        assert!(
            render_github_annotations(&report)
                .contains(&format!("::warning title=nothing checked::{sentence}"))
        );
        assert!(
            render_github_step_summary(&report)
                .contains("**nothing was checked: no gate-fired binding: the install's sensors")
        );
        let sarif: Value = serde_json::from_str(&render_sarif(&report, "0.1.0")).unwrap();
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], json!(false));
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["message"]["text"],
            json!(sentence)
        );
    }

    #[test]
    fn a_zero_line_is_not_a_position() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![Finding {
            file: "a.md".into(),
            line: Some(0),
            column: Some(4),
            rule: None,
            message: "m".to_owned(),
        }];
        let text = render_github_annotations(&report);
        assert!(
            text.starts_with("::warning file=a.md,title=claim-sources::m"),
            "{text}"
        );
        let sarif: Value = serde_json::from_str(&render_sarif(&report, "0.1.0")).unwrap();
        let location = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
        assert_eq!(location.get("region"), None);
    }
}
