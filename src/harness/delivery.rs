//! Codex delivers every hook event twice (the reference's adapter saw it across its whole
//! capture corpus): the second delivery of the same payload to the same hook is recognised and
//! does nothing, so a write fires each sensor once and a prompt records one human turn.
//!
//! The first delivery claims a slot named after the hook and the payload's bytes with an
//! atomic `mkdir` in the OS temporary folder (one folder per project); a delivery that finds
//! the slot taken is the duplicate. Slots older than [`SLOT_LIFETIME`] are removed by the next
//! delivery, so a later identical event (a new turn carries a new `turn_id`, so it differs
//! anyway) is not taken for a duplicate forever.
//!
//! Invariant: when the slot cannot be claimed or checked for any other reason, the delivery
//! counts as the first: a write is checked twice rather than not at all.

use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};

/// How long a delivery's slot is kept.
pub const SLOT_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Whether this delivery of `payload` to `hook` is the first (and claim it when it is).
#[expect(
    clippy::disallowed_methods,
    reason = "the delivery slots in the machine's runtime folder, outside any project"
)]
pub fn first_delivery(
    temp_dir: &Utf8Path,
    project_dir: &Utf8Path,
    hook: &str,
    payload: &[u8],
) -> bool {
    let root = slots_dir(temp_dir, project_dir);
    if std::fs::create_dir_all(&root).is_err() {
        return true;
    }
    remove_stale_slots(&root, SystemTime::now());
    let mut hasher = blake3::Hasher::new();
    hasher.update(hook.as_bytes());
    hasher.update(b"\n");
    hasher.update(payload);
    let slot = root.join(&hasher.finalize().to_hex()[..32]);
    match std::fs::create_dir(&slot) {
        Ok(()) => true,
        Err(error) => error.kind() != std::io::ErrorKind::AlreadyExists,
    }
}

/// The folder of `project_dir`'s slots.
fn slots_dir(temp_dir: &Utf8Path, project_dir: &Utf8Path) -> Utf8PathBuf {
    let project = blake3::hash(project_dir.as_str().as_bytes());
    temp_dir.join(format!(
        "aidlc-engine-codex-deliveries-{}",
        &project.to_hex()[..16]
    ))
}

#[expect(
    clippy::disallowed_methods,
    reason = "the delivery slots in the machine's runtime folder, outside any project"
)]
fn remove_stale_slots(root: &Utf8Path, now: SystemTime) {
    let Ok(entries) = root.read_dir_utf8() else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let stale = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .is_ok_and(|modified| {
                now.duration_since(modified)
                    .is_ok_and(|age| age > SLOT_LIFETIME)
            });
        if stale {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_delivery_of_one_payload_to_one_hook_is_a_duplicate() {
        let temp = tempfile::tempdir().unwrap();
        let temp = Utf8Path::from_path(temp.path()).unwrap();
        let project = Utf8Path::new("/p");
        assert!(first_delivery(temp, project, "run-sensors", b"{\"a\":1}"));
        assert!(!first_delivery(temp, project, "run-sensors", b"{\"a\":1}"));
        assert!(first_delivery(
            temp,
            project,
            "record-human-turn",
            b"{\"a\":1}"
        ));
        assert!(first_delivery(temp, project, "run-sensors", b"{\"a\":2}"));
        assert!(first_delivery(
            temp,
            Utf8Path::new("/q"),
            "run-sensors",
            b"{\"a\":1}"
        ));
    }

    #[test]
    fn an_unusable_temporary_folder_lets_every_delivery_through() {
        let temp = tempfile::tempdir().unwrap();
        let file = Utf8Path::from_path(temp.path()).unwrap().join("a-file");
        std::fs::write(&file, "").unwrap();
        assert!(first_delivery(&file, Utf8Path::new("/p"), "h", b"x"));
        assert!(first_delivery(&file, Utf8Path::new("/p"), "h", b"x"));
    }
}
