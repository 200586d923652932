//! Bounded reads of the small files the conductor writes (cursors, the clone id, the
//! active-directive marker): a file larger than its bound is not one of ours, and is never read
//! whole.

use std::io::Read as _;

use camino::Utf8Path;

/// Cursors and the clone id are one short line; anything longer is not one of ours.
pub(super) const CURSOR_MAX_BYTES: u64 = 4 * 1024;

/// A small file's text, invalid UTF-8 replaced; `None` if missing, unreadable or larger than
/// `limit` bytes.
pub(super) fn read_small_text(path: &Utf8Path, limit: u64) -> Option<String> {
    let bytes = read_bounded(path, limit + 1).ok()?;
    (bytes.len() as u64 <= limit).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// At most `limit` bytes of a regular file, from one non-blocking descriptor
/// ([`crate::leaves::fs_util::open_regular_file`]): a FIFO in a cursor's place is refused, not waited on.
pub(super) fn read_bounded(path: &Utf8Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    crate::leaves::fs_util::open_regular_file(path)?
        .1
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}
