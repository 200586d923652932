//! The few file-system helpers with a domain-free meaning.

use std::io::Write;

use camino::Utf8Path;

/// Replace `path` with `bytes` atomically: write a temporary file in the same folder, flush it
/// to disk, then rename it over the target. A crash or Ctrl-C leaves either the old file or the
/// new one, never a half-written one.
pub fn write_atomic(path: &Utf8Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_atomically(path, bytes, Flush::Yes)
}

/// Whether [`replace_atomically`] waits for the bytes to reach the disk before the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// For files people rely on: after a power cut, the old or the new file, whole.
    Yes,
    /// For caches that check their own integrity: other processes still never see a
    /// half-written file, but a power cut may leave an empty one.
    No,
}

/// Write a temporary file beside `path` and rename it over `path`.
pub fn replace_atomically(path: &Utf8Path, bytes: &[u8], flush: Flush) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_str().is_empty())
        .unwrap_or(Utf8Path::new("."));
    std::fs::create_dir_all(parent)?;
    let prefix = format!(".{}.", path.file_name().unwrap_or("aidlc"));
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    if let Some(permissions) = default_new_file_permissions() {
        builder.permissions(permissions);
    }
    let mut temp = builder.tempfile_in(parent)?;
    if let Ok(existing) = std::fs::metadata(path) {
        temp.as_file().set_permissions(existing.permissions())?;
    }
    temp.write_all(bytes)?;
    if flush == Flush::Yes {
        temp.as_file().sync_all()?;
    }
    temp.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// A new output file is `rw-r--r--` (less what the umask removes), like any file an editor
/// creates; a bare temp file would be `rw-------`, unreadable to anyone sharing the checkout.
/// A replaced file keeps its own permissions. `None` leaves the platform default.
#[cfg(unix)]
#[expect(
    clippy::unnecessary_wraps,
    reason = "the signature is shared with the non-Unix version, which has no default"
)]
fn default_new_file_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Project-relative display form of a path: `/` separators, no leading `./`.
pub fn to_posix(path: &str) -> String {
    let replaced = path.replace('\\', "/");
    replaced
        .strip_prefix("./")
        .map_or(replaced.clone(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn new_files_are_readable_by_others_and_replacements_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = camino::Utf8PathBuf::from_path_buf(dir.path().join("out.json")).unwrap();
        write_atomic(&path, b"one").unwrap();
        let mode = |path: &Utf8Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(mode(&path), 0o664);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = camino::Utf8PathBuf::from_path_buf(dir.path().join("a/b.json")).unwrap();
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let n_entries = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(n_entries, 1);
    }
}
