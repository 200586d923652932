//! Every write stays inside the project whatever the data says: a planted plugin journal, a
//! lock file naming paths outside the project or inside `.git`, and harness folders that are
//! links leading out. After each command a canary tree beside the project and the project's
//! `.git/config` are byte-identical and nothing new exists outside; the read-only commands
//! (`plugin list`, `doctor`, `sensors`) write nothing at all, journal or not.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::plugins::PluginShelf;
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
