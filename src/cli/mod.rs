//! The command line: argument types, project resolution, and printing. This is the only module
//! that writes to stdout or stderr.

mod args;
mod commands;
mod doctor;
mod engine;
mod exit_statuses;
mod gate;
mod gate_step;
mod graph_picture;
mod hook_settings;
mod man_pages;
mod own_tree;
mod plugin;
mod printer;
mod project;
mod quick_parse;
mod sensor_usage;
mod sensors;
mod watch_loop;

pub use args::{Cli, Format, command};
pub use commands::run;

use crate::leaves::exit_status::ExitStatus;

/// The command line, parsed. A usage error of `aidlc engine sensor list|describe|fire` is told
/// in the reference's words (`fire requires --stage <slug>`, …) and gives exit 2 (D9); any other
/// is clap's own report and exit status (help and version included).
pub fn parse_arguments() -> Result<Cli, ExitStatus> {
    use clap::FromArgMatches as _;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The write hook's and `fire`'s plain command lines skip building clap's command tree;
    // whatever they do not recognise is clap's, below (see `quick_parse`).
    if let Some(cli) = quick_parse::quick_parse(&args) {
        return Ok(cli);
    }
    let parsed = command()
        .try_get_matches_from(&args)
        .and_then(|mut matches| {
            Cli::from_arg_matches_mut(&mut matches).map_err(|error| error.format(&mut command()))
        });
    parsed.map_err(|error| {
        let after_program: Option<Vec<String>> = args
            .iter()
            .skip(1)
            .map(|arg| arg.to_str().map(str::to_owned))
            .collect();
        let is_error = !matches!(
            error.kind(),
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
        );
        let message = after_program
            .filter(|_| is_error)
            .and_then(|words| sensor_usage::reference_message(&words));
        let printer = printer::Printer::new(Format::Human, false);
        match message {
            Some(sensor_usage::ReferenceMessage::Error(text)) => printer::error_line(
                &printer,
                &text,
                Some("run `aidlc engine sensor --help` for the commands and their arguments"),
            ),
            Some(sensor_usage::ReferenceMessage::Usage(text)) => {
                printer.status(&text);
                ExitStatus::Error
            }
            None => error.exit(),
        }
    })
}
