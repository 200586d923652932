//! Units of work: the unit names of the Bolt DAG (`unit-of-work-dependency.md`), the aliases
//! of `unit-of-work.md`, and the story map (`unit-of-work-story-map.md`).
//!
//! Only the unit names are read from the DAG; its edges and cycles are `required-sections`'s.

use std::collections::{BTreeMap, BTreeSet};

use camino::Utf8Path;

use super::ids::{IdPattern, digits_end, extract_ids, is_word_byte_before};
use super::record::read_upstream;
use crate::leaves::js_text::js_trim;
use crate::runtime::sensors::required_sections::{
    check_unit_names, lines_below_units_key, list_item, spaced_key_value, units_block,
    unquote_scalar,
};
use crate::runtime::sensors::text::{is_word_byte, lines_of, read_text_lossy};

pub(super) enum BoltDag {
    Units(Vec<String>),
    /// No `unit-of-work-dependency.md`: a workflow without units.
    Missing,
    /// The file is there but its units cannot be known; the reason, in full.
    Malformed(String),
}

pub(super) fn bolt_dag(path: &Utf8Path) -> BoltDag {
    if !path.exists() {
        return BoltDag::Missing;
    }
    let malformed = |state: &str, detail: &str| {
        BoltDag::Malformed(format!("unit-of-work-dependency.md is {state}: {detail}"))
    };
    let body = match read_text_lossy(path) {
        Ok(body) => body,
        Err(error) => return malformed("unreadable", &error.to_string()),
    };
    let Some(block) = units_block(&body) else {
        return malformed("absent", "no fenced ```yaml units: block found");
    };
    match unit_names(&block) {
        Ok(units) => BoltDag::Units(units),
        Err(detail) => malformed("malformed", &detail),
    }
}

/// The `- name:` entries below `units:`, each a valid unit name, none twice; other lines are
/// not read.
fn unit_names(block: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = lines_below_units_key(block)?
        .filter_map(unit_name_of_line)
        .collect();
    check_unit_names(names.iter().map(String::as_str))?;
    Ok(names)
}

/// The name of a `\s*-\s+name\s*:\s*<name>` line, unquoted (a lone quote is a name of its
/// own).
fn unit_name_of_line(line: &str) -> Option<String> {
    let value = js_trim(list_item(line).and_then(|item| spaced_key_value(item, "name"))?);
    match value.len() {
        0 => None,
        1 => Some(value.to_owned()),
        _ => Some(unquote_scalar(value).to_owned()),
    }
}

/// The cells of a Markdown table row (trimmed, outer pipes dropped); none for any other line
/// or for a separator row.
pub(super) fn markdown_cells(line: &str) -> Vec<&str> {
    let is_separator_row = line.chars().all(|character| {
        crate::leaves::js_text::is_js_whitespace(character) || matches!(character, ':' | '|' | '-')
    });
    if !js_trim(line).starts_with('|') || is_separator_row {
        return Vec::new();
    }
    let parts: Vec<&str> = line.split('|').collect();
    parts[1..parts.len() - 1]
        .iter()
        .map(|cell| js_trim(cell))
        .collect()
}

/// Each unit's `U<n>` alias: from every table row of `unit-of-work.md` that has one (the first
/// `U<n>` of the row, any case, upper-cased) and names a unit as a whole cell. A later row wins;
/// an unreadable file gives no aliases.
pub(super) fn unit_aliases(unit_of_work: &Utf8Path, units: &[String]) -> Vec<(String, String)> {
    let mut aliases: Vec<(String, String)> = Vec::new();
    let Ok(text) = read_upstream(unit_of_work) else {
        return aliases;
    };
    for line in lines_of(&text) {
        let cells = markdown_cells(line);
        let Some(alias) = cells.iter().find_map(|cell| first_unit_alias(cell)) else {
            continue;
        };
        let named = units.iter().find(|unit| {
            cells
                .iter()
                .any(|cell| *cell == unit.as_str() || *cell == format!("`{unit}`"))
        });
        if let Some(unit) = named {
            match aliases.iter_mut().find(|(known, _)| known == unit) {
                Some(entry) => entry.1 = alias,
                None => aliases.push((unit.clone(), alias)),
            }
        }
    }
    aliases
}

/// The first `U<digits>` (any case) standing as a whole word in `cell`, upper-cased.
pub(super) fn first_unit_alias(cell: &str) -> Option<String> {
    let bytes = cell.as_bytes();
    (0..bytes.len()).find_map(|start| {
        if !matches!(bytes[start], b'U' | b'u') || is_word_byte_before(bytes, start) {
            return None;
        }
        let end = digits_end(bytes, start + 1)?;
        (!is_word_byte(bytes.get(end))).then(|| cell[start..end].to_ascii_uppercase())
    })
}

/// Which units each story goes to, from the table rows of the story map that name a story and
/// a unit (by name or alias, as a token of a cell); the reason when the map cannot be read or
/// maps nothing.
pub(super) fn story_assignments(
    story_map: &Utf8Path,
    units: &[String],
    aliases: &[(String, String)],
) -> (BTreeMap<String, BTreeSet<String>>, Option<String>) {
    let mut assignments: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let text = match read_upstream(story_map) {
        Ok(text) => text,
        Err(reason) => return (assignments, Some(reason)),
    };
    for line in lines_of(&text) {
        let cells = markdown_cells(line);
        if cells.is_empty() {
            continue;
        }
        let stories = extract_ids(line, &[IdPattern::Us]);
        for unit in units {
            let alias = aliases
                .iter()
                .find(|(known, _)| known == unit)
                .map(|(_, a)| a);
            let names: Vec<&String> = std::iter::once(unit).chain(alias).collect();
            let row_names_unit = cells
                .iter()
                .any(|cell| names.iter().any(|name| token_present(cell, name)));
            if !row_names_unit {
                continue;
            }
            for story in &stories {
                assignments
                    .entry(story.clone())
                    .or_default()
                    .insert(unit.clone());
            }
        }
    }
    let reason = assignments.is_empty().then(|| {
        format!("unit-of-work-story-map.md contains no story-to-unit mappings: {story_map}")
    });
    (assignments, reason)
}

/// Whether `token` (ASCII, any case) occurs in `cell` between the cell's ends, white space,
/// `,`, `;` or `/`.
pub(super) fn token_present(cell: &str, token: &str) -> bool {
    let is_delimiter = |character: Option<char>| {
        character.is_none_or(|c| {
            crate::leaves::js_text::is_js_whitespace(c) || matches!(c, ',' | ';' | '/')
        })
    };
    let (bytes, needle) = (cell.as_bytes(), token.as_bytes());
    if needle.is_empty() || needle.len() > bytes.len() {
        return false;
    }
    (0..=bytes.len() - needle.len()).any(|start| {
        let end = start + needle.len();
        bytes[start..end].eq_ignore_ascii_case(needle)
            && cell.is_char_boundary(start)
            && cell.is_char_boundary(end)
            && is_delimiter(cell[..start].chars().next_back())
            && is_delimiter(cell[end..].chars().next())
    })
}
