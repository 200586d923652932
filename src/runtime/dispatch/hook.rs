//! `aidlc engine hook run-sensors`: the write-time hook (`PostToolUse` for Write/Edit in Claude
//! Code and friends). D28 states its invariants (exit 0 on every path, when a workflow is
//! active, the drop lines, the files it writes, nothing on stdout); beyond it:
//! - one run reads the compiled graph once and the live registry at most once (on its first
//!   matching binding), whatever number of bindings fire;
//! - a current stage the plugin selection disabled (`"enabled": false`) is not there (D49): the
//!   run fires nothing and drops nothing, and an active-directive marker naming one falls back
//!   to the state's current stage, as for any stage the graph lacks;
//! - a health folder that does not stay inside the project gets nothing: what would have gone
//!   there is a notice on stderr instead;
//! - the hook's allowance (`time_limit`) bounds its whole run: a fire it cuts short is a drop
//!   and a `script-error: cut-short` terminal row, never a pass, and the hook still exits 0.

use std::time::SystemTime;

use camino::Utf8Path;

use crate::leaves::write_folder;
use crate::protocol::glob::SensorGlob;
use crate::protocol::graph_reader::StageGraph;
use crate::protocol::selection::FireOn;
use crate::protocol::stage_node::{GraphNode, SensorEntry};
use crate::protocol::verdict::{ScriptError, Verdict};
use crate::runtime::audit::ledger;
use crate::runtime::dispatch::compiled_graph::{active_stage_node, load_workspace_graph};
use crate::runtime::dispatch::fire::{
    FireContext, FireRequest, prepare_fire_with, run_fire, undeclared_record_file, usable_registry,
};
use crate::runtime::dispatch::registry::{LiveRegistry, load_live_registry};
use crate::runtime::dispatch::time_limit::{EnclosingLimit, LimitValue};
use crate::runtime::workspace::{self, Workspace};

/// The banner printed the first time sensors fire in a workspace.
pub const FIRST_RUN_BANNER: &str = "[aidlc] Sensors are now watching this workspace. See the AI-DLC documentation to learn how rules and the learning loop work.";

/// What one hook run did, for the caller to print on stderr: the first-run banner, and the
/// notices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutcome {
    pub first_run: bool,
    /// What the user must hear that has no file to go to (a health folder that was refused,
    /// and the drops that could not be logged there).
    pub notices: Vec<String>,
    /// Whether the health folder may be written into (checked once per run).
    health_usable: bool,
}

impl HookOutcome {
    /// An outcome whose health folder was created inside the project, or a notice saying why
    /// the heartbeat and the drop log are not written.
    fn with_health_folder(workspace: &Workspace) -> Self {
        let mut outcome = Self::default();
        match write_folder::create_write_folder(
            workspace.project_dir(),
            &workspace.hooks_health_dir(),
        ) {
            Ok(()) => outcome.health_usable = true,
            Err(error) => outcome.notices.push(format!(
                "warning: the hook's heartbeat and drop log are not written: {error}"
            )),
        }
        outcome
    }

    /// Record `message` in the drop log; a notice when the drop log's folder
    /// was refused, so the drop is never lost silently.
    fn drop_write(&mut self, workspace: &Workspace, context: &FireContext, message: &str) {
        if self.health_usable {
            record_drop(&workspace.write_hook_drops_file(), (context.now)(), message);
        } else {
            self.notices
                .push(format!("warning: a write was not checked: {message}"));
        }
    }
}

/// Run the hook for one written file under `allowance` (`time_limit::hook_allowance`), counted
/// from here; never fails. A refused allowance (a malformed value) fires nothing: it is a drop
/// and a notice.
pub fn run_sensors_hook(
    workspace: &Workspace,
    written: &Utf8Path,
    context: &FireContext,
    allowance: &Result<LimitValue, String>,
) -> HookOutcome {
    let limit = allowance.as_ref().ok().map(|allowance| {
        EnclosingLimit::after(
            allowance.duration,
            format!("the write hook's allowance ({})", allowance.source),
        )
    });
    // An absolute path replaces the project folder it is joined to.
    let written = workspace.project_dir().join(written);
    let Some(workflow) = workspace::present_workflow(workspace.record_root()) else {
        return HookOutcome::default();
    };
    if is_sensor_output(&workflow.record_root, &written)
        || workspace::sensors_off_by_environment()
        || workspace::sensors_off_in_state(&workflow.state_text)
    {
        return HookOutcome::default();
    }
    let mut outcome = HookOutcome::with_health_folder(workspace);
    if outcome.health_usable {
        outcome.first_run = write_heartbeat(workspace, (context.now)());
    }
    let shown = ledger::relative_path_field(workspace.project_dir(), written.as_str());
    // Without a usable graph nobody can tell which sensors this write matches: say so in the
    // drop log rather than lose it.
    let graph = match load_workspace_graph(workspace) {
        Ok(graph) => graph,
        Err(error) => {
            outcome.drop_write(
                workspace,
                context,
                &format!("stage-graph: {error}; the write to {shown} was not checked"),
            );
            return outcome;
        }
    };
    let StageGraph {
        nodes, disabled, ..
    } = graph;
    let choice = &workflow.stage_choice;
    let active = active_stage_node(&nodes, choice);
    let stage = active
        .map_or(&choice.current_stage, |node| &node.slug)
        .clone();
    // A stage the plugin selection disabled is not in the graph the runtime uses (D49): its
    // sensors are off by the user's choice, so nothing fires and nothing is dropped.
    if disabled.iter().any(|node| node.slug == stage) {
        return outcome;
    }
    let Some(node) = active else {
        outcome.drop_write(
            workspace,
            context,
            &format!(
                "stage-graph: the current stage \"{stage}\" is not in the stage graph; the write to {shown} was not checked"
            ),
        );
        return outcome;
    };
    // A file of the record the stage does not declare fires nothing (failure mode Z4).
    if undeclared_record_file(workspace, node, &written).is_some() {
        return outcome;
    }
    if let Err(refusal) = allowance {
        let message = format!("{refusal}; the write to {shown} was not checked");
        outcome.notices.push(format!("error: {message}"));
        outcome.drop_write(workspace, context, &message);
        return outcome;
    }
    // Read on the first matching binding, then shared by every fire of this run.
    let mut registry: Option<LiveRegistry> = None;
    for entry in &node.sensors_applicable {
        match write_match(workspace.project_dir(), entry, &written) {
            WriteMatch::No => {}
            WriteMatch::InvalidGlob(reason) => outcome.drop_write(
                workspace,
                context,
                &format!(
                    "{}: {reason}; the write to {shown} was not checked",
                    entry.id
                ),
            ),
            WriteMatch::Yes => {
                let fire = HookFire {
                    stage: &stage,
                    entry,
                    written: &written,
                    shown: &shown,
                    limit: limit.as_ref(),
                    registry: registry.get_or_insert_with(|| load_live_registry(&workspace.layout)),
                    nodes: &nodes,
                };
                fire_one(workspace, &fire, context, &mut outcome);
            }
        }
    }
    outcome
}

/// Record in the drop log of the active workflow that a write reached the hook but was not
/// checked for `reason` (its payload did not say which file, or the reference's audit hook
/// could not run), as the hook records its other drops; nothing outside an active workflow.
pub fn record_unchecked_write(
    workspace: &Workspace,
    context: &FireContext,
    reason: &str,
) -> HookOutcome {
    if workspace::present_workflow(workspace.record_root()).is_none() {
        return HookOutcome::default();
    }
    let mut outcome = HookOutcome::with_health_folder(workspace);
    outcome.drop_write(workspace, context, reason);
    outcome
}

/// A file a shell call deleted: nothing fires (there is nothing left to check), and when one
/// of the active stage's write-fired sensors matches it, the drop log says so, naming it (the
/// gate checks the stage's deliverables). Nothing outside an active workflow, nothing for a
/// file no write-fired sensor matches.
pub fn record_deleted_file(
    workspace: &Workspace,
    deleted: &Utf8Path,
    context: &FireContext,
) -> HookOutcome {
    let Some(workflow) = workspace::present_workflow(workspace.record_root()) else {
        return HookOutcome::default();
    };
    if is_sensor_output(&workflow.record_root, deleted) {
        return HookOutcome::default();
    }
    let Ok(graph) = load_workspace_graph(workspace) else {
        return HookOutcome::default();
    };
    let Some(node) = active_stage_node(&graph.nodes, &workflow.stage_choice) else {
        return HookOutcome::default();
    };
    let matching: Vec<&str> = node
        .sensors_applicable
        .iter()
        .filter(|entry| {
            matches!(
                write_match(workspace.project_dir(), entry, deleted),
                WriteMatch::Yes
            )
        })
        .map(|entry| entry.id.as_str())
        .collect();
    if matching.is_empty() {
        return HookOutcome::default();
    }
    let mut outcome = HookOutcome::with_health_folder(workspace);
    let shown = ledger::relative_path_field(workspace.project_dir(), deleted.as_str());
    outcome.drop_write(
        workspace,
        context,
        &format!(
            "a shell call deleted {shown}, which {} would check; nothing fires on a deleted file (the gate checks the stage's deliverables)",
            matching.join(", ")
        ),
    );
    outcome
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

/// The glob of a write-fired binding; `None` for a gate-fired one and for one without a glob,
/// which never fire on a write (D5, D6).
pub fn write_fired_pattern(entry: &SensorEntry) -> Option<&str> {
    entry
        .matches
        .as_deref()
        .filter(|pattern| !pattern.is_empty() && entry.fire_on == FireOn::Write)
}

/// Write-fired, with a glob, and the glob matches.
fn write_match(project_dir: &Utf8Path, entry: &SensorEntry, written: &Utf8Path) -> WriteMatch {
    let Some(pattern) = write_fired_pattern(entry) else {
        return WriteMatch::No;
    };
    match SensorGlob::new(pattern) {
        Ok(glob) if glob.matches(project_dir, written) => WriteMatch::Yes,
        Ok(_) => WriteMatch::No,
        Err(error) => WriteMatch::InvalidGlob(error.to_string()),
    }
}

/// One matching binding of the hook's run, with the live registry and the graph the run read
/// once for all its fires.
struct HookFire<'a> {
    stage: &'a str,
    entry: &'a SensorEntry,
    written: &'a Utf8Path,
    /// The written file as the drop log names it.
    shown: &'a str,
    limit: Option<&'a EnclosingLimit>,
    registry: &'a LiveRegistry,
    nodes: &'a [GraphNode],
}

/// One fire of the run, prepared from the run's live inputs. The stage's node was found and
/// the written file checked against its declared outputs before any binding matched, so what
/// is left of `prepare_fire` is the registry's and the fire's own pre-flight.
fn fire_one(
    workspace: &Workspace,
    fire: &HookFire<'_>,
    context: &FireContext,
    outcome: &mut HookOutcome,
) {
    let id = &fire.entry.id;
    let request = FireRequest {
        sensor_id: id.clone(),
        stage: fire.stage.to_owned(),
        output_path: fire.written.to_owned(),
        cwd: workspace.project_dir().to_owned(),
    };
    let result = usable_registry(fire.registry)
        .and_then(|()| prepare_fire_with(workspace, &request, fire.registry, fire.nodes))
        .and_then(|prepared| run_fire(workspace, &prepared, context, fire.limit));
    let dropped = match result {
        Ok(report) => match &report.verdict {
            Verdict::ScriptError(ScriptError::CutShort(limit)) => format!(
                "{id}: cut short: {limit} ran out; the write to {} was not checked (fire {})",
                fire.shown, report.fire_id
            ),
            _ => return,
        },
        Err(refusal) => format!("{id}: {}", refusal.message),
    };
    outcome.drop_write(workspace, context, &dropped);
}

/// The heartbeat (`<health>/<hook>.last`) holds the ISO time of the latest run, as the
/// reference's doctor reads it; returns whether this is the first run ever: the first-run
/// marker did not exist yet, and now holds the time of this run. The health folder exists and
/// was checked.
#[expect(
    clippy::disallowed_methods,
    reason = "the write hook's health files, in the record's hook health folder that write_folder::create_write_folder resolved inside the project"
)]
fn write_heartbeat(workspace: &Workspace, now: SystemTime) -> bool {
    let stamp = crate::leaves::timestamp::iso_timestamp(now);
    // Replaced atomically but not flushed: the heartbeat only says when the hook last ran, and
    // waiting for the disk (a millisecond or more per write hook) buys nothing a power cut
    // could lose (at worst the previous time, or no heartbeat until the next run).
    let _ = crate::leaves::fs_util::replace_atomically(
        &workspace.write_hook_heartbeat_file(),
        stamp.as_bytes(),
        crate::leaves::fs_util::Flush::No,
    );
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(workspace.first_run_marker_file());
    match created {
        Ok(mut marker) => {
            use std::io::Write;
            let _ = marker.write_all(stamp.as_bytes());
            true
        }
        Err(_) => false,
    }
}

/// One `<ISO timestamp><TAB><message>` line appended to the drop log (its folder was checked).
#[expect(
    clippy::disallowed_methods,
    reason = "the write hook's health files, in the record's hook health folder that write_folder::create_write_folder resolved inside the project"
)]
fn record_drop(drops_file: &Utf8Path, now: SystemTime, message: &str) {
    use std::io::Write;
    let line = format!(
        "{}\t{}\n",
        crate::leaves::timestamp::iso_timestamp(now),
        message.replace(['\n', '\r'], " ")
    );
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(drops_file)
    {
        let _ = file.write_all(line.as_bytes());
    }
}
