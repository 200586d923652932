//! The reference's own pinning scenarios for `sensor list`, `sensor describe` and the `fire`
//! refusals (D48: t92 and t93), run against `aidlc engine sensor …` on the
//! default framework: the same output and the same words, with D9's exit statuses (2 where the
//! reference exits 1), and no audit file written by any refused fire.

use crate::support::scenario_project::{self as scenario, DOC_A, PASS, STAGE, STAGE_FILE};
use crate::support::{Run, TestProject};

const SHIPPED: [&str; 6] = [
    "claim-sources",
    "linter",
    "required-sections",
    "traceability",
    "type-check",
    "upstream-coverage",
];
const RECORD: &str = "aidlc/spaces/default/intents/260901-demo";
const DOC: &str =
    "aidlc/spaces/default/intents/260901-demo/inception/requirements-analysis/requirements.md";

/// The default framework, compiled, with one intent on `requirements-analysis` and its
/// deliverable.
fn project() -> TestProject {
    let project = TestProject::default_framework();
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "# State\n\n- **Current Stage**: requirements-analysis\n",
    );
    project.write(DOC, "# Requirements\n\n## Scope\n\n## Risks\n");
    project
}

fn sensor(project: &TestProject, args: &[&str]) -> Run {
    let mut full = vec!["engine", "sensor"];
    full.extend_from_slice(args);
    project.run(&full)
}

/// Nothing under the record but the state and the deliverable: no audit folder, no shard, no
/// detail folder.
fn assert_nothing_recorded(project: &TestProject, what: &str) {
    for folder in ["audit", ".aidlc-engine", ".aidlc-sensors"] {
        assert!(
            !project.exists(&format!("{RECORD}/{folder}")),
            "{what} wrote {folder}"
        );
    }
    assert!(
        !project.exists("aidlc/spaces/default/intents/audit"),
        "{what} wrote an audit folder at the space record root"
    );
}

/// t93: `list` prints one `id<TAB>kind<TAB>description` line per sensor, sorted by id.
#[test]
fn list_prints_every_sensor_as_three_tab_columns_sorted_by_id() {
    let project = project();
    let listed = sensor(&project, &["list"]);
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    assert!(listed.stdout.ends_with('\n'));
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert_eq!(lines.len(), SHIPPED.len(), "{}", listed.stdout);
    let ids: Vec<&str> = lines
        .iter()
        .map(|line| {
            let columns: Vec<&str> = line.split('\t').collect();
            assert_eq!(columns.len(), 3, "{line}");
            assert_eq!(columns[1], "deterministic", "{line}");
            assert!(!columns[2].is_empty(), "{line}");
            columns[0]
        })
        .collect();
    assert_eq!(ids, SHIPPED);
}

/// t93: `describe` prints the manifest's fields as `key: value` lines in the fixed order, with
/// `matches`; an unknown id is refused with the known ids; `--help` and `-h` print the usage.
#[test]
fn describe_prints_the_fixed_lines_and_refuses_an_unknown_id_with_the_known_ones() {
    let project = project();
    for id in SHIPPED {
        let described = sensor(&project, &["describe", id]);
        assert_eq!(described.status, 0, "{id}: {}", described.stderr);
        let keys: Vec<&str> = described
            .stdout
            .lines()
            .map(|line| line.split_once(": ").expect("a key: value line").0)
            .collect();
        let expected: Vec<&str> = [
            "id",
            "kind",
            "command",
            "default_severity",
            "fire_on",
            "description",
            "category",
            "matches",
            "timeout_seconds",
            "path",
        ]
        .into_iter()
        .filter(|key| *key != "fire_on" || keys.contains(&"fire_on"))
        .collect();
        assert_eq!(keys, expected, "{id}: {}", described.stdout);
        assert!(
            described.stdout.starts_with(&format!(
                "id: {id}\nkind: deterministic\ncommand: aidlc engine sensor-{id}\n"
            )),
            "{id}: {}",
            described.stdout
        );
        assert!(
            described
                .stdout
                .ends_with(&format!("path: .claude/sensors/aidlc-{id}.md\n")),
            "{id}: {}",
            described.stdout
        );
    }
    let unknown = sensor(&project, &["describe", "nope"]);
    assert_eq!(unknown.status, 2);
    assert_eq!(unknown.stdout, "");
    assert!(
        unknown.stderr.contains(&format!(
            "unknown sensor id: \"nope\". Known ids: {}",
            SHIPPED.join(", ")
        )),
        "{}",
        unknown.stderr
    );
    for help in ["--help", "-h"] {
        let shown = sensor(&project, &[help]);
        assert_eq!(shown.status, 0, "{help}: {}", shown.stderr);
        assert!(
            shown
                .stdout
                .contains("Usage: aidlc engine sensor [OPTIONS] <COMMAND>"),
            "{help}: {}",
            shown.stdout
        );
    }
}

/// t93: no subcommand, or one the reference does not know, is a usage error in its words.
#[test]
fn no_subcommand_or_an_unknown_one_is_refused_in_the_reference_s_words() {
    let project = project();
    let none = sensor(&project, &[]);
    assert_eq!(none.status, 2, "{}", none.stderr);
    assert_eq!(
        none.stderr,
        "Usage: aidlc-sensor <subcommand>. Valid: describe, fire, list. Run with --help for detail.\n"
    );
    let unknown = sensor(&project, &["bogus"]);
    assert_eq!(unknown.status, 2, "{}", unknown.stderr);
    assert!(
        unknown
            .stderr
            .starts_with("error: unknown subcommand: bogus. Valid: describe, fire, list.\n"),
        "{}",
        unknown.stderr
    );
}

/// t92, argv errors 1–7: each refusal is the reference's sentence, exits 2, and writes no audit
/// file; so do the flag-value errors of D19 and `describe` without an id (D47).
#[test]
fn every_fire_refusal_is_the_reference_s_sentence_and_writes_no_audit_file() {
    let project = project();
    let doc = project.path(DOC);
    let missing = project.path(&format!("{RECORD}/inception/requirements-analysis/gone.md"));
    let known_stages = "unknown stage slug: \"nope\". Known (first 10): ";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["fire"],
            "fire requires a sensor id as first positional arg".to_owned(),
        ),
        (
            vec![
                "fire",
                "--stage",
                "requirements-analysis",
                "--output-path",
                DOC,
            ],
            "fire requires a sensor id as first positional arg".to_owned(),
        ),
        (
            vec!["fire", "required-sections", "--output-path", DOC],
            "fire requires --stage <slug>".to_owned(),
        ),
        (
            vec![
                "fire",
                "required-sections",
                "--stage",
                "requirements-analysis",
            ],
            "fire requires --output-path <path>".to_owned(),
        ),
        (
            vec![
                "fire",
                "nope",
                "--stage",
                "requirements-analysis",
                "--output-path",
                DOC,
            ],
            format!(
                "unknown sensor id: \"nope\". Known ids: {}",
                SHIPPED.join(", ")
            ),
        ),
        (
            vec![
                "fire",
                "required-sections",
                "--stage",
                "nope",
                "--output-path",
                DOC,
            ],
            known_stages.to_owned(),
        ),
        (
            vec![
                "fire",
                "required-sections",
                "--stage",
                "requirements-analysis",
                "--output-path",
                missing.as_str(),
            ],
            format!("output path does not exist: {missing}"),
        ),
        (
            vec![
                "fire",
                "linter",
                "--stage",
                "requirements-analysis",
                "--output-path",
                DOC,
            ],
            format!(
                "output path \"{doc}\" does not match sensor \"linter\" filter \"**/*.{{ts,js}}\""
            ),
        ),
        (
            vec!["fire", "required-sections", "--stage"],
            "--stage expects a value, got end of arguments.".to_owned(),
        ),
        (
            vec!["fire", "required-sections", "--stage", "--output-path", DOC],
            "--stage expects a value, got another flag: \"--output-path\".".to_owned(),
        ),
        (
            vec![
                "fire",
                "required-sections",
                "--stage",
                "requirements-analysis",
                "--output-path",
            ],
            "--output-path expects a value, got end of arguments.".to_owned(),
        ),
        (vec!["describe"], "describe requires a sensor id".to_owned()),
        (
            vec!["describe", "--project-dir", "."],
            "describe requires a sensor id".to_owned(),
        ),
    ];
    for (args, expected) in &cases {
        let refused = sensor(&project, args);
        assert_eq!(refused.status, 2, "{args:?}: {}", refused.stderr);
        assert_eq!(refused.stdout, "", "{args:?}");
        assert!(
            refused.stderr.starts_with(&format!("error: {expected}")),
            "{args:?}: expected {expected:?}, got {}",
            refused.stderr
        );
        assert_nothing_recorded(&project, &format!("{args:?}"));
    }
    // The same deliverable fires once the arguments are right.
    let fired = sensor(
        &project,
        &[
            "fire",
            "required-sections",
            "--stage",
            "requirements-analysis",
            "--output-path",
            DOC,
        ],
    );
    assert_eq!(fired.status, 0, "{}", fired.stderr);
    assert!(project.exists(&format!("{RECORD}/audit")));
}

// --- Failure scenario S9 (docs/failure-modes.md): arguments -------------------------------------

/// S9: a flag followed by another flag and a trailing flag without a value are loud usage
/// errors, for the dispatcher (`fire`, exit 2, no row), the gate commands and the worker
/// protocol (`sensor-<id>`, exit 1 with the flag named, failure mode F9).
///
/// Section names never travel as a comma-separated flag here: `required-sections` reads the
/// headings a deliverable needs from its template file (the stage's `required_sections:` list is
/// shape-checked only), so a heading holding commas and quotes is one heading. This test asserts
/// that instead.
///
/// Also covered by `engine::pre_flight_refusals_write_no_audit_row` and the flag tests of each
/// worker (the unit tests of `src/runtime/worker_process.rs`).
#[test]
fn scenario_09_flags_without_values_are_loud_usage_errors() {
    let project = scenario::scenario_project(&[scenario::Sensor::write("probe", PASS, "**/*.md")]);
    project.write("src/app.ts", "export const a = 1;\n");
    let dispatcher_cases: [(&[&str], &str); 4] = [
        (
            &[
                "engine",
                "sensor",
                "fire",
                "probe",
                "--stage",
                "--output-path",
                DOC_A,
            ],
            "--stage expects a value, got another flag: \"--output-path\".",
        ),
        (
            &[
                "engine",
                "sensor",
                "fire",
                "probe",
                "--stage",
                STAGE,
                "--output-path",
            ],
            "--output-path expects a value, got end of arguments.",
        ),
        (
            &[
                "engine",
                "gate",
                "start",
                STAGE,
                "--override-blocking-sensors",
                "--user-input",
            ],
            "a value is required for '--user-input",
        ),
        (
            &["gate", "check", "--stage", "--no-record"],
            "a value is required for '--stage",
        ),
    ];
    for (args, expected) in dispatcher_cases {
        let refused = scenario::run(&project, args);
        assert_eq!(refused.status, 2, "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(expected),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let doc = project.path(DOC_A);
    let worker_cases: [(&[&str], &str); 4] = [
        (
            &[
                "engine",
                "sensor-required-sections",
                "--stage",
                STAGE,
                "--output-path",
            ],
            "--output-path expects a value, got end of arguments.",
        ),
        (
            &[
                "engine",
                "sensor-required-sections",
                "--templates-dir",
                "--stage",
                STAGE,
                "--output-path",
                doc.as_str(),
            ],
            "--templates-dir expects a value, got another flag: \"--stage\".",
        ),
        (
            &[
                "engine",
                "sensor-upstream-coverage",
                "--stage",
                STAGE,
                "--output-path",
                doc.as_str(),
                "--consumes",
            ],
            "--consumes expects a value, got end of arguments.",
        ),
        (
            &[
                "engine",
                "sensor-linter",
                "--stage",
                "--file-path",
                "src/app.ts",
            ],
            "missing value for --stage",
        ),
    ];
    for (args, expected) in worker_cases {
        let refused = scenario::run(&project, args);
        assert_eq!(refused.status, 1, "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(expected),
            "{args:?}: {}",
            refused.stderr
        );
        assert!(refused.stdout.is_empty(), "{args:?}: {}", refused.stdout);
    }
    assert!(
        !project.exists(&format!("{}/audit", scenario::RECORD)),
        "a usage error wrote a row"
    );

    // A heading with commas and quotes, from the template, is one heading.
    let headings = TestProject::empty();
    scenario::write_agent(&headings);
    headings.write(
        ".claude/sensors/aidlc-required-sections.md",
        &crate::support::manifest("required-sections", ""),
    );
    headings.write(
        STAGE_FILE,
        &scenario::stage_file(
            STAGE,
            "inception",
            &["doc-a"],
            &[],
            &["required-sections"],
            "[]",
        ),
    );
    assert_eq!(scenario::run(&headings, &["compile"]).status, 0);
    scenario::write_state(&headings, STAGE, "");
    headings.write(
        "aidlc/spaces/default/memory/templates/doc-a.md",
        "# Doc A\n\n## Scope, goals and \"non-goals\"\n\n## Risks, open\n",
    );
    headings.write(
        DOC_A,
        "# A\n\n## Scope\n\n## Goals and \"non-goals\"\n\n## Risks, open\n",
    );
    let failed = scenario::verdict_line(&scenario::fire(&headings, "required-sections", DOC_A));
    assert_eq!(failed["result"], "failed", "{failed}");
    let findings = scenario::detail_findings(&headings, &failed);
    assert_eq!(
        findings["template_missing"],
        serde_json::json!(["## Scope, goals and \"non-goals\""]),
        "{findings}"
    );
    headings.write(
        DOC_A,
        "# A\n\n## Scope, goals and \"non-goals\"\n\n## Risks, open\n",
    );
    let passed = scenario::verdict_line(&scenario::fire(&headings, "required-sections", DOC_A));
    assert_eq!(passed["result"], "passed", "{passed}");
    assert!(passed.get("note").is_none(), "{passed}");
}
