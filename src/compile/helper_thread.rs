//! `aidlc compile` of a project too small for rayon's pool but worth one helper thread (see
//! [`discover::worth_a_helper_thread`]): this thread and one scoped helper share the work.
//!
//! The helper is started before the inputs are read, so that the time a new thread takes to
//! be scheduled on the other core passes while this thread reads. It reads the second half of
//! the listed files; this thread reads the first half, creates the salsa inputs from both and
//! hands the helper a database handle. From there the helper reads the existing graph's pinned
//! numbers, checks the second half of the stage files and writes the graph, while this thread
//! parses the manifests (every stage's checks read them), checks the first half, then walks
//! the diagnostics and builds the grid. There is no barrier between those phases: a query one
//! thread needs while the other computes it is waited for, one not started is computed by the
//! thread that asks first.
//!
//! Invariants: the helper holds no database handle while this thread changes the inputs
//! (salsa waits for every other handle before a change), and the outcome is the one
//! [`compile`](super::compile) gives on one thread, byte for byte.

use std::sync::Arc;
use std::sync::mpsc;

use camino::Utf8PathBuf;

use super::{CompileOutcome, compile_outcome, project_diagnostics, stage_file_diagnostics};
use crate::compile::db::{CompilerDatabase, Project, SourceFile};
use crate::compile::discover::{self, InputListing, Layout, ProjectInputs, ReadFile};
use crate::compile::parse::parsed_manifest;
use crate::compile::stage_graph::emit::stage_graph_text_once;
use crate::compile::stage_graph::numbering::pinned_rows;
use crate::compile::stage_graph::scope_grid::scope_grid_json;
use crate::leaves::diagnostics::Diagnostic;

/// Whether a project of these listed files is compiled on this thread and one helper: too
/// small for rayon's pool, large enough for a helper (and a second core to run it).
pub fn worth_two_threads(n_stage_files: usize, n_sensor_files: usize) -> bool {
    !discover::worth_parallel(n_stage_files + n_sensor_files)
        && discover::worth_a_helper_thread(n_stage_files)
}

/// Read the project's inputs and compile them once, on this thread and one helper (see the
/// module comment); the inputs and the outcome of `load_project` then `compile_once`.
pub fn load_and_compile_on_two_threads(
    db: &mut CompilerDatabase,
    layout: &Layout,
    listing: InputListing,
) -> (ProjectInputs, CompileOutcome) {
    let n_first_half = listing.read_paths().count() / 2;
    let second_half: Vec<Utf8PathBuf> = listing
        .read_paths()
        .skip(n_first_half)
        .map(ToOwned::to_owned)
        .collect();
    std::thread::scope(|scope| {
        // This thread's channel ends live in this closure, so a panic here drops them and the
        // helper, waiting on one, stops instead of holding the scope open for ever.
        let (reads_sender, reads_receiver) = mpsc::sync_channel::<Vec<ReadFile>>(1);
        let (db_sender, db_receiver) = mpsc::sync_channel::<CompilerDatabase>(1);
        let helper = scope.spawn(move || {
            // A send or a receive fails only when this thread's end is gone (it panicked).
            if reads_sender
                .send(discover::read_files(layout, &second_half))
                .is_err()
            {
                return None;
            }
            let db = db_receiver.recv().ok()?;
            Some(helper_part(&db))
        });
        let first_half: Vec<&camino::Utf8Path> = listing.read_paths().take(n_first_half).collect();
        let mut read = discover::read_files(layout, &first_half);
        drop(first_half);
        let Ok(second_reads) = reads_receiver.recv() else {
            // The helper stopped before it sent its reads: it panicked.
            std::panic::resume_unwind(join_panic(helper));
        };
        read.extend(second_reads);
        let inputs = discover::load_read_files(db, layout, listing, read);
        let db: &CompilerDatabase = db;
        if db_sender.send(db.clone()).is_err() {
            std::panic::resume_unwind(join_panic(helper));
        }
        let walked = this_thread_part(db);
        let stage_graph = match helper.join() {
            Ok(Some(stage_graph)) => stage_graph,
            Ok(None) => unreachable!("the helper got its reads taken and its database"),
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (inputs, compile_outcome(db, walked, Arc::new(stage_graph)))
    })
}

/// The panic of a helper that stopped early (it ends only by panicking before its work).
fn join_panic<T>(helper: std::thread::ScopedJoinHandle<'_, T>) -> Box<dyn std::any::Any + Send> {
    match helper.join() {
        Err(panic) => panic,
        Ok(_) => Box::new("the compile's helper thread stopped before its work"),
    }
}

/// The stage files, split into the half this thread checks and the half the helper checks.
fn stage_halves(db: &CompilerDatabase) -> (Vec<SourceFile>, Vec<SourceFile>) {
    let mut first_half: Vec<SourceFile> = Project::get(db)
        .stage_files(db)
        .iter()
        .map(|entry| entry.file)
        .collect();
    let second_half = first_half.split_off(first_half.len() / 2);
    (first_half, second_half)
}

/// The helper's part: the pinned numbers, the second half of the stage files, the graph.
fn helper_part(db: &CompilerDatabase) -> String {
    pinned_rows(db);
    for file in stage_halves(db).1 {
        stage_file_diagnostics(db, file);
    }
    stage_graph_text_once(db)
}

/// This thread's part: the manifests, the first half of the stage files, then the
/// diagnostics walk and the grid.
fn this_thread_part(db: &CompilerDatabase) -> (Vec<Diagnostic>, Arc<String>) {
    for &file in Project::get(db).sensor_files(db) {
        parsed_manifest(db, file);
    }
    for file in stage_halves(db).0 {
        stage_file_diagnostics(db, file);
    }
    (project_diagnostics(db), Arc::clone(scope_grid_json(db)))
}
