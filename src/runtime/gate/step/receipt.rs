//! The refusal and the override receipt (D34): what the step says when blocking sensors did not
//! pass, the three override checks, and the authorization receipt read from the ledger.
//!
//! Invariant: an override stands only with a fresh receipt: an exact answer after every boundary
//! of the stage, newer than every other interaction, with the decision offering both options and
//! a human turn between them in the same shard. The gate row an override writes is itself a
//! boundary, so one receipt opens the gate once.
//!
//! Invariant (docs/decisions.md D34): rows count only when the engine can verify them. The human
//! turn must carry a receipt whose prompt the engine re-reads (the harness's transcript, or the
//! engine's copy where the harness names none) with an unchanged digest, the prompt must contain
//! the override choice, and the answer row must name that turn's receipt. Rows appended by hand
//! carry none of it and never count.

use std::fmt::Write as _;

use camino::Utf8Path;
use serde_json::Value;

use super::plan::BlockingIssue;
use super::request::{GateStepError, GateStepRequest};
use crate::compile::discover::Layout;
use crate::runtime::audit::human_turn::{
    HUMAN_TURN_RECEIPT_FIELD, ReceiptInstall, block_of, read_ledger_with_blocks, verify_human_turn,
};
use crate::runtime::audit::ledger::{AuditEvent, BlockingOverride, GateState, LedgerEntry};

/// The decision the conductor records before it offers an override (D34).
pub const BLOCKING_SENSOR_OVERRIDE_DECISION: &str = "Blocking gate sensor failure";
/// The options that decision must offer, both of them.
pub const BLOCKING_SENSOR_OVERRIDE_OPTIONS: [&str; 2] =
    ["Fix findings", "Override blocking sensors"];
/// The exact answer that authorises an override, and the exact `--user-input`.
pub const BLOCKING_SENSOR_OVERRIDE_CHOICE: &str = "Override blocking sensors";

// --- Enforcement --------------------------------------------------------------------------------

/// D34: no issues, or an override with authority, lets the gate proceed; anything else is a
/// refusal naming what to do.
pub(super) fn enforce_blocking_sensors(
    layout: &Layout,
    record: &Utf8Path,
    request: &GateStepRequest,
    autonomous: bool,
    issues: &[BlockingIssue],
) -> Result<(), GateStepError> {
    if issues.is_empty() {
        return Ok(());
    }
    if !request.override_requested {
        return Err(GateStepError::Refused {
            message: refusal_message(request, &ReceiptCommands::of_install(layout), issues),
        });
    }
    let refusal = override_refusal(
        &request.stage,
        autonomous,
        request.user_input.as_deref(),
        &ReceiptCommands::of_install(layout),
        || {
            let install = ReceiptInstall {
                project_dir: &layout.project_dir,
                harness: layout.harness,
            };
            verified_override_authorization(install, record, &request.stage)
        },
    );
    match refusal {
        Some(message) => Err(GateStepError::Refused { message }),
        None => Ok(()),
    }
}

/// Which commands record the decision and the answer on this install: the reference's
/// `aidlc-log.ts` when its tools are installed (its conductor calls them), else aidlc's own
/// `aidlc engine log`, so a refusal never names a file that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptCommands {
    /// `bun <harness>/tools/aidlc-log.ts`.
    Reference { harness_dir: String },
    /// `aidlc engine log`.
    Aidlc,
}

/// The reference's interaction logger, relative to the harness folder.
const REFERENCE_LOG_TOOL: &str = "tools/aidlc-log.ts";

impl ReceiptCommands {
    /// The reference's when `<harness>/tools/aidlc-log.ts` is a file, else aidlc's.
    pub fn of_install(layout: &Layout) -> Self {
        let harness_dir = layout.harness.dir_name();
        if layout
            .project_dir
            .join(harness_dir)
            .join(REFERENCE_LOG_TOOL)
            .is_file()
        {
            Self::Reference {
                harness_dir: harness_dir.to_owned(),
            }
        } else {
            Self::Aidlc
        }
    }

    /// The command that takes `decision …` and `answer …`.
    fn logger(&self) -> String {
        match self {
            Self::Reference { harness_dir } => format!("bun {harness_dir}/{REFERENCE_LOG_TOOL}"),
            Self::Aidlc => "aidlc engine log".to_owned(),
        }
    }

    /// How the no-receipt refusal names the logger (the reference's wording on its installs).
    fn logger_name(&self) -> &'static str {
        match self {
            Self::Reference { .. } => "aidlc-log.ts",
            Self::Aidlc => {
                "`aidlc engine log decision|answer` (with `aidlc engine hook record-human-turn` registered as the UserPromptSubmit hook)"
            }
        }
    }

    /// The answer command as the refusal spells it: the reference's words on its installs;
    /// aidlc's whole command line otherwise, so it can be run as written.
    fn answer_command(&self, slug: &str) -> String {
        match self {
            Self::Reference { .. } => format!("{} answer", self.logger()),
            Self::Aidlc => format!(
                "{} answer --stage {slug} --details \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\"",
                self.logger()
            ),
        }
    }
}

/// The three override checks of D34, in order; `None` when the override stands.
pub fn override_refusal(
    slug: &str,
    autonomous: bool,
    user_input: Option<&str>,
    commands: &ReceiptCommands,
    has_receipt: impl FnOnce() -> bool,
) -> Option<String> {
    if autonomous {
        return Some(format!(
            "Refusing blocking sensor override for \"{slug}\": Construction Autonomy Mode is autonomous. Unattended runs must halt on blocking sensor findings or unavailable evaluations."
        ));
    }
    if user_input.map(crate::leaves::js_text::js_trim) != Some(BLOCKING_SENSOR_OVERRIDE_CHOICE) {
        return Some(format!(
            "Refusing blocking sensor override for \"{slug}\": --user-input must be the exact offered choice \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\"."
        ));
    }
    if !has_receipt() {
        return Some(format!(
            "Refusing blocking sensor override for \"{slug}\": no fresh authorization receipt proves that \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\" was offered and selected after a HUMAN_TURN. Record the decision and exact answer through {}, then retry.",
            commands.logger_name()
        ));
    }
    None
}

/// The reference's refusal text (D34), naming the commands that record the decision and the
/// answer on this install (`commands`); the retry names this engine's command.
pub fn refusal_message(
    request: &GateStepRequest,
    commands: &ReceiptCommands,
    issues: &[BlockingIssue],
) -> String {
    let slug = &request.stage;
    let log = commands.logger();
    let answer = commands.answer_command(slug);
    let detail_paths: Vec<&str> = issues
        .iter()
        .filter_map(|issue| issue.detail_path.as_deref())
        .collect();
    let detail_paths = if detail_paths.is_empty() {
        "none".to_owned()
    } else {
        detail_paths.join(", ")
    };
    let reasons: Vec<String> = issues
        .iter()
        .map(|issue| {
            format!(
                "{}@{}: {}",
                issue.sensor_id, issue.output_path, issue.reason
            )
        })
        .collect();
    format!(
        "Blocking gate sensor evaluation did not pass for \"{slug}\". Sensors: {}. Detail paths: {detail_paths}. Reasons: {}. Fix the findings and retry, or first run {log} decision --stage {slug} --decision \"{BLOCKING_SENSOR_OVERRIDE_DECISION}\" --options \"{}\", present those choices, and after the human selects \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\" record it with {answer}. Then retry: {} --override-blocking-sensors --user-input \"{BLOCKING_SENSOR_OVERRIDE_CHOICE}\". Autonomous mode cannot override.",
        unique_sensor_ids(issues).join(", "),
        reasons.join("; "),
        BLOCKING_SENSOR_OVERRIDE_OPTIONS.join(","),
        retry_command(request),
    )
}

/// `aidlc engine gate <start|revise> <slug>` with the same `--unit` and `--artifacts`.
fn retry_command(request: &GateStepRequest) -> String {
    let mut command = format!(
        "aidlc engine gate {} {}",
        <&str>::from(request.entry),
        request.stage
    );
    if let Some(unit) = &request.unit {
        let _ = write!(command, " --unit {unit}");
    }
    if let Some(artifacts) = &request.artifacts {
        let _ = write!(command, " --artifacts {}", Value::from(artifacts.as_str()));
    }
    command
}

fn unique_sensor_ids(issues: &[BlockingIssue]) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for issue in issues {
        if !ids.contains(&issue.sensor_id.as_str()) {
            ids.push(&issue.sensor_id);
        }
    }
    ids
}

/// The override part of the gate row (D34): the blocking sensor ids once each, the detail paths of
/// the issues that have one, and every issue's reason.
pub(super) fn blocking_override(issues: &[BlockingIssue]) -> BlockingOverride {
    let detail_paths: Vec<&str> = issues
        .iter()
        .filter_map(|issue| issue.detail_path.as_deref())
        .collect();
    let reasons: Vec<String> = issues
        .iter()
        .map(|issue| format!("{}: {}", issue.sensor_id, issue.reason))
        .collect();
    BlockingOverride {
        sensor_ids: unique_sensor_ids(issues).join(","),
        detail_paths: (!detail_paths.is_empty()).then(|| detail_paths.join(",")),
        reasons: reasons.join("; "),
    }
}

// --- The authorization receipt -------------------------------------------------------------------

/// The receipt read from `record`'s ledger, each human turn and answer verified by the engine
/// (the module's invariant).
pub fn verified_override_authorization(
    install: ReceiptInstall<'_>,
    record: &Utf8Path,
    slug: &str,
) -> bool {
    let (entries, blocks) = read_ledger_with_blocks(record);
    has_override_authorization(&entries, slug, &|human_turn, answer| {
        let (Some(turn_block), Some(answer_block)) =
            (block_of(&blocks, human_turn), block_of(&blocks, answer))
        else {
            return false;
        };
        verify_human_turn(install, record, turn_block).is_ok_and(|verified| {
            verified.chose(BLOCKING_SENSOR_OVERRIDE_CHOICE)
                && answer_block.field(HUMAN_TURN_RECEIPT_FIELD) == Some(verified.receipt.as_str())
        })
    })
}

/// Whether the engine verified a human turn and the answer made after it.
pub type TurnVerifier<'v> = dyn Fn(&LedgerEntry, &LedgerEntry) -> bool + 'v;

/// D34 `hasBlockingSensorOverrideAuthorization`: an answer `Override blocking sensors` after
/// every boundary of the stage, newer than every other interaction, with an earlier decision
/// offering both options in the same shard and a `HUMAN_TURN` strictly between the two that
/// `verified` accepts with the answer.
pub fn has_override_authorization(
    entries: &[LedgerEntry],
    slug: &str,
    verified: &TurnVerifier<'_>,
) -> bool {
    let stage_entries: Vec<&LedgerEntry> = entries
        .iter()
        .filter(|entry| {
            entry
                .event
                .stage_scope()
                .is_some_and(|scope| scope.is_main_workflow_of(slug))
        })
        .collect();
    let boundaries: Vec<&LedgerEntry> = stage_entries
        .iter()
        .copied()
        .filter(|entry| {
            entry
                .event
                .gate_state()
                .is_some_and(GateState::spends_an_override_receipt)
        })
        .collect();
    let interactions: Vec<&LedgerEntry> = stage_entries
        .iter()
        .copied()
        .filter(|entry| {
            matches!(
                entry.event,
                AuditEvent::DecisionRecorded(_) | AuditEvent::QuestionAnswered(_)
            )
        })
        .collect();
    interactions
        .iter()
        .filter(|entry| {
            matches!(&entry.event, AuditEvent::QuestionAnswered(answer)
                if answer.details.as_deref() == Some(BLOCKING_SENSOR_OVERRIDE_CHOICE))
        })
        .any(|answer| answer_is_authorised(entries, &boundaries, &interactions, answer, verified))
}

fn answer_is_authorised(
    entries: &[LedgerEntry],
    boundaries: &[&LedgerEntry],
    interactions: &[&LedgerEntry],
    answer: &LedgerEntry,
    verified: &TurnVerifier<'_>,
) -> bool {
    let after_every_boundary = boundaries.iter().all(|boundary| answer.is_after(boundary));
    let newest_interaction = interactions
        .iter()
        .all(|entry| std::ptr::eq(*entry, answer) || answer.is_after(entry));
    if !after_every_boundary || !newest_interaction {
        return false;
    }
    offering_decision(interactions, answer).is_some_and(|decision| {
        entries.iter().any(|entry| {
            matches!(entry.event, AuditEvent::HumanTurn)
                && entry.shard == answer.shard
                && entry.position > decision.position
                && entry.position < answer.position
                && verified(entry, answer)
        })
    })
}

/// The newest decision before `answer` in its shard that offered both override options.
fn offering_decision<'e>(
    interactions: &[&'e LedgerEntry],
    answer: &LedgerEntry,
) -> Option<&'e LedgerEntry> {
    interactions.iter().rev().copied().find(|entry| {
        let AuditEvent::DecisionRecorded(decision) = &entry.event else {
            return false;
        };
        entry.shard == answer.shard
            && entry.position < answer.position
            && decision.decision.as_deref() == Some(BLOCKING_SENSOR_OVERRIDE_DECISION)
            && offers_both_options(decision.options.as_deref().unwrap_or_default())
    })
}

fn offers_both_options(options: &str) -> bool {
    let offered: Vec<&str> = options
        .split(',')
        .map(crate::leaves::js_text::js_trim)
        .collect();
    BLOCKING_SENSOR_OVERRIDE_OPTIONS
        .iter()
        .all(|option| offered.contains(option))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::audit::ledger::STAGE_AWAITING_APPROVAL;
    use crate::runtime::audit::ledger::event::{DECISION_RECORDED, HUMAN_TURN, QUESTION_ANSWERED};
    use crate::runtime::gate::step::GateEntry;
    use crate::runtime::gate::step::test_support::{block, gate_row, shard};

    fn decision() -> String {
        block(
            DECISION_RECORDED,
            &[
                ("Stage", "s"),
                ("Decision", BLOCKING_SENSOR_OVERRIDE_DECISION),
                ("Options", "Fix findings, Override blocking sensors"),
            ],
        )
    }

    fn human_turn() -> String {
        block(HUMAN_TURN, &[("Session", "x")])
    }

    fn answer(details: &str) -> String {
        block(QUESTION_ANSWERED, &[("Stage", "s"), ("Details", details)])
    }

    #[test]
    fn a_receipt_needs_the_decision_a_human_turn_and_the_exact_answer() {
        let choice = BLOCKING_SENSOR_OVERRIDE_CHOICE;
        let full = shard(&[decision(), human_turn(), answer(choice)]);
        assert!(has_override_authorization(&full, "s", &|_, _| true));
        assert!(!has_override_authorization(
            &full,
            "other-stage",
            &|_, _| true
        ));
        let no_turn = shard(&[decision(), answer(choice)]);
        assert!(!has_override_authorization(&no_turn, "s", &|_, _| true));
        let turn_first = shard(&[human_turn(), decision(), answer(choice)]);
        assert!(!has_override_authorization(&turn_first, "s", &|_, _| true));
        let paraphrase = shard(&[decision(), human_turn(), answer("Override")]);
        assert!(!has_override_authorization(&paraphrase, "s", &|_, _| true));
        let no_decision = shard(&[human_turn(), answer(choice)]);
        assert!(!has_override_authorization(&no_decision, "s", &|_, _| true));
    }

    #[test]
    fn a_receipt_needs_its_human_turn_verified() {
        let full = shard(&[
            decision(),
            human_turn(),
            answer(BLOCKING_SENSOR_OVERRIDE_CHOICE),
        ]);
        assert!(!has_override_authorization(&full, "s", &|_, _| false));
    }

    #[test]
    fn a_receipt_is_spent_by_a_later_boundary_or_interaction() {
        let choice = BLOCKING_SENSOR_OVERRIDE_CHOICE;
        let spent = shard(&[decision(), human_turn(), answer(choice), gate_row()]);
        assert!(!has_override_authorization(&spent, "s", &|_, _| true));
        let stale = shard(&[decision(), human_turn(), answer(choice), decision()]);
        assert!(!has_override_authorization(&stale, "s", &|_, _| true));
        let single = shard(&[
            decision(),
            human_turn(),
            answer(choice),
            block(
                STAGE_AWAITING_APPROVAL,
                &[("Stage", "s"), ("Workflow", "single-stage:s")],
            ),
        ]);
        assert!(
            has_override_authorization(&single, "s", &|_, _| true),
            "single-stage rows are not the main workflow's"
        );
    }

    #[test]
    fn the_decision_must_offer_both_options() {
        let narrow = block(
            DECISION_RECORDED,
            &[
                ("Stage", "s"),
                ("Decision", BLOCKING_SENSOR_OVERRIDE_DECISION),
                ("Options", "Override blocking sensors"),
            ],
        );
        let rows = shard(&[
            narrow,
            human_turn(),
            answer(BLOCKING_SENSOR_OVERRIDE_CHOICE),
        ]);
        assert!(!has_override_authorization(&rows, "s", &|_, _| true));
    }

    #[test]

    fn the_override_checks_run_in_the_reference_order() {
        let choice = Some(BLOCKING_SENSOR_OVERRIDE_CHOICE);
        let autonomous = override_refusal("s", true, choice, &reference(), || true).unwrap();
        assert!(autonomous.contains("Construction Autonomy Mode is autonomous"));
        let wrong = override_refusal("s", false, Some("override"), &reference(), || true).unwrap();
        assert!(wrong.contains("--user-input must be the exact offered choice"));
        let padded = override_refusal(
            "s",
            false,
            Some("  Override blocking sensors "),
            &reference(),
            || true,
        );
        assert_eq!(padded, None, "the input is trimmed");
        let no_receipt = override_refusal("s", false, choice, &reference(), || false).unwrap();
        assert_eq!(
            no_receipt,
            "Refusing blocking sensor override for \"s\": no fresh authorization receipt proves that \"Override blocking sensors\" was offered and selected after a HUMAN_TURN. Record the decision and exact answer through aidlc-log.ts, then retry."
        );
    }

    fn reference() -> ReceiptCommands {
        ReceiptCommands::Reference {
            harness_dir: ".claude".to_owned(),
        }
    }

    #[test]
    fn without_the_reference_tools_the_refusals_name_aidlc_commands() {
        let message = refusal_message(&start_request(), &ReceiptCommands::Aidlc, &sample_issues());
        assert!(
            message.contains("or first run aidlc engine log decision --stage s --decision \"Blocking gate sensor failure\" --options \"Fix findings,Override blocking sensors\", present those choices, and after the human selects \"Override blocking sensors\" record it with aidlc engine log answer --stage s --details \"Override blocking sensors\". Then retry: aidlc engine gate start s"),
            "{message}"
        );
        assert!(!message.contains("aidlc-log.ts"), "{message}");
        let no_receipt = override_refusal(
            "s",
            false,
            Some(BLOCKING_SENSOR_OVERRIDE_CHOICE),
            &ReceiptCommands::Aidlc,
            || false,
        )
        .unwrap();
        assert!(
            no_receipt.contains("through `aidlc engine log decision|answer`"),
            "{no_receipt}"
        );
    }

    fn sample_issues() -> Vec<BlockingIssue> {
        vec![
            BlockingIssue {
                sensor_id: "shape".to_owned(),
                output_path: "a/doc-a.md".to_owned(),
                detail_path: Some("a/.aidlc-engine/sensors/s/shape-0000000a.md".to_owned()),
                reason: "reported findings".to_owned(),
            },
            BlockingIssue {
                sensor_id: "shape".to_owned(),
                output_path: "a/doc-b.md".to_owned(),
                detail_path: None,
                reason: "tool-unavailable".to_owned(),
            },
        ]
    }

    fn start_request() -> GateStepRequest {
        GateStepRequest {
            entry: GateEntry::Start,
            stage: "s".to_owned(),
            artifacts: None,
            unit: None,
            override_requested: false,
            user_input: None,
            dispatch_disabled_by_environment: false,
            dispatch_cap: None,
        }
    }

    #[test]
    fn the_refusal_message_keeps_the_reference_wording() {
        let message = refusal_message(&start_request(), &reference(), &sample_issues());
        assert_eq!(
            message,
            "Blocking gate sensor evaluation did not pass for \"s\". Sensors: shape. Detail paths: a/.aidlc-engine/sensors/s/shape-0000000a.md. Reasons: shape@a/doc-a.md: reported findings; shape@a/doc-b.md: tool-unavailable. Fix the findings and retry, or first run bun .claude/tools/aidlc-log.ts decision --stage s --decision \"Blocking gate sensor failure\" --options \"Fix findings,Override blocking sensors\", present those choices, and after the human selects \"Override blocking sensors\" record it with bun .claude/tools/aidlc-log.ts answer. Then retry: aidlc engine gate start s --override-blocking-sensors --user-input \"Override blocking sensors\". Autonomous mode cannot override."
        );
        let revise = GateStepRequest {
            entry: GateEntry::Revise,
            ..start_request()
        };
        let issues = &sample_issues()[1..];
        let kiro = ReceiptCommands::Reference {
            harness_dir: ".kiro".to_owned(),
        };
        let message = refusal_message(&revise, &kiro, issues);
        assert!(message.contains("Detail paths: none."), "{message}");
        assert!(
            message.contains("retry: aidlc engine gate revise s --override"),
            "{message}"
        );
    }

    #[test]
    fn override_fields_name_ids_once_and_only_existing_detail_paths() {
        let fields = blocking_override(&sample_issues()).fields();
        assert_eq!(
            fields,
            [
                ("Blocking Sensor Override", "true".to_owned()),
                ("Blocking Sensor IDs", "shape".to_owned()),
                (
                    "Blocking Sensor Detail Paths",
                    "a/.aidlc-engine/sensors/s/shape-0000000a.md".to_owned()
                ),
                (
                    "Blocking Sensor Reasons",
                    "shape: reported findings; shape: tool-unavailable".to_owned()
                ),
            ]
        );
        let without_detail = blocking_override(&sample_issues()[1..]).fields();
        assert!(
            without_detail
                .iter()
                .all(|(key, _)| *key != "Blocking Sensor Detail Paths")
        );
    }
}
