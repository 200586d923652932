//! Issue 14, item 2: `aidlc engine log decision|answer` and `aidlc engine hook
//! record-human-turn`, the three rows a blocking-sensor override needs: their bytes against the
//! reference's `aidlc-log.ts` and `aidlc-record-human-turn.ts` (Bun), the refusals that protect
//! the receipt, and the override completed with aidlc commands alone on `aidlc init --example`.

use std::process::Stdio;

use camino::Utf8Path;

use crate::support::{Run, TestProject, ledger_blocks, node_tool};

const RECORD: &str = "aidlc/spaces/default/intents/261201-demo";
const CHOICE: &str = "Override blocking sensors";
const DECISION: &str = "Blocking gate sensor failure";
const OPTIONS: &str = "Fix findings,Override blocking sensors";

/// A project with a harness and an active workflow at `user-stories`.
fn workflow_project() -> TestProject {
    let project = TestProject::empty();
    project.write(".claude/sensors/.keep", "");
    project.write(
        ".claude/aidlc-common/stages/inception/user-stories.md",
        &crate::support::stage("user-stories", "inception", "[]", "[]", ""),
    );
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: user-stories\n",
    );
    project
}

fn decision(project: &TestProject) -> Run {
    project.run(&[
        "engine",
        "log",
        "decision",
        "--stage",
        "user-stories",
        "--decision",
        DECISION,
        "--options",
        OPTIONS,
    ])
}

fn answer(project: &TestProject, details: &str) -> Run {
    project.run(&[
        "engine",
        "log",
        "answer",
        "--stage",
        "user-stories",
        "--details",
        details,
    ])
}

/// `aidlc engine hook record-human-turn` with `payload` on stdin.
fn human_turn(project: &TestProject, payload: &str) -> Run {
    project.run_watched(&["engine", "hook", "record-human-turn"], &[], Some(payload))
}

fn events(project: &TestProject) -> Vec<String> {
    ledger_blocks(project, RECORD)
        .iter()
        .map(|block| block.event().to_owned())
        .collect()
}

/// The shard's text with every timestamp replaced, so two runs compare byte for byte.
fn shard_text(root: &Utf8Path) -> String {
    let audit = root.join(RECORD).join("audit");
    let mut shards: Vec<_> = audit
        .read_dir_utf8()
        .expect("an audit folder")
        .map(|entry| entry.unwrap().path().to_owned())
        .collect();
    shards.sort();
    assert_eq!(shards.len(), 1, "{shards:?}");
    std::fs::read_to_string(&shards[0])
        .unwrap()
        .lines()
        .map(|line| {
            if line.starts_with("**Timestamp**: ") {
                "**Timestamp**: T"
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn decision_turn_and_answer_are_the_reference_rows() {
    let project = workflow_project();
    let run = project.run(&[
        "engine",
        "log",
        "decision",
        "--stage",
        "user-stories",
        "--decision",
        DECISION,
        "--options",
        OPTIONS,
        "--rationale",
        "why",
        "--unit",
        "u1",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"emitted\":\"DECISION_RECORDED\",\"stage\":\"user-stories\"}\n"
    );
    assert_eq!(human_turn(&project, "{\"prompt\":\"go\"}").status, 0);
    let run = answer(&project, CHOICE);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"emitted\":\"QUESTION_ANSWERED\",\"stage\":\"user-stories\"}\n"
    );
    assert_eq!(
        shard_text(&project.root),
        "# AI-DLC Audit Log\n\n## Decision Recorded\n**Timestamp**: T\n**Event**: DECISION_RECORDED\n**Stage**: user-stories\n**Decision**: Blocking gate sensor failure\n**Options**: Fix findings,Override blocking sensors\n**Rationale**: why\n**Unit**: u1\n\n---\n\n## Human Turn\n**Timestamp**: T\n**Event**: HUMAN_TURN\n\n---\n\n## Question Answered\n**Timestamp**: T\n**Event**: QUESTION_ANSWERED\n**Stage**: user-stories\n**Details**: Override blocking sensors\n\n---"
    );
    assert!(
        project
            .read(&format!("{RECORD}/.aidlc-human-turn"))
            .ends_with("Z\n")
    );
}

#[test]
fn the_reference_writes_the_same_bytes() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let reference = TestProject::reference_install("2.6.54");
    let ours = TestProject::reference_install("2.6.54");
    for project in [&reference, &ours] {
        project.write(
            &format!("{RECORD}/aidlc-state.md"),
            "# State\n\n- **Current Stage**: user-stories\n",
        );
        // The same clone id, so both shards have the same name.
        project.write("aidlc/.aidlc-clone-id", "0123456789ab\n");
    }
    let bun_run = |args: &[&str]| {
        let output = std::process::Command::new(bun.as_str())
            .args(args)
            .current_dir(&reference.root)
            .env("CLAUDE_PROJECT_DIR", reference.root.as_str())
            .env_remove("AIDLC_SKIP_HUMAN_PRESENCE_GUARD")
            .stdin(Stdio::null())
            .output()
            .expect("run bun");
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let reference_decision = bun_run(&[
        ".claude/tools/aidlc-log.ts",
        "decision",
        "--stage",
        "user-stories",
        "--decision",
        DECISION,
        "--options",
        OPTIONS,
        "--rationale",
        "why",
    ]);
    bun_run(&[".claude/hooks/aidlc-record-human-turn.ts"]);
    let reference_answer = bun_run(&[
        ".claude/tools/aidlc-log.ts",
        "answer",
        "--stage",
        "user-stories",
        "--details",
        CHOICE,
    ]);
    let our_decision = ours.run(&[
        "engine",
        "log",
        "decision",
        "--stage",
        "user-stories",
        "--decision",
        DECISION,
        "--options",
        OPTIONS,
        "--rationale",
        "why",
    ]);
    assert_eq!(human_turn(&ours, "{}").status, 0);
    let our_answer = answer(&ours, CHOICE);
    assert_eq!(our_decision.stdout, reference_decision);
    assert_eq!(our_answer.stdout, reference_answer);
    assert_eq!(shard_text(&ours.root), shard_text(&reference.root));
}

#[test]
fn nothing_is_logged_without_an_active_workflow() {
    let project = TestProject::empty();
    project.write(".claude/sensors/.keep", "");
    project.write(
        ".claude/aidlc-common/stages/inception/user-stories.md",
        &crate::support::stage("user-stories", "inception", "[]", "[]", ""),
    );
    let run = decision(&project);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("No active workflow"), "{}", run.stderr);
    assert_eq!(human_turn(&project, "{}").status, 0);
    assert!(
        !project.exists("aidlc"),
        "no workflow: the human-turn hook writes nothing (not even a clone id)"
    );
}

#[test]
fn an_answer_needs_a_human_turn_since_the_last_answer() {
    let project = workflow_project();
    assert_eq!(decision(&project).status, 0);
    let early = answer(&project, CHOICE);
    assert_eq!(early.status, 1);
    assert!(
        early
            .stderr
            .contains("a real human has not acted at this checkpoint this turn"),
        "{}",
        early.stderr
    );
    assert_eq!(human_turn(&project, "{}").status, 0);
    assert_eq!(answer(&project, CHOICE).status, 0);
    // The answer spent the turn: a second answer needs a new one.
    let again = answer(&project, CHOICE);
    assert_eq!(again.status, 1, "{}", again.stderr);
    assert_eq!(
        events(&project),
        ["DECISION_RECORDED", "HUMAN_TURN", "QUESTION_ANSWERED"]
    );
}

#[test]
fn an_override_answer_must_be_an_offered_option_after_a_turn_that_follows_the_decision() {
    let project = workflow_project();
    assert_eq!(human_turn(&project, "{}").status, 0);
    assert_eq!(decision(&project).status, 0);
    // The turn came before the decision: the gate would not read this answer as a receipt.
    let stale_turn = answer(&project, CHOICE);
    assert_eq!(stale_turn.status, 1);
    assert!(
        stale_turn
            .stderr
            .contains("no human turn was recorded in this clone's audit shard after the decision"),
        "{}",
        stale_turn.stderr
    );
    assert_eq!(human_turn(&project, "{}").status, 0);
    let paraphrase = answer(&project, "Override");
    assert_eq!(paraphrase.status, 1);
    assert!(
        paraphrase.stderr.contains(
            "received reply \"Override\" is not one of the choices the decision \"Blocking gate sensor failure\" offered (\"Fix findings\", \"Override blocking sensors\")"
        ),
        "{}",
        paraphrase.stderr
    );
    let dismissed = answer(&project, " Cancelled. ");
    assert_eq!(dismissed.status, 1);
    assert!(
        dismissed
            .stderr
            .contains("Refusing to record received reply \"Cancelled.\" as an answer"),
        "{}",
        dismissed.stderr
    );
    assert_eq!(answer(&project, "Fix findings").status, 0);
    assert_eq!(
        events(&project),
        [
            "HUMAN_TURN",
            "DECISION_RECORDED",
            "HUMAN_TURN",
            "QUESTION_ANSWERED"
        ]
    );
}

#[test]
fn the_override_completes_with_aidlc_commands_alone() {
    let project = TestProject::empty();
    let init = project.run(&["init", "--example", "."]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    let manifest = ".claude/sensors/aidlc-required-sections.md";
    let blocking = project
        .read(manifest)
        .replace("default_severity: advisory", "default_severity: blocking");
    project.write(manifest, &blocking);
    assert_eq!(project.compile().status, 0);

    let refused = project.run(&["engine", "gate", "start", "user-stories"]);
    assert_eq!(refused.status, 1, "{}", refused.stderr);
    let decision_command = "aidlc engine log decision --stage user-stories --decision \"Blocking gate sensor failure\" --options \"Fix findings,Override blocking sensors\"";
    let answer_command =
        "aidlc engine log answer --stage user-stories --details \"Override blocking sensors\"";
    for expected in [decision_command, answer_command] {
        assert!(
            refused.stderr.contains(expected),
            "missing {expected:?}: {}",
            refused.stderr
        );
    }
    assert!(
        !refused.stderr.contains("aidlc-log.ts"),
        "{}",
        refused.stderr
    );

    // Exactly the commands the refusal names, with the hook between them.
    let decision = project.run(&[
        "engine",
        "log",
        "decision",
        "--stage",
        "user-stories",
        "--decision",
        DECISION,
        "--options",
        OPTIONS,
    ]);
    assert_eq!(decision.status, 0, "{}", decision.stderr);
    assert_eq!(human_turn(&project, "{\"prompt\":\"override\"}").status, 0);
    let answered = project.run(&[
        "engine",
        "log",
        "answer",
        "--stage",
        "user-stories",
        "--details",
        CHOICE,
    ]);
    assert_eq!(answered.status, 0, "{}", answered.stderr);
    let opened = project.run(&[
        "engine",
        "gate",
        "start",
        "user-stories",
        "--override-blocking-sensors",
        "--user-input",
        CHOICE,
    ]);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
    assert!(
        opened
            .stdout
            .contains("\"new_state\":\"awaiting-approval\""),
        "{}",
        opened.stdout
    );
    // The receipt is spent: the same override again is refused.
    let again = project.run(&[
        "engine",
        "gate",
        "revise",
        "user-stories",
        "--override-blocking-sensors",
        "--user-input",
        CHOICE,
    ]);
    assert_eq!(again.status, 1, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("through `aidlc engine log decision|answer`"),
        "{}",
        again.stderr
    );
}

/// The reference's rule at an open approval gate: with no question asked since the gate
/// opened, the choice is the gate's, so nothing is written (it would spend the human turn the
/// approval needs); it still needs a human turn; a question asked after the gate opened is
/// answered as usual.
#[test]
fn an_answer_at_an_open_gate_is_left_to_the_gate() {
    let project = workflow_project();
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: user-stories\n\n## Stages\n- [?] user-stories \u{2014} User Stories\n",
    );
    project.write(
        &format!("{RECORD}/audit/elsewhere-aaaaaaaaaaaa.md"),
        &format!(
            "{}{}",
            crate::support::SHARD_HEADER,
            crate::support::audit_block(
                "Stage Awaiting Approval",
                "STAGE_AWAITING_APPROVAL",
                "2026-01-01T00:00:00Z",
                &[("Stage", "user-stories")]
            )
        ),
    );
    let early = answer(&project, "Approve");
    assert_eq!(early.status, 1);
    assert!(
        early
            .stderr
            .contains("Refusing to acknowledge this approval choice"),
        "{}",
        early.stderr
    );
    assert_eq!(human_turn(&project, "{}").status, 0);
    let skipped = answer(&project, "Approve");
    assert_eq!(skipped.status, 0, "{}", skipped.stderr);
    assert_eq!(
        skipped.stdout,
        "{\"skipped\":\"QUESTION_ANSWERED\",\"stage\":\"user-stories\",\"reason\":\"approval-gate-report-owned\"}\n"
    );
    assert_eq!(
        events(&project),
        ["STAGE_AWAITING_APPROVAL", "HUMAN_TURN"],
        "nothing written"
    );
    let asked = project.run(&[
        "engine",
        "log",
        "decision",
        "--stage",
        "user-stories",
        "--decision",
        "Which persona first?",
        "--options",
        "Admin,Guest",
    ]);
    assert_eq!(asked.status, 0, "{}", asked.stderr);
    assert_eq!(human_turn(&project, "{}").status, 0);
    let answered = answer(&project, "Guest");
    assert_eq!(answered.status, 0, "{}", answered.stderr);
    assert!(
        answered
            .stdout
            .contains("\"emitted\":\"QUESTION_ANSWERED\"")
    );
}
