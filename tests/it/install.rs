//! The ways aidlc reaches a team (issue 15): the npm package (packed with `npm/pack`, installed
//! offline from its tarballs, run through `npx`), the GitHub Action (`action.yml`) and the
//! pre-commit hooks (`.pre-commit-hooks.yaml`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{Run, TestProject, system_tool};

fn repo() -> Utf8PathBuf {
    Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn aidlc_binary() -> &'static str {
    env!("CARGO_BIN_EXE_aidlc")
}

fn read_json(path: &Utf8Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn read_yaml(path: &Utf8Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn run(command: &mut Command) -> Run {
    Run::from(command.output().expect("start a program"))
}

// --- the npm package

#[test]
fn the_npm_package_tables_agree_with_the_crate() {
    let launcher = read_json(&repo().join("npm/aidlc/package.json"));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(launcher["name"], "aidlc");
    assert_eq!(
        launcher["version"], version,
        "bump npm/aidlc/package.json with Cargo.toml"
    );
    assert_eq!(launcher["license"], "MIT OR Apache-2.0");
    let platforms = read_json(&repo().join("npm/aidlc/lib/platforms.json"));
    let packages: Vec<&str> = platforms
        .as_array()
        .expect("a list of platforms")
        .iter()
        .map(|entry| entry["package"].as_str().expect("a package name"))
        .collect();
    let optional: Vec<(&String, &Value)> = launcher["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies")
        .iter()
        .collect();
    assert_eq!(
        optional
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
        packages,
        "the launcher's optional dependencies are the platform table"
    );
    for (name, pinned) in optional {
        assert_eq!(pinned, version, "{name} is pinned at another version");
        assert!(name.starts_with("@aidlc-engine/cli-"), "{name}");
    }
    let bin = launcher["bin"]["aidlc"].as_str().expect("a bin entry");
    let script = std::fs::read_to_string(repo().join("npm/aidlc").join(bin)).expect("the bin");
    assert!(script.starts_with("#!/usr/bin/env node\n"));
    for file in launcher["files"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        let source = if file.starts_with("LICENSE-") {
            repo().join(file)
        } else {
            repo().join("npm/aidlc").join(file)
        };
        assert!(source.is_file(), "{file} is listed but missing");
    }
}

/// Everything `npm` and `npx` need to stay offline: a private cache, no registry to reach.
fn offline(program: &Utf8Path, cache: &Utf8Path) -> Command {
    let mut command = Command::new(program);
    command
        .env("npm_config_cache", cache)
        .env("npm_config_offline", "true")
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false")
        .env("NO_COLOR", "1");
    command
}

#[test]
fn the_npm_package_packs_installs_offline_and_runs_through_npx() {
    let (Some(node), Some(npm), Some(npx)) =
        (system_tool("node"), system_tool("npm"), system_tool("npx"))
    else {
        return;
    };
    let work = TestProject::empty();
    let cache = work.path("npm-cache");
    let out = work.path("tarballs");

    let packed = run(Command::new(&node)
        .arg(repo().join("npm/pack"))
        .arg(&out)
        .env("AIDLC_BINARY", aidlc_binary()));
    assert_eq!(packed.status, 0, "{}", packed.stderr);
    let tarballs: Vec<&str> = packed.stdout.lines().collect();
    let platform_package = run(Command::new(&node).arg("-p").arg(format!(
        "require({:?}).currentPlatform().package",
        repo().join("npm/aidlc/lib/platform.js")
    )));
    let platform_package = platform_package.stdout.trim();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        tarballs,
        [
            out.join(format!("aidlc-{version}.tgz")).as_str(),
            out.join(format!(
                "{}-{version}.tgz",
                platform_package.trim_start_matches('@').replace('/', "-")
            ))
            .as_str()
        ]
    );

    let project = work.path("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        "{\"name\": \"demo\", \"version\": \"1.0.0\", \"private\": true}\n",
    )
    .unwrap();
    let installed = run(offline(&npm, &cache)
        .current_dir(&project)
        .args(["install", "--loglevel=error"])
        .args(&tarballs));
    assert_eq!(
        installed.status, 0,
        "{}{}",
        installed.stdout, installed.stderr
    );
    let binary = project
        .join("node_modules")
        .join(platform_package)
        .join("aidlc");
    assert!(binary.is_file(), "{binary} was not installed");

    let npx_aidlc = |args: &[&str]| {
        run(offline(&npx, &cache)
            .current_dir(&project)
            .arg("aidlc")
            .args(args))
    };
    let version_run = npx_aidlc(&["--version"]);
    assert_eq!(version_run.status, 0, "{}", version_run.stderr);
    assert_eq!(version_run.stdout, format!("aidlc {version}\n"));

    assert_eq!(npx_aidlc(&["init", "."]).status, 0);
    let compiled = npx_aidlc(&["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    assert!(
        compiled.stderr.contains("compiled 33 stages"),
        "{}",
        compiled.stderr
    );
    assert!(
        project
            .join(".claude/tools/data/stage-graph.json")
            .is_file()
    );

    // The launcher exits as aidlc exits.
    let usage = npx_aidlc(&["compile", "--no-such-flag"]);
    assert_eq!(usage.status, 2, "{}", usage.stderr);
    assert!(usage.stderr.contains("--no-such-flag"), "{}", usage.stderr);
    std::fs::write(
        project.join(".claude/sensors/aidlc-broken.md"),
        "no frontmatter\n",
    )
    .unwrap();
    assert_eq!(npx_aidlc(&["compile"]).status, 1);
    std::fs::remove_file(project.join(".claude/sensors/aidlc-broken.md")).unwrap();

    launcher_names_a_platform_it_has_no_binary_for(&node, &project);
    launcher_passes_signals_on(&project);
    launcher_names_a_missing_platform_package(&node, &project, platform_package);
}

/// The launcher on a platform the table lacks: exit 2, naming the platform and the table.
fn launcher_names_a_platform_it_has_no_binary_for(node: &Utf8Path, project: &Utf8Path) {
    let fake = project.join("fake-platform.js");
    std::fs::write(
        &fake,
        "Object.defineProperty(process, 'platform', { value: 'aix' });\n",
    )
    .unwrap();
    let unknown = run(Command::new(node)
        .current_dir(project)
        .arg("--require")
        .arg(&fake)
        .arg("node_modules/aidlc/bin/aidlc.js")
        .arg("--version"));
    assert_eq!(unknown.status, 2, "{}", unknown.stderr);
    assert!(unknown.stdout.is_empty());
    assert!(
        unknown
            .stderr
            .contains("aidlc has no prebuilt binary for this platform: aix-"),
        "{}",
        unknown.stderr
    );
    assert!(
        unknown.stderr.contains("linux-x64 (glibc)"),
        "{}",
        unknown.stderr
    );
    assert!(
        unknown.stderr.contains("cargo install --locked"),
        "{}",
        unknown.stderr
    );
}

/// The platform's package left out (`--omit=optional`): exit 2, naming the package.
fn launcher_names_a_missing_platform_package(
    node: &Utf8Path,
    project: &Utf8Path,
    platform_package: &str,
) {
    let installed = project.join("node_modules").join(platform_package);
    let aside = project.join("aside");
    std::fs::rename(&installed, &aside).unwrap();
    let missing = run(Command::new(node)
        .current_dir(project)
        .arg("node_modules/aidlc/bin/aidlc.js")
        .arg("--version"));
    std::fs::rename(&aside, &installed).unwrap();
    assert_eq!(missing.status, 2, "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains(&format!("{platform_package} is missing")),
        "{}",
        missing.stderr
    );
}

/// `compile --watch` through the launcher, stopped by SIGTERM to the launcher alone (as a hook
/// runner's timeout sends it) and by SIGINT to the whole group (Ctrl-C): both times aidlc gets
/// exactly the signal, stops its watch (exit 130), and the launcher exits 130 too.
fn launcher_passes_signals_on(project: &Utf8Path) {
    use std::os::unix::process::CommandExt as _;
    for to_group in [false, true] {
        let output = project.join("watch.out");
        let mut child = Command::new(project.join("node_modules/.bin/aidlc"))
            .current_dir(project)
            .args(["compile", "--watch", "--format", "json"])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&output).unwrap())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start the launcher");
        let started = Instant::now();
        while !std::fs::read_to_string(&output)
            .unwrap_or_default()
            .contains("\"event\":\"watching\"")
        {
            assert!(
                started.elapsed() < crate::support::HANG,
                "no watching event"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = rustix::process::Pid::from_child(&child);
        if to_group {
            rustix::process::kill_process_group(pid, rustix::process::Signal::INT).unwrap();
        } else {
            rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        }
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > crate::support::HANG {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                panic!("the launcher did not stop (to_group: {to_group})");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(130), "to_group: {to_group}: {status:?}");
        let events = std::fs::read_to_string(&output).unwrap();
        assert!(events.contains("\"event\":\"stopped\""), "{events}");
    }
}

// --- the GitHub Action

/// The step of `action.yml` named `name`.
fn action_step<'a>(action: &'a Value, name: &str) -> &'a Value {
    action["runs"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|step| step["name"] == name)
        .unwrap_or_else(|| panic!("no step {name:?}"))
}

#[test]
fn the_action_is_a_composite_with_the_documented_inputs() {
    let action = read_yaml(&repo().join("action.yml"));
    assert_eq!(action["runs"]["using"], "composite");
    for input in [
        "version",
        "install",
        "args",
        "working-directory",
        "sarif",
        "sarif-category",
    ] {
        assert!(
            action["inputs"][input]["description"].is_string(),
            "input {input} is missing or undocumented"
        );
    }
    assert_eq!(action["inputs"]["install"]["default"], "cargo");
    let upload = action_step(&action, "Upload the SARIF report");
    assert!(
        upload["uses"]
            .as_str()
            .unwrap()
            .starts_with("github/codeql-action/upload-sarif@"),
    );
    let condition = upload["if"].as_str().unwrap();
    assert!(condition.contains("always()") && condition.contains("inputs.sarif != ''"));
    for step in action["runs"]["steps"].as_array().unwrap() {
        if let Some(script) = step["run"].as_str() {
            assert!(
                !script.contains("${{"),
                "step {:?} expands an expression inside its script",
                step["name"]
            );
            assert_eq!(step["shell"], "bash");
        }
    }
    assert_eq!(
        action["outputs"]["exit-code"]["value"],
        "${{ steps.run.outputs.exit-code }}"
    );
}

/// A folder of fake `cargo` and `npm` that record their arguments and "install" the test's
/// `aidlc` into the same folder, so that the script's `aidlc --version` finds it.
fn fake_installers(work: &TestProject) -> Utf8PathBuf {
    let bin = work.path("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["cargo", "npm"] {
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\"{log}\"\nln -sf \"{aidlc}\" \"{bin}/aidlc\"\n",
            log = work.path("installs.log"),
            aidlc = aidlc_binary(),
        );
        let path = bin.join(tool);
        std::fs::write(&path, script).unwrap();
        make_executable(&path);
    }
    bin
}

fn make_executable(path: &Utf8Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Run one step's script as the runner would: `bash -e {0}` with the step's environment.
fn run_step(script: &str, cwd: &Utf8Path, path_dirs: &[&Utf8Path], env: &[(&str, &str)]) -> Run {
    let path = std::env::join_paths(
        path_dirs
            .iter()
            .map(|dir| dir.as_std_path().to_path_buf())
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
    )
    .unwrap();
    run(Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-e",
            "-o",
            "pipefail",
            "-c",
            script,
        ])
        .current_dir(cwd)
        .env("PATH", path)
        .env("HOME", cwd)
        .envs(env.iter().copied()))
}

#[test]
fn the_actions_cache_key_follows_the_source_or_the_version() {
    let action = read_yaml(&repo().join("action.yml"));
    let script = action_step(&action, "Fingerprint the aidlc source")["run"]
        .as_str()
        .unwrap();
    let work = TestProject::empty();
    work.write("source/Cargo.toml", "[package]\n");
    work.write("source/Cargo.lock", "# lock\n");
    work.write("source/src/main.rs", "fn main() {}\n");
    work.write("source/README.md", "not part of the build\n");
    let key = |version: &str| {
        let outputs = work.path("github-output");
        let _ = std::fs::remove_file(&outputs);
        let source = work.path("source");
        let step = run_step(
            script,
            &work.root,
            &[],
            &[
                ("AIDLC_ACTION_PATH", source.as_str()),
                ("AIDLC_VERSION", version),
                ("GITHUB_OUTPUT", outputs.as_str()),
            ],
        );
        assert_eq!(step.status, 0, "{}", step.stderr);
        std::fs::read_to_string(&outputs).unwrap()
    };
    let first = key("");
    assert!(
        first.starts_with("key=source-") && first.len() == "key=source-".len() + 33,
        "{first}"
    );
    assert_eq!(key(""), first, "the key is stable");
    work.write("source/README.md", "edited, still not part of the build\n");
    assert_eq!(key(""), first, "a file outside the build changed the key");
    work.write("source/src/main.rs", "fn main() { }\n");
    assert_ne!(key(""), first, "a source edit kept the key");
    assert_eq!(key("1.2.3"), "key=version-1.2.3\n");
}

#[test]
fn the_actions_install_step_builds_this_source_or_the_named_version() {
    let action = read_yaml(&repo().join("action.yml"));
    let script = action_step(&action, "Install aidlc")["run"]
        .as_str()
        .unwrap();
    let work = TestProject::empty();
    let bin = fake_installers(&work);
    let repo = repo();
    let base = [
        ("AIDLC_ACTION_PATH", repo.as_str()),
        ("AIDLC_ACTION_REPOSITORY", "example/aidlc"),
        ("GITHUB_SERVER_URL", "https://github.example"),
        ("AIDLC_CACHE_HIT", ""),
    ];
    let cases = [
        ("cargo", "", format!("install --locked --path {repo}")),
        (
            "cargo",
            "1.2.3",
            "install --locked --git https://github.example/example/aidlc --tag v1.2.3 aidlc"
                .to_owned(),
        ),
        (
            "npm",
            "",
            format!(
                "install --global --no-audit --no-fund aidlc@{}",
                env!("CARGO_PKG_VERSION")
            ),
        ),
        (
            "npm",
            "1.2.3",
            "install --global --no-audit --no-fund aidlc@1.2.3".to_owned(),
        ),
    ];
    for (install, version, expected) in cases {
        let _ = std::fs::remove_file(work.path("installs.log"));
        let mut env = base.to_vec();
        env.extend([("AIDLC_INSTALL", install), ("AIDLC_VERSION", version)]);
        let step = run_step(script, &work.root, &[&bin], &env);
        assert_eq!(
            step.status, 0,
            "{install} {version}: {}{}",
            step.stdout, step.stderr
        );
        assert_eq!(work.read("installs.log"), format!("{expected}\n"));
        assert!(
            step.stdout
                .ends_with(&format!("aidlc {}\n", env!("CARGO_PKG_VERSION"))),
            "{}",
            step.stdout
        );
    }
    let mut env = base.to_vec();
    env.extend([("AIDLC_INSTALL", "brew"), ("AIDLC_VERSION", "")]);
    let refused = run_step(script, &work.root, &[&bin], &env);
    assert_eq!(refused.status, 2);
    assert!(refused.stdout.contains("::error"), "{}", refused.stdout);
}

#[test]
fn the_actions_run_step_runs_the_arguments_and_reports_the_exit_code() {
    let action = read_yaml(&repo().join("action.yml"));
    let step = action_step(&action, "Run aidlc");
    assert_eq!(step["id"], "run");
    let script = step["run"].as_str().unwrap();
    let project = TestProject::default_framework();
    let bin = project.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(aidlc_binary(), bin.join("aidlc")).unwrap();
    let outputs = project.path("github-output");
    // The runner's home folder is never the checkout: a home folder's own harness folder is
    // never taken for a project.
    let home = TestProject::empty();
    let run_args = |args: &str| {
        let _ = std::fs::remove_file(&outputs);
        let step = run_step(
            script,
            &project.root,
            &[&bin],
            &[
                ("AIDLC_ARGS", args),
                ("GITHUB_OUTPUT", outputs.as_str()),
                ("HOME", home.root.as_str()),
            ],
        );
        (step, std::fs::read_to_string(&outputs).unwrap_or_default())
    };
    let (compiled, output) = run_args("compile   --quiet");
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    assert_eq!(output, "exit-code=0\n");
    let (checked, output) = run_args("compile --check");
    assert_eq!(checked.status, 0, "{}", checked.stderr);
    assert_eq!(output, "exit-code=0\n");
    let stage = ".claude/aidlc-common/stages/ideation/feasibility.md";
    let text = project.read(stage);
    project.write(stage, &text.replace("phase: ideation", "phase: design"));
    let (failed, output) = run_args("compile --check");
    assert_eq!(failed.status, 1, "{}", failed.stderr);
    assert_eq!(output, "exit-code=1\n");
    project.write(stage, &text);
    // A glob in the arguments reaches aidlc as it is, not expanded against the folder.
    let (globbed, output) = run_args("graph --stage *");
    assert_eq!(globbed.status, 2, "{}", globbed.stderr);
    assert!(
        globbed.stderr.contains("no stage \"*\""),
        "{}",
        globbed.stderr
    );
    assert_eq!(output, "exit-code=2\n");
}

// --- pre-commit

#[test]
fn the_pre_commit_hooks_run_their_entries_against_a_project() {
    let hooks = read_yaml(&repo().join(".pre-commit-hooks.yaml"));
    let hooks = hooks.as_array().expect("a list of hooks");
    let ids: Vec<&str> = hooks
        .iter()
        .map(|hook| hook["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["aidlc-compile-check", "aidlc-gate-check"]);
    let project = TestProject::empty();
    assert_eq!(project.run(&["init", ".", "--example"]).status, 0);
    assert_eq!(project.compile().status, 0);
    let entry_of = |id: &str| -> Vec<String> {
        let hook = hooks.iter().find(|hook| hook["id"] == id).unwrap();
        assert_eq!(hook["language"], "rust", "{id}");
        assert_eq!(hook["pass_filenames"], false, "{id}");
        let entry: Vec<String> = hook["entry"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        assert_eq!(entry[0], "aidlc", "{id}");
        entry[1..].to_vec()
    };
    let run_hook = |id: &str| {
        let args = entry_of(id);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        project.run(&args)
    };
    let files_regex = |id: &str| -> String {
        let hook = hooks.iter().find(|hook| hook["id"] == id).unwrap();
        hook["files"].as_str().unwrap().to_owned()
    };

    let clean = run_hook("aidlc-compile-check");
    assert_eq!(clean.status, 0, "{}", clean.stderr);
    let ledger_before = audit_files(&project);
    let gate = run_hook("aidlc-gate-check");
    assert_eq!(gate.status, 0, "{}{}", gate.stdout, gate.stderr);
    assert_eq!(
        audit_files(&project),
        ledger_before,
        "the gate hook wrote into the project"
    );

    // A stage edit the graph does not have yet fails the compile hook.
    let stage = ".claude/aidlc-common/stages/ideation/feasibility.md";
    let text = project.read(stage);
    project.write(stage, &text.replace("mode: inline", "mode: subagent"));
    let drift = run_hook("aidlc-compile-check");
    assert_eq!(drift.status, 1, "{}", drift.stderr);
    assert!(drift.stderr.contains("is out of date"), "{}", drift.stderr);
    project.write(stage, &text);

    // A blocking sensor with findings fails the gate hook.
    let manifest = ".claude/sensors/aidlc-required-sections.md";
    project.write(
        manifest,
        &project
            .read(manifest)
            .replace("default_severity: advisory", "default_severity: blocking"),
    );
    assert_eq!(project.compile().status, 0);
    let blocked = run_hook("aidlc-gate-check");
    assert_eq!(blocked.status, 1, "{}{}", blocked.stdout, blocked.stderr);

    // The `files` patterns select the inputs each hook reads (pre-commit runs a hook only when
    // a staged path matches; grep -E reads these patterns as Python's `re` does).
    let Some(grep) = system_tool("grep") else {
        return;
    };
    let paths = "\
.claude/sensors/aidlc-linter.md
.claude/aidlc-common/stages/ideation/feasibility.md
.codex/agents/aidlc-product-agent.md
aidlc/spaces/default/memory/org.md
aidlc/spaces/default/intents/x/inception/requirements-analysis/requirements.md
src/main.rs
README.md
";
    for (id, wanted) in [("aidlc-compile-check", 4), ("aidlc-gate-check", 5)] {
        let matched = run(Command::new(&grep)
            .args(["-E", "-c", &files_regex(id)])
            .arg(write_temp(&project, "paths.txt", paths)));
        assert_eq!(
            matched.stdout.trim(),
            wanted.to_string(),
            "{id}: {}",
            matched.stderr
        );
    }
}

fn write_temp(project: &TestProject, name: &str, text: &str) -> Utf8PathBuf {
    project.write(name, text);
    project.path(name)
}

/// Every file under the intent records' audit and engine folders, with its length.
fn audit_files(project: &TestProject) -> Vec<(String, u64)> {
    fn walk(folder: &Utf8Path, found: &mut Vec<(String, u64)>) {
        let Ok(entries) = folder.read_dir_utf8() else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().into_path();
            if path.is_dir() {
                walk(&path, found);
            } else {
                let length = path.metadata().unwrap().len();
                found.push((path.to_string(), length));
            }
        }
    }
    let mut found = Vec::new();
    walk(&project.path("aidlc"), &mut found);
    found.sort();
    found
}
