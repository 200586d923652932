//! The reference's words for the usage errors of `aidlc engine sensor list|describe|fire`
//! (D19, D20, D47), so that people and scripts moving between the two engines read the
//! same sentence: `fire requires --stage <slug>`, `describe requires a sensor id`, …
//!
//! Only arguments the argument parser already refused reach [`reference_message`]; it reads
//! them in the reference's order (the subcommand, the positional id, each flag's value, the
//! required flags) and names the first problem the reference names. Anything the reference
//! accepts and this engine does not (an unknown flag, a stray word) keeps the parser's own
//! message. The exit status stays D9's 2 either way.

/// The subcommands of `aidlc engine sensor`, as the reference lists them.
const SUBCOMMANDS: [&str; 3] = ["describe", "fire", "list"];

/// What to print for a refused `aidlc engine sensor …` command line (`args` without the program
/// name); `None` when the arguments are not a sensor command, or the reference has no message
/// for what is wrong with them.
pub(super) fn reference_message(args: &[String]) -> Option<ReferenceMessage> {
    let args = without_leading_global_options(args);
    let [engine, sensor, rest @ ..] = args else {
        return None;
    };
    if engine != "engine" || sensor != "sensor" {
        return None;
    }
    let Some((subcommand, after)) = rest.split_first() else {
        return Some(ReferenceMessage::Usage(format!(
            "Usage: aidlc-sensor <subcommand>. Valid: {}. Run with --help for detail.",
            SUBCOMMANDS.join(", ")
        )));
    };
    match subcommand.as_str() {
        "fire" => fire_message(after),
        "describe" => describe_message(after),
        "list" => flag_value_message(after),
        other if other.starts_with('-') => None,
        other => Some(ReferenceMessage::Error(format!(
            "unknown subcommand: {other}. Valid: {}.",
            SUBCOMMANDS.join(", ")
        ))),
    }
}

/// `args` after the global options written before the subcommand (`--color never engine …`).
fn without_leading_global_options(mut args: &[String]) -> &[String] {
    loop {
        match args {
            [flag, _, rest @ ..] if flag == "--color" => args = rest,
            [flag, rest @ ..] if flag.starts_with("--color=") => args = rest,
            _ => return args,
        }
    }
}

/// A reference message: an error (printed as `error: <text>`) or the bare usage line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ReferenceMessage {
    Error(String),
    Usage(String),
}

/// D20 steps 1–3: the positional id (one starting with `--` counts as missing), each flag's
/// value, then `--stage` and `--output-path`.
fn fire_message(after: &[String]) -> Option<ReferenceMessage> {
    let Some((_, flags)) = after.split_first().filter(|(id, _)| !id.starts_with("--")) else {
        return Some(ReferenceMessage::Error(
            "fire requires a sensor id as first positional arg".to_owned(),
        ));
    };
    if let Some(message) = flag_value_message(flags) {
        return Some(message);
    }
    for (flag, what) in [("--stage", "<slug>"), ("--output-path", "<path>")] {
        if !has_flag(flags, flag) {
            return Some(ReferenceMessage::Error(format!(
                "fire requires {flag} {what}"
            )));
        }
    }
    None
}

/// D47: a missing or flag-like id, then each flag's value.
fn describe_message(after: &[String]) -> Option<ReferenceMessage> {
    match after.split_first() {
        Some((id, flags)) if !id.starts_with("--") => flag_value_message(flags),
        _ => Some(ReferenceMessage::Error(
            "describe requires a sensor id".to_owned(),
        )),
    }
}

/// D19: every `--flag` needs a value, and a value is not another flag.
fn flag_value_message(tokens: &[String]) -> Option<ReferenceMessage> {
    let mut index = 0;
    while let Some(token) = tokens.get(index) {
        if !is_flag_needing_a_value(token) {
            index += 1;
            continue;
        }
        match tokens.get(index + 1) {
            None => {
                return Some(ReferenceMessage::Error(format!(
                    "{token} expects a value, got end of arguments."
                )));
            }
            Some(next) if next.starts_with("--") => {
                return Some(ReferenceMessage::Error(format!(
                    "{token} expects a value, got another flag: \"{next}\"."
                )));
            }
            Some(_) => index += 2,
        }
    }
    None
}

/// `--name` (not `--name=value`, which carries its value, and not `--help`).
fn is_flag_needing_a_value(token: &str) -> bool {
    token.len() > 2 && token.starts_with("--") && !token.contains('=') && token != "--help"
}

fn has_flag(tokens: &[String], flag: &str) -> bool {
    tokens.iter().any(|token| {
        token == flag
            || token
                .strip_prefix(flag)
                .is_some_and(|rest| rest.starts_with('='))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(line: &str) -> Option<ReferenceMessage> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        reference_message(&args)
    }

    #[expect(
        clippy::unnecessary_wraps,
        reason = "it is compared with what reference_message returns"
    )]
    fn error(text: &str) -> Option<ReferenceMessage> {
        Some(ReferenceMessage::Error(text.to_owned()))
    }

    #[test]
    fn fire_refusals_come_in_the_reference_s_order() {
        let cases = [
            (
                "engine sensor fire",
                "fire requires a sensor id as first positional arg",
            ),
            (
                "engine sensor fire --stage s --output-path p",
                "fire requires a sensor id as first positional arg",
            ),
            ("engine sensor fire x", "fire requires --stage <slug>"),
            (
                "engine sensor fire x --output-path p",
                "fire requires --stage <slug>",
            ),
            (
                "engine sensor fire x --stage s",
                "fire requires --output-path <path>",
            ),
            (
                "engine sensor fire x --stage",
                "--stage expects a value, got end of arguments.",
            ),
            (
                "engine sensor fire x --stage --output-path p",
                "--stage expects a value, got another flag: \"--output-path\".",
            ),
            (
                "engine sensor fire x --stage s --output-path",
                "--output-path expects a value, got end of arguments.",
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(message(line), error(expected), "{line}");
        }
        assert_eq!(
            message("engine sensor fire x --stage=s --output-path=p"),
            None
        );
        assert_eq!(
            message("--color never engine sensor fire x --stage s"),
            error("fire requires --output-path <path>")
        );
        assert_eq!(
            message("--color=always engine sensor describe"),
            error("describe requires a sensor id")
        );
    }

    #[test]
    fn describe_list_and_the_subcommand() {
        assert_eq!(
            message("engine sensor describe"),
            error("describe requires a sensor id")
        );
        assert_eq!(
            message("engine sensor describe --project-dir x"),
            error("describe requires a sensor id")
        );
        assert_eq!(
            message("engine sensor describe linter --harness"),
            error("--harness expects a value, got end of arguments.")
        );
        assert_eq!(
            message("engine sensor list --project-dir"),
            error("--project-dir expects a value, got end of arguments.")
        );
        assert_eq!(
            message("engine sensor"),
            Some(ReferenceMessage::Usage(
                "Usage: aidlc-sensor <subcommand>. Valid: describe, fire, list. Run with --help for detail."
                    .to_owned()
            ))
        );
        assert_eq!(
            message("engine sensor bogus"),
            error("unknown subcommand: bogus. Valid: describe, fire, list.")
        );
    }

    #[test]
    fn what_the_reference_accepts_keeps_the_parser_s_message() {
        for line in [
            "engine sensor list extra",
            "engine sensor fire x --stage s --output-path p --bogus v",
            "engine sensor --bogus",
            "engine hook run-sensors --project-dir",
            "compile --bogus",
        ] {
            assert_eq!(message(line), None, "{line}");
        }
    }
}
