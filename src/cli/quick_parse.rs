//! The two command lines an agent harness runs on every write, `aidlc engine hook run-sensors
//! [--harness H] [--project-dir D] [--audit-hook F]` and `aidlc engine sensor fire <id> --stage
//! S --output-path P [--harness H] [--project-dir D]`, read without building clap's command
//! tree, whose construction (every subcommand, every help text, the help additions) cost about
//! as many instructions as the rest of a write hook's run (`benches/twins.sh` measures it; the
//! figures are in `benches/whole_process.rs`).
//!
//! Invariants:
//! - [`quick_parse`] returns a [`Cli`] only for an argument list that clap parses into the very
//!   same [`Cli`] (a test compares the two on every shape it accepts); anything else is `None`,
//!   and clap parses it, with its own messages and exit statuses: a flag not listed here (help,
//!   `--color`, `--verbose`), `--flag=value`, a flag without a value, a value that is empty or
//!   starts with `-`, a flag given twice, a missing required flag, an unknown harness, a
//!   positional too many or too few, a word that is not UTF-8;
//! - it never reports an error itself, so no usage message has two spellings.

use std::ffi::OsString;

use camino::Utf8PathBuf;

use crate::cli::args::{
    Cli, Command, EngineCommand, FireArgs, HookCommand, ProjectArgs, RunSensorsArgs, SensorCommand,
    When,
};
use crate::harness::Harness;

/// The flags of `engine hook run-sensors`, in [`FlagValues`] order.
const RUN_SENSORS_FLAGS: [&str; 3] = ["--project-dir", "--harness", "--audit-hook"];

/// The flags of `engine sensor fire`, in [`FlagValues`] order.
const FIRE_FLAGS: [&str; 4] = ["--project-dir", "--harness", "--stage", "--output-path"];

/// `args` (the program's name first) as clap would parse them, when they are one of the plain
/// shapes above; `None` leaves them to clap.
pub fn quick_parse(args: &[OsString]) -> Option<Cli> {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|arg| arg.to_str())
        .collect::<Option<_>>()?;
    let command = match words.as_slice() {
        ["engine", "hook", "run-sensors", rest @ ..] => run_sensors(rest)?,
        ["engine", "sensor", "fire", rest @ ..] => fire(rest)?,
        _ => return None,
    };
    Some(Cli {
        command: Command::Engine(command),
        color: When::Auto,
    })
}

fn run_sensors(words: &[&str]) -> Option<EngineCommand> {
    let (values, positionals) = flag_values(words, &RUN_SENSORS_FLAGS)?;
    let [project_dir, harness, audit_hook] = values.0;
    if !positionals.is_empty() {
        return None;
    }
    Some(EngineCommand::Hook(HookCommand::RunSensors(
        RunSensorsArgs {
            audit_hook: audit_hook.map(Utf8PathBuf::from),
            project: project_args(project_dir, harness)?,
        },
    )))
}

fn fire(words: &[&str]) -> Option<EngineCommand> {
    let (values, positionals) = flag_values(words, &FIRE_FLAGS)?;
    let [project_dir, harness, stage, output_path] = values.0;
    let [id] = positionals.as_slice() else {
        return None;
    };
    Some(EngineCommand::Sensor(SensorCommand::Fire(FireArgs {
        id: (*id).to_owned(),
        stage: stage?.to_owned(),
        output_path: Utf8PathBuf::from(output_path?),
        project: project_args(project_dir, harness)?,
    })))
}

/// `None` when the harness is not one of clap's values for it (clap then says which are).
fn project_args(project_dir: Option<&str>, harness: Option<&str>) -> Option<ProjectArgs> {
    let harness = match harness {
        Some(value) => Some(<Harness as clap::ValueEnum>::from_str(value, false).ok()?),
        None => None,
    };
    Some(ProjectArgs {
        project_dir: project_dir.map(Utf8PathBuf::from),
        harness,
    })
}

/// The value of each flag of a command (at most once each), in the order of its flag list.
struct FlagValues<'a, const N: usize>([Option<&'a str>; N]);

/// The words split into `--flag value` pairs of `flags` and the positionals between them;
/// `None` on anything else (see the module's invariants).
fn flag_values<'a, const N: usize>(
    words: &[&'a str],
    flags: &[&str; N],
) -> Option<(FlagValues<'a, N>, Vec<&'a str>)> {
    let mut values = [None; N];
    let mut positionals = Vec::new();
    let mut words = words.iter();
    while let Some(&word) = words.next() {
        if word.is_empty() {
            return None;
        }
        if !word.starts_with('-') {
            positionals.push(word);
            continue;
        }
        let index = flags.iter().position(|flag| *flag == word)?;
        let &value = words.next()?;
        if value.is_empty() || value.starts_with('-') || values[index].is_some() {
            return None;
        }
        values[index] = Some(value);
    }
    Some((FlagValues(values), positionals))
}

#[cfg(test)]
mod tests {
    use clap::FromArgMatches as _;

    use super::*;

    fn os_args(words: &[&str]) -> Vec<OsString> {
        std::iter::once("aidlc")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// What clap makes of the same words, as text (the argument types implement `Debug` only).
    fn clap_parse(args: &[OsString]) -> Option<String> {
        let mut matches = crate::cli::command().try_get_matches_from(args).ok()?;
        Cli::from_arg_matches_mut(&mut matches)
            .ok()
            .map(|cli| format!("{cli:?}"))
    }

    /// Every spelling clap accepts for a harness, aliases included.
    fn harness_spellings() -> Vec<String> {
        <Harness as clap::ValueEnum>::value_variants()
            .iter()
            .filter_map(clap::ValueEnum::to_possible_value)
            .flat_map(|value| {
                value
                    .get_name_and_aliases()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn accepted_shapes() -> Vec<Vec<String>> {
        let mut shapes: Vec<Vec<&str>> = vec![
            vec!["engine", "hook", "run-sensors"],
            vec!["engine", "hook", "run-sensors", "--project-dir", "/p q/ré"],
            vec![
                "engine",
                "hook",
                "run-sensors",
                "--audit-hook",
                ".codex/hooks/aidlc-audit-logger.ts",
                "--project-dir",
                "relative/dir",
            ],
            vec![
                "engine",
                "sensor",
                "fire",
                "required-sections",
                "--stage",
                "intent-capture",
                "--output-path",
                "a b/intent-statement.md",
            ],
            vec![
                "engine",
                "sensor",
                "fire",
                "--output-path",
                "/abs/file.md",
                "linter",
                "--project-dir",
                ".",
                "--stage",
                "code-generation",
            ],
            vec![
                "engine",
                "sensor",
                "fire",
                "--stage",
                "s",
                "--output-path",
                "f",
                "x-y",
            ],
        ];
        let mut owned: Vec<Vec<String>> = shapes
            .drain(..)
            .map(|shape| shape.into_iter().map(str::to_owned).collect())
            .collect();
        for harness in harness_spellings() {
            owned.push(
                ["engine", "hook", "run-sensors", "--harness", &harness]
                    .map(str::to_owned)
                    .to_vec(),
            );
            owned.push(
                [
                    "engine",
                    "sensor",
                    "fire",
                    "linter",
                    "--harness",
                    &harness,
                    "--stage",
                    "s",
                    "--output-path",
                    "f",
                ]
                .map(str::to_owned)
                .to_vec(),
            );
        }
        owned
    }

    #[test]
    fn every_accepted_shape_is_what_clap_parses() {
        let shapes = accepted_shapes();
        assert!(shapes.len() > 10, "the harness spellings were not found");
        for shape in shapes {
            let words: Vec<&str> = shape.iter().map(String::as_str).collect();
            let args = os_args(&words);
            let quick = quick_parse(&args).unwrap_or_else(|| panic!("{words:?} was left to clap"));
            assert_eq!(Some(format!("{quick:?}")), clap_parse(&args), "{words:?}");
        }
    }

    #[test]
    fn anything_else_is_left_to_clap() {
        let left: &[&[&str]] = &[
            &[],
            &["--version"],
            &["engine", "hook"],
            &["engine", "hook", "run-sensors", "--help"],
            &["engine", "hook", "run-sensors", "--verbose"],
            &["engine", "hook", "run-sensors", "--color", "never"],
            &["--color", "never", "engine", "hook", "run-sensors"],
            &["engine", "hook", "run-sensors", "--harness"],
            &["engine", "hook", "run-sensors", "--harness", "claude-code"],
            &["engine", "hook", "run-sensors", "--harness=codex"],
            &[
                "engine",
                "hook",
                "run-sensors",
                "--harness",
                "codex",
                "--harness",
                "kiro",
            ],
            &["engine", "hook", "run-sensors", "--project-dir", ""],
            &["engine", "hook", "run-sensors", "--project-dir", "-x"],
            &["engine", "hook", "run-sensors", "extra"],
            &["engine", "hook", "run-sensors", ""],
            &["engine", "hook", "run-sensors", "--", "x"],
            &["engine", "hook", "record-human-turn"],
            &["engine", "sensor", "fire", "linter", "--stage", "s"],
            &[
                "engine",
                "sensor",
                "fire",
                "--stage",
                "s",
                "--output-path",
                "f",
            ],
            &[
                "engine",
                "sensor",
                "fire",
                "a",
                "b",
                "--stage",
                "s",
                "--output-path",
                "f",
            ],
            &[
                "engine",
                "sensor",
                "fire",
                "linter",
                "--stage",
                "s",
                "--output-path",
                "f",
                "--audit-hook",
                "x",
            ],
            &[
                "engine",
                "sensor",
                "fire",
                "linter",
                "--stage",
                "-s",
                "--output-path",
                "f",
            ],
            &["engine", "sensor", "list"],
            &["compile"],
        ];
        for words in left {
            assert!(quick_parse(&os_args(words)).is_none(), "{words:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_word_that_is_not_utf8_is_left_to_clap() {
        use std::os::unix::ffi::OsStringExt as _;
        let mut args = os_args(&["engine", "hook", "run-sensors", "--project-dir"]);
        args.push(OsString::from_vec(vec![0x66, 0xff]));
        assert!(quick_parse(&args).is_none());
    }
}
