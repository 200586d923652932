//! The JSON form of a picture, for tools that lay the graph out themselves: the stages shown
//! (with their sensors when asked), the phases with their stages, the edges, and the stages
//! asked for. Keys in a fixed order; versioned by [`PICTURE_JSON_VERSION`].

use serde_json::{Value, json};

use crate::graph_picture::{MapStage, Selection};

/// The version of the document [`render_json`] writes; it changes when a key changes meaning
/// or goes away.
pub const PICTURE_JSON_VERSION: u64 = 1;

/// `selection` as one pretty-printed JSON document, without a trailing newline.
pub fn render_json(selection: &Selection<'_>) -> String {
    let document = json!({
        "version": PICTURE_JSON_VERSION,
        "focus": selection.focus().map(|stage| stage.slug.as_str()).collect::<Vec<_>>(),
        "phases": selection.phases().iter().map(|(phase, stages)| json!({
            "phase": phase.as_str(),
            "stages": stages.iter().map(|stage| stage.slug.as_str()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "stages": selection.stages().map(|stage| stage_value(selection, stage)).collect::<Vec<_>>(),
        "edges": selection.edges().map(|(from, to)| json!({
            "from": from.slug,
            "to": to.slug,
        })).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&document).expect("a JSON value always serialises")
}

fn stage_value(selection: &Selection<'_>, stage: &MapStage) -> Value {
    let mut value = json!({
        "slug": stage.slug,
        "number": stage.number,
        "name": stage.name,
        "phase": stage.phase.as_str(),
        "conditional": stage.conditional,
        "requires_stage": stage.requires_stage,
    });
    if selection.sensors {
        value["sensors"] = stage
            .sensors
            .iter()
            .map(|sensor| {
                json!({
                    "id": sensor.id,
                    "fire_on": sensor.fire_on.as_str(),
                    "default_severity": sensor.default_severity.as_str(),
                })
            })
            .collect();
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_picture::tests::sample_map;

    #[test]
    fn a_neighbourhood_with_sensors() {
        let map = sample_map();
        insta::assert_snapshot!(render_json(
            &map.select(&["a-stage".to_owned()], true).unwrap()
        ));
    }

    #[test]
    fn sensors_only_when_asked() {
        let map = sample_map();
        let document: Value =
            serde_json::from_str(&render_json(&map.select(&[], false).unwrap())).unwrap();
        assert!(document["stages"][0].get("sensors").is_none());
        assert_eq!(document["edges"].as_array().unwrap().len(), 3);
        assert_eq!(document["focus"], json!([]));
    }
}
