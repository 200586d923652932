//! The per-stage facts that whole-project queries gather (numbering, the cross-stage checks,
//! the scope grid), memoised a chunk of stage files at a time.
//!
//! A chunk is [`stage_chunk_len`] consecutive entries of `Project::stage_files`; the memos of
//! the gathered facts compute each stage's fact from `parsed_stage` and read the `LOW`
//! durability marker (see `Project::low_durability_marker`). So:
//! - a whole-project query depends on one memo per chunk, not one per stage, and after an edit
//!   salsa confirms it by looking at each chunk memo (which looks at the `parsed_stage` memos
//!   of its own files, each trusted by a durability check while its file is untouched) rather
//!   than at ten thousand per-stage memos one dependency at a time;
//! - a file's first edit lowers that file's durability (see `discover::durability_for`), which
//!   re-runs its chunk's memos; those were `LOW` from the start, so a value that comes out
//!   equal is backdated and the gathering queries do not re-run.
//!
//! Invariant: with `len` the [`stage_chunk_len`] of the stage list's length, the facts of chunk
//! `k` are those of `stage_files[k * len..]` (at most `len` of them), one per entry, in order,
//! `None` for a file that does not parse to a stage definition.

use std::collections::HashMap;

use crate::compile::db::{Project, SourceFile, StageFileEntry};
use crate::compile::parse::parsed_stage;
use crate::compile::syntax::stage::StageDefinition;

/// The most stage files in one chunk: small enough that re-running a chunk after an edit is
/// cheap, large enough that a project of ten thousand stages has a few hundred chunk memos.
pub const MAX_STAGES_PER_CHUNK: usize = 64;

/// How many chunks a stage list is cut into while chunks are shorter than
/// [`MAX_STAGES_PER_CHUNK`].
const CHUNKS_PER_STAGE_LIST: usize = 8;

/// Stage files per chunk in a stage list of `stage_count`: an eighth of the list, at least one
/// and at most [`MAX_STAGES_PER_CHUNK`] (from 512 stages on). Each chunk costs its memos in a
/// cold compile, and an edit re-runs the facts of its chunk's stages: the default framework's
/// 33 stages make 9 chunks of 4 (one chunk of 33 cost its watch edits 0.5 M instructions, a
/// chunk per stage its cold compile as much).
pub fn stage_chunk_len(stage_count: usize) -> usize {
    (stage_count / CHUNKS_PER_STAGE_LIST).clamp(1, MAX_STAGES_PER_CHUNK)
}

fn chunk_len(db: &dyn salsa::Database) -> usize {
    stage_chunk_len(Project::get(db).stage_files(db).len())
}

/// One chunk of the stage list, by number. Never collected: a chunk's memos must outlive any
/// number of revisions in which the chunk was not read (a watch session may go quiet).
#[salsa::interned(revisions = usize::MAX)]
pub struct StageChunk<'db> {
    pub index: u32,
}

pub fn stage_chunks(db: &dyn salsa::Database) -> impl Iterator<Item = StageChunk<'_>> {
    let stage_count = Project::get(db).stage_files(db).len();
    (0..stage_count.div_ceil(stage_chunk_len(stage_count))).map(move |index| {
        StageChunk::new(
            db,
            u32::try_from(index).expect("fewer than 2^32 chunks of stage files"),
        )
    })
}

/// The stage-list entries chunk `chunk` covers.
pub fn chunk_entries<'db>(
    db: &'db dyn salsa::Database,
    chunk: StageChunk<'db>,
) -> &'db [StageFileEntry] {
    let entries = Project::get(db).stage_files(db);
    let len = stage_chunk_len(entries.len());
    let start = (*chunk.index(db) as usize * len).min(entries.len());
    let end = (start + len).min(entries.len());
    &entries[start..end]
}

/// The body of a gathered-facts chunk memo: `fact_of` the stage definition of each file of
/// `chunk`, after reading the `LOW` marker (see the module comment).
pub fn gathered_facts_of_chunk<T>(
    db: &dyn salsa::Database,
    chunk: StageChunk<'_>,
    fact_of: impl Fn(&StageDefinition) -> T,
) -> Vec<Option<T>> {
    Project::get(db).low_durability_marker(db);
    chunk_entries(db, chunk)
        .iter()
        .map(|entry| {
            parsed_stage(db, entry.file)
                .definition
                .as_ref()
                .map(&fact_of)
        })
        .collect()
}

/// A chunk memo: one fact per entry of [`chunk_entries`], in order.
pub type ChunkFacts<'db, T> = fn(&'db dyn salsa::Database, StageChunk<'db>) -> &'db Vec<Option<T>>;

/// Every stage-list entry with its fact from `facts_of`, in `stage_files` order.
pub fn each_stage_with<'db, T: 'db>(
    db: &'db dyn salsa::Database,
    facts_of: ChunkFacts<'db, T>,
) -> impl Iterator<Item = (&'db StageFileEntry, Option<&'db T>)> {
    stage_chunks(db).flat_map(move |chunk| {
        let facts = facts_of(db, chunk);
        debug_assert_eq!(facts.len(), chunk_entries(db, chunk).len());
        chunk_entries(db, chunk)
            .iter()
            .zip(facts.iter().map(Option::as_ref))
    })
}

/// The facts from `facts_of` of every chunk, fetched once, for looking stages up in another
/// order than the stage list's (graph order): one memo fetch per chunk, not one per stage.
pub struct FactsByStage<'db, T> {
    positions: &'db HashMap<SourceFile, usize>,
    chunk_len: usize,
    chunks: Vec<&'db Vec<Option<T>>>,
}

impl<'db, T> FactsByStage<'db, T> {
    pub fn new(db: &'db dyn salsa::Database, facts_of: ChunkFacts<'db, T>) -> Self {
        Self {
            positions: stage_file_positions(db),
            chunk_len: chunk_len(db),
            chunks: stage_chunks(db).map(|chunk| facts_of(db, chunk)).collect(),
        }
    }

    /// The fact of the stage file `file`; `None` when it is not in the stage list or does not
    /// parse to a stage definition.
    pub fn get(&self, file: SourceFile) -> Option<&'db T> {
        let position = *self.positions.get(&file)?;
        self.chunks
            .get(position / self.chunk_len)?
            .get(position % self.chunk_len)?
            .as_ref()
    }
}

/// Where each file sits in `Project::stage_files` (its first entry, should it appear twice).
#[salsa::tracked(returns(ref))]
pub fn stage_file_positions(db: &dyn salsa::Database) -> HashMap<SourceFile, usize> {
    let mut positions = HashMap::new();
    for (position, entry) in Project::get(db).stage_files(db).iter().enumerate() {
        positions.entry(entry.file).or_insert(position);
    }
    positions
}
