//! Running a shipped sensor's native check inside `aidlc` (D8): on a thread of its own, bounded
//! by the manifest's timeout and by an interrupt, its answer read back through the worker
//! protocol so that it gets exactly the verdict the same check would get as a process.
//!
//! Invariants:
//!
//! - An in-process check honours the manifest's `timeout_seconds` as a spawned worker does: it
//!   runs on a thread of its own, and [`run_bounded`] waits for it until the same deadline. Past
//!   it, the fire is a budget override and the thread is abandoned, still blocked (a FIFO it
//!   opened, a slow disk). An abandoned check cannot change anything the fire reads afterwards:
//!   it owns copies of its inputs, its only output is a channel whose receiver is gone, and the
//!   native checks write no files. A tool it started (eslint, tsc) runs under `run_worker` with
//!   the same budget and is in the interrupt registry, so it is stopped by its own deadline or,
//!   at the latest, when `aidlc` exits.
//! - An interrupt of `aidlc` ends the wait at once with `script-error: interrupted`, and no
//!   check starts after one.
//!
//! This file must not know any particular sensor: it runs whatever descriptor it is given.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::leaves::interrupt;
use crate::protocol::verdict::{Verdict, WorkerRun, errno_name, verdict_of};
use crate::protocol::worker_outcome::{WorkerOutcome, protocol_output};
use crate::runtime::sensors::descriptor::{ShippedSensor, WorkerContext};

/// Run one shipped sensor in-process on its worker arguments (D21) and give its verdict: exactly
/// the verdict the dispatcher would read from the same worker run as a process (see
/// [`protocol_output`]), including a budget override past `context.timeout` (the manifest's
/// timeout) and `script-error: interrupted` on an interrupt; with what the check would have
/// written on stderr as a process: the `aidlc-sensor-<id>: <message>` line of a script or usage
/// error, or the `reason` of a tool that is unavailable (empty otherwise), so that a
/// non-evaluation keeps its reason in process too.
pub fn run_shipped_with_stderr(
    sensor: &ShippedSensor,
    args: Vec<String>,
    context: WorkerContext,
) -> (Verdict, String) {
    let check = sensor.check;
    let id = sensor.id;
    let timeout = context.timeout;
    let bounded = run_bounded(&format!("aidlc-sensor-{}", sensor.id), timeout, move || {
        let outcome = check(&args, &context);
        let stderr = match &outcome {
            WorkerOutcome::ScriptError(message) | WorkerOutcome::UsageError(message) => {
                format!("aidlc-sensor-{id}: {message}\n")
            }
            WorkerOutcome::ToolUnavailable(json) => json["reason"]
                .as_str()
                .map(|reason| format!("aidlc-sensor-{id}: tool unavailable: {reason}\n"))
                .unwrap_or_default(),
            WorkerOutcome::Verdict(_) => String::new(),
        };
        (protocol_output(&outcome), stderr)
    });
    let run = match bounded {
        Ok((((exit_code, stdout), stderr_tail), elapsed)) => WorkerRun {
            exit_code: Some(exit_code),
            elapsed,
            stdout: stdout.into_bytes(),
            stderr_tail,
            ..WorkerRun::default()
        },
        Err(unfinished) => unfinished,
    };
    (verdict_of(&run, timeout), run.stderr_tail)
}

/// How often a bounded wait looks at the interrupt flag.
const INTERRUPT_POLL: Duration = Duration::from_millis(10);

/// The stack of a check's thread: a main thread's usual 8 MiB, as the checks are written for (a
/// spawned thread gets 2 MiB by default).
const CHECK_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Run `work` on a thread named `name` and wait for it at most `timeout` (see the module
/// invariants for what happens to a thread that is still running then): its value and how long
/// it took, or the run of a worker that did not finish (timed out, with its thread abandoned;
/// interrupted first, or before it could start; or its thread not started). A panic in `work`
/// is re-raised here: a bug stays a bug (exit 101), never a verdict.
fn run_bounded<T: Send + 'static>(
    name: &str,
    timeout: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<(T, Duration), WorkerRun> {
    let interrupted = WorkerRun {
        interrupted: true,
        ..WorkerRun::default()
    };
    if interrupt::requested() {
        return Err(interrupted);
    }
    let started = Instant::now();
    let deadline = started.checked_add(timeout);
    let (sender, receiver) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(CHECK_STACK_BYTES)
        .spawn(move || {
            // The receiver is gone when the wait gave up; the value is then dropped here.
            let _ = sender.send(work());
        });
    let thread = spawned.map_err(|error| WorkerRun {
        spawn_error: Some(errno_name(&error).to_owned()),
        ..WorkerRun::default()
    })?;
    loop {
        let remaining = deadline.map_or(INTERRUPT_POLL, |deadline| {
            deadline.saturating_duration_since(Instant::now())
        });
        match receiver.recv_timeout(remaining.min(INTERRUPT_POLL)) {
            Ok(value) => return Ok((value, started.elapsed())),
            Err(RecvTimeoutError::Disconnected) => {
                // The thread ended without sending: `work` panicked.
                match thread.join() {
                    Err(panic) => std::panic::resume_unwind(panic),
                    Ok(()) => unreachable!("a thread that returned has sent its value"),
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if interrupt::requested() {
            return Err(interrupted);
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(WorkerRun {
                timed_out: true,
                elapsed: started.elapsed(),
                ..WorkerRun::default()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use camino::Utf8PathBuf;

    use super::*;

    /// Longer than any call below takes when it works: a call still running then hangs.
    const PATIENCE: Duration = Duration::from_secs(60);

    /// `call`'s value, run on its own thread; fails with `what` when it has not returned within
    /// [`PATIENCE`] (a bounded wait on the value's channel, never a sleep).
    fn returned_in_time<T: Send + 'static>(
        what: &str,
        call: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(call());
        });
        receiver
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|error| panic!("{what}: {error}"))
    }

    /// Work that blocks until `release` is dropped (or sent to): a check that never ends on
    /// its own, without a thread left sleeping once the test is over.
    fn blocked_until(release: &mpsc::Receiver<()>) {
        let _ = release.recv();
    }
    #[cfg(unix)]
    use crate::runtime::sensors::required_sections;
    #[cfg(unix)]
    use crate::runtime::sensors::test_support::SensorProject;

    #[test]
    fn work_that_finishes_in_time_gives_its_value() {
        match run_bounded("test-quick", Duration::from_secs(60), || 7) {
            Ok((value, _)) => assert_eq!(value, 7),
            Err(run) => panic!("expected the value, got {run:?}"),
        }
    }

    #[test]
    fn work_past_its_timeout_is_abandoned_at_the_deadline() {
        let (release, blocked) = mpsc::channel::<()>();
        let bounded = returned_in_time("the wait did not give up", move || {
            run_bounded("test-blocked", Duration::from_millis(300), move || {
                blocked_until(&blocked);
                1
            })
        });
        drop(release);
        let Err(run) = bounded else {
            panic!("expected a timeout, got {bounded:?}");
        };
        assert!(run.timed_out, "{run:?}");
        assert!(run.elapsed >= Duration::from_millis(300), "{run:?}");
    }

    #[test]
    #[should_panic(expected = "a bug in a check")]
    fn a_panic_in_the_work_is_raised_again() {
        let _ = run_bounded("test-panic", Duration::from_secs(60), || -> u8 {
            panic!("a bug in a check")
        });
    }

    /// A shipped check whose template is a FIFO nobody writes is refused at once, as every
    /// input is (D57): a script error long before its timeout, never a wait.
    #[cfg(unix)]
    #[test]
    fn a_shipped_check_whose_template_is_a_fifo_is_a_script_error_at_once() {
        let sensor = &required_sections::SENSOR;
        let project = SensorProject::new(sensor);
        let root = project.root();
        let templates = root.join("templates");
        std::fs::create_dir_all(&templates).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(templates.join("doc.md"))
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo failed");
        project.write("doc.md", "# Doc\n\n## A\n\n## B\n");
        let args = [
            "--stage",
            "first-stage",
            "--output-path",
            root.join("doc.md").as_str(),
            "--templates-dir",
            templates.as_str(),
            "--template-eligible",
            "doc",
        ]
        .map(str::to_owned)
        .to_vec();
        let context = WorkerContext {
            project_dir: root.clone(),
            timeout: Duration::from_secs(300),
        };
        let (verdict, stderr) = returned_in_time("waited on the FIFO", move || {
            run_shipped_with_stderr(sensor, args, context)
        });
        assert!(matches!(verdict, Verdict::ScriptError(_)), "{verdict:?}");
        assert!(stderr.contains("FIFO"), "{stderr}");
    }

    /// A shipped check that blocks ends at the manifest's timeout as a budget override, exactly
    /// as a spawned worker past its deadline.
    #[test]
    fn a_shipped_check_that_blocks_is_a_budget_override_at_its_timeout() {
        /// Held by the test while the check runs: the check blocks until the test lets go.
        static RELEASE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        fn blocking_check(_args: &[String], _context: &WorkerContext) -> WorkerOutcome {
            drop(RELEASE.lock());
            WorkerOutcome::ScriptError("released".to_owned())
        }
        let sensor = ShippedSensor {
            check: blocking_check,
            ..crate::runtime::sensors::required_sections::SENSOR
        };
        let held = RELEASE.lock().unwrap();
        let verdict = returned_in_time("no timeout", move || {
            run_shipped_with_stderr(
                &sensor,
                Vec::new(),
                WorkerContext {
                    project_dir: Utf8PathBuf::from("."),
                    timeout: Duration::from_secs(1),
                },
            )
            .0
        });
        drop(held);
        let Verdict::BudgetOverride {
            cap_seconds,
            observed_seconds,
        } = verdict
        else {
            panic!("expected a budget override, got {verdict:?}");
        };
        assert_eq!(cap_seconds, 1);
        assert!(observed_seconds >= 1);
    }
}
