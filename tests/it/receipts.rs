//! `aidlc engine log decision|answer` and `aidlc engine
//! hook record-human-turn`, the three rows a blocking-sensor override needs: their bytes against
//! the reference's `aidlc-log.ts` and `aidlc-record-human-turn.ts` (Bun), the refusals that
//! protect the receipt, the override completed on `aidlc init --example` from a real Claude Code
//! prompt and transcript, and the bypasses an agent could try alone (docs/decisions.md D34).

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

/// Where the test's Claude Code session keeps its transcript (outside the project's `aidlc/`).
fn transcript_path(project: &TestProject) -> camino::Utf8PathBuf {
    project.claude_transcript("session-1")
}

/// The human types `prompt` in a Claude Code session: the harness writes the user message to
/// its transcript and runs the prompt hook with its real `UserPromptSubmit` payload.
fn human_types(project: &TestProject, prompt: &str) -> Run {
    let transcript = transcript_path(project);
    append_transcript_lines(
        &transcript,
        &[serde_json::json!({
            "type": "user",
            "sessionId": "session-1",
            "message": {"role": "user", "content": prompt},
        })],
    );
    let payload = serde_json::json!({
        "session_id": "session-1",
        "transcript_path": transcript.as_str(),
        "cwd": project.root.as_str(),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    });
    let run = human_turn(project, &payload.to_string());
    assert_eq!(run.status, 0, "{}", run.stderr);
    run
}

/// The harness appends `lines` to the session's transcript (created with its folder).
fn append_transcript_lines(transcript: &Utf8Path, lines: &[serde_json::Value]) {
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let mut text = std::fs::read_to_string(transcript).unwrap_or_default();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(transcript, text).unwrap();
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
            for key in [
                "Timestamp",
                "Prompt Digest",
                "Receipt",
                "Human Turn Receipt",
            ] {
                if line.starts_with(&format!("**{key}**: ")) {
                    return format!("**{key}**: {}", &key[..1]);
                }
            }
            line.replace(root.as_str(), "<PROJECT>")
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
    human_types(&project, CHOICE);
    let run = answer(&project, CHOICE);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"emitted\":\"QUESTION_ANSWERED\",\"stage\":\"user-stories\"}\n"
    );
    assert_eq!(
        shard_text(&project.root).replace(
            &transcript_path(&project)
                .as_str()
                .replace(project.root.as_str(), "<PROJECT>"),
            "<TRANSCRIPT>"
        ),
        "# AI-DLC Audit Log\n\n## Decision Recorded\n**Timestamp**: T\n**Event**: DECISION_RECORDED\n**Stage**: user-stories\n**Decision**: Blocking gate sensor failure\n**Options**: Fix findings,Override blocking sensors\n**Rationale**: why\n**Unit**: u1\n\n---\n\n## Human Turn\n**Timestamp**: T\n**Event**: HUMAN_TURN\n**Harness**: claude\n**Session**: session-1\n**Prompt Digest**: P\n**Transcript**: <TRANSCRIPT>\n**Transcript Line**: 1\n**Receipt**: R\n\n---\n\n## Question Answered\n**Timestamp**: T\n**Event**: QUESTION_ANSWERED\n**Stage**: user-stories\n**Details**: Override blocking sensors\n**Human Turn Receipt**: H\n\n---"
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
    human_types(&ours, CHOICE);
    let our_answer = answer(&ours, CHOICE);
    assert_eq!(our_decision.stdout, reference_decision);
    assert_eq!(our_answer.stdout, reference_answer);
    // The bytes differ in exactly the receipt's fields (docs/decisions.md D34), each a line the
    // reference's readers ignore: HUMAN_TURN's Harness, Session, Prompt Digest, Transcript,
    // Transcript Line and Receipt, and QUESTION_ANSWERED's Human Turn Receipt. Without them the
    // shards are the same bytes.
    let receipt_lines = [
        "**Harness**: ",
        "**Session**: ",
        "**Prompt Digest**: ",
        "**Transcript**: ",
        "**Transcript Line**: ",
        "**Receipt**: ",
        "**Human Turn Receipt**: ",
    ];
    let ours_text = shard_text(&ours.root);
    let (receipt, rest): (Vec<&str>, Vec<&str>) = ours_text
        .lines()
        .partition(|line| receipt_lines.iter().any(|start| line.starts_with(start)));
    assert_eq!(receipt.len(), receipt_lines.len(), "{receipt:?}");
    assert_eq!(rest.join("\n"), shard_text(&reference.root));
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
    human_types(&project, "build it");
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
    human_types(&project, CHOICE);
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
    human_types(&project, "go on");
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
    human_types(&project, "Fix findings");
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

/// `aidlc init --example` with required-sections made blocking, so `user-stories`' gate refuses.
fn blocking_example() -> TestProject {
    let project = TestProject::empty();
    let init = project.run(&["init", "--example", "."]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    let manifest = ".claude/sensors/aidlc-required-sections.md";
    let blocking = project
        .read(manifest)
        .replace("default_severity: advisory", "default_severity: blocking");
    project.write(manifest, &blocking);
    assert_eq!(project.compile().status, 0);
    project
}

fn start_with_override(project: &TestProject) -> Run {
    project.run(&[
        "engine",
        "gate",
        "start",
        "user-stories",
        "--override-blocking-sensors",
        "--user-input",
        CHOICE,
    ])
}

#[test]
fn a_real_claude_code_prompt_gives_a_receipt_the_gate_honours() {
    let project = blocking_example();
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
    human_types(&project, "Override blocking sensors");
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
    let opened = start_with_override(&project);
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
    human_types(&project, "Approve");
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
    human_types(&project, "Guest, please");
    let answered = answer(&project, "Guest");
    assert_eq!(answered.status, 0, "{}", answered.stderr);
    assert!(
        answered
            .stdout
            .contains("\"emitted\":\"QUESTION_ANSWERED\"")
    );
}

const EXAMPLE_RECORD_AUDIT: &str = "audit";

/// The example's active record, project-relative.
fn example_record(project: &TestProject) -> String {
    let state = std::fs::read_dir(project.path("aidlc/spaces/default/intents"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.join("aidlc-state.md").is_file())
        .expect("an intent with a state file");
    camino::Utf8PathBuf::from_path_buf(state)
        .unwrap()
        .strip_prefix(&project.root)
        .unwrap()
        .to_string()
}

#[test]
fn the_four_command_bypass_is_refused() {
    let project = blocking_example();
    assert_eq!(decision(&project).status, 0);
    let minted = human_turn(&project, "{}");
    assert_eq!(minted.status, 2, "{}", minted.stderr);
    assert!(
        minted
            .stderr
            .contains("not a Claude Code prompt event: the payload has no \"hook_event_name\""),
        "{}",
        minted.stderr
    );
    let answered = answer(&project, CHOICE);
    assert_eq!(answered.status, 1, "{}", answered.stderr);
    assert!(
        answered
            .stderr
            .contains("a real human has not acted at this checkpoint"),
        "{}",
        answered.stderr
    );
    let opened = start_with_override(&project);
    assert_eq!(opened.status, 1, "{}", opened.stderr);
    assert!(
        opened.stderr.contains("no fresh authorization receipt"),
        "{}",
        opened.stderr
    );
}

#[test]
fn hand_appended_rows_are_not_a_receipt_and_doctor_reports_them() {
    let project = blocking_example();
    let record = example_record(&project);
    let shard = format!("{record}/{EXAMPLE_RECORD_AUDIT}/by-hand-000000000000.md");
    let block = |heading: &str, event: &str, at: &str, fields: &[(&str, &str)]| {
        crate::support::audit_block(heading, event, at, fields)
    };
    // The three rows, as a shell would append them; the human turn even forges receipt fields.
    project.write(
        &shard,
        &format!(
            "{}{}{}{}",
            crate::support::SHARD_HEADER,
            block(
                "Decision Recorded",
                "DECISION_RECORDED",
                "2099-01-01T00:00:01Z",
                &[
                    ("Stage", "user-stories"),
                    ("Decision", DECISION),
                    ("Options", OPTIONS)
                ]
            ),
            block(
                "Human Turn",
                "HUMAN_TURN",
                "2099-01-01T00:00:02Z",
                &[
                    ("Harness", "claude"),
                    ("Prompt Digest", "00"),
                    ("Receipt", "00")
                ]
            ),
            block(
                "Question Answered",
                "QUESTION_ANSWERED",
                "2099-01-01T00:00:03Z",
                &[
                    ("Stage", "user-stories"),
                    ("Details", CHOICE),
                    ("Human Turn Receipt", "00")
                ]
            ),
        ),
    );
    let opened = start_with_override(&project);
    assert_eq!(opened.status, 1, "{}", opened.stderr);
    assert!(
        opened.stderr.contains("no fresh authorization receipt"),
        "{}",
        opened.stderr
    );
    let doctor = project.run(&["doctor"]);
    for expected in [
        "the engine cannot verify, and they never count for an override",
        "by-hand-000000000000.md row 2 (HUMAN_TURN): the HUMAN_TURN row's Receipt does not match its fields",
        "by-hand-000000000000.md row 3 (QUESTION_ANSWERED): names a receipt no verified human turn before it has",
    ] {
        assert!(
            doctor.stdout.contains(expected),
            "missing {expected:?}: {}",
            doctor.stdout
        );
    }
}

#[test]
fn an_answer_not_in_the_human_s_prompt_is_refused() {
    let project = workflow_project();
    assert_eq!(decision(&project).status, 0);
    human_types(&project, "Let me think about it");
    let refused = answer(&project, CHOICE);
    assert_eq!(refused.status, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "the human typed \"Let me think about it\" this turn, which is not the choice \"Override blocking sensors\" itself"
        ),
        "{}",
        refused.stderr
    );
    assert_eq!(events(&project), ["DECISION_RECORDED", "HUMAN_TURN"]);
}

#[test]
fn a_transcript_edited_after_the_turn_makes_the_gate_refuse_the_override() {
    let project = blocking_example();
    assert_eq!(decision(&project).status, 0);
    human_types(&project, CHOICE);
    assert_eq!(answer(&project, CHOICE).status, 0);
    let transcript = transcript_path(&project);
    let edited = std::fs::read_to_string(&transcript)
        .unwrap()
        .replace(CHOICE, "Fix findings");
    std::fs::write(&transcript, edited).unwrap();
    let opened = start_with_override(&project);
    assert_eq!(opened.status, 1, "{}", opened.stderr);
    assert!(
        opened.stderr.contains("no fresh authorization receipt"),
        "{}",
        opened.stderr
    );
}

/// A prompt payload an agent could make up for a project.
type Forge = dyn Fn(&TestProject) -> String;

/// The agent's forgery, each variant through the one command the guard would have to miss:
/// the decision, a prompt payload it made itself, the answer, the override. Neither payload is a
/// receipt, so neither the answer nor the gate accepts it, and doctor verifies nothing.
#[test]
fn a_prompt_payload_the_agent_made_is_no_receipt() {
    let kiro_shaped = |project: &TestProject| {
        serde_json::json!({
            "hook_event_name": "userPromptSubmit",
            "cwd": project.root.as_str(),
            "prompt": CHOICE,
        })
        .to_string()
    };
    let claude_shaped_elsewhere = |project: &TestProject| {
        // A transcript the agent wrote itself, outside the harness's folder for this project.
        let elsewhere = project.path(".agent/forged.jsonl");
        project.write(
            ".agent/forged.jsonl",
            &format!(
                "{}\n",
                serde_json::json!({"type":"user","message":{"role":"user","content":CHOICE}})
            ),
        );
        serde_json::json!({
            "session_id": "session-1",
            "transcript_path": elsewhere.as_str(),
            "cwd": project.root.as_str(),
            "hook_event_name": "UserPromptSubmit",
            "prompt": CHOICE,
        })
        .to_string()
    };
    let claude_shaped_other_session = |project: &TestProject| {
        // The harness's folder for this project, but not the session the payload names.
        let other = project.claude_transcript("session-2");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        std::fs::write(
            &other,
            format!(
                "{}\n",
                serde_json::json!({"type":"user","message":{"role":"user","content":CHOICE}})
            ),
        )
        .unwrap();
        serde_json::json!({
            "session_id": "session-1",
            "transcript_path": other.as_str(),
            "cwd": project.root.as_str(),
            "hook_event_name": "UserPromptSubmit",
            "prompt": CHOICE,
        })
        .to_string()
    };
    let variants: [(&str, &Forge, &str); 3] = [
        (
            "a Kiro-shaped payload",
            &kiro_shaped,
            "not a Claude Code prompt event: the payload's \"hook_event_name\" is \"userPromptSubmit\", not \"UserPromptSubmit\"; no human turn was recorded (this hook is registered for Claude Code)",
        ),
        (
            "a transcript elsewhere",
            &claude_shaped_elsewhere,
            "is not Claude Code's for this project and session",
        ),
        (
            "another session's transcript",
            &claude_shaped_other_session,
            "is not Claude Code's for this project and session",
        ),
    ];
    for (name, forge, refusal) in variants {
        let project = blocking_example();
        assert_eq!(decision(&project).status, 0, "{name}");
        let minted = human_turn(&project, &forge(&project));
        assert_eq!(minted.status, 2, "{name}: {}", minted.stderr);
        assert!(minted.stderr.contains(refusal), "{name}: {}", minted.stderr);
        assert!(
            !events(&project).contains(&"HUMAN_TURN".to_owned()),
            "{name}"
        );
        assert_eq!(answer(&project, CHOICE).status, 1, "{name}");
        let opened = start_with_override(&project);
        assert_eq!(opened.status, 1, "{name}: {}", opened.stderr);
        let doctor = project.run(&["doctor"]);
        assert!(
            doctor.stdout.contains("Receipt rows: 0 "),
            "{name}: {}",
            doctor.stdout
        );
    }
}

/// A person who refuses the override in a sentence that contains it gives no receipt: the
/// answer is refused with the reason, and the gate stays shut.
#[test]
fn a_sentence_that_contains_the_choice_is_not_the_choice() {
    for said in [
        "No. Do NOT override blocking sensors; fix the findings.",
        "Override blocking sensors? No.",
        "I would never say \"Override blocking sensors\"",
    ] {
        let project = blocking_example();
        assert_eq!(decision(&project).status, 0);
        human_types(&project, said);
        let refused = answer(&project, CHOICE);
        assert_eq!(refused.status, 1, "{said}: {}", refused.stderr);
        assert!(
            refused
                .stderr
                .contains("which is not the choice \"Override blocking sensors\" itself"),
            "{said}: {}",
            refused.stderr
        );
        assert_eq!(start_with_override(&project).status, 1, "{said}");
    }
    // The exact choice, in quotes, another case and with a full stop, still opens it.
    let project = blocking_example();
    assert_eq!(decision(&project).status, 0);
    human_types(&project, "  \"override blocking sensors.\" ");
    let answered = answer(&project, CHOICE);
    assert_eq!(answered.status, 0, "{}", answered.stderr);
    let opened = start_with_override(&project);
    assert_eq!(opened.status, 0, "{}", opened.stderr);
}

/// Claude Code writes the person's pick in its question widget to the transcript as the result
/// of the assistant's `AskUserQuestion` call, then runs `PostToolUse` for it.
fn human_picks(project: &TestProject, picked: &str) -> Run {
    let payload = pick_payload(project, picked);
    human_turn(project, &payload)
}

/// Writes the widget's question and the person's pick to the session's transcript, and returns
/// the `PostToolUse` payload Claude Code gives its hooks for it.
fn pick_payload(project: &TestProject, picked: &str) -> String {
    let transcript = transcript_path(project);
    let question = "The blocking sensors failed. What now?";
    let asked = serde_json::json!({
        "type": "assistant",
        "message": {"role": "assistant", "content": [{
            "type": "tool_use", "id": "toolu_01", "name": "AskUserQuestion",
            "input": {"questions": [{"question": question, "header": "Gate",
                "options": [{"label": "Fix findings"}, {"label": CHOICE}], "multiSelect": false}]},
        }]},
    });
    let result =
        serde_json::json!({"questions": [{"question": question}], "answers": {question: picked}});
    let answered = serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": "toolu_01",
            "content": format!("User has answered your questions: \"{question}\"=\"{picked}\"."),
        }]},
        "toolUseResult": result,
    });
    append_transcript_lines(&transcript, &[asked, answered]);
    let payload = serde_json::json!({
        "session_id": "session-1",
        "transcript_path": transcript.as_str(),
        "cwd": project.root.as_str(),
        "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion",
        "tool_use_id": "toolu_01",
        "tool_input": {"questions": [{"question": question}]},
        "tool_response": result,
    });
    payload.to_string()
}

#[test]
fn a_pick_in_the_question_widget_is_a_human_turn_and_the_receipt_for_its_option() {
    let project = blocking_example();
    assert_eq!(decision(&project).status, 0);
    let picked = human_picks(&project, CHOICE);
    assert_eq!(picked.status, 0, "{}", picked.stderr);
    let blocks = ledger_blocks(&project, &example_record(&project));
    let turn = blocks
        .iter()
        .find(|block| block.event() == "HUMAN_TURN")
        .expect("a HUMAN_TURN row");
    assert_eq!(turn.field("Prompt Source"), Some("AskUserQuestion"));
    assert!(
        project
            .path(&format!("{}/.aidlc-human-turn", example_record(&project)))
            .is_file()
    );
    let answered = answer(&project, CHOICE);
    assert_eq!(answered.status, 0, "{}", answered.stderr);
    let opened = start_with_override(&project);
    assert_eq!(opened.status, 0, "{}", opened.stderr);

    // The other option picked is no receipt for the override.
    let project = blocking_example();
    assert_eq!(decision(&project).status, 0);
    assert_eq!(human_picks(&project, "Fix findings").status, 0);
    let refused = answer(&project, CHOICE);
    assert_eq!(refused.status, 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("the human picked in the question widget \"Fix findings\""),
        "{}",
        refused.stderr
    );

    // Another tool's result is no pick.
    let project = blocking_example();
    let payload = serde_json::json!({
        "session_id": "session-1",
        "transcript_path": transcript_path(&project).as_str(),
        "cwd": project.root.as_str(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_response": {"answers": {"q": CHOICE}},
    });
    let refused = human_turn(&project, &payload.to_string());
    assert_eq!(refused.status, 2, "{}", refused.stderr);
}

/// On both reference installs, `aidlc hook install` takes over the reference's `PostToolUse`
/// `AskUserQuestion` entry, and a pick in the widget is still a human turn: the engine's hook
/// records it (row and marker), the reference's own `aidlc-log.ts answer` (Bun) accepts the
/// answer after it, and doctor says the widget's answers are recorded.
#[test]
fn after_hook_install_a_widget_pick_is_a_human_turn_the_reference_accepts() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let program = env!("CARGO_BIN_EXE_aidlc");
    for version in crate::support::REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        project.write(
            &format!("{RECORD}/aidlc-state.md"),
            "# State\n\n- **Current Stage**: user-stories\n",
        );
        let installed = project.run(&["hook", "install", "--program", program]);
        assert_eq!(installed.status, 0, "{version}: {}", installed.stderr);
        let settings: serde_json::Value =
            serde_json::from_str(&project.read(".claude/settings.json")).unwrap();
        let widget_commands: Vec<&str> = settings["hooks"]["PostToolUse"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|group| group["matcher"] == "AskUserQuestion")
            .flat_map(|group| group["hooks"].as_array().unwrap())
            .map(|hook| hook["command"].as_str().unwrap())
            .collect();
        let engine_hook = format!("{program} engine hook record-human-turn");
        assert_eq!(widget_commands, [engine_hook.as_str()], "{version}");

        let bun_log = |args: &[&str]| {
            std::process::Command::new(bun.as_str())
                .arg(".claude/tools/aidlc-log.ts")
                .args(args)
                .current_dir(&project.root)
                .env("CLAUDE_PROJECT_DIR", project.root.as_str())
                .env("HOME", project.home())
                .env_remove("AIDLC_SKIP_HUMAN_PRESENCE_GUARD")
                .stdin(Stdio::null())
                .output()
                .expect("run bun")
        };
        let decided = bun_log(&[
            "decision",
            "--stage",
            "user-stories",
            "--decision",
            DECISION,
            "--options",
            OPTIONS,
        ]);
        assert!(
            decided.status.success(),
            "{version}: {}",
            String::from_utf8_lossy(&decided.stderr)
        );
        // Without the pick, the reference refuses the answer: no human acted.
        let early = bun_log(&["answer", "--stage", "user-stories", "--details", CHOICE]);
        assert!(!early.status.success(), "{version}");

        // Claude Code runs the registered command with the widget's PostToolUse payload.
        let picked = human_picks_through(&project, CHOICE, &engine_hook);
        assert_eq!(picked.status.code(), Some(0), "{version}: {picked:?}");
        assert!(
            project
                .path(&format!("{RECORD}/.aidlc-human-turn"))
                .is_file(),
            "{version}"
        );
        let answered = bun_log(&["answer", "--stage", "user-stories", "--details", CHOICE]);
        assert!(
            answered.status.success(),
            "{version}: {}",
            String::from_utf8_lossy(&answered.stderr)
        );
        let doctor = project.run(&["doctor"]);
        assert!(
            doctor
                .stdout
                .contains("answers picked in the question widget are human turns too"),
            "{version}: {}",
            doctor.stdout
        );
    }
}

/// [`human_picks`], with the hook run as Claude Code runs a registered command: `sh -c` in the
/// project, the payload on stdin.
fn human_picks_through(project: &TestProject, picked: &str, command: &str) -> std::process::Output {
    use std::io::Write as _;
    let payload = pick_payload(project, picked);
    let mut child = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(&project.root)
        .env("HOME", project.home())
        .env("CLAUDE_PROJECT_DIR", project.root.as_str())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
