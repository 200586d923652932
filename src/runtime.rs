//! The runtime half: what happens while a workflow runs. It reads the compiled stage graph
//! through [`crate::protocol`], never the compile's database; from the compile half it uses
//! only the project's layout and the registry functions a hook runs without a database.
//!
//! - [`workspace`]: the active space, intent record and audit shard, the folders the engine writes
//!   into, and the write hook's view of a record;
//! - [`dispatch`]: fire one sensor, the write hook, the live registry and graph, time limits;
//! - [`worker_process`]: run one worker process in its own group under a deadline;
//! - [`sensors`]: the shipped sensors, the product's own checks, each described once (D8);
//! - [`gate`]: `aidlc gate check` and the gate step: deliverables, parallel gate dispatch and
//!   the report's values;
//! - [`audit`]: the audit ledger (typed events, shards, detail files);
//! - [`receipts`]: `engine log decision|answer` and the human-turn hook, the override's receipt;
//! - [`learnings`]: `engine learnings surface|persist`, the learning loop's engine steps.

pub mod audit;
pub mod dispatch;
pub mod gate;
pub mod learnings;
pub mod receipts;
pub mod sensors;
pub mod worker_process;
pub mod workspace;
