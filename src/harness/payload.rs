//! A hook's payload: read within a bound, and what each harness's write and prompt events say
//! (the files written, the folder the hook ran in, whether a prompt is a human's).
//!
//! | harness | write event | the written files | paths relative to |
//! |---|---|---|---|
//! | Claude Code | `PostToolUse` `{cwd, tool_name, tool_input: {file_path}}` (`NotebookEdit`: `notebook_path`) | `file_path` | `cwd` |
//! | Codex | `PostToolUse` `{cwd, tool_name: "apply_patch", tool_input: {command}}` | each `*** Add File:` (written) and `*** Update File:` (edited) line of the patch | `cwd` |
//! | Kiro CLI | `postToolUse` `{cwd, tool_name: "write" \| "fs_write", tool_input: {path}}` | `path` (or `file_path`) | `cwd` |
//! | Kiro IDE | 1.x: stdin `{tool_name, tool_input: {}, tool_response}`; 0.12: `USER_PROMPT` `{toolName, toolArgs, toolResult, toolSuccess}` | the path in the result's sentence (`Created the P file.`, `Replaced text in P`, `Appended the text to the P file.`) | the project |
//! | opencode | `tool.execute.after` `{directory, tool, args}` (from the engine's plugin) | `args.filePath` (or `path`); each file line of an `apply_patch` | `directory` |
//! | Kiro CLI 3 | `PostToolUse` `{cwd, tool_name: "write" \| "fs_write" \| "str_replace" \| "fs_append", tool_input: {path}}` | `path` (or `file_path`) | `cwd` |
//! | Cursor | `afterFileEdit` `{workspace_roots, file_path, conversation_id, generation_id}` | `file_path`, which must be inside a workspace root | `workspace_roots[0]` |
//! | GitHub Copilot | `PostToolUse` `{cwd, session_id, tool_name, tool_input}` (camelCase `toolName`, `toolArgs` read too) | `file_path` (or `path`, `filePath`) of `create`, `edit`, `Write`, `Edit` and kin | `cwd` |
//!
//! A shell tool call ([`shell_call`]: Claude Code's, Codex's and Copilot's `Bash`, Kiro CLI's
//! `execute_bash`, opencode's `bash`, Cursor's `beforeShellExecution` and
//! `afterShellExecution`) names no file: its writes are found by comparing the project before
//! and after it (`dispatch::shell_writes`).
//!
//! Invariants:
//! - the read never waits longer than [`PAYLOAD_WAIT`] nor keeps more than
//!   [`PAYLOAD_LIMIT_BYTES`]; Kiro IDE 0.12 leaves stdin open and never writes it, so its
//!   payload is taken from `USER_PROMPT` first, without touching stdin;
//! - a write whose files cannot be read from its payload is said ([`WriteEvent::unreadable`]),
//!   never taken for "nothing was written"; a payload that is not a write (another tool, a
//!   failed write) is empty;
//! - backslashes in paths are read as separators (Windows, failure mode N5), so every path
//!   leaves here with `/`.

use std::io::Read;
use std::time::Duration;

use camino::Utf8PathBuf;
use serde_json::{Map, Value};

use crate::harness::Harness;
use crate::harness::commands::HookRole;
use crate::harness::transcript::{self, ASK_USER_QUESTION_TOOL, Transcript, picked_answers_text};

/// The most the hook waits for its payload.
pub const PAYLOAD_WAIT: Duration = Duration::from_secs(5);
/// The largest payload read; a hook payload is a few KiB.
pub const PAYLOAD_LIMIT_BYTES: u64 = 4 * 1024 * 1024;
/// Kiro IDE 0.12's payload channel: an environment variable holding the JSON.
pub const KIRO_IDE_LEGACY_PAYLOAD_VARIABLE: &str = "USER_PROMPT";
/// The text the reference's opencode plugin starts its own prompts with (never a human's).
const OPENCODE_NUDGE_SENTINEL: &str = "[aidlc-forwarding-nudge]";

/// Read the payload from `stdin` on a helper thread, waiting at most [`PAYLOAD_WAIT`].
/// `None` when it did not arrive in time or could not be read.
pub fn read_payload_bounded(stdin: impl Read + Send + 'static) -> Option<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = stdin.take(PAYLOAD_LIMIT_BYTES).read_to_end(&mut bytes);
        let _ = sender.send(result.map(|_| bytes));
    });
    receiver.recv_timeout(PAYLOAD_WAIT).ok()?.ok()
}

/// The payload that came through the environment rather than stdin: Kiro IDE 0.12's
/// `USER_PROMPT`, when it is set and not blank.
pub fn payload_from_environment(env: &dyn Fn(&str) -> Option<String>) -> Option<Vec<u8>> {
    env(KIRO_IDE_LEGACY_PAYLOAD_VARIABLE)
        .filter(|value| !value.trim().is_empty())
        .map(String::into_bytes)
}

/// The folder the harness ran the hook in: the payload's `cwd` (opencode: `directory`;
/// Cursor, whose file events name no `cwd`: its first workspace root).
pub fn payload_cwd(payload: &[u8]) -> Option<Utf8PathBuf> {
    let value = serde_json::from_slice::<Value>(payload).ok()?;
    value
        .get("cwd")
        .or_else(|| value.get("directory"))
        .and_then(Value::as_str)
        .filter(|cwd| !cwd.is_empty())
        .or_else(|| first_workspace_root(&value))
        .map(|cwd| Utf8PathBuf::from(normalised(cwd)))
}

/// Cursor's first `workspace_roots` entry.
fn first_workspace_root(value: &Value) -> Option<&str> {
    value
        .get("workspace_roots")?
        .as_array()?
        .first()?
        .as_str()
        .filter(|root| !root.is_empty())
}

/// The events Cursor sends the engine's hooks (`hook_event_name`, camelCase).
const CURSOR_EVENTS: [&str; 4] = [
    "afterFileEdit",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeSubmitPrompt",
];

/// A path with `/` for every `\`.
fn normalised(path: &str) -> String {
    path.replace('\\', "/")
}

/// The harness whose payload `payload` is, by its shape, for a hook registered without
/// `--harness`. A payload that says nothing particular is Claude Code's.
pub fn detect_harness(payload: &[u8]) -> Harness {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(payload) else {
        return Harness::Claude;
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    if object.contains_key("workspace_roots")
        || text("hook_event_name").is_some_and(|event| CURSOR_EVENTS.contains(&event))
    {
        return Harness::Cursor;
    }
    if object.contains_key("toolName") || object.contains_key("toolResult") {
        return Harness::KiroIde;
    }
    if object.contains_key("tool") && object.contains_key("directory")
        || text("hook_event_name") == Some("chat.message")
    {
        return Harness::Opencode;
    }
    if text("tool_name") == Some("apply_patch") || object.contains_key("turn_id") {
        return Harness::Codex;
    }
    if text("hook_event_name").is_some_and(|event| event.starts_with(char::is_lowercase)) {
        return Harness::Kiro;
    }
    if matches!(
        text("tool_name"),
        Some("fs_write" | "str_replace" | "fs_append")
    ) && object.get("tool_response").is_some_and(Value::is_string)
    {
        return Harness::KiroIde;
    }
    Harness::Claude
}

/// How the harness's tool touched a file, as the reference's core hooks name it; its name is
/// the `tool_name` of a Claude Code payload for this write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
pub enum WriteTool {
    /// A file written whole (possibly new).
    Write,
    /// An existing file edited.
    Edit,
}

/// One file a write event touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// With `/` separators; absolute, or relative to [`WriteEvent::relative_to`].
    pub path: Utf8PathBuf,
    pub tool: WriteTool,
}

/// What a write event says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteEvent {
    pub files: Vec<WrittenFile>,
    /// The folder relative paths start from; `None`: the project folder.
    pub relative_to: Option<Utf8PathBuf>,
    /// Why the written files could not be read from a payload that is a write (recorded as a
    /// drop by the hook); `None` when they could, or when the payload is not a write.
    pub unreadable: Option<String>,
}

impl WriteEvent {
    fn unreadable(reason: impl Into<String>) -> Self {
        Self {
            unreadable: Some(reason.into()),
            ..Self::default()
        }
    }
}

/// The write event of `harness`'s `payload`.
pub fn write_event(harness: Harness, payload: &[u8]) -> WriteEvent {
    let value = match serde_json::from_slice::<Value>(payload) {
        Ok(Value::Object(object)) => object,
        // Not JSON, or not an object: no harness sends that for a write, so nothing was said.
        _ if harness == Harness::KiroIde && !payload.iter().all(u8::is_ascii_whitespace) => {
            return WriteEvent::unreadable("the hook's context is not a JSON object");
        }
        _ => return WriteEvent::default(),
    };
    let mut event = match harness {
        Harness::Claude => claude_write(&value),
        Harness::Codex => codex_write(&value),
        Harness::Kiro => kiro_cli_write(&value, false),
        Harness::KiroCliV3 => kiro_cli_write(&value, true),
        Harness::Copilot => copilot_write(&value),
        Harness::Cursor => return cursor_write(&value),
        Harness::KiroIde => return kiro_ide_write(&value),
        Harness::Opencode => opencode_write(&value),
    };
    let folder_key = if harness == Harness::Opencode {
        "directory"
    } else {
        "cwd"
    };
    event.relative_to = text_field(&value, folder_key).map(|folder| normalised(folder).into());
    event
}

/// The non-empty text under `key` in `object`.
pub(crate) fn text_field<'v>(object: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

/// The first of `keys` that holds a non-empty text in `object` (a tool's input or arguments).
fn first_text<'v>(object: Option<&'v Value>, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|key| object?.get(*key)?.as_str().filter(|text| !text.is_empty()))
}

impl WrittenFile {
    fn at(path: &str, tool: WriteTool) -> Self {
        Self {
            path: Utf8PathBuf::from(normalised(path)),
            tool,
        }
    }
}

fn one_file(path: &str, tool: WriteTool) -> WriteEvent {
    WriteEvent {
        files: vec![WrittenFile::at(path, tool)],
        ..WriteEvent::default()
    }
}

/// Claude Code's file tools: `Write`, `Edit` and `MultiEdit` name the file `file_path`,
/// `NotebookEdit` names it `notebook_path`; every one but `Write` edits a file.
fn claude_write(value: &Map<String, Value>) -> WriteEvent {
    let tool = match value.get("tool_name").and_then(Value::as_str) {
        Some("Edit" | "MultiEdit" | "NotebookEdit") => WriteTool::Edit,
        _ => WriteTool::Write,
    };
    first_text(value.get("tool_input"), &["file_path", "notebook_path"])
        .map_or_else(WriteEvent::default, |path| one_file(path, tool))
}

/// The tool names each harness gives its shell tool, in pre-tool and post-tool payloads
/// (Cursor names none: its shell calls are events of their own).
pub fn shell_tool_names(harness: Harness) -> &'static [&'static str] {
    match harness {
        Harness::Claude => &["Bash"],
        Harness::Cursor => &[],
        Harness::Codex => &["Bash", "shell", "local_shell", "exec_command"],
        Harness::Kiro | Harness::KiroCliV3 => &["execute_bash", "shell"],
        Harness::KiroIde => &["executeBash", "execute_bash"],
        Harness::Copilot => &["Bash", "bash", "powershell"],
        Harness::Opencode => &["bash"],
    }
}

/// Cursor's shell events: the guard's before the command runs, the write hook's after.
const CURSOR_SHELL_EVENTS: [&str; 2] = ["beforeShellExecution", "afterShellExecution"];

/// One shell tool call, as its pre-tool and post-tool payloads both name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCall {
    /// What names the call in both payloads: its tool-use id (Claude Code, Codex: `tool_use_id`;
    /// opencode: `callID`), else its session (`session_id`, `sessionID`), else one name shared by
    /// every call of the harness. Only `[A-Za-z0-9_-]`, at most 120 characters.
    pub key: String,
}

/// The shell call `harness`'s tool `payload` reports, or `None` when it reports another tool
/// (or is not a JSON object).
pub fn shell_call(harness: Harness, payload: &[u8]) -> Option<ShellCall> {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(payload) else {
        return None;
    };
    if harness == Harness::Cursor {
        let event = text_field(&object, "hook_event_name")?;
        if !CURSOR_SHELL_EVENTS.contains(&event) {
            return None;
        }
    } else {
        let tool = ["tool_name", "tool", "toolName"]
            .iter()
            .find_map(|key| text_field(&object, key))?;
        if !shell_tool_names(harness).contains(&tool) {
            return None;
        }
    }
    // Cursor's before and after events of one command share its generation.
    let id = [
        "tool_use_id",
        "callID",
        "session_id",
        "sessionID",
        "generation_id",
        "conversation_id",
    ]
    .iter()
    .find_map(|key| text_field(&object, key))
    .unwrap_or("shell-call");
    // Every character kept is ASCII, so the truncation keeps 120 characters.
    let mut key = id.replace(
        |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
        "_",
    );
    key.truncate(120);
    Some(ShellCall { key })
}

/// Cursor's `afterFileEdit` names the edited file by its absolute `file_path`, which must lie
/// in one of the `workspace_roots`; any other event reaching the write hook (its shell events
/// are [`shell_call`]s) is one it cannot read.
fn cursor_write(value: &Map<String, Value>) -> WriteEvent {
    let Some(event) = text_field(value, "hook_event_name") else {
        return WriteEvent::unreadable("the payload has no \"hook_event_name\"");
    };
    if event != "afterFileEdit" {
        return WriteEvent::unreadable(format!(
            "the event \"{event}\" is not one the write hook reads (afterFileEdit, afterShellExecution)"
        ));
    }
    let Some(path) = text_field(value, "file_path") else {
        return WriteEvent::unreadable("an afterFileEdit names no file (\"file_path\")");
    };
    let roots: Vec<String> = match value.get("workspace_roots") {
        Some(Value::Array(roots)) if roots.iter().all(Value::is_string) => roots
            .iter()
            .filter_map(Value::as_str)
            .filter(|root| !root.is_empty())
            .map(normalised)
            .collect(),
        Some(_) => {
            return WriteEvent::unreadable("\"workspace_roots\" is not an array of paths");
        }
        None => Vec::new(),
    };
    let Some(first_root) = roots.first() else {
        return WriteEvent::unreadable("the payload has no \"workspace_roots\"");
    };
    let path = Utf8PathBuf::from(normalised(path));
    let climbs = path
        .components()
        .any(|component| component == camino::Utf8Component::ParentDir);
    let inside = !climbs
        && (path.is_relative()
            || roots
                .iter()
                .any(|root| path.starts_with(camino::Utf8Path::new(root))));
    if !inside {
        return WriteEvent::unreadable(format!(
            "the edited file {path} is outside the workspace roots ({})",
            roots.join(", ")
        ));
    }
    WriteEvent {
        files: vec![WrittenFile {
            path,
            tool: WriteTool::Edit,
        }],
        relative_to: Some(Utf8PathBuf::from(first_root)),
        unreadable: None,
    }
}

/// Copilot's file tools, by the names its payloads give them (the CLI's own, and the Claude
/// Code names it sends for capitalised events), with what each does to its file.
const COPILOT_FILE_TOOLS: [(&str, WriteTool); 7] = [
    ("create", WriteTool::Write),
    ("Write", WriteTool::Write),
    ("edit", WriteTool::Edit),
    ("Edit", WriteTool::Edit),
    ("MultiEdit", WriteTool::Edit),
    ("str_replace", WriteTool::Edit),
    ("str_replace_editor", WriteTool::Edit),
];

/// Copilot's `PostToolUse`: `{hook_event_name, tool_name, tool_input}` (for the capitalised
/// events the reference registers), or `{toolName, toolArgs}` whose arguments are a
/// JSON text. A payload naming another event, or no tool, cannot be read; another tool wrote
/// nothing.
fn copilot_write(value: &Map<String, Value>) -> WriteEvent {
    if let Some(event) = value.get("hook_event_name")
        && !matches!(event.as_str(), Some("PostToolUse" | "postToolUse"))
    {
        return WriteEvent::unreadable(format!(
            "the event {event} is not one the write hook reads (PostToolUse)"
        ));
    }
    let Some(tool) = text_field(value, "tool_name").or_else(|| text_field(value, "toolName"))
    else {
        return WriteEvent::unreadable("the payload names no tool (\"tool_name\")");
    };
    let Some(&(_, kind)) = COPILOT_FILE_TOOLS.iter().find(|(name, _)| *name == tool) else {
        return WriteEvent::default();
    };
    let input = match copilot_tool_input(value) {
        Ok(input) => input,
        Err(problem) => return WriteEvent::unreadable(problem),
    };
    match first_text(Some(&input), &["file_path", "path", "filePath"]) {
        Some(path) => one_file(path, kind),
        None => WriteEvent::unreadable(format!("a {tool} call names no file (tool_input.path)")),
    }
}

/// A Copilot tool call's input: `tool_input`, or `toolArgs` (an object, or a JSON text holding
/// one).
pub fn copilot_tool_input(value: &Map<String, Value>) -> Result<Value, String> {
    match value.get("tool_input").or_else(|| value.get("toolArgs")) {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(object @ Value::Object(_)) => Ok(object.clone()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => Ok(object),
            _ => Err("the tool's arguments (\"toolArgs\") are not a JSON object".to_owned()),
        },
        Some(_) => Err("the tool's input is not a JSON object".to_owned()),
    }
}

/// Codex edits files with `apply_patch`: the paths are in the patch's `*** Add File:` and
/// `*** Update File:` lines (a deleted file is not a write).
fn codex_write(value: &Map<String, Value>) -> WriteEvent {
    if value.get("tool_name").and_then(Value::as_str) != Some("apply_patch") {
        return WriteEvent::default();
    }
    let patch = first_text(value.get("tool_input"), &["command"]).unwrap_or_default();
    let files: Vec<WrittenFile> = patch_file_lines(patch)
        .filter_map(|(verb, path)| {
            let tool = match verb {
                "Add File" => WriteTool::Write,
                "Update File" => WriteTool::Edit,
                _ => return None,
            };
            Some(WrittenFile::at(path, tool))
        })
        .collect();
    if files.is_empty() {
        return WriteEvent::unreadable("an apply_patch call names no added or updated file");
    }
    WriteEvent {
        files,
        ..WriteEvent::default()
    }
}

/// Kiro CLI names its write tool `write` (or `fs_write`) and the file `path`; Kiro CLI 3 also
/// edits with `str_replace` and `fs_append`, and its payload must name the tool.
fn kiro_cli_write(value: &Map<String, Value>, version_3: bool) -> WriteEvent {
    let tool = match value.get("tool_name").and_then(Value::as_str) {
        Some("write" | "fs_write") => WriteTool::Write,
        Some("str_replace" | "fs_append") if version_3 => WriteTool::Edit,
        None if version_3 => {
            return WriteEvent::unreadable("the payload names no tool (\"tool_name\")");
        }
        _ => return WriteEvent::default(),
    };
    match first_text(value.get("tool_input"), &["path", "file_path"]) {
        Some(path) => one_file(path, tool),
        None => WriteEvent::unreadable("a write names no file (tool_input.path)"),
    }
}

/// Kiro IDE's write payload carries no path of its own: the written file is named only in the
/// tool's result sentence, relative to the workspace (the project).
fn kiro_ide_write(value: &Map<String, Value>) -> WriteEvent {
    // 0.12's camelCase key, else 1.x's.
    let field = |legacy: &str, current: &str| value.get(legacy).or_else(|| value.get(current));
    let name = field("toolName", "tool_name");
    let result = field("toolResult", "tool_response");
    let success = field("toolSuccess", "tool_success");
    let args = field("toolArgs", "tool_input");
    let expected = [
        ("toolName", name, Value::is_string as fn(&Value) -> bool),
        ("toolArgs", args, Value::is_object),
        ("toolResult", result, Value::is_string),
        ("toolSuccess", success, Value::is_boolean),
    ];
    let malformed: Vec<&str> = expected
        .into_iter()
        .filter(|(_, found, is_kind)| {
            found.is_some_and(|found| !found.is_null() && !is_kind(found))
        })
        .map(|(key, ..)| key)
        .collect();
    if !malformed.is_empty() {
        return WriteEvent::unreadable(format!(
            "the hook's context has malformed fields ({})",
            malformed.join(", ")
        ));
    }
    // 0.12 says when a write failed; a failed write wrote nothing.
    if success.and_then(Value::as_bool) == Some(false) {
        return WriteEvent::default();
    }
    let name = name.and_then(Value::as_str).unwrap_or_default();
    let result = result.and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() && result.trim().is_empty() {
        return WriteEvent::unreadable(
            "the hook's context is empty (no payload on stdin, none in USER_PROMPT)",
        );
    }
    let tool = match name {
        "fs_write" => WriteTool::Write,
        "str_replace" | "fs_append" => WriteTool::Edit,
        _ => return WriteEvent::default(),
    };
    match path_in_result(result) {
        Some(path) => one_file(path, tool),
        None => WriteEvent::unreadable(format!(
            "{name} names no file the hook can read in its result: {}",
            result.chars().take(120).collect::<String>()
        )),
    }
}

/// The file a Kiro IDE write result names: `Created the P file.`, `Appended the text to the P
/// file.`, or `Replaced text in P` with an optional ` (N occurrences)` after it.
fn path_in_result(result: &str) -> Option<&str> {
    let result = result.trim();
    let path = if let Some(rest) = result.strip_prefix("Created the ") {
        rest.strip_suffix(" file.")?
    } else if let Some(rest) = result.strip_prefix("Appended the text to the ") {
        rest.strip_suffix(" file.")?
    } else {
        without_parenthetical(result.strip_prefix("Replaced text in ")?)
    };
    let path = path.trim();
    (!path.is_empty()).then_some(path)
}

/// `text` without a last ` (…)` holding no `)`, with the whitespace before it.
fn without_parenthetical(text: &str) -> &str {
    let Some(inner) = text.strip_suffix(')') else {
        return text;
    };
    let Some(open) = inner.rfind('(') else {
        return text;
    };
    let before = &inner[..open];
    if inner[open + 1..].contains(')') || !before.ends_with(char::is_whitespace) {
        return text;
    }
    let kept = before.trim_end();
    if kept.is_empty() { text } else { kept }
}

/// opencode's `tool.execute.after` for `write`, `edit` and `apply_patch` (every file line of
/// the patch, moved-to and deleted files included, as the reference's plugin passes them).
fn opencode_write(value: &Map<String, Value>) -> WriteEvent {
    let tool = value
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let args = value.get("args");
    match tool {
        "write" | "edit" => match first_text(args, &["filePath", "path"]) {
            Some(path) => one_file(
                path,
                if tool == "write" {
                    WriteTool::Write
                } else {
                    WriteTool::Edit
                },
            ),
            None => WriteEvent::unreadable(format!("a {tool} call names no file (args.filePath)")),
        },
        "apply_patch" => {
            let patch = first_text(args, &["patchText", "patch", "command"]).unwrap_or_default();
            let paths = codex_patch_paths(patch);
            if paths.is_empty() {
                return WriteEvent::unreadable("an apply_patch call names no file");
            }
            WriteEvent {
                files: paths
                    .into_iter()
                    .map(|path| WrittenFile::at(path, WriteTool::Write))
                    .collect(),
                ..WriteEvent::default()
            }
        }
        _ => WriteEvent::default(),
    }
}

/// Whether `harness`'s prompt `payload` is a human's turn: every prompt is, except opencode's
/// in a session that is not the main one (a subagent's) or one the reference's plugin typed,
/// and a Cursor background agent's (`is_background_agent`).
pub fn prompt_is_human(harness: Harness, payload: &[u8]) -> bool {
    if harness == Harness::Cursor {
        // A Cursor background agent submits prompts with no person there.
        return serde_json::from_slice::<Value>(payload).is_ok_and(|value| {
            value.get("is_background_agent").and_then(Value::as_bool) != Some(true)
        });
    }
    if harness != Harness::Opencode {
        return true;
    }
    let Ok(value) = serde_json::from_slice::<Value>(payload) else {
        return false;
    };
    let main_session = value.get("main_session").and_then(Value::as_bool) == Some(true);
    let typed_by_a_plugin = opencode_text_parts(value.get("parts"))
        .next()
        .flatten()
        .is_some_and(|text| text.starts_with(OPENCODE_NUDGE_SENTINEL));
    main_session && !typed_by_a_plugin
}

/// A human's prompt as the harness's prompt hook reports it: what a human-turn receipt is made
/// from (docs/decisions.md D34).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptEvent {
    /// The session the prompt belongs to, where the harness names one.
    pub session: Option<String>,
    /// The prompt's text, exactly as the payload gives it.
    pub prompt: String,
    /// The transcript the payload names (Claude Code, Codex), else `Transcript::None`.
    pub transcript: Transcript,
    /// How the person gave it: typed, or picked in Claude Code's question widget.
    pub source: PromptSource,
}

/// How a person's turn reached the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptSource {
    /// A prompt the person typed (`UserPromptSubmit` and its kin).
    Typed,
    /// The answers the person picked in Claude Code's question widget (`PostToolUse` of
    /// `AskUserQuestion`), one per line.
    Picked,
}

/// `harness`'s prompt payload read as a [`PromptEvent`], or what it lacks. Claude Code and
/// Codex: `{"hook_event_name":"UserPromptSubmit","session_id","prompt","transcript_path"}`,
/// each present and not empty, the transcript path absolute. Kiro CLI: `{"hook_event_name":
/// "userPromptSubmit","prompt"}` (Kiro CLI 3: `"UserPromptSubmit"`). Cursor:
/// `{"hook_event_name":"beforeSubmitPrompt","conversation_id","prompt"}`. Copilot: as Claude
/// Code without the transcript. opencode (the engine's plugin): `{"hook_event_name":
/// "chat.message","sessionID","parts":[{"type":"text","text"}]}`. Kiro IDE gives its prompt hook
/// no payload; `kiro_ide_prompt` is its `USER_PROMPT` text. Claude Code's `PostToolUse` of its
/// question widget, `{"tool_name":"AskUserQuestion","session_id","transcript_path",
/// "tool_response":{"answers":{"<question>":"<label>"}}}`, gives the person's picks as the
/// turn's prompt, one per line.
pub fn prompt_event(
    harness: Harness,
    payload: &[u8],
    kiro_ide_prompt: Option<String>,
) -> Result<PromptEvent, String> {
    if harness == Harness::KiroIde {
        return kiro_ide_prompt
            .filter(|prompt| !prompt.trim().is_empty())
            .map(|prompt| PromptEvent {
                session: None,
                prompt,
                transcript: Transcript::None,
                source: PromptSource::Typed,
            })
            .ok_or_else(|| format!("no prompt: {KIRO_IDE_LEGACY_PAYLOAD_VARIABLE} is not set"));
    }
    let value: Value = serde_json::from_slice(payload)
        .map_err(|error| format!("the payload is not JSON ({error})"))?;
    let Value::Object(object) = value else {
        return Err("the payload is not a JSON object".to_owned());
    };
    let text = |key: &str| text_field(&object, key).map(str::to_owned);
    let required =
        |key: &'static str| text(key).ok_or_else(|| format!("the payload has no \"{key}\""));
    let event = crate::harness::install::hook_registration(harness).event(HookRole::HumanTurn);
    let session_key = match harness {
        Harness::Claude | Harness::Codex | Harness::Copilot => Some("session_id"),
        Harness::Cursor => Some("conversation_id"),
        Harness::Opencode => Some("sessionID"),
        Harness::Kiro | Harness::KiroCliV3 | Harness::KiroIde => None,
    };
    let named = required("hook_event_name")?;
    let source = if harness == Harness::Claude && named == "PostToolUse" {
        let tool = text_field(&object, "tool_name").unwrap_or_default();
        if tool != ASK_USER_QUESTION_TOOL {
            return Err(format!(
                "a \"PostToolUse\" payload records a human turn only for \"{ASK_USER_QUESTION_TOOL}\", not \"{tool}\""
            ));
        }
        PromptSource::Picked
    } else if named == event || harness == Harness::KiroCliV3 && named == "userPromptSubmit" {
        // Kiro CLI 3 renamed its triggers to PascalCase; a payload may still say the old name.
        PromptSource::Typed
    } else {
        return Err(format!(
            "the payload's \"hook_event_name\" is \"{named}\", not \"{event}\""
        ));
    };
    let session = session_key.map(required).transpose()?;
    let prompt = match source {
        PromptSource::Picked => object
            .get("tool_response")
            .and_then(picked_answers_text)
            .ok_or("the payload's \"tool_response\" holds no picked \"answers\"")?,
        PromptSource::Typed if harness == Harness::Opencode => {
            opencode_prompt_text(&object).ok_or("the payload has no text part in \"parts\"")?
        }
        PromptSource::Typed => required("prompt")?,
    };
    let transcript = transcript::transcript(harness, payload);
    require_absolute_transcript(harness, &transcript)?;
    Ok(PromptEvent {
        session,
        prompt,
        transcript,
        source,
    })
}

/// Claude Code and Codex name their transcript, by an absolute path, in every prompt payload.
fn require_absolute_transcript(harness: Harness, transcript: &Transcript) -> Result<(), String> {
    if !matches!(harness, Harness::Claude | Harness::Codex) {
        return Ok(());
    }
    match transcript {
        Transcript::At { path, .. } if path.is_absolute() => Ok(()),
        Transcript::At { path, .. } => Err(format!(
            "the payload's \"transcript_path\" {path} is not absolute"
        )),
        Transcript::None => Err("the payload has no \"transcript_path\"".to_owned()),
    }
}

/// opencode's prompt: its text parts, joined with newlines.
fn opencode_prompt_text(object: &Map<String, Value>) -> Option<String> {
    let texts: Vec<&str> = opencode_text_parts(object.get("parts")).flatten().collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The `text` of each part of `parts` whose `type` is `"text"` (`None` where it is not a text).
fn opencode_text_parts(parts: Option<&Value>) -> impl Iterator<Item = Option<&str>> {
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
        .map(|part| part.get("text").and_then(Value::as_str))
}

/// Whether `harness` reads the prompt hook's stdin at all: Kiro IDE's prompt hook gets nothing
/// there (0.12 never closes it), so it is not touched.
pub fn prompt_reads_stdin(harness: Harness) -> bool {
    harness != Harness::KiroIde
}

/// The files a Codex `apply_patch` text adds, updates, deletes or moves to, each once, in the
/// patch's order (the write hook fires on them; the guard checks them).
pub fn codex_patch_paths(patch: &str) -> Vec<&str> {
    let mut paths: Vec<&str> = Vec::new();
    for (_, path) in patch_file_lines(patch) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// The file lines of a Codex `apply_patch` text (`*** Add File: P`, `*** Update File: P`,
/// `*** Delete File: P`, `*** Move to: P`) that name a path, as `(verb, path)`, in order.
fn patch_file_lines(patch: &str) -> impl Iterator<Item = (&str, &str)> {
    patch.lines().filter_map(|line| {
        let (verb, path) = line.strip_prefix("*** ")?.split_once(": ")?;
        let path = path.trim();
        let named = ["Add File", "Update File", "Delete File", "Move to"].contains(&verb);
        (named && !path.is_empty()).then_some((verb, path))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(harness: Harness, payload: &str) -> WriteEvent {
        write_event(harness, payload.as_bytes())
    }

    fn paths(event: &WriteEvent) -> Vec<(&str, WriteTool)> {
        event
            .files
            .iter()
            .map(|file| (file.path.as_str(), file.tool))
            .collect()
    }

    #[test]
    fn claude_code_names_the_file_in_tool_input() {
        let written = event(
            Harness::Claude,
            r#"{"cwd":"/p","tool_name":"Edit","tool_input":{"file_path":"C:\\p\\a.md"}}"#,
        );
        assert_eq!(paths(&written), [("C:/p/a.md", WriteTool::Edit)]);
        assert_eq!(
            written.relative_to.as_deref(),
            Some(camino::Utf8Path::new("/p"))
        );
        assert_eq!(
            event(Harness::Claude, r#"{"tool_input":{}}"#),
            WriteEvent::default()
        );
    }

    #[test]
    fn notebook_edit_names_its_notebook_and_multi_edit_edits() {
        let notebook = event(
            Harness::Claude,
            r#"{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/p/n.ipynb"}}"#,
        );
        assert_eq!(paths(&notebook), [("/p/n.ipynb", WriteTool::Edit)]);
        let multi = event(
            Harness::Claude,
            r#"{"tool_name":"MultiEdit","tool_input":{"file_path":"/p/a.md","edits":[]}}"#,
        );
        assert_eq!(paths(&multi), [("/p/a.md", WriteTool::Edit)]);
    }

    #[test]
    fn each_harness_s_shell_tool_is_a_shell_call_keyed_by_its_call() {
        let call = |harness, payload: &str| shell_call(harness, payload.as_bytes());
        assert_eq!(
            call(
                Harness::Claude,
                r#"{"tool_name":"Bash","tool_use_id":"toolu_1/x","session_id":"s"}"#
            ),
            Some(ShellCall {
                key: "toolu_1_x".to_owned()
            })
        );
        assert_eq!(
            call(
                Harness::Codex,
                r#"{"tool_name":"Bash","session_id":"s1","turn_id":"t"}"#
            ),
            Some(ShellCall {
                key: "s1".to_owned()
            })
        );
        assert_eq!(
            call(Harness::Kiro, r#"{"tool_name":"execute_bash"}"#),
            Some(ShellCall {
                key: "shell-call".to_owned()
            })
        );
        assert_eq!(
            call(
                Harness::Opencode,
                r#"{"tool":"bash","callID":"c9","sessionID":"s"}"#
            ),
            Some(ShellCall {
                key: "c9".to_owned()
            })
        );
        assert_eq!(call(Harness::Claude, r#"{"tool_name":"Write"}"#), None);
        assert_eq!(call(Harness::Claude, "not json"), None);
    }

    #[test]
    fn codex_names_each_added_and_updated_file_of_its_patch() {
        let payload = r#"{"cwd":"/p","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a.md\n+x\n*** Update File: src\\b.ts\n@@\n*** Delete File: c.md\n*** End Patch\n"}}"#;
        let written = event(Harness::Codex, payload);
        assert_eq!(
            paths(&written),
            [("a.md", WriteTool::Write), ("src/b.ts", WriteTool::Edit)]
        );
        assert_eq!(
            event(
                Harness::Codex,
                r#"{"tool_name":"Bash","tool_input":{"command":"ls"}}"#
            ),
            WriteEvent::default()
        );
        assert!(
            event(Harness::Codex, r#"{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** End Patch"}}"#)
                .unreadable
                .is_some()
        );
    }

    #[test]
    fn kiro_cli_names_the_file_path_of_its_write_alias() {
        let written = event(
            Harness::Kiro,
            r#"{"hook_event_name":"postToolUse","cwd":"/p","tool_name":"write","tool_input":{"command":"create","path":"/p/a.md"}}"#,
        );
        assert_eq!(paths(&written), [("/p/a.md", WriteTool::Write)]);
        assert!(
            event(Harness::Kiro, r#"{"tool_name":"fs_write","tool_input":{}}"#)
                .unreadable
                .is_some()
        );
        assert_eq!(
            event(Harness::Kiro, r#"{"tool_name":"shell"}"#),
            WriteEvent::default()
        );
    }

    #[test]
    fn kiro_ide_names_the_file_only_in_its_result_sentence() {
        for (payload, expected) in [
            (
                r#"{"toolName":"fs_write","toolArgs":{},"toolResult":"Created the a/b.md file.","toolSuccess":true}"#,
                ("a/b.md", WriteTool::Write),
            ),
            (
                r#"{"tool_name":"str_replace","tool_input":{},"tool_response":"Replaced text in a\\b.md (2 occurrences)\n"}"#,
                ("a/b.md", WriteTool::Edit),
            ),
            (
                r#"{"tool_name":"fs_append","tool_input":{},"tool_response":"Appended the text to the c.md file."}"#,
                ("c.md", WriteTool::Edit),
            ),
            (
                r#"{"tool_name":"str_replace","tool_response":"Replaced text in notes (draft).md"}"#,
                ("notes (draft).md", WriteTool::Edit),
            ),
        ] {
            let written = event(Harness::KiroIde, payload);
            assert_eq!(paths(&written), [expected], "{payload}");
            assert_eq!(written.relative_to, None);
        }
    }

    #[test]
    fn kiro_ide_says_what_it_could_not_read_and_skips_failed_writes() {
        for payload in [
            r#"{"toolName":"fs_write","toolResult":"Wrote something somewhere"}"#,
            r#"{"toolName":7,"toolResult":"Created the a.md file."}"#,
            r"{}",
            "not json",
        ] {
            assert!(
                event(Harness::KiroIde, payload).unreadable.is_some(),
                "{payload}"
            );
        }
        assert_eq!(
            event(
                Harness::KiroIde,
                r#"{"toolName":"fs_write","toolResult":"Created the a.md file.","toolSuccess":false}"#
            ),
            WriteEvent::default()
        );
        assert_eq!(
            event(
                Harness::KiroIde,
                r#"{"tool_name":"execute_bash","tool_response":"Output:\nx"}"#
            ),
            WriteEvent::default()
        );
    }

    #[test]
    fn opencode_names_the_file_of_each_write_tool_and_every_patch_line() {
        let written = event(
            Harness::Opencode,
            r#"{"directory":"/p","tool":"apply_patch","args":{"patchText":"*** Begin Patch\n*** Add File: src/one.ts\n*** Update File: src/two.ts\n*** Move to: src/three.ts\n*** Add File: src/one.ts\n*** End Patch\n"}}"#,
        );
        assert_eq!(
            paths(&written),
            [
                ("src/one.ts", WriteTool::Write),
                ("src/two.ts", WriteTool::Write),
                ("src/three.ts", WriteTool::Write)
            ]
        );
        assert_eq!(
            written.relative_to.as_deref(),
            Some(camino::Utf8Path::new("/p"))
        );
        let edit = event(
            Harness::Opencode,
            r#"{"tool":"edit","args":{"filePath":"/p/a.md"}}"#,
        );
        assert_eq!(paths(&edit), [("/p/a.md", WriteTool::Edit)]);
        assert_eq!(
            event(Harness::Opencode, r#"{"tool":"bash","args":{}}"#),
            WriteEvent::default()
        );
    }

    #[test]
    fn cursor_names_the_edited_file_inside_its_workspace_roots_only() {
        let written = event(
            Harness::Cursor,
            r#"{"hook_event_name":"afterFileEdit","workspace_roots":["/p"],"file_path":"/p/a.md"}"#,
        );
        assert_eq!(paths(&written), [("/p/a.md", WriteTool::Edit)]);
        assert_eq!(
            written.relative_to.as_deref(),
            Some(camino::Utf8Path::new("/p"))
        );
        for payload in [
            r#"{"hook_event_name":"afterFileEdit","workspace_roots":["/p"],"file_path":"/q/a.md"}"#,
            r#"{"hook_event_name":"afterFileEdit","workspace_roots":["/p"],"file_path":"/p/../q/a.md"}"#,
            r#"{"hook_event_name":"afterFileEdit","workspace_roots":["/p"]}"#,
            r#"{"hook_event_name":"afterFileEdit","workspace_roots":"/p","file_path":"/p/a.md"}"#,
            r#"{"hook_event_name":"afterFileEdit","file_path":"/p/a.md"}"#,
            r#"{"hook_event_name":"beforeReadFile","workspace_roots":["/p"],"file_path":"/p/a.md"}"#,
            r#"{"workspace_roots":["/p"],"file_path":"/p/a.md"}"#,
        ] {
            assert!(
                event(Harness::Cursor, payload).unreadable.is_some(),
                "{payload}"
            );
        }
        assert_eq!(
            payload_cwd(br#"{"workspace_roots":["C:\\p"]}"#).as_deref(),
            Some(camino::Utf8Path::new("C:/p"))
        );
    }

    #[test]
    fn copilot_names_the_file_of_its_file_tools_in_either_case() {
        let created = event(
            Harness::Copilot,
            r#"{"hook_event_name":"PostToolUse","cwd":"/p","tool_name":"create","tool_input":{"path":"/p/a.md"}}"#,
        );
        assert_eq!(paths(&created), [("/p/a.md", WriteTool::Write)]);
        let edited = event(
            Harness::Copilot,
            r#"{"cwd":"/p","toolName":"edit","toolArgs":"{\"path\":\"a.md\"}"}"#,
        );
        assert_eq!(paths(&edited), [("a.md", WriteTool::Edit)]);
        assert_eq!(
            event(
                Harness::Copilot,
                r#"{"hook_event_name":"PostToolUse","tool_name":"view","tool_input":{"path":"a.md"}}"#
            ),
            WriteEvent::default()
        );
        for payload in [
            r#"{"hook_event_name":"PreToolUse","tool_name":"create","tool_input":{"path":"a.md"}}"#,
            r#"{"hook_event_name":"PostToolUse","tool_input":{"path":"a.md"}}"#,
            r#"{"hook_event_name":"PostToolUse","tool_name":"edit","tool_input":{}}"#,
            r#"{"toolName":"edit","toolArgs":"not json"}"#,
        ] {
            assert!(
                event(Harness::Copilot, payload).unreadable.is_some(),
                "{payload}"
            );
        }
    }

    #[test]
    fn kiro_cli_3_names_its_written_and_edited_files() {
        let edited = event(
            Harness::KiroCliV3,
            r#"{"hook_event_name":"PostToolUse","cwd":"/p","tool_name":"str_replace","tool_input":{"path":"a.md"}}"#,
        );
        assert_eq!(paths(&edited), [("a.md", WriteTool::Edit)]);
        assert!(
            event(
                Harness::KiroCliV3,
                r#"{"tool_name":"write","tool_input":{}}"#
            )
            .unreadable
            .is_some()
        );
        assert!(
            event(Harness::KiroCliV3, r#"{"cwd":"/p"}"#)
                .unreadable
                .is_some()
        );
    }

    #[test]
    fn a_cursor_shell_call_is_keyed_by_its_generation() {
        let before = shell_call(
            Harness::Cursor,
            br#"{"hook_event_name":"beforeShellExecution","generation_id":"g/1","conversation_id":"c"}"#,
        );
        let after = shell_call(
            Harness::Cursor,
            br#"{"hook_event_name":"afterShellExecution","generation_id":"g/1","conversation_id":"c"}"#,
        );
        assert_eq!(before, after);
        assert_eq!(before.map(|call| call.key), Some("g_1".to_owned()));
        assert_eq!(
            shell_call(Harness::Cursor, br#"{"hook_event_name":"afterFileEdit"}"#),
            None
        );
    }

    #[test]
    fn a_payload_s_shape_names_its_harness() {
        for (payload, harness) in [
            (
                r#"{"tool_name":"Write","tool_input":{"file_path":"/a"}}"#,
                Harness::Claude,
            ),
            (
                r#"{"tool_name":"apply_patch","tool_input":{}}"#,
                Harness::Codex,
            ),
            (
                r#"{"hook_event_name":"UserPromptSubmit","turn_id":"t"}"#,
                Harness::Codex,
            ),
            (
                r#"{"hook_event_name":"postToolUse","tool_name":"write"}"#,
                Harness::Kiro,
            ),
            (
                r#"{"toolName":"fs_write","toolResult":"x"}"#,
                Harness::KiroIde,
            ),
            (
                r#"{"hook_event_name":"PostToolUse","tool_name":"fs_write","tool_input":{},"tool_response":"Created the a file."}"#,
                Harness::KiroIde,
            ),
            (
                r#"{"hook_event_name":"tool.execute.after","directory":"/p","tool":"write"}"#,
                Harness::Opencode,
            ),
            (
                r#"{"hook_event_name":"afterFileEdit","workspace_roots":["/p"],"file_path":"/p/a"}"#,
                Harness::Cursor,
            ),
            (
                r#"{"hook_event_name":"beforeSubmitPrompt","prompt":"x"}"#,
                Harness::Cursor,
            ),
            ("", Harness::Claude),
        ] {
            assert_eq!(detect_harness(payload.as_bytes()), harness, "{payload}");
        }
    }

    #[test]
    fn a_prompt_event_needs_every_field_its_harness_sends() {
        let claude = r#"{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"Override blocking sensors","transcript_path":"/h/t.jsonl","cwd":"/p"}"#;
        let event = prompt_event(Harness::Claude, claude.as_bytes(), None).unwrap();
        assert_eq!(event.session.as_deref(), Some("s1"));
        assert_eq!(event.prompt, "Override blocking sensors");
        assert!(matches!(
            event.transcript,
            crate::harness::transcript::Transcript::At { .. }
        ));
        for (payload, missing) in [
            ("{}", "no \"hook_event_name\""),
            (
                r#"{"hook_event_name":"PreToolUse"}"#,
                "not \"UserPromptSubmit\"",
            ),
            (
                r#"{"hook_event_name":"UserPromptSubmit","prompt":"x","transcript_path":"/t"}"#,
                "no \"session_id\"",
            ),
            (
                r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","transcript_path":"/t"}"#,
                "no \"prompt\"",
            ),
            (
                r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"x"}"#,
                "no \"transcript_path\"",
            ),
            (
                r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"x","transcript_path":"t.jsonl"}"#,
                "not absolute",
            ),
            ("garbage", "not JSON"),
        ] {
            let error = prompt_event(Harness::Claude, payload.as_bytes(), None).unwrap_err();
            assert!(error.contains(missing), "{payload}: {error}");
        }
        let kiro = r#"{"hook_event_name":"userPromptSubmit","prompt":"yes","cwd":"/p"}"#;
        assert_eq!(
            prompt_event(Harness::Kiro, kiro.as_bytes(), None)
                .unwrap()
                .prompt,
            "yes"
        );
        let opencode = r#"{"hook_event_name":"chat.message","sessionID":"o","parts":[{"type":"text","text":"yes"}]}"#;
        assert_eq!(
            prompt_event(Harness::Opencode, opencode.as_bytes(), None)
                .unwrap()
                .prompt,
            "yes"
        );
        assert!(prompt_event(Harness::KiroIde, b"", None).is_err());
        assert_eq!(
            prompt_event(Harness::KiroIde, b"", Some("go".to_owned()))
                .unwrap()
                .prompt,
            "go"
        );
    }

    #[test]
    fn only_an_opencode_main_session_s_own_prompt_is_a_human_turn() {
        let prompt = |main: bool, text: &str| {
            format!(r#"{{"main_session":{main},"parts":[{{"type":"text","text":"{text}"}}]}}"#)
        };
        assert!(prompt_is_human(
            Harness::Opencode,
            prompt(true, "build it").as_bytes()
        ));
        assert!(!prompt_is_human(
            Harness::Opencode,
            prompt(false, "build it").as_bytes()
        ));
        assert!(!prompt_is_human(
            Harness::Opencode,
            prompt(true, "[aidlc-forwarding-nudge] continue").as_bytes()
        ));
        assert!(!prompt_is_human(Harness::Opencode, b"{}"));
        assert!(prompt_is_human(Harness::Codex, b""));
    }
}
