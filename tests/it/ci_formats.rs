//! Issue 13: the CI gate check people and GitHub accept. End to end through the real binary:
//! typed findings from the shipped and custom sensors, pretty human output, SARIF that
//! Microsoft's validator with the GitHub rules accepts, `JUnit` XML valid against the vendored
//! schema, repository-relative paths in a monorepo, `--report`, `gate merge`, the step
//! summary, colours and the progress line, a worker's stderr kept, and the compile's CI formats.

use std::process::Stdio;

use aidlc::report::ReportFormat;
use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::support::{Run, TestProject, node_tool};

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

    // The validator is live: the log as the issue found it (no fullDescription, no help, name
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
