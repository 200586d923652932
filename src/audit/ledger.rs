//! The audit ledger (upstream-behaviour §4.7–§4.9): the Markdown blocks appended to this clone's
//! audit shard, the reader that splits them back, fire ids and the detail file a failed sensor
//! leaves. Every byte another process reads matches the reference (D2): the writer is
//! `renderAuditBlock` and `appendAuditBlockAtPath` of `aidlc-audit.ts`, the sensor rows and the
//! detail body are `emitTerminal` and `buildDetailBody` of `aidlc-sensor.ts`.
//!
//! Invariants:
//! - a block is written with one `write_all` on a descriptor opened for appending, under the
//!   audit lock and a process-wide mutex, so blocks never interleave and the header is written
//!   once; the lock is held only for the append itself;
//! - an append leaves the shard whole or as it was: a write that fails part-way is cut back to
//!   the shard's length before it, and a torn tail found before writing (a crash or another
//!   writer's failed write) is first closed with [`TORN_BLOCK_CLOSING_LINE`] and a separator, so
//!   a new block never glues onto a fragment;
//! - the reader never reads a torn piece as a block: it skips it and returns a [`TornBlock`]
//!   warning for the caller to show;
//! - no row and no detail file is written into a folder that resolves outside the project
//!   ([`workspace::check_write_folder`]).

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};

use crate::audit::lock::{self, LockError};
use crate::js_text::js_trim;
use crate::workspace::{self, WriteFolderError, random_lowercase_hex, sensor_detail_dir};

/// The first line of every shard, written by the first append to an empty file.
pub const AUDIT_LOG_HEADER: &str = "# AI-DLC Audit Log\n";
/// Readers split a shard into blocks on this separator.
pub const BLOCK_SEPARATOR: &str = "\n---\n";

pub const SENSOR_FIRED: &str = "SENSOR_FIRED";
pub const SENSOR_PASSED: &str = "SENSOR_PASSED";
pub const SENSOR_FAILED: &str = "SENSOR_FAILED";
pub const SENSOR_BUDGET_OVERRIDE: &str = "SENSOR_BUDGET_OVERRIDE";
/// The gate row: the stage's approval gate is open (written by the gate's sensor step).
pub const STAGE_AWAITING_APPROVAL: &str = "STAGE_AWAITING_APPROVAL";

/// The events that close a `SENSOR_FIRED`.
const TERMINAL_SENSOR_EVENTS: [&str; 3] = [SENSOR_PASSED, SENSOR_FAILED, SENSOR_BUDGET_OVERRIDE];
/// Keys the block writer emits itself. The reference refuses `Event` and silently drops
/// `Timestamp`; both are programmer errors here.
const RESERVED_FIELD_KEYS: [&str; 2] = ["Event", "Timestamp"];

/// Appends in this process; the audit lock is re-entrant per process, so it does not keep two
/// threads of one process apart.
static APPEND_MUTEX: Mutex<()> = Mutex::new(());

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error(
        "audit field key \"{key}\" is not one Markdown label: it must match ^[A-Za-z][A-Za-z0-9 ._()/-]*$"
    )]
    InvalidFieldKey { key: String },
    #[error("audit field key \"{key}\" is reserved: the writer emits **{key}** itself")]
    ReservedFieldKey { key: String },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("refusing an audit shard outside the project {project_dir}: {shard_path}")]
    ShardOutsideProject {
        project_dir: Utf8PathBuf,
        shard_path: Utf8PathBuf,
    },
    #[error("refusing the audit shard {path}: it is not a regular file")]
    NotARegularFile { path: Utf8PathBuf },
    #[error(transparent)]
    Folder(#[from] WriteFolderError),
    #[error(
        "fire {fire_id} is incomplete: its terminal row could not be written to the audit shard {shard_path}: {source}"
    )]
    TerminalRowNotWritten {
        fire_id: String,
        shard_path: Utf8PathBuf,
        source: Box<LedgerError>,
    },
    #[error("cannot append to the audit shard {path}: {source}")]
    Io {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
}

// --- Rows ---------------------------------------------------------------------------------------

/// One audit event before it is stamped: `## <heading>`, `**Event**: <event>`, then the fields in
/// order. Keys are valid by construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    heading: &'static str,
    event: &'static str,
    fields: Vec<(&'static str, String)>,
}

/// The four fields every sensor row starts with; `output_path_field` is already project-relative
/// (see [`relative_path_field`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireIdentity {
    pub fire_id: String,
    pub sensor_id: String,
    pub stage_slug: String,
    pub output_path_field: String,
}

impl FireIdentity {
    /// The identity of one fire, with `output_path` (as fired, usually absolute) made relative
    /// to `project_dir`.
    pub fn new(
        project_dir: &Utf8Path,
        fire_id: &str,
        sensor_id: &str,
        stage_slug: &str,
        output_path: &str,
    ) -> Self {
        Self {
            fire_id: fire_id.to_owned(),
            sensor_id: sensor_id.to_owned(),
            stage_slug: stage_slug.to_owned(),
            output_path_field: relative_path_field(project_dir, output_path),
        }
    }

    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("Fire id", self.fire_id.clone()),
            ("Sensor ID", self.sensor_id.clone()),
            ("Stage slug", self.stage_slug.clone()),
            ("Output path", self.output_path_field.clone()),
        ]
    }
}

impl AuditRow {
    /// A row with checked keys: each matches `^[A-Za-z][A-Za-z0-9 ._()/-]*$` and none is
    /// `Event` or `Timestamp`.
    pub fn new(
        heading: &'static str,
        event: &'static str,
        fields: Vec<(&'static str, String)>,
    ) -> Result<Self, LedgerError> {
        for (key, _) in &fields {
            check_field_key(key)?;
        }
        Ok(Self {
            heading,
            event,
            fields,
        })
    }

    pub fn heading(&self) -> &'static str {
        self.heading
    }

    pub fn event(&self) -> &'static str {
        self.event
    }

    pub fn fields(&self) -> &[(&'static str, String)] {
        &self.fields
    }

    /// `SENSOR_FIRED`: Fire id, Sensor ID, Stage slug, Output path.
    pub fn sensor_fired(fire: &FireIdentity) -> Self {
        Self::trusted("Sensor Fired", SENSOR_FIRED, fire.fields())
    }

    /// `SENSOR_PASSED`: the fire's fields, Duration ms, and Note when there is a non-empty one
    /// (`tool-unavailable`, `script-error: …`).
    pub fn sensor_passed(fire: &FireIdentity, duration_ms: u128, note: Option<&str>) -> Self {
        let mut fields = fire.fields();
        fields.push(("Duration ms", duration_ms.to_string()));
        if let Some(note) = note.filter(|note| !note.is_empty()) {
            fields.push(("Note", note.to_owned()));
        }
        Self::trusted("Sensor Passed", SENSOR_PASSED, fields)
    }

    /// `SENSOR_FAILED`: the fire's fields, Detail path (made relative to `project_dir`) and
    /// Findings count.
    pub fn sensor_failed(
        fire: &FireIdentity,
        project_dir: &Utf8Path,
        detail_path: &Utf8Path,
        findings_count: u64,
    ) -> Self {
        let mut fields = fire.fields();
        fields.push((
            "Detail path",
            relative_path_field(project_dir, detail_path.as_str()),
        ));
        fields.push(("Findings count", findings_count.to_string()));
        Self::trusted("Sensor Failed", SENSOR_FAILED, fields)
    }

    /// `SENSOR_BUDGET_OVERRIDE`: the fire's fields, Cap layer `registry`, Cap value (the timeout
    /// in seconds) and Observed value (elapsed seconds, rounded up).
    pub fn sensor_budget_override(
        fire: &FireIdentity,
        cap_value_seconds: u64,
        observed_seconds: u64,
    ) -> Self {
        let mut fields = fire.fields();
        fields.push(("Cap layer", "registry".to_owned()));
        fields.push(("Cap value", cap_value_seconds.to_string()));
        fields.push(("Observed value", observed_seconds.to_string()));
        Self::trusted("Sensor Budget Override", SENSOR_BUDGET_OVERRIDE, fields)
    }

    /// `STAGE_AWAITING_APPROVAL` (heading `Stage Awaiting Approval`), the gate row, with
    /// `fields` in the order given (the reference writes `Stage` first). Keys are checked as in
    /// [`AuditRow::new`].
    pub fn stage_awaiting_approval(
        fields: Vec<(&'static str, String)>,
    ) -> Result<Self, LedgerError> {
        Self::new("Stage Awaiting Approval", STAGE_AWAITING_APPROVAL, fields)
    }

    /// For the constructors above, whose keys are constants (a unit test checks them).
    fn trusted(
        heading: &'static str,
        event: &'static str,
        fields: Vec<(&'static str, String)>,
    ) -> Self {
        Self {
            heading,
            event,
            fields,
        }
    }
}

/// Whether `key` is one Markdown label on one line: `^[A-Za-z][A-Za-z0-9 ._()/-]*$`.
pub fn is_valid_field_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b" ._()/-".contains(&b))
}

fn check_field_key(key: &str) -> Result<(), LedgerError> {
    if RESERVED_FIELD_KEYS.contains(&key) {
        return Err(LedgerError::ReservedFieldKey {
            key: key.to_owned(),
        });
    }
    if !is_valid_field_key(key) {
        return Err(LedgerError::InvalidFieldKey {
            key: key.to_owned(),
        });
    }
    Ok(())
}

// --- Formatting ---------------------------------------------------------------------------------

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC, whole seconds (JavaScript's `toISOString` without the
/// milliseconds; instants before 1970 round down, as `Date` does).
pub fn iso_timestamp(instant: SystemTime) -> String {
    let seconds = seconds_since_epoch(instant);
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3_600,
        second_of_day % 3_600 / 60,
        second_of_day % 60
    )
}

/// Whole seconds since 1970, rounded towards the past.
fn seconds_since_epoch(instant: SystemTime) -> i64 {
    match instant.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => {
            let before = before.duration();
            let whole = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            if before.subsec_nanos() > 0 {
                -whole - 1
            } else {
                -whole
            }
        }
    }
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`: eras of 400 years, years starting in March so the leap day comes last).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A field value on one line: `\r\n`, `\r`, `\n`, U+2028 and U+2029 each become the two
/// characters `\n`, so no value can forge a second field or block.
pub fn escape_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    let mut characters = value.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\r' => {
                characters.next_if_eq(&'\n');
                escaped.push_str("\\n");
            }
            '\n' | '\u{2028}' | '\u{2029}' => escaped.push_str("\\n"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The bytes of one block:
/// `\n## <Heading>\n**Timestamp**: <ts>\n**Event**: <EVENT>\n**<Key>**: <value>\n…\n---\n`
/// (one blank line before the `---`).
pub fn format_block(row: &AuditRow, timestamp: &str) -> String {
    debug_assert!(
        row.fields
            .iter()
            .all(|(key, _)| check_field_key(key).is_ok()),
        "an audit row was built with a bad key"
    );
    let mut block = format!(
        "\n## {}\n**Timestamp**: {timestamp}\n**Event**: {}\n",
        row.heading, row.event
    );
    for (key, value) in &row.fields {
        block.push_str("**");
        block.push_str(key);
        block.push_str("**: ");
        block.push_str(&escape_value(value));
        block.push('\n');
    }
    block.push_str(BLOCK_SEPARATOR);
    block
}

/// A path as an audit field: backslashes become `/`; the project itself is `.`; a path under
/// the project loses the `<project>/` prefix (compared case-insensitively when it starts with a
/// Windows drive letter); any other path is kept, normalised. Nothing is canonicalised.
pub fn relative_path_field(project_dir: &Utf8Path, path: &str) -> String {
    let normalised_path = path.replace('\\', "/");
    let normalised_project = project_dir.as_str().replace('\\', "/");
    let normalised_project = normalised_project.trim_end_matches('/');
    let path_key = drive_insensitive_key(&normalised_path);
    let project_key = drive_insensitive_key(normalised_project);
    if path_key == project_key {
        return ".".to_owned();
    }
    let under_project = path_key
        .strip_prefix(project_key.as_str())
        .is_some_and(|rest| rest.starts_with('/'));
    match normalised_path.get(normalised_project.len() + 1..) {
        Some(relative) if under_project => relative.to_owned(),
        _ => normalised_path,
    }
}

fn drive_insensitive_key(path: &str) -> String {
    let bytes = path.as_bytes();
    let has_drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    if has_drive {
        path.to_lowercase()
    } else {
        path.to_owned()
    }
}

// --- Appending ----------------------------------------------------------------------------------

/// The line a later append writes under a torn tail (a block an interrupted write cut short)
/// before its own block, so that the fragment becomes a piece of its own between two
/// separators. As a `Note` it also makes a reference reader that reads the fragment anyway see
/// a noted pass (a non-evaluation), never an unnoted one; this crate's reader skips the piece.
pub const TORN_BLOCK_CLOSING_LINE: &str = "**Note**: script-error: torn-block (an interrupted write cut this block short; a later append closed it)";

/// How much of a shard's end the appender reads to see whether it ends cleanly.
const TAIL_WINDOW: u64 = 4096;

/// Append `row`, stamped with `now`, to the shard at `shard_path` (which must lie under
/// `project_dir`, compared as given, without `..`, and whose folder must stay inside the
/// project once links are resolved, [`workspace::check_write_folder`]). Takes the audit lock
/// for the append only (waiting about 5 s), creates the folders, writes the header when the
/// shard is new or empty, closes a torn tail, and writes with one `write_all` on a descriptor
/// opened for appending; a write that fails part-way is cut back to the shard's length before
/// it. A symbolic link or any non-file at the shard path is refused.
pub fn append_row(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    row: &AuditRow,
    now: SystemTime,
) -> Result<(), LedgerError> {
    append_row_with(project_dir, shard_path, row, now, lock::acquire)
}

/// [`append_row`] for the terminal row of a fire whose `SENSOR_FIRED` is written: the lock is
/// awaited for as long as its stale rule lets another holder keep it
/// ([`lock::acquire_until_stale`]), because giving up loses the fire's outcome. An error names
/// the fire id and the shard, whose `SENSOR_FIRED` then stays without its terminal row.
pub fn append_terminal_row(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    row: &AuditRow,
    now: SystemTime,
) -> Result<(), LedgerError> {
    append_row_with(project_dir, shard_path, row, now, lock::acquire_until_stale).map_err(
        |source| LedgerError::TerminalRowNotWritten {
            fire_id: row
                .fields
                .iter()
                .find(|(key, _)| *key == "Fire id")
                .map_or_else(|| "(no fire id)".to_owned(), |(_, id)| id.clone()),
            shard_path: shard_path.to_owned(),
            source: Box::new(source),
        },
    )
}

fn append_row_with(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    row: &AuditRow,
    now: SystemTime,
    take_lock: fn(&Utf8Path) -> Result<lock::AuditLockGuard, LockError>,
) -> Result<(), LedgerError> {
    check_shard_inside_project(project_dir, shard_path)?;
    let folder = shard_path.parent().unwrap_or(project_dir);
    workspace::create_write_folder(project_dir, folder)?;
    let block = format_block(row, &iso_timestamp(now));
    let _in_process = APPEND_MUTEX.lock().unwrap_or_else(PoisonError::into_inner);
    let _lock = take_lock(project_dir)?;
    append_block(shard_path, &block).map_err(|source| LedgerError::Io {
        path: shard_path.to_owned(),
        source,
    })
}

/// Refuse the write when any of the folders a fire writes into (the shard's folder, the
/// record's `.aidlc-engine`, the detail file's folder) escapes the project: the fire's
/// pre-flight, before `SENSOR_FIRED`, so that a refused fire writes nothing.
pub fn check_fire_folders(
    project_dir: &Utf8Path,
    record_root: &Utf8Path,
    shard_path: &Utf8Path,
    detail_path: &Utf8Path,
) -> Result<(), WriteFolderError> {
    let engine_dir = workspace::engine_dir(record_root);
    let folders = [
        shard_path.parent(),
        Some(engine_dir.as_path()),
        detail_path.parent(),
    ];
    for folder in folders.into_iter().flatten() {
        workspace::check_write_folder(project_dir, folder)?;
    }
    Ok(())
}

fn check_shard_inside_project(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
) -> Result<(), LedgerError> {
    let inside = shard_path != project_dir
        && shard_path.starts_with(project_dir)
        && !shard_path
            .components()
            .any(|c| c == camino::Utf8Component::ParentDir);
    if inside {
        Ok(())
    } else {
        Err(LedgerError::ShardOutsideProject {
            project_dir: project_dir.to_owned(),
            shard_path: shard_path.to_owned(),
        })
    }
}

/// Under the lock: nobody else appends between reading the shard's length and tail and writing.
fn append_block(shard_path: &Utf8Path, block: &str) -> std::io::Result<()> {
    let mut file = open_for_append(shard_path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other(format!(
            "{shard_path} is not a regular file"
        )));
    }
    let length_before = metadata.len();
    let tail = read_tail(&mut file, length_before)?;
    let bytes = bytes_to_append(&tail, length_before, block);
    append_or_roll_back(&mut file, length_before, bytes.as_bytes())
}

/// The last [`TAIL_WINDOW`] bytes of the file (all of it when it is shorter).
fn read_tail(file: &mut std::fs::File, length: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read as _, Seek as _};
    let window = length.min(TAIL_WINDOW);
    file.seek(std::io::SeekFrom::Start(length - window))?;
    let mut tail = vec![0; usize::try_from(window).unwrap_or(0)];
    file.read_exact(&mut tail)?;
    Ok(tail)
}

/// How a shard ends, seen from its last bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShardEnd {
    /// Empty: the header comes first.
    Empty,
    /// After a block separator or the bare header (trailing blank lines allowed).
    Clean,
    /// After `\n---` without its final newline: the block is whole, only the newline is missing.
    SeparatorWithoutNewline,
    /// Anything else: a block (or the header) an interrupted write cut short.
    Torn,
}

fn shard_end(tail: &[u8], length: u64) -> ShardEnd {
    if length == 0 {
        return ShardEnd::Empty;
    }
    let is_whole_file = u64::try_from(tail.len()).is_ok_and(|n| n == length);
    let content_end = tail
        .iter()
        .rposition(|byte| !byte.is_ascii_whitespace())
        .map_or(0, |position| position + 1);
    let content = &tail[..content_end];
    let newline_after = tail[content_end..].contains(&b'\n');
    let header = AUDIT_LOG_HEADER.trim_end().as_bytes();
    let ends_a_block = content.ends_with(b"\n---");
    let is_bare_header = is_whole_file && content == header;
    let is_blank = is_whole_file && content.is_empty();
    match (
        ends_a_block || is_bare_header || is_blank,
        newline_after || is_blank,
    ) {
        (true, true) => ShardEnd::Clean,
        (true, false) => ShardEnd::SeparatorWithoutNewline,
        (false, _) => ShardEnd::Torn,
    }
}

/// The bytes one append writes after the shard's current end: the header for an empty shard, a
/// newline after a separator that lost its own, or [`TORN_BLOCK_CLOSING_LINE`] and a separator
/// after a torn tail, so that the new block always starts on its own line in its own piece.
fn bytes_to_append(tail: &[u8], length: u64, block: &str) -> String {
    match shard_end(tail, length) {
        ShardEnd::Empty => format!("{AUDIT_LOG_HEADER}{block}"),
        ShardEnd::Clean => block.to_owned(),
        ShardEnd::SeparatorWithoutNewline => format!("\n{block}"),
        ShardEnd::Torn => format!("\n{TORN_BLOCK_CLOSING_LINE}\n{BLOCK_SEPARATOR}{block}"),
    }
}

/// The shard as the appender writes it; a trait so a test can put a writer that fails part-way
/// in its place.
trait ShardWriter: std::io::Write {
    fn truncate_to(&mut self, length: u64) -> std::io::Result<()>;
}

impl ShardWriter for std::fs::File {
    fn truncate_to(&mut self, length: u64) -> std::io::Result<()> {
        self.set_len(length)
    }
}

/// Write all of `bytes`, or none: a write that fails part-way (disk full, I/O error) is cut
/// back to `length_before`, the shard's length before it (the caller holds the lock, so no one
/// else appended meanwhile). Should the cut fail too, the error says so; the torn tail it
/// leaves is closed by the next append.
fn append_or_roll_back(
    shard: &mut impl ShardWriter,
    length_before: u64,
    bytes: &[u8],
) -> std::io::Result<()> {
    let Err(error) = shard.write_all(bytes) else {
        return Ok(());
    };
    match shard.truncate_to(length_before) {
        Ok(()) => Err(error),
        Err(cut) => Err(std::io::Error::new(
            error.kind(),
            format!(
                "{error}; cutting the partial block back to {length_before} bytes failed too ({cut}), so the next append closes it as a torn block"
            ),
        )),
    }
}

#[cfg(unix)]
fn open_for_append(path: &Utf8Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_for_append(path: &Utf8Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
}

// --- Reading ------------------------------------------------------------------------------------

/// One block read back from a shard. `fields` holds every `**Key**: value` line except
/// Timestamp and Event, in order, values trimmed and still escaped (a `\n` in a value stays two
/// characters: the writer's escaping cannot be undone unambiguously).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditBlock {
    pub heading: String,
    pub timestamp: Option<String>,
    pub event: String,
    pub fields: Vec<(String, String)>,
}

impl AuditBlock {
    /// The first value of `key`, as the reference's `auditBlockField` reads it.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }
}

/// A shard's text read back: its blocks, and the torn blocks skipped on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedLedger {
    pub blocks: Vec<AuditBlock>,
    /// One warning per torn piece, in order; callers show them.
    pub torn: Vec<TornBlock>,
}

/// A piece of a shard that an interrupted write cut short, skipped by the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornBlock {
    /// The 1-based line where the fragment starts.
    pub line: usize,
    pub kind: TornKind,
    /// The fragment's start, on one line, control characters escaped.
    pub excerpt: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TornKind {
    /// The shard's last piece has no separator after it: the write was cut short (or is still
    /// under way in another process).
    Unterminated,
    /// A later append closed the fragment with [`TORN_BLOCK_CLOSING_LINE`].
    ClosedByLaterAppend,
    /// A writer that does not close torn tails appended its block onto the fragment; that block
    /// is read, the fragment before it is not.
    FollowedByGluedBlock,
}

impl std::fmt::Display for TornBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.kind {
            TornKind::Unterminated => {
                "it has no `---` separator after it: a write was cut short or is still under way"
            }
            TornKind::ClosedByLaterAppend => {
                "an interrupted write cut it short and a later append closed it"
            }
            TornKind::FollowedByGluedBlock => {
                "an interrupted write cut it short and the next block was appended onto it; that block is read"
            }
        };
        write!(
            f,
            "skipped a torn audit block at line {}: {why}: \"{}\"",
            self.line, self.excerpt
        )
    }
}

/// Characters of a fragment shown in a [`TornBlock`] warning.
const TORN_EXCERPT_CHARS: usize = 60;

/// The blocks of a shard (or of several shards joined with `\n`), without the torn ones; see
/// [`parse_ledger`] for the warnings about those.
pub fn parse_blocks(text: &str) -> Vec<AuditBlock> {
    parse_ledger(text).blocks
}

/// The blocks of a shard (or of several shards joined with `\n`): CRLF is read as LF, the text
/// is split on `\n---\n`, and pieces without an `**Event**:` line (the header, notes) are not
/// blocks. A torn piece is never read as a block, and each is reported in
/// [`ParsedLedger::torn`]: the piece after the last separator when it is not blank, a piece
/// holding [`TORN_BLOCK_CLOSING_LINE`], and text in front of a block start (a `## ` heading line
/// followed by a `**Timestamp**:` line) other than the header and blank lines, where the block
/// from that start is still read.
pub fn parse_ledger(text: &str) -> ParsedLedger {
    let text = text.replace("\r\n", "\n");
    let pieces: Vec<&str> = text.split(BLOCK_SEPARATOR).collect();
    let mut ledger = ParsedLedger::default();
    let mut line = 1;
    for (index, piece) in pieces.iter().enumerate() {
        let piece_line = line;
        line += piece.matches('\n').count() + 2;
        // Every shard starts with the header, so joined shards have one at a piece's start.
        let body = piece
            .trim_start_matches(['\n', ' ', '\t'])
            .strip_prefix(AUDIT_LOG_HEADER)
            .unwrap_or(piece);
        let body_line = piece_line + piece[..piece.len() - body.len()].matches('\n').count();
        let is_last = index + 1 == pieces.len();
        let closed_torn = piece.split('\n').any(|l| l == TORN_BLOCK_CLOSING_LINE);
        if is_last || closed_torn {
            let (fragment, kind) = match body.find(TORN_BLOCK_CLOSING_LINE) {
                Some(at) if closed_torn => (&body[..at], TornKind::ClosedByLaterAppend),
                _ => (body, TornKind::Unterminated),
            };
            if !fragment.trim().is_empty() {
                ledger.torn.push(torn_block(fragment, body_line, kind));
            }
            continue;
        }
        let start = last_block_start(body);
        let (fragment, block) = body.split_at(start);
        if !fragment.trim().is_empty() {
            ledger.torn.push(torn_block(
                fragment,
                body_line,
                TornKind::FollowedByGluedBlock,
            ));
        }
        ledger.blocks.extend(parse_block(block));
    }
    ledger
}

/// The byte offset of the last line of `piece` that starts a block (`## ` followed by a
/// `**Timestamp**:` line), or 0 when none does.
fn last_block_start(piece: &str) -> usize {
    let mut starts = Vec::new();
    let mut offset = 0;
    let mut previous: Option<(usize, &str)> = None;
    for line in piece.split('\n') {
        if let Some((heading_offset, heading)) = previous
            && heading.starts_with("## ")
            && field_line(line).is_some_and(|(key, _)| key == "Timestamp")
        {
            starts.push(heading_offset);
        }
        previous = Some((offset, line));
        offset += line.len() + 1;
    }
    starts.last().copied().unwrap_or(0)
}

fn torn_block(fragment: &str, piece_line: usize, kind: TornKind) -> TornBlock {
    let leading_blank_lines = fragment.len() - fragment.trim_start().len();
    let line = piece_line + fragment[..leading_blank_lines].matches('\n').count();
    let trimmed = fragment.trim();
    let mut excerpt: String = trimmed
        .chars()
        .take(TORN_EXCERPT_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if trimmed.chars().count() > TORN_EXCERPT_CHARS {
        excerpt.push('…');
    }
    TornBlock {
        line,
        kind,
        excerpt,
    }
}

fn parse_block(piece: &str) -> Option<AuditBlock> {
    let mut heading = String::new();
    let mut timestamp = None;
    let mut event = None;
    let mut fields = Vec::new();
    for line in piece.split('\n') {
        if heading.is_empty()
            && let Some(text) = line.strip_prefix("## ")
        {
            text.trim_end().clone_into(&mut heading);
            continue;
        }
        let Some((key, value)) = field_line(line) else {
            continue;
        };
        // The first Timestamp and Event lines count, as the reference's readers take them.
        match key {
            "Timestamp" if timestamp.is_none() => timestamp = Some(value),
            "Event" if event.is_none() => event = Some(value),
            "Timestamp" | "Event" => {}
            _ => fields.push((key.to_owned(), value)),
        }
    }
    Some(AuditBlock {
        heading,
        timestamp,
        event: event?,
        fields,
    })
}

/// `**Key**: value` (optionally after `- `), as the reference reads a field line.
fn field_line(line: &str) -> Option<(&str, String)> {
    let line = line.strip_prefix("- ").unwrap_or(line);
    let rest = line.strip_prefix("**")?;
    let (key, value) = rest.split_once("**:")?;
    (!key.is_empty()).then(|| (key, js_trim(value).to_owned()))
}

/// A `SENSOR_FIRED` block and the terminal block with the same Fire id, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirePair<'a> {
    pub fired: &'a AuditBlock,
    pub terminal: Option<&'a AuditBlock>,
}

/// Every `SENSOR_FIRED` in order, each with its terminal row (`SENSOR_PASSED`, `SENSOR_FAILED`
/// or `SENSOR_BUDGET_OVERRIDE`) matched by `Fire id`, never by position: rows may be out of
/// order (several shards merged). Should two fires share an id, the k-th fired of that id takes
/// the k-th terminal of that id. Terminal rows without a fired row are not returned. Torn
/// blocks never reach this function ([`parse_ledger`] skips them), so a fire whose terminal row
/// is torn is incomplete, never paired with a fragment.
pub fn pair_fires(blocks: &[AuditBlock]) -> Vec<FirePair<'_>> {
    let mut terminals: BTreeMap<&str, VecDeque<&AuditBlock>> = BTreeMap::new();
    for block in blocks
        .iter()
        .filter(|b| TERMINAL_SENSOR_EVENTS.contains(&b.event.as_str()))
    {
        if let Some(fire_id) = block.field("Fire id") {
            terminals.entry(fire_id).or_default().push_back(block);
        }
    }
    blocks
        .iter()
        .filter(|block| block.event == SENSOR_FIRED)
        .map(|fired| FirePair {
            fired,
            terminal: fired
                .field("Fire id")
                .and_then(|id| terminals.get_mut(id))
                .and_then(VecDeque::pop_front),
        })
        .collect()
}

// --- Fire ids and detail files ------------------------------------------------------------------

/// A fresh fire id: 8 random lowercase hex characters (4 random bytes, as `randomBytes(4)`).
/// Collisions are not checked, as in the reference; pairing tolerates them.
pub fn new_fire_id() -> String {
    random_lowercase_hex(8)
}

/// `<record_root>/.aidlc-engine/sensors/<stage>/<sensor-id>-<fire-id>.md`.
pub fn detail_file_path(
    record_root: &Utf8Path,
    stage: &str,
    sensor_id: &str,
    fire_id: &str,
) -> Utf8PathBuf {
    sensor_detail_dir(record_root)
        .join(stage)
        .join(format!("{sensor_id}-{fire_id}.md"))
}

/// The detail file of a failed fire, byte for byte as the reference writes it (LF newlines, one
/// newline after the closing fence). `absolute_output_path` is the path as fired, not the
/// relative audit field; `worker_json` is printed as `JSON.stringify(value, null, 2)`.
pub fn detail_file_body(
    sensor_id: &str,
    stage: &str,
    timestamp: &str,
    fire_id: &str,
    absolute_output_path: &str,
    worker_json: &serde_json::Value,
) -> String {
    let lines = [
        format!("# {sensor_id} finding \u{2014} {stage}"),
        String::new(),
        format!("**Timestamp**: {timestamp}"),
        format!("**Fire id**: {fire_id}"),
        format!("**Output path**: {absolute_output_path}"),
        "**Pass**: false".to_owned(),
        String::new(),
        "## Findings".to_owned(),
        String::new(),
        "```json".to_owned(),
        javascript_pretty_json(worker_json),
        "```".to_owned(),
        String::new(),
    ];
    lines.join("\n")
}

/// Our section after the reference's body (its readers stop at the `## Findings` fence): the
/// last lines of the worker's stderr, so that the reason a worker gave is kept. Empty when it
/// wrote nothing on stderr.
pub fn detail_stderr_section(stderr_tail: &str) -> String {
    let tail = stderr_tail.trim_end();
    if tail.trim().is_empty() {
        return String::new();
    }
    let fence = if tail.contains("```") { "~~~~" } else { "```" };
    format!("\n## Worker stderr (last lines)\n\n{fence}text\n{tail}\n{fence}\n")
}

/// The detail file of a fire that evaluated nothing but wrote on stderr (ours: the reference
/// writes detail files for failures only): the reference's header with the note in place of
/// `**Pass**`, then [`detail_stderr_section`].
pub fn non_evaluation_detail_body(
    sensor_id: &str,
    stage: &str,
    timestamp: &str,
    fire_id: &str,
    absolute_output_path: &str,
    note: &str,
    stderr_tail: &str,
) -> String {
    let header = [
        format!("# {sensor_id} finding \u{2014} {stage}"),
        String::new(),
        format!("**Timestamp**: {timestamp}"),
        format!("**Fire id**: {fire_id}"),
        format!("**Output path**: {absolute_output_path}"),
        format!("**Note**: {note}"),
        String::new(),
    ];
    header.join("\n") + &detail_stderr_section(stderr_tail)
}

/// Write a detail file: check that its folder stays inside `project_dir`
/// ([`workspace::create_write_folder`]) and create it, remove stale temporaries of ours there,
/// write a new temporary file of ours exclusively (`.<name>.aidlc-<pid>-<random>.tmp`, never an
/// existing file), then rename it onto `path`. The temporary is removed when anything fails.
pub fn write_detail_file(
    project_dir: &Utf8Path,
    path: &Utf8Path,
    body: &str,
) -> std::io::Result<()> {
    let folder = path.parent().unwrap_or(project_dir);
    workspace::create_write_folder(project_dir, folder).map_err(std::io::Error::other)?;
    crate::fs_util::sweep_stale_temporaries(folder);
    let (temporary, mut file) =
        crate::fs_util::create_temporary_file(folder, path.file_name().unwrap_or("detail.md"))?;
    let written = file
        .write_all(body.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&temporary, path)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

// --- JSON as JavaScript prints it ---------------------------------------------------------------

/// `JSON.stringify(value, null, 2)`: two-space indentation, `[]` and `{}` for empty containers,
/// object keys in JavaScript's order (array-index keys ascending, then the rest as parsed),
/// numbers as `Number.prototype.toString` prints them, strings escaped as JavaScript does.
pub fn javascript_pretty_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_javascript_json(&mut out, value, 0);
    out
}

fn write_javascript_json(out: &mut String, value: &serde_json::Value, depth: usize) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&javascript_number(number)),
        Value::String(text) => write_javascript_string(out, text),
        Value::Array(items) => write_javascript_array(out, items, depth),
        Value::Object(entries) => write_javascript_object(out, entries, depth),
    }
}

fn write_javascript_array(out: &mut String, items: &[serde_json::Value], depth: usize) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        push_indent(out, depth + 1);
        write_javascript_json(out, item, depth + 1);
    }
    out.push('\n');
    push_indent(out, depth);
    out.push(']');
}

fn write_javascript_object(
    out: &mut String,
    entries: &serde_json::Map<String, serde_json::Value>,
    depth: usize,
) {
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push('{');
    for (index, (key, value)) in javascript_key_order(entries).into_iter().enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        push_indent(out, depth + 1);
        write_javascript_string(out, key);
        out.push_str(": ");
        write_javascript_json(out, value, depth + 1);
    }
    out.push('\n');
    push_indent(out, depth);
    out.push('}');
}

fn push_indent(out: &mut String, depth: usize) {
    out.extend(std::iter::repeat_n(' ', depth * 2));
}

/// JavaScript enumerates integer-like keys (canonical, up to 2^32 − 2) first, ascending, then the
/// other keys in insertion order (kept by `serde_json`'s `preserve_order`).
fn javascript_key_order(
    entries: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(&String, &serde_json::Value)> {
    let mut indexed: Vec<(u32, (&String, &serde_json::Value))> = Vec::new();
    let mut named = Vec::new();
    for entry in entries {
        match array_index(entry.0) {
            Some(index) => indexed.push((index, entry)),
            None => named.push(entry),
        }
    }
    indexed.sort_by_key(|(index, _)| *index);
    indexed
        .into_iter()
        .map(|(_, entry)| entry)
        .chain(named)
        .collect()
}

fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|index| *index != u32::MAX)
}

fn write_javascript_string(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            control if u32::from(control) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(control));
            }
            other => out.push(other),
        }
    }
    out.push('"');
}

/// A JSON number as JavaScript prints it: integers exactly while they are safe (|n| ≤ 2^53),
/// anything else as the double it parses to, in `Number.prototype.toString` form.
fn javascript_number(number: &serde_json::Number) -> String {
    const SAFE: u64 = 1 << 53;
    if let Some(unsigned) = number.as_u64().filter(|n| *n <= SAFE) {
        return unsigned.to_string();
    }
    if let Some(signed) = number.as_i64().filter(|n| n.unsigned_abs() <= SAFE) {
        return signed.to_string();
    }
    javascript_double(number.as_f64().unwrap_or(f64::NAN))
}

/// ECMAScript `Number::toString(10)`: the shortest round-trip digits, placed as plain decimals
/// when the decimal point falls within 21 places left of them or 6 places right, and in
/// `d.ddde±x` form otherwise.
fn javascript_double(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    // Rust's shortest form has the right number of digits, but where several digit strings of
    // that length round-trip it may not pick the one closest to the value, as ECMAScript
    // requires; formatting to exactly that many digits, which rounds correctly, does.
    let (shortest, _) = scientific_digits(&format!("{:e}", value.abs()));
    let precision = shortest.len().saturating_sub(1);
    let (digits, exponent) = scientific_digits(&format!("{:.precision$e}", value.abs()));
    let sign = if value < 0.0 { "-" } else { "" };
    format!("{sign}{}", place_decimal_point(&digits, exponent))
}

/// The significant digits and the decimal exponent of Rust's `{:e}` form (`1.2345e-7`).
fn scientific_digits(scientific: &str) -> (String, i64) {
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let digits = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse().unwrap_or(0))
}

/// `digits` (d₁d₂…dₖ, no leading zero) times 10^(`exponent` − k + 1), written as JavaScript does.
fn place_decimal_point(digits: &str, exponent: i64) -> String {
    let n_digits = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let point = exponent + 1;
    let count = |n: i64| usize::try_from(n).unwrap_or(0);
    if n_digits <= point && point <= 21 {
        format!("{digits}{}", "0".repeat(count(point - n_digits)))
    } else if 0 < point && point <= 21 {
        let (whole, fraction) = digits.split_at(count(point));
        format!("{whole}.{fraction}")
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat(count(-point)))
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{fraction}e{exponent_sign}{}", exponent.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        (dir, path)
    }

    // --- timestamps

    #[test]
    fn timestamps_of_known_instants() {
        assert_eq!(iso_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(iso_timestamp(at(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(iso_timestamp(at(951_868_799)), "2000-02-29T23:59:59Z");
        assert_eq!(iso_timestamp(at(951_868_800)), "2000-03-01T00:00:00Z");
        assert_eq!(iso_timestamp(at(1_709_210_096)), "2024-02-29T12:34:56Z");
        assert_eq!(iso_timestamp(at(4_107_542_400)), "2100-03-01T00:00:00Z");
        assert_eq!(iso_timestamp(at(253_402_300_799)), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn timestamps_drop_fractions_of_a_second() {
        let instant = at(1_709_210_096) + Duration::from_millis(789);
        assert_eq!(iso_timestamp(instant), "2024-02-29T12:34:56Z");
        let before_epoch = UNIX_EPOCH - Duration::from_millis(1);
        assert_eq!(iso_timestamp(before_epoch), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        let mut expected = (1970, 1, 1);
        for days in 0..146_097 {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            expected = next_day(expected);
        }
    }

    fn next_day((year, month, day): (i64, i64, i64)) -> (i64, i64, i64) {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let length = match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        match (day == length, month == 12) {
            (false, _) => (year, month, day + 1),
            (true, false) => (year, month + 1, 1),
            (true, true) => (year + 1, 1, 1),
        }
    }

    // --- values and keys

    #[test]
    fn every_line_terminator_becomes_backslash_n() {
        assert_eq!(
            escape_value("a\r\nb\rc\nd\u{2028}e\u{2029}f"),
            r"a\nb\nc\nd\ne\nf"
        );
        assert_eq!(escape_value("\n\r\r\n"), r"\n\n\n");
        assert_eq!(escape_value("plain: **x**"), "plain: **x**");
    }

    #[test]
    fn field_keys_are_one_label() {
        for key in [
            "Fire id",
            "Sensor ID",
            "Output path",
            "Cap value (s)",
            "a.b/c-d_e",
        ] {
            assert!(is_valid_field_key(key), "{key}");
        }
        for key in ["", "1st", " lead", "Key:", "a**b", "multi\nline", "ünï"] {
            assert!(!is_valid_field_key(key), "{key:?}");
        }
    }

    #[test]
    fn rows_refuse_bad_and_reserved_keys() {
        let bad = AuditRow::new("H", "E", vec![("Bad:key", String::new())]);
        assert!(matches!(bad, Err(LedgerError::InvalidFieldKey { .. })));
        for reserved in ["Event", "Timestamp"] {
            let row = AuditRow::new("H", "E", vec![(reserved, String::new())]);
            assert!(matches!(row, Err(LedgerError::ReservedFieldKey { .. })));
        }
        assert!(AuditRow::new("H", "E", vec![("Good key", "v".to_owned())]).is_ok());
    }

    #[test]
    fn the_sensor_constructors_use_valid_keys() {
        let fire = sample_fire();
        let rows = [
            AuditRow::sensor_fired(&fire),
            AuditRow::sensor_passed(&fire, 5, Some("tool-unavailable")),
            AuditRow::sensor_failed(&fire, Utf8Path::new("/p"), Utf8Path::new("/p/d.md"), 1),
            AuditRow::sensor_budget_override(&fire, 300, 301),
        ];
        for row in rows {
            for (key, _) in row.fields() {
                assert!(check_field_key(key).is_ok(), "{key}");
            }
        }
    }

    #[test]
    fn the_gate_row_has_the_reference_heading_and_keeps_field_order() {
        let row = AuditRow::stage_awaiting_approval(vec![
            ("Stage", "user-stories".to_owned()),
            ("Sensor State", "shape@a.md=passed".to_owned()),
        ])
        .unwrap();
        assert_eq!(
            format_block(&row, "2026-09-04T10:11:12Z"),
            "\n## Stage Awaiting Approval\n**Timestamp**: 2026-09-04T10:11:12Z\n**Event**: STAGE_AWAITING_APPROVAL\n**Stage**: user-stories\n**Sensor State**: shape@a.md=passed\n\n---\n"
        );
        assert!(AuditRow::stage_awaiting_approval(vec![("Event", String::new())]).is_err());
    }

    // --- paths

    #[test]
    fn path_fields_are_project_relative() {
        let project = Utf8Path::new("/work/proj");
        let cases = [
            ("/work/proj/aidlc/x.md", "aidlc/x.md"),
            ("/work/proj", "."),
            ("/work/proj/", ""),
            ("/work/project/x.md", "/work/project/x.md"),
            ("/elsewhere/x.md", "/elsewhere/x.md"),
            ("relative/x.md", "relative/x.md"),
        ];
        for (path, expected) in cases {
            assert_eq!(relative_path_field(project, path), expected, "{path}");
        }
        assert_eq!(
            relative_path_field(Utf8Path::new("/work/proj/"), "/work/proj/a"),
            "a"
        );
    }

    #[test]
    fn windows_paths_compare_drive_letters_case_insensitively() {
        let project = Utf8Path::new(r"C:\Users\Me\Proj");
        assert_eq!(
            relative_path_field(project, r"c:\users\me\proj\aidlc\x.md"),
            "aidlc/x.md"
        );
        assert_eq!(relative_path_field(project, r"C:\Users\Me\Proj"), ".");
        assert_eq!(
            relative_path_field(project, r"D:\Other\x.md"),
            "D:/Other/x.md"
        );
    }

    // --- golden blocks

    fn sample_fire() -> FireIdentity {
        FireIdentity::new(
            Utf8Path::new("/work/proj"),
            "a65d19af",
            "claim-sources",
            "intent-capture",
            "/work/proj/aidlc/spaces/default/intents/260904-x/ideation/intent-capture/intent-statement.md",
        )
    }

    #[test]
    fn a_fired_and_failed_pair_is_byte_exact() {
        let fire = sample_fire();
        let detail = Utf8Path::new(
            "/work/proj/aidlc/spaces/default/intents/260904-x/.aidlc-engine/sensors/intent-capture/claim-sources-a65d19af.md",
        );
        let fired = format_block(&AuditRow::sensor_fired(&fire), "2026-09-04T10:11:12Z");
        let failed = format_block(
            &AuditRow::sensor_failed(&fire, Utf8Path::new("/work/proj"), detail, 3),
            "2026-09-04T10:11:13Z",
        );
        let output =
            "aidlc/spaces/default/intents/260904-x/ideation/intent-capture/intent-statement.md";
        assert_eq!(
            fired,
            format!(
                "\n## Sensor Fired\n**Timestamp**: 2026-09-04T10:11:12Z\n**Event**: SENSOR_FIRED\n\
                 **Fire id**: a65d19af\n**Sensor ID**: claim-sources\n**Stage slug**: intent-capture\n\
                 **Output path**: {output}\n\n---\n"
            )
        );
        assert_eq!(
            failed,
            format!(
                "\n## Sensor Failed\n**Timestamp**: 2026-09-04T10:11:13Z\n**Event**: SENSOR_FAILED\n\
                 **Fire id**: a65d19af\n**Sensor ID**: claim-sources\n**Stage slug**: intent-capture\n\
                 **Output path**: {output}\n\
                 **Detail path**: aidlc/spaces/default/intents/260904-x/.aidlc-engine/sensors/intent-capture/claim-sources-a65d19af.md\n\
                 **Findings count**: 3\n\n---\n"
            )
        );
    }

    #[test]
    fn passed_and_budget_rows_keep_the_reference_field_order() {
        let fire = sample_fire();
        let noted = format_block(
            &AuditRow::sensor_passed(&fire, 42, Some("script-error: exit-2")),
            "T",
        );
        assert!(noted.ends_with("**Duration ms**: 42\n**Note**: script-error: exit-2\n\n---\n"));
        let plain = format_block(&AuditRow::sensor_passed(&fire, 7, Some("")), "T");
        assert!(plain.ends_with("**Duration ms**: 7\n\n---\n"));
        let budget = format_block(&AuditRow::sensor_budget_override(&fire, 300, 301), "T");
        assert!(budget.starts_with(
            "\n## Sensor Budget Override\n**Timestamp**: T\n**Event**: SENSOR_BUDGET_OVERRIDE\n"
        ));
        assert!(budget.ends_with(
            "**Cap layer**: registry\n**Cap value**: 300\n**Observed value**: 301\n\n---\n"
        ));
    }

    #[test]
    fn values_are_escaped_in_blocks() {
        let row =
            AuditRow::new("H", "E", vec![("Note", "a\nb\r\n**Event**: X".to_owned())]).unwrap();
        assert_eq!(
            format_block(&row, "T"),
            "\n## H\n**Timestamp**: T\n**Event**: E\n**Note**: a\\nb\\n**Event**: X\n\n---\n"
        );
    }

    #[test]
    fn the_detail_file_is_byte_exact() {
        let json = serde_json::json!({
            "pass": false,
            "findings_count": 2,
            "findings": [{"line": 3, "message": "no source for \"x\""}, {}],
            "empty": [],
        });
        let body = detail_file_body(
            "claim-sources",
            "intent-capture",
            "2026-09-04T10:11:13Z",
            "a65d19af",
            "/work/proj/aidlc/x.md",
            &json,
        );
        let expected = "# claim-sources finding \u{2014} intent-capture\n\n\
            **Timestamp**: 2026-09-04T10:11:13Z\n**Fire id**: a65d19af\n\
            **Output path**: /work/proj/aidlc/x.md\n**Pass**: false\n\n## Findings\n\n```json\n\
            {\n  \"pass\": false,\n  \"findings_count\": 2,\n  \"findings\": [\n    {\n      \"line\": 3,\n      \
            \"message\": \"no source for \\\"x\\\"\"\n    },\n    {}\n  ],\n  \"empty\": []\n}\n```\n";
        assert_eq!(body, expected);
    }

    #[test]
    fn the_detail_path_is_under_the_engine_folder() {
        assert_eq!(
            detail_file_path(Utf8Path::new("/r"), "intent-capture", "linter", "0badf00d"),
            "/r/.aidlc-engine/sensors/intent-capture/linter-0badf00d.md"
        );
    }

    #[test]
    fn detail_files_are_written_through_a_temporary_file_of_ours() {
        let (_dir, root) = temp_project();
        let path = detail_file_path(&root, "s", "linter", "00000001");
        write_detail_file(&root, &path, "one").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
        let folder = path.parent().unwrap();
        assert_eq!(std::fs::read_dir(folder).unwrap().count(), 1);
        // Someone else's temporary (the reference writes `<path>.tmp`) is neither used nor
        // removed.
        std::fs::write(format!("{path}.tmp"), "foreign").unwrap();
        write_detail_file(&root, &path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            std::fs::read_to_string(format!("{path}.tmp")).unwrap(),
            "foreign"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dead_writers_detail_temporary_is_swept() {
        let (_dir, root) = temp_project();
        let path = detail_file_path(&root, "s", "linter", "00000002");
        let folder = path.parent().unwrap();
        std::fs::create_dir_all(folder).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let leftover = folder.join(format!(".linter-00000001.md.aidlc-{dead}-0123456789ab.tmp"));
        std::fs::write(&leftover, "half").unwrap();
        write_detail_file(&root, &path, "body").unwrap();
        assert!(!leftover.exists());
        assert_eq!(std::fs::read_dir(folder).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_detail_folder_that_links_outside_is_refused() {
        let (_dir, root) = temp_project();
        let (_outside_dir, outside) = temp_project();
        std::fs::create_dir_all(root.join(".aidlc-engine")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".aidlc-engine/sensors")).unwrap();
        let path = detail_file_path(&root, "s", "linter", "00000003");
        let error = write_detail_file(&root, &path, "body").unwrap_err();
        assert!(
            error.to_string().contains("escapes the project root"),
            "{error}"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    // --- JSON as JavaScript prints it (expected strings printed by node)

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        let cases = [
            ("1.0", "1"),
            ("1.5", "1.5"),
            ("-0.0", "0"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("1e-7", "1e-7"),
            ("1e-6", "0.000001"),
            ("0.000001234", "0.000001234"),
            ("1.5e300", "1.5e+300"),
            ("-2.5e-10", "-2.5e-10"),
            ("12345678901234567890", "12345678901234567000"),
            ("9007199254740993", "9007199254740992"),
            ("-9007199254740992", "-9007199254740992"),
            ("0.1", "0.1"),
            ("100", "100"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("123e-20", "1.23e-18"),
        ];
        for (json, expected) in cases {
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(javascript_pretty_json(&value), expected, "{json}");
        }
    }

    #[test]
    fn doubles_pick_the_closest_of_the_shortest_digit_strings() {
        // Rust's `{:e}` prints ...313 and ...13 for these; V8 prints the closer ...312 and ...12.
        for text in [
            "29258736354892.312",
            "272499007847918.12",
            "778118473494118.2",
        ] {
            assert_eq!(javascript_double(text.parse().unwrap()), text);
        }
    }

    #[test]
    fn objects_print_in_javascript_key_order() {
        let value: serde_json::Value = serde_json::from_str(
            r#"{"b":1,"2":[],"1":{},"a":[1,{"x":"é\u0001\u001f\u007f\u2028\""}],"01":2,"4294967295":3,"4294967294":4}"#,
        )
        .unwrap();
        let expected = "{\n  \"1\": {},\n  \"2\": [],\n  \"4294967294\": 4,\n  \"b\": 1,\n  \"a\": [\n    1,\n    {\n      \
            \"x\": \"é\\u0001\\u001f\u{7f}\u{2028}\\\"\"\n    }\n  ],\n  \"01\": 2,\n  \"4294967295\": 3\n}";
        assert_eq!(javascript_pretty_json(&value), expected);
    }

    // --- appending and reading

    #[test]
    fn the_header_is_written_once() {
        let (_dir, project) = temp_project();
        let shard = project.join("aidlc/spaces/default/intents/audit/host-abc.md");
        let fire = sample_fire();
        append_row(&project, &shard, &AuditRow::sensor_fired(&fire), at(0)).unwrap();
        append_row(
            &project,
            &shard,
            &AuditRow::sensor_passed(&fire, 1, None),
            at(1),
        )
        .unwrap();
        let text = std::fs::read_to_string(&shard).unwrap();
        assert!(text.starts_with(
            "# AI-DLC Audit Log\n\n## Sensor Fired\n**Timestamp**: 1970-01-01T00:00:00Z\n"
        ));
        assert_eq!(text.matches("# AI-DLC Audit Log").count(), 1);
        assert_eq!(parse_blocks(&text).len(), 2);
    }

    #[test]
    fn an_empty_existing_shard_gets_the_header() {
        let (_dir, project) = temp_project();
        let shard = project.join("audit/x.md");
        std::fs::create_dir_all(shard.parent().unwrap()).unwrap();
        std::fs::write(&shard, "").unwrap();
        append_row(
            &project,
            &shard,
            &AuditRow::sensor_fired(&sample_fire()),
            at(0),
        )
        .unwrap();
        assert!(
            std::fs::read_to_string(&shard)
                .unwrap()
                .starts_with(AUDIT_LOG_HEADER)
        );
    }

    #[test]
    fn shards_outside_the_project_are_refused() {
        let (_dir, project) = temp_project();
        let row = AuditRow::sensor_fired(&sample_fire());
        for shard in [
            Utf8PathBuf::from("/tmp/elsewhere.md"),
            project.join("../x.md"),
            project.clone(),
        ] {
            let result = append_row(&project, &shard, &row, at(0));
            assert!(
                matches!(result, Err(LedgerError::ShardOutsideProject { .. })),
                "{shard}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_shard_is_refused() {
        let (_dir, project) = temp_project();
        let target = project.join("target.md");
        std::fs::write(&target, "").unwrap();
        let shard = project.join("audit/link.md");
        std::fs::create_dir_all(shard.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&target, &shard).unwrap();
        let result = append_row(
            &project,
            &shard,
            &AuditRow::sensor_fired(&sample_fire()),
            at(0),
        );
        assert!(matches!(result, Err(LedgerError::Io { .. })));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    }

    #[cfg(unix)]
    #[test]
    fn an_audit_folder_that_links_outside_is_refused_before_any_row() {
        let (_dir, project) = temp_project();
        let (_outside_dir, outside) = temp_project();
        let record = project.join("aidlc/spaces/default/intents/r");
        std::fs::create_dir_all(&record).unwrap();
        std::os::unix::fs::symlink(&outside, record.join("audit")).unwrap();
        let result = append_row(
            &project,
            &record.join("audit/host-abc.md"),
            &AuditRow::sensor_fired(&sample_fire()),
            at(0),
        );
        assert!(
            matches!(
                result,
                Err(LedgerError::Folder(WriteFolderError::Escapes { .. }))
            ),
            "{result:?}"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    // --- torn blocks

    /// Writes `budget` bytes of what it is given to the real shard, then fails as a full disk
    /// does; the cut goes to the real file (or fails, when `cut_fails`).
    struct FailsPartWay {
        file: std::fs::File,
        budget: usize,
        cut_fails: bool,
    }

    impl std::io::Write for FailsPartWay {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.budget == 0 {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            let n = bytes.len().min(self.budget);
            self.budget -= n;
            self.file.write(&bytes[..n])
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.file.flush()
        }
    }

    impl ShardWriter for FailsPartWay {
        fn truncate_to(&mut self, length: u64) -> std::io::Result<()> {
            if self.cut_fails {
                return Err(std::io::Error::from_raw_os_error(libc::EIO));
            }
            self.file.set_len(length)
        }
    }

    fn shard_with_one_block(project: &Utf8Path) -> Utf8PathBuf {
        let shard = project.join("audit/host-abc.md");
        append_row(
            project,
            &shard,
            &AuditRow::sensor_fired(&sample_fire()),
            at(0),
        )
        .unwrap();
        shard
    }

    fn failing_append(shard: &Utf8Path, budget: usize, cut_fails: bool) -> std::io::Error {
        let file = open_for_append(shard).unwrap();
        let length_before = file.metadata().unwrap().len();
        let block = format_block(&AuditRow::sensor_passed(&sample_fire(), 5, None), "T");
        let mut shard = FailsPartWay {
            file,
            budget,
            cut_fails,
        };
        append_or_roll_back(&mut shard, length_before, block.as_bytes()).unwrap_err()
    }

    #[test]
    fn an_append_that_fails_part_way_is_cut_back() {
        let (_dir, project) = temp_project();
        let shard = shard_with_one_block(&project);
        let before = std::fs::read(&shard).unwrap();
        for budget in [0, 1, 17, 60] {
            let error = failing_append(&shard, budget, false);
            assert_eq!(error.raw_os_error(), Some(libc::ENOSPC), "{budget}");
            assert_eq!(std::fs::read(&shard).unwrap(), before, "{budget}");
        }
        let fire = sample_fire();
        append_row(
            &project,
            &shard,
            &AuditRow::sensor_passed(&fire, 5, None),
            at(1),
        )
        .unwrap();
        let ledger = parse_ledger(&std::fs::read_to_string(&shard).unwrap());
        assert_eq!(ledger.torn, []);
        assert_eq!(
            pair_fires(&ledger.blocks)[0].terminal.unwrap().event,
            SENSOR_PASSED
        );
    }

    #[test]
    fn a_torn_tail_left_by_a_failed_cut_is_closed_by_the_next_append() {
        let (_dir, project) = temp_project();
        let shard = shard_with_one_block(&project);
        let before = std::fs::read_to_string(&shard).unwrap();
        let error = failing_append(&shard, 40, true);
        assert!(
            error
                .to_string()
                .contains("the next append closes it as a torn block"),
            "{error}"
        );
        let torn = std::fs::read_to_string(&shard).unwrap();
        assert_eq!(torn.len(), before.len() + 40);

        let fire = sample_fire();
        append_row(
            &project,
            &shard,
            &AuditRow::sensor_passed(&fire, 7, None),
            at(2),
        )
        .unwrap();
        let text = std::fs::read_to_string(&shard).unwrap();
        let passed = format_block(
            &AuditRow::sensor_passed(&fire, 7, None),
            "1970-01-01T00:00:02Z",
        );
        assert_eq!(
            text,
            format!("{torn}\n{TORN_BLOCK_CLOSING_LINE}\n\n---\n{passed}")
        );
        let ledger = parse_ledger(&text);
        assert_eq!(ledger.blocks.len(), 2);
        let pairs = pair_fires(&ledger.blocks);
        assert_eq!(pairs[0].terminal.unwrap().field("Duration ms"), Some("7"));
        assert_eq!(ledger.torn.len(), 1);
        assert_eq!(ledger.torn[0].kind, TornKind::ClosedByLaterAppend);
        // The fragment starts two lines after the separator that ends the whole block.
        assert_eq!(ledger.torn[0].line, before.lines().count() + 2);
        assert_eq!(
            ledger.torn[0].to_string(),
            "skipped a torn audit block at line 13: an interrupted write cut it short and a later append closed it: \"## Sensor Passed\\n**Timestamp**: T\\n**Eve\""
        );
    }

    #[test]
    fn the_appender_closes_exactly_what_is_torn() {
        let block = "\n## H\n**Timestamp**: T\n**Event**: E\n\n---\n";
        let closing = format!("\n{TORN_BLOCK_CLOSING_LINE}\n\n---\n");
        let cases: [(&str, String); 9] = [
            ("", format!("{AUDIT_LOG_HEADER}{block}")),
            ("# AI-DLC Audit Log\n", block.to_owned()),
            ("# AI-DLC Audit Log\r\n", block.to_owned()),
            ("x\n\n---\n", block.to_owned()),
            ("x\r\n\r\n---\r\n\n", block.to_owned()),
            ("x\n\n---", format!("\n{block}")),
            ("x\n\n--", format!("{closing}{block}")),
            (
                "# AI-DLC Audit Log\n\n## Sensor Fired\n**T",
                format!("{closing}{block}"),
            ),
            ("# AI-DLC Au", format!("{closing}{block}")),
        ];
        for (shard, expected) in cases {
            let length = u64::try_from(shard.len()).unwrap();
            assert_eq!(
                bytes_to_append(shard.as_bytes(), length, block),
                expected,
                "{shard:?}"
            );
        }
        // Only the end of a long shard is read: a separator there is a clean end.
        let window = b"...\n---\n";
        assert_eq!(bytes_to_append(window, 1_000_000, block), block);
        let blank_window = [b'\n'; 64];
        assert_eq!(
            bytes_to_append(&blank_window, 1_000_000, block),
            format!("{closing}{block}")
        );
    }

    #[test]
    fn the_reader_skips_torn_pieces_and_says_where() {
        let fire = sample_fire();
        let fired = format_block(&AuditRow::sensor_fired(&fire), "T1");
        let passed = format_block(&AuditRow::sensor_passed(&fire, 5, None), "T2");
        // A torn passed row with its Note cut off must not read as an unnoted pass.
        let torn_passed = &passed[..passed.find("**Duration ms**").unwrap()];

        let unterminated = format!("{AUDIT_LOG_HEADER}{fired}{torn_passed}");
        let ledger = parse_ledger(&unterminated);
        assert_eq!(ledger.blocks.len(), 1);
        assert_eq!(pair_fires(&ledger.blocks)[0].terminal, None);
        assert_eq!(ledger.torn.len(), 1);
        assert_eq!(ledger.torn[0].kind, TornKind::Unterminated);
        assert_eq!(ledger.torn[0].line, 13);

        // A writer that does not close torn tails glued a whole block onto the fragment.
        let glued = format!("{AUDIT_LOG_HEADER}{fired}{torn_passed}{passed}");
        let ledger = parse_ledger(&glued);
        assert_eq!(ledger.blocks.len(), 2);
        let terminal = pair_fires(&ledger.blocks)[0].terminal.unwrap();
        assert_eq!(terminal.timestamp.as_deref(), Some("T2"));
        assert_eq!(terminal.heading, "Sensor Passed");
        assert_eq!(ledger.torn.len(), 1);
        assert_eq!(ledger.torn[0].kind, TornKind::FollowedByGluedBlock);
        assert_eq!(ledger.torn[0].line, 13);

        // A header torn before the first block was glued onto it.
        let ledger = parse_ledger(&format!("# AI-DLC Au{fired}"));
        assert_eq!(ledger.blocks.len(), 1);
        assert_eq!(ledger.torn[0].excerpt, "# AI-DLC Au");

        // Whole shards, notes and trailing blank lines warn about nothing.
        let note = "\n## Note\n**Timestamp**: T3\nfree text\n\n---\n";
        let whole = format!("{AUDIT_LOG_HEADER}{fired}{note}{passed}\n\n");
        let ledger = parse_ledger(&whole);
        assert_eq!((ledger.blocks.len(), ledger.torn.len()), (2, 0));
        assert_eq!(parse_ledger(AUDIT_LOG_HEADER), ParsedLedger::default());
        let two_shards = format!("{AUDIT_LOG_HEADER}{fired}\n{AUDIT_LOG_HEADER}{passed}");
        let ledger = parse_ledger(&two_shards);
        assert_eq!((ledger.blocks.len(), ledger.torn.len()), (2, 0));
        assert_eq!(parse_ledger(""), ParsedLedger::default());
    }

    #[test]
    fn a_torn_excerpt_is_one_short_line() {
        let text = format!(
            "{}\n## Sensor Fired\n**Fire id**: \u{0}\u{0}{}",
            AUDIT_LOG_HEADER,
            "x".repeat(100)
        );
        let torn = &parse_ledger(&text).torn[0];
        assert!(
            torn.excerpt
                .starts_with("## Sensor Fired\\n**Fire id**: \\0\\0x"),
            "{}",
            torn.excerpt
        );
        assert!(torn.excerpt.ends_with('…'));
        assert!(!torn.to_string().contains('\n'));
    }

    #[test]
    fn a_terminal_row_that_cannot_be_written_names_its_fire_and_shard() {
        let (_dir, project) = temp_project();
        let shard = project.join("audit/host-abc.md");
        std::fs::create_dir_all(&shard).unwrap();
        let row = AuditRow::sensor_passed(&sample_fire(), 5, None);
        let error = append_terminal_row(&project, &shard, &row, at(0)).unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "fire a65d19af is incomplete: its terminal row could not be written to the audit shard {shard}: "
            )),
            "{message}"
        );
    }

    #[test]
    fn concurrent_appenders_never_interleave() {
        let (_dir, project) = temp_project();
        let shard = project.join("aidlc/spaces/default/intents/audit/host-abc.md");
        std::thread::scope(|scope| {
            for thread in 0..10 {
                let (project, shard) = (&project, &shard);
                scope.spawn(move || {
                    for row in 0..20 {
                        let fire = FireIdentity::new(
                            project,
                            &format!("{thread:04x}{row:04x}"),
                            "linter",
                            "code-generation",
                            &format!("{project}/src/file-{thread}-{row}.ts"),
                        );
                        let row = AuditRow::sensor_fired(&fire);
                        append_row(project, shard, &row, SystemTime::now()).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&shard).unwrap();
        assert_eq!(text.matches(AUDIT_LOG_HEADER).count(), 1);
        let blocks = parse_blocks(&text);
        assert_eq!(blocks.len(), 200);
        for block in &blocks {
            assert_eq!(block.heading, "Sensor Fired");
            assert_eq!(block.fields.len(), 4, "{block:?}");
            let id = block.field("Fire id").unwrap();
            let (thread, row) = (&id[..4], &id[4..]);
            let thread = usize::from_str_radix(thread, 16).unwrap();
            let row = usize::from_str_radix(row, 16).unwrap();
            assert_eq!(
                block.field("Output path"),
                Some(format!("src/file-{thread}-{row}.ts").as_str())
            );
        }
        let mut ids: Vec<&str> = blocks.iter().filter_map(|b| b.field("Fire id")).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 200);
    }

    #[test]
    fn blocks_parse_back_with_crlf_and_dashed_fields() {
        let text = "# AI-DLC Audit Log\r\n\r\n## Sensor Fired\r\n**Timestamp**: T1\r\n**Event**: SENSOR_FIRED\r\n\
                    - **Fire id**: 0000abcd\r\n**Odd**:   spaced value  \r\n\r\n---\r\n\r\ntorn tail without an event";
        let blocks = parse_blocks(text);
        assert_eq!(
            blocks,
            [AuditBlock {
                heading: "Sensor Fired".to_owned(),
                timestamp: Some("T1".to_owned()),
                event: SENSOR_FIRED.to_owned(),
                fields: vec![
                    ("Fire id".to_owned(), "0000abcd".to_owned()),
                    ("Odd".to_owned(), "spaced value".to_owned()),
                ],
            }]
        );
    }

    #[test]
    fn fires_pair_by_id_not_by_position() {
        let project = Utf8Path::new("/p");
        let fire = |id: &str| FireIdentity::new(project, id, "linter", "s", "/p/x.ts");
        let rows = [
            format_block(&AuditRow::sensor_passed(&fire("bbbbbbbb"), 5, None), "T2"),
            format_block(&AuditRow::sensor_fired(&fire("aaaaaaaa")), "T1"),
            format_block(&AuditRow::sensor_fired(&fire("bbbbbbbb")), "T1"),
            format_block(&AuditRow::sensor_fired(&fire("cccccccc")), "T1"),
            format_block(
                &AuditRow::sensor_budget_override(&fire("aaaaaaaa"), 1, 2),
                "T3",
            ),
        ];
        let text = format!("{AUDIT_LOG_HEADER}{}", rows.concat());
        let blocks = parse_blocks(&text);
        let pairs = pair_fires(&blocks);
        let summary: Vec<(&str, Option<&str>)> = pairs
            .iter()
            .map(|pair| {
                (
                    pair.fired.field("Fire id").unwrap(),
                    pair.terminal.map(|t| t.event.as_str()),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("aaaaaaaa", Some(SENSOR_BUDGET_OVERRIDE)),
                ("bbbbbbbb", Some(SENSOR_PASSED)),
                ("cccccccc", None),
            ]
        );
    }

    #[test]
    fn fire_ids_are_eight_lowercase_hex_characters() {
        let id = new_fire_id();
        assert_eq!(id.len(), 8);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }
}
