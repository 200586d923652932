//! Property-based: the manifests and stage files of a valid project, mutated (byte flips,
//! truncation, huge lines, deep nesting, NUL, invalid UTF-8, BOM, CRLF, tabs, long runs of one
//! character, very long keys and values), never make the compile panic; it ends in success or
//! compile errors, and a failing compile leaves the previous outputs byte for byte.
//! On every mutated frontmatter, the YAML subset reader (`syntax::yaml_subset`) and the general
//! parser give the same tree and the same problems.
//!
//! Most cases run in process through the library calls `aidlc compile` makes (including the
//! human rendering of every diagnostic); a smaller number run the real binary: `compile`, and
//! `engine sensor list`, which renders manifest diagnostics through the same renderer.
//! The seed is fixed so that a run is repeatable; `PROPTEST_RNG_SEED` and `PROPTEST_CASES`
//! explore further.

use std::cell::Cell;
use std::time::Instant;

use aidlc::compile;
use aidlc::compile::db::CompilerDatabase;
use aidlc::compile::discover::{self, Layout};
use aidlc::compile::syntax::frontmatter;
use aidlc::compile::syntax::yaml::{Style, parse_document, parse_document_with_general_parser};
use aidlc::compile::syntax::yaml_subset::{EventSink, read_block_subset};
use aidlc::compile::up_to_date::{self, CheckMode};
use aidlc::harness::Harness;
use aidlc::leaves::diagnostics::Diagnostic;
use aidlc::report::github::diagnostic_annotation;
use aidlc::report::human::render_diagnostic;
use aidlc::report::json::diagnostic_json_line;
use aidlc::report::source::SourceLookup;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use crate::support::{GRAPH, GRID, TestProject, manifest, stage};

/// Cases of a normal `cargo test` run: in process, and through the real binary.
const IN_PROCESS_CASES: u32 = 2_500;
const BINARY_CASES: u32 = 100;
/// The seed of a normal run (any fixed value; it only makes runs repeatable).
const SEED: u64 = 0x0a1d_1c10_f022_5eed;

const GATE_SENSOR: &str = ".claude/sensors/aidlc-doc-shape.md";
const WRITE_SENSOR: &str = ".claude/sensors/aidlc-demo-check.md";
const FIRST: &str = ".claude/aidlc-common/stages/inception/first-stage.md";
const SECOND: &str = ".claude/aidlc-common/stages/inception/second-stage.md";
const UNIT: &str = ".claude/aidlc-common/stages/construction/unit-stage.md";

/// The files the cases mutate, with their valid contents.
fn mutable_files() -> Vec<(&'static str, String)> {
    vec![
        (
            GATE_SENSOR,
            "---\nid: doc-shape\nkind: deterministic\ncommand: aidlc engine sensor-required-sections\ndefault_severity: blocking\nfire_on: gate\ndescription: Checks the shape of each document\ncategory: document-shape\nmatches: \"**/{aidlc-docs,intents,codekb}/**\"\ninput_schema:\n  output_path: string\n  stage_slug: string\ntimeout_seconds: 30\n---\n\n# doc-shape\n\nBody text.\n"
                .to_owned(),
        ),
        (WRITE_SENSOR, manifest("demo-check", "")),
        (
            FIRST,
            stage(
                "first-stage",
                "inception",
                "[]",
                "[doc-shape, demo-check]",
                "optional_produces: [first-stage-notes]\nreviewer: aidlc-demo-agent\nreviewer_max_iterations: 2\n",
            ),
        ),
        (
            SECOND,
            stage(
                "second-stage",
                "inception",
                "[first-stage]",
                "[doc-shape]",
                "",
            )
            .replace(
                "consumes: []",
                "consumes:\n  - artifact: first-stage-doc\n    required: true",
            ),
        ),
        (
            UNIT,
            stage(
                "unit-stage",
                "construction",
                "[second-stage]",
                "[doc-shape]",
                "for_each: unit-of-work\nworkspace_requires: true\n",
            )
            .replace("mode: inline", "mode: subagent"),
        ),
    ]
}

/// A project holding the valid files, compiled once.
fn compiled_project() -> TestProject {
    let project = TestProject::empty();
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    for (path, text) in mutable_files() {
        project.write(path, &text);
    }
    let run = project.compile();
    assert_eq!(run.status, 0, "the base project is valid: {}", run.stderr);
    assert!(
        !run.stderr.contains("warning"),
        "the base project is clean: {}",
        run.stderr
    );
    project
}

/// One change to a file's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit {
        at: Index,
        bit: u8,
    },
    Truncate {
        at: Index,
    },
    Insert {
        at: Index,
        piece: &'static [u8],
    },
    /// `count` copies of `fill` at one place (a huge line when the fill has no line break).
    Run {
        at: Index,
        fill: &'static str,
        count: usize,
    },
    /// `count` copies of `fill` just after the first `: ` of a line, pushing its value (and any
    /// diagnostic on it) far to the right.
    PadValue {
        line: Index,
        fill: &'static str,
        count: usize,
    },
    /// `depth` nested openers (and closers unless `unbalanced`) as the value of a new key.
    Nesting {
        depth: usize,
        open: &'static str,
        close: &'static str,
        unbalanced: bool,
    },
    LongKey {
        len: usize,
    },
    LongValue {
        key: &'static str,
        fill: &'static str,
        count: usize,
    },
    Crlf,
    Bom,
    TabIndent,
}

/// Short byte sequences that YAML, UTF-8 or a terminal treat specially.
const PIECES: [&[u8]; 30] = [
    b"\0",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    "\u{feff}".as_bytes(),
    b"\r\n",
    b"\r",
    b"\t",
    b"---\n",
    b" # c",
    b": ",
    b"\n- ",
    b"\"",
    b"'",
    b"&a ",
    b"*a",
    b"!!str ",
    b"{",
    b"[",
    b"}",
    b"]",
    "é".as_bytes(),
    "🎉".as_bytes(),
    "\u{202e}".as_bytes(),
    b"\x1b[31m",
    b"\n  ",
    b"? ",
    b"|\n",
    b"%YAML 1.2\n",
    b"<<: *a\n",
];

const FILLS: [&str; 9] = ["x", " ", "\t", "é", "🎉", "[", "-", "#", "a: "];
const KEYS: [&str; 8] = [
    "matches",
    "default_severity",
    "timeout_seconds",
    "description",
    "slug",
    "sensors",
    "produces",
    "condition",
];

/// Lengths of runs: a quarter of them reach past column 65,535 (where miette's formatter used
/// to panic); the rest stay shorter, which keeps the run fast.
fn long_count() -> impl Strategy<Value = usize> {
    prop_oneof![3 => 200_usize..20_000, 1 => 65_536_usize..100_000]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let piece = proptest::sample::select(PIECES.to_vec());
    let fill = proptest::sample::select(FILLS.to_vec());
    let key = proptest::sample::select(KEYS.to_vec());
    prop_oneof![
        3 => (any::<Index>(), 0_u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        4 => (any::<Index>(), piece).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        2 => (any::<Index>(), fill.clone(), long_count())
            .prop_map(|(at, fill, count)| Mutation::Run { at, fill, count }),
        3 => (any::<Index>(), fill.clone(), long_count())
            .prop_map(|(line, fill, count)| Mutation::PadValue { line, fill, count }),
        1 => (1_usize..3_000, prop_oneof![Just(("[", "]")), Just(("{a: ", "}")), Just(("- ", ""))], any::<bool>())
            .prop_map(|(depth, (open, close), unbalanced)| Mutation::Nesting { depth, open, close, unbalanced }),
        1 => long_count().prop_map(|len| Mutation::LongKey { len }),
        2 => (key, fill, long_count())
            .prop_map(|(key, fill, count)| Mutation::LongValue { key, fill, count }),
        1 => Just(Mutation::Crlf),
        1 => Just(Mutation::Bom),
        1 => Just(Mutation::TabIndent),
    ]
}

/// Which files a case mutates (by index into [`mutable_files`]) and how.
fn case() -> impl Strategy<Value = Vec<(usize, Vec<Mutation>)>> {
    proptest::collection::vec(
        (0_usize..5, proptest::collection::vec(mutation(), 1..=3)),
        1..=2,
    )
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    match mutation {
        Mutation::FlipBit { at, bit } => {
            if !bytes.is_empty() {
                let index = at.index(bytes.len());
                bytes[index] ^= 1 << bit;
            }
        }
        Mutation::Truncate { at } => bytes.truncate(at.index(bytes.len() + 1)),
        Mutation::Insert { at, piece } => {
            let index = at.index(bytes.len() + 1);
            bytes.splice(index..index, piece.iter().copied());
        }
        Mutation::Run { at, fill, count } => {
            let index = at.index(bytes.len() + 1);
            bytes.splice(index..index, fill.repeat(*count).into_bytes());
        }
        Mutation::PadValue { line, fill, count } => {
            let line_starts: Vec<usize> = std::iter::once(0)
                .chain(
                    bytes
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b == b'\n')
                        .map(|(i, _)| i + 1),
                )
                .collect();
            let start = line_starts[line.index(line_starts.len())];
            let end = bytes[start..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |i| start + i);
            let at = bytes[start..end]
                .windows(2)
                .position(|pair| pair == b": ")
                .map_or(end, |i| start + i + 2);
            bytes.splice(at..at, fill.repeat(*count).into_bytes());
        }
        Mutation::Nesting {
            depth,
            open,
            close,
            unbalanced,
        } => {
            let mut line = format!("nested: {}", open.repeat(*depth));
            if !unbalanced {
                line.push_str(&close.repeat(*depth));
            }
            line.push('\n');
            insert_after_first_line(bytes, line.as_bytes());
        }
        Mutation::LongKey { len } => {
            insert_after_first_line(bytes, format!("{}: v\n", "k".repeat(*len)).as_bytes());
        }
        Mutation::LongValue { key, fill, count } => {
            let prefix = format!("\n{key}:");
            let value = fill.repeat(*count);
            match find(bytes, prefix.as_bytes()) {
                Some(at) => {
                    let value_start = at + prefix.len();
                    let value_end = bytes[value_start..]
                        .iter()
                        .position(|b| *b == b'\n')
                        .map_or(bytes.len(), |i| value_start + i);
                    bytes.splice(value_start..value_end, format!(" {value}").into_bytes());
                }
                None => {
                    insert_after_first_line(bytes, format!("{key}: {value}\n").as_bytes());
                }
            }
        }
        Mutation::Crlf => {
            let mut out = Vec::with_capacity(bytes.len() + 64);
            for &byte in bytes.iter() {
                if byte == b'\n' {
                    out.push(b'\r');
                }
                out.push(byte);
            }
            *bytes = out;
        }
        Mutation::Bom => {
            bytes.splice(0..0, "\u{feff}".bytes());
        }
        Mutation::TabIndent => {
            let mut out = Vec::with_capacity(bytes.len());
            let mut at_line_start = true;
            for &byte in bytes.iter() {
                if at_line_start && byte == b' ' {
                    out.push(b'\t');
                    continue;
                }
                at_line_start = byte == b'\n';
                out.push(byte);
            }
            *bytes = out;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn insert_after_first_line(bytes: &mut Vec<u8>, text: &[u8]) {
    let at = bytes
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |i| i + 1);
    bytes.splice(at..at, text.iter().copied());
}

/// Restore every mutable file, then write the mutated ones.
fn write_case(project: &TestProject, files: &[(&str, String)], case: &[(usize, Vec<Mutation>)]) {
    for (path, text) in files {
        project.write(path, text);
    }
    for (index, mutations) in case {
        let (path, text) = &files[*index];
        let mut bytes = text.as_bytes().to_vec();
        for mutation in mutations {
            apply(&mut bytes, mutation);
        }
        project.write_bytes(path, &bytes);
    }
}

/// A sink that only lets the subset reader run to its verdict.
struct IgnoreEvents;

impl EventSink for IgnoreEvents {
    fn scalar(&mut self, _: &str, _: Style, _: std::ops::Range<usize>) {}
    fn start_sequence(&mut self, _: bool, _: usize) {}
    fn start_mapping(&mut self, _: bool, _: usize) {}
    fn end_collection(&mut self, _: usize) {}
}

/// The frontmatter of every mutable file as written, through `parse_document` (the subset
/// reader where it applies) and through the general parser alone: the two must agree on the
/// tree and the problems, whatever the mutation did. Returns how many frontmatters the subset
/// reader took, so the caller can check the comparison was not vacuous.
fn compare_yaml_parsers(project: &TestProject, files: &[(&str, String)]) -> u32 {
    let mut taken = 0;
    for (path, _) in files {
        let Ok(text) = String::from_utf8(std::fs::read(project.path(path)).unwrap()) else {
            continue;
        };
        let Ok(fm) = frontmatter::split(&text) else {
            continue;
        };
        assert_eq!(
            parse_document(&text, fm.yaml.clone()),
            parse_document_with_general_parser(&text, fm.yaml.clone()),
            "the YAML subset reader and the general parser disagree on {path}: {text:?}"
        );
        taken += u32::from(read_block_subset(&text[fm.yaml], &mut IgnoreEvents).is_some());
    }
    taken
}

/// Every renderer over every diagnostic; the text is thrown away, only a panic matters.
fn render_everything(diagnostics: &[Diagnostic], sources: &dyn SourceLookup) {
    for diagnostic in diagnostics {
        for color in [false, true] {
            let _ = render_diagnostic(diagnostic, sources, color, true, camino::Utf8Path::new(""));
        }
        let _ = diagnostic_json_line(diagnostic, sources);
        let _ = diagnostic_annotation(diagnostic, sources, camino::Utf8Path::new(""));
    }
}

/// `aidlc compile` in process: the library calls of `cli::commands::compile_command`, in its
/// order, rendering each diagnostic instead of printing it. Returns the exit status.
fn compile_in_process(layout: &Layout) -> i32 {
    if let Ok(up_to_date) = up_to_date::check(layout, CheckMode::RefreshStamps) {
        let sources: std::collections::BTreeMap<camino::Utf8PathBuf, String> =
            compile::files_named_by(&up_to_date.warnings)
                .into_iter()
                .filter_map(|path| {
                    let text = std::fs::read_to_string(layout.project_dir.join(path)).ok()?;
                    Some((path.to_owned(), text))
                })
                .collect();
        render_everything(&up_to_date.warnings, &sources);
        return 0;
    }
    let mut db = CompilerDatabase::default();
    let (inputs, outcome) = compile::load_and_compile_once(&mut db, layout);
    // Watch mode and the language server compile through the memoised queries instead; both
    // paths must agree on every input, broken or not.
    let mut warm_db = CompilerDatabase::default();
    discover::load_project(&mut warm_db, layout);
    compile::compute_in_parallel(&warm_db);
    assert_eq!(
        compile::compile(&warm_db),
        outcome,
        "the two compile paths disagree"
    );
    let sources = compile::source_texts(&db, &outcome.diagnostics);
    render_everything(&outcome.diagnostics, &sources);
    if outcome.n_errors() > 0 {
        return 1;
    }
    compile::write_outputs(layout, &outcome).expect("the outputs can be written");
    up_to_date::record(layout, &outcome, &inputs).expect("the record can be written");
    0
}

fn runner(default_cases: u32) -> TestRunner {
    let mut config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    // `Config::default()` reads `PROPTEST_CASES` and `PROPTEST_RNG_SEED`; without them a run
    // is the fixed seed and the default number of cases.
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default_cases;
    }
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(SEED);
    }
    TestRunner::new(config)
}

fn outputs(project: &TestProject) -> (Vec<u8>, Vec<u8>) {
    let read = |path| std::fs::read(project.path(path)).unwrap_or_default();
    (read(GRAPH), read(GRID))
}

#[test]
fn mutated_inputs_never_panic_the_compile_in_process() {
    let project = compiled_project();
    let files = mutable_files();
    let layout = Layout::new(&project.root, Harness::Claude, &|_| None);
    let started = Instant::now();
    let failed_compiles = Cell::new(0_u32);
    let cases = Cell::new(0_u32);
    let subset_documents = Cell::new(0_u32);
    let result = runner(IN_PROCESS_CASES).run(&case(), |case| {
        cases.set(cases.get() + 1);
        let before = outputs(&project);
        write_case(&project, &files, &case);
        subset_documents.set(subset_documents.get() + compare_yaml_parsers(&project, &files));
        let status = compile_in_process(&layout);
        prop_assert!(status == 0 || status == 1, "exit {status}");
        if status == 1 {
            failed_compiles.set(failed_compiles.get() + 1);
            prop_assert!(
                outputs(&project) == before,
                "a failing compile changed the outputs"
            );
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    let (cases, failed_compiles) = (cases.get(), failed_compiles.get());
    eprintln!(
        "compile_fuzz: {cases} in-process cases ({failed_compiles} failing compiles) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed_compiles > cases / 4,
        "the mutations must break most inputs, or they test little: {failed_compiles} of {cases}"
    );
    assert!(
        subset_documents.get() > cases,
        "the YAML subset reader must take most frontmatters, or the comparison tests little"
    );
}

#[test]
fn mutated_inputs_never_panic_the_binary() {
    let project = compiled_project();
    let files = mutable_files();
    let cases = Cell::new(0_u32);
    let result = runner(BINARY_CASES).run(&case(), |case| {
        cases.set(cases.get() + 1);
        let before = outputs(&project);
        write_case(&project, &files, &case);
        let compiled = project.run_watched(&["compile"], &[], None);
        prop_assert!(
            compiled.status == 0 || compiled.status == 1,
            "compile exited {}: {}",
            compiled.status,
            tail(&compiled.stderr)
        );
        if compiled.status == 1 {
            prop_assert!(
                outputs(&project) == before,
                "a failing compile changed the outputs"
            );
        }
        let listed = project.run_watched(&["engine", "sensor", "list"], &[], None);
        prop_assert!(
            listed.status == 0 || listed.status == 1,
            "sensor list exited {}: {}",
            listed.status,
            tail(&listed.stderr)
        );
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    eprintln!("compile_fuzz: {} binary cases", cases.get());
}

fn tail(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(2_000)..].iter().collect()
}
