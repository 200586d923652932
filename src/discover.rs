//! Finding the project, its harness folder, and the files a compile reads.
//!
//! This module owns every directory listing of the compile. It returns paths and raw bytes;
//! it never parses YAML.

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
        }
    }

    /// Project-relative display form of `path` (`/` separators); absolute when outside.
    pub fn display(&self, path: &Utf8Path) -> Utf8PathBuf {
        let relative = path.strip_prefix(&self.project_dir).unwrap_or(path);
        Utf8PathBuf::from(crate::fs_util::to_posix(relative.as_str()))
    }
}

/// The reference's discovery compares the `.md` suffix case-sensitively; so do we.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "matches the reference's discovery rule"
)]
fn has_md_extension(name: &str) -> bool {
    name.ends_with(".md")
}

/// Largest input file the compile reads. Frontmatter files are a few KiB; anything this big is
/// almost certainly a mistake (a binary, a log) and would slow every hook down.
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// Read one input file into [`FileContents`], never failing.
pub fn read_contents(path: &Utf8Path) -> FileContents {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_INPUT_BYTES => {
            return FileContents::TooLarge { size: meta.len() };
        }
        Ok(_) => {}
        Err(error) => return FileContents::Unreadable(error.to_string()),
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return FileContents::Unreadable(error.to_string()),
    };
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return FileContents::Binary;
    }
    match String::from_utf8(bytes) {
        Ok(text) => FileContents::Text(text),
        Err(error) => FileContents::InvalidUtf8 {
            valid_up_to: error.utf8_error().valid_up_to(),
        },
    }
}

/// Sorted names of the entries of `dir` (empty when it does not exist or cannot be listed).
fn sorted_entries(dir: &Utf8Path) -> Vec<(String, bool)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let is_dir = entry.file_type().ok()?.is_dir()
                || std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            Some((name, is_dir))
        })
        .collect();
    names.sort();
    names
}

/// The files of the sensors folder that load, and the near misses that do not.
pub fn list_sensor_files(sensors_dir: &Utf8Path) -> (Vec<Utf8PathBuf>, Vec<SkippedSensorFile>) {
    let mut loaded = Vec::new();
    let mut skipped = Vec::new();
    for (name, is_dir) in sorted_entries(sensors_dir) {
        let path = sensors_dir.join(&name);
        if name.starts_with('.') {
            continue;
        }
        if is_dir {
            for (inner, inner_is_dir) in sorted_entries(&path) {
                if !inner_is_dir && looks_like_a_manifest(&inner) {
                    skipped.push(SkippedSensorFile {
                        path: path.join(&inner),
                        reason:
                            "is nested in a subfolder; the flat sensor scan never reads subfolders"
                                .to_owned(),
                        help: format!(
                            "move it to the sensors folder as {}",
                            suggested_manifest_name(&inner)
                        ),
                    });
                }
            }
            continue;
        }
        if crate::syntax::manifest::sensor_id_from_file_name(&name).is_some() {
            loaded.push(path);
        } else if looks_like_a_manifest(&name) {
            let suggestion = suggested_manifest_name(&name);
            skipped.push(SkippedSensorFile {
                path,
                reason: "does not match `aidlc-<id>.md` (lower-case id), so it is not loaded and never fires".to_owned(),
                help: format!(
                    "rename it to {suggestion} and set `id: {}`",
                    &suggestion["aidlc-".len()..suggestion.len() - 3]
                ),
            });
        }
    }
    (loaded, skipped)
}

fn looks_like_a_manifest(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower != "readme.md" && (has_md_extension(&lower) || lower.starts_with("aidlc-"))
}

/// `Aidlc-My_Check.MD` → `aidlc-my-check.md`.
fn suggested_manifest_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or_default();
    let stem = stem.strip_prefix("aidlc-").unwrap_or(stem);
    let mut id: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while id.starts_with(|c: char| !c.is_ascii_lowercase()) && !id.is_empty() {
        id.remove(0);
    }
    if id.is_empty() {
        id.push_str("sensor");
    }
    format!("aidlc-{id}.md")
}

/// Stage files as `(phase folder name, path)`, folders and files each in sorted order.
pub fn list_stage_files(stages_dir: &Utf8Path) -> Vec<(String, Utf8PathBuf)> {
    let mut files = Vec::new();
    for (phase_dir, is_dir) in sorted_entries(stages_dir) {
        if !is_dir || phase_dir.starts_with('.') {
            continue;
        }
        for (name, is_dir) in sorted_entries(&stages_dir.join(&phase_dir)) {
            if !is_dir && has_md_extension(&name) {
                files.push((phase_dir.clone(), stages_dir.join(&phase_dir).join(name)));
            }
        }
    }
    files
}

/// Markdown files directly in `dir`, sorted.
pub fn list_markdown_files(dir: &Utf8Path) -> Vec<Utf8PathBuf> {
    sorted_entries(dir)
        .into_iter()
        .filter(|(name, is_dir)| !is_dir && has_md_extension(name))
        .map(|(name, _)| dir.join(name))
        .collect()
}

/// Rule files: `org.md`, `team.md`, `project.md` and `phases/<phase>.md`, as `(relative, path)`.
pub fn list_rule_files(rules_dir: &Utf8Path) -> Vec<(String, Utf8PathBuf)> {
    let mut files: Vec<(String, Utf8PathBuf)> = ["org.md", "team.md", "project.md"]
        .into_iter()
        .filter(|name| rules_dir.join(name).is_file())
        .map(|name| (name.to_owned(), rules_dir.join(name)))
        .collect();
    let phases_dir = rules_dir.join("phases");
    for (name, is_dir) in sorted_entries(&phases_dir) {
        let stem_ok = name
            .strip_suffix(".md")
            .is_some_and(crate::syntax::stage::is_kebab_case);
        if !is_dir && stem_ok {
            files.push((format!("phases/{name}"), phases_dir.join(name)));
        }
    }
    files
}

use crate::db::{
    CompilerDatabase, FileContents, Project, RuleFileEntry, SkippedSensorFile, SourceFile,
    StageFileEntry,
};

/// Read every input of a compile into a fresh set of salsa inputs.
pub fn load_project(db: &mut CompilerDatabase, layout: &Layout) -> Project {
    let new_file = |db: &CompilerDatabase, path: &Utf8Path| {
        SourceFile::new(db, layout.display(path), read_contents(path))
    };
    let (sensor_paths, mut skipped) = list_sensor_files(&layout.sensors_dir);
    for skipped_file in &mut skipped {
        skipped_file.path = layout.display(&skipped_file.path);
    }
    let sensor_files = sensor_paths.iter().map(|path| new_file(db, path)).collect();
    let stage_files = list_stage_files(&layout.stages_dir)
        .into_iter()
        .map(|(phase_dir, path)| StageFileEntry {
            file: new_file(db, &path),
            phase_dir,
        })
        .collect();
    let agent_files = list_markdown_files(&layout.agents_dir)
        .iter()
        .map(|path| new_file(db, path))
        .collect();
    let scope_files = list_markdown_files(&layout.scopes_dir)
        .iter()
        .map(|path| new_file(db, path))
        .collect();
    let rule_files = list_rule_files(&layout.rules_dir)
        .into_iter()
        .map(|(relative, path)| RuleFileEntry {
            file: new_file(db, &path),
            relative,
        })
        .collect();
    let existing_graph = layout
        .stage_graph_path
        .is_file()
        .then(|| new_file(db, &layout.stage_graph_path));
    let existing_grid = layout
        .scope_grid_path
        .is_file()
        .then(|| new_file(db, &layout.scope_grid_path));
    Project::new(
        db,
        layout.harness.dir_name().to_owned(),
        sensor_files,
        skipped,
        stage_files,
        agent_files,
        scope_files,
        rule_files,
        layout.display(&layout.rules_dir).to_string(),
        existing_graph,
        existing_grid,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_loadable_names() {
        assert_eq!(
            suggested_manifest_name("Aidlc-My_Check.MD"),
            "aidlc-my-check.md"
        );
        assert_eq!(suggested_manifest_name("lint.md"), "aidlc-lint.md");
        assert_eq!(suggested_manifest_name("aidlc-x.yaml"), "aidlc-x.md");
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
