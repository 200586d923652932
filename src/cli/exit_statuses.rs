//! The exit statuses of every command (D9's codes as each command uses them): one table that
//! `--help` (its `Exit status:` lines) and the manual pages (their EXIT STATUS sections) both
//! read, so the two never disagree. The table has an entry for every command path; a test in
//! the manual pages' module fails when one is missing.

/// One exit status and what it means for the command.
pub type Status = (u8, &'static str);

/// The exit statuses of the command `path` names (its words after `aidlc`), D9's codes as that
/// command uses them; `None` for a path the table lacks. A group of subcommands (`engine`,
/// `gate`, …) exits as its subcommand does; its own entry says what it does without one.
pub fn exit_statuses(path: &[&str]) -> Option<&'static [Status]> {
    const GROUP: &[Status] = &[(2, "no subcommand was given, or an unknown one (usage)")];
    const INTERRUPTED: Status = (
        130,
        "interrupted (SIGINT, SIGTERM or SIGHUP): running workers are stopped and each started fire's end is recorded as `script-error: interrupted`",
    );
    let statuses: &'static [Status] = match path {
        [] => &[
            (0, "success"),
            (
                1,
                "findings: compile errors, drift under `--check`, findings of blocking sensors, a failed gate or doctor row",
            ),
            (
                2,
                "usage or environment error: a bad option, no project, unreadable or broken inputs, an output that cannot be written, or a check that evaluated nothing",
            ),
            (3, "a blocking sensor could not be evaluated (`gate check`)"),
            (101, "internal error: a bug; aidlc prints how to report it"),
            (
                127,
                "the tool of a shipped sensor run as a worker (`engine sensor-<id>`) is not installed",
            ),
            (
                130,
                "interrupted: Ctrl-C on `compile --watch`, or SIGINT, SIGTERM or SIGHUP to a command that fires sensors",
            ),
        ],
        ["init"] => &[
            (
                0,
                "the framework is written; files already identical are left alone, and files that differ are skipped and listed (unless `--force`)",
            ),
            (2, "the folder or a file cannot be written"),
        ],
        ["compile"] => &[
            (
                0,
                "compiled, or up to date; with `--check`, both outputs are what the sources compile to",
            ),
            (
                1,
                "the sources have errors (nothing is written), or with `--check` an output would change",
            ),
            (
                2,
                "usage or environment error: no project or harness folder, an output that cannot be written, `--format sarif` with `--watch`",
            ),
            (
                130,
                "`--watch` stopped by Ctrl-C, after the rebuild under way is finished and recorded",
            ),
        ],
        ["engine" | "gate" | "hook" | "plugin"]
        | [
            "engine",
            "sensor" | "hook" | "intent" | "log" | "learnings" | "gate",
        ] => GROUP,
        ["engine", "sensor", "list"] => &[
            (0, "every sensor is listed"),
            (1, "a manifest has errors (they are printed)"),
            (2, "no project or harness folder"),
        ],
        ["engine", "sensor", "describe"] => &[
            (0, "the manifest is printed"),
            (1, "a manifest has errors (they are printed)"),
            (2, "an unknown sensor id, or no project"),
        ],
        ["engine", "sensor", "fire"] => &[
            (0, "the verdict is recorded and printed, whatever it is"),
            (
                2,
                "a pre-flight check refused the fire (nothing is recorded), or no project",
            ),
            INTERRUPTED,
        ],
        ["engine", "hook", "run-sensors"] => &[
            (
                0,
                "always, whatever the sensors found; writes that could not be checked are recorded as drops",
            ),
            INTERRUPTED,
        ],
        ["engine", "hook", "record-human-turn"] => &[
            (
                0,
                "the turn is recorded, or nothing is to be recorded (no workflow, not the human's prompt); a turn that could not be written is said on standard error",
            ),
            (
                2,
                "the payload is not the harness's real prompt event (it names what it lacks); nothing is recorded",
            ),
        ],
        ["engine", "hook", "guard"] => &[
            (
                0,
                "the tool call is allowed (nothing printed), or Claude Code is told it is denied (its deny decision on standard output)",
            ),
            (
                2,
                "the tool call is refused (the reason on standard error), or the payload cannot be read",
            ),
        ],
        ["engine", "intent", "new"] => &[
            (0, "the record is created and made the active intent"),
            (
                2,
                "the label is refused, the record cannot be written, or no project",
            ),
        ],
        ["engine", "log", "decision" | "answer"] => &[
            (0, "the row is appended and the reply printed"),
            (1, "refused (the message says why); nothing is appended"),
            (2, "no project or harness folder"),
        ],
        ["engine", "learnings", "surface"] => &[
            (0, "the candidates are printed"),
            (1, "refused (the message says why)"),
            (2, "no project or harness folder"),
        ],
        ["engine", "learnings", "persist"] => &[
            (0, "the picks are persisted (a replay changes nothing)"),
            (1, "refused (the message says why)"),
            (2, "no project or harness folder"),
        ],
        ["engine", "gate", "start" | "revise"] => &[
            (0, "the gate row is written, or the gate was already open"),
            (
                1,
                "the gate is refused: blocking findings, a blocking sensor that could not be evaluated, bytes that changed, an override without authority",
            ),
            (
                2,
                "usage or environment error: no intent, an unknown stage, a deliverable escaping its folder, a malformed `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS`",
            ),
            (
                130,
                "interrupted (SIGINT, SIGTERM or SIGHUP): no gate row is written",
            ),
        ],
        ["gate", "check"] => &[
            (0, "no blocking sensor failed or went unevaluated"),
            (
                1,
                "findings of blocking sensors (and of advisory ones with `--strict`)",
            ),
            (
                2,
                "usage or environment error: no intent, broken manifests or graph, a deliverable escaping its folder, a report file that cannot be written, or nothing was checked (unless `--allow-empty`)",
            ),
            (3, "a blocking sensor could not be evaluated"),
            INTERRUPTED,
        ],
        ["gate", "merge"] => &[
            (0, "as the unsharded `gate check` would have exited: passed"),
            (1, "as the unsharded run: findings"),
            (
                2,
                "reports of different checks, a missing or doubled shard, another schema version, an unreadable report, or nothing was checked (unless `--allow-empty`)",
            ),
            (3, "as the unsharded run: a blocking sensor not evaluated"),
        ],
        ["lsp"] => &[
            (0, "the editor sent `shutdown`, then `exit`"),
            (1, "the editor sent `exit` without `shutdown`, or went away"),
            (2, "no project was found, or the stream broke"),
        ],
        ["hook", "install"] => &[
            (
                0,
                "the settings file holds aidlc's hooks (written, or already so; with `--dry-run`, nothing is written)",
            ),
            (
                2,
                "the settings file is malformed or cannot be written, an empty `--program`, or no project",
            ),
        ],
        ["plugin", "add" | "remove" | "sync"] => &[
            (
                0,
                "composed: the install holds the plugins as recorded in `aidlc.lock.json` and compiles (or nothing needed to change)",
            ),
            (
                1,
                "the composed install does not compile; everything is rolled back and the compile's diagnostics are printed",
            ),
            (
                2,
                "refused before anything was written (a reserved or malformed name, a path leaving the plugin, a conflict, a missing dependency, …), or an environment error",
            ),
        ],
        ["plugin", "list"] => &[
            (0, "the composed plugins were listed"),
            (
                2,
                "the lock file is malformed or cannot be read, or no project",
            ),
        ],
        ["doctor"] => &[
            (0, "no row failed (warnings do not fail)"),
            (1, "a row failed"),
            (
                2,
                "no project, or the `GUARDRAIL_LOADED` row could not be recorded",
            ),
        ],
        ["sensors"] => &[
            (0, "the sensors are listed, or the one named is described"),
            (1, "a sensor manifest has errors (they are printed)"),
            (
                2,
                "no sensor has that id, the lock file cannot be read, or no project",
            ),
        ],
        ["graph"] => &[
            (0, "the graph is drawn"),
            (1, "the sources have compile errors (nothing is drawn)"),
            (
                2,
                "usage or environment error: an unknown `--stage`, an unusable graph, no project",
            ),
        ],
        ["schema"] => &[(0, "the schema is printed")],
        ["completions"] => &[(0, "the script is printed")],
        ["man"] => &[
            (0, "the page is printed, or every page is written"),
            (2, "no command has that name, or a page cannot be written"),
        ],
        _ => return None,
    };
    Some(statuses)
}

/// `Exit status:` lines for `--help`, from [`exit_statuses`], wrapped under `max_width`; a
/// group of subcommands (`is_group`) says first that it exits as its subcommand does.
pub fn exit_status_help(path: &[&str], is_group: bool, max_width: usize) -> Option<String> {
    let statuses = exit_statuses(path)?;
    let mut text = String::from(if is_group && !path.is_empty() {
        "Exit status: the subcommand's (see its --help); without one:"
    } else {
        "Exit status:"
    });
    for (code, meaning) in statuses {
        let lead = format!("  {code:<5}");
        let mut line = lead.clone();
        for word in meaning.split_whitespace() {
            if line.len() > lead.len() && line.len() + 1 + word.len() > max_width {
                text.push('\n');
                text.push_str(&line);
                line = " ".repeat(lead.len());
            } else if line.len() > lead.len() {
                line.push(' ');
            }
            line.push_str(word);
        }
        text.push('\n');
        text.push_str(&line);
    }
    Some(text)
}
