//! The few file-system helpers with a domain-free meaning.

use std::io::Write;

use camino::Utf8Path;

/// Replace `path` with `bytes` atomically: write a temporary file in the same folder, flush it
/// to disk, then rename it over the target. A crash or Ctrl-C leaves either the old file or the
/// new one, never a half-written one.
pub fn write_atomic(path: &Utf8Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_str().is_empty())
        .unwrap_or(Utf8Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", path.file_name().unwrap_or("aidlc")))
        .suffix(".tmp")
        .tempfile_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|error| error.error)?;
    Ok(())
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
