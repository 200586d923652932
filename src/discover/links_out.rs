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

use camino::{Utf8Path, Utf8PathBuf};

use crate::diagnostics::{Code, Diagnostic};
use crate::discover::{Layout, list_sensor_files, list_stage_files};

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
pub fn inputs_linked_outside(layout: &Layout) -> Vec<LinkedOutside> {
    let Ok(project) = layout.project_dir.canonicalize_utf8() else {
        return Vec::new();
    };
    let (sensors, _) = list_sensor_files(&layout.sensors_dir);
    let stages = list_stage_files(&layout.stages_dir)
        .into_iter()
        .map(|(_, path)| path);
    sensors
        .into_iter()
        .chain(stages)
        .filter_map(|path| {
            let target = resolved_outside(&path, &project)?;
            Some(LinkedOutside {
                shown: layout.display(&path),
                target,
            })
        })
        .collect()
}

/// Where `path` leads, when that is outside `project` (both resolved).
fn resolved_outside(path: &Utf8Path, project: &Utf8Path) -> Option<Utf8PathBuf> {
    let target = path.canonicalize_utf8().ok()?;
    (!target.starts_with(project)).then_some(target)
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
