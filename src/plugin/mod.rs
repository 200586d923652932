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

use crate::leaves::diagnostics::{Code, Diagnostic};

/// One problem a plugin command found, as a value (the CLI renders it): a diagnostic of the
/// plugin it names, with the text its span indexes.
///
/// Invariants:
/// - the span is found where the problem is made, in the text the command read (an editor's
///   unsaved text in the language server), and `text` is that text: present exactly when
///   `diagnostic.span` is;
/// - `diagnostic.message` is the problem's sentence; `diagnostic.label`, when set, is what a
///   compile diagnostic at the span said (a YAML error under a refused contribution);
/// - `diagnostic.file` is a path in a plugin's tree (absolute) or in the project
///   (project-relative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The plugin it is about, when one is.
    pub plugin: Option<String>,
    pub diagnostic: Box<Diagnostic>,
    pub text: Option<String>,
}

impl Problem {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            plugin: None,
            diagnostic: Box::new(Diagnostic::error(Code::PluginRefused, message)),
            text: None,
        }
    }

    /// A warning: the composition goes on.
    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            plugin: None,
            diagnostic: Box::new(Diagnostic::warning(Code::PluginCompositionWarning, message)),
            text: None,
        }
    }

    pub fn message(&self) -> &str {
        &self.diagnostic.message
    }

    pub fn help(&self) -> Option<&str> {
        self.diagnostic.help.as_deref()
    }

    pub fn path(&self) -> Option<&Utf8Path> {
        self.diagnostic.file.as_deref()
    }

    #[must_use]
    pub fn of_plugin(mut self, plugin: &str) -> Self {
        self.plugin = Some(plugin.to_owned());
        self
    }

    /// The problem is about `plugin`, at its file (or its manifest) `path`.
    #[must_use]
    pub fn of_plugin_at(self, plugin: &str, path: impl Into<Utf8PathBuf>) -> Self {
        self.of_plugin(plugin).at_path(path)
    }

    #[must_use]
    pub fn at_path(mut self, path: impl Into<Utf8PathBuf>) -> Self {
        self.diagnostic.file = Some(path.into());
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.diagnostic.help = Some(help.into());
        self
    }

    /// The problem is what the compile diagnostic `located` found in `text`: its code and span,
    /// its message as the label (when it is not the sentence), its help when the problem has
    /// none.
    #[must_use]
    pub fn with_located(mut self, located: Diagnostic, text: String) -> Self {
        self.diagnostic.code = located.code;
        if located.message != self.diagnostic.message {
            self.diagnostic.label = Some(located.message);
        }
        if self.diagnostic.help.is_none() {
            self.diagnostic.help = located.help;
        }
        self.at_span(located.span, text)
    }

    /// The offending text is the value of `key` (a path of keys from the top) of `text`, the
    /// text of the problem's file (see [`place_span::key_span`]).
    #[must_use]
    pub fn at_key_in(self, text: &str, key: &[&str]) -> Self {
        self.at_key_item_in(text, key, None)
    }

    /// The offending text is the element `item` of `key`'s list (or `key`'s value `item`) in
    /// `text`, the text of the problem's file.
    #[must_use]
    pub fn at_key_item_in(self, text: &str, key: &[&str], item: Option<&str>) -> Self {
        let is_json = self
            .path()
            .is_some_and(|path| path.extension() == Some("json"));
        let span = place_span::key_span(text, is_json, key, item);
        self.at_span(span, text.to_owned())
    }

    /// The offending text is the first line of `text` that reads `line` once trimmed.
    #[must_use]
    pub fn at_line_in(self, text: &str, line: &str) -> Self {
        let span = place_span::line_span(text, line);
        self.at_span(span, text.to_owned())
    }

    fn at_span(mut self, span: Option<Range<usize>>, text: String) -> Self {
        self.text = span.is_some().then_some(text);
        self.diagnostic.span = span;
        self
    }

    /// The problem as a compile shows it on its file: what a compile diagnostic at the span
    /// said, else the sentence.
    pub fn as_compile_diagnostic(&self) -> Diagnostic {
        let mut diagnostic = (*self.diagnostic).clone();
        if let Some(label) = diagnostic.label.take() {
            diagnostic.message = label;
        }
        diagnostic
    }

    /// `plugin "x": path: message`, the one-line form.
    pub fn headline(&self) -> String {
        let mut line = String::new();
        if let Some(plugin) = &self.plugin {
            let _ = write!(line, "plugin \"{plugin}\": ");
        }
        if let Some(path) = self.path() {
            let _ = write!(line, "{path}: ");
        }
        line.push_str(self.message());
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

    /// The error in one line: its problems' headlines, or a failed compile's error count.
    pub fn headline(&self) -> String {
        if let Self::CompileFailed { diagnostics, .. } = self {
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            return format!(
                "the composed install does not compile ({})",
                crate::leaves::english::counted(errors, "error")
            );
        }
        let headlines: Vec<String> = self.problems().iter().map(|p| p.headline()).collect();
        headlines.join("; ")
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

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "{\n  \"name\": \"acme\",\n  \"dependencies\": [\"lib@nope\"]\n}\n";

    #[test]
    fn a_problem_carries_the_span_of_its_key_and_the_text_it_indexes_from_where_it_is_made() {
        let problem = Problem::new("not a version requirement")
            .of_plugin("acme")
            .at_path("/plugins/acme/.aidlc-plugin/plugin.json")
            .at_key_item_in(MANIFEST, &["dependencies"], Some("lib@nope"));
        let span = problem
            .diagnostic
            .span
            .clone()
            .expect("the item is in the text");
        assert_eq!(&MANIFEST[span], "\"lib@nope\"");
        assert_eq!(problem.text.as_deref(), Some(MANIFEST));
        assert_eq!(problem.diagnostic.code, Code::PluginRefused);
        assert_eq!(
            problem.headline(),
            "plugin \"acme\": /plugins/acme/.aidlc-plugin/plugin.json: not a version requirement"
        );
    }

    #[test]
    fn a_key_the_text_lacks_leaves_neither_a_span_nor_a_text() {
        let problem = Problem::warning("no version")
            .at_path("/plugins/acme/.aidlc-plugin/plugin.json")
            .at_key_in(MANIFEST, &["version"]);
        assert_eq!(problem.diagnostic.span, None);
        assert_eq!(problem.text, None);
        assert!(!problem.diagnostic.is_error());
    }

    #[test]
    fn a_located_problem_keeps_its_sentence_and_shows_the_compile_s_words_in_a_compile() {
        let text = "---\ntarget: [\n---\n";
        let located = Diagnostic::error(Code::YamlSyntax, "unclosed flow sequence")
            .in_file("/plugins/acme/contributions/x.md")
            .at(12..13)
            .with_help("close the list");
        let problem = Problem::new("the contribution's frontmatter is not YAML")
            .at_path("/plugins/acme/contributions/x.md")
            .with_located(located, text.to_owned());
        assert_eq!(
            problem.message(),
            "the contribution's frontmatter is not YAML"
        );
        assert_eq!(problem.diagnostic.span, Some(12..13));
        assert_eq!(problem.help(), Some("close the list"));
        let shown = problem.as_compile_diagnostic();
        assert_eq!(shown.message, "unclosed flow sequence");
        assert_eq!(shown.code, Code::YamlSyntax);
        assert_eq!(shown.label, None);
    }
}
