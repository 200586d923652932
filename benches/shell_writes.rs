//! Whole-process timings of a shell tool call that changed nothing, against `aidlc --version`
//! measured in the same run.
//!
//! Run it with `cargo bench --bench shell_writes` (`AIDLC_BENCH_RUNS`, default 51, after two
//! untimed warm-up calls; `AIDLC_BENCH_BINARY` times another `aidlc` binary).
//!
//! Two projects, each a copy of the vendored 2.6.54 install (`tests/fixtures/reference-installs/
//! 2.6.54`) with one intent on `requirements-analysis`: the install alone, and the install plus
//! `AIDLC_BENCH_FILES` (default 10,000) small files in 100 folders. For each, the median wall
//! time of:
//! - `process start`: `aidlc --version`, the floor;
//! - `guard, Bash`: `aidlc engine hook guard` on a `PreToolUse` Bash payload (the verdict and
//!   the project's snapshot, re-stamped from the last one);
//! - `write hook, Bash`: `aidlc engine hook run-sensors` on the `PostToolUse` Bash payload of
//!   the same call (the re-stamp, the comparison, nothing fired);
//! - `both`: the two, one after the other: what a shell call that changed nothing costs;
//! - `guard, walking`: the guard with no earlier snapshot to re-stamp (the last one removed
//!   before each run), as after a call that changed a folder: it lists every folder.
//!
//! A snapshot re-stamps the last one only when every folder last changed 2 s before that one
//! was walked (`dispatch::project_snapshot::SETTLED_AFTER`): the bench waits that long after
//! making each project and after its first call (which makes the hooks-health folder), as for
//! a project at rest between an agent's calls.
//!
//! Every run is checked: exit 0 and nothing on stdout, and no audit row is written (a call that
//! changed nothing fires nothing). These are wall-clock figures on a shared, noisy machine:
//! read the medians and the ratios, not the third digit.
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their generated projects directly on the disk and read back the files they measure, whole"
)]
#![expect(
    clippy::print_stdout,
    reason = "a benchmark harness reports on the terminal; it is not part of the engine"
)]

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};

const AIDLC_BINARY: &str = env!("CARGO_BIN_EXE_aidlc");
const RECORD: &str = "aidlc/spaces/default/intents/261201-bench";
const DEFAULT_RUNS: usize = 51;
const DEFAULT_EXTRA_FILES: usize = 10_000;
/// Longer than `SETTLED_AFTER`, the age a folder needs for its stamp to vouch for its listing.
const SETTLE: Duration = Duration::from_millis(2_500);

fn main() {
    let runs = from_environment("AIDLC_BENCH_RUNS", DEFAULT_RUNS);
    let extra_files = from_environment("AIDLC_BENCH_FILES", DEFAULT_EXTRA_FILES);
    println!(
        "| project | process start | guard, Bash | write hook, Bash | both | both / start | guard, walking |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for files in [0, extra_files] {
        let (_temp_dir, root) = install_copy(files);
        std::thread::sleep(SETTLE);
        let row = measure(&root, runs);
        let label = if files == 0 {
            "2.6.54 install".to_owned()
        } else {
            format!("2.6.54 install + {files} files")
        };
        println!(
            "| {label} | {} | {} | {} | {} | {:.2}× | {} |",
            milliseconds(row.start),
            milliseconds(row.guard),
            milliseconds(row.hook),
            milliseconds(row.both),
            row.both.as_secs_f64() / row.start.as_secs_f64(),
            milliseconds(row.walking_guard)
        );
    }
}

fn from_environment(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn aidlc_binary() -> String {
    std::env::var("AIDLC_BENCH_BINARY").unwrap_or_else(|_| AIDLC_BINARY.to_owned())
}

/// The medians of one project.
struct Row {
    start: Duration,
    guard: Duration,
    hook: Duration,
    both: Duration,
    walking_guard: Duration,
}

fn measure(root: &Utf8Path, runs: usize) -> Row {
    let before = audit_bytes(root);
    let version = || run(root, &["--version"], None);
    let guard = || {
        run(
            root,
            &["engine", "hook", "guard"],
            Some(&payload(root, "PreToolUse")),
        )
    };
    let hook = || {
        run(
            root,
            &["engine", "hook", "run-sensors"],
            Some(&payload(root, "PostToolUse")),
        )
    };
    // Warm-up, untimed: the first call makes the hooks-health folder (a change to the
    // record's folder); once the project has settled, the next one leaves the snapshot the
    // guard re-stamps.
    version();
    guard();
    hook();
    std::thread::sleep(SETTLE);
    guard();
    hook();
    let latest = root
        .join(RECORD)
        .join(".aidlc-hooks-health/shell-snapshots/.latest.snapshot");
    // Another build (`AIDLC_BENCH_BINARY`) may keep no such snapshot.
    assert!(
        std::env::var_os("AIDLC_BENCH_BINARY").is_some()
            || std::fs::read_to_string(&latest).is_ok_and(|text| text.contains("\ntrusted yes\n")),
        "the guard keeps a trusted snapshot of a settled project"
    );
    let mut starts = Vec::new();
    let mut guards = Vec::new();
    let mut hooks = Vec::new();
    let mut boths = Vec::new();
    for _ in 0..runs {
        starts.push(version());
        let guarded = guard();
        let hooked = hook();
        guards.push(guarded);
        hooks.push(hooked);
        boths.push(guarded + hooked);
    }
    let mut walking_guards = Vec::new();
    for _ in 0..runs {
        let _ = std::fs::remove_file(&latest);
        walking_guards.push(guard());
        hook();
    }
    assert_eq!(
        audit_bytes(root),
        before,
        "a shell call that changed nothing writes no row"
    );
    Row {
        start: median(&mut starts),
        guard: median(&mut guards),
        hook: median(&mut hooks),
        both: median(&mut boths),
        walking_guard: median(&mut walking_guards),
    }
}

fn payload(root: &Utf8Path, event: &str) -> String {
    serde_json::json!({
        "hook_event_name": event,
        "session_id": "bench",
        "tool_use_id": "toolu_bench",
        "cwd": root,
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    })
    .to_string()
}

/// One checked run: exit 0, nothing on stdout.
fn run(root: &Utf8Path, args: &[&str], stdin: Option<&str>) -> Duration {
    let mut command = Command::new(aidlc_binary());
    command
        .args(args)
        .current_dir(root)
        .env_remove("AIDLC_PROJECT_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().expect("start aidlc");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write the payload");
    }
    let output = child.wait_with_output().expect("wait for aidlc");
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    if args[0] != "--version" {
        assert!(output.stdout.is_empty(), "{args:?} printed on stdout");
    }
    elapsed
}

fn audit_bytes(root: &Utf8Path) -> Vec<u8> {
    let Ok(entries) = std::fs::read_dir(root.join(RECORD).join("audit")) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    for entry in entries.flatten() {
        bytes.extend(std::fs::read(entry.path()).unwrap_or_default());
    }
    bytes
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort_unstable();
    values[values.len() / 2]
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// A copy of the vendored 2.6.54 install with the bench's intent on `requirements-analysis`,
/// and `extra_files` small files in 100 folders.
fn install_copy(extra_files: usize) -> (tempfile::TempDir, Utf8PathBuf) {
    let temp_dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::from_path_buf(temp_dir.path().canonicalize().expect("canonical"))
        .expect("UTF-8 temp dir");
    copy_tree(
        &Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference-installs/2.6.54"),
        &root,
    );
    let write = |relative: &str, text: &str| {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        &format!("{RECORD}/aidlc-state.md"),
        "# AI-DLC State Tracking\n\n## Current Status\n- **Current Stage**: requirements-analysis\n",
    );
    for index in 0..extra_files {
        write(
            &format!("src/module_{:02}/file_{index}.txt", index % 100),
            "x\n",
        );
    }
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
