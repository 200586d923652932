//! `aidlc`: a fast, strict engine for the AI-DLC sensor system.
//!
//! The modules follow the data flow of a compile:
//!
//! - [`cli`]: arguments, settings and printing (the only module that writes to the terminal);
//! - [`discover`]: find the project and harness, list and read the input files;
//! - [`db`]: the salsa database and its inputs (file texts enter here, nowhere else);
//! - [`syntax`]: pure text → tree → typed definitions (frontmatter, YAML, manifests, stages);
//! - [`parse`]: tracked queries that parse each file and the small catalogues;
//! - [`resolve`]: the sensor registry, `sensors_applicable`, the agent roster check;
//! - [`stage_graph`]: numbering, cross-stage checks, and the canonical JSON emission;
//! - [`harness`]: what differs between agent harnesses (folders, hook registration, payloads,
//!   project variables), and `aidlc hook install`;
//! - [`protocol`]: the contract the compile writes and the runtime reads: the stage graph's
//!   fields and formats, the binding's selection values, the one glob matcher, the output
//!   layout, the worker's answer and its verdict, the findings;
//! - [`doctor`]: `aidlc doctor`, rows of pass / warn / fail with their fixes;
//! - [`compile`]: one compile end to end, writing or checking the outputs;
//! - [`up_to_date`]: the record that lets an unchanged project skip the compile entirely;
//! - [`watch`]: `compile --watch`, a warm database fed by file events;
//! - [`lsp`]: `aidlc lsp`, the language server over the same warm database (it owns stdio);
//! - [`gate`]: `aidlc gate check`: deliverables, parallel gate dispatch and the report;
//! - [`js_text`]: the JavaScript trimming rules the reference's formats rely on;
//! - [`js_json`]: `JSON.stringify(value, null, 2)`, for every file the reference also writes;
//! - [`random_hex`]: random lowercase hex names (fire ids, clone ids, temporaries);
//! - [`learnings`]: `engine learnings surface|persist`, the learning loop's engine steps;
//! - [`receipts`]: `engine log decision|answer` and the human-turn hook, the override's receipt;
//! - [`audit`]: the audit ledger (typed events, shards, detail files);
//! - [`audit_lock`]: the cross-process lock the ledger, compile and plugins take;
//! - [`timestamp`]: the ledger's UTC timestamps;
//! - [`write_folder`]: the one check that keeps a folder the engine writes into inside the project;
//! - [`workspace`]: the active space, intent record and audit shard, the folders the engine writes
//!   into, and the write hook's view of a record;
//! - [`dispatch`]: fire one sensor, the write hook, the live registry and graph, time limits;
//! - [`worker_process`]: run one worker process in its own group under a deadline;
//! - [`sensors`]: the shipped sensors, the product's own checks, each described once (D8);
//! - [`interrupt`]: the one SIGINT/SIGTERM/SIGHUP handler, and the live worker groups it stops;
//! - [`process_group`]: the one sender of signals to a worker's process group;
//! - [`framework`]: the built-in default framework written by `aidlc init`;
//! - [`diagnostics`]: problems in the user's files, as values;
//! - [`report`]: the report model and one renderer per format, for the compile and the gate;
//! - [`github_actions`]: the one writer and escaper of GitHub Actions workflow commands;
//! - [`english`]: the wording rules every message shares (plural endings);
//! - [`graph_picture`]: `aidlc graph`, the compiled stage graph as Mermaid, dot or JSON;
//! - [`schema`]: JSON Schemas of manifests, stages and the gate report, derived from the types;
//! - [`plugin`]: `aidlc plugin add|remove|list|sync`, plugins composed into an install.

// Unit tests build their fixture projects on the disk directly; the code they test writes
// through the file-system layer (clippy.toml, CONTRIBUTING.md "Writing a file").
#![cfg_attr(
    test,
    expect(
        clippy::disallowed_methods,
        reason = "unit tests build their fixtures directly; the code under test goes through the file-system layer"
    )
)]

pub mod audit;
pub mod audit_lock;
pub mod cli;
pub mod compile;
pub mod db;
pub mod diagnostics;
pub mod discover;
pub mod dispatch;
pub mod doctor;
pub mod english;
pub mod file_uri;
pub mod framework;
pub mod fs_util;
pub mod gate;
pub mod github_actions;
pub mod graph_picture;
pub mod harness;
pub mod interrupt;
pub mod js_json;
pub mod js_text;
pub mod learnings;
pub mod lsp;
pub mod parse;
pub mod plugin;
pub mod process_group;
pub mod protocol;
pub mod random_hex;
pub mod receipts;
pub mod report;
pub mod resolve;
pub mod schema;
pub mod sensors;
pub mod stage_graph;
pub mod syntax;
pub mod timestamp;
pub mod up_to_date;
pub mod watch;
pub mod worker_process;
pub mod workspace;
pub mod write_folder;

// Generated projects for the unit tests, shared with the integration tests and the benchmarks
// (which include the same file); not part of the shipped library.
#[cfg(test)]
#[path = "../tests/support/synthetic.rs"]
#[expect(dead_code, reason = "the unit tests use only some of the generators")]
mod synthetic;
