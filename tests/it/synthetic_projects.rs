//! The synthetic projects of `tests/support/synthetic.rs` are deterministic, follow their
//! layout rules, and compile without a diagnostic.

use aidlc::compile::db::CompilerDatabase;
use aidlc::compile::discover::Layout;
use aidlc::harness::Harness;
use camino::Utf8PathBuf;

use crate::synthetic::{AGENT_COUNT, DEFAULT_SEED, SplitMix64, SyntheticProject};

fn compile_in_tempdir(project: &SyntheticProject) -> aidlc::compile::CompileOutcome {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).expect("UTF-8 temp dir");
    project
        .write_to(&root)
        .expect("write the synthetic project");
    let layout = Layout::new(&root, Harness::Claude, &|_| None);
    let mut db = CompilerDatabase::default();
    let _ = aidlc::compile::discover::load_project(&mut db, &layout);
    aidlc::compile::compile(&db)
}

#[test]
fn same_parameters_give_the_same_bytes() {
    let project = SyntheticProject::new(40, 12);
    assert_eq!(project.files(), SyntheticProject::new(40, 12).files());
}

#[test]
fn another_seed_gives_other_bytes_with_the_same_paths() {
    let project = SyntheticProject::new(40, 12);
    let reseeded = project.with_seed(7);
    let paths = |files: Vec<(Utf8PathBuf, String)>| -> Vec<Utf8PathBuf> {
        files.into_iter().map(|(path, _)| path).collect()
    };
    assert_ne!(project.files(), reseeded.files());
    assert_eq!(paths(project.files()), paths(reseeded.files()));
}

#[test]
fn paths_follow_the_phase_round_robin() {
    let project = SyntheticProject::new(10, 4);
    assert_eq!(
        project.stage_path(9),
        ".claude/aidlc-common/stages/inception/inception-stage-2.md"
    );
    assert_eq!(project.sensor_path(3), ".claude/sensors/aidlc-s3.md");
    assert_eq!(project.files().len(), 10 + 4 + AGENT_COUNT + 7);
}

#[test]
fn stage_sensor_ids_match_the_sensors_list() {
    let project = SyntheticProject::new(40, 12);
    for index in 0..project.stages {
        let ids = project.stage_sensor_ids(index);
        assert!((1..=3).contains(&ids.len()));
        let block: Vec<String> = ids.iter().map(|id| format!("  - {id}")).collect();
        let expected = format!("\nsensors:\n{}\nscopes:", block.join("\n"));
        assert!(
            project.stage_text(index).contains(&expected),
            "stage {index}"
        );
    }
}

#[test]
fn a_generated_project_compiles_without_diagnostics() {
    let outcome = compile_in_tempdir(&SyntheticProject::new(40, 12));
    assert_eq!(outcome.diagnostics, Vec::new());
    assert_eq!((outcome.n_stages, outcome.n_sensors), (40, 12));
    assert!(outcome.stage_graph.len() > 40 * 1000);
    assert!(
        outcome
            .stage_graph
            .contains("\"path\": \"aidlc/spaces/default/memory/phases/operation.md\""),
        "the rule files reach rules_in_context"
    );
}

#[test]
fn stage_counts_not_divisible_by_four_and_zero_sensors_compile_clean() {
    for (stages, sensors) in [(10, 3), (1, 1), (7, 0), (0, 2)] {
        let outcome = compile_in_tempdir(&SyntheticProject::new(stages, sensors));
        assert_eq!(outcome.diagnostics, Vec::new(), "{stages} stages");
        assert_eq!((outcome.n_stages, outcome.n_sensors), (stages, sensors));
    }
}

#[test]
fn several_seeds_compile_clean() {
    for seed in 1..=5 {
        let outcome = compile_in_tempdir(&SyntheticProject::new(60, 9).with_seed(seed));
        assert_eq!(outcome.diagnostics, Vec::new(), "seed {seed}");
        assert_eq!(outcome.n_stages, 60);
    }
}

#[test]
fn distinct_below_never_repeats_and_caps_at_the_bound() {
    let mut rng = SplitMix64::for_item(DEFAULT_SEED, 1, 2);
    for bound in 1..6 {
        let mut picked = rng.distinct_below(4, bound);
        assert_eq!(picked.len(), bound.min(4));
        picked.sort_unstable();
        picked.dedup();
        assert_eq!(picked.len(), bound.min(4));
    }
}
