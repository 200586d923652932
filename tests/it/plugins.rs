//! `aidlc plugin add|remove|list|sync`, the composition: the reference's own plugin
//! composed into a copy of the 2.5.36 install gives the bytes the reference composer writes
//! there (run with Bun), a second sync changes nothing, removal gives back the install, a kill
//! at any point leaves the install as before or after, the guards refuse before anything is
//! written, and 100 plugins compose and compile.

use std::collections::BTreeMap;
use std::process::Command;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{
    GRAPH, Run, TestProject, copy_tree, fifo_at, node_tool, oversized, said, system_tool,
};

/// The vendored reference plugin (`test-pro-source` as authored, `test-pro-claude-projection`
/// as projected for Claude, with the reference composer).
fn reference_plugin_dir(name: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference-plugins")
        .join(name)
}

/// A temporary folder holding copies of plugins.
pub(crate) struct PluginShelf {
    _dir: tempfile::TempDir,
    pub(crate) root: Utf8PathBuf,
}

impl PluginShelf {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().expect("canonical"))
            .expect("UTF-8 temp dir");
        Self { _dir: dir, root }
    }

    /// A copy of a vendored reference plugin.
    pub(crate) fn reference(&self, name: &str) -> Utf8PathBuf {
        let target = self.root.join(name);
        copy_tree(&reference_plugin_dir(name), &target);
        target
    }

    /// The reference plugin as projected for `OpenCode`: the Claude Code projection with the
    /// `OpenCode` manifests and hook command in place of Claude Code's.
    fn reference_opencode_projection(&self) -> Utf8PathBuf {
        let target = self.root.join("test-pro-opencode");
        copy_tree(&reference_plugin_dir("test-pro-claude-projection"), &target);
        std::fs::remove_dir_all(target.join(".claude-plugin")).unwrap();
        copy_tree(
            &reference_plugin_dir("test-pro-opencode-projection"),
            &target,
        );
        target
    }

    pub(crate) fn write(&self, relative: &str, text: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A plugin for the default framework: a stage importing the plugin's own sensor, the
    /// sensor and its tool, an agent, and a contribution to `build-and-test` (produces, sensors,
    /// a fragment at the end of its steps, one in its Sensors section).
    pub(crate) fn native(&self, name: &str, order: u32, dependencies: &[&str]) -> Utf8PathBuf {
        let root = name.to_owned();
        let deps: Vec<String> = dependencies.iter().map(|d| format!("\"{d}\"")).collect();
        self.write(
            &format!("{root}/.aidlc-plugin/plugin.json"),
            &format!(
                "{{\"name\": \"{name}\", \"version\": \"1.2.0\", \"dependencies\": [\"core\"{}{}]}}\n",
                if deps.is_empty() { "" } else { ", " },
                deps.join(", ")
            ),
        );
        self.write(
            &format!("{root}/stages/construction/{name}-check.md"),
            &format!(
                "---\nslug: {name}-check\nname: {name} check\nplugin: {name}\nphase: construction\nexecution: CONDITIONAL\ncondition: When the {name} plugin is active\nlead_agent: aidlc-quality-agent\nsupport_agents:\n  - {name}-helper-agent\nmode: inline\nproduces:\n  - {name}-report\nconsumes:\n  - artifact: build-and-test-summary\n    required: false\nrequires_stage:\n  - build-and-test\nsensors:\n  - {name}-lint\nscopes:\n  - feature\ninputs: The build summary\noutputs: {name}-report.md\n---\n\n# {name} check\n\nRead `{{{{HARNESS_DIR}}}}/knowledge/{name}-helper-agent/notes.md` and write the report.\n"
            ),
        );
        self.write(
            &format!("{root}/sensors/aidlc-{name}-lint.md"),
            &format!(
                "---\nid: {name}-lint\nkind: deterministic\ncommand: sh .claude/tools/aidlc-sensor-{name}-lint.sh\ndefault_severity: advisory\ndescription: Checks the {name} report\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {name}-lint sensor\n"
            ),
        );
        self.write(
            &format!("{root}/tools/aidlc-sensor-{name}-lint.sh"),
            "#!/bin/sh\necho '{\"pass\": true, \"findings_count\": 0}'\n",
        );
        self.write(
            &format!("{root}/agents/{name}-helper-agent.md"),
            &format!(
                "---\nname: {name}-helper-agent\nplugin: {name}\ndisplay_name: {name} helper\ndescription: Helps with {name}\n---\n\n# {name} helper\n"
            ),
        );
        self.write(
            &format!("{root}/knowledge/{name}-helper-agent/notes.md"),
            "# Notes\n\nKnow {{HARNESS_DIR}} well.\n",
        );
        self.write(
            &format!("{root}/contributions/construction/build-and-test.md"),
            &format!(
                "---\ntarget: build-and-test\nplugin: {name}\nadds:\n  produces:\n    - {name}-extra\n  sensors:\n    - {name}-lint\nfragments:\n  - anchor: end-of-steps\n    order: {order}\n  - anchor: in:Sensors\n    order: {order}\n---\n\n## fragment: end-of-steps\n\n5. ({name}) Write `{name}-extra.md`.\n\n## fragment: in:Sensors\n\n- `{name}-lint` checks the {name} report.\n"
            ),
        );
        self.root.join(root)
    }
}

/// Every file under `root` by its `/` path, `.git` left out.
fn snapshot(root: &Utf8Path) -> BTreeMap<String, Vec<u8>> {
    snapshot_of(root, false)
}

/// [`snapshot`] while a sync may still be writing under `root`: an entry that goes away
/// between its folder's listing and its reading is left out, as if listed a moment later.
fn snapshot_while_a_sync_runs(root: &Utf8Path) -> BTreeMap<String, Vec<u8>> {
    snapshot_of(root, true)
}

fn snapshot_of(root: &Utf8Path, running: bool) -> BTreeMap<String, Vec<u8>> {
    fn gone<T>(result: std::io::Result<T>, running: bool, what: &str) -> Option<T> {
        match result {
            Err(error) if running && error.kind() == std::io::ErrorKind::NotFound => None,
            other => Some(other.expect(what)),
        }
    }
    fn visit(
        root: &Utf8Path,
        folder: &Utf8Path,
        running: bool,
        files: &mut BTreeMap<String, Vec<u8>>,
    ) {
        let Some(entries) = gone(folder.read_dir_utf8(), running, "list") else {
            return;
        };
        for entry in entries {
            let Some(entry) = gone(entry, running, "entry") else {
                continue;
            };
            // `.git`, the tests' home folder (Bun's caches land there), and the sync's own
            // record (a machine-local cache, D51) beside the compile's.
            if entry.file_name() == ".git"
                || entry.path() == root.join(".home")
                || entry.file_name() == ".aidlc-plugin-fingerprint"
            {
                continue;
            }
            let Some(kind) = gone(entry.file_type(), running, "type") else {
                continue;
            };
            if kind.is_dir() {
                visit(root, entry.path(), running, files);
            } else if let Some(bytes) = gone(std::fs::read(entry.path()), running, "read") {
                let relative = entry.path().strip_prefix(root).unwrap().to_string();
                files.insert(relative, bytes);
            }
        }
    }
    let mut files = BTreeMap::new();
    visit(root, root, running, &mut files);
    files
}

/// The folders of the snapshot (an emptied folder left behind is a difference too).
fn folders(root: &Utf8Path) -> Vec<String> {
    fn visit(root: &Utf8Path, folder: &Utf8Path, out: &mut Vec<String>) {
        for entry in folder.read_dir_utf8().expect("list").filter_map(Result::ok) {
            if entry.file_type().is_ok_and(|kind| kind.is_dir())
                && entry.file_name() != ".git"
                && entry.path() != root.join(".home")
            {
                out.push(entry.path().strip_prefix(root).unwrap().to_string());
                visit(root, entry.path(), out);
            }
        }
    }
    let mut out = Vec::new();
    visit(root, root, &mut out);
    out.sort();
    out
}

fn differing(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut names: Vec<String> = a
        .iter()
        .filter(|(path, bytes)| b.get(*path) != Some(*bytes))
        .map(|(path, _)| path.clone())
        .collect();
    names.extend(b.keys().filter(|path| !a.contains_key(*path)).cloned());
    names
}

fn assert_same(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    let differ = differing(a, b);
    assert!(differ.is_empty(), "{what}: these files differ: {differ:?}");
}

/// A hooks-health drop log (`plugin-compose-<key>.drops`).
fn is_drops_file(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, extension)| extension == "drops")
}

/// `PATH` with Bun's folder first.
pub(crate) fn path_with(tool: &Utf8Path) -> String {
    format!(
        "{}:{}",
        tool.parent().unwrap(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn plugin(project: &TestProject, args: &[&str], path: &str) -> Run {
    project.run_with_env(args, &[("PATH", path)])
}

fn ok(run: &Run, what: &str) {
    assert_eq!(run.status, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
}

/// The reference composer run on the Claude Code install `project` for the plugin at `root`.
fn reference_compose(bun: &Utf8Path, project: &TestProject, root: &Utf8Path) -> Run {
    reference_compose_in(bun, project, root, ".claude")
}

/// The reference composer run on `project`, whose harness folder is `harness_dir`, for the
/// plugin at `root`.
fn reference_compose_in(
    bun: &Utf8Path,
    project: &TestProject,
    root: &Utf8Path,
    harness_dir: &str,
) -> Run {
    let mut command = Command::new(bun);
    command
        .arg(root.join("hooks/compose.ts"))
        .current_dir(&project.root)
        .env("PATH", path_with(bun))
        .env("AIDLC_PLUGIN_ROOT", root)
        .env("AIDLC_PROJECT_DIR", &project.root)
        .env("AIDLC_HARNESS_DIR", harness_dir);
    for (name, _) in std::env::vars() {
        if name.starts_with("AIDLC_")
            && ![
                "AIDLC_PLUGIN_ROOT",
                "AIDLC_PROJECT_DIR",
                "AIDLC_HARNESS_DIR",
            ]
            .contains(&name.as_str())
            || ["CLAUDE_PLUGIN_ROOT", "PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"].contains(&name.as_str())
        {
            command.env_remove(name);
        }
    }
    Run::from(command.output().expect("run bun"))
}

// --- Against the reference composer (Bun) ------------------------------------------------------

#[test]
fn the_reference_plugin_composed_by_aidlc_equals_what_the_reference_composer_writes() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    let source = shelf.reference("test-pro-source");

    let theirs = TestProject::reference_install("2.5.36");
    let reference = reference_compose(&bun, &theirs, &projection);
    ok(&reference, "the reference composer");
    let their_files = snapshot(&theirs.root);
    assert!(
        !their_files.keys().any(|path| is_drops_file(path)),
        "the reference composer dropped something: {:?}",
        their_files
            .keys()
            .filter(|path| is_drops_file(path))
            .collect::<Vec<_>>()
    );
    assert!(their_files.contains_key(".claude/tools/data/plugin-contrib-test-pro.json"));

    // From the host projection (what CLAUDE_PLUGIN_ROOT names) and from the tree as authored.
    for root in [&projection, &source] {
        let ours = TestProject::reference_install("2.5.36");
        let added = plugin(&ours, &["plugin", "add", root.as_str()], &path_with(&bun));
        ok(&added, "aidlc plugin add");
        assert!(
            added.stderr.contains("added: test-pro composed;"),
            "{}",
            added.stderr
        );
        let mut our_files = snapshot(&ours.root);
        let lock = our_files
            .remove("aidlc.lock.json")
            .expect("aidlc.lock.json is written");
        assert_same(
            &their_files,
            &our_files,
            &format!("aidlc plugin add {root}"),
        );
        assert_eq!(
            folders(&theirs.root),
            folders(&ours.root),
            "the same folders"
        );
        let lock: Value = serde_json::from_slice(&lock).unwrap();
        assert_eq!(lock["plugins"]["test-pro"]["version"], "0.1.0");
        assert_eq!(
            lock["stages"].as_object().unwrap().len(),
            4,
            "the four core stages the contributions enrich"
        );
        // The reference's own drift guard agrees with the graph aidlc compiled.
        let check = Command::new(&bun)
            .args([".claude/tools/aidlc-graph.ts", "compile", "--check"])
            .current_dir(&ours.root)
            .env_remove("AIDLC_PROJECT_DIR")
            .env_remove("CLAUDE_PROJECT_DIR")
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

#[test]
fn a_second_sync_changes_nothing_and_removal_gives_back_the_install_byte_for_byte() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    let project = TestProject::reference_install("2.5.36");
    let bare = snapshot(&project.root);
    let bare_folders = folders(&project.root);
    let path = path_with(&bun);
    ok(
        &plugin(&project, &["plugin", "add", projection.as_str()], &path),
        "add",
    );
    let composed = snapshot(&project.root);

    let again = plugin(&project, &["plugin", "sync"], &path);
    ok(&again, "sync");
    assert!(
        again
            .stderr
            .contains("up to date: test-pro composed; nothing changed"),
        "{}",
        again.stderr
    );
    assert_same(&composed, &snapshot(&project.root), "a second sync");
    // The SessionStart hook's way: the host names the plugin root.
    let hook = project.run_with_env(
        &["plugin", "sync"],
        &[
            ("PATH", &path),
            ("CLAUDE_PLUGIN_ROOT", projection.as_str()),
            ("AIDLC_HARNESS_DIR", ".claude"),
        ],
    );
    ok(&hook, "sync from the hook");
    assert_same(&composed, &snapshot(&project.root), "the hook's sync");

    let listed = plugin(&project, &["plugin", "list", "--format", "json"], &path);
    ok(&listed, "list");
    let listing: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listing["selection"], Value::Null);
    assert_eq!(listing["plugins"][1]["name"], "test-pro");
    assert_eq!(listing["plugins"][1]["enabled"], true);
    assert_eq!(
        listing["plugins"][1]["changed_files"],
        serde_json::json!([])
    );

    let removed = plugin(&project, &["plugin", "remove", "test-pro"], &path);
    ok(&removed, "remove");
    assert_same(&bare, &snapshot(&project.root), "after remove");
    assert_eq!(
        bare_folders,
        folders(&project.root),
        "no folder is left behind"
    );
}

/// The stage slugs of `graph` a plugin owns, enabled or not.
fn plugin_stage_slugs(graph: &str) -> Vec<String> {
    let graph: Value = serde_json::from_str(graph).unwrap();
    graph
        .as_array()
        .unwrap()
        .iter()
        .filter(|stage| stage.get("plugin").is_some_and(|owner| owner != "aidlc"))
        .map(|stage| stage["slug"].as_str().unwrap().to_owned())
        .collect()
}

/// Rewrite the project's compiled graph without any plugin's stages.
fn drop_plugin_stages_from_graph(project: &TestProject) {
    let path = project.root.join(GRAPH);
    let mut graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    graph
        .as_array_mut()
        .unwrap()
        .retain(|stage| stage.get("plugin").is_none_or(|owner| owner == "aidlc"));
    std::fs::write(path, serde_json::to_string_pretty(&graph).unwrap()).unwrap();
}

#[test]
fn a_graph_that_lost_the_composed_stages_is_compiled_again_by_sync_as_by_the_reference_composer() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    let composed_slugs = ["test-pro-integration", "test-pro-full-suite"];

    let theirs = TestProject::reference_install("2.5.36");
    ok(
        &reference_compose(&bun, &theirs, &projection),
        "the reference composer",
    );
    drop_plugin_stages_from_graph(&theirs);
    ok(
        &reference_compose(&bun, &theirs, &projection),
        "the reference composer on a graph without the plugin's stages",
    );
    assert_eq!(plugin_stage_slugs(&theirs.read(GRAPH)), composed_slugs);

    let ours = TestProject::reference_install("2.5.36");
    let path = path_with(&bun);
    ok(
        &plugin(&ours, &["plugin", "add", projection.as_str()], &path),
        "add",
    );
    let composed_graph = ours.read(GRAPH);
    assert_eq!(plugin_stage_slugs(&composed_graph), composed_slugs);
    ok(&plugin(&ours, &["plugin", "sync"], &path), "a sync");
    // That sync recorded what it read; past the racy window, the record would prove the next.
    sync_record_past_the_racy_window(
        &ours
            .root
            .join(".claude/tools/data/.aidlc-plugin-fingerprint"),
    );

    drop_plugin_stages_from_graph(&ours);
    let synced = plugin(&ours, &["plugin", "sync"], &path);
    ok(&synced, "sync on a graph without the plugin's stages");
    assert!(
        synced
            .stderr
            .contains("(the compiled graph lacked stages the plugins composed)")
            && !synced.stderr.contains("nothing changed"),
        "{}",
        synced.stderr
    );
    assert_eq!(
        ours.read(GRAPH),
        composed_graph,
        "the graph is compiled again"
    );
    let again = plugin(&ours, &["plugin", "sync"], &path);
    ok(&again, "the sync after");
    assert!(again.stderr.contains("nothing changed"), "{}", again.stderr);
}

/// The reference's `select-plugins` run on `project`: it writes `harness.json`'s `plugins` and
/// strips a disabled plugin's merged contributions from the core stages.
pub(crate) fn reference_select_plugins(
    bun: &Utf8Path,
    project: &TestProject,
    names: &[&str],
) -> Run {
    let mut command = Command::new(bun);
    command
        .args([".claude/tools/aidlc-utility.ts", "select-plugins"])
        .args(names)
        .current_dir(&project.root)
        .env("PATH", path_with(bun));
    for (name, _) in std::env::vars() {
        if name.starts_with("AIDLC_") || name.starts_with("CLAUDE_") {
            command.env_remove(name);
        }
    }
    Run::from(command.output().expect("run bun"))
}

/// The four core stages test-pro contributes to, and its sidecar.
const TEST_PRO_MERGED_FILES: [&str; 5] = [
    ".claude/aidlc-common/stages/construction/build-and-test.md",
    ".claude/aidlc-common/stages/construction/nfr-design.md",
    ".claude/aidlc-common/stages/construction/nfr-requirements.md",
    ".claude/aidlc-common/stages/operation/performance-validation.md",
    ".claude/tools/data/plugin-contrib-test-pro.json",
];

#[test]
fn a_plugin_the_references_select_plugins_stripped_and_enabled_again_is_composed_again_by_sync() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    let path = path_with(&bun);

    let theirs = TestProject::reference_install("2.5.36");
    ok(
        &reference_compose(&bun, &theirs, &projection),
        "the reference composer",
    );
    ok(
        &reference_select_plugins(&bun, &theirs, &["aidlc"]),
        "their select-plugins aidlc",
    );
    ok(
        &reference_select_plugins(&bun, &theirs, &["aidlc", "test-pro"]),
        "their select-plugins aidlc test-pro",
    );
    ok(
        &reference_compose(&bun, &theirs, &projection),
        "the reference composer after select-plugins",
    );

    let ours = TestProject::reference_install("2.5.36");
    ok(
        &plugin(&ours, &["plugin", "add", projection.as_str()], &path),
        "add",
    );
    let composed = snapshot(&ours.root);
    let stripped = reference_select_plugins(&bun, &ours, &["aidlc"]);
    ok(&stripped, "select-plugins aidlc");
    assert!(
        stripped.stdout.contains("Stripped merged contributions"),
        "{}",
        stripped.stdout
    );
    ok(
        &plugin(&ours, &["plugin", "sync"], &path),
        "sync with test-pro disabled",
    );
    assert!(!ours.root.join(TEST_PRO_MERGED_FILES[4]).exists());
    ok(
        &reference_select_plugins(&bun, &ours, &["aidlc", "test-pro"]),
        "select-plugins aidlc test-pro",
    );
    let synced = plugin(&ours, &["plugin", "sync"], &path);
    ok(&synced, "sync with test-pro enabled again");
    assert!(
        !synced.stderr.contains("changed since"),
        "{}",
        synced.stderr
    );
    let recomposed = snapshot(&ours.root);
    for file in TEST_PRO_MERGED_FILES.iter().chain([&GRAPH]) {
        assert_eq!(
            recomposed.get(*file),
            composed.get(*file),
            "{file} is composed again"
        );
        assert_eq!(
            Some(&theirs.read(file).into_bytes()),
            recomposed.get(*file),
            "{file} as the reference composer writes it"
        );
    }

    // A hand edit inside a contribution is not a strip: refused once, nothing written.
    let edited = ours.root.join(TEST_PRO_MERGED_FILES[0]);
    let text = std::fs::read_to_string(&edited).unwrap();
    let marker = text
        .find("<!-- plugin:test-pro:")
        .expect("a spliced fragment");
    let line_end = marker + text[marker..].find('\n').unwrap() + 1;
    let hand_edited = format!("{}a hand edit\n{}", &text[..line_end], &text[line_end..]);
    std::fs::write(&edited, &hand_edited).unwrap();
    let refused = plugin(&ours, &["plugin", "sync"], &path);
    assert_ne!(refused.status, 0, "{}", refused.stderr);
    assert_eq!(
        refused
            .stderr
            .matches("changed since plugin contributions were merged")
            .count(),
        1,
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains(TEST_PRO_MERGED_FILES[0]));
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), hand_edited);
}

#[test]
fn the_reference_plugin_composed_on_opencode_gives_the_reference_composers_files_and_native_agent()
{
    const NATIVE_AGENT: &str = ".opencode/agents/test-pro-metrics-agent.md";
    const HARNESS_AGENT: &str = ".aidlc/agents/test-pro-metrics-agent.md";
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let projection = shelf.reference_opencode_projection();

    let theirs = crate::harnesses::bare_projection("opencode");
    ok(
        &reference_compose_in(&bun, &theirs, &projection, ".aidlc"),
        "the reference composer on OpenCode",
    );
    let their_files = snapshot(&theirs.root);
    assert!(their_files.contains_key(NATIVE_AGENT));

    let ours = crate::harnesses::bare_projection("opencode");
    let bare = snapshot(&ours.root);
    let path = path_with(&bun);
    ok(
        &plugin(&ours, &["plugin", "add", projection.as_str()], &path),
        "aidlc plugin add on OpenCode",
    );
    let mut our_files = snapshot(&ours.root);
    our_files
        .remove("aidlc.lock.json")
        .expect("aidlc.lock.json is written");
    assert_same(&their_files, &our_files, "aidlc plugin add on OpenCode");
    let native = ours.read(NATIVE_AGENT);
    assert!(
        native.contains("\npermission:\n  task: deny\nmode: subagent\n---\n")
            && !native.contains("disallowedTools"),
        "{native}"
    );
    for agent in [NATIVE_AGENT, HARNESS_AGENT] {
        let text = ours.read(agent);
        assert!(
            text.contains("`aidlc/spaces/default/memory/`") && !text.contains(".aidlc/rules/"),
            "{agent}: {text}"
        );
    }

    let again = plugin(&ours, &["plugin", "sync"], &path);
    ok(&again, "sync");
    assert!(again.stderr.contains("nothing changed"), "{}", again.stderr);
    ok(
        &plugin(&ours, &["plugin", "remove", "test-pro"], &path),
        "remove",
    );
    // The test's projection keeps the Claude install's runner skills, naming `.claude/`; the
    // conductor's refresh writes them for `.aidlc/`, as the reference's OpenCode install has
    // them. Every other file is given back.
    let without_runner_skills = |files: BTreeMap<String, Vec<u8>>| {
        files
            .into_iter()
            .filter(|(path, _)| !path.starts_with(".aidlc/skills/"))
            .collect::<BTreeMap<_, _>>()
    };
    assert_same(
        &without_runner_skills(bare),
        &without_runner_skills(snapshot(&ours.root)),
        "after remove",
    );
    assert!(!ours.root.join(NATIVE_AGENT).exists());
}

/// The lines of every hooks-health drop log in `files`.
fn drop_lines(files: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    files
        .iter()
        .filter(|(path, _)| is_drops_file(path))
        .flat_map(|(_, bytes)| {
            String::from_utf8_lossy(bytes)
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_plugin_stage_kiro_cannot_dispatch_is_left_out_with_the_references_warning_and_the_rest_composes()
 {
    const LEFT_OUT: &str = ".kiro/aidlc-common/stages/operation/test-pro-full-suite.md";
    const COMPOSED: &str = ".kiro/aidlc-common/stages/construction/test-pro-integration.md";
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    // Its lead (trusted by the conductor, with no agent JSON) is dispatched; its reviewer (no
    // agent JSON, not trusted) is dispatched on every mode. Neither can run on Kiro.
    rewrite(
        &projection.join("stages/operation/test-pro-full-suite.md"),
        "mode: inline\n",
        "mode: subagent\nreviewer: test-pro-metrics-agent\n",
    );
    let expected = [
        "[degraded] plugin \"test-pro\" stage \"test-pro-full-suite\" references agent \"aidlc-quality-agent\" with mode \"subagent\" and was not composed: author .kiro/agents/aidlc-quality-agent.json (",
        "[degraded] plugin \"test-pro\" stage \"test-pro-full-suite\" references agent \"test-pro-metrics-agent\" as reviewer and was not composed: author .kiro/agents/test-pro-metrics-agent.json (",
    ];
    let trust = " and add \"test-pro-metrics-agent\" to toolsSettings.subagent.trustedAgents in .kiro/agents/aidlc.json, or ";

    let theirs = crate::harnesses::bare_projection("kiro");
    ok(
        &reference_compose_in(&bun, &theirs, &projection, ".kiro"),
        "the reference composer on Kiro",
    );
    let mut their_files = snapshot(&theirs.root);
    let their_drops = drop_lines(&their_files);
    their_files.retain(|path, _| !is_drops_file(path));

    let ours = crate::harnesses::bare_projection("kiro");
    let added = plugin(
        &ours,
        &["plugin", "add", projection.as_str()],
        &path_with(&bun),
    );
    ok(&added, "aidlc plugin add on Kiro");
    for (what, lines) in [
        ("the reference composer's drops", their_drops.clone()),
        (
            "aidlc's warnings",
            added.stderr.lines().map(str::to_owned).collect(),
        ),
    ] {
        for sentence in expected {
            assert_eq!(
                lines.iter().filter(|line| line.contains(sentence)).count(),
                1,
                "{what}: {sentence}\n{lines:#?}"
            );
        }
        assert!(
            lines
                .iter()
                .any(|line| line.contains(expected[1]) && line.contains(trust)),
            "{what}: {lines:#?}"
        );
        assert!(
            !lines
                .iter()
                .any(|line| line.contains(expected[0]) && line.contains("trustedAgents")),
            "{what}: the conductor trusts aidlc-quality-agent: {lines:#?}"
        );
    }
    assert!(
        added
            .stderr
            .contains("warning: [degraded] plugin \"test-pro\""),
        "{}",
        added.stderr
    );

    let mut our_files = snapshot(&ours.root);
    let lock = our_files
        .remove("aidlc.lock.json")
        .expect("aidlc.lock.json is written");
    assert_same(&their_files, &our_files, "aidlc plugin add on Kiro");
    assert!(!our_files.contains_key(LEFT_OUT) && our_files.contains_key(COMPOSED));
    assert!(
        !String::from_utf8_lossy(&lock).contains(LEFT_OUT),
        "the left-out stage is not recorded as composed"
    );
    assert_eq!(
        plugin_stage_slugs(&ours.read(".kiro/tools/data/stage-graph.json")),
        ["test-pro-integration"]
    );
}

#[test]
fn on_codex_and_opencode_a_stage_without_its_agents_surface_is_left_out_as_by_the_reference_composer()
 {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let shelf = PluginShelf::new();
    let claude_projection = shelf.reference("test-pro-claude-projection");
    let opencode_projection = shelf.reference_opencode_projection();
    for projection in [&claude_projection, &opencode_projection] {
        rewrite(
            &projection.join("stages/operation/test-pro-full-suite.md"),
            "mode: inline\n",
            "mode: subagent\nreviewer: test-pro-metrics-agent\n",
        );
    }
    let lead = "[degraded] plugin \"test-pro\" stage \"test-pro-full-suite\" references agent \"aidlc-quality-agent\" with mode \"subagent\" and was not composed: author ";
    let reviewer = "[degraded] plugin \"test-pro\" stage \"test-pro-full-suite\" references agent \"test-pro-metrics-agent\" as reviewer and was not composed: author ";
    // On OpenCode the plugin's own agent becomes a subagent, so only the lead is missing.
    for (harness, harness_dir, projection, expected) in [
        (
            "codex",
            ".codex",
            &claude_projection,
            vec![
                format!("{lead}.codex/agents/aidlc-quality-agent.toml ("),
                format!("{reviewer}.codex/agents/test-pro-metrics-agent.toml ("),
            ],
        ),
        (
            "opencode",
            ".aidlc",
            &opencode_projection,
            vec![format!("{lead}.opencode/agents/aidlc-quality-agent.md (")],
        ),
    ] {
        let left_out =
            format!("{harness_dir}/aidlc-common/stages/operation/test-pro-full-suite.md");
        let theirs = crate::harnesses::bare_projection(harness);
        ok(
            &reference_compose_in(&bun, &theirs, projection, harness_dir),
            &format!("the reference composer on {harness}"),
        );
        let mut their_files = snapshot(&theirs.root);
        let their_drops = drop_lines(&their_files);
        their_files.retain(|path, _| !is_drops_file(path));

        let ours = crate::harnesses::bare_projection(harness);
        let added = plugin(
            &ours,
            &["plugin", "add", projection.as_str()],
            &path_with(&bun),
        );
        ok(&added, &format!("aidlc plugin add on {harness}"));
        let our_warnings: Vec<String> = added
            .stderr
            .lines()
            .filter(|line| line.contains("[degraded]"))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            our_warnings.len(),
            expected.len(),
            "{harness}: {our_warnings:#?}"
        );
        assert_eq!(
            their_drops.len(),
            expected.len(),
            "{harness}: {their_drops:#?}"
        );
        for sentence in &expected {
            for (what, lines) in [("ours", &our_warnings), ("theirs", &their_drops)] {
                assert!(
                    lines.iter().any(|line| line.contains(sentence.as_str())),
                    "{harness} {what}: {sentence}\n{lines:#?}"
                );
            }
        }
        let mut our_files = snapshot(&ours.root);
        our_files.remove("aidlc.lock.json");
        assert_same(
            &their_files,
            &our_files,
            &format!("aidlc plugin add on {harness}"),
        );
        assert!(!our_files.contains_key(&left_out), "{harness}");
    }
}

#[test]
fn an_install_whose_conductor_needs_bun_is_refused_without_bun_and_nothing_is_written() {
    let shelf = PluginShelf::new();
    let projection = shelf.reference("test-pro-claude-projection");
    let project = TestProject::reference_install("2.5.36");
    let before = snapshot(&project.root);
    let home = tempfile::tempdir().unwrap();
    let no_programs = crate::support::SearchPath::of_programs_found_on(&[], "".as_ref());
    let run = project.run_with_env(
        &["plugin", "add", projection.as_str()],
        &[
            ("PATH", no_programs.as_str()),
            ("HOME", home.path().to_str().unwrap()),
        ],
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("which run on Bun, and Bun was not found"),
        "{}",
        run.stderr
    );
    assert_same(&before, &snapshot(&project.root), "refused");
}

// --- On the default framework ------------------------------------------------------------------

fn sensors_of(graph: &Value, slug: &str) -> Vec<String> {
    graph
        .as_array()
        .unwrap()
        .iter()
        .find(|node| node["slug"] == slug)
        .unwrap_or_else(|| panic!("no stage {slug} in the graph"))["sensors_applicable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_plugin_stage_importing_its_own_sensor_compiles_and_removal_restores_the_framework() {
    let project = TestProject::default_framework();
    ok(&project.compile(), "compile");
    let bare = snapshot(&project.root);
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let added = project.run(&["plugin", "add", root.as_str()]);
    ok(&added, "add");
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    assert_eq!(sensors_of(&graph, "acme-check"), ["acme-lint"]);
    assert!(sensors_of(&graph, "build-and-test").contains(&"acme-lint".to_owned()));
    let node = graph
        .as_array()
        .unwrap()
        .iter()
        .find(|node| node["slug"] == "acme-check")
        .unwrap();
    assert_eq!(node["plugin"], "acme");
    let stage = project.read(".claude/aidlc-common/stages/construction/build-and-test.md");
    assert!(
        stage.contains("  - cross-unit-traceability\n  - acme-extra\n"),
        "{stage}"
    );
    assert!(
        stage.contains("<!-- plugin:acme:end-of-steps:100:"),
        "{stage}"
    );
    assert!(
        project
            .read(".claude/knowledge/acme-helper-agent/notes.md")
            .contains("Know .claude well."),
        "{{{{HARNESS_DIR}}}} is substituted"
    );
    ok(
        &project.run(&["compile", "--check"]),
        "the composed graph is what a compile writes",
    );
    let composed = snapshot(&project.root);
    ok(&project.run(&["plugin", "sync"]), "sync");
    assert_same(&composed, &snapshot(&project.root), "a second sync");

    // An edit of the plugin's own files reaches the install on the next sync.
    let stage_file = root.join("stages/construction/acme-check.md");
    let text = std::fs::read_to_string(&stage_file).unwrap();
    std::fs::write(
        &stage_file,
        text.replace("write the report", "write the full report"),
    )
    .unwrap();
    ok(&project.run(&["plugin", "sync"]), "sync after an edit");
    assert!(
        project
            .read(".claude/aidlc-common/stages/construction/acme-check.md")
            .contains("the full report")
    );

    ok(&project.run(&["plugin", "remove", "acme"]), "remove");
    let mut after = snapshot(&project.root);
    let mut before = bare.clone();
    // The compile's own record moves with any compile; nothing else may.
    before.remove(".claude/tools/data/.aidlc-compile-fingerprint");
    after.remove(".claude/tools/data/.aidlc-compile-fingerprint");
    assert_same(&before, &after, "after remove");
}

#[test]
fn two_plugins_contributing_to_one_stage_are_merged_in_order_and_a_shared_slot_is_a_conflict() {
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    let beta = shelf.native("beta", 110, &[]);
    let alpha = shelf.native("alpha", 100, &[]);
    let gamma = shelf.native("gamma", 50, &[]);
    ok(
        &project.run(&[
            "plugin",
            "add",
            beta.as_str(),
            alpha.as_str(),
            gamma.as_str(),
        ]),
        "add three",
    );
    let stage = project.read(".claude/aidlc-common/stages/construction/build-and-test.md");
    let at = |needle: &str| {
        stage
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} not in {stage}"))
    };
    // By order: gamma's 50, alpha's 100, beta's 110, whatever the order they were given in.
    assert!(at("<!-- plugin:gamma:end-of-steps:50:") < at("<!-- plugin:alpha:end-of-steps:100:"));
    assert!(at("<!-- plugin:alpha:end-of-steps:100:") < at("<!-- plugin:beta:end-of-steps:110:"));
    assert!(
        stage.contains("  - alpha-extra\n  - beta-extra\n  - gamma-extra\n"),
        "{stage}"
    );
    for name in ["alpha", "beta", "gamma"] {
        assert!(project.exists(&format!(".claude/tools/data/plugin-contrib-{name}.json")));
    }
    let composed = snapshot(&project.root);

    // Another plugin wanting alpha's slot is refused, naming both.
    let delta = shelf.native("delta", 100, &[]);
    let contribution = delta.join("contributions/construction/build-and-test.md");
    let text = std::fs::read_to_string(&contribution).unwrap();
    std::fs::write(
        &contribution,
        text.replace(
            "order: 100\n  - anchor: in:Sensors",
            "order: 50\n  - anchor: in:Sensors",
        ),
    )
    .unwrap();
    let refused = project.run(&["plugin", "add", delta.as_str()]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("plugin \"gamma\": ")
            && refused.stderr.contains("fragment at anchor \"end-of-steps\" order 50 of stage \"build-and-test\" conflicts with plugin \"delta\""),
        "{}",
        refused.stderr
    );
    assert_same(&composed, &snapshot(&project.root), "refused");

    // Removing one leaves the other two as if it had never been there.
    ok(&project.run(&["plugin", "remove", "beta"]), "remove beta");
    let without_beta = snapshot(&project.root);
    let fresh = TestProject::default_framework();
    ok(
        &fresh.run(&["plugin", "add", alpha.as_str(), gamma.as_str()]),
        "add two",
    );
    let mut a = without_beta;
    let mut b = snapshot(&fresh.root);
    a.remove("aidlc.lock.json");
    b.remove("aidlc.lock.json");
    // Stage numbers are pinned from the graph they were first seeded in (as the reference pins
    // them), so beta's stage, seeded between the others, moved their numbers once.
    let unnumbered = |bytes: Vec<u8>| {
        let mut graph: Value = serde_json::from_slice(&bytes).unwrap();
        for node in graph.as_array_mut().unwrap() {
            node.as_object_mut().unwrap().remove("number");
        }
        graph
    };
    assert_eq!(
        unnumbered(a.remove(GRAPH).unwrap()),
        unnumbered(b.remove(GRAPH).unwrap())
    );
    assert_same(&a, &b, "removing beta equals never adding it");
}

#[test]
fn dependencies_are_resolved_beside_the_plugin_and_a_dependency_cannot_be_removed_alone() {
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    shelf.native("base-kit", 10, &[]);
    let app = shelf.native("app-kit", 20, &["base-kit@^1.0.0"]);
    let added = project.run(&["plugin", "add", app.as_str()]);
    ok(&added, "add with a sibling dependency");
    assert!(
        added.stderr.contains("base-kit, app-kit composed"),
        "{}",
        added.stderr
    );
    let refused = project.run(&["plugin", "remove", "base-kit"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("depends on \"base-kit@^1.0.0\""),
        "{}",
        refused.stderr
    );

    let lonely = PluginShelf::new();
    let needs = lonely.native("needs-more", 10, &["missing-kit"]);
    let other = TestProject::default_framework();
    let refused = other.run(&["plugin", "add", needs.as_str()]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("depends on plugin \"missing-kit\", which is not composed"),
        "{}",
        refused.stderr
    );
    let old = lonely.native("old-kit", 10, &[]);
    let manifest = old.join(".aidlc-plugin/plugin.json");
    std::fs::write(
        &manifest,
        std::fs::read_to_string(&manifest)
            .unwrap()
            .replace("1.2.0", "0.9.0"),
    )
    .unwrap();
    let newer = lonely.native("newer-kit", 10, &["old-kit@^1.0.0"]);
    let refused = other.run(&["plugin", "add", newer.as_str()]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("but plugin \"old-kit\" is version 0.9.0"),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_composition_that_does_not_compile_is_rolled_back() {
    let project = TestProject::default_framework();
    ok(&project.compile(), "compile");
    let before = snapshot(&project.root);
    let shelf = PluginShelf::new();
    let root = shelf.native("broken", 10, &[]);
    let stage = root.join("stages/construction/broken-check.md");
    let text = std::fs::read_to_string(&stage).unwrap();
    std::fs::write(
        &stage,
        text.replace("  - build-and-test\n", "  - no-such-stage\n"),
    )
    .unwrap();
    let run = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("no-such-stage"), "{}", run.stderr);
    assert!(
        run.stderr.contains("the composition was rolled back"),
        "{}",
        run.stderr
    );
    assert_same(&before, &snapshot(&project.root), "rolled back");
    assert!(!project.exists(".aidlc-plugin-journal"));
}

/// D52: a composition that does not compile shows each diagnostic in a file a path
/// plugin shipped on that file (by its absolute path), at the span as authored (the
/// `{{HARNESS_DIR}}` on an earlier line is not counted as `.claude`), with the authored text;
/// one in text a contribution wrote into a core stage on the contribution, naming the stage;
/// one in the core stage's own text on the installed stage.
#[test]
fn a_failed_compile_is_shown_on_the_path_plugins_own_files() {
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 10, &[]);
    let stage = root.join("stages/construction/acme-check.md");
    rewrite(
        &stage,
        "condition: When the acme plugin is active\n",
        "condition: When {{HARNESS_DIR}}/acme is there\n",
    );
    rewrite(&stage, "  - build-and-test\n", "  - no-such-stage\n");
    rewrite(
        &stage,
        "  - acme-report\n",
        "  - acme-report\n  - cd-config\n",
    );
    let contribution = root.join("contributions/operation/deployment-execution.md");
    std::fs::create_dir_all(contribution.parent().unwrap()).unwrap();
    std::fs::write(
        &contribution,
        "---\ntarget: deployment-execution\nplugin: acme\nadds:\n  sensors:\n    - acme-lnt\n---\n",
    )
    .unwrap();
    let authored = std::fs::read_to_string(&stage).unwrap();
    let line = authored
        .lines()
        .position(|line| line == "  - no-such-stage")
        .unwrap()
        + 1;
    let run = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("[{stage}:{line}:5]")),
        "on the plugin's stage, at the authored span: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("{line} │   - no-such-stage")),
        "the snippet is the authored text: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("[{contribution}:6:7]")),
        "the unknown sensor the contribution added is on the contribution: {}",
        run.stderr
    );
    // The renderer wraps long messages: compare without spaces and the frame's bars.
    let unwrapped: String = run
        .stderr
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect();
    assert!(
        unwrapped.contains(
            "corestage\"deployment-execution\",.claude/aidlc-common/stages/operation/deployment-execution.md)"
        ),
        "the contribution's diagnostic names the core stage: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("[.claude/aidlc-common/stages/operation/deployment-execution.md:"),
        "the core stage's own text stays on the installed stage: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("note: {stage}: produced by \"acme-check\"")),
        "a related place in the plugin's stage is on the plugin's file: {}",
        run.stderr
    );
    assert!(
        !run.stderr
            .contains("[.claude/aidlc-common/stages/construction/acme-check.md")
            && !run
                .stderr
                .contains("note: .claude/aidlc-common/stages/construction/acme-check.md"),
        "no location names the installed copy: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("the composition was rolled back"),
        "{}",
        run.stderr
    );
    assert!(!project.exists(".claude/aidlc-common/stages/construction/acme-check.md"));
}

/// D52: a path the compile prints inside a message names the plugin's file too, as
/// the diagnostic's location does: the duplicate producer error lists the plugin's stage by
/// its own (absolute) path, never by the installed copy's, and the core stage by its installed
/// path.
#[test]
fn a_failed_compiles_message_names_the_path_plugins_own_file_not_its_installed_copy() {
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 10, &[]);
    let stage = root.join("stages/construction/acme-check.md");
    rewrite(
        &stage,
        "  - acme-report\n",
        "  - acme-report\n  - cd-config\n",
    );
    let run = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    // The renderer wraps long messages: compare without spaces and the frame's bars.
    let unwrapped: String = run
        .stderr
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect();
    let message_start = unwrapped
        .find("Duplicateproducersforconsumedartifact\"cd-config\"")
        .unwrap_or_else(|| panic!("the duplicate producer error: {}", run.stderr));
    let message = &unwrapped[message_start..];
    let message = &message[..message.find("Renameoneproducedartifact").unwrap()];
    assert!(
        message.contains(&format!("{stage}(stage\"acme-check\")")),
        "the message names the plugin's stage by its own path: {}",
        run.stderr
    );
    assert!(
        !unwrapped.contains(".claude/aidlc-common/stages/construction/acme-check.md"),
        "nothing names the installed copy: {}",
        run.stderr
    );
    assert!(
        message.contains(
            ".claude/aidlc-common/stages/operation/deployment-pipeline.md(stage\"deployment-pipeline\")"
        ),
        "the core producer keeps its installed path: {}",
        run.stderr
    );
}

/// D52: a git plugin's tree is a clone, not the folder its author edits, so a failed
/// compile's diagnostics in its copies keep their installed paths.
#[test]
fn a_failed_compile_of_a_git_plugin_keeps_the_installed_paths() {
    if system_tool("git").is_none() {
        return;
    }
    let shelf = PluginShelf::new();
    let root = shelf.native("remote", 10, &[]);
    rewrite(
        &root.join("stages/construction/remote-check.md"),
        "  - build-and-test\n",
        "  - no-such-stage\n",
    );
    git(&root, &["init", "--quiet", "--initial-branch=main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "--quiet", "-m", "broken"]);
    git(&root, &["tag", "v1.0"]);
    let bare = shelf.root.join("remote.git");
    git(
        &shelf.root,
        &["clone", "--quiet", "--bare", root.as_str(), bare.as_str()],
    );
    let project = TestProject::default_framework();
    let run = project.run(&["plugin", "add", &format!("{bare}@v1.0")]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("[.claude/aidlc-common/stages/construction/remote-check.md:18:5]"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(root.as_str()), "{}", run.stderr);
}

#[test]
fn harness_json_plugins_keeps_an_unselected_plugins_contributions_out() {
    let project = TestProject::default_framework();
    project.write(
        ".claude/tools/data/harness.json",
        "{\"harnessDir\": \".claude\", \"plugins\": [\"aidlc\"]}\n",
    );
    let shelf = PluginShelf::new();
    let root = shelf.native("quiet", 10, &[]);
    let core_stage = project.read(".claude/aidlc-common/stages/construction/build-and-test.md");
    let run = project.run(&["plugin", "add", root.as_str()]);
    ok(&run, "add");
    assert!(
        run.stderr
            .contains("is composed but not enabled by .claude/tools/data/harness.json"),
        "{}",
        run.stderr
    );
    assert!(project.exists(".claude/aidlc-common/stages/construction/quiet-check.md"));
    assert_eq!(
        project.read(".claude/aidlc-common/stages/construction/build-and-test.md"),
        core_stage
    );
    assert!(!project.exists(".claude/tools/data/plugin-contrib-quiet.json"));
    project.write(
        ".claude/tools/data/harness.json",
        "{\"plugins\": \"quiet\"}\n",
    );
    let refused = project.run(&["plugin", "sync"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("\"plugins\" must be a list of plugin names"),
        "{}",
        refused.stderr
    );
}

// --- Guards --------------------------------------------------------------------------------

/// `aidlc plugin add` of the plugin after `edit`, refused with exit 2, nothing written, and the
/// message containing `expected`.
fn assert_refused(edit: impl FnOnce(&Utf8Path), expected: &str) {
    let project = TestProject::default_framework();
    let before = snapshot(&project.root);
    let shelf = PluginShelf::new();
    let root = shelf.native("guarded", 10, &[]);
    edit(&root);
    let run = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(run.status, 2, "{expected}: {}", run.stderr);
    assert!(
        run.stderr.contains(expected),
        "wanted {expected:?} in:\n{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing was written"), "{}", run.stderr);
    assert_same(&before, &snapshot(&project.root), expected);
}

fn rewrite(path: &Utf8Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in {path}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn reserved_and_malformed_plugin_names_are_refused_before_anything_is_copied() {
    for (name, expected) in [
        ("core", "is reserved"),
        ("aidlc", "is reserved"),
        ("aidlc-extra", "is reserved"),
        ("Guarded", "is not lower-case kebab case"),
        ("../../payload", "contains a path separator or \"..\""),
        ("gu/arded", "contains a path separator"),
    ] {
        assert_refused(
            |root| {
                rewrite(
                    &root.join(".aidlc-plugin/plugin.json"),
                    "\"name\": \"guarded\"",
                    &format!("\"name\": \"{name}\""),
                );
            },
            expected,
        );
    }
}

/// `plugin add` shows a refusal in a plugin's manifest on the offending text, as the own-tree
/// compile does: the dependency whose range is broken, the reserved name.
#[test]
fn plugin_add_shows_a_manifest_refusal_on_the_key_at_fault() {
    for (from, to, wanted) in [
        (
            "\"dependencies\": [\"core\"]",
            "\"dependencies\": [\"core\",\n  \"lib@not-a-range\"]",
            "\"lib@not-a-range\"",
        ),
        (
            "\"name\": \"guarded\"",
            "\"name\": \"aidlc\"",
            "\"name\": \"aidlc\"",
        ),
    ] {
        let project = TestProject::default_framework();
        let shelf = PluginShelf::new();
        let root = shelf.native("guarded", 10, &[]);
        let manifest = root.join(".aidlc-plugin/plugin.json");
        rewrite(&manifest, from, to);
        let text = std::fs::read_to_string(&manifest).unwrap();
        let offset = text.find(wanted).unwrap();
        let line = text[..offset].matches('\n').count() + 1;
        let column = offset - text[..offset].rfind('\n').map_or(0, |newline| newline + 1) + 1;
        let run = project.run(&["plugin", "add", root.as_str()]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("╭─[{manifest}:{line}:{column}]")),
            "wanted the refusal at {manifest}:{line}:{column} in:\n{}",
            run.stderr
        );
        assert!(run.stderr.contains("nothing was written"), "{}", run.stderr);
    }
}

#[test]
fn paths_that_leave_the_plugin_root_are_refused() {
    assert_refused(
        |root| {
            rewrite(
                &root.join(".aidlc-plugin/plugin.json"),
                "\"dependencies\"",
                "\"aidlc\": {\"contributes\": {\"stages\": \"../../elsewhere\"}}, \"dependencies\"",
            );
        },
        "leaves the plugin root",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join(".aidlc-plugin/plugin.json"),
                "\"dependencies\"",
                "\"aidlc\": {\"contributes\": {\"overlays\": \"/etc\"}}, \"dependencies\"",
            );
        },
        "is absolute",
    );
    #[cfg(unix)]
    assert_refused(
        |root| {
            std::os::unix::fs::symlink("/etc/hostname", root.join("tools/aidlc-sensor-x.sh"))
                .unwrap();
        },
        "is a symbolic link",
    );
}

#[test]
fn sensor_manifests_discovery_would_never_read_are_refused_and_undeclared_ones_reported() {
    assert_refused(
        |root| {
            std::fs::rename(
                root.join("sensors/aidlc-guarded-lint.md"),
                root.join("sensors/guarded-lint.md"),
            )
            .unwrap();
        },
        "would be composed but never fire",
    );
    assert_refused(
        |root| {
            std::fs::create_dir_all(root.join("sensors/nested")).unwrap();
            std::fs::rename(
                root.join("sensors/aidlc-guarded-lint.md"),
                root.join("sensors/nested/aidlc-guarded-lint.md"),
            )
            .unwrap();
        },
        "nested in a subfolder",
    );
    // On disk but imported by nothing of the plugin: composed, and reported with its file.
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    let root = shelf.native("spare", 10, &[]);
    std::fs::write(
        root.join("sensors/aidlc-spare-unused.md"),
        crate::support::manifest("spare-unused", ""),
    )
    .unwrap();
    let run = project.run(&["plugin", "add", root.as_str()]);
    ok(&run, "add");
    assert!(
        run.stderr
            .contains("sensor \"spare-unused\" is on disk but not declared")
            && run.stderr.contains("sensors/aidlc-spare-unused.md"),
        "{}",
        run.stderr
    );
    // The warning is in the plugin's drop log, where both doctors read compose drops.
    let drops = "aidlc/spaces/default/intents/.aidlc-hooks-health/plugin-compose-spare.drops";
    let log = project.read(drops);
    assert!(
        log.contains("\t[advisory] plugin \"spare\": ") && log.contains("\"spare-unused\""),
        "{log}"
    );
    let composed = snapshot(&project.root);
    ok(&project.run(&["plugin", "sync"]), "sync");
    assert_same(
        &composed,
        &snapshot(&project.root),
        "the same warnings keep their log",
    );
    let doctor = project.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("plugin-compose-spare x1"),
        "{}{}",
        doctor.stdout,
        doctor.stderr
    );
    ok(&project.run(&["plugin", "remove", "spare"]), "remove");
    assert!(!project.exists(drops), "the log goes with the plugin");
    // Declared in the manifest but not on disk: reported.
    let listed = shelf.native("listed", 20, &[]);
    rewrite(
        &listed.join(".aidlc-plugin/plugin.json"),
        "\"dependencies\"",
        "\"aidlc\": {\"sensors\": [\"listed-lint\", \"listed-ghost\"]}, \"dependencies\"",
    );
    let run = project.run(&["plugin", "add", listed.as_str()]);
    ok(&run, "add listed");
    assert!(run.stderr.contains("sensor \"listed-ghost\" is declared in `aidlc.sensors` but the plugin has no sensors/aidlc-listed-ghost.md"), "{}", run.stderr);
}

#[test]
fn owned_content_that_names_another_owner_or_is_invalid_is_refused() {
    assert_refused(
        |root| {
            rewrite(
                &root.join("stages/construction/guarded-check.md"),
                "plugin: guarded\n",
                "plugin: other\n",
            );
        },
        "declares plugin \"other\"",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join("stages/construction/guarded-check.md"),
                "mode: inline\n",
                "mode: inline\nmode: subagent\n",
            );
        },
        "the stage file is invalid",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join("agents/guarded-helper-agent.md"),
                "plugin: guarded\n",
                "",
            );
        },
        "the agent declares no plugin identity",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join("agents/guarded-helper-agent.md"),
                "name: guarded-helper-agent\n",
                "name: aidlc-quality-agent\n",
            );
        },
        "which .claude/agents/aidlc-quality-agent.md already is",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join("contributions/construction/build-and-test.md"),
                "target: build-and-test\n",
                "target: no-such-stage\n",
            );
        },
        "targets stage \"no-such-stage\", which the install does not have",
    );
    assert_refused(
        |root| {
            let path = root.join("contributions/construction/build-and-test.md");
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace("in:Sensors", "in:Nowhere")).unwrap();
        },
        "cannot be placed in stage \"build-and-test\": no \"## Nowhere\" section",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join("contributions/construction/build-and-test.md"),
                "anchor: in:Sensors",
                "anchor: after-questions",
            );
        },
        "anchor \"after-questions\" is not implemented",
    );
    assert_refused(
        |root| {
            rewrite(
                &root.join("contributions/construction/build-and-test.md"),
                "  sensors:\n",
                "  scopes:\n    - feature\n  sensors:\n",
            );
        },
        "adds.scopes \"feature\" is not owned by plugin \"guarded\"",
    );
}

#[test]
fn a_file_the_install_already_has_is_not_overwritten_and_an_edited_copy_is_not_removed() {
    let project = TestProject::default_framework();
    project.write(
        ".claude/tools/aidlc-sensor-clash-lint.sh",
        "#!/bin/sh\necho mine\n",
    );
    let shelf = PluginShelf::new();
    let root = shelf.native("clash", 10, &[]);
    let run = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("would overwrite .claude/tools/aidlc-sensor-clash-lint.sh"),
        "{}",
        run.stderr
    );
    project.remove(".claude/tools/aidlc-sensor-clash-lint.sh");
    ok(&project.run(&["plugin", "add", root.as_str()]), "add");
    project.write(
        ".claude/agents/clash-helper-agent.md",
        "---\nname: clash-helper-agent\nplugin: clash\n---\n# edited\n",
    );
    let listed = project.run(&["plugin", "list"]);
    ok(&listed, "list");
    assert!(
        listed.stdout.contains(
            "1 installed file changed since composed: .claude/agents/clash-helper-agent.md"
        ),
        "{}",
        listed.stdout
    );
    let refused = project.run(&["plugin", "remove", "clash"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains(".claude/agents/clash-helper-agent.md: changed since it was composed"),
        "{}",
        refused.stderr
    );
}

// --- Git sources ---------------------------------------------------------------------------

pub(crate) fn git(cwd: &Utf8Path, args: &[&str]) {
    let output = Command::new("git")
        .args(args)
        .current_dir(cwd)
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
fn a_plugin_from_a_git_url_at_a_tag_composes_as_from_its_folder_and_syncs_offline() {
    if system_tool("git").is_none() {
        return;
    }
    let shelf = PluginShelf::new();
    let root = shelf.native("remote", 10, &[]);
    git(&root, &["init", "--quiet", "--initial-branch=main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "--quiet", "-m", "v1"]);
    git(&root, &["tag", "v1.0"]);
    rewrite(
        &root.join("stages/construction/remote-check.md"),
        "write the report",
        "write the second report",
    );
    git(&root, &["commit", "--quiet", "-am", "v2"]);
    let bare = shelf.root.join("remote.git");
    git(
        &shelf.root,
        &["clone", "--quiet", "--bare", root.as_str(), bare.as_str()],
    );
    git(&root, &["checkout", "--quiet", "v1.0"]);

    let from_folder = TestProject::default_framework();
    ok(
        &from_folder.run(&["plugin", "add", root.as_str()]),
        "add from the folder",
    );
    let from_git = TestProject::default_framework();
    let url = format!("{bare}@v1.0");
    let added = from_git.run(&["plugin", "add", &url]);
    ok(&added, "add from git");
    assert!(from_git.exists("aidlc/plugins/remote/.aidlc-plugin/plugin.json"));
    assert!(!from_git.exists("aidlc/plugins/remote/.git"));
    assert_eq!(
        from_folder.read(GRAPH),
        from_git.read(GRAPH),
        "the same graph from the folder and the installed tree"
    );
    assert!(
        from_git
            .read(".claude/aidlc-common/stages/construction/remote-check.md")
            .contains("write the report")
    );
    let lock: Value = serde_json::from_str(&from_git.read("aidlc.lock.json")).unwrap();
    assert_eq!(lock["plugins"]["remote"]["kind"], "git");
    assert_eq!(lock["plugins"]["remote"]["rev"], "v1.0");
    assert_eq!(
        lock["plugins"]["remote"]["commit"].as_str().unwrap().len(),
        40
    );

    // Later syncs read the kept tree: no network, no clone.
    std::fs::remove_dir_all(&bare).unwrap();
    let synced = from_git.run(&["plugin", "sync"]);
    ok(&synced, "sync");
    assert!(
        synced.stderr.contains("nothing changed"),
        "{}",
        synced.stderr
    );
    ok(&from_git.run(&["plugin", "remove", "remote"]), "remove");
    assert!(
        !from_git.exists("aidlc/plugins"),
        "the kept tree goes with the plugin"
    );
}

// --- Atomicity -----------------------------------------------------------------------------

#[test]
fn a_sync_killed_at_any_point_is_reported_by_list_and_finished_by_the_next_sync() {
    let shelf = PluginShelf::new();
    let root = shelf.native("steady", 10, &[]);
    let stage = root.join("stages/construction/steady-check.md");
    let contribution = root.join("contributions/construction/build-and-test.md");
    let (stage_v1, contribution_v1) = (
        std::fs::read_to_string(&stage).unwrap(),
        std::fs::read_to_string(&contribution).unwrap(),
    );
    let to_v2 = || {
        std::fs::write(
            &stage,
            stage_v1.replace("write the report", "write the new report"),
        )
        .unwrap();
        std::fs::write(
            &contribution,
            contribution_v1.replace("checks the steady report", "checks the new steady report"),
        )
        .unwrap();
    };
    let to_v1 = || {
        std::fs::write(&stage, &stage_v1).unwrap();
        std::fs::write(&contribution, &contribution_v1).unwrap();
    };
    let composed_at_v1 = || {
        to_v1();
        let project = TestProject::default_framework();
        ok(&project.run(&["plugin", "add", root.as_str()]), "add");
        project
    };
    // The after state, from a sync that runs to its end.
    let reference = composed_at_v1();
    let before = snapshot(&reference.root);
    to_v2();
    ok(&reference.run(&["plugin", "sync"]), "sync");
    let after = snapshot(&reference.root);
    assert_ne!(before, after);

    // Kill points chosen by what the run has done, not by the clock: at once (before the
    // transaction is armed), then once the journal's manifest is on disk and at least
    // `changes` install files differ from the starting state, for counts up to the whole sync.
    let whole_sync = differing(&before, &after).len();
    let mut kill_points: Vec<Option<usize>> = vec![None];
    kill_points.extend((0..=whole_sync).step_by((whole_sync / 12).max(1)).map(Some));
    let mut seen_before = 0;
    let mut rolled_back = 0;
    for kill_point in kill_points {
        let project = composed_at_v1();
        assert_same(&before, &snapshot(&project.root), "the starting state");
        to_v2();
        let mut child = project
            .command(&project.root, &["plugin", "sync"])
            .env("AIDLC_TEST_PLUGIN_PAUSE_MS", "60")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start aidlc plugin sync");
        if let Some(changes) = kill_point {
            wait_until_armed_with_changes(&project.root, &before, changes, &mut child);
        }
        let _ = child.kill();
        let _ = child.wait();
        // `plugin list` writes nothing: it only reports the journal a killed run left.
        let listed = project.run(&["plugin", "list"]);
        ok(&listed, "list after the kill");
        let waiting = listed.stderr.contains("an interrupted composition left");
        let now = snapshot(&project.root);
        if differing(&now, &before).is_empty() {
            seen_before += 1;
        }
        // The next command that writes rolls it back first, then composes as an uninterrupted
        // sync does.
        let synced = project.run(&["plugin", "sync"]);
        ok(&synced, "sync after the kill");
        if synced
            .stderr
            .contains("rolled back a composition that was interrupted")
        {
            assert!(
                waiting,
                "killed at {kill_point:?} changes: list did not report the journal"
            );
            rolled_back += 1;
        }
        let now = snapshot(&project.root);
        assert_same(
            &after,
            &now,
            &format!("killed at {kill_point:?} changes, then synced"),
        );
    }
    assert!(seen_before > 0, "every kill came after the commit");
    assert!(rolled_back > 0, "no kill landed inside the transaction");
}

/// Wait until the sync `child` has armed its journal (the manifest is on disk) and at least
/// `changes` install files differ from `before`, or until it has ended; fails after
/// [`crate::support::HANG`].
fn wait_until_armed_with_changes(
    root: &Utf8Path,
    before: &BTreeMap<String, Vec<u8>>,
    changes: usize,
    child: &mut std::process::Child,
) {
    let manifest = root.join(".aidlc-plugin-journal/manifest.json");
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait for aidlc").is_some() {
            return;
        }
        if manifest.is_file() {
            let changed = differing(before, &snapshot_while_a_sync_runs(root))
                .iter()
                .filter(|path| !path.starts_with(".aidlc-plugin-journal/"))
                .count();
            if changed >= changes {
                return;
            }
        }
        assert!(
            started.elapsed() < crate::support::HANG,
            "the sync never armed its journal with {changes} changes"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

// --- Scale ---------------------------------------------------------------------------------

#[test]
fn a_hundred_plugins_compose_compile_and_go_again() {
    let project = TestProject::default_framework();
    ok(&project.compile(), "compile");
    let mut bare = snapshot(&project.root);
    let shelf = PluginShelf::new();
    let names: Vec<String> = (0..100).map(|index| format!("p{index:03}")).collect();
    let roots: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            shelf
                .native(name, u32::try_from(index).unwrap(), &[])
                .to_string()
        })
        .collect();
    let mut args = vec!["plugin", "add"];
    args.extend(roots.iter().map(String::as_str));
    let added = project.run_watched(&args, &[], None);
    ok(&added, "add 100");
    assert!(
        added.stderr.contains("compiled 133 stages"),
        "{}",
        added.stderr
    );
    let graph: Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    for name in &names {
        assert_eq!(
            sensors_of(&graph, &format!("{name}-check")),
            [format!("{name}-lint")]
        );
    }
    assert_eq!(sensors_of(&graph, "build-and-test").len(), 3 + 100);
    ok(&project.run(&["compile", "--check"]), "compile --check");
    let composed = snapshot(&project.root);
    ok(&project.run(&["plugin", "sync"]), "sync");
    assert_same(&composed, &snapshot(&project.root), "a second sync");
    let mut remove = vec!["plugin", "remove"];
    remove.extend(names.iter().map(String::as_str));
    ok(&project.run_watched(&remove, &[], None), "remove 100");
    let mut after = snapshot(&project.root);
    bare.remove(".claude/tools/data/.aidlc-compile-fingerprint");
    after.remove(".claude/tools/data/.aidlc-compile-fingerprint");
    assert_same(&bare, &after, "after removing all");
}

/// `up_to_date::RACY_WINDOW_NS`: a stamp within it of the recording sync's start is not trusted.
const RACY_WINDOW_NS: u64 = 2_000_000_000;

/// Rewrite the sync record at `record` as if its sync had started past the racy window of every
/// stamp in it (the body's start time and the header's checksum of the body). This stands for
/// the time that passes between two syncs without waiting for it: a change time cannot be set
/// back, so the record's time moves forward instead.
fn sync_record_past_the_racy_window(record: &Utf8Path) {
    let text = std::fs::read_to_string(record).expect("a sync record");
    let (header, body) = text.split_once('\n').expect("a header line, then the body");
    let mut body: Value = serde_json::from_str(body).expect("a JSON body");
    let file_stamps = body["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|file| file.get(1).filter(|stamp| !stamp.is_null()).cloned());
    let folder_stamps = body["folder_stamps"]
        .as_array()
        .expect("folder stamps")
        .clone();
    let newest = file_stamps
        .chain(folder_stamps)
        .map(|stamp| {
            let time = |key: &str| stamp[key].as_u64().expect("a stamp time");
            time("modified_ns").max(time("changed_ns"))
        })
        .max()
        .expect("a stamp");
    body["started_ns"] = (newest + RACY_WINDOW_NS + 1).into();
    let body_text = serde_json::to_string(&body).unwrap();
    let magic_and_format = header.rsplit_once(' ').expect("MAGIC FORMAT CHECKSUM").0;
    let checksum = blake3::hash(body_text.as_bytes()).to_hex();
    std::fs::write(
        record,
        format!("{magic_and_format} {checksum}\n{body_text}"),
    )
    .unwrap();
}

/// docs/decisions.md D51: once a sync that changed nothing has recorded what it read, the next
/// one is proved from the record's `stat` stamps; a changed, an added and a removed plugin file
/// each make the next sync recompose, and removing the last plugin removes the record.
#[test]
fn a_no_op_sync_is_proved_by_its_record_and_any_plugin_file_change_recomposes() {
    const PROVED: &str = "nothing changed (no plugin or install file changed since the last sync)";
    let project = TestProject::default_framework();
    ok(&project.compile(), "compile");
    let bare = snapshot(&project.root);
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    ok(&project.run(&["plugin", "add", root.as_str()]), "add");
    let record = project
        .root
        .join(".claude/tools/data/.aidlc-plugin-fingerprint");
    assert!(!record.exists(), "a composing command records nothing");
    let sync = |what: &str| {
        let run = project.run(&["plugin", "sync"]);
        ok(&run, what);
        run.stderr
    };
    let first = sync("the first sync");
    assert!(
        first.contains("nothing changed") && !first.contains(PROVED),
        "{first}"
    );
    assert!(record.is_file(), "a no-op sync records what it read");
    let too_soon = sync("a sync within the racy window of the record's stamps");
    assert!(!too_soon.contains(PROVED), "{too_soon}");
    sync_record_past_the_racy_window(&record);
    let proved = sync("a proved sync");
    assert!(proved.contains(PROVED), "{proved}");
    let composed = snapshot(&project.root);

    let notes = root.join("knowledge/acme-helper-agent/notes.md");
    std::fs::write(&notes, "# Notes\n\nChanged.\n").unwrap();
    let changed = sync("a sync after an edit");
    assert!(
        changed.contains("synced: acme composed; 2 files written"),
        "{changed}"
    );
    assert_eq!(
        project.read(".claude/knowledge/acme-helper-agent/notes.md"),
        "# Notes\n\nChanged.\n"
    );
    sync("record again");
    sync_record_past_the_racy_window(&record);
    assert!(sync("proved again").contains(PROVED));

    let added = root.join("knowledge/acme-helper-agent/more.md");
    std::fs::write(&added, "# More\n").unwrap();
    let after_add = sync("a sync after a file was added");
    assert!(after_add.contains("synced:"), "{after_add}");
    assert!(
        project
            .root
            .join(".claude/knowledge/acme-helper-agent/more.md")
            .is_file()
    );
    sync("record after the addition");
    sync_record_past_the_racy_window(&record);
    assert!(sync("proved after the addition").contains(PROVED));

    std::fs::remove_file(&added).unwrap();
    let after_removal = sync("a sync after a file was removed");
    assert!(after_removal.contains(", 1 removed"), "{after_removal}");
    assert!(
        !project
            .root
            .join(".claude/knowledge/acme-helper-agent/more.md")
            .exists()
    );
    std::fs::write(&notes, "# Notes\n\nKnow {{HARNESS_DIR}} well.\n").unwrap();
    sync("back to the first notes");
    assert_same(
        &composed,
        &snapshot(&project.root),
        "back to the composed install",
    );

    ok(&project.run(&["plugin", "remove", "acme"]), "remove");
    assert!(!record.exists(), "no record is kept without plugins");
    let mut after = snapshot(&project.root);
    let mut before = bare;
    before.remove(".claude/tools/data/.aidlc-compile-fingerprint");
    after.remove(".claude/tools/data/.aidlc-compile-fingerprint");
    assert_same(&before, &after, "after remove");
}

/// docs/decisions.md D51: removing a plugin that `harness.json`'s `plugins` still names is
/// refused before any write, naming the file and the fix; once the name is taken out of the
/// selection by hand, the removal goes through.
#[test]
fn removing_a_plugin_the_selection_still_names_is_refused_before_any_write() {
    let project = TestProject::default_framework();
    let harness_json = ".claude/tools/data/harness.json";
    project.write(
        harness_json,
        "{\n  \"harnessDir\": \".claude\",\n  \"plugins\": [\"aidlc\", \"acme\"]\n}\n",
    );
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    ok(&project.run(&["plugin", "add", root.as_str()]), "add");
    let composed = snapshot(&project.root);
    let composed_folders = folders(&project.root);

    let refused = project.run(&["plugin", "remove", "acme"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "plugin \"acme\": .claude/tools/data/harness.json: is still selected: .claude/tools/data/harness.json's `plugins` names it"
        ),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains(
            "remove \"acme\" from `plugins` in .claude/tools/data/harness.json, then run `aidlc plugin remove acme` again"
        ),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("nothing was written"),
        "{}",
        refused.stderr
    );
    assert_same(&composed, &snapshot(&project.root), "a refused removal");
    assert_eq!(composed_folders, folders(&project.root));
    assert!(!project.exists(".aidlc-plugin-journal"));

    project.write(
        harness_json,
        "{\n  \"harnessDir\": \".claude\",\n  \"plugins\": [\"aidlc\"]\n}\n",
    );
    ok(
        &project.run(&["plugin", "remove", "acme"]),
        "remove once deselected",
    );
    assert!(!project.exists(".claude/aidlc-common/stages/construction/acme-check.md"));
}

/// D55: `aidlc compile` says when a composed path plugin changed at its source since
/// it was composed (it compiled the stale installed copies), on the no-op path and the
/// compiling path alike, in every format; a sync ends it, and a source that is not there (a CI
/// checkout without the plugin's folder) says nothing. `aidlc doctor`'s plugin sources row
/// says each of the three states.
#[test]
fn compile_and_doctor_say_when_a_composed_plugin_changed_at_its_source() {
    let project = TestProject::default_framework();
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let added = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    let clean = project.run(&["compile"]);
    assert_eq!(clean.status, 0, "{}", clean.stderr);
    assert!(
        !clean.stderr.contains("stale-plugin-copy"),
        "{}",
        clean.stderr
    );
    let doctor = |project: &TestProject| {
        let run = project.run(&["doctor"]);
        format!("{}{}", run.stdout, run.stderr)
    };
    let report = doctor(&project);
    assert!(
        report.contains("Plugin sources: 1 path plugin as composed"),
        "{report}"
    );

    shelf.write("acme/knowledge/acme-helper-agent/notes.md", "# Edited\n");
    let warned = |stderr: &str| {
        stderr.contains("stale-plugin-copy")
            && stderr.contains("plugin \"acme\" changed at its source")
            && stderr.contains("aidlc plugin sync")
    };
    // Nothing the compile reads changed: the no-op path says it.
    let up_to_date = project.run(&["compile"]);
    assert_eq!(up_to_date.status, 0, "{}", up_to_date.stderr);
    assert!(
        up_to_date.stderr.contains("up to date:"),
        "{}",
        up_to_date.stderr
    );
    assert!(warned(&up_to_date.stderr), "{}", up_to_date.stderr);
    assert!(
        up_to_date.stderr.contains("(1 warning)"),
        "{}",
        up_to_date.stderr
    );
    // A compile that compiles says it too, and `--check`, and the JSON and SARIF reports.
    let forced = project.run(&["compile", "--force"]);
    assert!(warned(&forced.stderr), "{}", forced.stderr);
    let checked = project.run(&["compile", "--check", "--force"]);
    assert_eq!(checked.status, 0, "{}", checked.stderr);
    assert!(warned(&checked.stderr), "{}", checked.stderr);
    let json = project.run(&["compile", "--format", "json"]);
    let line = json
        .stdout
        .lines()
        .chain(json.stderr.lines())
        .find(|line| line.contains("\"stale-plugin-copy\""))
        .unwrap_or_else(|| panic!("{}{}", json.stdout, json.stderr));
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(value["severity"], "warning");
    assert_eq!(value["file"], "aidlc.lock.json");
    let sarif = project.run(&["compile", "--format", "sarif"]);
    assert!(
        sarif.stdout.contains("stale-plugin-copy"),
        "{}",
        sarif.stdout
    );
    let report = doctor(&project);
    assert!(
        report.contains("Plugin sources: acme (")
            && report.contains("changed since it was composed")
            && report.contains("the installed copies are stale"),
        "{report}"
    );

    let synced = project.run(&["plugin", "sync"]);
    assert_eq!(synced.status, 0, "{}", synced.stderr);
    let after_sync = project.run(&["compile"]);
    assert!(
        !after_sync.stderr.contains("stale-plugin-copy"),
        "{}",
        after_sync.stderr
    );

    // The source folder gone (a checkout without it): nothing to compare, nothing said.
    shelf.write(
        "acme/knowledge/acme-helper-agent/notes.md",
        "# Edited again\n",
    );
    std::fs::rename(&root, root.with_file_name("acme-moved")).unwrap();
    let without_source = project.run(&["compile"]);
    assert_eq!(without_source.status, 0, "{}", without_source.stderr);
    assert!(
        !without_source.stderr.contains("stale-plugin-copy"),
        "{}",
        without_source.stderr
    );
    let report = doctor(&project);
    assert!(
        report.contains(
            "Plugin sources: not there, so not compared with the installed copies: acme ("
        ),
        "{report}"
    );
}

/// The reference's own plugin composes onto the framework `aidlc init` writes: the built-in
/// stages offer the `### Step N` headings its fragments are placed after. A fragment aimed at a
/// step no stage has is refused, and the refusal is printed once.
#[test]
fn the_reference_plugin_composes_onto_the_built_in_framework() {
    let project = TestProject::empty();
    let init = project.run(&["init", "."]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    let shelf = tempfile::tempdir().unwrap();
    let plugin_copy = camino::Utf8PathBuf::from_path_buf(shelf.path().join("test-pro-plugin"))
        .expect("a UTF-8 temp dir");
    copy_tree(
        &reference_plugin_dir("test-pro-claude-projection"),
        &plugin_copy,
    );
    let added = project.run(&["plugin", "add", plugin_copy.as_str()]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    assert_eq!(project.compile().status, 0);

    let fresh = TestProject::empty();
    assert_eq!(fresh.run(&["init", "."]).status, 0);
    let contribution = plugin_copy.join("contributions/construction/nfr-requirements.md");
    let text = std::fs::read_to_string(&contribution).unwrap();
    std::fs::write(&contribution, text.replace("after-step:6", "after-step:60")).unwrap();
    let refused = fresh.run(&["plugin", "add", plugin_copy.as_str()]);
    assert_ne!(refused.status, 0);
    assert_eq!(
        refused
            .stderr
            .matches("fragment \"after-step:60\" order 100 cannot be placed")
            .count(),
        1,
        "{}",
        refused.stderr
    );
    assert_eq!(
        refused.stderr.matches("refused here").count(),
        1,
        "{}",
        refused.stderr
    );
}

// --- Plugin inputs that are not bounded regular files -------------------------------------------

#[test]
fn a_fifo_lock_file_is_refused_at_once_by_every_command_that_reads_it() {
    let project = TestProject::default_framework();
    fifo_at(&project, "aidlc.lock.json");
    for args in [
        &["doctor"][..],
        &["plugin", "list"],
        &["plugin", "sync"],
        &["sensors"],
    ] {
        let run = project.run_watched(args, &[], None);
        let output = said(&run);
        assert!(!output.contains("panicked"), "{args:?}: {output}");
        assert!(
            output.contains("aidlc.lock.json") && output.contains("FIFO"),
            "{args:?} names the lock file and what it is: {output}"
        );
    }
}

#[test]
fn an_oversized_lock_file_is_refused_by_its_size_by_every_command_that_reads_it() {
    let project = TestProject::default_framework();
    oversized(&project.path("aidlc.lock.json"));
    for args in [
        &["doctor"][..],
        &["plugin", "list"],
        &["plugin", "sync"],
        &["sensors"],
    ] {
        let run = project.run_watched(args, &[], None);
        let output = said(&run);
        assert!(
            output.contains("aidlc.lock.json") && output.contains("1073741824 bytes"),
            "{args:?} names the lock file and its size: {output}"
        );
    }
}

#[test]
fn a_fifo_journal_manifest_is_refused_at_once_by_plugin_sync() {
    let project = TestProject::default_framework();
    fifo_at(&project, ".aidlc-plugin-journal/manifest.json");
    let run = project.run_watched(&["plugin", "sync"], &[], None);
    let output = said(&run);
    assert_ne!(run.status, 0, "{output}");
    assert!(
        output.contains("manifest.json") && output.contains("FIFO"),
        "{output}"
    );
}

#[test]
fn a_fifo_harness_json_is_refused_at_once_by_plugin_list() {
    let project = TestProject::default_framework();
    fifo_at(&project, ".claude/tools/data/harness.json");
    let run = project.run_watched(&["plugin", "list"], &[], None);
    let output = said(&run);
    assert_ne!(run.status, 0, "{output}");
    assert!(
        output.contains("harness.json") && output.contains("FIFO"),
        "{output}"
    );
}

#[test]
fn an_oversized_plugin_file_is_refused_by_its_size_before_it_is_read() {
    let shelf = PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let notes = root.join("knowledge/acme-helper-agent/notes.md");

    // Composed while small, then grown at its source: `compile` and `doctor` read the source.
    let project = TestProject::default_framework();
    let added = project.run_watched(&["plugin", "add", root.as_str()], &[], None);
    assert_eq!(added.status, 0, "{}", said(&added));
    oversized(&notes);
    for args in [&["compile"][..], &["doctor"]] {
        let run = project.run_watched(args, &[], None);
        let output = said(&run);
        assert!(
            output.contains("notes.md") && output.contains("1073741824 bytes"),
            "{args:?} names the oversized plugin file: {output}"
        );
    }

    // Added while oversized: refused, naming the file.
    let fresh = TestProject::default_framework();
    let refused = fresh.run_watched(&["plugin", "add", root.as_str()], &[], None);
    let output = said(&refused);
    assert_ne!(refused.status, 0, "{output}");
    assert!(
        output.contains("notes.md") && output.contains("1073741824 bytes"),
        "{output}"
    );
    assert!(!fresh.exists("aidlc.lock.json"), "{output}");
}
