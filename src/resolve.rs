//! Resolution: the sensor registry, each stage's `sensors_applicable`, and the agent roster
//! check. Each stage's resolution reads only the bindings of the ids it imports, so editing one
//! manifest re-resolves only the stages that import it.

use std::collections::BTreeMap;

use crate::db::{Project, SourceFile};
use crate::diagnostics::{Code, Diagnostic, closest_match};
use crate::parse::{agent_roster, parsed_manifest, parsed_stage};
use crate::syntax::manifest::{DefaultSeverity, FireOn};

/// What the compile copies from a manifest into a stage node (the [gate] entry shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SensorBinding {
    pub id: String,
    /// Harness-relative path, e.g. `.claude/sensors/aidlc-linter.md`.
    pub path: String,
    pub fire_on: FireOn,
    pub default_severity: DefaultSeverity,
    pub category: Option<String>,
    pub matches: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SensorRegistry {
    pub by_id: BTreeMap<String, SensorBinding>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn sensor_registry(db: &dyn salsa::Database) -> SensorRegistry {
    let project = Project::get(db);
    let harness_dir = project.harness_dir(db);
    let mut registry = SensorRegistry::default();
    let mut declared: BTreeMap<String, String> = BTreeMap::new();
    for skipped in project.skipped_sensor_files(db) {
        registry.diagnostics.push(
            Diagnostic::warning(
                Code::SkippedSensorFile,
                format!("{} {}", skipped.path, skipped.reason),
            )
            .in_file(&skipped.path)
            .with_help(skipped.help.clone()),
        );
    }
    for &file in project.sensor_files(db) {
        let parsed = parsed_manifest(db, file);
        let path = file.path(db);
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
        registry.by_id.insert(
            manifest.id.clone(),
            SensorBinding {
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
) -> Option<SensorBinding> {
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
                .and_then(crate::syntax::manifest::sensor_id_from_file_name)
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
    pub entries: Vec<SensorBinding>,
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
        let known_text = if known.is_empty() {
            "(none)".to_owned()
        } else {
            known.join(", ")
        };
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
