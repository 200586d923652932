//! Helpers the ledger's unit tests share.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};

use super::event::field::FIRE_ID;
use super::event::{SENSOR_BUDGET_OVERRIDE, SENSOR_FAILED, SENSOR_FIRED, SENSOR_PASSED};
use super::{AuditBlock, FireIdentity};

pub fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

pub fn temp_project() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    (dir, path)
}

pub fn sample_fire() -> FireIdentity {
    FireIdentity::new(
        Utf8Path::new("/work/proj"),
        "a65d19af",
        "claim-sources",
        "intent-capture",
        "/work/proj/aidlc/spaces/default/intents/260904-x/ideation/intent-capture/intent-statement.md",
    )
}

/// A `SENSOR_FIRED` block and the terminal block with the same Fire id, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirePair<'a> {
    pub fired: &'a AuditBlock,
    pub terminal: Option<&'a AuditBlock>,
}

/// Every `SENSOR_FIRED` in order, each with its terminal row (`SENSOR_PASSED`, `SENSOR_FAILED`
/// or `SENSOR_BUDGET_OVERRIDE`) matched by `Fire id`, never by position: rows may be out of
/// order (several shards merged). Should two fires share an id, the k-th fired of that id takes
/// the k-th terminal of that id. Terminal rows without a fired row are not returned.
pub fn pair_fires(blocks: &[AuditBlock]) -> Vec<FirePair<'_>> {
    let mut terminals: BTreeMap<&str, VecDeque<&AuditBlock>> = BTreeMap::new();
    for block in blocks.iter().filter(|b| {
        [SENSOR_PASSED, SENSOR_FAILED, SENSOR_BUDGET_OVERRIDE].contains(&b.event.as_str())
    }) {
        if let Some(fire_id) = block.field(FIRE_ID) {
            terminals.entry(fire_id).or_default().push_back(block);
        }
    }
    blocks
        .iter()
        .filter(|block| block.event == SENSOR_FIRED)
        .map(|fired| FirePair {
            fired,
            terminal: fired
                .field(FIRE_ID)
                .and_then(|id| terminals.get_mut(id))
                .and_then(VecDeque::pop_front),
        })
        .collect()
}
