//! The leaves: small modules that import nothing of the crate outside this group, which every
//! other part may use.
//!
//! - [`diagnostics`]: problems in the user's files, as values;
//! - [`fs_util`]: the one file-system layer: bounded reads of inputs, contained and atomic writes;
//! - [`write_folder`]: the one check that keeps a folder the engine writes into inside the project;
//! - [`audit_lock`]: the cross-process lock the ledger, compile and plugins take;
//! - [`interrupt`]: the one SIGINT/SIGTERM/SIGHUP handler, and the live worker groups it stops;
//! - [`process_group`]: the one sender of signals to a worker's process group;
//! - [`js_text`]: the JavaScript trimming rules the reference's formats rely on;
//! - [`text_lines`]: the line and column of a byte offset, and lines with their start offsets;
//! - [`js_json`]: `JSON.stringify(value, null, 2)`, for every file the reference also writes;
//! - [`timestamp`]: the ledger's UTC timestamps, and the one nanosecond count since the epoch;
//! - [`random_hex`]: random lowercase hex names (fire ids, clone ids, temporaries);
//! - [`file_uri`]: `file://` URIs of paths, for the reports and the language server;
//! - [`github_actions`]: the one writer and escaper of GitHub Actions workflow commands;
//! - [`english`]: the wording rules every message shares (plural endings);
//! - [`changes`]: what was added, modified and removed between two states;
//! - [`exit_status`]: the process exit statuses (D9).

pub mod audit_lock;
pub mod changes;
pub mod diagnostics;
pub mod english;
pub mod exit_status;
pub mod file_uri;
pub mod fs_util;
pub mod github_actions;
pub mod interrupt;
pub mod js_json;
pub mod js_text;
pub mod process_group;
pub mod random_hex;
pub mod text_lines;
pub mod timestamp;
pub mod write_folder;
