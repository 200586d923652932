//! The workspace selectors (D11): which space and which intent record are active, where their
//! files live, this clone's audit shard, the folders the engine writes into, and the facts the
//! engine reads from a record (is a workflow present, which stage is active).
//!
//! Everything here is a pure function of the file system, as the reference's `aidlc-lib.ts`
//! resolves it: no printing, no diagnostics, and nothing written except the clone id, which is
//! minted once per clone, and a new intent record, which only [`create_intent`] writes. Reads
//! never fail loudly where the reference falls back (an unreadable cursor means "no cursor");
//! only a choice the user made explicitly, or a command that needs one intent and cannot tell
//! which, is an error.
//!
//! Must not: import the audit ledger or anything above it (the ledger imports this module);
//! creating an intent takes only `crate::leaves::audit_lock` and `crate::leaves::timestamp`, which sit below it.

mod clone_id;
mod create;
mod error;
pub mod example_intent;
mod install_version;
mod intents;
mod resolved;
mod spaces;
mod state;
mod write_folders;

pub use clone_id::{audit_dir, clone_id, existing_audit_shard, host_name};
pub use create::{CreatedIntent, create_intent};
pub use error::WorkspaceError;
pub use intents::{
    ACTIVE_INTENT_CURSOR_FILE, INTENT_REGISTRY_FILE, active_intent, intent_records, record_root,
};
pub use resolved::Workspace;
pub use spaces::{active_space, intents_dir, is_plain_folder_name, space_dir};
pub use state::{
    ActiveStageChoice, PresentWorkflow, SensorsOffSwitch, current_stage, present_workflow,
    read_state_field, read_state_text, sensors_off_by_environment, sensors_off_in_state,
    state_file_path,
};
pub use write_folders::{legacy_sensor_detail_dir, sensor_detail_dir};

#[cfg(test)]
mod test_support;
