//! `aidlc compile --watch --format json`, driven end to end with real file edits.
//!
//! Each step edits files, then waits (generously: a loaded 2-core machine can be slow) for the
//! rebuild event that step must cause. Events for other causes are skipped, so the test does not
//! depend on how the debouncer happens to split or merge bursts.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{GRAPH, TestProject, manifest, stage};

const PATIENCE: Duration = Duration::from_secs(60);
const FIRST_STAGE: &str = ".claude/aidlc-common/stages/inception/first-stage.md";

pub(crate) struct WatchProcess {
    child: Child,
    events: Receiver<Value>,
    pub(crate) seen: Vec<Value>,
}

impl WatchProcess {
    pub(crate) fn start(project: &TestProject) -> Self {
        let mut child = project
            .command(
                &project.root,
                &[
                    "compile",
                    "--watch",
                    "--format",
                    "json",
                    "--debounce-ms",
                    "20",
                    "--project-dir",
                    project.root.as_str(),
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start aidlc compile --watch");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, events) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let event = serde_json::from_str(&line)
                    .unwrap_or_else(|error| panic!("not a JSON event ({error}): {line}"));
                if sender.send(event).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            events,
            seen: Vec::new(),
        }
    }

    /// The next event that satisfies `wanted`, skipping others.
    pub(crate) fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(event) => {
                    self.seen.push(event.clone());
                    if wanted(&event) {
                        return event;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => panic!(
                    "no event for {what} within {PATIENCE:?}; events so far:\n{}",
                    self.seen
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }
        }
    }

    pub(crate) fn rebuild_touching(&mut self, what: &str, list: &str, path: &str) -> Value {
        self.wait_for(what, |event| {
            event["event"] == "rebuild"
                && event[list]
                    .as_array()
                    .is_some_and(|paths| paths.iter().any(|p| p == path))
        })
    }

    /// Ctrl-C: returns the exit status.
    pub(crate) fn interrupt(mut self) -> i32 {
        let status = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
        self.wait_for("the stopped event", |event| event["event"] == "stopped");
        let status = self.child.wait().expect("wait for aidlc");
        status.code().unwrap_or(-1)
    }
}

impl Drop for WatchProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Delete the `construction` phase folder and wait for the rebuild that drops its stages.
fn watch_remove_folder(project: &TestProject, watch: &mut WatchProcess) -> Value {
    project.remove(".claude/aidlc-common/stages/construction");
    watch.wait_for("the deleted phase folder", |e| {
        e["event"] == "rebuild"
            && e["removed"]
                .as_array()
                .is_some_and(|removed| removed.len() == 2)
    })
}

fn slugs_in_graph(project: &TestProject) -> Vec<String> {
    let nodes: Vec<Value> = serde_json::from_str(&project.read(GRAPH)).expect("graph is JSON");
    nodes
        .iter()
        .map(|node| node["slug"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn watch_follows_edits_breakage_fixes_new_and_deleted_files() {
    let project = TestProject::minimal();
    let mut watch = WatchProcess::start(&project);
    let first = watch.wait_for("the first compile", |e| e["event"] == "rebuild");
    assert_eq!(first["first"], true);
    assert_eq!(first["errors"], 0, "{first}");
    assert_eq!(first["stage_graph"], "written", "{first}");
    watch.wait_for("watching", |e| e["event"] == "watching");
    let good_graph = project.read(GRAPH);

    // A prose edit: rebuilt, graph bytes unchanged.
    let text = project.read(FIRST_STAGE);
    project.write(
        FIRST_STAGE,
        &text.replace("Prose about", "More prose about"),
    );
    let edit = watch.rebuild_touching("a prose edit", "changed", FIRST_STAGE);
    assert_eq!(
        (edit["errors"].clone(), edit["stage_graph"].clone()),
        (0.into(), "unchanged".into())
    );

    // Break it: diagnostics in the event, last good graph kept on disk.
    project.write(
        FIRST_STAGE,
        &text.replace("phase: inception", "phase: [inception"),
    );
    let broken = watch.rebuild_touching("a broken stage", "changed", FIRST_STAGE);
    assert!(broken["errors"].as_u64().unwrap() >= 1, "{broken}");
    assert_eq!(broken["stage_graph"], "kept");
    assert_eq!(broken["diagnostics"][0]["file"], FIRST_STAGE, "{broken}");
    assert_eq!(project.read(GRAPH), good_graph);

    // Fix it with an editor-style save: write a temp file, rename it over the stage.
    let temp = project.path(".claude/aidlc-common/stages/inception/.first-stage.md.swp");
    std::fs::write(&temp, &text).unwrap();
    std::fs::rename(&temp, project.path(FIRST_STAGE)).unwrap();
    let fixed = watch.wait_for("the fix", |e| e["event"] == "rebuild" && e["errors"] == 0);
    assert_eq!(fixed["stage_graph"], "unchanged", "{fixed}");

    // A new stage in a new phase folder: the graph is rewritten with it.
    let new_stage = ".claude/aidlc-common/stages/construction/third-stage.md";
    project.write(
        new_stage,
        &stage("third-stage", "construction", "[]", "[]", ""),
    );
    let added = watch.rebuild_touching("a new stage", "added", new_stage);
    assert_eq!(added["stage_graph"], "written", "{added}");
    assert_eq!(added["stages"], 3);
    assert!(slugs_in_graph(&project).contains(&"third-stage".to_owned()));

    // A second new stage: numbered after the first, whose number now comes from the graph
    // this session wrote (handed over as rows, not parsed back).
    let fourth = ".claude/aidlc-common/stages/construction/fourth-stage.md";
    project.write(
        fourth,
        &stage("fourth-stage", "construction", "[]", "[]", ""),
    );
    watch.rebuild_touching("a second new stage", "added", fourth);
    let nodes: Vec<Value> = serde_json::from_str(&project.read(GRAPH)).unwrap();
    let number_of = |slug: &str| {
        nodes
            .iter()
            .find(|node| node["slug"] == slug)
            .map(|node| node["number"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(
        (number_of("third-stage"), number_of("fourth-stage")),
        ("3.1".into(), "3.2".into())
    );

    // Delete and re-create a stage (another save pattern): changed content is picked up.
    project.remove(new_stage);
    project.write(
        new_stage,
        &stage("third-stage", "construction", "[]", "[demo-check]", ""),
    );
    watch.wait_for("the re-created stage", |e| {
        e["event"] == "rebuild" && e["stage_graph"] == "written"
    });
    assert!(project.read(GRAPH).contains("\"id\": \"demo-check\""));

    // A whole phase folder goes away: its stages leave the graph.
    let removed_folder = watch_remove_folder(&project, &mut watch);
    assert!(!slugs_in_graph(&project).contains(&"fourth-stage".to_owned()));
    assert_eq!(removed_folder["stages"], 2, "{removed_folder}");
    project.write(
        new_stage,
        &stage("third-stage", "construction", "[]", "[demo-check]", ""),
    );
    // The write can be seen half-done first (a rebuild with errors that keeps the graph); wait
    // for the rebuild that read it whole, so no rebuild of it is still to come below.
    watch.wait_for("the folder's stage restored", |e| {
        let names_the_stage = |list: &str| {
            e[list]
                .as_array()
                .is_some_and(|paths| paths.iter().any(|p| p == new_stage))
        };
        e["event"] == "rebuild"
            && (names_the_stage("added") || names_the_stage("changed"))
            && e["errors"] == 0
            && e["stage_graph"] == "written"
    });

    // Someone hand-edits the graph: the watch puts the compiled bytes back.
    let compiled_graph = project.read(GRAPH);
    project.write(GRAPH, &compiled_graph.replacen('[', "[ ", 1));
    // The watch's own earlier write of the graph can reach the debouncer late and cause a
    // rebuild that names the graph and finds nothing to do; wait for the one that restores it.
    let restored = watch.wait_for("the hand-edited graph put back", |e| {
        e["event"] == "rebuild"
            && e["changed"]
                .as_array()
                .is_some_and(|paths| paths.iter().any(|p| p == GRAPH))
            && e["stage_graph"] == "written"
    });
    assert_eq!(restored["errors"], 0, "{restored}");
    assert_eq!(project.read(GRAPH), compiled_graph);

    // Delete the manifest that stages import: errors, graph kept.
    let graph_before = project.read(GRAPH);
    let manifest_path = ".claude/sensors/aidlc-demo-check.md";
    project.remove(manifest_path);
    let removed = watch.rebuild_touching("a deleted manifest", "removed", manifest_path);
    assert!(removed["errors"].as_u64().unwrap() >= 1, "{removed}");
    assert_eq!(removed["stage_graph"], "kept");
    assert_eq!(project.read(GRAPH), graph_before);

    // Put it back: error-free again.
    project.write(manifest_path, &manifest("demo-check", ""));
    watch.wait_for("the restored manifest", |e| {
        e["event"] == "rebuild" && e["errors"] == 0
    });

    assert_eq!(watch.interrupt(), 130);

    // The watch left a fingerprint: a one-shot compile now has nothing to do.
    let after = project.compile();
    assert!(after.stderr.starts_with("up to date:"), "{}", after.stderr);
    // And what the warm session wrote is exactly what a cold compile writes.
    let watched_graph = project.read(GRAPH);
    let forced = project.run(&["compile", "--force"]);
    assert_eq!(forced.status, 0, "{}", forced.stderr);
    assert!(
        forced.stderr.contains("up to date: .claude"),
        "{}",
        forced.stderr
    );
    assert_eq!(project.read(GRAPH), watched_graph);
}

#[test]
fn a_burst_of_saves_ends_in_the_last_state() {
    let project = TestProject::minimal();
    let mut watch = WatchProcess::start(&project);
    watch.wait_for("watching", |e| e["event"] == "watching");
    let text = project.read(FIRST_STAGE);
    for round in 0..20 {
        project.write(
            FIRST_STAGE,
            &text.replace("Prose about", &format!("Prose {round} about")),
        );
    }
    project.write(
        FIRST_STAGE,
        &text.replace("sensors: [demo-check]", "sensors: []"),
    );
    watch.wait_for("the last save of the burst", |e| {
        e["event"] == "rebuild" && e["stage_graph"] == "written"
    });
    let nodes: Vec<Value> = serde_json::from_str(&project.read(GRAPH)).unwrap();
    assert_eq!(nodes[0]["sensors_applicable"], serde_json::json!([]));
}

#[test]
fn watch_waits_for_a_harness_folder_that_appears_later() {
    let project = TestProject::empty();
    let mut watch = WatchProcess::start(&project);
    watch.wait_for("waiting", |e| e["event"] == "waiting");
    aidlc::compile::framework::init_project(&project.root, aidlc::harness::Harness::Claude, false)
        .unwrap();
    // `init` writes file after file; the watch may compile a half-written tree first, but it
    // must end with the whole framework compiled clean.
    watch.wait_for("a clean compile of all 33 stages", |e| {
        e["event"] == "rebuild" && e["stages"] == 33 && e["errors"] == 0
    });
    assert_eq!(watch.interrupt(), 130);
    assert_eq!(slugs_in_graph(&project).len(), 33);
}
