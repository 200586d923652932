//! Codex runs a hook from a project's `hooks.json` only once it is trusted: the user accepts it
//! when Codex next starts there, or their configuration (`$CODEX_HOME/config.toml`) already
//! holds its trust entry, keyed by the file, the event, the group and the hook, with the hash
//! of the hook's identity (`{"event_name": <event in snake case>, "hooks": [{"async": false,
//! "command": …, "timeout": 600, "type": "command"}]}`, keys sorted, compact, SHA-256), as the
//! reference's Codex projection documents. `hook install` never writes the user's
//! configuration: it prints the entries for the engine's hooks, to paste there.

use camino::Utf8Path;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::hook_lists::{Shape, entries};
use super::json_text;
use crate::harness::commands::engine_role;

/// The follow-up for the written `hooks.json` at `path` holding `text`, naming the trust entry
/// of each engine hook in it.
pub fn follow_up(path: &Utf8Path, text: &str) -> Option<String> {
    let root = json_text::parse(text).ok()?;
    let found = entries(&root, Shape::Groups, path).ok()?;
    let lines: Vec<String> = found
        .iter()
        .filter(|entry| engine_role(&entry.command).is_some())
        .map(|entry| {
            let event = snake_case(&entry.event);
            let key = format!(
                "{path}:{event}:{}:{}",
                entry.item,
                entry.hook.unwrap_or_default()
            );
            format!(
                "[hooks.state.{}]\ntrusted_hash = \"sha256:{}\"",
                toml_string(&key),
                trust_hash(&event, &entry.command)
            )
        })
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "codex runs a new or changed hook once it is trusted: accept it when codex next starts here, or add to $CODEX_HOME/config.toml (~/.codex/config.toml):\n{}",
            lines.join("\n")
        )
    })
}

/// `PostToolUse` → `post_tool_use`.
fn snake_case(event: &str) -> String {
    let mut snake = String::new();
    for (index, character) in event.chars().enumerate() {
        if character.is_ascii_uppercase() && index > 0 {
            snake.push('_');
        }
        snake.push(character.to_ascii_lowercase());
    }
    snake
}

/// The hash Codex keeps for a trusted hook.
pub fn trust_hash(event_snake: &str, command: &str) -> String {
    let identity = json!({
        "event_name": event_snake,
        "hooks": [{"async": false, "command": command, "timeout": 600, "type": "command"}],
    });
    format!("{:x}", Sha256::digest(identity.to_string().as_bytes()))
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_codex_s_for_the_reference_s_own_session_start_hook() {
        // The value the reference's Codex projection ships in its trust seed.
        assert_eq!(
            trust_hash(
                "session_start",
                "bun .codex/hooks/aidlc-codex-adapter.ts session-start"
            ),
            "ec7321a5902723dfe5d1b79fe13a48724fdf69a2029f83d4168ae28da6121c96"
        );
        assert_eq!(snake_case("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn each_engine_hook_gets_its_trust_entry() {
        let text = r#"{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "bun x.ts"}]}, {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "aidlc engine hook run-sensors --harness codex"}]}]}}"#;
        let follow_up = follow_up(Utf8Path::new("/p/.codex/hooks.json"), text).unwrap();
        assert!(
            follow_up.contains(
                "[hooks.state.\"/p/.codex/hooks.json:post_tool_use:1:0\"]\ntrusted_hash = \"sha256:"
            ),
            "{follow_up}"
        );
        assert!(!follow_up.contains("bun x.ts"));
    }
}
