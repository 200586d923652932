//! The verdict of one fire: the reference's truth table (D24) as a closed enum (D4).
//!
//! `verdict_of` evaluates the rows in the reference's order, after one row of our own:
//! interrupted (the user stopped `aidlc`), then a (timeout), 0 (spawn error), b (exit 127),
//! c/d/f (exit 0 and the JSON), e1 (SIGTERM), e2 (other exit), e3 (other signal), then the
//! fallthrough. Every row but c (failed) and d (passed) and a (budget override) is a
//! non-evaluation, recorded as a noted `SENSOR_PASSED`; only `Verdict::Passed` is a real pass.
//!
//! Where this differs from the reference, on purpose:
//!
//! - Row a uses `WorkerRun::timed_out` (we know whether we stopped the worker) instead of the
//!   reference's guess "SIGTERM and elapsed ≥ timeout − 100 ms"; a SIGTERM from anyone else is
//!   `external-sigterm` even near the deadline, and a worker that needed SIGKILL after ignoring
//!   our SIGTERM is still a budget override.
//! - A worker we stopped because `aidlc` itself was interrupted (SIGINT, SIGTERM, SIGHUP) is
//!   `script-error: interrupted`: nothing was checked, and it was not the worker's fault.
//! - Stdout over the cap is `bad-output`. The reference's `spawnSync` killed such a worker with
//!   SIGTERM (`maxBuffer`), which it then misread as a timeout or an external kill.
//! - The worker's JSON is read strictly (D4, scenario S2), where the reference floored a
//!   missing or broken `findings_count` to 0 and let `pass: true` pass whatever it said. Each
//!   of these is `script-error: bad-output`, and the `BadWorkerOutput` kept in the verdict says
//!   which rule the output broke (the audit `Note` stays the reference's `script-error:
//!   bad-output`, byte for byte):
//!   - a key that appears twice at the top level (`{"pass":false,"pass":true}`): `serde_json`
//!     keeps the last one silently, so the keys are collected by our own visitor;
//!   - `pass` missing or not a boolean;
//!   - `findings_count` present but not a non-negative whole number that fits in 64 bits.
//!     `2.0` and `2e0` are accepted as 2 (the value is exactly a whole number, and a worker
//!     written in a language with one number type may print it so); `-1`, `2.5`, `1e300`,
//!     `"2"`, `null` are refused. A missing `findings_count` is read as the reference reads it
//!     (D4): 0 on a pass (its own fixture workers print `{"pass": true, "h2_count": 5}`), and
//!     on a failure the number of items of `findings` when that is an array, else 0;
//!   - more than one line of stdout that is a verdict on its own (a JSON object with `pass`):
//!     the reference's parse fails on them, and reading the last would let a later `pass: true`
//!     hide an earlier failure;
//!   - `pass: true` with `findings_count > 0`, which contradicts itself.
//!
//!   `pass: false` with `findings_count: 0` is a failure with no counted findings (a worker may
//!   fail on something it does not count), never a pass.
//!
//! Where the JSON is in stdout (`parse_worker_output`): the reference cut stdout at its first
//! `{` (package-manager banners). That is still tried first, because it is the only rule that
//! reads pretty-printed (multi-line) output, and a whole object found so can never be confused
//! with one of its own nested lines. When the text from the first `{` is not one object (a
//! banner line that itself holds a `{`, or a line printed after the JSON), the verdict is the
//! last line of stdout that is one JSON object on its own, unless more than one line is a
//! verdict on its own (bad output: which of them the worker meant cannot be known).

use std::fmt;
use std::time::Duration;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The exit status by which a worker says its tool is not installed (row b).
pub const EXIT_TOOL_UNAVAILABLE: i32 = 127;

/// What happened to one worker, as the runner that started it (`worker_process::run_worker`, or
/// a native check run in process) saw it: the input of [`verdict_of`].
///
/// Exactly one of these holds: `interrupted` is set and nothing was spawned; `spawn_error` is
/// set (and there is no status); or the worker ran and `exit_code` or `signal` says how it
/// ended, or neither is known (waiting for it failed, or it could not be reaped after SIGKILL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerRun {
    pub exit_code: Option<i32>,
    /// The signal that ended the worker, on Unix.
    pub signal: Option<i32>,
    /// The errno name of a failed spawn (`ENOENT`, `EACCES`, `ENOEXEC`, `E2BIG`, `ENOMEM`,
    /// `ETXTBSY`), or `unknown`.
    pub spawn_error: Option<String>,
    /// The runner ended the worker because its timeout passed.
    pub timed_out: bool,
    /// `aidlc` was interrupted: the worker was stopped, or never started.
    pub interrupted: bool,
    /// From just before the spawn to the end of the run (output read, worker reaped).
    pub elapsed: Duration,
    /// At most the runner's stdout cap.
    pub stdout: Vec<u8>,
    /// The worker wrote more than the cap.
    pub stdout_truncated: bool,
    /// The tail of stderr the runner kept, lossy UTF-8.
    pub stderr_tail: String,
}

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

/// Why a worker produced no verdict; each variant is one `script-error: …` note, whose text
/// after `script-error: ` is exactly what the reference's table writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The worker could not be started; holds the errno name (`ENOENT`) or `unknown`.
    #[error("script-error: spawn-failed: {0}")]
    SpawnFailed(String),
    /// Exit 0, but stdout was not a verdict; holds the rule it broke (not part of the note).
    #[error("script-error: bad-output")]
    BadOutput(BadWorkerOutput),
    /// Ended by a SIGTERM that we did not send.
    #[error("script-error: external-sigterm")]
    ExternalSigterm,
    /// Ended with a non-zero status other than 127.
    #[error("script-error: exit-{0}")]
    Exit(i32),
    /// Ended by a signal other than SIGTERM; holds its name (`SIGKILL`).
    #[error("script-error: signal-{0}")]
    Signal(String),
    /// The worker failed, but its detail file could not be written; holds the error message.
    #[error("script-error: detail-write-failed: {0}")]
    DetailWriteFailed(String),
    /// The dispatcher refused the fire before running anything (a gate fire whose pre-flight
    /// failed); holds the refusal.
    #[error("script-error: refused: {0}")]
    Refused(String),
    /// `aidlc` was interrupted (SIGINT, SIGTERM or SIGHUP) while the worker ran, so the worker
    /// was stopped (or the in-process check abandoned) before it gave a verdict.
    #[error("script-error: interrupted")]
    Interrupted,
    /// An enclosing time limit (the write hook's allowance, the gate's dispatch cap, `gate
    /// check --timeout`) ran out while the worker ran, so it was stopped before it gave a
    /// verdict; holds the limit's name.
    #[error("script-error: cut-short: {0} ran out")]
    CutShort(String),
    /// None of the rows matched (the status could not be read).
    #[error("script-error: unknown")]
    Unknown,
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

    /// The note with what it leaves out (`script-error: bad-output: the key "pass" appears more
    /// than once …`), for reports read by people; the audit keeps the bare [`Verdict::note`].
    pub fn explained_note(&self) -> Option<String> {
        let note = self.note()?;
        Some(match self {
            Self::ScriptError(ScriptError::BadOutput(bad)) => format!("{note}: {bad}"),
            _ => note,
        })
    }

    /// Whether the sensor really ran and passed; the only verdict that may pass a blocking
    /// binding (D4).
    pub fn is_unnoted_pass(&self) -> bool {
        matches!(self, Self::Passed)
    }

    /// The `result` of the printed verdict line (D27).
    pub fn result_word(&self) -> &'static str {
        match self {
            Self::Passed | Self::ToolUnavailable | Self::ScriptError(_) => "passed",
            Self::Failed { .. } => "failed",
            Self::BudgetOverride { .. } => "budget-override",
        }
    }
}

/// Why a worker's stdout is not a verdict (all are `script-error: bad-output`), worded to say
/// which rule it broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadWorkerOutput {
    #[error("stdout was larger than the cap, so it was cut and is not read")]
    OverTheCap,
    #[error("stdout holds no JSON object (no `{{` at all)")]
    NoObject,
    #[error(
        "stdout is not one JSON object: the text from its first `{{` is not one, and no line is one on its own"
    )]
    NotOneObject,
    #[error("the key \"{0}\" appears more than once in the worker's JSON object")]
    DuplicateKey(String),
    #[error("`pass` is missing")]
    PassMissing,
    #[error("`pass` is {0}, not a boolean")]
    PassNotBoolean(String),
    #[error(
        "stdout holds {0} lines that are each a verdict (a JSON object with `pass`); a worker prints one"
    )]
    SeveralVerdicts(usize),
    #[error("`findings_count` is {0}, not a non-negative whole number")]
    FindingsCountNotACount(String),
    #[error("`pass` is true but `findings_count` is {0}: the verdict contradicts itself")]
    PassWithFindings(u64),
}

/// Read a worker's stdout as one verdict, passed or failed (see the module documentation for
/// where the JSON is looked for, and for the rules it must follow). A failure keeps the whole
/// object, keys in the worker's order, for the detail file.
///
/// Invalid UTF-8 is replaced, as the reference's `encoding: "utf-8"` did. `serde_json` refuses
/// nesting deeper than 128 levels, which makes such output bad rather than a stack overflow.
pub fn parse_worker_output(stdout: &[u8]) -> Result<Verdict, BadWorkerOutput> {
    let text = String::from_utf8_lossy(stdout);
    let start = text.find('{').ok_or(BadWorkerOutput::NoObject)?;
    let object = match one_object(&text[start..]) {
        Some(object) => object,
        None => the_verdict_line(&text)?,
    };
    if let Some(key) = object.duplicate_keys.into_iter().next() {
        return Err(BadWorkerOutput::DuplicateKey(key));
    }
    let pass = match object.map.get("pass") {
        None => return Err(BadWorkerOutput::PassMissing),
        Some(Value::Bool(pass)) => *pass,
        Some(other) => return Err(BadWorkerOutput::PassNotBoolean(excerpt(other))),
    };
    let findings_count = match object.map.get("findings_count") {
        None => counted_without_a_count(pass, &object.map),
        Some(value) => whole_count(value)
            .ok_or_else(|| BadWorkerOutput::FindingsCountNotACount(excerpt(value)))?,
    };
    if pass && findings_count > 0 {
        return Err(BadWorkerOutput::PassWithFindings(findings_count));
    }
    Ok(if pass {
        Verdict::Passed
    } else {
        Verdict::Failed {
            findings_count,
            worker_json: Value::Object(object.map),
        }
    })
}

/// The count of a verdict that names none, as the reference reads it: 0 on a pass; on a failure
/// the items of its `findings` list, else 0.
fn counted_without_a_count(pass: bool, map: &Map<String, Value>) -> u64 {
    if pass {
        return 0;
    }
    map.get("findings")
        .and_then(Value::as_array)
        .map_or(0, |findings| {
            u64::try_from(findings.len()).unwrap_or(u64::MAX)
        })
}

/// The last line of `text` that is one JSON object; more than one line that is a verdict on
/// its own (an object with `pass`) is bad output.
fn the_verdict_line(text: &str) -> Result<TopLevelObject, BadWorkerOutput> {
    let mut objects: Vec<TopLevelObject> = text.lines().filter_map(one_object).collect();
    let verdicts = objects
        .iter()
        .filter(|object| object.map.contains_key("pass"))
        .count();
    if verdicts > 1 {
        return Err(BadWorkerOutput::SeveralVerdicts(verdicts));
    }
    objects.pop().ok_or(BadWorkerOutput::NotOneObject)
}

/// `text` as exactly one JSON object (whitespace around it allowed), or `None`.
fn one_object(text: &str) -> Option<TopLevelObject> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let object = TopLevelObject::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(object)
}

/// A JSON object read with its top-level keys counted: `serde_json::Map` keeps the last of two
/// equal keys without a word, which would let `{"pass":false,"pass":true}` pass.
struct TopLevelObject {
    /// The first value of each key, keys in the worker's order.
    map: Map<String, Value>,
    /// Each key that appeared more than once, in the order first repeated.
    duplicate_keys: Vec<String>,
}

impl<'de> Deserialize<'de> for TopLevelObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TopLevelObjectVisitor)
    }
}

struct TopLevelObjectVisitor;

impl<'de> Visitor<'de> for TopLevelObjectVisitor {
    type Value = TopLevelObject;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<TopLevelObject, A::Error> {
        let mut map = Map::new();
        let mut duplicate_keys = Vec::new();
        while let Some(key) = access.next_key::<String>()? {
            let value: Value = access.next_value()?;
            if map.contains_key(&key) {
                if !duplicate_keys.contains(&key) {
                    duplicate_keys.push(key);
                }
            } else {
                map.insert(key, value);
            }
        }
        Ok(TopLevelObject {
            map,
            duplicate_keys,
        })
    }
}

/// A JSON number that is exactly a non-negative whole number fitting in a `u64` (`2`, `2.0`,
/// `2e0`); anything else is `None`.
fn whole_count(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    if let Some(whole) = number.as_u64() {
        return Some(whole);
    }
    if number.is_i64() {
        // A negative integer.
        return None;
    }
    let float = number.as_f64()?;
    // 2^64 is exactly representable; every smaller whole f64 converts without loss.
    let is_whole_u64 = float.is_finite()
        && float >= 0.0
        && float.fract() == 0.0
        && float < 18_446_744_073_709_551_616.0;
    is_whole_u64.then(|| whole_f64_to_u64(float))
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the caller checked that the value is a whole number in 0..2^64"
)]
fn whole_f64_to_u64(value: f64) -> u64 {
    value as u64
}

/// A short rendering of a JSON value for a message: at most 40 characters.
fn excerpt(value: &Value) -> String {
    const LONGEST: usize = 40;
    let text = value.to_string();
    match text.char_indices().nth(LONGEST) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The verdict of one run whose budget was `timeout`, by the rows of D24 in order.
pub fn verdict_of(run: &WorkerRun, timeout: Duration) -> Verdict {
    if run.interrupted {
        return Verdict::ScriptError(ScriptError::Interrupted);
    }
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
        return Verdict::ScriptError(ScriptError::BadOutput(BadWorkerOutput::OverTheCap));
    }
    parse_worker_output(&run.stdout)
        .unwrap_or_else(|bad| Verdict::ScriptError(ScriptError::BadOutput(bad)))
}

/// `ceil(ms / 1000)` over whole milliseconds, as the reference computes `Observed value`.
fn whole_seconds_rounded_up(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis().div_ceil(1000)).unwrap_or(u64::MAX)
}

/// The errno name of a spawn error, for the `spawn-failed: <code>` note.
pub fn errno_name(error: &std::io::Error) -> &'static str {
    #[cfg(unix)]
    const NAMES: [(i32, &str); 7] = [
        (libc::ENOENT, "ENOENT"),
        (libc::EACCES, "EACCES"),
        (libc::ENOEXEC, "ENOEXEC"),
        (libc::E2BIG, "E2BIG"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::ETXTBSY, "ETXTBSY"),
        (libc::EAGAIN, "EAGAIN"),
    ];
    #[cfg(unix)]
    if let Some(code) = error.raw_os_error() {
        return NAMES
            .iter()
            .find(|(number, _)| *number == code)
            .map_or("unknown", |(_, name)| name);
    }
    match error.kind() {
        std::io::ErrorKind::NotFound => "ENOENT",
        std::io::ErrorKind::PermissionDenied => "EACCES",
        std::io::ErrorKind::OutOfMemory => "ENOMEM",
        _ => "unknown",
    }
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

    #[test]
    fn pass_true_is_an_unnoted_pass() {
        let verdict = verdict_of_stdout(r#"{"pass":true,"findings_count":0}"#);
        assert_eq!(verdict, Verdict::Passed);
        assert!(verdict.is_unnoted_pass());
        assert_eq!(verdict.note(), None);
    }

    // D4 replaced the reference's rule (`pass: true` passed whatever `findings_count` said).
    #[test]
    fn pass_true_with_findings_is_bad_output_that_says_it_contradicts_itself() {
        let verdict = verdict_of_stdout(r#"{"pass":true,"findings_count":5}"#);
        assert_eq!(bad_output(&verdict), &BadWorkerOutput::PassWithFindings(5));
        assert!(!verdict.is_unnoted_pass());
        assert_eq!(
            verdict.explained_note().as_deref(),
            Some(
                "script-error: bad-output: `pass` is true but `findings_count` is 5: the verdict contradicts itself"
            )
        );
    }

    #[test]
    fn a_duplicate_top_level_key_is_bad_output_whichever_value_comes_last() {
        for stdout in [
            r#"{"pass":false,"pass":true,"findings_count":0}"#,
            r#"{"pass":true,"pass":false,"findings_count":0}"#,
            r#"{"pass":true,"findings_count":0,"findings_count":0}"#,
            r#"{"pass":true,"findings_count":0,"x":1,"x":1}"#,
        ] {
            let verdict = verdict_of_stdout(stdout);
            assert!(
                matches!(bad_output(&verdict), BadWorkerOutput::DuplicateKey(_)),
                "{stdout}"
            );
        }
        let verdict = verdict_of_stdout(r#"{"pass":false,"pass":true,"findings_count":0}"#);
        assert_eq!(
            bad_output(&verdict),
            &BadWorkerOutput::DuplicateKey("pass".to_owned())
        );
    }

    #[test]
    fn a_duplicate_key_inside_a_nested_object_is_not_the_verdict_s_business() {
        let stdout = r#"{"pass":false,"findings_count":1,"findings":[{"a":1,"a":2}]}"#;
        assert_eq!(failed_count(&verdict_of_stdout(stdout)), 1);
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

    // D4 replaced the reference's rule (a missing, negative, fractional or non-number
    // `findings_count` counted 0): each is now bad output, whatever `pass` says.
    #[test]
    fn a_missing_findings_count_is_read_as_the_reference_reads_it() {
        assert_eq!(
            verdict_of_stdout(r#"{"pass": true, "h2_count": 5}"#),
            Verdict::Passed
        );
        assert_eq!(failed_count(&verdict_of_stdout(r#"{"pass":false}"#)), 0);
        assert_eq!(
            failed_count(&verdict_of_stdout(
                r#"{"pass":false,"findings":[{"message":"a"},"b"]}"#
            )),
            2
        );
        assert_eq!(
            failed_count(&verdict_of_stdout(r#"{"pass":false,"findings":"two"}"#)),
            0
        );
    }

    #[test]
    fn two_verdict_lines_are_bad_output_whichever_comes_last() {
        for stdout in [
            "{\"pass\":false,\"findings_count\":1}\n{\"pass\":true,\"findings_count\":0}\n",
            "{\"pass\":true,\"findings_count\":0}\n{\"pass\":false,\"findings_count\":1}\n",
            "banner {\n{\"pass\":true}\nlog\n{\"pass\":true}\n",
        ] {
            assert_eq!(
                bad_output(&verdict_of_stdout(stdout)),
                &BadWorkerOutput::SeveralVerdicts(2),
                "{stdout}"
            );
        }
        // A log line that is an object without `pass` is not a second verdict.
        let logged = "{\"level\":\"info\"}\n{\"pass\":true,\"findings_count\":0}\n";
        assert_eq!(verdict_of_stdout(logged), Verdict::Passed);
    }

    #[test]
    fn a_findings_count_that_is_not_a_non_negative_whole_number_is_bad_output() {
        for value in [
            "-4",
            "-0.5",
            "2.7",
            "1e300",
            "18446744073709551616",
            r#""3""#,
            "null",
            "true",
            "[3]",
            "{}",
        ] {
            for pass in ["true", "false"] {
                let stdout = format!(r#"{{"pass":{pass},"findings_count":{value}}}"#);
                assert!(
                    matches!(
                        bad_output(&verdict_of_stdout(&stdout)),
                        BadWorkerOutput::FindingsCountNotACount(_)
                    ),
                    "{stdout}"
                );
            }
        }
    }

    #[test]
    fn a_whole_findings_count_written_as_a_float_is_accepted() {
        for (value, count) in [("2.0", 2), ("2e0", 2), ("0.0", 0), ("-0", 0), ("1e3", 1000)] {
            let stdout = format!(r#"{{"pass":false,"findings_count":{value}}}"#);
            assert_eq!(failed_count(&verdict_of_stdout(&stdout)), count, "{value}");
        }
        assert_eq!(
            verdict_of_stdout(r#"{"pass":true,"findings_count":0.0}"#),
            Verdict::Passed
        );
    }

    #[test]
    fn the_largest_findings_count_is_kept_exactly() {
        let exact = r#"{"pass":false,"findings_count":18446744073709551615}"#;
        assert_eq!(failed_count(&verdict_of_stdout(exact)), u64::MAX);
    }

    #[test]
    fn pass_false_with_zero_findings_is_a_failure_not_a_pass() {
        let verdict = verdict_of_stdout(r#"{"pass":false,"findings_count":0}"#);
        assert_eq!(failed_count(&verdict), 0);
        assert!(!verdict.is_unnoted_pass());
    }

    #[test]
    fn a_banner_before_the_json_is_skipped() {
        let stdout = "> npm run check\n\n{\"pass\":false,\"findings_count\":1}\n";
        assert_eq!(failed_count(&verdict_of_stdout(stdout)), 1);
    }

    #[test]
    fn a_banner_line_holding_a_brace_does_not_hide_the_json_line_after_it() {
        for banner in [
            "> check {src,test}/**",
            "{\"level\":\"info\",\"msg\":\"starting\"}",
            "{ not json",
        ] {
            let stdout = format!("{banner}\n{{\"pass\":false,\"findings_count\":2}}\n");
            assert_eq!(failed_count(&verdict_of_stdout(&stdout)), 2, "{banner}");
        }
        let passing = "> check {src,test}/**\r\n{\"pass\":true,\"findings_count\":0}\r\n";
        assert_eq!(verdict_of_stdout(passing), Verdict::Passed);
    }

    #[test]
    fn the_last_line_that_is_one_object_is_the_verdict() {
        let log_before = "{\"level\":\"debug\"}\n{\"pass\":false,\"findings_count\":1}\n";
        assert_eq!(failed_count(&verdict_of_stdout(log_before)), 1);
        let log_after = "{\"pass\":true,\"findings_count\":0}\n{\"level\":\"debug\"}\n";
        assert_eq!(
            bad_output(&verdict_of_stdout(log_after)),
            &BadWorkerOutput::PassMissing
        );
        let text_after = "{\"pass\":false,\"findings_count\":3}\nDone in 0.4s\n";
        assert_eq!(failed_count(&verdict_of_stdout(text_after)), 3);
    }

    #[test]
    fn pretty_printed_json_is_read_whole_and_never_by_one_of_its_nested_lines() {
        let stdout = "> banner\n{\n  \"pass\": false,\n  \"findings\": [\n    {\"pass\": true, \"findings_count\": 0}\n  ],\n  \"findings_count\": 1\n}\n";
        let verdict = verdict_of_stdout(stdout);
        assert_eq!(failed_count(&verdict), 1);
        let duplicated = "{\n  \"pass\": false,\n  \"findings_count\": 0,\n  \"pass\": true\n}\n";
        assert_eq!(
            bad_output(&verdict_of_stdout(duplicated)),
            &BadWorkerOutput::DuplicateKey("pass".to_owned())
        );
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
            bad_output(&verdict_of_stdout(stdout));
        }
    }

    #[test]
    fn pass_that_is_missing_or_not_a_boolean_is_bad_output() {
        for (stdout, value) in [
            (r#"{"pass":"yes","findings_count":0}"#, r#""yes""#),
            (r#"{"pass":"false","findings_count":1}"#, r#""false""#),
            (r#"{"pass":1,"findings_count":0}"#, "1"),
            (r#"{"pass":null,"findings_count":0}"#, "null"),
        ] {
            assert_eq!(
                bad_output(&verdict_of_stdout(stdout)),
                &BadWorkerOutput::PassNotBoolean(value.to_owned()),
                "{stdout:?}"
            );
        }
        for stdout in ["{}", r#"{"findings_count":0}"#] {
            assert_eq!(
                bad_output(&verdict_of_stdout(stdout)),
                &BadWorkerOutput::PassMissing
            );
        }
    }

    #[test]
    fn a_long_value_is_cut_in_the_message() {
        let long = "x".repeat(500);
        let stdout = format!(r#"{{"pass":"{long}","findings_count":0}}"#);
        let message = bad_output(&verdict_of_stdout(&stdout)).to_string();
        assert!(message.len() < 100, "{message}");
        assert!(message.contains('…'), "{message}");
    }

    #[test]
    fn more_than_one_json_value_on_a_line_is_bad_output() {
        for stdout in [
            r#"{"pass":true,"findings_count":0}{"pass":false,"findings_count":1}"#,
            r#"{"pass":true,"findings_count":0} trailing"#,
            r#"[{"pass":true,"findings_count":0}]"#,
        ] {
            assert_eq!(
                bad_output(&verdict_of_stdout(stdout)),
                &BadWorkerOutput::NotOneObject,
                "{stdout:?}"
            );
        }
        assert_eq!(
            verdict_of_stdout("{\"pass\":true,\"findings_count\":0}\n\n  "),
            Verdict::Passed
        );
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
            parse_worker_output(br#"{"pass":"no","findings_count":0}"#),
            Err(BadWorkerOutput::PassNotBoolean(r#""no""#.to_owned()))
        );
        assert_eq!(
            BadWorkerOutput::DuplicateKey("pass".to_owned()).to_string(),
            "the key \"pass\" appears more than once in the worker's JSON object"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let output =
            parse_worker_output(b"\xff\xfe{\"pass\":false,\"findings_count\":1,\"note\":\"\xff\"}")
                .unwrap();
        let Verdict::Failed { worker_json, .. } = output else {
            panic!("expected a failure, got {output:?}");
        };
        assert_eq!(worker_json["note"], json!("\u{fffd}"));
    }

    #[test]
    fn a_truncated_stdout_is_bad_output_even_when_it_parses() {
        let run = WorkerRun {
            stdout_truncated: true,
            ..exited(0, r#"{"pass":true,"findings_count":0}"#)
        };
        assert_eq!(
            bad_output(&verdict_of(&run, Duration::from_secs(1))),
            &BadWorkerOutput::OverTheCap
        );
    }

    #[test]
    fn an_interrupted_run_is_interrupted_whatever_else_it_says() {
        let run = WorkerRun {
            interrupted: true,
            timed_out: true,
            signal: Some(libc::SIGTERM),
            ..exited(0, r#"{"pass":true,"findings_count":0}"#)
        };
        let verdict = verdict_of(&run, Duration::from_secs(1));
        assert_eq!(verdict, script_error(ScriptError::Interrupted));
        assert_eq!(verdict.note().as_deref(), Some("script-error: interrupted"));
        assert!(!verdict.is_unnoted_pass());
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
            verdict_of(&exited(2, r#"{"pass":true,"findings_count":0}"#), timeout),
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
                script_error(ScriptError::BadOutput(BadWorkerOutput::PassMissing)),
                "script-error: bad-output",
            ),
            (
                script_error(ScriptError::Interrupted),
                "script-error: interrupted",
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
}
