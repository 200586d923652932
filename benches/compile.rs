//! Cold compile of the built-in default framework, in process (no process start-up, no I/O
//! after loading). A plain `harness = false` bench: `cargo bench --bench compile`.
//! The criterion/gungraun suite with generated projects arrives with the incremental-rebuild
//! work; this one already checks its result so a fast wrong answer cannot pass.

use std::time::{Duration, Instant};

use aidlc::db::CompilerDatabase;
use aidlc::discover::{Harness, Layout};

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root =
        camino::Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).expect("UTF-8 temp dir");
    aidlc::framework::init_project(&root, Harness::Claude, false).expect("init");
    let layout = Layout::new(&root, Harness::Claude, &|_| None);
    let mut samples: Vec<Duration> = Vec::new();
    for _ in 0..50 {
        let mut db = CompilerDatabase::default();
        aidlc::discover::load_project(&mut db, &layout);
        let started = Instant::now();
        let outcome = aidlc::compile::compile(&db);
        samples.push(started.elapsed());
        assert_eq!(
            (outcome.n_stages, outcome.n_sensors, outcome.n_errors()),
            (33, 6, 0)
        );
        assert!(outcome.stage_graph.len() > 50_000);
    }
    samples.sort();
    println!(
        "cold compile of the default framework (33 stages, 6 sensors), in process: median {:?}, min {:?}",
        samples[samples.len() / 2],
        samples[0]
    );
}
