//! The Mermaid flowchart (GitHub renders it in Markdown inside a ```` ```mermaid ```` block):
//! one subgraph per phase, one node per stage titled `number name` (with its sensors under the
//! title when asked), an arrow from each required stage to the stage requiring it. Conditional
//! stages are dashed, stages with a blocking sensor get a thick red border, and the stages asked
//! for with `--stage` are filled.

use std::fmt::Write as _;

use crate::graph_picture::{MapStage, Selection, sensor_lines, stage_title};

/// `selection` as a Mermaid flowchart, without a trailing newline.
pub fn render_mermaid(selection: &Selection<'_>) -> String {
    let mut out = String::from("flowchart TB\n");
    for (phase, stages) in selection.phases() {
        let _ = writeln!(
            out,
            "  subgraph phase_{0}[\"{0}\"]",
            node_id_text(phase.as_str())
        );
        for stage in stages {
            let _ = writeln!(
                out,
                "    {}[\"{}\"]",
                node_id(stage),
                label(selection, stage)
            );
        }
        out.push_str("  end\n");
    }
    for (from, to) in selection.edges() {
        let _ = writeln!(out, "  {} --> {}", node_id(from), node_id(to));
    }
    out.push_str("  classDef conditional stroke-dasharray: 5 4\n");
    out.push_str("  classDef blocking stroke:#b00020,stroke-width:3px\n");
    out.push_str("  classDef focus fill:#ffe9a8\n");
    let conditional: Vec<&MapStage> = selection.stages().filter(|s| s.conditional).collect();
    let blocking: Vec<&MapStage> = selection
        .stages()
        .filter(|stage| selection.sensors && stage.has_blocking_sensor())
        .collect();
    let focus: Vec<&MapStage> = selection.focus().collect();
    for (class, stages) in [
        ("conditional", conditional),
        ("blocking", blocking),
        ("focus", focus),
    ] {
        if !stages.is_empty() {
            let ids: Vec<String> = stages.into_iter().map(node_id).collect();
            let _ = writeln!(out, "  class {} {class}", ids.join(","));
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// `s_<slug with - as _>`: the prefix keeps a slug such as `end` from being a keyword, and kebab
/// slugs (which have no `_`) stay distinct.
fn node_id(stage: &MapStage) -> String {
    format!("s_{}", node_id_text(&stage.slug))
}

/// Letters and digits kept, `-` as `_`, anything else as `_<hex>_` (a slug the compile wrote is
/// kebab-case, so only the first two happen there).
fn node_id_text(text: &str) -> String {
    let mut id = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            'a'..='z' | 'A'..='Z' | '0'..='9' => id.push(character),
            '-' => id.push('_'),
            other => {
                let _ = write!(id, "_{:x}_", u32::from(other));
            }
        }
    }
    id
}

fn label(selection: &Selection<'_>, stage: &MapStage) -> String {
    let mut lines = vec![escape(&stage_title(stage))];
    if selection.sensors {
        lines.extend(sensor_lines(stage).iter().map(|line| escape(line)));
    }
    lines.join("<br/>")
}

/// Text inside a quoted Mermaid label: quotes and angle brackets as Mermaid's entity codes, so
/// that neither ends the label nor opens HTML.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '"' => escaped.push_str("#quot;"),
            '<' => escaped.push_str("#lt;"),
            '>' => escaped.push_str("#gt;"),
            '#' => escaped.push_str("#35;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_picture::tests::sample_map;

    #[test]
    fn the_whole_graph_with_sensors() {
        let map = sample_map();
        insta::assert_snapshot!(render_mermaid(&map.select(&[], true).unwrap()));
    }

    #[test]
    fn a_neighbourhood_without_sensors() {
        let map = sample_map();
        let text = render_mermaid(&map.select(&["d-stage".to_owned()], false).unwrap());
        insta::assert_snapshot!(text);
        assert!(!text.contains("(gate"), "sensors were not asked for");
        assert!(
            !text.contains("class s_a_stage blocking"),
            "sensors were not asked for"
        );
        assert!(!text.contains("b_stage"));
    }

    #[test]
    fn labels_cannot_break_out_of_their_quotes() {
        let map = sample_map();
        let text = render_mermaid(&map.select(&[], false).unwrap());
        let line = text
            .lines()
            .find(|line| line.contains("s_b_stage["))
            .unwrap();
        assert_eq!(line.matches('"').count(), 2, "{line}");
        assert!(!line.contains('<') && !line.contains('>'), "{line}");
        assert_eq!(node_id_text("a_b.c"), "a_5f_b_2e_c");
    }
}
