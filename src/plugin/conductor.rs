//! The conductor's generated files, refreshed by the install's own generators.
//!
//! On a reference install the conductor (which stays the reference's, D10) has files derived
//! from the compiled graph: a runner skill per stage and per scope (`<harness>/skills/<slug>/`,
//! written by `tools/aidlc-runner-gen.ts`) and the stage and scope tables in the orchestrator's
//! `skills/aidlc/SKILL.md` (rendered by `tools/aidlc-utility.ts stage-table|scope-table` between
//! their BEGIN and END markers). After a composition changes the graph, they are regenerated with
//! those same tools under Bun, as the reference composer does, so the bytes are the install's own.
//! A project without those tools (`aidlc init`) has nothing to refresh. An install that has them
//! but no Bun to run them is refused before anything is written.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::Layout;
use crate::leaves::fs_util::Flush;
use crate::leaves::fs_util::contained::{self, ProjectPath};
use crate::plugin::Problem;
use crate::runtime::worker_process::{WorkerCommand, run_worker};

const RUNNER_GENERATOR: &str = "tools/aidlc-runner-gen.ts";
const UTILITY: &str = "tools/aidlc-utility.ts";
const GENERATOR_TIMEOUT: Duration = Duration::from_secs(120);

/// The markers around the generated tables (the reference's, byte for byte).
const STAGE_TABLE: (&str, &str, &str) = (
    "stage-table",
    "<!-- BEGIN: compiled stage graph via `bun aidlc-utility.ts stage-table` - do NOT hand-edit -->",
    "<!-- END: compiled stage graph -->",
);
const SCOPE_TABLE: (&str, &str, &str) = (
    "scope-table",
    "<!-- BEGIN: compiled scope grid via `bun aidlc-utility.ts scope-table` - do NOT hand-edit -->",
    "<!-- END: compiled scope grid -->",
);

/// What this install's conductor generates, and the Bun to run it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConductorRefresh {
    pub bun: Utf8PathBuf,
    harness_root: Utf8PathBuf,
    /// `<harness>/skills`, when the runner generator is there.
    pub skills_dir: Option<Utf8PathBuf>,
    /// The orchestrator's SKILL.md, when it is there with the utility.
    pub skill_file: Option<Utf8PathBuf>,
}

impl ConductorRefresh {
    /// The folders and files a refresh may rewrite (for the journal).
    pub fn written_paths(&self) -> (Vec<Utf8PathBuf>, Vec<Utf8PathBuf>) {
        let trees = self.skills_dir.iter().cloned().collect();
        let files = self
            .skill_file
            .iter()
            .filter(|file| {
                self.skills_dir
                    .as_ref()
                    .is_none_or(|skills| !file.starts_with(skills))
            })
            .cloned()
            .collect();
        (trees, files)
    }
}

/// Bun: `bun` on `PATH`, else `~/.bun/bin/bun` (where its installer puts it), as the
/// reference's `SessionStart` command looks for it.
pub fn find_bun() -> Option<Utf8PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|folder| folder.join("bun"))
            .find(|candidate| candidate.is_file())
    });
    let home = || {
        std::env::var_os("HOME")
            .map(|home| std::path::PathBuf::from(home).join(".bun/bin/bun"))
            .filter(|candidate| candidate.is_file())
    };
    on_path
        .or_else(home)
        .and_then(|path| Utf8PathBuf::from_path_buf(path).ok())
}

/// What to refresh on this install, `None` when its conductor generates nothing, or a refusal
/// when it does and Bun cannot be found.
pub fn conductor_refresh(layout: &Layout) -> Result<Option<ConductorRefresh>, Problem> {
    let harness_root = layout.project_dir.join(layout.harness.dir_name());
    let skills = harness_root.join("skills");
    let skills_dir =
        (harness_root.join(RUNNER_GENERATOR).is_file() && skills.is_dir()).then(|| skills.clone());
    let skill_file = [
        skills.join("aidlc/SKILL.md"),
        layout.project_dir.join(".agents/skills/aidlc/SKILL.md"),
    ]
    .into_iter()
    .find(|path| path.is_file())
    .filter(|_| harness_root.join(UTILITY).is_file());
    if skills_dir.is_none() && skill_file.is_none() {
        return Ok(None);
    }
    let Some(bun) = find_bun() else {
        return Err(Problem::new(format!(
            "this install's conductor regenerates its runner skills and skill tables with {} and {}, which run on Bun, and Bun was not found (on PATH or in ~/.bun/bin)",
            layout.display(&harness_root.join(RUNNER_GENERATOR)),
            layout.display(&harness_root.join(UTILITY)),
        ))
        .with_help("install Bun (the install's own tools need it), or put it on PATH"));
    };
    Ok(Some(ConductorRefresh {
        bun,
        harness_root,
        skills_dir,
        skill_file,
    }))
}

fn run_tool(
    refresh: &ConductorRefresh,
    layout: &Layout,
    tool: &str,
    args: &[&str],
) -> Result<Vec<u8>, Problem> {
    let mut command = WorkerCommand::new(refresh.bun.as_std_path(), &layout.project_dir);
    command.args = std::iter::once(refresh.harness_root.join(tool).to_string())
        .chain(args.iter().map(|arg| (*arg).to_owned()))
        .collect();
    command.env = [
        ("AIDLC_PROJECT_DIR", layout.project_dir.to_string()),
        ("AIDLC_HARNESS_DIR", layout.harness.dir_name().to_owned()),
        ("AIDLC_STAGE_GRAPH", layout.stage_graph_path.to_string()),
        ("AIDLC_SCOPE_GRID", layout.scope_grid_path.to_string()),
        ("AIDLC_STAGES_DIR", layout.stages_dir.to_string()),
        ("AIDLC_SENSORS_DIR", layout.sensors_dir.to_string()),
        ("AIDLC_SCOPES_DIR", layout.scopes_dir.to_string()),
        ("AIDLC_AGENTS_DIR", layout.agents_dir.to_string()),
        ("AIDLC_RULES_DIR", layout.rules_dir.to_string()),
        // This process holds the workspace lock for the whole transaction.
        (
            "AIDLC_WORKSPACE_LOCK_OWNER_PID",
            std::process::id().to_string(),
        ),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    command.timeout = GENERATOR_TIMEOUT;
    let run = run_worker(&command);
    let shown = format!(
        "bun {} {}",
        layout.display(&refresh.harness_root.join(tool)),
        args.join(" ")
    );
    if let Some(error) = &run.spawn_error {
        return Err(Problem::new(format!("cannot run {shown} ({error})")));
    }
    if run.timed_out || run.exit_code != Some(0) {
        let why = if run.timed_out {
            format!("did not finish within {} s", GENERATOR_TIMEOUT.as_secs())
        } else {
            format!("failed: {}", run.stderr_tail.trim())
        };
        return Err(Problem::new(format!("{shown} {why}")));
    }
    Ok(run.stdout)
}

/// Run the generators: the runners, then the two tables of SKILL.md.
pub fn refresh(refresh: &ConductorRefresh, layout: &Layout) -> Result<(), Problem> {
    if refresh.skills_dir.is_some() {
        run_tool(refresh, layout, RUNNER_GENERATOR, &["write"])?;
        run_tool(refresh, layout, RUNNER_GENERATOR, &["scopes"])?;
    }
    if let Some(skill_file) = &refresh.skill_file {
        for (verb, begin, end) in [STAGE_TABLE, SCOPE_TABLE] {
            refresh_table(refresh, layout, skill_file, verb, begin, end)?;
        }
    }
    Ok(())
}

/// Replace the region between `begin` and `end` in `skill_file` with the utility's output for
/// `verb` (the file is read with `\r\n` as `\n`, as the reference does).
fn refresh_table(
    refresh: &ConductorRefresh,
    layout: &Layout,
    skill_file: &Utf8Path,
    verb: &str,
    begin: &str,
    end: &str,
) -> Result<(), Problem> {
    let before = crate::leaves::fs_util::read_input_text(skill_file)
        .map_err(|error| {
            Problem::new(format!("cannot read the file: {error}"))
                .at_path(layout.display(skill_file))
        })?
        .replace("\r\n", "\n");
    let Some(begin_at) = before.find(begin) else {
        return Ok(());
    };
    let Some(end_at) = before[begin_at..].find(end).map(|at| begin_at + at) else {
        return Err(Problem::new(format!(
            "the {verb} region has no END marker after its BEGIN marker"
        ))
        .at_path(layout.display(skill_file)));
    };
    let output = run_tool(refresh, layout, UTILITY, &[verb])?;
    let region = String::from_utf8_lossy(&output).replace("\r\n", "\n");
    let region = region.strip_suffix('\n').unwrap_or(&region);
    if !region.contains(begin) || !region.contains(end) {
        return Err(Problem::new(format!(
            "aidlc-utility {verb} printed no generated region"
        )));
    }
    let after = format!(
        "{}{region}{}",
        &before[..begin_at],
        &before[end_at + end.len()..]
    );
    if after != before {
        let contained =
            ProjectPath::of_absolute(&layout.project_dir, skill_file).map_err(|refusal| {
                Problem::new(format!("refusing to write the file: {refusal}"))
                    .at_path(layout.display(skill_file))
            })?;
        contained::write_file(&contained, after.as_bytes(), Flush::Yes).map_err(|error| {
            Problem::new(format!("cannot write the file: {error}"))
                .at_path(layout.display(skill_file))
        })?;
    }
    Ok(())
}
