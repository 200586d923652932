//! Link-reference definitions (`CommonMark`, read by `pulldown-cmark` through block quotes and
//! list items): which labels a document defines (so `[Q1][Q2]` is two tags, not a link) and
//! which lines the definitions take (they are not claims).
//!
//! Pure text functions; line numbers are those of [`visible_markdown_lines`].

use std::collections::{BTreeSet, HashSet};

use super::commonmark::{normalized_markdown, reference_definitions};
use super::{normalized_reference_label, visible_markdown_lines};
use crate::compile::syntax::frontmatter::LineIndex;

pub(in crate::runtime::sensors::claim_sources) struct ReferenceAnalysis {
    pub(in crate::runtime::sensors::claim_sources) labels: HashSet<String>,
    pub(in crate::runtime::sensors::claim_sources) definition_lines: BTreeSet<usize>,
}

/// The labels the document defines, and the (0-based) lines its definitions take.
pub(in crate::runtime::sensors::claim_sources) fn reference_analysis(
    body: &str,
) -> ReferenceAnalysis {
    let body = normalized_markdown(body);
    let lines = LineIndex::new(&body);
    let mut analysis = ReferenceAnalysis {
        labels: HashSet::new(),
        definition_lines: BTreeSet::new(),
    };
    for (label, span) in reference_definitions(&body) {
        analysis.labels.insert(normalized_reference_label(&label));
        analysis.definition_lines.extend(lines.lines_of(&span));
    }
    analysis
}

/// The [`visible_markdown_lines`] of `text`, with the lines of its link-reference definitions
/// (`definition_lines`, 0-based) made empty.
pub(in crate::runtime::sensors::claim_sources) fn visible_lines_without_definitions(
    text: &str,
    definition_lines: &BTreeSet<usize>,
) -> Vec<String> {
    let mut lines = visible_markdown_lines(text);
    for &index in definition_lines {
        if let Some(line) = lines.get_mut(index) {
            line.clear();
        }
    }
    lines
}

pub(in crate::runtime::sensors::claim_sources) fn without_reference_definitions(
    text: &str,
) -> String {
    visible_lines_without_definitions(text, &reference_analysis(text).definition_lines).join("\n")
}
