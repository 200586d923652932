//! Criterion suite for the compile, all in process (no process start-up).
//!
//! Run everything with `cargo bench --bench compile`; pass a filter after `--` to run a part,
//! e.g. `cargo bench --bench compile -- warm/` or `cargo bench --bench compile -- cold/1000_`,
//! and `-- --quick` for a fast, rougher pass.
//!
//! - `cold/*`: a fresh database, `discover::load_project` (reads every file) and
//!   `compile::compile`, for the default framework and generated projects of 1,000 and 10,000
//!   stages.
//! - `warm/*`: one file of an already compiled project is edited, then the project is compiled
//!   again; the edit alternates between two texts so every iteration is a real change.
//! - `emission/*`: serialise every node of a compiled project from the memoised resolved data.
//!
//! Every iteration checks its result (no diagnostics, the stage and sensor counts, and the exact
//! length of `stage-graph.json` known from a first compile), so a fast wrong answer cannot pass.

#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their generated projects directly on the disk"
)]

#[path = "../tests/support/synthetic.rs"]
#[expect(dead_code, reason = "a bench uses only the generators it measures")]
mod synthetic;

use std::hint::black_box;
use std::time::Duration;

use aidlc::compile::db::{CompilerDatabase, FileContents, Project, SourceFile};
use aidlc::compile::discover::{Layout, load_project};
use aidlc::compile::stage_graph::emit::write_stage_node;
use aidlc::compile::stage_graph::numbering::stage_numbering;
use aidlc::compile::{CompileOutcome, compile};
use aidlc::harness::Harness;
use camino::{Utf8Path, Utf8PathBuf};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, criterion_group, criterion_main};

use crate::synthetic::SyntheticProject;

/// The generated projects: `(stages, sensors)`.
const MEDIUM: (usize, usize) = (1_000, 200);
const LARGE: (usize, usize) = (10_000, 500);

/// The `matches:` glob the `warm/matches_edit` bench swaps in; no generated sensor uses it, and
/// it still matches the stages' Markdown outputs (a dead gate binding would be a diagnostic).
const EDITED_GLOB: &str = "**/*.{md,txt}";

/// A project written to a temporary folder, kept for as long as the value lives.
struct ProjectOnDisk {
    _dir: tempfile::TempDir,
    layout: Layout,
}

impl ProjectOnDisk {
    fn in_empty_temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root =
            Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).expect("UTF-8 temp dir path");
        (dir, root)
    }

    fn with_default_framework() -> Self {
        let (dir, root) = Self::in_empty_temp_dir();
        aidlc::compile::framework::init_project(&root, Harness::Claude, false).expect("aidlc init");
        Self::from_root(dir, &root)
    }

    fn with_synthetic(project: &SyntheticProject) -> Self {
        let (dir, root) = Self::in_empty_temp_dir();
        project
            .write_to(&root)
            .expect("write the synthetic project");
        Self::from_root(dir, &root)
    }

    fn from_root(dir: tempfile::TempDir, root: &Utf8Path) -> Self {
        let layout = Layout::new(root, Harness::Claude, &|_| None);
        Self { _dir: dir, layout }
    }
}

/// What a correct compile gives; checked after every timed compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Expected {
    n_stages: usize,
    n_sensors: usize,
    graph_len: usize,
}

impl Expected {
    /// Read off a compile that is known to be clean (it panics otherwise).
    fn of_clean_outcome(outcome: &CompileOutcome) -> Self {
        assert_no_diagnostics(outcome);
        Self {
            n_stages: outcome.n_stages,
            n_sensors: outcome.n_sensors,
            graph_len: outcome.stage_graph.len(),
        }
    }

    fn check(&self, outcome: &CompileOutcome) {
        assert_no_diagnostics(outcome);
        let actual = Self {
            n_stages: outcome.n_stages,
            n_sensors: outcome.n_sensors,
            graph_len: outcome.stage_graph.len(),
        };
        assert_eq!(&actual, self, "the compile gave another result");
    }
}

fn assert_no_diagnostics(outcome: &CompileOutcome) {
    assert_eq!(
        outcome.diagnostics.len(),
        0,
        "expected a clean compile, first diagnostic: {:?}",
        outcome.diagnostics.first()
    );
}

/// A fresh database holding every input of the project.
fn loaded_database(layout: &Layout) -> CompilerDatabase {
    let mut db = CompilerDatabase::default();
    let _ = load_project(&mut db, layout);
    db
}

/// The whole cold path: fresh database, read every file, compile.
fn cold_compile(layout: &Layout) -> CompileOutcome {
    compile(&loaded_database(layout))
}

/// Sanity bounds that hold whatever the first compile says: the counts and a graph of at least
/// `min_bytes_per_stage` per stage.
fn assert_plausible(
    expected: &Expected,
    stages: usize,
    sensors: usize,
    min_bytes_per_stage: usize,
) {
    assert_eq!((expected.n_stages, expected.n_sensors), (stages, sensors));
    assert!(
        expected.graph_len > stages * min_bytes_per_stage,
        "stage-graph.json is only {} bytes for {stages} stages",
        expected.graph_len
    );
}

fn bench_one_cold_compile(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    disk: &ProjectOnDisk,
    expected: Expected,
) {
    group.bench_function(name, |bencher| {
        bencher.iter(|| {
            let outcome = cold_compile(black_box(&disk.layout));
            expected.check(&outcome);
            outcome
        });
    });
}

fn cold_benches(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("cold");

    let default_framework = ProjectOnDisk::with_default_framework();
    let expected = Expected::of_clean_outcome(&cold_compile(&default_framework.layout));
    assert_plausible(&expected, 33, 6, 1_000);
    bench_one_cold_compile(
        &mut group,
        "default_framework",
        &default_framework,
        expected,
    );

    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for ((stages, sensors), measurement_secs) in [(MEDIUM, 10), (LARGE, 30)] {
        let disk = ProjectOnDisk::with_synthetic(&SyntheticProject::new(stages, sensors));
        let expected = Expected::of_clean_outcome(&cold_compile(&disk.layout));
        assert_plausible(&expected, stages, sensors, 1_000);
        group.measurement_time(Duration::from_secs(measurement_secs));
        bench_one_cold_compile(&mut group, &format!("{stages}_stages"), &disk, expected);
    }
    group.finish();
}

/// A compiled project kept in memory for the warm benches.
struct WarmProject {
    generator: SyntheticProject,
    _disk: ProjectOnDisk,
    db: CompilerDatabase,
}

impl WarmProject {
    fn compiled(stages: usize, sensors: usize) -> Self {
        let generator = SyntheticProject::new(stages, sensors);
        let disk = ProjectOnDisk::with_synthetic(&generator);
        let db = loaded_database(&disk.layout);
        let expected = Expected::of_clean_outcome(&compile(&db));
        assert_plausible(&expected, stages, sensors, 1_000);
        Self {
            generator,
            _disk: disk,
            db,
        }
    }

    fn stage_file(&self, path: &Utf8Path) -> SourceFile {
        Project::get(&self.db)
            .stage_files(&self.db)
            .iter()
            .map(|entry| entry.file)
            .find(|file| file.path(&self.db) == path)
            .unwrap_or_else(|| panic!("no stage file {path} in the database"))
    }

    fn sensor_file(&self, path: &Utf8Path) -> SourceFile {
        Project::get(&self.db)
            .sensor_files(&self.db)
            .iter()
            .copied()
            .find(|file| file.path(&self.db) == path)
            .unwrap_or_else(|| panic!("no sensor file {path} in the database"))
    }

    fn set_text(&mut self, file: SourceFile, text: &str) -> bool {
        self.db.update_file(
            file,
            FileContents::Text(std::sync::Arc::new(text.to_owned())),
        )
    }
}

/// One file and the two texts the warm bench alternates between: `[original, edited]`.
struct AlternatingEdit {
    file: SourceFile,
    texts: [String; 2],
}

impl AlternatingEdit {
    /// Compile with each text once (the original last, so the project ends as it began) and
    /// return what each compile must give.
    fn expected_outcomes(&self, warm: &mut WarmProject) -> [Expected; 2] {
        warm.set_text(self.file, &self.texts[1]);
        let edited = Expected::of_clean_outcome(&compile(&warm.db));
        warm.set_text(self.file, &self.texts[0]);
        let original = Expected::of_clean_outcome(&compile(&warm.db));
        [original, edited]
    }
}

/// A middle stage's text with one line of prose changed.
fn prose_edit(warm: &WarmProject) -> AlternatingEdit {
    let index = warm.generator.stages / 2;
    let original = warm.generator.stage_text(index);
    let edited = original.replacen("## Purpose\n\n", "## Purpose\n\nEdited for the bench. ", 1);
    assert_ne!(original, edited, "the prose edit found no Purpose section");
    AlternatingEdit {
        file: warm.stage_file(&warm.generator.stage_path(index)),
        texts: [original, edited],
    }
}

/// A stage's first `sensors:` entry replaced by another existing sensor id it does not import.
fn sensor_id_edit(warm: &WarmProject) -> AlternatingEdit {
    let index = warm.generator.stages / 3;
    let imported = warm.generator.stage_sensor_ids(index);
    let replacement = (0..warm.generator.sensors)
        .map(|sensor| warm.generator.sensor_id(sensor))
        .find(|id| !imported.contains(id))
        .expect("a sensor the stage does not import");
    let original = warm.generator.stage_text(index);
    let edited = original.replacen(
        &format!("sensors:\n  - {}\n", imported[0]),
        &format!("sensors:\n  - {replacement}\n"),
        1,
    );
    assert_ne!(original, edited, "the sensor-id edit found no sensors list");
    AlternatingEdit {
        file: warm.stage_file(&warm.generator.stage_path(index)),
        texts: [original, edited],
    }
}

/// A middle sensor's `matches:` glob replaced by [`EDITED_GLOB`].
fn matches_edit(warm: &WarmProject) -> AlternatingEdit {
    let index = warm.generator.sensors / 2;
    let original = warm.generator.sensor_text(index);
    let edited: String = original
        .lines()
        .map(|line| {
            if line.starts_with("matches: ") {
                format!("matches: \"{EDITED_GLOB}\"\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_ne!(original, edited, "the matches edit found no matches line");
    AlternatingEdit {
        file: warm.sensor_file(&warm.generator.sensor_path(index)),
        texts: [original, edited],
    }
}

/// Time "apply the other text, compile" on an already compiled project.
fn bench_one_alternating_edit(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    warm: &mut WarmProject,
    edit: &AlternatingEdit,
) {
    let expected = edit.expected_outcomes(warm);
    // Invariant: `shown` is the index of the text the database holds; it starts at the original.
    let mut shown = 0;
    group.bench_function(name, |bencher| {
        bencher.iter(|| {
            shown = 1 - shown;
            assert!(
                warm.set_text(edit.file, &edit.texts[shown]),
                "the edit changed nothing"
            );
            let outcome = compile(&warm.db);
            expected[shown].check(&outcome);
            outcome
        });
    });
    warm.set_text(edit.file, &edit.texts[0]);
}

fn warm_benches(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("warm");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    for (stages, sensors) in [LARGE, MEDIUM] {
        let mut warm = WarmProject::compiled(stages, sensors);
        let edits = [
            ("prose_edit", prose_edit(&warm)),
            ("sensor_id_edit", sensor_id_edit(&warm)),
            ("matches_edit", matches_edit(&warm)),
        ];
        for (kind, edit) in &edits {
            let name = format!("{kind}/{stages}_stages");
            bench_one_alternating_edit(&mut group, &name, &mut warm, edit);
        }
    }
    group.finish();
}

/// Every node written from the memoised data by the one node writer and framed exactly as
/// `stage_graph_json` does (nodes joined by `,\n`, inside `[\n` … `\n]\n`).
fn graph_from_node_values(db: &CompilerDatabase) -> String {
    let mut out = String::from("[\n");
    let mut first = true;
    for &file in &stage_numbering(db).order {
        let before = out.len();
        if !first {
            out.push_str(",\n");
        }
        if write_stage_node(db, file, &mut out) {
            first = false;
        } else {
            out.truncate(before);
        }
    }
    out.push_str("\n]\n");
    out
}

fn emission_benches(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("emission");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(15));
    let (stages, sensors) = LARGE;
    let warm = WarmProject::compiled(stages, sensors);
    let outcome = compile(&warm.db);
    assert_eq!(
        graph_from_node_values(&warm.db),
        *outcome.stage_graph,
        "re-serialised nodes differ from stage-graph.json"
    );
    let graph_len = outcome.stage_graph.len();
    group.bench_function(format!("{stages}_stages"), |bencher| {
        bencher.iter(|| {
            let graph = graph_from_node_values(black_box(&warm.db));
            assert_eq!(graph.len(), graph_len);
            graph
        });
    });
    group.finish();
}

criterion_group!(benches, cold_benches, warm_benches, emission_benches);
criterion_main!(benches);
