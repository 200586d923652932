//! The learning loop's two engine steps (the seed's "Gate-ritual handoff", D43–D45):
//! `aidlc engine learnings surface` reads a stage's `memory.md` into candidates, and
//! `aidlc engine learnings persist` writes the conductor's picks (the selections file) as
//! practice lines and scaffolded, bound sensors, with the reference's `RULE_LEARNED` and
//! `SENSOR_PROPOSED` rows.
//!
//! Must not: print (replies are values), or judge a learning (the conductor does).

mod persist;
mod scaffold;
mod selections;
mod surface;

pub use persist::persist;
pub use surface::surface;

use camino::Utf8PathBuf;

/// Why a learnings step stopped: exit 1, with the reference's wording (D43–D45), except
/// [`LearningsError::Invalid`].
#[derive(Debug, thiserror::Error)]
pub enum LearningsError {
    #[error("{0}")]
    Refused(String),
    /// A selection that cannot be written as given (an unknown scope or origin stage, an id
    /// that exists, a value a reader would see otherwise): exit 2, and nothing was written.
    #[error("{0}")]
    Invalid(String),
    #[error(
        "{0}. The audit lock dir may be orphaned by a hard-killed run; remove it manually (look under the system temp dir for the aidlc audit lock) and retry."
    )]
    Lock(crate::leaves::audit_lock::LockError),
    #[error("persist failed: {0}")]
    Persist(String),
    #[error("persist failed: cannot write {path}: {source}")]
    Write {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
}
