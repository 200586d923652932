//! The native shipped workers give the same answer in-process (as `fire`, the hook and gate
//! dispatch run them) and out-of-process (`aidlc engine sensor-<id> …`, the worker protocol).

use aidlc::protocol::worker_outcome::protocol_output;
use aidlc::sensors::descriptor::WorkerContext;
use aidlc::sensors::native_check;

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
