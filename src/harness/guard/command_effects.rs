//! What one simple command does, as far as the guard needs to know: whether it is one of the
//! human's commands, which program runs once the wrappers before it (`env`, `nohup`, `xargs`,
//! ..) are set aside, the scripts it hands to a shell (`sh -c`, `eval`, a here-document fed to
//! `bash`), and whether it only reads, changes folder, or may write the paths it names.
//!
//! Invariants: the human's commands are found by the words alone, in order, wherever options
//! stand and whatever program runs them (`aidlc`, a path to it, `npx aidlc`, `cargo run --`);
//! a program the guard does not know counts as writing every path it names.

/// The words of the human's commands, each an ordered subsequence of one command's words.
const HUMAN_ONLY_SEQUENCES: [(&[&str], &str); 2] = [
    (
        &["engine", "hook", "record-human-turn"],
        "record-human-turn",
    ),
    (&["engine", "log", "answer"], "engine log answer"),
];
/// The option that overrides a blocking sensor, as a word's beginning.
const OVERRIDE_OPTION: &str = "--override-blocking-sensor";
/// The reference's human-turn hook, as a program's (or script's) file name beginning.
const HUMAN_TURN_HOOK: &str = "aidlc-record-human-turn";

/// The shells whose `-c` string (or standard input) is a script.
const SHELLS: [&str; 8] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox"];
/// Interpreters whose `-c`/`-e` code is searched for the human's commands as text.
const INTERPRETERS: [&str; 10] = [
    "python",
    "python3",
    "node",
    "nodejs",
    "perl",
    "ruby",
    "bun",
    "deno",
    "php",
    "osascript",
];

/// Programs that only read the files they name.
const READERS: [&str; 53] = [
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ls",
    "wc",
    "stat",
    "file",
    "diff",
    "cmp",
    "jq",
    "sha256sum",
    "sha1sum",
    "sha512sum",
    "md5sum",
    "b2sum",
    "cksum",
    "shasum",
    "echo",
    "printf",
    "test",
    "[",
    "[[",
    "true",
    "false",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "tree",
    "du",
    "pwd",
    "which",
    "type",
    "awk",
    "gawk",
    "cut",
    "nl",
    "od",
    "hexdump",
    "strings",
    "bat",
    "column",
    "comm",
    "paste",
    "tac",
    "zcat",
];
/// Programs that remove (or move away) the files they name, and so what is inside a folder
/// they name. Every other program but the readers may write the files it names (`cp`, `ln`,
/// `tee`, `touch`, `dd`, `install`, `rsync`, `chmod`, `mkdir`, `tar`, `unzip`, a script).
const REMOVERS: [&str; 6] = ["rm", "rmdir", "unlink", "shred", "srm", "mv"];
/// `git` subcommands that only read the work tree.
const GIT_READERS: [&str; 12] = [
    "diff",
    "log",
    "show",
    "status",
    "blame",
    "grep",
    "ls-files",
    "rev-parse",
    "add",
    "commit",
    "fetch",
    "branch",
];
/// `git` subcommands that remove or rewrite work-tree files.
const GIT_REMOVERS: [&str; 6] = ["rm", "mv", "checkout", "restore", "clean", "reset"];

/// The word's file name: what follows its last `/`.
pub fn file_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The human's command among `words` (one simple command's, after quote removal), named as
/// the refusal names it. `program` is the program that runs once wrappers are set aside.
pub fn human_only_command(words: &[&str], program: &str) -> Option<&'static str> {
    let lowered: Vec<String> = words.iter().map(|word| word.to_lowercase()).collect();
    if lowered.iter().any(|word| word.starts_with(OVERRIDE_OPTION)) {
        return Some("--override-blocking-sensors");
    }
    for (sequence, named) in HUMAN_ONLY_SEQUENCES {
        if is_ordered_subsequence(&lowered, sequence) {
            return Some(named);
        }
    }
    let reads = READERS.contains(&file_name(program));
    (!reads
        && lowered.iter().any(|word| {
            !word.contains(char::is_whitespace) && file_name(word).starts_with(HUMAN_TURN_HOOK)
        }))
    .then_some(HUMAN_TURN_HOOK)
}

fn is_ordered_subsequence(words: &[String], sequence: &[&str]) -> bool {
    let mut wanted = sequence.iter().peekable();
    for word in words {
        if wanted.peek().is_some_and(|next| *next == word) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}

/// The human's command that `text` mentions in any spelling, for a text the guard cannot take
/// apart (or code for another interpreter): quotes, backslashes, `$`, backticks, parentheses
/// and whitespace removed and letters lowered, it holds `record-human-turn`,
/// `override-blocking-sensor`, or `engine`, `log` and `answer` in that order.
pub fn human_only_mention(text: &str) -> Option<&'static str> {
    let folded: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && !"'\"\\$`(){}".contains(*c))
        .flat_map(char::to_lowercase)
        .collect();
    if folded.contains("record-human-turn") {
        return Some("record-human-turn");
    }
    if folded.contains("override-blocking-sensor") {
        return Some("--override-blocking-sensors");
    }
    let engine = folded.find("engine")?;
    let log = engine + folded[engine..].find("log")?;
    folded[log..]
        .contains("answer")
        .then_some("engine log answer")
}

/// Options of each wrapper that take the next word as their value.
fn wrapper_options_with_values(wrapper: &str) -> Option<&'static [&'static str]> {
    Some(match wrapper {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "command" | "builtin" | "nohup" | "time" | "setsid" | "caffeinate" | "!" => &[],
        "exec" => &["-a"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p"],
        "stdbuf" => &["-i", "-o", "-e"],
        "sudo" | "doas" => &["-u", "-g", "-C", "-h", "-p", "-U"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "xargs" => &[
            "-I",
            "-i",
            "-n",
            "-L",
            "-l",
            "-P",
            "-s",
            "-d",
            "-E",
            "-e",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
        ],
        "npx" | "bunx" | "pnpx" => &["-p", "--package"],
        "watch" => &["-n", "--interval"],
        _ => return None,
    })
}

/// The words from the program that runs on, once the wrappers before it are set aside:
/// `env -i A=1 nohup xargs rm x` runs `rm x`.
pub fn after_wrappers<'w>(words: &'w [&'w str]) -> &'w [&'w str] {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        let name = file_name(word);
        let Some(with_values) = wrapper_options_with_values(name) else {
            return &words[at..];
        };
        at += 1;
        at += skip_options(&words[at..], with_values);
        if name == "timeout" {
            at += 1; // the duration
        }
        if name == "env" {
            while words
                .get(at)
                .is_some_and(|word| word.contains('=') && !word.starts_with('-'))
            {
                at += 1;
            }
        }
    }
    &words[words.len()..]
}

/// How many words at the start of `words` are options (with their values).
fn skip_options(words: &[&str], with_values: &[&str]) -> usize {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        if *word == "--" {
            return at + 1;
        }
        if !word.starts_with('-') {
            return at;
        }
        at += if with_values.contains(word) { 2 } else { 1 };
    }
    words.len()
}

/// The scripts a simple command hands on to be run as shell text: the string after a shell's
/// `-c`, the words after `eval`, the string of `env -S`, and its here-documents when a shell
/// reads its script from standard input.
pub fn shell_scripts(words: &[&str], here_documents: &[String]) -> Vec<String> {
    let mut scripts = Vec::new();
    for (index, word) in words.iter().enumerate() {
        let name = file_name(word);
        if name == "eval" {
            scripts.push(words[index + 1..].join(" "));
        } else if name == "env"
            && let Some(position) = words[index..]
                .iter()
                .position(|option| matches!(*option, "-S" | "--split-string"))
            && let Some(script) = words.get(index + position + 1)
        {
            scripts.push((*script).to_owned());
        } else if SHELLS.contains(&name) {
            match shell_invocation(&words[index + 1..]) {
                ShellInvocation::Script(script) => scripts.push(script.to_owned()),
                ShellInvocation::StandardInput => scripts.extend(here_documents.iter().cloned()),
                ShellInvocation::File => {}
            }
        }
    }
    scripts
}

/// Code handed to another interpreter (`python -c`, `node -e`, a here-document fed to
/// `python3`), searched as text.
pub fn interpreter_code<'w>(words: &[&'w str], here_documents: &'w [String]) -> Vec<&'w str> {
    let mut code = Vec::new();
    for (index, word) in words.iter().enumerate() {
        let name = file_name(word);
        if !INTERPRETERS
            .iter()
            .any(|interpreter| name.starts_with(interpreter))
        {
            continue;
        }
        for pair in words[index + 1..].windows(2) {
            if matches!(
                pair[0],
                "-c" | "-e" | "-E" | "--eval" | "-p" | "--print" | "-r"
            ) {
                code.push(pair[1]);
            }
        }
        code.extend(here_documents.iter().map(String::as_str));
    }
    code
}

enum ShellInvocation<'w> {
    Script(&'w str),
    StandardInput,
    File,
}

/// What a shell runs, from the words after its name.
fn shell_invocation<'w>(arguments: &[&'w str]) -> ShellInvocation<'w> {
    let mut reads_string = false;
    let mut at = 0;
    while let Some(word) = arguments.get(at) {
        if *word == "--" {
            at += 1;
            break;
        }
        if !(word.starts_with('-') || word.starts_with('+')) || *word == "-" {
            break;
        }
        if matches!(
            *word,
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
        ) {
            at += 2;
            continue;
        }
        if !word.starts_with("--") && word.contains('c') {
            reads_string = true;
        }
        at += 1;
    }
    match arguments.get(at) {
        Some(script) if reads_string => ShellInvocation::Script(script),
        Some(_) => ShellInvocation::File,
        None => ShellInvocation::StandardInput,
    }
}

/// What a program (its words, wrappers set aside) does with the paths it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandEffect {
    /// It only reads them (or prints them).
    Reads,
    /// `cd` or `pushd`: later commands of the list run in the folder named.
    ChangesFolder,
    /// It may write them; `removes`: it may remove them, and so whatever they hold.
    Writes { removes: bool },
}

/// What `words` (wrappers set aside, the program first) do with the paths they name.
pub fn command_effect(words: &[&str]) -> CommandEffect {
    let Some(program) = words.first() else {
        return CommandEffect::Reads;
    };
    let name = file_name(program);
    let arguments = &words[1..];
    let has = |options: &[&str]| arguments.iter().any(|word| options.contains(word));
    let in_place = arguments
        .iter()
        .any(|word| word.starts_with("-i") || word.starts_with("--in-place"));
    let reads_only = match name {
        "cd" | "pushd" => return CommandEffect::ChangesFolder,
        "git" => return git_effect(arguments),
        "find" if has(&["-delete"]) || !find_runs_only_readers(arguments) => {
            return CommandEffect::Writes { removes: true };
        }
        "find" => !has(&["-fprint", "-fprint0", "-fprintf", "-fls"]),
        "sed" => !in_place,
        // The engine writes its own records, under its own rules.
        "aidlc" => true,
        _ => READERS.contains(&name),
    };
    if reads_only {
        CommandEffect::Reads
    } else {
        CommandEffect::Writes {
            removes: REMOVERS.contains(&name),
        }
    }
}

/// The folder a command works on when it names none: `find` with no starting point and
/// `git clean` with no path work on the folder they run in.
pub fn implied_operands(words: &[&str]) -> &'static [&'static str] {
    let Some(program) = words.first() else {
        return &[];
    };
    let arguments = &words[1..];
    let names_none = |after: &[&str]| after.iter().all(|word| word.starts_with('-'));
    match file_name(program) {
        "find" if arguments.first().is_none_or(|first| first.starts_with('-')) => &["."],
        "git" => match arguments.iter().position(|word| *word == "clean") {
            Some(at) if names_none(&arguments[at + 1..]) => &["."],
            _ => &[],
        },
        _ => &[],
    }
}

/// Whether every program `find` runs on what it finds (`-exec`, `-execdir`, `-ok`, `-okdir`)
/// only reads.
fn find_runs_only_readers(arguments: &[&str]) -> bool {
    arguments
        .iter()
        .zip(arguments.iter().skip(1))
        .filter(|(option, _)| matches!(**option, "-exec" | "-execdir" | "-ok" | "-okdir"))
        .all(|(_, program)| READERS.contains(&file_name(program)))
}

fn git_effect(arguments: &[&str]) -> CommandEffect {
    let mut at = 0;
    while let Some(word) = arguments.get(at) {
        if matches!(*word, "-C" | "-c" | "--git-dir" | "--work-tree") {
            at += 2;
        } else if word.starts_with('-') {
            at += 1;
        } else {
            break;
        }
    }
    match arguments.get(at) {
        Some(subcommand) if GIT_READERS.contains(subcommand) => CommandEffect::Reads,
        Some(subcommand) if GIT_REMOVERS.contains(subcommand) => {
            CommandEffect::Writes { removes: true }
        }
        _ => CommandEffect::Writes { removes: false },
    }
}

/// The words of `arguments` that may name paths, with the index of the word each is from:
/// every word but options, and an option's or operand's value after `=` (`--target=DIR`,
/// `of=FILE`).
pub fn path_operands<'w>(arguments: &[&'w str]) -> Vec<(usize, &'w str)> {
    let mut operands = Vec::new();
    for (index, word) in arguments.iter().enumerate() {
        if let Some((_, value)) = word.split_once('=') {
            operands.push((index, value));
            if word.starts_with('-') {
                continue;
            }
        }
        if !word.starts_with('-') {
            operands.push((index, *word));
        }
    }
    operands
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_human_s_commands_are_found_by_their_words_in_order() {
        for words in [
            &["aidlc", "engine", "hook", "record-human-turn"][..],
            &[
                "npx",
                "aidlc",
                "--project-dir",
                ".",
                "engine",
                "hook",
                "--harness",
                "kiro",
                "record-human-turn",
            ],
            &[
                "cargo", "run", "--", "engine", "log", "--color", "never", "answer",
            ],
            &[
                "/usr/local/bin/aidlc",
                "engine",
                "gate",
                "start",
                "--override-blocking-sensors=yes",
            ],
            &["bun", ".claude/hooks/aidlc-record-human-turn.ts"],
            &["Aidlc", "ENGINE", "Log", "Answer"],
        ] {
            assert!(human_only_command(words, words[0]).is_some(), "{words:?}");
        }
        for words in [
            &["aidlc", "engine", "log", "decision", "--stage", "s"][..],
            &["grep", "-rn", "record-human-turn", "src"],
            &["cat", ".claude/hooks/aidlc-record-human-turn.ts"],
            &["git", "commit", "-m", "engine log answer"],
            &["aidlc", "engine", "answer", "log"],
        ] {
            assert_eq!(human_only_command(words, words[0]), None, "{words:?}");
        }
    }

    #[test]
    fn mentions_are_found_in_any_spelling() {
        assert_eq!(
            human_only_mention("aidlc engine hook 'record-human\"-turn"),
            Some("record-human-turn")
        );
        assert_eq!(
            human_only_mention("x --Override-\\Blocking-sensors"),
            Some("--override-blocking-sensors")
        );
        assert_eq!(
            human_only_mention("aidlc engine log --x answer '"),
            Some("engine log answer")
        );
        assert_eq!(human_only_mention("echo 'it"), None);
    }

    #[test]
    fn wrappers_are_set_aside_and_shell_scripts_found() {
        let words = [
            "env", "-i", "-u", "X", "A=1", "nohup", "nice", "-n", "5", "xargs", "-I", "{}", "rm",
            "{}",
        ];
        assert_eq!(after_wrappers(&words), ["rm", "{}"]);
        assert_eq!(
            after_wrappers(&["timeout", "-s", "KILL", "5", "ls"]),
            ["ls"]
        );
        assert_eq!(
            after_wrappers(&["command", "-p", "exec", "-a", "x", "ls"]),
            ["ls"]
        );
        assert_eq!(
            shell_scripts(&["bash", "-o", "pipefail", "-ec", "a b", "arg0"], &[]),
            ["a b"]
        );
        assert_eq!(shell_scripts(&["eval", "a", "b"], &[]), ["a b"]);
        assert_eq!(
            shell_scripts(&["/bin/sh"], &["x y\n".to_owned()]),
            ["x y\n"]
        );
        assert!(shell_scripts(&["bash", "script.sh"], &["x".to_owned()]).is_empty());
        assert_eq!(shell_scripts(&["env", "-S", "a b"], &[]), ["a b"]);
        assert_eq!(interpreter_code(&["python3", "-c", "x"], &[]), ["x"]);
        assert_eq!(interpreter_code(&["python3", "-c"], &[]), [""; 0]);
        assert_eq!(interpreter_code(&["node"], &["y".to_owned()]), ["y"]);
    }

    #[test]
    fn commands_are_readers_writers_or_removers() {
        for (words, effect) in [
            (&["cat", "x"][..], CommandEffect::Reads),
            (&["find", ".", "-name", "x"], CommandEffect::Reads),
            (
                &["find", ".", "-delete"],
                CommandEffect::Writes { removes: true },
            ),
            (
                &["find", ".", "-exec", "grep", "x", "{}", ";"],
                CommandEffect::Reads,
            ),
            (
                &[
                    "find", ".", "-exec", "grep", "x", "{}", ";", "-exec", "rm", "{}", ";",
                ],
                CommandEffect::Writes { removes: true },
            ),
            (&["sed", "-n", "p", "x"], CommandEffect::Reads),
            (
                &["sed", "-i.bak", "s/a/b/", "x"],
                CommandEffect::Writes { removes: false },
            ),
            (&["git", "-C", "d", "log"], CommandEffect::Reads),
            (
                &["git", "clean", "-fdx"],
                CommandEffect::Writes { removes: true },
            ),
            (&["rm", "-rf", "x"], CommandEffect::Writes { removes: true }),
            (&["tee", "x"], CommandEffect::Writes { removes: false }),
            (&["my-tool", "x"], CommandEffect::Writes { removes: false }),
            (&["cd", "x"], CommandEffect::ChangesFolder),
        ] {
            assert_eq!(command_effect(words), effect, "{words:?}");
        }
        assert_eq!(implied_operands(&["git", "clean", "-fdx"]), ["."]);
        assert_eq!(implied_operands(&["git", "clean", "-f", "src"]), [""; 0]);
        assert_eq!(implied_operands(&["find", "-name", "x", "-delete"]), ["."]);
        assert_eq!(implied_operands(&["find", "src", "-delete"]), [""; 0]);
        assert_eq!(
            path_operands(&["-rf", "a", "--target=b", "of=c"]),
            [(1, "a"), (2, "b"), (3, "c"), (3, "of=c")]
        );
    }
}
