//! `aidlc engine gate start|revise` as two calls: [`gate_step_request`] completes what the
//! conductor typed with the environment, and [`gate_step`] refuses a stale graph or a disabled
//! stage, then runs the step. Both return what to say as values; `cli::gate_step` parses the
//! arguments, loads the workspace, the registry and the graph between the two calls, and
//! prints what it gets back.
//!
//! Invariants:
//! - a malformed dispatch cap is refused before the project is read, a stale graph before a
//!   disabled stage, and both before any fire or row;
//! - the exit status is D9's: 0 the gate row is written (or the gate was already open); 1 the
//!   gate is refused (every refusal, including a blocking sensor that could not be evaluated
//!   or was switched off: exit 3 is `gate check`'s); 2 the step could not run, a stale graph
//!   included (as `gate check` refuses one).

use std::fmt::Write as _;

use crate::leaves::english::counted;
use crate::leaves::exit_status::ExitStatus;
use crate::protocol::graph_reader::StageGraph;
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::time_limit;
use crate::runtime::gate::command::{EnvReader, GateOutcome, Notice};
use crate::runtime::gate::disabled_stages::refuse_disabled_stages;
use crate::runtime::gate::stale_graph::check_graph_against_sources;
use crate::runtime::gate::step::{DispatchSummary, GateEntry, GateStepRequest, run_gate_step};
use crate::runtime::workspace::{self, Workspace};

/// The arguments of `aidlc engine gate start|revise`, as the CLI parsed them.
pub struct GateStepFlags<'a> {
    pub entry: GateEntry,
    pub stage: &'a str,
    /// The raw `--artifacts` value (`gate start` only).
    pub artifacts: Option<&'a str>,
    /// `--unit` (`gate start` only).
    pub unit: Option<&'a str>,
    pub override_requested: bool,
    pub user_input: Option<&'a str>,
}

/// The request the step runs: the flags, whether `AIDLC_DISABLE_SENSORS=1` switched dispatch
/// off, and the dispatch cap `env` gives, or the refusal of a malformed cap.
pub fn gate_step_request(
    flags: &GateStepFlags<'_>,
    env: EnvReader<'_>,
) -> Result<GateStepRequest, GateOutcome> {
    let dispatch_cap = time_limit::gate_dispatch_cap(env).map_err(|message| {
        GateOutcome::refused(Notice::error(
            message,
            Some(time_limit::GATE_DISPATCH_CAP_HELP),
        ))
    })?;
    Ok(GateStepRequest {
        entry: flags.entry,
        stage: flags.stage.to_owned(),
        artifacts: flags.artifacts.map(str::to_owned),
        unit: flags.unit.map(str::to_owned),
        override_requested: flags.override_requested,
        user_input: flags.user_input.map(str::to_owned),
        dispatch_disabled_by_environment: workspace::sensors_off_by_environment(),
        dispatch_cap,
    })
}

/// The step on a loaded project: the stale-graph and disabled-stage refusals, then
/// [`run_gate_step`]. `registry` must be free of errors.
pub fn gate_step(
    workspace: &Workspace,
    registry: &LiveRegistry,
    graph: &StageGraph,
    request: &GateStepRequest,
) -> GateOutcome {
    // The compiled graph decides what fires and what blocks, so a gate opens only on the graph
    // its sources compile to now: there is no `--allow-stale` here.
    if let Err(stale) = check_graph_against_sources(&workspace.layout) {
        return GateOutcome::refused(Notice::StaleGraph {
            help: stale.gate_step_help(),
            stale: Box::new(stale),
            allow_stale_refusal: None,
        });
    }
    if let Err(refusal) = refuse_disabled_stages(
        graph,
        std::slice::from_ref(&request.stage),
        workspace.project_dir(),
        &workspace.layout.harness_json_path,
    ) {
        return GateOutcome::refused(refusal.into());
    }
    match run_gate_step(workspace, registry, &graph.nodes, request) {
        Ok(reply) => GateOutcome {
            said: vec![
                Notice::Status(summary_line(&request.stage, &reply.summary)),
                Notice::Report(reply.json().to_string()),
            ],
            exit: ExitStatus::Success,
        },
        Err(error) => GateOutcome {
            said: vec![Notice::error(error.to_string(), error.help())],
            exit: if error.is_refusal() {
                ExitStatus::Failure
            } else {
                ExitStatus::Error
            },
        },
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
        "gate sensors of \"{slug}\": {} on {} ({} blocking, {} advisory)",
        counted(fires, "fire"),
        counted(summary.deliverables, "deliverable"),
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
            let _ = write!(line, "; {} {what}", counted(count, noun));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start_flags() -> GateStepFlags<'static> {
        GateStepFlags {
            entry: GateEntry::Start,
            stage: "requirements-analysis",
            artifacts: Some("requirements.md"),
            unit: None,
            override_requested: false,
            user_input: None,
        }
    }

    /// An environment that sets only the gate's dispatch cap, to `value`.
    fn dispatch_cap_env(value: &'static str) -> impl Fn(&str) -> Option<String> {
        move |name: &str| (name == time_limit::GATE_DISPATCH_VARIABLE).then(|| value.to_owned())
    }

    #[test]
    fn a_malformed_dispatch_cap_is_refused_with_its_help_and_exit_2() {
        let outcome = gate_step_request(&start_flags(), &dispatch_cap_env("soon")).unwrap_err();
        assert_eq!(outcome.exit, ExitStatus::Error);
        let [Notice::Error { message, help }] = outcome.said.as_slice() else {
            panic!("expected one error, got {outcome:?}");
        };
        assert!(
            message.contains(time_limit::GATE_DISPATCH_VARIABLE),
            "{message}"
        );
        assert_eq!(help.as_deref(), Some(time_limit::GATE_DISPATCH_CAP_HELP));
    }

    #[test]
    fn the_request_keeps_the_flags_as_given_and_the_cap_the_environment_sets() {
        let request = gate_step_request(&start_flags(), &dispatch_cap_env("250")).unwrap();
        assert_eq!(request.entry, GateEntry::Start);
        assert_eq!(request.stage, "requirements-analysis");
        assert_eq!(request.artifacts.as_deref(), Some("requirements.md"));
        let cap = request.dispatch_cap.expect("the environment sets a cap");
        assert_eq!(cap.duration, std::time::Duration::from_millis(250));
    }

    #[test]
    fn the_summary_says_how_much_was_checked_and_what_was_skipped() {
        let summary = DispatchSummary {
            deliverables: 2,
            blocking_fires: 2,
            advisory_fires: 1,
            skipped_fires: 1,
            ..DispatchSummary::default()
        };
        assert_eq!(
            summary_line("design", &summary),
            "gate sensors of \"design\": 3 fires on 2 deliverables (2 blocking, 1 advisory); \
             1 blocking fire not dispatched: the bytes changed first"
        );
        let nothing = DispatchSummary {
            nothing_dispatched_because: Some("no gate sensor applies"),
            ..DispatchSummary::default()
        };
        assert_eq!(
            summary_line("design", &nothing),
            "gate sensors of \"design\": none fired (no gate sensor applies)"
        );
    }
}
