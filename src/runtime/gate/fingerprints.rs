//! BLAKE3 fingerprints of deliverables: the staleness bracket around blocking fires (D6).
//! `aidlc engine gate start|revise` and `aidlc gate check` both hash a deliverable before a
//! blocking sensor reads it and compare afterwards; a verdict about bytes that moved is not
//! a verdict about the bytes that enter the gate.
//!
//! Invariant: a path that is not a regular file, or cannot be read whole, has no fingerprint
//! (`None`), which every caller treats as "changed". The file is opened without blocking and
//! checked through its open handle, so a FIFO swapped in after planning never hangs the gate.

use camino::{Utf8Path, Utf8PathBuf};

/// The BLAKE3 hash of every fingerprinted path, in the order first fingerprinted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprints {
    entries: Vec<(Utf8PathBuf, blake3::Hash)>,
}

impl Fingerprints {
    pub fn get(&self, path: &Utf8Path) -> Option<blake3::Hash> {
        self.entries
            .iter()
            .find(|(known, _)| known == path)
            .map(|(_, hash)| *hash)
    }

    /// Keeps the first hash of a path: later ones would hide a change.
    pub fn insert(&mut self, path: &Utf8Path, hash: blake3::Hash) {
        if self.get(path).is_none() {
            self.entries.push((path.to_owned(), hash));
        }
    }

    /// Each fingerprinted path whose bytes now differ or cannot be read, in order, each hashed
    /// once and only when asked for.
    pub fn changed_paths(&self) -> impl Iterator<Item = &Utf8Path> {
        self.entries
            .iter()
            .filter(|(path, hash)| fingerprint_file(path) != Some(*hash))
            .map(|(path, _)| path.as_path())
    }
}

/// The BLAKE3 hash of a regular file's bytes, or `None` when it is not a regular file or
/// cannot be read.
pub fn fingerprint_file(path: &Utf8Path) -> Option<blake3::Hash> {
    let (_, file) = crate::leaves::fs_util::open_regular_file(path).ok()?;
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(file).ok()?;
    Some(hasher.finalize())
}

/// The staleness bracket around one fire: the deliverable's fingerprint before, compared with
/// its fingerprint after. `changed` is true when either is missing or they differ.
#[derive(Debug, Clone, Copy)]
pub struct Bracket {
    before: Option<blake3::Hash>,
}

impl Bracket {
    /// Fingerprint `path` now, before the fire.
    pub fn open(path: &Utf8Path) -> Self {
        Self {
            before: fingerprint_file(path),
        }
    }

    /// Whether the bytes of `path` moved (or could not be read) since [`Bracket::open`].
    pub fn changed(self, path: &Utf8Path) -> bool {
        self.before.is_none() || fingerprint_file(path) != self.before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(contents: &str) -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().join("a.md")).unwrap();
        std::fs::write(&path, contents).unwrap();
        (dir, path)
    }

    #[test]
    fn fingerprints_notice_changed_and_vanished_bytes() {
        let (_dir, path) = temp_file("one");
        let mut fingerprints = Fingerprints::default();
        fingerprints.insert(&path, fingerprint_file(&path).unwrap());
        assert_eq!(fingerprints.changed_paths().next(), None);
        std::fs::write(&path, "two").unwrap();
        assert_eq!(fingerprints.changed_paths().next(), Some(path.as_path()));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(fingerprints.changed_paths().next(), Some(path.as_path()));
    }

    #[test]
    fn a_bracket_sees_a_change_and_a_missing_file() {
        let (_dir, path) = temp_file("one");
        let bracket = Bracket::open(&path);
        assert!(!bracket.changed(&path));
        std::fs::write(&path, "one more").unwrap();
        assert!(bracket.changed(&path));
        let missing = path.with_file_name("missing.md");
        assert!(Bracket::open(&missing).changed(&missing));
    }

    #[test]
    fn a_fifo_or_a_folder_has_no_fingerprint_and_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        let fifo = root.join("fifo.md");
        let made = std::process::Command::new("mkfifo")
            .arg(fifo.as_str())
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(fingerprint_file(&fifo), None);
        assert_eq!(fingerprint_file(&root), None);
    }
}
