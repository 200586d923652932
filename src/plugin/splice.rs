//! Prose fragments spliced into a stage's body at their anchors.
//!
//! Each fragment becomes a block between two sentinel comments that carry the plugin, the
//! anchor, the order and a content hash (FNV-1a over the prose's UTF-16 code units, as the
//! reference composer computes it, so both write the same markers):
//!
//! ```text
//! <!-- plugin:test-pro:after-step:9:100:03284477 -->
//! …prose…
//! <!-- /plugin:test-pro:after-step:9:100:03284477 -->
//! ```
//!
//! Anchors are located on the text before any block is inserted, so where one plugin's block
//! lands never depends on another's: the blocks of one insertion point form one group,
//! `"\n" + blocks joined by "\n\n" + "\n"`, ordered by `(order, plugin, anchor)`; that is the
//! text the reference composer converges to for one plugin, whatever order its hooks ran in.
//! Anchor matching follows the reference's rules (headings are read line by line, as its regular
//! expressions read them, fenced code included).

use std::fmt;
use std::ops::Range;

use crate::leaves::text_lines::lines_with_starts;

/// Where a fragment goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// Right after `### Step <n>`'s content (before the next `##` or `###` heading); a range
    /// heading `### Step 4-8` holds steps 4 to 8.
    AfterStep(u64),
    /// Immediately before the `### Step <n>` heading.
    BeforeStep(u64),
    /// At the end of the `## Steps` section.
    EndOfSteps,
    /// At the end of the `## <Compartment>` section.
    In(String),
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Anchor::AfterStep(n) => write!(f, "after-step:{n}"),
            Anchor::BeforeStep(n) => write!(f, "before-step:{n}"),
            Anchor::EndOfSteps => f.write_str("end-of-steps"),
            Anchor::In(compartment) => write!(f, "in:{compartment}"),
        }
    }
}

/// Read an anchor as written in a contribution's `fragments:`. The text is kept as written for
/// the sentinel (`after-step:09` stays `after-step:09`), so the caller keeps both.
pub fn parse_anchor(text: &str) -> Result<Anchor, String> {
    let step = |rest: &str, kind: &str| {
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "bad {kind}-step anchor \"{text}\" (the step must be a whole number)"
            ));
        }
        rest.parse::<u64>()
            .map_err(|_| format!("bad {kind}-step anchor \"{text}\" (the step is too large)"))
    };
    if let Some(rest) = text.strip_prefix("after-step:") {
        return step(rest, "after").map(Anchor::AfterStep);
    }
    if let Some(rest) = text.strip_prefix("before-step:") {
        return step(rest, "before").map(Anchor::BeforeStep);
    }
    if text == "end-of-steps" {
        return Ok(Anchor::EndOfSteps);
    }
    if let Some(compartment) = text.strip_prefix("in:") {
        let valid = !compartment.is_empty()
            && compartment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ' || c == '-');
        if !valid {
            return Err(format!(
                "bad in: anchor \"{text}\" (a section name of letters, digits, spaces and dashes)"
            ));
        }
        return Ok(Anchor::In(compartment.to_owned()));
    }
    if text == "after-questions" {
        return Err(
            "anchor \"after-questions\" is not implemented (the reference composer has no place for it either); use after-step:<n>".to_owned(),
        );
    }
    Err(format!(
        "unknown anchor \"{text}\" (known: after-step:<n>, before-step:<n>, end-of-steps, in:<Section>)"
    ))
}

/// FNV-1a (32 bits) over the UTF-16 code units of `prose`, as 8 lower-case hex digits: the
/// reference composer's `hashProse`, so both write the same sentinels.
pub fn prose_hash(prose: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for unit in prose.encode_utf16() {
        hash ^= u32::from(unit);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// One fragment ready to splice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    pub plugin: String,
    pub anchor: Anchor,
    /// The anchor as written (what the sentinel carries).
    pub anchor_text: String,
    pub order: u64,
    /// The prose, trimmed, with `{{HARNESS_DIR}}` already substituted.
    pub prose: String,
    /// The prose, trimmed, as the contribution writes it (`{{HARNESS_DIR}}` not substituted).
    pub authored_prose: String,
    /// Where `authored_prose` starts in the contribution's text.
    pub authored_at: usize,
}

impl Fragment {
    /// The block with its two sentinels.
    pub fn block(&self) -> String {
        let marker = format!(
            "plugin:{}:{}:{}:{}",
            self.plugin,
            self.anchor_text,
            self.order,
            prose_hash(&self.prose)
        );
        format!("<!-- {marker} -->\n{}\n<!-- /{marker} -->", self.prose)
    }
}

/// Whether a character is a word character of JavaScript's `\w`.
fn is_word(character: Option<char>) -> bool {
    character.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// JavaScript's `\b` between `before` and `after`.
fn is_boundary(before: Option<char>, after: Option<char>) -> bool {
    is_word(before) != is_word(after)
}

/// The lines of `text` as (start offset, line without its `\n`).
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    lines_with_starts(text).map(|(start, line)| (start, line.strip_suffix('\n').unwrap_or(line)))
}

/// The steps a `### Step …` heading line holds: `### Step 7` is 7 to 7, `### Step 4-8:` 4 to 8.
fn step_heading_range(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("### Step ")?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 {
        return None;
    }
    let low: u64 = rest[..digits_end].parse().ok()?;
    let after_low = &rest[digits_end..];
    if let Some(range_rest) = after_low.strip_prefix('-') {
        let high_end = range_rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(range_rest.len());
        if high_end > 0
            && is_boundary(
                range_rest[..high_end].chars().last(),
                range_rest[high_end..].chars().next(),
            )
            && let Ok(high) = range_rest[..high_end].parse::<u64>()
        {
            return Some((low, high));
        }
    }
    is_boundary(rest[..digits_end].chars().last(), after_low.chars().next()).then_some((low, low))
}

/// The offset of the first line at or after `from` that starts with one of `prefixes`, else the
/// end of the text. `from` is the end of a heading line (its `\n` or the end of the text).
fn next_heading(text: &str, from: usize, prefixes: &[&str]) -> usize {
    lines(text)
        .filter(|(start, _)| *start > from)
        .find(|(_, line)| prefixes.iter().any(|prefix| line.starts_with(prefix)))
        .map_or(text.len(), |(start, _)| start)
}

/// Where `anchor` puts its blocks in `text`, or why it cannot.
pub fn anchor_offset(text: &str, anchor: &Anchor) -> Result<usize, String> {
    match anchor {
        Anchor::AfterStep(step) | Anchor::BeforeStep(step) => {
            let hit = lines(text).find(|(_, line)| {
                step_heading_range(line).is_some_and(|(low, high)| (low..=high).contains(step))
            });
            let Some((start, line)) = hit else {
                return Err(format!(
                    "no \"### Step {step}\" heading (a range like \"### Step 4-8\" counts)"
                ));
            };
            if matches!(anchor, Anchor::BeforeStep(_)) {
                return Ok(start);
            }
            Ok(next_heading(text, start + line.len(), &["## ", "### "]))
        }
        Anchor::EndOfSteps => {
            section_end(text, "Steps").ok_or_else(|| "no \"## Steps\" section".to_owned())
        }
        Anchor::In(compartment) => {
            section_end(text, compartment).ok_or_else(|| format!("no \"## {compartment}\" section"))
        }
    }
}

/// The end of the first `## <name>` section: the next `## ` line, else the end of the text.
fn section_end(text: &str, name: &str) -> Option<usize> {
    let wanted = format!("## {name}");
    let (start, line) = lines(text).find(|(_, line)| {
        line.strip_prefix(wanted.as_str())
            .is_some_and(|rest| is_boundary(name.chars().last(), rest.chars().next()))
    })?;
    Some(next_heading(text, start + line.len(), &["## "]))
}

/// A stage's text with its fragments spliced in, and where their text went.
pub struct Spliced {
    pub text: String,
    /// The prose of each fragment in `text`, by the fragment's index in the input.
    pub prose: Vec<Range<usize>>,
    /// Each group of blocks as (its offset in the input text, the bytes inserted there), in
    /// the order of the text.
    pub inserted: Vec<(usize, usize)>,
}

/// `text` with every fragment spliced in (see the module documentation). An anchor that
/// cannot be found is an error naming the fragment.
pub fn splice_fragments(text: &str, fragments: &[Fragment]) -> Result<Spliced, (usize, String)> {
    let mut placed: Vec<(usize, usize)> = Vec::with_capacity(fragments.len());
    for (index, fragment) in fragments.iter().enumerate() {
        let offset = anchor_offset(text, &fragment.anchor).map_err(|reason| (index, reason))?;
        placed.push((offset, index));
    }
    placed.sort_by(|(offset_a, a), (offset_b, b)| {
        let (fa, fb) = (&fragments[*a], &fragments[*b]);
        offset_a
            .cmp(offset_b)
            .then(fa.order.cmp(&fb.order))
            .then_with(|| fa.plugin.cmp(&fb.plugin))
            .then_with(|| fa.anchor_text.cmp(&fb.anchor_text))
    });
    let mut out = String::with_capacity(
        text.len() + fragments.iter().map(|f| f.prose.len() + 96).sum::<usize>(),
    );
    let mut prose = vec![0..0; fragments.len()];
    let mut inserted = Vec::new();
    let mut copied = 0;
    for group in placed.chunk_by(|(a, _), (b, _)| a == b) {
        let offset = group[0].0;
        out.push_str(&text[copied..offset]);
        let group_start = out.len();
        for (nth, (_, index)) in group.iter().enumerate() {
            out.push_str(if nth == 0 { "\n" } else { "\n\n" });
            let block = fragments[*index].block();
            // The prose is the block's second line up to its closing sentinel's line break.
            let prose_start = out.len() + block.find('\n').map_or(0, |at| at + 1);
            prose[*index] = prose_start..prose_start + fragments[*index].prose.len();
            out.push_str(&block);
        }
        out.push('\n');
        inserted.push((offset, out.len() - group_start));
        copied = offset;
    }
    out.push_str(&text[copied..]);
    Ok(Spliced {
        text: out,
        prose,
        inserted,
    })
}

/// Whether `text` already holds a sentinel block (composed by someone, at some point).
pub fn holds_sentinels(text: &str) -> bool {
    text.contains("<!-- plugin:") && text.contains("<!-- /plugin:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prose_hash_is_fnv1a_over_utf16_code_units() {
        assert_eq!(prose_hash(""), "811c9dc5");
        assert_eq!(prose_hash("a"), "e40c292c");
        // A character outside the BMP is two code units, as JavaScript's charCodeAt sees it.
        assert_ne!(prose_hash("\u{1F600}"), prose_hash("\u{F600}"));
    }

    #[test]
    fn anchors_are_read_strictly() {
        assert_eq!(parse_anchor("after-step:9"), Ok(Anchor::AfterStep(9)));
        assert_eq!(parse_anchor("before-step:2"), Ok(Anchor::BeforeStep(2)));
        assert_eq!(parse_anchor("end-of-steps"), Ok(Anchor::EndOfSteps));
        assert_eq!(parse_anchor("in:Sensors"), Ok(Anchor::In("Sensors".into())));
        for bad in [
            "after-step:x",
            "after-step:",
            "in:",
            "in:a/b",
            "after-questions",
            "nowhere",
        ] {
            assert!(parse_anchor(bad).is_err(), "{bad}");
        }
    }

    fn fragment(plugin: &str, anchor: &str, order: u64, prose: &str) -> Fragment {
        Fragment {
            plugin: plugin.into(),
            anchor: parse_anchor(anchor).unwrap(),
            anchor_text: anchor.into(),
            order,
            prose: prose.into(),
            authored_prose: prose.into(),
            authored_at: 0,
        }
    }

    const STAGE: &str = "---\nslug: s\n---\n\n## Steps\n\n### Step 1: One\n\nDo one.\n\n### Step 2-4: More\n\nDo more.\n\n## Sensors\n\nNone.\n\n## Learn\n\nx\n";

    #[test]
    fn blocks_of_one_anchor_group_in_order_whatever_the_input_order() {
        let a = fragment("beta", "after-step:1", 100, "B");
        let b = fragment("alpha", "after-step:1", 100, "A");
        let c = fragment("alpha", "after-step:1", 50, "C");
        let one = splice_fragments(STAGE, &[a.clone(), b.clone(), c.clone()]).unwrap();
        let other = splice_fragments(STAGE, &[c.clone(), b.clone(), a.clone()]).unwrap();
        assert_eq!(one.text, other.text);
        assert_eq!(&one.text[one.prose[0].clone()], "B");
        assert_eq!(&one.text[one.prose[2].clone()], "C");
        let one = one.text;
        let expected = format!(
            "Do one.\n\n\n{}\n\n{}\n\n{}\n### Step 2-4",
            c.block(),
            b.block(),
            a.block()
        );
        assert!(one.contains(&expected), "{one}");
    }

    #[test]
    fn each_anchor_finds_its_place() {
        let text = splice_fragments(
            STAGE,
            &[
                fragment("p", "after-step:3", 1, "range"),
                fragment("p", "before-step:1", 2, "before"),
                fragment("p", "end-of-steps", 3, "end"),
                fragment("p", "in:Sensors", 4, "sensors"),
            ],
        )
        .unwrap()
        .text;
        let at = |needle: &str| text.find(needle).unwrap();
        assert!(at("before\n") < at("### Step 1"));
        assert!(at("range\n") > at("Do more.") && at("range\n") < at("## Sensors"));
        assert!(at("end\n") > at("range\n") && at("end\n") < at("## Sensors"));
        assert!(at("sensors\n") > at("None.") && at("sensors\n") < at("## Learn"));
        let missing = splice_fragments(STAGE, &[fragment("p", "after-step:9", 1, "x")]);
        assert!(missing.is_err());
        let missing = splice_fragments(STAGE, &[fragment("p", "in:Nowhere", 1, "x")]);
        assert!(missing.is_err());
    }

    #[test]
    fn a_step_heading_needs_a_word_boundary() {
        assert_eq!(step_heading_range("### Step 9: x"), Some((9, 9)));
        assert_eq!(step_heading_range("### Step 9a (p)"), None);
        assert_eq!(step_heading_range("### Step 4-8: x"), Some((4, 8)));
        assert_eq!(step_heading_range("### Step 4-8a"), Some((4, 4)));
        assert_eq!(step_heading_range("### Step 10"), Some((10, 10)));
        assert_eq!(step_heading_range("#### Step 1"), None);
    }
}
