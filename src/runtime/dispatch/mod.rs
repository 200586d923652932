//! The sensor dispatcher: firing sensors, running workers and recording their verdicts. The
//! shipped sensors it runs natively live in `sensors` (D8); a custom sensor's worker runs as a
//! process through `worker_process`; what either answers is judged by `protocol::verdict` (D4).

pub mod compiled_graph;
pub mod fire;
pub mod hook;
pub mod hook_workspace;
pub mod project_snapshot;
pub mod registry;
pub mod shell_writes;
pub mod time_limit;
pub mod write_event;
