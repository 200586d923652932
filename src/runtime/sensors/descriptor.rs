//! One shipped sensor, described once: its id, its native check, the worker flags the
//! dispatcher gives it, and whether a gate fires it per deliverable or per output folder.
//!
//! This file holds data and the small rules over it only: it reads no file, no environment and
//! no manifest. The values of the flags (which folders, which artifacts) are the dispatcher's
//! to compute.

use std::time::Duration;

use camino::Utf8PathBuf;

use crate::protocol::worker_outcome::WorkerOutcome;

/// Where a native worker runs: the project folder, and the time budget for any tool it starts
/// (the manifest's timeout; the worker must stop its tool within it).
#[derive(Debug, Clone)]
pub struct WorkerContext {
    pub project_dir: Utf8PathBuf,
    pub timeout: Duration,
}

/// A native check: the worker argv after `sensor-<id>`, and where it runs; its answer is the
/// worker protocol's (`protocol::worker_outcome`).
pub type NativeCheck = fn(&[String], &WorkerContext) -> WorkerOutcome;

/// Everything the engine knows about one shipped sensor.
#[derive(Debug)]
pub struct ShippedSensor {
    /// The id its manifest declares and stages import.
    pub id: &'static str,
    /// The native check, run by id whatever the manifest's command says (D8).
    pub check: NativeCheck,
    /// The flags the dispatcher adds after `--stage` and the path flag, in this order
    /// (D21).
    pub extra_flags: &'static [ExtraFlag],
    /// The path flag when the manifest's `input_schema` declares no keys (failure mode F10:
    /// declared keys always decide).
    pub default_path_flag: PathFlag,
    /// What one gate fire covers (D6).
    pub gate_unit: GateUnit,
}

/// One flag of the worker argv.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerFlag {
    pub name: &'static str,
    /// What its value is, for usage lines: `slug`, `path`, `list`.
    pub value: &'static str,
}

impl WorkerFlag {
    const fn new(name: &'static str, value: &'static str) -> Self {
        Self { name, value }
    }
}

pub const STAGE_FLAG: WorkerFlag = WorkerFlag::new("--stage", "slug");
pub const OUTPUT_PATH_FLAG: WorkerFlag = WorkerFlag::new("--output-path", "path");
pub const FILE_PATH_FLAG: WorkerFlag = WorkerFlag::new("--file-path", "path");
pub const CONSUMES_FLAG: WorkerFlag = WorkerFlag::new("--consumes", "list");
pub const DELIVERABLES_FLAG: WorkerFlag = WorkerFlag::new("--deliverables", "list");
pub const TEMPLATES_DIR_FLAG: WorkerFlag = WorkerFlag::new("--templates-dir", "path");
pub const TEMPLATE_ELIGIBLE_FLAG: WorkerFlag = WorkerFlag::new("--template-eligible", "list");
pub const FRAMEWORK_TEMPLATES_DIR_FLAG: WorkerFlag =
    WorkerFlag::new("--framework-templates-dir", "path");

/// The path flag: the file the sensor fired on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFlag {
    /// `--output-path`: a stage deliverable.
    OutputPath,
    /// `--file-path`: a code file.
    FilePath,
}

impl PathFlag {
    pub fn worker_flag(self) -> WorkerFlag {
        match self {
            PathFlag::OutputPath => OUTPUT_PATH_FLAG,
            PathFlag::FilePath => FILE_PATH_FLAG,
        }
    }
}

/// Extra flags the dispatcher computes for a sensor (D21).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraFlag {
    /// `--consumes`: the stage's consumed artifacts present on disk, `artifact:producer,…`.
    Consumes,
    /// `--deliverables`: the stage's template-eligible outputs, comma-separated.
    Deliverables,
    /// `--templates-dir`, `--template-eligible`, `--framework-templates-dir`: the team's and
    /// the framework's template folders, and the outputs a template may apply to.
    Templates,
}

impl ExtraFlag {
    /// The flags this extra stands for, in the order the dispatcher passes them.
    pub fn worker_flags(self) -> &'static [WorkerFlag] {
        match self {
            ExtraFlag::Consumes => &[CONSUMES_FLAG],
            ExtraFlag::Deliverables => &[DELIVERABLES_FLAG],
            ExtraFlag::Templates => &[
                TEMPLATES_DIR_FLAG,
                TEMPLATE_ELIGIBLE_FLAG,
                FRAMEWORK_TEMPLATES_DIR_FLAG,
            ],
        }
    }
}

/// What one gate fire of a sensor covers (D6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateUnit {
    /// One fire per existing deliverable.
    Deliverable,
    /// The sensor reads the whole stage's output: one fire per output folder, on its first
    /// deliverable that is not a marker (`*-questions`, `*-timestamp`).
    OutputFolder,
}

impl ShippedSensor {
    /// Every flag its worker reads: `--stage`, its default path flag, then its extras. These
    /// are exactly the flags the dispatcher gives it when its manifest declares no
    /// `input_schema`.
    pub fn worker_flags(&self) -> Vec<WorkerFlag> {
        [STAGE_FLAG, self.default_path_flag.worker_flag()]
            .into_iter()
            .chain(
                self.extra_flags
                    .iter()
                    .flat_map(|extra| extra.worker_flags().iter().copied()),
            )
            .collect()
    }
}
