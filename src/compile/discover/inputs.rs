//! Reading input files into salsa inputs, and keeping those inputs in step with the disk.
//!
//! Invariants:
//! - a [`SourceFile`]'s contents are set only here, and only when the bytes really changed
//!   (salsa setters always invalidate, even with an equal value);
//! - every file read gets a [`FileStamp`] taken from the same read, so the fingerprint of a
//!   compile describes exactly the bytes that compile saw.

use std::collections::{HashMap, HashSet};

use camino::{Utf8Path, Utf8PathBuf};
use salsa::Durability;
use serde::{Deserialize, Serialize};

use crate::compile::db::{
    CompilerDatabase, FileContents, GraphRows, Project, RuleFileEntry, SourceFile, StageFileEntry,
};
use crate::compile::discover::Layout;
use crate::compile::discover::listing::InputListing;

pub use crate::leaves::fs_util::MAX_INPUT_BYTES;
use crate::leaves::fs_util::{StatStamp, read_whole_file};

/// Largest existing `stage-graph.json` or `scope-grid.json` read back: these grow with the
/// project (about 1.7 KB per stage), so they get a limit of their own.
pub const MAX_GENERATED_BYTES: u64 = 1024 * 1024 * 1024;

/// Read a listed file: a hand-written input with its stamp, an output read back without one. A
/// compile's record takes the outputs' stamps from the bytes it wrote (`up_to_date::record`),
/// never from the bytes it read, so hashing a large project's graph here would be wasted.
fn read_listed(layout: &Layout, path: &Utf8Path) -> (FileContents, Option<FileStamp>) {
    if layout.is_output(path) {
        (read_file(path, MAX_GENERATED_BYTES, |_| ()).0, None)
    } else {
        read_input(path, MAX_INPUT_BYTES)
    }
}

/// A file as one compile read it: its `stat` before the read and the hash of the bytes read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub stat: StatStamp,
    pub blake3: String,
}

/// The BLAKE3 hash of `bytes`, as lower-case hex. Input of a megabyte or more (a large
/// project's graph, hashed for the compile's record) is hashed on every core; the hash is the
/// same either way.
pub fn hash_hex(bytes: &[u8]) -> String {
    const HASH_ON_EVERY_CORE_FROM: usize = 1024 * 1024;
    let hash = if bytes.len() >= HASH_ON_EVERY_CORE_FROM {
        blake3::Hasher::new().update_rayon(bytes).finalize()
    } else {
        blake3::hash(bytes)
    };
    // `as_str`, not `to_string`: the `Display` machinery costs more than the hash of a small file.
    hash.to_hex().as_str().to_owned()
}

/// [`read_input`] for a reader that needs no stamp (the dispatcher's live manifests): the same
/// contents, without hashing the bytes.
pub fn read_input_contents(path: &Utf8Path, limit: u64) -> FileContents {
    read_file(path, limit, |_| ()).0
}

/// Read one input file, never failing. The stamp is `None` when the bytes were not read
/// (unreadable or too large); such a file always produces an error diagnostic.
pub fn read_input(path: &Utf8Path, limit: u64) -> (FileContents, Option<FileStamp>) {
    let (contents, read) = read_file(path, limit, hash_hex);
    let stamp = read.map(|(stat, blake3)| FileStamp { stat, blake3 });
    (contents, stamp)
}

/// The file's contents and, when its bytes were read, the `stat` taken before the read with
/// `digest` of the bytes.
fn read_file<H>(
    path: &Utf8Path,
    limit: u64,
    digest: impl FnOnce(&[u8]) -> H,
) -> (FileContents, Option<(StatStamp, H)>) {
    // One open, one `fstat` of the opened file (the stamp, taken before the read) and the
    // reads: `metadata` then `fs::read` would look the path up and stat it twice.
    let (metadata, mut file) = match crate::leaves::fs_util::open_regular_file(path) {
        Ok(opened) => opened,
        Err(error) => return (FileContents::Unreadable(error.to_string()), None),
    };
    if metadata.len() > limit {
        return (
            FileContents::TooLarge {
                size: metadata.len(),
                limit,
            },
            None,
        );
    }
    let bytes = match read_whole_file(&mut file, &metadata, limit) {
        Ok(bytes) => bytes,
        Err(error) => return (FileContents::Unreadable(error.to_string()), None),
    };
    if bytes.len() as u64 > limit {
        return (
            FileContents::TooLarge {
                size: metadata.len().max(bytes.len() as u64),
                limit,
            },
            None,
        );
    }
    let digest = digest(&bytes);
    (contents_of(bytes), Some((StatStamp::of(&metadata), digest)))
}

fn contents_of(bytes: Vec<u8>) -> FileContents {
    if memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
        return FileContents::Binary;
    }
    match String::from_utf8(bytes) {
        Ok(text) => FileContents::Text(std::sync::Arc::new(text)),
        Err(error) => FileContents::InvalidUtf8 {
            valid_up_to: error.utf8_error().valid_up_to(),
        },
    }
}

/// One file held in the database.
#[derive(Debug, Clone)]
struct LoadedFile {
    input: SourceFile,
    stamp: Option<FileStamp>,
}

/// Which files a [`ProjectInputs::refresh`] reads again.
#[derive(Debug, Clone, Copy)]
pub enum Reread<'a> {
    /// Every listed file (after a watcher overflow or error).
    Everything,
    /// Only these absolute paths; files new to the listing are always read.
    Paths(&'a HashSet<Utf8PathBuf>),
}

/// What a refresh changed, as display paths, each list sorted.
pub type InputChanges = crate::leaves::changes::Changes<Utf8PathBuf>;

/// The salsa inputs of one project and the disk state each was read from.
#[derive(Debug)]
pub struct ProjectInputs {
    pub project: Project,
    listing: InputListing,
    /// Keyed by absolute path; exactly the paths of `listing.read_paths()`.
    files: HashMap<Utf8PathBuf, LoadedFile>,
    /// The durability a new source input starts with (see [`durability_for`]).
    source_durability: Durability,
}

/// Below this many files, reading, hashing and parsing run on the calling thread alone: starting
/// a thread pool and handing it work costs more than all of that for a project this size (the
/// default framework has 73 input files and compiles in a few milliseconds).
pub const PARALLEL_THRESHOLD: usize = 256;

pub fn worth_parallel(n_files: usize) -> bool {
    n_files >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1
}

/// From this many stage files on, a project too small for the thread pool (see
/// [`worth_parallel`]) is still worth one helper thread when there is a second core: the
/// default framework's 33 stage files take about 2 ms to parse, check and emit on one thread,
/// so half of 16 files' work is still many times what starting and joining one scoped thread
/// costs (no pool, no idle workers spinning).
pub const HELPER_THREAD_THRESHOLD: usize = 16;

/// Whether work over `n_stage_files` stage files of a project below [`PARALLEL_THRESHOLD`]
/// is worth handing half to one helper thread.
pub fn worth_a_helper_thread(n_stage_files: usize) -> bool {
    n_stage_files >= HELPER_THREAD_THRESHOLD && more_than_one_core()
}

/// Whether this process may run on more than one core (affinity and cgroup quota included);
/// asked of the system once.
fn more_than_one_core() -> bool {
    static MORE_THAN_ONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MORE_THAN_ONE
        .get_or_init(|| std::thread::available_parallelism().is_ok_and(|cores| cores.get() > 1))
}

/// From this many input files on, sources start out durable (see [`durability_for`]).
pub const DURABLE_THRESHOLD: usize = 256;

/// The durability a source input starts with in a project of `n_files` inputs.
///
/// In a large project a rebuild after one edit would otherwise re-validate every memo of every
/// untouched file, one dependency at a time (at 10,000 stages that is most of a rebuild). A
/// source starts at `MEDIUM`, so memos that read only such sources are trusted without a walk
/// while only `LOW` inputs changed; [`CompilerDatabase::update_file`] lowers a file to `LOW`
/// when it first changes, and outputs read back (rewritten on every graph change) are `LOW`
/// from the start; what every stage needs from the graph (its format evidence, the rows
/// handed over in watch mode) is set only when it differs. The price, paid once per
/// file: on its first edit the file's own memos re-run even where their values come out equal
/// (a memo that becomes less durable cannot keep its old revision), so a small project keeps
/// every input `LOW`, where that re-run would cost more than the walk it saves.
pub fn durability_for(n_files: usize) -> Durability {
    if n_files >= DURABLE_THRESHOLD {
        Durability::MEDIUM
    } else {
        Durability::LOW
    }
}

/// Read every input of a compile into a fresh set of salsa inputs.
pub fn load_project(db: &mut CompilerDatabase, layout: &Layout) -> ProjectInputs {
    load_listing(db, layout, InputListing::of(layout))
}

/// [`load_project`] of a listing already taken.
pub fn load_listing(
    db: &mut CompilerDatabase,
    layout: &Layout,
    listing: InputListing,
) -> ProjectInputs {
    use rayon::prelude::*;
    let paths: Vec<&Utf8Path> = listing.read_paths().collect();
    // Reading and hashing thousands of files is I/O and hashing, so a large project's run on
    // every core; the inputs are then created in listing order.
    let read: Vec<ReadFile> = if worth_parallel(paths.len()) {
        paths
            .par_iter()
            .map(|path| read_listed(layout, path))
            .collect()
    } else {
        read_files(layout, &paths)
    };
    drop(paths);
    load_read_files(db, layout, listing, read)
}

/// One listed file as read: its contents and, for a hand-written input whose bytes were read,
/// its stamp.
pub type ReadFile = (FileContents, Option<FileStamp>);

/// Read the listed files at `paths` on this thread, in order (each as `load_project` reads it).
pub fn read_files(layout: &Layout, paths: &[impl AsRef<Utf8Path>]) -> Vec<ReadFile> {
    paths
        .iter()
        .map(|path| read_listed(layout, path.as_ref()))
        .collect()
}

/// The salsa inputs of `listing`, from `read`: the files of `listing.read_paths()`, read in
/// that order (by [`read_files`], on any thread).
pub fn load_read_files(
    db: &mut CompilerDatabase,
    layout: &Layout,
    listing: InputListing,
    read: Vec<ReadFile>,
) -> ProjectInputs {
    let paths: Vec<&Utf8Path> = listing.read_paths().collect();
    assert_eq!(paths.len(), read.len(), "one read per listed path");
    let source_durability = durability_for(paths.len());
    let mut in_read_order: Vec<SourceFile> = Vec::with_capacity(paths.len());
    let mut files = HashMap::with_capacity(paths.len());
    for (path, (contents, stamp)) in paths.into_iter().zip(read) {
        let input = new_source_file(db, layout, path, contents, source_durability);
        in_read_order.push(input);
        files.insert(path.to_owned(), LoadedFile { input, stamp });
    }
    let inputs = ProjectInputs {
        project: new_project_with_durability(db, layout, source_durability),
        listing,
        files,
        source_durability,
    };
    if inputs.files.len() == in_read_order.len() {
        // No path is listed twice, so each read path's input is the one the map holds for it:
        // the lists take the inputs in read order (the order `set_lists` asks for them)
        // instead of looking each path up again.
        let mut next = inputs.listing.read_paths().zip(in_read_order);
        inputs.set_lists(db, |path| match next.next() {
            Some((read_path, input)) if read_path.as_str() == path.as_str() => input,
            _ => inputs.input(path),
        });
    } else {
        inputs.set_project_lists(db);
    }
    inputs.sync_existing_graph_evidence(db, layout);
    inputs
}

/// The salsa input of the file at `path`: an output read back is rewritten whenever the graph
/// changes, so it is never durable; any other file starts at `durability`.
fn new_source_file(
    db: &CompilerDatabase,
    layout: &Layout,
    path: &Utf8Path,
    contents: FileContents,
    durability: Durability,
) -> SourceFile {
    let durability = if layout.is_output(path) {
        Durability::LOW
    } else {
        durability
    };
    SourceFile::builder(layout.display(path), contents)
        .durability(durability)
        .new(db)
}

/// A project input with every list empty, whose fields have `durability`: the lists change
/// only when a file appears or goes, and what is handed over about the written graph only when
/// the numbering or the format changes (each is set only when it differs), and a change keeps
/// their durability.
fn new_project_with_durability(
    db: &CompilerDatabase,
    layout: &Layout,
    durability: Durability,
) -> Project {
    Project::builder(
        layout.harness.dir_name().to_owned(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        layout.display(&layout.rules_dir).to_string(),
        None,
        None,
        None,
        None,
        layout.graph_format,
        None,
        None,
        (),
    )
    .durability(durability)
    .low_durability_marker_durability(Durability::LOW)
    .new(db)
}

impl ProjectInputs {
    /// The listing the inputs were last loaded or refreshed from.
    pub fn listing(&self) -> &InputListing {
        &self.listing
    }

    /// Every file read, in listing order, with its stamp: `None` when it could not be read, and
    /// for the outputs read back, which a record takes from the bytes written instead.
    pub fn read_files(&self) -> impl Iterator<Item = (&Utf8Path, Option<&FileStamp>)> {
        self.listing
            .read_paths()
            .map(|path| (path, self.files.get(path).and_then(|f| f.stamp.as_ref())))
    }

    /// List the folders again and re-read the files `reread` names (and every new file);
    /// update only the inputs whose bytes changed, and the project lists only if they changed.
    pub fn refresh(
        &mut self,
        db: &mut CompilerDatabase,
        layout: &Layout,
        reread: Reread<'_>,
    ) -> InputChanges {
        let mut changes = InputChanges::default();
        if let Reread::Paths(paths) = reread
            && !self.listing_may_have_changed(layout, paths)
        {
            self.reread_listed(db, layout, reread, &mut changes);
            return changes;
        }
        let listing = InputListing::of(layout);
        if listing == self.listing {
            self.reread_listed(db, layout, reread, &mut changes);
            return changes;
        }
        let listed: HashSet<&Utf8Path> = listing.read_paths().collect();
        self.files.retain(|path, _| {
            let keep = listed.contains(path.as_path());
            if !keep {
                changes.removed.push(layout.display(path));
            }
            keep
        });
        for path in listing.read_paths() {
            if !self.files.contains_key(path) {
                let (contents, stamp) = read_listed(layout, path);
                let input = new_source_file(db, layout, path, contents, self.source_durability);
                self.files
                    .insert(path.to_owned(), LoadedFile { input, stamp });
                changes.added.push(layout.display(path));
            }
        }
        let graph_listing_changed = listing.existing_graph != self.listing.existing_graph;
        if graph_listing_changed {
            self.forget_written_graph(db);
        }
        self.listing = listing;
        self.set_project_lists(db);
        if graph_listing_changed {
            self.sync_existing_graph_evidence(db, layout);
        }
        self.reread_listed(db, layout, reread, &mut changes);
        changes.added.sort();
        changes.removed.sort();
        changes
    }

    /// Whether changes at `paths` can have added or removed an input, so that the folders must
    /// be listed again. Listing 10,000 stage files costs more than the whole incremental
    /// compile, so a save of a known file skips it. Paths outside the input folders (the
    /// fingerprint, temp files beside the outputs) never count; inside them, a path that exists
    /// but is not loaded (a new file or folder), a loaded file that is gone, or a vanished path
    /// above loaded files does. An editor's temp file that came and went does not.
    fn listing_may_have_changed(&self, layout: &Layout, paths: &HashSet<Utf8PathBuf>) -> bool {
        let input_folders = [
            &layout.sensors_dir,
            &layout.stages_dir,
            &layout.agents_dir,
            &layout.scopes_dir,
            &layout.rules_dir,
        ];
        let concerns_inputs = |path: &Utf8Path| {
            path == layout.stage_graph_path
                || path == layout.scope_grid_path
                || path == layout.reference_tools_path
                || path == layout.harness_json_path
                || input_folders
                    .iter()
                    .any(|folder| path.starts_with(folder) || folder.starts_with(path))
        };
        paths
            .iter()
            .filter(|path| concerns_inputs(path))
            .any(|path| {
                if self.files.contains_key(path) {
                    return !path.is_file();
                }
                path.exists() || self.files.keys().any(|loaded| loaded.starts_with(path))
            })
    }

    /// Re-read the loaded files `reread` names; record the ones whose bytes changed.
    fn reread_listed(
        &mut self,
        db: &mut CompilerDatabase,
        layout: &Layout,
        reread: Reread<'_>,
        changes: &mut InputChanges,
    ) {
        let paths: Vec<Utf8PathBuf> = match reread {
            Reread::Everything => self.listing.read_paths().map(Utf8Path::to_owned).collect(),
            Reread::Paths(paths) => paths
                .iter()
                .filter(|path| self.files.contains_key(path.as_path()))
                .cloned()
                .collect(),
        };
        for path in paths {
            let Some(loaded) = self.files.get_mut(&path) else {
                continue;
            };
            let (contents, stamp) = read_listed(layout, &path);
            loaded.stamp = stamp;
            if db.update_file(loaded.input, contents) {
                changes.modified.push(layout.display(&path));
                if path == layout.stage_graph_path {
                    self.forget_written_graph(db);
                    self.sync_existing_graph_evidence(db, layout);
                }
            }
        }
        changes.modified.sort();
    }

    fn forget_written_graph(&self, db: &mut CompilerDatabase) {
        use salsa::Setter;
        if self.project.written_graph_rows(db).is_some() {
            self.project.set_written_graph_rows(db).to(None);
        }
    }

    /// Keep [`Project::existing_graph_evidence`] true after the graph's input (or whether there
    /// is one) may have changed. Scans the graph's text for keys, so it is called only then.
    fn sync_existing_graph_evidence(&self, db: &mut CompilerDatabase, layout: &Layout) {
        use salsa::Setter;
        let evidence = if layout.graph_format.is_some() {
            None
        } else {
            self.project
                .existing_graph(db)
                .and_then(|file| match file.contents(db) {
                    FileContents::Text(text) => {
                        Some(crate::protocol::graph_format::format_written_by(text))
                    }
                    _ => None,
                })
        };
        if *self.project.existing_graph_evidence(db) != evidence {
            self.project.set_existing_graph_evidence(db).to(evidence);
        }
    }

    /// The `stage-graph.json` on disk and its input hold the graph this process compiled (just
    /// written, or found already there): hand over the rows its numbering gave (see
    /// [`Project::written_graph_rows`]), so the next compile does not parse them back. Set
    /// only when they differ (the same shared rows compare by pointer first).
    pub fn note_graph_on_disk(&mut self, db: &mut CompilerDatabase, rows: GraphRows) {
        use salsa::Setter;
        if self.project.written_graph_rows(db).as_ref() != Some(&rows) {
            self.project.set_written_graph_rows(db).to(Some(rows));
        }
    }

    /// Mirror an output this process just wrote (`stage-graph.json` or `scope-grid.json`,
    /// which later compiles also read) without re-reading it or re-listing any folder, so a
    /// refresh never swallows some other change. The text is shared with the compile that
    /// produced it, not copied. It was written because it differs from the file's, so it is set
    /// without comparing megabytes first (a needless set only costs a re-validation); like
    /// every output read back, the file gets no stamp.
    pub fn note_output_written(
        &mut self,
        db: &mut CompilerDatabase,
        layout: &Layout,
        path: &Utf8Path,
        text: std::sync::Arc<String>,
    ) {
        let contents = FileContents::Text(text);
        if let Some(loaded) = self.files.get_mut(path) {
            loaded.stamp = None;
            db.replace_file(loaded.input, contents);
        } else {
            let input = new_source_file(db, layout, path, contents, Durability::LOW);
            self.files
                .insert(path.to_owned(), LoadedFile { input, stamp: None });
            if path == layout.stage_graph_path {
                self.listing.existing_graph = Some(path.to_owned());
            } else if path == layout.scope_grid_path {
                self.listing.existing_grid = Some(path.to_owned());
            }
            self.set_project_lists(db);
        }
        if path == layout.stage_graph_path {
            self.sync_existing_graph_evidence(db, layout);
        }
    }

    fn input(&self, path: &Utf8Path) -> SourceFile {
        self.files
            .get(path)
            .unwrap_or_else(|| unreachable!("every listed path is loaded: {path}"))
            .input
    }

    /// Set each list of the project that differs from the listing (and only those, so a query
    /// reading the sensor list is not invalidated by a new stage).
    fn set_project_lists(&self, db: &mut CompilerDatabase) {
        self.set_lists(db, |path| self.input(path));
    }

    /// Set each list of the project that differs from the listing, each path's input given by
    /// `input_of`, which is asked for the paths in the order of `InputListing::read_paths` (the
    /// lists below are built in that order, top to bottom).
    fn set_lists(
        &self,
        db: &mut CompilerDatabase,
        mut input_of: impl FnMut(&Utf8Path) -> SourceFile,
    ) {
        use salsa::Setter;
        let (project, listing) = (self.project, &self.listing);
        macro_rules! set_when_different {
            ($($field:ident, $setter:ident, $value:expr;)*) => {$(
                let value = $value;
                if *project.$field(db) != value {
                    project.$setter(db).to(value);
                }
            )*};
        }
        set_when_different! {
            sensor_files, set_sensor_files, listing.sensors.iter().map(|p| input_of(p)).collect();
            skipped_sensor_files, set_skipped_sensor_files, listing.skipped_sensors.clone();
            stage_files, set_stage_files, listing
                .stages
                .iter()
                .map(|(phase_dir, path)| StageFileEntry {
                    file: input_of(path),
                    phase_dir: phase_dir.clone(),
                })
                .collect();
            agent_files, set_agent_files, listing.agents.iter().map(|p| input_of(p)).collect();
            scope_files, set_scope_files, listing.scopes.iter().map(|p| input_of(p)).collect();
            rule_files, set_rule_files, listing
                .rules
                .iter()
                .map(|(relative, path)| RuleFileEntry {
                    file: input_of(path),
                    relative: relative.clone(),
                })
                .collect();
            existing_graph, set_existing_graph, listing.existing_graph.as_deref().map(&mut input_of);
            existing_grid, set_existing_grid, listing.existing_grid.as_deref().map(&mut input_of);
            reference_tools, set_reference_tools, listing.reference_tools.as_deref().map(&mut input_of);
            harness_json, set_harness_json, listing.harness_json.as_deref().map(&mut input_of);
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;
    use crate::leaves::fs_util::ONE_READ_BELOW;

    /// Hashing on every core past the threshold gives the same hex as a plain BLAKE3 hash, on
    /// each side of the threshold and at it.
    #[test]
    fn large_inputs_hash_the_same_on_every_core() {
        let bytes: Vec<u8> = (0..3 * 1024 * 1024 + 17_u32)
            .map(|index| u8::try_from(index % 251).unwrap())
            .collect();
        for length in [0, 1, 1024 * 1024 - 1, 1024 * 1024, bytes.len()] {
            assert_eq!(
                hash_hex(&bytes[..length]),
                blake3::hash(&bytes[..length]).to_hex().to_string(),
                "{length} bytes"
            );
        }
    }

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, Utf8PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(folder.path().join("stage.md")).unwrap();
        std::fs::write(&path, bytes).unwrap();
        (folder, path)
    }

    /// The bytes read after the `stat` are all of the file's bytes whatever its size, also when
    /// it grew or shrank after that `stat`, and a file that grew past the limit reads as one
    /// byte over it.
    #[test]
    fn a_file_is_read_whole_whatever_its_stat_said() {
        for size in [
            0_usize,
            1,
            4095,
            4096,
            4097,
            70_000,
            ONE_READ_BELOW - 1,
            ONE_READ_BELOW,
            300_000,
        ] {
            let bytes: Vec<u8> = b"abcdefghijklmnopqrstuvwxyz"
                .iter()
                .copied()
                .cycle()
                .take(size)
                .collect();
            let (_folder, path) = file_with(&bytes);
            let mut file = std::fs::File::open(&path).unwrap();
            let metadata = file.metadata().unwrap();
            assert_eq!(
                read_whole_file(&mut file, &metadata, 1_000_000).unwrap(),
                bytes
            );

            let mut file = std::fs::File::open(&path).unwrap();
            let stale_metadata = file.metadata().unwrap();
            let grown = [bytes.as_slice(), b"and more"].concat();
            std::fs::write(&path, &grown).unwrap();
            let read = read_whole_file(&mut file, &stale_metadata, 1_000_000).unwrap();
            assert_eq!(read, grown, "grown from {size} bytes");
            let mut file = std::fs::File::open(&path).unwrap();
            let read = read_whole_file(&mut file, &stale_metadata, size as u64).unwrap();
            assert_eq!(read.len(), size + 1, "one byte past a limit of {size}");

            if size > 0 {
                let mut file = std::fs::File::open(&path).unwrap();
                let stale_metadata = file.metadata().unwrap();
                std::fs::write(&path, &bytes[..size - 1]).unwrap();
                let read = read_whole_file(&mut file, &stale_metadata, 1_000_000).unwrap();
                assert_eq!(read, bytes[..size - 1], "shrunk from {size} bytes");
            }
        }
    }

    /// A file listed twice (here the agents folder is also given as the scopes folder) is one
    /// input, the same in both of the project's lists; a file listed once is the input the
    /// map holds for its path.
    #[test]
    fn a_file_listed_twice_is_one_input_in_both_lists() {
        let folder = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(folder.path().to_owned()).unwrap();
        let agents = root.join(".claude/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("aidlc-demo-agent.md"), "---\nname: demo\n---\n").unwrap();
        let layout = |scopes_dir: Option<&str>| {
            let scopes_dir = scopes_dir.map(str::to_owned);
            Layout::new(
                &root,
                crate::harness::Harness::Claude,
                &move |name: &str| {
                    (name == "AIDLC_SCOPES_DIR")
                        .then(|| scopes_dir.clone())
                        .flatten()
                },
            )
        };
        for (scopes_dir, listed_twice) in [(Some(".claude/agents"), true), (None, false)] {
            let layout = layout(scopes_dir);
            let mut db = CompilerDatabase::default();
            let inputs = load_project(&mut db, &layout);
            let agent_files = inputs.project.agent_files(&db).clone();
            let scope_files = inputs.project.scope_files(&db).clone();
            assert_eq!(agent_files.len(), 1);
            assert_eq!(
                agent_files[0],
                inputs.input(&agents.join("aidlc-demo-agent.md"))
            );
            if listed_twice {
                assert_eq!(scope_files, agent_files);
            } else {
                assert!(scope_files.is_empty());
            }
        }
    }
}
