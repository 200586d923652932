//! `aidlc lsp` latency: the time from a `textDocument/didChange` to the
//! `textDocument/publishDiagnostics` it causes, beside a full `aidlc compile --force` of the same
//! project measured in the same run, and the server's resident memory.
//!
//! Run it with `cargo bench --bench lsp`. For a quick pass:
//! `AIDLC_BENCH_STAGES=200 AIDLC_BENCH_EDITS=10 AIDLC_BENCH_RUNS=3 cargo bench --bench lsp`.
//!
//! Two projects, each in a temporary folder: the default framework (`aidlc init`) and a
//! synthetic project of `AIDLC_BENCH_STAGES` stages (default 1,000) and 100 sensors. For each:
//! - `compile --force`: the median wall time of `AIDLC_BENCH_RUNS` runs (default 5) of the real
//!   binary, each checked (exit 0, a `compiled ` line);
//! - `in process`: `aidlc::lsp::serve` on a thread over `lsp_server::Connection::memory()`;
//! - `over stdio`: the real binary, `aidlc lsp`, over pipes;
//!
//! and in both servers, `AIDLC_BENCH_EDITS` edits (default 50, after two untimed ones) of one
//! open stage file, each an incremental `didChange` that alternately puts a typo into the first
//! id of its `sensors:` list and takes it out again: the median time until the
//! `publishDiagnostics` for that file arrives, checked to hold the `unknown-sensor-import` of the
//! typo (or nothing, after the fix). Last, the resident set size (`VmRSS`) of the stdio server.
//!
//! Wall-clock figures on a shared, noisy machine: read the medians and the ratios. The table
//! goes to stdout; progress to stderr.
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

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use aidlc::compile::discover::LAYOUT_ENVIRONMENT_VARIABLES;
use aidlc::harness::Harness;
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};

use crate::synthetic::SyntheticProject;

const AIDLC_BINARY: &str = env!("CARGO_BIN_EXE_aidlc");
const DEFAULT_SYNTHETIC_STAGE_COUNT: usize = 1_000;
const SYNTHETIC_SENSOR_COUNT: usize = 100;
const DEFAULT_EDITS: usize = 50;
const DEFAULT_COMPILE_RUNS: usize = 5;
const PATIENCE: Duration = Duration::from_secs(120);
const DEFAULT_FRAMEWORK_EDITED_STAGE: &str =
    ".claude/aidlc-common/stages/inception/requirements-analysis.md";

fn main() {
    if !std::env::args().any(|argument| argument == "--bench") {
        eprintln!("lsp: run it with `cargo bench --bench lsp`; skipped");
        return;
    }
    for name in LAYOUT_ENVIRONMENT_VARIABLES {
        if std::env::var_os(name).is_some() {
            eprintln!("lsp: unset {name} first: it would move the folders the servers read");
            std::process::exit(2);
        }
    }
    let setting = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let stages = setting("AIDLC_BENCH_STAGES", DEFAULT_SYNTHETIC_STAGE_COUNT);
    let edits = setting("AIDLC_BENCH_EDITS", DEFAULT_EDITS);
    let runs = setting("AIDLC_BENCH_RUNS", DEFAULT_COMPILE_RUNS);
    let mut rows = Vec::new();
    for project in [
        BenchProject::default_framework(),
        BenchProject::synthetic(stages),
    ] {
        eprintln!("== {}", project.name);
        eprintln!("  compile --force x{runs}");
        let compile = median(
            &(0..runs)
                .map(|_| time_compile(&project.root))
                .collect::<Vec<_>>(),
        );
        eprintln!("  in process: {edits} edits");
        let in_process = median(&measure_edits(
            &mut MemoryServer::start(&project.root),
            &project,
            edits,
        ));
        eprintln!("  over stdio: {edits} edits");
        let mut stdio = StdioServer::start(&project.root);
        let over_stdio = median(&measure_edits(&mut stdio, &project, edits));
        let resident = stdio.resident_kib();
        stdio.shut_down();
        rows.push((
            project.name.clone(),
            compile,
            in_process,
            over_stdio,
            resident,
        ));
    }
    println!();
    println!(
        "{:<26} {:>16} {:>22} {:>22} {:>14}",
        "project",
        "compile --force",
        "didChange→publish (in)",
        "didChange→publish (io)",
        "server RSS"
    );
    for (name, compile, in_process, over_stdio, resident) in rows {
        println!(
            "{:<26} {:>16} {:>22} {:>22} {:>14}",
            name,
            milliseconds(compile),
            milliseconds(in_process),
            milliseconds(over_stdio),
            resident.map_or_else(|| "n/a".to_owned(), |kib| format!("{} MiB", kib / 1024)),
        );
    }
    println!("(medians; {edits} edits per server, {runs} compiles per project)");
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

struct BenchProject {
    name: String,
    _temp_dir: tempfile::TempDir,
    root: Utf8PathBuf,
    edited_stage: Utf8PathBuf,
}

impl BenchProject {
    fn default_framework() -> Self {
        let (temp_dir, root) = empty_temp_dir();
        aidlc::compile::framework::init_project(&root, Harness::Claude, false).expect("aidlc init");
        Self {
            name: "default framework (33)".to_owned(),
            _temp_dir: temp_dir,
            root,
            edited_stage: Utf8PathBuf::from(DEFAULT_FRAMEWORK_EDITED_STAGE),
        }
    }

    fn synthetic(stages: usize) -> Self {
        let (temp_dir, root) = empty_temp_dir();
        let synthetic = SyntheticProject::new(stages, SYNTHETIC_SENSOR_COUNT);
        synthetic
            .write_to(&root)
            .expect("write the synthetic project");
        Self {
            name: format!("synthetic {stages} stages"),
            _temp_dir: temp_dir,
            root,
            edited_stage: synthetic.stage_path(stages / 2),
        }
    }
}

fn empty_temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let temp_dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::from_path_buf(temp_dir.path().canonicalize().expect("canonical"))
        .expect("UTF-8 temp dir path");
    (temp_dir, root)
}

fn time_compile(root: &Utf8Path) -> Duration {
    let started = Instant::now();
    let output = Command::new(AIDLC_BINARY)
        .args(["compile", "--force", "--project-dir", root.as_str()])
        .stdin(Stdio::null())
        .output()
        .expect("run aidlc compile");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.contains("compiled "),
        "aidlc compile --force failed: {stderr}"
    );
    elapsed
}

/// A client's view of a server: send a message, receive the next one.
trait Server {
    fn send(&mut self, message: &Value);
    fn receive(&mut self) -> Value;
}

fn request(server: &mut dyn Server, id: i64, method: &str, params: &Value) -> Value {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let message = server.receive();
        if message.get("method").is_none() && message["id"] == id {
            assert!(message.get("error").is_none(), "{method} failed: {message}");
            return message["result"].clone();
        }
    }
}

fn notify(server: &mut dyn Server, method: &str, params: &Value) {
    server.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
}

fn initialize(server: &mut dyn Server, root: &Utf8Path) {
    let params =
        json!({"processId": null, "rootUri": format!("file://{root}"), "capabilities": {}});
    let result = request(server, 1, "initialize", &params);
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-16");
    notify(server, "initialized", &json!({}));
}

/// The 0-based line and UTF-16 column of a byte offset.
fn position_of(text: &str, offset: usize) -> Value {
    let line_start = text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
    json!({
        "line": text[..line_start].matches('\n').count(),
        "character": text[line_start..offset].encode_utf16().count(),
    })
}

/// Open the edited stage, then time each edit from its `didChange` to its diagnostics.
fn measure_edits(server: &mut dyn Server, project: &BenchProject, edits: usize) -> Vec<Duration> {
    initialize(server, &project.root);
    let path = project.root.join(&project.edited_stage);
    let uri = format!("file://{path}");
    let text = std::fs::read_to_string(&path).expect("read the edited stage");
    let id_start =
        text.find("\nsensors:\n  - ").expect("a block sensors list") + "\nsensors:\n  - ".len();
    let id_end = id_start + text[id_start..].find('\n').expect("the line's end");
    let id = text[id_start..id_end].to_owned();
    let typo = format!("{id}x");
    notify(
        server,
        "textDocument/didOpen",
        &json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
    );
    let mut durations = Vec::new();
    for edit in 0..edits + 2 {
        let breaking = edit % 2 == 0;
        let (old, new) = if breaking { (&id, &typo) } else { (&typo, &id) };
        let range = json!({
            "start": position_of(&text, id_start),
            "end": {"line": position_of(&text, id_start)["line"], "character": position_of(&text, id_start)["character"].as_u64().unwrap() + old.len() as u64},
        });
        let started = Instant::now();
        notify(
            server,
            "textDocument/didChange",
            &json!({"textDocument": {"uri": uri, "version": edit + 2}, "contentChanges": [{"range": range, "text": new}]}),
        );
        let diagnostics = loop {
            let message = server.receive();
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
            {
                break message["params"]["diagnostics"].clone();
            }
        };
        let elapsed = started.elapsed();
        let list = diagnostics.as_array().expect("a diagnostics list");
        if breaking {
            assert!(
                list.len() == 1
                    && list[0]["code"] == "unknown-sensor-import"
                    && list[0]["message"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("\"{typo}\"")),
                "the typo's diagnostic, not {diagnostics}"
            );
        } else {
            assert!(
                list.is_empty(),
                "no diagnostics after the fix, not {diagnostics}"
            );
        }
        if edit >= 2 {
            durations.push(elapsed);
        }
    }
    assert_eq!(request(server, 99, "shutdown", &Value::Null), Value::Null);
    durations
}

/// `aidlc::lsp::serve` on a thread, over an in-memory connection.
struct MemoryServer {
    connection: lsp_server::Connection,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MemoryServer {
    fn start(root: &Utf8Path) -> Self {
        let (server_side, client_side) = lsp_server::Connection::memory();
        let options = aidlc::lsp::ServeOptions {
            project_dir: Some(root.to_owned()),
            harness: None,
        };
        let thread = std::thread::spawn(move || {
            aidlc::lsp::serve(&server_side, &options).expect("a clean session");
        });
        Self {
            connection: client_side,
            thread: Some(thread),
        }
    }
}

impl Server for MemoryServer {
    fn send(&mut self, message: &Value) {
        let message: lsp_server::Message =
            serde_json::from_value(message.clone()).expect("a JSON-RPC message");
        self.connection
            .sender
            .send(message)
            .expect("the server is running");
    }

    fn receive(&mut self) -> Value {
        let message = self
            .connection
            .receiver
            .recv_timeout(PATIENCE)
            .expect("a message from the server");
        serde_json::to_value(message).expect("serialisable")
    }
}

impl Drop for MemoryServer {
    fn drop(&mut self) {
        let _ = self
            .connection
            .sender
            .send(lsp_server::Notification::new("exit".to_owned(), Value::Null).into());
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the in-process server ended cleanly");
        }
    }
}

/// `aidlc lsp`, the real binary, over pipes.
struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
}

impl StdioServer {
    fn start(root: &Utf8Path) -> Self {
        let mut child = Command::new(AIDLC_BINARY)
            .args(["lsp", "--project-dir", root.as_str()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start aidlc lsp");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = value.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("Content-Length")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let message = serde_json::from_slice(&body).expect("a JSON body");
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            incoming,
        }
    }

    /// `VmRSS` from `/proc`, in KiB (Linux only).
    fn resident_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
    }

    fn shut_down(mut self) {
        notify(&mut self, "exit", &Value::Null);
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for aidlc lsp");
        assert_eq!(
            status.code(),
            Some(0),
            "aidlc lsp ends cleanly after shutdown and exit"
        );
    }
}

impl Server for StdioServer {
    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to aidlc lsp");
        stdin.flush().expect("flush");
    }

    fn receive(&mut self) -> Value {
        self.incoming
            .recv_timeout(PATIENCE)
            .expect("a message from aidlc lsp")
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
