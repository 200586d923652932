//! A temp-project builder: write files, run the real `aidlc` binary, read the results.

use std::process::Command;

use camino::{Utf8Path, Utf8PathBuf};

pub struct TestProject {
    _dir: tempfile::TempDir,
    pub root: Utf8PathBuf,
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Run {
    fn from(output: std::process::Output) -> Self {
        Self {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

pub const GRAPH: &str = ".claude/tools/data/stage-graph.json";
pub const GRID: &str = ".claude/tools/data/scope-grid.json";

impl TestProject {
    /// An empty project folder.
    pub fn empty() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root =
            Utf8PathBuf::from_path_buf(dir.path().canonicalize().expect("canonical temp dir"))
                .expect("UTF-8 temp dir");
        Self { _dir: dir, root }
    }

    /// A project holding the built-in default framework (as `aidlc init` writes it).
    pub fn default_framework() -> Self {
        let project = Self::empty();
        aidlc::framework::init_project(&project.root, aidlc::discover::Harness::Claude, false)
            .expect("init");
        project
    }

    /// The smallest valid project: one sensor, one agent, two stages.
    pub fn minimal() -> Self {
        let project = Self::empty();
        project.write(
            ".claude/sensors/aidlc-demo-check.md",
            &manifest("demo-check", ""),
        );
        project.write(
            ".claude/agents/aidlc-demo-agent.md",
            "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
        );
        project.write(
            ".claude/aidlc-common/stages/inception/first-stage.md",
            &stage("first-stage", "inception", "[]", "[demo-check]", ""),
        );
        project.write(
            ".claude/aidlc-common/stages/inception/second-stage.md",
            &stage("second-stage", "inception", "[first-stage]", "[]", ""),
        );
        project
    }

    pub fn path(&self, relative: &str) -> Utf8PathBuf {
        self.root.join(relative)
    }

    pub fn write(&self, relative: &str, contents: &str) -> &Self {
        self.write_bytes(relative, contents.as_bytes())
    }

    pub fn write_bytes(&self, relative: &str, contents: &[u8]) -> &Self {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create dirs");
        std::fs::write(&path, contents).expect("write file");
        self
    }

    pub fn remove(&self, relative: &str) {
        let path = self.path(relative);
        if path.is_dir() {
            std::fs::remove_dir_all(path).expect("remove dir");
        } else {
            std::fs::remove_file(path).expect("remove file");
        }
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|error| panic!("read {relative}: {error}"))
    }

    pub fn exists(&self, relative: &str) -> bool {
        self.path(relative).exists()
    }

    /// Run `aidlc <args>` in the project folder with a clean environment.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_in(&self.root, args)
    }

    pub fn run_in(&self, cwd: &Utf8Path, args: &[&str]) -> Run {
        Run::from(self.command(cwd, args).output().expect("run aidlc"))
    }

    /// `aidlc <args>` in `cwd`, with the caller's `AIDLC_*` variables removed and no colour.
    #[expect(
        clippy::unused_self,
        reason = "a method so every run reads as project.…(…)"
    )]
    pub fn command(&self, cwd: &Utf8Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_aidlc"));
        command.args(args).current_dir(cwd).env("NO_COLOR", "1");
        for (name, _) in std::env::vars() {
            if name.starts_with("AIDLC_") || name == "CLAUDE_PROJECT_DIR" {
                command.env_remove(name);
            }
        }
        command
    }

    /// Like [`TestProject::run`], with extra environment variables.
    pub fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.command(&self.root, args);
        Run::from(
            command
                .envs(env.iter().copied())
                .output()
                .expect("run aidlc"),
        )
    }

    pub fn compile(&self) -> Run {
        self.run(&["compile"])
    }

    /// Replace the temp path and timings so output can be snapshotted.
    pub fn scrub(&self, text: &str) -> String {
        let text = text.replace(self.root.as_str(), "[PROJECT]");
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            let line = match (line.find(" in "), line.find(" ms;")) {
                (Some(start), Some(end)) if start < end && line.starts_with("compiled ") => {
                    format!("{} in [TIME]{}", &line[..start], &line[end + 3..])
                }
                _ => line.to_owned(),
            };
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A valid manifest for `id`, with `extra` lines appended to its frontmatter.
pub fn manifest(id: &str, extra: &str) -> String {
    format!(
        "---\nid: {id}\nkind: deterministic\ncommand: aidlc engine sensor-{id}\ndefault_severity: advisory\ndescription: Checks a demo property\ncategory: demo\nmatches: \"**/*.md\"\n{extra}---\n\n# {id} sensor\n"
    )
}

/// A valid stage with the given flow lists, with `extra` lines appended to its frontmatter.
pub fn stage(slug: &str, phase: &str, requires: &str, sensors: &str, extra: &str) -> String {
    format!(
        "---\nslug: {slug}\nphase: {phase}\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n  - {slug}-doc\nconsumes: []\nrequires_stage: {requires}\nsensors: {sensors}\nscopes: [feature]\ninputs: Nothing\noutputs: {slug}-doc.md\n{extra}---\n\n# {slug}\n\nProse about the stage.\n"
    )
}

/// The reference installs vendored under `tests/fixtures/reference-installs`.
pub const REFERENCE_VERSIONS: [&str; 2] = ["2.5.36", "2.6.54"];

/// The vendored folder of one reference install. Read only: tests work on a copy
/// ([`TestProject::reference_install`]).
pub fn reference_install_dir(version: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference-installs")
        .join(version)
}

impl TestProject {
    /// A temporary copy of a reference install, exactly as the reference left it.
    pub fn reference_install(version: &str) -> Self {
        let project = Self::empty();
        copy_tree(&reference_install_dir(version), &project.root);
        project
    }
}

/// Copy the files and folders under `from` into `to` (links are not expected in fixtures).
pub fn copy_tree(from: &Utf8Path, to: &Utf8Path) {
    std::fs::create_dir_all(to).expect("create the copy's folder");
    for entry in from.read_dir_utf8().expect("list a fixture folder") {
        let entry = entry.expect("read a fixture entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("a fixture entry's type");
        if kind.is_dir() {
            copy_tree(entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

/// An executable from the Node tools `.ci/install-node-tools` installs (eslint, tsc, biome,
/// bun, the SARIF validator's folder), when the run was given them in `AIDLC_TEST_NODE_TOOLS`;
/// `None` after printing why the calling test is skipped. `.ci/run` always gives them, so in CI
/// these tests run, and a tool missing from the folder fails the test instead of skipping it.
pub fn node_tool(tool: &str) -> Option<Utf8PathBuf> {
    let Some(folder) = std::env::var_os("AIDLC_TEST_NODE_TOOLS") else {
        eprintln!(
            "SKIPPED ({tool} not installed: run `.ci/install-node-tools` and set AIDLC_TEST_NODE_TOOLS to the folder it prints)"
        );
        return None;
    };
    let folder = Utf8PathBuf::from_path_buf(folder.into()).expect("AIDLC_TEST_NODE_TOOLS is UTF-8");
    let executable = folder.join(tool);
    assert!(
        executable.is_file(),
        "AIDLC_TEST_NODE_TOOLS={folder} has no {tool}; run .ci/install-node-tools"
    );
    Some(executable)
}
