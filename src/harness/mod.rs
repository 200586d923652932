//! Everything that differs between the agent harnesses a project runs under: the harness
//! folder, how hooks are registered, the payloads of the write and prompt events, the
//! environment variables that name the project, and the reference's own hooks by version.
//! Every other module asks this one; none spells a harness's folder, file or variable itself.
//!
//! - this file: [`Harness`], its folder, and picking the project's harness;
//! - [`environment`]: the variables that name the project folder;
//! - [`payload`]: reading a hook's payload and what it says (the written file, the `cwd`);
//! - [`reference_hooks`]: the reference's hook commands and the names its files carry;
//! - [`registration`]: the hook commands a harness's settings register (what `doctor` reads);
//! - [`install`]: `aidlc hook install`, writing the engine's hooks into those settings.
//!
//! Must not: print, or read anything but the files and variables named here.

pub mod environment;
pub mod install;
pub mod payload;
pub mod reference_hooks;
pub mod registration;

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};

/// The agent harness whose folder holds the installed framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Harness {
    Claude,
    Codex,
    Kiro,
    Cursor,
    Opencode,
}

impl Harness {
    /// In the order used to pick a default when several harness folders exist.
    pub const ALL: [Harness; 5] = [
        Harness::Claude,
        Harness::Codex,
        Harness::Kiro,
        Harness::Cursor,
        Harness::Opencode,
    ];

    /// The folder under the project root, e.g. `.claude` (opencode uses `.aidlc`).
    pub fn dir_name(self) -> &'static str {
        match self {
            Harness::Claude => ".claude",
            Harness::Codex => ".codex",
            Harness::Kiro => ".kiro",
            Harness::Cursor => ".cursor",
            Harness::Opencode => ".aidlc",
        }
    }

    /// The harness's own rules folder name, as the reference names it in the
    /// `GUARDRAIL_LOADED` row's `Path` (`.kiro/steering/`, `.codex/aidlc-rules/`, else `rules`).
    pub fn rules_subdir(self) -> &'static str {
        match self {
            Harness::Kiro => "steering",
            Harness::Codex => "aidlc-rules",
            Harness::Claude | Harness::Cursor | Harness::Opencode => "rules",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Kiro => "kiro",
            Harness::Cursor => "cursor",
            Harness::Opencode => "opencode",
        }
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The harness folders present in `project`, in [`Harness::ALL`] order.
pub fn harnesses_present(project: &Utf8Path) -> Vec<Harness> {
    Harness::ALL
        .into_iter()
        .filter(|harness| project.join(harness.dir_name()).is_dir())
        .collect()
}

/// The chosen harness's folder does not exist.
#[derive(Debug, thiserror::Error)]
#[error("compile requires an installed project harness at {dir}")]
pub struct NoHarnessFolder {
    pub dir: Utf8PathBuf,
}

/// `requested`, else the harness present (`.claude` first when several are). The chosen
/// harness folder must exist.
pub fn pick_harness(
    project_dir: &Utf8Path,
    requested: Option<Harness>,
) -> Result<Harness, NoHarnessFolder> {
    let harness = match requested {
        Some(harness) => harness,
        None => *harnesses_present(project_dir)
            .first()
            .ok_or_else(|| NoHarnessFolder {
                dir: project_dir.join(Harness::Claude.dir_name()),
            })?,
    };
    let dir = project_dir.join(harness.dir_name());
    if dir.is_dir() {
        Ok(harness)
    } else {
        Err(NoHarnessFolder { dir })
    }
}
