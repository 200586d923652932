//! Every write stays inside the project whatever the data says: a planted plugin journal, a
//! lock file naming paths outside the project or inside `.git`, and harness folders that are
//! links leading out. After each command a canary tree beside the project and the project's
//! `.git/config` are byte-identical and nothing new exists outside; the read-only commands
//! (`plugin list`, `doctor`, `sensors`) write nothing at all, journal or not.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::plugins::PluginShelf;
use crate::support::scenario_project::{
    self as scenario, DOC_A, DOC_B, PASS, RECORD, SHAPE, STAGE, STAGE_DIR,
};
use crate::support::{Run, TestProject, system_tool};

const GIT_CONFIG: &str = ".git/config";
const GIT_CONFIG_TEXT: &str = "[core]\n\trepositoryformatversion = 0\n";
const JOURNAL_MANIFEST: &str = ".aidlc-plugin-journal/manifest.json";

/// A folder outside the project holding a few files that no command may change.
struct Canary {
    _dir: tempfile::TempDir,
    root: Utf8PathBuf,
    before: BTreeMap<String, Vec<u8>>,
}

impl Canary {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().expect("canonical"))
            .expect("UTF-8 temp dir");
        std::fs::create_dir_all(root.join("deep")).unwrap();
        std::fs::write(root.join("canary.txt"), "canary\n").unwrap();
        std::fs::write(root.join("deep/keep.md"), "keep\n").unwrap();
        let before = every_file(&root);
        Self {
            _dir: dir,
            root,
            before,
        }
    }

    fn file(&self) -> Utf8PathBuf {
        self.root.join("canary.txt")
    }

    /// The canary tree is as it was, and nothing was added to it.
    fn assert_untouched(&self, what: &str) {
        assert_eq!(
            every_file(&self.root),
            self.before,
            "{what}: the canary changed"
        );
    }
}

/// Every file under `root` (links listed by their target text), by its path.
fn every_file(root: &Utf8Path) -> BTreeMap<String, Vec<u8>> {
    fn visit(root: &Utf8Path, folder: &Utf8Path, files: &mut BTreeMap<String, Vec<u8>>) {
        for entry in folder.read_dir_utf8().expect("list") {
            let entry = entry.expect("entry");
            let relative = entry.path().strip_prefix(root).unwrap().to_string();
            let kind = entry.file_type().expect("kind");
            if kind.is_symlink() {
                let target = std::fs::read_link(entry.path()).unwrap();
                files.insert(relative, target.to_string_lossy().as_bytes().to_vec());
            } else if kind.is_dir() {
                files.insert(format!("{relative}/"), Vec::new());
                visit(root, entry.path(), files);
            } else {
                files.insert(relative, std::fs::read(entry.path()).expect("read"));
            }
        }
    }
    let mut files = BTreeMap::new();
    visit(root, root, &mut files);
    files
}

/// A project with a composed path plugin and a `.git/config` of its own.
fn project_with_a_plugin(shelf: &PluginShelf) -> TestProject {
    let project = TestProject::default_framework();
    project.write(GIT_CONFIG, GIT_CONFIG_TEXT);
    let root = shelf.native("acme", 10, &[]);
    ok(&project.run(&["plugin", "add", root.as_str()]), "add");
    project
}

fn ok(run: &Run, what: &str) {
    assert_eq!(run.status, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
}

fn refused(run: &Run, what: &str, names: &str) {
    assert_ne!(run.status, 0, "{what} was not refused:\n{}", run.stderr);
    assert!(
        run.stderr.contains(names),
        "{what}: the refusal does not name {names}:\n{}",
        run.stderr
    );
}

fn assert_git_config_untouched(project: &TestProject, what: &str) {
    assert_eq!(
        project.read(GIT_CONFIG),
        GIT_CONFIG_TEXT,
        "{what}: .git/config"
    );
}

fn edit_lock(project: &TestProject, edit: impl FnOnce(&mut Value)) {
    let mut lock: Value = serde_json::from_str(&project.read("aidlc.lock.json")).unwrap();
    edit(&mut lock);
    project.write(
        "aidlc.lock.json",
        &serde_json::to_string_pretty(&lock).unwrap(),
    );
}

#[test]
fn a_lock_naming_a_path_outside_the_project_or_in_git_refuses_every_writer() {
    let shelf = PluginShelf::new();
    let canary = Canary::new();
    let outside = canary.file();
    let escapes = [
        GIT_CONFIG.to_owned(),
        outside.to_string(),
        "../../../../../../../../../../../../tmp/aidlc-containment-written".to_owned(),
        ".claude/../../outside.md".to_owned(),
    ];
    for path in &escapes {
        for key in ["stages", "files", "adopted"] {
            let project = project_with_a_plugin(&shelf);
            edit_lock(&project, |lock| match key {
                "stages" => {
                    lock["stages"][path] = serde_json::json!({
                        "base": "[core]\n\tfsmonitor = touch pwned\n",
                        "composed": "blake3:00"
                    });
                }
                "files" => {
                    lock["plugins"]["acme"]["files"][path] = Value::from("blake3:00");
                }
                _ => {
                    lock["plugins"]["acme"]["adopted"] = serde_json::json!([path]);
                }
            });
            for command in [
                &["plugin", "sync"][..],
                &["plugin", "remove", "acme"],
                &["plugin", "add", shelf.root.join("acme").as_str()],
            ] {
                let what = format!("{command:?} with {key} entry {path}");
                refused(&project.run(command), &what, "aidlc.lock.json");
                canary.assert_untouched(&what);
                assert_git_config_untouched(&project, &what);
                assert!(project.exists("aidlc.lock.json"), "{what}: the lock went");
            }
        }
    }
    assert!(!Utf8Path::new("/tmp/aidlc-containment-written").exists());
}

#[test]
fn a_planted_journal_is_refused_by_a_writer_and_left_alone_by_a_reader() {
    let shelf = PluginShelf::new();
    let canary = Canary::new();
    let outside = canary.file();
    let outside_folder = &canary.root;
    let manifests = [
        format!(r#"{{"entries": [{{"path": "{outside}", "image": "0"}}], "trees": [], "absent_dirs": []}}"#),
        r#"{"entries": [{"path": "../../../../../../../../../tmp/aidlc-containment-journal", "image": "0"}], "trees": [], "absent_dirs": []}"#.to_owned(),
        format!(r#"{{"entries": [], "trees": [{{"root": "{outside_folder}", "files": [], "existed": true}}], "absent_dirs": []}}"#),
        r#"{"entries": [{"path": ".git/config", "image": "0"}], "trees": [], "absent_dirs": []}"#.to_owned(),
        r#"{"entries": [{"path": "x.md", "image": "../../.git/config"}], "trees": [], "absent_dirs": []}"#.to_owned(),
        format!(r#"{{"entries": [], "trees": [], "absent_dirs": ["{outside_folder}/deep"]}}"#),
    ];
    for manifest in &manifests {
        let project = project_with_a_plugin(&shelf);
        project.write(JOURNAL_MANIFEST, manifest);
        project.write(
            ".aidlc-plugin-journal/images/0",
            "[core]\n\tfsmonitor = touch pwned\n",
        );
        let before = every_file(&project.root);
        for command in [&["plugin", "list"][..], &["doctor"], &["sensors"]] {
            let what = format!("{command:?} with the journal {manifest}");
            let _ = project.run(command);
            canary.assert_untouched(&what);
            assert_eq!(
                every_file(&project.root),
                before,
                "{what}: the project changed"
            );
        }
        for command in [&["plugin", "sync"][..], &["plugin", "remove", "acme"]] {
            let what = format!("{command:?} with the journal {manifest}");
            refused(&project.run(command), &what, JOURNAL_MANIFEST);
            canary.assert_untouched(&what);
            assert_git_config_untouched(&project, &what);
            assert!(project.exists(JOURNAL_MANIFEST), "{what}: the journal went");
        }
    }
    assert!(!Utf8Path::new("/tmp/aidlc-containment-journal").exists());
}

#[test]
fn a_harness_folder_linked_out_of_the_project_is_never_composed_into() {
    let shelf = PluginShelf::new();
    let canary = Canary::new();
    let project = TestProject::default_framework();
    project.write(GIT_CONFIG, GIT_CONFIG_TEXT);
    std::os::unix::fs::symlink(&canary.root, project.path(".claude/knowledge")).unwrap();
    let root = shelf.native("acme", 10, &[]);
    let added = project.run(&["plugin", "add", root.as_str()]);
    refused(
        &added,
        "add through a linked knowledge folder",
        ".claude/knowledge",
    );
    canary.assert_untouched("add through a linked knowledge folder");
    assert!(!project.exists("aidlc.lock.json"), "nothing was composed");
    assert!(!project.exists(".aidlc-plugin-journal"));
    // The link put in after the composition: the next sync refuses the same.
    std::fs::remove_file(project.path(".claude/knowledge")).unwrap();
    ok(&project.run(&["plugin", "add", root.as_str()]), "add");
    std::fs::remove_dir_all(project.path(".claude/knowledge")).unwrap();
    std::os::unix::fs::symlink(&canary.root, project.path(".claude/knowledge")).unwrap();
    refused(
        &project.run(&["plugin", "sync"]),
        "sync through a linked knowledge folder",
        ".claude/knowledge",
    );
    canary.assert_untouched("sync through a linked knowledge folder");
    assert_git_config_untouched(&project, "sync through a linked knowledge folder");
}

fn git(folder: &Utf8Path, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(folder)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.org")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.org")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_git_plugin_whose_knowledge_is_its_root_composes_no_git_folder_and_syncs_to_no_change() {
    if system_tool("git").is_none() {
        return;
    }
    let shelf = PluginShelf::new();
    shelf.write(
        "notes/.aidlc-plugin/plugin.json",
        "{\"name\": \"notes\", \"version\": \"1.0.0\", \"dependencies\": [\"core\"], \"aidlc\": {\"contributes\": {\"knowledge\": \".\"}}}\n",
    );
    shelf.write("notes/guide.md", "# Guide\n");
    let root = shelf.root.join("notes");
    git(&root, &["init", "--quiet", "--initial-branch=main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "--quiet", "-m", "v1"]);
    let bare = shelf.root.join("notes.git");
    git(
        &shelf.root,
        &["clone", "--quiet", "--bare", root.as_str(), bare.as_str()],
    );
    let project = TestProject::default_framework();
    ok(
        &project.run(&["plugin", "add", &format!("{bare}@main")]),
        "add",
    );
    assert!(project.exists(".claude/knowledge/guide.md"));
    assert!(
        !project.exists(".claude/knowledge/.git"),
        "no nested repository"
    );
    let lock = project.read("aidlc.lock.json");
    assert!(
        !lock.contains("/.git/"),
        "the lock records no .git file:\n{lock}"
    );
    let before = every_file(&project.root);
    let synced = project.run(&["plugin", "sync"]);
    ok(&synced, "sync right after add");
    assert!(
        synced.stderr.contains("nothing changed"),
        "{}",
        synced.stderr
    );
    let after = every_file(&project.root);
    let changed: Vec<&String> = after
        .iter()
        .filter(|(path, bytes)| before.get(*path) != Some(*bytes))
        .map(|(path, _)| path)
        .filter(|path| !path.contains(".aidlc-plugin-fingerprint"))
        .collect();
    assert!(changed.is_empty(), "sync changed {changed:?}");
}

#[test]
fn a_vendored_git_plugin_never_composes_through_a_committed_link_leading_out() {
    if system_tool("git").is_none() {
        return;
    }
    let shelf = PluginShelf::new();
    let canary = Canary::new();
    let root = shelf.native("remote", 10, &[]);
    git(&root, &["init", "--quiet", "--initial-branch=main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "--quiet", "-m", "v1"]);
    let bare = shelf.root.join("remote.git");
    git(
        &shelf.root,
        &["clone", "--quiet", "--bare", root.as_str(), bare.as_str()],
    );
    let project = TestProject::default_framework();
    project.write(GIT_CONFIG, GIT_CONFIG_TEXT);
    ok(
        &project.run(&["plugin", "add", &format!("{bare}@main")]),
        "add",
    );
    // A clone of the project whose `.claude/knowledge` was committed as a link leading out,
    // and whose composed copies are not there yet.
    std::fs::remove_dir_all(project.path(".claude/knowledge")).unwrap();
    std::os::unix::fs::symlink(&canary.root, project.path(".claude/knowledge")).unwrap();
    let before = every_file(&project.root);
    let synced = project.run(&["plugin", "sync"]);
    refused(
        &synced,
        "sync through a linked knowledge folder",
        ".claude/knowledge",
    );
    canary.assert_untouched("sync of a vendored git plugin through a linked knowledge folder");
    assert_git_config_untouched(&project, "sync through a linked knowledge folder");
    assert_eq!(
        every_file(&project.root),
        before,
        "the refused sync wrote nothing"
    );
}

#[test]
fn hook_install_never_writes_through_a_harness_folder_linked_out_of_the_project() {
    let canary = Canary::new();
    let project = TestProject::one_stage();
    project.write(GIT_CONFIG, GIT_CONFIG_TEXT);
    let outside = canary.root.join("deep/claude");
    std::fs::rename(project.path(".claude"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, project.path(".claude")).unwrap();
    let outside_before = every_file(&canary.root);
    let installed = project.run(&["hook", "install"]);
    assert_ne!(installed.status, 0, "hook install wrote through the link");
    assert_eq!(
        every_file(&canary.root),
        outside_before,
        "hook install changed files outside the project"
    );
    assert_git_config_untouched(&project, "hook install through a linked harness folder");
}

// --- Failure scenario S8 (docs/failure-modes.md): paths that leave the project ------------------

/// S8: `--output-path ../outside`, an absolute path outside the project, and a symbolic link
/// inside the project pointing outside are refused, as are a sensor id or stage slug holding
/// `..`, all before any audit row; a gate deliverable that links outside is refused before any
/// fire; detail files stay inside the record's sensors folder; writes into that folder (with
/// either separator) do not trigger sensors.
///
/// Not applicable: a plugin name holding `..` (plugins are not built yet). The folders the
/// engine writes into resolving outside the project are
/// `ledger_integrity::a_symlinked_audit_folder_is_refused_before_any_row`,
/// `ledger_integrity::a_symlinked_engine_folder_is_refused_before_any_row` and
/// `ledger_integrity::a_symlinked_stage_detail_folder_is_refused_before_any_row`; also
/// `engine::pre_flight_refusals_write_no_audit_row`,
/// `gate::a_symlinked_deliverable_pointing_outside_is_refused_before_any_fire`,
/// `gate_step::a_symlinked_deliverable_pointing_outside_is_refused_before_any_fire` and
/// `gate_step::usage_and_environment_errors_exit_2` (`--unit ../x`).
#[test]
fn scenario_08_paths_that_leave_the_project_are_refused_before_any_row() {
    let project = scenario::scenario_project(&[
        scenario::Sensor::write("probe", SHAPE, "**/*.md"),
        scenario::Sensor::gate("shape", SHAPE, "blocking"),
    ]);
    let outside = TestProject::empty();
    outside.write("elsewhere.md", "# Elsewhere\n\nFAIL\n");
    let outside_name = outside.root.file_name().unwrap();
    std::os::unix::fs::symlink(
        outside.path("elsewhere.md"),
        project.path(&format!("{STAGE_DIR}/linked.md")),
    )
    .unwrap();
    let relative_outside = format!("../{outside_name}/elsewhere.md");
    let absolute_outside = outside.path("elsewhere.md").to_string();
    let linked = format!("{STAGE_DIR}/linked.md");
    let refused: [([&str; 3], &str); 5] = [
        (
            ["probe", STAGE, &relative_outside],
            "is outside the project",
        ),
        (
            ["probe", STAGE, &absolute_outside],
            "is outside the project",
        ),
        (["probe", STAGE, &linked], "is outside the project"),
        (
            ["../../probe", STAGE, DOC_A],
            "unknown sensor id: \"../../probe\"",
        ),
        (
            ["probe", "../../etc", DOC_A],
            "unknown stage slug: \"../../etc\"",
        ),
    ];
    for (words, expected) in refused {
        let fired = scenario::fire_on_stage(&project, words[0], words[1], words[2]);
        assert_eq!(fired.status, 2, "{words:?}: {}", fired.stderr);
        assert!(
            fired.stderr.contains(expected),
            "{words:?}: {}",
            fired.stderr
        );
        assert!(fired.stdout.is_empty(), "{words:?}: {}", fired.stdout);
    }
    assert!(
        !project.exists(&format!("{RECORD}/audit")),
        "a row was written"
    );
    assert_eq!(
        scenario::tree_bytes(&outside).len(),
        1,
        "something was written outside"
    );

    // A detail file lands in the record's sensors folder, inside the project.
    project.write(DOC_B, "# B\n\nFAIL\n");
    let failed = scenario::verdict_line(&scenario::fire(&project, "probe", DOC_B));
    assert_eq!(failed["result"], "failed");
    let detail = failed["detail_path"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("{RECORD}/.aidlc-engine/sensors/{STAGE}/probe-")),
        "{detail}"
    );
    let real_detail = project.path(detail).canonicalize_utf8().unwrap();
    assert!(real_detail.starts_with(&project.root), "{real_detail}");

    // Writes into the sensors folder do not fire sensors, whichever separator the path uses.
    let rows = scenario::blocks(&project).len();
    let detail_with_backslashes = format!("{}/{}", project.root, detail.replace('/', "\\"));
    for written in [project.path(detail).to_string(), detail_with_backslashes] {
        assert_eq!(scenario::hook(&project, &written).status, 0);
        assert_eq!(
            scenario::blocks(&project).len(),
            rows,
            "{written} fired a sensor"
        );
        assert_eq!(scenario::drops(&project), "", "{written}");
    }

    // A deliverable that links outside is refused before any gate fire, by both gates.
    project.remove(&format!("{STAGE_DIR}/linked.md"));
    project.remove(DOC_A);
    std::os::unix::fs::symlink(outside.path("elsewhere.md"), project.path(DOC_A)).unwrap();
    let start = scenario::gate_start(&project, &[]);
    assert_eq!(start.status, 2, "{}", start.stderr);
    assert!(
        start.stderr.contains("Refusing gate sensor artifact"),
        "{}",
        start.stderr
    );
    let check = scenario::run(&project, &["gate", "check", "--no-record"]);
    assert_eq!(check.status, 2, "{}", check.stderr);
    assert!(
        check.stderr.contains("Refusing gate sensor artifact"),
        "{}",
        check.stderr
    );
    assert_eq!(
        scenario::blocks(&project).len(),
        rows,
        "a gate fired through the link"
    );
}

// --- Failure scenario S18 (docs/failure-modes.md): hermeticity ----------------------------------

/// S18: a CI check (`compile --check`, `gate check --no-record` in every format, `sensor list`
/// and `describe`) leaves the project byte-identical; and a test-style run aimed at a fixture
/// project (`--project-dir`), even from inside the real project and with `CLAUDE_PROJECT_DIR`
/// naming it (as in an agent's session), writes only into the fixture: no fixture sensor, row or
/// temp path leaks into the real project's ledger.
///
/// The test suite itself runs every command through `support::TestProject::command`, which
/// removes the caller's `AIDLC_*` and `CLAUDE_PROJECT_DIR` variables and always names the
/// fixture's folder. Also covered by `gate::no_record_leaves_the_project_byte_identical` and
/// `compile::compile_check_writes_nothing_with_or_without_drift_or_a_record`.
#[test]
fn scenario_18_ci_checks_and_fixture_runs_leave_the_real_project_byte_identical() {
    let real = scenario::scenario_project(&[
        scenario::Sensor::gate("shape", SHAPE, "blocking"),
        scenario::Sensor::write("probe", PASS, "**/*.md"),
    ]);
    // A real project has a history: one recorded fire, and a clone id.
    assert_eq!(
        scenario::verdict_line(&scenario::fire(&real, "probe", DOC_A))["result"],
        "passed"
    );
    let before = scenario::tree_bytes(&real);
    for args in [
        vec!["compile", "--check"],
        vec!["gate", "check", "--no-record"],
        vec!["gate", "check", "--no-record", "--format", "json"],
        vec!["gate", "check", "--no-record", "--format", "github"],
        vec!["gate", "check", "--no-record", "--format", "sarif"],
        vec!["gate", "check", "--no-record", "--fire-on", "all"],
        vec!["engine", "sensor", "list"],
        vec!["engine", "sensor", "describe", "shape"],
    ] {
        let ran = scenario::run(&real, &args);
        assert_eq!(ran.status, 0, "{args:?}: {}", ran.stderr);
        assert!(
            scenario::tree_bytes(&real) == before,
            "{args:?} wrote into the project"
        );
    }

    let fixture = scenario::scenario_project(&[
        scenario::Sensor::gate("fixture-only-gate", SHAPE, "blocking"),
        scenario::Sensor::write("fixture-only-probe", PASS, "**/*.md"),
    ]);
    let aimed = |args: &[&str], stdin: Option<&str>| {
        let mut full = args.to_vec();
        full.extend(["--project-dir", fixture.root.as_str()]);
        fixture.run_watched_in(
            &real.root,
            &full,
            &[("CLAUDE_PROJECT_DIR", real.root.as_str())],
            stdin,
        )
    };
    let fired = aimed(
        &[
            "engine",
            "sensor",
            "fire",
            "fixture-only-probe",
            "--stage",
            STAGE,
            "--output-path",
            fixture.path(DOC_A).as_str(),
        ],
        None,
    );
    assert_eq!(scenario::verdict_line(&fired)["result"], "passed");
    let payload = serde_json::json!({"tool_input": {"file_path": fixture.path(DOC_B)}}).to_string();
    assert_eq!(
        aimed(&["engine", "hook", "run-sensors"], Some(&payload)).status,
        0
    );
    assert_eq!(aimed(&["engine", "gate", "start", STAGE], None).status, 0);
    assert_eq!(aimed(&["gate", "check"], None).status, 0);
    assert_eq!(aimed(&["compile", "--force"], None).status, 0);

    assert!(
        scenario::tree_bytes(&real) == before,
        "a fixture run wrote into the real project"
    );
    let fixture_rows = scenario::blocks(&fixture);
    assert_eq!(
        scenario::events(&fixture_rows, "SENSOR_FIRED").len(),
        1 + 1 + 2 + 2,
        "fire, scenario::hook, gate start and gate check all wrote into the fixture"
    );
    assert_eq!(scenario::gate_rows(&fixture).len(), 1);
    for (path, bytes) in &before {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains("fixture-only") && !text.contains(fixture.root.as_str()),
            "{path} holds a fixture's trace"
        );
    }
}
