//! The native `claim-sources` worker (D39): does every claim in the stage's
//! deliverables carry a source tag that resolves to the stage's source register? It checks the
//! shape and resolution of citations, not their truth. docs/decisions.md D39 says what the
//! reference checks; `register` reads the register and its authorities (failing closed: a
//! register that cannot be read resolves nothing), `claims` reads the claims and their tags,
//! and `visibility` what a reader sees. `claims_verdict` writes the reference's keys in order,
//! then ours on a failure: `diagnostics`, each finding with its file, line, rule and help.
//!
//! Where this differs from the reference, on purpose:
//!
//! - Flags and paths are read as `worker_args` reads every worker's, which says how that
//!   differs from the reference. An empty `--stage` value means the default stage, and a
//!   deliverable listed twice is scanned once.
//! - A field of `aidlc-state.md` with an empty value is missing; the reference's pattern could
//!   read the next line as its value.
//!
//! Disagreement with `CommonMark` is meant to give false failures, never false passes.

mod claims;
mod register;
mod tags;
mod visibility;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};

use self::claims::{ClaimFindings, inspect_deliverable};
use self::register::{CONFIRMATION_HEADING, SourceUniverse};
use crate::runtime::sensors::descriptor::{
    DELIVERABLES_FLAG, ExtraFlag, GateUnit, PathFlag, STAGE_FLAG, ShippedSensor,
};
use crate::runtime::sensors::finding::verdict_json;
use crate::runtime::sensors::worker_args::{
    FlagGrammar, WorkerArgs, existing_output_path, resolve_worker_path, split_csv, stage_scan_set,
    verdict_or_usage_error,
};

const DEFAULT_STAGE: &str = "intent-capture";
const REASON_NOTHING_TO_SCAN: &str = "no deliverables on disk yet";

/// The `claim-sources` sensor: it reads the whole stage's output, so a gate fires it once per
/// output folder.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "claim-sources",
    check: |args, context| verdict_or_usage_error(check(args, &context.project_dir)),
    extra_flags: &[ExtraFlag::Deliverables],
    default_path_flag: PathFlag::OutputPath,
    gate_unit: GateUnit::OutputFolder,
};

fn check(args: &[String], project_dir: &Utf8Path) -> Result<Value, String> {
    let flags = WorkerArgs::parse(args, &SENSOR, FlagGrammar::Lenient)?;
    let (_, fired_path) = existing_output_path(&flags, project_dir)?;
    let stage_folder = fired_path.parent().unwrap_or(&fired_path).to_owned();
    let stage = flags.non_empty(STAGE_FLAG).unwrap_or(DEFAULT_STAGE);
    let questions_path = resolve_worker_path(&stage_folder, &format!("{stage}-questions.md"));
    let deliverables = split_csv(flags.value(DELIVERABLES_FLAG).unwrap_or_default());
    let scanned = stage_scan_set(&fired_path, &deliverables, false);
    if scanned.is_empty() {
        return Ok(claims_verdict(
            ClaimFindings::default(),
            &scanned,
            &questions_path,
            Some(REASON_NOTHING_TO_SCAN),
        ));
    }
    let universe = SourceUniverse::read(&questions_path, &stage_folder, project_dir);
    let register_file = if questions_path.is_file() {
        questions_path.as_path()
    } else {
        fired_path.as_path()
    };
    let mut findings = ClaimFindings::default();
    for text in &universe.findings {
        findings.push(
            (None, (register_file, 0)),
            "source-register",
            text.clone(),
            format!(
                "fix the source register {} (its `## Sources`, `## Q<n>` answers and `## {CONFIRMATION_HEADING}`)",
                questions_path.file_name().unwrap_or_default()
            ),
        );
    }
    let mut has_assumptions = false;
    for path in &scanned {
        has_assumptions |= inspect_deliverable(path, &universe, &mut findings);
    }
    if has_assumptions && !universe.assumptions_accepted {
        findings.push(
            (None, (register_file, 0)),
            "unconfirmed-assumptions",
            format!(
                "retained assumptions require an answered ## {CONFIRMATION_HEADING} with Accept assumptions"
            ),
            format!(
                "add `## {CONFIRMATION_HEADING}` listing the retained assumptions, answered `[Answer]: A. Accept assumptions`"
            ),
        );
    }
    Ok(claims_verdict(findings, &scanned, &questions_path, None))
}

fn claims_verdict(
    findings: ClaimFindings,
    scanned: &[Utf8PathBuf],
    questions_path: &Utf8Path,
    reason: Option<&str>,
) -> Value {
    let findings_count = findings.texts.len();
    let scanned_files: Vec<String> = scanned.iter().map(ToString::to_string).collect();
    verdict_json(
        [
            ("pass", Some(json!(findings.texts.is_empty()))),
            ("findings", Some(Value::from(findings.texts))),
            ("scanned_files", Some(Value::from(scanned_files))),
            ("questions_file", Some(json!(questions_path.as_str()))),
            ("findings_count", Some(json!(findings_count))),
            ("reason", reason.map(Value::from)),
        ],
        &findings.located,
    )
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use super::claims::{claim_blocks, is_table_separator};
    use super::register::question_id;
    use super::tags::source_tags;
    use super::visibility::h2_heading;
    use super::visibility::link_references::reference_analysis;
    use super::*;
    use crate::runtime::sensors::test_support::{SensorProject, reference_part};

    const RECORD_DIR: &str = "aidlc/spaces/default/intents/260101-login";
    const STAGE_DIR: &str = "aidlc/spaces/default/intents/260101-login/ideation/intent-capture";
    const DELIVERABLES: &str = "intent-statement,stakeholder-map";

    const STATE: &str =
        "# AI-DLC State\n\n- **Project**: Build a login page\n- **Scope**: feature\n";

    const MEMORY: &str = "# Project memory\n\n## Security\n\n- Passwords are hashed with argon2.\n";

    const QUESTIONS: &str = r#"# Intent Capture Questions

## Sources

- [desc] Initial description: "Build a login page"
- [scope] Workflow-selected scope: `feature`.
- [memory:security] `aidlc/spaces/default/memory/project.md#Security`: "Passwords are hashed with argon2."

## Q1: Who are the users?

[Answer]: Staff and customers

## Q2: What is the deadline?

[Answer]: ___

## Assumption Confirmation

- Sessions last one day [assumption]

[Answer]: A. Accept assumptions
"#;

    const SOURCED: &str = r"# Intent Statement

## Intent

We build a login page [desc]. Its users are staff and customers [Q1].

- Passwords are hashed [memory:security]
- Adjacent tags are two tags [Q1][desc]

| Claim | Source |
|---|---|
| Staff log in | [Q1] |

```text
an untagged line inside a fence
```

<!-- an untagged comment -->
Inline `code without a tag` does not hide the tag after it [desc].

## Initial Scope Signal

The workflow-selected scope is a feature [scope].

## Assumptions & Open Questions

- Sessions last one day [assumption]

## Review

Untagged review notes are not claims.
";

    /// The shared fixture, with the stage folder `STAGE_DIR`, fired with the dispatcher's argv
    /// for `claim-sources`.
    struct Project(SensorProject);

    impl std::ops::Deref for Project {
        type Target = SensorProject;

        fn deref(&self) -> &SensorProject {
            &self.0
        }
    }

    impl Project {
        fn new() -> Self {
            Self(SensorProject::new(&SENSOR))
        }

        /// A project with the record state, the project memory and the questions file.
        fn grounded() -> Self {
            let project = Self::new();
            project.write(&format!("{RECORD_DIR}/aidlc-state.md"), STATE);
            project.write("aidlc/spaces/default/memory/project.md", MEMORY);
            project.deliverable("intent-capture-questions.md", QUESTIONS);
            project
        }

        /// Write `<STAGE_DIR>/<name>` and return its absolute path.
        fn deliverable(&self, name: &str, text: &str) -> Utf8PathBuf {
            self.write(&format!("{STAGE_DIR}/{name}"), text)
        }

        fn questions_path(&self) -> Utf8PathBuf {
            self.root()
                .join(STAGE_DIR)
                .join("intent-capture-questions.md")
        }

        /// Fire on `fired` the way the dispatcher does.
        fn fire(&self, fired: &Utf8Path) -> Value {
            self.verdict(&[
                "--stage",
                "intent-capture",
                "--output-path",
                fired.as_str(),
                "--deliverables",
                DELIVERABLES,
            ])
        }

        /// The findings of one intent statement, fired with the dispatcher's arguments.
        fn findings_of(&self, statement: &str) -> Vec<String> {
            let fired = self.deliverable("intent-statement.md", statement);
            findings(&self.fire(&fired))
        }
    }

    fn findings(verdict: &Value) -> Vec<String> {
        verdict["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|finding| finding.as_str().unwrap().to_owned())
            .collect()
    }

    fn json_list(paths: &[&Utf8Path]) -> String {
        serde_json::to_string(&paths.iter().map(|p| p.as_str()).collect::<Vec<_>>()).unwrap()
    }

    // --- verdicts ------------------------------------------------------------------------------

    /// The gate report's findings carry the file, the line each claim starts on, a rule and a
    /// help; the reference's sentences stay as they were.
    #[test]
    fn each_finding_is_located_at_its_claims_first_line() {
        let project = Project::grounded();
        let fired = project.deliverable(
            "intent-statement.md",
            "# Intent\n\n## Intent\n\nAn untagged claim\nthat runs on.\n\n- tagged [desc]\n- an untagged item\n\n## Assumptions & Open Questions\n\nNone.\n",
        );
        let args = [
            "--stage",
            "intent-capture",
            "--output-path",
            fired.as_str(),
            "--deliverables",
            DELIVERABLES,
        ];
        let located = project.diagnostics(&args);
        let lines: Vec<(Option<u64>, &str)> = located
            .iter()
            .map(|finding| (finding.line, finding.rule.as_str()))
            .collect();
        assert_eq!(
            lines,
            [(Some(5), "untagged-claim"), (Some(9), "untagged-claim")]
        );
        assert_eq!(located[0].message, "claim block has no source tag");
        assert!(located[0].help.as_deref().unwrap().contains("[desc]"));
        assert_eq!(
            findings(&project.fire(&fired)),
            [
                "intent-statement.md ## Intent: claim block has no source tag",
                "intent-statement.md ## Intent: claim block has no source tag"
            ]
        );
    }

    #[test]
    fn a_fully_sourced_document_passes() {
        let project = Project::grounded();
        let fired = project.deliverable("intent-statement.md", SOURCED);
        assert_eq!(
            serde_json::to_string(&project.fire(&fired)).unwrap(),
            format!(
                r#"{{"pass":true,"findings":[],"scanned_files":{},"questions_file":"{}","findings_count":0}}"#,
                json_list(&[&fired]),
                project.questions_path()
            )
        );
    }

    #[test]
    fn an_untagged_claim_fails_with_one_finding_per_block() {
        let project = Project::grounded();
        let statement = SOURCED.replace(
            "## Initial Scope Signal",
            "An untagged paragraph.\n\nOnly in code `[desc]` and a comment <!-- [Q1] -->.\n\n- an untagged item\n\n| Row | without tag |\n\n<code>[desc]</code> hidden HTML\n\n## Initial Scope Signal",
        );
        let verdict = {
            let fired = project.deliverable("intent-statement.md", &statement);
            project.fire(&fired)
        };
        let expected = [
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
            "intent-statement.md ## Intent: claim block has no source tag",
        ];
        assert_eq!(findings(&verdict), expected);
        assert_eq!(verdict["pass"], false);
        assert_eq!(verdict["findings_count"], 5);
    }

    #[test]
    fn a_tag_naming_an_unknown_source_fails() {
        let project = Project::grounded();
        let statement = SOURCED.replace("[memory:security]", "[memory:unknown] and [Q2] and [Q9]");
        assert_eq!(
            project.findings_of(&statement),
            [
                "intent-statement.md ## Intent: [memory:unknown] is not registered in ## Sources",
                "intent-statement.md ## Intent: [Q2] has no filled answer",
                "intent-statement.md ## Intent: [Q9] has no filled answer",
            ]
        );
    }

    #[test]
    fn register_entries_must_match_their_authorities() {
        let project = Project::grounded();
        project.deliverable(
            "intent-capture-questions.md",
            &QUESTIONS
                .replace("Build a login page", "Build a logout page")
                .replace("`feature`", "`epic`")
                .replace("hashed with argon2.\"", "hashed.\"")
                .replace("default/memory/project.md", "other/memory/project.md"),
        );
        assert_eq!(
            project.findings_of(SOURCED),
            [
                "[desc] does not exactly match Project in aidlc-state.md",
                "[scope] does not exactly match Scope in aidlc-state.md",
                "[memory:security] path must name a file under the active memory root aidlc/spaces/default/memory/",
                "intent-statement.md ## Intent: [desc] is not registered in ## Sources",
                "intent-statement.md ## Intent: [memory:security] is not registered in ## Sources",
                "intent-statement.md ## Intent: [desc] is not registered in ## Sources",
                "intent-statement.md ## Intent: [desc] is not registered in ## Sources",
                "intent-statement.md ## Initial Scope Signal: [scope] is not registered in ## Sources",
            ]
        );
    }

    #[test]
    fn a_memory_reference_must_stay_inside_the_memory_root_e4() {
        let project = Project::grounded();
        project.write("aidlc/spaces/default/secret.md", MEMORY);
        for (path, finding) in [
            (
                "aidlc/spaces/default/memory/../secret.md",
                "[memory:security] path must name a file under the active memory root aidlc/spaces/default/memory/",
            ),
            (
                "aidlc/spaces/default/memory/notes.md",
                "[memory:security] must name an active memory file under aidlc/spaces/default/memory/: org.md, team.md, or project.md",
            ),
            (
                "aidlc/spaces/default/memory/team.md",
                "[memory:security] memory source does not exist: aidlc/spaces/default/memory/team.md",
            ),
        ] {
            project.deliverable(
                "intent-capture-questions.md",
                &QUESTIONS.replace("aidlc/spaces/default/memory/project.md", path),
            );
            assert_eq!(
                project.findings_of(SOURCED),
                [
                    finding,
                    "intent-statement.md ## Intent: [memory:security] is not registered in ## Sources"
                ],
                "{path}"
            );
        }
    }

    #[test]
    fn a_defined_reference_label_is_a_link_not_a_tag_p6() {
        let project = Project::grounded();
        let with_definition =
            SOURCED.replace("## Review", "[Q1]: https://example.com/q1\n\n## Review");
        let statement = with_definition.replace(
            "Its users are staff and customers [Q1].",
            "Its users are staff and customers.",
        );
        assert_eq!(
            project.findings_of(&statement.replace("[Q1][desc]", "[Q1]")),
            [
                "intent-statement.md ## Intent: claim block has no source tag",
                "intent-statement.md ## Intent: claim block has no source tag",
            ]
        );
        assert_eq!(
            project.findings_of(&with_definition.replace("| [Q1] |", "| [desc] |")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn tag_placement_rules_are_checked() {
        let project = Project::grounded();
        let statement = SOURCED
            .replace(
                "We build a login page [desc].",
                "We build a workflow-selected page [scope] [assumption].",
            )
            .replace(
                "- Sessions last one day [assumption]",
                "- Sessions last one day\n\n- Tokens rotate hourly [assumption]",
            );
        assert_eq!(
            project.findings_of(&statement),
            [
                "intent-statement.md ## Intent: [assumption] is outside ## Assumptions & Open Questions",
                "intent-statement.md ## Intent: [scope] is valid only in ## Initial Scope Signal",
                "intent-statement.md ## Assumptions & Open Questions: assumption/open question lacks [assumption]",
                "intent-statement.md ## Assumptions & Open Questions: retained assumption is not listed in ## Assumption Confirmation",
            ]
        );
    }

    #[test]
    fn every_deliverable_needs_an_assumptions_section() {
        let project = Project::grounded();
        let map = project.deliverable("stakeholder-map.md", "# Map\n\n## People\n\nStaff [Q1].\n");
        let statement = project.deliverable("intent-statement.md", SOURCED);
        let verdict = project.fire(&map);
        assert_eq!(
            findings(&verdict),
            ["stakeholder-map.md: missing ## Assumptions & Open Questions"]
        );
        assert_eq!(
            serde_json::to_string(&verdict["scanned_files"]).unwrap(),
            json_list(&[&statement, &map])
        );
    }

    // --- a missing register fails closed; nothing to scan passes vacuously ---------------------

    #[test]
    fn no_questions_file_is_a_finding_not_a_pass() {
        let project = Project::new();
        let fired = project.deliverable(
            "intent-statement.md",
            "## Assumptions & Open Questions\n\nNone.\n",
        );
        let verdict = project.fire(&fired);
        assert_eq!(verdict["diagnostics"][0]["rule"], "source-register");
        assert_eq!(verdict["diagnostics"][0]["file"], fired.as_str());
        assert_eq!(
            serde_json::to_string(&reference_part(verdict)).unwrap(),
            format!(
                r#"{{"pass":false,"findings":["questions file missing: {questions}"],"scanned_files":{},"questions_file":"{questions}","findings_count":1}}"#,
                json_list(&[&fired]),
                questions = project.questions_path()
            )
        );
    }

    #[test]
    fn a_register_without_sources_or_state_is_a_finding() {
        let project = Project::new();
        project.deliverable("intent-capture-questions.md", "# Questions\n");
        assert_eq!(
            project.findings_of("## Assumptions & Open Questions\n\nNone\n"),
            [
                "cannot verify source register: aidlc-state.md was not found",
                "questions file is missing ## Sources",
            ]
        );
        project.write(&format!("{RECORD_DIR}/aidlc-state.md"), "# empty state\n");
        assert_eq!(
            project.findings_of("## Assumptions & Open Questions\n\nNone\n"),
            [
                "aidlc-state.md is missing Project authority for [desc]",
                "aidlc-state.md is missing Scope authority for [scope]",
                "questions file is missing ## Sources",
            ]
        );
    }

    #[test]
    fn retained_assumptions_need_an_accepting_confirmation() {
        let project = Project::grounded();
        project.deliverable(
            "intent-capture-questions.md",
            &QUESTIONS.replace("A. Accept assumptions", "B. Revise"),
        );
        assert_eq!(
            project.findings_of(SOURCED),
            [
                "retained assumptions require an answered ## Assumption Confirmation with Accept assumptions"
            ]
        );
    }

    #[test]
    fn nothing_on_disk_passes_vacuously() {
        let project = Project::grounded();
        let questions = project.questions_path();
        let expected = format!(
            r#"{{"pass":true,"findings":[],"scanned_files":[],"questions_file":"{questions}","findings_count":0,"reason":"no deliverables on disk yet"}}"#
        );
        assert_eq!(
            serde_json::to_string(&project.fire(&questions)).unwrap(),
            expected
        );
        let alone = project.verdict(&["--output-path", questions.as_str()]);
        assert_eq!(serde_json::to_string(&alone).unwrap(), expected);
    }

    #[test]
    fn without_deliverables_only_the_fired_file_is_scanned() {
        let project = Project::grounded();
        project.deliverable("stakeholder-map.md", "untagged\n");
        let fired = project.deliverable("notes.md", SOURCED);
        let verdict = project.verdict(&["--output-path", fired.as_str()]);
        assert_eq!(verdict["pass"], true);
        assert_eq!(
            serde_json::to_string(&verdict["scanned_files"]).unwrap(),
            json_list(&[&fired])
        );
    }

    // --- flags, paths and errors ---------------------------------------------------------------

    #[test]
    fn a_missing_output_path_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--stage", "intent-capture"]),
            "--output-path is required"
        );
        assert_eq!(
            project.usage_error(&["--output-path", "nowhere.md"]),
            "--output-path not found: nowhere.md"
        );
    }

    #[test]
    fn an_unreadable_deliverable_or_register_is_a_finding() {
        let project = Project::new();
        std::fs::create_dir_all(project.root().join(STAGE_DIR).join("intent-statement.md"))
            .unwrap();
        std::fs::create_dir_all(project.questions_path()).unwrap();
        let fired = project.root().join(STAGE_DIR).join("intent-statement.md");
        let found = findings(&project.fire(&fired));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with(&format!(
                "failed to read questions file {}: ",
                project.questions_path()
            )),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("intent-statement.md: failed to read: "),
            "{found:?}"
        );
    }

    #[test]
    fn a_flag_without_a_value_is_a_usage_error_f9() {
        let project = Project::grounded();
        let fired = project.deliverable("intent-statement.md", SOURCED);
        assert_eq!(
            project.usage_error(&["--output-path", fired.as_str(), "--deliverables"]),
            "--deliverables expects a value, got end of arguments."
        );
        assert_eq!(
            project.usage_error(&["--stage", "--output-path", fired.as_str()]),
            "--stage expects a value, got another flag: \"--output-path\"."
        );
    }

    #[test]
    fn windows_style_paths_work() {
        let project = Project::grounded();
        let fired = project.deliverable("intent-statement.md", SOURCED);
        let relative = format!("{STAGE_DIR}\\.\\intent-statement.md").replace('/', "\\");
        let verdict = project.verdict(&[
            "--output-path",
            &relative,
            "--deliverables",
            "intent-statement",
        ]);
        assert_eq!(verdict["pass"], true, "{verdict}");
        assert_eq!(
            serde_json::to_string(&verdict["scanned_files"]).unwrap(),
            json_list(&[&fired])
        );
        let absolute = fired.as_str().replace('/', "\\");
        assert_eq!(project.fire(Utf8Path::new(&absolute))["pass"], true);
    }

    #[test]
    fn crlf_line_endings_are_read_like_lf() {
        let project = Project::grounded();
        project.deliverable(
            "intent-capture-questions.md",
            &QUESTIONS.replace('\n', "\r\n"),
        );
        assert!(
            project
                .findings_of(&SOURCED.replace('\n', "\r\n"))
                .is_empty()
        );
    }

    // --- Markdown visibility -------------------------------------------------------------------

    #[test]
    fn hidden_text_carries_no_tag() {
        let labels = HashSet::new();
        for text in [
            "`[desc]`",
            "``a ` [desc]``",
            "<span hidden>[desc]</span>",
            "<div aria-hidden=\"true\">[desc]</div>",
            "<p style=\"display: none\">[desc]</p>",
            "<script>[desc]</script>",
            "![[desc]](image.png)",
        ] {
            assert!(source_tags(text, &labels).is_empty(), "{text}");
        }
        for text in [
            "[[desc]](https://example.com)",
            "<span>[desc]</span>",
            "<https://example.com> [desc]",
            "[Q1][Q2] [desc]",
        ] {
            assert!(!source_tags(text, &labels).is_empty(), "{text}");
        }
        assert_eq!(source_tags("[Q1][Q2]", &labels), ["Q1", "Q2"]);
    }

    #[test]
    fn reference_definitions_are_found_through_containers() {
        for body in [
            "[Q1]: https://example.com",
            "> - [Q1]: https://example.com",
            "- > [Q1]: https://example.com",
            "[Q1]:\n  https://example.com\n  \"a title\"",
            "[Q1]: <https://example.com> 'title'",
        ] {
            let analysis = reference_analysis(body);
            assert!(analysis.labels.contains("Q1"), "{body}");
        }
        for body in [
            "[Q1]: https://example.com trailing",
            "[Q1] https://example.com",
            "    [Q1]: https://example.com",
            "[Q1]:",
        ] {
            assert!(reference_analysis(body).labels.is_empty(), "{body}");
        }
    }

    /// Fenced code, HTML comments and reference definitions are what `CommonMark` makes of
    /// them (D39): a fence inside a list item or a block quote hides its own lines and no
    /// more, `<!-->` is a whole (empty) comment, and a line shaped like a definition that
    /// continues a paragraph is text, so it defines nothing.
    #[test]
    fn fences_comments_and_definitions_are_read_as_commonmark() {
        let project = Project::grounded();
        let untagged = "intent-statement.md ## Intent: claim block has no source tag";
        let section = "\n\n## Assumptions & Open Questions\n\nNone.\n";
        for hidden in [
            "- ```\n  untagged in a fence\n  ```",
            "> ```\n> untagged in a fence\n> ```",
            "<!-->",
        ] {
            let statement = format!("## Intent\n\n{hidden}\n\nUntagged after it.{section}");
            assert_eq!(project.findings_of(&statement), [untagged], "{hidden}");
        }
        let continued = format!("## Intent\n\nTagged [desc]\n[desc]: /not-a-definition{section}");
        assert!(project.findings_of(&continued).is_empty());
    }

    #[test]
    fn headings_and_tables_are_read_as_the_reference_does() {
        assert_eq!(h2_heading("## Sources ##").as_deref(), Some("Sources"));
        assert_eq!(h2_heading("   ## Q1: x").as_deref(), Some("Q1: x"));
        assert_eq!(h2_heading("##"), Some(String::new()));
        assert_eq!(h2_heading("### Sources"), None);
        assert_eq!(h2_heading("    ## Sources"), None);
        assert!(is_table_separator("|---|:---:|"));
        assert!(!is_table_separator("|---|"));
        assert_eq!(question_id("Q12: deadline").as_deref(), Some("Q12"));
        assert_eq!(question_id("Q1a"), None);
    }

    #[test]
    fn pathological_input_does_not_panic() {
        let labels = HashSet::new();
        for text in [
            "[",
            "]",
            "![",
            "<",
            "</",
            "<a",
            "`",
            "``",
            "\\",
            "[x](",
            "[x][",
            "é[é]é<é>",
        ] {
            let _ = source_tags(text, &labels);
            let _ = claim_blocks(text, &BTreeSet::new());
            let _ = reference_analysis(text);
        }
    }
}
