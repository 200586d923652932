//! The example intent that `aidlc init --example` writes on top of the default framework, so
//! that a new user's first `aidlc gate check` has real deliverables to judge.
//!
//! The example is a small guest-checkout feature: one intent record (`<YYMMDD>-example-checkout`)
//! holding deliverables of three default stages, written so that the native checks give mixed
//! results. With the default framework's stages and sensors:
//!
//! - `ideation/intent-capture/intent-statement.md`: `required-sections` passes (five H2s),
//!   `upstream-coverage` passes (the stage consumes nothing);
//! - `inception/requirements-analysis/requirements.md`: both pass (four H2s; it cites
//!   `intent-statement`);
//! - `inception/user-stories/personas.md`: `required-sections` passes (two H2s),
//!   `upstream-coverage` fails (no `user-stories` deliverable cites `requirements`);
//! - `inception/user-stories/stories.md`: both fail (one H2, the stories being H3s; and the
//!   same missing citation).
//!
//! The stages' other gate sensors, `claim-sources` (intent-capture) and `traceability`
//! (user-stories), have no native check yet, so they are reported as not evaluated.
//!
//! The state names `user-stories` as the current stage. The texts live in
//! `src/runtime/workspace/example_intent_texts/` under the same record-relative paths.
//!
//! Invariant: an example intent that already exists (any record named
//! `<6 digits>-example-checkout` in the active space) is left exactly as it is.

use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};

use crate::harness::Harness;
use crate::leaves::fs_util::contained::{ContainedWriteError, FileError};
use crate::runtime::workspace::{self, CreatedIntent, WorkspaceError};

/// The example intent's label; its record folder is `<YYMMDD>-example-checkout`.
pub const EXAMPLE_INTENT_LABEL: &str = "example-checkout";

/// The stage the example's state names as current: the one whose deliverables fail.
pub const EXAMPLE_CURRENT_STAGE: &str = "user-stories";

/// One deliverable of the example, at `<record>/<phase>/<stage>/<artifact>.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExampleDeliverable {
    pub phase: &'static str,
    pub stage: &'static str,
    /// An artifact the stage `produces`; the file name is the artifact name plus `.md`.
    pub artifact: &'static str,
    pub contents: &'static str,
}

impl ExampleDeliverable {
    /// `<phase>/<stage>/<artifact>.md`, relative to the record folder.
    pub fn record_path(&self) -> Utf8PathBuf {
        Utf8Path::new(self.phase)
            .join(self.stage)
            .join(format!("{}.md", self.artifact))
    }
}

/// The example's texts, at their record-relative paths `<phase>/<stage>/<artifact>.md`, UTF-8,
/// and nothing else (a malformed entry panics in the unit test that lists them).
static EXAMPLE_TEXTS: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/src/runtime/workspace/example_intent_texts");

/// The example's deliverables, in stage order (their paths sort so).
pub fn example_deliverables() -> Vec<ExampleDeliverable> {
    let mut deliverables: Vec<ExampleDeliverable> = EXAMPLE_TEXTS
        .dirs()
        .flat_map(include_dir::Dir::dirs)
        .flat_map(include_dir::Dir::files)
        .map(|file| {
            const SHAPE: &str = "an example text is UTF-8 at <phase>/<stage>/<artifact>.md";
            let path = Utf8Path::from_path(file.path()).expect(SHAPE);
            let mut folders = path.iter();
            ExampleDeliverable {
                phase: folders.next().expect(SHAPE),
                stage: folders.next().expect(SHAPE),
                artifact: path.file_stem().expect(SHAPE),
                contents: file.contents_utf8().expect(SHAPE),
            }
        })
        .collect();
    deliverables.sort_by_key(ExampleDeliverable::record_path);
    deliverables
}

/// What [`write_example`] did, with project-relative paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleReport {
    /// The example intent record.
    pub record: Utf8PathBuf,
    /// Whether this call created the record; `false` when an example intent was already there.
    pub created: bool,
    /// Files written: the state, the registry, the cursor and the deliverables.
    pub written: Vec<Utf8PathBuf>,
    /// What was left alone: the existing record, when there was one.
    pub skipped: Vec<Utf8PathBuf>,
}

/// Why the example could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExampleError {
    #[error(
        "the example needs the default framework's stage {path}, which is missing; run `aidlc init` to restore it"
    )]
    StageMissing { path: Utf8PathBuf },
    #[error(transparent)]
    Intent(#[from] WorkspaceError),
    #[error(transparent)]
    Write(#[from] FileError),
}

/// Write the example intent into `project_dir`, whose default framework (`init_project`) is
/// already installed for `harness`: the record, its deliverables, and `Current Stage:
/// user-stories` in its state. The new record becomes the active intent; an existing one is
/// reported in [`ExampleReport::skipped`].
pub fn write_example(
    project_dir: &Utf8Path,
    harness: Harness,
    now: SystemTime,
) -> Result<ExampleReport, ExampleError> {
    check_example_stages_installed(project_dir, harness)?;
    let space = workspace::active_space(project_dir);
    if let Some(existing) = existing_example_record(project_dir, &space) {
        let record = project_relative(project_dir, &existing);
        return Ok(ExampleReport {
            record: record.clone(),
            created: false,
            written: Vec::new(),
            skipped: vec![record],
        });
    }
    let intent = workspace::create_intent(
        project_dir,
        EXAMPLE_INTENT_LABEL,
        Some(EXAMPLE_CURRENT_STAGE),
        now,
    )?;
    let mut written: Vec<Utf8PathBuf> = intent_files(project_dir, &space, &intent)
        .iter()
        .map(|path| project_relative(project_dir, path))
        .collect();
    for deliverable in example_deliverables() {
        let path = intent.record.join(deliverable.record_path());
        write_example_file(project_dir, &path, deliverable.contents.as_bytes())
            .map_err(|source| FileError::io("write", &path, source))?;
        written.push(project_relative(project_dir, &path));
    }
    Ok(ExampleReport {
        record: project_relative(project_dir, &intent.record),
        created: true,
        written,
        skipped: Vec::new(),
    })
}

/// The stage definition file of every stage the example writes for (or names as current), as
/// `init_project` installs it: `<harness dir>/aidlc-common/stages/<phase>/<stage>.md`.
pub fn example_stage_files(harness: Harness) -> Vec<Utf8PathBuf> {
    let mut files: Vec<Utf8PathBuf> = example_deliverables()
        .iter()
        .map(|deliverable| {
            Utf8Path::new(harness.dir_name())
                .join("aidlc-common/stages")
                .join(deliverable.phase)
                .join(format!("{}.md", deliverable.stage))
        })
        .collect();
    files.dedup();
    files
}

/// Invariant kept: every example deliverable belongs to a stage the project defines, so the
/// gate has a stage to judge it by. Checked before anything is written.
fn check_example_stages_installed(
    project_dir: &Utf8Path,
    harness: Harness,
) -> Result<(), ExampleError> {
    for relative in example_stage_files(harness) {
        let path = project_dir.join(relative);
        if !path.is_file() {
            return Err(ExampleError::StageMissing { path });
        }
    }
    Ok(())
}

/// A record of the space named `<6 digits>-example-checkout`, whatever day it was made.
fn existing_example_record(project_dir: &Utf8Path, space: &str) -> Option<Utf8PathBuf> {
    workspace::intent_records(project_dir, space)
        .into_iter()
        .find(|record| record.file_name().is_some_and(is_example_folder_name))
}

fn is_example_folder_name(name: &str) -> bool {
    name.split_once('-').is_some_and(|(date, label)| {
        date.len() == 6 && date.bytes().all(|b| b.is_ascii_digit()) && label == EXAMPLE_INTENT_LABEL
    })
}

/// The files [`workspace::create_intent`] wrote for `intent`.
fn intent_files(project_dir: &Utf8Path, space: &str, intent: &CreatedIntent) -> [Utf8PathBuf; 3] {
    let intents_dir = workspace::intents_dir(project_dir, space);
    [
        workspace::state_file_path(&intent.record),
        intents_dir.join(workspace::INTENT_REGISTRY_FILE),
        intents_dir.join(workspace::ACTIVE_INTENT_CURSOR_FILE),
    ]
}

/// Write `bytes` at `path`, inside `project_dir`, through the file-system layer.
fn write_example_file(
    project_dir: &Utf8Path,
    path: &Utf8Path,
    bytes: &[u8],
) -> std::io::Result<()> {
    use crate::leaves::fs_util::contained::{self, ProjectPath};
    let contained =
        ProjectPath::of_absolute(project_dir, path).map_err(ContainedWriteError::Refused)?;
    contained::write_file(&contained, bytes, crate::leaves::fs_util::Flush::Yes).map_err(Into::into)
}

fn project_relative(project_dir: &Utf8Path, path: &Utf8Path) -> Utf8PathBuf {
    path.strip_prefix(project_dir)
        .map_or_else(|_| path.to_owned(), Utf8Path::to_owned)
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use serde_json::Value;

    use super::*;
    use crate::compile::framework::{DEFAULT_FRAMEWORK, InstallRoot, init_project};
    use crate::compile::syntax::stage::{StageDefinition, parse_stage};
    use crate::protocol::output_paths::is_marker_artifact;
    use crate::protocol::worker_outcome::WorkerOutcome;
    use crate::runtime::sensors::descriptor::WorkerContext;
    use crate::runtime::sensors::native_check;

    /// 2026-09-04T15:30:00Z.
    fn fixed_now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_788_535_800)
    }

    fn initialised_project() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().join("project")).unwrap();
        init_project(&project, Harness::Claude, false).unwrap();
        (dir, project)
    }

    /// Every stage of the default framework, parsed from the embedded files.
    fn default_stages() -> Vec<StageDefinition> {
        DEFAULT_FRAMEWORK
            .iter()
            .filter(|file| {
                file.root == InstallRoot::Harness && file.path.starts_with("aidlc-common/stages/")
            })
            .map(|file| {
                let (definition, diagnostics) =
                    parse_stage(file.contents, Utf8Path::new(file.path));
                definition.unwrap_or_else(|| panic!("{}: {diagnostics:?}", file.path))
            })
            .collect()
    }

    fn stage<'a>(stages: &'a [StageDefinition], slug: &str) -> &'a StageDefinition {
        stages.iter().find(|s| s.slug.value == slug).unwrap()
    }

    /// `produces ∪ optional_produces` without `*-questions` and `*-timestamp`, as the dispatcher
    /// passes to `--template-eligible` and `--deliverables`.
    fn template_eligible(definition: &StageDefinition) -> String {
        definition
            .produces
            .iter()
            .map(|p| p.value.clone())
            .chain(definition.optional_produces.clone().unwrap_or_default())
            .filter(|n| !is_marker_artifact(n))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The consumed artifacts present in the record, as `artifact:producer` (the dispatcher's
    /// `present_consumes` for stages whose producers write under `<record>/<phase>/<slug>/`).
    fn present_consumes(
        stages: &[StageDefinition],
        definition: &StageDefinition,
        record: &Utf8Path,
    ) -> String {
        definition
            .consumes
            .iter()
            .filter_map(|consume| {
                let artifact = &consume.artifact.value;
                let Some(producer) = stages
                    .iter()
                    .find(|s| s.produces.iter().any(|p| &p.value == artifact))
                else {
                    return Some(artifact.clone());
                };
                let file = record
                    .join(&producer.phase.value)
                    .join(&producer.slug.value)
                    .join(format!("{artifact}.md"));
                file.is_file()
                    .then(|| format!("{artifact}:{}", producer.slug.value))
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The worker argv the dispatcher builds (`worker_args` in `dispatch::fire`).
    fn worker_args(
        project: &Utf8Path,
        stages: &[StageDefinition],
        definition: &StageDefinition,
        record: &Utf8Path,
        sensor: &str,
        output_path: &Utf8Path,
    ) -> Vec<String> {
        let mut args = vec![
            "--stage".to_owned(),
            definition.slug.value.clone(),
            "--output-path".to_owned(),
            output_path.to_string(),
        ];
        match sensor {
            "upstream-coverage" => args.extend([
                "--consumes".to_owned(),
                present_consumes(stages, definition, record),
                "--deliverables".to_owned(),
                template_eligible(definition),
            ]),
            "required-sections" => args.extend([
                "--templates-dir".to_owned(),
                project
                    .join("aidlc/spaces/default/memory/templates")
                    .to_string(),
                "--template-eligible".to_owned(),
                template_eligible(definition),
                "--framework-templates-dir".to_owned(),
                project.join(".claude/tools/data/templates").to_string(),
            ]),
            other => panic!("no argv for {other}"),
        }
        args
    }

    /// `(artifact, sensor) → pass` for every native sensor of every example deliverable.
    fn native_verdicts(project: &Utf8Path, record: &Utf8Path) -> BTreeMap<(String, String), bool> {
        let stages = default_stages();
        let context = WorkerContext {
            project_dir: project.to_owned(),
            timeout: Duration::from_secs(30),
        };
        let mut verdicts = BTreeMap::new();
        for deliverable in example_deliverables() {
            let definition = stage(&stages, deliverable.stage);
            let output_path = record.join(deliverable.record_path());
            // The table below is about the two document checks the example is designed around.
            let document_checks = definition.sensors.iter().filter(|sensor| {
                ["required-sections", "upstream-coverage"].contains(&sensor.value.as_str())
            });
            for sensor in document_checks {
                let Some(check) = native_check(&sensor.value) else {
                    continue;
                };
                let args = worker_args(
                    project,
                    &stages,
                    definition,
                    record,
                    &sensor.value,
                    &output_path,
                );
                let WorkerOutcome::Verdict(json) = check(&args, &context) else {
                    panic!("{} on {output_path}: not a verdict", sensor.value);
                };
                let pass = json.get("pass").and_then(Value::as_bool).unwrap();
                verdicts.insert(
                    (deliverable.artifact.to_owned(), sensor.value.clone()),
                    pass,
                );
            }
        }
        verdicts
    }

    #[test]
    fn every_deliverable_is_an_artifact_its_stage_produces() {
        let shallow_files = EXAMPLE_TEXTS.files().count()
            + EXAMPLE_TEXTS
                .dirs()
                .map(|phase| phase.files().count())
                .sum::<usize>();
        let deep_folders: usize = EXAMPLE_TEXTS
            .dirs()
            .flat_map(include_dir::Dir::dirs)
            .map(|stage| stage.dirs().count())
            .sum();
        assert_eq!(
            (shallow_files, deep_folders),
            (0, 0),
            "every text is at depth three"
        );
        let paths: Vec<Utf8PathBuf> = example_deliverables()
            .iter()
            .map(ExampleDeliverable::record_path)
            .collect();
        assert_eq!(
            paths,
            [
                "ideation/intent-capture/intent-statement.md",
                "inception/requirements-analysis/requirements.md",
                "inception/user-stories/personas.md",
                "inception/user-stories/stories.md",
            ]
        );
        let stages = default_stages();
        for deliverable in example_deliverables() {
            let definition = stage(&stages, deliverable.stage);
            assert_eq!(definition.phase.value, deliverable.phase);
            assert!(
                definition
                    .produces
                    .iter()
                    .any(|p| p.value == deliverable.artifact),
                "{} does not produce {}",
                deliverable.stage,
                deliverable.artifact
            );
        }
        assert!(
            example_deliverables()
                .iter()
                .any(|d| d.stage == EXAMPLE_CURRENT_STAGE)
        );
    }

    #[test]
    fn the_example_writes_its_record_and_names_the_current_stage() {
        let (_dir, project) = initialised_project();
        let report = write_example(&project, Harness::Claude, fixed_now()).unwrap();
        let record_relative =
            Utf8PathBuf::from("aidlc/spaces/default/intents/260904-example-checkout");
        assert_eq!(report.record, record_relative);
        assert!(report.created);
        assert!(report.skipped.is_empty());
        let mut expected = vec![
            record_relative.join("aidlc-state.md"),
            Utf8PathBuf::from("aidlc/spaces/default/intents/intents.json"),
            Utf8PathBuf::from("aidlc/spaces/default/intents/active-intent"),
        ];
        expected.extend(
            example_deliverables()
                .iter()
                .map(|d| record_relative.join(d.record_path())),
        );
        assert_eq!(report.written, expected);
        for path in &report.written {
            assert!(project.join(path).is_file(), "{path}");
        }
        for deliverable in example_deliverables() {
            let text = std::fs::read_to_string(
                project
                    .join(&record_relative)
                    .join(deliverable.record_path()),
            )
            .unwrap();
            assert_eq!(text, deliverable.contents);
        }

        let record = workspace::record_root(&project);
        assert_eq!(record, project.join(&record_relative));
        let state = workspace::read_state_text(&record).unwrap();
        assert_eq!(
            workspace::current_stage(&state).as_deref(),
            Some(EXAMPLE_CURRENT_STAGE)
        );
        assert_eq!(
            crate::runtime::workspace::test_support::active_stage(&record).as_deref(),
            Some(EXAMPLE_CURRENT_STAGE)
        );
        assert_eq!(
            workspace::read_state_field(&state, "State Version").as_deref(),
            Some("8")
        );
    }

    #[test]
    fn the_native_checks_give_mixed_results_on_the_example() {
        let (_dir, project) = initialised_project();
        write_example(&project, Harness::Claude, fixed_now()).unwrap();
        let record = workspace::record_root(&project);
        let verdicts = native_verdicts(&project, &record);
        let expected: BTreeMap<(String, String), bool> = [
            ("intent-statement", "required-sections", true),
            ("intent-statement", "upstream-coverage", true),
            ("requirements", "required-sections", true),
            ("requirements", "upstream-coverage", true),
            ("personas", "required-sections", true),
            ("personas", "upstream-coverage", false),
            ("stories", "required-sections", false),
            ("stories", "upstream-coverage", false),
        ]
        .into_iter()
        .map(|(artifact, sensor, pass)| ((artifact.to_owned(), sensor.to_owned()), pass))
        .collect();
        assert_eq!(verdicts, expected);
    }

    #[test]
    fn an_existing_example_intent_is_left_alone() {
        let (_dir, project) = initialised_project();
        let first = write_example(&project, Harness::Claude, fixed_now()).unwrap();
        let stories = project
            .join(&first.record)
            .join("inception/user-stories/stories.md");
        std::fs::write(&stories, "# edited by hand\n").unwrap();
        let next_week = fixed_now() + Duration::from_secs(7 * 86_400);
        let second = write_example(&project, Harness::Claude, next_week).unwrap();
        assert_eq!(
            second,
            ExampleReport {
                record: first.record.clone(),
                created: false,
                written: Vec::new(),
                skipped: vec![first.record],
            }
        );
        assert_eq!(
            std::fs::read_to_string(&stories).unwrap(),
            "# edited by hand\n"
        );
        assert_eq!(
            workspace::intent_records(&project, "default").len(),
            1,
            "no second example record"
        );
    }

    #[test]
    fn the_example_joins_the_intents_already_there() {
        let (_dir, project) = initialised_project();
        let other =
            workspace::create_intent(&project, "search-filters", None, fixed_now()).unwrap();
        let report = write_example(&project, Harness::Claude, fixed_now()).unwrap();
        assert!(report.created);
        let records = workspace::intent_records(&project, "default");
        assert_eq!(records.len(), 2);
        assert!(records.contains(&other.record));
        assert_eq!(
            workspace::record_root(&project),
            project.join(&report.record),
            "the example becomes the active intent"
        );
    }

    #[test]
    fn a_missing_stage_stops_the_example_before_anything_is_written() {
        let (_dir, project) = initialised_project();
        let removed = project.join(".claude/aidlc-common/stages/inception/user-stories.md");
        std::fs::remove_file(&removed).unwrap();
        let error = write_example(&project, Harness::Claude, fixed_now()).unwrap_err();
        assert!(
            matches!(error, ExampleError::StageMissing { ref path } if *path == removed),
            "{error}"
        );
        assert!(!project.join("aidlc/spaces/default/intents").exists());
    }

    #[test]
    fn example_folder_names_are_recognised_on_any_date() {
        assert!(is_example_folder_name("260904-example-checkout"));
        assert!(is_example_folder_name("991231-example-checkout"));
        assert!(!is_example_folder_name("260904-example-checkout-2"));
        assert!(!is_example_folder_name("2609-example-checkout"));
        assert!(!is_example_folder_name("example-checkout-0190aaaa"));
    }
}
