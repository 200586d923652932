//! `aidlc doctor`: what a user of the engine needs to know is broken, as rows of
//! pass / warn / fail, each with a label and, when it is not a pass, the fix. The reference's
//! sensor rows (D46: paired sensor coverage, hook heartbeats and drops, the graph) plus
//! the engine's own: the compile as `compile --check` sees it (errors, drift, dead bindings,
//! files discovery skips), pairings that name no manifest, the hooks registered with the
//! harness, the Node tools the code sensors would run, and the ledger's health (a torn shard,
//! a stale audit lock, stale temporary files).
//!
//! Invariant: the doctor writes nothing and takes no lock (it reads the lock's state), so it
//! runs on a read-only checkout and beside a running hook. The reference's doctor records a
//! `GUARDRAIL_LOADED` row in the audit when it runs; that row stays the reference doctor's
//! (`/aidlc --doctor`), which still runs on its installs.
//!
//! Must not: print (rows are values, rendered in `cli`), or write anything.

mod compile_rows;
mod hook_rows;
mod ledger_rows;
mod plugin_rows;
mod tool_rows;

use serde::Serialize;

use crate::compile::db::CompilerDatabase;
use crate::compile::discover;
use crate::runtime::workspace::Workspace;

/// A regular file (after links) with an execute bit: the test the code sensors find tools by.
pub(crate) use crate::runtime::sensors::node_tool::is_executable_file;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    /// Works, but something needs a look (advisory).
    Warn,
    /// Broken: `aidlc doctor` exits 1.
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub status: Status,
    pub label: String,
    /// What to do; always present on a warn or fail row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Row {
    pub fn pass(label: impl Into<String>) -> Self {
        Self {
            status: Status::Pass,
            label: label.into(),
            fix: None,
        }
    }

    pub fn warn(label: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            status: Status::Warn,
            label: label.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn fail(label: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            status: Status::Fail,
            label: label.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Every row, in a fixed order: the compile, the plugins, the hooks, the tools, the ledger.
pub fn run_doctor(workspace: &Workspace) -> Vec<Row> {
    // One compiler database for the compile's rows and the plugins' (the project is read once).
    let mut db = CompilerDatabase::default();
    let _inputs = discover::load_project(&mut db, &workspace.layout);
    let mut rows = compile_rows::rows(&db, &workspace.layout);
    rows.extend(plugin_rows::rows(&db, &workspace.layout));
    rows.extend(hook_rows::rows(workspace));
    rows.extend(tool_rows::rows(workspace.project_dir()));
    rows.extend(ledger_rows::rows(workspace));
    rows
}

/// Whether any row failed (the exit status is 1 then).
pub fn any_failed(rows: &[Row]) -> bool {
    rows.iter().any(|row| row.status == Status::Fail)
}

pub fn count(rows: &[Row], status: Status) -> usize {
    rows.iter().filter(|row| row.status == status).count()
}

/// The document `aidlc doctor --format json` prints: the rows in order, and their counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report<'r> {
    /// 1; a change that removes or renames a key bumps it.
    pub schema_version: u32,
    pub rows: &'r [Row],
    pub passed: usize,
    pub warnings: usize,
    pub failed: usize,
}

impl<'r> Report<'r> {
    pub fn of(rows: &'r [Row]) -> Self {
        Self {
            schema_version: 1,
            rows,
            passed: count(rows, Status::Pass),
            warnings: count(rows, Status::Warn),
            failed: count(rows, Status::Fail),
        }
    }
}

/// Where `program` (a bare name) is on `PATH`, when it is an executable file there.
pub(crate) fn on_search_path(program: &str) -> Option<camino::Utf8PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter_map(|folder| camino::Utf8PathBuf::from_path_buf(folder).ok())
        .map(|folder| folder.join(program))
        .find(|candidate| is_executable_file(candidate))
}
