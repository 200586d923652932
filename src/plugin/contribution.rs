//! A contribution: a file `contributions/<phase>/<slug>.md` that adds to an existing stage.
//!
//! ```yaml
//! target: build-and-test
//! plugin: test-pro
//! adds:
//!   produces: [test-pro-regression-suite]
//!   consumes:
//!     - artifact: test-pro-testability-requirements
//!       required: false
//!   sensors: [coverage-threshold]
//!   required_sections: ["Branch Coverage"]
//! fragments:
//!   - anchor: after-step:9
//!     order: 100
//! ```
//!
//! followed by one `## fragment: <anchor>` block of prose per `fragments` entry (paired by anchor,
//! first entry with first block; a `## fragment:` line inside a fenced code block is prose).
//! The frontmatter is read with the compile's YAML reader, strictly: an unknown key, a value of
//! the wrong shape, a fragment without prose or prose without a fragment is refused.

use std::collections::BTreeMap;
use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::syntax::document::scalar_string;
use crate::compile::syntax::frontmatter;
use crate::compile::syntax::yaml::{self, Node};
use crate::leaves::diagnostics::{Code, Diagnostic};
use crate::plugin::Problem;
use crate::plugin::splice::{Fragment, parse_anchor};

/// The frontmatter keys a contribution may carry.
const KNOWN_KEYS: [&str; 4] = ["target", "plugin", "adds", "fragments"];
/// The `adds` surfaces that are merged.
const MERGED_ADDS: [&str; 5] = [
    "produces",
    "consumes",
    "sensors",
    "scopes",
    "required_sections",
];
/// `adds` surfaces a contribution may declare that are not merged yet (reported, not refused).
const DEFERRED_ADDS: [&str; 1] = ["requires_stage"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumeEntry {
    pub artifact: String,
    pub required: bool,
    pub conditional_on: Option<String>,
}

/// What a contribution adds to its target's frontmatter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Adds {
    pub produces: Vec<String>,
    pub sensors: Vec<String>,
    pub scopes: Vec<String>,
    pub consumes: Vec<ConsumeEntry>,
    pub required_sections: Vec<String>,
    /// Each merged field's entry (key through value) and its value, as spans of the
    /// contribution's text.
    pub spans: BTreeMap<String, (Range<usize>, Range<usize>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contribution {
    pub plugin: String,
    /// The file in the plugin's tree.
    pub source: Utf8PathBuf,
    pub target: String,
    pub adds: Adds,
    pub fragments: Vec<Fragment>,
    /// What it declares that is not composed (reported as warnings).
    pub notes: Vec<Problem>,
    /// The text it was read from (normalised): the text its problems' spans index.
    pub text: String,
}

/// The text as the reference composer reads a contribution: `\r\n` as `\n`, no byte-order mark,
/// no leading blank lines.
pub fn normalised_text(raw: &str) -> String {
    let text = raw.replace("\r\n", "\n");
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    text.trim_start_matches('\n').to_owned()
}

/// Read one contribution of `plugin` from `text` (already normalised), with `{{HARNESS_DIR}}`
/// in its prose replaced by `harness_dir`.
pub fn read_contribution(
    plugin: &str,
    source: &Utf8Path,
    text: &str,
    harness_dir: &str,
) -> Result<Contribution, Vec<Problem>> {
    let reader = Reader {
        plugin,
        source,
        text,
        problems: Vec::new(),
    };
    reader.read(harness_dir)
}

struct Reader<'a> {
    plugin: &'a str,
    source: &'a Utf8Path,
    text: &'a str,
    problems: Vec<Problem>,
}

impl Reader<'_> {
    fn refuse(
        &mut self,
        code: Code,
        message: String,
        span: Option<std::ops::Range<usize>>,
        help: &str,
    ) {
        let mut problem = Problem::new(message.clone())
            .of_plugin_at(self.plugin, self.source)
            .with_help(help);
        if let Some(span) = span {
            let diagnostic = Diagnostic::error(code, message)
                .in_file(self.source)
                .at(span)
                .with_help(help);
            problem = problem.with_located(diagnostic, self.text.to_owned());
        }
        self.problems.push(problem);
    }

    /// [`Self::refuse`] a value of the wrong shape.
    fn invalid(&mut self, message: String, span: Option<Range<usize>>, help: &str) {
        self.refuse(Code::InvalidFieldValue, message, span, help);
    }

    fn read(mut self, harness_dir: &str) -> Result<Contribution, Vec<Problem>> {
        let Ok(fm) = frontmatter::split(self.text) else {
            self.refuse(
                Code::MissingFrontmatter,
                "the contribution has no frontmatter (---…---) naming its `target:`".to_owned(),
                None,
                "start the file with `---`, the `target:` and `plugin:` lines, and a closing `---`",
            );
            return Err(self.problems);
        };
        let (root, yaml_problems) = yaml::parse_document(self.text, fm.yaml.clone());
        if let Some(problem) = yaml_problems.first() {
            self.refuse(
                Code::YamlSyntax,
                problem.message.clone(),
                Some(problem.span.clone()),
                "fix the YAML of the frontmatter",
            );
            return Err(self.problems);
        }
        let Some(entries) = root.as_ref().and_then(Node::as_mapping) else {
            self.refuse(
                Code::YamlSyntax,
                "the frontmatter must be a mapping of `key: value` lines".to_owned(),
                Some(fm.yaml.clone()),
                "write `target:`, `plugin:`, `adds:` and `fragments:` as top-level keys",
            );
            return Err(self.problems);
        };
        let entries = entries.to_vec();
        let mut notes = Vec::new();
        for entry in &entries {
            let key = entry.key.as_scalar().unwrap_or_default();
            if key == "bundle" {
                self.refuse(
                    Code::RenamedStageKey,
                    "`bundle:` was renamed; write `plugin:` for ownership".to_owned(),
                    Some(entry.key.span.clone()),
                    "rename `bundle:` to `plugin:`",
                );
            } else if !KNOWN_KEYS.contains(&key) {
                self.invalid(
                    format!("unknown key `{key}` in a contribution"),
                    Some(entry.key.span.clone()),
                    "a contribution takes `target`, `plugin`, `adds` and `fragments`",
                );
            }
        }
        let get = |key: &str| {
            entries
                .iter()
                .find(|entry| entry.key.as_scalar() == Some(key))
        };
        let target = if let Some(entry) = get("target") {
            match scalar_string(&entry.value) {
                Some(target) if crate::compile::syntax::stage::is_kebab_case(target) => {
                    target.to_owned()
                }
                _ => {
                    self.invalid(
                        "`target` must be the slug of an existing stage".to_owned(),
                        Some(entry.value.span.clone()),
                        "write the target stage's slug, e.g. `target: build-and-test`",
                    );
                    String::new()
                }
            }
        } else {
            self.refuse(
                Code::MissingRequiredField,
                "the contribution has no `target:`".to_owned(),
                Some(fm.yaml.start.saturating_sub(4)..fm.yaml.start.saturating_sub(1)),
                "add `target: <slug of the stage it adds to>`",
            );
            String::new()
        };
        match get("plugin").map(|entry| (scalar_string(&entry.value), entry.value.span.clone())) {
            Some((Some(declared), _)) if declared == self.plugin => {}
            Some((declared, span)) => self.refuse(
                Code::InvalidPluginField,
                format!(
                    "the contribution declares plugin \"{}\", but it ships in plugin \"{}\"",
                    declared.unwrap_or_default(),
                    self.plugin
                ),
                Some(span),
                "owned plugin content must name the plugin that ships it",
            ),
            None => self.refuse(
                Code::InvalidPluginField,
                format!(
                    "the contribution declares no plugin identity (plugin \"{}\" ships it)",
                    self.plugin
                ),
                None,
                "add `plugin: <the plugin's name>` to the frontmatter",
            ),
        }
        let adds = match get("adds") {
            Some(entry) if !entry.value.is_null() => self.read_adds(&entry.value, &mut notes),
            _ => Adds::default(),
        };
        let declared_fragments = match get("fragments") {
            Some(entry) if !entry.value.is_null() => self.read_fragment_entries(&entry.value),
            _ => Vec::new(),
        };
        let fragments = self.pair_prose(&declared_fragments, fm.body_start, harness_dir);
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        Ok(Contribution {
            plugin: self.plugin.to_owned(),
            source: self.source.to_owned(),
            target,
            adds,
            fragments,
            notes,
            text: self.text.to_owned(),
        })
    }

    fn read_adds(&mut self, value: &Node, notes: &mut Vec<Problem>) -> Adds {
        let mut adds = Adds::default();
        let Some(entries) = value.as_mapping() else {
            self.invalid(
                format!("`adds` must be a mapping, got {}", value.type_name()),
                Some(value.span.clone()),
                "write `adds:` with `produces:`, `consumes:`, `sensors:`, `scopes:` or `required_sections:` under it",
            );
            return adds;
        };
        for entry in entries {
            let key = entry.key.as_scalar().unwrap_or_default();
            if MERGED_ADDS.contains(&key) {
                let spans = (
                    entry.key.span.start..entry.value.span.end,
                    entry.value.span.clone(),
                );
                adds.spans.insert(key.to_owned(), spans);
            }
            match key {
                "produces" => adds.produces = self.names(key, &entry.value),
                "sensors" => adds.sensors = self.names(key, &entry.value),
                "scopes" => adds.scopes = self.names(key, &entry.value),
                "required_sections" => adds.required_sections = self.sections(&entry.value),
                "consumes" => adds.consumes = self.consumes(&entry.value),
                deferred if DEFERRED_ADDS.contains(&deferred) => notes.push(
                    Problem::warning(format!(
                        "adds.{deferred} is not merged yet (only {}); it has no effect",
                        MERGED_ADDS.join(", ")
                    ))
                    .of_plugin_at(self.plugin, self.source)
                    .at_key_in(self.text, &["adds", deferred]),
                ),
                other => self.invalid(
                    format!("unknown `adds.{other}`"),
                    Some(entry.key.span.clone()),
                    "`adds` takes produces, consumes, sensors, scopes and required_sections",
                ),
            }
        }
        adds
    }

    fn sequence<'n>(&mut self, key: &str, value: &'n Node) -> &'n [Node] {
        if value.is_null() {
            return &[];
        }
        if let Some(items) = value.as_sequence() {
            return items;
        }
        self.invalid(
            format!("`{key}` must be a list, got {}", value.type_name()),
            Some(value.span.clone()),
            "write one `- value` line per entry",
        );
        &[]
    }

    /// Artifact, sensor and scope names: kebab-ish (`[A-Za-z0-9_-]+`, what the reference merges).
    fn names(&mut self, key: &str, value: &Node) -> Vec<String> {
        let mut names = Vec::new();
        for item in self.sequence(key, value) {
            match scalar_string(item) {
                Some(name) if is_plain_name(name) => names.push(name.to_owned()),
                _ => self.invalid(
                    format!("`adds.{key}` entries must be names (letters, digits, `-` and `_`)"),
                    Some(item.span.clone()),
                    "write one name per `- ` line",
                ),
            }
        }
        names
    }

    fn sections(&mut self, value: &Node) -> Vec<String> {
        let mut sections = Vec::new();
        for item in self.sequence("required_sections", value) {
            match scalar_string(item) {
                Some(section) if !section.trim().is_empty() => {
                    sections.push(section.trim().to_owned());
                }
                _ => self.invalid(
                    "`adds.required_sections` entries must be non-empty section titles".to_owned(),
                    Some(item.span.clone()),
                    "write the H2 title, e.g. `- \"Branch Coverage\"`",
                ),
            }
        }
        sections
    }

    fn consumes(&mut self, value: &Node) -> Vec<ConsumeEntry> {
        let mut consumes = Vec::new();
        for item in self.sequence("consumes", value) {
            let artifact = item.get("artifact").and_then(scalar_string);
            let Some(artifact) = artifact.filter(|name| is_plain_name(name)) else {
                self.invalid(
                    "each `adds.consumes` entry needs `artifact: <name>`".to_owned(),
                    Some(item.span.clone()),
                    "write `- artifact: <name>` with `required: true|false`",
                );
                continue;
            };
            let required = item.get("required").is_none_or(|node| {
                node.as_bool().unwrap_or_else(|| {
                    self.invalid(
                        format!(
                            "`required` of consumed artifact \"{artifact}\" must be true or false"
                        ),
                        Some(node.span.clone()),
                        "write `required: true` or `required: false`",
                    );
                    true
                })
            });
            let conditional_on = item.get("conditional_on").and_then(|node| match scalar_string(node) {
                Some(name) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                    Some(name.to_owned())
                }
                _ => {
                    self.invalid(
                        format!("`conditional_on` of consumed artifact \"{artifact}\" must be one word"),
                        Some(node.span.clone()),
                        "write the condition's name, e.g. `conditional_on: brownfield`",
                    );
                    None
                }
            });
            for entry in item.as_mapping().unwrap_or_default() {
                let key = entry.key.as_scalar().unwrap_or_default();
                if !["artifact", "required", "conditional_on"].contains(&key) {
                    self.invalid(
                        format!("unknown key `{key}` in an `adds.consumes` entry"),
                        Some(entry.key.span.clone()),
                        "a consumed artifact takes `artifact`, `required` and `conditional_on`",
                    );
                }
            }
            if consumes
                .iter()
                .any(|entry: &ConsumeEntry| entry.artifact == artifact)
            {
                self.invalid(
                    format!("consumed artifact \"{artifact}\" is listed twice"),
                    Some(item.span.clone()),
                    "list each artifact once",
                );
                continue;
            }
            consumes.push(ConsumeEntry {
                artifact: artifact.to_owned(),
                required,
                conditional_on,
            });
        }
        consumes
    }

    fn read_fragment_entries(&mut self, value: &Node) -> Vec<(String, u64, Range<usize>)> {
        let mut declared = Vec::new();
        for item in self.sequence("fragments", value) {
            let anchor = item.get("anchor").and_then(scalar_string);
            let order = item
                .get("order")
                .and_then(scalar_string)
                .and_then(|order| order.parse::<u64>().ok());
            match (anchor, order) {
                (Some(anchor), Some(order)) => match parse_anchor(anchor) {
                    Ok(_) => declared.push((anchor.to_owned(), order, item.span.clone())),
                    Err(reason) => self.invalid(
                        reason,
                        item.get("anchor").map(|node| node.span.clone()),
                        "use after-step:<n>, before-step:<n>, end-of-steps or in:<Section>",
                    ),
                },
                _ => self.invalid(
                    "each `fragments` entry needs `anchor:` and a whole-number `order:`".to_owned(),
                    Some(item.span.clone()),
                    "write `- anchor: after-step:9` and `order: 100` under it",
                ),
            }
        }
        let mut seen: Vec<(&str, u64)> = Vec::new();
        for (anchor, order, span) in &declared {
            if seen.contains(&(anchor.as_str(), *order)) {
                self.problems.push(
                    Problem::new(format!(
                        "two fragments at anchor \"{anchor}\" with order {order}: their place is ambiguous"
                    ))
                    .of_plugin_at(self.plugin, self.source)
                    .with_help("give each fragment of one anchor its own order")
                    .with_located(
                        Diagnostic::error(Code::InvalidFieldValue, format!("fragment {anchor} order {order} declared twice"))
                            .in_file(self.source)
                            .at(span.clone()),
                        self.text.to_owned(),
                    ),
                );
            }
            seen.push((anchor.as_str(), *order));
        }
        declared
    }

    fn pair_prose(
        &mut self,
        declared: &[(String, u64, Range<usize>)],
        body_start: usize,
        harness_dir: &str,
    ) -> Vec<Fragment> {
        let mut blocks = prose_blocks(&self.text[body_start..]);
        let mut fragments = Vec::new();
        for (anchor, order, span) in declared {
            let (prose_at, authored_prose) = blocks
                .iter_mut()
                .find(|(block_anchor, queue)| block_anchor == anchor && !queue.is_empty())
                .map(|(_, queue)| queue.remove(0))
                .unwrap_or_default();
            let prose = authored_prose.replace("{{HARNESS_DIR}}", harness_dir);
            if prose.is_empty() {
                self.invalid(
                    format!(
                        "fragment \"{anchor}\" order {order} has no matching \"## fragment: {anchor}\" prose block"
                    ),
                    Some(span.clone()),
                    "write the prose under a `## fragment: <anchor>` heading in the body, one block per entry",
                );
                continue;
            }
            let Ok(parsed) = parse_anchor(anchor) else {
                continue;
            };
            fragments.push(Fragment {
                plugin: self.plugin.to_owned(),
                anchor: parsed,
                anchor_text: anchor.clone(),
                order: *order,
                prose,
                authored_prose,
                authored_at: body_start + prose_at,
            });
        }
        for (anchor, queue) in blocks {
            if queue.iter().any(|(_, prose)| !prose.is_empty()) {
                self.problems.push(
                    Problem::new(format!(
                        "a \"## fragment: {anchor}\" prose block has no matching `fragments` entry"
                    ))
                    .of_plugin_at(self.plugin, self.source)
                    .at_line_in(self.text, &format!("## fragment: {anchor}"))
                    .with_help("add `- anchor: <anchor>` with an `order:` to `fragments`, or remove the block"),
                );
            }
        }
        fragments
    }
}

/// The prose blocks of a body, by anchor in order of first appearance: the lines after each
/// `## fragment: <anchor>` heading (outside fenced code) up to the next one, trimmed as
/// JavaScript trims, each with the offset in `body` where its trimmed text starts.
fn prose_blocks(body: &str) -> Vec<(String, Vec<(usize, String)>)> {
    type Blocks = Vec<(String, Vec<(usize, String)>)>;
    let mut blocks: Blocks = Vec::new();
    // The block being read: its anchor and the span of its lines in `body`.
    let mut current: Option<(String, Option<Range<usize>>)> = None;
    let mut fence: Option<(char, usize)> = None;
    let flush = |current: &mut Option<(String, Option<Range<usize>>)>, blocks: &mut Blocks| {
        if let Some((anchor, lines)) = current.take() {
            let lines = lines.unwrap_or_default();
            let text = &body[lines.clone()];
            let at = lines.start + text.len() - crate::leaves::js_text::js_trim_start(text).len();
            let prose = (at, crate::leaves::js_text::js_trim(text).to_owned());
            match blocks.iter_mut().find(|(existing, _)| *existing == anchor) {
                Some((_, queue)) => queue.push(prose),
                None => blocks.push((anchor, vec![prose])),
            }
        }
    };
    let mut line_start = 0;
    for line in body.split('\n') {
        let line_span = line_start..line_start + line.len();
        line_start = line_span.end + 1;
        if let Some((character, length, info)) = fence_line(line) {
            match fence {
                None => fence = Some((character, length)),
                Some((open, open_length))
                    if character == open && length >= open_length && info.trim().is_empty() =>
                {
                    fence = None;
                }
                Some(_) => {}
            }
        }
        if fence.is_none()
            && let Some(anchor) = fragment_heading(line)
        {
            flush(&mut current, &mut blocks);
            current = Some((anchor.to_owned(), None));
            continue;
        }
        if let Some((_, lines)) = current.as_mut() {
            let start = lines.as_ref().map_or(line_span.start, |lines| lines.start);
            *lines = Some(start..line_span.end);
        }
    }
    flush(&mut current, &mut blocks);
    blocks
}

/// A fence line: optional indentation, three or more backticks or tildes, an info string.
fn fence_line(line: &str) -> Option<(char, usize, &str)> {
    let rest = line.trim_start_matches(|c: char| c.is_whitespace());
    let character = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = rest.chars().take_while(|c| *c == character).count();
    (length >= 3).then(|| (character, length, &rest[length..]))
}

/// `## fragment: <anchor>` (one word after the colon, spaces around it allowed).
fn fragment_heading(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("## fragment:")?;
    let anchor = rest.trim();
    (!anchor.is_empty() && !anchor.contains(char::is_whitespace)).then_some(anchor)
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRIBUTION: &str = "---\ntarget: build-and-test\nplugin: p\nadds:\n  produces:\n    - p-a\n  consumes:\n    - artifact: p-b\n      required: false\n  required_sections:\n    - \"Branch Coverage\"\n  requires_stage:\n    - x\nfragments:\n  - anchor: after-step:9\n    order: 100\n  - anchor: after-step:9\n    order: 110\n---\n\n## fragment: after-step:9\n\nFirst {{HARNESS_DIR}}.\n\n```md\n## fragment: after-step:9\n```\n\n## fragment: after-step:9\n\nSecond.\n";

    fn read(text: &str) -> Result<Contribution, Vec<Problem>> {
        read_contribution(
            "p",
            Utf8Path::new("/p/contributions/construction/x.md"),
            text,
            ".claude",
        )
    }

    #[test]
    fn a_contribution_is_read_with_its_prose_paired_by_anchor() {
        let contribution = read(CONTRIBUTION).unwrap();
        assert_eq!(contribution.target, "build-and-test");
        assert_eq!(contribution.adds.produces, ["p-a"]);
        assert_eq!(
            contribution.adds.consumes,
            [ConsumeEntry {
                artifact: "p-b".into(),
                required: false,
                conditional_on: None
            }]
        );
        assert_eq!(contribution.adds.required_sections, ["Branch Coverage"]);
        assert_eq!(contribution.notes.len(), 1, "requires_stage is reported");
        assert_eq!(contribution.fragments.len(), 2);
        assert_eq!(
            contribution.fragments[0].prose,
            "First .claude.\n\n```md\n## fragment: after-step:9\n```"
        );
        assert_eq!(contribution.fragments[1].prose, "Second.");
    }

    #[test]
    fn bad_contributions_are_refused() {
        for (from, to) in [
            ("plugin: p\n", "plugin: q\n"),
            ("plugin: p\n", ""),
            ("target: build-and-test\n", ""),
            (
                "target: build-and-test\n",
                "target: build-and-test\nbundle: p\n",
            ),
            ("    - p-a\n", "    - \"p a\"\n"),
            ("      required: false\n", "      required: maybe\n"),
            ("    order: 110\n", "    order: 100\n"),
            ("    order: 110\n", "    order: soon\n"),
            ("## fragment: after-step:9\n\nSecond.\n", ""),
            ("adds:\n", "extra: 1\nadds:\n"),
            ("  produces:\n", "  removes:\n"),
        ] {
            let text = CONTRIBUTION.replacen(from, to, 1);
            assert_ne!(text, CONTRIBUTION);
            assert!(read(&text).is_err(), "accepted with {to:?}");
        }
        let leftover = format!("{CONTRIBUTION}\n## fragment: in:Sensors\n\nOrphan.\n");
        assert!(read(&leftover).is_err());
    }

    #[test]
    fn the_text_is_normalised_as_the_reference_reads_it() {
        assert_eq!(
            normalised_text("\u{feff}\n\n---\r\na: 1\r\n---\r\n"),
            "---\na: 1\n---\n"
        );
    }
}
