//! `aidlc man`: one manual page per command, from the clap definition ([`super::args::command`]),
//! with the sections clap does not know: EXIT STATUS ([`exit_statuses`](super::exit_statuses::exit_statuses), which `--help` shows
//! too), ENVIRONMENT (every variable the binary reads, [`ENVIRONMENT`]) and SEE ALSO.
//!
//! Invariants:
//! - the pages are `aidlc.1` and `aidlc-<words>.1` for every visible subcommand, and every
//!   `aidlc-<words>(1)` a page names is one of them;
//! - every command path has an entry in [`exit_statuses`](super::exit_statuses::exit_statuses) (a test walks the whole tree);
//! - the roff is ASCII: Markdown code spans of the help text are set in bold (plain in NAME,
//!   which `whatis` reads), and any other character is written as a groff `\[uXXXX]` escape, so
//!   `groff -man` reads a page without `preconv`.

use std::fmt::Write as _;

use clap_mangen::roff::{Roff, bold, roman};

use super::exit_statuses::{Status, exit_statuses};

/// One page: its file name (`aidlc-gate-check.1`) and its roff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManPage {
    pub file_name: String,
    pub roff: String,
}

/// Why a page could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("no command `aidlc {words}` has a manual page; commands: {known}")]
    UnknownCommand { words: String, known: String },
    #[error("`aidlc {words}` has no exit statuses in the manual's table")]
    NoExitStatuses { words: String },
    #[error("cannot render the manual page: {0}")]
    Render(#[from] std::io::Error),
    #[error("the manual page is not UTF-8: {0}")]
    NotUtf8(#[from] std::string::FromUtf8Error),
}

/// Every page: `aidlc.1`, then each subcommand's, depth first in the order `--help` lists them.
pub fn all_pages() -> Result<Vec<ManPage>, PageError> {
    let root = man_command();
    command_tree(&root, &[])
        .iter()
        .map(|(path, command)| render_page(command, path))
        .collect()
}

/// The page of the command `words` names (`["gate", "check"]`); the top-level page for none.
pub fn page_for(words: &[String]) -> Result<ManPage, PageError> {
    let root = man_command();
    let mut command = &root;
    for word in words {
        command = visible_subcommands(command)
            .find(|sub| sub.get_name() == word)
            .ok_or_else(|| PageError::UnknownCommand {
                words: words.join(" "),
                known: command_tree(&root, &[])[1..]
                    .iter()
                    .map(|(path, _)| path.join(" "))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
    }
    let path: Vec<&str> = words.iter().map(String::as_str).collect();
    render_page(command, &path)
}

/// The command tree the pages describe: the one `aidlc` parses, without clap's `help`
/// subcommand (it has no page), built so that each subcommand knows its full name.
fn man_command() -> clap::Command {
    let mut command = super::args::command().disable_help_subcommand(true);
    command.build();
    command
}

fn visible_subcommands(command: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    command.get_subcommands().filter(|sub| !sub.is_hide_set())
}

/// `command` and every visible subcommand under it, each with its words (`gate check`,
/// `engine sensor fire`, …), depth first in the order `--help` lists them.
fn command_tree<'a>(
    command: &'a clap::Command,
    path: &[&'a str],
) -> Vec<(Vec<&'a str>, &'a clap::Command)> {
    let mut tree = vec![(path.to_vec(), command)];
    for sub in visible_subcommands(command) {
        tree.extend(command_tree(sub, &[path, &[sub.get_name()]].concat()));
    }
    tree
}

/// `aidlc` for the top-level command, `aidlc-gate-check` for `gate check`.
fn page_name(path: &[&str]) -> String {
    std::iter::once("aidlc")
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join("-")
}

fn render_page(command: &clap::Command, path: &[&str]) -> Result<ManPage, PageError> {
    let statuses = exit_statuses(path).ok_or_else(|| PageError::NoExitStatuses {
        words: path.join(" "),
    })?;
    let man = clap_mangen::Man::new(command.clone());
    let mut chunks: Vec<String> = vec![title_line(path)];
    let mut render = |write: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>,
                      text: fn(&str) -> String|
     -> Result<(), PageError> {
        let mut bytes = Vec::new();
        write(&mut bytes)?;
        chunks.push(text(&String::from_utf8(bytes)?));
        Ok(())
    };
    render(&|out| man.render_name_section(out), without_code_marks)?;
    render(&|out| man.render_synopsis_section(out), bold_code_spans)?;
    render(&|out| man.render_description_section(out), bold_code_spans)?;
    if command.get_arguments().any(|arg| !arg.is_hide_set()) {
        render(&|out| man.render_options_section(out), bold_code_spans)?;
    }
    if visible_subcommands(command).next().is_some() {
        render(&|out| man.render_subcommands_section(out), bold_code_spans)?;
    }
    render(
        &|out| exit_status_section(path, command, statuses).to_writer(out),
        bold_code_spans,
    )?;
    render(
        &|out| environment_section(path).to_writer(out),
        bold_code_spans,
    )?;
    if !path.is_empty() {
        render(&|out| see_also_section(path).to_writer(out), str::to_owned)?;
    }
    render(&|out| man.render_version_section(out), str::to_owned)?;
    Ok(ManPage {
        file_name: format!("{}.1", page_name(path)),
        roff: ascii_roff(&join_chunks(&chunks)),
    })
}

/// `.TH` with every argument quoted: the date is empty, and an empty argument left unquoted
/// (as `clap_mangen` writes it) would shift the source and the manual's name into its place.
fn title_line(path: &[&str]) -> String {
    format!(
        ".TH {} 1 \"\" \"aidlc {}\" \"aidlc manual\"\n",
        page_name(path),
        env!("CARGO_PKG_VERSION")
    )
}

/// The chunks as one document: each renderer's chunk starts with the same preamble (the
/// apostrophe string, which the page needs once, first); the title line has none.
fn join_chunks(chunks: &[String]) -> String {
    let preamble = Roff::new().render();
    let mut page = preamble.clone();
    for chunk in chunks {
        page.push_str(chunk.strip_prefix(&preamble).unwrap_or(chunk));
    }
    page
}

/// The help text's Markdown code spans (`` `aidlc compile` ``) set in bold. A text line with
/// an odd number of backticks has no spans to pair: its backticks are dropped.
fn bold_code_spans(roff: &str) -> String {
    map_text_lines(roff, |line| {
        let pieces: Vec<&str> = line.split('`').collect();
        if pieces.len().is_multiple_of(2) {
            return pieces.concat();
        }
        let mut out = String::with_capacity(line.len() + pieces.len() * 3);
        for (index, piece) in pieces.iter().enumerate() {
            if index % 2 == 1 {
                let _ = write!(out, "\\fB{piece}\\fR");
            } else {
                out.push_str(piece);
            }
        }
        out
    })
}

/// The help text without its Markdown code marks (the NAME line is read by `whatis`, plain).
fn without_code_marks(roff: &str) -> String {
    map_text_lines(roff, |line| line.replace('`', ""))
}

fn map_text_lines(roff: &str, change: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(roff.len());
    for line in roff.split_inclusive('\n') {
        let (text, end) = line
            .strip_suffix('\n')
            .map_or((line, ""), |text| (text, "\n"));
        // A control line (a request or macro) holds no help text.
        if text.starts_with('.') || text.starts_with('\'') {
            out.push_str(text);
        } else {
            out.push_str(&change(text));
        }
        out.push_str(end);
    }
    out
}

/// Every character outside ASCII as groff's `\[uXXXX]`, so that groff reads the page as it is.
fn ascii_roff(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for character in roff.chars() {
        if character.is_ascii() {
            out.push(character);
        } else {
            let _ = write!(out, "\\[u{:04X}]", u32::from(character));
        }
    }
    out
}

fn exit_status_section(path: &[&str], command: &clap::Command, statuses: &[Status]) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    if path.is_empty() {
        roff.text([roman(
            "Each command's page lists the statuses it uses, from these:",
        )]);
    } else if visible_subcommands(command).next().is_some() {
        roff.text([roman(
            "The exit status of the subcommand run (see its page); without one:",
        )]);
    }
    for (code, meaning) in statuses {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(*meaning)]);
    }
    if !path.is_empty() {
        roff.control("PP", []);
        roff.text([roman(COMMON_STATUSES)]);
    }
    roff
}

/// What every command shares, said under its own statuses.
const COMMON_STATUSES: &str = "Every command also exits 2 on a usage error (an unknown option, a missing or malformed value) and when its standard output cannot be written, and 101 on an internal error (a bug: aidlc says how to report it).";

fn environment_section(path: &[&str]) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["ENVIRONMENT"]);
    if !path.is_empty() {
        roff.text([roman(
            "The variables this command reads; aidlc(1) lists every variable aidlc reads.",
        )]);
    }
    for variable in ENVIRONMENT
        .iter()
        .filter(|variable| variable.concerns(path))
    {
        roff.control("TP", []);
        roff.text([bold(variable.name)]);
        roff.text([roman(variable.meaning)]);
    }
    roff
}

/// The top-level page and the parent command's.
fn see_also_section(path: &[&str]) -> Roff {
    let mut pages = vec!["aidlc(1)".to_owned()];
    if path.len() > 1 {
        pages.push(format!("{}(1)", page_name(&path[..path.len() - 1])));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(pages.join(", "))]);
    roff
}

/// An environment variable the binary reads, what it does, and which commands read it.
pub struct EnvironmentVariable {
    pub name: &'static str,
    pub meaning: &'static str,
    /// The commands that read it, as their words (`"gate check"`); `"*"`: every command. A
    /// group's page (`engine`) lists what any of its subcommands reads.
    pub read_by: &'static [&'static str],
}

impl EnvironmentVariable {
    fn concerns(&self, path: &[&str]) -> bool {
        path.is_empty()
            || self.read_by.iter().any(|command| {
                let words: Vec<&str> = command.split_whitespace().collect();
                *command == "*" || path.starts_with(&words) || words.starts_with(path)
            })
    }
}

/// The commands that take `--project-dir` and read the project's layout.
const PROJECT_COMMANDS: &[&str] = &[
    "compile",
    "lsp",
    "graph",
    "doctor",
    "sensors",
    "hook install",
    "engine",
    "gate check",
];
/// The commands that fire sensors.
const FIRING_COMMANDS: &[&str] = &[
    "engine sensor fire",
    "engine hook run-sensors",
    "engine gate",
    "gate check",
];
/// The commands that take the audit lock (to write the ledger or the outputs under it).
const LOCKING_COMMANDS: &[&str] = &["compile", "doctor", "engine", "gate check"];

/// Every environment variable `aidlc` reads (a test checks `src/` against this list), then the
/// colour variables its terminal library reads for it.
pub const ENVIRONMENT: &[EnvironmentVariable] = &[
    EnvironmentVariable {
        name: "AIDLC_PROJECT_DIR",
        meaning: "The project folder, when `--project-dir` is not given (relative paths are taken from the working folder). Without it, `CLAUDE_PROJECT_DIR`, then the nearest ancestor of the working folder that holds a harness folder. A shipped sensor run as a worker (`engine sensor-<id>`) reads it too.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "CLAUDE_PROJECT_DIR",
        meaning: "The project folder when neither `--project-dir` nor `AIDLC_PROJECT_DIR` is given (Claude Code sets it for its hooks).",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_SENSORS_DIR",
        meaning: "The sensor manifests' folder, instead of `<harness>/sensors` (relative to the project folder).",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_STAGES_DIR",
        meaning: "The stage files' folder, instead of `<harness>/aidlc-common/stages`.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_AGENTS_DIR",
        meaning: "The agents' folder, instead of `<harness>/agents`.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_SCOPES_DIR",
        meaning: "The scopes' folder, instead of `<harness>/scopes`.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_RULES_DIR",
        meaning: "The rule files' folder, instead of `aidlc/spaces/default/memory`.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_STAGE_GRAPH",
        meaning: "The stage graph's file, instead of `<harness>/tools/data/stage-graph.json`.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_SCOPE_GRID",
        meaning: "The scope grid's file, instead of `<harness>/tools/data/scope-grid.json`.",
        read_by: PROJECT_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_DISABLE_SENSORS",
        meaning: "`1`: the sensors are switched off for this process, as a state's `Sensors: off` switches them off for its intent: the write hook and the gate's sensor step fire nothing, and `gate check` reports that it checked nothing.",
        read_by: &["engine hook run-sensors", "engine gate", "gate check"],
    },
    EnvironmentVariable {
        name: "AIDLC_SENSOR_TIMEOUT_MS",
        meaning: "The write hook's allowance for its whole run, in milliseconds; before it, `sensorTimeoutMs` in `<harness>/settings.json`, then in `~/<harness>/settings.json`; else 90 s on a 2.5 or 2.6 install and 30 minutes otherwise. A fire it cuts short is recorded as a drop, never as a pass.",
        read_by: &["engine hook run-sensors"],
    },
    EnvironmentVariable {
        name: "USER_PROMPT",
        meaning: "Kiro IDE 0.12's hook payload, read before stdin (whose end that IDE never sends) by the write hook and the human-turn hook run with `--harness kiro-ide` or on a Kiro IDE install.",
        read_by: &["engine hook run-sensors", "engine hook record-human-turn"],
    },
    EnvironmentVariable {
        name: "AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS",
        meaning: "A cap on each gate fire's dispatch, in milliseconds (unset: none); a fire it cuts short is not evaluated. A value that is not a positive whole number is an error (exit 2).",
        read_by: &["engine gate", "gate check"],
    },
    EnvironmentVariable {
        name: "AIDLC_LOCK_STALE_MS",
        meaning: "How old the audit lock folder must be before it is taken as stale and removed, in milliseconds (unset or empty: 10 minutes); anything but a whole number above zero is an error.",
        read_by: LOCKING_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_TEMPLATES_DIR",
        meaning: "The team's templates folder, given to a sensor that takes `--templates-dir` (default: the active space's `memory/templates`).",
        read_by: FIRING_COMMANDS,
    },
    EnvironmentVariable {
        name: "AIDLC_FRAMEWORK_TEMPLATES_DIR",
        meaning: "The framework's templates folder, given to a sensor that takes `--framework-templates-dir` (default: `<harness>/tools/data/templates`).",
        read_by: FIRING_COMMANDS,
    },
    EnvironmentVariable {
        name: "HOME",
        meaning: "Its `<harness>/settings.json` gives the write hook's allowance (`sensorTimeoutMs`) when neither `AIDLC_SENSOR_TIMEOUT_MS` nor the project's settings file does.",
        read_by: &["engine hook run-sensors"],
    },
    EnvironmentVariable {
        name: "PATH",
        meaning: "Where the linter and type-check sensors and `doctor` look for eslint, Biome and tsc when the project's `node_modules/.bin` has none, and where a custom sensor's command is found.",
        read_by: &["doctor", "engine", "gate check"],
    },
    EnvironmentVariable {
        name: "GITHUB_WORKSPACE",
        meaning: "The repository's root in GitHub Actions: paths in annotations and reports are relative to it when it holds the project.",
        read_by: &["compile", "gate"],
    },
    EnvironmentVariable {
        name: "GITHUB_STEP_SUMMARY",
        meaning: "With `--format github`, the file the Markdown summary is appended to.",
        read_by: &["gate"],
    },
    EnvironmentVariable {
        name: "GITHUB_SERVER_URL",
        meaning: "With `GITHUB_REPOSITORY` and `GITHUB_SHA`: a SARIF rule's help link points at its manifest at the commit checked (`<server>/<repository>/blob/<sha>/`).",
        read_by: &["gate"],
    },
    EnvironmentVariable {
        name: "GITHUB_REPOSITORY",
        meaning: "See `GITHUB_SERVER_URL`.",
        read_by: &["gate"],
    },
    EnvironmentVariable {
        name: "GITHUB_SHA",
        meaning: "See `GITHUB_SERVER_URL`.",
        read_by: &["gate"],
    },
    EnvironmentVariable {
        name: "AIDLC_HARNESS_DIR",
        meaning: "The harness folder `aidlc plugin` composes into (`.claude`, `.codex`, `.kiro`, …), as a plugin's `SessionStart` hook sets it; else the harness found as `compile` finds it.",
        read_by: &["plugin"],
    },
    EnvironmentVariable {
        name: "CLAUDE_PLUGIN_ROOT",
        meaning: "A plugin root `aidlc plugin sync` composes besides the recorded plugins (Claude Code sets it for a plugin's hooks); `PLUGIN_ROOT` and `AIDLC_PLUGIN_ROOT` are read too, each root once.",
        read_by: &["plugin sync"],
    },
    EnvironmentVariable {
        name: "PLUGIN_ROOT",
        meaning: "See `CLAUDE_PLUGIN_ROOT`.",
        read_by: &["plugin sync"],
    },
    EnvironmentVariable {
        name: "AIDLC_PLUGIN_ROOT",
        meaning: "See `CLAUDE_PLUGIN_ROOT`.",
        read_by: &["plugin sync"],
    },
    EnvironmentVariable {
        name: "AIDLC_TEST_PLUGIN_PAUSE_MS",
        meaning: "For the test suite only: `aidlc plugin` pauses this many milliseconds after each change of its transaction, so that a test can kill it in the middle.",
        read_by: &["plugin"],
    },
    EnvironmentVariable {
        name: "AIDLC_WORKSPACE_LOCK_OWNER_PID",
        meaning: "Set by a process that holds the audit lock and runs the compile inside its own transaction (the reference's `select-plugins`): the compile writes under that lock when the lock's owner stamp records this pid and that process is alive, and otherwise takes the lock as usual.",
        read_by: &["compile", "plugin"],
    },
    EnvironmentVariable {
        name: "COLUMNS",
        meaning: "The width of `gate check`'s progress line (default 80, at least 20).",
        read_by: &["gate check"],
    },
    EnvironmentVariable {
        name: "COMPUTERNAME",
        meaning: "Off Unix only: the host name in the audit shard's file name (`HOSTNAME` when it is unset); on Unix the host name comes from uname(2).",
        read_by: LOCKING_COMMANDS,
    },
    EnvironmentVariable {
        name: "HOSTNAME",
        meaning: "Off Unix only: the host name when `COMPUTERNAME` is unset.",
        read_by: LOCKING_COMMANDS,
    },
    EnvironmentVariable {
        name: "FORCE_COLOR",
        meaning: "Set, and neither empty nor `0` nor `false`: colour under `--color auto` even when the output is not a terminal (as `CLICOLOR_FORCE`).",
        read_by: &["*"],
    },
    EnvironmentVariable {
        name: "NO_COLOR",
        meaning: "Set and not empty: no colour under `--color auto`.",
        read_by: &["*"],
    },
    EnvironmentVariable {
        name: "CLICOLOR_FORCE",
        meaning: "Set and not empty: colour under `--color auto` even when the output is not a terminal.",
        read_by: &["*"],
    },
    EnvironmentVariable {
        name: "CLICOLOR",
        meaning: "`0`: no colour under `--color auto`; another value: colour on a terminal whatever `TERM` says.",
        read_by: &["*"],
    },
    EnvironmentVariable {
        name: "TERM",
        meaning: "`dumb`, or unset: no colour on a terminal under `--color auto` (unless `CLICOLOR` or `CI` is set).",
        read_by: &["*"],
    },
    EnvironmentVariable {
        name: "CI",
        meaning: "Set: colour on a terminal under `--color auto` whatever `TERM` says.",
        read_by: &["*"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::exit_statuses::exit_status_help;

    #[test]
    fn code_spans_become_bold_and_control_lines_stay() {
        let roff = ".TP\nRun `aidlc compile` and `git add`\n.SH NAME\none ` left\n";
        assert_eq!(
            bold_code_spans(roff),
            ".TP\nRun \\fBaidlc compile\\fR and \\fBgit add\\fR\n.SH NAME\none  left\n"
        );
        assert_eq!(without_code_marks("a `b` c\n"), "a b c\n");
    }

    #[test]
    fn characters_outside_ascii_become_groff_escapes() {
        assert_eq!(
            ascii_roff("\u{2713} pass, \u{2192}"),
            "\\[u2713] pass, \\[u2192]"
        );
    }

    #[test]
    fn the_help_lines_wrap_under_their_code() {
        let text = exit_status_help(&["lsp"], false, 40).unwrap();
        for line in text.lines() {
            assert!(line.len() <= 40, "{line:?}");
        }
        assert!(
            text.starts_with("Exit status:\n  0    the editor sent"),
            "{text}"
        );
    }

    #[test]
    fn a_variable_read_by_a_subcommand_is_on_its_group_s_page_and_its_own() {
        let hook_allowance = ENVIRONMENT
            .iter()
            .find(|variable| variable.name == "AIDLC_SENSOR_TIMEOUT_MS")
            .unwrap();
        assert!(hook_allowance.concerns(&[]));
        assert!(hook_allowance.concerns(&["engine"]));
        assert!(hook_allowance.concerns(&["engine", "hook", "run-sensors"]));
        assert!(!hook_allowance.concerns(&["engine", "hook", "record-human-turn"]));
        assert!(!hook_allowance.concerns(&["compile"]));
    }
}
