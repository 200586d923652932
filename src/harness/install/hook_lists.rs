//! The hooks of one JSON settings file, edited in place: Claude Code's `settings.json` and
//! Codex's `hooks.json` (`{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type": "command",
//! "command": …}]}]}}`, groups of commands), a Kiro CLI agent's configuration and Cursor's
//! `hooks.json` (`{"hooks": {"<event>": [{"matcher": …, "command": …, "timeout_ms": …}]}}`,
//! commands), and GitHub Copilot's `.github/hooks/*.json` (`{"hooks": {"<Event>": [{"type":
//! "command", "bash": …, "powershell": …, "timeoutSec": …}]}}`, scripts).
//!
//! Invariants (on top of `json_text`'s):
//! - after an install, each event holds at most one entry per role: a second engine command, a
//!   reference command beside the engine's, or a second reference command is removed, never
//!   left to fire twice;
//! - only the engine's commands and the reference's exact commands are edited; a command that
//!   merely mentions a reference hook is kept and named in a note;
//! - an uninstall removes the engine's entries only, and a group or an event left empty by it.

use std::ops::Range;

use camino::Utf8Path;
use serde_json::{Value, json};

use super::json_text::{self, Edit, Layout, Node};
use super::{FilePlan, HookAction, HookInstallError, InstallRequest};
use crate::harness::commands::{
    HookRole, Takeover, engine_command, engine_role, hook_role, mentions_a_reference_hook,
    reference_command, takeover_command,
};

/// Where one role's entry goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    /// Kiro CLI's `timeout_ms`, Copilot's `timeoutSec` (the harness kills a hook that runs
    /// longer).
    pub timeout_ms: Option<u32>,
}

/// How a file lists its hook commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `hooks.<Event>[] = {matcher?, hooks: [{type: "command", command}]}` (Claude Code, Codex).
    Groups,
    /// `hooks.<event>[] = {matcher?, command, timeout_ms?}` (Kiro CLI agents, Cursor).
    Commands,
    /// `hooks.<Event>[] = {type: "command", bash, powershell, timeoutSec?}` (GitHub Copilot):
    /// the command is `bash`'s, and `powershell` says the same.
    Scripts,
}

impl Site {
    pub const fn new(
        event: &'static str,
        matcher: Option<&'static str>,
        timeout_ms: Option<u32>,
    ) -> Self {
        Self {
            event,
            matcher,
            timeout_ms,
        }
    }
}

impl Shape {
    /// The key that holds an entry's command.
    fn command_key(self) -> &'static str {
        match self {
            Shape::Groups | Shape::Commands => "command",
            Shape::Scripts => "bash",
        }
    }
}

/// One harness's settings file: its shape and where each role goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookListFile {
    pub shape: Shape,
    /// The file's text before the first hook goes in, when it does not exist (Cursor and
    /// Copilot read only a file that says its `version`).
    pub fresh: &'static str,
    pub write: Site,
    pub human_turn: Site,
    pub guard: Site,
    /// Where the write hook also goes for the harness's shell tool, in a group (or command
    /// object) of its own whose matcher is the shell tool's (`dispatch::shell_writes`).
    pub shell_writes: Option<Site>,
    /// Where the human-turn hook also goes for answers picked in the harness's question widget
    /// (Claude Code's `PostToolUse` of `AskUserQuestion`), where the harness has one.
    pub picked_answers: Option<Site>,
    /// Where the guard also goes for the harness's other tools, when its shell commands have a
    /// pre-tool event of their own (Cursor's `preToolUse`, which its file tools fire).
    pub tool_guard: Option<Site>,
    /// Where the write hook also goes for the file tools a taken-over reference group's matcher
    /// leaves out (Claude Code's `MultiEdit|NotebookEdit` beside the reference's `Write|Edit`),
    /// in a group of its own, so the reference's group keeps its matcher.
    pub more_file_tools: Option<Site>,
}

impl HookListFile {
    pub fn site(&self, role: HookRole) -> Site {
        match role {
            HookRole::Write => self.write,
            HookRole::HumanTurn => self.human_turn,
            HookRole::Guard => self.guard,
        }
    }
}

/// One registered command: its event and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub event: String,
    pub event_index: usize,
    /// The group (Claude Code, Codex) or command object (Kiro CLI) in the event's array.
    pub item: usize,
    /// The command object in the group (Claude Code, Codex only).
    pub hook: Option<usize>,
    pub command: String,
    /// The `matcher` of its group (Claude Code, Codex) or of its command object (Kiro CLI).
    pub matcher: Option<String>,
    /// Where its command strings are in the text it was read from: its `command` (Copilot: its
    /// `bash`, and its `powershell` when that says the same).
    pub command_spans: Vec<Range<usize>>,
}

/// Every command the file registers, in file order. `what` names the file in messages.
pub fn entries(root: &Node, shape: Shape, what: &Utf8Path) -> Result<Vec<Entry>, HookInstallError> {
    let wrong = |part: String, expected: &'static str| HookInstallError::WrongShape {
        path: what.to_owned(),
        what: part,
        expected,
    };
    if root.members().is_none() {
        return Err(wrong("the top level".to_owned(), "an object"));
    }
    let Some(hooks) = root.get("hooks") else {
        return Ok(Vec::new());
    };
    let Some(events) = hooks.value.members() else {
        return Err(wrong("\"hooks\"".to_owned(), "an object"));
    };
    let mut found = Vec::new();
    for (event_index, event) in events.iter().enumerate() {
        let Some(items) = event.value.elements() else {
            return Err(wrong(format!("\"hooks\".\"{}\"", event.key), "an array"));
        };
        for (item_index, item) in items.iter().enumerate() {
            if item.members().is_none() {
                return Err(wrong(
                    format!("an entry of \"hooks\".\"{}\"", event.key),
                    "an object",
                ));
            }
            // The command objects of the entry: itself, or (Groups) each of its `hooks`.
            let hook_objects: Vec<(Option<usize>, &Node)> = match shape {
                Shape::Commands | Shape::Scripts => vec![(None, item)],
                Shape::Groups => {
                    let Some(group_hooks) = item.get("hooks") else {
                        continue;
                    };
                    let Some(group_hooks) = group_hooks.value.elements() else {
                        return Err(wrong(
                            format!("\"hooks\" of an entry of \"hooks\".\"{}\"", event.key),
                            "an array",
                        ));
                    };
                    group_hooks
                        .iter()
                        .enumerate()
                        .map(|(at, hook)| (Some(at), hook))
                        .collect()
                }
            };
            for (hook_index, hook) in hook_objects {
                if hook.members().is_none() {
                    return Err(wrong(
                        format!("a hook of \"hooks\".\"{}\"", event.key),
                        "an object",
                    ));
                }
                if let Some((command, command_spans)) = command_of(hook, shape, &event.key, what)? {
                    found.push(Entry {
                        event: event.key.clone(),
                        event_index,
                        item: item_index,
                        hook: hook_index,
                        command,
                        matcher: matcher_of(item),
                        command_spans,
                    });
                }
            }
        }
    }
    Ok(found)
}

fn matcher_of(object: &Node) -> Option<String> {
    object
        .get("matcher")
        .and_then(|member| member.value.as_str())
        .map(str::to_owned)
}

/// A command, and where its strings are ([`Entry::command_spans`]).
type CommandAt = (String, Vec<Range<usize>>);

/// The command of `object` (an entry's command object).
fn command_of(
    object: &Node,
    shape: Shape,
    event: &str,
    what: &Utf8Path,
) -> Result<Option<CommandAt>, HookInstallError> {
    let key = shape.command_key();
    let Some(member) = object.get(key) else {
        return Ok(None);
    };
    let Some(command) = member.value.as_str() else {
        return Err(HookInstallError::WrongShape {
            path: what.to_owned(),
            what: format!("a \"{key}\" of \"hooks\".\"{event}\""),
            expected: "a string",
        });
    };
    let mut spans = vec![member.value.span.clone()];
    if shape == Shape::Scripts
        && let Some(powershell) = object.get("powershell")
        && powershell.value.as_str() == Some(command)
    {
        spans.push(powershell.value.span.clone());
    }
    Ok(Some((command.to_owned(), spans)))
}

/// What the plan does to one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Operation {
    Replace { entry: Entry, command: String },
    Remove { entry: Entry },
    Add { site: Site, command: String },
}

/// The file's text after installing (or uninstalling) the engine's hooks, with one line per
/// change and the notes the user should read.
pub fn plan_file(
    request: &InstallRequest<'_>,
    file: &HookListFile,
    plan: &mut FilePlan,
    audit_hook: Option<&str>,
) -> Result<(), HookInstallError> {
    let fresh = plan
        .before
        .as_deref()
        .is_none_or(|text| text.trim().is_empty());
    let text = if fresh {
        file.fresh.to_owned()
    } else {
        plan.before.clone().unwrap_or_default()
    };
    let root = parse(&text, &plan.path)?;
    let found = entries(&root, file.shape, &plan.path)?;
    let operations = match request.action {
        HookAction::Install => install_operations(request, file, &found, audit_hook, plan),
        HookAction::Uninstall => found
            .iter()
            .filter(|entry| engine_role(&entry.command).is_some())
            .map(|entry| {
                plan.changes
                    .push(format!("{}: removed {}", entry.event, entry.command));
                Operation::Remove {
                    entry: entry.clone(),
                }
            })
            .collect(),
    };
    if operations.is_empty() {
        return Ok(());
    }
    let mut text = apply(&text, file.shape, &plan.path, operations)?;
    if request.action == HookAction::Uninstall {
        text = without_empty_hooks(&text, &plan.path)?;
        // A file left as the engine would have started it held nothing but the engine's
        // hooks: it goes, as it came.
        if text == file.fresh && file.fresh != EMPTY_OBJECT {
            plan.after = None;
            return Ok(());
        }
    }
    plan.after = Some(text);
    Ok(())
}

/// A settings file's text before the first hook goes in, for a harness that needs nothing
/// more.
pub const EMPTY_OBJECT: &str = "{\n}\n";

fn parse(text: &str, path: &Utf8Path) -> Result<Node, HookInstallError> {
    json_text::parse(text).map_err(|error| HookInstallError::Malformed {
        path: path.to_owned(),
        error,
    })
}

/// For each role: the entries of the engine and of the reference, per event, made one.
fn install_operations(
    request: &InstallRequest<'_>,
    file: &HookListFile,
    found: &[Entry],
    audit_hook: Option<&str>,
    plan: &mut FilePlan,
) -> Vec<Operation> {
    let harness = request.harness;
    let mut operations = Vec::new();
    // The write hook's shell-tool entries are settled on their own, so that the file tools'
    // entry and the shell tool's are not taken for two write hooks of one event.
    let at_site = |site: Option<Site>, entry: &Entry| {
        site.is_some_and(|site| {
            entry.event == site.event
                && entry.matcher.as_deref() == site.matcher
                && hook_role(harness, &entry.command) == Some(HookRole::Write)
        })
    };
    let is_shell_entry =
        |entry: &Entry| at_site(file.shell_writes, entry) || at_site(file.more_file_tools, entry);
    let of_site = |site: Site| -> Vec<&Entry> {
        found
            .iter()
            .filter(|entry| at_site(Some(site), entry))
            .collect()
    };
    // A role's entries, in file order, but for the write hook's entries at its own sites.
    let of_role = |role: HookRole| {
        found.iter().filter(move |entry| {
            hook_role(harness, &entry.command) == Some(role) && !is_shell_entry(entry)
        })
    };
    for role in HookRole::ALL {
        let site = file.site(role);
        // Entries come event by event (an event's key is unique), so each event once:
        let mut events: Vec<&str> = of_role(role).map(|entry| entry.event.as_str()).collect();
        events.dedup();
        for event in &events {
            let of_event: Vec<&Entry> = of_role(role)
                .filter(|entry| entry.event == *event)
                .collect();
            operations.extend(settle_event(request, role, &of_event, audit_hook, plan));
        }
        if !events.contains(&site.event) {
            let command = engine_command(request.program, role, harness, audit_hook);
            plan.changes
                .push(format!("{}: added {command}", site.event));
            operations.push(Operation::Add { site, command });
        }
    }
    if let Some(site) = file.shell_writes {
        operations.extend(settle_or_add(request, site, &of_site(site), plan));
    }
    if let Some(site) = file.more_file_tools {
        let file_tool_entries: Vec<&Entry> = of_role(HookRole::Write)
            .filter(|entry| entry.event == file.write.event)
            .collect();
        operations.extend(settle_more_file_tools(
            request,
            site,
            &file_tool_entries,
            &of_site(site),
            plan,
        ));
    }
    for (site, role) in [
        (file.picked_answers, HookRole::HumanTurn),
        (file.tool_guard, HookRole::Guard),
    ] {
        let Some(site) = site else {
            continue;
        };
        let registered = found.iter().any(|entry| {
            entry.event == site.event && hook_role(harness, &entry.command) == Some(role)
        });
        if !registered {
            let command = engine_command(request.program, role, harness, None);
            operations.push(add_at_matched_site(site, command, plan));
        }
    }
    for entry in found {
        if mentions_a_reference_hook(harness, &entry.command)
            && engine_role(&entry.command).is_none()
        {
            plan.notes.push(format!(
                "{}: kept `{}`: it runs one of the reference's hooks among other things, so aidlc does not edit it; take the reference's hook out of it, or it runs beside aidlc's",
                entry.event, entry.command
            ));
        }
    }
    operations
}

/// The write hook's group for the file tools the write hook's other groups on the event leave
/// out (`file_tool_entries`, after they were settled; none: the engine's own group, with
/// every file tool, goes in). Needed exactly when those groups match `site`'s tools by name
/// and nothing else does (the reference's `Write|Edit`); a group matching some of them is
/// not widened, and the tools it leaves out are named in a note.
fn settle_more_file_tools(
    request: &InstallRequest<'_>,
    site: Site,
    file_tool_entries: &[&Entry],
    of_more: &[&Entry],
    plan: &mut FilePlan,
) -> Vec<Operation> {
    let wanted: Vec<&str> = site
        .matcher
        .map_or(Vec::new(), |tools| tools.split('|').collect());
    let covered = |tool: &str| {
        file_tool_entries.is_empty()
            || file_tool_entries
                .iter()
                .any(|entry| matcher_names_tool(entry.matcher.as_deref(), tool))
    };
    let left_out: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|tool| !covered(tool))
        .collect();
    if left_out.len() == wanted.len() {
        return settle_or_add(request, site, of_more, plan);
    }
    if !left_out.is_empty() {
        let pronoun = if left_out.len() == 1 { "it" } else { "them" };
        plan.notes.push(format!(
            "{}: the write hook's group does not match {}; writes with {pronoun} fire no sensor until the group's matcher names {pronoun}",
            site.event,
            left_out.join(", "),
        ));
    }
    of_more
        .iter()
        .map(|entry| {
            plan.changes.push(format!(
                "{}: removed {} (the write hook's other group already matches {})",
                entry.event,
                entry.command,
                site.matcher.unwrap_or_default()
            ));
            Operation::Remove {
                entry: (*entry).clone(),
            }
        })
        .collect()
}

/// Whether a Claude Code matcher names `tool`: no matcher, an empty one and `*` match every
/// tool; a list of names (letters, digits, `_`, `|`) matches its names exactly; anything else
/// is a regular expression, taken to match (it is not read here).
fn matcher_names_tool(matcher: Option<&str>, tool: &str) -> bool {
    match matcher {
        None | Some("" | "*") => true,
        Some(names)
            if names
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|') =>
        {
            names.split('|').any(|name| name == tool)
        }
        Some(_) => true,
    }
}

/// The write hook's entries at `site` (a group of its own) settled as one event's, or the
/// engine's added there when there are none.
fn settle_or_add(
    request: &InstallRequest<'_>,
    site: Site,
    of_site: &[&Entry],
    plan: &mut FilePlan,
) -> Vec<Operation> {
    if of_site.is_empty() {
        let command = engine_command(request.program, HookRole::Write, request.harness, None);
        return vec![add_at_matched_site(site, command, plan)];
    }
    settle_event(request, HookRole::Write, of_site, None, plan)
}

/// Add `command` at `site`, an event's group of its own named by its matcher, and say so.
fn add_at_matched_site(site: Site, command: String, plan: &mut FilePlan) -> Operation {
    plan.changes.push(match site.matcher {
        Some(matcher) => format!("{} ({matcher}): added {command}", site.event),
        None => format!("{}: added {command}", site.event),
    });
    Operation::Add { site, command }
}

/// One event's entries for one role: a reference command that keeps the role leaves nothing
/// else; otherwise the first becomes the engine's command and the others go.
fn settle_event(
    request: &InstallRequest<'_>,
    role: HookRole,
    of_event: &[&Entry],
    audit_hook: Option<&str>,
    plan: &mut FilePlan,
) -> Vec<Operation> {
    let harness = request.harness;
    let kept = of_event.iter().find(|entry| {
        reference_command(harness, &entry.command)
            .is_some_and(|known| known.takeover == Takeover::Keep)
    });
    let mut operations = Vec::new();
    if let Some(kept) = kept {
        plan.notes.push(format!(
            "{}: kept the reference's `{}`, which records the human turn itself (and does more)",
            kept.event, kept.command
        ));
        for entry in of_event.iter().filter(|entry| entry != &kept) {
            plan.changes.push(format!(
                "{}: removed {} (the reference's `{}` already does it)",
                entry.event, entry.command, kept.command
            ));
            operations.push(Operation::Remove {
                entry: (*entry).clone(),
            });
        }
        return operations;
    }
    for (index, entry) in of_event.iter().enumerate() {
        let wanted = takeover_command(request.program, role, harness, &entry.command, audit_hook);
        if index > 0 {
            plan.changes.push(format!(
                "{}: removed {} (a second {} for one event)",
                entry.event,
                entry.command,
                role.label().to_lowercase()
            ));
            operations.push(Operation::Remove {
                entry: (*entry).clone(),
            });
        } else if entry.command != wanted {
            plan.changes
                .push(format!("{}: replaced {}", entry.event, entry.command));
            operations.push(Operation::Replace {
                entry: (*entry).clone(),
                command: wanted,
            });
        }
    }
    operations
}

/// `operations` applied one at a time, each on the text the one before left: replacements
/// (which keep every position), removals from the last entry back (so the positions of the
/// ones still to go stay valid), then additions.
fn apply(
    text: &str,
    shape: Shape,
    path: &Utf8Path,
    operations: Vec<Operation>,
) -> Result<String, HookInstallError> {
    let mut replacements = Vec::new();
    let mut removals = Vec::new();
    let mut additions = Vec::new();
    for operation in operations {
        match operation {
            Operation::Replace { entry, command } => replacements.push((entry, command)),
            Operation::Remove { entry } => removals.push(entry),
            Operation::Add { site, command } => additions.push((site, command)),
        }
    }
    let edits: Vec<Edit> = replacements
        .iter()
        .flat_map(|(entry, command)| {
            entry
                .command_spans
                .iter()
                .map(|span| json_text::replace_string(span.clone(), command))
        })
        .collect();
    let mut text = json_text::apply_edits(text, edits);
    removals.sort_by_key(|entry| std::cmp::Reverse((entry.event_index, entry.item, entry.hook)));
    for entry in &removals {
        text = remove_entry(&text, shape, path, entry)?;
    }
    for (site, command) in &additions {
        text = add_entry(&text, shape, path, *site, command)?;
    }
    Ok(text)
}

/// Remove `entry`; its group, then its event, go too when nothing is left in them.
fn remove_entry(
    text: &str,
    shape: Shape,
    path: &Utf8Path,
    entry: &Entry,
) -> Result<String, HookInstallError> {
    let root = parse(text, path)?;
    let Some(hooks) = root.get("hooks") else {
        return Ok(text.to_owned());
    };
    let Some(event) = hooks
        .value
        .members()
        .and_then(|events| events.get(entry.event_index))
    else {
        return Ok(text.to_owned());
    };
    let items = event.value.elements().unwrap_or_default();
    // The innermost list that keeps an item once the entry is gone: the group's hooks, the
    // event's groups, else the events.
    let group_hooks = match (shape, entry.hook) {
        (Shape::Groups, Some(hook)) => items[entry.item]
            .get("hooks")
            .map(|member| (&member.value, hook)),
        _ => None,
    };
    let (list, index) = match group_hooks {
        Some((list, hook)) if list.elements().map_or(0, <[Node]>::len) > 1 => (list, hook),
        _ if items.len() > 1 => (&event.value, entry.item),
        _ => (&hooks.value, entry.event_index),
    };
    let edit = json_text::remove_item(text, list, index);
    Ok(json_text::apply_edits(text, vec![edit]))
}

/// Add `command` at `site`: to the event's array, else as a new event, else under a new
/// `hooks`.
fn add_entry(
    text: &str,
    shape: Shape,
    path: &Utf8Path,
    site: Site,
    command: &str,
) -> Result<String, HookInstallError> {
    let root = parse(text, path)?;
    let layout = Layout::of(text);
    let item = new_item(shape, site, command);
    let edit = match root.get("hooks") {
        None => {
            let events = json!({ site.event: [item] });
            json_text::insert_member(text, &layout, &root, "hooks", &events)
        }
        Some(hooks) => match hooks.value.get(site.event) {
            None => {
                json_text::insert_member(text, &layout, &hooks.value, site.event, &json!([item]))
            }
            Some(event) => json_text::append_element(text, &layout, &event.value, &item),
        },
    };
    Ok(json_text::apply_edits(text, vec![edit]))
}

/// The new entry for `site`, in the order the harness's own files write its keys.
fn new_item(shape: Shape, site: Site, command: &str) -> Value {
    let mut item = match shape {
        Shape::Groups => json!({
            "matcher": site.matcher,
            "hooks": [{"type": "command", "command": command}],
        }),
        Shape::Scripts => json!({
            "type": "command",
            "bash": command,
            "powershell": command,
            "timeoutSec": site.timeout_ms.map(|timeout| timeout / 1000),
        }),
        Shape::Commands => json!({
            "matcher": site.matcher,
            "command": command,
            "timeout_ms": site.timeout_ms,
        }),
    };
    // A site without a matcher or a timeout writes no key for it.
    if let Some(object) = item.as_object_mut() {
        object.retain(|_, value| !value.is_null());
    }
    item
}

/// After an uninstall: a `hooks` left empty goes too.
fn without_empty_hooks(text: &str, path: &Utf8Path) -> Result<String, HookInstallError> {
    let root = parse(text, path)?;
    let Some(members) = root.members() else {
        return Ok(text.to_owned());
    };
    match members.iter().position(|member| member.key == "hooks") {
        Some(index)
            if members[index]
                .value
                .members()
                .is_some_and(<[json_text::Member]>::is_empty) =>
        {
            Ok(json_text::apply_edits(
                text,
                vec![json_text::remove_item(text, &root, index)],
            ))
        }
        _ => Ok(text.to_owned()),
    }
}
