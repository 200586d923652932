//! Writing to the terminal, and what happens when that fails (D9).
//!
//! - A closed stdout or stderr pipe (EPIPE) ends the process quietly with status 0: the reader
//!   went away on purpose (`aidlc … | head`).
//! - Any other failed write on stdout (a full disk, `>/dev/full`, an I/O error) loses output
//!   someone relies on (a verdict line, a report): the first one is reported on stderr, nothing
//!   more is written to stdout (what was written stays a prefix of the output), and the command
//!   goes on to its end, so that no fire is left half-recorded. [`stdout_failed`] then makes
//!   the final status 2 (see `final_status` in `cli::commands`).
//! - A failed write on stderr is ignored: there is nowhere left to say it.
//!
//! This is the one module that may touch `std::io::stdout` and `std::io::stderr` (clippy's
//! `disallowed_methods` and `print_stdout`/`print_stderr` refuse them everywhere else, except
//! the panic hook in `main.rs`).
#![expect(
    clippy::disallowed_methods,
    reason = "the printer is the one terminal writer of the crate"
)]

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cli::args::Format;
use crate::diagnostics::Diagnostic;
use crate::diagnostics::render::{self, SourceLookup};

/// Set by the first failed write on stdout, for the whole process (every command makes its own
/// `Printer`).
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Whether a write on stdout failed (other than a closed pipe) in this process.
pub fn stdout_failed() -> bool {
    STDOUT_FAILED.load(Ordering::SeqCst)
}

pub struct Printer {
    pub format: Format,
    pub quiet: bool,
    color: bool,
}

impl Printer {
    pub fn new(format: Format, quiet: bool) -> Self {
        Self {
            format,
            quiet,
            color: color_allowed(std::io::stderr().is_terminal()),
        }
    }

    /// Whether what goes to stdout may carry ANSI colours: stdout is a terminal and `NO_COLOR`
    /// is unset or empty.
    #[expect(
        clippy::unused_self,
        reason = "every question about the terminal goes through the printer"
    )]
    pub fn stdout_color(&self) -> bool {
        color_allowed(std::io::stdout().is_terminal())
    }

    /// Whether stderr is a terminal (a progress line is drawn only there).
    #[expect(
        clippy::unused_self,
        reason = "every question about the terminal goes through the printer"
    )]
    pub fn stderr_is_terminal(&self) -> bool {
        std::io::stderr().is_terminal()
    }

    /// Redraw the one progress line on stderr: a carriage return and `text`, no newline. A
    /// failed write is ignored: a progress line is only decoration.
    #[expect(
        clippy::unused_self,
        reason = "all output goes through the printer, whatever the stream"
    )]
    pub fn progress(&self, text: &str) {
        let _ = write!(std::io::stderr(), "\r{text}");
    }

    /// Replace the progress line with `text` for good (it ends with a newline).
    #[expect(
        clippy::unused_self,
        reason = "all output goes through the printer, whatever the stream"
    )]
    pub fn progress_end(&self, text: &str) {
        let _ = writeln!(std::io::stderr(), "\r{text}");
    }

    /// A status line for people, on stderr.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            write_to_stderr(line);
        }
    }

    /// A line of output on stdout.
    #[expect(
        clippy::unused_self,
        reason = "all output goes through the printer, whatever the stream"
    )]
    pub fn out(&self, line: &str) {
        write_to_stdout(&mut std::io::stdout().lock(), line);
    }

    pub fn diagnostic(&self, diagnostic: &Diagnostic, sources: &dyn SourceLookup) {
        match self.format {
            Format::Human => write_to_stderr(
                render::render_human(diagnostic, sources, self.color).trim_end_matches('\n'),
            ),
            Format::Json => self.out(&render::render_json(diagnostic, sources)),
            Format::Github => self.out(&render::render_github(diagnostic, sources)),
        }
    }
}

/// Colours for a stream that is (or is not) a terminal: only on one, and never under
/// `NO_COLOR` (unless it is empty).
fn color_allowed(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

/// `error: message`, and `  help: …` under it when there is help, on stderr (as a status
/// line: `--quiet` silences it too, so a command that must always report an error makes its
/// printer without `quiet`).
pub fn error_line(printer: &Printer, message: &str, help: Option<&str>) {
    let mut text = format!("error: {message}");
    if let Some(help) = help {
        text.push_str("\n  help: ");
        text.push_str(help);
    }
    printer.status(&text);
}

/// `line` and a newline on `stream`, flushed, so that a failure is seen here and not at exit.
fn write_to_stdout(stream: &mut dyn Write, line: &str) {
    if STDOUT_FAILED.load(Ordering::SeqCst) {
        return;
    }
    match writeln!(stream, "{line}").and_then(|()| stream.flush()) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(error) => {
            if !STDOUT_FAILED.swap(true, Ordering::SeqCst) {
                write_to_stderr(&format!(
                    "error: cannot write the output to stdout: {error}\n  help: the output is incomplete; check where stdout goes (a full disk, a closed file)"
                ));
            }
        }
    }
}

fn write_to_stderr(line: &str) {
    if let Err(error) = writeln!(std::io::stderr(), "{line}")
        && error.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that takes `room` bytes, then fails as a full disk does.
    struct FullAfter {
        room: usize,
        written: Vec<u8>,
    }

    impl Write for FullAfter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            let taken = bytes.len().min(self.room);
            self.room -= taken;
            self.written.extend_from_slice(&bytes[..taken]);
            Ok(taken)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_remembered_and_nothing_more_is_written() {
        let mut stream = FullAfter {
            room: 8,
            written: Vec::new(),
        };
        write_to_stdout(&mut stream, "first");
        assert!(!stdout_failed());
        write_to_stdout(&mut stream, "second line");
        assert!(stdout_failed());
        let mut later = FullAfter {
            room: 100,
            written: Vec::new(),
        };
        write_to_stdout(&mut later, "third");
        assert!(later.written.is_empty(), "written after a failure");
        assert_eq!(stream.written, b"first\nse");
    }
}
