//! The JSON format: one pretty-printed document with its keys in a fixed order (the counts,
//! every fire with its findings, every skip, dead binding and never-fired binding, and why
//! nothing was checked), versioned by [`JSON_FORMAT_VERSION`].

use serde_json::{Value, json};

use crate::gate::render::counts::{counts_value, skip_reason_key};
use crate::gate::render::messages::duration_ms;
use crate::gate::report::{
    DeadBinding, Finding, GateFire, GateReport, GateSkip, NEVER_FIRED, Outcome, UnfiredBinding,
};
use crate::syntax::manifest::Severity;

/// The version of the JSON document [`render_json`] writes; bump it when a key changes meaning
/// or goes away (adding a key is compatible).
pub const JSON_FORMAT_VERSION: u64 = 1;

/// One JSON document (pretty-printed, keys in a fixed order): the counts, every fire with its
/// findings, every skip and every dead binding. The shape is versioned by
/// [`JSON_FORMAT_VERSION`].
pub fn render_json(report: &GateReport) -> String {
    serde_json::to_string_pretty(&json_document(report)).expect("a JSON value always serialises")
}

/// The value [`render_json`] prints, for embedding.
pub fn json_document(report: &GateReport) -> Value {
    json!({
        "version": JSON_FORMAT_VERSION,
        "intents": report.intents,
        "shard": report.shard.map(|(index, count)| json!({"index": index, "count": count})),
        "recorded": report.recorded,
        "counts": counts_value(report),
        "duration_ms": duration_ms(report.duration),
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

fn json_unfired(unfired: &UnfiredBinding) -> Value {
    json!({
        "stage": unfired.stage,
        "sensor_id": unfired.sensor_id,
        "intent": unfired.intent,
        "severity": Severity::Blocking.as_str(),
        "result": Outcome::NotEvaluated.as_str(),
        "note": NEVER_FIRED,
        "pattern": unfired.pattern,
        "declared_outputs": unfired.declared_outputs,
        "manifest_path": unfired.manifest_path,
        "message": unfired.reason(),
    })
}

fn json_fire(fire: &GateFire) -> Value {
    json!({
        "stage": fire.stage,
        "sensor_id": fire.sensor_id,
        "severity": fire.severity.as_str(),
        "deliverable": fire.deliverable.as_str(),
        "result": fire.outcome().as_str(),
        "note": fire.not_evaluated_reason(),
        "findings_count": fire.findings_count(),
        "detail_path": fire.detail_path.as_ref().map(|path| path.as_str()),
        "fire_id": fire.fire_id,
        "duration_ms": duration_ms(fire.duration),
        "findings": fire.findings.iter().map(json_finding).collect::<Vec<_>>(),
    })
}

fn json_finding(finding: &Finding) -> Value {
    json!({
        "file": finding.file.as_str(),
        "line": finding.line,
        "column": finding.column,
        "rule": finding.rule,
        "message": finding.message,
    })
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
    use crate::gate::render::test_reports::{RECORD, no_record_report, sample_report};

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
                "version",
                "intents",
                "shard",
                "recorded",
                "counts",
                "duration_ms",
                "fires",
                "skips",
                "dead_bindings",
                "unfired_bindings",
                "nothing_checked"
            ]
        );
        assert_eq!(document["version"], json!(1));
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
                    "stage",
                    "sensor_id",
                    "severity",
                    "deliverable",
                    "result",
                    "note",
                    "findings_count",
                    "detail_path",
                    "fire_id",
                    "duration_ms",
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
            fires[1]["findings"][0],
            json!({
                "file": format!("{RECORD}/inception/requirements-analysis/requirements.md"),
                "line": 12,
                "column": 3,
                "rule": "missing-heading",
                "message": "missing section \"## Risks\"",
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
