//! The active intent record and its upstream files: where they are, and their ids.
//!
//! Invariant: an upstream file that is missing, is not a file, cannot be read or holds no id is
//! a reason (a finding), never an empty set that lets everything pass.

use std::collections::BTreeSet;

use camino::{Utf8Path, Utf8PathBuf};

use super::ids::{IdPattern, extract_ids};
use crate::runtime::sensors::text::read_text_lossy;

/// The upstream files of the active intent record.
pub(super) struct RecordFiles {
    pub(super) record: Utf8PathBuf,
    pub(super) requirements: Utf8PathBuf,
    pub(super) stories: Utf8PathBuf,
    pub(super) story_map: Utf8PathBuf,
    pub(super) unit_of_work: Utf8PathBuf,
    pub(super) dependency: Utf8PathBuf,
}

pub(super) fn active_record(project_dir: &Utf8Path) -> Option<RecordFiles> {
    let space = crate::runtime::workspace::active_space(project_dir);
    let record = crate::runtime::workspace::active_intent(project_dir, &space, None).ok()??;
    let inception = record.join("inception");
    let units_generation = inception.join("units-generation");
    Some(RecordFiles {
        requirements: inception.join("requirements-analysis/requirements.md"),
        stories: inception.join("user-stories/stories.md"),
        story_map: units_generation.join("unit-of-work-story-map.md"),
        unit_of_work: units_generation.join("unit-of-work.md"),
        dependency: units_generation.join("unit-of-work-dependency.md"),
        record,
    })
}

/// An upstream file's text, or the reason it cannot be used.
pub(super) fn read_upstream(path: &Utf8Path) -> Result<String, String> {
    if !path.exists() {
        return Err(format!("required upstream artifact is missing: {path}"));
    }
    if !path.is_file() {
        return Err(format!("required upstream artifact is not a file: {path}"));
    }
    read_text_lossy(path).map_err(|error| format!("cannot read upstream artifact {path}: {error}"))
}

/// The ids of `patterns` in the file, and the reason when it cannot be read or holds none.
pub(super) fn ids_from_file(
    path: &Utf8Path,
    patterns: &[IdPattern],
    label: &str,
) -> (BTreeSet<String>, Option<String>) {
    match read_upstream(path) {
        Err(reason) => (BTreeSet::new(), Some(reason)),
        Ok(text) => {
            let ids = extract_ids(&text, patterns);
            let reason = ids
                .is_empty()
                .then(|| format!("{label} contains no traceable IDs: {path}"));
            (ids, reason)
        }
    }
}

/// The ids of `patterns` in every file of `names` under `folder` that exists (unreadable files
/// and their reasons are left out, as the reference does), and whether any existed.
pub(super) fn ids_from_existing_files(
    folder: &Utf8Path,
    names: &[&str],
    pattern: IdPattern,
) -> (BTreeSet<String>, bool) {
    let mut ids = BTreeSet::new();
    let mut saw_file = false;
    for name in names {
        let path = folder.join(name);
        if !path.exists() {
            continue;
        }
        saw_file = true;
        if let Ok(text) = read_upstream(&path) {
            ids.extend(extract_ids(&text, &[pattern]));
        }
    }
    (ids, saw_file)
}
