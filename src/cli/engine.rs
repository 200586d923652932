//! `aidlc engine …`: the sensor dispatcher (`sensor list|describe|fire`), the worker protocol
//! (`sensor-<id>`), the write hook (`hook run-sensors`), the human-turn hook
//! (`hook record-human-turn`) and the interaction receipts (`log decision|answer`).

use std::io::IsTerminal;

use crate::cli::args::{
    DescribeArgs, EngineCommand, FireArgs, Format, HookCommand, IntentCommand, IntentNewArgs,
    LearningsCommand, LearningsPersistArgs, LogCommand, ProjectArgs, RunSensorsArgs, SensorCommand,
};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{
    CommandResult, current_dir, env_var, resolve_layout, resolve_layout_near, resolve_workspace,
    usable_registry, working_folder,
};
use crate::cli::sensors::{described_lines, known_sensor};
use crate::compile::discover::lexically_normal;
use crate::harness::{self, Harness, payload};
use crate::leaves::exit_status::ExitStatus;
use crate::protocol::worker_outcome::{WorkerOutcome, protocol_output};
use crate::runtime::dispatch::fire::{FireContext, FireRequest, prepare_fire, run_fire};
use crate::runtime::dispatch::hook;
use crate::runtime::dispatch::hook_workspace::HookPlace;
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::shell_writes;
use crate::runtime::dispatch::write_event::{WriteEventRun, run_write_event};
use crate::runtime::receipts;
use crate::runtime::sensors;
use crate::runtime::sensors::descriptor::WorkerContext;
use crate::runtime::workspace::Workspace;

pub fn run(command: &EngineCommand) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    match command {
        EngineCommand::Sensor(sensor) => match sensor {
            SensorCommand::List(project) => list(project, &printer),
            SensorCommand::Describe(describe_args) => describe(describe_args, &printer),
            SensorCommand::Fire(fire_args) => fire(fire_args, &printer),
        },
        EngineCommand::Hook(hook) => match hook {
            HookCommand::RunSensors(run_args) => Ok(run_sensors(run_args, &printer)),
            HookCommand::RecordHumanTurn(project) => record_human_turn(project, &printer),
            HookCommand::Guard(project) => guard(project, &printer),
        },
        EngineCommand::Learnings(learnings) => match learnings {
            LearningsCommand::Surface(args) => json_reply(&args.project, &printer, |workspace| {
                crate::runtime::learnings::surface(workspace, &args.slug)
            }),
            LearningsCommand::Persist(persist_args) => learnings_persist(persist_args, &printer),
        },
        EngineCommand::Log(log) => match log {
            LogCommand::Decision(args) => json_reply(&args.project, &printer, |workspace| {
                receipts::record_decision(workspace, &args.request, std::time::SystemTime::now())
            }),
            LogCommand::Answer(args) => json_reply(&args.project, &printer, |workspace| {
                receipts::record_answer(workspace, &args.request, std::time::SystemTime::now())
            }),
        },
        EngineCommand::Intent(intent) => match intent {
            IntentCommand::New(new_args) => new_intent(new_args, &printer),
        },
        EngineCommand::Gate(gate) => crate::cli::gate_step::run(gate),
        EngineCommand::Worker(words) => worker(words, &printer),
    }
}

/// The live registry, or its errors printed (list and describe exit 1 on them).
fn live_registry(project: &ProjectArgs, printer: &Printer) -> Result<LiveRegistry, ExitStatus> {
    usable_registry(&resolve_layout(project, printer)?, printer).ok_or(ExitStatus::Failure)
}

fn list(project: &ProjectArgs, printer: &Printer) -> CommandResult {
    let registry = live_registry(project, printer)?;
    for (id, sensor) in &registry.sensors {
        printer.out(&format!(
            "{id}\t{}\t{}",
            sensor.manifest.kind, sensor.manifest.description
        ));
    }
    Ok(ExitStatus::Success)
}

fn describe(args: &DescribeArgs, printer: &Printer) -> CommandResult {
    let registry = live_registry(&args.project, printer)?;
    let sensor = known_sensor(&registry, &args.id, None, printer)?;
    printer.out(&described_lines(sensor).join("\n"));
    Ok(ExitStatus::Success)
}

fn fire(args: &FireArgs, printer: &Printer) -> CommandResult {
    // Run from outside the project, the output path says which project it belongs to.
    let workspace = resolve_layout_near(&args.project, Some(&args.output_path), printer)
        .map(Workspace::resolve)?;
    let cwd = working_folder(printer)?;
    let request = FireRequest {
        sensor_id: args.id.clone(),
        stage: args.stage.clone(),
        output_path: args.output_path.clone(),
        cwd,
    };
    let result = prepare_fire(&workspace, &request)
        .and_then(|prepared| run_fire(&workspace, &prepared, &FireContext::default(), None));
    match result {
        Ok(report) => {
            printer.out(&report.verdict_line);
            if let Some(explained) = report.verdict.explained_note() {
                printer.status(&format!(
                    "note: sensor \"{}\" evaluated nothing (fire {}): {explained}",
                    args.id, report.fire_id
                ));
            }
            Ok(ExitStatus::Success)
        }
        Err(refusal) => {
            for diagnostic in &refusal.diagnostics {
                printer.diagnostic(diagnostic, &refusal.sources);
            }
            error_line(printer, &refusal.message, refusal.help.as_deref());
            Err(ExitStatus::Error)
        }
    }
}

/// `sensor-<id> --stage S --output-path P | --file-path P [extras…]`: one shipped sensor as a
/// worker process. Prints its one JSON line and exits 0 (127 when its tool is unavailable,
/// with the line too); a check that could not run says why on stderr and exits 2, a usage
/// error exits 1. An id that is not shipped exits 2 without a verdict, so no caller reads a
/// pass.
fn worker(words: &[String], printer: &Printer) -> CommandResult {
    let Some(id) = words.first().and_then(|word| word.strip_prefix("sensor-")) else {
        let name = words.first().map_or("", String::as_str);
        return Err(error_line(
            printer,
            &format!("unknown engine command: {name}"),
            Some("run `aidlc engine --help` for the commands"),
        ));
    };
    let Some(sensor) = sensors::shipped(id) else {
        return Err(error_line(
            printer,
            &format!(
                "sensor-{id} is not a shipped sensor; shipped: {}",
                sensors::SHIPPED_SENSOR_IDS.join(", ")
            ),
            None,
        ));
    };
    // `AIDLC_PROJECT_DIR`, `CLAUDE_PROJECT_DIR` (the dispatcher sets both), else the working
    // folder (the dispatcher's cwd is the project).
    let project_dir = match harness::environment::project_dir_from(&env_var) {
        Some(dir) => camino::Utf8PathBuf::from(dir),
        None => working_folder(printer)?,
    };
    let context = WorkerContext {
        project_dir,
        timeout: crate::runtime::worker_process::FALLBACK_TIMEOUT,
    };
    let outcome = (sensor.check)(&words[1..], &context);
    let (code, stdout) = protocol_output(&outcome);
    if !stdout.is_empty() {
        printer.out(stdout.trim_end());
    }
    match outcome {
        WorkerOutcome::ScriptError(message) | WorkerOutcome::UsageError(message) => {
            printer.status(&format!("aidlc-sensor-{id}: {message}"));
        }
        _ => {}
    }
    Ok(match code {
        0 => ExitStatus::Success,
        1 => ExitStatus::Failure,
        127 => ExitStatus::ToolUnavailable,
        _ => ExitStatus::Error,
    })
}

fn new_intent(args: &IntentNewArgs, printer: &Printer) -> CommandResult {
    let layout = resolve_layout(&args.project, printer)?;
    match crate::runtime::workspace::create_intent(
        &layout.project_dir,
        &args.label,
        None,
        std::time::SystemTime::now(),
    ) {
        Ok(created) => {
            printer.out(
                &serde_json::json!({
                    "record": layout.display(&created.record).as_str(),
                    "folder": created.folder_name,
                    "uuid": created.uuid,
                })
                .to_string(),
            );
            printer.status(&format!(
                "created intent {} and made it the active intent",
                created.folder_name
            ));
            Ok(ExitStatus::Success)
        }
        Err(error) => Err(error_line(printer, &error.to_string(), None)),
    }
}

/// The write hook. Every path exits 0, and nothing is printed on stdout.
fn run_sensors(args: &RunSensorsArgs, printer: &Printer) -> ExitStatus {
    let requested_harness = args.project.harness;
    let Some(payload) = write_payload(requested_harness) else {
        return ExitStatus::Success;
    };
    let run = WriteEventRun {
        place: hook_place(&args.project),
        audit_hook: args.audit_hook.as_deref(),
    };
    // stdout is the hook protocol's channel to the agent harness: the banner (once per run) and
    // the notices go to stderr, as the reference's hook writes them.
    let mut banner_printed = false;
    run_write_event(&run, &payload, &mut |outcome| {
        if outcome.first_run && !banner_printed {
            banner_printed = true;
            printer.status(hook::FIRST_RUN_BANNER);
        }
        for notice in &outcome.notices {
            printer.status(notice);
        }
    });
    ExitStatus::Success
}

/// Where a hook runs, as its command line and this process's environment say.
fn hook_place(project: &ProjectArgs) -> HookPlace<'_> {
    HookPlace {
        requested_harness: project.harness,
        project_dir: project.project_dir.as_deref(),
        env: &env_var,
        cwd: current_dir(),
    }
}

/// The write hook's payload: Kiro IDE 0.12's in `USER_PROMPT` (its stdin never closes, so it is
/// not read then), else stdin's, read within its bound; `None` when there is none (a
/// terminal, nothing in time).
fn write_payload(requested: Option<Harness>) -> Option<Vec<u8>> {
    if let Some(from_environment) = payload::payload_from_environment(&env_var)
        && (requested == Some(Harness::KiroIde)
            || requested.is_none()
                && payload::detect_harness(&from_environment) == Harness::KiroIde)
    {
        return Some(from_environment);
    }
    stdin_payload()
}

/// The hook's payload on stdin, read within its bound; `None` on a terminal, or when nothing
/// came in time.
fn stdin_payload() -> Option<Vec<u8>> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    payload::read_payload_bounded(std::io::stdin())
}

/// `log decision|answer` and `learnings surface`: the reply of `reply` in the workspace on
/// stdout (exit 0), or its refusal on stderr (exit 1, as the reference's `aidlc-log.ts` and
/// D43–D45), or exit 2 when the project cannot be found.
fn json_reply<E: std::fmt::Display>(
    project: &ProjectArgs,
    printer: &Printer,
    reply: impl FnOnce(&Workspace) -> Result<serde_json::Value, E>,
) -> CommandResult {
    let workspace = resolve_workspace(project, printer)?;
    print_json_reply(reply(&workspace), printer)
}

/// A command's JSON reply on stdout (exit 0), or its refusal on stderr (exit 1).
fn print_json_reply(
    result: Result<serde_json::Value, impl std::fmt::Display>,
    printer: &Printer,
) -> CommandResult {
    match result {
        Ok(reply) => {
            printer.out(&reply.to_string());
            Ok(ExitStatus::Success)
        }
        Err(error) => {
            error_line(printer, &error.to_string(), None);
            Err(ExitStatus::Failure)
        }
    }
}

/// The pre-tool guard (`dispatch::shell_writes::guard_tool_call`).
fn guard(project: &ProjectArgs, printer: &Printer) -> CommandResult {
    let run = shell_writes::guard_tool_call(&hook_place(project), stdin_payload().as_deref());
    if let Some(problem) = run.snapshot_not_kept {
        printer.status(&format!(
            "warning: aidlc guard: the project's snapshot before this shell call was not kept ({problem}); the files it changes will not be checked"
        ));
    }
    let output = run.output;
    if !output.stdout.is_empty() {
        printer.out(output.stdout.trim_end());
    }
    if !output.stderr.is_empty() {
        printer.status(output.stderr.trim_end());
    }
    if output.status == 0 {
        Ok(ExitStatus::Success)
    } else {
        Err(ExitStatus::Error)
    }
}

/// The human-turn hook (`receipts::human_turn_hook`): a payload that is not the harness's real
/// prompt event is refused (exit 2, naming what it lacks); anything else exits 0, a failed
/// write said on stderr, so it never blocks the turn.
fn record_human_turn(project: &ProjectArgs, printer: &Printer) -> CommandResult {
    // `hook install` writes `--harness` for every harness but Claude Code.
    let harness = project.harness.unwrap_or(Harness::Claude);
    let payload = if payload::prompt_reads_stdin(harness) {
        stdin_payload().unwrap_or_default()
    } else {
        Vec::new()
    };
    let hooked = receipts::human_turn_hook(
        &hook_place(project),
        harness,
        &payload,
        std::time::SystemTime::now(),
    );
    match hooked {
        receipts::HumanTurnHook::NotAPromptEvent(problem) => Err(error_line(
            printer,
            &format!(
                "aidlc: not a {} prompt event: {problem}; no human turn was recorded (this hook is registered for {})",
                harness.product_name(),
                harness.product_name()
            ),
            Some(
                "only the harness records a human turn, through the hook `aidlc hook install` registers",
            ),
        )),
        receipts::HumanTurnHook::NotRecorded(error) => {
            printer.status(&format!("aidlc: the human turn was not recorded: {error}"));
            Ok(ExitStatus::Success)
        }
        receipts::HumanTurnHook::Handled => Ok(ExitStatus::Success),
    }
}

/// `learnings persist`: the reply on stdout, exit 0; 1 when refused (D43–D45); 2 when a selection
/// cannot be written as given (nothing was written).
fn learnings_persist(args: &LearningsPersistArgs, printer: &Printer) -> CommandResult {
    let workspace = resolve_workspace(&args.project, printer)?;
    let cwd = working_folder(printer)?;
    let given = lexically_normal(&cwd.join(&args.selections_json));
    let persisted = crate::runtime::learnings::persist(
        &workspace,
        &args.slug,
        &given,
        std::time::SystemTime::now(),
    );
    match persisted {
        Err(error @ crate::runtime::learnings::LearningsError::Invalid(_)) => Err(error_line(
            printer,
            &error.to_string(),
            Some("fix the selection in the selections file, then persist again"),
        )),
        persisted => print_json_reply(persisted.map(|reply| serde_json::json!(reply)), printer),
    }
}
