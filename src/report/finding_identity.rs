//! The fingerprint of a result that code scanning (SARIF `partialFingerprints`) and GitLab Code
//! Quality (`fingerprint`) use to follow one problem across runs.
//!
//! Invariant: it depends on what the problem is (the sensor, the rule, the repository-relative
//! file, the message) and on how many identical problems came before it in the run, never on
//! the line, so it stays the same when lines move and in every run of the same content.

use std::collections::BTreeMap;

/// Hands out fingerprints, counting identical results so that two equal findings in one file
/// still get two fingerprints.
#[derive(Debug, Default)]
pub(super) struct Fingerprints {
    seen: BTreeMap<String, usize>,
}

impl Fingerprints {
    /// The [`short_hash`] of the next result made of `parts`.
    pub(super) fn next(&mut self, parts: &[&str]) -> String {
        let key = parts.join("\0");
        let occurrence = self.seen.entry(key.clone()).or_insert(0);
        *occurrence += 1;
        short_hash(&format!("{key}\0{occurrence}"))
    }
}

/// 32 lowercase hex characters (128 bits of BLAKE3) of `text`.
pub(super) fn short_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..32].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_parts_get_one_fingerprint_per_occurrence_and_runs_agree() {
        let mut first = Fingerprints::default();
        let a1 = first.next(&["s", "r", "f", "m"]);
        let a2 = first.next(&["s", "r", "f", "m"]);
        let b = first.next(&["s", "r", "f", "other"]);
        assert_ne!(a1, a2);
        assert_ne!(a1, b);
        let mut second = Fingerprints::default();
        assert_eq!(second.next(&["s", "r", "f", "m"]), a1);
        assert_eq!(a1.len(), 32);
    }
}
