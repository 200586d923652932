//! What each subcommand does, from parsed arguments to an exit status.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use camino::Utf8PathBuf;

use crate::cli::args::{
    Cli, Command, CompileArgs, CompletionsArgs, EngineCommand, Format, InitArgs, ManArgs,
    SchemaArgs, SensorCommand,
};
use crate::cli::man_pages;
use crate::cli::printer::{self, Printer, error_line};
use crate::cli::project::{
    CommandResult, current_dir, env_var, resolve_layout, working_folder, written_file_shown,
};
use crate::compile::discover::Layout;
use crate::compile::up_to_date;
use crate::compile::{self, CompileOutcome, OneShot};
use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::english::counted;
use crate::leaves::exit_status::ExitStatus;
use crate::leaves::interrupt;
use crate::leaves::process_group::GroupSignal;
use crate::protocol::graph_format::{FormatSource, GraphFormat};
use crate::report::{github, json};
use crate::runtime::gate::repository::RepositoryRoot;

pub fn run(cli: Cli) -> ExitStatus {
    printer::set_color_when(cli.color);
    if runs_sensor_workers(&cli.command)
        && let Err(error) = interrupt::install()
    {
        return error_line(
            &Printer::new(Format::Human, false),
            &error.to_string(),
            None,
        );
    }
    let status = match cli.command {
        Command::Init(args) => init(&args),
        Command::Compile(args) => Ok(compile_command(&args)),
        Command::Engine(args) => crate::cli::engine::run(&args),
        Command::Gate(args) => crate::cli::gate::run(&args),
        Command::Lsp(args) => {
            let options = crate::lsp::ServeOptions {
                project_dir: args.project_dir,
                harness: args.harness,
            };
            Ok(match crate::lsp::serve_stdio(&options) {
                Ok(()) => ExitStatus::Success,
                Err(error) if error.is_protocol_ending() => ExitStatus::Failure,
                Err(error) => error_line(
                    &Printer::new(Format::Human, false),
                    &error.to_string(),
                    None,
                ),
            })
        }
        Command::Graph(args) => crate::cli::graph_picture::run(&args),
        Command::Hook(args) => crate::cli::hook_settings::run(&args),
        Command::Plugin(command) => crate::cli::plugin::run(&command),
        Command::Doctor(args) => crate::cli::doctor::run(&args),
        Command::Sensors(args) => crate::cli::sensors::run(&args),
        Command::Schema(args) => Ok(schema(&args)),
        Command::Completions(args) => Ok(completions(&args)),
        Command::Man(args) => Ok(man(&args)),
    }
    .unwrap_or_else(|status| status);
    // No worker outlives `aidlc`: a tool started by an in-process check that was abandoned at
    // its timeout may still run here.
    interrupt::signal_every_live_worker_group(GroupSignal::Kill);
    let status = final_status(status);
    printer::report_closed_stdout(status);
    status
}

/// The commands that fire sensors get the interrupt handler: on SIGINT, SIGTERM or SIGHUP they
/// stop their workers, record each started fire's end, and exit 130. `sensor-<id>` (a worker
/// itself) does not: its dispatcher's SIGTERM must end it as a signal, which the dispatcher reads
/// as its timeout.
fn runs_sensor_workers(command: &Command) -> bool {
    match command {
        Command::Gate(_) => true,
        Command::Engine(engine) => match engine {
            EngineCommand::Sensor(sensor) => matches!(sensor, SensorCommand::Fire(_)),
            EngineCommand::Hook(_) | EngineCommand::Gate(_) => true,
            EngineCommand::Intent(_)
            | EngineCommand::Log(_)
            | EngineCommand::Learnings(_)
            | EngineCommand::Worker(_) => false,
        },
        Command::Init(_)
        | Command::Compile(_)
        | Command::Lsp(_)
        | Command::Hook(_)
        | Command::Plugin(_)
        | Command::Doctor(_)
        | Command::Sensors(_)
        | Command::Graph(_)
        | Command::Schema(_)
        | Command::Completions(_)
        | Command::Man(_) => false,
    }
}

/// D9 over what the command returned: 130 after an interrupt; 2 when its output could not be
/// written to stdout, unless the command already failed worse than "findings". A reader that
/// closed stdout early changes nothing: the status stays the verdict's.
fn final_status(status: ExitStatus) -> ExitStatus {
    if interrupt::requested() {
        return ExitStatus::Interrupted;
    }
    match status {
        ExitStatus::Success | ExitStatus::Failure if printer::stdout_failed() => ExitStatus::Error,
        other => other,
    }
}

/// `aidlc schema KIND`: the JSON Schema on stdout.
fn schema(args: &SchemaArgs) -> ExitStatus {
    Printer::new(Format::Human, false).out(&crate::schema::schema_text(args.kind));
    ExitStatus::Success
}

/// `aidlc completions SHELL`: the completion script on stdout, generated from the same clap
/// definition that parses the arguments, so it cannot name a flag that does not exist.
fn completions(args: &CompletionsArgs) -> ExitStatus {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut crate::cli::command(), "aidlc", &mut script);
    let printer = Printer::new(Format::Human, false);
    match String::from_utf8(script) {
        Ok(text) => {
            printer.out(text.trim_end_matches('\n'));
            ExitStatus::Success
        }
        Err(error) => error_line(
            &printer,
            &format!("the completion script is not UTF-8: {error}"),
            None,
        ),
    }
}

/// `aidlc man [COMMAND…]`: one manual page (roff) on stdout; `aidlc man --dir DIR`: every page
/// written into DIR, each file atomically (a failed run leaves each page whole or as it was).
#[expect(
    clippy::disallowed_methods,
    reason = "`aidlc man --out DIR` writes where the user named, not into a project"
)]
fn man(args: &ManArgs) -> ExitStatus {
    let printer = Printer::new(Format::Human, false);
    let Some(dir) = &args.dir else {
        return match man_pages::page_for(&args.command) {
            Ok(page) => {
                printer.out(page.roff.trim_end_matches('\n'));
                ExitStatus::Success
            }
            Err(error) => error_line(
                &printer,
                &error.to_string(),
                Some("`aidlc man --dir DIR` writes every page"),
            ),
        };
    };
    let pages = match man_pages::all_pages() {
        Ok(pages) => pages,
        Err(error) => return error_line(&printer, &error.to_string(), None),
    };
    if let Err(error) = std::fs::create_dir_all(dir) {
        return error_line(&printer, &format!("cannot create {dir}: {error}"), None);
    }
    for page in &pages {
        let path = dir.join(&page.file_name);
        if let Err(error) = crate::leaves::fs_util::write_atomic(&path, page.roff.as_bytes()) {
            return error_line(&printer, &format!("cannot write {path}: {error}"), None);
        }
    }
    printer.status(&format!(
        "wrote {} manual pages into {dir}: aidlc.1 and one per command (aidlc-gate-check.1 for `gate check`)",
        pages.len()
    ));
    ExitStatus::Success
}

fn init(args: &InitArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let dir = working_folder(&printer)?.join(&args.dir);
    let report = crate::compile::framework::init_project(&dir, args.harness, args.force)
        .map_err(|error| error_line(&printer, &error.to_string(), None))?;
    printer.status(&format!(
        "initialised the default AI-DLC framework in {} ({}): {} written, {} unchanged, {} skipped",
        args.dir,
        args.harness.dir_name(),
        report.written.len(),
        report.unchanged.len(),
        report.skipped.len()
    ));
    for path in &report.skipped {
        printer.status(&format!(
            "  skipped {path}: it differs from the built-in file (use --force to overwrite)"
        ));
    }
    if !args.example {
        printer.status(&format!(
            "next: aidlc compile --project-dir {0}, then aidlc hook install --project-dir {0} to register the write hook (--program \"npx aidlc\" for an npm install)",
            args.dir
        ));
        return Ok(ExitStatus::Success);
    }
    let example = crate::runtime::workspace::example_intent::write_example(
        &dir,
        args.harness,
        std::time::SystemTime::now(),
    )
    .map_err(|error| error_line(&printer, &error.to_string(), None))?;
    printer.status(&format!(
        "example intent {}: {} written{}",
        example.record,
        counted(example.written.len(), "file"),
        if example.created {
            ""
        } else {
            " (it already existed; left as it was)"
        }
    ));
    printer.status(&format!(
        "next: aidlc compile --project-dir {0} && aidlc gate check --project-dir {0}; aidlc hook install --project-dir {0} registers the write hook",
        args.dir
    ));
    Ok(ExitStatus::Success)
}

fn compile_command(args: &CompileArgs) -> ExitStatus {
    let mut printer = Printer::new(args.format, args.quiet);
    // A plugin's own tree, nearer than any project: compiled composed into a temporary default
    // framework (docs/decisions.md D52).
    let project_dir_given = args.project.project_dir.is_some();
    let own_tree_root = current_dir().and_then(|cwd| {
        crate::plugin::own_tree::own_tree_root_from(project_dir_given, &cwd, &env_var)
    });
    if let Some(plugin_root) = own_tree_root {
        return crate::cli::own_tree::compile_own_tree(args, &plugin_root, &mut printer);
    }
    if args.watch && args.format == Format::Sarif {
        return error_line(
            &printer,
            "--format sarif is one log per run and cannot follow --watch",
            Some("use --format json with --watch, or drop --watch"),
        );
    }
    if args.watch {
        return crate::cli::watch_loop::run(
            &args.project,
            args.debounce_ms,
            args.graph_format,
            &printer,
        );
    }
    let layout = match resolve_layout(&args.project, &printer) {
        Ok(layout) => layout.with_graph_format(args.graph_format),
        Err(status) => return status,
    };
    if let Some(cwd) = current_dir() {
        printer.display_prefix = crate::leaves::fs_util::path_from(&cwd, &layout.project_dir);
    }
    printer.path_prefix = RepositoryRoot::find(
        &layout.project_dir,
        env_var("GITHUB_WORKSPACE")
            .as_deref()
            .map(camino::Utf8Path::new),
    )
    .project_path;
    let started = Instant::now();
    // A composed plugin edited at its source since: the compile reads its stale copies (D55).
    // An input read through a link that leaves the project: the compile read it, and says so.
    let mut plugin_warnings = crate::plugin::stale_sources::compile_warnings(&layout);
    plugin_warnings.extend(crate::compile::discover::links_out::linked_outside_warnings(&layout));
    let compiled = match compile::compile_one_shot(&layout, args.force, args.check) {
        OneShot::UpToDate(up_to_date) => {
            return report_up_to_date(
                &layout,
                &up_to_date,
                &plugin_warnings,
                args.check,
                started,
                &printer,
            );
        }
        OneShot::Compiled(compiled) => compiled,
    };
    let outcome = &compiled.outcome;
    let sources =
        crate::report::source::sources_with_plugins(&*compiled.db, &layout, &outcome.diagnostics);
    for diagnostic in outcome.diagnostics.iter().chain(&plugin_warnings) {
        printer.diagnostic(diagnostic, &sources);
    }
    let n_warnings = outcome.n_warnings() + plugin_warnings.len();
    if printer.format == Format::Sarif && (outcome.n_errors() > 0 || !args.check) {
        printer.print_compile_sarif(
            &with_plugin_warnings(&outcome.diagnostics, &plugin_warnings),
            &[],
            &sources,
        );
    }
    if outcome.n_errors() > 0 {
        printer.status(&format!(
            "error: compile failed with {} and {}; nothing was written",
            counted(outcome.n_errors(), "error"),
            counted(n_warnings, "warning")
        ));
        return ExitStatus::Failure;
    }
    let Some(written) = &compiled.written else {
        return report_drift(&layout, outcome, &plugin_warnings, &sources, &printer);
    };
    match written {
        Ok(summary) => {
            if let Some(error) = &compiled.record_error {
                printer.status(&format!(
                    "warning: could not record this compile in {} ({error}); the next compile will redo the work",
                    layout.display(&up_to_date::fingerprint_path(&layout))
                ));
            }
            let verb = if summary.graph_written || summary.grid_written {
                "wrote"
            } else {
                "up to date:"
            };
            printer.status(&format!(
                "compiled {} and {} in {:.1} ms; {verb} {} and {}{}{}",
                counted(outcome.n_stages, "stage"),
                counted(outcome.n_sensors, "sensor"),
                compiled.duration.as_secs_f64() * 1000.0,
                written_file_shown(&layout, &layout.stage_graph_path),
                layout
                    .display(&layout.scope_grid_path)
                    .file_name()
                    .unwrap_or_default(),
                graph_format_suffix(outcome.graph_format),
                warnings_suffix(n_warnings)
            ));
            ExitStatus::Success
        }
        Err(error) => error_line(
            &printer,
            &error.to_string(),
            Some("check that the harness folder is writable; the previous files are untouched"),
        ),
    }
}

/// The compile's diagnostics followed by the warnings about composed plugins (D55), which
/// are not the compile's and are not recorded with it.
fn with_plugin_warnings(
    diagnostics: &[Diagnostic],
    plugin_warnings: &[Diagnostic],
) -> Vec<Diagnostic> {
    diagnostics.iter().chain(plugin_warnings).cloned().collect()
}

/// Nothing changed since the last successful compile: repeat its warnings (and the warnings
/// about composed plugins, found afresh) and say so.
fn report_up_to_date(
    layout: &Layout,
    up_to_date: &up_to_date::UpToDate,
    plugin_warnings: &[Diagnostic],
    check: bool,
    started: Instant,
    printer: &Printer,
) -> ExitStatus {
    let warnings = with_plugin_warnings(&up_to_date.warnings, plugin_warnings);
    let sources = read_sources(layout, &warnings);
    for warning in &warnings {
        printer.diagnostic(warning, &sources);
    }
    if printer.format == Format::Sarif {
        printer.print_compile_sarif(&warnings, &[], &sources);
    }
    let n_warnings = warnings.len();
    if check {
        printer.status(&outputs_up_to_date_line(up_to_date.n_stages, n_warnings));
        return ExitStatus::Success;
    }
    let hashed = match up_to_date.files_hashed {
        0 => String::new(),
        n => format!(", {n} re-hashed"),
    };
    printer.status(&format!(
        "up to date: nothing changed since the last compile ({} and {}; {} files checked{hashed} in {:.1} ms){}",
        counted(up_to_date.n_stages, "stage"),
        counted(up_to_date.n_sensors, "sensor"),
        up_to_date.files_checked,
        started.elapsed().as_secs_f64() * 1000.0,
        warnings_suffix(n_warnings)
    ));
    ExitStatus::Success
}

/// The texts of the files `diagnostics` point into, read from disk (for replayed warnings).
fn read_sources(layout: &Layout, diagnostics: &[Diagnostic]) -> BTreeMap<Utf8PathBuf, String> {
    compile::files_named_by(diagnostics)
        .into_iter()
        .filter_map(|path| {
            let text =
                crate::leaves::fs_util::read_input_text(&layout.project_dir.join(path)).ok()?;
            Some((path.to_owned(), text))
        })
        .collect()
}

fn outputs_up_to_date_line(n_stages: usize, n_warnings: usize) -> String {
    format!(
        "stage-graph.json and scope-grid.json are up to date ({n_stages} stages){}",
        warnings_suffix(n_warnings)
    )
}

fn report_drift(
    layout: &Layout,
    outcome: &CompileOutcome,
    plugin_warnings: &[Diagnostic],
    sources: &dyn crate::report::source::SourceLookup,
    printer: &Printer,
) -> ExitStatus {
    let drift = compile::check_outputs(layout, outcome);
    if printer.format == Format::Sarif {
        printer.print_compile_sarif(
            &with_plugin_warnings(&outcome.diagnostics, plugin_warnings),
            &compile::drift_items(layout, &drift),
            sources,
        );
    }
    if drift.is_clean() {
        printer.status(&outputs_up_to_date_line(
            outcome.n_stages,
            outcome.n_warnings() + plugin_warnings.len(),
        ));
        return ExitStatus::Success;
    }
    match printer.format {
        Format::Github => {
            for item in compile::drift_items(layout, &drift) {
                printer.out(&github::annotation(
                    &crate::report::drift::drift_problem(&item),
                    &printer.path_prefix,
                ));
            }
        }
        Format::Json => {
            for item in compile::drift_items(layout, &drift) {
                printer.out(&json::drift_json_line(&item));
            }
        }
        Format::Human | Format::Sarif => {}
    }
    if let Some(changes) = &drift.graph {
        let mut line = format!(
            "{} is out of date. Run `aidlc compile` to regenerate.",
            layout.display(&layout.stage_graph_path)
        );
        for (label, slugs) in [
            ("changed", &changes.modified),
            ("added", &changes.added),
            ("removed", &changes.removed),
        ] {
            if !slugs.is_empty() {
                let _ = write!(line, "\n  {label} stages: {}", slugs.join(", "));
            }
        }
        printer.status(&line);
    }
    if drift.grid {
        printer.status(&format!(
            "{} is out of date. Run `aidlc compile` to regenerate.",
            layout.display(&layout.scope_grid_path)
        ));
    }
    ExitStatus::Failure
}

/// ` (graph format 2.6, kept from the existing stage-graph.json)` when the graph is written in
/// an older shape than the newest; nothing otherwise.
fn graph_format_suffix((format, source): (GraphFormat, FormatSource)) -> String {
    if format == GraphFormat::Gate {
        return String::new();
    }
    format!(" (graph format {format}, {source})")
}

fn warnings_suffix(n_warnings: usize) -> String {
    match n_warnings {
        0 => String::new(),
        n => format!(" ({})", counted(n, "warning")),
    }
}
