//! `aidlc compile --watch`: starts [`watch`] and prints each event it hands back.
//!
//! Human format: diagnostics on stderr, then one status line per rebuild. JSON format: one
//! event object per line on stdout (`watching`, `waiting`, `rebuild`, `watcher-error`,
//! `stopped`), the diagnostics embedded in each `rebuild` event. In an install with composed
//! plugins (D53) a change in a path plugin's folder first runs `aidlc plugin sync`'s code:
//! `recompose` (what was recomposed) or `recompose-failed` (the refusal, as `plugin sync` words
//! it; the install is as it was), then the rebuild; `plugins-unreadable` and
//! `plugin-not-watched` say which plugins the watch cannot follow, and `plugins-unchecked` that
//! a path plugin refused at the start could not be compared with what was composed.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::json;

use crate::cli::args::{Format, ProjectArgs};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{current_dir, env_var};
use crate::compile::discover::{self, InputChanges, Layout};
use crate::compile::watch::{OutputsState, Rebuild, WatchEvent, WatchRequest, watch};
use crate::leaves::english::{counted, plural};
use crate::leaves::exit_status::ExitStatus;
use crate::plugin::PluginError;
use crate::plugin::operations::RecordedSource;
use crate::plugin::recompose::{FollowEvent, FollowedPlugins, Recomposition};
use crate::protocol::graph_format::GraphFormat;

pub fn run(
    args: &ProjectArgs,
    debounce_ms: u64,
    graph_format: Option<GraphFormat>,
    printer: &Printer,
) -> ExitStatus {
    let Some(cwd) = current_dir() else {
        return error_line(printer, "the working folder is not valid UTF-8", None);
    };
    let project_dir = match discover::find_project_dir(args.project_dir.as_deref(), &env_var, &cwd)
    {
        Ok(dir) => dir,
        Err(error) => {
            return error_line(
                printer,
                &error.to_string(),
                Some("pass --project-dir with an existing folder"),
            );
        }
    };
    let request = WatchRequest {
        project_dir: &project_dir,
        harness: args.harness,
        graph_format,
        debounce: Duration::from_millis(debounce_ms),
        env: &env_var,
    };
    let mut report_plugins = |event: FollowEvent<'_>| match event {
        FollowEvent::Unreadable(why) => report_plugins_warning(
            "plugins-unreadable",
            "no composed plugin is watched",
            why,
            printer,
        ),
        FollowEvent::NotWatched(plugin) => report_unwatched(plugin, printer),
        FollowEvent::Unchecked(why) => report_plugins_warning(
            "plugins-unchecked",
            "cannot tell whether a composed plugin changed before the watch began",
            why,
            printer,
        ),
        FollowEvent::Recomposed(recomposition) => report_recomposition(recomposition, printer),
    };
    let mut plugins = FollowedPlugins::new(&mut report_plugins);
    // A reader that closed stdout (`… --format json | head -n 3`) has had what it wanted.
    let outcome = watch(
        &request,
        &mut plugins,
        crate::cli::printer::stdout_closed,
        &mut |event| match event {
            WatchEvent::Began { compiled } => {
                report_watching(&project_dir, compiled, args, printer);
            }
            WatchEvent::Rebuilt { layout, rebuild } => report_rebuild(layout, rebuild, printer),
            WatchEvent::WatcherError(error) => report_watcher_error(error, printer),
        },
    );
    if let Err(error) = outcome {
        return error_line(printer, &error, None);
    }
    if crate::cli::printer::stdout_closed() {
        return ExitStatus::Success;
    }
    report_event(
        printer,
        &json!({"event": "stopped", "reason": "interrupted"}),
        "stopped watching",
    );
    ExitStatus::Interrupted
}

/// An event of the watch: its JSON object on stdout in the JSON format, else `line` on stderr.
fn report_event(printer: &Printer, event: &serde_json::Value, line: &str) {
    if printer.format == Format::Json {
        printer.out(&event.to_string());
    } else {
        printer.status(line);
    }
}

/// A warning about the composed plugins (`what` cannot be done because of `why`, in the words
/// of `aidlc plugin sync`'s refusal), as JSON event `event`.
fn report_plugins_warning(event: &str, what: &str, why: &str, printer: &Printer) {
    report_event(
        printer,
        &json!({"event": event, "message": why}),
        &format!("warning: {what}: {why}; `aidlc plugin sync` says the same"),
    );
}

fn report_unwatched(plugin: &RecordedSource, printer: &Printer) {
    report_event(
        printer,
        &json!({
            "event": "plugin-not-watched",
            "plugin": plugin.name,
            "source": plugin.source,
            "reason": "git",
        }),
        &format!(
            "note: plugin \"{}\" comes from git ({}): its kept copy is not watched; `aidlc plugin add {}` brings in a new commit",
            plugin.name, plugin.source, plugin.source
        ),
    );
}

/// One line for a recomposition (nothing for the no-op sync); a failure as `plugin sync`
/// prints it, then what the watch does about it.
fn report_recomposition(recomposition: &Recomposition, printer: &Printer) {
    match recomposition {
        Recomposition::Unchanged => {}
        Recomposition::Recomposed { touched, outcome } => {
            if printer.format == Format::Json {
                printer.out(
                    &json!({
                        "event": "recompose",
                        "changed_plugins": touched,
                        "plugins": outcome.plugins,
                        "written": outcome.written,
                        "removed": outcome.removed,
                        "warnings": outcome.warnings.iter().map(crate::plugin::Problem::headline).collect::<Vec<_>>(),
                    })
                    .to_string(),
                );
                return;
            }
            crate::cli::plugin::report_warnings(printer, &outcome.warnings);
            let mut line = format!(
                "{} changed: recomposed {}; {} written, {} removed",
                changed_plugins(touched),
                outcome.plugins.join(", "),
                counted(outcome.written.len(), "file"),
                outcome.removed.len()
            );
            if outcome.conductor_refreshed {
                line.push_str("; the conductor's runners and skill tables regenerated");
            }
            printer.status(&line);
        }
        Recomposition::Failed { touched, error } => {
            if printer.format == Format::Json {
                printer.out(&recompose_failed_event(touched, error).to_string());
                return;
            }
            crate::cli::plugin::report_plugin_error(printer, error);
            printer.status(&format!(
                "{} changed: not recomposed; the install is as it was, and the watch goes on",
                changed_plugins(touched)
            ));
        }
    }
}

fn changed_plugins(touched: &[String]) -> String {
    let names: Vec<String> = touched.iter().map(|name| format!("\"{name}\"")).collect();
    format!("plugin{} {}", plural(touched.len()), names.join(", "))
}

fn recompose_failed_event(touched: &[String], error: &PluginError) -> serde_json::Value {
    let problem_value = |problem: &crate::plugin::Problem| {
        json!({
            "plugin": problem.plugin,
            "path": problem.path().map(Utf8Path::as_str),
            "message": problem.message(),
            "help": problem.help(),
            "diagnostic": problem.text.as_ref().map(|text| {
                let sources: std::collections::BTreeMap<Utf8PathBuf, String> = problem
                    .path()
                    .map(|path| (path.to_owned(), text.clone()))
                    .into_iter()
                    .collect();
                crate::report::json::diagnostic_json_value(&problem.as_compile_diagnostic(), &sources)
            }),
        })
    };
    let (reason, problems, diagnostics) = match error {
        PluginError::Refused(problems) => (
            "refused",
            problems.iter().map(problem_value).collect(),
            Vec::new(),
        ),
        PluginError::Environment(problem) => {
            ("environment", vec![problem_value(problem)], Vec::new())
        }
        PluginError::CompileFailed {
            diagnostics,
            sources,
            ..
        } => (
            "compile-failed",
            Vec::new(),
            diagnostics
                .iter()
                .map(|diagnostic| crate::report::json::diagnostic_json_value(diagnostic, sources))
                .collect::<Vec<_>>(),
        ),
    };
    json!({
        "event": "recompose-failed",
        "changed_plugins": touched,
        "reason": reason,
        "problems": problems,
        "diagnostics": diagnostics,
    })
}

fn report_watching(project_dir: &Utf8Path, started: bool, args: &ProjectArgs, printer: &Printer) {
    if printer.format == Format::Json {
        let event = if started { "watching" } else { "waiting" };
        printer.out(&json!({"event": event, "project_dir": project_dir.as_str()}).to_string());
    } else if started {
        printer.status("watching for changes (Ctrl-C to stop)");
    } else {
        let wanted = args.harness.map_or_else(
            || "a harness folder (.claude, .codex, .kiro, .cursor or .aidlc)".to_owned(),
            |harness| format!("the {} folder", harness.dir_name()),
        );
        printer.status(&format!(
            "waiting for {wanted} to appear in {project_dir} (Ctrl-C to stop)"
        ));
    }
}

fn report_watcher_error(error: &str, printer: &Printer) {
    report_event(
        printer,
        &json!({"event": "watcher-error", "message": error}),
        &format!("warning: {error}; re-reading every input on the next change"),
    );
}

fn report_rebuild(layout: &Layout, rebuild: &Rebuild, printer: &Printer) {
    if printer.format == Format::Json {
        printer.out(&rebuild_event(rebuild).to_string());
        return;
    }
    for diagnostic in &rebuild.outcome.diagnostics {
        printer.diagnostic(diagnostic, &rebuild.sources);
    }
    let outcome = &rebuild.outcome;
    printer.status(&format!(
        "{}: compiled {} and {} in {:.1} ms, {}, {}; {}",
        describe_changes(&rebuild.changes),
        counted(outcome.n_stages, "stage"),
        counted(outcome.n_sensors, "sensor"),
        rebuild.duration.as_secs_f64() * 1000.0,
        counted(outcome.n_errors(), "error"),
        counted(outcome.n_warnings(), "warning"),
        describe_outputs(layout, &rebuild.outputs)
    ));
}

fn describe_changes(changes: &InputChanges) -> String {
    let kinds = [
        (&changes.modified, "changed"),
        (&changes.added, "added"),
        (&changes.removed, "removed"),
    ];
    let total: usize = kinds.iter().map(|(paths, _)| paths.len()).sum();
    if total == 0 {
        return "first compile".to_owned();
    }
    if total == 1
        && let Some((paths, verb)) = kinds.iter().find(|(paths, _)| !paths.is_empty())
    {
        return format!("{} {verb}", paths[0]);
    }
    kinds
        .iter()
        .filter(|(paths, _)| !paths.is_empty())
        .map(|(paths, verb)| format!("{} {verb}", counted(paths.len(), "file")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_outputs(layout: &Layout, outputs: &OutputsState) -> String {
    let graph = layout.display(&layout.stage_graph_path);
    let grid = layout.display(&layout.scope_grid_path);
    match outputs {
        OutputsState::Written(summary) => match (summary.graph_written, summary.grid_written) {
            (false, false) => "outputs unchanged".to_owned(),
            (true, false) => format!("wrote {graph}"),
            (false, true) => format!("wrote {grid}"),
            (true, true) => format!("wrote {graph} and {}", grid.file_name().unwrap_or_default()),
        },
        OutputsState::KeptBecauseOfErrors => {
            format!("kept the last good {graph} until the errors are fixed")
        }
        OutputsState::WriteFailed(error) => {
            format!("could not write the outputs ({error}); the previous files are untouched")
        }
    }
}

fn output_word(
    outputs: &OutputsState,
    written: impl Fn(&crate::compile::WriteSummary) -> bool,
) -> &'static str {
    match outputs {
        OutputsState::Written(summary) if written(summary) => "written",
        OutputsState::Written(_) => "unchanged",
        OutputsState::KeptBecauseOfErrors => "kept",
        OutputsState::WriteFailed(_) => "failed",
    }
}

fn rebuild_event(rebuild: &Rebuild) -> serde_json::Value {
    let outcome = &rebuild.outcome;
    json!({
        "event": "rebuild",
        "first": rebuild.changes.is_empty(),
        "changed": rebuild.changes.modified,
        "added": rebuild.changes.added,
        "removed": rebuild.changes.removed,
        "duration_ms": (rebuild.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        "stages": outcome.n_stages,
        "sensors": outcome.n_sensors,
        "errors": outcome.n_errors(),
        "warnings": outcome.n_warnings(),
        "stage_graph": output_word(&rebuild.outputs, |summary| summary.graph_written),
        "scope_grid": output_word(&rebuild.outputs, |summary| summary.grid_written),
        "write_error": match &rebuild.outputs {
            OutputsState::WriteFailed(error) => Some(error.as_str()),
            _ => None,
        },
        "diagnostics": outcome
            .diagnostics
            .iter()
            .map(|diagnostic| crate::report::json::diagnostic_json_value(diagnostic, &rebuild.sources))
            .collect::<Vec<_>>(),
    })
}
