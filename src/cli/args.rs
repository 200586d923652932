//! Arguments as the user typed them (clap derive).

use camino::Utf8PathBuf;
use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};

use crate::graph_picture::PictureFormat;
use crate::harness::Harness;
use crate::report::ReportFormat;
use crate::runtime::gate::report::FireOnFilter;
use crate::schema::SchemaKind;

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
    max_term_width = HELP_WIDTH
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour the output: `auto` (a terminal, unless `NO_COLOR`; `CLICOLOR_FORCE` or
    /// `FORCE_COLOR` force it; `TERM=dumb` and `CLICOLOR=0` turn it off), `always` or `never`.
    #[arg(long, value_enum, global = true, default_value_t = When::Auto, value_name = "WHEN")]
    pub color: When,
}

/// The command line `aidlc` parses: [`Cli`]'s definition, with what no attribute can say.
/// The global `--color` is described in full once, on `aidlc --help` and aidlc(1); every
/// subcommand shows it as one line that points there (the value counts wherever it is given).
/// And each command's `--help` ends with its exit statuses, from the table the manual pages
/// read (`exit_statuses::exit_statuses`).
pub fn command() -> clap::Command {
    let root = Cli::command();
    let Some(color) = root
        .get_arguments()
        .find(|arg| arg.get_id() == "color")
        .cloned()
    else {
        return root;
    };
    let one_line = color
        .global(false)
        .help("When to colour the output: auto, always or never (see `aidlc --help`)")
        .long_help(None)
        .hide_default_value(true)
        .hide_possible_values(true);
    with_help_additions(root, &mut Vec::new(), &one_line)
}

/// [`command`]'s additions to `command` (at `path`) and to each of its subcommands.
fn with_help_additions(
    command: clap::Command,
    path: &mut Vec<String>,
    color: &clap::Arg,
) -> clap::Command {
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    let is_group = command.get_subcommands().next().is_some();
    let mut command = match super::exit_statuses::exit_status_help(&words, is_group, HELP_WIDTH) {
        Some(text) => command.after_long_help(text),
        None => command,
    };
    if !path.is_empty() {
        command = command.arg(color.clone());
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    for name in names {
        path.push(name.clone());
        command = command.mut_subcommand(&name, |sub| with_help_additions(sub, path, color));
        path.pop();
    }
    command
}

/// The widest the help is drawn (`max_term_width`).
const HELP_WIDTH: usize = 100;

/// `--color` and `--progress`.
//
// No doc comments on the variants: clap would show them as the values' help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum When {
    #[default]
    Auto,
    Always,
    Never,
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
    /// is written when there is any error.
    Compile(CompileArgs),
    /// The engine's sensor commands: the dispatcher, the worker protocol, the write hook, intent
    /// records and the gate's sensor step.
    ///
    /// `aidlc engine sensor-<id> --stage S --output-path P` (or `--file-path P`) runs one
    /// shipped sensor as a worker process, the protocol the dispatcher speaks: it prints its one
    /// JSON verdict line and exits 0 whatever the verdict, 127 (with the line) when the
    /// sensor's tool is not installed, 1 on a usage error, and 2 when the check could not run
    /// or the id is not a shipped sensor.
    #[command(subcommand)]
    Engine(EngineCommand),
    /// Gate checks for CI.
    #[command(subcommand)]
    Gate(GateCommand),
    /// A language server for the project's harness files, on stdin and stdout.
    ///
    /// Start it from an editor's LSP client (VS Code, Neovim, Helix, Zed) for the Markdown
    /// files under the harness folder: the compile's diagnostics as you type (the editor's
    /// unsaved text overlays the disk), go to definition, find references, hover, completion
    /// and quick fixes. Without `--project-dir` and the environment variables, the project is
    /// searched upwards from the editor's workspace folder, then from the working folder. It
    /// writes nothing to disk; `aidlc compile` still writes the outputs.
    Lsp(ProjectArgs),
    /// Register aidlc's hooks with the agent harness (`hook install`).
    #[command(subcommand)]
    Hook(HookSettingsCommand),
    /// Compose plugins into the install: `add`, `remove`, `list`, `sync`.
    ///
    /// A plugin adds stages, sensors (with their workers), agents, scopes and knowledge, and
    /// additive contributions to core stages. Composing copies its files into the harness
    /// folder, merges its contributions, compiles, and records what it did in
    /// `aidlc.lock.json`, in one transaction: a refused plugin or a failed compile writes
    /// nothing, and a killed run is rolled back by the next `aidlc plugin add|remove|sync`.
    /// Exit status: 0 success, 1 the composed install does not compile, 2 a plugin is refused
    /// or the environment fails.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Check the installation: the compile and graph drift, dead bindings, skipped files, rule
    /// pairings, the hooks registered with the harness, the Node tools, the ledger. Exits 1
    /// when a row fails. Writes nothing.
    Doctor(DoctorArgs),
    /// List the sensors with the plugin each comes from, or describe one (`aidlc sensors ID`).
    ///
    /// Shows what `engine sensor list` and `engine sensor describe` show (the manifests as they
    /// are on disk now) plus each sensor's plugin: the plugin `aidlc.lock.json` records as the
    /// owner of its manifest, or `aidlc` for the core framework's. `--format json` prints an
    /// array of sensors (one object with an ID), each with a `plugin` key.
    Sensors(SensorsArgs),
    /// Draw the stage graph: Mermaid (default), Graphviz dot, or JSON.
    ///
    /// Phases are clusters, arrows go from each required stage to the stage that requires it
    /// (`requires_stage`), conditional stages are dashed, and `--sensors` lists each stage's
    /// sensors with the blocking ones marked. Reads `<harness>/tools/data/stage-graph.json`
    /// strictly when the last compile's record proves it up to date; otherwise (missing, stale,
    /// or made by another tool) it compiles the sources in memory and draws that, writing
    /// nothing (run `aidlc compile` to update the file).
    Graph(GraphArgs),
    /// Print a JSON Schema (draft 2020-12) for editors and tools.
    ///
    /// `manifest`: a sensor manifest's frontmatter; `stage`: a stage file's frontmatter (both
    /// generated from the types the compile's parser fills, with its field documentation);
    /// `gate-report`: the output of `gate check --format json`.
    Schema(SchemaArgs),
    /// Print a shell completion script: bash, zsh, fish, powershell or elvish.
    ///
    /// For example `aidlc completions zsh > ~/.zfunc/_aidlc`, or
    /// `aidlc completions bash > ~/.local/share/bash-completion/completions/aidlc`.
    Completions(CompletionsArgs),
    /// Print a manual page (roff), e.g. `aidlc man | man -l -`; `--dir` writes them all.
    ///
    /// One page per command: aidlc(1), and one for each subcommand (`gate check` has
    /// aidlc-gate-check(1)), each with its options, exit statuses and the environment variables
    /// it reads. `aidlc man gate check | man -l -` shows one; `aidlc man --dir
    /// ~/.local/share/man/man1` installs them all for `man aidlc-gate-check`.
    Man(ManArgs),
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// The command whose page to print, as its words (`gate check`). Default: aidlc(1).
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Write every page (`aidlc.1`, `aidlc-compile.1`, `aidlc-gate-check.1`, …) into DIR,
    /// created if missing, instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<Utf8PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// `human` (a row per line: ✓ pass, ! warn, ✗ fail, with the fix) or `json` (one document).
    #[arg(long, value_enum, default_value_t = HumanOrJson::Human)]
    pub format: HumanOrJson,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// `doctor --format` and `sensors --format`.
//
// No doc comments on the variants: clap would show them as the values' help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HumanOrJson {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct SensorsArgs {
    /// Describe this sensor only (its `key: value` lines, then `plugin:`).
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// `human` (a line per sensor: id, kind, plugin and description, tab-separated) or `json`.
    #[arg(long, value_enum, default_value_t = HumanOrJson::Human)]
    pub format: HumanOrJson,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Subcommand)]
pub enum HookSettingsCommand {
    /// Register the write hook (`engine hook run-sensors`), the human-turn hook
    /// (`engine hook record-human-turn`; on Claude Code also for answers picked in the question
    /// widget) and the pre-tool guard (`engine hook guard`, which refuses an agent's tool call
    /// that writes the audit or runs the human's commands) where the project's harness reads
    /// its hooks: Claude
    /// Code's `.claude/settings.json`, Codex's `.codex/hooks.json`, the Kiro CLI conductor agent
    /// `.kiro/agents/aidlc.json`, Kiro IDE's `.kiro/hooks/` files, opencode's
    /// `.opencode/plugin/aidlc-engine.ts`. The reference's own entries for the same events are
    /// replaced in place. Keeps every other byte; a second run changes nothing; a malformed,
    /// read-only or linked file is refused, never overwritten.
    Install(HookInstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct HookInstallArgs {
    /// Print the file as it would be written (on stdout) and the changes (on stderr); write
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove aidlc's hooks instead (the reference's entries are not restored).
    #[arg(long)]
    pub uninstall: bool,
    /// How the hooks call aidlc: `aidlc` (on the PATH, e.g. `cargo install`), `npx aidlc` (a
    /// project-local npm install), or an absolute path.
    #[arg(long, value_name = "PROGRAM", default_value = crate::harness::install::DEFAULT_PROGRAM)]
    pub program: String,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// Output: `mermaid` (a flowchart GitHub renders), `dot` (for `dot -Tsvg`) or `json`.
    #[arg(long, value_enum, default_value_t = PictureFormat::Mermaid)]
    pub format: PictureFormat,
    /// Only this stage's neighbourhood: the stage, the stages it requires and the stages that
    /// require it (repeatable).
    #[arg(long = "stage", value_name = "SLUG")]
    pub stages: Vec<String>,
    /// List each stage's sensors (`id (fire_on)`, `, blocking` for blocking ones, whose stages
    /// get a red border).
    #[arg(long)]
    pub sensors: bool,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// Which document: `manifest`, `stage` or `gate-report`.
    #[arg(value_enum)]
    pub kind: SchemaKind,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Subcommand)]
pub enum GateCommand {
    /// Run the gate sensors of every stage over the existing deliverables of the active intent,
    /// and report each finding with its file (and line, where the sensor knows one).
    Check(GateCheckArgs),
    /// Join the JSON reports of the shards of one `gate check --shard K/N` matrix into one
    /// report, printed in any format, with the exit status the unsharded run would have had.
    ///
    /// Refuses reports of different checks, a missing or doubled shard, reports of another
    /// schema version, and any report that does not match the plan the project gives (its
    /// fires, their shards and severities, the plan id), naming the shard and the fire (exit 2).
    Merge(GateMergeArgs),
}

#[derive(Debug, clap::Args)]
pub struct GateMergeArgs {
    /// The shards' reports (`gate check --shard K/N --format json`), one per shard.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<Utf8PathBuf>,
    /// Output: `human`, `json`, `github`, `sarif`, `junit` or `gitlab`, as for `gate check`.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Also write the merged report in FORMAT to PATH (repeatable), as for `gate check`.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = parse_report_target)]
    pub reports: Vec<(ReportFormat, Utf8PathBuf)>,
    /// Also fail (exit 1) on findings of advisory sensors.
    #[arg(long)]
    pub strict: bool,
    /// Exit 0 when nothing was checked, instead of 2.
    #[arg(long)]
    pub allow_empty: bool,
    /// The project the shards checked (its graph and deliverables at the same commit): the plan
    /// is made again from it, and a report that does not match it is refused.
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// `FORMAT=PATH`, e.g. `sarif=gate.sarif`.
fn parse_report_target(text: &str) -> Result<(ReportFormat, Utf8PathBuf), String> {
    let (format, path) = text
        .split_once('=')
        .ok_or_else(|| format!("expected FORMAT=PATH, e.g. sarif=gate.sarif, got {text:?}"))?;
    let format = ReportFormat::from_str(format.trim(), true).map_err(|_| {
        let names: Vec<&str> = ReportFormat::all()
            .iter()
            .map(|known| known.name())
            .collect();
        let (last, others) = names.split_last().expect("at least one report format");
        format!(
            "unknown report format {format:?}: expected {} or {last}",
            others.join(", ")
        )
    })?;
    if path.trim().is_empty() {
        return Err(format!("no path after `=` in {text:?}"));
    }
    Ok((format, Utf8PathBuf::from(path)))
}

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is an independent command-line switch"
)]
pub struct GateCheckArgs {
    /// Only this stage (repeatable). Default: every stage of the graph.
    #[arg(long = "stage", value_name = "SLUG")]
    pub stages: Vec<String>,
    /// The intent record folder (or registry uuid or slug). Default: the active intent.
    #[arg(long, value_name = "NAME", conflicts_with = "all_intents")]
    pub intent: Option<String>,
    /// Check every intent record of the active space.
    #[arg(long)]
    pub all_intents: bool,
    /// Which bindings run: gate-fired (default), write-fired, or all.
    #[arg(long, value_enum, default_value_t = FireOnFilter::Gate)]
    pub fire_on: FireOnFilter,
    /// Worker threads. Default: the available cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=512))]
    pub jobs: Option<u16>,
    /// Run only shard K of N (1-based) of the (stage, deliverable) work, chosen by hash; the
    /// union of all N shards is the unsharded run.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Write nothing into the project: no audit rows, no detail files (hermetic CI).
    #[arg(long)]
    pub no_record: bool,
    /// Output: `human` (each finding with its source lines, then the summary), `json` (one
    /// document on stdout, what `gate merge` reads), `github` (annotations on stdout, and a
    /// Markdown summary appended to `$GITHUB_STEP_SUMMARY` when set), `sarif` (SARIF 2.1.0 for
    /// code scanning), `junit` (`JUnit` XML) or `gitlab` (GitLab Code Quality).
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Also write the report in FORMAT to PATH, atomically (repeatable), e.g. `--report
    /// sarif=gate.sarif --report junit=gate.xml`.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = parse_report_target)]
    pub reports: Vec<(ReportFormat, Utf8PathBuf)>,
    /// The progress line on stderr: `auto` (on a terminal, unless `--quiet`), `always` or
    /// `never`.
    #[arg(long, value_enum, default_value_t = When::Auto, value_name = "WHEN")]
    pub progress: When,
    /// Also fail (exit 1) on findings of advisory sensors.
    #[arg(long)]
    pub strict: bool,
    /// Exit 0 when nothing was checked (sensors off, no deliverable, no selected binding, or
    /// every fire unevaluated), instead of 2. For the rare pipeline that means to check nothing;
    /// a blocking binding the Sensors switch kept from running still exits 3.
    #[arg(long)]
    pub allow_empty: bool,
    /// Check against the compiled graph even when its sources no longer compile to it (a
    /// manifest or stage edited without `aidlc compile`), as long as no blocking binding differs
    /// and the sources compile; a stale graph is otherwise refused (exit 2) with or without it,
    /// and what drifted is named.
    #[arg(long)]
    pub allow_stale: bool,
    /// No progress line, even on a terminal.
    #[arg(long, short)]
    pub quiet: bool,
    /// A time limit for the whole check (`90s`, `10m`, `1h30m`): fires still running then are
    /// stopped and fires not started are not started; both are reported as not evaluated.
    /// Default: none. Each fire keeps its own cap (`timeout_seconds`), and
    /// `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS` (milliseconds, unset: none) caps each fire's
    /// dispatch.
    #[arg(long, value_name = "DURATION", value_parser = crate::runtime::dispatch::time_limit::parse_duration)]
    pub timeout: Option<std::time::Duration>,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// `K/N` with `1 <= K <= N`.
fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let (index, count) = text
        .split_once('/')
        .ok_or_else(|| format!("expected K/N, e.g. 2/8, got {text:?}"))?;
    let index: u64 = index
        .trim()
        .parse()
        .map_err(|_| format!("K in {text:?} is not a number"))?;
    let count: u64 = count
        .trim()
        .parse()
        .map_err(|_| format!("N in {text:?} is not a number"))?;
    if count == 0 || index == 0 || index > count {
        return Err(format!("need 1 <= K <= N, got {index}/{count}"));
    }
    Ok((index, count))
}

#[derive(Debug, Subcommand)]
pub enum EngineCommand {
    /// List, describe or fire sensors.
    #[command(subcommand)]
    Sensor(SensorCommand),
    /// Hooks for agent harnesses (Claude Code `PostToolUse` and friends).
    #[command(subcommand)]
    Hook(HookCommand),
    /// Intent records.
    #[command(subcommand)]
    Intent(IntentCommand),
    /// Record the conductor's interactions in the audit (the receipt a blocking-sensor override
    /// needs): the decision offered, then the human's answer.
    #[command(subcommand)]
    Log(LogCommand),
    /// The learning loop's engine steps (the gate ritual): `surface` a stage's memory.md as
    /// candidates, `persist` the conductor's picks.
    #[command(subcommand)]
    Learnings(LearningsCommand),
    /// The gate's sensor step, as the conductor calls it when a stage reaches its approval gate.
    #[command(subcommand)]
    Gate(EngineGateCommand),
    /// `sensor-<id> --stage S --output-path P` (or `--file-path P`): run one shipped sensor as
    /// a worker process and print its one JSON line (the worker protocol).
    #[command(external_subcommand)]
    Worker(Vec<String>),
}

#[derive(Debug, Subcommand)]
pub enum SensorCommand {
    /// Print `id<TAB>kind<TAB>description` for every sensor, sorted by id.
    List(ProjectArgs),
    /// Print one sensor's manifest as `key: value` lines.
    Describe(DescribeArgs),
    /// Fire one sensor on one file: pre-flight checks, the worker, two audit rows, a detail file
    /// on failure, and one JSON verdict line on stdout.
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

#[derive(Debug, Subcommand)]
pub enum EngineGateCommand {
    /// Open the approval gate of a stage of the active intent: fire its gate sensors on every
    /// existing deliverable, enforce the blocking ones, and append `STAGE_AWAITING_APPROVAL`.
    ///
    /// Prints one JSON reply on stdout (`narration` carries a sentence per check that still
    /// fails on the stage's outputs).
    ///
    /// Each fire keeps its own cap (`timeout_seconds`); `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS`
    /// (milliseconds; unset: none) also caps each fire's dispatch, and a fire it cuts short is
    /// not evaluated.
    ///
    /// With the Sensors switch off (`AIDLC_DISABLE_SENSORS=1`, or `- **Sensors**: off` in the
    /// state) nothing fires and each blocking gate binding refuses the gate until the override;
    /// a stale stage graph refuses the step (exit 2): run `aidlc compile`.
    Start(GateStartArgs),
    /// Re-enter the approval gate after revision work: the same sensor step as `start`, and a
    /// gate row with `Details: Re-entering gate after revision`.
    Revise(GateReviseArgs),
}

#[derive(Debug, clap::Args)]
pub struct GateStartArgs {
    /// The stage slug.
    pub slug: String,
    /// More deliverables, comma-separated: file names, or paths inside the stage's folders.
    #[arg(long, value_name = "CSV")]
    pub artifacts: Option<String>,
    /// A unit's own gate: only that unit's folders of a per-unit stage.
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    #[command(flatten)]
    pub override_args: GateOverrideArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct GateReviseArgs {
    /// The stage slug.
    pub slug: String,
    #[command(flatten)]
    pub override_args: GateOverrideArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct GateOverrideArgs {
    /// Open the gate despite blocking issues. Needs `--user-input "Override blocking sensors"`
    /// and a fresh receipt in the audit (the decision offered, a human turn, the exact answer);
    /// refused under Construction autonomy.
    #[arg(long)]
    pub override_blocking_sensors: bool,
    /// The human's exact choice, with `--override-blocking-sensors`.
    #[arg(long, value_name = "CHOICE", allow_hyphen_values = true)]
    pub user_input: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum LearningsCommand {
    /// Print the stage's memory.md entries as candidates (JSON), with `selections_file`: the
    /// path the conductor writes the picks to. Read-only.
    Surface(LearningsSurfaceArgs),
    /// Persist the picks in the selections file: learnings to
    /// aidlc/spaces/<space>/memory/{project,team}.md, sensors scaffolded and bound to their
    /// stage, `RULE_LEARNED` / `SENSOR_PROPOSED` in the audit. A replay changes nothing.
    Persist(LearningsPersistArgs),
}

#[derive(Debug, clap::Args)]
pub struct LearningsSurfaceArgs {
    /// The stage (the state's Current Stage).
    #[arg(long, value_name = "SLUG")]
    pub slug: String,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct LearningsPersistArgs {
    /// The stage the selections were surfaced for.
    #[arg(long, value_name = "SLUG")]
    pub slug: String,
    /// The selections file, at the path `surface` named (no other path is read).
    #[arg(long, value_name = "PATH")]
    pub selections_json: Utf8PathBuf,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// `DECISION_RECORDED`: the decision about to be offered, before the question is asked.
    /// Prints `{"emitted":"DECISION_RECORDED","stage":…}`.
    Decision(LogArgs<crate::runtime::receipts::DecisionRequest>),
    /// `QUESTION_ANSWERED`: the human's answer, refused unless a human turn was recorded since
    /// the last answer (and, for the override decision, unless it is one of the offered
    /// options). Prints `{"emitted":"QUESTION_ANSWERED","stage":…}`.
    Answer(LogArgs<crate::runtime::receipts::AnswerRequest>),
}

// `log decision` and `log answer`: the request, and the project. (No doc comment: clap would
// take it as the command's help.)
#[derive(Debug, clap::Args)]
pub struct LogArgs<Request: clap::Args> {
    #[command(flatten)]
    pub request: Request,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Subcommand)]
pub enum IntentCommand {
    /// Create an intent record `aidlc/spaces/<space>/intents/<YYMMDD>-<label>/` with its
    /// `aidlc-state.md`, append a `UUIDv7` row to `intents.json`, and make it the active intent.
    New(IntentNewArgs),
}

#[derive(Debug, clap::Args)]
pub struct IntentNewArgs {
    /// A kebab-case label, e.g. `checkout-flow` (at most 48 characters).
    pub label: String,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Read a hook payload (JSON) on stdin and fire the active stage's write-fired sensors
    /// whose `matches` glob matches each written file (Claude Code's `tool_input.file_path`;
    /// `--harness` names another harness's payload, which is otherwise told by its shape; Kiro
    /// IDE 0.12's comes in `USER_PROMPT`). Always exits 0 and prints nothing on stdout; writes
    /// that could not be checked are recorded in
    /// `<record>/.aidlc-hooks-health/run-sensors.drops` (`sensor-fire.drops` on a 2.5 install).
    ///
    /// The whole run has an allowance: `AIDLC_SENSOR_TIMEOUT_MS`, else `sensorTimeoutMs` in
    /// `<harness>/settings.json`, else in `~/<harness>/settings.json` (milliseconds), else 90 s
    /// on a 2.5 or 2.6 install and 30 minutes otherwise. A fire it cuts short is stopped and
    /// recorded as a drop, never as a pass.
    RunSensors(RunSensorsArgs),
    /// The prompt hook: record a `HUMAN_TURN` with its receipt (the prompt's digest, and where
    /// the prompt is: the session's transcript on Claude Code and Codex, the engine's copy
    /// elsewhere) in the active record's audit, and touch `<record>/.aidlc-human-turn`. Only the
    /// harness's real prompt payload is accepted (Claude Code, Codex: `hook_event_name`
    /// `UserPromptSubmit`, `session_id`, `prompt`, `transcript_path`; Kiro CLI:
    /// `userPromptSubmit`, `prompt`; opencode: the engine's plugin's `chat.message`; Kiro IDE:
    /// `USER_PROMPT`); anything else exits 2 naming what it lacks. Writes nothing (exit 0) when
    /// no workflow is active, or for an opencode prompt that is not the human's.
    RecordHumanTurn(ProjectArgs),
    /// The pre-tool guard: read a `PreToolUse` payload on stdin and refuse an agent's tool call
    /// that writes into an audit folder, the hooks-health folder, the engine's record folder or
    /// the session's transcript, or that runs `record-human-turn`, `engine log answer` or
    /// `--override-blocking-sensors` (those are the human's, from their own terminal). Claude
    /// Code is told with its deny decision on stdout (exit 0); other harnesses with exit 2 and
    /// the reason on stderr. An allowed call exits 0 and prints nothing; a payload that cannot
    /// be read is refused (exit 2, the reason on stderr). Reads nothing but its payload.
    Guard(ProjectArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunSensorsArgs {
    /// The reference's artifact audit hook (e.g. `.codex/hooks/aidlc-audit-logger.ts`) to run
    /// with bun on each written file first, as the reference's adapter did; `hook install`
    /// adds it where aidlc's hook takes over an adapter's write entry.
    #[arg(long, value_name = "FILE")]
    pub audit_hook: Option<Utf8PathBuf>,
    #[command(flatten)]
    pub project: ProjectArgs,
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
    /// Also write an example intent (`<YYMMDD>-example-checkout`) with a few deliverables, some
    /// passing their checks and some not, so that a first `aidlc gate check` shows real output.
    #[arg(long)]
    pub example: bool,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ProjectArgs {
    /// The project folder. Default: `AIDLC_PROJECT_DIR`, else `CLAUDE_PROJECT_DIR`, else the
    /// nearest ancestor of the working folder that holds a harness folder.
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<Utf8PathBuf>,
    /// The harness: claude (.claude), codex (.codex), kiro (Kiro CLI, .kiro), kiro-ide (Kiro
    /// IDE, .kiro), cursor (.cursor) or opencode (.aidlc). Default: the one present, `.claude`
    /// when several are (a `.kiro` with Kiro IDE hook files is kiro-ide's for hooks); in a
    /// plugin's own tree, `.claude` for an authored tree, else its one host projection's.
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
    /// on stdout; with `--watch`, one event object per rebuild), `github` (workflow-command
    /// annotations on stdout) or `sarif` (one SARIF 2.1.0 log on stdout; not with `--watch`).
    /// With `--check`, drift is printed in the same format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Print nothing but diagnostics.
    #[arg(long, short)]
    pub quiet: bool,
    /// Write `stage-graph.json` in this version's shape: `2.5`, `2.6` or `gate` (the newest).
    ///
    /// By default an install keeps the shape its existing graph has (or, without one, the
    /// shape its reference tools in `<harness>/tools/aidlc-version.ts` write), so that its own
    /// `compile --check` and ours pass on the same bytes; a new project gets `gate`. The older
    /// shapes carry no `fire_on` or `default_severity`: every sensor is then write-fired and
    /// advisory, as the reference reads it.
    #[arg(long, value_name = "FORMAT")]
    pub graph_format: Option<crate::protocol::graph_format::GraphFormat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Github,
    Sarif,
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Compose plugins into the install: copy their stages, sensors (with their tools), agents,
    /// scopes and knowledge into the harness folder, merge their contributions into the core
    /// stages they enrich, and compile.
    ///
    /// SOURCE is a plugin folder (holding `.aidlc-plugin/plugin.json`, or a host projection's
    /// `.claude-plugin/plugin.json`) or a git URL with an optional `@REV` (a branch, tag or
    /// commit), cloned with `git`; a git plugin's tree is kept under `aidlc/plugins/<name>/`.
    /// A dependency that sits beside a plugin folder is added with it. What was composed is
    /// recorded in `aidlc.lock.json`. Nothing is written when a plugin is refused (exit 2) or
    /// the result does not compile (exit 1).
    Add(PluginAddArgs),
    /// Remove plugins: the install gets back, byte for byte, what it was without them.
    Remove(PluginRemoveArgs),
    /// List the composed plugins, whether `harness.json` enables each, where each came from,
    /// and the installed files that changed since they were composed.
    List(PluginListArgs),
    /// Compose again every plugin `aidlc.lock.json` records (reading path plugins from their
    /// folders), and each plugin root the host names in `CLAUDE_PLUGIN_ROOT`, `PLUGIN_ROOT` or
    /// `AIDLC_PLUGIN_ROOT` (what the plugins' `SessionStart` hook runs). A second sync changes
    /// nothing.
    Sync(ProjectArgs),
}

#[derive(Debug, clap::Args)]
pub struct PluginAddArgs {
    /// Plugin folders or git URLs (`URL[@REV]`).
    #[arg(required = true, value_name = "SOURCE")]
    pub sources: Vec<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct PluginRemoveArgs {
    /// The names of composed plugins.
    #[arg(required = true, value_name = "NAME")]
    pub names: Vec<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct PluginListArgs {
    /// `human` (a line per plugin) or `json` (one document on stdout).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[command(flatten)]
    pub project: ProjectArgs,
}
