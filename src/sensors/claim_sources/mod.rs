//! The native `claim-sources` worker (upstream §6.3): does every claim in the stage's
//! deliverables carry a source tag that resolves to the stage's source register? It checks the
//! shape and resolution of citations, not their truth.
//!
//! The check, in order:
//!
//! 1. The flags (`--stage`, `--output-path`, `--deliverables`) are read positionally; a missing
//!    or unknown `--output-path` is a usage error (exit 1 out of process).
//! 2. The scan set: with `--deliverables "<stem>,…"`, each existing
//!    `<folder of the fired file>/<stem>.md` (the fired file itself is not added); without, the
//!    fired file alone, unless it is scaffolding (`memory.md`, `*-questions.md`,
//!    `*-timestamp.md`). An empty scan set passes vacuously with
//!    `reason: "no deliverables on disk yet"`.
//! 3. The source register is the sibling `<stage or "intent-capture">-questions.md`. Its
//!    `## Sources` list registers `[desc]`, `[scope]` and `[memory:<id>]`; each entry must
//!    resolve (`[desc]` and `[scope]` against `aidlc-state.md`, found by walking up from the
//!    stage folder; `[memory:<id>]` against a rule of an active memory file). `## Q<n>` sections
//!    answer `[Q<n>]` when their `[Answer]:` is filled, and `## Assumption Confirmation` lists the
//!    retained assumptions. A missing or unreadable register, or a missing `aidlc-state.md`, is a
//!    finding: nothing resolves, so the check fails closed.
//! 4. Every visible paragraph, list item and table data row of a deliverable is a claim and needs
//!    a tag `[desc]`, `[scope]`, `[assumption]`, `[Q<n>]` or `[memory:<id>]`. Hidden text does
//!    not count: `## Review` sections, fenced code, HTML comments, inline code, non-visible HTML
//!    and link-reference definitions. A bracket pair is a link only when the document defines its
//!    label, so `[Q1][Q2]` is two tags (failure mode P6).
//!
//! Output keys, in order: `pass`, `findings`, `scanned_files` (absolute paths), `questions_file`
//! (absolute), `findings_count` (= findings), `reason` (vacuous passes only).
//!
//! Where this differs from the reference, on purpose:
//!
//! - A flag with no value, or followed by another `--flag`, is a usage error (failure mode F9).
//!   The reference read a trailing `--deliverables` as an empty list and took a following flag as
//!   the value; an empty `--stage` value means the default stage here.
//! - Backslashes in paths are separators, and a relative path is taken from the project folder
//!   (the reference's working folder); a deliverable listed twice is scanned once.
//! - A field of `aidlc-state.md` with an empty value is missing; the reference's pattern could
//!   read the next line as its value.
//!
//! Disagreement with `CommonMark` is meant to give false failures, never false passes.

use std::collections::{BTreeSet, HashSet};

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Map, Value};

use crate::js_text::{
    is_js_line_terminator as is_line_terminator, is_js_whitespace, js_trim, js_trim_start,
};
use crate::sensors::descriptor::{
    DELIVERABLES_FLAG, ExtraFlag, GateUnit, OUTPUT_PATH_FLAG, PathFlag, STAGE_FLAG, ShippedSensor,
};
use crate::sensors::finding;
use crate::sensors::protocol::{WorkerContext, WorkerOutcome};
use crate::sensors::text::read_text_lossy;
use crate::sensors::worker_args::{FlagGrammar, WorkerArgs, resolve_worker_path, split_csv};

const DEFAULT_STAGE: &str = "intent-capture";
const REASON_NOTHING_TO_SCAN: &str = "no deliverables on disk yet";

const ASSUMPTIONS_HEADING: &str = "Assumptions & Open Questions";
const REVIEW_HEADING: &str = "Review";
const SCOPE_HEADING: &str = "Initial Scope Signal";
const SOURCES_HEADING: &str = "Sources";
const CONFIRMATION_HEADING: &str = "Assumption Confirmation";
const ACCEPT_ASSUMPTIONS_ANSWER: &str = "A. Accept assumptions";
const STATE_FILE_NAME: &str = "aidlc-state.md";
const ACTIVE_MEMORY_FILES: [&str; 3] = ["org.md", "team.md", "project.md"];
const NON_VISIBLE_HTML_ELEMENTS: [&str; 5] = ["code", "pre", "script", "style", "template"];
const RAW_HTML_BLOCK_ELEMENTS: [&str; 4] = ["script", "pre", "style", "textarea"];
const HTML_BLOCK_ELEMENTS: [&str; 62] = [
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// How deeply a bare link destination may nest parentheses.
const DESTINATION_PAREN_DEPTH_MAX: usize = 32;
/// The longest link label, in characters.
const REFERENCE_LABEL_CHARS_MAX: usize = 999;

/// The `claim-sources` sensor: it reads the whole stage's output, so a gate fires it once per
/// output folder; its findings are sentences without a line, so the report counts them.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "claim-sources",
    check: run,
    extra_flags: &[ExtraFlag::Deliverables],
    default_path_flag: PathFlag::OutputPath,
    gate_unit: GateUnit::OutputFolder,
    findings: finding::summary_only,
};

/// Run the check on `args` (the worker argv after `sensor-claim-sources`).
pub fn run(args: &[String], context: &WorkerContext) -> WorkerOutcome {
    match check(args, &context.project_dir) {
        Ok(verdict) => WorkerOutcome::Verdict(verdict),
        Err(message) => WorkerOutcome::UsageError(message),
    }
}

fn check(args: &[String], project_dir: &Utf8Path) -> Result<Value, String> {
    let flags = WorkerArgs::parse(args, &SENSOR, FlagGrammar::Lenient)?;
    let output_path_as_given = flags.required(OUTPUT_PATH_FLAG)?;
    let fired_path = resolve_worker_path(project_dir, output_path_as_given);
    if !fired_path.exists() {
        return Err(format!("--output-path not found: {output_path_as_given}"));
    }
    let stage_folder = fired_path.parent().unwrap_or(&fired_path).to_owned();
    let stage = flags.non_empty(STAGE_FLAG).unwrap_or(DEFAULT_STAGE);
    let questions_path = resolve_worker_path(&stage_folder, &format!("{stage}-questions.md"));
    let deliverables = split_csv(flags.value(DELIVERABLES_FLAG).unwrap_or_default());
    let scanned = scan_paths(&fired_path, &deliverables);
    if scanned.is_empty() {
        return Ok(claims_verdict(
            Vec::new(),
            &scanned,
            &questions_path,
            Some(REASON_NOTHING_TO_SCAN),
        ));
    }
    let universe = SourceUniverse::read(&questions_path, &stage_folder, project_dir);
    let mut findings = universe.findings.clone();
    let mut has_assumptions = false;
    for path in &scanned {
        let inspected = inspect_deliverable(path, &universe);
        findings.extend(inspected.findings);
        has_assumptions |= inspected.has_assumptions;
    }
    if has_assumptions && !universe.assumptions_accepted {
        findings.push(format!(
            "retained assumptions require an answered ## {CONFIRMATION_HEADING} with Accept assumptions"
        ));
    }
    Ok(claims_verdict(findings, &scanned, &questions_path, None))
}

/// A file a stage writes beside its deliverables that is not itself stage output.
fn is_scaffolding(path: &Utf8Path) -> bool {
    let name = path.file_name().unwrap_or_default();
    name == "memory.md" || name.ends_with("-questions.md") || name.ends_with("-timestamp.md")
}

/// The files to inspect: the existing deliverables beside the fired file (each once), or without
/// a deliverable list the fired file unless it is scaffolding.
fn scan_paths(fired_path: &Utf8Path, deliverables: &[String]) -> Vec<Utf8PathBuf> {
    if deliverables.is_empty() {
        return if is_scaffolding(fired_path) {
            Vec::new()
        } else {
            vec![fired_path.to_owned()]
        };
    }
    let folder = fired_path.parent().unwrap_or(fired_path);
    let mut seen = BTreeSet::new();
    deliverables
        .iter()
        .map(|stem| resolve_worker_path(folder, &format!("{stem}.md")))
        .filter(|path| path.exists() && seen.insert(path.clone()))
        .collect()
}

fn claims_verdict(
    findings: Vec<String>,
    scanned: &[Utf8PathBuf],
    questions_path: &Utf8Path,
    reason: Option<&str>,
) -> Value {
    let findings_count = findings.len();
    let scanned_files: Vec<String> = scanned.iter().map(ToString::to_string).collect();
    let mut object = Map::new();
    object.insert("pass".to_owned(), Value::Bool(findings.is_empty()));
    object.insert("findings".to_owned(), Value::from(findings));
    object.insert("scanned_files".to_owned(), Value::from(scanned_files));
    object.insert(
        "questions_file".to_owned(),
        Value::from(questions_path.as_str()),
    );
    object.insert("findings_count".to_owned(), Value::from(findings_count));
    if let Some(reason) = reason {
        object.insert("reason".to_owned(), Value::from(reason));
    }
    Value::Object(object)
}

// ---------------------------------------------------------------------------------------------
// The source register (the stage's questions file) and its authorities

/// What the stage's questions file lets a deliverable cite.
struct SourceUniverse {
    registered: HashSet<String>,
    answered_questions: HashSet<String>,
    assumptions_accepted: bool,
    accepted_assumptions: HashSet<String>,
    findings: Vec<String>,
}

impl SourceUniverse {
    fn unresolvable(finding: String) -> Self {
        Self {
            registered: HashSet::new(),
            answered_questions: HashSet::new(),
            assumptions_accepted: false,
            accepted_assumptions: HashSet::new(),
            findings: vec![finding],
        }
    }

    /// Invariant: a register that cannot be read resolves nothing and is itself a finding.
    fn read(questions_path: &Utf8Path, stage_folder: &Utf8Path, project_dir: &Utf8Path) -> Self {
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
        let confirmation = assumption_confirmation(&lines, &labels, &mut findings);
        Self {
            registered,
            answered_questions,
            assumptions_accepted: confirmation.accepted,
            accepted_assumptions: confirmation.assumptions,
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
    for line in first_section {
        let Some((id, value)) = source_entry(line) else {
            continue;
        };
        if !seen.insert(id.to_owned()) {
            findings.push(format!(
                "duplicate source id [{id}] in ## {SOURCES_HEADING}"
            ));
        }
        if source_entry_is_valid(id, value, authority, findings) {
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

fn source_entry_is_valid(
    id: &str,
    value: &str,
    authority: &RecordAuthority,
    findings: &mut Vec<String>,
) -> bool {
    match id {
        "desc" => description_entry_is_valid(value, authority, findings),
        "scope" => scope_entry_is_valid(value, authority, findings),
        _ => memory_rule_matches(id, value, authority, findings),
    }
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
        .and_then(parse_quoted_value);
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
    let after_marker = strip_up_to_three_spaces(line).strip_prefix(['-', '*', '+'])?;
    let after_space = js_trim_start(after_marker);
    if after_space.len() == after_marker.len() {
        return None;
    }
    let rest = after_space.strip_prefix('[')?;
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
    let Some(rule) = parse_quoted_value(quoted) else {
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
        .map(|line| js_trim(without_memory_list_marker(line)))
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
    let Some(memory_file) = source_path.strip_prefix(&expected_prefix) else {
        findings.push(memory_root_finding(id, &expected_prefix));
        return None;
    };
    if source_path.contains('\\') || source_path.split('/').any(|segment| segment == "..") {
        findings.push(memory_root_finding(id, &expected_prefix));
        return None;
    }
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

fn memory_root_finding(id: &str, expected_prefix: &str) -> String {
    format!("[{id}] path must name a file under the active memory root {expected_prefix}")
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

/// A memory rule line without its list marker (`-`, `*`, `+` or `<digits>.` and white space).
fn without_memory_list_marker(line: &str) -> &str {
    let rest = strip_up_to_three_spaces(line);
    let after_marker = if let Some(after) = rest.strip_prefix(['-', '*', '+']) {
        after
    } else {
        let digits = leading_ascii_digits(rest);
        match rest[digits..].strip_prefix('.') {
            Some(after) if digits > 0 => after,
            _ => return line,
        }
    };
    let after_space = js_trim_start(after_marker);
    if after_space.len() == after_marker.len() {
        line
    } else {
        after_space
    }
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

fn parse_quoted_value(quoted: &str) -> Option<String> {
    serde_json::from_str::<String>(quoted).ok()
}

/// The `## Q<n>` ids whose first `[Answer]:` is filled.
fn answered_questions(lines: &[String], findings: &mut Vec<String>) -> HashSet<String> {
    let mut answered = HashSet::new();
    let mut seen = HashSet::new();
    let mut index = 0;
    while index < lines.len() {
        let Some(id) = h2_heading(&lines[index]).and_then(|heading| question_id(&heading)) else {
            index += 1;
            continue;
        };
        if !seen.insert(id.clone()) {
            findings.push(format!("duplicate question id {id}"));
        }
        let end = (index + 1..lines.len())
            .find(|&line| h2_heading(&lines[line]).is_some())
            .unwrap_or(lines.len());
        let answers: Vec<&str> = lines[index + 1..end]
            .iter()
            .filter_map(|line| answer_of(line))
            .collect();
        if answers.len() > 1 {
            findings.push(format!("duplicate [Answer]: entries for {id}"));
        }
        if answers
            .first()
            .is_some_and(|answer| answer_is_filled(answer))
        {
            answered.insert(id);
        }
        index = end;
    }
    answered
}

/// `Q<digits>` at the start of a heading, ending at a non-word character.
fn question_id(heading: &str) -> Option<String> {
    let rest = heading.strip_prefix('Q')?;
    let digits = leading_ascii_digits(rest);
    if digits == 0 || is_word_byte(rest.as_bytes().get(digits)) {
        return None;
    }
    Some(format!("Q{}", &rest[..digits]))
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

struct AssumptionConfirmation {
    accepted: bool,
    assumptions: HashSet<String>,
}

fn assumption_confirmation(
    lines: &[String],
    labels: &HashSet<String>,
    findings: &mut Vec<String>,
) -> AssumptionConfirmation {
    let sections = sections_named(lines, CONFIRMATION_HEADING);
    if sections.len() > 1 {
        findings.push(format!(
            "questions file has duplicate ## {CONFIRMATION_HEADING} sections"
        ));
    }
    let confirmation = sections.into_iter().next().unwrap_or_default();
    let answers: Vec<&str> = confirmation
        .iter()
        .filter_map(|line| answer_of(line))
        .collect();
    if answers.len() > 1 {
        findings.push(format!(
            "duplicate [Answer]: entries for {CONFIRMATION_HEADING}"
        ));
    }
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
    AssumptionConfirmation {
        accepted: answers
            .first()
            .is_some_and(|answer| js_trim(answer) == ACCEPT_ASSUMPTIONS_ANSWER),
        assumptions,
    }
}

/// The authorities `[desc]`, `[scope]` and `[memory:…]` entries are checked against.
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
                project_description: String::new(),
                scope: String::new(),
                project_root: None,
                active_space: String::new(),
                findings: vec![format!(
                    "cannot verify source register: {STATE_FILE_NAME} was not found"
                )],
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
        let project_description = state_field(&state_body, "Project");
        let scope = state_field(&state_body, "Scope");
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

/// The value of the first `- **<label>**: <value>` line, trimmed; empty when missing.
fn state_field(body: &str, label: &str) -> String {
    crate::workspace::read_state_field(body, label).unwrap_or_default()
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
    let configured = state_field(state_body, "Project Root");
    (!configured.is_empty()).then(|| resolve_worker_path(project_dir, &configured))
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

// ---------------------------------------------------------------------------------------------
// Deliverables: claim blocks and their tags

struct InspectedDeliverable {
    findings: Vec<String>,
    has_assumptions: bool,
}

/// One claim: a paragraph, list item, HTML block or table data row, and its section.
struct ClaimBlock {
    section: String,
    text: String,
}

impl ClaimBlock {
    fn in_assumptions(&self) -> bool {
        self.section == ASSUMPTIONS_HEADING
    }
}

fn inspect_deliverable(path: &Utf8Path, universe: &SourceUniverse) -> InspectedDeliverable {
    let file_name = path.file_name().unwrap_or(path.as_str());
    let body = match read_text_lossy(path) {
        Ok(body) => body,
        Err(error) => {
            return InspectedDeliverable {
                findings: vec![format!("{file_name}: failed to read: {error}")],
                has_assumptions: false,
            };
        }
    };
    let references = reference_analysis(&body);
    let parsed = claim_blocks(&body, &references.definition_lines);
    let mut findings = Vec::new();
    if !parsed.has_assumptions_section {
        findings.push(format!("{file_name}: missing ## {ASSUMPTIONS_HEADING}"));
    }
    let mut has_assumptions = false;
    for block in &parsed.blocks {
        let location = if block.section.is_empty() {
            file_name.to_owned()
        } else {
            format!("{file_name} ## {}", block.section)
        };
        let tags = source_tags(&block.text, &references.labels);
        if block.in_assumptions() {
            if is_none_block(&block.text) {
                continue;
            }
            has_assumptions = true;
            check_assumption_block(block, &tags, &location, universe, &mut findings);
        } else if tags.is_empty() {
            findings.push(format!("{location}: claim block has no source tag"));
            continue;
        } else if tags.iter().any(|tag| tag == "assumption") {
            findings.push(format!(
                "{location}: [assumption] is outside ## {ASSUMPTIONS_HEADING}"
            ));
        }
        for tag in &tags {
            check_tag_resolves(block, tag, &location, universe, &mut findings);
        }
    }
    InspectedDeliverable {
        findings,
        has_assumptions,
    }
}

fn check_assumption_block(
    block: &ClaimBlock,
    tags: &[String],
    location: &str,
    universe: &SourceUniverse,
    findings: &mut Vec<String>,
) {
    if !tags.iter().any(|tag| tag == "assumption") {
        findings.push(format!(
            "{location}: assumption/open question lacks [assumption]"
        ));
    } else if universe.assumptions_accepted
        && !universe
            .accepted_assumptions
            .contains(&normalized_assumption(&block.text))
    {
        findings.push(format!(
            "{location}: retained assumption is not listed in ## {CONFIRMATION_HEADING}"
        ));
    }
}

fn check_tag_resolves(
    block: &ClaimBlock,
    tag: &str,
    location: &str,
    universe: &SourceUniverse,
    findings: &mut Vec<String>,
) {
    if tag == "assumption" {
        return;
    }
    if tag.starts_with('Q') {
        if !universe.answered_questions.contains(tag) {
            findings.push(format!("{location}: [{tag}] has no filled answer"));
        }
        return;
    }
    if !universe.registered.contains(tag) {
        findings.push(format!(
            "{location}: [{tag}] is not registered in ## {SOURCES_HEADING}"
        ));
    }
    if tag == "scope" {
        if block.section != SCOPE_HEADING {
            findings.push(format!(
                "{location}: [scope] is valid only in ## {SCOPE_HEADING}"
            ));
        }
        if !block
            .text
            .to_ascii_lowercase()
            .contains("workflow-selected")
        {
            findings.push(format!(
                "{location}: [scope] claim is not labeled workflow-selected"
            ));
        }
    }
}

/// `None` or `None.`, any case: an empty assumptions section.
fn is_none_block(text: &str) -> bool {
    let text = js_trim(text);
    let text = text.strip_suffix('.').unwrap_or(text);
    text.eq_ignore_ascii_case("none")
}

struct ClaimBlocks {
    blocks: Vec<ClaimBlock>,
    has_assumptions_section: bool,
}

fn claim_blocks(body: &str, definition_lines: &BTreeSet<usize>) -> ClaimBlocks {
    let lines: Vec<String> = visible_markdown_lines(body)
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            if definition_lines.contains(&index) {
                String::new()
            } else {
                line
            }
        })
        .collect();
    let table_headers: BTreeSet<usize> = (1..lines.len())
        .filter(|&index| is_table_separator(&lines[index]) && is_table_line(&lines[index - 1]))
        .map(|index| index - 1)
        .collect();
    let mut collector = BlockCollector::default();
    let mut skip_review = false;
    for (index, line) in lines.iter().enumerate() {
        if let Some(heading) = h2_heading(line) {
            collector.flush();
            skip_review = heading == REVIEW_HEADING;
            collector.has_assumptions_section |= heading == ASSUMPTIONS_HEADING;
            collector.section = heading;
            continue;
        }
        if is_atx_heading_start(strip_up_to_three_spaces(line)) {
            collector.flush();
            continue;
        }
        if skip_review {
            continue;
        }
        if js_trim(line).is_empty() || is_thematic_break(line) {
            collector.flush();
        } else if is_html_block_start(line) || is_list_item(line) {
            collector.flush();
            collector.pending.push(line);
        } else if is_table_line(line) {
            collector.flush();
            if !table_headers.contains(&index) && !is_table_separator(line) {
                collector.push_block(js_trim(line).to_owned());
            }
        } else {
            collector.pending.push(line);
        }
    }
    collector.flush();
    ClaimBlocks {
        blocks: collector.blocks,
        has_assumptions_section: collector.has_assumptions_section,
    }
}

#[derive(Default)]
struct BlockCollector<'lines> {
    blocks: Vec<ClaimBlock>,
    section: String,
    pending: Vec<&'lines str>,
    has_assumptions_section: bool,
}

impl BlockCollector<'_> {
    fn flush(&mut self) {
        let text = self.pending.join("\n");
        let text = text.trim_end_matches(is_js_whitespace);
        if !text.is_empty() {
            self.push_block(text.to_owned());
        }
        self.pending.clear();
    }

    fn push_block(&mut self, text: String) {
        self.blocks.push(ClaimBlock {
            section: self.section.clone(),
            text,
        });
    }
}

/// `|…|` after trimming.
fn is_table_line(line: &str) -> bool {
    let trimmed = js_trim(line);
    trimmed.starts_with('|') && trimmed.ends_with('|')
}

/// A delimiter row of at least two cells, each `:?-{3,}:?`.
fn is_table_separator(line: &str) -> bool {
    let trimmed = js_trim(line);
    let trimmed = trimmed.strip_prefix('|').unwrap_or(trimmed);
    let trimmed = trimmed.strip_suffix('|').unwrap_or(trimmed);
    let cells: Vec<&str> = trimmed.split('|').collect();
    cells.len() >= 2 && cells.iter().all(|cell| is_delimiter_cell(js_trim(cell)))
}

fn is_delimiter_cell(cell: &str) -> bool {
    let cell = cell.strip_prefix(':').unwrap_or(cell);
    let cell = cell.strip_suffix(':').unwrap_or(cell);
    cell.len() >= 3 && cell.bytes().all(|byte| byte == b'-')
}

fn is_list_item(line: &str) -> bool {
    after_list_marker(line).is_some()
}

/// The text after a list marker (`-`, `*`, `+`, `<1-9 digits>.` or `)`) and its white space,
/// after any indent.
fn after_list_marker(line: &str) -> Option<&str> {
    let rest = js_trim_start(line);
    let after_marker = if let Some(after) = rest.strip_prefix(['-', '*', '+']) {
        after
    } else {
        let digits = leading_ascii_digits(rest);
        if !(1..=9).contains(&digits) {
            return None;
        }
        rest[digits..].strip_prefix(['.', ')'])?
    };
    let after_space = js_trim_start(after_marker);
    (after_space.len() < after_marker.len()).then_some(after_space)
}

/// An assumption as compared with the confirmed list: no list marker, no tags, white space
/// collapsed, lower case.
fn normalized_assumption(text: &str) -> String {
    let text = after_list_marker(text).unwrap_or(text);
    collapsed_whitespace(js_trim(&without_source_tags(text))).to_lowercase()
}

// ---------------------------------------------------------------------------------------------
// Source tags and what hides them

/// The tags a claim visibly carries, in order (duplicates kept).
fn source_tags(text: &str, labels: &HashSet<String>) -> Vec<String> {
    let visible = visible_markdown_link_text(
        &without_reference_definitions(&visible_html_text(&without_inline_code(text))),
        labels,
    );
    source_tag_spans(&visible)
        .map(|(start, end)| visible[start + 1..end - 1].to_owned())
        .collect()
}

fn without_source_tags(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut copied_from = 0;
    for (start, end) in source_tag_spans(text) {
        kept.push_str(&text[copied_from..start]);
        copied_from = end;
    }
    kept.push_str(&text[copied_from..]);
    kept
}

/// The byte spans of `[<tag id>]`, left to right, not overlapping.
fn source_tag_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let start = from + text.get(from..)?.find('[')?;
            let rest = &text[start + 1..];
            let id_length = rest
                .bytes()
                .take_while(|&byte| is_tag_id_byte(byte))
                .count();
            if rest[id_length..].starts_with(']') && is_source_tag_id(&rest[..id_length]) {
                let end = start + id_length + 2;
                from = end;
                return Some((start, end));
            }
            from = start + 1;
        }
    })
}

fn is_tag_id_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b':' | b'.' | b'_' | b'-')
}

fn is_source_tag_id(id: &str) -> bool {
    id == "assumption"
        || is_register_id(id)
        || id
            .strip_prefix('Q')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

fn is_register_id(id: &str) -> bool {
    id == "desc" || id == "scope" || is_memory_id(id)
}

fn is_memory_id(id: &str) -> bool {
    let Some(name) = id.strip_prefix("memory:") else {
        return false;
    };
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|byte| byte.is_ascii_alphanumeric())
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}

/// `text` without inline code: a backtick run, lazily up to the next run of as many backticks.
fn without_inline_code(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut kept = String::with_capacity(text.len());
    let mut copied_from = 0;
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] != b'`' {
            index += 1;
            continue;
        }
        match inline_code_end(bytes, index) {
            Some(end) => {
                kept.push_str(&text[copied_from..index]);
                index = end;
                copied_from = end;
            }
            None => index += 1,
        }
    }
    kept.push_str(&text[copied_from..]);
    kept
}

/// Where a span opened at `start` ends, trying the longest opening group first.
fn inline_code_end(bytes: &[u8], start: usize) -> Option<usize> {
    let run = backtick_run(bytes, start);
    (1..=run).rev().find_map(|group| {
        first_backtick_run_of(bytes, start + group, group).map(|closing| closing + group)
    })
}

fn backtick_run(bytes: &[u8], from: usize) -> usize {
    bytes.get(from..).map_or(0, |rest| {
        rest.iter().take_while(|&&byte| byte == b'`').count()
    })
}

/// The first position at or after `from` where `count` backticks follow.
fn first_backtick_run_of(bytes: &[u8], from: usize, count: usize) -> Option<usize> {
    let mut index = from;
    while index < bytes.len() {
        let run = backtick_run(bytes, index);
        if run >= count {
            return Some(index);
        }
        index += run.max(1);
    }
    None
}

/// Whether the byte at `index` follows an odd number of backslashes.
fn is_escaped(text: &str, index: usize) -> bool {
    text.as_bytes()[..index]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b'\\')
        .count()
        % 2
        == 1
}

/// The index of the delimiter closing the one at `start`, skipping escaped bytes and, inside a
/// link destination, quoted titles.
fn matching_delimiter(text: &str, start: usize, opening: u8, closing: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0_i64;
    let mut quote: Option<u8> = None;
    for (index, &byte) in bytes.iter().enumerate().skip(start) {
        if is_escaped(text, index) {
            continue;
        }
        if let Some(open_quote) = quote {
            if byte == open_quote {
                quote = None;
            }
            continue;
        }
        if opening == b'('
            && depth == 1
            && matches!(byte, b'"' | b'\'')
            && text[..index]
                .chars()
                .next_back()
                .is_some_and(is_js_whitespace)
        {
            quote = Some(byte);
            continue;
        }
        if byte == opening {
            depth += 1;
        } else if byte == closing {
            depth -= 1;
            if depth == 0 {
                return Some(index);
            }
        }
    }
    None
}

/// The visible text of links: an inline link or a reference link whose label is defined shows
/// its text without brackets; an image shows nothing; any other bracket pair stays as written.
fn visible_markdown_link_text(text: &str, labels: &HashSet<String>) -> String {
    let bytes = text.as_bytes();
    let mut visible = String::with_capacity(text.len());
    let mut index = 0;
    while index < bytes.len() {
        let image = bytes[index] == b'!' && bytes.get(index + 1) == Some(&b'[');
        let link = bytes[index] == b'[';
        if !(image || link) || is_escaped(text, index) {
            let character = text[index..].chars().next().unwrap_or_default();
            visible.push(character);
            index += character.len_utf8().max(1);
            continue;
        }
        let label_start = if image { index + 1 } else { index };
        let Some((label_end, syntax_end)) = link_syntax_end(text, label_start, labels) else {
            visible.push(char::from(bytes[index]));
            index += 1;
            continue;
        };
        if !image {
            visible.push_str(&text[label_start + 1..label_end]);
        }
        index = syntax_end + 1;
    }
    visible
}

/// Where a link whose label opens at `label_start` closes its label and its whole syntax.
fn link_syntax_end(
    text: &str,
    label_start: usize,
    labels: &HashSet<String>,
) -> Option<(usize, usize)> {
    let label_end = matching_delimiter(text, label_start, b'[', b']')?;
    let label = &text[label_start + 1..label_end];
    let syntax_end = match text.as_bytes().get(label_end + 1) {
        Some(b'(') => matching_delimiter(text, label_end + 1, b'(', b')')?,
        Some(b'[') => {
            let reference_end = matching_delimiter(text, label_end + 1, b'[', b']')?;
            let reference = &text[label_end + 2..reference_end];
            let named = if js_trim(reference).is_empty() {
                label
            } else {
                reference
            };
            labels
                .contains(&normalized_reference_label(named))
                .then_some(reference_end)?
        }
        _ => labels
            .contains(&normalized_reference_label(label))
            .then_some(label_end)?,
    };
    Some((label_end, syntax_end))
}

/// A link label as `CommonMark` matches it: trimmed, white space collapsed, case folded.
fn normalized_reference_label(label: &str) -> String {
    collapsed_whitespace(js_trim(label))
        .to_lowercase()
        .to_uppercase()
}

fn collapsed_whitespace(text: &str) -> String {
    let mut collapsed = String::with_capacity(text.len());
    let mut in_whitespace = false;
    for character in text.chars() {
        if is_js_whitespace(character) {
            if !in_whitespace {
                collapsed.push(' ');
            }
            in_whitespace = true;
        } else {
            collapsed.push(character);
            in_whitespace = false;
        }
    }
    collapsed
}

// ---------------------------------------------------------------------------------------------
// HTML visibility

struct HtmlTag {
    end: usize,
    name: String,
    closing: bool,
    self_closing: bool,
    hides_content: bool,
}

/// `text` without HTML tags, and without the content of elements that are not shown.
fn visible_html_text(text: &str) -> String {
    let mut visible = String::with_capacity(text.len());
    let mut hidden_element = String::new();
    let mut hidden_depth = 0_usize;
    let mut index = 0;
    while index < text.len() {
        if let Some(tag) = html_tag_at(text, index) {
            if !hidden_element.is_empty() && tag.name == hidden_element {
                if tag.closing {
                    hidden_depth = hidden_depth.saturating_sub(1);
                    if hidden_depth == 0 {
                        hidden_element.clear();
                    }
                } else if !tag.self_closing {
                    hidden_depth += 1;
                }
            } else if hidden_element.is_empty() && tag.hides_content && !tag.self_closing {
                hidden_element = tag.name;
                hidden_depth = 1;
            }
            index = tag.end + 1;
            continue;
        }
        let character = text[index..].chars().next().unwrap_or_default();
        if hidden_element.is_empty() {
            visible.push(character);
        }
        index += character.len_utf8().max(1);
    }
    visible
}

fn html_tag_at(text: &str, start: usize) -> Option<HtmlTag> {
    if text.as_bytes().get(start) != Some(&b'<') || is_escaped(text, start) {
        return None;
    }
    let tail = &text[start..];
    let named = named_tag_start(tail);
    if named.is_none() && !is_autolink_start(tail) {
        return None;
    }
    let end = html_tag_end(text, start)?;
    let Some((closing, name)) = named else {
        return Some(HtmlTag {
            end,
            name: String::new(),
            closing: false,
            self_closing: true,
            hides_content: false,
        });
    };
    let raw = &text[start..=end];
    let name = name.to_ascii_lowercase();
    let hides_content = !closing
        && (NON_VISIBLE_HTML_ELEMENTS.contains(&name.as_str()) || has_hiding_attribute(raw));
    Some(HtmlTag {
        end,
        name,
        closing,
        self_closing: raw[..raw.len() - 1]
            .trim_end_matches(is_js_whitespace)
            .ends_with('/'),
        hides_content,
    })
}

/// `<name` or `</name`: whether it closes, and the name (letters, digits, `-`; ending at a word
/// boundary).
fn named_tag_start(tail: &str) -> Option<(bool, &str)> {
    let rest = tail.strip_prefix('<')?;
    let (closing, rest) = match rest.strip_prefix('/') {
        Some(after) => (true, after),
        None => (false, rest),
    };
    let bytes = rest.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let greedy = bytes
        .iter()
        .take_while(|&&byte| byte.is_ascii_alphanumeric() || byte == b'-')
        .count();
    (1..=greedy)
        .rev()
        .find(|&length| is_word_byte(bytes.get(length - 1)) != is_word_byte(bytes.get(length)))
        .map(|length| (closing, &rest[..length]))
}

/// `<http://`, `<https://`, `<mailto:` (any case) or `<…@` without `<`, `>` or white space.
fn is_autolink_start(tail: &str) -> bool {
    let lower = tail.get(..9).unwrap_or(tail).to_ascii_lowercase();
    if ["<http://", "<https://", "<mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
    {
        return true;
    }
    tail[1..]
        .chars()
        .take_while(|&character| {
            character != '<' && character != '>' && !is_js_whitespace(character)
        })
        .skip(1)
        .any(|character| character == '@')
}

/// The `>` closing the tag at `start`, outside quoted attribute values.
fn html_tag_end(text: &str, start: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (index, &byte) in text.as_bytes().iter().enumerate().skip(start + 1) {
        if let Some(open_quote) = quote {
            if byte == open_quote && !is_escaped(text, index) {
                quote = None;
            }
            continue;
        }
        match byte {
            b'"' | b'\'' => quote = Some(byte),
            b'>' => return Some(index),
            _ => {}
        }
    }
    None
}

/// `hidden`, `aria-hidden="true"`, or a `style` with `display: none` or `visibility: hidden`.
fn has_hiding_attribute(raw: &str) -> bool {
    let lower = raw.to_ascii_lowercase();
    has_hidden_attribute(&lower) || has_aria_hidden(&lower) || has_hiding_style(&lower)
}

fn follows_whitespace(text: &str, index: usize) -> bool {
    text[..index]
        .chars()
        .next_back()
        .is_some_and(is_js_whitespace)
}

fn ends_attribute(rest: &str) -> bool {
    rest.chars().next().is_some_and(is_js_whitespace)
        || rest.starts_with('>')
        || rest.starts_with("/>")
}

fn has_hidden_attribute(lower: &str) -> bool {
    lower.match_indices("hidden").any(|(index, word)| {
        let rest = &lower[index + word.len()..];
        (index == 0 || follows_whitespace(lower, index))
            && (ends_attribute(rest) || rest.starts_with('='))
    })
}

fn has_aria_hidden(lower: &str) -> bool {
    lower.match_indices("aria-hidden").any(|(index, word)| {
        follows_whitespace(lower, index)
            && attribute_value(&lower[index + word.len()..]).is_some_and(|value| {
                ["\"true\"", "'true'", "true"]
                    .iter()
                    .find(|form| value.starts_with(**form))
                    .is_some_and(|form| ends_attribute(&value[form.len()..]))
            })
    })
}

fn has_hiding_style(lower: &str) -> bool {
    lower.match_indices("style").any(|(index, word)| {
        follows_whitespace(lower, index)
            && attribute_value(&lower[index + word.len()..])
                .and_then(quoted_attribute_value)
                .is_some_and(|value| {
                    declares(value, "display", "none") || declares(value, "visibility", "hidden")
                })
    })
}

/// The text after `\s*=\s*`.
fn attribute_value(after_name: &str) -> Option<&str> {
    Some(js_trim_start(js_trim_start(after_name).strip_prefix('=')?))
}

fn quoted_attribute_value(value: &str) -> Option<&str> {
    let quote = value
        .chars()
        .next()
        .filter(|&quote| quote == '"' || quote == '\'')?;
    let inner = &value[1..];
    inner.find(quote).map(|end| &inner[..end])
}

/// Whether `css` contains `<property>\s*:\s*<value>`.
fn declares(css: &str, property: &str, value: &str) -> bool {
    css.match_indices(property).any(|(index, _)| {
        js_trim_start(&css[index + property.len()..])
            .strip_prefix(':')
            .is_some_and(|rest| js_trim_start(rest).starts_with(value))
    })
}

// ---------------------------------------------------------------------------------------------
// Visible Markdown lines, headings and blocks

/// The document's lines with fenced code and HTML comments blanked (a fence line and every
/// line inside it becomes empty), so line numbers are kept.
fn visible_markdown_lines(body: &str) -> Vec<String> {
    let body = body
        .strip_prefix('\u{feff}')
        .unwrap_or(body)
        .replace("\r\n", "\n");
    let mut visible = Vec::new();
    let mut in_comment = false;
    let mut fence: Option<Fence> = None;
    for raw_line in body.split('\n') {
        if let Some(open) = fence {
            if closes_fence(raw_line, open) {
                fence = None;
            }
            visible.push(String::new());
            continue;
        }
        let line = without_html_comments(raw_line, &mut in_comment);
        if let Some(opening) = opening_fence(&line) {
            fence = Some(opening);
            visible.push(String::new());
            continue;
        }
        visible.push(line);
    }
    visible
}

#[derive(Debug, Clone, Copy)]
struct Fence {
    marker: u8,
    length: usize,
}

fn opening_fence(line: &str) -> Option<Fence> {
    let rest = strip_up_to_three_spaces(line);
    let marker = *rest.as_bytes().first()?;
    if marker != b'`' && marker != b'~' {
        return None;
    }
    let length = rest.bytes().take_while(|&byte| byte == marker).count();
    (length >= 3).then_some(Fence { marker, length })
}

fn closes_fence(line: &str, open: Fence) -> bool {
    let rest = strip_up_to_three_spaces(line);
    let run = rest
        .bytes()
        .take_while(|&byte| byte == b'`' || byte == b'~')
        .count();
    run >= open.length
        && rest.as_bytes()[0] == open.marker
        && rest[run..]
            .bytes()
            .all(|byte| byte == b' ' || byte == b'\t')
}

fn without_html_comments(raw_line: &str, in_comment: &mut bool) -> String {
    let mut line = String::new();
    let mut rest = raw_line;
    loop {
        if *in_comment {
            let Some(end) = rest.find("-->") else {
                return line;
            };
            *in_comment = false;
            rest = &rest[end + 3..];
            continue;
        }
        let Some(start) = rest.find("<!--") else {
            line.push_str(rest);
            return line;
        };
        line.push_str(&rest[..start]);
        *in_comment = true;
        rest = &rest[start + 4..];
    }
}

/// The text of a `## ` heading, without a closing run of `#` and trimmed.
fn h2_heading(line: &str) -> Option<String> {
    let rest = strip_up_to_three_spaces(line).strip_prefix("##")?;
    let text = rest.trim_start_matches([' ', '\t']);
    if text.len() == rest.len() && !rest.is_empty() {
        return None;
    }
    if text.contains(is_line_terminator) {
        return None;
    }
    Some(js_trim(without_closing_hashes(text)).to_owned())
}

fn without_closing_hashes(text: &str) -> &str {
    let trimmed = text.trim_end_matches([' ', '\t']);
    let before_hashes = trimmed.trim_end_matches('#');
    let before_spaces = before_hashes.trim_end_matches([' ', '\t']);
    if before_hashes.len() == trimmed.len() || before_spaces.len() == before_hashes.len() {
        text
    } else {
        before_spaces
    }
}

/// The bodies of every `## <heading>` section, in order.
fn sections_named<'lines>(lines: &'lines [String], heading: &str) -> Vec<Vec<&'lines str>> {
    let mut sections = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in lines {
        if let Some(found) = h2_heading(line) {
            sections.extend(current.take());
            current = (found == heading).then(Vec::new);
            continue;
        }
        if let Some(section) = current.as_mut() {
            section.push(line.as_str());
        }
    }
    sections.extend(current);
    sections
}

/// `#` to `######` followed by a space, a tab or the end.
fn is_atx_heading_start(rest: &str) -> bool {
    let hashes = rest.bytes().take_while(|&byte| byte == b'#').count();
    (1..=6).contains(&hashes) && matches!(rest.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
}

fn is_thematic_break(line: &str) -> bool {
    let Some((index, column)) = first_content(line) else {
        return false;
    };
    let rest = &line[index..];
    let marker = rest.as_bytes()[0];
    column <= 3
        && matches!(marker, b'*' | b'-' | b'_')
        && rest
            .bytes()
            .all(|byte| byte == marker || byte == b' ' || byte == b'\t')
        && rest.bytes().filter(|&byte| byte == marker).count() >= 3
}

fn is_html_block_start(line: &str) -> bool {
    first_content(line)
        .is_some_and(|(index, column)| column <= 3 && starts_html_block(&line[index..]))
}

/// Whether `rest` opens an HTML block (`CommonMark` kinds 1 to 6, any case).
fn starts_html_block(rest: &str) -> bool {
    let lower = rest.to_ascii_lowercase();
    let Some(after) = lower.strip_prefix('<') else {
        return false;
    };
    if after.starts_with("!--") || after.starts_with('?') || after.starts_with("![cdata[") {
        return true;
    }
    if after.strip_prefix('!').is_some_and(|bang| {
        bang.bytes()
            .next()
            .is_some_and(|byte| byte.is_ascii_alphabetic())
    }) {
        return true;
    }
    let raw_name_length = after.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if RAW_HTML_BLOCK_ELEMENTS.contains(&&after[..raw_name_length])
        && matches!(
            after.as_bytes().get(raw_name_length),
            None | Some(b' ' | b'\t' | b'>')
        )
    {
        return true;
    }
    let name_part = after.strip_prefix('/').unwrap_or(after);
    let name_length = name_part
        .bytes()
        .take_while(u8::is_ascii_alphanumeric)
        .count();
    HTML_BLOCK_ELEMENTS.contains(&&name_part[..name_length])
        && matches!(
            name_part.as_bytes().get(name_length),
            None | Some(b' ' | b'\t' | b'\n' | b'\x0c' | b'\r' | b'/' | b'>')
        )
}

// ---------------------------------------------------------------------------------------------
// Link-reference definitions (`CommonMark`), read through block quotes and list items

/// A line with its container markers taken off, and the containers it sits in (`quote`,
/// `list` or `list#<n>`, joined with `/`).
#[derive(Debug, Clone)]
struct ContainerLine {
    text: String,
    context: String,
}

struct ActiveListContainer {
    before_quotes: usize,
    content_indent: usize,
    list_context: String,
}

struct ReferenceDefinition {
    label: String,
    end_line: usize,
}

struct ReferenceAnalysis {
    labels: HashSet<String>,
    definition_lines: BTreeSet<usize>,
}

/// The labels the document defines, and the lines its definitions take.
fn reference_analysis(body: &str) -> ReferenceAnalysis {
    let lines = document_container_lines(&visible_markdown_lines(body));
    let mut analysis = ReferenceAnalysis {
        labels: HashSet::new(),
        definition_lines: BTreeSet::new(),
    };
    let mut index = 0;
    while index < lines.len() {
        let Some(definition) = reference_definition_at(&lines, index) else {
            index += 1;
            continue;
        };
        analysis
            .labels
            .insert(normalized_reference_label(&definition.label));
        analysis
            .definition_lines
            .extend(index..=definition.end_line);
        index = definition.end_line + 1;
    }
    analysis
}

fn without_reference_definitions(text: &str) -> String {
    let analysis = reference_analysis(text);
    visible_markdown_lines(text)
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            if analysis.definition_lines.contains(&index) {
                String::new()
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` with every leading block-quote and list marker taken off, until it stops changing.
fn container_line(line: &str) -> ContainerLine {
    let mut stripped = line;
    let mut context: Vec<&str> = Vec::new();
    loop {
        if let Some(rest) = after_quote_marker(stripped) {
            stripped = rest;
            context.push("quote");
        } else if let Some(length) = container_list_marker_length(stripped) {
            stripped = &stripped[length..];
            context.push("list");
        } else {
            return ContainerLine {
                text: stripped.to_owned(),
                context: context.join("/"),
            };
        }
    }
}

/// `> ` (the space optional) after up to three spaces.
fn after_quote_marker(text: &str) -> Option<&str> {
    let rest = strip_up_to_three_spaces(text).strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// The byte length of a list marker that opens a container: up to three spaces, the marker,
/// then a tab or one to four spaces (five would start indented code).
fn container_list_marker_length(text: &str) -> Option<usize> {
    let indent = text
        .bytes()
        .take(3)
        .take_while(|&byte| byte == b' ')
        .count();
    let rest = &text[indent..];
    let marker = if rest.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = leading_ascii_digits(rest);
        if !(1..=9).contains(&digits) || !rest[digits..].starts_with(['.', ')']) {
            return None;
        }
        digits + 1
    };
    let after = &rest[marker..];
    let gap = if after.starts_with('\t') {
        1
    } else {
        let spaces = after.bytes().take_while(|&byte| byte == b' ').count();
        if !(1..=4).contains(&spaces) {
            return None;
        }
        spaces
    };
    Some(indent + marker + gap)
}

fn context_parts(context: &str) -> Vec<&str> {
    if context.is_empty() {
        Vec::new()
    } else {
        context.split('/').collect()
    }
}

fn text_columns(text: &str) -> usize {
    text.chars().fold(0, |column, character| {
        if character == '\t' {
            column + 4 - column % 4
        } else {
            column + 1
        }
    })
}

/// The byte index and column of the first character that is not a space or a tab.
fn first_content(text: &str) -> Option<(usize, usize)> {
    let mut column = 0;
    for (index, byte) in text.bytes().enumerate() {
        match byte {
            b' ' => column += 1,
            b'\t' => column += 4 - column % 4,
            _ => return Some((index, column)),
        }
    }
    None
}

fn strip_indent_columns(text: &str, required: usize) -> Option<String> {
    let mut column = 0;
    let mut index = 0;
    let bytes = text.as_bytes();
    while column < required && index < bytes.len() {
        match bytes[index] {
            b' ' => column += 1,
            b'\t' => column += 4 - column % 4,
            _ => return None,
        }
        index += 1;
    }
    if column < required {
        return None;
    }
    Some(format!(
        "{}{}",
        " ".repeat(column - required),
        &text[index..]
    ))
}

fn strip_leading_quotes(line: &str, count: usize) -> Option<&str> {
    (0..count).try_fold(line, |text, _| after_quote_marker(text))
}

/// A line that opens list item number `list_item`, after any block quotes.
fn explicit_list_container(
    line: &str,
    list_item: usize,
) -> Option<(ContainerLine, ActiveListContainer)> {
    let mut text = line;
    let mut before_quotes = 0;
    while let Some(rest) = after_quote_marker(text) {
        text = rest;
        before_quotes += 1;
    }
    let marker_length = container_list_marker_length(text)?;
    let after = container_line(&text[marker_length..]);
    let list_context = format!("list#{list_item}");
    let mut context = vec!["quote"; before_quotes];
    context.push(&list_context);
    context.extend(context_parts(&after.context));
    let line = ContainerLine {
        text: after.text.clone(),
        context: context.join("/"),
    };
    let active = ActiveListContainer {
        before_quotes,
        content_indent: text_columns(&text[..marker_length]),
        list_context: list_context.clone(),
    };
    Some((line, active))
}

/// Every line with its containers, carrying an open list item over its continuation lines
/// (which do not repeat its marker) but never into a sibling item.
fn document_container_lines(lines: &[String]) -> Vec<ContainerLine> {
    let mut result = Vec::with_capacity(lines.len());
    let mut active_list: Option<ActiveListContainer> = None;
    let mut list_item = 0;
    for line in lines {
        if let Some((container, active)) = explicit_list_container(line, list_item + 1) {
            list_item += 1;
            active_list = Some(active);
            result.push(container);
            continue;
        }
        if js_trim(line).is_empty() {
            result.push(ContainerLine {
                text: line.clone(),
                context: active_list
                    .as_ref()
                    .map(|active| active.list_context.clone())
                    .unwrap_or_default(),
            });
            continue;
        }
        if let Some(active) = &active_list
            && let Some(container) = list_continuation(line, active)
        {
            result.push(container);
            continue;
        }
        active_list = None;
        result.push(container_line(line));
    }
    result
}

fn list_continuation(line: &str, active: &ActiveListContainer) -> Option<ContainerLine> {
    let quoted = strip_leading_quotes(line, active.before_quotes)?;
    let mut context = vec!["quote"; active.before_quotes];
    context.push(&active.list_context);
    if quoted.bytes().all(|byte| byte == b' ' || byte == b'\t') {
        return Some(ContainerLine {
            text: String::new(),
            context: context.join("/"),
        });
    }
    let continuation = strip_indent_columns(quoted, active.content_indent)?;
    let after = container_line(&continuation);
    context.extend(context_parts(&after.context));
    Some(ContainerLine {
        text: after.text.clone(),
        context: context.join("/"),
    })
}

/// Whether a line would end a definition in progress (a blank line or a block start).
fn interrupts_reference_continuation(text: &str) -> bool {
    let Some((index, column)) = first_content(text) else {
        return true;
    };
    if column > 3 {
        return false;
    }
    let rest = &text[index..];
    is_atx_heading_start(rest)
        || is_thematic_break(text)
        || is_setext_underline(rest)
        || starts_html_block(rest)
}

/// `=+` or `-+`, then only spaces or tabs.
fn is_setext_underline(rest: &str) -> bool {
    let Some(&marker) = rest.as_bytes().first() else {
        return false;
    };
    if marker != b'=' && marker != b'-' {
        return false;
    }
    let run = rest.bytes().take_while(|&byte| byte == marker).count();
    rest[run..]
        .bytes()
        .all(|byte| byte == b' ' || byte == b'\t')
}

fn can_continue_reference(lines: &[ContainerLine], index: usize, context: &str) -> bool {
    let Some(line) = lines.get(index) else {
        return false;
    };
    let same_or_lazily_elided_context = line.context == context
        || (line.context.is_empty() && !context.is_empty())
        || (!line.context.is_empty() && context.starts_with(&format!("{}/", line.context)));
    same_or_lazily_elided_context && !interrupts_reference_continuation(&line.text)
}

/// One complete definition starting at `start_line`: label, destination and optional title
/// must all be valid, or nothing is consumed and the text stays a claim (fail closed).
fn reference_definition_at(
    lines: &[ContainerLine],
    start_line: usize,
) -> Option<ReferenceDefinition> {
    let context = lines[start_line].context.as_str();
    let (label, label_line, label_end) = reference_label(lines, start_line, context)?;
    let text = lines[label_line].text.as_str();
    if text.as_bytes().get(label_end + 1) != Some(&b':')
        || !label
            .chars()
            .any(|character| !matches!(character, ' ' | '\t' | '\n' | '\r'))
        || label.chars().count() > REFERENCE_LABEL_CHARS_MAX
    {
        return None;
    }
    let mut destination_line = label_line;
    let mut destination_offset = label_end + 2;
    let mut destination_start = first_content(&text[destination_offset..]).map(|(index, _)| index);
    if destination_start.is_none() {
        if !can_continue_reference(lines, destination_line + 1, context) {
            return None;
        }
        destination_line += 1;
        destination_offset = 0;
        destination_start = Some(first_content(&lines[destination_line].text)?.0);
    }
    let destination_text = &lines[destination_line].text[destination_offset..];
    let destination_end = reference_destination_end(destination_text, destination_start?)?;
    let raw_trailing = &destination_text[destination_end..];
    if raw_trailing
        .bytes()
        .any(|byte| byte != b' ' && byte != b'\t')
    {
        if !raw_trailing.starts_with([' ', '\t']) {
            return None;
        }
        let (trailing_index, _) = first_content(raw_trailing)?;
        let title_start = destination_offset + destination_end + trailing_index;
        let end_line = reference_title_end(lines, destination_line, title_start)?;
        return Some(ReferenceDefinition { label, end_line });
    }
    let end_line =
        next_line_title_end(lines, destination_line, context).unwrap_or(destination_line);
    Some(ReferenceDefinition { label, end_line })
}

/// The label of a definition opening with `[` at `start_line`: its text (lines joined with
/// `\n`), and the line and byte index of its closing `]`.
fn reference_label(
    lines: &[ContainerLine],
    start_line: usize,
    context: &str,
) -> Option<(String, usize, usize)> {
    let mut line_index = start_line;
    let mut text = lines[line_index].text.as_str();
    let (start, column) = first_content(text)?;
    if column > 3 || text.as_bytes()[start] != b'[' {
        return None;
    }
    let mut cursor = start + 1;
    let mut label = String::new();
    loop {
        while cursor < text.len() {
            let character = text[cursor..].chars().next()?;
            if !is_escaped(text, cursor) {
                if character == '[' {
                    return None;
                }
                if character == ']' {
                    return Some((label, line_index, cursor));
                }
            }
            label.push(character);
            cursor += character.len_utf8();
        }
        if !can_continue_reference(lines, line_index + 1, context) {
            return None;
        }
        label.push('\n');
        line_index += 1;
        text = lines[line_index].text.as_str();
        cursor = 0;
    }
}

/// A title on the line after the destination, when it is one.
fn next_line_title_end(
    lines: &[ContainerLine],
    destination_line: usize,
    context: &str,
) -> Option<usize> {
    if !can_continue_reference(lines, destination_line + 1, context) {
        return None;
    }
    let text = &lines[destination_line + 1].text;
    let (title_index, _) = first_content(text)?;
    if !matches!(text.as_bytes()[title_index], b'"' | b'\'' | b'(') {
        return None;
    }
    reference_title_end(lines, destination_line + 1, title_index)
}

/// The index just past a link destination starting at `start`: `<…>` closing on the line with
/// no bare `<`, or a bare run up to white space or a control character with balanced
/// parentheses.
fn reference_destination_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(start) == Some(&b'<') {
        for (index, &byte) in bytes.iter().enumerate().skip(start + 1) {
            if is_escaped(text, index) {
                continue;
            }
            match byte {
                b'>' => return Some(index + 1),
                b'<' => return None,
                _ => {}
            }
        }
        return None;
    }
    let mut depth = 0_usize;
    let mut index = start;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte <= 0x20 || byte == 0x7f {
            break;
        }
        if !is_escaped(text, index) {
            if byte == b'(' {
                depth += 1;
                if depth > DESTINATION_PAREN_DEPTH_MAX {
                    return None;
                }
            } else if byte == b')' {
                depth = depth.checked_sub(1)?;
            }
        }
        index += 1;
    }
    (depth == 0 && index > start).then_some(index)
}

/// The line on which a title opened at `start` closes, when only spaces or tabs follow it.
fn reference_title_end(lines: &[ContainerLine], start_line: usize, start: usize) -> Option<usize> {
    let context = lines[start_line].context.as_str();
    let opening = *lines[start_line].text.as_bytes().get(start)?;
    let closing = match opening {
        b'"' | b'\'' => opening,
        b'(' => b')',
        _ => return None,
    };
    let mut line_index = start_line;
    let mut cursor = start + 1;
    loop {
        let text = lines[line_index].text.as_str();
        while cursor < text.len() {
            let byte = text.as_bytes()[cursor];
            if !is_escaped(text, cursor) {
                if opening == b'(' && byte == b'(' {
                    return None;
                }
                if byte == closing {
                    let rest_is_blank = text[cursor + 1..]
                        .bytes()
                        .all(|byte| byte == b' ' || byte == b'\t');
                    return rest_is_blank.then_some(line_index);
                }
            }
            cursor += 1;
        }
        if !can_continue_reference(lines, line_index + 1, context) {
            return None;
        }
        line_index += 1;
        cursor = 0;
    }
}

// ---------------------------------------------------------------------------------------------
// Small text helpers (JavaScript's notions of white space and word characters)

fn strip_up_to_three_spaces(line: &str) -> &str {
    let spaces = line
        .bytes()
        .take(3)
        .take_while(|&byte| byte == b' ')
        .count();
    &line[spaces..]
}

fn leading_ascii_digits(text: &str) -> usize {
    text.bytes().take_while(u8::is_ascii_digit).count()
}

/// `[A-Za-z0-9_]`; a byte of a multi-byte character is never one, as JavaScript's ASCII `\w`.
fn is_word_byte(byte: Option<&u8>) -> bool {
    byte.is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const RECORD_DIR: &str = "aidlc/spaces/default/intents/260101-login";
    const STAGE_DIR: &str = "aidlc/spaces/default/intents/260101-login/ideation/intent-capture";
    const DELIVERABLES: &str = "intent-statement,stakeholder-map";

    const STATE: &str =
        "# AI-DLC State\n\n- **Project**: Build a login page\n- **Scope**: feature\n";

    const MEMORY: &str = "# Project memory\n\n## Security\n\n- Passwords are hashed with argon2.\n";

    const QUESTIONS: &str = r#"# Intent Capture Questions

## Sources

- [desc] Initial description: "Build a login page"
- [scope] Workflow-selected scope: `feature`.
- [memory:security] `aidlc/spaces/default/memory/project.md#Security`: "Passwords are hashed with argon2."

## Q1: Who are the users?

[Answer]: Staff and customers

## Q2: What is the deadline?

[Answer]: ___

## Assumption Confirmation

- Sessions last one day [assumption]

[Answer]: A. Accept assumptions
"#;

    const SOURCED: &str = r"# Intent Statement

## Intent

We build a login page [desc]. Its users are staff and customers [Q1].

- Passwords are hashed [memory:security]
- Adjacent tags are two tags [Q1][desc]

| Claim | Source |
|---|---|
| Staff log in | [Q1] |

```text
an untagged line inside a fence
```

<!-- an untagged comment -->
Inline `code without a tag` does not hide the tag after it [desc].

## Initial Scope Signal

The workflow-selected scope is a feature [scope].

## Assumptions & Open Questions

- Sessions last one day [assumption]

## Review

Untagged review notes are not claims.
";

    struct Project {
        dir: tempfile::TempDir,
    }

    impl Project {
        fn new() -> Self {
            Self {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        /// A project with the record state, the project memory and the questions file.
        fn grounded() -> Self {
            let project = Self::new();
            project.write(&format!("{RECORD_DIR}/aidlc-state.md"), STATE);
            project.write("aidlc/spaces/default/memory/project.md", MEMORY);
            project.deliverable("intent-capture-questions.md", QUESTIONS);
            project
        }

        fn root(&self) -> Utf8PathBuf {
            Utf8PathBuf::from_path_buf(self.dir.path().to_path_buf()).unwrap()
        }

        fn write(&self, relative: &str, text: &str) -> Utf8PathBuf {
            let path = self.root().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        }

        /// Write `<STAGE_DIR>/<name>` and return its absolute path.
        fn deliverable(&self, name: &str, text: &str) -> Utf8PathBuf {
            self.write(&format!("{STAGE_DIR}/{name}"), text)
        }

        fn questions_path(&self) -> Utf8PathBuf {
            self.root()
                .join(STAGE_DIR)
                .join("intent-capture-questions.md")
        }

        fn run(&self, args: &[&str]) -> WorkerOutcome {
            let args: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
            let context = WorkerContext {
                project_dir: self.root(),
                timeout: Duration::from_secs(300),
            };
            run(&args, &context)
        }

        fn verdict(&self, args: &[&str]) -> Value {
            match self.run(args) {
                WorkerOutcome::Verdict(json) => json,
                other => panic!("expected a verdict, got {other:?}"),
            }
        }

        fn usage_error(&self, args: &[&str]) -> String {
            match self.run(args) {
                WorkerOutcome::UsageError(message) => message,
                other => panic!("expected a usage error, got {other:?}"),
            }
        }

        /// Fire on `fired` the way the dispatcher does.
        fn fire(&self, fired: &Utf8Path) -> Value {
            self.verdict(&[
                "--stage",
                "intent-capture",
                "--output-path",
                fired.as_str(),
                "--deliverables",
                DELIVERABLES,
            ])
        }

        /// The findings of one intent statement, fired with the dispatcher's arguments.
        fn findings_of(&self, statement: &str) -> Vec<String> {
            let fired = self.deliverable("intent-statement.md", statement);
            findings(&self.fire(&fired))
        }
    }

    fn findings(verdict: &Value) -> Vec<String> {
        verdict["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|finding| finding.as_str().unwrap().to_owned())
            .collect()
    }

    fn json_list(paths: &[&Utf8Path]) -> String {
        serde_json::to_string(&paths.iter().map(|p| p.as_str()).collect::<Vec<_>>()).unwrap()
    }

    // --- verdicts ------------------------------------------------------------------------------

    #[test]
    fn a_fully_sourced_document_passes() {
        let project = Project::grounded();
        let fired = project.deliverable("intent-statement.md", SOURCED);
        assert_eq!(
            serde_json::to_string(&project.fire(&fired)).unwrap(),
            format!(
                r#"{{"pass":true,"findings":[],"scanned_files":{},"questions_file":"{}","findings_count":0}}"#,
                json_list(&[&fired]),
                project.questions_path()
            )
        );
    }

    #[test]
    fn an_untagged_claim_fails_with_one_finding_per_block() {
        let project = Project::grounded();
        let statement = SOURCED.replace(
            "## Initial Scope Signal",
            "An untagged paragraph.\n\nOnly in code `[desc]` and a comment <!-- [Q1] -->.\n\n- an untagged item\n\n| Row | without tag |\n\n<code>[desc]</code> hidden HTML\n\n## Initial Scope Signal",
        );
        let verdict = {
            let fired = project.deliverable("intent-statement.md", &statement);
            project.fire(&fired)
        };
        let expected = [
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
        ];
        assert_eq!(findings(&verdict), expected);
        assert_eq!(verdict["pass"], false);
        assert_eq!(verdict["findings_count"], 5);
    }

    #[test]
    fn a_tag_naming_an_unknown_source_fails() {
        let project = Project::grounded();
        let statement = SOURCED.replace("[memory:security]", "[memory:unknown] and [Q2] and [Q9]");
        assert_eq!(
            project.findings_of(&statement),
            [
                "intent-statement.md ## Intent: [memory:unknown] is not registered in ## Sources",
                "intent-statement.md ## Intent: [Q2] has no filled answer",
                "intent-statement.md ## Intent: [Q9] has no filled answer",
            ]
        );
    }

    #[test]
    fn register_entries_must_match_their_authorities() {
        let project = Project::grounded();
        project.deliverable(
            "intent-capture-questions.md",
            &QUESTIONS
                .replace("Build a login page", "Build a logout page")
                .replace("`feature`", "`epic`")
                .replace("hashed with argon2.\"", "hashed.\"")
                .replace("default/memory/project.md", "other/memory/project.md"),
        );
        assert_eq!(
            project.findings_of(SOURCED),
            [
                "[desc] does not exactly match Project in aidlc-state.md",
                "[scope] does not exactly match Scope in aidlc-state.md",
                "[memory:security] path must name a file under the active memory root aidlc/spaces/default/memory/",
                "intent-statement.md ## Intent: [desc] is not registered in ## Sources",
                "intent-statement.md ## Intent: [memory:security] is not registered in ## Sources",
                "intent-statement.md ## Intent: [desc] is not registered in ## Sources",
                "intent-statement.md ## Intent: [desc] is not registered in ## Sources",
                "intent-statement.md ## Initial Scope Signal: [scope] is not registered in ## Sources",
            ]
        );
    }

    #[test]
    fn a_memory_reference_must_stay_inside_the_memory_root_e4() {
        let project = Project::grounded();
        project.write("aidlc/spaces/default/secret.md", MEMORY);
        for (path, finding) in [
            (
                "aidlc/spaces/default/memory/../secret.md",
                "[memory:security] path must name a file under the active memory root aidlc/spaces/default/memory/",
            ),
            (
                "aidlc/spaces/default/memory/notes.md",
                "[memory:security] must name an active memory file under aidlc/spaces/default/memory/: org.md, team.md, or project.md",
            ),
            (
                "aidlc/spaces/default/memory/team.md",
                "[memory:security] memory source does not exist: aidlc/spaces/default/memory/team.md",
            ),
        ] {
            project.deliverable(
                "intent-capture-questions.md",
                &QUESTIONS.replace("aidlc/spaces/default/memory/project.md", path),
            );
            assert_eq!(
                project.findings_of(SOURCED),
                [
                    finding,
                    "intent-statement.md ## Intent: [memory:security] is not registered in ## Sources"
                ],
                "{path}"
            );
        }
    }

    #[test]
    fn a_defined_reference_label_is_a_link_not_a_tag_p6() {
        let project = Project::grounded();
        let with_definition =
            SOURCED.replace("## Review", "[Q1]: https://example.com/q1\n\n## Review");
        let statement = with_definition.replace(
            "Its users are staff and customers [Q1].",
            "Its users are staff and customers.",
        );
        assert_eq!(
            project.findings_of(&statement.replace("[Q1][desc]", "[Q1]")),
            [
                "intent-statement.md ## Intent: claim block has no source tag",
                "intent-statement.md ## Intent: claim block has no source tag",
            ]
        );
        assert_eq!(
            project.findings_of(&with_definition.replace("| [Q1] |", "| [desc] |")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn tag_placement_rules_are_checked() {
        let project = Project::grounded();
        let statement = SOURCED
            .replace(
                "We build a login page [desc].",
                "We build a workflow-selected page [scope] [assumption].",
            )
            .replace(
                "- Sessions last one day [assumption]",
                "- Sessions last one day\n\n- Tokens rotate hourly [assumption]",
            );
        assert_eq!(
            project.findings_of(&statement),
            [
                "intent-statement.md ## Intent: [assumption] is outside ## Assumptions & Open Questions",
                "intent-statement.md ## Intent: [scope] is valid only in ## Initial Scope Signal",
                "intent-statement.md ## Assumptions & Open Questions: assumption/open question lacks [assumption]",
                "intent-statement.md ## Assumptions & Open Questions: retained assumption is not listed in ## Assumption Confirmation",
            ]
        );
    }

    #[test]
    fn every_deliverable_needs_an_assumptions_section() {
        let project = Project::grounded();
        let map = project.deliverable("stakeholder-map.md", "# Map\n\n## People\n\nStaff [Q1].\n");
        let statement = project.deliverable("intent-statement.md", SOURCED);
        let verdict = project.fire(&map);
        assert_eq!(
            findings(&verdict),
            ["stakeholder-map.md: missing ## Assumptions & Open Questions"]
        );
        assert_eq!(
            serde_json::to_string(&verdict["scanned_files"]).unwrap(),
            json_list(&[&statement, &map])
        );
    }

    // --- a missing register fails closed; nothing to scan passes vacuously ---------------------

    #[test]
    fn no_questions_file_is_a_finding_not_a_pass() {
        let project = Project::new();
        let fired = project.deliverable(
            "intent-statement.md",
            "## Assumptions & Open Questions\n\nNone.\n",
        );
        let verdict = project.fire(&fired);
        assert_eq!(
            serde_json::to_string(&verdict).unwrap(),
            format!(
                r#"{{"pass":false,"findings":["questions file missing: {questions}"],"scanned_files":{},"questions_file":"{questions}","findings_count":1}}"#,
                json_list(&[&fired]),
                questions = project.questions_path()
            )
        );
    }

    #[test]
    fn a_register_without_sources_or_state_is_a_finding() {
        let project = Project::new();
        project.deliverable("intent-capture-questions.md", "# Questions\n");
        assert_eq!(
            project.findings_of("## Assumptions & Open Questions\n\nNone\n"),
            [
                "cannot verify source register: aidlc-state.md was not found",
                "questions file is missing ## Sources",
            ]
        );
        project.write(&format!("{RECORD_DIR}/aidlc-state.md"), "# empty state\n");
        assert_eq!(
            project.findings_of("## Assumptions & Open Questions\n\nNone\n"),
            [
                "aidlc-state.md is missing Project authority for [desc]",
                "aidlc-state.md is missing Scope authority for [scope]",
                "questions file is missing ## Sources",
            ]
        );
    }

    #[test]
    fn retained_assumptions_need_an_accepting_confirmation() {
        let project = Project::grounded();
        project.deliverable(
            "intent-capture-questions.md",
            &QUESTIONS.replace("A. Accept assumptions", "B. Revise"),
        );
        assert_eq!(
            project.findings_of(SOURCED),
            [
                "retained assumptions require an answered ## Assumption Confirmation with Accept assumptions"
            ]
        );
    }

    #[test]
    fn nothing_on_disk_passes_vacuously() {
        let project = Project::grounded();
        let questions = project.questions_path();
        let expected = format!(
            r#"{{"pass":true,"findings":[],"scanned_files":[],"questions_file":"{questions}","findings_count":0,"reason":"no deliverables on disk yet"}}"#
        );
        assert_eq!(
            serde_json::to_string(&project.fire(&questions)).unwrap(),
            expected
        );
        let alone = project.verdict(&["--output-path", questions.as_str()]);
        assert_eq!(serde_json::to_string(&alone).unwrap(), expected);
    }

    #[test]
    fn without_deliverables_only_the_fired_file_is_scanned() {
        let project = Project::grounded();
        project.deliverable("stakeholder-map.md", "untagged\n");
        let fired = project.deliverable("notes.md", SOURCED);
        let verdict = project.verdict(&["--output-path", fired.as_str()]);
        assert_eq!(verdict["pass"], true);
        assert_eq!(
            serde_json::to_string(&verdict["scanned_files"]).unwrap(),
            json_list(&[&fired])
        );
    }

    // --- flags, paths and errors ---------------------------------------------------------------

    #[test]
    fn a_missing_output_path_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--stage", "intent-capture"]),
            "--output-path is required"
        );
        assert_eq!(
            project.usage_error(&["--output-path", "nowhere.md"]),
            "--output-path not found: nowhere.md"
        );
    }

    #[test]
    fn an_unreadable_deliverable_or_register_is_a_finding() {
        let project = Project::new();
        std::fs::create_dir_all(project.root().join(STAGE_DIR).join("intent-statement.md"))
            .unwrap();
        std::fs::create_dir_all(project.questions_path()).unwrap();
        let fired = project.root().join(STAGE_DIR).join("intent-statement.md");
        let found = findings(&project.fire(&fired));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with(&format!(
                "failed to read questions file {}: ",
                project.questions_path()
            )),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("intent-statement.md: failed to read: "),
            "{found:?}"
        );
    }

    #[test]
    fn a_flag_without_a_value_is_a_usage_error_f9() {
        let project = Project::grounded();
        let fired = project.deliverable("intent-statement.md", SOURCED);
        assert_eq!(
            project.usage_error(&["--output-path", fired.as_str(), "--deliverables"]),
            "--deliverables expects a value, got end of arguments."
        );
        assert_eq!(
            project.usage_error(&["--stage", "--output-path", fired.as_str()]),
            "--stage expects a value, got another flag: \"--output-path\"."
        );
    }

    #[test]
    fn windows_style_paths_work() {
        let project = Project::grounded();
        let fired = project.deliverable("intent-statement.md", SOURCED);
        let relative = format!("{STAGE_DIR}\\.\\intent-statement.md").replace('/', "\\");
        let verdict = project.verdict(&[
            "--output-path",
            &relative,
            "--deliverables",
            "intent-statement",
        ]);
        assert_eq!(verdict["pass"], true, "{verdict}");
        assert_eq!(
            serde_json::to_string(&verdict["scanned_files"]).unwrap(),
            json_list(&[&fired])
        );
        let absolute = fired.as_str().replace('/', "\\");
        assert_eq!(project.fire(Utf8Path::new(&absolute))["pass"], true);
    }

    #[test]
    fn crlf_line_endings_are_read_like_lf() {
        let project = Project::grounded();
        project.deliverable(
            "intent-capture-questions.md",
            &QUESTIONS.replace('\n', "\r\n"),
        );
        assert!(
            project
                .findings_of(&SOURCED.replace('\n', "\r\n"))
                .is_empty()
        );
    }

    // --- Markdown visibility -------------------------------------------------------------------

    #[test]
    fn hidden_text_carries_no_tag() {
        let labels = HashSet::new();
        for text in [
            "`[desc]`",
            "``a ` [desc]``",
            "<span hidden>[desc]</span>",
            "<div aria-hidden=\"true\">[desc]</div>",
            "<p style=\"display: none\">[desc]</p>",
            "<script>[desc]</script>",
            "![[desc]](image.png)",
        ] {
            assert!(source_tags(text, &labels).is_empty(), "{text}");
        }
        for text in [
            "[[desc]](https://example.com)",
            "<span>[desc]</span>",
            "<https://example.com> [desc]",
            "[Q1][Q2] [desc]",
        ] {
            assert!(!source_tags(text, &labels).is_empty(), "{text}");
        }
        assert_eq!(source_tags("[Q1][Q2]", &labels), ["Q1", "Q2"]);
    }

    #[test]
    fn reference_definitions_are_found_through_containers() {
        for body in [
            "[Q1]: https://example.com",
            "> - [Q1]: https://example.com",
            "- > [Q1]: https://example.com",
            "[Q1]:\n  https://example.com\n  \"a title\"",
            "[Q1]: <https://example.com> 'title'",
        ] {
            let analysis = reference_analysis(body);
            assert!(analysis.labels.contains("Q1"), "{body}");
        }
        for body in [
            "[Q1]: https://example.com trailing",
            "[Q1] https://example.com",
            "    [Q1]: https://example.com",
            "[Q1]:",
        ] {
            assert!(reference_analysis(body).labels.is_empty(), "{body}");
        }
    }

    #[test]
    fn headings_and_tables_are_read_as_the_reference_does() {
        assert_eq!(h2_heading("## Sources ##").as_deref(), Some("Sources"));
        assert_eq!(h2_heading("   ## Q1: x").as_deref(), Some("Q1: x"));
        assert_eq!(h2_heading("##"), Some(String::new()));
        assert_eq!(h2_heading("### Sources"), None);
        assert_eq!(h2_heading("    ## Sources"), None);
        assert!(is_table_separator("|---|:---:|"));
        assert!(!is_table_separator("|---|"));
        assert_eq!(question_id("Q12: deadline").as_deref(), Some("Q12"));
        assert_eq!(question_id("Q1a"), None);
    }

    #[test]
    fn pathological_input_does_not_panic() {
        let labels = HashSet::new();
        for text in [
            "[",
            "]",
            "![",
            "<",
            "</",
            "<a",
            "`",
            "``",
            "\\",
            "[x](",
            "[x][",
            "é[é]é<é>",
        ] {
            let _ = source_tags(text, &labels);
            let _ = claim_blocks(text, &BTreeSet::new());
            let _ = reference_analysis(text);
        }
    }
}
