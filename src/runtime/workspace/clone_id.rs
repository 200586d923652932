//! This clone's name in the ledger (D25, D11): the host part and the clone id of its
//! audit shard, `<record_root>/audit/<host>-<clone-id>.md`.
//!
//! Invariant: the clone id is minted once per clone, published without replacing what another
//! process minted first, and never silently replaced: it names this clone's shard, so replacing
//! it would split the ledger.

use std::io::Write as _;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

use super::spaces::CURSOR_MAX_BYTES;
use crate::compile::discover::workspace_root;
use crate::leaves::js_text::js_trim;
use crate::leaves::random_hex::random_lowercase_hex;

/// The reference caps the host part of a shard name at 48 characters.
const HOST_NAME_MAX_CHARS: usize = 48;
/// Length of a clone id this engine mints (the reference mints the same).
const MINTED_CLONE_ID_CHARS: usize = 12;
/// How long a reader waits for a clone id file another process has created but not yet written.
const CLONE_ID_SETTLE_ATTEMPTS: u32 = 20;
const CLONE_ID_SETTLE_DELAY: Duration = Duration::from_millis(5);

/// The host part of a shard name (D25): the host name lowercased, each run of characters outside
/// `[a-z0-9-]` collapsed to `-`, `-` trimmed from both ends, cut to 48 characters (after the
/// trim, so a cut may end in `-`, as in the reference), and `host` when nothing is left.
pub fn host_name() -> String {
    sanitise_host_name(&raw_host_name())
}

/// The sanitising half of [`host_name`], for any raw name.
pub fn sanitise_host_name(raw: &str) -> String {
    // Each run of refused characters becomes one `-`, and a literal `-` next to it stays
    // separate, exactly as the reference's `/[^a-z0-9-]+/g` replaces it.
    let replaced = raw
        .to_lowercase()
        .split(|character: char| !matches!(character, 'a'..='z' | '0'..='9' | '-'))
        .filter(|piece| !piece.is_empty())
        .collect::<Vec<_>>()
        .join("-");
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

/// `aidlc/.aidlc-clone-id` (gitignored, so every clone mints its own).
pub fn clone_id_path(project_dir: &Utf8Path) -> Utf8PathBuf {
    workspace_root(project_dir).join(".aidlc-clone-id")
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

/// At most `limit` bytes of a regular file, from one non-blocking descriptor
/// ([`crate::leaves::fs_util::open_regular_file`]): a FIFO in the id's place is refused, not
/// waited on, and a longer file is read only to its first `limit` bytes.
fn read_bounded(path: &Utf8Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    crate::leaves::fs_util::open_regular_file(path)?
        .1
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
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

#[expect(
    clippy::disallowed_methods,
    reason = "the clone id file, at the path the engine names in the project's aidlc folder, published exclusively so that two clones minting at once keep one id"
)]
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
#[expect(
    clippy::disallowed_methods,
    reason = "the clone id file, at the path the engine names in the project's aidlc folder, published exclusively so that two clones minting at once keep one id"
)]
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
        Err(_) => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            file.write_all(contents)?;
            file.sync_all()
        }
    }
}

/// `<record_root>/audit/`.
pub fn audit_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join("audit")
}

/// This clone's shard under a record root when the clone id exists and the shard is on disk;
/// never mints (a clone without an id has no shard yet).
pub fn existing_audit_shard(project_dir: &Utf8Path, record_root: &Utf8Path) -> Option<Utf8PathBuf> {
    let clone_id = existing_clone_id(project_dir)?;
    let shard = audit_dir(record_root).join(format!("{}-{clone_id}.md", host_name()));
    shard.is_file().then_some(shard)
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;
    use crate::runtime::workspace::test_support::{self, make_record, temp_project, write};

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
        let shard = test_support::audit_shard_path(&project);
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
        let shard = test_support::audit_shard_path(&project);
        assert_eq!(
            shard.parent().unwrap(),
            project.join("aidlc/spaces/default/intents/audit")
        );
    }
}
