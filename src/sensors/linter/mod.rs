//! The shipped `linter` sensor (upstream §6.5, D8): the project's own linter on the one fired
//! file. eslint by default; Biome when the project is configured for Biome instead.
//!
//! Where things are looked for. The lint root is the file's nearest folder holding a
//! `package.json`; eslint and Biome run there. Every upward walk stops at the project folder
//! when the file is inside it (outside it, at the filesystem root).
//!
//! - Which linter: Biome when a `biome.json` or `biome.jsonc` sits between the file and the
//!   project folder and no eslint configuration does (`eslint.config.*`, `.eslintrc*`, or an
//!   `eslintConfig` key in a `package.json`); eslint otherwise, which then decides itself
//!   whether it has a configuration.
//! - Which eslint: the first `node_modules/.bin/eslint` from the lint root up to the project
//!   folder (a workspace hoists it to the root), else the first `eslint` on `PATH` whose
//!   `--version` says 9 or newer. An older `eslint` on `PATH` (a distro package) cannot read
//!   flat config and is skipped (failure-modes F14).
//! - Which Biome: the first `node_modules/.bin/biome` the same way, else `biome` on `PATH`.
//!
//! Outcomes (the worker protocol of `super::WorkerOutcome`):
//!
//! - A verdict: `{pass, errorCount, warningCount, violations, findings_count}` in that order
//!   (the reference's keys), each violation `{file, line, column, rule, severity, message}`.
//!   `pass` is `errorCount == 0`; warnings never fail; `findings_count` is the error count.
//! - Tool unavailable (exit 127), `{reason, message}`: `eslint-unavailable`, `no-eslint-config`,
//!   `biome-unavailable`, or `file-ignored` (the linter's configuration ignores the file or
//!   covers no file of its kind, so nothing was linted).
//! - Script error (exit 2): `config-parse-error: <line>` when a configuration exists but does
//!   not load (failure-modes V2), `eslint-bad-output: …` / `biome-bad-output: …`,
//!   `eslint-failed: …` / `biome-failed: …`, and `timeout: …` when the budget ran out.
//! - Usage error (exit 1): `unknown flag: <flag>`, `missing required flag: --stage`,
//!   `missing value for <flag>`, `file-path not found: <path>`, and the like.
//!
//! Invariants:
//!
//! - Nothing that did not lint the file reads as a pass: a missing tool or configuration is
//!   tool-unavailable, a configuration that does not load or output that cannot be read is a
//!   script error, and a file the configuration ignores is tool-unavailable.
//! - Every tool run ends within the worker's budget (`WorkerContext::timeout`): each run gets
//!   what is left of it, and its whole process group is stopped at the deadline.
//!
//! What both code sensors need (the fired file, upward walks, finding a Node tool, running it
//! within the budget) is in `super::node_tool`, shared with `type_check`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value, json};

use crate::dispatch::process::WorkerRun;
use crate::sensors::descriptor::{GateUnit, PathFlag, ShippedSensor};
use crate::sensors::finding::{self, Finding};
use crate::sensors::node_tool::{
    TOOL_STDOUT_CAP_BYTES, ToolBudget, ToolInvocation, absolute_lexical, describe_folders_upward,
    executables_on_search_path, folders_upward, local_node_tool, most_telling_line,
    parse_file_path_flags, resolve_fired_file, run_tool_within, tool_unavailable,
};
use crate::sensors::protocol::{WorkerContext, WorkerOutcome};

/// The oldest eslint accepted from `PATH`: 9 made flat config the default.
const OLDEST_PATH_ESLINT_MAJOR: u32 = 9;

/// The longest a version probe may run (the seed: five minutes per eslint subprocess).
const PROBE_STEP_CAP: Duration = Duration::from_secs(5 * 60);

/// The longest the lint itself may run.
const LINT_STEP_CAP: Duration = Duration::from_secs(5 * 60);

/// The file names of an eslint configuration, flat and legacy.
const ESLINT_CONFIG_FILE_NAMES: [&str; 12] = [
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc.json",
    ".eslintrc",
];

/// The file names of a Biome configuration.
const BIOME_CONFIG_FILE_NAMES: [&str; 2] = ["biome.json", "biome.jsonc"];

/// A `package.json` larger than this is not read for an `eslintConfig` key.
const LARGEST_PACKAGE_JSON_BYTES: u64 = 4 * 1024 * 1024;

/// The `linter` sensor: one code file per fire.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "linter",
    check: run,
    extra_flags: &[],
    default_path_flag: PathFlag::FilePath,
    gate_unit: GateUnit::Deliverable,
    findings,
};

/// How the gate report reads a failure: each lint violation at its line (eslint's numeric warnings left out).
fn findings(deliverable: &Utf8Path, worker_json: &Value, findings_count: u64) -> Vec<Finding> {
    let found = finding::lint_violations(deliverable, worker_json);
    finding::or_summary(deliverable, worker_json, findings_count, found)
}

/// Run the linter sensor: `--stage <slug> --file-path <path>`.
pub fn run(args: &[String], context: &WorkerContext) -> WorkerOutcome {
    let search_path = std::env::var_os("PATH");
    run_with_search_path(args, context, search_path.as_deref())
}

/// `run`, with the `PATH` to search for tools given (tests pass their own).
fn run_with_search_path(
    args: &[String],
    context: &WorkerContext,
    search_path: Option<&OsStr>,
) -> WorkerOutcome {
    let budget = ToolBudget::starting_now(context.timeout);
    let flags = match parse_file_path_flags(args, &SENSOR) {
        Ok(flags) => flags,
        Err(message) => return WorkerOutcome::UsageError(message),
    };
    let file = match resolve_fired_file(&context.project_dir, &flags.file_path) {
        Ok(file) => file,
        Err(message) => return WorkerOutcome::UsageError(message),
    };
    let place = LintPlace::of(&context.project_dir, &file);
    match place.configured_linter() {
        ConfiguredLinter::Biome { config } => run_biome(&place, &config, search_path, &budget),
        ConfiguredLinter::Eslint { config_present } => {
            run_eslint(&place, config_present, search_path, &budget)
        }
    }
}

// --- Where the file is, and which linter the project uses -------------------------------------

/// The fired file and the folders the linter is looked for in.
#[derive(Debug, Clone)]
struct LintPlace {
    file: Utf8PathBuf,
    /// The file's nearest folder with a `package.json` (else the project folder, or the file's
    /// folder outside the project); the linter runs here.
    lint_root: Utf8PathBuf,
    /// From the file's folder up to the project folder: where configurations are looked for.
    config_folders: Vec<Utf8PathBuf>,
    /// From the lint root up to the project folder: where `node_modules/.bin` is looked for.
    tool_folders: Vec<Utf8PathBuf>,
}

impl LintPlace {
    fn of(project_dir: &Utf8Path, file: &Utf8Path) -> Self {
        let file_folder = file.parent().unwrap_or(file);
        let config_folders = folders_upward(file_folder, project_dir);
        let lint_root = config_folders
            .iter()
            .find(|folder| folder.join("package.json").is_file())
            .cloned()
            .unwrap_or_else(|| {
                if file_folder.starts_with(project_dir) {
                    project_dir.to_owned()
                } else {
                    file_folder.to_owned()
                }
            });
        let tool_folders = folders_upward(&lint_root, project_dir);
        Self {
            file: file.to_owned(),
            lint_root,
            config_folders,
            tool_folders,
        }
    }

    fn configured_linter(&self) -> ConfiguredLinter {
        if self.config_folders.iter().any(|f| has_eslint_config(f)) {
            return ConfiguredLinter::Eslint {
                config_present: true,
            };
        }
        let biome_config = self.config_folders.iter().find_map(|folder| {
            BIOME_CONFIG_FILE_NAMES
                .iter()
                .map(|name| folder.join(name))
                .find(|path| path.is_file())
        });
        match biome_config {
            Some(config) => ConfiguredLinter::Biome { config },
            None => ConfiguredLinter::Eslint {
                config_present: false,
            },
        }
    }

    /// The folders searched for `node_modules/.bin`, for messages.
    fn describe_tool_folders(&self) -> String {
        describe_folders_upward(&self.tool_folders)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ConfiguredLinter {
    /// eslint; `config_present` says whether a configuration file was seen (eslint may still
    /// find one further up).
    Eslint {
        config_present: bool,
    },
    Biome {
        config: Utf8PathBuf,
    },
}

fn has_eslint_config(folder: &Utf8Path) -> bool {
    ESLINT_CONFIG_FILE_NAMES
        .iter()
        .any(|name| folder.join(name).is_file())
        || package_json_has_eslint_config(&folder.join("package.json"))
}

fn package_json_has_eslint_config(path: &Utf8Path) -> bool {
    let small_enough = std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.len() <= LARGEST_PACKAGE_JSON_BYTES);
    small_enough
        && std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .is_some_and(|manifest| manifest.get("eslintConfig").is_some())
}

// --- The report every linter is turned into ----------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
        }
    }
}

/// One message of the linter, as the verdict lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    file: String,
    line: u64,
    column: u64,
    /// Empty when the linter names no rule (a parse error, an "ignored" notice).
    rule: String,
    severity: Severity,
    message: String,
}

impl Violation {
    fn to_json(&self) -> Value {
        json!({
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "rule": self.rule,
            "severity": self.severity.as_str(),
            "message": self.message,
        })
    }
}

/// What one lint found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LintReport {
    error_count: u64,
    warning_count: u64,
    violations: Vec<Violation>,
}

impl LintReport {
    /// The verdict, keys in the reference's order.
    fn verdict(&self) -> WorkerOutcome {
        WorkerOutcome::Verdict(json!({
            "pass": self.error_count == 0,
            "errorCount": self.error_count,
            "warningCount": self.warning_count,
            "violations": self.violations.iter().map(Violation::to_json).collect::<Vec<_>>(),
            "findings_count": self.error_count,
        }))
    }
}

/// The first JSON value in `stdout` that starts with `opening` and runs to the end: tried from
/// the first `opening`, then from each line that starts with it (a banner may hold one too).
fn json_after_banner(stdout: &str, opening: char) -> Option<Value> {
    let line_opening = format!("\n{opening}");
    let first = stdout.find(opening).into_iter();
    let line_starts = stdout
        .match_indices(line_opening.as_str())
        .map(|(index, _)| index + 1);
    first
        .chain(line_starts)
        .find_map(|start| serde_json::from_str::<Value>(&stdout[start..]).ok())
}

/// The start of `text`, for a message about output that could not be read.
fn output_excerpt(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return "stdout was empty".to_owned();
    }
    let excerpt: String = trimmed.chars().take(120).collect();
    if excerpt.len() < trimmed.len() {
        format!("stdout began: {excerpt}…")
    } else {
        format!("stdout was: {excerpt}")
    }
}

fn json_count(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64)
}

fn json_text(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or_default().to_owned()
}

// --- ESLint ------------------------------------------------------------------------------------

fn run_eslint(
    place: &LintPlace,
    config_present: bool,
    search_path: Option<&OsStr>,
    budget: &ToolBudget,
) -> WorkerOutcome {
    let program = match find_eslint(place, search_path, budget) {
        Ok(program) => program,
        Err(outcome) => return outcome,
    };
    let invocation = ToolInvocation {
        tool: "eslint",
        program,
        args: vec![
            "--format".to_owned(),
            "json".to_owned(),
            // The `=` form: ESLint reads a separate `-1` as an unknown option.
            "--max-warnings=-1".to_owned(),
            place.file.to_string(),
        ],
        cwd: place.lint_root.clone(),
        env: Vec::new(),
    };
    match run_tool_within(&invocation, LINT_STEP_CAP, budget) {
        Ok(run) => eslint_outcome(&run, config_present),
        Err(outcome) => outcome,
    }
}

/// The project's eslint (see the module documentation), or the tool-unavailable outcome.
fn find_eslint(
    place: &LintPlace,
    search_path: Option<&OsStr>,
    budget: &ToolBudget,
) -> Result<PathBuf, WorkerOutcome> {
    if let Some(local) = local_node_tool(&place.tool_folders, "eslint") {
        return Ok(local);
    }
    let mut skipped = Vec::new();
    for candidate in executables_on_search_path(search_path, "eslint") {
        let version = eslint_version(&candidate, &place.lint_root, budget)?;
        if version
            .major
            .is_some_and(|major| major >= OLDEST_PATH_ESLINT_MAJOR)
        {
            return Ok(candidate);
        }
        skipped.push(format!("{} ({})", candidate.display(), version.text));
    }
    let skipped_note = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            "; skipped as older than {OLDEST_PATH_ESLINT_MAJOR} (no flat config): {}",
            skipped.join(", ")
        )
    };
    Err(tool_unavailable(
        "eslint-unavailable",
        format!(
            "no node_modules/.bin/eslint {} and no eslint {OLDEST_PATH_ESLINT_MAJOR} or newer on \
             PATH{skipped_note}",
            place.describe_tool_folders()
        ),
    ))
}

/// What `eslint --version` said.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ToolVersion {
    text: String,
    major: Option<u32>,
}

fn eslint_version(
    program: &Path,
    cwd: &Utf8Path,
    budget: &ToolBudget,
) -> Result<ToolVersion, WorkerOutcome> {
    let invocation = ToolInvocation {
        tool: "eslint",
        program: program.to_owned(),
        args: vec!["--version".to_owned()],
        cwd: cwd.to_owned(),
        env: Vec::new(),
    };
    let run = match run_tool_within(&invocation, PROBE_STEP_CAP, budget) {
        Ok(run) => run,
        Err(WorkerOutcome::ScriptError(message)) if message.starts_with("timeout:") => {
            return Err(WorkerOutcome::ScriptError(message));
        }
        Err(_) => {
            return Ok(ToolVersion {
                text: "did not run".to_owned(),
                major: None,
            });
        }
    };
    let text = String::from_utf8_lossy(&run.stdout).trim().to_owned();
    let major = (run.exit_code == Some(0))
        .then(|| major_version(&text))
        .flatten();
    Ok(ToolVersion {
        text: if text.is_empty() {
            "no version".to_owned()
        } else {
            text
        },
        major,
    })
}

/// `9` from `v9.1.0` or `9.1.0`.
fn major_version(text: &str) -> Option<u32> {
    let first_line = text.lines().next()?.trim();
    let digits = first_line.strip_prefix('v').unwrap_or(first_line);
    digits.split('.').next()?.parse().ok()
}

/// eslint's outcome from its exit status, report and error output. Exit 0 and 1 carry a JSON
/// report; any other status is a failure to lint (2: a configuration problem or a crash).
fn eslint_outcome(run: &WorkerRun, config_present: bool) -> WorkerOutcome {
    let stderr = &run.stderr_tail;
    let exit = run.exit_code.unwrap_or(-1);
    if exit != 0 && exit != 1 {
        if let Some(problem) = eslint_config_problem(stderr) {
            return problem;
        }
        let line = eslint_problem_line(stderr);
        return WorkerOutcome::ScriptError(if config_present {
            format!("config-parse-error: {line}")
        } else {
            format!("eslint-failed: exit {exit}: {line}")
        });
    }
    if run.stdout_truncated {
        return WorkerOutcome::ScriptError(format!(
            "eslint-bad-output: the report was over {} MiB and was cut",
            TOOL_STDOUT_CAP_BYTES / (1024 * 1024)
        ));
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    match parse_eslint_report(&stdout) {
        Ok(report) => match ignored_file_notice(&report) {
            Some(notice) => tool_unavailable("file-ignored", notice),
            None => report.verdict(),
        },
        Err(why) => eslint_config_problem(stderr)
            .unwrap_or_else(|| WorkerOutcome::ScriptError(format!("eslint-bad-output: {why}"))),
    }
}

/// A configuration problem eslint reported on stderr: none found (tool-unavailable,
/// `no-eslint-config`), or one that does not load (a script error). `None` for anything else.
fn eslint_config_problem(stderr: &str) -> Option<WorkerOutcome> {
    let text = stderr.to_lowercase().replace('\u{2019}', "'");
    let none_found = [
        "no eslint configuration found",
        "could not find config file",
        "eslint couldn't find an eslint.config",
        "eslint couldn't find a eslint.config",
        "eslint couldn't find a configuration",
    ];
    if none_found.iter().any(|phrase| text.contains(phrase)) {
        return Some(tool_unavailable(
            "no-eslint-config",
            most_telling_line_about(stderr, "couldn"),
        ));
    }
    let does_not_load = [
        "parse error",
        "syntaxerror",
        "unexpected token",
        "unable to load",
        "failed to load config",
        "failed to load plugin",
        "cannot find package",
        "cannot find module",
    ];
    let invalid_configuration = text
        .lines()
        .any(|line| line.contains("configuration") && line.contains("is invalid"));
    (invalid_configuration || does_not_load.iter().any(|phrase| text.contains(phrase))).then(|| {
        WorkerOutcome::ScriptError(format!(
            "config-parse-error: {}",
            eslint_problem_line(stderr)
        ))
    })
}

/// The first line containing `phrase` (case-insensitive), else the most telling line.
fn most_telling_line_about(text: &str, phrase: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| line.to_lowercase().contains(phrase))
        .map_or_else(|| most_telling_line(text), str::to_owned)
}

/// The line that says what went wrong, followed by where when eslint names the configuration
/// file on a line of its own (`/p/eslint.config.js:2`).
fn eslint_problem_line(stderr: &str) -> String {
    let line = most_telling_line(stderr);
    let location = stderr.lines().map(str::trim).find(|candidate| {
        (candidate.contains("eslint.config.") || candidate.contains(".eslintrc"))
            && !candidate.starts_with("at ")
            && *candidate != line
    });
    match location {
        Some(location) if !line.contains(location) => format!("{line} ({location})"),
        _ => line,
    }
}

/// eslint's `--format json` report: an array with one result per file.
fn parse_eslint_report(stdout: &str) -> Result<LintReport, String> {
    let Some(Value::Array(results)) = json_after_banner(stdout, '[') else {
        return Err(format!(
            "the report is not a JSON array ({})",
            output_excerpt(stdout)
        ));
    };
    let mut report = LintReport {
        error_count: 0,
        warning_count: 0,
        violations: Vec::new(),
    };
    for result in &results {
        let Value::Object(result) = result else {
            return Err("a result in the report is not an object".to_owned());
        };
        add_eslint_result(&mut report, result);
    }
    Ok(report)
}

/// Add one file's result. The counts are eslint's own (`errorCount` includes fatal parse
/// errors), or counted from the messages when a count is missing.
fn add_eslint_result(report: &mut LintReport, result: &Map<String, Value>) {
    let file = json_text(result.get("filePath"));
    let violations: Vec<Violation> = result
        .get("messages")
        .and_then(Value::as_array)
        .map(|messages| {
            messages
                .iter()
                .filter_map(|message| eslint_violation(&file, message))
                .collect()
        })
        .unwrap_or_default();
    let counted = |severity| {
        violations
            .iter()
            .filter(|violation| violation.severity == severity)
            .count() as u64
    };
    report.error_count +=
        json_count(result.get("errorCount")).unwrap_or_else(|| counted(Severity::Error));
    report.warning_count +=
        json_count(result.get("warningCount")).unwrap_or_else(|| counted(Severity::Warning));
    report.violations.extend(violations);
}

fn eslint_violation(file: &str, message: &Value) -> Option<Violation> {
    let message = message.as_object()?;
    let severity = if message.get("severity").and_then(Value::as_u64) == Some(2) {
        Severity::Error
    } else {
        Severity::Warning
    };
    Some(Violation {
        file: file.to_owned(),
        line: json_count(message.get("line")).unwrap_or(0),
        column: json_count(message.get("column")).unwrap_or(0),
        rule: json_text(message.get("ruleId")),
        severity,
        message: json_text(message.get("message")),
    })
}

/// eslint's notice when it linted nothing ("File ignored because …", a warning with no rule):
/// the only messages, and no error.
fn ignored_file_notice(report: &LintReport) -> Option<String> {
    let only_notices = report.error_count == 0
        && !report.violations.is_empty()
        && report.violations.iter().all(|violation| {
            violation.rule.is_empty() && violation.message.starts_with("File ignored")
        });
    only_notices.then(|| {
        let first = &report.violations[0];
        format!("eslint linted nothing: {} ({})", first.message, first.file)
    })
}

// --- Biome -------------------------------------------------------------------------------------

fn run_biome(
    place: &LintPlace,
    config: &Utf8Path,
    search_path: Option<&OsStr>,
    budget: &ToolBudget,
) -> WorkerOutcome {
    let program = local_node_tool(&place.tool_folders, "biome").or_else(|| {
        executables_on_search_path(search_path, "biome")
            .into_iter()
            .next()
    });
    let Some(program) = program else {
        return tool_unavailable(
            "biome-unavailable",
            format!(
                "the project is configured for Biome ({config}) but there is no \
                 node_modules/.bin/biome {} and no biome on PATH",
                place.describe_tool_folders()
            ),
        );
    };
    let invocation = ToolInvocation {
        tool: "biome",
        program,
        args: vec![
            "lint".to_owned(),
            "--reporter=json".to_owned(),
            place.file.to_string(),
        ],
        cwd: place.lint_root.clone(),
        env: vec![("NO_COLOR".to_owned(), "1".to_owned())],
    };
    match run_tool_within(&invocation, LINT_STEP_CAP, budget) {
        Ok(run) => biome_outcome(&run, place),
        Err(outcome) => outcome,
    }
}

/// Biome's outcome. Biome exits 0 or 1 with a JSON report on stdout; a configuration that does
/// not load gives no report and names the configuration on stderr.
fn biome_outcome(run: &WorkerRun, place: &LintPlace) -> WorkerOutcome {
    if run.stdout_truncated {
        return WorkerOutcome::ScriptError(format!(
            "biome-bad-output: the report was over {} MiB and was cut",
            TOOL_STDOUT_CAP_BYTES / (1024 * 1024)
        ));
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    match json_after_banner(&stdout, '{') {
        Some(Value::Object(report)) if report.get("diagnostics").is_some_and(Value::is_array) => {
            biome_report_outcome(&report, place)
        }
        _ => biome_failure(run, &stdout),
    }
}

fn biome_failure(run: &WorkerRun, stdout: &str) -> WorkerOutcome {
    let stderr = &run.stderr_tail;
    let lower = stderr.to_lowercase();
    if lower.contains("configuration resulted in errors") || lower.contains("biome.json") {
        return WorkerOutcome::ScriptError(format!(
            "config-parse-error: {}",
            biome_problem_line(stderr)
        ));
    }
    WorkerOutcome::ScriptError(format!(
        "biome-bad-output: exit {}: the report is not a JSON object with diagnostics ({}); {}",
        run.exit_code.unwrap_or(-1),
        output_excerpt(stdout),
        most_telling_line(stderr)
    ))
}

/// Biome's message about its configuration (its `×` line), with the configuration location
/// line before it when there is one (`/p/biome.json:2:1 parse`).
fn biome_problem_line(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    let location = lines
        .iter()
        .find(|line| line.contains("biome.json"))
        .map(|line| line.trim_end_matches(['━', ' ']).trim().to_owned());
    let message = lines
        .iter()
        .filter_map(|line| line.strip_prefix('×'))
        .map(str::trim)
        .find(|message| {
            !message.starts_with("Some errors were emitted")
                && !message.starts_with("Biome exited because")
        });
    match (message, location) {
        (Some(message), Some(location)) => format!("{message} ({location})"),
        (Some(message), None) => message.to_owned(),
        (None, Some(location)) => location,
        (None, None) => most_telling_line(stderr),
    }
}

fn biome_report_outcome(report: &Map<String, Value>, place: &LintPlace) -> WorkerOutcome {
    let diagnostics = report
        .get("diagnostics")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let summary = report.get("summary").and_then(Value::as_object);
    if diagnostics.is_empty() && summary.is_some_and(biome_processed_no_file) {
        return tool_unavailable(
            "file-ignored",
            format!(
                "biome linted nothing: {} is ignored by its configuration",
                place.file
            ),
        );
    }
    let violations: Vec<Violation> = diagnostics
        .iter()
        .filter_map(|diagnostic| biome_violation(diagnostic, place))
        .collect();
    let counted = |severity| {
        violations
            .iter()
            .filter(|violation| violation.severity == severity)
            .count() as u64
    };
    // The summary counts every diagnostic; the list holds only the first ones Biome printed.
    let summary_count = |key| summary.and_then(|summary| json_count(summary.get(key)));
    LintReport {
        error_count: summary_count("errors").unwrap_or_else(|| counted(Severity::Error)),
        warning_count: summary_count("warnings").unwrap_or_else(|| counted(Severity::Warning)),
        violations,
    }
    .verdict()
}

/// Whether Biome's summary says it read no file (`changed` and `unchanged` both 0).
fn biome_processed_no_file(summary: &Map<String, Value>) -> bool {
    matches!(
        (
            json_count(summary.get("changed")),
            json_count(summary.get("unchanged"))
        ),
        (Some(0), Some(0))
    )
}

/// One Biome diagnostic. Two report shapes exist: Biome 2 gives `location.path` as a string and
/// `location.start` as a line and column; Biome 1 gives `location.path.file`, a byte `span` and
/// the `sourceCode`, from which the line and column are computed. Diagnostics that are neither
/// errors nor warnings (information, hints) are left out.
fn biome_violation(diagnostic: &Value, place: &LintPlace) -> Option<Violation> {
    let severity = match diagnostic.get("severity").and_then(Value::as_str)? {
        "error" | "fatal" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return None,
    };
    let location = diagnostic.get("location");
    let path = location
        .and_then(|location| location.get("path"))
        .and_then(|path| path.as_str().or_else(|| path.get("file")?.as_str()));
    let file = match path {
        Some(path) if !path.is_empty() => {
            absolute_lexical(&place.lint_root, Utf8Path::new(path)).to_string()
        }
        _ => place.file.to_string(),
    };
    let (line, column) = location.map_or((0, 0), biome_line_and_column);
    Some(Violation {
        file,
        line,
        column,
        rule: json_text(diagnostic.get("category")),
        severity,
        message: biome_message(diagnostic),
    })
}

fn biome_line_and_column(location: &Value) -> (u64, u64) {
    if let Some(start) = location.get("start") {
        return (
            json_count(start.get("line")).unwrap_or(0),
            json_count(start.get("column")).unwrap_or(0),
        );
    }
    let offset = location
        .get("span")
        .and_then(|span| span.get(0))
        .and_then(Value::as_u64);
    let source = location.get("sourceCode").and_then(Value::as_str);
    match (offset, source) {
        (Some(offset), Some(source)) => line_and_column_at(source, offset),
        _ => (0, 0),
    }
}

/// The 1-based line and column (in characters) of a byte offset; `(0, 0)` past the end.
fn line_and_column_at(source: &str, offset: u64) -> (u64, u64) {
    let Ok(offset) = usize::try_from(offset) else {
        return (0, 0);
    };
    let Some(before) = source.get(..offset) else {
        return (0, 0);
    };
    let line = before.matches('\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    let column = before[line_start..].chars().count() as u64 + 1;
    (line, column)
}

/// The message as text: Biome 2's `message` string, else Biome 1's `description`, else the
/// contents of a markup `message` array.
fn biome_message(diagnostic: &Value) -> String {
    match (diagnostic.get("message"), diagnostic.get("description")) {
        (Some(Value::String(message)), _) => message.clone(),
        (_, Some(Value::String(description))) => description.clone(),
        (Some(Value::Array(parts)), _) => parts
            .iter()
            .filter_map(|part| part.get("content").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Instant;

    use super::*;
    use crate::sensors::node_tool::is_executable_file;
    use crate::sensors::test_support::words;

    // --- Pure parts --------------------------------------------------------------------------

    #[test]
    fn major_versions_read_with_or_without_a_v() {
        assert_eq!(major_version("v9.1.0\n"), Some(9));
        assert_eq!(major_version("10.15.0"), Some(10));
        assert_eq!(major_version("v6.4.0"), Some(6));
        assert_eq!(major_version("eslint"), None);
        assert_eq!(major_version(""), None);
    }

    #[test]
    fn a_banner_before_the_report_is_skipped_even_with_brackets() {
        let stdout = "[pnpm] warn: lockfile\n[{\"filePath\":\"/p/a.js\",\"messages\":[]}]\n";
        let report = parse_eslint_report(stdout).unwrap();
        assert_eq!(report.error_count, 0);
        assert!(report.violations.is_empty());
    }

    #[test]
    fn line_and_column_come_from_a_byte_offset() {
        let source = "const a = 1;\nconst é = 2;\ndebugger;\n";
        assert_eq!(line_and_column_at(source, 0), (1, 1));
        assert_eq!(line_and_column_at(source, 13), (2, 1));
        // `é` is two bytes: `=` is byte 22 and the 9th character of line 2.
        assert_eq!(line_and_column_at(source, 22), (2, 9));
        assert_eq!(line_and_column_at(source, 1000), (0, 0));
        assert_eq!(
            line_and_column_at(source, 23_u64 + u64::from(u32::MAX)),
            (0, 0)
        );
    }

    #[test]
    fn biome_one_shape_is_read_from_span_and_source() {
        let place = LintPlace {
            file: Utf8PathBuf::from("/p/src/a.js"),
            lint_root: Utf8PathBuf::from("/p"),
            config_folders: Vec::new(),
            tool_folders: Vec::new(),
        };
        let diagnostic = json!({
            "category": "lint/suspicious/noDebugger",
            "severity": "error",
            "description": "This is an unexpected use of the debugger statement.",
            "message": [{"elements": [], "content": "This is an unexpected use of the "}],
            "location": {
                "path": {"file": "src/a.js"},
                "span": [26, 35],
                "sourceCode": "const x = 1;\nconst y = 2;\ndebugger;\n"
            }
        });
        let violation = biome_violation(&diagnostic, &place).unwrap();
        assert_eq!(violation.file, "/p/src/a.js");
        assert_eq!((violation.line, violation.column), (3, 1));
        assert_eq!(violation.rule, "lint/suspicious/noDebugger");
        assert_eq!(
            violation.message,
            "This is an unexpected use of the debugger statement."
        );
        let information = json!({"severity": "information", "message": "fyi"});
        assert_eq!(biome_violation(&information, &place), None);
    }

    // --- Fake tools in a temp project -------------------------------------------------------

    /// A temp project where tests write files and fake tools (`#!/bin/sh` scripts).
    #[cfg(unix)]
    pub(in crate::sensors) struct FakeNodeProject {
        folder: tempfile::TempDir,
    }

    #[cfg(unix)]
    impl FakeNodeProject {
        /// A project folder holding a `package.json`.
        pub(in crate::sensors) fn new() -> Self {
            let project = Self {
                folder: tempfile::tempdir().unwrap(),
            };
            project.write("package.json", "{\"name\": \"demo\"}\n");
            project
        }

        pub(in crate::sensors) fn dir(&self) -> Utf8PathBuf {
            Utf8PathBuf::from_path_buf(self.folder.path().to_path_buf()).unwrap()
        }

        /// Write `text` at the project-relative `path`, creating folders; returns the path.
        pub(in crate::sensors) fn write(&self, path: &str, text: &str) -> Utf8PathBuf {
            let path = self.dir().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        }

        /// Write an executable `#!/bin/sh` script at the project-relative `path`.
        pub(in crate::sensors) fn script(&self, path: &str, body: &str) -> Utf8PathBuf {
            use std::os::unix::fs::PermissionsExt as _;
            let path = self.write(path, &format!("#!/bin/sh\n{body}\n"));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        }

        /// A fake tool at the project-relative `path` that prints `stdout` and `stderr` (kept in
        /// files beside the project, so no shell quoting is involved) and exits `status`.
        pub(in crate::sensors) fn canned_tool(
            &self,
            path: &str,
            stdout: &str,
            stderr: &str,
            status: i32,
        ) {
            let stem = path.replace('/', "_");
            let out = self.write(&format!("canned/{stem}.stdout"), stdout);
            let err = self.write(&format!("canned/{stem}.stderr"), stderr);
            self.script(
                path,
                &format!("cat '{out}'; cat '{err}' >&2; exit {status}"),
            );
        }

        pub(in crate::sensors) fn context(&self, timeout: Duration) -> WorkerContext {
            WorkerContext {
                project_dir: self.dir(),
                timeout,
            }
        }

        /// The worker argv for a fire on the project-relative `file`.
        pub(in crate::sensors) fn args_for(&self, file: &str) -> Vec<String> {
            vec![
                "--stage".to_owned(),
                "code-generation".to_owned(),
                "--file-path".to_owned(),
                self.dir().join(file).to_string(),
            ]
        }
    }

    /// A budget no test reaches.
    #[cfg(unix)]
    pub(in crate::sensors) const GENEROUS: Duration = Duration::from_secs(60);

    #[cfg(unix)]
    fn lint(project: &FakeNodeProject, file: &str) -> WorkerOutcome {
        lint_with_path(project, file, None)
    }

    #[cfg(unix)]
    fn lint_with_path(
        project: &FakeNodeProject,
        file: &str,
        search_path: Option<&Utf8Path>,
    ) -> WorkerOutcome {
        run_with_search_path(
            &project.args_for(file),
            &project.context(GENEROUS),
            search_path.map(Utf8Path::as_os_str),
        )
    }

    /// A project with `src/a.js` and a flat config.
    #[cfg(unix)]
    fn configured_project() -> FakeNodeProject {
        let project = FakeNodeProject::new();
        project.write("src/a.js", "var x = 1;\n");
        project.write("eslint.config.js", "module.exports = [];\n");
        project
    }

    #[cfg(unix)]
    fn reason_of(outcome: &WorkerOutcome) -> &str {
        match outcome {
            WorkerOutcome::ToolUnavailable(json) => json["reason"].as_str().unwrap(),
            other => panic!("expected tool-unavailable, got {other:?}"),
        }
    }

    #[cfg(unix)]
    fn script_error_of(outcome: &WorkerOutcome) -> &str {
        match outcome {
            WorkerOutcome::ScriptError(message) => message,
            other => panic!("expected a script error, got {other:?}"),
        }
    }

    #[cfg(unix)]
    const ESLINT_REPORT_WITH_AN_ERROR_AND_A_WARNING: &str = r#"[{"filePath":"/p/src/a.js","messages":[{"ruleId":"no-unused-vars","severity":1,"message":"'x' is assigned a value but never used.","line":1,"column":5},{"ruleId":"no-debugger","severity":2,"message":"Unexpected 'debugger' statement.","line":2,"column":1}],"errorCount":1,"warningCount":1}]"#;

    #[cfg(unix)]
    #[test]
    fn errors_fail_and_the_verdict_keys_are_in_the_reference_order() {
        let project = configured_project();
        project.canned_tool(
            "node_modules/.bin/eslint",
            ESLINT_REPORT_WITH_AN_ERROR_AND_A_WARNING,
            "",
            1,
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        let keys: Vec<&String> = verdict.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "pass",
                "errorCount",
                "warningCount",
                "violations",
                "findings_count"
            ]
        );
        assert_eq!(
            verdict,
            json!({
                "pass": false,
                "errorCount": 1,
                "warningCount": 1,
                "violations": [
                    {"file": "/p/src/a.js", "line": 1, "column": 5, "rule": "no-unused-vars",
                     "severity": "warning", "message": "'x' is assigned a value but never used."},
                    {"file": "/p/src/a.js", "line": 2, "column": 1, "rule": "no-debugger",
                     "severity": "error", "message": "Unexpected 'debugger' statement."},
                ],
                "findings_count": 1,
            })
        );
        let first_violation_keys: Vec<&String> = verdict["violations"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(
            first_violation_keys,
            ["file", "line", "column", "rule", "severity", "message"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn warnings_alone_pass() {
        let project = configured_project();
        project.script(
            "node_modules/.bin/eslint",
            r#"echo '[{"filePath":"/p/src/a.js","messages":[{"ruleId":"no-unused-vars","severity":1,"message":"unused","line":1,"column":5}],"errorCount":0,"warningCount":1}]'"#,
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(verdict["pass"], true);
        assert_eq!(verdict["warningCount"], 1);
        assert_eq!(verdict["findings_count"], 0);
        assert_eq!(verdict["violations"].as_array().unwrap().len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn eslint_gets_json_format_no_warning_limit_and_the_absolute_file_from_the_lint_root() {
        let project = configured_project();
        let recorded = project.dir().join("recorded.txt");
        project.script(
            "node_modules/.bin/eslint",
            &format!("pwd -P > '{recorded}'; printf '%s\\n' \"$@\" >> '{recorded}'; echo '[]'"),
        );
        let outcome = lint(&project, "src/a.js");
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
        let root = std::fs::canonicalize(project.dir()).unwrap();
        let expected = format!(
            "{}\n--format\njson\n--max-warnings=-1\n{}\n",
            root.display(),
            project.dir().join("src/a.js")
        );
        assert_eq!(std::fs::read_to_string(recorded).unwrap(), expected);
    }

    #[cfg(unix)]
    #[test]
    fn a_banner_before_the_json_is_tolerated() {
        let project = configured_project();
        project.canned_tool(
            "node_modules/.bin/eslint",
            &format!("npm warn config: something\n{ESLINT_REPORT_WITH_AN_ERROR_AND_A_WARNING}\n"),
            "",
            1,
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(verdict["errorCount"], 1);
    }

    #[cfg(unix)]
    #[test]
    fn output_that_is_not_a_report_is_a_script_error() {
        let project = configured_project();
        for body in [
            "echo 'no json here'",
            "echo '{\"not\": \"an array\"}'",
            "echo '[1, 2'",
        ] {
            project.script("node_modules/.bin/eslint", body);
            let outcome = lint(&project, "src/a.js");
            let message = script_error_of(&outcome);
            assert!(
                message.starts_with("eslint-bad-output: "),
                "{body}: {message}"
            );
        }
        project.script("node_modules/.bin/eslint", "echo '[42]'");
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "eslint-bad-output: a result in the report is not an object"
        );
    }

    #[cfg(unix)]
    #[test]
    fn no_eslint_anywhere_is_tool_unavailable() {
        let project = configured_project();
        let empty_path = project.dir().join("empty-bin");
        std::fs::create_dir_all(&empty_path).unwrap();
        let outcome = lint_with_path(&project, "src/a.js", Some(&empty_path));
        assert_eq!(reason_of(&outcome), "eslint-unavailable");
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            unreachable!()
        };
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["reason", "message"]);
        assert!(
            json["message"]
                .as_str()
                .unwrap()
                .starts_with("no node_modules/.bin/eslint in ")
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_eslint_older_than_9_on_path_is_skipped_and_a_newer_one_used() {
        let project = configured_project();
        let old = project.script("old-bin/eslint", "echo v8.57.0");
        let old_bin = old.parent().unwrap().to_owned();
        let outcome = lint_with_path(&project, "src/a.js", Some(&old_bin));
        assert_eq!(reason_of(&outcome), "eslint-unavailable");
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            unreachable!()
        };
        let message = json["message"].as_str().unwrap();
        assert!(message.contains(&format!("{old} (v8.57.0)")), "{message}");

        let new = project.script(
            "new-bin/eslint",
            "if [ \"$1\" = --version ]; then echo v9.39.1; else echo '[]'; fi",
        );
        let new_bin = new.parent().unwrap();
        let both = std::env::join_paths([old_bin.as_std_path(), new_bin.as_std_path()]).unwrap();
        let outcome = run_with_search_path(
            &project.args_for("src/a.js"),
            &project.context(GENEROUS),
            Some(&both),
        );
        assert_eq!(
            outcome,
            WorkerOutcome::Verdict(json!({
                "pass": true, "errorCount": 0, "warningCount": 0, "violations": [],
                "findings_count": 0,
            }))
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_local_eslint_wins_over_path_and_is_found_hoisted_at_the_project_root() {
        let project = configured_project();
        project.write("packages/web/package.json", "{}\n");
        project.write("packages/web/src/b.js", "let y;\n");
        project.script(
            "node_modules/.bin/eslint",
            r#"echo '[{"filePath":"local","messages":[],"errorCount":0,"warningCount":0}]'"#,
        );
        let path_eslint = project.script("path-bin/eslint", "echo v10.0.0; exit 9");
        let outcome = lint_with_path(
            &project,
            "packages/web/src/b.js",
            Some(path_eslint.parent().unwrap()),
        );
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    #[test]
    fn no_configuration_is_tool_unavailable() {
        let project = FakeNodeProject::new();
        project.write("src/a.js", "var x = 1;\n");
        project.canned_tool(
            "node_modules/.bin/eslint",
            "",
            "Oops! Something went wrong! :(\n\nESLint: 10.15.0\n\n\
             ESLint couldn\u{2019}t find an eslint.config.* file.\n",
            2,
        );
        let outcome = lint(&project, "src/a.js");
        assert_eq!(reason_of(&outcome), "no-eslint-config");
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            unreachable!()
        };
        assert_eq!(
            json["message"],
            "ESLint couldn\u{2019}t find an eslint.config.* file."
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_configuration_is_a_script_error_with_its_line() {
        let project = configured_project();
        project.canned_tool(
            "node_modules/.bin/eslint",
            "",
            "Oops! Something went wrong! :(\n\nESLint: 10.15.0\n\n/p/eslint.config.js:2\n\n\n\n\
             SyntaxError: Unexpected end of input\n    \
             at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n",
            2,
        );
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "config-parse-error: SyntaxError: Unexpected end of input (/p/eslint.config.js:2)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_crash_without_a_configuration_file_is_an_eslint_failure() {
        let project = FakeNodeProject::new();
        project.write("src/a.js", "var x = 1;\n");
        project.script(
            "node_modules/.bin/eslint",
            "echo 'TypeError: something broke' >&2; exit 2",
        );
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "eslint-failed: exit 2: TypeError: something broke"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_ignored_file_is_tool_unavailable_not_a_pass() {
        let project = configured_project();
        project.script(
            "node_modules/.bin/eslint",
            r#"echo '[{"filePath":"/p/src/a.js","messages":[{"ruleId":null,"fatal":false,"severity":1,"message":"File ignored because no matching configuration was supplied."}],"errorCount":0,"warningCount":1}]'"#,
        );
        let outcome = lint(&project, "src/a.js");
        assert_eq!(reason_of(&outcome), "file-ignored");
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_interpreter_is_tool_unavailable() {
        let project = configured_project();
        project.script(
            "node_modules/.bin/eslint",
            "echo \"/usr/bin/env: 'node': No such file or directory\" >&2; exit 127",
        );
        let outcome = lint(&project, "src/a.js");
        assert_eq!(reason_of(&outcome), "eslint-unavailable");
    }

    #[cfg(unix)]
    #[test]
    fn a_linter_past_the_budget_is_stopped_and_is_a_script_error() {
        let project = configured_project();
        project.script("node_modules/.bin/eslint", "sleep 30");
        let started = Instant::now();
        let outcome = run_with_search_path(
            &project.args_for("src/a.js"),
            &project.context(Duration::from_secs(1)),
            None,
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            script_error_of(&outcome),
            "timeout: eslint did not finish within the sensor's budget of 1 s and was stopped"
        );
    }

    #[cfg(unix)]
    #[test]
    fn usage_errors_come_before_any_tool_runs() {
        let project = configured_project();
        let marker = project.dir().join("ran.txt");
        project.script("node_modules/.bin/eslint", &format!("touch '{marker}'"));
        let context = project.context(GENEROUS);
        let mut unknown = project.args_for("src/a.js");
        unknown.extend(["--output-path".to_owned(), "/x".to_owned()]);
        assert_eq!(
            run_with_search_path(&unknown, &context, None),
            WorkerOutcome::UsageError("unknown flag: --output-path".to_owned())
        );
        let missing = project.args_for("src/a.js")[2..].to_vec();
        assert_eq!(
            run_with_search_path(&missing, &context, None),
            WorkerOutcome::UsageError("missing required flag: --stage".to_owned())
        );
        let absent = project.dir().join("src/absent.js");
        assert_eq!(
            run_with_search_path(&project.args_for("src/absent.js"), &context, None),
            WorkerOutcome::UsageError(format!("file-path not found: {absent}"))
        );
        assert!(!marker.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_relative_windows_style_path_is_found() {
        let project = configured_project();
        project.script("node_modules/.bin/eslint", "echo '[]'");
        let args = words("--stage s --file-path src\\a.js");
        let outcome = run_with_search_path(&args, &project.context(GENEROUS), None);
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    const BIOME_REPORT: &str = r#"{"summary":{"changed":0,"unchanged":1,"errors":1,"warnings":1},"diagnostics":[{"severity":"warning","message":"This let declares a variable that is only assigned once.","category":"lint/style/useConst","location":{"path":"src/a.js","start":{"line":2,"column":1},"end":{"line":2,"column":4}}},{"severity":"error","message":"This is an unexpected use of the debugger statement.","category":"lint/suspicious/noDebugger","location":{"path":"src/a.js","start":{"line":3,"column":1},"end":{"line":3,"column":10}}},{"severity":"information","message":"fyi","category":"x","location":{"path":"src/a.js"}}],"command":"lint"}"#;

    #[cfg(unix)]
    fn biome_project() -> FakeNodeProject {
        let project = FakeNodeProject::new();
        project.write("src/a.js", "const a = 1;\nlet b = 2;\ndebugger;\n");
        project.write("biome.json", "{}\n");
        project.script(
            "node_modules/.bin/eslint",
            "echo 'eslint must not run' >&2; exit 2",
        );
        project
    }

    #[cfg(unix)]
    #[test]
    fn biome_runs_when_configured_and_eslint_is_not() {
        let project = biome_project();
        let recorded = project.dir().join("recorded.txt");
        let report = project.write("canned/biome.stdout", BIOME_REPORT);
        project.script(
            "node_modules/.bin/biome",
            &format!(
                "printf '%s\\n' \"$@\" > '{recorded}'; echo 'The json reporter is experimental' >&2; cat '{report}'; exit 1"
            ),
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        let file = project.dir().join("src/a.js").to_string();
        assert_eq!(
            verdict,
            json!({
                "pass": false,
                "errorCount": 1,
                "warningCount": 1,
                "violations": [
                    {"file": file, "line": 2, "column": 1, "rule": "lint/style/useConst",
                     "severity": "warning",
                     "message": "This let declares a variable that is only assigned once."},
                    {"file": file, "line": 3, "column": 1, "rule": "lint/suspicious/noDebugger",
                     "severity": "error",
                     "message": "This is an unexpected use of the debugger statement."},
                ],
                "findings_count": 1,
            })
        );
        assert_eq!(
            std::fs::read_to_string(recorded).unwrap(),
            format!("lint\n--reporter=json\n{file}\n")
        );
    }

    #[cfg(unix)]
    #[test]
    fn eslint_wins_when_both_are_configured() {
        let project = biome_project();
        project.write(".eslintrc.json", "{}\n");
        project.script("node_modules/.bin/eslint", "echo '[]'");
        project.script(
            "node_modules/.bin/biome",
            "echo 'biome must not run' >&2; exit 3",
        );
        let outcome = lint(&project, "src/a.js");
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    #[test]
    fn biome_configured_but_missing_is_tool_unavailable() {
        let project = biome_project();
        assert_eq!(reason_of(&lint(&project, "src/a.js")), "biome-unavailable");
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_biome_configuration_is_a_script_error_with_its_line() {
        let project = biome_project();
        project.canned_tool(
            "node_modules/.bin/biome",
            "",
            "/p/biome.json:2:1 parse \u{2501}\u{2501}\u{2501}\n\n  \u{d7} expected `}` but instead the file ends\n\n\
             configuration \u{2501}\u{2501}\n\n  \
             \u{d7} Biome exited because the configuration resulted in errors. Please fix them.\n",
            1,
        );
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "config-parse-error: expected `}` but instead the file ends (/p/biome.json:2:1 parse)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn biome_ignoring_the_file_is_tool_unavailable_and_garbage_is_a_script_error() {
        let project = biome_project();
        project.script(
            "node_modules/.bin/biome",
            r#"echo '{"summary":{"changed":0,"unchanged":0,"errors":0,"warnings":0},"diagnostics":[],"command":"lint"}'; exit 1"#,
        );
        assert_eq!(reason_of(&lint(&project, "src/a.js")), "file-ignored");
        project.script("node_modules/.bin/biome", "echo 'not json'; exit 1");
        let outcome = lint(&project, "src/a.js");
        assert!(
            script_error_of(&outcome).starts_with("biome-bad-output: exit 1: "),
            "{outcome:?}"
        );
    }

    // --- The real ESLint --------------------------------------------------------------------

    /// The folder of the real tools `.ci/install-node-tools` installs, when the run has them;
    /// `None` after printing why the test is skipped.
    #[cfg(unix)]
    pub(in crate::sensors) fn real_node_tools(tool: &str) -> Option<Utf8PathBuf> {
        let Some(folder) = std::env::var_os("AIDLC_TEST_NODE_TOOLS") else {
            eprintln!("SKIPPED (real eslint/tsc not installed; run .ci/install-node-tools)");
            return None;
        };
        let folder = Utf8PathBuf::from_path_buf(PathBuf::from(folder))
            .expect("AIDLC_TEST_NODE_TOOLS is not UTF-8");
        let executable = folder.join(tool);
        assert!(
            is_executable_file(executable.as_std_path()),
            "AIDLC_TEST_NODE_TOOLS={folder} has no executable {tool}; run .ci/install-node-tools"
        );
        Some(folder)
    }

    /// Link the real `tool` into the project's `node_modules/.bin`.
    #[cfg(unix)]
    pub(in crate::sensors) fn link_real_tool(
        project: &FakeNodeProject,
        tools: &Utf8Path,
        tool: &str,
    ) {
        let bin = project.dir().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(tools.join(tool), bin.join(tool)).unwrap();
    }

    #[cfg(unix)]
    fn real_eslint_project(tools: &Utf8Path) -> FakeNodeProject {
        let project = FakeNodeProject::new();
        link_real_tool(&project, tools, "eslint");
        project.write(
            "eslint.config.js",
            "module.exports = [\n  {\n    files: [\"**/*.js\"],\n    rules: { \"no-unused-vars\": \"warn\", \"no-debugger\": \"error\" },\n  },\n];\n",
        );
        project
    }

    #[cfg(unix)]
    #[test]
    fn real_eslint_fails_on_an_error_and_passes_with_warnings_only() {
        let Some(tools) = real_node_tools("eslint") else {
            return;
        };
        let project = real_eslint_project(&tools);
        project.write("src/bad.js", "var x = 1;\ndebugger;\n");
        project.write("src/warned.js", "var y = 2;\n");
        project.write("src/clean.js", "module.exports = 3;\n");

        let WorkerOutcome::Verdict(bad) = lint(&project, "src/bad.js") else {
            panic!("expected a verdict: {:?}", lint(&project, "src/bad.js"));
        };
        let file = project.dir().join("src/bad.js").to_string();
        assert_eq!(bad["pass"], false);
        assert_eq!(bad["errorCount"], 1);
        assert_eq!(bad["warningCount"], 1);
        assert_eq!(bad["findings_count"], 1);
        assert_eq!(
            bad["violations"][1],
            json!({"file": file, "line": 2, "column": 1, "rule": "no-debugger",
                   "severity": "error", "message": "Unexpected 'debugger' statement."})
        );

        let WorkerOutcome::Verdict(warned) = lint(&project, "src/warned.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(warned["pass"], true);
        assert_eq!(warned["warningCount"], 1);

        let WorkerOutcome::Verdict(clean) = lint(&project, "src/clean.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(clean["pass"], true);
        assert_eq!(clean["violations"], json!([]));
    }

    #[cfg(unix)]
    #[test]
    fn real_eslint_without_config_or_with_a_broken_one_is_not_a_pass() {
        let Some(tools) = real_node_tools("eslint") else {
            return;
        };
        let project = FakeNodeProject::new();
        link_real_tool(&project, &tools, "eslint");
        project.write("src/a.js", "var x = 1;\n");
        assert_eq!(reason_of(&lint(&project, "src/a.js")), "no-eslint-config");

        project.write("eslint.config.js", "module.exports = [ { rules: {\n");
        let outcome = lint(&project, "src/a.js");
        let message = script_error_of(&outcome);
        assert!(
            message.starts_with("config-parse-error: SyntaxError"),
            "{message}"
        );
        assert!(message.contains("eslint.config.js"), "{message}");
    }

    #[cfg(unix)]
    #[test]
    fn real_eslint_on_a_file_no_configuration_covers_is_tool_unavailable() {
        let Some(tools) = real_node_tools("eslint") else {
            return;
        };
        let project = real_eslint_project(&tools);
        project.write("src/a.ts", "let y: number = 1;\n");
        assert_eq!(reason_of(&lint(&project, "src/a.ts")), "file-ignored");
    }

    #[cfg(unix)]
    #[test]
    fn real_biome_lints_when_configured_and_a_broken_configuration_is_a_script_error() {
        let Some(tools) = real_node_tools("biome") else {
            return;
        };
        let project = FakeNodeProject::new();
        link_real_tool(&project, &tools, "biome");
        project.write("biome.json", "{}\n");
        project.write("src/bad.js", "let b = 2;\ndebugger;\nconsole.log(b);\n");
        project.write("src/clean.js", "const a = 1;\nconsole.log(a);\n");

        let WorkerOutcome::Verdict(bad) = lint(&project, "src/bad.js") else {
            panic!("expected a verdict: {:?}", lint(&project, "src/bad.js"));
        };
        let file = project.dir().join("src/bad.js").to_string();
        assert_eq!(bad["pass"], false, "{bad}");
        assert_eq!(bad["errorCount"], 1, "{bad}");
        assert_eq!(bad["warningCount"], 1, "{bad}");
        assert_eq!(bad["findings_count"], 1, "{bad}");
        assert!(
            bad["violations"].as_array().unwrap().contains(&json!({
                "file": file, "line": 2, "column": 1, "rule": "lint/suspicious/noDebugger",
                "severity": "error",
                "message": "This is an unexpected use of the debugger statement.",
            })),
            "{bad}"
        );

        let WorkerOutcome::Verdict(clean) = lint(&project, "src/clean.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(
            clean,
            json!({"pass": true, "errorCount": 0, "warningCount": 0, "violations": [],
                   "findings_count": 0})
        );

        project.write(
            "biome.json",
            "{\"files\": {\"includes\": [\"src/clean.js\"]}}\n",
        );
        assert_eq!(reason_of(&lint(&project, "src/bad.js")), "file-ignored");

        project.write("biome.json", "{ \"linter\": {\n");
        let outcome = lint(&project, "src/bad.js");
        let message = script_error_of(&outcome);
        assert!(
            message.starts_with("config-parse-error: expected `}` but instead the file ends"),
            "{message}"
        );
        assert!(message.contains("biome.json:2:1"), "{message}");
    }
}
