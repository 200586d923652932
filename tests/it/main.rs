//! The integration tests: one binary, one module per area.
//!
//! - `support`: the temp-project builder and the snapshot filters every test uses;
//! - `compile`: `aidlc init` and `aidlc compile` end to end (graph bytes, formats, exit codes);
//! - `bad_input`: every kind of broken input gets a diagnostic and leaves the old graph alone;
//! - `fail_closed_compile`: dead gate bindings, strict manifests, diagnostics on very long
//!   lines, and a `compile --check` that writes nothing (issue 10);
//! - `compile_fuzz`: mutated manifests and stage files never panic, and a failing compile
//!   leaves the previous graph alone (property-based);
//! - `incremental`: the salsa event log shows which queries re-run after an edit;
//! - `up_to_date`: the no-op path and everything that must defeat it;
//! - `watch`: `compile --watch` driven by real file edits;
//! - `engine`: `aidlc engine sensor …`, the worker protocol and the write hook, with fake workers;
//! - `workers`: the native shipped workers agree in-process and out-of-process;
//! - `gate`: `aidlc gate check` (deliverables, parallel and sharded runs, exit codes);
//! - `gate_step`: `aidlc engine gate start|revise`, the conductor's gate step (enforcement,
//!   fingerprints, the override receipt, the gate row and its notices);
//! - `docs`: the documentation stays in step with the code.

mod bad_input;
mod compile;
mod compile_fuzz;
mod docs;
mod engine;
mod fail_closed_compile;
mod gate;
mod gate_step;
mod incremental;
mod support;
mod up_to_date;
mod watch;
mod workers;
