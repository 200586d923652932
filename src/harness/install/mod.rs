//! `aidlc hook install`: registers the engine's write hook (`engine hook run-sensors`) and
//! human-turn hook (`engine hook record-human-turn`) where the project's harness reads its
//! hooks, or removes them (`--uninstall`):
//!
//! | harness | file | write event | prompt event |
//! |---|---|---|---|
//! | Claude Code | `.claude/settings.json` | `PostToolUse`, `Write\|Edit` | `UserPromptSubmit`, and `PostToolUse` `AskUserQuestion` (a pick in the question widget) |
//! | Codex | `.codex/hooks.json` | `PostToolUse`, `apply_patch` | `UserPromptSubmit` |
//! | Kiro CLI | `.kiro/agents/aidlc.json` (the conductor agent) | `postToolUse`, `fs_write` | `userPromptSubmit` |
//! | Kiro CLI 3 | `.kiro/hooks/aidlc-engine-cli-*.json` | `PostToolUse` | `UserPromptSubmit` |
//! | Kiro IDE | `.kiro/hooks/aidlc-engine-*.json` and `*.kiro.hook` | `PostToolUse` / `postToolUse` | `UserPromptSubmit` / `promptSubmit` |
//! | Cursor | `.cursor/hooks.json` | `afterFileEdit`, `afterShellExecution` | `beforeSubmitPrompt` |
//! | GitHub Copilot | `.github/hooks/aidlc.json` | `PostToolUse` | `UserPromptSubmit` |
//! | opencode | `.opencode/plugin/aidlc-engine.ts` | `tool.execute.after` | `chat.message` |
//!
//! The reference's own entries for the same events are taken over in place (`commands`): its
//! write hook becomes the engine's; an adapter entry that also writes the artifact audit rows
//! becomes the engine's write hook with `--audit-hook`, which runs the reference's audit hook
//! first, as the adapter did; Kiro CLI's prompt entry, which does more than record the turn,
//! stays and counts.
//!
//! Invariants:
//! - every byte the engine does not own stays as it was (`json_text`): other keys, other hooks,
//!   compact arrays, a byte-order mark, the line endings, whether the file ends with a newline;
//! - a run that changes nothing writes nothing (a second run changes no byte);
//! - nothing is written unless every file of the plan can be: a malformed file (with its line
//!   and column), a key written twice, a shape the harness does not read, a file reached
//!   through a link, a read-only file and a file of the engine's name that is not the engine's
//!   are refused before anything is written; each file is replaced atomically.
//!
//! Must not: print (the plan is returned to `cli`), or touch a file outside the project.

mod codex_trust;
mod files;
mod hook_lists;
pub mod json_text;

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::Harness;
pub use crate::harness::commands::DEFAULT_PROGRAM;
use crate::leaves::fs_util::Flush;
use crate::leaves::fs_util::contained::{self, FileError, ProjectPath};
pub use files::{
    KIRO_IDE_HOOKS_DIR, OPENCODE_PLUGIN_FILE, REFERENCE_OPENCODE_PLUGIN_FILE, ide_hook_commands,
    opencode_plugin_commands,
};
pub use hook_lists::{Entry, Shape, entries as hook_list_entries};
use hook_lists::{HookListFile, Site};

use crate::harness::commands::HookRole;

/// Install or remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAction {
    Install,
    Uninstall,
}

/// What to do, for which harness of which project.
#[derive(Debug, Clone, Copy)]
pub struct InstallRequest<'a> {
    pub project_dir: &'a Utf8Path,
    /// The harness whose hooks to edit (`harness::hook_harness`).
    pub harness: Harness,
    /// How the hooks run aidlc (`aidlc`, `npx aidlc`, an absolute path).
    pub program: &'a str,
    pub action: HookAction,
}

/// What a run would do to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePlan {
    pub path: Utf8PathBuf,
    /// The file's text before (`None` when it does not exist).
    pub before: Option<String>,
    /// Its text after (`None` when it is removed, or stays absent).
    pub after: Option<String>,
    /// One line per change, e.g. `PostToolUse: replaced bun ".claude/hooks/aidlc-run-sensors.ts"`.
    pub changes: Vec<String>,
    /// What the user should know that is not a change (a command kept as it was).
    pub notes: Vec<String>,
}

impl FilePlan {
    fn unchanged(path: Utf8PathBuf, before: Option<String>) -> Self {
        Self {
            path,
            after: before.clone(),
            before,
            changes: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A file the engine writes whole: `before` becomes `wanted` (`None`: removed, or left
    /// absent), with one change line, `added` for a file that did not exist.
    fn whole(
        path: Utf8PathBuf,
        before: Option<String>,
        wanted: Option<String>,
        added: &str,
    ) -> Self {
        let mut plan = Self::unchanged(path, before);
        if plan.before != wanted {
            plan.changes.push(match (&plan.before, &wanted) {
                (None, Some(_)) => added.to_owned(),
                (Some(_), None) => "removed".to_owned(),
                _ => "updated".to_owned(),
            });
            plan.after = wanted;
        }
        plan
    }

    /// Whether the run changes any byte of this file.
    pub fn changes_the_file(&self) -> bool {
        self.before != self.after
    }
}

/// What a run would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPlan {
    pub harness: Harness,
    pub files: Vec<FilePlan>,
    /// What the user must do after the files are written (Codex asks to trust a new hook).
    pub follow_ups: Vec<String>,
}

impl HookPlan {
    /// Whether the run changes any byte of any file.
    pub fn changes_anything(&self) -> bool {
        self.files.iter().any(FilePlan::changes_the_file)
    }
}

/// The refusal of a file of the engine's name that is not the engine's.
const NOT_OURS: &str =
    "exists and is not the one aidlc writes; refusing to replace it (move it away, then run again)";

/// Why nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum HookInstallError {
    /// The file system's refusal to `action` (`read`, `write`, `remove`) the file, or the
    /// project's refusal of its path.
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{path}:{error}; the file was not changed")]
    Malformed {
        path: Utf8PathBuf,
        error: json_text::JsonTextError,
    },
    #[error("{path}: {what} is not {expected}; the file was not changed")]
    WrongShape {
        path: Utf8PathBuf,
        what: String,
        expected: &'static str,
    },
    /// A file the plan must not write as it stands, and why (`reason` follows the path).
    #[error("{path} {reason}")]
    Refused {
        path: Utf8PathBuf,
        reason: &'static str,
    },
}

/// How one harness registers the engine's hooks: the one description that install, uninstall,
/// the dry run and `doctor` (`harness::registration`) all read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRegistration {
    /// The file (or folder) that registers the hooks, project-relative.
    pub path: Utf8PathBuf,
    pub files: RegistrationFiles,
}

/// The kind of file a harness reads its hooks from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one registration is built per command run; boxing the hook list gains nothing"
)]
pub enum RegistrationFiles {
    /// One JSON settings file listing the hook commands (`hook_lists`).
    HookList(HookListFile),
    /// One file per hook in Kiro IDE's hooks folder (Kiro IDE, Kiro CLI 3: `files`).
    KiroIdeHookFiles,
    /// The engine's opencode plugin (`files`).
    OpencodePlugin,
}

impl HookRegistration {
    /// The event `role` must be registered under, as the harness names it (Kiro IDE: its
    /// current format's trigger).
    pub fn event(&self, role: HookRole) -> &'static str {
        match (&self.files, role) {
            (RegistrationFiles::HookList(file), role) => file.site(role).event,
            (RegistrationFiles::KiroIdeHookFiles, HookRole::Write) => "PostToolUse",
            (RegistrationFiles::KiroIdeHookFiles, HookRole::HumanTurn) => "UserPromptSubmit",
            (RegistrationFiles::KiroIdeHookFiles, HookRole::Guard) => "PreToolUse",
            (RegistrationFiles::OpencodePlugin, HookRole::Write) => "tool.execute.after",
            (RegistrationFiles::OpencodePlugin, HookRole::HumanTurn) => "chat.message",
            (RegistrationFiles::OpencodePlugin, HookRole::Guard) => "tool.execute.before",
        }
    }
}

/// Where and how `harness` registers its hooks.
pub fn hook_registration(harness: Harness) -> HookRegistration {
    let dir = Utf8PathBuf::from(harness.dir_name());
    let list = |path: Utf8PathBuf, file| HookRegistration {
        path,
        files: RegistrationFiles::HookList(file),
    };
    let groups = |write_matcher, shell_matcher| HookListFile {
        shape: Shape::Groups,
        fresh: hook_lists::EMPTY_OBJECT,
        write: Site::new("PostToolUse", Some(write_matcher), None),
        shell_writes: Some(Site::new("PostToolUse", Some(shell_matcher), None)),
        human_turn: Site::new("UserPromptSubmit", None, None),
        // No matcher: every tool call.
        guard: Site::new("PreToolUse", None, None),
        picked_answers: None,
        tool_guard: None,
        more_file_tools: None,
    };
    match harness {
        Harness::Claude => list(
            dir.join("settings.json"),
            HookListFile {
                picked_answers: Some(Site::new(
                    "PostToolUse",
                    Some(crate::harness::transcript::ASK_USER_QUESTION_TOOL),
                    None,
                )),
                // The file tools the reference's `Write|Edit` group leaves out: on a reference
                // install taken over in place, the write hook runs for them in a group of its own.
                more_file_tools: Some(Site::new(
                    "PostToolUse",
                    Some("MultiEdit|NotebookEdit"),
                    None,
                )),
                // The shell tool's `PostToolUse` runs the write hook in a group of its own.
                ..groups("Write|Edit|MultiEdit|NotebookEdit", "Bash")
            },
        ),
        // Codex reports every shell command (`exec_command`, `shell`) as `Bash` to its hooks.
        Harness::Codex => list(dir.join("hooks.json"), groups("apply_patch", "Bash")),
        Harness::Kiro => list(dir.join(KIRO_CLI_AGENT_FILE), kiro_cli_hooks()),
        Harness::Cursor => list(dir.join("hooks.json"), cursor_hooks()),
        Harness::Copilot => list(Utf8PathBuf::from(COPILOT_HOOKS_FILE), copilot_hooks()),
        Harness::KiroIde | Harness::KiroCliV3 => HookRegistration {
            path: Utf8PathBuf::from(KIRO_IDE_HOOKS_DIR),
            files: RegistrationFiles::KiroIdeHookFiles,
        },
        Harness::Opencode => HookRegistration {
            path: Utf8PathBuf::from(".opencode/plugin"),
            files: RegistrationFiles::OpencodePlugin,
        },
    }
}

/// The Kiro CLI conductor agent's hooks: commands with a matcher and a timeout each.
fn kiro_cli_hooks() -> HookListFile {
    let site = |event, matcher, timeout_ms| Site::new(event, matcher, Some(timeout_ms));
    HookListFile {
        shape: Shape::Commands,
        fresh: hook_lists::EMPTY_OBJECT,
        write: site("postToolUse", Some("fs_write"), KIRO_CLI_WRITE_TIMEOUT_MS),
        shell_writes: Some(site(
            "postToolUse",
            Some("execute_bash"),
            KIRO_CLI_WRITE_TIMEOUT_MS,
        )),
        human_turn: site("userPromptSubmit", None, KIRO_CLI_PROMPT_TIMEOUT_MS),
        guard: site("preToolUse", Some("*"), KIRO_CLI_PROMPT_TIMEOUT_MS),
        picked_answers: None,
        tool_guard: None,
        more_file_tools: None,
    }
}

/// Cursor's `hooks.json`: the write hook after each file edit and each shell command, the guard
/// before each shell command (which also keeps the project's snapshot for the write hook) and
/// before each other tool call (`preToolUse`: its file tools' writes and deletions), the
/// human-turn hook before each prompt is sent. Cursor's hooks have no matcher and no timeout.
fn cursor_hooks() -> HookListFile {
    let site = |event| Site::new(event, None, None);
    HookListFile {
        shape: Shape::Commands,
        fresh: VERSION_ONE,
        write: site("afterFileEdit"),
        shell_writes: Some(site("afterShellExecution")),
        human_turn: site("beforeSubmitPrompt"),
        guard: site("beforeShellExecution"),
        picked_answers: None,
        tool_guard: Some(site("preToolUse")),
        more_file_tools: None,
    }
}

/// Copilot's `.github/hooks/aidlc.json`, as the reference registers it: capitalised events
/// (`PostToolUse`, for which the Copilot CLI sends underscored keys) and no matcher (VS Code ignores matchers),
/// so the write hook's one `PostToolUse` entry sees the file tools and the shell tool alike.
fn copilot_hooks() -> HookListFile {
    let site = |event, timeout_ms| Site::new(event, None, Some(timeout_ms));
    HookListFile {
        shape: Shape::Scripts,
        fresh: VERSION_ONE,
        write: site("PostToolUse", KIRO_CLI_WRITE_TIMEOUT_MS),
        shell_writes: None,
        human_turn: site("UserPromptSubmit", KIRO_CLI_PROMPT_TIMEOUT_MS),
        guard: site("PreToolUse", KIRO_CLI_PROMPT_TIMEOUT_MS),
        picked_answers: None,
        tool_guard: None,
        more_file_tools: None,
    }
}

/// A hooks file that starts by saying its schema's version, as Cursor's and Copilot's do.
const VERSION_ONE: &str = "{\n  \"version\": 1\n}\n";
/// The Copilot hooks file the reference registers its hooks in, project-relative (Copilot reads
/// every `.github/hooks/*.json`).
pub const COPILOT_HOOKS_FILE: &str = ".github/hooks/aidlc.json";

/// The Kiro CLI agent whose configuration gets the hooks: the reference's AI-DLC conductor.
const KIRO_CLI_AGENT_FILE: &str = "agents/aidlc.json";
/// Kiro CLI stops a hook after its `timeout_ms` (the reference gives its write hook 120 s).
const KIRO_CLI_WRITE_TIMEOUT_MS: u32 = 120_000;
const KIRO_CLI_PROMPT_TIMEOUT_MS: u32 = 30_000;

/// Plan the run; writes nothing.
pub fn plan(request: &InstallRequest<'_>) -> Result<HookPlan, HookInstallError> {
    let harness = request.harness;
    let registration = hook_registration(harness);
    let mut files = match registration.files {
        RegistrationFiles::KiroIdeHookFiles => files::plan_kiro_ide(request)?,
        RegistrationFiles::OpencodePlugin => vec![files::plan_opencode(request)?],
        RegistrationFiles::HookList(file) => {
            let path = request.project_dir.join(registration.path);
            let before = read_for_edit(&path)?;
            if harness == Harness::Kiro && before.is_none() && request.action == HookAction::Install
            {
                return Err(HookInstallError::Refused {
                    path,
                    reason: "does not exist: Kiro CLI reads hooks from an agent's configuration, and aidlc registers them in the AI-DLC conductor agent's (create it with `kiro-cli agent create --name aidlc`, then run again)",
                });
            }
            let mut plan = FilePlan::unchanged(path, before);
            let audit_hook = crate::harness::reference_hooks::audit_hook_of(
                request.project_dir,
                harness.dir_name(),
            );
            hook_lists::plan_file(request, &file, &mut plan, audit_hook.as_deref())?;
            vec![plan]
        }
    };
    if request.action == HookAction::Install {
        files.push(gitignore_plan(request)?);
    }
    for file in &files {
        refuse_read_only(file)?;
    }
    let follow_ups = match request.harness {
        Harness::Codex => files
            .iter()
            .filter(|file| file.changes_the_file())
            .filter_map(|file| codex_trust::follow_up(&file.path, file.after.as_deref()?))
            .collect(),
        _ => Vec::new(),
    };
    Ok(HookPlan {
        harness: request.harness,
        follow_ups,
        files,
    })
}

/// The project's `.gitignore` with the entries of the runtime files a recorded run leaves
/// (`harness::gitignore`); only ever added to, and left alone by an uninstall.
fn gitignore_plan(request: &InstallRequest<'_>) -> Result<FilePlan, HookInstallError> {
    let path = request
        .project_dir
        .join(crate::harness::gitignore::GITIGNORE_FILE);
    let before = read_for_edit(&path)?;
    let change = crate::harness::gitignore::with_entries(
        request.harness,
        before.as_deref().unwrap_or_default(),
    );
    let mut plan = FilePlan::unchanged(path, before);
    if !change.added.is_empty() {
        plan.changes.push(format!(
            "added {} (the runtime files a recorded run leaves)",
            change.added.join(", ")
        ));
        plan.after = Some(change.after);
    }
    Ok(plan)
}

/// A file's text to edit: `None` when it does not exist. A link and a file that is not text
/// are refused.
fn read_for_edit(path: &Utf8Path) -> Result<Option<String>, HookInstallError> {
    if path
        .symlink_metadata()
        .is_ok_and(|metadata| metadata.file_type().is_symlink())
    {
        return Err(HookInstallError::Refused {
            path: path.to_owned(),
            reason: "is a symbolic link; refusing to replace it (edit the file it points to)",
        });
    }
    match crate::leaves::fs_util::read_input(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| HookInstallError::Refused {
                path: path.to_owned(),
                reason: "is not UTF-8 text; the file was not changed",
            }),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(FileError::io("read", path, error.into_io_error()).into()),
    }
}

/// A file the plan changes must not be marked read-only: its owner said not to write it.
fn refuse_read_only(file: &FilePlan) -> Result<(), HookInstallError> {
    if file.changes_the_file()
        && file.before.is_some()
        && std::fs::metadata(&file.path).is_ok_and(|metadata| metadata.permissions().readonly())
    {
        return Err(HookInstallError::Refused {
            path: file.path.clone(),
            reason: "is read-only; refusing to replace it (make it writable, then run again)",
        });
    }
    Ok(())
}

/// Write (or remove) each file the plan changes, atomically. Returns the files changed. Every
/// path is parsed into the project ([`ProjectPath`]) before the first write; a path that is
/// not inside it refuses the whole plan, with nothing written.
pub fn apply(
    plan: &HookPlan,
    project_dir: &Utf8Path,
) -> Result<Vec<Utf8PathBuf>, HookInstallError> {
    let changing: Vec<(&FilePlan, ProjectPath)> = plan
        .files
        .iter()
        .filter(|file| file.changes_the_file())
        .map(|file| {
            ProjectPath::of_absolute(project_dir, &file.path)
                .and_then(|path| path.check_resolves_inside().map(|()| path))
                .map(|path| (file, path))
                .map_err(|refusal| FileError::outside(&file.path, refusal))
        })
        .collect::<Result<_, _>>()?;
    let mut changed = Vec::new();
    for (file, path) in changing {
        match &file.after {
            Some(text) => {
                contained::write_file(&path, text.as_bytes(), Flush::Yes)
                    .map_err(|error| FileError::io("write", &file.path, error.into()))?;
            }
            None => contained::remove_file(&path)
                .map_err(|error| FileError::io("remove", &file.path, error.into()))?,
        }
        changed.push(file.path.clone());
    }
    Ok(changed)
}
