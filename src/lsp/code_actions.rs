//! Quick fixes for the compile's diagnostics: the "did you mean" replacement of every
//! diagnostic whose help suggests one, and the line that adds a missing required field.
//!
//! The diagnostics are the compile's own (`compile::project_diagnostics`, recomputed from the
//! warm database, not what the client echoes back), so a fix always answers the text as the
//! server knows it.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, TextEdit, Uri, WorkspaceEdit};

use super::completion::enum_values;
use super::diagnostics::{FileTexts, to_lsp_diagnostic};
use super::positions::TextPositions;
use super::server_state::{FileKind, ServerState};
use crate::compile::db::SourceFile;
use crate::compile::syntax::manifest::sensor_id_from_file_name;
use crate::compile::syntax::stage::is_kebab_case;
use crate::compile::syntax::vocabulary::PHASES;
use crate::leaves::diagnostics::{Code, Diagnostic};

/// The quick fixes for the diagnostics of `file` that touch the byte range `span`.
pub fn code_actions(
    state: &ServerState,
    uri: &Uri,
    file: SourceFile,
    kind: FileKind,
    span: std::ops::Range<usize>,
) -> Vec<CodeActionOrCommand> {
    let db = &state.db;
    let Some(text) = state.text_of(file) else {
        return Vec::new();
    };
    let display = file.path(db);
    let positions = TextPositions::new(text, state.unit);
    let mut texts = FileTexts::new(state);
    let mut actions = Vec::new();
    for diagnostic in crate::compile::project_diagnostics(db) {
        if diagnostic.file.as_deref() != Some(display.as_path()) || !touches(&diagnostic, &span) {
            continue;
        }
        let lsp_diagnostic = to_lsp_diagnostic(&mut texts, &diagnostic);
        let mut fixes = Vec::new();
        if let (Some(suggestion), Some(at)) = (did_you_mean(&diagnostic), &diagnostic.span) {
            let written = text.get(at.clone()).unwrap_or_default();
            fixes.push((
                format!("Replace `{written}` with `{suggestion}`"),
                TextEdit::new(positions.range(at), suggestion.to_owned()),
                true,
            ));
        }
        if diagnostic.code == Code::MissingRequiredField {
            fixes.extend(missing_field_fixes(
                state,
                file,
                kind,
                text,
                &positions,
                &diagnostic,
            ));
        }
        for (title, edit, preferred) in fixes {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp_diagnostic.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: preferred.then_some(true),
                ..CodeAction::default()
            }));
        }
    }
    actions
}

/// Whether a diagnostic's span meets the requested range (a diagnostic without a span sits at
/// the start of the file).
fn touches(diagnostic: &Diagnostic, span: &std::ops::Range<usize>) -> bool {
    let at = diagnostic.span.clone().unwrap_or(0..0);
    at.start <= span.end && span.start <= at.end
}

/// The suggestion of a help line that says "did you mean `x`?".
pub fn did_you_mean(diagnostic: &Diagnostic) -> Option<&str> {
    let help = diagnostic.help.as_deref()?;
    let after = help.split("did you mean `").nth(1)?;
    let suggestion = &after[..after.find('`')?];
    (!suggestion.is_empty()).then_some(suggestion)
}

/// The fields a `missing-required-field` diagnostic names: "missing required field: x" (stages,
/// manifests) or "… missing required frontmatter: a, b" (agents, scopes).
fn missing_fields(message: &str) -> Vec<&str> {
    let list = message
        .split_once("missing required field: ")
        .or_else(|| message.split_once("missing required frontmatter: "))
        .map_or("", |(_, list)| list);
    list.split(", ")
        .map(str::trim)
        .filter(|field| !field.is_empty())
        .collect()
}

/// One fix per value that can be filled in for each missing field, each adding a `field: value`
/// line at the end of the frontmatter. A field whose value cannot be known (a command, a
/// description) gets the line with no value, and the compile then points at it until it has
/// one. A field already written (with an empty value) gets no fix: a second line would be a
/// duplicate key.
fn missing_field_fixes(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    text: &str,
    positions: &TextPositions<'_>,
    diagnostic: &Diagnostic,
) -> Vec<(String, TextEdit, bool)> {
    let Some(outline) = crate::compile::parse::frontmatter_outline(&state.db, file) else {
        return Vec::new();
    };
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let insert_at = positions.position(outline.yaml_span.end);
    let mut fixes = Vec::new();
    for field in missing_fields(&diagnostic.message) {
        if outline.get(field).is_some() {
            continue;
        }
        let values = known_values(state, file, kind, field);
        let single = values.len() == 1;
        for value in values {
            let line = if value.is_empty() {
                format!("{field}:")
            } else {
                format!("{field}: {value}")
            };
            fixes.push((
                format!("Add `{line}`"),
                TextEdit::new(
                    lsp_types::Range::new(insert_at, insert_at),
                    format!("{line}{line_end}"),
                ),
                single,
            ));
        }
    }
    fixes
}

/// The values a missing field can be given without asking the author: what the file's name and
/// folder say, or each value of an enum. An empty string when nothing can be known.
fn known_values(state: &ServerState, file: SourceFile, kind: FileKind, field: &str) -> Vec<String> {
    let path = file.path(&state.db);
    let stem = path.file_stem().unwrap_or_default();
    let derived = match (kind, field) {
        (FileKind::Manifest, "id") => path
            .file_name()
            .and_then(sensor_id_from_file_name)
            .map(|id| vec![id.to_owned()]),
        (FileKind::Stage, "slug") => is_kebab_case(stem).then(|| vec![stem.to_owned()]),
        (FileKind::Stage, "phase") => path
            .parent()
            .and_then(camino::Utf8Path::file_name)
            .filter(|folder| PHASES.contains(folder))
            .map(|folder| vec![folder.to_owned()]),
        (FileKind::Agent | FileKind::Scope, "name") => Some(vec![stem.to_owned()]),
        _ => enum_values(kind, field).map(|values| values.into_iter().map(str::to_owned).collect()),
    };
    derived.unwrap_or_else(|| vec![String::new()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_suggestion_of_every_did_you_mean_help() {
        let with_help =
            |help: &str| Diagnostic::error(Code::UnknownSensorImport, "m").with_help(help);
        assert_eq!(
            did_you_mean(&with_help(
                "did you mean `linter`? Otherwise add a manifest"
            )),
            Some("linter")
        );
        assert_eq!(
            did_you_mean(&with_help(
                "use one of: ALWAYS, CONDITIONAL (did you mean `ALWAYS`?)"
            )),
            Some("ALWAYS")
        );
        assert_eq!(did_you_mean(&with_help("add a manifest")), None);
    }

    #[test]
    fn reads_the_missing_fields_of_both_wordings() {
        assert_eq!(missing_fields("missing required field: slug"), ["slug"]);
        assert_eq!(
            missing_fields("Agent file a.md missing required frontmatter: name, display_name"),
            ["name", "display_name"]
        );
        assert!(missing_fields("something else").is_empty());
    }
}
