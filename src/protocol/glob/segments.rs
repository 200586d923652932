//! The patterns `matches` nearly always holds, matched folder by folder without a regex.
//! What this saves a write hook over globset's regex is measured by `benches/twins.sh` (the
//! figures are in `benches/whole_process.rs`).
//!
//! globset compiles every glob into a regex, which costs about 250 k instructions per pattern:
//! most of the work of a write hook, and a large part of a compile's dead-binding check. The
//! shapes taken here are the ones whose regex (globset 0.4.22, `parse_star` and
//! `to_regex_with`, with `literal_separator(true)`) reads as a rule on whole folders:
//!
//! - the pattern split on `/` has no empty segment;
//! - a segment is exactly `**`, or a run of literal characters, single `*`s and `{a,b,...}`
//!   groups whose alternatives are non-empty literals;
//! - no `?`, `[`, `]`, `\` anywhere, no `,` outside a group, no `**` segment right after another.
//!
//! Any other pattern gets `None` from [`SegmentGlob::parse`] and is matched by globset's own
//! regex. The parse here never decides what is valid: the caller has already parsed the pattern
//! with globset, and this parse only recognises shapes.

/// A pattern of the shapes above, one entry per `/`-separated segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SegmentGlob {
    segments: Vec<PatternSegment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PatternSegment {
    /// A `**` segment. globset gives it three meanings by position: leading (`(?:/?|.*/)`) and
    /// middle (`(?:/|/.*/)`) take zero or more whole folders, trailing (`/.*`) one or more, so
    /// `a/**` does not match `a` but does match `a/`. Alone it matches everything, which both
    /// readings give (a candidate always has at least one segment, maybe empty).
    AnySegments { at_least_one: bool },
    /// A segment without `**`: exactly one candidate segment, matched by its pieces.
    Name(NameSegment),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct NameSegment {
    pieces: Vec<NamePiece>,
    /// How many candidate segments the pattern segments after this one take at least.
    segments_after: usize,
    /// Whether they take exactly `segments_after` (no `**` follows): then only one candidate
    /// segment can be this one, the one that leaves exactly that many, and `**/x.md` tries the
    /// last folder alone instead of every folder.
    fixed_after: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum NamePiece {
    /// Bytes compared exactly, case-sensitively.
    Literal(String),
    /// `*`: any run of bytes (never a `/`, as the candidate is already split on them), dotfiles
    /// included.
    Star,
    /// `{a,b}`: exactly one of the alternatives.
    OneOf(Vec<String>),
}

impl SegmentGlob {
    /// The segment form of `pattern`, or `None` when its shape needs globset's regex.
    pub(super) fn parse(pattern: &str) -> Option<Self> {
        let raw_segments: Vec<&str> = pattern.split('/').collect();
        let last = raw_segments.len() - 1;
        let mut segments = Vec::with_capacity(raw_segments.len());
        for (index, raw) in raw_segments.iter().enumerate() {
            if raw.is_empty() {
                return None;
            }
            if *raw == "**" {
                if matches!(segments.last(), Some(PatternSegment::AnySegments { .. })) {
                    return None;
                }
                segments.push(PatternSegment::AnySegments {
                    at_least_one: index == last && index > 0,
                });
            } else {
                segments.push(PatternSegment::Name(NameSegment {
                    pieces: parse_name(raw)?,
                    segments_after: 0,
                    fixed_after: true,
                }));
            }
        }
        let (mut segments_after, mut fixed_after) = (0, true);
        for segment in segments.iter_mut().rev() {
            match segment {
                PatternSegment::AnySegments { at_least_one } => {
                    segments_after += usize::from(*at_least_one);
                    fixed_after = false;
                }
                PatternSegment::Name(name) => {
                    name.segments_after = segments_after;
                    name.fixed_after = fixed_after;
                    segments_after += 1;
                }
            }
        }
        Some(Self { segments })
    }

    /// Whether the candidate (already in `match_candidate`'s form) matches.
    pub(super) fn is_match(&self, candidate: &str) -> bool {
        let count = candidate.bytes().filter(|byte| *byte == b'/').count() + 1;
        // reachable[i]: the pattern segments seen so far can match exactly the candidate's
        // first i segments.
        let mut reachable = vec![false; count + 1];
        reachable[0] = true;
        for segment in &self.segments {
            match segment {
                PatternSegment::AnySegments { at_least_one } => {
                    let Some(first) = reachable.iter().position(|reached| *reached) else {
                        return false;
                    };
                    let from = first + usize::from(*at_least_one);
                    for (index, reached) in reachable.iter_mut().enumerate() {
                        *reached = index >= from;
                    }
                }
                PatternSegment::Name(name) => {
                    // Backwards (the candidate's segments from the last), so that
                    // reachable[index] is still the old value when read. An end that leaves the
                    // later pattern segments too few (or, with no `**` after, other than exactly
                    // enough) candidate segments can never reach the end of the candidate, so
                    // its segment is not compared.
                    let names = candidate.as_bytes().rsplit(|byte| *byte == b'/');
                    for (index, text) in (0..count).rev().zip(names) {
                        let left = count - index - 1;
                        let viable = if name.fixed_after {
                            left == name.segments_after
                        } else {
                            left >= name.segments_after
                        };
                        reachable[index + 1] =
                            viable && reachable[index] && name_matches(&name.pieces, text);
                    }
                    reachable[0] = false;
                }
            }
        }
        reachable[count]
    }
}

/// The pieces of one segment that holds no `**`, or `None` for a shape left to globset.
fn parse_name(raw: &str) -> Option<Vec<NamePiece>> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(character) = chars.next() {
        match character {
            '*' => {
                if chars.peek() == Some(&'*') {
                    return None;
                }
                flush_literal(&mut literal, &mut pieces);
                pieces.push(NamePiece::Star);
            }
            '{' => {
                flush_literal(&mut literal, &mut pieces);
                let mut alternatives = vec![String::new()];
                loop {
                    match chars.next()? {
                        '}' => break,
                        ',' => alternatives.push(String::new()),
                        inner if is_plain(inner) => alternatives.last_mut()?.push(inner),
                        _ => return None,
                    }
                }
                if alternatives.iter().any(String::is_empty) {
                    return None;
                }
                pieces.push(NamePiece::OneOf(alternatives));
            }
            plain if is_plain(plain) => literal.push(plain),
            _ => return None,
        }
    }
    flush_literal(&mut literal, &mut pieces);
    Some(pieces)
}

/// A character globset reads as itself wherever it stands (`/` never reaches here).
fn is_plain(character: char) -> bool {
    !matches!(
        character,
        '?' | '*' | '[' | ']' | '{' | '}' | ',' | '\\' | '/'
    )
}

fn flush_literal(literal: &mut String, pieces: &mut Vec<NamePiece>) {
    if !literal.is_empty() {
        pieces.push(NamePiece::Literal(std::mem::take(literal)));
    }
}

/// Whether one candidate segment matches the pieces of one pattern segment. Tracks every
/// position the pieces so far can end at, so alternatives of different lengths and several
/// stars never backtrack exponentially.
fn name_matches(pieces: &[NamePiece], name: &[u8]) -> bool {
    match pieces {
        [NamePiece::Literal(literal)] => return literal.as_bytes() == name,
        [NamePiece::OneOf(alternatives)] => {
            return alternatives
                .iter()
                .any(|alternative| alternative.as_bytes() == name);
        }
        _ => {}
    }
    // ends[i]: the pieces so far can match exactly name[..i].
    let mut ends = vec![false; name.len() + 1];
    ends[0] = true;
    for piece in pieces {
        match piece {
            NamePiece::Star => {
                let Some(first) = ends.iter().position(|end| *end) else {
                    return false;
                };
                ends[first..].fill(true);
            }
            NamePiece::Literal(literal) => {
                advance_ends(&mut ends, name, std::slice::from_ref(literal));
            }
            NamePiece::OneOf(alternatives) => advance_ends(&mut ends, name, alternatives),
        }
    }
    ends[name.len()]
}

/// Moves every end past one of `texts` (all non-empty), in place: going backwards, each
/// `ends[end - len]` read is below the index written, so it still holds the old value.
fn advance_ends(ends: &mut [bool], name: &[u8], texts: &[String]) {
    for end in (0..ends.len()).rev() {
        ends[end] = texts.iter().any(|text| {
            let text = text.as_bytes();
            end >= text.len() && ends[end - text.len()] && &name[end - text.len()..end] == text
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_match(pattern: &str, candidate: &str) -> bool {
        SegmentGlob::parse(pattern)
            .unwrap_or_else(|| panic!("{pattern} takes the segment matcher"))
            .is_match(candidate)
    }

    #[test]
    fn a_trailing_double_star_needs_one_more_segment_and_a_leading_one_none() {
        assert!(!is_match("a/**", "a"));
        assert!(is_match("a/**", "a/"));
        assert!(is_match("a/**", "a/b/c"));
        assert!(is_match("**/a", "a"));
        assert!(is_match("**/a", "/a"));
        assert!(is_match("**/a", "x//a"));
        assert!(is_match("a/**/b", "a/b"));
        assert!(is_match("a/**/b", "a//b"));
        assert!(!is_match("a/**/b", "ab"));
        assert!(is_match("**", ""));
        assert!(is_match("**", "/x/"));
    }

    #[test]
    fn stars_and_groups_stay_inside_one_segment() {
        assert!(is_match("*.{ts,tsx}", "a.tsx"));
        assert!(is_match("*.{ts,tsx}", ".ts"));
        assert!(!is_match("*.{ts,tsx}", "a.t"));
        assert!(!is_match("*", "a/b"));
        assert!(is_match("*", ""));
        assert!(is_match("*a*b*", "xaybz"));
        assert!(!is_match("*a*b*", "xbya"));
        assert!(is_match("{ab,a}{bc,c}", "abc"));
        assert!(is_match("é*", "éé"));
    }

    /// Stars and groups are tracked as sets of positions, never by backtracking: a pattern
    /// of many stars against a long name that nearly matches finishes (it would not, in any
    /// reasonable time, if every way to place the stars were tried).
    #[test]
    fn many_stars_do_not_backtrack() {
        let pattern = format!("{}*b", "*a".repeat(1000));
        let almost = "a".repeat(1200);
        assert!(!is_match(&pattern, &almost));
        assert!(is_match(&pattern, &format!("{almost}b")));
        let groups = format!("{}{{a,b}}", "*{a,aa}".repeat(500));
        assert!(!is_match(&groups, &format!("{almost}c")));
    }

    #[test]
    fn shapes_left_to_globset() {
        for pattern in [
            "", "/a", "a/", "a//b", "**/**", "a**", "**a", "a/**b", "?", "[a]", "a\\b", "a,b",
            "{a,}", "{}", "{a,{b}}", "{a*,b}", "{a?,b}", "}",
        ] {
            assert_eq!(SegmentGlob::parse(pattern), None, "{pattern}");
        }
    }
}
