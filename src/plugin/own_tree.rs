//! A plugin compiled in its own tree: the folder its author edits, with its manifest at the top
//! (docs/decisions.md D52).
//!
//! Data flow: the plugin's tree, read once (an editor's unsaved text over it) → composed as
//! `aidlc plugin add` composes it ([`crate::plugin::operations::add_tree`]) into a fresh copy of
//! the default framework in a temporary folder → that copy compiled → the diagnostics carried
//! back to the plugin's files, by their path in the plugin and their span as authored.
//!
//! Invariants:
//! - nothing is written into the plugin's tree (the composition reads it, as `plugin add` does);
//! - the composition and the compile are `plugin add`'s and the ordinary compile's, so the
//!   graph is, byte for byte, the one the same plugin added to the default framework gives;
//! - a diagnostic in a core stage a contribution changed is on the contribution when its span
//!   is in text the contribution wrote (`plugin::contributed_text`), else it stays on that
//!   stage, under the label [`COMPOSED_FRAMEWORK_LABEL`], with the composed text it points into
//!   (the mapping is `plugin::authored_files`', which `plugin add|sync` share);
//! - a refusal is on the file it names, at the key or line it names (`plugin::place_span`);
//!   only a refusal that names no file stays a problem.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::db::CompilerDatabase;
use crate::compile::discover::Layout;
use crate::compile::{self, CompileOutcome};
use crate::harness::Harness;
use crate::harness::environment::PROJECT_DIR_VARIABLES;
use crate::leaves::diagnostics::Diagnostic;
use crate::plugin::authored_files::{AuthoredFiles, Naming};
use crate::plugin::manifest;
use crate::plugin::placeholder_span::authored_span;
use crate::plugin::tree;
use crate::plugin::tree_source::Overlay;
use crate::plugin::{PluginError, Problem};

/// What a composed file's path starts with when it is not one of the plugin's files (a core
/// stage a contribution merged into, say): the file lives only in the temporary framework.
pub const COMPOSED_FRAMEWORK_LABEL: &str = "<composed default framework>";

/// The nearest folder from `cwd` upwards that holds a plugin manifest (the authored
/// `.aidlc-plugin/plugin.json`, or a host projection's). The search stops as the project
/// search does: never at or above the home folder, and not above the first folder holding
/// `.git`.
pub fn find_plugin_root(
    cwd: &Utf8Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Utf8PathBuf> {
    let home = env("HOME")
        .filter(|home| !home.is_empty())
        .map(Utf8PathBuf::from);
    for dir in cwd.ancestors() {
        if home.as_deref() == Some(dir) {
            return None;
        }
        if manifest::manifest_file(dir).is_some() {
            return Some(dir.to_owned());
        }
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            return None;
        }
    }
    None
}

/// The plugin root to treat as a plugin's own tree from `start`: only when no project is named
/// (`project_dir_given` for `--project-dir`, else `AIDLC_PROJECT_DIR` or `CLAUDE_PROJECT_DIR`
/// set and not empty), the nearest plugin manifest ([`find_plugin_root`]) when it is nearer
/// than the nearest project (strictly inside it, or with no project found). A folder that is
/// both a project and a plugin is the project. `aidlc compile` starts from the working folder,
/// `aidlc lsp` from the editor's workspace folder.
pub fn own_tree_root_from(
    project_dir_given: bool,
    start: &Utf8Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Utf8PathBuf> {
    let named = |name: &str| env(name).is_some_and(|value| !value.is_empty());
    if project_dir_given || PROJECT_DIR_VARIABLES.into_iter().any(named) {
        return None;
    }
    let plugin_root = find_plugin_root(start, env)?;
    match crate::compile::discover::find_project_dir(None, env, start) {
        Ok(project) if plugin_root == project || !plugin_root.starts_with(&project) => None,
        _ => Some(plugin_root),
    }
}

/// A plugin's own tree, compiled.
#[derive(Debug, Default)]
pub struct OwnTreeCompile {
    pub plugin: String,
    /// The harness it was composed for; `None` when none could be chosen (then `refusals`
    /// says why).
    pub harness: Option<Harness>,
    /// The compile's diagnostics, or the composition's refusals that name a file (each on
    /// that file, with a span on the offending text where it is found); files are relative
    /// to the plugin's root, or start with [`COMPOSED_FRAMEWORK_LABEL`].
    pub diagnostics: Vec<Diagnostic>,
    /// The text each diagnostic's file points into, by the diagnostic's path.
    pub sources: BTreeMap<Utf8PathBuf, String>,
    /// Whether the composition refused the plugin (then `compiled` is `None`, and the
    /// refusals are the diagnostics and `refusals`).
    pub refused: bool,
    /// Composition refusals that name no file of the plugin's or of the framework's.
    pub refusals: Vec<Problem>,
    /// The manifest the plugin was read from, relative to its root (where a refusal without a
    /// file is shown by the language server), when it has one.
    pub manifest: Option<Utf8PathBuf>,
    /// The composition's warnings (as `plugin add` prints them).
    pub warnings: Vec<Problem>,
    /// The compile of the composed framework, when the plugin could be composed.
    pub compiled: Option<CompileOutcome>,
}

impl OwnTreeCompile {
    pub fn n_errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn n_warnings(&self) -> usize {
        self.diagnostics.len() - self.n_errors()
    }
}

/// The harness a plugin's own tree is composed for: `requested` (`--harness`); else Claude
/// Code's when the tree has its authored manifest (`.aidlc-plugin/plugin.json`, which names no
/// harness), as `aidlc plugin add` defaults; else the harness of the one host projection it
/// carries (`.codex-plugin/plugin.json` composes for Codex).
///
/// # Errors
///
/// The tree carries host projections of more than one harness, or only one no harness owns
/// (`.plugin`), and no harness is requested: the problem names them and `--harness`.
pub fn own_tree_harness(
    plugin_root: &Utf8Path,
    requested: Option<Harness>,
) -> Result<Harness, Problem> {
    if let Some(harness) = requested {
        return Ok(harness);
    }
    if plugin_root.join(manifest::AUTHORED_MANIFEST).is_file() {
        return Ok(Harness::Claude);
    }
    let projections: Vec<(&str, Option<Harness>)> = manifest::HOST_MANIFEST_DIRS
        .into_iter()
        .filter(|(folder, _)| plugin_root.join(folder).join("plugin.json").is_file())
        .collect();
    match projections.as_slice() {
        [(_, Some(harness))] => Ok(*harness),
        [] => Ok(Harness::Claude),
        _ => {
            let named: Vec<String> = projections
                .iter()
                .map(|(folder, harness)| match harness {
                    Some(harness) => format!("{folder}/plugin.json ({})", harness.name()),
                    None => format!("{folder}/plugin.json (no one harness)"),
                })
                .collect();
            let choices: Vec<String> = projections
                .iter()
                .filter_map(|(_, harness)| *harness)
                .map(|harness| format!("--harness {}", harness.name()))
                .collect();
            let which = if projections.len() == 1 {
                "a host projection of no one harness"
            } else {
                "more than one host projection"
            };
            Err(Problem::new(format!(
                "the plugin's tree carries {which}, {}, and no {}: which harness to compose it for is not known",
                named.join(" and "),
                manifest::AUTHORED_MANIFEST
            ))
            .with_help(if choices.is_empty() {
                "choose the harness with --harness (claude, codex, kiro, kiro-ide, cursor or opencode)".to_owned()
            } else {
                format!("choose the harness with {}", choices.join(" or "))
            }))
        }
    }
}

/// Compile the plugin whose own tree is `plugin_root`, composed into a temporary copy of the
/// default framework for the harness [`own_tree_harness`] picks from `requested`.
///
/// # Errors
///
/// A problem of the machine's when the temporary framework cannot be made or the composition
/// fails for a reason of the machine's (a refusal of the plugin's content, and of the harness
/// choice, is a value in the result, not an error).
pub fn compile_own_tree(
    plugin_root: &Utf8Path,
    requested: Option<Harness>,
) -> Result<OwnTreeCompile, Problem> {
    let plugin_root = plugin_root
        .canonicalize_utf8()
        .map_err(|error| Problem::new(format!("cannot open {plugin_root}: {error}")))?;
    compile_own_tree_from(&plugin_root, requested, &tree::FromDisk, &Overlay::new())
}

/// [`compile_own_tree`] of the plugin at `plugin_root` (canonical), its tree and its siblings'
/// read from `trees` (the language server's warm trees, docs/decisions.md D54), with
/// `overlay` the editor's texts those trees were read with (for the manifest a refusal is
/// shown on).
pub fn compile_own_tree_from(
    plugin_root: &Utf8Path,
    requested: Option<Harness>,
    trees: &dyn tree::TreeReader,
    overlay: &Overlay,
) -> Result<OwnTreeCompile, Problem> {
    let plugin_root = plugin_root.to_owned();
    let harness = match own_tree_harness(&plugin_root, requested) {
        Ok(harness) => harness,
        Err(problem) => {
            return Ok(OwnTreeCompile {
                plugin: manifest_name(&plugin_root, overlay),
                refused: true,
                refusals: vec![problem],
                manifest: manifest_in_plugin(&plugin_root),
                ..OwnTreeCompile::default()
            });
        }
    };
    let tree = trees.read_tree(&plugin_root);
    let temporary = tempfile::Builder::new()
        .prefix("aidlc-own-tree-")
        .tempdir()
        .map_err(|error| Problem::new(format!("cannot create a temporary folder: {error}")))?;
    let project_dir = Utf8PathBuf::from_path_buf(temporary.path().join("framework"))
        .map_err(|_| Problem::new("the temporary folder's path is not UTF-8"))?;
    crate::compile::framework::init_project(&project_dir, harness, false)
        .map_err(|error| Problem::new(error.to_string()))?;
    // The user's `AIDLC_*_DIR` overrides are about their project, not this copy.
    let layout = Layout::new(&project_dir, harness, &|_| None);
    let tree = match tree {
        Ok(tree) => tree,
        Err(problems) => {
            return Ok(refused(
                manifest_name(&plugin_root, overlay),
                &plugin_root,
                problems,
                &layout,
                overlay,
            ));
        }
    };
    let authored = AuthoredFiles::of_trees([&tree], &layout);
    let in_plugin = |source: &Utf8Path| {
        source
            .strip_prefix(&plugin_root)
            .unwrap_or(source)
            .to_owned()
    };
    let labelled = |installed: &Utf8Path| Utf8Path::new(COMPOSED_FRAMEWORK_LABEL).join(installed);
    let naming = Naming {
        authored: &in_plugin,
        installed: &labelled,
    };
    let name = tree.name().to_owned();
    let (diagnostics, sources, warnings, compiled) =
        match crate::plugin::operations::add_tree(&layout, tree, trees) {
            Ok(outcome) => {
                let mut db = CompilerDatabase::default();
                let (_inputs, compiled) = compile::load_and_compile_once(&mut db, &layout);
                let texts = compile::source_texts(&db, &compiled.diagnostics);
                let (diagnostics, sources) = authored
                    .with_contributed(outcome.contributed)
                    .carried_back(&compiled.diagnostics, &texts, &naming);
                (diagnostics, sources, outcome.warnings, Some(compiled))
            }
            Err(PluginError::CompileFailed {
                diagnostics,
                sources,
                contributed,
            }) => {
                let (diagnostics, sources) = authored.with_contributed(contributed).carried_back(
                    &diagnostics,
                    &sources,
                    &naming,
                );
                (diagnostics, sources, Vec::new(), None)
            }
            Err(PluginError::Refused(problems)) => {
                return Ok(refused(name, &plugin_root, problems, &layout, overlay));
            }
            Err(PluginError::Environment(problem)) => return Err(problem),
        };
    Ok(OwnTreeCompile {
        plugin: name,
        harness: Some(layout.harness),
        diagnostics,
        sources,
        manifest: manifest_in_plugin(&plugin_root),
        warnings,
        compiled,
        ..OwnTreeCompile::default()
    })
}

fn manifest_name(plugin_root: &Utf8Path, overlay: &Overlay) -> String {
    manifest::read_manifest_over(plugin_root, overlay).map_or_else(
        |_| plugin_root.file_name().unwrap_or_default().to_owned(),
        |manifest| manifest.name,
    )
}

fn manifest_in_plugin(plugin_root: &Utf8Path) -> Option<Utf8PathBuf> {
    manifest::manifest_file(plugin_root)
        .and_then(|path| path.strip_prefix(plugin_root).ok().map(Utf8Path::to_owned))
}

/// The composition refused the plugin: each refusal that names a file becomes a diagnostic on
/// it (the plugin's file by its path in the plugin, a framework file under
/// [`COMPOSED_FRAMEWORK_LABEL`]); the others stay problems.
fn refused(
    plugin: String,
    plugin_root: &Utf8Path,
    problems: Vec<Problem>,
    layout: &Layout,
    overlay: &Overlay,
) -> OwnTreeCompile {
    let mut diagnostics = Vec::new();
    let mut sources = BTreeMap::new();
    let mut refusals = Vec::new();
    for problem in problems {
        match refusal_on_its_file(&problem, plugin_root, layout.harness, overlay) {
            Some((diagnostic, text)) => {
                if let (Some(file), Some(text)) = (&diagnostic.file, text) {
                    sources.insert(file.clone(), text);
                }
                diagnostics.push(diagnostic);
            }
            None => refusals.push(problem),
        }
    }
    OwnTreeCompile {
        plugin,
        harness: Some(layout.harness),
        diagnostics,
        sources,
        refused: true,
        refusals,
        manifest: manifest_in_plugin(plugin_root),
        ..OwnTreeCompile::default()
    }
}

/// A refusal that names its file, as a diagnostic on it: a framework file (project-relative)
/// under [`COMPOSED_FRAMEWORK_LABEL`]; a plugin's file by its path in the plugin, with the span
/// carried back to the authored text when the text the composition checked is not that text
/// (a copy with `{{HARNESS_DIR}}` substituted). `None` when the refusal names no file, or one
/// outside the plugin and the framework (a sibling plugin's).
fn refusal_on_its_file(
    problem: &Problem,
    plugin_root: &Utf8Path,
    harness: Harness,
    overlay: &Overlay,
) -> Option<(Diagnostic, Option<String>)> {
    let path = problem.path()?;
    let mut diagnostic = problem.as_compile_diagnostic();
    if path.is_relative() {
        diagnostic.file = Some(Utf8Path::new(COMPOSED_FRAMEWORK_LABEL).join(path));
        return Some((diagnostic, problem.text.clone()));
    }
    // The tree read it below its canonical root.
    diagnostic.file = Some(path.strip_prefix(plugin_root).ok()?.to_owned());
    // The text of `path` as the composition read it: the unsaved text, else the disk's.
    let authored = overlay.get(path).cloned();
    match authored.or_else(|| crate::leaves::fs_util::read_input_text(path).ok()) {
        Some(authored) => {
            diagnostic.span = span_in_authored_text(problem, harness, &authored);
            Some((diagnostic, Some(authored)))
        }
        None => Some((diagnostic, problem.text.clone())),
    }
}

/// The problem's span in `authored`, the text of its plugin file as authored (the editor's or
/// the disk's): its own span, carried across `{{HARNESS_DIR}}` when the text the composition
/// checked is not `authored`.
pub fn span_in_authored_text(
    problem: &Problem,
    harness: Harness,
    authored: &str,
) -> Option<std::ops::Range<usize>> {
    let span = problem.diagnostic.span.clone()?;
    Some(match &problem.text {
        Some(checked) if checked != authored => authored_span(authored, harness.dir_name(), span),
        _ => span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_project_turns_the_own_tree_off_and_an_empty_variable_does_not_name_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        std::fs::create_dir_all(root.join(".plugin")).unwrap();
        std::fs::write(root.join(".plugin/plugin.json"), "{}").unwrap();
        let own_tree = |given: bool, variable: Option<(&str, &str)>| {
            let env = move |name: &str| {
                variable
                    .filter(|(set, _)| *set == name)
                    .map(|(_, value)| value.to_owned())
            };
            own_tree_root_from(given, &root, &env)
        };
        assert_eq!(own_tree(false, None), Some(root.clone()));
        assert_eq!(own_tree(true, None), None);
        for variable in PROJECT_DIR_VARIABLES {
            assert_eq!(own_tree(false, Some((variable, "/elsewhere"))), None);
            assert_eq!(own_tree(false, Some((variable, ""))), Some(root.clone()));
        }
    }

    #[test]
    fn the_harness_is_the_flags_else_the_authored_trees_else_the_one_projections() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        let manifest = |folder: &str| {
            std::fs::create_dir_all(root.join(folder)).unwrap();
            std::fs::write(root.join(folder).join("plugin.json"), "{}").unwrap();
        };
        manifest(".kiro-plugin");
        assert_eq!(own_tree_harness(&root, None), Ok(Harness::Kiro));
        assert_eq!(
            own_tree_harness(&root, Some(Harness::KiroIde)),
            Ok(Harness::KiroIde)
        );
        manifest(".plugin");
        let refusal = own_tree_harness(&root, None).unwrap_err();
        assert!(
            refusal.message().contains(
                ".plugin/plugin.json (no one harness) and .kiro-plugin/plugin.json (kiro)"
            ),
            "{refusal:?}"
        );
        assert_eq!(
            refusal.help(),
            Some("choose the harness with --harness kiro")
        );
        std::fs::remove_dir_all(root.join(".kiro-plugin")).unwrap();
        let refusal = own_tree_harness(&root, None).unwrap_err();
        assert!(
            refusal
                .message()
                .contains("a host projection of no one harness"),
            "{refusal:?}"
        );
        manifest(".aidlc-plugin");
        assert_eq!(own_tree_harness(&root, None), Ok(Harness::Claude));
    }

    #[test]
    fn the_plugin_root_is_the_nearest_folder_with_a_manifest_below_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/p/.aidlc-plugin")).unwrap();
        std::fs::write(root.join("repo/p/.aidlc-plugin/plugin.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("repo/p/stages/construction")).unwrap();
        let none = |_: &str| None;
        assert_eq!(
            find_plugin_root(&root.join("repo/p/stages/construction"), &none),
            Some(root.join("repo/p"))
        );
        assert_eq!(find_plugin_root(&root.join("repo"), &none), None);
        let home = |name: &str| (name == "HOME").then(|| root.join("repo/p").to_string());
        assert_eq!(find_plugin_root(&root.join("repo/p/stages"), &home), None);
    }
}
