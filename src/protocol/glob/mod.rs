//! The one glob matcher (D5) for a sensor's `matches`: the write hook, `fire`, gate dispatch
//! and the compile's dead-binding check all call [`SensorGlob::matches`], so they can never
//! disagree.
//!
//! The candidate is the project-relative path with `/` separators (the absolute path, also
//! with `/`, for a file outside the project). `*` and `?` never cross a `/`; `**/` also
//! matches zero folders; one or more `{a,b}` groups are expanded.
//!
//! globset alone decides what a pattern means and whether it is valid. A pattern of the shapes
//! in `segments` (nearly every real one) is then matched folder by folder, which gives
//! globset's answers without compiling a regex; any other pattern is matched by globset's
//! regex, compiled on its first match, so a glob that is never matched never compiles one.

mod segments;

use std::sync::OnceLock;

use camino::Utf8Path;

use segments::SegmentGlob;

/// A parsed `matches` pattern.
#[derive(Debug, Clone)]
pub struct SensorGlob {
    pattern: String,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
enum Matcher {
    Segments(SegmentGlob),
    Regex {
        glob: globset::Glob,
        compiled: OnceLock<globset::GlobMatcher>,
    },
}

/// A `matches` value that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid glob {pattern:?}: {reason}")]
pub struct InvalidGlob {
    pub pattern: String,
    pub reason: String,
}

/// The longest `matches` accepted. globset panics instead of returning an error when the regex
/// a pattern compiles to exceeds the regex crate's size limit (a pattern of tens of kilobytes
/// does); no real glob comes near this length.
pub const MAX_PATTERN_BYTES: usize = 4096;

impl SensorGlob {
    pub fn new(pattern: &str) -> Result<Self, InvalidGlob> {
        let glob = parse_with_globset(pattern)?;
        let matcher = match SegmentGlob::parse(pattern) {
            Some(segments) => Matcher::Segments(segments),
            None => Matcher::Regex {
                glob,
                compiled: OnceLock::new(),
            },
        };
        Ok(Self {
            pattern: pattern.to_owned(),
            matcher,
        })
    }

    /// Whether `pattern` is a valid `matches`, with the same answer and reason as
    /// [`SensorGlob::new`], for a caller that only validates (the manifest check).
    pub fn validate(pattern: &str) -> Result<(), InvalidGlob> {
        parse_with_globset(pattern).map(drop)
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `path` (absolute, or relative to `project_dir`) matches.
    pub fn matches(&self, project_dir: &Utf8Path, path: &Utf8Path) -> bool {
        let candidate = match_candidate(project_dir, path);
        match &self.matcher {
            Matcher::Segments(segments) => segments.is_match(&candidate),
            Matcher::Regex { glob, compiled } => compiled
                .get_or_init(|| glob.compile_matcher())
                .is_match(candidate.as_str()),
        }
    }
}

/// globset's parse with the options D12 names. Parsing builds the regex's text but not the
/// regex: only `compile_matcher` compiles it, and the length cap keeps that from panicking.
fn parse_with_globset(pattern: &str) -> Result<globset::Glob, InvalidGlob> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(InvalidGlob {
            pattern: pattern.to_owned(),
            reason: format!(
                "the pattern is {} bytes long; at most {MAX_PATTERN_BYTES} are accepted",
                pattern.len()
            ),
        });
    }
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|error| InvalidGlob {
            pattern: pattern.to_owned(),
            reason: error.kind().to_string(),
        })
}

/// The string a pattern is matched against: backslashes become `/`, then the project folder
/// prefix is removed; a path outside the project stays absolute.
pub fn match_candidate(project_dir: &Utf8Path, path: &Utf8Path) -> String {
    let path = path.as_str().replace('\\', "/");
    let project = project_dir.as_str().replace('\\', "/");
    let project = project.trim_end_matches('/');
    match path.strip_prefix(project) {
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/').to_owned(),
        _ => path,
    }
}

#[cfg(test)]
mod differential_tests;

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &str = "/work/project";

    fn matches(pattern: &str, path: &str) -> bool {
        SensorGlob::new(pattern)
            .unwrap()
            .matches(Utf8Path::new(PROJECT), Utf8Path::new(path))
    }

    #[test]
    fn the_patterns_upstream_relies_on() {
        let cases = [
            (
                "**/{aidlc-docs,intents}/**",
                "/work/project/aidlc/spaces/default/intents/x/a.md",
                true,
            ),
            (
                "**/{aidlc-docs,intents}/**",
                "/work/project/aidlc-docs/a.md",
                true,
            ),
            (
                "**/{aidlc-docs,intents}/**",
                "/work/project/docs/a.md",
                false,
            ),
            (
                "**/traceability.json",
                "/work/project/traceability.json",
                true,
            ),
            (
                "**/traceability.json",
                "/work/project/a/b/traceability.json",
                true,
            ),
            (
                "**/traceability.json",
                "/work/project/a/xtraceability.json",
                false,
            ),
            ("**/*.{ts,js}", "/work/project/src/a.ts", true),
            ("**/*.{ts,js}", "/work/project/a.js", true),
            ("**/*.{ts,js}", "/work/project/a.tsx", false),
            ("**/*.{ts,tsx}", "/work/project/ui/a.tsx", true),
            ("**/*.md", "/work/project/a.md", true),
            ("**/*.md", "/work/project/a/b/c.md", true),
            ("**/*.md", "/work/project/a.mdx", false),
            ("**/one.md", "/work/project/x/one.md", true),
            ("**/one.md", "/work/project/x/none.md", false),
            ("**/*", "/work/project/anything/at/all.txt", true),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(matches(pattern, path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn star_does_not_cross_folders() {
        assert!(matches("*.md", "/work/project/a.md"));
        assert!(!matches("*.md", "/work/project/a/b.md"));
        assert!(!matches("docs/?.md", "/work/project/docs/a/b.md"));
    }

    #[test]
    fn relative_backslash_and_outside_paths() {
        assert!(matches("docs/*.md", "docs/a.md"));
        assert!(matches("docs/*.md", "/work/project\\docs\\a.md"));
        assert!(!matches("docs/*.md", "/work/projectx/docs/a.md"));
        assert!(matches("/elsewhere/**", "/elsewhere/a.md"));
        assert_eq!(
            match_candidate(
                Utf8Path::new("/work/project/"),
                Utf8Path::new("/work/project/a.md")
            ),
            "a.md"
        );
    }

    #[test]
    fn invalid_patterns_are_errors_not_panics() {
        let error = SensorGlob::new("**/*.{ts").unwrap_err();
        assert_eq!(error.pattern, "**/*.{ts");
        assert!(SensorGlob::new("[z-a]").is_err());
    }

    #[test]
    fn a_pattern_too_long_to_compile_is_an_error_not_a_panic() {
        for fill in ["x", "🎉", "[a-z]", "?", "**/"] {
            let longest = fill.repeat(MAX_PATTERN_BYTES / fill.len());
            assert!(SensorGlob::new(&longest).is_ok(), "{fill}");
            let error = SensorGlob::new(&fill.repeat(80_000)).unwrap_err();
            assert!(error.reason.contains("at most 4096"), "{}", error.reason);
        }
    }

    /// The patterns the shipped sensors, the default framework and the tests use must never
    /// compile a regex: that was most of a write hook's work.
    #[test]
    fn the_common_patterns_take_the_segment_matcher() {
        for pattern in [
            "**/traceability.json",
            "**/*.{ts,tsx}",
            "**/*.{ts,js}",
            "**/{aidlc-docs,intents}/**",
            "**/{aidlc-docs,intents,codekb}/**",
            "aidlc/**/*.md",
            "*.md",
            "**/*.md",
            "**/*",
            "**",
            "docs/*.md",
        ] {
            let glob = SensorGlob::new(pattern).unwrap();
            assert!(
                matches!(glob.matcher, Matcher::Segments(_)),
                "{pattern} falls back to a regex"
            );
        }
    }

    #[test]
    fn other_shapes_compile_their_regex_on_the_first_match_only() {
        let glob = SensorGlob::new("docs/?.md").unwrap();
        let Matcher::Regex { compiled, .. } = &glob.matcher else {
            panic!("`?` is left to globset");
        };
        assert!(compiled.get().is_none(), "parsed, not compiled");
        assert!(glob.matches(Utf8Path::new(PROJECT), Utf8Path::new("docs/a.md")));
        assert!(compiled.get().is_some(), "compiled once matched");
    }

    /// The length cap is what keeps globset's regex compile from panicking; the compile now
    /// happens at the first match, so match the longest accepted patterns once.
    #[test]
    fn the_longest_accepted_patterns_match_without_panicking() {
        for (fill, candidate, expected) in [
            ("x", "x", false),
            ("🎉", "🎉", false),
            ("[a-z]", "a", false),
            ("?", "a", false),
            ("**/", "a/", true),
        ] {
            let longest = fill.repeat(MAX_PATTERN_BYTES / fill.len());
            let glob = SensorGlob::new(&longest).unwrap();
            assert_eq!(
                glob.matches(Utf8Path::new(PROJECT), Utf8Path::new(candidate)),
                expected,
                "{fill}"
            );
        }
    }
}
