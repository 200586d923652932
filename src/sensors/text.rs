//! Text as the reference's workers read it: bytes that are not UTF-8 replaced, as Node's
//! `readFileSync(p, "utf-8")` does, and lines split as JavaScript's `split(/\r?\n/)`.
//!
//! Pure helpers for the document sensors; nothing here decides anything about a document.

use camino::Utf8Path;

/// The file's text; invalid UTF-8 is replaced, as Node's `readFileSync(p, "utf-8")` does.
pub(super) fn read_text_lossy(path: &Utf8Path) -> Result<String, crate::fs_util::InputError> {
    let bytes = crate::fs_util::read_input(path)?;
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
}

/// The lines of `text`, split at `\n` with one `\r` before it removed (JavaScript's
/// `split(/\r?\n/)`).
pub(super) fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
}
