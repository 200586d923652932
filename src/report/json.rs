//! The json format, for tools. Two documents, one per kind of report:
//!
//! - the compile prints one JSON object per line for each diagnostic ([`diagnostic_json_line`])
//!   and, under `--check`, each drift ([`drift_json_line`], `kind: "drift"`); `compile --watch`
//!   embeds the diagnostics' objects in its events ([`diagnostic_json_value`]);
//! - the gate report is one pretty-printed document with its keys in a fixed order, versioned by
//!   [`JSON_SCHEMA_VERSION`]: the plan it belongs to (so shards can be merged: its identity and
//!   size, the shard, the selection), the counts, every fire with its findings, every skip, dead
//!   binding and never-fired binding, and why nothing was checked. `gate::merge` reads it back,
//!   so it holds everything every other format shows.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::compile::Drift;
use crate::leaves::diagnostics::Diagnostic;
use crate::report::counts::CountsDocument;
use crate::report::drift::DRIFT_HELP;
use crate::report::json_schema as schema;
use crate::report::messages::duration_ms;
use crate::report::problem::Problem;
use crate::report::source::SourceLookup;
use crate::runtime::gate::report::{
    Budget, DeadBinding, Finding, GateFire, GateReport, GateSkip, JSON_SCHEMA_VERSION, NEVER_FIRED,
    Outcome, SensorInfo, SensorsOff, Severity, UnfiredBinding, UnfiredCause, UnseenWritesNotice,
};

/// One compile diagnostic as one JSON object (no trailing newline) with stable keys.
pub fn diagnostic_json_line(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> String {
    diagnostic_json_value(diagnostic, sources).to_string()
}

/// The object of [`diagnostic_json_line`], for embedding in a larger event: the code, the
/// severity, the message, the file, the start and end line and column (null when unknown), the
/// label, the help and the related places.
pub fn diagnostic_json_value(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> Value {
    let problem = Problem::of_diagnostic(diagnostic)
        .with_region(sources)
        .with_plugin(sources);
    serde_json::to_value(DiagnosticLine::of(&problem)).expect("a diagnostic always serialises")
}

/// A compile diagnostic's object. `plugin` follows the other keys, and only when the file
/// belongs to a plugin: the lines of a project without plugins are what they were.
#[derive(Debug, Serialize)]
struct DiagnosticLine<'a> {
    code: &'a str,
    severity: &'static str,
    message: &'a str,
    file: Option<&'a str>,
    line: Option<u64>,
    column: Option<u64>,
    end_line: Option<u64>,
    end_column: Option<u64>,
    label: Option<&'a str>,
    help: Option<&'a str>,
    related: Vec<RelatedLine<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct RelatedLine<'a> {
    file: &'a str,
    message: &'a str,
}

impl<'a> DiagnosticLine<'a> {
    fn of(problem: &'a Problem<'a>) -> Self {
        let region = problem.region();
        Self {
            code: problem.rule,
            severity: problem.level.as_str(),
            message: &problem.message,
            file: problem.file().map(camino::Utf8Path::as_str),
            line: region.map(|region| region.line),
            column: region.and_then(|region| region.column),
            end_line: region.and_then(|region| region.end_line),
            end_column: region.and_then(|region| region.end_column),
            label: problem.label,
            help: problem.help.as_deref(),
            related: problem
                .related
                .iter()
                .map(|related| RelatedLine {
                    file: related.file.as_str(),
                    message: &related.message,
                })
                .collect(),
            plugin: problem.plugin.as_deref(),
        }
    }
}

/// One JSON object per drift (no trailing newline), `kind: "drift"` beside the diagnostics'
/// objects.
pub fn drift_json_line(drift: &Drift) -> String {
    serde_json::to_string(&DriftLine {
        kind: "drift",
        severity: "error",
        file: drift.file.as_str(),
        output: &drift.output,
        stage: drift.stage.as_deref(),
        change: drift.change,
        message: &drift.message,
        help: DRIFT_HELP,
    })
    .expect("a drift always serialises")
}

#[derive(Debug, Serialize)]
struct DriftLine<'a> {
    kind: &'static str,
    severity: &'static str,
    file: &'a str,
    output: &'a str,
    stage: Option<&'a str>,
    change: &'static str,
    message: &'a str,
    help: &'static str,
}

// --- The gate report -------------------------------------------------------------------------

/// The gate report as one JSON document (pretty-printed, keys in a fixed order).
pub fn render_json(report: &GateReport) -> String {
    serde_json::to_string_pretty(&gate_document(report)).expect("the gate report always serialises")
}

fn gate_document(report: &GateReport) -> GateDocument<'_> {
    GateDocument {
        schema_version: JSON_SCHEMA_VERSION,
        tool: ToolDocument {
            name: "aidlc",
            version: env!("CARGO_PKG_VERSION"),
        },
        intents: &report.intents,
        plan: PlanDocument {
            id: &report.plan.id,
            size: report.plan.size as u64,
            fire_on: report.fire_on.name(),
            stages: &report.stages,
            bindings_selected: report.bindings_selected as u64,
            bindings_not_selected: report.bindings_not_selected as u64,
            sensors_off: report.sensors_off.as_ref().map(|off| match off {
                SensorsOff::Environment => SensorsOffDocument {
                    environment: Some(true),
                    state: None,
                },
                SensorsOff::State { intents } => SensorsOffDocument {
                    environment: None,
                    state: Some(intents),
                },
            }),
        },
        shard: report
            .shard
            .map(|(index, count)| ShardDocument { index, count }),
        project_path: report.project_path.as_str(),
        recorded: report.recorded,
        counts: CountsDocument::of(report),
        duration_ms: duration_ms(report.duration),
        sensors: &report.sensors,
        fires: report.fires.iter().map(fire_document).collect(),
        skips: &report.skips,
        dead_bindings: &report.dead_bindings,
        unfired_bindings: report
            .unfired_bindings
            .iter()
            .map(unfired_document)
            .collect(),
        nothing_checked: report
            .nothing_checked()
            .map(|nothing| NothingCheckedDocument {
                reason: nothing.reason(),
                help: nothing.help(),
            }),
        unseen_writes: report.unseen_writes.as_ref(),
    }
}

fn unfired_document(unfired: &UnfiredBinding) -> UnfiredDocument<'_> {
    UnfiredDocument {
        stage: &unfired.stage,
        sensor_id: &unfired.sensor_id,
        intent: &unfired.intent,
        severity: Severity::Blocking.as_str(),
        result: Outcome::NotEvaluated.as_str(),
        note: NEVER_FIRED,
        pattern: unfired.pattern.as_deref(),
        declared_outputs: &unfired.declared_outputs,
        manifest_path: &unfired.manifest_path,
        cause: &unfired.cause,
        message: unfired.reason(),
        plugin: unfired.plugin.as_deref(),
    }
}

fn fire_document(fire: &GateFire) -> FireDocument<'_> {
    FireDocument {
        plan_index: fire.plan_index as u64,
        stage: &fire.stage,
        sensor_id: &fire.sensor_id,
        severity: fire.severity.as_str(),
        deliverable: fire.deliverable.as_str(),
        result: fire.outcome().as_str(),
        note: fire.not_evaluated_reason(),
        budget: fire.budget(),
        findings_count: fire.findings_count(),
        detail_path: fire.detail_path.as_ref().map(|path| path.as_str()),
        fire_id: fire.fire_id.as_deref(),
        duration_ms: duration_ms(fire.duration),
        stderr_tail: (!fire.stderr_tail.is_empty()).then_some(fire.stderr_tail.as_str()),
        findings: &fire.findings,
        plugin: fire.plugin.as_deref(),
    }
}

// The gate report's document, one struct per object, its keys in the order they are written;
// an absent value is `null`, except a core stage's `plugin`, which is left out (D50: a report
// of core stages is what it was). A sensor, a skip, a dead binding, a finding, a budget, the
// unseen writes and a never-fired binding's cause are the report's own values, whose fields
// are declared in that order. The field doc comments, and those of the report's own values,
// are the descriptions of `aidlc schema gate-report` (`json_schema.rs` has the two mirrors of
// report values whose derived schema would have another shape, and the closed sets).

/// The report of one `aidlc gate check --format json` run.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(title = "aidlc gate check report", deny_unknown_fields)]
pub struct GateDocument<'a> {
    /// The version of this document's shape; it changes when a key changes meaning or goes
    /// away (new keys may appear within a version).
    #[schemars(with = "schema::SchemaVersion")]
    schema_version: u64,
    /// The program that wrote the report.
    tool: ToolDocument,
    /// The intent records checked (their folder names).
    intents: &'a [String],
    /// The whole run's plan, which every shard of it shares (`aidlc gate merge` joins only
    /// shards of one plan).
    plan: PlanDocument<'a>,
    /// The share of the work this run did with `--shard K/N`; null for the whole run.
    shard: Option<ShardDocument>,
    /// The project folder relative to the repository root (empty when they are the same).
    project_path: &'a str,
    /// Whether the run wrote audit rows and detail files (false with `--no-record`).
    recorded: bool,
    /// The denominator: what ran on what, and what did not and why.
    counts: CountsDocument<'a>,
    /// The run's wall-clock time in milliseconds.
    duration_ms: f64,
    /// What the manifest of each sensor the report names says, by sensor id.
    sensors: &'a BTreeMap<String, SensorInfo>,
    /// Every sensor fired on every deliverable, in plan order.
    fires: Vec<FireDocument<'a>>,
    /// Every binding that did not fire somewhere it might have, with why.
    #[schemars(with = "Vec<schema::Skip>")]
    skips: &'a [GateSkip],
    /// Bindings whose glob can never match the outputs their stage declares.
    dead_bindings: &'a [DeadBinding],
    /// Blocking bindings that fired on no deliverable of a stage the workflow has reached;
    /// each counts as a blocking non-evaluation.
    unfired_bindings: Vec<UnfiredDocument<'a>>,
    /// Why the run evaluated nothing (it then exits 2 unless `--allow-empty`); null when
    /// something was evaluated.
    nothing_checked: Option<NothingCheckedDocument>,
    /// The active stage's deliverables changed after the write hook last ran on the machine
    /// that ran the check (a notice, never a failure); left out when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    unseen_writes: Option<&'a UnseenWritesNotice>,
}

/// The program that wrote the report.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Tool", deny_unknown_fields)]
struct ToolDocument {
    /// Always `aidlc`.
    #[schemars(with = "schema::ToolName")]
    name: &'static str,
    /// Its version.
    version: &'static str,
}

/// The identity of a run's plan.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Plan", deny_unknown_fields)]
struct PlanDocument<'a> {
    /// BLAKE3 (hex) of everything that decides the plan: the intents, the selection, every
    /// planned unit in order, and the skips, dead and never-fired bindings.
    id: &'a str,
    /// The number of fires of the whole plan (all shards together).
    size: u64,
    /// The `--fire-on` selection.
    #[schemars(with = "schema::FireOnName")]
    fire_on: &'static str,
    /// The `--stage` selection (every stage of the graph when empty).
    stages: &'a [String],
    /// Bindings the selection took.
    bindings_selected: u64,
    /// Bindings the selection left out.
    bindings_not_selected: u64,
    /// Whether the Sensors switch was off, and where: `{"environment": true}` or
    /// `{"state": [intents]}`; null when it was on.
    sensors_off: Option<SensorsOffDocument<'a>>,
}

/// Where the Sensors switch was off: `{"environment": true}` or `{"state": [intents]}`, exactly
/// one of the two keys written.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "SensorsOff", deny_unknown_fields)]
struct SensorsOffDocument<'a> {
    /// `AIDLC_DISABLE_SENSORS=1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<bool>,
    /// The intents whose state file turned sensors off.
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a [String]>,
}

/// `--shard K/N`.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Shard", deny_unknown_fields)]
struct ShardDocument {
    /// K, from 1.
    index: u64,
    /// N.
    count: u64,
}

/// One sensor fired on one deliverable.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Fire", deny_unknown_fields)]
struct FireDocument<'a> {
    /// The fire's position in the whole plan (all shards), from 0.
    plan_index: u64,
    /// The stage's slug.
    stage: &'a str,
    /// The sensor's id.
    sensor_id: &'a str,
    /// The binding's severity.
    #[schemars(with = "Severity")]
    severity: &'static str,
    /// The file fired on, project-relative with `/` separators.
    deliverable: &'a str,
    /// How the fire ended; only `passed` passed.
    #[schemars(with = "schema::ResultName")]
    result: &'static str,
    /// Why a `not-evaluated` fire evaluated nothing (`tool-unavailable`, `script-error: …`,
    /// `artifact-changed`, a budget override); null otherwise.
    note: Option<String>,
    /// The cap and the time observed, for a fire stopped at its budget; null otherwise.
    budget: Option<Budget>,
    /// The findings the sensor counted (0 unless failed).
    findings_count: u64,
    /// The detail file of a failure, project-relative; null when passed or with `--no-record`.
    detail_path: Option<&'a str>,
    /// The audit fire id (8 hex digits); null with `--no-record`.
    fire_id: Option<&'a str>,
    /// How long the fire took, in milliseconds.
    duration_ms: f64,
    /// The last lines the worker wrote on stderr; null when it wrote nothing.
    stderr_tail: Option<&'a str>,
    /// Every finding the sensor reported, each with its own message and location.
    findings: &'a [Finding],
    /// The plugin of the stage that fired it (the graph node's `plugin`); absent on a core
    /// stage's fire.
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<&'a str>,
}

/// A blocking binding that fired on nothing in a stage the workflow has reached.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "UnfiredBinding", deny_unknown_fields)]
struct UnfiredDocument<'a> {
    /// The stage's slug.
    stage: &'a str,
    /// The sensor's id.
    sensor_id: &'a str,
    /// The intent record's folder name.
    intent: &'a str,
    /// Always `blocking`: only blocking bindings are reported as never fired.
    #[schemars(with = "schema::BlockingOnly")]
    severity: &'static str,
    /// Always `not-evaluated`.
    #[schemars(with = "schema::NotEvaluatedOnly")]
    result: &'static str,
    /// Always `never-fired`.
    #[schemars(with = "schema::NeverFiredOnly")]
    note: &'static str,
    /// The sensor's `matches` glob; null when it has none.
    pattern: Option<&'a str>,
    /// The stage's declared output file names.
    declared_outputs: &'a [String],
    /// The manifest's path as the graph recorded it.
    manifest_path: &'a str,
    /// Why it fired on nothing, for machines.
    #[schemars(with = "schema::UnfiredCause")]
    cause: &'a UnfiredCause,
    /// The sentence every format shows: what did not happen and why.
    message: String,
    /// The plugin of the stage (the graph node's `plugin`); absent on a core stage's binding.
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<&'a str>,
}

/// Why a run evaluated nothing.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "NothingChecked", deny_unknown_fields)]
struct NothingCheckedDocument {
    /// Why, in a sentence.
    reason: String,
    /// What to do about it.
    help: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::report::test_reports::{RECORD, no_record_report, sample_report};

    // --- JSON

    fn keys(value: &Value) -> Vec<&str> {
        value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn json_matches_the_snapshot() {
        insta::assert_snapshot!("json", render_json(&sample_report()));
    }

    #[test]
    fn json_is_one_document_with_the_exact_keys() {
        let text = render_json(&sample_report());
        let document: Value = serde_json::from_str(&text).expect("one JSON document");
        assert_eq!(
            keys(&document),
            [
                "schema_version",
                "tool",
                "intents",
                "plan",
                "shard",
                "project_path",
                "recorded",
                "counts",
                "duration_ms",
                "sensors",
                "fires",
                "skips",
                "dead_bindings",
                "unfired_bindings",
                "nothing_checked"
            ]
        );
        assert_eq!(document["schema_version"], json!(2));
        assert_eq!(document["plan"]["size"], json!(16));
        assert_eq!(document["project_path"], json!("services/shop"));
        assert_eq!(document["nothing_checked"], Value::Null);
        assert_eq!(document["shard"], json!({"index": 2, "count": 4}));
        assert_eq!(document["duration_ms"], json!(48.3));
        assert_eq!(
            keys(&document["counts"]),
            [
                "stages_checked",
                "deliverables_found",
                "sensors",
                "files",
                "fires",
                "passed",
                "failed",
                "blocking_failed",
                "not_evaluated",
                "blocking_not_evaluated",
                "never_fired",
                "skipped",
                "skipped_by_reason",
                "dead_bindings"
            ]
        );
        assert_eq!(
            document["counts"]["skipped_by_reason"],
            json!({"no-glob-match": 2, "no-deliverable": 1, "sensors-off": 1, "other-fire-on": 1, "other-shard": 1, "not-a-regular-file": 1})
        );
        assert_eq!(document["counts"]["not_evaluated"], json!(5));
        assert_eq!(document["counts"]["blocking_not_evaluated"], json!(3));
        assert_eq!(document["counts"]["never_fired"], json!(1));
        let fires = document["fires"].as_array().unwrap();
        assert_eq!(fires.len(), 8);
        for fire in fires {
            assert_eq!(
                keys(fire),
                [
                    "plan_index",
                    "stage",
                    "sensor_id",
                    "severity",
                    "deliverable",
                    "result",
                    "note",
                    "budget",
                    "findings_count",
                    "detail_path",
                    "fire_id",
                    "duration_ms",
                    "stderr_tail",
                    "findings"
                ]
            );
        }
        let results: Vec<&Value> = fires.iter().map(|fire| &fire["result"]).collect();
        assert_eq!(
            results,
            [
                "passed",
                "failed",
                "failed",
                "failed",
                "not-evaluated",
                "not-evaluated",
                "not-evaluated",
                "not-evaluated"
            ]
        );
        assert_eq!(fires[7]["note"], json!("artifact-changed"));
        assert_eq!(fires[7]["findings_count"], json!(0));
        assert_eq!(fires[0]["note"], Value::Null);
        assert_eq!(fires[4]["note"], json!("tool-unavailable"));
        assert_eq!(
            fires[5]["note"],
            json!("sensor execution exceeded its budget")
        );
        assert_eq!(fires[6]["note"], json!("script-error: exit-2"));
        assert_eq!(
            fires[6]["stderr_tail"],
            json!("loading rules\nerror: cannot parse rules.md: unexpected `|` at line 3")
        );
        assert_eq!(
            fires[5]["budget"],
            json!({"cap_seconds": 300, "observed_seconds": 301})
        );
        assert_eq!(
            fires[1]["findings"][0],
            json!({
                "file": format!("{RECORD}/inception/requirements-analysis/requirements.md"),
                "rule": "missing-heading",
                "message": "missing section \"## Risks\"",
                "line": 12,
                "column": 3,
                "end_line": null,
                "end_column": null,
                "help": "add a `## Risks` section",
            })
        );
        assert_eq!(fires[1]["findings_count"], json!(3));
        assert_eq!(
            keys(&document["skips"][0]),
            ["stage", "sensor_id", "deliverable", "reason"]
        );
        assert_eq!(document["skips"][2]["deliverable"], Value::Null);
        assert_eq!(document["skips"][2]["reason"], json!("no-deliverable"));
        assert_eq!(
            document["dead_bindings"],
            json!([{"stage": "reverse-engineering", "sensor_id": "required-sections", "pattern": "**/{aidlc-docs,intents}/**"}])
        );
        assert_eq!(
            document["unfired_bindings"],
            json!([{
                "stage": "application-design",
                "sensor_id": "api-contract",
                "intent": "260101-login",
                "severity": "blocking",
                "result": "not-evaluated",
                "note": "never-fired",
                "pattern": "**/*.ts",
                "declared_outputs": ["components.md", "services.md"],
                "manifest_path": ".claude/sensors/aidlc-api-contract.md",
                "cause": {"kind": "no-glob-match", "deliverables": 2},
                "message": "blocking sensor never fired: its glob matches none of the stage's 2 deliverables; glob \"**/*.ts\"; declared outputs: components.md, services.md; a blocking sensor that never fired has not passed",
            }])
        );
    }

    /// Each place the Sensors switch can be off is written with its one key, and the document
    /// stays valid against `aidlc schema gate-report`.
    #[test]
    fn json_writes_the_sensors_switch_with_its_one_key_and_validates() {
        let schema = crate::schema::schema_of(crate::schema::SchemaKind::GateReport).to_value();
        let validator = jsonschema::draft202012::new(&schema).expect("a valid schema");
        let cases = [
            (SensorsOff::Environment, json!({"environment": true})),
            (
                SensorsOff::State {
                    intents: vec!["260101-login".to_owned()],
                },
                json!({"state": ["260101-login"]}),
            ),
        ];
        for (sensors_off, written) in cases {
            let report = GateReport {
                sensors_off: Some(sensors_off),
                ..no_record_report()
            };
            let document: Value = serde_json::from_str(&render_json(&report)).unwrap();
            assert_eq!(document["plan"]["sensors_off"], written);
            let errors: Vec<String> = validator
                .iter_errors(&document)
                .map(|error| format!("{error} at {}", error.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{errors:#?}");
        }
    }

    #[test]
    fn json_without_shard_or_record_has_nulls() {
        let document: Value = serde_json::from_str(&render_json(&no_record_report())).unwrap();
        assert_eq!(document["shard"], Value::Null);
        assert_eq!(document["recorded"], json!(false));
        assert_eq!(document["fires"][0]["fire_id"], Value::Null);
        assert_eq!(document["fires"][0]["detail_path"], Value::Null);
    }
}
