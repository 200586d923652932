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
//!
//! A holder may run a compile inside its own transaction: it names itself in
//! `AIDLC_WORKSPACE_LOCK_OWNER_PID`, and the compile's acquisition ([`acquire_tidying`]) takes
//! that lock as its own exactly when the lock's stamp records that pid and that process is
//! alive. A variable naming any other pid, a dead pid, or no pid at all is not honoured: the
//! compile then acquires the lock as usual (waits for the holder, and is refused when it stays).
//!
//! Invariants:
//! - a lock folder of ours is never visible without its stamp where the OS can rename a folder
//!   without replacing (Linux `renameat2(RENAME_NOREPLACE)`): it is built under a temporary name
//!   of ours, stamp included, and renamed into place; elsewhere it is `mkdir` then stamp, as the
//!   reference does;
//! - every wait outlasts the unstamped grace period of a lock it finds unstamped, so a folder left
//!   by a crash between `mkdir` and the stamp (ours on other systems, or the reference's) is
//!   reaped, not fatal;
//! - a guard removes the lock folder only while the stamp in it is still its own, so a holder
//!   whose lock was reaped as stale never removes the next holder's lock;
//! - taking the lock never lists the temp folder, whose size is not ours (thousands of entries
//!   on a busy machine): the temporaries a crash left while building a lock folder are swept by
//!   the compile when it writes its outputs ([`acquire_tidying`]), not by every hook run.

#![expect(
    clippy::disallowed_methods,
    reason = "the audit lock's own folder at its fixed path in the workspace, created exclusively and removed only when it is ours, stale, or our own temporary"
)]

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};
use md5::{Digest, Md5};

use crate::leaves::fs_util;

/// The wait of an ordinary acquisition: the reference's 50 attempts, 100 ms apart.
const SHORT_WAIT: Duration = Duration::from_secs(5);
const RETRY_DELAY: Duration = Duration::from_millis(100);
const DEFAULT_STALE_MS: u64 = 10 * 60 * 1000;
const UNSTAMPED_GRACE: Duration = Duration::from_secs(5);
/// How far past the stale age a wait until stale goes on, for the retries around the reap.
const UNTIL_STALE_SLACK: Duration = Duration::from_secs(2);
/// Retries without a pause after the lock vanished or was reaped (bounded, so that a crowd of
/// writers cannot keep one spinning).
const IMMEDIATE_RETRIES: u32 = 5;
const STALE_MS_VARIABLE: &str = "AIDLC_LOCK_STALE_MS";
const OWNER_STAMP_FILE: &str = "owner.json";
/// The pid of a lock holder that runs the compile inside its transaction.
const INHERITED_OWNER_VARIABLE: &str = "AIDLC_WORKSPACE_LOCK_OWNER_PID";

/// Locks this process holds, by folder: the re-entry depth and the token of the stamp.
static HELD: Mutex<BTreeMap<Utf8PathBuf, Held>> = Mutex::new(BTreeMap::new());

#[derive(Debug)]
struct Held {
    depth: usize,
    /// The token of our stamp; `None` for a lock inherited from the caller, whose folder is the
    /// caller's to remove.
    token: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "Failed to acquire audit lock {path} after waiting {waited_ms} ms: it is held by process {owner}"
    )]
    Busy {
        path: Utf8PathBuf,
        owner: String,
        waited_ms: u128,
    },
    #[error("cannot create the audit lock {path}: {source}")]
    Io {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{STALE_MS_VARIABLE} must be a whole number of milliseconds greater than zero, got \"{value}\""
    )]
    BadStaleSetting { value: String },
}

/// The lock folder for a project (for the workspace-wide identity the compile uses).
pub fn lock_path(project_dir: &Utf8Path) -> Utf8PathBuf {
    let real = std::fs::canonicalize(project_dir)
        .ok()
        .and_then(|p| Utf8PathBuf::from_path_buf(p).ok())
        .unwrap_or_else(|| project_dir.to_owned());
    let identity = format!("{real}\0__workspace__");
    let hex = format!("{:x}", Md5::digest(identity.as_bytes()));
    let temp = Utf8PathBuf::from_path_buf(std::env::temp_dir())
        .unwrap_or_else(|_| Utf8PathBuf::from("/tmp"));
    temp.join(format!(".aidlc-audit-{}.lock", &hex[..8]))
}

/// Held until dropped; dropping the outermost guard removes the lock folder.
#[derive(Debug)]
pub struct AuditLockGuard {
    path: Utf8PathBuf,
}

impl Drop for AuditLockGuard {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = held.get_mut(&self.path) else {
            return;
        };
        entry.depth -= 1;
        if entry.depth > 0 {
            return;
        }
        let token = held.remove(&self.path).and_then(|entry| entry.token);
        if token.is_some() && read_stamp(&self.path).and_then(|stamp| stamp.token) == token {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// How long an acquisition waits for a lock another process holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Patience {
    /// Only a free or stale lock is taken (optional work).
    Now,
    /// About 5 s, and longer only to outlast the grace period of an unstamped lock.
    Short,
    /// As long as the lock's stale rule lets its holder keep it: until it is released, or
    /// reaped once its owner is dead or it is older than `AIDLC_LOCK_STALE_MS`.
    UntilStale,
}

/// Take the project's audit lock, waiting about 5 s (50 × 100 ms) for another holder, and
/// longer only while the lock is unstamped and inside its grace period.
pub fn acquire(project_dir: &Utf8Path) -> Result<AuditLockGuard, LockError> {
    acquire_with(project_dir, Patience::Short)
}

/// [`acquire`], after removing the lock-folder temporaries that dead processes left in the temp
/// folder: the compile's acquisition, when it writes its outputs. Listing the temp folder costs
/// in proportion to everything in it, so the hook's and the fires' acquisitions do not.
///
/// A lock the caller holds and names in `AIDLC_WORKSPACE_LOCK_OWNER_PID` is taken as this
/// process's own (see the module's documentation); dropping the guard leaves its folder to the
/// caller.
pub fn acquire_tidying(project_dir: &Utf8Path) -> Result<AuditLockGuard, LockError> {
    let path = lock_path(project_dir);
    let inherited_owner = std::env::var(INHERITED_OWNER_VARIABLE).ok();
    if lock_is_held_by_inherited_owner(&path, inherited_owner.as_deref()) {
        return Ok(adopt_inherited_lock(path));
    }
    sweep_stale_lock_temporaries(&path);
    acquire(project_dir)
}

/// Whether the variable's value names a live process whose stamp is in the lock folder `path`.
/// Anything else (unset, not a whole number greater than zero, another pid, a dead pid, no
/// readable stamp) is `false`.
fn lock_is_held_by_inherited_owner(path: &Utf8Path, inherited_owner: Option<&str>) -> bool {
    let Some(owner_pid) = inherited_owner
        .map(str::trim)
        .and_then(|text| text.parse::<u64>().ok())
        .filter(|pid| *pid > 0)
    else {
        return false;
    };
    read_stamp(path).and_then(|stamp| stamp.pid) == Some(owner_pid)
        && fs_util::process_is_alive(owner_pid)
}

/// A guard on the caller's lock: re-entrant like our own, never removed by us.
fn adopt_inherited_lock(path: Utf8PathBuf) -> AuditLockGuard {
    HELD.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(path.clone())
        .or_insert(Held {
            depth: 0,
            token: None,
        })
        .depth += 1;
    AuditLockGuard { path }
}

/// Take the project's audit lock only if it is free now (for optional work such as refreshing
/// a cache); a stale lock is still reaped.
pub fn try_acquire(project_dir: &Utf8Path) -> Result<AuditLockGuard, LockError> {
    acquire_with(project_dir, Patience::Now)
}

/// Take the project's audit lock for a write that must not be lost (the terminal row of a fire
/// that has written `SENSOR_FIRED`): wait while the holder is alive and the lock younger than
/// `AIDLC_LOCK_STALE_MS`, reap it once it is stale, and give up only when it is still held after
/// that (a holder that keeps taking it again, or a lock folder that cannot be removed).
pub fn acquire_until_stale(project_dir: &Utf8Path) -> Result<AuditLockGuard, LockError> {
    acquire_with(project_dir, Patience::UntilStale)
}

fn acquire_with(project_dir: &Utf8Path, patience: Patience) -> Result<AuditLockGuard, LockError> {
    let path = lock_path(project_dir);
    if let Some(entry) = HELD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_mut(&path)
    {
        entry.depth += 1;
        return Ok(AuditLockGuard { path });
    }
    let stale_after = stale_after()?;
    let started = Instant::now();
    let budget = match patience {
        Patience::Now => Duration::ZERO,
        Patience::Short => SHORT_WAIT,
        Patience::UntilStale => stale_after + UNSTAMPED_GRACE + UNTIL_STALE_SLACK,
    };
    let mut deadline = started + budget;
    let latest_deadline = deadline + UNSTAMPED_GRACE + RETRY_DELAY * 2;
    let mut immediate_retries = 0;
    loop {
        let token = uuid::Uuid::now_v7().to_string();
        if create_stamped_lock(&path, &token).map_err(|source| LockError::Io {
            path: path.clone(),
            source,
        })? {
            HELD.lock().unwrap_or_else(PoisonError::into_inner).insert(
                path.clone(),
                Held {
                    depth: 1,
                    token: Some(token),
                },
            );
            return Ok(AuditLockGuard { path });
        }
        let retry_at_once = match inspect_holder(&path, stale_after) {
            LockStatus::Free => true,
            LockStatus::Stale { .. } => std::fs::remove_dir_all(&path).is_ok(),
            LockStatus::Held { .. } => false,
            LockStatus::Unstamped { grace_left } => {
                if patience != Patience::Now {
                    let reap_time = Instant::now() + grace_left + RETRY_DELAY * 2;
                    deadline = deadline.max(reap_time.min(latest_deadline));
                }
                false
            }
        };
        if retry_at_once && immediate_retries < IMMEDIATE_RETRIES {
            immediate_retries += 1;
            continue;
        }
        let now = Instant::now();
        if now >= deadline {
            let owner = fs_util::read_input_text(&path.join(OWNER_STAMP_FILE))
                .unwrap_or_else(|_| "(no owner stamp)".to_owned());
            return Err(LockError::Busy {
                path,
                owner,
                waited_ms: now.duration_since(started).as_millis(),
            });
        }
        std::thread::sleep(RETRY_DELAY.min(deadline - now));
    }
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

fn owner_stamp_text(token: &str) -> String {
    serde_json::json!({
        "pid": std::process::id(),
        "startedAtMs": u64::try_from(now_ms()).unwrap_or(u64::MAX),
        "reapLiveOwnerAfterStale": true,
        "token": token,
    })
    .to_string()
}

/// Create the lock folder with its stamp. `Ok(false)` when another holder has it.
#[cfg(target_os = "linux")]
fn create_stamped_lock(path: &Utf8Path, token: &str) -> std::io::Result<bool> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return create_then_stamp(path, token);
    };
    let temporary = folder.join(fs_util::temporary_name(name));
    std::fs::create_dir(&temporary)?;
    // The stamp lives in the temp folder and dies with the lock, so it is not flushed: a stamp
    // lost in a power cut leaves an unstamped lock, which the grace rule reaps.
    let published = std::fs::write(temporary.join(OWNER_STAMP_FILE), owner_stamp_text(token))
        .and_then(|()| {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                temporary.as_std_path(),
                rustix::fs::CWD,
                path.as_std_path(),
                rustix::fs::RenameFlags::NOREPLACE,
            )
            .map_err(std::io::Error::from)
        });
    let outcome = match published {
        Ok(()) => return Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(error) if renaming_without_replacing_is_unsupported(&error) => {
            create_then_stamp(path, token)
        }
        Err(error) => Err(error),
    };
    let _ = std::fs::remove_dir_all(&temporary);
    outcome
}

/// `EINVAL` (the file system has no `RENAME_NOREPLACE`), `ENOSYS` (nor the kernel).
#[cfg(target_os = "linux")]
fn renaming_without_replacing_is_unsupported(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(code) if code == libc::EINVAL || code == libc::ENOSYS || code == libc::EOPNOTSUPP
    )
}

#[cfg(not(target_os = "linux"))]
fn create_stamped_lock(path: &Utf8Path, token: &str) -> std::io::Result<bool> {
    create_then_stamp(path, token)
}

/// The reference's way: `mkdir`, then the stamp (replaced atomically, so no reader sees half a
/// stamp). A stamp that cannot be written takes the folder away again, so no unstamped lock of
/// ours outlives this call.
fn create_then_stamp(path: &Utf8Path, token: &str) -> std::io::Result<bool> {
    match std::fs::create_dir(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(error) => return Err(error),
    }
    let stamped = fs_util::replace_atomically(
        &path.join(OWNER_STAMP_FILE),
        owner_stamp_text(token).as_bytes(),
        fs_util::Flush::No,
    );
    match stamped {
        Ok(()) => Ok(true),
        Err(error) => {
            let _ = std::fs::remove_dir_all(path);
            Err(error)
        }
    }
}

/// Remove the temporaries of the lock folder `path` whose process is gone or which are old: a
/// crash between creating a lock's temporary folder and renaming it leaves the folder in the
/// temp directory. Only folders named as `fs_util` names this lock's temporaries
/// (`.<lock>.aidlc-<pid>-<hex>.tmp`) are touched.
fn sweep_stale_lock_temporaries(path: &Utf8Path) {
    let (Some(folder), Some(lock_name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let ours = |temporary: &fs_util::TemporaryName<'_>, metadata: &std::fs::Metadata| {
        temporary.target_name == lock_name && metadata.is_dir()
    };
    for temporary in fs_util::stale_temporaries(folder, ours) {
        let _ = std::fs::remove_dir_all(temporary);
    }
}

fn stale_after() -> Result<Duration, LockError> {
    parse_stale_ms(std::env::var(STALE_MS_VARIABLE).ok().as_deref()).map(Duration::from_millis)
}

/// `AIDLC_LOCK_STALE_MS`: unset or empty is the default (10 minutes); anything but a whole
/// number greater than zero is refused, never read as the default.
fn parse_stale_ms(value: Option<&str>) -> Result<u64, LockError> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_STALE_MS),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|ms| *ms > 0)
            .ok_or_else(|| LockError::BadStaleSetting {
                value: text.to_owned(),
            }),
    }
}

/// What holds the project's audit lock folder, by the stale rule every acquisition applies;
/// `aidlc doctor` shows it. Reads only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockStatus {
    /// No lock folder (or it was released since): an acquisition tries again.
    Free,
    /// Held by a live process, younger than the stale age.
    Held { pid: Option<u64> },
    /// Its owner is dead, or it is older than the stale age: the next acquisition reaps it.
    Stale { pid: Option<u64> },
    /// No readable owner stamp yet, inside its grace period.
    Unstamped { grace_left: Duration },
}

/// The status of the project's audit lock folder ([`lock_path`]).
pub fn lock_status(project_dir: &Utf8Path) -> Result<LockStatus, LockError> {
    let path = lock_path(project_dir);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(LockStatus::Free);
    }
    Ok(inspect_holder(&path, stale_after()?))
}

/// The parts of a stamp the stale rule reads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    pid: Option<u64>,
    started_at_ms: u128,
    token: Option<String>,
}

fn read_stamp(path: &Utf8Path) -> Option<Stamp> {
    let text = fs_util::read_input_text(&path.join(OWNER_STAMP_FILE)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(Stamp {
        pid: value.get("pid").and_then(serde_json::Value::as_u64),
        started_at_ms: value
            .get("startedAtMs")
            .and_then(serde_json::Value::as_u64)
            .map_or(0, u128::from),
        token: value
            .get("token")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
    })
}

fn inspect_holder(path: &Utf8Path, stale_after: Duration) -> LockStatus {
    let age_ms = |since_ms: u128| now_ms().saturating_sub(since_ms);
    if let Some(stamp) = read_stamp(path) {
        let owner_dead = stamp.pid.is_some_and(|pid| !fs_util::process_is_alive(pid));
        return if owner_dead || age_ms(stamp.started_at_ms) > stale_after.as_millis() {
            LockStatus::Stale { pid: stamp.pid }
        } else {
            LockStatus::Held { pid: stamp.pid }
        };
    }
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return LockStatus::Free;
    };
    let created_ms = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis());
    let age = Duration::from_millis(u64::try_from(age_ms(created_ms)).unwrap_or(u64::MAX));
    if age > UNSTAMPED_GRACE {
        LockStatus::Stale { pid: None }
    } else {
        LockStatus::Unstamped {
            grace_left: UNSTAMPED_GRACE.saturating_sub(age),
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;

    fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        (dir, project)
    }

    fn leftover_temporaries(path: &Utf8Path) -> Vec<String> {
        let name = path.file_name().unwrap();
        path.parent()
            .unwrap()
            .read_dir_utf8()
            .unwrap()
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_owned())
            .filter(|entry| {
                crate::leaves::fs_util::parse_temporary_name(entry)
                    .is_some_and(|temporary| temporary.target_name == name)
            })
            .collect()
    }

    /// The reference's name: the first 8 hex digits of the MD5 of the project's real path and
    /// `\0__workspace__` (a path that does not exist is taken as given).
    #[test]
    fn the_lock_folder_is_named_as_the_reference_names_it() {
        let path = lock_path(Utf8Path::new("/no/such/project"));
        assert_eq!(path.file_name(), Some(".aidlc-audit-eeb05930.lock"));
    }

    /// The sweep removes a dead process's lock-folder temporary and keeps a live one's, a
    /// temporary of another lock, and a file of ours (that is the file sweep's business).
    #[test]
    fn the_lock_sweep_removes_only_dead_lock_folder_temporaries() {
        let (_dir, folder) = temp_project();
        let lock = folder.join(".aidlc-audit-0123abcd.lock");
        let dead_pid = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        let name = |target: &str, pid: u32| format!(".{target}.aidlc-{pid}-0123456789ab.tmp");
        let dead = name(".aidlc-audit-0123abcd.lock", dead_pid);
        let live = name(".aidlc-audit-0123abcd.lock", std::process::id());
        let other_lock = name(".aidlc-audit-ffffffff.lock", dead_pid);
        let file =
            name(".aidlc-audit-0123abcd.lock", dead_pid).replace("0123456789ab", "ba9876543210");
        for folder_name in [&dead, &live, &other_lock] {
            std::fs::create_dir(folder.join(folder_name)).unwrap();
        }
        std::fs::write(folder.join(&file), "").unwrap();
        sweep_stale_lock_temporaries(&lock);
        let mut left: Vec<String> = folder
            .read_dir_utf8()
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_owned())
            .collect();
        left.sort();
        let mut expected = vec![live, other_lock, file];
        expected.sort();
        assert_eq!(left, expected);
    }

    #[test]
    fn lock_is_reentrant_and_released() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        {
            let _outer = acquire(&project).unwrap();
            let _inner = acquire(&project).unwrap();
            assert!(path.join("owner.json").is_file());
        }
        assert!(!path.exists());
        assert_eq!(leftover_temporaries(&path), Vec::<String>::new());
    }

    #[test]
    fn the_lock_appears_with_its_stamp() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        let _guard = acquire(&project).unwrap();
        let stamp = read_stamp(&path).expect("a readable stamp");
        assert_eq!(stamp.pid, Some(u64::from(std::process::id())));
        assert!(stamp.token.is_some());
    }

    #[test]
    fn the_mkdir_fallback_stamps_and_refuses_a_taken_lock() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        assert!(create_then_stamp(&path, "token-1").unwrap());
        assert_eq!(
            read_stamp(&path).and_then(|stamp| stamp.token).as_deref(),
            Some("token-1")
        );
        assert!(!create_then_stamp(&path, "token-2").unwrap());
        assert!(!create_stamped_lock(&path, "token-3").unwrap());
        assert_eq!(leftover_temporaries(&path), Vec::<String>::new());
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_dead_owner_is_reaped() {
        let (_dir, project) = temp_project();
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

    #[test]
    fn a_guard_leaves_a_lock_that_is_no_longer_its_own() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        let guard = acquire(&project).unwrap();
        // Reaped as stale by another process, which took the lock again.
        std::fs::remove_dir_all(&path).unwrap();
        assert!(create_then_stamp(&path, "someone-else").unwrap());
        drop(guard);
        assert_eq!(
            read_stamp(&path).and_then(|stamp| stamp.token).as_deref(),
            Some("someone-else")
        );
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_live_owner_is_waited_for_and_then_busy() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("owner.json"), owner_stamp_text("held")).unwrap();
        let error = try_acquire(&project).unwrap_err();
        assert!(
            matches!(&error, LockError::Busy { owner, .. } if owner.contains("\"held\"")),
            "{error}"
        );
        assert!(path.exists(), "a live owner's lock is not reaped");
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn an_unstamped_lock_is_stale_only_after_its_grace_period() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        std::fs::create_dir_all(&path).unwrap();
        let stale_after = Duration::from_millis(DEFAULT_STALE_MS);
        assert!(matches!(
            inspect_holder(&path, stale_after),
            LockStatus::Unstamped { grace_left } if grace_left <= UNSTAMPED_GRACE
        ));
        let long_ago = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(&path)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        assert_eq!(
            inspect_holder(&path, stale_after),
            LockStatus::Stale { pid: None }
        );
        std::fs::remove_dir_all(&path).unwrap();
        assert_eq!(inspect_holder(&path, stale_after), LockStatus::Free);
    }

    #[test]
    fn the_stale_age_setting_is_a_positive_whole_number_or_unset() {
        assert_eq!(parse_stale_ms(None).unwrap(), DEFAULT_STALE_MS);
        assert_eq!(parse_stale_ms(Some("")).unwrap(), DEFAULT_STALE_MS);
        assert_eq!(parse_stale_ms(Some(" 7000 ")).unwrap(), 7000);
        for bad in ["0", "-5", "1.5", "10m", "abc"] {
            let error = parse_stale_ms(Some(bad)).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "AIDLC_LOCK_STALE_MS must be a whole number of milliseconds greater than zero, got \"{bad}\""
                )
            );
        }
    }

    /// The stamp of a holder with this pid, as the reference writes it.
    fn stamp_lock_for(path: &Utf8Path, pid: u32) {
        std::fs::create_dir_all(path).unwrap();
        std::fs::write(
            path.join("owner.json"),
            format!(
                r#"{{"pid":{pid},"startedAtMs":{},"reapLiveOwnerAfterStale":true}}"#,
                now_ms()
            ),
        )
        .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_inherited_lock_is_honoured_only_for_its_live_recorded_owner() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        let parent = std::os::unix::process::parent_id();
        stamp_lock_for(&path, parent);
        let parent_text = parent.to_string();
        assert!(lock_is_held_by_inherited_owner(&path, Some(&parent_text)));
        for refused in [
            None,
            Some(""),
            Some("0"),
            Some("-1"),
            Some("abc"),
            Some("1.5"),
        ] {
            assert!(
                !lock_is_held_by_inherited_owner(&path, refused),
                "{refused:?}"
            );
        }
        let other_live_pid = std::process::id().to_string();
        assert!(!lock_is_held_by_inherited_owner(
            &path,
            Some(&other_live_pid)
        ));
        let dead_pid = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        stamp_lock_for(&path, dead_pid);
        assert!(!lock_is_held_by_inherited_owner(
            &path,
            Some(&dead_pid.to_string())
        ));
        std::fs::remove_dir_all(&path).unwrap();
        assert!(!lock_is_held_by_inherited_owner(&path, Some(&parent_text)));
    }

    #[cfg(unix)]
    #[test]
    fn an_adopted_lock_is_reentrant_and_left_to_its_owner() {
        let (_dir, project) = temp_project();
        let path = lock_path(&project);
        stamp_lock_for(&path, std::os::unix::process::parent_id());
        {
            let _adopted = adopt_inherited_lock(path.clone());
            let _nested = acquire(&project).unwrap();
        }
        assert!(path.join("owner.json").is_file(), "the caller's lock stays");
        assert!(!HELD.lock().unwrap().contains_key(&path));
        std::fs::remove_dir_all(&path).unwrap();
    }
}
