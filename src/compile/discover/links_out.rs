//! Sensor manifests and stage files reached through a link that leaves the project.
//!
//! Data flow: the compile's own listing of sensor manifests and stage files
//! ([`list_sensor_files`], [`list_stage_files`]) → each path resolved with its links followed →
//! the ones that resolve outside the project folder, each with where it leads. `aidlc compile`
//! shows each as a `linked-input-outside-project` warning (every format, the no-op path too),
//! and `aidlc doctor` names them in one row.
//!
//! Invariants: a team may share manifests through such links on purpose, so this never refuses
//! anything, but it is never silent either; nothing here opens a file (a path that cannot be
//! resolved is the compile's read to report).

use std::collections::HashMap;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::{Layout, list_sensor_files, list_stage_files};
use crate::leaves::diagnostics::{Code, Diagnostic};

/// One input whose links lead out of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedOutside {
    /// The path as the project shows it (relative to the project folder).
    pub shown: Utf8PathBuf,
    /// Where its links lead: the resolved, absolute path of the file read.
    pub target: Utf8PathBuf,
}

/// Every sensor manifest and stage file of `layout` that resolves outside the project folder,
/// in discovery order (sensors first). None when the project folder itself cannot be resolved.
///
/// Cheap on the no-op path: one `lstat` per file and per folder on its way up to the project
/// folder (each folder once), and a resolution only for a path that passes through a link.
pub fn inputs_linked_outside(layout: &Layout) -> Vec<LinkedOutside> {
    let (sensors, _) = list_sensor_files(&layout.sensors_dir);
    let stages = list_stage_files(&layout.stages_dir)
        .into_iter()
        .map(|(_, path)| path);
    let mut links = LinkLookup::new(&layout.project_dir);
    let candidates: Vec<Utf8PathBuf> = sensors
        .into_iter()
        .chain(stages)
        .filter(|path| links.passes_through_a_link(path))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let Ok(project) = layout.project_dir.canonicalize_utf8() else {
        return Vec::new();
    };
    candidates
        .into_iter()
        .filter_map(|path| {
            // Where its links lead, when that is outside the (resolved) project folder.
            let target = path
                .canonicalize_utf8()
                .ok()
                .filter(|target| !target.starts_with(&project))?;
            Some(LinkedOutside {
                shown: layout.display(&path),
                target,
            })
        })
        .collect()
}

/// Which paths under the project folder pass through a symbolic link, each folder looked up
/// once.
struct LinkLookup<'a> {
    project_dir: &'a Utf8Path,
    folders: HashMap<Utf8PathBuf, bool>,
}

impl<'a> LinkLookup<'a> {
    fn new(project_dir: &'a Utf8Path) -> Self {
        Self {
            project_dir,
            folders: HashMap::new(),
        }
    }

    /// Whether `path` or a folder between it and the project folder is a symbolic link.
    fn passes_through_a_link(&mut self, path: &Utf8Path) -> bool {
        is_a_link(path)
            || path
                .parent()
                .is_some_and(|folder| self.folder_passes(folder))
    }

    fn folder_passes(&mut self, folder: &Utf8Path) -> bool {
        if !folder.starts_with(self.project_dir) || folder == self.project_dir {
            return false;
        }
        if let Some(known) = self.folders.get(folder) {
            return *known;
        }
        let passes = is_a_link(folder)
            || folder
                .parent()
                .is_some_and(|parent| self.folder_passes(parent));
        self.folders.insert(folder.to_owned(), passes);
        passes
    }
}

fn is_a_link(path: &Utf8Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|metadata| metadata.file_type().is_symlink())
}

/// What to do about a link that leads out, whichever way the team meant it.
pub const LINKED_OUTSIDE_HELP: &str = "if the team shares this file on purpose, keep the link and review changes at its target; otherwise replace the link with a copy of the file inside the project";

/// The compile's warning for each input of `layout` reached through a link that leaves the
/// project, on the file as the project shows it.
pub fn linked_outside_warnings(layout: &Layout) -> Vec<Diagnostic> {
    inputs_linked_outside(layout)
        .into_iter()
        .map(|linked| {
            Diagnostic::warning(
                Code::LinkedInputOutsideProject,
                format!(
                    "this file is read through a link that leaves the project: it leads to {}",
                    linked.target
                ),
            )
            .in_file(linked.shown)
            .with_help(LINKED_OUTSIDE_HELP)
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::harness::Harness;

    fn write(path: &Utf8Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn links_that_leave_the_project_are_named_and_links_that_stay_are_not() {
        let outside = tempfile::tempdir().unwrap();
        let outside = Utf8PathBuf::from_path_buf(outside.path().canonicalize().unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let layout = Layout::new(&project, Harness::Claude, &|_| None);
        let symlink = |target: &Utf8Path, link: &Utf8Path| {
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, link).unwrap();
        };

        write(&layout.sensors_dir.join("aidlc-plain.md"), "plain");
        write(&project.join("shared/aidlc-inside.md"), "inside");
        symlink(
            &project.join("shared/aidlc-inside.md"),
            &layout.sensors_dir.join("aidlc-inside.md"),
        );
        write(&outside.join("aidlc-outside.md"), "outside");
        symlink(
            &outside.join("aidlc-outside.md"),
            &layout.sensors_dir.join("aidlc-outside.md"),
        );
        // A whole phase folder linked out: each stage file in it leads out.
        write(&outside.join("phase/far-stage.md"), "far");
        symlink(&outside.join("phase"), &layout.stages_dir.join("inception"));
        assert_eq!(
            inputs_linked_outside(&layout),
            [
                LinkedOutside {
                    shown: layout.display(&layout.sensors_dir.join("aidlc-outside.md")),
                    target: outside.join("aidlc-outside.md"),
                },
                LinkedOutside {
                    shown: layout.display(&layout.stages_dir.join("inception/far-stage.md")),
                    target: outside.join("phase/far-stage.md"),
                },
            ]
        );
    }
}
