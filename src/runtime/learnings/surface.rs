//! `learnings surface --slug <stage>` (D43, read-only): the active space and intent, the
//! state's Current Stage, the stage's `memory.md` (its path from `<record>/runtime-graph.json`
//! when the conductor wrote one, else the compiled graph's `<record>/<phase>/<slug>/memory.md`),
//! and the candidates it holds.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};

use super::LearningsError;
use super::selections::expected_path;
use crate::compile::discover::{MAX_GENERATED_BYTES, MAX_INPUT_BYTES};
use crate::leaves::fs_util::{InputError, read_bounded};
use crate::leaves::js_text::{js_trim, js_trim_start};
use crate::runtime::dispatch::compiled_graph::load_graph;
use crate::runtime::workspace::{self, Workspace};

/// The four `memory.md` sections, each under the heading line `## <name>`.
const SECTIONS: [&str; 4] = [
    "Interpretations",
    "Deviations",
    "Tradeoffs",
    "Open questions",
];
const OPEN_QUESTIONS: &str = "Open questions";
const RUNTIME_GRAPH_FILE: &str = "runtime-graph.json";

/// One counted line of `memory.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEntry {
    pub heading: &'static str,
    pub ts: String,
    pub summary: String,
    pub context: String,
}

/// The reference's `parseMemoryEntries`: BOM stripped, CRLF read as LF, fenced code skipped;
/// each non-blank line under one of the four headings is an entry, except blockquotes and
/// single-line comments; any other `## ` heading ends the section.
pub fn parse_memory_entries(raw: &str) -> Vec<MemoryEntry> {
    let text = raw
        .strip_prefix('\u{feff}')
        .unwrap_or(raw)
        .replace("\r\n", "\n");
    let mut entries = Vec::new();
    let mut current: Option<&'static str> = None;
    let mut in_fence = false;
    for line in text.split('\n') {
        if line.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // A heading opens one of the four sections, or ends the one open.
        if let Some(name) = line.strip_prefix("## ") {
            current = SECTIONS.iter().find(|section| **section == name).copied();
            continue;
        }
        let Some(heading) = current else {
            continue;
        };
        let trimmed = js_trim(line);
        if trimmed.is_empty() || trimmed.starts_with('>') || is_single_line_comment(trimmed) {
            continue;
        }
        let (ts, summary, context) = split_entry(trimmed);
        entries.push(MemoryEntry {
            heading,
            ts,
            summary,
            context,
        });
    }
    entries
}

fn is_single_line_comment(line: &str) -> bool {
    line.starts_with("<!--") && line.trim_end().ends_with("-->")
}

/// `- <ts> — <summary>; <context>`: the bullet stripped, the token before ` — ` as `ts`, the
/// summary up to the first `;`, the rest as context; no em dash: the whole line is the summary.
fn split_entry(line: &str) -> (String, String, String) {
    let body = ["- ", "* ", "-\t", "*\t"]
        .iter()
        .find_map(|bullet| line.strip_prefix(bullet))
        .map_or(line, js_trim_start);
    let Some((ts, rest)) = body
        .split_once(char::is_whitespace)
        .and_then(|(ts, rest)| Some((ts, js_trim_start(rest).strip_prefix('—')?)))
        .filter(|(_, rest)| rest.starts_with(char::is_whitespace))
    else {
        return (String::new(), body.to_owned(), String::new());
    };
    let rest = js_trim_start(rest);
    match rest.split_once(';') {
        None => (ts.to_owned(), js_trim(rest).to_owned(), String::new()),
        Some((summary, context)) => (
            ts.to_owned(),
            js_trim(summary).to_owned(),
            js_trim(context).to_owned(),
        ),
    }
}

/// Where the stage's `memory.md` is (project-relative) and which file said so.
fn memory_path(
    workspace: &Workspace,
    record: &Utf8Path,
    slug: &str,
) -> Result<(String, &'static str), LearningsError> {
    let runtime_graph = record.join(RUNTIME_GRAPH_FILE);
    if runtime_graph.exists() {
        let shown = workspace.layout.display(&runtime_graph);
        let bytes = read_bounded(&runtime_graph, MAX_GENERATED_BYTES)
            .map_err(|error| LearningsError::Refused(format!("cannot read {shown}: {error}")))?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|error| {
            LearningsError::Refused(format!("runtime-graph.json is malformed: {error}"))
        })?;
        let row = value
            .get("stages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|row| row.get("stage_slug").and_then(Value::as_str) == Some(slug))
            .ok_or_else(|| {
                LearningsError::Refused(format!(
                    "stage \"{slug}\" not found in runtime-graph.json ({shown})"
                ))
            })?;
        let memory = row
            .get("memory_path")
            .and_then(Value::as_str)
            .filter(|path| !path.is_empty())
            .ok_or_else(|| {
                LearningsError::Refused(format!(
                    "stage \"{slug}\" has no memory_path in runtime-graph.json"
                ))
            })?;
        return Ok((memory.to_owned(), "runtime-graph"));
    }
    let graph = load_graph(&workspace.layout.stage_graph_path).map_err(|error| {
        LearningsError::Refused(format!(
            "no runtime-graph.json in the record and the compiled graph cannot be read: {error}"
        ))
    })?;
    let node = graph
        .nodes
        .iter()
        .find(|node| node.slug == slug)
        .ok_or_else(|| {
            LearningsError::Refused(format!(
                "stage \"{slug}\" is not in the compiled graph (run `aidlc compile`)"
            ))
        })?;
    let path = record
        .join(node.phase.as_str())
        .join(slug)
        .join("memory.md");
    Ok((workspace.layout.display(&path).to_string(), "stage-graph"))
}

/// The reply of `surface`: the reference's keys, then `memory_path`, `memory_path_source`
/// (`runtime-graph` or `stage-graph`) and `selections_file` (absolute: where the conductor
/// writes the picks, the only file `persist` reads).
pub fn surface(workspace: &Workspace, slug: &str) -> Result<Value, LearningsError> {
    let intent = workspace
        .unambiguous_active_intent()
        .map_err(|error| LearningsError::Refused(error.to_string()))?;
    let record: Utf8PathBuf = intent.clone().unwrap_or_else(|| workspace.intents_dir());
    let state = workspace::read_state_text(&record).ok_or_else(|| {
        LearningsError::Refused(format!(
            "could not read state: {} does not exist",
            workspace
                .layout
                .display(&workspace::state_file_path(&record))
        ))
    })?;
    let current = workspace::read_state_field(&state, "Current Stage").ok_or_else(|| {
        LearningsError::Refused("state file has no Current Stage field".to_owned())
    })?;
    if current != slug {
        return Err(LearningsError::Refused(format!(
            "slug mismatch: requested \"{slug}\" but Current Stage is \"{current}\""
        )));
    }
    let (memory, source) = memory_path(workspace, &record, slug)?;
    let memory_abs = workspace.project_dir().join(&memory);
    // A hand-written file, read as the compile reads its inputs: at most `MAX_INPUT_BYTES`,
    // and only a regular file (a FIFO would block the read forever).
    let raw = match read_bounded(&memory_abs, MAX_INPUT_BYTES) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(InputError::NotFound(_)) => String::new(),
        Err(error) => {
            return Err(LearningsError::Refused(format!(
                "cannot read {memory}: {error}"
            )));
        }
    };
    let entries = parse_memory_entries(&raw);
    let phase = memory.rsplit('/').nth(2).unwrap_or_default().to_owned();
    let mut candidates = Vec::new();
    let mut parked = Vec::new();
    for entry in &entries {
        if entry.heading == OPEN_QUESTIONS {
            parked.push(json!({"ts": entry.ts, "summary": entry.summary}));
            continue;
        }
        candidates.push(json!({
            "id": format!("c{}", candidates.len() + 1),
            "source_heading": entry.heading,
            "ts": entry.ts,
            "summary": entry.summary,
            "context": entry.context,
            "default_scope": "project",
        }));
    }
    let selections_file = expected_path(&workspace.version().learnings_dir(&record), slug);
    Ok(json!({
        "schema_version": 1,
        "stage_slug": slug,
        "phase": phase,
        "space": workspace.space(),
        "intent": intent.as_deref().and_then(Utf8Path::file_name),
        "memory_entries_total": entries.len(),
        "candidates": candidates,
        "parked_open_questions": parked,
        "memory_path": memory,
        "memory_path_source": source,
        "selections_file": selections_file.as_str(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_entries_follow_the_reference_rules() {
        let raw = "\u{feff}# Memory\r\n\r\n## Interpretations\r\n- 2026-01-01T00:00:00Z — Users are admins; from the brief\r\n> a quote\r\n<!-- a comment -->\r\n```\r\n- fenced — no\r\n```\r\n* plain line without a dash\r\n## Notes\r\n- not counted\r\n## Open questions\r\n- 2026-01-02T00:00:00Z — Which region?\r\n";
        let entries = parse_memory_entries(raw);
        assert_eq!(
            entries,
            [
                MemoryEntry {
                    heading: "Interpretations",
                    ts: "2026-01-01T00:00:00Z".to_owned(),
                    summary: "Users are admins".to_owned(),
                    context: "from the brief".to_owned(),
                },
                MemoryEntry {
                    heading: "Interpretations",
                    ts: String::new(),
                    summary: "plain line without a dash".to_owned(),
                    context: String::new(),
                },
                MemoryEntry {
                    heading: "Open questions",
                    ts: "2026-01-02T00:00:00Z".to_owned(),
                    summary: "Which region?".to_owned(),
                    context: String::new(),
                },
            ]
        );
    }
}
