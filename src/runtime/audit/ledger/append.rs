//! The shard appender: one block, or one batch of blocks, per append, under the audit lock,
//! with the header on a new shard and a torn tail closed before the blocks (D25 states the
//! invariants: one write under the lock, a torn tail closed, no folder outside the project).
//! Beyond D25:
//! - a process-wide mutex keeps this process's threads apart too, and the lock is held only for
//!   the append itself (a batch saves the lock's round trips, never holds it across a worker);
//! - a write that fails part-way is cut back to the shard's length before it, so an append
//!   leaves the shard whole or as it was; nothing but a regular file is appended to.
//!
//! Must not: read blocks back (that is `read.rs`), or hold the lock for anything but the append.

use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use camino::Utf8Path;

use super::block::{
    AUDIT_LOG_HEADER, AuditRow, BLOCK_SEPARATOR, TORN_BLOCK_CLOSING_LINE, format_block,
};
use super::error::LedgerError;
use super::event::field;
use crate::leaves::audit_lock::{self, LockError};
use crate::leaves::timestamp::iso_timestamp;
use crate::leaves::write_folder::{self, WriteFolderError};

/// Appends in this process; the audit lock is re-entrant per process, so it does not keep two
/// threads of one process apart.
static APPEND_MUTEX: Mutex<()> = Mutex::new(());

/// How much of a shard's end the appender reads to see whether it ends cleanly.
const TAIL_WINDOW: u64 = 4096;

/// Append `row`, stamped with `now`, to the shard at `shard_path`, which must lie under
/// `project_dir` (compared as given, without `..`), as the module's invariants say. The audit
/// lock is awaited about 5 s.
pub fn append_row(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    row: &AuditRow,
    now: SystemTime,
) -> Result<(), LedgerError> {
    append_rows(project_dir, shard_path, &[(row.clone(), now)])
}

/// [`append_row`] for several rows at once: one lock round trip and one write for all of them,
/// in the order given (`aidlc gate check` writes every fire's `SENSOR_FIRED` this way before
/// any worker starts). All are written or none.
pub fn append_rows(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    rows: &[(AuditRow, SystemTime)],
) -> Result<(), LedgerError> {
    append_rows_with(project_dir, shard_path, rows, audit_lock::acquire)
}

/// [`append_rows`] for the terminal rows of fires whose `SENSOR_FIRED` is written (one, or
/// several at once): the lock is awaited for as long as its stale rule lets another holder keep
/// it ([`audit_lock::acquire_until_stale`]), because giving up loses the fires' outcomes. An
/// error names every fire id and the shard, whose `SENSOR_FIRED` rows then stay without their
/// terminal rows.
pub fn append_terminal_rows(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    rows: &[(AuditRow, SystemTime)],
) -> Result<(), LedgerError> {
    append_rows_with(
        project_dir,
        shard_path,
        rows,
        audit_lock::acquire_until_stale,
    )
    .map_err(|source| LedgerError::TerminalRowNotWritten {
        fire_id: rows
            .iter()
            .map(|(row, _)| fire_id_of(row))
            .collect::<Vec<_>>()
            .join(", "),
        shard_path: shard_path.to_owned(),
        source: Box::new(source),
    })
}

fn fire_id_of(row: &AuditRow) -> String {
    row.fields()
        .iter()
        .find(|(key, _)| *key == field::FIRE_ID)
        .map_or_else(|| "(no fire id)".to_owned(), |(_, id)| id.clone())
}

fn append_rows_with(
    project_dir: &Utf8Path,
    shard_path: &Utf8Path,
    rows: &[(AuditRow, SystemTime)],
    take_lock: fn(&Utf8Path) -> Result<audit_lock::AuditLockGuard, LockError>,
) -> Result<(), LedgerError> {
    if rows.is_empty() {
        return Ok(());
    }
    check_shard_inside_project(project_dir, shard_path)?;
    let folder = shard_path.parent().unwrap_or(project_dir);
    write_folder::create_write_folder(project_dir, folder)?;
    let blocks: String = rows
        .iter()
        .map(|(row, now)| format_block(row, &iso_timestamp(*now)))
        .collect();
    let _in_process = APPEND_MUTEX.lock().unwrap_or_else(PoisonError::into_inner);
    let _lock = take_lock(project_dir)?;
    append_block(shard_path, &blocks).map_err(|source| LedgerError::Io {
        path: shard_path.to_owned(),
        source,
    })
}

/// Refuse the write when any of the folders a fire writes into (the shard's folder, the
/// install's detail folder, the detail file's folder) escapes the project: the fire's
/// pre-flight, before `SENSOR_FIRED`, so that a refused fire writes nothing.
pub fn check_fire_folders(
    project_dir: &Utf8Path,
    detail_dir: &Utf8Path,
    shard_path: &Utf8Path,
    detail_path: &Utf8Path,
) -> Result<(), WriteFolderError> {
    let folders = [shard_path.parent(), Some(detail_dir), detail_path.parent()];
    for folder in folders.into_iter().flatten() {
        write_folder::check_write_folder(project_dir, folder)?;
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
#[expect(
    clippy::disallowed_methods,
    reason = "the ledger's append: its shard's folder was resolved inside the project by write_folder (D30), and nothing but a regular file is appended to"
)]
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

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;
    use crate::runtime::audit::ledger::SENSOR_PASSED;
    use crate::runtime::audit::ledger::test_support::{at, pair_fires, sample_fire, temp_project};
    use crate::runtime::audit::ledger::{FireIdentity, TornKind, parse_blocks, parse_ledger};
    use camino::Utf8PathBuf;

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
    fn a_batch_is_the_same_bytes_as_its_rows_appended_one_by_one() {
        let fire = sample_fire();
        let rows = [
            (AuditRow::sensor_fired(&fire), at(0)),
            (AuditRow::sensor_passed(&fire, 1, None), at(1)),
        ];
        let (_one_dir, one_by_one) = temp_project();
        let one_shard = one_by_one.join("audit/x.md");
        for (row, now) in &rows {
            append_row(&one_by_one, &one_shard, row, *now).unwrap();
        }
        let (_batch_dir, batched) = temp_project();
        let batch_shard = batched.join("audit/x.md");
        append_rows(&batched, &batch_shard, &rows).unwrap();
        assert_eq!(
            std::fs::read_to_string(&batch_shard).unwrap(),
            std::fs::read_to_string(&one_shard).unwrap()
        );
        append_terminal_rows(&batched, &batch_shard, &[]).unwrap();
        append_rows(&batched, &batched.join("audit/untouched.md"), &[]).unwrap();
        assert!(
            !batched.join("audit/untouched.md").exists(),
            "an empty batch writes nothing"
        );
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
    fn a_terminal_row_that_cannot_be_written_names_its_fire_and_shard() {
        let (_dir, project) = temp_project();
        let shard = project.join("audit/host-abc.md");
        std::fs::create_dir_all(&shard).unwrap();
        let row = AuditRow::sensor_passed(&sample_fire(), 5, None);
        let error = append_terminal_rows(&project, &shard, &[(row, at(0))]).unwrap_err();
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
}
