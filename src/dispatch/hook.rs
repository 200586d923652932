//! `aidlc engine hook run-sensors`: the write-time hook (`PostToolUse` for Write/Edit in Claude
//! Code and friends), upstream §4.11.
//!
//! Invariants:
//! - the hook never fails the agent's write: every path ends in exit 0;
//! - a workflow is active when the active record's state is readable and names a current
//!   stage; this clone's audit shard need not exist yet (failure-modes N6), the first fire
//!   creates it;
//! - inside an active workflow, a write that may match a sensor and is not fired is recorded
//!   as a drop line with its reason, never silently lost: a fire that could not run, a glob
//!   that does not compile, a graph that cannot be used, a current stage the graph does not
//!   know;
//! - a write that matches no sensor costs a few file reads, not a registry or worker start;
//! - only write-fired entries of the active stage's compiled `sensors_applicable` whose glob
//!   matches fire; an entry without a glob never fires (D5, D6).

use std::io::Read;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};

use crate::audit::ledger;
use crate::dispatch::fire::{FireContext, FireRequest, prepare_fire, run_fire};
use crate::dispatch::glob::SensorGlob;
use crate::dispatch::stage_graph::{GraphSensorEntry, load_graph};
use crate::syntax::manifest::FireOn;
use crate::workspace::{self, Workspace};

/// The most the hook waits for its payload: an agent that never closes stdin must not hang
/// the hook.
pub const PAYLOAD_WAIT: Duration = Duration::from_secs(5);
/// The largest payload read; a hook payload is a few KiB.
pub const PAYLOAD_LIMIT_BYTES: u64 = 4 * 1024 * 1024;

/// The banner printed the first time sensors fire in a workspace.
pub const FIRST_RUN_BANNER: &str = "[aidlc] Sensors are now watching this workspace. See the AI-DLC documentation to learn how rules and the learning loop work.";

/// What one hook run did, for the caller to print (only the first-run banner is printed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutcome {
    /// Why the hook stopped early, when it did (for `--verbose` and tests).
    pub stopped: Option<String>,
    pub fired: Vec<String>,
    pub verdict_lines: Vec<String>,
    pub drops: Vec<String>,
    pub first_run: bool,
}

impl HookOutcome {
    fn stop(reason: impl Into<String>) -> Self {
        Self {
            stopped: Some(reason.into()),
            ..Self::default()
        }
    }
}

/// Read the payload from `stdin` on a helper thread, waiting at most [`PAYLOAD_WAIT`].
/// `None` when it did not arrive in time or could not be read.
pub fn read_payload_bounded(stdin: impl Read + Send + 'static) -> Option<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = stdin.take(PAYLOAD_LIMIT_BYTES).read_to_end(&mut bytes);
        let _ = sender.send(result.map(|_| bytes));
    });
    receiver.recv_timeout(PAYLOAD_WAIT).ok()?.ok()
}

/// The written file's path from a hook payload: `tool_input.file_path`, non-empty.
pub fn written_file_path(payload: &[u8]) -> Option<Utf8PathBuf> {
    let value: serde_json::Value = serde_json::from_slice(payload).ok()?;
    let path = value.get("tool_input")?.get("file_path")?.as_str()?;
    (!path.is_empty()).then(|| Utf8PathBuf::from(path))
}

/// Run the hook for one written file. Never fails; see [`HookOutcome`].
pub fn run_sensors_hook(
    workspace: &Workspace,
    written: &Utf8Path,
    context: &FireContext,
) -> HookOutcome {
    let written = if written.is_absolute() {
        written.to_owned()
    } else {
        workspace.project_dir().join(written)
    };
    let Some(workflow) = workspace::present_workflow(workspace.record_root()) else {
        return HookOutcome::stop(
            "no active workflow (no readable aidlc-state.md with a current stage)",
        );
    };
    if is_sensor_output(&workflow.record_root, &written) {
        return HookOutcome::stop("the written file is a sensor detail file");
    }
    if workspace::sensors_off_by_environment()
        || workspace::sensors_off_in_state(&workflow.state_text)
    {
        return HookOutcome::stop("sensors are switched off for this workflow");
    }
    let health_dir = workspace::hooks_health_dir(&workflow.record_root);
    let mut outcome = HookOutcome {
        first_run: write_heartbeat(&health_dir, (context.now)()),
        ..HookOutcome::default()
    };
    let shown = ledger::relative_path_field(workspace.project_dir(), written.as_str());
    // Without a usable graph nobody can tell which sensors this write matches: say so in the
    // drop log rather than lose it.
    let nodes = match load_graph(&workspace.layout.stage_graph_path) {
        Ok(graph) => graph.nodes,
        Err(error) => {
            outcome.drop_write(
                &health_dir,
                context,
                format!("stage-graph: {error}; the write to {shown} was not checked"),
            );
            outcome.stopped = Some("the stage graph cannot be used".to_owned());
            return outcome;
        }
    };
    let choice = &workflow.stage_choice;
    let stage = if nodes.iter().any(|n| n.slug == choice.preferred_stage()) {
        choice.preferred_stage().to_owned()
    } else {
        choice.current_stage.clone()
    };
    let Some(node) = nodes.iter().find(|n| n.slug == stage) else {
        outcome.drop_write(
            &health_dir,
            context,
            format!(
                "stage-graph: the current stage \"{stage}\" is not in the stage graph; the write to {shown} was not checked"
            ),
        );
        outcome.stopped = Some(format!("stage {stage} is not in the graph"));
        return outcome;
    };
    for entry in &node.sensors_applicable {
        match write_match(workspace.project_dir(), entry, &written) {
            WriteMatch::No => {}
            WriteMatch::InvalidGlob(reason) => outcome.drop_write(
                &health_dir,
                context,
                format!(
                    "{}: {reason}; the write to {shown} was not checked",
                    entry.id
                ),
            ),
            WriteMatch::Yes => {
                outcome.fired.push(entry.id.clone());
                fire_one(
                    workspace,
                    &stage,
                    entry,
                    &written,
                    context,
                    &health_dir,
                    &mut outcome,
                );
            }
        }
    }
    outcome
}

impl HookOutcome {
    /// Record `message` in the drop log and in the outcome.
    fn drop_write(&mut self, health_dir: &Utf8Path, context: &FireContext, message: String) {
        record_drop(health_dir, (context.now)(), &message);
        self.drops.push(message);
    }
}

/// The recursion guard: the dispatcher's own detail files (current and legacy folders).
fn is_sensor_output(record_root: &Utf8Path, written: &Utf8Path) -> bool {
    let normal = written.as_str().replace('\\', "/");
    [
        workspace::sensor_detail_dir(record_root),
        workspace::legacy_sensor_detail_dir(record_root),
    ]
    .iter()
    .any(|dir| {
        let dir = dir.as_str().replace('\\', "/");
        normal == dir || normal.starts_with(&format!("{dir}/"))
    }) || normal.contains("aidlc-docs/.aidlc-sensors/")
}

/// Whether a write fires one binding.
enum WriteMatch {
    /// Gate-fired, no glob, or a glob that does not match.
    No,
    Yes,
    /// A write-fired binding whose glob does not compile: it cannot say, so the write is a drop.
    InvalidGlob(String),
}

/// Write-fired, with a glob, and the glob matches.
fn write_match(project_dir: &Utf8Path, entry: &GraphSensorEntry, written: &Utf8Path) -> WriteMatch {
    if entry.fire_on != FireOn::Write {
        return WriteMatch::No;
    }
    let Some(pattern) = entry.matches.as_deref().filter(|p| !p.is_empty()) else {
        return WriteMatch::No;
    };
    match SensorGlob::new(pattern) {
        Ok(glob) if glob.matches(project_dir, written) => WriteMatch::Yes,
        Ok(_) => WriteMatch::No,
        Err(error) => WriteMatch::InvalidGlob(error.to_string()),
    }
}

fn fire_one(
    workspace: &Workspace,
    stage: &str,
    entry: &GraphSensorEntry,
    written: &Utf8Path,
    context: &FireContext,
    health_dir: &Utf8Path,
    outcome: &mut HookOutcome,
) {
    let request = FireRequest {
        sensor_id: entry.id.clone(),
        stage: stage.to_owned(),
        output_path: written.to_owned(),
        cwd: workspace.project_dir().to_owned(),
    };
    let result = prepare_fire(workspace, &request)
        .and_then(|prepared| run_fire(workspace, &prepared, context));
    match result {
        Ok(report) => outcome.verdict_lines.push(report.verdict_line),
        Err(refusal) => {
            outcome.drop_write(
                health_dir,
                context,
                format!("{}: {}", entry.id, refusal.message),
            );
        }
    }
}

/// `<health>/run-sensors.last` holds the time of the latest run; returns whether this is the
/// first run ever (the `.first-fired` marker did not exist yet, and now does).
fn write_heartbeat(health_dir: &Utf8Path, now: SystemTime) -> bool {
    if std::fs::create_dir_all(health_dir).is_err() {
        return false;
    }
    let stamp = crate::audit::timestamp::iso_timestamp(now);
    let _ = crate::fs_util::write_atomic(&health_dir.join("run-sensors.last"), stamp.as_bytes());
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(health_dir.join(".first-fired"))
        .is_ok()
}

/// One `<ISO timestamp><TAB><message>` line in `<health>/run-sensors.drops`.
fn record_drop(health_dir: &Utf8Path, now: SystemTime, message: &str) {
    use std::io::Write;
    let line = format!(
        "{}\t{}\n",
        crate::audit::timestamp::iso_timestamp(now),
        message.replace(['\n', '\r'], " ")
    );
    let _ = std::fs::create_dir_all(health_dir);
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(health_dir.join("run-sensors.drops"))
    {
        let _ = file.write_all(line.as_bytes());
    }
}
