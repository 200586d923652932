//! The sarif format: a SARIF 2.1.0 log for code scanning, valid against the OASIS schema
//! (checked in the tests against the vendored copy under `tests/fixtures/sarif/`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use camino::Utf8Path;
use serde_json::{Map, Value, json};

use crate::gate::render::counts::counts_value;
use crate::gate::render::messages::{
    dead_binding_message, failed_without_findings_message, finding_message, known_position,
    not_evaluated_message, nothing_checked_message, summary_line, unfired_message,
    with_detail_path,
};
use crate::gate::report::{
    DeadBinding, GateFire, GateReport, NEVER_FIRED, Outcome, UnfiredBinding,
};
use crate::syntax::manifest::Severity;

/// The `$schema` of the SARIF log, as GitHub code scanning and most viewers expect it.
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub const SARIF_VERSION: &str = "2.1.0";

/// A SARIF 2.1.0 log with one run: one rule per sensor id that fired or never fired, one result
/// per finding (a failed fire without structured findings gives one result on its
/// deliverable), one `warning` result per not-evaluated fire, one `error` result per blocking
/// binding that never fired (on its manifest), and an invocation whose `executionSuccessful`
/// is false when anything was not evaluated or nothing was checked. Dead bindings are tool configuration notifications.
/// A sharded run gets its own `automationDetails.id`, so that code scanning keeps the shards
/// apart.
pub fn render_sarif(report: &GateReport, tool_version: &str) -> String {
    serde_json::to_string_pretty(&sarif_document(report, tool_version))
        .expect("a JSON value always serialises")
}

/// The value [`render_sarif`] prints.
pub fn sarif_document(report: &GateReport, tool_version: &str) -> Value {
    let rule_ids = sarif_rule_ids(report);
    let results: Vec<Value> = report
        .fires
        .iter()
        .flat_map(|fire| sarif_fire_results(fire, &rule_ids))
        .chain(
            report
                .unfired_bindings
                .iter()
                .map(|unfired| sarif_unfired_result(unfired, &rule_ids)),
        )
        .collect();
    let mut run = Map::new();
    run.insert(
        "tool".to_owned(),
        json!({"driver": {
            "name": "aidlc",
            "version": tool_version,
            "rules": rule_ids.keys_in_order.iter().map(|id| sarif_rule(id)).collect::<Vec<_>>(),
        }}),
    );
    if let Some((index, count)) = report.shard {
        run.insert(
            "automationDetails".to_owned(),
            json!({"id": format!("aidlc-gate/shard-{index}-of-{count}/")}),
        );
    }
    run.insert(
        "invocations".to_owned(),
        json!([sarif_invocation(report, &rule_ids)]),
    );
    run.insert("results".to_owned(), Value::Array(results));
    run.insert("properties".to_owned(), sarif_run_properties(report));
    json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [Value::Object(run)],
    })
}

/// The rule ids of a run, in order of first appearance, with each one's index.
struct SarifRuleIds<'report> {
    keys_in_order: Vec<&'report str>,
    index: BTreeMap<&'report str, usize>,
}

fn sarif_rule_ids(report: &GateReport) -> SarifRuleIds<'_> {
    let mut ids = SarifRuleIds {
        keys_in_order: Vec::new(),
        index: BTreeMap::new(),
    };
    let fired = report.fires.iter().map(|fire| fire.sensor_id.as_str());
    let unfired = report
        .unfired_bindings
        .iter()
        .map(|unfired| unfired.sensor_id.as_str());
    for id in fired.chain(unfired) {
        if !ids.index.contains_key(id) {
            ids.index.insert(id, ids.keys_in_order.len());
            ids.keys_in_order.push(id);
        }
    }
    ids
}

/// A blocking binding that never fired: an `error` result anchored to the manifest that holds
/// its glob, since no deliverable was read.
fn sarif_unfired_result(unfired: &UnfiredBinding, rule_ids: &SarifRuleIds<'_>) -> Value {
    json!({
        "ruleId": unfired.sensor_id,
        "ruleIndex": rule_ids.index[unfired.sensor_id.as_str()],
        "level": "error",
        "message": {"text": unfired_message(unfired)},
        "locations": [sarif_location(Utf8Path::new(&unfired.manifest_path), None, None)],
        "properties": {
            "stage": unfired.stage,
            "severity": Severity::Blocking.as_str(),
            "result": Outcome::NotEvaluated.as_str(),
            "note": NEVER_FIRED,
            "intent": unfired.intent,
        },
    })
}

fn sarif_rule(sensor_id: &str) -> Value {
    json!({
        "id": sensor_id,
        "name": sensor_id,
        "shortDescription": {"text": format!("AI-DLC sensor {sensor_id}")},
    })
}

fn sarif_fire_results(fire: &GateFire, rule_ids: &SarifRuleIds<'_>) -> Vec<Value> {
    let rule_index = rule_ids.index[fire.sensor_id.as_str()];
    let level = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![sarif_result(
            fire,
            rule_index,
            level,
            &with_detail_path(failed_without_findings_message(fire), fire),
            &sarif_location(&fire.deliverable, None, None),
            None,
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| {
                let (line, column) = known_position(finding);
                sarif_result(
                    fire,
                    rule_index,
                    level,
                    &finding_message(finding),
                    &sarif_location(&finding.file, line, column),
                    finding.rule.as_deref(),
                )
            })
            .collect(),
        Outcome::NotEvaluated => vec![sarif_result(
            fire,
            rule_index,
            "warning",
            &not_evaluated_message(fire),
            &sarif_location(&fire.deliverable, None, None),
            None,
        )],
    }
}

fn sarif_result(
    fire: &GateFire,
    rule_index: usize,
    level: &str,
    message: &str,
    location: &Value,
    finding_rule: Option<&str>,
) -> Value {
    json!({
        "ruleId": fire.sensor_id,
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": message},
        "locations": [location],
        "properties": sarif_fire_properties(fire, finding_rule),
    })
}

/// The fire's identity in the result's property bag; absent values are left out.
fn sarif_fire_properties(fire: &GateFire, finding_rule: Option<&str>) -> Value {
    let mut properties = Map::new();
    properties.insert("stage".to_owned(), json!(fire.stage));
    properties.insert("severity".to_owned(), json!(fire.severity.as_str()));
    properties.insert("result".to_owned(), json!(fire.outcome().as_str()));
    properties.insert("deliverable".to_owned(), json!(fire.deliverable.as_str()));
    if let Some(rule) = finding_rule {
        properties.insert("findingRule".to_owned(), json!(rule));
    }
    if let Some(reason) = fire.not_evaluated_reason() {
        properties.insert("note".to_owned(), json!(reason));
    }
    if let Some(fire_id) = &fire.fire_id {
        properties.insert("fireId".to_owned(), json!(fire_id));
    }
    if let Some(detail_path) = &fire.detail_path {
        properties.insert("detailPath".to_owned(), json!(detail_path.as_str()));
    }
    Value::Object(properties)
}

/// A physical location: the file as a relative URI, and a region only when a line is known.
fn sarif_location(file: &Utf8Path, line: Option<u64>, column: Option<u64>) -> Value {
    let mut physical = Map::new();
    physical.insert(
        "artifactLocation".to_owned(),
        json!({"uri": path_to_uri_reference(file)}),
    );
    if let Some(line) = line {
        let mut region = Map::new();
        region.insert("startLine".to_owned(), json!(line));
        if let Some(column) = column {
            region.insert("startColumn".to_owned(), json!(column));
        }
        physical.insert("region".to_owned(), Value::Object(region));
    }
    json!({"physicalLocation": Value::Object(physical)})
}

fn sarif_invocation(report: &GateReport, rule_ids: &SarifRuleIds<'_>) -> Value {
    let counts = report.counts();
    let nothing_checked = report.nothing_checked();
    let mut invocation = Map::new();
    invocation.insert(
        "executionSuccessful".to_owned(),
        json!(counts.not_evaluated == 0 && nothing_checked.is_none()),
    );
    let mut execution_notifications: Vec<Value> = report
        .fires
        .iter()
        .filter(|fire| fire.outcome() == Outcome::NotEvaluated)
        .map(|fire| sarif_not_evaluated_notification(fire, rule_ids))
        .collect();
    execution_notifications.extend(report.unfired_bindings.iter().map(|unfired| {
        json!({
            "level": "error",
            "message": {"text": unfired_message(unfired)},
            "associatedRule": {
                "id": unfired.sensor_id,
                "index": rule_ids.index[unfired.sensor_id.as_str()],
            },
        })
    }));
    if let Some(nothing) = &nothing_checked {
        execution_notifications.push(json!({
            "level": "warning",
            "message": {"text": nothing_checked_message(nothing)},
        }));
    }
    if !execution_notifications.is_empty() {
        invocation.insert(
            "toolExecutionNotifications".to_owned(),
            Value::Array(execution_notifications),
        );
    }
    let configuration_notifications: Vec<Value> = report
        .dead_bindings
        .iter()
        .map(sarif_dead_binding_notification)
        .collect();
    if !configuration_notifications.is_empty() {
        invocation.insert(
            "toolConfigurationNotifications".to_owned(),
            Value::Array(configuration_notifications),
        );
    }
    Value::Object(invocation)
}

/// A dead binding names its sensor in the property bag, not as a rule reference: the sensor
/// never fired, so it has no rule in this run.
fn sarif_dead_binding_notification(dead: &DeadBinding) -> Value {
    json!({
        "level": "warning",
        "message": {"text": dead_binding_message(dead)},
        "properties": {
            "stage": dead.stage,
            "sensorId": dead.sensor_id,
            "pattern": dead.pattern,
        },
    })
}

fn sarif_not_evaluated_notification(fire: &GateFire, rule_ids: &SarifRuleIds<'_>) -> Value {
    let level = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    json!({
        "level": level,
        "message": {"text": not_evaluated_message(fire)},
        "locations": [sarif_location(&fire.deliverable, None, None)],
        "associatedRule": {
            "id": fire.sensor_id,
            "index": rule_ids.index[fire.sensor_id.as_str()],
        },
    })
}

/// The denominator (D4) in the run's property bag.
fn sarif_run_properties(report: &GateReport) -> Value {
    json!({
        "intents": report.intents,
        "recorded": report.recorded,
        "summary": summary_line(report),
        "counts": counts_value(report),
    })
}

/// A project-relative path as a URI reference: `/` separators kept, every byte outside the
/// unreserved and sub-delimiter characters percent-encoded. `:` is encoded too, so that a first
/// segment like `c:` is never read as a scheme.
fn path_to_uri_reference(path: &Utf8Path) -> String {
    let mut uri = String::with_capacity(path.as_str().len());
    for byte in path.as_str().bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@/".contains(&byte);
        if keep {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::render::test_reports::{RECORD, no_record_report, sample_report};

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
        assert_valid_sarif(&validator, &render_sarif(&sample_report(), "0.1.0"));
        assert_valid_sarif(&validator, &render_sarif(&no_record_report(), "0.1.0"));
        assert_valid_sarif(&validator, &render_sarif(&GateReport::default(), "0.1.0"));
    }

    /// The validator is real: it refuses what the schema forbids.
    #[test]
    fn the_schema_check_refuses_invalid_sarif() {
        let validator = sarif_validator();
        let mut document = sarif_document(&sample_report(), "0.1.0");
        assert!(validator.is_valid(&document));
        document["runs"][0]["results"][0]["level"] = json!("fatal");
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), "0.1.0");
        document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
            json!(0);
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), "0.1.0");
        document["version"] = json!("2.0.0");
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), "0.1.0");
        document["runs"][0]["tool"]["driver"]["unknownKey"] = json!(true);
        assert!(!validator.is_valid(&document));
    }

    #[test]
    fn sarif_matches_the_snapshot() {
        insta::assert_snapshot!("sarif", render_sarif(&sample_report(), "0.1.0"));
    }

    #[test]
    fn sarif_has_one_result_per_finding_and_per_non_evaluation() {
        let document = sarif_document(&sample_report(), "1.2.3");
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
        let results = run["results"].as_array().unwrap();
        // 2 + 1 findings, 1 failure without findings, 4 non-evaluated fires, 1 unfired binding.
        assert_eq!(results.len(), 9);
        for result in results {
            let rule_index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
            assert_eq!(driver["rules"][rule_index]["id"], result["ruleId"]);
        }
        assert_eq!(results[0]["level"], json!("error"));
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"],
            json!({
                "artifactLocation": {"uri": format!("{RECORD}/inception/requirements-analysis/requirements.md")},
                "region": {"startLine": 12, "startColumn": 3},
            })
        );
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 40})
        );
        assert_eq!(results[2]["level"], json!("warning"));
        assert_eq!(
            results[2]["locations"][0]["physicalLocation"].get("region"),
            None
        );
        assert_eq!(results[3]["ruleId"], json!("claim-sources"));
        assert!(
            results[3]["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with("failed with 4 findings; details in ")
        );
        for (result, reason) in results[4..8].iter().zip([
            "tool-unavailable",
            "sensor execution exceeded its budget",
            "script-error: exit-2",
            "artifact-changed",
        ]) {
            assert_eq!(result["level"], json!("warning"));
            assert_eq!(result["properties"]["note"], json!(reason));
            assert!(result["message"]["text"].as_str().unwrap().contains(reason));
        }
        assert_eq!(results[8]["level"], json!("error"));
        assert_eq!(results[8]["properties"]["note"], json!("never-fired"));
        assert_eq!(
            results[8]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            json!(".claude/sensors/aidlc-api-contract.md")
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

    #[test]
    fn a_clean_run_is_a_successful_execution() {
        let mut report = sample_report();
        report.fires.truncate(1);
        report.unfired_bindings.clear();
        report.shard = None;
        let document = sarif_document(&report, "0.1.0");
        let run = &document["runs"][0];
        assert_eq!(run["invocations"][0]["executionSuccessful"], json!(true));
        assert_eq!(run["results"], json!([]));
        assert_eq!(run.get("automationDetails"), None);
    }

    #[test]
    fn uris_are_percent_encoded_relative_references() {
        assert_eq!(
            path_to_uri_reference(Utf8Path::new("docs/my file#1%.md")),
            "docs/my%20file%231%25.md"
        );
        assert_eq!(path_to_uri_reference(Utf8Path::new("c:/x.md")), "c%3A/x.md");
        assert_eq!(
            path_to_uri_reference(Utf8Path::new("naïve/a+b.md")),
            "na%C3%AFve/a+b.md"
        );
        // Draft 4 (the schema's draft) does not define `uri-reference`, so check it with the
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
            let uri = path_to_uri_reference(Utf8Path::new(raw));
            assert!(uri_reference.is_valid(&json!(uri)), "{raw} -> {uri}");
        }
        let validator = sarif_validator();
        let mut report = no_record_report();
        report.fires[0].deliverable = "docs/my file#1%.md".into();
        assert_valid_sarif(&validator, &render_sarif(&report, "0.1.0"));
    }
}
