//! The manifest a sensor selection scaffolds (persist's first write): its text, and the proof
//! that every reader of it sees the selection.
//!
//! Two readers read a scaffolded manifest: this engine's YAML parser (the compile, the
//! dispatcher), and, on an install of the reference, its line reader (each top-level key's
//! first `key: value` line, trimmed, outer quotes stripped, no escapes). Invariants:
//! - each value is written as one YAML scalar by [`yaml_scalar`]: plain when YAML reads it back
//!   as the same string, else single-quoted, else double-quoted with YAML's escapes, so no value
//!   can end the frontmatter, add a key, or change another;
//! - [`scaffold_manifest`] parses the text back with the compile's own manifest parser and reads
//!   it as the reference reads it, and returns it only when both give exactly the selection; a
//!   value that needs an escape (a line break, a quote the reference would keep) is refused,
//!   never written in a form one of them misreads.

use camino::Utf8Path;

use super::selections::ManifestFields;
use crate::compile::syntax::manifest::parse_manifest;
use crate::leaves::text_lines::lines_with_starts;
use crate::protocol::selection::FireOn;

/// The manifest as the reference renders it: the frontmatter lines `id`, `kind`, `command`,
/// `default_severity`, `description`, optional `category`, `matches` (quoted), optional
/// `timeout_seconds`; then the heading, the description and the scaffold note.
pub(super) fn render_manifest(fields: &ManifestFields) -> String {
    let mut lines = vec![
        "---".to_owned(),
        format!("id: {}", yaml_scalar(&fields.id)),
        format!("kind: {}", yaml_scalar(&fields.kind)),
        format!("command: {}", yaml_scalar(&fields.command)),
        format!(
            "default_severity: {}",
            yaml_scalar(&fields.default_severity)
        ),
        format!("description: {}", yaml_scalar(&fields.description)),
    ];
    if let Some(category) = &fields.category {
        lines.push(format!("category: {}", yaml_scalar(category)));
    }
    lines.push(format!("matches: {}", quoted_yaml_scalar(&fields.matches)));
    if let Some(seconds) = fields.timeout_seconds {
        lines.push(format!("timeout_seconds: {seconds}"));
    }
    lines.extend([
        "---".to_owned(),
        String::new(),
        format!("# {} sensor", fields.id),
        String::new(),
        fields.description.clone(),
        String::new(),
        "Scaffolded by the §13 learning gate (project-tier).".to_owned(),
        String::new(),
    ]);
    lines.join("\n")
}

/// Why a selection's manifest cannot be written as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ScaffoldRefusal {
    /// The compile's manifest checks refuse it (the first error).
    WouldNotCompile(String),
    /// A reader would see another value for `field` than the selection gives.
    ReadsBackOtherwise {
        field: &'static str,
        reader: &'static str,
    },
}

/// The text of the manifest `fields` scaffolds, proved to read back as `fields` in both
/// readers; `shown` names the file in diagnostics.
pub(super) fn scaffold_manifest(
    fields: &ManifestFields,
    shown: &Utf8Path,
) -> Result<String, ScaffoldRefusal> {
    let text = render_manifest(fields);
    let parsed = parse_manifest(&text, shown, &fields.id);
    if let Some(error) = parsed
        .diagnostics
        .iter()
        .find(|diagnostic| diagnostic.is_error())
    {
        return Err(ScaffoldRefusal::WouldNotCompile(error.message.clone()));
    }
    let Some(manifest) = parsed.manifest else {
        return Err(ScaffoldRefusal::WouldNotCompile(
            "it reads as no manifest".to_owned(),
        ));
    };
    // Every field in our parser's reading first, then in the reference's: the first that reads
    // back otherwise is the one refused.
    let ours = [
        ("id", manifest.id == fields.id),
        ("kind", manifest.kind == fields.kind),
        ("command", manifest.command == fields.command),
        (
            "default_severity",
            manifest.default_severity.as_str() == fields.default_severity,
        ),
        ("description", manifest.description == fields.description),
        ("category", manifest.category == fields.category),
        (
            "matches",
            manifest.matches.as_deref() == Some(fields.matches.as_str()),
        ),
        (
            "timeout_seconds",
            manifest.timeout_seconds == fields.timeout_seconds,
        ),
        ("fire_on", manifest.fire_on == FireOn::Write),
        ("input_schema", manifest.input_schema_keys.is_none()),
    ];
    let timeout = fields.timeout_seconds.map(|seconds| seconds.to_string());
    let theirs = [
        ("id", Some(fields.id.as_str())),
        ("kind", Some(fields.kind.as_str())),
        ("command", Some(fields.command.as_str())),
        ("default_severity", Some(fields.default_severity.as_str())),
        ("description", Some(fields.description.as_str())),
        ("category", fields.category.as_deref()),
        ("matches", Some(fields.matches.as_str())),
        ("timeout_seconds", timeout.as_deref()),
        ("fire_on", None),
    ];
    let misread = ours
        .iter()
        .find(|(_, same)| !same)
        .map(|(field, _)| (*field, "aidlc's manifest parser"))
        .or_else(|| {
            theirs
                .iter()
                .find(|(field, expected)| reference_scalar(&text, field).as_deref() != *expected)
                .map(|(field, _)| (*field, "the reference's manifest reader"))
        });
    match misread {
        Some((field, reader)) => Err(ScaffoldRefusal::ReadsBackOtherwise { field, reader }),
        None => Ok(text),
    }
}

/// The value the reference's line reader takes for `key` from a manifest's frontmatter: the
/// first line `key:<spaces>value`, trimmed, with one pair of matching outer quotes stripped and
/// no escape processing; `None` when no line has the key (or the value is empty, which that
/// reader also treats as absent).
fn reference_scalar(text: &str, key: &str) -> Option<String> {
    let frontmatter = text.strip_prefix("---\n")?;
    let end = lines_with_starts(frontmatter)
        .find(|(_, line)| line.starts_with("---"))
        .map_or(frontmatter.len(), |(start, _)| start);
    let value = frontmatter[..end].lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        Some(crate::leaves::js_text::js_trim(rest))
    })?;
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|quote| {
            value
                .strip_prefix(*quote)
                .and_then(|rest| rest.strip_suffix(*quote))
        })
        .unwrap_or(value);
    (!unquoted.is_empty()).then(|| unquoted.to_owned())
}

/// One YAML scalar that reads back as `value`: plain when that is safe, else single-quoted
/// when no escape is needed, else double-quoted with YAML's escapes.
pub(super) fn yaml_scalar(value: &str) -> String {
    if is_plain_safe(value) {
        value.to_owned()
    } else if can_single_quote(value) {
        format!("'{value}'")
    } else {
        double_quoted(value)
    }
}

/// A quoted YAML scalar (the reference always quotes `matches`): double quotes when nothing in
/// it needs an escape, else as [`yaml_scalar`] would quote it.
fn quoted_yaml_scalar(value: &str) -> String {
    if !value.contains(['"', '\\']) && !value.chars().any(needs_escape) {
        format!("\"{value}\"")
    } else if can_single_quote(value) {
        format!("'{value}'")
    } else {
        double_quoted(value)
    }
}

/// Characters that only an escape can carry inside a quoted scalar on one line: every control
/// character, and the Unicode line and paragraph separators, the next-line character and the
/// byte-order mark, which YAML reads as line breaks or drops.
fn needs_escape(character: char) -> bool {
    character.is_control() || matches!(character, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

fn can_single_quote(value: &str) -> bool {
    !value.contains('\'') && !value.chars().any(needs_escape)
}

/// Whether `value` written bare reads back as the same string: not empty, no surrounding
/// space, no character that starts another YAML construct at its start, no `: ` or ` #` inside,
/// and not a word or number YAML reads as another type.
fn is_plain_safe(value: &str) -> bool {
    const INDICATORS: &[char] = &[
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@',
        '`',
    ];
    let Some(first) = value.chars().next() else {
        return false;
    };
    !INDICATORS.contains(&first)
        && !value
            .chars()
            .any(|character| needs_escape(character) || character == '\t')
        && value.trim() == value
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.ends_with(':')
        && !reads_as_another_type(value)
}

/// Null, booleans (YAML 1.1's too) and numbers, which a YAML reader may not keep as text.
fn reads_as_another_type(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", "-.inf", "+.inf",
        ".nan",
    ];
    let lower = value.to_ascii_lowercase();
    WORDS.contains(&lower.as_str())
        || value
            .trim_start_matches(['+', '-'])
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_digit() || first == '.')
}

/// `"…"` with YAML's double-quoted escapes for `\`, `"` and every character [`needs_escape`].
fn double_quoted(value: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for character in value.chars() {
        match character {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            character if needs_escape(character) => {
                let _ = write!(out, "\\u{:04x}", u32::from(character));
            }
            character => out.push(character),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> ManifestFields {
        ManifestFields {
            id: "persona-named".to_owned(),
            kind: "deterministic".to_owned(),
            command: "sh persona.sh".to_owned(),
            default_severity: "advisory".to_owned(),
            description: "Every story names its persona".to_owned(),
            matches: "**/stories.md".to_owned(),
            timeout_seconds: Some(60),
            category: Some("document-shape".to_owned()),
        }
    }

    fn scaffold(fields: &ManifestFields) -> Result<String, ScaffoldRefusal> {
        scaffold_manifest(
            fields,
            Utf8Path::new(".claude/sensors/aidlc-persona-named.md"),
        )
    }

    #[test]
    fn ordinary_values_are_written_as_the_reference_writes_them() {
        let text = scaffold(&fields()).unwrap();
        assert_eq!(
            text,
            "---\nid: persona-named\nkind: deterministic\ncommand: sh persona.sh\ndefault_severity: advisory\ndescription: Every story names its persona\ncategory: document-shape\nmatches: \"**/stories.md\"\ntimeout_seconds: 60\n---\n\n# persona-named sensor\n\nEvery story names its persona\n\nScaffolded by the §13 learning gate (project-tier).\n"
        );
    }

    #[test]
    fn values_that_need_quotes_are_quoted_and_read_back_by_both_readers() {
        for description in [
            "Checks: the summary",
            "a # not a comment",
            "- starts like a list item",
            "'quoted' at the start",
            "\"double\" at the start",
            "yes",
            "12",
            " surrounded ",
            "says \"hi\": twice",
        ] {
            let mut fields = fields();
            fields.description = description.to_owned();
            let text =
                scaffold(&fields).unwrap_or_else(|refusal| panic!("{description:?}: {refusal:?}"));
            assert!(
                text.contains("\ndescription: '") || text.contains("\ndescription: \""),
                "{text}"
            );
        }
        let mut fields = fields();
        fields.matches = "it's/**".to_owned();
        assert!(
            scaffold(&fields)
                .unwrap()
                .contains("\nmatches: \"it's/**\"\n")
        );
    }

    #[test]
    fn a_value_only_an_escape_could_carry_is_refused() {
        type Edit = fn(&mut ManifestFields);
        let cases: [(&str, Edit); 4] = [
            ("matches", |fields| {
                fields.matches = "nothing\"\nfire_on: gate\nx: \"".to_owned();
            }),
            ("description", |fields| {
                fields.description = "ends the frontmatter\n---\nearly".to_owned();
            }),
            ("command", |fields| {
                fields.command = "'sh' \"quoted\".sh".to_owned();
            }),
            ("category", |fields| {
                fields.category = Some("line\u{2028}separator".to_owned());
            }),
        ];
        for (field, edit) in cases {
            let mut fields = fields();
            edit(&mut fields);
            let refusal = scaffold(&fields).unwrap_err();
            assert_eq!(
                refusal,
                ScaffoldRefusal::ReadsBackOtherwise {
                    field,
                    reader: "the reference's manifest reader"
                },
                "{field}"
            );
        }
    }

    #[test]
    fn the_emitter_round_trips_through_the_yaml_parser_even_where_the_reference_cannot() {
        for value in [
            "plain",
            "nothing\"\nfire_on: gate\nx: \"",
            "tab\there",
            "back\\slash",
            "nul\0char",
            "bell\u{7}",
            "next\u{85}line",
            "\u{feff}bom",
            "it's",
            "",
        ] {
            let text = format!("value: {}\n", yaml_scalar(value));
            let (root, problems) =
                crate::compile::syntax::yaml::parse_document(&text, 0..text.len());
            assert!(problems.is_empty(), "{text:?}: {problems:?}");
            let read = root
                .as_ref()
                .and_then(|node| node.get("value"))
                .and_then(|node| node.as_scalar().map(str::to_owned));
            assert_eq!(read.as_deref(), Some(value), "{text:?}");
        }
    }
}
