//! The report stack: one model of what a run found (`problem::Problem`), and one renderer per
//! format (a file each), for both kinds of report: the compile's (its diagnostics, and its drift
//! under `--check`) and the gate check's ([`GateReport`], which `gate_problems.rs` lowers once into
//! its ordered list of problems, fingerprints included). Every format of the gate report but the
//! JSON document (the report itself, which `gate merge` reads back) draws its problems from that
//! list, and reads what the report carries beyond them (the denominator, skips, passes, the shard)
//! from [`GateReport`] itself.
//!
//! [`render`] is the one `match` on [`ReportFormat`] for the gate report; the compile calls its
//! format's function for each diagnostic as it prints.
//!
//! Every renderer is a pure function of the report (and of the arguments it names): it reads
//! no environment, prints nothing, and returns text without a trailing newline, which the
//! printer adds. Fires, findings, skips and dead bindings keep the report's order. Nothing here
//! decides an exit status or writes a file; `cli` prints what the renderers return. This stack
//! imports the values it renders (`diagnostics`, `gate::report`) and the syntax helpers
//! (`github_actions`), never the compile's queries or the parsers.
//!
//! Invariants every format of the gate report keeps (D4):
//! - a not-evaluated fire is always shown with its reason, never folded into the passes;
//! - a blocking binding that never fired is shown as a blocking non-evaluation, with the same
//!   reason ([`UnfiredBinding::reason`]) in every format;
//! - the denominator is always there: how many sensors ran on how many files, and what was
//!   skipped and why, and a report that evaluated nothing says why ([`NothingChecked`]), so
//!   that "nothing was checked" cannot look green;
//! - a dead binding is always named.
//!
//! [`UnfiredBinding::reason`]: crate::runtime::gate::report::UnfiredBinding::reason
//! [`NothingChecked`]: crate::runtime::gate::report::NothingChecked

mod counts;
pub mod drift;
mod finding_identity;
pub mod gate_problems;
pub mod github;
mod gitlab;
pub mod human;
pub mod json;
pub mod json_schema;
mod junit;
mod messages;
pub mod problem;
pub mod sarif;
mod sarif_log;
pub mod snippet;
pub mod source;
mod step_summary;

use crate::runtime::gate::report::GateReport;

pub use crate::runtime::gate::report::{RenderSettings, RenderedReport, ReportFormat};

impl RenderedReport {
    fn stdout_only(stdout: String) -> Self {
        Self {
            stdout,
            step_summary: None,
        }
    }
}

/// `report` in `format`. Adding a format is a file in this folder, a variant of
/// [`ReportFormat`] and an arm here (CONTRIBUTING.md lists the other places).
pub fn render(
    report: &GateReport,
    format: ReportFormat,
    settings: &RenderSettings,
) -> RenderedReport {
    match format {
        ReportFormat::Human => RenderedReport::stdout_only(human::render_human(report, settings)),
        ReportFormat::Json => RenderedReport::stdout_only(json::render_json(report)),
        ReportFormat::Github => RenderedReport {
            stdout: github::render_github_annotations(report, settings.full_report.as_deref()),
            step_summary: Some(step_summary::render_github_step_summary(report)),
        },
        ReportFormat::Sarif => RenderedReport::stdout_only(sarif::render_sarif(
            report,
            settings,
            env!("CARGO_PKG_VERSION"),
        )),
        ReportFormat::Junit => {
            RenderedReport::stdout_only(junit::render_junit(report, settings.strict))
        }
        ReportFormat::Gitlab => RenderedReport::stdout_only(gitlab::render_gitlab(report)),
    }
}

#[cfg(test)]
mod merge_tests;

#[cfg(test)]
/// The reports the renderers' tests share: one with every case a format must show, and a
/// `--no-record` one.
pub(crate) mod test_reports {
    use std::time::Duration;

    use camino::Utf8PathBuf;

    use crate::protocol::selection::Severity;
    use crate::protocol::verdict::{ScriptError, Verdict};
    use crate::runtime::gate::report::{
        DeadBinding, Finding, FireResult, GateFire, GateReport, GateSkip, PlanIdentity, SensorInfo,
        SkipReason, UnfiredBinding, UnfiredCause,
    };

    pub(crate) const RECORD: &str = "aidlc/spaces/default/intents/260101-login";

    fn path(relative: &str) -> Utf8PathBuf {
        Utf8PathBuf::from(format!("{RECORD}/{relative}"))
    }

    fn fire(stage: &str, sensor_id: &str, severity: Severity, deliverable: &str) -> GateFire {
        GateFire {
            stage: stage.to_owned(),
            sensor_id: sensor_id.to_owned(),
            severity,
            deliverable: path(deliverable),
            result: FireResult::Passed,
            fire_id: Some("0a1b2c3d".to_owned()),
            detail_path: None,
            findings: Vec::new(),
            duration: Duration::from_micros(12_345),
            stderr_tail: String::new(),
            plan_index: 0,
            plugin: None,
        }
    }

    fn finding(
        relative: &str,
        rule: &str,
        message: &str,
        position: (Option<u64>, Option<u64>),
        help: Option<&str>,
    ) -> Finding {
        Finding {
            line: position.0,
            column: position.1,
            help: help.map(str::to_owned),
            ..Finding::at_file(path(relative), rule, message)
        }
    }

    fn failed(mut fire: GateFire, findings_count: u64, fire_id: &str) -> GateFire {
        fire.result = FireResult::Failed { findings_count };
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

    fn not_evaluated(mut fire: GateFire, verdict: &Verdict) -> GateFire {
        fire.result = FireResult::of(verdict, false);
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
    pub(crate) fn sample_report() -> GateReport {
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
            finding(
                requirements,
                "missing-heading",
                "missing section \"## Risks\"",
                (Some(12), Some(3)),
                Some("add a `## Risks` section"),
            ),
            finding(
                requirements,
                "empty-section",
                "section \"## Scope\" is empty",
                (Some(40), None),
                None,
            ),
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
        advisory_failure.findings = vec![finding(
            requirements,
            "unreferenced-artifact",
            "the upstream artifact intent.md is never referenced",
            (None, None),
            Some("cite `intent` in one of the stage's deliverables"),
        )];
        let mut claims_failure = failed(
            fire(
                "application-design",
                "claim-sources",
                Severity::Advisory,
                design,
            ),
            4,
            "3d4e5f60",
        );
        claims_failure.findings = (1..=4)
            .map(|index| {
                finding(
                    design,
                    "untagged-claim",
                    "claim block has no source tag",
                    (Some(index * 2 + 1), None),
                    Some("end the claim with a source tag"),
                )
            })
            .collect();
        let mut script_error = not_evaluated(
            fire(
                "application-design",
                "traceability",
                Severity::Advisory,
                design,
            ),
            &Verdict::ScriptError(ScriptError::Exit(2)),
        );
        script_error.stderr_tail =
            "loading rules\nerror: cannot parse rules.md: unexpected `|` at line 3".to_owned();
        script_error.detail_path = Some(
            format!("{RECORD}/.aidlc-engine/sensors/application-design/traceability-4e5f6071.md")
                .into(),
        );
        let mut fires = vec![
            fire(
                "requirements-analysis",
                "claim-sources",
                Severity::Advisory,
                requirements,
            ),
            blocking_failure,
            advisory_failure,
            claims_failure,
            not_evaluated(
                fire("application-design", "linter", Severity::Blocking, design),
                &Verdict::ToolUnavailable,
            ),
            not_evaluated(
                fire(
                    "application-design",
                    "type-check",
                    Severity::Advisory,
                    design,
                ),
                &Verdict::BudgetOverride {
                    cap_seconds: 300,
                    observed_seconds: 301,
                },
            ),
            script_error,
            GateFire {
                result: FireResult::of(&Verdict::Passed, true),
                ..fire(
                    "application-design",
                    "required-sections",
                    Severity::Blocking,
                    design,
                )
            },
        ];
        for (index, fire) in fires.iter_mut().enumerate() {
            fire.plan_index = index * 2;
        }
        GateReport {
            intents: vec!["260101-login".to_owned()],
            stages_checked: 3,
            deliverables_found: 2,
            fires,
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
                plugin: None,
            }],
            bindings_selected: 9,
            duration: Duration::from_micros(48_300),
            shard: Some((2, 4)),
            recorded: true,
            plan: PlanIdentity {
                id: "5e1f".repeat(16),
                size: 16,
            },
            sensors: [
                ("claim-sources", "Every claim cites a registered source."),
                (
                    "required-sections",
                    "The deliverable has its template's sections.",
                ),
                ("upstream-coverage", "The stage cites what it consumes."),
                ("linter", "The code file passes the project's linter."),
                ("type-check", "The code file type-checks."),
                ("traceability", "Upstream ids are traced downstream."),
                ("api-contract", "The API contract matches the design."),
            ]
            .into_iter()
            .map(|(id, text)| {
                let info = SensorInfo {
                    description: text.to_owned(),
                    manifest_path: format!(".claude/sensors/aidlc-{id}.md"),
                };
                (id.to_owned(), info)
            })
            .collect(),
            project_path: "services/shop".into(),
            ..GateReport::default()
        }
    }

    /// A `--no-record` run: no fire ids, no detail files, one advisory failure.
    pub(crate) fn no_record_report() -> GateReport {
        let mut failure = fire(
            "requirements-analysis",
            "claim-sources",
            Severity::Advisory,
            "inception/requirements-analysis/requirements.md",
        );
        failure.result = FireResult::Failed { findings_count: 1 };
        failure.findings = vec![finding(
            "inception/requirements-analysis/requirements.md",
            "untagged-claim",
            "claim block has no source tag",
            (Some(7), None),
            None,
        )];
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
    use crate::report::github::render_github_annotations;
    use crate::report::gitlab::render_gitlab;
    use crate::report::human::render_human;
    use crate::report::json::render_json;
    use crate::report::junit::render_junit;
    use crate::report::sarif::render_sarif;
    use crate::report::step_summary::render_github_step_summary;
    use crate::report::test_reports::{no_record_report, sample_report};
    use crate::runtime::gate::report::Finding;

    /// The one match sends each `--format` value to its own renderer, and only github has a
    /// step summary; colour reaches the human format only.
    #[test]
    fn each_format_goes_to_its_renderer() {
        let report = sample_report();
        let plain = RenderSettings::default();
        let version = env!("CARGO_PKG_VERSION");
        for &format in ReportFormat::all() {
            let (stdout, step_summary) = match format {
                ReportFormat::Human => (render_human(&report, &plain), None),
                ReportFormat::Json => (render_json(&report), None),
                ReportFormat::Github => (
                    render_github_annotations(&report, None),
                    Some(render_github_step_summary(&report)),
                ),
                ReportFormat::Sarif => (
                    render_sarif(&report, &RenderSettings::default(), version),
                    None,
                ),
                ReportFormat::Junit => (render_junit(&report, false), None),
                ReportFormat::Gitlab => (render_gitlab(&report), None),
            };
            let rendered = render(&report, format, &plain);
            assert_eq!(rendered.stdout, stdout, "{format:?}");
            assert_eq!(rendered.step_summary, step_summary, "{format:?}");
        }
        let colored = RenderSettings {
            color: true,
            ..RenderSettings::default()
        };
        assert_eq!(
            render(&report, ReportFormat::Human, &colored).stdout,
            render_human(&report, &colored)
        );
        assert_ne!(
            render(&report, ReportFormat::Human, &colored).stdout,
            render_human(&report, &plain)
        );
        assert_eq!(
            render(&report, ReportFormat::Json, &colored).stdout,
            render_json(&report)
        );
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
        assert!(render_human(&report, &RenderSettings::default()).contains(sentence));
        let json: Value = serde_json::from_str(&render_json(&report)).unwrap();
        assert_eq!(json["nothing_checked"]["reason"], json!(nothing.reason()));
        assert!(
            render_github_annotations(&report, None)
                .contains(&format!("::warning title=nothing checked::{sentence}"))
        );
        assert!(
            render_github_step_summary(&report)
                .contains("**nothing was checked: no gate-fired binding: the install's sensors")
        );
        let sarif: Value =
            serde_json::from_str(&render_sarif(&report, &RenderSettings::default(), "")).unwrap();
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], json!(false));
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["message"]["text"],
            json!(sentence)
        );
        assert!(render_junit(&report, false).contains(sentence));
        assert!(render_gitlab(&report).contains(sentence));
        for &format in ReportFormat::all() {
            let rendered = render(&report, format, &RenderSettings::default()).stdout;
            assert!(
                rendered.contains(&nothing.reason()),
                "{format:?}: {rendered}"
            );
        }
    }

    /// Every format shows every finding with its own message, and none says "N findings"
    /// where the messages are there.
    #[test]
    fn every_format_shows_every_finding_and_no_bare_count() {
        let report = sample_report();
        let settings = RenderSettings::default();
        for &format in ReportFormat::all() {
            let text = render(&report, format, &settings).stdout;
            for fire in &report.fires {
                for finding in &fire.findings {
                    assert!(
                        text.contains(&finding.message.replace('"', "&quot;"))
                            || text.contains(&finding.message)
                            || text.contains(&finding.message.replace('"', "\\\"")),
                        "{format:?} lacks {:?}",
                        finding.message
                    );
                }
            }
            assert!(!text.contains("failed with 4 findings"), "{format:?}");
        }
    }

    #[test]
    fn a_zero_line_is_not_a_position() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![Finding {
            line: Some(0),
            column: Some(4),
            ..Finding::at_file("a.md", "rule", "m")
        }];
        let text = render_github_annotations(&report, None);
        assert!(
            text.starts_with("::warning file=a.md,title=claim-sources::m (rule)"),
            "{text}"
        );
        let sarif: Value =
            serde_json::from_str(&render_sarif(&report, &RenderSettings::default(), "")).unwrap();
        let location = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
        assert_eq!(location["region"], json!({"startLine": 1}));
    }
}
