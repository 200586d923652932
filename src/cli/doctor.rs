//! `aidlc doctor [--format human|json]`: resolves the workspace, asks `doctor` for the rows,
//! prints them, and exits 1 when a row failed. It writes nothing.

use std::fmt::Write as _;

use crate::cli::args::{DoctorArgs, Format, HumanOrJson};
use crate::cli::printer::Printer;
use crate::cli::project::{CommandResult, resolve_workspace};
use crate::doctor::{Report, Row, Status, any_failed, count, run_doctor};
use crate::leaves::english::counted;
use crate::leaves::exit_status::ExitStatus;

pub fn run(args: &DoctorArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let workspace = resolve_workspace(&args.project, &printer)?;
    let rows = run_doctor(&workspace);
    match args.format {
        HumanOrJson::Human => printer.out(&human(&rows)),
        HumanOrJson::Json => printer.out(
            &serde_json::to_string(&Report::of(&rows))
                .unwrap_or_else(|error| unreachable!("a report of rows serialises: {error}")),
        ),
    }
    Ok(if any_failed(&rows) {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// The reference's layout (a title, a rule, `✓  label` / `✗  label — fix`), with `!` for a warn.
fn human(rows: &[Row]) -> String {
    let mut text = format!("aidlc doctor\n{}\n", "\u{2500}".repeat(37));
    for row in rows {
        let mark = match row.status {
            Status::Pass => "\u{2713}",
            Status::Warn => "!",
            Status::Fail => "\u{2717}",
        };
        text.push_str(mark);
        text.push_str("  ");
        text.push_str(&row.label);
        if let Some(fix) = &row.fix {
            text.push_str(" \u{2014} ");
            text.push_str(fix);
        }
        text.push('\n');
    }
    let _ = write!(
        text,
        "\n{} passed, {}, {} failed",
        count(rows, Status::Pass),
        counted(count(rows, Status::Warn), "warning"),
        count(rows, Status::Fail)
    );
    text
}
