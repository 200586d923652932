//! A plugin's manifest, read strictly.
//!
//! The authored tree carries `.aidlc-plugin/plugin.json` (`name`, `version`, `dependencies`, and
//! the `aidlc` block, whose keys are checked); a host projection carries the host's manifest
//! (`.claude-plugin/plugin.json` and its siblings), whose package name `aidlc-<name>` maps back
//! to the logical `<name>`, as the reference composer reads it. The top level is lenient (unknown
//! keys are kept for other tools); the `aidlc` block is strict (an unknown key is a typo).

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::harness::Harness;
use crate::plugin::Problem;
use crate::plugin::guards;

use crate::plugin::tree_source::{DiskSource, EntryKind, Follow, Overlay, TreeSource, read_text};

/// The authored manifest, relative to the plugin root.
pub const AUTHORED_MANIFEST: &str = ".aidlc-plugin/plugin.json";
/// The host manifests a projection may carry (`<folder>/plugin.json`, as the reference's
/// packager writes them), in the order the reference composer tries them, each with the harness
/// it is for: `None` for the generic `.plugin`, which no one harness owns; Kiro IDE and Kiro CLI
/// 3 share Kiro's, and Cursor and Copilot have none.
pub const HOST_MANIFEST_DIRS: [(&str, Option<Harness>); 5] = [
    (".claude-plugin", Some(Harness::Claude)),
    (".codex-plugin", Some(Harness::Codex)),
    (".opencode-plugin", Some(Harness::Opencode)),
    (".plugin", None),
    (".kiro-plugin", Some(Harness::Kiro)),
];
/// The host package name of a plugin is its name with this prefix.
const HOST_PACKAGE_PREFIX: &str = "aidlc-";

/// The subtrees a plugin ships, by the key `aidlc.contributes` names them with.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::EnumString, strum::IntoStaticStr,
)]
#[strum(serialize_all = "lowercase")]
pub enum Subtree {
    Stages,
    Agents,
    Scopes,
    Knowledge,
    Sensors,
    Tools,
    /// `contributions/`: merged into core stages, not copied.
    Overlays,
    /// `memory/`: not composed yet (the reference defers it too).
    Memory,
}

impl Subtree {
    /// The key in `aidlc.contributes`.
    pub fn key(self) -> &'static str {
        self.into()
    }

    /// The folder a plugin uses when its manifest names none (the directory convention the
    /// reference's packager and composer read).
    pub fn conventional_folder(self) -> &'static str {
        match self {
            Subtree::Overlays => "contributions",
            other => other.key(),
        }
    }
}

/// One `dependencies` entry: `name` or `name@<semver requirement>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub name: String,
    pub requirement: Option<semver::VersionReq>,
    /// As written.
    pub text: String,
}

impl Dependency {
    /// `core` (and `aidlc`) name the core framework, which every install has.
    pub fn is_core(&self) -> bool {
        self.name == "core" || self.name == "aidlc"
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginManifest {
    pub name: String,
    /// The `version` string, when the manifest gives one.
    pub version: Option<semver::Version>,
    pub dependencies: Vec<Dependency>,
    /// The folder of each subtree, relative to the plugin root, as declared (or the convention).
    pub folders: Vec<(Subtree, String)>,
    /// `aidlc.sensors`: the sensor ids the plugin declares, when it lists them.
    pub declared_sensors: Option<Vec<String>>,
    /// The manifest file read.
    pub path: Utf8PathBuf,
    /// Its text, as read: the text its problems' spans index.
    pub text: String,
}

impl PluginManifest {
    pub fn folder(&self, subtree: Subtree) -> &str {
        self.folders
            .iter()
            .find(|(kind, _)| *kind == subtree)
            .map_or(subtree.conventional_folder(), |(_, folder)| folder.as_str())
    }

    pub fn version_text(&self) -> String {
        self.version
            .as_ref()
            .map_or_else(|| "0.0.0".to_owned(), ToString::to_string)
    }
}

/// [`read_manifest_from`] the disk, with the text `overlay` holds for the manifest (an
/// editor's unsaved buffer) instead of the disk's.
pub fn read_manifest_over(root: &Utf8Path, overlay: &Overlay) -> Result<PluginManifest, Problem> {
    read_manifest_from(&DiskSource::new(overlay), root)
}

/// Read the manifest of the plugin at `root`, with `source`'s answers for the files it reads:
/// the authored one, else a host projection's.
pub fn read_manifest_from(
    source: &dyn TreeSource,
    root: &Utf8Path,
) -> Result<PluginManifest, Problem> {
    let Some(path) = manifest_file_in(source, root) else {
        return Err(Problem::new(format!(
            "{root} is not a plugin: it has no {AUTHORED_MANIFEST} (nor a host manifest such as .claude-plugin/plugin.json)"
        ))
        .with_help("pass the folder that holds the plugin's manifest"));
    };
    let authored = path == root.join(AUTHORED_MANIFEST);
    let (object, text) = read_json_object(&path, source)?;
    let package = required_name(&object, &path, &text)?;
    let name = if authored {
        package
    } else {
        package
            .strip_prefix(HOST_PACKAGE_PREFIX)
            .unwrap_or(&package)
            .to_owned()
    };
    if let Some(reason) = guards::plugin_name_refusal(&name) {
        return Err(Problem::new(reason)
            .of_plugin_at(&name, &path)
            .at_key_in(&text, &["name"])
            .with_help("rename the plugin in its manifest (and its stages' `plugin:` fields)"));
    }
    let version = optional_version(&object, &path, &text)?;
    let mut manifest = PluginManifest {
        name,
        version,
        dependencies: Vec::new(),
        folders: Vec::new(),
        declared_sensors: None,
        path,
        text,
    };
    // A host projection's manifest is the host's: only the authored one has these keys.
    if authored {
        read_authored_keys(&object, &mut manifest)?;
    }
    Ok(manifest)
}

/// The manifest [`read_manifest_from`] reads at `root`: the authored one, else the first host
/// projection's in [`HOST_MANIFEST_DIRS`] order.
pub fn manifest_file(root: &Utf8Path) -> Option<Utf8PathBuf> {
    manifest_file_in(&DiskSource::new(&Overlay::new()), root)
}

/// [`manifest_file`], with `source`'s answers.
pub fn manifest_file_in(source: &dyn TreeSource, root: &Utf8Path) -> Option<Utf8PathBuf> {
    manifest_candidates(root).find(|path| source.kind(path, Follow::Yes) == EntryKind::File)
}

/// The manifests a plugin at `root` may carry, in the order they are looked for: the authored
/// one, then each host projection's in [`HOST_MANIFEST_DIRS`] order.
pub fn manifest_candidates(root: &Utf8Path) -> impl Iterator<Item = Utf8PathBuf> + '_ {
    std::iter::once(root.join(AUTHORED_MANIFEST)).chain(
        HOST_MANIFEST_DIRS
            .iter()
            .map(|(folder, _)| root.join(folder).join("plugin.json")),
    )
}

fn read_json_object(
    path: &Utf8Path,
    source: &dyn TreeSource,
) -> Result<(serde_json::Map<String, Value>, String), Problem> {
    let text = read_text(source, path).map_err(|error| {
        Problem::new(format!("cannot read the manifest: {error}")).at_path(path)
    })?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) => Ok((object, text)),
        Ok(other) => Err(wrong_type(
            "the manifest must be a JSON object",
            &other,
            path,
            &text,
            &[],
        )),
        // The whole document's span is the syntax error's, where the reader stopped.
        Err(error) => Err(
            Problem::new(format!("the manifest is not valid JSON: {error}"))
                .at_path(path)
                .at_key_in(&text, &[])
                .with_help("fix the JSON syntax"),
        ),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `<expected>, got <the type of value>`, at `key` of the manifest at `path`.
fn wrong_type(expected: &str, value: &Value, path: &Utf8Path, text: &str, key: &[&str]) -> Problem {
    Problem::new(format!("{expected}, got {}", json_type(value)))
        .at_path(path)
        .at_key_in(text, key)
}

fn required_name(
    object: &serde_json::Map<String, Value>,
    path: &Utf8Path,
    text: &str,
) -> Result<String, Problem> {
    match object.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => Ok(name.trim().to_owned()),
        Some(other) => Err(wrong_type(
            "`name` must be a non-empty string",
            other,
            path,
            text,
            &["name"],
        )),
        None => Err(Problem::new("the manifest has no `name`").at_path(path)),
    }
}

fn optional_version(
    object: &serde_json::Map<String, Value>,
    path: &Utf8Path,
    manifest_text: &str,
) -> Result<Option<semver::Version>, Problem> {
    match object.get("version") {
        None => Ok(None),
        Some(Value::String(text)) => {
            semver::Version::parse(text.trim())
                .map(Some)
                .map_err(|error| {
                    Problem::new(format!(
                        "`version` \"{text}\" is not a semantic version: {error}"
                    ))
                    .at_path(path)
                    .at_key_in(manifest_text, &["version"])
                    .with_help("write it as MAJOR.MINOR.PATCH, e.g. \"0.1.0\"")
                })
        }
        Some(other) => Err(wrong_type(
            "`version` must be a string",
            other,
            path,
            manifest_text,
            &["version"],
        )),
    }
}

/// The authored manifest's `dependencies` and `aidlc` block.
fn read_authored_keys(
    object: &serde_json::Map<String, Value>,
    manifest: &mut PluginManifest,
) -> Result<(), Problem> {
    let (path, name, text) = (
        manifest.path.as_path(),
        manifest.name.as_str(),
        manifest.text.as_str(),
    );
    let dependencies = match object.get("dependencies") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| parse_dependency(item, path, text, name))
            .collect::<Result<_, _>>()?,
        Some(other) => {
            let expected = "`dependencies` must be an array of strings";
            return Err(wrong_type(expected, other, path, text, &["dependencies"]).of_plugin(name));
        }
    };
    let (folders, declared_sensors) = match object.get("aidlc") {
        None => (Vec::new(), None),
        Some(Value::Object(block)) => read_aidlc_block(block, path, text, name)?,
        Some(other) => {
            let expected = "`aidlc` must be an object";
            return Err(wrong_type(expected, other, path, text, &["aidlc"]).of_plugin(name));
        }
    };
    manifest.dependencies = dependencies;
    manifest.folders = folders;
    manifest.declared_sensors = declared_sensors;
    Ok(())
}

fn parse_dependency(
    item: &Value,
    path: &Utf8Path,
    manifest_text: &str,
    plugin: &str,
) -> Result<Dependency, Problem> {
    let Value::String(text) = item else {
        let expected = "each `dependencies` entry must be a string";
        return Err(
            wrong_type(expected, item, path, manifest_text, &["dependencies"]).of_plugin(plugin),
        );
    };
    let (name, requirement) = match text.split_once('@') {
        Some((name, range)) => {
            let requirement = semver::VersionReq::parse(range.trim()).map_err(|error| {
                Problem::new(format!(
                    "dependency \"{text}\": \"{range}\" is not a version requirement: {error}"
                ))
                .of_plugin_at(plugin, path)
                .at_key_item_in(manifest_text, &["dependencies"], Some(text))
                .with_help("write it as name@^1.2.0, name@~1.2, name@>=1.0.0 or name@1.2.3")
            })?;
            (name.trim().to_owned(), Some(requirement))
        }
        None => (text.trim().to_owned(), None),
    };
    let dependency = Dependency {
        name,
        requirement,
        text: text.clone(),
    };
    if !dependency.is_core()
        && let Some(reason) = guards::plugin_name_refusal(&dependency.name)
    {
        return Err(Problem::new(format!("dependency \"{text}\": {reason}"))
            .of_plugin_at(plugin, path)
            .at_key_item_in(manifest_text, &["dependencies"], Some(text)));
    }
    Ok(dependency)
}

type AidlcBlock = (Vec<(Subtree, String)>, Option<Vec<String>>);

fn read_aidlc_block(
    block: &serde_json::Map<String, Value>,
    path: &Utf8Path,
    manifest_text: &str,
    plugin: &str,
) -> Result<AidlcBlock, Problem> {
    let problem = |message: String, key: &[&str]| {
        Problem::new(message)
            .of_plugin_at(plugin, path)
            .at_key_in(manifest_text, key)
            .with_help("the `aidlc` block takes `contributes` (an object of folders) and `sensors` (a list of sensor ids)")
    };
    let wrong = |expected: &str, value: &Value, key: &[&str]| {
        problem(format!("{expected}, got {}", json_type(value)), key)
    };
    let mut folders = Vec::new();
    let mut declared_sensors = None;
    for (key, value) in block {
        match key.as_str() {
            "contributes" => {
                let Value::Object(contributes) = value else {
                    return Err(wrong(
                        "`aidlc.contributes` must be an object",
                        value,
                        &["aidlc", "contributes"],
                    ));
                };
                for (kind, folder) in contributes {
                    let Ok(subtree) = kind.parse::<Subtree>() else {
                        return Err(problem(
                            format!(
                                "`aidlc.contributes` has an unknown key \"{kind}\" (known: stages, agents, scopes, knowledge, sensors, tools, overlays, memory)"
                            ),
                            &["aidlc", "contributes", kind],
                        ));
                    };
                    let Value::String(folder) = folder else {
                        return Err(wrong(
                            &format!("`aidlc.contributes.{kind}` must be a folder name (a string)"),
                            folder,
                            &["aidlc", "contributes", kind],
                        ));
                    };
                    folders.push((subtree, folder.trim().trim_end_matches('/').to_owned()));
                }
            }
            "sensors" => {
                let Value::Array(items) = value else {
                    return Err(wrong(
                        "`aidlc.sensors` must be an array of sensor ids",
                        value,
                        &["aidlc", "sensors"],
                    ));
                };
                let ids = items.iter().map(|item| match item {
                    Value::String(id) if crate::compile::syntax::stage::is_kebab_case(id) => {
                        Ok(id.clone())
                    }
                    other => Err(problem(
                        format!(
                            "`aidlc.sensors` entries must be kebab-case sensor ids, got {other}"
                        ),
                        &["aidlc", "sensors"],
                    )),
                });
                declared_sensors = Some(ids.collect::<Result<_, _>>()?);
            }
            other => {
                return Err(problem(
                    format!("`aidlc` has an unknown key \"{other}\""),
                    &["aidlc", other],
                ));
            }
        }
    }
    Ok((folders, declared_sensors))
}

/// Whether `version` satisfies `dependency` (no requirement: any version).
pub fn satisfies(dependency: &Dependency, version: Option<&semver::Version>) -> bool {
    match (&dependency.requirement, version) {
        (None, _) => true,
        (Some(requirement), Some(version)) => requirement.matches(version),
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_manifest(root: &Utf8Path) -> Result<PluginManifest, Problem> {
        read_manifest_over(root, &Overlay::new())
    }

    fn manifest_in(text: &str) -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        std::fs::create_dir_all(root.join(".aidlc-plugin")).unwrap();
        std::fs::write(root.join(AUTHORED_MANIFEST), text).unwrap();
        (dir, root)
    }

    #[test]
    fn the_authored_manifest_is_read_with_its_dependencies_and_folders() {
        let (_dir, root) = manifest_in(
            r#"{"name": "test-pro", "version": "0.1.0", "dependencies": ["core", "compliance@^1.2.0"],
               "aidlc": {"contributes": {"stages": "stages/", "overlays": "contributions/"}, "sensors": ["a-b"]},
               "extra": true}"#,
        );
        let manifest = read_manifest(&root).unwrap();
        assert_eq!(manifest.name, "test-pro");
        assert_eq!(manifest.version_text(), "0.1.0");
        assert_eq!(manifest.dependencies.len(), 2);
        assert!(manifest.dependencies[0].is_core());
        assert_eq!(manifest.dependencies[1].name, "compliance");
        assert!(satisfies(
            &manifest.dependencies[1],
            Some(&semver::Version::new(1, 4, 0))
        ));
        assert!(!satisfies(
            &manifest.dependencies[1],
            Some(&semver::Version::new(2, 0, 0))
        ));
        assert_eq!(manifest.folder(Subtree::Overlays), "contributions");
        assert_eq!(manifest.folder(Subtree::Tools), "tools");
        assert_eq!(manifest.declared_sensors, Some(vec!["a-b".to_owned()]));
    }

    #[test]
    fn a_strict_aidlc_block_and_reserved_names_are_refused() {
        for text in [
            r#"{"name": "x", "aidlc": {"contribute": {}}}"#,
            r#"{"name": "x", "aidlc": {"contributes": {"stage": "s"}}}"#,
            r#"{"name": "x", "dependencies": "core"}"#,
            r#"{"name": "x", "dependencies": ["y@not a range"]}"#,
            r#"{"name": "x", "version": "one"}"#,
            r#"{"name": "aidlc-x"}"#,
            r#"{"name": "core"}"#,
            r#"{"name": "../x"}"#,
            r#"{"version": "1.0.0"}"#,
            r"[1]",
            r"{",
        ] {
            let (_dir, root) = manifest_in(text);
            assert!(read_manifest(&root).is_err(), "{text} was accepted");
        }
    }

    #[test]
    fn a_host_manifest_maps_the_package_name_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name": "aidlc-test-pro", "version": "0.1.0"}"#,
        )
        .unwrap();
        assert_eq!(read_manifest(&root).unwrap().name, "test-pro");
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name": "aidlc-aidlc-x"}"#,
        )
        .unwrap();
        assert!(read_manifest(&root).is_err());
    }
}
