//! Whole-process timings of plugin composition: a no-op `aidlc plugin sync` and a no-op
//! `aidlc compile` on an install with `AIDLC_BENCH_PLUGINS` plugins (default 10) composed,
//! each beside the same command on the same install without plugins, measured in the same run.
//!
//! Run it with `cargo bench --bench plugins` (`AIDLC_BENCH_RUNS`, default 21, after one untimed
//! warm-up run each). The projects are the default framework (`aidlc init`) in temporary
//! folders; each plugin has a stage importing its own sensor, the sensor and its tool, an agent,
//! knowledge and a contribution to `build-and-test`. Rounds are interleaved (one run of each
//! command per round), so a noisy moment hits every column alike.
//!
//! Every run is checked (exit 0; `up to date: … nothing changed (no plugin or install file
//! changed since the last sync)` for a sync with plugins, proved from the sync record, D51,
//! `nothing to sync` without; `up to date:` for a compile), so a fast wrong answer cannot pass.
//! The figures are wall-clock medians on a shared machine: read the ratios.
//!
//! A second table times the language server's staleness check in process (docs/decisions.md
//! D53, D54), after one file of one composed plugin changed: `plugin::operations::
//! stale_composition` with every tree read from the disk (what it did before D54) beside the
//! same check over the server's warm `plugin::tree_db::PluginTrees`, told of the change as the
//! watcher tells it; and the tree reads alone, every composed plugin's tree from the disk
//! beside from the warm trees. Each run edits the file to another text, and every check must
//! find that plugin stale.
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their generated projects directly on the disk"
)]
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark harness reports on the terminal; it is not part of the engine"
)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aidlc::compile::discover::LAYOUT_ENVIRONMENT_VARIABLES;
use aidlc::harness::Harness;
use camino::{Utf8Path, Utf8PathBuf};

fn binary() -> Utf8PathBuf {
    std::env::var("AIDLC_BENCH_BINARY").map_or_else(
        |_| Utf8PathBuf::from(env!("CARGO_BIN_EXE_aidlc")),
        Utf8PathBuf::from,
    )
}

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn write(path: &Utf8Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folders");
    std::fs::write(path, text).expect("write a file");
}

/// One plugin for the default framework, as `tests/it/plugins.rs` writes them.
fn write_plugin(shelf: &Utf8Path, name: &str, order: usize) -> Utf8PathBuf {
    let root = shelf.join(name);
    write(
        &root.join(".aidlc-plugin/plugin.json"),
        &format!(
            "{{\"name\": \"{name}\", \"version\": \"1.0.0\", \"dependencies\": [\"core\"]}}\n"
        ),
    );
    write(
        &root.join(format!("stages/construction/{name}-check.md")),
        &format!(
            "---\nslug: {name}-check\nplugin: {name}\nphase: construction\nexecution: CONDITIONAL\ncondition: When {name} is active\nlead_agent: aidlc-quality-agent\nsupport_agents:\n  - {name}-helper-agent\nmode: inline\nproduces:\n  - {name}-report\nconsumes: []\nrequires_stage:\n  - build-and-test\nsensors:\n  - {name}-lint\nscopes:\n  - feature\ninputs: The build summary\noutputs: {name}-report.md\n---\n\n# {name} check\n\nWrite the report.\n"
        ),
    );
    write(
        &root.join(format!("sensors/aidlc-{name}-lint.md")),
        &format!(
            "---\nid: {name}-lint\nkind: deterministic\ncommand: sh .claude/tools/aidlc-sensor-{name}-lint.sh\ndefault_severity: advisory\ndescription: Checks the {name} report\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {name}-lint\n"
        ),
    );
    write(
        &root.join(format!("tools/aidlc-sensor-{name}-lint.sh")),
        "#!/bin/sh\necho '{\"pass\": true}'\n",
    );
    write(
        &root.join(format!("agents/{name}-helper-agent.md")),
        &format!(
            "---\nname: {name}-helper-agent\nplugin: {name}\ndisplay_name: {name} helper\ndescription: Helps\n---\n\n# helper\n"
        ),
    );
    write(
        &root.join(format!("knowledge/{name}-helper-agent/notes.md")),
        "# Notes\n\n{{HARNESS_DIR}}\n",
    );
    write(
        &root.join("contributions/construction/build-and-test.md"),
        &format!(
            "---\ntarget: build-and-test\nplugin: {name}\nadds:\n  produces:\n    - {name}-extra\nfragments:\n  - anchor: end-of-steps\n    order: {order}\n---\n\n## fragment: end-of-steps\n\n- ({name}) Write `{name}-extra.md`.\n"
        ),
    );
    root
}

fn command(project: &Utf8Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .args(args)
        .arg("--project-dir")
        .arg(project)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for variable in LAYOUT_ENVIRONMENT_VARIABLES.iter().chain(&[
        "CLAUDE_PLUGIN_ROOT",
        "PLUGIN_ROOT",
        "AIDLC_PLUGIN_ROOT",
        "AIDLC_HARNESS_DIR",
    ]) {
        command.env_remove(variable);
    }
    command
}

/// One checked run, timed.
fn timed(project: &Utf8Path, args: &[&str], expected: &str) -> Duration {
    let started = Instant::now();
    let output = command(project, args).output().expect("run aidlc");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "aidlc {args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "aidlc {args:?} said {stderr:?}, not {expected:?}"
    );
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let n_plugins = setting("AIDLC_BENCH_PLUGINS", 10);
    let runs = setting("AIDLC_BENCH_RUNS", 21).max(1);
    let dir = tempfile::tempdir().expect("temp dir");
    let base =
        Utf8PathBuf::from_path_buf(dir.path().canonicalize().expect("canonical")).expect("UTF-8");
    let bare = base.join("bare");
    let composed = base.join("composed");
    for project in [&bare, &composed] {
        aidlc::compile::framework::init_project(project, Harness::Claude, false)
            .expect("aidlc init");
    }
    let shelf = base.join("plugins");
    let roots: Vec<String> = (0..n_plugins)
        .map(|index| write_plugin(&shelf, &format!("bench{index:03}"), index).to_string())
        .collect();
    let mut add = vec!["plugin", "add"];
    add.extend(roots.iter().map(String::as_str));
    timed(&composed, &add, "composed;");
    // Settle: a first compile records the fingerprint, a second proves the no-op path.
    for project in [&bare, &composed] {
        timed(project, &["compile"], "");
        std::thread::sleep(Duration::from_millis(2100));
        timed(project, &["compile"], "up to date:");
    }
    let cases: [(&str, &Utf8Path, &[&str], &str); 4] = [
        (
            "sync, no plugins",
            &bare,
            &["plugin", "sync"],
            "nothing to sync",
        ),
        (
            "sync, plugins",
            &composed,
            &["plugin", "sync"],
            "nothing changed (no plugin or install file changed since the last sync)",
        ),
        ("compile, no plugins", &bare, &["compile"], "up to date:"),
        ("compile, plugins", &composed, &["compile"], "up to date:"),
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    // The first sync with plugins composes in full and records what it read (the files are
    // older than the racy window by now); the warm-up runs below are then proved from it.
    timed(&composed, &["plugin", "sync"], "nothing changed");
    for (_, project, args, expected) in &cases {
        timed(project, args, expected);
    }
    for _ in 0..runs {
        for (index, (_, project, args, expected)) in cases.iter().enumerate() {
            samples[index].push(timed(project, args, expected));
        }
    }
    let medians: Vec<Duration> = samples.into_iter().map(median).collect();
    println!("aidlc plugin composition, {n_plugins} plugins, median of {runs} runs (wall clock)");
    println!("{:<22} {:>10}", "case", "median");
    for ((name, ..), median) in cases.iter().zip(&medians) {
        println!("{name:<22} {:>8.2} ms", median.as_secs_f64() * 1000.0);
    }
    let ratio = |with: Duration, without: Duration| with.as_secs_f64() / without.as_secs_f64();
    println!(
        "no-op sync with/without plugins: {:.2}x; no-op compile with/without plugins: {:.2}x (budget 2x)",
        ratio(medians[1], medians[0]),
        ratio(medians[3], medians[2])
    );
    staleness_check(&composed, &roots, runs);
    eprintln!("done");
}

/// The staleness check and the tree reads after one edit, from the disk and from warm trees.
fn staleness_check(composed: &Utf8Path, roots: &[String], runs: usize) {
    use aidlc::plugin::tree::{FromDisk, TreeReader};
    use aidlc::plugin::tree_db::PluginTrees;
    let layout = aidlc::compile::discover::Layout::new(composed, Harness::Claude, &|_| None);
    let roots: Vec<Utf8PathBuf> = roots.iter().map(Utf8PathBuf::from).collect();
    let edited = roots[0].join("knowledge/bench000-helper-agent/notes.md");
    let warm = PluginTrees::default();
    warm.watch_only(std::collections::BTreeSet::from([roots[0]
        .parent()
        .expect("the shelf")
        .to_owned()]));
    let mut edits = 0_usize;
    let mut edit = || {
        edits += 1;
        write(&edited, &format!("# Notes\n\nedit {edits}\n"));
        edited.clone()
    };
    let checked = |trees: &dyn TreeReader| {
        let started = Instant::now();
        let stale = aidlc::plugin::operations::stale_composition(&layout, trees)
            .expect("a plan")
            .expect("stale");
        let elapsed = started.elapsed();
        assert_eq!(stale.changed_plugins[0].0, "bench000", "{stale:?}");
        elapsed
    };
    let read_all = |trees: &dyn TreeReader| {
        let started = Instant::now();
        for root in &roots {
            trees.read_tree(root).expect("a tree");
        }
        started.elapsed()
    };
    // Warm up: the warm trees mirror every root once.
    warm.changed(&std::collections::BTreeSet::from([edit()]), false);
    checked(&warm);
    let mut samples: [Vec<Duration>; 4] = Default::default();
    for _ in 0..runs {
        edit();
        samples[0].push(checked(&FromDisk));
        warm.changed(&std::collections::BTreeSet::from([edit()]), false);
        samples[1].push(checked(&warm));
        edit();
        samples[2].push(read_all(&FromDisk));
        warm.changed(&std::collections::BTreeSet::from([edit()]), false);
        samples[3].push(read_all(&warm));
    }
    let medians: Vec<Duration> = samples.into_iter().map(median).collect();
    let names = [
        "stale check, trees from disk",
        "stale check, warm trees",
        "read the trees, from disk",
        "read the trees, warm",
    ];
    println!(
        "the language server's staleness check after one edit, {} plugins, median of {runs} runs (in process)",
        roots.len()
    );
    for (name, median) in names.iter().zip(&medians) {
        println!("{name:<30} {:>8.3} ms", median.as_secs_f64() * 1000.0);
    }
    let ratio = |with: Duration, without: Duration| with.as_secs_f64() / without.as_secs_f64();
    println!(
        "warm/disk: stale check {:.2}x; tree reads {:.2}x",
        ratio(medians[1], medians[0]),
        ratio(medians[3], medians[2])
    );
}
