//! The one glob matcher (D5) for a sensor's `matches`: the write hook, `fire` and gate
//! dispatch all call [`SensorGlob::matches`], so the three can never disagree.
//!
//! The candidate is the project-relative path with `/` separators (the absolute path, also
//! with `/`, for a file outside the project). `*` and `?` never cross a `/`; `**/` also
//! matches zero folders; one or more `{a,b}` groups are expanded.

use camino::Utf8Path;

/// A compiled `matches` pattern.
#[derive(Debug, Clone)]
pub struct SensorGlob {
    pattern: String,
    matcher: globset::GlobMatcher,
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
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(InvalidGlob {
                pattern: pattern.to_owned(),
                reason: format!(
                    "the pattern is {} bytes long; at most {MAX_PATTERN_BYTES} are accepted",
                    pattern.len()
                ),
            });
        }
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|error| InvalidGlob {
                pattern: pattern.to_owned(),
                reason: error.kind().to_string(),
            })?;
        Ok(Self {
            pattern: pattern.to_owned(),
            matcher: glob.compile_matcher(),
        })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `path` (absolute, or relative to `project_dir`) matches.
    pub fn matches(&self, project_dir: &Utf8Path, path: &Utf8Path) -> bool {
        self.matcher
            .is_match(match_candidate(project_dir, path).as_str())
    }
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
}
