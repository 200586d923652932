//! Every downstream surface names the plugin a sensor or a finding comes
//! from (docs/decisions.md D50). `aidlc sensors` shows each sensor's plugin (the engine's
//! `sensor list|describe` bytes stay the reference's, D47), and a gate report names the plugin
//! of the stage that fired each finding, in every format.

use aidlc::report::ReportFormat;
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{Run, TestProject};

fn ok(run: &Run, what: &str) {
    assert_eq!(run.status, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
}

fn write(root: &Utf8Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A plugin `acme` beside the project: a stage importing its own blocking gate sensor, the
/// sensor's worker (which fails with one finding when the report says `BAD`), and nothing else.
fn acme_plugin(shelf: &Utf8Path) -> Utf8PathBuf {
    let root = shelf.join("acme");
    write(
        &root,
        ".aidlc-plugin/plugin.json",
        "{\"name\": \"acme\", \"version\": \"1.0.0\", \"dependencies\": [\"core\"]}\n",
    );
    write(
        &root,
        "stages/construction/acme-check.md",
        "---\nslug: acme-check\nname: acme check\nplugin: acme\nphase: construction\nexecution: CONDITIONAL\ncondition: When the acme plugin is active\nlead_agent: aidlc-quality-agent\nmode: inline\nproduces:\n  - acme-report\nrequires_stage:\n  - build-and-test\nsensors:\n  - acme-lint\nscopes:\n  - feature\ninputs: The build summary\noutputs: acme-report.md\n---\n\n# acme check\n\nWrite the report.\n",
    );
    write(
        &root,
        "sensors/aidlc-acme-lint.md",
        "---\nid: acme-lint\nkind: deterministic\ncommand: sh .claude/tools/aidlc-sensor-acme-lint.sh\ndefault_severity: blocking\nfire_on: gate\ndescription: Checks the acme report\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# acme-lint sensor\n",
    );
    write(
        &root,
        "tools/aidlc-sensor-acme-lint.sh",
        "#!/bin/sh\nfor arg in \"$@\"; do\n  case \"$prev\" in --output-path) file=\"$arg\";; esac\n  prev=\"$arg\"\ndone\nif grep -q BAD \"$file\"; then\n  echo '{\"pass\": false, \"findings_count\": 1, \"findings\": [{\"file\": \"'\"$file\"'\", \"line\": 1, \"rule\": \"acme-no-bad\", \"message\": \"the report says BAD\"}]}'\nelse\n  echo '{\"pass\": true, \"findings_count\": 0}'\nfi\n",
    );
    root
}

/// The default framework with `acme` composed into it.
fn project_with_acme() -> (TestProject, tempfile::TempDir) {
    let project = TestProject::default_framework();
    ok(&project.compile(), "compile");
    let shelf = tempfile::tempdir().unwrap();
    let shelf_root = Utf8PathBuf::from_path_buf(shelf.path().canonicalize().unwrap()).unwrap();
    let root = acme_plugin(&shelf_root);
    ok(
        &project.run(&["plugin", "add", root.as_str()]),
        "plugin add",
    );
    (project, shelf)
}

#[test]
fn sensors_names_each_sensor_s_plugin_and_the_engine_s_lines_stay_the_reference_s() {
    let (project, _shelf) = project_with_acme();

    let listed = project.run(&["sensors"]);
    ok(&listed, "sensors");
    insta::assert_snapshot!("sensors_list_human", listed.stdout);

    let described = project.run(&["sensors", "acme-lint"]);
    ok(&described, "sensors acme-lint");
    insta::assert_snapshot!("sensors_describe_plugin_human", described.stdout);
    let core = project.run(&["sensors", "linter"]);
    ok(&core, "sensors linter");
    assert!(
        core.stdout.ends_with("\nplugin: aidlc\n"),
        "{}",
        core.stdout
    );

    // The engine's describe is the same lines without the plugin (D47).
    let engine = project.run(&["engine", "sensor", "describe", "acme-lint"]);
    ok(&engine, "engine sensor describe");
    assert_eq!(
        format!("{}plugin: acme\n", engine.stdout),
        described.stdout,
        "`aidlc sensors ID` is the engine's describe plus the plugin line"
    );
    let engine_list = project.run(&["engine", "sensor", "list"]);
    ok(&engine_list, "engine sensor list");
    let mut without_plugin = String::new();
    for line in listed.stdout.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 4, "{line}");
        without_plugin.push_str(&[fields[0], fields[1], fields[3]].join("\t"));
        without_plugin.push('\n');
    }
    assert_eq!(without_plugin, engine_list.stdout);

    let json = project.run(&["sensors", "--format", "json"]);
    ok(&json, "sensors --format json");
    let sensors: Value = serde_json::from_str(&json.stdout).unwrap();
    let plugins: Vec<(String, String)> = sensors
        .as_array()
        .unwrap()
        .iter()
        .map(|sensor| {
            (
                sensor["id"].as_str().unwrap().to_owned(),
                sensor["plugin"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(plugins.contains(&("acme-lint".to_owned(), "acme".to_owned())));
    assert!(plugins.contains(&("linter".to_owned(), "aidlc".to_owned())));
    let one = project.run(&["sensors", "acme-lint", "--format", "json"]);
    ok(&one, "sensors acme-lint --format json");
    insta::assert_snapshot!("sensors_describe_plugin_json", one.stdout);
}

#[test]
fn sensors_refuses_an_unknown_id_and_an_unreadable_lock() {
    let (project, _shelf) = project_with_acme();
    let unknown = project.run(&["sensors", "acme-lnt"]);
    assert_eq!(unknown.status, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("unknown sensor id: \"acme-lnt\"")
            && unknown.stderr.contains("acme-lint"),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stdout.is_empty());

    project.write("aidlc.lock.json", "{ not json");
    let broken = project.run(&["sensors"]);
    assert_eq!(broken.status, 2, "{}", broken.stderr);
    assert!(broken.stderr.contains("lock file"), "{}", broken.stderr);
    assert!(broken.stdout.is_empty(), "{}", broken.stdout);
}

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";

/// A project with a core stage `first-stage` and the plugin stage `acme-check` (`plugin: acme`),
/// both binding the blocking gate sensor `shape`, which fails with one finding on a file that
/// says FAIL. Both deliverables say FAIL.
fn gate_project_with_a_plugin_stage() -> TestProject {
    let project = TestProject::empty();
    project.write(
        "shape.sh",
        "#!/bin/sh\nfile=\"$4\"\nif grep -q FAIL \"$file\"; then echo '{\"pass\":false,\"findings_count\":1,\"findings\":[{\"file\":\"'\"$file\"'\",\"line\":1,\"rule\":\"no-fail\",\"message\":\"the file says FAIL\"}]}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi\n",
    );
    project.write(
        ".claude/sensors/aidlc-shape.md",
        "---\nid: shape\nkind: deterministic\ncommand: sh shape.sh\ndefault_severity: blocking\nfire_on: gate\ndescription: A fake gate sensor\nmatches: \"**/*.md\"\n---\n\n# shape\n",
    );
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    let stage = |slug: &str, plugin: &str| {
        format!(
            "---\nslug: {slug}\n{plugin}phase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n  - {slug}-doc\nconsumes: []\nrequires_stage: []\nsensors: [shape]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# {slug}\n"
        )
    };
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &stage("first-stage", ""),
    );
    project.write(
        ".claude/aidlc-common/stages/inception/acme-check.md",
        &stage("acme-check", "plugin: acme\n"),
    );
    ok(&project.compile(), "compile");
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: acme-check\n",
    );
    for slug in ["first-stage", "acme-check"] {
        project.write(
            &format!("{RECORD}/inception/{slug}/{slug}-doc.md"),
            "# Doc\n\nFAIL\n",
        );
    }
    project
}

fn gate_check(project: &TestProject, extra: &[&str]) -> Run {
    let mut args = vec!["gate", "check", "--no-record", "--quiet"];
    args.extend(extra);
    let run = project.run(&args);
    assert_eq!(run.status, 1, "{}\n{}", run.stdout, run.stderr);
    run
}

/// The text with every `time="…"` and `"duration_ms": …` value replaced.
fn without_timings(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.to_owned();
        for (open, close) in [("time=\"", '"'), ("\"duration_ms\": ", ',')] {
            let mut from = 0;
            while let Some(start) = line[from..].find(open).map(|at| at + from + open.len()) {
                let end = line[start..]
                    .find(close)
                    .map_or(line.len(), |at| at + start);
                line.replace_range(start..end, "[TIME]");
                from = start + "[TIME]".len();
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Where `report` breaks `aidlc schema gate-report` (none: it validates).
fn gate_report_schema_errors(project: &TestProject, report: &Value) -> Vec<String> {
    let report_schema = project.run(&["schema", "gate-report"]);
    let report_schema: Value = serde_json::from_str(&report_schema.stdout).unwrap();
    let report_validator = jsonschema::draft202012::new(&report_schema).unwrap();
    report_validator
        .iter_errors(report)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect()
}

#[test]
fn gate_findings_name_the_plugin_of_their_stage_in_every_format() {
    let project = gate_project_with_a_plugin_stage();

    let human = gate_check(&project, &[]);
    let human_text: String = human
        .stdout
        .lines()
        .map(|line| match line.find(" skipped in ") {
            Some(at) if line.starts_with("checked ") => {
                format!("{} skipped in [TIME]\n", &line[..at])
            }
            _ => format!("{line}\n"),
        })
        .collect();
    insta::assert_snapshot!("gate_human", human_text);
    assert!(
        human
            .stdout
            .contains("stage first-stage, blocking; details not recorded (--no-record)\n"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(
            "stage acme-check, blocking; details not recorded (--no-record) [plugin acme]\n"
        ),
        "{}",
        human.stdout
    );

    let json: Value =
        serde_json::from_str(&gate_check(&project, &["--format", "json"]).stdout).unwrap();
    assert_eq!(
        gate_report_schema_errors(&project, &json),
        Vec::<String>::new(),
        "`aidlc schema gate-report` accepts the plugin key"
    );
    let fires = json["fires"].as_array().unwrap();
    for fire in fires {
        match fire["stage"].as_str().unwrap() {
            "acme-check" => assert_eq!(fire["plugin"], "acme"),
            _ => assert!(
                fire.get("plugin").is_none(),
                "a core stage's fire has no plugin key: {fire}"
            ),
        }
    }
    insta::assert_snapshot!(
        "gate_json_fires",
        without_timings(&serde_json::to_string_pretty(fires).unwrap())
    );

    let sarif: Value =
        serde_json::from_str(&gate_check(&project, &["--format", "sarif"]).stdout).unwrap();
    let sarif_schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sarif/sarif-schema-2.1.0.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let sarif_validator = jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&sarif_schema)
        .unwrap();
    let errors: Vec<String> = sarif_validator
        .iter_errors(&sarif)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert_eq!(
        errors,
        Vec::<String>::new(),
        "the SARIF 2.1.0 schema accepts properties.plugin"
    );
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    insta::assert_snapshot!(
        "gate_sarif_results",
        serde_json::to_string_pretty(results).unwrap()
    );

    let junit = gate_check(&project, &["--format", "junit"]);
    insta::assert_snapshot!("gate_junit", without_timings(&junit.stdout));

    let github = gate_check(&project, &["--format", "github"]);
    insta::assert_snapshot!("gate_github", project.scrub(&github.stdout));

    let gitlab = gate_check(&project, &["--format", "gitlab"]);
    insta::assert_snapshot!("gate_gitlab", gitlab.stdout);
}

#[test]
fn gate_merge_carries_the_plugin_through_and_refuses_shards_that_disagree_about_it() {
    let project = gate_project_with_a_plugin_stage();
    let whole: Value =
        serde_json::from_str(&gate_check(&project, &["--format", "json"]).stdout).unwrap();
    let mut files = Vec::new();
    for index in 1..=2 {
        let run = project.run(&[
            "gate",
            "check",
            "--no-record",
            "--quiet",
            "--allow-empty",
            "--format",
            "json",
            "--shard",
            &format!("{index}/2"),
        ]);
        let file = project.path(&format!("shard-{index}.json"));
        std::fs::write(&file, &run.stdout).unwrap();
        files.push(file);
    }
    let merge = |files: &[Utf8PathBuf]| {
        let mut args = vec!["gate", "merge", "--format", "json"];
        args.extend(files.iter().map(|file| file.as_str()));
        project.run(&args)
    };
    let merged = merge(&files);
    assert_eq!(merged.status, 1, "{}", merged.stderr);
    let merged: Value = serde_json::from_str(&merged.stdout).unwrap();
    let plugins = |report: &Value| -> Vec<(String, Value)> {
        report["fires"]
            .as_array()
            .unwrap()
            .iter()
            .map(|fire| {
                (
                    fire["stage"].as_str().unwrap().to_owned(),
                    fire.get("plugin").cloned().unwrap_or(Value::Null),
                )
            })
            .collect()
    };
    assert_eq!(plugins(&merged), plugins(&whole));
    assert!(plugins(&merged).contains(&("acme-check".to_owned(), Value::from("acme"))));

    // The shard holding the acme-check fire is edited to name another plugin.
    let (edited, _) = files
        .iter()
        .map(|file| (file, std::fs::read_to_string(file).unwrap()))
        .find(|(_, text)| text.contains("\"plugin\": \"acme\""))
        .expect("one shard fires acme-check");
    let text = std::fs::read_to_string(edited).unwrap();
    std::fs::write(
        edited,
        text.replace("\"plugin\": \"acme\"", "\"plugin\": \"other\""),
    )
    .unwrap();
    let refused = merge(&files);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("other") && refused.stderr.contains("acme"),
        "names both plugins: {}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty(), "{}", refused.stdout);

    // A plugin that is not a string is refused with its key.
    std::fs::write(
        edited,
        text.replace("\"plugin\": \"acme\"", "\"plugin\": 7"),
    )
    .unwrap();
    let mistyped = merge(&files);
    assert_eq!(mistyped.status, 2, "{}", mistyped.stderr);
    assert!(
        mistyped.stderr.contains("fires[].plugin"),
        "{}",
        mistyped.stderr
    );
}

/// A project without plugin stages gets the reports it always got: no plugin in any format
/// (the cross-shard disagreement itself is refused in `report::merge_tests`).
#[test]
fn a_core_stage_s_report_has_no_plugin_anywhere() {
    let project = gate_project_with_a_plugin_stage();
    project.remove(".claude/aidlc-common/stages/inception/acme-check.md");
    ok(&project.compile(), "compile");
    // Every format but human, which is read below.
    let others = ReportFormat::all()
        .iter()
        .filter(|format| **format != ReportFormat::Human);
    for format in others.map(|format| format.name()) {
        let run = gate_check(&project, &["--format", format]);
        assert!(!run.stdout.contains("plugin"), "{format}: {}", run.stdout);
    }
    let human = gate_check(&project, &[]);
    assert!(!human.stdout.contains("[plugin"), "{}", human.stdout);
}

/// A blocking binding that never fired on a plugin stage names the plugin in every format, and
/// `gate merge` carries it through (strictly read), as for a fire; the core stage's fire in the
/// same report names none.
#[test]
fn a_never_fired_binding_on_a_plugin_stage_names_the_plugin_in_every_format() {
    let project = gate_project_with_a_plugin_stage();
    project.remove(&format!("{RECORD}/inception/acme-check/acme-check-doc.md"));

    let human = gate_check(&project, &[]);
    assert!(
        human.stdout.contains(
            "stage acme-check of intent 261130-demo, blocking; its glob is set in this manifest [plugin acme]"
        ),
        "{}",
        human.stdout
    );

    let json: Value =
        serde_json::from_str(&gate_check(&project, &["--format", "json"]).stdout).unwrap();
    assert_eq!(
        gate_report_schema_errors(&project, &json),
        Vec::<String>::new(),
        "`aidlc schema gate-report` accepts the plugin key"
    );
    let unfired = json["unfired_bindings"].as_array().unwrap();
    assert_eq!(unfired.len(), 1, "{json:#}");
    assert_eq!(unfired[0]["stage"], "acme-check");
    assert_eq!(unfired[0]["plugin"], "acme");
    for fire in json["fires"].as_array().unwrap() {
        assert_eq!(fire["stage"], "first-stage");
        assert!(fire.get("plugin").is_none(), "{fire}");
    }

    let sarif: Value =
        serde_json::from_str(&gate_check(&project, &["--format", "sarif"]).stdout).unwrap();
    let never_fired: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|result| result["properties"]["note"] == "never-fired")
        .collect();
    assert_eq!(never_fired.len(), 1, "{sarif:#}");
    assert_eq!(never_fired[0]["properties"]["plugin"], "acme");
    assert!(
        never_fired[0]["message"]["text"]
            .as_str()
            .unwrap()
            .ends_with(" [plugin acme]"),
        "{:#}",
        never_fired[0]
    );

    for format in ["github", "gitlab"] {
        let run = gate_check(&project, &["--format", format]);
        let lines: Vec<&str> = run
            .stdout
            .lines()
            .filter(|line| line.contains("was not evaluated on stage acme-check"))
            .collect();
        assert_eq!(lines.len(), 1, "{format}: {}", run.stdout);
        assert!(lines[0].contains("[plugin acme]"), "{format}: {}", lines[0]);
    }

    let shard = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "json",
        "--shard",
        "1/1",
    ]);
    let file = project.path("shard-1.json");
    std::fs::write(&file, &shard.stdout).unwrap();
    let merge = || project.run(&["gate", "merge", "--format", "json", file.as_str()]);
    let merged = merge();
    assert_eq!(merged.status, 1, "{}", merged.stderr);
    let merged: Value = serde_json::from_str(&merged.stdout).unwrap();
    assert_eq!(merged["unfired_bindings"][0]["plugin"], "acme");

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"plugin\": \"acme\""), "{text}");
    std::fs::write(&file, text.replace("\"plugin\": \"acme\"", "\"plugin\": 7")).unwrap();
    let mistyped = merge();
    assert_eq!(mistyped.status, 2, "{}", mistyped.stderr);
    assert!(
        mistyped.stderr.contains("unfired_bindings[].plugin"),
        "{}",
        mistyped.stderr
    );
}
