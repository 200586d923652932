//! The workspace selectors (D11): which space and which intent record are active, where their
//! files live, this clone's audit shard, and the two facts the write hook reads from a record
//! (is a workflow present, which stage is active).
//!
//! Everything here is a pure function of the file system, as the reference's `aidlc-lib.ts`
//! resolves it: no printing, no diagnostics, and nothing written except the clone id, which is
//! minted once per clone, and a new intent record, which only [`create_intent`] writes. Reads
//! never fail loudly where the reference falls back (an unreadable cursor means "no cursor");
//! only a choice the user made explicitly, or a command that needs one intent and cannot tell
//! which, is an error.

use std::io::{Read as _, Write as _};
use std::time::{Duration, SystemTime};

use crate::js_text::js_trim;
use camino::{Utf8Path, Utf8PathBuf};

use crate::discover::workspace_root;
use crate::js_json::pretty_json;
use crate::random_hex::random_lowercase_hex;

/// The space used when `aidlc/active-space` is missing, empty or unusable.
pub const DEFAULT_SPACE: &str = "default";
/// The active-space cursor, under `aidlc/`.
pub const ACTIVE_SPACE_CURSOR_FILE: &str = "active-space";
/// The active-intent cursor, under `aidlc/spaces/<space>/intents/`.
pub const ACTIVE_INTENT_CURSOR_FILE: &str = "active-intent";
/// The file that makes a folder under `intents/` an intent record.
pub const STATE_FILE_NAME: &str = "aidlc-state.md";
/// The intent registry, under `aidlc/spaces/<space>/intents/`.
pub const INTENT_REGISTRY_FILE: &str = "intents.json";
/// This clone's id, under `aidlc/` (gitignored, so every clone mints its own).
pub const CLONE_ID_FILE: &str = ".aidlc-clone-id";
/// The record-local folder of engine state (detail files, hook health), under a record root.
pub const ENGINE_DIR: &str = ".aidlc-engine";
/// Where detail files went before the engine folder existed ([2.5]/[2.6]); the write hook's
/// recursion guard still skips it, nothing writes there.
pub const LEGACY_SENSOR_DETAIL_DIR: &str = ".aidlc-sensors";
/// The conductor's active-directive marker, under a record root.
pub const ACTIVE_DIRECTIVE_MARKER_FILE: &str = ".aidlc-active-directive.json";

/// The reference reads at most this many bytes of the active-directive marker.
const ACTIVE_DIRECTIVE_MAX_BYTES: u64 = 64 * 1024;
/// Cursors and the clone id are one short line; anything longer is not one of ours.
const CURSOR_MAX_BYTES: u64 = 4 * 1024;
/// The reference caps the host part of a shard name at 48 characters.
const HOST_NAME_MAX_CHARS: usize = 48;
/// Length of a clone id this engine mints (the reference mints the same).
const MINTED_CLONE_ID_CHARS: usize = 12;
/// How long a reader waits for a clone id file another process has created but not yet written.
const CLONE_ID_SETTLE_ATTEMPTS: u32 = 20;
const CLONE_ID_SETTLE_DELAY: Duration = Duration::from_millis(5);

/// An explicit or required intent choice that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "no intent record named \"{requested}\" in {intents_dir}; known records: {}",
        list_or_none(.known)
    )]
    UnknownIntent {
        requested: String,
        intents_dir: Utf8PathBuf,
        known: Vec<String>,
    },
    #[error(
        "\"{requested}\" names {} intent records in {intents_dir} ({}); choose one by its folder name",
        .matches.len(),
        .matches.join(", ")
    )]
    AmbiguousIntent {
        requested: String,
        intents_dir: Utf8PathBuf,
        matches: Vec<String>,
    },
    #[error(
        "{} intent records in {intents_dir} ({}) and no active intent; choose one by writing its folder name into {cursor_path} (for example: echo {} > {cursor_path})",
        .records.len(),
        .records.join(", "),
        .records.first().map_or("<record>", String::as_str)
    )]
    SeveralIntentsWithoutCursor {
        intents_dir: Utf8PathBuf,
        records: Vec<String>,
        cursor_path: Utf8PathBuf,
    },
    #[error(
        "\"{label}\" is not a usable intent label: use 1 to {INTENT_LABEL_MAX_CHARS} characters, a lowercase letter first, then lowercase letters, digits or '-' (for example \"guest-checkout\")"
    )]
    InvalidIntentLabel { label: String },
    #[error(
        "\"{label}\" cannot be an intent label: it is a command word ({}); choose a label that describes the work",
        RESERVED_INTENT_LABELS.join(", ")
    )]
    ReservedIntentLabel { label: String },
    #[error("the intent record {record} already exists; choose another label")]
    IntentRecordExists { record: Utf8PathBuf },
    #[error(
        "{path} is not a JSON array of intents, so no intent was added to it; fix the file or move it aside"
    )]
    RegistryNotAnArray { path: Utf8PathBuf },
    #[error("cannot take the audit lock to add an intent: {detail}")]
    RegistryLocked { detail: String },
    #[error("cannot read {path}: {detail}")]
    CannotRead { path: Utf8PathBuf, detail: String },
    #[error("cannot write {path}: {detail}")]
    CannotWrite { path: Utf8PathBuf, detail: String },
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}

// --- Spaces -------------------------------------------------------------------------------------

/// The active space: the trimmed content of `aidlc/active-space`, else `default`. Never an error:
/// a missing, empty or unreadable cursor, or one that is not a plain folder name (it holds `/`,
/// is `..`, ...), means `default`. The reference takes any text; refusing path-like names keeps
/// every derived path inside `aidlc/spaces/`.
pub fn active_space(project_dir: &Utf8Path) -> String {
    let cursor = workspace_root(project_dir).join(ACTIVE_SPACE_CURSOR_FILE);
    read_small_text(&cursor, CURSOR_MAX_BYTES)
        .map(|text| js_trim(&text).to_owned())
        .filter(|name| is_plain_folder_name(name))
        .unwrap_or_else(|| DEFAULT_SPACE.to_owned())
}

/// Whether `name` can be joined to a folder as exactly one new path component: not empty, not
/// `.` or `..`, and free of separators, NUL and other control characters.
pub fn is_plain_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

/// `aidlc/spaces/<space>/`.
pub fn space_dir(project_dir: &Utf8Path, space: &str) -> Utf8PathBuf {
    workspace_root(project_dir).join("spaces").join(space)
}

/// `aidlc/spaces/<space>/intents/`: the intent records, the registry and the active-intent
/// cursor; also the record root when no intent resolves.
pub fn intents_dir(project_dir: &Utf8Path, space: &str) -> Utf8PathBuf {
    space_dir(project_dir, space).join("intents")
}

// --- Intent records -----------------------------------------------------------------------------

/// Every intent record of a space: the child folders of `intents_dir` that hold
/// `aidlc-state.md`, sorted by name. Empty when the folder is missing or unreadable; names that
/// are not UTF-8 are skipped.
pub fn intent_records(project_dir: &Utf8Path, space: &str) -> Vec<Utf8PathBuf> {
    let dir = intents_dir(project_dir, space);
    let Ok(entries) = dir.read_dir_utf8() else {
        return Vec::new();
    };
    let mut records: Vec<Utf8PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path().to_owned())
        .filter(|path| path.join(STATE_FILE_NAME).exists())
        .collect();
    records.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    records
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
    match resolve_intent(project_dir, space, explicit)? {
        IntentResolution::Record(record) => Ok(Some(record)),
        IntentResolution::NoRecords | IntentResolution::SeveralWithoutCursor(_) => Ok(None),
    }
}

/// As [`active_intent`], for a command that must not guess: several records and no usable cursor
/// is an error saying how to set the cursor. No record at all is still `Ok(None)`.
pub fn unambiguous_active_intent(
    project_dir: &Utf8Path,
    space: &str,
    explicit: Option<&str>,
) -> Result<Option<Utf8PathBuf>, WorkspaceError> {
    match resolve_intent(project_dir, space, explicit)? {
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

enum IntentResolution {
    Record(Utf8PathBuf),
    NoRecords,
    SeveralWithoutCursor(Vec<Utf8PathBuf>),
}

fn resolve_intent(
    project_dir: &Utf8Path,
    space: &str,
    explicit: Option<&str>,
) -> Result<IntentResolution, WorkspaceError> {
    let records = intent_records(project_dir, space);
    if let Some(requested) = explicit {
        return explicit_record(project_dir, space, &records, requested)
            .map(IntentResolution::Record);
    }
    if let Some(record) = cursor_record(project_dir, space) {
        return Ok(IntentResolution::Record(record));
    }
    Ok(match records.len() {
        0 => IntentResolution::NoRecords,
        1 => IntentResolution::Record(records.into_iter().next().unwrap_or_default()),
        _ => IntentResolution::SeveralWithoutCursor(records),
    })
}

/// The record the `active-intent` cursor names, when it is a plain folder name of a real record.
fn cursor_record(project_dir: &Utf8Path, space: &str) -> Option<Utf8PathBuf> {
    let dir = intents_dir(project_dir, space);
    let text = read_small_text(&dir.join(ACTIVE_INTENT_CURSOR_FILE), CURSOR_MAX_BYTES)?;
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
    let Ok(bytes) = std::fs::read(intents_dir.join(INTENT_REGISTRY_FILE)) else {
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

// --- Intent creation ----------------------------------------------------------------------------

/// The longest label [`create_intent`] accepts.
pub const INTENT_LABEL_MAX_CHARS: usize = 48;
/// The registry status of a new intent: the reference's `createIntent` writes `in-flight`.
pub const NEW_INTENT_STATUS: &str = "in-flight";
/// The state schema version the reference's conductor accepts (`CURRENT_STATE_VERSION`).
pub const STATE_VERSION: &str = "8";
/// Labels the reference refuses because they are words of its `intent` and `space` commands
/// (`RESERVED_RECORD_NAMES`): a record so named could not be reached by name there.
const RESERVED_INTENT_LABELS: [&str; 8] = [
    "archive", "birth", "create", "help", "list", "rename", "show", "switch",
];

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
/// minimal `aidlc-state.md` (Project, Start Date, State Version, `Current Stage: none`), a row
/// `{uuid, slug, dirName, status}` appended to `intents.json`, and the `active-intent` cursor
/// naming the folder. Every file is written atomically, under the workspace audit lock the
/// reference takes for registry changes.
///
/// Differences from the reference, on purpose: a label that is not already a kebab slug is
/// refused rather than rewritten, an existing folder is an error rather than a `-2` suffix, and
/// a registry that is not a JSON array is refused rather than replaced by a one-row list.
///
/// Invariant: a refusal writes nothing; a failure to write the state or the registry removes
/// the folder this call created, so no record exists without its registry row.
pub fn create_intent(
    project_dir: &Utf8Path,
    label: &str,
    now: SystemTime,
) -> Result<CreatedIntent, WorkspaceError> {
    check_intent_label(label)?;
    let intents_dir = intents_dir(project_dir, &active_space(project_dir));
    let folder_name = format!("{}-{label}", utc_date_stamp(now));
    let record = intents_dir.join(&folder_name);
    let _lock = crate::audit::lock::acquire(project_dir).map_err(|error| {
        WorkspaceError::RegistryLocked {
            detail: error.to_string(),
        }
    })?;
    let registry_path = intents_dir.join(INTENT_REGISTRY_FILE);
    let mut rows = registry_rows_to_extend(&registry_path)?;
    let uuid = uuid::Uuid::now_v7().to_string();
    rows.push(new_registry_row(&uuid, label, &folder_name));
    create_record_folder(&intents_dir, &record)?;
    let started_at = crate::audit::timestamp::iso_timestamp(now);
    let filled = write_file(
        &state_file_path(&record),
        &new_intent_state_text(label, &started_at),
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
    if !is_kebab_slug(label) || label.len() > INTENT_LABEL_MAX_CHARS {
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
    let timestamp = crate::audit::timestamp::iso_timestamp(now);
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
    let bytes = match std::fs::read(registry_path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
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
fn new_intent_state_text(label: &str, started_at: &str) -> String {
    format!(
        "# AI-DLC State Tracking\n\
         \n\
         ## Project Information\n\
         - **Project**: {label}\n\
         - **Start Date**: {started_at}\n\
         - **State Version**: {STATE_VERSION}\n\
         \n\
         ## Current Status\n\
         - **Current Stage**: none\n"
    )
}

fn write_file(path: &Utf8Path, text: &str) -> Result<(), WorkspaceError> {
    crate::fs_util::write_atomic(path, text.as_bytes()).map_err(|error| {
        WorkspaceError::CannotWrite {
            path: path.to_owned(),
            detail: error.to_string(),
        }
    })
}

/// `state_text` with the value of its first line `- **<field>**: …` replaced by `value`, the
/// line ending kept (so a CRLF file stays CRLF); `None` when no line has the field. Lines are
/// split at `\n` only: a state written with bare `\r` or U+2028 separators, which
/// [`read_state_field`] also reads, is not rewritten.
pub fn set_state_field(state_text: &str, field: &str, value: &str) -> Option<String> {
    let prefix = format!("- **{field}**:");
    let mut replaced = false;
    let mut updated = String::with_capacity(state_text.len() + value.len());
    for line in state_text.split_inclusive('\n') {
        if !replaced && line.starts_with(prefix.as_str()) {
            let ending_start = line.trim_end_matches(['\n', '\r']).len();
            updated.push_str(&prefix);
            updated.push(' ');
            updated.push_str(value);
            updated.push_str(&line[ending_start..]);
            replaced = true;
        } else {
            updated.push_str(line);
        }
    }
    replaced.then_some(updated)
}

// --- Host, clone id and the audit shard ---------------------------------------------------------

/// The host part of a shard name (§4.7): the host name lowercased, each run of characters outside
/// `[a-z0-9-]` collapsed to `-`, `-` trimmed from both ends, cut to 48 characters (after the
/// trim, so a cut may end in `-`, as in the reference), and `host` when nothing is left.
pub fn host_name() -> String {
    sanitise_host_name(&raw_host_name())
}

/// The sanitising half of [`host_name`], for any raw name.
pub fn sanitise_host_name(raw: &str) -> String {
    let mut collapsed = String::with_capacity(raw.len());
    for character in raw.to_lowercase().chars() {
        if matches!(character, 'a'..='z' | '0'..='9' | '-') {
            collapsed.push(character);
        } else if !collapsed.ends_with('\u{0}') {
            collapsed.push('\u{0}');
        }
    }
    // A run of refused characters became one NUL above; a literal `-` next to it stays separate,
    // exactly as the reference's `/[^a-z0-9-]+/g` keeps it.
    let replaced = collapsed.replace('\u{0}', "-");
    let trimmed = replaced.trim_matches('-');
    let capped: String = trimmed.chars().take(HOST_NAME_MAX_CHARS).collect();
    if capped.is_empty() {
        "host".to_owned()
    } else {
        capped
    }
}

/// The host name as `gethostname(2)` gives it, which is what the reference's `os.hostname()`
/// calls: the `nodename` of `uname(2)`, from which the C library's `gethostname` copies it.
#[cfg(unix)]
fn raw_host_name() -> String {
    let system = rustix::system::uname();
    system.nodename().to_string_lossy().into_owned()
}

#[cfg(not(unix))]
fn raw_host_name() -> String {
    std::env::var("COMPUTERNAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_default()
}

/// `aidlc/.aidlc-clone-id`.
pub fn clone_id_path(project_dir: &Utf8Path) -> Utf8PathBuf {
    workspace_root(project_dir).join(CLONE_ID_FILE)
}

/// Whether `text` (already trimmed) is a clone id the reference accepts: 1 to 32 lowercase
/// letters or digits. Both engines must accept the same ids, or they would write two shards.
pub fn is_valid_clone_id(text: &str) -> bool {
    (1..=32).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// This clone's id, read from `aidlc/.aidlc-clone-id` (trimmed), or minted and stored there when
/// the file is missing: 12 random lowercase hex characters and a newline, published with a
/// no-replace link so that processes racing on a fresh clone all settle on one id.
///
/// A file holding something that is not a clone id is an error naming the file, never silently
/// replaced: the id names this clone's shard, so replacing it would split the ledger. (The
/// reference overwrites it; deleting the file lets either engine mint a new one.)
pub fn clone_id(project_dir: &Utf8Path) -> std::io::Result<String> {
    let path = clone_id_path(project_dir);
    match read_clone_id(&path)? {
        Some(id) => Ok(id),
        None => mint_clone_id(&path),
    }
}

/// The stored clone id without minting one: `None` when the file is missing or unusable.
pub fn existing_clone_id(project_dir: &Utf8Path) -> Option<String> {
    read_clone_id(&clone_id_path(project_dir)).ok().flatten()
}

/// `Ok(None)` when the file does not exist. An empty file is waited for briefly: another process
/// may have created it and not written it yet.
fn read_clone_id(path: &Utf8Path) -> std::io::Result<Option<String>> {
    for attempt in 0..=CLONE_ID_SETTLE_ATTEMPTS {
        let bytes = match read_bounded(path, CURSOR_MAX_BYTES) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let text = String::from_utf8_lossy(&bytes);
        let id = js_trim(&text);
        if is_valid_clone_id(id) {
            return Ok(Some(id.to_owned()));
        }
        if !id.is_empty() || attempt == CLONE_ID_SETTLE_ATTEMPTS {
            return Err(invalid_clone_id_error(path, id));
        }
        std::thread::sleep(CLONE_ID_SETTLE_DELAY);
    }
    Ok(None)
}

fn invalid_clone_id_error(path: &Utf8Path, content: &str) -> std::io::Error {
    let shown: String = content.chars().take(40).collect();
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "{path} holds \"{shown}\", which is not a clone id (1 to 32 lowercase letters or digits); \
             delete the file and a new id will be minted"
        ),
    )
}

fn mint_clone_id(path: &Utf8Path) -> std::io::Result<String> {
    let folder = path.parent().unwrap_or(Utf8Path::new("."));
    std::fs::create_dir_all(folder)?;
    let minted = random_lowercase_hex(MINTED_CLONE_ID_CHARS);
    let contents = format!("{minted}\n");
    match publish_without_replacing(path, contents.as_bytes()) {
        Ok(()) => Ok(minted),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => read_clone_id(path)?
            .ok_or_else(|| std::io::Error::other(format!("{path} vanished while being minted"))),
        Err(error) => Err(error),
    }
}

/// Create `path` with `contents` unless it exists (then `AlreadyExists`). Readers never see a
/// partial file where hard links work: the bytes are written to a private temporary file first
/// and linked into place. Where links are refused, the file is created exclusively and written
/// in place; [`read_clone_id`] waits for such a file to fill.
fn publish_without_replacing(path: &Utf8Path, contents: &[u8]) -> std::io::Result<()> {
    let folder = path.parent().unwrap_or(Utf8Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".aidlc-clone-id.").suffix(".tmp");
    // The link shares the temporary file's mode: make it what a plain create would give
    // (`rw-r--r--` less the umask), not the private mode of a temporary file.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut temporary = builder.tempfile_in(folder)?;
    temporary.write_all(contents)?;
    temporary.as_file().sync_all()?;
    match std::fs::hard_link(temporary.path(), path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(error),
        Err(_) => write_exclusively(path, contents),
    }
}

fn write_exclusively(path: &Utf8Path, contents: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

/// `<record_root>/audit/`.
pub fn audit_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join("audit")
}

/// This clone's shard under the active record root: `<record_root>/audit/<host>-<clone-id>.md`.
/// Mints the clone id on first use.
pub fn audit_shard_path(project_dir: &Utf8Path) -> std::io::Result<Utf8PathBuf> {
    audit_shard_path_under(project_dir, &record_root(project_dir))
}

/// This clone's shard under a given record root. Mints the clone id on first use.
pub fn audit_shard_path_under(
    project_dir: &Utf8Path,
    record_root: &Utf8Path,
) -> std::io::Result<Utf8PathBuf> {
    let clone_id = clone_id(project_dir)?;
    Ok(audit_dir(record_root).join(format!("{}-{clone_id}.md", host_name())))
}

/// This clone's shard under a record root when the clone id exists and the shard is on disk;
/// never mints (a clone without an id has no shard yet).
pub fn existing_audit_shard(project_dir: &Utf8Path, record_root: &Utf8Path) -> Option<Utf8PathBuf> {
    let clone_id = existing_clone_id(project_dir)?;
    let shard = audit_dir(record_root).join(format!("{}-{clone_id}.md", host_name()));
    shard.is_file().then_some(shard)
}

// --- Folders the engine writes into -------------------------------------------------------------

/// Why a folder the engine was about to write into was refused (the reference's wording for a
/// produce folder that escapes, §5.2, applied to every folder the engine writes into).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteFolderError {
    #[error(
        "Refusing to write into \"{folder}\": it is not inside the project root \"{project}\"."
    )]
    NotUnderProject {
        folder: Utf8PathBuf,
        project: Utf8PathBuf,
    },
    #[error(
        "Refusing to write into \"{folder}\": it resolves to \"{resolved}\", which escapes the project root \"{project}\" after canonicalization."
    )]
    Escapes {
        folder: Utf8PathBuf,
        resolved: Utf8PathBuf,
        project: Utf8PathBuf,
    },
    #[error("Refusing to write into \"{folder}\": cannot resolve \"{path}\": {detail}")]
    Unresolvable {
        folder: Utf8PathBuf,
        path: Utf8PathBuf,
        detail: String,
    },
    #[error("cannot create the folder {folder}: {detail}")]
    CannotCreate { folder: Utf8PathBuf, detail: String },
}

/// Check that `folder`, which the engine is about to create or write into, stays inside the
/// project once every symbolic link on its way is resolved: it must lie under `project_dir` as
/// written (no `..`), and its deepest existing ancestor (itself, when it exists; a dangling link
/// counts as existing and cannot be resolved) must canonicalise under the canonical project.
/// Writes nothing. Returns where the folder resolves.
pub fn check_write_folder(
    project_dir: &Utf8Path,
    folder: &Utf8Path,
) -> Result<Utf8PathBuf, WriteFolderError> {
    let lexically_inside = folder.starts_with(project_dir)
        && !folder
            .components()
            .any(|component| component == camino::Utf8Component::ParentDir);
    if !lexically_inside {
        return Err(WriteFolderError::NotUnderProject {
            folder: folder.to_owned(),
            project: project_dir.to_owned(),
        });
    }
    let unresolvable = |path: &Utf8Path, error: &std::io::Error| WriteFolderError::Unresolvable {
        folder: folder.to_owned(),
        path: path.to_owned(),
        detail: error.to_string(),
    };
    let project = project_dir
        .canonicalize_utf8()
        .map_err(|error| unresolvable(project_dir, &error))?;
    let mut existing = folder;
    let mut missing = Vec::new();
    loop {
        match std::fs::symlink_metadata(existing) {
            Ok(_) => break,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(unresolvable(existing, &error));
                };
                missing.push(name);
                existing = parent;
            }
            Err(error) => return Err(unresolvable(existing, &error)),
        }
    }
    let mut resolved = existing
        .canonicalize_utf8()
        .map_err(|error| unresolvable(existing, &error))?;
    resolved.extend(missing.iter().rev());
    if resolved.starts_with(&project) {
        Ok(resolved)
    } else {
        Err(WriteFolderError::Escapes {
            folder: folder.to_owned(),
            resolved,
            project,
        })
    }
}

/// [`check_write_folder`], then create the missing folders, then check again (a link swapped in
/// while the folders were made is caught before anything is written into them).
pub fn create_write_folder(
    project_dir: &Utf8Path,
    folder: &Utf8Path,
) -> Result<(), WriteFolderError> {
    check_write_folder(project_dir, folder)?;
    std::fs::create_dir_all(folder).map_err(|error| WriteFolderError::CannotCreate {
        folder: folder.to_owned(),
        detail: error.to_string(),
    })?;
    check_write_folder(project_dir, folder).map(drop)
}

/// `<record_root>/.aidlc-engine`: the engine's own folder in a record (detail files, hook
/// health).
pub fn engine_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(ENGINE_DIR)
}

// --- Record-local folders -----------------------------------------------------------------------

/// `<record_root>/.aidlc-engine/sensors`: where detail files are written ([gate], §4.8).
pub fn sensor_detail_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(ENGINE_DIR).join("sensors")
}

/// `<record_root>/.aidlc-sensors`: the [2.5]/[2.6] detail folder (the write hook's recursion
/// guard covers it too).
pub fn legacy_sensor_detail_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(LEGACY_SENSOR_DETAIL_DIR)
}

/// `<record_root>/.aidlc-engine/hooks-health`: hook heartbeats and drop logs (the newest
/// reference's `hooksHealthDir`; older records used `.aidlc-hooks-health`).
pub fn hooks_health_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(ENGINE_DIR).join("hooks-health")
}

// --- The state file and the active stage --------------------------------------------------------

/// `<record_root>/aidlc-state.md`.
pub fn state_file_path(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(STATE_FILE_NAME)
}

/// The state file's text (invalid UTF-8 replaced, as the reference's read does), or `None` when
/// it is missing or unreadable.
pub fn read_state_text(record_root: &Utf8Path) -> Option<String> {
    let bytes = std::fs::read(state_file_path(record_root)).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The value of the first line `- **<field>**: <value>` of a state file, trimmed; `Some("")` for
/// a field with an empty value, `None` when no line has the field. Lines end at `\n`, `\r`,
/// U+2028 or U+2029, as JavaScript's do, so CRLF files read the same as LF files.
pub fn read_state_field(state_text: &str, field: &str) -> Option<String> {
    let prefix = format!("- **{field}**:");
    state_text
        .split(['\n', '\r', '\u{2028}', '\u{2029}'])
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .map(|value| js_trim(value).to_owned())
}

/// The Sensors ceremony switched off in the state: `- **Sensors**: off (set by you)` (its first
/// word, so a note after it does not matter).
pub fn sensors_off_in_state(state_text: &str) -> bool {
    read_state_field(state_text, "Sensors")
        .is_some_and(|value| value.split_whitespace().next() == Some("off"))
}

/// The Sensors ceremony switched off for this process: `AIDLC_DISABLE_SENSORS=1`.
pub fn sensors_off_by_environment() -> bool {
    std::env::var("AIDLC_DISABLE_SENSORS").is_ok_and(|value| value.trim() == "1")
}

/// The state's `Current Stage`, unless it is missing, empty or `none`.
pub fn current_stage(state_text: &str) -> Option<String> {
    read_state_field(state_text, "Current Stage")
        .filter(|stage| !stage.is_empty() && stage != "none")
}

/// The write hook's view of the active record (§4.11 steps 4 and 6): a workflow is active when
/// the record's state file is readable and names a current stage. Whether this clone has
/// written an audit row yet does not matter (failure-modes N6: a fresh clone or worktree has no
/// shard of its own, and its first fire creates it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentWorkflow {
    pub record_root: Utf8PathBuf,
    pub state_text: String,
    pub stage_choice: ActiveStageChoice,
}

/// The active workflow of the project, when there is one (see [`PresentWorkflow`]). Never mints
/// a clone id and writes nothing.
pub fn present_workflow(project_dir: &Utf8Path) -> Option<PresentWorkflow> {
    let record_root = record_root(project_dir);
    let state_text = read_state_text(&record_root)?;
    let stage_choice = active_stage_choice(&record_root, &state_text)?;
    Some(PresentWorkflow {
        record_root,
        state_text,
        stage_choice,
    })
}

/// The stage (and unit) the conductor's active-directive marker names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveDirective {
    pub stage: String,
    pub unit: Option<String>,
}

/// The active-directive marker of a record, when it is current: `<record_root>/.aidlc-active-
/// directive.json`, at most 64 KiB, a JSON object of version 1 or 2 whose `stage` (trimmed) is a
/// kebab slug, whose `unit`, if the key is present, is a non-empty string, and whose
/// `state_sha256` is the SHA-256 of `state_text`. A marker for another state is stale and
/// ignored. (Version 2 markers carry conductor bookkeeping that this engine does not check: the
/// digest already proves the marker describes this state.)
pub fn active_directive_marker(
    record_root: &Utf8Path,
    state_text: &str,
) -> Option<ActiveDirective> {
    let path = record_root.join(ACTIVE_DIRECTIVE_MARKER_FILE);
    let bytes = read_bounded(&path, ACTIVE_DIRECTIVE_MAX_BYTES + 1).ok()?;
    if bytes.len() as u64 > ACTIVE_DIRECTIVE_MAX_BYTES {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let marker = value.as_object()?;
    let state_digest = sha256_hex(state_text.as_bytes());
    (marker_version_is_known(marker)
        && marker
            .get("state_sha256")
            .and_then(serde_json::Value::as_str)
            == Some(&state_digest))
    .then(|| marker_directive(marker))
    .flatten()
}

fn marker_version_is_known(marker: &serde_json::Map<String, serde_json::Value>) -> bool {
    marker
        .get("version")
        .and_then(serde_json::Value::as_f64)
        .is_some_and(|version| {
            [1.0_f64, 2.0]
                .iter()
                .any(|known| known.total_cmp(&version).is_eq())
        })
}

fn marker_directive(
    marker: &serde_json::Map<String, serde_json::Value>,
) -> Option<ActiveDirective> {
    let stage = js_trim(marker.get("stage")?.as_str()?);
    if !is_kebab_slug(stage) {
        return None;
    }
    let unit = match marker.get("unit") {
        None => None,
        Some(value) => Some(js_trim(value.as_str()?)).filter(|unit| !unit.is_empty()),
    };
    if marker.contains_key("unit") && unit.is_none() {
        return None;
    }
    Some(ActiveDirective {
        stage: stage.to_owned(),
        unit: unit.map(str::to_owned),
    })
}

/// `^[a-z][a-z0-9-]*$`.
fn is_kebab_slug(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// What the write hook needs to pick a stage (§4.11 step 6): the state's `Current Stage` and the
/// current marker, if any. The hook prefers the marker's stage and falls back to the current
/// stage when the graph does not know the marker's stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveStageChoice {
    pub current_stage: String,
    pub marker: Option<ActiveDirective>,
}

impl ActiveStageChoice {
    /// The marker's stage, else the current stage.
    pub fn preferred_stage(&self) -> &str {
        self.marker
            .as_ref()
            .map_or(self.current_stage.as_str(), |marker| marker.stage.as_str())
    }

    /// The marker's unit, when the chosen `stage` is the marker's.
    pub fn unit_for(&self, stage: &str) -> Option<&str> {
        self.marker
            .as_ref()
            .filter(|marker| marker.stage == stage)
            .and_then(|marker| marker.unit.as_deref())
    }
}

/// The stage choice for a record's state. `None` when `Current Stage` is missing, empty or
/// `none`: the reference stops there even when a marker names a stage.
pub fn active_stage_choice(record_root: &Utf8Path, state_text: &str) -> Option<ActiveStageChoice> {
    let current_stage = current_stage(state_text)?;
    Some(ActiveStageChoice {
        current_stage,
        marker: active_directive_marker(record_root, state_text),
    })
}

/// The active stage of a record: the current marker's stage, else `Current Stage`; `None` when
/// the state is unreadable or `Current Stage` is missing, empty or `none`.
pub fn active_stage(record_root: &Utf8Path) -> Option<String> {
    let state_text = read_state_text(record_root)?;
    active_stage_choice(record_root, &state_text).map(|choice| choice.preferred_stage().to_owned())
}

// --- Small helpers ------------------------------------------------------------------------------

/// A small file's text, invalid UTF-8 replaced; `None` if missing, unreadable or larger than
/// `limit` bytes.
fn read_small_text(path: &Utf8Path, limit: u64) -> Option<String> {
    let bytes = read_bounded(path, limit + 1).ok()?;
    (bytes.len() as u64 <= limit).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// At most `limit` bytes of a file, from one descriptor.
fn read_bounded(path: &Utf8Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

// --- SHA-256 (for the marker's state digest only; content hashes elsewhere are BLAKE3) ----------

/// SHA-256 of `bytes` as 64 lowercase hex characters.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        (dir, path)
    }

    fn write(path: &Utf8Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn make_record(project: &Utf8Path, space: &str, name: &str) -> Utf8PathBuf {
        let record = intents_dir(project, space).join(name);
        write(&record.join(STATE_FILE_NAME), "# state\n");
        record
    }

    fn set_intent_cursor(project: &Utf8Path, space: &str, text: &str) {
        write(
            &intents_dir(project, space).join(ACTIVE_INTENT_CURSOR_FILE),
            text,
        );
    }

    // --- spaces

    #[test]
    fn active_space_defaults_without_a_cursor() {
        let (_dir, project) = temp_project();
        assert_eq!(active_space(&project), "default");
    }

    #[test]
    fn active_space_reads_the_trimmed_cursor() {
        let (_dir, project) = temp_project();
        write(&project.join("aidlc/active-space"), "\u{feff} team-a \r\n");
        assert_eq!(active_space(&project), "team-a");
    }

    #[test]
    fn active_space_refuses_empty_and_path_like_names() {
        let (_dir, project) = temp_project();
        for text in ["", "  \n", "..", ".", "../../etc", "a/b", "a\\b", "a\u{0}b"] {
            write(&project.join("aidlc/active-space"), text);
            assert_eq!(active_space(&project), "default", "cursor {text:?}");
        }
    }

    #[test]
    fn active_space_treats_a_folder_cursor_as_missing() {
        let (_dir, project) = temp_project();
        std::fs::create_dir_all(project.join("aidlc/active-space")).unwrap();
        assert_eq!(active_space(&project), "default");
    }

    #[test]
    fn space_paths_nest_under_the_workspace_root() {
        let project = Utf8Path::new("/p");
        assert_eq!(space_dir(project, "s"), "/p/aidlc/spaces/s");
        assert_eq!(intents_dir(project, "s"), "/p/aidlc/spaces/s/intents");
    }

    // --- records

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

    // --- intent creation

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
        let created = create_intent(&project, "guest-checkout", fixed_now()).unwrap();
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
        let created = create_intent(&project, "guest-checkout", fixed_now()).unwrap();
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
        let created = create_intent(&project, "guest-checkout", fixed_now()).unwrap();
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
        let first = create_intent(&project, "guest-checkout", fixed_now()).unwrap();
        let later = fixed_now() + Duration::from_secs(86_400);
        let second = create_intent(&project, "refund-flow", later).unwrap();
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
        let created = create_intent(&project, "guest-checkout", fixed_now()).unwrap();
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
            let error = create_intent(&project, label, fixed_now()).unwrap_err();
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
            let error = create_intent(&project, label, fixed_now()).unwrap_err();
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
        let first = create_intent(&project, "guest-checkout", fixed_now()).unwrap();
        let registry_before =
            std::fs::read(intents_dir(&project, "default").join(INTENT_REGISTRY_FILE)).unwrap();
        let error = create_intent(&project, "guest-checkout", fixed_now()).unwrap_err();
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
        let error = create_intent(&project, "guest-checkout", fixed_now()).unwrap_err();
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
            let error = create_intent(&project, "guest-checkout", fixed_now()).unwrap_err();
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
        create_intent(&project, "guest-checkout", fixed_now()).unwrap();
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

    #[test]
    fn a_state_field_is_replaced_on_its_first_line_only() {
        let state = "# S\r\n- **Current Stage**: none\r\n- **Current Stage**: other\r\n";
        assert_eq!(
            set_state_field(state, "Current Stage", "user-stories").as_deref(),
            Some("# S\r\n- **Current Stage**: user-stories\r\n- **Current Stage**: other\r\n")
        );
        assert_eq!(
            set_state_field("- **Current Stage**:", "Current Stage", "x").as_deref(),
            Some("- **Current Stage**: x")
        );
        assert_eq!(
            set_state_field("- **Scope**: a\n", "Current Stage", "x"),
            None
        );
        let updated = set_state_field("- **Current Stage**: none\n", "Current Stage", "a").unwrap();
        assert_eq!(current_stage(&updated).as_deref(), Some("a"));
    }

    // --- host and clone id

    #[test]
    fn host_names_are_sanitised_as_the_reference_does() {
        let cases = [
            ("MyHost.Local", "myhost-local"),
            ("build_01.example.com", "build-01-example-com"),
            ("--edge--", "edge"),
            ("a..--..b", "a----b"),
            ("", "host"),
            ("....", "host"),
            ("Ünïcode-Box", "n-code-box"),
            ("a.-b", "a--b"),
        ];
        for (raw, expected) in cases {
            assert_eq!(sanitise_host_name(raw), expected, "raw {raw:?}");
        }
    }

    #[test]
    fn host_names_are_cut_after_trimming() {
        let long = format!("{}-tail", "a".repeat(47));
        assert_eq!(sanitise_host_name(&long), format!("{}-", "a".repeat(47)));
        assert_eq!(sanitise_host_name(&"b".repeat(60)).len(), 48);
    }

    #[test]
    fn the_real_host_name_is_usable_in_a_file_name() {
        let host = host_name();
        assert!(!host.is_empty() && host.len() <= 48);
        assert!(
            host.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_raw_host_name_is_the_kernels() {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(raw_host_name(), kernel.trim_end());
    }

    #[test]
    fn a_clone_id_is_minted_once_and_reused() {
        let (_dir, project) = temp_project();
        assert_eq!(existing_clone_id(&project), None);
        let first = clone_id(&project).unwrap();
        assert_eq!(first.len(), 12);
        assert!(
            first
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(
            std::fs::read_to_string(clone_id_path(&project)).unwrap(),
            format!("{first}\n")
        );
        assert_eq!(clone_id(&project).unwrap(), first);
        assert_eq!(existing_clone_id(&project), Some(first));
        let leftovers = std::fs::read_dir(project.join("aidlc")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file may stay behind");
    }

    #[cfg(unix)]
    #[test]
    fn a_minted_clone_id_file_is_readable_by_others() {
        use std::os::unix::fs::PermissionsExt as _;
        let (_dir, project) = temp_project();
        clone_id(&project).unwrap();
        let mode = std::fs::metadata(clone_id_path(&project))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o044, 0o044 & !current_umask());
    }

    #[cfg(unix)]
    fn current_umask() -> u32 {
        let probe = tempfile::tempdir().unwrap();
        let path = probe.path().join("probe");
        std::fs::write(&path, "").unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        0o666 & !mode
    }

    #[test]
    fn a_reference_clone_id_is_read_trimmed() {
        let (_dir, project) = temp_project();
        write(&clone_id_path(&project), "  abc123def456\r\n");
        assert_eq!(clone_id(&project).unwrap(), "abc123def456");
    }

    #[test]
    fn an_invalid_clone_id_is_an_error_and_left_alone() {
        let (_dir, project) = temp_project();
        write(&clone_id_path(&project), "Not An Id\n");
        let error = clone_id(&project).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("Not An Id"), "{error}");
        assert_eq!(
            std::fs::read_to_string(clone_id_path(&project)).unwrap(),
            "Not An Id\n"
        );
        assert_eq!(existing_clone_id(&project), None);
    }

    #[test]
    fn concurrent_minting_yields_one_id() {
        let (_dir, project) = temp_project();
        let ids: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .map(|_| scope.spawn(|| clone_id(&project).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
        assert_eq!(
            std::fs::read_to_string(clone_id_path(&project)).unwrap(),
            format!("{}\n", ids[0])
        );
    }

    #[test]
    fn the_audit_shard_sits_under_the_record_root() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260904-x");
        let shard = audit_shard_path(&project).unwrap();
        let id = existing_clone_id(&project).unwrap();
        assert_eq!(
            shard,
            record
                .join("audit")
                .join(format!("{}-{id}.md", host_name()))
        );
        assert_eq!(existing_audit_shard(&project, &record), None);
        write(&shard, "# AI-DLC Audit Log\n");
        assert_eq!(existing_audit_shard(&project, &record), Some(shard));
    }

    #[test]
    fn without_an_intent_the_shard_goes_to_the_space_record_root() {
        let (_dir, project) = temp_project();
        let shard = audit_shard_path(&project).unwrap();
        assert_eq!(
            shard.parent().unwrap(),
            project.join("aidlc/spaces/default/intents/audit")
        );
    }

    // --- record-local folders

    #[test]
    fn record_local_folders() {
        let root = Utf8Path::new("/r");
        assert_eq!(sensor_detail_dir(root), "/r/.aidlc-engine/sensors");
        assert_eq!(legacy_sensor_detail_dir(root), "/r/.aidlc-sensors");
        assert_eq!(hooks_health_dir(root), "/r/.aidlc-engine/hooks-health");
        assert_eq!(state_file_path(root), "/r/aidlc-state.md");
    }

    // --- state and stage

    #[test]
    fn state_fields_are_read_from_bullet_lines() {
        let state = "# State\n- **Scope**: feature\n- **Current Stage**:   intent-capture  \n";
        assert_eq!(
            read_state_field(state, "Current Stage").as_deref(),
            Some("intent-capture")
        );
        assert_eq!(read_state_field(state, "Scope").as_deref(), Some("feature"));
        assert_eq!(read_state_field(state, "Missing"), None);
    }

    #[test]
    fn state_fields_read_the_same_with_crlf() {
        let state = "- **Current Stage**: code-generation\r\n- **Sensors**: off\r\n";
        assert_eq!(
            read_state_field(state, "Current Stage").as_deref(),
            Some("code-generation")
        );
        assert_eq!(read_state_field(state, "Sensors").as_deref(), Some("off"));
    }

    #[test]
    fn an_empty_field_does_not_run_into_the_next_line() {
        let state = "- **Current Stage**:\n- **Next**: x\n";
        assert_eq!(
            read_state_field(state, "Current Stage").as_deref(),
            Some("")
        );
        assert_eq!(current_stage(state), None);
    }

    #[test]
    fn field_lines_must_start_with_the_bullet() {
        let state = "  - **Current Stage**: indented\n**Current Stage**: bare\n";
        assert_eq!(read_state_field(state, "Current Stage"), None);
    }

    #[test]
    fn the_first_matching_line_wins() {
        let state = "- **Current Stage**: first\n- **Current Stage**: second\n";
        assert_eq!(current_stage(state).as_deref(), Some("first"));
    }

    #[test]
    fn none_is_no_current_stage() {
        assert_eq!(current_stage("- **Current Stage**: none\n"), None);
        assert_eq!(current_stage("no fields"), None);
    }

    fn marker_json(stage: &str, state: &str, extra: &str) -> String {
        format!(
            r#"{{"version": 1, "stage": "{stage}", "state_sha256": "{}"{extra}}}"#,
            sha256_hex(state.as_bytes())
        )
    }

    #[test]
    fn a_current_marker_names_the_active_stage() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: functional-design\n";
        write(&state_file_path(&root), state);
        write(
            &root.join(ACTIVE_DIRECTIVE_MARKER_FILE),
            &marker_json(" code-generation ", state, r#", "unit": "billing""#),
        );
        assert_eq!(active_stage(&root).as_deref(), Some("code-generation"));
        let choice = active_stage_choice(&root, state).unwrap();
        assert_eq!(choice.current_stage, "functional-design");
        assert_eq!(choice.unit_for("code-generation"), Some("billing"));
        assert_eq!(choice.unit_for("functional-design"), None);
    }

    #[test]
    fn a_stale_or_malformed_marker_is_ignored() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: functional-design\r\n";
        write(&state_file_path(&root), state);
        let marker = root.join(ACTIVE_DIRECTIVE_MARKER_FILE);
        let cases = [
            marker_json("code-generation", "an older state", ""),
            marker_json("Code-Generation", state, ""),
            marker_json("code-generation", state, r#", "unit": "  ""#),
            marker_json("code-generation", state, r#", "unit": 3"#),
            marker_json("code-generation", state, "").replace("\"version\": 1", "\"version\": 3"),
            "[1, 2]".to_owned(),
            "{broken".to_owned(),
        ];
        for text in cases {
            write(&marker, &text);
            assert_eq!(
                active_stage(&root).as_deref(),
                Some("functional-design"),
                "marker {text}"
            );
        }
    }

    #[test]
    fn an_oversized_marker_is_ignored() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: a\n";
        let padding = " ".repeat(70 * 1024);
        write(
            &root.join(ACTIVE_DIRECTIVE_MARKER_FILE),
            &marker_json("b", state, &format!(",{padding}\"x\": 1")),
        );
        assert_eq!(active_directive_marker(&root, state), None);
    }

    #[test]
    fn no_current_stage_means_no_active_stage_even_with_a_marker() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: none\n";
        write(&state_file_path(&root), state);
        write(
            &root.join(ACTIVE_DIRECTIVE_MARKER_FILE),
            &marker_json("code-generation", state, ""),
        );
        assert_eq!(active_stage(&root), None);
    }

    #[test]
    fn a_missing_state_file_has_no_active_stage() {
        let (_dir, root) = temp_project();
        assert_eq!(read_state_text(&root), None);
        assert_eq!(active_stage(&root), None);
    }

    #[test]
    fn a_workflow_is_present_with_a_readable_state_and_a_current_stage_shard_or_not() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260904-x");
        write(&state_file_path(&record), "- **Current Stage**: none\n");
        assert_eq!(present_workflow(&project), None, "no current stage");
        write(
            &state_file_path(&record),
            "- **Current Stage**: code-generation\n",
        );
        let present = present_workflow(&project).expect("no shard of this clone is needed");
        assert_eq!(present.record_root, record);
        assert_eq!(present.stage_choice.current_stage, "code-generation");
        assert_eq!(existing_clone_id(&project), None, "the check must not mint");
        std::fs::remove_file(record.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(present_workflow(&project), None);
    }

    // --- folders the engine writes into

    #[test]
    fn folders_inside_the_project_pass_whether_or_not_they_exist() {
        let (_dir, project) = temp_project();
        let project = project.canonicalize_utf8().unwrap();
        std::fs::create_dir_all(project.join("aidlc/x")).unwrap();
        for folder in [
            project.clone(),
            project.join("aidlc/x"),
            project.join("aidlc/x/audit/deeper"),
        ] {
            assert_eq!(check_write_folder(&project, &folder), Ok(folder.clone()));
        }
        let made = project.join("aidlc/x/.aidlc-engine/sensors/s");
        create_write_folder(&project, &made).unwrap();
        assert!(made.is_dir());
    }

    #[test]
    fn folders_outside_the_project_by_their_path_are_refused() {
        let (_dir, project) = temp_project();
        for folder in [
            Utf8PathBuf::from("/elsewhere/audit"),
            project.join("../audit"),
            project.join("aidlc/../../audit"),
        ] {
            assert!(
                matches!(
                    check_write_folder(&project, &folder),
                    Err(WriteFolderError::NotUnderProject { .. })
                ),
                "{folder}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_on_the_way_out_of_the_project_is_refused_and_nothing_is_created() {
        let (_dir, project) = temp_project();
        let project = project.canonicalize_utf8().unwrap();
        let (_outside_dir, outside) = temp_project();
        let outside = outside.canonicalize_utf8().unwrap();
        let record = project.join("aidlc/spaces/default/intents/r");
        std::fs::create_dir_all(&record).unwrap();
        std::os::unix::fs::symlink(&outside, record.join(".aidlc-engine")).unwrap();
        let folder = record.join(".aidlc-engine/sensors/stage");
        let error = create_write_folder(&project, &folder).unwrap_err();
        assert_eq!(
            error,
            WriteFolderError::Escapes {
                folder: folder.clone(),
                resolved: outside.join("sensors/stage"),
                project: project.clone(),
            }
        );
        assert_eq!(
            error.to_string(),
            format!(
                "Refusing to write into \"{folder}\": it resolves to \"{outside}/sensors/stage\", which escapes the project root \"{project}\" after canonicalization."
            )
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

        // A dangling link cannot be resolved, so it is refused too.
        std::os::unix::fs::symlink(outside.join("gone"), record.join("audit")).unwrap();
        assert!(matches!(
            create_write_folder(&project, &record.join("audit")),
            Err(WriteFolderError::Unresolvable { .. })
        ));
        assert!(!outside.join("gone").exists());

        // A link that stays inside the project is fine.
        std::fs::create_dir_all(project.join("elsewhere-inside")).unwrap();
        std::os::unix::fs::symlink(project.join("elsewhere-inside"), record.join("inside"))
            .unwrap();
        assert_eq!(
            check_write_folder(&project, &record.join("inside/x")),
            Ok(project.join("elsewhere-inside/x"))
        );
    }

    // --- helpers

    #[test]
    fn sha256_matches_the_fips_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            sha256_hex(&[b'a'; 1000]),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }
}
