//! `aidlc gate check` and `aidlc gate merge` as one call each: the refusals, the notes, the
//! run, the report written (`--report` files, the github step summary) and the exit status
//! (D9), with everything to say returned as values in order. `cli::gate` builds the flags from
//! the arguments, loads the workspace, the registry and the graph, and prints what it gets
//! back; the formats (`crate::report`, which reads this module's values) are handed in.
//!
//! Invariants:
//! - a check is refused before any fire runs when the graph is stale (unless `--allow-stale`
//!   applies), a `--stage` is disabled, no intent record is found, or the environment's
//!   dispatch cap is malformed, in that order;
//! - the exit status is decided from the report alone, and only then made 2 when a `--report`
//!   file could not be written: the notices say why the report's status is what it is.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::exit_status::ExitStatus;
use crate::leaves::fs_util;
use crate::protocol::graph_reader::StageGraph;
use crate::protocol::stage_node::GraphNode;
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::time_limit::{self, EnclosingLimit, GateLimits};
use crate::runtime::gate::check::{
    CheckRequest, PlannedCheck, blocking_bindings_switched_off, finding_sources, intent_records,
    plan_check,
};
use crate::runtime::gate::disabled_stages::{
    DisabledStageRefusal, refuse_disabled_stages, skipped_disabled_note,
};
use crate::runtime::gate::merge::{check_shards_against_the_project, merge_reports, read_report};
use crate::runtime::gate::report::{
    FireOnFilter, GateReport, RenderSettings, RenderedReport, ReportFormat, SensorsOff,
    UnseenWritesNotice,
};
use crate::runtime::gate::repository::RepositoryRoot;
use crate::runtime::gate::stale_graph::{
    AllowStaleRefusal, StaleGraph, check_graph_against_sources,
};
use crate::runtime::workspace::Workspace;

/// A line the gate has to say, rendered by the CLI.
#[derive(Debug)]
pub enum Notice {
    /// The report in the `--format` format (the gate step's JSON reply), on stdout.
    Report(String),
    /// A warning or a note (the gate step's summary), said as it is.
    Status(String),
    /// `error: message`, and a help line when there is one.
    Error {
        message: String,
        help: Option<String>,
    },
    /// The graph is not what its sources compile to now, and `--allow-stale` did not apply
    /// (the refusal says why, when the flag was given); `help` is the command's fix
    /// ([`StaleGraph::check_help`] or [`StaleGraph::gate_step_help`]).
    StaleGraph {
        stale: Box<StaleGraph>,
        allow_stale_refusal: Option<AllowStaleRefusal>,
        help: String,
    },
}

impl Notice {
    pub(crate) fn error(message: String, help: Option<&str>) -> Self {
        Self::Error {
            message,
            help: help.map(str::to_owned),
        }
    }
}

impl From<DisabledStageRefusal> for Notice {
    fn from(refusal: DisabledStageRefusal) -> Self {
        Self::error(refusal.message, Some(&refusal.help))
    }
}

/// The flags of `aidlc gate check`, as the CLI parsed them.
pub struct CheckFlags<'a> {
    /// Only these stages; every stage of the graph when empty.
    pub stages: &'a [String],
    pub intent: Option<&'a str>,
    pub all_intents: bool,
    pub allow_stale: bool,
    pub fire_on: FireOnFilter,
    /// `Some((k, n))`: only shard k of n.
    pub shard: Option<(u64, u64)>,
    /// `--jobs`; the available cores when not given.
    pub jobs: Option<u16>,
    /// Write audit rows and detail files (false with `--no-record`).
    pub record: bool,
    /// `--timeout`, counted from `started`.
    pub timeout: Option<Duration>,
    /// When the command began: the report's duration and `--timeout` count from there.
    pub started: Instant,
    pub judging: Judging,
}

/// Reads an environment variable; the CLI hands in its reader.
pub type EnvReader<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Where a report goes: stdout in one format, and `--report` files in others.
pub struct ReportOutput<'a> {
    pub format: ReportFormat,
    pub reports: &'a [(ReportFormat, Utf8PathBuf)],
    /// ANSI colours on stdout (the CLI decides from `--color` and the terminal); files get none.
    pub stdout_color: bool,
    /// The project folder relative to the working folder, for the human format's paths.
    pub display_prefix: Utf8PathBuf,
    /// `crate::report::render`, handed in because the formats read this module's values.
    pub render: fn(&GateReport, ReportFormat, &RenderSettings) -> RenderedReport,
}

/// What the CLI shows while a check runs, as it happens: the notes said before the first fire
/// (with the number of fires), each finished fire (called from the worker threads), the end.
pub trait CheckProgress: Sync {
    fn starting(&self, notes: &[String], fires: usize);
    fn fire_done(&self);
    fn finished(&self);
}

/// A command's end: what to say, in order, and its exit status.
#[derive(Debug)]
pub struct GateOutcome {
    pub said: Vec<Notice>,
    pub exit: ExitStatus,
}

impl GateOutcome {
    /// Exit 2 with `refusal`: the command could not run.
    pub(crate) fn refused(refusal: Notice) -> Self {
        Self {
            said: vec![refusal],
            exit: ExitStatus::Error,
        }
    }
}

/// `aidlc gate check`: the refusals, the plan, the run, the report written and printed, and
/// the judgement. `env` gives the CI variables (`GITHUB_WORKSPACE`, the dispatch cap, the
/// step summary and the links of the github format).
pub fn check(
    workspace: &Workspace,
    registry: &LiveRegistry,
    graph: &StageGraph,
    flags: &CheckFlags<'_>,
    output: &ReportOutput<'_>,
    env: EnvReader<'_>,
    progress: &dyn CheckProgress,
) -> GateOutcome {
    let repository = RepositoryRoot::find(
        workspace.project_dir(),
        env("GITHUB_WORKSPACE").as_deref().map(Utf8Path::new),
    );
    let request = check_request(flags, &repository, env);
    let (notes, planned) = match prepare_check(workspace, graph, flags, request) {
        Ok(prepared) => prepared,
        Err(refusal) => return GateOutcome::refused(refusal),
    };
    let unseen_writes = unseen_writes_notice(workspace, &graph.nodes);
    progress.starting(&notes, planned.fire_count());
    let mut report = planned.run(workspace, registry, &graph.nodes, flags.started, &|| {
        progress.fire_done();
    });
    report.unseen_writes = unseen_writes;
    progress.finished();
    output.write_and_judge(
        &report,
        workspace,
        &graph.nodes,
        &repository,
        flags.judging,
        env,
    )
}

/// `aidlc gate merge` once the shards are read and joined ([`read_and_merge_shards`]): each
/// shard checked against the project's own plan, then the report written, printed and judged
/// as a quiet check. `cwd` is the working folder, where the repository is looked for (`None`
/// when it is not valid UTF-8, which is refused).
pub fn merge(
    workspace: &Workspace,
    graph: &StageGraph,
    (shards, report): (Vec<(String, GateReport)>, GateReport),
    output: &ReportOutput<'_>,
    judging: Judging,
    cwd: Option<&Utf8Path>,
    env: EnvReader<'_>,
) -> GateOutcome {
    // The merging job has the project checked out at the same commit: the plan is made again
    // from it, and each shard must be a share of that plan.
    if let Err(message) = check_shards_against_the_project(workspace, &graph.nodes, &shards) {
        return GateOutcome::refused(Notice::error(
            format!("cannot merge the shards: {message}"),
            Some(
                "merge the reports of a `gate check --shard K/N` matrix run on this commit of this project (--project-dir), unchanged",
            ),
        ));
    }
    let Some(cwd) = cwd else {
        return GateOutcome::refused(Notice::error(
            "the working folder is not valid UTF-8".to_owned(),
            None,
        ));
    };
    let repository = RepositoryRoot {
        root: RepositoryRoot::find(cwd, env("GITHUB_WORKSPACE").as_deref().map(Utf8Path::new)).root,
        project_path: report.project_path.clone(),
    };
    let judging = Judging {
        quiet: true,
        ..judging
    };
    output.write_and_judge(&report, workspace, &graph.nodes, &repository, judging, env)
}

/// The request of `flags`; `--jobs` defaults to the available cores, and `--timeout` counts
/// from `started`. A malformed `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS` is refused.
fn check_request(
    flags: &CheckFlags<'_>,
    repository: &RepositoryRoot,
    env: EnvReader<'_>,
) -> Result<CheckRequest, String> {
    let limits = GateLimits {
        dispatch_cap: time_limit::gate_dispatch_cap(env)?,
        run: flags.timeout.map(|timeout| {
            EnclosingLimit::counted_from(
                flags.started,
                timeout,
                format!("gate check --timeout {}", humane_duration(timeout)),
            )
        }),
    };
    Ok(CheckRequest {
        stages: flags.stages.to_vec(),
        fire_on: flags.fire_on,
        shard: flags.shard,
        jobs: flags.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            usize::from,
        ),
        record: flags.record,
        project_path: repository.project_path.clone(),
        limits,
    })
}

/// `--timeout`'s value as it was most likely written (`90s`, `10m`, `1500ms`).
fn humane_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(60_000) {
        format!("{}m", millis / 60_000)
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}

impl ReportOutput<'_> {
    /// Write the `--report` files (without colour; a regular file atomically, a device or a
    /// pipe by opening it), print the report, append the github step summary to
    /// `$GITHUB_STEP_SUMMARY` when it is set, then judge the report ([`judge`]).
    fn write_and_judge(
        &self,
        report: &GateReport,
        workspace: &Workspace,
        nodes: &[GraphNode],
        repository: &RepositoryRoot,
        judging: Judging,
        env: EnvReader<'_>,
    ) -> GateOutcome {
        let step_summary = env("GITHUB_STEP_SUMMARY").filter(|path| !path.is_empty());
        // Only the human format shows snippets of the files the findings point into.
        let human = std::iter::once(self.format)
            .chain(self.reports.iter().map(|(format, _)| *format))
            .any(|format| format == ReportFormat::Human);
        let sources = if human {
            finding_sources(workspace.project_dir(), report)
        } else {
            BTreeMap::new()
        };
        let mut settings = RenderSettings {
            color: false,
            sources,
            repository_root_uri: Some(repository.root_uri()),
            help_base_uri: github_blob_base(env),
            full_report: self.full_report_hint(step_summary.is_some()),
            strict: judging.strict,
            path_prefix: self.display_prefix.clone(),
        };
        let mut said = Vec::new();
        let mut all_written = true;
        for (format, path) in self.reports {
            let rendered = (self.render)(report, *format, &settings);
            let text = format!("{}\n", rendered.stdout.trim_end());
            if let Err(error) = fs_util::write_output_file(path, text.as_bytes()) {
                said.push(Notice::error(
                    format!(
                        "cannot write the {} report to {path}: {error}",
                        format.name()
                    ),
                    Some("check that its folder exists and is writable"),
                ));
                all_written = false;
            }
        }
        settings.color = self.stdout_color;
        let rendered = (self.render)(report, self.format, &settings);
        if !rendered.stdout.trim().is_empty() {
            said.push(Notice::Report(rendered.stdout.trim_end().to_owned()));
        }
        // The summary ends with a newline, so the next step's summary starts on a line of its own.
        if let (Some(markdown), Some(path)) = (&rendered.step_summary, &step_summary)
            && let Err(error) = fs_util::append_to_file(Utf8Path::new(path), markdown.as_bytes())
        {
            said.push(Notice::Status(format!(
                "warning: could not append the summary to $GITHUB_STEP_SUMMARY: {error}"
            )));
        }
        let (exit, notices) = judge(report, nodes, judging, all_written);
        said.extend(notices);
        GateOutcome { said, exit }
    }

    /// Where the whole report can be read, for the github format's held-back notice.
    fn full_report_hint(&self, step_summary_set: bool) -> Option<String> {
        if !self.reports.is_empty() {
            let files: Vec<String> = self
                .reports
                .iter()
                .map(|(format, path)| format!("{path} ({})", format.name()))
                .collect();
            return Some(files.join(", "));
        }
        step_summary_set.then(|| "the job's step summary".to_owned())
    }
}

/// `<server>/<owner>/<repo>/blob/<sha>/` inside GitHub Actions, where a rule's manifest can be
/// read at the commit checked.
fn github_blob_base(env: EnvReader<'_>) -> Option<String> {
    let server = env("GITHUB_SERVER_URL").filter(|value| !value.is_empty())?;
    let repository = env("GITHUB_REPOSITORY").filter(|value| !value.is_empty())?;
    let sha = env("GITHUB_SHA").filter(|value| !value.is_empty())?;
    Some(format!(
        "{}/{repository}/blob/{sha}/",
        server.trim_end_matches('/')
    ))
}

/// Everything `aidlc gate check` decides before a fire runs: the refusals, then the notes to
/// say before it runs and the plan of the intent records asked for.
fn prepare_check(
    workspace: &Workspace,
    graph: &StageGraph,
    flags: &CheckFlags<'_>,
    request: Result<CheckRequest, String>,
) -> Result<(Vec<String>, PlannedCheck), Notice> {
    let mut notes = Vec::new();
    if let Err(stale) = check_graph_against_sources(&workspace.layout) {
        let refusal = stale.allow_stale_refusal();
        if !flags.allow_stale || refusal.is_some() {
            return Err(Notice::StaleGraph {
                allow_stale_refusal: refusal.filter(|_| flags.allow_stale),
                help: stale.check_help(),
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
    refuse_disabled_stages(graph, flags.stages, project_dir, harness_json)?;
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
    let request = request
        .map_err(|message| Notice::error(message, Some(time_limit::GATE_DISPATCH_CAP_HELP)))?;
    let planned = plan_check(workspace, &graph.nodes, &records, &request)
        .map_err(|message| Notice::error(message, None))?;
    Ok((notes, planned))
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
fn judge(
    report: &GateReport,
    nodes: &[GraphNode],
    judging: Judging,
    reports_written: bool,
) -> (ExitStatus, Vec<Notice>) {
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
            "note: shard {index}/{count} has no fire of its own (the plan's {} {} in other shards); nothing to check here is no failure, and `aidlc gate merge` judges the whole plan",
            crate::leaves::english::counted(report.plan.size, "fire"),
            if report.plan.size == 1 { "is" } else { "are" }
        )));
    }
    if let Some(nothing) = report.nothing_checked() {
        if status == ExitStatus::Error {
            notices.push(Notice::error(
                format!("nothing was checked: {}", nothing.reason()),
                Some(&nothing.help()),
            ));
        } else if status == ExitStatus::Success && !judging.quiet {
            notices.push(Notice::Status(format!(
                "note: nothing was checked ({}); --allow-empty makes that exit 0",
                nothing.reason()
            )));
        }
    }
    let exit = match status {
        ExitStatus::Success | ExitStatus::Failure if !reports_written => ExitStatus::Error,
        other => other,
    };
    (exit, notices)
}

/// D9, in this order: 1 for blocking findings (any findings with `--strict`); 3 when a
/// blocking sensor could not be evaluated or never fired; 2 when nothing was checked at all
/// (no fire passed or failed), unless `--allow-empty`; 3 when a Sensors switch kept a blocking
/// binding from running (`--allow-empty` never makes that a pass); else 0.
fn exit_status(report: &GateReport, judging: Judging, blocking_switched_off: usize) -> ExitStatus {
    let counts = report.counts();
    if counts.blocking_failed > 0 || (judging.strict && counts.failed > 0) {
        ExitStatus::Failure
    } else if counts.blocking_not_evaluated > 0 {
        ExitStatus::NotEvaluated
    } else if report.nothing_checked().is_some() && !judging.allow_empty {
        ExitStatus::Error
    } else if blocking_switched_off > 0 {
        ExitStatus::NotEvaluated
    } else {
        ExitStatus::Success
    }
}

/// When the switched-off blocking bindings decided the exit status (3): which they are, which
/// switch, and how to turn it back on.
fn blocking_bindings_switched_off_notice(
    report: &GateReport,
    switched_off: &[(String, String)],
    status: ExitStatus,
) -> Option<Notice> {
    let off = report.sensors_off.as_ref()?;
    let decided_by_them = status == ExitStatus::NotEvaluated
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
            "{} not evaluated: sensors are off ({switch}): {}",
            crate::leaves::english::counted(bindings.len(), "blocking binding"),
            bindings.join(", ")
        ),
        Some(help),
    ))
}
