//! Helpers the workspace's unit tests share.

use camino::{Utf8Path, Utf8PathBuf};

use super::intents::STATE_FILE_NAME;
use super::state::active_stage_choice;
use super::{ACTIVE_INTENT_CURSOR_FILE, intents_dir, read_state_text};

/// This clone's shard under the active record root, composed from the free functions (minting
/// the clone id on first use).
pub fn audit_shard_path(project: &Utf8Path) -> Utf8PathBuf {
    let clone_id = super::clone_id(project).unwrap();
    super::audit_dir(&super::record_root(project))
        .join(format!("{}-{clone_id}.md", super::host_name()))
}

pub fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    (dir, path)
}

pub fn write(path: &Utf8Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn make_record(project: &Utf8Path, space: &str, name: &str) -> Utf8PathBuf {
    let record = intents_dir(project, space).join(name);
    write(&record.join(STATE_FILE_NAME), "# state\n");
    record
}

pub fn set_intent_cursor(project: &Utf8Path, space: &str, text: &str) {
    write(
        &intents_dir(project, space).join(ACTIVE_INTENT_CURSOR_FILE),
        text,
    );
}

/// The active stage of a record: the current marker's stage, else `Current Stage`; `None` when
/// the state is unreadable or `Current Stage` is missing, empty or `none`.
pub fn active_stage(record_root: &Utf8Path) -> Option<String> {
    let state_text = read_state_text(record_root)?;
    active_stage_choice(record_root, &state_text).map(|choice| choice.preferred_stage().to_owned())
}

/// As [`super::active_intent`], for a command that must not guess: several records and no usable cursor
/// is an error saying how to set the cursor. No record at all is still `Ok(None)`.
pub fn unambiguous_active_intent(
    project_dir: &Utf8Path,
    space: &str,
    explicit: Option<&str>,
) -> Result<Option<Utf8PathBuf>, super::WorkspaceError> {
    let records = super::intent_records(project_dir, space);
    super::intents::resolve_intent_among(project_dir, space, &records, explicit)?
        .unambiguous(project_dir, space)
}
