//! Writing to the terminal. A closed stdout pipe ends the process quietly (D9).

use std::io::{IsTerminal, Write};

use crate::cli::args::Format;
use crate::diagnostics::Diagnostic;
use crate::diagnostics::render::{self, SourceLookup};

pub struct Printer {
    pub format: Format,
    pub quiet: bool,
    color: bool,
}

impl Printer {
    pub fn new(format: Format, quiet: bool) -> Self {
        let color = std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Self {
            format,
            quiet,
            color,
        }
    }

    /// A status line for people, on stderr.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            write_or_exit(&mut std::io::stderr(), line);
        }
    }

    /// A line of output on stdout.
    #[expect(
        clippy::unused_self,
        reason = "all output goes through the printer, whatever the stream"
    )]
    pub fn out(&self, line: &str) {
        write_or_exit(&mut std::io::stdout(), line);
    }

    pub fn diagnostic(&self, diagnostic: &Diagnostic, sources: &dyn SourceLookup) {
        match self.format {
            Format::Human => write_or_exit(
                &mut std::io::stderr(),
                render::render_human(diagnostic, sources, self.color).trim_end_matches('\n'),
            ),
            Format::Json => self.out(&render::render_json(diagnostic, sources)),
            Format::Github => self.out(&render::render_github(diagnostic, sources)),
        }
    }
}

fn write_or_exit(stream: &mut dyn Write, line: &str) {
    if let Err(error) = writeln!(stream, "{line}")
        && error.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}
