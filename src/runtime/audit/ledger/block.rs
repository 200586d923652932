//! The block format of an audit shard (D25): the header, the separator, a row before
//! it is stamped (`AuditRow`), its bytes (`format_block`, with `escape_value`), path fields made
//! project-relative, and a block as the reader gives it back (`AuditBlock`).
//!
//! Invariant: no value can forge a second field or block (every line terminator in a value is
//! written as the two characters `\n`), and every key is one Markdown label.
//! Must not: know which events exist or which keys they carry (that is `event.rs`), or touch a
//! file.

use camino::Utf8Path;

use super::error::LedgerError;

/// The first line of every shard, written by the first append to an empty file.
pub const AUDIT_LOG_HEADER: &str = "# AI-DLC Audit Log\n";
/// Readers split a shard into blocks on this separator.
pub const BLOCK_SEPARATOR: &str = "\n---\n";

/// The key of every block's stamp, written by the block writer itself.
pub const TIMESTAMP_KEY: &str = "Timestamp";
/// The key of every block's event name, written by the block writer itself.
pub const EVENT_KEY: &str = "Event";
/// Keys the block writer emits itself. The reference refuses `Event` and silently drops
/// `Timestamp`; both are programmer errors here.
const RESERVED_FIELD_KEYS: [&str; 2] = [EVENT_KEY, TIMESTAMP_KEY];

/// The line a later append writes under a torn tail (a block an interrupted write cut short)
/// before its own block, so that the fragment becomes a piece of its own between two
/// separators. As a `Note` it also makes a reference reader that reads the fragment anyway see
/// a noted pass (a non-evaluation), never an unnoted one; this crate's reader skips the piece.
pub const TORN_BLOCK_CLOSING_LINE: &str = "**Note**: script-error: torn-block (an interrupted write cut this block short; a later append closed it)";

// --- Rows written ------------------------------------------------------------------------------

/// One audit event before it is stamped: `## <heading>` (see [`heading_of`]), `**Event**:
/// <event>`, then the fields in order. Keys are valid by construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    event: &'static str,
    fields: Vec<(&'static str, String)>,
}

impl AuditRow {
    /// A row with checked keys: each matches `^[A-Za-z][A-Za-z0-9 ._()/-]*$` and none is
    /// `Event` or `Timestamp`.
    pub fn new(
        event: &'static str,
        fields: Vec<(&'static str, String)>,
    ) -> Result<Self, LedgerError> {
        for (key, _) in &fields {
            check_field_key(key)?;
        }
        Ok(Self { event, fields })
    }

    pub fn event(&self) -> &'static str {
        self.event
    }

    pub fn fields(&self) -> &[(&'static str, String)] {
        &self.fields
    }

    /// For the rows of `event.rs`, whose keys are constants (a unit test checks them).
    pub(super) fn trusted(event: &'static str, fields: Vec<(&'static str, String)>) -> Self {
        Self { event, fields }
    }
}

/// Whether `key` is one Markdown label on one line: `^[A-Za-z][A-Za-z0-9 ._()/-]*$`.
pub fn is_valid_field_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b" ._()/-".contains(&b))
}

pub(super) fn check_field_key(key: &str) -> Result<(), LedgerError> {
    if RESERVED_FIELD_KEYS.contains(&key) {
        return Err(LedgerError::ReservedFieldKey {
            key: key.to_owned(),
        });
    }
    if !is_valid_field_key(key) {
        return Err(LedgerError::InvalidFieldKey {
            key: key.to_owned(),
        });
    }
    Ok(())
}

// --- Formatting --------------------------------------------------------------------------------

/// A field value on one line: `\r\n`, `\r`, `\n`, U+2028 and U+2029 each become the two
/// characters `\n`, so no value can forge a second field or block.
pub fn escape_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    let mut characters = value.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\r' => {
                characters.next_if_eq(&'\n');
                escaped.push_str("\\n");
            }
            '\n' | '\u{2028}' | '\u{2029}' => escaped.push_str("\\n"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The bytes of one block:
/// `\n## <Heading>\n**Timestamp**: <ts>\n**Event**: <EVENT>\n**<Key>**: <value>\n…\n---\n`
/// (one blank line before the `---`).
pub fn format_block(row: &AuditRow, timestamp: &str) -> String {
    use std::fmt::Write as _;
    debug_assert!(
        row.fields
            .iter()
            .all(|(key, _)| check_field_key(key).is_ok()),
        "an audit row was built with a bad key"
    );
    let mut block = format!(
        "\n## {}\n**{TIMESTAMP_KEY}**: {timestamp}\n**{EVENT_KEY}**: {}\n",
        heading_of(row.event),
        row.event
    );
    for (key, value) in &row.fields {
        let _ = writeln!(block, "**{key}**: {}", escape_value(value));
    }
    block.push_str(BLOCK_SEPARATOR);
    block
}

/// A block's heading: its event name in title case, as the reference writes every row
/// (`SENSOR_BUDGET_OVERRIDE` is `Sensor Budget Override`).
fn heading_of(event: &str) -> String {
    let words: Vec<String> = event
        .split('_')
        .map(|word| {
            let (first, rest) = word.split_at(word.chars().next().map_or(0, char::len_utf8));
            first.to_owned() + &rest.to_lowercase()
        })
        .collect();
    words.join(" ")
}

/// A path as an audit field: backslashes become `/`; the project itself is `.`; a path under
/// the project loses the `<project>/` prefix (compared case-insensitively when it starts with a
/// Windows drive letter); any other path is kept, normalised. Nothing is canonicalised.
pub fn relative_path_field(project_dir: &Utf8Path, path: &str) -> String {
    let normalised_path = path.replace('\\', "/");
    let normalised_project = project_dir.as_str().replace('\\', "/");
    let normalised_project = normalised_project.trim_end_matches('/');
    let path_key = drive_insensitive_key(&normalised_path);
    let project_key = drive_insensitive_key(normalised_project);
    if path_key == project_key {
        return ".".to_owned();
    }
    let under_project = path_key
        .strip_prefix(project_key.as_str())
        .is_some_and(|rest| rest.starts_with('/'));
    match normalised_path.get(normalised_project.len() + 1..) {
        Some(relative) if under_project => relative.to_owned(),
        _ => normalised_path,
    }
}

fn drive_insensitive_key(path: &str) -> String {
    let bytes = path.as_bytes();
    let has_drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    if has_drive {
        path.to_lowercase()
    } else {
        path.to_owned()
    }
}

// --- Blocks read back ---------------------------------------------------------------------------

/// One block read back from a shard. `fields` holds every `**Key**: value` line except
/// Timestamp and Event, in order, values trimmed and still escaped (a `\n` in a value stays two
/// characters: the writer's escaping cannot be undone unambiguously).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditBlock {
    pub heading: String,
    pub timestamp: Option<String>,
    pub event: String,
    pub fields: Vec<(String, String)>,
}

impl AuditBlock {
    /// The first value of `key`, as the reference's `auditBlockField` reads it.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_terminator_becomes_backslash_n() {
        assert_eq!(
            escape_value("a\r\nb\rc\nd\u{2028}e\u{2029}f"),
            r"a\nb\nc\nd\ne\nf"
        );
        assert_eq!(escape_value("\n\r\r\n"), r"\n\n\n");
        assert_eq!(escape_value("plain: **x**"), "plain: **x**");
    }

    #[test]
    fn field_keys_are_one_label() {
        for key in [
            "Fire id",
            "Sensor ID",
            "Output path",
            "Cap value (s)",
            "a.b/c-d_e",
        ] {
            assert!(is_valid_field_key(key), "{key}");
        }
        for key in ["", "1st", " lead", "Key:", "a**b", "multi\nline", "ünï"] {
            assert!(!is_valid_field_key(key), "{key:?}");
        }
    }

    #[test]
    fn rows_refuse_bad_and_reserved_keys() {
        let bad = AuditRow::new("E", vec![("Bad:key", String::new())]);
        assert!(matches!(bad, Err(LedgerError::InvalidFieldKey { .. })));
        for reserved in ["Event", "Timestamp"] {
            let row = AuditRow::new("E", vec![(reserved, String::new())]);
            assert!(matches!(row, Err(LedgerError::ReservedFieldKey { .. })));
        }
        assert!(AuditRow::new("E", vec![("Good key", "v".to_owned())]).is_ok());
    }

    #[test]
    fn values_are_escaped_in_blocks() {
        let row = AuditRow::new("E", vec![("Note", "a\nb\r\n**Event**: X".to_owned())]).unwrap();
        assert_eq!(
            format_block(&row, "T"),
            "\n## E\n**Timestamp**: T\n**Event**: E\n**Note**: a\\nb\\n**Event**: X\n\n---\n"
        );
    }

    #[test]
    fn path_fields_are_project_relative() {
        let project = Utf8Path::new("/work/proj");
        let cases = [
            ("/work/proj/aidlc/x.md", "aidlc/x.md"),
            ("/work/proj", "."),
            ("/work/proj/", ""),
            ("/work/project/x.md", "/work/project/x.md"),
            ("/elsewhere/x.md", "/elsewhere/x.md"),
            ("relative/x.md", "relative/x.md"),
        ];
        for (path, expected) in cases {
            assert_eq!(relative_path_field(project, path), expected, "{path}");
        }
        assert_eq!(
            relative_path_field(Utf8Path::new("/work/proj/"), "/work/proj/a"),
            "a"
        );
    }

    #[test]
    fn windows_paths_compare_drive_letters_case_insensitively() {
        let project = Utf8Path::new(r"C:\Users\Me\Proj");
        assert_eq!(
            relative_path_field(project, r"c:\users\me\proj\aidlc\x.md"),
            "aidlc/x.md"
        );
        assert_eq!(relative_path_field(project, r"C:\Users\Me\Proj"), ".");
        assert_eq!(
            relative_path_field(project, r"D:\Other\x.md"),
            "D:/Other/x.md"
        );
    }
}
