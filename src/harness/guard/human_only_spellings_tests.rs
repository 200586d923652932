//! A generated table of spellings: each of the human's commands written every way a shell
//! reads the same words (quoted, escaped, with options between the words, behind assignments
//! and wrappers, inside `sh -c`, substitutions, subshells, lists and `eval`), all refused; and
//! harmless commands written the same ways, all allowed.

use std::fmt::Write as _;

use super::*;

/// The human's commands, as words.
const HUMAN_ONLY: [&[&str]; 6] = [
    &["aidlc", "engine", "hook", "record-human-turn"],
    &[
        "aidlc",
        "engine",
        "log",
        "answer",
        "--stage",
        "s",
        "--details",
        "yes",
    ],
    &[
        "aidlc",
        "engine",
        "gate",
        "start",
        "s",
        "--override-blocking-sensors",
    ],
    &["bun", ".claude/hooks/aidlc-record-human-turn.ts"],
    &[
        "npx",
        "aidlc",
        "engine",
        "hook",
        "record-human-turn",
        "--harness",
        "kiro",
    ],
    &["cargo", "run", "--", "engine", "log", "answer"],
];

/// Commands that only look like them, or read what the guard protects.
const HARMLESS: [&[&str]; 12] = [
    &[
        "aidlc",
        "engine",
        "log",
        "decision",
        "--stage",
        "s",
        "--decision",
        "d",
    ],
    &["aidlc", "engine", "gate", "start", "s"],
    &["cargo", "test"],
    &["npm", "audit"],
    &["git", "commit", "-m", "record human turn notes"],
    &["echo", "override", "blocking", "sensors"],
    &["grep", "-rn", "record-human-turn", "src"],
    &["cat", ".claude/hooks/aidlc-record-human-turn.ts"],
    &[
        "aidlc",
        "engine",
        "log",
        "decision",
        "--details",
        "answer later",
    ],
    &["aidlc", "engine", "hook", "guard"],
    &["cat", "aidlc/spaces/default/intents/r/audit/x.md"],
    &["ls", "aidlc/spaces/default/intents/r/audit"],
];

/// Ways to write one word so a shell reads it back unchanged.
fn spell_word(word: &str, style: usize) -> String {
    match style {
        0 if !word.contains(' ') => word.to_owned(),
        0 | 1 => format!("'{}'", word.replace('\'', r"'\''")),
        2 => double_quoted(word),
        3 => {
            let middle = word.len() / 2;
            format!(
                "\"{}\"'{}'",
                &word[..middle],
                word[middle..].replace('\'', r"'\''")
            )
        }
        4 => word.chars().flat_map(|c| ['\\', c]).collect(),
        5 => format!("$'{}'", word.replace('\\', r"\\").replace('\'', r"\'")),
        _ => {
            let mut escaped = String::from("$'");
            for byte in word.bytes() {
                write!(escaped, "\\x{byte:02x}").expect("a String takes any text");
            }
            escaped.push('\'');
            escaped
        }
    }
}
const WORD_STYLES: usize = 7;

/// Options put between the words (after the first, or after every second word).
const INSERTIONS: [&str; 3] = ["", "--color never", "--project-dir ."];

fn with_insertion(words: &[&str], insertion: &str, style: usize) -> String {
    let mut spelled = Vec::new();
    for (index, word) in words.iter().enumerate() {
        spelled.push(spell_word(word, style));
        if !insertion.is_empty() && index % 2 == 0 && index + 1 < words.len() {
            spelled.push(insertion.to_owned());
        }
    }
    spelled.join(" ")
}

const PREFIXES: [&str; 7] = [
    "",
    "A=1 ",
    "env ",
    "env -i PATH=/bin ",
    "nohup ",
    "command ",
    "A='x y' exec ",
];

fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn double_quoted(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// Ways to run a command inside a larger one.
fn wrap(command: &str, wrapper: usize) -> String {
    match wrapper {
        0 => command.to_owned(),
        1 => format!("sh -c {}", single_quoted(command)),
        2 => format!("bash -lc {}", double_quoted(command)),
        3 => format!("echo $({command})"),
        4 => format!(
            "echo `{}`",
            command.replace('\\', r"\\").replace('`', r"\`")
        ),
        5 => format!("({command})"),
        6 => format!("{{ {command}; }}"),
        7 => format!("true; {command}"),
        8 => format!("cd /tmp && {command} || echo no"),
        9 => format!("echo x | {command} | cat"),
        10 => format!("eval {}", single_quoted(command)),
        11 => format!("zsh -c {} &\nwait", single_quoted(command)),
        _ => format!("dash <<'END'\n{command}\nEND"),
    }
}
const WRAPPERS: usize = 13;

/// Every spelling of each of `commands`.
fn spellings(commands: &[&[&str]]) -> Vec<String> {
    let mut all = Vec::new();
    for words in commands {
        for style in 0..WORD_STYLES {
            for insertion in INSERTIONS {
                for prefix in PREFIXES {
                    let command = format!("{prefix}{}", with_insertion(words, insertion, style));
                    for wrapper in 0..WRAPPERS {
                        all.push(wrap(&command, wrapper));
                    }
                }
            }
        }
    }
    all
}

fn bash(command: &str) -> GuardVerdict {
    let input = serde_json::json!({ "command": command });
    judge(
        "Bash",
        &input,
        &Guarded {
            cwd: Some(Utf8Path::new("/p")),
            places: &ProtectedPlaces::new(Some(Utf8Path::new("/h/t/s.jsonl")), None),
        },
    )
}

/// 6 human-only commands in 11,466 spellings, all refused; 12 harmless ones in 22,932, all
/// allowed.
#[test]
fn every_spelling_of_a_human_only_command_is_refused_and_harmless_ones_are_allowed() {
    let refused = spellings(&HUMAN_ONLY);
    assert_eq!(refused.len(), 11_466);
    let wrongly_allowed: Vec<&String> = refused
        .iter()
        .filter(|command| {
            !matches!(bash(command), GuardVerdict::Deny { ref reason } if reason.contains("is the human's to run"))
        })
        .collect();
    assert!(
        wrongly_allowed.is_empty(),
        "{} allowed, as {:#?}",
        wrongly_allowed.len(),
        &wrongly_allowed[..wrongly_allowed.len().min(12)]
    );
    let allowed = spellings(&HARMLESS);
    assert_eq!(allowed.len(), 22_932);
    let wrongly_refused: Vec<(&String, GuardVerdict)> = allowed
        .iter()
        .map(|command| (command, bash(command)))
        .filter(|(_, verdict)| *verdict != GuardVerdict::Allow)
        .collect();
    assert!(
        wrongly_refused.is_empty(),
        "{} refused, as {:#?}",
        wrongly_refused.len(),
        &wrongly_refused[..wrongly_refused.len().min(12)]
    );
}
