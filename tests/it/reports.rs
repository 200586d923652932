//! The CI reports of `gate check` that people and GitHub accept, end to end through the real
//! binary: typed findings from the shipped and custom sensors, pretty human output grouped by
//! file and rule with paths from the working folder, SARIF that Microsoft's validator with the
//! GitHub rules accepts, `JUnit` XML valid against the vendored schema (advisory findings are
//! no `<failure>`), repository-relative paths in a monorepo, `--report FORMAT=PATH` into special
//! files and through links, `gate merge` re-planned from the project (a shard with no fire of
//! its own is no error), the step summary, colours and the progress line, a worker's stderr
//! kept, the verdict's exit status whatever happens to stdout, and the compile's CI formats.

use std::io::Read as _;
use std::process::Stdio;

use aidlc::report::ReportFormat;
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::scenario_project::{self as scenario, DOC_A, DOC_B, SHAPE};
use crate::support::{GRAPH, Run, TestProject, example_project, node_tool};

/// The monorepo every test here uses: a git work tree (its `.git` folder is enough) with the
/// AI-DLC project in `apps/shop`, holding the example intent of `aidlc init --example`.
struct Monorepo {
    repository: TestProject,
    project: Utf8PathBuf,
}

const PROJECT_PATH: &str = "apps/shop";

impl Monorepo {
    fn example() -> Self {
        let repository = TestProject::empty();
        std::fs::create_dir_all(repository.path(".git")).unwrap();
        let project = repository.path(PROJECT_PATH);
        std::fs::create_dir_all(&project).unwrap();
        let init = repository.run_in(&project, &["init", ".", "--example"]);
        assert_eq!(init.status, 0, "{}", init.stderr);
        let compiled = repository.run_in(&project, &["compile"]);
        assert_eq!(compiled.status, 0, "{}", compiled.stderr);
        Self {
            repository,
            project,
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with_env(args, &[])
    }

    fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.repository.command(&self.project, args);
        command.env_remove("GITHUB_WORKSPACE");
        command.env_remove("GITHUB_STEP_SUMMARY");
        command.envs(env.iter().copied());
        Run::from(command.stdin(Stdio::null()).output().unwrap())
    }

    fn check(&self, extra: &[&str]) -> Run {
        let mut args = vec!["gate", "check", "--no-record", "--quiet"];
        args.extend(extra);
        self.run(&args)
    }

    fn check_json(&self, extra: &[&str]) -> Value {
        let mut args = vec!["--format", "json"];
        args.extend(extra);
        let run = self.check(&args);
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}\n{}", run.stdout, run.stderr))
    }
}

fn findings(json: &Value) -> Vec<&Value> {
    json["fires"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|fire| fire["findings"].as_array().unwrap())
        .collect()
}

/// Must have 1: the example's claim-sources failure shows every finding with its own message,
/// rule and line, in every format; nothing says "N finding(s)" where the messages exist.
#[test]
fn every_shipped_finding_has_its_own_message_rule_and_line() {
    let repo = Monorepo::example();
    let json = repo.check_json(&[]);
    let claims: Vec<&Value> = json["fires"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|fire| fire["sensor_id"] == "claim-sources" && fire["result"] == "failed")
        .collect();
    assert!(!claims.is_empty(), "the example has claim-sources failures");
    for fire in &claims {
        let listed = fire["findings"].as_array().unwrap();
        assert_eq!(
            u64::try_from(listed.len()).unwrap(),
            fire["findings_count"].as_u64().unwrap(),
            "one finding per counted finding: {fire}"
        );
        for finding in listed {
            assert_ne!(finding["rule"], "unlisted-findings", "{finding}");
            assert!(!finding["message"].as_str().unwrap().contains("finding(s)"));
        }
        assert!(
            listed
                .iter()
                .any(|finding| finding["line"].as_u64().is_some()),
            "claim-sources knows the lines of its claims: {fire}"
        );
    }
    // The github format shows ten annotations per level (GitHub's own limit) and says how many
    // more there are; the others show every finding.
    let github = repo.check(&["--format", "github"]);
    assert!(
        github.stdout.contains("more warning annotations not shown"),
        "{}",
        github.stdout
    );
    // Every other format shows every finding (github is capped above).
    let uncapped = ReportFormat::all()
        .iter()
        .filter(|format| **format != ReportFormat::Github);
    for format in uncapped.map(|format| format.name()) {
        let run = repo.check(&["--format", format]);
        assert!(
            !run.stdout.contains("finding(s)"),
            "{format}: {}",
            run.stdout
        );
        for finding in findings(&json) {
            let message = finding["message"].as_str().unwrap();
            let escaped = message
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;");
            assert!(
                run.stdout.contains(message)
                    || run.stdout.contains(&escaped)
                    || run.stdout.contains(&message.replace('"', "\\\"")),
                "{format} lacks {message:?}"
            );
        }
    }
}

/// Must have 2: a finding is drawn as the compile draws its diagnostics, with the line of the
/// deliverable it points at, a label and a help; then the summary.
#[test]
fn human_output_shows_the_source_line_of_each_finding() {
    let repo = Monorepo::example();
    let json = repo.check_json(&[]);
    let with_line = findings(&json)
        .into_iter()
        .find(|finding| finding["line"].as_u64().is_some())
        .expect("a finding with a line");
    let file = with_line["file"].as_str().unwrap();
    let line = with_line["line"].as_u64().unwrap();
    let text = std::fs::read_to_string(repo.project.join(file)).unwrap();
    let source_line = text
        .lines()
        .nth(usize::try_from(line).unwrap() - 1)
        .unwrap()
        .trim();
    let run = repo.check(&[]);
    let shown = format!("{line} │ ");
    assert!(run.stdout.contains(&shown), "{}", run.stdout);
    assert!(run.stdout.contains(source_line), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("╭─[{file}:{line}")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("help: "), "{}", run.stdout);
    assert!(
        run.stdout
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("not recorded"),
        "the summary comes last: {}",
        run.stdout
    );
}

/// Must have 3: GitHub code scanning's rules (Microsoft's validator, `--rule-kind "Gh;Sarif"`)
/// report no error on the example's SARIF, whose URIs are relative to the repository root.
#[test]
fn the_sarif_validator_with_the_github_rules_accepts_the_log() {
    let repo = Monorepo::example();
    let run = repo.check(&["--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for result in results {
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.starts_with("apps/shop/"), "{uri}");
    }
    let Some(bin) = node_tool("sarif-multitool") else {
        return;
    };
    let validator = bin
        .parent()
        .unwrap()
        .join("../@microsoft/sarif-multitool-linux/Sarif.Multitool");
    assert!(
        validator.is_file(),
        "{validator} is missing; run .ci/install-node-tools"
    );
    let log = repo.repository.path("gate.sarif");
    std::fs::write(&log, &run.stdout).unwrap();
    let (errors, warnings) = validate_sarif(&validator, &log);
    assert_eq!(errors, Vec::<String>::new(), "GitHub would refuse the log");
    assert!(warnings.len() < 5, "{warnings:?}");

    // The validator is live: a log without the rule fields GitHub needs (no fullDescription, no help, name
    // equal to id, no region) gets GitHub's errors.
    let mut broken = sarif.clone();
    for rule in broken["runs"][0]["tool"]["driver"]["rules"]
        .as_array_mut()
        .unwrap()
    {
        let rule = rule.as_object_mut().unwrap();
        rule.remove("fullDescription");
        rule.remove("help");
    }
    let broken_log = repo.repository.path("broken.sarif");
    std::fs::write(&broken_log, broken.to_string()).unwrap();
    let (errors, _) = validate_sarif(&validator, &broken_log);
    assert!(
        errors.iter().any(|error| error.starts_with("GH")),
        "{errors:?}"
    );
}

/// A rule's `helpUri` is a link anyone can open: the manifest at the commit on GitHub inside
/// Actions, and none at all elsewhere (never a `file://` URI into a local folder).
#[test]
fn sarif_help_links_are_https_manifests_or_left_out() {
    let repo = Monorepo::example();
    let args = [
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "sarif",
    ];
    let outside = ["GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"].map(|name| (name, ""));
    let local: Value = serde_json::from_str(&repo.run_with_env(&args, &outside).stdout).unwrap();
    let rules = local["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert!(!rules.is_empty());
    for rule in rules {
        assert!(rule.get("helpUri").is_none(), "{rule}");
    }
    let actions = [
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_REPOSITORY", "example/shop"),
        ("GITHUB_SHA", "0123abc"),
    ];
    let linked: Value = serde_json::from_str(&repo.run_with_env(&args, &actions).stdout).unwrap();
    let uris: Vec<&str> = linked["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|rule| rule["helpUri"].as_str())
        .collect();
    assert!(!uris.is_empty(), "{linked}");
    for uri in uris {
        assert!(
            uri.starts_with("https://github.com/example/shop/blob/0123abc/apps/shop/"),
            "{uri}"
        );
    }
}

/// A GitLab issue's `check_name` names the sensor once: the sensor id for a finding whose rule
/// is the sensor itself, `sensor/rule` only when the finding has a rule of its own.
#[test]
fn gitlab_check_names_name_the_sensor_once() {
    let project = custom_project(&[
        (
            "no-todo",
            "advisory",
            r#"echo '{"pass":false,"findings_count":1,"findings":[{"message":"a TODO is left","line":4}]}'"#,
        ),
        (
            "glossary",
            "advisory",
            r#"echo '{"pass":false,"findings_count":1,"findings":[{"message":"term foo is undefined","line":4,"rule":"undefined-term"}]}'"#,
        ),
    ]);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "gitlab",
    ]);
    let issues: Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["check_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["no-todo", "glossary/undefined-term"],
        "{}",
        run.stdout
    );
}

/// `(errors, warnings)` of the validator's own SARIF output, each as `RULE: message`.
fn validate_sarif(validator: &Utf8Path, log: &Utf8Path) -> (Vec<String>, Vec<String>) {
    let output = log.with_extension("validation.sarif");
    let _ = std::fs::remove_file(&output);
    let status = std::process::Command::new(validator)
        .args(["validate", "--rule-kind", "Gh;Sarif", "--output"])
        .arg(output.as_str())
        .arg(log.as_str())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&output).unwrap_or_else(|error| {
            panic!(
                "the validator wrote no report ({error}): {}",
                String::from_utf8_lossy(&status.stdout)
            )
        }))
        .unwrap();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for result in report["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let text = format!(
            "{}: {}",
            result["ruleId"].as_str().unwrap_or_default(),
            result["message"]
        );
        match result["level"].as_str() {
            Some("error") => errors.push(text),
            _ => warnings.push(text),
        }
    }
    (errors, warnings)
}

/// Must have 5: the `JUnit` XML is valid against the schema GitLab and Jenkins read.
#[test]
fn junit_is_valid_against_the_vendored_schema() {
    let repo = Monorepo::example();
    let run = repo.check(&["--format", "junit"]);
    assert!(run.stdout.starts_with("<?xml"), "{}", run.stdout);
    assert!(
        run.stdout.contains("<testsuite name=\"intent-capture\""),
        "{}",
        run.stdout
    );
    let Some(xmllint) = crate::support::system_tool("xmllint") else {
        return;
    };
    let schema =
        Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit-10.xsd");
    let report = repo.repository.path("gate.xml");
    std::fs::write(&report, &run.stdout).unwrap();
    let validation = std::process::Command::new(&xmllint)
        .args(["--noout", "--schema", schema.as_str(), report.as_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&validation.stderr);
    assert!(validation.status.success(), "{stderr}");
    assert!(stderr.contains("validates"), "{stderr}");
    // The check is live: an attribute the schema does not allow fails it.
    std::fs::write(
        &report,
        run.stdout
            .replacen("<testcase ", "<testcase file=\"x\" ", 1),
    )
    .unwrap();
    let refused = std::process::Command::new(&xmllint)
        .args(["--noout", "--schema", schema.as_str(), report.as_str()])
        .output()
        .unwrap();
    assert!(!refused.status.success());
}

/// The `JUnit` report holds what ran and what did not pass: one test case per fire and per
/// blocking binding that never fired, no test case for a binding skipped with nothing to run
/// on (the summary suite counts those by reason) and no pseudo-test for the summary.
#[test]
fn junit_cases_are_the_fires_and_the_skips_are_counted() {
    let repo = Monorepo::example();
    let json = repo.check_json(&[]);
    let fires = json["fires"].as_array().unwrap().len();
    let unfired = json["unfired_bindings"].as_array().unwrap().len();
    let skips = json["skips"].as_array().unwrap().len();
    assert!(
        skips > fires,
        "the example leaves most stages without deliverables"
    );
    let xml = repo.check(&["--format", "junit"]).stdout;
    assert_eq!(xml.matches("<testcase ").count(), fires + unfired, "{xml}");
    assert!(!xml.contains("<skipped"), "{xml}");
    assert!(!xml.contains("name=\"summary\""), "{xml}");
    assert!(
        xml.contains(&format!(
            "<property name=\"aidlc.skipped\" value=\"{skips}\"/>"
        )),
        "{xml}"
    );
    assert!(xml.contains("skipped (no deliverable): "), "{xml}");
}

/// Must have 3 and 4: in a monorepo, annotations and code-scanning URIs start at the repository
/// root; with `GITHUB_WORKSPACE` set, that is the root.
#[test]
fn paths_are_relative_to_the_repository_in_a_monorepo() {
    let repo = Monorepo::example();
    let run = repo.check(&["--format", "github"]);
    let annotated: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.contains("file="))
        .collect();
    assert!(!annotated.is_empty(), "{}", run.stdout);
    for line in annotated {
        assert!(line.contains("file=apps/shop/"), "{line}");
    }
    let workspace = repo.repository.path("apps");
    let run = repo.run_with_env(
        &[
            "gate",
            "check",
            "--no-record",
            "--quiet",
            "--format",
            "gitlab",
        ],
        &[("GITHUB_WORKSPACE", workspace.as_str())],
    );
    let issues: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
    for issue in &issues {
        let path = issue["location"]["path"].as_str().unwrap();
        assert!(path.starts_with("shop/"), "{path}");
    }
}

/// Must have 4: the step summary is Markdown that ends with a newline, so two runs in one step
/// do not fuse, and it tables the counts per stage.
#[test]
fn the_step_summary_ends_with_a_newline_and_tables_each_stage() {
    let repo = Monorepo::example();
    let summary = repo.repository.path("summary.md");
    for _ in 0..2 {
        let run = repo.run_with_env(
            &[
                "gate",
                "check",
                "--no-record",
                "--quiet",
                "--format",
                "github",
            ],
            &[("GITHUB_STEP_SUMMARY", summary.as_str())],
        );
        assert_eq!(run.status, 0, "{}", run.stderr);
    }
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.matches("### aidlc gate check").count(), 2);
    assert!(!text.contains("were written###"), "{text}");
    assert!(
        text.contains("\n\n### aidlc gate check") || text.contains("\n### aidlc gate check"),
        "{text}"
    );
    assert!(text.contains("| stage | fires | passed | failed | not evaluated | skipped |"));
    assert!(text.contains("| `intent-capture` |"), "{text}");
}

/// Must have 5: `--report FORMAT=PATH` writes each extra report in the same run, and a report
/// that cannot be written turns a pass into exit 2.
#[test]
fn reports_are_written_beside_the_printed_format() {
    let repo = Monorepo::example();
    let sarif = repo.repository.path("out/gate.sarif");
    let junit = repo.repository.path("out/gate.xml");
    std::fs::create_dir_all(sarif.parent().unwrap()).unwrap();
    let run = repo.check(&[
        "--format",
        "github",
        "--report",
        &format!("sarif={sarif}"),
        "--report",
        &format!("junit={junit}"),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("::"), "{}", run.stdout);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(written["version"], "2.1.0");
    assert!(
        std::fs::read_to_string(&junit)
            .unwrap()
            .starts_with("<?xml")
    );
    std::fs::write(repo.repository.path("a-file"), "not a folder\n").unwrap();
    let nowhere = repo.repository.path("a-file/gate.sarif");
    let run = repo.check(&["--report", &format!("sarif={nowhere}")]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot write the sarif report"),
        "{}",
        run.stderr
    );
    let bad = repo.check(&["--report", "pdf=x.pdf"]);
    assert_eq!(bad.status, 2);
    assert!(
        bad.stderr.contains("unknown report format"),
        "{}",
        bad.stderr
    );
}

/// Must have 6: the shards of 1, 2 and 5 merge into the unsharded run's report, with its exit
/// status; a missing, doubled or foreign shard is refused.
#[test]
fn merged_shards_equal_the_unsharded_run() {
    let repo = Monorepo::example();
    let whole = repo.check_json(&[]);
    let whole_status = repo.check(&["--format", "json"]).status;
    for count in [1_u32, 2, 5] {
        let mut files = Vec::new();
        for index in 1..=count {
            let run = repo.check(&[
                "--format",
                "json",
                "--allow-empty",
                "--shard",
                &format!("{index}/{count}"),
            ]);
            let file = repo
                .repository
                .path(&format!("shard-{index}-of-{count}.json"));
            std::fs::write(&file, &run.stdout).unwrap();
            files.push(file);
        }
        let mut args = vec!["gate", "merge", "--format", "json"];
        args.extend(files.iter().map(|file| file.as_str()));
        let merged = repo.run(&args);
        assert_eq!(merged.status, whole_status, "{count}: {}", merged.stderr);
        let merged: Value = serde_json::from_str(&merged.stdout).unwrap();
        assert_eq!(
            without_timings(merged),
            without_timings(whole.clone()),
            "{count} shards"
        );
        if count == 5 {
            let mut missing = vec!["gate", "merge"];
            missing.extend(files[..4].iter().map(|file| file.as_str()));
            let run = repo.run(&missing);
            assert_eq!(run.status, 2);
            assert!(
                run.stderr.contains("shard 5/5 of the plan is missing"),
                "{}",
                run.stderr
            );
            let mut doubled = vec!["gate", "merge"];
            doubled.extend(files.iter().map(|file| file.as_str()));
            doubled.push(files[0].as_str());
            let run = repo.run(&doubled);
            assert_eq!(run.status, 2);
            assert!(
                run.stderr.contains("shard 1/5 is given twice"),
                "{}",
                run.stderr
            );
            let human = {
                let mut args = vec!["gate", "merge"];
                args.extend(files.iter().map(|file| file.as_str()));
                repo.run(&args)
            };
            assert!(human.stdout.contains("checked "), "{}", human.stdout);
        }
    }
    let other = repo.check(&[
        "--format",
        "json",
        "--stage",
        "intent-capture",
        "--shard",
        "1/2",
        "--allow-empty",
    ]);
    let other_file = repo.repository.path("other.json");
    std::fs::write(&other_file, &other.stdout).unwrap();
    let first = repo.repository.path("shard-2-of-2.json");
    let run = repo.run(&["gate", "merge", other_file.as_str(), first.as_str()]);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr.contains("is a shard of another check"),
        "{}",
        run.stderr
    );
}

fn without_timings(mut report: Value) -> Value {
    report["duration_ms"] = Value::Null;
    for fire in report["fires"].as_array_mut().unwrap() {
        fire["duration_ms"] = Value::Null;
    }
    report
}

/// Must have 2: colours follow `--color` and the variables the Rust CLI ecosystem reads.
#[test]
fn colours_follow_the_flag_and_the_variables() {
    let repo = Monorepo::example();
    let colored = |args: &[&str], env: &[(&str, &str)]| -> bool {
        let mut command = repo.repository.command(&repo.project, args);
        command.env_remove("NO_COLOR");
        for name in ["CLICOLOR_FORCE", "FORCE_COLOR", "CLICOLOR", "TERM"] {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
        let run = Run::from(command.stdin(Stdio::null()).output().unwrap());
        run.stdout.contains('\u{1b}')
    };
    let check = ["gate", "check", "--no-record", "--quiet"];
    let with = |flag: &'static str| -> Vec<&'static str> {
        let mut args = check.to_vec();
        args.extend(["--color", flag]);
        args
    };
    assert!(!colored(&check, &[]), "a pipe gets no colour");
    assert!(colored(&with("always"), &[]));
    assert!(
        colored(&with("always"), &[("NO_COLOR", "1")]),
        "the flag wins"
    );
    assert!(
        !colored(&with("never"), &[("FORCE_COLOR", "1")]),
        "the flag wins"
    );
    assert!(colored(&check, &[("CLICOLOR_FORCE", "1")]));
    assert!(colored(&check, &[("FORCE_COLOR", "1")]));
    assert!(!colored(&check, &[("FORCE_COLOR", "0")]));
    assert!(!colored(&check, &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]));
    let bad = repo.run(&["gate", "check", "--color", "sometimes"]);
    assert_eq!(bad.status, 2);
}

/// Must have 2: the progress line is drawn through indicatif, throttled, and cleared at the end;
/// it is not drawn into a pipe unless asked.
#[test]
fn the_progress_line_is_cleared_and_only_drawn_when_asked() {
    let repo = Monorepo::example();
    let forced = repo.run(&["gate", "check", "--no-record", "--progress", "always"]);
    assert!(forced.stderr.contains("fires"), "{:?}", forced.stderr);
    assert!(
        forced.stderr.contains("\r\u{1b}[2K"),
        "cleared: {:?}",
        forced.stderr
    );
    assert!(
        !forced.stderr.contains("checked 12 fires"),
        "{:?}",
        forced.stderr
    );
    let piped = repo.run(&["gate", "check", "--no-record"]);
    assert!(!piped.stderr.contains('\u{1b}'), "{:?}", piped.stderr);
    let never = repo.run(&["gate", "check", "--no-record", "--progress", "never"]);
    assert!(!never.stderr.contains('\u{1b}'), "{:?}", never.stderr);
}

/// A project with one gate stage and custom sensors written as shell scripts.
fn custom_project(workers: &[(&str, &str, &str)]) -> TestProject {
    let project = TestProject::empty();
    for (id, severity, body) in workers {
        project.write(&format!("{id}.sh"), &format!("#!/bin/sh\n{body}\n"));
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &format!(
                "---\nid: {id}\nkind: deterministic\ncommand: sh {id}.sh\ndefault_severity: {severity}\nfire_on: gate\ndescription: A custom sensor\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {id}\n"
            ),
        );
    }
    let ids: Vec<&str> = workers.iter().map(|(id, _, _)| *id).collect();
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &format!(
            "---\nslug: first-stage\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n  - doc-a\nconsumes: []\nrequires_stage: []\nsensors: [{}]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# first-stage\n",
            ids.join(", ")
        ),
    );
    assert_eq!(project.compile().status, 0);
    let record = "aidlc/spaces/default/intents/261130-demo";
    project.write(
        &format!("{record}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n",
    );
    project.write(
        &format!("{record}/inception/first-stage/doc-a.md"),
        "# A\n\nline three\nline four has the term foo\n",
    );
    project
}

/// Must have 1: a custom worker's `findings[]` items are read with their message, line, column,
/// rule and help; one that only counts gets one finding saying so.
#[test]
fn custom_findings_are_read_and_a_bare_count_is_said() {
    let project = custom_project(&[
        (
            "glossary",
            "advisory",
            r#"echo '{"pass":false,"findings_count":1,"findings":[{"message":"term foo is undefined","line":4,"column":27,"rule":"undefined-term","help":"define foo in the glossary"}]}'"#,
        ),
        (
            "counter",
            "advisory",
            r#"echo '{"pass":false,"findings_count":3}'"#,
        ),
    ]);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "json",
    ]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let fires = json["fires"].as_array().unwrap();
    let glossary = &fires[0]["findings"][0];
    assert_eq!(glossary["message"], "term foo is undefined");
    assert_eq!(glossary["line"], 4);
    assert_eq!(glossary["column"], 27);
    assert_eq!(glossary["rule"], "undefined-term");
    assert_eq!(glossary["help"], "define foo in the glossary");
    let counter = &fires[1]["findings"];
    assert_eq!(counter.as_array().unwrap().len(), 1);
    assert_eq!(
        counter[0]["message"],
        "failed with 3 findings and listed none of them"
    );
    let human = project.run(&["gate", "check", "--no-record", "--quiet"]);
    assert!(
        human.stdout.contains("4 │ line four has the term foo"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("help: define foo in the glossary"),
        "{}",
        human.stdout
    );
}

/// Must have 7: the last lines of a script error's stderr reach the report with `--no-record`,
/// the finding's help, and the detail file when recording.
#[test]
fn a_script_errors_stderr_is_kept() {
    let project = custom_project(&[(
        "broken",
        "advisory",
        "echo 'reading rules.md' >&2\necho 'error: rules.md line 3: unexpected |' >&2\nexit 2",
    )]);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "json",
    ]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let fire = &json["fires"][0];
    assert_eq!(fire["note"], "script-error: exit-2");
    assert_eq!(
        fire["stderr_tail"],
        "reading rules.md\nerror: rules.md line 3: unexpected |"
    );
    let human = project.run(&["gate", "check", "--no-record", "--quiet"]);
    assert!(
        human
            .stdout
            .contains("error: rules.md line 3: unexpected |"),
        "{}",
        human.stdout
    );
    let recorded = project.run(&["gate", "check", "--quiet", "--format", "json"]);
    let json: Value = serde_json::from_str(&recorded.stdout).unwrap();
    let detail = json["fires"][0]["detail_path"]
        .as_str()
        .expect("a detail file");
    let body = project.read(detail);
    assert!(body.contains("**Note**: script-error: exit-2"), "{body}");
    assert!(
        body.contains("## Worker stderr (last lines)\n\n```text\nreading rules.md\nerror: rules.md line 3: unexpected |\n```\n"),
        "{body}"
    );
}

/// A failed fire's detail file keeps the reference's body, then our stderr section.
#[test]
fn a_failures_detail_file_keeps_the_reference_body_first() {
    let project = custom_project(&[(
        "noisy",
        "advisory",
        "echo 'a warning on stderr' >&2\necho '{\"pass\":false,\"findings_count\":1}'",
    )]);
    let run = project.run(&["gate", "check", "--quiet", "--format", "json"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let body = project.read(json["fires"][0]["detail_path"].as_str().unwrap());
    let reference_end = body.find("```\n").unwrap();
    assert!(body.contains("## Findings\n\n```json\n"), "{body}");
    assert!(
        body[reference_end..].starts_with(
            "```\n\n## Worker stderr (last lines)\n\n```text\na warning on stderr\n```\n"
        ),
        "{body}"
    );
}

/// Must have 4: a blocking sensor that was not evaluated is an `::error` (the job exits 3).
#[test]
fn a_blocking_non_evaluation_is_an_error_annotation() {
    let project = custom_project(&[("gone", "blocking", "exit 127")]);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "github",
    ]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(
        run.stdout
            .lines()
            .any(|line| line.starts_with("::error ") && line.contains("gone not evaluated")),
        "{}",
        run.stdout
    );
}

/// Must have 4: `compile --check --format github|json` reports drift as annotations or JSON,
/// one per changed stage file; `compile --format sarif` prints one log.
#[test]
fn compile_drift_and_sarif_in_ci_formats() {
    let repo = Monorepo::example();
    let stage = ".claude/aidlc-common/stages/ideation/intent-capture.md";
    let path = repo.project.join(stage);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("execution: ALWAYS", "execution: CONDITIONAL", 1),
    )
    .unwrap();
    let github = repo.run(&["compile", "--check", "--force", "--format", "github"]);
    assert_eq!(github.status, 1, "{}", github.stderr);
    let annotation = github
        .stdout
        .lines()
        .find(|line| {
            line.starts_with(
                "::error file=apps/shop/.claude/aidlc-common/stages/ideation/intent-capture.md",
            )
        })
        .unwrap_or_else(|| panic!("{}", github.stdout));
    assert!(
        annotation.contains("stage intent-capture is changed"),
        "{annotation}"
    );
    let json = repo.run(&["compile", "--check", "--force", "--format", "json"]);
    let drift: Value = serde_json::from_str(json.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(drift["kind"], "drift");
    assert_eq!(drift["stage"], "intent-capture");
    let sarif = repo.run(&["compile", "--check", "--force", "--format", "sarif"]);
    let log: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(log["runs"][0]["results"][0]["ruleId"], "stale-output");
    let watch = repo.run(&["compile", "--watch", "--format", "sarif"]);
    assert_eq!(watch.status, 2);
}

// --- Finding messages name files from the repository root ---------------------------------------

/// The example intent's claim-sources finding on its missing questions file.
const QUESTIONS_FILE_MISSING: &str = "questions file missing: ";

#[test]
fn finding_messages_name_files_from_the_repository_root_in_every_format() {
    let (project, record) = example_project();
    let expected = format!(
        "{QUESTIONS_FILE_MISSING}{record}/ideation/intent-capture/intent-capture-questions.md"
    );
    for format in ReportFormat::all().iter().map(|format| format.name()) {
        let run = project.run(&["gate", "check", "--no-record", "--format", format]);
        assert_eq!(run.status, 0, "{format}: {}", run.stderr);
        assert!(run.stdout.contains(&expected), "{format}: {}", run.stdout);
        // SARIF names the repository's root once, as the base of its relative URIs.
        let machine_paths: Vec<&str> = run
            .stdout
            .lines()
            .filter(|line| line.contains(project.root.as_str()) && !line.contains("file://"))
            .collect();
        assert!(
            machine_paths.is_empty(),
            "{format} names this machine's folders: {machine_paths:?}"
        );
    }
    // The detail file keeps the worker's own JSON, as the reference's worker writes it.
    let recorded = project.run(&["gate", "check", "--format", "json"]);
    assert_eq!(recorded.status, 0, "{}", recorded.stderr);
    let report: serde_json::Value = serde_json::from_str(&recorded.stdout).expect("JSON");
    let detail = report["fires"]
        .as_array()
        .expect("fires")
        .iter()
        .find(|fire| fire["sensor_id"] == "claim-sources")
        .and_then(|fire| fire["detail_path"].as_str())
        .expect("a detail file");
    assert!(
        project.read(detail).contains(&format!(
            "{QUESTIONS_FILE_MISSING}{}/{record}/ideation/intent-capture/intent-capture-questions.md",
            project.root
        )),
        "{}",
        project.read(detail)
    );
}

#[test]
fn in_a_monorepo_finding_messages_carry_the_projects_folder_in_the_repository() {
    let repository = TestProject::empty();
    std::fs::create_dir_all(repository.path(".git")).expect("a .git folder");
    let project_dir = repository.path("services/shop");
    std::fs::create_dir_all(&project_dir).expect("the project folder");
    let init = repository.run_in(&project_dir, &["init", "--example", "."]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    assert_eq!(repository.run_in(&project_dir, &["compile"]).status, 0);
    let run = repository.run_in(
        &project_dir,
        &["gate", "check", "--no-record", "--format", "github"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "{QUESTIONS_FILE_MISSING}services/shop/aidlc/spaces/default/intents/"
        )),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains(repository.root.as_str()),
        "{}",
        run.stdout
    );
}

// --- Failure scenario S17 (docs/failure-modes.md): CI mode --------------------------------------

/// S17, for `gate check` (this engine's CI mode): a missing, malformed or `null` stage graph
/// is a clear error with exit 2, never a crash or a fallback; advisory findings never change the
/// exit code (unless `--strict`); the JSON document, GitHub annotations and SARIF are produced;
/// exit codes follow D9 (0 verified, 1 findings, 2 environment, 3 could not
/// evaluate).
///
/// Doctor ("on a pristine project doctor writes nothing", its rows and its exit code) is
/// `doctor`'s; a CI check that writes nothing is scenario 18.
///
/// Also covered by `gate::exit_codes_follow_severity_and_evaluation`,
/// `gate::no_intent_is_an_error_not_a_green_check`,
/// `gate::a_check_that_evaluated_nothing_exits_2_and_says_why`,
/// `engine::duplicate_stage_slugs_and_a_graph_that_is_not_an_array_are_refused`, and the
/// unit tests of `src/report/` (every format; SARIF against the OASIS schema).
#[test]
fn scenario_17_gate_check_exit_codes_and_formats_and_a_broken_graph_is_an_error() {
    // Fails on a file containing WARN.
    const COVER: &str = "if grep -q WARN \"$4\"; then echo '{\"pass\":false,\"findings_count\":1}'; else echo '{\"pass\":true,\"findings_count\":0}'; fi";
    let project = scenario::scenario_project(&[
        scenario::Sensor::gate("shape", SHAPE, "blocking"),
        scenario::Sensor::gate("cover", COVER, "advisory"),
    ]);
    let check = |extra: &[&str]| {
        let mut args = vec!["gate", "check", "--no-record", "--quiet"];
        args.extend(extra);
        scenario::run(&project, &args)
    };
    assert_eq!(check(&[]).status, 0, "everything verified");

    project.write(DOC_A, "# A\n\n## Scope\n\nWARN\n\n## Risks\n");
    let advisory = check(&[]);
    assert_eq!(
        advisory.status, 0,
        "an advisory finding is reported, not fatal: {}",
        advisory.stderr
    );
    assert!(advisory.stdout.contains("cover"), "{}", advisory.stdout);
    assert_eq!(check(&["--strict"]).status, 1);

    project.write(DOC_B, "# B\n\n## Scope\n\nFAIL\n\n## Risks\n");
    let (blocking, report) = scenario::gate_check_json(&project, &["--no-record"]);
    assert_eq!(blocking.status, 1, "{}", blocking.stderr);
    assert_eq!(report["counts"]["blocking_failed"], 1, "{report}");
    assert_eq!(report["counts"]["failed"], 2, "{report}");
    let github = check(&["--format", "github"]);
    assert_eq!(github.status, 1);
    assert!(
        github
            .stdout
            .lines()
            .any(|line| line.starts_with(&format!("::error file={DOC_B}"))),
        "{}",
        github.stdout
    );
    assert!(
        github
            .stdout
            .lines()
            .any(|line| line.starts_with(&format!("::warning file={DOC_A}"))),
        "{}",
        github.stdout
    );
    let sarif = check(&["--format", "sarif"]);
    assert_eq!(sarif.status, 1);
    let sarif: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().unwrap().len(),
        2,
        "{sarif}"
    );

    project.write("workers/shape.sh", "#!/bin/sh\nexit 127\n");
    let (unevaluated, report) = scenario::gate_check_json(&project, &["--no-record"]);
    assert_eq!(unevaluated.status, 3, "{}", unevaluated.stderr);
    assert_eq!(report["counts"]["blocking_not_evaluated"], 2, "{report}");

    let graph = project.read(GRAPH);
    for (broken, expected) in [
        (None, "cannot read the stage graph"),
        (Some("{not json\n"), "is malformed"),
        (
            Some("null\n"),
            "recompile: the graph is not one this version wrote",
        ),
    ] {
        match broken {
            None => project.remove(GRAPH),
            Some(text) => {
                project.write(GRAPH, text);
            }
        }
        for format in ["human", "json"] {
            let failed = check(&["--format", format]);
            assert_eq!(failed.status, 2, "{broken:?} {format}: {}", failed.stderr);
            assert!(
                failed.stderr.contains(expected),
                "{broken:?}: {}",
                failed.stderr
            );
            assert!(
                failed.stderr.contains("aidlc compile"),
                "what to do: {}",
                failed.stderr
            );
            assert!(
                !failed.stderr.contains("internal error"),
                "{}",
                failed.stderr
            );
        }
    }
    project.write(GRAPH, &graph);
    project.remove("aidlc");
    let no_intent = check(&[]);
    assert_eq!(no_intent.status, 2, "{}", no_intent.stderr);
}

const RECORD: &str = "aidlc/spaces/default/intents/261130-demo";
const STAGE_DIR: &str = "aidlc/spaces/default/intents/261130-demo/inception/first-stage";

/// Fails with one finding (on line 2) on a file containing FAIL, else passes.
const SHAPE_WORKER: &str = r#"if grep -q FAIL "$4"; then echo '{"pass":false,"findings_count":1,"findings":[{"message":"the file says FAIL","line":2,"rule":"no-fail"}]}'; else echo '{"pass":true,"findings_count":0}'; fi"#;

/// A compiled project whose stage `first-stage` produces `doc-1` … `doc-<deliverables>` (each
/// on disk, failing for the shape worker when its number is in `failing`), with one gate sensor
/// per `(id, severity)`, each running [`SHAPE_WORKER`].
fn gate_project(sensors: &[(&str, &str)], deliverables: usize, failing: &[usize]) -> TestProject {
    let project = TestProject::empty();
    for (id, severity) in sensors {
        project.write(&format!("{id}.sh"), &format!("#!/bin/sh\n{SHAPE_WORKER}\n"));
        project.write(
            &format!(".claude/sensors/aidlc-{id}.md"),
            &format!(
                "---\nid: {id}\nkind: deterministic\ncommand: sh {id}.sh\ndefault_severity: {severity}\nfire_on: gate\ndescription: A shape sensor\ncategory: demo\nmatches: \"**/*.md\"\n---\n\n# {id}\n"
            ),
        );
    }
    let ids: Vec<&str> = sensors.iter().map(|(id, _)| *id).collect();
    let produces = (1..=deliverables)
        .map(|index| format!("  - doc-{index}"))
        .collect::<Vec<_>>()
        .join("\n");
    project.write(
        ".claude/agents/aidlc-demo-agent.md",
        "---\nname: aidlc-demo-agent\ndisplay_name: Demo Agent\n---\n# Demo\n",
    );
    project.write(
        ".claude/aidlc-common/stages/inception/first-stage.md",
        &format!(
            "---\nslug: first-stage\nphase: inception\nexecution: ALWAYS\ncondition: Always runs\nlead_agent: aidlc-demo-agent\nsupport_agents: []\nmode: inline\nproduces:\n{produces}\nconsumes: []\nrequires_stage: []\nsensors: [{}]\nscopes: [feature]\ninputs: Nothing\noutputs: docs\n---\n\n# first-stage\n",
            ids.join(", ")
        ),
    );
    let compiled = project.compile();
    assert_eq!(compiled.status, 0, "{}", compiled.stderr);
    project.write(
        &format!("{RECORD}/aidlc-state.md"),
        "- **Current Stage**: first-stage\n",
    );
    for index in 1..=deliverables {
        let body = if failing.contains(&index) {
            "# Doc\nFAIL here\n"
        } else {
            "# Doc\nfine\n"
        };
        project.write(&format!("{STAGE_DIR}/doc-{index}.md"), body);
    }
    project
}

/// `aidlc <args>` in `cwd` whose stdout's reader has gone before it writes anything (the read
/// end of the pipe is closed at once), as `aidlc … | true` does.
fn run_with_stdout_closed(project: &TestProject, cwd: &Utf8Path, args: &[&str]) -> Run {
    let mut child = project
        .command(cwd, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run aidlc");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let status = child.wait().expect("wait for aidlc");
    Run {
        status: status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr,
    }
}

// --- The exit status is the verdict's whatever happens to stdout --------------------------------

#[test]
fn a_failing_gate_exits_1_when_the_reader_of_stdout_is_gone() {
    let project = gate_project(&[("shape", "blocking")], 2, &[1]);
    for format in ReportFormat::all().iter().map(|format| format.name()) {
        let run = run_with_stdout_closed(
            &project,
            &project.root,
            &["gate", "check", "--no-record", "--format", format],
        );
        assert_eq!(run.status, 1, "{format}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("stdout was closed by its reader before the output ended"),
            "{format}: {}",
            run.stderr
        );
    }
    let passing = gate_project(&[("shape", "blocking")], 2, &[]);
    let run = run_with_stdout_closed(
        &passing,
        &passing.root,
        &["gate", "check", "--no-record", "--format", "json"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        !run.stderr.contains("stdout was closed"),
        "a passing check whose reader left is quiet: {}",
        run.stderr
    );
}

#[test]
fn a_pipeline_with_pipefail_sees_the_failing_gate_through_head() {
    let project = gate_project(&[("shape", "blocking")], 2, &[1]);
    let aidlc = env!("CARGO_BIN_EXE_aidlc");
    let script = format!(
        "set -o pipefail; '{aidlc}' gate check --no-record --format json | true; echo \"status=$?\""
    );
    let run = Run::from(
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&project.root)
            .env("NO_COLOR", "1")
            .output()
            .expect("bash"),
    );
    assert!(
        run.stdout.contains("status=1"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn compile_and_gate_merge_keep_their_status_when_stdout_is_closed() {
    let project = gate_project(&[("shape", "blocking")], 2, &[1]);
    project.write(
        ".claude/aidlc-common/stages/inception/broken.md",
        "---\nslug: broken\nphase: inception\n---\n",
    );
    let run = run_with_stdout_closed(&project, &project.root, &["compile", "--format", "json"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    project.remove(".claude/aidlc-common/stages/inception/broken.md");
    let listed = run_with_stdout_closed(&project, &project.root, &["engine", "sensor", "list"]);
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    let shard = project.run(&["gate", "check", "--no-record", "--format", "json"]);
    assert_eq!(shard.status, 1, "{}", shard.stderr);
    project.write("whole.json", &shard.stdout);
    let merged = run_with_stdout_closed(
        &project,
        &project.root,
        &["gate", "merge", "whole.json", "--format", "json"],
    );
    assert_eq!(merged.status, 1, "{}", merged.stderr);
}

// --- `--report FORMAT=PATH` whatever PATH is ----------------------------------------------------

/// Whether this process may make device nodes (root), for the tests that make their own.
fn can_make_devices() -> bool {
    rustix::process::geteuid().is_root()
}

/// A character device `major, minor` at `path` (1,3 is null, 1,7 is full), made with `mknod`.
fn make_char_device(path: &Utf8Path, major: u32, minor: u32) {
    let made = std::process::Command::new("mknod")
        .args([path.as_str(), "c", &major.to_string(), &minor.to_string()])
        .status()
        .expect("mknod");
    assert!(made.success(), "mknod {path}");
}

fn is_char_device(path: &Utf8Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_char_device())
}

#[test]
fn a_report_into_a_character_device_stays_a_device_and_a_full_one_is_an_error() {
    if !can_make_devices() {
        println!("SKIPPED: making device nodes with mknod needs root");
        return;
    }
    let project = gate_project(&[("shape", "blocking")], 1, &[]);
    let null = project.path("null");
    make_char_device(&null, 1, 3);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        &format!("json={null}"),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(is_char_device(&null), "the device was replaced by a file");
    let full = project.path("full");
    make_char_device(&full, 1, 7);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        &format!("sarif={full}"),
    ]);
    assert_eq!(
        run.status, 2,
        "a report that could not be written: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("cannot write the sarif report to")
            && run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
    assert!(is_char_device(&full), "the device was replaced by a file");
}

/// Reads a FIFO from before `aidlc` starts until `aidlc` has written and closed it, for at most
/// half a minute, without ever blocking: a FIFO that `aidlc` replaced instead of writing is read as
/// nothing.
fn read_fifo_in_background(fifo: &Utf8Path) -> std::thread::JoinHandle<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed())
        .open(fifo)
        .expect("open the FIFO's read end");
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let mut received = Vec::new();
        let mut buffer = [0_u8; 8192];
        while started.elapsed() < std::time::Duration::from_secs(30) {
            match reader.read(&mut buffer) {
                // No writer (yet, or any more): done once something came.
                Ok(0) if !received.is_empty() => break,
                Ok(0) => std::thread::sleep(std::time::Duration::from_millis(10)),
                Ok(n) => received.extend_from_slice(&buffer[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(error) => panic!("reading the FIFO: {error}"),
            }
        }
        received
    })
}

#[test]
fn a_report_into_a_fifo_reaches_its_reader() {
    use std::os::unix::fs::FileTypeExt as _;
    let project = gate_project(&[("shape", "blocking")], 1, &[1]);
    let fifo = project.path("report.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.as_str())
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let reader = read_fifo_in_background(&fifo);
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        &format!("json={fifo}"),
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let received = String::from_utf8(reader.join().unwrap()).unwrap();
    let document: Value = serde_json::from_str(&received)
        .unwrap_or_else(|error| panic!("the reader got no report ({error}): {received:?}"));
    assert_eq!(document["counts"]["blocking_failed"], 1);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced by a file"
    );
}

#[test]
fn a_report_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let project = gate_project(&[("shape", "blocking")], 1, &[]);
    project.write("reports/real.json", "old");
    let link = project.path("latest.json");
    std::os::unix::fs::symlink("reports/real.json", &link).unwrap();
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--report",
        "json=latest.json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    let document: Value = serde_json::from_str(&project.read("reports/real.json")).unwrap();
    assert_eq!(document["schema_version"], 2);
}

#[test]
fn a_report_into_process_substitution_and_dev_stdout_is_written() {
    let project = gate_project(&[("shape", "blocking")], 1, &[1]);
    let aidlc = env!("CARGO_BIN_EXE_aidlc");
    let script = format!(
        "'{aidlc}' gate check --no-record --quiet --format json --report 'junit=>(cat > got.xml)'; status=$?; wait; echo \"status=$status\""
    )
    .replace("'junit=>(cat > got.xml)'", "junit=>(cat > got.xml)");
    let run = Run::from(
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&project.root)
            .env("NO_COLOR", "1")
            .output()
            .expect("bash"),
    );
    assert!(
        run.stdout.contains("status=1"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    // `wait` does not wait for a process substitution in every bash; give `cat` a moment.
    let started = std::time::Instant::now();
    while !read_or_empty(&project, "got.xml").ends_with("</testsuites>\n")
        && started.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        read_or_empty(&project, "got.xml").starts_with("<?xml"),
        "{}",
        run.stderr
    );
    let run = project.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "github",
        "--report",
        "json=/dev/stdout",
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("\"schema_version\": 2"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("::error file="), "{}", run.stdout);
}

fn read_or_empty(project: &TestProject, relative: &str) -> String {
    std::fs::read_to_string(project.path(relative)).unwrap_or_default()
}

// --- `gate merge` checks the shards against the project's own plan ------------------------------

/// The JSON reports of shards 1/2 and 2/2 of `project`, parsed.
fn two_shards(project: &TestProject) -> [Value; 2] {
    [1, 2].map(|index| {
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
        assert!(run.status == 0 || run.status == 1, "{}", run.stderr);
        serde_json::from_str(&run.stdout).expect("a shard's JSON report")
    })
}

/// `aidlc gate merge` of `shards` written as `shard-1.json`, `shard-2.json`.
fn merge_shards(project: &TestProject, shards: &[Value]) -> Run {
    let mut args = vec!["gate".to_owned(), "merge".to_owned()];
    for (index, shard) in shards.iter().enumerate() {
        let name = format!("shard-{}.json", index + 1);
        project.write(&name, &serde_json::to_string_pretty(shard).unwrap());
        args.push(name);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    project.run(&args)
}

/// Which shard holds the failing fire (on `doc-1.md`), and its place in that shard's fires.
fn failing_fire(shards: &[Value; 2]) -> (usize, usize) {
    for (shard, report) in shards.iter().enumerate() {
        for (place, fire) in report["fires"].as_array().unwrap().iter().enumerate() {
            if fire["result"] == "failed" {
                return (shard, place);
            }
        }
    }
    panic!("no failing fire in {shards:?}");
}

/// A project whose six deliverables spread over both shards, `doc-1.md` failing a blocking
/// sensor.
fn sharded_project() -> TestProject {
    let project = gate_project(&[("shape", "blocking")], 6, &[1]);
    let shards = two_shards(&project);
    for shard in &shards {
        assert!(
            !shard["fires"].as_array().unwrap().is_empty(),
            "each shard has fires of its own: {shard}"
        );
    }
    project
}

fn assert_refused(run: &Run, words: &[&str]) {
    assert_eq!(run.status, 2, "refused with exit 2: {}", run.stderr);
    for word in words {
        assert!(run.stderr.contains(word), "{word:?} in {}", run.stderr);
    }
    assert!(run.stdout.is_empty(), "nothing rendered: {}", run.stdout);
}

#[test]
fn unchanged_shards_merge_with_the_unsharded_status() {
    let project = sharded_project();
    let run = merge_shards(&project, &two_shards(&project));
    assert_eq!(run.status, 1, "{}", run.stderr);
}

#[test]
fn a_failure_turned_into_a_pass_is_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    let (shard, place) = failing_fire(&shards);
    shards[shard]["fires"][place]["result"] = "passed".into();
    let run = merge_shards(&project, &shards);
    assert_refused(
        &run,
        &[
            &format!("shard-{}.json", shard + 1),
            "is passed but carries 1 finding",
        ],
    );
    let mut shards = two_shards(&project);
    shards[shard]["fires"][place]["result"] = "passed".into();
    shards[shard]["fires"][place]["findings"] = Value::Array(Vec::new());
    let run = merge_shards(&project, &shards);
    assert_refused(&run, &["findings_count 1"]);
}

#[test]
fn a_blocking_fire_turned_advisory_is_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    let (shard, place) = failing_fire(&shards);
    shards[shard]["fires"][place]["severity"] = "advisory".into();
    let run = merge_shards(&project, &shards);
    let plan_index = shards[shard]["fires"][place]["plan_index"].to_string();
    assert_refused(
        &run,
        &[
            &format!("shard-{}.json (shard {}/2)", shard + 1, shard + 1),
            &format!("fire {plan_index} (shape on"),
            "is advisory in the report, but the project's graph makes it blocking",
        ],
    );
}

#[test]
fn a_fire_moved_to_another_shard_is_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    let (from, place) = failing_fire(&shards);
    let to = 1 - from;
    let fire = shards[from]["fires"].as_array_mut().unwrap().remove(place);
    let fires = shards[to]["fires"].as_array_mut().unwrap();
    fires.push(fire);
    fires.sort_by_key(|fire| fire["plan_index"].as_u64());
    let run = merge_shards(&project, &shards);
    assert_refused(
        &run,
        &[&format!("shard-{}.json (shard {}/2)", to + 1, to + 1)],
    );
    assert!(
        run.stderr.contains("is not one of this shard's fires")
            || run.stderr.contains("is missing from the report"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_edited_plan_id_and_an_unrepresentable_number_are_refused() {
    let project = sharded_project();
    let mut shards = two_shards(&project);
    for shard in &mut shards {
        shard["plan"]["id"] = "0".repeat(64).into();
    }
    let run = merge_shards(&project, &shards);
    assert_refused(
        &run,
        &[
            "shard-1.json (shard 1/2): plan 000000000000",
            "is not the plan the project gives",
        ],
    );
    for huge in ["1e300", "-1", "18446744073709551616"] {
        let mut shards = two_shards(&project);
        shards[0]["duration_ms"] = serde_json::from_str(huge).unwrap();
        let run = merge_shards(&project, &shards);
        assert_refused(&run, &["shard-1.json", "`duration_ms` is missing or not"]);
        let mut shards = two_shards(&project);
        shards[1]["fires"][0]["duration_ms"] = serde_json::from_str(huge).unwrap();
        let run = merge_shards(&project, &shards);
        assert_refused(&run, &["shard-2.json", "`fires[].duration_ms`"]);
    }
}

#[test]
fn merge_re_plans_from_the_project_it_is_given() {
    let project = sharded_project();
    let shards = two_shards(&project);
    // The same reports against a project whose stage has one deliverable less.
    project.remove(&format!("{STAGE_DIR}/doc-6.md"));
    let run = merge_shards(&project, &shards);
    assert_refused(&run, &["is not the plan the project gives"]);
    // From another folder, `--project-dir` names the project.
    let elsewhere = TestProject::empty();
    for (index, shard) in shards.iter().enumerate() {
        elsewhere.write(
            &format!("shard-{}.json", index + 1),
            &serde_json::to_string(shard).unwrap(),
        );
    }
    project.write(&format!("{STAGE_DIR}/doc-6.md"), "# Doc\nfine\n");
    let run = elsewhere.run(&[
        "gate",
        "merge",
        "shard-1.json",
        "shard-2.json",
        "--project-dir",
        project.root.as_str(),
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
}

// --- A shard with no fire of its own ------------------------------------------------------------

/// The README's matrix: four shards of a plan with one fire, three of them with no fire of
/// their own; each exits 0 (the one with the fire by its verdict), and the merge gives the
/// unsharded status.
#[test]
fn shards_with_no_fire_of_their_own_pass_and_the_merge_judges_the_whole_plan() {
    let project = gate_project(&[("shape", "advisory")], 1, &[]);
    let mut files = Vec::new();
    let mut empty = 0;
    for index in 1..=4 {
        let run = project.run(&[
            "gate",
            "check",
            "--no-record",
            "--format",
            "github",
            "--shard",
            &format!("{index}/4"),
            "--report",
            &format!("json=gate-{index}.json"),
        ]);
        assert_eq!(run.status, 0, "shard {index}/4: {}", run.stderr);
        let report: Value =
            serde_json::from_str(&project.read(&format!("gate-{index}.json"))).unwrap();
        if report["fires"].as_array().unwrap().is_empty() {
            empty += 1;
            assert!(
                run.stderr.contains(&format!(
                    "note: shard {index}/4 has no fire of its own (the plan's 1 fire is in other shards)"
                )),
                "{}",
                run.stderr
            );
            assert_eq!(report["nothing_checked"], Value::Null);
            let human = project.run(&[
                "gate",
                "check",
                "--no-record",
                "--shard",
                &format!("{index}/4"),
            ]);
            assert!(
                human.stdout.contains(&format!(
                    "shard {index} of 4: none of the plan's 1 fire is this shard's"
                )),
                "{}",
                human.stdout
            );
        }
        files.push(format!("gate-{index}.json"));
    }
    assert_eq!(empty, 3);
    let mut args = vec!["gate", "merge", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let merged = project.run(&args);
    assert_eq!(merged.status, 0, "{}", merged.stderr);
}

/// A plan with nothing to fire is "nothing checked" in every shard and in the merge.
#[test]
fn nothing_checked_stays_an_error_for_the_whole_plan() {
    let project = gate_project(&[("shape", "advisory")], 1, &[]);
    project.remove(&format!("{STAGE_DIR}/doc-1.md"));
    let mut files = Vec::new();
    for index in 1..=2 {
        let run = project.run(&[
            "gate",
            "check",
            "--no-record",
            "--quiet",
            "--format",
            "json",
            "--shard",
            &format!("{index}/2"),
        ]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert!(run.stderr.contains("nothing was checked"), "{}", run.stderr);
        project.write(&format!("empty-{index}.json"), &run.stdout);
        files.push(format!("empty-{index}.json"));
    }
    let mut args = vec!["gate", "merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = project.run(&args);
    assert_eq!(merged.status, 2, "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("nothing was checked: no declared output"),
        "{}",
        merged.stderr
    );
}

// --- Advisory findings are no `<failure>` in JUnit ----------------------------------------------

/// The `failures` count of the whole `JUnit` document.
fn junit_failures(xml: &str) -> &str {
    let start = xml.find("<testsuites ").expect("a testsuites element");
    let attribute = &xml[start..];
    let value = &attribute[attribute.find("failures=\"").expect("failures") + 10..];
    &value[..value.find('"').unwrap()]
}

/// `xml` is valid against the vendored `JUnit` schema (with `xmllint`).
fn assert_valid_junit(project: &TestProject, xml: &str) {
    let Some(xmllint) = crate::support::system_tool("xmllint") else {
        return;
    };
    let schema =
        Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit-10.xsd");
    let file = project.path("gate.xml");
    std::fs::write(&file, xml).unwrap();
    let validation = std::process::Command::new(&xmllint)
        .args(["--noout", "--schema", schema.as_str(), file.as_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&validation.stderr);
    assert!(validation.status.success(), "{stderr}\n{xml}");
}

#[test]
fn advisory_findings_are_no_junit_failures_and_blocking_ones_are() {
    let advisory = gate_project(&[("shape", "advisory")], 2, &[1, 2]);
    let run = advisory.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "junit",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(junit_failures(&run.stdout), "0", "{}", run.stdout);
    assert!(!run.stdout.contains("<failure"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("<property name=\"aidlc.advisory-findings\" value=\"2\"/>"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "<system-out>advisory: 1 finding; an advisory sensor's findings do not fail the gate"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("the file says FAIL (no-fail)"),
        "{}",
        run.stdout
    );
    assert_valid_junit(&advisory, &run.stdout);
    let strict = advisory.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--strict",
        "--format",
        "junit",
    ]);
    assert_eq!(strict.status, 1, "{}", strict.stderr);
    assert_eq!(junit_failures(&strict.stdout), "2", "{}", strict.stdout);
    assert_valid_junit(&advisory, &strict.stdout);
    let blocking = gate_project(&[("shape", "blocking")], 2, &[1]);
    let run = blocking.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--format",
        "junit",
    ]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert_eq!(junit_failures(&run.stdout), "1", "{}", run.stdout);
    assert!(
        run.stdout
            .contains("<failure message=\"the file says FAIL (no-fail)\" type=\"blocking\">"),
        "{}",
        run.stdout
    );
    assert_valid_junit(&blocking, &run.stdout);
}

// --- Human output grouped by file and rule, paths from the working folder -----------------------

/// Fails with eleven findings, each on its own line of the file.
const ELEVEN_FINDINGS_WORKER: &str = r#"printf '{"pass":false,"findings_count":11,"findings":['; for line in 1 2 3 4 5 6 7 8 9 10; do printf '{"message":"claim without a source","line":%s,"rule":"untagged-claim"},' "$line"; done; printf '{"message":"claim without a source","line":11,"rule":"untagged-claim"}]}\n'"#;

/// A repository folder holding the project in `services/shop`, whose one deliverable gets eleven
/// findings from one advisory sensor.
fn monorepo_with_eleven_findings() -> (TestProject, Utf8PathBuf) {
    let repository = TestProject::empty();
    let project = gate_project(&[("claims", "advisory")], 1, &[]);
    project.write(
        "claims.sh",
        &format!("#!/bin/sh\n{ELEVEN_FINDINGS_WORKER}\n"),
    );
    let lines: Vec<String> = (1..=12).map(|line| format!("line {line}")).collect();
    project.write(&format!("{STAGE_DIR}/doc-1.md"), &(lines.join("\n") + "\n"));
    let shop = repository.path("services/shop");
    crate::support::copy_tree(&project.root, &shop);
    (repository, shop)
}

#[test]
fn human_output_has_one_header_per_file_and_sensor_with_a_count() {
    let (repository, _shop) = monorepo_with_eleven_findings();
    let run = repository.run(&[
        "gate",
        "check",
        "--no-record",
        "--quiet",
        "--project-dir",
        "services/shop",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let file = format!("services/shop/{STAGE_DIR}/doc-1.md");
    assert_eq!(
        run.stdout
            .matches(&format!("{file}: 11 problems (11 warnings)"))
            .count(),
        1,
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout
            .matches("  claims: stage first-stage, advisory")
            .count(),
        1,
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.matches("⚠ claim without a source").count(), 11);
    for line in [1, 7, 11] {
        assert!(
            run.stdout.contains(&format!("╭─[{file}:{line}:1]")),
            "each finding's snippet opens from the working folder: {}",
            run.stdout
        );
    }
    assert!(
        repository.path(&file).is_file(),
        "the path shown exists from here"
    );
}

#[test]
fn compile_diagnostics_name_files_from_the_working_folder() {
    let (repository, shop) = monorepo_with_eleven_findings();
    std::fs::write(
        shop.join(".claude/aidlc-common/stages/inception/first-stage.md"),
        std::fs::read_to_string(shop.join(".claude/aidlc-common/stages/inception/first-stage.md"))
            .unwrap()
            .replace("lead_agent: aidlc-demo-agent", "lead_agent: aidlc-nobody"),
    )
    .unwrap();
    let run = repository.run(&["compile", "--project-dir", "services/shop"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("╭─[services/shop/.claude/aidlc-common/stages/inception/first-stage.md:"),
        "{}",
        run.stderr
    );
    let run = repository.run_in(&shop, &["compile"]);
    assert!(
        run.stderr
            .contains("╭─[.claude/aidlc-common/stages/inception/first-stage.md:"),
        "in the project, paths are the project's: {}",
        run.stderr
    );
}
