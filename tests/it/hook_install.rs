//! Issue 14, item 4: `aidlc hook install [--dry-run] [--uninstall] [--program P]` on no settings
//! file, an empty one, one with other hooks, the 2.6.54 reference install's, and a malformed one.

use serde_json::Value;

use crate::support::{Run, TestProject};

const SETTINGS: &str = ".claude/settings.json";
const WRITE_HOOK: &str = "aidlc engine hook run-sensors";
const TURN_HOOK: &str = "aidlc engine hook record-human-turn";

/// A harness folder with one stage definition: without one it is not an AI-DLC project.
fn project() -> TestProject {
    let project = TestProject::empty();
    project.write(".claude/sensors/.keep", "");
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &crate::support::stage("first-stage", "inception", "[]", "[]", ""),
    );
    project
}

fn install(project: &TestProject, extra: &[&str]) -> Run {
    let mut args = vec!["hook", "install"];
    args.extend(extra);
    project.run(&args)
}

fn settings(project: &TestProject) -> Value {
    serde_json::from_str(&project.read(SETTINGS)).expect("settings.json is JSON")
}

/// Every hook command registered under `event`, in order.
fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
        .filter_map(|hook| hook["command"].as_str().map(str::to_owned))
        .collect()
}

/// Install, then check that a second run changes no byte.
fn install_twice(project: &TestProject) -> String {
    let first = install(project, &[]);
    assert_eq!(first.status, 0, "{}", first.stderr);
    assert!(
        first.stderr.contains("wrote .claude/settings.json"),
        "{}",
        first.stderr
    );
    let written = project.read(SETTINGS);
    let second = install(project, &[]);
    assert_eq!(second.status, 0, "{}", second.stderr);
    assert!(
        second.stderr.contains("needs no change"),
        "{}",
        second.stderr
    );
    assert_eq!(
        project.read(SETTINGS),
        written,
        "a second run changes no byte"
    );
    written
}

#[test]
fn with_no_file_both_hooks_are_registered() {
    let project = project();
    install_twice(&project);
    let settings = settings(&project);
    assert_eq!(commands(&settings, "PostToolUse"), [WRITE_HOOK]);
    assert_eq!(settings["hooks"]["PostToolUse"][0]["matcher"], "Write|Edit");
    assert_eq!(commands(&settings, "UserPromptSubmit"), [TURN_HOOK]);
    assert!(project.read(SETTINGS).ends_with("}\n"));
}

#[test]
fn an_empty_file_is_an_empty_object() {
    let project = project();
    project.write(SETTINGS, "");
    install_twice(&project);
    assert_eq!(commands(&settings(&project), "PostToolUse"), [WRITE_HOOK]);
}

#[test]
fn other_keys_and_hooks_are_kept_in_order_with_the_file_layout() {
    let project = project();
    let original = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"./lint.sh\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"env\": {\n        \"Z\": \"1\",\n        \"A\": \"2\"\n    }\n}";
    project.write(SETTINGS, original);
    let written = install_twice(&project);
    assert!(
        written.starts_with("{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\n                \"matcher\": \"Bash\","),
        "four-space indentation and key order kept: {written}"
    );
    assert!(
        written.ends_with("\"A\": \"2\"\n    }\n}"),
        "no final newline added: {written}"
    );
    let settings = settings(&project);
    assert_eq!(
        commands(&settings, "PostToolUse"),
        ["./lint.sh", WRITE_HOOK]
    );
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "hooks", "env"]);
    let env_keys: Vec<&String> = settings["env"].as_object().unwrap().keys().collect();
    assert_eq!(env_keys, ["Z", "A"]);

    let removed = install(&project, &["--uninstall"]);
    assert_eq!(removed.status, 0, "{}", removed.stderr);
    let after: Value = serde_json::from_str(&project.read(SETTINGS)).unwrap();
    let before: Value = serde_json::from_str(original).unwrap();
    assert_eq!(after, before, "uninstall leaves the user's hooks");
    assert_eq!(project.read(SETTINGS), original, "and the bytes");
}

#[test]
fn the_reference_entries_are_replaced_in_place() {
    let project = TestProject::reference_install("2.6.54");
    let original = project.read(SETTINGS);
    let written = install_twice(&project);
    let changed: Vec<(&str, &str)> = original
        .lines()
        .zip(written.lines())
        .filter(|(before, after)| before != after)
        .collect();
    assert_eq!(original.lines().count(), written.lines().count());
    assert_eq!(
        changed,
        [
            (
                "            \"command\": \"bun \\\"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-record-human-turn.ts\\\"\"",
                "            \"command\": \"aidlc engine hook record-human-turn\""
            ),
            (
                "            \"command\": \"bun \\\"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-run-sensors.ts\\\"\"",
                "            \"command\": \"aidlc engine hook run-sensors\""
            ),
            (
                "            \"command\": \"bun \\\"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-record-human-turn.ts\\\"\"",
                "            \"command\": \"aidlc engine hook record-human-turn\""
            ),
        ],
        "only the three reference hook commands change"
    );
    let settings = settings(&project);
    // The write-audit hook beside it in the same Write|Edit group is kept.
    assert!(
        commands(&settings, "PostToolUse")
            .iter()
            .any(|command| command.contains("aidlc-write-audit-log.ts"))
    );
}

#[test]
fn a_malformed_file_is_refused_with_its_line_and_column_and_kept() {
    let project = project();
    let broken = "{\n  \"hooks\": {\n    \"PostToolUse\": [,]\n  }\n}\n";
    project.write(SETTINGS, broken);
    let run = install(&project, &[]);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr.contains(
            ".claude/settings.json:3:21: not valid JSON: expected value; the file was not changed"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(project.read(SETTINGS), broken);
    project.write(SETTINGS, "{\"hooks\": []}");
    let wrong_shape = install(&project, &[]);
    assert_eq!(wrong_shape.status, 2);
    assert!(
        wrong_shape.stderr.contains("\"hooks\" is not an object"),
        "{}",
        wrong_shape.stderr
    );
    assert_eq!(project.read(SETTINGS), "{\"hooks\": []}");
}

#[test]
fn a_dry_run_prints_the_file_and_writes_nothing() {
    let project = project();
    let run = install(&project, &["--dry-run", "--program", "npx aidlc"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(!project.exists(SETTINGS));
    let printed: Value = serde_json::from_str(&run.stdout).expect("the new file on stdout");
    assert_eq!(
        commands(&printed, "PostToolUse"),
        ["npx aidlc engine hook run-sensors"]
    );
    assert!(
        run.stderr
            .contains("PostToolUse: added npx aidlc engine hook run-sensors"),
        "{}",
        run.stderr
    );
}

#[test]
fn init_names_hook_install_in_its_next_line() {
    let project = TestProject::empty();
    let run = project.run(&["init", "demo"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "next: aidlc compile --project-dir demo, then aidlc hook install --project-dir demo"
        ),
        "{}",
        run.stderr
    );
}
