//! A record's state file and the conductor's active-directive marker: the facts the engine reads
//! from them (the current stage, the Sensors switch, which stage and unit the conductor is in),
//! and the one field edit the engine makes (`set_state_field`). The conductor owns both files.

use camino::{Utf8Path, Utf8PathBuf};
use sha2::{Digest as _, Sha256};

use super::intents::STATE_FILE_NAME;
use crate::compile::syntax::stage::is_kebab_case;
use crate::leaves::js_text::js_trim;

/// The conductor's active-directive marker, under a record root.
pub const ACTIVE_DIRECTIVE_MARKER_FILE: &str = ".aidlc-active-directive.json";
/// The reference reads at most this many bytes of the active-directive marker.
const ACTIVE_DIRECTIVE_MAX_BYTES: u64 = 64 * 1024;

/// `<record_root>/aidlc-state.md`.
pub fn state_file_path(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(STATE_FILE_NAME)
}

/// The state file's text (invalid UTF-8 replaced, as the reference's read does), or `None` when
/// it is missing or unreadable.
pub fn read_state_text(record_root: &Utf8Path) -> Option<String> {
    let bytes = crate::leaves::fs_util::read_input(&state_file_path(record_root)).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The value of the first line `- **<field>**: <value>` of a state file, trimmed; `Some("")` for
/// a field with an empty value, `None` when no line has the field. Lines end at `\n`, `\r`,
/// U+2028 or U+2029, as JavaScript's do, so CRLF files read the same as LF files.
pub fn read_state_field(state_text: &str, field: &str) -> Option<String> {
    let prefix = format!("- **{field}**:");
    state_text
        .split(['\n', '\r', '\u{2028}', '\u{2029}'])
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .map(|value| js_trim(value).to_owned())
}

/// The Sensors ceremony switched off in the state: `- **Sensors**: off (set by you)` (its first
/// word, so a note after it does not matter).
pub fn sensors_off_in_state(state_text: &str) -> bool {
    read_state_field(state_text, "Sensors")
        .is_some_and(|value| value.split_whitespace().next() == Some("off"))
}

/// The Sensors ceremony switched off for this process: `AIDLC_DISABLE_SENSORS=1`.
pub fn sensors_off_by_environment() -> bool {
    std::env::var("AIDLC_DISABLE_SENSORS").is_ok_and(|value| value.trim() == "1")
}

/// Which switch turned the Sensors ceremony off. Both may be set; the environment is named
/// first, since it holds for every record the process reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SensorsOffSwitch {
    /// `AIDLC_DISABLE_SENSORS=1` in the process's environment.
    Environment,
    /// `- **Sensors**: off` in the record's `aidlc-state.md`.
    StateFile,
}

impl SensorsOffSwitch {
    /// The switch that is off, the environment's first; `None` when sensors are on.
    /// `off_by_environment` is `AIDLC_DISABLE_SENSORS=1` as the caller read it.
    pub fn of(off_by_environment: bool, state_text: &str) -> Option<Self> {
        if off_by_environment {
            Some(Self::Environment)
        } else if sensors_off_in_state(state_text) {
            Some(Self::StateFile)
        } else {
            None
        }
    }

    /// The machine word a gate row records: `environment` or `state`.
    pub fn field_value(self) -> &'static str {
        match self {
            Self::Environment => "environment",
            Self::StateFile => "state",
        }
    }

    /// The switch as a person sets it.
    pub fn described(self) -> &'static str {
        match self {
            Self::Environment => "AIDLC_DISABLE_SENSORS=1",
            Self::StateFile => "`- **Sensors**: off` in aidlc-state.md",
        }
    }

    /// How to turn it back on.
    pub fn turned_on_by(self) -> &'static str {
        match self {
            Self::Environment => "unset AIDLC_DISABLE_SENSORS",
            Self::StateFile => "set `- **Sensors**: on` in aidlc-state.md",
        }
    }
}

/// The state's `Current Stage`, unless it is missing, empty or `none`.
pub fn current_stage(state_text: &str) -> Option<String> {
    read_state_field(state_text, "Current Stage")
        .filter(|stage| !stage.is_empty() && stage != "none")
}

/// The write hook's view of the active record (D28 steps 4 and 6): a workflow is active when
/// the record's state file is readable and names a current stage. Whether this clone has
/// written an audit row yet does not matter (failure mode N6: a fresh clone or worktree has no
/// shard of its own, and its first fire creates it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentWorkflow {
    pub record_root: Utf8PathBuf,
    pub state_text: String,
    pub stage_choice: ActiveStageChoice,
}

/// The active workflow of the record root a command resolved (see [`PresentWorkflow`]), when
/// there is one. Never mints a clone id and writes nothing.
pub fn present_workflow(record_root: &Utf8Path) -> Option<PresentWorkflow> {
    let state_text = read_state_text(record_root)?;
    let stage_choice = active_stage_choice(record_root, &state_text)?;
    Some(PresentWorkflow {
        record_root: record_root.to_owned(),
        state_text,
        stage_choice,
    })
}

/// The stage (and unit) the conductor's active-directive marker names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveDirective {
    pub stage: String,
    pub unit: Option<String>,
}

/// The active-directive marker of a record, when it is current: `<record_root>/.aidlc-active-
/// directive.json`, at most 64 KiB, a JSON object of version 1 or 2 whose `stage` (trimmed) is a
/// kebab slug, whose `unit`, if the key is present, is a non-empty string, and whose
/// `state_sha256` is the SHA-256 of `state_text`. A marker for another state is stale and
/// ignored. (Version 2 markers carry conductor bookkeeping that this engine does not check: the
/// digest already proves the marker describes this state.)
pub fn active_directive_marker(
    record_root: &Utf8Path,
    state_text: &str,
) -> Option<ActiveDirective> {
    let path = record_root.join(ACTIVE_DIRECTIVE_MARKER_FILE);
    let bytes = crate::leaves::fs_util::read_bounded(&path, ACTIVE_DIRECTIVE_MAX_BYTES).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let marker = value.as_object()?;
    let state_digest = format!("{:x}", Sha256::digest(state_text.as_bytes()));
    (marker_version_is_known(marker)
        && marker
            .get("state_sha256")
            .and_then(serde_json::Value::as_str)
            == Some(&state_digest))
    .then(|| marker_directive(marker))
    .flatten()
}

fn marker_version_is_known(marker: &serde_json::Map<String, serde_json::Value>) -> bool {
    marker
        .get("version")
        .and_then(serde_json::Value::as_f64)
        .is_some_and(|version| {
            [1.0_f64, 2.0]
                .iter()
                .any(|known| known.total_cmp(&version).is_eq())
        })
}

fn marker_directive(
    marker: &serde_json::Map<String, serde_json::Value>,
) -> Option<ActiveDirective> {
    let stage = js_trim(marker.get("stage")?.as_str()?);
    if !is_kebab_case(stage) {
        return None;
    }
    // A `unit` key, when present, must hold a non-empty string.
    let unit = match marker.get("unit") {
        None => None,
        Some(value) => {
            let unit = js_trim(value.as_str()?);
            if unit.is_empty() {
                return None;
            }
            Some(unit)
        }
    };
    Some(ActiveDirective {
        stage: stage.to_owned(),
        unit: unit.map(str::to_owned),
    })
}

/// What the write hook needs to pick a stage (D28 step 6): the state's `Current Stage` and the
/// current marker, if any. The hook prefers the marker's stage and falls back to the current
/// stage when the graph does not know the marker's stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveStageChoice {
    pub current_stage: String,
    pub marker: Option<ActiveDirective>,
}

impl ActiveStageChoice {
    /// The marker's stage, else the current stage.
    pub fn preferred_stage(&self) -> &str {
        self.marker
            .as_ref()
            .map_or(self.current_stage.as_str(), |marker| marker.stage.as_str())
    }
}

/// The stage choice for a record's state. `None` when `Current Stage` is missing, empty or
/// `none`: the reference stops there even when a marker names a stage.
pub fn active_stage_choice(record_root: &Utf8Path, state_text: &str) -> Option<ActiveStageChoice> {
    let current_stage = current_stage(state_text)?;
    Some(ActiveStageChoice {
        current_stage,
        marker: active_directive_marker(record_root, state_text),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::workspace::clone_id::existing_clone_id;
    use crate::runtime::workspace::test_support::{active_stage, make_record, temp_project, write};

    /// SHA-256 of `bytes` as 64 lowercase hex characters, as the marker's digest is.
    fn sha256_hex(bytes: &[u8]) -> String {
        format!("{:x}", Sha256::digest(bytes))
    }

    #[test]
    fn state_fields_are_read_from_bullet_lines() {
        let state = "# State\n- **Scope**: feature\n- **Current Stage**:   intent-capture  \n";
        assert_eq!(
            read_state_field(state, "Current Stage").as_deref(),
            Some("intent-capture")
        );
        assert_eq!(read_state_field(state, "Scope").as_deref(), Some("feature"));
        assert_eq!(read_state_field(state, "Missing"), None);
    }

    #[test]
    fn state_fields_read_the_same_with_crlf() {
        let state = "- **Current Stage**: code-generation\r\n- **Sensors**: off\r\n";
        assert_eq!(
            read_state_field(state, "Current Stage").as_deref(),
            Some("code-generation")
        );
        assert_eq!(read_state_field(state, "Sensors").as_deref(), Some("off"));
    }

    #[test]
    fn an_empty_field_does_not_run_into_the_next_line() {
        let state = "- **Current Stage**:\n- **Next**: x\n";
        assert_eq!(
            read_state_field(state, "Current Stage").as_deref(),
            Some("")
        );
        assert_eq!(current_stage(state), None);
    }

    #[test]
    fn field_lines_must_start_with_the_bullet() {
        let state = "  - **Current Stage**: indented\n**Current Stage**: bare\n";
        assert_eq!(read_state_field(state, "Current Stage"), None);
    }

    #[test]
    fn the_first_matching_line_wins() {
        let state = "- **Current Stage**: first\n- **Current Stage**: second\n";
        assert_eq!(current_stage(state).as_deref(), Some("first"));
    }

    #[test]
    fn none_is_no_current_stage() {
        assert_eq!(current_stage("- **Current Stage**: none\n"), None);
        assert_eq!(current_stage("no fields"), None);
    }

    fn marker_json(stage: &str, state: &str, extra: &str) -> String {
        format!(
            r#"{{"version": 1, "stage": "{stage}", "state_sha256": "{}"{extra}}}"#,
            sha256_hex(state.as_bytes())
        )
    }

    #[test]
    fn a_current_marker_names_the_active_stage() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: functional-design\n";
        write(&state_file_path(&root), state);
        write(
            &root.join(ACTIVE_DIRECTIVE_MARKER_FILE),
            &marker_json(" code-generation ", state, r#", "unit": "billing""#),
        );
        assert_eq!(active_stage(&root).as_deref(), Some("code-generation"));
        let choice = active_stage_choice(&root, state).unwrap();
        assert_eq!(choice.current_stage, "functional-design");
        let marker = choice.marker.as_ref().unwrap();
        assert_eq!(
            (marker.stage.as_str(), marker.unit.as_deref()),
            ("code-generation", Some("billing"))
        );
    }

    #[test]
    fn a_stale_or_malformed_marker_is_ignored() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: functional-design\r\n";
        write(&state_file_path(&root), state);
        let marker = root.join(ACTIVE_DIRECTIVE_MARKER_FILE);
        let cases = [
            marker_json("code-generation", "an older state", ""),
            marker_json("Code-Generation", state, ""),
            marker_json("code-generation", state, r#", "unit": "  ""#),
            marker_json("code-generation", state, r#", "unit": 3"#),
            marker_json("code-generation", state, "").replace("\"version\": 1", "\"version\": 3"),
            "[1, 2]".to_owned(),
            "{broken".to_owned(),
        ];
        for text in cases {
            write(&marker, &text);
            assert_eq!(
                active_stage(&root).as_deref(),
                Some("functional-design"),
                "marker {text}"
            );
        }
    }

    #[test]
    fn an_oversized_marker_is_ignored() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: a\n";
        let padding = " ".repeat(70 * 1024);
        write(
            &root.join(ACTIVE_DIRECTIVE_MARKER_FILE),
            &marker_json("b", state, &format!(",{padding}\"x\": 1")),
        );
        assert_eq!(active_directive_marker(&root, state), None);
    }

    #[test]
    fn no_current_stage_means_no_active_stage_even_with_a_marker() {
        let (_dir, root) = temp_project();
        let state = "- **Current Stage**: none\n";
        write(&state_file_path(&root), state);
        write(
            &root.join(ACTIVE_DIRECTIVE_MARKER_FILE),
            &marker_json("code-generation", state, ""),
        );
        assert_eq!(active_stage(&root), None);
    }

    #[test]
    fn a_missing_state_file_has_no_active_stage() {
        let (_dir, root) = temp_project();
        assert_eq!(read_state_text(&root), None);
        assert_eq!(active_stage(&root), None);
    }

    #[test]
    fn a_workflow_is_present_with_a_readable_state_and_a_current_stage_shard_or_not() {
        let (_dir, project) = temp_project();
        let record = make_record(&project, "default", "260904-x");
        write(&state_file_path(&record), "- **Current Stage**: none\n");
        assert_eq!(present_workflow(&record), None, "no current stage");
        write(
            &state_file_path(&record),
            "- **Current Stage**: code-generation\n",
        );
        let present = present_workflow(&record).expect("no shard of this clone is needed");
        assert_eq!(present.record_root, record);
        assert_eq!(present.stage_choice.current_stage, "code-generation");
        assert_eq!(existing_clone_id(&project), None, "the check must not mint");
        std::fs::remove_file(record.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(present_workflow(&record), None);
    }

    #[test]
    fn sha256_matches_the_fips_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            sha256_hex(&[b'a'; 1000]),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }
}
