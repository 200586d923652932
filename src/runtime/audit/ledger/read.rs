//! The ledger reader (D25): a shard's text split back into blocks, the torn pieces
//! skipped with a warning each, and a record's shards read into typed events with where each
//! sits.
//!
//! Invariant: a torn piece is never read as a block; each one becomes a [`TornBlock`] warning
//! that the caller can show.
//! Must not: write anything, or match event names or field keys itself (`event.rs` does).

use camino::{Utf8Path, Utf8PathBuf};

use super::block::{
    AUDIT_LOG_HEADER, AuditBlock, BLOCK_SEPARATOR, EVENT_KEY, TIMESTAMP_KEY,
    TORN_BLOCK_CLOSING_LINE,
};
use super::event::AuditEvent;
use crate::leaves::js_text::js_trim;
use crate::runtime::workspace;

/// A shard's text read back: its blocks, and the torn blocks skipped on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedLedger {
    pub blocks: Vec<AuditBlock>,
    /// One warning per torn piece, in order; callers show them.
    pub torn: Vec<TornBlock>,
}

/// A piece of a shard that an interrupted write cut short, skipped by the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornBlock {
    /// The 1-based line where the fragment starts.
    pub line: usize,
    pub kind: TornKind,
    /// The fragment's start, on one line, control characters escaped.
    pub excerpt: String,
}

/// How a piece was torn, displayed as its warning says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display)]
pub enum TornKind {
    /// The shard's last piece (its write may also still be under way in another process).
    #[strum(
        to_string = "it has no `---` separator after it: a write was cut short or is still under way"
    )]
    Unterminated,
    /// A later append closed the fragment with [`TORN_BLOCK_CLOSING_LINE`].
    #[strum(to_string = "an interrupted write cut it short and a later append closed it")]
    ClosedByLaterAppend,
    /// A writer that does not close torn tails appended its block onto the fragment.
    #[strum(
        to_string = "an interrupted write cut it short and the next block was appended onto it; that block is read"
    )]
    FollowedByGluedBlock,
}

impl std::fmt::Display for TornBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            line,
            kind,
            excerpt,
        } = self;
        write!(
            f,
            "skipped a torn audit block at line {line}: {kind}: \"{excerpt}\""
        )
    }
}

/// Characters of a fragment shown in a [`TornBlock`] warning.
const TORN_EXCERPT_CHARS: usize = 60;

/// The blocks of a shard (or of several shards joined with `\n`), without the torn ones; see
/// [`parse_ledger`] for the warnings about those.
pub fn parse_blocks(text: &str) -> Vec<AuditBlock> {
    parse_ledger(text).blocks
}

/// The blocks of a shard (or of several shards joined with `\n`): CRLF is read as LF, the text
/// is split on `\n---\n`, and pieces without an `**Event**:` line (the header, notes) are not
/// blocks. A torn piece is never read as a block, and each is reported in
/// [`ParsedLedger::torn`]: the piece after the last separator when it is not blank, a piece
/// holding [`TORN_BLOCK_CLOSING_LINE`], and text in front of a block start (a `## ` heading line
/// followed by a `**Timestamp**:` line) other than the header and blank lines, where the block
/// from that start is still read.
pub fn parse_ledger(text: &str) -> ParsedLedger {
    let text = text.replace("\r\n", "\n");
    let pieces: Vec<&str> = text.split(BLOCK_SEPARATOR).collect();
    let mut ledger = ParsedLedger::default();
    let mut line = 1;
    for (index, piece) in pieces.iter().enumerate() {
        let piece_line = line;
        line += piece.matches('\n').count() + 2;
        // Every shard starts with the header, so joined shards have one at a piece's start.
        let body = piece
            .trim_start_matches(['\n', ' ', '\t'])
            .strip_prefix(AUDIT_LOG_HEADER)
            .unwrap_or(piece);
        let body_line = piece_line + piece[..piece.len() - body.len()].matches('\n').count();
        let is_last = index + 1 == pieces.len();
        let closed_torn = piece.split('\n').any(|l| l == TORN_BLOCK_CLOSING_LINE);
        if is_last || closed_torn {
            let (fragment, kind) = match body.find(TORN_BLOCK_CLOSING_LINE) {
                Some(at) if closed_torn => (&body[..at], TornKind::ClosedByLaterAppend),
                _ => (body, TornKind::Unterminated),
            };
            if !fragment.trim().is_empty() {
                ledger.torn.push(torn_block(fragment, body_line, kind));
            }
            continue;
        }
        let start = last_block_start(body);
        let (fragment, block) = body.split_at(start);
        if !fragment.trim().is_empty() {
            ledger.torn.push(torn_block(
                fragment,
                body_line,
                TornKind::FollowedByGluedBlock,
            ));
        }
        ledger.blocks.extend(parse_block(block));
    }
    ledger
}

/// The byte offset of the last line of `piece` that starts a block (`## ` followed by a
/// `**Timestamp**:` line), or 0 when none does.
fn last_block_start(piece: &str) -> usize {
    let mut last_start = 0;
    let mut offset = 0;
    let mut previous: Option<(usize, &str)> = None;
    for line in piece.split('\n') {
        if let Some((heading_offset, heading)) = previous
            && heading.starts_with("## ")
            && field_line(line).is_some_and(|(key, _)| key == TIMESTAMP_KEY)
        {
            last_start = heading_offset;
        }
        previous = Some((offset, line));
        offset += line.len() + 1;
    }
    last_start
}

fn torn_block(fragment: &str, piece_line: usize, kind: TornKind) -> TornBlock {
    let leading_blank_lines = fragment.len() - fragment.trim_start().len();
    let line = piece_line + fragment[..leading_blank_lines].matches('\n').count();
    let trimmed = fragment.trim();
    let mut excerpt: String = trimmed
        .chars()
        .take(TORN_EXCERPT_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if trimmed.chars().count() > TORN_EXCERPT_CHARS {
        excerpt.push('…');
    }
    TornBlock {
        line,
        kind,
        excerpt,
    }
}

fn parse_block(piece: &str) -> Option<AuditBlock> {
    let mut heading = String::new();
    let mut timestamp = None;
    let mut event = None;
    let mut fields = Vec::new();
    for line in piece.split('\n') {
        if heading.is_empty()
            && let Some(text) = line.strip_prefix("## ")
        {
            text.trim_end().clone_into(&mut heading);
            continue;
        }
        let Some((key, value)) = field_line(line) else {
            continue;
        };
        // The first Timestamp and Event lines count, as the reference's readers take them.
        match key {
            TIMESTAMP_KEY if timestamp.is_none() => timestamp = Some(value),
            EVENT_KEY if event.is_none() => event = Some(value),
            TIMESTAMP_KEY | EVENT_KEY => {}
            _ => fields.push((key.to_owned(), value)),
        }
    }
    Some(AuditBlock {
        heading,
        timestamp,
        event: event?,
        fields,
    })
}

/// `**Key**: value` (optionally after `- `), as the reference reads a field line.
fn field_line(line: &str) -> Option<(&str, String)> {
    let line = line.strip_prefix("- ").unwrap_or(line);
    let rest = line.strip_prefix("**")?;
    let (key, value) = rest.split_once("**:")?;
    (!key.is_empty()).then(|| (key, js_trim(value).to_owned()))
}

// --- A record's ledger -------------------------------------------------------------------------

/// One event of a record's ledger with where it sits: its shard, its position among that shard's
/// blocks, and its timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub shard: usize,
    pub position: usize,
    pub timestamp: String,
    pub event: AuditEvent,
}

impl LedgerEntry {
    /// The reference's `auditEventIsAfter`: the position decides within one shard, the
    /// timestamp across shards.
    pub fn is_after(&self, earlier: &LedgerEntry) -> bool {
        if self.shard == earlier.shard {
            self.position > earlier.position
        } else {
            self.timestamp > earlier.timestamp
        }
    }
}

/// Every shard of a record read back: the events in shard then position order, and the torn
/// pieces skipped, each with its shard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordLedger {
    pub entries: Vec<LedgerEntry>,
    pub torn: Vec<(Utf8PathBuf, TornBlock)>,
}

/// The shards of every clone in `<record>/audit/` (the `*.md` files), sorted by path: the order
/// [`read_record_ledger`] reads them in (so a position here is a `LedgerEntry`'s shard index).
/// An unreadable folder has none.
pub fn record_shards(record: &Utf8Path) -> Vec<Utf8PathBuf> {
    crate::leaves::fs_util::sorted_children(&workspace::audit_dir(record), |path| {
        path.extension() == Some("md") && path.is_file()
    })
}

/// One shard read back, `None` when it cannot be read; invalid UTF-8 is replaced, as the
/// reference's read does.
pub fn read_shard(path: &Utf8Path) -> Option<ParsedLedger> {
    let bytes =
        crate::leaves::fs_util::read_bounded(path, crate::compile::discover::MAX_GENERATED_BYTES)
            .ok()?;
    Some(parse_ledger(&String::from_utf8_lossy(&bytes)))
}

/// Every block of every shard of [`record_shards`], as typed events; unreadable shards are
/// skipped.
pub fn read_record_ledger(record: &Utf8Path) -> RecordLedger {
    let shards = record_shards(record);
    let mut ledger = RecordLedger::default();
    for (shard, path) in shards.iter().enumerate() {
        let Some(parsed) = read_shard(path) else {
            continue;
        };
        ledger
            .torn
            .extend(parsed.torn.into_iter().map(|torn| (path.clone(), torn)));
        ledger.entries.extend(shard_entries(shard, parsed.blocks));
    }
    ledger
}

/// The blocks of the `shard`-th shard as ledger entries, positions counted from 0.
pub fn shard_entries(shard: usize, blocks: Vec<AuditBlock>) -> Vec<LedgerEntry> {
    blocks
        .into_iter()
        .enumerate()
        .map(|(position, block)| LedgerEntry {
            shard,
            position,
            timestamp: block.timestamp.clone().unwrap_or_default(),
            event: AuditEvent::from_block(block),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::audit::ledger::event::SENSOR_FIRED;
    use crate::runtime::audit::ledger::test_support::{pair_fires, sample_fire};
    use crate::runtime::audit::ledger::{
        AuditRow, FireIdentity, SENSOR_BUDGET_OVERRIDE, SENSOR_PASSED, format_block,
    };

    #[test]
    fn the_reader_skips_torn_pieces_and_says_where() {
        let fire = sample_fire();
        let fired = format_block(&AuditRow::sensor_fired(&fire), "T1");
        let passed = format_block(&AuditRow::sensor_passed(&fire, 5, None), "T2");
        // A torn passed row with its Note cut off must not read as an unnoted pass.
        let torn_passed = &passed[..passed.find("**Duration ms**").unwrap()];

        let unterminated = format!("{AUDIT_LOG_HEADER}{fired}{torn_passed}");
        let ledger = parse_ledger(&unterminated);
        assert_eq!(ledger.blocks.len(), 1);
        assert_eq!(pair_fires(&ledger.blocks)[0].terminal, None);
        assert_eq!(ledger.torn.len(), 1);
        assert_eq!(ledger.torn[0].kind, TornKind::Unterminated);
        assert_eq!(ledger.torn[0].line, 13);

        // A writer that does not close torn tails glued a whole block onto the fragment.
        let glued = format!("{AUDIT_LOG_HEADER}{fired}{torn_passed}{passed}");
        let ledger = parse_ledger(&glued);
        assert_eq!(ledger.blocks.len(), 2);
        let terminal = pair_fires(&ledger.blocks)[0].terminal.unwrap();
        assert_eq!(terminal.timestamp.as_deref(), Some("T2"));
        assert_eq!(terminal.heading, "Sensor Passed");
        assert_eq!(ledger.torn.len(), 1);
        assert_eq!(ledger.torn[0].kind, TornKind::FollowedByGluedBlock);
        assert_eq!(ledger.torn[0].line, 13);

        // A header torn before the first block was glued onto it.
        let ledger = parse_ledger(&format!("# AI-DLC Au{fired}"));
        assert_eq!(ledger.blocks.len(), 1);
        assert_eq!(ledger.torn[0].excerpt, "# AI-DLC Au");

        // Whole shards, notes and trailing blank lines warn about nothing.
        let note = "\n## Note\n**Timestamp**: T3\nfree text\n\n---\n";
        let whole = format!("{AUDIT_LOG_HEADER}{fired}{note}{passed}\n\n");
        let ledger = parse_ledger(&whole);
        assert_eq!((ledger.blocks.len(), ledger.torn.len()), (2, 0));
        assert_eq!(parse_ledger(AUDIT_LOG_HEADER), ParsedLedger::default());
        let two_shards = format!("{AUDIT_LOG_HEADER}{fired}\n{AUDIT_LOG_HEADER}{passed}");
        let ledger = parse_ledger(&two_shards);
        assert_eq!((ledger.blocks.len(), ledger.torn.len()), (2, 0));
        assert_eq!(parse_ledger(""), ParsedLedger::default());
    }

    #[test]
    fn a_torn_excerpt_is_one_short_line() {
        let text = format!(
            "{}\n## Sensor Fired\n**Fire id**: \u{0}\u{0}{}",
            AUDIT_LOG_HEADER,
            "x".repeat(100)
        );
        let torn = &parse_ledger(&text).torn[0];
        assert!(
            torn.excerpt
                .starts_with("## Sensor Fired\\n**Fire id**: \\0\\0x"),
            "{}",
            torn.excerpt
        );
        assert!(torn.excerpt.ends_with('…'));
        assert!(!torn.to_string().contains('\n'));
    }

    #[test]
    fn blocks_parse_back_with_crlf_and_dashed_fields() {
        let text = "# AI-DLC Audit Log\r\n\r\n## Sensor Fired\r\n**Timestamp**: T1\r\n**Event**: SENSOR_FIRED\r\n\
                    - **Fire id**: 0000abcd\r\n**Odd**:   spaced value  \r\n\r\n---\r\n\r\ntorn tail without an event";
        let blocks = parse_blocks(text);
        assert_eq!(
            blocks,
            [AuditBlock {
                heading: "Sensor Fired".to_owned(),
                timestamp: Some("T1".to_owned()),
                event: SENSOR_FIRED.to_owned(),
                fields: vec![
                    ("Fire id".to_owned(), "0000abcd".to_owned()),
                    ("Odd".to_owned(), "spaced value".to_owned()),
                ],
            }]
        );
    }

    #[test]
    fn fires_pair_by_id_not_by_position() {
        let project = Utf8Path::new("/p");
        let fire = |id: &str| FireIdentity::new(project, id, "linter", "s", "/p/x.ts");
        let rows = [
            format_block(&AuditRow::sensor_passed(&fire("bbbbbbbb"), 5, None), "T2"),
            format_block(&AuditRow::sensor_fired(&fire("aaaaaaaa")), "T1"),
            format_block(&AuditRow::sensor_fired(&fire("bbbbbbbb")), "T1"),
            format_block(&AuditRow::sensor_fired(&fire("cccccccc")), "T1"),
            format_block(
                &AuditRow::sensor_budget_override(&fire("aaaaaaaa"), 1, 2),
                "T3",
            ),
        ];
        let text = format!("{AUDIT_LOG_HEADER}{}", rows.concat());
        let blocks = parse_blocks(&text);
        let pairs = pair_fires(&blocks);
        let summary: Vec<(&str, Option<&str>)> = pairs
            .iter()
            .map(|pair| {
                (
                    pair.fired.field("Fire id").unwrap(),
                    pair.terminal.map(|t| t.event.as_str()),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("aaaaaaaa", Some(SENSOR_BUDGET_OVERRIDE)),
                ("bbbbbbbb", Some(SENSOR_PASSED)),
                ("cccccccc", None),
            ]
        );
    }

    #[test]
    fn across_shards_the_timestamp_orders_rows() {
        let gate_row = "\n## Row\n**Timestamp**: 2026-09-04T10:00:00Z\n**Event**: STAGE_AWAITING_APPROVAL\n**Stage**: s\n\n---\n";
        let early = LedgerEntry {
            shard: 0,
            position: 9,
            timestamp: "2026-09-04T10:00:00Z".to_owned(),
            event: AuditEvent::from_block(parse_blocks(gate_row).remove(0)),
        };
        let later = LedgerEntry {
            shard: 1,
            position: 0,
            timestamp: "2026-09-04T10:00:01Z".to_owned(),
            ..early.clone()
        };
        assert!(later.is_after(&early));
        assert!(!early.is_after(&later));
    }

    #[test]
    fn a_records_shards_are_read_in_name_order_with_their_torn_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let record = Utf8Path::from_path(dir.path()).unwrap();
        let audit = record.join("audit");
        std::fs::create_dir_all(&audit).unwrap();
        let fire = sample_fire();
        let fired = format_block(&AuditRow::sensor_fired(&fire), "T1");
        let passed = format_block(&AuditRow::sensor_passed(&fire, 5, None), "T2");
        std::fs::write(
            audit.join("b-host.md"),
            format!("{AUDIT_LOG_HEADER}{passed}"),
        )
        .unwrap();
        std::fs::write(
            audit.join("a-host.md"),
            format!("{AUDIT_LOG_HEADER}{fired}{fired}## Sensor Passed\n**Tim"),
        )
        .unwrap();
        std::fs::write(audit.join("notes.txt"), &fired).unwrap();
        let ledger = read_record_ledger(record);
        let places: Vec<(usize, usize, &str)> = ledger
            .entries
            .iter()
            .map(|entry| {
                let name = match entry.event {
                    AuditEvent::SensorFired(_) => SENSOR_FIRED,
                    AuditEvent::SensorTerminal(_) => SENSOR_PASSED,
                    _ => "another event",
                };
                (entry.shard, entry.position, name)
            })
            .collect();
        assert_eq!(
            places,
            [
                (0, 0, SENSOR_FIRED),
                (0, 1, SENSOR_FIRED),
                (1, 0, SENSOR_PASSED)
            ]
        );
        assert_eq!(ledger.entries[2].timestamp, "T2");
        assert_eq!(ledger.torn.len(), 1);
        assert_eq!(ledger.torn[0].0, audit.join("a-host.md"));
        assert_eq!(ledger.torn[0].1.kind, TornKind::Unterminated);
    }
}
