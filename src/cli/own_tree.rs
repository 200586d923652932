//! `aidlc compile` in a plugin's own tree (docs/decisions.md D52): the plugin is composed into
//! a temporary copy of the default framework by the library (`plugin::own_tree`), and its
//! diagnostics are printed against the plugin's own files. Nothing is written.

use std::time::Instant;

use camino::Utf8Path;

use crate::cli::args::{CompileArgs, Format};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::current_dir;
use crate::leaves::english::counted;
use crate::leaves::exit_status::ExitStatus;
use crate::plugin::own_tree;

pub(super) fn compile_own_tree(
    args: &CompileArgs,
    plugin_root: &Utf8Path,
    printer: &mut Printer,
) -> ExitStatus {
    if args.watch {
        return error_line(
            printer,
            &format!(
                "--watch is not available in a plugin's own tree ({plugin_root}): each compile there composes the plugin into a fresh temporary framework"
            ),
            Some(
                "run `aidlc compile` again after an edit, open the folder with `aidlc lsp`, or add the plugin to a project (`aidlc plugin add`) and watch there",
            ),
        );
    }
    if let Some(cwd) = current_dir() {
        printer.display_prefix = crate::leaves::fs_util::path_from(&cwd, plugin_root);
    }
    let started = Instant::now();
    let compiled = match own_tree::compile_own_tree(plugin_root, args.project.harness) {
        Ok(compiled) => compiled,
        Err(problem) => {
            crate::cli::plugin::report_problems(printer, std::slice::from_ref(&problem));
            return ExitStatus::Error;
        }
    };
    crate::cli::plugin::report_warnings(printer, &compiled.warnings);
    for diagnostic in &compiled.diagnostics {
        printer.diagnostic(diagnostic, &compiled.sources);
    }
    if printer.format == Format::Sarif {
        printer.print_compile_sarif(&compiled.diagnostics, &[], &compiled.sources);
    }
    let harness_dir = compiled
        .harness
        .map(|harness| format!(" ({})", harness.dir_name()))
        .unwrap_or_default();
    let place = format!(
        "plugin \"{}\" composed into a temporary copy of the default framework{harness_dir}",
        compiled.plugin
    );
    if !compiled.refusals.is_empty() {
        // A refusal that names no file: as `plugin add` prints it, and its exit status.
        crate::cli::plugin::report_problems(printer, &compiled.refusals);
        let n = compiled.refusals.len() + compiled.n_errors();
        printer.status(&format!(
            "error: {place} was refused ({}); nothing was written",
            counted(n, "problem")
        ));
        return ExitStatus::Error;
    }
    if compiled.refused {
        // Every refusal is on a file: an error in a file, as a compile's (exit 1).
        printer.status(&format!(
            "error: {place} was refused with {} in its files; nothing was written",
            counted(compiled.n_errors(), "error")
        ));
        return ExitStatus::Failure;
    }
    if compiled.n_errors() > 0 {
        printer.status(&format!(
            "error: compile failed with {} and {}; {place}; nothing was written",
            counted(compiled.n_errors(), "error"),
            counted(compiled.n_warnings(), "warning")
        ));
        return ExitStatus::Failure;
    }
    let Some(outcome) = &compiled.compiled else {
        return error_line(printer, "the composed framework was not compiled", None);
    };
    printer.status(&format!(
        "compiled {} and {} in {:.1} ms{}; {place}; nothing was written",
        counted(outcome.n_stages, "stage"),
        counted(outcome.n_sensors, "sensor"),
        started.elapsed().as_secs_f64() * 1000.0,
        match compiled.n_warnings() {
            0 => String::new(),
            n => format!(" with {}", counted(n, "warning")),
        }
    ));
    ExitStatus::Success
}
