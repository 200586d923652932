//! The contract between the compile and the runtime: what `aidlc compile` writes into
//! `stage-graph.json` and what the dispatcher, the write hook and the gates read back from it,
//! and what a sensor worker answers and how that answer is judged.
//!
//! The compile is the writer, the runtime the readers, and both halves take every spelling from
//! here: a graph field's key and its place in each graph format ([`graph_keys`],
//! [`graph_format`], D13), how a node is written and read back ([`stage_node`],
//! [`graph_reader`]), a binding's selection values ([`selection`]), the one `matches` matcher
//! ([`glob`], D5), where a stage's outputs go ([`output_paths`]), the worker's exit statuses and
//! stdout ([`worker_outcome`]), the verdict read from them ([`verdict`], D4) and what a failure
//! found ([`finding`]).
//!
//! Invariants: this is the lowest domain layer. It imports only std, serde and `serde_json`,
//! camino, globset, thiserror, strum, libc (signal numbers) and the leaf helpers `js_json` and
//! `js_text`; nothing here imports another module of the crate. It uses no salsa, touches no file
//! system (a reader is handed the bytes), reads no environment and prints nothing.

pub mod finding;
pub mod glob;
pub mod graph_format;
pub mod graph_keys;
pub mod graph_reader;
pub mod output_paths;
pub mod pretty_writer;
pub mod selection;
pub mod stage_node;
pub mod verdict;
pub mod worker_outcome;
