//! Stage numbers and display names (D15).
//!
//! A slug already in the existing `stage-graph.json` keeps its number and name. New slugs are
//! seeded per phase: Kahn's order over the `requires_stage` edges inside the new batch, ties
//! broken by the authored `number:` hint, then by slug; numbers continue after the highest
//! index already used in that phase.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::compile::db::{GraphRows, Project, SourceFile};
use crate::compile::parse::{parsed_stage, source_text};
use crate::compile::stage_graph::stage_chunks::{
    StageChunk, each_stage_with, gathered_facts_of_chunk,
};
use crate::compile::syntax::stage::PHASES;
use crate::leaves::diagnostics::{Code, Diagnostic};

/// The parts of a stage that decide numbering and graph checks; backdates on prose edits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageHeader {
    pub slug: String,
    pub phase: String,
    pub requires_stage: Vec<String>,
    pub number_hint: Option<String>,
    pub name: Option<String>,
}

/// The headers of one chunk of the stage list (see [`crate::compile::stage_graph::stage_chunks`]).
#[salsa::tracked(returns(ref))]
pub fn stage_headers_in_chunk<'db>(
    db: &'db dyn salsa::Database,
    chunk: StageChunk<'db>,
) -> Vec<Option<StageHeader>> {
    gathered_facts_of_chunk(db, chunk, |stage| StageHeader {
        slug: stage.slug.value.clone(),
        phase: stage.phase.value.clone(),
        requires_stage: dedup(stage.requires_stage.iter().map(|dep| dep.value.clone())),
        number_hint: stage.number_hint.clone(),
        name: stage.name.clone(),
    })
}

/// Keep the first occurrence of each item.
pub fn dedup<T: Ord + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = BTreeSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

/// `(number, name)` rows harvested from the existing graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PinnedRows {
    pub by_slug: GraphRows,
    pub diagnostics: Vec<Diagnostic>,
}

/// The three fields numbering reads from a node of an existing graph. Deserialising into this
/// skips every other field without building it, several times faster than a `Value` for a
/// large graph; a graph it cannot describe (a node that is not an object, a non-string slug)
/// falls back to the lenient `Value` walk below, which gives the same rows.
#[derive(serde::Deserialize)]
struct PinnedNode {
    slug: Option<String>,
    number: Option<String>,
    name: Option<String>,
}

#[salsa::tracked(returns(ref))]
pub fn pinned_rows(db: &dyn salsa::Database) -> PinnedRows {
    let mut pinned = PinnedRows::default();
    let project = Project::get(db);
    if let Some(rows) = project.written_graph_rows(db) {
        pinned.by_slug = Arc::clone(rows);
        return pinned;
    }
    let Some(&file) = project.existing_graph(db).as_ref() else {
        return pinned;
    };
    let text = match source_text(db, file) {
        Ok(text) => text,
        Err(diagnostic) => {
            pinned.diagnostics.push(diagnostic);
            return pinned;
        }
    };
    let mut by_slug = BTreeMap::new();
    // The first node of each slug with all three fields pins it.
    let mut pin = |slug: Option<String>, number: Option<String>, name: Option<String>| {
        if let (Some(slug), Some(number), Some(name)) = (slug, number, name) {
            by_slug.entry(slug).or_insert((number, name));
        }
    };
    if let Ok(nodes) = serde_json::from_str::<Vec<PinnedNode>>(text) {
        for node in nodes {
            pin(node.slug, node.number, node.name);
        }
    } else if let Ok(serde_json::Value::Array(nodes)) = serde_json::from_str(text) {
        for node in nodes {
            let field = |key: &str| {
                node.get(key)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            };
            pin(field("slug"), field("number"), field("name"));
        }
    } else {
        pinned.diagnostics.push(
            Diagnostic::error(
                Code::MalformedStageGraph,
                "the existing stage-graph.json is not a JSON array of stage nodes, so stage numbers cannot be pinned from it",
            )
            .in_file(file.path(db))
            .with_help("restore it from version control, or delete it to have every stage number seeded afresh"),
        );
        return pinned;
    }
    pinned.by_slug = Arc::new(by_slug);
    pinned
}

/// `"2.10"` → `(2, 10)`; anything unparsable sorts last.
pub fn number_key(number: &str) -> (u64, u64) {
    let (major, minor) = number.split_once('.').unwrap_or((number, ""));
    (
        major.parse().unwrap_or(u64::MAX),
        minor.parse().unwrap_or(u64::MAX),
    )
}

/// "nfr-design" → "Nfr Design".
pub fn title_case(slug: &str) -> String {
    slug.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Numbering {
    /// `(number, name)` per slug: exactly the stages of `order`, so also exactly the rows a
    /// reader of the emitted graph would pin.
    pub by_slug: GraphRows,
    /// Stage files in graph order (numeric), first file per slug only.
    pub order: Vec<SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn stage_numbering(db: &dyn salsa::Database) -> Numbering {
    let pinned = pinned_rows(db);
    let mut numbering = Numbering::default();
    let mut by_slug: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut headers: Vec<(SourceFile, &StageHeader)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (entry, header) in each_stage_with(db, stage_headers_in_chunk) {
        if let Some(header) = header
            && seen.insert(header.slug.clone())
        {
            headers.push((entry.file, header));
        }
    }
    let mut new_by_phase: BTreeMap<usize, Vec<&StageHeader>> = BTreeMap::new();
    let mut max_index: BTreeMap<u64, u64> = BTreeMap::new();
    for (_, header) in &headers {
        if let Some((number, pinned_name)) = pinned.by_slug.get(&header.slug) {
            let (major, minor) = number_key(number);
            let highest = max_index.entry(major).or_insert(0);
            *highest = (*highest).max(minor);
            by_slug.insert(header.slug.clone(), (number.clone(), pinned_name.clone()));
        } else {
            let phase_index = PHASES
                .iter()
                .position(|phase| *phase == header.phase)
                .unwrap_or(PHASES.len());
            new_by_phase.entry(phase_index).or_default().push(header);
        }
    }
    for (phase_index, batch) in new_by_phase {
        let start = max_index.get(&(phase_index as u64)).copied().unwrap_or(0) + 1;
        match seed_order(&batch) {
            Ok(order) => {
                for (offset, header) in order.into_iter().enumerate() {
                    let number = format!("{phase_index}.{}", start + offset as u64);
                    let name = header
                        .name
                        .clone()
                        .unwrap_or_else(|| title_case(&header.slug));
                    by_slug.insert(header.slug.clone(), (number, name));
                }
            }
            Err(stuck) => {
                let phase = PHASES.get(phase_index).copied().unwrap_or("?");
                numbering.diagnostics.push(
                    Diagnostic::error(
                        Code::RequiresStageCycle,
                        format!("Cannot seed stage numbers for phase \"{phase}\": requires_stage cycle among new stages (stuck: {}). Break the cycle.", stuck.join(", ")),
                    )
                    .with_help("remove one `requires_stage` entry so that the stages form an order"),
                );
            }
        }
    }
    headers.sort_by_cached_key(|(_, header)| {
        by_slug
            .get(&header.slug)
            .map_or((u64::MAX, u64::MAX), |(number, _)| number_key(number))
    });
    numbering.order = headers
        .iter()
        .filter(|(_, header)| by_slug.contains_key(&header.slug))
        .map(|(file, _)| *file)
        .collect();
    numbering
        .diagnostics
        .extend(pinned.diagnostics.iter().cloned());
    numbering.by_slug = Arc::new(by_slug);
    numbering
}

/// Kahn's algorithm over in-batch edges, always taking the smallest ready stage by
/// (number hint, slug); `Err` holds the slugs left in a cycle, sorted.
fn seed_order<'a>(batch: &[&'a StageHeader]) -> Result<Vec<&'a StageHeader>, Vec<String>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let index_of: BTreeMap<&str, usize> = batch
        .iter()
        .enumerate()
        .map(|(index, header)| (header.slug.as_str(), index))
        .collect();
    let mut n_blockers = vec![0usize; batch.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); batch.len()];
    for (index, header) in batch.iter().enumerate() {
        let deps: BTreeSet<usize> = header
            .requires_stage
            .iter()
            .filter_map(|dep| index_of.get(dep.as_str()).copied())
            .filter(|&dep| dep != index)
            .collect();
        n_blockers[index] = deps.len();
        for dep in deps {
            dependents[dep].push(index);
        }
    }
    let tie_key = |index: usize| {
        let header = batch[index];
        let hint = header
            .number_hint
            .as_deref()
            .map_or(u64::MAX, |number| number_key(number).1);
        Reverse((hint, header.slug.as_str(), index))
    };
    let mut ready: BinaryHeap<_> = (0..batch.len())
        .filter(|&index| n_blockers[index] == 0)
        .map(tie_key)
        .collect();
    let mut order = Vec::with_capacity(batch.len());
    while let Some(Reverse((_, _, index))) = ready.pop() {
        order.push(batch[index]);
        for &dependent in &dependents[index] {
            n_blockers[dependent] -= 1;
            if n_blockers[dependent] == 0 {
                ready.push(tie_key(dependent));
            }
        }
    }
    if order.len() < batch.len() {
        let mut stuck: Vec<String> = (0..batch.len())
            .filter(|&index| n_blockers[index] > 0)
            .map(|index| batch[index].slug.clone())
            .collect();
        stuck.sort();
        return Err(stuck);
    }
    Ok(order)
}

/// This stage's `(number, name)`; backdates when other stages' numbers change.
#[salsa::tracked(returns(ref))]
pub fn stage_number(db: &dyn salsa::Database, file: SourceFile) -> Option<(String, String)> {
    let slug = &parsed_stage(db, file).definition.as_ref()?.slug.value;
    stage_numbering(db).by_slug.get(slug).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_cases_slugs() {
        assert_eq!(title_case("nfr-design"), "Nfr Design");
        assert_eq!(title_case("build-and-test"), "Build And Test");
    }

    #[test]
    fn numbers_compare_numerically() {
        assert!(number_key("4.50") > number_key("4.9"));
        assert!(number_key("1.10") > number_key("1.2"));
    }
}
