//! Where a harness keeps the conversation's transcript, for checks that ask whether a human
//! really typed an answer (the receipts of a blocking-sensor override).
//!
//! Claude Code and Codex name it in every hook payload (`transcript_path`: Claude Code's JSONL,
//! Codex's rollout JSONL, `…/rollout-<time>-<session>.jsonl`); Kiro CLI, Kiro IDE and opencode
//! give their hooks none, so there the human-turn marker (`<record>/.aidlc-human-turn`) and the
//! ledger's `HUMAN_TURN` rows are all there is.

use camino::Utf8PathBuf;
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

#[cfg(test)]
mod tests {
    use super::*;

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
