//! [`SensorGlob::matches`] against globset's own compiled regex: whatever shape a pattern has
//! and whichever matcher it takes, both must answer the same for every candidate (D5).

use camino::Utf8Path;
use proptest::prelude::*;

use super::{Matcher, SensorGlob, match_candidate};

/// A project folder no candidate starts with, so `match_candidate` hands every candidate to
/// the matcher unchanged and both sides see the same string.
const PROJECT: &str = "/no-such-project";

/// The literal pieces patterns are built from; candidates are built from the same pieces (and
/// a few more), so that literals, groups and stars meet text they can match.
const LITERALS: &[&str] = &["a", "b", "ab", "é", ".", "md", "ts", "tsx", "-x"];

/// Candidate atoms beyond the pattern's literals: glob characters read as plain text.
const EXTRA_ATOMS: &[&str] = &["*", "{", ",", "z"];

fn literal() -> impl Strategy<Value = String> {
    prop::sample::select(LITERALS).prop_map(str::to_owned)
}

/// One piece of a segment that holds no `**`.
#[derive(Debug, Clone)]
enum Piece {
    Literal(String),
    Star,
    Group(Vec<String>),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        3 => literal().prop_map(Piece::Literal),
        2 => Just(Piece::Star),
        2 => prop::collection::vec(literal(), 1..4).prop_map(Piece::Group),
    ]
}

/// A segment of the fast-path grammar: pieces, never two stars side by side (that is `**`).
fn name_segment() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 1..4).prop_map(|pieces| {
        let mut text = String::new();
        for piece in pieces {
            match piece {
                Piece::Literal(literal) => text.push_str(&literal),
                Piece::Star if text.ends_with('*') => {}
                Piece::Star => text.push('*'),
                Piece::Group(alternatives) => {
                    text.push('{');
                    text.push_str(&alternatives.join(","));
                    text.push('}');
                }
            }
        }
        text
    })
}

/// A pattern of the fast-path grammar: segments, some `**`, never two `**` in a row.
fn fast_pattern() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![1 => Just("**".to_owned()), 3 => name_segment()],
        1..5,
    )
    .prop_map(|segments| {
        let mut kept: Vec<String> = Vec::with_capacity(segments.len());
        for segment in segments {
            if segment == "**" && kept.last().is_some_and(|last| last == "**") {
                continue;
            }
            kept.push(segment);
        }
        kept.join("/")
    })
}

/// Tokens of a wider grammar: shapes that fall back to the regex (`?`, classes, `**` inside a
/// segment, empty segments, `**/**`, escapes, empty alternatives, nesting) beside the fast
/// ones. Many joins are not valid globs; those are skipped, as globset refuses them.
fn wide_token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => literal(),
        2 => Just("*".to_owned()),
        2 => Just("**".to_owned()),
        3 => Just("/".to_owned()),
        1 => Just("//".to_owned()),
        2 => Just("**/".to_owned()),
        1 => Just("/**".to_owned()),
        1 => Just("?".to_owned()),
        1 => Just("[a-b]".to_owned()),
        1 => Just("[!a]".to_owned()),
        1 => Just("[/]".to_owned()),
        1 => Just("{a,b}".to_owned()),
        1 => Just("{a,}".to_owned()),
        1 => Just("{a,{b,ab}}".to_owned()),
        1 => Just("{*,a}".to_owned()),
        1 => Just("{**,b}".to_owned()),
        1 => Just("{".to_owned()),
        1 => Just("}".to_owned()),
        1 => Just(",".to_owned()),
        1 => Just("\\*".to_owned()),
    ]
}

fn wide_pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(wide_token(), 0..7).prop_map(|tokens| tokens.concat()),
        (fast_pattern(), wide_token(), any::<prop::sample::Index>()).prop_map(
            |(pattern, token, at)| {
                let boundaries: Vec<usize> = (0..=pattern.len())
                    .filter(|index| pattern.is_char_boundary(*index))
                    .collect();
                let at = boundaries[at.index(boundaries.len())];
                format!("{}{token}{}", &pattern[..at], &pattern[at..])
            }
        ),
    ]
}

/// Candidates: segments of zero to three atoms (so some are empty), joined by `/`, sometimes
/// with a leading `/`.
fn candidate() -> impl Strategy<Value = String> {
    let atom = prop::sample::select([LITERALS, EXTRA_ATOMS].concat());
    let segment = prop::collection::vec(atom, 0..4).prop_map(|atoms| atoms.concat());
    (prop::collection::vec(segment, 1..6), any::<bool>()).prop_map(|(segments, leading)| {
        let joined = segments.join("/");
        if leading {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

/// Every candidate answers as globset's compiled regex does. Returns whether the pattern is
/// valid (`None` when globset refuses it, which `SensorGlob::new` must refuse too).
fn check_agreement(pattern: &str, candidates: &[String]) -> Option<SensorGlob> {
    let Ok(reference) = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
    else {
        assert!(
            SensorGlob::new(pattern).is_err(),
            "{pattern:?} must be refused"
        );
        return None;
    };
    let reference = reference.compile_matcher();
    let glob = SensorGlob::new(pattern).unwrap();
    for candidate in candidates {
        assert_eq!(
            match_candidate(Utf8Path::new(PROJECT), Utf8Path::new(candidate)),
            *candidate
        );
        assert_eq!(
            glob.matches(Utf8Path::new(PROJECT), Utf8Path::new(candidate)),
            reference.is_match(candidate.as_str()),
            "pattern {pattern:?}, candidate {candidate:?}, matcher {:?}",
            glob.matcher
        );
    }
    Some(glob)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn fast_path_patterns_match_as_globset_does(
        pattern in fast_pattern(),
        candidates in prop::collection::vec(candidate(), 24),
    ) {
        let glob = check_agreement(&pattern, &candidates).expect("the fast grammar is valid");
        // The agreement above must not come from falling back to globset.
        prop_assert!(
            matches!(glob.matcher, Matcher::Segments(_)),
            "{pattern:?} falls back to a regex"
        );
    }

    #[test]
    fn any_pattern_matches_as_globset_does(
        pattern in wide_pattern(),
        candidates in prop::collection::vec(candidate(), 24),
    ) {
        check_agreement(&pattern, &candidates);
    }
}

/// Candidates that land exactly on a fast-path pattern's pieces: random candidates over a small
/// alphabet do, but rarely on every branch of a group or every position of `**`.
#[test]
fn fast_path_edge_cases_match_as_globset_does() {
    let patterns = [
        "**",
        "**/a",
        "a/**",
        "a/**/b",
        "**/a/**",
        "**/*.{ts,tsx}",
        "**/{aidlc-docs,intents}/**",
        "aidlc/**/*.md",
        "*",
        "*.md",
        "*a*",
        "{ab,a}{b,ab}",
        "é*/*é",
    ];
    let candidates: Vec<String> = [
        "",
        "/",
        "//",
        "a",
        "/a",
        "a/",
        "a//",
        "a/b",
        "a//b",
        "ab",
        "b/a",
        "x/a/y",
        "a.ts",
        "a.tsx",
        ".ts",
        "x/.tsx",
        "intents",
        "intents/",
        "x/aidlc-docs/y",
        "aidlc/x.md",
        "aidlc/x/y/z.md",
        "aidlc.md",
        "aab",
        "abab",
        "é/é",
        "éé/xé",
        "aidlc/.md",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for pattern in patterns {
        let glob = check_agreement(pattern, &candidates).unwrap();
        assert!(matches!(glob.matcher, Matcher::Segments(_)), "{pattern}");
    }
}

/// The wider grammar must give valid patterns of both kinds, or its agreement would be tested
/// on one matcher (or on refusals) alone.
#[test]
fn the_wide_grammar_reaches_both_matchers() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut refused, mut segments, mut regex) = (0, 0, 0);
    let total = 1000;
    for _ in 0..total {
        let pattern = wide_pattern().new_tree(&mut runner).unwrap().current();
        match SensorGlob::new(&pattern).map(|glob| glob.matcher) {
            Err(_) => refused += 1,
            Ok(Matcher::Segments(_)) => segments += 1,
            Ok(Matcher::Regex { .. }) => regex += 1,
        }
    }
    assert!(
        segments * 10 > total && regex * 10 > total * 3,
        "{segments} segment, {regex} regex, {refused} refused of {total}"
    );
}
