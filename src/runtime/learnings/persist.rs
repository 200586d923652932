//! `learnings persist --slug <stage> --selections-json <path>`: D45's steps under one audit
//! lock, with its invariants (a replay changes nothing, every file is replaced atomically inside
//! the project, a scaffolded manifest reads back as the selection, `scaffold.rs`). Beyond them:
//! - every selection is checked before the first write ([`check_selections`]): a refused
//!   selection leaves every file as it was;
//! - a practice line is one line: a learning whose heading or text holds a line break, or the
//!   `<!--`/`-->` of a marker, is refused, so no entry can open a section or forge a marker.

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::LearningsError;
use super::scaffold::{ScaffoldRefusal, scaffold_manifest};
use super::selections::{
    LearningSelection, Selection, SelectionsFile, SensorSelection, expected_path,
    read_selections_file,
};
use crate::leaves::audit_lock;
use crate::leaves::text_lines::lines_with_starts;
use crate::runtime::audit::ledger::{
    self, AuditEvent, LedgerEntry, RuleLearned, SensorProposed, read_record_ledger,
};
use crate::runtime::workspace::{self, Workspace};

const DEFAULT_HEADING: &str = "## Corrections";
const DEFAULT_SOURCE: &str = "orchestrator";
/// The framework distribution folders a learning must never write into (D45).
const DISTRIBUTION_SENSOR_FOLDERS: [&str; 5] = [
    "dist/claude/.claude/sensors",
    "dist/kiro/.kiro/sensors",
    "dist/codex/.codex/sensors",
    "dist/opencode/.aidlc/sensors",
    "dist/cursor/.cursor/sensors",
];

/// What persist did; serialised in field order as the reference prints it,
/// `{"stage_slug","rule_learned","sensor_proposed","notes"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PersistReply {
    pub stage_slug: String,
    pub rule_learned: usize,
    pub sensor_proposed: usize,
    pub notes: Vec<String>,
}

/// Persist the selections at `given` (absolute) for `slug`.
pub fn persist(
    workspace: &Workspace,
    slug: &str,
    given: &Utf8Path,
    now: SystemTime,
) -> Result<PersistReply, LearningsError> {
    let file = read_selections_file(given)?;
    if slug != file.stage_slug {
        return Err(LearningsError::Refused(format!(
            "slug mismatch: selections were surfaced for \"{}\" but persist requested \"{slug}\"",
            file.stage_slug
        )));
    }
    let project_dir = workspace.project_dir();
    let intents_dir = workspace::intents_dir(project_dir, &file.space);
    let record = file
        .intent
        .as_ref()
        .map_or_else(|| intents_dir.clone(), |intent| intents_dir.join(intent));
    let expected = expected_path(
        &workspace.version().learnings_dir(&record),
        &file.stage_slug,
    );
    if expected.canonicalize_utf8().ok().as_deref() != Some(given) {
        return Err(LearningsError::Refused(format!(
            "refusing selections-json {given}: persist reads only the file surface named for stage \"{}\" ({expected})",
            file.stage_slug
        )));
    }
    let _lock = audit_lock::acquire(project_dir).map_err(LearningsError::Lock)?;
    check_provenance(workspace, &file, &record)?;
    let entries = read_record_ledger(&record).entries;
    let sensors = check_selections(workspace, &file, &entries)?;
    // Naming the shard may mint the clone id: only once every selection is known to be written.
    let shard = workspace
        .audit_shard_under(&record)
        .map_err(|error| LearningsError::Persist(error.to_string()))?;
    let intent_key = file.intent.as_deref().unwrap_or("unscoped");
    let today = &crate::leaves::timestamp::iso_timestamp(now)[..10];
    let mut rows = Vec::new();
    let rule_learned = persist_learnings(workspace, &file, &entries, intent_key, today, &mut rows)?;
    let (sensor_proposed, bound) = persist_sensors(workspace, &file, &sensors, &mut rows)?;
    for row in rows {
        ledger::append_row(project_dir, &shard, &row, now)
            .map_err(|error| LearningsError::Persist(error.to_string()))?;
    }
    let mut notes = Vec::new();
    if !bound.is_empty() {
        notes.push(format!(
            "manifest created + bound to {}; fires from next compile",
            bound.join(", ")
        ));
    }
    Ok(PersistReply {
        stage_slug: file.stage_slug,
        rule_learned,
        sensor_proposed,
        notes,
    })
}

const REGENERATE: &str =
    "Re-run the stage's surface step and regenerate the selections file, then retry.";

/// D45 step 1: the space and the intent record the selections were surfaced in still exist.
fn check_provenance(
    workspace: &Workspace,
    file: &SelectionsFile,
    record: &Utf8Path,
) -> Result<(), LearningsError> {
    let project_dir = workspace.project_dir();
    let space_dir = workspace::space_dir(project_dir, &file.space);
    if !is_real_dir(&space_dir) {
        return Err(LearningsError::Refused(format!(
            "cannot persist selections for missing space \"{}\". {}",
            file.space, REGENERATE
        )));
    }
    let records = workspace::intent_records(project_dir, &file.space);
    match &file.intent {
        None if !records.is_empty() => Err(LearningsError::Refused(format!(
            "cannot persist an unscoped selections replay in space \"{}\": the selections file was surfaced when the space had no intent records, but intent records now exist. {}",
            file.space, REGENERATE
        ))),
        Some(intent)
            if !records.iter().any(|path| path == record)
                || !is_real_dir(record)
                || !workspace::state_file_path(record).is_file() =>
        {
            Err(LearningsError::Refused(format!(
                "cannot persist selections for missing intent record \"{intent}\" in space \"{}\". {}",
                file.space, REGENERATE
            )))
        }
        _ => Ok(()),
    }
}

fn is_real_dir(path: &Utf8Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir())
}

fn practice_heading(routed: &str) -> String {
    let trimmed = crate::leaves::js_text::js_trim(routed);
    if trimmed.is_empty() {
        DEFAULT_HEADING.to_owned()
    } else if trimmed.starts_with("## ") {
        trimmed.to_owned()
    } else {
        format!("## {}", trimmed.trim_start_matches('#').trim_start())
    }
}

/// Where the body under the line `heading` (trailing blanks allowed) starts, when `content` has
/// that line.
fn heading_line(content: &str, heading: &str) -> Option<usize> {
    let (start, line) = lines_with_starts(content).find(|(_, line)| {
        line.trim_end_matches(['\n', '\r'])
            .trim_end_matches([' ', '\t'])
            == heading
    })?;
    Some(start + line.len())
}

/// The reference's `ensureHeading` then `appendUnderHeading`: the line goes just before the next
/// `## ` heading after `heading`, or at the end.
fn append_under_heading(content: &str, heading: &str, line: &str) -> String {
    let mut content = content.to_owned();
    let body_start = heading_line(&content, heading).unwrap_or_else(|| {
        let separator = if content.is_empty() {
            ""
        } else if content.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        content = format!("{content}{separator}{heading}\n");
        content.len()
    });
    let mut insert_at = lines_with_starts(&content[body_start..])
        .find(|(_, next)| next.starts_with("## "))
        .map_or(content.len(), |(start, _)| body_start + start);
    if insert_at == content.len() && !content.ends_with('\n') {
        content.push('\n');
        insert_at = content.len();
    }
    content.insert_str(insert_at, line);
    content
}

fn persist_learnings(
    workspace: &Workspace,
    file: &SelectionsFile,
    entries: &[LedgerEntry],
    intent_key: &str,
    today: &str,
    rows: &mut Vec<ledger::AuditRow>,
) -> Result<usize, LearningsError> {
    let memory_dir = workspace::space_dir(workspace.project_dir(), &file.space).join("memory");
    let mut contents: Vec<(Utf8PathBuf, String, String)> = Vec::new();
    let mut batch = BTreeSet::new();
    let mut learned = 0;
    for selection in &file.selections {
        let Selection::Learning(LearningSelection {
            candidate_id,
            scope,
            heading,
            text,
            source,
        }) = selection
        else {
            continue;
        };
        let hash = format!("{:x}", Sha256::digest(text.as_bytes()));
        if !batch.insert(hash.clone()) {
            continue;
        }
        let (name, title) = if scope.as_deref() == Some("team") {
            ("team.md", "# Team-Level Rules\n")
        } else {
            ("project.md", "# Project-Level Rules\n")
        };
        let path = memory_dir.join(name);
        let index = if let Some(index) = contents.iter().position(|(known, _, _)| *known == path) {
            index
        } else {
            let before = match crate::leaves::fs_util::read_input_text(&path) {
                Ok(text) => text,
                Err(error) if error.is_not_found() => title.to_owned(),
                Err(error) => {
                    return Err(LearningsError::Write {
                        path,
                        source: error.into_io_error(),
                    });
                }
            };
            contents.push((path.clone(), before.clone(), before));
            contents.len() - 1
        };
        let slug = file.stage_slug.as_str();
        let marker = format!("<!-- cid:{intent_key}:{slug}:{hash} -->");
        let heading = practice_heading(heading);
        let content = &contents[index].2;
        // The markers older versions wrote count only on a line with this very text, so a
        // different learning that reused a positional candidate id is never taken for a retry.
        let short_hash_line = legacy_line_matches(
            content,
            &format!("<!-- cid:{intent_key}:{slug}:{} -->", &hash[..8]),
            text,
        );
        let candidate_line = legacy_line_matches(
            content,
            &format!("<!-- cid:{intent_key}:{slug}:{candidate_id} -->"),
            text,
        ) || legacy_line_matches(
            content,
            &format!("<!-- cid:{slug}:{candidate_id} -->"),
            text,
        );
        let has_line = content.contains(&marker) || short_hash_line || candidate_line;
        // An earlier `RULE_LEARNED` of this stage for this text, or for the legacy line found.
        let has_row = entries.iter().any(|entry| {
            matches!(&entry.event, AuditEvent::RuleLearned(row)
                if row.stage.as_deref() == Some(slug)
                    && (row.content_hash.as_deref() == Some(hash.as_str())
                        || (short_hash_line && row.content_hash.as_deref() == Some(&hash[..8]))
                        || (candidate_line
                            && row.content_hash.is_none()
                            && row.candidate_id.as_deref() == Some(candidate_id.as_str()))))
        });
        if !has_line {
            let line = format!("- {text} (learned {today}) {marker}\n");
            contents[index].2 = append_under_heading(&contents[index].2, &heading, &line);
        }
        if !has_row {
            rows.push(
                RuleLearned {
                    stage: Some(file.stage_slug.clone()),
                    candidate_id: Some(candidate_id.clone()),
                    content_hash: Some(hash),
                    destination: Some(path.to_string()),
                    heading: Some(heading),
                    source: Some(source.clone().unwrap_or_else(|| DEFAULT_SOURCE.to_owned())),
                }
                .to_row(),
            );
            learned += 1;
        }
    }
    for (path, before, after) in contents {
        if before != after || !path.exists() {
            write_inside(workspace.project_dir(), &path, &after)?;
        }
    }
    Ok(learned)
}

/// Write `text` at `path` through the file-system layer: parsed into the project and its
/// folders resolved inside it first.
fn write_inside(project_dir: &Utf8Path, path: &Utf8Path, text: &str) -> Result<(), LearningsError> {
    use crate::leaves::fs_util::contained::{self, ContainedWriteError, ProjectPath};
    let contained = ProjectPath::of_absolute(project_dir, path).map_err(|refusal| {
        LearningsError::Persist(format!("refusing to write {path}: {refusal}"))
    })?;
    contained::write_file(
        &contained,
        text.as_bytes(),
        crate::leaves::fs_util::Flush::Yes,
    )
    .map_err(|error| match error {
        ContainedWriteError::Refused(refusal) => LearningsError::Persist(refusal.to_string()),
        ContainedWriteError::Io(source) => LearningsError::Write {
            path: path.to_owned(),
            source,
        },
    })
}

/// The reference's `legacyLineMatchesText`: a line `- <text> (learned YYYY-MM-DD) <marker>`.
fn legacy_line_matches(content: &str, marker: &str, text: &str) -> bool {
    content.lines().any(|line| {
        line.strip_prefix("- ")
            .and_then(|rest| rest.strip_prefix(text))
            .and_then(|rest| rest.strip_prefix(" (learned "))
            .and_then(|rest| {
                let (date, rest) = rest.split_at_checked(10)?;
                let is_date = date.bytes().enumerate().all(|(index, byte)| match index {
                    4 | 7 => byte == b'-',
                    _ => byte.is_ascii_digit(),
                });
                is_date.then_some(rest)
            })
            .and_then(|rest| rest.strip_prefix(") "))
            .and_then(|rest| rest.strip_prefix(marker))
            .is_some_and(|rest| rest.trim().is_empty())
    })
}

/// One sensor selection, checked: what persist writes for it.
struct CheckedSensor<'a> {
    selection: &'a SensorSelection,
    manifest_path: Utf8PathBuf,
    /// The manifest's text when it is to be written (missing, and no earlier row).
    manifest_text: Option<String>,
    /// The origin stage's file and its text with the id in `sensors:`, when that changes it.
    stage_write: Option<(Utf8PathBuf, String)>,
    /// Whether an earlier `SENSOR_PROPOSED` has the same (stage, sensor id): a replay.
    has_row: bool,
}

/// Check every selection before anything is written; returns the sensors' writes.
fn check_selections<'a>(
    workspace: &Workspace,
    file: &'a SelectionsFile,
    entries: &[LedgerEntry],
) -> Result<Vec<CheckedSensor<'a>>, LearningsError> {
    let mut sensors: Vec<CheckedSensor<'a>> = Vec::new();
    // The stage files as the bindings so far leave them, so that two sensors bound to one
    // stage both end up in its `sensors:`.
    let mut stage_texts: BTreeMap<Utf8PathBuf, String> = BTreeMap::new();
    for selection in &file.selections {
        match selection {
            Selection::Learning(learning) => check_learning(learning)?,
            Selection::Sensor(sensor) => {
                let checked =
                    check_sensor(workspace, file, entries, sensor, &sensors, &mut stage_texts)?;
                sensors.push(checked);
            }
        }
    }
    Ok(sensors)
}

fn check_learning(learning: &LearningSelection) -> Result<(), LearningsError> {
    let LearningSelection {
        candidate_id,
        scope,
        heading,
        text,
        ..
    } = learning;
    match scope.as_deref() {
        Some("project" | "team") => {}
        Some(other) => {
            return Err(LearningsError::Invalid(format!(
                "refusing learning {candidate_id}: unknown scope {other:?} (a learning goes to \"project\" or \"team\"); nothing was written"
            )));
        }
        None => {
            return Err(LearningsError::Invalid(format!(
                "refusing learning {candidate_id}: it has no scope (\"project\" or \"team\"); nothing was written"
            )));
        }
    }
    for (what, value) in [("heading", heading), ("text", text)] {
        if value
            .chars()
            .any(|character| character.is_control() || matches!(character, '\u{2028}' | '\u{2029}'))
        {
            return Err(LearningsError::Invalid(format!(
                "refusing learning {candidate_id}: its {what} holds a line break or another control character, and a practice entry is one line; nothing was written"
            )));
        }
        if value.contains("<!--") || value.contains("-->") {
            return Err(LearningsError::Invalid(format!(
                "refusing learning {candidate_id}: its {what} holds `<!--` or `-->`, which would read as a learning's marker; nothing was written"
            )));
        }
    }
    Ok(())
}

fn check_sensor<'a>(
    workspace: &Workspace,
    file: &SelectionsFile,
    entries: &[LedgerEntry],
    selection: &'a SensorSelection,
    earlier: &[CheckedSensor<'a>],
    stage_texts: &mut BTreeMap<Utf8PathBuf, String>,
) -> Result<CheckedSensor<'a>, LearningsError> {
    let SensorSelection {
        candidate_id,
        origin_stage,
        fields,
        ..
    } = selection;
    let layout = &workspace.layout;
    let file_name = format!("aidlc-{}.md", fields.id);
    if crate::compile::syntax::manifest::sensor_id_from_file_name(&file_name).is_none() {
        return Err(LearningsError::Refused(format!(
            "refusing sensor id \"{}\": an id is a lower-case letter followed by lower-case letters, digits and hyphens",
            fields.id
        )));
    }
    let manifest_path = layout.sensors_dir.join(&file_name);
    if DISTRIBUTION_SENSOR_FOLDERS
        .iter()
        .any(|folder| manifest_path.as_str().contains(folder))
    {
        return Err(LearningsError::Refused(format!(
            "refusing to scaffold a sensor manifest under the framework distribution: {manifest_path}"
        )));
    }
    let shown = layout.display(&manifest_path);
    let has_row = entries.iter().any(|entry| {
        matches!(&entry.event, AuditEvent::SensorProposed(row)
            if row.stage.as_deref() == Some(file.stage_slug.as_str())
                && row.sensor_id.as_deref() == Some(fields.id.as_str()))
    });
    let planned_earlier = earlier
        .iter()
        .find(|sensor| sensor.selection.fields.id == fields.id);
    if let Some(sensor) = planned_earlier
        && sensor.selection.fields != *fields
    {
        return Err(LearningsError::Invalid(format!(
            "refusing sensor {candidate_id}: the id \"{}\" is given twice with different fields (also {}); nothing was written",
            fields.id, sensor.selection.candidate_id
        )));
    }
    let manifest_text = if manifest_path.exists() {
        // A manifest of this id that persist did not write for this selection is someone
        // else's sensor: replacing or adopting it would bind the wrong check. The bytes this
        // selection renders mean an earlier run wrote it and stopped before its row.
        let ours = crate::leaves::fs_util::read_input_text(&manifest_path)
            .is_ok_and(|text| text == super::scaffold::render_manifest(fields));
        if !has_row && !ours {
            return Err(LearningsError::Invalid(format!(
                "refusing sensor {candidate_id}: the id \"{}\" already exists ({shown}); choose another id; nothing was written",
                fields.id
            )));
        }
        None
    } else if planned_earlier.is_some() {
        None
    } else {
        Some(scaffold_manifest(fields, &shown).map_err(|refusal| match refusal {
            ScaffoldRefusal::WouldNotCompile(message) => LearningsError::Refused(format!(
                "refusing to scaffold {shown}: the manifest would not compile: {message}"
            )),
            ScaffoldRefusal::ReadsBackOtherwise { field, reader } => LearningsError::Invalid(format!(
                "refusing to scaffold {shown}: its {field} cannot be written so that {reader} reads it back as given (a line break, or a quote or backslash only an escape could carry); nothing was written"
            )),
        })?)
    };
    let stage_write = binding_write(workspace, origin_stage, &fields.id, stage_texts)?;
    Ok(CheckedSensor {
        selection,
        manifest_path,
        manifest_text,
        stage_write,
        has_row,
    })
}

/// The origin stage's file with `sensor_id` in its `sensors:` (block or flow form, every other
/// byte kept), when that changes it; an origin stage without a stage file, or whose
/// `sensors:` cannot take the id, is refused.
fn binding_write(
    workspace: &Workspace,
    slug: &str,
    sensor_id: &str,
    stage_texts: &mut BTreeMap<Utf8PathBuf, String>,
) -> Result<Option<(Utf8PathBuf, String)>, LearningsError> {
    let stages_dir = &workspace.layout.stages_dir;
    let Some(path) = find_stage_file(stages_dir, slug) else {
        return Err(LearningsError::Invalid(format!(
            "refusing sensor {sensor_id}: unknown origin stage \"{slug}\" (no {}/<phase>/{slug}.md); nothing was written",
            workspace.layout.display(stages_dir)
        )));
    };
    let text = match stage_texts.get(&path) {
        Some(text) => text.clone(),
        None => crate::leaves::fs_util::read_input_text(&path).map_err(|error| {
            LearningsError::Write {
                path: path.clone(),
                source: error.into_io_error(),
            }
        })?,
    };
    let Some(updated) = bound_stage_text(&text, sensor_id) else {
        return Err(LearningsError::Invalid(format!(
            "refusing sensor {sensor_id}: {} has no frontmatter, or its sensors: is not a list, so the id cannot be added; nothing was written",
            workspace.layout.display(&path)
        )));
    };
    stage_texts.insert(path.clone(), updated.clone());
    Ok((updated != text).then_some((path, updated)))
}

fn persist_sensors(
    workspace: &Workspace,
    file: &SelectionsFile,
    sensors: &[CheckedSensor<'_>],
    rows: &mut Vec<ledger::AuditRow>,
) -> Result<(usize, Vec<String>), LearningsError> {
    let mut proposed = 0;
    let mut bound: Vec<String> = Vec::new();
    let mut rows_written: Vec<&str> = Vec::new();
    for sensor in sensors {
        let SensorSelection {
            candidate_id,
            origin_stage,
            fields,
            source,
        } = sensor.selection;
        if let Some(text) = &sensor.manifest_text {
            write_inside(workspace.project_dir(), &sensor.manifest_path, text)?;
        }
        if let Some((path, text)) = &sensor.stage_write {
            write_inside(workspace.project_dir(), path, text)?;
        }
        if !bound.iter().any(|known| known == origin_stage) {
            bound.push(origin_stage.to_owned());
        }
        if sensor.has_row || rows_written.contains(&fields.id.as_str()) {
            continue;
        }
        rows_written.push(&fields.id);
        rows.push(
            SensorProposed {
                stage: Some(file.stage_slug.clone()),
                candidate_id: Some(candidate_id.to_owned()),
                sensor_id: Some(fields.id.clone()),
                manifest_path: Some(sensor.manifest_path.to_string()),
                matches: Some(fields.matches.clone()),
                destinations: Some(Value::from(vec![origin_stage.to_owned()]).to_string()),
                source: Some(source.clone().unwrap_or_else(|| DEFAULT_SOURCE.to_owned())),
            }
            .to_row(),
        );
        proposed += 1;
    }
    Ok((proposed, bound))
}

/// `<stages>/<phase>/<slug>.md`, the first phase folder (sorted) that has it.
fn find_stage_file(stages_dir: &Utf8Path, slug: &str) -> Option<Utf8PathBuf> {
    crate::compile::discover::list_stage_files(stages_dir)
        .into_iter()
        .map(|(_, path)| path)
        .find(|path| path.file_name() == Some(&format!("{slug}.md")))
}

/// The stage text with `sensor_id` in its `sensors:`; `None` without frontmatter or when
/// `sensors:` has a value that is not a list.
pub(super) fn bound_stage_text(text: &str, sensor_id: &str) -> Option<String> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.first()?.trim_end() != "---" {
        return None;
    }
    let close = lines
        .iter()
        .skip(1)
        .position(|line| line.trim_end() == "---")?
        + 1;
    let sensors_index = (1..close).find(|&index| lines[index].starts_with("sensors:"));
    let Some(index) = sensors_index else {
        let insert = format!("sensors:{newline}  - {sensor_id}{newline}");
        return Some([lines[..close].concat(), insert, lines[close..].concat()].concat());
    };
    let value = lines[index]["sensors:".len()..].trim();
    if let Some(inner) = value
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        let mut items: Vec<&str> = inner
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .collect();
        if items
            .iter()
            .any(|item| item.trim_matches(['"', '\'']) == sensor_id)
        {
            return Some(text.to_owned());
        }
        items.push(sensor_id);
        let replacement = format!("sensors: [{}]{newline}", items.join(", "));
        lines[index] = &replacement;
        return Some(lines.concat());
    }
    if !value.is_empty() && !value.starts_with('#') {
        return None;
    }
    let mut last_item = index;
    let mut indent = "  ".to_owned();
    for (offset, line) in lines[index + 1..close].iter().enumerate() {
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.starts_with("- ") || trimmed.trim_end() == "-" {
            if last_item == index {
                line[..line.len() - trimmed.len()].clone_into(&mut indent);
            }
            if trimmed[1..].trim().trim_matches(['"', '\'']) == sensor_id {
                return Some(text.to_owned());
            }
            last_item = index + 1 + offset;
        } else {
            break;
        }
    }
    let item = format!("{indent}- {sensor_id}{newline}");
    let mut out = lines[..=last_item].concat();
    if !out.ends_with('\n') {
        out.push_str(newline);
    }
    out.push_str(&item);
    out.push_str(&lines[last_item + 1..].concat());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_keeps_every_other_byte_in_block_and_flow_form() {
        let block = "---\nslug: s\nsensors:\n    - a\n    - b\nscopes: [x]\n---\n# S\n";
        assert_eq!(
            bound_stage_text(block, "new").unwrap(),
            "---\nslug: s\nsensors:\n    - a\n    - b\n    - new\nscopes: [x]\n---\n# S\n"
        );
        assert_eq!(bound_stage_text(block, "b").unwrap(), block);
        let flow = "---\r\nslug: s\r\nsensors: [a, b]\r\n---\r\n";
        assert_eq!(
            bound_stage_text(flow, "new").unwrap(),
            "---\r\nslug: s\r\nsensors: [a, b, new]\r\n---\r\n"
        );
        assert_eq!(
            bound_stage_text("---\nsensors: []\n---\n", "new").unwrap(),
            "---\nsensors: [new]\n---\n"
        );
        assert_eq!(
            bound_stage_text("---\nslug: s\n---\nbody\n", "new").unwrap(),
            "---\nslug: s\nsensors:\n  - new\n---\nbody\n"
        );
        assert_eq!(bound_stage_text("no frontmatter\n", "new"), None);
    }

    #[test]
    fn a_legacy_marker_counts_only_on_a_line_with_the_same_text() {
        let content = "## Corrections\n- Keep it short. (learned 2026-01-02) <!-- cid:s:c1 -->\n";
        assert!(legacy_line_matches(
            content,
            "<!-- cid:s:c1 -->",
            "Keep it short."
        ));
        assert!(!legacy_line_matches(
            content,
            "<!-- cid:s:c1 -->",
            "Something else."
        ));
        assert!(!legacy_line_matches(
            content,
            "<!-- cid:s:c2 -->",
            "Keep it short."
        ));
    }

    #[test]
    fn a_learning_goes_under_its_heading_before_the_next_one() {
        let content = "# Project-Level Rules\n\n## Corrections\n- old\n\n## Other\n- x\n";
        assert_eq!(
            append_under_heading(content, "## Corrections", "- new\n"),
            "# Project-Level Rules\n\n## Corrections\n- old\n\n- new\n## Other\n- x\n"
        );
        assert_eq!(
            append_under_heading("# Team-Level Rules\n", "## Style", "- new\n"),
            "# Team-Level Rules\n\n## Style\n- new\n"
        );
        assert_eq!(practice_heading(" "), "## Corrections");
        assert_eq!(practice_heading("Style"), "## Style");
        assert_eq!(practice_heading("### Style"), "## Style");
    }
}
