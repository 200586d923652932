//! In-process time of the native document workers on a 200 KB deliverable:
//! `cargo bench --bench workers`.
//!
//! Each iteration runs the worker exactly as `fire` does in-process and checks its verdict
//! (pass or fail, and the findings count), so a fast wrong answer cannot pass.

#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their generated projects directly on the disk"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use aidlc::protocol::worker_outcome::WorkerOutcome;
use aidlc::runtime::sensors::descriptor::WorkerContext;
use aidlc::runtime::sensors::native_check;
use camino::Utf8PathBuf;
use criterion::{Criterion, criterion_group, criterion_main};

/// About 200 KB of Markdown: many `##` sections of prose that cite some upstream artifacts.
fn deliverable_text() -> String {
    let mut text = String::from("# Requirements\n\n");
    let mut section = 0;
    while text.len() < 200 * 1024 {
        section += 1;
        let _ = write!(
            text,
            "## Section {section}\n\nThis part builds on the intent-statement and the [[scope-document]] \
             and explains, in plain words, how the feature behaves for users who sign in, \
             browse, pay and leave. It mentions nfr-requirements only in passing.\n\n\
             ```md\n## Not a heading inside a fence\n```\n\n"
        );
    }
    text
}

struct Fixture {
    _dir: tempfile::TempDir,
    context: WorkerContext,
    args: Vec<String>,
}

fn fixture(extra: &[(&str, &str)]) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).expect("UTF-8 temp dir");
    let output = root.join("record/inception/requirements-analysis/requirements.md");
    std::fs::create_dir_all(output.parent().expect("parent")).expect("folders");
    std::fs::write(&output, deliverable_text()).expect("write the deliverable");
    let mut args = vec![
        "--stage".to_owned(),
        "requirements-analysis".to_owned(),
        "--output-path".to_owned(),
        output.to_string(),
    ];
    for (flag, value) in extra {
        args.push((*flag).to_owned());
        args.push((*value).to_owned());
    }
    Fixture {
        _dir: dir,
        context: WorkerContext {
            project_dir: root,
            timeout: Duration::from_secs(300),
        },
        args,
    }
}

fn verdict(outcome: &WorkerOutcome) -> (bool, u64) {
    let WorkerOutcome::Verdict(json) = outcome else {
        panic!("expected a verdict, got {outcome:?}");
    };
    (
        json["pass"].as_bool().expect("boolean pass"),
        json["findings_count"]
            .as_u64()
            .expect("numeric findings_count"),
    )
}

fn bench_workers(criterion: &mut Criterion) {
    let required_sections = native_check("required-sections").expect("native check");
    let sections = fixture(&[]);
    assert_eq!(
        verdict(&required_sections(&sections.args, &sections.context)),
        (true, 0)
    );
    criterion.bench_function("required_sections/200_kb", |bencher| {
        bencher.iter(|| {
            let outcome = required_sections(black_box(&sections.args), &sections.context);
            assert_eq!(verdict(&outcome), (true, 0));
        });
    });

    let upstream_coverage = native_check("upstream-coverage").expect("native check");
    let coverage = fixture(&[
        (
            "--consumes",
            "intent-statement:intent-capture,scope-document:intent-capture,requirements:requirements-analysis,glossary",
        ),
        ("--deliverables", "requirements"),
    ]);
    let expected = verdict(&upstream_coverage(&coverage.args, &coverage.context));
    assert_eq!(expected, (false, 1), "glossary is never cited");
    criterion.bench_function("upstream_coverage/200_kb", |bencher| {
        bencher.iter(|| {
            let outcome = upstream_coverage(black_box(&coverage.args), &coverage.context);
            assert_eq!(verdict(&outcome), expected);
        });
    });
}

criterion_group!(benches, bench_workers);
criterion_main!(benches);
