//! What the checks say (D36): the newest result of each (sensor, output) pair of a stage read
//! from the ledger, the gate row's `Sensor State`, and the failed-check sentences.
//!
//! Invariant: a noted pass or a budget override evaluated nothing, so it neither clears nor
//! replaces an earlier failure.

use crate::runtime::audit::ledger::{AuditEvent, LedgerEntry, SensorOutcome, TerminalRow};

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
        let AuditEvent::SensorTerminal(row) = &entry.event else {
            continue;
        };
        if !is_result_for(row, slug, outputs, unit) {
            continue;
        }
        let fire = &row.fire;
        let seen = (entry, row);
        let decisive = is_decisive(&row.outcome).then_some(seen);
        match pairs.iter_mut().find(|pair| {
            pair.newest.1.fire.sensor_id == fire.sensor_id
                && pair.newest.1.fire.output_path_field == fire.output_path_field
        }) {
            Some(pair) => {
                if entry.is_after(pair.newest.0) {
                    pair.newest = seen;
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
                newest: seen,
                newest_decisive: decisive,
            }),
        }
    }
    pairs
        .into_iter()
        .map(|pair| {
            let (_, newest) = pair.newest;
            SensorResult {
                sensor_id: newest.fire.sensor_id.clone(),
                output_path: newest.fire.output_path_field.clone(),
                state: result_state(&newest.outcome),
                failure: pair
                    .newest_decisive
                    .and_then(|(_, row)| failure_of(&row.outcome)),
            }
        })
        .collect()
}

/// The terminal rows of one (sensor, output) pair seen so far: the newest, and the newest that
/// decided.
struct PairResults<'e> {
    newest: (&'e LedgerEntry, &'e TerminalRow),
    newest_decisive: Option<(&'e LedgerEntry, &'e TerminalRow)>,
}

fn is_result_for(row: &TerminalRow, slug: &str, outputs: &[String], unit: Option<&str>) -> bool {
    row.fire.stage_slug == slug
        && outputs.contains(&row.fire.output_path_field)
        && (unit.is_none()
            || row
                .unit
                .as_deref()
                .is_none_or(|row_unit| Some(row_unit) == unit))
}

/// A failure, or a pass that really evaluated (no note).
fn is_decisive(outcome: &SensorOutcome) -> bool {
    match outcome {
        SensorOutcome::Failed { .. } => true,
        SensorOutcome::Passed { note } => note.is_none(),
        SensorOutcome::BudgetOverride => false,
    }
}

fn result_state(outcome: &SensorOutcome) -> String {
    match outcome {
        SensorOutcome::Failed { findings_count, .. } => format!("failed({findings_count})"),
        SensorOutcome::Passed { note } => note.as_deref().unwrap_or("passed").to_owned(),
        SensorOutcome::BudgetOverride => "budget-override".to_owned(),
    }
}

fn failure_of(outcome: &SensorOutcome) -> Option<CheckFailure> {
    match outcome {
        SensorOutcome::Failed {
            detail_path,
            findings_count,
        } => Some(CheckFailure {
            findings_count: *findings_count,
            detail_path: detail_path.clone(),
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
    format!(
        "The {} check reports {} in {basename} (details: {}).",
        result.sensor_id,
        crate::leaves::english::counted(failure.findings_count, "finding"),
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
