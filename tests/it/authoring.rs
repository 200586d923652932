//! The authoring tools: shell completions, the man page, the JSON Schemas of
//! manifests, stages and the gate report, and `aidlc graph`.

use std::io::Write as _;
use std::process::{Command, Stdio};

use camino::Utf8Path;
use serde_json::Value;

use crate::support::{REFERENCE_VERSIONS, TestProject, system_tool};

const SUBCOMMANDS: [&str; 8] = [
    "init",
    "compile",
    "engine",
    "gate",
    "graph",
    "schema",
    "completions",
    "man",
];

/// `program args` with `stdin`, its status, stdout and stderr.
fn pipe_through(program: &Utf8Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("start {program}: {error}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let output = child.wait_with_output().expect("wait");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

// --- completions and man

#[test]
fn each_shells_completion_script_names_every_subcommand() {
    let project = TestProject::empty();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = project.run(&["completions", shell]);
        assert_eq!(run.status, 0, "{shell}: {}", run.stderr);
        for subcommand in SUBCOMMANDS {
            assert!(
                run.stdout.contains(subcommand),
                "{shell}'s script does not mention `{subcommand}`"
            );
        }
        assert!(run.stdout.contains("project-dir"), "{shell}: no flags");
    }
    let unknown = project.run(&["completions", "tcsh"]);
    assert_eq!(unknown.status, 2, "{}", unknown.stderr);
}

#[test]
fn the_bash_script_registers_a_completion_that_answers() {
    let Some(bash) = system_tool("bash") else {
        return;
    };
    let project = TestProject::empty();
    let script = project.run(&["completions", "bash"]).stdout;
    project.write("aidlc.bash", &script);
    // Complete `aidlc gr` as bash would, through the function the script registered.
    let probe = format!(
        "source {}\nCOMP_WORDS=(aidlc gr); COMP_CWORD=1; COMP_LINE='aidlc gr'; COMP_POINT=8\n_aidlc aidlc gr aidlc\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        project.path("aidlc.bash")
    );
    let (status, stdout, stderr) = pipe_through(&bash, &["--norc", "-s"], &probe);
    assert_eq!(status, 0, "{stderr}");
    let offered: Vec<&str> = stdout.lines().collect();
    assert_eq!(offered, ["graph"], "{stdout}{stderr}");
}

#[test]
fn the_man_page_is_roff_that_groff_reads_without_warnings() {
    let project = TestProject::empty();
    let run = project.run(&["man"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains(".TH aidlc 1"), "{}", run.stdout);
    for subcommand in SUBCOMMANDS {
        assert!(
            run.stdout.contains(&format!("aidlc\\-{subcommand}")),
            "the page does not list `{subcommand}`"
        );
    }
    let Some(groff) = system_tool("groff") else {
        return;
    };
    let (status, text, warnings) =
        pipe_through(&groff, &["-man", "-Tutf8", "-ww", "-P-cbu"], &run.stdout);
    assert_eq!(status, 0, "{warnings}");
    assert!(warnings.trim().is_empty(), "groff warned: {warnings}");
    assert!(text.contains("SUBCOMMANDS"), "{text}");
    assert!(text.contains("A fast, strict engine"), "{text}");
    if let Some(man) = which_quietly("man") {
        let (status, text, stderr) = pipe_through(&man, &["-l", "-"], &run.stdout);
        assert_eq!(status, 0, "man -l -: {stderr}");
        assert!(text.contains("SUBCOMMANDS"), "{text}");
    }
}

/// Every command's words (`["gate", "check"]`), the top-level command's (none) first, from the
/// definition `aidlc` parses; clap's own `help` subcommand has no page.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(command: &clap::Command, path: &mut Vec<String>, paths: &mut Vec<Vec<String>>) {
        paths.push(path.clone());
        for sub in command.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            path.push(sub.get_name().to_owned());
            walk(sub, path, paths);
            path.pop();
        }
    }
    let mut paths = Vec::new();
    walk(&aidlc::cli::command(), &mut Vec::new(), &mut paths);
    paths
}

/// The page file of a command: `aidlc.1`, `aidlc-gate-check.1`.
fn page_file_name(path: &[String]) -> String {
    let mut name = String::from("aidlc");
    for word in path {
        name.push('-');
        name.push_str(word);
    }
    name.push_str(".1");
    name
}

/// Every `aidlc…(1)` a roff page names (its `\-` read as `-`).
fn pages_named(roff: &str) -> Vec<String> {
    let text = roff
        .replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fR", "");
    let mut named = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("(1)") {
        let before = &rest[..at];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(0, |index| index + 1);
        let name = &before[start..];
        if name == "aidlc" || name.starts_with("aidlc-") {
            named.push(format!("{name}.1"));
        }
        rest = &rest[at + 3..];
    }
    named
}

#[test]
fn man_dir_writes_one_page_per_command_each_with_its_exit_statuses_and_environment() {
    let project = TestProject::empty();
    let written = project.run(&["man", "--dir", "pages"]);
    assert_eq!(written.status, 0, "{}", written.stderr);
    let mut files: Vec<String> = std::fs::read_dir(project.path("pages"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let paths = command_paths();
    let mut expected: Vec<String> = paths.iter().map(|path| page_file_name(path)).collect();
    expected.sort();
    assert_eq!(files, expected);
    assert!(files.contains(&"aidlc-gate-check.1".to_owned()));
    assert!(files.contains(&"aidlc-engine-sensor-fire.1".to_owned()));

    let groff = system_tool("groff");
    for path in &paths {
        let file = page_file_name(path);
        let roff = project.read(&format!("pages/{file}"));
        assert!(roff.is_ascii(), "{file} is not ASCII");
        assert!(!roff.contains('`'), "{file} shows Markdown backticks");
        let title = file.trim_end_matches(".1");
        assert!(
            roff.contains(&format!(
                ".TH {title} 1 \"\" \"aidlc {}\"",
                env!("CARGO_PKG_VERSION")
            )),
            "{file}"
        );
        for section in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
        ] {
            assert!(roff.contains(section), "{file} has no {section}");
        }
        for named in pages_named(&roff) {
            assert!(
                files.contains(&named),
                "{file} names {named}, which is not a page"
            );
        }
        // `aidlc man WORDS` prints the same page.
        let mut args = vec!["man"];
        args.extend(path.iter().map(String::as_str));
        let printed = project.run(&args);
        assert_eq!(printed.status, 0, "{args:?}: {}", printed.stderr);
        assert_eq!(format!("{}\n", printed.stdout.trim_end()), roff, "{args:?}");
        if let Some(groff) = &groff {
            let (status, text, warnings) =
                pipe_through(groff, &["-man", "-Tutf8", "-ww", "-P-cbu"], &roff);
            assert_eq!(status, 0, "{file}: {warnings}");
            assert!(
                warnings.trim().is_empty(),
                "groff warned on {file}: {warnings}"
            );
            assert!(text.contains("EXIT STATUS"), "{file}: {text}");
        }
    }
    // A page's EXIT STATUS is the command's own: gate check's 3 is not compile's.
    let gate_check = project.read("pages/aidlc-gate-check.1");
    assert!(gate_check.contains(".TP\n\\fB3\\fR\na blocking sensor could not be evaluated"));
    let compile = project.read("pages/aidlc-compile.1");
    assert!(!compile.contains("\\fB3\\fR"), "{compile}");
    assert!(compile.contains("\\fB130\\fR"), "{compile}");
    // Code spans are bold, not backticked.
    assert!(compile.contains("\\fBaidlc compile\\fR"), "{compile}");

    let unknown = project.run(&["man", "gate", "chek"]);
    assert_eq!(unknown.status, 2);
    assert!(
        unknown
            .stderr
            .contains("no command `aidlc gate chek` has a manual page"),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stderr.contains("gate check"), "{}", unknown.stderr);
}

/// Every environment variable `src/` reads, outside test code: the names given to
/// `std::env::var`, `var_os`, `env_var`, an `env` reader and `Layout::new`'s `pick`, written
/// out or through a `const NAME: &str = "…"`.
fn environment_variables_read_in_src() -> std::collections::BTreeSet<String> {
    let src = camino::Utf8PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut files = Vec::new();
    let mut folders = vec![src];
    while let Some(folder) = folders.pop() {
        for entry in folder.read_dir_utf8().unwrap() {
            let path = entry.unwrap().into_path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension() == Some("rs") {
                files.push(path);
            }
        }
    }
    let texts: Vec<(camino::Utf8PathBuf, String)> = files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect();
    // Files that are test modules (`#[cfg(test)] mod name;`) and the inline test modules.
    let mut test_files = std::collections::BTreeSet::new();
    for (path, text) in &texts {
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.windows(2) {
            if pair[0].trim() != "#[cfg(test)]" {
                continue;
            }
            let declaration = pair[1].trim().trim_start_matches("pub(crate) ");
            if let Some(name) = declaration
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'))
            {
                let folder =
                    if path.file_name() == Some("mod.rs") || path.file_name() == Some("lib.rs") {
                        path.parent().unwrap().to_owned()
                    } else {
                        path.with_extension("")
                    };
                test_files.insert(folder.join(format!("{name}.rs")));
                test_files.insert(folder.join(name).join("mod.rs"));
            }
        }
    }
    let constants: std::collections::BTreeMap<String, String> = texts
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| {
            let rest = line
                .trim()
                .trim_start_matches("pub ")
                .strip_prefix("const ")?;
            let (name, value) = rest.split_once(": &str = \"")?;
            Some((name.to_owned(), value.strip_suffix("\";")?.to_owned()))
        })
        .collect();
    let is_name = |word: &str| {
        !word.is_empty()
            && word.starts_with(|c: char| c.is_ascii_uppercase())
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    let mut read = std::collections::BTreeSet::new();
    for (path, text) in &texts {
        if test_files.contains(path) {
            continue;
        }
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for reader in ["env::var(", "env::var_os(", "env_var(", "env(", "pick("] {
            let mut rest = code;
            while let Some(at) = rest.find(reader) {
                let before = rest[..at].chars().next_back();
                rest = &rest[at + reader.len()..];
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    continue;
                }
                let argument = rest.trim_start();
                let word: String = argument
                    .trim_start_matches('"')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if argument.starts_with('"') && is_name(&word) {
                    read.insert(word);
                } else if let Some(value) = constants.get(&word) {
                    read.insert(value.clone());
                }
            }
        }
    }
    read
}

/// The names under ENVIRONMENT in a page's roff: each `.TP` item's bold first line.
fn environment_names(roff: &str) -> Vec<String> {
    let section = roff
        .split(".SH ENVIRONMENT\n")
        .nth(1)
        .expect("an ENVIRONMENT section")
        .split("\n.SH ")
        .next()
        .unwrap();
    section
        .split(".TP\n")
        .skip(1)
        .filter_map(|item| {
            let name = item
                .lines()
                .next()?
                .strip_prefix("\\fB")?
                .strip_suffix("\\fR")?;
            Some(name.to_owned())
        })
        .collect()
}

/// The variables aidlc's terminal library (anstream) reads for the printer's colour choice;
/// they are listed though `src/` does not name them.
const READ_BY_THE_TERMINAL_LIBRARY: [&str; 5] =
    ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI"];

#[test]
fn aidlc_1_lists_every_environment_variable_the_binary_reads() {
    let read = environment_variables_read_in_src();
    for expected in [
        "AIDLC_PROJECT_DIR",
        "AIDLC_LOCK_STALE_MS",
        "AIDLC_SENSOR_TIMEOUT_MS",
        "GITHUB_WORKSPACE",
        "FORCE_COLOR",
    ] {
        assert!(
            read.contains(expected),
            "the scan missed {expected}: {read:?}"
        );
    }
    assert!(
        !read.contains("AIDLC_TEST_NODE_TOOLS"),
        "test code was scanned"
    );
    let project = TestProject::empty();
    let page = project.run(&["man"]);
    assert_eq!(page.status, 0, "{}", page.stderr);
    let listed = environment_names(&page.stdout);
    let mut unique = listed.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a variable is listed twice: {listed:?}"
    );
    let missing: Vec<&String> = read.iter().filter(|name| !listed.contains(name)).collect();
    assert!(missing.is_empty(), "aidlc(1) does not list {missing:?}");
    let unread: Vec<&String> = listed
        .iter()
        .filter(|name| {
            !read.contains(*name) && !READ_BY_THE_TERMINAL_LIBRARY.contains(&name.as_str())
        })
        .collect();
    assert!(
        unread.is_empty(),
        "aidlc(1) lists {unread:?}, which nothing reads"
    );
    // A command's page lists what it reads, not everything.
    let hook = project.run(&["man", "engine", "hook", "run-sensors"]);
    let hook_names = environment_names(&hook.stdout);
    assert!(
        hook_names.contains(&"AIDLC_SENSOR_TIMEOUT_MS".to_owned()),
        "{hook_names:?}"
    );
    assert!(
        !hook_names.contains(&"GITHUB_STEP_SUMMARY".to_owned()),
        "{hook_names:?}"
    );
    let schema = project.run(&["man", "schema"]);
    assert!(!environment_names(&schema.stdout).contains(&"AIDLC_PROJECT_DIR".to_owned()));
}

/// `--color` is described in full once, on `aidlc --help`; a subcommand's help shows it as
/// one line, and the value counts wherever it is given.
#[test]
fn the_global_color_option_is_described_once_and_counts_at_any_level() {
    let project = TestProject::minimal();
    let top = project.run(&["--help"]);
    assert_eq!(top.status, 0);
    assert!(top.stdout.contains("CLICOLOR_FORCE"), "{}", top.stdout);
    for args in [
        &["compile", "--help"][..],
        &["gate", "check", "--help"],
        &["engine", "sensor", "fire", "--help"],
    ] {
        let help = project.run(args);
        assert_eq!(help.status, 0, "{args:?}");
        assert!(
            !help.stdout.contains("CLICOLOR_FORCE"),
            "{args:?}: {}",
            help.stdout
        );
        assert!(
            help.stdout
                .contains("When to colour the output: auto, always or never (see `aidlc --help`)"),
            "{args:?}: {}",
            help.stdout
        );
        assert!(
            help.stdout.contains("\nExit status:\n  0    "),
            "{args:?}: {}",
            help.stdout
        );
    }
    // A compile error's report, coloured or not, by where `--color` is given.
    project.write(".claude/sensors/aidlc-broken.md", "no frontmatter\n");
    let coloured = |args: &[&str]| {
        let run = project.run(args);
        assert_eq!(run.status, 1, "{args:?}: {}", run.stderr);
        run.stderr.contains('\u{1b}')
    };
    assert!(coloured(&["--color", "always", "compile"]));
    assert!(coloured(&["compile", "--color", "always"]));
    assert!(!coloured(&[
        "--color", "always", "compile", "--color", "never"
    ]));
    assert!(!coloured(&["compile"]), "NO_COLOR is set");
}

/// `program` on `PATH`, without printing anything when it is not (an extra check, not a need).
fn which_quietly(program: &str) -> Option<camino::Utf8PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|path| camino::Utf8PathBuf::from_path_buf(path).ok())
}

// --- schemas

fn schema(project: &TestProject, kind: &str) -> jsonschema::Validator {
    let run = project.run(&["schema", kind]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).expect("a JSON schema");
    assert_eq!(
        document["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "{kind}"
    );
    jsonschema::draft202012::new(&document).unwrap_or_else(|error| panic!("{kind}: {error}"))
}

/// The YAML frontmatter of a Markdown file, as JSON (what yaml-language-server checks).
fn frontmatter(path: &Utf8Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read a frontmatter file");
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .unwrap_or_else(|| panic!("{path} has no frontmatter"));
    let end = body
        .find("\n---")
        .unwrap_or_else(|| panic!("{path} has no closing fence"));
    serde_saphyr::from_str(&body[..=end]).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn markdown_files(folder: &Utf8Path, recursive: bool) -> Vec<camino::Utf8PathBuf> {
    let mut files = Vec::new();
    for entry in folder.read_dir_utf8().expect("list a folder") {
        let path = entry.expect("an entry").into_path();
        if path.is_dir() {
            if recursive {
                files.extend(markdown_files(&path, true));
            }
        } else if path.extension() == Some("md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Every sensor manifest and stage file of the project under `harness`, each validated against
/// its schema; returns how many of each there were.
fn validate_project(project: &TestProject, harness: &str) -> (usize, usize) {
    let manifest_schema = schema(project, "manifest");
    let stage_schema = schema(project, "stage");
    let manifests: Vec<_> = markdown_files(&project.path(&format!("{harness}/sensors")), false)
        .into_iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.starts_with("aidlc-"))
        })
        .collect();
    let stages = markdown_files(
        &project.path(&format!("{harness}/aidlc-common/stages")),
        true,
    );
    for (schema, files) in [(&manifest_schema, &manifests), (&stage_schema, &stages)] {
        for file in files {
            let errors: Vec<String> = schema
                .iter_errors(&frontmatter(file))
                .map(|error| format!("{error} at {}", error.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{file}: {errors:#?}");
        }
    }
    (manifests.len(), stages.len())
}

#[test]
fn the_default_framework_validates_against_the_schemas() {
    let project = TestProject::default_framework();
    assert_eq!(validate_project(&project, ".claude"), (6, 33));
}

#[test]
fn both_reference_installs_validate_against_the_schemas() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let (manifests, stages) = validate_project(&project, ".claude");
        assert!(
            manifests >= 5 && stages >= 30,
            "{version}: {manifests}, {stages}"
        );
    }
}

#[test]
fn a_manifest_of_kind_llm_is_refused_by_the_schema_and_by_the_compile() {
    let project = TestProject::default_framework();
    let path = ".claude/sensors/aidlc-linter.md";
    let text = project.read(path);
    project.write(path, &text.replace("kind: deterministic", "kind: llm"));
    let manifest_schema = schema(&project, "manifest");
    let instance = frontmatter(&project.path(path));
    assert_eq!(instance["kind"], "llm");
    let errors: Vec<String> = manifest_schema
        .iter_errors(&instance)
        .map(|error| error.instance_path().to_string())
        .collect();
    assert_eq!(errors, ["/kind"]);
    assert_eq!(project.compile().status, 1);
}

#[test]
fn the_gate_report_schema_describes_real_gate_check_output() {
    let project = TestProject::empty();
    let init = project.run(&["init", ".", "--example"]);
    assert_eq!(init.status, 0, "{}", init.stderr);
    assert_eq!(project.compile().status, 0);
    let report_schema = schema(&project, "gate-report");
    let runs = [
        vec!["gate", "check", "--no-record", "--format", "json"],
        vec!["gate", "check", "--format", "json", "--fire-on", "all"],
        vec![
            "gate",
            "check",
            "--no-record",
            "--format",
            "json",
            "--shard",
            "2/3",
        ],
        vec![
            "gate",
            "check",
            "--no-record",
            "--format",
            "json",
            "--stage",
            "workspace-scaffold",
        ],
    ];
    for args in runs {
        let run = project.run(&args);
        assert!(matches!(run.status, 0..=3), "{args:?}: {}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout).expect("one JSON document");
        let errors: Vec<String> = report_schema
            .iter_errors(&report)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
    }
}

// --- graph

fn compiled_framework() -> TestProject {
    let project = TestProject::default_framework();
    let run = project.compile();
    assert_eq!(run.status, 0, "{}", run.stderr);
    project
}

#[test]
fn the_default_frameworks_mermaid_graph() {
    let project = compiled_framework();
    let run = project.run(&["graph", "--sensors"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "", "a current graph is read without a note");
    assert_eq!(
        run.stdout,
        project.run(&["graph", "--sensors"]).stdout,
        "the output is deterministic"
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn the_dot_graph_renders_with_graphviz() {
    let Some(dot) = system_tool("dot") else {
        return;
    };
    let project = compiled_framework();
    for args in [
        vec!["graph", "--format", "dot", "--sensors"],
        vec!["graph", "--format", "dot", "--stage", "code-generation"],
    ] {
        let run = project.run(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let (status, svg, warnings) = pipe_through(&dot, &["-Tsvg"], &run.stdout);
        assert_eq!(status, 0, "{args:?}: {warnings}");
        assert!(
            warnings.trim().is_empty(),
            "{args:?}: dot warned: {warnings}"
        );
        assert!(svg.contains("<svg"), "{svg}");
        assert!(svg.contains("Code Generation"), "{args:?}");
    }
}

#[test]
fn a_stages_neighbourhood_and_an_unknown_stage() {
    let project = compiled_framework();
    let run = project.run(&["graph", "--format", "json", "--stage", "feasibility"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    let slugs: Vec<&str> = document["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| stage["slug"].as_str().unwrap())
        .collect();
    assert_eq!(
        slugs,
        [
            "intent-capture",
            "market-research",
            "feasibility",
            "scope-definition",
            "approval-handoff"
        ]
    );
    assert!(
        document["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|edge| edge["from"] == "feasibility" || edge["to"] == "feasibility")
    );
    let unknown = project.run(&["graph", "--stage", "feasability"]);
    assert_eq!(unknown.status, 2);
    assert!(unknown.stdout.is_empty());
    assert!(
        unknown
            .stderr
            .contains("no stage \"feasability\" in the stage graph"),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stderr.contains("did you mean `feasibility`?"));
}

#[test]
fn a_missing_or_stale_graph_is_compiled_in_memory_and_nothing_is_written() {
    let project = TestProject::default_framework();
    let graph_path = ".claude/tools/data/stage-graph.json";
    assert!(!project.exists(graph_path));
    let run = project.run(&["graph", "--format", "json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("is missing or out of date"),
        "{}",
        run.stderr
    );
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(document["stages"].as_array().unwrap().len(), 33);
    assert!(!project.exists(graph_path), "graph wrote the stage graph");

    assert_eq!(project.compile().status, 0);
    let stage = ".claude/aidlc-common/stages/ideation/team-formation.md";
    let text = project.read(stage);
    assert!(text.contains("requires_stage:"));
    let before = project.read(graph_path);
    project.write(
        stage,
        &text.replacen(
            "requires_stage:\n",
            "requires_stage:\n  - market-research\n",
            1,
        ),
    );
    let run = project.run(&["graph", "--format", "json", "--stage", "team-formation"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("is missing or out of date"),
        "{}",
        run.stderr
    );
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        document["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|edge| edge["from"] == "market-research" && edge["to"] == "team-formation"),
        "the edit is drawn: {}",
        run.stdout
    );
    assert_eq!(
        project.read(graph_path),
        before,
        "graph rewrote the stage graph"
    );
}

#[test]
fn sources_with_compile_errors_draw_nothing() {
    let project = compiled_framework();
    let stage = ".claude/aidlc-common/stages/ideation/feasibility.md";
    let text = project.read(stage);
    project.write(stage, &text.replace("phase: ideation", "phase: design"));
    let run = project.run(&["graph"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("phase must be one of"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing to draw"), "{}", run.stderr);
}

#[test]
fn the_reference_installs_are_drawn() {
    for version in REFERENCE_VERSIONS {
        let project = TestProject::reference_install(version);
        let run = project.run(&["graph", "--format", "json", "--sensors"]);
        assert_eq!(run.status, 0, "{version}: {}", run.stderr);
        assert_eq!(
            run.stderr, "",
            "{version}: its graph is what its sources compile to"
        );
        let document: Value = serde_json::from_str(&run.stdout).unwrap();
        assert!(document["stages"].as_array().unwrap().len() >= 30);
        assert!(!document["edges"].as_array().unwrap().is_empty());
    }
}
