//! The sarif format: SARIF 2.1.0 logs for code scanning, valid against the OASIS schema
//! (checked in the tests against the vendored copy under `tests/fixtures/sarif/`) and accepted
//! by GitHub code scanning (checked in `tests/it/reports.rs` with Microsoft's validator and
//! its GitHub rules). One writer for both kinds of report: the log, the run's tool and its rules,
//! the results and their locations are written here once; the compile's log
//! ([`render_compile_sarif`]: its diagnostics, and its drift under `--check`) and the gate
//! report's ([`render_sarif`]) differ only in what they put in them.
//!
//! What GitHub needs, and where it is made:
//! - one rule per rule id that occurs (a diagnostic code, a sensor) with a `name` of its own,
//!   `shortDescription`, `fullDescription`, `help` (text and Markdown) and, for a sensor, a
//!   `helpUri` (its manifest at the commit, only as an `https://` link inside GitHub Actions);
//! - a `region` on every result (line 1 when no line is known);
//! - `partialFingerprints` that stay the same across runs and when lines move: what the problem
//!   is and where (the rule, the repository-relative file, the message), never the line;
//! - URIs relative to the repository root (`%SRCROOT%`, described in `originalUriBaseIds`);
//! - `level` from the problem: an error, or a blocking sensor's, is `error`, the rest `warning`.

use std::collections::BTreeMap;

use camino::Utf8Path;

use crate::compile::Drift;
use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::file_uri::relative_uri_reference;
use crate::report::counts::CountsDocument;
use crate::report::finding_identity::short_hash;
use crate::report::gate_problems::{gate_problems, repository_file};
use crate::report::messages::{summary_line, with_detail_path};
use crate::report::problem::{Origin, Problem, Region};
use crate::report::sarif_log::{
    ArtifactLocation, AutomationDetails, DeadBindingProperties, Driver, FireProperties, Invocation,
    Location, Log, NeverFiredProperties, Notification, OriginalUriBaseIds, PhysicalLocation,
    ResultProperties, Rule, RuleHelp, RuleProperties, RuleReference, Run, RunProperties,
    SarifResult, Text, Tool, UriBase,
};
use crate::report::source::SourceLookup;
use crate::runtime::gate::report::{
    GateFire, GateReport, NEVER_FIRED, Outcome, RenderSettings, Severity,
};

/// The `$schema` of the SARIF log, as GitHub code scanning and most viewers expect it.
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub const SARIF_VERSION: &str = "2.1.0";

/// The base id every location is relative to: the repository root.
pub const SRCROOT: &str = "%SRCROOT%";

/// What the AI-DLC sensor system this engine implements is (the driver's `informationUri`).
pub const INFORMATION_URI: &str = "https://github.com/awslabs/aidlc-workflows";

/// The name of the one partial fingerprint each result of the gate report carries.
pub const FINGERPRINT_KEY: &str = "aidlcFinding/v1";

/// The name of the one partial fingerprint each result of the compile's log carries.
pub const DIAGNOSTIC_FINGERPRINT_KEY: &str = "aidlcDiagnostic/v1";

// --- The log, whoever reports ------------------------------------------------------------------

/// The log of one run.
fn log(run: Run<'_>) -> Log<'_> {
    Log {
        schema: SARIF_SCHEMA_URI,
        version: SARIF_VERSION,
        runs: [run],
    }
}

/// The run's `tool`: aidlc, its version, and the rules.
fn tool(tool_version: &str, rules: Vec<Rule>) -> Tool {
    Tool {
        driver: Driver {
            name: "aidlc",
            version: tool_version.to_owned(),
            semantic_version: tool_version.to_owned(),
            information_uri: INFORMATION_URI,
            rules,
        },
    }
}

/// `%SRCROOT%`, with the repository root's URI (`file://`, ending in `/`) when it is known.
fn original_uri_base_ids(root_uri: Option<&str>) -> OriginalUriBaseIds<'_> {
    OriginalUriBaseIds {
        source_root: UriBase {
            uri: root_uri,
            description: Text::new("The root of the repository that holds the project."),
        },
    }
}

/// The rule ids of a run, in order of first appearance, with each one's index.
#[derive(Debug, Default)]
struct RuleIds<'a> {
    keys_in_order: Vec<&'a str>,
    index: BTreeMap<&'a str, usize>,
}

impl<'a> RuleIds<'a> {
    /// The index of `id`, given the next one when it is new.
    fn index_of(&mut self, id: &'a str) -> usize {
        *self.index.entry(id).or_insert_with(|| {
            self.keys_in_order.push(id);
            self.keys_in_order.len() - 1
        })
    }
}

/// `claim-sources` → `ClaimSources`: each word's first letter in upper case, the separators
/// left out.
fn pascal_case(id: &str) -> String {
    let mut name = String::new();
    for word in id.split(|character: char| !character.is_ascii_alphanumeric()) {
        let mut characters = word.chars();
        if let Some(first) = characters.next() {
            name.push(first.to_ascii_uppercase());
            name.extend(characters);
        }
    }
    name
}

/// One result: its rule, level, text and location, its one partial fingerprint and, when
/// given, its property bag.
fn result<'a>(
    problem: &Problem<'a>,
    rule_index: usize,
    text: String,
    location: Location,
    fingerprint: (&'static str, String),
    properties: Option<ResultProperties<'a>>,
) -> SarifResult<'a> {
    SarifResult {
        rule_id: problem.rule,
        rule_index,
        level: problem.level.as_str(),
        message: Text::new(text),
        locations: [location],
        partial_fingerprints: BTreeMap::from([fingerprint]),
        properties,
    }
}

/// A physical location: the repository-relative file under `%SRCROOT%`, and a region that
/// always has a line (line 1 when none is known: GitHub places a result by its region).
fn location(repository_file: &Utf8Path, region: Option<Region>) -> Location {
    Location {
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: relative_uri_reference(repository_file),
                uri_base_id: SRCROOT,
            },
            region: region.unwrap_or(Region::FIRST_LINE),
        },
    }
}

// --- The compile's log -------------------------------------------------------------------------

/// The compile's diagnostics (and drift, under `--check`) as one SARIF 2.1.0 log: one rule per
/// diagnostic code that occurs, one result per diagnostic with its region, URIs relative to the
/// repository root (`repository_prefix` is the project folder in it).
pub fn render_compile_sarif(
    diagnostics: &[Diagnostic],
    drifts: &[Drift],
    sources: &dyn SourceLookup,
    repository_prefix: &Utf8Path,
    tool_version: &str,
) -> String {
    let mut rule_ids = RuleIds::default();
    let problems: Vec<Problem<'_>> = diagnostics
        .iter()
        .map(|diagnostic| {
            Problem::of_diagnostic(diagnostic)
                .with_region(sources)
                .with_plugin(sources)
        })
        .chain(drifts.iter().map(crate::report::drift::drift_problem))
        .collect();
    // The fingerprinted parts, in the problems' order: each diagnostic's, then each drift's.
    let diagnostic_fingerprints = problems.iter().take(diagnostics.len()).map(|problem| {
        let file = problem.file().map_or("", Utf8Path::as_str);
        format!("{}\0{file}\0{}", problem.rule, problem.message)
    });
    let drift_fingerprints = drifts
        .iter()
        .map(|drift| format!("{}\0{}", drift.file, drift.message));
    let results = problems
        .iter()
        .zip(diagnostic_fingerprints.chain(drift_fingerprints))
        .map(|(problem, parts)| {
            compile_result(
                problem,
                &mut rule_ids,
                repository_prefix,
                short_hash(&parts),
            )
        })
        .collect();
    let rules = rule_ids
        .keys_in_order
        .iter()
        .map(|id| compile_rule(id))
        .collect();
    let run = Run {
        tool: tool(tool_version, rules),
        original_uri_base_ids: original_uri_base_ids(None),
        automation_details: None,
        invocations: None,
        results,
        properties: None,
    };
    serde_json::to_string_pretty(&log(run)).expect("a SARIF log always serialises")
}

fn compile_result<'p>(
    problem: &'p Problem<'p>,
    rule_ids: &mut RuleIds<'p>,
    repository_prefix: &Utf8Path,
    fingerprint: String,
) -> SarifResult<'p> {
    // A project-wide diagnostic has no file: its URI is empty, the repository itself.
    let file = problem
        .file()
        .map(|file| repository_prefix.join(file))
        .unwrap_or_default();
    result(
        problem,
        rule_ids.index_of(problem.rule),
        problem.one_line_text(),
        location(&file, problem.region()),
        (DIAGNOSTIC_FINGERPRINT_KEY, fingerprint),
        problem
            .plugin
            .as_deref()
            .map(|plugin| ResultProperties::Plugin { plugin }),
    )
}

/// A diagnostic code's rule, pointing at its section of `docs/diagnostics.md`.
fn compile_rule(id: &str) -> Rule {
    Rule {
        id: id.to_owned(),
        name: pascal_case(id),
        short_description: Text::new(format!("aidlc compile: {id}")),
        full_description: Text::new(format!(
            "The aidlc compile diagnostic `{id}`; docs/diagnostics.md has a section for each code."
        )),
        help: RuleHelp {
            text: format!(
                "See the `{id}` section of docs/diagnostics.md: what it means, an example and how to fix it."
            ),
            markdown: format!(
                "See the `{id}` section of `docs/diagnostics.md`: what it means, an example and how to fix it."
            ),
        },
        help_uri: None,
        properties: None,
    }
}

// --- The gate report's log ---------------------------------------------------------------------

/// The gate report as a SARIF 2.1.0 log with one run (see the module documentation): one rule
/// per sensor that fired or never fired, one result per finding, one per not-evaluated fire and
/// one per blocking binding that never fired (on its manifest), and an invocation whose
/// `executionSuccessful` is false when anything was not evaluated or nothing was checked. Dead
/// bindings are tool configuration notifications. A sharded run gets its own
/// `automationDetails.id`, so that code scanning keeps the shards apart. `settings` gives the
/// repository root's URI and the base of each rule's `helpUri`.
pub fn render_sarif(report: &GateReport, settings: &RenderSettings, tool_version: &str) -> String {
    let problems = gate_problems(report);
    serde_json::to_string_pretty(&gate_log(report, &problems, settings, tool_version))
        .expect("a SARIF log always serialises")
}

fn gate_log<'a>(
    report: &'a GateReport,
    problems: &'a [Problem<'a>],
    settings: &'a RenderSettings,
    tool_version: &str,
) -> Log<'a> {
    let rule_ids = sarif_rule_ids(report);
    let results = problems
        .iter()
        .filter_map(|problem| sarif_gate_result(report, problem, &rule_ids))
        .collect();
    let rules = rule_ids
        .keys_in_order
        .iter()
        .map(|id| sarif_rule(report, id, settings.help_base_uri.as_deref()))
        .collect();
    log(Run {
        tool: tool(tool_version, rules),
        original_uri_base_ids: original_uri_base_ids(settings.repository_root_uri.as_deref()),
        automation_details: report.shard.map(|(index, count)| AutomationDetails {
            id: format!("aidlc-gate/shard-{index}-of-{count}/"),
        }),
        invocations: Some([sarif_invocation(report, problems, &rule_ids)]),
        results,
        properties: Some(RunProperties {
            intents: &report.intents,
            recorded: report.recorded,
            summary: summary_line(report),
            counts: CountsDocument::of(report),
            plan: &report.plan,
        }),
    })
}

/// The sensors of the report (fired, then never fired), in order of first appearance.
fn sarif_rule_ids(report: &GateReport) -> RuleIds<'_> {
    let mut ids = RuleIds::default();
    let fired = report.fires.iter().map(|fire| fire.sensor_id.as_str());
    let unfired = report
        .unfired_bindings
        .iter()
        .map(|unfired| unfired.sensor_id.as_str());
    for id in fired.chain(unfired) {
        ids.index_of(id);
    }
    ids
}

fn sarif_rule(report: &GateReport, sensor_id: &str, help_base_uri: Option<&str>) -> Rule {
    let info = report.sensors.get(sensor_id);
    let description = info
        .map(|info| info.description.trim())
        .filter(|text| !text.is_empty())
        .map_or_else(|| format!("The AI-DLC sensor {sensor_id}."), ensure_period);
    let manifest = info.map(|info| report.repository_path(Utf8Path::new(&info.manifest_path)));
    let where_defined = manifest.as_ref().map_or_else(
        || "Its manifest is in the harness folder's sensors/.".to_owned(),
        |path| format!("Its manifest is {path}."),
    );
    let help_text = format!(
        "{description} Each result names what the sensor found and how to fix it; a blocking sensor's findings fail the gate. {where_defined}"
    );
    let help_markdown = format!(
        "**{sensor_id}**: {description}\n\nEach result names what the sensor found and how to fix it; a **blocking** sensor's findings fail the gate, an advisory one's are warnings.\n\n{}",
        manifest.as_ref().map_or_else(
            || "Its manifest is in the harness folder's `sensors/`.".to_owned(),
            |path| format!("Its manifest is `{path}`.")
        )
    );
    // The base is a GitHub blob URL of the commit; any other than an `https://` URL gives no
    // `helpUri` (a `file://` link is dead on every other machine).
    let help_uri = help_base_uri
        .filter(|base| base.starts_with("https://"))
        .zip(manifest.as_ref())
        .map(|(base, path)| format!("{base}{}", relative_uri_reference(path)));
    Rule {
        id: sensor_id.to_owned(),
        name: format!("Sensor{}", pascal_case(sensor_id)),
        short_description: Text::new(format!("AI-DLC sensor {sensor_id}")),
        full_description: Text::new(description),
        help: RuleHelp {
            text: help_text,
            markdown: help_markdown,
        },
        help_uri,
        properties: Some(RuleProperties {
            tags: &["aidlc", "sensor"],
        }),
    }
}

fn ensure_period(text: &str) -> String {
    if text.ends_with(['.', '!', '?']) {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}

/// A problem of the gate report as a result: a finding, a failure that listed none, a
/// non-evaluation, and a blocking binding that never fired (an `error` on the manifest that
/// holds its glob, since no deliverable was read); the run-wide problems are notifications.
fn sarif_gate_result<'a>(
    report: &GateReport,
    problem: &'a Problem<'a>,
    rule_ids: &RuleIds<'_>,
) -> Option<SarifResult<'a>> {
    let (text, properties) = match problem.origin {
        Origin::Finding(fire, _) => (problem.one_line_text(), fire_properties(fire, problem.kind)),
        Origin::FailedWithoutFindings(fire) => (
            with_detail_path(problem.message.clone().into_owned(), fire),
            fire_properties(fire, None),
        ),
        Origin::NotEvaluated(fire) => (problem.message_then_help(), fire_properties(fire, None)),
        Origin::NeverFired(unfired) => (
            problem.message.clone().into_owned(),
            ResultProperties::NeverFired(NeverFiredProperties {
                stage: &unfired.stage,
                severity: Severity::Blocking.as_str(),
                result: Outcome::NotEvaluated.as_str(),
                note: NEVER_FIRED,
                intent: &unfired.intent,
                plugin: unfired.plugin.as_deref(),
            }),
        ),
        Origin::Diagnostic
        | Origin::Drift
        | Origin::NothingChecked
        | Origin::DeadBinding(_)
        | Origin::UnseenWrites(_) => {
            return None;
        }
    };
    Some(result(
        problem,
        rule_ids.index[problem.rule],
        text,
        location(&repository_file(report, problem), problem.region()),
        (
            FINGERPRINT_KEY,
            problem.fingerprint.clone().unwrap_or_default(),
        ),
        Some(properties),
    ))
}

/// The fire's identity in the result's property bag; absent values are left out.
fn fire_properties<'a>(fire: &'a GateFire, finding_rule: Option<&'a str>) -> ResultProperties<'a> {
    ResultProperties::Fire(FireProperties {
        stage: &fire.stage,
        severity: fire.severity.as_str(),
        result: fire.outcome().as_str(),
        deliverable: fire.deliverable.as_str(),
        plugin: fire.plugin.as_deref(),
        finding_rule,
        note: fire.not_evaluated_reason(),
        fire_id: fire.fire_id.as_deref(),
        detail_path: fire.detail_path.as_ref().map(|path| path.as_str()),
    })
}

fn sarif_invocation<'a>(
    report: &GateReport,
    problems: &'a [Problem<'a>],
    rule_ids: &RuleIds<'_>,
) -> Invocation<'a> {
    let mut invocation = Invocation {
        execution_successful: report.counts().not_evaluated == 0
            && report.nothing_checked().is_none(),
        tool_execution_notifications: Vec::new(),
        tool_configuration_notifications: Vec::new(),
    };
    for problem in problems {
        let notification = Notification {
            level: problem.level.as_str(),
            message: Text::new(problem.message.clone()),
            locations: None,
            associated_rule: None,
            properties: None,
        };
        // Only a problem of a sensor that fired or never fired has a rule in this run.
        let associated_rule = || {
            Some(RuleReference {
                id: problem.rule,
                index: rule_ids.index[problem.rule],
            })
        };
        match problem.origin {
            Origin::NotEvaluated(_) => invocation.tool_execution_notifications.push(Notification {
                locations: Some([location(&repository_file(report, problem), None)]),
                associated_rule: associated_rule(),
                ..notification
            }),
            Origin::NeverFired(_) => invocation.tool_execution_notifications.push(Notification {
                associated_rule: associated_rule(),
                ..notification
            }),
            Origin::NothingChecked => invocation.tool_execution_notifications.push(notification),
            Origin::UnseenWrites(_) => invocation.tool_execution_notifications.push(Notification {
                level: "note",
                ..notification
            }),
            Origin::DeadBinding(dead) => {
                invocation
                    .tool_configuration_notifications
                    .push(Notification {
                        properties: Some(DeadBindingProperties {
                            stage: &dead.stage,
                            sensor_id: &dead.sensor_id,
                            pattern: &dead.pattern,
                        }),
                        ..notification
                    });
            }
            Origin::Diagnostic
            | Origin::Drift
            | Origin::Finding(..)
            | Origin::FailedWithoutFindings(_) => {}
        }
    }
    invocation
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::report::test_reports::{RECORD, no_record_report, sample_report};

    /// The value [`render_sarif`] prints.
    fn sarif_document(report: &GateReport, settings: &RenderSettings, version: &str) -> Value {
        serde_json::from_str(&render_sarif(report, settings, version)).unwrap()
    }

    fn settings() -> RenderSettings {
        RenderSettings {
            repository_root_uri: Some("file:///home/runner/work/shop/shop/".to_owned()),
            help_base_uri: Some("https://github.com/example/shop/blob/0123abc/".to_owned()),
            ..RenderSettings::default()
        }
    }

    // --- SARIF

    fn sarif_validator() -> jsonschema::Validator {
        let schema_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sarif/sarif-schema-2.1.0.json"
        );
        let schema_text = std::fs::read_to_string(schema_path).expect("the vendored SARIF schema");
        let schema: Value = serde_json::from_str(&schema_text).expect("the schema is JSON");
        jsonschema::draft4::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the official SARIF 2.1.0 schema compiles")
    }

    fn assert_valid_sarif(validator: &jsonschema::Validator, text: &str) {
        let document: Value = serde_json::from_str(text).expect("SARIF is JSON");
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "invalid SARIF:\n{}\n{text}",
            errors.join("\n")
        );
    }

    #[test]
    fn sarif_validates_against_the_official_schema() {
        let validator = sarif_validator();
        assert_valid_sarif(
            &validator,
            &render_sarif(&sample_report(), &settings(), "0.1.0"),
        );
        assert_valid_sarif(
            &validator,
            &render_sarif(&no_record_report(), &settings(), "0.1.0"),
        );
        assert_valid_sarif(
            &validator,
            &render_sarif(&GateReport::default(), &settings(), "0.1.0"),
        );
    }

    /// The validator is real: it refuses what the schema forbids.
    #[test]
    fn the_schema_check_refuses_invalid_sarif() {
        let validator = sarif_validator();
        let mut document = sarif_document(&sample_report(), &settings(), "0.1.0");
        assert!(validator.is_valid(&document));
        document["runs"][0]["results"][0]["level"] = json!("fatal");
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), &settings(), "0.1.0");
        document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
            json!(0);
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), &settings(), "0.1.0");
        document["version"] = json!("2.0.0");
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), &settings(), "0.1.0");
        document["runs"][0]["tool"]["driver"]["unknownKey"] = json!(true);
        assert!(!validator.is_valid(&document));
    }

    #[test]
    fn sarif_matches_the_snapshot() {
        insta::assert_snapshot!(
            "sarif",
            render_sarif(&sample_report(), &settings(), "0.1.0")
        );
    }

    #[test]
    fn sarif_has_one_result_per_finding_and_per_non_evaluation() {
        let document = sarif_document(&sample_report(), &settings(), "1.2.3");
        assert_eq!(document["$schema"], json!(SARIF_SCHEMA_URI));
        assert_eq!(document["version"], json!("2.1.0"));
        let runs = document["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0];
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["name"], json!("aidlc"));
        assert_eq!(driver["version"], json!("1.2.3"));
        let rule_ids: Vec<&Value> = driver["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rule| &rule["id"])
            .collect();
        assert_eq!(
            rule_ids,
            [
                "claim-sources",
                "required-sections",
                "upstream-coverage",
                "linter",
                "type-check",
                "traceability",
                "api-contract"
            ]
        );
        for rule in driver["rules"].as_array().unwrap() {
            assert_ne!(rule["name"], rule["id"]);
            for key in ["shortDescription", "fullDescription", "help", "helpUri"] {
                assert!(rule.get(key).is_some(), "{key} in {rule}");
            }
            assert!(rule["help"]["markdown"].is_string());
        }
        assert_eq!(driver["rules"][0]["name"], json!("SensorClaimSources"));
        assert_eq!(
            driver["rules"][0]["fullDescription"]["text"],
            json!("Every claim cites a registered source.")
        );
        assert_eq!(
            driver["rules"][6]["helpUri"],
            json!(
                "https://github.com/example/shop/blob/0123abc/services/shop/.claude/sensors/aidlc-api-contract.md"
            )
        );
        assert_eq!(
            run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
            json!("file:///home/runner/work/shop/shop/")
        );
        let results = run["results"].as_array().unwrap();
        // 2 + 1 + 4 findings, 4 non-evaluated fires, 1 unfired binding.
        assert_eq!(results.len(), 12);
        for result in results {
            let rule_index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
            assert_eq!(driver["rules"][rule_index]["id"], result["ruleId"]);
            let location = &result["locations"][0]["physicalLocation"];
            assert_eq!(
                location["artifactLocation"]["uriBaseId"],
                json!("%SRCROOT%")
            );
            assert!(location["region"]["startLine"].as_u64().unwrap() >= 1);
            assert!(result["partialFingerprints"][FINGERPRINT_KEY].is_string());
        }
        let prefix = format!("services/shop/{RECORD}");
        assert_eq!(results[0]["level"], json!("error"));
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"],
            json!({
                "artifactLocation": {"uri": format!("{prefix}/inception/requirements-analysis/requirements.md"), "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 12, "startColumn": 3},
            })
        );
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 40})
        );
        assert_eq!(results[2]["level"], json!("warning"));
        assert_eq!(
            results[2]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 1}),
            "a finding without a line is placed on line 1"
        );
        for result in &results[3..7] {
            assert_eq!(result["ruleId"], json!("claim-sources"));
            assert!(
                result["message"]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("claim block has no source tag (untagged-claim)")
            );
        }
        let fingerprints: std::collections::BTreeSet<String> = results
            .iter()
            .map(|result| result["partialFingerprints"].to_string())
            .collect();
        assert_eq!(
            fingerprints.len(),
            results.len(),
            "every fingerprint differs"
        );
        for (result, (reason, level)) in results[7..11].iter().zip([
            ("tool-unavailable", "error"),
            ("sensor execution exceeded its budget", "warning"),
            ("script-error: exit-2", "warning"),
            ("artifact-changed", "error"),
        ]) {
            assert_eq!(result["level"], json!(level), "{reason}");
            assert_eq!(result["properties"]["note"], json!(reason));
            assert!(result["message"]["text"].as_str().unwrap().contains(reason));
        }
        assert_eq!(results[11]["level"], json!("error"));
        assert_eq!(results[11]["properties"]["note"], json!("never-fired"));
        assert_eq!(
            results[11]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            json!("services/shop/.claude/sensors/aidlc-api-contract.md")
        );
        let invocation = &run["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], json!(false));
        assert_eq!(
            invocation["toolExecutionNotifications"]
                .as_array()
                .unwrap()
                .len(),
            5
        );
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["associatedRule"],
            json!({"id": "linter", "index": 3})
        );
        assert_eq!(
            invocation["toolConfigurationNotifications"][0]["properties"],
            json!({"stage": "reverse-engineering", "sensorId": "required-sections", "pattern": "**/{aidlc-docs,intents}/**"})
        );
        assert_eq!(
            run["automationDetails"]["id"],
            json!("aidlc-gate/shard-2-of-4/")
        );
    }

    /// A finding's fingerprint does not move when its line does, and it is the same in every
    /// run.
    #[test]
    fn fingerprints_survive_line_shifts_and_reruns() {
        let fingerprint_of_first = |report: &GateReport| {
            sarif_document(report, &settings(), "0.1.0")["runs"][0]["results"][0]
                ["partialFingerprints"]
                .clone()
        };
        let report = sample_report();
        let mut shifted = sample_report();
        shifted.fires[1].findings[0].line = Some(30);
        assert_eq!(fingerprint_of_first(&report), fingerprint_of_first(&report));
        assert_eq!(
            fingerprint_of_first(&report),
            fingerprint_of_first(&shifted)
        );
        let mut changed = sample_report();
        changed.fires[1].findings[0].message = "another problem".to_owned();
        assert_ne!(
            fingerprint_of_first(&report),
            fingerprint_of_first(&changed)
        );
    }

    #[test]
    fn a_clean_run_is_a_successful_execution() {
        let mut report = sample_report();
        report.fires.truncate(1);
        report.unfired_bindings.clear();
        report.shard = None;
        let document = sarif_document(&report, &settings(), "0.1.0");
        let run = &document["runs"][0];
        assert_eq!(run["invocations"][0]["executionSuccessful"], json!(true));
        assert_eq!(run["results"], json!([]));
        assert_eq!(run.get("automationDetails"), None);
    }

    #[test]
    fn encoded_uris_are_valid_uri_references_in_a_valid_sarif_log() {
        // The encoding itself is `file_uri`'s test. Draft 4 (the schema's draft) does not define `uri-reference`, so check it with the
        // draft 7 definition; a raw space proves the check is live.
        let uri_reference = jsonschema::draft7::options()
            .should_validate_formats(true)
            .build(&json!({"format": "uri-reference"}))
            .unwrap();
        assert!(!uri_reference.is_valid(&json!("docs/my file.md")));
        for raw in [
            "docs/my file#1%.md",
            "c:/x.md",
            "naïve/a+b.md",
            "a/[b]/{c}.md",
        ] {
            let uri = relative_uri_reference(Utf8Path::new(raw));
            assert!(uri_reference.is_valid(&json!(uri)), "{raw} -> {uri}");
        }
        let validator = sarif_validator();
        let mut report = no_record_report();
        report.fires[0].deliverable = "docs/my file#1%.md".into();
        assert_valid_sarif(&validator, &render_sarif(&report, &settings(), "0.1.0"));
    }
}
