//! `aidlc plugin add|remove|list|sync`: parses, calls `plugin::operations`, prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::cli::args::{Format, PluginCommand, ProjectArgs};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{CommandResult, env_var, resolve_layout, working_folder};
use crate::leaves::english::counted;
use crate::leaves::exit_status::ExitStatus;
use crate::plugin::operations::{self, CompileReason, ComposeOutcome, Listing};
use crate::plugin::{PluginError, Problem};

pub fn run(command: &PluginCommand) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    match command {
        PluginCommand::Add(args) => {
            let cwd = working_folder(&printer)?;
            with_layout(&args.project, &printer, |layout| {
                report_composition(
                    &printer,
                    operations::add(layout, &args.sources, &cwd),
                    "added",
                )
            })
        }
        PluginCommand::Remove(args) => with_layout(&args.project, &printer, |layout| {
            report_composition(&printer, operations::remove(layout, &args.names), "removed")
        }),
        PluginCommand::Sync(project) => {
            let cwd = working_folder(&printer)?;
            let roots = operations::plugin_roots_from(&env_var, &cwd);
            with_layout(project, &printer, |layout| {
                let result = operations::sync(layout, &roots);
                if let Ok(outcome) = &result
                    && outcome.plugins.is_empty()
                    && outcome.written.is_empty()
                    && outcome.removed.is_empty()
                {
                    report_warnings(&printer, &outcome.warnings);
                    printer.status("no installed plugins; nothing to sync");
                    return ExitStatus::Success;
                }
                report_composition(&printer, result, "synced")
            })
        }
        PluginCommand::List(args) => {
            let printer = Printer::new(args.format, false);
            with_layout(&args.project, &printer, |layout| {
                match operations::list(layout) {
                    Ok(listing) => {
                        print_listing(&printer, &listing);
                        ExitStatus::Success
                    }
                    Err(error) => report_plugin_error(&printer, &error),
                }
            })
        }
    }
}

/// The layout for `args`, with the harness from `AIDLC_HARNESS_DIR` (what the reference's
/// `SessionStart` command sets) when `--harness` is not given.
fn with_layout(
    args: &ProjectArgs,
    printer: &Printer,
    run: impl FnOnce(&crate::compile::discover::Layout) -> ExitStatus,
) -> CommandResult {
    let mut args = args.clone();
    if args.harness.is_none()
        && let Some(dir) = env_var("AIDLC_HARNESS_DIR").filter(|dir| !dir.trim().is_empty())
    {
        let Some(harness) = crate::plugin::harness_of_dir_name(&dir) else {
            return Err(error_line(
                printer,
                &format!("AIDLC_HARNESS_DIR is \"{dir}\", which is not a harness folder"),
                Some("use .claude, .codex, .kiro, .cursor or .aidlc, or pass --harness"),
            ));
        };
        args.harness = Some(harness);
    }
    Ok(run(&resolve_layout(&args, printer)?))
}

pub(super) fn report_warnings(printer: &Printer, warnings: &[Problem]) {
    for warning in warnings {
        let mut line = format!("warning: {}", warning.headline());
        if let Some(help) = warning.help() {
            let _ = write!(line, "\n  help: {help}");
        }
        printer.status(&line);
    }
}

/// Each problem's sentence once: one `error:` line naming the plugin and the file (one line, so
/// that a script finds it), then, when the problem has a place in its file, that place drawn
/// under a pointer to it with the help; else the help under the line.
pub(super) fn report_problems(printer: &Printer, problems: &[Problem]) {
    for problem in problems {
        match (&problem.text, problem.path()) {
            (Some(text), Some(path)) => {
                error_line(printer, &problem.headline(), None);
                let mut diagnostic = (*problem.diagnostic).clone();
                REFUSED_PLACE_MESSAGE.clone_into(&mut diagnostic.message);
                let sources = BTreeMap::from([(path.to_owned(), text.clone())]);
                printer.diagnostic(&diagnostic, &sources);
            }
            _ => {
                error_line(printer, &problem.headline(), problem.help());
            }
        }
    }
}

/// What the drawing of a refused problem's place says above it (the sentence is the line
/// printed just before).
const REFUSED_PLACE_MESSAGE: &str = "refused here";

/// A plugin command's failure as `aidlc plugin` prints it (also `compile --watch`'s sync,
/// D53), and its exit status.
pub(super) fn report_plugin_error(printer: &Printer, error: &PluginError) -> ExitStatus {
    match error {
        PluginError::Refused(problems) => {
            report_problems(printer, problems);
            printer.status(&format!(
                "error: refused ({}); nothing was written",
                counted(problems.len(), "problem")
            ));
            ExitStatus::Error
        }
        PluginError::Environment(problem) => {
            report_problems(printer, std::slice::from_ref(problem));
            printer.status("error: the composition was rolled back; the install is as it was");
            ExitStatus::Error
        }
        PluginError::CompileFailed {
            diagnostics,
            sources,
            ..
        } => {
            for diagnostic in diagnostics {
                printer.diagnostic(diagnostic, sources);
            }
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            printer.status(&format!(
                "error: the composed install does not compile ({}); the composition was rolled back and nothing was written",
                counted(errors, "error")
            ));
            ExitStatus::Failure
        }
    }
}

fn report_composition(
    printer: &Printer,
    result: Result<ComposeOutcome, PluginError>,
    verb: &str,
) -> ExitStatus {
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(error) => return report_plugin_error(printer, &error),
    };
    if outcome.recovered {
        printer.status("rolled back a composition that was interrupted");
    }
    report_warnings(printer, &outcome.warnings);
    let plugins = if outcome.plugins.is_empty() {
        "no plugins".to_owned()
    } else {
        outcome.plugins.join(", ")
    };
    if outcome.written.is_empty() && outcome.removed.is_empty() && outcome.compiled.is_none() {
        let proof = if outcome.proved_by_record {
            " (no plugin or install file changed since the last sync)"
        } else {
            ""
        };
        printer.status(&format!(
            "up to date: {plugins} composed; nothing changed{proof}"
        ));
        return ExitStatus::Success;
    }
    let mut line = format!(
        "{verb}: {plugins} composed; {} written, {} removed",
        counted(outcome.written.len(), "file"),
        outcome.removed.len()
    );
    if let Some((stages, sensors)) = outcome.compiled {
        let _ = write!(
            line,
            "; compiled {} and {}",
            counted(stages, "stage"),
            counted(sensors, "sensor")
        );
        if outcome.compile_warnings > 0 {
            let _ = write!(
                line,
                " ({}: run `aidlc compile` to see them)",
                counted(outcome.compile_warnings, "warning")
            );
        }
    }
    if outcome.compile_reason == CompileReason::GraphLackedComposedStages {
        line.push_str(" (the compiled graph lacked stages the plugins composed)");
    }
    if outcome.conductor_refreshed {
        line.push_str("; the conductor's runners and skill tables regenerated");
    }
    printer.status(&line);
    ExitStatus::Success
}

fn print_listing(printer: &Printer, listing: &Listing) {
    if listing.journal_waiting {
        printer.status(&format!(
            "an interrupted composition left {}/: the install may be torn until the next `aidlc plugin sync` rolls it back",
            crate::plugin::journal::JOURNAL_DIR
        ));
    }
    if printer.format == Format::Json {
        printer.out(
            &serde_json::to_string(listing)
                .unwrap_or_else(|error| unreachable!("a listing serialises: {error}")),
        );
        return;
    }
    let selection = match &listing.selection {
        None => "all enabled (harness.json has no `plugins`)".to_owned(),
        Some(names) => names.iter().cloned().collect::<Vec<_>>().join(", "),
    };
    printer.out(&format!("plugin selection: {selection}"));
    for plugin in &listing.plugins {
        let mut line = format!(
            "{} {} {}",
            plugin.name,
            plugin.version,
            if plugin.enabled {
                "enabled"
            } else {
                "disabled"
            }
        );
        if let Some(source) = &plugin.source {
            let _ = write!(line, " ({source}");
            if let Some(commit) = &plugin.commit {
                let _ = write!(line, " at {}", &commit[..commit.len().min(12)]);
            }
            line.push(')');
        }
        if !plugin.changed_files.is_empty() {
            let _ = write!(
                line,
                "; {} changed since composed: {}",
                counted(plugin.changed_files.len(), "installed file"),
                plugin.changed_files.join(", ")
            );
        }
        printer.out(&line);
    }
}
