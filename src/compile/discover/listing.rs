//! Directory listings: which files a compile reads, in a stable order. No file is opened here.

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::db::SkippedSensorFile;
use crate::compile::discover::Layout;
use crate::leaves::diagnostics::Code;

/// Every path a compile reads, as absolute paths, each list in discovery order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputListing {
    pub sensors: Vec<Utf8PathBuf>,
    /// Near misses in the sensors and stages folders (warned about, never read).
    pub skipped_sensors: Vec<SkippedSensorFile>,
    /// `(phase folder name, path)`.
    pub stages: Vec<(String, Utf8PathBuf)>,
    pub agents: Vec<Utf8PathBuf>,
    pub scopes: Vec<Utf8PathBuf>,
    /// `(path under the rules folder, path)`.
    pub rules: Vec<(String, Utf8PathBuf)>,
    pub existing_graph: Option<Utf8PathBuf>,
    pub existing_grid: Option<Utf8PathBuf>,
    /// The reference's version stamp, on an install the reference made.
    pub reference_tools: Option<Utf8PathBuf>,
    /// The install's plugin selection, when the file exists.
    pub harness_json: Option<Utf8PathBuf>,
}

impl InputListing {
    /// List every input of `layout`. Missing folders list as empty.
    pub fn of(layout: &Layout) -> Self {
        let (sensors, mut skipped_sensors) = list_sensor_files(&layout.sensors_dir);
        let (stages, skipped_stages) =
            stage_listing(&layout.stages_dir, &layout.display(&layout.stages_dir));
        skipped_sensors.extend(skipped_stages);
        for skipped_file in &mut skipped_sensors {
            skipped_file.path = layout.display(&skipped_file.path);
        }
        let present = |path: &Utf8PathBuf| path.is_file().then(|| path.clone());
        Self {
            sensors,
            skipped_sensors,
            stages,
            agents: list_markdown_files(&layout.agents_dir),
            scopes: list_markdown_files(&layout.scopes_dir),
            rules: list_rule_files(&layout.rules_dir),
            existing_graph: present(&layout.stage_graph_path),
            existing_grid: present(&layout.scope_grid_path),
            reference_tools: present(&layout.reference_tools_path),
            harness_json: present(&layout.harness_json_path),
        }
    }

    /// Every file the compile opens, in a stable order (the lists above, in field order).
    pub fn read_paths(&self) -> impl Iterator<Item = &Utf8Path> {
        self.sensors
            .iter()
            .chain(self.stages.iter().map(|(_, path)| path))
            .chain(&self.agents)
            .chain(&self.scopes)
            .chain(self.rules.iter().map(|(_, path)| path))
            .chain(&self.existing_graph)
            .chain(&self.existing_grid)
            .chain(&self.reference_tools)
            .chain(&self.harness_json)
            .map(Utf8PathBuf::as_path)
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

/// Sorted names of the entries of `dir` (empty when it does not exist or cannot be listed).
fn sorted_entries(dir: &Utf8Path) -> Vec<(String, bool)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| name_and_is_dir(&entry))
        .collect();
    names.sort();
    names
}

/// An entry's name (`None` when it is not UTF-8 or its type cannot be read) and whether it is
/// a folder or a link to one. The entry's own type comes with the listing; only a symbolic
/// link costs a `stat` (to follow it to a folder or a file).
fn name_and_is_dir(entry: &std::fs::DirEntry) -> Option<(String, bool)> {
    let name = entry.file_name().into_string().ok()?;
    let file_type = entry.file_type().ok()?;
    let is_dir = file_type.is_dir()
        || (file_type.is_symlink() && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()));
    Some((name, is_dir))
}

/// Whether [`list_stage_files`] would list at least one file, found without sorting or
/// keeping anything, stopping at the first: the project search asks this of every harness
/// folder it passes.
pub fn holds_a_stage_file(stages_dir: &Utf8Path) -> bool {
    let Ok(entries) = std::fs::read_dir(stages_dir) else {
        return false;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| name_and_is_dir(&entry))
        .filter(|(name, is_dir)| *is_dir && !name.starts_with('.'))
        .any(|(phase, _)| {
            std::fs::read_dir(stages_dir.join(phase)).is_ok_and(|inner| {
                inner
                    .filter_map(Result::ok)
                    .filter_map(|entry| name_and_is_dir(&entry))
                    .any(|(name, is_dir)| !is_dir && has_md_extension(&name))
            })
        })
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
                        code: Code::SkippedSensorFile,
                    });
                }
            }
            continue;
        }
        if crate::compile::syntax::manifest::sensor_id_from_file_name(&name).is_some() {
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
                code: Code::SkippedSensorFile,
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
    stage_listing(stages_dir, stages_dir).0
}

/// The stage files (as [`list_stage_files`] gives them) and, from the same reading of each
/// folder, the files in the stages folder that look like stage definitions but are not read:
/// directly in the stages folder (not in a phase folder), nested below a phase folder, or with
/// another extension than `.md` (`.markdown`, `.MD`). Hidden entries and `README.md` are not
/// reported. The help names paths under `display_root` (the stages folder as the user sees
/// it). One walk, so a compile lists each folder once.
pub fn stage_listing(
    stages_dir: &Utf8Path,
    display_root: &Utf8Path,
) -> (Vec<(String, Utf8PathBuf)>, Vec<SkippedSensorFile>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let skip = |path: Utf8PathBuf, reason: &str, help: String| SkippedSensorFile {
        path,
        reason: reason.to_owned(),
        help,
        code: Code::SkippedStageFile,
    };
    for (name, is_dir) in sorted_entries(stages_dir) {
        if name.starts_with('.') {
            continue;
        }
        let path = stages_dir.join(&name);
        if !is_dir {
            if looks_like_a_stage_file(&name) {
                skipped.push(skip(
                    path,
                    "is not in a phase folder, so it is not loaded (stages are read from `<stages>/<phase>/<slug>.md` only)",
                    format!(
                        "move it to {} with <phase> its phase (ideation, inception, construction, operation, …)",
                        display_root.join("<phase>").join(markdown_name(&name))
                    ),
                ));
            }
            continue;
        }
        for (inner, inner_is_dir) in sorted_entries(&path) {
            let inner_path = path.join(&inner);
            if !inner_is_dir && has_md_extension(&inner) {
                files.push((name.clone(), inner_path));
                continue;
            }
            if inner.starts_with('.') {
                continue;
            }
            if inner_is_dir {
                for (nested, nested_is_dir) in sorted_entries(&inner_path) {
                    if !nested_is_dir
                        && !nested.starts_with('.')
                        && looks_like_a_stage_file(&nested)
                    {
                        skipped.push(skip(
                            inner_path.join(&nested),
                            "is nested below its phase folder; discovery never reads subfolders of a phase folder",
                            format!(
                                "move it to {}",
                                display_root.join(&name).join(markdown_name(&nested))
                            ),
                        ));
                    }
                }
            } else if looks_like_a_stage_file(&inner) {
                skipped.push(skip(
                    inner_path,
                    "does not end in `.md`, so it is not loaded and its stage is not compiled",
                    format!(
                        "rename it to {}",
                        display_root.join(&name).join(markdown_name(&inner))
                    ),
                ));
            }
        }
    }
    (files, skipped)
}

/// A Markdown file by its extension, whatever its case (`.md`, `.markdown`, `.mdown`, `.mkd`),
/// other than a `README`.
fn looks_like_a_stage_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let Some((stem, extension)) = lower.rsplit_once('.') else {
        return false;
    };
    stem != "readme" && matches!(extension, "md" | "markdown" | "mdown" | "mkd" | "mkdn")
}

/// `My-Stage.markdown` → `My-Stage.md`: the same stem with the extension discovery reads.
fn markdown_name(name: &str) -> String {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    format!("{stem}.md")
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
            .is_some_and(crate::compile::syntax::stage::is_kebab_case);
        if !is_dir && stem_ok {
            files.push((format!("phases/{name}"), phases_dir.join(name)));
        }
    }
    files
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

    /// The project search's question, answered by a short walk, has the full listing's answer
    /// for each shape of stages folder: empty, files only at the top, hidden phase folders,
    /// other extensions, nested files, a link to a phase folder, a folder named like a stage.
    #[test]
    fn holds_a_stage_file_says_what_the_full_listing_says() {
        let layouts: [&[&str]; 10] = [
            &[],
            &["top.md"],
            &[".hidden/a.md"],
            &["inception/a.markdown", "inception/b.MD"],
            &["inception/nested/a.md"],
            &["inception/a.md"],
            &["inception/README.md"],
            &["inception/.a.md"],
            &["inception/folder.md/x.txt"],
            &["ideation/", "construction/units/a.md", "operation/b.md"],
        ];
        for (index, layout) in layouts.iter().enumerate() {
            let temp = tempfile::tempdir().unwrap();
            let stages = Utf8PathBuf::from_path_buf(temp.path().join("stages")).unwrap();
            std::fs::create_dir_all(&stages).unwrap();
            for file in *layout {
                let path = stages.join(file);
                if file.ends_with('/') {
                    std::fs::create_dir_all(&path).unwrap();
                } else {
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(&path, "---\n---\n").unwrap();
                }
            }
            assert_eq!(
                holds_a_stage_file(&stages),
                !list_stage_files(&stages).is_empty(),
                "layout {index}: {layout:?}"
            );
        }
        let temp = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(temp.path().to_owned()).unwrap();
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::fs::write(root.join("elsewhere/a.md"), "").unwrap();
        std::fs::create_dir_all(root.join("stages")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("stages/inception")).unwrap();
        assert!(holds_a_stage_file(&root.join("stages")));
        assert!(!list_stage_files(&root.join("stages")).is_empty());
        assert!(!holds_a_stage_file(&root.join("missing")));
    }
}
