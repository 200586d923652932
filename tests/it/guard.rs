//! The pre-tool guard (`aidlc engine hook guard`, docs/decisions.md D34). It
//! refuses an agent's tool call that writes into the audit, the hooks-health folder, the
//! engine's record folder or the transcript, or that runs the human's commands, with Claude
//! Code's deny decision (other harnesses: exit 2 and the reason); it allows anything else with
//! no output, refuses a payload it cannot read, and `hook install` registers it everywhere.

use serde_json::{Value, json};

use crate::support::{Run, TestProject};

const RECORD: &str = "aidlc/spaces/default/intents/261201-demo";

fn project() -> TestProject {
    TestProject::one_stage()
}

fn guard(project: &TestProject, args: &[&str], payload: &str) -> Run {
    let mut words = vec!["engine", "hook", "guard"];
    words.extend_from_slice(args);
    project.run_watched(&words, &[], Some(payload))
}

/// Claude Code's `PreToolUse` payload for `tool` with `input`.
fn claude_call(project: &TestProject, tool: &str, input: &Value) -> String {
    json!({
        "session_id": "s1",
        "transcript_path": project.path(".home/.claude/projects/demo/s1.jsonl").as_str(),
        "cwd": project.root.as_str(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
    })
    .to_string()
}

#[test]
fn the_guard_denies_each_listed_tool_call_with_claude_code_s_deny_decision() {
    let project = project();
    let audit = project.path(&format!("{RECORD}/audit/host-0123456789ab.md"));
    let health = project.path(&format!("{RECORD}/.aidlc-hooks-health/run-sensors.drops"));
    let transcript = project.path(".home/.claude/projects/demo/s1.jsonl");
    let calls = [
        (
            "Write",
            json!({"file_path": audit.as_str(), "content": "## Human Turn"}),
        ),
        (
            "Edit",
            json!({"file_path": audit.as_str(), "old_string": "a", "new_string": "b"}),
        ),
        (
            "Write",
            json!({"file_path": health.as_str(), "content": ""}),
        ),
        (
            "Edit",
            json!({"file_path": transcript.as_str(), "old_string": "a", "new_string": "b"}),
        ),
        (
            "Bash",
            json!({"command": "echo '{}' | aidlc engine hook record-human-turn"}),
        ),
        (
            "Bash",
            json!({"command": "aidlc engine log answer --stage s --details \"Override blocking sensors\""}),
        ),
        (
            "Bash",
            json!({"command": "aidlc engine gate start s --override-blocking-sensors --user-input \"Override blocking sensors\""}),
        ),
        (
            "Bash",
            json!({"command": format!("printf '## Human Turn' >> {audit}")}),
        ),
    ];
    for (tool, input) in calls {
        let run = guard(&project, &[], &claude_call(&project, tool, &input));
        assert_eq!(run.status, 0, "{tool} {input}: {}", run.stderr);
        let decision: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
        let output = &decision["hookSpecificOutput"];
        assert_eq!(output["hookEventName"], "PreToolUse", "{tool} {input}");
        assert_eq!(output["permissionDecision"], "deny", "{tool} {input}");
        assert!(
            output["permissionDecisionReason"]
                .as_str()
                .is_some_and(|reason| reason.starts_with("aidlc: ")),
            "{decision}"
        );
    }
}

#[test]
fn the_guard_allows_unrelated_calls_with_no_output() {
    let project = project();
    let calls = [
        (
            "Write",
            json!({"file_path": project.path(&format!("{RECORD}/requirements.md")).as_str(), "content": "# R"}),
        ),
        (
            "Read",
            json!({"file_path": project.path(&format!("{RECORD}/audit/host-0123456789ab.md")).as_str()}),
        ),
        ("Bash", json!({"command": "cargo test && npm audit"})),
        (
            "Bash",
            json!({"command": "aidlc engine log decision --stage s --decision d --options a,b"}),
        ),
        (
            "Grep",
            json!({"pattern": "HUMAN_TURN", "path": project.path(RECORD).as_str()}),
        ),
    ];
    for (tool, input) in calls {
        let run = guard(&project, &[], &claude_call(&project, tool, &input));
        assert_eq!(
            (run.status, run.stdout.as_str(), run.stderr.as_str()),
            (0, "", ""),
            "{tool} {input}"
        );
    }
}

#[test]
fn the_guard_denies_a_garbled_payload_and_other_harnesses_are_told_with_exit_2() {
    let project = project();
    for (payload, problem) in [
        ("{\"tool_input\": ", "the pre-tool payload is not JSON"),
        ("[]", "the pre-tool payload is not a JSON object"),
        (
            "{\"hook_event_name\": \"PreToolUse\"}",
            "the pre-tool payload names no tool (\"tool_name\")",
        ),
    ] {
        let run = guard(&project, &[], payload);
        assert_eq!(run.status, 2, "{payload}");
        assert_eq!(run.stdout, "", "{payload}");
        assert!(
            run.stderr.contains(problem) && run.stderr.contains("the tool call is refused"),
            "{payload}: {}",
            run.stderr
        );
    }
    let patch = json!({
        "session_id": "c1",
        "cwd": project.root.as_str(),
        "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": format!("*** Begin Patch\n*** Add File: {RECORD}/audit/x.md\n+## Human Turn\n*** End Patch\n")},
    });
    let run = guard(&project, &["--harness", "codex"], &patch.to_string());
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("an audit folder"), "{}", run.stderr);
    let kiro = json!({
        "hook_event_name": "preToolUse",
        "cwd": project.root.as_str(),
        "tool_name": "execute_bash",
        "tool_input": {"command": "aidlc engine hook record-human-turn --harness kiro"},
    });
    let run = guard(&project, &["--harness", "kiro"], &kiro.to_string());
    assert_eq!(run.status, 2);
    assert!(
        run.stderr
            .contains("`record-human-turn` is the human's to run"),
        "{}",
        run.stderr
    );
}

/// The file registering `harness`'s guard, and the text that names it there.
fn guard_registration(harness: &str) -> (&'static str, &'static str) {
    match harness {
        "claude" => (
            ".claude/settings.json",
            "\"command\": \"aidlc engine hook guard\"",
        ),
        "codex" => (
            ".codex/hooks.json",
            "\"command\": \"aidlc engine hook guard --harness codex\"",
        ),
        "kiro" => (
            ".kiro/agents/aidlc.json",
            "\"command\": \"aidlc engine hook guard --harness kiro\"",
        ),
        "kiro-ide" => (
            ".kiro/hooks/aidlc-engine-guard.json",
            "\"command\": \"aidlc engine hook guard --harness kiro-ide\"",
        ),
        "opencode" => (
            ".opencode/plugin/aidlc-engine.ts",
            "const GUARD = \"aidlc engine hook guard --harness opencode\";",
        ),
        other => panic!("no harness {other}"),
    }
}

#[test]
fn hook_install_registers_the_guard_for_every_harness_and_doctor_shows_it() {
    for harness in ["claude", "codex", "kiro", "kiro-ide", "opencode"] {
        let project = TestProject::empty();
        let dir = match harness {
            "claude" => ".claude",
            "codex" => ".codex",
            "kiro" | "kiro-ide" => ".kiro",
            _ => ".aidlc",
        };
        project.write(&format!("{dir}/sensors/.keep"), "");
        project.write(
            &format!("{dir}/aidlc-common/stages/inception/first-stage.md"),
            &crate::support::stage("first-stage", "inception", "[]", "[]", ""),
        );
        if harness == "kiro" {
            // Kiro CLI's hooks live in the conductor agent's configuration, which Kiro creates.
            project.write(".kiro/agents/aidlc.json", "{\n  \"name\": \"aidlc\"\n}\n");
        }
        // A user's own pre-tool hook stays.
        if harness == "claude" {
            project.write(
                ".claude/settings.json",
                "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"./my-guard.sh\"\n          }\n        ]\n      }\n    ]\n  }\n}\n",
            );
        }
        let installed = project.run(&["hook", "install", "--harness", harness]);
        assert_eq!(installed.status, 0, "{harness}: {}", installed.stderr);
        let (file, registered) = guard_registration(harness);
        let text = project.read(file);
        assert_eq!(text.matches(registered).count(), 1, "{harness}: {text}");
        let again = project.run(&["hook", "install", "--harness", harness]);
        assert_eq!(again.status, 0, "{harness}");
        assert_eq!(
            project.read(file),
            text,
            "{harness}: a second install changes nothing"
        );
        let doctor = project.run(&["doctor", "--harness", harness]);
        // Its row names the registered command (the test's PATH has no `aidlc` to run).
        assert!(
            doctor
                .stdout
                .lines()
                .any(|line| line.contains("Pre-tool guard: ") && line.contains("engine hook guard")),
            "{harness}: {}",
            doctor.stdout
        );
        let removed = project.run(&["hook", "install", "--harness", harness, "--uninstall"]);
        assert_eq!(removed.status, 0, "{harness}: {}", removed.stderr);
        if project.exists(file) {
            assert!(
                !project.read(file).contains("engine hook guard"),
                "{harness}"
            );
        }
        if harness == "claude" {
            assert!(
                project.read(file).contains("./my-guard.sh"),
                "the user's hook is kept"
            );
        }
        let doctor = project.run(&["doctor", "--harness", harness]);
        assert!(
            doctor.stdout.contains("Pre-tool guard: not registered"),
            "{harness}: {}",
            doctor.stdout
        );
    }
}

/// opencode's plugin (run under Bun) throws the guard's reason, which refuses the call, and
/// lets an unrelated call run.
#[test]
fn the_opencode_plugin_throws_the_guard_s_refusal() {
    let Some(bun) = crate::support::node_tool("bun") else {
        return;
    };
    let project = TestProject::empty();
    project.write(".aidlc/sensors/.keep", "");
    project.write(
        ".aidlc/aidlc-common/stages/inception/first-stage.md",
        &crate::support::stage("first-stage", "inception", "[]", "[]", ""),
    );
    let installed = project.run(&[
        "hook",
        "install",
        "--harness",
        "opencode",
        "--program",
        env!("CARGO_BIN_EXE_aidlc"),
    ]);
    assert_eq!(installed.status, 0, "{}", installed.stderr);
    let call = |file_path: &str| {
        let driver = project.path("drive-guard.ts");
        std::fs::write(
            &driver,
            format!(
                "const plugin = (await import({plugin:?})).default;\n\
                 const client = {{ session: {{ get: async () => ({{ data: {{}} }}) }} }};\n\
                 const hooks = await plugin({{ client, directory: {root:?} }});\n\
                 await hooks[\"tool.execute.before\"]({{ tool: \"write\", sessionID: \"main\", callID: \"c1\" }}, {{ args: {{ filePath: {file_path:?}, content: \"x\" }} }});\n",
                plugin = project.path(".opencode/plugin/aidlc-engine.ts").as_str(),
                root = project.root.as_str(),
            ),
        )
        .unwrap();
        std::process::Command::new(bun.as_str())
            .arg(&driver)
            .current_dir(&project.root)
            .output()
            .unwrap()
    };
    let refused = call(&format!("{RECORD}/audit/x.md"));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("an audit folder; agents do not write there"),
        "{stderr}"
    );
    let allowed = call(&format!("{RECORD}/requirements.md"));
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
}

/// The verdict on a Claude Code call: `Some(reason)` when refused, `None` when allowed.
fn refusal_of(project: &TestProject, tool: &str, input: &Value) -> Option<String> {
    let run = guard(project, &[], &claude_call(project, tool, input));
    assert_eq!(run.status, 0, "{tool} {input}: {}", run.stderr);
    if run.stdout.is_empty() {
        return None;
    }
    let decision: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    let output = &decision["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "deny", "{decision}");
    Some(
        output["permissionDecisionReason"]
            .as_str()
            .expect("a reason")
            .to_owned(),
    )
}

#[test]
fn the_guard_reads_commands_as_a_shell_does_and_paths_as_the_file_system_has_them() {
    let project = project();
    project.write(&format!("{RECORD}/audit/host-0123456789ab.md"), "# Audit\n");
    project.write(&format!("{RECORD}/notes/n.md"), "");
    project.write(&format!("{RECORD}/requirements.md"), "# R\n");
    // A second name for the record, and a folder inside it whose `..` is the record.
    std::os::unix::fs::symlink(project.path(RECORD), project.path("rec")).unwrap();
    std::os::unix::fs::symlink(
        project.path(&format!("{RECORD}/notes")),
        project.path("deep"),
    )
    .unwrap();
    let bash = |command: &str| json!({ "command": command });
    let write = |path: &str| json!({ "file_path": path, "content": "x" });
    let refused = [
        (
            "Bash",
            bash("aidlc engine log --color never answer --stage s --details yes"),
            "is the human's to run",
        ),
        (
            "Bash",
            bash("aidlc engine hook \"record-human\"-turn"),
            "is the human's to run",
        ),
        (
            "Bash",
            bash("aidlc engine gate start s --override-blocking-sensor\"s\""),
            "is the human's to run",
        ),
        (
            "Bash",
            bash("sh -c 'A=1 npx aidlc engine hook --harness claude record-human-turn' </dev/null"),
            "is the human's to run",
        ),
        ("Write", write("rec/audit/x.md"), "an audit folder"),
        (
            "Write",
            write(project.path("rec/audit/x.md").as_str()),
            "an audit folder",
        ),
        (
            "Edit",
            json!({"file_path": project.path(&format!("src/../{RECORD}/audit/x.md")).as_str(), "old_string": "a", "new_string": "b"}),
            "an audit folder",
        ),
        ("Write", write("deep/../audit/x.md"), "an audit folder"),
        (
            "Bash",
            bash(&format!("rm -rf {RECORD}/aud*")),
            "an audit folder",
        ),
        (
            "Bash",
            bash("cd rec && rm audit/host-0123456789ab.md"),
            "an audit folder",
        ),
        ("Bash", bash("rm -rf rec/"), "an audit folder"),
        (
            "Bash",
            bash(&format!("cd {RECORD} && git clean -fdx")),
            "an audit folder",
        ),
        (
            "Bash",
            bash("find -name '*.md' -delete"),
            // The first protected place met: the audit, or the transcript (under `.home`).
            "; agents do not write there",
        ),
        (
            "Write",
            write(&format!("{RECORD}/.aidlc-engine/prompts/p.txt")),
            "the engine's record folder",
        ),
    ];
    for (tool, input, said) in refused {
        let reason =
            refusal_of(&project, tool, &input).unwrap_or_else(|| panic!("allowed: {tool} {input}"));
        assert!(reason.contains(said), "{tool} {input}: {reason}");
        // Each refusal says what to do instead, and cites nothing the user's repository lacks.
        let instead = if said == "is the human's to run" {
            "Ask the human to type their choice in the session"
        } else {
            "Reading it is fine"
        };
        assert!(reason.contains(instead), "{reason}");
        assert!(
            !reason.contains("decisions.md") && !reason.contains("D34"),
            "{reason}"
        );
    }
    let allowed = [
        (
            "Write",
            write(&format!(
                "{RECORD}/.aidlc-engine/learnings/first-stage-selections.json"
            )),
        ),
        ("Bash", bash("cat rec/audit/host-0123456789ab.md | head -3")),
        ("Write", write("rec/requirements.md")),
        ("Bash", bash("cd deep && ls ../audit && rm n.md")),
        ("Bash", bash("find .claude -name '*.tmp' -delete")),
        (
            "Bash",
            bash("git commit -m 'record human turn notes' && echo override blocking sensors"),
        ),
    ];
    for (tool, input) in allowed {
        assert_eq!(refusal_of(&project, tool, &input), None, "{tool} {input}");
    }
}
