//! `aidlc lsp` in a plugin's own tree (docs/decisions.md D52, which says how the tree is read,
//! composed and compiled): the diagnostics of `aidlc compile` there, published on the plugin's
//! own files, compiled again each time the text changes, with the editor's unsaved text over
//! the plugin's files and its siblings'. The trees come from the session's warm
//! `plugin::tree_db::PluginTrees` (D54): each plugin folder the compile read is watched, and
//! only the file an edit touches is read again. Navigation, hover, completion and quick fixes
//! answer nothing here: their queries run on one install's database, which a plugin's tree is
//! not.
//!
//! Invariants: nothing is written into the plugin's tree; the diagnostics are the compile's,
//! for the same bytes; a file that no longer has any diagnostic is cleared; a tree's mirror is
//! trusted only inside a folder the watcher watches (else it is read from the disk each time).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use camino::{Utf8Path, Utf8PathBuf};
use lsp_server::{Connection, Notification, Request, Response};
use lsp_types::Uri;

use super::diagnostics::{Publisher, protocol_diagnostic, publish};
use super::positions::{TextPositions, apply_change};
use super::{DocumentEvent, ServeError, Session, serve_batches};
use crate::compile::syntax::frontmatter::ColumnUnit;
use crate::compile::watch::{FolderWatcher, WatchMessage};
use crate::harness::Harness;
use crate::leaves::diagnostics::Diagnostic;
use crate::plugin::tree_db::PluginTrees;

/// Serve one editor on the plugin's own tree at `plugin_root`: start the file watcher (nothing
/// watched until the first compile names its folders; without one, every tree is read from the
/// disk at each compile, as `aidlc compile` reads it), publish, then serve until `exit`.
pub fn serve_own_tree(
    connection: &Connection,
    plugin_root: Utf8PathBuf,
    harness: Option<Harness>,
    unit: ColumnUnit,
) -> Result<(), ServeError> {
    let (watcher, disk_events) = super::forwarded_watcher(connection, |error| {
        format!(
            "cannot watch the plugin's folders ({error}); its files are read from the disk at each change"
        )
    });
    let mut session = OwnTreeSession {
        connection,
        plugin_root,
        harness,
        unit,
        documents: HashMap::new(),
        publisher: Publisher::default(),
        trees: PluginTrees::default(),
        watcher,
        dirty: true,
    };
    serve_batches(connection, &disk_events, &mut session)
}

/// One editor session on a plugin's own tree.
struct OwnTreeSession<'a> {
    connection: &'a Connection,
    plugin_root: Utf8PathBuf,
    /// `--harness`, when given; else the own tree's rule picks it (`own_tree_harness`).
    harness: Option<Harness>,
    unit: ColumnUnit,
    /// Open documents by absolute path: their URI as sent, and their text.
    documents: HashMap<Utf8PathBuf, (Uri, String)>,
    /// What was last published, by absolute path.
    publisher: Publisher,
    /// The plugin trees the compile reads, warm where the watcher keeps them current.
    trees: PluginTrees,
    /// Watches every plugin folder the compile read; `None` when it could not start.
    watcher: Option<FolderWatcher>,
    /// Whether the plugin's files may have changed since the last publication.
    dirty: bool,
}

impl OwnTreeSession<'_> {
    /// Watch exactly the plugin folders the compiles have read, and trust their mirrors
    /// only there.
    fn watch_read_roots(&mut self) {
        let Some(watcher) = &mut self.watcher else {
            return;
        };
        let roots: Vec<(std::path::PathBuf, bool)> = self
            .trees
            .asked_roots()
            .into_iter()
            .filter(|root| root.is_dir())
            .map(|root| (root.into_std_path_buf(), true))
            .collect();
        let (_, problems) = watcher.watch_exactly(&roots);
        let watched = watcher.watched_recursively();
        self.trees.watch_only(watched);
        for problem in problems {
            self.log(&problem);
        }
    }

    fn log(&self, message: &str) {
        super::log_to_client(self.connection, lsp_types::MessageType::WARNING, message);
    }

    /// The text of the plugin's file `path` (absolute): the editor's, else the disk's.
    fn text_of(&self, path: &Utf8Path) -> Option<String> {
        self.documents
            .get(path)
            .map(|(_, text)| text.clone())
            .or_else(|| crate::leaves::fs_util::read_input_text(path).ok())
    }

    fn publish(&mut self) {
        let compiled = self.compile();
        self.watch_read_roots();
        let current = match compiled {
            Ok(current) => current,
            Err(message) => {
                super::log_to_client(self.connection, lsp_types::MessageType::ERROR, &message);
                return;
            }
        };
        for (path, list) in self.publisher.changes(current) {
            let open_uri = self.documents.get(&path).map(|(uri, _)| uri.clone());
            publish(&self.connection.sender, open_uri, &path, list, None);
        }
    }

    /// The own-tree compile of the plugin with the editor's text, as protocol diagnostics by
    /// absolute path in the plugin's tree.
    fn compile(&self) -> Result<BTreeMap<Utf8PathBuf, Vec<lsp_types::Diagnostic>>, String> {
        let plugin_root = self
            .plugin_root
            .canonicalize_utf8()
            .map_err(|error| format!("cannot open {}: {error}", self.plugin_root))?;
        // The editor's text of any plugin's files (this one's and its siblings'), read in place
        // of the disk's by the one read of each tree the composition makes (nothing is copied
        // first); by canonical path, as the trees are read.
        let overlay: crate::plugin::tree_source::Overlay = self
            .documents
            .iter()
            .map(|(path, (_, text))| (canonical_document_path(path), text.clone()))
            .collect();
        self.trees.set_overlay(overlay.clone());
        let compiled = crate::plugin::own_tree::compile_own_tree_from(
            &plugin_root,
            self.harness,
            &self.trees,
            &overlay,
        )
        .map_err(|problem| problem.headline())?;
        let mut by_file: BTreeMap<Utf8PathBuf, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
        let mut show = |path: Utf8PathBuf, diagnostic: &Diagnostic, range: lsp_types::Range| {
            by_file.entry(path).or_default().push(protocol_diagnostic(
                diagnostic,
                range,
                Vec::new(),
            ));
        };
        // What names no file of the plugin's is shown on the manifest the plugin was read
        // from, at its first line, saying so (never at 0:0 of some other file).
        let manifest = self.plugin_root.join(
            compiled
                .manifest
                .as_deref()
                .map_or(crate::plugin::manifest::AUTHORED_MANIFEST, Utf8Path::as_str),
        );
        let manifest_first_line =
            self.text_of(&manifest)
                .map_or_else(lsp_types::Range::default, |text| {
                    let end = text.find('\n').unwrap_or(text.len());
                    TextPositions::new(&text, self.unit).range(&(0..end))
                });
        let range_in = |file: &Utf8Path, span: Option<&std::ops::Range<usize>>| match (
            compiled.sources.get(file),
            span,
        ) {
            (Some(text), Some(span)) => TextPositions::new(text, self.unit).range(span),
            _ => lsp_types::Range::default(),
        };
        for diagnostic in &compiled.diagnostics {
            let Some(file) = &diagnostic.file else {
                continue;
            };
            if !file.starts_with(crate::plugin::own_tree::COMPOSED_FRAMEWORK_LABEL) {
                let range = range_in(file, diagnostic.span.as_ref());
                show(self.plugin_root.join(file), diagnostic, range);
                continue;
            }
            // In core text the plugin did not write: on the plugin's file it relates to (the
            // plugin's stage a duplicate producer names, say), else on the manifest; the
            // message says where the compile reported it.
            let reported = range_in(file, diagnostic.span.as_ref());
            let at = format!("{file}:{}", reported.start.line + 1);
            let in_plugin = diagnostic.related.iter().find(|related| {
                !related
                    .file
                    .starts_with(crate::plugin::own_tree::COMPOSED_FRAMEWORK_LABEL)
            });
            let (path, range, shown_where) = if let Some(related) = in_plugin {
                (
                    self.plugin_root.join(&related.file),
                    range_in(&related.file, related.span.as_ref()),
                    "shown here, on the plugin's file it names",
                )
            } else {
                (
                    manifest.clone(),
                    manifest_first_line,
                    "shown on the plugin's manifest",
                )
            };
            let mut shown = diagnostic.clone();
            shown.message = format!(
                "{}\n(reported at {at}, core text the plugin did not write; {shown_where})",
                diagnostic.message
            );
            show(path, &shown, range);
        }
        for problem in &compiled.refusals {
            let mut message = problem.headline();
            if let Some(help) = problem.help() {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            message.push_str(
                "\n(this refusal names no file of the plugin's, so it is shown on the plugin's manifest)",
            );
            let diagnostic =
                Diagnostic::error(crate::leaves::diagnostics::Code::PluginRefused, message);
            show(manifest.clone(), &diagnostic, manifest_first_line);
        }
        for warning in &compiled.warnings {
            let (path, range) =
                self.warning_place(warning, compiled.harness, &manifest, manifest_first_line);
            let diagnostic = warning.as_compile_diagnostic();
            show(path, &diagnostic, range);
        }
        Ok(by_file)
    }

    /// Where a composition warning is shown: on the plugin's file it names, at the key or line
    /// it names (else the file's first line), or on the manifest's first line when it names no
    /// file of the plugin's (a warning about the whole plugin).
    fn warning_place(
        &self,
        warning: &crate::plugin::Problem,
        harness: Option<Harness>,
        manifest: &Utf8Path,
        manifest_first_line: lsp_types::Range,
    ) -> (Utf8PathBuf, lsp_types::Range) {
        let Some(path) = warning
            .path()
            .filter(|path| path.starts_with(&self.plugin_root))
        else {
            return (manifest.to_owned(), manifest_first_line);
        };
        let range = self
            .text_of(path)
            .map_or_else(lsp_types::Range::default, |text| {
                let span = harness
                    .and_then(|harness| {
                        crate::plugin::own_tree::span_in_authored_text(warning, harness, &text)
                    })
                    .unwrap_or_else(|| 0..text.find('\n').unwrap_or(text.len()));
                TextPositions::new(&text, self.unit).range(&span)
            });
        (path.to_owned(), range)
    }
}

impl Session for OwnTreeSession<'_> {
    const HONOURS_CANCELLATION: bool = false;

    /// No navigation in a plugin's own tree: an empty answer.
    fn respond(&mut self, request: Request) -> Response {
        Response::new_ok(request.id, serde_json::Value::Null)
    }

    fn disk_changed(&mut self, message: WatchMessage) {
        self.dirty |= match message {
            WatchMessage::Changed { paths, rescan } => {
                self.trees.changed(&paths.into_iter().collect(), rescan)
            }
            WatchMessage::WatcherError(error) => {
                self.log(&format!(
                    "the file watcher reported: {error}; reading every plugin folder again"
                ));
                self.trees.changed(&BTreeSet::new(), true)
            }
            WatchMessage::Interrupted => false,
        };
    }

    /// The text may have changed after a save, or a file event whose parameters do not
    /// parse.
    fn notified(&mut self, notification: Notification) {
        let may_change_on_disk = matches!(
            notification.method.as_str(),
            "textDocument/didSave" | "workspace/didChangeWatchedFiles"
        );
        let Ok(Some(event)) = DocumentEvent::read(notification) else {
            self.dirty |= may_change_on_disk;
            return;
        };
        self.dirty |= match event {
            DocumentEvent::Opened { path, document } => {
                self.documents.insert(path, (document.uri, document.text));
                true
            }
            DocumentEvent::Changed { path, changes, .. } => {
                let Some((_, text)) = self.documents.get_mut(&path) else {
                    return;
                };
                for change in changes {
                    apply_change(text, change, self.unit);
                }
                true
            }
            DocumentEvent::Closed { path } => self.documents.remove(&path).is_some(),
            DocumentEvent::FilesChanged(paths) => {
                // The editor's own file events: the mirror learns of them as of the watcher's.
                self.trees.changed(&paths.into_iter().collect(), false);
                true
            }
        };
    }

    /// Without the watcher, every tree is read from the disk at each compile.
    fn watcher_gone(&mut self) {
        self.watcher = None;
        self.trees.watch_only(BTreeSet::new());
    }

    fn publish_if_dirty(&mut self) {
        if std::mem::take(&mut self.dirty) {
            self.publish();
        }
    }
}

/// An open document's path as the trees are read (canonical), through its folder (the file
/// itself may not be on disk yet).
fn canonical_document_path(path: &Utf8Path) -> Utf8PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(folder), Some(name)) => folder
            .canonicalize_utf8()
            .map_or_else(|_| path.to_owned(), |folder| folder.join(name)),
        _ => path.to_owned(),
    }
}
