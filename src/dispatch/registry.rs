//! The live sensor registry for the dispatcher: the manifests as they are on disk now (not as
//! the compiled graph saw them), because `command`, `input_schema`, `timeout_seconds` and the
//! `matches` pre-flight come from the live manifest (D6, D20).

use std::collections::BTreeMap;

use camino::Utf8PathBuf;

use crate::db::{CompilerDatabase, FileContents, SourceFile};
use crate::diagnostics::Diagnostic;
use crate::discover::{
    Layout, MAX_INPUT_BYTES, list_sensor_files, new_project, read_input_contents,
};
use crate::parse::parsed_manifest;
use crate::resolve::sensor_registry;
use crate::syntax::manifest::SensorManifest;

/// One loadable manifest and where it lives.
#[derive(Debug, Clone)]
pub struct LiveSensor {
    pub manifest: SensorManifest,
    /// Harness-relative registry path, e.g. `.claude/sensors/aidlc-linter.md`.
    pub registry_path: String,
}

/// Every manifest of the sensors folder, or the errors that make the registry unusable.
#[derive(Debug, Clone, Default)]
pub struct LiveRegistry {
    pub sensors: BTreeMap<String, LiveSensor>,
    /// Error-severity problems only (near-miss file warnings are the compile's business).
    pub errors: Vec<Diagnostic>,
    /// The manifest texts, for rendering the errors with snippets.
    pub sources: BTreeMap<Utf8PathBuf, String>,
}

impl LiveRegistry {
    pub fn known_ids(&self) -> String {
        if self.sensors.is_empty() {
            "(none)".to_owned()
        } else {
            self.sensors.keys().cloned().collect::<Vec<_>>().join(", ")
        }
    }
}

/// Read and check every manifest, with the compile's own rules and messages.
pub fn load_live_registry(layout: &Layout) -> LiveRegistry {
    let db = CompilerDatabase::default();
    let (paths, mut skipped) = list_sensor_files(&layout.sensors_dir);
    for skipped_file in &mut skipped {
        skipped_file.path = layout.display(&skipped_file.path);
    }
    let mut sources = BTreeMap::new();
    let files: Vec<SourceFile> = paths
        .iter()
        .map(|path| {
            let contents = read_input_contents(path, MAX_INPUT_BYTES);
            if let FileContents::Text(text) = &contents {
                sources.insert(layout.display(path), String::clone(text));
            }
            SourceFile::new(&db, layout.display(path), contents)
        })
        .collect();
    new_project(&db, layout, files.clone(), skipped);
    let registry = sensor_registry(&db);
    let errors: Vec<Diagnostic> = registry
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .cloned()
        .collect();
    let mut sensors = BTreeMap::new();
    for file in files {
        let Some(manifest) = &parsed_manifest(&db, file).manifest else {
            continue;
        };
        let Some(binding) = registry.by_id.get(&manifest.id) else {
            continue;
        };
        sensors
            .entry(manifest.id.clone())
            .or_insert_with(|| LiveSensor {
                manifest: manifest.clone(),
                registry_path: binding.path.clone(),
            });
    }
    LiveRegistry {
        sensors,
        errors,
        sources,
    }
}
