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

use serde_json::{Map, Value, json};

use crate::compile::Drift;
use crate::leaves::diagnostics::Diagnostic;
use crate::report::counts::counts_value;
use crate::report::drift::DRIFT_HELP;
use crate::report::messages::duration_ms;
use crate::report::problem::Problem;
use crate::report::source::SourceLookup;
use crate::runtime::gate::report::{
    DeadBinding, Finding, FireResult, GateFire, GateReport, GateSkip, NEVER_FIRED, Outcome,
    SensorsOff, Severity, UnfiredBinding, UnfiredCause, skip_reason_key,
};

pub use crate::runtime::gate::report::JSON_SCHEMA_VERSION;

/// One compile diagnostic as one JSON object (no trailing newline) with stable keys.
pub fn diagnostic_json_line(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> String {
    diagnostic_json_value(diagnostic, sources).to_string()
}

/// The object of [`diagnostic_json_line`], for embedding in a larger event: the code, the
/// severity, the message, the file, the start and end line and column (null when unknown), the
/// label, the help and the related places.
pub fn diagnostic_json_value(diagnostic: &Diagnostic, sources: &dyn SourceLookup) -> Value {
    problem_json_value(
        &Problem::of_diagnostic(diagnostic)
            .with_region(sources)
            .with_plugin(sources),
    )
}

/// `plugin` follows the other keys, and only when the file belongs to a plugin: the lines of a
/// project without plugins are what they were.
fn problem_json_value(problem: &Problem<'_>) -> Value {
    let region = problem.region();
    let mut value = json!({
        "code": problem.rule,
        "severity": problem.level.as_str(),
        "message": problem.message,
        "file": problem.file().map(camino::Utf8Path::as_str),
        "line": region.map(|region| region.line),
        "column": region.and_then(|region| region.column),
        "end_line": region.and_then(|region| region.end_line),
        "end_column": region.and_then(|region| region.end_column),
        "label": problem.label,
        "help": problem.help,
        "related": problem.related.iter().map(|related| json!({
            "file": related.file.as_str(),
            "message": related.message,
        })).collect::<Vec<_>>(),
    });
    if let Some(plugin) = &problem.plugin {
        value["plugin"] = json!(plugin);
    }
    value
}

/// One JSON object per drift (no trailing newline), `kind: "drift"` beside the diagnostics'
/// objects.
pub fn drift_json_line(drift: &Drift) -> String {
    json!({
        "kind": "drift",
        "severity": "error",
        "file": drift.file.as_str(),
        "output": drift.output,
        "stage": drift.stage,
        "change": drift.change,
        "message": drift.message,
        "help": DRIFT_HELP,
    })
    .to_string()
}

// --- The gate report -------------------------------------------------------------------------

/// The gate report as one JSON document (pretty-printed, keys in a fixed order).
pub fn render_json(report: &GateReport) -> String {
    serde_json::to_string_pretty(&json_document(report)).expect("a JSON value always serialises")
}

/// The value [`render_json`] prints, for embedding.
pub fn json_document(report: &GateReport) -> Value {
    json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "tool": {"name": "aidlc", "version": env!("CARGO_PKG_VERSION")},
        "intents": report.intents,
        "plan": json_plan(report),
        "shard": report.shard.map(|(index, count)| json!({"index": index, "count": count})),
        "project_path": report.project_path.as_str(),
        "recorded": report.recorded,
        "counts": counts_value(report),
        "duration_ms": duration_ms(report.duration),
        "sensors": report.sensors.iter().map(|(id, info)| (id.clone(), json!({
            "description": info.description,
            "manifest_path": info.manifest_path,
        }))).collect::<Map<String, Value>>(),
        "fires": report.fires.iter().map(json_fire).collect::<Vec<_>>(),
        "skips": report.skips.iter().map(json_skip).collect::<Vec<_>>(),
        "dead_bindings": report.dead_bindings.iter().map(json_dead_binding).collect::<Vec<_>>(),
        "unfired_bindings": report.unfired_bindings.iter().map(json_unfired).collect::<Vec<_>>(),
        "nothing_checked": report.nothing_checked().map(|nothing| json!({
            "reason": nothing.reason(),
            "help": nothing.help(),
        })),
    })
}

fn json_plan(report: &GateReport) -> Value {
    let sensors_off = match &report.sensors_off {
        None => Value::Null,
        Some(SensorsOff::Environment) => json!({"environment": true}),
        Some(SensorsOff::State { intents }) => json!({"state": intents}),
    };
    json!({
        "id": report.plan.id,
        "size": report.plan.size,
        "fire_on": report.fire_on_name(),
        "stages": report.stages,
        "bindings_selected": report.bindings_selected,
        "bindings_not_selected": report.bindings_not_selected,
        "sensors_off": sensors_off,
    })
}

fn json_unfired(unfired: &UnfiredBinding) -> Value {
    let cause = match &unfired.cause {
        UnfiredCause::NoDeliverable => json!({"kind": "no-deliverable"}),
        UnfiredCause::NoGlobMatch { deliverables } => {
            json!({"kind": "no-glob-match", "deliverables": deliverables})
        }
        UnfiredCause::OnlyMarkers => json!({"kind": "only-markers"}),
        UnfiredCause::NotRegularFiles { described } => {
            json!({"kind": "not-regular-files", "described": described})
        }
    };
    let mut value = json!({
        "stage": unfired.stage,
        "sensor_id": unfired.sensor_id,
        "intent": unfired.intent,
        "severity": Severity::Blocking.as_str(),
        "result": Outcome::NotEvaluated.as_str(),
        "note": NEVER_FIRED,
        "pattern": unfired.pattern,
        "declared_outputs": unfired.declared_outputs,
        "manifest_path": unfired.manifest_path,
        "cause": cause,
        "message": unfired.reason(),
    });
    // D50: as on a fire, the plugin follows the other keys, only on a plugin stage's binding.
    if let Some(plugin) = &unfired.plugin {
        value["plugin"] = json!(plugin);
    }
    value
}

fn json_fire(fire: &GateFire) -> Value {
    let budget = match &fire.result {
        FireResult::NotEvaluated {
            budget: Some(budget),
            ..
        } => {
            json!({"cap_seconds": budget.cap_seconds, "observed_seconds": budget.observed_seconds})
        }
        _ => Value::Null,
    };
    let mut value = json!({
        "plan_index": fire.plan_index,
        "stage": fire.stage,
        "sensor_id": fire.sensor_id,
        "severity": fire.severity.as_str(),
        "deliverable": fire.deliverable.as_str(),
        "result": fire.outcome().as_str(),
        "note": fire.not_evaluated_reason(),
        "budget": budget,
        "findings_count": fire.findings_count(),
        "detail_path": fire.detail_path.as_ref().map(|path| path.as_str()),
        "fire_id": fire.fire_id,
        "duration_ms": duration_ms(fire.duration),
        "stderr_tail": (!fire.stderr_tail.is_empty()).then_some(fire.stderr_tail.as_str()),
        "findings": fire.findings.iter().map(json_finding).collect::<Vec<_>>(),
    });
    // D50: the plugin follows the other keys, and only on a plugin stage's fire, so that a
    // report of core stages is what it was.
    if let Some(plugin) = &fire.plugin {
        value["plugin"] = json!(plugin);
    }
    value
}

fn json_finding(finding: &Finding) -> Value {
    let mut object = Map::new();
    object.insert("file".to_owned(), json!(finding.file.as_str()));
    object.insert("rule".to_owned(), json!(finding.rule));
    object.insert("message".to_owned(), json!(finding.message));
    object.insert("line".to_owned(), json!(finding.line));
    object.insert("column".to_owned(), json!(finding.column));
    object.insert("end_line".to_owned(), json!(finding.end_line));
    object.insert("end_column".to_owned(), json!(finding.end_column));
    object.insert("help".to_owned(), json!(finding.help));
    Value::Object(object)
}

fn json_skip(skip: &GateSkip) -> Value {
    json!({
        "stage": skip.stage,
        "sensor_id": skip.sensor_id,
        "deliverable": skip.deliverable.as_ref().map(|path| path.as_str()),
        "reason": skip_reason_key(&skip.reason),
    })
}

fn json_dead_binding(dead: &DeadBinding) -> Value {
    json!({
        "stage": dead.stage,
        "sensor_id": dead.sensor_id,
        "pattern": dead.pattern,
    })
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn json_without_shard_or_record_has_nulls() {
        let document: Value = serde_json::from_str(&render_json(&no_record_report())).unwrap();
        assert_eq!(document["shard"], Value::Null);
        assert_eq!(document["recorded"], json!(false));
        assert_eq!(document["fires"][0]["fire_id"], Value::Null);
        assert_eq!(document["fires"][0]["detail_path"], Value::Null);
    }
}
