//! Text as the reference's workers read it: bytes that are not UTF-8 replaced, as Node's
//! `readFileSync(p, "utf-8")` does, and lines split as JavaScript's `split(/\r?\n/)`.
//!
//! Pure helpers for the document sensors; nothing here decides anything about a document.

use camino::Utf8Path;

/// Largest file a document check reads: a deliverable is written by an agent or a generator and
/// may be far larger than a hand-written input (a 6 MB document is checked like any other), so
/// it takes the limit of the files that grow with the project, not the compile's input limit.
const MAX_CHECKED_FILE_BYTES: u64 = crate::compile::discover::MAX_GENERATED_BYTES;

/// The file's text; invalid UTF-8 is replaced, as Node's `readFileSync(p, "utf-8")` does. Read
/// through the file-system layer: a FIFO or a device is refused at once, never waited on.
pub(super) fn read_text_lossy(
    path: &Utf8Path,
) -> Result<String, crate::leaves::fs_util::InputError> {
    let bytes = crate::leaves::fs_util::read_bounded(path, MAX_CHECKED_FILE_BYTES)?;
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
}

/// The lines of `text`, split at `\n` with one `\r` before it removed (JavaScript's
/// `split(/\r?\n/)`).
pub(super) fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// `[A-Za-z0-9_]`; a byte of a multi-byte character is never one (JavaScript's ASCII `\w`).
pub(super) fn is_word_byte(byte: Option<&u8>) -> bool {
    byte.is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

/// `[A-Za-z0-9][A-Za-z0-9._-]*`, the shape of a unit name and of a memory source id.
pub(super) fn is_plain_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|byte| byte.is_ascii_alphanumeric())
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}
