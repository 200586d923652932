//! The native `required-sections` worker (D37): does a Markdown deliverable have the
//! shape its stage asks for? docs/decisions.md D37 says what the reference checks and where
//! this differs on purpose; `headings`, `templates` and `bolt_dag` hold the rules, and
//! `verdict` the JSON's keys in order.
//!
//! Also different from the reference, on purpose:
//!
//! - Headings inside fenced code do not count: the reference counted them, so a document that
//!   only quoted headings in an example passed the floor.
//! - Marker files are exempt from the floor (failure mode Z1, the `amadeus` fork's
//!   `marker_exempt`): the reference failed every questions file forever.
//! - `.html` deliverables get the zero shape; one newer reference snapshot projects HTML to
//!   Markdown first, which this engine does not do.
//! - Read errors quote the operating system's message, not Node's.

mod bolt_dag;
mod headings;
mod templates;
mod verdict;

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use self::bolt_dag::edge_block_of;
pub(super) use self::bolt_dag::{
    check_unit_names, lines_below_units_key, list_item, spaced_key_value, units_block,
    unquote_scalar,
};
use self::headings::h2_headings;
use self::templates::{apply_template, resolve_template};
use self::verdict::SectionsVerdict;
use crate::protocol::output_paths::is_marker_artifact;
use crate::runtime::sensors::descriptor::{
    ExtraFlag, FRAMEWORK_TEMPLATES_DIR_FLAG, GateUnit, PathFlag, STAGE_FLAG, ShippedSensor,
    TEMPLATE_ELIGIBLE_FLAG, TEMPLATES_DIR_FLAG,
};
use crate::runtime::sensors::text::read_text_lossy;
use crate::runtime::sensors::worker_args::{
    FlagGrammar, WorkerArgs, existing_output_path, resolve_worker_path, split_csv,
    verdict_or_usage_error,
};

/// The file whose Bolt DAG block is checked as well as its headings.
const DAG_FILE_NAME: &str = "unit-of-work-dependency.md";

/// The `required-sections` sensor: one deliverable per fire, with the template folders.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "required-sections",
    check: |args, context| verdict_or_usage_error(check(args, &context.project_dir)),
    extra_flags: &[ExtraFlag::Templates],
    default_path_flag: PathFlag::OutputPath,
    gate_unit: GateUnit::Deliverable,
};

fn check(args: &[String], project_dir: &Utf8Path) -> Result<Value, String> {
    let flags = WorkerArgs::parse(args, &SENSOR, FlagGrammar::Lenient)?;
    let (output_path_as_given, output_path) = existing_output_path(&flags, project_dir)?;
    let file_name = output_path.file_name().unwrap_or_default();
    let Some(stem) = markdown_stem(file_name) else {
        return Ok(SectionsVerdict::default().into_json(output_path.as_str()));
    };
    let body = read_text_lossy(&output_path)
        .map_err(|error| format!("failed to read --output-path {output_path_as_given}: {error}"))?;
    let mut verdict = SectionsVerdict::of_headings(h2_headings(&body));
    if is_marker_artifact(stem) {
        verdict.exempt_marker();
    }
    let template_dirs: Vec<Utf8PathBuf> = [TEMPLATES_DIR_FLAG, FRAMEWORK_TEMPLATES_DIR_FLAG]
        .into_iter()
        .filter_map(|flag| flags.non_empty(flag))
        .map(|dir| resolve_worker_path(project_dir, dir))
        .collect();
    if let Some(template_path) = resolve_template(stem, &template_dirs) {
        apply_template(
            &mut verdict,
            &split_csv(flags.value(TEMPLATE_ELIGIBLE_FLAG).unwrap_or_default()),
            flags.value(STAGE_FLAG),
            stem,
            &template_path,
        )?;
    }
    if file_name == DAG_FILE_NAME {
        verdict.apply_edge_block(edge_block_of(&body));
    }
    Ok(verdict.into_json(output_path.as_str()))
}

/// The stem of a Markdown file name (`.md` in any case removed), or `None` for any other file.
fn markdown_stem(file_name: &str) -> Option<&str> {
    let split_at = file_name.len().checked_sub(3)?;
    let extension = file_name.get(split_at..)?;
    extension
        .eq_ignore_ascii_case(".md")
        .then(|| &file_name[..split_at])
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::bolt_dag::{
        EdgeBlock, declares_units_key, edge_block_of, greedy_rest, inline_dependency_list,
        lazy_capture, unquote_scalar,
    };
    use super::headings::h2_headings;
    use super::*;
    use crate::runtime::sensors::test_support::SensorProject;

    const DELIVERABLE: &str = "intents/x/ideation/intent-capture/intent-statement.md";

    /// The shared fixture, fired with the dispatcher's argv for `required-sections`.
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

        /// Fire on `relative` the way the dispatcher does, with both template folders.
        fn fire(&self, relative: &str, eligible: &str) -> String {
            let output = self.root().join(relative);
            let team = self.root().join("aidlc/spaces/default/memory/templates");
            let framework = self.root().join(".claude/tools/data/templates");
            self.verdict_line(&[
                "--stage",
                "intent-capture",
                "--output-path",
                output.as_str(),
                "--templates-dir",
                team.as_str(),
                "--template-eligible",
                eligible,
                "--framework-templates-dir",
                framework.as_str(),
            ])
        }
    }

    fn edge_block(body: &str) -> EdgeBlock {
        edge_block_of(body)
    }

    fn malformed(detail: &str) -> EdgeBlock {
        EdgeBlock::Malformed {
            detail: detail.to_owned(),
        }
    }

    fn dag_document(block: &str) -> String {
        format!("# Units\n\n## Dependencies\n\n```yaml\n{block}\n```\n\n## Notes\n")
    }

    // --- the H2 floor -------------------------------------------------------------------------

    #[test]
    fn two_distinct_h2_headings_pass_with_the_exact_shape() {
        let project = Project::new();
        project.write(DELIVERABLE, "# Title\n\n## Problem\ntext\n\n## Goals\n");
        assert_eq!(
            project.fire(DELIVERABLE, "intent-statement"),
            r###"{"pass":true,"h2_count":2,"headings":["## Problem","## Goals"],"findings_count":0}"###
        );
    }

    #[test]
    fn one_h2_heading_fails_with_one_finding() {
        let project = Project::new();
        project.write(DELIVERABLE, "## Problem Statement\nonly one\n");
        assert_eq!(
            project.fire(DELIVERABLE, "intent-statement"),
            r###"{"pass":false,"h2_count":1,"headings":["## Problem Statement"],"findings_count":1}"###
        );
    }

    #[test]
    fn no_heading_fails_with_two_findings() {
        let project = Project::new();
        project.write(DELIVERABLE, "plain text\n");
        assert_eq!(
            project.fire(DELIVERABLE, ""),
            r#"{"pass":false,"h2_count":0,"headings":[],"findings_count":2}"#
        );
    }

    #[test]
    fn h3_headings_do_not_count_as_h2_p11() {
        let project = Project::new();
        project.write(DELIVERABLE, "## One\n### Two\n#### Three\n##Four\n");
        assert_eq!(
            project.fire(DELIVERABLE, ""),
            r###"{"pass":false,"h2_count":1,"headings":["## One"],"findings_count":1}"###
        );
    }

    #[test]
    fn a_repeated_heading_counts_once_p11() {
        let project = Project::new();
        project.write(DELIVERABLE, "## Same\n\n## Same\n  ## Same  \n");
        assert_eq!(
            project.fire(DELIVERABLE, ""),
            r###"{"pass":false,"h2_count":1,"headings":["## Same"],"findings_count":1}"###
        );
    }

    #[test]
    fn headings_are_trimmed_lines_in_first_seen_order() {
        assert_eq!(
            h2_headings("\u{feff}## B\r\n   ## A\t\r\n## B\n"),
            ["## B", "## A"]
        );
    }

    #[test]
    fn headings_inside_backtick_and_tilde_fences_do_not_count() {
        let body =
            "## Real\n```markdown\n## Quoted one\n```\n~~~\n## Quoted two\n~~~\n## Also real\n";
        assert_eq!(h2_headings(body), ["## Real", "## Also real"]);
    }

    #[test]
    fn a_fenced_example_alone_does_not_meet_the_floor() {
        let project = Project::new();
        project.write(
            DELIVERABLE,
            "Example:\n\n```md\n## Problem\n## Goals\n```\n",
        );
        assert_eq!(
            project.fire(DELIVERABLE, ""),
            r#"{"pass":false,"h2_count":0,"headings":[],"findings_count":2}"#
        );
    }

    #[test]
    fn a_fence_closes_only_with_its_own_character_and_at_least_its_length() {
        let body = "````\n```\n## Inside\n~~~~\n````\n## After\n";
        assert_eq!(h2_headings(body), ["## After"]);
    }

    #[test]
    fn an_indented_fence_in_a_list_item_still_hides_its_headings() {
        let body = "## A\n1. Step\n    ```bash\n    ## not a heading\n    ```\n## B\n";
        assert_eq!(h2_headings(body), ["## A", "## B"]);
    }

    #[test]
    fn an_unclosed_fence_hides_the_rest_of_the_file() {
        assert_eq!(h2_headings("## A\n```\n## B\n"), ["## A"]);
    }

    #[test]
    fn inline_code_with_three_backticks_is_not_a_fence() {
        assert_eq!(
            h2_headings("```code``` inline\n## A\n## B\n"),
            ["## A", "## B"]
        );
    }

    // --- marker files (Z1) ---------------------------------------------------------------------

    #[test]
    fn a_questions_marker_is_not_held_to_the_floor_z1() {
        let project = Project::new();
        let relative = "intents/x/ideation/intent-capture/intent-capture-questions.md";
        project.write(relative, "Q1: what?\n[Answer]: this\n");
        assert_eq!(
            project.fire(relative, "intent-statement"),
            r#"{"pass":true,"h2_count":0,"headings":[],"findings_count":0,"marker_exempt":true}"#
        );
    }

    #[test]
    fn a_timestamp_marker_is_not_held_to_the_floor_z1() {
        let project = Project::new();
        let relative = "intents/x/ideation/intent-capture/intent-capture-timestamp.md";
        project.write(relative, "## Started\n2026-10-13\n");
        assert_eq!(
            project.fire(relative, ""),
            r###"{"pass":true,"h2_count":1,"headings":["## Started"],"findings_count":0,"marker_exempt":true}"###
        );
    }

    #[test]
    fn a_file_merely_named_questions_is_held_to_the_floor() {
        let project = Project::new();
        let relative = "intents/x/questions.md";
        project.write(relative, "no headings\n");
        assert_eq!(
            project.fire(relative, ""),
            r#"{"pass":false,"h2_count":0,"headings":[],"findings_count":2}"#
        );
    }

    #[test]
    fn a_marker_with_a_template_keeps_the_ineligible_warning() {
        let project = Project::new();
        let relative = "intents/x/ideation/intent-capture/intent-capture-questions.md";
        project.write(relative, "Q1\n");
        project.write(
            "aidlc/spaces/default/memory/templates/intent-capture-questions.md",
            "## Q\n",
        );
        let expected = concat!(
            r#"{"pass":true,"h2_count":0,"headings":[],"findings_count":0,"marker_exempt":true,"#,
            r#""template":"ineligible","config_warning":"template intent-capture-questions.md "#,
            r#"resolved but artifact \"intent-capture-questions\" is not template-eligible for "#,
            r#"stage \"intent-capture\" (questions/timestamp markers are excluded); template "#,
            r#"ignored, keeping the generic >=2-H2 floor."}"#
        );
        assert_eq!(project.fire(relative, "intent-statement"), expected);
    }

    // --- non-Markdown files --------------------------------------------------------------------

    #[test]
    fn a_non_markdown_file_passes_with_the_zero_shape() {
        let project = Project::new();
        let relative = "intents/x/traceability.json";
        project.write(relative, "{\"no\": \"headings\"}");
        assert_eq!(
            project.fire(relative, ""),
            r#"{"pass":true,"h2_count":0,"headings":[],"findings_count":0}"#
        );
    }

    #[test]
    fn html_gets_the_zero_shape_too() {
        let project = Project::new();
        let relative = "intents/x/page.html";
        project.write(relative, "<h2>A</h2>");
        assert_eq!(
            project.fire(relative, ""),
            r#"{"pass":true,"h2_count":0,"headings":[],"findings_count":0}"#
        );
    }

    #[test]
    fn an_upper_case_md_extension_is_markdown() {
        let project = Project::new();
        let relative = "intents/x/NOTES.MD";
        project.write(relative, "## A\n");
        assert_eq!(
            project.fire(relative, ""),
            r###"{"pass":false,"h2_count":1,"headings":["## A"],"findings_count":1}"###
        );
        assert_eq!(markdown_stem("NOTES.MD"), Some("NOTES"));
        assert_eq!(markdown_stem("md"), None);
        assert_eq!(markdown_stem("é.md"), Some("é"));
        assert_eq!(markdown_stem("xé"), None);
    }

    #[test]
    fn invalid_utf8_is_read_with_replacement_characters() {
        let project = Project::new();
        let path = project.root().join("doc.md");
        std::fs::write(&path, b"## A \xff\n## B\n").unwrap();
        assert_eq!(
            project.verdict_line(&["--output-path", path.as_str()]),
            "{\"pass\":true,\"h2_count\":2,\"headings\":[\"## A \u{fffd}\",\"## B\"],\"findings_count\":0}"
        );
    }

    // --- templates -----------------------------------------------------------------------------

    #[test]
    fn a_team_template_replaces_the_floor() {
        let project = Project::new();
        project.write(DELIVERABLE, "## Problem\n## Goals\n");
        project.write(
            "aidlc/spaces/default/memory/templates/intent-statement.md",
            "# T\n## Problem\n## Goals\n## Risks\n```\n## Not expected\n```\n",
        );
        project.write(
            ".claude/tools/data/templates/intent-statement.md",
            "## Framework only\n",
        );
        assert_eq!(
            project.fire(DELIVERABLE, "other, intent-statement"),
            concat!(
                r###"{"pass":false,"h2_count":2,"headings":["## Problem","## Goals"],"findings_count":1,"###,
                r###""template":"applied","template_expected":["## Problem","## Goals","## Risks"],"###,
                r###""template_missing":["## Risks"]}"###
            )
        );
    }

    #[test]
    fn the_framework_template_applies_when_the_team_has_none() {
        let project = Project::new();
        project.write(DELIVERABLE, "## Only\n");
        project.write(
            ".claude/tools/data/templates/intent-statement.md",
            "## Only\n",
        );
        assert_eq!(
            project.fire(DELIVERABLE, "intent-statement"),
            concat!(
                r###"{"pass":true,"h2_count":1,"headings":["## Only"],"findings_count":0,"###,
                r###""template":"applied","template_expected":["## Only"],"template_missing":[]}"###
            )
        );
    }

    #[test]
    fn no_template_in_either_folder_keeps_the_floor() {
        let project = Project::new();
        project.write(DELIVERABLE, "## Only\n");
        project.write("aidlc/spaces/default/memory/templates/other.md", "## X\n");
        assert_eq!(
            project.fire(DELIVERABLE, "intent-statement"),
            r###"{"pass":false,"h2_count":1,"headings":["## Only"],"findings_count":1}"###
        );
    }

    #[test]
    fn a_template_for_an_ineligible_stem_is_ignored_with_a_warning() {
        let project = Project::new();
        project.write(DELIVERABLE, "## A\n## B\n");
        project.write(
            "aidlc/spaces/default/memory/templates/intent-statement.md",
            "## Required\n",
        );
        let expected = concat!(
            r###"{"pass":true,"h2_count":2,"headings":["## A","## B"],"findings_count":0,"###,
            r#""template":"ineligible","config_warning":"template intent-statement.md resolved "#,
            r#"but artifact \"intent-statement\" is not template-eligible for stage "#,
            r#"\"intent-capture\" (questions/timestamp markers are excluded); template ignored, "#,
            r#"keeping the generic >=2-H2 floor."}"#
        );
        assert_eq!(project.fire(DELIVERABLE, "other-artifact"), expected);
    }

    #[test]
    fn the_warning_names_the_stage_as_a_question_mark_when_none_was_given() {
        let project = Project::new();
        let output = project.write("doc.md", "## A\n## B\n");
        let templates = project.root().join("templates");
        project.write("templates/doc.md", "## A\n");
        let verdict = project.verdict_line(&[
            "--output-path",
            output.as_str(),
            "--templates-dir",
            templates.as_str(),
        ]);
        assert!(
            verdict.contains(r#"template-eligible for stage \"?\" (questions"#),
            "{verdict}"
        );
    }

    #[test]
    fn empty_template_folder_flags_are_skipped() {
        let project = Project::new();
        let output = project.write("doc.md", "## A\n## B\n");
        assert_eq!(
            project.verdict_line(&[
                "--output-path",
                output.as_str(),
                "--templates-dir",
                "",
                "--framework-templates-dir",
                "",
                "--template-eligible",
                "doc",
            ]),
            r###"{"pass":true,"h2_count":2,"headings":["## A","## B"],"findings_count":0}"###
        );
    }

    #[test]
    fn an_unreadable_template_is_a_usage_error() {
        let project = Project::new();
        let output = project.write("doc.md", "## A\n## B\n");
        let templates = project.root().join("templates");
        std::fs::create_dir_all(templates.join("doc.md")).unwrap();
        let message = project.usage_error(&[
            "--output-path",
            output.as_str(),
            "--templates-dir",
            templates.as_str(),
            "--template-eligible",
            "doc",
        ]);
        let prefix = format!("failed to read template {}: ", templates.join("doc.md"));
        assert!(message.starts_with(&prefix), "{message}");
    }

    // --- the Bolt DAG block --------------------------------------------------------------------

    #[test]
    fn a_valid_dag_block_is_ok_and_keeps_the_floor_verdict() {
        let project = Project::new();
        let relative = "intents/x/inception/units-generation/unit-of-work-dependency.md";
        project.write(
            relative,
            &dag_document(
                "units:\n  - name: auth\n    kind: service\n    depends_on: []\n  - name: api\n    depends_on: [auth]",
            ),
        );
        assert_eq!(
            project.fire(relative, "unit-of-work-dependency"),
            r###"{"pass":true,"h2_count":2,"headings":["## Dependencies","## Notes"],"findings_count":0,"edge_block":"ok"}"###
        );
    }

    #[test]
    fn a_missing_dag_block_fails_with_one_more_finding() {
        let project = Project::new();
        let relative = "intents/x/unit-of-work-dependency.md";
        project.write(relative, "## Only one\n");
        assert_eq!(
            project.fire(relative, ""),
            r###"{"pass":false,"h2_count":1,"headings":["## Only one"],"findings_count":2,"edge_block":"absent"}"###
        );
    }

    /// Each cause of a failure is its own finding: a DAG file with enough headings and no
    /// block is one `bolt-dag` finding, not a heading shortfall it does not have.
    #[test]
    fn the_gate_report_names_the_cause_of_each_finding() {
        let project = Project::new();
        let relative = "intents/x/unit-of-work-dependency.md";
        project.write(relative, "## One\n\n## Two\n");
        let output = project.root().join(relative);
        let args = [
            "--stage",
            "units-generation",
            "--output-path",
            output.as_str(),
        ];
        let found = project.diagnostics(&args);
        let rules: Vec<&str> = found.iter().map(|finding| finding.rule.as_str()).collect();
        assert_eq!(rules, ["bolt-dag"]);
        assert!(found[0].message.starts_with("has no Bolt DAG"), "{found:?}");
        project.write(relative, "## Only one\n");
        let rules: Vec<String> = project
            .diagnostics(&args)
            .into_iter()
            .map(|finding| finding.rule)
            .collect();
        assert_eq!(rules, ["too-few-headings", "bolt-dag"]);
    }

    #[test]
    fn the_edge_block_follows_the_template_keys() {
        let project = Project::new();
        let relative = "intents/x/unit-of-work-dependency.md";
        project.write(
            relative,
            &dag_document(
                "units:\n  - name: a\n    depends_on: [b]\n  - name: b\n    depends_on: [a]",
            ),
        );
        project.write(
            "aidlc/spaces/default/memory/templates/unit-of-work-dependency.md",
            "## Dependencies\n",
        );
        assert_eq!(
            project.fire(relative, "unit-of-work-dependency"),
            concat!(
                r###"{"pass":false,"h2_count":2,"headings":["## Dependencies","## Notes"],"findings_count":1,"###,
                r###""template":"applied","template_expected":["## Dependencies"],"template_missing":[],"###,
                r#""edge_block":"cyclic"}"#
            )
        );
    }

    #[test]
    fn only_the_exact_dag_file_name_is_checked() {
        let project = Project::new();
        let relative = "intents/x/Unit-Of-Work-Dependency.md";
        project.write(relative, "## A\n## B\n");
        assert_eq!(
            project.fire(relative, ""),
            r###"{"pass":true,"h2_count":2,"headings":["## A","## B"],"findings_count":0}"###
        );
    }

    #[test]
    fn dag_block_states() {
        assert_eq!(edge_block("## A\nno block\n"), EdgeBlock::Absent);
        assert_eq!(
            edge_block("```yaml\nother: 1\n```\n```json\nunits: []\n```\n"),
            EdgeBlock::Absent
        );
        assert_eq!(
            edge_block(&dag_document(
                "units:\n  - name: a\n  - name: b\n    depends_on:\n      - a"
            )),
            EdgeBlock::Ok
        );
        assert_eq!(
            edge_block(&dag_document(
                "units:\n  - name: a\n    depends_on: [b]\n  - name: b\n    depends_on: [c]\n  - name: c\n    depends_on: [a]"
            )),
            EdgeBlock::Cyclic
        );
    }

    #[test]
    fn the_first_yaml_fence_declaring_units_is_used() {
        let body = "```yaml\nname: x\n```\n```yml\nunits:\n  - name: a\n```\n```yaml\nunits: broken\n```\n";
        assert_eq!(edge_block(body), EdgeBlock::Ok);
        let crlf = "```yaml\r\nunits:\r\n  - name: \"a\"\r\n  - name: 'b'\r\n    depends_on: [\"a\"]\r\n```\r\n";
        assert_eq!(edge_block(crlf), EdgeBlock::Ok);
    }

    #[test]
    fn malformed_dag_blocks_name_the_rule_they_break() {
        let cases = [
            (
                "units: [a]",
                "units: must be a block list, not an inline value",
            ),
            ("units:", "units: block has no entries"),
            (
                "units:\n  depends_on: [a]",
                "depends_on: before any - name: entry",
            ),
            ("units:\n  kind: service", "kind: before any - name: entry"),
            (
                "units:\n  - name: a\n    kind: server",
                "unit \"a\" has invalid kind \"server\" (expected service|spec|ui|packaging|library)",
            ),
            ("units:\n  - name: a\n  - name: a", "duplicate unit name: a"),
            (
                "units:\n  - name: a\n    depends_on: [a]",
                "unit \"a\" depends on itself",
            ),
            (
                "units:\n  - name: a\n    depends_on: [ghost]",
                "unit \"a\" depends on unknown unit \"ghost\"",
            ),
            (
                "units:\n  - name: a\n  owner: me",
                "unrecognised line in units block: owner: me",
            ),
            (
                "units:\n  - dangling",
                "unrecognised line in units block: - dangling",
            ),
            (
                "units:\n  - name: -bad",
                "Invalid Unit name \"-bad\" - must match /^[A-Za-z0-9][A-Za-z0-9._-]*$/ (ASCII letter/digit, then ASCII letters/digits/dot/underscore/hyphen)",
            ),
            ("units:\n  - name: \"\"", "Unit name is empty"),
        ];
        for (block, detail) in cases {
            assert_eq!(
                edge_block(&dag_document(block)),
                malformed(detail),
                "{block}"
            );
        }
        let long_name = "a".repeat(65);
        assert_eq!(
            edge_block(&dag_document(&format!("units:\n  - name: {long_name}"))),
            malformed(&format!(
                "Unit name \"{}...\" is 65 chars; max is 64",
                "a".repeat(32)
            ))
        );
    }

    #[test]
    fn inline_dependency_lists_respect_quotes_and_comments() {
        assert_eq!(
            inline_dependency_list("[a, \"b,c\", 'd']"),
            ["a", "b,c", "d"]
        );
        assert_eq!(inline_dependency_list("[a] # first"), ["a"]);
        assert_eq!(inline_dependency_list("[a] trailing"), Vec::<String>::new());
        assert_eq!(inline_dependency_list("[a, b"), Vec::<String>::new());
        assert_eq!(inline_dependency_list("[\"a]"), Vec::<String>::new());
        assert_eq!(inline_dependency_list("[a, , b]"), ["a", "b"]);
        assert_eq!(inline_dependency_list("solo"), ["solo"]);
        assert_eq!(inline_dependency_list(" [] "), Vec::<String>::new());
    }

    #[test]
    fn dag_line_captures_follow_the_reference_patterns() {
        assert_eq!(lazy_capture(" x y  ", 0), Some("x y"));
        assert_eq!(lazy_capture("", 0), None);
        assert_eq!(lazy_capture("   ", 0), Some(""));
        assert_eq!(lazy_capture("x", 1), None);
        assert_eq!(lazy_capture(" a\rb", 0), None);
        assert_eq!(greedy_rest("  [a]  "), Some("[a]  "));
        assert_eq!(unquote_scalar("\""), "");
        assert_eq!(unquote_scalar(" 'a' "), "a");
        assert!(declares_units_key("x: 1\n  units :\n"));
        assert!(!declares_units_key("x: units:\n"));
    }

    #[test]
    fn a_long_dependency_chain_is_checked_in_linear_time() {
        let mut block = String::from("units:\n  - name: u0\n");
        for index in 1..5_000 {
            writeln!(
                block,
                "  - name: u{index}\n    depends_on: [u{}]",
                index - 1
            )
            .unwrap();
        }
        assert_eq!(edge_block(&dag_document(&block)), EdgeBlock::Ok);
    }

    // --- flags and errors ----------------------------------------------------------------------

    #[test]
    fn a_missing_output_path_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--stage", "s"]),
            "--output-path is required"
        );
        assert_eq!(
            project.usage_error(&["--output-path", ""]),
            "--output-path is required"
        );
    }

    #[test]
    fn an_output_path_that_does_not_exist_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--output-path", "missing/doc.md"]),
            "--output-path not found: missing/doc.md"
        );
        assert_eq!(
            project.usage_error(&["--output-path", "missing/data.json"]),
            "--output-path not found: missing/data.json"
        );
    }

    #[test]
    fn an_unreadable_output_path_is_a_usage_error() {
        let project = Project::new();
        std::fs::create_dir_all(project.root().join("folder.md")).unwrap();
        let message = project.usage_error(&["--output-path", "folder.md"]);
        assert!(
            message.starts_with("failed to read --output-path folder.md: "),
            "{message}"
        );
    }

    #[test]
    fn a_flag_without_a_value_is_a_usage_error_f9() {
        let project = Project::new();
        let output = project.write("doc.md", "## A\n## B\n");
        assert_eq!(
            project.usage_error(&["--output-path", output.as_str(), "--templates-dir"]),
            "--templates-dir expects a value, got end of arguments."
        );
        assert_eq!(
            project.usage_error(&[
                "--templates-dir",
                "--stage",
                "s",
                "--output-path",
                output.as_str()
            ]),
            "--templates-dir expects a value, got another flag: \"--stage\"."
        );
    }

    #[test]
    fn unknown_tokens_are_skipped_and_the_last_value_wins() {
        let project = Project::new();
        let first = project.write("first.md", "no headings\n");
        let second = project.write("second.md", "## A\n## B\n");
        assert_eq!(
            project.verdict_line(&[
                "stray",
                "--output-path",
                first.as_str(),
                "--unknown",
                "--output-path",
                second.as_str(),
            ]),
            r###"{"pass":true,"h2_count":2,"headings":["## A","## B"],"findings_count":0}"###
        );
    }

    #[test]
    fn template_eligible_is_trimmed_with_empties_dropped() {
        assert_eq!(split_csv(" a , ,b,, "), ["a", "b"]);
        assert_eq!(split_csv(""), Vec::<String>::new());
    }

    // --- paths ---------------------------------------------------------------------------------

    #[test]
    fn windows_style_relative_paths_work() {
        let project = Project::new();
        project.write(DELIVERABLE, "## A\n");
        project.write(
            "aidlc/spaces/default/memory/templates/intent-statement.md",
            "## A\n",
        );
        assert_eq!(
            project.verdict_line(&[
                "--output-path",
                &DELIVERABLE.replace('/', "\\"),
                "--templates-dir",
                "aidlc\\spaces\\default\\memory\\templates\\",
                "--template-eligible",
                "intent-statement",
            ]),
            concat!(
                r###"{"pass":true,"h2_count":1,"headings":["## A"],"findings_count":0,"###,
                r###""template":"applied","template_expected":["## A"],"template_missing":[]}"###
            )
        );
    }

    #[test]
    fn windows_style_absolute_paths_work_for_the_dag_file() {
        let project = Project::new();
        let path = project.write("intents/x/unit-of-work-dependency.md", "## A\n## B\n");
        let windows_style = path
            .as_str()
            .replace('/', "\\")
            .replace("\\x\\", "\\x\\.\\..\\x\\");
        assert_eq!(
            project.verdict_line(&["--output-path", &windows_style]),
            r###"{"pass":false,"h2_count":2,"headings":["## A","## B"],"findings_count":1,"edge_block":"absent"}"###
        );
    }

    #[test]
    fn paths_are_resolved_lexically_from_the_project_folder() {
        let project = Utf8Path::new("/p/q");
        assert_eq!(resolve_worker_path(project, "a/./b/../c.md"), "/p/q/a/c.md");
        assert_eq!(resolve_worker_path(project, "..\\..\\..\\x"), "/x");
        assert_eq!(resolve_worker_path(project, "/abs/./y/"), "/abs/y");
        assert_eq!(resolve_worker_path(Utf8Path::new("rel"), "../../x"), "../x");
    }

    // --- scale ---------------------------------------------------------------------------------

    #[test]
    fn a_200_kb_deliverable_is_scanned_in_one_pass() {
        let project = Project::new();
        let section_count = 5_000;
        let mut body = String::new();
        for index in 0..section_count {
            writeln!(
                body,
                "## Section {index}\n```\n## fenced {index}\n```\nSome prose."
            )
            .unwrap();
        }
        assert!(body.len() > 200 * 1024);
        project.write(DELIVERABLE, &body);
        let verdict = project.fire(DELIVERABLE, "");
        assert!(
            verdict.starts_with(&format!("{{\"pass\":true,\"h2_count\":{section_count},")),
            "{}",
            &verdict[..80]
        );
    }
}
