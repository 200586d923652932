//! The audit lock: a `mkdir` mutex in the OS temp folder, compatible with the reference's
//! (same folder name and owner stamp), so this engine and a reference process never write the
//! same ledger or graph at once (D2).
//!
//! Name: `<tmp>/.aidlc-audit-<md5(identity)[0..8]>.lock` with
//! `identity = realpath(project) + "\0__workspace__"`. The folder holds `owner.json`
//! (`{pid, startedAtMs, reapLiveOwnerAfterStale, token}`). A stale lock is reaped when its owner
//! is dead or it is older than `AIDLC_LOCK_STALE_MS` (10 minutes); a lock folder without an
//! owner stamp gets a 5 s grace period (its owner may be between `mkdir` and the stamp).
//! Re-entrant within one process.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};
use md5::{Digest, Md5};

const ATTEMPTS: u32 = 50;
const RETRY_DELAY: Duration = Duration::from_millis(100);
const DEFAULT_STALE_MS: u128 = 10 * 60 * 1000;
const UNSTAMPED_GRACE_MS: u128 = 5_000;

/// Locks this process holds, by folder, with their re-entry depth.
static HELD: Mutex<BTreeMap<Utf8PathBuf, usize>> = Mutex::new(BTreeMap::new());

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "Failed to acquire audit lock {path} after {ATTEMPTS} attempts: it is held by process {owner}"
    )]
    Busy { path: Utf8PathBuf, owner: String },
    #[error("cannot create the audit lock {path}: {source}")]
    Io {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
}

/// The lock folder for a project (for the workspace-wide identity the compile uses).
pub fn lock_path(project_dir: &Utf8Path) -> Utf8PathBuf {
    let real = std::fs::canonicalize(project_dir)
        .ok()
        .and_then(|p| Utf8PathBuf::from_path_buf(p).ok())
        .unwrap_or_else(|| project_dir.to_owned());
    let identity = format!("{real}\0__workspace__");
    let digest = Md5::digest(identity.as_bytes());
    let hex = digest.iter().take(4).fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    let temp = Utf8PathBuf::from_path_buf(std::env::temp_dir())
        .unwrap_or_else(|_| Utf8PathBuf::from("/tmp"));
    temp.join(format!(".aidlc-audit-{hex}.lock"))
}

/// Held until dropped; dropping the outermost guard removes the lock folder.
#[derive(Debug)]
pub struct AuditLockGuard {
    path: Utf8PathBuf,
}

impl Drop for AuditLockGuard {
    fn drop(&mut self) {
        let Ok(mut held) = HELD.lock() else { return };
        let Some(depth) = held.get_mut(&self.path) else {
            return;
        };
        *depth -= 1;
        if *depth == 0 {
            held.remove(&self.path);
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Take the project's audit lock, waiting up to 50 × 100 ms.
pub fn acquire(project_dir: &Utf8Path) -> Result<AuditLockGuard, LockError> {
    acquire_within(project_dir, ATTEMPTS)
}

/// Take the project's audit lock only if it is free now (for optional work such as refreshing
/// a cache); a stale lock is still reaped.
pub fn try_acquire(project_dir: &Utf8Path) -> Result<AuditLockGuard, LockError> {
    acquire_within(project_dir, 1)
}

fn acquire_within(project_dir: &Utf8Path, attempts: u32) -> Result<AuditLockGuard, LockError> {
    let path = lock_path(project_dir);
    if let Ok(mut held) = HELD.lock()
        && let Some(depth) = held.get_mut(&path)
    {
        *depth += 1;
        return Ok(AuditLockGuard { path });
    }
    for attempt in 0..attempts {
        match std::fs::create_dir(&path) {
            Ok(()) => {
                write_owner_stamp(&path)?;
                if let Ok(mut held) = HELD.lock() {
                    held.insert(path.clone(), 1);
                }
                return Ok(AuditLockGuard { path });
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                if reap_if_stale(&path) {
                    continue;
                }
                if attempt + 1 < attempts {
                    std::thread::sleep(RETRY_DELAY);
                }
            }
            Err(source) => return Err(LockError::Io { path, source }),
        }
    }
    let owner = std::fs::read_to_string(path.join("owner.json"))
        .unwrap_or_else(|_| "(no owner stamp)".to_owned());
    Err(LockError::Busy { path, owner })
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

fn write_owner_stamp(path: &Utf8Path) -> Result<(), LockError> {
    let stamp = serde_json::json!({
        "pid": std::process::id(),
        "startedAtMs": u64::try_from(now_ms()).unwrap_or(u64::MAX),
        "reapLiveOwnerAfterStale": true,
        "token": uuid::Uuid::now_v7().to_string(),
    });
    // The stamp only tells other processes who holds the lock; it lives in the temp folder and
    // dies with the lock, so it is replaced atomically but not flushed: a stamp lost in a power
    // cut leaves an unstamped lock, which the 5 s grace rule reaps.
    crate::fs_util::replace_atomically(
        &path.join("owner.json"),
        stamp.to_string().as_bytes(),
        crate::fs_util::Flush::No,
    )
    .map_err(|source| LockError::Io {
        path: path.to_owned(),
        source,
    })
}

fn stale_after_ms() -> u128 {
    std::env::var("AIDLC_LOCK_STALE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_STALE_MS)
}

/// Remove the lock folder when its owner is dead or it is too old. Returns whether it was
/// removed (so the caller retries at once).
fn reap_if_stale(path: &Utf8Path) -> bool {
    let stamp = std::fs::read_to_string(path.join("owner.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let age_ms = |started: u128| now_ms().saturating_sub(started);
    let stale = if let Some(stamp) = stamp {
        let pid = stamp.get("pid").and_then(serde_json::Value::as_u64);
        let started = stamp
            .get("startedAtMs")
            .and_then(serde_json::Value::as_u64)
            .map_or(0, u128::from);
        let owner_dead = pid.is_some_and(|pid| !process_is_alive(pid));
        owner_dead || age_ms(started) > stale_after_ms()
    } else {
        let created = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis());
        age_ms(created) > UNSTAMPED_GRACE_MS
    };
    stale && std::fs::remove_dir_all(path).is_ok()
}

#[cfg(unix)]
fn process_is_alive(pid: u64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks whether the process exists; it sends nothing.
    #[expect(
        unsafe_code,
        reason = "kill(pid, 0) is the portable liveness probe; libc has no safe wrapper"
    )]
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_is_alive(_pid: u64) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_reentrant_and_released() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        let path = lock_path(&project);
        {
            let _outer = acquire(&project).unwrap();
            let _inner = acquire(&project).unwrap();
            assert!(path.join("owner.json").is_file());
        }
        assert!(!path.exists());
    }

    #[test]
    fn a_dead_owner_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        let path = lock_path(&project);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(
            path.join("owner.json"),
            r#"{"pid":999999999,"startedAtMs":0}"#,
        )
        .unwrap();
        let guard = acquire(&project).unwrap();
        drop(guard);
        assert!(!path.exists());
    }
}
