//! Plugin composition: `aidlc plugin add|remove|list|sync`.
//!
//! A plugin is a folder with a manifest (`.aidlc-plugin/plugin.json`, or a host projection's
//! `.claude-plugin/plugin.json` naming `aidlc-<name>`) and core-shaped subtrees. Composing the
//! chosen plugins into an install is one pure computation over the install's base state and the
//! plugins' trees, then one transaction:
//!
//! ```text
//! source (path | git clone) ─▶ tree (read, guarded) ─▶ compose::plan
//!     copies of stages/scopes/agents/knowledge/sensors/tools ({{HARNESS_DIR}} substituted)
//!     contributions merged into the target stages' base text (merge, splice)
//!     sidecars (tools/data/plugin-contrib-<name>.json), aidlc.lock.json
//!   ─▶ journal::Transaction: before-images, writes, compile, the conductor's own generators,
//!      commit (or roll back on any failure, and on the next run after a kill)
//! ```
//!
//! Invariants:
//! - every guard runs before the first write: a refused plugin leaves the install untouched;
//! - the install is only ever changed inside a journal transaction, so after any failure or
//!   kill it is (once the next `aidlc plugin add|remove|sync` has recovered) the state before or after;
//! - composing is a function of the install's base and the chosen plugins: a second sync
//!   writes nothing, and removing a plugin gives back the base bytes it was composed on.

use std::fmt::Write as _;
pub mod authored_files;
pub mod compose;
pub mod composed_stages_in_graph;
pub mod conductor;
pub mod contributed_text;
pub mod contribution;
pub mod dispatch_surface;
pub mod guards;
pub mod journal;
pub mod lock_file;
pub mod manifest;
pub mod merge;
pub mod opencode_agents;
pub mod operations;
pub mod own_tree;
pub mod place_span;
pub mod placeholder_span;
pub mod recompose;
pub mod removed_scope_columns;
pub mod selection;
pub mod sidecar;
pub mod source;
pub mod splice;
pub mod stale_sources;
pub mod sync_record;
pub mod tree;
pub mod tree_db;
pub mod tree_source;

use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::diagnostics::Diagnostic;

/// One problem a plugin command found, as a value (the CLI renders it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The plugin it is about, when one is.
    pub plugin: Option<String>,
    /// The file it is about: a path in the plugin's tree (absolute) or in the project
    /// (project-relative).
    pub path: Option<Utf8PathBuf>,
    pub message: String,
    pub help: Option<String>,
    /// A located diagnostic, with the text of its file, when the problem has a span.
    pub located: Option<Box<(Diagnostic, String)>>,
    /// Where in `path` the offending text is, when the problem knows it but has no span: the
    /// own-tree compile turns it into one (docs/decisions.md D52).
    pub place: Option<Box<Place>>,
}

/// The offending text of a problem in its file, named by what it is rather than by offsets
/// (the refusal is made where the file's text is not at hand, or was parsed without spans).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A key of a JSON file (the manifest) or of a Markdown file's frontmatter, by its path of
    /// keys from the top (`["aidlc", "contributes", "stages"]`); with `item`, the element of
    /// that key's list (or the scalar value) whose text is `item`.
    Key {
        path: Vec<String>,
        item: Option<String>,
    },
    /// The first line of the file that is, once trimmed, exactly this text (a prose heading
    /// such as `## fragment: in:Sensors`).
    Line(String),
}

impl Problem {
    /// The problem as a diagnostic on the offending text of its file, and that file's text,
    /// for `plugin add`, `remove` and `sync` to show the problem where it is: its own located
    /// diagnostic when it has one, else one made from its [`Place`] in the file it names, read
    /// from disk (a file of a plugin's tree, named by an absolute path). `None` when it names no
    /// such file, the file cannot be read, or the place is not in it.
    pub fn located_in_its_file(&self) -> Option<(Diagnostic, String)> {
        if let Some(located) = &self.located {
            return Some((**located).clone());
        }
        let path = self.path.as_deref().filter(|path| path.is_absolute())?;
        let text = crate::leaves::fs_util::read_input_text(path).ok()?;
        let span = self.span_in(&text, path)?;
        Some((self.refused_diagnostic(path, Some(span)), text))
    }

    /// Where the problem's [`Place`] is in `text`, the text of the file `path` (read as JSON
    /// when its name ends in `.json`, else as Markdown with frontmatter).
    pub fn span_in(&self, text: &str, path: &Utf8Path) -> Option<Range<usize>> {
        place_span::span_of_place(
            text,
            path.extension() == Some("json"),
            self.place.as_deref(),
        )
    }

    /// The problem as a `plugin-refused` error on `shown` at `span`, with its help.
    pub fn refused_diagnostic(
        &self,
        shown: impl Into<Utf8PathBuf>,
        span: Option<Range<usize>>,
    ) -> Diagnostic {
        let diagnostic = Diagnostic::error(
            crate::leaves::diagnostics::Code::PluginRefused,
            self.message.clone(),
        )
        .in_file(shown)
        .at_opt(span);
        match &self.help {
            Some(help) => diagnostic.with_help(help.clone()),
            None => diagnostic,
        }
    }

    pub fn new(message: impl Into<String>) -> Self {
        Self {
            plugin: None,
            path: None,
            message: message.into(),
            help: None,
            located: None,
            place: None,
        }
    }

    #[must_use]
    pub fn of_plugin(mut self, plugin: &str) -> Self {
        self.plugin = Some(plugin.to_owned());
        self
    }

    #[must_use]
    pub fn at_path(mut self, path: impl Into<Utf8PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    #[must_use]
    pub fn with_located(mut self, diagnostic: Diagnostic, text: String) -> Self {
        self.located = Some(Box::new((diagnostic, text)));
        self
    }

    /// The offending text is the value of `key` (a path of keys from the top of the file).
    #[must_use]
    pub fn at_key(self, key: &[&str]) -> Self {
        self.at_key_item_opt(key, None)
    }

    /// The offending text is the element `item` of `key`'s list (or `key`'s value `item`).
    #[must_use]
    pub fn at_key_item(self, key: &[&str], item: &str) -> Self {
        self.at_key_item_opt(key, Some(item))
    }

    #[must_use]
    pub fn at_key_item_opt(mut self, key: &[&str], item: Option<&str>) -> Self {
        self.place = Some(Box::new(Place::Key {
            path: key.iter().map(|part| (*part).to_owned()).collect(),
            item: item.map(str::to_owned),
        }));
        self
    }

    /// The offending text is the first line that reads `line` once trimmed.
    #[must_use]
    pub fn at_line(mut self, line: impl Into<String>) -> Self {
        self.place = Some(Box::new(Place::Line(line.into())));
        self
    }

    /// `plugin "x": path: message`, the one-line form.
    pub fn headline(&self) -> String {
        let mut line = String::new();
        if let Some(plugin) = &self.plugin {
            let _ = write!(line, "plugin \"{plugin}\": ");
        }
        if let Some(path) = &self.path {
            let _ = write!(line, "{path}: ");
        }
        line.push_str(&self.message);
        line
    }
}

/// Why a plugin command did not complete. Nothing in the install changed in any of these cases
/// (a transaction that had started was rolled back).
#[derive(Debug)]
pub enum PluginError {
    /// Guards refused the plugins, or an input is missing or malformed (exit 2).
    Refused(Vec<Problem>),
    /// The composed install does not compile; the composition was rolled back (exit 1). For
    /// `add`, `remove` and `sync` the diagnostics are on the files their text came from
    /// (`authored_files`: a path plugin's own file by its absolute path, a contribution, else
    /// the installed file, project-relative), and `sources` holds those files' texts; for the
    /// own-tree compile's `add_tree` they are on the installed files.
    CompileFailed {
        diagnostics: Vec<Diagnostic>,
        sources: std::collections::BTreeMap<Utf8PathBuf, String>,
        /// The text contributions wrote into the core stages, as the composition recorded it.
        contributed: contributed_text::ContributedText,
    },
    /// The file system, the lock, `git` or Bun failed (exit 2).
    Environment(Problem),
}

impl PluginError {
    /// The problems it names: the refusals, or the environment's one; none for a failed
    /// compile (its diagnostics say it).
    pub fn problems(&self) -> Vec<&Problem> {
        match self {
            Self::Refused(problems) => problems.iter().collect(),
            Self::Environment(problem) => vec![problem],
            Self::CompileFailed { .. } => Vec::new(),
        }
    }

    pub fn refused(problem: Problem) -> Self {
        Self::Refused(vec![problem])
    }

    pub fn environment(message: impl Into<String>) -> Self {
        Self::Environment(Problem::new(message))
    }
}

impl From<Problem> for PluginError {
    fn from(problem: Problem) -> Self {
        Self::Refused(vec![problem])
    }
}

/// The harness folder names the reference composer accepts in `AIDLC_HARNESS_DIR`, by harness.
pub fn harness_of_dir_name(name: &str) -> Option<crate::harness::Harness> {
    let trimmed = name.trim().trim_end_matches('/');
    crate::harness::Harness::ALL
        .into_iter()
        .find(|harness| harness.dir_name() == trimmed)
}
