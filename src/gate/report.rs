//! What `aidlc gate check` found: every fire, every skip and every dead binding, as plain
//! values the renderers (human, JSON, GitHub, SARIF) turn into text.
//!
//! Invariants (D4):
//! - only an unnoted pass on bytes that did not move counts as passed; every other non-failure
//!   is "not evaluated" with its reason, and a report always says how many sensors ran on how
//!   many files;
//! - a blocking binding that never fired on a stage it applies to ([`UnfiredBinding`],
//!   failure-modes §5.12) is a blocking non-evaluation, never a silent pass;
//! - a report in which nothing was evaluated says why ([`NothingChecked`]), never looks green.

use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::Value;

use crate::dispatch::verdict::Verdict;
use crate::english::plural;
use crate::syntax::manifest::{FireOn, Severity};

/// What a sensor found; the renderers read it from here.
pub use crate::sensors::finding::Finding;

/// Which bindings `aidlc gate check` runs (its `--fire-on`): the gate-fired ones, the
/// write-fired ones, or all. Not a [`FireOn`]: `All` is a selection, never a binding's value.
//
// No doc comments on the variants: clap would show them as the values' help and change
// `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FireOnFilter {
    #[default]
    Gate,
    Write,
    All,
}

impl FireOnFilter {
    pub fn admits(self, fire_on: FireOn) -> bool {
        match self {
            FireOnFilter::Gate => fire_on == FireOn::Gate,
            FireOnFilter::Write => fire_on == FireOn::Write,
            FireOnFilter::All => true,
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
    /// The deliverable's bytes moved (or could not be fingerprinted) while a blocking sensor
    /// ran: whatever it said was about other bytes, so the fire evaluated nothing.
    pub artifact_changed: bool,
}

/// The reason of a blocking fire whose deliverable changed under it.
pub const ARTIFACT_CHANGED: &str = "artifact-changed";

impl GateFire {
    pub fn outcome(&self) -> Outcome {
        if self.artifact_changed {
            Outcome::NotEvaluated
        } else {
            Outcome::of(&self.verdict)
        }
    }

    /// The number of findings the sensor counted (0 unless failed on bytes that held still).
    pub fn findings_count(&self) -> u64 {
        match &self.verdict {
            Verdict::Failed { findings_count, .. } if !self.artifact_changed => *findings_count,
            _ => 0,
        }
    }

    /// Why nothing was checked, when nothing was (`artifact-changed`, `tool-unavailable`,
    /// `script-error: …`, `sensor execution exceeded its budget`).
    pub fn not_evaluated_reason(&self) -> Option<String> {
        if self.artifact_changed {
            return Some(ARTIFACT_CHANGED.to_owned());
        }
        match &self.verdict {
            Verdict::BudgetOverride { .. } => {
                Some("sensor execution exceeded its budget".to_owned())
            }
            other => other.explained_note(),
        }
    }

    /// The worker's JSON, when it failed (for renderers that show details).
    pub fn worker_json(&self) -> Option<&Value> {
        match &self.verdict {
            Verdict::Failed { worker_json, .. } if !self.artifact_changed => Some(worker_json),
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
    /// The deliverable is a folder, FIFO, socket or device named like a declared output; it is
    /// never opened.
    NotARegularFile,
}

impl SkipReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::NoGlobMatch => "no glob match",
            SkipReason::NoDeliverable => "no deliverable",
            SkipReason::SensorsOff => "sensors off",
            SkipReason::OtherFireOn => "not selected by --fire-on",
            SkipReason::OtherShard => "another shard",
            SkipReason::NotARegularFile => "not a regular file",
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

/// A blocking binding that fired on no deliverable of a stage it applies to (failure-modes
/// §5.12): it has not passed. `aidlc engine gate start` refuses the gate with [`Self::reason`];
/// `aidlc gate check` counts it as a blocking non-evaluation with the same reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfiredBinding {
    pub stage: String,
    pub sensor_id: String,
    /// The intent record's folder name.
    pub intent: String,
    /// The manifest's path as the graph recorded it (project-relative): where `matches` lives.
    pub manifest_path: String,
    pub pattern: Option<String>,
    /// The stage's declared output file names (`produces ∪ optional_produces`).
    pub declared_outputs: Vec<String>,
    pub cause: UnfiredCause,
}

/// Why a blocking binding did not fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnfiredCause {
    /// None of the stage's declared outputs is on disk (not written yet, or deleted).
    NoDeliverable,
    /// The stage has deliverables, and the glob matches none of them.
    NoGlobMatch { deliverables: usize },
    /// A stage-level sensor whose glob matches only `*-questions` and `*-timestamp` markers,
    /// which it never fires on.
    OnlyMarkers,
    /// The only deliverables the glob matches are not regular files (`<path> (<kind>)` each).
    NotRegularFiles { described: Vec<String> },
}

/// The machine token of an unfired binding's non-evaluation.
pub const NEVER_FIRED: &str = "never-fired";

impl UnfiredBinding {
    /// The one sentence every surface uses: what did not happen, why, the glob and the
    /// declared outputs.
    pub fn reason(&self) -> String {
        let cause = match &self.cause {
            UnfiredCause::NoDeliverable => {
                "none of the stage's declared outputs is on disk".to_owned()
            }
            UnfiredCause::NoGlobMatch { deliverables } => format!(
                "its glob matches none of the stage's {deliverables} deliverable{}",
                plural(*deliverables)
            ),
            UnfiredCause::OnlyMarkers => {
                "its glob matches only `*-questions` and `*-timestamp` markers, which a stage-level sensor skips".to_owned()
            }
            UnfiredCause::NotRegularFiles { described } => format!(
                "the deliverables its glob matches are not regular files ({})",
                described.join(", ")
            ),
        };
        let glob = match &self.pattern {
            Some(pattern) => format!("glob \"{pattern}\""),
            None => "no glob (every deliverable)".to_owned(),
        };
        let declared = if self.declared_outputs.is_empty() {
            "none".to_owned()
        } else {
            self.declared_outputs.join(", ")
        };
        format!(
            "blocking sensor never fired: {cause}; {glob}; declared outputs: {declared}; a blocking sensor that never fired has not passed"
        )
    }
}

/// Why a sensors switch turned the check off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SensorsOff {
    /// `AIDLC_DISABLE_SENSORS=1`.
    Environment,
    /// `- **Sensors**: off` in these intents' state files.
    State { intents: Vec<String> },
}

/// Why a report evaluated nothing (D4: a run that checked nothing is never green). The first
/// cause that applies, in the order of the variants, is the one reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NothingChecked {
    /// Fires were planned, and none was evaluated (refused, unavailable, timed out, …).
    NoneEvaluated {
        fires: usize,
        first_reason: String,
    },
    SensorsOff(SensorsOff),
    /// The graph (or the `--stage` selection) has no stage.
    NoStages,
    /// No checked stage imports a sensor at all.
    NoBindings,
    /// Stages have bindings, but `--fire-on` selects none of them.
    NoBindingSelected {
        fire_on: FireOnFilter,
        not_selected: usize,
    },
    /// The matched deliverables are all folders, FIFOs, sockets or devices.
    OnlyNotRegularFiles,
    /// No declared output of the checked stages is on disk.
    NoDeliverables,
    /// This shard got none of the fires.
    OtherShards {
        index: u64,
        count: u64,
    },
    /// Deliverables exist, and no selected glob matches any.
    NoGlobMatch,
}

impl NothingChecked {
    /// Why nothing was checked.
    pub fn reason(&self) -> String {
        match self {
            NothingChecked::NoneEvaluated {
                fires,
                first_reason,
            } => format!(
                "none of the {fires} fire{} could be evaluated (the first: {first_reason})",
                plural(*fires)
            ),
            NothingChecked::SensorsOff(SensorsOff::Environment) => {
                "sensors are off (AIDLC_DISABLE_SENSORS=1)".to_owned()
            }
            NothingChecked::SensorsOff(SensorsOff::State { intents }) => format!(
                "sensors are off in the state of {} (`- **Sensors**: off`)",
                intents.join(", ")
            ),
            NothingChecked::NoStages => "the stage graph has no stage to check".to_owned(),
            NothingChecked::NoBindings => "no checked stage imports a sensor".to_owned(),
            NothingChecked::NoBindingSelected {
                fire_on: FireOnFilter::Write,
                not_selected,
            } => format!(
                "no write-fired binding: the install's sensors are all gate-fired ({not_selected} binding{})",
                plural(*not_selected)
            ),
            NothingChecked::NoBindingSelected { not_selected, .. } => format!(
                "no gate-fired binding: the install's sensors are all write-fired ({not_selected} binding{})",
                plural(*not_selected)
            ),
            NothingChecked::OnlyNotRegularFiles => {
                "the deliverables the sensors match are not regular files".to_owned()
            }
            NothingChecked::NoDeliverables => {
                "no declared output of the checked stages is on disk".to_owned()
            }
            NothingChecked::OtherShards { index, count } => {
                format!("every fire belongs to another shard than {index}/{count}")
            }
            NothingChecked::NoGlobMatch => {
                "no selected sensor's glob matches any deliverable".to_owned()
            }
        }
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        let allow = "or pass --allow-empty if this pipeline means to check nothing";
        match self {
            NothingChecked::NoneEvaluated { .. } => {
                format!(
                    "fix what stopped the fires (listed above) and run the check again, {allow}"
                )
            }
            NothingChecked::SensorsOff(SensorsOff::Environment) => {
                format!("unset AIDLC_DISABLE_SENSORS to check, {allow}")
            }
            NothingChecked::SensorsOff(SensorsOff::State { .. }) => {
                format!("turn the Sensors switch on in aidlc-state.md, {allow}")
            }
            NothingChecked::NoStages => {
                format!("compile a project that has stage files (`aidlc compile`), {allow}")
            }
            NothingChecked::NoBindings => format!(
                "import sensors in the stages' `sensors:` lists and run `aidlc compile`, {allow}"
            ),
            NothingChecked::NoBindingSelected {
                fire_on: FireOnFilter::Write,
                ..
            } => format!("`--fire-on gate` or `--fire-on all` checks them, {allow}"),
            NothingChecked::NoBindingSelected { .. } => {
                format!("`--fire-on all` checks them, {allow}")
            }
            NothingChecked::OnlyNotRegularFiles => format!(
                "replace the folders, FIFOs or sockets named like outputs with the documents, {allow}"
            ),
            NothingChecked::NoDeliverables => format!(
                "write the deliverables first, or check the intent that has them (--intent NAME, --all-intents), {allow}"
            ),
            NothingChecked::OtherShards { .. } => {
                "in a shard matrix, where the other shards check them, pass --allow-empty"
                    .to_owned()
            }
            NothingChecked::NoGlobMatch => format!(
                "compare the sensors' `matches` with the stages' outputs (see the dead bindings), {allow}"
            ),
        }
    }
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
    /// Blocking bindings that fired on nothing in a stage they apply to.
    pub unfired_bindings: Vec<UnfiredBinding>,
    /// Which bindings were asked for, and how many were and were not selected.
    pub fire_on: FireOnFilter,
    pub bindings_selected: usize,
    pub bindings_not_selected: usize,
    /// Set when a sensors switch turned the check off for some intent.
    pub sensors_off: Option<SensorsOff>,
    pub duration: Duration,
    /// `Some((k, n))` when this is shard k of n.
    pub shard: Option<(u64, u64)>,
    pub recorded: bool,
}

/// The counts every format prints. `not_evaluated` and `blocking_not_evaluated` include the
/// blocking bindings that never fired (`never_fired`), which are not fires: so
/// `fires = passed + failed + not_evaluated - never_fired`.
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
    pub never_fired: usize,
}

impl GateReport {
    pub fn counts(&self) -> GateCounts {
        let mut files: Vec<&Utf8PathBuf> =
            self.fires.iter().map(|fire| &fire.deliverable).collect();
        files.sort();
        files.dedup();
        let never_fired = self.unfired_bindings.len();
        let mut counts = GateCounts {
            fires: self.fires.len(),
            files: files.len(),
            skipped: self.skips.len(),
            not_evaluated: never_fired,
            blocking_not_evaluated: never_fired,
            never_fired,
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

    /// Why nothing was evaluated, or `None` when at least one fire passed or failed.
    pub fn nothing_checked(&self) -> Option<NothingChecked> {
        let counts = self.counts();
        if counts.passed + counts.failed > 0 {
            return None;
        }
        let has_skip = |reason: SkipReason| self.skips.iter().any(|skip| skip.reason == reason);
        Some(if let Some(first) = self.fires.first() {
            NothingChecked::NoneEvaluated {
                fires: self.fires.len(),
                first_reason: first.not_evaluated_reason().unwrap_or_default(),
            }
        } else if let Some(off) = &self.sensors_off {
            NothingChecked::SensorsOff(off.clone())
        } else if self.stages_checked == 0 {
            NothingChecked::NoStages
        } else if self.bindings_selected == 0 && self.bindings_not_selected > 0 {
            NothingChecked::NoBindingSelected {
                fire_on: self.fire_on,
                not_selected: self.bindings_not_selected,
            }
        } else if self.bindings_selected == 0 {
            NothingChecked::NoBindings
        } else if let Some((index, count)) = self.shard.filter(|_| has_skip(SkipReason::OtherShard))
        {
            NothingChecked::OtherShards { index, count }
        } else if has_skip(SkipReason::NotARegularFile) {
            NothingChecked::OnlyNotRegularFiles
        } else if self.deliverables_found == 0 {
            NothingChecked::NoDeliverables
        } else {
            NothingChecked::NoGlobMatch
        })
    }
}
