//! The audit ledger: its cross-process lock, and the rows, shards and detail files it writes.

pub mod ledger;
pub mod lock;
