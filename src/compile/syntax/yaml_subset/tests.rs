//! The subset reader against the general parser: whenever the subset takes a document, both
//! must give the same events with the same spans, and `parse_document` must give the same tree
//! and problems whichever path it takes.

use std::ops::Range;

use camino::Utf8PathBuf;
use proptest::prelude::*;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, StructureStyle};

use super::{EventSink, read_block_subset};
use crate::compile::syntax::frontmatter;
use crate::compile::syntax::yaml::{Style, parse_document, parse_document_with_general_parser};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Recorded {
    Scalar(String, Style, Range<usize>),
    StartSequence(bool, usize),
    StartMapping(bool, usize),
    End(usize),
}

#[derive(Default)]
struct Recorder(Vec<Recorded>);

impl EventSink for Recorder {
    fn scalar(&mut self, text: &str, style: Style, span: Range<usize>) {
        self.0.push(Recorded::Scalar(text.to_owned(), style, span));
    }
    fn start_sequence(&mut self, flow: bool, start: usize) {
        self.0.push(Recorded::StartSequence(flow, start));
    }
    fn start_mapping(&mut self, flow: bool, start: usize) {
        self.0.push(Recorded::StartMapping(flow, start));
    }
    fn end_collection(&mut self, end: usize) {
        self.0.push(Recorded::End(end));
    }
}

/// The general parser's events in the recorder's form; `None` when it refuses the text or
/// reports anything the subset never produces (anchors, aliases, tags, block scalars).
fn general_events(text: &str) -> Option<Vec<Recorded>> {
    let mut events = Vec::new();
    for result in Parser::new_from_str(text) {
        let (event, span) = result.ok()?;
        let start = span.start.byte_offset()?;
        let end = span.end.byte_offset()?;
        events.push(match event {
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
                    ScalarStyle::Literal | ScalarStyle::Folded => return None,
                };
                Recorded::Scalar(value.into_owned(), style, start..end)
            }
            Event::SequenceStart(style, _, _) => {
                Recorded::StartSequence(style == StructureStyle::Flow, start)
            }
            Event::MappingStart(style, _, _) => {
                Recorded::StartMapping(style == StructureStyle::Flow, start)
            }
            Event::SequenceEnd | Event::MappingEnd => Recorded::End(end),
            Event::Alias(_) | Event::UnresolvedAlias(_) | Event::Anchor(..) => return None,
            _ => continue,
        });
    }
    Some(events)
}

/// Check one document (the whole text is YAML); returns whether the subset took it.
fn check_yaml(text: &str) -> bool {
    let mut recorder = Recorder::default();
    let taken = read_block_subset(text, &mut recorder).is_some();
    if taken {
        assert_eq!(
            Some(&recorder.0),
            general_events(text).as_ref(),
            "the subset and the general parser disagree on {text:?}"
        );
    }
    assert_eq!(
        parse_document(text, 0..text.len()),
        parse_document_with_general_parser(text, 0..text.len()),
        "parse_document differs from the general parser on {text:?}"
    );
    taken
}

/// Check the frontmatter of a Markdown file; `None` when it has none.
fn check_markdown(text: &str) -> Option<bool> {
    let fm = frontmatter::split(text).ok()?;
    let taken = check_yaml(&text[fm.yaml.clone()]);
    assert_eq!(
        parse_document(text, fm.yaml.clone()),
        parse_document_with_general_parser(text, fm.yaml.clone()),
        "absolute spans differ on {text:?}"
    );
    Some(taken)
}

#[test]
fn documents_from_the_probes_match_the_general_parser() {
    let taken = [
        "a: x\nb:\nc: [p, q]\nd:\n  - y\n  - artifact: z\n    required: true\ne: \"qq\"\nf: \ng: last  \n",
        "\n\na: x\nd:\n  - y\n\n  - z\n\nk:\n  - q\n\n\nm:\n  n: 1\n\n  o: [ ]\nr: []\ns:\n- t\n- u\nv:  w  x  \n\n\n",
        "consumes:\n  - artifact: a\n    required: true\n  - artifact: b\n    conditional_on: x\nafter: 1\nq: 'single'\nw:   \"dq\"  \nm:\n  k:\n    - deep\nlast:\n- z\n",
        "k:\n- artifact: a\n  required: true\n- artifact: b\nq:\n  - a: 1\n  - b\nr: [a b, \"c d\", x]\nt: \"a#b\"\n",
        "id: s1\nmatches: \"**/*.md\"\ninput_schema:\n  output_path: string\n  stage_slug: string\ntimeout_seconds: 600\n",
        "a: http://x.y/z\nb: C sharp\nc: é ü\nd: ~\ne: null\nf: [a]\ng: x [y] {z}, w\n",
        "a:\n  b:\n    c:\n      - d\n      - e: f\n        g: h\ni: j\n",
        "a: x\n",
        "a: [x,y,z]\nb: ['s', \"d\"]\n",
        "a:\n- b:\n  - c\n",
        "a:\n  - b:\n    - c\n",
    ];
    for text in taken {
        assert!(check_yaml(text), "the subset should take {text:?}");
    }
    let refused = [
        "",
        "  a: x\n",
        "# comment\na: x\n",
        "a: x # comment\n",
        "a: x\n  continued\n",
        "a: |\n  block\n",
        "a: >\n  folded\n",
        "a: &anchor x\nb: *anchor\n",
        "a: !tag x\n",
        "a: \"esc\\\"aped\"\n",
        "a: 'it''s'\n",
        "a: {}\n",
        "a: {b: c}\n",
        "a: [b, ]\n",
        "a: [b: c]\n",
        "a: [[b]]\n",
        "a: [b,\n  c]\n",
        "a:\tx\n",
        "a: x\r\n",
        "a: b: c\n",
        "a: -5\n",
        "- a\n",
        "a:\n  - - b\n",
        "a:\n  -\n",
        "a:\n  b\n",
        "\"a\": x\n",
        "a : x\n",
        "---\na: x\n",
        "a: x\n...\n",
        "%YAML 1.2\n",
        "a: x\u{2028}y\n",
        "a: x\u{85}y\n",
        "a:\n  - x\n b: y\n",
        "a:\n  - x\n  b: y\n",
        "a: x\n- y\n",
    ];
    for text in refused {
        assert!(!check_yaml(text), "the subset should refuse {text:?}");
    }
}

/// The general parser's resource limits: an implicit key of more than 1024 characters and
/// nesting past 255 collections are refused there, so the subset hands such documents over
/// (found by the compile fuzz test: a key made 10,000 bytes long).
#[test]
fn documents_past_the_general_parsers_limits_go_to_the_general_parser() {
    for (key, taken) in [
        ("k".repeat(1024), true),
        ("k".repeat(1025), false),
        ("é".repeat(512), true),
        ("é".repeat(513), false),
        ("é".repeat(1025), false),
    ] {
        assert_eq!(
            check_yaml(&format!(
                "a: x
{key}: y
"
            )),
            taken,
            "{key}"
        );
        assert_eq!(
            check_yaml(&format!(
                "a:
  - {key}: y
"
            )),
            taken,
            "{key}"
        );
    }
    let nested = |depth: usize| {
        let mut text = String::new();
        for level in 0..depth {
            text.push_str(&" ".repeat(level));
            text.push_str("k:\n");
        }
        text.push_str(&" ".repeat(depth));
        text.push_str("k: v\n");
        text
    };
    assert!(check_yaml(&nested(20)));
    for depth in [100, 300] {
        assert!(!check_yaml(&nested(depth)), "{depth}");
    }
}

/// Every file of the default framework, both reference installs and generated projects: the
/// subset agrees wherever it reads, and it reads every stage and sensor file of the default
/// framework and of the generated projects (where the speed is needed).
#[test]
fn every_known_frontmatter_matches_and_stages_and_sensors_take_the_subset() {
    let mut needed_fast: Vec<(String, String)> = Vec::new();
    for file in crate::compile::framework::DEFAULT_FRAMEWORK.iter() {
        let path = file.path.to_owned();
        let is_stage_or_sensor = path.contains("/stages/") || path.contains("/sensors/");
        if is_stage_or_sensor {
            needed_fast.push((path, file.contents.to_owned()));
        } else {
            check_markdown(file.contents);
        }
    }
    for seed in [1, 2, 3] {
        let project = crate::synthetic::SyntheticProject::new(40, 8).with_seed(seed);
        for (path, text) in project.files() {
            needed_fast.push((path.to_string(), text));
        }
    }
    for (path, text) in &needed_fast {
        let markdown = camino::Utf8Path::new(path).extension() == Some("md");
        if markdown && (path.contains("/stages/") || path.contains("/sensors/")) {
            assert_eq!(
                check_markdown(text),
                Some(true),
                "{path} does not take the subset"
            );
        } else {
            check_markdown(text);
        }
    }
    let fixtures = Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut checked = 0;
    for path in markdown_files_under(&fixtures) {
        let text = std::fs::read_to_string(&path).unwrap();
        if check_markdown(&text).is_some() {
            checked += 1;
        }
    }
    assert!(
        checked > 100,
        "only {checked} fixture frontmatters were checked"
    );
}

fn markdown_files_under(folder: &camino::Utf8Path) -> Vec<Utf8PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = folder.read_dir_utf8() else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path().to_owned();
        if path.is_dir() {
            files.extend(markdown_files_under(&path));
        } else if path.extension() == Some("md") {
            files.push(path);
        }
    }
    files
}

// -------------------------------------------------------------------------------------------
// Generated documents
// -------------------------------------------------------------------------------------------

/// Scalars, including many the subset must refuse or treat with care.
fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9_-]{0,6}( [a-z0-9.]{1,4}){0,2}",
        1 => Just("~".to_owned()),
        1 => Just("true".to_owned()),
        1 => Just("\"dq\"".to_owned()),
        1 => Just("'sq'".to_owned()),
        1 => Just("\"a#b, [c]\"".to_owned()),
        1 => Just("[x, y]".to_owned()),
        1 => Just("[]".to_owned()),
        1 => Just("[ x ,y ]".to_owned()),
        1 => Just("[\"q\", 'r']".to_owned()),
        1 => prop::sample::select(vec![
            "-5", "a: b", "a #b", "C#", "\"a\\\"b\"", "'it''s'", "[a, ]", "{}", "&a x", "*a",
            "!t x", "|", ">", "é ü", "x\t", "x  ", "http://a:b", "a:", "- x", "?x", "%x", "@x",
            "`x", "[a", "a]", "\"open", ":x", ",x", "x,", "[a: b]", "[[a]]", "[a, b] c", "'a' b",
            "\"\"", "''", "[\"\"]", "...x", "---", "x\u{2028}", "ü", "1.5", "0x1F",
        ])
        .prop_map(str::to_owned),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z][a-z_]{0,8}",
        1 => prop::sample::select(vec!["a b", "a:b", "-a", "\"q\"", "1", "é", "a#", "?a", "a "])
            .prop_map(str::to_owned),
    ]
}

/// One line of a loosely shaped document.
fn loose_line() -> impl Strategy<Value = String> {
    let indent = 0usize..6;
    prop_oneof![
        5 => (indent.clone(), key(), scalar()).prop_map(|(i, k, v)| format!("{}{k}: {v}", " ".repeat(i))),
        3 => (indent.clone(), key()).prop_map(|(i, k)| format!("{}{k}:", " ".repeat(i))),
        3 => (indent.clone(), scalar()).prop_map(|(i, v)| format!("{}- {v}", " ".repeat(i))),
        2 => (indent.clone(), key(), scalar()).prop_map(|(i, k, v)| format!("{}- {k}: {v}", " ".repeat(i))),
        1 => Just(String::new()),
        1 => indent.clone().prop_map(|i| " ".repeat(i)),
        1 => (indent, "#[ a-z]{0,5}").prop_map(|(i, c)| format!("{}{c}", " ".repeat(i))),
    ]
}

/// A well-formed value tree, to be rendered with a chosen layout.
#[derive(Debug, Clone)]
enum Tree {
    Scalar(String),
    Flow(Vec<String>),
    Sequence(Vec<Tree>),
    Mapping(Vec<(String, Tree)>),
    Null,
}

fn plain_word() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z][a-z0-9_./-]{0,8}( [a-z0-9]{1,3}){0,2}",
        1 => Just("\"quoted text\"".to_owned()),
        1 => Just("'single'".to_owned()),
        1 => Just("~".to_owned()),
        1 => Just("é".to_owned()),
    ]
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        4 => plain_word().prop_map(Tree::Scalar),
        1 => prop::collection::vec(plain_word(), 0..4).prop_map(Tree::Flow),
        1 => Just(Tree::Null),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(Tree::Sequence),
            prop::collection::vec(("[a-z]{1,6}", inner), 1..4).prop_map(Tree::Mapping),
        ]
    })
}

/// How a tree is laid out.
#[derive(Debug, Clone, Copy)]
struct Layout {
    step: usize,
    indentless: bool,
    blank_lines: bool,
    item_gap: usize,
}

fn layout() -> impl Strategy<Value = Layout> {
    (1usize..4, any::<bool>(), any::<bool>(), 1usize..3).prop_map(
        |(step, indentless, blank_lines, item_gap)| Layout {
            step,
            indentless,
            blank_lines,
            item_gap,
        },
    )
}

fn render_mapping(entries: &[(String, Tree)], indent: usize, layout: Layout, out: &mut String) {
    let mut first = true;
    for (key, value) in entries {
        if !first {
            out.push_str(&" ".repeat(indent));
        }
        first = false;
        out.push_str(key);
        out.push(':');
        render_value(value, indent, layout, out, true);
        if layout.blank_lines {
            out.push('\n');
        }
    }
}

/// The value after `key:` (or after `- ` when `after_key` is false).
fn render_value(value: &Tree, indent: usize, layout: Layout, out: &mut String, after_key: bool) {
    match value {
        Tree::Scalar(text) => {
            if after_key {
                out.push(' ');
            }
            out.push_str(text);
            out.push('\n');
        }
        Tree::Null => out.push('\n'),
        Tree::Flow(items) => {
            if after_key {
                out.push(' ');
            }
            out.push('[');
            out.push_str(&items.join(", "));
            out.push_str("]\n");
        }
        Tree::Sequence(items) => {
            if !after_key {
                // A sequence directly in a sequence item is outside the subset's layouts.
                out.push_str("[]\n");
                return;
            }
            out.push('\n');
            let item_indent = if layout.indentless {
                indent
            } else {
                indent + layout.step
            };
            for item in items {
                out.push_str(&" ".repeat(item_indent));
                out.push('-');
                out.push_str(&" ".repeat(layout.item_gap));
                match item {
                    Tree::Mapping(entries) => {
                        render_mapping(entries, item_indent + 1 + layout.item_gap, layout, out);
                    }
                    Tree::Null => out.push_str("~\n"),
                    other => render_value(other, item_indent, layout, out, false),
                }
            }
        }
        Tree::Mapping(entries) => {
            if after_key {
                out.push('\n');
                let nested = indent + layout.step;
                out.push_str(&" ".repeat(nested));
                render_mapping(entries, nested, layout, out);
            } else {
                render_mapping(entries, indent, layout, out);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn loose_documents_agree(lines in prop::collection::vec(loose_line(), 1..8)) {
        let text = lines.join("\n") + "\n";
        check_yaml(&text);
    }

    #[test]
    fn laid_out_trees_agree(
        entries in prop::collection::vec(("[a-z]{1,6}", tree()), 1..6),
        layout in layout(),
        leading in prop::sample::select(vec!["", "\n", "\n\n", "  \n"]),
        trailing in prop::sample::select(vec!["", "\n", "\n\n", "  \n"]),
    ) {
        let mut text = leading.to_owned();
        render_mapping(&entries, 0, layout, &mut text);
        text.push_str(trailing);
        check_yaml(&text);
    }
}

/// The generated layouts must mostly be ones the subset takes, or the agreement above would be
/// tested on refusals alone.
#[test]
fn most_laid_out_trees_take_the_subset() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (
        prop::collection::vec(("[a-z]{1,6}", tree()), 1..6),
        layout(),
    );
    let mut taken = 0;
    let total = 500;
    for _ in 0..total {
        let (entries, layout) = strategy.new_tree(&mut runner).unwrap().current();
        let mut text = String::new();
        render_mapping(&entries, 0, layout, &mut text);
        if check_yaml(&text) {
            taken += 1;
        }
    }
    assert!(taken * 10 > total * 6, "only {taken} of {total} taken");
}
