//! `aidlc engine gate start|revise`: the gate's sensor step as the conductor calls it (D10).
//! The JSON reply goes to stdout; the summary of what ran, and every refusal, to stderr.

use std::fmt::Write as _;

use crate::cli::ExitStatus;
use crate::cli::args::{EngineGateArgs, EngineGateCommand, Format, ProjectArgs};
use crate::cli::gate::print_stale_graph;
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{
    CommandResult, env_var, resolve_workspace, usable_graph, usable_registry,
};
use crate::leaves::english::plural;
use crate::runtime::dispatch::time_limit;
use crate::runtime::gate::disabled_stages::refuse_disabled_stages;
use crate::runtime::gate::stale_graph::check_graph_against_sources;
use crate::runtime::gate::step::{DispatchSummary, GateEntry, GateStepRequest, run_gate_step};

pub fn run(args: &EngineGateArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let dispatch_cap = time_limit::gate_dispatch_cap(&env_var).map_err(|message| {
        error_line(&printer, &message, Some(time_limit::GATE_DISPATCH_CAP_HELP))
    })?;
    let (entry, project, slug, override_args, artifacts, unit) = match &args.command {
        EngineGateCommand::Start(start) => (
            GateEntry::Start,
            &start.project,
            &start.slug,
            &start.override_args,
            start.artifacts.clone(),
            start.unit.clone(),
        ),
        EngineGateCommand::Revise(revise) => (
            GateEntry::Revise,
            &revise.project,
            &revise.slug,
            &revise.override_args,
            None,
            None,
        ),
    };
    let request = GateStepRequest {
        entry,
        stage: slug.clone(),
        artifacts,
        unit,
        override_requested: override_args.override_blocking_sensors,
        user_input: override_args.user_input.clone(),
        dispatch_disabled_by_environment: crate::runtime::workspace::sensors_off_by_environment(),
        dispatch_cap,
    };
    gate_step(project, &request, &printer)
}

/// D9: 0 the gate row is written (or the gate was already open); 1 the gate is refused (every
/// refusal, including a blocking sensor that could not be evaluated or was switched off: exit 3
/// is `gate check`'s); 2 the step could not run, a stale graph included (as `gate check`
/// refuses one), before any fire or row.
fn gate_step(project: &ProjectArgs, request: &GateStepRequest, printer: &Printer) -> CommandResult {
    let workspace = resolve_workspace(project, printer)?;
    let registry = usable_registry(&workspace.layout, printer).ok_or(ExitStatus::Error)?;
    let graph = usable_graph(&workspace.layout, printer).ok_or(ExitStatus::Error)?;
    // The compiled graph decides what fires and what blocks, so a gate opens only on the graph
    // its sources compile to now: there is no `--allow-stale` here.
    if let Err(stale) = check_graph_against_sources(&workspace.layout) {
        print_stale_graph(&stale, None, stale.gate_step_help(), printer);
        return Err(ExitStatus::Error);
    }
    if let Err(refusal) = refuse_disabled_stages(
        &graph,
        std::slice::from_ref(&request.stage),
        workspace.project_dir(),
        &workspace.layout.harness_json_path,
    ) {
        return Err(error_line(printer, &refusal.message, Some(&refusal.help)));
    }
    match run_gate_step(&workspace, &registry, &graph.nodes, request) {
        Ok(reply) => {
            printer.status(&summary_line(&request.stage, &reply.summary));
            printer.out(&reply.json().to_string());
            Ok(ExitStatus::Success)
        }
        Err(error) => {
            error_line(printer, &error.to_string(), error.help());
            Err(if error.is_refusal() {
                ExitStatus::Failure
            } else {
                ExitStatus::Error
            })
        }
    }
}

/// How much was checked (D4): `gate sensors of "<slug>": 3 fires on 2 deliverables (2 blocking,
/// 1 advisory)`, or why nothing fired.
fn summary_line(slug: &str, summary: &DispatchSummary) -> String {
    if let Some(reason) = summary.nothing_dispatched_because {
        return format!("gate sensors of \"{slug}\": none fired ({reason})");
    }
    let fires = summary.blocking_fires + summary.advisory_fires;
    let mut line = format!(
        "gate sensors of \"{slug}\": {fires} fire{} on {} deliverable{} ({} blocking, {} advisory)",
        plural(fires),
        summary.deliverables,
        plural(summary.deliverables),
        summary.blocking_fires,
        summary.advisory_fires
    );
    for (count, noun, what) in [
        (
            summary.advisory_not_evaluated,
            "advisory fire",
            "evaluated nothing",
        ),
        (
            summary.not_regular_files,
            "path",
            "named like an output skipped: not a regular file",
        ),
        (
            summary.skipped_fires,
            "blocking fire",
            "not dispatched: the bytes changed first",
        ),
    ] {
        if count > 0 {
            let _ = write!(line, "; {count} {noun}{} {what}", plural(count));
        }
    }
    line
}
