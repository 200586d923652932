//! `aidlc gate check` and `aidlc gate merge`: the CI gate check over an intent's deliverables,
//! and the join of a shard matrix's reports. This file builds the flags from the arguments and
//! the environment, calls `gate::command` (the refusals, the plan, the run, the exit status)
//! and prints (the notices, the report on stdout, `--report` files, the step summary, the
//! progress line).

use std::io::Write;

use camino::{Utf8Path, Utf8PathBuf};

use crate::cli::ExitStatus;
use crate::cli::args::{Format, GateArgs, GateCheckArgs, GateCommand, GateMergeArgs, When};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{
    CommandResult, current_dir, env_var, resolve_workspace, usable_graph, usable_registry,
    working_folder,
};
use crate::report::{self, RenderSettings, ReportFormat, SourceTexts};
use crate::runtime::dispatch::time_limit::{self, EnclosingLimit, GateLimits};
use crate::runtime::gate::check::{CheckRequest, finding_sources};
use crate::runtime::gate::command::{
    CheckFlags, GateExit, Judging, Notice, judge, prepare_check, read_and_merge_shards,
    refuse_shards_of_another_project,
};
use crate::runtime::gate::report::GateReport;
use crate::runtime::gate::repository::RepositoryRoot;
use crate::runtime::gate::stale_graph::{AllowStaleRefusal, StaleGraph, StaleKind};

pub fn run(args: &GateArgs) -> CommandResult {
    match &args.command {
        GateCommand::Check(check_args) => check(check_args),
        GateCommand::Merge(merge_args) => merge(merge_args),
    }
}

fn check(args: &GateCheckArgs) -> CommandResult {
    // `--quiet` silences the progress line only: an error is never quiet.
    let printer = Printer::new(Format::Human, false);
    let started = std::time::Instant::now();
    let workspace = resolve_workspace(&args.project, &printer)?;
    let registry = usable_registry(&workspace.layout, &printer).ok_or(ExitStatus::Error)?;
    let graph = usable_graph(&workspace.layout, &printer).ok_or(ExitStatus::Error)?;
    let repository = RepositoryRoot::find(
        workspace.project_dir(),
        env_var("GITHUB_WORKSPACE").as_deref().map(Utf8Path::new),
    );
    let flags = CheckFlags {
        stages: &args.stages,
        intent: args.intent.as_deref(),
        all_intents: args.all_intents,
        allow_stale: args.allow_stale,
        request: check_request(args, &repository, started),
    };
    let (planned, unseen_writes) = match prepare_check(&workspace, &graph, flags) {
        Ok(prepared) => {
            for note in &prepared.notes {
                printer.status(note);
            }
            (prepared.planned, prepared.unseen_writes)
        }
        Err(refusal) => {
            print_notice(&refusal, &printer);
            return Err(ExitStatus::Error);
        }
    };
    let shown = match args.progress {
        When::Always => true,
        When::Never => false,
        When::Auto => !args.quiet && printer.stderr_is_terminal(),
    };
    let progress = printer.progress_line(planned.fire_count(), "fires", shown);
    let mut report = planned.run(&workspace, &registry, &graph.nodes, started, &|| {
        progress.tick();
    });
    report.unseen_writes = unseen_writes;
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
    let judging = Judging {
        strict: args.strict,
        allow_empty: args.allow_empty,
        quiet: args.quiet,
    };
    Ok(say_judgement(
        judge(&report, &graph.nodes, judging, written),
        &printer,
    ))
}

/// The notices of a judged report, then its exit status.
fn say_judgement((exit, notices): (GateExit, Vec<Notice>), printer: &Printer) -> ExitStatus {
    for notice in &notices {
        print_notice(notice, printer);
    }
    match exit {
        GateExit::Success => ExitStatus::Success,
        GateExit::Failure => ExitStatus::Failure,
        GateExit::Error => ExitStatus::Error,
        GateExit::NotEvaluated => ExitStatus::NotEvaluated,
    }
}

fn print_notice(notice: &Notice, printer: &Printer) {
    match notice {
        Notice::Status(line) => printer.status(line),
        Notice::Error { message, help } => {
            error_line(printer, message, help.as_deref());
        }
        Notice::StaleGraph {
            stale,
            allow_stale_refusal,
        } => print_stale_graph(
            stale,
            allow_stale_refusal.as_ref(),
            &stale.check_help(),
            printer,
        ),
    }
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

fn merge(args: &GateMergeArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let refused = |refusal: Notice| {
        print_notice(&refusal, &printer);
        ExitStatus::Error
    };
    let (shards, report) = read_and_merge_shards(&args.files).map_err(refused)?;
    let workspace = resolve_workspace(&args.project, &printer)?;
    let graph = usable_graph(&workspace.layout, &printer).ok_or(ExitStatus::Error)?;
    refuse_shards_of_another_project(&workspace, &graph.nodes, &shards).map_err(refused)?;
    let cwd = working_folder(&printer)?;
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
    let judging = Judging {
        strict: args.strict,
        allow_empty: args.allow_empty,
        quiet: true,
    };
    Ok(say_judgement(
        judge(&report, &graph.nodes, judging, written),
        &printer,
    ))
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
        step_summary_path().map(|_| "the job's step summary".to_owned())
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

/// The file `$GITHUB_STEP_SUMMARY` names, when it is set (GitHub's runner sets it to a path).
fn step_summary_path() -> Option<String> {
    env_var("GITHUB_STEP_SUMMARY").filter(|path| !path.is_empty())
}

/// `$GITHUB_STEP_SUMMARY`, when set, gets the Markdown summary appended (it ends with a
/// newline, so the next step's summary starts on a line of its own).
#[expect(
    clippy::disallowed_methods,
    reason = "GitHub's step summary file, named by the runner's GITHUB_STEP_SUMMARY, outside any project"
)]
fn append_step_summary(markdown: &str, printer: &Printer) {
    let Some(path) = step_summary_path() else {
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
