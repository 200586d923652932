//! What the sensors' unit tests share: one temp project fixture ([`SensorProject`]) that writes
//! files by project-relative path and runs a sensor's native check in process, the fake and
//! real Node tools the code sensors' tests use, and small helpers.
//!
//! Each sensor's tests add only what is theirs (the stage folder they write into, the argv the
//! dispatcher would give them) on top of this fixture.
//!
//! Compiled for tests only: the module root declares it `#[cfg(test)] mod test_support;`.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::descriptor::{NativeCheck, ShippedSensor, WorkerContext};

/// The budget a document sensor's check runs with in these tests (the shipped cap).
const DOCUMENT_BUDGET: Duration = Duration::from_secs(300);

/// A budget no code sensor's test reaches.
#[cfg(unix)]
pub(super) const GENEROUS: Duration = Duration::from_secs(60);

/// The words of `text`, split at white space: a worker argv written as one line.
pub(super) fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

/// A temp project folder and the sensor under test.
pub(super) struct SensorProject {
    folder: tempfile::TempDir,
    check: NativeCheck,
}

impl SensorProject {
    /// An empty project.
    pub(super) fn new(sensor: &ShippedSensor) -> Self {
        Self {
            folder: tempfile::tempdir().unwrap(),
            check: sensor.check,
        }
    }

    /// A project folder holding a `package.json`, as the code sensors expect.
    #[cfg(unix)]
    pub(super) fn node(sensor: &ShippedSensor) -> Self {
        let project = Self::new(sensor);
        project.write("package.json", "{\"name\": \"demo\"}\n");
        project
    }

    pub(super) fn root(&self) -> Utf8PathBuf {
        Utf8PathBuf::from_path_buf(self.folder.path().to_path_buf()).unwrap()
    }

    /// Write `text` at the project-relative `relative`, creating folders; returns the path.
    pub(super) fn write(&self, relative: &str, text: &str) -> Utf8PathBuf {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(super) fn context(&self, timeout: Duration) -> WorkerContext {
        WorkerContext {
            project_dir: self.root(),
            timeout,
        }
    }

    /// Run the sensor's check on `args`, as `aidlc engine sensor-<id> <args>` would.
    pub(super) fn run(&self, args: &[&str]) -> WorkerOutcome {
        let args: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        (self.check)(&args, &self.context(DOCUMENT_BUDGET))
    }

    pub(super) fn verdict(&self, args: &[&str]) -> Value {
        match self.run(args) {
            WorkerOutcome::Verdict(json) => json,
            other => panic!("expected a verdict, got {other:?}"),
        }
    }

    /// The reference's part of the verdict JSON as one compact line, keys in emitted order:
    /// our `diagnostics` key (always the last one) is left out, so that what remains can be
    /// compared byte for byte with the reference worker's line.
    pub(super) fn verdict_line(&self, args: &[&str]) -> String {
        let mut verdict = self.verdict(args);
        if let Some(object) = verdict.as_object_mut() {
            object.shift_remove(crate::runtime::sensors::finding::DIAGNOSTICS_KEY);
        }
        serde_json::to_string(&verdict).unwrap()
    }

    /// The findings the gate report reads from the verdict of `args`.
    pub(super) fn diagnostics(&self, args: &[&str]) -> Vec<crate::protocol::finding::Finding> {
        let verdict = self.verdict(args);
        let root = self.root();
        crate::runtime::sensors::finding::read_shipped(
            &crate::runtime::sensors::finding::FindingsInput {
                project_dir: &root,
                deliverable: Utf8Path::new("fired"),
                sensor_id: "sensor",
                worker_json: &verdict,
                findings_count: verdict["findings_count"].as_u64().unwrap_or(0),
            },
        )
    }

    pub(super) fn usage_error(&self, args: &[&str]) -> String {
        match self.run(args) {
            WorkerOutcome::UsageError(message) => message,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    /// The worker argv of a code sensor's fire on the project-relative `file`.
    #[cfg(unix)]
    pub(super) fn file_path_args(&self, file: &str) -> Vec<String> {
        vec![
            "--stage".to_owned(),
            "code-generation".to_owned(),
            "--file-path".to_owned(),
            self.root().join(file).to_string(),
        ]
    }

    /// Write an executable `#!/bin/sh` script at the project-relative `relative`.
    #[cfg(unix)]
    pub(super) fn script(&self, relative: &str, body: &str) -> Utf8PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = self.write(relative, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A fake tool at the project-relative `relative` that prints `stdout` and `stderr` (kept in
    /// files beside the project, so no shell quoting is involved) and exits `status`.
    #[cfg(unix)]
    pub(super) fn canned_tool(&self, relative: &str, stdout: &str, stderr: &str, status: i32) {
        let stem = relative.replace('/', "_");
        let out = self.write(&format!("canned/{stem}.stdout"), stdout);
        let err = self.write(&format!("canned/{stem}.stderr"), stderr);
        self.script(
            relative,
            &format!("cat '{out}'; cat '{err}' >&2; exit {status}"),
        );
    }

    /// Link the real `tool` from `tools` into the project's `node_modules/.bin`.
    #[cfg(unix)]
    pub(super) fn link_real_tool(&self, tools: &Utf8Path, tool: &str) {
        let bin = self.root().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(tools.join(tool), bin.join(tool)).unwrap();
    }
}

/// The reference's part of a verdict: our `diagnostics` key left out.
pub(super) fn reference_part(mut verdict: Value) -> Value {
    if let Some(object) = verdict.as_object_mut() {
        object.shift_remove(crate::runtime::sensors::finding::DIAGNOSTICS_KEY);
    }
    verdict
}

/// The folder of the real tools `.ci/install-node-tools` installs, when the run has them;
/// `None` after printing why the test is skipped, or a failed test under
/// `AIDLC_TEST_REQUIRE_TOOLS` (CI sets it, so a check against the real tool never goes quiet).
#[cfg(unix)]
pub(super) fn real_node_tools(tool: &str) -> Option<Utf8PathBuf> {
    let Some(folder) = std::env::var_os("AIDLC_TEST_NODE_TOOLS") else {
        assert!(
            std::env::var_os("AIDLC_TEST_REQUIRE_TOOLS").is_none(),
            "{tool} is required (AIDLC_TEST_REQUIRE_TOOLS is set) but AIDLC_TEST_NODE_TOOLS is not: run `.ci/install-node-tools` and set it to the folder it prints"
        );
        eprintln!("SKIPPED (real eslint/tsc not installed; run .ci/install-node-tools)");
        return None;
    };
    let folder = Utf8PathBuf::from_path_buf(std::path::PathBuf::from(folder))
        .expect("AIDLC_TEST_NODE_TOOLS is not UTF-8");
    let executable = folder.join(tool);
    assert!(
        crate::runtime::sensors::node_tool::is_executable_file(executable.as_std_path()),
        "AIDLC_TEST_NODE_TOOLS={folder} has no executable {tool}; run .ci/install-node-tools"
    );
    Some(folder)
}

/// The message of a script error.
#[cfg(unix)]
pub(super) fn script_error_of(outcome: &WorkerOutcome) -> &str {
    match outcome {
        WorkerOutcome::ScriptError(message) => message,
        other => panic!("expected a script error, got {other:?}"),
    }
}
