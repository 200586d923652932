//! The compile's diagnostics as `textDocument/publishDiagnostics`.
//!
//! They come from `compile::project_diagnostics`, the very function `aidlc compile` prints
//! from, over the warm database; only the shape changes (byte spans become ranges in the
//! negotiated column unit, the help line joins the message). After every change the whole
//! project's set is computed again (cheap: the queries are memoised) and compared per file with
//! what was last published, so that a manifest edit that fixes or breaks an importing stage
//! republishes that stage too, and a file that no longer has any diagnostic is cleared. The
//! staleness warnings of composed plugins (`lsp::stale_plugins`, D53) are published after the
//! compile's own, the same way.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use camino::{Utf8Path, Utf8PathBuf};
use crossbeam_channel::Sender;
use lsp_server::{Message, Notification};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    PublishDiagnosticsParams, Uri,
};

use super::positions::TextPositions;
use super::server_state::ServerState;
use super::uri::uri_of_path;
use crate::leaves::diagnostics::{Diagnostic, Severity};

/// What was last published, by display path, so that only changed files are sent again and
/// files whose diagnostics went away are cleared.
#[derive(Default)]
pub struct Publisher {
    published: HashMap<Utf8PathBuf, Vec<lsp_types::Diagnostic>>,
}

impl Publisher {
    /// Publish every file whose diagnostics differ from the last publication (every file that
    /// has any, the first time), and an empty list for every file that no longer has any.
    /// `extra` are diagnostics the compile does not make (the stale composed copies, D53),
    /// published after its own.
    pub fn publish_changes(
        &mut self,
        state: &ServerState,
        sender: &Sender<Message>,
        extra: &[Diagnostic],
    ) {
        let mut diagnostics = crate::compile::project_diagnostics(&state.db);
        diagnostics.extend_from_slice(extra);
        // By display path, each list in the compile's order; a diagnostic of no file (none
        // exist today) has nowhere to be shown and is left out.
        let mut texts = FileTexts::new(state);
        let mut current: BTreeMap<Utf8PathBuf, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
        for diagnostic in &diagnostics {
            if let Some(file) = &diagnostic.file {
                let converted = to_lsp_diagnostic(&mut texts, diagnostic);
                current.entry(file.clone()).or_default().push(converted);
            }
        }
        for (display, list) in self.changes(current) {
            let absolute = state.absolute_path(&display);
            let document = state.document(&absolute);
            publish(
                sender,
                document.map(|document| document.uri.clone()),
                &absolute,
                list,
                document.map(|document| document.version),
            );
        }
    }

    /// The publications that bring the editor from the last publication to `current`, in
    /// order: an empty list for every file that no longer has any, then every file whose list
    /// differs (in `current`'s order). `current` becomes the last publication, whether or not
    /// each send then reaches the editor.
    pub fn changes(
        &mut self,
        current: impl IntoIterator<Item = (Utf8PathBuf, Vec<lsp_types::Diagnostic>)>,
    ) -> Vec<(Utf8PathBuf, Vec<lsp_types::Diagnostic>)> {
        let current: Vec<(Utf8PathBuf, Vec<lsp_types::Diagnostic>)> = current.into_iter().collect();
        let still_present: std::collections::HashSet<&Utf8PathBuf> =
            current.iter().map(|(path, _)| path).collect();
        let mut changes = Vec::new();
        self.published.retain(|path, _| {
            let kept = still_present.contains(path);
            if !kept {
                changes.push((path.clone(), Vec::new()));
            }
            kept
        });
        for (path, list) in current {
            if self.published.get(&path) == Some(&list) {
                continue;
            }
            self.published.insert(path.clone(), list.clone());
            changes.push((path, list));
        }
        changes
    }
}

/// Publish `diagnostics` of the file at `absolute`, under the URI its open document was sent
/// with (`open_uri`), else its own; nothing for a path no URI can name.
pub fn publish(
    sender: &Sender<Message>,
    open_uri: Option<Uri>,
    absolute: &Utf8Path,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) {
    let Some(uri) = open_uri.or_else(|| uri_of_path(absolute)) else {
        return;
    };
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version,
    };
    let _ =
        sender.send(Notification::new("textDocument/publishDiagnostics".to_owned(), params).into());
}

/// The texts of the files being converted, each with its line index built once.
pub struct FileTexts<'a> {
    state: &'a ServerState,
    positions: HashMap<Utf8PathBuf, Option<TextPositions<'a>>>,
}

impl<'a> FileTexts<'a> {
    pub fn new(state: &'a ServerState) -> Self {
        Self {
            state,
            positions: HashMap::new(),
        }
    }

    /// The range of a span in a file; the start of the file when there is no span, or the
    /// file's text is not known (it is not text, or not a project file).
    pub fn range(
        &mut self,
        display: &Utf8Path,
        span: Option<&std::ops::Range<usize>>,
    ) -> lsp_types::Range {
        let state = self.state;
        let positions = self.positions.entry(display.to_owned()).or_insert_with(|| {
            let (file, _) = state.file_named(display)?;
            Some(TextPositions::new(state.text_of(file)?, state.unit))
        });
        match (positions, span) {
            (Some(positions), Some(span)) => positions.range(span),
            _ => lsp_types::Range::default(),
        }
    }
}

/// One compile diagnostic in the protocol's shape: its range, severity, code, the message
/// with its label and help, and the related places as related information.
pub fn to_lsp_diagnostic(
    texts: &mut FileTexts<'_>,
    diagnostic: &Diagnostic,
) -> lsp_types::Diagnostic {
    let file = diagnostic.file.as_deref().unwrap_or(Utf8Path::new(""));
    let range = texts.range(file, diagnostic.span.as_ref());
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .related
        .iter()
        .filter_map(|related| {
            let uri = uri_of_path(&texts.state.absolute_path(&related.file))?;
            Some(DiagnosticRelatedInformation {
                location: Location::new(uri, texts.range(&related.file, related.span.as_ref())),
                message: related.message.clone(),
            })
        })
        .collect();
    protocol_diagnostic(diagnostic, range, related)
}

/// A compile diagnostic in the protocol's shape at `range`, with `related` as its related
/// information (none when empty): the message with its label and help, severity and code.
pub fn protocol_diagnostic(
    diagnostic: &Diagnostic,
    range: lsp_types::Range,
    related: Vec<DiagnosticRelatedInformation>,
) -> lsp_types::Diagnostic {
    let mut message = diagnostic.message.clone();
    if let Some(label) = &diagnostic.label {
        let _ = write!(message, " ({label})");
    }
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_owned())),
        code_description: None,
        source: Some("aidlc".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}
