//! One write event of an agent harness, from its payload to the outcome of each written file
//! (D28): which harness sent it and which files it names (`harness::payload`), the project and
//! workspace it belongs to, Codex's second delivery dropped, the hook's time allowance, the
//! reference's audit hook when the install still runs it, then the write hook
//! ([`hook::run_sensors_hook`]) once per written file. A shell tool call names no file: the
//! files it created or modified are found by comparing the project with the snapshot the guard
//! kept before it (`shell_writes`), and each is a write as a file tool's would be. The CLI reads
//! the payload and prints what each outcome says; everything between is here.
//!
//! Invariants:
//! - a payload that names no file and says nothing unreadable is nothing to do (the harness
//!   reported a tool that writes nothing); one that cannot be read is recorded as an unchecked
//!   write in the active workflow's drop log, never dropped silently;
//! - a shell call is D60's;
//! - outside a project (no project found from the payload's `cwd`, the environment or the
//!   working folder), nothing is written anywhere.

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::{self, payload};
use crate::runtime::dispatch::fire::FireContext;
use crate::runtime::dispatch::hook::{self, HookOutcome};
use crate::runtime::dispatch::hook_workspace::{HookPlace, first_delivery, hook_workspace};
use crate::runtime::dispatch::shell_writes::{self, ShellCallChanges};
use crate::runtime::dispatch::time_limit;
use crate::runtime::worker_process::{WorkerCommand, run_worker};
use crate::runtime::workspace::Workspace;

/// What the hook's command line and environment say about one run.
pub struct WriteEventRun<'a> {
    pub place: HookPlace<'a>,
    /// `--audit-hook`: the reference's artifact audit hook, run before the sensors.
    pub audit_hook: Option<&'a Utf8Path>,
}

/// Run the write hook for the event in `payload`, handing each outcome (an unchecked write's,
/// then each written file's) to `on_outcome` as it is known.
pub fn run_write_event(
    run: &WriteEventRun<'_>,
    payload: &[u8],
    on_outcome: &mut dyn FnMut(&HookOutcome),
) {
    let harness = run
        .place
        .requested_harness
        .unwrap_or_else(|| payload::detect_harness(payload));
    if let Some(call) = payload::shell_call(harness, payload) {
        run_shell_event(run, harness, payload, &call, on_outcome);
        return;
    }
    let event = payload::write_event(harness, payload);
    if event.files.is_empty() && event.unreadable.is_none() {
        return;
    }
    let Some(workspace) = hook_workspace(&run.place, harness, payload) else {
        return;
    };
    if !first_delivery(harness, workspace.project_dir(), "run-sensors", payload) {
        return;
    }
    let allowance = hook_allowance(run, &workspace);
    let context = FireContext::default();
    if let Some(reason) = &event.unreadable {
        let message = format!(
            "{}: {reason}; the write was not checked",
            harness.product_name()
        );
        on_outcome(&hook::record_unchecked_write(
            &workspace, &context, &message,
        ));
    }
    let written = event.files.iter().map(|file| {
        let path = written_path(&workspace, event.relative_to.as_deref(), &file.path);
        (path, file.tool)
    });
    fire_written_files(run, &workspace, &context, &allowance, written, on_outcome);
}

/// The one path every written file takes, from a file tool or a shell call: the reference's
/// audit hook when the install runs it, then the write hook.
fn fire_written_files(
    run: &WriteEventRun<'_>,
    workspace: &Workspace,
    context: &FireContext,
    allowance: &Result<time_limit::LimitValue, String>,
    written: impl Iterator<Item = (Utf8PathBuf, payload::WriteTool)>,
    on_outcome: &mut dyn FnMut(&HookOutcome),
) {
    for (written, tool) in written {
        if let Some(audit_hook) = run.audit_hook
            && let Some(reason) = run_reference_audit_hook(workspace, audit_hook, &written, tool)
        {
            on_outcome(&hook::record_unchecked_write(workspace, context, &reason));
        }
        on_outcome(&hook::run_sensors_hook(
            workspace, &written, context, allowance,
        ));
    }
}

/// The hook's time allowance for this run, from the environment and the harness's settings.
fn hook_allowance(
    run: &WriteEventRun<'_>,
    workspace: &Workspace,
) -> Result<time_limit::LimitValue, String> {
    let home = (run.place.env)("HOME");
    let settings_files = time_limit::hook_settings_files(
        workspace.project_dir(),
        workspace.layout.harness.dir_name(),
        home.as_deref().map(Utf8Path::new),
    );
    time_limit::hook_allowance(run.place.env, &settings_files, workspace.version())
}

/// A shell tool call: each file it created or modified is a write (`shell_writes`), each
/// deleted file the stage's sensors match a drop; a call that changed nothing does nothing
/// more than the walk.
fn run_shell_event(
    run: &WriteEventRun<'_>,
    harness: harness::Harness,
    payload: &[u8],
    call: &payload::ShellCall,
    on_outcome: &mut dyn FnMut(&HookOutcome),
) {
    let Some(workspace) = hook_workspace(&run.place, harness, payload) else {
        return;
    };
    if !first_delivery(harness, workspace.project_dir(), "run-sensors", payload)
        || crate::runtime::workspace::present_workflow(workspace.record_root()).is_none()
    {
        return;
    }
    let context = FireContext::default();
    let changes = match shell_writes::shell_call_changes(&workspace, call) {
        ShellCallChanges::Known(changes) => changes,
        ShellCallChanges::Unchecked(reason) => {
            let message = format!("{}: {reason}", harness.product_name());
            on_outcome(&hook::record_unchecked_write(
                &workspace, &context, &message,
            ));
            return;
        }
    };
    if changes.is_empty() {
        return;
    }
    let allowance = hook_allowance(run, &workspace);
    let created = changes
        .added
        .iter()
        .map(|path| (path, payload::WriteTool::Write));
    let modified = changes
        .modified
        .iter()
        .map(|path| (path, payload::WriteTool::Edit));
    let written = created
        .chain(modified)
        .map(|(path, tool)| (workspace.project_dir().join(path), tool));
    fire_written_files(run, &workspace, &context, &allowance, written, on_outcome);
    for path in &changes.removed {
        on_outcome(&hook::record_deleted_file(
            &workspace,
            &workspace.project_dir().join(path),
            &context,
        ));
    }
}

/// The absolute path of a file the payload names: relative paths are taken from the payload's
/// base folder when it gives one, else from the project.
fn written_path(
    workspace: &Workspace,
    relative_to: Option<&Utf8Path>,
    path: &Utf8Path,
) -> Utf8PathBuf {
    // An absolute path replaces the folder it is joined to.
    workspace
        .project_dir()
        .join(relative_to.unwrap_or(Utf8Path::new("")).join(path))
}

/// Run the reference's artifact audit hook for one written file, as its adapter did; why it
/// did not run, when it did not.
fn run_reference_audit_hook(
    workspace: &Workspace,
    audit_hook: &Utf8Path,
    written: &Utf8Path,
    tool: payload::WriteTool,
) -> Option<String> {
    let run = harness::reference_audit::audit_hook_run(
        workspace.project_dir(),
        audit_hook,
        written,
        tool,
    );
    let mut command = WorkerCommand::new(run.program, run.cwd);
    command.args = run.args;
    command.env = run.env;
    command.stdin = Some(run.stdin);
    command.timeout = harness::reference_audit::AUDIT_HOOK_TIMEOUT;
    let result = run_worker(&command);
    let shown = workspace.layout.display(written);
    let failure = if let Some(error) = &result.spawn_error {
        format!("{} could not be started ({error})", run.program)
    } else if result.timed_out {
        format!(
            "it ran longer than {} s and was stopped",
            harness::reference_audit::AUDIT_HOOK_TIMEOUT.as_secs()
        )
    } else if result.interrupted {
        "it was interrupted".to_owned()
    } else {
        return None;
    };
    Some(format!(
        "the reference's audit hook {audit_hook}: {failure}; no artifact row was written for {shown}"
    ))
}
