//! `aidlc engine gate start|revise`: the gate's sensor step as the conductor calls it (D10).
//! The JSON reply goes to stdout; the summary of what ran, and every refusal, to stderr.

use std::fmt::Write as _;

use crate::cli::ExitStatus;
use crate::cli::args::{
    EngineGateArgs, EngineGateCommand, Format, GateOverrideArgs, GateReviseArgs, GateStartArgs,
    ProjectArgs,
};
use crate::cli::gate::print_stale_graph;
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{env_var, resolve_workspace, usable_graph, usable_registry};
use crate::leaves::english::plural;
use crate::runtime::dispatch::time_limit;
use crate::runtime::gate::disabled_stages::refuse_disabled_stages;
use crate::runtime::gate::stale_graph::check_graph_against_sources;
use crate::runtime::gate::step::{
    DispatchSummary, GateEntry, GateStepError, GateStepRequest, run_gate_step,
};

pub fn run(args: &EngineGateArgs) -> ExitStatus {
    let printer = Printer::new(Format::Human, false);
    let dispatch_cap = match time_limit::gate_dispatch_cap(&env_var) {
        Ok(cap) => cap,
        Err(message) => {
            error_line(&printer, &message, Some(time_limit::GATE_DISPATCH_CAP_HELP));
            return ExitStatus::Error;
        }
    };
    let (project, request) = match &args.command {
        EngineGateCommand::Start(start) => (&start.project, start_request(start)),
        EngineGateCommand::Revise(revise) => (&revise.project, revise_request(revise)),
    };
    let request = GateStepRequest {
        dispatch_cap,
        ..request
    };
    gate_step(project, &request, &printer)
}

fn start_request(args: &GateStartArgs) -> GateStepRequest {
    GateStepRequest {
        artifacts: args.artifacts.clone(),
        unit: args.unit.clone(),
        ..request(GateEntry::Start, &args.slug, &args.override_args)
    }
}

fn revise_request(args: &GateReviseArgs) -> GateStepRequest {
    request(GateEntry::Revise, &args.slug, &args.override_args)
}

fn request(entry: GateEntry, slug: &str, override_args: &GateOverrideArgs) -> GateStepRequest {
    GateStepRequest {
        entry,
        stage: slug.to_owned(),
        artifacts: None,
        unit: None,
        override_requested: override_args.override_blocking_sensors,
        user_input: override_args.user_input.clone(),
        dispatch_disabled_by_environment: crate::runtime::workspace::sensors_off_by_environment(),
        dispatch_cap: None,
    }
}

/// D9: 0 the gate row is written (or the gate was already open); 1 the gate is refused (every
/// refusal, including a blocking sensor that could not be evaluated or was switched off: exit 3
/// is `gate check`'s); 2 the step could not run, a stale graph included (as `gate check`
/// refuses one), before any fire or row.
fn gate_step(project: &ProjectArgs, request: &GateStepRequest, printer: &Printer) -> ExitStatus {
    let workspace = match resolve_workspace(project, printer) {
        Ok(workspace) => workspace,
        Err(status) => return status,
    };
    let Some(registry) = usable_registry(&workspace.layout, printer) else {
        return ExitStatus::Error;
    };
    let Some(graph) = usable_graph(&workspace.layout, printer) else {
        return ExitStatus::Error;
    };
    // The compiled graph decides what fires and what blocks, so a gate opens only on the graph
    // its sources compile to now: there is no `--allow-stale` here.
    if let Err(stale) = check_graph_against_sources(&workspace.layout) {
        print_stale_graph(&stale, None, stale.gate_step_help(), printer);
        return ExitStatus::Error;
    }
    if let Err(refusal) = refuse_disabled_stages(
        &graph,
        std::slice::from_ref(&request.stage),
        workspace.project_dir(),
        &workspace.layout.harness_json_path,
    ) {
        error_line(printer, &refusal.message, Some(&refusal.help));
        return ExitStatus::Error;
    }
    match run_gate_step(&workspace, &registry, &graph.nodes, request) {
        Ok(reply) => {
            printer.status(&summary_line(&request.stage, &reply.summary));
            printer.out(&reply.json().to_string());
            ExitStatus::Success
        }
        Err(error) => {
            error_line(printer, &error.to_string(), error.help());
            refusal_status(&error)
        }
    }
}

fn refusal_status(error: &GateStepError) -> ExitStatus {
    if error.is_refusal() {
        ExitStatus::Failure
    } else {
        ExitStatus::Error
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
    if summary.advisory_not_evaluated > 0 {
        let _ = write!(
            line,
            "; {} advisory fire{} evaluated nothing",
            summary.advisory_not_evaluated,
            plural(summary.advisory_not_evaluated)
        );
    }
    if summary.not_regular_files > 0 {
        let _ = write!(
            line,
            "; {} path{} named like an output skipped: not a regular file",
            summary.not_regular_files,
            plural(summary.not_regular_files)
        );
    }
    if summary.skipped_fires > 0 {
        let _ = write!(
            line,
            "; {} blocking fire{} not dispatched: the bytes changed first",
            summary.skipped_fires,
            plural(summary.skipped_fires)
        );
    }
    line
}
