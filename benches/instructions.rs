//! Instruction counts of the real `aidlc` binary under valgrind's callgrind: figures that hold on
//! a noisy, shared machine, where wall-clock medians move by tens of percent from run to run.
//!
//! Run it with `bash benches/instructions.sh` (or `cargo bench --bench instructions`); it is
//! not part of `.ci/run`. It needs `valgrind` on `PATH` and refuses to run without it.
//! For a quick pass: `AIDLC_BENCH_STAGES=1000 bash benches/instructions.sh`.
//!
//! Settings (environment):
//! - `AIDLC_BENCH_STAGES`: stages of the synthetic project (default 10,000; 500 sensors);
//! - `AIDLC_BENCH_CASES`: run only the cases whose name contains one of these comma-separated
//!   words (e.g. `version,default`);
//! - `AIDLC_BENCH_KEEP`: a folder to build the projects in and leave behind (for `perf` or
//!   `callgrind_annotate` by hand); the callgrind files of each case are kept there too;
//! - `AIDLC_BENCH_BINARY`: count another `aidlc` binary (e.g. a build of `main`, for before and
//!   after figures from one run); the in-process cases, which count this bench's own build of
//!   the library, are then left out.
//!
//! Each case runs once under `valgrind --tool=callgrind` (every thread of the process counted,
//! user space only: the kernel's work for a read or an fsync is not an instruction here), its
//! exit status and stderr are checked (a fast wrong answer fails the bench), and the report
//! prints its instruction count beside two baselines measured in the same run: `aidlc
//! --version` (starting the process at all) and `cat` of the project's inputs.
//!
//! Cases (add one with [`Case::process`] or [`Case::in_process`] in [`cases_for`]):
//! - `process start`: `aidlc --version`;
//! - per project (the default framework, the 2.6.54 reference install, the synthetic project):
//!   `cat` of its inputs, `compile cold` (`--force`), `compile warm` (nothing changed: the
//!   fingerprint's `stat`s), and, in process, `watch rebuild` (a `sensors:` edit of one stage,
//!   counted only inside [`measured_watch_rebuild`] with callgrind's `--toggle-collect`): the
//!   first edit of that file in the session, and a later one.
//!
//! - on `aidlc init --example` (an intent whose current stage has deliverables), the dispatcher:
//!   one `fire` of required-sections, the write hook on a write no sensor matches, and
//!   `gate check --no-record --format json` (beside `--version` only);
//! - on a copy of the 2.6.54 install with an intent at `intent-capture` (where every binding is
//!   write-fired): the write hook on a write of `intent-statement.md`, which fires the three
//!   document sensors claim-sources, required-sections and upstream-coverage, and one `fire` of
//!   required-sections on it (beside `--version` only).
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their generated projects directly on the disk and read back the files they measure, whole"
)]
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark harness reports on the terminal; it is not part of the engine"
)]

#[path = "../tests/support/synthetic.rs"]
#[expect(dead_code, reason = "a bench uses only the generators it measures")]
mod synthetic;

use std::collections::HashSet;
use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::Duration;

use aidlc::compile::discover::{LAYOUT_ENVIRONMENT_VARIABLES, Layout, Reread};
use aidlc::compile::watch::{OutputsState, WatchSession};
use aidlc::harness::Harness;
use camino::{Utf8Path, Utf8PathBuf};

use crate::synthetic::SyntheticProject;

/// The path of the `aidlc` binary Cargo built for this bench (optimised under `cargo bench`).
const AIDLC_BINARY: &str = env!("CARGO_BIN_EXE_aidlc");

/// The binary the process cases run: `AIDLC_BENCH_BINARY`, else [`AIDLC_BINARY`].
fn aidlc_binary() -> String {
    std::env::var("AIDLC_BENCH_BINARY").unwrap_or_else(|_| AIDLC_BINARY.to_owned())
}

/// Whether the in-process cases count the same code as the process cases.
fn in_process_cases_apply() -> bool {
    std::env::var_os("AIDLC_BENCH_BINARY").is_none()
}

const DEFAULT_SYNTHETIC_STAGE_COUNT: usize = 10_000;
const SYNTHETIC_SENSOR_COUNT: usize = 500;

/// The reference install the side-by-side rows compile (vendored test data; copied first).
const REFERENCE_INSTALL: &str = "tests/fixtures/reference-installs/2.6.54";

/// Longer than the fingerprint's racy window (2 s), so a no-op compile only `stat`s.
const SETTLE_PAST_RACY_WINDOW: Duration = Duration::from_millis(2_200);

/// The argument that makes this binary the measured child of an in-process case.
const CHILD_FLAG: &str = "--measure-watch-rebuild";

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    if arguments.get(1).map(String::as_str) == Some(CHILD_FLAG) {
        run_watch_rebuild_child(&arguments[2..]);
        return;
    }
    if !arguments.iter().any(|argument| argument == "--bench") {
        eprintln!("instructions: run it with `bash benches/instructions.sh`; skipped");
        return;
    }
    if !valgrind_is_installed() {
        eprintln!(
            "instructions: `valgrind` is not on PATH; install it (Debian: `apt-get install valgrind`)"
        );
        std::process::exit(2);
    }
    let settings = Settings::from_environment();
    let projects = [
        BenchProject::default_framework(&settings),
        BenchProject::reference_install(&settings),
        BenchProject::synthetic(&settings),
    ];
    let version = Case::process("process start: aidlc --version", version_command(), None);
    let mut rows = Vec::new();
    let version_count = measure(&version, &settings);
    rows.push(Row {
        name: version.name.clone(),
        instructions: version_count,
        baseline: None,
    });
    for project in &projects {
        eprintln!("== {}", project.name);
        project.compile_once_natively();
        let mut cat_count = None;
        for case in cases_for(project) {
            if !settings.selects(&case.name)
                || (case.toggle_collect.is_some() && !in_process_cases_apply())
            {
                continue;
            }
            if case.settle_first {
                project.settle_the_fingerprint();
            }
            let instructions = measure(&case, &settings);
            if case.is_cat_baseline {
                cat_count = Some(instructions);
            }
            rows.push(Row {
                name: case.name.clone(),
                instructions,
                baseline: if case.is_cat_baseline {
                    None
                } else {
                    cat_count
                },
            });
        }
    }
    let example = ExampleIntent::new(&settings);
    eprintln!("== {}", ExampleIntent::NAME);
    for case in example.cases() {
        if !settings.selects(&case.name) {
            continue;
        }
        rows.push(Row {
            name: case.name.clone(),
            instructions: measure(&case, &settings),
            baseline: None,
        });
    }
    let hook_intent = ReferenceHookIntent::new(&settings);
    eprintln!("== {}", ReferenceHookIntent::NAME);
    for case in hook_intent.cases() {
        if !settings.selects(&case.name) {
            continue;
        }
        rows.push(Row {
            name: case.name.clone(),
            instructions: measure(&case, &settings),
            baseline: None,
        });
    }
    print_report(&settings, version_count, &rows);
}

/// A copy of the 2.6.54 install with an intent at `intent-capture` and a one-section
/// `intent-statement.md`: a write of it fires the stage's three document sensors.
struct ReferenceHookIntent {
    _temp_dir: Option<tempfile::TempDir>,
    root: Utf8PathBuf,
    deliverable: Utf8PathBuf,
    payload: Utf8PathBuf,
}

impl ReferenceHookIntent {
    const NAME: &'static str = "2.6.54 install, intent at intent-capture";
    const RECORD: &'static str = "aidlc/spaces/default/intents/260901-bench";

    fn new(settings: &Settings) -> Self {
        let (temp_dir, root) = settings.project_folder("reference-hook");
        let source = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE_INSTALL);
        copy_folder(&source, &root);
        let record = root.join(Self::RECORD);
        let deliverable = record.join("ideation/intent-capture/intent-statement.md");
        std::fs::create_dir_all(deliverable.parent().expect("a parent")).expect("mkdir");
        std::fs::write(
            record.join("aidlc-state.md"),
            "# AI-DLC State Tracking\n\n## Current Status\n- **Current Stage**: intent-capture\n",
        )
        .expect("write the state");
        std::fs::write(&deliverable, "# Intent\n\n## Scope\n\nOne section only.\n")
            .expect("write the deliverable");
        let payload = root.join(".bench-payload.json");
        std::fs::write(
            &payload,
            serde_json::json!({
                "tool_name": "Write",
                "tool_input": {"file_path": deliverable.as_str()},
            })
            .to_string(),
        )
        .expect("write the hook's payload");
        Self {
            _temp_dir: temp_dir,
            root,
            deliverable,
            payload,
        }
    }

    fn cases(&self) -> Vec<Case> {
        let name = |what: &str| format!("{}: {what}", Self::NAME);
        let aidlc = |arguments: &[&str]| {
            let mut command = Command::new(aidlc_binary());
            command.args(arguments).current_dir(&self.root);
            command
        };
        let mut hook = Case::process(
            &name("write hook, three document sensors"),
            aidlc(&["engine", "hook", "run-sensors"]),
            None,
        );
        hook.stdin_file = Some(self.payload.clone());
        vec![
            hook,
            Case::process(
                &name("fire required-sections"),
                aidlc(&[
                    "engine",
                    "sensor",
                    "fire",
                    "required-sections",
                    "--stage",
                    "intent-capture",
                    "--output-path",
                    self.deliverable.as_str(),
                ]),
                None,
            ),
        ]
    }
}

/// `aidlc init --example`, compiled: an intent whose current stage has deliverables, for the
/// dispatcher's cases (one fire, the write hook with no match, a gate check).
struct ExampleIntent {
    _temp_dir: Option<tempfile::TempDir>,
    root: Utf8PathBuf,
    /// The example's `requirements.md`, which `required-sections` checks.
    requirements: Utf8PathBuf,
    /// The write hook's payload: a write of a file no sensor matches.
    unmatched_write_payload: Utf8PathBuf,
}

impl ExampleIntent {
    const NAME: &'static str = "example intent";

    fn new(settings: &Settings) -> Self {
        let (temp_dir, root) = settings.project_folder("example-intent");
        let mut init = Command::new(aidlc_binary());
        init.args(["init", root.as_str(), "--example"]);
        run_natively(&init);
        run_natively(&compile_command(&root, false));
        let intents = root.join("aidlc/spaces/default/intents");
        let requirements = intents
            .read_dir_utf8()
            .expect("read the example's intents")
            .filter_map(Result::ok)
            .map(|entry| {
                entry
                    .path()
                    .join("inception/requirements-analysis/requirements.md")
            })
            .find(|path| path.is_file())
            .expect("the example intent has a requirements.md");
        let unmatched_write_payload = root.join(".bench-unmatched-write.json");
        std::fs::write(
            &unmatched_write_payload,
            serde_json::json!({
                "tool_name": "Write",
                "tool_input": {"file_path": root.join("notes.txt").as_str()},
            })
            .to_string(),
        )
        .expect("write the hook's payload");
        Self {
            _temp_dir: temp_dir,
            root,
            requirements,
            unmatched_write_payload,
        }
    }

    fn cases(&self) -> Vec<Case> {
        let name = |what: &str| format!("{}: {what}", Self::NAME);
        let aidlc = |arguments: &[&str]| {
            let mut command = Command::new(aidlc_binary());
            command.args(arguments).current_dir(&self.root);
            command
        };
        let mut hook = Case::process(
            &name("write hook, no sensor matches"),
            aidlc(&["engine", "hook", "run-sensors"]),
            None,
        );
        hook.stdin_file = Some(self.unmatched_write_payload.clone());
        vec![
            Case::process(
                &name("fire required-sections"),
                aidlc(&[
                    "engine",
                    "sensor",
                    "fire",
                    "required-sections",
                    "--stage",
                    "requirements-analysis",
                    "--output-path",
                    self.requirements.as_str(),
                ]),
                None,
            ),
            hook,
            Case::process(
                &name("gate check --no-record (json)"),
                aidlc(&["gate", "check", "--no-record", "--format", "json"]),
                None,
            ),
        ]
    }
}

/// What the environment asks for.
struct Settings {
    synthetic_stage_count: usize,
    case_filter: Vec<String>,
    keep_folder: Option<Utf8PathBuf>,
}

impl Settings {
    fn from_environment() -> Self {
        let synthetic_stage_count = match std::env::var("AIDLC_BENCH_STAGES") {
            Ok(text) => text
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("AIDLC_BENCH_STAGES={text:?} is not a whole number")),
            Err(_) => DEFAULT_SYNTHETIC_STAGE_COUNT,
        };
        assert!(
            synthetic_stage_count > 0,
            "AIDLC_BENCH_STAGES must be at least 1"
        );
        let case_filter = std::env::var("AIDLC_BENCH_CASES")
            .map(|text| {
                text.split(',')
                    .map(str::trim)
                    .filter(|word| !word.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let keep_folder = std::env::var("AIDLC_BENCH_KEEP").ok().map(|folder| {
            let folder = Utf8PathBuf::from(folder);
            std::fs::create_dir_all(&folder).expect("create the AIDLC_BENCH_KEEP folder");
            folder
        });
        Self {
            synthetic_stage_count,
            case_filter,
            keep_folder,
        }
    }

    fn selects(&self, case_name: &str) -> bool {
        self.case_filter.is_empty()
            || self
                .case_filter
                .iter()
                .any(|word| case_name.contains(word.as_str()))
    }

    /// A fresh folder named `name`: under `AIDLC_BENCH_KEEP` (emptied first) or temporary.
    fn project_folder(&self, name: &str) -> (Option<tempfile::TempDir>, Utf8PathBuf) {
        if let Some(keep) = &self.keep_folder {
            let folder = keep.join(name);
            if folder.exists() {
                std::fs::remove_dir_all(&folder).expect("empty the kept project folder");
            }
            std::fs::create_dir_all(&folder).expect("create the kept project folder");
            return (None, folder);
        }
        let temp_dir = tempfile::tempdir().expect("temp dir");
        let root =
            Utf8PathBuf::from_path_buf(temp_dir.path().to_path_buf()).expect("UTF-8 temp dir path");
        (Some(temp_dir), root)
    }
}

/// A project on disk and the stage the watch case edits.
struct BenchProject {
    name: String,
    _temp_dir: Option<tempfile::TempDir>,
    root: Utf8PathBuf,
    /// Project-relative.
    edited_stage: Utf8PathBuf,
}

impl BenchProject {
    fn default_framework(settings: &Settings) -> Self {
        let (temp_dir, root) = settings.project_folder("default-framework");
        aidlc::compile::framework::init_project(&root, Harness::Claude, false).expect("aidlc init");
        Self {
            name: "default framework".to_owned(),
            _temp_dir: temp_dir,
            root,
            edited_stage: Utf8PathBuf::from(
                ".claude/aidlc-common/stages/inception/requirements-analysis.md",
            ),
        }
    }

    fn reference_install(settings: &Settings) -> Self {
        let (temp_dir, root) = settings.project_folder("reference-2.6.54");
        let source = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE_INSTALL);
        copy_folder(&source, &root);
        Self {
            name: "2.6.54 reference install".to_owned(),
            _temp_dir: temp_dir,
            root,
            edited_stage: Utf8PathBuf::from(
                ".claude/aidlc-common/stages/inception/requirements-analysis.md",
            ),
        }
    }

    fn synthetic(settings: &Settings) -> Self {
        let stages = settings.synthetic_stage_count;
        let (temp_dir, root) = settings.project_folder(&format!("synthetic-{stages}"));
        let synthetic = SyntheticProject::new(stages, SYNTHETIC_SENSOR_COUNT);
        synthetic
            .write_to(&root)
            .expect("write the synthetic project");
        Self {
            name: format!("synthetic {stages} stages, {SYNTHETIC_SENSOR_COUNT} sensors"),
            _temp_dir: temp_dir,
            root,
            edited_stage: synthetic.stage_path(stages / 2),
        }
    }

    /// The outputs exist before anything is measured, so `compile cold` rewrites nothing and
    /// every case reads the same files.
    fn compile_once_natively(&self) {
        let output = run_natively(&compile_command(&self.root, true));
        assert!(
            output.starts_with("compiled "),
            "the first compile of {} failed: {output}",
            self.name
        );
    }

    /// Compile, wait past the racy window, compile again: the next no-op only `stat`s.
    fn settle_the_fingerprint(&self) {
        run_natively(&compile_command(&self.root, false));
        std::thread::sleep(SETTLE_PAST_RACY_WINDOW);
        run_natively(&compile_command(&self.root, false));
    }
}

/// Every case measured on `project`, in report order. The first is the `cat` baseline the
/// others are divided by.
fn cases_for(project: &BenchProject) -> Vec<Case> {
    let name = |what: &str| format!("{}: {what}", project.name);
    let mut cat = Case::process(
        &name("cat of the inputs"),
        cat_command(&project.root),
        Some(""),
    );
    cat.is_cat_baseline = true;
    let mut warm = Case::process(
        &name("compile warm (nothing changed)"),
        compile_command(&project.root, false),
        Some("up to date:"),
    );
    warm.settle_first = true;
    vec![
        cat,
        Case::process(
            &name("compile cold (--force)"),
            compile_command(&project.root, true),
            Some("compiled "),
        ),
        warm,
    ]
    .into_iter()
    .chain([WatchEdit::First, WatchEdit::Later].map(|edit| {
        Case::in_process(
            &name(edit.case_name()),
            vec![
                project.root.to_string(),
                project.edited_stage.to_string(),
                edit.argument().to_owned(),
            ],
        )
    }))
    .collect()
}

/// One measured program.
struct Case {
    name: String,
    command: Command,
    /// What stderr must start with (`Some("")`: must be empty); `None`: not checked.
    stderr_starts_with: Option<&'static str>,
    /// Count only inside functions matching this callgrind pattern (in-process cases).
    toggle_collect: Option<&'static str>,
    is_cat_baseline: bool,
    /// Settle the project's fingerprint first (for a no-op compile).
    settle_first: bool,
    /// A file given to the process as its standard input (the write hook's payload).
    stdin_file: Option<Utf8PathBuf>,
}

impl Case {
    fn process(name: &str, command: Command, stderr_starts_with: Option<&'static str>) -> Self {
        Self {
            name: name.to_owned(),
            command,
            stderr_starts_with,
            toggle_collect: None,
            is_cat_baseline: false,
            settle_first: false,
            stdin_file: None,
        }
    }

    /// This bench binary again, as the child [`run_watch_rebuild_child`], counting only the
    /// rebuild itself.
    fn in_process(name: &str, arguments: Vec<String>) -> Self {
        let mut command =
            Command::new(std::env::current_exe().expect("the path of this bench binary"));
        command.arg(CHILD_FLAG).args(arguments);
        Self {
            name: name.to_owned(),
            command,
            stderr_starts_with: Some(""),
            toggle_collect: Some("*measured_watch_rebuild*"),
            is_cat_baseline: false,
            settle_first: false,
            stdin_file: None,
        }
    }
}

/// One line of the report.
struct Row {
    name: String,
    instructions: u64,
    /// The `cat` count of the same project.
    baseline: Option<u64>,
}

fn valgrind_is_installed() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Run `case` once under callgrind and return the instructions it executed.
fn measure(case: &Case, settings: &Settings) -> u64 {
    eprintln!("  {}", case.name);
    let (_temp_dir, out_folder) = if let Some(keep) = &settings.keep_folder {
        (None, keep.clone())
    } else {
        let temp_dir = tempfile::tempdir().expect("temp dir");
        let folder =
            Utf8PathBuf::from_path_buf(temp_dir.path().to_path_buf()).expect("UTF-8 temp dir path");
        (Some(temp_dir), folder)
    };
    let out_file = out_folder.join(format!("callgrind.{}.out", file_stem(&case.name)));
    let mut command = Command::new("valgrind");
    command
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={out_file}"))
        .arg("--log-file=/dev/null");
    if let Some(pattern) = case.toggle_collect {
        command.arg(format!("--toggle-collect={pattern}"));
    }
    command.arg(case.command.get_program());
    command.args(case.command.get_args());
    if let Some(folder) = case.command.get_current_dir() {
        command.current_dir(folder);
    }
    for name in LAYOUT_ENVIRONMENT_VARIABLES {
        command.env_remove(name);
    }
    let output = command
        .stdin(match &case.stdin_file {
            Some(path) => Stdio::from(
                std::fs::File::open(path).unwrap_or_else(|error| panic!("open {path}: {error}")),
            ),
            None => Stdio::null(),
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|error| panic!("cannot run valgrind for {}: {error}", case.name));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} failed under callgrind with {}: {stderr}",
        case.name,
        output.status
    );
    if let Some(prefix) = case.stderr_starts_with {
        let ok = if prefix.is_empty() {
            stderr.is_empty()
        } else {
            stderr.starts_with(prefix)
        };
        assert!(
            ok,
            "{}: stderr does not start with {prefix:?}: {stderr}",
            case.name
        );
    }
    let text = std::fs::read_to_string(&out_file)
        .unwrap_or_else(|error| panic!("cannot read {out_file}: {error}"));
    let instructions = callgrind_total(&text)
        .unwrap_or_else(|| panic!("no `summary:` or `totals:` line in {out_file}"));
    assert!(instructions > 0, "{}: callgrind counted nothing", case.name);
    instructions
}

/// The `summary:` (else `totals:`) line of a callgrind output file: the events of the whole run,
/// or of the toggled parts under `--toggle-collect`.
fn callgrind_total(text: &str) -> Option<u64> {
    ["summary:", "totals:"].iter().find_map(|label| {
        text.lines()
            .find_map(|line| line.strip_prefix(label))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|count| count.parse().ok())
    })
}

fn file_stem(case_name: &str) -> String {
    case_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn version_command() -> Command {
    let mut command = Command::new(aidlc_binary());
    command.arg("--version");
    command
}

fn compile_command(project_root: &Utf8Path, force: bool) -> Command {
    let mut command = Command::new(aidlc_binary());
    command.arg("compile");
    if force {
        command.arg("--force");
    }
    command.arg("--project-dir").arg(project_root.as_str());
    command
}

/// `cat` over every file the compile reads or compares (project-relative, sorted).
fn cat_command(project_root: &Utf8Path) -> Command {
    let mut command = Command::new("cat");
    command
        .args(input_files(project_root))
        .current_dir(project_root);
    command
}

/// Every `*.md` under `.claude/` and `aidlc/`, plus both outputs.
fn input_files(project_root: &Utf8Path) -> Vec<OsString> {
    let mut files = Vec::new();
    for top_folder in [".claude", "aidlc"] {
        collect_markdown_files(project_root, &project_root.join(top_folder), &mut files);
    }
    for output in [
        ".claude/tools/data/stage-graph.json",
        ".claude/tools/data/scope-grid.json",
    ] {
        if project_root.join(output).is_file() {
            files.push(Utf8PathBuf::from(output));
        }
    }
    files.sort();
    files.into_iter().map(OsString::from).collect()
}

fn collect_markdown_files(
    project_root: &Utf8Path,
    folder: &Utf8Path,
    files: &mut Vec<Utf8PathBuf>,
) {
    let Ok(entries) = folder.read_dir_utf8() else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("read a folder entry");
        let file_type = entry.file_type().expect("file type of a folder entry");
        if file_type.is_dir() {
            collect_markdown_files(project_root, entry.path(), files);
        } else if file_type.is_file() && entry.path().extension() == Some("md") {
            let relative = entry
                .path()
                .strip_prefix(project_root)
                .expect("a file under the project folder");
            files.push(relative.to_owned());
        }
    }
}

fn copy_folder(source: &Utf8Path, target: &Utf8Path) {
    std::fs::create_dir_all(target).expect("create a folder of the copy");
    for entry in source.read_dir_utf8().expect("read a folder to copy") {
        let entry = entry.expect("read a folder entry");
        let destination = target.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_folder(entry.path(), &destination);
        } else {
            std::fs::copy(entry.path(), &destination).expect("copy a file");
        }
    }
}

/// Run `command` natively; panics unless it exits 0. Returns its stderr.
fn run_natively(command: &Command) -> String {
    let mut copy = Command::new(command.get_program());
    copy.args(command.get_args());
    for name in LAYOUT_ENVIRONMENT_VARIABLES {
        copy.env_remove(name);
    }
    let output = copy
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {copy:?}: {error}"));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{copy:?} failed with {}: {stderr}",
        output.status
    );
    stderr
}

// ---------------------------------------------------------------------------------------------
// The in-process child
// ---------------------------------------------------------------------------------------------

/// Which edit of the stage the in-process watch case counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WatchEdit {
    /// The first edit of the file in the session (large projects lower the file's durability
    /// then, so its own memos re-run once: see `aidlc::compile::discover::durability_for`).
    First,
    /// An edit after the file was already edited and restored once: the steady state of
    /// someone working on a stage.
    Later,
}

impl WatchEdit {
    fn argument(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::Later => "later",
        }
    }

    fn case_name(self) -> &'static str {
        match self {
            Self::First => "watch rebuild, first sensors: edit of a file (in process)",
            Self::Later => "watch rebuild, a later sensors: edit (in process)",
        }
    }

    fn from_argument(argument: &str) -> Self {
        match argument {
            "first" => Self::First,
            "later" => Self::Later,
            other => panic!("unknown watch edit {other:?} (expected first or later)"),
        }
    }
}

/// `<bench binary> --measure-watch-rebuild <project> <stage> first|later`: start a watch
/// session, put one more sensor id into the stage's `sensors:` list (for `later`, after one
/// such edit and its undo, uncounted), and rebuild. Only that rebuild is counted.
fn run_watch_rebuild_child(arguments: &[String]) {
    let [project_root, edited_stage, edit] = arguments else {
        panic!("usage: {CHILD_FLAG} <project folder> <project-relative stage path> first|later");
    };
    let edit = WatchEdit::from_argument(edit);
    let project_root = Utf8PathBuf::from(project_root);
    let layout = Layout::new(&project_root, Harness::Claude, &|_| None);
    let (mut session, first) = WatchSession::start(layout);
    assert_eq!(first.outcome.n_errors(), 0, "the first compile has errors");
    let stage_path = project_root.join(edited_stage);
    let original = std::fs::read_to_string(&stage_path).expect("read the edited stage");
    let extra_sensor_id = sensor_id_the_stage_does_not_list(&project_root, &original);
    let edited = with_extra_sensor_line(&original, &extra_sensor_id);
    let changed: HashSet<Utf8PathBuf> = [stage_path.clone()].into_iter().collect();
    if edit == WatchEdit::Later {
        for text in [&edited, &original] {
            std::fs::write(&stage_path, text).expect("write the edited stage");
            let warm_up = session.rebuild(Reread::Paths(&changed));
            assert!(
                warm_up.is_some_and(|rebuild| rebuild.outcome.n_errors() == 0),
                "an uncounted edit did not rebuild cleanly"
            );
        }
    }
    std::fs::write(&stage_path, &edited).expect("write the edited stage");
    // On a pool of one thread, so that callgrind's toggle, which follows only the thread that
    // entered `measured_watch_rebuild`, counts every instruction of the rebuild (a large
    // project's rebuild otherwise runs half of its work on another thread, uncounted).
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a rayon pool of one thread");
    let rebuild = one_thread.install(|| measured_watch_rebuild(&mut session, &changed));
    std::fs::write(&stage_path, original).expect("restore the edited stage");
    // The outputs go back to the project's own, so the next case reads what the first did.
    let restored = session.rebuild(Reread::Paths(&changed));
    assert!(
        restored.is_some_and(|restored| restored.outcome.n_errors() == 0),
        "restoring the edited stage did not rebuild cleanly"
    );
    let rebuild = rebuild.expect("the edit changed an input");
    assert_eq!(rebuild.outcome.n_errors(), 0, "the rebuild has errors");
    assert!(
        matches!(
            rebuild.outputs,
            OutputsState::Written(summary) if summary.graph_written
        ),
        "the rebuild did not write a new graph: {:?}",
        rebuild.outputs
    );
}

/// The counted part of the in-process case: refresh, compile, write.
#[inline(never)]
fn measured_watch_rebuild(
    session: &mut WatchSession,
    changed: &HashSet<Utf8PathBuf>,
) -> Option<aidlc::compile::watch::Rebuild> {
    session.rebuild(Reread::Paths(changed))
}

/// A sensor id of the project that the stage's `sensors:` list does not name.
fn sensor_id_the_stage_does_not_list(project_root: &Utf8Path, stage_text: &str) -> String {
    let listed: Vec<&str> = stage_text
        .lines()
        .skip_while(|line| *line != "sensors:")
        .skip(1)
        .map_while(|line| line.strip_prefix("  - "))
        .map(str::trim)
        .collect();
    let mut ids: Vec<String> = project_root
        .join(".claude/sensors")
        .read_dir_utf8()
        .expect("read the sensors folder")
        .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path()).ok())
        .filter_map(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("id: "))
                .map(|id| id.trim().to_owned())
        })
        .collect();
    ids.sort();
    ids.into_iter()
        .find(|id| !listed.contains(&id.as_str()))
        .expect("a sensor the edited stage does not list yet")
}

/// The stage text with `  - <sensor_id>` as the first entry of its `sensors:` list.
fn with_extra_sensor_line(stage_text: &str, sensor_id: &str) -> String {
    let marker = "\nsensors:\n";
    let insert_at = stage_text
        .find(marker)
        .expect("the edited stage has a block `sensors:` list")
        + marker.len();
    format!(
        "{}  - {sensor_id}\n{}",
        &stage_text[..insert_at],
        &stage_text[insert_at..]
    )
}

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

fn print_report(settings: &Settings, version_count: u64, rows: &[Row]) {
    println!();
    println!("## aidlc instruction counts (callgrind)");
    println!();
    println!("- binary: `{}`", aidlc_binary());
    println!(
        "- synthetic project: {} stages, {SYNTHETIC_SENSOR_COUNT} sensors",
        settings.synthetic_stage_count
    );
    println!(
        "- user-space instructions of every thread, one run each; in-process rows count only the rebuild"
    );
    println!();
    println!("| case | instructions | ÷ `aidlc --version` | ÷ `cat` of the inputs |");
    println!("|---|--:|--:|--:|");
    for row in rows {
        let per_cat = row.baseline.map_or_else(String::new, |cat| {
            format!("{:.2}×", ratio(row.instructions, cat))
        });
        println!(
            "| {} | {} | {:.2}× | {per_cat} |",
            row.name,
            thousands(row.instructions),
            ratio(row.instructions, version_count)
        );
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "instruction counts are far below 2^52; the ratio is printed to two decimals"
)]
fn ratio(numerator: u64, denominator: u64) -> f64 {
    numerator as f64 / denominator as f64
}

fn thousands(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
