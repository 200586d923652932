//! What the project holds, file by file, before and after one shell tool call: the walk
//! ([`take_snapshot`]), its file in the hooks-health folder ([`save_snapshot`],
//! [`load_snapshot`]) and the difference ([`snapshot_changes`]). The write hook fires on what
//! changed without reading the command (a script can write anything).
//!
//! Invariants:
//! - the walk is ripgrep's (`ignore`): `.gitignore`, `.ignore` and `.git/info/exclude` are
//!   respected (a repository is not required), hidden files are seen, and `.git`,
//!   `node_modules`, `target` and the hooks-health folder are never entered;
//! - a file is its size, modification time (nanoseconds) and inode: any change to one of them
//!   is a modification, so a rewrite with the same bytes is one too (as a file tool's write is);
//! - links are not followed; only regular files are listed;
//! - a snapshot file that cannot be read whole is `Err`, never an empty snapshot (which would
//!   make every file look created).

use std::collections::HashMap;
use std::time::UNIX_EPOCH;

use camino::{Utf8Path, Utf8PathBuf};

/// The folders the walk never enters, wherever they are.
pub const NEVER_WALKED: [&str; 3] = [".git", "node_modules", "target"];

/// One file's stamp: any change to it is a change to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    pub modified_ns: u128,
    pub inode: u64,
}

/// Every regular file the walk saw, by its project-relative path (with `/`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectSnapshot {
    pub files: HashMap<String, FileStamp>,
}

/// What one shell call changed, each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotChanges {
    pub created: Vec<String>,
    pub modified: Vec<String>,
    pub deleted: Vec<String>,
}

impl SnapshotChanges {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }
}

/// Walk `project_dir` (see the module's invariants), leaving out `skipped` folders (absolute),
/// and stamp each file whose project-relative path `watched` admits (a file no sensor could
/// fire on is not even stat-ed). One thread: ripgrep's parallel walker measured slower here,
/// its idle threads waiting on each other longer than the folders take to read.
pub fn take_snapshot(
    project_dir: &Utf8Path,
    skipped: &[Utf8PathBuf],
    watched: &dyn Fn(&str) -> bool,
) -> ProjectSnapshot {
    let skipped: Vec<std::path::PathBuf> = skipped
        .iter()
        .map(|folder| folder.as_std_path().to_owned())
        .collect();
    let walk = ignore::WalkBuilder::new(project_dir)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            !(is_dir
                && (NEVER_WALKED
                    .iter()
                    .any(|name| entry.file_name() == std::ffi::OsStr::new(name))
                    || skipped.iter().any(|folder| entry.path() == folder)))
        })
        .build();
    let mut files = HashMap::new();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Some(relative) = entry
            .path()
            .strip_prefix(project_dir)
            .ok()
            .and_then(std::path::Path::to_str)
        else {
            continue;
        };
        let relative = relative.replace('\\', "/");
        if !watched(&relative) {
            continue;
        }
        if let Ok(metadata) = entry.metadata() {
            files.insert(relative, stamp_of(&metadata));
        }
    }
    ProjectSnapshot { files }
}

fn stamp_of(metadata: &std::fs::Metadata) -> FileStamp {
    let modified_ns = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos());
    FileStamp {
        size: metadata.len(),
        modified_ns,
        inode: inode_of(metadata),
    }
}

#[cfg(unix)]
fn inode_of(metadata: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(metadata)
}

#[cfg(not(unix))]
fn inode_of(_metadata: &std::fs::Metadata) -> u64 {
    0
}

/// The first line of a snapshot file.
const SNAPSHOT_HEADER: &str = "aidlc-project-snapshot 1";

/// `snapshot` as its file's text: the header, then one `<size> <mtime ns> <inode>\t<path>`
/// line per file.
pub fn snapshot_text(snapshot: &ProjectSnapshot) -> String {
    let mut text = String::with_capacity(64 * snapshot.files.len() + 32);
    text.push_str(SNAPSHOT_HEADER);
    text.push('\n');
    for (path, stamp) in &snapshot.files {
        use std::fmt::Write;
        let _ = writeln!(
            text,
            "{} {} {}\t{path}",
            stamp.size, stamp.modified_ns, stamp.inode
        );
    }
    text
}

/// The snapshot a file's `text` holds, or why it cannot be read.
pub fn parse_snapshot(text: &str) -> Result<ProjectSnapshot, String> {
    let mut lines = text.lines();
    if lines.next() != Some(SNAPSHOT_HEADER) {
        return Err(format!("it does not start with \"{SNAPSHOT_HEADER}\""));
    }
    let mut files = HashMap::new();
    for (number, line) in lines.enumerate() {
        let bad = || {
            format!(
                "line {} is not `<size> <mtime> <inode>\\t<path>`",
                number + 2
            )
        };
        let (stamp, path) = line.split_once('\t').ok_or_else(bad)?;
        let mut numbers = stamp.split(' ');
        let mut next = || numbers.next().ok_or_else(bad);
        let size = next()?.parse().map_err(|_| bad())?;
        let modified_ns = next()?.parse().map_err(|_| bad())?;
        let inode = next()?.parse().map_err(|_| bad())?;
        files.insert(
            path.to_owned(),
            FileStamp {
                size,
                modified_ns,
                inode,
            },
        );
    }
    Ok(ProjectSnapshot { files })
}

/// Write `snapshot` to `path`, replacing it, through the file-system layer (its folders
/// resolved inside the project).
pub fn save_snapshot(
    path: &crate::leaves::fs_util::contained::ProjectPath,
    snapshot: &ProjectSnapshot,
) -> Result<(), crate::leaves::fs_util::contained::ContainedWriteError> {
    crate::leaves::fs_util::contained::write_file(
        path,
        snapshot_text(snapshot).as_bytes(),
        crate::leaves::fs_util::Flush::No,
    )
}

/// The snapshot saved at `path`: `Ok(None)` when there is none, `Err` when it cannot be read
/// (a snapshot grows with the project, so it is read with the generated files' limit).
pub fn load_snapshot(path: &Utf8Path) -> Result<Option<ProjectSnapshot>, String> {
    match crate::leaves::fs_util::read_bounded_text(
        path,
        crate::compile::discover::MAX_GENERATED_BYTES,
    ) {
        Ok(text) => parse_snapshot(&text).map(Some),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// What changed from `before` to `after`.
pub fn snapshot_changes(before: &ProjectSnapshot, after: &ProjectSnapshot) -> SnapshotChanges {
    let mut changes = SnapshotChanges::default();
    for (path, stamp) in &after.files {
        match before.files.get(path) {
            None => changes.created.push(path.clone()),
            Some(old) if old != stamp => changes.modified.push(path.clone()),
            Some(_) => {}
        }
    }
    changes.deleted = before
        .files
        .keys()
        .filter(|path| !after.files.contains_key(*path))
        .cloned()
        .collect();
    changes.created.sort();
    changes.modified.sort();
    changes.deleted.sort();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Utf8Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_walk_skips_ignored_files_and_the_never_walked_folders() {
        let temp = tempfile::tempdir().unwrap();
        let dir = Utf8Path::from_path(temp.path()).unwrap();
        write(dir, ".gitignore", "build/\n*.log\n");
        write(dir, "src/main.rs", "fn main() {}");
        write(dir, ".hidden/kept.md", "x");
        write(dir, "build/out.bin", "x");
        write(dir, "debug.log", "x");
        write(dir, "node_modules/a/index.js", "x");
        write(dir, "target/debug/x", "x");
        write(dir, ".git/HEAD", "x");
        write(dir, "record/.aidlc-hooks-health/s", "x");
        let snapshot = take_snapshot(dir, &[dir.join("record/.aidlc-hooks-health")], &|_| true);
        let source_only = take_snapshot(dir, &[], &|path| path.starts_with("src/"));
        assert_eq!(source_only.files.len(), 1, "{source_only:?}");
        let mut seen: Vec<&str> = snapshot.files.keys().map(String::as_str).collect();
        seen.sort_unstable();
        assert_eq!(seen, [".gitignore", ".hidden/kept.md", "src/main.rs"]);
    }

    #[test]
    fn created_modified_and_deleted_files_are_told_apart_and_the_text_round_trips() {
        let temp = tempfile::tempdir().unwrap();
        let dir = Utf8Path::from_path(temp.path()).unwrap();
        write(dir, "kept.md", "same");
        write(dir, "changed.md", "old");
        write(dir, "gone.md", "x");
        let before = take_snapshot(dir, &[], &|_| true);
        assert_eq!(parse_snapshot(&snapshot_text(&before)), Ok(before.clone()));
        assert_eq!(
            snapshot_changes(&before, &before),
            SnapshotChanges::default()
        );
        write(dir, "changed.md", "newer");
        std::fs::remove_file(dir.join("gone.md")).unwrap();
        write(dir, "new.md", "x");
        let changes = snapshot_changes(&before, &take_snapshot(dir, &[], &|_| true));
        assert_eq!(changes.created, ["new.md"]);
        assert_eq!(changes.modified, ["changed.md"]);
        assert_eq!(changes.deleted, ["gone.md"]);
    }

    #[test]
    fn a_snapshot_file_that_cannot_be_read_is_an_error_not_an_empty_snapshot() {
        assert!(parse_snapshot("").is_err());
        assert!(parse_snapshot(&format!("{SNAPSHOT_HEADER}\n12 x 3\ta")).is_err());
        assert!(parse_snapshot(&format!("{SNAPSHOT_HEADER}\nno tab")).is_err());
    }
}
