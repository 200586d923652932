//! The language server's stdio transport: `Content-Length` frames on stdin and stdout, turned
//! into `lsp_server::Message`s on a pair of channels.
//!
//! This is the one exception to "only the printer writes to the terminal" (ARCHITECTURE.md):
//! under `aidlc lsp`, stdout is the protocol channel, and the writer thread here owns it for the
//! whole session; nothing else of the process writes to stdout while it runs (the printer only
//! writes a final `error:` line to stderr after the session has ended).
//!
//! Why not `lsp_server::Connection::stdio`: its reader thread ends the session on the first
//! message that is not valid JSON-RPC, and it hands messages over through a rendezvous channel,
//! so the main loop could never see that a request was already cancelled or outdated by the
//! messages queued behind it. Here a body that does not parse gets a JSON-RPC error response
//! (`-32700` parse error, or `-32600` invalid request when it has an id) and the session goes
//! on, and the channel to the main loop is unbounded. Only a broken frame header (no
//! `Content-Length`, or an absurd one) ends the session, because no later frame can be found.
#![expect(
    clippy::disallowed_methods,
    reason = "under `aidlc lsp`, stdout is the protocol channel and this transport owns it (see the module doc)"
)]

use std::io::{self, BufRead, Read, Write};
use std::thread;

use crossbeam_channel::{Receiver, Sender, select, unbounded};
use lsp_server::{Connection, ErrorCode, Message, RequestId};

/// The largest message body accepted. A `Content-Length` beyond it is a broken frame, not a
/// request to allocate gigabytes.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// The longest frame header line accepted, its line ending included. A header is
/// `Content-Length: <digits>` or `Content-Type: <media type>`; a line past this bound is a
/// broken stream, refused before more of it is buffered.
const MAX_HEADER_LINE_BYTES: usize = 4096;

/// The threads that own stdin and stdout.
pub struct IoThreads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Wait for the writer to flush every message (call after dropping the connection), and
    /// report why reading stopped if the reader has stopped. A reader still blocked on stdin
    /// (a client that keeps the pipe open after `exit`) is not waited for: the process ends.
    ///
    /// `reader_stopped` is whether the server found the reader's channel disconnected: the
    /// reader drops its sender as it returns, a moment before its thread counts as finished,
    /// so in that case it is joined (it reads no more), and the broken frame that stopped it is
    /// reported instead of a bare "disconnected".
    pub fn finish(self, reader_stopped: bool) -> io::Result<()> {
        let written = self
            .writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the stdout writer panicked")));
        if reader_stopped || self.reader.is_finished() {
            self.reader
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the stdin reader panicked")))?;
        }
        written
    }
}

/// A connection over this process's stdin and stdout.
pub fn stdio() -> (Connection, IoThreads) {
    let (to_writer, writer_messages) = unbounded::<Message>();
    let (raw_to_writer, writer_raw) = unbounded::<String>();
    let (to_server, from_client) = unbounded::<Message>();
    let writer = thread::Builder::new()
        .name("aidlc-lsp-writer".to_owned())
        .spawn(move || {
            let stdout = io::stdout();
            write_frames(&mut stdout.lock(), &writer_messages, &writer_raw)
        })
        .unwrap_or_else(|error| panic!("cannot start the stdout writer thread: {error}"));
    let reader = thread::Builder::new()
        .name("aidlc-lsp-reader".to_owned())
        .spawn(move || {
            let stdin = io::stdin();
            read_frames(&mut stdin.lock(), &to_server, &raw_to_writer)
        })
        .unwrap_or_else(|error| panic!("cannot start the stdin reader thread: {error}"));
    let connection = Connection {
        sender: to_writer,
        receiver: from_client,
    };
    (connection, IoThreads { reader, writer })
}

/// Write every message until the server drops its sender; error responses the reader made
/// for unparsable bodies are interleaved whole.
fn write_frames(
    out: &mut impl Write,
    messages: &Receiver<Message>,
    raw: &Receiver<String>,
) -> io::Result<()> {
    loop {
        select! {
            recv(messages) -> message => match message {
                Ok(message) => message.write(out)?,
                Err(_) => return Ok(()),
            },
            recv(raw) -> body => {
                if let Ok(body) = body {
                    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
                    out.flush()?;
                }
            },
        }
    }
}

/// Read frames until end of input, the `exit` notification, or a header no frame can follow.
pub fn read_frames(
    input: &mut impl BufRead,
    to_server: &Sender<Message>,
    raw_to_writer: &Sender<String>,
) -> io::Result<()> {
    while let Some(body) = read_body(input)? {
        match serde_json::from_slice::<Message>(&body) {
            Ok(message) => {
                let is_exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                if to_server.send(message).is_err() || is_exit {
                    return Ok(());
                }
            }
            Err(error) => {
                // The client is told, and the session goes on with the next frame.
                let _ = raw_to_writer.send(unparsable_body_response(&body, &error));
            }
        }
    }
    Ok(())
}

/// The error response to a body that is not a JSON-RPC message: with its id when the body is
/// JSON with a usable `id` (invalid request), else with a null id (parse error).
fn unparsable_body_response(body: &[u8], error: &serde_json::Error) -> String {
    let id = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|value| value.get("id").cloned())
        .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
    let (id, code, message) = match id {
        Some(id) => (
            serde_json::json!(id),
            ErrorCode::InvalidRequest,
            format!("not a valid JSON-RPC request: {error}"),
        ),
        None => (
            serde_json::Value::Null,
            ErrorCode::ParseError,
            format!("the message is not JSON-RPC: {error}"),
        ),
    };
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code as i32, "message": message },
    })
    .to_string()
}

/// One frame's body, `None` at a clean end of input.
fn read_body(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    let mut saw_header = false;
    loop {
        line.clear();
        if read_header_line(input, &mut line)? == 0 {
            return if saw_header {
                Err(broken_frame("the input ended inside a frame header"))
            } else {
                Ok(None)
            };
        }
        let text = String::from_utf8_lossy(&line);
        let header = text.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        let Some((name, value)) = header.split_once(':') else {
            return Err(broken_frame(&format!("malformed frame header {header:?}")));
        };
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            let parsed = value.trim().parse::<usize>().ok();
            length = Some(parsed.filter(|&n| n <= MAX_BODY_BYTES).ok_or_else(|| {
                broken_frame(&format!("unusable Content-Length {:?}", value.trim()))
            })?);
        }
    }
    let length = length.ok_or_else(|| broken_frame("a frame without Content-Length"))?;
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

/// One header line into `line` (its `\n` included), read through a `take` of
/// [`MAX_HEADER_LINE_BYTES`] so an endless line costs a bounded buffer: a line that fills it
/// without its line ending is refused. Returns the bytes read, 0 at the end of input.
fn read_header_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<usize> {
    let limit = MAX_HEADER_LINE_BYTES as u64;
    let read = input.take(limit).read_until(b'\n', line)?;
    if read == MAX_HEADER_LINE_BYTES && line.last() != Some(&b'\n') {
        return Err(broken_frame(&format!(
            "a frame header line longer than {MAX_HEADER_LINE_BYTES} bytes"
        )));
    }
    Ok(read)
}

fn broken_frame(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the editor's LSP stream is broken: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn read_all(input: &str) -> (Vec<Message>, Vec<String>, io::Result<()>) {
        let (to_server, from_client) = unbounded();
        let (raw_sender, raw) = unbounded();
        let result = read_frames(&mut input.as_bytes(), &to_server, &raw_sender);
        drop((to_server, raw_sender));
        (from_client.iter().collect(), raw.iter().collect(), result)
    }

    #[test]
    fn a_body_that_is_not_json_rpc_gets_an_error_and_the_session_goes_on() {
        let input = [
            frame("{not json"),
            frame(r#"{"jsonrpc":"2.0","id":7,"params":{}}"#),
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#),
        ]
        .concat();
        let (messages, raw, result) = read_all(&input);
        result.unwrap();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(matches!(&messages[0], Message::Request(r) if r.method == "shutdown"));
        assert_eq!(raw.len(), 2);
        assert!(
            raw[0].contains(r#""id":null"#) && raw[0].contains("-32700"),
            "{}",
            raw[0]
        );
        assert!(
            raw[1].contains(r#""id":7"#) && raw[1].contains("-32600"),
            "{}",
            raw[1]
        );
    }

    #[test]
    fn reading_stops_at_exit_and_at_a_broken_header() {
        let input = [
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
            frame(r#"{"jsonrpc":"2.0","method":"never-read"}"#),
        ]
        .concat();
        let (messages, _, result) = read_all(&input);
        result.unwrap();
        assert_eq!(messages.len(), 1);
        let (_, _, result) = read_all("Content-Length: lots\r\n\r\n{}");
        assert!(result.is_err());
        let (_, _, result) = read_all("X-Other: 1\r\n\r\n{}");
        assert!(result.is_err());
        let (messages, _, result) = read_all("");
        assert!(result.is_ok() && messages.is_empty());
    }

    #[test]
    fn a_header_line_is_read_up_to_its_bound_and_no_further() {
        let longest = format!(
            "X-Padding: {}\r\n",
            "p".repeat(MAX_HEADER_LINE_BYTES - "X-Padding: \r\n".len())
        );
        assert_eq!(longest.len(), MAX_HEADER_LINE_BYTES);
        let body = r#"{"jsonrpc":"2.0","method":"exit"}"#;
        let input = format!("{longest}Content-Length: {}\r\n\r\n{body}", body.len());
        let (messages, _, result) = read_all(&input);
        result.unwrap();
        assert_eq!(
            messages.len(),
            1,
            "a header line of exactly the bound is read"
        );
        let too_long = format!(
            "X-Padding: {}p\r\n\r\n{body}",
            &longest[11..longest.len() - 2]
        );
        let mut reader = io::BufReader::with_capacity(64, too_long.as_bytes());
        let mut line = Vec::new();
        let error = read_header_line(&mut reader, &mut line).unwrap_err();
        assert!(
            error.to_string().contains("longer than 4096 bytes"),
            "{error}"
        );
        assert_eq!(
            line.len(),
            MAX_HEADER_LINE_BYTES,
            "nothing past the bound is buffered"
        );
        let (messages, _, result) = read_all(&"x".repeat(3 * MAX_HEADER_LINE_BYTES));
        assert!(result.is_err() && messages.is_empty());
    }
}
