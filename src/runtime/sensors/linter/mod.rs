//! The shipped `linter` sensor (D41, D8): the project's own linter on the one fired
//! file. eslint by default; Biome when the project is configured for Biome instead
//! (`place::LintPlace` says where each is looked for and which applies).
//!
//! Invariants:
//!
//! - Nothing that did not lint the file reads as a pass: a missing tool or configuration is
//!   tool-unavailable (`eslint-unavailable`, `no-eslint-config`, `biome-unavailable`, or
//!   `file-ignored` when the configuration ignores the file or covers no file of its kind), a
//!   configuration that does not load (`config-parse-error`, failure mode V2) or output that
//!   cannot be read is a script error.
//! - Every tool run ends within the worker's budget, as `super::node_tool` runs it.
//!
//! `place` decides where the file is and which linter applies, `eslint` and `biome` run one
//! linter each, and `report` is the shape both are turned into (the reference's keys, in
//! order). What both code sensors need is in `super::node_tool`, shared with `type_check`.

mod biome;
mod eslint;
mod place;
mod report;

use std::ffi::OsStr;

use self::biome::run_biome;
use self::eslint::run_eslint;
use self::place::{ConfiguredLinter, LintPlace};
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::descriptor::{GateUnit, PathFlag, ShippedSensor, WorkerContext};
use crate::runtime::sensors::node_tool::{ToolBudget, fired_file};

/// The `linter` sensor: one code file per fire.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "linter",
    check: |args, context| run_with_search_path(args, context, std::env::var_os("PATH").as_deref()),
    extra_flags: &[],
    default_path_flag: PathFlag::FilePath,
    gate_unit: GateUnit::Deliverable,
};

/// The check (`--stage <slug> --file-path <path>`), with the `PATH` to search for tools given
/// (tests pass their own).
fn run_with_search_path(
    args: &[String],
    context: &WorkerContext,
    search_path: Option<&OsStr>,
) -> WorkerOutcome {
    let budget = ToolBudget::starting_now(context.timeout);
    let file = match fired_file(args, &SENSOR, &context.project_dir) {
        Ok(file) => file,
        Err(message) => return WorkerOutcome::UsageError(message),
    };
    let place = LintPlace::of(&context.project_dir, &file);
    match place.configured_linter() {
        ConfiguredLinter::Biome { config } => run_biome(&place, &config, search_path, &budget),
        ConfiguredLinter::Eslint { config_present } => {
            run_eslint(&place, config_present, search_path, &budget)
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use std::time::Duration;

    use camino::{Utf8Path, Utf8PathBuf};
    use serde_json::json;

    use super::biome::{biome_violation, line_and_column_at};
    use super::eslint::{major_version, parse_eslint_report};
    use super::place::LintPlace;
    use super::*;
    use crate::runtime::sensors::test_support::{
        GENEROUS, SensorProject, real_node_tools, reference_part, script_error_of, words,
    };

    // --- Pure parts --------------------------------------------------------------------------

    #[test]
    fn major_versions_read_with_or_without_a_v() {
        assert_eq!(major_version("v9.1.0\n"), Some(9));
        assert_eq!(major_version("10.15.0"), Some(10));
        assert_eq!(major_version("v6.4.0"), Some(6));
        assert_eq!(major_version("eslint"), None);
        assert_eq!(major_version(""), None);
    }

    #[test]
    fn a_banner_before_the_report_is_skipped_even_with_brackets() {
        let stdout = "[pnpm] warn: lockfile\n[{\"filePath\":\"/p/a.js\",\"messages\":[]}]\n";
        let report = parse_eslint_report(stdout).unwrap();
        assert_eq!(report.error_count, 0);
        assert!(report.violations.is_empty());
    }

    #[test]
    fn line_and_column_come_from_a_byte_offset() {
        let source = "const a = 1;\nconst é = 2;\ndebugger;\n";
        assert_eq!(line_and_column_at(source, 0), (1, 1));
        assert_eq!(line_and_column_at(source, 13), (2, 1));
        // `é` is two bytes: `=` is byte 22 and the 9th character of line 2.
        assert_eq!(line_and_column_at(source, 22), (2, 9));
        assert_eq!(line_and_column_at(source, 1000), (0, 0));
        assert_eq!(
            line_and_column_at(source, 23_u64 + u64::from(u32::MAX)),
            (0, 0)
        );
    }

    #[test]
    fn biome_one_shape_is_read_from_span_and_source() {
        let place = LintPlace {
            file: Utf8PathBuf::from("/p/src/a.js"),
            lint_root: Utf8PathBuf::from("/p"),
            config_folders: Vec::new(),
            tool_folders: Vec::new(),
        };
        let diagnostic = json!({
            "category": "lint/suspicious/noDebugger",
            "severity": "error",
            "description": "This is an unexpected use of the debugger statement.",
            "message": [{"elements": [], "content": "This is an unexpected use of the "}],
            "location": {
                "path": {"file": "src/a.js"},
                "span": [26, 35],
                "sourceCode": "const x = 1;\nconst y = 2;\ndebugger;\n"
            }
        });
        let violation = biome_violation(&diagnostic, &place).unwrap();
        assert_eq!(violation.file, "/p/src/a.js");
        assert_eq!((violation.line, violation.column), (3, 1));
        assert_eq!(violation.rule, "lint/suspicious/noDebugger");
        assert_eq!(
            violation.message,
            "This is an unexpected use of the debugger statement."
        );
        let information = json!({"severity": "information", "message": "fyi"});
        assert_eq!(biome_violation(&information, &place), None);
    }

    // --- Fake tools in a temp project -------------------------------------------------------

    #[cfg(unix)]
    fn lint(project: &SensorProject, file: &str) -> WorkerOutcome {
        lint_with_path(project, file, None)
    }

    #[cfg(unix)]
    fn lint_with_path(
        project: &SensorProject,
        file: &str,
        search_path: Option<&Utf8Path>,
    ) -> WorkerOutcome {
        run_with_search_path(
            &project.file_path_args(file),
            &project.context(GENEROUS),
            search_path.map(Utf8Path::as_os_str),
        )
    }

    /// A project with `src/a.js` and a flat config.
    #[cfg(unix)]
    fn configured_project() -> SensorProject {
        let project = SensorProject::node(&SENSOR);
        project.write("src/a.js", "var x = 1;\n");
        project.write("eslint.config.js", "module.exports = [];\n");
        project
    }

    #[cfg(unix)]
    fn reason_of(outcome: &WorkerOutcome) -> &str {
        match outcome {
            WorkerOutcome::ToolUnavailable(json) => json["reason"].as_str().unwrap(),
            other => panic!("expected tool-unavailable, got {other:?}"),
        }
    }

    #[cfg(unix)]
    const ESLINT_REPORT_WITH_AN_ERROR_AND_A_WARNING: &str = r#"[{"filePath":"/p/src/a.js","messages":[{"ruleId":"no-unused-vars","severity":1,"message":"'x' is assigned a value but never used.","line":1,"column":5},{"ruleId":"no-debugger","severity":2,"message":"Unexpected 'debugger' statement.","line":2,"column":1}],"errorCount":1,"warningCount":1}]"#;

    #[cfg(unix)]
    #[test]
    fn errors_fail_and_the_verdict_keys_are_in_the_reference_order() {
        let project = configured_project();
        project.canned_tool(
            "node_modules/.bin/eslint",
            ESLINT_REPORT_WITH_AN_ERROR_AND_A_WARNING,
            "",
            1,
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        let keys: Vec<&String> = verdict.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "pass",
                "errorCount",
                "warningCount",
                "violations",
                "findings_count",
                "diagnostics"
            ]
        );
        assert_eq!(
            verdict["diagnostics"],
            json!([{"file": "/p/src/a.js", "rule": "no-debugger",
                    "message": "Unexpected 'debugger' statement.", "line": 2, "column": 1}])
        );
        assert_eq!(
            reference_part(verdict.clone()),
            json!({
                "pass": false,
                "errorCount": 1,
                "warningCount": 1,
                "violations": [
                    {"file": "/p/src/a.js", "line": 1, "column": 5, "rule": "no-unused-vars",
                     "severity": "warning", "message": "'x' is assigned a value but never used."},
                    {"file": "/p/src/a.js", "line": 2, "column": 1, "rule": "no-debugger",
                     "severity": "error", "message": "Unexpected 'debugger' statement."},
                ],
                "findings_count": 1,
            })
        );
        let first_violation_keys: Vec<&String> = verdict["violations"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(
            first_violation_keys,
            ["file", "line", "column", "rule", "severity", "message"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn warnings_alone_pass() {
        let project = configured_project();
        project.script(
            "node_modules/.bin/eslint",
            r#"echo '[{"filePath":"/p/src/a.js","messages":[{"ruleId":"no-unused-vars","severity":1,"message":"unused","line":1,"column":5}],"errorCount":0,"warningCount":1}]'"#,
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(verdict["pass"], true);
        assert_eq!(verdict["warningCount"], 1);
        assert_eq!(verdict["findings_count"], 0);
        assert_eq!(verdict["violations"].as_array().unwrap().len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn eslint_gets_json_format_no_warning_limit_and_the_absolute_file_from_the_lint_root() {
        let project = configured_project();
        let recorded = project.root().join("recorded.txt");
        project.script(
            "node_modules/.bin/eslint",
            &format!("pwd -P > '{recorded}'; printf '%s\\n' \"$@\" >> '{recorded}'; echo '[]'"),
        );
        let outcome = lint(&project, "src/a.js");
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
        let root = std::fs::canonicalize(project.root()).unwrap();
        let expected = format!(
            "{}\n--format\njson\n--max-warnings=-1\n{}\n",
            root.display(),
            project.root().join("src/a.js")
        );
        assert_eq!(std::fs::read_to_string(recorded).unwrap(), expected);
    }

    #[cfg(unix)]
    #[test]
    fn a_banner_before_the_json_is_tolerated() {
        let project = configured_project();
        project.canned_tool(
            "node_modules/.bin/eslint",
            &format!("npm warn config: something\n{ESLINT_REPORT_WITH_AN_ERROR_AND_A_WARNING}\n"),
            "",
            1,
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(verdict["errorCount"], 1);
    }

    #[cfg(unix)]
    #[test]
    fn output_that_is_not_a_report_is_a_script_error() {
        let project = configured_project();
        for body in [
            "echo 'no json here'",
            "echo '{\"not\": \"an array\"}'",
            "echo '[1, 2'",
        ] {
            project.script("node_modules/.bin/eslint", body);
            let outcome = lint(&project, "src/a.js");
            let message = script_error_of(&outcome);
            assert!(
                message.starts_with("eslint-bad-output: "),
                "{body}: {message}"
            );
        }
        project.script("node_modules/.bin/eslint", "echo '[42]'");
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "eslint-bad-output: a result in the report is not an object"
        );
    }

    #[cfg(unix)]
    #[test]
    fn no_eslint_anywhere_is_tool_unavailable() {
        let project = configured_project();
        let empty_path = project.root().join("empty-bin");
        std::fs::create_dir_all(&empty_path).unwrap();
        let outcome = lint_with_path(&project, "src/a.js", Some(&empty_path));
        assert_eq!(reason_of(&outcome), "eslint-unavailable");
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            unreachable!()
        };
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["reason", "message"]);
        assert!(
            json["message"]
                .as_str()
                .unwrap()
                .starts_with("no node_modules/.bin/eslint in ")
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_eslint_older_than_9_on_path_is_skipped_and_a_newer_one_used() {
        let project = configured_project();
        let old = project.script("old-bin/eslint", "echo v8.57.0");
        let old_bin = old.parent().unwrap().to_owned();
        let outcome = lint_with_path(&project, "src/a.js", Some(&old_bin));
        assert_eq!(reason_of(&outcome), "eslint-unavailable");
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            unreachable!()
        };
        let message = json["message"].as_str().unwrap();
        assert!(message.contains(&format!("{old} (v8.57.0)")), "{message}");

        let new = project.script(
            "new-bin/eslint",
            "if [ \"$1\" = --version ]; then echo v9.39.1; else echo '[]'; fi",
        );
        let new_bin = new.parent().unwrap();
        let both = std::env::join_paths([old_bin.as_std_path(), new_bin.as_std_path()]).unwrap();
        let outcome = run_with_search_path(
            &project.file_path_args("src/a.js"),
            &project.context(GENEROUS),
            Some(&both),
        );
        assert_eq!(
            outcome,
            WorkerOutcome::Verdict(json!({
                "pass": true, "errorCount": 0, "warningCount": 0, "violations": [],
                "findings_count": 0,
            }))
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_local_eslint_wins_over_path_and_is_found_hoisted_at_the_project_root() {
        let project = configured_project();
        project.write("packages/web/package.json", "{}\n");
        project.write("packages/web/src/b.js", "let y;\n");
        project.script(
            "node_modules/.bin/eslint",
            r#"echo '[{"filePath":"local","messages":[],"errorCount":0,"warningCount":0}]'"#,
        );
        let path_eslint = project.script("path-bin/eslint", "echo v10.0.0; exit 9");
        let outcome = lint_with_path(
            &project,
            "packages/web/src/b.js",
            Some(path_eslint.parent().unwrap()),
        );
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    #[test]
    fn no_configuration_is_tool_unavailable() {
        let project = SensorProject::node(&SENSOR);
        project.write("src/a.js", "var x = 1;\n");
        project.canned_tool(
            "node_modules/.bin/eslint",
            "",
            "Oops! Something went wrong! :(\n\nESLint: 10.15.0\n\n\
             ESLint couldn\u{2019}t find an eslint.config.* file.\n",
            2,
        );
        let outcome = lint(&project, "src/a.js");
        assert_eq!(reason_of(&outcome), "no-eslint-config");
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            unreachable!()
        };
        assert_eq!(
            json["message"],
            "ESLint couldn\u{2019}t find an eslint.config.* file."
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_configuration_is_a_script_error_with_its_line() {
        let project = configured_project();
        project.canned_tool(
            "node_modules/.bin/eslint",
            "",
            "Oops! Something went wrong! :(\n\nESLint: 10.15.0\n\n/p/eslint.config.js:2\n\n\n\n\
             SyntaxError: Unexpected end of input\n    \
             at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n",
            2,
        );
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "config-parse-error: SyntaxError: Unexpected end of input (/p/eslint.config.js:2)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_crash_without_a_configuration_file_is_an_eslint_failure() {
        let project = SensorProject::node(&SENSOR);
        project.write("src/a.js", "var x = 1;\n");
        project.script(
            "node_modules/.bin/eslint",
            "echo 'TypeError: something broke' >&2; exit 2",
        );
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "eslint-failed: exit 2: TypeError: something broke"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_ignored_file_is_tool_unavailable_not_a_pass() {
        let project = configured_project();
        project.script(
            "node_modules/.bin/eslint",
            r#"echo '[{"filePath":"/p/src/a.js","messages":[{"ruleId":null,"fatal":false,"severity":1,"message":"File ignored because no matching configuration was supplied."}],"errorCount":0,"warningCount":1}]'"#,
        );
        let outcome = lint(&project, "src/a.js");
        assert_eq!(reason_of(&outcome), "file-ignored");
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_interpreter_is_tool_unavailable() {
        let project = configured_project();
        project.script(
            "node_modules/.bin/eslint",
            "echo \"/usr/bin/env: 'node': No such file or directory\" >&2; exit 127",
        );
        let outcome = lint(&project, "src/a.js");
        assert_eq!(reason_of(&outcome), "eslint-unavailable");
    }

    #[cfg(unix)]
    #[test]
    fn a_linter_past_the_budget_is_stopped_and_is_a_script_error() {
        let project = configured_project();
        project.script("node_modules/.bin/eslint", "sleep 30");
        let outcome = run_with_search_path(
            &project.file_path_args("src/a.js"),
            &project.context(Duration::from_secs(1)),
            None,
        );
        assert_eq!(
            script_error_of(&outcome),
            "timeout: eslint did not finish within the sensor's budget of 1 s and was stopped"
        );
    }

    #[cfg(unix)]
    #[test]
    fn usage_errors_come_before_any_tool_runs() {
        let project = configured_project();
        let marker = project.root().join("ran.txt");
        project.script("node_modules/.bin/eslint", &format!("touch '{marker}'"));
        let context = project.context(GENEROUS);
        let mut unknown = project.file_path_args("src/a.js");
        unknown.extend(["--output-path".to_owned(), "/x".to_owned()]);
        assert_eq!(
            run_with_search_path(&unknown, &context, None),
            WorkerOutcome::UsageError("unknown flag: --output-path".to_owned())
        );
        let missing = project.file_path_args("src/a.js")[2..].to_vec();
        assert_eq!(
            run_with_search_path(&missing, &context, None),
            WorkerOutcome::UsageError("missing required flag: --stage".to_owned())
        );
        let absent = project.root().join("src/absent.js");
        assert_eq!(
            run_with_search_path(&project.file_path_args("src/absent.js"), &context, None),
            WorkerOutcome::UsageError(format!("file-path not found: {absent}"))
        );
        assert!(!marker.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_relative_windows_style_path_is_found() {
        let project = configured_project();
        project.script("node_modules/.bin/eslint", "echo '[]'");
        let args = words("--stage s --file-path src\\a.js");
        let outcome = run_with_search_path(&args, &project.context(GENEROUS), None);
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    const BIOME_REPORT: &str = r#"{"summary":{"changed":0,"unchanged":1,"errors":1,"warnings":1},"diagnostics":[{"severity":"warning","message":"This let declares a variable that is only assigned once.","category":"lint/style/useConst","location":{"path":"src/a.js","start":{"line":2,"column":1},"end":{"line":2,"column":4}}},{"severity":"error","message":"This is an unexpected use of the debugger statement.","category":"lint/suspicious/noDebugger","location":{"path":"src/a.js","start":{"line":3,"column":1},"end":{"line":3,"column":10}}},{"severity":"information","message":"fyi","category":"x","location":{"path":"src/a.js"}}],"command":"lint"}"#;

    #[cfg(unix)]
    fn biome_project() -> SensorProject {
        let project = SensorProject::node(&SENSOR);
        project.write("src/a.js", "const a = 1;\nlet b = 2;\ndebugger;\n");
        project.write("biome.json", "{}\n");
        project.script(
            "node_modules/.bin/eslint",
            "echo 'eslint must not run' >&2; exit 2",
        );
        project
    }

    #[cfg(unix)]
    #[test]
    fn biome_runs_when_configured_and_eslint_is_not() {
        let project = biome_project();
        let recorded = project.root().join("recorded.txt");
        let report = project.write("canned/biome.stdout", BIOME_REPORT);
        project.script(
            "node_modules/.bin/biome",
            &format!(
                "printf '%s\\n' \"$@\" > '{recorded}'; echo 'The json reporter is experimental' >&2; cat '{report}'; exit 1"
            ),
        );
        let WorkerOutcome::Verdict(verdict) = lint(&project, "src/a.js") else {
            panic!("expected a verdict");
        };
        let file = project.root().join("src/a.js").to_string();
        assert_eq!(
            verdict["diagnostics"][0]["rule"],
            "lint/suspicious/noDebugger"
        );
        assert_eq!(
            reference_part(verdict),
            json!({
                "pass": false,
                "errorCount": 1,
                "warningCount": 1,
                "violations": [
                    {"file": file, "line": 2, "column": 1, "rule": "lint/style/useConst",
                     "severity": "warning",
                     "message": "This let declares a variable that is only assigned once."},
                    {"file": file, "line": 3, "column": 1, "rule": "lint/suspicious/noDebugger",
                     "severity": "error",
                     "message": "This is an unexpected use of the debugger statement."},
                ],
                "findings_count": 1,
            })
        );
        assert_eq!(
            std::fs::read_to_string(recorded).unwrap(),
            format!("lint\n--reporter=json\n{file}\n")
        );
    }

    #[cfg(unix)]
    #[test]
    fn eslint_wins_when_both_are_configured() {
        let project = biome_project();
        project.write(".eslintrc.json", "{}\n");
        project.script("node_modules/.bin/eslint", "echo '[]'");
        project.script(
            "node_modules/.bin/biome",
            "echo 'biome must not run' >&2; exit 3",
        );
        let outcome = lint(&project, "src/a.js");
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    #[test]
    fn biome_configured_but_missing_is_tool_unavailable() {
        let project = biome_project();
        assert_eq!(reason_of(&lint(&project, "src/a.js")), "biome-unavailable");
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_biome_configuration_is_a_script_error_with_its_line() {
        let project = biome_project();
        project.canned_tool(
            "node_modules/.bin/biome",
            "",
            "/p/biome.json:2:1 parse \u{2501}\u{2501}\u{2501}\n\n  \u{d7} expected `}` but instead the file ends\n\n\
             configuration \u{2501}\u{2501}\n\n  \
             \u{d7} Biome exited because the configuration resulted in errors. Please fix them.\n",
            1,
        );
        assert_eq!(
            script_error_of(&lint(&project, "src/a.js")),
            "config-parse-error: expected `}` but instead the file ends (/p/biome.json:2:1 parse)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn biome_ignoring_the_file_is_tool_unavailable_and_garbage_is_a_script_error() {
        let project = biome_project();
        project.script(
            "node_modules/.bin/biome",
            r#"echo '{"summary":{"changed":0,"unchanged":0,"errors":0,"warnings":0},"diagnostics":[],"command":"lint"}'; exit 1"#,
        );
        assert_eq!(reason_of(&lint(&project, "src/a.js")), "file-ignored");
        project.script("node_modules/.bin/biome", "echo 'not json'; exit 1");
        let outcome = lint(&project, "src/a.js");
        assert!(
            script_error_of(&outcome).starts_with("biome-bad-output: exit 1: "),
            "{outcome:?}"
        );
    }

    // --- The real ESLint --------------------------------------------------------------------

    #[cfg(unix)]
    fn real_eslint_project(tools: &Utf8Path) -> SensorProject {
        let project = SensorProject::node(&SENSOR);
        project.link_real_tool(tools, "eslint");
        project.write(
            "eslint.config.js",
            "module.exports = [\n  {\n    files: [\"**/*.js\"],\n    rules: { \"no-unused-vars\": \"warn\", \"no-debugger\": \"error\" },\n  },\n];\n",
        );
        project
    }

    #[cfg(unix)]
    #[test]
    fn real_eslint_fails_on_an_error_and_passes_with_warnings_only() {
        let Some(tools) = real_node_tools("eslint") else {
            return;
        };
        let project = real_eslint_project(&tools);
        project.write("src/bad.js", "var x = 1;\ndebugger;\n");
        project.write("src/warned.js", "var y = 2;\n");
        project.write("src/clean.js", "module.exports = 3;\n");

        let WorkerOutcome::Verdict(bad) = lint(&project, "src/bad.js") else {
            panic!("expected a verdict: {:?}", lint(&project, "src/bad.js"));
        };
        let file = project.root().join("src/bad.js").to_string();
        assert_eq!(bad["pass"], false);
        assert_eq!(bad["errorCount"], 1);
        assert_eq!(bad["warningCount"], 1);
        assert_eq!(bad["findings_count"], 1);
        assert_eq!(
            bad["violations"][1],
            json!({"file": file, "line": 2, "column": 1, "rule": "no-debugger",
                   "severity": "error", "message": "Unexpected 'debugger' statement."})
        );

        let WorkerOutcome::Verdict(warned) = lint(&project, "src/warned.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(warned["pass"], true);
        assert_eq!(warned["warningCount"], 1);

        let WorkerOutcome::Verdict(clean) = lint(&project, "src/clean.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(clean["pass"], true);
        assert_eq!(clean["violations"], json!([]));
    }

    #[cfg(unix)]
    #[test]
    fn real_eslint_without_config_or_with_a_broken_one_is_not_a_pass() {
        let Some(tools) = real_node_tools("eslint") else {
            return;
        };
        let project = SensorProject::node(&SENSOR);
        project.link_real_tool(&tools, "eslint");
        project.write("src/a.js", "var x = 1;\n");
        assert_eq!(reason_of(&lint(&project, "src/a.js")), "no-eslint-config");

        project.write("eslint.config.js", "module.exports = [ { rules: {\n");
        let outcome = lint(&project, "src/a.js");
        let message = script_error_of(&outcome);
        assert!(
            message.starts_with("config-parse-error: SyntaxError"),
            "{message}"
        );
        assert!(message.contains("eslint.config.js"), "{message}");
    }

    #[cfg(unix)]
    #[test]
    fn real_eslint_on_a_file_no_configuration_covers_is_tool_unavailable() {
        let Some(tools) = real_node_tools("eslint") else {
            return;
        };
        let project = real_eslint_project(&tools);
        project.write("src/a.ts", "let y: number = 1;\n");
        assert_eq!(reason_of(&lint(&project, "src/a.ts")), "file-ignored");
    }

    #[cfg(unix)]
    #[test]
    fn real_biome_lints_when_configured_and_a_broken_configuration_is_a_script_error() {
        let Some(tools) = real_node_tools("biome") else {
            return;
        };
        let project = SensorProject::node(&SENSOR);
        project.link_real_tool(&tools, "biome");
        project.write("biome.json", "{}\n");
        project.write("src/bad.js", "let b = 2;\ndebugger;\nconsole.log(b);\n");
        project.write("src/clean.js", "const a = 1;\nconsole.log(a);\n");

        let WorkerOutcome::Verdict(bad) = lint(&project, "src/bad.js") else {
            panic!("expected a verdict: {:?}", lint(&project, "src/bad.js"));
        };
        let file = project.root().join("src/bad.js").to_string();
        assert_eq!(bad["pass"], false, "{bad}");
        assert_eq!(bad["errorCount"], 1, "{bad}");
        assert_eq!(bad["warningCount"], 1, "{bad}");
        assert_eq!(bad["findings_count"], 1, "{bad}");
        assert!(
            bad["violations"].as_array().unwrap().contains(&json!({
                "file": file, "line": 2, "column": 1, "rule": "lint/suspicious/noDebugger",
                "severity": "error",
                "message": "This is an unexpected use of the debugger statement.",
            })),
            "{bad}"
        );

        let WorkerOutcome::Verdict(clean) = lint(&project, "src/clean.js") else {
            panic!("expected a verdict");
        };
        assert_eq!(
            clean,
            json!({"pass": true, "errorCount": 0, "warningCount": 0, "violations": [],
                   "findings_count": 0})
        );

        project.write(
            "biome.json",
            "{\"files\": {\"includes\": [\"src/clean.js\"]}}\n",
        );
        assert_eq!(reason_of(&lint(&project, "src/bad.js")), "file-ignored");

        project.write("biome.json", "{ \"linter\": {\n");
        let outcome = lint(&project, "src/bad.js");
        let message = script_error_of(&outcome);
        assert!(
            message.starts_with("config-parse-error: expected `}` but instead the file ends"),
            "{message}"
        );
        assert!(message.contains("biome.json:2:1"), "{message}");
    }
}
