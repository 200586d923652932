//! The plugin selection at compile (`harness.json` `plugins`,
//! docs/decisions.md D14). With the reference's fixture plugin composed into a 2.5.36 install by
//! the reference composer, the reference compile (Bun) and `aidlc compile` write the same graph
//! and grid with `plugins` absent, `[]`, `["test-pro"]` and `["aidlc"]`; the closure check, the
//! strict reading of the key, and `harness.json` as a compile input.

use std::process::Command;

use camino::Utf8Path;

use crate::support::{
    GRAPH, GRID, REFERENCE_VERSIONS, Run, TestProject, audit_lock_path, copy_tree, node_tool, stage,
};

const HARNESS_JSON: &str = ".claude/tools/data/harness.json";

fn reference_plugin_dir(name: &str) -> camino::Utf8PathBuf {
    camino::Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference-plugins")
        .join(name)
}

/// `PATH` with Bun's folder first.
fn path_with(tool: &Utf8Path) -> String {
    format!(
        "{}:{}",
        tool.parent().unwrap(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `bun <args>` in `project`, with no `AIDLC_*` or Claude variables from the caller.
fn bun(bun: &Utf8Path, project: &Utf8Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(bun);
    command
        .args(args)
        .current_dir(project)
        .env("PATH", path_with(bun));
    for (name, _) in std::env::vars() {
        if name.starts_with("AIDLC_")
            || ["CLAUDE_PLUGIN_ROOT", "PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"].contains(&name.as_str())
        {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    Run::from(command.output().expect("run bun"))
}

fn ok(run: &Run, what: &str) {
    assert_eq!(run.status, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
}

fn harness_json(plugins: Option<&str>) -> String {
    match plugins {
        None => "{\n  \"harnessDir\": \".claude\",\n  \"rulesSubdir\": \"rules\"\n}\n".to_owned(),
        Some(list) => format!(
            "{{\n  \"harnessDir\": \".claude\",\n  \"rulesSubdir\": \"rules\",\n  \"plugins\": {list}\n}}\n"
        ),
    }
}

/// The program the reference's `select-plugins` runs as its compiled executable: its compile is
/// `aidlc compile` (run in place of the dispatcher, so its parent is `select-plugins`), its
/// runner generators the reference's own.
fn dispatcher_running_aidlc_compile(project: &TestProject) -> camino::Utf8PathBuf {
    let dispatcher = project.root.join(".aidlc-dispatcher.sh");
    let tools = project.root.join(".claude/tools");
    let script = format!(
        "#!/bin/sh\n\
         case \"$1 $2\" in\n\
         'graph compile') exec '{aidlc}' compile --project-dir \"$AIDLC_PROJECT_DIR\" ;;\n\
         'gen runners') exec bun '{tools}/aidlc-runner-gen.ts' write --project-dir \"$AIDLC_PROJECT_DIR\" ;;\n\
         'gen runner-scopes') exec bun '{tools}/aidlc-runner-gen.ts' scopes --project-dir \"$AIDLC_PROJECT_DIR\" ;;\n\
         esac\n\
         echo \"no route for $*\" >&2\n\
         exit 9\n",
        aidlc = env!("CARGO_BIN_EXE_aidlc"),
    );
    std::fs::write(&dispatcher, script).unwrap();
    std::fs::set_permissions(
        &dispatcher,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    dispatcher
}

/// The reference's `select-plugins` holds the workspace lock and runs the compile with
/// `AIDLC_WORKSPACE_LOCK_OWNER_PID` naming itself: `aidlc compile` writes inside that lock
/// (a compile that waited for it would be refused and write nothing), and leaves the lock to
/// its holder.
#[test]
fn the_reference_select_plugins_runs_aidlc_compile_inside_the_lock_it_holds() {
    let Some(bun_path) = node_tool("bun") else {
        return;
    };
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let shipped_graph = project.read(GRAPH);
        // The same graph in other bytes, so the compile writes, under the lock.
        let graph: serde_json::Value = serde_json::from_str(&shipped_graph).unwrap();
        project.write(GRAPH, &graph.to_string());
        let dispatcher = dispatcher_running_aidlc_compile(&project);
        let selecting = bun(
            &bun_path,
            &project.root,
            &[".claude/tools/aidlc-utility.ts", "select-plugins", "aidlc"],
            &[("AIDLC_COMPILED_EXECUTABLE", dispatcher.as_str())],
        );
        ok(&selecting, &format!("{version}: select-plugins"));
        assert!(
            project.read(GRAPH) == shipped_graph,
            "{version}: aidlc compile wrote the graph"
        );
        assert!(
            !audit_lock_path(&project).exists(),
            "{version}: the caller released its lock"
        );
    }
}

/// A holder's lock is the compile's own only when the variable names that holder and it is
/// alive; naming another live process, the compile waits for the lock and is refused.
#[test]
fn an_inherited_lock_is_the_compile_s_own_only_for_the_holder_it_names() {
    let project = TestProject::reference_install("2.6.54");
    let graph: serde_json::Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    project.write(GRAPH, &graph.to_string());
    let mut holder = Command::new("sleep").arg("60").spawn().unwrap();
    let lock = audit_lock_path(&project);
    std::fs::create_dir_all(&lock).unwrap();
    std::fs::write(
        lock.join("owner.json"),
        format!(
            r#"{{"pid":{},"startedAtMs":{},"reapLiveOwnerAfterStale":true}}"#,
            holder.id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis()
        ),
    )
    .unwrap();
    let not_the_holder = std::process::id().to_string();
    let refused = project.run_with_env(
        &["compile"],
        &[("AIDLC_WORKSPACE_LOCK_OWNER_PID", &not_the_holder)],
    );
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("Failed to acquire audit lock"),
        "{}",
        refused.stderr
    );
    let holder_pid = holder.id().to_string();
    let inherited = project.run_with_env(
        &["compile"],
        &[("AIDLC_WORKSPACE_LOCK_OWNER_PID", &holder_pid)],
    );
    assert_eq!(inherited.status, 0, "{}", inherited.stderr);
    assert!(lock.join("owner.json").is_file(), "the holder's lock stays");
    holder.kill().unwrap();
    holder.wait().unwrap();
    std::fs::remove_dir_all(&lock).unwrap();
}

#[test]
fn with_the_reference_fixture_plugin_the_reference_and_aidlc_compile_the_same_selection_bytes() {
    let Some(bun_path) = node_tool("bun") else {
        return;
    };
    // The reference composer copies test-pro into a 2.5.36 install and merges its
    // contributions (no selection yet: everything enabled).
    let composed = TestProject::reference_install("2.5.36");
    let shelf = tempfile::tempdir().unwrap();
    let projection = Utf8Path::from_path(shelf.path())
        .unwrap()
        .join("test-pro-claude-projection");
    copy_tree(
        &reference_plugin_dir("test-pro-claude-projection"),
        &projection,
    );
    let composing = bun(
        &bun_path,
        &composed.root,
        &[projection.join("hooks/compose.ts").as_str()],
        &[
            ("AIDLC_PLUGIN_ROOT", projection.as_str()),
            ("AIDLC_PROJECT_DIR", composed.root.as_str()),
            ("AIDLC_HARNESS_DIR", ".claude"),
        ],
    );
    ok(&composing, "the reference composer");
    let mut disabled_counts = Vec::new();
    for plugins in [
        None,
        Some("[]"),
        Some("[\"test-pro\"]"),
        Some("[\"aidlc\"]"),
    ] {
        let theirs = TestProject::empty();
        copy_tree(&composed.root, &theirs.root);
        theirs.write(HARNESS_JSON, &harness_json(plugins));
        let ours = TestProject::empty();
        copy_tree(&theirs.root, &ours.root);
        ok(
            &bun(
                &bun_path,
                &theirs.root,
                &[".claude/tools/aidlc-graph.ts", "compile"],
                &[],
            ),
            "the reference compile",
        );
        ok(&ours.compile(), "aidlc compile");
        for output in [GRAPH, GRID] {
            assert!(
                theirs.read(output) == ours.read(output),
                "{output} differs with plugins {plugins:?}"
            );
        }
        disabled_counts.push(ours.read(GRAPH).matches("\"enabled\": false").count());
        // And the reference's own drift guard agrees.
        ok(
            &bun(
                &bun_path,
                &ours.root,
                &[".claude/tools/aidlc-graph.ts", "compile", "--check"],
                &[],
            ),
            "the reference's compile --check on aidlc's output",
        );
    }
    // The cases differ from one another: nothing disabled, then everything but the three
    // initialization stages, then the core, then test-pro's two stages.
    assert_eq!(disabled_counts[0], 0);
    assert_eq!(disabled_counts[3], 2);
    assert!(
        disabled_counts[1] > disabled_counts[2],
        "{disabled_counts:?}"
    );
}

/// A core stage that needs an artifact only the `acme` plugin's stage produces.
fn project_with_a_plugin_producer() -> TestProject {
    let project = TestProject::minimal();
    project.write(
        ".claude/aidlc-common/stages/inception/acme-scan.md",
        &stage("acme-scan", "inception", "[]", "[]", "plugin: acme\n"),
    );
    project.write(
        ".claude/aidlc-common/stages/inception/second-stage.md",
        &stage(
            "second-stage",
            "inception",
            "[first-stage, acme-scan]",
            "[]",
            "",
        )
        .replace(
            "consumes: []",
            "consumes:\n  - artifact: acme-scan-doc\n    required: true",
        ),
    );
    project.write(
        ".claude/scopes/aidlc-feature.md",
        "---\nname: feature\ndepth: Standard\n---\n# Feature\n",
    );
    project
}

#[test]
fn an_enabled_stage_whose_required_artifact_only_a_disabled_plugin_produces_is_a_compile_error() {
    let project = project_with_a_plugin_producer();
    ok(&project.compile(), "no selection: every plugin enabled");
    let graph_before = project.read(GRAPH);
    project.write(HARNESS_JSON, "{\n  \"plugins\": [\"aidlc\"]\n}\n");
    let run = project.run(&["compile", "--format", "json"]);
    assert_eq!(run.status, 1, "{}\n{}", run.stdout, run.stderr);
    let diagnostic: serde_json::Value = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|value| value["code"] == "disabled-producers")
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert_eq!(
        diagnostic["message"],
        "Plugin selection closure failed: enabled stage \"second-stage\" consumes required artifact \"acme-scan-doc\", but its only producer(s) are disabled: acme-scan (acme). Enable plugin(s) acme or disable the consuming stage."
    );
    assert_eq!(
        diagnostic["file"],
        ".claude/aidlc-common/stages/inception/second-stage.md"
    );
    assert!(
        diagnostic["line"].as_u64().is_some(),
        "a span: {diagnostic}"
    );
    assert_eq!(diagnostic["related"][0]["file"], HARNESS_JSON);
    assert_eq!(project.read(GRAPH), graph_before, "nothing written");

    // Selecting the producer's plugin too compiles; the ordering edge to a disabled stage is
    // not an error, and its stage is marked.
    project.write(HARNESS_JSON, "{\n  \"plugins\": [\"aidlc\", \"acme\"]\n}\n");
    ok(&project.compile(), "both selected");
    assert!(!project.read(GRAPH).contains("\"enabled\""));
}

#[test]
fn a_disabled_stage_keeps_its_number_and_node_and_leaves_the_grid() {
    let project = project_with_a_plugin_producer();
    project.write(
        ".claude/aidlc-common/stages/inception/second-stage.md",
        &stage(
            "second-stage",
            "inception",
            "[first-stage, acme-scan]",
            "[]",
            "",
        ),
    );
    ok(&project.compile(), "all enabled");
    let all: serde_json::Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    assert!(project.read(GRID).contains("acme-scan"));
    project.write(HARNESS_JSON, "{\"plugins\": [\"aidlc\"]}\n");
    ok(&project.compile(), "core only");
    let core: serde_json::Value = serde_json::from_str(&project.read(GRAPH)).unwrap();
    let node = |graph: &serde_json::Value, slug: &str| {
        graph
            .as_array()
            .unwrap()
            .iter()
            .find(|node| node["slug"] == slug)
            .unwrap()
            .clone()
    };
    assert_eq!(node(&core, "acme-scan")["enabled"], false);
    assert_eq!(
        node(&core, "acme-scan")["number"],
        node(&all, "acme-scan")["number"]
    );
    assert!(node(&core, "second-stage").get("enabled").is_none());
    assert!(
        !project.read(GRID).contains("acme-scan"),
        "{}",
        project.read(GRID)
    );
}

#[test]
fn the_plugins_key_is_read_strictly_with_a_span_into_harness_json() {
    for (text, expected, at) in [
        (
            "{\n  \"plugins\": \"acme\"\n}\n",
            "must be a list of plugin names",
            "\"acme\"",
        ),
        (
            "{\n  \"plugins\": [\"aidlc\", \"Acme\"]\n}\n",
            "entry 1 (\"Acme\") is not a plugin name",
            "\"Acme\"",
        ),
        (
            "{\n  \"plugins\": [\"aidlc\", \"aidlc\"]\n}\n",
            "names \"aidlc\" twice",
            "\"aidlc\"",
        ),
        (
            "{\n  \"plugins\": [\"aidlc\", \"acme\", \"acne\"]\n}\n",
            "names \"acne\", which no stage or scope of this install belongs to (known: acme, aidlc)",
            "[\"aidlc\", \"acme\", \"acne\"]",
        ),
    ] {
        let project = project_with_a_plugin_producer();
        project.write(HARNESS_JSON, text);
        let run = project.run(&["compile", "--format", "json"]);
        assert_eq!(run.status, 1, "{text}: {}\n{}", run.stdout, run.stderr);
        let diagnostic: serde_json::Value = run
            .stdout
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .find(|value| value["code"] == "invalid-plugin-selection")
            .unwrap_or_else(|| panic!("{text}: {}", run.stdout));
        let message = diagnostic["message"].as_str().unwrap();
        assert!(message.contains(expected), "{text}: {message}");
        assert_eq!(diagnostic["file"], HARNESS_JSON);
        let line = usize::try_from(diagnostic["line"].as_u64().unwrap()).unwrap();
        let column = usize::try_from(diagnostic["column"].as_u64().unwrap()).unwrap();
        let line_text = text.lines().nth(line - 1).unwrap();
        assert!(
            line_text[column - 1..].starts_with(at),
            "{text}: points at {line}:{column}"
        );
        assert!(!project.exists(GRAPH), "nothing written");
    }
}

#[test]
fn editing_harness_json_recompiles_and_an_unchanged_one_is_up_to_date() {
    let project = project_with_a_plugin_producer();
    project.write(
        ".claude/aidlc-common/stages/inception/second-stage.md",
        &stage(
            "second-stage",
            "inception",
            "[first-stage, acme-scan]",
            "[]",
            "",
        ),
    );
    project.write(HARNESS_JSON, "{\"plugins\": [\"aidlc\", \"acme\"]}\n");
    ok(&project.compile(), "first");
    let again = project.compile();
    ok(&again, "second");
    assert!(
        again.stderr.contains("up to date: nothing changed"),
        "{}",
        again.stderr
    );
    let before = project.read(GRAPH);
    project.write(HARNESS_JSON, "{\"plugins\": [\"aidlc\"]}\n");
    let edited = project.compile();
    ok(&edited, "after the edit");
    assert!(
        !edited.stderr.contains("nothing changed"),
        "{}",
        edited.stderr
    );
    assert_ne!(
        project.read(GRAPH),
        before,
        "the selection's edit reached the graph"
    );
    assert!(project.read(GRAPH).contains("\"enabled\": false"));
    project.remove(HARNESS_JSON);
    ok(&project.compile(), "after the removal");
    assert_eq!(project.read(GRAPH), before);
}

#[test]
fn doctor_reports_the_selection_the_dropped_ordering_edges_and_drifted_plugin_copies() {
    let project = project_with_a_plugin_producer();
    project.write(
        ".claude/aidlc-common/stages/inception/second-stage.md",
        &stage(
            "second-stage",
            "inception",
            "[first-stage, acme-scan]",
            "[]",
            "",
        ),
    );
    let shelf = tempfile::tempdir().unwrap();
    let plugin = Utf8Path::from_path(shelf.path()).unwrap().join("extra");
    std::fs::create_dir_all(plugin.join(".aidlc-plugin")).unwrap();
    std::fs::create_dir_all(plugin.join("stages/inception")).unwrap();
    std::fs::write(
        plugin.join(".aidlc-plugin/plugin.json"),
        "{\"name\": \"extra\", \"version\": \"0.3.0\", \"dependencies\": [\"core\"]}\n",
    )
    .unwrap();
    std::fs::write(
        plugin.join("stages/inception/extra-notes.md"),
        stage(
            "extra-notes",
            "inception",
            "[first-stage]",
            "[]",
            "plugin: extra\n",
        ),
    )
    .unwrap();
    ok(
        &project.run(&["plugin", "add", plugin.as_str()]),
        "plugin add",
    );
    project.write(HARNESS_JSON, "{\"plugins\": [\"aidlc\", \"extra\"]}\n");
    ok(&project.compile(), "compile");

    let doctor = project.run(&["doctor"]);
    let report = format!("{}{}", doctor.stdout, doctor.stderr);
    assert!(
        report.contains(
            "Plugins: 1 composed, selected aidlc, extra (acme disabled, 0 of 1 stages enabled; aidlc enabled, 2 of 2 stages enabled; extra 0.3.0 enabled, 1 of 1 stages enabled)"
        ),
        "{report}"
    );
    assert!(
        report.contains("Selection ordering edges: 1 dropped (the required stage is disabled, so the edge orders nothing): second-stage requires acme-scan (acme, disabled)"),
        "{report}"
    );
    assert!(
        report.contains("Plugin files: every composed file holds the bytes"),
        "{report}"
    );

    let copy = ".claude/aidlc-common/stages/inception/extra-notes.md";
    project.write(
        copy,
        &project
            .read(copy)
            .replace("Prose about", "Edited prose about"),
    );
    let doctor = project.run(&["doctor"]);
    let report = format!("{}{}", doctor.stdout, doctor.stderr);
    assert!(
        report.contains(&format!(
            "Plugin files: 1 installed copy differs from what was composed: {copy} (extra)"
        )),
        "{report}"
    );
}

#[test]
fn a_diagnostic_in_a_plugin_s_file_names_the_plugin_in_every_format() {
    let project = project_with_a_plugin_producer();
    let plugin_stage = ".claude/aidlc-common/stages/inception/acme-scan.md";
    project.write(
        plugin_stage,
        &project
            .read(plugin_stage)
            .replace("lead_agent: aidlc-demo-agent", "lead_agent: nobody-agent"),
    );
    let core_stage = ".claude/aidlc-common/stages/inception/first-stage.md";
    project.write(
        core_stage,
        &project
            .read(core_stage)
            .replace("lead_agent: aidlc-demo-agent", "lead_agent: nobody-agent"),
    );
    let human = project.compile();
    assert_eq!(human.status, 1);
    assert!(
        human
            .stderr
            .contains("has no matching .claude/agents/*.md [plugin acme]"),
        "{}",
        human.stderr
    );
    assert_eq!(
        human.stderr.matches("[plugin ").count(),
        1,
        "{}",
        human.stderr
    );

    let json = project.run(&["compile", "--format", "json"]);
    let lines: Vec<serde_json::Value> = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let of = |file: &str| {
        lines
            .iter()
            .find(|line| line["file"] == file)
            .unwrap()
            .clone()
    };
    assert_eq!(of(plugin_stage)["plugin"], "acme");
    assert!(
        of(core_stage).get("plugin").is_none(),
        "the core's line is as it was"
    );

    let sarif = project.run(&["compile", "--format", "sarif"]);
    let log: serde_json::Value = serde_json::from_str(&sarif.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let plugins: Vec<&serde_json::Value> = results
        .iter()
        .map(|result| &result["properties"]["plugin"])
        .filter(|plugin| !plugin.is_null())
        .collect();
    assert_eq!(plugins, [&serde_json::json!("acme")]);
}

fn freeform_scope(plugin: &str) -> String {
    format!(
        "---\nname: {plugin}-free\nplugin: {plugin}\ndepth: Minimal\ndescription: Free work for {plugin}\nfreeform_default: true\n---\n\n# {plugin}-free scope\n"
    )
}

/// docs/decisions.md D51: two enabled scopes nominating the freeform default fail the compile,
/// as the reference's does, with a span on each `freeform_default` value and the plugins named;
/// leaving one plugin out of the selection leaves one nomination, which compiles.
#[test]
fn two_enabled_scopes_nominating_the_freeform_default_fail_the_compile_unless_one_is_deselected() {
    let project = TestProject::default_framework();
    project.write(
        ".claude/scopes/aidlc-alpha-free.md",
        &freeform_scope("alpha"),
    );
    project.write(".claude/scopes/aidlc-beta-free.md", &freeform_scope("beta"));
    let refused = project.compile();
    assert_eq!(refused.status, 1, "{}\n{}", refused.stdout, refused.stderr);
    let output = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        output.contains("Multiple enabled scopes declare freeform_default: true (alpha-free, beta-free). At most one"),
        "{output}"
    );
    for file in ["aidlc-alpha-free.md:6:19", "aidlc-beta-free.md:6:19"] {
        assert!(output.contains(file), "{file}: {output}");
    }
    assert!(
        output.contains("alpha-free (plugin alpha), beta-free (plugin beta)"),
        "{output}"
    );
    assert!(!project.exists(GRAPH), "nothing is written");

    project.write(HARNESS_JSON, &harness_json(Some("[\"aidlc\", \"alpha\"]")));
    ok(
        &project.compile(),
        "beta's scope is disabled, so one nomination is left",
    );
    project.write(
        HARNESS_JSON,
        &harness_json(Some("[\"aidlc\", \"alpha\", \"beta\"]")),
    );
    assert_eq!(project.compile().status, 1, "both selected again");
}
