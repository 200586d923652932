//! The salsa database and its inputs.
//!
//! Inputs are the only way file text enters the compile (architecture invariant: tracked
//! queries do no I/O). `discover::load_project` creates them; watch mode will update them with
//! setters, calling a setter only when a file's bytes really changed.

use std::sync::{Arc, Mutex};

use camino::Utf8PathBuf;

use crate::protocol::graph_format::{GraphEvidence, GraphFormat};

/// What reading a file gave. Anything but `Text` becomes a diagnostic where the file is used.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileContents {
    /// Shared, so an output this process wrote can be mirrored without copying its megabytes.
    Text(Arc<String>),
    Unreadable(String),
    InvalidUtf8 {
        valid_up_to: usize,
    },
    Binary,
    TooLarge {
        size: u64,
        limit: u64,
    },
}

/// One file the compile reads. `path` is project-relative with `/` separators.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: Utf8PathBuf,
    #[returns(ref)]
    pub contents: FileContents,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageFileEntry {
    pub file: SourceFile,
    /// The name of the phase folder the file sits in.
    pub phase_dir: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleFileEntry {
    pub file: SourceFile,
    /// Path under the rules folder: `org.md`, `team.md`, `project.md` or `phases/<phase>.md`.
    pub relative: String,
}

/// A file in the sensors or the stages folder that the discovery rule skips (D3: warned, not
/// loaded). Both kinds travel in one list so that the fingerprint, which records the skipped
/// paths, sees a new near miss of either kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SkippedSensorFile {
    pub path: Utf8PathBuf,
    pub reason: String,
    pub help: String,
    /// The discovery rule that skipped it: `skipped-sensor-file` (the sensors folder's
    /// `aidlc-<id>.md`) or `skipped-stage-file` (the stages folder's `<phase>/<slug>.md`).
    pub code: crate::leaves::diagnostics::Code,
}

/// Everything one compile reads, as lists of file inputs. Each list is its own field so a
/// query that reads only the sensor list does not depend on the stage list.
#[salsa::input(singleton, debug)]
pub struct Project {
    /// The harness folder name, e.g. `.claude`; sensor paths in the graph start with it.
    #[returns(ref)]
    pub harness_dir: String,
    #[returns(ref)]
    pub sensor_files: Vec<SourceFile>,
    #[returns(ref)]
    pub skipped_sensor_files: Vec<SkippedSensorFile>,
    #[returns(ref)]
    pub stage_files: Vec<StageFileEntry>,
    #[returns(ref)]
    pub agent_files: Vec<SourceFile>,
    #[returns(ref)]
    pub scope_files: Vec<SourceFile>,
    #[returns(ref)]
    pub rule_files: Vec<RuleFileEntry>,
    /// Display path of the rules folder, e.g. `aidlc/spaces/default/memory`.
    #[returns(ref)]
    pub rules_display_root: String,
    pub existing_graph: Option<SourceFile>,
    pub existing_grid: Option<SourceFile>,
    /// `<harness>/tools/aidlc-version.ts` of an install made by the reference, when present:
    /// its version decides the graph's format when the existing graph cannot (D13).
    pub reference_tools: Option<SourceFile>,
    /// `<harness>/tools/data/harness.json`, when present: its `plugins` key is the plugin
    /// selection (docs/decisions.md D14), so editing it recompiles.
    pub harness_json: Option<SourceFile>,
    /// `--graph-format`, when given.
    pub graph_format_flag: Option<GraphFormat>,
    /// The `(number, name)` rows by slug of the `stage-graph.json` this process itself last
    /// compiled and found on disk (written, or already there), known from the numbering that
    /// produced it; `None` otherwise. Lets watch mode skip parsing back megabytes of its own
    /// output. Invariant (kept by `ProjectInputs`): it is `Some` only while the graph on disk,
    /// and `existing_graph` once the watcher has mirrored it, holds exactly those bytes.
    #[returns(ref)]
    pub written_graph_rows: Option<GraphRows>,
    /// What the keys of `existing_graph` say about the format that wrote it
    /// ([`crate::protocol::graph_format::format_written_by`] of its text); `None` when there is
    /// no readable graph or `--graph-format` decides. Invariant (kept by `ProjectInputs`, which sets it whenever the
    /// graph's input changes, and only when it differs): it is always that. The format is decided from it rather than from the graph's text, which watch mode
    /// rewrites on every change: a query that read the text would be re-validated after every
    /// write and, in a large project, keep every stage's node from being trusted as it is.
    pub existing_graph_evidence: Option<GraphEvidence>,
    /// Never set after creation and always `LOW` durability: a query that reads it is `LOW`
    /// whatever else it reads. The per-stage facts that cross-stage queries gather read it, so
    /// that a file's first edit, which lowers that file's durability (see
    /// `discover::durability_for`), never makes a gathering query less durable than
    /// it was, which would stop salsa from backdating it and re-run everything downstream.
    pub low_durability_marker: (),
}

/// `(number, name)` per stage slug, as pinned by an existing `stage-graph.json`. Shared, so the
/// rows of a 10,000-stage graph pass from the numbering to the next compile without a copy.
pub type GraphRows = Arc<std::collections::BTreeMap<String, (String, String)>>;

/// A salsa event callback that records, into `log`, every query execution as
/// `query(input)` and, with `validations_too`, every memo confirmed without re-running as
/// `validated query(input)`: for tests of what a rebuild does, in any of our databases.
pub fn execution_logger(
    log: ExecutionLog,
    validations_too: bool,
) -> Box<dyn Fn(salsa::Event) + Send + Sync + 'static> {
    Box::new(move |event: salsa::Event| {
        let entry = match event.kind {
            salsa::EventKind::WillExecute { database_key } => format!("{database_key:?}"),
            salsa::EventKind::DidValidateMemoizedValue { database_key } if validations_too => {
                format!("validated {database_key:?}")
            }
            _ => return,
        };
        if let Ok(mut entries) = log.lock() {
            entries.push(entry);
        }
    })
}

/// The compiler's database. In tests it can record which queries executed.
#[salsa::db]
#[derive(Clone, Default)]
pub struct CompilerDatabase {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for CompilerDatabase {}

/// A shared list of "query(input)" names, filled as queries execute.
pub type ExecutionLog = Arc<Mutex<Vec<String>>>;

impl CompilerDatabase {
    /// A database whose [`execution_logger`] writes each query that executes into `log`.
    pub fn with_execution_log(log: ExecutionLog) -> Self {
        Self::with_log(log, false)
    }

    /// [`Self::with_execution_log`], and a memo confirmed by a shallow durability check or by
    /// walking its dependencies is written too, as validated.
    pub fn with_validation_log(log: ExecutionLog) -> Self {
        Self::with_log(log, true)
    }

    fn with_log(log: ExecutionLog, validations_too: bool) -> Self {
        Self {
            storage: salsa::Storage::new(Some(execution_logger(log, validations_too))),
        }
    }

    /// Replace a file's contents. Salsa setters always invalidate, so this compares first and
    /// returns whether anything changed. A file that changes becomes `LOW` durability for the
    /// rest of the session (see `discover::durability_for`): the files being edited
    /// are then the only ones whose memos are walked on each rebuild.
    pub fn update_file(&mut self, file: SourceFile, contents: FileContents) -> bool {
        if *file.contents(self) == contents {
            return false;
        }
        self.replace_file(file, contents);
        true
    }

    /// Replace a file's contents without comparing them first: for bytes known to differ (an
    /// output this process just wrote because it differed), where the comparison would cost
    /// as much as the write. Like [`Self::update_file`], leaves the file `LOW` durability.
    pub fn replace_file(&mut self, file: SourceFile, contents: FileContents) {
        use salsa::Setter;
        file.set_contents(self)
            .with_durability(salsa::Durability::LOW)
            .to(contents);
    }
}
