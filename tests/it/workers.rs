//! The native shipped workers give the same answer in-process (as `fire`, the hook and gate
//! dispatch run them) and out-of-process (`aidlc engine sensor-<id> …`, the worker protocol).

use aidlc::protocol::worker_outcome::protocol_output;
use aidlc::runtime::sensors::descriptor::WorkerContext;
use aidlc::runtime::sensors::native_check;

use crate::support::scenario_project::{self as scenario, DOC_A, PASS, RECORD, STAGE, STAGE_FILE};
use crate::support::{SearchPath, TestProject};

/// Run `id` both ways on `args` and check the exit status and stdout agree; returns them. The
/// process runs with a `PATH` that finds no program, whatever the machine has installed.
fn both_ways(project: &TestProject, id: &str, args: &[String]) -> (i32, String) {
    let context = WorkerContext {
        project_dir: project.root.clone(),
        timeout: std::time::Duration::from_secs(60),
    };
    let check = native_check(id).unwrap_or_else(|| panic!("{id} has a native check"));
    let (in_process_code, in_process_stdout) = protocol_output(&check(args, &context));
    let mut words = vec![format!("sensor-{id}")];
    words.extend(args.iter().cloned());
    let mut full: Vec<&str> = vec!["engine"];
    full.extend(words.iter().map(String::as_str));
    let no_programs = SearchPath::of_programs_found_on(&[], "".as_ref());
    let output = project
        .command(&project.root, &full)
        .env("AIDLC_PROJECT_DIR", project.root.as_str())
        .env("PATH", no_programs.as_str())
        .output()
        .expect("run the worker");
    let out_of_process_stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(in_process_code),
        "{id} {args:?}: exit status differs; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        out_of_process_stdout, in_process_stdout,
        "{id} {args:?}: stdout differs"
    );
    (in_process_code, in_process_stdout)
}

fn args(project: &TestProject, flags: &[(&str, &str)]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|(flag, value)| {
            let value = match value.strip_prefix('@') {
                Some(relative) => project.path(relative).to_string(),
                None => (*value).to_owned(),
            };
            [(*flag).to_owned(), value]
        })
        .collect()
}

#[test]
fn required_sections_agrees_both_ways() {
    let project = TestProject::empty();
    project.write(
        "docs/good.md",
        "# Title\n\n## Scope\n\ntext\n\n## Risks\n\ntext\n",
    );
    project.write(
        "docs/thin.md",
        "# Title\n\n## Scope\n\n```md\n## Not a heading\n```\n",
    );
    let (code, stdout) = both_ways(
        &project,
        "required-sections",
        &args(
            &project,
            &[("--stage", "s"), ("--output-path", "@docs/good.md")],
        ),
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("\"pass\":true"), "{stdout}");
    let (code, stdout) = both_ways(
        &project,
        "required-sections",
        &args(
            &project,
            &[("--stage", "s"), ("--output-path", "@docs/thin.md")],
        ),
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("\"pass\":false"), "{stdout}");
    let (code, _) = both_ways(
        &project,
        "required-sections",
        &args(
            &project,
            &[("--stage", "s"), ("--output-path", "@docs/missing.md")],
        ),
    );
    assert_eq!(code, 1);
}

#[test]
fn upstream_coverage_agrees_both_ways() {
    let project = TestProject::empty();
    project.write(
        "record/inception/user-stories/stories.md",
        "# Stories\n\nBuilt from the requirements (see [[requirements]]).\n",
    );
    project.write(
        "record/inception/user-stories/other.md",
        "# Other\n\nOnly nfr-requirements are named here.\n",
    );
    for (file, expected) in [
        ("stories.md", "\"pass\":true"),
        ("other.md", "\"pass\":false"),
    ] {
        let path = format!("@record/inception/user-stories/{file}");
        let stem = file.trim_end_matches(".md");
        let (code, stdout) = both_ways(
            &project,
            "upstream-coverage",
            &args(
                &project,
                &[
                    ("--stage", "user-stories"),
                    ("--output-path", &path),
                    ("--consumes", "requirements:requirements-analysis"),
                    ("--deliverables", stem),
                ],
            ),
        );
        assert_eq!(code, 0, "{file}");
        assert!(stdout.contains(expected), "{file}: {stdout}");
    }
}

#[test]
fn linter_and_type_check_agree_both_ways_without_their_tools() {
    let project = TestProject::empty();
    project.write("package.json", "{}\n");
    project.write("src/a.ts", "export const a = 1;\n");
    let file_args = args(
        &project,
        &[("--stage", "code-generation"), ("--file-path", "@src/a.ts")],
    );
    let (code, stdout) = both_ways(&project, "linter", &file_args);
    assert_eq!(code, 127, "no eslint anywhere: tool unavailable");
    assert!(stdout.contains("reason"), "{stdout}");
    let (code, _) = both_ways(&project, "type-check", &file_args);
    assert_ne!(code, 0, "no tsconfig or no tsc is never a pass");
}

#[test]
fn claim_sources_and_traceability_agree_both_ways() {
    let project = TestProject::empty();
    project.write(
        "record/ideation/intent-capture/intent-statement.md",
        "# Intent\n\n## Goal\n\nSell more.\n",
    );
    project.write(
        "record/inception/user-stories/traceability.json",
        "{ not json",
    );
    let (code, stdout) = both_ways(
        &project,
        "claim-sources",
        &args(
            &project,
            &[
                ("--stage", "intent-capture"),
                (
                    "--output-path",
                    "@record/ideation/intent-capture/intent-statement.md",
                ),
            ],
        ),
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("\"pass\":false"), "{stdout}");
    let (code, stdout) = both_ways(
        &project,
        "traceability",
        &args(
            &project,
            &[
                ("--stage", "user-stories"),
                (
                    "--output-path",
                    "@record/inception/user-stories/traceability.json",
                ),
            ],
        ),
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("\"pass\":false"), "{stdout}");
    let (code, _) = both_ways(
        &project,
        "traceability",
        &args(
            &project,
            &[
                ("--stage", "user-stories"),
                ("--output-path", "@record/missing.json"),
            ],
        ),
    );
    assert_eq!(code, 1);
}

// --- Failure scenario S14 (docs/failure-modes.md): false reds -----------------------------------

/// S14: marker files (`*-questions.md`, `*-timestamp.md`) are exempt from the heading floor;
/// `requirements` is not found inside `nfr-requirements`; a citation of the producer's folder
/// counts; an input whose producer was skipped (nothing on disk) is not a failure; and a manual
/// fire on a file of the record the stage does not declare is refused before any row, naming
/// the declared outputs, while the write hook fires nothing on such a file (failure mode Z4;
/// files outside the record still fire). The gates only ever fire on declared deliverables (D6).
///
/// Also covered by the unit tests of `dispatch::workers::required_sections` and
/// `dispatch::workers::upstream_coverage`, and by `workers::upstream_coverage_agrees_both_ways`.
#[test]
fn scenario_14_markers_word_boundaries_producer_folders_and_skipped_producers_are_not_red() {
    let project = TestProject::empty();
    scenario::write_agent(&project);
    for id in ["required-sections", "upstream-coverage"] {
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &crate::support::manifest(id, ""),
        );
    }
    let stages = ".claude/aidlc-common/stages/inception";
    project.write(
        &format!("{stages}/requirements-analysis.md"),
        &scenario::stage_file(
            "requirements-analysis",
            "inception",
            &["requirements"],
            &[],
            &[],
            "[]",
        ),
    );
    project.write(
        &format!("{stages}/nfr-requirements.md"),
        &scenario::stage_file(
            "nfr-requirements",
            "inception",
            &["nfr-requirements"],
            &[],
            &[],
            "[]",
        ),
    );
    project.write(
        &format!("{stages}/user-stories.md"),
        &scenario::stage_file(
            "user-stories",
            "inception",
            &["stories", "user-stories-questions"],
            &["requirements-analysis", "nfr-requirements"],
            &["required-sections", "upstream-coverage"],
            "\n  - artifact: requirements\n    required: false\n  - artifact: nfr-requirements\n    required: false",
        ),
    );
    let compiled = scenario::run(&project, &["compile"]);
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    scenario::write_state(&project, "user-stories", "");
    let requirements = format!("{RECORD}/inception/requirements-analysis/requirements.md");
    project.write(&requirements, "# Requirements\n\n## Scope\n\n## Risks\n");
    project.write(
        &format!("{RECORD}/inception/nfr-requirements/nfr-requirements.md"),
        "# NFR\n\n## Scope\n\n## Risks\n",
    );
    let folder = format!("{RECORD}/inception/user-stories");
    let stories = format!("{folder}/stories.md");
    let questions = format!("{folder}/user-stories-questions.md");
    let fire_stories = |sensor: &str, path: &str| {
        scenario::verdict_line(&scenario::fire_on_stage(
            &project,
            sensor,
            "user-stories",
            path,
        ))
    };

    // Markers are not held to the two-heading floor; a deliverable is.
    project.write(&questions, "# Questions\n\n## Open\n");
    project.write(&stories, "# Stories\n\n## Only one section\n");
    let marker = fire_stories("required-sections", &questions);
    assert_eq!(marker["result"], "passed", "{marker}");
    assert!(marker.get("note").is_none(), "{marker}");
    assert_eq!(
        fire_stories("required-sections", &stories)["result"],
        "failed"
    );

    // `requirements` inside `nfr-requirements` is not a citation of it.
    project.write(
        &stories,
        "# Stories\n\nBuilt on the nfr-requirements.\n\n## A\n\n## B\n",
    );
    let missed = fire_stories("upstream-coverage", &stories);
    assert_eq!(missed["result"], "failed", "{missed}");
    assert_eq!(
        scenario::detail_findings(&project, &missed)["unreferenced"],
        serde_json::json!(["requirements"])
    );
    // The producer's folder counts as a citation.
    project.write(
        &stories,
        "# Stories\n\nFrom inception/requirements-analysis/ and the nfr-requirements.\n\n## A\n\n## B\n",
    );
    let cited = fire_stories("upstream-coverage", &stories);
    assert_eq!(cited["result"], "passed", "{cited}");
    assert!(cited.get("note").is_none(), "{cited}");
    // A producer the scope skipped left nothing on disk: its artifact is not asked for.
    project.remove(&requirements);
    project.write(
        &stories,
        "# Stories\n\nBuilt on the nfr-requirements.\n\n## A\n\n## B\n",
    );
    let skipped = fire_stories("upstream-coverage", &stories);
    assert_eq!(skipped["result"], "passed", "{skipped}");
    assert!(skipped.get("note").is_none(), "{skipped}");

    // A file of the record the stage does not declare (a diary beside the record's state, a
    // note in the stage's folder, another stage's deliverable) is refused before any row by a
    // manual fire, and fires nothing from the write hook.
    let rows = scenario::blocks(&project).len();
    let undeclared = [
        format!("{RECORD}/diary.md"),
        format!("{folder}/notes.md"),
        format!("{RECORD}/inception/nfr-requirements/nfr-requirements.md"),
    ];
    for path in &undeclared {
        if !project.exists(path) {
            project.write(path, "# Notes\n\n## One\n");
        }
        for sensor in ["required-sections", "upstream-coverage"] {
            let refused = scenario::fire_on_stage(&project, sensor, "user-stories", path);
            assert_eq!(refused.status, 2, "{sensor} on {path}: {}", refused.stderr);
            assert!(
                refused.stderr.contains(
                    "is not a declared output of stage \"user-stories\" (it declares: stories.md, user-stories-questions.md"
                ),
                "{}",
                refused.stderr
            );
        }
        assert_eq!(
            scenario::hook(&project, project.path(path).as_str()).status,
            0
        );
    }
    assert_eq!(
        scenario::blocks(&project).len(),
        rows,
        "nothing was recorded"
    );
    assert_eq!(scenario::drops(&project), "", "a rule, not a drop");
    // Outside the record nothing changes: the hook fires the matching sensors.
    project.write("docs/guide.md", "# Guide\n\n## A\n\n## B\n");
    assert_eq!(
        scenario::hook(&project, project.path("docs/guide.md").as_str()).status,
        0
    );
    assert_eq!(
        scenario::events(&scenario::blocks(&project), "SENSOR_FIRED").len(),
        rows / 2 + 2
    );
    // The stage's own deliverable still fires from the hook.
    assert_eq!(
        scenario::hook(&project, project.path(&stories).as_str()).status,
        0
    );
    assert_eq!(
        scenario::events(&scenario::blocks(&project), "SENSOR_FIRED").len(),
        rows / 2 + 4
    );
    scenario::assert_every_fire_paired(&project);
}

// --- Failure scenario S15 (docs/failure-modes.md): environment ----------------------------------

/// S15: only an old `eslint` on PATH, no lint configuration, a broken one, a `tsconfig` that
/// matches no inputs (TS18003) and a missing interpreter each give a classification that is
/// not green (tool-unavailable, or a script error), and the broken configuration is told apart
/// from the missing one. The tools are small fakes on a PATH of the test's own.
///
/// The two shipped code sensors' manifests name the reference's Bun workers, as a reference
/// install's do (`bun .claude/tools/aidlc-sensor-linter.ts`, `bun .claude/tools/aidlc.ts engine
/// sensor-type-check`), and there is no Bun on that PATH: they run natively all the same (D8),
/// so their verdicts below are the native checks'. Only the custom `bun-check` is
/// spawned, and without its interpreter it is `spawn-failed`.
///
/// Also covered by the unit tests of `dispatch::workers::linter` and
/// `dispatch::workers::type_check`, `workers::linter_and_type_check_agree_both_ways_without_their_tools`,
/// and, with the real eslint, tsc and Biome, by the node-tool tests that `.ci/run` enables.
#[test]
fn scenario_15_missing_old_or_broken_tools_are_never_green() {
    let project = TestProject::empty();
    scenario::write_agent(&project);
    for (id, reference_command) in [
        ("linter", "bun .claude/tools/aidlc-sensor-linter.ts"),
        (
            "type-check",
            "bun .claude/tools/aidlc.ts engine sensor-type-check",
        ),
    ] {
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &crate::support::manifest(id, "")
                .replace("\"**/*.md\"", "\"**/*.ts\"")
                .replace(
                    &format!("command: aidlc engine sensor-{id}"),
                    &format!("command: {reference_command}"),
                ),
        );
    }
    let interpreted = scenario::Sensor::gate("bun-check", PASS, "blocking")
        .command("bun .claude/tools/aidlc-sensor-bun-check.ts");
    project.write(
        ".claude/sensors/aidlc-bun-check.md",
        &interpreted.manifest(),
    );
    project.write(
        STAGE_FILE,
        &scenario::stage_file(
            STAGE,
            "inception",
            &["doc-a"],
            &[],
            &["linter", "type-check", "bun-check"],
            "[]",
        ),
    );
    assert_eq!(scenario::run(&project, &["compile"]).status, 0);
    scenario::write_state(&project, STAGE, "");
    project.write(DOC_A, "# A\n\n## Scope\n\n## Risks\n");
    project.write("package.json", "{}\n");
    project.write("src/app.ts", "export const a = 1;\n");
    let bin = project.path("bin");
    let path_env = [("PATH", bin.as_str())];
    let fire_with_path = |sensor: &str, path: &str| {
        let run = project.run_watched(
            &[
                "engine",
                "sensor",
                "fire",
                sensor,
                "--stage",
                STAGE,
                "--output-path",
                path,
            ],
            &path_env,
            None,
        );
        scenario::verdict_line(&run)
    };
    let executable = |relative: &str, body: &str| {
        project.write(relative, &format!("#!/bin/sh\n{body}\n"));
        let mut permissions = std::fs::metadata(project.path(relative))
            .unwrap()
            .permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(project.path(relative), permissions).unwrap();
    };

    // Only a distro eslint 6 on PATH: it cannot read flat config, so it is not used.
    executable(
        "bin/eslint",
        "if [ \"$1\" = --version ]; then echo v6.4.0; exit 0; fi\necho 'eslint 6 ran' >&2\nexit 2",
    );
    let old = fire_with_path("linter", "src/app.ts");
    assert_eq!(old["note"], "tool-unavailable", "{old}");

    // The project's eslint: no configuration (unavailable) versus a broken one (an error).
    executable(
        "node_modules/.bin/eslint",
        "if [ -f eslint.config.js ]; then\n  echo 'Oops! Something went wrong! :(' >&2\n  echo \"SyntaxError: Unexpected token '}'\" >&2\n  exit 2\nfi\necho \"ESLint couldn't find an eslint.config.(js|mjs|cjs) file.\" >&2\nexit 2",
    );
    let unconfigured = fire_with_path("linter", "src/app.ts");
    assert_eq!(unconfigured["note"], "tool-unavailable", "{unconfigured}");
    project.write("eslint.config.js", "export default [ } ];\n");
    let broken = fire_with_path("linter", "src/app.ts");
    assert_eq!(broken["result"], "passed", "{broken}");
    assert!(
        broken["note"]
            .as_str()
            .unwrap()
            .starts_with("script-error: "),
        "a broken configuration is an error, not an absent tool: {broken}"
    );

    // tsc finds no inputs (TS18003): a configuration problem, not a clean pass.
    project.write("tsconfig.json", "{\"include\": [\"lib\"]}\n");
    executable(
        "node_modules/.bin/tsc",
        "echo \"error TS18003: No inputs were found in config file '$PWD/tsconfig.json'. Specified 'include' paths were '[\\\"lib\\\"]' and 'exclude' paths were '[]'.\"\nexit 2",
    );
    let no_inputs = fire_with_path("type-check", "src/app.ts");
    assert_eq!(no_inputs["result"], "passed", "{no_inputs}");
    assert!(
        no_inputs["note"]
            .as_str()
            .unwrap()
            .starts_with("script-error: "),
        "{no_inputs}"
    );

    // A custom sensor whose interpreter is not installed: not evaluated, and a blocking gate
    // refuses.
    let missing = fire_with_path("bun-check", DOC_A);
    assert_eq!(
        missing["note"], "script-error: spawn-failed: ENOENT",
        "{missing}"
    );
    let check = project.run_watched(
        &[
            "gate",
            "check",
            "--no-record",
            "--format",
            "json",
            "--quiet",
        ],
        &path_env,
        None,
    );
    assert_eq!(check.status, 3, "{}", check.stderr);
    let start = project.run_watched(&["engine", "gate", "start", STAGE], &path_env, None);
    assert_eq!(start.status, 1, "{}", start.stderr);
    assert!(
        start.stderr.contains("script-error: spawn-failed: ENOENT"),
        "{}",
        start.stderr
    );
    scenario::assert_every_fire_paired(&project);
}
