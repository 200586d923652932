//! The gate's sensor step, for CI (`aidlc gate check`) and for the conductor (`aidlc engine gate
//! start|revise`): which deliverables a stage has, which gate sensors fire on them, the report,
//! and the enforcement that opens or refuses an approval gate.

pub mod check;
pub mod command;
pub mod deliverables;
pub mod disabled_stages;
pub mod fingerprints;
pub mod gate_fires;
pub mod merge;
pub mod progress;
pub mod report;
pub mod repository;
pub mod stale_graph;
pub mod step;
pub mod unseen_writes;
