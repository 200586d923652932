//! `aidlc gate check` and `aidlc gate merge`: the CI gate check over an intent's deliverables,
//! and the join of a shard matrix's reports. This file parses, calls `gate::check` or
//! `gate::merge`, and prints (the report on stdout, `--report` files, the step summary, the
//! progress line); the plan, the Sensors switch, the report and the merge are the gate's.

use std::io::Write;

use camino::{Utf8Path, Utf8PathBuf};

use crate::cli::ExitStatus;
use crate::cli::args::{Format, GateArgs, GateCheckArgs, GateCommand, GateMergeArgs, ProgressWhen};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{current_dir, env_var, resolve_workspace, usable_graph, usable_registry};
use crate::report::{self, RenderSettings, ReportFormat, SourceTexts};
use crate::runtime::dispatch::time_limit::{self, EnclosingLimit, GateLimits};
use crate::runtime::gate::check::{
    CheckRequest, blocking_bindings_switched_off, finding_sources, intent_records, plan_check,
};
use crate::runtime::gate::disabled_stages::{refuse_disabled_stages, skipped_disabled_note};
use crate::runtime::gate::merge::{check_shards_against_the_project, merge_reports, read_report};
use crate::runtime::gate::report::{GateReport, SensorsOff};
use crate::runtime::gate::repository::RepositoryRoot;
use crate::runtime::gate::stale_graph::{
    AllowStaleRefusal, StaleGraph, StaleKind, check_graph_against_sources,
};

pub fn run(args: &GateArgs) -> ExitStatus {
    match &args.command {
        GateCommand::Check(check_args) => check(check_args),
        GateCommand::Merge(merge_args) => merge(merge_args),
    }
}

/// The active stage's deliverables changed after the write hook last ran on this machine, as a
/// notice on stderr (every format). Said only where the hook has run in the record at least
/// once: a checkout in CI has no heartbeat, and its files' times are the checkout's.
fn unseen_writes_note(workspace: &crate::runtime::workspace::Workspace) -> Option<String> {
    let found = crate::runtime::gate::unseen_writes::active_stage_unseen_writes(workspace)?;
    found.unseen.hook_last_ran?;
    Some(format!("notice: {}", found.unseen.sentence(&found.stage)))
}

fn check(args: &GateCheckArgs) -> ExitStatus {
    // `--quiet` silences the progress line only: an error is never quiet.
    let printer = Printer::new(Format::Human, false);
    let started = std::time::Instant::now();
    let workspace = match resolve_workspace(&args.project, &printer) {
        Ok(workspace) => workspace,
        Err(status) => return status,
    };
    let Some(registry) = usable_registry(&workspace.layout, &printer) else {
        return ExitStatus::Error;
    };
    let Some(graph) = usable_graph(&workspace.layout, &printer) else {
        return ExitStatus::Error;
    };
    if let Err(stale) = check_graph_against_sources(&workspace.layout) {
        let refusal = stale.allow_stale_refusal();
        if !args.allow_stale || refusal.is_some() {
            let refusal = refusal.filter(|_| args.allow_stale);
            print_stale_graph(&stale, refusal.as_ref(), &stale.check_help(), &printer);
            return ExitStatus::Error;
        }
        printer.status(&format!(
            "warning: {}\n  checking against it as it is (--allow-stale: no blocking binding differs)",
            stale.message()
        ));
    }
    if let Err(refusal) = refuse_disabled_stages(
        &graph,
        &args.stages,
        workspace.project_dir(),
        &workspace.layout.harness_json_path,
    ) {
        error_line(&printer, &refusal.message, Some(&refusal.help));
        return ExitStatus::Error;
    }
    if let Some(note) = skipped_disabled_note(
        &graph,
        &args.stages,
        workspace.project_dir(),
        &workspace.layout.harness_json_path,
    ) {
        printer.status(&note);
    }
    if let Some(note) = unseen_writes_note(&workspace) {
        printer.status(&note);
    }
    let nodes = graph.nodes;
    let records = match intent_records(&workspace, args.all_intents, args.intent.as_deref()) {
        Ok(records) => records,
        Err(message) => {
            error_line(
                &printer,
                &message,
                Some(
                    "create one with `aidlc engine intent new <label>`, or pass --intent NAME or --all-intents",
                ),
            );
            return ExitStatus::Error;
        }
    };
    let repository = RepositoryRoot::find(
        workspace.project_dir(),
        env_var("GITHUB_WORKSPACE").as_deref().map(Utf8Path::new),
    );
    let request = match check_request(args, &repository, started) {
        Ok(request) => request,
        Err(message) => {
            error_line(&printer, &message, Some(time_limit::GATE_DISPATCH_CAP_HELP));
            return ExitStatus::Error;
        }
    };
    let planned = match plan_check(&workspace, &nodes, &records, &request) {
        Ok(planned) => planned,
        Err(message) => {
            error_line(&printer, &message, None);
            return ExitStatus::Error;
        }
    };
    let shown = match args.progress {
        ProgressWhen::Always => true,
        ProgressWhen::Never => false,
        ProgressWhen::Auto => !args.quiet && printer.stderr_is_terminal(),
    };
    let progress = printer.progress_line(planned.fire_count(), "fires", shown);
    let report = planned.run(&workspace, &registry, &nodes, started, &|| progress.tick());
    progress.finish();
    let wants_sources = args.format == ReportFormat::Human
        || args
            .reports
            .iter()
            .any(|(format, _)| *format == ReportFormat::Human);
    let sources = if wants_sources {
        finding_sources(workspace.project_dir(), &report)
    } else {
        SourceTexts::new()
    };
    let output = Output {
        format: args.format,
        reports: &args.reports,
        repository: &repository,
        strict: args.strict,
        display_prefix: shown_project_path(workspace.project_dir()),
    };
    let written = output.print(&report, sources, &printer);
    let switched_off = blocking_bindings_switched_off(&report, &nodes);
    let status = exit_status(&report, args.strict, args.allow_empty, switched_off.len());
    say_blocking_bindings_switched_off(&report, &switched_off, status, &printer);
    if let Some((index, count)) = report.empty_share()
        && !args.quiet
    {
        printer.status(&format!(
            "note: shard {index}/{count} has no fire of its own (the plan's {} fire{} {} in other shards); nothing to check here is no failure, and `aidlc gate merge` judges the whole plan",
            report.plan.size,
            crate::leaves::english::plural(report.plan.size),
            if report.plan.size == 1 { "is" } else { "are" }
        ));
    }
    if let Some(nothing) = report.nothing_checked() {
        if status == ExitStatus::Error {
            error_line(
                &printer,
                &format!("nothing was checked: {}", nothing.reason()),
                Some(&nothing.help()),
            );
        } else if status == ExitStatus::Success && !args.quiet {
            printer.status(&format!(
                "note: nothing was checked ({}); --allow-empty makes that exit 0",
                nothing.reason()
            ));
        }
    }
    with_reports_written(status, written)
}

/// A stale graph refused: the sources' errors (when they do not compile), then what drifted,
/// why `--allow-stale` did not apply (when it was given), and the fix.
pub(super) fn print_stale_graph(
    stale: &StaleGraph,
    allow_stale_refusal: Option<&AllowStaleRefusal>,
    help: &str,
    printer: &Printer,
) {
    if let StaleKind::CompileErrors { errors, sources } = &stale.kind {
        for diagnostic in errors {
            printer.diagnostic(diagnostic, sources);
        }
    }
    let mut message = stale.message();
    if let Some(refusal) = allow_stale_refusal {
        message.push_str("\n  ");
        message.push_str(&refusal.sentence());
    }
    error_line(printer, &message, Some(help));
}

fn merge(args: &GateMergeArgs) -> ExitStatus {
    let printer = Printer::new(Format::Human, false);
    let mut shards = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let text = match crate::leaves::fs_util::read_bounded_text(
            file,
            crate::compile::discover::MAX_GENERATED_BYTES,
        ) {
            Ok(text) => text,
            Err(error) => {
                error_line(&printer, &format!("cannot read {file}: {error}"), None);
                return ExitStatus::Error;
            }
        };
        match read_report(file.as_str(), &text) {
            Ok(report) => shards.push((file.to_string(), report)),
            Err(error) => {
                error_line(&printer, &error.to_string(), None);
                return ExitStatus::Error;
            }
        }
    }
    let report = match merge_reports(&shards) {
        Ok(report) => report,
        Err(error) => {
            error_line(
                &printer,
                &format!("cannot merge the shards: {error}"),
                Some(
                    "merge the JSON reports of every shard of one `aidlc gate check --shard K/N` run, each once",
                ),
            );
            return ExitStatus::Error;
        }
    };
    // The merging job has the project checked out at the same commit: the plan is made again
    // from it, and the findings' files are read from it for the human format's snippets.
    let workspace = match resolve_workspace(&args.project, &printer) {
        Ok(workspace) => workspace,
        Err(status) => return status,
    };
    let Some(graph) = usable_graph(&workspace.layout, &printer) else {
        return ExitStatus::Error;
    };
    if let Err(message) = check_shards_against_the_project(&workspace, &graph.nodes, &shards) {
        error_line(
            &printer,
            &format!("cannot merge the shards: {message}"),
            Some(
                "merge the reports of a `gate check --shard K/N` matrix run on this commit of this project (--project-dir), unchanged",
            ),
        );
        return ExitStatus::Error;
    }
    let Some(cwd) = current_dir() else {
        error_line(&printer, "the working folder is not valid UTF-8", None);
        return ExitStatus::Error;
    };
    let repository = RepositoryRoot::find(
        &cwd,
        env_var("GITHUB_WORKSPACE").as_deref().map(Utf8Path::new),
    );
    let sources = finding_sources(workspace.project_dir(), &report);
    let merged_repository = RepositoryRoot {
        root: repository.root.clone(),
        project_path: report.project_path.clone(),
    };
    let output = Output {
        format: args.format,
        reports: &args.reports,
        repository: &merged_repository,
        strict: args.strict,
        display_prefix: crate::leaves::fs_util::path_from(&cwd, workspace.project_dir()),
    };
    let written = output.print(&report, sources, &printer);
    let switched_off = blocking_bindings_switched_off(&report, &graph.nodes);
    let status = exit_status(&report, args.strict, args.allow_empty, switched_off.len());
    say_blocking_bindings_switched_off(&report, &switched_off, status, &printer);
    if status == ExitStatus::Error
        && let Some(nothing) = report.nothing_checked()
    {
        error_line(
            &printer,
            &format!("nothing was checked: {}", nothing.reason()),
            Some(&nothing.help()),
        );
    }
    with_reports_written(status, written)
}

/// The project folder relative to the working folder (empty when the working folder is unknown).
fn shown_project_path(project_dir: &Utf8Path) -> Utf8PathBuf {
    current_dir()
        .map(|cwd| crate::leaves::fs_util::path_from(&cwd, project_dir))
        .unwrap_or_default()
}

/// The arguments as the gate takes them; `--jobs` defaults to the available cores, and
/// `--timeout` counts from `started`. A malformed `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS` is
/// refused.
fn check_request(
    args: &GateCheckArgs,
    repository: &RepositoryRoot,
    started: std::time::Instant,
) -> Result<CheckRequest, String> {
    let limits = GateLimits {
        dispatch_cap: time_limit::gate_dispatch_cap(&env_var)?,
        run: args.timeout.map(|timeout| {
            EnclosingLimit::counted_from(
                started,
                timeout,
                format!("gate check --timeout {}", humane_duration(timeout)),
            )
        }),
    };
    Ok(CheckRequest {
        stages: args.stages.clone(),
        fire_on: args.fire_on,
        shard: args.shard,
        jobs: args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            usize::from,
        ),
        record: !args.no_record,
        project_path: repository.project_path.clone(),
        limits,
    })
}

/// `--timeout`'s value as it was most likely written (`90s`, `10m`, `1500ms`).
fn humane_duration(duration: std::time::Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(60_000) {
        format!("{}m", millis / 60_000)
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}

/// Where a report goes: stdout in one format, and `--report` files in others.
struct Output<'a> {
    format: ReportFormat,
    reports: &'a [(ReportFormat, Utf8PathBuf)],
    repository: &'a RepositoryRoot,
    /// `--strict`, for the formats that count failures.
    strict: bool,
    /// The project folder relative to the working folder, for the human format's paths.
    display_prefix: Utf8PathBuf,
}

impl Output<'_> {
    /// Print the report on stdout, append the github step summary, and write the `--report`
    /// files (without colour; a regular file atomically, a device or a pipe by opening it).
    /// Returns whether every file was written.
    fn print(&self, report: &GateReport, sources: SourceTexts, printer: &Printer) -> bool {
        let root_uri = self.repository.root_uri();
        let mut settings = RenderSettings {
            color: false,
            sources,
            repository_root_uri: Some(root_uri),
            help_base_uri: github_blob_base(),
            full_report: self.full_report_hint(),
            strict: self.strict,
            path_prefix: self.display_prefix.clone(),
        };
        let mut all_written = true;
        for (format, path) in self.reports {
            let rendered = report::render(report, *format, &settings);
            let text = format!("{}\n", rendered.stdout.trim_end());
            if let Err(error) = crate::leaves::fs_util::write_output_file(path, text.as_bytes()) {
                error_line(
                    printer,
                    &format!(
                        "cannot write the {} report to {path}: {error}",
                        format.name()
                    ),
                    Some("check that its folder exists and is writable"),
                );
                all_written = false;
            }
        }
        settings.color = printer.stdout_color();
        let rendered = report::render(report, self.format, &settings);
        if !rendered.stdout.trim().is_empty() {
            printer.out(rendered.stdout.trim_end());
        }
        if let Some(markdown) = &rendered.step_summary {
            append_step_summary(markdown, printer);
        }
        all_written
    }

    /// Where the whole report can be read, for the github format's held-back notice.
    fn full_report_hint(&self) -> Option<String> {
        if !self.reports.is_empty() {
            let files: Vec<String> = self
                .reports
                .iter()
                .map(|(format, path)| format!("{path} ({})", format.name()))
                .collect();
            return Some(files.join(", "));
        }
        env_var("GITHUB_STEP_SUMMARY")
            .filter(|path| !path.is_empty())
            .map(|_| "the job's step summary".to_owned())
    }
}

/// `<server>/<owner>/<repo>/blob/<sha>/` inside GitHub Actions, where a rule's manifest can be
/// read at the commit checked.
fn github_blob_base() -> Option<String> {
    let server = env_var("GITHUB_SERVER_URL").filter(|value| !value.is_empty())?;
    let repository = env_var("GITHUB_REPOSITORY").filter(|value| !value.is_empty())?;
    let sha = env_var("GITHUB_SHA").filter(|value| !value.is_empty())?;
    Some(format!(
        "{}/{repository}/blob/{sha}/",
        server.trim_end_matches('/')
    ))
}

/// `$GITHUB_STEP_SUMMARY`, when set, gets the Markdown summary appended (it ends with a
/// newline, so the next step's summary starts on a line of its own).
#[expect(
    clippy::disallowed_methods,
    reason = "GitHub's step summary file, named by the runner's GITHUB_STEP_SUMMARY, outside any project"
)]
fn append_step_summary(markdown: &str, printer: &Printer) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(markdown.as_bytes()));
    if let Err(error) = written {
        printer.status(&format!(
            "warning: could not append the summary to $GITHUB_STEP_SUMMARY: {error}"
        ));
    }
}

/// A `--report` file that could not be written turns 0 and 1 into 2, as a failed stdout does:
/// output someone relies on is missing.
fn with_reports_written(status: ExitStatus, written: bool) -> ExitStatus {
    match status {
        ExitStatus::Success | ExitStatus::Failure if !written => ExitStatus::Error,
        other => other,
    }
}

/// D9, in this order: 1 for blocking findings (any findings with `--strict`); 3 when a
/// blocking sensor could not be evaluated or never fired; 2 when nothing was checked at all
/// (no fire passed or failed), unless `--allow-empty`; 3 when a Sensors switch kept a blocking
/// binding from running (`--allow-empty` never makes that a pass); else 0.
fn exit_status(
    report: &GateReport,
    strict: bool,
    allow_empty: bool,
    blocking_switched_off: usize,
) -> ExitStatus {
    let counts = report.counts();
    if counts.blocking_failed > 0 || (strict && counts.failed > 0) {
        ExitStatus::Failure
    } else if counts.blocking_not_evaluated > 0 {
        ExitStatus::NotEvaluated
    } else if report.nothing_checked().is_some() && !allow_empty {
        ExitStatus::Error
    } else if blocking_switched_off > 0 {
        ExitStatus::NotEvaluated
    } else {
        ExitStatus::Success
    }
}

/// When the switched-off blocking bindings decided the exit status (3): which they are, which
/// switch, and how to turn it back on.
fn say_blocking_bindings_switched_off(
    report: &GateReport,
    switched_off: &[(String, String)],
    status: ExitStatus,
    printer: &Printer,
) {
    let Some(off) = &report.sensors_off else {
        return;
    };
    let decided_by_them = status == ExitStatus::NotEvaluated
        && !switched_off.is_empty()
        && report.counts().blocking_not_evaluated == 0;
    if !decided_by_them {
        return;
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
    error_line(
        printer,
        &format!(
            "{} blocking binding{} not evaluated: sensors are off ({switch}): {}",
            bindings.len(),
            crate::leaves::english::plural(bindings.len()),
            bindings.join(", ")
        ),
        Some(help),
    );
}
