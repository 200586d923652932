//! `aidlc gate merge` reads back what the JSON renderer wrote: shards of one plan merge into
//! the whole, anything else is refused, and no mutation of a shard report panics the merge or
//! any renderer of the merged report. These tests sit with the renderers, which sit above the
//! gate's values (the merge itself renders nothing).

use std::time::Duration;

use serde_json::Value;

use crate::report::json::render_json;
use crate::runtime::gate::merge::{MergeError, merge_reports, read_report};
use crate::runtime::gate::report::{
    Finding, FireResult, GateFire, GateReport, GateSkip, PlanIdentity, Severity, SkipReason,
};

fn shard_reports(count: u64) -> (GateReport, Vec<(String, GateReport)>) {
    let fires: Vec<GateFire> = (0..7)
        .map(|index| GateFire {
            stage: "s".to_owned(),
            sensor_id: "x".to_owned(),
            severity: Severity::Advisory,
            deliverable: format!("d{index}.md").into(),
            result: if index % 3 == 0 {
                FireResult::Failed { findings_count: 1 }
            } else {
                FireResult::Passed
            },
            fire_id: None,
            detail_path: None,
            findings: if index % 3 == 0 {
                vec![Finding::at_file(format!("d{index}.md"), "r", "m")]
            } else {
                Vec::new()
            },
            duration: Duration::from_millis(2),
            stderr_tail: String::new(),
            plan_index: index,
            plugin: None,
        })
        .collect();
    let whole = GateReport {
        intents: vec!["i".to_owned()],
        stages_checked: 1,
        deliverables_found: 7,
        fires: fires.clone(),
        bindings_selected: 1,
        plan: PlanIdentity {
            id: "ab".repeat(32),
            size: 7,
        },
        duration: Duration::from_millis(9),
        ..GateReport::default()
    };
    let shards = (1..=count)
        .map(|index| {
            let mine =
                |fire: &&GateFire| u64::try_from(fire.plan_index).unwrap() % count + 1 == index;
            let report = GateReport {
                fires: fires.iter().filter(mine).cloned().collect(),
                skips: fires
                    .iter()
                    .filter(|fire| !mine(fire))
                    .map(|fire| GateSkip {
                        stage: fire.stage.clone(),
                        sensor_id: fire.sensor_id.clone(),
                        deliverable: Some(fire.deliverable.clone()),
                        reason: SkipReason::OtherShard,
                    })
                    .collect(),
                shard: Some((index, count)),
                ..whole.clone()
            };
            let text = render_json(&report);
            (
                format!("shard-{index}.json"),
                read_report(&format!("shard-{index}.json"), &text).unwrap(),
            )
        })
        .collect();
    (whole, shards)
}

#[test]
fn shards_of_one_two_and_five_merge_into_the_whole() {
    for count in [1, 2, 5] {
        let (whole, shards) = shard_reports(count);
        let merged = merge_reports(&shards).unwrap();
        let read_back = read_report("whole", &render_json(&whole)).unwrap();
        assert_eq!(
            render_json(&merged).replace("\"duration_ms\": 9.0", ""),
            render_json(&read_back).replace("\"duration_ms\": 9.0", ""),
            "{count} shards"
        );
    }
}

#[test]
fn a_stage_s_plugin_is_carried_through_and_shards_that_disagree_about_it_are_refused() {
    let (_, mut shards) = shard_reports(2);
    for (_, report) in &mut shards {
        for fire in &mut report.fires {
            fire.plugin = Some("acme".to_owned());
        }
    }
    let merged = merge_reports(&shards).unwrap();
    assert!(
        merged
            .fires
            .iter()
            .all(|fire| fire.plugin.as_deref() == Some("acme"))
    );
    let read_back = read_report("merged", &render_json(&merged)).unwrap();
    assert_eq!(read_back.fires, merged.fires);

    shards[1].1.fires[0].plugin = Some("other".to_owned());
    let error = merge_reports(&shards).unwrap_err();
    assert_eq!(
        error.0,
        "shard-1.json and shard-2.json disagree about the plugin of stage s: plugin \"acme\" in shard-1.json, plugin \"other\" in shard-2.json; merge the reports of one `aidlc gate check --shard K/N` matrix run on one commit"
    );
    shards[1].1.fires[0].plugin = None;
    let error = merge_reports(&shards).unwrap_err();
    assert!(
        error.0.contains("no plugin (core) in shard-2.json"),
        "{}",
        error.0
    );
}

#[test]
fn the_write_hook_s_unseen_deliverables_are_read_back_and_a_mistyped_notice_is_refused() {
    let (_, mut shards) = shard_reports(2);
    let notice = crate::runtime::gate::report::UnseenWritesNotice {
        stage: "s".to_owned(),
        files: vec!["docs/a.md".to_owned()],
        message: "The write hook never saw 1 file of stage s".to_owned(),
    };
    shards[0].1.unseen_writes = Some(notice.clone());
    let merged = merge_reports(&shards).unwrap();
    let read_back = read_report("merged", &render_json(&merged)).unwrap();
    assert_eq!(read_back.unseen_writes, Some(notice));

    let mut document: Value = serde_json::from_str(&render_json(&merged)).unwrap();
    document["unseen_writes"]["files"] = Value::from("docs/a.md");
    let error = read_report("d.json", &document.to_string()).unwrap_err();
    assert!(error.0.contains("`unseen_writes.files`"), "{error}");
    document["unseen_writes"] = Value::Null;
    let error = read_report("d.json", &document.to_string()).unwrap_err();
    assert!(error.0.contains("`unseen_writes`"), "{error}");
}

#[test]
fn a_missing_shard_is_refused_by_number() {
    let (_, mut shards) = shard_reports(5);
    shards.remove(3);
    let error = merge_reports(&shards).unwrap_err();
    assert_eq!(
        error.0,
        "shard 4/5 of the plan is missing: pass every shard's report (the plan has 5 shards)"
    );
}

#[test]
fn a_shard_given_twice_is_refused() {
    let (_, mut shards) = shard_reports(2);
    let again = shards[0].clone();
    shards.push(("copy.json".to_owned(), again.1));
    let error = merge_reports(&shards).unwrap_err();
    assert_eq!(
        error.0,
        "shard 1/2 is given twice: shard-1.json and copy.json"
    );
}

#[test]
fn shards_of_different_plans_are_refused() {
    let (_, mut shards) = shard_reports(2);
    shards[1].1.plan.id = "cd".repeat(32);
    let error = merge_reports(&shards).unwrap_err();
    assert!(
        error.0.starts_with(
            "shard-2.json is a shard of another check than shard-1.json: plan cdcdcdcdcdcd"
        ),
        "{error}"
    );
}

#[test]
fn a_report_of_another_schema_or_shape_is_refused() {
    let error = read_report("a.json", "{\"schema_version\": 1}").unwrap_err();
    assert!(
        error.0.contains("schema_version 1 cannot be merged"),
        "{error}"
    );
    let error = read_report("b.json", "not json").unwrap_err();
    assert!(
        error.0.starts_with("b.json: not a JSON document"),
        "{error}"
    );
    let (_, shards) = shard_reports(1);
    let mut document: Value = serde_json::from_str(&render_json(&shards[0].1)).unwrap();
    document["fires"][0]["result"] = Value::from("maybe");
    let error = read_report("c.json", &document.to_string()).unwrap_err();
    assert!(
        error
            .0
            .contains("`fires[].result` is missing or not passed, failed or not-evaluated"),
        "{error}"
    );
}

// --- Never a panic, whatever the reports say

/// The values a mutation puts in place of a part of a report.
const REPLACEMENTS: &[&str] = &[
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "1e300",
    "-1e300",
    "18446744073709551615",
    "18446744073709551616",
    "\"\"",
    "\"passed\"",
    "\"failed\"",
    "\"not-evaluated\"",
    "\"blocking\"",
    "\"advisory\"",
    "\"sensor execution exceeded its budget\"",
    "[]",
    "{}",
    "[{}]",
];

/// Every JSON pointer into `value` (the root excluded).
fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map
            .iter()
            .map(|(key, child)| (format!("{at}/{key}"), child))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, child)| (format!("{at}/{index}"), child))
            .collect(),
        _ => Vec::new(),
    };
    for (pointer, child) in children {
        out.push(pointer.clone());
        pointers(child, &pointer, out);
    }
}

/// `document` with the part at `pointer` replaced by `replacement`, or removed when
/// `replacement` is `None`.
fn mutated(document: &Value, pointer: &str, replacement: Option<&str>) -> Value {
    let mut document = document.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer below the root");
    let parent = if parent.is_empty() {
        Some(&mut document)
    } else {
        document.pointer_mut(parent)
    };
    match (parent, replacement) {
        (Some(Value::Object(map)), None) => {
            map.remove(key);
        }
        (Some(Value::Array(items)), None) => {
            if let Ok(index) = key.parse::<usize>()
                && index < items.len()
            {
                items.remove(index);
            }
        }
        (Some(parent), Some(text)) => {
            let value: Value = serde_json::from_str(text).expect("a JSON replacement");
            if let Some(slot) = match parent {
                Value::Object(map) => map.get_mut(key),
                Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
                _ => None,
            } {
                *slot = value;
            }
        }
        (Some(_) | None, _) => {}
    }
    document
}

/// Read, merge and render in every format: any outcome but a panic.
fn read_merge_and_render(documents: &[Value]) {
    let shards: Result<Vec<(String, GateReport)>, MergeError> = documents
        .iter()
        .enumerate()
        .map(|(index, document)| {
            let name = format!("shard-{index}.json");
            read_report(&name, &document.to_string()).map(|report| (name, report))
        })
        .collect();
    let Ok(shards) = shards else { return };
    let Ok(merged) = merge_reports(&shards) else {
        return;
    };
    for &format in crate::report::ReportFormat::all() {
        let _ = crate::report::render(&merged, format, &crate::report::RenderSettings::default());
    }
}

/// The sample report with every case, as one unsharded run.
fn whole_sample() -> Value {
    let mut report = crate::report::test_reports::sample_report();
    report.shard = None;
    report
        .skips
        .retain(|skip| skip.reason != SkipReason::OtherShard);
    for (index, fire) in report.fires.iter_mut().enumerate() {
        fire.plan_index = index;
    }
    report.plan.size = report.fires.len();
    serde_json::from_str(&render_json(&report)).unwrap()
}

#[test]
fn mutated_shard_reports_never_panic_the_merge_or_the_renderers() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    let whole = whole_sample();
    assert!(read_report("whole", &whole.to_string()).is_ok());
    let (_, two) = shard_reports(2);
    let two: Vec<Value> = two
        .iter()
        .map(|(_, report)| serde_json::from_str(&render_json(report)).unwrap())
        .collect();
    let bases: Vec<Vec<Value>> = vec![vec![whole], two];
    let mut all_pointers: Vec<Vec<Vec<String>>> = Vec::new();
    for base in &bases {
        all_pointers.push(
            base.iter()
                .map(|document| {
                    let mut found = Vec::new();
                    pointers(document, "", &mut found);
                    found
                })
                .collect(),
        );
    }
    let mut config = Config {
        failure_persistence: None,
        cases: 2_000,
        ..Config::default()
    };
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(0x2026_0526);
    }
    let mutation = (
        0..bases.len(),
        any::<proptest::sample::Index>(),
        any::<proptest::sample::Index>(),
        proptest::option::weighted(0.9, 0..REPLACEMENTS.len()),
    );
    let cases = proptest::collection::vec(mutation, 1..=3);
    let result = TestRunner::new(config).run(&cases, |mutations| {
        let base = mutations[0].0;
        let mut documents = bases[base].clone();
        for (_, which_document, which_pointer, replacement) in &mutations {
            let document = which_document.index(documents.len());
            let pointers = &all_pointers[base][document];
            let pointer = &pointers[which_pointer.index(pointers.len())];
            documents[document] = mutated(
                &documents[document],
                pointer,
                replacement.map(|index| REPLACEMENTS[index]),
            );
        }
        read_merge_and_render(&documents);
        Ok(())
    });
    assert!(result.is_ok(), "{result:?}");
}
