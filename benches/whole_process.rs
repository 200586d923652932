//! Whole-process timings of the real `aidlc` binary, against baselines measured in the same run.
//!
//! Run it with `cargo bench --bench whole_process` (a few minutes: most of it is the
//! 10,000-stage project). For a quick pass:
//! `AIDLC_BENCH_STAGES=1000 AIDLC_BENCH_RUNS=5 AIDLC_BENCH_EDITS=6 cargo bench --bench whole_process`.
//!
//! Two projects, each in a temporary folder: the default framework (`aidlc init`) and a
//! synthetic project of `AIDLC_BENCH_STAGES` stages (default 10,000) and 500 sensors.
//!
//! For each project, the median wall time of `AIDLC_BENCH_RUNS` runs (default 21, after one
//! untimed warm-up run) of:
//! - `process start`: `aidlc --version`, the floor of starting the process at all;
//! - `stat`: `stat --format=%s` over every input file and both outputs;
//! - `cat`: `cat` over the same files;
//! - `noop`: `aidlc compile` when nothing changed (the fingerprint check), after a settle that
//!   lets every file leave the fingerprint's 2-second "racy" window;
//! - `cold`: `aidlc compile --force`, a full compile whose outputs already hold the same bytes.
//!
//! Then the latency of `aidlc compile --watch --format json --debounce-ms 10`: for each of
//! `AIDLC_BENCH_EDITS` edits (default 20) of one stage file, the time from `std::fs::write`
//! returning to the `rebuild` event line naming that file arriving on the pipe (the tool prints
//! it after the outputs are on disk), the same minus the debounce delay, and the event's own
//! `duration_ms` (refresh, compile and write, without the debounce). One round toggles a
//! `sensors:` entry, so the graph really changes; another appends a line of prose.
//!
//! Every child gets stdin and stdout from `/dev/null`; stderr is captured through a pipe so each
//! run can be checked (exit status 0, `up to date:` for a no-op, `compiled ` for a forced
//! compile, nothing at all on stderr for the baselines, and 0 errors in every watch event), so a
//! fast wrong answer cannot pass.
//!
//! Last, side by side with the reference on a copy of the 2.6.54 install it made
//! (`tests/fixtures/reference-installs/2.6.54`, plus one intent on `requirements-analysis` with a
//! one-section `requirements.md`), the median of `AIDLC_BENCH_RUNS` runs of each of:
//! - `cold compile`: `aidlc compile --force` / `bun .claude/tools/aidlc-graph.ts compile`;
//! - `process start`: `aidlc --version`, the floor every other row is also divided by;
//! - `hook, matching write`: `aidlc engine hook run-sensors` / `bun
//!   .claude/hooks/aidlc-run-sensors.ts`, the same `PostToolUse` payload on stdin (a write of
//!   `requirements.md`, which both shipped sensors of the stage match);
//! - `hook, three document sensors`: the same on a second copy whose intent is at
//!   `intent-capture`, a write of `intent-statement.md`, which claim-sources, required-sections
//!   and upstream-coverage all match;
//! - `fire required-sections`: `aidlc engine sensor fire required-sections …` / `bun
//!   .claude/tools/aidlc-sensor.ts fire required-sections …` on that file;
//!
//! and the exit status of the reference's `compile --check` on the tree `aidlc compile` wrote.
//! Every run is checked: exit 0, the graph's bytes unchanged by either compile, and two (three)
//! more `SENSOR_FIRED` rows in the ledger after each hook run (one after each fire). The reference
//! runs only when Bun is found (`AIDLC_TEST_NODE_TOOLS/bun`, as `.ci/install-node-tools` prints
//! it, else `bun` on `PATH`); without it only our column is printed. `AIDLC_BENCH_REFERENCE_ONLY=1`
//! runs this part alone.
//!
//! Then `aidlc gate check --no-record` in each report format beside `--format json`, measured in
//! interleaved rounds (so a noisy moment hits every format alike), on the example intent of
//! `aidlc init --example` and on a project of 200 deliverables across 20 stages (shipped
//! `required-sections` and `upstream-coverage`, a third of the deliverables failing): the
//! median per format and its ratio to json. Each run's stdout must be non-empty and its exit
//! status 0. In the same rounds, a recorded `--format json` run (audit rows and detail files
//! written), reported beside `--no-record`. `AIDLC_BENCH_GATE_ONLY=1` runs only this part.
//!
//! `AIDLC_BENCH_BINARY` times another `aidlc` binary instead of this bench's own build (a build
//! of `main`, say, run right before or after, for before and after figures on one machine).
//!
//! These are wall-clock figures on a shared, noisy machine: read the medians and the ratios, not
//! the third digit. The tables go to stdout; progress goes to stderr.
//!
//! ## What the speed twins gain
//!
//! Four hand-written paths stand beside a general one and are kept for what they gain on a
//! command people run. `bash benches/twins.sh` measures each on one release build in which it
//! can be bypassed (`benches/twins_bypass.patch`, not shipped), both sides in the same run, as
//! callgrind's instruction counts, exact where wall-clock medians on a loaded two-core machine
//! could not resolve a millisecond. Its table (`aidlc --version`: 1.73 M):
//!
//! | command | twin | with it | general path | cost of the general path |
//! | --- | --- | --- | --- | --- |
//! | `aidlc compile --force`, default framework | `pretty_writer` | 15.63 M | 19.18 M | +23 % |
//! | `aidlc compile --force`, default framework | YAML block subset | 15.59 M | 22.66 M | +45 % |
//! | `aidlc compile --force`, 2.6.54 install | YAML block subset | 18.41 M | 25.13 M | +37 % |
//! | hook, matching write | glob `segments` | 3.87 M | 5.16 M | +33 % |
//! | hook, three document sensors | glob `segments` | 4.37 M | 6.35 M | +45 % |
//! | hook, matching write | `quick_parse` | 3.89 M | 5.11 M | +31 % |
//! | hook, three document sensors | `quick_parse` | 4.40 M | 5.61 M | +28 % |
//! | `engine sensor fire required-sections` | `quick_parse` | 3.37 M | 4.68 M | +39 % |
//!
//! - `src/protocol/pretty_writer.rs`, the graph's writer, beside `js_json::pretty_json` of a
//!   `serde_json` value of each node (the same bytes, which the script checks with `cmp`); in
//!   wall time, `aidlc compile --force` on the 10,000-stage synthetic project, median of 8
//!   interleaved runs: 1,666 ms (523 ms CPU) with the writer, 2,006 ms (623 ms CPU) without.
//! - `src/protocol/glob/segments.rs`, the folder-by-folder matcher, beside globset's regex
//!   (compiled at a glob's first match).
//! - `src/cli/quick_parse.rs`, the write hook's and `fire`'s command lines read without clap's
//!   command tree, beside clap.
//! - `src/compile/syntax/yaml_subset.rs`, the block-style frontmatter read without the general
//!   YAML parser, beside that parser (the same outputs, which the script checks with `cmp`).
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

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use aidlc::compile::discover::LAYOUT_ENVIRONMENT_VARIABLES;
use aidlc::harness::Harness;
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::synthetic::SyntheticProject;

/// The path of the `aidlc` binary Cargo built for this bench (optimised under `cargo bench`).
const AIDLC_BINARY: &str = env!("CARGO_BIN_EXE_aidlc");

/// The binary every measurement runs: `AIDLC_BENCH_BINARY` (another build, such as one of
/// `main`, for before and after figures on the same machine), else [`AIDLC_BINARY`].
fn aidlc_binary() -> String {
    std::env::var("AIDLC_BENCH_BINARY").unwrap_or_else(|_| AIDLC_BINARY.to_owned())
}

const DEFAULT_SYNTHETIC_STAGE_COUNT: usize = 10_000;
const SYNTHETIC_SENSOR_COUNT: usize = 500;
const DEFAULT_RUNS_PER_MEASUREMENT: usize = 21;
const DEFAULT_EDITS_PER_WATCH_ROUND: usize = 20;

/// `--debounce-ms` of the watched process.
const WATCH_DEBOUNCE_MS: u64 = 10;

/// Longer than the fingerprint's racy window (2 s), so every file's stamp can be trusted.
const SETTLE_PAST_RACY_WINDOW: Duration = Duration::from_millis(2_200);

/// Quiet time before each edit, so every edit is a batch of its own.
const PAUSE_BEFORE_EACH_EDIT: Duration = Duration::from_millis(300);

/// How long to wait for any one watch event before giving up.
const WATCH_EVENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The stage the watch rounds edit in the default framework.
const DEFAULT_FRAMEWORK_EDITED_STAGE: &str =
    ".claude/aidlc-common/stages/inception/requirements-analysis.md";

/// The line the prose round appends to (and then removes from) the edited stage.
const APPENDED_PROSE_LINE: &str = "\nA paragraph appended by the whole-process bench.\n";

/// The stage graph, relative to the project folder.
const STAGE_GRAPH_PATH: &str = ".claude/tools/data/stage-graph.json";
const SCOPE_GRID_PATH: &str = ".claude/tools/data/scope-grid.json";

fn main() {
    if !std::env::args().any(|argument| argument == "--bench") {
        eprintln!("whole_process: run it with `cargo bench --bench whole_process`; skipped");
        return;
    }
    let settings = BenchSettings::from_environment();
    if std::env::var("AIDLC_BENCH_REFERENCE_ONLY").as_deref() != Ok("1") {
        eprintln!("== gate check formats");
        let gate_rows = [
            measure_gate_formats("example intent", &GateBenchProject::example(), &settings),
            measure_gate_formats(
                "200 deliverables, 20 stages",
                &GateBenchProject::two_hundred_deliverables(),
                &settings,
            ),
        ];
        print_gate_format_table(&gate_rows);
        if std::env::var_os("AIDLC_BENCH_GATE_ONLY").is_some() {
            return;
        }
        let mut notes = Vec::new();
        let projects = [
            BenchProject::default_framework(),
            BenchProject::synthetic(settings.synthetic_stage_count),
        ];
        let mut process_rows = Vec::new();
        let mut watch_rows = Vec::new();
        for project in &projects {
            eprintln!("== {}", project.name);
            process_rows.push(measure_process_timings(project, &settings, &mut notes));
            watch_rows.push(measure_watch_latency(project, &settings, &mut notes));
        }
        print_report(&settings, &process_rows, &watch_rows, &notes);
    }
    eprintln!("== beside the reference (2.6.54)");
    reference::measure_and_report(settings.runs_per_measurement);
}

/// What the environment asks for.
struct BenchSettings {
    synthetic_stage_count: usize,
    runs_per_measurement: usize,
    edits_per_watch_round: usize,
}

impl BenchSettings {
    fn from_environment() -> Self {
        let settings = Self {
            synthetic_stage_count: usize_from_environment(
                "AIDLC_BENCH_STAGES",
                DEFAULT_SYNTHETIC_STAGE_COUNT,
            ),
            runs_per_measurement: usize_from_environment(
                "AIDLC_BENCH_RUNS",
                DEFAULT_RUNS_PER_MEASUREMENT,
            ),
            edits_per_watch_round: usize_from_environment(
                "AIDLC_BENCH_EDITS",
                DEFAULT_EDITS_PER_WATCH_ROUND,
            ),
        };
        assert!(
            settings.synthetic_stage_count > 0,
            "AIDLC_BENCH_STAGES must be at least 1"
        );
        assert!(
            settings.runs_per_measurement > 0,
            "AIDLC_BENCH_RUNS must be at least 1"
        );
        assert!(
            settings.edits_per_watch_round > 0,
            "AIDLC_BENCH_EDITS must be at least 1"
        );
        settings
    }
}

fn usize_from_environment(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a whole number")),
        Err(_) => default,
    }
}

/// A project in a temporary folder, and the stage the watch rounds edit.
struct BenchProject {
    name: String,
    _temp_dir: tempfile::TempDir,
    root: Utf8PathBuf,
    /// Project-relative, with `/`: exactly what a watch event's `changed` list says.
    edited_stage: Utf8PathBuf,
}

impl BenchProject {
    fn default_framework() -> Self {
        let (temp_dir, root) = empty_temp_dir();
        aidlc::compile::framework::init_project(&root, Harness::Claude, false).expect("aidlc init");
        Self {
            name: "default framework".to_owned(),
            _temp_dir: temp_dir,
            root,
            edited_stage: Utf8PathBuf::from(DEFAULT_FRAMEWORK_EDITED_STAGE),
        }
    }

    fn synthetic(stage_count: usize) -> Self {
        let (temp_dir, root) = empty_temp_dir();
        let synthetic = SyntheticProject::new(stage_count, SYNTHETIC_SENSOR_COUNT);
        synthetic
            .write_to(&root)
            .expect("write the synthetic project");
        Self {
            name: format!("synthetic {stage_count} stages"),
            _temp_dir: temp_dir,
            root,
            edited_stage: synthetic.stage_path(stage_count / 2),
        }
    }

    fn edited_stage_on_disk(&self) -> Utf8PathBuf {
        self.root.join(&self.edited_stage)
    }
}

fn empty_temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let temp_dir = tempfile::tempdir().expect("temp dir");
    let root =
        Utf8PathBuf::from_path_buf(temp_dir.path().to_path_buf()).expect("UTF-8 temp dir path");
    (temp_dir, root)
}

// ---------------------------------------------------------------------------------------------
// One-shot processes
// ---------------------------------------------------------------------------------------------

/// The medians of one project's one-shot measurements.
struct ProcessTimingsRow {
    project_name: String,
    input_and_output_file_count: usize,
    files_checked_by_noop: usize,
    process_start: Duration,
    stat_baseline: Duration,
    cat_baseline: Duration,
    noop_compile: Duration,
    cold_compile: Duration,
}

fn measure_process_timings(
    project: &BenchProject,
    settings: &BenchSettings,
    notes: &mut Vec<String>,
) -> ProcessTimingsRow {
    let first_compile = run_once_and_check_exit_status(&compile_command(project, true));
    assert!(
        first_compile.stderr.starts_with("compiled "),
        "the first compile of {} did not compile: {}",
        project.name,
        first_compile.stderr
    );
    let files = input_and_output_files(&project.root);
    let runs = settings.runs_per_measurement;

    eprintln!("  process start");
    let process_start = median_wall_time(runs, version_command, expect_empty_stderr);
    eprintln!("  stat over {} files", files.len());
    let stat_baseline = median_wall_time(
        runs,
        || baseline_command("stat", &["--format=%s"], &project.root, &files),
        expect_empty_stderr,
    );
    eprintln!("  cat over {} files", files.len());
    let cat_baseline = median_wall_time(
        runs,
        || baseline_command("cat", &[], &project.root, &files),
        expect_empty_stderr,
    );

    eprintln!("  cold (compile --force)");
    let mut cold_compiles_that_wrote = 0;
    let cold_compile = median_wall_time(
        runs,
        || compile_command(project, true),
        |stderr| {
            assert!(
                stderr.starts_with("compiled "),
                "a forced compile of {} did not compile: {stderr}",
                project.name
            );
            if stderr.contains("; wrote ") {
                cold_compiles_that_wrote += 1;
            }
        },
    );
    if cold_compiles_that_wrote > 0 {
        notes.push(format!(
            "{}: {cold_compiles_that_wrote} forced compiles wrote an output (expected none: the outputs were already up to date)",
            project.name
        ));
    }

    eprintln!("  noop (compile), after a {SETTLE_PAST_RACY_WINDOW:?} settle");
    settle_the_fingerprint(project);
    let mut noop_runs_that_rehashed = 0;
    let mut files_checked_by_noop = 0;
    let noop_compile = median_wall_time(
        runs,
        || compile_command(project, false),
        |stderr| {
            assert!(
                stderr.starts_with("up to date:"),
                "a no-op compile of {} did not say `up to date:`: {stderr}",
                project.name
            );
            if stderr.contains("re-hashed") {
                noop_runs_that_rehashed += 1;
            }
            files_checked_by_noop = files_checked_in_noop_message(stderr);
        },
    );
    if noop_runs_that_rehashed > 0 {
        notes.push(format!(
            "{}: {noop_runs_that_rehashed} no-op runs re-hashed files despite the settle",
            project.name
        ));
    }
    if files_checked_by_noop != files.len() {
        notes.push(format!(
            "{}: the baselines read {} files but the no-op checked {files_checked_by_noop}",
            project.name,
            files.len()
        ));
    }

    ProcessTimingsRow {
        project_name: project.name.clone(),
        input_and_output_file_count: files.len(),
        files_checked_by_noop,
        process_start,
        stat_baseline,
        cat_baseline,
        noop_compile,
        cold_compile,
    }
}

/// Compile once, wait until every file is older than the fingerprint's racy window, and compile
/// once more: that run re-hashes the files that were too recent and records their settled
/// stamps, so the timed no-op runs only `stat`.
fn settle_the_fingerprint(project: &BenchProject) {
    run_once_and_check_exit_status(&compile_command(project, false));
    std::thread::sleep(SETTLE_PAST_RACY_WINDOW);
    run_once_and_check_exit_status(&compile_command(project, false));
}

/// `N` in `up to date: ... (...; N files checked ...)`.
fn files_checked_in_noop_message(stderr: &str) -> usize {
    let before = stderr
        .split(" files checked")
        .next()
        .expect("split gives at least one part");
    let number = before
        .rsplit(' ')
        .next()
        .expect("rsplit gives at least one part");
    number
        .parse()
        .unwrap_or_else(|_| panic!("no file count in the no-op message: {stderr}"))
}

/// `aidlc --version`, without the layout overrides.
fn version_command() -> Command {
    let mut command = Command::new(aidlc_binary());
    for name in LAYOUT_ENVIRONMENT_VARIABLES {
        command.env_remove(name);
    }
    command.arg("--version");
    command
}

/// `aidlc compile [--force] --project-dir <root>`.
fn compile_command(project: &BenchProject, force: bool) -> Command {
    let mut command = Command::new(aidlc_binary());
    for name in LAYOUT_ENVIRONMENT_VARIABLES {
        command.env_remove(name);
    }
    command.arg("compile");
    if force {
        command.arg("--force");
    }
    command.arg("--project-dir").arg(project.root.as_str());
    command
}

/// `program <options...> <files...>`, run in the project folder with project-relative paths.
fn baseline_command(
    program: &str,
    options: &[&str],
    project_root: &Utf8Path,
    project_relative_files: &[OsString],
) -> Command {
    let mut command = Command::new(program);
    command
        .args(options)
        .args(project_relative_files)
        .current_dir(project_root);
    command
}

/// What the timed run of one child process gave.
struct FinishedRun {
    wall_time: Duration,
    stderr: String,
}

/// Run `command` to the end: stdin and stdout `/dev/null`, stderr captured. Panics unless it
/// exits with status 0.
fn run_once_and_check_exit_status(command: &Command) -> FinishedRun {
    let mut command = copy_of_command(command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let wall_time = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{command:?} failed with {}: {stderr}",
        output.status
    );
    FinishedRun { wall_time, stderr }
}

/// `Command` is not `Clone`; rebuild one from its program, arguments, folder and environment.
fn copy_of_command(command: &Command) -> Command {
    let mut copy = Command::new(command.get_program());
    copy.args(command.get_args());
    if let Some(folder) = command.get_current_dir() {
        copy.current_dir(folder);
    }
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => copy.env(name, value),
            None => copy.env_remove(name),
        };
    }
    copy
}

/// One untimed warm-up run, then the median wall time of `runs` runs; every run's stderr goes
/// through `check_stderr`.
fn median_wall_time(
    runs: usize,
    make_command: impl Fn() -> Command,
    mut check_stderr: impl FnMut(&str),
) -> Duration {
    let warm_up = run_once_and_check_exit_status(&make_command());
    check_stderr(&warm_up.stderr);
    let mut wall_times: Vec<Duration> = (0..runs)
        .map(|_| {
            let run = run_once_and_check_exit_status(&make_command());
            check_stderr(&run.stderr);
            run.wall_time
        })
        .collect();
    median_duration(&mut wall_times)
}

fn expect_empty_stderr(stderr: &str) {
    assert!(
        stderr.is_empty(),
        "expected nothing on stderr, got: {stderr}"
    );
}

/// Every `*.md` under `.claude/` and `aidlc/`, plus both outputs: project-relative, sorted.
fn input_and_output_files(project_root: &Utf8Path) -> Vec<OsString> {
    let mut files = Vec::new();
    for top_folder in [".claude", "aidlc"] {
        collect_markdown_files(project_root, &project_root.join(top_folder), &mut files);
    }
    for output in [STAGE_GRAPH_PATH, SCOPE_GRID_PATH] {
        assert!(
            project_root.join(output).is_file(),
            "{output} is missing after the first compile"
        );
        files.push(Utf8PathBuf::from(output));
    }
    files.sort();
    files.into_iter().map(OsString::from).collect()
}

fn collect_markdown_files(
    project_root: &Utf8Path,
    folder: &Utf8Path,
    files: &mut Vec<Utf8PathBuf>,
) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("read a folder entry");
        let path = Utf8PathBuf::from_path_buf(entry.path()).expect("UTF-8 file path");
        let file_type = entry.file_type().expect("file type of a folder entry");
        if file_type.is_dir() {
            collect_markdown_files(project_root, &path, files);
        } else if file_type.is_file() && path.extension() == Some("md") {
            let relative = path
                .strip_prefix(project_root)
                .expect("a file under the project folder");
            files.push(relative.to_owned());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Watch latency
// ---------------------------------------------------------------------------------------------

/// The medians of one round of edits.
struct WatchRoundRow {
    project_name: String,
    round_name: &'static str,
    edit_count: usize,
    latency: Duration,
    latency_minus_debounce: Duration,
    event_duration_ms: f64,
    /// How many events said each `stage_graph` value.
    stage_graph_values: BTreeMap<String, usize>,
}

fn measure_watch_latency(
    project: &BenchProject,
    settings: &BenchSettings,
    notes: &mut Vec<String>,
) -> Vec<WatchRoundRow> {
    let edits = settings.edits_per_watch_round;
    let stage_path = project.edited_stage_on_disk();
    let mut watch = WatchedProcess::start(&project.root);
    watch.wait_for_first_rebuild_and_watching();

    eprintln!(
        "  watch: {edits} sensor-list edits of {}",
        project.edited_stage
    );
    let original = std::fs::read_to_string(&stage_path).expect("read the edited stage");
    let extra_sensor_id = sensor_id_the_stage_does_not_list(&project.root, &original);
    let with_extra_sensor = with_extra_sensor_line(&original, &extra_sensor_id);
    let sensor_round = run_edit_round(
        &mut watch,
        project,
        [&original, &with_extra_sensor],
        edits,
        "sensors edit",
        notes,
    );
    for (value, count) in &sensor_round.stage_graph_values {
        assert_eq!(
            value, "written",
            "{count} sensor-list edits of {} did not rewrite the stage graph",
            project.name
        );
    }

    eprintln!("  watch: {edits} prose edits of {}", project.edited_stage);
    let current = std::fs::read_to_string(&stage_path).expect("read the edited stage");
    let with_appended_prose = format!("{current}{APPENDED_PROSE_LINE}");
    let prose_round = run_edit_round(
        &mut watch,
        project,
        [&current, &with_appended_prose],
        edits,
        "prose edit",
        notes,
    );
    if prose_round
        .stage_graph_values
        .keys()
        .any(|value| value != "unchanged")
    {
        notes.push(format!(
            "{}: prose edits gave stage_graph {:?} (expected only \"unchanged\")",
            project.name, prose_round.stage_graph_values
        ));
    }

    watch.stop_with_ctrl_c();
    vec![sensor_round, prose_round]
}

/// Write `texts[1]`, `texts[0]`, `texts[1]`, ... (`edits` writes; the file holds `texts[0]` to
/// begin with), timing each from the write to the `rebuild` event that names the file.
fn run_edit_round(
    watch: &mut WatchedProcess,
    project: &BenchProject,
    texts: [&str; 2],
    edits: usize,
    round_name: &'static str,
    notes: &mut Vec<String>,
) -> WatchRoundRow {
    let stage_path = project.edited_stage_on_disk();
    let mut latencies = Vec::new();
    let mut event_durations_ms = Vec::new();
    let mut stage_graph_values = BTreeMap::new();
    let mut rebuilds_with_errors = 0;
    for edit in 0..edits {
        std::thread::sleep(PAUSE_BEFORE_EACH_EDIT);
        std::fs::write(&stage_path, texts[(edit + 1) % 2]).expect("write the edited stage");
        let written_at = Instant::now();
        let (event, errored_rebuilds) = watch.wait_for_clean_rebuild_naming(&project.edited_stage);
        rebuilds_with_errors += errored_rebuilds;
        latencies.push(event.received_at.duration_since(written_at));
        event_durations_ms.push(
            event.value["duration_ms"]
                .as_f64()
                .expect("duration_ms is a number"),
        );
        let stage_graph = event.value["stage_graph"]
            .as_str()
            .expect("stage_graph is a string")
            .to_owned();
        *stage_graph_values.entry(stage_graph).or_insert(0) += 1;
    }
    if rebuilds_with_errors > 0 {
        notes.push(format!(
            "{} ({round_name}s): {rebuilds_with_errors} rebuilds saw the stage half-written (errors > 0) before the clean one",
            project.name
        ));
    }
    let latency = median_duration(&mut latencies);
    WatchRoundRow {
        project_name: project.name.clone(),
        round_name,
        edit_count: edits,
        latency,
        latency_minus_debounce: latency.saturating_sub(Duration::from_millis(WATCH_DEBOUNCE_MS)),
        event_duration_ms: median_f64(&mut event_durations_ms),
        stage_graph_values,
    }
}

/// A sensor id from `.claude/sensors/*.md` that the stage's `sensors:` list does not name.
fn sensor_id_the_stage_does_not_list(project_root: &Utf8Path, stage_text: &str) -> String {
    let listed = sensor_ids_listed_by_stage(stage_text);
    sensor_ids_on_disk(project_root)
        .into_iter()
        .find(|id| !listed.contains(id))
        .expect("a sensor the edited stage does not list yet")
}

/// The `  - <id>` lines right after `sensors:` in the stage's frontmatter.
fn sensor_ids_listed_by_stage(stage_text: &str) -> Vec<String> {
    stage_text
        .lines()
        .skip_while(|line| *line != "sensors:")
        .skip(1)
        .map_while(|line| line.strip_prefix("  - "))
        .map(|id| id.trim().to_owned())
        .collect()
}

/// The `id:` of every sensor manifest, sorted.
fn sensor_ids_on_disk(project_root: &Utf8Path) -> Vec<String> {
    let sensors_folder = project_root.join(".claude/sensors");
    let mut ids: Vec<String> = std::fs::read_dir(&sensors_folder)
        .expect("read the sensors folder")
        .map(|entry| entry.expect("read a folder entry").path())
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .filter_map(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("id: "))
                .map(|id| id.trim().to_owned())
        })
        .collect();
    ids.sort();
    ids
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

/// One line of the watched process's stdout, parsed, with the moment it was read.
struct ReceivedEvent {
    received_at: Instant,
    value: Value,
}

/// `aidlc compile --watch --format json` running on a project, its events read on a thread.
struct WatchedProcess {
    child: Child,
    events: Receiver<ReceivedEvent>,
}

impl WatchedProcess {
    fn start(project_root: &Utf8Path) -> Self {
        let mut command = Command::new(aidlc_binary());
        for name in LAYOUT_ENVIRONMENT_VARIABLES {
            command.env_remove(name);
        }
        command
            .args(["compile", "--watch", "--format", "json", "--debounce-ms"])
            .arg(WATCH_DEBOUNCE_MS.to_string())
            .arg("--project-dir")
            .arg(project_root.as_str())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
        let stdout = child.stdout.take().expect("the watch's stdout is piped");
        let (sender, events) = mpsc::channel();
        std::thread::spawn(move || read_events_until_end_of_output(stdout, &sender));
        Self { child, events }
    }

    fn next_event(&self) -> ReceivedEvent {
        match self.events.recv_timeout(WATCH_EVENT_TIMEOUT) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no watch event within {WATCH_EVENT_TIMEOUT:?}")
            }
            Err(RecvTimeoutError::Disconnected) => panic!("the watch process closed its stdout"),
        }
    }

    /// The first compile's `rebuild` (error-free), then `watching`.
    fn wait_for_first_rebuild_and_watching(&self) {
        let first = self.next_event();
        assert_eq!(
            first.value["event"], "rebuild",
            "first event: {}",
            first.value
        );
        assert_eq!(first.value["first"], true, "first event: {}", first.value);
        assert_eq!(first.value["errors"], 0, "first event: {}", first.value);
        let second = self.next_event();
        assert_eq!(
            second.value["event"], "watching",
            "second event: {}",
            second.value
        );
    }

    /// The next error-free `rebuild` whose `changed` names `project_relative_path`, and how
    /// many rebuilds naming it had errors before it (a write caught half-done).
    fn wait_for_clean_rebuild_naming(
        &self,
        project_relative_path: &Utf8Path,
    ) -> (ReceivedEvent, usize) {
        let mut rebuilds_with_errors = 0;
        loop {
            let event = self.next_event();
            match event.value["event"].as_str() {
                Some("rebuild") => {}
                Some("watcher-error") => panic!("the watcher reported an error: {}", event.value),
                _ => panic!("unexpected watch event: {}", event.value),
            }
            let names_the_file = event.value["changed"]
                .as_array()
                .expect("changed is a list")
                .iter()
                .any(|path| path.as_str() == Some(project_relative_path.as_str()));
            if !names_the_file {
                continue;
            }
            if event.value["errors"] == 0 {
                return (event, rebuilds_with_errors);
            }
            rebuilds_with_errors += 1;
        }
    }

    /// `kill -INT <pid>`, then wait: the process must say `stopped` and exit with 130.
    fn stop_with_ctrl_c(mut self) {
        let kill_status = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(kill_status.success(), "kill -INT failed: {kill_status}");
        let exit_status = self.child.wait().expect("wait for the watch process");
        assert_eq!(
            exit_status.code(),
            Some(130),
            "the watch process did not exit with 130 on Ctrl-C: {exit_status}"
        );
        let last = std::iter::from_fn(|| self.events.recv().ok()).last();
        let last = last.expect("an event after Ctrl-C");
        assert_eq!(last.value["event"], "stopped", "last event: {}", last.value);
    }
}

/// Read JSON lines until the process closes stdout; stamp each line as it arrives.
fn read_events_until_end_of_output(stdout: ChildStdout, sender: &mpsc::Sender<ReceivedEvent>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { return };
        let received_at = Instant::now();
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("a watch line is not JSON ({error}): {line}"));
        if sender.send(ReceivedEvent { received_at, value }).is_err() {
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics and the report
// ---------------------------------------------------------------------------------------------

fn median_duration(values: &mut [Duration]) -> Duration {
    assert!(!values.is_empty(), "the median of nothing");
    values.sort_unstable();
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2
    }
}

fn median_f64(values: &mut [f64]) -> f64 {
    assert!(!values.is_empty(), "the median of nothing");
    values.sort_unstable_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        f64::midpoint(values[middle - 1], values[middle])
    }
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn ratio(numerator: Duration, denominator: Duration) -> String {
    format!(
        "{:.2}×",
        numerator.as_secs_f64() / denominator.as_secs_f64()
    )
}

fn print_report(
    settings: &BenchSettings,
    process_rows: &[ProcessTimingsRow],
    watch_rows: &[Vec<WatchRoundRow>],
    notes: &[String],
) {
    let threads = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!();
    println!("## aidlc whole-process timings");
    println!();
    println!("- binary: `{}`", aidlc_binary());
    println!("- available parallelism: {threads}");
    println!(
        "- median of {} runs per measurement (after one warm-up run); wall clock on a noisy machine",
        settings.runs_per_measurement
    );
    println!();
    print_process_table(process_rows);
    println!();
    println!(
        "Watch latency: `compile --watch --format json --debounce-ms {WATCH_DEBOUNCE_MS}` (D = {WATCH_DEBOUNCE_MS} ms), median of the edits in each round."
    );
    println!();
    print_watch_table(watch_rows.iter().flatten());
    println!();
    if notes.is_empty() {
        println!("Notes: none (every no-op said `up to date:` without re-hashing).");
    } else {
        println!("Notes:");
        for note in notes {
            println!("- {note}");
        }
    }
}

fn print_process_table(rows: &[ProcessTimingsRow]) {
    println!(
        "| project | files | process start | stat | cat | noop | cold | noop/stat | cold/cat | cold/noop |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for row in rows {
        let files = if row.files_checked_by_noop == row.input_and_output_file_count {
            row.input_and_output_file_count.to_string()
        } else {
            format!(
                "{} (noop checked {})",
                row.input_and_output_file_count, row.files_checked_by_noop
            )
        };
        println!(
            "| {} | {files} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.project_name,
            milliseconds(row.process_start),
            milliseconds(row.stat_baseline),
            milliseconds(row.cat_baseline),
            milliseconds(row.noop_compile),
            milliseconds(row.cold_compile),
            ratio(row.noop_compile, row.stat_baseline),
            ratio(row.cold_compile, row.cat_baseline),
            ratio(row.cold_compile, row.noop_compile),
        );
    }
}

fn print_watch_table<'a>(rows: impl Iterator<Item = &'a WatchRoundRow>) {
    println!(
        "| project | edit | edits | latency | latency − D | duration_ms (event) | stage_graph |"
    );
    println!("|---|---|--:|--:|--:|--:|---|");
    for row in rows {
        let stage_graph_values = row
            .stage_graph_values
            .iter()
            .map(|(value, count)| format!("{value} ×{count}"))
            .collect::<Vec<_>>()
            .join(", ");
        println!(
            "| {} | {} | {} | {} | {} | {:.2} ms | {stage_graph_values} |",
            row.project_name,
            row.round_name,
            row.edit_count,
            milliseconds(row.latency),
            milliseconds(row.latency_minus_debounce),
            row.event_duration_ms,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Side by side with the reference on its own 2.6.54 install (issue 12)
// ---------------------------------------------------------------------------------------------

mod reference {
    use std::process::{Command, Output, Stdio};
    use std::time::{Duration, Instant};

    use camino::{Utf8Path, Utf8PathBuf};

    use super::{LAYOUT_ENVIRONMENT_VARIABLES, STAGE_GRAPH_PATH, aidlc_binary, median_duration};

    const RECORD: &str = "aidlc/spaces/default/intents/260901-bench";
    const STAGE: &str = "requirements-analysis";
    const DELIVERABLE: &str =
        "aidlc/spaces/default/intents/260901-bench/inception/requirements-analysis/requirements.md";
    /// The stage of the second copy, whose three shipped sensors are the document sensors.
    const THREE_SENSOR_STAGE: &str = "intent-capture";
    const THREE_SENSOR_DELIVERABLE: &str =
        "aidlc/spaces/default/intents/260901-bench/ideation/intent-capture/intent-statement.md";

    /// One row: the reference's median (when Bun is there) and ours.
    struct Row {
        name: &'static str,
        reference: Option<Duration>,
        ours: Duration,
    }

    pub(super) fn measure_and_report(runs: usize) {
        let (_temp_dir, root) = install_copy(STAGE, DELIVERABLE);
        let (_three_dir, three_root) = install_copy(THREE_SENSOR_STAGE, THREE_SENSOR_DELIVERABLE);
        let bun = find_bun();
        let payload = write_payload(&root, DELIVERABLE);
        let three_payload = write_payload(&three_root, THREE_SENSOR_DELIVERABLE);
        let graph = std::fs::read(root.join(STAGE_GRAPH_PATH)).expect("read the graph");
        let path_with_bun = bun.as_ref().map(|bun| {
            format!(
                "{}:{}",
                bun.parent().expect("bun's folder"),
                std::env::var("PATH").unwrap_or_default()
            )
        });

        // The reference's hook does nothing before its clone has a shard: one fire of each
        // engine first, which also proves both fire the same file.
        let mut fired = fired_count(&root);
        check_ours_fire(&root, &mut fired);
        if let (Some(bun), Some(path)) = (&bun, &path_with_bun) {
            timed(&reference_fire(bun, &root, path), None);
            fired = expect_more_fires(&root, fired, 1, "the reference's fire");
        }

        let mut rows = Vec::new();
        let version_ours = median(runs, || timed(&ours(&root, &["--version"]), None).0);
        rows.push(Row {
            name: "process start (`aidlc --version`)",
            reference: None,
            ours: version_ours,
        });
        let compile_ours = median(runs, || {
            let (time, output) = timed(&ours(&root, &["compile", "--force"]), None);
            assert_eq!(std::fs::read(root.join(STAGE_GRAPH_PATH)).unwrap(), graph);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("compiled "), "{stderr}");
            time
        });
        let compile_reference = bun.as_ref().zip(path_with_bun.as_ref()).map(|(bun, path)| {
            median(runs, || {
                let mut command = bun_command(bun, &root, path);
                command.args([".claude/tools/aidlc-graph.ts", "compile"]);
                let (time, _) = timed(&command, None);
                assert_eq!(std::fs::read(root.join(STAGE_GRAPH_PATH)).unwrap(), graph);
                time
            })
        });
        rows.push(Row {
            name: "cold compile",
            reference: compile_reference,
            ours: compile_ours,
        });

        let hook_ours = median(runs, || {
            let (time, output) = timed(
                &ours(&root, &["engine", "hook", "run-sensors"]),
                Some(&payload),
            );
            assert!(output.stdout.is_empty(), "the hook printed on stdout");
            fired = expect_more_fires(&root, fired, 2, "our hook");
            time
        });
        let hook_reference = bun.as_ref().zip(path_with_bun.as_ref()).map(|(bun, path)| {
            median(runs, || {
                let mut command = bun_command(bun, &root, path);
                command.arg(".claude/hooks/aidlc-run-sensors.ts");
                let (time, _) = timed(&command, Some(&payload));
                fired = expect_more_fires(&root, fired, 2, "the reference's hook");
                time
            })
        });
        rows.push(Row {
            name: "hook, matching write",
            reference: hook_reference,
            ours: hook_ours,
        });

        // The second copy: its clone needs a shard before the reference's hook does anything.
        let mut three_fired = fired_count(&three_root);
        if let (Some(bun), Some(path)) = (&bun, &path_with_bun) {
            let fire = reference_fire_on(
                bun,
                &three_root,
                path,
                THREE_SENSOR_STAGE,
                THREE_SENSOR_DELIVERABLE,
            );
            timed(&fire, None);
            three_fired = expect_more_fires(&three_root, three_fired, 1, "the reference's fire");
        }
        let three_ours = median(runs, || {
            let (time, output) = timed(
                &ours(&three_root, &["engine", "hook", "run-sensors"]),
                Some(&three_payload),
            );
            assert!(output.stdout.is_empty(), "the hook printed on stdout");
            three_fired = expect_more_fires(&three_root, three_fired, 3, "our hook");
            time
        });
        let three_reference = bun.as_ref().zip(path_with_bun.as_ref()).map(|(bun, path)| {
            median(runs, || {
                let mut command = bun_command(bun, &three_root, path);
                command.arg(".claude/hooks/aidlc-run-sensors.ts");
                let (time, _) = timed(&command, Some(&three_payload));
                three_fired =
                    expect_more_fires(&three_root, three_fired, 3, "the reference's hook");
                time
            })
        });
        rows.push(Row {
            name: "hook, three document sensors",
            reference: three_reference,
            ours: three_ours,
        });

        let fire_ours = median(runs, || {
            let (time, _) = check_ours_fire(&root, &mut fired);
            time
        });
        let fire_reference = bun.as_ref().zip(path_with_bun.as_ref()).map(|(bun, path)| {
            median(runs, || {
                let (time, _) = timed(&reference_fire(bun, &root, path), None);
                fired = expect_more_fires(&root, fired, 1, "the reference's fire");
                time
            })
        });
        rows.push(Row {
            name: "fire required-sections",
            reference: fire_reference,
            ours: fire_ours,
        });

        // The reference's drift guard on the tree aidlc compiled last.
        let check_status = bun.as_ref().zip(path_with_bun.as_ref()).map(|(bun, path)| {
            timed(&ours(&root, &["compile", "--force"]), None);
            let mut command = bun_command(bun, &root, path);
            command.args([".claude/tools/aidlc-graph.ts", "compile", "--check"]);
            let status = command
                .stdin(Stdio::null())
                .output()
                .expect("run the reference's compile --check")
                .status;
            status.code().map_or_else(
                || "killed by a signal".to_owned(),
                |code| format!("exit {code}"),
            )
        });
        report(runs, &rows, version_ours, bun.as_deref(), check_status);
    }

    /// The hook's `PostToolUse` payload for a write of `deliverable`, in a file of `root`.
    fn write_payload(root: &Utf8Path, deliverable: &str) -> Utf8PathBuf {
        let payload = root.join(".bench-payload.json");
        std::fs::write(
            &payload,
            serde_json::json!({
                "tool_name": "Write",
                "tool_input": {"file_path": root.join(deliverable).as_str()},
            })
            .to_string(),
        )
        .expect("write the payload");
        payload
    }

    /// A copy of the vendored 2.6.54 install with the bench's intent at `stage`, and a
    /// one-section `deliverable`.
    fn install_copy(stage: &str, deliverable: &str) -> (tempfile::TempDir, Utf8PathBuf) {
        let temp_dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::from_path_buf(temp_dir.path().canonicalize().expect("canonical"))
            .expect("UTF-8 temp dir");
        let fixture = Utf8Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference-installs/2.6.54");
        copy_tree(&fixture, &root);
        let write = |relative: &str, text: &str| {
            let path = root.join(relative);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(
            &format!("{RECORD}/aidlc-state.md"),
            &format!(
                "# AI-DLC State Tracking\n\n## Current Status\n- **Current Stage**: {stage}\n"
            ),
        );
        write(
            deliverable,
            "# Requirements\n\n## Scope\n\nOne section only.\n",
        );
        (temp_dir, root)
    }

    fn copy_tree(from: &Utf8Path, to: &Utf8Path) {
        std::fs::create_dir_all(to).expect("create the copy's folder");
        for entry in from.read_dir_utf8().expect("list a fixture folder") {
            let entry = entry.expect("a fixture entry");
            let target = to.join(entry.file_name());
            if entry.file_type().expect("its type").is_dir() {
                copy_tree(entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy a fixture file");
            }
        }
    }

    /// `AIDLC_TEST_NODE_TOOLS/bun`, else the first `bun` on `PATH`.
    fn find_bun() -> Option<Utf8PathBuf> {
        let from_tools = std::env::var("AIDLC_TEST_NODE_TOOLS")
            .ok()
            .map(|folder| Utf8PathBuf::from(folder).join("bun"));
        let on_path = || {
            std::env::var("PATH").ok().and_then(|path| {
                path.split(':')
                    .map(|folder| Utf8PathBuf::from(folder).join("bun"))
                    .find(|candidate| candidate.is_file())
            })
        };
        let bun = from_tools.filter(|bun| bun.is_file()).or_else(on_path);
        if bun.is_none() {
            eprintln!(
                "whole_process: no Bun (run `.ci/install-node-tools` and set AIDLC_TEST_NODE_TOOLS): the reference is not run"
            );
        }
        bun
    }

    fn ours(root: &Utf8Path, args: &[&str]) -> Command {
        let mut command = Command::new(aidlc_binary());
        for name in LAYOUT_ENVIRONMENT_VARIABLES {
            command.env_remove(name);
        }
        command.args(args).current_dir(root);
        command
    }

    fn bun_command(bun: &Utf8Path, root: &Utf8Path, path: &str) -> Command {
        let mut command = Command::new(bun);
        for name in LAYOUT_ENVIRONMENT_VARIABLES {
            command.env_remove(name);
        }
        command.current_dir(root).env("PATH", path);
        command
    }

    /// The reference's fire of required-sections on the first copy's deliverable.
    fn reference_fire(bun: &Utf8Path, root: &Utf8Path, path: &str) -> Command {
        reference_fire_on(bun, root, path, STAGE, DELIVERABLE)
    }

    fn reference_fire_on(
        bun: &Utf8Path,
        root: &Utf8Path,
        path: &str,
        stage: &str,
        deliverable: &str,
    ) -> Command {
        let mut command = bun_command(bun, root, path);
        command.args([
            ".claude/tools/aidlc-sensor.ts",
            "fire",
            "required-sections",
            "--stage",
            stage,
            "--output-path",
            root.join(deliverable).as_str(),
        ]);
        command
    }

    /// Our fire, checked: exit 0, a `failed` verdict line (the deliverable has one section),
    /// and one more fire in the ledger.
    fn check_ours_fire(root: &Utf8Path, fired: &mut usize) -> (Duration, Output) {
        let deliverable = root.join(DELIVERABLE);
        let command = ours(
            root,
            &[
                "engine",
                "sensor",
                "fire",
                "required-sections",
                "--stage",
                STAGE,
                "--output-path",
                deliverable.as_str(),
            ],
        );
        let (time, output) = timed(&command, None);
        let verdict: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("a verdict line");
        assert_eq!(verdict["result"], "failed", "{verdict}");
        *fired = expect_more_fires(root, *fired, 1, "our fire");
        (time, output)
    }

    /// Run `command` to the end (stdin from `stdin`, else nothing), panicking unless it exits 0.
    fn timed(command: &Command, stdin: Option<&Utf8Path>) -> (Duration, Output) {
        let mut copy = super::copy_of_command(command);
        copy.stdin(match stdin {
            Some(file) => Stdio::from(std::fs::File::open(file).expect("open the payload")),
            None => Stdio::null(),
        });
        let started = Instant::now();
        let output = copy
            .output()
            .unwrap_or_else(|error| panic!("cannot run {copy:?}: {error}"));
        let time = started.elapsed();
        assert!(
            output.status.success(),
            "{copy:?} failed with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        (time, output)
    }

    /// One untimed warm-up, then the median of `runs` timed runs.
    fn median(runs: usize, mut run: impl FnMut() -> Duration) -> Duration {
        run();
        let mut times: Vec<Duration> = (0..runs).map(|_| run()).collect();
        median_duration(&mut times)
    }

    /// `SENSOR_FIRED` rows in every shard of the bench's record.
    fn fired_count(root: &Utf8Path) -> usize {
        let Ok(entries) = root.join(RECORD).join("audit").read_dir_utf8() else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
            .map(|text| text.matches("**Event**: SENSOR_FIRED\n").count())
            .sum()
    }

    fn expect_more_fires(root: &Utf8Path, before: usize, more: usize, what: &str) -> usize {
        let now = fired_count(root);
        assert_eq!(now, before + more, "{what} did not fire {more} sensor(s)");
        now
    }

    fn report(
        runs: usize,
        rows: &[Row],
        process_start: Duration,
        bun: Option<&Utf8Path>,
        check_status: Option<String>,
    ) {
        println!();
        println!("## Beside the reference (2.6.54 install, whole process)");
        println!();
        println!("- binary: `{}`", aidlc_binary());
        match bun {
            Some(bun) => println!("- reference: Bun `{bun}`"),
            None => println!("- reference: not run (no Bun)"),
        }
        println!("- median of {runs} runs per measurement (after one warm-up run), same run");
        println!();
        println!("| measurement | reference | aidlc | reference / aidlc | aidlc / `--version` |");
        println!("|---|--:|--:|--:|--:|");
        for row in rows {
            let (reference, ratio) = match row.reference {
                Some(reference) => (
                    super::milliseconds(reference),
                    super::ratio(reference, row.ours),
                ),
                None => ("-".to_owned(), "-".to_owned()),
            };
            println!(
                "| {} | {reference} | {} | {ratio} | {} |",
                row.name,
                super::milliseconds(row.ours),
                super::ratio(row.ours, process_start)
            );
        }
        println!();
        match check_status {
            Some(status) => println!(
                "The reference's `compile --check` on the tree `aidlc compile` wrote: {status}."
            ),
            None => println!("The reference's `compile --check` was not run (no Bun)."),
        }
    }
}

// --- gate check per format ---------------------------------------------------------------------

/// The report formats timed: every format, json first (the baseline of the ratios).
fn gate_formats() -> Vec<&'static str> {
    let json = aidlc::report::ReportFormat::Json;
    std::iter::once(json)
        .chain(
            aidlc::report::ReportFormat::all()
                .iter()
                .copied()
                .filter(|format| *format != json),
        )
        .map(aidlc::report::ReportFormat::name)
        .collect()
}

/// A project for the gate-format timings, in a temporary folder.
struct GateBenchProject {
    _folder: tempfile::TempDir,
    root: Utf8PathBuf,
}

impl GateBenchProject {
    /// `aidlc init --example`, compiled.
    fn example() -> Self {
        let (folder, root) = empty_temp_dir();
        run_aidlc_in(&root, &["init", ".", "--example"]);
        run_aidlc_in(&root, &["compile"]);
        Self {
            _folder: folder,
            root,
        }
    }

    /// The default framework's sensors, 20 stages of 10 deliverables each gated by the shipped
    /// `required-sections` (per file) and `upstream-coverage` (per folder), every third
    /// deliverable with one heading only (a finding), compiled.
    fn two_hundred_deliverables() -> Self {
        let (folder, root) = empty_temp_dir();
        run_aidlc_in(&root, &["init", "."]);
        let stages_dir = root.join(".claude/aidlc-common/stages");
        std::fs::remove_dir_all(&stages_dir).expect("remove the framework's stages");
        let record = "aidlc/spaces/default/intents/261201-bench";
        write_file(
            &root.join(format!("{record}/aidlc-state.md")),
            "- **Current Stage**: stage-19\n",
        );
        for stage in 0..20 {
            let slug = format!("stage-{stage:02}");
            let produces = (0..10).fold(String::new(), |mut list, doc| {
                let _ = writeln!(list, "  - doc-{doc}");
                list
            });
            write_file(
                &stages_dir.join(format!("inception/{slug}.md")),
                &format!(
                    "---\nslug: {slug}\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-architect-agent\nsupport_agents: []\nmode: inline\nproduces:\n{produces}consumes: []\nrequires_stage: []\nsensors: [required-sections, upstream-coverage]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# {slug}\n"
                ),
            );
            for doc in 0..10 {
                let body = if (stage * 10 + doc) % 3 == 0 {
                    "# Doc\n\n## Only one section\n\nText.\n".to_owned()
                } else {
                    "# Doc\n\n## Context\n\nText.\n\n## Decision\n\nMore text.\n".to_owned()
                };
                write_file(
                    &root.join(format!("{record}/inception/{slug}/doc-{doc}.md")),
                    &body,
                );
            }
        }
        run_aidlc_in(&root, &["compile"]);
        Self {
            _folder: folder,
            root,
        }
    }
}

fn write_file(path: &Utf8Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folders");
    std::fs::write(path, text).expect("write a file");
}

fn run_aidlc_in(root: &Utf8Path, args: &[&str]) {
    let output = aidlc_gate_command(root, args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run aidlc");
    assert!(
        output.status.success(),
        "aidlc {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn aidlc_gate_command(root: &Utf8Path, args: &[&str]) -> Command {
    let mut command = Command::new(aidlc_binary());
    command.args(args).current_dir(root).stdin(Stdio::null());
    for name in LAYOUT_ENVIRONMENT_VARIABLES {
        command.env_remove(name);
    }
    command.env("NO_COLOR", "1");
    command
}

/// The median wall time of each format, in interleaved rounds, and of a recorded `--format
/// json` run in the same rounds.
struct GateFormatRow {
    name: &'static str,
    fires: u64,
    medians: Vec<(&'static str, Duration)>,
    recorded: Duration,
}

/// The name of the recorded run among the formats of a round.
const RECORDED: &str = "recorded";

fn measure_gate_formats(
    name: &'static str,
    project: &GateBenchProject,
    settings: &BenchSettings,
) -> GateFormatRow {
    let run = |format: &str| -> (Duration, String) {
        let started = Instant::now();
        // `recorded` is `--format json` writing its audit rows and detail files.
        let arguments: &[&str] = if format == RECORDED {
            &["gate", "check", "--quiet", "--format", "json"]
        } else {
            &[
                "gate",
                "check",
                "--no-record",
                "--quiet",
                "--format",
                format,
            ]
        };
        let output = aidlc_gate_command(&project.root, arguments)
            .stderr(Stdio::piped())
            .output()
            .expect("run aidlc gate check");
        let elapsed = started.elapsed();
        assert!(
            output.status.success(),
            "gate check --format {format} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            !stdout.trim().is_empty(),
            "--format {format} printed nothing"
        );
        (elapsed, stdout)
    };
    let (_, json) = run("json");
    let report: Value = serde_json::from_str(&json).expect("the json format is JSON");
    let fires = report["counts"]["fires"].as_u64().expect("a fire count");
    assert!(
        report["counts"]["failed"].as_u64() > Some(0),
        "{name}: no finding to render"
    );
    let mut times: BTreeMap<&str, Vec<Duration>> = BTreeMap::new();
    for _ in 0..settings.runs_per_measurement {
        for format in gate_formats().into_iter().chain([RECORDED]) {
            times.entry(format).or_default().push(run(format).0);
        }
    }
    let mut median_of = |format: &str| median_duration(times.get_mut(format).expect("timed"));
    GateFormatRow {
        name,
        fires,
        medians: gate_formats()
            .into_iter()
            .map(|format| (format, median_of(format)))
            .collect(),
        recorded: median_of(RECORDED),
    }
}

fn print_gate_format_table(rows: &[GateFormatRow]) {
    println!(
        "\n`aidlc gate check --no-record` per format (median; ratio to json in the same rounds)\n"
    );
    let mut header = String::from("| project | fires |");
    let mut rule = String::from("|---|--:|");
    for format in gate_formats() {
        let _ = write!(header, " {format} |");
        rule.push_str("--:|");
    }
    println!("{header}\n{rule}");
    for row in rows {
        let json = row.medians[0].1;
        let mut line = format!("| {} | {} |", row.name, row.fires);
        for (format, median) in &row.medians {
            if *format == "json" {
                let _ = write!(line, " {} |", milliseconds(*median));
            } else {
                let _ = write!(
                    line,
                    " {} ({}) |",
                    milliseconds(*median),
                    ratio(*median, json)
                );
            }
        }
        println!("{line}");
    }
    println!(
        "\n`aidlc gate check --format json`, recorded (audit rows, detail files) beside `--no-record`, same rounds\n"
    );
    println!("| project | fires | `--no-record` | recorded | ratio |\n|---|--:|--:|--:|--:|");
    for row in rows {
        let json = row.medians[0].1;
        println!(
            "| {} | {} | {} | {} | {} |",
            row.name,
            row.fires,
            milliseconds(json),
            milliseconds(row.recorded),
            ratio(row.recorded, json)
        );
    }
}
