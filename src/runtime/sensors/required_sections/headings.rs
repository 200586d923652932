//! The heading scan of `required-sections`: the distinct `## ` headings of a document, outside
//! fenced code (a fence of backticks or tildes, closed by one of the same character at least
//! as long; an unclosed fence runs to the end).
//!
//! Pure text functions, used for deliverables and templates alike.

use std::collections::HashSet;

use crate::leaves::js_text::js_trim;
use crate::runtime::sensors::text::lines_of;

/// The distinct `## ` headings of `body`, trimmed, in first-seen order, outside fenced code.
pub(super) fn h2_headings(body: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut headings = Vec::new();
    let mut open_fence: Option<Fence> = None;
    for line in lines_of(body) {
        let line = js_trim(line);
        if let Some(fence) = open_fence {
            if fence.is_closed_by(line) {
                open_fence = None;
            }
        } else if let Some(fence) = Fence::opened_by(line) {
            open_fence = Some(fence);
        } else if line.starts_with("## ") && seen.insert(line) {
            headings.push(line.to_owned());
        }
    }
    headings
}

/// An open code fence: its character (`` ` `` or `~`) and how many of them opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    marker: u8,
    length: usize,
}

impl Fence {
    /// The fence a trimmed line opens: at least three backticks or tildes; a backtick fence's
    /// info string holds no backtick (otherwise the line is inline code).
    fn opened_by(trimmed_line: &str) -> Option<Self> {
        let marker = *trimmed_line.as_bytes().first()?;
        if marker != b'`' && marker != b'~' {
            return None;
        }
        let length = leading_run(trimmed_line, marker);
        let info = &trimmed_line[length..];
        let is_fence = length >= 3 && !(marker == b'`' && info.contains('`'));
        is_fence.then_some(Self { marker, length })
    }

    /// Whether a trimmed line closes this fence: only its character, at least as many.
    fn is_closed_by(self, trimmed_line: &str) -> bool {
        let run = leading_run(trimmed_line, self.marker);
        run == trimmed_line.len() && run >= self.length
    }
}

/// How many times `byte` repeats at the start of `text`.
fn leading_run(text: &str, byte: u8) -> usize {
    text.bytes()
        .take_while(|&candidate| candidate == byte)
        .count()
}
