//! The compile half: the user's Markdown and YAML in, the stage graph out. Data flows down the
//! list: files are found and read, parsed, resolved and numbered into the graph, which is written
//! or compared; the runtime half reads only what this half writes (the contract is
//! [`crate::protocol`]).
//!
//! - [`discover`]: find the project and harness, list and read the input files;
//! - [`db`]: the salsa database and its inputs (file texts enter here, nowhere else);
//! - [`syntax`]: pure text → tree → typed definitions (frontmatter, YAML, manifests, stages);
//! - [`parse`]: tracked queries that parse each file and the small catalogues;
//! - [`resolve`]: the sensor registry, `sensors_applicable`, the agent roster check;
//! - [`stage_graph`]: numbering, cross-stage checks, and the canonical JSON emission;
//! - [`framework`]: the built-in default framework written by `aidlc init`;
//! - [`up_to_date`]: the record that lets an unchanged project skip the compile entirely;
//! - [`watch`]: `compile --watch`, a warm database fed by file events;
//! - this module's root: one compile end to end: every diagnostic in a stable order, both
//!   output files, written (atomically, under the audit lock) or compared (`--check`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

pub mod db;
pub mod discover;
pub mod framework;
pub mod parse;
pub mod resolve;
pub mod stage_graph;
pub mod syntax;
pub mod up_to_date;
pub mod watch;

mod helper_thread;

use crate::compile::db::{CompilerDatabase, FileContents, Project, SourceFile};
use crate::compile::discover::{Layout, MAX_GENERATED_BYTES};
use crate::compile::parse::{agent_roster, parsed_manifest, parsed_stage, rule_set, scope_catalog};
use crate::compile::resolve::{sensor_registry, sensors_applicable, stage_agent_diagnostics};
use crate::compile::stage_graph::checks::{graph_diagnostics, stage_check_facts_in_chunk};
use crate::compile::stage_graph::dead_bindings::dead_gate_bindings;
use crate::compile::stage_graph::emit::{
    format_registry_diagnostics, stage_graph_json, stage_graph_text_once, stage_node_body,
};
use crate::compile::stage_graph::format_choice::graph_format;
use crate::compile::stage_graph::numbering::{
    pinned_rows, stage_headers_in_chunk, stage_numbering,
};
use crate::compile::stage_graph::plugin_selection::selection_diagnostics;
use crate::compile::stage_graph::scope_grid::{
    normalised_grid_text, scope_grid_json, stage_scope_rows_in_chunk,
};
use crate::compile::stage_graph::stage_chunks::{StageChunk, stage_chunks};
use crate::leaves::changes::Changes;
use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::fs_util;
use crate::leaves::js_json::pretty_json;
use crate::protocol::graph_format::{FormatSource, GraphFormat};

/// Everything one compile produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileOutcome {
    pub diagnostics: Vec<Diagnostic>,
    /// `Arc<String>` rather than `Arc<str>`: a text written into a `String` is shared (with the
    /// database's mirror of what watch mode wrote, too) without copying its megabytes.
    pub stage_graph: Arc<String>,
    pub scope_grid: Arc<String>,
    pub n_stages: usize,
    pub n_sensors: usize,
    /// The format the graph is written in, and why (D13).
    pub graph_format: (GraphFormat, FormatSource),
}

impl CompileOutcome {
    pub fn n_errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn n_warnings(&self) -> usize {
        self.diagnostics.len() - self.n_errors()
    }
}

/// Every diagnostic of the project, in a stable order: sensors, agents, scopes, rules, then
/// each stage file in discovery order (its parse, agents, imports and gate bindings), then the
/// cross-stage checks, then the plugin selection's (docs/decisions.md D14). Exact duplicates are
/// dropped.
pub fn project_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let project = Project::get(db);
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    diagnostics.extend(sensor_registry(db).diagnostics.iter().cloned());
    diagnostics.extend(format_registry_diagnostics(db).iter().cloned());
    diagnostics.extend(agent_roster(db).diagnostics.iter().cloned());
    diagnostics.extend(scope_catalog(db).diagnostics.iter().cloned());
    diagnostics.extend(rule_set(db).diagnostics.iter().cloned());
    for entry in project.stage_files(db) {
        diagnostics.extend(stage_file_diagnostics(db, entry.file).iter().cloned());
    }
    diagnostics.extend(stage_numbering(db).diagnostics.iter().cloned());
    diagnostics.extend(graph_diagnostics(db).iter().cloned());
    diagnostics.extend(selection_diagnostics(db).iter().cloned());
    let mut seen = BTreeSet::new();
    diagnostics.retain(|diagnostic| seen.insert(format!("{diagnostic:?}")));
    diagnostics
}

/// One stage file's own diagnostics, in order: its parse, its agents, its imports and its gate
/// bindings. One memo per file, so that a rebuild of a large project checks one memo for each
/// untouched stage rather than four.
#[salsa::tracked(returns(ref))]
pub fn stage_file_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    diagnostics.extend(parsed_stage(db, file).diagnostics.iter().cloned());
    diagnostics.extend(stage_agent_diagnostics(db, file).iter().cloned());
    diagnostics.extend(sensors_applicable(db, file).diagnostics.iter().cloned());
    diagnostics.extend(dead_gate_bindings(db, file).iter().cloned());
    diagnostics
}

/// Run the per-file queries of a cold compile on every core (rayon, one database handle per
/// worker), so that the sequential walk of [`compile`] finds them memoised. The outputs are the
/// same bytes either way; only the wall-clock time changes. Worth it only for a cold database
/// of a large project (see [`discover::worth_parallel`]): in a warm one, [`compile`] re-validates memos
/// faster than threads can be handed work.
pub fn compute_in_parallel(db: &CompilerDatabase) {
    precompute(db, NodeMemos::Keep);
}

/// Whether [`precompute`] also memoises each stage's node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeMemos {
    /// For a database that lives on (watch mode, the language server): the next rebuild
    /// re-emits only the nodes whose stage changed.
    Keep,
    /// For [`compile_once`], which writes the nodes straight into the graph's buffer.
    Skip,
}

fn precompute(db: &CompilerDatabase, node_memos: NodeMemos) {
    use rayon::prelude::*;
    let project = Project::get(db);
    let manifests: Vec<SourceFile> = project.sensor_files(db).clone();
    let stages: Vec<SourceFile> = project
        .stage_files(db)
        .iter()
        .map(|entry| entry.file)
        .collect();
    if !discover::worth_parallel(manifests.len() + stages.len()) {
        return;
    }
    manifests.par_iter().for_each_with(db.clone(), |db, &file| {
        parsed_manifest(db, file);
    });
    // The existing graph's pinned numbers depend on no stage: read them beside the parsing.
    let (stages_db, pinned_db) = (db.clone(), db.clone());
    let stages_to_parse = &stages;
    rayon::join(
        move || {
            stages_to_parse
                .par_iter()
                .for_each_with(stages_db, |db, &file| {
                    parsed_stage(db, file);
                });
        },
        move || {
            pinned_rows(&pinned_db);
        },
    );
    let chunks: Vec<StageChunk<'_>> = stage_chunks(db).collect();
    chunks.par_iter().for_each_with(db.clone(), |db, &chunk| {
        stage_headers_in_chunk(db, chunk);
    });
    sensor_registry(db);
    stage_numbering(db);
    chunks.par_iter().for_each_with(db.clone(), |db, &chunk| {
        stage_check_facts_in_chunk(db, chunk);
        stage_scope_rows_in_chunk(db, chunk);
    });
    stages.par_iter().for_each_with(db.clone(), |db, &file| {
        stage_file_diagnostics(db, file);
        if node_memos == NodeMemos::Keep {
            stage_node_body(db, file);
        }
    });
}

pub fn compile(db: &dyn salsa::Database) -> CompileOutcome {
    let diagnostics = project_diagnostics(db);
    let stage_graph = Arc::clone(stage_graph_json(db));
    compile_outcome(
        db,
        (diagnostics, Arc::clone(scope_grid_json(db))),
        stage_graph,
    )
}

/// [`compile`] of a database that lives on (watch mode), for a large project with its two
/// independent halves brought up to date on two threads first: the graph (the numbering, then
/// every stage's node) and the diagnostics with the grid. After an edit most of that work is
/// salsa confirming memos, which it does for different memos on different threads at once;
/// the sequential [`compile`] then finds every memo it reads confirmed. The same outcome, byte
/// for byte, as [`compile`] alone.
pub fn compile_warm(db: &CompilerDatabase) -> CompileOutcome {
    if discover::worth_parallel(Project::get(db).stage_files(db).len()) {
        let (graph_db, rest_db) = (db.clone(), db.clone());
        rayon::join(
            move || {
                stage_graph_json(&graph_db);
            },
            move || {
                project_diagnostics(&rest_db);
                scope_grid_json(&rest_db);
            },
        );
    }
    compile(db)
}

/// The compile of a database that is dropped right after (`aidlc compile`): the same outcome as
/// [`compute_in_parallel`] then [`compile`], byte for byte, but the graph is written node by
/// node with no memo per node (half the memory of a large graph). For a large project the
/// graph is written while the diagnostics are walked and the grid is built: neither reads the
/// other, and both walks are sequential. A project worth one helper thread is compiled by
/// [`load_and_compile_once`], whose helper also reads half the files.
pub fn compile_once(db: &CompilerDatabase) -> CompileOutcome {
    let n_stage_files = Project::get(db).stage_files(db).len();
    precompute(db, NodeMemos::Skip);
    let (walked, stage_graph) = if discover::worth_parallel(n_stage_files) {
        let (walk_db, graph_db) = (db.clone(), db.clone());
        rayon::join(
            move || {
                (
                    project_diagnostics(&walk_db),
                    Arc::clone(scope_grid_json(&walk_db)),
                )
            },
            move || stage_graph_text_once(&graph_db),
        )
    } else {
        (
            (project_diagnostics(db), Arc::clone(scope_grid_json(db))),
            stage_graph_text_once(db),
        )
    };
    compile_outcome(db, walked, Arc::new(stage_graph))
}

fn compile_outcome(
    db: &dyn salsa::Database,
    (diagnostics, scope_grid): (Vec<Diagnostic>, Arc<String>),
    stage_graph: Arc<String>,
) -> CompileOutcome {
    CompileOutcome {
        diagnostics,
        stage_graph,
        scope_grid,
        n_stages: stage_numbering(db).order.len(),
        n_sensors: sensor_registry(db).by_id.len(),
        graph_format: *graph_format(db),
    }
}

/// `aidlc compile`'s read and compile: the inputs and the outcome of [`discover::load_project`]
/// then [`compile_once`], for a project worth it on this thread and one helper started before
/// the reads (`compile/helper_thread.rs`).
pub fn load_and_compile_once(
    db: &mut CompilerDatabase,
    layout: &Layout,
) -> (discover::ProjectInputs, CompileOutcome) {
    let listing = discover::InputListing::of(layout);
    if helper_thread::worth_two_threads(listing.stages.len(), listing.sensors.len()) {
        return helper_thread::load_and_compile_on_two_threads(db, layout, listing);
    }
    let inputs = discover::load_listing(db, layout, listing);
    (inputs, compile_once(db))
}

pub enum OneShot {
    /// Nothing the compile reads changed since the recorded compile: the record's counts and
    /// warnings.
    UpToDate(up_to_date::UpToDate),
    /// It compiled (and, unless the compile failed or `--check` asked for no write, wrote).
    Compiled(Box<CompiledOnce>),
}

pub struct CompiledOnce {
    /// The database the compile ran in, for the diagnostics' source texts. Never dropped: the
    /// process ends right after the command, and freeing every memoised parse and loaded file
    /// one by one would take longer than emitting the graph did.
    pub db: std::mem::ManuallyDrop<CompilerDatabase>,
    pub outcome: CompileOutcome,
    /// From the start to the end of the compile, before any write.
    pub duration: std::time::Duration,
    /// The write of the outputs; `None` when nothing was to be written (the compile failed, or
    /// `--check`).
    pub written: Option<Result<WriteSummary, OutputError>>,
    /// Why the fingerprint record was not written after a write (it only costs the next
    /// compile the work).
    pub record_error: Option<std::io::Error>,
}

/// `aidlc compile` without `--watch`: unless `force`, the recorded compile's answer when
/// nothing it read changed; else the compile and, when it has no error and `check` is off,
/// the write of the outputs and the record of this compile (the invariant at
/// [`write_outputs`]). `check` writes nothing, not even a refreshed record or a lock folder.
pub fn compile_one_shot(layout: &Layout, force: bool, check: bool) -> OneShot {
    let started = std::time::Instant::now();
    let mode = if check {
        up_to_date::CheckMode::ReadOnly
    } else {
        up_to_date::CheckMode::RefreshStamps
    };
    if !force && let Ok(up_to_date) = up_to_date::check(layout, mode) {
        return OneShot::UpToDate(up_to_date);
    }
    let mut db = CompilerDatabase::default();
    let (inputs, outcome) = load_and_compile_once(&mut db, layout);
    // Left to the OS with the database (see `CompiledOnce::db`).
    let inputs = std::mem::ManuallyDrop::new(inputs);
    let duration = started.elapsed();
    let mut compiled = CompiledOnce {
        db: std::mem::ManuallyDrop::new(db),
        outcome,
        duration,
        written: None,
        record_error: None,
    };
    if compiled.outcome.n_errors() == 0 && !check {
        let written = write_outputs(layout, &compiled.outcome);
        if written.is_ok() {
            compiled.record_error = up_to_date::record(layout, &compiled.outcome, &inputs).err();
        }
        compiled.written = Some(written);
    }
    OneShot::Compiled(Box::new(compiled))
}

/// The paths a set of diagnostics points into (primary and related files).
pub fn files_named_by(diagnostics: &[Diagnostic]) -> BTreeSet<&Utf8Path> {
    diagnostics
        .iter()
        .flat_map(|diagnostic| {
            diagnostic.file.as_deref().into_iter().chain(
                diagnostic
                    .related
                    .iter()
                    .map(|related| related.file.as_path()),
            )
        })
        .collect()
}

/// The texts of the input files `diagnostics` point into, by display path, for snippets.
/// Only those files are copied, so a rebuild of a large project does not clone every text.
pub fn source_texts(
    db: &dyn salsa::Database,
    diagnostics: &[Diagnostic],
) -> BTreeMap<Utf8PathBuf, String> {
    let wanted = files_named_by(diagnostics);
    if wanted.is_empty() {
        return BTreeMap::new();
    }
    let project = Project::get(db);
    let mut files: Vec<SourceFile> = Vec::new();
    files.extend(project.sensor_files(db));
    files.extend(project.stage_files(db).iter().map(|entry| entry.file));
    files.extend(project.agent_files(db));
    files.extend(project.scope_files(db));
    files.extend(project.rule_files(db).iter().map(|entry| entry.file));
    files.extend(project.existing_graph(db));
    files.extend(project.existing_grid(db));
    files.extend(project.harness_json(db));
    files
        .into_iter()
        .filter(|file| wanted.contains(file.path(db).as_path()))
        .filter_map(|file| match file.contents(db) {
            FileContents::Text(text) => Some((file.path(db).clone(), String::clone(text))),
            _ => None,
        })
        .collect()
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(transparent)]
    File(#[from] crate::leaves::fs_util::contained::FileError),
    #[error(transparent)]
    Lock(#[from] crate::leaves::audit_lock::LockError),
}

/// Write `bytes` at `path` (an output the layout names) through the file-system layer.
fn write_output(project_dir: &Utf8Path, path: &Utf8Path, bytes: &[u8]) -> Result<(), OutputError> {
    use crate::leaves::fs_util::contained::{self, FileError, ProjectPath};
    let contained = ProjectPath::of_absolute(project_dir, path)
        .map_err(|refusal| FileError::outside(path, refusal))?;
    contained::write_file(&contained, bytes, crate::leaves::fs_util::Flush::Yes)
        .map_err(|error| FileError::of_write(path, error))?;
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteSummary {
    pub graph_written: bool,
    pub grid_written: bool,
}

/// Write both files, each only if its bytes differ, atomically and under the audit lock. Each
/// file is compared once, before the lock: when both already hold their bytes nothing is
/// written and the lock is not taken (its folder's creation and removal were a visible part of
/// a compile that writes nothing). A writer that replaces a file after this look is no
/// different from one that replaces it after a write of ours.
///
/// Invariant: this is the one write of the outputs; its three callers differ only in the
/// compile's fingerprint record (`up_to_date::record`), each for a reason:
/// - `aidlc compile` records after the write, so the next compile of the same inputs does
///   nothing (a record that cannot be written is a warning: it only costs a real compile);
/// - a watch session (`watch::WatchSession`) records once, when it stops: the record of many
///   files costs more than a rebuild. It also skips this call when the compile handed back
///   the very texts it last wrote and no event touched the outputs;
/// - a plugin composition (`plugin::operations`) never records: a record left by an earlier
///   compile no longer matches the inputs (so the next compile does the work), and removing
///   every plugin gives back the install's files exactly, with no record of ours added.
pub fn write_outputs(
    layout: &Layout,
    outcome: &CompileOutcome,
) -> Result<WriteSummary, OutputError> {
    let outputs = [
        (&layout.stage_graph_path, outcome.stage_graph.as_bytes()),
        (&layout.scope_grid_path, outcome.scope_grid.as_bytes()),
    ];
    let differ = outputs.map(|(path, bytes)| !file_holds(path, bytes));
    let summary = WriteSummary {
        graph_written: differ[0],
        grid_written: differ[1],
    };
    if !differ.contains(&true) {
        return Ok(summary);
    }
    let _lock = crate::leaves::audit_lock::acquire_tidying(&layout.project_dir)?;
    for ((path, bytes), _) in outputs.iter().zip(differ).filter(|(_, differs)| *differs) {
        write_output(&layout.project_dir, path, bytes)?;
    }
    Ok(summary)
}

/// Whether the file at `path` holds exactly `bytes`; its size is compared before any byte is
/// read, so a changed graph of many megabytes is not read back just to learn it differs. The
/// bytes are compared a block at a time: reading a large graph back whole would be the biggest
/// allocation of the compile after the graph itself. Any error reading it means "differs".
fn file_holds(path: &Utf8Path, bytes: &[u8]) -> bool {
    use std::io::Read;
    let Ok((_, mut file)) = fs_util::open_regular_file(path) else {
        return false;
    };
    if !file
        .metadata()
        .is_ok_and(|metadata| metadata.len() == bytes.len() as u64)
    {
        return false;
    }
    let mut block = vec![0_u8; 64 * 1024];
    for expected in bytes.chunks(block.len()) {
        let read = &mut block[..expected.len()];
        if file.read_exact(read).is_err() || read != expected {
            return false;
        }
    }
    // Nothing may follow: a file that grew since its size was read holds other bytes.
    matches!(
        file.read_exact(&mut [0_u8]),
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof
    )
}

/// An output file `compile --check` found out of date, and why: one per stage whose node would
/// change (on its stage file), per removed stage, and for the scope grid (on the output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Project-relative: the stage file, or the output file.
    pub file: Utf8PathBuf,
    /// The output that would change (`stage-graph.json`, `scope-grid.json`).
    pub output: String,
    /// The stage, when one is concerned.
    pub stage: Option<String>,
    /// `changed`, `added`, `removed`, or `framing`/`grid` for the whole file.
    pub change: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriftReport {
    /// `Some` when `stage-graph.json` would change: the slugs whose nodes differ, were added or
    /// were removed (empty when only the framing differs).
    pub graph: Option<Changes<String>>,
    pub grid: bool,
}

impl DriftReport {
    pub fn is_clean(&self) -> bool {
        self.graph.is_none() && !self.grid
    }
}

/// Compare the compiled bytes with the files on disk, writing nothing.
pub fn check_outputs(layout: &Layout, outcome: &CompileOutcome) -> DriftReport {
    let on_disk_graph = fs_util::read_bounded_text(&layout.stage_graph_path, MAX_GENERATED_BYTES)
        .unwrap_or_default();
    let graph = (on_disk_graph != *outcome.stage_graph)
        .then(|| stage_changes(&on_disk_graph, &outcome.stage_graph));
    let on_disk_grid = fs_util::read_bounded_text(&layout.scope_grid_path, MAX_GENERATED_BYTES)
        .unwrap_or_default();
    let grid = normalised_grid_text(&on_disk_grid) != *outcome.scope_grid;
    DriftReport { graph, grid }
}

/// Each out-of-date piece of the outputs, on the file to look at: a changed or added stage on
/// its stage file, a removed stage or a framing change on the graph, the grid on itself.
pub fn drift_items(layout: &Layout, drift: &DriftReport) -> Vec<Drift> {
    let graph = layout.display(&layout.stage_graph_path);
    let graph_name = graph.file_name().unwrap_or("stage-graph.json").to_owned();
    let stage_files = discover::InputListing::of(layout).stages;
    let stage_file = |slug: &str| {
        stage_files
            .iter()
            .map(|(_, path)| path)
            .find(|path| path.file_stem() == Some(slug))
            .map_or_else(|| graph.clone(), |path| layout.display(path))
    };
    let graph_drift = |file, stage, change, message| Drift {
        file,
        output: graph_name.clone(),
        stage,
        change,
        message,
    };
    let mut items = Vec::new();
    if let Some(changes) = &drift.graph {
        for (change, slugs) in [
            ("changed", &changes.modified),
            ("added", &changes.added),
            ("removed", &changes.removed),
        ] {
            for slug in slugs {
                let file = if change == "removed" {
                    graph.clone()
                } else {
                    stage_file(slug)
                };
                let message = format!(
                    "stage {slug} is {change} in the sources, and {graph_name} is out of date"
                );
                items.push(graph_drift(file, Some(slug.clone()), change, message));
            }
        }
        if changes.is_empty() {
            let message = format!("{graph_name} is out of date");
            items.push(graph_drift(graph.clone(), None, "framing", message));
        }
    }
    if drift.grid {
        let grid = layout.display(&layout.scope_grid_path);
        items.push(Drift {
            output: grid.file_name().unwrap_or("scope-grid.json").to_owned(),
            message: format!("{grid} is out of date"),
            file: grid,
            stage: None,
            change: "grid",
        });
    }
    items
}

fn nodes_by_slug(text: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Array(nodes)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return Vec::new();
    };
    nodes
        .iter()
        .filter_map(|node| Some((node.get("slug")?.as_str()?.to_owned(), pretty_json(node))))
        .collect()
}

fn stage_changes(old: &str, new: &str) -> Changes<String> {
    let old_nodes: BTreeMap<String, String> = nodes_by_slug(old).into_iter().collect();
    let new_nodes = nodes_by_slug(new);
    let mut changes = Changes::default();
    for (slug, node) in &new_nodes {
        match old_nodes.get(slug) {
            None => changes.added.push(slug.clone()),
            Some(old_node) if old_node != node => changes.modified.push(slug.clone()),
            Some(_) => {}
        }
    }
    let new_slugs: BTreeSet<&String> = new_nodes.iter().map(|(slug, _)| slug).collect();
    changes.removed = old_nodes
        .keys()
        .filter(|slug| !new_slugs.contains(slug))
        .cloned()
        .collect();
    changes
}

#[cfg(test)]
mod tests {
    use super::file_holds;
    use camino::Utf8PathBuf;

    #[test]
    fn file_holds_compares_every_block_of_a_large_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().join("graph.json")).unwrap();
        let bytes: Vec<u8> = (0..200_000_u32)
            .map(|index| u8::try_from(index % 251).unwrap())
            .collect();
        assert!(!file_holds(&path, &bytes), "a missing file holds nothing");
        std::fs::write(&path, &bytes).unwrap();
        assert!(file_holds(&path, &bytes));
        for at in [0, 65_535, 65_536, 131_072, bytes.len() - 1] {
            let mut other = bytes.clone();
            other[at] ^= 1;
            assert!(!file_holds(&path, &other), "a byte differs at {at}");
        }
        assert!(!file_holds(&path, &bytes[..bytes.len() - 1]));
        assert!(!file_holds(&path, b""));
    }
}
