//! Where a stage's declared outputs can be written: one pure function over the stage's fields,
//! so that the compile (a gate-fired binding that can never fire) and the gate (the same check
//! at run time) ask the same question the same way.
//!
//! The layout is the runtime's (D11, D30), relative to the project folder, with
//! `<record>` = `aidlc/spaces/<space>/intents/<YYMMDD-label>`:
//! - `reverse-engineering` writes under `aidlc/spaces/<space>/codekb/<repo>/`;
//! - a per-unit stage (`for_each: unit-of-work`) writes under `<record>/construction/<slug>/`
//!   (stage-level), `<record>/construction/<unit>/<slug>/` or
//!   `<record>/construction/units/<unit>/<slug>/`;
//! - any other stage writes under `<record>/<phase>/<slug>/`.
//!
//! The file names are `produces ∪ optional_produces` with `.md` added, except `traceability`,
//! which is `traceability.json`; markers (`*-questions`, `*-timestamp`) are outputs too, and
//! [`is_marker_artifact`] is the one rule that names them (a template never applies to one, and
//! a whole-stage sensor neither fires on nor reads one).
//!
//! Invariant: pure. No file system, no environment, no salsa; the caller says which space and
//! record to place the paths in ([`FolderNames::REPRESENTATIVE`] when it knows neither).

use camino::{Utf8Path, Utf8PathBuf};

/// The slug of the one stage that writes into the space's code knowledge base.
pub const CODEKB_STAGE: &str = "reverse-engineering";

/// The fields of a stage that decide where its outputs go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageOutputs<'a> {
    pub slug: &'a str,
    pub phase: &'a str,
    pub for_each: Option<&'a str>,
    /// `produces` then `optional_produces`, as authored (empty names and repeats are ignored).
    pub artifacts: Vec<&'a str>,
}

/// The names of the workspace folders the paths are placed in (the space, the intent record, the unit, the repository), relative to the project folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FolderNames<'a> {
    /// The space's name: its folder is `aidlc/spaces/<space>`.
    pub space: &'a str,
    /// The intent record folder, e.g. `aidlc/spaces/default/intents/260101-intent`.
    pub record: &'a str,
    /// The name used for a unit of work's folder.
    pub unit: &'a str,
    /// The name used for a code repository's folder under `codekb/`.
    pub repo: &'a str,
}

impl FolderNames<'static> {
    /// Example names for a check that knows no real space, record, unit or repository (the
    /// compile): the default space and names shaped like the real ones.
    pub const REPRESENTATIVE: FolderNames<'static> = FolderNames {
        space: "default",
        record: "aidlc/spaces/default/intents/260101-intent",
        unit: "unit",
        repo: "repo",
    };
}

/// The file name an artifact is written to.
pub fn artifact_file_name(artifact: &str) -> String {
    if artifact == "traceability" {
        "traceability.json".to_owned()
    } else {
        format!("{artifact}.md")
    }
}

/// Whether an artifact (a name in `produces`, or a file stem) is a marker: the `*-questions`
/// and `*-timestamp` files a stage writes beside its deliverables, which are not meant to have
/// a deliverable's shape.
pub fn is_marker_artifact(artifact: &str) -> bool {
    artifact.ends_with("-questions") || artifact.ends_with("-timestamp")
}

/// Whether a file name is scaffolding a stage writes beside its deliverables rather than stage
/// output: its `memory.md`, or a Markdown marker (`<marker>.md`).
pub fn is_scaffolding_file_name(file_name: &str) -> bool {
    file_name == "memory.md"
        || file_name
            .strip_suffix(".md")
            .is_some_and(is_marker_artifact)
}

/// The stage's declared output file names, first occurrence of each, in authored order.
pub fn declared_output_file_names(stage: &StageOutputs<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for artifact in stage.artifacts.iter().filter(|name| !name.is_empty()) {
        let name = artifact_file_name(artifact);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// One folder per kind of place the stage writes to, in the order the runtime looks.
pub fn output_folders(stage: &StageOutputs<'_>, folders: &FolderNames<'_>) -> Vec<Utf8PathBuf> {
    let record = Utf8Path::new(folders.record);
    if stage.slug == CODEKB_STAGE {
        return vec![
            Utf8PathBuf::from("aidlc/spaces")
                .join(folders.space)
                .join("codekb")
                .join(folders.repo),
        ];
    }
    if stage.for_each == Some("unit-of-work") {
        let construction = record.join("construction");
        return vec![
            construction.join(stage.slug),
            construction.join(folders.unit).join(stage.slug),
            construction
                .join("units")
                .join(folders.unit)
                .join(stage.slug),
        ];
    }
    vec![record.join(stage.phase).join(stage.slug)]
}

/// Every path a declared output of the stage can have: each output folder × each declared
/// file name, project-relative with `/` separators. Empty when the stage declares no outputs.
pub fn declared_output_paths(
    stage: &StageOutputs<'_>,
    folders: &FolderNames<'_>,
) -> Vec<Utf8PathBuf> {
    let names = declared_output_file_names(stage);
    output_folders(stage, folders)
        .iter()
        .flat_map(|folder| names.iter().map(move |name| folder.join(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_the_questions_and_timestamp_artifacts() {
        for marker in ["intent-capture-questions", "x-timestamp", "-questions"] {
            assert!(is_marker_artifact(marker), "{marker}");
        }
        for artifact in [
            "questions",
            "intent-statement",
            "x-questions.md",
            "x-questions-v2",
        ] {
            assert!(!is_marker_artifact(artifact), "{artifact}");
        }
        for name in ["memory.md", "a-questions.md", "a-timestamp.md"] {
            assert!(is_scaffolding_file_name(name), "{name}");
        }
        for name in [
            "a-questions.MD",
            "a-questions.txt",
            "memory.markdown",
            "a.md",
        ] {
            assert!(!is_scaffolding_file_name(name), "{name}");
        }
    }

    fn paths(stage: &StageOutputs<'_>) -> Vec<String> {
        declared_output_paths(stage, &FolderNames::REPRESENTATIVE)
            .into_iter()
            .map(Utf8PathBuf::into_string)
            .collect()
    }

    #[test]
    fn a_plain_stage_writes_under_its_phase_in_the_record() {
        let stage = StageOutputs {
            slug: "requirements-analysis",
            phase: "inception",
            for_each: None,
            artifacts: vec!["requirements", "requirements-analysis-questions", ""],
        };
        assert_eq!(
            paths(&stage),
            [
                "aidlc/spaces/default/intents/260101-intent/inception/requirements-analysis/requirements.md",
                "aidlc/spaces/default/intents/260101-intent/inception/requirements-analysis/requirements-analysis-questions.md",
            ]
        );
    }

    #[test]
    fn traceability_is_json_and_repeats_are_dropped() {
        let stage = StageOutputs {
            slug: "domain-design",
            phase: "inception",
            for_each: None,
            artifacts: vec!["traceability", "components", "traceability"],
        };
        assert_eq!(
            declared_output_file_names(&stage),
            ["traceability.json", "components.md"]
        );
    }

    #[test]
    fn a_per_unit_stage_writes_in_three_places_under_construction() {
        let stage = StageOutputs {
            slug: "functional-design",
            phase: "construction",
            for_each: Some("unit-of-work"),
            artifacts: vec!["entities"],
        };
        assert_eq!(
            paths(&stage),
            [
                "aidlc/spaces/default/intents/260101-intent/construction/functional-design/entities.md",
                "aidlc/spaces/default/intents/260101-intent/construction/unit/functional-design/entities.md",
                "aidlc/spaces/default/intents/260101-intent/construction/units/unit/functional-design/entities.md",
            ]
        );
    }

    #[test]
    fn reverse_engineering_writes_into_the_space_codekb() {
        let stage = StageOutputs {
            slug: CODEKB_STAGE,
            phase: "inception",
            for_each: None,
            artifacts: vec!["architecture"],
        };
        let workspace = FolderNames {
            space: "team",
            record: "aidlc/spaces/team/intents/250301-x",
            unit: "u",
            repo: "api",
        };
        assert_eq!(
            declared_output_paths(&stage, &workspace),
            [Utf8PathBuf::from(
                "aidlc/spaces/team/codekb/api/architecture.md"
            )]
        );
    }

    #[test]
    fn no_declared_outputs_means_no_paths() {
        let stage = StageOutputs {
            slug: "workspace-scaffold",
            phase: "initialization",
            for_each: None,
            artifacts: Vec::new(),
        };
        assert!(paths(&stage).is_empty());
    }
}
