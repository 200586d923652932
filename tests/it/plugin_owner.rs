//! Issue 29 item 4: every downstream surface names the plugin a sensor or a finding comes
//! from (docs/decisions.md D50). `aidlc sensors` shows each sensor's plugin (the engine's
//! `sensor list|describe` bytes stay the reference's, D47), and a gate report names the plugin
//! of the stage that fired each finding, in every format.

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
