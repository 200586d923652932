//! Which text of a composed core stage a plugin's contribution wrote, and where that text is in
//! the contribution file (docs/decisions.md D52: the own-tree compile shows a diagnostic in a
//! core stage on the contribution that wrote the text it points at).
//!
//! The composition records the text as it writes it (`compose`): each [`ContributedRange`] is
//! bytes of a composed core stage one contribution wrote, either lines a structural value was
//! merged into the frontmatter with (`adds.<field>`, [`crate::plugin::merge`]) or the prose of
//! a fragment spliced into the body between its two sentinels
//! ([`crate::plugin::splice::Fragment::block`]). Each range also records where its text came
//! from in the contribution, as the contribution's reader found it. A span in a fragment's
//! prose maps to that prose in the contribution (across the `{{HARNESS_DIR}}` substitution); a
//! span in merged lines maps to the same text in the `adds.<field>` value of the contribution,
//! or to the whole `adds.<field>` entry when the merge rewrote it (a `required_sections` value
//! quoted).
//!
//! Pure: records and texts in, offsets out. A span not wholly in one recorded range gives `None`.

use std::collections::BTreeMap;
use std::ops::Range;

use camino::Utf8PathBuf;

use crate::plugin::placeholder_span::authored_span;

/// Each core stage a contribution changed, by its project-relative path → the text
/// contributions wrote into it.
pub type ContributedText = BTreeMap<Utf8PathBuf, Vec<ContributedRange>>;

/// Bytes of a composed core stage that one contribution wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContributedRange {
    /// The bytes, in the composed stage's text.
    pub range: Range<usize>,
    /// The contribution file (absolute, in the plugin's tree).
    pub source: Utf8PathBuf,
    pub origin: Origin,
}

/// What of the contribution the bytes are, with spans of the contribution's text (as its
/// reader normalised it, `contribution::normalised_text`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Frontmatter lines merged from its `adds.<field>` entry, which spans `entry` (key through
    /// value), its value `value`.
    Adds {
        entry: Range<usize>,
        value: Range<usize>,
    },
    /// The prose of one of its fragments, as the contribution writes it (trimmed,
    /// `{{HARNESS_DIR}}` not substituted), starting at `authored_at`.
    Fragment {
        authored_prose: String,
        authored_at: usize,
    },
}

/// Move the ranges past an edit of the text at `at` that grew it by `grown` bytes: every range
/// that starts at or after `at` (an edit never cuts into a recorded range, so the others end
/// at or before it).
pub fn shift_after(ranges: &mut [ContributedRange], at: usize, grown: isize) {
    for recorded in ranges
        .iter_mut()
        .filter(|recorded| recorded.range.start >= at)
    {
        recorded.range.start = recorded.range.start.saturating_add_signed(grown);
        recorded.range.end = recorded.range.end.saturating_add_signed(grown);
    }
}

/// The range of `ranges` that holds all of `span` (a span of the composed stage).
pub fn range_holding<'r>(
    ranges: &'r [ContributedRange],
    span: &Range<usize>,
) -> Option<&'r ContributedRange> {
    ranges.iter().find(|recorded| {
        recorded.range.start <= span.start
            && span.end <= recorded.range.end
            && span.start < recorded.range.end
    })
}

/// Where `span` of `composed`, held by `recorded`, is in `authored`, the text of the
/// contribution file that wrote it (`harness_dir` substituted for `{{HARNESS_DIR}}` in it): in
/// merged lines, the spanned text (or it without the double quotes the merge writes) in the
/// `adds.<field>` value, else that whole entry.
pub fn span_in_contribution(
    recorded: &ContributedRange,
    span: &Range<usize>,
    composed: &str,
    authored: &str,
    harness_dir: &str,
) -> Option<Range<usize>> {
    match &recorded.origin {
        Origin::Adds { entry, value } => {
            let needle = composed.get(span.clone())?;
            let within = authored.get(value.clone())?;
            let found = [needle, needle.trim_matches('"')]
                .into_iter()
                .filter(|wanted| !wanted.is_empty())
                .find_map(|wanted| {
                    let at = value.start + within.find(wanted)?;
                    Some(at..at + wanted.len())
                });
            Some(found.unwrap_or_else(|| entry.clone()))
        }
        Origin::Fragment {
            authored_prose,
            authored_at,
        } => {
            let relative = span.start - recorded.range.start..span.end - recorded.range.start;
            let in_prose = authored_span(authored_prose, harness_dir, relative);
            Some(authored_at + in_prose.start..authored_at + in_prose.end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRIBUTION: &str = "---\ntarget: build-and-test\nplugin: acme\nadds:\n  sensors:\n    - acme-lnt\nfragments:\n  - anchor: in:Sensors\n    order: 100\n---\n\n## fragment: in:Sensors\n\n- `acme` reads {{HARNESS_DIR}}/tools and `oops`.\n";

    /// A composed stage that holds a base line equal to the one the contribution inserted,
    /// with the ranges the composition records for it.
    const COMPOSED: &str = "---\nsensors:\n  - acme-lnt\n  - acme-lnt\n---\n\n## Sensors\n\n<!-- plugin:acme:in:Sensors:100:0 -->\n- `acme` reads .claude/tools and `oops`.\n<!-- /plugin:acme:in:Sensors:100:0 -->\n";

    fn recorded() -> Vec<ContributedRange> {
        let prose = "- `acme` reads .claude/tools and `oops`.";
        let prose_at = COMPOSED.find(prose).unwrap();
        let item_at = CONTRIBUTION.find("- acme-lnt").unwrap();
        vec![
            ContributedRange {
                range: 26..39,
                source: "contributions/construction/build-and-test.md".into(),
                origin: Origin::Adds {
                    entry: CONTRIBUTION.find("sensors:").unwrap()..item_at + 10,
                    value: item_at..item_at + 10,
                },
            },
            ContributedRange {
                range: prose_at..prose_at + prose.len(),
                source: "contributions/construction/build-and-test.md".into(),
                origin: Origin::Fragment {
                    authored_prose: "- `acme` reads {{HARNESS_DIR}}/tools and `oops`.".to_owned(),
                    authored_at: CONTRIBUTION.find("- `acme`").unwrap(),
                },
            },
        ]
    }

    fn mapped(needle_at: usize, len: usize) -> Option<Range<usize>> {
        let ranges = recorded();
        let span = needle_at..needle_at + len;
        let recorded = range_holding(&ranges, &span)?;
        span_in_contribution(recorded, &span, COMPOSED, CONTRIBUTION, ".claude")
    }

    #[test]
    fn a_span_in_a_merged_sensor_is_the_item_in_adds_and_the_equal_base_line_is_not() {
        assert_eq!(&COMPOSED[26..39], "  - acme-lnt\n");
        let span = mapped(30, 8).expect("the inserted line");
        assert_eq!(&CONTRIBUTION[span.clone()], "acme-lnt");
        assert_eq!(CONTRIBUTION.find("acme-lnt"), Some(span.start));
        assert_eq!(mapped(COMPOSED.find("acme-lnt").unwrap(), 8), None);
    }

    #[test]
    fn a_span_in_spliced_prose_is_the_prose_under_its_heading_across_the_placeholder() {
        let span = mapped(COMPOSED.find("`oops`").unwrap(), 6).expect("mapped");
        assert_eq!(&CONTRIBUTION[span], "`oops`");
    }

    #[test]
    fn a_span_outside_the_recorded_text_is_not_the_contributions() {
        for needle in ["sensors", "## Sensors", "<!-- plugin"] {
            let at = COMPOSED.find(needle).unwrap();
            assert_eq!(mapped(at, needle.len()), None, "{needle}");
        }
    }

    #[test]
    fn an_edit_before_a_range_moves_it_and_one_after_does_not() {
        let mut ranges = recorded();
        shift_after(&mut ranges, 26, 5);
        assert_eq!(ranges[0].range, 31..44);
        shift_after(&mut ranges, 100, 5);
        assert_eq!(ranges[0].range, 31..44);
    }
}
