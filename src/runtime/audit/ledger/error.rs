//! Why an audit row or block could not be built or appended.

use camino::Utf8PathBuf;

use crate::leaves::audit_lock::LockError;
use crate::leaves::write_folder::WriteFolderError;

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error(
        "audit field key \"{key}\" is not one Markdown label: it must match ^[A-Za-z][A-Za-z0-9 ._()/-]*$"
    )]
    InvalidFieldKey { key: String },
    #[error("audit field key \"{key}\" is reserved: the writer emits **{key}** itself")]
    ReservedFieldKey { key: String },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("refusing an audit shard outside the project {project_dir}: {shard_path}")]
    ShardOutsideProject {
        project_dir: Utf8PathBuf,
        shard_path: Utf8PathBuf,
    },
    #[error(transparent)]
    Folder(#[from] WriteFolderError),
    #[error(
        "fire {fire_id} is incomplete: its terminal row could not be written to the audit shard {shard_path}: {source}"
    )]
    TerminalRowNotWritten {
        fire_id: String,
        shard_path: Utf8PathBuf,
        source: Box<LedgerError>,
    },
    #[error("cannot append to the audit shard {path}: {source}")]
    Io {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
}
