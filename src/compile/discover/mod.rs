//! Finding the project, its harness folder, and the files a compile reads.
//!
//! - this file: the project folder and the [`Layout`] of input folders (the harness is
//!   `harness`'s);
//! - [`listing`]: directory listings, in the reference's discovery order (no file is opened);
//! - [`inputs`]: reading files into salsa inputs with a stamp each, and refreshing them;
//! - [`links_out`]: the sensor manifests and stage files whose links lead out of the project.
//!
//! This module owns every directory listing and file read of the compile. It never parses YAML.

mod inputs;
pub mod links_out;
mod listing;

pub use inputs::{
    DURABLE_THRESHOLD, FileStamp, HELPER_THREAD_THRESHOLD, InputChanges, MAX_GENERATED_BYTES,
    MAX_INPUT_BYTES, PARALLEL_THRESHOLD, ProjectInputs, ReadFile, Reread, durability_for, hash_hex,
    load_listing, load_project, load_read_files, read_files, read_input, read_input_contents,
    worth_a_helper_thread, worth_parallel,
};
pub use listing::{
    InputListing, holds_a_stage_file, list_rule_files, list_sensor_files, list_stage_files,
};

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::environment::{AIDLC_PROJECT_DIR, CLAUDE_PROJECT_DIR};
use crate::harness::{Harness, NoHarnessFolder, harnesses_present};

/// Where the workspace of intents, spaces and rules lives.
pub fn workspace_root(project: &Utf8Path) -> Utf8PathBuf {
    project.join("aidlc")
}

/// Every environment variable that moves a folder or file a compile reads or writes: the
/// project folder ([`find_project_dir`]) and the overrides of [`Layout::new`]. A benchmark or a tool
/// that runs `aidlc` on a folder of its own removes them from the child's environment.
pub const LAYOUT_ENVIRONMENT_VARIABLES: [&str; 9] = [
    AIDLC_PROJECT_DIR,
    CLAUDE_PROJECT_DIR,
    "AIDLC_SENSORS_DIR",
    "AIDLC_STAGES_DIR",
    "AIDLC_AGENTS_DIR",
    "AIDLC_SCOPES_DIR",
    "AIDLC_RULES_DIR",
    "AIDLC_STAGE_GRAPH",
    "AIDLC_SCOPE_GRID",
];

/// Where each kind of input lives. Built from the project root, the harness and the
/// environment overrides the reference also honours (`AIDLC_SENSORS_DIR` and friends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub project_dir: Utf8PathBuf,
    pub harness: Harness,
    pub sensors_dir: Utf8PathBuf,
    pub stages_dir: Utf8PathBuf,
    pub agents_dir: Utf8PathBuf,
    pub scopes_dir: Utf8PathBuf,
    pub rules_dir: Utf8PathBuf,
    pub stage_graph_path: Utf8PathBuf,
    pub scope_grid_path: Utf8PathBuf,
    /// `<harness>/tools/aidlc-version.ts`: the reference's version stamp on an install it made.
    pub reference_tools_path: Utf8PathBuf,
    /// `<harness>/tools/data/harness.json`: the install's plugin selection (`plugins`).
    pub harness_json_path: Utf8PathBuf,
    /// `--graph-format`: write this shape whatever the install's graph and tools say.
    pub graph_format: Option<crate::protocol::graph_format::GraphFormat>,
}

impl Layout {
    /// The standard layout, with each folder overridable by `env(name)`.
    pub fn new(
        project_dir: &Utf8Path,
        harness: Harness,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let harness_root = project_dir.join(harness.dir_name());
        let pick = |name: &str, default: Utf8PathBuf| {
            env(name)
                .filter(|v| !v.is_empty())
                .map_or(default, |v| project_dir.join(v))
        };
        Self {
            project_dir: project_dir.to_owned(),
            harness,
            sensors_dir: pick("AIDLC_SENSORS_DIR", harness_root.join("sensors")),
            stages_dir: pick("AIDLC_STAGES_DIR", harness_root.join("aidlc-common/stages")),
            agents_dir: pick("AIDLC_AGENTS_DIR", harness_root.join("agents")),
            scopes_dir: pick("AIDLC_SCOPES_DIR", harness_root.join("scopes")),
            rules_dir: pick(
                "AIDLC_RULES_DIR",
                workspace_root(project_dir).join("spaces/default/memory"),
            ),
            stage_graph_path: pick(
                "AIDLC_STAGE_GRAPH",
                harness_root.join("tools/data/stage-graph.json"),
            ),
            scope_grid_path: pick(
                "AIDLC_SCOPE_GRID",
                harness_root.join("tools/data/scope-grid.json"),
            ),
            reference_tools_path: harness_root.join("tools/aidlc-version.ts"),
            harness_json_path: harness_root.join("tools/data/harness.json"),
            graph_format: None,
        }
    }

    /// The same layout, writing the graph in `format` (from `--graph-format`).
    #[must_use]
    pub fn with_graph_format(
        mut self,
        format: Option<crate::protocol::graph_format::GraphFormat>,
    ) -> Self {
        self.graph_format = format;
        self
    }

    /// Whether `path` is one of the compile's outputs (`stage-graph.json`, `scope-grid.json`),
    /// which later compiles read back. Compared as text: the listing joins every path onto the
    /// same project folder as the layout, so equal paths are equal strings (a component-wise
    /// comparison, for each of 10,000 inputs, was a visible part of a compile's record).
    pub fn is_output(&self, path: &Utf8Path) -> bool {
        path.as_str() == self.stage_graph_path.as_str()
            || path.as_str() == self.scope_grid_path.as_str()
    }

    /// Project-relative display form of `path` (`/` separators); absolute when outside.
    pub fn display(&self, path: &Utf8Path) -> Utf8PathBuf {
        let relative = path.strip_prefix(&self.project_dir).unwrap_or(path);
        Utf8PathBuf::from(crate::leaves::fs_util::to_posix(relative.as_str()))
    }
}

/// Why no project could be used.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(
        "no AI-DLC project found: neither {cwd} nor any folder above it {searched} holds a harness folder (.claude, .codex, .kiro, .cursor or .aidlc) with stage definitions"
    )]
    NotFound {
        cwd: Utf8PathBuf,
        searched: SearchLimit,
    },
    #[error(
        "not an AI-DLC project: {} {} no stage definitions (looked in {}); searched from {cwd} {searched}",
        english_list(harness_dirs),
        if harness_dirs.len() == 1 { "holds" } else { "hold" },
        english_list(stage_dirs)
    )]
    NotAnAidlcProject {
        cwd: Utf8PathBuf,
        /// The harness folders the search found, none holding a stage definition.
        harness_dirs: Vec<Utf8PathBuf>,
        /// Where their stage definitions would be.
        stage_dirs: Vec<Utf8PathBuf>,
        searched: SearchLimit,
    },
    #[error("the project folder {dir} does not exist")]
    MissingDir { dir: Utf8PathBuf },
    #[error(transparent)]
    NoHarness(#[from] NoHarnessFolder),
    #[error("the working folder is not valid UTF-8")]
    NonUtf8Cwd,
}

/// Where the upward search for a project stopped, as a message's end says it.
#[derive(Debug, Clone, PartialEq, Eq, strum::Display)]
pub enum SearchLimit {
    /// At the folder holding `.git`: a project never lies above its repository.
    #[strum(to_string = "up to the repository root {0}")]
    RepositoryRoot(Utf8PathBuf),
    /// Below the home folder: its harness folder is the agent's own settings (Claude Code's
    /// `~/.claude`), never a project.
    #[strum(to_string = "below the home folder {0} (whose own harness folder is never a project)")]
    HomeFolder(Utf8PathBuf),
    /// At the file system's root.
    #[strum(to_string = "up to the file system root")]
    FileSystemRoot,
}

fn english_list(paths: &[Utf8PathBuf]) -> String {
    let shown: Vec<&str> = paths.iter().map(|path| path.as_str()).collect();
    match shown.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `dir` without its `.` components: `--project-dir .` names the working folder itself, so
/// that every path the engine records relative to the project (audit rows, the verdict line)
/// is relative, not `/work/proj/./x`. A `..` stays: taking it off by hand would be wrong after
/// a symbolic link.
pub fn lexically_normal(dir: &Utf8Path) -> Utf8PathBuf {
    dir.components()
        .filter(|component| *component != camino::Utf8Component::CurDir)
        .collect()
}

/// The project folder: `explicit`, else `AIDLC_PROJECT_DIR`, else `CLAUDE_PROJECT_DIR`, else the
/// nearest ancestor of `cwd` with a harness folder that holds stage definitions ([`search_upwards`]).
/// Relative paths are taken from `cwd`.
pub fn find_project_dir(
    explicit: Option<&Utf8Path>,
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Utf8Path,
) -> Result<Utf8PathBuf, ProjectError> {
    let from_env = || {
        env("AIDLC_PROJECT_DIR")
            .or_else(|| env("CLAUDE_PROJECT_DIR"))
            .filter(|v| !v.is_empty())
            .map(Utf8PathBuf::from)
    };
    if let Some(dir) = explicit.map(Utf8Path::to_owned).or_else(from_env) {
        let dir = if dir.is_absolute() {
            dir
        } else {
            cwd.join(dir)
        };
        return if dir.is_dir() {
            Ok(dir)
        } else {
            Err(ProjectError::MissingDir { dir })
        };
    }
    search_upwards(env, cwd)
}

/// The nearest folder from `cwd` upwards with a harness folder that holds at least one stage
/// definition. Invariants: the search never goes above the first folder holding `.git` (the
/// repository root, which is still searched), never looks at the home folder (`$HOME`) or
/// above it, and passes over a harness folder without stage definitions (an agent's settings
/// in a folder that is not an AI-DLC project); when that was all it found, the error names each
/// such folder and where its stage definitions would be.
fn search_upwards(
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Utf8Path,
) -> Result<Utf8PathBuf, ProjectError> {
    // The home folder as given and as resolved: `cwd`'s ancestors are compared as they are
    // (resolving each would cost a system call per level).
    let home: Vec<Utf8PathBuf> = env("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| {
            let given = Utf8PathBuf::from(home);
            let canonical = given.canonicalize_utf8().unwrap_or_else(|_| given.clone());
            vec![given, canonical]
        })
        .unwrap_or_default();
    let mut harness_dirs = Vec::new();
    let mut stage_dirs = Vec::new();
    let mut searched = SearchLimit::FileSystemRoot;
    for dir in cwd.ancestors() {
        if home.iter().any(|home| home == dir) {
            searched = SearchLimit::HomeFolder(dir.to_owned());
            break;
        }
        for harness in harnesses_present(dir) {
            let stages_dir = Layout::new(dir, harness, env).stages_dir;
            if holds_a_stage_file(&stages_dir) {
                return Ok(dir.to_owned());
            }
            harness_dirs.push(dir.join(harness.dir_name()));
            stage_dirs.push(stages_dir);
        }
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            searched = SearchLimit::RepositoryRoot(dir.to_owned());
            break;
        }
    }
    let cwd = cwd.to_owned();
    if harness_dirs.is_empty() {
        Err(ProjectError::NotFound { cwd, searched })
    } else {
        Err(ProjectError::NotAnAidlcProject {
            cwd,
            harness_dirs,
            stage_dirs,
            searched,
        })
    }
}
