//! English wording shared by every message the engine prints.
//!
//! Owns the small grammar rules that status lines and reports would otherwise each spell for
//! themselves (the plural ending, a count with its noun, a list of names). It knows nothing
//! about what is counted, and it never prints.

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

/// The names joined with `, `, or `(none)` when there are none.
pub fn names_or_none<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let names: Vec<String> = names
        .into_iter()
        .map(|name| name.as_ref().to_owned())
        .collect();
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_joined_or_said_to_be_none() {
        assert_eq!(names_or_none(["a", "b"]), "a, b");
        assert_eq!(names_or_none(Vec::<String>::new()), "(none)");
    }

    #[test]
    fn only_one_is_singular() {
        assert_eq!(plural(0_usize), "s");
        assert_eq!(plural(1_usize), "");
        assert_eq!(plural(2_u64), "s");
        assert_eq!(plural(1_u64), "");
    }
}
