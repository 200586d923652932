//! The scope grid without the columns of the scope files a plan removes.
//!
//! A composed column that no stage names is carried over by the compile; in an install of the
//! 2.5 graph format it is carried over even without its scope file, as that reference does
//! (`stage_graph::scope_grid`). So when a plugin's scope files go, their columns are taken out
//! of the grid on disk before the compile, and removing a plugin gives the grid back as it was.
//!
//! Invariant: only columns named by a removed scope file's `name:` are taken out; a grid that
//! is not a JSON object, or that has none of those columns, is left alone (`None`).

use std::collections::BTreeMap;

use camino::Utf8Path;
use serde_json::Value;

use crate::compile::discover::Layout;
use crate::compile::syntax::document::{DocumentKind, read_frontmatter, scalar_string};
use crate::plugin::compose::Plan;

/// The grid's new bytes when the plan removes scope files whose columns it holds. Reads the
/// removed files, so it runs before the plan's changes are applied.
pub fn grid_without_removed_scope_columns(layout: &Layout, plan: &Plan) -> Option<Vec<u8>> {
    let removed_names: Vec<String> = plan
        .changes
        .iter()
        .filter(|(path, bytes)| bytes.is_none() && path.starts_with(&layout.scopes_dir))
        .filter_map(|(path, _)| scope_name_of(path))
        .collect();
    if removed_names.is_empty() {
        return None;
    }
    let text = crate::leaves::fs_util::read_bounded_text(
        &layout.scope_grid_path,
        crate::compile::discover::MAX_GENERATED_BYTES,
    )
    .ok()?;
    let Ok(Value::Object(columns)) = serde_json::from_str::<Value>(&text) else {
        return None;
    };
    if !removed_names.iter().any(|name| columns.contains_key(name)) {
        return None;
    }
    let kept: BTreeMap<String, Value> = columns
        .into_iter()
        .filter(|(name, _)| !removed_names.contains(name))
        .collect();
    let object = Value::Object(kept.into_iter().collect());
    Some(format!("{}\n", crate::leaves::js_json::pretty_json(&object)).into_bytes())
}

/// The `name:` a scope file declares; `None` when it cannot be read or declares none.
fn scope_name_of(path: &Utf8Path) -> Option<String> {
    let text = crate::leaves::fs_util::read_input_text(path).ok()?;
    let mut ignored = Vec::new();
    let map = read_frontmatter(&text, path, DocumentKind::Scope, &mut ignored)?;
    map.value("name").and_then(scalar_string).map(str::to_owned)
}
