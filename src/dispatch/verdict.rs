//! The verdict of one fire: the reference's truth table (upstream §4.6) as a closed enum (D4).
//!
//! `verdict_of` evaluates the rows in the reference's order: a (timeout), 0 (spawn error),
//! b (exit 127), c/d/f (exit 0 and the JSON), e1 (SIGTERM), e2 (other exit), e3 (other signal),
//! then the fallthrough. Every row but c (failed) and d (passed) and a (budget override) is a
//! non-evaluation, recorded as a noted `SENSOR_PASSED`; only `Verdict::Passed` is a real pass.
//!
//! Where this differs from the reference, on purpose:
//!
//! - Row a uses `WorkerRun::timed_out` (we know whether we stopped the worker) instead of the
//!   reference's guess "SIGTERM and elapsed ≥ timeout − 100 ms"; a SIGTERM from anyone else is
//!   `external-sigterm` even near the deadline, and a worker that needed SIGKILL after ignoring
//!   our SIGTERM is still a budget override.
//! - Stdout over the cap is `bad-output`. The reference's `spawnSync` killed such a worker with
//!   SIGTERM (`maxBuffer`), which it then misread as a timeout or an external kill.
//! - `NotImplemented` (a shipped check not built yet) has no reference row; its note is
//!   `script-error: not-implemented: <what is missing>`, so it reads as the script error it is.
//!
//! Kept from the reference: `findings_count` is floored, and a missing, non-number, non-finite
//! or negative value counts 0 (so `{"pass":false}` is a failure with 0 findings); `pass: true`
//! passes whatever `findings_count` says.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::dispatch::process::WorkerRun;

/// The exit status by which a worker says its tool is not installed (row b).
pub const EXIT_TOOL_UNAVAILABLE: i32 = 127;

/// How one fire ended; exactly one of the reference's terminal outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The worker ran and said `pass: true`: an unnoted `SENSOR_PASSED`.
    Passed,
    /// The worker ran and said `pass: false`: `SENSOR_FAILED`, with a detail file holding
    /// `worker_json`.
    Failed {
        findings_count: u64,
        worker_json: Value,
    },
    /// Exit 127: `SENSOR_PASSED` with the note `tool-unavailable`. Nothing was checked.
    ToolUnavailable,
    /// The worker could not say anything usable: `SENSOR_PASSED` with a `script-error: …` note.
    /// Nothing was checked.
    ScriptError(ScriptError),
    /// We stopped the worker at its timeout: `SENSOR_BUDGET_OVERRIDE` (cap layer `registry`).
    BudgetOverride {
        cap_seconds: u64,
        observed_seconds: u64,
    },
}

/// Why a worker produced no verdict; each variant is one `script-error: …` note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptError {
    /// The worker could not be started; holds the errno name (`ENOENT`) or `unknown`.
    SpawnFailed(String),
    /// Exit 0, but stdout was over the cap, not one JSON object, or `pass` was not a boolean.
    BadOutput,
    /// Ended by a SIGTERM that we did not send.
    ExternalSigterm,
    /// Ended with a non-zero status other than 127.
    Exit(i32),
    /// Ended by a signal other than SIGTERM; holds its name (`SIGKILL`).
    Signal(String),
    /// The worker failed, but its detail file could not be written; holds the error message.
    DetailWriteFailed(String),
    /// A shipped check that is not built yet; holds what is missing.
    NotImplemented(String),
    /// The dispatcher refused the fire before running anything (a gate fire whose pre-flight
    /// failed); holds the refusal.
    Refused(String),
    /// None of the rows matched (the status could not be read).
    Unknown,
}

impl ScriptError {
    /// The note's text after `script-error: `, exactly as the reference's table writes it.
    fn reason(&self) -> String {
        match self {
            Self::SpawnFailed(code) => format!("spawn-failed: {code}"),
            Self::BadOutput => "bad-output".to_owned(),
            Self::ExternalSigterm => "external-sigterm".to_owned(),
            Self::Exit(code) => format!("exit-{code}"),
            Self::Signal(name) => format!("signal-{name}"),
            Self::DetailWriteFailed(message) => format!("detail-write-failed: {message}"),
            Self::NotImplemented(what) => format!("not-implemented: {what}"),
            Self::Refused(why) => format!("refused: {why}"),
            Self::Unknown => "unknown".to_owned(),
        }
    }
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "script-error: {}", self.reason())
    }
}

impl Verdict {
    /// The audit row's `Note`: present exactly on the noted passes (the non-evaluations).
    pub fn note(&self) -> Option<String> {
        match self {
            Self::ToolUnavailable => Some("tool-unavailable".to_owned()),
            Self::ScriptError(error) => Some(error.to_string()),
            Self::Passed | Self::Failed { .. } | Self::BudgetOverride { .. } => None,
        }
    }

    /// Whether the sensor really ran and passed; the only verdict that may pass a blocking
    /// binding (D4).
    pub fn is_unnoted_pass(&self) -> bool {
        matches!(self, Self::Passed)
    }

    /// The `result` of the printed verdict line (upstream §4.9).
    pub fn result_word(&self) -> &'static str {
        match self {
            Self::Passed | Self::ToolUnavailable | Self::ScriptError(_) => "passed",
            Self::Failed { .. } => "failed",
            Self::BudgetOverride { .. } => "budget-override",
        }
    }
}

/// What a worker said, once its stdout was read as the protocol requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerOutput {
    pub pass: bool,
    /// Floored; 0 when missing, not a number, not finite or negative (the reference's rule).
    pub findings_count: u64,
    /// The whole object, keys in the worker's order, for the detail file.
    pub json: Value,
}

/// Why a worker's stdout is not a verdict (all are `script-error: bad-output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadWorkerOutput {
    #[error("stdout holds no `{{`")]
    NoObject,
    #[error("stdout from its first `{{` is not one JSON object")]
    NotOneObject,
    #[error("`pass` is missing or not a boolean")]
    PassNotBoolean,
}

/// Read a worker's stdout: skip anything before the first `{` (package-manager banners), then
/// require exactly one JSON object (whitespace may follow it) with a boolean `pass`.
///
/// Invalid UTF-8 is replaced, as the reference's `encoding: "utf-8"` did. `serde_json` refuses
/// nesting deeper than 128 levels, which makes such output bad rather than a stack overflow.
pub fn parse_worker_output(stdout: &[u8]) -> Result<WorkerOutput, BadWorkerOutput> {
    let text = String::from_utf8_lossy(stdout);
    let start = text.find('{').ok_or(BadWorkerOutput::NoObject)?;
    let json: Value =
        serde_json::from_str(&text[start..]).map_err(|_| BadWorkerOutput::NotOneObject)?;
    let object = json.as_object().ok_or(BadWorkerOutput::NotOneObject)?;
    let pass = object
        .get("pass")
        .and_then(Value::as_bool)
        .ok_or(BadWorkerOutput::PassNotBoolean)?;
    let findings_count = findings_count_of(object);
    Ok(WorkerOutput {
        pass,
        findings_count,
        json,
    })
}

/// The reference's `findings_count`: a finite non-negative number, floored; anything else 0.
fn findings_count_of(object: &Map<String, Value>) -> u64 {
    let Some(number) = object.get("findings_count").and_then(Value::as_number) else {
        return 0;
    };
    if let Some(whole) = number.as_u64() {
        return whole;
    }
    match number.as_f64() {
        Some(value) if value.is_finite() && value >= 0.0 => floor_to_u64(value),
        _ => 0,
    }
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the value is finite and non-negative; `as` saturates above u64::MAX, as wanted"
)]
fn floor_to_u64(value: f64) -> u64 {
    value.floor() as u64
}

/// The verdict of one run whose budget was `timeout`, by the rows of upstream §4.6 in order.
pub fn verdict_of(run: &WorkerRun, timeout: Duration) -> Verdict {
    if run.timed_out {
        return Verdict::BudgetOverride {
            cap_seconds: whole_seconds_rounded_up(timeout),
            observed_seconds: whole_seconds_rounded_up(run.elapsed),
        };
    }
    if let Some(code) = &run.spawn_error
        && run.exit_code.is_none()
        && run.signal.is_none()
    {
        return Verdict::ScriptError(ScriptError::SpawnFailed(code.clone()));
    }
    match (run.exit_code, run.signal) {
        (Some(EXIT_TOOL_UNAVAILABLE), _) => Verdict::ToolUnavailable,
        (Some(0), _) => verdict_of_output(run),
        (None, Some(libc::SIGTERM)) => Verdict::ScriptError(ScriptError::ExternalSigterm),
        (Some(code), _) => Verdict::ScriptError(ScriptError::Exit(code)),
        (None, Some(signal)) => Verdict::ScriptError(ScriptError::Signal(signal_name(signal))),
        (None, None) => Verdict::ScriptError(ScriptError::Unknown),
    }
}

/// Rows c, d and f: exit 0, so stdout decides.
fn verdict_of_output(run: &WorkerRun) -> Verdict {
    if run.stdout_truncated {
        return Verdict::ScriptError(ScriptError::BadOutput);
    }
    match parse_worker_output(&run.stdout) {
        Ok(output) if output.pass => Verdict::Passed,
        Ok(output) => Verdict::Failed {
            findings_count: output.findings_count,
            worker_json: output.json,
        },
        Err(_) => Verdict::ScriptError(ScriptError::BadOutput),
    }
}

/// `ceil(ms / 1000)` over whole milliseconds, as the reference computes `Observed value`.
fn whole_seconds_rounded_up(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis().div_ceil(1000)).unwrap_or(u64::MAX)
}

/// The name of a signal (`SIGKILL`), or `SIG<number>` for one outside the table.
#[cfg(unix)]
pub fn signal_name(signal: i32) -> String {
    const NAMES: [(i32, &str); 22] = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGSYS, "SIGSYS"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
    ];
    NAMES
        .iter()
        .find(|(number, _)| *number == signal)
        .map_or_else(|| format!("SIG{signal}"), |(_, name)| (*name).to_owned())
}

/// The name of a signal; there are no signal statuses off Unix, so no table either.
#[cfg(not(unix))]
pub fn signal_name(signal: i32) -> String {
    format!("SIG{signal}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn exited(code: i32, stdout: &str) -> WorkerRun {
        WorkerRun {
            exit_code: Some(code),
            stdout: stdout.as_bytes().to_vec(),
            ..WorkerRun::default()
        }
    }

    fn verdict_of_stdout(stdout: &str) -> Verdict {
        verdict_of(&exited(0, stdout), Duration::from_secs(300))
    }

    fn failed_count(verdict: &Verdict) -> u64 {
        match verdict {
            Verdict::Failed { findings_count, .. } => *findings_count,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    fn script_error(error: ScriptError) -> Verdict {
        Verdict::ScriptError(error)
    }

    #[test]
    fn pass_true_is_an_unnoted_pass() {
        let verdict = verdict_of_stdout(r#"{"pass":true,"findings_count":0}"#);
        assert_eq!(verdict, Verdict::Passed);
        assert!(verdict.is_unnoted_pass());
        assert_eq!(verdict.note(), None);
    }

    #[test]
    fn pass_true_passes_whatever_findings_count_says() {
        assert_eq!(
            verdict_of_stdout(r#"{"pass":true,"findings_count":5}"#),
            Verdict::Passed
        );
    }

    #[test]
    fn pass_false_with_three_findings_is_failed_with_three_and_the_whole_json() {
        let verdict = verdict_of_stdout(r#"{"pass":false,"findings_count":3,"findings":["a"]}"#);
        assert_eq!(
            verdict,
            Verdict::Failed {
                findings_count: 3,
                worker_json: json!({"pass": false, "findings_count": 3, "findings": ["a"]}),
            }
        );
        assert_eq!(verdict.note(), None);
        assert_eq!(verdict.result_word(), "failed");
    }

    // The issue asks what a missing or negative `findings_count` does: the reference's rule,
    // 0, so the verdict is still a failure (with 0 findings), never a pass.
    #[test]
    fn pass_false_without_findings_count_is_failed_with_zero() {
        assert_eq!(failed_count(&verdict_of_stdout(r#"{"pass":false}"#)), 0);
    }

    #[test]
    fn a_negative_findings_count_counts_zero() {
        let stdout = r#"{"pass":false,"findings_count":-4}"#;
        assert_eq!(failed_count(&verdict_of_stdout(stdout)), 0);
    }

    #[test]
    fn a_fractional_findings_count_is_floored() {
        let stdout = r#"{"pass":false,"findings_count":2.7}"#;
        assert_eq!(failed_count(&verdict_of_stdout(stdout)), 2);
    }

    #[test]
    fn findings_count_that_is_not_a_number_counts_zero() {
        for value in [r#""3""#, "null", "true", "[3]", "{}", "-0.5"] {
            let stdout = format!(r#"{{"pass":false,"findings_count":{value}}}"#);
            assert_eq!(failed_count(&verdict_of_stdout(&stdout)), 0, "{value}");
        }
    }

    #[test]
    fn a_huge_findings_count_saturates() {
        let stdout = r#"{"pass":false,"findings_count":1e300}"#;
        assert_eq!(failed_count(&verdict_of_stdout(stdout)), u64::MAX);
        let exact = r#"{"pass":false,"findings_count":18446744073709551615}"#;
        assert_eq!(failed_count(&verdict_of_stdout(exact)), u64::MAX);
    }

    #[test]
    fn a_banner_before_the_json_is_skipped() {
        let stdout = "> npm run check\n\n{\"pass\":false,\"findings_count\":1}\n";
        assert_eq!(failed_count(&verdict_of_stdout(stdout)), 1);
    }

    #[test]
    fn garbage_on_stdout_is_bad_output() {
        for stdout in [
            "",
            "garbage",
            "Error: cannot find module",
            "{not json}",
            "{\"pass\":",
        ] {
            assert_eq!(
                verdict_of_stdout(stdout),
                script_error(ScriptError::BadOutput),
                "{stdout:?}"
            );
        }
    }

    #[test]
    fn pass_that_is_not_a_boolean_is_bad_output() {
        for stdout in [
            r#"{"pass":"yes"}"#,
            r#"{"pass":1}"#,
            r#"{"pass":null}"#,
            "{}",
        ] {
            assert_eq!(
                verdict_of_stdout(stdout),
                script_error(ScriptError::BadOutput),
                "{stdout:?}"
            );
        }
    }

    #[test]
    fn more_than_one_json_value_is_bad_output() {
        for stdout in [
            r#"{"pass":true}{"pass":false}"#,
            r#"{"pass":true} trailing"#,
            r#"[{"pass":true}]"#,
        ] {
            assert_eq!(
                verdict_of_stdout(stdout),
                script_error(ScriptError::BadOutput),
                "{stdout:?}"
            );
        }
        assert_eq!(verdict_of_stdout("{\"pass\":true}\n\n  "), Verdict::Passed);
    }

    #[test]
    fn parse_errors_say_what_was_wrong() {
        assert_eq!(
            parse_worker_output(b"no braces"),
            Err(BadWorkerOutput::NoObject)
        );
        assert_eq!(
            parse_worker_output(b"{oops"),
            Err(BadWorkerOutput::NotOneObject)
        );
        assert_eq!(
            parse_worker_output(br#"{"pass":"no"}"#),
            Err(BadWorkerOutput::PassNotBoolean)
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let output = parse_worker_output(b"\xff\xfe{\"pass\":false,\"note\":\"\xff\"}").unwrap();
        assert!(!output.pass);
        assert_eq!(output.json["note"], json!("\u{fffd}"));
    }

    #[test]
    fn a_truncated_stdout_is_bad_output_even_when_it_parses() {
        let run = WorkerRun {
            stdout_truncated: true,
            ..exited(0, r#"{"pass":true}"#)
        };
        assert_eq!(
            verdict_of(&run, Duration::from_secs(1)),
            script_error(ScriptError::BadOutput)
        );
    }

    #[test]
    fn a_timeout_comes_before_every_other_row() {
        let run = WorkerRun {
            timed_out: true,
            spawn_error: Some("unknown".to_owned()),
            signal: Some(libc::SIGTERM),
            elapsed: Duration::from_millis(300_001),
            ..WorkerRun::default()
        };
        assert_eq!(
            verdict_of(&run, Duration::from_secs(300)),
            Verdict::BudgetOverride {
                cap_seconds: 300,
                observed_seconds: 301,
            }
        );
    }

    #[test]
    fn observed_seconds_round_up_whole_milliseconds() {
        let observed = |elapsed: Duration| {
            let run = WorkerRun {
                timed_out: true,
                elapsed,
                ..WorkerRun::default()
            };
            match verdict_of(&run, Duration::from_secs(1)) {
                Verdict::BudgetOverride {
                    observed_seconds, ..
                } => observed_seconds,
                other => panic!("expected a budget override, got {other:?}"),
            }
        };
        assert_eq!(observed(Duration::from_secs(1)), 1);
        assert_eq!(observed(Duration::from_micros(1_000_400)), 1);
        assert_eq!(observed(Duration::from_millis(1001)), 2);
    }

    #[test]
    fn exit_codes_and_signals_follow_the_table() {
        let timeout = Duration::from_secs(1);
        let signalled = |signal| WorkerRun {
            signal: Some(signal),
            ..WorkerRun::default()
        };
        assert_eq!(
            verdict_of(&exited(127, ""), timeout),
            Verdict::ToolUnavailable
        );
        assert_eq!(
            verdict_of(&exited(2, "{\"pass\":true}"), timeout),
            script_error(ScriptError::Exit(2))
        );
        assert_eq!(
            verdict_of(&exited(-1, ""), timeout),
            script_error(ScriptError::Exit(-1))
        );
        assert_eq!(
            verdict_of(&signalled(libc::SIGTERM), timeout),
            script_error(ScriptError::ExternalSigterm)
        );
        assert_eq!(
            verdict_of(&signalled(libc::SIGKILL), timeout),
            script_error(ScriptError::Signal("SIGKILL".to_owned()))
        );
        assert_eq!(
            verdict_of(&WorkerRun::default(), timeout),
            script_error(ScriptError::Unknown)
        );
    }

    #[cfg(unix)]
    #[test]
    fn signal_names_come_from_the_table_or_the_number() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(64), "SIG64");
    }

    #[test]
    fn notes_are_exactly_the_reference_table() {
        let cases = [
            (Verdict::ToolUnavailable, "tool-unavailable"),
            (
                script_error(ScriptError::SpawnFailed("ENOENT".to_owned())),
                "script-error: spawn-failed: ENOENT",
            ),
            (
                script_error(ScriptError::BadOutput),
                "script-error: bad-output",
            ),
            (
                script_error(ScriptError::ExternalSigterm),
                "script-error: external-sigterm",
            ),
            (script_error(ScriptError::Exit(2)), "script-error: exit-2"),
            (
                script_error(ScriptError::Signal("SIGKILL".to_owned())),
                "script-error: signal-SIGKILL",
            ),
            (
                script_error(ScriptError::DetailWriteFailed("EACCES: denied".to_owned())),
                "script-error: detail-write-failed: EACCES: denied",
            ),
            (
                script_error(ScriptError::NotImplemented("the eslint runner".to_owned())),
                "script-error: not-implemented: the eslint runner",
            ),
            (script_error(ScriptError::Unknown), "script-error: unknown"),
        ];
        for (verdict, note) in cases {
            assert_eq!(verdict.note().as_deref(), Some(note));
            assert!(!verdict.is_unnoted_pass(), "{note}");
            assert_eq!(verdict.result_word(), "passed", "{note}");
        }
    }

    #[test]
    fn only_a_real_pass_is_an_unnoted_pass() {
        let budget = Verdict::BudgetOverride {
            cap_seconds: 1,
            observed_seconds: 2,
        };
        assert_eq!(budget.note(), None);
        assert!(!budget.is_unnoted_pass());
        assert_eq!(budget.result_word(), "budget-override");
        let failed = Verdict::Failed {
            findings_count: 0,
            worker_json: json!({"pass": false}),
        };
        assert!(!failed.is_unnoted_pass());
        assert!(Verdict::Passed.is_unnoted_pass());
        assert_eq!(Verdict::Passed.result_word(), "passed");
    }

    /// The table end to end: real `#!/bin/sh` workers through `run_worker`.
    #[cfg(unix)]
    mod with_real_workers {
        use super::*;
        use crate::dispatch::process::tests::{FakeWorkers, GENEROUS_TIMEOUT, run_fake_worker};

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
            assert_eq!(verdict, script_error(ScriptError::BadOutput));
        }

        #[test]
        fn pass_yes_is_bad_output() {
            let verdict = verdict_of_script(r#"echo '{"pass":"yes"}'"#);
            assert_eq!(verdict, script_error(ScriptError::BadOutput));
        }

        #[test]
        fn pass_false_with_three_findings_is_failed_with_three() {
            let verdict = verdict_of_script(r#"echo '{"pass":false,"findings_count":3}'"#);
            assert_eq!(failed_count(&verdict), 3);
        }

        #[test]
        fn pass_false_without_findings_count_is_failed_with_zero() {
            let verdict = verdict_of_script(r#"echo '{"pass":false}'"#);
            assert_eq!(failed_count(&verdict), 0);
        }

        #[test]
        fn a_negative_findings_count_counts_zero() {
            let verdict = verdict_of_script(r#"echo '{"pass":false,"findings_count":-4}'"#);
            assert_eq!(failed_count(&verdict), 0);
        }

        #[test]
        fn a_fractional_findings_count_is_floored() {
            let verdict = verdict_of_script(r#"echo '{"pass":false,"findings_count":2.7}'"#);
            assert_eq!(failed_count(&verdict), 2);
        }

        #[test]
        fn a_banner_line_before_the_json_is_skipped() {
            let verdict = verdict_of_script("echo '> npm run check'; echo '{\"pass\":true}'");
            assert_eq!(verdict, Verdict::Passed);
        }
    }
}
