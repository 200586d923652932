//! Creating an intent record (`aidlc engine intent new`), as the reference's `createIntent`
//! does: the record folder, its state file, the `intents.json` row and the cursor.
//!
//! Invariant: a refusal writes nothing; a failure to write the state or the registry removes the
//! folder this call created, so no record exists without its registry row.

use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};

use super::error::{INTENT_LABEL_MAX_CHARS, RESERVED_INTENT_LABELS, WorkspaceError};
use super::intents::{ACTIVE_INTENT_CURSOR_FILE, INTENT_REGISTRY_FILE};
use super::spaces::{active_space, intents_dir};
use super::state::state_file_path;
use crate::compile::syntax::stage::is_kebab_case;
use crate::leaves::js_json::pretty_json;

/// The registry status of a new intent: the reference's `createIntent` writes `in-flight`.
pub const NEW_INTENT_STATUS: &str = "in-flight";
/// The state schema version the reference's conductor accepts (`CURRENT_STATE_VERSION`).
pub const STATE_VERSION: &str = "8";

/// A new intent record, as [`create_intent`] made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedIntent {
    /// The record folder, `<project>/aidlc/spaces/<space>/intents/<folder_name>`.
    pub record: Utf8PathBuf,
    /// `<YYMMDD>-<label>`, the UTC date of creation first.
    pub folder_name: String,
    /// The registry row's id, a `UUIDv7`.
    pub uuid: String,
}

/// Create an intent record in the active space and make it the active intent, as the
/// reference's `createIntent` does: the folder `<YYMMDD>-<label>` (UTC date of `now`) holding a
/// minimal `aidlc-state.md` (Project, Start Date, State Version, and `Current Stage`:
/// `current_stage`, else `none` as the reference writes it), a row
/// `{uuid, slug, dirName, status}` appended to `intents.json`, and the `active-intent` cursor
/// naming the folder. Every file is written atomically, under the workspace audit lock the
/// reference takes for registry changes.
///
/// Differences from the reference, on purpose: a label that is not already a kebab slug is
/// refused rather than rewritten, an existing folder is an error rather than a `-2` suffix, and
/// a registry that is not a JSON array is refused rather than replaced by a one-row list.
#[expect(
    clippy::disallowed_methods,
    reason = "an intent record's folder, at the path the engine names from the checked intent label, created exclusively so that two intents never share one"
)]
pub fn create_intent(
    project_dir: &Utf8Path,
    label: &str,
    current_stage: Option<&str>,
    now: SystemTime,
) -> Result<CreatedIntent, WorkspaceError> {
    check_intent_label(label)?;
    let intents_dir = intents_dir(project_dir, &active_space(project_dir));
    let folder_name = format!("{}-{label}", utc_date_stamp(now));
    let record = intents_dir.join(&folder_name);
    let _lock = crate::leaves::audit_lock::acquire(project_dir).map_err(|error| {
        WorkspaceError::RegistryLocked {
            detail: error.to_string(),
        }
    })?;
    let registry_path = intents_dir.join(INTENT_REGISTRY_FILE);
    let mut rows = registry_rows_to_extend(&registry_path)?;
    let uuid = uuid::Uuid::now_v7().to_string();
    rows.push(new_registry_row(&uuid, label, &folder_name));
    create_record_folder(&intents_dir, &record)?;
    let started_at = crate::leaves::timestamp::iso_timestamp(now);
    let filled = write_file(
        &state_file_path(&record),
        &new_intent_state_text(label, &started_at, current_stage.unwrap_or("none")),
    )
    .and_then(|()| write_file(&registry_path, &registry_text(rows)));
    if let Err(error) = filled {
        // The folder is ours (created just above); without its row it must not stay a record.
        let _ = std::fs::remove_dir_all(&record);
        return Err(error);
    }
    write_file(
        &intents_dir.join(ACTIVE_INTENT_CURSOR_FILE),
        &format!("{folder_name}\n"),
    )?;
    Ok(CreatedIntent {
        record,
        folder_name,
        uuid,
    })
}

/// Whether `label` can name an intent: a kebab slug (`^[a-z][a-z0-9-]*$`) of at most
/// [`INTENT_LABEL_MAX_CHARS`] characters, and not one of the reference's command words.
pub fn check_intent_label(label: &str) -> Result<(), WorkspaceError> {
    if !is_kebab_case(label) || label.len() > INTENT_LABEL_MAX_CHARS {
        return Err(WorkspaceError::InvalidIntentLabel {
            label: label.to_owned(),
        });
    }
    if RESERVED_INTENT_LABELS.contains(&label) {
        return Err(WorkspaceError::ReservedIntentLabel {
            label: label.to_owned(),
        });
    }
    Ok(())
}

/// `YYMMDD` of `now` in UTC, as the reference's `dateStamp` (the last two digits of the year).
fn utc_date_stamp(now: SystemTime) -> String {
    let timestamp = crate::leaves::timestamp::iso_timestamp(now);
    let date = timestamp.split('T').next().unwrap_or_default();
    // `YYYY-MM-DD`, split from the right so that a year of any width keeps its last digits.
    let mut parts = date.rsplitn(3, '-');
    let day = parts.next().unwrap_or_default();
    let month = parts.next().unwrap_or_default();
    let year = parts.next().unwrap_or_default();
    let year_tail = &year[year.len().saturating_sub(2)..];
    format!("{year_tail}{month}{day}")
}

/// The rows of an existing registry, to append to; none when the file is missing. Anything
/// else (unreadable, not JSON, JSON that is not an array) is an error and the file is left as
/// it is: replacing it would drop the rows of every other intent.
fn registry_rows_to_extend(
    registry_path: &Utf8Path,
) -> Result<Vec<serde_json::Value>, WorkspaceError> {
    let bytes = match crate::leaves::fs_util::read_input(registry_path) {
        Ok(bytes) => bytes,
        Err(error) if error.is_not_found() => return Ok(Vec::new()),
        Err(error) => {
            return Err(WorkspaceError::CannotRead {
                path: registry_path.to_owned(),
                detail: error.to_string(),
            });
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(serde_json::Value::Array(rows)) => Ok(rows),
        _ => Err(WorkspaceError::RegistryNotAnArray {
            path: registry_path.to_owned(),
        }),
    }
}

/// A registry row with the reference's keys in its order (`scope` and `repos` are left out, as
/// the reference's `JSON.stringify` leaves out their `undefined` values).
fn new_registry_row(uuid: &str, label: &str, folder_name: &str) -> serde_json::Value {
    serde_json::json!({
        "uuid": uuid,
        "slug": label,
        "dirName": folder_name,
        "status": NEW_INTENT_STATUS,
    })
}

/// The registry as the reference writes it: `JSON.stringify(list, null, 2)` and a newline.
fn registry_text(rows: Vec<serde_json::Value>) -> String {
    format!("{}\n", pretty_json(&serde_json::Value::Array(rows)))
}

/// Create the record folder, failing when anything already has its name.
#[expect(
    clippy::disallowed_methods,
    reason = "an intent record's folder, at the path the engine names from the checked intent label, created exclusively so that two intents never share one"
)]
fn create_record_folder(intents_dir: &Utf8Path, record: &Utf8Path) -> Result<(), WorkspaceError> {
    std::fs::create_dir_all(intents_dir).map_err(|error| WorkspaceError::CannotWrite {
        path: intents_dir.to_owned(),
        detail: error.to_string(),
    })?;
    match std::fs::create_dir(record) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(WorkspaceError::IntentRecordExists {
                record: record.to_owned(),
            })
        }
        Err(error) => Err(WorkspaceError::CannotWrite {
            path: record.to_owned(),
            detail: error.to_string(),
        }),
    }
}

/// The state of a new record: only fields this engine can fill truthfully, under the headings
/// of the reference's state template. The conductor adds the rest when it takes the intent on.
fn new_intent_state_text(label: &str, started_at: &str, current_stage: &str) -> String {
    format!(
        "# AI-DLC State Tracking\n\
         \n\
         ## Project Information\n\
         - **Project**: {label}\n\
         - **Start Date**: {started_at}\n\
         - **State Version**: {STATE_VERSION}\n\
         \n\
         ## Current Status\n\
         - **Current Stage**: {current_stage}\n"
    )
}

#[expect(
    clippy::disallowed_methods,
    reason = "an intent record's files, at the paths the engine names inside the record folder it has just created exclusively"
)]
fn write_file(path: &Utf8Path, text: &str) -> Result<(), WorkspaceError> {
    crate::leaves::fs_util::write_atomic(path, text.as_bytes()).map_err(|error| {
        WorkspaceError::CannotWrite {
            path: path.to_owned(),
            detail: error.to_string(),
        }
    })
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;
    use crate::runtime::workspace::test_support::{temp_project, unambiguous_active_intent, write};
    use crate::runtime::workspace::*;
    use std::time::Duration;

    /// 2026-09-04T15:30:00Z.
    fn fixed_now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_788_535_800)
    }

    fn registry_rows(project: &Utf8Path) -> Vec<serde_json::Value> {
        let text =
            std::fs::read_to_string(intents_dir(project, "default").join(INTENT_REGISTRY_FILE))
                .unwrap();
        match serde_json::from_str(&text).unwrap() {
            serde_json::Value::Array(rows) => rows,
            other => panic!("not an array: {other}"),
        }
    }

    fn intent_cursor(project: &Utf8Path) -> String {
        std::fs::read_to_string(intents_dir(project, "default").join(ACTIVE_INTENT_CURSOR_FILE))
            .unwrap()
    }

    #[test]
    fn creating_an_intent_writes_the_folder_state_registry_and_cursor() {
        let (_dir, project) = temp_project();
        let created = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        assert_eq!(created.folder_name, "260904-guest-checkout");
        assert_eq!(
            created.record,
            project.join("aidlc/spaces/default/intents/260904-guest-checkout")
        );
        let state = read_state_text(&created.record).unwrap();
        assert!(state.starts_with("# AI-DLC State Tracking\n"), "{state}");
        let field = |name| read_state_field(&state, name);
        assert_eq!(field("Project").as_deref(), Some("guest-checkout"));
        assert_eq!(field("Start Date").as_deref(), Some("2026-09-04T15:30:00Z"));
        assert_eq!(field("State Version").as_deref(), Some("8"));
        assert_eq!(field("Current Stage").as_deref(), Some("none"));
        assert_eq!(current_stage(&state), None);

        let rows = registry_rows(&project);
        assert_eq!(rows.len(), 1);
        let keys: Vec<&str> = rows[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["uuid", "slug", "dirName", "status"]);
        assert_eq!(rows[0]["uuid"], created.uuid.as_str());
        assert_eq!(rows[0]["slug"], "guest-checkout");
        assert_eq!(rows[0]["dirName"], "260904-guest-checkout");
        assert_eq!(rows[0]["status"], "in-flight");
        let uuid = uuid::Uuid::parse_str(&created.uuid).unwrap();
        assert_eq!(uuid.get_version_num(), 7);
        assert_eq!(intent_cursor(&project), "260904-guest-checkout\n");
    }

    #[test]
    fn the_registry_is_pretty_printed_as_the_reference_writes_it() {
        let (_dir, project) = temp_project();
        let created = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        let text =
            std::fs::read_to_string(intents_dir(&project, "default").join(INTENT_REGISTRY_FILE))
                .unwrap();
        let expected = format!(
            "[\n  {{\n    \"uuid\": \"{}\",\n    \"slug\": \"guest-checkout\",\n    \"dirName\": \"260904-guest-checkout\",\n    \"status\": \"in-flight\"\n  }}\n]\n",
            created.uuid
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn a_created_intent_is_the_active_intent() {
        let (_dir, project) = temp_project();
        let created = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        assert_eq!(
            active_intent(&project, "default", None),
            Ok(Some(created.record.clone()))
        );
        assert_eq!(
            active_intent(&project, "default", Some("guest-checkout")),
            Ok(Some(created.record.clone()))
        );
        assert_eq!(
            active_intent(&project, "default", Some(&created.uuid)),
            Ok(Some(created.record.clone()))
        );
        assert_eq!(record_root(&project), created.record);
    }

    #[test]
    fn a_second_intent_appends_a_row_and_moves_the_cursor() {
        let (_dir, project) = temp_project();
        let first = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        let later = fixed_now() + Duration::from_secs(86_400);
        let second = create_intent(&project, "refund-flow", None, later).unwrap();
        assert_eq!(second.folder_name, "260905-refund-flow");
        let rows = registry_rows(&project);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["uuid"], first.uuid.as_str());
        assert_eq!(rows[1]["uuid"], second.uuid.as_str());
        assert_ne!(first.uuid, second.uuid);
        assert_eq!(intent_cursor(&project), "260905-refund-flow\n");
        assert_eq!(
            intent_records(&project, "default"),
            [first.record, second.record.clone()]
        );
        assert_eq!(
            unambiguous_active_intent(&project, "default", None),
            Ok(Some(second.record))
        );
    }

    #[test]
    fn an_intent_goes_to_the_active_space() {
        let (_dir, project) = temp_project();
        write(&project.join("aidlc/active-space"), "team\n");
        let created = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        assert_eq!(
            created.record,
            intents_dir(&project, "team").join("260904-guest-checkout")
        );
        assert!(
            intents_dir(&project, "team")
                .join(INTENT_REGISTRY_FILE)
                .is_file()
        );
        assert!(!intents_dir(&project, "default").exists());
    }

    #[test]
    fn labels_must_be_short_kebab_slugs() {
        let (_dir, project) = temp_project();
        let longest = "a".repeat(INTENT_LABEL_MAX_CHARS);
        let too_long = "a".repeat(INTENT_LABEL_MAX_CHARS + 1);
        for label in [
            "",
            "Checkout",
            "1st-try",
            "-checkout",
            "check_out",
            "check out",
            "café",
            "a/b",
            "..",
            &too_long,
        ] {
            let error = create_intent(&project, label, None, fixed_now()).unwrap_err();
            assert_eq!(
                error,
                WorkspaceError::InvalidIntentLabel {
                    label: label.to_owned()
                }
            );
            assert!(
                error.to_string().contains("lowercase letter first"),
                "{error}"
            );
        }
        for label in ["list", "create", "switch", "help", "birth"] {
            let error = create_intent(&project, label, None, fixed_now()).unwrap_err();
            assert!(
                matches!(error, WorkspaceError::ReservedIntentLabel { .. }),
                "{label}: {error}"
            );
        }
        assert!(
            !project.join("aidlc").exists(),
            "a refused label writes nothing"
        );
        assert!(check_intent_label(&longest).is_ok());
        assert!(check_intent_label("a").is_ok());
        assert!(check_intent_label("x2-checkout-").is_ok());
    }

    #[test]
    fn an_existing_folder_is_an_error_naming_it() {
        let (_dir, project) = temp_project();
        let first = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        let registry_before =
            std::fs::read(intents_dir(&project, "default").join(INTENT_REGISTRY_FILE)).unwrap();
        let error = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap_err();
        assert_eq!(
            error,
            WorkspaceError::IntentRecordExists {
                record: first.record.clone()
            }
        );
        assert!(error.to_string().contains(first.record.as_str()), "{error}");
        assert_eq!(
            std::fs::read(intents_dir(&project, "default").join(INTENT_REGISTRY_FILE)).unwrap(),
            registry_before
        );
    }

    #[test]
    fn a_folder_without_a_state_file_still_blocks_the_name() {
        let (_dir, project) = temp_project();
        let taken = intents_dir(&project, "default").join("260904-guest-checkout");
        std::fs::create_dir_all(&taken).unwrap();
        let error = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap_err();
        assert_eq!(error, WorkspaceError::IntentRecordExists { record: taken });
        assert!(
            !intents_dir(&project, "default")
                .join(INTENT_REGISTRY_FILE)
                .exists()
        );
    }

    #[test]
    fn a_registry_that_is_not_an_array_is_refused_and_left_alone() {
        for text in [r#"{"uuid": "x"}"#, "{not json", "", "null"] {
            let (_dir, project) = temp_project();
            let registry = intents_dir(&project, "default").join(INTENT_REGISTRY_FILE);
            write(&registry, text);
            let error = create_intent(&project, "guest-checkout", None, fixed_now()).unwrap_err();
            assert_eq!(
                error,
                WorkspaceError::RegistryNotAnArray {
                    path: registry.clone()
                }
            );
            assert!(error.to_string().contains("not a JSON array"), "{error}");
            assert_eq!(std::fs::read_to_string(&registry).unwrap(), text);
            assert!(intent_records(&project, "default").is_empty());
            assert!(
                !intents_dir(&project, "default")
                    .join("260904-guest-checkout")
                    .exists()
            );
            assert!(
                !intents_dir(&project, "default")
                    .join(ACTIVE_INTENT_CURSOR_FILE)
                    .exists()
            );
        }
    }

    #[test]
    fn rows_of_an_existing_registry_are_kept_as_they_are() {
        let (_dir, project) = temp_project();
        let registry = intents_dir(&project, "default").join(INTENT_REGISTRY_FILE);
        let old_row = r#"{"uuid":"0190aaaa-0000-7000-8000-000000000001","slug":"login","status":"complete","scope":"feature","repos":["web"]}"#;
        write(&registry, &format!("[{old_row}]"));
        create_intent(&project, "guest-checkout", None, fixed_now()).unwrap();
        let rows = registry_rows(&project);
        assert_eq!(rows.len(), 2);
        let expected_old: serde_json::Value = serde_json::from_str(old_row).unwrap();
        assert_eq!(rows[0], expected_old);
        let keys: Vec<&str> = rows[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["uuid", "slug", "status", "scope", "repos"]);
    }

    #[test]
    fn dates_before_2000_and_after_2099_keep_two_year_digits() {
        assert_eq!(utc_date_stamp(SystemTime::UNIX_EPOCH), "700101");
        let y2100 = SystemTime::UNIX_EPOCH + Duration::from_secs(4_102_444_800);
        assert_eq!(utc_date_stamp(y2100), "000101");
    }
}
