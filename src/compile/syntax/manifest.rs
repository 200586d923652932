//! Sensor manifests: `<harness>/sensors/aidlc-<id>.md` → [`SensorManifest`].
//!
//! Follows the seed's "Sensor Manifest Schema" and the reference's validation order and
//! messages, reporting every violation (not only the first). Unknown keys are tolerated; unknown
//! values of the enum fields are refused.

use std::borrow::Cow;
use std::ops::Range;

use camino::Utf8Path;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::compile::syntax::document::{self, DocumentKind, FrontmatterChecker};
use crate::compile::syntax::field_schema::{
    AnyMapping, KebabCase, NonEmptyText, PositiveInteger, SensorKind, Text, inline_schema,
};
use crate::compile::syntax::yaml::{NodeKind, Style};
use crate::leaves::diagnostics::{Code, Diagnostic};
use crate::protocol::glob::SensorGlob;
use crate::protocol::selection::{FireOn, Severity};

// The manifest's `default_severity` and `fire_on` in the manifest's schema (`aidlc schema`):
// the values the parser accepts, each with what it means for the person editing the file.
// The types are the protocol's, which knows nothing of schemas.
inline_schema!(
    Severity,
    json_schema!({
        "description": "How a failure of the sensor weighs at the stage's gate.",
        "oneOf": [
            {
                "description": "Findings are reported; the gate still opens.",
                "type": "string",
                "const": Severity::Advisory.as_str()
            },
            {
                "description": "Findings, or a fire that could not be evaluated, stop the stage's gate.",
                "type": "string",
                "const": Severity::Blocking.as_str()
            }
        ]
    })
);

inline_schema!(
    FireOn,
    json_schema!({
        "description": "When the sensor fires.",
        "oneOf": [
            {
                "description": "When an agent writes a file that `matches` selects (the write hook).",
                "type": "string",
                "const": FireOn::Write.as_str()
            },
            {
                "description": "When the stage's approval gate opens, once per declared deliverable.",
                "type": "string",
                "const": FireOn::Gate.as_str()
            }
        ]
    })
);

pub use crate::compile::syntax::vocabulary::SENSOR_KINDS;

/// A sensor manifest: the YAML frontmatter of `<harness>/sensors/aidlc-<id>.md`, as
/// `aidlc compile` reads it. Keys not listed here are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Hash, JsonSchema)]
#[schemars(title = "AI-DLC sensor manifest")]
pub struct SensorManifest {
    /// The sensor id: the file name without `aidlc-` and `.md` (lowercase letters, digits and
    /// hyphens, starting with a letter). Stages import the sensor by this id.
    #[schemars(with = "KebabCase")]
    pub id: String,
    #[schemars(skip)]
    pub id_span: Range<usize>,
    /// What runs the check; only `deterministic` (a program) in this release.
    #[schemars(with = "SensorKind")]
    pub kind: String,
    /// The program and its first arguments (`sh tools/check.sh`, `aidlc engine sensor-<id>`),
    /// run from the project folder with `--stage` and `--output-path` (or `--file-path`)
    /// appended. A shipped sensor's id runs its built-in check whatever this says.
    #[schemars(with = "NonEmptyText")]
    pub command: String,
    /// Whether a failure stops the stage's gate (`blocking`) or is only reported (`advisory`).
    pub default_severity: Severity,
    /// When the sensor fires: `write` (default) on an agent's write of a matching file, or
    /// `gate` when the stage's gate opens.
    #[schemars(with = "Option<FireOn>")]
    pub fire_on: FireOn,
    /// One line saying what the sensor checks (`aidlc engine sensor list` shows it).
    #[schemars(with = "NonEmptyText")]
    pub description: String,
    /// A free label grouping sensors in reports, e.g. `document-shape`.
    #[schemars(with = "Option<Text>")]
    pub category: Option<String>,
    /// The glob the project-relative path of a file must match for the sensor to fire on it,
    /// e.g. `"**/*.md"` (`**/` also matches no folder). Absent or `""`: every file.
    pub matches: Option<String>,
    /// Where the `matches` value is written, when it is kept.
    #[schemars(skip)]
    pub matches_span: Option<Range<usize>>,
    /// The worker's inputs as a mapping; its keys choose the path flag (`file_path` gives
    /// `--file-path`, otherwise `--output-path`). Only the key set is read.
    #[schemars(rename = "input_schema", with = "Option<AnyMapping>")]
    pub input_schema_keys: Option<Vec<String>>,
    /// How long one fire may run, in whole seconds (default 1200); the worker's process group
    /// is killed when it runs out.
    #[schemars(with = "Option<PositiveInteger>")]
    pub timeout_seconds: Option<u64>,
}

/// The id a manifest file name declares: `aidlc-<id>.md` with `<id>` matching
/// `[a-z][a-z0-9-]*`. `None` for any other name (the file is not loaded).
pub fn sensor_id_from_file_name(file_name: &str) -> Option<&str> {
    let id = file_name.strip_prefix("aidlc-")?.strip_suffix(".md")?;
    crate::compile::syntax::stage::is_kebab_case(id).then_some(id)
}

const REQUIRED_FIELDS: [&str; 5] = ["id", "kind", "command", "default_severity", "description"];

/// The result of reading a manifest, including the id it declares even when it is invalid
/// (duplicate ids are detected on declared ids, before validation, as the reference does).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParsedManifest {
    pub manifest: Option<SensorManifest>,
    pub declared_id: Option<(String, Range<usize>)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse and validate one manifest. `file` is the project-relative path used in diagnostics;
/// `filename_id` is the id its file name declares.
pub fn parse_manifest(text: &str, file: &Utf8Path, filename_id: &str) -> ParsedManifest {
    let mut diagnostics = Vec::new();
    let Some(map) =
        document::read_frontmatter(text, file, DocumentKind::SensorManifest, &mut diagnostics)
    else {
        return ParsedManifest {
            manifest: None,
            declared_id: None,
            diagnostics,
        };
    };
    let declared_id = map.value("id").and_then(|node| {
        document::scalar_string(node)
            .filter(|id| !id.trim().is_empty())
            .map(|id| (id.to_owned(), node.span.clone()))
    });
    let mut checker = FrontmatterChecker {
        map: &map,
        file,
        diagnostics,
    };
    let manifest = checker.check_manifest(filename_id);
    let FrontmatterChecker { diagnostics, .. } = checker;
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    ParsedManifest {
        manifest: if has_errors { None } else { manifest },
        declared_id,
        diagnostics,
    }
}

/// The sensor manifest's checks.
impl FrontmatterChecker<'_> {
    fn check_manifest(&mut self, filename_id: &str) -> Option<SensorManifest> {
        let missing = self
            .map
            .missing_required(REQUIRED_FIELDS, self.file, " to the frontmatter");
        self.diagnostics.extend(missing);
        let id = self.id(filename_id);
        let kind = self.kind();
        let command = self.non_empty_string("command");
        let default_severity = self.default_severity();
        let fire_on = self.fire_on();
        let description = self.non_empty_string("description");
        let category = self.string_value("category").map(|(text, _)| text);
        let matches = self.matches();
        let input_schema_keys = self.input_schema_keys();
        let timeout_seconds = self.timeout_seconds();
        let (id, id_span) = id?;
        Some(SensorManifest {
            id,
            id_span,
            kind: kind?,
            command: command?,
            default_severity: default_severity?,
            fire_on: fire_on?,
            description: description?,
            category,
            matches_span: matches.as_ref().map(|(_, span)| span.clone()),
            matches: matches.map(|(glob, _)| glob),
            input_schema_keys,
            timeout_seconds: timeout_seconds.ok()?,
        })
    }

    /// The text and span of `field`'s scalar value; a list or a mapping is refused.
    fn string_value(&mut self, field: &str) -> Option<(String, Range<usize>)> {
        let node = self.map.value(field)?;
        if let Some(text) = document::scalar_string(node) {
            Some((text.to_owned(), node.span.clone()))
        } else {
            self.error(
                Code::InvalidFieldValue,
                format!("{field} must be a non-empty string"),
                node.span.clone(),
                format!("write `{field}:` followed by a single value on the same line"),
            );
            None
        }
    }

    fn non_empty_string(&mut self, field: &str) -> Option<String> {
        let (text, span) = self.string_value(field)?;
        if text.trim().is_empty() {
            self.error(
                Code::InvalidFieldValue,
                format!("{field} must be a non-empty string"),
                span,
                format!("give `{field}` a value"),
            );
            return None;
        }
        Some(text)
    }

    /// `matches` as the one matcher (D5) will read it at fire time: a pattern that globset does
    /// not parse is refused here, not when the first write or gate fires it. Only the parse
    /// decides validity, so no regex is compiled to learn it. `matches: ""` is
    /// dropped, as if omitted (the seed).
    fn matches(&mut self) -> Option<(String, Range<usize>)> {
        let (pattern, span) = self.string_value("matches")?;
        if pattern.is_empty() {
            return None;
        }
        if let Err(error) = SensorGlob::validate(&pattern) {
            self.error(
                Code::InvalidFieldValue,
                format!(
                    "matches is not a valid glob: {} (got \"{pattern}\")",
                    error.reason
                ),
                span,
                "close every `{` and `[`, and escape a literal one as `[{]` or `[[]`; e.g. `matches: \"**/*.md\"`",
            );
            return None;
        }
        Some((pattern, span))
    }

    fn id(&mut self, filename_id: &str) -> Option<(String, Range<usize>)> {
        let (id, span) = self.string_value("id")?;
        if id.trim().is_empty() {
            self.error(
                Code::InvalidFieldValue,
                "id must be a non-empty string".to_owned(),
                span,
                "set `id:` to the file name without `aidlc-` and `.md`",
            );
            return None;
        }
        if id != filename_id {
            self.diagnostics.push(
                Diagnostic::error(
                    Code::SensorIdMismatch,
                    format!("id \"{id}\" must match filename stem \"{filename_id}\" (file should be aidlc-{id}.md)"),
                )
                .in_file(self.file)
                .at(span)
                .with_label(format!("the file name declares `{filename_id}`"))
                .with_help(format!("rename the file to aidlc-{id}.md, or set `id: {filename_id}`")),
            );
            return None;
        }
        Some((id, span))
    }

    fn kind(&mut self) -> Option<String> {
        let (kind, span) = self.string_value("kind")?;
        if !SENSOR_KINDS.contains(&kind.as_str()) {
            self.error(
                Code::InvalidFieldValue,
                format!("kind must be \"deterministic\" (got \"{kind}\"); other kinds reserved for future releases"),
                span,
                "only `kind: deterministic` is accepted in this release",
            );
            return None;
        }
        Some(kind)
    }

    fn default_severity(&mut self) -> Option<Severity> {
        let (value, span) = self.string_value("default_severity")?;
        let severity: Option<Severity> = value.parse().ok();
        if severity.is_none() {
            self.error(
                Code::InvalidFieldValue,
                format!(
                    "default_severity must be one of: \"advisory\", \"blocking\" (got \"{value}\")"
                ),
                span,
                "use `advisory` (reports only) or `blocking` (a failed gate check stops the gate)",
            );
        }
        severity
    }

    fn fire_on(&mut self) -> Option<FireOn> {
        let Some((value, span)) = self.string_value("fire_on") else {
            // Absent, empty or of the wrong shape: the wrong shape has already been reported.
            let wrong_shape = self.map.value("fire_on").is_some();
            return (!wrong_shape).then_some(FireOn::Write);
        };
        // An empty value means the default, as an absent one does.
        if value.is_empty() {
            return Some(FireOn::Write);
        }
        let fire_on: Option<FireOn> = value.parse().ok();
        if fire_on.is_none() {
            self.error(
                Code::InvalidFieldValue,
                format!("fire_on must be one of: \"write\", \"gate\" (got \"{value}\")"),
                span,
                "use `write` (fires when an agent writes a matching file) or `gate` (fires when the stage's gate opens)",
            );
        }
        fire_on
    }

    /// `input_schema` as a block or flow mapping; its key set picks the worker's path flag.
    /// `{}`, an empty value and a scalar all mean "nothing declared".
    fn input_schema_keys(&mut self) -> Option<Vec<String>> {
        let entries = self.map.value("input_schema")?.as_mapping()?;
        let keys: Vec<String> = entries
            .iter()
            .filter_map(|entry| entry.key.as_scalar().map(str::to_owned))
            .collect();
        (!keys.is_empty()).then_some(keys)
    }

    fn timeout_seconds(&mut self) -> Result<Option<u64>, ()> {
        let Some(node) = self.map.value("timeout_seconds") else {
            return Ok(None);
        };
        if let NodeKind::Scalar {
            style: style @ (Style::Quoted | Style::Block),
            ..
        } = node.kind
        {
            let written = if style == Style::Quoted {
                "a quoted string"
            } else {
                "a block scalar"
            };
            self.error(
                Code::InvalidFieldValue,
                format!(
                    "timeout_seconds must be a positive integer, not {written} (got {})",
                    document::shown_value(node)
                ),
                node.span.clone(),
                "write the number without quotes, e.g. `timeout_seconds: 300`",
            );
            return Err(());
        }
        let text = document::scalar_string(node).unwrap_or_default().trim();
        match text.parse::<u64>() {
            Ok(seconds) if seconds > 0 && text.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(Some(seconds))
            }
            _ => {
                let shown = &document::shown_value(node);
                self.error(
                    Code::InvalidFieldValue,
                    format!("timeout_seconds must be a positive integer (got {shown})"),
                    node.span.clone(),
                    "write a whole number of seconds greater than zero, e.g. `timeout_seconds: 300`",
                );
                Err(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> (Option<SensorManifest>, Vec<String>) {
        let parsed = parse_manifest(text, Utf8Path::new(".claude/sensors/aidlc-demo.md"), "demo");
        (
            parsed.manifest,
            parsed
                .diagnostics
                .into_iter()
                .map(|d| format!("{}: {}", d.code, d.message))
                .collect(),
        )
    }

    const GOOD: &str = "---\nid: demo\nkind: deterministic\ncommand: run-demo\ndefault_severity: advisory\ndescription: A demo\n---\nbody\n";

    #[test]
    fn minimal_manifest_defaults_fire_on_to_write() {
        let (manifest, problems) = check(GOOD);
        assert!(problems.is_empty(), "{problems:?}");
        let manifest = manifest.unwrap();
        assert_eq!(manifest.fire_on, FireOn::Write);
        assert_eq!(manifest.matches, None);
    }

    #[test]
    fn file_name_rule() {
        assert_eq!(sensor_id_from_file_name("aidlc-linter.md"), Some("linter"));
        assert_eq!(sensor_id_from_file_name("aidlc-Linter.md"), None);
        assert_eq!(sensor_id_from_file_name("linter.md"), None);
        assert_eq!(sensor_id_from_file_name("aidlc-1x.md"), None);
        assert_eq!(sensor_id_from_file_name("aidlc-x.yaml"), None);
    }

    #[test]
    fn sensor_file_names_follow_the_discovery_rule() {
        assert_eq!(
            sensor_id_from_file_name("aidlc-coverage-threshold.md"),
            Some("coverage-threshold")
        );
        assert_eq!(sensor_id_from_file_name("coverage.md"), None);
        assert_eq!(sensor_id_from_file_name("aidlc-Upper.md"), None);
        assert_eq!(sensor_id_from_file_name("aidlc-x.txt"), None);
    }

    #[test]
    fn every_violation_is_reported() {
        let (manifest, problems) = check(
            "---\nid: other\nkind: llm\ndefault_severity: critical\nfire_on: always\ntimeout_seconds: 300s\n---\n",
        );
        assert!(manifest.is_none());
        assert_eq!(
            problems,
            [
                "missing-required-field: missing required field: command",
                "missing-required-field: missing required field: description",
                "sensor-id-mismatch: id \"other\" must match filename stem \"demo\" (file should be aidlc-other.md)",
                "invalid-field-value: kind must be \"deterministic\" (got \"llm\"); other kinds reserved for future releases",
                "invalid-field-value: default_severity must be one of: \"advisory\", \"blocking\" (got \"critical\")",
                "invalid-field-value: fire_on must be one of: \"write\", \"gate\" (got \"always\")",
                "invalid-field-value: timeout_seconds must be a positive integer (got \"300s\")",
            ]
        );
    }

    #[test]
    fn empty_matches_is_dropped_and_input_schema_keys_are_kept() {
        let text = GOOD.replace(
            "---\nbody",
            "matches: \"\"\ninput_schema: { file_path: string, deliverables: \"string[]\" } # flow\n---\nbody",
        );
        let (manifest, problems) = check(&text);
        assert!(problems.is_empty(), "{problems:?}");
        let manifest = manifest.unwrap();
        assert_eq!(manifest.matches, None);
        assert_eq!(
            manifest.input_schema_keys,
            Some(vec!["file_path".to_owned(), "deliverables".to_owned()])
        );
    }

    #[test]
    fn unquoted_brackets_in_a_flow_mapping_are_a_yaml_error() {
        let text = GOOD.replace(
            "---\nbody",
            "input_schema: { deliverables: string[] }\n---\nbody",
        );
        let (manifest, problems) = check(&text);
        assert!(manifest.is_none());
        assert!(problems[0].starts_with("yaml-syntax:"), "{problems:?}");
    }

    #[test]
    fn bad_timeouts_are_refused() {
        for bad in ["0", "-5", "1.5", "300s", "[1]"] {
            let text = GOOD.replace("---\nbody", &format!("timeout_seconds: {bad}\n---\nbody"));
            let (manifest, problems) = check(&text);
            assert!(manifest.is_none(), "{bad}");
            assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
        }
    }

    #[test]
    fn a_timeout_must_be_written_as_a_number() {
        for (written, shown) in [
            ("\"30\"", "a quoted string (got \"30\")"),
            ("'30'", "a quoted string (got \"30\")"),
            ("|\n  30", "a block scalar (got \"30\n\")"),
        ] {
            let text = GOOD.replace(
                "---\nbody",
                &format!("timeout_seconds: {written}\n---\nbody"),
            );
            let (manifest, problems) = check(&text);
            assert!(manifest.is_none(), "{written}");
            assert_eq!(
                problems,
                [format!(
                    "invalid-field-value: timeout_seconds must be a positive integer, not {shown}"
                )],
                "{written}"
            );
        }
        let text = GOOD.replace("---\nbody", "timeout_seconds: 30\n---\nbody");
        assert_eq!(check(&text).0.unwrap().timeout_seconds, Some(30));
    }

    #[test]
    fn a_matches_that_does_not_compile_is_refused_with_its_span() {
        for glob in ["**/{x", "**/[x", "[z-a]", "**/*.{ts"] {
            let text = GOOD.replace("---\nbody", &format!("matches: \"{glob}\"\n---\nbody"));
            let ParsedManifest {
                manifest,
                diagnostics,
                ..
            } = parse_manifest(
                &text,
                Utf8Path::new(".claude/sensors/aidlc-demo.md"),
                "demo",
            );
            assert!(manifest.is_none(), "{glob}");
            assert_eq!(diagnostics.len(), 1, "{glob}: {diagnostics:?}");
            let problem = &diagnostics[0];
            assert!(
                problem.message.starts_with("matches is not a valid glob: ")
                    && problem.message.ends_with(&format!("(got \"{glob}\")")),
                "{}",
                problem.message
            );
            assert_eq!(&text[problem.span.clone().unwrap()], format!("\"{glob}\""));
        }
    }

    #[test]
    fn a_kept_matches_remembers_where_it_is_written() {
        let text = GOOD.replace("---\nbody", "matches: \"**/*.md\"\n---\nbody");
        let manifest = check(&text).0.unwrap();
        assert_eq!(manifest.matches.as_deref(), Some("**/*.md"));
        assert_eq!(&text[manifest.matches_span.unwrap()], "\"**/*.md\"");
    }

    #[test]
    fn an_unquoted_matches_starting_with_a_star_is_the_glob() {
        let text = GOOD.replace("---\nbody", "matches: **/*.{ts,js}\n---\nbody");
        let (manifest, problems) = check(&text);
        assert!(problems.is_empty(), "{problems:?}");
        let manifest = manifest.unwrap();
        assert_eq!(manifest.matches.as_deref(), Some("**/*.{ts,js}"));
        assert_eq!(&text[manifest.matches_span.unwrap()], "**/*.{ts,js}");
    }

    #[test]
    fn trailing_comment_is_refused() {
        let text = GOOD.replace("kind: deterministic", "kind: deterministic # the only kind");
        let (manifest, problems) = check(&text);
        assert!(manifest.is_none());
        assert_eq!(
            problems,
            ["trailing-comment: comment after the value of `kind`"]
        );
    }

    #[test]
    fn bom_and_crlf_are_accepted() {
        let text = format!("\u{feff}{}", GOOD.replace('\n', "\r\n"));
        let (manifest, problems) = check(&text);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(manifest.unwrap().description, "A demo");
    }
}
