//! Which version's shape `stage-graph.json` is written in (D13).
//!
//! The reference changed the graph's bytes between versions: 2.5 nodes carry no `review_class`
//! or `summary_confirmation`, 2.6 adds them, and the newest ([gate]) adds `review_artifact` and
//! gives every `sensors_applicable` entry `fire_on`, `default_severity` and `category`. An
//! install keeps the shape its own reference tools write, so that their drift guard
//! (`compile --check`) and ours both pass on the same bytes; a new project gets the newest.
//!
//! The shape is decided, in this order, by an explicit `--graph-format`, by the existing graph
//! (a key only one version writes), by the install's reference tools
//! (`<harness>/tools/aidlc-version.ts`), and otherwise it is the newest.
//!
//! Invariant: pure. The texts are handed in; nothing here reads a file or the database (the
//! tracked query `stage_graph::format_choice::graph_format` feeds them from the salsa inputs).
//! An install's version is the format it keeps: `runtime/workspace/install_version.rs` adds
//! the methods that detect it from the install's files and name its files; the newest prints
//! as `gate`, not `newest`.

use strum::{Display, EnumString, IntoStaticStr, VariantArray};

use crate::protocol::graph_keys::{EntryField, NodeField};

/// A shape of `stage-graph.json`, named after the reference version that writes it; the
/// variants are listed oldest first, and each is spelled as `--graph-format` takes it and
/// messages print it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    IntoStaticStr,
    Display,
    EnumString,
    VariantArray,
)]
#[strum(parse_err_ty = String, parse_err_fn = unknown_graph_format)]
pub enum GraphFormat {
    /// 2.5: entries `{id, path, matches?}`; no `review_class`, `summary_confirmation` or
    /// `review_artifact` on nodes.
    #[strum(serialize = "2.5")]
    Reference25,
    /// 2.6: entries `{id, path, matches?}`; `review_class` (defaulted with a reviewer) and
    /// `summary_confirmation`, no `review_artifact`.
    #[strum(serialize = "2.6")]
    Reference26,
    /// The newest ([gate]): entries `{id, path, fire_on, default_severity, category?,
    /// matches?}`, and every node field.
    #[strum(serialize = "gate")]
    Gate,
}

impl GraphFormat {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether `sensors_applicable` entries carry `fire_on`, `default_severity` and
    /// `category`. Without them the reference reads every binding as write-fired and advisory.
    pub fn carries_dispatch_fields(self) -> bool {
        self == GraphFormat::Gate
    }

    /// Whether a recompile keeps a composed `scope-grid.json` column (one no stage names)
    /// that has no scope file: the 2.5 reference keeps every such column; from 2.6 only a
    /// column with its scope file survives.
    pub fn keeps_composed_scope_columns_without_a_scope_file(self) -> bool {
        self == GraphFormat::Reference25
    }

    /// Whether nodes carry `review_class` (defaulted) and `summary_confirmation`.
    pub fn carries_review_class(self) -> bool {
        self >= GraphFormat::Reference26
    }

    /// Whether nodes carry `review_artifact`.
    pub fn carries_review_artifact(self) -> bool {
        self == GraphFormat::Gate
    }

    /// Whether a node of this format has a place for `field`: 2.5 has none for the review
    /// fields, 2.6 none for `review_artifact`. Over `NodeField::ALL`, this is the format's key
    /// order.
    pub fn carries_node_field(self, field: NodeField) -> bool {
        match field {
            NodeField::ReviewArtifact => self.carries_review_artifact(),
            NodeField::ReviewClass | NodeField::SummaryConfirmation => self.carries_review_class(),
            _ => true,
        }
    }

    /// Whether a `sensors_applicable` entry of this format has a place for `field`: the formats
    /// before the gate's write `{id, path, matches?}`.
    pub fn carries_entry_field(self, field: EntryField) -> bool {
        match field {
            EntryField::FireOn | EntryField::DefaultSeverity | EntryField::Category => {
                self.carries_dispatch_fields()
            }
            EntryField::Id | EntryField::Path | EntryField::Matches => true,
        }
    }

    /// The format a reference release writes: 2.5.x, 2.6.x, and the newest for anything later
    /// (or a version that does not read as `major.minor…`).
    pub fn of_reference_version(version: &str) -> GraphFormat {
        let mut parts = version.trim().split('.');
        let major = parts.next().and_then(|part| part.parse::<u64>().ok());
        let minor = parts.next().and_then(|part| part.parse::<u64>().ok());
        match (major, minor) {
            (Some(2), Some(minor)) if minor <= 5 => GraphFormat::Reference25,
            (Some(2), Some(6)) => GraphFormat::Reference26,
            (Some(major), _) if major < 2 => GraphFormat::Reference25,
            _ => GraphFormat::Gate,
        }
    }
}

/// The refusal of a `--graph-format` that names no format.
fn unknown_graph_format(text: &str) -> String {
    let names: Vec<&str> = GraphFormat::VARIANTS
        .iter()
        .map(|format| format.as_str())
        .collect();
    format!(
        "unknown graph format \"{text}\"; expected one of {}",
        names.join(", ")
    )
}

/// Why a compile writes the format it does; each displays as `compile` says where the format
/// came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::Display)]
pub enum FormatSource {
    /// `--graph-format`.
    #[strum(serialize = "from --graph-format")]
    Flag,
    /// A key of the existing `stage-graph.json` that only this format writes.
    #[strum(serialize = "kept from the existing stage-graph.json")]
    ExistingGraph,
    /// The install's reference tools (`aidlc-version.ts`).
    #[strum(serialize = "from the install's reference tools")]
    ReferenceTools,
    /// Nothing says otherwise: a new project gets the newest format.
    #[strum(serialize = "the newest")]
    Newest,
}

/// The format to write, and why, given what the existing graph's bytes say
/// ([`format_written_by`]) rather than the bytes: watch mode knows that of the graph it has
/// just written.
pub fn resolve_graph_format_from_evidence(
    flag: Option<GraphFormat>,
    existing_graph: Option<GraphEvidence>,
    reference_tools_version: Option<&str>,
) -> (GraphFormat, FormatSource) {
    if let Some(format) = flag {
        return (format, FormatSource::Flag);
    }
    let from_tools = reference_tools_version.map(GraphFormat::of_reference_version);
    if let Some(evidence) = existing_graph {
        match evidence {
            GraphEvidence::Decided(format) => return (format, FormatSource::ExistingGraph),
            // A pre-gate graph that says nothing about reviews: 2.5 or 2.6 write the same bytes
            // for it, so the tools decide, and 2.6 (the later) when there are none.
            GraphEvidence::PreGate => {
                let format = from_tools
                    .filter(|format| *format < GraphFormat::Gate)
                    .unwrap_or(GraphFormat::Reference26);
                return (format, FormatSource::ExistingGraph);
            }
            GraphEvidence::Nothing => {}
        }
    }
    match from_tools {
        Some(format) => (format, FormatSource::ReferenceTools),
        None => (GraphFormat::Gate, FormatSource::Newest),
    }
}

/// What the existing graph's bytes say about the version that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphEvidence {
    /// A key only that format writes.
    Decided(GraphFormat),
    /// `sensors_applicable` entries without `fire_on`: 2.5 or 2.6.
    PreGate,
    /// No node field that tells (an empty graph, no sensors and no reviewers).
    Nothing,
}

/// Reads only keys: in the reference's pretty JSON a key is `"<name>": ` at the start of a line
/// after indentation, and a string value can never contain that (its quotes are escaped).
pub fn format_written_by(graph: &str) -> GraphEvidence {
    let has_key = |key: &str| {
        let needle = format!("\"{key}\": ");
        graph.match_indices(&needle).any(|(at, _)| {
            graph[..at]
                .bytes()
                .rev()
                .take_while(|byte| *byte != b'\n')
                .all(|byte| byte == b' ')
        })
    };
    let gate_only = [
        EntryField::FireOn.key(),
        EntryField::DefaultSeverity.key(),
        NodeField::ReviewArtifact.key(),
    ];
    if gate_only.into_iter().any(has_key) {
        return GraphEvidence::Decided(GraphFormat::Gate);
    }
    if has_key(NodeField::ReviewClass.key()) || has_key(NodeField::SummaryConfirmation.key()) {
        return GraphEvidence::Decided(GraphFormat::Reference26);
    }
    if has_key(NodeField::Reviewer.key()) {
        // 2.6 and later default `review_class` beside every reviewer; its absence is 2.5.
        return GraphEvidence::Decided(GraphFormat::Reference25);
    }
    let entry_path = format!("\"{}\": ", EntryField::Path.key());
    if has_key(NodeField::SensorsApplicable.key()) && graph.contains(&entry_path) {
        return GraphEvidence::PreGate;
    }
    GraphEvidence::Nothing
}

/// The version in `aidlc-version.ts` (`export const AIDLC_VERSION = "2.6.54";`), if the text
/// declares one.
pub fn reference_tools_version(text: &str) -> Option<&str> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("export const AIDLC_VERSION")?;
        let rest = rest.trim_start().strip_prefix('=')?.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let value = &rest[1..];
        let end = value.find(quote)?;
        Some(&value[..end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_graph_format(
        flag: Option<GraphFormat>,
        existing_graph: Option<&str>,
        reference_tools_version: Option<&str>,
    ) -> (GraphFormat, FormatSource) {
        resolve_graph_format_from_evidence(
            flag,
            existing_graph.map(format_written_by),
            reference_tools_version,
        )
    }

    #[test]
    fn each_format_has_the_reference_s_count_of_node_keys() {
        let count = |format: GraphFormat| {
            NodeField::ALL
                .iter()
                .filter(|field| format.carries_node_field(**field))
                .count()
        };
        assert_eq!(count(GraphFormat::Reference25), 26);
        assert_eq!(count(GraphFormat::Reference26), 28);
        assert_eq!(count(GraphFormat::Gate), 29);
    }

    const GATE_ENTRY: &str = "[\n  {\n    \"slug\": \"a\",\n    \"sensors_applicable\": [\n      {\n        \"id\": \"x\",\n        \"path\": \".claude/sensors/aidlc-x.md\",\n        \"fire_on\": \"write\",\n        \"default_severity\": \"advisory\"\n      }\n    ]\n  }\n]\n";
    const PRE_GATE_ENTRY: &str = "[\n  {\n    \"slug\": \"a\",\n    \"sensors_applicable\": [\n      {\n        \"id\": \"x\",\n        \"path\": \".claude/sensors/aidlc-x.md\"\n      }\n    ]\n  }\n]\n";

    #[test]
    fn the_flag_wins() {
        assert_eq!(
            resolve_graph_format(Some(GraphFormat::Reference25), Some(GATE_ENTRY), None),
            (GraphFormat::Reference25, FormatSource::Flag)
        );
    }

    #[test]
    fn a_key_only_one_format_writes_decides() {
        assert_eq!(
            resolve_graph_format(None, Some(GATE_ENTRY), Some("2.6.54")),
            (GraphFormat::Gate, FormatSource::ExistingGraph)
        );
        let with_review_class =
            "[\n  {\n    \"reviewer\": \"r\",\n    \"review_class\": \"adversarial\"\n  }\n]\n";
        assert_eq!(
            resolve_graph_format(None, Some(with_review_class), None).0,
            GraphFormat::Reference26
        );
        let reviewer_alone =
            "[\n  {\n    \"reviewer\": \"r\",\n    \"reviewer_max_iterations\": 2\n  }\n]\n";
        assert_eq!(
            resolve_graph_format(None, Some(reviewer_alone), None).0,
            GraphFormat::Reference25
        );
    }

    #[test]
    fn a_pre_gate_graph_that_says_no_more_asks_the_tools_then_takes_2_6() {
        assert_eq!(
            resolve_graph_format(None, Some(PRE_GATE_ENTRY), Some("2.5.36")),
            (GraphFormat::Reference25, FormatSource::ExistingGraph)
        );
        assert_eq!(
            resolve_graph_format(None, Some(PRE_GATE_ENTRY), None),
            (GraphFormat::Reference26, FormatSource::ExistingGraph)
        );
    }

    #[test]
    fn a_key_inside_a_string_value_is_not_a_key() {
        let prose = "[\n  {\n    \"condition\": \"write \\\"fire_on\\\": gate\"\n  }\n]\n";
        assert_eq!(format_written_by(prose), GraphEvidence::Nothing);
        let inline = "[{\"condition\": \"x\", \"fire_on\": \"gate\"}]";
        assert_eq!(format_written_by(inline), GraphEvidence::Nothing);
    }

    #[test]
    fn without_evidence_the_tools_decide_else_the_newest() {
        assert_eq!(
            resolve_graph_format(None, Some("[]\n"), Some("2.6.54")),
            (GraphFormat::Reference26, FormatSource::ReferenceTools)
        );
        assert_eq!(
            resolve_graph_format(None, None, None),
            (GraphFormat::Gate, FormatSource::Newest)
        );
        assert_eq!(
            resolve_graph_format(None, None, Some("2.9.1")).0,
            GraphFormat::Gate
        );
    }

    #[test]
    fn the_tools_version_is_read_from_its_declaration() {
        let text = "// header\n\nexport const AIDLC_VERSION = \"2.6.54\";\nexport const X = 1;\n";
        assert_eq!(reference_tools_version(text), Some("2.6.54"));
        assert_eq!(reference_tools_version("const AIDLC_VERSION = 1"), None);
        assert_eq!(
            GraphFormat::of_reference_version("2.5.36"),
            GraphFormat::Reference25
        );
        assert_eq!(
            GraphFormat::of_reference_version("2.6.0"),
            GraphFormat::Reference26
        );
        assert_eq!(
            GraphFormat::of_reference_version("3.0.0"),
            GraphFormat::Gate
        );
        assert_eq!(GraphFormat::of_reference_version("next"), GraphFormat::Gate);
    }

    #[test]
    fn names_round_trip() {
        for &format in GraphFormat::VARIANTS {
            assert_eq!(format.as_str().parse::<GraphFormat>(), Ok(format));
        }
        assert!("2.7".parse::<GraphFormat>().is_err());
    }
}
