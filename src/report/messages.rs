//! The sentences every format shares: the summary line, the scope and blocking lines, and the
//! message of each kind of fire, finding, non-evaluation, dead binding and never-fired binding.
//!
//! Each sentence is written once, here, so that the human report, the annotations, the step
//! summary and SARIF say the same thing in the same words. Nothing here knows a format's
//! syntax (no escaping, no markup, no colour): the format files wrap these sentences.

use std::fmt::Write as _;
use std::time::Duration;

use crate::leaves::english::counted;
use crate::report::counts::{
    counted_list, distinct_sensor_count, not_evaluated_reasons, skip_reason_counts,
};
use crate::runtime::gate::report::Severity;
use crate::runtime::gate::report::{
    Budget, DeadBinding, GateCounts, GateFire, GateReport, NothingChecked, UnfiredBinding,
    last_lines,
};

/// The one-line summary every format carries: sensors × files, then each outcome with its
/// reasons.
pub fn summary_line(report: &GateReport) -> String {
    let counts = report.counts();
    let n_sensors = distinct_sensor_count(report);
    let mut line = format!(
        "checked {} × {}: {} passed, {} failed, {} not evaluated",
        counted(n_sensors, "sensor"),
        counted(counts.files, "file"),
        counts.passed,
        counts.failed,
        counts.not_evaluated,
    );
    let reasons = not_evaluated_reasons(report);
    if !reasons.is_empty() {
        let _ = write!(line, " ({})", counted_list(&reasons));
    }
    let _ = write!(line, ", {} skipped", counts.skipped);
    let skips = skip_reason_counts(&report.skips);
    if !skips.is_empty() {
        let by_reason: Vec<(String, usize)> = skips
            .iter()
            .map(|(reason, count)| (reason.as_str().to_owned(), *count))
            .collect();
        let _ = write!(line, " ({})", counted_list(&by_reason));
    }
    line
}

/// `gate check of intent X: 3 stages, 4 deliverables found`.
pub(super) fn scope_line(report: &GateReport) -> String {
    let intents = match report.intents.as_slice() {
        [] => String::new(),
        [intent] => format!(" of intent {intent}"),
        intents => format!(" of {} intents ({})", intents.len(), intents.join(", ")),
    };
    format!(
        "gate check{intents}: {}, {} found",
        counted(report.stages_checked, "stage"),
        counted(report.deliverables_found, "deliverable")
    )
}

/// Why the gate does not pass, when a blocking binding failed or was not evaluated (D4).
pub(super) fn blocking_line(counts: &GateCounts) -> Option<String> {
    let mut parts = Vec::new();
    if counts.blocking_failed > 0 {
        parts.push(format!("{} failed", counts.blocking_failed));
    }
    if counts.blocking_not_evaluated > 0 {
        parts.push(format!("{} not evaluated", counts.blocking_not_evaluated));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "blocking sensors: {}; the gate does not pass",
            parts.join(", ")
        )
    })
}

/// What a failed fire whose findings the report does not hold says (a failure always has at
/// least one finding; this is for reports read from elsewhere).
pub(super) fn failed_without_findings_message(fire: &GateFire) -> String {
    match fire.findings_count() {
        0 => "failed without counting a finding".to_owned(),
        1 => "failed with 1 finding".to_owned(),
        n => format!("failed with {n} findings"),
    }
}

/// The help of a not-evaluated fire: the last lines its worker wrote on stderr, and where the
/// detail file is.
pub(super) fn not_evaluated_help(fire: &GateFire) -> Option<String> {
    let tail = last_lines(&fire.stderr_tail, STDERR_LINES_IN_HELP);
    let mut help = Vec::new();
    if !tail.is_empty() {
        help.push(format!("the worker's stderr ended with:\n{tail}"));
    }
    if let Some(detail_path) = &fire.detail_path {
        help.push(format!("details in {detail_path}"));
    }
    (!help.is_empty()).then(|| help.join("\n"))
}

/// How many lines of a worker's stderr a help shows (the detail file and the JSON keep more).
pub(super) const STDERR_LINES_IN_HELP: usize = 5;

/// `message; details in P` when the failure has a detail file.
pub(super) fn with_detail_path(mut message: String, fire: &GateFire) -> String {
    if let Some(detail_path) = &fire.detail_path {
        let _ = write!(message, "; details in {detail_path}");
    }
    message
}

/// Why nothing was checked, with the budget figures when the budget ran out.
pub(super) fn not_evaluated_detail(fire: &GateFire) -> String {
    let reason = fire.not_evaluated_reason().unwrap_or_default();
    match fire.budget() {
        Some(Budget {
            cap_seconds,
            observed_seconds,
        }) => format!("{reason} (cap {cap_seconds} s, observed {observed_seconds} s)"),
        None => reason,
    }
}

/// The full sentence for a not-evaluated fire; a blocking one says what it means for the gate.
pub(super) fn not_evaluated_message(fire: &GateFire) -> String {
    let mut message = format!(
        "{} was not evaluated on stage {}: {}",
        fire.sensor_id,
        fire.stage,
        not_evaluated_detail(fire)
    );
    if fire.severity == Severity::Blocking {
        message.push_str("; a blocking sensor that was not evaluated does not pass the gate");
    }
    message
}

/// The full sentence for a blocking binding that never fired (every format uses it).
pub(super) fn unfired_message(unfired: &UnfiredBinding) -> String {
    let mut message = format!(
        "{} was not evaluated on stage {}: {}",
        unfired.sensor_id,
        unfired.stage,
        unfired.reason()
    );
    // D50: a plugin stage's binding names its plugin; a core stage's sentence is unchanged.
    if let Some(plugin) = &unfired.plugin {
        let _ = write!(message, " [plugin {plugin}]");
    }
    message
}

/// `nothing was checked: <why>`.
pub(super) fn nothing_checked_message(nothing: &NothingChecked) -> String {
    format!("nothing was checked: {}", nothing.reason())
}

/// Failure mode N2, in the words the summaries use.
pub(super) fn dead_binding_message(dead: &DeadBinding) -> String {
    if dead.pattern.is_empty() {
        return format!(
            "sensor {} on stage {} can never fire: the stage declares no outputs for it to check",
            dead.sensor_id, dead.stage
        );
    }
    format!(
        "sensor {} on stage {} can never fire: its glob {} matches none of the stage's declared outputs",
        dead.sensor_id, dead.stage, dead.pattern
    )
}

/// The lines that close every summary: what a sharded report says about its shard (that only
/// its share ran, or that it has none), and that nothing was recorded under `--no-record`.
pub(super) fn closing_lines(report: &GateReport) -> Vec<String> {
    let shard = report.shard.map(|(index, count)| {
        if report.empty_share().is_some() {
            format!(
                "shard {index} of {count}: none of the plan's {} is this shard's; the other shards run them, and `aidlc gate merge` judges the whole plan",
                counted(report.plan.size, "fire")
            )
        } else {
            format!("shard {index} of {count}: only this shard's share of the fires ran")
        }
    });
    let not_recorded = (!report.recorded).then(|| NOT_RECORDED_MESSAGE.to_owned());
    shard.into_iter().chain(not_recorded).collect()
}

pub(super) const NOT_RECORDED_MESSAGE: &str =
    "not recorded (--no-record): no audit rows or detail files were written";

/// Milliseconds, rounded to the microsecond.
pub(super) fn duration_ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}
