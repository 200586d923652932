//! Splits a Markdown document into its YAML frontmatter and its body.
//!
//! The frontmatter opens with `---` on the very first line (after an optional UTF-8 BOM) and
//! closes at the first following line that is exactly `---` (trailing spaces and `\r` allowed).
//! Offsets are absolute byte offsets into the original text, BOM included.

use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    /// The YAML between the fences (may be empty).
    pub yaml: Range<usize>,
    /// Where the body starts (just after the closing fence's line break).
    pub body_start: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The first line is not `---`.
    MissingOpeningFence,
    /// `---` opens a block that never closes.
    MissingClosingFence,
}

const BYTE_ORDER_MARK: &str = "\u{feff}";

pub fn split(text: &str) -> Result<Frontmatter, FrontmatterError> {
    let start = if text.starts_with(BYTE_ORDER_MARK) {
        BYTE_ORDER_MARK.len()
    } else {
        0
    };
    let rest = &text[start..];
    let after_open = if rest.starts_with("---\r\n") {
        start + 5
    } else if rest.starts_with("---\n") {
        start + 4
    } else {
        return Err(FrontmatterError::MissingOpeningFence);
    };
    let mut line_start = after_open;
    while line_start <= text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let line = text[line_start..line_end].trim_end_matches([' ', '\t', '\r']);
        if line == "---" {
            let body_start = (line_end + 1).min(text.len());
            return Ok(Frontmatter {
                yaml: after_open..line_start,
                body_start,
            });
        }
        if line_end >= text.len() {
            break;
        }
        line_start = line_end + 1;
    }
    Err(FrontmatterError::MissingClosingFence)
}

/// Maps byte offsets to 1-based line and column numbers (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { line_starts }
    }

    /// 1-based `(line, column)` of a byte offset.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line_idx = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line_idx];
        let column = text
            .get(line_start..offset)
            .map_or(offset - line_start, |s| s.chars().count());
        (line_idx + 1, column + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lf_crlf_and_bom() {
        let text = "---\nid: x\n---\nbody\n";
        let fm = split(text).unwrap();
        assert_eq!(&text[fm.yaml.clone()], "id: x\n");
        assert_eq!(&text[fm.body_start..], "body\n");
        let crlf = "\u{feff}---\r\nid: x\r\n---\r\nbody";
        let fm = split(crlf).unwrap();
        assert_eq!(&crlf[fm.yaml], "id: x\r\n");
    }

    #[test]
    fn empty_block_and_missing_fences() {
        assert_eq!(split("---\n---\n").unwrap().yaml, 4..4);
        assert_eq!(
            split("# title\n"),
            Err(FrontmatterError::MissingOpeningFence)
        );
        assert_eq!(
            split("---\nid: x\n"),
            Err(FrontmatterError::MissingClosingFence)
        );
        assert_eq!(
            split("---\nid: x\n----\n"),
            Err(FrontmatterError::MissingClosingFence)
        );
    }

    #[test]
    fn line_and_column() {
        let text = "ab\ncdé\nf";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 0), (1, 1));
        assert_eq!(index.line_col(text, 4), (2, 2));
        assert_eq!(index.line_col(text, text.len()), (3, 2));
    }
}
