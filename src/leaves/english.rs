//! English wording shared by every message the engine prints.
//!
//! Owns the small grammar rules that status lines and reports would otherwise each spell for
//! themselves (today: the plural ending, and a count with its noun). It knows nothing about what is counted, and it never
//! prints.

/// `"s"` unless `count` is exactly one: `format!("{n} file{}", plural(n))`.
pub fn plural<N: Copy + PartialEq + From<u8>>(count: N) -> &'static str {
    if count == N::from(1) { "" } else { "s" }
}

/// `count` and `noun`, with the plural ending unless the count is one: `3 stages`, `1 sensor`.
pub fn counted<N>(count: N, noun: &str) -> String
where
    N: Copy + PartialEq + From<u8> + std::fmt::Display,
{
    format!("{count} {noun}{}", plural(count))
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
