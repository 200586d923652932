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
use super::visibility::link_references::{reference_analysis, visible_lines_without_definitions};
use super::visibility::{
    h2_heading, is_atx_heading_start, is_html_block_start, is_list_item, is_thematic_break,
    strip_up_to_three_spaces,
};
use crate::leaves::js_text::{is_js_whitespace, js_trim};
use crate::protocol::finding::Finding;
use crate::runtime::sensors::text::read_text_lossy;

const ASSUMPTIONS_HEADING: &str = "Assumptions & Open Questions";
const REVIEW_HEADING: &str = "Review";
const SCOPE_HEADING: &str = "Initial Scope Signal";

/// The findings of the check, twice: the reference's sentences (`<file> ## <section>: <what>`,
/// byte for byte) and the same findings located, for the gate report.
#[derive(Debug, Default)]
pub(super) struct ClaimFindings {
    pub(super) texts: Vec<String>,
    pub(super) located: Vec<Finding>,
}

impl ClaimFindings {
    /// One finding: `<location>: <message>` for the reference (`message` alone without a
    /// location), and `message` at `line` of `file` (0: the whole file) with its rule and help
    /// for the report.
    pub(super) fn push(
        &mut self,
        (location, at): ClaimPlace<'_>,
        rule: &str,
        message: String,
        help: String,
    ) {
        self.texts.push(match location {
            Some(location) => format!("{location}: {message}"),
            None => message.clone(),
        });
        self.located.push(
            Finding::at_file(at.0.as_str(), rule, message)
                .at_line(at.1)
                .with_help(help),
        );
    }
}

/// Where a finding goes: the reference's location prefix (none for the whole check), and the
/// file and line.
pub(super) type ClaimPlace<'a> = (Option<&'a str>, (&'a Utf8Path, usize));

/// One claim: a paragraph, list item, HTML block or table data row, its section, and the
/// 1-based line it starts on.
pub(super) struct ClaimBlock {
    section: String,
    text: String,
    line: usize,
}

/// Add the findings of the deliverable at `path`; whether it retains assumptions.
pub(super) fn inspect_deliverable(
    path: &Utf8Path,
    universe: &SourceUniverse,
    findings: &mut ClaimFindings,
) -> bool {
    let file_name = path.file_name().unwrap_or(path.as_str());
    let body = match read_text_lossy(path) {
        Ok(body) => body,
        Err(error) => {
            findings.push(
                (Some(file_name), (path, 0)),
                "unreadable-deliverable",
                format!("failed to read: {error}"),
                "check the file's permissions; a deliverable that cannot be read is never passed"
                    .to_owned(),
            );
            return false;
        }
    };
    let references = reference_analysis(&body);
    let (blocks, has_assumptions_section) = claim_blocks(&body, &references.definition_lines);
    if !has_assumptions_section {
        findings.push(
            (Some(file_name), (path, 0)),
            "missing-assumptions-section",
            format!("missing ## {ASSUMPTIONS_HEADING}"),
            format!(
                "add a `## {ASSUMPTIONS_HEADING}` section (with `None.` under it when there is none)"
            ),
        );
    }
    let mut has_assumptions = false;
    for block in &blocks {
        let location = if block.section.is_empty() {
            file_name.to_owned()
        } else {
            format!("{file_name} ## {}", block.section)
        };
        let tags = source_tags(&block.text, &references.labels);
        let place = (Some(location.as_str()), (path, block.line));
        if block.section == ASSUMPTIONS_HEADING {
            if is_none_block(&block.text) {
                continue;
            }
            has_assumptions = true;
            check_assumption_block(block, &tags, place, universe, findings);
        } else if tags.is_empty() {
            findings.push(
                place,
                "untagged-claim",
                "claim block has no source tag".to_owned(),
                "end the claim with a source tag: [desc], [scope], [Q<n>] or [memory:<id>] registered in the stage's questions file, or [assumption] under ## Assumptions & Open Questions".to_owned(),
            );
            continue;
        } else if tags.iter().any(|tag| tag == "assumption") {
            findings.push(
                place,
                "assumption-outside-section",
                format!("[assumption] is outside ## {ASSUMPTIONS_HEADING}"),
                format!(
                    "move the claim under `## {ASSUMPTIONS_HEADING}`, or cite a registered source instead"
                ),
            );
        }
        for tag in &tags {
            check_tag_resolves(block, tag, place, universe, findings);
        }
    }
    has_assumptions
}

fn check_assumption_block(
    block: &ClaimBlock,
    tags: &[String],
    place: ClaimPlace<'_>,
    universe: &SourceUniverse,
    findings: &mut ClaimFindings,
) {
    if !tags.iter().any(|tag| tag == "assumption") {
        findings.push(
            place,
            "untagged-assumption",
            "assumption/open question lacks [assumption]".to_owned(),
            "end it with `[assumption]`".to_owned(),
        );
    } else if universe.assumptions_accepted
        && !universe
            .accepted_assumptions
            .contains(&normalized_assumption(&block.text))
    {
        findings.push(
            place,
            "unconfirmed-assumption",
            format!("retained assumption is not listed in ## {CONFIRMATION_HEADING}"),
            format!(
                "list it, word for word, under `## {CONFIRMATION_HEADING}` in the stage's questions file"
            ),
        );
    }
}

fn check_tag_resolves(
    block: &ClaimBlock,
    tag: &str,
    place: ClaimPlace<'_>,
    universe: &SourceUniverse,
    findings: &mut ClaimFindings,
) {
    if tag == "assumption" {
        return;
    }
    if tag.starts_with('Q') {
        if !universe.answered_questions.contains(tag) {
            findings.push(
                place,
                "unanswered-question",
                format!("[{tag}] has no filled answer"),
                format!("fill the `[Answer]:` of `## {tag}` in the stage's questions file"),
            );
        }
        return;
    }
    if !universe.registered.contains(tag) {
        findings.push(
            place,
            "unregistered-source",
            format!("[{tag}] is not registered in ## {SOURCES_HEADING}"),
            format!(
                "add a valid `- [{tag}] …` entry to `## {SOURCES_HEADING}` in the stage's questions file"
            ),
        );
    }
    if tag == "scope" {
        if block.section != SCOPE_HEADING {
            findings.push(
                place,
                "scope-outside-section",
                format!("[scope] is valid only in ## {SCOPE_HEADING}"),
                format!("move the claim under `## {SCOPE_HEADING}`"),
            );
        }
        if !block
            .text
            .to_ascii_lowercase()
            .contains("workflow-selected")
        {
            findings.push(
                place,
                "unlabeled-scope",
                "[scope] claim is not labeled workflow-selected".to_owned(),
                "say \"workflow-selected\" in the claim that cites [scope]".to_owned(),
            );
        }
    }
}

/// `None` or `None.`, any case: an empty assumptions section.
fn is_none_block(text: &str) -> bool {
    let text = js_trim(text);
    let text = text.strip_suffix('.').unwrap_or(text);
    text.eq_ignore_ascii_case("none")
}

/// The claims of a document, and whether it has a `## Assumptions & Open Questions` section.
pub(super) fn claim_blocks(
    body: &str,
    definition_lines: &BTreeSet<usize>,
) -> (Vec<ClaimBlock>, bool) {
    let lines = visible_lines_without_definitions(body, definition_lines);
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
            collector.push_line(index, line);
        } else if is_table_line(line) {
            collector.flush();
            if !table_headers.contains(&index) && !is_table_separator(line) {
                collector.push_block(js_trim(line).to_owned(), index + 1);
            }
        } else {
            collector.push_line(index, line);
        }
    }
    collector.flush();
    (collector.blocks, collector.has_assumptions_section)
}

#[derive(Default)]
struct BlockCollector<'lines> {
    blocks: Vec<ClaimBlock>,
    section: String,
    pending: Vec<&'lines str>,
    /// The 1-based line of the first pending line.
    pending_line: usize,
    has_assumptions_section: bool,
}

impl<'lines> BlockCollector<'lines> {
    /// Add the line at the 0-based `index` to the pending block.
    fn push_line(&mut self, index: usize, line: &'lines str) {
        if self.pending.is_empty() {
            self.pending_line = index + 1;
        }
        self.pending.push(line);
    }

    fn flush(&mut self) {
        let text = self.pending.join("\n");
        let text = text.trim_end_matches(is_js_whitespace);
        if !text.is_empty() {
            self.push_block(text.to_owned(), self.pending_line);
        }
        self.pending.clear();
    }

    fn push_block(&mut self, text: String, line: usize) {
        self.blocks.push(ClaimBlock {
            section: self.section.clone(),
            text,
            line,
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
