//! Which text of a composed core stage a plugin's contribution wrote, and where that text is in
//! the contribution file (docs/decisions.md D52: the own-tree compile shows a diagnostic in a
//! core stage on the contribution that wrote the text it points at).
//!
//! Two kinds of text come from a contribution: a prose fragment, spliced into the body between
//! its two sentinels ([`crate::plugin::splice::Fragment::block`]), and a structural value merged
//! into the frontmatter (`adds.<field>`, [`crate::plugin::merge`]). A span in a fragment's prose
//! maps to the prose under its `## fragment:` heading in the contribution (across the
//! `{{HARNESS_DIR}}` substitution); a span in frontmatter lines the composition inserted (the
//! lines of the composed stage that a line-level longest common subsequence with the base text
//! leaves unmatched) maps to the same text under `adds.<field>` in the contribution, or to the
//! whole `adds.<field>` entry when the merge rewrote it (a `required_sections` value quoted).
//!
//! Pure: texts in, offsets out. Any span not wholly in text a contribution wrote gives `None`.

use std::ops::Range;

use camino::Utf8PathBuf;

use crate::compile::syntax::{frontmatter, yaml};
use crate::plugin::contribution::{self, Contribution};
use crate::plugin::placeholder_span::{HARNESS_PLACEHOLDER, authored_span};
use crate::plugin::splice::Fragment;

/// One of the plugin's contribution files.
#[derive(Debug, Clone)]
pub struct ContributionFile {
    /// Its path in the plugin, relative to the plugin's root.
    pub in_plugin: Utf8PathBuf,
    /// Its text as authored (on disk, or the editor's).
    pub authored: String,
    /// The contribution read from it with `{{HARNESS_DIR}}` left as written.
    pub contribution: Contribution,
}

impl ContributionFile {
    /// Read `authored` as a contribution of `plugin`; `None` when it is not one (the
    /// composition refused it, so no core stage holds its text).
    pub fn read(plugin: &str, in_plugin: Utf8PathBuf, authored: String) -> Option<Self> {
        let normalised = contribution::normalised_text(&authored);
        let contribution =
            contribution::read_contribution(plugin, &in_plugin, &normalised, HARNESS_PLACEHOLDER)
                .ok()?;
        Some(Self {
            in_plugin,
            authored,
            contribution,
        })
    }
}

/// Where `span` of `composed` (core stage `slug` after composition; `base` before it) is in
/// one of `files`: the file's index and the span in its authored text.
pub fn span_in_contribution(
    slug: &str,
    base: &str,
    composed: &str,
    span: &Range<usize>,
    files: &[ContributionFile],
    harness_dir: &str,
) -> Option<(usize, Range<usize>)> {
    let targeting = || {
        files
            .iter()
            .enumerate()
            .filter(move |(_, file)| file.contribution.target == slug)
    };
    for (index, file) in targeting() {
        if let Some(found) = span_in_fragment(composed, span, file, harness_dir) {
            return Some((index, found));
        }
    }
    let field = inserted_frontmatter_field(base, composed, span)?;
    let needle = &composed[span.clone()];
    targeting().find_map(|(index, file)| {
        span_in_adds(&file.authored, &field, needle).map(|found| (index, found))
    })
}

/// A span inside the prose of one of `file`'s fragments, as spliced into `composed`.
fn span_in_fragment(
    composed: &str,
    span: &Range<usize>,
    file: &ContributionFile,
    harness_dir: &str,
) -> Option<Range<usize>> {
    for fragment in &file.contribution.fragments {
        let spliced = Fragment {
            prose: fragment.prose.replace(HARNESS_PLACEHOLDER, harness_dir),
            ..fragment.clone()
        };
        let block = spliced.block();
        let Some(at) = composed.find(&block) else {
            continue;
        };
        let prose_start = at + block.find('\n')? + 1;
        let prose_end = prose_start + spliced.prose.len();
        if span.start < prose_start || span.end > prose_end {
            continue;
        }
        let relative = span.start - prose_start..span.end - prose_start;
        let in_prose = authored_span(&fragment.prose, harness_dir, relative);
        let prose_at = prose_in_authored(&file.authored, &fragment.anchor_text, &fragment.prose)?;
        return Some(prose_at + in_prose.start..prose_at + in_prose.end);
    }
    None
}

/// Where `prose` (as authored, trimmed) starts in `authored`: after its `## fragment: <anchor>`
/// heading when there is one, else anywhere.
fn prose_in_authored(authored: &str, anchor: &str, prose: &str) -> Option<usize> {
    let heading = format!("## fragment: {anchor}");
    let after_heading = authored.find(&heading).map_or(0, |at| at + heading.len());
    authored[after_heading..]
        .find(prose)
        .map(|at| after_heading + at)
        .or_else(|| authored.find(prose))
}

/// The top-level frontmatter field whose lines hold `span`, when every line of the span is one
/// the composition inserted into `base`.
fn inserted_frontmatter_field(base: &str, composed: &str, span: &Range<usize>) -> Option<String> {
    let fences = frontmatter::split(composed).ok()?;
    if span.end > fences.yaml.end || span.start < fences.yaml.start {
        return None;
    }
    let lines = line_starts(composed);
    let first = lines.partition_point(|&start| start <= span.start) - 1;
    let last = lines.partition_point(|&start| start < span.end.max(span.start + 1)) - 1;
    let inserted = inserted_lines(base, composed);
    if !(first..=last).all(|line| inserted.get(line).copied().unwrap_or(false)) {
        return None;
    }
    (0..=first).rev().find_map(|line| {
        let text = composed[lines[line]..].lines().next().unwrap_or_default();
        if text.starts_with([' ', '\t', '-']) {
            return None;
        }
        text.split_once(':').map(|(key, _)| key.trim().to_owned())
    })
}

/// The byte offset each line of `text` starts at.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1))
        .filter(|&start| start < text.len() || start == 0)
        .collect()
}

/// For each line of `composed`, whether it is not matched to a line of `base` by a longest
/// common subsequence of lines (so it is one the composition inserted or rewrote).
fn inserted_lines(base: &str, composed: &str) -> Vec<bool> {
    let base: Vec<&str> = base.split('\n').collect();
    let composed: Vec<&str> = composed.split('\n').collect();
    let (n, m) = (base.len(), composed.len());
    // Invariant: `lengths[i][j]` is the LCS length of `base[i..]` and `composed[j..]`.
    let mut lengths = vec![vec![0_u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i][j] = if base[i] == composed[j] {
                lengths[i + 1][j + 1] + 1
            } else {
                lengths[i + 1][j].max(lengths[i][j + 1])
            };
        }
    }
    let mut inserted = vec![true; m];
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if base[i] == composed[j] {
            inserted[j] = false;
            i += 1;
            j += 1;
        } else if lengths[i + 1][j] >= lengths[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    inserted
}

/// `needle` (or it without the double quotes the merge writes) inside the `adds.<field>` entry
/// of the contribution `authored`, else that whole entry.
fn span_in_adds(authored: &str, field: &str, needle: &str) -> Option<Range<usize>> {
    let fences = frontmatter::split(authored).ok()?;
    let (Some(root), _) = yaml::parse_document(authored, fences.yaml) else {
        return None;
    };
    let entry = root
        .get("adds")?
        .as_mapping()?
        .iter()
        .find(|entry| entry.key.as_scalar() == Some(field))?;
    let within = entry.value.span.clone();
    let unquoted = needle.trim_matches('"');
    for wanted in [needle, unquoted] {
        if wanted.is_empty() {
            continue;
        }
        if let Some(at) = authored[within.clone()].find(wanted) {
            return Some(within.start + at..within.start + at + wanted.len());
        }
    }
    Some(entry.key.span.start..entry.value.span.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "---\nslug: build-and-test\nsensors:\n  - linter\nscopes:\n  - feature\n---\n\n# Build\n\n## Sensors\n\n- `linter` lints.\n\n## Next\n";

    fn contribution(text: &str) -> ContributionFile {
        ContributionFile::read(
            "acme",
            "contributions/construction/build-and-test.md".into(),
            text.to_owned(),
        )
        .expect("a contribution")
    }

    const CONTRIBUTION: &str = "---\ntarget: build-and-test\nplugin: acme\nadds:\n  sensors:\n    - acme-lnt\nfragments:\n  - anchor: in:Sensors\n    order: 100\n---\n\n## fragment: in:Sensors\n\n- `acme` reads {{HARNESS_DIR}}/tools and `oops`.\n";

    /// The base with the contribution's sensor merged and its fragment spliced, as the
    /// composition writes them for `.claude`.
    fn composed(file: &ContributionFile) -> String {
        let with_sensor = BASE.replace("  - linter\n", "  - linter\n  - acme-lnt\n");
        let fragment = Fragment {
            prose: file.contribution.fragments[0]
                .prose
                .replace(HARNESS_PLACEHOLDER, ".claude"),
            ..file.contribution.fragments[0].clone()
        };
        with_sensor.replace(
            "- `linter` lints.\n",
            &format!("- `linter` lints.\n\n{}\n", fragment.block()),
        )
    }

    #[test]
    fn a_span_in_a_merged_sensor_is_the_item_in_adds() {
        let file = contribution(CONTRIBUTION);
        let composed = composed(&file);
        let at = composed.find("acme-lnt").unwrap();
        let (index, span) = span_in_contribution(
            "build-and-test",
            BASE,
            &composed,
            &(at..at + 8),
            std::slice::from_ref(&file),
            ".claude",
        )
        .expect("mapped");
        assert_eq!(index, 0);
        assert_eq!(&CONTRIBUTION[span.clone()], "acme-lnt");
        assert_eq!(CONTRIBUTION.find("acme-lnt"), Some(span.start));
    }

    #[test]
    fn a_span_in_spliced_prose_is_the_prose_under_its_heading_across_the_placeholder() {
        let file = contribution(CONTRIBUTION);
        let composed = composed(&file);
        let at = composed.find("`oops`").unwrap();
        let (_, span) = span_in_contribution(
            "build-and-test",
            BASE,
            &composed,
            &(at..at + 6),
            std::slice::from_ref(&file),
            ".claude",
        )
        .expect("mapped");
        assert_eq!(&CONTRIBUTION[span], "`oops`");
    }

    #[test]
    fn a_span_in_the_core_stages_own_text_is_not_the_contributions() {
        let file = contribution(CONTRIBUTION);
        let composed = composed(&file);
        for needle in ["linter", "feature", "`linter` lints", "build-and-test"] {
            let at = composed.find(needle).unwrap();
            assert_eq!(
                span_in_contribution(
                    "build-and-test",
                    BASE,
                    &composed,
                    &(at..at + needle.len()),
                    std::slice::from_ref(&file),
                    ".claude",
                ),
                None,
                "{needle}"
            );
        }
        // Another stage's diagnostics are never the contribution's.
        let at = composed.find("acme-lnt").unwrap();
        assert_eq!(
            span_in_contribution(
                "code-generation",
                BASE,
                &composed,
                &(at..at + 8),
                std::slice::from_ref(&file),
                ".claude",
            ),
            None
        );
    }

    #[test]
    fn inserted_lines_follow_a_longest_common_subsequence() {
        let inserted = inserted_lines("a\nb\nc", "a\nx\nb\nb\nc");
        assert_eq!(inserted, [false, true, false, true, false]);
    }
}
