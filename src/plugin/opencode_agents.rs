//! A plugin agent as `OpenCode` reads it.
//!
//! On an `OpenCode` install the conductor's agents live in the harness folder (`.aidlc/agents/`),
//! but `OpenCode` dispatches only the subagents of its own roster, `.opencode/agents/<name>.md`.
//! Composing a plugin agent there writes both: the harness copy, and a native copy whose
//! frontmatter is what an `OpenCode` subagent accepts. In both, the harness's rules folder
//! (`<harness>/rules/`, which an `OpenCode` install does not have) is named as the space's
//! memory folder, where that install keeps its guardrails.
//!
//! Invariants:
//! - pure: texts in, texts (or the warning that refuses the copy) out;
//! - the native copy keeps the body and every frontmatter line except the Claude-only keys
//!   (`disallowedTools`, `mode`, `tier`, `effort`) and a `model:` without a provider (no `/`);
//!   it always ends its frontmatter with `task: deny` under `permission:` and `mode: subagent`;
//! - an agent with no closed frontmatter, or whose `disallowedTools` is anything but `Task`
//!   (which `task: deny` says), gets no native copy.

use crate::leaves::text_lines::lines_with_starts;
use crate::plugin::Problem;

/// The project-relative folder of `OpenCode`'s native agent roster.
pub const NATIVE_AGENTS_FOLDER: &str = ".opencode/agents";

/// Where an `OpenCode` install keeps the guardrails other harnesses keep in their rules folder.
const MEMORY_FOLDER: &str = "aidlc/spaces/default/memory/";

/// The rules files whose memory counterparts drop the `aidlc-` prefix.
const RULES_FILES: [&str; 3] = ["org", "team", "project"];

/// `text` with every path into `<harness_dir>/rules/` naming the space's memory folder instead.
pub fn rules_paths_as_memory(text: &str, harness_dir: &str) -> String {
    let rules_folder = format!("{harness_dir}/rules/");
    let mut projected = text.to_owned();
    for name in RULES_FILES {
        projected = projected.replace(
            &format!("{rules_folder}aidlc-{name}.md"),
            &format!("{MEMORY_FOLDER}{name}.md"),
        );
    }
    projected.replace(&rules_folder, MEMORY_FOLDER)
}

/// The frontmatter lines and the body of `text`, when it starts with a closed `---` block.
fn split_frontmatter(text: &str) -> Option<(Vec<&str>, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut lines = Vec::new();
    for (start, line) in lines_with_starts(rest) {
        let content = line.trim_end_matches('\n').trim_end_matches('\r');
        if content == "---" && line.ends_with('\n') && !lines.is_empty() {
            return Some((lines, &rest[start + line.len()..]));
        }
        lines.push(content);
    }
    None
}

/// The value of a top-level `key:` line, trimmed.
fn line_value<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    line.strip_prefix(key)
        .and_then(|rest| rest.strip_prefix(':'))
        .map(str::trim)
}

/// Whether a frontmatter line is one `OpenCode`'s subagent does not take.
fn is_claude_only_line(line: &str) -> bool {
    if ["disallowedTools", "mode", "tier", "effort"]
        .iter()
        .any(|key| line_value(line, key).is_some())
    {
        return true;
    }
    line_value(line, "model").is_some_and(|model| {
        let model = model.split(" #").next().unwrap_or(model).trim();
        !model.contains('/')
    })
}

/// The agent at `text` as an `OpenCode` subagent, or the warning why it cannot be one (the
/// caller names the plugin and the agent's file).
pub fn native_agent(text: &str) -> Result<String, Problem> {
    let refused = |reason: String, help: &str| {
        Problem::warning(format!(
            "{reason}, so it is not copied to OpenCode's roster ({NATIVE_AGENTS_FOLDER}/)"
        ))
        .with_help(help)
    };
    let Some((lines, body)) = split_frontmatter(text) else {
        return Err(refused(
            "has no closed frontmatter block".to_owned(),
            "start the agent file with a frontmatter block between two `---` lines",
        ));
    };
    if let Some(tools) = lines
        .iter()
        .find_map(|line| line_value(line, "disallowedTools"))
        .filter(|tools| !tools.eq_ignore_ascii_case("task"))
    {
        return Err(refused(
            format!("its disallowedTools \"{tools}\" cannot be said in OpenCode"),
            "disallow only `Task` (OpenCode's `permission: task: deny`), or author the OpenCode subagent yourself",
        ));
    }
    let mut kept: Vec<String> = lines
        .into_iter()
        .filter(|line| !is_claude_only_line(line))
        .map(str::to_owned)
        .collect();
    deny_the_task_tool(&mut kept);
    kept.push("mode: subagent".to_owned());
    Ok(format!("---\n{}\n---\n{body}", kept.join("\n")))
}

/// Say `task: deny` under `permission:`: replace an indented `task:` line when there is a
/// `permission:` block, add one to it, or add the block.
fn deny_the_task_tool(lines: &mut Vec<String>) {
    let Some(permission) = lines
        .iter()
        .position(|line| line_value(line, "permission") == Some(""))
    else {
        lines.push("permission:".to_owned());
        lines.push("  task: deny".to_owned());
        return;
    };
    if let Some(task) = lines.iter().position(|line| line.starts_with("  task:")) {
        "  task: deny".clone_into(&mut lines[task]);
    } else {
        lines.insert(permission + 1, "  task: deny".to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_paths_name_the_memory_folder() {
        let text =
            "read .aidlc/rules/aidlc-org.md, .aidlc/rules/aidlc-project.md and `.aidlc/rules/`";
        assert_eq!(
            rules_paths_as_memory(text, ".aidlc"),
            "read aidlc/spaces/default/memory/org.md, aidlc/spaces/default/memory/project.md and `aidlc/spaces/default/memory/`"
        );
        assert_eq!(rules_paths_as_memory(text, ".other"), text);
    }

    #[test]
    fn the_native_agent_keeps_what_opencode_takes_and_denies_the_task_tool() {
        let text = "---\nname: a\ndescription: >\n  An agent.\ndisallowedTools: Task\nmodel: sonnet\ntier: 2\n---\n\nBody\n---\n";
        assert_eq!(
            native_agent(text).unwrap(),
            "---\nname: a\ndescription: >\n  An agent.\npermission:\n  task: deny\nmode: subagent\n---\n\nBody\n---\n"
        );
        let with_provider = "---\nname: a\nmodel: anthropic/claude\nmode: primary\npermission:\n  edit: ask\n---\nBody\n";
        assert_eq!(
            native_agent(with_provider).unwrap(),
            "---\nname: a\nmodel: anthropic/claude\npermission:\n  task: deny\n  edit: ask\nmode: subagent\n---\nBody\n"
        );
        let with_task = "---\nname: a\npermission:\n  task: allow\n---\nBody\n";
        assert_eq!(
            native_agent(with_task).unwrap(),
            "---\nname: a\npermission:\n  task: deny\nmode: subagent\n---\nBody\n"
        );
    }

    #[test]
    fn an_agent_opencode_cannot_take_gets_no_native_copy() {
        let refused = |text: &str| native_agent(text).unwrap_err().message().to_owned();
        let unclosed = "has no closed frontmatter block, so it is not copied to OpenCode's roster (.opencode/agents/)";
        assert_eq!(refused("# no frontmatter\n"), unclosed);
        assert_eq!(refused("---\nname: a\n"), unclosed);
        assert_eq!(
            refused("---\nname: a\ndisallowedTools: Bash, Task\n---\n"),
            "its disallowedTools \"Bash, Task\" cannot be said in OpenCode, so it is not copied to OpenCode's roster (.opencode/agents/)"
        );
    }
}
