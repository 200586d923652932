//! `aidlc`: a fast, strict engine for the AI-DLC sensor system.
//!
//! The modules follow the data flow: the compile half turns the user's files into the stage
//! graph, the protocol is what it writes and the runtime half reads, the runtime half runs the
//! sensors and the gates, and the edges turn both into commands, editor answers and reports.
//!
//! - [`leaves`]: the file-system layer, diagnostics as values, the lock, signals, the
//!   reference's text and JSON rules; they import nothing of the crate but each other;
//! - [`protocol`]: the contract the compile writes and the runtime reads: the stage graph's
//!   fields and formats, the binding's selection values, the one glob matcher, the output
//!   layout, the worker's answer and its verdict, the findings;
//! - [`harness`]: what differs between agent harnesses (folders, hook registration, payloads,
//!   project variables, the guard), and `aidlc hook install`;
//! - [`compile`]: the compile half: discover, read, parse, resolve, number, write (and watch);
//! - [`runtime`]: the runtime half: the workspace, the write hook's dispatch, the workers, the
//!   shipped sensors, the gates, the audit ledger, the receipts and the learning loop;
//! - [`plugin`]: `aidlc plugin add|remove|list|sync`, plugins composed into an install;
//! - [`report`]: the report model and one renderer per format, for the compile and the gate;
//! - [`doctor`]: `aidlc doctor`, rows of pass / warn / fail with their fixes;
//! - [`schema`]: JSON Schemas of manifests, stages and the gate report, derived from the types;
//! - [`graph_picture`]: `aidlc graph`, the compiled stage graph as Mermaid, dot or JSON;
//! - [`lsp`]: `aidlc lsp`, the language server over the same warm database (it owns stdio);
//! - [`cli`]: arguments, settings and printing (the only module that writes to the terminal).

// Unit tests build their fixture projects on the disk directly; the code they test writes
// through the file-system layer (clippy.toml, CONTRIBUTING.md "Writing a file").
#![cfg_attr(
    test,
    expect(
        clippy::disallowed_methods,
        reason = "unit tests build their fixtures directly; the code under test goes through the file-system layer"
    )
)]

pub mod cli;
pub mod compile;
pub mod doctor;
pub mod graph_picture;
pub mod harness;
pub mod leaves;
pub mod lsp;
pub mod plugin;
pub mod protocol;
pub mod report;
pub mod runtime;
pub mod schema;

// Generated projects for the unit tests, shared with the integration tests and the benchmarks
// (which include the same file); not part of the shipped library.
#[cfg(test)]
#[path = "../tests/support/synthetic.rs"]
#[expect(dead_code, reason = "the unit tests use only some of the generators")]
mod synthetic;
