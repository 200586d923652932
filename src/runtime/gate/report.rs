//! What `aidlc gate check` found: every fire, every skip and every dead binding, as plain
//! values the renderers (human, JSON, GitHub, SARIF) turn into text.
//!
//! Invariants (D4):
//! - only an unnoted pass on bytes that did not move counts as passed; every other non-failure
//!   is "not evaluated" with its reason, and a report always says how many sensors ran on how
//!   many files;
//! - a blocking binding that never fired on a stage it applies to ([`UnfiredBinding`],
//!   scenario S12) is a blocking non-evaluation, never a silent pass;
//! - a report in which nothing was evaluated says why ([`NothingChecked`]), never looks green.

use std::collections::BTreeMap;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::english::counted;
use crate::protocol::selection::FireOn;
use crate::protocol::verdict::Verdict;

pub use crate::protocol::selection::Severity;

pub use crate::protocol::finding::Finding;

/// Which bindings `aidlc gate check` runs (its `--fire-on`): the gate-fired ones, the
/// write-fired ones, or all. Not a [`FireOn`]: `All` is a selection, never a binding's value.
//
// No doc comments on the variants: clap would show them as the values' help and change
// `--help`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum FireOnFilter {
    #[default]
    Gate,
    Write,
    All,
}

impl FireOnFilter {
    /// The value as typed on the command line (`gate`, `write`, `all`), which `FromStr` reads.
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn admits(self, fire_on: FireOn) -> bool {
        match self {
            FireOnFilter::Gate => fire_on == FireOn::Gate,
            FireOnFilter::Write => fire_on == FireOn::Write,
            FireOnFilter::All => true,
        }
    }
}

/// What one fire's verdict means for the report: everything the formats show, and nothing they
/// cannot read back from the JSON report (so that `aidlc gate merge` rebuilds it exactly).
/// [`Outcome`] is how it ended in the report's words; `Outcome::VARIANTS` lists them in the
/// order the JSON Schema names them.
#[derive(Debug, Clone, PartialEq, Eq, strum::EnumDiscriminants)]
#[strum_discriminants(
    name(Outcome),
    derive(PartialOrd, Ord, strum::IntoStaticStr, strum::VariantArray),
    strum(serialize_all = "kebab-case")
)]
pub enum FireResult {
    /// An unnoted pass on bytes that held still (D4).
    Passed,
    Failed {
        findings_count: u64,
    },
    NotEvaluated {
        /// `artifact-changed`, `tool-unavailable`, `script-error: …` (with what the audit note
        /// leaves out), or `sensor execution exceeded its budget`.
        reason: String,
        /// The cap and the time observed, for a budget override.
        budget: Option<Budget>,
    },
}

/// A budget override's figures: a fire stopped at its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Budget {
    /// The cap, in seconds.
    pub cap_seconds: u64,
    /// The time observed, in whole seconds rounded up.
    pub observed_seconds: u64,
}

/// The reason of a budget override.
pub const BUDGET_EXCEEDED: &str = "sensor execution exceeded its budget";

impl FireResult {
    /// The result of `verdict`; any verdict on bytes that moved under a blocking sensor is
    /// `artifact-changed`, not evaluated.
    pub fn of(verdict: &Verdict, artifact_changed: bool) -> Self {
        if artifact_changed {
            return FireResult::NotEvaluated {
                reason: ARTIFACT_CHANGED.to_owned(),
                budget: None,
            };
        }
        match verdict {
            Verdict::Passed => FireResult::Passed,
            Verdict::Failed { findings_count, .. } => FireResult::Failed {
                findings_count: *findings_count,
            },
            Verdict::BudgetOverride {
                cap_seconds,
                observed_seconds,
            } => FireResult::NotEvaluated {
                reason: BUDGET_EXCEEDED.to_owned(),
                budget: Some(Budget {
                    cap_seconds: *cap_seconds,
                    observed_seconds: *observed_seconds,
                }),
            },
            Verdict::ToolUnavailable | Verdict::ScriptError(_) => FireResult::NotEvaluated {
                reason: verdict.explained_note().unwrap_or_default(),
                budget: None,
            },
        }
    }
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One sensor fired on one deliverable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateFire {
    pub stage: String,
    pub sensor_id: String,
    pub severity: Severity,
    /// Project-relative, `/` separators.
    pub deliverable: Utf8PathBuf,
    pub result: FireResult,
    /// The audit fire id; `None` with `--no-record`.
    pub fire_id: Option<String>,
    /// Project-relative detail file (of a failure, or of a non-evaluation whose worker wrote on
    /// stderr); `None` with `--no-record`, on a pass, or when none was written.
    pub detail_path: Option<Utf8PathBuf>,
    pub findings: Vec<Finding>,
    pub duration: Duration,
    /// The last lines the worker wrote on stderr (see [`last_lines`]); empty when none.
    pub stderr_tail: String,
    /// This fire's place in the whole (unsharded) plan, from 0: the order of the report, and
    /// how `aidlc gate merge` puts shards back together.
    pub plan_index: usize,
    /// The plugin of the stage that fired it (the graph node's `plugin`); `None` for a core
    /// stage, whose report lines stay as they were (D50).
    pub plugin: Option<String>,
}

/// The reason of a blocking fire whose deliverable changed under it.
pub const ARTIFACT_CHANGED: &str = "artifact-changed";

/// How many of the last lines of a worker's stderr a report keeps.
pub const STDERR_LINES_KEPT: usize = 20;

impl GateFire {
    pub fn outcome(&self) -> Outcome {
        Outcome::from(&self.result)
    }

    /// The number of findings the sensor counted (0 unless failed on bytes that held still).
    pub fn findings_count(&self) -> u64 {
        match &self.result {
            FireResult::Failed { findings_count } => *findings_count,
            _ => 0,
        }
    }

    /// Why nothing was checked, when nothing was (`artifact-changed`, `tool-unavailable`,
    /// `script-error: …`, `sensor execution exceeded its budget`).
    pub fn not_evaluated_reason(&self) -> Option<String> {
        match &self.result {
            FireResult::NotEvaluated { reason, .. } => Some(reason.clone()),
            _ => None,
        }
    }

    /// The budget figures of a budget override.
    pub fn budget(&self) -> Option<Budget> {
        match &self.result {
            FireResult::NotEvaluated { budget, .. } => *budget,
            _ => None,
        }
    }
}

/// The last `count` non-empty lines of `text`, trimmed at the end: what a report shows of a
/// worker's stderr.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty())
        .collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// The version of the JSON document `aidlc gate check --format json` writes and `aidlc gate
/// merge` reads; bump it when a key changes meaning or goes away (adding a key is compatible).
pub const JSON_SCHEMA_VERSION: u64 = 2;

/// Why a sensor did not fire somewhere it might have. `VARIANTS` lists the reasons in the order
/// the summaries list them (and the JSON Schema names them); the kebab-case name of a variant
/// is its machine token ([`skip_reason_key`]), which the JSON report's skip serialises.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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

/// The kebab-case token of a skip reason, for machines (the prose is `SkipReason::as_str`).
pub fn skip_reason_key(reason: &SkipReason) -> &'static str {
    reason.into()
}

/// Serialised as the JSON report's skip: the reason by its machine token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GateSkip {
    pub stage: String,
    pub sensor_id: String,
    /// `None` when the skip concerns the whole stage (no deliverable).
    pub deliverable: Option<Utf8PathBuf>,
    pub reason: SkipReason,
}

/// A gate-fired binding that can never fire at its stage (failure mode N2): its glob matches
/// no place where the stage's outputs can be written, or the stage declares none. The same
/// bindings the compile's `dead-sensor-binding` names; a dead sensor that would otherwise look
/// healthy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DeadBinding {
    /// The stage's slug.
    pub stage: String,
    /// The sensor's id.
    pub sensor_id: String,
    /// The binding's glob; empty when it has none (then the stage declares no outputs).
    pub pattern: String,
}

/// A blocking binding that fired on no deliverable of a stage it applies to (scenario
/// S12): it has not passed. `aidlc engine gate start` refuses the gate with [`Self::reason`];
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
    /// The plugin of the stage (the graph node's `plugin`); `None` for a core stage, whose
    /// report lines stay as they were (docs/decisions.md D50).
    pub plugin: Option<String>,
}

/// Why a blocking binding did not fire; serialised as `{"kind": …}` and the cause's own key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
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
                "its glob matches none of the stage's {}",
                counted(*deliverables, "deliverable")
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
                "none of the {} could be evaluated (the first: {first_reason})",
                counted(*fires, "fire")
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
                "no write-fired binding: the install's sensors are all gate-fired ({})",
                counted(*not_selected, "binding")
            ),
            NothingChecked::NoBindingSelected { not_selected, .. } => format!(
                "no gate-fired binding: the install's sensors are all write-fired ({})",
                counted(*not_selected, "binding")
            ),
            NothingChecked::OnlyNotRegularFiles => {
                "the deliverables the sensors match are not regular files".to_owned()
            }
            NothingChecked::NoDeliverables => {
                "no declared output of the checked stages is on disk".to_owned()
            }
            NothingChecked::NoGlobMatch => {
                "no selected sensor's glob matches any deliverable".to_owned()
            }
        }
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        let fix = match self {
            NothingChecked::NoneEvaluated { .. } => {
                "fix what stopped the fires (listed above) and run the check again"
            }
            NothingChecked::SensorsOff(SensorsOff::Environment) => {
                "unset AIDLC_DISABLE_SENSORS to check"
            }
            NothingChecked::SensorsOff(SensorsOff::State { .. }) => {
                "turn the Sensors switch on in aidlc-state.md"
            }
            NothingChecked::NoStages => "compile a project that has stage files (`aidlc compile`)",
            NothingChecked::NoBindings => {
                "import sensors in the stages' `sensors:` lists and run `aidlc compile`"
            }
            NothingChecked::NoBindingSelected {
                fire_on: FireOnFilter::Write,
                ..
            } => "`--fire-on gate` or `--fire-on all` checks them",
            NothingChecked::NoBindingSelected { .. } => "`--fire-on all` checks them",
            NothingChecked::OnlyNotRegularFiles => {
                "replace the folders, FIFOs or sockets named like outputs with the documents"
            }
            NothingChecked::NoDeliverables => {
                "write the deliverables first, or check the intent that has them (--intent NAME, --all-intents)"
            }
            NothingChecked::NoGlobMatch => {
                "compare the sensors' `matches` with the stages' outputs (see the dead bindings)"
            }
        };
        format!("{fix}, or pass --allow-empty if this pipeline means to check nothing")
    }
}

/// Everything one `aidlc gate check` found. Fires are in a stable order (stage order of the
/// graph, then sensor order, then deliverable order) whatever the number of threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// The stages asked for (`--stage`); every stage of the graph when empty.
    pub stages: Vec<String>,
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
    /// The whole (unsharded) plan this report is part of.
    pub plan: PlanIdentity,
    /// What the manifest of each sensor id the report names says, for the formats that
    /// describe their rules.
    pub sensors: BTreeMap<String, SensorInfo>,
    /// The project folder relative to the repository root (empty when they are the same): the
    /// prefix that makes the report's project-relative paths repository-relative.
    pub project_path: Utf8PathBuf,
    /// The active stage's deliverables the write hook never saw on this machine: a notice in
    /// every format, never a failure.
    pub unseen_writes: Option<UnseenWritesNotice>,
}

/// Deliverables of the active stage changed after the write hook last ran
/// (`gate::unseen_writes`), as a gate report carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "UnseenWrites", deny_unknown_fields)]
pub struct UnseenWritesNotice {
    /// The active stage.
    pub stage: String,
    /// Project-relative, in the stage's deliverable order.
    pub files: Vec<String>,
    /// The sentence `gate start` narrates: which files, since when, and the two fixes.
    pub message: String,
}

/// A sensor as its live manifest describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SensorInfo {
    /// The manifest's `description`.
    pub description: String,
    /// The manifest's path as the graph recorded it: project-relative, e.g.
    /// `.claude/sensors/aidlc-linter.md`.
    pub manifest_path: String,
}

/// Which plan a report belongs to: every shard of one check carries the same identity, and
/// the number of fires the unsharded run has.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct PlanIdentity {
    /// BLAKE3 (hex) of everything that decides the plan: the intents, the selection, every
    /// planned (stage, sensor, deliverable) unit in order, and the skips, dead and never-fired
    /// bindings every shard shares.
    pub id: String,
    /// The number of fires of the whole plan (all shards together).
    pub size: usize,
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
    /// A project-relative path as a repository-relative one (an absolute path stays as it is).
    pub fn repository_path(&self, path: &Utf8Path) -> Utf8PathBuf {
        if path.is_absolute() || self.project_path.as_str().is_empty() {
            path.to_owned()
        } else {
            self.project_path.join(path)
        }
    }

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

    /// `Some((k, n))` when this is shard k of n of a plan that has fires, and none of them is
    /// this shard's: nothing to check here is no failure (the other shards run the fires, and
    /// `aidlc gate merge` judges the whole plan).
    pub fn empty_share(&self) -> Option<(u64, u64)> {
        let shard = self.shard?;
        let others_have_fires = self
            .skips
            .iter()
            .any(|skip| skip.reason == SkipReason::OtherShard);
        (self.fires.is_empty() && others_have_fires && self.sensors_off.is_none()).then_some(shard)
    }

    /// Why nothing was evaluated, or `None` when at least one fire passed or failed, or when
    /// this shard's share of a plan with fires is empty ([`Self::empty_share`]).
    pub fn nothing_checked(&self) -> Option<NothingChecked> {
        let counts = self.counts();
        if counts.passed + counts.failed > 0 || self.empty_share().is_some() {
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
        } else if has_skip(SkipReason::NotARegularFile) {
            NothingChecked::OnlyNotRegularFiles
        } else if self.deliverables_found == 0 {
            NothingChecked::NoDeliverables
        } else {
            NothingChecked::NoGlobMatch
        })
    }
}

/// The formats of `aidlc gate check --format` (and `--report FORMAT=PATH`), one file each in
/// the top-level `report` module, whose `render` is handed to `gate::command`: the formats read
/// this module, and this module names none of them.
//
// The variants carry no doc comments on purpose: clap would show them as the values' help and
// change `--help`; each format's file documents it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, strum::IntoStaticStr,
)]
#[strum(serialize_all = "lowercase")]
pub enum ReportFormat {
    Human,
    Json,
    Github,
    Sarif,
    Junit,
    Gitlab,
}

impl ReportFormat {
    /// Every format, in the order of `--help`: what tests iterate, so that a new variant is
    /// tested by every test that renders "each format" without a list to update.
    pub fn all() -> &'static [ReportFormat] {
        <ReportFormat as clap::ValueEnum>::value_variants()
    }

    /// The value as typed on the command line.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What a renderer may need besides the report, decided at the edge.
#[derive(Debug, Clone, Default)]
pub struct RenderSettings {
    /// ANSI colours in the human format (the CLI decides from `--color` and the terminal).
    pub color: bool,
    /// The texts of the files the findings point into, for the human format's snippets; a file
    /// missing here is pointed at without a snippet.
    pub sources: BTreeMap<Utf8PathBuf, std::sync::Arc<str>>,
    /// The repository root as a `file://` URI, for SARIF's `%SRCROOT%`; left out when unknown.
    pub repository_root_uri: Option<String>,
    /// What a repository-relative path is appended to for a link (SARIF's `helpUri`).
    pub help_base_uri: Option<String>,
    /// Where the whole report can be read (the step summary, a `--report` file), for the
    /// notice the github format gives when it holds annotations back.
    pub full_report: Option<String>,
    /// `--strict`: advisory findings fail the run too (`JUnit` counts them as failures).
    pub strict: bool,
    /// The project folder as seen from the working folder (empty when they are the same): the
    /// human format puts it before the paths it shows, so that they open from where the user is.
    pub path_prefix: Utf8PathBuf,
}

/// A report in one format: the text for stdout, and the Markdown a CI step summary gets
/// (`$GITHUB_STEP_SUMMARY`; only the github format has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedReport {
    pub stdout: String,
    pub step_summary: Option<String>,
}
