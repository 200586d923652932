//! Which reference version made the install (D13), and the names of the record-local files that
//! follow from it: the files another process (the install's own reference hook, its doctor, its
//! conductor) reads must stay where that version reads them.
//!
//! | | 2.5 | 2.6 | newest |
//! |---|---|---|---|
//! | hook health folder | `<record>/.aidlc-hooks-health/` | same | same |
//! | heartbeat, drop log | `sensor-fire.last`, `sensor-fire.drops` | `run-sensors.last`, `run-sensors.drops` | as 2.6 |
//! | first-run marker | `.first-fired` (an ISO timestamp) | same | same |
//! | detail files | `<record>/.aidlc-sensors/<stage>/` | same | `<record>/.aidlc-engine/sensors/<stage>/` |
//! | learnings selections | `<record>/.aidlc-learnings/` | same | `<record>/.aidlc-engine/learnings/` |
//!
//! The 2.5 hook was `aidlc-sensor-fire.ts` and named its files after itself; its conductor
//! writes the selections file wherever it likes (its persist tool takes any path), so 2.5 gets
//! the 2.6 folder, the one its reference installs gitignore as `.aidlc-*` too.
//!
//! The version is detected once per command: the version stamp of the install's reference
//! tools (`<harness>/tools/aidlc-version.ts`), else the shape of the existing
//! `stage-graph.json` (a key only one version writes), else the newest (a project `aidlc init`
//! made, or none at all).
//!
//! Invariant: detection reads those two files and nothing else, and never fails: a file that
//! is missing, unreadable or says nothing only moves the decision to the next rule.

use camino::{Utf8Path, Utf8PathBuf};

use super::write_folders::{ENGINE_DIR, legacy_sensor_detail_dir, sensor_detail_dir};
use crate::harness::reference_hooks;
use crate::protocol::graph_format::{
    FormatSource, GraphFormat, format_written_by, reference_tools_version,
    resolve_graph_format_from_evidence,
};

/// The reference version whose files an install keeps is the graph format it keeps (D13): 2.5
/// (whose write hook was `sensor-fire`), 2.6, or the newest ([gate]), which every project
/// `aidlc init` makes.
impl GraphFormat {
    /// The install's version for its tools stamp (its text, if the file was read) and its
    /// graph (the text, if the file was read), in that order of trust; else the newest.
    pub fn of_install(reference_tools_text: Option<&str>, graph_text: Option<&str>) -> GraphFormat {
        if let Some(version) = reference_tools_text.and_then(reference_tools_version) {
            return GraphFormat::of_reference_version(version);
        }
        let from_graph = graph_text.map(|graph| {
            resolve_graph_format_from_evidence(None, Some(format_written_by(graph)), None)
        });
        match from_graph {
            Some((format, FormatSource::ExistingGraph)) => format,
            _ => GraphFormat::Gate,
        }
    }

    /// [`GraphFormat::of_install`] over the files of an install: `reference_tools` is
    /// `<harness>/tools/aidlc-version.ts`, `stage_graph` the compiled graph (read only when the
    /// tools say nothing); with the graph's text when it was read (and is UTF-8), so that a
    /// caller who needs the graph next does not read it again.
    pub fn of_install_files_keeping_graph(
        reference_tools: &Utf8Path,
        stage_graph: &Utf8Path,
    ) -> (GraphFormat, Option<String>) {
        let tools = crate::leaves::fs_util::read_input_text(reference_tools).ok();
        if tools.as_deref().and_then(reference_tools_version).is_some() {
            return (Self::of_install(tools.as_deref(), None), None);
        }
        let graph = crate::leaves::fs_util::read_bounded(
            stage_graph,
            crate::compile::discover::MAX_GENERATED_BYTES,
        )
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
        (Self::of_install(None, graph.as_deref()), graph)
    }

    /// The write hook's name: its heartbeat and drop log are `<name>.last` and `<name>.drops`.
    pub fn write_hook_name(self) -> &'static str {
        match self {
            GraphFormat::Reference25 => reference_hooks::SENSOR_FIRE.health_name(),
            GraphFormat::Reference26 | GraphFormat::Gate => {
                reference_hooks::RUN_SENSORS.health_name()
            }
        }
    }

    /// Where detail files go, under a record root.
    pub fn sensor_detail_dir(self, record_root: &Utf8Path) -> Utf8PathBuf {
        match self {
            GraphFormat::Reference25 | GraphFormat::Reference26 => {
                legacy_sensor_detail_dir(record_root)
            }
            GraphFormat::Gate => sensor_detail_dir(record_root),
        }
    }

    /// Where the conductor writes the learnings selections, under a record root (D44).
    pub fn learnings_dir(self, record_root: &Utf8Path) -> Utf8PathBuf {
        match self {
            GraphFormat::Reference25 | GraphFormat::Reference26 => {
                record_root.join(".aidlc-learnings")
            }
            GraphFormat::Gate => record_root.join(ENGINE_DIR).join("learnings"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS_26: &str = "// stamp\nexport const AIDLC_VERSION = \"2.6.54\";\n";
    const TOOLS_25: &str = "export const AIDLC_VERSION = \"2.5.36\";\n";
    const TOOLS_LATER: &str = "export const AIDLC_VERSION = \"3.0.1\";\n";
    const GATE_GRAPH: &str = "[\n  {\n    \"slug\": \"a\",\n    \"sensors_applicable\": [\n      {\n        \"id\": \"x\",\n        \"path\": \"p\",\n        \"fire_on\": \"write\",\n        \"default_severity\": \"advisory\"\n      }\n    ]\n  }\n]\n";
    const PRE_GATE_GRAPH: &str = "[\n  {\n    \"slug\": \"a\",\n    \"sensors_applicable\": [\n      {\n        \"id\": \"x\",\n        \"path\": \"p\"\n      }\n    ]\n  }\n]\n";
    const GRAPH_25: &str = "[\n  {\n    \"slug\": \"a\",\n    \"reviewer\": \"r\",\n    \"sensors_applicable\": []\n  }\n]\n";

    #[test]
    fn the_tools_stamp_decides_first() {
        assert_eq!(
            GraphFormat::of_install(Some(TOOLS_26), Some(GATE_GRAPH)),
            GraphFormat::Reference26
        );
        assert_eq!(
            GraphFormat::of_install(Some(TOOLS_25), None),
            GraphFormat::Reference25
        );
        assert_eq!(
            GraphFormat::of_install(Some(TOOLS_LATER), Some(PRE_GATE_GRAPH)),
            GraphFormat::Gate
        );
    }

    #[test]
    fn without_a_stamp_the_graph_s_keys_decide_then_the_newest() {
        let no_stamp = Some("// no version here\n");
        assert_eq!(
            GraphFormat::of_install(no_stamp, Some(PRE_GATE_GRAPH)),
            GraphFormat::Reference26
        );
        assert_eq!(
            GraphFormat::of_install(None, Some(GRAPH_25)),
            GraphFormat::Reference25
        );
        assert_eq!(
            GraphFormat::of_install(None, Some(GATE_GRAPH)),
            GraphFormat::Gate
        );
        assert_eq!(
            GraphFormat::of_install(None, Some("[]\n")),
            GraphFormat::Gate
        );
        assert_eq!(GraphFormat::of_install(None, None), GraphFormat::Gate);
    }

    #[test]
    fn each_version_names_its_own_files() {
        let record = Utf8Path::new("/r");
        let table = [
            (
                GraphFormat::Reference25,
                "sensor-fire",
                "/r/.aidlc-sensors",
                "/r/.aidlc-learnings",
            ),
            (
                GraphFormat::Reference26,
                "run-sensors",
                "/r/.aidlc-sensors",
                "/r/.aidlc-learnings",
            ),
            (
                GraphFormat::Gate,
                "run-sensors",
                "/r/.aidlc-engine/sensors",
                "/r/.aidlc-engine/learnings",
            ),
        ];
        for (version, hook, details, learnings) in table {
            assert_eq!(version.write_hook_name(), hook, "{version}");
            assert_eq!(version.sensor_detail_dir(record), details, "{version}");
            assert_eq!(version.learnings_dir(record), learnings, "{version}");
        }
    }

    #[test]
    fn files_that_cannot_be_read_move_the_decision_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let tools = root.join("aidlc-version.ts");
        let graph = root.join("stage-graph.json");
        let detect = || GraphFormat::of_install_files_keeping_graph(&tools, &graph).0;
        assert_eq!(detect(), GraphFormat::Gate);
        std::fs::write(&graph, PRE_GATE_GRAPH).unwrap();
        assert_eq!(detect(), GraphFormat::Reference26);
        std::fs::write(&tools, TOOLS_25).unwrap();
        assert_eq!(detect(), GraphFormat::Reference25);
    }
}
