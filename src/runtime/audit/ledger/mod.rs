//! The audit ledger (D25–D27): the Markdown blocks appended to this clone's
//! audit shard, the reader that splits them back into typed events, fire ids and the detail file
//! a failed sensor leaves. Every byte another process reads matches the reference (D2): the
//! writer is `renderAuditBlock` and `appendAuditBlockAtPath` of `aidlc-audit.ts`, the sensor rows
//! and the detail body are `emitTerminal` and `buildDetailBody` of `aidlc-sensor.ts`.
//! One writer (`format_block` of an `AuditRow`, appended by `append.rs`) and one reader
//! (`parse_ledger`, then `AuditEvent::from_block`); each file states its invariants.
//!
//! Timestamps are `timestamp`'s; the lock is `audit_lock`'s.

mod append;
mod block;
mod detail;
mod error;
pub mod event;
mod read;

pub use append::{append_row, append_rows, append_terminal_rows, check_fire_folders};
pub use block::{
    AuditBlock, AuditRow, BLOCK_SEPARATOR, TORN_BLOCK_CLOSING_LINE, format_block,
    relative_path_field,
};
pub use detail::{
    DetailFire, DetailVerdict, detail_file_body, detail_file_path, new_fire_id, write_detail_file,
};
pub use error::LedgerError;
pub use event::{
    AuditEvent, BlockingOverride, DecisionRecorded, FireIdentity, GateRow, GateState,
    QuestionAnswered, RuleLearned, SENSOR_BUDGET_OVERRIDE, SENSOR_FAILED, SENSOR_PASSED,
    SINGLE_STAGE_WORKFLOW_PREFIX, STAGE_AWAITING_APPROVAL, SensorOutcome, SensorProposed,
    StageScope, TerminalRow,
};
pub use read::{
    LedgerEntry, ParsedLedger, RecordLedger, TornKind, parse_blocks, parse_ledger,
    read_record_ledger, read_shard, record_shards, shard_entries,
};

#[cfg(test)]
mod test_support;
