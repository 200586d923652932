//! Everything that differs between the agent harnesses a project runs under: the harness
//! folder, how hooks are registered, the payloads of the write and prompt events, the
//! environment variables that name the project, and the reference's own hooks by version.
//! What a hook, its registration and its payload need to know about a harness lives here, and
//! the other modules ask it.
//!
//! Must not: print, or read anything but the files and variables named here.

pub mod commands;
pub mod delivery;
pub mod environment;
pub mod gitignore;
pub mod guard;
pub mod install;
pub mod payload;
pub mod reference_audit;
pub mod reference_hooks;
pub mod registration;
pub mod transcript;

use camino::{Utf8Path, Utf8PathBuf};

/// The agent harness a project runs under, and so the folder that holds its framework.
///
/// Kiro CLI before 3.0 (`kiro`, hooks in the conductor agent's file), Kiro CLI 3.x
/// (`kiro-cli-v3`, standalone hook files) and Kiro IDE (`kiro-ide`) share the `.kiro` folder and
/// differ in how they register and call hooks; GitHub Copilot (`copilot`) shares opencode's
/// `.aidlc` engine folder and registers its hooks in `.github/hooks/`.
//
// No doc comments on the variants: clap would show them as the values' help.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Harness {
    Claude,
    Codex,
    Kiro,
    KiroCliV3,
    KiroIde,
    Cursor,
    Copilot,
    Opencode,
}

impl Harness {
    /// One harness per folder, in the order used to pick a default when several harness
    /// folders exist (Kiro IDE and Kiro CLI 3.x share Kiro's folder, Copilot opencode's:
    /// [`hook_harness`] tells them apart).
    pub const ALL: [Harness; 5] = [
        Harness::Claude,
        Harness::Codex,
        Harness::Kiro,
        Harness::Cursor,
        Harness::Opencode,
    ];

    /// The harness `name` names as `--harness` takes it (`claude`, `kiro-ide`, …).
    pub fn named(name: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(name, false).ok()
    }

    /// The folder under the project root, e.g. `.claude` (opencode uses `.aidlc`).
    pub fn dir_name(self) -> &'static str {
        match self {
            Harness::Claude => ".claude",
            Harness::Codex => ".codex",
            Harness::Kiro | Harness::KiroCliV3 | Harness::KiroIde => ".kiro",
            Harness::Cursor => ".cursor",
            Harness::Copilot | Harness::Opencode => ".aidlc",
        }
    }

    /// The harness's own rules folder name, as the reference names it in the
    /// `GUARDRAIL_LOADED` row's `Path` (`.kiro/steering/`, `.codex/aidlc-rules/`, else `rules`).
    pub fn rules_subdir(self) -> &'static str {
        match self {
            Harness::Kiro | Harness::KiroCliV3 | Harness::KiroIde => "steering",
            Harness::Codex => "aidlc-rules",
            Harness::Claude | Harness::Cursor | Harness::Copilot | Harness::Opencode => "rules",
        }
    }

    /// The name `--harness` takes (clap's value name, the variant in kebab case), which is also
    /// how it is displayed.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// How the README and messages name the product.
    pub fn product_name(self) -> &'static str {
        match self {
            Harness::Claude => "Claude Code",
            Harness::Codex => "Codex",
            Harness::Kiro => "Kiro CLI",
            Harness::KiroCliV3 => "Kiro CLI 3",
            Harness::KiroIde => "Kiro IDE",
            Harness::Cursor => "Cursor",
            Harness::Copilot => "GitHub Copilot",
            Harness::Opencode => "opencode",
        }
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

/// The harness whose hooks a project's shared folder registers: `requested` when given, else
/// `folder_harness` (what [`pick_harness`] chose), except for the two shared folders. A `.kiro`
/// folder is the harness its `tools/data/harness.json` names (`"name": "kiro"`, `"kiro-cli-v3"`
/// or `"kiro-ide"`, as `aidlc init` and the reference's installs record it), and without such a
/// name Kiro IDE's when its `hooks/` holds Kiro IDE hook files (`*.kiro.hook`, or `*.json`). An
/// `.aidlc` folder is GitHub Copilot's when its `harness.json` names `copilot`, or, naming
/// nothing, when the project has Copilot's hook file (`.github/hooks/aidlc.json`); else
/// opencode's.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "Kiro IDE reads hook files by their exact extension"
)]
pub fn hook_harness(
    project_dir: &Utf8Path,
    folder_harness: Harness,
    requested: Option<Harness>,
) -> Harness {
    if let Some(harness) = requested {
        return harness;
    }
    if let Some(recorded) = harness_recorded_in_harness_json(project_dir, folder_harness) {
        return recorded;
    }
    match folder_harness {
        Harness::Opencode if project_dir.join(install::COPILOT_HOOKS_FILE).is_file() => {
            return Harness::Copilot;
        }
        Harness::Kiro => {}
        other => return other,
    }
    let hooks_dir = project_dir.join(Harness::Kiro.dir_name()).join("hooks");
    let holds_ide_hooks = hooks_dir.read_dir_utf8().is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|entry| {
            let name = entry.file_name();
            name.ends_with(".kiro.hook") || name.ends_with(".json")
        })
    });
    if holds_ide_hooks {
        Harness::KiroIde
    } else {
        Harness::Kiro
    }
}

/// The reference's install record under the harness folder (`name`, `harnessDir`,
/// `rulesSubdir`, and the plugin selection `plugins`).
pub const HARNESS_JSON_FILE: &str = "tools/data/harness.json";

/// The harness sharing `folder_harness`'s folder that its `tools/data/harness.json` names in
/// `name`: `None` when the file is missing or unreadable, or names no harness of that folder.
fn harness_recorded_in_harness_json(
    project_dir: &Utf8Path,
    folder_harness: Harness,
) -> Option<Harness> {
    if !matches!(folder_harness, Harness::Kiro | Harness::Opencode) {
        return None;
    }
    let path = project_dir
        .join(folder_harness.dir_name())
        .join(HARNESS_JSON_FILE);
    let text = crate::leaves::fs_util::read_input_text(&path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let name = value.get("name")?.as_str()?.trim();
    Harness::named(name).filter(|harness| harness.dir_name() == folder_harness.dir_name())
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum as _;

    use super::Harness;

    /// The name the engine writes into hook commands and displays is the one `--harness` parses.
    #[test]
    fn each_harness_is_named_as_its_harness_option_parses_it() {
        for harness in Harness::value_variants() {
            let value = harness.to_possible_value().unwrap();
            assert_eq!(value.get_name(), harness.name());
            assert_eq!(harness.to_string(), harness.name());
        }
        assert_eq!(Harness::KiroCliV3.name(), "kiro-cli-v3");
    }
}
