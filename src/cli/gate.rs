//! `aidlc gate check`: the CI gate check over an intent's deliverables.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use camino::Utf8PathBuf;

use crate::cli::ExitStatus;
use crate::cli::args::{Format, GateArgs, GateCheckArgs, GateCommand, GateFormat};
use crate::cli::commands::{error_line, resolve_layout};
use crate::cli::engine::{usable_graph, usable_registry};
use crate::cli::printer::Printer;
use crate::discover::Layout;
use crate::dispatch::stage_graph::GraphNode;
use crate::gate::dispatch::{GatePlan, plan_gate_fires, run_gate_fires};
use crate::gate::render;
use crate::gate::report::{GateReport, GateSkip, SensorsOff, SkipReason};
use crate::workspace;

pub fn run(args: &GateArgs) -> ExitStatus {
    match &args.command {
        GateCommand::Check(check_args) => check(check_args),
    }
}

fn check(args: &GateCheckArgs) -> ExitStatus {
    // `--quiet` silences the progress line only: an error is never quiet.
    let printer = Printer::new(Format::Human, false);
    let started = Instant::now();
    let layout = match resolve_layout(&args.project, &printer) {
        Ok(layout) => layout,
        Err(status) => return status,
    };
    let Some(registry) = usable_registry(&layout, &printer) else {
        return ExitStatus::Error;
    };
    let Some(graph) = usable_graph(&layout, &printer) else {
        return ExitStatus::Error;
    };
    let nodes = graph.nodes;
    let records = match intent_records(&layout, args) {
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
    let fire_on = args.fire_on;
    let (plan, sensors_off) = match plan_all(&layout, &nodes, &records, args) {
        Ok(planned) => planned,
        Err(message) => {
            error_line(&printer, &message, None);
            return ExitStatus::Error;
        }
    };
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        usize::from,
    );
    let progress = Progress::new(plan.fires.len(), !args.quiet);
    let fires = run_gate_fires(
        &layout,
        &registry,
        &nodes,
        &plan.fires,
        jobs,
        !args.no_record,
        &|| progress.tick(),
    );
    progress.finish();
    let report = GateReport {
        intents: records
            .iter()
            .filter_map(|record| record.file_name().map(str::to_owned))
            .collect(),
        stages_checked: plan.stages_checked,
        deliverables_found: plan.deliverables_found,
        fires,
        skips: plan.skips,
        dead_bindings: plan.dead_bindings,
        unfired_bindings: plan.unfired_bindings,
        fire_on,
        bindings_selected: plan.bindings_selected,
        bindings_not_selected: plan.bindings_not_selected,
        sensors_off,
        duration: started.elapsed(),
        shard: args.shard,
        recorded: !args.no_record,
    };
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

/// The intent records to check: `--all-intents`, `--intent NAME`, or the active intent.
fn intent_records(layout: &Layout, args: &GateCheckArgs) -> Result<Vec<Utf8PathBuf>, String> {
    let project = &layout.project_dir;
    let space = workspace::active_space(project);
    if args.all_intents {
        let records = workspace::intent_records(project, &space);
        if records.is_empty() {
            return Err(format!(
                "no intent record in space \"{space}\": nothing to check"
            ));
        }
        return Ok(records);
    }
    match workspace::unambiguous_active_intent(project, &space, args.intent.as_deref()) {
        Ok(Some(record)) => Ok(vec![record]),
        Ok(None) => Err(format!(
            "no intent record in space \"{space}\": nothing to check"
        )),
        Err(error) => Err(error.to_string()),
    }
}

/// The combined plan of every record, and which sensors switch (if any) turned some off. A
/// record with sensors off has its fires turned into `sensors off` skips, and none of its
/// bindings counts as unfired: it was switched off, not forgotten.
fn plan_all(
    layout: &Layout,
    nodes: &[GraphNode],
    records: &[Utf8PathBuf],
    args: &GateCheckArgs,
) -> Result<(GatePlan, Option<SensorsOff>), String> {
    let fire_on = args.fire_on;
    let mut combined = GatePlan::default();
    let mut off_in_state: Vec<String> = Vec::new();
    for record in records {
        let mut plan = plan_gate_fires(layout, nodes, record, &args.stages, fire_on, args.shard)
            .map_err(|error| error.to_string())?;
        if sensors_off(record) {
            if !workspace::sensors_off_by_environment() {
                off_in_state.push(record.file_name().unwrap_or_default().to_owned());
            }
            plan.unfired_bindings.clear();
            plan.skips.extend(plan.fires.drain(..).map(|fire| {
                GateSkip {
                    stage: fire.stage,
                    sensor_id: fire.sensor_id,
                    deliverable: fire
                        .deliverable
                        .strip_prefix(&layout.project_dir)
                        .ok()
                        .map(camino::Utf8Path::to_owned),
                    reason: SkipReason::SensorsOff,
                }
            }));
        }
        combined.fires.extend(plan.fires);
        combined.skips.extend(plan.skips);
        combined.dead_bindings.extend(plan.dead_bindings);
        combined.unfired_bindings.extend(plan.unfired_bindings);
        combined.stages_checked += plan.stages_checked;
        combined.deliverables_found += plan.deliverables_found;
        combined.bindings_selected += plan.bindings_selected;
        combined.bindings_not_selected += plan.bindings_not_selected;
    }
    let unknown: Vec<&String> = args
        .stages
        .iter()
        .filter(|stage| !nodes.iter().any(|node| &node.slug == *stage))
        .collect();
    if let Some(stage) = unknown.first() {
        return Err(crate::dispatch::stage_graph::unknown_stage_message(
            stage, nodes,
        ));
    }
    let sensors_off = if workspace::sensors_off_by_environment() {
        Some(SensorsOff::Environment)
    } else {
        (!off_in_state.is_empty()).then_some(SensorsOff::State {
            intents: off_in_state,
        })
    };
    Ok((combined, sensors_off))
}

/// The Sensors ceremony, for one record.
fn sensors_off(record: &camino::Utf8Path) -> bool {
    workspace::sensors_off_by_environment()
        || workspace::read_state_text(record)
            .is_some_and(|text| workspace::sensors_off_in_state(&text))
}

fn print_report(report: &GateReport, args: &GateCheckArgs, printer: &Printer) {
    match args.format {
        GateFormat::Human => {
            let color = std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
            printer.out(render::render_human(report, color).trim_end());
        }
        GateFormat::Json => printer.out(render::render_json(report).trim_end()),
        GateFormat::Sarif => {
            printer.out(render::render_sarif(report, env!("CARGO_PKG_VERSION")).trim_end());
        }
        GateFormat::Github => {
            let annotations = render::render_github_annotations(report);
            if !annotations.trim().is_empty() {
                printer.out(annotations.trim_end());
            }
            append_step_summary(&render::render_github_step_summary(report), printer);
        }
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
struct Progress {
    total: usize,
    done: AtomicUsize,
    started: Instant,
    shown: bool,
}

impl Progress {
    fn new(total: usize, wanted: bool) -> Self {
        Self {
            total,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            shown: wanted && std::io::stderr().is_terminal(),
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
            let _ = write!(
                std::io::stderr(),
                "\r  [{}{}] {done}/{} fires",
                "#".repeat(filled),
                "-".repeat(width - filled),
                self.total
            );
        }
    }

    fn finish(&self) {
        if self.shown && self.started.elapsed().as_millis() > 300 {
            let _ = writeln!(
                std::io::stderr(),
                "\r  checked {} fires{:20}",
                self.total,
                ""
            );
        }
    }
}
