//! Turning a [`GateReport`] into text: diagnostics and a summary for people, one JSON document
//! for tools, GitHub Actions workflow commands and a step summary for CI, and SARIF 2.1.0 for
//! code scanning.
//!
//! Every renderer is a pure function of the report (and of the arguments it names): it reads
//! no environment, prints nothing, and returns text without a trailing newline, which the
//! printer adds. Fires, findings, skips and dead bindings keep the report's order.
//!
//! Invariants every format keeps (D4, failure-modes N2 and §5.12):
//! - a not-evaluated fire is always shown with its reason, never folded into the passes;
//! - a blocking binding that never fired is shown as a blocking non-evaluation, with the same
//!   reason ([`UnfiredBinding::reason`]) in every format;
//! - the denominator is always there: how many sensors ran on how many files, and what was
//!   skipped and why, and a report that evaluated nothing says why ([`NothingChecked`]), so
//!   that "nothing was checked" cannot look green;
//! - a dead binding is always named.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use camino::Utf8Path;
use serde_json::{Map, Value, json};

use crate::dispatch::verdict::Verdict;
use crate::gate::report::{
    DeadBinding, Finding, GateCounts, GateFire, GateReport, GateSkip, NEVER_FIRED, NothingChecked,
    Outcome, Severity, SkipReason, UnfiredBinding,
};

/// The version of the JSON document [`render_json`] writes; bump it when a key changes meaning
/// or goes away (adding a key is compatible).
pub const JSON_FORMAT_VERSION: u64 = 1;

/// The `$schema` of the SARIF log, as GitHub code scanning and most viewers expect it.
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub const SARIF_VERSION: &str = "2.1.0";

/// Every skip reason, in the order the summaries list them.
static SKIP_REASONS: [SkipReason; 6] = [
    SkipReason::NoGlobMatch,
    SkipReason::NoDeliverable,
    SkipReason::SensorsOff,
    SkipReason::OtherFireOn,
    SkipReason::OtherShard,
    SkipReason::NotARegularFile,
];

// ---------------------------------------------------------------------------------------------
// Wording shared by every format

/// The one-line summary every format carries: sensors × files, then each outcome with its
/// reasons.
pub fn summary_line(report: &GateReport) -> String {
    let counts = report.counts();
    let n_sensors = distinct_sensor_count(report);
    let mut line = format!(
        "checked {n_sensors} sensor{} × {} file{}: {} passed, {} failed, {} not evaluated",
        plural(n_sensors),
        counts.files,
        plural(counts.files),
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

/// The number of distinct sensor ids among the fires.
fn distinct_sensor_count(report: &GateReport) -> usize {
    let mut ids: Vec<&str> = report
        .fires
        .iter()
        .map(|fire| fire.sensor_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

/// The reasons of the non-evaluations with their counts, in order of first appearance; the
/// blocking bindings that never fired come last, as `never-fired`.
fn not_evaluated_reasons(report: &GateReport) -> Vec<(String, usize)> {
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

/// How many skips each reason has; reasons without a skip are left out.
fn skip_reason_counts(skips: &[GateSkip]) -> Vec<(&'static SkipReason, usize)> {
    SKIP_REASONS
        .iter()
        .map(|reason| {
            let count = skips.iter().filter(|skip| skip.reason == *reason).count();
            (reason, count)
        })
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// `values` with the number of times each occurs, in order of first occurrence.
fn count_in_order(values: impl Iterator<Item = String>) -> Vec<(String, usize)> {
    let mut counted: Vec<(String, usize)> = Vec::new();
    for value in values {
        match counted.iter_mut().find(|(seen, _)| *seen == value) {
            Some((_, count)) => *count += 1,
            None => counted.push((value, 1)),
        }
    }
    counted
}

/// `2 tool-unavailable, 1 script-error: exit-2`.
fn counted_list(counted: &[(String, usize)]) -> String {
    counted
        .iter()
        .map(|(what, count)| format!("{count} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A finding's message, with its rule when the sensor named one.
fn finding_message(finding: &Finding) -> String {
    match &finding.rule {
        Some(rule) => format!("{} ({rule})", finding.message),
        None => finding.message.clone(),
    }
}

/// The finding's line and column when they are real positions (1-based); a column without a
/// line is dropped, since no viewer can place it.
fn known_position(finding: &Finding) -> (Option<u64>, Option<u64>) {
    let line = finding.line.filter(|line| *line >= 1);
    let column = line.and(finding.column.filter(|column| *column >= 1));
    (line, column)
}

/// `file`, `file:line` or `file:line:col`.
fn finding_location(finding: &Finding) -> String {
    match known_position(finding) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", finding.file),
        (Some(line), None) => format!("{}:{line}", finding.file),
        _ => finding.file.to_string(),
    }
}

/// What a failed fire without structured findings says instead (every format shows the sensor
/// id beside it).
fn failed_without_findings_message(fire: &GateFire) -> String {
    match fire.findings_count() {
        0 => "failed without counting a finding".to_owned(),
        1 => "failed with 1 finding".to_owned(),
        n => format!("failed with {n} findings"),
    }
}

/// Why nothing was checked, with the budget figures when the budget ran out.
fn not_evaluated_detail(fire: &GateFire) -> String {
    let reason = fire.not_evaluated_reason().unwrap_or_default();
    match &fire.verdict {
        Verdict::BudgetOverride {
            cap_seconds,
            observed_seconds,
        } => format!("{reason} (cap {cap_seconds} s, observed {observed_seconds} s)"),
        _ => reason,
    }
}

/// The full sentence for a not-evaluated fire; a blocking one says what it means for the gate.
fn not_evaluated_message(fire: &GateFire) -> String {
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
fn unfired_message(unfired: &UnfiredBinding) -> String {
    format!(
        "{} was not evaluated on stage {}: {}",
        unfired.sensor_id,
        unfired.stage,
        unfired.reason()
    )
}

/// `nothing was checked: <why>`.
fn nothing_checked_message(nothing: &NothingChecked) -> String {
    format!("nothing was checked: {}", nothing.reason())
}

/// Failure-modes N2, in the words the summaries use.
fn dead_binding_message(dead: &DeadBinding) -> String {
    format!(
        "sensor {} on stage {} can never fire: its glob {} matches none of the stage's declared outputs",
        dead.sensor_id, dead.stage, dead.pattern
    )
}

fn shard_message(index: u64, count: u64) -> String {
    format!("shard {index} of {count}: only this shard's share of the fires ran")
}

const NOT_RECORDED_MESSAGE: &str =
    "not recorded (--no-record): no audit rows or detail files were written";

/// Milliseconds, rounded to the microsecond.
fn duration_ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

// ---------------------------------------------------------------------------------------------
// Human

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
struct Paint {
    color: bool,
}

impl Paint {
    const RESET: &'static str = "\u{1b}[0m";
    const BOLD_RED: &'static str = "\u{1b}[1;31m";
    const BOLD_YELLOW: &'static str = "\u{1b}[1;33m";
    const BOLD_BLUE: &'static str = "\u{1b}[1;34m";
    const BOLD: &'static str = "\u{1b}[1m";

    fn style(self, style: &str, text: &str) -> String {
        if self.color {
            format!("{style}{text}{}", Self::RESET)
        } else {
            text.to_owned()
        }
    }

    fn error(self, text: &str) -> String {
        self.style(Self::BOLD_RED, text)
    }

    fn warning(self, text: &str) -> String {
        self.style(Self::BOLD_YELLOW, text)
    }

    fn accent(self, text: &str) -> String {
        self.style(Self::BOLD_BLUE, text)
    }

    fn bold(self, text: &str) -> String {
        self.style(Self::BOLD, text)
    }

    /// `error` for a blocking binding, `warning` for an advisory one.
    fn level(self, severity: Severity) -> String {
        match severity {
            Severity::Blocking => self.error("error"),
            Severity::Advisory => self.warning("warning"),
        }
    }
}

/// Diagnostics in the compile's look (`error[code]: message` then `--> file:line:col`), one
/// per finding of a failed fire and one per not-evaluated fire, then the summary block.
/// Passed fires are only counted. `color` adds ANSI styles.
pub fn render_human(report: &GateReport, color: bool) -> String {
    let paint = Paint { color };
    let mut blocks: Vec<String> = report
        .fires
        .iter()
        .flat_map(|fire| human_fire_blocks(fire, report.recorded, paint))
        .collect();
    blocks.extend(
        report
            .unfired_bindings
            .iter()
            .map(|unfired| human_unfired_block(unfired, paint)),
    );
    blocks.push(human_summary(report, paint));
    blocks.join("\n\n")
}

fn human_unfired_block(unfired: &UnfiredBinding, paint: Paint) -> String {
    human_diagnostic(
        &paint.error("error"),
        &unfired.sensor_id,
        &format!("not evaluated: {}", unfired.reason()),
        &format!("stage {} of intent {}", unfired.stage, unfired.intent),
        &format!(
            "stage {}, blocking; its glob is set in {}",
            unfired.stage, unfired.manifest_path
        ),
        paint,
    )
}

fn human_fire_blocks(fire: &GateFire, recorded: bool, paint: Paint) -> Vec<String> {
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => {
            vec![human_failed_fire_block(fire, recorded, paint)]
        }
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| human_finding_block(fire, finding, recorded, paint))
            .collect(),
        Outcome::NotEvaluated => vec![human_not_evaluated_block(fire, paint)],
    }
}

/// `error[sensor]: message`, the location arrow, and one `=` note line.
fn human_diagnostic(
    level: &str,
    sensor_id: &str,
    message: &str,
    location: &str,
    note: &str,
    paint: Paint,
) -> String {
    format!(
        "{level}{}\n  {} {location}\n  {} {note}",
        paint.bold(&format!("[{sensor_id}]: {message}")),
        paint.accent("-->"),
        paint.accent("="),
    )
}

fn human_finding_block(fire: &GateFire, finding: &Finding, recorded: bool, paint: Paint) -> String {
    human_diagnostic(
        &paint.level(fire.severity),
        &fire.sensor_id,
        &finding_message(finding),
        &finding_location(finding),
        &human_failure_note(fire, recorded),
        paint,
    )
}

fn human_failed_fire_block(fire: &GateFire, recorded: bool, paint: Paint) -> String {
    human_diagnostic(
        &paint.level(fire.severity),
        &fire.sensor_id,
        &failed_without_findings_message(fire),
        fire.deliverable.as_str(),
        &human_failure_note(fire, recorded),
        paint,
    )
}

/// `stage X, blocking; details in P`, saying so when the details were not recorded and when
/// the sensor counted more findings than it listed.
fn human_failure_note(fire: &GateFire, recorded: bool) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    let listed = u64::try_from(fire.findings.len()).unwrap_or(u64::MAX);
    if !fire.findings.is_empty() && fire.findings_count() > listed {
        let _ = write!(note, ", {} findings in all", fire.findings_count());
    }
    match (&fire.detail_path, recorded) {
        (Some(detail_path), _) => {
            let _ = write!(note, "; details in {detail_path}");
        }
        (None, false) => note.push_str("; details not recorded (--no-record)"),
        (None, true) => {}
    }
    note
}

fn human_not_evaluated_block(fire: &GateFire, paint: Paint) -> String {
    let mut note = format!("stage {}, {}", fire.stage, fire.severity.as_str());
    if fire.severity == Severity::Blocking {
        note.push_str(": a blocking sensor that was not evaluated does not pass the gate");
    }
    human_diagnostic(
        &paint.warning("warning"),
        &fire.sensor_id,
        &format!("not evaluated: {}", not_evaluated_detail(fire)),
        fire.deliverable.as_str(),
        &note,
        paint,
    )
}

/// The closing block: what was checked, the counts, the blocking verdict, dead bindings, the
/// shard and whether anything was recorded.
fn human_summary(report: &GateReport, paint: Paint) -> String {
    let counts = report.counts();
    let mut lines = vec![paint.bold(&scope_line(report))];
    lines.push(format!(
        "{} in {:.1} ms",
        summary_line(report),
        duration_ms(report.duration)
    ));
    if let Some(line) = blocking_line(&counts) {
        lines.push(paint.error(&line));
    } else if let Some(nothing) = report.nothing_checked() {
        lines.push(paint.warning(&nothing_checked_message(&nothing)));
    }
    for dead in &report.dead_bindings {
        lines.push(format!(
            "{}: {}",
            paint.warning("dead binding"),
            dead_binding_message(dead)
        ));
    }
    if let Some((index, count)) = report.shard {
        lines.push(shard_message(index, count));
    }
    if !report.recorded {
        lines.push(NOT_RECORDED_MESSAGE.to_owned());
    }
    lines.join("\n")
}

/// `gate check of intent X: 3 stages, 4 deliverables found`.
fn scope_line(report: &GateReport) -> String {
    let intents = match report.intents.as_slice() {
        [] => String::new(),
        [intent] => format!(" of intent {intent}"),
        intents => format!(" of {} intents ({})", intents.len(), intents.join(", ")),
    };
    format!(
        "gate check{intents}: {} stage{}, {} deliverable{} found",
        report.stages_checked,
        plural(report.stages_checked),
        report.deliverables_found,
        plural(report.deliverables_found)
    )
}

/// Why the gate does not pass, when a blocking binding failed or was not evaluated (D4).
fn blocking_line(counts: &GateCounts) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// JSON

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
        "counts": json_counts(report),
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

fn json_counts(report: &GateReport) -> Value {
    let counts = report.counts();
    let skipped_by_reason: Map<String, Value> = SKIP_REASONS
        .iter()
        .map(|reason| {
            let count = report
                .skips
                .iter()
                .filter(|skip| skip.reason == *reason)
                .count();
            (skip_reason_key(reason).to_owned(), json!(count))
        })
        .collect();
    json!({
        "stages_checked": report.stages_checked,
        "deliverables_found": report.deliverables_found,
        "sensors": distinct_sensor_count(report),
        "files": counts.files,
        "fires": counts.fires,
        "passed": counts.passed,
        "failed": counts.failed,
        "blocking_failed": counts.blocking_failed,
        "not_evaluated": counts.not_evaluated,
        "blocking_not_evaluated": counts.blocking_not_evaluated,
        "never_fired": counts.never_fired,
        "skipped": counts.skipped,
        "skipped_by_reason": skipped_by_reason,
        "dead_bindings": report.dead_bindings.len(),
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

/// The kebab-case token of a skip reason, for machines (the prose is `SkipReason::as_str`).
pub fn skip_reason_key(reason: &SkipReason) -> &'static str {
    match reason {
        SkipReason::NoGlobMatch => "no-glob-match",
        SkipReason::NoDeliverable => "no-deliverable",
        SkipReason::SensorsOff => "sensors-off",
        SkipReason::OtherFireOn => "other-fire-on",
        SkipReason::OtherShard => "other-shard",
        SkipReason::NotARegularFile => "not-a-regular-file",
    }
}

// ---------------------------------------------------------------------------------------------
// GitHub Actions

/// Workflow commands, one per line: `::error` for each finding of a blocking failure and for
/// each blocking binding that never fired (anchored to its manifest), `::warning` for an
/// advisory finding, for every not-evaluated fire and when nothing was checked, `::notice` for
/// each dead binding, and a closing `::notice` with the summary line.
pub fn render_github_annotations(report: &GateReport) -> String {
    let mut lines: Vec<String> = report.fires.iter().flat_map(github_fire_lines).collect();
    for unfired in &report.unfired_bindings {
        lines.push(workflow_command(
            "error",
            &[
                ("file", unfired.manifest_path.as_str()),
                ("title", &format!("{} never fired", unfired.sensor_id)),
            ],
            &unfired_message(unfired),
        ));
    }
    if let Some(nothing) = report.nothing_checked() {
        lines.push(workflow_command(
            "warning",
            &[("title", "nothing checked")],
            &nothing_checked_message(&nothing),
        ));
    }
    for dead in &report.dead_bindings {
        lines.push(workflow_command(
            "notice",
            &[("title", "dead sensor binding")],
            &dead_binding_message(dead),
        ));
    }
    lines.push(workflow_command(
        "notice",
        &[("title", "aidlc gate check")],
        &summary_line(report),
    ));
    lines.join("\n")
}

fn github_fire_lines(fire: &GateFire) -> Vec<String> {
    let command = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![workflow_command(
            command,
            &[
                ("file", fire.deliverable.as_str()),
                ("title", &fire.sensor_id),
            ],
            &with_detail_path(failed_without_findings_message(fire), fire),
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| github_finding_line(command, fire, finding))
            .collect(),
        Outcome::NotEvaluated => vec![workflow_command(
            "warning",
            &[
                ("file", fire.deliverable.as_str()),
                ("title", &format!("{} not evaluated", fire.sensor_id)),
            ],
            &not_evaluated_message(fire),
        )],
    }
}

fn github_finding_line(command: &str, fire: &GateFire, finding: &Finding) -> String {
    let (line, column) = known_position(finding);
    let line = line.map(|line| line.to_string());
    let column = column.map(|column| column.to_string());
    let mut properties = vec![("file", finding.file.as_str())];
    if let Some(line) = &line {
        properties.push(("line", line));
    }
    if let Some(column) = &column {
        properties.push(("col", column));
    }
    properties.push(("title", &fire.sensor_id));
    workflow_command(command, &properties, &finding_message(finding))
}

/// `message; details in P` when the failure has a detail file.
fn with_detail_path(mut message: String, fire: &GateFire) -> String {
    if let Some(detail_path) = &fire.detail_path {
        let _ = write!(message, "; details in {detail_path}");
    }
    message
}

/// `::command key=value,key=value::message`, escaped by the workflow-command rules.
fn workflow_command(command: &str, properties: &[(&str, &str)], message: &str) -> String {
    let properties = properties
        .iter()
        .map(|(key, value)| format!("{key}={}", escape_property(value)))
        .collect::<Vec<_>>()
        .join(",");
    let separator = if properties.is_empty() { "" } else { " " };
    format!(
        "::{command}{separator}{properties}::{}",
        escape_data(message)
    )
}

/// The escaping of a command's message (as `diagnostics::render` does it).
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value also escapes the `:` and `,` that would end it.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Markdown for `$GITHUB_STEP_SUMMARY`: the summary line, a table of counts, then the
/// failures (with their detail files), the non-evaluations, the dead bindings and the skips.
pub fn render_github_step_summary(report: &GateReport) -> String {
    let mut sections = vec![
        format!(
            "### aidlc {}\n\n{}",
            markdown_text(&scope_line(report)),
            markdown_text(&summary_line(report))
        ),
        markdown_counts_table(report),
    ];
    let counts = report.counts();
    if let Some(line) = blocking_line(&counts) {
        sections.push(format!("**{}**", markdown_text(&line)));
    } else if let Some(nothing) = report.nothing_checked() {
        sections.push(format!(
            "**{}**",
            markdown_text(&nothing_checked_message(&nothing))
        ));
    }
    let failures: Vec<String> = report
        .fires
        .iter()
        .filter(|fire| fire.outcome() == Outcome::Failed)
        .map(markdown_failure_item)
        .collect();
    push_markdown_list(&mut sections, "Failures", &failures);
    let not_evaluated: Vec<String> = report
        .fires
        .iter()
        .filter(|fire| fire.outcome() == Outcome::NotEvaluated)
        .map(markdown_not_evaluated_item)
        .chain(report.unfired_bindings.iter().map(markdown_unfired_item))
        .collect();
    push_markdown_list(&mut sections, "Not evaluated", &not_evaluated);
    let dead: Vec<String> = report
        .dead_bindings
        .iter()
        .map(markdown_dead_binding_item)
        .collect();
    push_markdown_list(&mut sections, "Dead bindings", &dead);
    let skipped: Vec<String> = skip_reason_counts(&report.skips)
        .iter()
        .map(|(reason, count)| format!("- {}: {count}", markdown_text(reason.as_str())))
        .collect();
    push_markdown_list(&mut sections, "Skipped", &skipped);
    let footer = markdown_footer(report);
    if !footer.is_empty() {
        sections.push(footer);
    }
    sections.join("\n\n")
}

fn markdown_counts_table(report: &GateReport) -> String {
    let counts = report.counts();
    let with_blocking = |total: usize, blocking: usize| {
        if blocking > 0 {
            format!("{total} ({blocking} blocking)")
        } else {
            total.to_string()
        }
    };
    let rows = [
        ("stages", report.stages_checked.to_string()),
        ("deliverables", report.deliverables_found.to_string()),
        ("sensors", distinct_sensor_count(report).to_string()),
        ("files", counts.files.to_string()),
        ("fires", counts.fires.to_string()),
        ("passed", counts.passed.to_string()),
        (
            "failed",
            with_blocking(counts.failed, counts.blocking_failed),
        ),
        (
            "not evaluated",
            with_blocking(counts.not_evaluated, counts.blocking_not_evaluated),
        ),
        ("never fired (blocking)", counts.never_fired.to_string()),
        ("skipped", counts.skipped.to_string()),
        ("dead bindings", report.dead_bindings.len().to_string()),
    ];
    let mut table = String::from("| | count |\n| --- | ---: |");
    for (what, count) in rows {
        let _ = write!(table, "\n| {what} | {count} |");
    }
    table
}

fn push_markdown_list(sections: &mut Vec<String>, heading: &str, items: &[String]) {
    if !items.is_empty() {
        sections.push(format!("#### {heading}\n\n{}", items.join("\n")));
    }
}

/// One list item: the sensor in bold, its severity, deliverable and stage, the number of
/// findings and the detail file.
fn markdown_failure_item(fire: &GateFire) -> String {
    let count = fire.findings_count();
    let mut item = format!(
        "- **{}** ({}) on {} (stage {}): {count} finding{}",
        markdown_text(&fire.sensor_id),
        fire.severity.as_str(),
        code_span(fire.deliverable.as_str()),
        code_span(&fire.stage),
        if count == 1 { "" } else { "s" },
    );
    if let Some(detail_path) = &fire.detail_path {
        let _ = write!(item, "; details in {}", code_span(detail_path.as_str()));
    }
    item
}

fn markdown_not_evaluated_item(fire: &GateFire) -> String {
    format!(
        "- **{}** ({}) on {} (stage {}): {}",
        markdown_text(&fire.sensor_id),
        fire.severity.as_str(),
        code_span(fire.deliverable.as_str()),
        code_span(&fire.stage),
        markdown_text(&not_evaluated_detail(fire)),
    )
}

fn markdown_unfired_item(unfired: &UnfiredBinding) -> String {
    format!(
        "- **{}** (blocking) on stage {} of intent {}: {}",
        markdown_text(&unfired.sensor_id),
        code_span(&unfired.stage),
        code_span(&unfired.intent),
        markdown_text(&unfired.reason()),
    )
}

fn markdown_dead_binding_item(dead: &DeadBinding) -> String {
    format!(
        "- sensor {} on stage {} can never fire: its glob {} matches none of the stage's declared outputs",
        code_span(&dead.sensor_id),
        code_span(&dead.stage),
        code_span(&dead.pattern),
    )
}

fn markdown_footer(report: &GateReport) -> String {
    let mut lines = Vec::new();
    if let Some((index, count)) = report.shard {
        lines.push(markdown_text(&shard_message(index, count)));
    }
    if !report.recorded {
        lines.push(markdown_text(NOT_RECORDED_MESSAGE));
    }
    lines.join("\n\n")
}

/// Plain text that Markdown shows as typed: one line, punctuation that could start markup
/// escaped with a backslash.
fn markdown_text(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '&' | '!' => {
                escaped.push('\\');
                escaped.push(character);
            }
            '\r' | '\n' => escaped.push(' '),
            _ => escaped.push(character),
        }
    }
    escaped
}

/// A Markdown code span holding `text` verbatim, whatever backticks it contains.
fn code_span(text: &str) -> String {
    let one_line = text.replace(['\r', '\n'], " ");
    let longest_run = one_line
        .split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    let padding = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{padding}{one_line}{padding}{fence}")
}

// ---------------------------------------------------------------------------------------------
// SARIF

/// A SARIF 2.1.0 log with one run: one rule per sensor id that fired or never fired, one result
/// per finding (a failed fire without structured findings gives one result on its
/// deliverable), one `warning` result per not-evaluated fire, one `error` result per blocking
/// binding that never fired (on its manifest), and an invocation whose `executionSuccessful`
/// is false when anything was not evaluated or nothing was checked. Dead bindings are tool configuration notifications.
/// A sharded run gets its own `automationDetails.id`, so that code scanning keeps the shards
/// apart.
pub fn render_sarif(report: &GateReport, tool_version: &str) -> String {
    serde_json::to_string_pretty(&sarif_document(report, tool_version))
        .expect("a JSON value always serialises")
}

/// The value [`render_sarif`] prints.
pub fn sarif_document(report: &GateReport, tool_version: &str) -> Value {
    let rule_ids = sarif_rule_ids(report);
    let results: Vec<Value> = report
        .fires
        .iter()
        .flat_map(|fire| sarif_fire_results(fire, &rule_ids))
        .chain(
            report
                .unfired_bindings
                .iter()
                .map(|unfired| sarif_unfired_result(unfired, &rule_ids)),
        )
        .collect();
    let mut run = Map::new();
    run.insert(
        "tool".to_owned(),
        json!({"driver": {
            "name": "aidlc",
            "version": tool_version,
            "rules": rule_ids.keys_in_order.iter().map(|id| sarif_rule(id)).collect::<Vec<_>>(),
        }}),
    );
    if let Some((index, count)) = report.shard {
        run.insert(
            "automationDetails".to_owned(),
            json!({"id": format!("aidlc-gate/shard-{index}-of-{count}/")}),
        );
    }
    run.insert(
        "invocations".to_owned(),
        json!([sarif_invocation(report, &rule_ids)]),
    );
    run.insert("results".to_owned(), Value::Array(results));
    run.insert("properties".to_owned(), sarif_run_properties(report));
    json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [Value::Object(run)],
    })
}

/// The rule ids of a run, in order of first appearance, with each one's index.
struct SarifRuleIds<'report> {
    keys_in_order: Vec<&'report str>,
    index: BTreeMap<&'report str, usize>,
}

fn sarif_rule_ids(report: &GateReport) -> SarifRuleIds<'_> {
    let mut ids = SarifRuleIds {
        keys_in_order: Vec::new(),
        index: BTreeMap::new(),
    };
    let fired = report.fires.iter().map(|fire| fire.sensor_id.as_str());
    let unfired = report
        .unfired_bindings
        .iter()
        .map(|unfired| unfired.sensor_id.as_str());
    for id in fired.chain(unfired) {
        if !ids.index.contains_key(id) {
            ids.index.insert(id, ids.keys_in_order.len());
            ids.keys_in_order.push(id);
        }
    }
    ids
}

/// A blocking binding that never fired: an `error` result anchored to the manifest that holds
/// its glob, since no deliverable was read.
fn sarif_unfired_result(unfired: &UnfiredBinding, rule_ids: &SarifRuleIds<'_>) -> Value {
    json!({
        "ruleId": unfired.sensor_id,
        "ruleIndex": rule_ids.index[unfired.sensor_id.as_str()],
        "level": "error",
        "message": {"text": unfired_message(unfired)},
        "locations": [sarif_location(Utf8Path::new(&unfired.manifest_path), None, None)],
        "properties": {
            "stage": unfired.stage,
            "severity": Severity::Blocking.as_str(),
            "result": Outcome::NotEvaluated.as_str(),
            "note": NEVER_FIRED,
            "intent": unfired.intent,
        },
    })
}

fn sarif_rule(sensor_id: &str) -> Value {
    json!({
        "id": sensor_id,
        "name": sensor_id,
        "shortDescription": {"text": format!("AI-DLC sensor {sensor_id}")},
    })
}

fn sarif_fire_results(fire: &GateFire, rule_ids: &SarifRuleIds<'_>) -> Vec<Value> {
    let rule_index = rule_ids.index[fire.sensor_id.as_str()];
    let level = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![sarif_result(
            fire,
            rule_index,
            level,
            &with_detail_path(failed_without_findings_message(fire), fire),
            &sarif_location(&fire.deliverable, None, None),
            None,
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| {
                let (line, column) = known_position(finding);
                sarif_result(
                    fire,
                    rule_index,
                    level,
                    &finding_message(finding),
                    &sarif_location(&finding.file, line, column),
                    finding.rule.as_deref(),
                )
            })
            .collect(),
        Outcome::NotEvaluated => vec![sarif_result(
            fire,
            rule_index,
            "warning",
            &not_evaluated_message(fire),
            &sarif_location(&fire.deliverable, None, None),
            None,
        )],
    }
}

fn sarif_result(
    fire: &GateFire,
    rule_index: usize,
    level: &str,
    message: &str,
    location: &Value,
    finding_rule: Option<&str>,
) -> Value {
    json!({
        "ruleId": fire.sensor_id,
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": message},
        "locations": [location],
        "properties": sarif_fire_properties(fire, finding_rule),
    })
}

/// The fire's identity in the result's property bag; absent values are left out.
fn sarif_fire_properties(fire: &GateFire, finding_rule: Option<&str>) -> Value {
    let mut properties = Map::new();
    properties.insert("stage".to_owned(), json!(fire.stage));
    properties.insert("severity".to_owned(), json!(fire.severity.as_str()));
    properties.insert("result".to_owned(), json!(fire.outcome().as_str()));
    properties.insert("deliverable".to_owned(), json!(fire.deliverable.as_str()));
    if let Some(rule) = finding_rule {
        properties.insert("findingRule".to_owned(), json!(rule));
    }
    if let Some(reason) = fire.not_evaluated_reason() {
        properties.insert("note".to_owned(), json!(reason));
    }
    if let Some(fire_id) = &fire.fire_id {
        properties.insert("fireId".to_owned(), json!(fire_id));
    }
    if let Some(detail_path) = &fire.detail_path {
        properties.insert("detailPath".to_owned(), json!(detail_path.as_str()));
    }
    Value::Object(properties)
}

/// A physical location: the file as a relative URI, and a region only when a line is known.
fn sarif_location(file: &Utf8Path, line: Option<u64>, column: Option<u64>) -> Value {
    let mut physical = Map::new();
    physical.insert(
        "artifactLocation".to_owned(),
        json!({"uri": path_to_uri_reference(file)}),
    );
    if let Some(line) = line {
        let mut region = Map::new();
        region.insert("startLine".to_owned(), json!(line));
        if let Some(column) = column {
            region.insert("startColumn".to_owned(), json!(column));
        }
        physical.insert("region".to_owned(), Value::Object(region));
    }
    json!({"physicalLocation": Value::Object(physical)})
}

fn sarif_invocation(report: &GateReport, rule_ids: &SarifRuleIds<'_>) -> Value {
    let counts = report.counts();
    let nothing_checked = report.nothing_checked();
    let mut invocation = Map::new();
    invocation.insert(
        "executionSuccessful".to_owned(),
        json!(counts.not_evaluated == 0 && nothing_checked.is_none()),
    );
    let mut execution_notifications: Vec<Value> = report
        .fires
        .iter()
        .filter(|fire| fire.outcome() == Outcome::NotEvaluated)
        .map(|fire| sarif_not_evaluated_notification(fire, rule_ids))
        .collect();
    execution_notifications.extend(report.unfired_bindings.iter().map(|unfired| {
        json!({
            "level": "error",
            "message": {"text": unfired_message(unfired)},
            "associatedRule": {
                "id": unfired.sensor_id,
                "index": rule_ids.index[unfired.sensor_id.as_str()],
            },
        })
    }));
    if let Some(nothing) = &nothing_checked {
        execution_notifications.push(json!({
            "level": "warning",
            "message": {"text": nothing_checked_message(nothing)},
        }));
    }
    if !execution_notifications.is_empty() {
        invocation.insert(
            "toolExecutionNotifications".to_owned(),
            Value::Array(execution_notifications),
        );
    }
    let configuration_notifications: Vec<Value> = report
        .dead_bindings
        .iter()
        .map(sarif_dead_binding_notification)
        .collect();
    if !configuration_notifications.is_empty() {
        invocation.insert(
            "toolConfigurationNotifications".to_owned(),
            Value::Array(configuration_notifications),
        );
    }
    Value::Object(invocation)
}

/// A dead binding names its sensor in the property bag, not as a rule reference: the sensor
/// never fired, so it has no rule in this run.
fn sarif_dead_binding_notification(dead: &DeadBinding) -> Value {
    json!({
        "level": "warning",
        "message": {"text": dead_binding_message(dead)},
        "properties": {
            "stage": dead.stage,
            "sensorId": dead.sensor_id,
            "pattern": dead.pattern,
        },
    })
}

fn sarif_not_evaluated_notification(fire: &GateFire, rule_ids: &SarifRuleIds<'_>) -> Value {
    let level = match fire.severity {
        Severity::Blocking => "error",
        Severity::Advisory => "warning",
    };
    json!({
        "level": level,
        "message": {"text": not_evaluated_message(fire)},
        "locations": [sarif_location(&fire.deliverable, None, None)],
        "associatedRule": {
            "id": fire.sensor_id,
            "index": rule_ids.index[fire.sensor_id.as_str()],
        },
    })
}

/// The denominator (D4) in the run's property bag.
fn sarif_run_properties(report: &GateReport) -> Value {
    json!({
        "intents": report.intents,
        "recorded": report.recorded,
        "summary": summary_line(report),
        "counts": json_counts(report),
    })
}

/// A project-relative path as a URI reference: `/` separators kept, every byte outside the
/// unreserved and sub-delimiter characters percent-encoded. `:` is encoded too, so that a first
/// segment like `c:` is never read as a scheme.
fn path_to_uri_reference(path: &Utf8Path) -> String {
    let mut uri = String::with_capacity(path.as_str().len());
    for byte in path.as_str().bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@/".contains(&byte);
        if keep {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use camino::Utf8PathBuf;
    use serde_json::json;

    use super::*;
    use crate::dispatch::verdict::ScriptError;
    use crate::gate::report::UnfiredCause;

    const RECORD: &str = "aidlc/spaces/default/intents/260101-login";

    fn path(relative: &str) -> Utf8PathBuf {
        Utf8PathBuf::from(format!("{RECORD}/{relative}"))
    }

    fn fire(stage: &str, sensor_id: &str, severity: Severity, deliverable: &str) -> GateFire {
        GateFire {
            stage: stage.to_owned(),
            sensor_id: sensor_id.to_owned(),
            severity,
            deliverable: path(deliverable),
            verdict: Verdict::Passed,
            fire_id: Some("0a1b2c3d".to_owned()),
            detail_path: None,
            findings: Vec::new(),
            duration: Duration::from_micros(12_345),
            artifact_changed: false,
        }
    }

    fn failed(mut fire: GateFire, findings_count: u64, fire_id: &str) -> GateFire {
        fire.verdict = Verdict::Failed {
            findings_count,
            worker_json: json!({"pass": false, "findings_count": findings_count}),
        };
        fire.fire_id = Some(fire_id.to_owned());
        fire.detail_path = Some(
            format!(
                "{RECORD}/.aidlc-engine/sensors/{}/{}-{fire_id}.md",
                fire.stage, fire.sensor_id
            )
            .into(),
        );
        fire
    }

    fn not_evaluated(mut fire: GateFire, verdict: Verdict) -> GateFire {
        fire.verdict = verdict;
        fire
    }

    fn skip(
        stage: &str,
        sensor_id: &str,
        deliverable: Option<&str>,
        reason: SkipReason,
    ) -> GateSkip {
        GateSkip {
            stage: stage.to_owned(),
            sensor_id: sensor_id.to_owned(),
            deliverable: deliverable.map(path),
            reason,
        }
    }

    /// Every case the renderers must show: a pass, a blocking failure with positions, an
    /// advisory failure with a finding but no line, an advisory failure without structured
    /// findings, a blocking tool-unavailable, a budget override, a script error, a blocking
    /// fire whose file changed under it, a blocking binding that never fired, one skip of each
    /// reason, a dead binding, and shard 2 of 4.
    fn sample_report() -> GateReport {
        let requirements = "inception/requirements-analysis/requirements.md";
        let design = "construction/application-design/components.md";
        let mut blocking_failure = failed(
            fire(
                "requirements-analysis",
                "required-sections",
                Severity::Blocking,
                requirements,
            ),
            3,
            "1b2c3d4e",
        );
        blocking_failure.findings = vec![
            Finding {
                file: path(requirements),
                line: Some(12),
                column: Some(3),
                rule: Some("missing-heading".to_owned()),
                message: "missing section \"## Risks\"".to_owned(),
            },
            Finding {
                file: path(requirements),
                line: Some(40),
                column: None,
                rule: None,
                message: "section \"## Scope\" is empty".to_owned(),
            },
        ];
        let mut advisory_failure = failed(
            fire(
                "requirements-analysis",
                "upstream-coverage",
                Severity::Advisory,
                requirements,
            ),
            1,
            "2c3d4e5f",
        );
        advisory_failure.findings = vec![Finding {
            file: path(requirements),
            line: None,
            column: None,
            rule: Some("unreferenced-artifact".to_owned()),
            message: "the upstream artifact intent.md is never referenced".to_owned(),
        }];
        GateReport {
            intents: vec!["260101-login".to_owned()],
            stages_checked: 3,
            deliverables_found: 2,
            fires: vec![
                fire(
                    "requirements-analysis",
                    "claim-sources",
                    Severity::Advisory,
                    requirements,
                ),
                blocking_failure,
                advisory_failure,
                failed(
                    fire(
                        "application-design",
                        "claim-sources",
                        Severity::Advisory,
                        design,
                    ),
                    4,
                    "3d4e5f60",
                ),
                not_evaluated(
                    fire("application-design", "linter", Severity::Blocking, design),
                    Verdict::ToolUnavailable,
                ),
                not_evaluated(
                    fire(
                        "application-design",
                        "type-check",
                        Severity::Advisory,
                        design,
                    ),
                    Verdict::BudgetOverride {
                        cap_seconds: 300,
                        observed_seconds: 301,
                    },
                ),
                not_evaluated(
                    fire(
                        "application-design",
                        "traceability",
                        Severity::Advisory,
                        design,
                    ),
                    Verdict::ScriptError(ScriptError::Exit(2)),
                ),
                GateFire {
                    artifact_changed: true,
                    ..fire(
                        "application-design",
                        "required-sections",
                        Severity::Blocking,
                        design,
                    )
                },
            ],
            skips: vec![
                skip(
                    "requirements-analysis",
                    "linter",
                    Some(requirements),
                    SkipReason::NoGlobMatch,
                ),
                skip(
                    "application-design",
                    "required-sections",
                    Some(design),
                    SkipReason::NoGlobMatch,
                ),
                skip(
                    "units-generation",
                    "required-sections",
                    None,
                    SkipReason::NoDeliverable,
                ),
                skip(
                    "workflow-planning",
                    "claim-sources",
                    None,
                    SkipReason::SensorsOff,
                ),
                skip(
                    "application-design",
                    "upstream-coverage",
                    Some(design),
                    SkipReason::OtherFireOn,
                ),
                skip(
                    "application-design",
                    "required-sections",
                    Some("construction/application-design/services.md"),
                    SkipReason::OtherShard,
                ),
                skip(
                    "application-design",
                    "claim-sources",
                    Some("construction/application-design/interfaces.md"),
                    SkipReason::NotARegularFile,
                ),
            ],
            dead_bindings: vec![DeadBinding {
                stage: "reverse-engineering".to_owned(),
                sensor_id: "required-sections".to_owned(),
                pattern: "**/{aidlc-docs,intents}/**".to_owned(),
            }],
            unfired_bindings: vec![UnfiredBinding {
                stage: "application-design".to_owned(),
                sensor_id: "api-contract".to_owned(),
                intent: "260101-login".to_owned(),
                manifest_path: ".claude/sensors/aidlc-api-contract.md".to_owned(),
                pattern: Some("**/*.ts".to_owned()),
                declared_outputs: vec!["components.md".to_owned(), "services.md".to_owned()],
                cause: UnfiredCause::NoGlobMatch { deliverables: 2 },
            }],
            bindings_selected: 9,
            duration: Duration::from_micros(48_300),
            shard: Some((2, 4)),
            recorded: true,
            ..GateReport::default()
        }
    }

    /// A `--no-record` run: no fire ids, no detail files, one advisory failure.
    fn no_record_report() -> GateReport {
        let mut failure = fire(
            "requirements-analysis",
            "claim-sources",
            Severity::Advisory,
            "inception/requirements-analysis/requirements.md",
        );
        failure.verdict = Verdict::Failed {
            findings_count: 1,
            worker_json: json!({"pass": false, "findings_count": 1}),
        };
        failure.fire_id = None;
        GateReport {
            intents: vec!["260101-login".to_owned(), "260102-billing".to_owned()],
            stages_checked: 1,
            deliverables_found: 1,
            fires: vec![failure],
            duration: Duration::from_millis(5),
            recorded: false,
            ..GateReport::default()
        }
    }

    // --- human

    #[test]
    fn human_output_matches_the_snapshot() {
        insta::assert_snapshot!("human", render_human(&sample_report(), false));
    }

    #[test]
    fn human_output_shows_every_piece() {
        let text = render_human(&sample_report(), false);
        let expected = [
            "error[required-sections]: missing section \"## Risks\" (missing-heading)\n  --> aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md:12:3",
            "requirements.md:40\n",
            "warning[upstream-coverage]: the upstream artifact intent.md is never referenced (unreferenced-artifact)\n  --> aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md\n",
            "warning[claim-sources]: failed with 4 findings\n  --> aidlc/spaces/default/intents/260101-login/construction/application-design/components.md\n",
            "details in aidlc/spaces/default/intents/260101-login/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md",
            "stage requirements-analysis, blocking, 3 findings in all",
            "warning[linter]: not evaluated: tool-unavailable",
            "a blocking sensor that was not evaluated does not pass the gate",
            "warning[type-check]: not evaluated: sensor execution exceeded its budget (cap 300 s, observed 301 s)",
            "warning[traceability]: not evaluated: script-error: exit-2",
            "gate check of intent 260101-login: 3 stages, 2 deliverables found",
            "warning[required-sections]: not evaluated: artifact-changed\n  --> aidlc/spaces/default/intents/260101-login/construction/application-design/components.md",
            "error[api-contract]: not evaluated: blocking sensor never fired: its glob matches none of the stage's 2 deliverables; glob \"**/*.ts\"; declared outputs: components.md, services.md; a blocking sensor that never fired has not passed\n  --> stage application-design of intent 260101-login\n  = stage application-design, blocking; its glob is set in .claude/sensors/aidlc-api-contract.md",
            "checked 6 sensors × 2 files: 1 passed, 3 failed, 5 not evaluated (1 tool-unavailable, 1 sensor execution exceeded its budget, 1 script-error: exit-2, 1 artifact-changed, 1 never-fired), 7 skipped (2 no glob match, 1 no deliverable, 1 sensors off, 1 not selected by --fire-on, 1 another shard, 1 not a regular file) in 48.3 ms",
            "blocking sensors: 1 failed, 3 not evaluated; the gate does not pass",
            "dead binding: sensor required-sections on stage reverse-engineering can never fire: its glob **/{aidlc-docs,intents}/** matches none of the stage's declared outputs",
            "shard 2 of 4",
        ];
        for piece in expected {
            assert!(text.contains(piece), "missing {piece:?} in:\n{text}");
        }
        assert!(!text.contains("--no-record"), "{text}");
        assert!(!text.contains('\u{1b}'), "no colour unless asked");
        assert!(!text.ends_with('\n'));
    }

    #[test]
    fn passed_fires_are_counted_not_listed() {
        let mut report = sample_report();
        report.fires.truncate(1);
        report.unfired_bindings.clear();
        let text = render_human(&report, false);
        assert!(!text.contains("claim-sources"), "{text}");
        assert!(text.contains("checked 1 sensor × 1 file: 1 passed, 0 failed"));
        assert!(!text.contains("the gate does not pass"));
    }

    #[test]
    fn human_no_record_says_so() {
        let text = render_human(&no_record_report(), false);
        insta::assert_snapshot!("human_no_record", text);
        assert!(text.contains("details not recorded (--no-record)"));
        assert!(text.contains(NOT_RECORDED_MESSAGE));
        assert!(text.contains("gate check of 2 intents (260101-login, 260102-billing)"));
    }

    #[test]
    fn an_empty_report_is_never_green() {
        let text = render_human(&GateReport::default(), false);
        assert!(text.contains(
            "checked 0 sensors × 0 files: 0 passed, 0 failed, 0 not evaluated, 0 skipped"
        ));
        assert!(text.contains("nothing was checked"));
    }

    #[test]
    fn colour_is_ansi_only_when_asked() {
        let text = render_human(&sample_report(), true);
        assert!(text.contains("\u{1b}[1;31merror\u{1b}[0m"), "{text}");
        assert!(text.contains("\u{1b}[1;33mwarning\u{1b}[0m"), "{text}");
        let stripped = strip_ansi(&text);
        assert_eq!(stripped, render_human(&sample_report(), false));
    }

    fn strip_ansi(text: &str) -> String {
        let mut out = String::new();
        let mut in_escape = false;
        for character in text.chars() {
            match (in_escape, character) {
                (false, '\u{1b}') => in_escape = true,
                (true, 'm') => in_escape = false,
                (true, _) => {}
                (false, _) => out.push(character),
            }
        }
        out
    }

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

    // --- GitHub

    #[test]
    fn github_annotations_match_the_snapshot() {
        insta::assert_snapshot!("github", render_github_annotations(&sample_report()));
    }

    #[test]
    fn github_annotations_use_the_level_of_each_case() {
        let text = render_github_annotations(&sample_report());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(
            "::error file=aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md,line=12,col=3,title=required-sections::missing section"
        ));
        assert!(lines[1].contains(",line=40,title=required-sections::"));
        assert!(lines[2].starts_with("::warning file="));
        assert!(!lines[2].contains("line="));
        assert!(lines[3].contains("title=claim-sources::failed with 4 findings; details in "));
        assert!(lines[4].starts_with("::warning file="));
        assert!(lines[4].contains("title=linter not evaluated::linter was not evaluated on stage application-design: tool-unavailable; a blocking sensor"));
        assert!(
            lines[5].contains("sensor execution exceeded its budget (cap 300 s, observed 301 s)")
        );
        assert!(lines[6].contains("script-error: exit-2"));
        assert!(lines[7].starts_with("::warning file="));
        assert!(lines[7].contains("title=required-sections not evaluated::required-sections was not evaluated on stage application-design: artifact-changed; a blocking sensor"));
        assert!(lines[8].starts_with("::error file=.claude/sensors/aidlc-api-contract.md,title=api-contract never fired::api-contract was not evaluated on stage application-design: blocking sensor never fired: its glob matches none"), "{}", lines[8]);
        assert!(lines[9].starts_with("::notice title=dead sensor binding::sensor required-sections on stage reverse-engineering can never fire"));
        assert!(
            lines[10].starts_with("::notice title=aidlc gate check::checked 6 sensors × 2 files")
        );
        assert_eq!(lines.len(), 11);
    }

    #[test]
    fn an_empty_report_says_why_nothing_was_checked_in_every_format() {
        let report = GateReport {
            intents: vec!["260101-login".to_owned()],
            stages_checked: 2,
            bindings_not_selected: 4,
            ..GateReport::default()
        };
        let nothing = report.nothing_checked().expect("nothing was checked");
        let sentence = "nothing was checked: no gate-fired binding: the install's sensors are all write-fired (4 bindings)";
        assert!(nothing.help().contains("`--fire-on all` checks them"));
        assert!(render_human(&report, false).contains(sentence));
        let json: Value = serde_json::from_str(&render_json(&report)).unwrap();
        assert_eq!(json["nothing_checked"]["reason"], json!(nothing.reason()));
        assert!(
            render_github_annotations(&report)
                .contains(&format!("::warning title=nothing checked::{sentence}"))
        );
        assert!(
            render_github_step_summary(&report)
                .contains("**nothing was checked: no gate-fired binding: the install's sensors")
        );
        let sarif: Value = serde_json::from_str(&render_sarif(&report, "0.1.0")).unwrap();
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], json!(false));
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["message"]["text"],
            json!(sentence)
        );
    }

    #[test]
    fn github_escapes_data_and_properties() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![Finding {
            file: "docs/a:b,c%.md".into(),
            line: Some(1),
            column: Some(2),
            rule: None,
            message: "100% wrong\r\nsecond: line, here".to_owned(),
        }];
        report.fires[0].sensor_id = "odd:id,x".to_owned();
        let text = render_github_annotations(&report);
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "::warning file=docs/a%3Ab%2Cc%25.md,line=1,col=2,title=odd%3Aid%2Cx::100%25 wrong%0D%0Asecond: line, here"
        );
    }

    #[test]
    fn a_zero_line_is_not_a_position() {
        let mut report = no_record_report();
        report.fires[0].findings = vec![Finding {
            file: "a.md".into(),
            line: Some(0),
            column: Some(4),
            rule: None,
            message: "m".to_owned(),
        }];
        let text = render_github_annotations(&report);
        assert!(
            text.starts_with("::warning file=a.md,title=claim-sources::m"),
            "{text}"
        );
        let sarif: Value = serde_json::from_str(&render_sarif(&report, "0.1.0")).unwrap();
        let location = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
        assert_eq!(location.get("region"), None);
    }

    #[test]
    fn step_summary_matches_the_snapshot() {
        insta::assert_snapshot!("step_summary", render_github_step_summary(&sample_report()));
    }

    #[test]
    fn step_summary_has_the_table_and_the_failures_with_detail_paths() {
        let text = render_github_step_summary(&sample_report());
        assert!(text.contains("| | count |\n| --- | ---: |\n| stages | 3 |"));
        assert!(text.contains("| failed | 3 (1 blocking) |"));
        assert!(text.contains("| not evaluated | 5 (3 blocking) |"));
        assert!(text.contains("| never fired (blocking) | 1 |"));
        assert!(
            text.contains(
                "**blocking sensors: 1 failed, 3 not evaluated; the gate does not pass**"
            )
        );
        assert!(text.contains("- **api-contract** (blocking) on stage `application-design` of intent `260101-login`: blocking sensor never fired: its glob matches none"), "{text}");
        assert!(text.contains("#### Failures\n\n- **required-sections** (blocking) on `aidlc/spaces/default/intents/260101-login/inception/requirements-analysis/requirements.md` (stage `requirements-analysis`): 3 findings; details in `aidlc/spaces/default/intents/260101-login/.aidlc-engine/sensors/requirements-analysis/required-sections-1b2c3d4e.md`"));
        assert!(text.contains("#### Not evaluated\n\n- **linter** (blocking)"));
        assert!(text.contains("#### Dead bindings\n\n- sensor `required-sections` on stage `reverse-engineering` can never fire: its glob `**/{aidlc-docs,intents}/**`"));
        assert!(text.contains("#### Skipped\n\n- no glob match: 2\n- no deliverable: 1"));
        assert!(text.contains("shard 2 of 4"));
    }

    #[test]
    fn markdown_escaping_keeps_text_literal() {
        assert_eq!(markdown_text("a*b_c|d\ne"), "a\\*b\\_c\\|d e");
        assert_eq!(code_span("plain"), "`plain`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x``"), "``` `x`` ```");
    }

    // --- SARIF

    fn sarif_validator() -> jsonschema::Validator {
        let schema_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sarif/sarif-schema-2.1.0.json"
        );
        let schema_text = std::fs::read_to_string(schema_path).expect("the vendored SARIF schema");
        let schema: Value = serde_json::from_str(&schema_text).expect("the schema is JSON");
        jsonschema::draft4::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the official SARIF 2.1.0 schema compiles")
    }

    fn assert_valid_sarif(validator: &jsonschema::Validator, text: &str) {
        let document: Value = serde_json::from_str(text).expect("SARIF is JSON");
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "invalid SARIF:\n{}\n{text}",
            errors.join("\n")
        );
    }

    #[test]
    fn sarif_validates_against_the_official_schema() {
        let validator = sarif_validator();
        assert_valid_sarif(&validator, &render_sarif(&sample_report(), "0.1.0"));
        assert_valid_sarif(&validator, &render_sarif(&no_record_report(), "0.1.0"));
        assert_valid_sarif(&validator, &render_sarif(&GateReport::default(), "0.1.0"));
    }

    /// The validator is real: it refuses what the schema forbids.
    #[test]
    fn the_schema_check_refuses_invalid_sarif() {
        let validator = sarif_validator();
        let mut document = sarif_document(&sample_report(), "0.1.0");
        assert!(validator.is_valid(&document));
        document["runs"][0]["results"][0]["level"] = json!("fatal");
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), "0.1.0");
        document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
            json!(0);
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), "0.1.0");
        document["version"] = json!("2.0.0");
        assert!(!validator.is_valid(&document));
        let mut document = sarif_document(&sample_report(), "0.1.0");
        document["runs"][0]["tool"]["driver"]["unknownKey"] = json!(true);
        assert!(!validator.is_valid(&document));
    }

    #[test]
    fn sarif_matches_the_snapshot() {
        insta::assert_snapshot!("sarif", render_sarif(&sample_report(), "0.1.0"));
    }

    #[test]
    fn sarif_has_one_result_per_finding_and_per_non_evaluation() {
        let document = sarif_document(&sample_report(), "1.2.3");
        assert_eq!(document["$schema"], json!(SARIF_SCHEMA_URI));
        assert_eq!(document["version"], json!("2.1.0"));
        let runs = document["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0];
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["name"], json!("aidlc"));
        assert_eq!(driver["version"], json!("1.2.3"));
        let rule_ids: Vec<&Value> = driver["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rule| &rule["id"])
            .collect();
        assert_eq!(
            rule_ids,
            [
                "claim-sources",
                "required-sections",
                "upstream-coverage",
                "linter",
                "type-check",
                "traceability",
                "api-contract"
            ]
        );
        let results = run["results"].as_array().unwrap();
        // 2 + 1 findings, 1 failure without findings, 4 non-evaluated fires, 1 unfired binding.
        assert_eq!(results.len(), 9);
        for result in results {
            let rule_index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
            assert_eq!(driver["rules"][rule_index]["id"], result["ruleId"]);
        }
        assert_eq!(results[0]["level"], json!("error"));
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"],
            json!({
                "artifactLocation": {"uri": format!("{RECORD}/inception/requirements-analysis/requirements.md")},
                "region": {"startLine": 12, "startColumn": 3},
            })
        );
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 40})
        );
        assert_eq!(results[2]["level"], json!("warning"));
        assert_eq!(
            results[2]["locations"][0]["physicalLocation"].get("region"),
            None
        );
        assert_eq!(results[3]["ruleId"], json!("claim-sources"));
        assert!(
            results[3]["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with("failed with 4 findings; details in ")
        );
        for (result, reason) in results[4..8].iter().zip([
            "tool-unavailable",
            "sensor execution exceeded its budget",
            "script-error: exit-2",
            "artifact-changed",
        ]) {
            assert_eq!(result["level"], json!("warning"));
            assert_eq!(result["properties"]["note"], json!(reason));
            assert!(result["message"]["text"].as_str().unwrap().contains(reason));
        }
        assert_eq!(results[8]["level"], json!("error"));
        assert_eq!(results[8]["properties"]["note"], json!("never-fired"));
        assert_eq!(
            results[8]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            json!(".claude/sensors/aidlc-api-contract.md")
        );
        let invocation = &run["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], json!(false));
        assert_eq!(
            invocation["toolExecutionNotifications"]
                .as_array()
                .unwrap()
                .len(),
            5
        );
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["associatedRule"],
            json!({"id": "linter", "index": 3})
        );
        assert_eq!(
            invocation["toolConfigurationNotifications"][0]["properties"],
            json!({"stage": "reverse-engineering", "sensorId": "required-sections", "pattern": "**/{aidlc-docs,intents}/**"})
        );
        assert_eq!(
            run["automationDetails"]["id"],
            json!("aidlc-gate/shard-2-of-4/")
        );
    }

    #[test]
    fn a_clean_run_is_a_successful_execution() {
        let mut report = sample_report();
        report.fires.truncate(1);
        report.unfired_bindings.clear();
        report.shard = None;
        let document = sarif_document(&report, "0.1.0");
        let run = &document["runs"][0];
        assert_eq!(run["invocations"][0]["executionSuccessful"], json!(true));
        assert_eq!(run["results"], json!([]));
        assert_eq!(run.get("automationDetails"), None);
    }

    #[test]
    fn uris_are_percent_encoded_relative_references() {
        assert_eq!(
            path_to_uri_reference(Utf8Path::new("docs/my file#1%.md")),
            "docs/my%20file%231%25.md"
        );
        assert_eq!(path_to_uri_reference(Utf8Path::new("c:/x.md")), "c%3A/x.md");
        assert_eq!(
            path_to_uri_reference(Utf8Path::new("naïve/a+b.md")),
            "na%C3%AFve/a+b.md"
        );
        // Draft 4 (the schema's draft) does not define `uri-reference`, so check it with the
        // draft 7 definition; a raw space proves the check is live.
        let uri_reference = jsonschema::draft7::options()
            .should_validate_formats(true)
            .build(&json!({"format": "uri-reference"}))
            .unwrap();
        assert!(!uri_reference.is_valid(&json!("docs/my file.md")));
        for raw in [
            "docs/my file#1%.md",
            "c:/x.md",
            "naïve/a+b.md",
            "a/[b]/{c}.md",
        ] {
            let uri = path_to_uri_reference(Utf8Path::new(raw));
            assert!(uri_reference.is_valid(&json!(uri)), "{raw} -> {uri}");
        }
        let validator = sarif_validator();
        let mut report = no_record_report();
        report.fires[0].deliverable = "docs/my file#1%.md".into();
        assert_valid_sarif(&validator, &render_sarif(&report, "0.1.0"));
    }
}
