//! The audit ledger: the rows, shards and detail files it writes and reads back. Its
//! cross-process lock is `crate::audit_lock` and its timestamps `crate::timestamp`, both below
//! the workspace, which takes them when it creates an intent record.

pub mod human_turn;
pub mod ledger;
