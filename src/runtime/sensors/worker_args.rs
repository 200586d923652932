//! The one reader of a shipped worker's argv (D21): the flags a sensor knows are the
//! ones its descriptor says the dispatcher gives it, and every worker reads them here.
//!
//! Invariants:
//!
//! - A flag with no value, or followed by another `--flag`, is a usage error for every worker
//!   (failure mode F9): the reference took the next flag as the value, so `--templates-dir
//!   --stage x` silently skipped the template check. [`value_after`] is that rule, once.
//! - Two grammars remain, because the reference's workers had two and their wording is pinned:
//!   the document workers skip tokens they do not know and let the last value of a flag win
//!   ([`FlagGrammar::Lenient`]); the code sensors refuse an unknown flag and a flag given twice
//!   ([`FlagGrammar::Strict`], failure mode F10). Each grammar words its own usage errors.
//! - Nothing here touches the disk: [`resolve_worker_path`] folds `.` and `..` lexically.

use std::collections::{BTreeMap, BTreeSet};

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use serde_json::Value;

use crate::leaves::js_text::js_trim;
use crate::protocol::output_paths::is_scaffolding_file_name;
use crate::protocol::worker_outcome::WorkerOutcome;
use crate::runtime::sensors::descriptor::{OUTPUT_PATH_FLAG, ShippedSensor, WorkerFlag};

/// How a worker treats what is not one of its flags, and how it words a usage error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagGrammar {
    /// The reference's document workers: other tokens are skipped and the last value of a
    /// repeated flag wins. `<flag> expects a value, got end of arguments.`, `<flag> expects a
    /// value, got another flag: "<value>".`, `<flag> is required`.
    Lenient,
    /// The reference's code sensors: an unknown flag (`unknown flag: <word>`), a flag given
    /// twice (`flag given twice: <flag>`) and `--help` are usage errors. `missing value for
    /// <flag>`, `missing required flag: <flag>`.
    Strict,
}

/// The values of a worker's flags, read from its argv.
#[derive(Debug, Clone)]
pub struct WorkerArgs {
    grammar: FlagGrammar,
    values: BTreeMap<&'static str, String>,
}

impl WorkerArgs {
    /// Read `args` (the argv after `sensor-<id>`) for the flags `sensor`'s worker knows.
    pub fn parse(
        args: &[String],
        sensor: &ShippedSensor,
        grammar: FlagGrammar,
    ) -> Result<Self, String> {
        let known = sensor.worker_flags();
        let mut values = BTreeMap::new();
        let mut index = 0;
        while index < args.len() {
            let word = args[index].as_str();
            let Some(flag) = known.iter().find(|flag| flag.name == word) else {
                match grammar {
                    FlagGrammar::Lenient => {
                        index += 1;
                        continue;
                    }
                    FlagGrammar::Strict if word == "--help" || word == "-h" => {
                        return Err(usage_line(sensor, &known));
                    }
                    FlagGrammar::Strict => return Err(format!("unknown flag: {word}")),
                }
            };
            let value = value_after(args, index, grammar, flag.name)?;
            let earlier = values.insert(flag.name, value.to_owned());
            if grammar == FlagGrammar::Strict && earlier.is_some() {
                return Err(format!("flag given twice: {}", flag.name));
            }
            index += 2;
        }
        Ok(Self { grammar, values })
    }

    /// The flag's value, possibly empty.
    pub fn value(&self, flag: WorkerFlag) -> Option<&str> {
        self.values.get(flag.name).map(String::as_str)
    }

    /// The flag's value when it is not empty (an empty value means "not given", as in the
    /// reference).
    pub fn non_empty(&self, flag: WorkerFlag) -> Option<&str> {
        self.value(flag).filter(|value| !value.is_empty())
    }

    /// The flag's value, which must be given and not empty.
    pub fn required(&self, flag: WorkerFlag) -> Result<&str, String> {
        self.non_empty(flag).ok_or_else(|| match self.grammar {
            FlagGrammar::Lenient => format!("{} is required", flag.name),
            FlagGrammar::Strict => format!("missing required flag: {}", flag.name),
        })
    }
}

/// A document worker's answer: its verdict, or the reason its argv or fired file was refused as
/// a usage error.
pub fn verdict_or_usage_error(checked: Result<Value, String>) -> WorkerOutcome {
    checked.map_or_else(WorkerOutcome::UsageError, WorkerOutcome::Verdict)
}

/// A document worker's `--output-path`, as given (messages quote it so) and resolved; refused
/// when nothing is there.
pub fn existing_output_path<'flags>(
    flags: &'flags WorkerArgs,
    project_dir: &Utf8Path,
) -> Result<(&'flags str, Utf8PathBuf), String> {
    let as_given = flags.required(OUTPUT_PATH_FLAG)?;
    let path = resolve_worker_path(project_dir, as_given);
    if !path.exists() {
        return Err(format!("--output-path not found: {as_given}"));
    }
    Ok((as_given, path))
}

/// The value of the flag at `index`: the next token, which must exist and must not start with
/// `--` (F9); else the grammar's usage error.
fn value_after<'args>(
    args: &'args [String],
    index: usize,
    grammar: FlagGrammar,
    flag: &str,
) -> Result<&'args str, String> {
    match (args.get(index + 1), grammar) {
        (Some(value), _) if !value.starts_with("--") => Ok(value),
        (_, FlagGrammar::Strict) => Err(format!("missing value for {flag}")),
        (None, FlagGrammar::Lenient) => {
            Err(format!("{flag} expects a value, got end of arguments."))
        }
        (Some(value), FlagGrammar::Lenient) => Err(format!(
            "{flag} expects a value, got another flag: \"{value}\"."
        )),
    }
}

/// `usage: aidlc engine sensor-<id> --stage <slug> --file-path <path>`.
fn usage_line(sensor: &ShippedSensor, flags: &[WorkerFlag]) -> String {
    let flags: Vec<String> = flags
        .iter()
        .map(|flag| format!("{} <{}>", flag.name, flag.value))
        .collect();
    format!(
        "usage: aidlc engine sensor-{} {}",
        sensor.id,
        flags.join(" ")
    )
}

/// A comma-separated flag value: items trimmed, empty items dropped, order kept.
pub fn split_csv(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(js_trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The files a whole-stage check reads, in order: the `--deliverables` stems that exist as
/// `<stem>.md` beside the fired file (each path once, in the list's order), then the fired file
/// when there is no list or `fired_file_too` (`upstream-coverage`; `claim-sources` reads only
/// the list), unless it is scaffolding (`memory.md`, `*-questions.md`, `*-timestamp.md`) or
/// already listed.
pub fn stage_scan_set(
    fired_path: &Utf8Path,
    deliverables: &[String],
    fired_file_too: bool,
) -> Vec<Utf8PathBuf> {
    let folder = fired_path.parent().unwrap_or(fired_path);
    let mut seen = BTreeSet::new();
    let mut paths: Vec<Utf8PathBuf> = deliverables
        .iter()
        .map(|stem| resolve_worker_path(folder, &format!("{stem}.md")))
        .filter(|path| path.exists() && seen.insert(path.clone()))
        .collect();
    let reads_fired = deliverables.is_empty() || fired_file_too;
    let is_scaffolding = is_scaffolding_file_name(fired_path.file_name().unwrap_or_default());
    if reads_fired && !is_scaffolding && !seen.contains(fired_path) {
        paths.push(fired_path.to_owned());
    }
    paths
}

/// `given` as an absolute, lexically normal path: backslashes are separators, a relative path
/// starts at the project folder (the reference worker's working folder), and `.` and `..` are
/// folded without touching the disk (as Node's `path.resolve`).
pub fn resolve_worker_path(project_dir: &Utf8Path, given: &str) -> Utf8PathBuf {
    lexically_normal(&project_dir.join(given.replace('\\', "/")))
}

/// `path` with `.` and `..` folded without touching the disk (as Node's `path.resolve` folds
/// them): a `..` at the root stays at the root; a `..` a relative path cannot take back stays.
pub(crate) fn lexically_normal(path: &Utf8Path) -> Utf8PathBuf {
    let mut normal = Utf8PathBuf::new();
    for component in path.components() {
        match component {
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => {
                let ends_in_parent =
                    normal.components().next_back() == Some(Utf8Component::ParentDir);
                if ends_in_parent || (!normal.pop() && !normal.has_root()) {
                    normal.push("..");
                }
            }
            other => normal.push(other.as_str()),
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sensors::descriptor::{OUTPUT_PATH_FLAG, STAGE_FLAG};
    use crate::runtime::sensors::test_support::words;
    use crate::runtime::sensors::{linter, traceability};

    #[test]
    fn both_grammars_refuse_a_flag_without_a_value_f9() {
        for (grammar, sensor) in [
            (FlagGrammar::Lenient, &traceability::SENSOR),
            (FlagGrammar::Strict, &linter::SENSOR),
        ] {
            for args in ["--stage", "--stage --stage x"] {
                let parsed = WorkerArgs::parse(&words(args), sensor, grammar);
                assert!(parsed.is_err(), "{grammar:?} {args}");
            }
        }
    }

    #[test]
    fn the_lenient_grammar_skips_strays_and_keeps_the_last_value() {
        let args = words("stray --stage a --unknown --stage b");
        let parsed = WorkerArgs::parse(&args, &traceability::SENSOR, FlagGrammar::Lenient).unwrap();
        assert_eq!(parsed.value(STAGE_FLAG), Some("b"));
        assert_eq!(
            parsed.required(OUTPUT_PATH_FLAG),
            Err("--output-path is required".to_owned())
        );
    }

    #[test]
    fn the_strict_grammar_answers_help_with_the_usage_line() {
        assert_eq!(
            WorkerArgs::parse(&words("--help"), &linter::SENSOR, FlagGrammar::Strict).unwrap_err(),
            "usage: aidlc engine sensor-linter --stage <slug> --file-path <path>"
        );
    }

    #[test]
    fn worker_paths_resolve_backslashes_and_dots_without_the_disk() {
        let project = Utf8Path::new("/p");
        assert_eq!(resolve_worker_path(project, "a\\b\\..\\c.md"), "/p/a/c.md");
        assert_eq!(resolve_worker_path(project, "/x/./y.md"), "/x/y.md");
        assert_eq!(split_csv(" a, ,b ,"), ["a", "b"]);
    }
}
