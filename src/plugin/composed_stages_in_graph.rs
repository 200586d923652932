//! Whether the compiled graph still holds the stages the composition put in the install.
//!
//! A plan can change no file and still leave the install uncompiled for its plugins: a compile
//! that failed or was killed, a graph restored from elsewhere, a graph edited by hand. The
//! composer then recompiles, as the reference composer does when the graph lacks a plugin's
//! stage slugs.
//!
//! Invariants:
//! - only plugins the selection enables are expected in the graph; a disabled plugin's stages
//!   may be there with `"enabled": false` or not at all;
//! - a stage is present when the graph has an entry with its slug that is not
//!   `"enabled": false`;
//! - a graph that cannot be read or is not a JSON array lacks every stage;
//! - the expected slugs are the file stems of the `.md` files each enabled plugin's lock record
//!   lists under the install's stages folder.

use std::collections::BTreeSet;

use camino::Utf8Path;
use serde_json::Value;

use crate::compile::discover::{Layout, MAX_GENERATED_BYTES};
use crate::compile::stage_graph::plugins_key::{Selection, is_enabled};
use crate::leaves::fs_util::read_bounded;
use crate::plugin::lock_file::Lock;

/// The slugs of the stages the enabled plugins of `lock` composed into the install.
pub fn composed_stage_slugs(
    layout: &Layout,
    lock: &Lock,
    selection: &Selection,
) -> BTreeSet<String> {
    lock.plugins
        .iter()
        .filter(|(name, _)| is_enabled(selection.as_ref(), name))
        .flat_map(|(_, record)| record.files.keys())
        .filter_map(|relative| stage_slug_of(layout, relative))
        .collect()
}

/// The slug of the stage file at project-relative `relative`, when it is a `.md` file under
/// the install's stages folder.
fn stage_slug_of(layout: &Layout, relative: &str) -> Option<String> {
    let absolute = layout.project_dir.join(relative);
    if !absolute.starts_with(&layout.stages_dir) || absolute.extension() != Some("md") {
        return None;
    }
    absolute.file_stem().map(str::to_owned)
}

/// The slugs of the enabled entries of the graph at `graph_path`, or `None` when it cannot be
/// read as an array of entries.
fn enabled_graph_slugs(graph_path: &Utf8Path) -> Option<BTreeSet<String>> {
    let bytes = read_bounded(graph_path, MAX_GENERATED_BYTES).ok()?;
    let Value::Array(entries) = serde_json::from_slice::<Value>(&bytes).ok()? else {
        return None;
    };
    Some(
        entries
            .iter()
            .filter(|entry| entry.get("enabled") != Some(&Value::Bool(false)))
            .filter_map(|entry| entry.get("slug").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
    )
}

/// Whether the compiled graph lacks one of `expected` (always false when nothing is expected).
pub fn graph_lacks_stages(layout: &Layout, expected: &BTreeSet<String>) -> bool {
    if expected.is_empty() {
        return false;
    }
    enabled_graph_slugs(&layout.stage_graph_path)
        .is_none_or(|present| expected.iter().any(|slug| !present.contains(slug)))
}

#[cfg(test)]
mod tests {
    use camino::Utf8PathBuf;

    use super::*;
    use crate::harness::Harness;

    fn layout_with_graph(graph: Option<&str>) -> (tempfile::TempDir, Layout) {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        let layout = Layout::new(&project, Harness::Claude, &|_| None);
        if let Some(graph) = graph {
            std::fs::create_dir_all(layout.stage_graph_path.parent().unwrap()).unwrap();
            std::fs::write(&layout.stage_graph_path, graph).unwrap();
        }
        (dir, layout)
    }

    fn slugs(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn a_stage_is_present_only_as_an_enabled_entry_of_a_readable_graph() {
        let graph =
            r#"[{"slug": "a"}, {"slug": "b", "enabled": false}, {"slug": "c", "enabled": true}]"#;
        let (_dir, layout) = layout_with_graph(Some(graph));
        assert!(!graph_lacks_stages(&layout, &slugs(&[])));
        assert!(!graph_lacks_stages(&layout, &slugs(&["a", "c"])));
        assert!(graph_lacks_stages(&layout, &slugs(&["a", "b"])));
        assert!(graph_lacks_stages(&layout, &slugs(&["d"])));
        let (_dir, unreadable) = layout_with_graph(Some("{"));
        assert!(graph_lacks_stages(&unreadable, &slugs(&["a"])));
        let (_dir, absent) = layout_with_graph(None);
        assert!(graph_lacks_stages(&absent, &slugs(&["a"])));
        assert!(!graph_lacks_stages(&absent, &slugs(&[])));
    }
}
