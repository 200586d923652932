//! Random lowercase hex names: fire ids, clone ids and the random part of our temporary files'
//! names.
//!
//! A low-level module: it imports nothing from this crate, so that `fs_util`, the audit ledger
//! and the workspace can all use it without depending on each other.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// `n_chars` random lowercase hex characters.
pub fn random_lowercase_hex(n_chars: usize) -> String {
    let mut bytes = vec![0_u8; n_chars.div_ceil(2)];
    fill_random(&mut bytes);
    let mut hex = bytes.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    hex.truncate(n_chars);
    hex
}

/// The operating system's random bytes (`getrandom`). Should the system refuse them (no system
/// this crate supports does), bytes that are at least distinct: [`distinct_bytes`].
fn fill_random(bytes: &mut [u8]) {
    if getrandom::fill(bytes).is_err() {
        distinct_bytes(bytes);
    }
}

/// BLAKE3 of the time, the process id and a counter of this process: not secret, but never the
/// same twice, which is what ids and temporary names need.
fn distinct_bytes(bytes: &mut [u8]) {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let nanos = super::timestamp::ns_since_epoch(SystemTime::now());
    let mut hasher = blake3::Hasher::new();
    hasher.update(&nanos.to_le_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    hasher.update(&CALLS.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hasher.finalize_xof().fill(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_hex_has_the_asked_length_and_alphabet() {
        for n in [1, 8, 12, 33] {
            let hex = random_lowercase_hex(n);
            assert_eq!(hex.len(), n);
            assert!(
                hex.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            );
        }
        assert_ne!(random_lowercase_hex(16), random_lowercase_hex(16));
    }

    #[test]
    fn the_fallback_bytes_never_repeat() {
        let mut first = [0_u8; 8];
        let mut second = [0_u8; 8];
        distinct_bytes(&mut first);
        distinct_bytes(&mut second);
        assert_ne!(first, second);
    }
}
