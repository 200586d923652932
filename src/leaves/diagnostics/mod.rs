//! Problems in the user's files, as plain values.
//!
//! Queries return diagnostics inside their results (never through salsa accumulators and never
//! by printing); only `cli` turns them into text, through the report stack (`report`).
//!
//! Message style: a terse sentence that stands alone, naming the offending value; `help` says how
//! to fix it. Messages that the reference implementation also prints keep the reference's wording
//! so that people moving between the two recognise them.

use std::fmt;
use std::ops::Range;

use camino::Utf8PathBuf;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A closed set of diagnostic codes. Names describe the problem, not the fix.
/// `docs/diagnostics.md` has one section per code (a test keeps the two in step).
/// Serialised (in the compile fingerprint) by variant name.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Code {
    // Reading files.
    UnreadableFile,
    InvalidUtf8,
    BinaryFile,
    FileTooLarge,
    // Frontmatter and YAML.
    MissingFrontmatter,
    YamlSyntax,
    DuplicateKey,
    TrailingComment,
    UnsupportedYaml,
    // Sensor manifests.
    MissingRequiredField,
    InvalidFieldValue,
    SensorIdMismatch,
    DuplicateSensorId,
    SkippedSensorFile,
    // Stage definitions.
    InvalidStageField,
    ReservedStageKey,
    RenamedStageKey,
    UnknownStageKey,
    UnknownAgent,
    StageSlugMismatch,
    DuplicateStageSlug,
    UnknownPhaseDirectory,
    SkippedStageFile,
    InvalidPluginField,
    InvalidPluginSelection,
    PluginRefused,
    PluginCompositionWarning,
    StalePluginCopy,
    DisabledProducers,
    DuplicateProducer,
    UnknownRequiresStage,
    NumberInvariant,
    RequiresStageCycle,
    SwarmAdvisory,
    // Resolution.
    UnknownSensorImport,
    DeadSensorBinding,
    InvalidRulePairing,
    InvalidScopeFile,
    MalformedStageGraph,
    NotInGraphFormat,
    WriteFiredBlocking,
    // Discovery.
    LinkedInputOutsideProject,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::UnreadableFile,
        Code::InvalidUtf8,
        Code::BinaryFile,
        Code::FileTooLarge,
        Code::MissingFrontmatter,
        Code::YamlSyntax,
        Code::DuplicateKey,
        Code::TrailingComment,
        Code::UnsupportedYaml,
        Code::MissingRequiredField,
        Code::InvalidFieldValue,
        Code::SensorIdMismatch,
        Code::DuplicateSensorId,
        Code::SkippedSensorFile,
        Code::InvalidStageField,
        Code::ReservedStageKey,
        Code::RenamedStageKey,
        Code::UnknownStageKey,
        Code::UnknownAgent,
        Code::StageSlugMismatch,
        Code::DuplicateStageSlug,
        Code::UnknownPhaseDirectory,
        Code::SkippedStageFile,
        Code::InvalidPluginField,
        Code::InvalidPluginSelection,
        Code::PluginRefused,
        Code::PluginCompositionWarning,
        Code::StalePluginCopy,
        Code::DisabledProducers,
        Code::DuplicateProducer,
        Code::UnknownRequiresStage,
        Code::NumberInvariant,
        Code::RequiresStageCycle,
        Code::SwarmAdvisory,
        Code::UnknownSensorImport,
        Code::DeadSensorBinding,
        Code::InvalidRulePairing,
        Code::InvalidScopeFile,
        Code::MalformedStageGraph,
        Code::NotInGraphFormat,
        Code::WriteFiredBlocking,
        Code::LinkedInputOutsideProject,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::UnreadableFile => "unreadable-file",
            Code::InvalidUtf8 => "invalid-utf8",
            Code::BinaryFile => "binary-file",
            Code::FileTooLarge => "file-too-large",
            Code::MissingFrontmatter => "missing-frontmatter",
            Code::YamlSyntax => "yaml-syntax",
            Code::DuplicateKey => "duplicate-key",
            Code::TrailingComment => "trailing-comment",
            Code::UnsupportedYaml => "unsupported-yaml",
            Code::MissingRequiredField => "missing-required-field",
            Code::InvalidFieldValue => "invalid-field-value",
            Code::SensorIdMismatch => "sensor-id-mismatch",
            Code::DuplicateSensorId => "duplicate-sensor-id",
            Code::SkippedSensorFile => "skipped-sensor-file",
            Code::InvalidStageField => "invalid-stage-field",
            Code::ReservedStageKey => "reserved-stage-key",
            Code::RenamedStageKey => "renamed-stage-key",
            Code::UnknownStageKey => "unknown-stage-key",
            Code::UnknownAgent => "unknown-agent",
            Code::StageSlugMismatch => "stage-slug-mismatch",
            Code::DuplicateStageSlug => "duplicate-stage-slug",
            Code::UnknownPhaseDirectory => "unknown-phase-directory",
            Code::SkippedStageFile => "skipped-stage-file",
            Code::InvalidPluginField => "invalid-plugin-field",
            Code::InvalidPluginSelection => "invalid-plugin-selection",
            Code::PluginRefused => "plugin-refused",
            Code::PluginCompositionWarning => "plugin-composition-warning",
            Code::StalePluginCopy => "stale-plugin-copy",
            Code::DisabledProducers => "disabled-producers",
            Code::DuplicateProducer => "duplicate-producer",
            Code::UnknownRequiresStage => "unknown-requires-stage",
            Code::NumberInvariant => "number-invariant",
            Code::RequiresStageCycle => "requires-stage-cycle",
            Code::SwarmAdvisory => "swarm-advisory",
            Code::UnknownSensorImport => "unknown-sensor-import",
            Code::DeadSensorBinding => "dead-sensor-binding",
            Code::InvalidRulePairing => "invalid-rule-pairing",
            Code::InvalidScopeFile => "invalid-scope-file",
            Code::MalformedStageGraph => "malformed-stage-graph",
            Code::NotInGraphFormat => "not-in-graph-format",
            Code::WriteFiredBlocking => "write-fired-blocking",
            Code::LinkedInputOutsideProject => "linked-input-outside-project",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secondary location that explains the primary one ("first declared here").
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Related {
    pub file: Utf8PathBuf,
    pub span: Option<Range<usize>>,
    pub message: String,
}

/// One problem, anchored to a project-relative file and (where known) a byte range in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Project-relative path with `/` separators; `None` for project-wide problems.
    pub file: Option<Utf8PathBuf>,
    pub span: Option<Range<usize>>,
    /// Text shown under the primary span.
    pub label: Option<String>,
    pub related: Vec<Related>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            message: message.into(),
            file: None,
            span: None,
            label: None,
            related: Vec::new(),
            help: None,
        }
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, message)
        }
    }

    #[must_use]
    pub fn in_file(mut self, file: impl Into<Utf8PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }

    #[must_use]
    pub fn at(mut self, span: Range<usize>) -> Self {
        self.span = Some(span);
        self
    }

    #[must_use]
    pub fn at_opt(mut self, span: Option<Range<usize>>) -> Self {
        self.span = span;
        self
    }

    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    #[must_use]
    pub fn with_related(
        mut self,
        file: impl Into<Utf8PathBuf>,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        self.related.push(Related {
            file: file.into(),
            span,
            message: message.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The best "did you mean" candidate, scored like clap (Jaro > 0.7), ties broken by name.
pub fn closest_match<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        let score = strsim::jaro(wanted, candidate);
        if score <= 0.7 {
            continue;
        }
        let better = match best {
            None => true,
            Some((best_score, best_name)) => {
                score > best_score
                    || ((score - best_score).abs() < f64::EPSILON && candidate < best_name)
            }
        };
        if better {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_id() {
        let ids = ["required-sections", "upstream-coverage", "traceability"];
        assert_eq!(closest_match("traceabilty", ids), Some("traceability"));
        assert_eq!(closest_match("zzz", ids), None);
    }

    #[test]
    fn every_code_is_listed_once() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|code| code.as_str()).collect();
        let n_codes = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n_codes);
    }
}
