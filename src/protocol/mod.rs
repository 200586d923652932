//! The contract between the compile and the runtime: what `aidlc compile` writes into
//! `stage-graph.json` and what the dispatcher, the write hook and the gates read back from it,
//! and what a sensor worker answers and how that answer is judged.
//!
//! The compile is the writer, the runtime the readers, and both halves take every spelling from
//! here: a graph field's key and its place in each graph format ([`graph_keys`],
//! [`graph_format`], D13), how a node is written and read back ([`stage_node`],
//! [`stage_graph`]), a binding's selection values ([`selection`]), the one `matches` matcher
//! ([`glob`], D5), where a stage's outputs go ([`output_paths`]), the worker's exit statuses and
//! stdout ([`worker_outcome`]), the verdict read from them ([`verdict`], D4) and what a failure
//! found ([`finding`]).
//!
//! - [`graph_keys`]: every key of the graph, spelled once, in the reference's order;
//! - [`stage_node`]: the one writer of a node (through [`pretty_writer`], the
//!   JavaScript-compatible formatter), and the node and binding types the runtime reads;
//! - [`stage_graph`]: the one strict reader of a graph's text;
//! - [`graph_format`]: the shapes of `stage-graph.json` (2.5, 2.6, gate) and the rule choosing one;
//! - [`pretty_writer`]: `JSON.stringify(value, null, 2)` written straight into a buffer;
//! - [`selection`]: `fire_on` and `default_severity`;
//! - [`glob`]: `SensorGlob`, the one matcher;
//! - [`output_paths`]: where a stage's declared outputs can be written (pure);
//! - [`worker_outcome`]: how a worker ends, as an exit status and stdout;
//! - [`verdict`]: what happened to a worker (`WorkerRun`) read as exactly one verdict;
//! - [`finding`]: one problem a sensor reported, the gate report's unit.
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
