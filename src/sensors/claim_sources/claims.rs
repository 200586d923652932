//! The claims of one deliverable: every visible paragraph, list item and table data row, and
//! the checks on their tags (each must resolve to the register; `## Assumptions & Open
//! Questions` must exist and hold only retained assumptions).
//!
//! Invariant: text a reader cannot see is never a claim and never carries a tag (see
//! `visibility`); a deliverable that cannot be read is a finding.

use std::collections::BTreeSet;

use camino::Utf8Path;

use super::register::{CONFIRMATION_HEADING, SOURCES_HEADING, SourceUniverse};
use super::tags::{normalized_assumption, source_tags};
use super::visibility::link_references::reference_analysis;
use super::visibility::{
    h2_heading, is_atx_heading_start, is_html_block_start, is_list_item, is_thematic_break,
    strip_up_to_three_spaces, visible_markdown_lines,
};
use crate::js_text::{is_js_whitespace, js_trim};
use crate::sensors::text::read_text_lossy;

const ASSUMPTIONS_HEADING: &str = "Assumptions & Open Questions";
const REVIEW_HEADING: &str = "Review";
const SCOPE_HEADING: &str = "Initial Scope Signal";

pub(super) struct InspectedDeliverable {
    pub(super) findings: Vec<String>,
    pub(super) has_assumptions: bool,
}

/// One claim: a paragraph, list item, HTML block or table data row, and its section.
struct ClaimBlock {
    section: String,
    text: String,
}

impl ClaimBlock {
    fn in_assumptions(&self) -> bool {
        self.section == ASSUMPTIONS_HEADING
    }
}

pub(super) fn inspect_deliverable(
    path: &Utf8Path,
    universe: &SourceUniverse,
) -> InspectedDeliverable {
    let file_name = path.file_name().unwrap_or(path.as_str());
    let body = match read_text_lossy(path) {
        Ok(body) => body,
        Err(error) => {
            return InspectedDeliverable {
                findings: vec![format!("{file_name}: failed to read: {error}")],
                has_assumptions: false,
            };
        }
    };
    let references = reference_analysis(&body);
    let parsed = claim_blocks(&body, &references.definition_lines);
    let mut findings = Vec::new();
    if !parsed.has_assumptions_section {
        findings.push(format!("{file_name}: missing ## {ASSUMPTIONS_HEADING}"));
    }
    let mut has_assumptions = false;
    for block in &parsed.blocks {
        let location = if block.section.is_empty() {
            file_name.to_owned()
        } else {
            format!("{file_name} ## {}", block.section)
        };
        let tags = source_tags(&block.text, &references.labels);
        if block.in_assumptions() {
            if is_none_block(&block.text) {
                continue;
            }
            has_assumptions = true;
            check_assumption_block(block, &tags, &location, universe, &mut findings);
        } else if tags.is_empty() {
            findings.push(format!("{location}: claim block has no source tag"));
            continue;
        } else if tags.iter().any(|tag| tag == "assumption") {
            findings.push(format!(
                "{location}: [assumption] is outside ## {ASSUMPTIONS_HEADING}"
            ));
        }
        for tag in &tags {
            check_tag_resolves(block, tag, &location, universe, &mut findings);
        }
    }
    InspectedDeliverable {
        findings,
        has_assumptions,
    }
}

fn check_assumption_block(
    block: &ClaimBlock,
    tags: &[String],
    location: &str,
    universe: &SourceUniverse,
    findings: &mut Vec<String>,
) {
    if !tags.iter().any(|tag| tag == "assumption") {
        findings.push(format!(
            "{location}: assumption/open question lacks [assumption]"
        ));
    } else if universe.assumptions_accepted
        && !universe
            .accepted_assumptions
            .contains(&normalized_assumption(&block.text))
    {
        findings.push(format!(
            "{location}: retained assumption is not listed in ## {CONFIRMATION_HEADING}"
        ));
    }
}

fn check_tag_resolves(
    block: &ClaimBlock,
    tag: &str,
    location: &str,
    universe: &SourceUniverse,
    findings: &mut Vec<String>,
) {
    if tag == "assumption" {
        return;
    }
    if tag.starts_with('Q') {
        if !universe.answered_questions.contains(tag) {
            findings.push(format!("{location}: [{tag}] has no filled answer"));
        }
        return;
    }
    if !universe.registered.contains(tag) {
        findings.push(format!(
            "{location}: [{tag}] is not registered in ## {SOURCES_HEADING}"
        ));
    }
    if tag == "scope" {
        if block.section != SCOPE_HEADING {
            findings.push(format!(
                "{location}: [scope] is valid only in ## {SCOPE_HEADING}"
            ));
        }
        if !block
            .text
            .to_ascii_lowercase()
            .contains("workflow-selected")
        {
            findings.push(format!(
                "{location}: [scope] claim is not labeled workflow-selected"
            ));
        }
    }
}

/// `None` or `None.`, any case: an empty assumptions section.
fn is_none_block(text: &str) -> bool {
    let text = js_trim(text);
    let text = text.strip_suffix('.').unwrap_or(text);
    text.eq_ignore_ascii_case("none")
}

pub(super) struct ClaimBlocks {
    blocks: Vec<ClaimBlock>,
    has_assumptions_section: bool,
}

pub(super) fn claim_blocks(body: &str, definition_lines: &BTreeSet<usize>) -> ClaimBlocks {
    let lines: Vec<String> = visible_markdown_lines(body)
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            if definition_lines.contains(&index) {
                String::new()
            } else {
                line
            }
        })
        .collect();
    let table_headers: BTreeSet<usize> = (1..lines.len())
        .filter(|&index| is_table_separator(&lines[index]) && is_table_line(&lines[index - 1]))
        .map(|index| index - 1)
        .collect();
    let mut collector = BlockCollector::default();
    let mut skip_review = false;
    for (index, line) in lines.iter().enumerate() {
        if let Some(heading) = h2_heading(line) {
            collector.flush();
            skip_review = heading == REVIEW_HEADING;
            collector.has_assumptions_section |= heading == ASSUMPTIONS_HEADING;
            collector.section = heading;
            continue;
        }
        if is_atx_heading_start(strip_up_to_three_spaces(line)) {
            collector.flush();
            continue;
        }
        if skip_review {
            continue;
        }
        if js_trim(line).is_empty() || is_thematic_break(line) {
            collector.flush();
        } else if is_html_block_start(line) || is_list_item(line) {
            collector.flush();
            collector.pending.push(line);
        } else if is_table_line(line) {
            collector.flush();
            if !table_headers.contains(&index) && !is_table_separator(line) {
                collector.push_block(js_trim(line).to_owned());
            }
        } else {
            collector.pending.push(line);
        }
    }
    collector.flush();
    ClaimBlocks {
        blocks: collector.blocks,
        has_assumptions_section: collector.has_assumptions_section,
    }
}

#[derive(Default)]
struct BlockCollector<'lines> {
    blocks: Vec<ClaimBlock>,
    section: String,
    pending: Vec<&'lines str>,
    has_assumptions_section: bool,
}

impl BlockCollector<'_> {
    fn flush(&mut self) {
        let text = self.pending.join("\n");
        let text = text.trim_end_matches(is_js_whitespace);
        if !text.is_empty() {
            self.push_block(text.to_owned());
        }
        self.pending.clear();
    }

    fn push_block(&mut self, text: String) {
        self.blocks.push(ClaimBlock {
            section: self.section.clone(),
            text,
        });
    }
}

/// `|…|` after trimming.
fn is_table_line(line: &str) -> bool {
    let trimmed = js_trim(line);
    trimmed.starts_with('|') && trimmed.ends_with('|')
}

/// A delimiter row of at least two cells, each `:?-{3,}:?`.
pub(super) fn is_table_separator(line: &str) -> bool {
    let trimmed = js_trim(line);
    let trimmed = trimmed.strip_prefix('|').unwrap_or(trimmed);
    let trimmed = trimmed.strip_suffix('|').unwrap_or(trimmed);
    let cells: Vec<&str> = trimmed.split('|').collect();
    cells.len() >= 2 && cells.iter().all(|cell| is_delimiter_cell(js_trim(cell)))
}

fn is_delimiter_cell(cell: &str) -> bool {
    let cell = cell.strip_prefix(':').unwrap_or(cell);
    let cell = cell.strip_suffix(':').unwrap_or(cell);
    cell.len() >= 3 && cell.bytes().all(|byte| byte == b'-')
}
