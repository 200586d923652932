//! The no-op path: a record of everything a successful compile read and wrote, so that the
//! next `aidlc compile` can prove nothing changed without parsing anything.
//!
//! The record lives beside the outputs as [`COMPILE_FINGERPRINT_FILE_NAME`] (ignored by the
//! `.gitignore` that `aidlc init` writes there). It holds, for each input in discovery order
//! and for both outputs: the project-relative path, the `stat` stamp and the BLAKE3 hash of
//! the bytes; plus the tool's identity, the layout (harness, folders, environment overrides),
//! the counts and the warnings of that compile, so an up-to-date run can repeat them.
//!
//! Invariants:
//! - a record is trusted only if its checksum, format, tool identity and layout all match;
//!   anything else (corrupt, truncated, foreign, from another build) means "compile";
//! - a file whose `stat` differs is hashed, and only a hash mismatch counts as a change, so a
//!   `touch` costs one hash, never a compile;
//! - a file modified within [`RACY_WINDOW_NS`] of the record being written is always hashed,
//!   because a second write inside the file system's timestamp granularity would leave its
//!   `stat` unchanged (Git's "racily clean" problem).

use std::borrow::Cow;
use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::compile::CompileOutcome;
use crate::compile::discover::{FileStamp, InputListing, Layout, ProjectInputs, hash_hex};
use crate::harness::gitignore::COMPILE_FINGERPRINT_FILE_NAME;
use crate::leaves::diagnostics::Diagnostic;
use crate::leaves::fs_util::StatStamp;

/// The first word of the record's first line; the format number follows it.
const MAGIC: &str = "aidlc-compile-fingerprint";
const FORMAT: u32 = 1;

/// Files modified this close to the record's writing are hashed on every check.
pub const RACY_WINDOW_NS: u64 = 2_000_000_000;

pub fn fingerprint_path(layout: &Layout) -> Utf8PathBuf {
    layout
        .stage_graph_path
        .parent()
        .map_or_else(|| Utf8PathBuf::from("."), Utf8Path::to_owned)
        .join(COMPILE_FINGERPRINT_FILE_NAME)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileRecord<'a> {
    /// Project-relative display path (absolute when outside the project).
    path: String,
    stamp: Cow<'a, FileStamp>,
}

/// The record, written by [`record`] borrowing the stamps and warnings (instead of cloning ten
/// thousand of them) and read back owned; [`check`] rewrites what it read, so one shape gives
/// the same bytes both ways. `written_at_ns` comes last, so that [`BodyBeforeTime`] can hold
/// everything before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record<'a> {
    tool: String,
    layout: Vec<String>,
    inputs: Vec<FileRecord<'a>>,
    skipped_sensor_files: Vec<String>,
    outputs: Vec<FileRecord<'a>>,
    n_stages: usize,
    n_sensors: usize,
    warnings: Cow<'a, [Diagnostic]>,
    written_at_ns: u64,
}

/// What an up-to-date check proved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpToDate {
    pub n_stages: usize,
    pub n_sensors: usize,
    /// The warnings of the compile that wrote the record (the inputs have not changed since).
    pub warnings: Vec<Diagnostic>,
    pub files_checked: usize,
    /// Files whose `stat` differed (or was too recent to trust) but whose bytes had not changed.
    pub files_hashed: usize,
}

/// Why the record does not prove the outputs up to date (the `Err` of [`check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Stale {
    #[error("no earlier compile is recorded")]
    NoRecord,
    #[error("the compile record was ignored ({0})")]
    Unreadable(String),
    #[error("the record was written by another aidlc build")]
    OtherTool,
    #[error("the harness, folders or environment overrides changed")]
    OtherLayout,
    #[error("input files were added or removed")]
    FilesAddedOrRemoved,
    #[error("{0} changed")]
    FileChanged(String),
    #[error("{0} is not the file the last compile wrote")]
    OutputChanged(String),
}

/// The identity of this build: version plus the executable's size and modification time, so a
/// rebuilt binary of the same version never trusts an older build's record.
pub(crate) fn tool_identity() -> String {
    let executable = std::env::current_exe()
        .ok()
        .and_then(|path| std::fs::metadata(path).ok())
        .map(|metadata| StatStamp::of(&metadata));
    match executable {
        Some(stamp) => format!(
            "aidlc {} ({} bytes, modified {})",
            env!("CARGO_PKG_VERSION"),
            stamp.size,
            stamp.modified_ns
        ),
        None => format!("aidlc {} (unknown executable)", env!("CARGO_PKG_VERSION")),
    }
}

pub(crate) fn layout_identity(layout: &Layout) -> Vec<String> {
    [
        layout.project_dir.as_str(),
        layout.harness.name(),
        layout.sensors_dir.as_str(),
        layout.stages_dir.as_str(),
        layout.agents_dir.as_str(),
        layout.scopes_dir.as_str(),
        layout.rules_dir.as_str(),
        layout.stage_graph_path.as_str(),
        layout.scope_grid_path.as_str(),
        // A compile with another `--graph-format` writes other bytes: never up to date.
        layout
            .graph_format
            .map_or("graph format: detected", |format| format.as_str()),
    ]
    .map(str::to_owned)
    .to_vec()
}

pub fn now_ns() -> u64 {
    crate::leaves::timestamp::ns_since_epoch(SystemTime::now())
}

/// The outputs' stamps, taken after they were written. `None` when either cannot be read.
fn output_records(layout: &Layout, graph: &str, grid: &str) -> Option<Vec<FileRecord<'static>>> {
    [
        (&layout.stage_graph_path, graph),
        (&layout.scope_grid_path, grid),
    ]
    .into_iter()
    .map(|(path, bytes)| {
        Some(FileRecord {
            path: layout.display(path).into_string(),
            stamp: Cow::Owned(FileStamp {
                stat: StatStamp::of_path(path)?,
                blake3: hash_hex(bytes.as_bytes()),
            }),
        })
    })
    .collect()
}

/// Write the record of an error-free compile whose outputs are now on disk, read from
/// `inputs`. Removes any old record instead when some input could not be read, since such a
/// compile cannot be proved unchanged later. The record is a cache: it is replaced atomically
/// but not flushed to disk, and a record lost or torn in a crash is simply not trusted.
///
/// A record on disk that already says everything this one would, apart from its time, is left
/// as it is (see [`still_true_record_time`]): rewriting it would trust nothing more, and the
/// create, write and rename cost more than the rest of the record.
pub fn record(
    layout: &Layout,
    outcome: &CompileOutcome,
    inputs: &ProjectInputs,
) -> std::io::Result<()> {
    debug_assert_eq!(
        outcome.n_errors(),
        0,
        "only error-free compiles are recorded"
    );
    let path = fingerprint_path(layout);
    let read_files: Option<Vec<FileRecord<'_>>> = inputs
        .read_files()
        .filter(|(path, _)| !layout.is_output(path))
        .map(|(path, stamp)| {
            Some(FileRecord {
                path: layout.display(path).into_string(),
                stamp: Cow::Borrowed(stamp?),
            })
        })
        .collect();
    let outputs = output_records(layout, &outcome.stage_graph, &outcome.scope_grid);
    let (Some(read_files), Some(outputs)) = (read_files, outputs) else {
        return remove_record(&path);
    };
    let record = Record {
        tool: tool_identity(),
        layout: layout_identity(layout),
        inputs: read_files,
        skipped_sensor_files: skipped_paths(inputs.listing()),
        outputs,
        n_stages: outcome.n_stages,
        n_sensors: outcome.n_sensors,
        warnings: Cow::Borrowed(&outcome.diagnostics),
        written_at_ns: 0,
    };
    let body = BodyBeforeTime::of(&record)?;
    let mut files = record.inputs.iter().chain(&record.outputs);
    if let Some(recorded_at_ns) = still_true_record_time(&path, &body)
        && !files.any(|file| is_racy(&file.stamp.stat, recorded_at_ns))
    {
        return Ok(());
    }
    write_record_body(&path, &body.with_time(now_ns()))
}

/// A record's JSON body up to its time: everything but the digits of `written_at_ns` and the
/// closing brace, which [`Record`] writes last.
struct BodyBeforeTime(String);

impl BodyBeforeTime {
    const TIME_KEY: &'static str = "\"written_at_ns\":";

    fn of(record: &Record<'_>) -> std::io::Result<Self> {
        let body = serde_json::to_string(record).map_err(std::io::Error::other)?;
        let placeholder = format!("{}{}}}", Self::TIME_KEY, record.written_at_ns);
        match body.strip_suffix(placeholder.as_str()) {
            Some(before_key) => Ok(Self(format!("{before_key}{}", Self::TIME_KEY))),
            None => Err(std::io::Error::other(
                "the record's time is not its last field",
            )),
        }
    }

    fn with_time(&self, written_at_ns: u64) -> String {
        format!("{}{written_at_ns}}}", self.0)
    }

    /// The time of `body` if it is exactly this body with some time, written as `serde_json`
    /// writes it (plain decimal digits, no leading zero).
    fn time_of(&self, body: &str) -> Option<u64> {
        let digits = body.strip_prefix(self.0.as_str())?.strip_suffix('}')?;
        let canonical = !digits.is_empty()
            && digits.bytes().all(|byte| byte.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        canonical.then(|| digits.parse().ok()).flatten()
    }
}

/// The time of the record at `path` when it is valid (its checksum matches) and says exactly
/// what `body` says apart from the time; `None` when it is missing, unreadable, corrupt or
/// different in any byte.
fn still_true_record_time(path: &Utf8Path, body: &BodyBeforeTime) -> Option<u64> {
    let text = crate::leaves::fs_util::read_bounded_text(
        path,
        crate::compile::discover::MAX_GENERATED_BYTES,
    )
    .ok()?;
    let (header, recorded_body) = text.split_once('\n')?;
    let recorded_at_ns = body.time_of(recorded_body)?;
    (header == record_header(recorded_body)).then_some(recorded_at_ns)
}

/// Whether a file with `stat` is too recent to trust by `stat` alone, for a record written at
/// `written_at_ns` (see the module comment).
fn is_racy(stat: &StatStamp, written_at_ns: u64) -> bool {
    stat.modified_ns.saturating_add(RACY_WINDOW_NS) >= written_at_ns
        || stat.changed_ns.saturating_add(RACY_WINDOW_NS) >= written_at_ns
}

fn skipped_paths(listing: &InputListing) -> Vec<String> {
    listing
        .skipped_sensors
        .iter()
        .map(|skipped| skipped.path.to_string())
        .collect()
}

#[expect(
    clippy::disallowed_methods,
    reason = "the compile's fingerprint record at its fixed path beside the compiled graph"
)]
fn remove_record(path: &Utf8Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// `MAGIC FORMAT CHECKSUM`: the first line of a record whose body is `body`; the checksum is
/// the BLAKE3 of the body.
fn record_header(body: &str) -> String {
    format!("{MAGIC} {FORMAT} {}", hash_hex(body.as_bytes()))
}

/// The header line, then the JSON body.
#[expect(
    clippy::disallowed_methods,
    reason = "the compile's fingerprint record, at the fixed path the layout names beside the compiled graph"
)]
fn write_record_body(path: &Utf8Path, body: &str) -> std::io::Result<()> {
    let text = format!("{}\n{body}", record_header(body));
    crate::leaves::fs_util::replace_atomically(
        path,
        text.as_bytes(),
        crate::leaves::fs_util::Flush::No,
    )
}

fn read_record(path: &Utf8Path) -> Result<Record<'static>, Stale> {
    let text = match crate::leaves::fs_util::read_bounded_text(
        path,
        crate::compile::discover::MAX_GENERATED_BYTES,
    ) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => return Err(Stale::NoRecord),
        Err(error) => return Err(Stale::Unreadable(error.to_string())),
    };
    let (header, body) = text
        .split_once('\n')
        .ok_or_else(|| Stale::Unreadable("no header line".to_owned()))?;
    if header != record_header(body) {
        return Err(Stale::Unreadable(
            "unknown format or checksum mismatch".to_owned(),
        ));
    }
    serde_json::from_str(body).map_err(|error| Stale::Unreadable(error.to_string()))
}

/// `None` when the file at `path` no longer holds the bytes `recorded` names; else whether it
/// had to be hashed to tell: `Some(false)` when its `stat` matches and is old enough to trust,
/// `Some(true)` when its `stat` differs (or is too recent to trust) but the bytes hash the
/// same, the new `stat` then recorded.
fn hashed_if_unchanged(
    path: &Utf8Path,
    recorded: &mut FileRecord<'_>,
    written_at_ns: u64,
) -> Option<bool> {
    let stat = StatStamp::of_path(path)?;
    let stamp = &recorded.stamp;
    if stat == stamp.stat && !is_racy(&stamp.stat, written_at_ns) {
        return Some(false);
    }
    if stat.size != stamp.stat.size {
        return None;
    }
    // Bounded by the recorded size, and never a blocking read of a FIFO put in a file's place.
    let bytes = crate::leaves::fs_util::read_bounded(path, stamp.stat.size).ok()?;
    if hash_hex(&bytes) != stamp.blake3 {
        return None;
    }
    recorded.stamp.to_mut().stat = stat;
    Some(true)
}

/// Whether [`check`] may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMode {
    /// Rewrite a record whose files had to be hashed (and all matched) with their new stamps.
    RefreshStamps,
    /// Write nothing, not even a lock folder: `aidlc compile --check` promises no writes.
    ReadOnly,
}

/// Check the record against the disk. `Ok` means a compile now would write the same bytes
/// that are already there. When some files had to be hashed and all matched, the record is
/// rewritten with their new stamps so the next check is back to `stat` only, unless `mode` is
/// [`CheckMode::ReadOnly`].
pub fn check(layout: &Layout, mode: CheckMode) -> Result<UpToDate, Stale> {
    let path = fingerprint_path(layout);
    let mut record = read_record(&path)?;
    if record.tool != tool_identity() {
        return Err(Stale::OtherTool);
    }
    if record.layout != layout_identity(layout) {
        return Err(Stale::OtherLayout);
    }
    let listing = InputListing::of(layout);
    let listed: Vec<&Utf8Path> = listing
        .read_paths()
        .filter(|path| !layout.is_output(path))
        .collect();
    let same_files = listed.len() == record.inputs.len()
        && listed
            .iter()
            .zip(&record.inputs)
            .all(|(path, recorded)| layout.display(path).as_str() == recorded.path)
        && skipped_paths(&listing) == record.skipped_sensor_files;
    if !same_files {
        return Err(Stale::FilesAddedOrRemoved);
    }
    let written_at_ns = record.written_at_ns;
    let mut files_hashed = 0;
    for (absolute, recorded) in listed.iter().zip(&mut record.inputs) {
        let hashed = hashed_if_unchanged(absolute, recorded, written_at_ns)
            .ok_or_else(|| Stale::FileChanged(recorded.path.clone()))?;
        files_hashed += usize::from(hashed);
    }
    for recorded in &mut record.outputs {
        let absolute = layout.project_dir.join(&recorded.path);
        let hashed = hashed_if_unchanged(&absolute, recorded, written_at_ns)
            .ok_or_else(|| Stale::OutputChanged(recorded.path.clone()))?;
        files_hashed += usize::from(hashed);
    }
    if files_hashed > 0 && mode == CheckMode::RefreshStamps {
        rewrite_with_fresh_stamps(layout, &mut record);
    }
    Ok(UpToDate {
        n_stages: record.n_stages,
        n_sensors: record.n_sensors,
        files_checked: record.inputs.len() + record.outputs.len(),
        warnings: record.warnings.into_owned(),
        files_hashed,
    })
}

/// Rewrite a record whose files all proved unchanged, with the `stat` stamps just taken.
/// Best effort, under the audit lock only if it is free: keeping the old record is still
/// correct, only slower to check.
fn rewrite_with_fresh_stamps(layout: &Layout, record: &mut Record<'_>) {
    let Ok(_lock) = crate::leaves::audit_lock::try_acquire(&layout.project_dir) else {
        return;
    };
    record.written_at_ns = now_ns();
    if let Ok(body) = serde_json::to_string(record) {
        let _ = write_record_body(&fingerprint_path(layout), &body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaves::diagnostics::Code;

    fn stamp(size: u64, hash: &str) -> FileStamp {
        FileStamp {
            stat: StatStamp {
                size,
                modified_ns: 7,
                changed_ns: 8,
                inode: 9,
            },
            blake3: hash.to_owned(),
        }
    }

    fn warnings() -> Vec<Diagnostic> {
        vec![
            Diagnostic::warning(Code::SwarmAdvisory, "a warning")
                .in_file("stages/a.md")
                .at(3..5),
        ]
    }

    fn record_to_write<'a>(
        input_stamps: &'a [FileStamp; 2],
        warnings: &'a [Diagnostic],
        written_at_ns: u64,
    ) -> Record<'a> {
        Record {
            tool: "aidlc test".to_owned(),
            layout: vec!["a".to_owned(), "b \"quoted\" written_at_ns".to_owned()],
            written_at_ns,
            inputs: vec![
                FileRecord {
                    path: "one.md".to_owned(),
                    stamp: Cow::Borrowed(&input_stamps[0]),
                },
                FileRecord {
                    path: "two.md".to_owned(),
                    stamp: Cow::Borrowed(&input_stamps[1]),
                },
            ],
            skipped_sensor_files: vec!["skipped.md".to_owned()],
            outputs: vec![FileRecord {
                path: "graph.json".to_owned(),
                stamp: Cow::Owned(stamp(30, "cc")),
            }],
            n_stages: 2,
            n_sensors: 1,
            warnings: Cow::Borrowed(warnings),
        }
    }

    /// The record is written from borrowed parts and read back whole: both shapes must agree
    /// field for field, or every later compile would find the record unreadable; and the whole
    /// shape (which `check` rewrites) must write the same bytes, or the next compile would
    /// always find the record different and rewrite it.
    #[test]
    fn a_record_written_from_borrowed_parts_reads_back_whole() {
        let input_stamps = [stamp(10, "aa"), stamp(20, "bb")];
        let warnings = warnings();
        let written = record_to_write(&input_stamps, &warnings, 42);
        let text = serde_json::to_string(&written).unwrap();
        let read: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(
            read,
            Record {
                tool: "aidlc test".to_owned(),
                layout: vec!["a".to_owned(), "b \"quoted\" written_at_ns".to_owned()],
                written_at_ns: 42,
                inputs: vec![
                    FileRecord {
                        path: "one.md".to_owned(),
                        stamp: Cow::Owned(input_stamps[0].clone()),
                    },
                    FileRecord {
                        path: "two.md".to_owned(),
                        stamp: Cow::Owned(input_stamps[1].clone()),
                    },
                ],
                skipped_sensor_files: vec!["skipped.md".to_owned()],
                outputs: written.outputs.clone(),
                n_stages: 2,
                n_sensors: 1,
                warnings: Cow::Owned(warnings.clone()),
            }
        );
        assert_eq!(serde_json::to_string(&read).unwrap(), text);
    }

    /// The body before the time, completed with a time, is the body serialised with that time;
    /// and only such a body gives its time back.
    #[test]
    fn a_body_is_recognised_only_when_it_differs_in_the_time_alone() {
        let input_stamps = [stamp(10, "aa"), stamp(20, "bb")];
        let warnings = warnings();
        let before_time =
            BodyBeforeTime::of(&record_to_write(&input_stamps, &warnings, 0)).unwrap();
        for time in [0, 7, 1_700_000_000_123_456_789, u64::MAX] {
            let serialised =
                serde_json::to_string(&record_to_write(&input_stamps, &warnings, time)).unwrap();
            assert_eq!(before_time.with_time(time), serialised);
            assert_eq!(before_time.time_of(&serialised), Some(time));
        }
        let other_stamps = [stamp(10, "aa"), stamp(21, "bb")];
        let other = serde_json::to_string(&record_to_write(&other_stamps, &warnings, 5)).unwrap();
        assert_eq!(before_time.time_of(&other), None);
        let body = before_time.with_time(5);
        for not_the_same in [
            body.replace(":5}", ":05}"),
            body.replace(":5}", ":+5}"),
            body.replace(":5}", ":}"),
            body.replace(":5}", ":5 }"),
            body.replace(":5}", ":5.0}"),
            format!("{body}\n"),
            body.replace(":5}", ":18446744073709551616}"),
        ] {
            assert_eq!(before_time.time_of(&not_the_same), None, "{not_the_same}");
        }
    }
}
