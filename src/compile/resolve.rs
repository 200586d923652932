//! Resolution: the sensor registry, each stage's `sensors_applicable`, each sensor's compiled
//! `matches`, and the agent roster check. Each stage's resolution reads only the
//! bindings of the ids it imports, so editing one manifest re-resolves only the stages that
//! import it.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::db::{Project, SkippedSensorFile, SourceFile};
use crate::compile::parse::{agent_roster, parsed_manifest, parsed_stage};
use crate::compile::syntax::manifest::ParsedManifest;
use crate::leaves::diagnostics::{Code, Diagnostic, closest_match};
use crate::protocol::glob::SensorGlob;
use crate::protocol::stage_node::SensorEntry;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SensorRegistry {
    /// Each loaded manifest's binding, as the compile copies it into the stages that import it.
    pub by_id: BTreeMap<String, SensorEntry>,
    /// Where each loaded manifest writes its `matches` (project-relative file, byte range),
    /// for diagnostics that point at the glob.
    pub matches_sites: BTreeMap<String, (Utf8PathBuf, Range<usize>)>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn sensor_registry(db: &dyn salsa::Database) -> SensorRegistry {
    let project = Project::get(db);
    registry_of_manifests(
        project.harness_dir(db),
        project.skipped_sensor_files(db),
        project
            .sensor_files(db)
            .iter()
            .map(|&file| (file.path(db).as_path(), parsed_manifest(db, file))),
    )
}

/// The registry of the parsed manifests `manifests` (project-relative path and parse, in the
/// sensors folder's order) of the harness folder `harness_dir`, with a warning for each file
/// the listing skipped: what [`sensor_registry`] memoises, and what the dispatcher's live
/// registry builds without a database.
pub fn registry_of_manifests<'m>(
    harness_dir: &str,
    skipped_files: &[SkippedSensorFile],
    manifests: impl IntoIterator<Item = (&'m Utf8Path, &'m ParsedManifest)>,
) -> SensorRegistry {
    let mut registry = SensorRegistry::default();
    let mut declared: BTreeMap<String, String> = BTreeMap::new();
    for skipped in skipped_files {
        registry.diagnostics.push(
            Diagnostic::warning(skipped.code, format!("{} {}", skipped.path, skipped.reason))
                .in_file(&skipped.path)
                .with_help(skipped.help.clone()),
        );
    }
    for (path, parsed) in manifests {
        let registry_path = format!(
            "{harness_dir}/sensors/{}",
            path.file_name().unwrap_or_default()
        );
        registry
            .diagnostics
            .extend(parsed.diagnostics.iter().cloned());
        if let Some((id, span)) = &parsed.declared_id {
            if let Some(first) = declared.get(id) {
                registry.diagnostics.push(
                    Diagnostic::error(
                        Code::DuplicateSensorId,
                        format!("duplicate sensor id \"{id}\" — also declared in {first}. Rename one of them."),
                    )
                    .in_file(path)
                    .at(span.clone())
                    .with_label("declared again here")
                    .with_related(first.as_str(), None, "first declared in this file")
                    .with_help("each manifest needs its own id, equal to its file name without `aidlc-` and `.md`"),
                );
                continue;
            }
            declared.insert(id.clone(), registry_path.clone());
        }
        let Some(manifest) = &parsed.manifest else {
            continue;
        };
        if let Some(span) = &manifest.matches_span {
            registry
                .matches_sites
                .insert(manifest.id.clone(), (path.to_owned(), span.clone()));
        }
        registry.by_id.insert(
            manifest.id.clone(),
            SensorEntry {
                id: manifest.id.clone(),
                path: registry_path,
                fire_on: manifest.fire_on,
                default_severity: manifest.default_severity,
                category: manifest.category.clone(),
                matches: manifest.matches.clone(),
            },
        );
    }
    registry
}

#[salsa::interned(debug)]
pub struct SensorName<'db> {
    #[returns(ref)]
    pub text: String,
}

/// One id's binding. Backdates when an unrelated manifest changes, which is what keeps
/// stage resolution per-import.
#[salsa::tracked(returns(ref))]
pub fn sensor_binding<'db>(
    db: &'db dyn salsa::Database,
    name: SensorName<'db>,
) -> Option<SensorEntry> {
    sensor_registry(db).by_id.get(name.text(db)).cloned()
}

/// Ids named by the file names in the sensors folder, valid or not. An import of an id whose
/// manifest exists but failed to load is not reported again: that file's own diagnostics say why.
#[salsa::tracked(returns(ref))]
pub fn sensor_file_ids(db: &dyn salsa::Database) -> std::collections::BTreeSet<String> {
    Project::get(db)
        .sensor_files(db)
        .iter()
        .filter_map(|file| {
            file.path(db)
                .file_name()
                .and_then(crate::compile::syntax::manifest::sensor_id_from_file_name)
                .map(str::to_owned)
        })
        .collect()
}

/// Sorted known ids, for "Known ids" in messages. Backdates unless the id set changes.
#[salsa::tracked(returns(ref))]
pub fn known_sensor_ids(db: &dyn salsa::Database) -> Vec<String> {
    sensor_registry(db).by_id.keys().cloned().collect()
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SensorsApplicable {
    pub entries: Vec<SensorEntry>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The stage's imports looked up in the registry, in authored order.
#[salsa::tracked(returns(ref))]
pub fn sensors_applicable(db: &dyn salsa::Database, file: SourceFile) -> SensorsApplicable {
    let mut result = SensorsApplicable::default();
    let Some(stage) = &parsed_stage(db, file).definition else {
        return result;
    };
    for import in &stage.sensors {
        let name = SensorName::new(db, import.value.clone());
        if let Some(binding) = sensor_binding(db, name) {
            result.entries.push(binding.clone());
            continue;
        }
        if sensor_file_ids(db).contains(&import.value) {
            continue;
        }
        let known = known_sensor_ids(db);
        let known_text = crate::leaves::english::names_or_none(known.iter());
        let help = match closest_match(&import.value, known.iter().map(String::as_str)) {
            Some(close) => format!(
                "did you mean `{close}`? Otherwise add a manifest named aidlc-{}.md to the sensors folder",
                import.value
            ),
            None => format!(
                "add a manifest named aidlc-{}.md to the sensors folder, or remove the import",
                import.value
            ),
        };
        result.diagnostics.push(
            Diagnostic::error(
                Code::UnknownSensorImport,
                format!(
                    "Stage \"{}\" imports unknown sensor id \"{}\". Known ids: {known_text}",
                    stage.slug.value, import.value
                ),
            )
            .in_file(file.path(db))
            .at(import.span.clone())
            .with_label("no manifest declares this id")
            .with_help(help),
        );
    }
    result
}

/// A binding's `matches`, compiled once per sensor however many stages import it. Compares by
/// pattern, so it backdates when an edit to the manifest leaves the pattern alone.
#[derive(Debug, Clone)]
pub struct CompiledMatches(Arc<SensorGlob>);

impl PartialEq for CompiledMatches {
    fn eq(&self, other: &Self) -> bool {
        self.0.pattern() == other.0.pattern()
    }
}

impl Eq for CompiledMatches {}

impl CompiledMatches {
    /// Whether a project-relative path (with `/` separators) matches, through the one matcher
    /// (D5). The path is already relative, so there is no project prefix to strip.
    pub fn matches_relative(&self, path: &Utf8Path) -> bool {
        self.0.matches(Utf8Path::new(""), path)
    }
}

/// The compiled `matches` of an imported id; `None` when the id has no binding or the binding
/// has no `matches` (it then matches every path). A manifest whose glob does not compile has
/// no binding: `syntax::manifest` refuses it with its own diagnostic.
#[salsa::tracked(returns(ref))]
pub fn compiled_matches<'db>(
    db: &'db dyn salsa::Database,
    name: SensorName<'db>,
) -> Option<CompiledMatches> {
    let pattern = sensor_binding(db, name).as_ref()?.matches.as_deref()?;
    SensorGlob::new(pattern)
        .ok()
        .map(|glob| CompiledMatches(Arc::new(glob)))
}

/// `lead_agent`, `support_agents` and `reviewer` must name agent files (`orchestrator` exempt).
#[salsa::tracked(returns(ref))]
pub fn stage_agent_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let Some(stage) = &parsed_stage(db, file).definition else {
        return Vec::new();
    };
    let roster = agent_roster(db);
    let agents_glob = format!("{}/agents/*.md", Project::get(db).harness_dir(db));
    let mut named = vec![("lead_agent".to_owned(), &stage.lead_agent)];
    named.extend(
        stage
            .support_agents
            .iter()
            .enumerate()
            .map(|(index, agent)| (format!("support_agents[{index}]"), agent)),
    );
    named.extend(
        stage
            .reviewer
            .iter()
            .map(|agent| ("reviewer".to_owned(), agent)),
    );
    let mut diagnostics = Vec::new();
    for (field, agent) in named {
        if agent.value == "orchestrator" || roster.names.contains_key(&agent.value) {
            continue;
        }
        let help = match closest_match(&agent.value, roster.names.keys().map(String::as_str)) {
            Some(close) => format!(
                "did you mean `{close}`? Agents are matched by the `name:` field of {agents_glob}"
            ),
            None => format!(
                "add an agent file with `name: {}` to {agents_glob}",
                agent.value
            ),
        };
        diagnostics.push(
            Diagnostic::error(
                Code::UnknownAgent,
                format!("{field} \"{}\" has no matching {agents_glob}", agent.value),
            )
            .in_file(file.path(db))
            .at(agent.span.clone())
            .with_help(help),
        );
    }
    diagnostics
}

/// A name an editor navigates by: what a span of a harness file declares or refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SiteName {
    /// A sensor id: a manifest's `id:`, a stage's `sensors:` item.
    Sensor(String),
    /// A stage slug: a stage's `slug:`, a `requires_stage` item.
    Stage(String),
    /// An artifact: a `produces`/`optional_produces` item, a `consumes` item's `artifact:`.
    Artifact(String),
    /// An agent: an agent file's `name:`, a stage's `lead_agent`, `support_agents`, `reviewer`.
    Agent(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteRole {
    Declaration,
    Reference,
}

/// One place a file names something, with the byte range of the value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NameSite {
    pub name: SiteName,
    pub span: Range<usize>,
    pub role: SiteRole,
}

/// The names a stage file declares and refers to, read from its frontmatter outline (so a
/// stage the typed checks refuse can still be navigated), in the order they are written.
#[salsa::tracked(returns(ref))]
pub fn stage_name_sites(db: &dyn salsa::Database, file: SourceFile) -> Vec<NameSite> {
    let Some(map) = crate::compile::parse::frontmatter_outline(db, file) else {
        return Vec::new();
    };
    let mut sites = Vec::new();
    for entry in &map.entries {
        let (kind, role): (fn(String) -> SiteName, SiteRole) = match entry.key.as_scalar() {
            Some("slug") => (SiteName::Stage, SiteRole::Declaration),
            Some("requires_stage") => (SiteName::Stage, SiteRole::Reference),
            Some("sensors") => (SiteName::Sensor, SiteRole::Reference),
            Some("produces" | "optional_produces") => (SiteName::Artifact, SiteRole::Declaration),
            Some("lead_agent" | "support_agents" | "reviewer") => {
                (SiteName::Agent, SiteRole::Reference)
            }
            Some("consumes") => {
                let artifacts = entry
                    .value
                    .as_sequence()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|item| item.get("artifact"));
                for node in artifacts {
                    push_scalar_sites(&mut sites, node, SiteName::Artifact, SiteRole::Reference);
                }
                continue;
            }
            _ => continue,
        };
        push_scalar_sites(&mut sites, &entry.value, kind, role);
    }
    sites
}

/// The sensor id a manifest declares (its `id:`), even when the manifest is refused.
#[salsa::tracked(returns(ref))]
pub fn manifest_name_sites(db: &dyn salsa::Database, file: SourceFile) -> Vec<NameSite> {
    single_declaration(db, file, "id", SiteName::Sensor)
}

/// The agent name an agent file declares (its `name:`).
#[salsa::tracked(returns(ref))]
pub fn agent_name_sites(db: &dyn salsa::Database, file: SourceFile) -> Vec<NameSite> {
    single_declaration(db, file, "name", SiteName::Agent)
}

fn single_declaration(
    db: &dyn salsa::Database,
    file: SourceFile,
    key: &str,
    kind: fn(String) -> SiteName,
) -> Vec<NameSite> {
    let mut sites = Vec::new();
    if let Some(node) = crate::compile::parse::frontmatter_outline(db, file)
        .as_ref()
        .and_then(|map| map.value(key))
    {
        push_scalar_sites(&mut sites, node, kind, SiteRole::Declaration);
    }
    sites
}

/// A scalar value, or each scalar item of a list, as sites of `kind`.
fn push_scalar_sites(
    sites: &mut Vec<NameSite>,
    node: &crate::compile::syntax::yaml::Node,
    kind: fn(String) -> SiteName,
    role: SiteRole,
) {
    let items = node.as_sequence().unwrap_or(std::slice::from_ref(node));
    for item in items {
        if let Some(text) = crate::compile::syntax::document::scalar_string(item)
            && !text.trim().is_empty()
        {
            sites.push(NameSite {
                name: kind(text.to_owned()),
                span: item.span.clone(),
                role,
            });
        }
    }
}

/// A [`NameSite`] with the file it is in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexedSite {
    pub file: SourceFile,
    pub span: Range<usize>,
    pub role: SiteRole,
}

/// Every name site of the manifests, stages and agents, by name, each list in discovery order
/// (manifests, then stages, then agents): what go-to-definition, find-references and hover
/// look names up in. Only the language server reads it; it re-runs after any edit to those
/// files, over the per-file sites, which are memoised.
#[salsa::tracked(returns(ref))]
pub fn name_index(db: &dyn salsa::Database) -> BTreeMap<SiteName, Vec<IndexedSite>> {
    let project = Project::get(db);
    let mut index: BTreeMap<SiteName, Vec<IndexedSite>> = BTreeMap::new();
    let manifests = project
        .sensor_files(db)
        .iter()
        .map(|&file| (file, manifest_name_sites(db, file)));
    let stages = project
        .stage_files(db)
        .iter()
        .map(|entry| (entry.file, stage_name_sites(db, entry.file)));
    let agents = project
        .agent_files(db)
        .iter()
        .map(|&file| (file, agent_name_sites(db, file)));
    for (file, sites) in manifests.chain(stages).chain(agents) {
        for site in sites {
            index
                .entry(site.name.clone())
                .or_default()
                .push(IndexedSite {
                    file,
                    span: site.span.clone(),
                    role: site.role,
                });
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_matches_read_project_relative_paths_as_the_matcher_does() {
        let glob = CompiledMatches(Arc::new(SensorGlob::new("aidlc/**/*.md").unwrap()));
        assert!(glob.matches_relative(Utf8Path::new("aidlc/spaces/default/a.md")));
        assert!(!glob.matches_relative(Utf8Path::new("docs/aidlc/a.md")));
        let star = CompiledMatches(Arc::new(SensorGlob::new("*.md").unwrap()));
        assert!(
            !star.matches_relative(Utf8Path::new("aidlc/a.md")),
            "`*` stops at `/`"
        );
    }
}
