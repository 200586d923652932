//! Where a hook run belongs: the workspace its payload, command line and environment name
//! ([`hook_workspace`]), and whether this delivery of the payload is the first
//! ([`first_delivery`]); the write hook's (`write_event`) and the human-turn hook's.

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::{self, Layout, lexically_normal};
use crate::harness::{self, Harness, payload};
use crate::runtime::workspace::Workspace;

/// What a hook's command line and environment say about where it runs.
pub struct HookPlace<'a> {
    /// `--harness`, when given.
    pub requested_harness: Option<Harness>,
    /// `--project-dir`, when given.
    pub project_dir: Option<&'a Utf8Path>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The working folder, when it is valid UTF-8.
    pub cwd: Option<Utf8PathBuf>,
}

/// The workspace of a hook run: the project from `--project-dir`, the environment
/// (`AIDLC_PROJECT_DIR`, `CLAUDE_PROJECT_DIR`), the payload's `cwd`, or the working folder's
/// ancestors; the harness folder `--harness` names, else the payload's harness's when the
/// project has it, else the one present; its space and intent read once.
pub fn hook_workspace(
    place: &HookPlace<'_>,
    harness: Harness,
    payload: &[u8],
) -> Option<Workspace> {
    let cwd = payload::payload_cwd(payload).or_else(|| place.cwd.clone())?;
    let dir = discover::find_project_dir(place.project_dir, place.env, &cwd).ok()?;
    let dir = lexically_normal(&dir);
    let folder = match place.requested_harness {
        Some(requested) => harness::pick_harness(&dir, Some(requested)).ok()?,
        None => harness::pick_harness(&dir, Some(harness))
            .or_else(|_| harness::pick_harness(&dir, None))
            .ok()?,
    };
    Some(Workspace::resolve(Layout::new(&dir, folder, place.env)))
}

/// Codex delivers each event twice: only the first delivery of a payload counts.
pub fn first_delivery(
    harness: Harness,
    project_dir: &Utf8Path,
    hook: &str,
    payload: &[u8],
) -> bool {
    if harness != Harness::Codex {
        return true;
    }
    let Ok(temp_dir) = Utf8PathBuf::from_path_buf(std::env::temp_dir()) else {
        return true;
    };
    harness::delivery::first_delivery(&temp_dir, project_dir, hook, payload)
}
