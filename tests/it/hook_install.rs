//! `aidlc hook install [--dry-run] [--uninstall] [--program P]` on no settings file, an empty
//! one, one with other hooks, the 2.6.54 reference install's, and a malformed one; and the
//! registration files of Cursor, GitHub Copilot and Kiro CLI 3.

use serde_json::Value;

use crate::support::{Run, TestProject, fifo_at, oversized, said};

const SETTINGS: &str = ".claude/settings.json";
const WRITE_HOOK: &str = "aidlc engine hook run-sensors";
const TURN_HOOK: &str = "aidlc engine hook record-human-turn";

fn project() -> TestProject {
    TestProject::one_stage()
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
/// Every command of `event`, but the write hook in the shell tool's group (`"matcher":
/// "Bash"`, checked by [`the_shell_tool_gets_the_write_hook_in_a_group_of_its_own`]).
fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| {
            // The shell tool's group and the reference `Write|Edit` group's complement are the
            // write hook's groups of their own.
            let shell = group["matcher"] == "Bash" || group["matcher"] == "MultiEdit|NotebookEdit";
            group["hooks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|hook| hook["command"].as_str().map(str::to_owned))
                .filter(move |command| !(shell && command.contains("run-sensors")))
        })
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
    assert_eq!(commands(&settings, "PostToolUse"), [WRITE_HOOK, TURN_HOOK]);
    assert_eq!(
        settings["hooks"]["PostToolUse"][0]["matcher"],
        "Write|Edit|MultiEdit|NotebookEdit"
    );
    // The shell tool's calls fire the write hook on what they changed.
    assert_eq!(settings["hooks"]["PostToolUse"][1]["matcher"], "Bash");
    // A pick in the question widget is a human turn too.
    assert_eq!(
        settings["hooks"]["PostToolUse"][2]["matcher"],
        "AskUserQuestion"
    );
    assert_eq!(commands(&settings, "UserPromptSubmit"), [TURN_HOOK]);
    assert!(project.read(SETTINGS).ends_with("}\n"));
}

#[test]
fn the_shell_tool_gets_the_write_hook_in_a_group_of_its_own() {
    let project = project();
    project.write(
        SETTINGS,
        "{\"hooks\": {\"PostToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}]}}\n",
    );
    install_twice(&project);
    let shell_groups: Vec<Value> = settings(&project)["hooks"]["PostToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|group| group["matcher"] == "Bash")
        .cloned()
        .collect();
    let commands: Vec<&str> = shell_groups
        .iter()
        .flat_map(|group| group["hooks"].as_array().unwrap())
        .map(|hook| hook["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["./mine.sh", WRITE_HOOK]);
    // The guard, registered for every tool call, keeps the snapshot the shell entry reads.
    assert_eq!(
        commands_of_all(&settings(&project), "PreToolUse"),
        ["aidlc engine hook guard"]
    );
}

fn commands_of_all(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
        .filter_map(|hook| hook["command"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn an_empty_file_is_an_empty_object() {
    let project = project();
    project.write(SETTINGS, "");
    install_twice(&project);
    assert_eq!(
        commands(&settings(&project), "PostToolUse"),
        [WRITE_HOOK, TURN_HOOK]
    );
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
        ["./lint.sh", WRITE_HOOK, TURN_HOOK]
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
    let (removed, added) = crate::support::line_diff(&original, &written);
    let reference_turn = "            \"command\": \"bun \\\"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-record-human-turn.ts\\\"\"";
    let reference_write = "            \"command\": \"bun \\\"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-run-sensors.ts\\\"\"";
    let our_turn = "            \"command\": \"aidlc engine hook record-human-turn\"";
    let our_write = "            \"command\": \"aidlc engine hook run-sensors\"";
    assert_eq!(
        removed,
        [reference_turn, reference_write, reference_turn],
        "only the three reference hook commands go"
    );
    assert_eq!(
        added,
        [
            // The guard's group, after the reference's own PreToolUse groups (kept).
            "      },",
            "      {",
            "        \"hooks\": [",
            "          {",
            "            \"type\": \"command\",",
            "            \"command\": \"aidlc engine hook guard\"",
            "          }",
            "        ]",
            our_turn,
            our_write,
            our_turn,
            // The shell tool's group, after the reference's own Bash group (kept).
            "      },",
            "      {",
            "        \"matcher\": \"Bash\",",
            "        \"hooks\": [",
            "          {",
            "            \"type\": \"command\",",
            "            \"command\": \"aidlc engine hook run-sensors\"",
            "          }",
            "        ]",
            // The file tools the reference's `Write|Edit` group leaves out, in a group of their
            // own (the reference's group keeps its matcher).
            "      },",
            "      {",
            "        \"matcher\": \"MultiEdit|NotebookEdit\",",
            "        \"hooks\": [",
            "          {",
            "            \"type\": \"command\",",
            "            \"command\": \"aidlc engine hook run-sensors\"",
            "          }",
            "        ]",
        ],
        "the three become aidlc's, and the guard, the shell tool's write hook and the write hook for MultiEdit and NotebookEdit are added"
    );
    let all_post_tool_use: Vec<String> = settings(&project)["hooks"]["PostToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|group| group["matcher"] == "Bash")
        .flat_map(|group| group["hooks"].as_array().unwrap().clone())
        .map(|hook| hook["command"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        all_post_tool_use,
        [
            "bun \"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-rebuild-stage-graph.ts\"",
            WRITE_HOOK
        ],
        "the reference's own Bash hook is kept, beside aidlc's"
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
    assert!(!project.exists(".gitignore"));
    // Two files would change: each is printed under a `==> path <==` line.
    let (settings_text, gitignore_text) = run
        .stdout
        .strip_prefix("==> .claude/settings.json <==\n")
        .and_then(|rest| rest.split_once("\n==> .gitignore <==\n"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let printed: Value = serde_json::from_str(settings_text).expect("the new file on stdout");
    assert_eq!(
        commands(&printed, "PostToolUse"),
        [
            "npx aidlc engine hook run-sensors",
            "npx aidlc engine hook record-human-turn"
        ]
    );
    assert!(
        gitignore_text.contains("aidlc/.aidlc-clone-id"),
        "{gitignore_text}"
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

/// A user's command that merely runs the reference's
/// hook among other things is the user's: kept whole, never replaced, and named in a note.
#[test]
fn a_command_that_merely_names_a_reference_hook_is_kept_whole() {
    let project = project();
    let chained = "node .claude/hooks/aidlc-run-sensors.ts && my-important-hook";
    let original = format!(
        "{{\"hooks\": {{\"PostToolUse\": [{{\"matcher\": \"Write|Edit\", \"hooks\": [{{\"type\": \"command\", \"command\": \"{chained}\"}}]}}]}}}}\n"
    );
    project.write(SETTINGS, &original);
    let run = install(&project, &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        commands(&settings(&project), "PostToolUse"),
        [chained, WRITE_HOOK, TURN_HOOK]
    );
    assert!(
        run.stderr.contains(&format!("kept `{chained}`")),
        "{}",
        run.stderr
    );
    assert_eq!(install(&project, &["--uninstall"]).status, 0);
    assert_eq!(project.read(SETTINGS), original);
}

/// A key written twice is refused (a reader keeps one of the two, and which
/// one differs between tools), naming both lines; the file is kept.
#[test]
fn a_second_hooks_key_is_refused_and_the_file_kept() {
    let project = project();
    let twice = "{\n  \"hooks\": {\"Stop\": []},\n  \"model\": \"x\",\n  \"hooks\": {}\n}\n";
    project.write(SETTINGS, twice);
    let run = install(&project, &[]);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr.contains(
            ".claude/settings.json:4: the key \"hooks\" is written twice in one object (first on line 2)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(project.read(SETTINGS), twice);
}

/// A byte-order mark stays, and an uninstall gives back the file's bytes.
#[test]
fn a_byte_order_mark_is_kept() {
    let project = project();
    let original = "\u{feff}{\n  \"model\": \"opus\"\n}\n";
    project.write(SETTINGS, original);
    install_twice(&project);
    assert!(project.read(SETTINGS).starts_with('\u{feff}'));
    assert_eq!(install(&project, &["--uninstall"]).status, 0);
    assert_eq!(project.read(SETTINGS), original);
}

/// An event never ends with two write hooks: a second engine command, a
/// reference command beside the engine's, and the engine's under another program all become
/// one entry, the first, in place.
#[test]
fn one_event_never_ends_with_two_run_sensors_entries() {
    let group = |commands: &[&str]| {
        let hooks: Vec<String> = commands
            .iter()
            .map(|command| {
                format!(
                    "{{\"type\": \"command\", \"command\": {}}}",
                    Value::from(*command)
                )
            })
            .collect();
        format!(
            "{{\"matcher\": \"Write|Edit\", \"hooks\": [{}]}}",
            hooks.join(", ")
        )
    };
    let reference = "bun \"$CLAUDE_PROJECT_DIR/.claude/hooks/aidlc-run-sensors.ts\"";
    for existing in [
        vec![group(&[WRITE_HOOK]), group(&[WRITE_HOOK])],
        vec![group(&["npx aidlc engine hook run-sensors", reference])],
        vec![group(&[reference]), group(&["./lint.sh", WRITE_HOOK])],
        vec![group(&["npx aidlc engine hook run-sensors"])],
    ] {
        let project = project();
        project.write(
            SETTINGS,
            &format!(
                "{{\"hooks\": {{\"PostToolUse\": [{}]}}}}\n",
                existing.join(", ")
            ),
        );
        let run = install(&project, &[]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let post = commands(&settings(&project), "PostToolUse");
        let writes: Vec<&String> = post
            .iter()
            .filter(|command| command.contains("run-sensors"))
            .collect();
        assert_eq!(writes, [WRITE_HOOK], "{existing:?} gave {post:?}");
        assert!(post.len() <= 3, "{post:?}");
        let again = install(&project, &[]);
        assert!(again.stderr.contains("needs no change"), "{}", again.stderr);
    }
}

/// A settings file marked read-only is its owner's "do not write": refused,
/// and kept (the permission bits decide, so even a user who could write it is told).
#[test]
fn a_read_only_settings_file_is_refused_and_kept() {
    use std::os::unix::fs::PermissionsExt as _;
    let project = project();
    let original = "{\"model\": \"opus\"}\n";
    project.write(SETTINGS, original);
    let path = project.path(SETTINGS);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let run = install(&project, &[]);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr
            .contains("settings.json is read-only; refusing to replace it"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read(SETTINGS), original);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o444
    );
}

/// Compact arrays and objects outside the entries the
/// install edits (`permissions`, `env`, another hook) keep their bytes; an uninstall gives back
/// the whole file.
#[test]
fn compact_json_outside_the_edited_entries_keeps_its_bytes() {
    let project = project();
    let permissions =
        "\"permissions\": {\"allow\": [\"Read\", \"Edit\", \"Bash(bun *)\"], \"deny\": []}";
    let env = "\"env\": {\"Z\": \"1\", \"A\": \"2\"}";
    let stop = "\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./done.sh\"}]}]";
    let original =
        format!("{{\n  {permissions},\n  {env},\n  \"hooks\": {{\n    {stop}\n  }}\n}}\n");
    project.write(SETTINGS, &original);
    let written = install_twice(&project);
    for kept in [permissions, env, stop] {
        assert!(written.contains(kept), "{kept} re-flowed: {written}");
    }
    assert_eq!(install(&project, &["--uninstall"]).status, 0);
    assert_eq!(project.read(SETTINGS), original);
}

/// `init` and `hook install` write the `.gitignore` entries the reference's
/// projections use, adding only what a user's `.gitignore` lacks; after a recorded run, git
/// ignores this clone's runtime files (its clone id, the record's `.aidlc-engine/` and
/// `.aidlc-hooks-health/`) and keeps the shared work (the state, the deliverable, the
/// per-clone audit shard).
#[test]
fn init_and_hook_install_write_the_gitignore_entries_so_git_keeps_only_the_shared_work() {
    let Some(git) = crate::support::system_tool("git") else {
        return;
    };
    let project = TestProject::empty();
    project.write(".gitignore", "node_modules\naidlc/.aidlc-clone-id\n");
    assert_eq!(project.run(&["init", ".", "--example"]).status, 0);
    let gitignore = project.read(".gitignore");
    assert!(
        gitignore.starts_with("node_modules\naidlc/.aidlc-clone-id\n\n# aidlc: "),
        "{gitignore}"
    );
    assert_eq!(gitignore.matches("aidlc/.aidlc-clone-id").count(), 1);
    assert!(
        gitignore.contains("aidlc/spaces/*/intents/*/.aidlc-*\n"),
        "{gitignore}"
    );
    project.write(".gitignore", "node_modules\n");
    let installed = install(&project, &[]);
    assert_eq!(installed.status, 0, "{}", installed.stderr);
    assert!(
        installed.stderr.contains("wrote .gitignore"),
        "{}",
        installed.stderr
    );
    assert!(
        project
            .read(".gitignore")
            .starts_with("node_modules\n\n# aidlc: ")
    );
    let again = install(&project, &[]);
    assert!(again.stderr.contains("needs no change"), "{}", again.stderr);

    // A recorded run: the example intent's gate check, and the write hook on a file.
    assert_eq!(project.compile().status, 0);
    let checked = project.run(&["gate", "check"]);
    assert!(
        matches!(checked.status, 0 | 1),
        "a recorded gate check: {}",
        checked.stderr
    );
    let intents = project.path("aidlc/spaces/default/intents");
    let record = intents
        .read_dir_utf8()
        .unwrap()
        .map(|entry| entry.unwrap())
        .find(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| format!("aidlc/spaces/default/intents/{}", entry.file_name()))
        .unwrap();
    let doc = "src/app.ts";
    project.write(doc, "export const app = 1;\n");
    let payload = serde_json::json!({"tool_input": {"file_path": project.path(doc)}}).to_string();
    let hooked = project.run_watched(&["engine", "hook", "run-sensors"], &[], Some(&payload));
    assert_eq!(hooked.status, 0, "{}", hooked.stderr);
    let git = |args: &[&str]| {
        std::process::Command::new(git.as_str())
            .args(args)
            .current_dir(&project.root)
            .output()
            .expect("run git")
    };
    assert!(git(&["init", "-q"]).status.success());
    let shards: Vec<String> = project
        .path(&format!("{record}/audit"))
        .read_dir_utf8()
        .unwrap()
        .map(|entry| format!("{record}/audit/{}", entry.unwrap().file_name()))
        .collect();
    assert_eq!(shards.len(), 1, "the hook wrote this clone's shard");
    for (path, ignored) in [
        ("aidlc/.aidlc-clone-id", true),
        (
            &format!("{record}/.aidlc-hooks-health/run-sensors.last") as &str,
            true,
        ),
        (&format!("{record}/.aidlc-engine"), true),
        (&format!("{record}/aidlc-state.md"), false),
        ("aidlc/spaces/default/intents/intents.json", false),
        ("aidlc/spaces/default/intents/active-intent", true),
        (doc, false),
        (&shards[0], false),
        (".claude/settings.json", false),
        (".claude/tools/data/stage-graph.json", false),
        (".claude/tools/data/.aidlc-compile-fingerprint", true),
    ] {
        assert!(project.exists(path), "{path} exists after the run");
        let checked = git(&["check-ignore", "-q", path]);
        assert_eq!(checked.status.success(), ignored, "{path}");
    }
}

/// On a reference install committed to git, `compile` and `hook install` leave nothing of the
/// engine's own for git: `git status` shows the two files `hook install` edits (the
/// settings and `.gitignore`, which a team commits) and no untracked record of the engine's.
#[test]
fn on_a_reference_install_git_status_shows_nothing_of_the_engine_s_own_after_compile_and_hook_install()
 {
    let Some(git) = crate::support::system_tool("git") else {
        return;
    };
    for version in crate::support::REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let git = |args: &[&str]| {
            let output = std::process::Command::new(git.as_str())
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(&project.root)
                .output()
                .expect("run git");
            assert!(output.status.success(), "git {args:?}: {output:?}");
            String::from_utf8(output.stdout).unwrap()
        };
        git(&["init", "-q"]);
        // The tests' home folder lives in the project; it is no file of the install's.
        std::fs::write(project.path(".git/info/exclude"), "/.home/\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "the reference install"]);
        let compiled = project.run(&["compile", "--force"]);
        assert_eq!(compiled.status, 0, "{version}: {}", compiled.stderr);
        assert!(project.exists(".claude/tools/data/.aidlc-compile-fingerprint"));
        let installed = install(&project, &[]);
        assert_eq!(installed.status, 0, "{version}: {}", installed.stderr);
        assert_eq!(project.run(&["compile"]).status, 0, "{version}");
        let status = git(&["status", "--porcelain", "--untracked-files=all"]);
        let mut shown: Vec<&str> = status.lines().map(|line| &line[3..]).collect();
        shown.sort_unstable();
        let mut expected = vec![".claude/settings.json", ".gitignore"];
        expected.sort_unstable();
        assert_eq!(shown, expected, "{version}:\n{status}");
    }
}

/// `aidlc init --harness <harness>`, compiled: a project whose hooks have never been installed.
fn initialised(harness: &str) -> TestProject {
    let project = TestProject::empty();
    let init = project.run(&["init", ".", "--harness", harness]);
    assert_eq!(init.status, 0, "{harness}: {}", init.stderr);
    assert_eq!(project.compile().status, 0, "{harness}");
    project
}

/// Each registration file `hook install` writes for `harness`, whole, in file order, after
/// checking that a second run changes no byte.
fn installed_files(project: &TestProject, harness: &str, files: &[&str]) -> String {
    let first = install(project, &["--harness", harness]);
    assert_eq!(first.status, 0, "{harness}: {}", first.stderr);
    let written: Vec<String> = files.iter().map(|file| project.read(file)).collect();
    let second = install(project, &["--harness", harness]);
    assert_eq!(second.status, 0, "{harness}: {}", second.stderr);
    assert!(
        second.stderr.contains("needs no change"),
        "{harness}: {}",
        second.stderr
    );
    let again: Vec<String> = files.iter().map(|file| project.read(file)).collect();
    assert_eq!(again, written, "{harness}: a second run changes no byte");
    let mut shown = String::new();
    for (file, text) in files.iter().zip(&written) {
        shown.push_str("--- ");
        shown.push_str(file);
        shown.push('\n');
        shown.push_str(text);
    }
    shown
}

/// Uninstall removes every file the install created, and nothing else.
fn uninstall_removes(project: &TestProject, harness: &str, files: &[&str]) {
    let removed = install(project, &["--harness", harness, "--uninstall"]);
    assert_eq!(removed.status, 0, "{harness}: {}", removed.stderr);
    for file in files {
        assert!(!project.exists(file), "{harness}: {file} is left");
    }
}

const CURSOR_HOOKS: &str = ".cursor/hooks.json";
const COPILOT_HOOKS: &str = ".github/hooks/aidlc.json";
const KIRO_CLI_V3_HOOKS: [&str; 3] = [
    ".kiro/hooks/aidlc-engine-cli-run-sensors.json",
    ".kiro/hooks/aidlc-engine-cli-record-human-turn.json",
    ".kiro/hooks/aidlc-engine-cli-guard.json",
];

#[test]
fn cursor_s_hooks_file_gets_every_hook_once_and_loses_them_on_uninstall() {
    let project = initialised("cursor");
    insta::assert_snapshot!(installed_files(&project, "cursor", &[CURSOR_HOOKS]));
    uninstall_removes(&project, "cursor", &[CURSOR_HOOKS]);
}

#[test]
fn copilot_s_hooks_file_gets_every_hook_once_and_loses_them_on_uninstall() {
    let project = initialised("copilot");
    // Told from opencode (which shares `.aidlc`) by the name `init` records.
    let first = install(&project, &["--dry-run"]);
    assert!(first.stderr.contains(COPILOT_HOOKS), "{}", first.stderr);
    insta::assert_snapshot!(installed_files(&project, "copilot", &[COPILOT_HOOKS]));
    uninstall_removes(&project, "copilot", &[COPILOT_HOOKS]);
}

#[test]
fn kiro_cli_3_gets_standalone_hook_files_and_kiro_cli_2_keeps_its_agent_file() {
    let project = initialised("kiro-cli-v3");
    insta::assert_snapshot!(installed_files(&project, "kiro-cli-v3", &KIRO_CLI_V3_HOOKS));
    uninstall_removes(&project, "kiro-cli-v3", &KIRO_CLI_V3_HOOKS);
    // `--harness kiro` is Kiro CLI before 3: the conductor agent's file, and no hook file.
    let kiro = initialised("kiro");
    let installed = install(&kiro, &["--harness", "kiro"]);
    assert_eq!(installed.status, 0, "{}", installed.stderr);
    assert!(
        kiro.read(".kiro/agents/aidlc.json")
            .contains("aidlc engine hook run-sensors --harness kiro"),
    );
    assert!(!kiro.exists(".kiro/hooks"));
}

#[test]
fn cursor_and_copilot_keep_every_byte_they_do_not_own_and_take_over_the_reference_s_prompt_entry() {
    let project = initialised("cursor");
    let cursor_before = "{\r\n\t\"version\": 1,\r\n\t\"hooks\": {\r\n\t\t\"afterFileEdit\": [ { \"command\": \"./format.sh\" } ],\r\n\t\t\"beforeSubmitPrompt\": [\r\n\t\t\t{ \"command\": \"bun .cursor/hooks/aidlc-cursor-adapter.ts mint\" }\r\n\t\t],\r\n\t\t\"stop\": [ { \"command\": \"./notify.sh\" } ]\r\n\t}\r\n}";
    project.write(CURSOR_HOOKS, cursor_before);
    let written = installed_files(&project, "cursor", &[CURSOR_HOOKS]);
    for kept in [
        "{ \"command\": \"./format.sh\" }",
        "\"stop\": [ { \"command\": \"./notify.sh\" } ]",
        "\r\n\t\"version\": 1,\r\n",
    ] {
        assert!(written.contains(kept), "{kept}: {written}");
    }
    assert!(
        !written.contains("aidlc-cursor-adapter.ts mint"),
        "{written}"
    );
    assert!(!written.ends_with('\n'), "no newline is added at the end");
    let removed = install(&project, &["--harness", "cursor", "--uninstall"]);
    assert_eq!(removed.status, 0, "{}", removed.stderr);
    let after = project.read(CURSOR_HOOKS);
    assert!(after.contains("./format.sh") && after.contains("./notify.sh"));
    assert!(!after.contains("aidlc engine hook"), "{after}");

    let project = initialised("copilot");
    let reference = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n      {\n        \"type\": \"command\",\n        \"bash\": \"bun .aidlc/hooks/aidlc-copilot-adapter.ts mint\",\n        \"powershell\": \"bun .aidlc/hooks/aidlc-copilot-adapter.ts mint\",\n        \"timeoutSec\": 30\n      }\n    ],\n    \"Stop\": [\n      {\n        \"type\": \"command\",\n        \"bash\": \"bun .aidlc/hooks/aidlc-copilot-adapter.ts stop\",\n        \"timeoutSec\": 60\n      }\n    ]\n  }\n}\n";
    project.write(COPILOT_HOOKS, reference);
    let written = installed_files(&project, "copilot", &[COPILOT_HOOKS]);
    assert!(
        written.contains(
            "\"bash\": \"aidlc engine hook record-human-turn --harness copilot\",\n        \"powershell\": \"aidlc engine hook record-human-turn --harness copilot\",\n        \"timeoutSec\": 30"
        ),
        "the reference's entry is taken over in place: {written}"
    );
    assert!(
        written.contains("aidlc-copilot-adapter.ts stop"),
        "{written}"
    );
}

#[test]
fn a_cursor_hooks_file_of_the_wrong_shape_is_refused_and_kept() {
    let project = initialised("cursor");
    let wrong = "{\"version\": 1, \"hooks\": {\"afterFileEdit\": [{\"command\": 7}]}}\n";
    project.write(CURSOR_HOOKS, wrong);
    let run = install(&project, &["--harness", "cursor"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("a \"command\" of \"hooks\".\"afterFileEdit\" is not a string"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read(CURSOR_HOOKS), wrong);
    let doctor = project.run(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains(".cursor/hooks.json has a \"command\""),
        "{}",
        doctor.stdout
    );
}

#[test]
fn a_fifo_or_oversized_settings_file_is_refused_at_once_by_hook_install_and_doctor() {
    for make in [
        (|project: &TestProject| fifo_at(project, ".claude/settings.json")) as fn(&TestProject),
        |project: &TestProject| {
            project.write(".claude/settings.json", "{}");
            oversized(&project.path(".claude/settings.json"));
        },
    ] {
        let project = TestProject::one_stage();
        make(&project);
        let installed = project.run_watched(&["hook", "install"], &[], None);
        let output = said(&installed);
        assert_ne!(installed.status, 0, "{output}");
        assert!(output.contains("settings.json"), "{output}");
        let doctor = project.run_watched(&["doctor"], &[], None);
        let output = said(&doctor);
        assert!(output.contains("settings.json"), "{output}");
    }
}

/// The write-hook groups of `PostToolUse` whose matcher names `tool` (an exact list, as
/// Claude Code reads `Write|Edit`).
fn write_groups_naming(settings: &Value, tool: &str) -> usize {
    settings["hooks"]["PostToolUse"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|group| {
            group["matcher"]
                .as_str()
                .is_some_and(|matcher| matcher.split('|').any(|name| name == tool))
        })
        .filter(|group| {
            group["hooks"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|hook| hook["command"] == WRITE_HOOK)
        })
        .count()
}

/// Every Claude Code file tool fires the write hook exactly once: on a new project through the
/// engine's own group, and on a reference install taken over in place through the reference's
/// `Write|Edit` group (its matcher kept) and a `MultiEdit|NotebookEdit` group of the engine's; a
/// second run changes nothing, and an uninstall takes the added group away.
#[test]
fn every_claude_file_tool_fires_the_write_hook_once_on_new_and_reference_installs() {
    let fresh = project();
    install_twice(&fresh);
    let reference = TestProject::reference_install("2.6.54");
    install_twice(&reference);
    for project in [&fresh, &reference] {
        let settings = settings(project);
        for tool in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
            assert_eq!(
                write_groups_naming(&settings, tool),
                1,
                "{tool}: {settings:#}"
            );
        }
    }
    assert!(
        reference
            .read(SETTINGS)
            .contains("\"matcher\": \"Write|Edit\","),
        "the reference's group keeps its matcher"
    );
    let removed = install(&reference, &["--uninstall"]);
    assert_eq!(removed.status, 0, "{}", removed.stderr);
    assert!(
        !reference
            .read(SETTINGS)
            .contains("MultiEdit|NotebookEdit\""),
        "{}",
        reference.read(SETTINGS)
    );

    // A group of the user's that names some of the tools is not widened: the rest are named.
    let partial = project();
    partial.write(
        SETTINGS,
        &format!(
            "{{\"hooks\": {{\"PostToolUse\": [{{\"matcher\": \"Write|Edit|MultiEdit\", \"hooks\": [{{\"type\": \"command\", \"command\": \"{WRITE_HOOK}\"}}]}}]}}}}\n"
        ),
    );
    let run = install(&partial, &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the write hook's group does not match NotebookEdit"),
        "{}",
        run.stderr
    );
    assert_eq!(write_groups_naming(&settings(&partial), "MultiEdit"), 1);
    assert_eq!(write_groups_naming(&settings(&partial), "NotebookEdit"), 0);
}
