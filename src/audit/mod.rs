//! The audit ledger: its cross-process lock, its timestamps, and the rows, shards and detail
//! files it writes and reads back.

pub mod ledger;
pub mod lock;
pub mod timestamp;
