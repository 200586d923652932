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
        Harness::Kiro | Harness::KiroIde | Harness::Opencode | Harness::Cursor => {
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
    let unreadable = |reason: String| TranscriptError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let (metadata, file) =
        crate::fs_util::open_regular_file(path).map_err(|error| unreadable(error.to_string()))?;
    if metadata.len() > MAX_TRANSCRIPT_BYTES {
        return Err(unreadable(format!(
            "it is {} bytes, more than the limit of {MAX_TRANSCRIPT_BYTES} bytes",
            metadata.len()
        )));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(file, MAX_TRANSCRIPT_BYTES),
        &mut text,
    )
    .map_err(|error| unreadable(error.to_string()))?;
    Ok(text)
}

/// The transcript's non-empty lines, numbered from 1 as receipts count them.
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .filter(|line| !line.is_empty())
        .enumerate()
        .map(|(index, line)| (index + 1, line))
}

/// How many lines `path` holds now (0 when it does not exist yet: a session's first prompt can
/// come before its transcript is written).
pub fn line_count(path: &Utf8Path) -> usize {
    read_transcript(path).map_or(0, |text| numbered_lines(&text).count())
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
    numbered_lines(text)
        .skip(from_line.saturating_sub(1))
        .find_map(|(line_number, line)| {
            user_texts(line, format)
                .into_iter()
                .find(|candidate| prompt_digest(candidate) == digest)
                .map(|found| (line_number, found))
        })
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
            let texts: Vec<String> = parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some(part_type))
                .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect();
            let mut candidates = texts.clone();
            if texts.len() > 1 {
                candidates.push(texts.join("\n"));
            }
            candidates
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
        assert_eq!(line_count(&path), 3);
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
