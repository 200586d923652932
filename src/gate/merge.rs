//! `aidlc gate merge`: the JSON reports of the shards of one `aidlc gate check --shard K/N`
//! matrix, read back and joined into the report the unsharded run would have given.
//!
//! Invariants (fail closed):
//! - a report is read strictly: a schema version other than [`JSON_SCHEMA_VERSION`], a missing
//!   or mistyped key, an unknown result, severity, skip reason or cause is refused with the file
//!   and the key, never defaulted;
//! - every report is a shard of the same plan (same identity, same size, same shard count), each
//!   shard 1..=N is there exactly once, and the fires' places in the plan are all different and
//!   add up to the plan's size; anything else is refused, saying which shard is missing,
//!   doubled or foreign;
//! - what every shard shares (skips other than `another shard`, dead and never-fired bindings,
//!   the counts of stages, deliverables and bindings, the intents) must be equal in every shard;
//! - the merged report has no shard, its fires in plan order and its skips without the
//!   `another shard` ones: exactly the unsharded run's report, apart from timings, fire ids
//!   and detail paths.
//!
//! This file reads text it is given and returns values; the CLI reads the files and prints.

use std::collections::BTreeMap;
use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::Value;

use crate::gate::report::{
    BUDGET_EXCEEDED, Budget, DeadBinding, Finding, FireOnFilter, FireResult, GateFire, GateReport,
    GateSkip, JSON_SCHEMA_VERSION, PlanIdentity, SensorInfo, SensorsOff, Severity, SkipReason,
    UnfiredBinding, UnfiredCause,
};

/// Why shards could not be merged; the message names the file and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

fn refuse(message: impl Into<String>) -> MergeError {
    MergeError(message.into())
}

/// Read one shard's JSON report (`name` is how messages name it, usually its path).
pub fn read_report(name: &str, text: &str) -> Result<GateReport, MergeError> {
    let document: Value = serde_json::from_str(text)
        .map_err(|error| refuse(format!("{name}: not a JSON document: {error}")))?;
    Reader {
        name,
        document: &document,
    }
    .report()
}

/// Join the shards (each read by [`read_report`], with its name) into the unsharded report.
pub fn merge_reports(shards: &[(String, GateReport)]) -> Result<GateReport, MergeError> {
    let Some((first_name, first)) = shards.first() else {
        return Err(refuse("no report to merge"));
    };
    let count = match first.shard {
        Some((_, count)) => count,
        None => 1,
    };
    let mut by_index: BTreeMap<u64, &str> = BTreeMap::new();
    for (name, report) in shards {
        let (index, this_count) = report.shard.unwrap_or((1, 1));
        if report.plan != first.plan || this_count != count {
            return Err(refuse(format!(
                "{name} is a shard of another check than {first_name}: plan {} ({} fires, {this_count} shards) against plan {} ({} fires, {count} shards); merge the reports of one `aidlc gate check --shard K/N` matrix",
                short(&report.plan.id),
                report.plan.size,
                short(&first.plan.id),
                first.plan.size
            )));
        }
        if let Some(other) = by_index.insert(index, name) {
            return Err(refuse(format!(
                "shard {index}/{count} is given twice: {other} and {name}"
            )));
        }
        check_shared(first_name, first, name, report)?;
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !by_index.contains_key(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "shard{} {} of the plan {} missing: pass every shard's report (the plan has {count} shards)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" }
        )));
    }
    let mut merged = first.clone();
    merged.fires = shards
        .iter()
        .flat_map(|(_, report)| report.fires.iter().cloned())
        .collect();
    merged.fires.sort_by_key(|fire| fire.plan_index);
    let places_ok = merged.fires.len() == first.plan.size
        && merged
            .fires
            .iter()
            .enumerate()
            .all(|(index, fire)| fire.plan_index == index);
    if !places_ok {
        return Err(refuse(format!(
            "the shards' fires do not make up the plan: {} fires for a plan of {}, or a place in the plan taken twice; were the reports changed after the check?",
            merged.fires.len(),
            first.plan.size
        )));
    }
    merged
        .skips
        .retain(|skip| skip.reason != SkipReason::OtherShard);
    merged.shard = None;
    merged.duration = shards
        .iter()
        .map(|(_, report)| report.duration)
        .max()
        .unwrap_or_default();
    merged.recorded = shards.iter().all(|(_, report)| report.recorded);
    for (_, report) in shards {
        for (id, info) in &report.sensors {
            merged
                .sensors
                .entry(id.clone())
                .or_insert_with(|| info.clone());
        }
    }
    Ok(merged)
}

/// What every shard of one plan must have in common.
fn check_shared(
    first_name: &str,
    first: &GateReport,
    name: &str,
    report: &GateReport,
) -> Result<(), MergeError> {
    let shared_skips = |report: &GateReport| -> Vec<GateSkip> {
        report
            .skips
            .iter()
            .filter(|skip| skip.reason != SkipReason::OtherShard)
            .cloned()
            .collect()
    };
    let agree = first.intents == report.intents
        && first.stages_checked == report.stages_checked
        && first.deliverables_found == report.deliverables_found
        && first.dead_bindings == report.dead_bindings
        && first.unfired_bindings == report.unfired_bindings
        && first.fire_on == report.fire_on
        && first.bindings_selected == report.bindings_selected
        && first.bindings_not_selected == report.bindings_not_selected
        && first.sensors_off == report.sensors_off
        && first.project_path == report.project_path
        && shared_skips(first) == shared_skips(report);
    if agree {
        Ok(())
    } else {
        Err(refuse(format!(
            "{name} and {first_name} name the same plan but disagree on what every shard shares (intents, skips, dead or never-fired bindings); were the reports changed after the check?"
        )))
    }
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// A strict reader of one JSON report: every key it needs must be there with its type.
struct Reader<'a> {
    name: &'a str,
    document: &'a Value,
}

impl Reader<'_> {
    fn error(&self, key: &str, expected: &str) -> MergeError {
        refuse(format!(
            "{}: `{key}` is missing or not {expected}; is it a report of `aidlc gate check --format json`?",
            self.name
        ))
    }

    fn report(&self) -> Result<GateReport, MergeError> {
        let document = self.document;
        let version = document["schema_version"].as_u64();
        if version != Some(JSON_SCHEMA_VERSION) {
            return Err(refuse(format!(
                "{}: schema_version {} cannot be merged by this aidlc (it reads {JSON_SCHEMA_VERSION}); run every shard and the merge with the same aidlc version",
                self.name,
                version.map_or_else(|| "missing".to_owned(), |v| v.to_string())
            )));
        }
        let plan = &document["plan"];
        let counts = &document["counts"];
        let shard = match &document["shard"] {
            Value::Null => None,
            shard => Some((
                self.u64_at(shard, "shard.index")?,
                self.u64_at(shard, "shard.count")?,
            )),
        };
        let fire_on = plan["fire_on"]
            .as_str()
            .and_then(FireOnFilter::from_name)
            .ok_or_else(|| self.error("plan.fire_on", "gate, write or all"))?;
        Ok(GateReport {
            intents: self.strings(&document["intents"], "intents")?,
            stages_checked: self.usize_of(&counts["stages_checked"], "counts.stages_checked")?,
            deliverables_found: self
                .usize_of(&counts["deliverables_found"], "counts.deliverables_found")?,
            fires: self
                .array(&document["fires"], "fires")?
                .iter()
                .map(|fire| self.fire(fire))
                .collect::<Result<_, _>>()?,
            skips: self
                .array(&document["skips"], "skips")?
                .iter()
                .map(|skip| self.skip(skip))
                .collect::<Result<_, _>>()?,
            dead_bindings: self
                .array(&document["dead_bindings"], "dead_bindings")?
                .iter()
                .map(|dead| {
                    Ok(DeadBinding {
                        stage: self.string(&dead["stage"], "dead_bindings[].stage")?,
                        sensor_id: self.string(&dead["sensor_id"], "dead_bindings[].sensor_id")?,
                        pattern: self.string(&dead["pattern"], "dead_bindings[].pattern")?,
                    })
                })
                .collect::<Result<_, MergeError>>()?,
            unfired_bindings: self
                .array(&document["unfired_bindings"], "unfired_bindings")?
                .iter()
                .map(|unfired| self.unfired(unfired))
                .collect::<Result<_, _>>()?,
            fire_on,
            bindings_selected: self
                .usize_of(&plan["bindings_selected"], "plan.bindings_selected")?,
            bindings_not_selected: self
                .usize_of(&plan["bindings_not_selected"], "plan.bindings_not_selected")?,
            sensors_off: self.sensors_off(&plan["sensors_off"])?,
            duration: self.duration(&document["duration_ms"], "duration_ms")?,
            shard,
            recorded: document["recorded"]
                .as_bool()
                .ok_or_else(|| self.error("recorded", "a boolean"))?,
            plan: PlanIdentity {
                id: self.string(&plan["id"], "plan.id")?,
                size: self.usize_of(&plan["size"], "plan.size")?,
            },
            sensors: self.sensors(&document["sensors"])?,
            project_path: Utf8PathBuf::from(
                self.string(&document["project_path"], "project_path")?,
            ),
        })
    }

    fn fire(&self, fire: &Value) -> Result<GateFire, MergeError> {
        let result = match fire["result"].as_str() {
            Some("passed") => FireResult::Passed,
            Some("failed") => FireResult::Failed {
                findings_count: self.u64_at(fire, "findings_count")?,
            },
            Some("not-evaluated") => FireResult::NotEvaluated {
                reason: self.string(&fire["note"], "fires[].note")?,
                budget: match &fire["budget"] {
                    Value::Null => None,
                    budget => Some(Budget {
                        cap_seconds: self.u64_at(budget, "cap_seconds")?,
                        observed_seconds: self.u64_at(budget, "observed_seconds")?,
                    }),
                },
            },
            _ => return Err(self.error("fires[].result", "passed, failed or not-evaluated")),
        };
        if let FireResult::NotEvaluated { reason, budget } = &result
            && budget.is_some() != (reason == BUDGET_EXCEEDED)
        {
            return Err(self.error("fires[].budget", "set exactly for a budget override"));
        }
        Ok(GateFire {
            stage: self.string(&fire["stage"], "fires[].stage")?,
            sensor_id: self.string(&fire["sensor_id"], "fires[].sensor_id")?,
            severity: self.severity(&fire["severity"], "fires[].severity")?,
            deliverable: self
                .string(&fire["deliverable"], "fires[].deliverable")?
                .into(),
            result,
            fire_id: self.optional_string(&fire["fire_id"], "fires[].fire_id")?,
            detail_path: self
                .optional_string(&fire["detail_path"], "fires[].detail_path")?
                .map(Utf8PathBuf::from),
            findings: self
                .array(&fire["findings"], "fires[].findings")?
                .iter()
                .map(|finding| self.finding(finding))
                .collect::<Result<_, _>>()?,
            duration: self.duration(&fire["duration_ms"], "fires[].duration_ms")?,
            stderr_tail: self
                .optional_string(&fire["stderr_tail"], "fires[].stderr_tail")?
                .unwrap_or_default(),
            plan_index: self.usize_of(&fire["plan_index"], "fires[].plan_index")?,
        })
    }

    fn finding(&self, finding: &Value) -> Result<Finding, MergeError> {
        let position = |key: &str| -> Result<Option<u64>, MergeError> {
            match &finding[key] {
                Value::Null => Ok(None),
                value => value
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| self.error(&format!("findings[].{key}"), "a whole number")),
            }
        };
        Ok(Finding {
            file: self.string(&finding["file"], "findings[].file")?.into(),
            rule: self.string(&finding["rule"], "findings[].rule")?,
            message: self.string(&finding["message"], "findings[].message")?,
            line: position("line")?,
            column: position("column")?,
            end_line: position("end_line")?,
            end_column: position("end_column")?,
            help: self.optional_string(&finding["help"], "findings[].help")?,
        })
    }

    fn skip(&self, skip: &Value) -> Result<GateSkip, MergeError> {
        let reason = match skip["reason"].as_str() {
            Some("no-glob-match") => SkipReason::NoGlobMatch,
            Some("no-deliverable") => SkipReason::NoDeliverable,
            Some("sensors-off") => SkipReason::SensorsOff,
            Some("other-fire-on") => SkipReason::OtherFireOn,
            Some("other-shard") => SkipReason::OtherShard,
            Some("not-a-regular-file") => SkipReason::NotARegularFile,
            _ => return Err(self.error("skips[].reason", "a known skip reason")),
        };
        Ok(GateSkip {
            stage: self.string(&skip["stage"], "skips[].stage")?,
            sensor_id: self.string(&skip["sensor_id"], "skips[].sensor_id")?,
            deliverable: self
                .optional_string(&skip["deliverable"], "skips[].deliverable")?
                .map(Utf8PathBuf::from),
            reason,
        })
    }

    fn unfired(&self, unfired: &Value) -> Result<UnfiredBinding, MergeError> {
        let cause = &unfired["cause"];
        let cause = match cause["kind"].as_str() {
            Some("no-deliverable") => UnfiredCause::NoDeliverable,
            Some("no-glob-match") => UnfiredCause::NoGlobMatch {
                deliverables: self.usize_of(&cause["deliverables"], "cause.deliverables")?,
            },
            Some("only-markers") => UnfiredCause::OnlyMarkers,
            Some("not-regular-files") => UnfiredCause::NotRegularFiles {
                described: self.strings(&cause["described"], "cause.described")?,
            },
            _ => return Err(self.error("unfired_bindings[].cause.kind", "a known cause")),
        };
        Ok(UnfiredBinding {
            stage: self.string(&unfired["stage"], "unfired_bindings[].stage")?,
            sensor_id: self.string(&unfired["sensor_id"], "unfired_bindings[].sensor_id")?,
            intent: self.string(&unfired["intent"], "unfired_bindings[].intent")?,
            manifest_path: self.string(
                &unfired["manifest_path"],
                "unfired_bindings[].manifest_path",
            )?,
            pattern: self.optional_string(&unfired["pattern"], "unfired_bindings[].pattern")?,
            declared_outputs: self.strings(
                &unfired["declared_outputs"],
                "unfired_bindings[].declared_outputs",
            )?,
            cause,
        })
    }

    fn sensors_off(&self, value: &Value) -> Result<Option<SensorsOff>, MergeError> {
        if value.is_null() {
            return Ok(None);
        }
        if value["environment"] == Value::Bool(true) {
            return Ok(Some(SensorsOff::Environment));
        }
        Ok(Some(SensorsOff::State {
            intents: self.strings(&value["state"], "plan.sensors_off.state")?,
        }))
    }

    fn sensors(&self, value: &Value) -> Result<BTreeMap<String, SensorInfo>, MergeError> {
        let object = value
            .as_object()
            .ok_or_else(|| self.error("sensors", "an object"))?;
        object
            .iter()
            .map(|(id, info)| {
                Ok((
                    id.clone(),
                    SensorInfo {
                        description: self.string(&info["description"], "sensors.description")?,
                        manifest_path: self
                            .string(&info["manifest_path"], "sensors.manifest_path")?,
                    },
                ))
            })
            .collect()
    }

    fn severity(&self, value: &Value, key: &str) -> Result<Severity, MergeError> {
        match value.as_str() {
            Some("blocking") => Ok(Severity::Blocking),
            Some("advisory") => Ok(Severity::Advisory),
            _ => Err(self.error(key, "blocking or advisory")),
        }
    }

    fn duration(&self, value: &Value, key: &str) -> Result<Duration, MergeError> {
        value
            .as_f64()
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .ok_or_else(|| self.error(key, "a non-negative number of milliseconds"))
    }

    fn array<'v>(&self, value: &'v Value, key: &str) -> Result<&'v Vec<Value>, MergeError> {
        value.as_array().ok_or_else(|| self.error(key, "an array"))
    }

    fn string(&self, value: &Value, key: &str) -> Result<String, MergeError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.error(key, "a string"))
    }

    fn optional_string(&self, value: &Value, key: &str) -> Result<Option<String>, MergeError> {
        match value {
            Value::Null => Ok(None),
            Value::String(text) => Ok(Some(text.clone())),
            _ => Err(self.error(key, "a string or null")),
        }
    }

    fn strings(&self, value: &Value, key: &str) -> Result<Vec<String>, MergeError> {
        self.array(value, key)?
            .iter()
            .map(|item| self.string(item, key))
            .collect()
    }

    fn u64_at(&self, object: &Value, key: &str) -> Result<u64, MergeError> {
        let field = key.rsplit('.').next().unwrap_or(key);
        object[field]
            .as_u64()
            .ok_or_else(|| self.error(key, "a whole number"))
    }

    fn usize_of(&self, value: &Value, key: &str) -> Result<usize, MergeError> {
        value
            .as_u64()
            .and_then(|number| usize::try_from(number).ok())
            .ok_or_else(|| self.error(key, "a whole number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::report::FireResult;
    use crate::report::render_json;

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
}
