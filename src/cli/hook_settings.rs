//! `aidlc hook install [--harness H] [--dry-run] [--uninstall] [--program P]`: parses, asks
//! `harness::install` for the plan, prints it, and writes it.

use crate::cli::args::{Format, HookInstallArgs, HookSettingsCommand};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{CommandResult, resolve_layout, written_file_shown};
use crate::compile::discover::Layout;
use crate::harness;
use crate::harness::install::{self, HookAction, HookPlan, InstallRequest};
use crate::leaves::exit_status::ExitStatus;

pub fn run(command: &HookSettingsCommand) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    match command {
        HookSettingsCommand::Install(install) => install_hooks(install, &printer),
    }
}

/// 0 when the files are as asked (written, or already so), 2 when they cannot be (malformed,
/// the wrong shape, read-only, a harness without hooks).
fn install_hooks(args: &HookInstallArgs, printer: &Printer) -> CommandResult {
    let layout = resolve_layout(&args.project, printer)?;
    let program = args.program.trim();
    if program.is_empty() {
        return Err(error_line(
            printer,
            "--program must name how to run aidlc",
            None,
        ));
    }
    let request = InstallRequest {
        project_dir: &layout.project_dir,
        harness: harness::hook_harness(&layout.project_dir, layout.harness, args.project.harness),
        program,
        action: if args.uninstall {
            HookAction::Uninstall
        } else {
            HookAction::Install
        },
    };
    let plan =
        install::plan(&request).map_err(|error| error_line(printer, &error.to_string(), None))?;
    print_changes(&plan, &layout, printer);
    let shown = install::hook_registration(plan.harness).path;
    if args.dry_run {
        print_dry_run(&plan, &layout, printer);
        printer.status(&if plan.changes_anything() {
            format!("dry run: {shown} was not changed")
        } else {
            format!("dry run: {shown} needs no change")
        });
        return Ok(ExitStatus::Success);
    }
    let changed = install::apply(&plan, &layout.project_dir)
        .map_err(|error| error_line(printer, &error.to_string(), None))?;
    if changed.is_empty() {
        printer.status(&format!("{shown} needs no change"));
        return Ok(ExitStatus::Success);
    }
    for path in &changed {
        let removed = plan
            .files
            .iter()
            .any(|file| &file.path == path && file.after.is_none());
        let verb = if removed { "removed" } else { "wrote" };
        printer.status(&format!("{verb} {}", written_file_shown(&layout, path)));
    }
    for follow_up in &plan.follow_ups {
        printer.status(follow_up);
    }
    Ok(ExitStatus::Success)
}

fn print_changes(plan: &HookPlan, layout: &Layout, printer: &Printer) {
    for file in &plan.files {
        let shown = layout.display(&file.path);
        for change in &file.changes {
            printer.status(&format!("{shown}: {change}"));
        }
        for note in &file.notes {
            printer.status(&format!("{shown}: note: {note}"));
        }
    }
}

/// The files as they would be written, on stdout: one file alone, several each under a
/// `==> path <==` line; a file that would be removed is said on stderr.
fn print_dry_run(plan: &HookPlan, layout: &Layout, printer: &Printer) {
    let changed: Vec<_> = plan
        .files
        .iter()
        .filter(|file| file.changes_the_file())
        .collect();
    let written: Vec<_> = changed
        .iter()
        .filter_map(|file| Some((file, file.after.as_deref()?)))
        .collect();
    let untouched_single = changed.is_empty() && plan.files.len() == 1;
    if untouched_single && let Some(text) = plan.files[0].after.as_deref() {
        printer.out(text.trim_end_matches(['\n', '\r']));
    }
    for (file, text) in &written {
        if written.len() > 1 {
            printer.out(&format!("==> {} <==", layout.display(&file.path)));
        }
        printer.out(text.trim_end_matches(['\n', '\r']));
    }
    for file in changed.iter().filter(|file| file.after.is_none()) {
        printer.status(&format!(
            "dry run: would remove {}",
            layout.display(&file.path)
        ));
    }
}
