//! The no-op record of a composition: what a sync that changed nothing read, by `stat`, so the
//! next `aidlc plugin sync` can prove nothing changed without reading a plugin tree again
//! (docs/decisions.md D51).
//!
//! The record lives beside the compile's own record, as [`PLUGIN_SYNC_RECORD_FILE_NAME`] in the
//! folder of `stage-graph.json`; what it names is D51's list (`Record`).
//!
//! Invariants:
//! - a record is written only after a plan that changed nothing, with the time that sync
//!   started;
//! - a record is trusted only if its checksum, tool, layout and roots match, every stamp is
//!   equal (size, modification and change times, inode), every listing is the same, and every
//!   file and folder it names (an absent file by its nearest existing folder) was last changed
//!   more than [`RACY_WINDOW_NS`] before the recording sync started: a file changed while the
//!   plan read it, or within the file system's timestamp granularity of it, is never vouched
//!   for; any difference, even a `touch`, means "compose" (which, when the plan still changes
//!   nothing, writes a new record);
//! - a composing transaction removes the record before its first write, and no record is
//!   kept for an install without plugins.

use std::collections::BTreeSet;

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::compile::discover::{Layout, hash_hex};
use crate::compile::up_to_date::RACY_WINDOW_NS;
use crate::harness::gitignore::PLUGIN_SYNC_RECORD_FILE_NAME;
use crate::leaves::fs_util::StatStamp;
use crate::leaves::fs_util::{self, Flush, contained::ProjectPath};
use crate::plugin::Problem;

const MAGIC: &str = "aidlc-plugin-fingerprint";
const FORMAT: u32 = 3;

/// Where the record for `layout` lives.
pub fn sync_record_path(layout: &Layout) -> Utf8PathBuf {
    crate::compile::up_to_date::fingerprint_path(layout)
        .with_file_name(PLUGIN_SYNC_RECORD_FILE_NAME)
}

/// What a sync that changed nothing read, by path, and what it found.
#[derive(Debug, Clone)]
pub struct ReadSet {
    /// Files read (or looked for), absolute.
    pub files: Vec<Utf8PathBuf>,
    /// Folders listed, absolute (not their subfolders).
    pub folders: Vec<Utf8PathBuf>,
    /// Plugin roots as given, each walked whole.
    pub roots: Vec<Utf8PathBuf>,
    /// The plugin roots the environment passed to the sync.
    pub environment: Vec<Utf8PathBuf>,
    /// Its plugins and warnings, and the stages its enabled plugins composed.
    pub found: NothingToSync,
    /// When the sync started, in nanoseconds since the epoch.
    pub started_ns: u64,
}

/// A warning as the record keeps it: as `plugin sync` prints it, without its span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RecordedWarning {
    plugin: Option<String>,
    path: Option<String>,
    message: String,
    help: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    tool: String,
    layout: Vec<String>,
    /// The plugin roots the environment passed to the sync.
    environment_roots: Vec<String>,
    /// Plugin root as given → the folder it resolved to.
    roots: Vec<(String, String)>,
    /// When the recording sync started, in nanoseconds since the epoch.
    started_ns: u64,
    /// Folder → its entries (`name/` for a folder, `name@` for anything but a regular file).
    folders: Vec<(String, Vec<String>)>,
    files: Vec<(String, Option<StatStamp>)>,
    /// The stamps the record vouches for besides its files': each listed folder's, and for an
    /// absent file its nearest existing folder's (removing a file changes its folder's times).
    folder_stamps: Vec<StatStamp>,
    plugins: Vec<String>,
    warnings: Vec<RecordedWarning>,
    /// The slugs of the stages the enabled plugins composed, which the compiled graph must
    /// hold for the sync to be a no-op (the graph itself is not stamped: every compile
    /// rewrites it).
    composed_stages: BTreeSet<String>,
}

/// What a valid record says the sync would find.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NothingToSync {
    pub plugins: Vec<String>,
    pub warnings: Vec<Problem>,
    /// The stages the compiled graph must hold for nothing to sync.
    pub composed_stages: BTreeSet<String>,
}

fn environment_roots(roots: &[Utf8PathBuf]) -> Vec<String> {
    roots.iter().map(ToString::to_string).collect()
}

/// The sorted entries of `folder`, or `None` when it cannot be listed.
fn listing(folder: &Utf8Path) -> Option<Vec<String>> {
    let mut entries = Vec::new();
    for entry in folder.read_dir_utf8().ok()? {
        let entry = entry.ok()?;
        let kind = entry.file_type().ok()?;
        let suffix = if kind.is_dir() {
            "/"
        } else if kind.is_file() {
            ""
        } else {
            "@"
        };
        entries.push(format!("{}{suffix}", entry.file_name()));
    }
    entries.sort();
    Some(entries)
}

/// Whether `stat` was last changed at least the racy window before `started_ns`.
fn settled(stat: &StatStamp, started_ns: u64) -> bool {
    let limit = started_ns.saturating_sub(RACY_WINDOW_NS);
    stat.modified_ns < limit && stat.changed_ns < limit
}

/// Every folder and file under `root` (itself included), `.git` left out, depth first.
fn walk(root: &Utf8Path, folders: &mut Vec<Utf8PathBuf>, files: &mut Vec<Utf8PathBuf>) {
    folders.push(root.to_owned());
    let Ok(entries) = root.read_dir_utf8() else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if entry.file_name() == ".git" {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(entry.path(), folders, files),
            Ok(kind) if kind.is_file() => files.push(entry.path().to_owned()),
            _ => {}
        }
    }
}

/// Whether every stamp `record` vouches for was settled when its sync started.
fn record_is_settled(record: &Record) -> bool {
    record
        .files
        .iter()
        .filter_map(|(_, stat)| stat.as_ref())
        .chain(&record.folder_stamps)
        .all(|stat| settled(stat, record.started_ns))
}

/// Write the record of a sync that read `read` and changed nothing. Writes nothing (and
/// removes an older record) when something it read cannot be stamped or listed. A record is a
/// cache: failing to write it only keeps the next sync on the full path.
pub fn record(layout: &Layout, read: &ReadSet) -> std::io::Result<()> {
    match record_of(layout, read) {
        Some(record) => write_record(&contained_record_path(layout)?, &record),
        None => remove(layout),
    }
}

fn record_of(layout: &Layout, read: &ReadSet) -> Option<Record> {
    let found = &read.found;
    if found.plugins.is_empty() {
        return None;
    }
    let mut folders_to_list: Vec<Utf8PathBuf> = read.folders.clone();
    let mut files: Vec<Utf8PathBuf> = read.files.clone();
    let mut roots = Vec::new();
    for root in &read.roots {
        let resolved = Utf8PathBuf::from_path_buf(std::fs::canonicalize(root).ok()?).ok()?;
        walk(&resolved, &mut folders_to_list, &mut files);
        roots.push((root.to_string(), resolved.to_string()));
    }
    folders_to_list.sort();
    folders_to_list.dedup();
    files.sort();
    files.dedup();
    let mut folders = Vec::new();
    let mut folder_stamps = Vec::new();
    for folder in folders_to_list {
        // Listed before it is stamped: an entry added after the stamp fails the check's own
        // listing, one added before it leaves an unsettled stamp.
        let entries = listing(&folder)?;
        folder_stamps.push(StatStamp::of_path(&folder)?);
        folders.push((folder.to_string(), entries));
    }
    let mut stamped = Vec::new();
    for file in files {
        let stat = stamp_of_file(&file).ok()?;
        if stat.is_none() {
            // Its nearest existing folder's: removing a file changes its folder's times, so a
            // settled folder proves the file was absent all along.
            folder_stamps.push(file.ancestors().skip(1).find_map(StatStamp::of_path)?);
        }
        stamped.push((file.to_string(), stat));
    }
    Some(Record {
        tool: crate::compile::up_to_date::tool_identity(),
        layout: crate::compile::up_to_date::layout_identity(layout),
        environment_roots: environment_roots(&read.environment),
        roots,
        started_ns: read.started_ns,
        folders,
        files: stamped,
        folder_stamps,
        plugins: found.plugins.clone(),
        warnings: found
            .warnings
            .iter()
            .map(|warning| RecordedWarning {
                plugin: warning.plugin.clone(),
                path: warning.path().map(ToString::to_string),
                message: warning.message().to_owned(),
                help: warning.help().map(str::to_owned),
            })
            .collect(),
        composed_stages: found.composed_stages.clone(),
    })
}

/// The stamp of the file at `path`, `None` when it is absent.
fn stamp_of_file(path: &Utf8Path) -> std::io::Result<Option<StatStamp>> {
    match std::fs::metadata(path) {
        Ok(metadata) => Ok(Some(StatStamp::of(&metadata))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// `Some` when the record proves a sync with `environment` roots would change nothing.
pub fn check(layout: &Layout, environment: &[Utf8PathBuf]) -> Option<NothingToSync> {
    let record = read_record(&sync_record_path(layout))?;
    let same_key = record.tool == crate::compile::up_to_date::tool_identity()
        && record.layout == crate::compile::up_to_date::layout_identity(layout)
        && record.environment_roots == environment_roots(environment);
    if !same_key || !record_is_settled(&record) {
        return None;
    }
    for (given, resolved) in &record.roots {
        let now = std::fs::canonicalize(given).ok()?;
        if now.to_str() != Some(resolved.as_str()) {
            return None;
        }
    }
    for (path, stat) in &record.files {
        if stamp_of_file(Utf8Path::new(path)).ok()? != *stat {
            return None;
        }
    }
    for (folder, entries) in &record.folders {
        if listing(Utf8Path::new(folder)).as_ref() != Some(entries) {
            return None;
        }
    }
    Some(NothingToSync {
        composed_stages: record.composed_stages,
        plugins: record.plugins,
        warnings: record
            .warnings
            .into_iter()
            .map(|warning| {
                let mut problem = Problem::warning(warning.message);
                problem.plugin = warning.plugin;
                problem.diagnostic.file = warning.path.map(Utf8PathBuf::from);
                problem.diagnostic.help = warning.help;
                problem
            })
            .collect(),
    })
}

/// Remove the record (a composition is about to change what it names).
pub fn remove(layout: &Layout) -> std::io::Result<()> {
    let path = contained_record_path(layout)?;
    fs_util::contained::remove_file(&path).map_err(Into::into)
}

/// The record's path as a path the layer writes.
fn contained_record_path(layout: &Layout) -> std::io::Result<ProjectPath> {
    ProjectPath::of_absolute(&layout.project_dir, &sync_record_path(layout)).map_err(|refusal| {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, refusal.to_string())
    })
}

fn header(body: &str) -> String {
    format!("{MAGIC} {FORMAT} {}", hash_hex(body.as_bytes()))
}

fn write_record(path: &ProjectPath, record: &Record) -> std::io::Result<()> {
    let body = serde_json::to_string(record).map_err(std::io::Error::other)?;
    let text = format!("{}\n{body}", header(&body));
    if fs_util::read_input(&path.absolute()).ok().as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    fs_util::contained::write_file(path, text.as_bytes(), Flush::No).map_err(Into::into)
}

fn read_record(path: &Utf8Path) -> Option<Record> {
    let text = fs_util::read_input_text(path).ok()?;
    let (first, body) = text.split_once('\n')?;
    if first != header(body) {
        return None;
    }
    serde_json::from_str(body).ok()
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_changed_within_the_window_is_not_settled() {
        let stat = StatStamp {
            size: 1,
            modified_ns: 10 * RACY_WINDOW_NS,
            changed_ns: 10 * RACY_WINDOW_NS,
            inode: 1,
        };
        assert!(settled(&stat, 12 * RACY_WINDOW_NS));
        assert!(!settled(&stat, 11 * RACY_WINDOW_NS));
        assert!(!settled(&stat, 10 * RACY_WINDOW_NS));
    }

    #[test]
    fn a_record_vouches_only_for_stamps_settled_when_its_sync_started() {
        let stamp = |changed_ns| StatStamp {
            size: 1,
            modified_ns: RACY_WINDOW_NS,
            changed_ns,
            inode: 1,
        };
        let record = |file: StatStamp, folder: StatStamp| Record {
            tool: "t".into(),
            layout: vec![],
            environment_roots: vec![],
            roots: vec![],
            started_ns: 5 * RACY_WINDOW_NS,
            folders: vec![],
            files: vec![("a".into(), Some(file)), ("b".into(), None)],
            folder_stamps: vec![folder],
            plugins: vec!["p".into()],
            warnings: vec![],
            composed_stages: BTreeSet::new(),
        };
        let old = stamp(2 * RACY_WINDOW_NS);
        let recent = stamp(4 * RACY_WINDOW_NS);
        assert!(record_is_settled(&record(old, old)));
        assert!(!record_is_settled(&record(recent, old)));
        assert!(!record_is_settled(&record(old, recent)));
    }

    #[test]
    fn a_record_with_a_changed_checksum_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        let contained =
            crate::leaves::fs_util::contained::ProjectPath::parse(&project, "record").unwrap();
        let path = contained.absolute();
        let record = Record {
            tool: "t".into(),
            layout: vec![],
            environment_roots: vec![],
            roots: vec![],
            started_ns: 1,
            folders: vec![],
            files: vec![("a".into(), None)],
            folder_stamps: vec![],
            plugins: vec!["p".into()],
            warnings: vec![],
            composed_stages: BTreeSet::from(["s".to_owned()]),
        };
        write_record(&contained, &record).unwrap();
        assert_eq!(read_record(&path), Some(record));
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"p\"", "\"q\"");
        std::fs::write(&path, text).unwrap();
        assert_eq!(read_record(&path), None);
    }
}
