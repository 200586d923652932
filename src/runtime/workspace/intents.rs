//! Intent records and the registry (D11): which folders of a space are intent records, which
//! one is active (an explicit choice, the cursor, the lone record, or none), and how a uuid or
//! slug of `intents.json` names one. A malformed registry means no rows (see the module
//! `workspace` on reads that fall back).

use camino::{Utf8Path, Utf8PathBuf};

use super::error::WorkspaceError;
use super::spaces::{active_space, intents_dir, is_plain_folder_name, read_cursor};
use crate::leaves::fs_util::sorted_children;
use crate::leaves::js_text::js_trim;

/// The active-intent cursor, under `aidlc/spaces/<space>/intents/`.
pub const ACTIVE_INTENT_CURSOR_FILE: &str = "active-intent";
/// The file that makes a folder under `intents/` an intent record.
pub const STATE_FILE_NAME: &str = "aidlc-state.md";
/// The intent registry, under `aidlc/spaces/<space>/intents/`.
pub const INTENT_REGISTRY_FILE: &str = "intents.json";

/// Every intent record of a space: the child folders of `intents_dir` that hold
/// `aidlc-state.md`, sorted by name.
pub fn intent_records(project_dir: &Utf8Path, space: &str) -> Vec<Utf8PathBuf> {
    sorted_children(&intents_dir(project_dir, space), |path| {
        path.join(STATE_FILE_NAME).exists()
    })
}

/// The active intent record of a space. An `explicit` choice wins (a record folder name, or a
/// uuid or slug from `intents.json` naming exactly one record; anything else is an error that
/// lists the known records). Without one: the record the `active-intent` cursor names, else the
/// only record when there is exactly one, else `Ok(None)` (paths then resolve to the space record
/// root, as in the reference).
pub fn active_intent(
    project_dir: &Utf8Path,
    space: &str,
    explicit: Option<&str>,
) -> Result<Option<Utf8PathBuf>, WorkspaceError> {
    let records = intent_records(project_dir, space);
    match resolve_intent_among(project_dir, space, &records, explicit)? {
        IntentResolution::Record(record) => Ok(Some(record)),
        IntentResolution::NoRecords | IntentResolution::SeveralWithoutCursor(_) => Ok(None),
    }
}

/// The record root of the active space and intent: the active record folder, else the space
/// record root `aidlc/spaces/<space>/intents/`. Never an error (several records and no cursor
/// resolve to the space record root, as in the reference).
pub fn record_root(project_dir: &Utf8Path) -> Utf8PathBuf {
    let space = active_space(project_dir);
    match active_intent(project_dir, &space, None) {
        Ok(Some(record)) => record,
        _ => intents_dir(project_dir, &space),
    }
}

/// Which record is active, as far as the space's folders and cursor say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum IntentResolution {
    Record(Utf8PathBuf),
    NoRecords,
    SeveralWithoutCursor(Vec<Utf8PathBuf>),
}

impl IntentResolution {
    /// The record, `None` for no record, and an error saying how to set the cursor for several.
    pub(super) fn unambiguous(
        self,
        project_dir: &Utf8Path,
        space: &str,
    ) -> Result<Option<Utf8PathBuf>, WorkspaceError> {
        match self {
            IntentResolution::Record(record) => Ok(Some(record)),
            IntentResolution::NoRecords => Ok(None),
            IntentResolution::SeveralWithoutCursor(records) => {
                let dir = intents_dir(project_dir, space);
                Err(WorkspaceError::SeveralIntentsWithoutCursor {
                    cursor_path: dir.join(ACTIVE_INTENT_CURSOR_FILE),
                    intents_dir: dir,
                    records: record_names(&records),
                })
            }
        }
    }
}

/// Which of the space's `records` (its listing, already read) is active; see [`active_intent`].
pub(super) fn resolve_intent_among(
    project_dir: &Utf8Path,
    space: &str,
    records: &[Utf8PathBuf],
    explicit: Option<&str>,
) -> Result<IntentResolution, WorkspaceError> {
    if let Some(requested) = explicit {
        return explicit_record(project_dir, space, records, requested)
            .map(IntentResolution::Record);
    }
    if let Some(record) = cursor_record(project_dir, space) {
        return Ok(IntentResolution::Record(record));
    }
    Ok(match records {
        [] => IntentResolution::NoRecords,
        [record] => IntentResolution::Record(record.clone()),
        _ => IntentResolution::SeveralWithoutCursor(records.to_vec()),
    })
}

/// The record the `active-intent` cursor names, when it is a plain folder name of a real record.
fn cursor_record(project_dir: &Utf8Path, space: &str) -> Option<Utf8PathBuf> {
    let dir = intents_dir(project_dir, space);
    let text = read_cursor(&dir.join(ACTIVE_INTENT_CURSOR_FILE))?;
    let name = js_trim(&text);
    let record = dir.join(name);
    (is_plain_folder_name(name) && record.join(STATE_FILE_NAME).exists()).then_some(record)
}

fn explicit_record(
    project_dir: &Utf8Path,
    space: &str,
    records: &[Utf8PathBuf],
    requested: &str,
) -> Result<Utf8PathBuf, WorkspaceError> {
    let intents_dir = intents_dir(project_dir, space);
    if let Some(record) = records.iter().find(|r| r.file_name() == Some(requested)) {
        return Ok(record.clone());
    }
    let registry = read_intent_registry(&intents_dir);
    let mut matches = registry_matches(&registry, records, |entry| entry.uuid == requested);
    if matches.is_empty() {
        matches = registry_matches(&registry, records, |entry| entry.slug == requested);
    }
    match matches.len() {
        0 => Err(WorkspaceError::UnknownIntent {
            requested: requested.to_owned(),
            intents_dir,
            known: record_names(records),
        }),
        1 => Ok(matches.remove(0)),
        _ => Err(WorkspaceError::AmbiguousIntent {
            requested: requested.to_owned(),
            intents_dir,
            matches: record_names(&matches),
        }),
    }
}

fn record_names(records: &[Utf8PathBuf]) -> Vec<String> {
    records
        .iter()
        .filter_map(|record| record.file_name().map(str::to_owned))
        .collect()
}

/// One row of `intents.json` (only the keys that locate a record).
#[derive(Debug, Clone, PartialEq, Eq)]
struct IntentRegistryEntry {
    uuid: String,
    slug: String,
    dir_name: Option<String>,
}

/// The registry rows; empty when the file is missing or malformed, as in the reference.
fn read_intent_registry(intents_dir: &Utf8Path) -> Vec<IntentRegistryEntry> {
    let Ok(bytes) = crate::leaves::fs_util::read_input(&intents_dir.join(INTENT_REGISTRY_FILE))
    else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Array(rows)) = serde_json::from_slice(&bytes) else {
        return Vec::new();
    };
    rows.iter().filter_map(registry_entry).collect()
}

fn registry_entry(row: &serde_json::Value) -> Option<IntentRegistryEntry> {
    let text = |key: &str| row.get(key).and_then(serde_json::Value::as_str);
    Some(IntentRegistryEntry {
        uuid: text("uuid")?.to_owned(),
        slug: text("slug")?.to_owned(),
        dir_name: text("dirName").filter(|d| !d.is_empty()).map(str::to_owned),
    })
}

/// The records that the registry rows accepted by `wanted` belong to, without duplicates.
fn registry_matches(
    registry: &[IntentRegistryEntry],
    records: &[Utf8PathBuf],
    wanted: impl Fn(&IntentRegistryEntry) -> bool,
) -> Vec<Utf8PathBuf> {
    let mut matches: Vec<Utf8PathBuf> = Vec::new();
    for entry in registry.iter().filter(|entry| wanted(entry)) {
        for record in records {
            let belongs = record
                .file_name()
                .is_some_and(|name| record_belongs_to(entry, name));
            if belongs && !matches.contains(record) {
                matches.push(record.clone());
            }
        }
    }
    matches
}

/// The reference's row-to-folder rule: the stored `dirName` when there is one; else the legacy
/// `<slug>-<hex>` shape whose hex is a suffix of the uuid's hex digits.
fn record_belongs_to(entry: &IntentRegistryEntry, dir_name: &str) -> bool {
    if let Some(stored) = &entry.dir_name {
        return stored == dir_name;
    }
    let Some(suffix) = dir_name
        .strip_prefix(entry.slug.as_str())
        .and_then(|rest| rest.strip_prefix('-'))
    else {
        return false;
    };
    let uuid_hex: String = entry.uuid.chars().filter(|c| *c != '-').collect();
    !suffix.is_empty()
        && suffix
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && uuid_hex.ends_with(suffix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::workspace::test_support::{
        make_record, set_intent_cursor, temp_project, unambiguous_active_intent, write,
    };

    #[test]
    fn intent_records_are_folders_with_a_state_file_sorted_by_name() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260904-b");
        make_record(&project, "default", "260903-a");
        std::fs::create_dir_all(intents_dir(&project, "default").join("audit")).unwrap();
        write(&intents_dir(&project, "default").join("intents.json"), "[]");
        let names = record_names(&intent_records(&project, "default"));
        assert_eq!(names, ["260903-a", "260904-b"]);
    }

    #[test]
    fn intent_records_of_a_missing_space_are_empty() {
        let (_dir, project) = temp_project();
        assert!(intent_records(&project, "nowhere").is_empty());
    }

    #[test]
    fn no_records_resolve_to_none_and_the_space_record_root() {
        let (_dir, project) = temp_project();
        assert_eq!(active_intent(&project, "default", None), Ok(None));
        assert_eq!(
            unambiguous_active_intent(&project, "default", None),
            Ok(None)
        );
        assert_eq!(record_root(&project), intents_dir(&project, "default"));
    }

    #[test]
    fn a_lone_record_is_active_without_a_cursor() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260904-x");
        assert_eq!(
            active_intent(&project, "default", None),
            Ok(Some(record.clone()))
        );
        assert_eq!(record_root(&project), record);
    }

    #[test]
    fn the_cursor_picks_among_several_records() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260903-a");
        let chosen = make_record(&project, "default", "260904-b");
        set_intent_cursor(&project, "default", "260904-b\n");
        assert_eq!(
            unambiguous_active_intent(&project, "default", None),
            Ok(Some(chosen))
        );
    }

    #[test]
    fn a_cursor_naming_no_record_falls_through_to_the_lone_record() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260903-a");
        for cursor in ["gone", "../260903-a", ""] {
            set_intent_cursor(&project, "default", cursor);
            assert_eq!(
                active_intent(&project, "default", None),
                Ok(Some(record.clone())),
                "cursor {cursor:?}"
            );
        }
    }

    #[test]
    fn several_records_without_a_cursor_are_none_or_an_error_naming_the_cursor() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260903-a");
        make_record(&project, "default", "260904-b");
        assert_eq!(active_intent(&project, "default", None), Ok(None));
        assert_eq!(record_root(&project), intents_dir(&project, "default"));
        let error = unambiguous_active_intent(&project, "default", None).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("2 intent records"), "{message}");
        assert!(message.contains("260903-a, 260904-b"), "{message}");
        assert!(
            message.contains("aidlc/spaces/default/intents/active-intent"),
            "{message}"
        );
        assert!(message.contains("echo 260903-a >"), "{message}");
    }

    #[test]
    fn an_explicit_record_name_wins_over_the_cursor() {
        let (_dir, project) = temp_project();
        let explicit = make_record(&project, "default", "260903-a");
        make_record(&project, "default", "260904-b");
        set_intent_cursor(&project, "default", "260904-b");
        assert_eq!(
            active_intent(&project, "default", Some("260903-a")),
            Ok(Some(explicit))
        );
    }

    #[test]
    fn an_unknown_explicit_name_is_an_error_listing_the_records() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260903-a");
        let error = active_intent(&project, "default", Some("nope")).unwrap_err();
        assert_eq!(
            error,
            WorkspaceError::UnknownIntent {
                requested: "nope".to_owned(),
                intents_dir: intents_dir(&project, "default"),
                known: vec!["260903-a".to_owned()],
            }
        );
        assert!(error.to_string().contains("known records: 260903-a"));
        let empty = active_intent(&project, "other", Some("nope")).unwrap_err();
        assert!(empty.to_string().ends_with("known records: (none)"));
    }

    #[test]
    fn an_explicit_uuid_or_slug_resolves_through_the_registry() {
        let (_dir, project) = temp_project();
        let dated = make_record(&project, "default", "260904-login");
        let legacy = make_record(&project, "default", "billing-89abcdef");
        write(
            &intents_dir(&project, "default").join("intents.json"),
            r#"[
              {"uuid": "0190aaaa-0000-7000-8000-000000000001", "slug": "login", "dirName": "260904-login", "status": "active"},
              {"uuid": "0190aaaa-0000-7000-8000-000089abcdef", "slug": "billing", "status": "active"}
            ]"#,
        );
        let resolve = |choice| active_intent(&project, "default", Some(choice));
        assert_eq!(
            resolve("0190aaaa-0000-7000-8000-000000000001"),
            Ok(Some(dated.clone()))
        );
        assert_eq!(resolve("login"), Ok(Some(dated)));
        assert_eq!(resolve("billing"), Ok(Some(legacy.clone())));
        assert_eq!(
            resolve("0190aaaa-0000-7000-8000-000089abcdef"),
            Ok(Some(legacy))
        );
    }

    #[test]
    fn a_slug_shared_by_two_records_is_ambiguous() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260901-x");
        make_record(&project, "default", "260902-x");
        write(
            &intents_dir(&project, "default").join("intents.json"),
            r#"[{"uuid": "u1", "slug": "x", "dirName": "260901-x"},
                {"uuid": "u2", "slug": "x", "dirName": "260902-x"}]"#,
        );
        let error = active_intent(&project, "default", Some("x")).unwrap_err();
        assert!(
            matches!(error, WorkspaceError::AmbiguousIntent { ref matches, .. } if matches.len() == 2)
        );
    }

    #[test]
    fn a_malformed_registry_is_ignored() {
        let (_dir, project) = temp_project();
        make_record(&project, "default", "260901-x");
        write(
            &intents_dir(&project, "default").join("intents.json"),
            "{not json",
        );
        assert!(active_intent(&project, "default", Some("x")).is_err());
    }

    #[test]
    fn the_record_root_follows_the_active_space() {
        let (_dir, project) = temp_project();
        write(&project.join("aidlc/active-space"), "team\n");
        let record = make_record(&project, "team", "260904-x");
        make_record(&project, "default", "260904-y");
        assert_eq!(record_root(&project), record);
    }
}
