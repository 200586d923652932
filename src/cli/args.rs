//! Arguments as the user typed them (clap derive).

use camino::Utf8PathBuf;
use clap::{Parser, Subcommand, ValueEnum};

use crate::discover::Harness;

/// A fast, strict engine for the AI-DLC sensor system.
///
/// `aidlc` compiles the sensor manifests and stage definitions of an installed AI-DLC project
/// into the stage graph (`<harness>/tools/data/stage-graph.json`) and the scope grid, byte for
/// byte what the reference implementation writes, and reports every problem with its file,
/// line and column.
#[derive(Debug, Parser)]
#[command(
    name = "aidlc",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write the built-in default AI-DLC framework into a project folder.
    ///
    /// Writes the six shipped sensor manifests, the 33 framework stages, their agents and
    /// scopes under the harness folder, and the rule files under
    /// `aidlc/spaces/default/memory/`. An existing file is never overwritten unless `--force`
    /// is given; files already identical are left alone.
    Init(InitArgs),
    /// Compile stage definitions and sensor manifests into the stage graph.
    ///
    /// Reads `<harness>/sensors/aidlc-*.md`, `<harness>/aidlc-common/stages/<phase>/*.md`,
    /// `<harness>/agents/*.md`, `<harness>/scopes/*.md` and the rule files, checks them, and
    /// writes `<harness>/tools/data/stage-graph.json` and `scope-grid.json` atomically. Nothing
    /// is written when there is any error. Exit status: 0 success, 1 compile errors (or drift
    /// with `--check`), 2 usage or environment error.
    Compile(CompileArgs),
    /// The engine's sensor commands: the dispatcher, the worker protocol and the write hook.
    Engine(EngineArgs),
}

#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    pub command: EngineCommand,
}

#[derive(Debug, Subcommand)]
pub enum EngineCommand {
    /// List, describe or fire sensors.
    Sensor(SensorArgs),
    /// Hooks for agent harnesses (Claude Code `PostToolUse` and friends).
    Hook(HookArgs),
    /// `sensor-<id> --stage S --output-path P` (or `--file-path P`): run one shipped sensor as
    /// a worker process and print its one JSON line (the worker protocol).
    #[command(external_subcommand)]
    Worker(Vec<String>),
}

#[derive(Debug, clap::Args)]
pub struct SensorArgs {
    #[command(subcommand)]
    pub command: SensorCommand,
}

#[derive(Debug, Subcommand)]
pub enum SensorCommand {
    /// Print `id<TAB>kind<TAB>description` for every sensor, sorted by id.
    List(ProjectArgs),
    /// Print one sensor's manifest as `key: value` lines.
    Describe(DescribeArgs),
    /// Fire one sensor on one file: pre-flight checks, the worker, two audit rows, a detail file
    /// on failure, and one JSON verdict line on stdout.
    ///
    /// Exit status: 0 once the verdict is recorded (whatever it is), 2 when a pre-flight check
    /// refuses the fire (nothing is recorded then).
    Fire(FireArgs),
}

#[derive(Debug, clap::Args)]
pub struct DescribeArgs {
    /// The sensor id, e.g. `linter`.
    pub id: String,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct FireArgs {
    /// The sensor id, e.g. `required-sections`.
    pub id: String,
    /// The stage slug the output belongs to.
    #[arg(long, value_name = "SLUG")]
    pub stage: String,
    /// The file to check (relative paths are taken from the working folder).
    #[arg(long, value_name = "PATH")]
    pub output_path: Utf8PathBuf,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Read a hook payload (JSON) on stdin and fire the active stage's write-fired sensors
    /// whose `matches` glob matches `tool_input.file_path`. Always exits 0; failures are
    /// recorded in `<record>/.aidlc-engine/hooks-health/run-sensors.drops`.
    RunSensors(ProjectArgs),
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The project folder to write into (created if missing).
    #[arg(default_value = ".")]
    pub dir: Utf8PathBuf,
    /// Which harness folder to install into.
    #[arg(long, value_enum, default_value_t = Harness::Claude)]
    pub harness: Harness,
    /// Overwrite files that differ from the built-in framework.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, clap::Args)]
pub struct ProjectArgs {
    /// The project folder. Default: `AIDLC_PROJECT_DIR`, else `CLAUDE_PROJECT_DIR`, else the
    /// nearest ancestor of the working folder that holds a harness folder.
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<Utf8PathBuf>,
    /// The harness folder to read: claude (.claude), codex (.codex), kiro (.kiro),
    /// cursor (.cursor) or opencode (.aidlc). Default: the one present, `.claude` when several are.
    #[arg(long, value_enum)]
    pub harness: Option<Harness>,
}

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is an independent command-line switch"
)]
pub struct CompileArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Write nothing; exit 1 if either output file would change (a CI drift guard).
    #[arg(long, conflicts_with = "watch")]
    pub check: bool,
    /// Compile even when nothing changed since the last compile.
    ///
    /// Without it, `compile` first compares every input's size and times (and, where those
    /// moved, its BLAKE3 hash) with the record the last successful compile left beside the
    /// outputs (`.aidlc-compile-fingerprint`), and stops with "up to date" when nothing
    /// changed.
    #[arg(long)]
    pub force: bool,
    /// Compile, then keep watching the input folders and recompile on every change until
    /// Ctrl-C (exit 130). Only the queries a change affects re-run; the outputs are written
    /// only when their bytes change, and never while the inputs have errors.
    #[arg(long)]
    pub watch: bool,
    /// With `--watch`: how long the files must be quiet before a rebuild, in milliseconds.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 50,
        requires = "watch",
        value_parser = clap::value_parser!(u64).range(1..=60_000)
    )]
    pub debounce_ms: u64,
    /// How to print diagnostics: `human` (with source snippets), `json` (one object per line
    /// on stdout; with `--watch`, one event object per rebuild) or `github` (workflow-command
    /// annotations on stdout).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Print nothing but diagnostics.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Github,
}
