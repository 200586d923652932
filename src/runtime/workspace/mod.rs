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
//! The files:
//! - `spaces.rs`: the active space, a space's folders, the folder-name rules, and cursor reads;
//! - `intents.rs`: intent records, the active intent, and the `intents.json` registry;
//! - `create.rs`: creating an intent record ([`create_intent`]);
//! - `clone_id.rs`: the host name and clone id that name this clone's audit shard;
//! - `state.rs`: the state file's fields, the active-directive marker (with its SHA-256 state
//!   digest), and the write hook's view of a record;
//! - `write_folders.rs`: the record-local folders the engine writes into (each checked by
//!   `crate::leaves::write_folder` before anything is created in it);
//! - `install_version.rs`: which reference version made the install ([`InstallVersion`],
//!   detected from its tools stamp, else its graph's keys, else the newest), and the
//!   record-local files each version names differently;
//! - `resolved.rs`: [`Workspace`], all of the above resolved once for one command, which every
//!   runtime path takes instead of a bare project folder;
//! - `error.rs`: [`WorkspaceError`].
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
pub use install_version::InstallVersion;
pub use intents::{
    ACTIVE_INTENT_CURSOR_FILE, INTENT_REGISTRY_FILE, active_intent, intent_records, record_root,
};
pub use resolved::Workspace;
pub use spaces::{active_space, intents_dir, is_kebab_slug, is_plain_folder_name, space_dir};
pub use state::{
    ActiveStageChoice, PresentWorkflow, SensorsOffSwitch, current_stage, present_workflow,
    read_state_field, read_state_text, sensors_off_by_environment, sensors_off_in_state,
    state_file_path,
};
pub use write_folders::{legacy_sensor_detail_dir, sensor_detail_dir};

#[cfg(test)]
mod test_support;
