//! The gate report lowered into its problems, once, in the order every format shows them: each
//! fire's (its findings, or the failure that listed none, or its non-evaluation), then each
//! blocking binding that never fired, then the run that checked nothing, then each dead binding,
//! then the deliverables the write hook never saw.
//!
//! Each problem gets here the words the formats share (the rule, the level, the message, the
//! help, the project-relative location, the stage, the plugin, the title of an annotation) and
//! its fingerprint; a format adds only its own words for the problem's [`Origin`]. Passes and
//! skips are no problems: the formats that show them (the human report, `JUnit`, the step
//! summary) read them from the report's run-level values.
//!
//! Invariant: a fingerprint names what the problem is and where (repository-relative), never
//! its line, and repeats of the same parts are told apart by their occurrence, so that a
//! problem keeps its fingerprint when lines move.

use std::borrow::Cow;
use std::ptr;

use camino::{Utf8Path, Utf8PathBuf};

use crate::report::finding_identity::Fingerprints;
use crate::report::messages::{
    dead_binding_message, failed_without_findings_message, not_evaluated_help,
    not_evaluated_message, nothing_checked_message, unfired_message,
};
use crate::report::problem::{Level, Location, Origin, Problem};
use crate::runtime::gate::report::{
    DeadBinding, GateFire, GateReport, NEVER_FIRED, Outcome, UnfiredBinding,
};

/// The rule of the problem a run that checked nothing gets.
pub const NOTHING_CHECKED_RULE: &str = "nothing-checked";
/// The rule of the notice naming the deliverables the write hook never saw.
pub const WRITE_HOOK_NEVER_SAW_RULE: &str = "write-hook-never-saw";

/// Every problem of `report`, in the order of the module documentation.
pub fn gate_problems(report: &GateReport) -> Vec<Problem<'_>> {
    let mut fingerprints = Fingerprints::default();
    let mut problems = Vec::new();
    for fire in &report.fires {
        problems.extend(fire_problems(report, fire, &mut fingerprints));
    }
    for unfired in &report.unfired_bindings {
        problems.push(never_fired_problem(report, unfired, &mut fingerprints));
    }
    if let Some(nothing) = report.nothing_checked() {
        let message = nothing_checked_message(&nothing);
        problems.push(Problem {
            origin: Origin::NothingChecked,
            help: Some(Cow::Owned(nothing.help())),
            title: Some(Cow::Borrowed("nothing checked")),
            fingerprint: Some(fingerprints.next(&[NOTHING_CHECKED_RULE, &message])),
            ..Problem::new(NOTHING_CHECKED_RULE, Level::Warning, message)
        });
    }
    for dead in &report.dead_bindings {
        problems.push(dead_binding_problem(dead, &mut fingerprints));
    }
    if let Some(unseen) = &report.unseen_writes {
        problems.push(Problem {
            origin: Origin::UnseenWrites(unseen),
            stage: Some(&unseen.stage),
            title: Some(Cow::Borrowed("write hook never saw")),
            fingerprint: Some(fingerprints.next(&[
                WRITE_HOOK_NEVER_SAW_RULE,
                &unseen.stage,
                &unseen.files.join("\n"),
            ])),
            ..Problem::new(
                WRITE_HOOK_NEVER_SAW_RULE,
                Level::Warning,
                unseen.message.as_str(),
            )
        });
    }
    problems
}

/// The fires of the report with their own problems (none for a pass), in the report's order,
/// and then the problems of no fire (never-fired bindings, nothing checked, dead bindings), for
/// the formats that show one entry per fire. [`gate_problems`] keeps each fire's problems
/// together and in the order of the fires, so that this is one pass.
pub fn split_by_fire<'r, 'p>(
    report: &'r GateReport,
    problems: &'p [Problem<'r>],
) -> (Vec<(&'r GateFire, &'p [Problem<'r>])>, &'p [Problem<'r>]) {
    let mut rest = problems;
    let mut by_fire = Vec::with_capacity(report.fires.len());
    for fire in &report.fires {
        let own = rest
            .iter()
            .take_while(|problem| problem.origin.fire().is_some_and(|of| ptr::eq(of, fire)))
            .count();
        let (of_fire, after) = rest.split_at(own);
        by_fire.push((fire, of_fire));
        rest = after;
    }
    (by_fire, rest)
}

/// The problem's file as a repository-relative path (see [`GateReport::repository_path`]); the
/// project folder itself for a problem of the whole run.
pub fn repository_file(report: &GateReport, problem: &Problem<'_>) -> Utf8PathBuf {
    report.repository_path(problem.file().unwrap_or(Utf8Path::new(".")))
}

/// A fire's problems: one per finding of a failure (or the one failure that listed none), or
/// its non-evaluation; none for a pass.
fn fire_problems<'a>(
    report: &GateReport,
    fire: &'a GateFire,
    fingerprints: &mut Fingerprints,
) -> Vec<Problem<'a>> {
    let deliverable = report.repository_path(&fire.deliverable);
    let on_deliverable = |origin: Origin<'a>, message: String, fingerprint: String| Problem {
        origin,
        location: Some(Location::file(&fire.deliverable)),
        stage: Some(&fire.stage),
        plugin: fire.plugin.clone(),
        fingerprint: Some(fingerprint),
        ..Problem::new(&fire.sensor_id, fire.severity.into(), message)
    };
    match fire.outcome() {
        Outcome::Passed => Vec::new(),
        Outcome::Failed if fire.findings.is_empty() => vec![on_deliverable(
            Origin::FailedWithoutFindings(fire),
            failed_without_findings_message(fire),
            fingerprints.next(&[&fire.sensor_id, "failed", deliverable.as_str()]),
        )],
        Outcome::Failed => fire
            .findings
            .iter()
            .map(|finding| {
                let file = report.repository_path(&finding.file);
                Problem {
                    plugin: fire.plugin.clone(),
                    fingerprint: Some(fingerprints.next(&[
                        &fire.sensor_id,
                        &finding.rule,
                        file.as_str(),
                        &finding.message,
                    ])),
                    ..Problem::of_finding(fire, finding)
                }
            })
            .collect(),
        Outcome::NotEvaluated => {
            let reason = fire.not_evaluated_reason().unwrap_or_default();
            vec![Problem {
                help: not_evaluated_help(fire).map(Cow::Owned),
                title: Some(Cow::Owned(format!("{} not evaluated", fire.sensor_id))),
                ..on_deliverable(
                    Origin::NotEvaluated(fire),
                    not_evaluated_message(fire),
                    fingerprints.next(&[&fire.sensor_id, &reason, deliverable.as_str()]),
                )
            }]
        }
    }
}

/// A blocking binding that never fired: an error on the manifest that holds its glob, since no
/// deliverable was read.
fn never_fired_problem<'a>(
    report: &GateReport,
    unfired: &'a UnfiredBinding,
    fingerprints: &mut Fingerprints,
) -> Problem<'a> {
    let manifest = report.repository_path(Utf8Path::new(&unfired.manifest_path));
    Problem {
        origin: Origin::NeverFired(unfired),
        location: Some(Location::file(Utf8Path::new(&unfired.manifest_path))),
        title: Some(Cow::Owned(format!("{} never fired", unfired.sensor_id))),
        stage: Some(&unfired.stage),
        plugin: unfired.plugin.clone(),
        fingerprint: Some(fingerprints.next(&[
            &unfired.sensor_id,
            NEVER_FIRED,
            manifest.as_str(),
            &unfired.stage,
            &unfired.intent,
        ])),
        ..Problem::new(&unfired.sensor_id, Level::Error, unfired_message(unfired))
    }
}

/// A dead binding: a warning of the whole run, named by its stage and sensor.
fn dead_binding_problem<'a>(dead: &'a DeadBinding, fingerprints: &mut Fingerprints) -> Problem<'a> {
    let message = dead_binding_message(dead);
    Problem {
        origin: Origin::DeadBinding(dead),
        title: Some(Cow::Borrowed("dead sensor binding")),
        stage: Some(&dead.stage),
        fingerprint: Some(fingerprints.next(&["dead-binding", &message])),
        ..Problem::new(&dead.sensor_id, Level::Warning, message)
    }
}
