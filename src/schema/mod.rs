//! `aidlc schema manifest|stage|gate-report`: JSON Schemas (draft 2020-12) of the documents
//! people write and the report tools read, for editors (yaml-language-server reads a stage's or
//! a manifest's frontmatter against them) and for CI scripts.
//!
//! The manifest and stage schemas are derived from the parser's own types
//! ([`SensorManifest`], [`StageDefinition`]), whose field doc comments are the descriptions
//! and whose allowed values are the parser's constants (see `syntax::field_schema`); the
//! gate-report schema from the document `gate check --format json` prints ([`GateDocument`],
//! with `report::json_schema`'s mirrors of the report's own values). Pure: each function
//! returns the schema as a value.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

use crate::compile::syntax::manifest::SensorManifest;
use crate::compile::syntax::stage::StageDefinition;
use crate::report::json::GateDocument;

/// The documents `aidlc schema` describes.
//
// No doc comments on the variants: clap would show them as the values' help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaKind {
    Manifest,
    Stage,
    GateReport,
}

/// The schema of `kind` (draft 2020-12), with its `$schema`, title and descriptions.
pub fn schema_of(kind: SchemaKind) -> Schema {
    match kind {
        SchemaKind::Manifest => root_schema::<SensorManifest>(),
        SchemaKind::Stage => root_schema::<StageDefinition>(),
        SchemaKind::GateReport => root_schema::<GateDocument<'static>>(),
    }
}

/// The schema of `kind` as pretty-printed JSON (no trailing newline; the printer adds one).
pub fn schema_text(kind: SchemaKind) -> String {
    serde_json::to_string_pretty(&schema_of(kind)).expect("a schema always serialises")
}

fn root_schema<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use camino::Utf8Path;
    use serde_json::{Value, json};

    use super::*;
    use crate::compile::syntax::document::keys_read;

    /// The frontmatter of `text` as JSON, as an editor's YAML reader sees it.
    fn frontmatter_json(text: &str) -> Result<Value, String> {
        let fences =
            crate::compile::syntax::frontmatter::split(text).map_err(|e| format!("{e:?}"))?;
        serde_saphyr::from_str(&text[fences.yaml]).map_err(|e| e.to_string())
    }

    fn properties(kind: SchemaKind) -> BTreeSet<String> {
        schema_of(kind)
            .get("properties")
            .and_then(Value::as_object)
            .expect("an object schema")
            .keys()
            .cloned()
            .collect()
    }

    fn validator(kind: SchemaKind) -> jsonschema::Validator {
        jsonschema::draft202012::new(&schema_of(kind).to_value()).expect("a valid schema")
    }

    fn errors(kind: SchemaKind, instance: &Value) -> Vec<String> {
        validator(kind)
            .iter_errors(instance)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect()
    }

    /// A manifest with every field the parser knows, and a stage likewise.
    const FULL_MANIFEST: &str = "---\nid: demo\nkind: deterministic\ncommand: sh check.sh\ndefault_severity: blocking\nfire_on: gate\ndescription: A demo\ncategory: demo\nmatches: \"**/*.md\"\ninput_schema:\n  file_path: string\ntimeout_seconds: 30\n---\n";
    const FULL_STAGE: &str = "---\nslug: demo-stage\nnumber: \"2.1\"\nname: Demo\nplugin: demo\nphase: inception\nexecution: CONDITIONAL\ncondition: When asked\nlead_agent: aidlc-demo-agent\nsupport_agents: [aidlc-helper-agent]\nmode: pipeline\nfor_each: unit-of-work\nworkspace_requires: true\nproduces: [demo-doc]\noptional_produces: [demo-extra]\nproduces_kinds:\n  demo-doc: [service]\nconsumes:\n  - artifact: intent-statement\n    required: true\n    conditional_on: brownfield\nrequires_stage: [intent-capture]\nsensors: [required-sections]\nscopes: [feature]\nreviewer: aidlc-review-agent\nreview_artifact: demo-review\nreviewer_max_iterations: 2\nreview_class: adversarial\nsummary_confirmation: required\nwhen:\n  producer-in-plan: intent-statement\nrequired_sections: [Scope]\ninputs: Reads things\noutputs: Writes things\n---\n";

    #[test]
    fn every_key_the_manifest_parser_reads_is_in_the_schema() {
        let (
            read,
            crate::compile::syntax::manifest::ParsedManifest {
                manifest,
                diagnostics,
                ..
            },
        ) = keys_read(|| {
            crate::compile::syntax::manifest::parse_manifest(
                FULL_MANIFEST,
                Utf8Path::new("aidlc-demo.md"),
                "demo",
            )
        });
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(manifest.is_some());
        let schema_keys = properties(SchemaKind::Manifest);
        let missing: Vec<&String> = read.difference(&schema_keys).collect();
        assert!(
            missing.is_empty(),
            "read but not in the schema: {missing:?}"
        );
        assert_eq!(read, schema_keys, "the schema describes keys nothing reads");
    }

    #[test]
    fn every_key_the_stage_parser_reads_or_accepts_is_in_the_schema() {
        let (read, (stage, diagnostics)) = keys_read(|| {
            crate::compile::syntax::stage::parse_stage(FULL_STAGE, Utf8Path::new("demo-stage.md"))
        });
        let errors: Vec<_> = diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert!(stage.is_some());
        let schema_keys = properties(SchemaKind::Stage);
        let missing: Vec<&String> = read.difference(&schema_keys).collect();
        assert!(
            missing.is_empty(),
            "read but not in the schema: {missing:?}"
        );
        let accepted: BTreeSet<String> = crate::compile::syntax::stage::KNOWN_KEYS
            .iter()
            .map(|key| (*key).to_owned())
            .collect();
        assert_eq!(
            accepted, schema_keys,
            "the stage schema and KNOWN_KEYS differ"
        );
    }

    #[test]
    fn the_full_documents_validate_and_their_descriptions_come_from_the_field_docs() {
        let manifest = frontmatter_json(FULL_MANIFEST).unwrap();
        assert_eq!(
            errors(SchemaKind::Manifest, &manifest),
            Vec::<String>::new()
        );
        let stage = frontmatter_json(FULL_STAGE).unwrap();
        assert_eq!(errors(SchemaKind::Stage, &stage), Vec::<String>::new());
        let schema = schema_of(SchemaKind::Manifest).to_value();
        assert_eq!(
            schema["$schema"],
            json!("https://json-schema.org/draft/2020-12/schema")
        );
        assert!(
            schema["properties"]["timeout_seconds"]["description"]
                .as_str()
                .unwrap()
                .starts_with("How long one fire may run"),
            "{schema:#}"
        );
        let stage_schema = schema_of(SchemaKind::Stage).to_value();
        for (key, property) in stage_schema["properties"].as_object().unwrap() {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "stage property {key} has no description"
            );
        }
        for (key, property) in schema["properties"].as_object().unwrap() {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "manifest property {key} has no description"
            );
        }
    }

    #[test]
    fn what_the_parser_refuses_the_schema_refuses() {
        let manifest =
            |edit: &str, with: &str| frontmatter_json(&FULL_MANIFEST.replace(edit, with)).unwrap();
        for (edit, with) in [
            ("kind: deterministic", "kind: llm"),
            ("default_severity: blocking", "default_severity: fatal"),
            ("fire_on: gate", "fire_on: commit"),
            ("timeout_seconds: 30", "timeout_seconds: 0"),
            ("timeout_seconds: 30", "timeout_seconds: \"30\""),
            ("timeout_seconds: 30", "timeout_seconds: 1.5"),
            ("id: demo", "id: Demo"),
            ("command: sh check.sh", "command: \"  \""),
        ] {
            let instance = manifest(edit, with);
            assert!(
                !errors(SchemaKind::Manifest, &instance).is_empty(),
                "the schema accepts `{with}`"
            );
            let parsed = crate::compile::syntax::manifest::parse_manifest(
                &FULL_MANIFEST.replace(edit, with),
                Utf8Path::new("aidlc-demo.md"),
                "demo",
            )
            .manifest;
            if with != "id: Demo" {
                assert!(parsed.is_none(), "the parser accepts `{with}`");
            }
        }
        let mut no_description = manifest("description: A demo\n", "");
        assert!(!errors(SchemaKind::Manifest, &no_description).is_empty());
        no_description["description"] = json!("x");
        assert!(errors(SchemaKind::Manifest, &no_description).is_empty());
        for (edit, with) in [
            ("phase: inception", "phase: design"),
            ("mode: pipeline", "mode: solo"),
            ("execution: CONDITIONAL", "execution: SOMETIMES"),
            ("reviewer_max_iterations: 2", "reviewer_max_iterations: 0"),
            ("slug: demo-stage", "slug: Demo_Stage"),
            ("outputs: Writes things\n", ""),
            ("workspace_requires: true", "workspace_requires: maybe"),
            ("  demo-doc: [service]", "  demo-doc: [daemon]"),
            ("review_class: adversarial", "review_class: gentle"),
            ("    conditional_on: brownfield", "    conditional_on: both"),
            ("name: Demo", "bundle: demo"),
        ] {
            let text = FULL_STAGE.replace(edit, with);
            let instance = frontmatter_json(&text).unwrap();
            assert!(
                !errors(SchemaKind::Stage, &instance).is_empty(),
                "the schema accepts `{with}`"
            );
            let (parsed, _) =
                crate::compile::syntax::stage::parse_stage(&text, Utf8Path::new("demo-stage.md"));
            assert!(parsed.is_none(), "the parser accepts `{with}`");
        }
    }
}
