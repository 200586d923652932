//! The Bolt DAG block of `unit-of-work-dependency.md`: the first ```` ```yaml ```` (or
//! ```` ```yml ````) fence declaring `units:`, read as the reference reads it, and its edges
//! checked (`ok`, `absent`, `malformed` or `cyclic`).
//!
//! Pure text functions. `traceability` reads the same block for its unit names through
//! [`units_block`].

use std::collections::{HashMap, HashSet, VecDeque};

use crate::compile::syntax::vocabulary::UNIT_KINDS;
use crate::leaves::js_text::{is_js_line_terminator, is_js_whitespace, js_trim, js_trim_start};
use crate::runtime::sensors::text::{is_plain_name, lines_of};

/// The longest unit name the DAG block accepts, in UTF-16 code units (the reference's length).
const UNIT_NAME_MAX_LENGTH: usize = 64;

/// The state of the Bolt DAG block; the verdict's `edge_block` is its name in lower case.
#[derive(Debug, Clone, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub(super) enum EdgeBlock {
    Ok,
    Absent,
    /// The block is there but unusable; `detail` says which rule it broke, in the reference's
    /// words (the verdict carries only the word `malformed`, as the reference's does).
    Malformed {
        detail: String,
    },
    Cyclic,
}

/// One unit of the DAG block: its name and the units it depends on, in the block's order.
struct DagUnit {
    name: String,
    depends_on: Vec<String>,
}

pub(super) fn edge_block_of(body: &str) -> EdgeBlock {
    let Some(block) = units_block(body) else {
        return EdgeBlock::Absent;
    };
    let units = match parse_units(&block).and_then(check_unit_edges) {
        Ok(units) => units,
        Err(detail) => return EdgeBlock::Malformed { detail },
    };
    if has_dependency_cycle(&units) {
        EdgeBlock::Cyclic
    } else {
        EdgeBlock::Ok
    }
}

/// The inner lines of the first ```` ```yaml ```` / ```` ```yml ```` fence that declares a
/// `units:` key, joined with `\n`. Other fences are skipped whole; an unclosed fence runs to the
/// end of the body.
pub(in crate::runtime::sensors) fn units_block(body: &str) -> Option<String> {
    let mut lines = lines_of(body);
    while lines.any(|line| matches!(js_trim(line), "```yaml" | "```yml")) {
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|line| js_trim(line) != "```")
            .collect();
        let block = block.join("\n");
        if declares_units_key(&block) {
            return Some(block);
        }
    }
    None
}

/// Whether some line of `block` is, after optional whitespace, `units` then optional whitespace
/// then `:` (the reference's multi-line `^\s*units\s*:`, whose `\s` also crosses line ends).
pub(super) fn declares_units_key(block: &str) -> bool {
    let mut only_space_since_line_start = true;
    for (offset, character) in block.char_indices() {
        if is_js_line_terminator(character) {
            only_space_since_line_start = true;
        } else if !is_js_whitespace(character) {
            if only_space_since_line_start && key_value(&block[offset..], "units").is_some() {
                return true;
            }
            only_space_since_line_start = false;
        }
    }
    false
}

/// The units of the block, or the reason it cannot be read.
fn parse_units(block: &str) -> Result<Vec<DagUnit>, String> {
    let mut units: Vec<DagUnit> = Vec::new();
    for line in lines_below_units_key(block)? {
        read_unit_line(line, &mut units)?;
    }
    Ok(units)
}

/// The lines of `block` below its `units:` key, or the reason it declares no list of units.
pub(in crate::runtime::sensors) fn lines_below_units_key(
    block: &str,
) -> Result<impl Iterator<Item = &str>, String> {
    let mut lines = lines_of(block);
    let units_line = lines
        .by_ref()
        .find_map(|line| key_value(line, "units"))
        .ok_or_else(|| "missing units: key".to_owned())?;
    if !js_trim(units_line).is_empty() {
        return Err("units: must be a block list, not an inline value".to_owned());
    }
    Ok(lines)
}

/// One line below `units:`: a new `- name:`, its `depends_on:` or `kind:`, or a `- dep` item.
fn read_unit_line(line: &str, units: &mut Vec<DagUnit>) -> Result<(), String> {
    if js_trim(line).is_empty() {
        return Ok(());
    }
    if let Some(name) = list_item(line)
        .and_then(|item| spaced_key_value(item, "name"))
        .and_then(|value| lazy_capture(value, 0))
    {
        units.push(DagUnit {
            name: unquote_scalar(name).to_owned(),
            depends_on: Vec::new(),
        });
        return Ok(());
    }
    if let Some(value) = key_value(line, "depends_on").and_then(greedy_rest) {
        let unit = units
            .last_mut()
            .ok_or_else(|| "depends_on: before any - name: entry".to_owned())?;
        unit.depends_on = inline_dependency_list(value);
        return Ok(());
    }
    if let Some(value) = key_value(line, "kind").and_then(|value| lazy_capture(value, 0)) {
        let unit = units
            .last()
            .ok_or_else(|| "kind: before any - name: entry".to_owned())?;
        let kind = unquote_scalar(value);
        return UNIT_KINDS.contains(&kind).then_some(()).ok_or_else(|| {
            format!(
                "unit \"{}\" has invalid kind \"{kind}\" (expected {})",
                unit.name,
                UNIT_KINDS.join("|")
            )
        });
    }
    if let (Some(item), Some(unit)) = (
        list_item(line).and_then(|item| lazy_capture(item, 1)),
        units.last_mut(),
    ) {
        unit.depends_on.push(unquote_scalar(item).to_owned());
        return Ok(());
    }
    Err(format!(
        "unrecognised line in units block: {}",
        js_trim(line)
    ))
}

/// After `\s*-`, the rest of the line (which the caller's pattern continues).
pub(in crate::runtime::sensors) fn list_item(line: &str) -> Option<&str> {
    js_trim_start(line).strip_prefix('-')
}

/// After `\s+<key>\s*:` (at least one space first, as after a list dash), the rest.
pub(in crate::runtime::sensors) fn spaced_key_value<'item>(
    item: &'item str,
    key: &str,
) -> Option<&'item str> {
    item.starts_with(is_js_whitespace)
        .then(|| key_value(item, key))
        .flatten()
}

/// After `\s*<key>\s*:`, the rest of the line.
fn key_value<'line>(line: &'line str, key: &str) -> Option<&'line str> {
    let rest = js_trim_start(line).strip_prefix(key)?;
    js_trim_start(rest).strip_prefix(':')
}

/// The capture of `\s{min_space,}(.+?)\s*$` over `rest`, trimmed: the text between the leading
/// and the trailing whitespace. `None` when the pattern cannot match (too little leading
/// space, nothing at all, or a line terminator inside the text). A run of whitespace alone
/// captures one space, which trims to the empty string.
pub(super) fn lazy_capture(rest: &str, min_space: usize) -> Option<&str> {
    let leading_space = rest.chars().take_while(|&c| is_js_whitespace(c)).count();
    if leading_space < min_space {
        return None;
    }
    let text = js_trim(rest);
    if text.is_empty() {
        let any_plain_space = rest
            .chars()
            .skip(min_space)
            .any(|c| !is_js_line_terminator(c));
        return any_plain_space.then_some("");
    }
    (!text.contains(is_js_line_terminator)).then_some(text)
}

/// The capture of `\s*(.*)$` over `rest`: everything after the leading whitespace, unless a line
/// terminator follows it.
pub(super) fn greedy_rest(rest: &str) -> Option<&str> {
    let text = js_trim_start(rest);
    (!text.contains(is_js_line_terminator)).then_some(text)
}

/// `"x"` or `'x'` → `x`; anything else trimmed.
pub(in crate::runtime::sensors) fn unquote_scalar(raw: &str) -> &str {
    let text = js_trim(raw);
    for quote in ['"', '\''] {
        if text.starts_with(quote) && text.ends_with(quote) {
            return text.get(1..text.len() - 1).unwrap_or_default();
        }
    }
    text
}

/// The dependencies written after `depends_on:`: `[]`, `[a, "b"]` (quotes respected, a trailing
/// `# comment` allowed), or one bare name. An unclosed or trailing-garbage list reads as empty.
pub(super) fn inline_dependency_list(raw: &str) -> Vec<String> {
    let text = js_trim(raw);
    if text.is_empty() || text == "[]" {
        return Vec::new();
    }
    if !text.starts_with('[') {
        return vec![unquote_scalar(text).to_owned()];
    }
    let structural = bytes_outside_quotes(text, 1);
    let Some(close) = structural.iter().position(|&(_, byte)| byte == b']') else {
        return Vec::new();
    };
    let close_offset = structural[close].0;
    if !is_blank_or_comment(&text[close_offset + 1..]) {
        return Vec::new();
    }
    // The commas outside quotes split the list; a quote open at the `]` would have hidden it.
    let commas = structural[..close]
        .iter()
        .filter(|&&(_, byte)| byte == b',')
        .map(|&(offset, _)| offset);
    let mut start = 1;
    commas
        .chain([close_offset])
        .map(|end| {
            let item = unquote_scalar(&text[start..end]);
            start = end + 1;
            item
        })
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `text` is spaces and tabs, then optionally a `#` comment.
fn is_blank_or_comment(text: &str) -> bool {
    let rest = text.trim_start_matches([' ', '\t']);
    rest.is_empty() || (rest.starts_with('#') && !rest.contains(['\r', '\n']))
}

/// The bytes of `text` from `from` on that are outside quotes (quote characters excluded), with
/// their offsets. `"…"` honours `\` escapes; `'…'` does not. Only ASCII bytes are compared, so
/// multi-byte characters pass through.
fn bytes_outside_quotes(text: &str, from: usize) -> Vec<(usize, u8)> {
    let bytes = text.as_bytes();
    let mut structural = Vec::new();
    let mut quote: Option<u8> = None;
    let mut index = from;
    while index < bytes.len() {
        let byte = bytes[index];
        if let Some(open) = quote {
            if open == b'"' && byte == b'\\' {
                index += 1;
            } else if byte == open {
                quote = None;
            }
        } else if byte == b'"' || byte == b'\'' {
            quote = Some(byte);
        } else {
            structural.push((index, byte));
        }
        index += 1;
    }
    structural
}

/// A unit name: 1 to 64 characters, an ASCII letter or digit, then letters, digits, `.`, `_`
/// or `-`.
fn validate_unit_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("Unit name is empty".to_owned());
    }
    let length = name.encode_utf16().count();
    if length > UNIT_NAME_MAX_LENGTH {
        let head: String = name.chars().take(32).collect();
        return Err(format!(
            "Unit name \"{head}...\" is {length} chars; max is {UNIT_NAME_MAX_LENGTH}"
        ));
    }
    if is_plain_name(name) {
        Ok(())
    } else {
        Err(format!(
            "Invalid Unit name \"{name}\" - must match /^[A-Za-z0-9][A-Za-z0-9._-]*$/ (ASCII \
             letter/digit, then ASCII letters/digits/dot/underscore/hyphen)"
        ))
    }
}

/// The names of the block's units, in the reference's order of rules: at least one, each a
/// valid unit name, none twice.
pub(in crate::runtime::sensors) fn check_unit_names<'name>(
    names: impl IntoIterator<Item = &'name str>,
) -> Result<(), String> {
    let names: Vec<&str> = names.into_iter().collect();
    if names.is_empty() {
        return Err("units: block has no entries".to_owned());
    }
    for name in &names {
        validate_unit_name(name)?;
    }
    let mut seen = HashSet::new();
    match names.iter().find(|name| !seen.insert(**name)) {
        Some(duplicate) => Err(format!("duplicate unit name: {duplicate}")),
        None => Ok(()),
    }
}

/// The structural rules, in the reference's order: the names (see [`check_unit_names`]), then
/// no unit depending on itself or on a unit the block does not declare.
fn check_unit_edges(units: Vec<DagUnit>) -> Result<Vec<DagUnit>, String> {
    check_unit_names(units.iter().map(|unit| unit.name.as_str()))?;
    let names: HashSet<&str> = units.iter().map(|unit| unit.name.as_str()).collect();
    for unit in &units {
        for dependency in &unit.depends_on {
            if *dependency == unit.name {
                return Err(format!("unit \"{}\" depends on itself", unit.name));
            }
            if !names.contains(dependency.as_str()) {
                return Err(format!(
                    "unit \"{}\" depends on unknown unit \"{dependency}\"",
                    unit.name
                ));
            }
        }
    }
    Ok(units)
}

/// Kahn's algorithm over the checked units (names unique, every dependency declared): a cycle
/// is left exactly when some unit is never freed. Linear in units plus edges.
fn has_dependency_cycle(units: &[DagUnit]) -> bool {
    let index_of: HashMap<&str, usize> = units
        .iter()
        .enumerate()
        .map(|(index, unit)| (unit.name.as_str(), index))
        .collect();
    let mut waiting_on: Vec<usize> = units.iter().map(|unit| unit.depends_on.len()).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); units.len()];
    for (index, unit) in units.iter().enumerate() {
        for dependency in &unit.depends_on {
            if let Some(&dependency_index) = index_of.get(dependency.as_str()) {
                dependents[dependency_index].push(index);
            }
        }
    }
    let mut ready: VecDeque<usize> = (0..units.len()).filter(|&i| waiting_on[i] == 0).collect();
    let mut freed = 0;
    while let Some(index) = ready.pop_front() {
        freed += 1;
        for &dependent in &dependents[index] {
            waiting_on[dependent] -= 1;
            if waiting_on[dependent] == 0 {
                ready.push_back(dependent);
            }
        }
    }
    freed < units.len()
}
