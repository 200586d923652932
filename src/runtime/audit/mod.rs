//! The audit ledger: the rows, shards and detail files it writes and reads back. Its
//! cross-process lock is `crate::leaves::audit_lock` and its timestamps `crate::leaves::timestamp`, both below
//! the workspace, which takes them when it creates an intent record.

pub mod human_turn;
pub mod ledger;
