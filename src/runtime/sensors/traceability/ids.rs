//! Element ids (`FR1`, `US1.2`, `AC1.2.3`, `BR1.1`, `NFR1`, …) as the reference's patterns
//! find them: whole words, left to right.
//!
//! Pure text functions.

use std::collections::BTreeSet;

use crate::runtime::sensors::text::is_word_byte;

/// The id shapes of the reference: `FR1`/`FR1.2`, `NFR1` (not followed by `.<digit>`),
/// `NFR1.2`, `US1.2`, `AC1.2.3`, `BR1.2`; each a whole word (ASCII word characters), case kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IdPattern {
    Fr,
    Nfr,
    NfrDetail,
    Us,
    Ac,
    Br,
}

impl IdPattern {
    fn prefix(self) -> &'static [u8] {
        match self {
            Self::Fr => b"FR",
            Self::Nfr | Self::NfrDetail => b"NFR",
            Self::Us => b"US",
            Self::Ac => b"AC",
            Self::Br => b"BR",
        }
    }

    /// How many `.<digits>` parts follow the first number.
    fn dotted_parts(self) -> usize {
        match self {
            Self::Fr | Self::Nfr => 0,
            Self::NfrDetail | Self::Us | Self::Br => 1,
            Self::Ac => 2,
        }
    }
}

pub(super) fn extract_ids(text: &str, patterns: &[IdPattern]) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut ids = BTreeSet::new();
    for &pattern in patterns {
        for start in 0..bytes.len() {
            if let Some(end) = id_end_at(bytes, start, pattern) {
                ids.insert(text[start..end].to_owned());
            }
        }
    }
    ids
}

/// Where the id of `pattern` starting at `start` ends, if one starts there.
fn id_end_at(bytes: &[u8], start: usize, pattern: IdPattern) -> Option<usize> {
    let prefix = pattern.prefix();
    if !bytes[start..].starts_with(prefix) || is_word_byte_before(bytes, start) {
        return None;
    }
    let mut end = digits_end(bytes, start + prefix.len())?;
    for _ in 0..pattern.dotted_parts() {
        end = dotted_digits_end(bytes, end)?;
    }
    let word_ends_at = |offset: usize| !is_word_byte(bytes.get(offset));
    match pattern {
        IdPattern::Fr => dotted_digits_end(bytes, end)
            .filter(|&longer| word_ends_at(longer))
            .or_else(|| word_ends_at(end).then_some(end)),
        IdPattern::Nfr => {
            (word_ends_at(end) && dotted_digits_end(bytes, end).is_none()).then_some(end)
        }
        _ => word_ends_at(end).then_some(end),
    }
}

/// The end of the run of ASCII digits at `from`, when there is at least one.
pub(super) fn digits_end(bytes: &[u8], from: usize) -> Option<usize> {
    let count = bytes
        .get(from..)?
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    (count > 0).then_some(from + count)
}

/// The end of `.<digits>` at `from`, when there is one.
fn dotted_digits_end(bytes: &[u8], from: usize) -> Option<usize> {
    (bytes.get(from) == Some(&b'.'))
        .then(|| digits_end(bytes, from + 1))
        .flatten()
}

pub(super) fn is_word_byte_before(bytes: &[u8], offset: usize) -> bool {
    is_word_byte(offset.checked_sub(1).and_then(|before| bytes.get(before)))
}
