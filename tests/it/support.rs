//! A temp-project builder: write files, run the real `aidlc` binary, read the results.

pub mod scenario_project;
pub mod stage_with_sensors;

use std::collections::{BTreeMap, VecDeque};
use std::process::Command;

use aidlc::runtime::audit::ledger::AuditBlock;
use aidlc::runtime::audit::ledger::event::{
    SENSOR_BUDGET_OVERRIDE, SENSOR_FAILED, SENSOR_FIRED, SENSOR_PASSED, field,
};
use camino::{Utf8Path, Utf8PathBuf};

pub struct TestProject {
    _dir: tempfile::TempDir,
    pub root: Utf8PathBuf,
    /// The home folder of every run, outside the project ([`TestProject::home`]).
    home: tempfile::TempDir,
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
        let home = tempfile::tempdir().expect("temp home");
        Self {
            _dir: dir,
            root,
            home,
        }
    }

    /// A project holding the built-in default framework (as `aidlc init` writes it).
    pub fn default_framework() -> Self {
        let project = Self::empty();
        aidlc::compile::framework::init_project(
            &project.root,
            aidlc::harness::Harness::Claude,
            false,
        )
        .expect("init");
        project
    }

    /// A harness folder with one stage definition and no sensor (without a stage definition a
    /// folder is not an AI-DLC project): what `hook install` and the guard need.
    pub fn one_stage() -> Self {
        let project = Self::empty();
        project.write(".claude/sensors/.keep", "");
        project.write(
            ".claude/aidlc-common/stages/inception/first-stage.md",
            &stage("first-stage", "inception", "[]", "[]", ""),
        );
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

    /// `aidlc <args>` in `cwd`, with the caller's `AIDLC_*` variables removed, no colour, and the
    /// project's own home folder ([`TestProject::home`]).
    pub fn command(&self, cwd: &Utf8Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_aidlc"));
        command
            .args(args)
            .current_dir(cwd)
            .env("NO_COLOR", "1")
            .env("HOME", self.home());
        for (name, _) in std::env::vars() {
            if name.starts_with("AIDLC_") || name == "CLAUDE_PROJECT_DIR" || name == "CODEX_HOME" {
                command.env_remove(name);
            }
        }
        command
    }

    /// The home folder every run gets as `HOME`: a temporary folder of its own beside the
    /// project, so a harness's transcripts live where the harness keeps them, and what a tool
    /// caches there is neither in the real home nor in the project.
    pub fn home(&self) -> Utf8PathBuf {
        Utf8PathBuf::from_path_buf(
            self.home
                .path()
                .canonicalize()
                .expect("canonical temp home"),
        )
        .expect("UTF-8 temp home")
    }

    /// Where Claude Code keeps the transcript of `session` for this project:
    /// `~/.claude/projects/<the project's path, each non-alphanumeric character a `-`>/`.
    pub fn claude_transcript(&self, session: &str) -> Utf8PathBuf {
        let folder: String = self
            .root
            .as_str()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.home()
            .join(".claude/projects")
            .join(folder)
            .join(format!("{session}.jsonl"))
    }

    /// Where Codex keeps the rollout of `session`: `~/.codex/sessions/<date>/rollout-…-<session>.jsonl`.
    pub fn codex_transcript(&self, session: &str) -> Utf8PathBuf {
        self.home()
            .join(".codex/sessions/2026/12/01")
            .join(format!("rollout-2026-12-01T00-00-00-{session}.jsonl"))
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

    /// This clone's audit shard under `record_root`, the way the engine names it (minting the
    /// clone id on first use).
    pub fn audit_shard_under(&self, record_root: &Utf8Path) -> Utf8PathBuf {
        aidlc::runtime::workspace::Workspace::resolve(aidlc::compile::discover::Layout::new(
            &self.root,
            aidlc::harness::Harness::Claude,
            &|_| None,
        ))
        .audit_shard_under(record_root)
        .unwrap()
    }

    /// This clone's audit shard under the active record root.
    pub fn audit_shard(&self) -> Utf8PathBuf {
        self.audit_shard_under(&aidlc::runtime::workspace::record_root(&self.root))
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

/// Longer than any single `aidlc` run in these tests takes when it works; a run past it hangs.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(120);

impl TestProject {
    /// `aidlc <args>` in the project folder, with extra environment variables and `stdin`
    /// (closed when `None`), killed and failed if it runs longer than [`HANG`]. Its output goes
    /// to files, so a chatty run cannot block on a full pipe while it is watched.
    pub fn run_watched(&self, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
        self.run_watched_in(&self.root, args, env, stdin)
    }

    /// [`TestProject::run_watched`] in another working folder.
    pub fn run_watched_in(
        &self,
        cwd: &Utf8Path,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Run {
        use std::io::Write as _;
        let outputs = tempfile::tempdir().expect("temp dir for the output");
        let stdout_path = outputs.path().join("stdout");
        let stderr_path = outputs.path().join("stderr");
        let mut command = self.command(cwd, args);
        command
            .envs(env.iter().copied())
            .stdout(std::fs::File::create(&stdout_path).expect("stdout file"))
            .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
            .stdin(if stdin.is_some() {
                std::process::Stdio::piped()
            } else {
                std::process::Stdio::null()
            });
        let mut child = command.spawn().expect("start aidlc");
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            pipe.write_all(text.as_bytes()).expect("write stdin");
        }
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for aidlc") {
                break status;
            }
            if started.elapsed() > HANG {
                let _ = child.kill();
                let _ = child.wait();
                panic!("aidlc {args:?} did not finish within {HANG:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let read = |path: &std::path::Path| {
            String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
        };
        Run {
            status: status.code().unwrap_or(-1),
            stdout: read(&stdout_path),
            stderr: read(&stderr_path),
        }
    }
}

/// An executable from the Node tools `.ci/install-node-tools` installs (eslint, tsc, biome,
/// bun, the SARIF validator's folder), when the run was given them in `AIDLC_TEST_NODE_TOOLS`;
/// `None` after printing why the calling test is skipped. `.ci/run` always gives them, so in CI
/// these tests run, and a tool missing from the folder fails the test instead of skipping it.
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says so on stderr, where the test harness shows it"
)]
pub fn node_tool(tool: &str) -> Option<Utf8PathBuf> {
    let Some(folder) = std::env::var_os("AIDLC_TEST_NODE_TOOLS") else {
        assert!(
            std::env::var_os("AIDLC_TEST_REQUIRE_TOOLS").is_none(),
            "{tool} is required (AIDLC_TEST_REQUIRE_TOOLS is set) but AIDLC_TEST_NODE_TOOLS is not: run `.ci/install-node-tools` and set it to the folder it prints"
        );
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

/// One block of an audit shard, read from the shard's Markdown as another process would read
/// it (a `## Heading` line, then `**Key**: value` lines), without the library's own parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerBlock {
    pub heading: String,
    pub fields: Vec<(String, String)>,
}

impl LedgerBlock {
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    pub fn event(&self) -> &str {
        self.field("Event").unwrap_or_default()
    }
}

/// The blocks of one shard's text: the pieces between `---` separator lines that hold a
/// `## ` heading. A piece without one (the file header alone) is not a block.
pub fn parse_ledger_text(text: &str) -> Vec<LedgerBlock> {
    text.split("\n---\n")
        .filter_map(|piece| {
            let heading = piece
                .lines()
                .find_map(|line| line.strip_prefix("## "))?
                .to_owned();
            let fields = piece
                .lines()
                .filter_map(|line| {
                    let rest = line.strip_prefix("**")?;
                    let (key, value) = rest.split_once("**: ")?;
                    Some((key.to_owned(), value.to_owned()))
                })
                .collect();
            Some(LedgerBlock { heading, fields })
        })
        .collect()
}

/// Every block of every shard in `<record>/audit/` (`*.md`), shards in name order.
pub fn ledger_blocks(project: &TestProject, record: &str) -> Vec<LedgerBlock> {
    let Ok(entries) = std::fs::read_dir(project.path(&format!("{record}/audit"))) else {
        return Vec::new();
    };
    let mut shards: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    shards.sort();
    shards
        .iter()
        .flat_map(|shard| parse_ledger_text(&std::fs::read_to_string(shard).expect("read shard")))
        .collect()
}

/// One audit block in the reference's format (as `format_block` writes it, byte for byte), for
/// tests that put rows of other processes (the conductor, another clone) into a shard.
pub fn audit_block(heading: &str, event: &str, timestamp: &str, fields: &[(&str, &str)]) -> String {
    use std::fmt::Write as _;
    let mut block = format!("\n## {heading}\n**Timestamp**: {timestamp}\n**Event**: {event}\n");
    for (key, value) in fields {
        let _ = writeln!(block, "**{key}**: {value}");
    }
    block.push_str("\n---\n");
    block
}

/// The header every shard starts with.
pub const SHARD_HEADER: &str = "# AI-DLC Audit Log\n";

/// The project's audit lock folder as the reference names it (D2): in the OS temp folder,
/// `.aidlc-audit-<first 8 hex of md5("<canonical project>\0__workspace__")>.lock`.
pub fn audit_lock_path(project: &TestProject) -> Utf8PathBuf {
    use md5::{Digest as _, Md5};
    use std::fmt::Write as _;
    let identity = format!("{}\0__workspace__", project.root);
    let digest = Md5::digest(identity.as_bytes());
    let hex = digest.iter().take(4).fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    let temp = Utf8PathBuf::from_path_buf(std::env::temp_dir()).expect("UTF-8 temp folder");
    temp.join(format!(".aidlc-audit-{hex}.lock"))
}

/// A program from `PATH` that a test needs (`nvim`, `dot`, `groff`, `xmllint`, `node`, `npm`), or `None` after
/// printing why the calling test is skipped. `.ci/run` installs them and sets
/// `AIDLC_TEST_REQUIRE_TOOLS`, under which a missing program fails the test instead.
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says so on stderr, where the test harness shows it"
)]
pub fn system_tool(program: &str) -> Option<Utf8PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|folder| folder.join(program))
            .find(|candidate| candidate.is_file())
    });
    match found {
        Some(path) => Some(Utf8PathBuf::from_path_buf(path).expect("a UTF-8 PATH entry")),
        None if std::env::var_os("AIDLC_TEST_REQUIRE_TOOLS").is_some() => {
            panic!(
                "{program} is not on PATH; .ci/install-debian-tools or .ci/install-node-tools installs it"
            )
        }
        None => {
            eprintln!(
                "SKIPPED ({program} is not on PATH; .ci/install-debian-tools or Node.js provides it)"
            );
            None
        }
    }
}

/// A `PATH` of one folder that holds links to exactly the programs a test names, so that what
/// the test runs finds those and nothing else: a program installed anywhere on the machine (a
/// Bun in `/usr/bin`, say) cannot change the outcome. The folder lives as long as the value.
pub struct SearchPath {
    _dir: tempfile::TempDir,
    folder: Utf8PathBuf,
}

impl SearchPath {
    /// Links to `programs`, each found on `search` (a `PATH`-style list of folders). A program
    /// that is not there panics: the test that names it cannot run without it.
    pub fn of_programs_found_on(programs: &[&str], search: &std::ffi::OsStr) -> Self {
        let dir = tempfile::tempdir().expect("temp dir for the search path");
        let folder = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).expect("UTF-8 temp dir");
        for program in programs {
            let found = std::env::split_paths(search)
                .map(|entry| entry.join(program))
                .find(|candidate| is_executable_file(candidate))
                .unwrap_or_else(|| panic!("{program} is not on the search path given"));
            let target = found.canonicalize().expect("resolve the program's path");
            std::os::unix::fs::symlink(target, folder.join(program)).expect("link the program");
        }
        Self { _dir: dir, folder }
    }

    /// The value for `PATH`.
    pub fn as_str(&self) -> &str {
        self.folder.as_str()
    }

    /// Whether `program` can be found on this `PATH`.
    pub fn finds(&self, program: &str) -> bool {
        is_executable_file(self.folder.join(program).as_std_path())
    }
}

/// A regular file (after links) with an execute bit.
fn is_executable_file(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// A human's turn as the engine's prompt hook records it (docs/decisions.md D34): `prompt` is
/// appended as a user message to a Claude Code transcript under the project's `.home/`, and the
/// `HUMAN_TURN` fields naming it are returned with their receipt, for tests that write a shard's
/// rows themselves. The answer row that follows carries `("Human Turn Receipt", receipt)`.
pub fn verifiable_human_turn(
    project: &TestProject,
    prompt: &str,
) -> (Vec<(&'static str, String)>, String) {
    let transcript = project.claude_transcript("test-session");
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let mut text = std::fs::read_to_string(&transcript).unwrap_or_default();
    let line = text.lines().count() + 1;
    let message =
        serde_json::json!({"type": "user", "message": {"role": "user", "content": prompt}});
    text.push_str(&message.to_string());
    text.push('\n');
    std::fs::write(&transcript, text).unwrap();
    let mut fields = vec![
        ("Harness", "claude".to_owned()),
        ("Session", "test-session".to_owned()),
        (
            "Prompt Digest",
            aidlc::harness::transcript::prompt_digest(prompt),
        ),
        ("Transcript", transcript.to_string()),
        ("Transcript Line", line.to_string()),
    ];
    let receipt = aidlc::runtime::audit::human_turn::receipt_digest(&fields);
    fields.push(("Receipt", receipt.clone()));
    (fields, receipt)
}

/// The lines of `before` that are not in `after` and the lines of `after` that are not in
/// `before`, by the longest common subsequence of lines (each in file order).
pub fn line_diff(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            i += 1;
            j += 1;
        } else if j < new.len() && (i == old.len() || common[i][j + 1] >= common[i + 1][j]) {
            added.push(new[j].to_owned());
            j += 1;
        } else {
            removed.push(old[i].to_owned());
            i += 1;
        }
    }
    (removed, added)
}

/// Wait until `path` exists; fails naming it after [`HANG`].
pub fn wait_for_path(path: &Utf8Path) {
    let started = std::time::Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < HANG, "{path} never appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Wait until process `pid` has been reaped by its parent (`kill -0` fails; a zombie is not
/// reaped yet); fails naming it after [`HANG`].
pub fn wait_until_reaped(pid: &str) {
    let started = std::time::Instant::now();
    loop {
        let alive = std::process::Command::new("kill")
            .args(["-0", pid])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !alive {
            return;
        }
        assert!(started.elapsed() < HANG, "process {pid} was never reaped");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A FIFO nobody writes at `relative` in `project` (an open for reading would wait forever).
pub fn fifo_at(project: &TestProject, relative: &str) {
    let path = project.path(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    let made = std::process::Command::new("mkfifo")
        .arg(path.as_str())
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {path}");
}

/// Make the file at `path` a sparse 1 GiB file: far past every input limit, written in no time.
pub fn oversized(path: &camino::Utf8Path) {
    std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
}

/// What a run said, on either stream.
pub fn said(run: &Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

/// `aidlc init --example`, compiled; the example intent's record and `user-stories` (its
/// current stage).
pub fn example_project() -> (TestProject, String) {
    let project = TestProject::empty();
    assert_eq!(project.run(&["init", "--example", "."]).status, 0);
    assert_eq!(project.compile().status, 0);
    let record = project
        .path("aidlc/spaces/default/intents")
        .read_dir_utf8()
        .expect("the intents folder")
        .map(|entry| entry.expect("an entry").file_name().to_owned())
        .find(|name| name.ends_with("-example-checkout"))
        .expect("the example record");
    (project, format!("aidlc/spaces/default/intents/{record}"))
}

/// A `SENSOR_FIRED` block and the terminal block with the same Fire id, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirePair<'a> {
    pub fired: &'a AuditBlock,
    pub terminal: Option<&'a AuditBlock>,
}

/// Every `SENSOR_FIRED` in order, each with its terminal row (`SENSOR_PASSED`, `SENSOR_FAILED`
/// or `SENSOR_BUDGET_OVERRIDE`) matched by `Fire id`, never by position: rows may be out of
/// order (several shards merged). Should two fires share an id, the k-th fired of that id takes
/// the k-th terminal of that id. Terminal rows without a fired row are not returned.
pub fn pair_fires(blocks: &[AuditBlock]) -> Vec<FirePair<'_>> {
    let mut terminals: BTreeMap<&str, VecDeque<&AuditBlock>> = BTreeMap::new();
    for block in blocks.iter().filter(|b| {
        [SENSOR_PASSED, SENSOR_FAILED, SENSOR_BUDGET_OVERRIDE].contains(&b.event.as_str())
    }) {
        if let Some(fire_id) = block.field(field::FIRE_ID) {
            terminals.entry(fire_id).or_default().push_back(block);
        }
    }
    blocks
        .iter()
        .filter(|block| block.event == SENSOR_FIRED)
        .map(|fired| FirePair {
            fired,
            terminal: fired
                .field(field::FIRE_ID)
                .and_then(|id| terminals.get_mut(id))
                .and_then(VecDeque::pop_front),
        })
        .collect()
}
