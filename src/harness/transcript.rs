//! Where a harness keeps the conversation's transcript, for checks that ask whether a human
//! really typed an answer (the receipts of a blocking-sensor override).
//!
//! Claude Code and Codex name it in every hook payload (`transcript_path`: Claude Code's JSONL,
//! Codex's rollout JSONL, `…/rollout-<time>-<session>.jsonl`); Kiro CLI, Kiro IDE and opencode
//! give their hooks none, so there the human-turn marker (`<record>/.aidlc-human-turn`) and the
//! ledger's `HUMAN_TURN` rows are all there is.
//!
//! A human turn's receipt names the transcript and the line from which the prompt is (or will
//! be) written; [`find_user_prompt`] re-reads it and finds the first user message from that line
//! whose text has the receipt's digest. A transcript edited after the turn no longer holds that
//! text, so the receipt no longer verifies (docs/decisions.md D34).
//!
//! Must not: decide anything; the caller says what a missing prompt means.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::harness::Harness;

/// The transcript's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptFormat {
    ClaudeJsonLines,
    CodexRollout,
}

/// Where the transcript is, for one hook payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transcript {
    At {
        path: Utf8PathBuf,
        format: TranscriptFormat,
    },
    /// The payload names none: `harness` gives its hooks no transcript, or this payload lacks it.
    None,
}

/// The transcript `harness`'s `payload` names.
pub fn transcript(harness: Harness, payload: &[u8]) -> Transcript {
    let format = match harness {
        Harness::Claude => TranscriptFormat::ClaudeJsonLines,
        Harness::Codex => TranscriptFormat::CodexRollout,
        Harness::Kiro
        | Harness::KiroCliV3
        | Harness::KiroIde
        | Harness::Opencode
        | Harness::Cursor
        | Harness::Copilot => {
            return Transcript::None;
        }
    };
    serde_json::from_slice::<Value>(payload)
        .ok()
        .and_then(|value| {
            value
                .get("transcript_path")?
                .as_str()
                .filter(|path| !path.is_empty())
                .map(|path| Transcript::At {
                    path: Utf8PathBuf::from(path),
                    format,
                })
        })
        .unwrap_or(Transcript::None)
}

/// The hex BLAKE3 digest of a prompt's text, as a human-turn receipt records it.
pub fn prompt_digest(prompt: &str) -> String {
    blake3::hash(prompt.as_bytes()).to_hex().to_string()
}

/// Why a prompt could not be found in a transcript.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    #[error("the transcript {path} cannot be read: {reason}")]
    Unreadable { path: Utf8PathBuf, reason: String },
    #[error(
        "the transcript {path} holds no user message with the recorded prompt from line {from_line} on (it was edited, or the turn was not recorded by the harness)"
    )]
    PromptNotFound { path: Utf8PathBuf, from_line: usize },
}

/// The largest transcript read: a long session's JSONL runs to tens of megabytes; past this it
/// is refused rather than read.
pub const MAX_TRANSCRIPT_BYTES: u64 = 512 * 1024 * 1024;

/// The transcript's text, read once with the compile's open (a regular file only, never
/// blocking on a FIFO) and at most [`MAX_TRANSCRIPT_BYTES`].
pub fn read_transcript(path: &Utf8Path) -> Result<String, TranscriptError> {
    crate::leaves::fs_util::read_bounded_text(path, MAX_TRANSCRIPT_BYTES).map_err(|error| {
        TranscriptError::Unreadable {
            path: path.to_owned(),
            reason: error.to_string(),
        }
    })
}

/// The transcript's non-empty lines, numbered from 1 as receipts count them.
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .filter(|line| !line.is_empty())
        .enumerate()
        .map(|(index, line)| (index + 1, line))
}

/// The 1-based line of the first user message at or after `from_line` whose text (the whole
/// text, or one of its text parts) has `digest`, with that text.
pub fn find_user_prompt(
    path: &Utf8Path,
    format: TranscriptFormat,
    from_line: usize,
    digest: &str,
) -> Result<(usize, String), TranscriptError> {
    find_user_prompt_in(&read_transcript(path)?, format, from_line, digest).ok_or_else(|| {
        TranscriptError::PromptNotFound {
            path: path.to_owned(),
            from_line,
        }
    })
}

/// Where a prompt stands in a transcript read now: its line when the harness already wrote it
/// (within the last `window` lines), else the line after the last one (1 for a transcript that
/// cannot be read yet).
pub fn prompt_line_now(
    path: &Utf8Path,
    format: TranscriptFormat,
    digest: &str,
    window: usize,
) -> usize {
    let Ok(text) = read_transcript(path) else {
        return 1;
    };
    let lines = numbered_lines(&text).count();
    let window_start = lines.saturating_sub(window - 1).max(1);
    find_user_prompt_in(&text, format, window_start, digest).map_or(lines + 1, |(line, _)| line)
}

fn find_user_prompt_in(
    text: &str,
    format: TranscriptFormat,
    from_line: usize,
    digest: &str,
) -> Option<(usize, String)> {
    let questions = ask_user_question_ids(text, format);
    numbered_lines(text)
        .skip(from_line.saturating_sub(1))
        .find_map(|(line_number, line)| {
            let mut candidates = user_texts(line, format);
            candidates.extend(picked_answers(line, &questions));
            candidates
                .into_iter()
                .find(|candidate| prompt_digest(candidate) == digest)
                .map(|found| (line_number, found))
        })
}

/// The tool name of Claude Code's question widget.
pub const ASK_USER_QUESTION_TOOL: &str = "AskUserQuestion";

/// The ids of every `AskUserQuestion` call the assistant made in a Claude Code transcript
/// (`{"type":"assistant","message":{"content":[{"type":"tool_use","id","name"}]}}`).
fn ask_user_question_ids(text: &str, format: TranscriptFormat) -> Vec<String> {
    if format != TranscriptFormat::ClaudeJsonLines {
        return Vec::new();
    }
    numbered_lines(text)
        .filter(|(_, line)| line.contains(ASK_USER_QUESTION_TOOL))
        .filter_map(|(_, line)| serde_json::from_str::<Value>(line).ok())
        .filter(|value| value.get("type").and_then(Value::as_str) == Some("assistant"))
        .flat_map(|value| {
            value
                .pointer("/message/content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter(|part| {
            part.get("type").and_then(Value::as_str) == Some("tool_use")
                && part.get("name").and_then(Value::as_str) == Some(ASK_USER_QUESTION_TOOL)
        })
        .filter_map(|part| part.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// The answers a person picked in Claude Code's question widget, when `line` is the harness's
/// result of one of the `questions` calls: a user line whose `tool_result` answers that call
/// and whose `toolUseResult.answers` holds the picks. The candidate is the picks, one per line,
/// in the order the harness wrote them ([`picked_answers_text`]).
fn picked_answers(line: &str, questions: &[String]) -> Option<String> {
    if questions.is_empty() || !line.contains("toolUseResult") {
        return None;
    }
    let value = serde_json::from_str::<Value>(line).ok()?;
    if value.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let answers_a_question = value
        .pointer("/message/content")
        .and_then(Value::as_array)?
        .iter()
        .any(|part| {
            part.get("type").and_then(Value::as_str) == Some("tool_result")
                && part
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| questions.iter().any(|question| question == id))
        });
    if !answers_a_question {
        return None;
    }
    picked_answers_text(value.get("toolUseResult")?)
}

/// The picks of an `AskUserQuestion` result (`{"answers":{"<question>":"<label>",…}}`), one per
/// line; `None` when it holds none.
pub fn picked_answers_text(result: &Value) -> Option<String> {
    let answers: Vec<&str> = result
        .get("answers")?
        .as_object()?
        .values()
        .filter_map(Value::as_str)
        .collect();
    (!answers.is_empty()).then(|| answers.join("\n"))
}

/// Claude Code's folder name for a project's sessions: the project's absolute path with every
/// character that is not an ASCII letter or digit replaced by `-`.
pub fn claude_project_folder_name(project_dir: &Utf8Path) -> String {
    project_dir
        .as_str()
        .replace(|character: char| !character.is_ascii_alphanumeric(), "-")
}

/// The folder the harness keeps its sessions in, as its hooks' environment names it: Claude
/// Code's `~/.claude`, Codex's `$CODEX_HOME` (else `~/.codex`).
pub fn harness_home(
    format: TranscriptFormat,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Utf8PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let home = set("HOME").map(Utf8PathBuf::from);
    match format {
        TranscriptFormat::ClaudeJsonLines => home.map(|home| home.join(".claude")),
        TranscriptFormat::CodexRollout => set("CODEX_HOME")
            .map(Utf8PathBuf::from)
            .or_else(|| home.map(|home| home.join(".codex"))),
    }
}

/// Whether `path` is where the harness keeps the transcript of `session` in `project_dir`:
/// Claude Code's `<harness home>/projects/<project folder name>/<session>.jsonl`, Codex's
/// `<harness home>/sessions/…/rollout-…-<session>.jsonl`. With `home` ([`harness_home`],
/// for the hook the harness runs) the place is compared whole; without it (a later check) its
/// shape is. A transcript that exists must be a regular file, not a link. The reason when it is
/// not.
pub fn check_transcript_place(
    format: TranscriptFormat,
    path: &Utf8Path,
    project_dir: &Utf8Path,
    session: &str,
    home: Option<&Utf8Path>,
) -> Result<(), String> {
    if session.is_empty()
        || !session
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character))
        || session.starts_with('.')
    {
        return Err(format!(
            "the session id {session:?} cannot name a transcript (letters, digits, `-`, `_` and `.` only)"
        ));
    }
    let file_name = path.file_name().unwrap_or_default();
    let expected = match format {
        TranscriptFormat::ClaudeJsonLines => {
            let folder = claude_project_folder_name(project_dir);
            let tail = Utf8PathBuf::from("projects")
                .join(&folder)
                .join(format!("{session}.jsonl"));
            let in_place = match home {
                Some(home) => path == home.join(&tail),
                None => path.ends_with(Utf8PathBuf::from(".claude").join(&tail)),
            };
            in_place.then_some(()).ok_or_else(|| {
                format!(
                    "the transcript {path} is not Claude Code's for this project and session (~/.claude/{tail})"
                )
            })
        }
        TranscriptFormat::CodexRollout => {
            let named = file_name.starts_with("rollout-")
                && file_name.ends_with(&format!("-{session}.jsonl"));
            let sessions = path
                .ancestors()
                .find(|folder| folder.file_name() == Some("sessions"));
            let in_place = sessions.is_some_and(|sessions| match home {
                Some(home) => sessions == home.join("sessions"),
                None => true,
            });
            (named && in_place).then_some(()).ok_or_else(|| {
                format!(
                    "the transcript {path} is not a Codex session file of session {session} ($CODEX_HOME/sessions/…/rollout-…-{session}.jsonl, ~/.codex by default)"
                )
            })
        }
    };
    expected?;
    if path
        .components()
        .any(|component| component.as_str() == "..")
    {
        return Err(format!("the transcript {path} is named through `..`"));
    }
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if !metadata.file_type().is_file() => Err(format!(
            "the transcript {path} is not a regular file (a link or a folder)"
        )),
        _ => Ok(()),
    }
}

/// The texts a transcript line holds when it is a user's message: Claude Code's
/// `{"type":"user","message":{"role":"user","content": "…" | [{"type":"text","text":"…"}]}}`;
/// Codex's `{"type":"response_item","payload":{"type":"message","role":"user","content":
/// [{"type":"input_text","text":"…"}]}}` or `{"type":"event_msg","payload":{"type":
/// "user_message","message":"…"}}`. Every text part, and all of them joined, are candidates.
fn user_texts(line: &str, format: TranscriptFormat) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let text_of = |key: &str| value.get(key).and_then(Value::as_str);
    match format {
        TranscriptFormat::ClaudeJsonLines => {
            let Some(message) = value.get("message") else {
                return Vec::new();
            };
            if text_of("type") != Some("user")
                || message.get("role").and_then(Value::as_str) != Some("user")
            {
                return Vec::new();
            }
            content_texts(message.get("content"), "text")
        }
        TranscriptFormat::CodexRollout => {
            let Some(payload) = value.get("payload") else {
                return Vec::new();
            };
            let payload_text = |key: &str| payload.get(key).and_then(Value::as_str);
            match (text_of("type"), payload_text("type")) {
                (Some("response_item"), Some("message"))
                    if payload_text("role") == Some("user") =>
                {
                    content_texts(payload.get("content"), "input_text")
                }
                (Some("event_msg"), Some("user_message")) => payload_text("message")
                    .map(str::to_owned)
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            }
        }
    }
}

fn content_texts(content: Option<&Value>, part_type: &str) -> Vec<String> {
    match content {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(parts)) => {
            let mut texts: Vec<String> = parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some(part_type))
                .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect();
            if texts.len() > 1 {
                texts.push(texts.join("\n"));
            }
            texts
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_found_from_its_line_and_not_after_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(dir.path().join("t.jsonl")).unwrap();
        let user = |text: &str| {
            serde_json::json!({"type":"user","message":{"role":"user","content":text}}).to_string()
        };
        let assistant = serde_json::json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"go on"}]}}).to_string();
        std::fs::write(
            &path,
            format!("{}\n{assistant}\n{}\n", user("first"), user("go on")),
        )
        .unwrap();
        let digest = prompt_digest("go on");
        assert_eq!(
            find_user_prompt(&path, TranscriptFormat::ClaudeJsonLines, 1, &digest),
            Ok((3, "go on".to_owned())),
            "the assistant's text is not a user prompt"
        );
        assert!(
            find_user_prompt(
                &path,
                TranscriptFormat::ClaudeJsonLines,
                1,
                &prompt_digest("first")
            )
            .is_ok()
        );
        assert!(matches!(
            find_user_prompt(
                &path,
                TranscriptFormat::ClaudeJsonLines,
                2,
                &prompt_digest("first")
            ),
            Err(TranscriptError::PromptNotFound { from_line: 2, .. })
        ));
        std::fs::write(&path, format!("{}\n{}\n", user("first"), user("go on!"))).unwrap();
        assert!(find_user_prompt(&path, TranscriptFormat::ClaudeJsonLines, 1, &digest).is_err());
    }

    #[test]
    fn codex_user_messages_are_read_from_both_of_its_line_kinds() {
        let response = r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"yes"}]}}"#;
        let event = r#"{"type":"event_msg","payload":{"type":"user_message","message":"yes"}}"#;
        let agent = r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yes"}]}}"#;
        assert_eq!(
            user_texts(response, TranscriptFormat::CodexRollout),
            ["yes"]
        );
        assert_eq!(user_texts(event, TranscriptFormat::CodexRollout), ["yes"]);
        assert!(user_texts(agent, TranscriptFormat::CodexRollout).is_empty());
        assert!(user_texts(response, TranscriptFormat::ClaudeJsonLines).is_empty());
    }

    #[test]
    fn claude_code_and_codex_name_their_transcript_and_the_others_have_none() {
        let payload = br#"{"transcript_path":"/h/rollout-1.jsonl","cwd":"/p"}"#;
        assert_eq!(
            transcript(Harness::Codex, payload),
            Transcript::At {
                path: Utf8PathBuf::from("/h/rollout-1.jsonl"),
                format: TranscriptFormat::CodexRollout
            }
        );
        assert!(matches!(
            transcript(Harness::Claude, payload),
            Transcript::At {
                format: TranscriptFormat::ClaudeJsonLines,
                ..
            }
        ));
        for harness in [Harness::Kiro, Harness::KiroIde, Harness::Opencode] {
            assert_eq!(transcript(harness, payload), Transcript::None);
        }
        assert_eq!(transcript(Harness::Claude, b"{}"), Transcript::None);
    }
}
