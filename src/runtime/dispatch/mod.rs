//! The sensor dispatcher: firing sensors, running workers and recording their verdicts.
//!
//! [`fire`] is one fire from pre-flight to printed verdict; [`hook`] is the write hook that
//! fires the active stage's write-fired sensors; [`registry`] loads the live manifests and
//! [`compiled_graph`] the compiled graph (read by the protocol's strict reader). The shipped sensors
//! it runs natively live in their own module, `sensors` (D8); a custom sensor's worker runs as a
//! process through `worker_process`, and what either answers is judged by the protocol's verdict
//! (`protocol::verdict`, D4).
//! [`write_event`] takes one write event of an agent harness from its payload to the write hook
//! of each file it names (the CLI only reads the payload and prints).
//! [`shell_writes`] keeps what the project holds before a shell tool call and tells the write
//! hook what the call changed ([`project_snapshot`] is the walk and the difference).
//! [`time_limit`] holds the enclosing limits above each fire's cap (the write hook's allowance,
//! the gate's dispatch cap, `gate check --timeout`) and the reading of their values.

pub mod compiled_graph;
pub mod fire;
pub mod hook;
pub mod hook_workspace;
pub mod project_snapshot;
pub mod registry;
pub mod shell_writes;
pub mod time_limit;
pub mod write_event;
