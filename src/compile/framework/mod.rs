//! The built-in default AI-DLC framework that `aidlc init` writes into a project.
//!
//! Every file is embedded in the binary. Harness files land under the harness folder (for
//! example `.claude/`); workspace files land under the project root. `init` never overwrites a
//! file a person has changed unless asked to with `force`; the project's `.gitignore` only ever
//! gains the entries of the machine-local runtime files (`gitignore`).

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::Harness;
use crate::leaves::fs_util::Flush;
use crate::leaves::fs_util::contained::{self, FileError, ProjectPath};

/// Which folder an embedded file is installed relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InstallRoot {
    /// The project's harness folder, e.g. `.claude/`.
    Harness,
    /// The project root.
    Workspace,
}

/// One file of the default framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedFile {
    pub root: InstallRoot,
    /// Relative to [`EmbeddedFile::root`], with `/` separators.
    pub path: &'static str,
    pub contents: &'static str,
}

impl EmbeddedFile {
    /// The path relative to the project root, for the given harness.
    #[must_use]
    pub fn project_path(&self, harness: Harness) -> Utf8PathBuf {
        match self.root {
            InstallRoot::Harness => Utf8Path::new(harness.dir_name()).join(self.path),
            InstallRoot::Workspace => Utf8PathBuf::from(self.path),
        }
    }
}

/// What `init` did, with project-relative paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InitReport {
    /// Files created or replaced.
    pub written: Vec<Utf8PathBuf>,
    /// Files already present with the same bytes.
    pub unchanged: Vec<Utf8PathBuf>,
    /// Files present with different bytes, left alone because `force` was not given.
    pub skipped: Vec<Utf8PathBuf>,
}

/// Why `init` stopped.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("cannot create {path}: it exists and is not a directory")]
    NotADirectory { path: Utf8PathBuf },
    /// The file system's refusal to `create`, `read` or `write` a file, or the project's
    /// refusal of its path.
    #[error(transparent)]
    File(#[from] FileError),
}

/// Write `bytes` at `relative` under `project_dir` through the file-system layer (its folders
/// resolved inside the project first), and report it written.
fn write_init_file(
    project_dir: &Utf8Path,
    relative: Utf8PathBuf,
    bytes: &[u8],
    report: &mut InitReport,
) -> Result<(), InitError> {
    let path = ProjectPath::parse(project_dir, relative.as_str())
        .map_err(|refusal| FileError::outside(&project_dir.join(&relative), refusal))?;
    contained::write_file(&path, bytes, Flush::Yes)
        .map_err(|error| FileError::of_write(&path.absolute(), error))?;
    report.written.push(relative);
    Ok(())
}

/// The file at `path` as `read` reads it, `None` when there is none.
fn read_existing<T>(
    path: &Utf8Path,
    read: impl FnOnce(&Utf8Path) -> Result<T, crate::leaves::fs_util::InputError>,
) -> Result<Option<T>, InitError> {
    match read(path) {
        Ok(existing) => Ok(Some(existing)),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(FileError::io("read", path, error.into_io_error()).into()),
    }
}

/// Install the default framework into `project_dir` for `harness`.
///
/// Creates `project_dir` when it is missing. A file already present with identical bytes is
/// reported as unchanged; one with different bytes is skipped (never overwritten) unless
/// `force` is set.
///
/// # Errors
///
/// [`InitError::NotADirectory`] when `project_dir` is an existing non-directory; the other
/// variants when a folder cannot be created or a file cannot be read or written. Files handled
/// before the error stay in place.
pub fn init_project(
    project_dir: &Utf8Path,
    harness: Harness,
    force: bool,
) -> Result<InitReport, InitError> {
    if project_dir.exists() && !project_dir.is_dir() {
        return Err(InitError::NotADirectory {
            path: project_dir.to_owned(),
        });
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "the project root itself, named by the user: every file below it goes through the file-system layer"
    )]
    let created = std::fs::create_dir_all(project_dir);
    created.map_err(|source| FileError::io("create", project_dir, source))?;
    let mut report = InitReport::default();
    let embedded = DEFAULT_FRAMEWORK
        .iter()
        .map(|file| (file.project_path(harness), file.contents));
    for (relative, contents) in embedded.chain(harness_own_file(harness)) {
        install_file(
            project_dir,
            relative,
            contents.as_bytes(),
            force,
            &mut report,
        )?;
    }
    record_the_harness_name(project_dir, harness, &mut report)?;
    add_gitignore_entries(project_dir, harness, &mut report)?;
    Ok(report)
}

/// Write `bytes` at `relative` unless the file already holds them (unchanged) or holds other
/// bytes and `force` is not set (skipped).
fn install_file(
    project_dir: &Utf8Path,
    relative: Utf8PathBuf,
    bytes: &[u8],
    force: bool,
    report: &mut InitReport,
) -> Result<(), InitError> {
    match read_existing(
        &project_dir.join(&relative),
        crate::leaves::fs_util::read_input,
    )? {
        Some(existing) if existing == bytes => report.unchanged.push(relative),
        Some(_) if !force => report.skipped.push(relative),
        _ => write_init_file(project_dir, relative, bytes, report)?,
    }
    Ok(())
}

/// The Kiro CLI conductor agent, `.kiro/agents/aidlc.json`: the agent whose configuration
/// Kiro CLI reads hooks from, so that `aidlc hook install` has it to register them in.
const KIRO_CLI_CONDUCTOR_AGENT: &str = include_str!("assets/kiro/conductor-agent.json");

/// The file only `harness`'s projects get, relative to the project root: Kiro CLI's conductor
/// agent, where its hooks are registered.
fn harness_own_file(harness: Harness) -> Option<(Utf8PathBuf, &'static str)> {
    (harness == Harness::Kiro).then(|| {
        let agent = crate::harness::install::hook_registration(harness).path;
        (agent, KIRO_CLI_CONDUCTOR_AGENT)
    })
}

/// `<harness>/tools/data/harness.json` naming the harness the project was made for (`name`,
/// as the reference's installs record it; Kiro CLI and Kiro IDE share `.kiro`, and this is
/// what tells them apart), with its folder and rules subfolder. Only created: an existing
/// file (its plugin selection included) is never replaced, `force` or not.
fn record_the_harness_name(
    project_dir: &Utf8Path,
    harness: Harness,
    report: &mut InitReport,
) -> Result<(), InitError> {
    let relative = Utf8Path::new(harness.dir_name()).join(crate::harness::HARNESS_JSON_FILE);
    if std::fs::symlink_metadata(project_dir.join(&relative)).is_ok() {
        report.unchanged.push(relative);
        return Ok(());
    }
    let text = format!(
        "{{\n  \"name\": \"{}\",\n  \"harnessDir\": \"{}\",\n  \"rulesSubdir\": \"{}\"\n}}\n",
        harness.name(),
        harness.dir_name(),
        harness.rules_subdir()
    );
    write_init_file(project_dir, relative, text.as_bytes(), report)
}

/// The project's `.gitignore` with the runtime entries added (created when missing); a file
/// that already has them all is unchanged.
fn add_gitignore_entries(
    project_dir: &Utf8Path,
    harness: Harness,
    report: &mut InitReport,
) -> Result<(), InitError> {
    let relative = Utf8PathBuf::from(crate::harness::gitignore::GITIGNORE_FILE);
    let before = read_existing(
        &project_dir.join(&relative),
        crate::leaves::fs_util::read_input_text,
    )?;
    let change =
        crate::harness::gitignore::with_entries(harness, before.as_deref().unwrap_or_default());
    if change.added.is_empty() {
        report.unchanged.push(relative);
        return Ok(());
    }
    write_init_file(project_dir, relative, change.after.as_bytes(), report)
}

/// The assets installed under each root: every file of `assets/harness/` and
/// `assets/workspace/`, at its path below that folder.
static ASSET_FOLDERS: [(InstallRoot, include_dir::Dir<'static>); 2] = [
    (
        InstallRoot::Harness,
        include_dir::include_dir!("$CARGO_MANIFEST_DIR/src/compile/framework/assets/harness"),
    ),
    (
        InstallRoot::Workspace,
        include_dir::include_dir!("$CARGO_MANIFEST_DIR/src/compile/framework/assets/workspace"),
    ),
];

/// Every file of the default framework, sorted by (root, path).
pub static DEFAULT_FRAMEWORK: std::sync::LazyLock<Vec<EmbeddedFile>> =
    std::sync::LazyLock::new(|| {
        let mut files = Vec::new();
        for (root, folder) in &ASSET_FOLDERS {
            push_embedded_files(*root, folder, &mut files);
        }
        files.sort_unstable_by_key(|file| (file.root, file.path));
        files
    });

/// The files of `folder` and of every folder below it, as installed under `root`.
fn push_embedded_files(
    root: InstallRoot,
    folder: &'static include_dir::Dir<'static>,
    files: &mut Vec<EmbeddedFile>,
) {
    for entry in folder.entries() {
        match entry {
            include_dir::DirEntry::Dir(folder) => push_embedded_files(root, folder, files),
            include_dir::DirEntry::File(file) => files.push(EmbeddedFile {
                root,
                path: file.path().to_str().expect("asset paths are UTF-8"),
                contents: file.contents_utf8().expect("assets are UTF-8 text"),
            }),
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn harness_files(prefix: &str) -> Vec<&'static EmbeddedFile> {
        DEFAULT_FRAMEWORK
            .iter()
            .filter(|f| f.root == InstallRoot::Harness && f.path.starts_with(prefix))
            .collect()
    }

    /// The frontmatter lines of a file, or `None` when it has none.
    fn frontmatter(contents: &str) -> Option<Vec<&str>> {
        let rest = contents.strip_prefix("---\n")?;
        let end = rest.find("\n---\n")?;
        Some(rest[..end].lines().collect())
    }

    fn scalar<'a>(lines: &[&'a str], key: &str) -> Option<&'a str> {
        lines
            .iter()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
            .map(str::trim)
    }

    fn block_list<'a>(lines: &[&'a str], key: &str) -> Vec<&'a str> {
        let header = format!("{key}:");
        let Some(start) = lines.iter().position(|line| *line == header) else {
            return Vec::new();
        };
        lines[start + 1..]
            .iter()
            .map_while(|line| line.strip_prefix("  - "))
            .collect()
    }

    fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().join("project")).unwrap();
        (dir, project)
    }

    #[test]
    fn list_is_sorted_and_unique() {
        let keys: Vec<_> = DEFAULT_FRAMEWORK.iter().map(|f| (f.root, f.path)).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn stages_sit_in_their_phase_folders() {
        let stages = harness_files("aidlc-common/stages/");
        assert_eq!(stages.len(), 33);
        for (phase, count) in [
            ("initialization", 3),
            ("ideation", 7),
            ("inception", 9),
            ("construction", 7),
            ("operation", 7),
        ] {
            let in_phase: Vec<_> = stages
                .iter()
                .filter(|f| f.path.split('/').nth(2) == Some(phase))
                .collect();
            assert_eq!(in_phase.len(), count, "{phase}");
            for file in in_phase {
                let lines = frontmatter(file.contents).unwrap();
                assert_eq!(scalar(&lines, "phase"), Some(phase), "{}", file.path);
                let stem = file
                    .path
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .strip_suffix(".md")
                    .unwrap();
                assert_eq!(scalar(&lines, "slug"), Some(stem), "{}", file.path);
            }
        }
    }

    #[test]
    fn counts_of_the_other_kinds() {
        assert_eq!(harness_files("sensors/").len(), 6);
        assert_eq!(harness_files("agents/").len(), 14);
        assert_eq!(harness_files("scopes/").len(), 11);
        let rules = DEFAULT_FRAMEWORK
            .iter()
            .filter(|f| {
                f.root == InstallRoot::Workspace
                    && f.path.starts_with("aidlc/spaces/default/memory/")
            })
            .count();
        assert_eq!(rules, 7);
    }

    #[test]
    fn sensor_ids_match_file_names() {
        for file in harness_files("sensors/") {
            let lines = frontmatter(file.contents).unwrap();
            let id = scalar(&lines, "id").unwrap();
            assert_eq!(file.path, format!("sensors/aidlc-{id}.md"));
            assert_eq!(
                scalar(&lines, "command"),
                Some(format!("aidlc engine sensor-{id}").as_str())
            );
        }
    }

    #[test]
    fn stage_agents_have_agent_files() {
        let agents: BTreeSet<String> = harness_files("agents/")
            .iter()
            .map(|f| {
                scalar(&frontmatter(f.contents).unwrap(), "name")
                    .unwrap()
                    .to_owned()
            })
            .collect();
        for file in harness_files("agents/") {
            let name = scalar(&frontmatter(file.contents).unwrap(), "name").unwrap();
            assert_eq!(file.path, format!("agents/{name}.md"));
        }
        for file in harness_files("aidlc-common/stages/") {
            let lines = frontmatter(file.contents).unwrap();
            let mut named: Vec<&str> = block_list(&lines, "support_agents");
            named.extend(scalar(&lines, "lead_agent"));
            named.extend(scalar(&lines, "reviewer"));
            assert!(scalar(&lines, "lead_agent").is_some(), "{}", file.path);
            for agent in named.into_iter().filter(|a| *a != "orchestrator") {
                assert!(
                    agents.contains(agent),
                    "{}: {agent} has no agent file",
                    file.path
                );
            }
        }
    }

    #[test]
    fn stage_sensors_have_manifests() {
        let ids: BTreeSet<&str> = harness_files("sensors/")
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix("sensors/aidlc-")
                    .unwrap()
                    .strip_suffix(".md")
                    .unwrap()
            })
            .collect();
        for file in harness_files("aidlc-common/stages/") {
            for sensor in block_list(&frontmatter(file.contents).unwrap(), "sensors") {
                assert!(
                    ids.contains(sensor),
                    "{}: unknown sensor {sensor}",
                    file.path
                );
            }
        }
    }

    #[test]
    fn no_comments_on_frontmatter_lines() {
        for file in DEFAULT_FRAMEWORK.iter() {
            let lines = frontmatter(file.contents);
            assert_eq!(
                lines.is_some(),
                file.root == InstallRoot::Harness && !file.path.starts_with("tools/"),
                "{}",
                file.path
            );
            for line in lines.unwrap_or_default() {
                assert!(!line.contains(" #"), "{}: {line}", file.path);
            }
        }
    }

    #[test]
    fn gitignore_beside_the_outputs_ignores_the_compile_fingerprint() {
        let gitignore = harness_files("tools/data/.gitignore");
        assert_eq!(gitignore.len(), 1);
        let pattern = format!(
            "/{}",
            crate::harness::gitignore::COMPILE_FINGERPRINT_FILE_NAME
        );
        assert!(gitignore[0].contents.lines().any(|line| line == pattern));
    }

    #[test]
    fn init_writes_then_reports_unchanged() {
        let (_dir, project) = temp_project();
        let first = init_project(&project, Harness::Claude, false).unwrap();
        assert_eq!(
            first.written.len(),
            DEFAULT_FRAMEWORK.len() + 2,
            "and harness.json and .gitignore"
        );
        assert_eq!(
            std::fs::read_to_string(project.join(".claude/tools/data/harness.json")).unwrap(),
            "{\n  \"name\": \"claude\",\n  \"harnessDir\": \".claude\",\n  \"rulesSubdir\": \"rules\"\n}\n"
        );
        assert!(
            std::fs::read_to_string(project.join(".gitignore"))
                .unwrap()
                .contains("aidlc/.aidlc-clone-id\n")
        );
        assert!(first.unchanged.is_empty() && first.skipped.is_empty());
        assert!(project.join(".claude/sensors/aidlc-linter.md").is_file());
        assert!(project.join("aidlc/spaces/default/memory/org.md").is_file());
        let second = init_project(&project, Harness::Claude, false).unwrap();
        assert!(second.written.is_empty() && second.skipped.is_empty());
        assert_eq!(second.unchanged, first.written);
    }

    #[test]
    fn modified_file_is_skipped_unless_forced() {
        let (_dir, project) = temp_project();
        init_project(&project, Harness::Codex, false).unwrap();
        let relative = Utf8PathBuf::from(".codex/scopes/aidlc-mvp.md");
        let path = project.join(&relative);
        std::fs::write(&path, "edited by hand\n").unwrap();
        let kept = init_project(&project, Harness::Codex, false).unwrap();
        assert_eq!(kept.skipped, vec![relative.clone()]);
        assert!(kept.written.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "edited by hand\n");
        let forced = init_project(&project, Harness::Codex, true).unwrap();
        assert_eq!(forced.written, vec![relative]);
        assert!(forced.skipped.is_empty());
        let original = DEFAULT_FRAMEWORK
            .iter()
            .find(|f| f.path == "scopes/aidlc-mvp.md")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original.contents);
    }

    #[test]
    fn an_existing_harness_json_is_never_replaced() {
        let (_dir, project) = temp_project();
        let path = project.join(".kiro/tools/data/harness.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"plugins\": [\"x\"]}\n").unwrap();
        init_project(&project, Harness::Kiro, true).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"plugins\": [\"x\"]}\n"
        );
        assert!(project.join(".kiro/agents/aidlc.json").is_file());
    }

    #[test]
    fn project_path_that_is_a_file_is_an_error() {
        let (_dir, project) = temp_project();
        std::fs::write(&project, "not a folder").unwrap();
        let error = init_project(&project, Harness::Claude, false).unwrap_err();
        assert!(matches!(error, InitError::NotADirectory { .. }), "{error}");
    }
}
