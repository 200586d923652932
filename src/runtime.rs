//! The runtime half: what happens while a workflow runs. It reads the compiled stage graph
//! through [`crate::protocol`], never the compile's database; from the compile half it uses
//! only the project's layout and the registry functions a hook runs without a database.

pub mod audit;
pub mod dispatch;
pub mod gate;
pub mod learnings;
pub mod receipts;
pub mod sensors;
pub mod worker_process;
pub mod workspace;
