//! Writes through the shell: the pre-tool guard ([`guard_tool_call`]) keeps what the project
//! holds before a shell tool call it allows ([`record_shell_snapshot`]), and the write hook, after the call, fires on what
//! changed ([`shell_call_changes`]), as for a file tool's write of each changed file.
//!
//! D60 states the invariants; beyond it: the guard and the write hook walk with the same
//! folders left out ([`walk_skips`]), so a call that changed nothing shows no change; a stage
//! without a write-fired glob walks nothing; and a graph that cannot be used or a glob that does
//! not compile stamps every file, so nothing is lost.

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::guard::{self, GuardOutput, GuardVerdict};
use crate::harness::payload::{self, ShellCall};
use crate::leaves::fs_util::contained::ProjectPath;
use crate::protocol::glob::SensorGlob;
use crate::runtime::dispatch::compiled_graph::{active_stage_node, load_workspace_graph};
use crate::runtime::dispatch::hook::write_fired_pattern;
use crate::runtime::dispatch::hook_workspace::{HookPlace, hook_workspace};
use crate::runtime::dispatch::project_snapshot::{
    self, ProjectSnapshot, SnapshotChanges, WatchedSelection, load_snapshot, save_snapshot,
    snapshot_changes, take_snapshot,
};
use crate::runtime::workspace::{self, Workspace};

/// The folder under the hooks-health folder that holds the snapshots of calls in progress.
pub const SHELL_SNAPSHOTS_DIR: &str = "shell-snapshots";

/// The snapshot kept before `call`, `<call key>.snapshot`; for `None`, `.latest.snapshot`, the
/// last snapshot walked, kept between shell calls for the next call's guard to re-stamp instead
/// of walking (only its walk's shape and its files' paths are used: the files are stamped again
/// whenever it is re-stamped). A call's key never starts with `.`, so no call's snapshot takes
/// the latest's name.
fn snapshot_file(workspace: &Workspace, call: Option<&ShellCall>) -> Utf8PathBuf {
    let name = call.map_or_else(
        || ".latest.snapshot".to_owned(),
        |call| format!("{}.snapshot", call.key),
    );
    workspace
        .hooks_health_dir()
        .join(SHELL_SNAPSHOTS_DIR)
        .join(name)
}

/// The folders the walk leaves out besides `.git`, `node_modules` and `target`: the
/// hooks-health folder (the snapshots themselves) and the dispatcher's detail folders.
pub fn walk_skips(workspace: &Workspace) -> Vec<Utf8PathBuf> {
    let record = workspace.record_root();
    vec![
        workspace.hooks_health_dir(),
        workspace.sensor_detail_dir(),
        workspace::sensor_detail_dir(record),
        workspace::legacy_sensor_detail_dir(record),
    ]
}

/// Which files of the project a shell call's writes could fire on.
enum WatchedFiles {
    /// Those the active stage's write-fired globs match.
    Matching(Vec<SensorGlob>),
    /// Every file: the graph cannot be used, or a glob does not compile (the write hook then
    /// records each changed file as a drop, as for a file tool's write).
    Every,
    /// None: a stage the graph lacks or that is disabled, or a stage without a write-fired
    /// glob. The walk is skipped.
    Nothing,
}

/// The key of the watched selection (see [`WatchedSelection`]): the active stage choice and
/// the compiled graph's stamp, which together decide [`watched_files`]. A snapshot walked
/// for the same key is re-stamped without reading the graph; a graph written again (a new
/// stamp) walks once more.
fn selection_key(workspace: &Workspace, workflow: &workspace::PresentWorkflow) -> String {
    let choice = &workflow.stage_choice;
    let graph = match std::fs::metadata(&workspace.layout.stage_graph_path) {
        Ok(metadata) => project_snapshot::stamp_of(&metadata).to_string(),
        Err(_) => "none".to_owned(),
    };
    format!(
        "stage {:?} (current {:?}) of graph {graph}",
        choice.preferred_stage(),
        choice.current_stage
    )
}

/// The files the active stage's write-fired sensors could fire on, as the write hook picks
/// the stage (the active-directive marker's, else the state's current stage). The graph is
/// read only here, and only when a walk needs it.
fn watched_files(workspace: &Workspace, workflow: &workspace::PresentWorkflow) -> WatchedFiles {
    let Ok(graph) = load_workspace_graph(workspace) else {
        return WatchedFiles::Every;
    };
    let Some(node) = active_stage_node(&graph.nodes, &workflow.stage_choice) else {
        return WatchedFiles::Nothing;
    };
    let mut globs: Vec<SensorGlob> = Vec::new();
    for pattern in node
        .sensors_applicable
        .iter()
        .filter_map(write_fired_pattern)
    {
        // Two sensors on one glob match the same files: one is matched.
        if globs.iter().any(|glob| glob.pattern() == pattern) {
            continue;
        }
        match SensorGlob::new(pattern) {
            Ok(glob) => globs.push(glob),
            Err(_) => return WatchedFiles::Every,
        }
    }
    if globs.is_empty() {
        WatchedFiles::Nothing
    } else {
        WatchedFiles::Matching(globs)
    }
}

/// The project as the walk sees it now inside `workflow`: the files the active stage's
/// write-fired sensors could fire on, re-stamped from `earlier` when it was walked for the
/// same selection and no folder changed since; else walked.
fn project_now(
    workspace: &Workspace,
    workflow: &workspace::PresentWorkflow,
    earlier: Option<&ProjectSnapshot>,
) -> ProjectSnapshot {
    let project_dir = workspace.project_dir();
    let key = selection_key(workspace, workflow);
    if let Some(restamped) =
        earlier.and_then(|earlier| project_snapshot::restamp_snapshot(project_dir, earlier, &key))
    {
        return restamped;
    }
    let watched = watched_files(workspace, workflow);
    let admits: Box<dyn Fn(&str) -> bool + '_> = match &watched {
        WatchedFiles::Nothing => return ProjectSnapshot::default(),
        WatchedFiles::Every => Box::new(|_| true),
        WatchedFiles::Matching(globs) => Box::new(|relative: &str| {
            globs
                .iter()
                .any(|glob| glob.matches(project_dir, Utf8Path::new(relative)))
        }),
    };
    let selection = WatchedSelection {
        key: &key,
        admits: admits.as_ref(),
    };
    take_snapshot(project_dir, &walk_skips(workspace), &selection)
}

/// What the pre-tool guard answers for one payload, and why the snapshot before an allowed
/// shell call was not kept, when it was not (said on stderr; it never refuses the call: the
/// write hook records the call as unchecked).
pub struct GuardRun {
    pub snapshot_not_kept: Option<String>,
    pub output: GuardOutput,
}

/// The pre-tool guard (`harness::guard`) over `payload` (`None`: none arrived, refused): only
/// the payload is read, so it costs no project load unless a shell call is allowed.
pub fn guard_tool_call(place: &HookPlace<'_>, payload: Option<&[u8]>) -> GuardRun {
    let mut snapshot_not_kept = None;
    let output = match payload {
        None => guard::unreadable_output_for(
            place.requested_harness,
            "aidlc guard: no pre-tool payload arrived on stdin; the tool call is refused",
        ),
        Some(payload) => {
            let harness = place
                .requested_harness
                .unwrap_or_else(|| payload::detect_harness(payload));
            match guard::guard_verdict(harness, payload) {
                Ok(GuardVerdict::Allow) => {
                    if let Some(call) = payload::shell_call(harness, payload)
                        && let Some(workspace) = hook_workspace(place, harness, payload)
                    {
                        snapshot_not_kept = record_shell_snapshot(&workspace, &call).err();
                    }
                    guard::allow_output(harness)
                }
                Ok(verdict) => guard::guard_output(harness, &verdict),
                Err(problem) => guard::unreadable_output_for(
                    Some(harness),
                    &format!("aidlc guard: {problem}; the tool call is refused"),
                ),
            }
        }
    };
    GuardRun {
        snapshot_not_kept,
        output,
    }
}

/// Keep what the project holds before `call`, inside an active workflow; why it could not be
/// kept, when it could not (the write hook then records the call as unchecked). A latest
/// snapshot that cannot be read is walked past (it only saves time).
pub fn record_shell_snapshot(workspace: &Workspace, call: &ShellCall) -> Result<(), String> {
    let Some(workflow) = workspace::present_workflow(workspace.record_root()) else {
        return Ok(());
    };
    let file = snapshot_file(workspace, Some(call));
    let file = ProjectPath::of_absolute(workspace.project_dir(), &file)
        .map_err(|refusal| refusal.to_string())?;
    let latest = load_snapshot(&snapshot_file(workspace, None))
        .ok()
        .flatten();
    let now = project_now(workspace, &workflow, latest.as_ref());
    save_snapshot(&file, &now).map_err(|error| error.to_string())?;
    if now.shape != latest.and_then(|latest| latest.shape) {
        keep_latest_snapshot(workspace, &now);
    }
    Ok(())
}

/// What the write hook learns of one shell call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellCallChanges {
    /// The files the call created, modified and deleted (possibly none).
    Known(SnapshotChanges),
    /// No snapshot to compare with, and why: nothing the call changed can be known.
    Unchecked(String),
}

/// What `call` changed: the project now against the snapshot the guard kept, which is then
/// removed; a walk taken here is kept as the latest.
pub fn shell_call_changes(workspace: &Workspace, call: &ShellCall) -> ShellCallChanges {
    let file = snapshot_file(workspace, Some(call));
    let before = load_snapshot(&file);
    // A snapshot serves one call: it goes whatever it held. One that cannot be removed is
    // replaced by the next call's, so a failure here loses nothing.
    if let Ok(file) = ProjectPath::of_absolute(workspace.project_dir(), &file) {
        let _ = crate::leaves::fs_util::contained::remove_file(&file);
    }
    match before {
        Ok(Some(before)) => {
            // Outside an active workflow nothing is watched.
            let now = workspace::present_workflow(workspace.record_root())
                .map(|workflow| project_now(workspace, &workflow, Some(&before)))
                .unwrap_or_default();
            // The guard keeps each walk it takes as the latest: a shape unchanged since its
            // snapshot is the latest's already.
            if now.shape != before.shape {
                keep_latest_snapshot(workspace, &now);
            }
            ShellCallChanges::Known(snapshot_changes(&before, &now))
        }
        Ok(None) => ShellCallChanges::Unchecked(format!(
            "no snapshot of the project was taken before this shell call ({} is missing: the pre-tool guard `aidlc engine hook guard` did not run for it; register it with `aidlc hook install`); the files it changed were not checked",
            shown(workspace, &file)
        )),
        Err(reason) => ShellCallChanges::Unchecked(format!(
            "the snapshot taken before this shell call ({}) cannot be read: {reason}; the files it changed were not checked",
            shown(workspace, &file)
        )),
    }
}

/// Keep `now` for the next shell call's guard; a walk that is not trusted is not worth
/// keeping, and one that cannot be kept only costs the next guard a walk.
fn keep_latest_snapshot(workspace: &Workspace, now: &ProjectSnapshot) {
    let latest = snapshot_file(workspace, None);
    let Ok(latest) = ProjectPath::of_absolute(workspace.project_dir(), &latest) else {
        return;
    };
    if now.shape.as_ref().is_some_and(|shape| shape.trusted) {
        let _ = save_snapshot(&latest, now);
    } else {
        let _ = crate::leaves::fs_util::contained::remove_file(&latest);
    }
}

fn shown(workspace: &Workspace, file: &Utf8Path) -> String {
    crate::runtime::audit::ledger::relative_path_field(workspace.project_dir(), file.as_str())
}
