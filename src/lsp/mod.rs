//! `aidlc lsp`: a language server for the project's harness files, on stdio.
//!
//! One salsa database, the compile's own ([`server_state`]), overlaid with the text of the
//! documents the editor has open; every answer comes from the compile's queries (see
//! [`diagnostics`], [`navigation`], [`completion`], [`code_actions`]).
//!
//! The main loop is synchronous, on one thread, over `lsp_server` channels
//! ([`transport`] owns stdin and stdout): it blocks for the next message, then takes every
//! message already queued behind it (from the editor and from the file watcher) as one batch,
//! handles them in order, and publishes diagnostics once at the end of the batch. So a burst
//! of keystrokes costs one diagnostics pass, a request answers the text as it was when the
//! request was sent (the changes queued behind it are applied after it), and a request whose
//! `$/cancelRequest` is already queued is answered `RequestCanceled` without being computed.
//!
//! On an install with composed plugins it also watches each path plugin's folder and the lock
//! file, and publishes [`stale_plugins`]' warnings with the compile's diagnostics (D53).
//!
//! Invariants:
//! - nothing here writes to disk: no graph, no grid, no fingerprint, no lock (`aidlc compile`
//!   owns the outputs), and no composition (`aidlc plugin sync` owns the install's copies);
//! - no message can end the session but `exit` (or the editor closing the pipe): a request
//!   about a file outside the project, or on a file that is not text, gets an empty result; a
//!   request with parameters that do not parse gets `InvalidParams`; an unknown method gets
//!   `MethodNotFound`; a body that is not JSON-RPC gets a parse error from the transport.

pub mod code_actions;
pub mod completion;
pub mod diagnostics;
pub mod navigation;
pub mod own_tree;
pub mod positions;
pub mod server_state;
pub mod stale_plugins;
pub mod transport;
pub mod uri;

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use camino::Utf8PathBuf;
use crossbeam_channel::{Receiver, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability,
    CompletionOptions, CompletionParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, FileSystemWatcher, GlobPattern, GotoDefinitionParams, HoverParams,
    HoverProviderCapability, InitializeParams, MessageType, OneOf, PositionEncodingKind,
    ReferenceParams, Registration, RegistrationParams, ServerCapabilities,
    TextDocumentContentChangeEvent, TextDocumentItem, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::compile::db::SourceFile;
use crate::compile::discover::{self, Layout, ProjectError};
use crate::compile::resolve::SiteRole;
use crate::compile::syntax::frontmatter::ColumnUnit;
use crate::compile::watch::{FolderWatcher, WatchMessage, watch_roots};
use crate::harness::{self, Harness};
use crate::leaves::diagnostics::Diagnostic;
use crate::plugin::recompose::ComposedSources;
use crate::plugin::tree_db::PluginTrees;
use server_state::{FileKind, ServerState};

/// How long the files must be quiet before the watcher reports a batch (as `compile --watch`).
const WATCH_DEBOUNCE: Duration = Duration::from_millis(50);

/// What `aidlc lsp` was told on its command line.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// `--project-dir`; else `AIDLC_PROJECT_DIR`, `CLAUDE_PROJECT_DIR`, the editor's workspace
    /// folder, the working folder, each searched upwards for a harness folder.
    pub project_dir: Option<Utf8PathBuf>,
    pub harness: Option<Harness>,
}

/// Why a session ended other than by `shutdown` then `exit`.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the editor sent `exit` without `shutdown` first")]
    ExitWithoutShutdown,
    #[error("the editor closed the connection without `shutdown` and `exit`")]
    Disconnected,
    #[error("the language server handshake failed: {0}")]
    Handshake(String),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ServeError {
    /// Whether the session broke the protocol's ending (exit status 1, as the protocol asks
    /// for an `exit` without `shutdown`), rather than failing to start or to talk (status 2).
    pub fn is_protocol_ending(&self) -> bool {
        matches!(
            self,
            ServeError::ExitWithoutShutdown | ServeError::Disconnected
        )
    }
}

/// Serve one editor on this process's stdin and stdout until it sends `exit`.
pub fn serve_stdio(options: &ServeOptions) -> Result<(), ServeError> {
    let (connection, io_threads) = transport::stdio();
    let served = serve(&connection, options);
    let reader_stopped = matches!(
        connection.receiver.try_recv(),
        Err(crossbeam_channel::TryRecvError::Disconnected)
    );
    // Dropping the connection lets the writer flush the last responses and stop.
    drop(connection);
    let transport_result = io_threads.finish(reader_stopped);
    match (served, transport_result) {
        // A stream that broke is why the messages stopped, also during the handshake.
        (Err(ServeError::Disconnected | ServeError::Handshake(_)), Err(broken)) => {
            Err(ServeError::Io(broken))
        }
        (served, _) => served,
    }
}

/// Serve one editor over `connection`: the handshake, then the main loop until `exit`. Tests
/// and benchmarks call it on a `Connection::memory()` pair.
pub fn serve(connection: &Connection, options: &ServeOptions) -> Result<(), ServeError> {
    let (opened, unit, params) = initialize(connection, options)?;
    let layout = match opened {
        Opened::Project(layout) => *layout,
        Opened::OwnTree(plugin_root) => {
            return own_tree::serve_own_tree(connection, plugin_root, options.harness, unit);
        }
    };
    let mut server = Server {
        state: ServerState::load(layout, unit),
        connection,
        publisher: diagnostics::Publisher::default(),
        watcher: None,
        dirty: true,
        composition: ComposedSources::default(),
        stale_warnings: Vec::new(),
        plugin_trees: PluginTrees::default(),
    };
    server.refresh_composition();
    let disk_events = server.start_watching(&params);
    serve_batches(connection, &disk_events, &mut server)
}

/// What the handshake opened: a project, or a plugin's own tree (docs/decisions.md D52).
enum Opened {
    Project(Box<Layout>),
    OwnTree(Utf8PathBuf),
}

fn initialize(
    connection: &Connection,
    options: &ServeOptions,
) -> Result<(Opened, ColumnUnit, InitializeParams), ServeError> {
    let handshake = |error: lsp_server::ProtocolError| ServeError::Handshake(error.to_string());
    let (id, params) = connection.initialize_start().map_err(handshake)?;
    let params: InitializeParams = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(error) => {
            let message = format!("invalid initialize parameters: {error}");
            respond_error(connection, id, ErrorCode::InvalidParams, &message);
            return Err(ServeError::Handshake(message));
        }
    };
    let opened = match open_project_or_own_tree(options, &params) {
        Ok(opened) => opened,
        Err(error) => {
            respond_error(connection, id, ErrorCode::RequestFailed, &error.to_string());
            return Err(error.into());
        }
    };
    let (unit, encoding) = positions::negotiate_encoding(&params.capabilities);
    let result = serde_json::json!({
        "capabilities": server_capabilities(encoding),
        "serverInfo": { "name": "aidlc", "version": env!("CARGO_PKG_VERSION") },
    });
    connection
        .initialize_finish(id, result)
        .map_err(handshake)?;
    Ok((opened, unit, params))
}

fn respond_error(connection: &Connection, id: RequestId, code: ErrorCode, message: &str) {
    let _ = connection
        .sender
        .send(Response::new_err(id, code as i32, message.to_owned()).into());
}

/// What to serve: a plugin's own tree when no project is named and the nearest plugin manifest
/// from the editor's workspace folder (else the working folder) is nearer than the nearest
/// project; else the project as `aidlc compile` would find it, except that the editor's
/// workspace folder is searched (upwards) before the working folder.
fn open_project_or_own_tree(
    options: &ServeOptions,
    params: &InitializeParams,
) -> Result<Opened, ProjectError> {
    let env = |name: &str| std::env::var(name).ok();
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|cwd| Utf8PathBuf::from_path_buf(cwd).ok())
        .ok_or(ProjectError::NonUtf8Cwd)?;
    let explicit = options.project_dir.as_ref().map(|dir| cwd.join(dir));
    let start = workspace_folder(params).unwrap_or(cwd);
    let own_tree_root =
        crate::plugin::own_tree::own_tree_root_from(explicit.is_some(), &start, &env);
    if let Some(plugin_root) = own_tree_root {
        return Ok(Opened::OwnTree(plugin_root));
    }
    let project_dir = discover::find_project_dir(explicit.as_deref(), &env, &start)?;
    let harness = harness::pick_harness(&project_dir, options.harness)?;
    let layout = Layout::new(&project_dir, harness, &env);
    Ok(Opened::Project(Box::new(layout)))
}

#[expect(
    deprecated,
    reason = "`rootUri` is deprecated in favour of `workspaceFolders`, but older clients (Neovim 0.7) send only it"
)]
fn workspace_folder(params: &InitializeParams) -> Option<Utf8PathBuf> {
    params
        .workspace_folders
        .iter()
        .flatten()
        .map(|folder| &folder.uri)
        .chain(params.root_uri.as_ref())
        .find_map(uri::path_of_uri)
}

fn server_capabilities(encoding: PositionEncodingKind) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..TextDocumentSyncOptions::default()
            },
        )),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![" ".to_owned(), "[".to_owned(), ",".to_owned()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// A message from the editor, or a batch from the file watcher.
enum Event {
    Client(Message),
    Disk(WatchMessage),
}

/// Block for the next message from the client or the watcher, then take every message already
/// queued behind them, as one batch; `None` when the client went away. When the watcher's
/// channel is closed, `on_watcher_gone` runs and the session serves on without it (that
/// branch is ready at once from then on, so the client is waited for there).
fn next_batch(
    connection: &Connection,
    disk_events: &Receiver<WatchMessage>,
    on_watcher_gone: impl FnOnce(),
) -> Option<Vec<Event>> {
    let first = select! {
        recv(connection.receiver) -> message => Event::Client(message.ok()?),
        recv(disk_events) -> message => if let Ok(message) = message {
            Event::Disk(message)
        } else {
            on_watcher_gone();
            Event::Client(connection.receiver.recv().ok()?)
        },
    };
    let mut batch = vec![first];
    batch.extend(connection.receiver.try_iter().map(Event::Client));
    batch.extend(disk_events.try_iter().map(Event::Disk));
    Some(batch)
}

/// What a session (a project's, or a plugin's own tree) does with the events of a batch;
/// [`serve_batches`] is the loop both run.
trait Session {
    /// Whether a request whose `$/cancelRequest` is in the same batch is answered
    /// `RequestCanceled` rather than computed.
    const HONOURS_CANCELLATION: bool;
    /// The response to a request made before `shutdown`, other than `shutdown` itself.
    fn respond(&mut self, request: Request) -> Response;
    /// A notification other than `exit`.
    fn notified(&mut self, notification: Notification);
    fn disk_changed(&mut self, message: WatchMessage);
    /// The watcher's channel closed: the session serves on without it.
    fn watcher_gone(&mut self) {}
    /// Publish the diagnostics when what was handled since may have changed them.
    fn publish_if_dirty(&mut self);
}

/// Publish, then handle each batch in order and publish once after it, until `exit` or the
/// client going away: cleanly only after `shutdown`, which is answered here, as is every
/// request after it.
fn serve_batches<S: Session>(
    connection: &Connection,
    disk_events: &Receiver<WatchMessage>,
    session: &mut S,
) -> Result<(), ServeError> {
    session.publish_if_dirty();
    let mut shutdown_requested = false;
    let unclean = 'session: loop {
        let Some(batch) = next_batch(connection, disk_events, || session.watcher_gone()) else {
            break ServeError::Disconnected;
        };
        let cancelled: HashSet<RequestId> = batch
            .iter()
            .filter(|_| S::HONOURS_CANCELLATION)
            .filter_map(|event| match event {
                Event::Client(Message::Notification(notification))
                    if notification.method == "$/cancelRequest" =>
                {
                    serde_json::from_value(notification.params.get("id")?.clone()).ok()
                }
                _ => None,
            })
            .collect();
        for event in batch {
            match event {
                Event::Client(Message::Request(request)) => {
                    let response = if cancelled.contains(&request.id) {
                        let message = "cancelled by the client".to_owned();
                        Response::new_err(request.id, ErrorCode::RequestCanceled as i32, message)
                    } else if request.method == "shutdown" {
                        shutdown_requested = true;
                        Response::new_ok(request.id, ())
                    } else if shutdown_requested {
                        let message = "the server is shutting down".to_owned();
                        Response::new_err(request.id, ErrorCode::InvalidRequest as i32, message)
                    } else {
                        session.respond(request)
                    };
                    let _ = connection.sender.send(response.into());
                }
                Event::Client(Message::Notification(notification)) => {
                    if notification.method == "exit" {
                        break 'session ServeError::ExitWithoutShutdown;
                    }
                    session.notified(notification);
                }
                // Answers to our own requests (the capability registration): nothing to do.
                Event::Client(Message::Response(_)) => {}
                Event::Disk(message) => session.disk_changed(message),
            }
        }
        session.publish_if_dirty();
    };
    if shutdown_requested {
        Ok(())
    } else {
        Err(unclean)
    }
}

/// Send the client a `window/logMessage`.
fn log_to_client(connection: &Connection, kind: MessageType, message: &str) {
    let params = lsp_types::LogMessageParams {
        typ: kind,
        message: message.to_owned(),
    };
    let _ = connection
        .sender
        .send(Notification::new("window/logMessage".to_owned(), params).into());
}

struct Server<'a> {
    state: ServerState,
    connection: &'a Connection,
    publisher: diagnostics::Publisher,
    /// Kept alive for the session; dropping it stops the notify threads.
    watcher: Option<FolderWatcher>,
    /// Whether the database changed since diagnostics were last published.
    dirty: bool,
    /// The composed plugins the lock file records, whose path folders are watched (D53).
    composition: ComposedSources,
    /// The `stale-plugin-copy` warnings, published with the compile's diagnostics (D53).
    stale_warnings: Vec<Diagnostic>,
    /// The plugin trees the staleness check composes, warm where the watcher keeps them
    /// current (D54).
    plugin_trees: PluginTrees,
}

impl Server<'_> {
    /// Watch the input folders with notify (as `compile --watch` does), and ask the client to
    /// send its own file events too when it can register for them: either source refreshes
    /// the files that are not open, and a refresh that finds equal bytes changes nothing.
    fn start_watching(&mut self, params: &InitializeParams) -> Receiver<WatchMessage> {
        let (watcher, disk_events) = forwarded_watcher(self.connection, |error| {
            format!(
                "cannot watch the project's folders ({error}); only the editor's file events will refresh files that are not open"
            )
        });
        self.watcher = watcher;
        for problem in self.watch_what_is_read() {
            self.log(MessageType::WARNING, &problem);
        }
        let client_watches = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.did_change_watched_files.as_ref())
            .and_then(|capability| capability.dynamic_registration)
            .unwrap_or(false);
        if client_watches {
            self.register_file_watching();
        }
        disk_events
    }

    fn register_file_watching(&self) {
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: ["**/*.md", "**/stage-graph.json", "**/scope-grid.json"]
                .into_iter()
                .map(|glob| FileSystemWatcher {
                    glob_pattern: GlobPattern::String(glob.to_owned()),
                    kind: None,
                })
                .collect(),
        };
        let registration = Registration {
            id: "aidlc-watched-files".to_owned(),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(options).ok(),
        };
        // The one request this server sends the client, once per session.
        let request = Request::new(
            RequestId::from("aidlc-1".to_owned()),
            "client/registerCapability".to_owned(),
            RegistrationParams {
                registrations: vec![registration],
            },
        );
        let _ = self.connection.sender.send(request.into());
    }

    /// Run a handler on the request's parameters; parameters that do not parse are
    /// `InvalidParams`, never a panic.
    fn answer<P: DeserializeOwned, R: Serialize>(
        &self,
        request: Request,
        handler: impl FnOnce(&ServerState, P) -> R,
    ) -> Response {
        match serde_json::from_value::<P>(request.params) {
            Ok(params) => Response::new_ok(request.id, handler(&self.state, params)),
            Err(error) => Response::new_err(
                request.id,
                ErrorCode::InvalidParams as i32,
                format!("invalid parameters for {}: {error}", request.method),
            ),
        }
    }

    /// Watch exactly the project's input folders and the plugin folders (see
    /// [`Self::plugin_roots_to_watch`]), and trust the warm plugin trees only there; the
    /// problems met, for the log. Nothing without a watcher.
    fn watch_what_is_read(&mut self) -> Vec<String> {
        let plugin_roots = self.plugin_roots_to_watch();
        let Some(watcher) = &mut self.watcher else {
            return Vec::new();
        };
        let layout = &self.state.layout;
        let roots = watch_roots(&layout.project_dir, Some(layout), &plugin_roots);
        let (_, problems) = watcher.watch_exactly(&roots);
        self.plugin_trees.watch_only(watcher.watched_recursively());
        problems
    }

    /// Whether `paths` may change the composition other than through a plugin tree the
    /// staleness check read (the warm trees say whether those changed, D54): the lock file,
    /// or the folder of a recorded path plugin the check has not read (D53; one whose folder
    /// is missing, say, and may be appearing).
    fn touches_composition(&self, paths: &HashSet<Utf8PathBuf>) -> bool {
        let lock = crate::plugin::lock_file::lock_path(&self.state.layout.project_dir);
        paths.contains(&lock)
            || self
                .composition
                .touched_outside(paths, &self.plugin_trees.asked_roots())
    }

    /// The plugin folders to watch: the lock's path plugins, and every plugin the staleness
    /// check read (a sibling dependency the lock does not record yet).
    fn plugin_roots_to_watch(&self) -> Vec<Utf8PathBuf> {
        let mut roots: BTreeSet<Utf8PathBuf> = self.composition.roots().into_iter().collect();
        roots.extend(self.plugin_trees.asked_roots());
        roots.into_iter().collect()
    }

    /// Read the lock file's plugins and plan their sync again (nothing is written); true when
    /// the watched plugins or the staleness warnings changed (the latter marks the
    /// diagnostics dirty).
    fn refresh_composition(&mut self) -> bool {
        let layout = &self.state.layout;
        let composition = ComposedSources::read(layout).unwrap_or_default();
        let asked_before = self.plugin_trees.asked_roots();
        let warnings = stale_plugins::stale_plugin_diagnostics(layout, &self.plugin_trees);
        let sources_changed =
            composition != self.composition || self.plugin_trees.asked_roots() != asked_before;
        let warnings_changed = warnings != self.stale_warnings;
        self.composition = composition;
        self.stale_warnings = warnings;
        self.dirty |= warnings_changed;
        sources_changed || warnings_changed
    }

    fn log(&self, kind: MessageType, message: &str) {
        log_to_client(self.connection, kind, message);
    }
}

impl Session for Server<'_> {
    const HONOURS_CANCELLATION: bool = true;

    fn respond(&mut self, request: Request) -> Response {
        match request.method.as_str() {
            "textDocument/definition" => {
                self.answer(request, |state, params: GotoDefinitionParams| {
                    let (file, kind, offset) =
                        locate(state, &params.text_document_position_params)?;
                    navigation::definition(state, file, kind, offset)
                })
            }
            "textDocument/references" => self.answer(request, |state, params: ReferenceParams| {
                let (file, kind, offset) = locate(state, &params.text_document_position)?;
                let role = (!params.context.include_declaration).then_some(SiteRole::Reference);
                navigation::references(state, file, kind, offset, role)
            }),
            "textDocument/hover" => self.answer(request, |state, params: HoverParams| {
                let (file, kind, offset) = locate(state, &params.text_document_position_params)?;
                navigation::hover(state, file, kind, offset)
            }),
            "textDocument/completion" => self.answer(request, |state, params: CompletionParams| {
                let (file, kind, offset) = locate(state, &params.text_document_position)?;
                completion::completion(state, file, kind, offset)
            }),
            "textDocument/codeAction" => self.answer(request, |state, params: CodeActionParams| {
                let uri = &params.text_document.uri;
                let (file, kind) = project_file(state, uri)?;
                let text = state.text_of(file)?;
                let span = positions::TextPositions::new(text, state.unit).span(params.range);
                Some(code_actions::code_actions(state, uri, file, kind, span))
            }),
            method => {
                let message = format!("aidlc lsp does not handle {method}");
                Response::new_err(request.id, ErrorCode::MethodNotFound as i32, message)
            }
        }
    }

    /// A document or file event changes the database's text; anything else (`$/cancelRequest`
    /// is handled with the batch; a save changes no text the database does not already hold,
    /// and the watcher reads the disk anyway) changes nothing.
    fn notified(&mut self, notification: Notification) {
        let method = notification.method.clone();
        let event = match DocumentEvent::read(notification) {
            Ok(Some(event)) => event,
            Ok(None) => return,
            Err(error) => {
                self.log(
                    MessageType::WARNING,
                    &format!(
                        "ignored a {method} notification whose parameters do not parse: {error}"
                    ),
                );
                return;
            }
        };
        let state = &mut self.state;
        self.dirty |= match event {
            DocumentEvent::Opened { path, document } => state.open(
                &state.project_path(&path),
                document.uri,
                document.version,
                document.text,
            ),
            DocumentEvent::Changed {
                path,
                version,
                changes,
            } => state.change(&state.project_path(&path), version, changes),
            DocumentEvent::Closed { path } => state.close(&state.project_path(&path)),
            DocumentEvent::FilesChanged(paths) => {
                let paths: HashSet<Utf8PathBuf> =
                    paths.iter().map(|path| state.project_path(path)).collect();
                state.refresh_changed_paths(&paths, false)
            }
        };
    }

    fn disk_changed(&mut self, message: WatchMessage) {
        let (changed, composition_may_differ) = match message {
            WatchMessage::Changed { paths, rescan } => {
                let trees_may_differ = self
                    .plugin_trees
                    .changed(&paths.iter().cloned().collect(), rescan);
                let composition_may_differ =
                    rescan || trees_may_differ || self.touches_composition(&paths);
                (
                    self.state.refresh_changed_paths(&paths, rescan),
                    composition_may_differ,
                )
            }
            WatchMessage::WatcherError(error) => {
                self.log(
                    MessageType::WARNING,
                    &format!("the file watcher reported: {error}; reading every file again"),
                );
                self.plugin_trees.changed(&BTreeSet::new(), true);
                (
                    self.state.refresh_changed_paths(&HashSet::new(), true),
                    true,
                )
            }
            WatchMessage::Interrupted => (false, false),
        };
        self.dirty |= changed;
        let composition_changed = composition_may_differ && self.refresh_composition();
        // A folder that appeared (or vanished), or a plugin added or removed, changes what must
        // be watched.
        if changed || composition_changed {
            let _ = self.watch_what_is_read();
        }
    }

    fn publish_if_dirty(&mut self) {
        if std::mem::take(&mut self.dirty) {
            self.publisher.publish_changes(
                &self.state,
                &self.connection.sender,
                &self.stale_warnings,
            );
        }
    }
}

/// A file watcher whose batches arrive on a crossbeam channel the main loops select over.
/// notify's callback sends on a std channel, so a small thread forwards (it ends with the
/// watcher). A watcher whose events cannot be forwarded is no watcher: it is dropped, so
/// nothing is trusted to be kept current by it. Without a watcher, the `problem` made of why
/// is logged as a warning, and the channel never sends (the loop waits for the client alone).
pub(super) fn forwarded_watcher(
    connection: &Connection,
    problem: impl FnOnce(String) -> String,
) -> (Option<FolderWatcher>, Receiver<WatchMessage>) {
    let (bridge_sender, disk_events) = crossbeam_channel::unbounded();
    let (watch_sender, watch_receiver) = std::sync::mpsc::channel();
    let started = FolderWatcher::start(WATCH_DEBOUNCE, watch_sender).and_then(|watcher| {
        std::thread::Builder::new()
            .name("aidlc-lsp-watch".to_owned())
            .spawn(move || {
                for message in watch_receiver {
                    if bridge_sender.send(message).is_err() {
                        return;
                    }
                }
            })
            .map_err(|error| format!("cannot forward file events: {error}"))?;
        Ok(watcher)
    });
    match started {
        Ok(watcher) => (Some(watcher), disk_events),
        Err(error) => {
            log_to_client(connection, MessageType::WARNING, &problem(error));
            (None, crossbeam_channel::never())
        }
    }
}

/// A notification that the text of a document or a file on disk changed, its URIs read as
/// absolute paths (a URI that names no file is left out).
enum DocumentEvent {
    Opened {
        path: Utf8PathBuf,
        document: TextDocumentItem,
    },
    Changed {
        path: Utf8PathBuf,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    },
    Closed {
        path: Utf8PathBuf,
    },
    /// The editor's own file events (`workspace/didChangeWatchedFiles`).
    FilesChanged(Vec<Utf8PathBuf>),
}

impl DocumentEvent {
    /// `None` for another method, or a document whose URI names no file; an error for
    /// parameters that do not parse.
    fn read(notification: Notification) -> Result<Option<Self>, serde_json::Error> {
        let params = notification.params;
        Ok(match notification.method.as_str() {
            "textDocument/didOpen" => {
                let document = serde_json::from_value::<DidOpenTextDocumentParams>(params)?;
                let document = document.text_document;
                uri::path_of_uri(&document.uri).map(|path| Self::Opened { path, document })
            }
            "textDocument/didChange" => {
                let params = serde_json::from_value::<DidChangeTextDocumentParams>(params)?;
                uri::path_of_uri(&params.text_document.uri).map(|path| Self::Changed {
                    path,
                    version: params.text_document.version,
                    changes: params.content_changes,
                })
            }
            "textDocument/didClose" => {
                let params = serde_json::from_value::<DidCloseTextDocumentParams>(params)?;
                uri::path_of_uri(&params.text_document.uri).map(|path| Self::Closed { path })
            }
            "workspace/didChangeWatchedFiles" => {
                let params = serde_json::from_value::<DidChangeWatchedFilesParams>(params)?;
                let paths = params.changes.iter();
                Some(Self::FilesChanged(
                    paths
                        .filter_map(|change| uri::path_of_uri(&change.uri))
                        .collect(),
                ))
            }
            _ => None,
        })
    }
}

/// The project file a URI names, if the compile reads it.
fn project_file(state: &ServerState, uri: &Uri) -> Option<(SourceFile, FileKind)> {
    state.file_at(&state.project_path(&uri::path_of_uri(uri)?))
}

/// The project file, its kind and the byte offset of a position in it; `None` for a file the
/// compile does not read or whose contents are not text.
fn locate(
    state: &ServerState,
    position: &TextDocumentPositionParams,
) -> Option<(SourceFile, FileKind, usize)> {
    let (file, kind) = project_file(state, &position.text_document.uri)?;
    let text = state.text_of(file)?;
    let offset = positions::TextPositions::new(text, state.unit).offset(position.position);
    Some((file, kind, offset))
}
