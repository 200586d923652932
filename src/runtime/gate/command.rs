//! `aidlc gate check` and `aidlc gate merge` as decisions: which refusal, which notes, what
//! runs, and which exit status (D9). Everything is returned as values; `cli::gate` builds the
//! flags from the arguments and the environment, loads the workspace, the registry and the
//! graph, renders the report, and prints these values in the order they are returned.
//!
//! Invariants:
//! - a check is refused before any fire runs when the graph is stale (unless `--allow-stale`
//!   applies), a `--stage` is disabled, no intent record is found, or the environment's
//!   dispatch cap is malformed, in that order;
//! - the exit status is decided from the report alone, and only then made 2 when a `--report`
//!   file could not be written: the notices say why the report's status is what it is.

use camino::Utf8PathBuf;

use crate::protocol::graph_reader::StageGraph;
use crate::protocol::stage_node::GraphNode;
use crate::runtime::dispatch::time_limit;
use crate::runtime::gate::check::{
    CheckRequest, PlannedCheck, blocking_bindings_switched_off, intent_records, plan_check,
};
use crate::runtime::gate::disabled_stages::{refuse_disabled_stages, skipped_disabled_note};
use crate::runtime::gate::merge::{check_shards_against_the_project, merge_reports, read_report};
use crate::runtime::gate::report::{GateReport, SensorsOff, UnseenWritesNotice};
use crate::runtime::gate::stale_graph::{
    AllowStaleRefusal, StaleGraph, check_graph_against_sources,
};
use crate::runtime::workspace::Workspace;

/// A line the gate has to say on stderr, rendered by the CLI.
#[derive(Debug)]
pub enum Notice {
    /// A warning or a note, said as it is.
    Status(String),
    /// `error: message`, and a help line when there is one.
    Error {
        message: String,
        help: Option<String>,
    },
    /// The graph is not what its sources compile to now, and `--allow-stale` did not apply
    /// (the refusal says why, when the flag was given).
    StaleGraph {
        stale: Box<StaleGraph>,
        allow_stale_refusal: Option<AllowStaleRefusal>,
    },
}

impl Notice {
    fn error(message: String, help: Option<&str>) -> Self {
        Self::Error {
            message,
            help: help.map(str::to_owned),
        }
    }
}

/// How a gate check or merge ends (D9); the CLI maps each to its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateExit {
    Success,
    /// Blocking findings (any finding with `--strict`).
    Failure,
    /// Nothing checked without `--allow-empty`, or a `--report` file not written.
    Error,
    /// A blocking binding not evaluated: it could not run, never fired, or was switched off.
    NotEvaluated,
}

/// The flags of `aidlc gate check` that decide what runs, and the request the CLI built from
/// the others and the environment (its error is the environment's malformed dispatch cap).
pub struct CheckFlags<'a> {
    pub stages: &'a [String],
    pub intent: Option<&'a str>,
    pub all_intents: bool,
    pub allow_stale: bool,
    pub request: Result<CheckRequest, String>,
}

/// A check that passed every refusal: the notes to say before it runs, its plan, and the
/// deliverables the write hook never saw (for the report).
pub struct PreparedCheck {
    pub notes: Vec<String>,
    pub planned: PlannedCheck,
    pub unseen_writes: Option<UnseenWritesNotice>,
}

/// Everything `aidlc gate check` decides before a fire runs: the refusals, the notes, and
/// the plan of the intent records asked for.
pub fn prepare_check(
    workspace: &Workspace,
    graph: &StageGraph,
    flags: CheckFlags<'_>,
) -> Result<PreparedCheck, Notice> {
    let mut notes = Vec::new();
    if let Err(stale) = check_graph_against_sources(&workspace.layout) {
        let refusal = stale.allow_stale_refusal();
        if !flags.allow_stale || refusal.is_some() {
            return Err(Notice::StaleGraph {
                allow_stale_refusal: refusal.filter(|_| flags.allow_stale),
                stale: Box::new(stale),
            });
        }
        notes.push(format!(
            "warning: {}\n  checking against it as it is (--allow-stale: no blocking binding differs)",
            stale.message()
        ));
    }
    let (project_dir, harness_json) =
        (workspace.project_dir(), &workspace.layout.harness_json_path);
    if let Err(refusal) = refuse_disabled_stages(graph, flags.stages, project_dir, harness_json) {
        return Err(Notice::error(refusal.message, Some(&refusal.help)));
    }
    notes.extend(skipped_disabled_note(
        graph,
        flags.stages,
        project_dir,
        harness_json,
    ));
    let records = intent_records(workspace, flags.all_intents, flags.intent).map_err(|message| {
        Notice::error(
            message,
            Some(
                "create one with `aidlc engine intent new <label>`, or pass --intent NAME or --all-intents",
            ),
        )
    })?;
    let request = flags
        .request
        .map_err(|message| Notice::error(message, Some(time_limit::GATE_DISPATCH_CAP_HELP)))?;
    let planned = plan_check(workspace, &graph.nodes, &records, &request)
        .map_err(|message| Notice::error(message, None))?;
    Ok(PreparedCheck {
        notes,
        planned,
        unseen_writes: unseen_writes_notice(workspace, &graph.nodes),
    })
}

/// The active stage's deliverables changed after the write hook last ran on this machine, for
/// the report's notice. Only where the hook has run in the record at least once: a checkout in
/// CI has no heartbeat, and its files' times are the checkout's.
fn unseen_writes_notice(workspace: &Workspace, nodes: &[GraphNode]) -> Option<UnseenWritesNotice> {
    let workflow = crate::runtime::workspace::present_workflow(workspace.record_root())?;
    let found = crate::runtime::gate::unseen_writes::active_stage_unseen_writes_in(
        workspace, &workflow, nodes,
    )?;
    found.unseen.hook_last_ran?;
    Some(UnseenWritesNotice {
        message: found.unseen.sentence(&found.stage),
        stage: found.stage,
        files: found.unseen.files,
    })
}

/// The shards' JSON report files read and joined, each kept with its name.
pub fn read_and_merge_shards(
    files: &[Utf8PathBuf],
) -> Result<(Vec<(String, GateReport)>, GateReport), Notice> {
    let mut shards = Vec::with_capacity(files.len());
    for file in files {
        let text = crate::leaves::fs_util::read_bounded_text(
            file,
            crate::compile::discover::MAX_GENERATED_BYTES,
        )
        .map_err(|error| Notice::error(format!("cannot read {file}: {error}"), None))?;
        let report = read_report(file.as_str(), &text)
            .map_err(|error| Notice::error(error.to_string(), None))?;
        shards.push((file.to_string(), report));
    }
    let report = merge_reports(&shards).map_err(|error| {
        Notice::error(
            format!("cannot merge the shards: {error}"),
            Some(
                "merge the JSON reports of every shard of one `aidlc gate check --shard K/N` run, each once",
            ),
        )
    })?;
    Ok((shards, report))
}

/// The merging job has the project checked out at the same commit: the plan is made again
/// from it, and each shard must be a share of that plan.
pub fn refuse_shards_of_another_project(
    workspace: &Workspace,
    nodes: &[GraphNode],
    shards: &[(String, GateReport)],
) -> Result<(), Notice> {
    check_shards_against_the_project(workspace, nodes, shards).map_err(|message| {
        Notice::error(
            format!("cannot merge the shards: {message}"),
            Some(
                "merge the reports of a `gate check --shard K/N` matrix run on this commit of this project (--project-dir), unchanged",
            ),
        )
    })
}

/// The flags that judge a report. A merge is judged as a quiet check: its report is the whole
/// plan's, so it never has an empty share, and a pass says nothing more.
#[derive(Debug, Clone, Copy)]
pub struct Judging {
    pub strict: bool,
    pub allow_empty: bool,
    pub quiet: bool,
}

/// The exit status of a report and the notices that explain it, in the order they are said.
/// `reports_written` is false when a `--report` file could not be written: 0 and 1 become 2,
/// as with a failed stdout, since output someone relies on is missing.
pub fn judge(
    report: &GateReport,
    nodes: &[GraphNode],
    judging: Judging,
    reports_written: bool,
) -> (GateExit, Vec<Notice>) {
    let switched_off = blocking_bindings_switched_off(report, nodes);
    let status = exit_status(report, judging, switched_off.len());
    let mut notices: Vec<Notice> =
        blocking_bindings_switched_off_notice(report, &switched_off, status)
            .into_iter()
            .collect();
    if let Some((index, count)) = report.empty_share()
        && !judging.quiet
    {
        notices.push(Notice::Status(format!(
            "note: shard {index}/{count} has no fire of its own (the plan's {} fire{} {} in other shards); nothing to check here is no failure, and `aidlc gate merge` judges the whole plan",
            report.plan.size,
            crate::leaves::english::plural(report.plan.size),
            if report.plan.size == 1 { "is" } else { "are" }
        )));
    }
    if let Some(nothing) = report.nothing_checked() {
        if status == GateExit::Error {
            notices.push(Notice::error(
                format!("nothing was checked: {}", nothing.reason()),
                Some(&nothing.help()),
            ));
        } else if status == GateExit::Success && !judging.quiet {
            notices.push(Notice::Status(format!(
                "note: nothing was checked ({}); --allow-empty makes that exit 0",
                nothing.reason()
            )));
        }
    }
    let exit = match status {
        GateExit::Success | GateExit::Failure if !reports_written => GateExit::Error,
        other => other,
    };
    (exit, notices)
}

/// D9, in this order: 1 for blocking findings (any findings with `--strict`); 3 when a
/// blocking sensor could not be evaluated or never fired; 2 when nothing was checked at all
/// (no fire passed or failed), unless `--allow-empty`; 3 when a Sensors switch kept a blocking
/// binding from running (`--allow-empty` never makes that a pass); else 0.
fn exit_status(report: &GateReport, judging: Judging, blocking_switched_off: usize) -> GateExit {
    let counts = report.counts();
    if counts.blocking_failed > 0 || (judging.strict && counts.failed > 0) {
        GateExit::Failure
    } else if counts.blocking_not_evaluated > 0 {
        GateExit::NotEvaluated
    } else if report.nothing_checked().is_some() && !judging.allow_empty {
        GateExit::Error
    } else if blocking_switched_off > 0 {
        GateExit::NotEvaluated
    } else {
        GateExit::Success
    }
}

/// When the switched-off blocking bindings decided the exit status (3): which they are, which
/// switch, and how to turn it back on.
fn blocking_bindings_switched_off_notice(
    report: &GateReport,
    switched_off: &[(String, String)],
    status: GateExit,
) -> Option<Notice> {
    let off = report.sensors_off.as_ref()?;
    let decided_by_them = status == GateExit::NotEvaluated
        && !switched_off.is_empty()
        && report.counts().blocking_not_evaluated == 0;
    if !decided_by_them {
        return None;
    }
    let bindings: Vec<String> = switched_off
        .iter()
        .map(|(stage, sensor)| format!("{sensor}@{stage}"))
        .collect();
    let (switch, help) = match off {
        SensorsOff::Environment => (
            "AIDLC_DISABLE_SENSORS=1".to_owned(),
            "unset AIDLC_DISABLE_SENSORS and check again; --allow-empty never passes a blocking binding that did not run",
        ),
        SensorsOff::State { intents } => (
            format!(
                "`- **Sensors**: off` in the state of {}",
                intents.join(", ")
            ),
            "turn the Sensors switch on in aidlc-state.md and check again; --allow-empty never passes a blocking binding that did not run",
        ),
    };
    Some(Notice::error(
        format!(
            "{} blocking binding{} not evaluated: sensors are off ({switch}): {}",
            bindings.len(),
            crate::leaves::english::plural(bindings.len()),
            bindings.join(", ")
        ),
        Some(help),
    ))
}
