//! `aidlc gate check`: the CI gate check over an intent's deliverables. This file parses,
//! calls `gate::check` and prints; the plan, the Sensors switch and the report are the gate's.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::cli::ExitStatus;
use crate::cli::args::{Format, GateArgs, GateCheckArgs, GateCommand};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{resolve_workspace, usable_graph, usable_registry};
use crate::gate::check::{CheckRequest, intent_records, plan_check};
use crate::gate::render::{self, RenderSettings};
use crate::gate::report::GateReport;

pub fn run(args: &GateArgs) -> ExitStatus {
    match &args.command {
        GateCommand::Check(check_args) => check(check_args),
    }
}

fn check(args: &GateCheckArgs) -> ExitStatus {
    // `--quiet` silences the progress line only: an error is never quiet.
    let printer = Printer::new(Format::Human, false);
    let started = Instant::now();
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
    let planned = match plan_check(&workspace, &nodes, &records, &check_request(args)) {
        Ok(planned) => planned,
        Err(message) => {
            error_line(&printer, &message, None);
            return ExitStatus::Error;
        }
    };
    let progress = Progress::new(planned.fire_count(), !args.quiet, &printer);
    let report = planned.run(&workspace, &registry, &nodes, started, &|| progress.tick());
    progress.finish();
    print_report(&report, args, &printer);
    let status = exit_status(&report, args.strict, args.allow_empty);
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
    status
}

/// The arguments as the gate takes them; `--jobs` defaults to the available cores.
fn check_request(args: &GateCheckArgs) -> CheckRequest {
    CheckRequest {
        stages: args.stages.clone(),
        fire_on: args.fire_on,
        shard: args.shard,
        jobs: args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            usize::from,
        ),
        record: !args.no_record,
    }
}

fn print_report(report: &GateReport, args: &GateCheckArgs, printer: &Printer) {
    let settings = RenderSettings {
        color: printer.stdout_color(),
    };
    let rendered = render::render(report, args.format, settings);
    if !rendered.stdout.trim().is_empty() {
        printer.out(rendered.stdout.trim_end());
    }
    if let Some(markdown) = &rendered.step_summary {
        append_step_summary(markdown, printer);
    }
}

/// `$GITHUB_STEP_SUMMARY`, when set, gets the Markdown summary appended.
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

/// D9, in this order: 1 for blocking findings (any findings with `--strict`); 3 when a
/// blocking sensor could not be evaluated or never fired; 2 when nothing was checked at all
/// (no fire passed or failed), unless `--allow-empty`; else 0.
fn exit_status(report: &GateReport, strict: bool, allow_empty: bool) -> ExitStatus {
    let counts = report.counts();
    if counts.blocking_failed > 0 || (strict && counts.failed > 0) {
        ExitStatus::Failure
    } else if counts.blocking_not_evaluated > 0 {
        ExitStatus::NotEvaluated
    } else if report.nothing_checked().is_some() && !allow_empty {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    }
}

/// A one-line progress bar on stderr, only on a terminal and only for runs that take more than
/// a moment.
struct Progress<'printer> {
    total: usize,
    done: AtomicUsize,
    started: Instant,
    shown: bool,
    printer: &'printer Printer,
}

impl<'printer> Progress<'printer> {
    fn new(total: usize, wanted: bool, printer: &'printer Printer) -> Self {
        Self {
            total,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            shown: wanted && printer.stderr_is_terminal(),
            printer,
        }
    }

    fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.shown && self.started.elapsed().as_millis() > 300 {
            let width = 24;
            let filled = (done * width)
                .checked_div(self.total)
                .unwrap_or(width)
                .min(width);
            self.printer.progress(&format!(
                "  [{}{}] {done}/{} fires",
                "#".repeat(filled),
                "-".repeat(width - filled),
                self.total
            ));
        }
    }

    fn finish(&self) {
        if self.shown && self.started.elapsed().as_millis() > 300 {
            self.printer
                .progress_end(&format!("  checked {} fires{:20}", self.total, ""));
        }
    }
}
