//! `aidlc engine gate start|revise`: the gate's sensor step as the conductor calls it (D10).
//! This file turns the arguments into the calls of `gate::step::command`, loads the project
//! between them, and prints what they return: the JSON reply on stdout; the summary of what
//! ran, and every refusal, on stderr.

use crate::cli::args::{EngineGateCommand, Format};
use crate::cli::gate::say;
use crate::cli::printer::Printer;
use crate::cli::project::{
    CommandResult, env_var, resolve_workspace, usable_graph, usable_registry,
};
use crate::leaves::exit_status::ExitStatus;
use crate::runtime::gate::step::GateEntry;
use crate::runtime::gate::step::command::{GateStepFlags, gate_step, gate_step_request};

pub fn run(command: &EngineGateCommand) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let (project, flags) = match command {
        EngineGateCommand::Start(start) => (
            &start.project,
            GateStepFlags {
                entry: GateEntry::Start,
                stage: &start.slug,
                artifacts: start.artifacts.as_deref(),
                unit: start.unit.as_deref(),
                override_requested: start.override_args.override_blocking_sensors,
                user_input: start.override_args.user_input.as_deref(),
            },
        ),
        EngineGateCommand::Revise(revise) => (
            &revise.project,
            GateStepFlags {
                entry: GateEntry::Revise,
                stage: &revise.slug,
                artifacts: None,
                unit: None,
                override_requested: revise.override_args.override_blocking_sensors,
                user_input: revise.override_args.user_input.as_deref(),
            },
        ),
    };
    let request = gate_step_request(&flags, &env_var).map_err(|outcome| say(&outcome, &printer))?;
    let workspace = resolve_workspace(project, &printer)?;
    let registry = usable_registry(&workspace.layout, &printer).ok_or(ExitStatus::Error)?;
    let graph = usable_graph(&workspace.layout, &printer).ok_or(ExitStatus::Error)?;
    Ok(say(
        &gate_step(&workspace, &registry, &graph, &request),
        &printer,
    ))
}
