//! The gate's sensor step, for CI (`aidlc gate check`) and for the conductor (`aidlc engine gate
//! start|revise`): which deliverables a stage has, which gate sensors fire on them, the report,
//! and the enforcement that opens or refuses an approval gate.
//!
//! - [`check`]: `aidlc gate check` as one computation: the records, their combined plan with
//!   the Sensors switch applied, the run, and the report;
//! - [`command`]: `aidlc gate check` and `aidlc gate merge`, one call each: the refusals, the
//!   run, the report files and step summary written, and the exit status with the notices that
//!   explain it, as values the CLI prints;
//! - [`disabled_stages`]: the refusal of a stage the plugin selection disabled, and the note
//!   of a check over every stage that skips them (D49);
//! - [`deliverables`]: the declared outputs of a stage that exist on disk, canonicalised and
//!   kept inside the stage's produce folders (D30, D6);
//! - [`gate_fires`]: the plan of fires (D6: once per deliverable, once per output folder for the
//!   stage-level sensors), sharding, and the parallel run;
//! - [`step`]: the conductor's gate step (`aidlc engine gate start|revise`): fingerprints,
//!   blocking enforcement, the override receipt and the gate row;
//! - [`fingerprints`]: the BLAKE3 staleness bracket both gates put around blocking fires;
//! - [`progress`]: what the audit ledger says about a stage: started, gate open;
//! - [`report`]: the values every output format renders (the formats are `crate::report`'s);
//! - [`merge`]: `aidlc gate merge`: shard JSON reports read back, checked and joined;
//! - [`repository`]: where the project sits in its repository (the prefix of CI paths);
//! - [`unseen_writes`]: deliverables changed after the write hook last ran (a hook that never
//!   ran is named);
//! - [`stale_graph`]: whether the compiled graph is what its sources compile to now.

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
