//! The few file-system helpers with a domain-free meaning, and the file-system layer every read
//! of a project's or a plugin's file goes through.
//!
//! Invariant: every file a command reads from a project or a plugin is read by [`read_input`]
//! (or [`read_bounded`] with a limit of its own): a regular file, opened non-blocking, refused
//! past its limit by its `fstat` size before a byte is read. `clippy.toml` makes a direct
//! `std::fs::read`, `read_to_string` or `File::open` elsewhere an error.
//!
//! Invariant: every temporary file or folder this crate creates beside a file it is about to
//! publish is named `.<file>.aidlc-<pid>-<12 lowercase hex>.tmp` ([`temporary_name`]), so that a
//! later run can tell its own leftovers from anything else, and a live writer's from a dead
//! one's: [`sweep_stale_temporaries`] removes only names of exactly that pattern whose process is
//! gone or that are older than [`STALE_TEMPORARY_AGE`].

#![expect(
    clippy::disallowed_methods,
    reason = "the file-system layer itself: callers name the path (a ProjectPath through fs_util::contained, or a file the user named)"
)]

pub mod contained;

use std::io::Write;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};

/// A temporary of ours older than this is stale even when its process id is alive again (a
/// process id is reused eventually; no write of ours takes an hour).
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(60 * 60);
/// The mark between the target's name and the writer's process id.
const TEMPORARY_MARK: &str = ".aidlc-";
const TEMPORARY_SUFFIX: &str = ".tmp";
/// Random characters at the end of a temporary's name: distinct writers of one process never
/// pick the same name, and the exact length is part of the pattern.
const TEMPORARY_RANDOM_CHARS: usize = 12;
/// Names taken by someone else are retried this many times with new random characters.
const TEMPORARY_CREATE_ATTEMPTS: u32 = 8;

/// What `path` is when it is not a regular file, with its article (`a FIFO (named pipe)`,
/// `a directory`, …); `None` for a regular file. Reads metadata only, following links, and never
/// opens the file, so a FIFO nobody writes cannot block the caller. A path whose metadata cannot
/// be read is `not a readable file`: nothing that cannot be inspected counts as regular.
pub fn not_regular_file_kind(path: &Utf8Path) -> Option<&'static str> {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Some("not a readable file");
    };
    let file_type = metadata.file_type();
    if file_type.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::fs::FileType;
        use std::os::unix::fs::FileTypeExt as _;
        let special_kinds = [
            (
                FileType::is_fifo as fn(&FileType) -> bool,
                "a FIFO (named pipe)",
            ),
            (FileType::is_socket, "a socket"),
            (FileType::is_char_device, "a character device"),
            (FileType::is_block_device, "a block device"),
        ];
        if let Some((_, kind)) = special_kinds.iter().find(|(is, _)| is(&file_type)) {
            return Some(kind);
        }
    }
    if file_type.is_dir() {
        Some("a directory")
    } else {
        Some("a special file")
    }
}

/// Replace `path` with `bytes` atomically: write a temporary file in the same folder, flush it
/// to disk, then rename it over the target. A crash or Ctrl-C leaves either the old file or the
/// new one, never a half-written one; a `kill -9` may leave the temporary file, which the next
/// write into the same folder removes.
pub fn write_atomic(path: &Utf8Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_atomically(path, bytes, Flush::Yes)
}

/// `target` as a path relative to `folder` (`services/shop`, `../shop`, empty when they are the
/// same folder), both resolved first where they exist; `target` as it is when either is relative
/// or they share no root (another drive).
pub fn path_from(folder: &Utf8Path, target: &Utf8Path) -> Utf8PathBuf {
    let resolve = |path: &Utf8Path| path.canonicalize_utf8().unwrap_or_else(|_| path.to_owned());
    let (folder, resolved_target) = (resolve(folder), resolve(target));
    if folder.is_relative() || resolved_target.is_relative() {
        return target.to_owned();
    }
    let from: Vec<_> = folder.components().collect();
    let to: Vec<_> = resolved_target.components().collect();
    let shared = from
        .iter()
        .zip(&to)
        .take_while(|(left, right)| left == right)
        .count();
    if shared == 0 {
        return target.to_owned();
    }
    let mut path = Utf8PathBuf::new();
    for _ in shared..from.len() {
        path.push("..");
    }
    for component in &to[shared..] {
        path.push(component.as_str());
    }
    path
}

/// How many links [`write_output_file`] follows before it gives up (as the kernel's `ELOOP`).
const MAX_LINKS_FOLLOWED: usize = 40;

/// Write `bytes` to an output file a user named (`--report FORMAT=PATH`), whatever `path` is:
///
/// - a regular file, or nothing yet: replaced (or created) atomically, as [`write_atomic`];
/// - a symbolic link: followed, and what it leads to is written by these same rules (a regular
///   file at the end of the links is replaced there, and the links stay links);
/// - a character device, a FIFO, a socket, or a descriptor of this process (`/dev/stdout`,
///   `/dev/fd/N`, `>(…)`, anything under `/proc`): opened and written, never replaced, so that
///   `/dev/null` stays a device and a FIFO's reader gets the bytes; a device that refuses them
///   (`/dev/full`) is an error;
/// - a folder: an error.
pub fn write_output_file(path: &Utf8Path, bytes: &[u8]) -> std::io::Result<()> {
    match output_target(path)? {
        OutputTarget::Regular(target) => write_atomic(&target, bytes),
        OutputTarget::Opened(target) => {
            let mut file = std::fs::OpenOptions::new().write(true).open(&target)?;
            file.write_all(bytes)?;
            file.flush()
        }
    }
}

/// Append `bytes` to a file outside any project that a CI runner names (`$GITHUB_STEP_SUMMARY`),
/// creating it when it is not there.
pub fn append_to_file(path: &Utf8Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(bytes)
}

/// Where [`write_output_file`] writes, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OutputTarget {
    /// A regular file (or none yet) at this path, with no link left on the way.
    Regular(Utf8PathBuf),
    /// Anything else that takes bytes by being opened.
    Opened(Utf8PathBuf),
}

/// Follow `path`'s links to what they lead to, and say how to write it.
fn output_target(path: &Utf8Path) -> std::io::Result<OutputTarget> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS_FOLLOWED {
        let metadata = match std::fs::symlink_metadata(&current) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(OutputTarget::Regular(current));
            }
            Err(error) => return Err(error),
        };
        let file_type = metadata.file_type();
        if is_process_descriptor(&current) {
            return Ok(OutputTarget::Opened(current));
        }
        if file_type.is_symlink() {
            let target = Utf8PathBuf::try_from(std::fs::read_link(&current)?)
                .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))?;
            current = match current.parent() {
                Some(folder) if target.is_relative() => folder.join(target),
                _ => target,
            };
            continue;
        }
        if file_type.is_file() {
            return Ok(OutputTarget::Regular(current));
        }
        if file_type.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("{current} is a directory"),
            ));
        }
        return Ok(OutputTarget::Opened(current));
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS_FOLLOWED} symbolic links from {path}"
    )))
}

/// Whether `path` names one of this process's descriptors (or anything else of `/proc`): its
/// folder resolves into `/proc` (`/proc/self/fd/1`, and `/dev/fd/N` through `/dev/fd`), where
/// a link's text (`pipe:[…]`) is no path to follow.
fn is_process_descriptor(path: &Utf8Path) -> bool {
    let folder = path
        .parent()
        .filter(|folder| !folder.as_str().is_empty())
        .unwrap_or(Utf8Path::new("."));
    folder
        .canonicalize_utf8()
        .is_ok_and(|folder| folder.starts_with("/proc"))
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

/// Write a temporary file beside `path` and rename it over `path`. Stale temporaries of ours in
/// the folder are removed first; the temporary is removed again when anything fails.
pub fn replace_atomically(path: &Utf8Path, bytes: &[u8], flush: Flush) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_str().is_empty())
        .unwrap_or(Utf8Path::new("."));
    std::fs::create_dir_all(parent)?;
    sweep_stale_temporaries(parent);
    let target_name = path.file_name().unwrap_or("aidlc");
    let (temporary, mut file) = create_temporary_file(parent, target_name)?;
    let written = (|| {
        if let Ok(existing) = std::fs::metadata(path) {
            file.set_permissions(existing.permissions())?;
        }
        file.write_all(bytes)?;
        if flush == Flush::Yes {
            file.sync_all()?;
        }
        drop(file);
        let replaced = open_large_file_being_replaced(path);
        std::fs::rename(&temporary, path)?;
        close_in_background(replaced);
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// From this size on, a file replaced by [`replace_atomically`] is freed off the caller's path.
const FREE_IN_BACKGROUND_FROM_BYTES: u64 = 1024 * 1024;

/// The file at `path`, opened for reading, when it is a regular file of
/// [`FREE_IN_BACKGROUND_FROM_BYTES`] or more. While it is open, renaming another file over
/// `path` only unlinks it: the file system frees its blocks when the last descriptor closes,
/// which for a graph of many megabytes took as long as writing the new one (ext4, about 6 ms
/// for 18 MB). Opened non-blocking, so a FIFO put there since the look cannot block us. Unix
/// only: elsewhere an open file may keep the rename from replacing it.
#[cfg(unix)]
fn open_large_file_being_replaced(path: &Utf8Path) -> Option<std::fs::File> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() < FREE_IN_BACKGROUND_FROM_BYTES {
        return None;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path).ok()
}

#[cfg(not(unix))]
fn open_large_file_being_replaced(_path: &Utf8Path) -> Option<std::fs::File> {
    None
}

/// Close `file` on a thread of its own, so that freeing a replaced file's blocks does not
/// delay the caller; closed here when no thread can be started. A process that exits first
/// leaves the close to the kernel, which frees the blocks all the same.
fn close_in_background(file: Option<std::fs::File>) {
    let Some(file) = file else {
        return;
    };
    let closer = std::thread::Builder::new().name("aidlc-close-replaced".to_owned());
    // On error the closure, and the file with it, is dropped here.
    let _ = closer.spawn(move || drop(file));
}

/// Create a new temporary file of ours for `target_name` in `folder`, exclusively (an existing
/// file is never opened), `rw-r--r--` less the umask, like any file an editor creates.
pub fn create_temporary_file(
    folder: &Utf8Path,
    target_name: &str,
) -> std::io::Result<(Utf8PathBuf, std::fs::File)> {
    let mut last_error = None;
    for _ in 0..TEMPORARY_CREATE_ATTEMPTS {
        let path = folder.join(temporary_name(target_name));
        match new_file_options().open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                last_error = Some(error);
            }
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

/// A new output file is `rw-r--r--` (less what the umask removes); a replaced file keeps its
/// own permissions (set by the caller).
fn new_file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
    options
}

/// `.<target_name>.aidlc-<pid>-<12 lowercase hex>.tmp`: the name of a temporary file or folder
/// this process makes on its way to `target_name`.
pub fn temporary_name(target_name: &str) -> String {
    format!(
        ".{target_name}{TEMPORARY_MARK}{}-{}{TEMPORARY_SUFFIX}",
        std::process::id(),
        crate::leaves::random_hex::random_lowercase_hex(TEMPORARY_RANDOM_CHARS)
    )
}

/// One of our temporaries, taken apart by [`parse_temporary_name`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemporaryName<'a> {
    /// The name of the file the temporary was on its way to.
    pub target_name: &'a str,
    /// The process that made it.
    pub pid: u32,
}

/// `Some` exactly when `name` has the pattern of [`temporary_name`]; anything else (another
/// tool's `.tmp` file, the reference's `<file>.tmp`) is `None`.
pub fn parse_temporary_name(name: &str) -> Option<TemporaryName<'_>> {
    let stem = name.strip_prefix('.')?.strip_suffix(TEMPORARY_SUFFIX)?;
    let (rest, random) = stem.rsplit_once('-')?;
    let random_ok = random.len() == TEMPORARY_RANDOM_CHARS
        && random
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let (target_name, pid) = rest.rsplit_once(TEMPORARY_MARK)?;
    let pid_ok =
        !pid.is_empty() && !pid.starts_with('0') && pid.bytes().all(|b| b.is_ascii_digit());
    if !random_ok || !pid_ok || target_name.is_empty() {
        return None;
    }
    Some(TemporaryName {
        target_name,
        pid: pid.parse().ok()?,
    })
}

/// Remove the stale temporary files of ours in `folder` (see [`stale_temporaries`]). Only
/// regular files whose names have exactly our pattern are touched; every other entry stays.
/// Best effort: an entry that cannot be read or removed is left. Returns how many were removed.
pub fn sweep_stale_temporaries(folder: &Utf8Path) -> usize {
    stale_temporaries(folder, |_, metadata| metadata.is_file())
        .into_iter()
        .filter(|path| std::fs::remove_file(path).is_ok())
        .count()
}

/// The stale temporaries of ours in `folder` that `wanted` picks by their name and their own
/// metadata (links not followed); an entry that cannot be read is left out, and so is everything
/// when the folder cannot be listed. A temporary of ours is stale, a dead writer's, when its
/// process is gone or it is older than [`STALE_TEMPORARY_AGE`] (by its modification time).
pub fn stale_temporaries(
    folder: &Utf8Path,
    wanted: impl Fn(&TemporaryName<'_>, &std::fs::Metadata) -> bool,
) -> Vec<Utf8PathBuf> {
    let Ok(entries) = folder.read_dir_utf8() else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let temporary = parse_temporary_name(entry.file_name())?;
            let metadata = std::fs::symlink_metadata(entry.path()).ok()?;
            let is_stale = || {
                let too_old = metadata
                    .modified()
                    .ok()
                    .and_then(|modified| SystemTime::now().duration_since(modified).ok())
                    .is_some_and(|age| age > STALE_TEMPORARY_AGE);
                too_old || !process_is_alive(u64::from(temporary.pid))
            };
            (wanted(&temporary, &metadata) && is_stale()).then(|| entry.into_path())
        })
        .collect()
}

/// Whether a process with this id exists (a process of another user counts as alive): the
/// probe `kill(pid, 0)`, which sends nothing; only "no such process" means gone.
#[cfg(unix)]
pub fn process_is_alive(pid: u64) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        // 0 and negative ids name process groups, not one process.
        .filter(|pid| *pid > 0)
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(error) => error != rustix::io::Errno::SRCH,
    }
}

/// Without a liveness probe every process counts as alive (only age makes a temporary stale).
#[cfg(not(unix))]
pub fn process_is_alive(_pid: u64) -> bool {
    true
}

/// The entries of `dir` that `keep` accepts, sorted by path (so by name); none when `dir` is
/// missing or unreadable, and names that are not UTF-8 are skipped.
pub fn sorted_children(dir: &Utf8Path, keep: impl Fn(&Utf8Path) -> bool) -> Vec<Utf8PathBuf> {
    let Ok(entries) = dir.read_dir_utf8() else {
        return Vec::new();
    };
    let mut kept: Vec<Utf8PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path().to_owned())
        .filter(|path| keep(path))
        .collect();
    kept.sort();
    kept
}

/// Project-relative display form of a path: `/` separators, no leading `./`.
pub fn to_posix(path: &str) -> String {
    let replaced = path.replace('\\', "/");
    replaced
        .strip_prefix("./")
        .map_or(replaced.clone(), str::to_owned)
}

/// `path` opened for reading with the `fstat` of the opened file, when it is a regular file.
///
/// The open never blocks: it is non-blocking (a FIFO nobody writes would otherwise block the
/// open itself), and the type is read from the opened file, so a FIFO, socket, device or folder
/// put at the path at any time is refused before a byte is read (an error of kind
/// `InvalidInput` naming what it is). A regular file ignores the non-blocking flag.
pub fn open_regular_file(path: &Utf8Path) -> std::io::Result<(std::fs::Metadata, std::fs::File)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if metadata.is_file() {
        Ok((metadata, file))
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file",
                not_regular_file_kind(path).unwrap_or("not a regular file")
            ),
        ))
    }
}

/// Largest input file a command reads from a project or a plugin (the compile's limit).
/// Frontmatter files are a few KiB; anything this big is almost certainly a mistake (a binary, a
/// log) and would slow every hook down.
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// The bytes of an input file a command reads from a project or a plugin: the lock file,
/// `harness.json`, a plugin's files, the journal's manifest, a state file, a settings file.
///
/// Invariant: this is the one way to read such a file. It is opened as the compile opens its
/// inputs ([`open_regular_file`]: non-blocking, refused unless it is a regular file) and read
/// only when `fstat` says it holds at most [`MAX_INPUT_BYTES`], so a FIFO, a device, a folder
/// or a huge file is refused at once, never waited on and never read whole.
pub fn read_input(path: &Utf8Path) -> Result<Vec<u8>, InputError> {
    read_bounded(path, MAX_INPUT_BYTES)
}

/// [`read_input`] as text; bytes that are not UTF-8 are [`InputError::NotUtf8`].
pub fn read_input_text(path: &Utf8Path) -> Result<String, InputError> {
    read_bounded_text(path, MAX_INPUT_BYTES)
}

/// [`read_bounded`] as text: for a file the engine wrote and reads back that grows with the
/// project (the stage graph, the compile's record, an audit shard), under a limit of its own.
pub fn read_bounded_text(path: &Utf8Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read_bounded(path, limit)?).map_err(|_| InputError::NotUtf8)
}

/// Why [`read_bounded`] (and so [`read_input`]) gave no bytes. The text says what the file is
/// and never names it: the caller names the path it refuses.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The system's own words (`No such file or directory`), as a direct read would say.
    #[error("{0}")]
    NotFound(std::io::Error),
    #[error("it is {size} bytes, more than the limit of {limit} bytes")]
    TooLarge { size: u64, limit: u64 },
    #[error("it is not UTF-8 text")]
    NotUtf8,
    #[error("{0}")]
    Unreadable(std::io::Error),
}

impl InputError {
    /// Whether the file is simply absent (most inputs are optional).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound(_))
    }

    /// The refusal as an I/O error with the same text, for error types that carry one.
    pub fn into_io_error(self) -> std::io::Error {
        match self {
            Self::NotFound(error) | Self::Unreadable(error) => error,
            refused @ (Self::TooLarge { .. } | Self::NotUtf8) => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, refused.to_string())
            }
        }
    }
}

/// The bytes of the regular file at `path` when it holds at most `limit` bytes, read with the
/// compile's own open and read ([`open_regular_file`], then at most `limit + 1` bytes): a
/// runtime command reading a file a person or another tool wrote (a stage's `memory.md`, the
/// conductor's `runtime-graph.json`) gets the compile's limits and refusals, so a huge file
/// costs one `fstat` and a FIFO never hangs it.
pub fn read_bounded(path: &Utf8Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let (metadata, mut file) = open_regular_file(path).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            InputError::NotFound(error)
        } else {
            InputError::Unreadable(error)
        }
    })?;
    if metadata.len() > limit {
        return Err(InputError::TooLarge {
            size: metadata.len(),
            limit,
        });
    }
    let bytes = read_whole_file(&mut file, &metadata, limit).map_err(InputError::Unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            size: metadata.len().max(bytes.len() as u64),
            limit,
        });
    }
    Ok(bytes)
}

/// The bytes of `file` to its end, or `limit + 1` bytes when it is longer than `limit`.
///
/// A file under [`ONE_READ_BELOW`] (every hand-written input) is read with one `read` asking
/// for one byte more than the size `metadata` gave: a regular file that returns exactly that
/// size to it was at its end (a regular file reads short only there), so the read that would
/// return nothing is not made. Any other count (the file grew, shrank, or is not a regular
/// file) reads on to the end as `read_to_end` does. A larger file (a graph read back) is read
/// into a buffer that is not zeroed first, as `read_to_end` does: clearing 18 MB cost more
/// than the syscall saved. Reading through `take`, not `File::read_to_end`, which would
/// `fstat` and `lseek` the file again to size its buffer.
pub(crate) fn read_whole_file(
    file: &mut std::fs::File,
    metadata: &std::fs::Metadata,
    limit: u64,
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let size = usize::try_from(metadata.len()).unwrap_or(usize::MAX - 1);
    let mut bytes = if size < ONE_READ_BELOW {
        let mut bytes = vec![0; size + 1];
        let first_read = loop {
            match file.read(&mut bytes) {
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                read => break read?,
            }
        };
        bytes.truncate(first_read);
        if first_read == size && metadata.is_file() {
            return Ok(bytes);
        }
        bytes
    } else {
        Vec::with_capacity(size + 1)
    };
    let left_to_limit = (limit.saturating_add(1)).saturating_sub(bytes.len() as u64);
    file.take(left_to_limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Files smaller than this are read with one `read` into a zeroed buffer (see
/// [`read_whole_file`]).
pub(crate) const ONE_READ_BELOW: usize = 256 * 1024;

/// What `stat` says about a file: enough to notice almost every change without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatStamp {
    pub size: u64,
    pub modified_ns: u64,
    /// The inode change time on Unix: it moves on every write, rename and `touch`, and unlike
    /// the modification time it cannot be set back (so `rsync -t` or `cp -p` cannot fool it).
    /// 0 on other systems.
    pub changed_ns: u64,
    pub inode: u64,
}

impl StatStamp {
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        let modified_ns = metadata
            .modified()
            .map_or(0, super::timestamp::ns_since_epoch);
        let (changed_ns, inode) = unix_change_time_and_inode(metadata);
        Self {
            size: metadata.len(),
            modified_ns,
            changed_ns,
            inode,
        }
    }

    pub fn of_path(path: &Utf8Path) -> Option<Self> {
        std::fs::metadata(path)
            .ok()
            .map(|metadata| Self::of(&metadata))
    }
}

#[cfg(unix)]
fn unix_change_time_and_inode(metadata: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let seconds = u64::try_from(metadata.ctime()).unwrap_or(0);
    let nanos = u64::try_from(metadata.ctime_nsec()).unwrap_or(0);
    (
        seconds.saturating_mul(1_000_000_000).saturating_add(nanos),
        metadata.ino(),
    )
}

#[cfg(not(unix))]
fn unix_change_time_and_inode(_metadata: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;

    fn temp_folder() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        (dir, path)
    }

    #[cfg(unix)]
    #[test]
    fn an_input_that_is_not_a_bounded_regular_file_is_refused_without_reading_it() {
        let (_dir, folder) = temp_folder();
        let fifo = folder.join("aidlc.lock.json");
        let made = std::process::Command::new("mkfifo")
            .arg(fifo.as_str())
            .status()
            .unwrap();
        assert!(made.success());
        let refused = read_input(&fifo).unwrap_err().to_string();
        assert!(refused.contains("FIFO"), "{refused}");
        assert!(
            read_input(&folder)
                .unwrap_err()
                .to_string()
                .contains("directory")
        );

        let huge = folder.join("notes.md");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        assert!(matches!(
            read_input(&huge),
            Err(InputError::TooLarge {
                size: 1_073_741_824,
                limit: MAX_INPUT_BYTES
            })
        ));

        let missing = read_input(&folder.join("missing")).unwrap_err();
        assert!(missing.is_not_found());
        let binary = folder.join("binary");
        std::fs::write(&binary, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_input_text(&binary), Err(InputError::NotUtf8)));
        std::fs::write(&binary, "text").unwrap();
        assert_eq!(read_input_text(&binary).unwrap(), "text");
    }

    #[test]
    fn a_path_from_a_folder_goes_down_or_up() {
        let (_dir, folder) = temp_folder();
        let folder = folder.canonicalize_utf8().unwrap();
        std::fs::create_dir_all(folder.join("repo/services/shop")).unwrap();
        std::fs::create_dir_all(folder.join("repo/tools")).unwrap();
        let shop = folder.join("repo/services/shop");
        assert_eq!(path_from(&folder.join("repo"), &shop), "services/shop");
        assert_eq!(path_from(&shop, &shop), "");
        assert_eq!(
            path_from(&folder.join("repo/tools"), &shop),
            "../services/shop"
        );
        assert_eq!(path_from(&shop, &folder.join("repo")), "../..");
        assert_eq!(
            path_from(Utf8Path::new("relative"), &shop),
            shop,
            "a relative folder gives the target as it is"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_output_file_is_replaced_and_links_are_followed_to_it() {
        let (_dir, folder) = temp_folder();
        let regular = folder.join("report.json");
        assert_eq!(
            output_target(&regular).unwrap(),
            OutputTarget::Regular(regular.clone()),
            "nothing there yet"
        );
        std::fs::write(&regular, "old").unwrap();
        let link = folder.join("link.json");
        std::os::unix::fs::symlink("report.json", &link).unwrap();
        let chain = folder.join("chain.json");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        assert_eq!(
            output_target(&chain).unwrap(),
            OutputTarget::Regular(regular.clone())
        );
        write_output_file(&chain, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&regular).unwrap(), "new");
        assert!(chain.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        let dangling = folder.join("dangling.json");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write_output_file(&dangling, b"made").unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join("made.json")).unwrap(),
            "made"
        );
        let error = write_output_file(&folder, b"x").unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::IsADirectory);
        let looping = folder.join("loop");
        std::os::unix::fs::symlink("loop", &looping).unwrap();
        assert!(write_output_file(&looping, b"x").is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_and_descriptors_are_opened_not_replaced() {
        use std::os::unix::fs::FileTypeExt as _;
        for path in ["/dev/null", "/dev/stdout", "/dev/stderr", "/proc/self/fd/2"] {
            assert!(
                matches!(
                    output_target(Utf8Path::new(path)).unwrap(),
                    OutputTarget::Opened(_)
                ),
                "{path}"
            );
        }
        write_output_file(Utf8Path::new("/dev/null"), b"gone").unwrap();
        assert!(
            std::fs::symlink_metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        let error = write_output_file(Utf8Path::new("/dev/full"), b"x").unwrap_err();
        assert_eq!(error.raw_os_error(), Some(28), "{error}");
    }

    /// The id of a process that has exited (and been reaped).
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    fn names_in(folder: &Utf8Path) -> Vec<String> {
        let mut names: Vec<String> = folder
            .read_dir_utf8()
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_owned())
            .collect();
        names.sort();
        names
    }

    /// The descriptors of this process open on a file that was at `path` and is deleted now.
    #[cfg(target_os = "linux")]
    fn descriptors_on_deleted(path: &Utf8Path) -> usize {
        let deleted = format!("{path} (deleted)");
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
            .filter(|target| target.to_str() == Some(deleted.as_str()))
            .count()
    }

    /// A large file replaced atomically is held open across the rename (so its blocks are freed
    /// off the caller's path) and then closed: the new bytes are in place at once, and no
    /// descriptor on the old file is left behind.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_replaced_large_file_is_closed_after_the_rename() {
        let (_dir, folder) = temp_folder();
        let path = folder.join("stage-graph.json");
        let size = usize::try_from(FREE_IN_BACKGROUND_FROM_BYTES).unwrap() * 2;
        std::fs::write(&path, vec![b'o'; size]).unwrap();
        write_atomic(&path, &vec![b'n'; size]).unwrap();
        assert!(
            std::fs::read(&path)
                .unwrap()
                .iter()
                .all(|&byte| byte == b'n')
        );
        assert_eq!(names_in(&folder), ["stage-graph.json"]);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while descriptors_on_deleted(&path) > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the replaced file is still open"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(open_large_file_being_replaced(&path).is_some());
        std::fs::write(&path, b"small").unwrap();
        assert!(open_large_file_being_replaced(&path).is_none());
        assert!(open_large_file_being_replaced(&folder).is_none());
    }

    #[test]
    #[cfg(unix)]
    fn new_files_are_readable_by_others_and_replacements_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, folder) = temp_folder();
        let path = folder.join("out.json");
        write_atomic(&path, b"one").unwrap();
        let mode = |path: &Utf8Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(mode(&path), 0o664);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let (_dir, folder) = temp_folder();
        let path = folder.join("a/b.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let n_entries = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(n_entries, 1);
    }

    #[test]
    fn temporary_names_have_the_exact_pattern() {
        let name = temporary_name("stage-graph.json");
        let parsed = parse_temporary_name(&name).unwrap();
        assert_eq!(parsed.target_name, "stage-graph.json");
        assert_eq!(parsed.pid, std::process::id());
        assert_eq!(
            parse_temporary_name(".x.md.aidlc-42-0123456789ab.tmp"),
            Some(TemporaryName {
                target_name: "x.md",
                pid: 42
            })
        );
        for foreign in [
            ".stage-graph.json.a1B2c3.tmp",
            "x.md.tmp",
            "linter-0badf00d.md.tmp",
            ".x.md.aidlc-42-0123456789a.tmp",
            ".x.md.aidlc-42-0123456789abc.tmp",
            ".x.md.aidlc-42-0123456789AB.tmp",
            ".x.md.aidlc--0123456789ab.tmp",
            ".x.md.aidlc-042-0123456789ab.tmp",
            ".x.md.aidlc-4a2-0123456789ab.tmp",
            "..aidlc-42-0123456789ab.tmp",
            "x.md.aidlc-42-0123456789ab.tmp",
            ".x.md.aidlc-42-0123456789ab.tmp.bak",
            ".x.md.aidlc-42-0123456789ab",
        ] {
            assert_eq!(parse_temporary_name(foreign), None, "{foreign}");
        }
    }

    #[test]
    #[cfg(unix)]
    fn the_sweep_removes_only_dead_or_old_temporaries_of_ours() {
        let (_dir, folder) = temp_folder();
        let dead = format!(".out.json.aidlc-{}-0123456789ab.tmp", dead_pid());
        let live = format!(".out.json.aidlc-{}-0123456789ab.tmp", std::process::id());
        let live_but_old = format!(".out.json.aidlc-{}-ba9876543210.tmp", std::process::id());
        let foreign = [
            ".out.json.Xy12Ab.tmp",
            "out.json.tmp",
            ".out.json.aidlc-1-0123456789ab.tmp.keep",
        ];
        for name in [&dead, &live, &live_but_old]
            .into_iter()
            .chain(&foreign.map(str::to_owned))
        {
            std::fs::write(folder.join(name), "partial").unwrap();
        }
        let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 60 * 60);
        std::fs::File::options()
            .write(true)
            .open(folder.join(&live_but_old))
            .unwrap()
            .set_modified(two_hours_ago)
            .unwrap();
        // A folder with our pattern is not a temporary file of ours.
        let dead_folder = format!(".sub.aidlc-{}-0123456789ab.tmp", dead_pid());
        std::fs::create_dir(folder.join(&dead_folder)).unwrap();

        assert_eq!(sweep_stale_temporaries(&folder), 2);
        let mut expected: Vec<String> = foreign.iter().map(|&name| name.to_owned()).collect();
        expected.extend([dead_folder, live]);
        expected.sort();
        assert_eq!(names_in(&folder), expected);
    }

    /// A `kill -9` during a write leaves the temporary behind; the next write into the folder
    /// removes it and leaves anything that is not ours.
    #[test]
    #[cfg(unix)]
    fn a_write_sweeps_a_dead_writers_temporary_first() {
        let (_dir, folder) = temp_folder();
        let leftover = format!(".out.json.aidlc-{}-00000000beef.tmp", dead_pid());
        std::fs::write(folder.join(&leftover), "half a graph").unwrap();
        std::fs::write(folder.join("notes.tmp"), "someone else's").unwrap();
        write_atomic(&folder.join("out.json"), b"whole").unwrap();
        assert_eq!(names_in(&folder), ["notes.tmp", "out.json"]);
    }

    #[test]
    #[cfg(unix)]
    fn process_ids_that_name_no_single_process_are_not_alive() {
        assert!(process_is_alive(u64::from(std::process::id())));
        assert!(!process_is_alive(u64::from(dead_pid())));
        assert!(!process_is_alive(0));
        assert!(!process_is_alive(u64::MAX));
    }

    #[cfg(unix)]
    #[test]
    fn a_process_of_another_user_counts_as_alive() {
        // Process 1 always exists; probing it as an ordinary user fails with EPERM, not ESRCH.
        assert!(process_is_alive(1));
    }
}
