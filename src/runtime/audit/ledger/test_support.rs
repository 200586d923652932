//! Helpers the ledger's unit tests share.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};

use super::FireIdentity;

pub fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

pub fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    (dir, path)
}

pub fn sample_fire() -> FireIdentity {
    FireIdentity::new(
        Utf8Path::new("/work/proj"),
        "a65d19af",
        "claim-sources",
        "intent-capture",
        "/work/proj/aidlc/spaces/default/intents/260904-x/ideation/intent-capture/intent-statement.md",
    )
}
