//! The audit events this engine writes and reads (D25, D29, D34): their names and
//! field keys, each spelled here once; one type per event (the three rows that close a fire
//! share [`TerminalRow`]); the row each written event becomes
//! (`to_row`, then `format_block`), and the event each block read back is (`AuditEvent::from_block`).
//!
//! Invariants:
//! - every event name and field key the engine writes or matches is a constant of this file (the
//!   gate moves are [`GateState`]'s variant names); no other file spells one;
//! - reading is total: every block is exactly one `AuditEvent`, and a block of an event this
//!   engine does not know is `AuditEvent::Other` with the whole block, never dropped;
//! - reading is as lenient as the old readers were, because other writers (the reference's
//!   conductor, older versions, hand edits) write these rows too: a field that may be missing is
//!   an `Option`; a missing identity field of a sensor row reads as empty and a count that is not
//!   a whole number as 0 (no reader matches an empty stage slug or output path, so such a row is
//!   never taken for a result of a real stage's output).
//!
//! Must not: touch a file, or decide anything (the gate step reads these values and decides).

use camino::Utf8Path;

use super::block::{AuditBlock, AuditRow, relative_path_field};

// --- Names -------------------------------------------------------------------------------------

pub const SENSOR_FIRED: &str = "SENSOR_FIRED";
pub const SENSOR_PASSED: &str = "SENSOR_PASSED";
pub const SENSOR_FAILED: &str = "SENSOR_FAILED";
pub const SENSOR_BUDGET_OVERRIDE: &str = "SENSOR_BUDGET_OVERRIDE";
/// The gate row: the stage's approval gate is open (written by the gate's sensor step).
pub const STAGE_AWAITING_APPROVAL: &str = "STAGE_AWAITING_APPROVAL";
pub const DECISION_RECORDED: &str = "DECISION_RECORDED";
pub const QUESTION_ANSWERED: &str = "QUESTION_ANSWERED";
pub const HUMAN_TURN: &str = "HUMAN_TURN";
pub const SUMMARY_CONFIRMATION_RECORDED: &str = "SUMMARY_CONFIRMATION_RECORDED";
pub const AUTONOMY_MODE_SET: &str = "AUTONOMY_MODE_SET";
pub const RULE_LEARNED: &str = "RULE_LEARNED";
pub const SENSOR_PROPOSED: &str = "SENSOR_PROPOSED";

/// The `**Key**:` labels the engine writes or reads (the block format's own `Timestamp` and
/// `Event` are `block.rs`'s).
pub mod field {
    pub const FIRE_ID: &str = "Fire id";
    pub const SENSOR_ID: &str = "Sensor ID";
    pub const STAGE_SLUG: &str = "Stage slug";
    pub const OUTPUT_PATH: &str = "Output path";
    pub const UNIT: &str = "Unit";
    pub const DURATION_MS: &str = "Duration ms";
    pub const NOTE: &str = "Note";
    pub const DETAIL_PATH: &str = "Detail path";
    pub const FINDINGS_COUNT: &str = "Findings count";
    pub const CAP_LAYER: &str = "Cap layer";
    pub const CAP_VALUE: &str = "Cap value";
    pub const OBSERVED_VALUE: &str = "Observed value";
    pub const STAGE: &str = "Stage";
    pub const WORKFLOW: &str = "Workflow";
    pub const REVALIDATED: &str = "Revalidated";
    pub const DETAILS: &str = "Details";
    pub const ARTIFACTS: &str = "Artifacts";
    pub const BLOCKING_SENSOR_OVERRIDE: &str = "Blocking Sensor Override";
    pub const BLOCKING_SENSOR_IDS: &str = "Blocking Sensor IDs";
    pub const BLOCKING_SENSOR_DETAIL_PATHS: &str = "Blocking Sensor Detail Paths";
    pub const BLOCKING_SENSOR_REASONS: &str = "Blocking Sensor Reasons";
    pub const SENSOR_STATE: &str = "Sensor State";
    /// The engine's own gate-row field: which switch had the Sensors ceremony off
    /// (`environment` or `state`). The reference's readers ignore it.
    pub const SENSORS_OFF: &str = "Sensors Off";
    pub const DECISION: &str = "Decision";
    pub const OPTIONS: &str = "Options";
    pub const RATIONALE: &str = "Rationale";
    pub const MODE: &str = "Mode";
    pub const CANDIDATE_ID: &str = "Candidate-ID";
    pub const CONTENT_HASH: &str = "Content-Hash";
    pub const DESTINATION: &str = "Destination";
    pub const HEADING: &str = "Heading";
    pub const SOURCE: &str = "Source";
    pub const MANIFEST_PATH: &str = "Manifest path";
    pub const MATCHES: &str = "Matches";
    pub const DESTINATIONS: &str = "Destinations";
}

/// The `Mode` of an `AUTONOMY_MODE_SET` that grants autonomy (and so spends a human turn).
const AUTONOMOUS_MODE: &str = "autonomous";

/// The only cap layer this engine writes: the manifest's `timeout_seconds`.
const REGISTRY_CAP_LAYER: &str = "registry";
/// The `Workflow` prefix of a single-stage run, whose rows are not the main workflow's (D34).
pub const SINGLE_STAGE_WORKFLOW_PREFIX: &str = "single-stage:";

// --- The events --------------------------------------------------------------------------------

/// One audit block as an event. `#[non_exhaustive]`: the conductor's vocabulary grows, and a
/// new event must be added here, not matched as a string elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditEvent {
    /// `SENSOR_FIRED`: Fire id, Sensor ID, Stage slug, Output path.
    SensorFired(FireIdentity),
    /// `SENSOR_PASSED`, `SENSOR_FAILED` or `SENSOR_BUDGET_OVERRIDE`: the row that closes a fire.
    SensorTerminal(TerminalRow),
    /// `STAGE_AWAITING_APPROVAL`, the gate row.
    StageAwaitingApproval(GateRow),
    /// Every other row that moves a stage's gate (`STAGE_STARTED` … `STAGE_SKIPPED`).
    StageMoved(StageMove),
    DecisionRecorded(DecisionRecorded),
    QuestionAnswered(QuestionAnswered),
    HumanTurn,
    /// `SUMMARY_CONFIRMATION_RECORDED`: a human-backed answer (it spends a human turn).
    SummaryConfirmationRecorded,
    /// `AUTONOMY_MODE_SET`, with whether it granted autonomy (which spends a human turn).
    AutonomyModeSet {
        autonomous: bool,
    },
    /// `RULE_LEARNED`: a learning persisted to a practice file (D45).
    RuleLearned(RuleLearned),
    /// `SENSOR_PROPOSED`: a sensor scaffolded and bound by the learning loop (D45).
    SensorProposed(SensorProposed),
    /// An event this engine neither writes nor reads, kept whole.
    Other(AuditBlock),
}

/// The four fields every sensor row starts with; `output_path_field` is already project-relative
/// (see [`relative_path_field`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireIdentity {
    pub fire_id: String,
    pub sensor_id: String,
    pub stage_slug: String,
    pub output_path_field: String,
}

/// A terminal sensor row: the fire's fields, the Unit the reference writes on a unit's own gate
/// (after Stage slug; never this engine), and what the row says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalRow {
    pub fire: FireIdentity,
    pub unit: Option<String>,
    pub outcome: SensorOutcome,
}

/// What a terminal row says, in the fields the gate reads (the written rows also carry Duration
/// ms, and Cap layer, Cap value and Observed value, which no reader needs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SensorOutcome {
    /// `SENSOR_PASSED`, with the Note of a non-evaluation (`tool-unavailable`,
    /// `script-error: …`). Only a pass without a note is a real pass (D4).
    Passed { note: Option<String> },
    /// `SENSOR_FAILED`: Detail path (project-relative) and Findings count.
    Failed {
        detail_path: Option<String>,
        findings_count: u64,
    },
    /// `SENSOR_BUDGET_OVERRIDE`: the fire outlived its timeout and evaluated nothing.
    BudgetOverride,
}

/// Which stage, unit and workflow a conductor row is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageScope {
    pub stage: Option<String>,
    pub unit: Option<String>,
    pub workflow: Option<String>,
}

/// The rows that move a stage's gate, each read from its event name (the variant's name in
/// screaming snake case: `STAGE_STARTED` … `STAGE_SKIPPED`); the newest one says where the gate
/// is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum GateState {
    StageStarted,
    StageAwaitingApproval,
    StageRevising,
    GateRejected,
    GateApproved,
    StageCompleted,
    StageSkipped,
}

/// A conductor row that moves a stage's gate, other than the gate row.
/// Invariant: `state` is never `StageAwaitingApproval` (that row is a [`GateRow`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageMove {
    pub state: GateState,
    pub scope: StageScope,
}

/// `STAGE_AWAITING_APPROVAL` (D29 step 5): Stage, Unit, then Revalidated (a gate already open),
/// Details (revise) or Artifacts (start), the override fields when an override applied,
/// Sensor State, and the engine's own Sensors Off when the ceremony was off. The engine sets at most one of `revalidated`, `details` and `artifacts`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateRow {
    pub scope: StageScope,
    pub revalidated: bool,
    pub details: Option<String>,
    pub artifacts: Option<String>,
    pub blocking_override: Option<BlockingOverride>,
    pub sensor_state: Option<String>,
    /// [`field::SENSORS_OFF`]: where the Sensors switch was off (`environment` or `state`).
    pub sensors_off: Option<String>,
}

/// The fields an applied override adds to the gate row (D34): the blocking sensor ids, the
/// detail paths (when any issue has one) and the reasons, each list already joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockingOverride {
    pub sensor_ids: String,
    pub detail_paths: Option<String>,
    pub reasons: String,
}

/// A row whose fields are all optional text: one list of (field, key) pairs, in the written
/// order, gives the struct, its reading (`read`) and its row (`to_row`, present fields only).
macro_rules! text_row {
    ($(#[$doc:meta])* $name:ident = $event:ident { $($member:ident: $key:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct $name {
            $(pub $member: Option<String>,)+
        }

        impl $name {
            fn read(block: &AuditBlock) -> Self {
                Self {
                    $($member: text(block, field::$key),)+
                }
            }

            pub fn to_row(&self) -> AuditRow {
                let fields = [$((field::$key, &self.$member)),+];
                AuditRow::trusted($event, present_fields(&fields))
            }
        }
    };
}

/// A conductor row of a stage: its [`StageScope`] and optional text fields, read and written
/// in the reference's `aidlc-log.ts` order: Stage, the row's own fields, then Unit and Workflow
/// (present fields only).
macro_rules! scoped_row {
    ($(#[$doc:meta])* $name:ident = $event:ident { $($member:ident: $key:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            pub scope: StageScope,
            $(pub $member: Option<String>,)+
        }

        impl $name {
            fn read(block: &AuditBlock) -> Self {
                Self {
                    scope: StageScope::read(block),
                    $($member: text(block, field::$key),)+
                }
            }

            pub fn to_row(&self) -> AuditRow {
                let fields = [
                    (field::STAGE, &self.scope.stage),
                    $((field::$key, &self.$member),)+
                    (field::UNIT, &self.scope.unit),
                    (field::WORKFLOW, &self.scope.workflow),
                ];
                AuditRow::trusted($event, present_fields(&fields))
            }
        }
    };
}

scoped_row! {
    /// `DECISION_RECORDED`, the conductor's record of a decision it offered; `options` are the
    /// offered options, comma-separated, as written.
    DecisionRecorded = DECISION_RECORDED {
        decision: DECISION,
        options: OPTIONS,
        rationale: RATIONALE,
    }
}

scoped_row! {
    /// `QUESTION_ANSWERED`, the human's answer.
    QuestionAnswered = QUESTION_ANSWERED {
        details: DETAILS,
    }
}

text_row! {
    /// `RULE_LEARNED` (D45): Stage, Candidate-ID, Content-Hash (the full SHA-256 of the text),
    /// Destination (absolute), Heading, Source.
    RuleLearned = RULE_LEARNED {
        stage: STAGE,
        candidate_id: CANDIDATE_ID,
        content_hash: CONTENT_HASH,
        destination: DESTINATION,
        heading: HEADING,
        source: SOURCE,
    }
}

text_row! {
    /// `SENSOR_PROPOSED` (D45): Stage, Candidate-ID, Sensor ID, Manifest path (absolute),
    /// Matches, Destinations (a JSON array of stage slugs), Source.
    SensorProposed = SENSOR_PROPOSED {
        stage: STAGE,
        candidate_id: CANDIDATE_ID,
        sensor_id: SENSOR_ID,
        manifest_path: MANIFEST_PATH,
        matches: MATCHES,
        destinations: DESTINATIONS,
        source: SOURCE,
    }
}

// --- Reading -----------------------------------------------------------------------------------

impl AuditEvent {
    /// The event a block read back from a shard is.
    pub fn from_block(block: AuditBlock) -> Self {
        match block.event.as_str() {
            SENSOR_FIRED => Self::SensorFired(FireIdentity::read(&block)),
            SENSOR_PASSED => Self::terminal(
                &block,
                SensorOutcome::Passed {
                    note: text(&block, field::NOTE),
                },
            ),
            SENSOR_FAILED => Self::terminal(
                &block,
                SensorOutcome::Failed {
                    detail_path: text(&block, field::DETAIL_PATH),
                    // 0 when missing or not a whole number (see the module's invariants).
                    findings_count: block
                        .field(field::FINDINGS_COUNT)
                        .and_then(|count| count.parse().ok())
                        .unwrap_or_default(),
                },
            ),
            SENSOR_BUDGET_OVERRIDE => Self::terminal(&block, SensorOutcome::BudgetOverride),
            STAGE_AWAITING_APPROVAL => Self::StageAwaitingApproval(GateRow::read(&block)),
            DECISION_RECORDED => Self::DecisionRecorded(DecisionRecorded::read(&block)),
            QUESTION_ANSWERED => Self::QuestionAnswered(QuestionAnswered::read(&block)),
            HUMAN_TURN => Self::HumanTurn,
            SUMMARY_CONFIRMATION_RECORDED => Self::SummaryConfirmationRecorded,
            AUTONOMY_MODE_SET => Self::AutonomyModeSet {
                autonomous: block.field(field::MODE) == Some(AUTONOMOUS_MODE),
            },
            RULE_LEARNED => Self::RuleLearned(RuleLearned::read(&block)),
            SENSOR_PROPOSED => Self::SensorProposed(SensorProposed::read(&block)),
            other => match other.parse() {
                Ok(state) => Self::StageMoved(StageMove {
                    state,
                    scope: StageScope::read(&block),
                }),
                Err(_) => Self::Other(block),
            },
        }
    }

    /// Where the gate stands after this row, for the rows that move a gate.
    pub fn gate_state(&self) -> Option<GateState> {
        match self {
            Self::StageAwaitingApproval(_) => Some(GateState::StageAwaitingApproval),
            Self::StageMoved(stage_move) => Some(stage_move.state),
            _ => None,
        }
    }

    /// The stage a conductor row (or the gate row) is about.
    pub fn stage_scope(&self) -> Option<&StageScope> {
        match self {
            Self::StageAwaitingApproval(row) => Some(&row.scope),
            Self::StageMoved(stage_move) => Some(&stage_move.scope),
            Self::DecisionRecorded(decision) => Some(&decision.scope),
            Self::QuestionAnswered(answer) => Some(&answer.scope),
            _ => None,
        }
    }

    /// Whether this row resolves a human turn (the reference's `GATE_RESOLUTION_EVENTS`, and an
    /// autonomy grant): after it, the next human-judgement row needs a new `HUMAN_TURN`.
    pub fn spends_a_human_turn(&self) -> bool {
        match self {
            Self::QuestionAnswered(_) | Self::SummaryConfirmationRecorded => true,
            Self::AutonomyModeSet { autonomous } => *autonomous,
            Self::StageMoved(stage_move) => matches!(
                stage_move.state,
                GateState::GateApproved | GateState::GateRejected
            ),
            _ => false,
        }
    }

    fn terminal(block: &AuditBlock, outcome: SensorOutcome) -> Self {
        Self::SensorTerminal(TerminalRow {
            fire: FireIdentity::read(block),
            unit: text(block, field::UNIT),
            outcome,
        })
    }
}

/// The first value of `key`, owned.
fn text(block: &AuditBlock, key: &str) -> Option<String> {
    block.field(key).map(str::to_owned)
}

/// The first value of `key`, owned; empty when it is missing (see the module's invariants).
fn text_or_empty(block: &AuditBlock, key: &str) -> String {
    block.field(key).unwrap_or_default().to_owned()
}

impl FireIdentity {
    /// The identity of one fire, with `output_path` (as fired, usually absolute) made relative
    /// to `project_dir`.
    pub fn new(
        project_dir: &Utf8Path,
        fire_id: &str,
        sensor_id: &str,
        stage_slug: &str,
        output_path: &str,
    ) -> Self {
        Self {
            fire_id: fire_id.to_owned(),
            sensor_id: sensor_id.to_owned(),
            stage_slug: stage_slug.to_owned(),
            output_path_field: relative_path_field(project_dir, output_path),
        }
    }

    fn read(block: &AuditBlock) -> Self {
        Self {
            fire_id: text_or_empty(block, field::FIRE_ID),
            sensor_id: text_or_empty(block, field::SENSOR_ID),
            stage_slug: text_or_empty(block, field::STAGE_SLUG),
            output_path_field: text_or_empty(block, field::OUTPUT_PATH),
        }
    }

    /// The engine never writes a sensor row's Unit.
    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            (field::FIRE_ID, self.fire_id.clone()),
            (field::SENSOR_ID, self.sensor_id.clone()),
            (field::STAGE_SLUG, self.stage_slug.clone()),
            (field::OUTPUT_PATH, self.output_path_field.clone()),
        ]
    }
}

impl StageScope {
    fn read(block: &AuditBlock) -> Self {
        Self {
            stage: text(block, field::STAGE),
            unit: text(block, field::UNIT),
            workflow: text(block, field::WORKFLOW),
        }
    }

    /// A main-workflow row of `slug` (D34): `Stage` is the slug and `Workflow` is not a
    /// `single-stage:` run.
    pub fn is_main_workflow_of(&self, slug: &str) -> bool {
        self.stage.as_deref() == Some(slug)
            && !self
                .workflow
                .as_deref()
                .is_some_and(|workflow| workflow.starts_with(SINGLE_STAGE_WORKFLOW_PREFIX))
    }
}

impl GateState {
    /// The rows after which an earlier override answer no longer counts (D34).
    pub fn spends_an_override_receipt(self) -> bool {
        matches!(
            self,
            Self::StageStarted | Self::StageAwaitingApproval | Self::GateRejected
        )
    }
}

impl GateRow {
    fn read(block: &AuditBlock) -> Self {
        let blocking_override = (block.field(field::BLOCKING_SENSOR_OVERRIDE) == Some("true"))
            .then(|| BlockingOverride {
                sensor_ids: text_or_empty(block, field::BLOCKING_SENSOR_IDS),
                detail_paths: text(block, field::BLOCKING_SENSOR_DETAIL_PATHS),
                reasons: text_or_empty(block, field::BLOCKING_SENSOR_REASONS),
            });
        Self {
            scope: StageScope::read(block),
            revalidated: block.field(field::REVALIDATED) == Some("true"),
            details: text(block, field::DETAILS),
            artifacts: text(block, field::ARTIFACTS),
            blocking_override,
            sensor_state: text(block, field::SENSOR_STATE),
            sensors_off: text(block, field::SENSORS_OFF),
        }
    }
}

// --- Writing -----------------------------------------------------------------------------------

impl GateRow {
    pub fn to_row(&self) -> AuditRow {
        let mut fields = present_fields(&[
            (field::STAGE, &self.scope.stage),
            (field::UNIT, &self.scope.unit),
            (field::WORKFLOW, &self.scope.workflow),
            (
                field::REVALIDATED,
                &self.revalidated.then(|| "true".to_owned()),
            ),
            (field::DETAILS, &self.details),
            (field::ARTIFACTS, &self.artifacts),
        ]);
        if let Some(blocking_override) = &self.blocking_override {
            fields.extend(blocking_override.fields());
        }
        fields.extend(present_fields(&[
            (field::SENSOR_STATE, &self.sensor_state),
            (field::SENSORS_OFF, &self.sensors_off),
        ]));
        AuditRow::trusted(STAGE_AWAITING_APPROVAL, fields)
    }
}

/// The pairs whose value is present, in order.
fn present_fields(fields: &[(&'static str, &Option<String>)]) -> Vec<(&'static str, String)> {
    fields
        .iter()
        .filter_map(|(key, value)| value.as_ref().map(|value| (*key, value.clone())))
        .collect()
}

impl BlockingOverride {
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            (field::BLOCKING_SENSOR_OVERRIDE, "true".to_owned()),
            (field::BLOCKING_SENSOR_IDS, self.sensor_ids.clone()),
        ];
        if let Some(detail_paths) = &self.detail_paths {
            fields.push((field::BLOCKING_SENSOR_DETAIL_PATHS, detail_paths.clone()));
        }
        fields.push((field::BLOCKING_SENSOR_REASONS, self.reasons.clone()));
        fields
    }
}

/// The rows the dispatcher writes, from the values it has at hand.
impl AuditRow {
    /// `SENSOR_FIRED` of `fire`.
    pub fn sensor_fired(fire: &FireIdentity) -> Self {
        AuditRow::trusted(SENSOR_FIRED, fire.fields())
    }

    /// `SENSOR_PASSED` of `fire`, with Duration ms and the note of a non-evaluation (an empty
    /// note is no note).
    pub fn sensor_passed(fire: &FireIdentity, duration_ms: u128, note: Option<&str>) -> Self {
        let mut fields = fire.fields();
        fields.push((field::DURATION_MS, duration_ms.to_string()));
        if let Some(note) = note.filter(|note| !note.is_empty()) {
            fields.push((field::NOTE, note.to_owned()));
        }
        AuditRow::trusted(SENSOR_PASSED, fields)
    }

    /// `SENSOR_FAILED` of `fire`, with `detail_path` made relative to `project_dir`.
    pub fn sensor_failed(
        fire: &FireIdentity,
        project_dir: &Utf8Path,
        detail_path: &Utf8Path,
        findings_count: u64,
    ) -> Self {
        let mut fields = fire.fields();
        fields.push((
            field::DETAIL_PATH,
            relative_path_field(project_dir, detail_path.as_str()),
        ));
        fields.push((field::FINDINGS_COUNT, findings_count.to_string()));
        AuditRow::trusted(SENSOR_FAILED, fields)
    }

    /// `SENSOR_BUDGET_OVERRIDE` of `fire`: Cap layer `registry`, Cap value, Observed value.
    pub fn sensor_budget_override(
        fire: &FireIdentity,
        cap_value_seconds: u64,
        observed_seconds: u64,
    ) -> Self {
        let mut fields = fire.fields();
        fields.push((field::CAP_LAYER, REGISTRY_CAP_LAYER.to_owned()));
        fields.push((field::CAP_VALUE, cap_value_seconds.to_string()));
        fields.push((field::OBSERVED_VALUE, observed_seconds.to_string()));
        AuditRow::trusted(SENSOR_BUDGET_OVERRIDE, fields)
    }
}

#[cfg(test)]
mod tests {
    use super::super::block::{check_field_key, format_block};
    use super::*;
    use crate::runtime::audit::ledger::parse_blocks;
    use crate::runtime::audit::ledger::test_support::sample_fire;

    #[test]
    fn the_sensor_constructors_use_valid_keys() {
        let fire = sample_fire();
        let rows = [
            AuditRow::sensor_fired(&fire),
            AuditRow::sensor_passed(&fire, 5, Some("tool-unavailable")),
            AuditRow::sensor_failed(&fire, Utf8Path::new("/p"), Utf8Path::new("/p/d.md"), 1),
            AuditRow::sensor_budget_override(&fire, 300, 301),
        ];
        for row in rows {
            for (key, _) in row.fields() {
                assert!(check_field_key(key).is_ok(), "{key}");
            }
        }
    }

    #[test]
    fn the_gate_row_has_the_reference_heading_and_keeps_field_order() {
        let stage_awaiting_approval = |fields| AuditRow::new(STAGE_AWAITING_APPROVAL, fields);
        let row = stage_awaiting_approval(vec![
            ("Stage", "user-stories".to_owned()),
            ("Sensor State", "shape@a.md=passed".to_owned()),
        ])
        .unwrap();
        assert_eq!(
            format_block(&row, "2026-09-04T10:11:12Z"),
            "\n## Stage Awaiting Approval\n**Timestamp**: 2026-09-04T10:11:12Z\n**Event**: STAGE_AWAITING_APPROVAL\n**Stage**: user-stories\n**Sensor State**: shape@a.md=passed\n\n---\n"
        );
        assert!(stage_awaiting_approval(vec![("Event", String::new())]).is_err());
    }

    // --- golden blocks

    #[test]
    fn a_fired_and_failed_pair_is_byte_exact() {
        let fire = sample_fire();
        let detail = Utf8Path::new(
            "/work/proj/aidlc/spaces/default/intents/260904-x/.aidlc-engine/sensors/intent-capture/claim-sources-a65d19af.md",
        );
        let fired = format_block(&AuditRow::sensor_fired(&fire), "2026-09-04T10:11:12Z");
        let failed = format_block(
            &AuditRow::sensor_failed(&fire, Utf8Path::new("/work/proj"), detail, 3),
            "2026-09-04T10:11:13Z",
        );
        let output =
            "aidlc/spaces/default/intents/260904-x/ideation/intent-capture/intent-statement.md";
        assert_eq!(
            fired,
            format!(
                "\n## Sensor Fired\n**Timestamp**: 2026-09-04T10:11:12Z\n**Event**: SENSOR_FIRED\n\
                 **Fire id**: a65d19af\n**Sensor ID**: claim-sources\n**Stage slug**: intent-capture\n\
                 **Output path**: {output}\n\n---\n"
            )
        );
        assert_eq!(
            failed,
            format!(
                "\n## Sensor Failed\n**Timestamp**: 2026-09-04T10:11:13Z\n**Event**: SENSOR_FAILED\n\
                 **Fire id**: a65d19af\n**Sensor ID**: claim-sources\n**Stage slug**: intent-capture\n\
                 **Output path**: {output}\n\
                 **Detail path**: aidlc/spaces/default/intents/260904-x/.aidlc-engine/sensors/intent-capture/claim-sources-a65d19af.md\n\
                 **Findings count**: 3\n\n---\n"
            )
        );
    }

    #[test]
    fn passed_and_budget_rows_keep_the_reference_field_order() {
        let fire = sample_fire();
        let noted = format_block(
            &AuditRow::sensor_passed(&fire, 42, Some("script-error: exit-2")),
            "T",
        );
        assert!(noted.ends_with("**Duration ms**: 42\n**Note**: script-error: exit-2\n\n---\n"));
        let plain = format_block(&AuditRow::sensor_passed(&fire, 7, Some("")), "T");
        assert!(plain.ends_with("**Duration ms**: 7\n\n---\n"));
        let budget = format_block(&AuditRow::sensor_budget_override(&fire, 300, 301), "T");
        assert!(budget.starts_with(
            "\n## Sensor Budget Override\n**Timestamp**: T\n**Event**: SENSOR_BUDGET_OVERRIDE\n"
        ));
        assert!(budget.ends_with(
            "**Cap layer**: registry\n**Cap value**: 300\n**Observed value**: 301\n\n---\n"
        ));
    }

    // --- reading

    fn read(row: &AuditRow) -> AuditEvent {
        AuditEvent::from_block(parse_blocks(&format_block(row, "T")).remove(0))
    }

    fn scope(stage: &str) -> StageScope {
        StageScope {
            stage: Some(stage.to_owned()),
            ..StageScope::default()
        }
    }

    #[test]
    fn every_written_row_reads_back_as_its_event() {
        let fire = sample_fire();
        assert_eq!(
            read(&AuditRow::sensor_fired(&fire)),
            AuditEvent::SensorFired(fire.clone())
        );
        let terminal = |outcome| {
            AuditEvent::SensorTerminal(TerminalRow {
                fire: fire.clone(),
                unit: None,
                outcome,
            })
        };
        assert_eq!(
            read(&AuditRow::sensor_passed(
                &fire,
                42,
                Some("tool-unavailable")
            )),
            terminal(SensorOutcome::Passed {
                note: Some("tool-unavailable".to_owned()),
            })
        );
        let failed_row =
            AuditRow::sensor_failed(&fire, Utf8Path::new("/p"), Utf8Path::new("/p/d.md"), 3);
        assert_eq!(
            read(&failed_row),
            terminal(SensorOutcome::Failed {
                detail_path: Some("d.md".to_owned()),
                findings_count: 3,
            })
        );
        assert_eq!(
            read(&AuditRow::sensor_budget_override(&fire, 300, 301)),
            terminal(SensorOutcome::BudgetOverride)
        );
        let gate_row = GateRow {
            scope: StageScope {
                unit: Some("alpha".to_owned()),
                ..scope("s")
            },
            artifacts: Some("doc-a,doc-b".to_owned()),
            blocking_override: Some(BlockingOverride {
                sensor_ids: "shape".to_owned(),
                detail_paths: None,
                reasons: "shape: tool-unavailable".to_owned(),
            }),
            sensor_state: Some("shape@a.md=tool-unavailable".to_owned()),
            sensors_off: Some("state".to_owned()),
            ..GateRow::default()
        };
        assert_eq!(
            read(&gate_row.to_row()),
            AuditEvent::StageAwaitingApproval(gate_row)
        );
    }

    #[test]
    fn the_learning_rows_are_the_reference_blocks_and_read_back() {
        let learned = RuleLearned {
            stage: Some("s".to_owned()),
            candidate_id: Some("c1".to_owned()),
            content_hash: Some("ab".to_owned()),
            destination: Some("/p/aidlc/spaces/default/memory/project.md".to_owned()),
            heading: Some("## Corrections".to_owned()),
            source: Some("orchestrator".to_owned()),
        };
        assert_eq!(
            format_block(&learned.to_row(), "T"),
            "\n## Rule Learned\n**Timestamp**: T\n**Event**: RULE_LEARNED\n**Stage**: s\n**Candidate-ID**: c1\n**Content-Hash**: ab\n**Destination**: /p/aidlc/spaces/default/memory/project.md\n**Heading**: ## Corrections\n**Source**: orchestrator\n\n---\n"
        );
        assert_eq!(read(&learned.to_row()), AuditEvent::RuleLearned(learned));
        let proposed = SensorProposed {
            stage: Some("s".to_owned()),
            candidate_id: Some("c2".to_owned()),
            sensor_id: Some("x".to_owned()),
            manifest_path: Some("/p/.claude/sensors/aidlc-x.md".to_owned()),
            matches: Some("**/*.md".to_owned()),
            destinations: Some("[\"s\"]".to_owned()),
            source: Some("orchestrator".to_owned()),
        };
        assert_eq!(
            format_block(&proposed.to_row(), "T"),
            "\n## Sensor Proposed\n**Timestamp**: T\n**Event**: SENSOR_PROPOSED\n**Stage**: s\n**Candidate-ID**: c2\n**Sensor ID**: x\n**Manifest path**: /p/.claude/sensors/aidlc-x.md\n**Matches**: **/*.md\n**Destinations**: [\"s\"]\n**Source**: orchestrator\n\n---\n"
        );
        assert_eq!(
            read(&proposed.to_row()),
            AuditEvent::SensorProposed(proposed)
        );
    }

    #[test]
    fn the_interaction_receipts_are_the_reference_blocks_and_read_back() {
        let decision = DecisionRecorded {
            scope: StageScope {
                unit: Some("u1".to_owned()),
                ..scope("s")
            },
            decision: Some("Blocking gate sensor failure".to_owned()),
            options: Some("Fix findings,Override blocking sensors".to_owned()),
            rationale: Some("why".to_owned()),
        };
        assert_eq!(
            format_block(&decision.to_row(), "T"),
            "\n## Decision Recorded\n**Timestamp**: T\n**Event**: DECISION_RECORDED\n**Stage**: s\n**Decision**: Blocking gate sensor failure\n**Options**: Fix findings,Override blocking sensors\n**Rationale**: why\n**Unit**: u1\n\n---\n"
        );
        assert_eq!(
            read(&decision.to_row()),
            AuditEvent::DecisionRecorded(decision)
        );
        let answer = QuestionAnswered {
            scope: scope("s"),
            details: Some("Override blocking sensors".to_owned()),
        };
        assert_eq!(
            format_block(&answer.to_row(), "T"),
            "\n## Question Answered\n**Timestamp**: T\n**Event**: QUESTION_ANSWERED\n**Stage**: s\n**Details**: Override blocking sensors\n\n---\n"
        );
        assert_eq!(read(&answer.to_row()), AuditEvent::QuestionAnswered(answer));
        assert_eq!(
            format_block(&AuditRow::new(HUMAN_TURN, Vec::new()).unwrap(), "T"),
            "\n## Human Turn\n**Timestamp**: T\n**Event**: HUMAN_TURN\n\n---\n"
        );
        assert_eq!(
            read(&AuditRow::new(HUMAN_TURN, Vec::new()).unwrap()),
            AuditEvent::HumanTurn
        );
        assert!(
            AuditEvent::QuestionAnswered(QuestionAnswered {
                scope: scope("s"),
                details: None,
            })
            .spends_a_human_turn()
        );
        assert!(!AuditEvent::HumanTurn.spends_a_human_turn());
    }

    #[test]
    fn the_gate_row_writes_its_fields_in_the_reference_order() {
        let gate_row = GateRow {
            scope: scope("s"),
            revalidated: true,
            blocking_override: Some(BlockingOverride {
                sensor_ids: "a,b".to_owned(),
                detail_paths: Some("d.md".to_owned()),
                reasons: "a: x; b: y".to_owned(),
            }),
            sensor_state: Some("a@x.md=failed(1)".to_owned()),
            ..GateRow::default()
        };
        assert_eq!(
            format_block(&gate_row.to_row(), "T"),
            "\n## Stage Awaiting Approval\n**Timestamp**: T\n**Event**: STAGE_AWAITING_APPROVAL\n\
             **Stage**: s\n**Revalidated**: true\n**Blocking Sensor Override**: true\n\
             **Blocking Sensor IDs**: a,b\n**Blocking Sensor Detail Paths**: d.md\n\
             **Blocking Sensor Reasons**: a: x; b: y\n**Sensor State**: a@x.md=failed(1)\n\n---\n"
        );
    }

    #[test]
    fn each_gate_move_is_read_from_its_event_name_only() {
        let names = [
            ("STAGE_STARTED", GateState::StageStarted),
            ("STAGE_AWAITING_APPROVAL", GateState::StageAwaitingApproval),
            ("STAGE_REVISING", GateState::StageRevising),
            ("GATE_REJECTED", GateState::GateRejected),
            ("GATE_APPROVED", GateState::GateApproved),
            ("STAGE_COMPLETED", GateState::StageCompleted),
            ("STAGE_SKIPPED", GateState::StageSkipped),
        ];
        for (name, state) in names {
            assert_eq!(name.parse::<GateState>(), Ok(state));
        }
        for other in ["stage_started", "StageStarted", "STAGE_STARTED ", "GATE"] {
            assert!(other.parse::<GateState>().is_err(), "{other}");
        }
    }

    #[test]
    fn the_conductors_rows_read_as_theirs_and_unknown_events_are_kept() {
        let rows = [
            AuditRow::new(
                "STAGE_STARTED",
                vec![
                    ("Stage", "s".to_owned()),
                    ("Workflow", "single-stage:s".to_owned()),
                ],
            ),
            AuditRow::new(
                DECISION_RECORDED,
                vec![
                    ("Stage", "s".to_owned()),
                    ("Decision", "D".to_owned()),
                    ("Options", "a, b".to_owned()),
                ],
            ),
            AuditRow::new(
                QUESTION_ANSWERED,
                vec![("Stage", "s".to_owned()), ("Details", "a".to_owned())],
            ),
            AuditRow::new(HUMAN_TURN, vec![("Session", "x".to_owned())]),
            AuditRow::new("HEALTH_CHECKED", vec![("Candidate-ID", "c1".to_owned())]),
        ];
        let events: Vec<AuditEvent> = rows.iter().map(|row| read(row.as_ref().unwrap())).collect();
        assert_eq!(
            events[0],
            AuditEvent::StageMoved(StageMove {
                state: GateState::StageStarted,
                scope: StageScope {
                    workflow: Some("single-stage:s".to_owned()),
                    ..scope("s")
                },
            })
        );
        assert_eq!(
            events[1],
            AuditEvent::DecisionRecorded(DecisionRecorded {
                scope: scope("s"),
                decision: Some("D".to_owned()),
                options: Some("a, b".to_owned()),
                rationale: None,
            })
        );
        assert_eq!(
            events[2],
            AuditEvent::QuestionAnswered(QuestionAnswered {
                scope: scope("s"),
                details: Some("a".to_owned()),
            })
        );
        assert_eq!(events[3], AuditEvent::HumanTurn);
        let AuditEvent::Other(unknown) = &events[4] else {
            panic!("{:?}", events[4]);
        };
        assert_eq!(unknown.heading, "Health Checked");
        assert_eq!(unknown.field("Candidate-ID"), Some("c1"));
        assert_eq!(unknown.event, "HEALTH_CHECKED");
    }

    #[test]
    fn a_sensor_row_missing_fields_reads_them_as_empty_or_zero() {
        let text = "\n## Sensor Failed\n**Timestamp**: T\n**Event**: SENSOR_FAILED\n**Findings count**: many\n\n---\n";
        let event = AuditEvent::from_block(parse_blocks(text).remove(0));
        let AuditEvent::SensorTerminal(row) = &event else {
            panic!("{event:?}");
        };
        assert_eq!(row.fire.stage_slug, "");
        assert_eq!(row.fire.output_path_field, "");
        assert_eq!(
            row.outcome,
            SensorOutcome::Failed {
                detail_path: None,
                findings_count: 0,
            }
        );
        assert_eq!(row.unit, None);
    }

    #[test]
    fn single_stage_rows_are_not_the_main_workflows() {
        assert!(scope("s").is_main_workflow_of("s"));
        assert!(!scope("s").is_main_workflow_of("t"));
        assert!(!StageScope::default().is_main_workflow_of("s"));
        let single = StageScope {
            workflow: Some("single-stage:s".to_owned()),
            ..scope("s")
        };
        assert!(!single.is_main_workflow_of("s"));
        let other_workflow = StageScope {
            workflow: Some("main".to_owned()),
            ..scope("s")
        };
        assert!(other_workflow.is_main_workflow_of("s"));
    }
}
