//! `aidlc gate check` and `aidlc gate merge`: the CI gate check over an intent's deliverables,
//! and the join of a shard matrix's reports. This file turns the arguments into one call of
//! `gate::command` and prints what it returns (the notices, the report on stdout) and the
//! progress line.

use std::sync::OnceLock;

use camino::Utf8PathBuf;

use crate::cli::args::{Format, GateCheckArgs, GateCommand, GateMergeArgs, When};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{
    CommandResult, current_dir, env_var, resolve_workspace, usable_graph, usable_registry,
};
use crate::leaves::exit_status::ExitStatus;
use crate::report::{self, ReportFormat};
use crate::runtime::gate::command::{
    self, CheckFlags, CheckProgress, GateOutcome, Judging, Notice, ReportOutput,
    read_and_merge_shards,
};
use crate::runtime::gate::stale_graph::{AllowStaleRefusal, StaleGraph, StaleKind};
use crate::runtime::workspace::Workspace;

pub fn run(command: &GateCommand) -> CommandResult {
    match command {
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
    let flags = CheckFlags {
        stages: &args.stages,
        intent: args.intent.as_deref(),
        all_intents: args.all_intents,
        allow_stale: args.allow_stale,
        fire_on: args.fire_on,
        shard: args.shard,
        jobs: args.jobs,
        record: !args.no_record,
        timeout: args.timeout,
        started,
        judging: Judging {
            strict: args.strict,
            allow_empty: args.allow_empty,
            quiet: args.quiet,
        },
    };
    let progress = Progress {
        printer: &printer,
        shown: match args.progress {
            When::Always => true,
            When::Never => false,
            When::Auto => !args.quiet && printer.stderr_is_terminal,
        },
        line: OnceLock::new(),
    };
    let outcome = command::check(
        &workspace,
        &registry,
        &graph,
        &flags,
        &report_output(args.format, &args.reports, &workspace, &printer),
        &env_var,
        &progress,
    );
    Ok(say(&outcome, &printer))
}

fn merge(args: &GateMergeArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let merged = read_and_merge_shards(&args.files).map_err(|refusal| {
        print_notice(&refusal, &printer);
        ExitStatus::Error
    })?;
    let workspace = resolve_workspace(&args.project, &printer)?;
    let graph = usable_graph(&workspace.layout, &printer).ok_or(ExitStatus::Error)?;
    let judging = Judging {
        strict: args.strict,
        allow_empty: args.allow_empty,
        quiet: true,
    };
    let outcome = command::merge(
        &workspace,
        &graph,
        merged,
        &report_output(args.format, &args.reports, &workspace, &printer),
        judging,
        current_dir().as_deref(),
        &env_var,
    );
    Ok(say(&outcome, &printer))
}

/// Where the report goes; its paths for people open from the working folder.
fn report_output<'a>(
    format: ReportFormat,
    reports: &'a [(ReportFormat, Utf8PathBuf)],
    workspace: &Workspace,
    printer: &Printer,
) -> ReportOutput<'a> {
    ReportOutput {
        format,
        reports,
        stdout_color: printer.stdout_color(),
        display_prefix: current_dir()
            .map(|cwd| crate::leaves::fs_util::path_from(&cwd, workspace.project_dir()))
            .unwrap_or_default(),
        render: report::render,
    }
}

/// The progress line of a check's fires, drawn once the plan says how many there are.
struct Progress<'a> {
    printer: &'a Printer,
    shown: bool,
    line: OnceLock<indicatif::ProgressBar>,
}

impl CheckProgress for Progress<'_> {
    fn starting(&self, notes: &[String], fires: usize) {
        for note in notes {
            self.printer.status(note);
        }
        let _ = self
            .line
            .set(self.printer.progress_line(fires, "fires", self.shown));
    }

    fn fire_done(&self) {
        if let Some(line) = self.line.get() {
            line.inc(1);
        }
    }

    fn finished(&self) {
        if let Some(line) = self.line.get() {
            line.finish_and_clear();
        }
    }
}

/// What a gate command (check, merge, the gate step) returned, in order, then its exit status.
pub(super) fn say(outcome: &GateOutcome, printer: &Printer) -> ExitStatus {
    for notice in &outcome.said {
        print_notice(notice, printer);
    }
    outcome.exit
}

fn print_notice(notice: &Notice, printer: &Printer) {
    match notice {
        Notice::Report(text) => printer.out(text),
        Notice::Status(line) => printer.status(line),
        Notice::Error { message, help } => {
            error_line(printer, message, help.as_deref());
        }
        Notice::StaleGraph {
            stale,
            allow_stale_refusal,
            help,
        } => print_stale_graph(stale, allow_stale_refusal.as_ref(), help, printer),
    }
}

/// A stale graph refused: the sources' errors (when they do not compile), then what drifted,
/// why `--allow-stale` did not apply (when it was given), and the fix.
fn print_stale_graph(
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
