//! Running one worker process safely (D22, D23): a custom sensor's worker for the
//! dispatcher, and the tools a shipped sensor wraps (eslint, tsc, Biome) or `aidlc doctor` asks
//! for its version. What the run gives is the protocol's `WorkerRun`, which the verdict reads.
//!
//! `run_worker` runs it as D22 says, and stops it at one deadline (`WorkerCommand::timeout`) or
//! on an interrupt of `aidlc` itself (`crate::leaves::interrupt`), reported as `interrupted`,
//! never as a timeout.
//!
//! Invariants:
//!
//! - Bad input never panics and nothing blocks forever: `run_worker` returns by the deadline
//!   plus at most `STOP_GRACE` twice and `OUTPUT_GRACE` once, even when the worker ignores
//!   SIGTERM or a process holds its pipes open.
//! - The worker's children do not outlive it: once the worker has exited (by itself, at the
//!   deadline or on an interrupt), SIGKILL goes to its whole process group, so a shell's
//!   `sleep 300 &` dies with it. Nor do they outlive `aidlc`: a watchdog (`GroupWatchdog`)
//!   kills the group when `aidlc` dies without doing so itself (SIGKILL, a crash). Its output is then read for at most `OUTPUT_GRACE` more: a
//!   process that escaped the group (`setsid`) and holds stdout open cannot keep the fire
//!   waiting; what was read by then is kept, the rest is dropped with its reader thread.
//! - The worker never blocks on a full pipe: both pipes are read until end of file; bytes beyond
//!   `stdout_cap_bytes` (and before the last `STDERR_TAIL_BYTES` of stderr) are read and dropped.
//! - Nothing new starts after an interrupt: `run_worker` then returns an interrupted run
//!   without spawning. A running worker's group is in the interrupt registry from its spawn
//!   until it was reaped and its group killed, so the interrupt handler can stop it directly.
//! - On Unix every signal goes to the whole process group. On other platforms only the worker
//!   is killed.
//! - `timed_out` is true only when this function stopped the worker because the deadline
//!   passed, `interrupted` only when it stopped because `aidlc` was interrupted; a SIGTERM from
//!   anyone else is reported as the signal it is.

use std::convert::Infallible;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use camino::Utf8PathBuf;

use crate::leaves::interrupt::{self, WorkerGroup};
use crate::leaves::process_group::GroupSignal;
use crate::protocol::verdict::{WorkerRun, errno_name};

/// The budget of a worker whose manifest names none (D7).
pub const FALLBACK_TIMEOUT: Duration = Duration::from_secs(1200);

/// The default stdout cap: Node's `maxBuffer` for `spawnSync`, which the reference used.
pub const DEFAULT_STDOUT_CAP_BYTES: usize = 1024 * 1024;

/// How much of the end of stderr a run keeps.
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// How long a timed-out worker gets between SIGTERM and SIGKILL, and how long it then gets to
/// be reaped.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// How long an interrupted worker gets between SIGTERM and SIGKILL: the user is waiting.
pub const INTERRUPT_GRACE: Duration = Duration::from_millis(500);

/// How long the output readers get to reach end of file once the worker is gone and its group
/// was killed. Only a process outside the group can hold the pipes open that long.
pub const OUTPUT_GRACE: Duration = Duration::from_millis(250);

/// Far enough to mean "never" when `timeout` does not fit in an `Instant`.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

const READ_CHUNK_BYTES: usize = 64 * 1024;
const FIRST_POLL_PAUSE: Duration = Duration::from_millis(1);
const LONGEST_POLL_PAUSE: Duration = Duration::from_millis(10);

/// One worker to run: the program, its arguments, where and with what it runs, and its limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: Utf8PathBuf,
    /// Added to the inherited environment (the reference's workers inherit it).
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    pub stdout_cap_bytes: usize,
    /// Written to the worker's stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
}

impl WorkerCommand {
    /// A command with no arguments or extra variables, the fallback timeout (D7) and the
    /// default stdout cap.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<Utf8PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: Vec::new(),
            timeout: FALLBACK_TIMEOUT,
            stdout_cap_bytes: DEFAULT_STDOUT_CAP_BYTES,
            stdin: None,
        }
    }
}

/// Run one worker to its end, its deadline or an interrupt; see the module documentation.
pub fn run_worker(command: &WorkerCommand) -> WorkerRun {
    let start = Instant::now();
    if interrupt::requested() {
        return WorkerRun {
            interrupted: true,
            ..WorkerRun::default()
        };
    }
    let deadline = deadline_after(start, command.timeout);
    let mut child = match spawn_in_own_process_group(command) {
        Ok(child) => child,
        Err(error) => {
            return WorkerRun {
                spawn_error: Some(errno_name(&error).to_owned()),
                elapsed: start.elapsed(),
                ..WorkerRun::default()
            };
        }
    };
    let group = WorkerGroup::enter(child.id());
    feed_stdin(&mut child, command.stdin.as_deref());
    #[cfg(unix)]
    let watchdog = GroupWatchdog::start(child.id());
    let readers = OutputReaders::start(&mut child, command.stdout_cap_bytes);
    let ending = supervise(&mut child, &readers, deadline);
    // The worker is reaped: whatever is left of its group (background children) goes now, and
    // its output gets a short grace to reach end of file.
    signal_process_group(&mut child, GroupSignal::Kill);
    group.leave();
    #[cfg(unix)]
    if let Some(watchdog) = watchdog {
        watchdog.release();
    }
    readers.wait_until(deadline_after(Instant::now(), OUTPUT_GRACE));
    let (stdout, stdout_truncated) = readers.take_stdout();
    WorkerRun {
        exit_code: ending.status.and_then(|status| status.code()),
        signal: ending.status.and_then(terminating_signal),
        spawn_error: None,
        timed_out: ending.timed_out,
        interrupted: ending.interrupted,
        elapsed: start.elapsed(),
        stdout,
        stdout_truncated,
        stderr_tail: readers.stderr_tail(),
    }
}

fn deadline_after(start: Instant, timeout: Duration) -> Instant {
    start
        .checked_add(timeout)
        .or_else(|| start.checked_add(FAR_FUTURE))
        .unwrap_or(start)
}

/// What kills the worker's group when `aidlc` itself dies without stopping it (a SIGKILL, a
/// crash): a `sh` in a group of its own that reads the group id and then waits for one more
/// line on a pipe only this process writes. `release` writes that line once the group is
/// gone; if this process dies first, the kernel closes the pipe, the read ends with nothing,
/// and the watchdog SIGKILLs the group (the worker and every child it started).
///
/// Why not the parent-death signal: `PR_SET_PDEATHSIG` reaches the direct child only, so the
/// worker's own children would outlive it; setting it needs code between `fork` and `exec`,
/// which std only offers as `unsafe` (this crate forbids it); and it fires when the forking
/// *thread* ends. A pipe's end of file needs no signal handler, works on every Unix and for
/// every thread, and its reader can take the whole group down.
#[cfg(unix)]
struct GroupWatchdog {
    process: Child,
    release: std::process::ChildStdin,
}

/// The watchdog's script: the group id, then one line (released) or end of file (`aidlc` is
/// gone: kill the group). A group id is never 0 or 1 (`run_worker` checks before it starts one).
#[cfg(unix)]
const WATCHDOG_SCRIPT: &str = "read -r group || exit 0\nread -r released || kill -s KILL -- \"-$group\" 2>/dev/null\nexit 0\n";

/// How long a released watchdog gets to exit before it is killed and reaped.
#[cfg(unix)]
const WATCHDOG_EXIT_GRACE: Duration = Duration::from_secs(1);

#[cfg(unix)]
impl GroupWatchdog {
    /// A watchdog over the group `group_id`; `None` when `sh` cannot be started, and the run
    /// goes on with every other guarantee (the deadline, the final kill of the group).
    fn start(group_id: u32) -> Option<Self> {
        use std::io::Write as _;
        use std::os::unix::process::CommandExt as _;
        if group_id <= 1 {
            return None;
        }
        let mut process = Command::new("/bin/sh")
            .args(["-c", WATCHDOG_SCRIPT])
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut release = process.stdin.take()?;
        if release
            .write_all(format!("{group_id}\n").as_bytes())
            .is_err()
        {
            let _ = process.kill();
            let _ = process.wait();
            return None;
        }
        Some(Self { process, release })
    }

    /// The group is gone: tell the watchdog so, and reap it.
    fn release(mut self) {
        use std::io::Write as _;
        let _ = self.release.write_all(b"released\n");
        drop(self.release);
        let give_up = Instant::now() + WATCHDOG_EXIT_GRACE;
        loop {
            match self.process.try_wait() {
                Ok(None) if Instant::now() < give_up => {
                    std::thread::sleep(FIRST_POLL_PAUSE);
                }
                Ok(None) => {
                    let _ = self.process.kill();
                    let _ = self.process.wait();
                    return;
                }
                Ok(Some(_)) | Err(_) => return,
            }
        }
    }
}

fn spawn_in_own_process_group(command: &WorkerCommand) -> std::io::Result<Child> {
    let mut process = Command::new(&command.program);
    process
        .args(&command.args)
        .current_dir(&command.cwd)
        .envs(command.env.iter().map(|(name, value)| (name, value)))
        .stdin(if command.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The worker leads a new process group (whose id is its pid), so signals reach its children.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut process, 0);
    process.spawn()
}

/// Write `input` to the child's stdin on a thread of its own and close it; a worker that does
/// not read it cannot block the supervision (the thread ends when the worker's group goes).
fn feed_stdin(child: &mut Child, input: Option<&[u8]>) {
    let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) else {
        return;
    };
    let input = input.to_vec();
    std::thread::spawn(move || {
        use std::io::Write as _;
        let _ = stdin.write_all(&input);
    });
}

#[cfg(unix)]
fn terminating_signal(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal()
}

#[cfg(not(unix))]
fn terminating_signal(_status: ExitStatus) -> Option<i32> {
    None
}

/// How the supervision ended: the worker's status when it was reaped, and why it was stopped
/// if this function stopped it.
struct Ending {
    status: Option<ExitStatus>,
    timed_out: bool,
    interrupted: bool,
}

/// Wait for the worker until it exits, the deadline passes or `aidlc` is interrupted, and stop
/// its group in the last two cases. Returns once the worker is reaped (or cannot be).
fn supervise(child: &mut Child, readers: &OutputReaders, deadline: Instant) -> Ending {
    match wait_for_exit(child, deadline, Some(readers)) {
        WaitOutcome::Exited(status) => Ending {
            // The interrupt handler's SIGTERM may have ended the worker before this thread saw
            // the flag; only a worker that finished with status 0 said something of its own.
            interrupted: interrupt::requested() && status.code() != Some(0),
            status: Some(status),
            timed_out: false,
        },
        WaitOutcome::Running => Ending {
            status: stop_process_group(child, STOP_GRACE),
            timed_out: true,
            interrupted: false,
        },
        WaitOutcome::Interrupted => Ending {
            status: stop_process_group(child, INTERRUPT_GRACE),
            timed_out: false,
            interrupted: true,
        },
        WaitOutcome::WaitFailed => {
            signal_process_group(child, GroupSignal::Kill);
            Ending {
                status: None,
                timed_out: false,
                interrupted: interrupt::requested(),
            }
        }
    }
}

/// SIGTERM to the group, `grace` for the worker to exit, then SIGKILL to the group (whatever
/// is left of it: the worker if it ignored SIGTERM, and its children either way).
/// Returns the worker's status, or `None` when it cannot be reaped even after SIGKILL.
fn stop_process_group(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    signal_process_group(child, GroupSignal::Terminate);
    let after_terminate = wait_for_exit(child, deadline_after(Instant::now(), grace), None);
    signal_process_group(child, GroupSignal::Kill);
    if let WaitOutcome::Exited(status) = after_terminate {
        return Some(status);
    }
    match wait_for_exit(child, deadline_after(Instant::now(), STOP_GRACE), None) {
        WaitOutcome::Exited(status) => Some(status),
        WaitOutcome::Running | WaitOutcome::Interrupted | WaitOutcome::WaitFailed => None,
    }
}

enum WaitOutcome {
    Exited(ExitStatus),
    /// Still running at the deadline.
    Running,
    /// Still running when `aidlc` was interrupted.
    Interrupted,
    WaitFailed,
}

/// Poll the worker until it exits, the deadline passes or (while it is supervised, with
/// `readers`) an interrupt arrives, with pauses growing from `FIRST_POLL_PAUSE` to
/// `LONGEST_POLL_PAUSE` (a quick worker is seen at once, a slow one costs at most 100 wake-ups
/// a second, and an interrupt is seen within 10 ms). With `readers`, a pause ends early when
/// the output pipes close, which is normally the moment the worker exits. Without them the
/// worker is being stopped already, so an interrupt changes nothing.
fn wait_for_exit(
    child: &mut Child,
    deadline: Instant,
    readers: Option<&OutputReaders>,
) -> WaitOutcome {
    let mut pause = FIRST_POLL_PAUSE;
    let mut pipes_open = readers.is_some();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return WaitOutcome::Exited(status),
            Ok(None) => {}
            Err(_) => return WaitOutcome::WaitFailed,
        }
        if readers.is_some() && interrupt::requested() {
            return WaitOutcome::Interrupted;
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return WaitOutcome::Running;
        }
        let nap = pause.min(remaining);
        match readers {
            Some(readers) if pipes_open => {
                if readers.wait_until(deadline_after(Instant::now(), nap)) {
                    // The pipes closed: the worker is exiting, so look again soon.
                    pipes_open = false;
                    pause = FIRST_POLL_PAUSE;
                    continue;
                }
            }
            _ => std::thread::sleep(nap),
        }
        pause = (pause * 2).min(LONGEST_POLL_PAUSE);
    }
}

#[cfg(unix)]
fn signal_process_group(child: &mut Child, signal: GroupSignal) {
    // `process_group(0)` made the worker the leader of a group whose id is its pid.
    crate::leaves::process_group::signal_group(child.id(), signal);
}

#[cfg(not(unix))]
fn signal_process_group(child: &mut Child, _signal: GroupSignal) {
    // No process groups here: the worker alone is killed, at once, whatever the stop.
    let _ = child.kill();
}

/// The threads that drain the worker's stdout and stderr into bounded captures.
///
/// Each thread holds a sender of `finished` until it returns and never sends, so the channel
/// disconnects exactly when every reader is done (or could not be started, which drops its
/// pipe and sender at once).
struct OutputReaders {
    stdout: Arc<Mutex<CappedCapture>>,
    stderr: Arc<Mutex<TailCapture>>,
    finished: mpsc::Receiver<Infallible>,
}

impl OutputReaders {
    fn start(child: &mut Child, stdout_cap_bytes: usize) -> Self {
        let (done, finished) = mpsc::channel();
        let stdout = Arc::new(Mutex::new(CappedCapture {
            cap: stdout_cap_bytes,
            bytes: Vec::new(),
            truncated: false,
        }));
        let stderr = Arc::new(Mutex::new(TailCapture::default()));
        if let Some(pipe) = child.stdout.take() {
            spawn_reader(
                "aidlc-worker-stdout",
                pipe,
                Arc::clone(&stdout),
                done.clone(),
            );
        }
        if let Some(pipe) = child.stderr.take() {
            spawn_reader("aidlc-worker-stderr", pipe, Arc::clone(&stderr), done);
        }
        Self {
            stdout,
            stderr,
            finished,
        }
    }

    /// Whether every reader reached end of file by `deadline`.
    fn wait_until(&self, deadline: Instant) -> bool {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match self.finished.recv_timeout(remaining) {
            Ok(never) => match never {},
            Err(RecvTimeoutError::Disconnected) => true,
            Err(RecvTimeoutError::Timeout) => false,
        }
    }

    fn take_stdout(&self) -> (Vec<u8>, bool) {
        let mut capture = self.stdout.lock().unwrap_or_else(PoisonError::into_inner);
        (std::mem::take(&mut capture.bytes), capture.truncated)
    }

    fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .text()
    }
}

/// Where a reader thread puts what it reads; every implementation keeps a bounded amount.
trait Capture: Send + 'static {
    fn keep(&mut self, chunk: &[u8]);
}

fn spawn_reader<C: Capture>(
    name: &str,
    mut pipe: impl Read + Send + 'static,
    capture: Arc<Mutex<C>>,
    done: mpsc::Sender<Infallible>,
) {
    let read_to_end = move || {
        let _done = done;
        let mut chunk = vec![0_u8; READ_CHUNK_BYTES];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => capture
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .keep(&chunk[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    };
    // A thread that cannot start drops the closure, closing the pipe (the worker then gets
    // EPIPE instead of blocking) and the sender (so nobody waits for it).
    let _ = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(read_to_end);
}

/// The first `cap` bytes of a stream, and whether more came.
struct CappedCapture {
    cap: usize,
    bytes: Vec<u8>,
    truncated: bool,
}

impl Capture for CappedCapture {
    fn keep(&mut self, chunk: &[u8]) {
        let room = self.cap.saturating_sub(self.bytes.len());
        let kept = chunk.len().min(room);
        self.bytes.extend_from_slice(&chunk[..kept]);
        if kept < chunk.len() {
            self.truncated = true;
        }
    }
}

/// The last bytes of a stream: never more than `2 × STDERR_TAIL_BYTES + READ_CHUNK_BYTES`
/// held, `STDERR_TAIL_BYTES` reported.
#[derive(Default)]
struct TailCapture {
    bytes: Vec<u8>,
    /// Bytes before `bytes` were dropped, so `bytes` may start inside a character.
    dropped_a_head: bool,
}

impl TailCapture {
    /// The tail as lossy UTF-8, starting at a character boundary when the cut fell inside one.
    fn text(&self) -> String {
        let start = self.bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        let mut tail = &self.bytes[start..];
        if start > 0 || self.dropped_a_head {
            let continuation_bytes = tail
                .iter()
                .take(3)
                .take_while(|byte| (**byte & 0b1100_0000) == 0b1000_0000)
                .count();
            tail = &tail[continuation_bytes..];
        }
        String::from_utf8_lossy(tail).into_owned()
    }
}

impl Capture for TailCapture {
    fn keep(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > 2 * STDERR_TAIL_BYTES {
            let excess = self.bytes.len() - STDERR_TAIL_BYTES;
            self.bytes.drain(..excess);
            self.dropped_a_head = true;
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
pub(crate) mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;
    use crate::protocol::verdict::{BadWorkerOutput, ScriptError, Verdict, verdict_of};

    /// A timeout no test worker should reach; tests that must end by themselves use it.
    pub(crate) const GENEROUS_TIMEOUT: Duration = Duration::from_secs(60);

    /// Fake workers: small `#!/bin/sh` scripts in a temp folder, which is also their cwd.
    pub(crate) struct FakeWorkers {
        folder: tempfile::TempDir,
    }

    impl FakeWorkers {
        pub(crate) fn new() -> Self {
            Self {
                folder: tempfile::tempdir().unwrap(),
            }
        }

        pub(crate) fn folder(&self) -> Utf8PathBuf {
            Utf8PathBuf::from_path_buf(self.folder.path().to_path_buf()).unwrap()
        }

        /// Write an executable `#!/bin/sh` script with `body`.
        pub(crate) fn script(&self, name: &str, body: &str) -> PathBuf {
            let path = self.folder.path().join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        }

        pub(crate) fn command(
            &self,
            program: impl Into<PathBuf>,
            timeout: Duration,
        ) -> WorkerCommand {
            WorkerCommand {
                timeout,
                ..WorkerCommand::new(program, self.folder())
            }
        }

        /// Run a script with the generous timeout.
        pub(crate) fn run_script(&self, name: &str, body: &str) -> WorkerRun {
            let program = self.script(name, body);
            run_fake_worker(&self.command(program, GENEROUS_TIMEOUT))
        }
    }

    /// `run_worker`, retried while the spawn fails with ETXTBSY: another test thread may be
    /// forking while it holds this script open for writing, for a moment.
    pub(crate) fn run_fake_worker(command: &WorkerCommand) -> WorkerRun {
        let mut attempts = 0;
        loop {
            let run = run_worker(command);
            attempts += 1;
            if run.spawn_error.as_deref() != Some("ETXTBSY") || attempts == 100 {
                return run;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[cfg(target_os = "linux")]
    fn read_pid(path: &std::path::Path) -> String {
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            let pid = std::fs::read_to_string(path).unwrap_or_default();
            if !pid.trim().is_empty() || Instant::now() > give_up {
                return pid.trim().to_owned();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_worker_that_exits_by_itself_reports_its_code_and_stdout() {
        let workers = FakeWorkers::new();
        let run = workers.run_script("ok.sh", r#"echo '{"pass":true}'; exit 0"#);
        assert_eq!(run.exit_code, Some(0));
        assert_eq!(run.signal, None);
        assert_eq!(run.spawn_error, None);
        assert!(!run.timed_out);
        assert_eq!(run.stdout, b"{\"pass\":true}\n");
        assert!(!run.stdout_truncated);
    }

    #[test]
    fn cwd_arguments_and_extra_env_reach_the_worker() {
        let workers = FakeWorkers::new();
        let program = workers.script(
            "env.sh",
            r#"printf '%s|%s|%s' "$(pwd -P)" "$1" "$AIDLC_FAKE""#,
        );
        let mut command = workers.command(program, GENEROUS_TIMEOUT);
        command.args = vec!["--stage".to_owned()];
        command.env = vec![("AIDLC_FAKE".to_owned(), "value".to_owned())];
        let run = run_fake_worker(&command);
        let folder = std::fs::canonicalize(workers.folder()).unwrap();
        let expected = format!("{}|--stage|value", folder.display());
        assert_eq!(String::from_utf8(run.stdout).unwrap(), expected);
    }

    #[test]
    fn stdin_is_empty_so_a_worker_reading_it_does_not_wait() {
        let workers = FakeWorkers::new();
        let run = workers.run_script("stdin.sh", "cat; echo done");
        assert_eq!(run.exit_code, Some(0));
        assert_eq!(run.stdout, b"done\n");
    }

    #[test]
    fn a_signal_that_ends_the_worker_is_reported_without_an_exit_code() {
        let workers = FakeWorkers::new();
        let run = workers.run_script("segv.sh", "kill -SEGV $$; sleep 5");
        assert_eq!(run.exit_code, None);
        assert_eq!(run.signal, Some(libc::SIGSEGV));
        assert!(!run.timed_out);
    }

    #[test]
    fn stderr_keeps_only_its_tail_starting_at_a_character() {
        let workers = FakeWorkers::new();
        let run = workers.run_script(
            "chatty.sh",
            "head -c 100000 /dev/zero | tr '\\0' 'e' >&2; printf 'é%.0s' $(seq 5000) >&2; printf 'the-end!\\n' >&2",
        );
        assert_eq!(run.exit_code, Some(0));
        assert!(run.stderr_tail.len() <= STDERR_TAIL_BYTES);
        assert!(run.stderr_tail.len() >= STDERR_TAIL_BYTES - 3);
        assert!(run.stderr_tail.starts_with('é'));
        assert!(run.stderr_tail.ends_with("the-end!\n"));
    }

    #[test]
    fn fifty_megabytes_on_stdout_are_drained_truncated_and_bad_output() {
        let workers = FakeWorkers::new();
        let program = workers.script(
            "flood.sh",
            "head -c 52428800 /dev/zero | tr '\\0' 'x'; echo '{\"pass\":true}'",
        );
        let mut command = workers.command(program, GENEROUS_TIMEOUT);
        command.stdout_cap_bytes = 1024 * 1024;
        let run = run_fake_worker(&command);
        assert!(!run.timed_out, "the worker blocked on a full pipe");
        assert_eq!(run.exit_code, Some(0));
        assert_eq!(run.stdout.len(), 1024 * 1024);
        assert!(run.stdout_truncated);
        assert_eq!(
            verdict_of(&run, command.timeout),
            Verdict::ScriptError(ScriptError::BadOutput(BadWorkerOutput::OverTheCap))
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_timeout_is_budget_override_and_stops_the_whole_process_group() {
        let workers = FakeWorkers::new();
        let pid_file = workers.folder().join("child.pid");
        let program = workers.script(
            "slow.sh",
            &format!("sleep 100 &\necho $! > '{pid_file}'\nsleep 100"),
        );
        let command = workers.command(program, Duration::from_secs(1));
        let run = run_fake_worker(&command);
        assert!(run.timed_out);
        assert_eq!(run.exit_code, None);
        assert_eq!(run.signal, Some(libc::SIGTERM));
        let Verdict::BudgetOverride {
            cap_seconds,
            observed_seconds,
        } = verdict_of(&run, command.timeout)
        else {
            panic!("expected a budget override, got {run:?}");
        };
        assert_eq!(cap_seconds, 1);
        assert!(observed_seconds >= 1);
        let child = read_pid(pid_file.as_std_path());
        assert!(!child.is_empty(), "the worker never started its child");
        assert!(
            process_is_gone_soon(&child),
            "background child {child} survived"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_worker_that_ignores_sigterm_is_killed_after_the_grace() {
        let workers = FakeWorkers::new();
        let pid_file = workers.folder().join("child.pid");
        let program = workers.script(
            "stubborn.sh",
            &format!("trap '' TERM\nsleep 100 &\necho $! > '{pid_file}'\nsleep 100"),
        );
        let command = workers.command(program, Duration::from_secs(1));
        let run = run_fake_worker(&command);
        assert!(run.timed_out);
        assert_eq!(run.signal, Some(libc::SIGKILL));
        assert!(matches!(
            verdict_of(&run, command.timeout),
            Verdict::BudgetOverride { .. }
        ));
        let child = read_pid(pid_file.as_std_path());
        assert!(
            process_is_gone_soon(&child),
            "background child {child} survived"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_background_child_holding_stdout_does_not_outlive_the_deadline() {
        let workers = FakeWorkers::new();
        let pid_file = workers.folder().join("child.pid");
        let program = workers.script(
            "leaky.sh",
            &format!(
                "sleep 100 &\necho $! > '{pid_file}'\necho '{{\"pass\":true,\"findings_count\":0}}'\nexit 0"
            ),
        );
        let command = workers.command(program, Duration::from_secs(1));
        let run = run_fake_worker(&command);
        assert!(!run.timed_out, "the worker itself exited in time");
        assert_eq!(run.exit_code, Some(0));
        assert_eq!(run.stdout, b"{\"pass\":true,\"findings_count\":0}\n");
        assert_eq!(verdict_of(&run, command.timeout), Verdict::Passed);
        let child = read_pid(pid_file.as_std_path());
        assert!(
            process_is_gone_soon(&child),
            "background child {child} survived"
        );
    }

    /// Whether `pid` still exists, as `kill -0` says (a zombie waiting for its reaper counts
    /// as gone). Waits up to 10 s for it to go.
    #[cfg(unix)]
    fn process_is_gone_soon(pid: &str) -> bool {
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            let alive = std::process::Command::new("kill")
                .args(["-0", pid])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|text| {
                    let after_name = &text[text.rfind(')')? + 1..];
                    after_name
                        .split_whitespace()
                        .next()
                        .map(|state| state == "Z")
                })
                .unwrap_or(false);
            if !alive || zombie {
                return true;
            }
            if Instant::now() > give_up {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// With a long budget, a background child that holds stdout neither keeps the run waiting
    /// for the whole budget (the run would time out) nor survives the worker.
    #[cfg(unix)]
    #[test]
    fn a_background_child_holding_stdout_neither_delays_the_run_nor_outlives_the_worker() {
        let workers = FakeWorkers::new();
        let pid_file = workers.folder().join("child.pid");
        let program = workers.script(
            "holder.sh",
            &format!(
                "sleep 300 &\necho $! > '{pid_file}'\necho '{{\"pass\":true,\"findings_count\":0}}'\nexit 0"
            ),
        );
        let command = workers.command(program, Duration::from_secs(300));
        let run = run_fake_worker(&command);
        assert!(!run.timed_out);
        assert_eq!(verdict_of(&run, command.timeout), Verdict::Passed);
        let child = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_owned();
        assert!(!child.is_empty(), "the worker never started its child");
        assert!(
            process_is_gone_soon(&child),
            "background child {child} survived"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_background_child_that_closed_its_output_does_not_outlive_the_worker_either() {
        let workers = FakeWorkers::new();
        let pid_file = workers.folder().join("child.pid");
        let program = workers.script(
            "detached.sh",
            &format!(
                "sleep 300 >/dev/null 2>&1 &\necho $! > '{pid_file}'\necho '{{\"pass\":false,\"findings_count\":1}}'"
            ),
        );
        let run = run_fake_worker(&workers.command(program, GENEROUS_TIMEOUT));
        assert_eq!(run.exit_code, Some(0));
        let child = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_owned();
        assert!(
            process_is_gone_soon(&child),
            "background child {child} survived"
        );
    }

    #[test]
    fn a_huge_timeout_does_not_overflow_the_deadline() {
        let workers = FakeWorkers::new();
        let program = workers.script("quick.sh", "exit 3");
        let run = run_fake_worker(&workers.command(program, Duration::MAX));
        assert_eq!(run.exit_code, Some(3));
    }

    fn capped(cap: usize) -> CappedCapture {
        CappedCapture {
            cap,
            bytes: Vec::new(),
            truncated: false,
        }
    }

    #[test]
    fn the_stdout_capture_keeps_the_first_bytes_and_marks_the_rest() {
        let mut capture = capped(4);
        capture.keep(b"ab");
        assert!(!capture.truncated);
        capture.keep(b"cdef");
        capture.keep(b"gh");
        assert_eq!(capture.bytes, b"abcd");
        assert!(capture.truncated);
        let mut exact = capped(2);
        exact.keep(b"ab");
        assert!(!exact.truncated);
    }

    #[test]
    fn the_stderr_tail_never_starts_inside_a_character() {
        for first_chunk in 1..=4 {
            let mut tail = TailCapture::default();
            let text = "é".repeat(STDERR_TAIL_BYTES * 2);
            let (head, rest) = text.as_bytes().split_at(first_chunk);
            tail.keep(head);
            for chunk in rest.chunks(1001) {
                tail.keep(chunk);
                // The end may be inside a character until the rest arrives; the start never.
                assert!(tail.text().starts_with('é'), "{first_chunk}");
            }
        }
    }

    #[test]
    fn the_stderr_tail_stays_bounded() {
        let mut tail = TailCapture::default();
        for _ in 0..100 {
            tail.keep(&[b'a'; 1000]);
            assert!(tail.bytes.len() <= 2 * STDERR_TAIL_BYTES);
        }
        tail.keep(b"end");
        let text = tail.text();
        assert_eq!(text.len(), STDERR_TAIL_BYTES);
        assert!(text.ends_with("aend"));
    }

    /// The verdict table end to end: real `#!/bin/sh` workers through `run_worker`.
    mod with_real_workers {
        use super::*;

        fn failed_count(verdict: &Verdict) -> u64 {
            match verdict {
                Verdict::Failed { findings_count, .. } => *findings_count,
                other => panic!("expected a failure, got {other:?}"),
            }
        }

        fn script_error(error: ScriptError) -> Verdict {
            Verdict::ScriptError(error)
        }

        /// The rule a bad output broke, or a panic naming what the verdict was instead.
        fn bad_output(verdict: &Verdict) -> &BadWorkerOutput {
            match verdict {
                Verdict::ScriptError(ScriptError::BadOutput(bad)) => {
                    assert_eq!(verdict.note().as_deref(), Some("script-error: bad-output"));
                    bad
                }
                other => panic!("expected bad output, got {other:?}"),
            }
        }

        fn verdict_of_script(body: &str) -> Verdict {
            let workers = FakeWorkers::new();
            let run = workers.run_script("worker.sh", body);
            verdict_of(&run, GENEROUS_TIMEOUT)
        }

        #[test]
        fn exit_127_is_tool_unavailable() {
            let verdict = verdict_of_script("echo 'eslint: not found' >&2; exit 127");
            assert_eq!(verdict, Verdict::ToolUnavailable);
            assert_eq!(verdict.note().as_deref(), Some("tool-unavailable"));
        }

        #[test]
        fn exit_2_is_script_error_exit_2() {
            let verdict = verdict_of_script(r#"echo '{"pass":true}'; exit 2"#);
            assert_eq!(verdict, script_error(ScriptError::Exit(2)));
        }

        #[test]
        fn a_worker_that_kills_itself_with_sigkill_is_signal_sigkill() {
            let verdict = verdict_of_script("kill -KILL $$; sleep 5");
            assert_eq!(
                verdict,
                script_error(ScriptError::Signal("SIGKILL".to_owned()))
            );
        }

        #[test]
        fn an_external_sigterm_is_external_sigterm() {
            let verdict = verdict_of_script("kill -TERM $$; sleep 5");
            assert_eq!(verdict, script_error(ScriptError::ExternalSigterm));
        }

        #[test]
        fn a_missing_program_is_spawn_failed_enoent() {
            let workers = FakeWorkers::new();
            let program = workers.folder().join("does-not-exist");
            let run = run_fake_worker(&workers.command(program, GENEROUS_TIMEOUT));
            assert_eq!(run.spawn_error.as_deref(), Some("ENOENT"));
            assert_eq!((run.exit_code, run.signal), (None, None));
            assert_eq!(
                verdict_of(&run, GENEROUS_TIMEOUT),
                script_error(ScriptError::SpawnFailed("ENOENT".to_owned()))
            );
        }

        #[test]
        fn a_non_executable_file_is_spawn_failed_eacces() {
            let workers = FakeWorkers::new();
            let program = workers.folder().join("plain.sh");
            std::fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
            let run = run_fake_worker(&workers.command(program, GENEROUS_TIMEOUT));
            assert_eq!(run.spawn_error.as_deref(), Some("EACCES"));
            assert_eq!(
                verdict_of(&run, GENEROUS_TIMEOUT),
                script_error(ScriptError::SpawnFailed("EACCES".to_owned()))
            );
        }

        #[test]
        fn garbage_on_stdout_is_bad_output() {
            let verdict = verdict_of_script("echo 'Segmentation fault (core dumped)'");
            assert_eq!(bad_output(&verdict), &BadWorkerOutput::NoObject);
        }

        #[test]
        fn pass_yes_is_bad_output() {
            let verdict = verdict_of_script(r#"echo '{"pass":"yes","findings_count":0}'"#);
            assert!(matches!(
                bad_output(&verdict),
                BadWorkerOutput::PassNotBoolean(_)
            ));
        }

        #[test]
        fn pass_false_with_three_findings_is_failed_with_three() {
            let verdict = verdict_of_script(r#"echo '{"pass":false,"findings_count":3}'"#);
            assert_eq!(failed_count(&verdict), 3);
        }

        #[test]
        fn pass_false_without_findings_count_is_a_failure_counting_its_findings() {
            let verdict = verdict_of_script(r#"echo '{"pass":false,"findings":["a"]}'"#);
            assert_eq!(failed_count(&verdict), 1);
        }

        #[test]
        fn a_negative_or_fractional_findings_count_is_bad_output() {
            for value in ["-4", "2.7"] {
                let verdict = verdict_of_script(&format!(
                    r#"echo '{{"pass":false,"findings_count":{value}}}'"#
                ));
                assert!(
                    matches!(
                        bad_output(&verdict),
                        BadWorkerOutput::FindingsCountNotACount(_)
                    ),
                    "{value}"
                );
            }
        }

        #[test]
        fn a_banner_line_before_the_json_is_skipped() {
            let verdict = verdict_of_script(
                "echo '> npm run check {x}'; echo '{\"pass\":true,\"findings_count\":0}'",
            );
            assert_eq!(verdict, Verdict::Passed);
        }
    }
}
