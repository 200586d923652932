//! `aidlc hook install [--dry-run] [--uninstall] [--program P]`: parses, asks
//! `hook_install` for the plan, prints it, and writes it.

use crate::cli::ExitStatus;
use crate::cli::args::{Format, HookInstallArgs, HookSettingsArgs, HookSettingsCommand};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{resolve_layout, written_file_shown};
use crate::hook_install::{self, HookAction};

pub fn run(args: &HookSettingsArgs) -> ExitStatus {
    let printer = Printer::new(Format::Human, false);
    match &args.command {
        HookSettingsCommand::Install(install) => install_hooks(install, &printer),
    }
}

/// 0 when the file is as asked (written, or already so), 2 when it cannot be (malformed, the
/// wrong shape, unwritable).
fn install_hooks(args: &HookInstallArgs, printer: &Printer) -> ExitStatus {
    let layout = match resolve_layout(&args.project, printer) {
        Ok(layout) => layout,
        Err(status) => return status,
    };
    let action = if args.uninstall {
        HookAction::Uninstall
    } else {
        HookAction::Install
    };
    let program = args.program.trim();
    if program.is_empty() {
        error_line(printer, "--program must name how to run aidlc", None);
        return ExitStatus::Error;
    }
    let harness_dir = layout.project_dir.join(layout.harness.dir_name());
    let plan = match hook_install::plan(&harness_dir, program, action) {
        Ok(plan) => plan,
        Err(error) => {
            error_line(printer, &error.to_string(), None);
            return ExitStatus::Error;
        }
    };
    let shown = layout.display(&plan.settings_path);
    for change in &plan.changes {
        printer.status(&format!("{shown}: {change}"));
    }
    if args.dry_run {
        printer.out(plan.after.trim_end_matches(['\n', '\r']));
        printer.status(&if plan.changes_the_file() {
            format!("dry run: {shown} was not changed")
        } else {
            format!("dry run: {shown} needs no change")
        });
        return ExitStatus::Success;
    }
    match hook_install::apply(&plan, &layout.project_dir) {
        Ok(true) => {
            printer.status(&format!(
                "wrote {}",
                written_file_shown(&layout, &plan.settings_path)
            ));
            ExitStatus::Success
        }
        Ok(false) => {
            printer.status(&format!("{shown} needs no change"));
            ExitStatus::Success
        }
        Err(error) => {
            error_line(printer, &error.to_string(), None);
            ExitStatus::Error
        }
    }
}
