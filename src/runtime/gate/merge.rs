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
//! - each shard must be what the project's own plan gives for it ([`check_against_plan`], with
//!   the plan `gate::check::plan_check` makes again for that shard): the same plan identity,
//!   exactly its fires (their places, stages, sensors, deliverables and severities) and what
//!   planning decides besides; a fire moved to another shard, a severity turned advisory or a
//!   plan id edited is refused, naming the shard and the fire;
//! - a passed or not-evaluated fire carries no finding and counts none, and every number is one
//!   the report can hold (a duration of more than [`MAX_DURATION_MS`] is refused): nothing read
//!   can make the merge panic;
//! - the merged report has no shard, its fires in plan order and its skips without the
//!   `another shard` ones: exactly the unsharded run's report, apart from timings, fire ids
//!   and detail paths.
//!
//! This file reads text it is given and returns values ([`check_shards_against_the_project`]
//! makes the project's plan again for each shard); `gate::command` reads the files.

use std::collections::BTreeMap;
use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::Value;

use crate::leaves::english::{counted, plural};
use crate::protocol::stage_node::GraphNode;
use crate::runtime::dispatch::time_limit::GateLimits;
use crate::runtime::gate::check::{CheckRequest, plan_check};
use crate::runtime::gate::gate_fires::PlannedFire;
use crate::runtime::gate::report::{
    BUDGET_EXCEEDED, Budget, DeadBinding, Finding, FireOnFilter, FireResult, GateFire, GateReport,
    GateSkip, JSON_SCHEMA_VERSION, PlanIdentity, SensorInfo, SensorsOff, Severity, SkipReason,
    UnfiredBinding, UnfiredCause, UnseenWritesNotice,
};
use crate::runtime::workspace::Workspace;

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
    Reader { name }.report(&document)
}

/// The longest duration a report may name, in milliseconds (about a hundred years): a longer one
/// is no measurement, and sums of such durations could not be represented.
pub const MAX_DURATION_MS: f64 = 3.2e12;

/// Refuse `report` (named `name`) unless it is what the project's plan gives for its shard:
/// `planned` and `units` are `PlannedCheck::planned_report` of the plan made again for the same
/// records, selection and shard. Names the shard and the fire that differ.
pub fn check_against_plan(
    name: &str,
    report: &GateReport,
    planned: &GateReport,
    units: &[PlannedFire],
) -> Result<(), MergeError> {
    let shard = match report.shard {
        Some((index, count)) => format!("{name} (shard {index}/{count})"),
        None => name.to_owned(),
    };
    if report.plan != planned.plan {
        return Err(refuse(format!(
            "{shard}: plan {} ({} fires) is not the plan the project gives for the same check, {} ({} fires): the graph, the deliverables or the report changed since the check; merge the reports of a check of this commit",
            short(&report.plan.id),
            report.plan.size,
            short(&planned.plan.id),
            planned.plan.size
        )));
    }
    for (field, agree) in planned_fields_agree(report, planned) {
        if !agree {
            return Err(refuse(format!(
                "{shard}: its {field} differ from what the project's plan gives; was the report changed after the check?"
            )));
        }
    }
    let mut expected = units.iter().peekable();
    for fire in &report.fires {
        let Some(unit) = units.iter().find(|unit| unit.plan_index == fire.plan_index) else {
            return Err(refuse(format!(
                "{shard}: fire {} ({} on {}, stage {}) is not one of this shard's fires in the project's plan; was it moved from another shard's report?",
                fire.plan_index, fire.sensor_id, fire.deliverable, fire.stage
            )));
        };
        let same_unit = unit.stage == fire.stage
            && unit.sensor_id == fire.sensor_id
            && unit.deliverable == fire.deliverable;
        if !same_unit {
            return Err(refuse(format!(
                "{shard}: fire {} is {} on {} (stage {}) in the report, but {} on {} (stage {}) in the project's plan",
                fire.plan_index,
                fire.sensor_id,
                fire.deliverable,
                fire.stage,
                unit.sensor_id,
                unit.deliverable,
                unit.stage
            )));
        }
        if unit.plugin != fire.plugin {
            return Err(refuse(format!(
                "{shard}: fire {} ({} on {}) names plugin {} for stage {} in the report, but the project's graph gives {}",
                fire.plan_index,
                fire.sensor_id,
                fire.deliverable,
                fire.plugin.as_deref().unwrap_or("(none, a core stage)"),
                fire.stage,
                unit.plugin.as_deref().unwrap_or("none (a core stage)")
            )));
        }
        if unit.severity != fire.severity {
            return Err(refuse(format!(
                "{shard}: fire {} ({} on {}) is {} in the report, but the project's graph makes it {}",
                fire.plan_index,
                fire.sensor_id,
                fire.deliverable,
                fire.severity.as_str(),
                unit.severity.as_str()
            )));
        }
        // Both lists are in plan order: a planned fire passed over is missing from the report.
        if let Some(missing) = expected.next_if(|next| next.plan_index != fire.plan_index) {
            return Err(missing_fire(&shard, missing));
        }
        expected.next();
    }
    match expected.next() {
        Some(missing) => Err(missing_fire(&shard, missing)),
        None => Ok(()),
    }
}

fn missing_fire(shard: &str, missing: &PlannedFire) -> MergeError {
    refuse(format!(
        "{shard}: fire {} ({} on {}, stage {}) of the project's plan is missing from the report",
        missing.plan_index, missing.sensor_id, missing.deliverable, missing.stage
    ))
}

/// Everything planning decides besides the fires, by name, and whether `report` and `planned`
/// agree on it.
fn planned_fields_agree(report: &GateReport, planned: &GateReport) -> [(&'static str, bool); 9] {
    [
        ("intents", report.intents == planned.intents),
        (
            "counts of stages and deliverables",
            report.stages_checked == planned.stages_checked
                && report.deliverables_found == planned.deliverables_found,
        ),
        ("skips", report.skips == planned.skips),
        (
            "dead bindings",
            report.dead_bindings == planned.dead_bindings,
        ),
        (
            "never-fired bindings",
            report.unfired_bindings == planned.unfired_bindings,
        ),
        (
            "selection (--stage, --fire-on)",
            report.stages == planned.stages && report.fire_on == planned.fire_on,
        ),
        (
            "counts of bindings",
            report.bindings_selected == planned.bindings_selected
                && report.bindings_not_selected == planned.bindings_not_selected,
        ),
        ("Sensors switch", report.sensors_off == planned.sensors_off),
        ("shard", report.shard == planned.shard),
    ]
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
    check_stage_plugins(shards)?;
    let missing: Vec<String> = (1..=count)
        .filter(|index| !by_index.contains_key(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "shard{} {} of the plan {} missing: pass every shard's report (the plan has {count} shards)",
            plural(missing.len()),
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
    // Each sensor as the first shard that names it describes it.
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

/// Every fire of a stage names the same plugin (or none) in every shard (D50): shards that
/// disagree were made from different graphs or edited, and the merge names both.
fn check_stage_plugins(shards: &[(String, GateReport)]) -> Result<(), MergeError> {
    let mut seen: BTreeMap<&str, (Option<&str>, &str)> = BTreeMap::new();
    for (name, report) in shards {
        for fire in &report.fires {
            let plugin = fire.plugin.as_deref();
            let (first_plugin, first_name) =
                *seen.entry(&fire.stage).or_insert((plugin, name.as_str()));
            if first_plugin != plugin {
                let named = |plugin: Option<&str>| {
                    plugin.map_or_else(
                        || "no plugin (core)".to_owned(),
                        |p| format!("plugin \"{p}\""),
                    )
                };
                return Err(refuse(format!(
                    "{first_name} and {name} disagree about the plugin of stage {}: {} in {first_name}, {} in {name}; merge the reports of one `aidlc gate check --shard K/N` matrix run on one commit",
                    fire.stage,
                    named(first_plugin),
                    named(plugin)
                )));
            }
        }
    }
    Ok(())
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
    // What planning decides besides the fires, except the shard and the `another shard` skips.
    let agree = planned_fields_agree(first, report)
        .into_iter()
        .all(|(field, agree)| agree || matches!(field, "skips" | "shard"))
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
///
/// A key names where it is read in the report (`fires[].stage`); its last segment is the field
/// read in the object it is given ([`field`]), so messages name the key as the report has it.
struct Reader<'a> {
    name: &'a str,
}

/// The value of `key`'s last segment in `object` (`fires[].stage` → `stage`); `null` when absent.
fn field<'v>(object: &'v Value, key: &str) -> &'v Value {
    &object[key.rsplit('.').next().unwrap_or(key)]
}

impl Reader<'_> {
    fn error(&self, key: &str, expected: &str) -> MergeError {
        refuse(format!(
            "{}: `{key}` is missing or not {expected}; is it a report of `aidlc gate check --format json`?",
            self.name
        ))
    }

    fn report(&self, document: &Value) -> Result<GateReport, MergeError> {
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
                self.number(shard, "shard.index")?,
                self.number(shard, "shard.count")?,
            )),
        };
        let fire_on = plan["fire_on"]
            .as_str()
            .and_then(|name| name.parse::<FireOnFilter>().ok())
            .ok_or_else(|| self.error("plan.fire_on", "gate, write or all"))?;
        Ok(GateReport {
            intents: self.strings(document, "intents")?,
            stages_checked: self.number(counts, "counts.stages_checked")?,
            deliverables_found: self.number(counts, "counts.deliverables_found")?,
            fires: self.each(document, "fires", |fire| self.fire(fire))?,
            skips: self.each(document, "skips", |skip| self.skip(skip))?,
            dead_bindings: self.each(document, "dead_bindings", |dead| {
                Ok(DeadBinding {
                    stage: self.string(dead, "dead_bindings[].stage")?,
                    sensor_id: self.string(dead, "dead_bindings[].sensor_id")?,
                    pattern: self.string(dead, "dead_bindings[].pattern")?,
                })
            })?,
            unfired_bindings: self.each(document, "unfired_bindings", |unfired| {
                self.unfired(unfired)
            })?,
            stages: self.stages(plan)?,
            fire_on,
            bindings_selected: self.number(plan, "plan.bindings_selected")?,
            bindings_not_selected: self.number(plan, "plan.bindings_not_selected")?,
            sensors_off: self.sensors_off(&plan["sensors_off"])?,
            duration: self.duration(document, "duration_ms")?,
            shard,
            recorded: document["recorded"]
                .as_bool()
                .ok_or_else(|| self.error("recorded", "a boolean"))?,
            plan: PlanIdentity {
                id: self.string(plan, "plan.id")?,
                size: self.number(plan, "plan.size")?,
            },
            sensors: self.sensors(&document["sensors"])?,
            project_path: Utf8PathBuf::from(self.string(document, "project_path")?),
            unseen_writes: self.unseen_writes(document.get("unseen_writes"))?,
        })
    }

    /// The notice of deliverables the write hook never saw: absent, or all of its keys.
    fn unseen_writes(
        &self,
        value: Option<&Value>,
    ) -> Result<Option<UnseenWritesNotice>, MergeError> {
        let Some(notice) = value else {
            return Ok(None);
        };
        if !notice.is_object() {
            return Err(self.error("unseen_writes", "an object"));
        }
        Ok(Some(UnseenWritesNotice {
            stage: self.string(notice, "unseen_writes.stage")?,
            files: self.strings(notice, "unseen_writes.files")?,
            message: self.string(notice, "unseen_writes.message")?,
        }))
    }

    fn fire(&self, fire: &Value) -> Result<GateFire, MergeError> {
        let result = match fire["result"].as_str() {
            Some("passed") => FireResult::Passed,
            Some("failed") => FireResult::Failed {
                findings_count: self.number(fire, "findings_count")?,
            },
            Some("not-evaluated") => FireResult::NotEvaluated {
                reason: self.string(fire, "fires[].note")?,
                budget: match &fire["budget"] {
                    Value::Null => None,
                    budget => Some(Budget {
                        cap_seconds: self.number(budget, "cap_seconds")?,
                        observed_seconds: self.number(budget, "observed_seconds")?,
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
        let gate_fire = GateFire {
            stage: self.string(fire, "fires[].stage")?,
            sensor_id: self.string(fire, "fires[].sensor_id")?,
            severity: self.severity(fire, "fires[].severity")?,
            deliverable: self.string(fire, "fires[].deliverable")?.into(),
            result,
            fire_id: self.optional_string(fire, "fires[].fire_id")?,
            detail_path: self
                .optional_string(fire, "fires[].detail_path")?
                .map(Utf8PathBuf::from),
            findings: self.each(fire, "fires[].findings", |finding| self.finding(finding))?,
            duration: self.duration(fire, "fires[].duration_ms")?,
            stderr_tail: self
                .optional_string(fire, "fires[].stderr_tail")?
                .unwrap_or_default(),
            plan_index: self.number(fire, "fires[].plan_index")?,
            // Absent on a core stage's fire; when present, a string (D50).
            plugin: fire
                .get("plugin")
                .map(|plugin| self.string_value(plugin, "fires[].plugin"))
                .transpose()?,
        };
        self.check_findings_of(&gate_fire, self.number(fire, "findings_count")?)?;
        Ok(gate_fire)
    }

    /// Only a failed fire has findings: a passed or not-evaluated one that lists or counts any
    /// was changed after the check (a failure turned into a pass).
    fn check_findings_of(&self, fire: &GateFire, findings_count: u64) -> Result<(), MergeError> {
        let failed = matches!(fire.result, FireResult::Failed { .. });
        if failed || (fire.findings.is_empty() && findings_count == 0) {
            return Ok(());
        }
        Err(refuse(format!(
            "{}: fire {} ({} on {}) is {} but carries {} (findings_count {findings_count}); only a failed fire has findings: was the report changed after the check?",
            self.name,
            fire.plan_index,
            fire.sensor_id,
            fire.deliverable,
            fire.outcome().as_str(),
            counted(fire.findings.len(), "finding"),
        )))
    }

    fn finding(&self, finding: &Value) -> Result<Finding, MergeError> {
        let position = |key: &str| -> Result<Option<u64>, MergeError> {
            match field(finding, key) {
                Value::Null => Ok(None),
                value => value
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| self.error(key, "a whole number")),
            }
        };
        Ok(Finding {
            file: self.string(finding, "findings[].file")?.into(),
            rule: self.string(finding, "findings[].rule")?,
            message: self.string(finding, "findings[].message")?,
            line: position("findings[].line")?,
            column: position("findings[].column")?,
            end_line: position("findings[].end_line")?,
            end_column: position("findings[].end_column")?,
            help: self.optional_string(finding, "findings[].help")?,
        })
    }

    fn skip(&self, skip: &Value) -> Result<GateSkip, MergeError> {
        let reason = skip["reason"]
            .as_str()
            .and_then(|key| key.parse::<SkipReason>().ok())
            .ok_or_else(|| self.error("skips[].reason", "a known skip reason"))?;
        Ok(GateSkip {
            stage: self.string(skip, "skips[].stage")?,
            sensor_id: self.string(skip, "skips[].sensor_id")?,
            deliverable: self
                .optional_string(skip, "skips[].deliverable")?
                .map(Utf8PathBuf::from),
            reason,
        })
    }

    fn unfired(&self, unfired: &Value) -> Result<UnfiredBinding, MergeError> {
        let cause = &unfired["cause"];
        let cause = match cause["kind"].as_str() {
            Some("no-deliverable") => UnfiredCause::NoDeliverable,
            Some("no-glob-match") => UnfiredCause::NoGlobMatch {
                deliverables: self.number(cause, "cause.deliverables")?,
            },
            Some("only-markers") => UnfiredCause::OnlyMarkers,
            Some("not-regular-files") => UnfiredCause::NotRegularFiles {
                described: self.strings(cause, "cause.described")?,
            },
            _ => return Err(self.error("unfired_bindings[].cause.kind", "a known cause")),
        };
        Ok(UnfiredBinding {
            stage: self.string(unfired, "unfired_bindings[].stage")?,
            sensor_id: self.string(unfired, "unfired_bindings[].sensor_id")?,
            intent: self.string(unfired, "unfired_bindings[].intent")?,
            manifest_path: self.string(unfired, "unfired_bindings[].manifest_path")?,
            pattern: self.optional_string(unfired, "unfired_bindings[].pattern")?,
            declared_outputs: self.strings(unfired, "unfired_bindings[].declared_outputs")?,
            cause,
            // Absent on a core stage's binding; when present, a string (D50).
            plugin: unfired
                .get("plugin")
                .map(|plugin| self.string_value(plugin, "unfired_bindings[].plugin"))
                .transpose()?,
        })
    }

    /// `plan.stages`, which older reports do not have.
    fn stages(&self, plan: &Value) -> Result<Vec<String>, MergeError> {
        if plan["stages"].is_null() {
            return Err(refuse(format!(
                "{}: `plan.stages` is missing: the report was written by an older aidlc; run every shard and the merge with the same aidlc version",
                self.name
            )));
        }
        self.strings(plan, "plan.stages")
    }

    fn sensors_off(&self, value: &Value) -> Result<Option<SensorsOff>, MergeError> {
        if value.is_null() {
            return Ok(None);
        }
        if value["environment"] == Value::Bool(true) {
            return Ok(Some(SensorsOff::Environment));
        }
        Ok(Some(SensorsOff::State {
            intents: self.strings(value, "plan.sensors_off.state")?,
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
                        description: self.string(info, "sensors.description")?,
                        manifest_path: self.string(info, "sensors.manifest_path")?,
                    },
                ))
            })
            .collect()
    }

    fn severity(&self, object: &Value, key: &str) -> Result<Severity, MergeError> {
        field(object, key)
            .as_str()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| self.error(key, "blocking or advisory"))
    }

    fn duration(&self, object: &Value, key: &str) -> Result<Duration, MergeError> {
        field(object, key)
            .as_f64()
            .filter(|ms| ms.is_finite() && (0.0..=MAX_DURATION_MS).contains(ms))
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
            .ok_or_else(|| {
                self.error(
                    key,
                    &format!("a number of milliseconds from 0 to {MAX_DURATION_MS:e}"),
                )
            })
    }

    /// Each item of the array at `key`, read by `read`.
    fn each<T>(
        &self,
        object: &Value,
        key: &str,
        read: impl Fn(&Value) -> Result<T, MergeError>,
    ) -> Result<Vec<T>, MergeError> {
        field(object, key)
            .as_array()
            .ok_or_else(|| self.error(key, "an array"))?
            .iter()
            .map(read)
            .collect()
    }

    fn string(&self, object: &Value, key: &str) -> Result<String, MergeError> {
        self.string_value(field(object, key), key)
    }

    fn string_value(&self, value: &Value, key: &str) -> Result<String, MergeError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.error(key, "a string"))
    }

    fn optional_string(&self, object: &Value, key: &str) -> Result<Option<String>, MergeError> {
        match field(object, key) {
            Value::Null => Ok(None),
            Value::String(text) => Ok(Some(text.clone())),
            _ => Err(self.error(key, "a string or null")),
        }
    }

    fn strings(&self, object: &Value, key: &str) -> Result<Vec<String>, MergeError> {
        self.each(object, key, |item| self.string_value(item, key))
    }

    fn number<T: TryFrom<u64>>(&self, object: &Value, key: &str) -> Result<T, MergeError> {
        field(object, key)
            .as_u64()
            .and_then(|number| T::try_from(number).ok())
            .ok_or_else(|| self.error(key, "a whole number"))
    }
}

/// Make each shard's plan again from the project, with the planning `gate check` uses, and
/// refuse a report that does not match it ([`check_against_plan`]). Errors name the shard.
pub fn check_shards_against_the_project(
    workspace: &Workspace,
    nodes: &[GraphNode],
    shards: &[(String, GateReport)],
) -> Result<(), String> {
    for (name, report) in shards {
        let records = report
            .intents
            .iter()
            .map(|intent| {
                workspace
                    .intent_records()
                    .iter()
                    .find(|record| record.file_name() == Some(intent.as_str()))
                    .cloned()
                    .ok_or_else(|| {
                        format!(
                            "{name} checked the intent {intent}, which the project at {} does not have",
                            workspace.project_dir()
                        )
                    })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let request = CheckRequest {
            stages: report.stages.clone(),
            fire_on: report.fire_on,
            shard: report.shard,
            jobs: 1,
            record: report.recorded,
            project_path: report.project_path.clone(),
            limits: GateLimits::default(),
        };
        let planned = plan_check(workspace, nodes, &records, &request)
            .map_err(|error| format!("{name}: the project's plan cannot be made: {error}"))?;
        let (planned_report, units) = planned.planned_report(workspace.project_dir());
        check_against_plan(name, report, &planned_report, &units)
            .map_err(|error| error.to_string())?;
    }
    Ok(())
}
