//! `harness.json`'s `plugins` key: which plugins the install enables.
//!
//! Absent (or no `harness.json`): every composed plugin is enabled. Present: a list of plugin
//! names (`aidlc` is the core); a plugin composed while not in it gets its own files copied (the
//! runtime filters them out) but none of its contributions merged into other stages, which no
//! selection filter reaches. Anything else in the key is refused, never read as "all enabled".

use std::collections::BTreeSet;

use camino::Utf8Path;
use serde_json::Value;

use crate::plugin::Problem;

/// The enabled set, or `None` when every plugin is enabled.
pub fn read_selection(harness_json: &Utf8Path) -> Result<Option<BTreeSet<String>>, Problem> {
    let text = match std::fs::read_to_string(harness_json) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(
                Problem::new(format!("cannot read the file: {error}")).at_path(harness_json)
            );
        }
    };
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        Problem::new(format!("the file is not valid JSON: {error}")).at_path(harness_json)
    })?;
    let Value::Object(object) = value else {
        return Err(Problem::new("the file must hold a JSON object").at_path(harness_json));
    };
    let Some(plugins) = object.get("plugins") else {
        return Ok(None);
    };
    let bad = || {
        Problem::new("`plugins` must be a list of plugin names (kebab case; `aidlc` is the core)")
            .at_path(harness_json)
            .with_help("write e.g. \"plugins\": [\"aidlc\", \"test-pro\"], or remove the key to enable every plugin")
    };
    let Value::Array(items) = plugins else {
        return Err(bad());
    };
    let mut names = BTreeSet::new();
    for item in items {
        match item {
            Value::String(name)
                if name == "aidlc" || crate::plugin::guards::is_kebab_name(name) =>
            {
                names.insert(name.clone());
            }
            _ => return Err(bad()),
        }
    }
    Ok(Some(names))
}

/// Whether `plugin` is enabled by `selection`.
pub fn is_enabled(selection: Option<&BTreeSet<String>>, plugin: &str) -> bool {
    selection.is_none_or(|names| names.contains(plugin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugins_key_is_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let path = camino::Utf8PathBuf::from_path_buf(dir.path().join("harness.json")).unwrap();
        assert_eq!(read_selection(&path).unwrap(), None);
        std::fs::write(&path, r#"{"harnessDir": ".claude"}"#).unwrap();
        assert_eq!(read_selection(&path).unwrap(), None);
        std::fs::write(&path, r#"{"plugins": ["aidlc", "test-pro"]}"#).unwrap();
        let selection = read_selection(&path).unwrap();
        assert!(is_enabled(selection.as_ref(), "test-pro"));
        assert!(!is_enabled(selection.as_ref(), "other"));
        for bad in [
            r#"{"plugins": "test-pro"}"#,
            r#"{"plugins": ["Test"]}"#,
            r#"{"plugins": [1]}"#,
            "[",
            "[]",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(read_selection(&path).is_err(), "{bad}");
        }
    }
}
