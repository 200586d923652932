//! What the checks say (D36): the newest result of each (sensor, output) pair of a stage read
//! from the ledger, the gate row's `Sensor State`, and the failed-check sentences.
//!
//! Invariant: a noted pass or a budget override evaluated nothing, so it neither clears nor
//! replaces an earlier failure.

use crate::runtime::audit::ledger::{LedgerEntry, SensorOutcome};

/// At most this many failed-check sentences; the rest are counted in one more line (D36).
const MAX_NOTICE_SENTENCES: usize = 3;

/// The newest results the ledger holds for one (sensor, output) pair of a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensorResult {
    pub sensor_id: String,
    /// Project-relative, as the audit row holds it.
    pub output_path: String,
    /// The newest terminal row: `passed`, `failed(<n>)`, the note of a noted pass, or
    /// `budget-override`.
    pub state: String,
    /// The newest evaluation that decided, when it is a failure: a noted pass or a budget
    /// override evaluated nothing, so it neither clears nor replaces it.
    pub failure: Option<CheckFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    pub findings_count: u64,
    pub detail_path: Option<String>,
}

/// The results for `outputs` (project-relative) of stage `slug`, in order of first appearance.
/// A unit's gate skips rows that name another unit.
pub fn latest_sensor_results(
    entries: &[LedgerEntry],
    slug: &str,
    outputs: &[String],
    unit: Option<&str>,
) -> Vec<SensorResult> {
    let mut pairs: Vec<PairResults<'_>> = Vec::new();
    for entry in entries {
        let Some(outcome) = entry.event.sensor_outcome() else {
            continue;
        };
        if !is_result_for(outcome, slug, outputs, unit) {
            continue;
        }
        let fire = outcome.fire();
        let row = (entry, outcome);
        let decisive = is_decisive(outcome).then_some(row);
        match pairs.iter_mut().find(|pair| {
            pair.newest.1.fire().sensor_id == fire.sensor_id
                && pair.newest.1.fire().output_path_field == fire.output_path_field
        }) {
            Some(pair) => {
                if entry.is_after(pair.newest.0) {
                    pair.newest = row;
                }
                if decisive.is_some()
                    && pair
                        .newest_decisive
                        .is_none_or(|(known, _)| entry.is_after(known))
                {
                    pair.newest_decisive = decisive;
                }
            }
            None => pairs.push(PairResults {
                newest: row,
                newest_decisive: decisive,
            }),
        }
    }
    pairs
        .into_iter()
        .map(|pair| {
            let fire = pair.newest.1.fire();
            SensorResult {
                sensor_id: fire.sensor_id.clone(),
                output_path: fire.output_path_field.clone(),
                state: result_state(pair.newest.1),
                failure: pair
                    .newest_decisive
                    .and_then(|(_, outcome)| failure_of(outcome)),
            }
        })
        .collect()
}

/// The terminal rows of one (sensor, output) pair seen so far: the newest, and the newest that
/// decided.
struct PairResults<'e> {
    newest: (&'e LedgerEntry, SensorOutcome<'e>),
    newest_decisive: Option<(&'e LedgerEntry, SensorOutcome<'e>)>,
}

fn is_result_for(
    outcome: SensorOutcome<'_>,
    slug: &str,
    outputs: &[String],
    unit: Option<&str>,
) -> bool {
    let fire = outcome.fire();
    fire.stage_slug == slug
        && outputs.contains(&fire.output_path_field)
        && (unit.is_none() || outcome.unit().is_none_or(|row_unit| Some(row_unit) == unit))
}

/// A failure, or a pass that really evaluated (no note).
fn is_decisive(outcome: SensorOutcome<'_>) -> bool {
    match outcome {
        SensorOutcome::Failed(_) => true,
        SensorOutcome::Passed(passed) => passed.note.is_none(),
        SensorOutcome::BudgetOverride(_) => false,
    }
}

fn result_state(outcome: SensorOutcome<'_>) -> String {
    match outcome {
        SensorOutcome::Failed(failed) => format!("failed({})", failed.findings_count),
        SensorOutcome::Passed(passed) => passed.note.as_deref().unwrap_or("passed").to_owned(),
        SensorOutcome::BudgetOverride(_) => "budget-override".to_owned(),
    }
}

fn failure_of(outcome: SensorOutcome<'_>) -> Option<CheckFailure> {
    match outcome {
        SensorOutcome::Failed(failed) => Some(CheckFailure {
            findings_count: failed.findings_count,
            detail_path: failed.detail_path.clone(),
        }),
        _ => None,
    }
}

/// The gate row's `Sensor State`: `<id>@<path>=<state>` joined with `; `; `None` when no check
/// has a result on the stage's outputs.
pub fn sensor_state_field(results: &[SensorResult]) -> Option<String> {
    let entries: Vec<String> = results
        .iter()
        .map(|result| {
            format!(
                "{}@{}={}",
                result.sensor_id, result.output_path, result.state
            )
        })
        .collect();
    (!entries.is_empty()).then(|| entries.join("; "))
}

/// One sentence per check that still fails, at most three, then one line counting the rest.
pub fn failed_check_notices(results: &[SensorResult]) -> Vec<String> {
    let failing: Vec<(&SensorResult, &CheckFailure)> = results
        .iter()
        .filter_map(|result| result.failure.as_ref().map(|failure| (result, failure)))
        .collect();
    let mut notices: Vec<String> = failing
        .iter()
        .take(MAX_NOTICE_SENTENCES)
        .map(|(result, failure)| notice_sentence(result, failure))
        .collect();
    match failing.len().saturating_sub(MAX_NOTICE_SENTENCES) {
        0 => {}
        1 => notices.push("1 more check reports findings on this stage's outputs.".to_owned()),
        more => notices.push(format!(
            "{more} more checks report findings on this stage's outputs."
        )),
    }
    notices
}

/// `The <sensor-id> check reports <n> finding[s] in <basename> (details: <detail path>).`
fn notice_sentence(result: &SensorResult, failure: &CheckFailure) -> String {
    let basename = result
        .output_path
        .rsplit('/')
        .next()
        .unwrap_or(&result.output_path);
    let plural = if failure.findings_count == 1 { "" } else { "s" };
    format!(
        "The {} check reports {} finding{plural} in {basename} (details: {}).",
        result.sensor_id,
        failure.findings_count,
        failure.detail_path.as_deref().unwrap_or("none")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::audit::ledger::{SENSOR_FAILED, SENSOR_PASSED};
    use crate::runtime::gate::step::test_support::{block, shard};

    fn sensor_row(event: &str, id: &str, output: &str, extra: &[(&str, &str)]) -> String {
        let mut fields = vec![
            ("Fire id", "0000000a"),
            ("Sensor ID", id),
            ("Stage slug", "s"),
            ("Output path", output),
        ];
        fields.extend_from_slice(extra);
        block(event, &fields)
    }

    fn failed(id: &str, output: &str, count: &str) -> String {
        sensor_row(
            SENSOR_FAILED,
            id,
            output,
            &[("Detail path", "d.md"), ("Findings count", count)],
        )
    }

    #[test]
    fn the_latest_decisive_result_counts_and_a_noted_pass_clears_nothing() {
        let outputs = vec!["x/a.md".to_owned()];
        let noted = sensor_row(
            SENSOR_PASSED,
            "c",
            "x/a.md",
            &[("Note", "tool-unavailable")],
        );
        let rows = shard(&[failed("c", "x/a.md", "3"), noted]);
        let results = latest_sensor_results(&rows, "s", &outputs, None);
        assert_eq!(results[0].state, "tool-unavailable");
        assert_eq!(
            failed_check_notices(&results),
            ["The c check reports 3 findings in a.md (details: d.md)."]
        );
        let cleared = shard(&[
            failed("c", "x/a.md", "1"),
            sensor_row(SENSOR_PASSED, "c", "x/a.md", &[]),
        ]);
        let results = latest_sensor_results(&cleared, "s", &outputs, None);
        assert!(failed_check_notices(&results).is_empty());
        assert_eq!(sensor_state_field(&results).unwrap(), "c@x/a.md=passed");
        let other_output = latest_sensor_results(&rows, "s", &["x/b.md".to_owned()], None);
        assert!(
            other_output.is_empty(),
            "a check that never ran says nothing"
        );
    }

    #[test]
    fn at_most_three_sentences_then_a_count() {
        let outputs: Vec<String> = ["a.md", "b.md", "c.md"].map(str::to_owned).to_vec();
        let rows = shard(&[
            failed("one", "a.md", "1"),
            failed("one", "b.md", "2"),
            failed("one", "c.md", "4"),
            failed("two", "a.md", "5"),
        ]);
        let notices = failed_check_notices(&latest_sensor_results(&rows, "s", &outputs, None));
        assert_eq!(
            notices,
            [
                "The one check reports 1 finding in a.md (details: d.md).",
                "The one check reports 2 findings in b.md (details: d.md).",
                "The one check reports 4 findings in c.md (details: d.md).",
                "1 more check reports findings on this stage's outputs.",
            ]
        );
        let state = sensor_state_field(&latest_sensor_results(&rows, "s", &outputs, None));
        assert_eq!(
            state.unwrap(),
            "one@a.md=failed(1); one@b.md=failed(2); one@c.md=failed(4); two@a.md=failed(5)"
        );
    }

    #[test]
    fn a_units_gate_skips_rows_of_other_units() {
        let outputs = vec!["a.md".to_owned()];
        let rows = shard(&[sensor_row(
            SENSOR_FAILED,
            "c",
            "a.md",
            &[("Unit", "beta"), ("Findings count", "5")],
        )]);
        assert!(latest_sensor_results(&rows, "s", &outputs, Some("alpha")).is_empty());
        assert_eq!(latest_sensor_results(&rows, "s", &outputs, None).len(), 1);
    }
}
