//! Random lowercase hex names: fire ids, clone ids and the random part of our temporary files'
//! names.
//!
//! A low-level module: it imports nothing from this crate, so that `fs_util`, the audit ledger
//! and the workspace can all use it without depending on each other.

use std::fmt::Write as _;

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

/// The operating system's random bytes (`getrandom`); should the system refuse them, the random
/// low 32 bits of successive `UUIDv7` values (the `uuid` crate's counter only occupies the 42
/// bits after the timestamp, so those 32 bits are fresh on every call).
fn fill_random(bytes: &mut [u8]) {
    if getrandom::fill(bytes).is_ok() {
        return;
    }
    for chunk in bytes.chunks_mut(4) {
        let uuid = uuid::Uuid::now_v7().into_bytes();
        chunk.copy_from_slice(&uuid[16 - chunk.len()..]);
    }
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
}
