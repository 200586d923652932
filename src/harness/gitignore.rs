//! The project's `.gitignore` entries for the machine-local files a recorded run leaves: the
//! ones the reference's projections ignore (their `.gitignore`), so that a team commits the
//! shared work (the framework, the rules, each record's state, artifacts and per-clone audit
//! shards) and never this clone's cursors and runtime state.
//!
//! | entry | what |
//! |---|---|
//! | `aidlc/active-space`, `aidlc/spaces/*/intents/active-intent` | this user's cursors |
//! | `aidlc/.aidlc-clone-id` | this clone's id, which names its audit shard (committed, every clone would share one shard) |
//! | `aidlc/.aidlc-sessions/`, `aidlc/diagnostics/` | the conductor's session map and doctor exports |
//! | `aidlc/spaces/*/intents/*/runtime-graph.json` | the conductor's derived graph |
//! | `aidlc/spaces/*/intents/*/.aidlc-*` | a record's runtime folders and files: `.aidlc-engine/` (detail files, learnings selections), `.aidlc-hooks-health/`, `.aidlc-sensors/`, `.aidlc-learnings/`, `.aidlc-human-turn` |
//! | `aidlc/spaces/*/intents/.aidlc-*` | the same, written in a space's record root while no intent is active |
//! | `/.aidlc-plugin-journal/` | an interrupted plugin composition's undo journal (committed, a clone would roll another clone's install back) |
//! | `aidlc/.aidlc-turn-counter`, `aidlc/.aidlc-readonly-latch` | Kiro's per-turn state (Kiro CLI and IDE only) |
//! | `<harness>/tools/data/.aidlc-compile-fingerprint`, `…/.aidlc-plugin-fingerprint` | the engine's own records of what `compile` and `plugin sync` last read (this machine's files, times and build) |
//!
//! A project `aidlc init` made also has a `.gitignore` beside the fingerprints
//! (`tools/data/.gitignore`); a reference install has none, so the entries name them too.
//!
//! Invariants: entries are only ever added, each once (a line that already reads the same is
//! kept, wherever it is), after the file's own lines, in its line endings; nothing of the file
//! is changed or removed.

use crate::harness::Harness;

/// The file, at the project root.
pub const GITIGNORE_FILE: &str = ".gitignore";

const HEADING: &str =
    "# aidlc: machine-local runtime files (commit the rest of aidlc/, audit shards included)";

const ENTRIES: [&str; 9] = [
    "aidlc/active-space",
    "aidlc/spaces/*/intents/active-intent",
    "aidlc/.aidlc-clone-id",
    "aidlc/.aidlc-sessions/",
    "aidlc/spaces/*/intents/*/runtime-graph.json",
    "aidlc/spaces/*/intents/*/.aidlc-*",
    "aidlc/spaces/*/intents/.aidlc-*",
    "aidlc/diagnostics/",
    "/.aidlc-plugin-journal/",
];

const KIRO_ENTRIES: [&str; 2] = ["aidlc/.aidlc-turn-counter", "aidlc/.aidlc-readonly-latch"];

/// The compile's up-to-date record, under `<harness>/tools/data/` (`up_to_date` names its file
/// by this).
pub const COMPILE_FINGERPRINT_FILE_NAME: &str = ".aidlc-compile-fingerprint";
/// `plugin sync`'s no-op record beside it (`plugin::sync_record` names its file by this).
pub const PLUGIN_SYNC_RECORD_FILE_NAME: &str = ".aidlc-plugin-fingerprint";

/// The engine's own files beside the compiled outputs, under `<harness>/tools/data/`.
const ENGINE_RECORD_FILES: [&str; 2] =
    [COMPILE_FINGERPRINT_FILE_NAME, PLUGIN_SYNC_RECORD_FILE_NAME];

/// The entries `harness`'s projects ignore.
pub fn entries(harness: Harness) -> Vec<String> {
    let mut entries: Vec<String> = ENTRIES.iter().map(|entry| (*entry).to_owned()).collect();
    if harness.dir_name() == Harness::Kiro.dir_name() {
        entries.extend(KIRO_ENTRIES.iter().map(|entry| (*entry).to_owned()));
    }
    entries.extend(
        ENGINE_RECORD_FILES
            .iter()
            .map(|file| format!("{}/tools/data/{file}", harness.dir_name())),
    );
    entries
}

/// What adding the entries does to the project's `.gitignore`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitignoreChange {
    /// The file's text with every entry present.
    pub after: String,
    /// The entries it lacked.
    pub added: Vec<String>,
}

/// The `.gitignore` holding `text` (empty when the file does not exist) with `harness`'s
/// entries.
pub fn with_entries(harness: Harness, text: &str) -> GitignoreChange {
    let present: Vec<&str> = text.lines().map(str::trim).collect();
    let added: Vec<String> = entries(harness)
        .into_iter()
        .filter(|entry| !present.contains(&entry.as_str()))
        .collect();
    let mut after = text.to_owned();
    if !added.is_empty() {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        if !after.is_empty() && !after.ends_with('\n') {
            after.push_str(newline);
        }
        if !after.trim().is_empty() {
            after.push_str(newline);
        }
        if !present.contains(&HEADING) {
            after.push_str(HEADING);
            after.push_str(newline);
        }
        for entry in &added {
            after.push_str(entry);
            after.push_str(newline);
        }
    }
    GitignoreChange { after, added }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_gets_every_entry_under_a_heading() {
        let change = with_entries(Harness::Claude, "");
        assert!(
            change
                .after
                .starts_with(&format!("{HEADING}\naidlc/active-space\n"))
        );
        assert_eq!(change.added, entries(Harness::Claude));
        assert!(
            change
                .after
                .ends_with("/.aidlc-plugin-journal/\n.claude/tools/data/.aidlc-compile-fingerprint\n.claude/tools/data/.aidlc-plugin-fingerprint\n")
        );
    }

    #[test]
    fn only_missing_entries_are_added_after_the_file_s_own_lines_in_its_line_endings() {
        let before = "node_modules\r\naidlc/.aidlc-clone-id\r\ndist".to_owned();
        let change = with_entries(Harness::Kiro, &before);
        assert!(
            change
                .after
                .starts_with(&format!("{before}\r\n\r\n{HEADING}\r\n"))
        );
        assert!(
            !change
                .added
                .iter()
                .any(|entry| entry == "aidlc/.aidlc-clone-id")
        );
        assert!(
            change
                .added
                .iter()
                .any(|entry| entry == "aidlc/.aidlc-turn-counter")
        );
        assert!(
            change
                .added
                .iter()
                .any(|entry| entry == ".kiro/tools/data/.aidlc-compile-fingerprint")
        );
        assert_eq!(change.after.matches("aidlc/.aidlc-clone-id").count(), 1);
        let again = with_entries(Harness::Kiro, &change.after);
        assert!(again.added.is_empty());
        assert_eq!(again.after, change.after);
    }

    #[test]
    fn the_reference_s_own_gitignore_lacks_the_space_record_root_the_journal_and_the_engine_s_records()
     {
        let reference = include_str!("../../tests/fixtures/reference-installs/2.5.36/.gitignore");
        let change = with_entries(Harness::Claude, reference);
        assert_eq!(
            change.added,
            [
                "aidlc/spaces/*/intents/.aidlc-*",
                "/.aidlc-plugin-journal/",
                ".claude/tools/data/.aidlc-compile-fingerprint",
                ".claude/tools/data/.aidlc-plugin-fingerprint",
            ]
        );
    }
}
