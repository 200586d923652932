//! What `aidlc gate check` found: every fire, every skip and every dead binding, as plain
//! values the renderers (human, JSON, GitHub, SARIF) turn into text.
//!
//! Invariant (D4): only an unnoted pass counts as passed; every other non-failure is "not
//! evaluated" with its reason, and a report always says how many sensors ran on how many files.

use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::Value;

use crate::dispatch::verdict::Verdict;

/// The severity a binding has in the compiled graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Advisory,
    Blocking,
}

impl Severity {
    pub fn from_graph(value: &str) -> Self {
        if value == "blocking" {
            Severity::Blocking
        } else {
            Severity::Advisory
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Advisory => "advisory",
            Severity::Blocking => "blocking",
        }
    }
}

/// How one fire ended, in the report's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Passed,
    Failed,
    /// Nothing was checked: tool unavailable, script error, or the budget ran out.
    NotEvaluated,
}

impl Outcome {
    pub fn of(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Passed => Outcome::Passed,
            Verdict::Failed { .. } => Outcome::Failed,
            Verdict::ToolUnavailable | Verdict::ScriptError(_) | Verdict::BudgetOverride { .. } => {
                Outcome::NotEvaluated
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NotEvaluated => "not-evaluated",
        }
    }
}

/// One finding a sensor reported, anchored where the sensor knows (a lint error has a line; a
/// missing heading or an unreferenced artifact only has the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Project-relative, `/` separators.
    pub file: Utf8PathBuf,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// e.g. the eslint rule id, or `missing-heading`, `unreferenced-artifact`.
    pub rule: Option<String>,
    pub message: String,
}

/// One sensor fired on one deliverable.
#[derive(Debug, Clone)]
pub struct GateFire {
    pub stage: String,
    pub sensor_id: String,
    pub severity: Severity,
    /// Project-relative, `/` separators.
    pub deliverable: Utf8PathBuf,
    pub verdict: Verdict,
    /// The audit fire id; `None` with `--no-record`.
    pub fire_id: Option<String>,
    /// Project-relative detail file of a failure; `None` with `--no-record` or when passed.
    pub detail_path: Option<Utf8PathBuf>,
    pub findings: Vec<Finding>,
    pub duration: Duration,
}

impl GateFire {
    pub fn outcome(&self) -> Outcome {
        Outcome::of(&self.verdict)
    }

    /// The number of findings the sensor counted (0 unless failed).
    pub fn findings_count(&self) -> u64 {
        match &self.verdict {
            Verdict::Failed { findings_count, .. } => *findings_count,
            _ => 0,
        }
    }

    /// Why nothing was checked, when nothing was (`tool-unavailable`, `script-error: …`,
    /// `sensor execution exceeded its budget`).
    pub fn not_evaluated_reason(&self) -> Option<String> {
        match &self.verdict {
            Verdict::BudgetOverride { .. } => {
                Some("sensor execution exceeded its budget".to_owned())
            }
            other => other.note(),
        }
    }

    /// The worker's JSON, when it failed (for renderers that show details).
    pub fn worker_json(&self) -> Option<&Value> {
        match &self.verdict {
            Verdict::Failed { worker_json, .. } => Some(worker_json),
            _ => None,
        }
    }
}

/// Why a sensor did not fire somewhere it might have.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkipReason {
    /// The binding's `matches` does not match this deliverable.
    NoGlobMatch,
    /// The stage has no deliverable on disk yet.
    NoDeliverable,
    /// Sensors are switched off for the workflow.
    SensorsOff,
    /// Not selected by `--fire-on`.
    OtherFireOn,
    /// Another shard's share of the work.
    OtherShard,
}

impl SkipReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::NoGlobMatch => "no glob match",
            SkipReason::NoDeliverable => "no deliverable",
            SkipReason::SensorsOff => "sensors off",
            SkipReason::OtherFireOn => "not selected by --fire-on",
            SkipReason::OtherShard => "another shard",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateSkip {
    pub stage: String,
    pub sensor_id: String,
    /// `None` when the skip concerns the whole stage (no deliverable).
    pub deliverable: Option<Utf8PathBuf>,
    pub reason: SkipReason,
}

/// A binding whose glob can never match any output the stage declares (failure-modes N2): a
/// dead sensor that would otherwise look healthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadBinding {
    pub stage: String,
    pub sensor_id: String,
    pub pattern: String,
}

/// Everything one `aidlc gate check` found. Fires are in a stable order (stage order of the
/// graph, then sensor order, then deliverable order) whatever the number of threads.
#[derive(Debug, Clone, Default)]
pub struct GateReport {
    /// The intent records checked (folder names).
    pub intents: Vec<String>,
    pub stages_checked: usize,
    pub deliverables_found: usize,
    pub fires: Vec<GateFire>,
    pub skips: Vec<GateSkip>,
    pub dead_bindings: Vec<DeadBinding>,
    pub duration: Duration,
    /// `Some((k, n))` when this is shard k of n.
    pub shard: Option<(u64, u64)>,
    pub recorded: bool,
}

/// The counts every format prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GateCounts {
    pub fires: usize,
    pub files: usize,
    pub passed: usize,
    pub failed: usize,
    pub not_evaluated: usize,
    pub skipped: usize,
    pub blocking_failed: usize,
    pub blocking_not_evaluated: usize,
}

impl GateReport {
    pub fn counts(&self) -> GateCounts {
        let mut files: Vec<&Utf8PathBuf> =
            self.fires.iter().map(|fire| &fire.deliverable).collect();
        files.sort();
        files.dedup();
        let mut counts = GateCounts {
            fires: self.fires.len(),
            files: files.len(),
            skipped: self.skips.len(),
            ..GateCounts::default()
        };
        for fire in &self.fires {
            let blocking = fire.severity == Severity::Blocking;
            match fire.outcome() {
                Outcome::Passed => counts.passed += 1,
                Outcome::Failed => {
                    counts.failed += 1;
                    counts.blocking_failed += usize::from(blocking);
                }
                Outcome::NotEvaluated => {
                    counts.not_evaluated += 1;
                    counts.blocking_not_evaluated += usize::from(blocking);
                }
            }
        }
        counts
    }
}
