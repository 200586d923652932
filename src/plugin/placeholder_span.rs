//! Spans across the `{{HARNESS_DIR}}` substitution: the composition writes a plugin's Markdown
//! with each placeholder replaced by the harness folder (`.claude`), and the compile's spans
//! index that text; these functions carry a span back to the text as the plugin's author wrote
//! it (docs/decisions.md D52). Pure.

use std::ops::Range;

/// The placeholder a plugin's Markdown files name the harness folder with.
pub const HARNESS_PLACEHOLDER: &str = "{{HARNESS_DIR}}";

/// `span` of the text `authored` becomes once each `{{HARNESS_DIR}}` is replaced by
/// `harness_dir`, as a span of `authored` (an end inside a replacement moves to the end of its
/// placeholder, a start to its start).
pub fn authored_span(authored: &str, harness_dir: &str, span: Range<usize>) -> Range<usize> {
    let start = authored_offset(authored, harness_dir, span.start, false);
    let end = authored_offset(authored, harness_dir, span.end, true).max(start);
    start..end
}

fn authored_offset(authored: &str, harness_dir: &str, offset: usize, is_end: bool) -> usize {
    if harness_dir == HARNESS_PLACEHOLDER {
        return offset;
    }
    // Invariant: `removed` is how many more bytes the authored text has than the composed one
    // before the placeholder being looked at.
    let mut removed: isize = 0;
    let shrink = HARNESS_PLACEHOLDER.len().cast_signed() - harness_dir.len().cast_signed();
    for (at, _) in authored.match_indices(HARNESS_PLACEHOLDER) {
        let composed_at = (at.cast_signed() - removed).cast_unsigned();
        if offset <= composed_at {
            break;
        }
        if offset < composed_at + harness_dir.len() {
            return if is_end {
                at + HARNESS_PLACEHOLDER.len()
            } else {
                at
            };
        }
        removed += shrink;
    }
    (offset.cast_signed() + removed)
        .cast_unsigned()
        .min(authored.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_after_a_substituted_placeholder_points_into_the_authored_text() {
        let authored = "read {{HARNESS_DIR}}/knowledge and then `oops`";
        let composed = authored.replace(HARNESS_PLACEHOLDER, ".claude");
        let at = composed.find("`oops`").unwrap();
        let span = authored_span(authored, ".claude", at..at + 6);
        assert_eq!(&authored[span], "`oops`");
        let before = composed.find("read").unwrap();
        assert_eq!(authored_span(authored, ".claude", before..before + 4), 0..4);
        let inside = composed.find("claude").unwrap();
        let span = authored_span(authored, ".claude", inside..inside + 2);
        assert_eq!(&authored[span], HARNESS_PLACEHOLDER);
    }
}
