//! Why an explicit or required intent choice, or a new intent, cannot be honoured.
//!
//! The rules for intent labels live here because the messages quote them; `create.rs` applies
//! them.

use camino::Utf8PathBuf;

/// The longest label `create_intent` accepts.
pub const INTENT_LABEL_MAX_CHARS: usize = 48;
/// Labels the reference refuses because they are words of its `intent` and `space` commands
/// (`RESERVED_RECORD_NAMES`): a record so named could not be reached by name there.
pub(super) const RESERVED_INTENT_LABELS: [&str; 8] = [
    "archive", "birth", "create", "help", "list", "rename", "show", "switch",
];

/// An explicit or required intent choice that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "no intent record named \"{requested}\" in {intents_dir}; known records: {}",
        crate::leaves::english::names_or_none(.known)
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
