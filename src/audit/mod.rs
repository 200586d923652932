//! The audit ledger's cross-process lock (and, later, the ledger itself).

pub mod lock;
