//! The source register of `claim-sources`: the stage's questions file (`## Sources`, the
//! answered `## Q<n>` sections, `## Assumption Confirmation`) and the authorities its entries
//! must resolve against (`aidlc-state.md` for `[desc]` and `[scope]`, an active memory file for
//! `[memory:<id>]`).
//!
//! Invariant: a register that cannot be read, or an entry that does not resolve, is a finding,
//! never an empty universe that lets every tag through. This file reads the register and its
//! authorities only; it never looks at a deliverable.

use std::collections::HashSet;

use camino::{Utf8Path, Utf8PathBuf};

use super::tags::{is_register_id, is_tag_id_byte, normalized_assumption, source_tags};
use super::visibility::link_references::reference_analysis;
use super::visibility::{
    h2_sections, is_list_item, leading_ascii_digits, sections_named, strip_up_to_three_spaces,
    visible_markdown_lines,
};
use crate::leaves::js_text::{
    is_js_line_terminator as is_line_terminator, is_js_whitespace, js_trim, js_trim_start,
};
use crate::runtime::sensors::text::{is_word_byte, read_text_lossy};
use crate::runtime::sensors::worker_args::resolve_worker_path;
use crate::runtime::workspace::read_state_field;

pub(super) const SOURCES_HEADING: &str = "Sources";
pub(super) const CONFIRMATION_HEADING: &str = "Assumption Confirmation";
const ACCEPT_ASSUMPTIONS_ANSWER: &str = "A. Accept assumptions";
const STATE_FILE_NAME: &str = "aidlc-state.md";
const ACTIVE_MEMORY_FILES: [&str; 3] = ["org.md", "team.md", "project.md"];

/// What the stage's questions file lets a deliverable cite.
#[derive(Default)]
pub(super) struct SourceUniverse {
    pub(super) registered: HashSet<String>,
    pub(super) answered_questions: HashSet<String>,
    pub(super) assumptions_accepted: bool,
    pub(super) accepted_assumptions: HashSet<String>,
    pub(super) findings: Vec<String>,
}

impl SourceUniverse {
    fn unresolvable(finding: String) -> Self {
        Self {
            findings: vec![finding],
            ..Self::default()
        }
    }

    /// Invariant: a register that cannot be read resolves nothing and is itself a finding.
    pub(super) fn read(
        questions_path: &Utf8Path,
        stage_folder: &Utf8Path,
        project_dir: &Utf8Path,
    ) -> Self {
        if !questions_path.exists() {
            return Self::unresolvable(format!("questions file missing: {questions_path}"));
        }
        let body = match read_text_lossy(questions_path) {
            Ok(body) => body,
            Err(error) => {
                return Self::unresolvable(format!(
                    "failed to read questions file {questions_path}: {error}"
                ));
            }
        };
        let lines = visible_markdown_lines(&body);
        let labels = reference_analysis(&body).labels;
        let authority = RecordAuthority::load(stage_folder, project_dir);
        let mut findings = authority.findings.clone();
        let registered = registered_sources(&lines, &authority, &mut findings);
        let answered_questions = answered_questions(&lines, &mut findings);
        let (assumptions_accepted, accepted_assumptions) =
            assumption_confirmation(&lines, &labels, &mut findings);
        Self {
            registered,
            answered_questions,
            assumptions_accepted,
            accepted_assumptions,
            findings,
        }
    }
}

/// The valid entries of the register's `## Sources` list.
fn registered_sources(
    lines: &[String],
    authority: &RecordAuthority,
    findings: &mut Vec<String>,
) -> HashSet<String> {
    let mut registered = HashSet::new();
    let sections = sections_named(lines, SOURCES_HEADING);
    let Some(first_section) = sections.first() else {
        findings.push(format!("questions file is missing ## {SOURCES_HEADING}"));
        return registered;
    };
    if sections.len() > 1 {
        findings.push(format!(
            "questions file has duplicate ## {SOURCES_HEADING} sections"
        ));
    }
    let mut seen = HashSet::new();
    for line in *first_section {
        let Some((id, value)) = source_entry(line) else {
            continue;
        };
        if !seen.insert(id.to_owned()) {
            findings.push(format!(
                "duplicate source id [{id}] in ## {SOURCES_HEADING}"
            ));
        }
        let valid = match id {
            "desc" => description_entry_is_valid(value, authority, findings),
            "scope" => scope_entry_is_valid(value, authority, findings),
            _ => memory_rule_matches(id, value, authority, findings),
        };
        if valid {
            registered.insert(id.to_owned());
        }
    }
    for required in ["desc", "scope"] {
        if !seen.contains(required) {
            findings.push(format!("## {SOURCES_HEADING} is missing [{required}]"));
        }
    }
    registered
}

fn description_entry_is_valid(
    value: &str,
    authority: &RecordAuthority,
    findings: &mut Vec<String>,
) -> bool {
    let description = value
        .strip_prefix("Initial description:")
        .map(js_trim_start)
        .filter(|quoted| is_quoted_literal(quoted))
        .and_then(|quoted| serde_json::from_str::<String>(quoted).ok());
    match description {
        None => findings.push(
            r#"[desc] must use Initial description: "<verbatim project description>""#.to_owned(),
        ),
        Some(description) if description != authority.project_description => findings.push(
            format!("[desc] does not exactly match Project in {STATE_FILE_NAME}"),
        ),
        Some(_) => return true,
    }
    false
}

fn scope_entry_is_valid(
    value: &str,
    authority: &RecordAuthority,
    findings: &mut Vec<String>,
) -> bool {
    match workflow_selected_scope(value) {
        None => findings.push("[scope] must use Workflow-selected scope: `<scope>`.".to_owned()),
        Some(scope) if scope != authority.scope => findings.push(format!(
            "[scope] does not exactly match Scope in {STATE_FILE_NAME}"
        )),
        Some(_) => return true,
    }
    false
}

/// ``Workflow-selected scope: `<scope>` `` with an optional final `.`.
fn workflow_selected_scope(value: &str) -> Option<&str> {
    let rest = js_trim_start(value.strip_prefix("Workflow-selected scope:")?);
    let (scope, after) = rest.strip_prefix('`')?.split_once('`')?;
    (!scope.is_empty() && (after.is_empty() || after == ".")).then_some(scope)
}

/// One `## Sources` entry: `- [<id>] <value>` with up to three spaces of indent.
fn source_entry(line: &str) -> Option<(&str, &str)> {
    let rest = after_register_marker(line, false)?.strip_prefix('[')?;
    let id_length = rest
        .bytes()
        .take_while(|&byte| is_tag_id_byte(byte))
        .count();
    let (id, after_id) = rest.split_at(id_length);
    if !is_register_id(id) {
        return None;
    }
    Some((id, source_entry_value(after_id.strip_prefix(']')?)?))
}

/// The value after an entry's tag: white space first, then the rest without its outer white
/// space. A value of white space alone is one white-space character, as the reference's lazy
/// pattern reads it.
fn source_entry_value(after_id: &str) -> Option<&str> {
    let first = after_id.chars().next()?;
    if !is_js_whitespace(first) {
        return None;
    }
    let value = js_trim(after_id);
    if value.is_empty() {
        let rest = &after_id[first.len_utf8()..];
        let (at, last) = rest
            .char_indices()
            .rfind(|&(_, character)| !is_line_terminator(character))?;
        return Some(&rest[at..at + last.len_utf8()]);
    }
    (!value.contains(is_line_terminator)).then_some(value)
}

/// Whether a `[memory:<id>]` entry names an exact rule of an active memory file. Invariant: the
/// file must stay inside the active memory root (failure mode E4).
fn memory_rule_matches(
    id: &str,
    value: &str,
    authority: &RecordAuthority,
    findings: &mut Vec<String>,
) -> bool {
    let Some((source_path, heading, quoted)) = memory_reference_parts(value) else {
        findings.push(format!(
            r#"[{id}] must use `aidlc/spaces/<space>/memory/<file>.md#<exact H2>`: "<exact rule>""#
        ));
        return false;
    };
    let Some(rule) = serde_json::from_str::<String>(quoted).ok() else {
        findings.push(format!("[{id}] has an invalid quoted rule"));
        return false;
    };
    let Some(project_root) = authority.project_root.as_deref() else {
        return false;
    };
    if authority.active_space.is_empty() {
        return false;
    }
    let Some(source_file) = memory_source_file(
        id,
        source_path,
        project_root,
        &authority.active_space,
        findings,
    ) else {
        return false;
    };
    let Some(memory_body) = read_memory_source(id, source_path, &source_file, findings) else {
        return false;
    };
    let memory_lines = visible_markdown_lines(&memory_body);
    let sections = sections_named(&memory_lines, heading);
    if sections.len() != 1 {
        findings.push(format!(
            "[{id}] memory source must contain exactly one ## {heading} heading"
        ));
        return false;
    }
    let has_rule = sections[0]
        .iter()
        .map(|line| js_trim(after_register_marker(line, true).unwrap_or(line)))
        .any(|entry| !entry.is_empty() && !entry.starts_with('>') && entry == rule);
    if !has_rule {
        findings.push(format!(
            "[{id}] quoted rule does not exactly match an entry under ## {heading}"
        ));
    }
    has_rule
}

/// The absolute memory file a reference names, when it is an active memory file inside the
/// active memory root.
fn memory_source_file(
    id: &str,
    source_path: &str,
    project_root: &Utf8Path,
    active_space: &str,
    findings: &mut Vec<String>,
) -> Option<Utf8PathBuf> {
    let expected_prefix = format!("aidlc/spaces/{active_space}/memory/");
    let stays_inside =
        !source_path.contains('\\') && !source_path.split('/').any(|segment| segment == "..");
    let Some(memory_file) = source_path
        .strip_prefix(&expected_prefix)
        .filter(|_| stays_inside)
    else {
        findings.push(format!(
            "[{id}] path must name a file under the active memory root {expected_prefix}"
        ));
        return None;
    };
    if !ACTIVE_MEMORY_FILES.contains(&memory_file) {
        findings.push(format!(
            "[{id}] must name an active memory file under {expected_prefix}: org.md, team.md, or project.md"
        ));
        return None;
    }
    let memory_root = resolve_worker_path(project_root, &expected_prefix);
    let source_file = resolve_worker_path(project_root, source_path);
    if !source_file.starts_with(&memory_root) {
        findings.push(format!("[{id}] path escapes the active memory root"));
        return None;
    }
    Some(source_file)
}

fn read_memory_source(
    id: &str,
    source_path: &str,
    source_file: &Utf8Path,
    findings: &mut Vec<String>,
) -> Option<String> {
    if !source_file.exists() {
        findings.push(format!(
            "[{id}] memory source does not exist: {source_path}"
        ));
        return None;
    }
    read_text_lossy(source_file)
        .map_err(|error| {
            findings.push(format!(
                "[{id}] failed to read memory source {source_path}: {error}"
            ));
        })
        .ok()
}

/// ``` `<path>#<H2>`: "<rule>" ```: the path, the heading and the quoted rule.
fn memory_reference_parts(value: &str) -> Option<(&str, &str, &str)> {
    let rest = value.strip_prefix('`')?;
    let (source_path, rest) = rest.split_once('#')?;
    if source_path.is_empty() || source_path.contains('`') {
        return None;
    }
    let (heading, rest) = rest.split_once('`')?;
    if heading.is_empty() || heading.contains('#') {
        return None;
    }
    let quoted = js_trim_start(rest.strip_prefix(':')?);
    is_quoted_literal(quoted).then_some((source_path, heading, quoted))
}

/// The text after a `-`, `*` or `+` marker (with `ordered`, also `<digits>.`) and the white
/// space after it, up to three spaces in; `None` when the line has no such marker.
fn after_register_marker(line: &str, ordered: bool) -> Option<&str> {
    let rest = strip_up_to_three_spaces(line);
    let after_marker = match rest.strip_prefix(['-', '*', '+']) {
        Some(after) => after,
        None if ordered => {
            let digits = leading_ascii_digits(rest);
            rest[digits..].strip_prefix('.').filter(|_| digits > 0)?
        }
        None => return None,
    };
    let after_space = js_trim_start(after_marker);
    (after_space.len() < after_marker.len()).then_some(after_space)
}

/// `"…"` with `\` escapes and no bare `"` inside (the shape a JSON string literal has).
fn is_quoted_literal(text: &str) -> bool {
    let Some(inner) = text.strip_prefix('"') else {
        return false;
    };
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        match character {
            '"' => return characters.as_str().is_empty(),
            '\\' => match characters.next() {
                Some(escaped) if !is_line_terminator(escaped) => {}
                _ => return false,
            },
            _ => {}
        }
    }
    false
}

/// The `## Q<n>` ids whose first `[Answer]:` is filled.
pub(super) fn answered_questions(lines: &[String], findings: &mut Vec<String>) -> HashSet<String> {
    let mut answered = HashSet::new();
    let mut seen = HashSet::new();
    for (heading, body) in h2_sections(lines) {
        let Some(id) = question_id(&heading) else {
            continue;
        };
        if !seen.insert(id.clone()) {
            findings.push(format!("duplicate question id {id}"));
        }
        if first_answer(body, &id, findings).is_some_and(answer_is_filled) {
            answered.insert(id);
        }
    }
    answered
}

/// `Q<digits>` at the start of a heading, ending at a non-word character.
pub(super) fn question_id(heading: &str) -> Option<String> {
    let rest = heading.strip_prefix('Q')?;
    let digits = leading_ascii_digits(rest);
    if digits == 0 || is_word_byte(rest.as_bytes().get(digits)) {
        return None;
    }
    Some(format!("Q{}", &rest[..digits]))
}

/// The first `[Answer]:` of a section's lines (`owner` names the section); a second one is a
/// finding.
fn first_answer<'lines>(
    lines: &'lines [String],
    owner: &str,
    findings: &mut Vec<String>,
) -> Option<&'lines str> {
    let answers: Vec<&str> = lines.iter().filter_map(|line| answer_of(line)).collect();
    if answers.len() > 1 {
        findings.push(format!("duplicate [Answer]: entries for {owner}"));
    }
    answers.first().copied()
}

/// The text after `[Answer]:` at the very start of a line.
fn answer_of(line: &str) -> Option<&str> {
    let answer = js_trim_start(line.strip_prefix("[Answer]:")?);
    (!answer.contains(is_line_terminator)).then_some(answer)
}

/// Not empty and not only underscores (an unfilled blank).
fn answer_is_filled(answer: &str) -> bool {
    let answer = js_trim(answer);
    !answer.is_empty() && !answer.bytes().all(|byte| byte == b'_')
}

/// Whether `## Assumption Confirmation` is answered `A. Accept assumptions`, and the retained
/// assumptions it lists.
fn assumption_confirmation(
    lines: &[String],
    labels: &HashSet<String>,
    findings: &mut Vec<String>,
) -> (bool, HashSet<String>) {
    let sections = sections_named(lines, CONFIRMATION_HEADING);
    if sections.len() > 1 {
        findings.push(format!(
            "questions file has duplicate ## {CONFIRMATION_HEADING} sections"
        ));
    }
    let confirmation = sections.first().copied().unwrap_or_default();
    let answer = first_answer(confirmation, CONFIRMATION_HEADING, findings);
    let assumptions = confirmation
        .iter()
        .filter(|line| is_list_item(line))
        .filter(|line| {
            source_tags(line, labels)
                .iter()
                .any(|tag| tag == "assumption")
        })
        .map(|line| normalized_assumption(line))
        .filter(|entry| !entry.is_empty())
        .collect();
    let accepted = answer.is_some_and(|answer| js_trim(answer) == ACCEPT_ASSUMPTIONS_ANSWER);
    (accepted, assumptions)
}

/// The authorities `[desc]`, `[scope]` and `[memory:…]` entries are checked against.
#[derive(Default)]
struct RecordAuthority {
    project_description: String,
    scope: String,
    project_root: Option<Utf8PathBuf>,
    active_space: String,
    findings: Vec<String>,
}

impl RecordAuthority {
    fn load(stage_folder: &Utf8Path, project_dir: &Utf8Path) -> Self {
        let Some(record_root) = find_record_root(stage_folder) else {
            return Self {
                findings: vec![format!(
                    "cannot verify source register: {STATE_FILE_NAME} was not found"
                )],
                ..Self::default()
            };
        };
        let mut findings = Vec::new();
        let state_body =
            read_text_lossy(&record_root.join(STATE_FILE_NAME)).unwrap_or_else(|error| {
                findings.push(format!(
                    "cannot verify source register: failed to read {STATE_FILE_NAME}: {error}"
                ));
                String::new()
            });
        // A field with an empty value is as missing as one not written.
        let project_description = read_state_field(&state_body, "Project").unwrap_or_default();
        let scope = read_state_field(&state_body, "Scope").unwrap_or_default();
        let project_root = project_root_for(&record_root, &state_body, project_dir);
        let active_space = project_root
            .as_deref()
            .map(|root| active_space_for(root, &record_root))
            .unwrap_or_default();
        if project_description.is_empty() {
            findings.push(format!(
                "{STATE_FILE_NAME} is missing Project authority for [desc]"
            ));
        }
        if scope.is_empty() {
            findings.push(format!(
                "{STATE_FILE_NAME} is missing Scope authority for [scope]"
            ));
        }
        if project_root.is_none() {
            findings
                .push("cannot resolve the project root for memory source validation".to_owned());
        }
        if active_space.is_empty() {
            findings
                .push("cannot resolve the active space for memory source validation".to_owned());
        }
        Self {
            project_description,
            scope,
            project_root,
            active_space,
            findings,
        }
    }
}

/// The nearest folder at or above the stage folder holding `aidlc-state.md`.
fn find_record_root(stage_folder: &Utf8Path) -> Option<Utf8PathBuf> {
    stage_folder
        .ancestors()
        .find(|folder| folder.join(STATE_FILE_NAME).exists())
        .map(Utf8Path::to_owned)
}

fn project_root_for(
    record_root: &Utf8Path,
    state_body: &str,
    project_dir: &Utf8Path,
) -> Option<Utf8PathBuf> {
    if record_root.file_name() == Some("aidlc-docs") {
        return record_root.parent().map(Utf8Path::to_owned);
    }
    if let Some(aidlc_folder) = record_root
        .ancestors()
        .find(|folder| folder.file_name() == Some("aidlc"))
    {
        return aidlc_folder.parent().map(Utf8Path::to_owned);
    }
    read_state_field(state_body, "Project Root")
        .filter(|configured| !configured.is_empty())
        .map(|configured| resolve_worker_path(project_dir, &configured))
}

/// The space named by `<root>/aidlc/active-space`, else the space folder holding the record.
fn active_space_for(project_root: &Utf8Path, record_root: &Utf8Path) -> String {
    let cursor_path = project_root.join("aidlc").join("active-space");
    if cursor_path.exists() {
        return read_text_lossy(&cursor_path)
            .map(|text| js_trim(&text).to_owned())
            .unwrap_or_default();
    }
    let spaces_root = project_root.join("aidlc").join("spaces");
    record_root
        .strip_prefix(&spaces_root)
        .ok()
        .and_then(|relative| relative.components().next())
        .map(|first| first.as_str().to_owned())
        .filter(|first| first != ".")
        .unwrap_or_default()
}
