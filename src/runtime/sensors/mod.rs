//! The shipped sensors (D8): the product's own checks, each described once by a
//! [`ShippedSensor`] in its own file and listed once in [`SHIPPED_SENSORS`]. A native check
//! answers in the worker protocol (`protocol::worker_outcome`); [`in_process`] runs one inside
//! `aidlc`, bounded by its timeout and by an interrupt; [`finding`] reads a failed verdict's
//! findings for the gate report; [`worker_args`] is the one reader of a worker's argv; and
//! `node_tool` is what the code sensors share.
//!
//! Invariants:
//!
//! - Only the sensors' own files spell their ids; the dispatcher, the gate and the CLI look a
//!   sensor up here and ask its descriptor, never match on an id.
//! - Every shipped sensor has a native check: a descriptor cannot be written without one, so no
//!   shipped id can fall through to "nothing was checked".
//! - A check never prints and never writes audit rows or detail files; it returns a
//!   `WorkerOutcome`, and the dispatcher records it.

pub mod claim_sources;
pub mod descriptor;
pub mod finding;
pub mod in_process;
pub mod linter;
pub(crate) mod node_tool;
pub mod required_sections;
mod text;
pub mod traceability;
pub mod type_check;
pub mod upstream_coverage;
pub mod worker_args;

use camino::Utf8Path;

use self::descriptor::NativeCheck;
pub use self::descriptor::{ShippedSensor, WorkerContext};
pub use self::in_process::run_shipped_with_stderr;
use crate::protocol::finding::Finding;
use crate::protocol::verdict::Verdict;

/// The shipped sensors, sorted by id (a unit test checks the order): one line each.
pub const SHIPPED_SENSORS: &[&ShippedSensor] = &[
    &claim_sources::SENSOR,
    &linter::SENSOR,
    &required_sections::SENSOR,
    &traceability::SENSOR,
    &type_check::SENSOR,
    &upstream_coverage::SENSOR,
];

/// The shipped sensor ids, sorted.
pub const SHIPPED_SENSOR_IDS: [&str; SHIPPED_SENSORS.len()] = {
    let mut ids = [""; SHIPPED_SENSORS.len()];
    let mut index = 0;
    while index < ids.len() {
        ids[index] = SHIPPED_SENSORS[index].id;
        index += 1;
    }
    ids
};

/// The shipped sensor with this id, if it is one.
pub fn shipped(sensor_id: &str) -> Option<&'static ShippedSensor> {
    SHIPPED_SENSORS
        .iter()
        .copied()
        .find(|sensor| sensor.id == sensor_id)
}

/// The native check of a shipped sensor.
pub fn native_check(sensor_id: &str) -> Option<NativeCheck> {
    shipped(sensor_id).map(|sensor| sensor.check)
}

/// The findings of a verdict, for the gate report: none unless it failed; a shipped sensor's
/// JSON read by its own reader, any other sensor's by [`finding::read_custom`].
/// `deliverable` is project-relative.
pub fn findings_of(
    project_dir: &Utf8Path,
    sensor_id: &str,
    deliverable: &Utf8Path,
    verdict: &Verdict,
) -> Vec<Finding> {
    let Verdict::Failed {
        findings_count,
        worker_json,
    } = verdict
    else {
        return Vec::new();
    };
    let read = if shipped(sensor_id).is_some() {
        finding::read_shipped
    } else {
        finding::read_custom
    };
    read(&finding::FindingsInput {
        project_dir,
        deliverable,
        sensor_id,
        worker_json,
        findings_count: *findings_count,
    })
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A failure whose JSON lists nothing still shows one finding per fire, for every sensor.
    #[test]
    fn a_failure_that_lists_nothing_is_one_finding_for_every_sensor() {
        let verdict = Verdict::Failed {
            findings_count: 2,
            worker_json: json!({"pass": false, "findings_count": 2}),
        };
        for id in SHIPPED_SENSOR_IDS.into_iter().chain(["custom"]) {
            let found = findings_of(Utf8Path::new("/p"), id, Utf8Path::new("a.md"), &verdict);
            assert_eq!(found.len(), 1, "{id}");
            assert_eq!(found[0].rule, finding::UNLISTED_RULE, "{id}");
        }
    }

    #[test]
    fn only_a_failure_has_findings() {
        for id in SHIPPED_SENSOR_IDS.into_iter().chain(["custom"]) {
            assert!(
                findings_of(
                    Utf8Path::new("/p"),
                    id,
                    Utf8Path::new("a.md"),
                    &Verdict::Passed
                )
                .is_empty()
            );
        }
    }

    #[test]
    fn the_table_is_sorted_by_id_and_has_no_repeats() {
        assert!(
            SHIPPED_SENSOR_IDS.windows(2).all(|pair| pair[0] < pair[1]),
            "{SHIPPED_SENSOR_IDS:?}"
        );
    }

    /// A shipped sensor is a descriptor here and a manifest in the default framework: neither
    /// without the other.
    #[test]
    fn the_default_framework_ships_a_manifest_for_each_descriptor_and_no_other() {
        use crate::compile::framework::{DEFAULT_FRAMEWORK, InstallRoot};
        let manifest_ids: Vec<&str> = DEFAULT_FRAMEWORK
            .iter()
            .filter(|file| file.root == InstallRoot::Harness)
            .filter_map(|file| {
                file.path
                    .strip_prefix("sensors/aidlc-")?
                    .strip_suffix(".md")
            })
            .collect();
        assert_eq!(manifest_ids, SHIPPED_SENSOR_IDS);
    }

    #[test]
    fn every_id_finds_its_own_descriptor() {
        for id in SHIPPED_SENSOR_IDS {
            assert_eq!(shipped(id).map(|sensor| sensor.id), Some(id));
        }
        assert!(shipped("not-a-sensor").is_none());
    }
}
