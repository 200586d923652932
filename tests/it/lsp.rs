//! `aidlc lsp` driven by a JSON-RPC client over the binary's stdio (and once in process, for
//! cancellation, and once by a real editor: headless Neovim).
//!
//! Every wait is for a message the step must cause, up to [`PATIENCE`]; nothing asserts a
//! duration.
#![expect(
    clippy::needless_pass_by_value,
    reason = "the client's methods take the `json!` values built at each call site"
)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use camino::Utf8Path;
use serde_json::{Value, json};

use crate::support::{GRAPH, GRID, TestProject, stage};

const PATIENCE: Duration = Duration::from_secs(60);
const MANIFEST: &str = ".claude/sensors/aidlc-demo-check.md";
const FIRST_STAGE: &str = ".claude/aidlc-common/stages/inception/first-stage.md";
const THIRD_STAGE: &str = ".claude/aidlc-common/stages/inception/third-stage.md";

/// A JSON-RPC client speaking to `aidlc lsp` over its stdin and stdout.
struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Notifications (and requests from the server) seen while waiting for something else.
    seen: Vec<Value>,
    next_id: i64,
    initialize_result: Value,
}

fn uri(project: &TestProject, relative: &str) -> String {
    format!("file://{}", project.path(relative))
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// One frame's body from the server's stdout; `None` at its end.
fn read_frame(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("the server writes JSON bodies"))
}

impl LspClient {
    /// Start `aidlc lsp` in the project folder and complete the handshake, offering
    /// `encodings` as the position encodings.
    fn start(project: &TestProject, encodings: &[&str]) -> Self {
        Self::start_in(project, &project.root, encodings)
    }

    /// [`LspClient::start`] with `folder` as the working and the workspace folder.
    fn start_in(project: &TestProject, folder: &Utf8Path, encodings: &[&str]) -> Self {
        let mut child = project
            .command(folder, &["lsp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start aidlc lsp");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_frame(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut client = Self {
            child,
            stdin,
            incoming,
            seen: Vec::new(),
            next_id: 0,
            initialize_result: Value::Null,
        };
        let response = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": format!("file://{folder}"),
                "capabilities": {
                    "general": { "positionEncodings": encodings },
                    "textDocument": { "publishDiagnostics": { "relatedInformation": true } },
                },
            }),
        );
        client.initialize_result = response["result"].clone();
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&frame(&message.to_string()));
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).expect("write to aidlc lsp");
        stdin.flush().expect("flush to aidlc lsp");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next_request_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Send a request and wait for its response (the whole response object).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_request_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response_to(&json!(id))
    }

    fn response_to(&mut self, id: &Value) -> Value {
        self.wait_for(&format!("the response to request {id}"), |message| {
            message.get("method").is_none() && message.get("id") == Some(id)
        })
    }

    /// The result of a request that must succeed.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(message) => self.seen.push(message),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no {what} within {PATIENCE:?}; seen: {:#?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("aidlc lsp ended before {what}; seen: {:#?}", self.seen)
                }
            }
        }
    }

    /// The diagnostics of a file in the first publication, from now on or already seen, that
    /// `wanted` accepts (earlier publications for the file are skipped).
    fn diagnostics(&mut self, uri: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let matches = |message: &Value| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && wanted(message["params"]["diagnostics"].as_array().unwrap())
        };
        let for_this_file = |message: &Value| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
        };
        // Publications seen before the one returned are older: drop them, so a later call
        // cannot mistake a stale one for the state it waits for.
        if let Some(index) = self.seen.iter().position(matches) {
            let message = self.seen.remove(index);
            let mut position = 0;
            self.seen.retain(|older| {
                position += 1;
                position > index || !for_this_file(older)
            });
            return message["params"]["diagnostics"].as_array().unwrap().clone();
        }
        self.seen.retain(|older| !for_this_file(older));
        let message = self.wait_for(&format!("diagnostics for {uri}"), matches);
        message["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
        );
    }

    fn change(&mut self, uri: &str, version: i64, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
    }

    fn at(uri: &str, position: Value) -> Value {
        json!({"textDocument": {"uri": uri}, "position": position})
    }

    /// `shutdown`, then `exit`; the exit status.
    fn shut_down(mut self) -> i32 {
        let response = self.request("shutdown", Value::Null);
        assert_eq!(response["result"], Value::Null, "{response}");
        let after = self.request("textDocument/hover", json!({}));
        assert_eq!(
            after["error"]["code"], -32600,
            "requests after shutdown are refused"
        );
        self.notify("exit", Value::Null);
        self.wait_for_exit()
    }

    fn wait_for_exit(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for aidlc lsp") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "aidlc lsp did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The protocol position of a byte offset, the column counted in UTF-16 code units (or bytes).
fn position_of(text: &str, offset: usize, utf16: bool) -> Value {
    let line_start = text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
    let line = text[..line_start].matches('\n').count();
    let before = &text[line_start..offset];
    let column = if utf16 {
        before.encode_utf16().count()
    } else {
        before.len()
    };
    json!({"line": line, "character": column})
}

/// The protocol range of the `nth` occurrence of `needle`.
fn range_of(text: &str, needle: &str, nth: usize, utf16: bool) -> Value {
    let start = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not in {text:?}"))
        .0;
    json!({"start": position_of(text, start, utf16), "end": position_of(text, start + needle.len(), utf16)})
}

/// Every file under the project with its bytes, to prove the server wrote nothing.
fn project_snapshot(root: &Utf8Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in folder.read_dir_utf8().expect("list the project") {
            let path = entry.expect("entry").path().to_owned();
            if path.is_dir() {
                folders.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read a project file");
                files.push((path.to_string(), bytes));
            }
        }
    }
    files.sort();
    files
}

fn labels(completion: &Value) -> BTreeSet<String> {
    completion["items"]
        .as_array()
        .expect("a completion list")
        .iter()
        .map(|item| item["label"].as_str().unwrap().to_owned())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

#[test]
fn a_session_from_initialize_to_shutdown_uses_the_compiles_diagnostics_and_writes_nothing() {
    let project = TestProject::minimal();
    let third = stage(
        "third-stage",
        "inception",
        "[first-stage]",
        "[demo-chek]",
        "",
    );
    project.write(THIRD_STAGE, &third);
    let before = project_snapshot(&project.root);
    let mut client = LspClient::start(&project, &["utf-16"]);
    let capabilities = &client.initialize_result["capabilities"];
    assert_eq!(capabilities["positionEncoding"], "utf-16");
    for provider in [
        "definitionProvider",
        "referencesProvider",
        "hoverProvider",
        "completionProvider",
        "codeActionProvider",
    ] {
        assert!(
            !capabilities[provider].is_null(),
            "{provider}: {capabilities}"
        );
    }
    assert_eq!(
        capabilities["textDocumentSync"]["change"], 2,
        "incremental sync"
    );

    // didOpen a stage with a typo'd sensor id: the diagnostic sits on the id, with the hint.
    let third_uri = uri(&project, THIRD_STAGE);
    client.open(&third_uri, &third);
    let diagnostics = client.diagnostics(&third_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let typo = &diagnostics[0];
    assert_eq!(typo["code"], "unknown-sensor-import");
    assert_eq!(typo["severity"], 1);
    assert_eq!(typo["source"], "aidlc");
    assert_eq!(typo["range"], range_of(&third, "demo-chek", 0, true));
    let message = typo["message"].as_str().unwrap();
    assert!(
        message.contains("imports unknown sensor id \"demo-chek\"")
            && message.contains("help: did you mean `demo-check`?"),
        "{message}"
    );

    // The quick fix replaces the id.
    let actions = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": third_uri}, "range": typo["range"], "context": {"diagnostics": [typo]}}),
    );
    let fix = &actions.as_array().unwrap()[0];
    assert_eq!(fix["title"], "Replace `demo-chek` with `demo-check`");
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(
        fix["edit"]["changes"][&third_uri],
        json!([{"range": typo["range"], "newText": "demo-check"}])
    );

    // didChange applying it (incremental): the diagnostics are cleared.
    client.change(
        &third_uri,
        2,
        json!([{"range": typo["range"], "text": "demo-check"}]),
    );
    assert_eq!(
        client.diagnostics(&third_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    let third = third.replace("demo-chek", "demo-check");

    // Definition: from the stage's import to the manifest's id.
    let manifest_uri = uri(&project, MANIFEST);
    let manifest_text = project.read(MANIFEST);
    let import_at = position_of(&third, third.find("[demo-check]").unwrap() + 3, true);
    let definition = client.result(
        "textDocument/definition",
        LspClient::at(&third_uri, import_at.clone()),
    );
    assert_eq!(
        definition,
        json!([{"uri": manifest_uri, "range": range_of(&manifest_text, "demo-check", 0, true)}])
    );
    // Definition of a `requires_stage` slug: the stage file that declares it.
    let requires_at = position_of(&third, third.find("[first-stage]").unwrap() + 2, true);
    let first_text = project.read(FIRST_STAGE);
    let definition = client.result(
        "textDocument/definition",
        LspClient::at(&third_uri, requires_at.clone()),
    );
    assert_eq!(
        definition,
        json!([{"uri": uri(&project, FIRST_STAGE), "range": range_of(&first_text, "first-stage", 0, true)}])
    );
    // Definition of the lead agent: its agent file.
    let agent_at = position_of(&third, third.find("aidlc-demo-agent").unwrap() + 1, true);
    let definition = client.result(
        "textDocument/definition",
        LspClient::at(&third_uri, agent_at),
    );
    assert_eq!(
        definition[0]["uri"],
        uri(&project, ".claude/agents/aidlc-demo-agent.md")
    );

    // References: from the manifest's id to both importing stages (the open one with its
    // unsaved text).
    let id_at = position_of(
        &manifest_text,
        manifest_text.find("demo-check").unwrap() + 1,
        true,
    );
    let mut context = LspClient::at(&manifest_uri, id_at);
    context["context"] = json!({"includeDeclaration": false});
    let references = client.result("textDocument/references", context);
    let referring: BTreeSet<String> = references
        .as_array()
        .unwrap()
        .iter()
        .map(|location| location["uri"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(referring, set(&[&uri(&project, FIRST_STAGE), &third_uri]));

    // Hover on the sensor id: the manifest's fields and its importers.
    let hover = client.result("textDocument/hover", LspClient::at(&third_uri, import_at));
    let shown = hover["contents"]["value"].as_str().unwrap();
    for expected in [
        "**sensor `demo-check`**",
        "Checks a demo property",
        "- kind: `deterministic`",
        "- default_severity: `advisory`",
        "- fire_on: `write`",
        "- matches: `**/*.md`",
        "- timeout_seconds: not set",
        "Imported by 2 stages: `first-stage`, `third-stage`.",
    ] {
        assert!(shown.contains(expected), "{expected:?} not in {shown}");
    }
    // Hover on a stage slug: phase, number, produces. The number is the one the compile gives.
    let hover = client.result(
        "textDocument/hover",
        LspClient::at(&third_uri, requires_at.clone()),
    );
    let shown = hover["contents"]["value"].as_str().unwrap().to_owned();
    assert!(shown.contains("- phase: `inception`"), "{shown}");
    assert!(shown.contains("- produces: `first-stage-doc`"), "{shown}");

    // Completion: sensor ids in `sensors:`, slugs in `requires_stage`, enum values.
    let typing = third.replace("sensors: [demo-check]", "sensors:\n  - demo-check\n  - de");
    client.change(&third_uri, 3, json!([{"text": typing}]));
    let end_of_de = typing.find("  - de\n").unwrap() + "  - de".len();
    let completion = client.result(
        "textDocument/completion",
        LspClient::at(&third_uri, position_of(&typing, end_of_de, true)),
    );
    assert_eq!(labels(&completion), set(&["demo-check"]));
    let item = &completion["items"][0];
    assert_eq!(item["textEdit"]["newText"], "demo-check");
    assert_eq!(
        item["textEdit"]["range"],
        json!({"start": position_of(&typing, end_of_de - 2, true), "end": position_of(&typing, end_of_de, true)})
    );
    let completion = client.result(
        "textDocument/completion",
        LspClient::at(
            &third_uri,
            position_of(&typing, typing.find("[first-stage]").unwrap() + 1, true),
        ),
    );
    assert_eq!(
        labels(&completion),
        set(&["first-stage", "second-stage"]),
        "not its own slug"
    );
    let completion = client.result(
        "textDocument/completion",
        LspClient::at(
            &third_uri,
            position_of(&typing, typing.find("mode: ").unwrap() + 6, true),
        ),
    );
    assert_eq!(
        labels(&completion),
        set(&["inline", "subagent", "pipeline", "mob", "agent-team"])
    );
    let completion = client.result(
        "textDocument/completion",
        LspClient::at(
            &manifest_uri,
            position_of(
                &manifest_text,
                manifest_text.find("default_severity: ").unwrap() + 18,
                true,
            ),
        ),
    );
    assert_eq!(labels(&completion), set(&["advisory", "blocking"]));
    let completion = client.result(
        "textDocument/completion",
        LspClient::at(
            &third_uri,
            position_of(&typing, typing.find("Prose").unwrap(), true),
        ),
    );
    assert_eq!(completion, Value::Null, "no completion in the prose");

    // A missing required field: the fix adds the line at the end of the frontmatter.
    let missing = typing.replace("execution: ALWAYS\n", "");
    client.change(&third_uri, 4, json!([{"text": missing}]));
    let diagnostics = client.diagnostics(&third_uri, |list| {
        list.iter().any(|d| d["code"] == "missing-required-field")
    });
    let diagnostic = diagnostics
        .iter()
        .find(|d| d["code"] == "missing-required-field")
        .unwrap();
    assert!(
        diagnostic["message"]
            .as_str()
            .unwrap()
            .starts_with("missing required field: execution")
    );
    let actions = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": third_uri}, "range": diagnostic["range"], "context": {"diagnostics": []}}),
    );
    let closing_fence = position_of(
        &missing,
        missing.find("---\n\n# third-stage").unwrap(),
        true,
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|action| action["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["Add `execution: ALWAYS`", "Add `execution: CONDITIONAL`"]
    );
    assert_eq!(
        actions[0]["edit"]["changes"][&third_uri],
        json!([{"range": {"start": closing_fence, "end": closing_fence}, "newText": "execution: ALWAYS\n"}])
    );

    // Closing the document puts the file back to its disk bytes (the typo is on disk).
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": third_uri}}),
    );
    let diagnostics = client.diagnostics(&third_uri, |list| {
        list.len() == 1 && list[0]["code"] == "unknown-sensor-import"
    });
    assert_eq!(diagnostics.len(), 1);

    assert_eq!(client.shut_down(), 0);
    assert_eq!(
        project_snapshot(&project.root),
        before,
        "the server wrote nothing (no graph, no grid, no fingerprint)"
    );
    assert!(!project.exists(GRAPH) && !project.exists(GRID));

    // The number the hover showed is the one `aidlc compile` writes into the graph.
    let project_fixed = project;
    project_fixed.write(THIRD_STAGE, &third);
    assert_eq!(project_fixed.compile().status, 0);
    let graph: Value = serde_json::from_str(&project_fixed.read(GRAPH)).unwrap();
    let number = graph
        .as_array()
        .unwrap()
        .iter()
        .find(|node| node["slug"] == "first-stage")
        .unwrap()["number"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(shown.contains(&format!("- number: `{number}`")), "{shown}");
}

#[test]
fn a_manifest_edit_changes_the_diagnostics_of_open_stages() {
    let project = TestProject::minimal();
    let third = stage(
        "third-stage",
        "inception",
        "[first-stage]",
        "[demo-chek]",
        "",
    );
    project.write(THIRD_STAGE, &third);
    let mut client = LspClient::start(&project, &[]);
    let first_uri = uri(&project, FIRST_STAGE);
    let third_uri = uri(&project, THIRD_STAGE);
    let manifest_uri = uri(&project, MANIFEST);
    client.open(&first_uri, &project.read(FIRST_STAGE));
    client.open(&third_uri, &third);
    let manifest_text = project.read(MANIFEST);
    client.open(&manifest_uri, &manifest_text);
    let diagnostics = client.diagnostics(&third_uri, |list| !list.is_empty());
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("Known ids: demo-check"),
        "{diagnostics:#?}"
    );

    // Renaming the manifest's id (unsaved): the manifest is refused, so the id is no longer
    // known, and the other stage's diagnostic says so.
    let renamed = manifest_text.replace("id: demo-check", "id: demo-checker");
    client.change(&manifest_uri, 2, json!([{"text": renamed}]));
    let manifest_diagnostics = client.diagnostics(&manifest_uri, |list| !list.is_empty());
    assert_eq!(manifest_diagnostics[0]["code"], "sensor-id-mismatch");
    let diagnostics = client.diagnostics(&third_uri, |list| {
        list.iter()
            .any(|d| d["message"].as_str().unwrap().contains("Known ids: (none)"))
    });
    assert!(
        !diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean"),
        "{diagnostics:#?}"
    );

    // A gate-fired, blocking manifest whose glob matches none of first-stage's outputs: the
    // importing stage gets a dead-binding error; undoing the edit clears it.
    let gate = manifest_text
        .replace(
            "default_severity: advisory\n",
            "default_severity: blocking\nfire_on: gate\n",
        )
        .replace("matches: \"**/*.md\"", "matches: \"nowhere/**\"");
    client.change(&manifest_uri, 3, json!([{"text": gate}]));
    let diagnostics = client.diagnostics(&first_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "dead-sensor-binding");
    assert_eq!(diagnostics[0]["severity"], 1);
    let related = &diagnostics[0]["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], manifest_uri);
    assert_eq!(
        related["location"]["range"],
        range_of(&gate, "\"nowhere/**\"", 0, true)
    );
    client.change(&manifest_uri, 4, json!([{"text": manifest_text}]));
    assert_eq!(
        client.diagnostics(&first_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    let diagnostics = client.diagnostics(&third_uri, |list| {
        list.iter().any(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .contains("Known ids: demo-check")
        })
    });
    assert_eq!(diagnostics.len(), 1);
    // The manifest's own diagnostics are cleared too.
    assert_eq!(
        client.diagnostics(&manifest_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    assert_eq!(client.shut_down(), 0);
}

#[test]
fn a_consumed_artifact_leads_to_the_stage_that_produces_it() {
    let project = TestProject::minimal();
    let consumer = stage("third-stage", "inception", "[first-stage]", "[]", "").replace(
        "consumes: []\n",
        "consumes:\n  - artifact: first-stage-doc\n    required: true\n",
    );
    project.write(THIRD_STAGE, &consumer);
    let mut client = LspClient::start(&project, &[]);
    let third_uri = uri(&project, THIRD_STAGE);
    let at = position_of(
        &consumer,
        consumer.find("artifact: first").unwrap() + 12,
        true,
    );
    let definition = client.result(
        "textDocument/definition",
        LspClient::at(&third_uri, at.clone()),
    );
    let first = project.read(FIRST_STAGE);
    assert_eq!(
        definition,
        json!([{"uri": uri(&project, FIRST_STAGE), "range": range_of(&first, "first-stage-doc", 0, true)}])
    );
    let hover = client.result("textDocument/hover", LspClient::at(&third_uri, at));
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(
        shown.contains("Produced by 1 stage: `first-stage`."),
        "{shown}"
    );
    assert!(
        shown.contains("Consumed by 1 stage: `third-stage`."),
        "{shown}"
    );
    assert_eq!(client.shut_down(), 0);
}

#[test]
fn positions_are_utf16_columns_on_lines_with_non_ascii_text_unless_utf8_is_negotiated() {
    let project = TestProject::minimal();
    // Before the typo on its line: `é` (2 bytes, 1 UTF-16 unit) and `𝄞` (4 bytes, 2 units).
    let third = stage(
        "third-stage",
        "inception",
        "[first-stage]",
        "[é𝄞-check, demo-chek]",
        "",
    );
    project.write(THIRD_STAGE, &third);
    for (encodings, utf16, negotiated) in [
        (&["utf-16"][..], true, "utf-16"),
        (&["utf-8", "utf-16"][..], false, "utf-8"),
    ] {
        let mut client = LspClient::start(&project, encodings);
        assert_eq!(
            client.initialize_result["capabilities"]["positionEncoding"],
            negotiated
        );
        let third_uri = uri(&project, THIRD_STAGE);
        client.open(&third_uri, &third);
        let diagnostics = client.diagnostics(&third_uri, |list| list.len() == 2);
        assert_eq!(
            diagnostics[0]["range"],
            range_of(&third, "é𝄞-check", 0, utf16)
        );
        assert_eq!(
            diagnostics[1]["range"],
            range_of(&third, "demo-chek", 0, utf16)
        );
        // An incremental edit in the same unit lands on the typo.
        client.change(
            &third_uri,
            2,
            json!([{"range": range_of(&third, "demo-chek", 0, utf16), "text": "demo-check"}]),
        );
        let diagnostics = client.diagnostics(&third_uri, |list| list.len() == 1);
        assert_eq!(
            diagnostics[0]["range"],
            range_of(&third, "é𝄞-check", 0, utf16)
        );
        let fixed = third.replace("demo-chek", "demo-check");
        let hover = client.result(
            "textDocument/hover",
            LspClient::at(
                &third_uri,
                position_of(&fixed, fixed.find("demo-check]").unwrap() + 2, utf16),
            ),
        );
        assert_eq!(hover["range"], range_of(&fixed, "demo-check", 0, utf16));
        assert_eq!(client.shut_down(), 0);
    }
}

#[test]
fn bad_requests_and_odd_files_get_errors_or_nothing_and_the_session_goes_on() {
    let project = TestProject::minimal();
    let broken = ".claude/aidlc-common/stages/inception/broken-stage.md";
    project.write_bytes(broken, b"---\nslug: broken\xff\n---\n");
    let outside = TestProject::empty();
    outside.write("notes.md", "---\nsensors: [demo-check]\n---\n");
    let mut client = LspClient::start(&project, &["utf-16"]);

    // The file that is not UTF-8 gets the compile's diagnostic, and requests on it no result.
    let broken_uri = uri(&project, broken);
    let diagnostics = client.diagnostics(&broken_uri, |list| !list.is_empty());
    assert_eq!(diagnostics[0]["code"], "invalid-utf8");
    let hover = client.request(
        "textDocument/hover",
        LspClient::at(&broken_uri, json!({"line": 1, "character": 2})),
    );
    assert_eq!(hover["result"], Value::Null, "{hover}");

    // A body that is not JSON: a parse error with a null id.
    client.send_raw(&frame("{this is not json"));
    let error = client.wait_for("the parse error", |message| {
        message["error"]["code"] == -32700
    });
    assert_eq!(error["id"], Value::Null);
    // JSON that is not a request: invalid request, with its id.
    client.send(&json!({"jsonrpc": "2.0", "id": 99, "params": {}}));
    let error = client.response_to(&json!(99));
    assert_eq!(error["error"]["code"], -32600, "{error}");
    // Parameters that do not parse, an unknown method.
    let error = client.request("textDocument/hover", json!({"position": "here"}));
    assert_eq!(error["error"]["code"], -32602, "{error}");
    let error = client.request("aidlc/nothing", json!({}));
    assert_eq!(error["error"]["code"], -32601, "{error}");

    // A file outside the project, a URI that is not a file, a position far past the end.
    let outside_uri = format!("file://{}", outside.path("notes.md"));
    client.open(&outside_uri, &outside.read("notes.md"));
    for (document, position) in [
        (outside_uri.as_str(), json!({"line": 1, "character": 12})),
        ("untitled:Untitled-1", json!({"line": 0, "character": 0})),
        (
            uri(&project, FIRST_STAGE).as_str(),
            json!({"line": 4000, "character": 4000}),
        ),
    ] {
        for method in [
            "textDocument/hover",
            "textDocument/definition",
            "textDocument/completion",
        ] {
            let response = client.request(method, LspClient::at(document, position.clone()));
            assert_eq!(
                response["result"],
                Value::Null,
                "{method} {document}: {response}"
            );
        }
    }
    // Edits to a document never opened, and ranges past the end of an open one.
    let first_uri = uri(&project, FIRST_STAGE);
    client.change(&first_uri, 7, json!([{"text": "garbage"}]));
    let first = project.read(FIRST_STAGE);
    client.open(&first_uri, &first);
    client.change(
        &first_uri,
        2,
        json!([{"range": {"start": {"line": 900, "character": 3}, "end": {"line": 2, "character": 9000}}, "text": ""}]),
    );
    client.change(&first_uri, 3, json!([{"text": first}]));
    // Still serving: a hover on the import answers.
    let hover = client.result(
        "textDocument/hover",
        LspClient::at(
            &first_uri,
            position_of(&first, first.find("[demo-check]").unwrap() + 1, true),
        ),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("sensor `demo-check`")
    );
    assert_eq!(client.shut_down(), 0);
}

#[test]
fn exit_without_shutdown_ends_with_status_1_and_no_project_with_status_2() {
    let project = TestProject::minimal();
    let mut client = LspClient::start(&project, &[]);
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_for_exit(), 1);

    let nowhere = TestProject::empty();
    let mut child = nowhere
        .command(&nowhere.root, &["lsp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start aidlc lsp");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": null, "capabilities": {}}});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&frame(&initialize.to_string()))
        .unwrap();
    let output = child.wait_with_output().expect("aidlc lsp ends");
    assert_eq!(output.status.code(), Some(2));
    let response = read_frame(&mut &output.stdout[..]).expect("an initialize response");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("no AI-DLC project found"),
        "{response}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: no AI-DLC project found"),
        "{stderr}"
    );
}

/// Cancellation, in process: every message is queued before the server reads any, so the
/// cancelled request and its `$/cancelRequest` are certainly in one batch.
#[test]
fn a_request_cancelled_while_queued_is_answered_request_cancelled() {
    use lsp_server::{Connection, Message, Notification, Request, RequestId};
    let project = TestProject::minimal();
    let (server_side, client_side) = Connection::memory();
    let first = project.read(FIRST_STAGE);
    let hover = json!({
        "textDocument": {"uri": uri(&project, FIRST_STAGE)},
        "position": position_of(&first, first.find("[demo-check]").unwrap() + 1, true),
    });
    let queued: Vec<Message> = vec![
        Request::new(
            RequestId::from(1),
            "initialize".to_owned(),
            json!({"capabilities": {}}),
        )
        .into(),
        Notification::new("initialized".to_owned(), json!({})).into(),
        Request::new(
            RequestId::from(2),
            "textDocument/hover".to_owned(),
            hover.clone(),
        )
        .into(),
        Notification::new("$/cancelRequest".to_owned(), json!({"id": 2})).into(),
        Request::new(RequestId::from(3), "textDocument/hover".to_owned(), hover).into(),
        Request::new(RequestId::from(4), "shutdown".to_owned(), Value::Null).into(),
        Notification::new("exit".to_owned(), Value::Null).into(),
    ];
    for message in queued {
        client_side.sender.send(message).unwrap();
    }
    let options = aidlc::lsp::ServeOptions {
        project_dir: Some(project.root.clone()),
        harness: None,
    };
    aidlc::lsp::serve(&server_side, &options).expect("a clean session");
    drop(server_side);
    let responses: Vec<lsp_server::Response> = client_side
        .receiver
        .iter()
        .filter_map(|message| match message {
            Message::Response(response) => Some(response),
            _ => None,
        })
        .collect();
    let by_id = |id: i32| {
        responses
            .iter()
            .find(|response| response.id == RequestId::from(id))
            .unwrap_or_else(|| panic!("no response {id}: {responses:?}"))
    };
    let cancelled = by_id(2).response_result.as_ref().unwrap_err();
    assert_eq!(cancelled.code, -32800);
    let answered = by_id(3).response_result.as_ref().unwrap();
    assert!(
        answered["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("demo-check")
    );
    assert!(by_id(4).response_result.is_ok());
}

/// A real editor: headless Neovim starts `aidlc lsp` on a stage file with a typo'd sensor id,
/// waits for its diagnostics and writes them to a file. Debian's Neovim (0.7) has no
/// `vim.lsp.start`, so the script uses `start_client` and `buf_attach_client`. Skipped (with a
/// SKIPPED line) without `nvim`, except under `.ci/run`, which installs it.
#[test]
fn headless_neovim_shows_the_diagnostics_of_a_stage_file() {
    let Some(nvim) = crate::support::system_tool("nvim") else {
        return;
    };
    let project = TestProject::minimal();
    let third = stage(
        "third-stage",
        "inception",
        "[first-stage]",
        "[demo-chek]",
        "",
    );
    project.write(THIRD_STAGE, &third);
    let output_file = project.path("nvim-diagnostics.json");
    let script = project.path("lsp-check.lua");
    std::fs::write(&script, NEOVIM_SCRIPT).unwrap();
    let mut child = std::process::Command::new(nvim)
        .args(["--headless", "-n", "-i", "NONE", "--clean", "-u", "NONE"])
        .arg(project.path(THIRD_STAGE).as_str())
        .args(["-c", &format!("luafile {script}")])
        .current_dir(&project.root)
        .env("AIDLC_BIN", env!("CARGO_BIN_EXE_aidlc"))
        .env("AIDLC_NVIM_OUT", output_file.as_str())
        .env("AIDLC_NVIM_ROOT", project.root.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nvim");
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for nvim") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nvim did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let written = std::fs::read_to_string(&output_file)
        .unwrap_or_else(|error| panic!("nvim ({status}) wrote no diagnostics file: {error}"));
    let diagnostics: Value = serde_json::from_str(&written).expect("JSON from the Lua script");
    let list = diagnostics.as_array().expect("a list of diagnostics");
    assert_eq!(list.len(), 1, "{written}");
    let (line, column) = {
        let offset = third.find("demo-chek").unwrap();
        let position = position_of(&third, offset, true);
        (position["line"].clone(), position["character"].clone())
    };
    assert_eq!(list[0]["lnum"], line, "{written}");
    assert_eq!(list[0]["col"], column, "{written}");
    assert_eq!(list[0]["code"], "unknown-sensor-import", "{written}");
    assert!(
        list[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `demo-check`"),
        "{written}"
    );
    assert_eq!(status.code(), Some(0), "{written}");
}

/// Start `aidlc lsp` for the current buffer, wait up to 30 s for its diagnostics, write them
/// as JSON, quit (status 0 with diagnostics, 1 without).
const NEOVIM_SCRIPT: &str = r#"
local out = os.getenv("AIDLC_NVIM_OUT")
local client_id = vim.lsp.start_client({
  name = "aidlc",
  cmd = { os.getenv("AIDLC_BIN"), "lsp" },
  root_dir = os.getenv("AIDLC_NVIM_ROOT"),
})
if client_id == nil then
  vim.cmd("cquit 3")
end
local buffer = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buffer, client_id)
local found = vim.wait(30000, function()
  return #vim.diagnostic.get(buffer) > 0
end, 50)
local shown = {}
for _, d in ipairs(vim.diagnostic.get(buffer)) do
  -- Neovim 0.7 keeps the LSP code under user_data; later versions put it on the diagnostic.
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  table.insert(shown, { lnum = d.lnum, col = d.col, message = d.message, code = code, severity = d.severity })
end
local file = io.open(out, "w")
file:write(vim.fn.json_encode(shown))
file:close()
vim.lsp.stop_client(client_id)
vim.wait(2000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
if found then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
"#;

/// `harness.json`'s `plugins` key is read by the compile strictly; its diagnostics
/// are published on the file with their spans, and the editor's unsaved text is what counts.
#[test]
fn harness_json_plugins_diagnostics_are_published_with_their_spans_and_follow_the_editor() {
    const HARNESS_JSON: &str = ".claude/tools/data/harness.json";
    let project = TestProject::minimal();
    let text = "{\n  \"plugins\": [\"aidlc\", \"Bad_Name\"]\n}\n";
    project.write(HARNESS_JSON, text);
    let before = project_snapshot(&project.root);
    let mut client = LspClient::start(&project, &["utf-16"]);
    let harness_uri = uri(&project, HARNESS_JSON);
    let diagnostics = client.diagnostics(&harness_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "invalid-plugin-selection");
    assert_eq!(diagnostics[0]["severity"], 1);
    assert_eq!(
        diagnostics[0]["range"],
        range_of(text, "\"Bad_Name\"", 0, true),
        "{diagnostics:#?}"
    );
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("(\"Bad_Name\") is not a plugin name"),
        "{diagnostics:#?}"
    );

    // The editor's text, unsaved, fixes it: the diagnostic is cleared.
    client.open(&harness_uri, text);
    client.change(
        &harness_uri,
        2,
        json!([{"range": range_of(text, ", \"Bad_Name\"", 0, true), "text": ""}]),
    );
    assert_eq!(
        client.diagnostics(&harness_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    assert_eq!(client.shut_down(), 0);
    assert_eq!(before, project_snapshot(&project.root), "nothing written");
}

/// D52: in a plugin's own tree the server publishes the own-tree compile's
/// diagnostics on the plugin's files, follows the editor's unsaved text, and writes nothing.
#[test]
fn in_a_plugins_own_tree_the_compiles_diagnostics_are_published_on_the_plugins_files() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    let stage_path = "acme/stages/construction/acme-check.md";
    let broken = crate::plugin_own_tree::acme_stage("sideways");
    shelf.write(stage_path, &broken);
    let before = project_snapshot(&shelf.root);
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let stage_uri = uri(&shelf, stage_path);
    let diagnostics = client.diagnostics(&stage_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["severity"], 1);
    assert_eq!(
        diagnostics[0]["range"],
        range_of(&broken, "sideways", 0, true),
        "{diagnostics:#?}"
    );
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("sideways"),
        "{diagnostics:#?}"
    );

    // The unsaved fix clears it.
    client.open(&stage_uri, &broken);
    client.change(
        &stage_uri,
        2,
        json!([{"range": range_of(&broken, "sideways", 0, true), "text": "inline"}]),
    );
    assert_eq!(
        client.diagnostics(&stage_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    assert_eq!(client.shut_down(), 0);
    assert_eq!(before, project_snapshot(&shelf.root), "nothing written");
}

/// D52: a composition refusal is published on the file at fault with its span.
#[test]
fn in_a_plugins_own_tree_a_refusal_is_published_on_the_manifest_key_at_fault() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    let manifest_path = "acme/.aidlc-plugin/plugin.json";
    let manifest = "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\", \"lib@not-a-range\"]}\n";
    shelf.write(manifest_path, manifest);
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let manifest_uri = uri(&shelf, manifest_path);
    let diagnostics = client.diagnostics(&manifest_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "plugin-refused", "{diagnostics:#?}");
    assert_eq!(
        diagnostics[0]["range"],
        range_of(manifest, "\"lib@not-a-range\"", 0, true),
        "{diagnostics:#?}"
    );

    // The editor's unsaved fix clears it.
    let fixed = manifest.replace(", \"lib@not-a-range\"", "");
    client.open(&manifest_uri, &fixed);
    assert_eq!(
        client.diagnostics(&manifest_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    assert_eq!(client.shut_down(), 0);
}

/// D52: a composition warning (here, a sensor on disk that nothing of the plugin
/// imports) is published on the file it names, as a warning.
#[test]
fn in_a_plugins_own_tree_a_composition_warning_is_published_on_the_file_it_names() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    let path = "acme/sensors/aidlc-acme-extra.md";
    let text = shelf
        .read("acme/sensors/aidlc-acme-lint.md")
        .replace("acme-lint", "acme-extra");
    shelf.write(path, &text);
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let sensor_uri = uri(&shelf, path);
    let diagnostics = client.diagnostics(&sensor_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        diagnostics[0]["code"], "plugin-composition-warning",
        "{diagnostics:#?}"
    );
    assert_eq!(diagnostics[0]["severity"], 2, "{diagnostics:#?}");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains("sensor \"acme-extra\" is on disk but not declared"),
        "{message}"
    );
    assert!(message.contains("help: import it"), "{message}");
    assert_eq!(
        diagnostics[0]["range"],
        range_of(&text, "---", 0, true),
        "{diagnostics:#?}"
    );
    assert_eq!(client.shut_down(), 0);
}

/// D52: a diagnostic in text a contribution wrote into a core stage is published on
/// the contribution, at the value it added.
#[test]
fn in_a_plugins_own_tree_a_diagnostic_in_contributed_text_is_published_on_the_contribution() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    let path = "acme/contributions/construction/build-and-test.md";
    let text = shelf
        .read(path)
        .replace("    - acme-lint\n", "    - acme-lnt\n");
    shelf.write(path, &text);
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let contribution_uri = uri(&shelf, path);
    let diagnostics = client.diagnostics(&contribution_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        diagnostics[0]["code"], "unknown-sensor-import",
        "{diagnostics:#?}"
    );
    assert_eq!(
        diagnostics[0]["range"],
        range_of(&text, "acme-lnt", 0, true),
        "{diagnostics:#?}"
    );
    assert_eq!(client.shut_down(), 0);
}

/// D52: two host projections and no `--harness` is a refusal that names no file of
/// its own: it is published on the manifest the plugin is read from, at its first line, saying
/// so.
#[test]
fn in_a_plugins_own_tree_a_refusal_without_a_file_is_published_on_the_manifests_first_line() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    std::fs::remove_dir_all(shelf.path("acme/.aidlc-plugin")).unwrap();
    let manifest = "{\"name\": \"aidlc-acme\",\n \"version\": \"1.0.0\"}\n";
    for folder in [".claude-plugin", ".codex-plugin"] {
        shelf.write(&format!("acme/{folder}/plugin.json"), manifest);
    }
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let manifest_uri = uri(&shelf, "acme/.claude-plugin/plugin.json");
    let diagnostics = client.diagnostics(&manifest_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains("--harness claude or --harness codex"),
        "{message}"
    );
    assert!(
        message.contains("shown on the plugin's manifest"),
        "{message}"
    );
    assert_eq!(
        diagnostics[0]["range"],
        range_of(manifest, "{\"name\": \"aidlc-acme\",", 0, true),
        "{diagnostics:#?}"
    );
    assert_eq!(client.shut_down(), 0);
}

/// D52: the language server composes the plugin's tree where it is, with the
/// editor's unsaved text over it (not a copy of it): the unsaved manifest is what
/// is read, and a sibling plugin it depends on is found beside it, as `aidlc compile` finds it.
#[test]
fn in_a_plugins_own_tree_the_unsaved_manifest_is_read_in_place_and_siblings_are_found() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    shelf.write(
        "lib/.aidlc-plugin/plugin.json",
        "{\"name\": \"lib\", \"version\": \"1.0.0\", \"dependencies\": [\"core\"]}\n",
    );
    let before = project_snapshot(&shelf.root);
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let manifest_path = "acme/.aidlc-plugin/plugin.json";
    let manifest_uri = uri(&shelf, manifest_path);
    // Depending on the sibling at a version it does not have: refused on the dependency, which
    // names the sibling's version, so the sibling was read.
    let unsaved =
        "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\", \"lib@^2\"]}\n";
    client.open(&manifest_uri, unsaved);
    let diagnostics = client.diagnostics(&manifest_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains("plugin \"lib\" is version 1.0.0"),
        "{message}"
    );
    assert_eq!(
        diagnostics[0]["range"],
        range_of(unsaved, "\"lib@^2\"", 0, true),
        "{diagnostics:#?}"
    );
    // At a version it has, the sibling composes with the plugin: nothing left to report.
    client.change(
        &manifest_uri,
        2,
        json!([{"range": range_of(unsaved, "^2", 0, true), "text": "^1"}]),
    );
    assert_eq!(
        client.diagnostics(&manifest_uri, <[Value]>::is_empty),
        Vec::<Value>::new()
    );
    assert_eq!(client.shut_down(), 0);
    assert_eq!(before, project_snapshot(&shelf.root), "nothing written");
}

/// D54: in a plugin's own tree the sibling plugins are read from the session's warm
/// trees: a sibling's unsaved text is what is composed, and a sibling's file changed on disk,
/// with no word from the editor, is seen through the watcher.
#[test]
fn in_a_plugins_own_tree_a_siblings_unsaved_text_and_its_disk_edits_are_composed() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    let manifest =
        "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\", \"lib@^1\"]}\n";
    shelf.write("acme/.aidlc-plugin/plugin.json", manifest);
    let lib_manifest = |version: &str| {
        format!("{{\"name\": \"lib\", \"version\": \"{version}\", \"dependencies\": [\"core\"]}}\n")
    };
    shelf.write("lib/.aidlc-plugin/plugin.json", &lib_manifest("1.0.0"));
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let manifest_uri = uri(&shelf, "acme/.aidlc-plugin/plugin.json");
    let lib_uri = uri(&shelf, "lib/.aidlc-plugin/plugin.json");
    // An answer from the main loop: the first compile ran, and the folders it read are watched.
    client.result(
        "textDocument/hover",
        LspClient::at(&manifest_uri, json!({"line": 0, "character": 0})),
    );
    let refused_at = |version: &'static str| {
        move |list: &[Value]| {
            list.len() == 1
                && list[0]["message"].as_str().is_some_and(|message| {
                    message.contains(&format!("plugin \"lib\" is version {version}"))
                })
                && list[0]["range"] == range_of(manifest, "\"lib@^1\"", 0, true)
        }
    };

    // The sibling's unsaved manifest, at a version the plugin does not accept.
    client.open(&lib_uri, &lib_manifest("2.0.0"));
    client.diagnostics(&manifest_uri, refused_at("2.0.0"));
    // Its buffer closed: the disk's version again.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": lib_uri}}),
    );
    client.diagnostics(&manifest_uri, <[Value]>::is_empty);

    // The sibling changed on disk, and the editor says nothing.
    shelf.write("lib/.aidlc-plugin/plugin.json", &lib_manifest("3.0.0"));
    client.diagnostics(&manifest_uri, refused_at("3.0.0"));
    shelf.write("lib/.aidlc-plugin/plugin.json", &lib_manifest("1.2.0"));
    client.diagnostics(&manifest_uri, <[Value]>::is_empty);
    assert_eq!(client.shut_down(), 0);
}

/// D54: the install's staleness check composes the warm trees the watcher keeps
/// current: an edit of a composed plugin's source is stale, and the edit undone is not.
#[test]
fn a_composed_plugins_source_edit_undone_is_no_longer_stale() {
    const INSTALLED_STAGE: &str = ".claude/aidlc-common/stages/construction/acme-check.md";
    let project = TestProject::default_framework();
    let shelf = crate::plugins::PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let added = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    let mut client = LspClient::start(&project, &["utf-16"]);
    let stage_uri = uri(&project, INSTALLED_STAGE);
    client.result(
        "textDocument/hover",
        LspClient::at(&stage_uri, json!({"line": 0, "character": 0})),
    );
    let stage_file = root.join("stages/construction/acme-check.md");
    let original = std::fs::read_to_string(&stage_file).unwrap();
    for round in 0..3 {
        std::fs::write(
            &stage_file,
            original.replace("write the report", &format!("write report {round}")),
        )
        .unwrap();
        client.diagnostics(&stage_uri, |list| {
            has_stale_warning(list, "plugin \"acme\" changed at its source")
        });
        std::fs::write(&stage_file, &original).unwrap();
        client.diagnostics(&stage_uri, no_stale_warning);
    }
    assert_eq!(client.shut_down(), 0);
}

/// D52: a diagnostic in core text the plugin did not write is not dropped: it is
/// published on the plugin's file it relates to, saying where the compile reported it.
#[test]
fn in_a_plugins_own_tree_a_diagnostic_in_core_text_is_published_on_the_plugin_file_it_names() {
    let shelf = TestProject::empty();
    let root = crate::plugin_own_tree::own_tree(&shelf);
    let stage_path = "acme/stages/construction/acme-check.md";
    let stage = crate::plugin_own_tree::acme_stage("inline")
        .replace("  - acme-report\n", "  - acme-report\n  - cd-config\n");
    shelf.write(stage_path, &stage);
    let mut client = LspClient::start_in(&shelf, &root, &["utf-16"]);
    let stage_uri = uri(&shelf, stage_path);
    let diagnostics = client.diagnostics(&stage_uri, |list| !list.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        diagnostics[0]["code"], "duplicate-producer",
        "{diagnostics:#?}"
    );
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "reported at <composed default framework>/.claude/aidlc-common/stages/operation/deployment-execution.md:"
        ),
        "{message}"
    );
    assert_eq!(client.shut_down(), 0);
}

fn has_stale_warning(list: &[Value], words: &str) -> bool {
    list.iter().any(|diagnostic| {
        diagnostic["code"] == "stale-plugin-copy"
            && diagnostic["severity"] == 2
            && diagnostic["message"]
                .as_str()
                .is_some_and(|message| message.contains(words))
    })
}

fn no_stale_warning(list: &[Value]) -> bool {
    !list
        .iter()
        .any(|diagnostic| diagnostic["code"] == "stale-plugin-copy")
}

/// D53: on an install, an edit of a composed plugin's source is a warning on
/// the installed copy it makes stale, a file it adds is named on the lock file, nothing is
/// written, and `aidlc plugin sync` clears both.
#[test]
fn a_composed_plugins_changed_source_is_a_stale_warning_on_its_installed_copy_until_synced() {
    const INSTALLED_STAGE: &str = ".claude/aidlc-common/stages/construction/acme-check.md";
    let project = TestProject::default_framework();
    let shelf = crate::plugins::PluginShelf::new();
    let root = shelf.native("acme", 100, &[]);
    let added = project.run(&["plugin", "add", root.as_str()]);
    assert_eq!(added.status, 0, "{}", added.stderr);
    let mut client = LspClient::start(&project, &["utf-16"]);
    let stage_uri = uri(&project, INSTALLED_STAGE);
    let lock_uri = uri(&project, "aidlc.lock.json");
    // An answer from the main loop: the folders are watched from here on, and nothing was
    // stale (a clean install publishes nothing).
    client.result(
        "textDocument/hover",
        LspClient::at(&stage_uri, json!({"line": 0, "character": 0})),
    );
    assert!(
        !client
            .seen
            .iter()
            .any(|message| message.to_string().contains("stale-plugin-copy")),
        "{:#?}",
        client.seen
    );
    let before = project_snapshot(&project.root);

    let stage_file = root.join("stages/construction/acme-check.md");
    let text = std::fs::read_to_string(&stage_file).unwrap();
    std::fs::write(
        &stage_file,
        text.replace("write the report", "write the full report"),
    )
    .unwrap();
    let on_copy = client.diagnostics(&stage_uri, |list| {
        has_stale_warning(list, "plugin \"acme\" changed at its source")
    });
    assert_eq!(on_copy.len(), 1, "{on_copy:#?}");
    assert_eq!(
        on_copy[0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    assert!(
        on_copy[0]["message"]
            .as_str()
            .unwrap()
            .contains("`aidlc plugin sync` rewrites it"),
        "{on_copy:#?}"
    );

    shelf.write("acme/knowledge/acme-helper-agent/more.md", "# More\n");
    client.diagnostics(&lock_uri, |list| {
        has_stale_warning(
            list,
            "`aidlc plugin sync` adds .claude/knowledge/acme-helper-agent/more.md",
        )
    });
    assert_eq!(before, project_snapshot(&project.root), "nothing written");

    let synced = project.run(&["plugin", "sync"]);
    assert_eq!(synced.status, 0, "{}", synced.stderr);
    client.diagnostics(&stage_uri, no_stale_warning);
    client.diagnostics(&lock_uri, no_stale_warning);
    assert_eq!(client.shut_down(), 0);
}

/// A FIFO where `aidlc.lock.json` belongs is refused at once (D57): the session answers, names
/// the lock file and what it is, and shuts down cleanly instead of waiting on the FIFO.
#[test]
fn a_fifo_lock_file_is_refused_at_once_and_the_session_goes_on() {
    let project = TestProject::default_framework();
    let lock = project.path("aidlc.lock.json");
    let made = std::process::Command::new("mkfifo")
        .arg(lock.as_str())
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {lock}");
    let mut client = LspClient::start(&project, &["utf-16"]);
    let lock_uri = uri(&project, "aidlc.lock.json");
    let on_lock = client.diagnostics(&lock_uri, |list| {
        list.iter()
            .any(|diagnostic| diagnostic.to_string().contains("FIFO"))
    });
    assert!(!on_lock.is_empty(), "{on_lock:#?}");
    let stage_uri = uri(
        &project,
        ".claude/aidlc-common/stages/inception/workspace-detection.md",
    );
    client.result(
        "textDocument/hover",
        LspClient::at(&stage_uri, json!({"line": 0, "character": 0})),
    );
    assert_eq!(client.shut_down(), 0);
}

#[test]
fn lsp_refuses_an_endless_header_line_after_a_bounded_read() {
    use std::io::Write as _;
    let project = TestProject::minimal();
    let mut child = project
        .command(&project.root, &["lsp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start aidlc lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    // A header that never ends: 1 GiB offered in 1 MiB pieces. The server must stop reading
    // long before that, so the pipe breaks while most of it is still unsent.
    let offered: usize = 1024 * 1024 * 1024;
    let chunk = vec![b'x'; 1024 * 1024];
    let mut sent = 0;
    let _ = stdin.write_all(b"Content-Length: 10");
    while sent < offered {
        match stdin.write_all(&chunk) {
            Ok(()) => sent += chunk.len(),
            Err(_) => break,
        }
    }
    drop(stdin);
    let output = child.wait_with_output().expect("aidlc lsp ends");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        sent < 16 * 1024 * 1024,
        "the server read {sent} bytes of one header line"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "the editor's LSP stream is broken: a frame header line longer than 4096 bytes"
        ),
        "{stderr}"
    );
}
