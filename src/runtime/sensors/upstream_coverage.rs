//! The native `upstream-coverage` worker (D38): does the stage's output cite every
//! artifact the stage consumes? docs/decisions.md D38 says what the reference checks; each rule
//! is stated where it is applied (`parse_consumes`, `worker_args::stage_scan_set`,
//! `read_scan_set`, `names_slug`, `cites_producer_folder`), and `coverage_verdict` writes the
//! keys in the reference's order.
//!
//! Where this differs from the reference, on purpose:
//!
//! - A scaffolding file fired without `--deliverables` is not scanned (failure mode Z1; the
//!   same exemption the `amadeus` fork gave its stage-output sensors): a slug named only in the
//!   questions file or the diary is not upstream coverage. The reference scanned it.
//! - A producer folder may also be cited with `\` separators (`construction\u1\nfr-design\`), so
//!   provenance written with Windows paths counts; the reference accepted only `/`.
//! - A deliverable listed twice is scanned once (`scanned_files` has no duplicates).
//! - Flags and paths are read as `worker_args` reads every worker's, which says how that
//!   differs from the reference; `scanned_files` uses this platform's separator.
//! - Case folding covers ASCII and the one-to-one letter pairs of the same UTF-8 length (which
//!   keeps byte offsets); the reference's JavaScript folding also paired a few others.
//!
//! Each consume costs one left-to-right pass over the folded text, so a stage output of any
//! size is checked in time linear in its length.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};

use crate::leaves::js_text::js_trim;
use crate::protocol::finding::Finding;
use crate::runtime::sensors::descriptor::{
    CONSUMES_FLAG, DELIVERABLES_FLAG, ExtraFlag, GateUnit, PathFlag, ShippedSensor,
};
use crate::runtime::sensors::finding::verdict_json;
use crate::runtime::sensors::text::read_text_lossy;
use crate::runtime::sensors::worker_args::{
    FlagGrammar, WorkerArgs, existing_output_path, split_csv, stage_scan_set,
    verdict_or_usage_error,
};

const REASON_NO_UPSTREAM: &str = "no upstream";
const REASON_NOTHING_TO_SCAN: &str = "no deliverables on disk yet";

/// The `upstream-coverage` sensor: it reads the whole stage's output, so a gate fires it once
/// per output folder.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "upstream-coverage",
    check: |args, context| verdict_or_usage_error(check(args, &context.project_dir)),
    extra_flags: &[ExtraFlag::Consumes, ExtraFlag::Deliverables],
    default_path_flag: PathFlag::OutputPath,
    gate_unit: GateUnit::OutputFolder,
};

/// One consumed artifact: its slug and, when the dispatcher knows it, its producing stage.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Consume {
    slug: String,
    producer: Option<String>,
}

fn check(args: &[String], project_dir: &Utf8Path) -> Result<Value, String> {
    let flags = WorkerArgs::parse(args, &SENSOR, FlagGrammar::Lenient)?;
    let (_, fired_path) = existing_output_path(&flags, project_dir)?;
    let consumes = parse_consumes(flags.value(CONSUMES_FLAG).unwrap_or_default());
    let slugs: Vec<String> = consumes.iter().map(|c| c.slug.clone()).collect();
    if consumes.is_empty() {
        return Ok(vacuous_verdict(slugs, REASON_NO_UPSTREAM));
    }
    let deliverables = split_csv(flags.value(DELIVERABLES_FLAG).unwrap_or_default());
    let (text, files) = read_scan_set(
        &fired_path,
        &stage_scan_set(&fired_path, &deliverables, true),
    )?;
    if files.is_empty() {
        return Ok(vacuous_verdict(slugs, REASON_NOTHING_TO_SCAN));
    }
    let folded_text = fold_case(&text);
    let unreferenced: Vec<String> = consumes
        .iter()
        .filter(|consume| !is_covered(&folded_text, consume))
        .map(|consume| consume.slug.clone())
        .collect();
    Ok(coverage_verdict(
        slugs,
        unreferenced,
        files,
        &fired_path,
        None,
    ))
}

/// `--consumes`: items trimmed, empties dropped; `artifact:producer` split at the first `:`,
/// both sides trimmed, an empty producer read as none, an empty artifact dropped.
fn parse_consumes(value: &str) -> Vec<Consume> {
    split_csv(value)
        .iter()
        .map(|item| {
            let (slug, producer) = item.split_once(':').unwrap_or((item, ""));
            let producer = js_trim(producer);
            Consume {
                slug: js_trim(slug).to_owned(),
                producer: (!producer.is_empty()).then(|| producer.to_owned()),
            }
        })
        .filter(|consume| !consume.slug.is_empty())
        .collect()
}

/// Read the scan set: the files' texts, each after a `\n`, and the files that could be read.
/// Invariant: only the fired file's read error stops the check; a sibling that cannot be read
/// is left out, so coverage is judged on what is readable.
fn read_scan_set(
    fired_path: &Utf8Path,
    paths: &[Utf8PathBuf],
) -> Result<(String, Vec<String>), String> {
    let (mut text, mut files) = (String::new(), Vec::new());
    for path in paths {
        match read_text_lossy(path) {
            Ok(body) => {
                text.push('\n');
                text.push_str(&body);
                files.push(path.to_string());
            }
            Err(error) if path == fired_path => {
                return Err(format!("failed to read --output-path {path}: {error}"));
            }
            Err(_) => {}
        }
    }
    Ok((text, files))
}

fn is_covered(folded_text: &str, consume: &Consume) -> bool {
    names_slug(folded_text, &fold_case(&consume.slug))
        || consume
            .producer
            .as_deref()
            .is_some_and(|producer| cites_producer_folder(folded_text, &fold_case(producer)))
}

/// Whether `slug` occurs as a whole token: neither neighbour is a word character or `-`.
/// (`[[slug]]` is such an occurrence: `[` and `]` are not token characters.)
fn names_slug(folded_text: &str, folded_slug: &str) -> bool {
    occurrences(folded_text, folded_slug).any(|start| {
        let (before, after) = neighbours(folded_text, start, folded_slug.len());
        !is_token_byte(before) && !is_token_byte(after)
    })
}

/// Whether `producer` occurs as a folder in a path: not preceded by a token character and
/// followed by a separator (`nfr-requirements/`), or preceded by a separator and not followed
/// by a token character (`…/nfr-requirements`).
fn cites_producer_folder(folded_text: &str, folded_producer: &str) -> bool {
    occurrences(folded_text, folded_producer).any(|start| {
        let (before, after) = neighbours(folded_text, start, folded_producer.len());
        (!is_token_byte(before) && is_separator_byte(after))
            || (is_separator_byte(before) && !is_token_byte(after))
    })
}

/// The start of every occurrence of `needle` in `haystack`, overlapping ones included, left
/// to right. Each search resumes one character after the last start, so a boundary that fails
/// for one occurrence cannot hide an overlapping one that passes.
fn occurrences<'text>(
    haystack: &'text str,
    needle: &'text str,
) -> impl Iterator<Item = usize> + 'text {
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let mut from = 0;
    std::iter::from_fn(move || {
        let start = from + haystack.get(from..)?.find(needle)?;
        from = start + step;
        Some(start)
    })
}

/// The bytes either side of the `length` bytes at `start`, where there are any.
fn neighbours(text: &str, start: usize, length: usize) -> (Option<&u8>, Option<&u8>) {
    let bytes = text.as_bytes();
    let before = start.checked_sub(1).and_then(|before| bytes.get(before));
    (before, bytes.get(start + length))
}

/// `[A-Za-z0-9_-]`. A byte of a multi-byte character is never one, as JavaScript's ASCII `\w`.
fn is_token_byte(byte: Option<&u8>) -> bool {
    byte.is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

fn is_separator_byte(byte: Option<&u8>) -> bool {
    matches!(byte, Some(b'/' | b'\\'))
}

/// `text` case-folded without moving any byte: ASCII letters lowered, and any other character
/// whose lower case is one character of the same UTF-8 length lowered too; the rest kept.
fn fold_case(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.chars().map(fold_char).collect()
}

fn fold_char(character: char) -> char {
    if character.is_ascii() {
        return character.to_ascii_lowercase();
    }
    let mut lower = character.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(single), None) if single.len_utf8() == character.len_utf8() => single,
        _ => character,
    }
}

/// A pass with nothing checked: the `reason` says why.
fn vacuous_verdict(slugs: Vec<String>, reason: &str) -> Value {
    coverage_verdict(
        slugs,
        Vec::new(),
        Vec::new(),
        Utf8Path::new(""),
        Some(reason),
    )
}

fn coverage_verdict(
    slugs: Vec<String>,
    unreferenced: Vec<String>,
    files: Vec<String>,
    fired_path: &Utf8Path,
    reason: Option<&str>,
) -> Value {
    let findings_count = unreferenced.len();
    let located: Vec<Finding> = unreferenced
        .iter()
        .map(|slug| {
            Finding::at_file(
                fired_path.as_str(),
                "unreferenced-artifact",
                format!("does not reference the upstream artifact `{slug}`"),
            )
            .with_help(format!(
                "cite `{slug}` (or `[[{slug}]]`, or its producing stage's folder) in one of the stage's deliverables"
            ))
        })
        .collect();
    verdict_json(
        [
            ("pass", Some(json!(unreferenced.is_empty()))),
            ("consumes", Some(Value::from(slugs))),
            ("unreferenced", Some(Value::from(unreferenced))),
            ("scanned_files", Some(Value::from(files))),
            ("reason", reason.map(Value::from)),
            ("findings_count", Some(json!(findings_count))),
        ],
        &located,
    )
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::runtime::sensors::test_support::SensorProject;

    const STAGE_DIR: &str = "aidlc/spaces/default/intents/x/construction/u1/nfr-design";

    /// The coverage verdict of one text for one `--consumes` value.
    /// The shared fixture, with deliverables in `STAGE_DIR`, fired with the dispatcher's argv
    /// for `upstream-coverage`.
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

        /// Write `<STAGE_DIR>/<name>` and return its absolute path.
        fn deliverable(&self, name: &str, text: &str) -> Utf8PathBuf {
            self.write(&format!("{STAGE_DIR}/{name}"), text)
        }

        /// Fire on `fired` the way the dispatcher does.
        fn fire(&self, fired: &Utf8Path, consumes: &str, deliverables: &str) -> String {
            self.verdict_line(&[
                "--stage",
                "nfr-design",
                "--output-path",
                fired.as_str(),
                "--consumes",
                consumes,
                "--deliverables",
                deliverables,
            ])
        }
    }

    fn unreferenced_in(text: &str, consumes: &str) -> Vec<String> {
        let folded = fold_case(&format!("\n{text}"));
        parse_consumes(consumes)
            .into_iter()
            .filter(|consume| !is_covered(&folded, consume))
            .map(|consume| consume.slug)
            .collect()
    }

    fn json_list(paths: &[&Utf8PathBuf]) -> String {
        serde_json::to_string(&paths.iter().map(|p| p.as_str()).collect::<Vec<_>>()).unwrap()
    }

    // --- verdict shapes ------------------------------------------------------------------------

    #[test]
    fn every_consume_cited_passes_with_the_exact_shape() {
        let project = Project::new();
        let fired = project.deliverable(
            "nfr-design-patterns.md",
            "Built from [[business-logic-model]] and `performance-requirements.md`.\n",
        );
        assert_eq!(
            project.fire(
                &fired,
                "business-logic-model:functional-design,performance-requirements:nfr-requirements",
                "nfr-design-patterns,logical-components",
            ),
            format!(
                r#"{{"pass":true,"consumes":["business-logic-model","performance-requirements"],"unreferenced":[],"scanned_files":{},"findings_count":0}}"#,
                json_list(&[&fired])
            )
        );
    }

    #[test]
    fn an_uncited_consume_fails_with_one_finding_each() {
        let project = Project::new();
        let fired = project.deliverable("nfr-design-patterns.md", "Cites tech-stack-decisions.\n");
        assert_eq!(
            project.fire(
                &fired,
                "tech-stack-decisions:nfr-requirements, security-requirements ,reliability-requirements",
                "nfr-design-patterns",
            ),
            format!(
                r#"{{"pass":false,"consumes":["tech-stack-decisions","security-requirements","reliability-requirements"],"unreferenced":["security-requirements","reliability-requirements"],"scanned_files":{},"findings_count":2}}"#,
                json_list(&[&fired])
            )
        );
    }

    #[test]
    fn no_consumes_passes_vacuously_with_reason_no_upstream() {
        let project = Project::new();
        let fired = project.deliverable("a.md", "text\n");
        let expected = r#"{"pass":true,"consumes":[],"unreferenced":[],"scanned_files":[],"reason":"no upstream","findings_count":0}"#;
        assert_eq!(project.fire(&fired, "", "a"), expected);
        assert_eq!(project.fire(&fired, " , :producer, ", "a"), expected);
        assert_eq!(
            project.verdict_line(&["--output-path", fired.as_str()]),
            expected
        );
    }

    #[test]
    fn nothing_on_disk_passes_vacuously_with_reason_no_deliverables_yet() {
        let project = Project::new();
        let fired = project.deliverable("nfr-design-questions.md", "Q1: mentions nothing\n");
        assert_eq!(
            project.fire(
                &fired,
                "business-logic-model:functional-design",
                "nfr-design-patterns"
            ),
            r#"{"pass":true,"consumes":["business-logic-model"],"unreferenced":[],"scanned_files":[],"reason":"no deliverables on disk yet","findings_count":0}"#
        );
    }

    // --- the scan set --------------------------------------------------------------------------

    #[test]
    fn citations_split_across_sibling_deliverables_count_for_the_stage() {
        let project = Project::new();
        let patterns =
            project.deliverable("nfr-design-patterns.md", "Uses business-logic-model.\n");
        let components =
            project.deliverable("logical-components.md", "Meets performance-requirements.\n");
        project.deliverable("unlisted.md", "security-requirements\n");
        assert_eq!(
            project.fire(
                &components,
                "business-logic-model,performance-requirements,security-requirements",
                "nfr-design-patterns,missing-one,logical-components,nfr-design-patterns",
            ),
            format!(
                r#"{{"pass":false,"consumes":["business-logic-model","performance-requirements","security-requirements"],"unreferenced":["security-requirements"],"scanned_files":{},"findings_count":1}}"#,
                json_list(&[&patterns, &components])
            )
        );
    }

    #[test]
    fn a_fired_file_outside_the_deliverables_is_scanned_last() {
        let project = Project::new();
        let patterns = project.deliverable("nfr-design-patterns.md", "nothing\n");
        let extra = project.deliverable("extra-notes.md", "business-logic-model\n");
        assert_eq!(
            project.fire(&extra, "business-logic-model", "nfr-design-patterns"),
            format!(
                r#"{{"pass":true,"consumes":["business-logic-model"],"unreferenced":[],"scanned_files":{},"findings_count":0}}"#,
                json_list(&[&patterns, &extra])
            )
        );
    }

    #[test]
    fn scaffolding_is_not_scanned_as_coverage_z1() {
        let project = Project::new();
        let patterns = project.deliverable("nfr-design-patterns.md", "nothing cited\n");
        for name in [
            "memory.md",
            "nfr-design-questions.md",
            "nfr-design-timestamp.md",
        ] {
            let fired = project.deliverable(name, "business-logic-model\n");
            assert_eq!(
                project.fire(&fired, "business-logic-model", "nfr-design-patterns"),
                format!(
                    r#"{{"pass":false,"consumes":["business-logic-model"],"unreferenced":["business-logic-model"],"scanned_files":{},"findings_count":1}}"#,
                    json_list(&[&patterns])
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn a_scaffolding_file_fired_alone_is_a_vacuous_pass_z1() {
        let project = Project::new();
        let fired = project.deliverable("nfr-design-questions.md", "no citations here\n");
        assert_eq!(
            project.verdict_line(&[
                "--output-path",
                fired.as_str(),
                "--consumes",
                "business-logic-model"
            ]),
            r#"{"pass":true,"consumes":["business-logic-model"],"unreferenced":[],"scanned_files":[],"reason":"no deliverables on disk yet","findings_count":0}"#
        );
    }

    #[test]
    fn without_deliverables_only_the_fired_file_is_scanned() {
        let project = Project::new();
        project.deliverable("sibling.md", "business-logic-model\n");
        let fired = project.deliverable("fired.md", "nothing\n");
        assert_eq!(
            project.verdict_line(&[
                "--output-path",
                fired.as_str(),
                "--consumes",
                "business-logic-model"
            ]),
            format!(
                r#"{{"pass":false,"consumes":["business-logic-model"],"unreferenced":["business-logic-model"],"scanned_files":{},"findings_count":1}}"#,
                json_list(&[&fired])
            )
        );
    }

    #[test]
    fn an_unreadable_sibling_is_skipped() {
        let project = Project::new();
        let fired = project.deliverable("fired.md", "business-logic-model\n");
        std::fs::create_dir_all(project.root().join(STAGE_DIR).join("folder.md")).unwrap();
        assert_eq!(
            project.fire(&fired, "business-logic-model", "folder,fired"),
            format!(
                r#"{{"pass":true,"consumes":["business-logic-model"],"unreferenced":[],"scanned_files":{},"findings_count":0}}"#,
                json_list(&[&fired])
            )
        );
    }

    // --- matching rules ------------------------------------------------------------------------

    #[test]
    fn a_slug_inside_a_longer_hyphenated_name_does_not_count_p5() {
        assert_eq!(
            unreferenced_in("See nfr-requirements and requirements-v2.", "requirements"),
            ["requirements"]
        );
        assert_eq!(
            unreferenced_in("See requirements_x.", "requirements"),
            ["requirements"]
        );
        assert_eq!(
            unreferenced_in("See xrequirements.", "requirements"),
            ["requirements"]
        );
        assert!(unreferenced_in("See requirements.", "requirements").is_empty());
        assert!(unreferenced_in("requirements", "requirements").is_empty());
    }

    #[test]
    fn wikilinks_file_names_and_any_case_count() {
        for text in [
            "[[requirements]]",
            "`requirements.md`",
            "(requirements)",
            "REQUIREMENTS",
            "a/requirements/b",
            "é requirements é",
            "érequirementsé",
        ] {
            assert!(unreferenced_in(text, "requirements").is_empty(), "{text}");
        }
    }

    #[test]
    fn word_characters_are_ascii_only() {
        assert!(unreferenced_in("éunit-modelé", "unit-model").is_empty());
        assert!(unreferenced_in("日本unit-model日本", "unit-model").is_empty());
        assert_eq!(unreferenced_in("unit-model2", "unit-model"), ["unit-model"]);
    }

    #[test]
    fn a_producer_folder_citation_covers_its_artifacts() {
        let consumes = "performance-requirements:nfr-requirements";
        for text in [
            "Provenance: construction/u1/nfr-requirements/",
            "Provenance: nfr-requirements/performance.md",
            "Provenance: construction/u1/nfr-requirements",
            "Provenance: construction/u1/NFR-Requirements.",
            "Provenance: construction\\u1\\nfr-requirements\\",
        ] {
            assert!(unreferenced_in(text, consumes).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_producer_named_outside_a_path_does_not_count() {
        let consumes = "performance-requirements:nfr-requirements";
        for text in [
            "We ran nfr-requirements earlier.",
            "construction/u1/some-nfr-requirements/",
            "construction/u1/nfr-requirements-old",
            "x-nfr-requirements/",
        ] {
            assert_eq!(
                unreferenced_in(text, consumes),
                ["performance-requirements"],
                "{text}"
            );
        }
        assert_eq!(
            unreferenced_in(
                "construction/u1/nfr-requirements/",
                "performance-requirements"
            ),
            ["performance-requirements"]
        );
    }

    #[test]
    fn an_overlapping_occurrence_is_still_found() {
        assert!(unreferenced_in("-x.x.x ", "x.x").is_empty());
        assert!(unreferenced_in("-ab/ab/", "x:ab").is_empty());
    }

    #[test]
    fn consumes_are_split_at_the_first_colon_and_trimmed() {
        assert_eq!(
            parse_consumes(" a : p , b,c:,: q, d:p:r ,"),
            [
                Consume {
                    slug: "a".to_owned(),
                    producer: Some("p".to_owned())
                },
                Consume {
                    slug: "b".to_owned(),
                    producer: None
                },
                Consume {
                    slug: "c".to_owned(),
                    producer: None
                },
                Consume {
                    slug: "d".to_owned(),
                    producer: Some("p:r".to_owned())
                },
            ]
        );
    }

    #[test]
    fn case_folding_keeps_byte_offsets() {
        for text in ["ÀÉÎ straße İstanbul K", "ABC-def_Ω"] {
            assert_eq!(fold_case(text).len(), text.len(), "{text}");
        }
        assert_eq!(fold_case("ÉCOLE-Ω"), "école-ω");
    }

    // --- flags and errors ----------------------------------------------------------------------

    #[test]
    fn a_missing_output_path_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--consumes", "a"]),
            "--output-path is required"
        );
    }

    #[test]
    fn an_output_path_that_does_not_exist_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--output-path", "nowhere.md", "--consumes", ""]),
            "--output-path not found: nowhere.md"
        );
    }

    #[test]
    fn an_unreadable_fired_file_is_a_usage_error() {
        let project = Project::new();
        let folder = project.root().join(STAGE_DIR).join("folder.md");
        std::fs::create_dir_all(&folder).unwrap();
        let message = project.usage_error(&["--output-path", folder.as_str(), "--consumes", "a"]);
        assert!(
            message.starts_with(&format!("failed to read --output-path {folder}: ")),
            "{message}"
        );
    }

    #[test]
    fn a_flag_without_a_value_is_a_usage_error_f9() {
        let project = Project::new();
        let fired = project.deliverable("a.md", "x\n");
        assert_eq!(
            project.usage_error(&["--output-path", fired.as_str(), "--consumes"]),
            "--consumes expects a value, got end of arguments."
        );
        assert_eq!(
            project.usage_error(&[
                "--consumes",
                "--deliverables",
                "a",
                "--output-path",
                fired.as_str()
            ]),
            "--consumes expects a value, got another flag: \"--deliverables\"."
        );
    }

    // --- paths ---------------------------------------------------------------------------------

    #[test]
    fn windows_style_paths_work() {
        let project = Project::new();
        let patterns = project.deliverable("nfr-design-patterns.md", "business-logic-model\n");
        let fired = project.deliverable("logical-components.md", "nothing\n");
        let relative = format!("{STAGE_DIR}\\.\\logical-components.md").replace('/', "\\");
        assert_eq!(
            project.verdict_line(&[
                "--output-path",
                &relative,
                "--consumes",
                "business-logic-model",
                "--deliverables",
                "nfr-design-patterns,logical-components",
            ]),
            format!(
                r#"{{"pass":true,"consumes":["business-logic-model"],"unreferenced":[],"scanned_files":{},"findings_count":0}}"#,
                json_list(&[&patterns, &fired])
            )
        );
        let absolute = fired.as_str().replace('/', "\\");
        assert!(
            project
                .fire(
                    Utf8Path::new(&absolute),
                    "business-logic-model",
                    "nfr-design-patterns"
                )
                .starts_with(r#"{"pass":true,"#)
        );
    }

    // --- scale ---------------------------------------------------------------------------------

    #[test]
    fn a_200_kb_stage_output_is_scanned_in_one_pass_per_consume() {
        let project = Project::new();
        let line = "requirements-x nfr-requirements a-requirements requirementsy _requirements\n";
        let mut text = line.repeat(200 * 1024 / line.len());
        text.push_str("the end cites construction/u1/functional-design/\n");
        let fired = project.deliverable("nfr-design-patterns.md", &text);
        assert_eq!(
            project.fire(
                &fired,
                "requirements:nfr-requirements,business-logic-model:functional-design",
                "nfr-design-patterns",
            ),
            format!(
                r#"{{"pass":false,"consumes":["requirements","business-logic-model"],"unreferenced":["requirements"],"scanned_files":{},"findings_count":1}}"#,
                json_list(&[&fired])
            )
        );
    }
}
