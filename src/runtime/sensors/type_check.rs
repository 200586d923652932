//! The shipped `type-check` sensor (D42, D8): the project's `tsc` over the fired
//! file's TypeScript project (the nearest `tsconfig.json` upward), with the errors of the fired
//! file as the findings. docs/decisions.md D42 says what the reference does and where this
//! differs on purpose; `tsc_outcome` writes the reference's keys in order, then ours.
//!
//! Invariant: a pass means tsc ran over a configuration it could load and printed no error for
//! the fired file.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::json;

use crate::protocol::finding::Finding;
use crate::protocol::verdict::WorkerRun;
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::descriptor::{GateUnit, PathFlag, ShippedSensor, WorkerContext};
use crate::runtime::sensors::finding::verdict_json;
use crate::runtime::sensors::node_tool::{
    TOOL_STDOUT_CAP_BYTES, ToolBudget, describe_folders_upward, fired_file, folders_upward,
    most_telling_line, project_or_path_tool, run_tool_within,
};
use crate::runtime::worker_process::WorkerCommand;
use crate::runtime::workspace;

/// The longest the compile may run (the seed: fifteen minutes for TypeScript's compilation).
const COMPILE_STEP_CAP: Duration = Duration::from_secs(15 * 60);

/// The build-info file of the project's root tsconfig (the reference's name).
const ROOT_BUILD_INFO_FILE_NAME: &str = ".tsbuildinfo";

/// The `type-check` sensor: one code file per fire.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "type-check",
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
    let project_dir = &context.project_dir;
    let file = match fired_file(args, &SENSOR, project_dir) {
        Ok(file) => file,
        Err(message) => return WorkerOutcome::UsageError(message),
    };
    let folders = folders_upward(file.parent().unwrap_or(&file), project_dir);
    let nearest_tsconfig = folders
        .iter()
        .map(|folder| folder.join("tsconfig.json"))
        .find(|candidate| candidate.is_file());
    let Some(tsconfig) = nearest_tsconfig else {
        return WorkerOutcome::UsageError(format!(
            "no-tsconfig-found: no tsconfig.json {}",
            describe_folders_upward(&folders)
        ));
    };
    let tsconfig_folder = tsconfig.parent().unwrap_or(project_dir).to_owned();
    // The project's own tsc first (failure mode V1), from the tsconfig's folder upward.
    let tool_folders = folders_upward(&tsconfig_folder, project_dir);
    let program = match project_or_path_tool(&tool_folders, search_path, "tsc", "") {
        Ok(program) => program,
        Err(outcome) => return outcome,
    };
    let build_info = prepared_build_info_file(project_dir, &tsconfig);
    let command = WorkerCommand {
        args: tsc_arguments(&tsconfig, build_info.as_deref()),
        ..WorkerCommand::new(program, tsconfig_folder.clone())
    };
    run_tool_within("tsc", command, COMPILE_STEP_CAP, &budget).map_or_else(
        |outcome| outcome,
        |run| tsc_outcome(&run, &file, &tsconfig_folder),
    )
}

/// Where tsc keeps its incremental state for `tsconfig`: in the sensors folder of the active
/// record, `.tsbuildinfo` for the project's root tsconfig and `.tsbuildinfo-<hash of its path>`
/// for any other (so two projects never overwrite each other's), once that folder exists;
/// `None` when it cannot be made (tsc then runs without it).
#[expect(
    clippy::disallowed_methods,
    reason = "the type checker's build-info cache folder, in the active record's sensors folder"
)]
fn prepared_build_info_file(project_dir: &Utf8Path, tsconfig: &Utf8Path) -> Option<Utf8PathBuf> {
    let folder = workspace::sensor_detail_dir(&workspace::record_root(project_dir));
    std::fs::create_dir_all(&folder).ok()?;
    if tsconfig.parent() == Some(project_dir) {
        return Some(folder.join(ROOT_BUILD_INFO_FILE_NAME));
    }
    let hash = blake3::hash(tsconfig.as_str().as_bytes()).to_hex();
    Some(folder.join(format!(
        "{ROOT_BUILD_INFO_FILE_NAME}-{}",
        &hash.as_str()[..16]
    )))
}

fn tsc_arguments(tsconfig: &Utf8Path, build_info: Option<&Utf8Path>) -> Vec<String> {
    let mut args = [
        "--project",
        tsconfig.as_str(),
        "--noEmit",
        "--pretty",
        "false",
    ]
    .to_vec();
    if let Some(build_info) = build_info {
        args.extend(["--incremental", "--tsBuildInfoFile", build_info.as_str()]);
    }
    args.into_iter().map(str::to_owned).collect()
}

// --- Reading tsc's output ----------------------------------------------------------------------

/// One `error TSnnnn` of tsc, with its continuation lines; serialised as the verdict lists it
/// (`file`, `line`, `column`, `message`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
struct TscError {
    /// Where tsc located it, as printed (relative to the tsconfig's folder, or absolute); empty,
    /// with line and column 0, for an error with no location.
    file: String,
    line: u64,
    column: u64,
    /// The text after `error TSnnnn: `, continuation lines joined with `"\n  "`.
    message: String,
    /// The whole first line, for a script-error message.
    #[serde(skip)]
    first_line: String,
}

impl TscError {
    fn is_located(&self) -> bool {
        !self.file.is_empty()
    }

    /// An error about the configuration rather than the code: no location (TS18003, TS6053,
    /// TS2688 …), or located in a `.json` file (the tsconfig or one it extends).
    fn is_about_the_configuration(&self) -> bool {
        !self.is_located() || self.file.to_ascii_lowercase().ends_with(".json")
    }

    /// The finding the gate report shows: on the fired file (every kept error is in it), with
    /// tsc's `TSnnnn` code as its rule.
    fn located(&self, fired_file: &Utf8Path) -> Finding {
        let code = self
            .first_line
            .split_once("error TS")
            .map(|(_, rest)| {
                rest.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .filter(|digits| !digits.is_empty())
            .map_or_else(|| "type-error".to_owned(), |digits| format!("TS{digits}"));
        Finding::at_file(fired_file.as_str(), &code, self.message.clone())
            .at(self.line, self.column)
    }
}

/// Every error in tsc's `--pretty false` output: `file(line,col): error TSnnnn: message`, or
/// `error TSnnnn: message` with no location; an indented line continues the error before it.
/// Other lines are ignored.
fn parse_tsc_output(output: &str) -> Vec<TscError> {
    let mut errors: Vec<TscError> = Vec::new();
    for line in output.lines().map(|line| line.trim_end_matches('\r')) {
        if let Some(error) = parse_tsc_error_line(line) {
            errors.push(error);
        } else if line.starts_with([' ', '\t'])
            && !line.trim().is_empty()
            && let Some(last) = errors.last_mut()
        {
            last.message.push_str("\n  ");
            last.message.push_str(line.trim());
        }
    }
    errors
}

fn parse_tsc_error_line(line: &str) -> Option<TscError> {
    // The file ends at the first `(line,col):` followed by an error; a `(` inside the file
    // name is passed over.
    let located = || {
        line.match_indices('(').find_map(|(open, _)| {
            let after_open = &line[open + 1..];
            let close = after_open.find("):")?;
            let (line_number, column) = after_open[..close].split_once(',')?;
            let rest = &after_open[close + 2..];
            if !rest.starts_with(char::is_whitespace) || open == 0 {
                return None;
            }
            let message = error_code_and_message(rest.trim_start())?;
            Some((
                &line[..open],
                all_digits(line_number)?,
                all_digits(column)?,
                message,
            ))
        })
    };
    let (file, line_number, column, message) = error_code_and_message(line)
        .map(|message| ("", 0, 0, message))
        .or_else(located)?;
    Some(TscError {
        file: file.to_owned(),
        line: line_number,
        column,
        message: message.to_owned(),
        first_line: line.to_owned(),
    })
}

/// The message of `error TSnnnn: message` (whitespace between the parts, a non-empty message).
fn error_code_and_message(text: &str) -> Option<&str> {
    let after_error = text.strip_prefix("error")?;
    if !after_error.starts_with(char::is_whitespace) {
        return None;
    }
    let code_and_rest = after_error.trim_start().strip_prefix("TS")?;
    let (code, rest) = code_and_rest.split_once(':')?;
    all_digits(code)?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let message = rest.trim();
    (!message.is_empty()).then_some(message)
}

fn all_digits(text: &str) -> Option<u64> {
    text.bytes()
        .all(|byte| byte.is_ascii_digit())
        .then(|| text.parse().ok())?
}

// --- Which errors are the fired file's ---------------------------------------------------------

/// A path as comparable text: `/` separators, `.` and `..` resolved, a drive letter in lower
/// case, and (on Windows, whose file names ignore case) everything in lower case. A relative
/// path is taken from `base`.
fn comparable_path_text(base: &str, path: &str) -> String {
    let path = path.replace('\\', "/");
    let joined = if looks_absolute(&path) {
        path
    } else {
        format!("{}/{path}", base.replace('\\', "/"))
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.len() > 1 || parts.first().is_some_and(|first| !is_drive(first)) {
                    parts.pop();
                }
            }
            other => parts.push(other),
        }
    }
    let mut text = parts.join("/");
    if !parts.first().is_some_and(|first| is_drive(first)) {
        text.insert(0, '/');
    }
    if cfg!(windows) {
        text.to_lowercase()
    } else if parts.first().is_some_and(|first| is_drive(first)) {
        text[..1].to_ascii_lowercase() + &text[1..]
    } else {
        text
    }
}

/// `/x`, `C:/x` or `//server/x` (after `\` became `/`).
fn looks_absolute(path: &str) -> bool {
    path.starts_with('/') || path.split('/').next().is_some_and(is_drive)
}

fn is_drive(part: &str) -> bool {
    let bytes = part.as_bytes();
    bytes.len() == 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

// --- The outcome -------------------------------------------------------------------------------

fn tsc_outcome(
    run: &WorkerRun,
    fired_file: &Utf8Path,
    tsconfig_folder: &Utf8Path,
) -> WorkerOutcome {
    if run.stdout_truncated {
        return WorkerOutcome::ScriptError(format!(
            "tsc-bad-output: its output was over {} MiB and was cut, so its errors cannot all be read",
            TOOL_STDOUT_CAP_BYTES / (1024 * 1024)
        ));
    }
    let output = format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        run.stderr_tail
    );
    let errors = parse_tsc_output(&output);
    if let Some(configuration_error) = errors
        .iter()
        .find(|error| error.is_about_the_configuration())
    {
        return WorkerOutcome::ScriptError(format!(
            "config-parse-error: {}",
            configuration_error.first_line
        ));
    }
    let exit = run.exit_code.unwrap_or(-1);
    if errors.is_empty() && exit != 0 {
        return WorkerOutcome::ScriptError(format!(
            "tsc-failed: exit {exit} with no diagnostics: {}",
            most_telling_line(&output)
        ));
    }
    // A printed file is the fired file by its text, else (a link, a differently spelled path)
    // by the files' canonical paths, each printed file resolved once.
    let fired_text = comparable_path_text("/", fired_file.as_str());
    let fired_canonical = std::fs::canonicalize(fired_file).ok();
    let mut canonical_by_printed: BTreeMap<String, Option<PathBuf>> = BTreeMap::new();
    let mut is_fired_file = |printed: &str| {
        comparable_path_text(tsconfig_folder.as_str(), printed) == fired_text
            || fired_canonical.as_ref().is_some_and(|fired_canonical| {
                let canonical = canonical_by_printed
                    .entry(printed.to_owned())
                    .or_insert_with(|| std::fs::canonicalize(tsconfig_folder.join(printed)).ok());
                canonical.as_ref() == Some(fired_canonical)
            })
    };
    let (fired, elsewhere): (Vec<&TscError>, Vec<&TscError>) = errors
        .iter()
        .partition(|error| error.is_located() && is_fired_file(&error.file));
    let located: Vec<Finding> = fired
        .iter()
        .map(|error| error.located(fired_file))
        .collect();

    WorkerOutcome::Verdict(verdict_json(
        [
            ("pass", Some(json!(fired.is_empty()))),
            ("errors", Some(json!(fired))),
            ("findings_count", Some(json!(fired.len()))),
            ("other_files_error_count", Some(json!(elsewhere.len()))),
        ],
        &located,
    ))
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;

    // --- Pure parts --------------------------------------------------------------------------

    #[test]
    fn located_errors_parse_with_their_continuations() {
        let output = "src/a.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.\n\
                      src/b.ts(4,49): error TS1360: Type '{ y: number; }' does not satisfy the expected type '{ q: 1; }'.\r\n  \
                      Property 'q' is missing in type '{ y: number; }'.\n\
                      Found 2 errors.\n";
        let errors = parse_tsc_output(output);
        assert_eq!(errors.len(), 2);
        assert_eq!(
            (errors[0].file.as_str(), errors[0].line, errors[0].column),
            ("src/a.ts", 1, 14)
        );
        assert_eq!(
            errors[0].message,
            "Type 'string' is not assignable to type 'number'."
        );
        assert_eq!(
            errors[1].message,
            "Type '{ y: number; }' does not satisfy the expected type '{ q: 1; }'.\n  Property 'q' is missing in type '{ y: number; }'."
        );
    }

    #[test]
    fn odd_file_names_and_windows_paths_parse() {
        let errors = parse_tsc_output(
            "src/util (copy)/a(1).ts(2,3): error TS2304: Cannot find name 'x'.\n\
             C:/p/src/a.ts(10,1): error TS1005: ';' expected.\n",
        );
        let files: Vec<&str> = errors.iter().map(|error| error.file.as_str()).collect();
        assert_eq!(files, ["src/util (copy)/a(1).ts", "C:/p/src/a.ts"]);
    }

    #[test]
    fn lines_that_are_not_errors_are_ignored() {
        let output = "Version 5.9.3\nsrc/a.ts(1,1): warning TS1: nope\nsrc/a.ts(x,1): error TS1: nope\n\
                      src/a.ts(1,1):error TS1: nope\nerror TS: nope\n  stray continuation\n";
        assert_eq!(parse_tsc_output(output), []);
    }

    #[test]
    fn errors_without_a_location_or_in_json_are_about_the_configuration() {
        let errors = parse_tsc_output(
            "error TS18003: No inputs were found in config file '/p/tsconfig.json'.\n\
             tsconfig.json(1,36): error TS5023: Unknown compiler option 'foo'.\n\
             src/a.ts(1,1): error TS2304: Cannot find name 'x'.\n",
        );
        let about: Vec<bool> = errors
            .iter()
            .map(TscError::is_about_the_configuration)
            .collect();
        assert_eq!(about, [true, true, false]);
    }

    #[test]
    fn paths_compare_across_separators_dots_and_drive_letters() {
        assert_eq!(
            comparable_path_text("/p", "src/./x/../a.ts"),
            comparable_path_text("/", "/p/src/a.ts")
        );
        assert_eq!(
            comparable_path_text("C:\\p", "src\\a.ts"),
            comparable_path_text("/", "c:/p/src/a.ts")
        );
        assert_eq!(comparable_path_text("/p", "C:\\q\\..\\a.ts"), "c:/a.ts");
        assert_eq!(comparable_path_text("/p", "../../a.ts"), "/a.ts");
        assert_ne!(
            comparable_path_text("/p", "other/src/a.ts"),
            comparable_path_text("/", "/p/src/a.ts")
        );
    }

    // --- Fake tsc in a temp project ----------------------------------------------------------

    #[cfg(unix)]
    use crate::runtime::sensors::test_support::{
        GENEROUS, SensorProject, real_node_tools, reference_part, script_error_of,
    };

    #[cfg(unix)]
    fn check(project: &SensorProject, file: &str) -> WorkerOutcome {
        run_with_search_path(
            &project.file_path_args(file),
            &project.context(GENEROUS),
            None,
        )
    }

    /// A project with `tsconfig.json`, `src/a.ts` and `src/b.ts`.
    #[cfg(unix)]
    fn typescript_project() -> SensorProject {
        let project = SensorProject::node(&SENSOR);
        project.write(
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        );
        project.write("src/a.ts", "export const a: number = 1;\n");
        project.write("src/b.ts", "export const b: string = 'b';\n");
        project
    }

    /// A fake tsc printing `output` on stdout and exiting `status`.
    #[cfg(unix)]
    fn fake_tsc(project: &SensorProject, output: &str, status: i32) {
        project.canned_tool("node_modules/.bin/tsc", output, "", status);
    }

    #[cfg(unix)]
    #[test]
    fn errors_in_the_fired_file_fail_with_the_reference_keys_then_ours() {
        let project = typescript_project();
        fake_tsc(
            &project,
            "src/a.ts(1,14): error TS2322: Type 1.\n  More about it.\nsrc/b.ts(1,1): error TS2304: Elsewhere.\n",
            2,
        );
        let WorkerOutcome::Verdict(verdict) = check(&project, "src/a.ts") else {
            panic!("expected a verdict");
        };
        let keys: Vec<&String> = verdict.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "pass",
                "errors",
                "findings_count",
                "other_files_error_count",
                "diagnostics"
            ]
        );
        assert_eq!(verdict["diagnostics"][0]["rule"], "TS2322");
        assert_eq!(verdict["diagnostics"][0]["line"], 1);
        assert_eq!(
            reference_part(verdict),
            json!({
                "pass": false,
                "errors": [{"file": "src/a.ts", "line": 1, "column": 14,
                            "message": "Type 1.\n  More about it."}],
                "findings_count": 1,
                "other_files_error_count": 1,
            })
        );
    }

    #[cfg(unix)]
    #[test]
    fn errors_only_in_other_files_pass_and_are_counted() {
        let project = typescript_project();
        let absolute_b = project.root().join("src/b.ts");
        fake_tsc(
            &project,
            &format!("src/b.ts(1,1): error TS2304: One.\n{absolute_b}(2,1): error TS2304: Two.\n"),
            2,
        );
        let outcome = check(&project, "src/a.ts");
        assert_eq!(
            outcome,
            WorkerOutcome::Verdict(json!({
                "pass": true, "errors": [], "findings_count": 0, "other_files_error_count": 2,
            }))
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_absolute_path_names_the_fired_file_too() {
        let project = typescript_project();
        let absolute_a = project.root().join("src/a.ts");
        fake_tsc(
            &project,
            &format!("{absolute_a}(1,1): error TS2304: Here.\n"),
            2,
        );
        let WorkerOutcome::Verdict(verdict) = check(&project, "src/a.ts") else {
            panic!("expected a verdict");
        };
        assert_eq!(verdict["findings_count"], 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_clean_run_passes() {
        let project = typescript_project();
        fake_tsc(&project, "", 0);
        assert_eq!(
            check(&project, "src/a.ts"),
            WorkerOutcome::Verdict(json!({
                "pass": true, "errors": [], "findings_count": 0, "other_files_error_count": 0,
            }))
        );
    }

    #[cfg(unix)]
    #[test]
    fn ts18003_with_no_other_diagnostic_is_a_script_error_not_a_pass() {
        let project = typescript_project();
        fake_tsc(
            &project,
            "error TS18003: No inputs were found in config file tsconfig.json.\n",
            2,
        );
        assert_eq!(
            script_error_of(&check(&project, "src/a.ts")),
            "config-parse-error: error TS18003: No inputs were found in config file tsconfig.json."
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_configuration_error_beside_code_errors_is_still_a_script_error() {
        let project = typescript_project();
        fake_tsc(
            &project,
            "src/b.ts(1,1): error TS2304: Elsewhere.\ntsconfig.json(1,36): error TS5023: Unknown compiler option foo.\n",
            2,
        );
        assert_eq!(
            script_error_of(&check(&project, "src/a.ts")),
            "config-parse-error: tsconfig.json(1,36): error TS5023: Unknown compiler option foo."
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_failure_with_no_diagnostics_is_a_script_error() {
        let project = typescript_project();
        project.script(
            "node_modules/.bin/tsc",
            "echo 'RangeError: Maximum call stack size exceeded' >&2; exit 1",
        );
        assert_eq!(
            script_error_of(&check(&project, "src/a.ts")),
            "tsc-failed: exit 1 with no diagnostics: RangeError: Maximum call stack size exceeded"
        );
    }

    #[cfg(unix)]
    #[test]
    fn tsc_gets_the_project_no_emit_and_incremental_build_info_in_the_sensors_folder() {
        let project = typescript_project();
        let recorded = project.root().join("recorded.txt");
        project.script(
            "node_modules/.bin/tsc",
            &format!("pwd -P > '{recorded}'; printf '%s\\n' \"$@\" >> '{recorded}'"),
        );
        let outcome = check(&project, "src/a.ts");
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
        let build_info = workspace::sensor_detail_dir(&workspace::record_root(&project.root()))
            .join(".tsbuildinfo");
        let expected = format!(
            "{}\n--project\n{}\n--noEmit\n--pretty\nfalse\n--incremental\n--tsBuildInfoFile\n{build_info}\n",
            std::fs::canonicalize(project.root()).unwrap().display(),
            project.root().join("tsconfig.json"),
        );
        assert_eq!(std::fs::read_to_string(recorded).unwrap(), expected);
        assert!(build_info.parent().unwrap().is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_nested_tsconfig_is_the_nearest_and_gets_its_own_build_info() {
        let project = typescript_project();
        project.write("packages/lib/tsconfig.json", "{}\n");
        project.write("packages/lib/src/c.ts", "export const c = 1;\n");
        let recorded = project.root().join("recorded.txt");
        project.script(
            "node_modules/.bin/tsc",
            &format!("printf '%s\\n' \"$@\" > '{recorded}'"),
        );
        let outcome = check(&project, "packages/lib/src/c.ts");
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
        let args = std::fs::read_to_string(recorded).unwrap();
        let lines: Vec<&str> = args.lines().collect();
        assert_eq!(lines[1], project.root().join("packages/lib/tsconfig.json"));
        assert!(lines[7].contains("/.tsbuildinfo-"), "{args}");
    }

    #[cfg(unix)]
    #[test]
    fn no_tsconfig_up_to_the_project_folder_is_a_usage_error() {
        let project = SensorProject::node(&SENSOR);
        project.write("src/a.ts", "export const a = 1;\n");
        let outcome = check(&project, "src/a.ts");
        let WorkerOutcome::UsageError(message) = &outcome else {
            panic!("expected a usage error, got {outcome:?}");
        };
        assert_eq!(
            message,
            &format!(
                "no-tsconfig-found: no tsconfig.json from {} up to {}",
                project.root().join("src"),
                project.root()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn no_tsc_is_tool_unavailable_and_one_on_path_is_used() {
        let project = typescript_project();
        let empty = project.root().join("empty-bin");
        std::fs::create_dir_all(&empty).unwrap();
        let outcome = run_with_search_path(
            &project.file_path_args("src/a.ts"),
            &project.context(GENEROUS),
            Some(empty.as_os_str()),
        );
        let WorkerOutcome::ToolUnavailable(json) = &outcome else {
            panic!("expected tool-unavailable, got {outcome:?}");
        };
        assert_eq!(json["reason"], "tsc-unavailable");

        let on_path = project.script("path-bin/tsc", "exit 0");
        let outcome = run_with_search_path(
            &project.file_path_args("src/a.ts"),
            &project.context(GENEROUS),
            Some(on_path.parent().unwrap().as_os_str()),
        );
        assert!(matches!(outcome, WorkerOutcome::Verdict(_)), "{outcome:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_compiler_past_the_budget_is_stopped_and_is_a_script_error() {
        let project = typescript_project();
        project.script("node_modules/.bin/tsc", "sleep 30");
        let outcome = run_with_search_path(
            &project.file_path_args("src/a.ts"),
            &project.context(Duration::from_secs(1)),
            None,
        );
        assert_eq!(
            script_error_of(&outcome),
            "timeout: tsc did not finish within the sensor's budget of 1 s and was stopped"
        );
    }

    #[cfg(unix)]
    #[test]
    fn flag_and_file_errors_are_usage_errors() {
        let project = typescript_project();
        let context = project.context(GENEROUS);
        let mut unknown = project.file_path_args("src/a.ts");
        unknown.push("--verbose".to_owned());
        assert_eq!(
            run_with_search_path(&unknown, &context, None),
            WorkerOutcome::UsageError("unknown flag: --verbose".to_owned())
        );
        let missing = project.file_path_args("src/a.ts")[..2].to_vec();
        assert_eq!(
            run_with_search_path(&missing, &context, None),
            WorkerOutcome::UsageError("missing required flag: --file-path".to_owned())
        );
        let absent = project.root().join("src/absent.ts");
        assert_eq!(
            run_with_search_path(&project.file_path_args("src/absent.ts"), &context, None),
            WorkerOutcome::UsageError(format!("file-path not found: {absent}"))
        );
    }

    // --- The real tsc ------------------------------------------------------------------------

    #[cfg(unix)]
    fn real_tsc_project(tools: &Utf8Path) -> SensorProject {
        let project = SensorProject::node(&SENSOR);
        project.link_real_tool(tools, "tsc");
        project.write(
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2022\", \"module\": \"nodenext\", \"types\": []}, \"include\": [\"src\"]}\n",
        );
        project
    }

    #[cfg(unix)]
    #[test]
    fn real_tsc_passes_a_clean_file_and_fails_a_broken_one() {
        let Some(tools) = real_node_tools("tsc") else {
            return;
        };
        let project = real_tsc_project(&tools);
        project.write("src/good.ts", "export const good: number = 1;\n");
        project.write("src/bad.ts", "export const bad: number = \"x\";\n");

        let WorkerOutcome::Verdict(good) = check(&project, "src/good.ts") else {
            panic!("expected a verdict: {:?}", check(&project, "src/good.ts"));
        };
        assert_eq!(
            good,
            json!({"pass": true, "errors": [], "findings_count": 0, "other_files_error_count": 1})
        );

        let WorkerOutcome::Verdict(bad) = check(&project, "src/bad.ts") else {
            panic!("expected a verdict");
        };
        assert_eq!(bad["diagnostics"][0]["rule"], "TS2322");
        assert_eq!(
            reference_part(bad.clone()),
            json!({
                "pass": false,
                "errors": [{"file": "src/bad.ts", "line": 1, "column": 14,
                            "message": "Type 'string' is not assignable to type 'number'."}],
                "findings_count": 1,
                "other_files_error_count": 0,
            })
        );
        let build_info = workspace::sensor_detail_dir(&workspace::record_root(&project.root()))
            .join(".tsbuildinfo");
        assert!(
            build_info.is_file(),
            "tsc wrote no build info at {build_info}"
        );

        // Incremental: the second run reads the build info and reports the same.
        let WorkerOutcome::Verdict(again) = check(&project, "src/bad.ts") else {
            panic!("expected a verdict");
        };
        assert_eq!(again, bad);
    }

    #[cfg(unix)]
    #[test]
    fn real_tsc_with_no_inputs_or_a_bad_option_is_a_script_error() {
        let Some(tools) = real_node_tools("tsc") else {
            return;
        };
        let project = real_tsc_project(&tools);
        project.write("lib/a.ts", "export const a = 1;\n");
        let outcome = check(&project, "lib/a.ts");
        assert!(
            script_error_of(&outcome).starts_with("config-parse-error: error TS18003: "),
            "{outcome:?}"
        );

        project.write(
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"noSuchOption\": 1}, \"include\": [\"lib\"]}\n",
        );
        let outcome = check(&project, "lib/a.ts");
        assert!(
            script_error_of(&outcome).starts_with("config-parse-error: tsconfig.json("),
            "{outcome:?}"
        );
    }
}
