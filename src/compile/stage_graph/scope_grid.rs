//! `scope-grid.json`: the transpose of every stage's `scopes:` list.
//!
//! Columns are the union of the stages' scope names, in byte order; each column lists every
//! stage in graph order as `EXECUTE` (the stage lists the scope, or it is an initialization
//! stage) or `SKIP`. Composed scopes (columns of the existing grid that no stage names but that
//! have a scope file; in an install of the 2.5 graph format, any such column, scope file or
//! not, as that reference keeps them) are carried over verbatim, then all columns are sorted
//! again.
//!
//! Under a plugin selection (docs/decisions.md D14), as the reference compiles it: the rows are
//! the enabled stages only, and the columns are the scope files' names whose plugin (`aidlc`
//! for a scope that names none) is selected, whether or not a stage names them, with the
//! composed columns carried over as before.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::compile::db::Project;
use crate::compile::parse::{scope_catalog, source_text};
use crate::compile::stage_graph::format_choice::graph_format;
use crate::compile::stage_graph::numbering::stage_numbering;
use crate::compile::stage_graph::plugin_selection::plugin_selection;
use crate::compile::stage_graph::plugins_key::{CORE_PLUGIN, is_enabled};
use crate::compile::stage_graph::stage_chunks::{
    FactsByStage, StageChunk, each_stage_with, gathered_facts_of_chunk,
};
use crate::leaves::js_json::{array_index, pretty_json};
use crate::protocol::pretty_writer::PrettyWriter;

/// What one stage contributes to the grid: a projection of `parsed_stage` that stays equal
/// when anything but the slug, the phase or `scopes:` changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageScopeRow {
    pub slug: String,
    pub is_initialization: bool,
    /// The plugin the stage belongs to (`None`: the core), for the selection.
    pub plugin: Option<String>,
    pub scopes: Vec<String>,
}

/// The scope rows of one chunk of the stage list (see [`crate::compile::stage_graph::stage_chunks`]).
#[salsa::tracked(returns(ref))]
pub fn stage_scope_rows_in_chunk<'db>(
    db: &'db dyn salsa::Database,
    chunk: StageChunk<'db>,
) -> Vec<Option<StageScopeRow>> {
    gathered_facts_of_chunk(db, chunk, |stage| StageScopeRow {
        slug: stage.slug.value.clone(),
        is_initialization: stage.phase.value == "initialization",
        plugin: stage.plugin.as_ref().map(|plugin| plugin.value.clone()),
        scopes: stage.scopes.clone(),
    })
}

#[salsa::tracked]
pub fn scope_grid_json(db: &dyn salsa::Database) -> std::sync::Arc<String> {
    let selection = plugin_selection(db).enabled.as_ref();
    let rows = FactsByStage::new(db, stage_scope_rows_in_chunk);
    let rows_in_graph_order: Vec<&StageScopeRow> = stage_numbering(db)
        .order
        .iter()
        .filter_map(|&file| rows.get(file))
        .filter(|row| {
            row.is_initialization
                || is_enabled(selection, row.plugin.as_deref().unwrap_or(CORE_PLUGIN))
        })
        .collect();
    let mut stock_names: BTreeSet<String> = BTreeSet::new();
    for (_, row) in each_stage_with(db, stage_scope_rows_in_chunk) {
        if let Some(row) = row {
            stock_names.extend(row.scopes.iter().cloned());
        }
    }
    let composed = composed_columns(db, &stock_names);
    // The columns written fresh: every scope a stage names, or under a selection the selected
    // plugins' scope files (a composed column is carried over instead).
    let stock_names = if selection.is_none() {
        stock_names
    } else {
        let catalog = scope_catalog(db);
        catalog
            .names
            .keys()
            .filter(|name| {
                let owner = catalog
                    .owners
                    .get(*name)
                    .map_or(CORE_PLUGIN, String::as_str);
                is_enabled(selection, owner)
                    && !composed.iter().any(|(composed, _)| composed == *name)
            })
            .cloned()
            .collect()
    };
    std::sync::Arc::new(grid_written_directly(
        &rows_in_graph_order,
        &stock_names,
        &composed,
    ))
}

/// The grid's text, written column by column into one buffer, its keys (scopes, and slugs in
/// a column) in JavaScript's order, as `pretty_json` would order them.
fn grid_written_directly(
    rows_in_graph_order: &[&StageScopeRow],
    stock_names: &BTreeSet<String>,
    composed: &[(String, Value)],
) -> String {
    let mut columns: BTreeMap<&str, Option<&Value>> = stock_names
        .iter()
        .map(|name| (name.as_str(), None))
        .collect();
    for (name, column) in composed {
        columns.entry(name.as_str()).or_insert(Some(column));
    }
    let columns: Vec<(&str, Option<&Value>)> = columns.into_iter().collect();
    let columns = in_javascript_key_order(&columns, |(scope, _)| scope);
    let rows_in_graph_order = in_javascript_key_order(rows_in_graph_order, |row| &row.slug);
    let row_bytes: usize = rows_in_graph_order
        .iter()
        .map(|row| row.slug.len() + 24)
        .sum();
    let mut out = String::with_capacity(columns.len() * (row_bytes + 64) + 4);
    let mut grid = PrettyWriter::new(&mut out, 0);
    grid.begin_object();
    for &(scope, column) in columns.iter() {
        grid.key(scope);
        if let Some(column) = column {
            grid.value(column);
            continue;
        }
        grid.begin_object();
        grid.key("stages");
        grid.begin_object();
        for row in rows_in_graph_order.iter() {
            let executes = row.is_initialization || row.scopes.iter().any(|name| name == scope);
            grid.string_field(&row.slug, if executes { "EXECUTE" } else { "SKIP" });
        }
        grid.end_object();
        grid.end_object();
    }
    grid.end_object();
    out.push('\n');
    out
}

/// `items` in the order JavaScript enumerates their keys: the keys that are array indices
/// first, ascending, then the others in their order. No stock project has such a scope or
/// slug, so almost every grid keeps its order without a copy.
fn in_javascript_key_order<T: Clone>(items: &[T], key: impl Fn(&T) -> &str) -> Cow<'_, [T]> {
    if !items.iter().any(|item| array_index(key(item)).is_some()) {
        return Cow::Borrowed(items);
    }
    let mut ordered = items.to_vec();
    ordered.sort_by_key(|item| array_index(key(item)).map_or((1, 0), |index| (0, index)));
    Cow::Owned(ordered)
}

/// Columns of the grid on disk that no stage names but a scope file declares (in the 2.5
/// graph format, scope file or not: see
/// [`crate::protocol::graph_format::GraphFormat::keeps_composed_scope_columns_without_a_scope_file`]).
fn composed_columns(
    db: &dyn salsa::Database,
    stock_names: &BTreeSet<String>,
) -> Vec<(String, Value)> {
    let catalog = scope_catalog(db);
    let needs_no_scope_file = graph_format(db)
        .0
        .keeps_composed_scope_columns_without_a_scope_file();
    // Otherwise only a scope file no stage names can be a composed column: with none, the grid
    // on disk (megabytes in a large project) need not be parsed at all.
    if !needs_no_scope_file && catalog.names.keys().all(|name| stock_names.contains(name)) {
        return Vec::new();
    }
    let Some(&file) = Project::get(db).existing_grid(db).as_ref() else {
        return Vec::new();
    };
    let Ok(text) = source_text(db, file) else {
        return Vec::new();
    };
    let Ok(Value::Object(on_disk)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    on_disk
        .into_iter()
        .filter(|(name, column)| {
            !stock_names.contains(name)
                && (needs_no_scope_file || catalog.names.contains_key(name))
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

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    /// The grid's text through `serde_json` values and `pretty_json`, which order any key as
    /// JavaScript would; the oracle [`grid_written_directly`] must equal.
    fn grid_through_values(
        rows_in_graph_order: &[&StageScopeRow],
        stock_names: &BTreeSet<String>,
        composed: Vec<(String, Value)>,
    ) -> String {
        let mut grid: BTreeMap<String, Value> = BTreeMap::new();
        for scope in stock_names {
            let mut rows = Map::new();
            for row in rows_in_graph_order {
                let executes = row.is_initialization || row.scopes.contains(scope);
                rows.insert(
                    row.slug.clone(),
                    json!(if executes { "EXECUTE" } else { "SKIP" }),
                );
            }
            grid.insert(scope.clone(), json!({ "stages": rows }));
        }
        for (name, column) in composed {
            grid.entry(name).or_insert(column);
        }
        let object: Map<String, Value> = grid.into_iter().collect();
        format!("{}\n", pretty_json(&Value::Object(object)))
    }

    use crate::compile::stage_graph::test_projects::loaded_projects;

    #[test]
    fn the_grid_written_directly_equals_the_general_path() {
        for project in loaded_projects() {
            let db = &project.db;
            let rows_by_stage = FactsByStage::new(db, stage_scope_rows_in_chunk);
            let rows: Vec<&StageScopeRow> = stage_numbering(db)
                .order
                .iter()
                .filter_map(|&file| rows_by_stage.get(file))
                .collect();
            let mut stock_names = BTreeSet::new();
            for row in &rows {
                stock_names.extend(row.scopes.iter().cloned());
            }
            let composed = vec![(
                "zz-composed".to_owned(),
                json!({ "stages": { "b": "SKIP", "10": "EXECUTE", "2": "SKIP" } }),
            )];
            assert_eq!(
                grid_written_directly(&rows, &stock_names, &composed),
                grid_through_values(&rows, &stock_names, composed.clone()),
                "{}",
                project.name
            );
            let through_values =
                grid_through_values(&rows, &stock_names, composed_columns(db, &stock_names));
            assert_eq!(**scope_grid_json(db), through_values, "{}", project.name);
        }
    }

    #[test]
    fn a_scope_that_starts_with_a_digit_is_ordered_as_javascript_orders_it() {
        let row = StageScopeRow {
            slug: "a-stage".to_owned(),
            is_initialization: false,
            plugin: None,
            scopes: vec!["10".to_owned(), "2".to_owned(), "b".to_owned()],
        };
        let stock_names: BTreeSet<String> = row.scopes.iter().cloned().collect();
        let text = grid_through_values(&[&row], &stock_names, Vec::new());
        let order: Vec<usize> = ["\"2\"", "\"10\"", "\"b\""]
            .iter()
            .map(|key| text.find(key).unwrap())
            .collect();
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
        let rows: Vec<StageScopeRow> = ["z", "10", "a", "2", "01"]
            .iter()
            .map(|slug| StageScopeRow {
                slug: (*slug).to_owned(),
                ..row.clone()
            })
            .collect();
        let rows: Vec<&StageScopeRow> = rows.iter().collect();
        let composed = vec![(
            "3".to_owned(),
            json!({ "stages": { "b": "SKIP", "1": "SKIP" } }),
        )];
        assert_eq!(
            grid_written_directly(&rows, &stock_names, &composed),
            grid_through_values(&rows, &stock_names, composed.clone())
        );
    }
}
