//! English wording shared by every message the engine prints.
//!
//! Owns the small grammar rules that status lines and reports would otherwise each spell for
//! themselves (today: the plural ending). It knows nothing about what is counted, and it never
//! prints.

/// `"s"` unless `count` is exactly one: `format!("{n} file{}", plural(n))`.
pub fn plural<N: Copy + PartialEq + From<u8>>(count: N) -> &'static str {
    if count == N::from(1) { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_is_singular() {
        assert_eq!(plural(0_usize), "s");
        assert_eq!(plural(1_usize), "");
        assert_eq!(plural(2_u64), "s");
        assert_eq!(plural(1_u64), "");
    }
}
