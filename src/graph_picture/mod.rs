//! `aidlc graph`: the compiled stage graph as a picture (Mermaid, Graphviz dot) or as a small
//! JSON document: phases as clusters, `requires_stage` edges (from the stage required to the
//! stage that requires it), and on request each stage's sensors, the blocking ones marked.
//!
//! [`read_stage_map`] reads the graph text strictly, through the dispatcher's reader
//! (`protocol::graph_reader::parse_graph`, which refuses any value this version never writes),
//! plus the four keys a picture needs that the dispatcher does not (`number`, `name`,
//! `execution`, `requires_stage`), refused the same way when missing or of the wrong type, and
//! a `requires_stage` naming no stage of the graph. [`StageMap::select`] picks the whole graph
//! or the neighbourhood of some stages; the renderers in `mermaid.rs`, `dot.rs` and `json.rs`
//! are pure functions of that [`Selection`].
//!
//! Output is deterministic: stages keep the graph's order (numeric), phases the framework's
//! order, edges the order of their target stage then of its `requires_stage` list.

mod dot;
mod json;
mod mermaid;

use std::collections::BTreeSet;

use serde_json::Value;

use crate::compile::syntax::stage::{EXECUTIONS, PHASES};
use crate::protocol::graph_reader::{GraphRefusal, GraphTextError, parse_graph};
use crate::protocol::selection::Severity;
use crate::protocol::stage_node::{Phase, SensorEntry};

pub use dot::render_dot;
pub use json::render_json;
pub use mermaid::render_mermaid;

/// The formats of `aidlc graph --format`.
//
// No doc comments on the variants: clap would show them as the values' help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PictureFormat {
    Mermaid,
    Dot,
    Json,
}

/// `selection` in `format`, without a trailing newline.
pub fn render(selection: &Selection<'_>, format: PictureFormat) -> String {
    match format {
        PictureFormat::Mermaid => render_mermaid(selection),
        PictureFormat::Dot => render_dot(selection),
        PictureFormat::Json => render_json(selection),
    }
}

/// The stages of a compiled graph, as a picture needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageMap {
    pub stages: Vec<MapStage>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapStage {
    pub slug: String,
    pub number: String,
    pub name: String,
    pub phase: Phase,
    /// `execution: CONDITIONAL`: the stage runs only when its condition holds.
    pub conditional: bool,
    /// The stages this one requires, as the graph lists them.
    pub requires_stage: Vec<String>,
    pub sensors: Vec<SensorEntry>,
}

impl MapStage {
    /// Whether any of the stage's sensors is blocking.
    pub fn has_blocking_sensor(&self) -> bool {
        self.sensors
            .iter()
            .any(|sensor| sensor.default_severity == Severity::Blocking)
    }
}

/// The graph in `text`, strictly read (see the module invariants).
pub fn read_stage_map(text: &str) -> Result<StageMap, GraphTextError> {
    let graph = parse_graph(text)?;
    // `parse_graph` has already refused anything but an array of objects with unique keys.
    let raw: Vec<Value> =
        serde_json::from_str(text).map_err(|error| GraphTextError::Json(error.to_string()))?;
    let mut stages = Vec::with_capacity(graph.nodes.len());
    for (node, raw) in graph.nodes.into_iter().zip(&raw) {
        let place = format!("stage \"{}\"", node.slug);
        let execution = required_string(raw, "execution", &place)?;
        if !EXECUTIONS.contains(&execution) {
            return Err(refusal(
                &place,
                "execution",
                &format!("\"{execution}\" (expected {})", EXECUTIONS.join(" | ")),
            ));
        }
        stages.push(MapStage {
            slug: node.slug,
            number: required_string(raw, "number", &place)?.to_owned(),
            name: required_string(raw, "name", &place)?.to_owned(),
            phase: node.phase,
            conditional: execution == "CONDITIONAL",
            requires_stage: string_list(raw, "requires_stage", &place)?,
            sensors: node.sensors_applicable,
        });
    }
    let map = StageMap { stages };
    map.check_requirements_resolve()?;
    Ok(map)
}

fn refusal(place: &str, key: &str, value: &str) -> GraphTextError {
    GraphTextError::Refused(GraphRefusal {
        place: place.to_owned(),
        key: key.to_owned(),
        value: value.to_owned(),
    })
}

fn required_string<'a>(node: &'a Value, key: &str, place: &str) -> Result<&'a str, GraphTextError> {
    match node.get(key) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(refusal(place, key, &format!("{other} (expected a string)"))),
        None => Err(refusal(place, key, "missing")),
    }
}

fn string_list(node: &Value, key: &str, place: &str) -> Result<Vec<String>, GraphTextError> {
    let items = match node.get(key) {
        Some(Value::Array(items)) => items,
        Some(other) => return Err(refusal(place, key, &format!("{other} (expected an array)"))),
        None => return Err(refusal(place, key, "missing")),
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let text = item.as_str().map(str::to_owned);
            text.ok_or_else(|| {
                let item_key = format!("{key}[{index}]");
                refusal(place, &item_key, &format!("{item} (expected a string)"))
            })
        })
        .collect()
}

/// An unknown stage asked for with `--stage`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStage {
    pub slug: String,
    pub closest: Option<String>,
}

impl StageMap {
    fn index_of(&self, slug: &str) -> Option<usize> {
        self.stages.iter().position(|stage| stage.slug == slug)
    }

    /// A compile refuses a `requires_stage` naming no stage; a graph that has one was not
    /// written by it, and an edge to nowhere would draw a stage that does not exist.
    fn check_requirements_resolve(&self) -> Result<(), GraphTextError> {
        for stage in &self.stages {
            for (index, required) in stage.requires_stage.iter().enumerate() {
                if self.index_of(required).is_none() {
                    return Err(refusal(
                        &format!("stage \"{}\"", stage.slug),
                        &format!("requires_stage[{index}]"),
                        &format!("\"{required}\" (no stage of the graph has this slug)"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The whole graph (no `focus`), or the stages in `focus` with the stages they require and
    /// the stages that require them, and only the edges that touch a focus stage.
    pub fn select(&self, focus: &[String], sensors: bool) -> Result<Selection<'_>, UnknownStage> {
        let mut focused = BTreeSet::new();
        for slug in focus {
            let Some(index) = self.index_of(slug) else {
                return Err(UnknownStage {
                    slug: slug.clone(),
                    closest: crate::leaves::diagnostics::closest_match(
                        slug,
                        self.stages.iter().map(|stage| stage.slug.as_str()),
                    )
                    .map(str::to_owned),
                });
            };
            focused.insert(index);
        }
        let shown: BTreeSet<usize> = if focused.is_empty() {
            (0..self.stages.len()).collect()
        } else {
            self.edges()
                .filter(|(from, to)| focused.contains(from) || focused.contains(to))
                .flat_map(|(from, to)| [from, to])
                .chain(focused.iter().copied())
                .collect()
        };
        // A neighbourhood draws the focus stages' own edges, not those among their neighbours.
        let edges = self
            .edges()
            .filter(|(from, to)| {
                focused.is_empty() || focused.contains(from) || focused.contains(to)
            })
            .collect();
        Ok(Selection {
            map: self,
            shown: shown.into_iter().collect(),
            focus: focused.into_iter().collect(),
            edges,
            sensors,
        })
    }

    /// `(required, requiring)` index pairs, by requiring stage then its list order; a stage
    /// listed twice gives one edge.
    fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.stages.iter().enumerate().flat_map(move |(to, stage)| {
            let mut seen = BTreeSet::new();
            stage
                .requires_stage
                .iter()
                .filter_map(|slug| self.index_of(slug))
                .filter(move |from| seen.insert(*from))
                .map(move |from| (from, to))
                .collect::<Vec<_>>()
        })
    }
}

/// What one `aidlc graph` run draws.
#[derive(Debug, Clone)]
pub struct Selection<'a> {
    map: &'a StageMap,
    /// Indexes into `map.stages`, ascending (the graph's order).
    shown: Vec<usize>,
    /// The stages asked for with `--stage`, ascending; empty for the whole graph.
    focus: Vec<usize>,
    edges: Vec<(usize, usize)>,
    /// Whether each stage's sensors are drawn.
    sensors: bool,
}

impl<'a> Selection<'a> {
    pub fn stages(&self) -> impl Iterator<Item = &'a MapStage> + '_ {
        self.shown.iter().map(|index| &self.map.stages[*index])
    }

    /// The phases that have a shown stage, in the framework's order, each with its stages.
    pub fn phases(&self) -> Vec<(Phase, Vec<&'a MapStage>)> {
        let mut phases: Vec<(Phase, Vec<&MapStage>)> = Vec::new();
        for stage in self.stages() {
            match phases.iter_mut().find(|(phase, _)| *phase == stage.phase) {
                Some((_, stages)) => stages.push(stage),
                None => phases.push((stage.phase, vec![stage])),
            }
        }
        phases.sort_by_key(|(phase, _)| PHASES.iter().position(|name| *name == phase.as_str()));
        phases
    }

    /// `(required, requiring)` pairs among the shown stages.
    pub fn edges(&self) -> impl Iterator<Item = (&'a MapStage, &'a MapStage)> + '_ {
        self.edges
            .iter()
            .map(|(from, to)| (&self.map.stages[*from], &self.map.stages[*to]))
    }

    pub fn is_focus(&self, stage: &MapStage) -> bool {
        self.focus
            .iter()
            .any(|index| self.map.stages[*index].slug == stage.slug)
    }

    pub fn focus(&self) -> impl Iterator<Item = &'a MapStage> + '_ {
        self.focus.iter().map(|index| &self.map.stages[*index])
    }
}

/// The text under a stage's title: one line per sensor, `id (fire_on)` or
/// `id (fire_on, blocking)`.
pub(crate) fn sensor_lines(stage: &MapStage) -> Vec<String> {
    stage
        .sensors
        .iter()
        .map(|sensor| match sensor.default_severity {
            Severity::Blocking => format!("{} ({}, blocking)", sensor.id, sensor.fire_on.as_str()),
            Severity::Advisory => format!("{} ({})", sensor.id, sensor.fire_on.as_str()),
        })
        .collect()
}

/// `1.3 Feasibility & Constraints`.
pub(crate) fn stage_title(stage: &MapStage) -> String {
    format!("{} {}", stage.number, stage.name)
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use super::*;

    pub(crate) fn node(slug: &str, phase: &str, requires: &[&str], sensors: &Value) -> Value {
        json!({
            "slug": slug, "number": "1.1", "name": format!("The {slug}"), "phase": phase,
            "execution": "ALWAYS", "produces": [format!("{slug}-doc")], "consumes": [],
            "requires_stage": requires, "sensors_applicable": sensors,
        })
    }

    /// Three ideation stages in a chain, one inception stage off the first, with sensors.
    pub(crate) fn sample_map() -> StageMap {
        let mut conditional = node("b-stage", "ideation", &["a-stage"], &json!([]));
        conditional["execution"] = json!("CONDITIONAL");
        conditional["number"] = json!("1.2");
        conditional["name"] = json!("Quotes \"and\" <angles> & \\slashes");
        let text = json!([
            node("a-stage", "ideation", &[], &json!([
                {"id": "shape", "path": "s.md", "fire_on": "gate", "default_severity": "blocking"},
                {"id": "lint", "path": "l.md", "fire_on": "write", "default_severity": "advisory"},
            ])),
            conditional,
            node("c-stage", "ideation", &["b-stage", "b-stage"], &json!([])),
            node("d-stage", "inception", &["a-stage"], &json!([])),
        ])
        .to_string();
        read_stage_map(&text).expect("a valid graph")
    }

    fn slugs<'a>(stages: impl Iterator<Item = &'a MapStage>) -> Vec<&'a str> {
        stages.map(|stage| stage.slug.as_str()).collect()
    }

    #[test]
    fn the_whole_graph_keeps_every_stage_and_edge_once() {
        let map = sample_map();
        let selection = map.select(&[], false).unwrap();
        assert_eq!(
            slugs(selection.stages()),
            ["a-stage", "b-stage", "c-stage", "d-stage"]
        );
        let edges: Vec<(&str, &str)> = selection
            .edges()
            .map(|(from, to)| (from.slug.as_str(), to.slug.as_str()))
            .collect();
        assert_eq!(
            edges,
            [
                ("a-stage", "b-stage"),
                ("b-stage", "c-stage"),
                ("a-stage", "d-stage")
            ]
        );
        assert!(map.stages[0].has_blocking_sensor());
        assert!(map.stages[1].conditional);
    }

    #[test]
    fn a_stages_neighbourhood_is_what_it_requires_and_what_requires_it() {
        let map = sample_map();
        let selection = map.select(&["b-stage".to_owned()], false).unwrap();
        assert_eq!(slugs(selection.stages()), ["a-stage", "b-stage", "c-stage"]);
        assert_eq!(selection.edges().count(), 2);
        assert_eq!(slugs(selection.focus()), ["b-stage"]);
        let selection = map.select(&["c-stage".to_owned()], false).unwrap();
        assert_eq!(slugs(selection.stages()), ["b-stage", "c-stage"]);
        let selection = map.select(&["a-stage".to_owned()], false).unwrap();
        assert_eq!(slugs(selection.stages()), ["a-stage", "b-stage", "d-stage"]);
        assert_eq!(selection.edges().count(), 2, "a-stage's own edges only");
        let selection = map.select(&["d-stage".to_owned()], false).unwrap();
        assert_eq!(slugs(selection.stages()), ["a-stage", "d-stage"]);
        assert_eq!(selection.phases().len(), 2);
        let unknown = map.select(&["b-stag".to_owned()], false).unwrap_err();
        assert_eq!(unknown.closest.as_deref(), Some("b-stage"));
    }

    #[test]
    fn a_graph_missing_a_picture_key_or_naming_an_unknown_stage_is_refused() {
        let mut no_number = node("a-stage", "ideation", &[], &json!([]));
        no_number.as_object_mut().unwrap().remove("number");
        let mut bad_execution = node("a-stage", "ideation", &[], &json!([]));
        bad_execution["execution"] = json!("SOMETIMES");
        let mut list_of_numbers = node("a-stage", "ideation", &[], &json!([]));
        list_of_numbers["requires_stage"] = json!([1]);
        let dangling = node("a-stage", "ideation", &["nowhere"], &json!([]));
        for (bad, key) in [
            (no_number, "number"),
            (bad_execution, "execution"),
            (list_of_numbers, "requires_stage[0]"),
            (dangling, "requires_stage[0]"),
        ] {
            match read_stage_map(&json!([bad]).to_string()) {
                Err(GraphTextError::Refused(refusal)) => assert_eq!(refusal.key, key),
                other => panic!("{key}: {other:?}"),
            }
        }
        let unknown_phase = node("a-stage", "design", &[], &json!([]));
        assert!(matches!(
            read_stage_map(&json!([unknown_phase]).to_string()),
            Err(GraphTextError::Refused(_))
        ));
        assert!(matches!(
            read_stage_map("not json"),
            Err(GraphTextError::Json(_))
        ));
    }
}
