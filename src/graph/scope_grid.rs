//! `scope-grid.json`: the transpose of every stage's `scopes:` list.
//!
//! Columns are the union of the stages' scope names, in byte order; each column lists every
//! stage in graph order as `EXECUTE` (the stage lists the scope, or it is an initialization
//! stage) or `SKIP`. Composed scopes (columns of the existing grid that no stage names but that
//! have a scope file) are carried over verbatim, then all columns are sorted again.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::db::{Project, SourceFile};
use crate::graph::numbering::stage_numbering;
use crate::js_json::pretty_json;
use crate::parse::{parsed_stage, scope_catalog, source_text};

/// What one stage contributes to the grid: a projection of `parsed_stage` that stays equal
/// when anything but the slug, the phase or `scopes:` changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageScopeRow {
    pub slug: String,
    pub is_initialization: bool,
    pub scopes: Vec<String>,
}

#[salsa::tracked(returns(ref))]
pub fn stage_scope_row(db: &dyn salsa::Database, file: SourceFile) -> Option<StageScopeRow> {
    let stage = parsed_stage(db, file).definition.as_ref()?;
    Some(StageScopeRow {
        slug: stage.slug.value.clone(),
        is_initialization: stage.phase.value == "initialization",
        scopes: stage.scopes.clone(),
    })
}

#[salsa::tracked]
pub fn scope_grid_json(db: &dyn salsa::Database) -> std::sync::Arc<str> {
    let rows_in_graph_order: Vec<&StageScopeRow> = stage_numbering(db)
        .order
        .iter()
        .filter_map(|&file| stage_scope_row(db, file).as_ref())
        .collect();
    let mut stock_names: BTreeSet<String> = BTreeSet::new();
    for entry in Project::get(db).stage_files(db) {
        if let Some(row) = stage_scope_row(db, entry.file) {
            stock_names.extend(row.scopes.iter().cloned());
        }
    }
    let mut grid: BTreeMap<String, Value> = BTreeMap::new();
    for scope in &stock_names {
        let mut rows = Map::new();
        for row in &rows_in_graph_order {
            let executes = row.is_initialization || row.scopes.contains(scope);
            rows.insert(
                row.slug.clone(),
                json!(if executes { "EXECUTE" } else { "SKIP" }),
            );
        }
        grid.insert(scope.clone(), json!({ "stages": rows }));
    }
    for (name, column) in composed_columns(db, &stock_names) {
        grid.entry(name).or_insert(column);
    }
    let object: Map<String, Value> = grid.into_iter().collect();
    std::sync::Arc::from(format!("{}\n", pretty_json(&Value::Object(object))))
}

/// Columns of the grid on disk that no stage names but a scope file declares.
fn composed_columns(
    db: &dyn salsa::Database,
    stock_names: &BTreeSet<String>,
) -> Vec<(String, Value)> {
    let Some(&file) = Project::get(db).existing_grid(db).as_ref() else {
        return Vec::new();
    };
    let Ok(text) = source_text(db, file) else {
        return Vec::new();
    };
    let Ok(Value::Object(on_disk)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let catalog = scope_catalog(db);
    on_disk
        .into_iter()
        .filter(|(name, column)| {
            !stock_names.contains(name)
                && catalog.names.contains_key(name)
                && column.get("stages").is_some_and(Value::is_object)
        })
        .collect()
}

/// The grid on disk with its columns sorted, re-emitted canonically (what `--check` compares
/// against, so a composed column appended at the end is not reported as drift).
pub fn normalised_grid_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => {
            let sorted: BTreeMap<String, Value> = map.into_iter().collect();
            format!(
                "{}\n",
                pretty_json(&Value::Object(sorted.into_iter().collect()))
            )
        }
        _ => text.to_owned(),
    }
}
