//! The live sensor registry for the dispatcher: the manifests as they are on disk now (not as
//! the compiled graph saw them), because `command`, `input_schema`, `timeout_seconds` and the
//! `matches` pre-flight come from the live manifest (D6, D20).

use std::collections::BTreeMap;
use std::sync::Arc;

use camino::Utf8PathBuf;

use crate::compile::db::FileContents;
use crate::compile::discover::{Layout, MAX_INPUT_BYTES, list_sensor_files, read_input_contents};
use crate::compile::parse::parse_manifest_file;
use crate::compile::resolve::registry_of_manifests;
use crate::compile::syntax::manifest::ParsedManifest;
use crate::compile::syntax::manifest::SensorManifest;
use crate::leaves::diagnostics::Diagnostic;

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
    /// The sensor `id`, or the refusal that names every known id.
    pub fn known(&self, id: &str) -> Result<&LiveSensor, String> {
        self.sensors.get(id).ok_or_else(|| {
            let known = crate::leaves::english::names_or_none(self.sensors.keys());
            format!("unknown sensor id: \"{id}\". Known ids: {known}")
        })
    }
}

/// Read and check every manifest, with the compile's own rules and messages: the compile's
/// parse (`parse::parse_manifest_file`) and registry (`resolve::registry_of_manifests`), called
/// directly, since a hook run reads each manifest once and has nothing to memoise.
pub fn load_live_registry(layout: &Layout) -> LiveRegistry {
    let (paths, mut skipped) = list_sensor_files(&layout.sensors_dir);
    for skipped_file in &mut skipped {
        skipped_file.path = layout.display(&skipped_file.path);
    }
    let files: Vec<(Utf8PathBuf, FileContents)> = paths
        .iter()
        .map(|path| {
            (
                layout.display(path),
                read_input_contents(path, MAX_INPUT_BYTES),
            )
        })
        .collect();
    let parsed: Vec<ParsedManifest> = files
        .iter()
        .map(|(path, contents)| parse_manifest_file(path, contents))
        .collect();
    let registry = registry_of_manifests(
        layout.harness.dir_name(),
        &skipped,
        files.iter().map(|(path, _)| path.as_path()).zip(&parsed),
    );
    let errors: Vec<Diagnostic> = registry
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    let mut sensors = BTreeMap::new();
    for parse in parsed {
        let Some(manifest) = parse.manifest else {
            continue;
        };
        let Some(binding) = registry.by_id.get(&manifest.id) else {
            continue;
        };
        let registry_path = binding.path.clone();
        sensors
            .entry(manifest.id.clone())
            .or_insert_with(|| LiveSensor {
                manifest,
                registry_path,
            });
    }
    let sources = files
        .into_iter()
        .filter_map(|(path, contents)| match contents {
            FileContents::Text(text) => Some((
                path,
                Arc::try_unwrap(text).unwrap_or_else(|shared| String::clone(&shared)),
            )),
            _ => None,
        })
        .collect();
    LiveRegistry {
        sensors,
        errors,
        sources,
    }
}
