//! `aidlc compile --watch` in an install with a composed plugin (docs/decisions.md D53): an
//! edit of the plugin's own folder runs `aidlc plugin sync`'s code and then the compile; a
//! change that leaves the composition the same prints nothing; a refusal or a composition
//! that does not compile is reported and leaves the install as it was; the watch's own writes
//! into the install do not set it off again.

use serde_json::Value;

use crate::plugins::PluginShelf;
use crate::support::{GRAPH, TestProject};
use crate::watch::WatchProcess;

const INSTALLED_STAGE: &str = ".claude/aidlc-common/stages/construction/acme-check.md";
/// A core stage no plugin contributes to: the sentinel edit that closes each quiet stretch.
const CORE_STAGE: &str = ".claude/aidlc-common/stages/inception/practices-discovery.md";

/// Replace `path`'s bytes in one step, as an editor's atomic save does: written into a file of
/// the temporary folder (outside every watched folder), then renamed over `path`. The watch
/// never sees the file half-written, so each edit is one change.
fn save(path: &camino::Utf8Path, text: impl AsRef<[u8]>) {
    let staged = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(staged.path(), text).unwrap();
    staged.persist(path).expect("rename over the file");
}

/// The default framework with the path plugin `acme` composed; the shelf keeps its folder.
fn project_with_acme() -> (TestProject, PluginShelf, camino::Utf8PathBuf) {
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let added = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    (project, shelf, root)
}

/// Edit the core stage and wait for its rebuild (returned): by then every event the earlier
/// edits set off has been seen, since the watcher takes file events in the order they happened.
fn settle(project: &TestProject, watch: &mut WatchProcess) -> Value {
    let text = project.read(CORE_STAGE);
    project.write(CORE_STAGE, &format!("{text}\n"));
    watch.rebuild_touching("the sentinel edit", "changed", CORE_STAGE)
}

fn is_composition_event(event: &Value) -> bool {
    matches!(
        event["event"].as_str(),
        Some("recompose" | "recompose-failed" | "rebuild")
    )
}

/// Edit the core stage and wait for its rebuild; every event since `since` (in `seen`) before
/// that rebuild must be no recomposition and no rebuild, and the rebuild must be the sentinel
/// edit's alone: the stretch since then was quiet. The watcher takes file events in the order
/// they happened, so whatever the earlier edits set off comes before the sentinel's rebuild or
/// in the same batch: a recomposition in between, or another path in that rebuild's lists.
fn assert_quiet_since(project: &TestProject, watch: &mut WatchProcess, since: usize, what: &str) {
    let sentinel = settle(project, watch);
    let paths_of = |list: &str| sentinel[list].as_array().cloned().unwrap_or_default();
    assert_eq!(
        (paths_of("changed"), paths_of("added"), paths_of("removed")),
        (vec![Value::from(CORE_STAGE)], Vec::new(), Vec::new()),
        "{what}: the sentinel's rebuild took in other changes: {sentinel}"
    );
    let between = &watch.seen[since..watch.seen.len() - 1];
    let noisy: Vec<&Value> = between
        .iter()
        .filter(|event| is_composition_event(event))
        .collect();
    assert!(noisy.is_empty(), "{what}: {noisy:#?}");
}

#[test]
fn a_plugin_edit_is_recomposed_and_compiled_and_a_refusal_keeps_the_install() {
    let (project, _shelf, root) = project_with_acme();
    let mut watch = WatchProcess::start(&project);
    let first = watch.wait_for("the first compile", |e| e["event"] == "rebuild");
    assert_eq!(first["errors"], 0, "{first}");

    // An edit of the plugin's stage that changes the graph: synced into the install (the
    // sync's compile writes the new graph), then compiled in the watch's database.
    let graph_before = project.read(GRAPH);
    let stage_file = root.join("stages/construction/acme-check.md");
    let text = std::fs::read_to_string(&stage_file).unwrap();
    save(
        &stage_file,
        text.replace("write the report", "write the full report")
            .replace(
                "When the acme plugin is active",
                "When the acme plugin is on",
            ),
    );
    let recomposed = watch.wait_for("the recomposition", |e| e["event"] == "recompose");
    assert_eq!(recomposed["changed_plugins"], serde_json::json!(["acme"]));
    assert_eq!(recomposed["plugins"], serde_json::json!(["acme"]));
    assert!(
        recomposed["written"]
            .as_array()
            .unwrap()
            .iter()
            .any(|path| path == INSTALLED_STAGE),
        "{recomposed}"
    );
    let rebuilt = watch.rebuild_touching("the compile after it", "changed", INSTALLED_STAGE);
    assert_eq!(rebuilt["errors"], 0, "{rebuilt}");
    assert!(project.read(INSTALLED_STAGE).contains("the full report"));
    assert_ne!(
        project.read(GRAPH),
        graph_before,
        "the condition is in the graph"
    );
    let check = project.run(&["compile", "--check"]);
    assert_eq!(
        check.status, 0,
        "the watch's graph is a one-shot compile's: {}",
        check.stderr
    );
    let quiet_from = watch.seen.len();
    assert_quiet_since(
        &project,
        &mut watch,
        quiet_from,
        "the sync's own writes set the watch off again",
    );

    // The same bytes saved again: the no-op sync, nothing printed.
    let same = std::fs::read_to_string(&stage_file).unwrap();
    save(&stage_file, &same);
    let quiet_from = watch.seen.len();
    assert_quiet_since(&project, &mut watch, quiet_from, "a save of the same bytes");

    // A composition that does not compile: rolled back, reported with its diagnostics, the
    // installed copy and the graph as they were.
    let good_install = project.read(INSTALLED_STAGE);
    let good_graph = project.read(GRAPH);
    save(
        &stage_file,
        same.replace("  - build-and-test\n", "  - no-such-stage\n"),
    );
    let failed = watch.wait_for("the failed compile", |e| e["event"] == "recompose-failed");
    assert_eq!(failed["reason"], "compile-failed", "{failed}");
    assert_eq!(failed["changed_plugins"], serde_json::json!(["acme"]));
    // On the plugin's own stage, the file its author edits, not the installed copy (D53).
    let broken = std::fs::read_to_string(&stage_file).unwrap();
    let line = broken
        .lines()
        .position(|line| line == "  - no-such-stage")
        .unwrap()
        + 1;
    let diagnostic = failed["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|diagnostic| diagnostic["code"] == "unknown-requires-stage")
        .unwrap_or_else(|| panic!("no unknown requires_stage: {failed}"));
    assert_eq!(diagnostic["file"], stage_file.as_str(), "{failed}");
    assert_eq!(
        (diagnostic["line"].as_u64(), diagnostic["column"].as_u64()),
        (Some(line as u64), Some(5)),
        "{failed}"
    );
    assert_eq!(project.read(INSTALLED_STAGE), good_install);
    assert_eq!(project.read(GRAPH), good_graph);
    assert!(!project.exists(".aidlc-plugin-journal"));

    // A refusal, with the file it names: the manifest.
    let manifest = root.join(".aidlc-plugin/plugin.json");
    let good_manifest = std::fs::read_to_string(&manifest).unwrap();
    save(&stage_file, &same);
    save(&manifest, "{\"name\": \"acme\",");
    let refused = watch.wait_for("the refusal", |e| {
        e["event"] == "recompose-failed" && e["reason"] == "refused"
    });
    let problem = &refused["problems"][0];
    assert!(
        problem["path"]
            .as_str()
            .is_some_and(|path| path.ends_with(".aidlc-plugin/plugin.json")),
        "{refused}"
    );
    // The span the refusal was made with: where the manifest's reader stopped, line 1.
    assert_eq!(problem["diagnostic"]["code"], "plugin-refused", "{refused}");
    assert_eq!(problem["diagnostic"]["line"], 1, "{refused}");
    assert_eq!(project.read(INSTALLED_STAGE), good_install);
    assert_eq!(project.read(GRAPH), good_graph);

    // Each batch that touches the broken plugin says the refusal again, and the two saves above
    // may fall in two batches: let them all be said before the quiet stretch begins.
    settle(&project, &mut watch);

    // Fixed: the install is what it was before the breakage, so the sync writes nothing.
    save(&manifest, &good_manifest);
    let quiet_from = watch.seen.len();
    assert_quiet_since(
        &project,
        &mut watch,
        quiet_from,
        "the fix back to the composed bytes",
    );
    assert_eq!(watch.interrupt(), 130);
}

/// A git plugin's kept copy is a clone of a commit, not the author's tree: the watch says once
/// that it does not follow it, and an edit there recomposes nothing (`plugin sync` would
/// refuse it).
#[test]
fn a_git_plugin_is_named_as_not_watched_and_its_kept_copy_sets_nothing_off() {
    if crate::support::system_tool("git").is_none() {
        return;
    }
    let shelf = PluginShelf::new();
    let root = shelf.native("remote", 10, &[]);
    crate::plugins::git(&root, &["init", "--quiet", "--initial-branch=main"]);
    crate::plugins::git(&root, &["add", "."]);
    crate::plugins::git(&root, &["commit", "--quiet", "-m", "v1"]);
    let project = TestProject::default_framework();
    let bare = shelf.root.join("remote.git");
    crate::plugins::git(
        &shelf.root,
        &["clone", "--quiet", "--bare", root.as_str(), bare.as_str()],
    );
    let url = format!("{bare}@main");
    let added = project.run(&["plugin", "add", &url]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    let mut watch = WatchProcess::start(&project);
    let note = watch.wait_for("the note", |e| e["event"] == "plugin-not-watched");
    assert_eq!(
        (note["plugin"].clone(), note["reason"].clone()),
        ("remote".into(), "git".into()),
        "{note}"
    );
    watch.wait_for("the first compile", |e| e["event"] == "rebuild");
    let quiet_from = watch.seen.len();
    let kept = project.path("aidlc/plugins/remote/stages/construction/remote-check.md");
    let text = std::fs::read_to_string(&kept).unwrap();
    std::fs::write(
        &kept,
        text.replace("write the report", "write another report"),
    )
    .unwrap();
    assert_quiet_since(&project, &mut watch, quiet_from, "an edit of the kept copy");
    assert_eq!(watch.interrupt(), 130);
}

/// The human line of a recomposition, then the rebuild's line for the copy it wrote.
#[test]
fn the_human_watch_prints_one_line_naming_the_recomposed_plugin() {
    use std::io::{BufRead, BufReader};
    let (project, _shelf, root) = project_with_acme();
    let mut child = project
        .command(
            &project.root,
            &[
                "compile",
                "--watch",
                "--debounce-ms",
                "20",
                "--project-dir",
                project.root.as_str(),
            ],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start aidlc compile --watch");
    let stderr = child.stderr.take().expect("piped stderr");
    let (sender, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen: Vec<String> = Vec::new();
    let mut wait_for = |wanted: &dyn Fn(&str) -> bool| -> String {
        loop {
            match lines.recv_timeout(std::time::Duration::from_secs(60)) {
                Ok(line) if wanted(&line) => return line,
                Ok(line) => seen.push(line),
                Err(error) => panic!("no such line ({error}); seen:\n{}", seen.join("\n")),
            }
        }
    };
    wait_for(&|line| line.starts_with("watching for changes"));
    let stage_file = root.join("stages/construction/acme-check.md");
    let text = std::fs::read_to_string(&stage_file).unwrap();
    save(
        &stage_file,
        text.replace("write the report", "write the full report"),
    );
    let line = wait_for(&|line| line.starts_with("plugin \"acme\" changed"));
    assert_eq!(
        line,
        "plugin \"acme\" changed: recomposed acme; 2 files written, 0 removed"
    );
    let rebuild = wait_for(&|line| line.contains("compiled"));
    assert!(
        rebuild.starts_with(".claude/aidlc-common/stages/construction/acme-check.md changed"),
        "{rebuild}"
    );
    // A recomposition that does not compile: its diagnostic is on the plugin's own stage.
    let text = std::fs::read_to_string(&stage_file).unwrap();
    let broken = text.replace("  - build-and-test\n", "  - no-such-stage\n");
    let line = broken
        .lines()
        .position(|line| line == "  - no-such-stage")
        .unwrap()
        + 1;
    save(&stage_file, &broken);
    let located = wait_for(&|line| line.contains("─[") && line.contains("acme-check.md:"));
    assert!(
        located.ends_with(&format!("[{stage_file}:{line}:5]")),
        "{located}"
    );
    wait_for(&|line| line.starts_with("plugin \"acme\" changed: not recomposed"));
    let _ = child.kill();
    let _ = child.wait();
}

/// D55: a plugin edited at its source before the watch began is recomposed before
/// the watch's first compile, so the watch never compiles stale copies in silence.
#[test]
fn a_plugin_edited_before_the_watch_began_is_recomposed_before_the_first_compile() {
    let (project, _shelf, root) = project_with_acme();
    let stage_file = root.join("stages/construction/acme-check.md");
    let text = std::fs::read_to_string(&stage_file).unwrap();
    std::fs::write(
        &stage_file,
        text.replace("write the report", "write the full report"),
    )
    .unwrap();
    let mut watch = WatchProcess::start(&project);
    let recomposed = watch.wait_for("the recomposition", |e| e["event"] == "recompose");
    assert_eq!(recomposed["changed_plugins"], serde_json::json!(["acme"]));
    let first = watch.wait_for("the first compile", |e| e["event"] == "rebuild");
    assert_eq!(first["errors"], 0, "{first}");
    assert!(project.read(INSTALLED_STAGE).contains("the full report"));
    // Composed now: the compile has nothing stale to say.
    watch.interrupt();
    let compiled = project.run(&["compile"]);
    assert!(
        !compiled.stderr.contains("stale-plugin-copy"),
        "{}",
        compiled.stderr
    );
}

/// A path plugin the reader refuses when the watch begins (a symbolic link in its tree) cannot
/// be compared with what was composed: the watch says so at the start, in the refusal's own
/// words, and goes on to its first compile with the install as it was.
#[cfg(unix)]
#[test]
fn a_plugin_refused_when_the_watch_begins_is_said_at_the_start() {
    let (project, _shelf, root) = project_with_acme();
    let installed = project.read(INSTALLED_STAGE);
    std::os::unix::fs::symlink(
        root.join("stages/construction/acme-check.md"),
        root.join("stages/construction/linked.md"),
    )
    .unwrap();
    let mut watch = WatchProcess::start(&project);
    let unchecked = watch.wait_for("the refusal", |e| e["event"] == "plugins-unchecked");
    let message = unchecked["message"].as_str().unwrap();
    assert!(
        message.contains("plugin \"acme\"") && message.contains("is a symbolic link"),
        "{unchecked}"
    );
    let first = watch.wait_for("the first compile", |e| e["event"] == "rebuild");
    assert_eq!(first["errors"], 0, "{first}");
    assert_eq!(project.read(INSTALLED_STAGE), installed);
}

/// A lock file that cannot be read: the watch follows no plugin and says why once, in `plugin
/// sync`'s words; the watch itself goes on to its first compile.
#[test]
fn an_unreadable_lock_file_is_said_once_and_the_watch_goes_on() {
    let (project, _shelf, _root) = project_with_acme();
    project.write("aidlc.lock.json", "{\"plugins\":");
    let mut watch = WatchProcess::start(&project);
    let unreadable = watch.wait_for("the lock's refusal", |e| e["event"] == "plugins-unreadable");
    let message = unreadable["message"].as_str().unwrap();
    assert!(message.starts_with("aidlc.lock.json: "), "{unreadable}");
    watch.wait_for("the first compile", |e| e["event"] == "rebuild");
    settle(&project, &mut watch);
    let said: Vec<&Value> = watch
        .seen
        .iter()
        .filter(|event| {
            event["event"]
                .as_str()
                .is_some_and(|name| name.starts_with("plugins-"))
        })
        .collect();
    assert_eq!(
        said,
        [&unreadable],
        "said once, and only as the lock's refusal"
    );
    assert_eq!(watch.interrupt(), 130);
}
