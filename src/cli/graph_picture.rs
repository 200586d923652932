//! `aidlc graph`: find the stage graph that matches the sources, read it strictly, select, draw.
//!
//! Which graph: the file on disk when the last compile's record proves that nothing it read or
//! wrote changed since (`up_to_date::check`, read-only); otherwise the sources are compiled in
//! memory and that graph is drawn, so a picture never shows a stale graph. Nothing is written
//! either way. A compile with errors draws nothing (exit 1).

use crate::cli::args::{Format, GraphArgs};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{CommandResult, resolve_layout};
use crate::compile;
use crate::compile::db::CompilerDatabase;
use crate::compile::discover::{self, Layout};
use crate::compile::up_to_date;
use crate::graph_picture::{self, read_stage_map};
use crate::leaves::english::counted;
use crate::leaves::exit_status::ExitStatus;
use crate::protocol::graph_reader::GraphTextError;

pub(super) fn run(args: &GraphArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let layout = resolve_layout(&args.project, &printer)?;
    let text = graph_text(&layout, &printer)?;
    let map = match read_stage_map(&text) {
        Ok(map) => map,
        Err(error) => {
            let graph = layout.display(&layout.stage_graph_path);
            let message = match error {
                GraphTextError::Json(reason) => {
                    format!("the stage graph {graph} is malformed ({reason})")
                }
                GraphTextError::Refused(refusal) => format!("{refusal} (in {graph})"),
            };
            return Err(error_line(
                &printer,
                &message,
                Some("run `aidlc compile --force` to rebuild it"),
            ));
        }
    };
    let selection = match map.select(&args.stages, args.sensors) {
        Ok(selection) => selection,
        Err(unknown) => {
            let help = unknown.closest.map_or_else(
                || "`aidlc graph --format json` lists every stage".to_owned(),
                |closest| format!("did you mean `{closest}`?"),
            );
            return Err(error_line(
                &printer,
                &format!("no stage \"{}\" in the stage graph", unknown.slug),
                Some(&help),
            ));
        }
    };
    printer.out(&graph_picture::render(&selection, args.format));
    Ok(ExitStatus::Success)
}

/// The text of the graph the sources compile to: the file when the record proves it current,
/// else a compile in memory (its errors printed, exit 1).
fn graph_text(layout: &Layout, printer: &Printer) -> Result<String, ExitStatus> {
    if up_to_date::check(layout, up_to_date::CheckMode::ReadOnly).is_ok() {
        return crate::leaves::fs_util::read_bounded_text(
            &layout.stage_graph_path,
            crate::compile::discover::MAX_GENERATED_BYTES,
        )
        .map_err(|error| {
            error_line(
                printer,
                &format!(
                    "cannot read the stage graph {}: {error}",
                    layout.display(&layout.stage_graph_path)
                ),
                Some("run `aidlc compile --force` to rebuild it"),
            )
        });
    }
    let mut db = CompilerDatabase::default();
    discover::load_project(&mut db, layout);
    compile::compute_in_parallel(&db);
    let outcome = compile::compile(&db);
    if outcome.n_errors() > 0 {
        let sources = compile::source_texts(&db, &outcome.diagnostics);
        for diagnostic in outcome.diagnostics.iter().filter(|d| d.is_error()) {
            printer.diagnostic(diagnostic, &sources);
        }
        error_line(
            printer,
            &format!(
                "the sources have {}; nothing to draw",
                counted(outcome.n_errors(), "compile error")
            ),
            Some("fix them (`aidlc compile` shows the same), then draw again"),
        );
        return Err(ExitStatus::Failure);
    }
    let on_disk = crate::leaves::fs_util::read_bounded(
        &layout.stage_graph_path,
        crate::compile::discover::MAX_GENERATED_BYTES,
    )
    .ok();
    if on_disk.as_deref() != Some(outcome.stage_graph.as_bytes()) {
        printer.status(&format!(
            "note: {} is missing or out of date; drawing the graph the sources compile to (nothing written; `aidlc compile` writes it)",
            layout.display(&layout.stage_graph_path)
        ));
    }
    Ok(outcome.stage_graph.to_string())
}
