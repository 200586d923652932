//! The human turn's receipt (docs/decisions.md D34): the fields `aidlc engine hook
//! record-human-turn` adds to a `HUMAN_TURN` row, their digest, and the check that re-reads the
//! prompt (in the harness's transcript, or the engine's kept copy) and compares. Both the
//! receipts' writer (`engine log answer`, `record-human-turn`) and the gate (`gate::step::receipt`) ask this module, so
//! neither imports the other for it.
//!
//! Must not: write, or decide the gate.

use camino::Utf8Path;

use crate::audit::ledger::{self, AuditBlock, LedgerEntry, parse_ledger, shard_entries};
use crate::harness::transcript::{self, TranscriptFormat};

/// The fields of a `HUMAN_TURN` receipt (after the reference's, which has none; its readers
/// ignore them, D2).
pub const HARNESS_FIELD: &str = "Harness";
pub const SESSION_FIELD: &str = "Session";
pub const PROMPT_DIGEST_FIELD: &str = "Prompt Digest";
pub const TRANSCRIPT_FIELD: &str = "Transcript";
pub const TRANSCRIPT_LINE_FIELD: &str = "Transcript Line";
pub const RECEIPT_FIELD: &str = "Receipt";
/// The field of a `QUESTION_ANSWERED` row naming the receipt of the turn it answers.
pub const HUMAN_TURN_RECEIPT_FIELD: &str = "Human Turn Receipt";
/// How many of a transcript's last lines may already hold the prompt when the hook runs.
pub const PROMPT_ALREADY_WRITTEN_WINDOW: usize = 5;

/// The line from which the prompt is in the transcript: its line when the harness already wrote
/// it (one of the last few lines), else the line after the last one.
pub fn prompt_line_now(path: &Utf8Path, format: TranscriptFormat, digest: &str) -> usize {
    transcript::prompt_line_now(path, format, digest, PROMPT_ALREADY_WRITTEN_WINDOW)
}

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

/// A verified human turn: its receipt and the prompt the human typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedTurn {
    pub receipt: String,
    pub prompt: String,
}

/// Why a `HUMAN_TURN` row is not a receipt the engine can verify.
pub fn verify_human_turn(record: &Utf8Path, block: &AuditBlock) -> Result<VerifiedTurn, String> {
    let receipt = block
        .field(RECEIPT_FIELD)
        .ok_or("the HUMAN_TURN row has no Receipt (the engine's hook did not write it)")?;
    let signed: Vec<&(String, String)> = block
        .fields
        .iter()
        .filter(|(key, _)| key != RECEIPT_FIELD)
        .collect();
    let signed: Vec<(&str, &str)> = signed
        .iter()
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect();
    if receipt_digest(&signed) != receipt {
        return Err("the HUMAN_TURN row's Receipt does not match its fields".to_owned());
    }
    let digest = block
        .field(PROMPT_DIGEST_FIELD)
        .ok_or("the HUMAN_TURN row has no Prompt Digest")?;
    if digest.len() != 64 || !digest.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err("the HUMAN_TURN row's Prompt Digest is not a BLAKE3 digest".to_owned());
    }
    let prompt = if let Some(path) = block.field(TRANSCRIPT_FIELD) {
        prompt_in_transcript(block, Utf8Path::new(path), digest)?
    } else {
        kept_prompt(record, digest)?
    };
    Ok(VerifiedTurn {
        receipt: receipt.to_owned(),
        prompt,
    })
}

/// The prompt of a turn whose harness names a transcript: re-read there.
fn prompt_in_transcript(
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
    let prompt = std::fs::read_to_string(&copy)
        .map_err(|error| format!("the prompt kept at {copy} cannot be read: {error}"))?;
    if transcript::prompt_digest(&prompt) == digest {
        Ok(prompt)
    } else {
        Err(format!(
            "the prompt kept at {copy} was changed after the turn"
        ))
    }
}

/// Whether `prompt` contains `answer`: compared without case, with whitespace runs folded.
pub fn prompt_contains_answer(prompt: &str, answer: &str) -> bool {
    let fold = |text: &str| {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let answer = fold(answer);
    !answer.is_empty() && fold(prompt).contains(&answer)
}

/// Every shard of the record read once: its entries (as `read_record_ledger` gives them) and the
/// blocks of each shard, so a receipt's fields are read from the same bytes as its position.
pub fn read_ledger_with_blocks(record: &Utf8Path) -> (Vec<LedgerEntry>, Vec<Vec<AuditBlock>>) {
    let mut entries = Vec::new();
    let mut blocks = Vec::new();
    for (shard, path) in ledger::record_shards(record).iter().enumerate() {
        let parsed = std::fs::read(path)
            .map(|bytes| parse_ledger(&String::from_utf8_lossy(&bytes)).blocks)
            .unwrap_or_default();
        entries.extend(shard_entries(shard, parsed.clone()));
        blocks.push(parsed);
    }
    (entries, blocks)
}

/// The block of `entry`.
pub fn block_of<'b>(blocks: &'b [Vec<AuditBlock>], entry: &LedgerEntry) -> Option<&'b AuditBlock> {
    blocks.get(entry.shard)?.get(entry.position)
}
