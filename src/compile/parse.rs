//! Tracked queries that parse one file each, plus the small per-folder catalogues (agents,
//! scopes, rules). A prose edit below a file's frontmatter re-runs only that file's parse, whose
//! result then compares equal (backdating), so nothing downstream re-runs.

use std::collections::BTreeMap;

use camino::Utf8Path;

use crate::compile::db::{FileContents, Project, SourceFile};
use crate::compile::syntax::document::{self, DocumentKind, FrontmatterMap};
use crate::compile::syntax::manifest::{self, ParsedManifest};
use crate::compile::syntax::stage::{self, StageDefinition};
use crate::leaves::diagnostics::{Code, Diagnostic};

/// The file's text, or the diagnostic explaining why it cannot be read.
#[expect(
    clippy::result_large_err,
    reason = "the error path is cold: an unreadable input file"
)]
pub fn source_text(db: &dyn salsa::Database, file: SourceFile) -> Result<&str, Diagnostic> {
    contents_text(file.path(db), file.contents(db))
}

/// The text of an input file as read, or the diagnostic that says why it has none (for
/// [`source_text`], and for readers that hold the contents without a database).
#[expect(
    clippy::result_large_err,
    reason = "the error path is cold: an unreadable input file"
)]
pub fn contents_text<'c>(
    path: &Utf8Path,
    contents: &'c FileContents,
) -> Result<&'c str, Diagnostic> {
    let problem = match contents {
        FileContents::Text(text) => return Ok(text.as_str()),
        FileContents::Unreadable(error) => Diagnostic::error(
            Code::UnreadableFile,
            format!("cannot read the file: {error}"),
        )
        .with_help("check the file's permissions"),
        FileContents::InvalidUtf8 { valid_up_to } => Diagnostic::error(
            Code::InvalidUtf8,
            format!("the file is not valid UTF-8 (first bad byte at offset {valid_up_to})"),
        )
        .with_help("save the file as UTF-8"),
        FileContents::Binary => Diagnostic::error(
            Code::BinaryFile,
            "the file looks binary (it contains NUL bytes), not Markdown",
        )
        .with_help("remove it or replace it with a Markdown file"),
        FileContents::TooLarge { size, limit } => Diagnostic::error(
            Code::FileTooLarge,
            format!("the file is {size} bytes; inputs larger than {limit} bytes are refused"),
        )
        .with_help("keep frontmatter files small; move large content elsewhere"),
    };
    Err(problem.in_file(path))
}

#[salsa::tracked(returns(ref))]
pub fn parsed_manifest(db: &dyn salsa::Database, file: SourceFile) -> ParsedManifest {
    parse_manifest_file(file.path(db), file.contents(db))
}

/// A manifest file parsed and checked, from its project-relative path and its contents: what
/// [`parsed_manifest`] memoises, and what the dispatcher's live registry reads without a
/// database.
pub fn parse_manifest_file(path: &Utf8Path, contents: &FileContents) -> ParsedManifest {
    let text = match contents_text(path, contents) {
        Ok(text) => text,
        Err(diagnostic) => {
            return ParsedManifest {
                manifest: None,
                declared_id: None,
                diagnostics: vec![diagnostic],
            };
        }
    };
    let filename_id = path
        .file_name()
        .and_then(manifest::sensor_id_from_file_name)
        .unwrap_or_default();
    manifest::parse_manifest(text, path, filename_id)
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParsedStage {
    pub definition: Option<StageDefinition>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn parsed_stage(db: &dyn salsa::Database, file: SourceFile) -> ParsedStage {
    let (definition, diagnostics) = match source_text(db, file) {
        Ok(text) => stage::parse_stage(text, file.path(db)),
        Err(diagnostic) => (None, vec![diagnostic]),
    };
    ParsedStage {
        definition,
        diagnostics,
    }
}

/// The spanned top-level mapping of a file's frontmatter, read by the compile's own YAML reader
/// (`syntax::document::read_frontmatter`) even when the typed checks refuse the file: what an
/// editor navigates and completes by while the file is half written. `None` when the file is
/// not text or has no usable frontmatter; the compile's diagnostics say why. Only the language
/// server reads it, so a compile never runs it.
#[salsa::tracked(returns(ref))]
pub fn frontmatter_outline(db: &dyn salsa::Database, file: SourceFile) -> Option<FrontmatterMap> {
    let text = source_text(db, file).ok()?;
    // The problems are the typed parse's to report; the outline only reads what is there.
    let mut problems = Vec::new();
    document::read_frontmatter(text, file.path(db), DocumentKind::Stage, &mut problems)
}

/// Agent slugs (the `name:` of each agent file) and the problems found reading them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AgentRoster {
    pub names: BTreeMap<String, camino::Utf8PathBuf>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn agent_roster(db: &dyn salsa::Database) -> AgentRoster {
    let project = Project::get(db);
    let mut roster = AgentRoster::default();
    for &file in project.agent_files(db) {
        let Some(fields) = named_document(
            db,
            file,
            DocumentKind::Agent,
            &["name", "display_name"],
            &mut roster.diagnostics,
        ) else {
            continue;
        };
        let name = fields.name;
        let path = file.path(db).clone();
        if let Some(first) = roster.names.get(&name) {
            roster.diagnostics.push(
                Diagnostic::error(
                    Code::DuplicateKey,
                    format!("Duplicate agent slug \"{name}\" in {path}: already declared in {first}. Rename one of them."),
                )
                .in_file(&path)
                .at(fields.name_span)
                .with_help("give each agent file a unique `name:`"),
            );
        } else {
            roster.names.insert(name, path);
        }
    }
    roster
}

/// Scope names declared by the scope files.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ScopeCatalog {
    pub names: BTreeMap<String, camino::Utf8PathBuf>,
    /// The plugin each scope declares (`plugin:`), for the scopes that declare one; the others
    /// are the core's (docs/decisions.md D14).
    pub owners: BTreeMap<String, String>,
    /// The scopes that declare `freeform_default: true`, by name, with the file and the span
    /// of the value (at most one enabled scope may, docs/decisions.md D51).
    pub freeform_defaults: BTreeMap<String, (camino::Utf8PathBuf, std::ops::Range<usize>)>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn scope_catalog(db: &dyn salsa::Database) -> ScopeCatalog {
    let project = Project::get(db);
    let mut catalog = ScopeCatalog::default();
    for &file in project.scope_files(db) {
        let Some(fields) = named_document(
            db,
            file,
            DocumentKind::Scope,
            &["name"],
            &mut catalog.diagnostics,
        ) else {
            continue;
        };
        let path = file.path(db).clone();
        let mut problem = |message: String, span: std::ops::Range<usize>, help: &str| {
            catalog.diagnostics.push(
                Diagnostic::error(Code::InvalidScopeFile, message)
                    .in_file(&path)
                    .at(span)
                    .with_help(help),
            );
        };
        if let Some((plugin, span)) = fields
            .scalar("plugin")
            .filter(|(plugin, _)| plugin.starts_with("aidlc-"))
        {
            problem(
                format!(
                    "Scope file {path} declares plugin \"{plugin}\"; the \"aidlc-\" prefix is reserved for core (it collides with core runner paths). Rename the plugin."
                ),
                span,
                "pick a plugin name without the `aidlc-` prefix",
            );
        }
        for (key, allowed, expected, help) in [
            (
                "skeleton",
                &["on", "off"][..],
                "\"on\" or \"off\"",
                "write `skeleton: on` or `skeleton: off`",
            ),
            (
                "review_cap",
                &["adversarial", "advisory", "none"],
                "\"adversarial\", \"advisory\", or \"none\"",
                "use adversarial, advisory or none",
            ),
        ] {
            if let Some((value, span)) = fields
                .scalar(key)
                .filter(|(value, _)| !allowed.contains(&value.as_str()))
            {
                problem(
                    format!(
                        "Scope file {path} has invalid {key} value \"{value}\". Expected {expected}."
                    ),
                    span,
                    help,
                );
            }
        }
        if let Some(first) = catalog.names.get(&fields.name) {
            problem(
                format!(
                    "Duplicate scope name \"{}\" in {path}: already declared in {first}. Rename one of them.",
                    fields.name
                ),
                fields.name_span.clone(),
                "give each scope file a unique `name:`",
            );
        } else {
            catalog.names.insert(fields.name.clone(), path.clone());
            if let Some((plugin, _)) = fields
                .scalar("plugin")
                .filter(|(plugin, _)| !plugin.is_empty())
            {
                catalog.owners.insert(fields.name.clone(), plugin);
            }
            if let Some((_, span)) = fields
                .scalar("freeform_default")
                .filter(|(value, _)| value == "true")
            {
                catalog
                    .freeform_defaults
                    .insert(fields.name.clone(), (path.clone(), span));
            }
        }
    }
    catalog
}

struct NamedFields {
    name: String,
    name_span: std::ops::Range<usize>,
    map: FrontmatterMap,
}

impl NamedFields {
    /// The text and span of `key`'s scalar value.
    fn scalar(&self, key: &str) -> Option<(String, std::ops::Range<usize>)> {
        let node = self.map.value(key)?;
        Some((document::scalar_string(node)?.to_owned(), node.span.clone()))
    }
}

/// Read an agent or scope file: frontmatter with required scalar fields, the first being `name`.
fn named_document(
    db: &dyn salsa::Database,
    file: SourceFile,
    kind: DocumentKind,
    required: &[&str],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<NamedFields> {
    let path: &Utf8Path = file.path(db);
    let text = match source_text(db, file) {
        Ok(text) => text,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return None;
        }
    };
    let map = document::read_frontmatter(text, path, kind, diagnostics)?;
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|field| {
            map.value(field)
                .and_then(document::scalar_string)
                .is_none_or(|v| v.trim().is_empty())
        })
        .collect();
    if !missing.is_empty() {
        let noun = if matches!(kind, DocumentKind::Agent) {
            "Agent"
        } else {
            "Scope"
        };
        diagnostics.push(
            Diagnostic::error(
                Code::MissingRequiredField,
                format!(
                    "{noun} file {path} missing required frontmatter: {}",
                    missing.join(", ")
                ),
            )
            .in_file(path)
            .at(map.missing_span())
            .with_help(format!(
                "add {} to the frontmatter",
                missing
                    .iter()
                    .map(|f| format!("`{f}:`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )),
        );
        return None;
    }
    let (name, name_span) = {
        let node = map.value("name")?;
        (document::scalar_string(node)?.to_owned(), node.span.clone())
    };
    Some(NamedFields {
        name,
        name_span,
        map,
    })
}

/// One rule file in context for stages: `{path, scope}` in the graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleEntry {
    pub display_path: String,
    pub scope: &'static str,
    /// For phase rules, the phase they apply to.
    pub phase: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RuleSet {
    /// Sorted by scope priority (org, team, project, phase), then by display path.
    pub entries: Vec<RuleEntry>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn rule_set(db: &dyn salsa::Database) -> RuleSet {
    let project = Project::get(db);
    let root = project.rules_display_root(db);
    let mut rules = RuleSet::default();
    for entry in project.rule_files(db) {
        check_rule_pairing(db, entry.file, &mut rules.diagnostics);
        let (scope, phase) = match entry.relative.as_str() {
            "org.md" => ("org", None),
            "team.md" => ("team", None),
            "project.md" => ("project", None),
            other => (
                "phase",
                other
                    .strip_prefix("phases/")
                    .and_then(|name| name.strip_suffix(".md"))
                    .map(str::to_owned),
            ),
        };
        rules.entries.push(RuleEntry {
            display_path: format!("{root}/{}", entry.relative),
            scope,
            phase,
        });
    }
    let priority = |scope: &str| {
        ["org", "team", "project", "phase"]
            .iter()
            .position(|s| *s == scope)
            .unwrap_or(4)
    };
    rules.entries.sort_by(|a, b| {
        (priority(a.scope), &a.display_path).cmp(&(priority(b.scope), &b.display_path))
    });
    rules
}

/// A rule file may have no frontmatter at all; when it has `pairing:` the value must be
/// `feedforward-only` or a sensor id shape (`aidlc-…`).
fn check_rule_pairing(
    db: &dyn salsa::Database,
    file: SourceFile,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let path = file.path(db);
    let text = match source_text(db, file) {
        Ok(text) => text,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return;
        }
    };
    if crate::compile::syntax::frontmatter::split(text).is_err() {
        return;
    }
    let Some(map) = document::read_frontmatter(text, path, DocumentKind::Rule, diagnostics) else {
        return;
    };
    let Some(entry) = map.get("pairing") else {
        return;
    };
    match document::scalar_string(&entry.value).map(str::trim) {
        None | Some("") => diagnostics.push(
            Diagnostic::error(Code::InvalidRulePairing, "pairing must be a non-empty string")
                .in_file(path)
                .at(entry.value.span.clone())
                .with_help("write `pairing: feedforward-only` or `pairing: aidlc-<sensor-id>`"),
        ),
        Some(value) if value != "feedforward-only" && !value.starts_with("aidlc-") => diagnostics.push(
            Diagnostic::error(
                Code::InvalidRulePairing,
                format!("pairing must be \"feedforward-only\" or start with \"aidlc-\" (sensor id shape); got \"{value}\""),
            )
            .in_file(path)
            .at(entry.value.span.clone())
            .with_help(format!("to pair with a sensor write `pairing: aidlc-{value}`")),
        ),
        Some(_) => {}
    }
}
