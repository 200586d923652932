//! The Graphviz dot graph (`aidlc graph --format dot | dot -Tsvg > stages.svg`): one cluster per
//! phase, one box per stage titled `number name` (with its sensors, one left-aligned line
//! each, when asked), an arrow from each required stage to the stage requiring it. Conditional
//! stages are dashed, stages with a blocking sensor get a thick red border, and the stages asked
//! for with `--stage` are filled.

use std::fmt::Write as _;

use crate::graph_picture::{MapStage, Selection, sensor_lines, stage_title};

/// `selection` as a dot digraph, without a trailing newline.
pub fn render_dot(selection: &Selection<'_>) -> String {
    let mut out = String::from("digraph stages {\n");
    out.push_str("  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=12];\n");
    out.push_str("  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=11];\n");
    out.push_str("  edge [color=\"#555555\"];\n");
    for (phase, stages) in selection.phases() {
        let _ = writeln!(
            out,
            "  subgraph {} {{",
            quote(&format!("cluster_{}", phase.as_str()))
        );
        let _ = writeln!(out, "    label={};", quote(phase.as_str()));
        out.push_str("    style=rounded; color=\"#999999\";\n");
        for stage in stages {
            let _ = writeln!(
                out,
                "    {} [{}];",
                quote(&stage.slug),
                attributes(selection, stage).join(", ")
            );
        }
        out.push_str("  }\n");
    }
    for (from, to) in selection.edges() {
        let _ = writeln!(out, "  {} -> {};", quote(&from.slug), quote(&to.slug));
    }
    out.push('}');
    out
}

fn attributes(selection: &Selection<'_>, stage: &MapStage) -> Vec<String> {
    let mut label = escape(&stage_title(stage));
    if selection.sensors && !stage.sensors.is_empty() {
        // `\n` centres the title line; each sensor line ends with `\l` (left-aligned).
        label.push_str("\\n");
        for line in sensor_lines(stage) {
            label.push_str(&escape(&line));
            label.push_str("\\l");
        }
    }
    let mut attributes = vec![format!("label=\"{label}\"")];
    let mut styles = vec!["rounded"];
    if stage.conditional {
        styles.push("dashed");
    }
    if selection.is_focus(stage) {
        styles.push("filled");
        attributes.push("fillcolor=\"#ffe9a8\"".to_owned());
    }
    if styles.len() > 1 {
        attributes.push(format!("style=\"{}\"", styles.join(",")));
    }
    if selection.sensors && stage.has_blocking_sensor() {
        attributes.push("color=\"#b00020\", penwidth=3".to_owned());
    }
    attributes
}

/// A dot double-quoted string.
fn quote(text: &str) -> String {
    format!("\"{}\"", escape(text))
}

/// Text inside a dot double-quoted string: backslashes and quotes escaped, so that no text
/// ends the string or reads as a label escape (`\n`, `\l`, `\N`); line breaks become spaces.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' | '\r' => escaped.push(' '),
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
        insta::assert_snapshot!(render_dot(&map.select(&[], true).unwrap()));
    }

    #[test]
    fn a_neighbourhood_without_sensors() {
        let map = sample_map();
        insta::assert_snapshot!(render_dot(
            &map.select(&["b-stage".to_owned()], false).unwrap()
        ));
    }

    #[test]
    fn quotes_and_backslashes_stay_inside_the_string() {
        assert_eq!(quote("a \"b\" \\n"), "\"a \\\"b\\\" \\\\n\"");
    }
}
