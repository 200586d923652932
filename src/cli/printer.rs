//! Writing to the terminal, and what happens when that fails (D9).
//!
//! - A closed stdout pipe (EPIPE: the reader went away, `aidlc … | head`) stops further output
//!   on stdout and nothing else: the command runs to its end, so its exit status is still its
//!   verdict's (a failing gate exits 1 whoever reads its report), and no fire is left
//!   half-recorded. [`report_closed_stdout`] then says so on stderr when that status is not 0;
//!   a passing command whose reader took what it wanted ends quietly.
//! - Any other failed write on stdout (a full disk, `>/dev/full`, an I/O error) loses output
//!   someone relies on (a verdict line, a report): the first one is reported on stderr, nothing
//!   more is written to stdout (what was written stays a prefix of the output), and the command
//!   goes on to its end, so that no fire is left half-recorded. [`stdout_failed`] then makes
//!   the final status 2 (see `final_status` in `cli::commands`).
//! - A failed write on stderr (a closed pipe included) is ignored: there is nowhere left to say
//!   it, and it must not change the exit status either.
//!
//! This is the one module that may touch `std::io::stdout` and `std::io::stderr` (clippy's
//! `disallowed_methods` and `print_stdout`/`print_stderr` refuse them everywhere else, except
//! the panic hook in `main.rs`).
#![expect(
    clippy::disallowed_methods,
    reason = "the printer is the one terminal writer of the crate"
)]

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cli::args::{Format, When};
use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::exit_status::ExitStatus;
use crate::report::source::SourceLookup;
use crate::report::{github, human, json};

/// Set by the first failed write on stdout, for the whole process (every command makes its own
/// `Printer`).
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Whether a write on stdout failed (other than a closed pipe) in this process.
pub fn stdout_failed() -> bool {
    STDOUT_FAILED.load(Ordering::SeqCst)
}

/// Set by the first write on stdout that found its reader gone (EPIPE), for the whole process.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader went away (a closed pipe) in this process.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::SeqCst)
}

/// Say on stderr that stdout's reader went away before the output ended, when it did and
/// `status` (the command's final one) is not 0: the status is the verdict's, not the pipe's.
pub fn report_closed_stdout(status: ExitStatus) {
    if stdout_closed() && status != ExitStatus::Success {
        write_to_stderr(&format!(
            "note: stdout was closed by its reader before the output ended; the exit status is the command's own ({})",
            status.code()
        ));
    }
}

/// `--color`, for the whole process (set once by `cli::run` before any command prints;
/// `auto` until then).
static COLOR_WHEN: OnceLock<When> = OnceLock::new();

/// Set `--color` for every printer of the process.
pub fn set_color_when(when: When) {
    let _ = COLOR_WHEN.set(when);
}

fn color_when() -> When {
    COLOR_WHEN.get().copied().unwrap_or_default()
}

pub struct Printer {
    pub format: Format,
    pub quiet: bool,
    color: bool,
    /// Whether stderr is a terminal: only there are diagnostics wrapped to its width, and a
    /// progress line drawn under `--progress auto`.
    pub stderr_is_terminal: bool,
    /// The project folder relative to the repository root, for the paths of annotations (empty:
    /// the paths stay project-relative).
    pub path_prefix: camino::Utf8PathBuf,
    /// The project folder relative to the working folder, for the paths people read, so that
    /// they open from there (empty: the paths stay project-relative).
    pub display_prefix: camino::Utf8PathBuf,
}

impl Printer {
    /// The one SARIF log of a compile: its diagnostics, and its drift under `--check`.
    pub fn print_compile_sarif(
        &self,
        diagnostics: &[Diagnostic],
        drifts: &[crate::compile::Drift],
        sources: &dyn SourceLookup,
    ) {
        self.out(&crate::report::sarif::render_compile_sarif(
            diagnostics,
            drifts,
            sources,
            &self.path_prefix,
            env!("CARGO_PKG_VERSION"),
        ));
    }

    pub fn new(format: Format, quiet: bool) -> Self {
        Self {
            format,
            quiet,
            color: color_allowed(&std::io::stderr()),
            stderr_is_terminal: std::io::stderr().is_terminal(),
            path_prefix: camino::Utf8PathBuf::new(),
            display_prefix: camino::Utf8PathBuf::new(),
        }
    }

    /// A status line for people, on stderr.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            write_to_stderr(line);
        }
    }

    pub fn diagnostic(&self, diagnostic: &Diagnostic, sources: &dyn SourceLookup) {
        match self.format {
            Format::Human => write_to_stderr(
                human::render_diagnostic(
                    diagnostic,
                    sources,
                    self.color,
                    self.stderr_is_terminal,
                    &self.display_prefix,
                )
                .trim_end_matches('\n'),
            ),
            Format::Json => self.out(&json::diagnostic_json_line(diagnostic, sources)),
            Format::Github => self.out(&github::diagnostic_annotation(
                diagnostic,
                sources,
                &self.path_prefix,
            )),
            // One log for the whole run: the command prints it at the end.
            Format::Sarif => {}
        }
    }
}

/// What goes through the printer though it needs nothing of one printer's settings.
#[expect(
    clippy::unused_self,
    reason = "all output, and every question about the terminal, goes through the printer"
)]
impl Printer {
    /// Whether what goes to stdout may carry ANSI colours (see [`color_allowed`]).
    pub fn stdout_color(&self) -> bool {
        color_allowed(&std::io::stdout())
    }

    /// A progress bar of `total` steps on stderr (indicatif), redrawn at most
    /// [`PROGRESS_REDRAWS_PER_SECOND`] times a second whichever thread ticks it, and cleared by
    /// `finish_and_clear`; a hidden one draws nothing. The caller decides whether it is shown (a
    /// terminal, no `--quiet`, or `--progress always`).
    pub fn progress_line(&self, total: usize, label: &str, shown: bool) -> indicatif::ProgressBar {
        let target = if shown {
            indicatif::ProgressDrawTarget::term_like_with_hz(
                Box::new(StderrLine),
                PROGRESS_REDRAWS_PER_SECOND,
            )
        } else {
            indicatif::ProgressDrawTarget::hidden()
        };
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(u64::try_from(total).unwrap_or(u64::MAX)),
            target,
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "  [{{bar:24}}] {{pos}}/{{len}} {label} ({{elapsed}})"
        )) {
            bar.set_style(style.progress_chars("#>-"));
        }
        bar
    }

    /// A line of output on stdout.
    pub fn out(&self, line: &str) {
        write_to_stdout(&mut std::io::stdout().lock(), line);
    }
}

/// How often a progress line may be redrawn.
pub const PROGRESS_REDRAWS_PER_SECOND: u8 = 8;

/// stderr as indicatif draws on it: ANSI cursor and line controls, written whether or not stderr
/// is a terminal (whether to draw at all is decided before; `--progress always` draws into a
/// pipe on purpose, for tests). Failed writes are ignored: a progress line is decoration.
#[derive(Debug)]
struct StderrLine;

impl StderrLine {
    fn write(text: &str) -> std::io::Result<()> {
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(text.as_bytes())?;
        stderr.flush()
    }

    /// ANSI's cursor move `n` cells in `direction` (`A` up, `B` down, `C` right, `D` left);
    /// nothing for 0.
    fn move_cursor(n: usize, direction: char) -> std::io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        Self::write(&format!("\u{1b}[{n}{direction}"))
    }
}

impl indicatif::TermLike for StderrLine {
    fn width(&self) -> u16 {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|columns| columns.trim().parse().ok())
            .filter(|columns| *columns >= 20)
            .unwrap_or(80)
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        Self::move_cursor(n, 'A')
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        Self::move_cursor(n, 'B')
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        Self::move_cursor(n, 'C')
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        Self::move_cursor(n, 'D')
    }

    fn write_line(&self, line: &str) -> std::io::Result<()> {
        Self::write(&format!("{line}\n"))
    }

    fn write_str(&self, text: &str) -> std::io::Result<()> {
        Self::write(text)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Self::write("\r\u{1b}[2K")
    }

    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Whether ANSI colours may go to `stream`: `--color always|never` decides; with `auto`,
/// `NO_COLOR` (non-empty) turns them off, `CLICOLOR_FORCE` or `FORCE_COLOR` (non-empty, not
/// `0`) on, and otherwise anstream's rule applies (a terminal, `CLICOLOR` not `0`, and a `TERM`
/// that is not `dumb`, or a CI that shows colours).
fn color_allowed<S: anstream::stream::RawStream>(stream: &S) -> bool {
    match color_when() {
        When::Always => true,
        When::Never => false,
        When::Auto => {
            if anstyle_query::no_color() {
                false
            } else if anstyle_query::clicolor_force() || force_color() {
                true
            } else {
                anstream::AutoStream::<S>::choice(stream) != anstream::ColorChoice::Never
            }
        }
    }
}

/// `FORCE_COLOR` as Node and many CLIs read it: set, non-empty and not `0` or `false`.
fn force_color() -> bool {
    std::env::var("FORCE_COLOR")
        .is_ok_and(|value| !value.is_empty() && value != "0" && value != "false")
}

/// `error: message`, and `  help: …` under it when there is help, on stderr (as a status
/// line: `--quiet` silences it too, so a command that must always report an error makes its
/// printer without `quiet`). Returns [`ExitStatus::Error`], the status of a command that stops
/// at a usage or environment error (D9).
pub fn error_line(printer: &Printer, message: &str, help: Option<&str>) -> ExitStatus {
    let mut text = format!("error: {message}");
    if let Some(help) = help {
        text.push_str("\n  help: ");
        text.push_str(help);
    }
    printer.status(&text);
    ExitStatus::Error
}

/// `line` and a newline on `stream`, flushed, so that a failure is seen here and not at exit.
/// Nothing more is written after a failure or once the reader has gone.
fn write_to_stdout(stream: &mut dyn Write, line: &str) {
    if STDOUT_FAILED.load(Ordering::SeqCst) || STDOUT_CLOSED.load(Ordering::SeqCst) {
        return;
    }
    match writeln!(stream, "{line}").and_then(|()| stream.flush()) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::SeqCst);
        }
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
    let _ = writeln!(std::io::stderr(), "{line}");
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
