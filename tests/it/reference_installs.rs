//! Drop-in on the two real installs the reference made (2.5.36 and 2.6.54, vendored under
//! `tests/fixtures/reference-installs`): `aidlc` reads them as they are and writes exactly the
//! bytes their own reference tools write (D13), and the reference's drift guard accepts what
//! `aidlc` wrote. The side-by-side tests run the real reference with Bun from
//! `.ci/install-node-tools`; without it they print SKIPPED.

use std::process::Command;

use camino::Utf8Path;
use serde_json::Value;

use crate::support::{
    GRAPH, GRID, LedgerBlock, REFERENCE_VERSIONS, Run, SearchPath, TestProject, ledger_blocks,
    node_tool,
};

/// A stage of both installs that has a reviewer.
const REVIEWED_STAGE: &str = ".claude/aidlc-common/stages/ideation/intent-capture.md";

fn graph_format_of(version: &str) -> &'static str {
    if version.starts_with("2.5") {
        "2.5"
    } else {
        "2.6"
    }
}

/// `bun <args>` in the project, with Bun's folder first on `PATH`.
fn run_bun(bun: &Utf8Path, project: &TestProject, args: &[&str]) -> Run {
    let folder = bun.parent().expect("bun's folder");
    let path = format!("{folder}:{}", std::env::var("PATH").unwrap_or_default());
    let output = Command::new(bun)
        .args(args)
        .current_dir(&project.root)
        .env("PATH", path)
        .env_remove("AIDLC_PROJECT_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .output()
        .expect("run bun");
    Run::from(output)
}

/// The one diagnostic a `--format json` run printed.
fn only_diagnostic(run: &Run) -> Value {
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    serde_json::from_str(lines[0]).expect("a JSON diagnostic")
}

#[test]
fn compile_rewrites_nothing_on_either_install_and_says_which_format_it_kept() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let (graph, grid) = (project.read(GRAPH), project.read(GRID));
        let compiled = project.run(&["compile", "--force"]);
        assert_eq!(compiled.status, 0, "{version}: {}", compiled.stderr);
        assert_eq!(
            project.read(GRAPH),
            graph,
            "{version}: stage-graph.json changed"
        );
        assert_eq!(
            project.read(GRID),
            grid,
            "{version}: scope-grid.json changed"
        );
        let lines: Vec<&str> = compiled.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "{version}: a diagnostic was printed: {}",
            compiled.stderr
        );
        assert!(
            lines[0].contains(&format!(
                "up to date: .claude/tools/data/stage-graph.json and scope-grid.json (graph format {}, kept from the existing stage-graph.json)",
                graph_format_of(version)
            )),
            "{version}: {}",
            lines[0]
        );
        let check = project.run(&["compile", "--check"]);
        assert_eq!(check.status, 0, "{version}: {}", check.stderr);
    }
}

#[test]
fn the_older_formats_leave_out_what_their_reference_never_writes() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let nodes: Vec<Value> = serde_json::from_str(&project.read(GRAPH)).unwrap();
        let entries: Vec<&Value> = nodes
            .iter()
            .flat_map(|node| node["sensors_applicable"].as_array().unwrap())
            .collect();
        assert!(!entries.is_empty());
        for entry in entries {
            let keys: Vec<&str> = entry
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert!(
                keys == ["id", "path", "matches"] || keys == ["id", "path"],
                "{version}: {keys:?}"
            );
        }
        let has_review_class = nodes.iter().any(|node| node.get("review_class").is_some());
        assert_eq!(has_review_class, version.starts_with("2.6"), "{version}");
    }
}

#[test]
fn graph_format_overrides_the_detection_and_a_new_project_gets_the_newest() {
    let project = TestProject::reference_install("2.6.54");
    let upgraded = project.run(&["compile", "--graph-format", "gate"]);
    assert_eq!(upgraded.status, 0, "{}", upgraded.stderr);
    assert!(
        !upgraded.stderr.contains("graph format"),
        "{}",
        upgraded.stderr
    );
    let graph = project.read(GRAPH);
    assert!(graph.contains("\"fire_on\": \"write\""));
    // The graph now has the newest shape, so a plain compile keeps it.
    let again = project.run(&["compile", "--force"]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(project.read(GRAPH), graph);
    assert!(again.stderr.contains("up to date:"), "{}", again.stderr);

    // The default framework sets review fields 2.5 has no place for, and gate-fired sensors
    // 2.6 cannot express: the first is refused, the second compiles with warnings.
    let fresh = TestProject::default_framework();
    let oldest = fresh.run(&["compile", "--graph-format", "2.5"]);
    assert_eq!(oldest.status, 1, "{}", oldest.stderr);
    assert!(
        oldest
            .stderr
            .contains("(2.5, from --graph-format) does not carry"),
        "{}",
        oldest.stderr
    );
    assert!(!fresh.exists(GRAPH), "nothing written");
    let older = fresh.run(&["compile", "--graph-format", "2.6"]);
    assert_eq!(older.status, 0, "{}", older.stderr);
    assert!(
        older
            .stderr
            .contains("(graph format 2.6, from --graph-format)"),
        "{}",
        older.stderr
    );
    assert!(
        older.stderr.contains("declares fire_on: gate"),
        "{}",
        older.stderr
    );
    let graph = fresh.read(GRAPH);
    assert!(!graph.contains("\"fire_on\""));
    assert!(graph.contains("\"review_class\""));
    let newest = fresh.run(&["compile", "--graph-format", "gate"]);
    assert_eq!(newest.status, 0, "{}", newest.stderr);
    assert!(fresh.read(GRAPH).contains("\"fire_on\""));

    let bad = fresh.run(&["compile", "--graph-format", "2.7"]);
    assert_eq!(bad.status, 2);
    assert!(
        bad.stderr.contains("unknown graph format \"2.7\""),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_field_the_installs_format_cannot_carry_is_refused_and_nothing_is_written() {
    let project = TestProject::reference_install("2.6.54");
    let graph = project.read(GRAPH);
    let text = project.read(REVIEWED_STAGE);
    assert!(text.contains("\nreviewer:"), "the stage has a reviewer");
    project.write(
        REVIEWED_STAGE,
        &text.replacen(
            "\nreviewer:",
            "\nreview_artifact: intent-statement\nreviewer:",
            1,
        ),
    );
    let compiled = project.run(&["compile", "--format", "json"]);
    assert_eq!(compiled.status, 1, "{}", compiled.stderr);
    let diagnostic = only_diagnostic(&compiled);
    assert_eq!(diagnostic["code"], "not-in-graph-format");
    assert_eq!(diagnostic["severity"], "error");
    assert_eq!(
        diagnostic["message"],
        "stage \"intent-capture\" sets review_artifact, which this install's graph format (2.6, kept from the existing stage-graph.json) does not carry"
    );
    assert_eq!(project.read(GRAPH), graph);
    let upgraded = project.run(&["compile", "--graph-format", "gate"]);
    assert_eq!(upgraded.status, 0, "{}", upgraded.stderr);
    assert!(
        project
            .read(GRAPH)
            .contains("\"review_artifact\": \"intent-statement\"")
    );
}

#[test]
fn a_gate_fired_or_blocking_manifest_in_an_older_format_is_warned_about() {
    let project = TestProject::reference_install("2.6.54");
    let manifest = ".claude/sensors/aidlc-required-sections.md";
    let text = project.read(manifest);
    project.write(
        manifest,
        &text.replacen(
            "default_severity: advisory",
            "default_severity: blocking\nfire_on: gate",
            1,
        ),
    );
    let compiled = project.run(&["compile", "--format", "json"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    let diagnostic = only_diagnostic(&compiled);
    assert_eq!(diagnostic["code"], "not-in-graph-format");
    assert_eq!(diagnostic["severity"], "warning");
    assert_eq!(
        diagnostic["message"],
        "sensor \"required-sections\" declares fire_on: gate and default_severity: blocking, but this install's graph format (2.6, kept from the existing stage-graph.json) carries neither: it fires on writes and is advisory"
    );
}

#[test]
fn the_references_drift_guard_passes_on_the_tree_aidlc_compiled_and_ours_on_the_references() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    for version in REFERENCE_VERSIONS {
        let ours = TestProject::reference_install(version);
        let compiled = ours.run(&["compile", "--force"]);
        assert_eq!(compiled.status, 0, "{version}: {}", compiled.stderr);
        let their_check = run_bun(
            &bun,
            &ours,
            &[".claude/tools/aidlc-graph.ts", "compile", "--check"],
        );
        assert_eq!(
            their_check.status, 0,
            "{version}: the reference's compile --check failed after aidlc compile:\n{}{}",
            their_check.stdout, their_check.stderr
        );

        let theirs = TestProject::reference_install(version);
        let reference = run_bun(&bun, &theirs, &[".claude/tools/aidlc-graph.ts", "compile"]);
        assert_eq!(
            reference.status, 0,
            "{version}: the reference's compile failed:\n{}{}",
            reference.stdout, reference.stderr
        );
        let our_check = theirs.run(&["compile", "--check"]);
        assert_eq!(
            our_check.status, 0,
            "{version}: aidlc compile --check failed after the reference's compile: {}",
            our_check.stderr
        );
    }
}

// --- The runtime on a reference install ----------------------------------------------

/// The intent record the runtime tests add to a copy of an install.
const DEMO_RECORD: &str = "aidlc/spaces/default/intents/260901-demo";
/// `requirements-analysis`'s deliverable in it.
const REQUIREMENTS: &str =
    "aidlc/spaces/default/intents/260901-demo/inception/requirements-analysis/requirements.md";
/// The first-run banner both engines print.
const BANNER: &str = "[aidlc] Sensors are now watching this workspace.";

/// A copy of an install with one intent: its state on `requirements-analysis`, whose one
/// deliverable has a single `## ` section (the shipped `required-sections` fails it; it cites
/// nothing upstream, and its producers left nothing on disk, so `upstream-coverage` passes).
fn install_with_an_intent(version: &str) -> TestProject {
    let project = TestProject::reference_install(version);
    project.write(
        &format!("{DEMO_RECORD}/aidlc-state.md"),
        "# AI-DLC State Tracking\n\n## Current Status\n- **Current Stage**: requirements-analysis\n",
    );
    project.write(REQUIREMENTS, "# Requirements\n\n## Scope\n\nOne section.\n");
    project
}

/// The programs the native runs below may find on `PATH`: none. The shipped sensors run
/// in-process (D8) and these runs start no other program, so a fire that needed Bun (or anything
/// else) could not run, whatever the machine has installed.
const PROGRAMS_THE_NATIVE_RUNS_NEED: [&str; 0] = [];

/// A `PATH` of [`PROGRAMS_THE_NATIVE_RUNS_NEED`], built from `search` (the caller's `PATH`).
fn search_path_without_bun(search: &std::ffi::OsStr) -> SearchPath {
    let path = SearchPath::of_programs_found_on(&PROGRAMS_THE_NATIVE_RUNS_NEED, search);
    assert!(!path.finds("bun"), "the search path holds a bun");
    path
}

/// [`search_path_without_bun`] from the caller's `PATH`.
fn no_bun() -> SearchPath {
    search_path_without_bun(&std::env::var_os("PATH").unwrap_or_default())
}

/// The write hook told that the agent wrote `relative`, with no Bun on `PATH`.
fn hook_without_bun(project: &TestProject, relative: &str) -> Run {
    hook_on_search_path(project, relative, &no_bun())
}

/// The write hook told that the agent wrote `relative`, with `PATH` set to `path`.
fn hook_on_search_path(project: &TestProject, relative: &str, path: &SearchPath) -> Run {
    let payload = serde_json::json!({
        "tool_name": "Write",
        "tool_input": {"file_path": project.path(relative)},
    })
    .to_string();
    project.run_watched(
        &["engine", "hook", "run-sensors"],
        &[("PATH", path.as_str())],
        Some(&payload),
    )
}

/// The terminal row of every fire in the demo record, by sensor id, checking that each fire is
/// paired.
fn terminal_rows(project: &TestProject) -> Vec<(String, LedgerBlock)> {
    let blocks = ledger_blocks(project, DEMO_RECORD);
    let fired: Vec<&LedgerBlock> = blocks
        .iter()
        .filter(|block| block.event() == "SENSOR_FIRED")
        .collect();
    fired
        .iter()
        .map(|fire| {
            let id = fire.field("Fire id").unwrap();
            let terminals: Vec<&LedgerBlock> = blocks
                .iter()
                .filter(|block| {
                    block.event() != "SENSOR_FIRED" && block.field("Fire id") == Some(id)
                })
                .collect();
            assert_eq!(terminals.len(), 1, "fire {id} is not paired");
            (
                fire.field("Sensor ID").unwrap().to_owned(),
                terminals[0].clone(),
            )
        })
        .collect()
}

fn is_iso_timestamp(text: &str) -> bool {
    text.len() == 20
        && text.ends_with('Z')
        && text.as_bytes()[10] == b'T'
        && text.bytes().filter(u8::is_ascii_digit).count() == 14
}

#[test]
fn the_write_hook_checks_a_reference_install_natively_and_keeps_its_health_files() {
    for version in REFERENCE_VERSIONS {
        let project = install_with_an_intent(version);
        let first = hook_without_bun(&project, REQUIREMENTS);
        assert_eq!(first.status, 0, "{version}: {}", first.stderr);
        // stdout is the hook protocol's channel; the banner goes to stderr, as the reference's.
        assert_eq!(first.stdout, "", "{version}");
        assert!(first.stderr.contains(BANNER), "{version}: {}", first.stderr);

        // The shipped sensors ran natively, though the manifests name Bun workers: real
        // verdicts, no `spawn-failed`.
        let manifest = project.read(".claude/sensors/aidlc-required-sections.md");
        assert!(
            manifest.contains("command: bun .claude/tools/aidlc-sensor-required-sections.ts"),
            "{version}"
        );
        let terminals = terminal_rows(&project);
        let verdicts: Vec<(&str, &str)> = terminals
            .iter()
            .map(|(sensor, row)| (sensor.as_str(), row.event()))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("required-sections", "SENSOR_FAILED"),
                ("upstream-coverage", "SENSOR_PASSED"),
            ],
            "{version}"
        );
        assert!(
            terminals.iter().all(|(_, row)| row.field("Note").is_none()),
            "{version}: {terminals:?}"
        );
        // The detail file is where this version's reference puts it: `.aidlc-sensors`.
        let detail = terminals[0].1.field("Detail path").unwrap();
        assert!(
            detail.starts_with(&format!(
                "{DEMO_RECORD}/.aidlc-sensors/requirements-analysis/required-sections-"
            )),
            "{version}: {detail}"
        );
        assert!(project.exists(detail), "{version}");
        assert!(
            !project.exists(&format!("{DEMO_RECORD}/.aidlc-engine")),
            "{version}"
        );

        // The heartbeat and the first-run marker are this version's, in the folder its doctor
        // reads: `run-sensors` on 2.6, `sensor-fire` (the hook's old name) on 2.5.
        let hook_name = if version.starts_with("2.5") {
            "sensor-fire"
        } else {
            "run-sensors"
        };
        let health = format!("{DEMO_RECORD}/.aidlc-hooks-health");
        let heartbeat = project.read(&format!("{health}/{hook_name}.last"));
        assert!(is_iso_timestamp(&heartbeat), "{version}: {heartbeat:?}");
        let marker = project.read(&format!("{health}/.first-fired"));
        assert!(is_iso_timestamp(&marker), "{version}: {marker:?}");

        let second = hook_without_bun(&project, REQUIREMENTS);
        assert_eq!(second.status, 0, "{version}");
        assert!(!second.stderr.contains(BANNER), "{version}: shown once");
        assert_eq!(terminal_rows(&project).len(), 4, "{version}");
    }
}

/// A Bun first on the caller's `PATH` (where a machine with Bun installed has one) changes
/// nothing: the runs get a `PATH` built without it, the shipped sensors still run natively, and
/// the Bun is never started.
#[test]
fn a_bun_first_on_the_callers_path_is_left_out_and_never_run() {
    use std::os::unix::fs::PermissionsExt as _;
    let machine = TestProject::empty();
    let started = machine.path("bun-was-started");
    machine.write(
        "bin/bun",
        &format!("#!/bin/sh\necho \"$@\" >>'{started}'\nexit 1\n"),
    );
    std::fs::set_permissions(
        machine.path("bin/bun"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let callers_path = std::env::join_paths(
        std::iter::once(machine.path("bin").into_std_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let path = search_path_without_bun(&callers_path);

    let project = install_with_an_intent("2.6.54");
    let hook = hook_on_search_path(&project, REQUIREMENTS, &path);
    assert_eq!(hook.status, 0, "{}", hook.stderr);
    let verdicts: Vec<(String, String, Option<String>)> = terminal_rows(&project)
        .into_iter()
        .map(|(sensor, row)| {
            let note = row.field("Note").map(str::to_owned);
            (sensor, row.event().to_owned(), note)
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "required-sections".to_owned(),
                "SENSOR_FAILED".to_owned(),
                None
            ),
            (
                "upstream-coverage".to_owned(),
                "SENSOR_PASSED".to_owned(),
                None
            ),
        ]
    );
    assert!(
        !started.exists(),
        "the Bun on the caller's PATH was started"
    );
}

#[test]
fn gate_check_says_an_install_s_sensors_are_write_fired_and_checks_them_with_fire_on_all() {
    for version in REFERENCE_VERSIONS {
        let project = install_with_an_intent(version);
        let search_path = no_bun();
        let path = [("PATH", search_path.as_str())];
        let default = project.run_watched(&["gate", "check", "--no-record"], &path, None);
        assert_eq!(default.status, 2, "{version}: {}", default.stderr);
        assert!(
            default.stderr.contains(
                "nothing was checked: no gate-fired binding: the install's sensors are all write-fired"
            ),
            "{version}: {}",
            default.stderr
        );
        assert!(
            default.stderr.contains("`--fire-on all` checks them"),
            "{version}: {}",
            default.stderr
        );

        let all = project.run_watched(
            &[
                "gate",
                "check",
                "--fire-on",
                "all",
                "--format",
                "json",
                "--quiet",
            ],
            &path,
            None,
        );
        // Both bindings are advisory on these installs: a failure is reported, exit 0.
        assert_eq!(all.status, 0, "{version}: {}", all.stderr);
        let report: Value = serde_json::from_str(all.stdout.trim()).unwrap();
        assert_eq!(report["counts"]["passed"], 1, "{version}: {report}");
        assert_eq!(report["counts"]["failed"], 1, "{version}: {report}");
        assert_eq!(report["counts"]["not_evaluated"], 0, "{version}: {report}");
        let terminals = terminal_rows(&project);
        assert_eq!(terminals.len(), 2, "{version}");
        assert!(
            terminals.iter().all(|(_, row)| row.field("Note").is_none()),
            "{version}: {terminals:?}"
        );
    }
}

#[test]
fn fire_finds_the_install_from_the_output_path_and_runs_the_shipped_sensor_natively() {
    let project = install_with_an_intent("2.6.54");
    let elsewhere = TestProject::empty();
    let output = project.path(REQUIREMENTS);
    let search_path = no_bun();
    let fired = project.run_watched_in(
        &elsewhere.root,
        &[
            "engine",
            "sensor",
            "fire",
            "required-sections",
            "--stage",
            "requirements-analysis",
            "--output-path",
            output.as_str(),
        ],
        &[("PATH", search_path.as_str())],
        None,
    );
    assert_eq!(fired.status, 0, "{}", fired.stderr);
    let verdict: Value = serde_json::from_str(fired.stdout.trim()).unwrap();
    assert_eq!(verdict["result"], "failed", "{verdict}");
    assert_eq!(verdict["output_path"], REQUIREMENTS);
    assert!(verdict.get("note").is_none(), "{verdict}");
    assert!(
        verdict["detail_path"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{DEMO_RECORD}/.aidlc-sensors/")),
        "{verdict}"
    );
    assert_eq!(terminal_rows(&project).len(), 1);
    assert!(
        std::fs::read_dir(&elsewhere.root).unwrap().next().is_none(),
        "nothing was written where it ran"
    );
}

#[test]
fn sensor_list_and_describe_print_what_the_reference_prints_byte_for_byte() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let theirs = run_bun(&bun, &project, &[".claude/tools/aidlc-sensor.ts", "list"]);
        let ours = project.run(&["engine", "sensor", "list"]);
        assert_eq!(theirs.status, 0, "{version}: {}", theirs.stderr);
        assert_eq!(ours.status, 0, "{version}: {}", ours.stderr);
        assert_eq!(ours.stdout, theirs.stdout, "{version}: sensor list");
        let ids: Vec<&str> = theirs
            .stdout
            .lines()
            .map(|line| line.split('\t').next().unwrap())
            .collect();
        assert!(ids.len() >= 5, "{version}: {ids:?}");
        for id in ids {
            let theirs = run_bun(
                &bun,
                &project,
                &[".claude/tools/aidlc-sensor.ts", "describe", id],
            );
            let ours = project.run(&["engine", "sensor", "describe", id]);
            assert_eq!(theirs.status, 0, "{version} {id}: {}", theirs.stderr);
            assert_eq!(ours.status, 0, "{version} {id}: {}", ours.stderr);
            assert_eq!(
                ours.stdout, theirs.stdout,
                "{version}: sensor describe {id}"
            );
        }
    }
}

#[test]
fn the_reference_s_doctor_reads_the_heartbeat_aidlc_wrote() {
    let Some(bun) = node_tool("bun") else {
        return;
    };
    let project = install_with_an_intent("2.6.54");
    assert_eq!(hook_without_bun(&project, REQUIREMENTS).status, 0);
    let heartbeat = project.read(&format!(
        "{DEMO_RECORD}/.aidlc-hooks-health/run-sensors.last"
    ));
    let doctor = run_bun(
        &bun,
        &project,
        &[".claude/tools/aidlc-utility.ts", "doctor"],
    );
    assert!(
        doctor
            .stdout
            .contains(&format!("Hooks last fired: run-sensors {heartbeat}")),
        "{}{}",
        doctor.stdout,
        doctor.stderr
    );
    assert!(
        doctor.stdout.contains("Hook drops: none recorded"),
        "{}",
        doctor.stdout
    );
}

/// Off a terminal (stderr a pipe, however wide `COLUMNS` says it is) a compile message is one
/// line: the reference's advisory sentence for a per-unit build stage that is not a subagent is
/// found whole by a script in `aidlc compile`'s stderr, as in the reference's.
#[test]
fn off_a_terminal_a_compile_message_is_one_line_as_the_reference_prints_it() {
    const CODE_GENERATION: &str = ".claude/aidlc-common/stages/construction/code-generation.md";
    const SENTENCE: &str =
        "the autonomous Construction swarm will NOT fire for it; units build serially.";
    let reference_bun = node_tool("bun");
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let stage = project.read(CODE_GENERATION);
        assert!(stage.contains("\nmode: subagent\n"), "{version}");
        project.write(
            CODE_GENERATION,
            &stage.replace("\nmode: subagent\n", "\nmode: inline\n"),
        );
        let ours = project.run_with_env(&["compile", "--check"], &[("COLUMNS", "300")]);
        let our_line = ours
            .stderr
            .lines()
            .find(|line| line.contains("[advisory] stage \"code-generation\""))
            .unwrap_or_else(|| panic!("{version}: no advisory line:\n{}", ours.stderr));
        assert!(our_line.ends_with(SENTENCE), "{version}: {our_line}");
        assert!(
            !ours.stderr.contains('│'),
            "{version}: wrapped:\n{}",
            ours.stderr
        );
        if let Some(bun) = &reference_bun {
            let theirs = run_bun(
                bun,
                &project,
                &[".claude/tools/aidlc-graph.ts", "compile", "--check"],
            );
            let their_line = theirs
                .stderr
                .lines()
                .find(|line| line.contains("[advisory] stage \"code-generation\""))
                .unwrap_or_else(|| panic!("{version}: the reference printed:\n{}", theirs.stderr));
            assert!(
                our_line.ends_with(their_line),
                "{version}: ours {our_line:?}, the reference's {their_line:?}"
            );
        }
    }
}

/// The reference's compile under Bun and `aidlc compile` on the same manifest and stage text:
/// an unquoted `matches: **/*.{ts,js}` (as `engine sensor describe` prints it) is that glob to
/// both (the same graph bytes); a comment after a `sensors:` item, which the reference reads
/// into the id, is refused by aidlc at the comment with the fix.
#[test]
fn frontmatter_is_read_as_the_reference_reads_it_on_the_same_text() {
    const LINTER: &str = ".claude/sensors/aidlc-linter.md";
    const STAGE: &str = ".claude/aidlc-common/stages/operation/incident-response.md";
    let reference_bun = node_tool("bun");
    for version in REFERENCE_VERSIONS {
        let unquoted = TestProject::reference_install(version);
        let manifest = unquoted.read(LINTER);
        assert!(
            manifest.contains("\nmatches: \"**/*.{ts,js}\"\n"),
            "{version}"
        );
        unquoted.write(
            LINTER,
            &manifest.replace("\nmatches: \"**/*.{ts,js}\"\n", "\nmatches: **/*.{ts,js}\n"),
        );
        let shipped_graph = unquoted.read(GRAPH);
        let ours = unquoted.run(&["compile", "--force"]);
        assert_eq!(ours.status, 0, "{version}: {}", ours.stderr);
        assert!(
            unquoted.read(GRAPH) == shipped_graph,
            "{version}: the unquoted glob compiled to other bytes"
        );
        if let Some(bun) = &reference_bun {
            let theirs = run_bun(
                bun,
                &unquoted,
                &[".claude/tools/aidlc-graph.ts", "compile", "--check"],
            );
            assert_eq!(
                theirs.status, 0,
                "{version}: the reference reads the glob otherwise:\n{}{}",
                theirs.stdout, theirs.stderr
            );
        }

        let commented = TestProject::reference_install(version);
        let stage = commented.read(STAGE);
        assert!(stage.contains("\n  - upstream-coverage\n"), "{version}");
        commented.write(
            STAGE,
            &stage.replace(
                "\n  - upstream-coverage\n",
                "\n  - upstream-coverage  # cites upstream\n",
            ),
        );
        let refused = commented.run(&["compile"]);
        assert_eq!(refused.status, 1, "{version}: {}", refused.stderr);
        assert!(
            refused
                .stderr
                .contains("comment after the item `upstream-coverage` of `sensors`"),
            "{version}: {}",
            refused.stderr
        );
        assert!(
            refused
                .stderr
                .contains("help: move the comment to its own line above the item"),
            "{version}: {}",
            refused.stderr
        );
        let line = stage
            .lines()
            .position(|line| line == "  - upstream-coverage")
            .unwrap()
            + 1;
        assert!(
            refused
                .stderr
                .contains(&format!("incident-response.md:{line}:24]")),
            "{version}: {}",
            refused.stderr
        );
        if let Some(bun) = &reference_bun {
            let theirs = run_bun(
                bun,
                &commented,
                &[".claude/tools/aidlc-graph.ts", "compile"],
            );
            assert_ne!(theirs.status, 0, "{version}");
            assert!(
                theirs
                    .stderr
                    .contains("unknown sensor id \"upstream-coverage  # cites upstream\""),
                "{version}: {}",
                theirs.stderr
            );
        }
    }
}

/// A `scope-grid.json` column a plugin composed, with no scope file: the install's own
/// reference keeps it or drops it (2.5 keeps every composed column, 2.6 only one with its scope
/// file), and `aidlc compile --check` and `aidlc compile` agree with it on both installs.
#[test]
fn a_composed_scope_grid_column_without_a_scope_file_is_kept_or_dropped_as_the_install_s_reference_does()
 {
    const COMPOSED: &str = ",\n  \"zz-composed\": {\n    \"stages\": {\n      \"workspace-scaffold\": \"EXECUTE\"\n    }\n  }\n}\n";
    let reference_bun = node_tool("bun");
    for version in REFERENCE_VERSIONS {
        let kept = version.starts_with("2.5");
        let project = TestProject::reference_install(version);
        let grid = project.read(GRID);
        let composed_grid = format!("{}{COMPOSED}", grid.strip_suffix("\n}\n").unwrap());
        project.write(GRID, &composed_grid);
        let theirs = TestProject::empty();
        crate::support::copy_tree(&project.root, &theirs.root);

        let check = project.run(&["compile", "--check"]);
        // 0 when the column is kept, 1 (drift) when the compile would drop it.
        assert_eq!(
            check.status,
            i32::from(!kept),
            "{version}: {}",
            check.stderr
        );
        let compiled = project.run(&["compile"]);
        assert_eq!(compiled.status, 0, "{version}: {}", compiled.stderr);
        assert_eq!(
            project.read(GRID).contains("\"zz-composed\""),
            kept,
            "{version}"
        );
        if kept {
            assert!(project.read(GRID) == composed_grid, "{version}");
        }
        if let Some(bun) = &reference_bun {
            let their_check = run_bun(
                bun,
                &theirs,
                &[".claude/tools/aidlc-graph.ts", "compile", "--check"],
            );
            assert_eq!(
                their_check.status == 0,
                kept,
                "{version}: {}{}",
                their_check.stdout,
                their_check.stderr
            );
            let their_compile = run_bun(bun, &theirs, &[".claude/tools/aidlc-graph.ts", "compile"]);
            assert_eq!(
                their_compile.status, 0,
                "{version}: {}",
                their_compile.stderr
            );
            assert!(
                theirs.read(GRID) == project.read(GRID),
                "{version}: the reference's compile wrote another grid"
            );
        }
    }
}
