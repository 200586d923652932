//! Problems in the user's files, as plain values.
//!
//! Queries return diagnostics inside their results (never through salsa accumulators and never
//! by printing); only `cli` turns them into text, through the report stack (`report`).
//!
//! Message style: a terse sentence that stands alone, naming the offending value; `help` says how
//! to fix it. Messages that the reference implementation also prints keep the reference's wording
//! so that people moving between the two recognise them.

use std::ops::Range;

use camino::Utf8PathBuf;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Severity {
    Error,
    Warning,
}

/// A closed set of diagnostic codes. Names describe the problem, not the fix; the code a user
/// sees is the variant's name in kebab-case. Each code has its section of `docs/diagnostics.md`
/// (its messages, an example, how to fix it), under `## <code>` in the enum's order; a test keeps
/// the page's sections equal to the codes. Serialised (in the compile fingerprint) by variant
/// name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    strum::Display,
    strum::EnumIter,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Code {
    // Reading files.
    /// An input file was listed but could not be read (for example, no read permission).
    UnreadableFile,
    /// The file's bytes are not valid UTF-8.
    InvalidUtf8,
    /// The file contains a NUL byte in its first 8 KiB, so it is taken for a binary file, not Markdown.
    BinaryFile,
    /// The file is larger than 4 MiB (4194304 bytes), the limit for an input file.
    FileTooLarge,
    // Frontmatter and YAML.
    /// The file does not start with a `---` line, or the `---` that opens the frontmatter is never closed.
    MissingFrontmatter,
    /// The frontmatter is not valid YAML, or it is valid YAML but not a mapping of `key: value` lines.
    YamlSyntax,
    /// A key appears twice in the same mapping.
    DuplicateKey,
    /// A top-level field has a `# comment` after its value on the same line.
    TrailingComment,
    /// The frontmatter uses a YAML feature this engine does not accept.
    UnsupportedYaml,
    // Sensor manifests.
    /// A required field is absent, or present with an empty value (`key:` with nothing after it is an empty value, never the next line).
    MissingRequiredField,
    /// A sensor manifest field has a value of the wrong shape or outside its allowed set.
    InvalidFieldValue,
    /// A manifest's `id:` differs from the id its file name declares (`aidlc-<id>.md`).
    SensorIdMismatch,
    /// Two manifests declare the same `id:`.
    DuplicateSensorId,
    /// A warning: a file in the sensors folder looks like a manifest but the discovery rule does not load it, so it never fires.
    SkippedSensorFile,
    // Stage definitions.
    /// A stage field has a value of the wrong shape or outside its allowed set.
    InvalidStageField,
    /// A stage file uses a key that is reserved for a feature not active yet.
    ReservedStageKey,
    /// A stage file uses `bundle:`, which was renamed.
    RenamedStageKey,
    /// A stage file has a key that is not a stage field.
    UnknownStageKey,
    /// A stage's `lead_agent`, `support_agents` entry or `reviewer` names no agent file.
    UnknownAgent,
    /// A stage file's name (without `.md`) differs from its `slug:`.
    StageSlugMismatch,
    /// Two stage files declare the same `slug:`.
    DuplicateStageSlug,
    /// A stage file sits in a folder that does not match a phase.
    UnknownPhaseDirectory,
    /// A warning: a file in the stages folder looks like a stage definition but discovery does not read it, so its stage is not compiled.
    SkippedStageFile,
    /// A stage's `plugin:` breaks the ownership rules.
    InvalidPluginField,
    /// The `plugins` key of `<harness>/tools/data/harness.json` (the plugin selection, docs/decisions.md D14) is not a list of distinct plugin names, or names a plugin the install does not have.
    InvalidPluginSelection,
    /// Only in a plugin's own tree (`aidlc compile` or `aidlc lsp` run in the folder that holds the plugin's manifest, docs/decisions.md D52): composing the plugin into the temporary default framework was refused, as `aidlc plugin add` would refuse it.
    PluginRefused,
    /// Only in the language server, in a plugin's own tree (docs/decisions.md D52): composing the plugin gave a warning that `aidlc plugin add` and `aidlc compile` there print as a `warning:` line.
    PluginCompositionWarning,
    /// A warning, on an install with composed plugins: a composed plugin's source changed since it was composed, so the installed copies are stale until `aidlc plugin sync` recomposes them.
    StalePluginCopy,
    /// The selection closure (docs/decisions.md D14): an enabled stage consumes a required artifact whose only producers are stages of plugins the selection disables.
    DisabledProducers,
    /// An artifact that some stage consumes is produced (in `produces:` or `optional_produces:`) by more than one stage.
    DuplicateProducer,
    /// A `requires_stage` entry names no stage.
    UnknownRequiresStage,
    /// A stage requires a stage whose number is not lower than its own.
    NumberInvariant,
    /// New stages (those not yet in the existing `stage-graph.json`) of one phase cannot be numbered because their `requires_stage` edges form a cycle.
    RequiresStageCycle,
    /// A warning: the stage is the per-unit build stage (`for_each: unit-of-work` and `workspace_requires: true`) but its `mode` is not `subagent`.
    SwarmAdvisory,
    // Resolution.
    /// A stage's `sensors:` list names an id that no loaded manifest declares.
    UnknownSensorImport,
    /// A stage imports a gate-fired sensor (`fire_on: gate`) that can never fire for it.
    DeadSensorBinding,
    /// A rule file's frontmatter has a `pairing:` field with a value that is neither `feedforward-only` nor a sensor id shape.
    InvalidRulePairing,
    /// A scope file in `<harness>/scopes/` has an invalid field, or repeats another scope's name.
    InvalidScopeFile,
    /// The existing `stage-graph.json` is not a JSON array of stage nodes, so stage numbers cannot be pinned from it.
    MalformedStageGraph,
    /// The install keeps the shape of `stage-graph.json` its own reference tools write (D13): 2.5, 2.6 or the newest (`gate`), detected from the existing graph's keys, else from `<harness>/tools/aidlc-version.ts`, else the newest; `--graph-format` overrides it.
    NotInGraphFormat,
    /// A sensor manifest declares `default_severity: blocking` and fires on writes (`fire_on: write`, or no `fire_on`).
    WriteFiredBlocking,
    // Discovery.
    /// A warning: a sensor manifest or a stage file the compile read is a link (or lies in a linked folder) that resolves outside the project folder.
    LinkedInputOutsideProject,
}

impl Code {
    /// Every code, in the order of the enum (and of `docs/diagnostics.md`).
    pub fn all() -> impl Iterator<Item = Code> {
        <Code as strum::IntoEnumIterator>::iter()
    }

    /// The code as users see it: the variant's name in kebab-case (`unknown-agent`).
    pub fn as_str(self) -> &'static str {
        self.into()
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
    fn every_code_is_spelled_once() {
        let mut names: Vec<&str> = Code::all().map(Code::as_str).collect();
        let n_codes = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n_codes);
        assert_eq!(Code::InvalidUtf8.as_str(), "invalid-utf8");
        assert_eq!(
            Code::LinkedInputOutsideProject.to_string(),
            "linked-input-outside-project"
        );
    }
}
