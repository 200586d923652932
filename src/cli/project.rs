//! What every command resolves before it does its work: the working folder, the environment,
//! the project folder and layout, the workspace (space and intent, read once per command and
//! passed down as one `workspace::Workspace`), the live sensor registry and the compiled graph.
//!
//! Each function either returns the value or prints why it cannot (through the printer) and
//! returns nothing for the command to turn into its exit status. The subcommand files import
//! these; nothing here imports a subcommand, so `cli/` has no import cycle.

use camino::{Utf8Path, Utf8PathBuf};

use crate::cli::args::ProjectArgs;
use crate::cli::printer::{Printer, error_line};
use crate::compile::discover::{self, Layout, lexically_normal};
use crate::leaves::exit_status::ExitStatus;
use crate::protocol::graph_reader::StageGraph;
use crate::runtime::dispatch::compiled_graph::load_graph;
use crate::runtime::dispatch::registry::{LiveRegistry, load_live_registry};
use crate::runtime::workspace::Workspace;

/// The environment variable `name`, when it is set and valid UTF-8.
pub(super) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The working folder, when it is valid UTF-8.
pub(super) fn current_dir() -> Option<Utf8PathBuf> {
    std::env::current_dir()
        .ok()
        .and_then(|dir| Utf8PathBuf::from_path_buf(dir).ok())
}

/// What a command returns: its exit status, or (as `Err`) the status of a step that refused
/// after printing why, so that each step can end the command with `?`.
pub(super) type CommandResult = Result<ExitStatus, ExitStatus>;

/// The working folder, or exit 2 with why it cannot be used printed.
pub(super) fn working_folder(printer: &Printer) -> Result<Utf8PathBuf, ExitStatus> {
    current_dir().ok_or_else(|| error_line(printer, "the working folder is not valid UTF-8", None))
}

/// The project folder and layout for `args`, or the error already printed.
pub(super) fn resolve_layout(args: &ProjectArgs, printer: &Printer) -> Result<Layout, ExitStatus> {
    resolve_layout_near(args, None, printer)
}

/// [`resolve_layout`], searching first upwards from `near` (a path the command works on,
/// relative to the working folder) when neither `--project-dir` nor an environment variable
/// names the project, then upwards from the working folder.
pub(super) fn resolve_layout_near(
    args: &ProjectArgs,
    near: Option<&Utf8Path>,
    printer: &Printer,
) -> Result<Layout, ExitStatus> {
    let cwd = working_folder(printer)?;
    let find =
        |start: &Utf8Path| discover::find_project_dir(args.project_dir.as_deref(), &env_var, start);
    let found = match near {
        Some(near) => find(&cwd.join(near)).or_else(|_| find(&cwd)),
        None => find(&cwd),
    };
    let resolved = found.and_then(|dir| {
        Ok((
            crate::harness::pick_harness(&dir, args.harness)?,
            lexically_normal(&dir),
        ))
    });
    match resolved {
        Ok((harness, dir)) => Ok(Layout::new(&dir, harness, &env_var)),
        Err(error) => {
            let help = match error {
                discover::ProjectError::NotFound { .. }
                | discover::ProjectError::NotAnAidlcProject { .. }
                | discover::ProjectError::NoHarness(_) => Some(
                    "run `aidlc init <dir>` to install the default framework, or pass --project-dir and --harness",
                ),
                _ => None,
            };
            Err(error_line(printer, &error.to_string(), help))
        }
    }
}

/// How a message names `path`, a file under the project that this command wrote (or found
/// already holding its bytes): relative to the project folder when the command runs in that
/// folder, else absolute, so that a project found above the working folder, or named by
/// `--project-dir` or the environment, is never taken for the working folder.
pub(super) fn written_file_shown(layout: &Layout, path: &Utf8Path) -> String {
    let shown = layout.display(path);
    let runs_in_project = current_dir().is_some_and(|cwd| {
        cwd == layout.project_dir
            || cwd.canonicalize_utf8().ok() == layout.project_dir.canonicalize_utf8().ok()
    });
    if runs_in_project || shown.is_absolute() {
        shown.into_string()
    } else {
        layout.project_dir.join(shown).into_string()
    }
}

/// The workspace for `args`: the layout, then the active space and intent read once for the
/// whole command; or the error already printed.
pub(super) fn resolve_workspace(
    args: &ProjectArgs,
    printer: &Printer,
) -> Result<Workspace, ExitStatus> {
    resolve_layout(args, printer).map(Workspace::resolve)
}

/// The live registry, or `None` with its errors printed.
pub(super) fn usable_registry(layout: &Layout, printer: &Printer) -> Option<LiveRegistry> {
    let registry = load_live_registry(layout);
    if registry.errors.is_empty() {
        return Some(registry);
    }
    for diagnostic in &registry.errors {
        printer.diagnostic(diagnostic, &registry.sources);
    }
    error_line(
        printer,
        "the sensor manifests have errors",
        Some("fix them (`aidlc compile` shows the same problems)"),
    );
    None
}

/// The compiled graph, strictly read, or `None` with why it cannot be used printed.
pub(super) fn usable_graph(layout: &Layout, printer: &Printer) -> Option<StageGraph> {
    load_graph(&layout.stage_graph_path)
        .map_err(|error| error_line(printer, &error.to_string(), None))
        .ok()
}
