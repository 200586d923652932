//! The human turn's receipt (docs/decisions.md D34): the fields `aidlc engine hook
//! record-human-turn` adds to a `HUMAN_TURN` row, their digest, and the check that re-reads the
//! prompt (in the harness's transcript, or the engine's kept copy) and compares. Both the
//! receipts' writer (`engine log answer`, `record-human-turn`) and the gate (`gate::step::receipt`) ask this module, so
//! neither imports the other for it.
//!
//! Must not: write, or decide the gate.

use camino::Utf8Path;

use crate::harness::Harness;
use crate::harness::transcript::{self, ASK_USER_QUESTION_TOOL, TranscriptFormat};
use crate::runtime::audit::ledger::{self, AuditBlock, LedgerEntry, shard_entries};

/// The fields of a `HUMAN_TURN` receipt (after the reference's, which has none; its readers
/// ignore them, D2).
pub const HARNESS_FIELD: &str = "Harness";
pub const SESSION_FIELD: &str = "Session";
pub const PROMPT_DIGEST_FIELD: &str = "Prompt Digest";
pub const TRANSCRIPT_FIELD: &str = "Transcript";
pub const TRANSCRIPT_LINE_FIELD: &str = "Transcript Line";
pub const RECEIPT_FIELD: &str = "Receipt";
/// Present, as `AskUserQuestion`, when the turn is the person's picks in Claude Code's question
/// widget rather than a typed prompt.
pub const PROMPT_SOURCE_FIELD: &str = "Prompt Source";
/// The field of a `QUESTION_ANSWERED` row naming the receipt of the turn it answers.
pub const HUMAN_TURN_RECEIPT_FIELD: &str = "Human Turn Receipt";
/// How many of a transcript's last lines may already hold the prompt when the hook runs.
pub const PROMPT_ALREADY_WRITTEN_WINDOW: usize = 5;

/// Where the engine keeps a prompt whose harness names no transcript.
pub fn prompt_copy_path(record: &Utf8Path, digest: &str) -> camino::Utf8PathBuf {
    record
        .join(".aidlc-engine/prompts")
        .join(format!("{digest}.txt"))
}

/// The receipt digest over a human turn's fields, in order (keys and values, NUL-separated).
pub fn receipt_digest<K: AsRef<str>, V: AsRef<str>>(fields: &[(K, V)]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"aidlc human-turn receipt v1");
    for (key, value) in fields {
        hasher.update(b"\0");
        hasher.update(key.as_ref().as_bytes());
        hasher.update(b"\0");
        hasher.update(value.as_ref().as_bytes());
    }
    hasher.finalize().to_hex().to_string()
}

/// A verified human turn: its receipt and the prompt the human typed (or the answers they
/// picked, one per line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedTurn {
    pub receipt: String,
    pub prompt: String,
    pub picked: bool,
}

impl VerifiedTurn {
    /// Whether the person chose `option` in this turn: the typed prompt *is* the option, or one
    /// of the picked answers is ([`is_exactly_the_choice`]).
    pub fn chose(&self, option: &str) -> bool {
        if self.picked {
            self.prompt
                .lines()
                .any(|answer| is_exactly_the_choice(answer, option))
        } else {
            is_exactly_the_choice(&self.prompt, option)
        }
    }
}

/// Whether `said` is `option` itself: compared after trimming whitespace, the quotes around it
/// and one final full stop, without case. A longer sentence, a negation or a quote of the option
/// inside other text is not the option.
pub fn is_exactly_the_choice(said: &str, option: &str) -> bool {
    let option = bare_choice(option);
    !option.is_empty() && bare_choice(said) == option
}

fn bare_choice(text: &str) -> String {
    const QUOTES: [(char, char); 5] = [
        ('"', '"'),
        ('\'', '\''),
        ('`', '`'),
        ('\u{201c}', '\u{201d}'),
        ('\u{2018}', '\u{2019}'),
    ];
    let mut text = text.trim();
    loop {
        let before = text;
        text = text.strip_suffix('.').unwrap_or(text).trim();
        for (open, close) in QUOTES {
            if let Some(inner) = text
                .strip_prefix(open)
                .and_then(|rest| rest.strip_suffix(close))
            {
                text = inner.trim();
            }
        }
        if text == before {
            break;
        }
    }
    folded_lowercase(text)
}

/// `text` in lower case with its whitespace runs folded to one space and trimmed.
fn folded_lowercase(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The install a human turn must have come from: its project (whose transcript a Claude Code or
/// Codex turn names) and its harness (the only one whose hook makes its receipts).
#[derive(Debug, Clone, Copy)]
pub struct ReceiptInstall<'p> {
    pub project_dir: &'p Utf8Path,
    pub harness: Harness,
}

impl ReceiptInstall<'_> {
    /// Whether a row naming `harness_name` came from this install's harness, or one sharing its
    /// folder (a `.kiro` install runs Kiro CLI, Kiro CLI 3 or Kiro IDE; an `.aidlc` one opencode
    /// or Copilot).
    fn made_by_its_harness(&self, harness_name: &str) -> bool {
        Harness::named(harness_name)
            .is_some_and(|named| named.dir_name() == self.harness.dir_name())
    }
}

/// Why a `HUMAN_TURN` row is not a receipt the engine can verify for `install`.
pub fn verify_human_turn(
    install: ReceiptInstall<'_>,
    record: &Utf8Path,
    block: &AuditBlock,
) -> Result<VerifiedTurn, String> {
    let project_dir = install.project_dir;
    let receipt = block
        .field(RECEIPT_FIELD)
        .ok_or("the HUMAN_TURN row has no Receipt (the engine's hook did not write it)")?;
    let signed: Vec<(&str, &str)> = block
        .fields
        .iter()
        .filter(|(key, _)| key != RECEIPT_FIELD)
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect();
    if receipt_digest(&signed) != receipt {
        return Err("the HUMAN_TURN row's Receipt does not match its fields".to_owned());
    }
    let harness_name = block.field(HARNESS_FIELD).unwrap_or_default();
    if !install.made_by_its_harness(harness_name) {
        return Err(format!(
            "the HUMAN_TURN row was made from a {harness_name:?} payload, and this install's harness is {}",
            install.harness.product_name()
        ));
    }
    let digest = block
        .field(PROMPT_DIGEST_FIELD)
        .ok_or("the HUMAN_TURN row has no Prompt Digest")?;
    if digest.len() != 64 || !digest.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err("the HUMAN_TURN row's Prompt Digest is not a BLAKE3 digest".to_owned());
    }
    let prompt = if let Some(path) = block.field(TRANSCRIPT_FIELD) {
        prompt_in_transcript(project_dir, block, Utf8Path::new(path), digest)?
    } else if matches!(block.field(HARNESS_FIELD), Some("claude" | "codex")) {
        return Err("the HUMAN_TURN row names no transcript, and its harness keeps one".to_owned());
    } else {
        kept_prompt(record, digest)?
    };
    let picked = match block.field(PROMPT_SOURCE_FIELD) {
        None => false,
        Some(ASK_USER_QUESTION_TOOL) => true,
        Some(other) => {
            return Err(format!(
                "the HUMAN_TURN row's Prompt Source {other:?} is not one the engine writes"
            ));
        }
    };
    Ok(VerifiedTurn {
        receipt: receipt.to_owned(),
        prompt,
        picked,
    })
}

/// The prompt of a turn whose harness names a transcript: re-read there, from the harness's own
/// transcript of this project and session.
fn prompt_in_transcript(
    project_dir: &Utf8Path,
    block: &AuditBlock,
    path: &Utf8Path,
    digest: &str,
) -> Result<String, String> {
    let format = match block.field(HARNESS_FIELD) {
        Some("claude") => TranscriptFormat::ClaudeJsonLines,
        Some("codex") => TranscriptFormat::CodexRollout,
        other => {
            return Err(format!(
                "the HUMAN_TURN row names a transcript for harness {other:?}, which has none"
            ));
        }
    };
    let session = block
        .field(SESSION_FIELD)
        .ok_or("the HUMAN_TURN row names no Session")?;
    transcript::check_transcript_place(format, path, project_dir, session, None)?;
    let line = block
        .field(TRANSCRIPT_LINE_FIELD)
        .and_then(|line| line.parse::<usize>().ok())
        .ok_or("the HUMAN_TURN row has no Transcript Line")?;
    transcript::find_user_prompt(path, format, line, digest)
        .map(|(_, prompt)| prompt)
        .map_err(|error| error.to_string())
}

/// The prompt of a turn whose harness names no transcript: the engine's copy, unchanged.
fn kept_prompt(record: &Utf8Path, digest: &str) -> Result<String, String> {
    let copy = prompt_copy_path(record, digest);
    let prompt = crate::leaves::fs_util::read_input_text(&copy)
        .map_err(|error| format!("the prompt kept at {copy} cannot be read: {error}"))?;
    if transcript::prompt_digest(&prompt) == digest {
        Ok(prompt)
    } else {
        Err(format!(
            "the prompt kept at {copy} was changed after the turn"
        ))
    }
}

/// Whether `prompt` contains `answer`: compared without case, with whitespace runs folded. An
/// answer to an ordinary question may be part of what the person typed; a receipt for an
/// option needs [`VerifiedTurn::chose`].
pub fn prompt_contains_answer(prompt: &str, answer: &str) -> bool {
    let answer = folded_lowercase(answer);
    !answer.is_empty() && folded_lowercase(prompt).contains(&answer)
}

/// Every shard of the record read once: its entries (as `read_record_ledger` gives them) and the
/// blocks of each shard, so a receipt's fields are read from the same bytes as its position.
pub fn read_ledger_with_blocks(record: &Utf8Path) -> (Vec<LedgerEntry>, Vec<Vec<AuditBlock>>) {
    let mut entries = Vec::new();
    let mut blocks = Vec::new();
    for (shard, path) in ledger::record_shards(record).iter().enumerate() {
        let parsed = ledger::read_shard(path)
            .map(|shard| shard.blocks)
            .unwrap_or_default();
        entries.extend(shard_entries(shard, parsed.clone()));
        blocks.push(parsed);
    }
    (entries, blocks)
}

pub fn block_of<'b>(blocks: &'b [Vec<AuditBlock>], entry: &LedgerEntry) -> Option<&'b AuditBlock> {
    blocks.get(entry.shard)?.get(entry.position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_option_itself_is_the_choice() {
        let option = "Override blocking sensors";
        for said in [
            "Override blocking sensors",
            "  override BLOCKING sensors.  ",
            "\"Override blocking sensors\"",
            "'Override blocking sensors.'",
            "\u{201c}Override blocking sensors\u{201d}",
            "Override\n blocking   sensors",
        ] {
            assert!(is_exactly_the_choice(said, option), "{said:?}");
        }
        for said in [
            "No. Do NOT override blocking sensors; fix the findings.",
            "Do not override blocking sensors",
            "I said \"Override blocking sensors\" earlier, but fix them",
            "Override blocking sensors please",
            "Override blocking sensors!",
            "",
            "Fix findings",
        ] {
            assert!(!is_exactly_the_choice(said, option), "{said:?}");
        }
        assert!(!is_exactly_the_choice("", ""));
    }

    #[test]
    fn a_picked_turn_chose_each_of_its_answers_and_a_typed_one_its_whole_prompt() {
        let picked = VerifiedTurn {
            receipt: String::new(),
            prompt: "Postgres\nOverride blocking sensors".to_owned(),
            picked: true,
        };
        assert!(picked.chose("Override blocking sensors"));
        assert!(!picked.chose("Fix findings"));
        let typed = VerifiedTurn {
            picked: false,
            ..picked
        };
        assert!(!typed.chose("Override blocking sensors"));
    }
}
