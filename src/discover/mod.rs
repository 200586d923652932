//! Finding the project, its harness folder, and the files a compile reads.
//!
//! - this file: the project folder, the harness, and the [`Layout`] of input folders;
//! - [`listing`]: directory listings, in the reference's discovery order (no file is opened);
//! - [`inputs`]: reading files into salsa inputs with a stamp each, and refreshing them.
//!
//! This module owns every directory listing and file read of the compile. It never parses YAML.

mod inputs;
mod listing;

pub use inputs::{
    DURABLE_THRESHOLD, FileStamp, HELPER_THREAD_THRESHOLD, InputChanges, MAX_GENERATED_BYTES,
    MAX_INPUT_BYTES, PARALLEL_THRESHOLD, ProjectInputs, ReadFile, Reread, StatStamp,
    durability_for, hash_hex, load_listing, load_project, load_read_files, new_project, read_files,
    read_input, read_input_contents, worth_a_helper_thread, worth_parallel,
};
pub use listing::{
    InputListing, list_markdown_files, list_rule_files, list_sensor_files, list_stage_files,
};

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};

/// The agent harness whose folder holds the installed framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Harness {
    Claude,
    Codex,
    Kiro,
    Cursor,
    Opencode,
}

impl Harness {
    /// In the order used to pick a default when several harness folders exist.
    pub const ALL: [Harness; 5] = [
        Harness::Claude,
        Harness::Codex,
        Harness::Kiro,
        Harness::Cursor,
        Harness::Opencode,
    ];

    /// The folder under the project root, e.g. `.claude` (opencode uses `.aidlc`).
    pub fn dir_name(self) -> &'static str {
        match self {
            Harness::Claude => ".claude",
            Harness::Codex => ".codex",
            Harness::Kiro => ".kiro",
            Harness::Cursor => ".cursor",
            Harness::Opencode => ".aidlc",
        }
    }

    /// The harness's own rules folder name, as the reference names it in the
    /// `GUARDRAIL_LOADED` row's `Path` (`.kiro/steering/`, `.codex/aidlc-rules/`, else `rules`).
    pub fn rules_subdir(self) -> &'static str {
        match self {
            Harness::Kiro => "steering",
            Harness::Codex => "aidlc-rules",
            Harness::Claude | Harness::Cursor | Harness::Opencode => "rules",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Kiro => "kiro",
            Harness::Cursor => "cursor",
            Harness::Opencode => "opencode",
        }
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The harness folders present in `project`, in [`Harness::ALL`] order.
pub fn harnesses_present(project: &Utf8Path) -> Vec<Harness> {
    Harness::ALL
        .into_iter()
        .filter(|harness| project.join(harness.dir_name()).is_dir())
        .collect()
}

/// Where the workspace of intents, spaces and rules lives.
pub fn workspace_root(project: &Utf8Path) -> Utf8PathBuf {
    project.join("aidlc")
}

/// Every environment variable that moves a folder or file a compile reads or writes: the
/// project folder ([`find_project_dir`]) and the overrides of [`Layout::new`]. A benchmark or a tool
/// that runs `aidlc` on a folder of its own removes them from the child's environment.
pub const LAYOUT_ENVIRONMENT_VARIABLES: [&str; 9] = [
    "AIDLC_PROJECT_DIR",
    "CLAUDE_PROJECT_DIR",
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
        Utf8PathBuf::from(crate::fs_util::to_posix(relative.as_str()))
    }
}

/// Why no project could be used.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(
        "no AI-DLC project found: neither {cwd} nor any folder above it holds a harness folder (.claude, .codex, .kiro, .cursor or .aidlc)"
    )]
    NotFound { cwd: Utf8PathBuf },
    #[error("the project folder {dir} does not exist")]
    MissingDir { dir: Utf8PathBuf },
    #[error("compile requires an installed project harness at {dir}")]
    NoHarness { dir: Utf8PathBuf },
    #[error("the working folder is not valid UTF-8")]
    NonUtf8Cwd,
}

/// The project folder: `explicit`, else `AIDLC_PROJECT_DIR`, else `CLAUDE_PROJECT_DIR`, else the
/// nearest ancestor of `cwd` with a harness folder. Relative paths are taken from `cwd`.
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
    cwd.ancestors()
        .find(|dir| !harnesses_present(dir).is_empty())
        .map(Utf8Path::to_owned)
        .ok_or_else(|| ProjectError::NotFound {
            cwd: cwd.to_owned(),
        })
}

/// `requested`, else the harness present (`.claude` first when several are). The chosen
/// harness folder must exist.
pub fn pick_harness(
    project_dir: &Utf8Path,
    requested: Option<Harness>,
) -> Result<Harness, ProjectError> {
    let harness = match requested {
        Some(harness) => harness,
        None => *harnesses_present(project_dir)
            .first()
            .ok_or_else(|| ProjectError::NoHarness {
                dir: project_dir.join(".claude"),
            })?,
    };
    let dir = project_dir.join(harness.dir_name());
    if dir.is_dir() {
        Ok(harness)
    } else {
        Err(ProjectError::NoHarness { dir })
    }
}
