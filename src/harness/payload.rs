//! A hook's payload: read from stdin within a bound, and what it says (the written file, the
//! folder the harness ran the hook in).
//!
//! Claude Code's payload is one JSON object: `{session_id, transcript_path, cwd,
//! hook_event_name, tool_name, tool_input: {file_path, …}, tool_response}` for a write, and the
//! same head with `prompt` for a prompt.
//!
//! Invariants:
//! - the read never waits longer than [`PAYLOAD_WAIT`] nor keeps more than
//!   [`PAYLOAD_LIMIT_BYTES`]: an agent that never closes stdin must not hang the hook;
//! - a payload that is not JSON, or lacks a field, says nothing (`None`), never a default.

use std::io::Read;
use std::time::Duration;

use camino::Utf8PathBuf;

/// The most the hook waits for its payload.
pub const PAYLOAD_WAIT: Duration = Duration::from_secs(5);
/// The largest payload read; a hook payload is a few KiB.
pub const PAYLOAD_LIMIT_BYTES: u64 = 4 * 1024 * 1024;

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

/// The written file's path from a hook payload: `tool_input.file_path`, non-empty.
pub fn written_file_path(payload: &[u8]) -> Option<Utf8PathBuf> {
    let value: serde_json::Value = serde_json::from_slice(payload).ok()?;
    let path = value.get("tool_input")?.get("file_path")?.as_str()?;
    (!path.is_empty()).then(|| Utf8PathBuf::from(path))
}

/// The folder the harness ran the hook in, from the payload's `cwd`.
pub fn payload_cwd(payload: &[u8]) -> Option<Utf8PathBuf> {
    serde_json::from_slice::<serde_json::Value>(payload)
        .ok()
        .and_then(|value| value.get("cwd")?.as_str().map(Utf8PathBuf::from))
}
