//! Reading `harness.json`'s `plugins` key for the plugin commands: the strict reader is the
//! compile's (`crate::compile::stage_graph::plugins_key`); this wraps its refusal as a plugin problem.

use camino::Utf8Path;

use crate::compile::stage_graph::plugins_key::{Selection, selection_of_text};
use crate::plugin::Problem;

/// The enabled set in the file at `harness_json`, or `None` when every plugin is enabled.
pub fn read_selection(harness_json: &Utf8Path) -> Result<Selection, Problem> {
    let text = match crate::leaves::fs_util::read_input_text(harness_json) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => return Ok(None),
        Err(error) => {
            return Err(
                Problem::new(format!("cannot read the file: {error}")).at_path(harness_json)
            );
        }
    };
    selection_of_text(&text).map_err(|error| {
        Problem::new(error.message)
            .at_path(harness_json)
            .with_help(error.help)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::compile::stage_graph::plugins_key::is_enabled;

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
        std::fs::write(&path, r#"{"plugins": []}"#).unwrap();
        assert_eq!(read_selection(&path).unwrap(), Some(BTreeSet::new()));
        for bad in [
            r#"{"plugins": "test-pro"}"#,
            r#"{"plugins": ["Test"]}"#,
            r#"{"plugins": [" test-pro"]}"#,
            r#"{"plugins": [1]}"#,
            r#"{"plugins": ["a", "a"]}"#,
            r#"{"plugins": [], "plugins": []}"#,
            "[",
            "[]",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(read_selection(&path).is_err(), "{bad}");
        }
    }
}
