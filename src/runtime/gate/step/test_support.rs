//! Ledger text for the gate's unit tests.

use std::fmt::Write as _;

use crate::runtime::audit::ledger::{
    LedgerEntry, STAGE_AWAITING_APPROVAL, parse_blocks, shard_entries,
};

pub fn block(event: &str, fields: &[(&str, &str)]) -> String {
    let mut text = format!("\n## Row\n**Timestamp**: 2026-09-04T10:00:00Z\n**Event**: {event}\n");
    for (key, value) in fields {
        let _ = writeln!(text, "**{key}**: {value}");
    }
    text.push_str("\n---\n");
    text
}

pub fn shard(blocks: &[String]) -> Vec<LedgerEntry> {
    shard_entries(
        0,
        parse_blocks(&format!("# AI-DLC Audit Log\n{}", blocks.concat())),
    )
}

pub fn gate_row() -> String {
    block(STAGE_AWAITING_APPROVAL, &[("Stage", "s")])
}
