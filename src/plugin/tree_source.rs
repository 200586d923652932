//! Where the plugin tree reader gets its answers: the disk (an editor's unsaved text over it),
//! or the mirror of it a language server keeps in a salsa database (`plugin::tree_db`).
//!
//! The reader (`plugin::tree`, `plugin::manifest`, `plugin::guards::contained_path`) asks only
//! the four questions of [`TreeSource`], so the same answers give the same tree, and a
//! [`DiskSource`] that records its answers ([`DiskSource::recording`]) gives the mirror the
//! exact answers a later read from the mirror asks for.
//!
//! Invariants:
//! - the disk's answers are what `std::fs` says, with the error texts the reader has always
//!   shown (`io::Error`'s display);
//! - an overlay's text replaces a file's bytes only; it never makes a path exist, nor changes
//!   its kind (a buffer the editor holds for a deleted file is not a file of the tree).

use std::cell::RefCell;
use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};

/// Texts that stand for files of a plugin's tree, by absolute path (an editor's unsaved
/// buffers, docs/decisions.md D52): a read of the tree takes them instead of the disk's bytes.
/// Only files the tree has on disk are read, so a text for a path it lacks adds nothing.
pub type Overlay = BTreeMap<Utf8PathBuf, String>;

/// What is at a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EntryKind {
    Missing,
    File,
    Folder,
    /// A symbolic link (asked without following it).
    Link,
    /// A FIFO, socket or device.
    Other,
    /// The kind could not be read (an error other than "not found").
    Unreadable(String),
}

/// Whether a kind question follows a final symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Follow {
    /// As `symlink_metadata` asks.
    No,
    /// As `Path::is_file`, `is_dir` and `exists` ask.
    Yes,
}

/// One entry of a folder's listing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ListedName {
    Entry(Utf8PathBuf),
    /// A name that is not UTF-8, as `Path::display` shows it.
    NotUtf8(String),
    /// The listing failed at this entry.
    Failed(String),
}

/// The questions the tree reader asks.
pub trait TreeSource {
    fn kind(&self, path: &Utf8Path, follow: Follow) -> EntryKind;
    /// The folder's entries in the folder's own listing order (what `readdir` gives).
    fn list(&self, folder: &Utf8Path) -> Result<Vec<ListedName>, String>;
    fn read(&self, path: &Utf8Path) -> Result<Vec<u8>, String>;
    fn canonical(&self, path: &Utf8Path) -> Result<Utf8PathBuf, String>;
}

/// Every answer a [`DiskSource`] gave, to be mirrored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedAnswers {
    pub kinds: BTreeMap<(Utf8PathBuf, Follow), EntryKind>,
    pub listings: BTreeMap<Utf8PathBuf, Result<Vec<ListedName>, String>>,
    pub reads: BTreeMap<Utf8PathBuf, Result<Vec<u8>, String>>,
    pub canonicals: BTreeMap<Utf8PathBuf, Result<Utf8PathBuf, String>>,
}

/// The disk, with `overlay`'s texts standing for the bytes of the files it names.
pub struct DiskSource<'o> {
    overlay: &'o Overlay,
    recorded: Option<RefCell<RecordedAnswers>>,
}

impl<'o> DiskSource<'o> {
    pub fn new(overlay: &'o Overlay) -> Self {
        Self {
            overlay,
            recorded: None,
        }
    }

    /// A source that also keeps every answer it gives ([`Self::into_recorded`]).
    pub fn recording(overlay: &'o Overlay) -> Self {
        Self {
            overlay,
            recorded: Some(RefCell::new(RecordedAnswers::default())),
        }
    }

    /// The answers given so far (empty unless [`Self::recording`]).
    pub fn into_recorded(self) -> RecordedAnswers {
        self.recorded.map(RefCell::into_inner).unwrap_or_default()
    }

    /// `answer`, handed to `keep` too when recording.
    fn answered<T: Clone>(&self, answer: T, keep: impl FnOnce(&mut RecordedAnswers, T)) -> T {
        if let Some(recorded) = &self.recorded {
            keep(&mut recorded.borrow_mut(), answer.clone());
        }
        answer
    }
}

fn disk_kind(path: &Utf8Path, follow: Follow) -> EntryKind {
    let metadata = match follow {
        Follow::No => std::fs::symlink_metadata(path),
        Follow::Yes => std::fs::metadata(path),
    };
    match metadata {
        Ok(metadata) if metadata.is_symlink() => EntryKind::Link,
        Ok(metadata) if metadata.is_dir() => EntryKind::Folder,
        Ok(metadata) if metadata.is_file() => EntryKind::File,
        Ok(_) => EntryKind::Other,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => EntryKind::Missing,
        Err(error) => EntryKind::Unreadable(error.to_string()),
    }
}

fn disk_listing(folder: &Utf8Path) -> Result<Vec<ListedName>, String> {
    let entries = std::fs::read_dir(folder).map_err(|error| error.to_string())?;
    Ok(entries
        .map(|entry| match entry {
            Ok(entry) => Utf8PathBuf::from_path_buf(entry.path()).map_or_else(
                |path| ListedName::NotUtf8(path.display().to_string()),
                ListedName::Entry,
            ),
            Err(error) => ListedName::Failed(error.to_string()),
        })
        .collect())
}

fn disk_canonical(path: &Utf8Path) -> Result<Utf8PathBuf, String> {
    let real = std::fs::canonicalize(path).map_err(|error| error.to_string())?;
    Utf8PathBuf::from_path_buf(real).map_err(|_| "the resolved path is not UTF-8".to_owned())
}

impl TreeSource for DiskSource<'_> {
    fn kind(&self, path: &Utf8Path, follow: Follow) -> EntryKind {
        self.answered(disk_kind(path, follow), |recorded, kind| {
            recorded.kinds.insert((path.to_owned(), follow), kind);
        })
    }

    fn list(&self, folder: &Utf8Path) -> Result<Vec<ListedName>, String> {
        self.answered(disk_listing(folder), |recorded, listing| {
            recorded.listings.insert(folder.to_owned(), listing);
        })
    }

    fn read(&self, path: &Utf8Path) -> Result<Vec<u8>, String> {
        let bytes = self.overlay.get(path).map_or_else(
            || crate::leaves::fs_util::read_input(path).map_err(|error| error.to_string()),
            |text| Ok(text.as_bytes().to_vec()),
        );
        self.answered(bytes, |recorded, bytes| {
            recorded.reads.insert(path.to_owned(), bytes);
        })
    }

    fn canonical(&self, path: &Utf8Path) -> Result<Utf8PathBuf, String> {
        self.answered(disk_canonical(path), |recorded, canonical| {
            recorded.canonicals.insert(path.to_owned(), canonical);
        })
    }
}

/// `read_to_string`'s answer over [`TreeSource::read`]: the same error text for bytes that are
/// not UTF-8.
pub fn read_text(source: &dyn TreeSource, path: &Utf8Path) -> Result<String, String> {
    let bytes = source.read(path)?;
    String::from_utf8(bytes).map_err(|_| "stream did not contain valid UTF-8".to_owned())
}
