//! What the project holds, file by file, before and after one shell tool call: the walk
//! ([`take_snapshot`]), the cheaper re-stamp of an earlier walk whose folders did not change
//! ([`restamp_snapshot`]), its file in the hooks-health folder ([`save_snapshot`],
//! [`load_snapshot`]) and the difference ([`snapshot_changes`]). D60 states the invariants: the
//! walk's rules, a file's stamp (any change to its size, modification time or inode is a
//! modification, so a rewrite with the same bytes is one too), when the folder stamps vouch for
//! a listing ([`SETTLED_AFTER`]), and that a snapshot file that cannot be read whole is `Err`,
//! never an empty snapshot (which would make every file look created).

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::fs_util::StatStamp;
use crate::leaves::timestamp::ns_since_epoch;

/// The folders the walk never enters, wherever they are.
pub const NEVER_WALKED: [&str; 3] = [".git", "node_modules", "target"];

/// The files the walk reads its ignore rules from, in each folder it lists.
pub const IGNORE_FILE_NAMES: [&str; 2] = [".gitignore", ".ignore"];

/// The repository's own ignore file, read for the project's top folder.
pub const GIT_EXCLUDE: &str = ".git/info/exclude";

/// How long before a walk a folder or an ignore file must have last changed for its stamp to
/// vouch for the walk's listing: well above the coarsest clock tick of a file system's times.
pub const SETTLED_AFTER: Duration = Duration::from_secs(2);

/// One file's stamp: any change to it is a change to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    pub modified_ns: u64,
    pub inode: u64,
}

/// `<size> <mtime ns> <inode>`, as a snapshot file writes a file's stamp.
impl std::fmt::Display for FileStamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.size, self.modified_ns, self.inode)
    }
}

/// One folder's stamp: adding, removing or renaming an entry changes its modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FolderStamp {
    pub inode: u64,
    pub modified_ns: u64,
    pub changed_ns: u64,
}

/// What a walk listed besides the watched files: enough to tell later, with one `lstat` per
/// folder and ignore file, that no listing it read has changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkShape {
    /// The watched selection the walk stamped files by (the active stage's globs, as text):
    /// a shape taken for another selection is never re-stamped.
    pub watched: String,
    /// Whether every folder and ignore file had settled before the walk began (see the
    /// module's invariants): only a trusted shape is re-stamped.
    pub trusted: bool,
    /// Every folder the walk listed, by project-relative path (`""` is the project's).
    pub folders: BTreeMap<String, FolderStamp>,
    /// Every ignore file the walk read, by project-relative path; the repository's exclude
    /// file is always here, `None` when there is none.
    pub ignore_files: BTreeMap<String, Option<FileStamp>>,
}

/// Every watched regular file the walk saw, by its project-relative path (with `/`), and, for
/// a snapshot walked or re-stamped, the walk's shape (none when nothing was walked).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectSnapshot {
    pub files: HashMap<String, FileStamp>,
    pub shape: Option<WalkShape>,
}

/// What one shell call changed, by project-relative path, each list sorted.
pub type SnapshotChanges = crate::leaves::changes::Changes<String>;

/// Which files a snapshot stamps: `key` names the selection (a shape taken with another key is
/// never re-stamped), `admits` decides for a project-relative path.
pub struct WatchedSelection<'a> {
    pub key: &'a str,
    pub admits: &'a dyn Fn(&str) -> bool,
}

/// Walk `project_dir` (see the module's invariants), leaving out `skipped` folders (absolute),
/// and stamp each file whose project-relative path `watched` admits (a file no sensor could
/// fire on is not even stat-ed). One thread: ripgrep's parallel walker measured slower here,
/// its idle threads waiting on each other longer than the folders take to read.
pub fn take_snapshot(
    project_dir: &Utf8Path,
    skipped: &[Utf8PathBuf],
    watched: &WatchedSelection<'_>,
) -> ProjectSnapshot {
    let settled_before = SystemTime::now()
        .checked_sub(SETTLED_AFTER)
        .unwrap_or(UNIX_EPOCH);
    walk_project(project_dir, skipped, watched, settled_before)
}

/// The walk of [`take_snapshot`], trusting the stamps of what last changed before
/// `settled_before`.
fn walk_project(
    project_dir: &Utf8Path,
    skipped: &[Utf8PathBuf],
    watched: &WatchedSelection<'_>,
    settled_before: SystemTime,
) -> ProjectSnapshot {
    let settled_before_ns = ns_since_epoch(settled_before);
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
    let exclude = stamp_at(&project_dir.join(GIT_EXCLUDE));
    let mut shape = WalkShape {
        watched: watched.key.to_owned(),
        trusted: exclude.is_none_or(|stamp| stamp.modified_ns < settled_before_ns),
        folders: BTreeMap::new(),
        ignore_files: BTreeMap::from([(GIT_EXCLUDE.to_owned(), exclude)]),
    };
    let mut files = HashMap::new();
    for entry in walk {
        // An entry the walk cannot read (a folder it may not list, an ignore file it cannot
        // parse) leaves the listing unknown: the shape is not trusted.
        let Ok(entry) = entry else {
            shape.trusted = false;
            continue;
        };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let Some(relative) = entry
            .path()
            .strip_prefix(project_dir)
            .ok()
            .and_then(std::path::Path::to_str)
        else {
            continue;
        };
        let relative = relative.replace('\\', "/");
        if kind.is_dir() {
            match entry.metadata() {
                Ok(metadata) => {
                    let stamp = folder_stamp_of(&metadata);
                    shape.trusted &= stamp.modified_ns < settled_before_ns;
                    shape.folders.insert(relative, stamp);
                }
                Err(_) => shape.trusted = false,
            }
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let is_ignore_file = IGNORE_FILE_NAMES
            .iter()
            .any(|name| entry.file_name() == std::ffi::OsStr::new(name));
        let admitted = (watched.admits)(&relative);
        if !is_ignore_file && !admitted {
            continue;
        }
        let Ok(metadata) = entry.metadata() else {
            shape.trusted &= !is_ignore_file;
            continue;
        };
        let stamp = stamp_of(&metadata);
        if is_ignore_file {
            shape.trusted &= stamp.modified_ns < settled_before_ns;
            shape.ignore_files.insert(relative.clone(), Some(stamp));
        }
        if admitted {
            files.insert(relative, stamp);
        }
    }
    if !cfg!(unix) {
        // Only on Unix is a folder's change time read: elsewhere the listing is never vouched
        // for by stamps, and every snapshot walks.
        shape.trusted = false;
    }
    ProjectSnapshot {
        files,
        shape: Some(shape),
    }
}

/// `before` with each watched file stamped again, when its walk's shape still holds: it is
/// trusted, it was taken for `watched_key`, and every folder and ignore file it kept has the
/// same stamp now (so no listing changed: no file was created, removed or renamed). `None`
/// when any of that fails, or a watched file is no longer a regular file: then only a walk
/// tells what the project holds.
pub fn restamp_snapshot(
    project_dir: &Utf8Path,
    before: &ProjectSnapshot,
    watched_key: &str,
) -> Option<ProjectSnapshot> {
    let shape = before.shape.as_ref()?;
    if !shape.trusted || shape.watched != watched_key {
        return None;
    }
    for (relative, stamp) in &shape.folders {
        let metadata = std::fs::symlink_metadata(project_dir.join(relative)).ok()?;
        if !metadata.is_dir() || folder_stamp_of(&metadata) != *stamp {
            return None;
        }
    }
    for (relative, stamp) in &shape.ignore_files {
        if stamp_at(&project_dir.join(relative)) != *stamp {
            return None;
        }
    }
    let mut files = HashMap::with_capacity(before.files.len());
    for relative in before.files.keys() {
        let metadata = std::fs::symlink_metadata(project_dir.join(relative)).ok()?;
        if !metadata.is_file() {
            return None;
        }
        files.insert(relative.clone(), stamp_of(&metadata));
    }
    Some(ProjectSnapshot {
        files,
        shape: Some(shape.clone()),
    })
}

/// The stamp of the regular file at `path`, `None` when there is none (or it is something
/// else: a link or a folder in an ignore file's place is read as no rules).
fn stamp_at(path: &Utf8Path) -> Option<FileStamp> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|metadata| stamp_of(&metadata))
}

pub fn stamp_of(metadata: &std::fs::Metadata) -> FileStamp {
    let stat = StatStamp::of(metadata);
    FileStamp {
        size: stat.size,
        modified_ns: stat.modified_ns,
        inode: stat.inode,
    }
}

/// A folder's stamp; its inode's change time is kept too, since no program can set it back (a
/// folder's modification time can be).
fn folder_stamp_of(metadata: &std::fs::Metadata) -> FolderStamp {
    let stat = StatStamp::of(metadata);
    FolderStamp {
        inode: stat.inode,
        modified_ns: stat.modified_ns,
        changed_ns: stat.changed_ns,
    }
}

/// The first line of a snapshot file.
const SNAPSHOT_HEADER: &str = "aidlc-project-snapshot 2";

/// `snapshot` as its file's text: the header; for a walked snapshot, a `watched` line (the
/// selection's key as a JSON string), a `trusted` line, then one
/// `folder <inode> <mtime ns> <ctime ns>\t<path>` line per folder and one
/// `ignore <size> <mtime ns> <inode>\t<path>` (or `ignore none\t<path>`) line per ignore file;
/// then one `file <size> <mtime ns> <inode>\t<path>` line per watched file; last, an
/// `end <folders> <ignore files> <files>` line with the counts, so a cut file is refused.
pub fn snapshot_text(snapshot: &ProjectSnapshot) -> String {
    use std::fmt::Write;
    let folders = snapshot
        .shape
        .as_ref()
        .map_or(0, |shape| shape.folders.len());
    let mut text = String::with_capacity(64 * (snapshot.files.len() + folders) + 128);
    text.push_str(SNAPSHOT_HEADER);
    text.push('\n');
    let (folder_count, ignore_count) = match &snapshot.shape {
        None => (0, 0),
        Some(shape) => {
            let key = serde_json::Value::String(shape.watched.clone());
            let _ = writeln!(text, "watched {key}");
            let _ = writeln!(text, "trusted {}", if shape.trusted { "yes" } else { "no" });
            for (path, stamp) in &shape.folders {
                let _ = writeln!(
                    text,
                    "folder {} {} {}\t{path}",
                    stamp.inode, stamp.modified_ns, stamp.changed_ns
                );
            }
            for (path, stamp) in &shape.ignore_files {
                let _ = match stamp {
                    Some(stamp) => writeln!(text, "ignore {stamp}\t{path}"),
                    None => writeln!(text, "ignore none\t{path}"),
                };
            }
            (shape.folders.len(), shape.ignore_files.len())
        }
    };
    for (path, stamp) in &snapshot.files {
        let _ = writeln!(text, "file {stamp}\t{path}");
    }
    let _ = writeln!(
        text,
        "end {folder_count} {ignore_count} {}",
        snapshot.files.len()
    );
    text
}

/// The snapshot a file's `text` holds, or why it cannot be read: every line must be of the
/// shape [`snapshot_text`] writes, and the `end` line must close the file with the right
/// counts.
pub fn parse_snapshot(text: &str) -> Result<ProjectSnapshot, String> {
    let Some(body) = text
        .strip_prefix(SNAPSHOT_HEADER)
        .and_then(|rest| rest.strip_prefix('\n'))
    else {
        return Err(format!("it does not start with \"{SNAPSHOT_HEADER}\""));
    };
    let Some(body) = body.strip_suffix('\n') else {
        return Err("it does not end with a whole line (the file was cut short)".to_owned());
    };
    let mut snapshot = ProjectSnapshot::default();
    let mut ended = false;
    for (index, line) in body.split('\n').enumerate() {
        let number = index + 2;
        if ended {
            return Err(format!("line {number} follows the `end` line"));
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "watched" => {
                let key: String = serde_json::from_str(rest).map_err(|_| {
                    format!("line {number}'s watched selection is not a JSON string")
                })?;
                if snapshot.shape.is_some() {
                    return Err(format!("line {number} is a second `watched` line"));
                }
                snapshot.shape = Some(WalkShape {
                    watched: key,
                    ..WalkShape::default()
                });
            }
            "trusted" => {
                let shape = shape_of(&mut snapshot, number)?;
                shape.trusted = match rest {
                    "yes" => true,
                    "no" => false,
                    _ => {
                        return Err(format!(
                            "line {number} is not `trusted yes` or `trusted no`"
                        ));
                    }
                };
            }
            "folder" => {
                let ((inode, modified_ns, changed_ns), path) =
                    numbers_and_path(rest, number, "folder")?;
                let stamp = FolderStamp {
                    inode,
                    modified_ns,
                    changed_ns,
                };
                let previous = shape_of(&mut snapshot, number)?
                    .folders
                    .insert(path.to_owned(), stamp);
                named_once(previous.as_ref(), number, "folder", path)?;
            }
            "ignore" => {
                let (path, stamp) = if let Some(path) = rest.strip_prefix("none\t") {
                    (path, None)
                } else {
                    let (stamp, path) = numbers_and_path(rest, number, "ignore")?;
                    (path, Some(file_stamp_from(stamp)))
                };
                let previous = shape_of(&mut snapshot, number)?
                    .ignore_files
                    .insert(path.to_owned(), stamp);
                named_once(previous.as_ref(), number, "ignore file", path)?;
            }
            "file" => {
                let (stamp, path) = numbers_and_path(rest, number, "file")?;
                let previous = snapshot
                    .files
                    .insert(path.to_owned(), file_stamp_from(stamp));
                named_once(previous.as_ref(), number, "file", path)?;
            }
            "end" => {
                let counts = snapshot.shape.as_ref().map_or((0, 0), |shape| {
                    (shape.folders.len(), shape.ignore_files.len())
                });
                let expected = format!("{} {} {}", counts.0, counts.1, snapshot.files.len());
                if rest != expected {
                    return Err(format!(
                        "its end line counts `{rest}` (folders, ignore files, files) but it holds `{expected}`"
                    ));
                }
                ended = true;
            }
            _ => return Err(format!("line {number} is not a line of a snapshot")),
        }
    }
    if !ended {
        return Err("it has no `end` line (the file was cut short)".to_owned());
    }
    Ok(snapshot)
}

fn shape_of(snapshot: &mut ProjectSnapshot, number: usize) -> Result<&mut WalkShape, String> {
    snapshot
        .shape
        .as_mut()
        .ok_or_else(|| format!("line {number} comes before the `watched` line"))
}

/// A path a line names for the second time (`previous` is what the first named) is refused.
fn named_once<T>(
    previous: Option<&T>,
    number: usize,
    what: &str,
    path: &str,
) -> Result<(), String> {
    match previous {
        Some(_) => Err(format!(
            "line {number} names the {what} {path:?} a second time"
        )),
        None => Ok(()),
    }
}

/// A line's three numbers and its path: `<a> <b> <c>\t<path>`.
fn numbers_and_path<'line, A: FromStr, B: FromStr, C: FromStr>(
    rest: &'line str,
    number: usize,
    word: &str,
) -> Result<((A, B, C), &'line str), String> {
    let bad = || format!("line {number} is not `{word} <number> <number> <number>\\t<path>`");
    let (numbers, path) = rest.split_once('\t').ok_or_else(bad)?;
    let mut numbers = numbers.split(' ');
    let mut next = || numbers.next().ok_or_else(bad);
    let three = (next()?, next()?, next()?);
    if numbers.next().is_some() {
        return Err(bad());
    }
    let parsed = (
        three.0.parse().map_err(|_| bad())?,
        three.1.parse().map_err(|_| bad())?,
        three.2.parse().map_err(|_| bad())?,
    );
    Ok((parsed, path))
}

/// A file's stamp from its line's numbers: `<size> <mtime ns> <inode>`.
fn file_stamp_from((size, modified_ns, inode): (u64, u64, u64)) -> FileStamp {
    FileStamp {
        size,
        modified_ns,
        inode,
    }
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

pub fn snapshot_changes(before: &ProjectSnapshot, after: &ProjectSnapshot) -> SnapshotChanges {
    let mut changes = SnapshotChanges::default();
    for (path, stamp) in &after.files {
        match before.files.get(path) {
            None => changes.added.push(path.clone()),
            Some(old) if old != stamp => changes.modified.push(path.clone()),
            Some(_) => {}
        }
    }
    changes.removed = before
        .files
        .keys()
        .filter(|path| !after.files.contains_key(*path))
        .cloned()
        .collect();
    changes.added.sort();
    changes.modified.sort();
    changes.removed.sort();
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

    const EVERY: WatchedSelection<'static> = WatchedSelection {
        key: "every",
        admits: &|_| true,
    };

    /// A walk that trusts every stamp, as one taken long after the project last changed.
    fn settled_walk(dir: &Utf8Path, watched: &WatchedSelection<'_>) -> ProjectSnapshot {
        let far_ahead = SystemTime::now() + Duration::from_secs(3600);
        walk_project(dir, &[], watched, far_ahead)
    }

    fn listed(snapshot: &ProjectSnapshot) -> Vec<&str> {
        let mut seen: Vec<&str> = snapshot.files.keys().map(String::as_str).collect();
        seen.sort_unstable();
        seen
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
        let snapshot = take_snapshot(dir, &[dir.join("record/.aidlc-hooks-health")], &EVERY);
        let source_only = take_snapshot(
            dir,
            &[],
            &WatchedSelection {
                key: "src",
                admits: &|path| path.starts_with("src/"),
            },
        );
        assert_eq!(listed(&source_only), ["src/main.rs"]);
        assert_eq!(
            listed(&snapshot),
            [".gitignore", ".hidden/kept.md", "src/main.rs"]
        );
        let shape = snapshot.shape.unwrap();
        let folders: Vec<&str> = shape.folders.keys().map(String::as_str).collect();
        assert_eq!(folders, ["", ".hidden", "record", "src"]);
        let ignore_files: Vec<&str> = shape.ignore_files.keys().map(String::as_str).collect();
        assert_eq!(ignore_files, [".git/info/exclude", ".gitignore"]);
        assert!(
            !shape.trusted,
            "a project written just now is not settled: its stamps vouch for nothing"
        );
    }

    #[test]
    fn created_modified_and_deleted_files_are_told_apart_and_the_text_round_trips() {
        let temp = tempfile::tempdir().unwrap();
        let dir = Utf8Path::from_path(temp.path()).unwrap();
        write(dir, "kept.md", "same");
        write(dir, "changed.md", "old");
        write(dir, "gone.md", "x");
        let before = take_snapshot(dir, &[], &EVERY);
        assert_eq!(parse_snapshot(&snapshot_text(&before)), Ok(before.clone()));
        let settled = settled_walk(dir, &EVERY);
        assert_eq!(
            parse_snapshot(&snapshot_text(&settled)),
            Ok(settled.clone())
        );
        let nothing = ProjectSnapshot::default();
        assert_eq!(parse_snapshot(&snapshot_text(&nothing)), Ok(nothing));
        assert_eq!(
            snapshot_changes(&before, &before),
            SnapshotChanges::default()
        );
        write(dir, "changed.md", "newer");
        std::fs::remove_file(dir.join("gone.md")).unwrap();
        write(dir, "new.md", "x");
        let changes = snapshot_changes(&before, &take_snapshot(dir, &[], &EVERY));
        assert_eq!(changes.added, ["new.md"]);
        assert_eq!(changes.modified, ["changed.md"]);
        assert_eq!(changes.removed, ["gone.md"]);
    }

    #[test]
    fn a_settled_walk_is_restamped_without_listing_until_a_folder_or_ignore_file_changes() {
        let temp = tempfile::tempdir().unwrap();
        let dir = Utf8Path::from_path(temp.path()).unwrap();
        write(dir, "docs/a.md", "a");
        write(dir, "docs/deep/b.md", "b");
        write(dir, "src/.gitignore", "*.tmp\n");
        let markdown = WatchedSelection {
            key: "markdown",
            admits: &|path| {
                path.rsplit_once('.')
                    .is_some_and(|(_, extension)| extension == "md")
            },
        };
        let before = settled_walk(dir, &markdown);
        assert_eq!(listed(&before), ["docs/a.md", "docs/deep/b.md"]);
        assert_eq!(
            restamp_snapshot(dir, &before, "markdown"),
            Some(before.clone())
        );
        assert_eq!(
            restamp_snapshot(dir, &before, "another stage's globs"),
            None,
            "a shape taken for another selection is walked again"
        );
        let unsettled = take_snapshot(dir, &[], &markdown);
        assert_eq!(restamp_snapshot(dir, &unsettled, "markdown"), None);

        write(dir, "docs/deep/b.md", "rewritten in place");
        let restamped = restamp_snapshot(dir, &before, "markdown").expect("no folder changed");
        assert_eq!(
            snapshot_changes(&before, &restamped).modified,
            ["docs/deep/b.md"]
        );

        write(dir, "src/.gitignore", "*.tmp\n*.md\n");
        assert_eq!(restamp_snapshot(dir, &before, "markdown"), None);
        let before = settled_walk(dir, &markdown);
        write(dir, "docs/deep/c.md", "new");
        assert_eq!(
            restamp_snapshot(dir, &before, "markdown"),
            None,
            "a created file changes its folder"
        );
        let before = settled_walk(dir, &markdown);
        std::fs::rename(dir.join("docs/deep/c.md"), dir.join("docs/deep/d.txt")).unwrap();
        assert_eq!(restamp_snapshot(dir, &before, "markdown"), None);
        let before = settled_walk(dir, &markdown);
        std::fs::remove_dir_all(dir.join("docs/deep")).unwrap();
        assert_eq!(restamp_snapshot(dir, &before, "markdown"), None);
        let before = settled_walk(dir, &markdown);
        write(dir, ".git/info/exclude", "docs/\n");
        assert_eq!(
            restamp_snapshot(dir, &before, "markdown"),
            None,
            "the repository's exclude file counts as an ignore file"
        );
    }

    #[test]
    fn a_snapshot_file_that_cannot_be_read_is_an_error_not_an_empty_snapshot() {
        let temp = tempfile::tempdir().unwrap();
        let dir = Utf8Path::from_path(temp.path()).unwrap();
        write(dir, "docs/a.md", "a");
        write(dir, "docs/b.md", "b");
        let text = snapshot_text(&settled_walk(dir, &EVERY));
        assert!(parse_snapshot(&text).is_ok());
        for cut in 1..text.len() {
            assert!(
                parse_snapshot(&text[..cut]).is_err(),
                "a snapshot cut after {cut} bytes was read: {:?}",
                &text[..cut]
            );
        }
        let without_a_line = text.replacen("file ", "filed ", 1);
        assert!(parse_snapshot(&without_a_line).is_err());
        let a_line_short: String = text
            .split_inclusive('\n')
            .filter(|line| !line.starts_with("folder "))
            .collect();
        assert!(
            parse_snapshot(&a_line_short)
                .unwrap_err()
                .contains("end line")
        );
        assert!(parse_snapshot("").is_err());
        assert!(
            parse_snapshot(&format!("{SNAPSHOT_HEADER}\nfile 12 x 3\ta\nend 0 0 1\n")).is_err()
        );
        assert!(
            parse_snapshot(&format!(
                "{SNAPSHOT_HEADER}\nfile 1 2 3 no tab\nend 0 0 1\n"
            ))
            .is_err()
        );
        assert!(parse_snapshot(&format!("{SNAPSHOT_HEADER}\nend 0 0 0\nend 0 0 0\n")).is_err());
        assert!(parse_snapshot("aidlc-project-snapshot 1\n1 2 3\ta\n").is_err());
    }
}
