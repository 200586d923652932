//! The ways aidlc reaches a team: the npm package (packed with `npm/pack`, installed
//! offline from its tarballs, run through `npx`), the GitHub Action (`action.yml`) and the
//! pre-commit hooks (`.pre-commit-hooks.yaml`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{Run, SearchPath, TestProject, system_tool};

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

/// `npm/pack` takes the release binary from the folder cargo builds into, as cargo resolves it:
/// `CARGO_TARGET_DIR` moves it (relative to the working folder, as cargo reads it).
#[test]
fn npm_pack_takes_the_release_binary_from_where_cargo_target_dir_puts_it() {
    let (Some(node), Some(_)) = (system_tool("node"), system_tool("npm")) else {
        return;
    };
    let work = TestProject::empty();
    let cache = work.path("npm-cache");
    let pack = || {
        run(offline(&node, &cache)
            .arg(repo().join("npm/pack"))
            .arg(work.path("tarballs"))
            .current_dir(&work.root)
            .env("CARGO_TARGET_DIR", "elsewhere")
            .env_remove("AIDLC_BINARY"))
    };
    let missing = pack();
    assert_eq!(missing.status, 1, "{}", missing.stderr);
    assert!(
        missing.stderr.contains(&format!(
            "{} does not exist",
            work.path("elsewhere/release/aidlc")
        )),
        "{}",
        missing.stderr
    );
    // A small stand-in answers `--version` as the release build would (packing the test's own
    // build, hundreds of megabytes with debug information, is the other npm test's job).
    let version = env!("CARGO_PKG_VERSION");
    work.write(
        "elsewhere/release/aidlc",
        &format!("#!/bin/sh\necho 'aidlc {version}'\n"),
    );
    make_executable(&work.path("elsewhere/release/aidlc"));
    let packed = pack();
    assert_eq!(packed.status, 0, "{}", packed.stderr);
    assert_eq!(
        packed.stdout.lines().next(),
        Some(work.path(&format!("tarballs/aidlc-{version}.tgz")).as_str()),
        "{}",
        packed.stdout
    );
    assert_eq!(packed.stdout.lines().count(), 2, "{}", packed.stdout);
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

/// Where a step stands in `action.yml`'s list.
fn step_index(action: &Value, name: &str) -> usize {
    action["runs"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .position(|step| step["name"] == name)
        .unwrap_or_else(|| panic!("no step {name:?}"))
}

/// The action's shell: one script, one function per step.
const ACTION_SCRIPT: &str = ".github/action/steps.sh";

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
    // Every shell step is one call of the script, with the inputs in its environment.
    let mut scripted = Vec::new();
    for step in action["runs"]["steps"].as_array().unwrap() {
        if let Some(script) = step["run"].as_str() {
            assert!(
                !script.contains("${{"),
                "step {:?} expands an expression inside its script",
                step["name"]
            );
            assert_eq!(step["shell"], "bash");
            assert_eq!(
                step["env"]["AIDLC_ACTION_PATH"],
                "${{ github.action_path }}"
            );
            let function = script
                .strip_prefix(&format!("bash \"$AIDLC_ACTION_PATH/{ACTION_SCRIPT}\" "))
                .unwrap_or_else(|| panic!("step {:?} runs {script:?}", step["name"]));
            scripted.push(function.to_owned());
        }
    }
    assert_eq!(scripted, ["fingerprint", "install", "run"]);
    assert!(repo().join(ACTION_SCRIPT).is_file());
    assert_eq!(
        action["outputs"]["exit-code"]["value"],
        "${{ steps.run.outputs.exit-code }}"
    );
}

/// The build is saved by its own step as soon as it exists, so a check that fails after it
/// (aidlc exiting 1) still leaves the cache for the next run; `actions/cache` would save only
/// when the whole job succeeds.
#[test]
fn the_actions_build_cache_is_saved_as_soon_as_the_build_exists() {
    let action = read_yaml(&repo().join("action.yml"));
    for step in action["runs"]["steps"].as_array().unwrap() {
        let uses = step["uses"].as_str().unwrap_or_default();
        assert!(
            !uses.starts_with("actions/cache@"),
            "{:?} uses actions/cache, which saves only on success",
            step["name"]
        );
    }
    let restore = action_step(&action, "Restore the aidlc build");
    assert_eq!(restore["id"], "cache");
    assert!(
        restore["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/cache/restore@")
    );
    assert_eq!(
        restore["with"]["path"], "${{ steps.source.outputs.path }}",
        "the cached path is the one the script installs to (with .exe on Windows)"
    );
    let install = action_step(&action, "Install aidlc");
    assert_eq!(install["id"], "install");
    assert_eq!(
        install["env"]["AIDLC_CACHE_HIT"],
        "${{ steps.cache.outputs.cache-hit }}"
    );
    let save = action_step(&action, "Save the aidlc build");
    assert!(
        save["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/cache/save@")
    );
    assert_eq!(save["with"]["path"], restore["with"]["path"]);
    assert_eq!(
        save["with"]["key"], "${{ steps.cache.outputs.cache-primary-key }}",
        "save under the key the restore looked up"
    );
    let condition = save["if"].as_str().unwrap();
    for part in [
        "always()",
        "inputs.install == 'cargo'",
        "steps.install.outcome == 'success'",
        "steps.cache.outputs.cache-hit != 'true'",
    ] {
        assert!(
            condition.contains(part),
            "{part} missing from {condition:?}"
        );
    }
    assert!(step_index(&action, "Restore the aidlc build") < step_index(&action, "Install aidlc"));
    assert!(step_index(&action, "Install aidlc") < step_index(&action, "Save the aidlc build"));
    assert!(step_index(&action, "Save the aidlc build") < step_index(&action, "Run aidlc"));
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
        .env_remove("RUNNER_OS")
        .envs(env.iter().copied()))
}

/// The `run:` line of the step named `name`, run as the runner runs it, with this repository as
/// the action's folder.
fn run_action_step(
    name: &str,
    cwd: &Utf8Path,
    path_dirs: &[&Utf8Path],
    env: &[(&str, &str)],
) -> Run {
    let action = read_yaml(&repo().join("action.yml"));
    let script = action_step(&action, name)["run"]
        .as_str()
        .unwrap()
        .to_owned();
    let repo = repo();
    let mut env = env.to_vec();
    env.push(("AIDLC_ACTION_PATH", repo.as_str()));
    run_step(&script, cwd, path_dirs, &env)
}

#[test]
fn the_actions_cache_key_follows_the_source_or_the_version() {
    let script = format!("bash {:?} fingerprint", repo().join(ACTION_SCRIPT));
    let work = TestProject::empty();
    work.write("source/Cargo.toml", "[package]\n");
    work.write("source/Cargo.lock", "# lock\n");
    work.write("source/src/main.rs", "fn main() {}\n");
    work.write("source/README.md", "not part of the build\n");
    let outputs_of = |version: &str, runner_os: &str| {
        let outputs = work.path("github-output");
        let _ = std::fs::remove_file(&outputs);
        let source = work.path("source");
        let step = run_step(
            &script,
            &work.root,
            &[],
            &[
                ("AIDLC_ACTION_PATH", source.as_str()),
                ("AIDLC_VERSION", version),
                ("GITHUB_OUTPUT", outputs.as_str()),
                ("RUNNER_OS", runner_os),
            ],
        );
        assert_eq!(step.status, 0, "{}", step.stderr);
        let text = std::fs::read_to_string(&outputs).unwrap();
        let (path, key) = text.split_once('\n').expect("two outputs");
        (path.to_owned(), key.to_owned())
    };
    let (path, first) = outputs_of("", "Linux");
    assert_eq!(path, "path=~/.cargo/bin/aidlc");
    assert!(
        first.starts_with("key=source-") && first.len() == "key=source-".len() + 33,
        "{first}"
    );
    assert_eq!(outputs_of("", "Linux").1, first, "the key is stable");
    work.write("source/README.md", "edited, still not part of the build\n");
    assert_eq!(
        outputs_of("", "Linux").1,
        first,
        "a file outside the build changed the key"
    );
    work.write("source/src/main.rs", "fn main() { }\n");
    assert_ne!(
        outputs_of("", "Linux").1,
        first,
        "a source edit kept the key"
    );
    assert_eq!(
        outputs_of("1.2.3", "macOS"),
        (
            "path=~/.cargo/bin/aidlc".to_owned(),
            "key=version-1.2.3\n".to_owned()
        )
    );
    // cargo installs `aidlc.exe` on Windows: that is the file to cache.
    assert_eq!(
        outputs_of("1.2.3", "Windows").0,
        "path=~/.cargo/bin/aidlc.exe"
    );
}

#[test]
fn the_actions_install_step_builds_this_source_or_the_named_version() {
    let work = TestProject::empty();
    let bin = fake_installers(&work);
    let repo = repo();
    let base = [
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
        let step = run_action_step("Install aidlc", &work.root, &[&bin], &env);
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
    let refused = run_action_step("Install aidlc", &work.root, &[&bin], &env);
    assert_eq!(refused.status, 2);
    assert!(refused.stdout.contains("::error"), "{}", refused.stdout);
}

/// A cache hit is used only when the restored binary runs, and on Windows that binary is
/// `aidlc.exe`: a restored `aidlc` there is not it.
#[test]
fn the_actions_install_step_uses_the_restored_build_by_its_file_name_on_each_os() {
    let work = TestProject::empty();
    let bin = fake_installers(&work);
    std::os::unix::fs::symlink(aidlc_binary(), bin.join("aidlc")).unwrap();
    let cargo_bin = work.path(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    let install = |runner_os: &str| {
        let _ = std::fs::remove_file(work.path("installs.log"));
        let step = run_action_step(
            "Install aidlc",
            &work.root,
            &[&bin],
            &[
                ("AIDLC_INSTALL", "cargo"),
                ("AIDLC_VERSION", ""),
                ("AIDLC_CACHE_HIT", "true"),
                ("RUNNER_OS", runner_os),
            ],
        );
        assert_eq!(
            step.status, 0,
            "{runner_os}: {}{}",
            step.stdout, step.stderr
        );
        let restored = step.stdout.contains("aidlc restored from the cache");
        (restored, work.path("installs.log").exists())
    };
    std::os::unix::fs::symlink(aidlc_binary(), cargo_bin.join("aidlc")).unwrap();
    assert_eq!(install("Linux"), (true, false), "Linux restores aidlc");
    assert_eq!(
        install("Windows"),
        (false, true),
        "Windows took ~/.cargo/bin/aidlc for its build"
    );
    std::os::unix::fs::symlink(aidlc_binary(), cargo_bin.join("aidlc.exe")).unwrap();
    assert_eq!(
        install("Windows"),
        (true, false),
        "Windows restores aidlc.exe"
    );
}

/// A fake `aidlc` that writes each argument it got on a line of `argv.log` and exits 3.
fn argv_recorder(work: &TestProject) -> Utf8PathBuf {
    let bin = work.path("recorder-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("aidlc");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nfor word in \"$@\"; do printf '%s\\n' \"$word\"; done >\"{log}\"\nexit 3\n",
            log = work.path("argv.log")
        ),
    )
    .unwrap();
    make_executable(&path);
    bin
}

#[test]
fn the_actions_run_step_passes_every_line_of_a_multi_line_args_on() {
    let work = TestProject::empty();
    let bin = argv_recorder(&work);
    let outputs = work.path("github-output");
    let run_args = |args: &str| {
        let _ = std::fs::remove_file(&outputs);
        let _ = std::fs::remove_file(work.path("argv.log"));
        let step = run_action_step(
            "Run aidlc",
            &work.root,
            &[&bin],
            &[("AIDLC_ARGS", args), ("GITHUB_OUTPUT", outputs.as_str())],
        );
        let argv = std::fs::read_to_string(work.path("argv.log")).ok();
        (
            step,
            argv,
            std::fs::read_to_string(&outputs).unwrap_or_default(),
        )
    };
    // `args: |` in a workflow: a YAML block scalar, one word per line or several.
    let (step, argv, output) = run_args(
        "gate check\n  --no-record\n\t--format github\n  --report sarif=gate.sarif\n  --stage *\n",
    );
    assert_eq!(step.status, 3, "{}", step.stderr);
    assert_eq!(
        argv.as_deref(),
        Some(
            "gate\ncheck\n--no-record\n--format\ngithub\n--report\nsarif=gate.sarif\n--stage\n*\n"
        )
    );
    assert_eq!(output, "exit-code=3\n");
    // Only whitespace: refused, and aidlc is not run.
    let (step, argv, output) = run_args(" \n\t\n");
    assert_eq!(step.status, 2, "{}", step.stderr);
    assert!(
        step.stdout.contains("::error title=aidlc action::args"),
        "{}",
        step.stdout
    );
    assert_eq!(argv, None);
    assert_eq!(output, "exit-code=2\n");
}

#[test]
fn the_actions_run_step_runs_the_arguments_and_reports_the_exit_code() {
    let action = read_yaml(&repo().join("action.yml"));
    assert_eq!(action_step(&action, "Run aidlc")["id"], "run");
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
        let step = run_action_step(
            "Run aidlc",
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
    let (checked, output) = run_args("compile\n--check\n");
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

/// The hook script every entry of `.pre-commit-hooks.yaml` runs.
const PRE_COMMIT_SCRIPT: &str = "pre-commit/aidlc-hook";

/// A stand-in for pre-commit's clone of this repository (the hook script at its place), and a
/// fake `cargo` that records its arguments and "installs" the test's aidlc where `--root` says.
struct PreCommitClone {
    work: TestProject,
    hooks: Vec<Value>,
}

impl PreCommitClone {
    fn new() -> Self {
        let hooks = read_yaml(&repo().join(".pre-commit-hooks.yaml"));
        let hooks = hooks.as_array().expect("a list of hooks").clone();
        let work = TestProject::empty();
        let script = work.path(&format!("clone/{PRE_COMMIT_SCRIPT}"));
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::copy(repo().join(PRE_COMMIT_SCRIPT), &script).unwrap();
        make_executable(&script);
        work.write(
            "cargo-bin/cargo",
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\"{log}\"\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --root ]; then mkdir -p \"$2/bin\" && ln -sf \"{aidlc}\" \"$2/bin/aidlc\"; fi\n  shift\ndone\n",
                log = work.path("cargo.log"),
                aidlc = aidlc_binary(),
            ),
        );
        make_executable(&work.path("cargo-bin/cargo"));
        Self { work, hooks }
    }

    fn folder(&self) -> Utf8PathBuf {
        self.work.path("clone")
    }

    /// Every `cargo` command the hooks ran, one per line.
    fn cargo_log(&self) -> String {
        std::fs::read_to_string(self.work.path("cargo.log")).unwrap_or_default()
    }

    fn hook(&self, id: &str) -> &Value {
        self.hooks
            .iter()
            .find(|hook| hook["id"] == id)
            .unwrap_or_else(|| panic!("no hook {id}"))
    }

    /// The hook's entry run as pre-commit runs a `language: script` hook: the script from the
    /// clone, with the entry's arguments, in the project, with `PATH` as given.
    fn run(&self, id: &str, project: &TestProject, path: &str) -> Run {
        let hook = self.hook(id);
        assert_eq!(hook["language"], "script", "{id}");
        assert_eq!(hook["pass_filenames"], false, "{id}");
        let entry: Vec<&str> = hook["entry"].as_str().unwrap().split_whitespace().collect();
        assert_eq!(entry[0], PRE_COMMIT_SCRIPT, "{id}");
        let mut command = Command::new(self.folder().join(entry[0]));
        command
            .args(&entry[1..])
            .current_dir(&project.root)
            .env("NO_COLOR", "1")
            .env("PATH", path);
        for (name, _) in std::env::vars() {
            if name.starts_with("AIDLC_") || name == "CLAUDE_PROJECT_DIR" {
                command.env_remove(name);
            }
        }
        run(&mut command)
    }
}

/// `PATH` for the hook script: the fake `cargo` (when `with_cargo`), extra folders, and links to
/// the few programs the script and the fake `cargo` start (`dirname`; `mkdir`, `ln`), so no
/// aidlc or cargo installed on the machine is found.
fn hook_search_path(
    clone: &PreCommitClone,
    with_cargo: bool,
    extra: &[&Utf8Path],
) -> (SearchPath, String) {
    let programs = SearchPath::of_programs_found_on(
        &["dirname", "mkdir", "ln"],
        &std::env::var_os("PATH").unwrap_or_default(),
    );
    let mut folders: Vec<String> = extra.iter().map(ToString::to_string).collect();
    if with_cargo {
        folders.push(clone.work.path("cargo-bin").to_string());
    }
    folders.push(programs.as_str().to_owned());
    (programs, folders.join(":"))
}

#[test]
fn the_pre_commit_hooks_run_their_entries_against_a_project() {
    let clone = PreCommitClone::new();
    let ids: Vec<&str> = clone
        .hooks
        .iter()
        .map(|hook| hook["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["aidlc-compile-check", "aidlc-gate-check", "aidlc-compile"]
    );
    let (_programs, path) = hook_search_path(&clone, true, &[]);
    let project = TestProject::empty();
    assert_eq!(project.run(&["init", ".", "--example"]).status, 0);
    assert_eq!(project.compile().status, 0);

    // The first hook builds aidlc once, from the clone, with the lockfile.
    let clean = clone.run("aidlc-compile-check", &project, &path);
    assert_eq!(clean.status, 0, "{}", clean.stderr);
    assert_eq!(
        clone.cargo_log(),
        format!(
            "install --locked --force --root {folder}/target/pre-commit-hook --path {folder}\n",
            folder = clone.folder()
        )
    );
    let ledger_before = audit_files(&project);
    let gate = clone.run("aidlc-gate-check", &project, &path);
    assert_eq!(gate.status, 0, "{}{}", gate.stdout, gate.stderr);
    assert_eq!(
        audit_files(&project),
        ledger_before,
        "the gate hook wrote into the project"
    );
    assert_eq!(clone.cargo_log().lines().count(), 1, "built once");

    // A stage edit the graph does not have yet fails the compile hook, which says how to
    // regenerate without aidlc on the PATH; the manual hook does it.
    let stage = ".claude/aidlc-common/stages/ideation/feasibility.md";
    let text = project.read(stage);
    project.write(stage, &text.replace("mode: inline", "mode: subagent"));
    let drift = clone.run("aidlc-compile-check", &project, &path);
    assert_eq!(drift.status, 1, "{}", drift.stderr);
    assert!(drift.stderr.contains("is out of date"), "{}", drift.stderr);
    assert!(
        drift
            .stderr
            .contains("`pre-commit run aidlc-compile --hook-stage manual --all-files`"),
        "{}",
        drift.stderr
    );
    let manual = clone.hook("aidlc-compile");
    assert_eq!(manual["stages"], serde_json::json!(["manual"]));
    assert_eq!(manual["always_run"], true);
    let regenerated = clone.run("aidlc-compile", &project, &path);
    assert_eq!(regenerated.status, 0, "{}", regenerated.stderr);
    assert_eq!(clone.run("aidlc-compile-check", &project, &path).status, 0);

    // A blocking sensor with findings fails the gate hook.
    let manifest = ".claude/sensors/aidlc-required-sections.md";
    project.write(
        manifest,
        &project
            .read(manifest)
            .replace("default_severity: advisory", "default_severity: blocking"),
    );
    assert_eq!(project.compile().status, 0);
    let blocked = clone.run("aidlc-gate-check", &project, &path);
    assert_eq!(blocked.status, 1, "{}{}", blocked.stdout, blocked.stderr);
    assert_eq!(clone.cargo_log().lines().count(), 1, "still built once");

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
        let files_regex = clone.hook(id)["files"].as_str().unwrap().to_owned();
        let matched = run(Command::new(&grep)
            .args(["-E", "-c", &files_regex])
            .arg(write_temp(&project, "paths.txt", paths)));
        assert_eq!(
            matched.stdout.trim(),
            wanted.to_string(),
            "{id}: {}",
            matched.stderr
        );
    }
}

/// Without a build and without cargo the hook stops (exit 2) and says what to install; with
/// aidlc on the PATH, drift needs no extra hint.
#[test]
fn the_pre_commit_hook_needs_cargo_for_its_first_build_only() {
    let clone = PreCommitClone::new();
    let project = TestProject::empty();
    assert_eq!(project.run(&["init", "."]).status, 0);
    assert_eq!(project.compile().status, 0);

    let (_programs, without_cargo) = hook_search_path(&clone, false, &[]);
    let refused = clone.run("aidlc-compile-check", &project, &without_cargo);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("build aidlc with cargo, which is not on PATH"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("https://rustup.rs"),
        "{}",
        refused.stderr
    );
    assert_eq!(clone.cargo_log(), "");

    let (_programs, with_cargo) = hook_search_path(&clone, true, &[]);
    assert_eq!(
        clone
            .run("aidlc-compile-check", &project, &with_cargo)
            .status,
        0
    );
    // Built: cargo is not needed any more.
    assert_eq!(
        clone
            .run("aidlc-compile-check", &project, &without_cargo)
            .status,
        0
    );

    let on_path = clone.work.path("aidlc-bin");
    std::fs::create_dir_all(&on_path).unwrap();
    std::os::unix::fs::symlink(aidlc_binary(), on_path.join("aidlc")).unwrap();
    let (_programs, with_aidlc) = hook_search_path(&clone, false, &[&on_path]);
    let stage = ".claude/aidlc-common/stages/ideation/feasibility.md";
    let text = project.read(stage);
    project.write(stage, &text.replace("mode: inline", "mode: subagent"));
    let drift = clone.run("aidlc-compile-check", &project, &with_aidlc);
    assert_eq!(drift.status, 1, "{}", drift.stderr);
    assert!(
        drift.stderr.contains("Run `aidlc compile`"),
        "{}",
        drift.stderr
    );
    assert!(!drift.stderr.contains("pre-commit run"), "{}", drift.stderr);
    assert_eq!(clone.cargo_log().lines().count(), 1);
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

// --- the README's install notes

/// The README's Install section describes the release profile as `Cargo.toml` sets it, and
/// quotes no binary size: a size differs by platform and toolchain and goes stale with every
/// change (it said 6.2 MB while a fresh clone built 8.4 MB).
#[test]
fn the_readme_describes_the_release_profile_and_quotes_no_binary_size() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let install = readme
        .split("\n## Install\n")
        .nth(1)
        .expect("an Install section")
        .split("\n## ")
        .next()
        .unwrap();
    let words: Vec<&str> = install.split_whitespace().collect();
    for pair in words.windows(2) {
        let unit = pair[1].trim_matches(|c: char| !c.is_ascii_alphabetic());
        let is_number = pair[0]
            .trim_start_matches('(')
            .replace(',', "")
            .parse::<f64>()
            .is_ok();
        assert!(
            !(is_number && ["B", "KB", "KiB", "MB", "MiB", "GB", "GiB"].contains(&unit)),
            "the Install section quotes a size: {} {}",
            pair[0],
            pair[1]
        );
    }
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let release = manifest
        .split("[profile.release]\n")
        .nth(1)
        .expect("a release profile")
        .split("\n[")
        .next()
        .unwrap();
    for (setting, described) in [
        ("lto = \"fat\"", "fat link-time optimisation"),
        ("codegen-units = 1", "one codegen unit"),
        ("strip = true", "stripped"),
    ] {
        assert!(release.contains(setting), "Cargo.toml lost {setting}");
        assert!(install.contains(described), "the README lost {described:?}");
    }
}
