//! The junit format: `JUnit` XML for the test dashboards of GitLab, Jenkins and Azure DevOps,
//! valid against the `JUnit` schema they read (the Jenkins xunit plugin's `junit-10.xsd`,
//! vendored under `tests/fixtures/junit/` and checked with `xmllint` in the tests).
//!
//! A test case is something that ran, or that was refused or left unevaluated; nothing else is.
//! One `testsuite` per stage that has such a case (in the order stages first appear in the
//! report), one `testcase` per sensor × file: a `failure` per finding of a failed blocking fire
//! (an advisory fire's findings are no failure: they are the case's `system-out` and the
//! suite's `properties`, `aidlc.advisory-findings` and one `aidlc.advisory-finding` each, so
//! that `failures` counts only what fails the gate and a dashboard does not mark the build
//! unstable for advice), an `error` for a fire that was not evaluated (with the reason and the
//! end of the worker's stderr), a `failure` for a blocking binding that never fired, and a
//! `skipped` for a deliverable refused because it is not a regular file.
//!
//! Bindings skipped for any other reason (no deliverable yet, no glob match, another shard, not
//! selected) did not run and are no test case: the last suite, `aidlc`, counts them by reason
//! in its `properties` (`aidlc.skipped` and `aidlc.skipped.<reason>`) and names them in its
//! `system-out`, after the run's summary (the denominator, D4). That suite holds no test case
//! unless nothing was checked: then one `error` case says so, so that an empty run is never
//! green.
//!
//! The XML is written here rather than by `quick-junit`: that crate writes `skipped` on
//! `testsuites`, its own attribute order and four-space indents, and escapes neither line
//! breaks in attributes nor characters XML 1.0 cannot hold, so it cannot give these bytes.

use std::fmt::Write as _;
use std::time::Duration;

use crate::leaves::english::counted;
use crate::report::counts::{count_in_order, entry_in_order, stage_counts};
use crate::report::gate_problems::{
    NOTHING_CHECKED_RULE, gate_problems, repository_file, split_by_fire,
};
use crate::report::messages::{blocking_line, closing_lines, scope_line, summary_line};
use crate::report::problem::{Origin, Problem, Region};
use crate::runtime::gate::report::{
    GateFire, GateReport, GateSkip, Severity, SkipReason, UnfiredBinding, skip_reason_key,
};

/// The name of the last suite, which holds the run's summary and its skipped bindings.
const SUMMARY_SUITE: &str = "aidlc";

/// One test case before it is written: its name, class name, time and body.
#[derive(Default)]
struct Case {
    name: String,
    classname: String,
    time: Duration,
    body: String,
    failed: bool,
    errored: bool,
    skipped: bool,
    /// Each advisory finding, in one line, for the suite's properties.
    advisory_findings: Vec<String>,
}

/// The property that counts a suite's advisory findings, and the one each of them gets.
const ADVISORY_COUNT_PROPERTY: &str = "aidlc.advisory-findings";
const ADVISORY_FINDING_PROPERTY: &str = "aidlc.advisory-finding";
/// The suite property naming the plugin of a plugin stage's suite (D50).
const PLUGIN_PROPERTY: &str = "aidlc.plugin";
/// The summary suite's count of skipped bindings; `aidlc.skipped.<reason>` counts each reason.
const SKIPPED_PROPERTY: &str = "aidlc.skipped";

/// An advisory fire's findings: the case's `system-out`, saying they do not fail the gate (no
/// `failure`, so that a dashboard does not mark the build unstable for them).
fn push_advisory_output(body: &mut String, texts: &[String], detail: &str) {
    let mut output = format!(
        "advisory: {}; an advisory sensor's findings do not fail the gate",
        counted(texts.len(), "finding")
    );
    for text in texts {
        let _ = write!(output, "\n\n{text}");
    }
    if !detail.is_empty() {
        let _ = write!(output, "\n\n{detail}");
    }
    let _ = writeln!(
        body,
        "      <system-out>{}</system-out>",
        self::text(&output)
    );
}

/// The whole report as one `JUnit` XML document (no trailing newline). `strict` is
/// `--strict`: advisory findings fail the run too, so they are failures like blocking ones.
pub fn render_junit(report: &GateReport, strict: bool) -> String {
    // Every case's stage is one of these, so `entry_in_order` only finds.
    let mut suites: Vec<(&str, Vec<Case>)> = stage_counts(report)
        .into_iter()
        .map(|(stage, _)| (stage, Vec::new()))
        .collect();
    let problems = gate_problems(report);
    let (by_fire, rest) = split_by_fire(report, &problems);
    for (fire, of_fire) in by_fire {
        entry_in_order(&mut suites, &fire.stage).push(fire_case(report, fire, of_fire, strict));
    }
    for problem in rest {
        if let Origin::NeverFired(unfired) = problem.origin {
            entry_in_order(&mut suites, &unfired.stage).push(unfired_case(problem, unfired));
        }
    }
    for skip in report.skips.iter().filter(|skip| is_refusal(skip)) {
        entry_in_order(&mut suites, &skip.stage).push(refused_case(skip));
    }
    suites.retain(|(_, cases)| !cases.is_empty());
    let summary = summary_suite(report, rest);
    let all: Vec<&Case> = suites
        .iter()
        .flat_map(|(_, cases)| cases)
        .chain(&summary.cases)
        .collect();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"aidlc gate check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
        all.len(),
        all.iter().filter(|case| case.failed).count(),
        all.iter().filter(|case| case.errored).count(),
        seconds(report.duration),
    );
    for (name, cases) in &suites {
        let plugin = report
            .fires
            .iter()
            .find(|fire| fire.stage == *name)
            .and_then(|fire| fire.plugin.as_deref());
        let time = cases.iter().map(|case| case.time).sum();
        let properties = stage_properties(plugin, cases);
        write_suite(&mut xml, name, time, &properties, cases, None);
    }
    write_suite(
        &mut xml,
        SUMMARY_SUITE,
        report.duration,
        &summary.properties,
        &summary.cases,
        Some(&summary.output),
    );
    xml.push_str("</testsuites>");
    xml
}

/// One `testsuite` element: its counts (from its cases), its `properties` (none: no element),
/// its cases and, when given, its `system-out`.
fn write_suite(
    xml: &mut String,
    name: &str,
    time: Duration,
    properties: &[(String, String)],
    cases: &[Case],
    output: Option<&str>,
) {
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        attribute(name),
        cases.len(),
        cases.iter().filter(|case| case.failed).count(),
        cases.iter().filter(|case| case.errored).count(),
        cases.iter().filter(|case| case.skipped).count(),
        seconds(time),
    );
    if !properties.is_empty() {
        xml.push_str("    <properties>\n");
        for (name, value) in properties {
            let _ = writeln!(
                xml,
                "      <property name=\"{}\" value=\"{}\"/>",
                attribute(name),
                attribute(value)
            );
        }
        xml.push_str("    </properties>\n");
    }
    write_cases(xml, cases);
    if let Some(output) = output {
        let _ = writeln!(xml, "    <system-out>{}</system-out>", text(output));
    }
    xml.push_str("  </testsuite>\n");
}

/// A stage suite's properties: the plugin of a plugin stage, then the advisory findings'
/// count and each of them.
fn stage_properties(plugin: Option<&str>, cases: &[Case]) -> Vec<(String, String)> {
    let advisory: Vec<&String> = cases
        .iter()
        .flat_map(|case| &case.advisory_findings)
        .collect();
    let mut properties: Vec<(String, String)> = plugin
        .map(|plugin| (PLUGIN_PROPERTY.to_owned(), plugin.to_owned()))
        .into_iter()
        .collect();
    if !advisory.is_empty() {
        properties.push((
            ADVISORY_COUNT_PROPERTY.to_owned(),
            advisory.len().to_string(),
        ));
        properties.extend(
            advisory
                .into_iter()
                .map(|finding| (ADVISORY_FINDING_PROPERTY.to_owned(), finding.clone())),
        );
    }
    properties
}

/// Each case's `testcase` element, empty when the case has no body.
fn write_cases(xml: &mut String, cases: &[Case]) {
    for case in cases {
        let _ = write!(
            xml,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
            attribute(&case.name),
            attribute(&case.classname),
            seconds(case.time),
        );
        if case.body.is_empty() {
            xml.push_str("/>\n");
        } else {
            let _ = write!(xml, ">\n{}    </testcase>\n", case.body);
        }
    }
}

/// A fire's case: its problems (all of them this fire's, in the report's order) are its
/// failures, its advisory output or its error.
fn fire_case(report: &GateReport, fire: &GateFire, problems: &[Problem<'_>], strict: bool) -> Case {
    let mut case = Case {
        name: format!("{} on {}", fire.sensor_id, fire.deliverable),
        classname: format!("aidlc.{}.{}", fire.stage, fire.sensor_id),
        time: fire.duration,
        ..Case::default()
    };
    let severity = fire.severity.as_str();
    // What fails the run is a failure; an advisory finding fails it only under `--strict`.
    let blocking = fire.severity == Severity::Blocking || strict;
    let mut advisory_texts = Vec::new();
    for problem in problems {
        match problem.origin {
            Origin::NotEvaluated(_) => {
                case.errored = true;
                case.body.push_str(&element(
                    "error",
                    &problem.message,
                    "not-evaluated",
                    problem.help.as_deref().unwrap_or_default(),
                ));
            }
            Origin::FailedWithoutFindings(_) | Origin::Finding(..) => {
                case.failed = blocking;
                let place = place(report, problem);
                let message = problem.message_and_kind();
                // A failure that listed no finding is its message alone; a finding adds its
                // place and help.
                let mut text = match problem.origin {
                    Origin::Finding(..) => format!("{place}: {message}"),
                    _ => message.clone(),
                };
                if let (Origin::Finding(..), Some(help)) = (problem.origin, &problem.help) {
                    let _ = write!(text, "\nhelp: {help}");
                }
                if !blocking {
                    case.advisory_findings.push(format!("{place}: {message}"));
                    advisory_texts.push(text);
                    continue;
                }
                let detail = detail_text(fire);
                let text = match problem.origin {
                    Origin::Finding(..) if !detail.is_empty() => format!("{text}\n{detail}"),
                    Origin::Finding(..) => text,
                    _ => detail,
                };
                case.body
                    .push_str(&element("failure", &message, severity, &text));
            }
            Origin::Diagnostic
            | Origin::Drift
            | Origin::NeverFired(_)
            | Origin::NothingChecked
            | Origin::DeadBinding(_)
            | Origin::UnseenWrites(_) => {}
        }
    }
    if !advisory_texts.is_empty() {
        push_advisory_output(&mut case.body, &advisory_texts, &detail_text(fire));
    }
    case
}

/// `file:line:column` (repository-relative), as far as the problem knows it.
fn place(report: &GateReport, problem: &Problem<'_>) -> String {
    let file = repository_file(report, problem);
    match problem.region() {
        Some(Region {
            line,
            column: Some(column),
            ..
        }) => format!("{file}:{line}:{column}"),
        Some(region) => format!("{file}:{}", region.line),
        None => file.into_string(),
    }
}

/// `details in P`, or that they were not recorded.
fn detail_text(fire: &GateFire) -> String {
    match (&fire.detail_path, &fire.fire_id) {
        (Some(detail_path), _) => format!("details in {detail_path}"),
        (None, None) => "details not recorded (--no-record)".to_owned(),
        (None, Some(_)) => String::new(),
    }
}

/// A blocking binding that never fired fails the gate: a `failure`, like a blocking finding.
fn unfired_case(problem: &Problem<'_>, unfired: &UnfiredBinding) -> Case {
    Case {
        name: format!("{} (never fired)", unfired.sensor_id),
        classname: format!("aidlc.{}.{}", unfired.stage, unfired.sensor_id),
        body: element(
            "failure",
            &problem.message,
            "never-fired",
            &format!("its glob is set in {}", unfired.manifest_path),
        ),
        failed: true,
        ..Case::default()
    }
}

/// Whether a skip refused a file that is there (a test case of its own) rather than left a
/// binding with nothing to run on (counted in the summary suite).
fn is_refusal(skip: &GateSkip) -> bool {
    skip.reason == SkipReason::NotARegularFile
}

fn refused_case(skip: &GateSkip) -> Case {
    let target = skip
        .deliverable
        .as_ref()
        .map_or_else(|| "the stage".to_owned(), ToString::to_string);
    Case {
        name: format!("{} on {target}", skip.sensor_id),
        classname: format!("aidlc.{}.{}", skip.stage, skip.sensor_id),
        body: format!(
            "      <skipped message=\"{}\"/>\n",
            attribute(skip.reason.as_str())
        ),
        skipped: true,
        ..Case::default()
    }
}

/// The last suite: the run's summary and its skipped bindings, and a test case only when
/// nothing was checked.
struct SummarySuite {
    /// `aidlc.skipped`, then each skip reason's count in the report's order.
    properties: Vec<(String, String)>,
    output: String,
    cases: Vec<Case>,
}

/// The scope, the counts, the blocking verdict, the dead bindings, the shard and the skipped
/// bindings (one line per reason and stage) as the summary suite's output; an `error` case when
/// nothing was checked.
fn summary_suite(report: &GateReport, run_problems: &[Problem<'_>]) -> SummarySuite {
    let mut lines = vec![scope_line(report), summary_line(report)];
    lines.extend(blocking_line(&report.counts()));
    lines.extend(
        run_problems
            .iter()
            .filter(|problem| {
                matches!(
                    problem.origin,
                    Origin::DeadBinding(_) | Origin::UnseenWrites(_)
                )
            })
            .map(|notice| notice.message.clone().into_owned()),
    );
    lines.extend(closing_lines(report));
    let skipped: Vec<&GateSkip> = report
        .skips
        .iter()
        .filter(|skip| !is_refusal(skip))
        .collect();
    lines.extend(skipped_lines(&skipped));
    let properties = std::iter::once((SKIPPED_PROPERTY.to_owned(), skipped.len().to_string()))
        .chain(
            count_in_order(skipped.iter().map(|skip| skip_reason_key(&skip.reason)))
                .into_iter()
                .map(|(key, count)| (format!("{SKIPPED_PROPERTY}.{key}"), count.to_string())),
        )
        .collect();
    let cases = run_problems
        .iter()
        .filter(|problem| problem.origin == Origin::NothingChecked)
        .map(|nothing| Case {
            name: "nothing was checked".to_owned(),
            classname: SUMMARY_SUITE.to_owned(),
            body: element(
                "error",
                &nothing.message,
                NOTHING_CHECKED_RULE,
                nothing.help.as_deref().unwrap_or_default(),
            ),
            errored: true,
            ..Case::default()
        })
        .collect();
    SummarySuite {
        properties,
        output: lines.join("\n"),
        cases,
    }
}

/// A stage and the sensors skipped there, in the report's order.
type StageSensors<'a> = (&'a str, Vec<&'a str>);

/// `skipped (no deliverable): stage a: s1, s2; stage b: s3`, one line per reason, with each
/// stage's sensors in the report's order.
fn skipped_lines(skipped: &[&GateSkip]) -> Vec<String> {
    let mut by_reason: Vec<(&str, Vec<StageSensors<'_>>)> = Vec::new();
    for skip in skipped {
        let stages = entry_in_order(&mut by_reason, skip.reason.as_str());
        let sensors = entry_in_order(stages, skip.stage.as_str());
        if !sensors.contains(&skip.sensor_id.as_str()) {
            sensors.push(&skip.sensor_id);
        }
    }
    by_reason
        .into_iter()
        .map(|(reason, stages)| {
            let stages: Vec<String> = stages
                .into_iter()
                .map(|(stage, sensors)| format!("{stage}: {}", sensors.join(", ")))
                .collect();
            format!("skipped ({reason}): {}", stages.join("; "))
        })
        .collect()
}

/// `<element message="…" type="…">content</element>`, one line of a case's body.
fn element(element: &str, message: &str, kind: &str, content: &str) -> String {
    format!(
        "      <{element} message=\"{}\" type=\"{}\">{}</{element}>\n",
        attribute(message),
        attribute(kind),
        text(content),
    )
}

/// Seconds with millisecond precision, as the schema's time pattern allows (`0.012`).
fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// Text content: `&`, `<` and `>` escaped, characters XML 1.0 cannot hold replaced.
fn text(value: &str) -> String {
    escape(value, false)
}

/// An attribute value: as [`text`], plus quotes, and line breaks and tabs kept as character
/// references (an attribute's white space is otherwise normalised away).
fn attribute(value: &str) -> String {
    escape(value, true)
}

fn escape(value: &str, in_attribute: bool) -> String {
    let mut escaped = String::with_capacity(value.len());
    for character in value.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' if in_attribute => escaped.push_str("&quot;"),
            '\n' if in_attribute => escaped.push_str("&#10;"),
            '\r' if in_attribute => escaped.push_str("&#13;"),
            '\t' if in_attribute => escaped.push_str("&#9;"),
            '\n' | '\r' | '\t' => escaped.push(character),
            character if is_xml_char(character) => escaped.push(character),
            _ => escaped.push('\u{fffd}'),
        }
    }
    escaped
}

/// XML 1.0's `Char` production (apart from tab and line breaks, handled by the caller).
fn is_xml_char(character: char) -> bool {
    matches!(character, '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_reports::{no_record_report, sample_report};

    #[test]
    fn junit_matches_the_snapshot() {
        insta::assert_snapshot!("junit", render_junit(&sample_report(), false));
    }

    #[test]
    fn one_suite_per_stage_and_a_case_per_sensor_and_file() {
        let xml = render_junit(&sample_report(), false);
        assert!(xml.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"aidlc gate check\""
        ));
        assert!(xml.contains("<testsuite name=\"requirements-analysis\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\""), "{xml}");
        assert!(xml.contains("<testsuite name=\"application-design\""));
        assert!(
            !xml.contains("<testsuite name=\"units-generation\""),
            "{xml}"
        );
        assert!(xml.contains("<testcase name=\"required-sections on aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md\" classname=\"aidlc.requirements-analysis.required-sections\""));
        assert!(xml.contains("<failure message=\"missing section &quot;## Risks&quot; (missing-heading)\" type=\"blocking\">services/shop/aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md:12:3: missing section \"## Risks\" (missing-heading)\nhelp: add a `## Risks` section\ndetails in "), "{xml}");
        assert!(xml.contains("<error message=\"linter was not evaluated on stage application-design: tool-unavailable; a blocking sensor that was not evaluated does not pass the gate\" type=\"not-evaluated\">"));
        assert!(xml.contains("type=\"not-evaluated\">the worker's stderr ended with:\nloading rules\nerror: cannot parse rules.md"));
        assert!(xml.contains("<testcase name=\"api-contract (never fired)\""));
        assert!(xml.contains("type=\"never-fired\""));
        assert!(!xml.contains("name=\"summary\""), "{xml}");
        assert!(!xml.contains("<skipped message=\"another shard\""), "{xml}");
        assert!(
            xml.contains("skipped (no deliverable): units-generation: required-sections"),
            "{xml}"
        );
        assert!(xml.contains("<property name=\"aidlc.skipped.other-shard\" value=\"1\"/>"));
        assert!(xml.contains("<testsuite name=\"aidlc\""));
        assert!(
            xml.contains("blocking sensors: 1 failed, 3 not evaluated; the gate does not pass")
        );
        assert!(!xml.ends_with('\n'));
    }

    /// Advisory findings do not fail the gate, so they are no `failure`: the suite's properties
    /// and the case's `system-out` carry them; only the blocking failure counts.
    #[test]
    fn advisory_findings_are_output_and_properties_not_failures() {
        let xml = render_junit(&sample_report(), false);
        assert!(
            xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"aidlc gate check\" tests=\"10\" failures=\"2\" errors=\"4\""),
            "{xml}"
        );
        assert!(!xml.contains("type=\"advisory\""), "{xml}");
        assert!(
            xml.contains("<testsuite name=\"application-design\" tests=\"7\" failures=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("<property name=\"aidlc.advisory-findings\" value=\"4\"/>"),
            "{xml}"
        );
        assert!(xml.contains("<property name=\"aidlc.advisory-finding\" value=\"services/shop/aidlc/spaces/default/intents/260101-login/construction/application-design/components.md:3: claim block has no source tag (untagged-claim)\"/>"), "{xml}");
        assert!(xml.contains("<system-out>advisory: 4 findings; an advisory sensor's findings do not fail the gate\n\nservices/shop/aidlc/spaces/default/intents/260101-login/construction/application-design/components.md:3: claim block has no source tag (untagged-claim)\nhelp: end the claim with a source tag\n\n"), "{xml}");
        let no_record = render_junit(&no_record_report(), false);
        assert!(no_record.contains("failures=\"0\""), "{no_record}");
        assert!(
            no_record.contains("details not recorded (--no-record)</system-out>"),
            "{no_record}"
        );
    }

    #[test]
    fn text_that_xml_cannot_hold_is_escaped_or_replaced() {
        assert_eq!(attribute("a\"b<c>&d\ne"), "a&quot;b&lt;c&gt;&amp;d&#10;e");
        assert_eq!(text("x\u{1}y\u{fffe}z\n"), "x\u{fffd}y\u{fffd}z\n");
    }

    #[test]
    fn a_no_record_failure_says_its_details_were_not_recorded() {
        let xml = render_junit(&no_record_report(), false);
        assert!(xml.contains("details not recorded (--no-record)"), "{xml}");
    }
}
