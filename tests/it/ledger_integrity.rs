//! The ledger stays whole and inside the project: a torn shard tail is
//! closed before the next block, a fire that wrote `SENSOR_FIRED` waits for the lock to write
//! its terminal row, a lock folder left unstamped by a crash is reaped, a dead writer's
//! temporaries are swept (and nobody else's), and no folder that links outside the project is
//! written into. Driven through the real binary with fake workers (shell scripts).

use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aidlc::runtime::audit::ledger::{self, BLOCK_SEPARATOR, ParsedLedger, TornKind};
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::scenario_project::{self as scenario, DOC_A, STAGE};
use crate::support::{Run, TestProject, audit_lock_path, pair_fires, stage, wait_for_path};

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const OUTPUT: &str =
    "aidlc/spaces/default/intents/261130-demo/inception/first-stage/first-stage-doc.md";
const PASS: &str = "echo '{\"pass\":true,\"findings_count\":0}'";
const FAIL: &str = "echo '{\"pass\":false,\"findings_count\":1,\"findings\":[\"x\"]}'";

/// A compiled project with sensor `fake` (worker: `sh fake-worker.sh`, whose body is `body`),
/// one stage importing it, an intent record on that stage, and the output file.
fn project_with_worker(body: &str) -> TestProject {
    let project = TestProject::empty();
    project.write(
        ".claude/sensors/aidlc-fake.md",
        "---\nid: fake\nkind: deterministic\ncommand: sh fake-worker.sh\ndefault_severity: advisory\ndescription: A fake sensor for tests\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# fake\n",
    );
    project.write("fake-worker.sh", &format!("#!/bin/sh\n{body}\n"));
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", "inception", "[]", "[fake]", ""),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: first-stage\n",
    );
    project.write(OUTPUT, "# First stage doc\n");
    project
}

const FIRE_ARGS: [&str; 8] = [
    "engine",
    "sensor",
    "fire",
    "fake",
    "--stage",
    "first-stage",
    "--output-path",
    OUTPUT,
];

/// One fire, failed if it runs past [`crate::support::HANG`].
fn fire(project: &TestProject) -> Run {
    project.run_watched(&FIRE_ARGS, &[], None)
}

fn verdict(run: &Run) -> Value {
    assert_eq!(run.status, 0, "fire failed: {}", run.stderr);
    serde_json::from_str(run.stdout.trim()).expect("one verdict line")
}

/// This clone's shard (the clone id is minted by the first fire, or by the test).
fn shard_path(project: &TestProject) -> Utf8PathBuf {
    project.audit_shard_under(&project.path(RECORD))
}

fn ledger_of(project: &TestProject) -> ParsedLedger {
    std::fs::read_to_string(shard_path(project)).map_or_else(
        |_| ParsedLedger::default(),
        |text| ledger::parse_ledger(&text),
    )
}

fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn names_in(folder: &Utf8Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

// --- Torn blocks --------------------------------------------------------------------------------

/// A shard whose last block, the `SENSOR_PASSED` of fire 0000aaaa, was cut short right after its
/// Sensor ID began (a full disk in a writer that does not cut back). Before the fix the next
/// fire's `SENSOR_FIRED` was glued onto it: the pair read as the unnoted pass of 0000aaaa, and
/// the new fire's own row was lost.
#[test]
fn a_fire_after_a_torn_tail_starts_its_own_block_and_pairs() {
    let project = project_with_worker(PASS);
    let shard = shard_path(&project);
    let earlier = "# AI-DLC Audit Log\n\n## Sensor Fired\n**Timestamp**: 2026-01-01T00:00:00Z\n**Event**: SENSOR_FIRED\n**Fire id**: 0000aaaa\n**Sensor ID**: fake\n**Stage slug**: first-stage\n**Output path**: x.md\n\n---\n";
    let torn = "\n## Sensor Passed\n**Timestamp**: 2026-01-01T00:00:01Z\n**Event**: SENSOR_PASSED\n**Fire id**: 0000aaaa\n**Sensor ID**: fa";
    project.write(
        shard.strip_prefix(&project.root).unwrap().as_str(),
        &format!("{earlier}{torn}"),
    );

    let verdict = verdict(&fire(&project));
    let new_id = verdict["fire_id"].as_str().unwrap();

    let text = project.read(shard.strip_prefix(&project.root).unwrap().as_str());
    assert!(
        text.starts_with(&format!(
            "{earlier}{torn}\n{}\n\n---\n\n## Sensor Fired\n",
            ledger::TORN_BLOCK_CLOSING_LINE
        )),
        "{text}"
    );
    let ledger = ledger::parse_ledger(&text);
    let pairs: Vec<(&str, Option<&str>)> = pair_fires(&ledger.blocks)
        .iter()
        .map(|pair| {
            (
                pair.fired.field("Fire id").unwrap(),
                pair.terminal.map(|terminal| terminal.event.as_str()),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [("0000aaaa", None), (new_id, Some("SENSOR_PASSED"))],
        "the torn row of 0000aaaa is not a pass, and the new fire pairs"
    );
    assert_eq!(ledger.torn.len(), 1);
    assert_eq!(ledger.torn[0].kind, TornKind::ClosedByLaterAppend);
    assert_eq!(ledger.torn[0].line, 13);

    // A reader that splits on the separator and takes the first `**Note**:` line of a piece, as
    // the reference's do, sees the torn pass as a noted one (a non-evaluation).
    let torn_piece = text
        .split(BLOCK_SEPARATOR)
        .find(|piece| piece.contains("**Fire id**: 0000aaaa") && piece.contains("SENSOR_PASSED"))
        .unwrap();
    let note = torn_piece
        .lines()
        .find_map(|line| line.strip_prefix("**Note**:"))
        .map(str::trim);
    assert!(
        note.is_some_and(|note| note.starts_with("script-error: torn-block")),
        "{torn_piece}"
    );
}

// --- A lost terminal row ------------------------------------------------------------------------

/// A worker that says it started and writes its pid, then waits (bounded) until the test holds
/// the audit lock.
fn worker_waiting_for_the_lock() -> String {
    format!(
        "echo $$ > worker.pid.tmp && mv worker.pid.tmp worker.pid\ntouch worker-started\ni=0\nwhile [ ! -f lock-taken ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n{PASS}"
    )
}

/// Hold the project's audit lock as a live process does (this test's pid, started now).
fn hold_lock(project: &TestProject) -> Utf8PathBuf {
    let lock = aidlc::leaves::audit_lock::lock_path(&project.root);
    std::fs::create_dir(&lock).unwrap();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::fs::write(
        lock.join("owner.json"),
        format!(
            "{{\"pid\":{},\"startedAtMs\":{started},\"reapLiveOwnerAfterStale\":true}}",
            std::process::id()
        ),
    )
    .unwrap();
    lock
}

fn spawn_fire(project: &TestProject, env: &[(&str, &str)]) -> std::process::Child {
    project
        .command(&project.root, &FIRE_ARGS)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn assert_one_complete_fire(project: &TestProject, run: &Run) {
    let verdict = verdict(run);
    let ledger = ledger_of(project);
    let pairs = pair_fires(&ledger.blocks);
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].fired.field("Fire id"), verdict["fire_id"].as_str());
    assert_eq!(
        pairs[0].terminal.map(|terminal| terminal.event.as_str()),
        Some("SENSOR_PASSED")
    );
    assert_eq!(ledger.torn, []);
}

/// The lock is taken while the worker runs and given back only once the fire has reaped the
/// worker (its next write is the terminal row): the fire is still running then, with no
/// terminal row, and writes it after the release. That the wait outlasts the short wait of an
/// ordinary append is `the_terminal_row_reaps_a_lock_older_than_its_stale_age`'s: its lock
/// stays held past 5 s.
#[test]
fn the_terminal_row_waits_for_a_lock_held_longer_than_the_short_wait() {
    let project = project_with_worker(&worker_waiting_for_the_lock());
    let mut child = spawn_fire(&project, &[]);
    wait_for_path(&project.path("worker-started"));
    let lock = hold_lock(&project);
    project.write("lock-taken", "");
    crate::support::wait_until_reaped(project.read("worker.pid").trim());
    assert!(
        child.try_wait().unwrap().is_none(),
        "the fire waits for the lock"
    );
    let while_held = ledger_of(&project);
    assert!(
        pair_fires(&while_held.blocks)
            .iter()
            .all(|pair| pair.terminal.is_none()),
        "no terminal row while the lock is held: {while_held:?}"
    );
    std::fs::remove_dir_all(&lock).unwrap();
    let run = Run::from(child.wait_with_output().unwrap());
    assert_one_complete_fire(&project, &run);
}

/// A live owner that keeps the lock past `AIDLC_LOCK_STALE_MS` (7 s here, more than the short
/// wait) is reaped, and the terminal row is written.
#[test]
fn the_terminal_row_reaps_a_lock_older_than_its_stale_age() {
    let project = project_with_worker(&worker_waiting_for_the_lock());
    let child = spawn_fire(&project, &[("AIDLC_LOCK_STALE_MS", "7000")]);
    wait_for_path(&project.path("worker-started"));
    let lock = hold_lock(&project);
    project.write("lock-taken", "");
    let run = Run::from(child.wait_with_output().unwrap());
    assert_one_complete_fire(&project, &run);
    assert!(
        !lock.exists(),
        "the fire reaped the lock and released its own"
    );
}

#[test]
fn a_bad_stale_age_is_refused_before_any_row() {
    let project = project_with_worker(PASS);
    let run = project.run_with_env(&FIRE_ARGS, &[("AIDLC_LOCK_STALE_MS", "10m")]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "AIDLC_LOCK_STALE_MS must be a whole number of milliseconds greater than zero, got \"10m\""
        ),
        "{}",
        run.stderr
    );
    assert_eq!(ledger_of(&project), ParsedLedger::default());
}

// --- A lock folder left unstamped ---------------------------------------------------------------

/// A crash between `mkdir` and the stamp, long ago: reaped at once.
#[test]
fn an_old_unstamped_lock_folder_is_reaped() {
    let project = project_with_worker(PASS);
    let lock = aidlc::leaves::audit_lock::lock_path(&project.root);
    std::fs::create_dir(&lock).unwrap();
    std::fs::File::open(&lock)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let run = fire(&project);
    assert_one_complete_fire(&project, &run);
    assert!(!lock.exists());
}

/// A crash between `mkdir` and the stamp just now (or a writer still between the two): the fire
/// waits out the 5 s grace period, reaps the folder and writes its rows.
#[test]
fn a_fresh_unstamped_lock_folder_is_waited_out_and_reaped() {
    let project = project_with_worker(PASS);
    let lock = aidlc::leaves::audit_lock::lock_path(&project.root);
    std::fs::create_dir(&lock).unwrap();
    let run = fire(&project);
    assert_one_complete_fire(&project, &run);
    assert!(!lock.exists());
}

// --- `kill -9` leftovers ---------------------------------------------------------------------------

/// A compile whose outputs already hold its bytes writes nothing and so takes no lock: it
/// finishes while another process holds the lock. One that must write still waits for the
/// lock, and gives up with the outputs untouched.
#[test]
fn only_a_compile_that_writes_takes_the_audit_lock() {
    let project = TestProject::minimal();
    let first = project.compile();
    assert_eq!(first.status, 0, "{}", first.stderr);
    let lock = hold_lock(&project);
    let unchanged = project.run(&["compile", "--force"]);
    assert_eq!(unchanged.status, 0, "{}", unchanged.stderr);
    assert!(
        unchanged.stderr.contains("up to date:"),
        "{}",
        unchanged.stderr
    );
    let graph = project.path(".claude/tools/data/stage-graph.json");
    std::fs::remove_file(&graph).unwrap();
    let must_write = project.run(&["compile", "--force"]);
    assert_eq!(must_write.status, 2, "{}", must_write.stderr);
    assert!(must_write.stderr.contains("lock"), "{}", must_write.stderr);
    assert!(!graph.exists());
    std::fs::remove_dir_all(&lock).unwrap();
    let after = project.run(&["compile", "--force"]);
    assert_eq!(after.status, 0, "{}", after.stderr);
    assert!(graph.exists());
}

#[test]
fn compile_sweeps_a_dead_writers_temporary_and_leaves_foreign_ones() {
    let project = TestProject::minimal();
    let ours = format!(".stage-graph.json.aidlc-{}-0123456789ab.tmp", dead_pid());
    let foreign = [
        ".stage-graph.json.x7Yz12.tmp",
        "stage-graph.json.tmp",
        "notes.tmp",
    ];
    for name in foreign.iter().chain([&ours.as_str()]) {
        project.write(&format!(".claude/tools/data/{name}"), "half a graph");
    }
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let names = names_in(&project.path(".claude/tools/data"));
    assert!(!names.contains(&ours), "{names:?}");
    for name in foreign
        .iter()
        .chain(&["stage-graph.json", "scope-grid.json"])
    {
        assert!(
            names.iter().any(|present| present == name),
            "{name}: {names:?}"
        );
    }
    assert!(
        names
            .iter()
            .all(|name| aidlc::leaves::fs_util::parse_temporary_name(name).is_none()),
        "{names:?}"
    );
}

#[test]
fn a_failed_fire_sweeps_a_dead_writers_detail_temporary() {
    let project = project_with_worker(FAIL);
    let folder = format!("{RECORD}/.aidlc-engine/sensors/first-stage");
    let ours = format!(".fake-0badf00d.md.aidlc-{}-0123456789ab.tmp", dead_pid());
    project.write(&format!("{folder}/{ours}"), "half a detail file");
    project.write(&format!("{folder}/fake-0badf00d.md.tmp"), "the reference's");
    let verdict = verdict(&fire(&project));
    let detail = Utf8Path::new(verdict["detail_path"].as_str().unwrap());
    let mut expected = vec![
        "fake-0badf00d.md.tmp".to_owned(),
        detail.file_name().unwrap().to_owned(),
    ];
    expected.sort();
    assert_eq!(names_in(&project.path(&folder)), expected);
}

// --- Writes outside the project -----------------------------------------------------------------

/// `link` (relative to the record) is a symbolic link to an empty folder outside the project;
/// a failing fire (which would write rows and a detail file) is refused before any row.
#[cfg(unix)]
fn assert_fire_refused_through_link(link: &str) {
    let project = project_with_worker(FAIL);
    let outside = TestProject::empty();
    let link_path = project.path(&format!("{RECORD}/{link}"));
    std::fs::create_dir_all(link_path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&outside.root, &link_path).unwrap();

    let run = fire(&project);
    assert_eq!(run.status, 2, "{link}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{link}: {}", run.stdout);
    assert!(
        run.stderr
            .contains(&format!("Refusing to write into \"{link_path}"))
            && run
                .stderr
                .contains(&format!("it resolves to \"{}", outside.root))
            && run.stderr.contains(&format!(
                "which escapes the project root \"{}\" after canonicalization.",
                project.root
            )),
        "{link}: {}",
        run.stderr
    );
    assert_eq!(names_in(&outside.root), Vec::<String>::new(), "{link}");
    if link != "audit" {
        assert_eq!(ledger_of(&project), ParsedLedger::default(), "{link}");
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_audit_folder_is_refused_before_any_row() {
    assert_fire_refused_through_link("audit");
}

#[cfg(unix)]
#[test]
fn a_symlinked_engine_folder_is_refused_before_any_row() {
    assert_fire_refused_through_link(".aidlc-engine");
}

#[cfg(unix)]
#[test]
fn a_symlinked_stage_detail_folder_is_refused_before_any_row() {
    assert_fire_refused_through_link(".aidlc-engine/sensors/first-stage");
}

// --- Failure scenario S10 (docs/failure-modes.md): concurrency ----------------------------------

/// S10: ten fires in parallel against one ledger leave twenty whole blocks, each
/// `SENSOR_FIRED` paired with exactly one terminal row by fire id; the audit lock is not held
/// while a worker runs (a second fire completes while the first one's worker waits for it); a
/// dispatcher killed between `SENSOR_FIRED` and its terminal row leaves that fire unpaired
/// (incomplete) and nothing that blocks the next fire, even when it died holding the lock.
///
/// This engine never reads an unpaired `SENSOR_FIRED` as a verdict (the gates fire afresh; see
/// scenario 11), so it has no "incomplete after a cutoff" rule to test (R3). Also covered by
/// `engine::ten_parallel_fires_leave_ten_intact_pairs`,
/// `engine::a_lock_left_by_a_dead_process_is_reaped`,
/// `ledger_integrity::an_old_unstamped_lock_folder_is_reaped` and
/// `ledger_integrity::a_fire_after_a_torn_tail_starts_its_own_block_and_pairs`.
#[test]
fn scenario_10_parallel_fires_pair_by_fire_id_and_no_lock_is_held_while_a_worker_runs() {
    let project = scenario::scenario_project(&[
        scenario::Sensor::write(
            "quick",
            "sleep 0.2\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
        scenario::Sensor::write(
            "waiting",
            "touch waiting-started\ni=0\nwhile [ ! -f release ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\necho '{\"pass\":true,\"findings_count\":0}'",
            "**/*.md",
        ),
        scenario::Sensor::write(
            "sleeping",
            "echo $$ > sleeping.pid.tmp && mv sleeping.pid.tmp sleeping.pid\nexec sleep 300",
            "**/*.md",
        ),
    ]);
    let fire_args = |sensor: &'static str| -> [&'static str; 8] {
        [
            "engine",
            "sensor",
            "fire",
            sensor,
            "--stage",
            STAGE,
            "--output-path",
            DOC_A,
        ]
    };

    let parallel: Vec<_> = (0..10)
        .map(|_| scenario::spawn(&project, &fire_args("quick")))
        .collect();
    for child in parallel {
        let run = scenario::finish(child);
        assert_eq!(scenario::verdict_line(&run)["result"], "passed");
    }
    let all = scenario::blocks(&project);
    assert_eq!(all.len(), 20, "no torn or lost block");
    assert_eq!(scenario::assert_every_fire_paired(&project).len(), 10);

    // The lock is free while a worker runs: another fire completes meanwhile.
    let waiting = scenario::spawn(&project, &fire_args("waiting"));
    scenario::wait_for_file(&project, "waiting-started");
    let meanwhile = scenario::fire(&project, "quick", DOC_A);
    assert_eq!(scenario::verdict_line(&meanwhile)["result"], "passed");
    project.write("release", "");
    assert_eq!(
        scenario::verdict_line(&scenario::finish(waiting))["result"],
        "passed"
    );
    assert_eq!(scenario::assert_every_fire_paired(&project).len(), 12);

    // A dispatcher killed while its worker runs: its fire stays unpaired.
    let mut doomed = scenario::spawn(&project, &fire_args("sleeping"));
    let worker_pid = scenario::wait_for_pid_file(&project, "sleeping.pid");
    let dispatcher_pid = doomed.id();
    scenario::kill("KILL", &dispatcher_pid.to_string());
    let _ = doomed.wait();
    scenario::kill("KILL", &worker_pid);
    let fires = scenario::fires_by_id(&scenario::blocks(&project));
    let unpaired: Vec<&String> = fires
        .iter()
        .filter(|(_, (_, terminals))| terminals.is_empty())
        .map(|(fire_id, _)| fire_id)
        .collect();
    assert_eq!(unpaired.len(), 1, "{fires:?}");
    // Had it died holding the audit lock, the lock names a dead owner: the next fire reaps it.
    let lock = audit_lock_path(&project);
    std::fs::create_dir(&lock).unwrap();
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::fs::write(
        lock.join("owner.json"),
        format!("{{\"pid\":{dispatcher_pid},\"startedAtMs\":{started_ms},\"reapLiveOwnerAfterStale\":true}}"),
    )
    .unwrap();
    let after = scenario::fire(&project, "quick", DOC_A);
    assert_eq!(scenario::verdict_line(&after)["result"], "passed");
    assert!(!lock.exists(), "the dead owner's lock was not reaped");
    let fires = scenario::fires_by_id(&scenario::blocks(&project));
    assert_eq!(fires.len(), 14);
    assert_eq!(
        fires
            .values()
            .filter(|(_, terminals)| terminals.is_empty())
            .count(),
        1,
        "only the killed fire is incomplete"
    );
}
