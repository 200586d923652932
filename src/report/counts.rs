//! The denominator every format carries (D4): how many sensors ran on how many files, the
//! non-evaluations by reason and the skips by reason, as counted lists for sentences and as
//! the `counts` object of the JSON document (which SARIF embeds too).
//!
//! Counting is done once, here; the formats only lay the figures out.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Serialize, Serializer};
use strum::VariantArray as _;

use crate::report::json_schema::SkippedByReason;
use crate::runtime::gate::report::{
    GateFire, GateReport, GateSkip, NEVER_FIRED, Outcome, SkipReason,
};

/// The number of distinct sensor ids among the fires.
pub(super) fn distinct_sensor_count(report: &GateReport) -> usize {
    report
        .fires
        .iter()
        .map(|fire| fire.sensor_id.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}

/// The reasons of the non-evaluations with their counts, in order of first appearance; the
/// blocking bindings that never fired come last, as `never-fired`.
pub(super) fn not_evaluated_reasons(report: &GateReport) -> Vec<(String, usize)> {
    count_in_order(
        report
            .fires
            .iter()
            .filter_map(GateFire::not_evaluated_reason)
            .chain(
                report
                    .unfired_bindings
                    .iter()
                    .map(|_| NEVER_FIRED.to_owned()),
            ),
    )
}

/// The figures of one stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct StageCounts {
    pub(super) fires: usize,
    pub(super) passed: usize,
    pub(super) failed: usize,
    /// Not-evaluated fires, and the blocking bindings that never fired there.
    pub(super) not_evaluated: usize,
    pub(super) skipped: usize,
}

/// The figures of each stage the report touched, in order of first appearance (fires, then
/// never-fired bindings, then skips).
pub(super) fn stage_counts(report: &GateReport) -> Vec<(&str, StageCounts)> {
    let mut stages: Vec<(&str, StageCounts)> = Vec::new();
    for fire in &report.fires {
        let counts = entry_in_order(&mut stages, &fire.stage);
        counts.fires += 1;
        match fire.outcome() {
            Outcome::Passed => counts.passed += 1,
            Outcome::Failed => counts.failed += 1,
            Outcome::NotEvaluated => counts.not_evaluated += 1,
        }
    }
    for unfired in &report.unfired_bindings {
        entry_in_order(&mut stages, &unfired.stage).not_evaluated += 1;
    }
    for skip in &report.skips {
        entry_in_order(&mut stages, &skip.stage).skipped += 1;
    }
    stages
}

/// The value of `key` in `entries`, added at the end (as `V::default()`) when it is new: the
/// keys are few (stages, reasons, sensors), so a linear search keeps the order of first
/// appearance.
pub(super) fn entry_in_order<K: PartialEq, V: Default>(
    entries: &mut Vec<(K, V)>,
    key: K,
) -> &mut V {
    let index = if let Some(index) = entries.iter().position(|(seen, _)| *seen == key) {
        index
    } else {
        entries.push((key, V::default()));
        entries.len() - 1
    };
    &mut entries[index].1
}

/// How many skips each reason has, in `SkipReason::VARIANTS` order, 0 included.
fn skips_by_reason(skips: &[GateSkip]) -> impl Iterator<Item = (&'static SkipReason, usize)> {
    SkipReason::VARIANTS.iter().map(|reason| {
        let count = skips.iter().filter(|skip| skip.reason == *reason).count();
        (reason, count)
    })
}

/// How many skips each reason has; reasons without a skip are left out.
pub(super) fn skip_reason_counts(skips: &[GateSkip]) -> Vec<(&'static SkipReason, usize)> {
    skips_by_reason(skips)
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// `values` with the number of times each occurs, in order of first occurrence.
pub(super) fn count_in_order<T: PartialEq>(values: impl Iterator<Item = T>) -> Vec<(T, usize)> {
    let mut counted = Vec::new();
    for value in values {
        *entry_in_order(&mut counted, value) += 1;
    }
    counted
}

/// `2 tool-unavailable, 1 script-error: exit-2`.
pub(super) fn counted_list(counted: &[(String, usize)]) -> String {
    counted
        .iter()
        .map(|(what, count)| format!("{count} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The figures every format shows.
//
// The `counts` object of the JSON document and of SARIF's run property bag, its keys in the
// order they are written.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Counts", deny_unknown_fields)]
pub(super) struct CountsDocument<'a> {
    /// Stages with at least one selected binding.
    stages_checked: u64,
    /// Declared deliverables found on disk.
    deliverables_found: u64,
    /// Distinct sensors among the fires.
    sensors: u64,
    /// Distinct files fired on.
    files: u64,
    /// Fires run.
    fires: u64,
    /// Fires that passed.
    passed: u64,
    /// Fires that failed with findings.
    failed: u64,
    /// Failed fires of blocking sensors.
    blocking_failed: u64,
    /// Fires that evaluated nothing, plus blocking bindings that never fired.
    not_evaluated: u64,
    /// The blocking ones among `not_evaluated`.
    blocking_not_evaluated: u64,
    /// Blocking bindings that never fired.
    never_fired: u64,
    /// Skips.
    skipped: u64,
    /// Skips by reason; every reason is present, with 0 when it did not occur.
    #[serde(serialize_with = "skips_by_every_reason")]
    #[schemars(with = "SkippedByReason")]
    skipped_by_reason: &'a [GateSkip],
    /// Dead bindings.
    dead_bindings: u64,
}

impl<'a> CountsDocument<'a> {
    pub(super) fn of(report: &'a GateReport) -> Self {
        let counts = report.counts();
        Self {
            stages_checked: report.stages_checked as u64,
            deliverables_found: report.deliverables_found as u64,
            sensors: distinct_sensor_count(report) as u64,
            files: counts.files as u64,
            fires: counts.fires as u64,
            passed: counts.passed as u64,
            failed: counts.failed as u64,
            blocking_failed: counts.blocking_failed as u64,
            not_evaluated: counts.not_evaluated as u64,
            blocking_not_evaluated: counts.blocking_not_evaluated as u64,
            never_fired: counts.never_fired as u64,
            skipped: counts.skipped as u64,
            skipped_by_reason: &report.skips,
            dead_bindings: report.dead_bindings.len() as u64,
        }
    }
}

fn skips_by_every_reason<S: Serializer>(
    skips: &&[GateSkip],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(skips_by_reason(skips))
}
