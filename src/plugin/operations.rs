//! The four commands: `add`, `remove`, `sync` (recompose every recorded plugin, plus the host
//! plugin roots the reference's `SessionStart` hook passes in the environment) and `list`.
//!
//! Each composing command holds the workspace lock (the audit lock the reference composer holds,
//! D2) for its whole run, first finishes what a killed run left (`journal::recover`), then reads
//! the lock file, the selection and the plugins, plans, parses every path of the plan into the
//! project (`fs_util::contained::ProjectPath`, D56), and applies the plan in one transaction:
//! the changes, the compile (`compile::load_and_compile_once` and the write path of `aidlc
//! compile`), the conductor's generated files, then the commit. Any failure rolls back. `list`
//! takes no lock and writes nothing: it reports a waiting journal and leaves it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile;
use crate::compile::db::CompilerDatabase;
use crate::compile::discover::Layout;
use crate::compile::stage_graph::plugins_key::{Selection, selection_of_text};
use crate::compile::syntax::vocabulary::PHASES;
use crate::leaves::fs_util::contained::ProjectPath;
use crate::plugin::authored_files::{AuthoredFiles, Naming};
use crate::plugin::compose::{self, ChosenPlugin, Plan};
use crate::plugin::contributed_text::ContributedText;
use crate::plugin::journal::{self, Recovery, Transaction};
use crate::plugin::lock_file::{self, Lock, LockedPlugin, SourceKind};
use crate::plugin::source::{self, SourceSpec};
use crate::plugin::tree::{FromDisk, PluginTree, TreeReader};
use crate::plugin::{PluginError, Problem, composed_stages_in_graph, conductor, sync_record};

/// Test hook: pause this many milliseconds after each change of a transaction.
pub const PAUSE_VARIABLE: &str = "AIDLC_TEST_PLUGIN_PAUSE_MS";

#[derive(Debug, Clone, Default)]
pub struct ComposeOutcome {
    pub recovered: bool,
    /// The plugins composed now, in composition order.
    pub plugins: Vec<String>,
    /// Project-relative paths written and removed.
    pub written: Vec<String>,
    pub removed: Vec<String>,
    pub warnings: Vec<Problem>,
    /// The compile's stage and sensor counts, when it ran.
    pub compiled: Option<(usize, usize)>,
    pub compile_warnings: usize,
    pub conductor_refreshed: bool,
    /// A `sync` proved by its record that nothing changed, without reading the plugin trees.
    pub proved_by_record: bool,
    /// Why the install was compiled, when it was.
    pub compile_reason: CompileReason,
    /// The text contributions wrote into the core stages, as the composition recorded it.
    pub contributed: ContributedText,
}

/// Why a composition compiled the install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompileReason {
    /// A file the compile reads changed.
    #[default]
    FilesChanged,
    /// No file changed, but the compiled graph lacked a stage an enabled plugin composed.
    GraphLackedComposedStages,
}

/// One row of `plugin list` (its JSON form: the fields in this order).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ListedPlugin {
    pub name: String,
    pub version: String,
    pub enabled: bool,
    pub kind: Option<SourceKind>,
    pub source: Option<String>,
    pub commit: Option<String>,
    /// Installed copies whose bytes differ from what was composed (or are missing).
    pub changed_files: Vec<String>,
}

/// What `plugin list` prints (its JSON form: `selection` and `plugins`, in this order).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listing {
    /// An interrupted composition's journal waits for the next command that writes.
    #[serde(skip)]
    pub journal_waiting: bool,
    pub selection: Option<BTreeSet<String>>,
    pub plugins: Vec<ListedPlugin>,
}

fn io_error(what: &str, error: &std::io::Error) -> PluginError {
    PluginError::environment(format!("{what}: {error}"))
}

/// The enabled set in the file at `harness_json`, or `None` when every plugin is enabled.
fn read_selection(harness_json: &Utf8Path) -> Result<Selection, Problem> {
    let text = match crate::leaves::fs_util::read_input_text(harness_json) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => return Ok(None),
        Err(error) => {
            return Err(
                Problem::new(format!("cannot read the file: {error}")).at_path(harness_json)
            );
        }
    };
    selection_of_text(&text).map_err(|error| {
        Problem::new(error.message)
            .at_path(harness_json)
            .with_help(error.help)
    })
}

/// `path` relative to the project folder when it is inside it, else as it is.
fn source_text(layout: &Layout, path: &Utf8Path) -> String {
    match path.strip_prefix(&layout.project_dir) {
        Ok(relative) if !relative.as_str().is_empty() => {
            crate::leaves::fs_util::to_posix(relative.as_str())
        }
        _ => relative_from(&layout.project_dir, path).unwrap_or_else(|| path.to_string()),
    }
}

/// `to` relative to `from` with `..` steps, when both are absolute.
fn relative_from(from: &Utf8Path, to: &Utf8Path) -> Option<String> {
    if !from.is_absolute() || !to.is_absolute() {
        return None;
    }
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    if common <= 1 {
        return None;
    }
    let parts: Vec<&str> = std::iter::repeat_n("..", from.components().count() - common)
        .chain(to.components().skip(common).map(|part| part.as_str()))
        .collect();
    Some(parts.join("/"))
}

fn canonical(path: &Utf8Path) -> Result<Utf8PathBuf, PluginError> {
    let real = std::fs::canonicalize(path).map_err(|error| {
        PluginError::refused(Problem::new(format!(
            "cannot open the plugin folder {path}: {error}"
        )))
    })?;
    Utf8PathBuf::from_path_buf(real).map_err(|_| {
        PluginError::environment(format!("{path} resolves to a path that is not UTF-8"))
    })
}

fn path_plugin(
    layout: &Layout,
    trees: &dyn TreeReader,
    root: &Utf8Path,
    given: Option<&str>,
) -> Result<ChosenPlugin, PluginError> {
    let root = canonical(root)?;
    let tree = trees.read_tree(&root).map_err(PluginError::Refused)?;
    Ok(path_plugin_of_tree(layout, tree, given))
}

/// The lock record of `tree` read from `source`, before the plan fills its `files` and
/// `adopted` (and before a git plugin's `rev`, `commit` and `vendored` are set).
fn locked_plugin(tree: &PluginTree, kind: SourceKind, source: String) -> LockedPlugin {
    LockedPlugin {
        version: tree.manifest.version_text(),
        kind,
        source,
        rev: None,
        commit: None,
        vendored: None,
        integrity: tree.integrity.clone(),
        dependencies: tree
            .manifest
            .dependencies
            .iter()
            .map(|d| d.text.clone())
            .collect(),
        files: BTreeMap::new(),
        adopted: Vec::new(),
    }
}

/// A plugin read from a folder (`tree.root`, canonical), as `add PATH` chooses it.
fn path_plugin_of_tree(layout: &Layout, tree: PluginTree, given: Option<&str>) -> ChosenPlugin {
    let source = given.map_or_else(|| source_text(layout, &tree.root), str::to_owned);
    let record = locked_plugin(&tree, SourceKind::Path, source);
    ChosenPlugin {
        tree,
        record,
        extra_files: Vec::new(),
    }
}

fn git_plugin(
    layout: &Layout,
    url: &str,
    rev: Option<&str>,
    cwd: &Utf8Path,
) -> Result<ChosenPlugin, PluginError> {
    let clone = source::clone_repository(url, rev, cwd)?;
    let tree = FromDisk
        .read_tree(&clone.root)
        .map_err(PluginError::Refused)?;
    let vendored = layout.project_dir.join("aidlc/plugins").join(tree.name());
    let extra_files = source::vendored_files(&clone.root, &vendored)
        .map_err(|error| io_error("cannot read the clone", &error))?;
    let record = LockedPlugin {
        rev: rev.map(str::to_owned),
        commit: Some(clone.commit.clone()),
        vendored: Some(source_text(layout, &vendored)),
        ..locked_plugin(&tree, SourceKind::Git, url.to_owned())
    };
    // The plan reads the plugin's files from the tree it was given; later syncs read the kept
    // copy, whose files are the clone's.
    Ok(ChosenPlugin {
        tree,
        record,
        extra_files,
    })
}

/// Where the plugin a lock records is read from: its path, or its kept git tree.
fn recorded_root(layout: &Layout, record: &LockedPlugin) -> Utf8PathBuf {
    // Joining an absolute path gives that path.
    layout.project_dir.join(match record.kind {
        SourceKind::Path => record.source.as_str(),
        SourceKind::Git => record.vendored.as_deref().unwrap_or_default(),
    })
}

/// A plugin the lock records, read again from where it came from.
fn recorded_plugin(
    layout: &Layout,
    trees: &dyn TreeReader,
    name: &str,
    record: &LockedPlugin,
) -> Result<ChosenPlugin, PluginError> {
    let root = recorded_root(layout, record);
    if !root.is_dir() {
        return Err(PluginError::refused(
            Problem::new(format!(
                "its source {} is not there",
                record.vendored.as_deref().unwrap_or(&record.source)
            ))
            .of_plugin(name)
            .with_help(format!("restore it, or run `aidlc plugin remove {name}`")),
        ));
    }
    let mut chosen = path_plugin(layout, trees, &root, Some(&record.source))?;
    if chosen.tree.name() != name {
        return Err(PluginError::refused(
            Problem::new(format!(
                "its source now holds plugin \"{}\"",
                chosen.tree.name()
            ))
            .of_plugin_at(name, &record.source),
        ));
    }
    if record.kind == SourceKind::Git {
        if chosen.tree.integrity != record.integrity {
            return Err(PluginError::refused(
                Problem::new(format!(
                    "the kept copy of its git tree ({}) changed since commit {} was composed",
                    record.vendored.as_deref().unwrap_or_default(),
                    record.commit.as_deref().unwrap_or("?")
                ))
                .of_plugin(name)
                .with_help(format!(
                    "undo the edit, or add the plugin again: aidlc plugin add {}",
                    record.source
                )),
            ));
        }
        chosen.record = record.clone();
        chosen.record.files.clear();
        chosen.record.adopted.clear();
        // A git plugin's root is its kept copy: its files are kept where they are.
        chosen.extra_files = source::vendored_files(&root, &root)
            .map_err(|error| io_error("cannot read the kept copy", &error))?;
    }
    Ok(chosen)
}

/// Add a dependency that sits beside a path plugin (`<parent>/<name>`), transitively.
fn add_sibling_dependencies(
    layout: &Layout,
    trees: &dyn TreeReader,
    chosen: &mut Vec<ChosenPlugin>,
) -> Result<(), PluginError> {
    loop {
        let missing: Option<(Utf8PathBuf, String)> = chosen.iter().find_map(|plugin| {
            plugin
                .tree
                .manifest
                .dependencies
                .iter()
                .find_map(|dependency| {
                    let present = dependency.is_core()
                        || chosen
                            .iter()
                            .any(|other| other.tree.name() == dependency.name);
                    let sibling = plugin.tree.root.parent()?.join(&dependency.name);
                    (!present && plugin.record.kind == SourceKind::Path && sibling.is_dir())
                        .then(|| (sibling, dependency.name.clone()))
                })
        });
        let Some((sibling, name)) = missing else {
            return Ok(());
        };
        let plugin = path_plugin(layout, trees, &sibling, None)?;
        if plugin.tree.name() != name {
            return Ok(());
        }
        chosen.push(plugin);
    }
}

/// Folders never removed when a removal leaves them empty.
fn kept_dirs(layout: &Layout) -> BTreeSet<Utf8PathBuf> {
    let harness_root = layout.project_dir.join(layout.harness.dir_name());
    let phases = PHASES.iter().map(|phase| layout.stages_dir.join(phase));
    [
        harness_root.clone(),
        harness_root.join("knowledge"),
        harness_root.join("tools"),
        harness_root.join("tools/data"),
        harness_root.join("skills"),
        layout.stages_dir.clone(),
        layout.sensors_dir.clone(),
        layout.agents_dir.clone(),
        layout.scopes_dir.clone(),
        layout.project_dir.join("aidlc"),
    ]
    .into_iter()
    .chain(phases)
    .collect()
}

/// The test hook's pause; a value that is not a number of milliseconds is refused.
fn pause() -> Result<Option<std::time::Duration>, PluginError> {
    let Ok(value) = std::env::var(PAUSE_VARIABLE) else {
        return Ok(None);
    };
    value
        .trim()
        .parse::<u64>()
        .map(|milliseconds| Some(std::time::Duration::from_millis(milliseconds)))
        .map_err(|_| {
            PluginError::environment(format!(
                "{PAUSE_VARIABLE}={value:?} is not a number of milliseconds; unset it or give one"
            ))
        })
}

/// The chosen set: what the lock records (less `removed`, replaced by `added` of the same
/// name), plus `added`.
fn chosen_plugins(
    layout: &Layout,
    trees: &dyn TreeReader,
    previous: &Lock,
    added: Vec<ChosenPlugin>,
    removed: &[String],
) -> Result<Vec<ChosenPlugin>, PluginError> {
    let mut chosen = Vec::new();
    let mut problems = Vec::new();
    for (name, record) in &previous.plugins {
        if removed.contains(name) || added.iter().any(|plugin| plugin.tree.name() == name) {
            continue;
        }
        match recorded_plugin(layout, trees, name, record) {
            Ok(plugin) => chosen.push(plugin),
            Err(PluginError::Refused(more)) => problems.extend(more),
            Err(other) => return Err(other),
        }
    }
    if !problems.is_empty() {
        return Err(PluginError::Refused(problems));
    }
    // No recorded plugin of an added one's name is left, and `added` names each plugin once.
    chosen.extend(added);
    Ok(chosen)
}

/// Recover, then compose `added` into the recorded plugins less `removed`. `sync_roots` are the
/// plugin roots a `sync` was given, for its no-op record (`None` for `add` and `remove`, which
/// never skip the plan). A `sync` whose record proves nothing changed (`sync_record::check`) and
/// whose compiled graph holds the stages the record names reads no plugin tree; a plan that
/// changes nothing writes that record (docs/decisions.md D51).
fn compose_under_lock(
    layout: &Layout,
    trees: &dyn TreeReader,
    sync_roots: Option<&[Utf8PathBuf]>,
    failed_compile_files: FailedCompileFiles,
    prepare: impl FnOnce(&Lock) -> Result<(Vec<ChosenPlugin>, Vec<String>), PluginError>,
) -> Result<ComposeOutcome, PluginError> {
    let _lock = crate::leaves::audit_lock::acquire_until_stale(&layout.project_dir)
        .map_err(|e| PluginError::environment(e.to_string()))?;
    let started_ns = crate::compile::up_to_date::now_ns();
    let recovered = journal::recover(&layout.project_dir)?;
    if let Some(roots) = sync_roots
        && recovered == Recovery::Clean
        && let Some(nothing) = sync_record::check(layout, roots)
        && !composed_stages_in_graph::graph_lacks_stages(layout, &nothing.composed_stages)
    {
        return Ok(ComposeOutcome {
            plugins: nothing.plugins,
            warnings: nothing.warnings,
            proved_by_record: true,
            ..ComposeOutcome::default()
        });
    }
    let harness_dir = layout.harness.dir_name();
    let previous = lock_file::read_lock(&layout.project_dir, harness_dir)?;
    let enabled = read_selection(&layout.harness_json_path)?;
    let (added, removed) = prepare(&previous)?;
    let given_roots: Vec<Utf8PathBuf> = previous
        .plugins
        .iter()
        .filter(|(name, _)| !removed.contains(name))
        .map(|(_, record)| recorded_root(layout, record))
        .chain(sync_roots.unwrap_or_default().iter().cloned())
        .collect();
    let mut chosen = chosen_plugins(layout, trees, &previous, added, &removed)?;
    add_sibling_dependencies(layout, trees, &mut chosen)?;
    let chosen = compose::order_plugins(chosen).map_err(PluginError::Refused)?;
    let authored = authored_files_of(layout, &chosen, failed_compile_files);
    let names: Vec<String> = chosen
        .iter()
        .map(|plugin| plugin.tree.name().to_owned())
        .collect();
    let mut plan =
        compose::plan(layout, &previous, chosen, enabled.as_ref()).map_err(PluginError::Refused)?;
    let composed_slugs =
        composed_stages_in_graph::composed_stage_slugs(layout, &plan.lock, &enabled);
    let graph_lacked_composed_stages = !plan.install_changed
        && composed_stages_in_graph::graph_lacks_stages(layout, &composed_slugs);
    plan.install_changed |= graph_lacked_composed_stages;
    plan.changes
        .extend(drop_log_changes(layout, &previous, &names, &plan.warnings));
    plan.changes.sort_by(|a, b| a.0.cmp(&b.0));
    let mut outcome = ComposeOutcome {
        recovered: recovered == Recovery::RolledBack,
        plugins: names,
        warnings: plan.warnings.clone(),
        compile_reason: if graph_lacked_composed_stages {
            CompileReason::GraphLackedComposedStages
        } else {
            CompileReason::FilesChanged
        },
        contributed: plan.contributed.clone(),
        ..ComposeOutcome::default()
    };
    if plan.changes.is_empty() && !plan.install_changed {
        if let Some(roots) = sync_roots {
            // Everything the plan read: its install files and folders, the lock file,
            // `harness.json`, the drop logs, and the plugin roots (walked whole by the record).
            let mut files = plan.read_files;
            files.push(lock_file::lock_path(&layout.project_dir));
            files.push(layout.harness_json_path.clone());
            files.extend(drop_logs(layout, &previous, &outcome.plugins).into_values());
            let read = sync_record::ReadSet {
                files,
                folders: plan.listed_folders,
                roots: given_roots,
                environment: roots.to_vec(),
                found: sync_record::NothingToSync {
                    plugins: outcome.plugins.clone(),
                    warnings: outcome.warnings.clone(),
                    composed_stages: composed_slugs,
                },
                started_ns,
            };
            // A cache: failing to write it only keeps the next sync on the full path.
            let _ = sync_record::record(layout, &read);
        }
        return Ok(outcome);
    }
    let changes = contained_changes(layout, &plan.changes)?;
    sync_record::remove(layout)
        .map_err(|e| io_error("cannot remove the plugin sync record", &e))?;
    apply(layout, &plan, &changes, authored, &mut outcome)?;
    Ok(outcome)
}

/// A plan change: the path it writes or removes, and the bytes it writes (`None`: removed).
type ContainedChange<'a> = (ProjectPath, Option<&'a [u8]>);

/// Every path of the plan's changes parsed into the project and resolved inside it now, or the
/// first that is not, before anything is written.
fn contained_changes<'a>(
    layout: &Layout,
    changes: &'a [(Utf8PathBuf, Option<Vec<u8>>)],
) -> Result<Vec<ContainedChange<'a>>, PluginError> {
    changes
        .iter()
        .map(|(path, bytes)| contained_path(layout, path).map(|path| (path, bytes.as_deref())))
        .collect()
}

/// `path` (absolute) as a path the composition may write, or the refusal naming it.
fn contained_path(layout: &Layout, path: &Utf8Path) -> Result<ProjectPath, PluginError> {
    ProjectPath::of_absolute(&layout.project_dir, path)
        .and_then(|contained| contained.check_resolves_inside().map(|()| contained))
        .map_err(|refusal| {
            PluginError::refused(
                Problem::new(format!(
                    "refusing to write {}: {refusal}",
                    layout.display(path)
                ))
                .at_path(layout.display(path).to_string())
                .with_help("a composition writes only inside the project, never through a link that leads out of it nor into .git; replace the link with a folder, or fix the entry that names the path"),
            )
        })
}

/// The drop log of each plugin composed now or before, by name.
fn drop_logs<'a>(
    layout: &Layout,
    previous: &'a Lock,
    plugins: &'a [String],
) -> BTreeMap<&'a str, Utf8PathBuf> {
    let health = crate::runtime::workspace::Workspace::resolve(layout.clone()).hooks_health_dir();
    plugins
        .iter()
        .chain(previous.plugins.keys())
        .map(|name| {
            let path = health.join(format!("plugin-compose-{name}.drops"));
            (name.as_str(), path)
        })
        .collect()
}

/// Each plugin's drop log in the hooks-health folder, `plugin-compose-<name>.drops`, where the
/// reference composer keeps its own and both doctors read it: one `<ISO time><TAB>[advisory]
/// <warning>` line per warning of the plugin, no file when it has none. A log already holding
/// the same warnings is kept as it is (its times too), so a second sync changes nothing.
fn drop_log_changes(
    layout: &Layout,
    previous: &Lock,
    plugins: &[String],
    warnings: &[Problem],
) -> Vec<(Utf8PathBuf, Option<Vec<u8>>)> {
    let mut changes = Vec::new();
    for (name, path) in drop_logs(layout, previous, plugins) {
        let reasons: Vec<String> = warnings
            .iter()
            .filter(|warning| warning.plugin.as_deref() == Some(name))
            .map(|warning| {
                format!(
                    "[advisory] {}",
                    warning.headline().replace(['\r', '\n'], " ")
                )
            })
            .collect();
        let existing = crate::leaves::fs_util::read_input_text(&path).ok();
        let existing_reasons: Option<Vec<String>> = existing.as_ref().map(|text| {
            text.lines()
                .map(|line| {
                    line.split_once('\t')
                        .map_or(line, |(_, reason)| reason)
                        .to_owned()
                })
                .collect()
        });
        if reasons.is_empty() || !plugins.iter().any(|plugin| plugin == name) {
            if existing.is_some() {
                changes.push((path, None));
            }
        } else if existing_reasons.as_ref() != Some(&reasons) {
            let time = crate::leaves::timestamp::iso_timestamp(std::time::SystemTime::now());
            let text = reasons.iter().fold(String::new(), |mut text, reason| {
                let _ = writeln!(text, "{time}\t{reason}");
                text
            });
            changes.push((path, Some(text.into_bytes())));
        }
    }
    changes
}

/// Which files a failed compile's diagnostics name (`PluginError::CompileFailed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailedCompileFiles {
    /// The path plugins' own files where their text came from, by absolute path (as a plugin
    /// problem names a plugin's file), else the installed copies
    /// (`plugin::authored_files`, docs/decisions.md D52).
    Authored,
    /// The installed files, project-relative: the own-tree compile carries them back itself,
    /// naming the files by their path in the plugin.
    Installed,
}

/// What a failed compile needs to show its diagnostics on the files the author edits: the path
/// plugins' files, read before the plan takes the trees (`None` to keep the installed paths).
fn authored_files_of(
    layout: &Layout,
    chosen: &[ChosenPlugin],
    files: FailedCompileFiles,
) -> Option<AuthoredFiles> {
    (files == FailedCompileFiles::Authored).then(|| {
        // A git plugin's tree is a clone of a commit under `aidlc/plugins/<name>/`, not the
        // folder its author edits (which is unknown to us): its copies keep their installed
        // paths.
        AuthoredFiles::of_trees(
            chosen
                .iter()
                .filter(|plugin| plugin.record.kind == SourceKind::Path)
                .map(|plugin| &plugin.tree),
            layout,
        )
    })
}

/// The transaction: record, change, compile, refresh the conductor's files, commit.
fn apply(
    layout: &Layout,
    plan: &Plan,
    changes: &[ContainedChange<'_>],
    authored: Option<AuthoredFiles>,
    outcome: &mut ComposeOutcome,
) -> Result<(), PluginError> {
    let refresh = if plan.install_changed {
        conductor::conductor_refresh(layout)?
    } else {
        None
    };
    let mut paths: Vec<ProjectPath> = changes.iter().map(|(path, _)| path.clone()).collect();
    let mut trees = Vec::new();
    if plan.install_changed {
        paths.push(contained_path(layout, &layout.stage_graph_path)?);
        paths.push(contained_path(layout, &layout.scope_grid_path)?);
    }
    if let Some(refresh) = &refresh {
        let (refresh_trees, refresh_files) = refresh.written_paths();
        for tree in refresh_trees {
            trees.push(contained_path(layout, &tree)?);
        }
        for file in refresh_files {
            paths.push(contained_path(layout, &file)?);
        }
    }
    let transaction = Transaction::begin(
        &layout.project_dir,
        &paths,
        &trees,
        kept_dirs(layout),
        pause()?,
    )
    .map_err(|e| io_error("cannot start the composition's journal", &e))?;
    let result = apply_armed(
        layout,
        plan,
        changes,
        authored,
        refresh.as_ref(),
        &transaction,
        outcome,
    );
    match result {
        Ok(()) => transaction
            .commit()
            .map_err(|e| io_error("cannot commit the composition", &e)),
        Err(error) => {
            transaction
                .rollback()
                .map_err(|e| io_error("the composition failed and rolling it back failed too (run the command again to finish the rollback)", &e))?;
            Err(error)
        }
    }
}

fn apply_armed(
    layout: &Layout,
    plan: &Plan,
    changes: &[ContainedChange<'_>],
    authored: Option<AuthoredFiles>,
    refresh: Option<&conductor::ConductorRefresh>,
    transaction: &Transaction,
    outcome: &mut ComposeOutcome,
) -> Result<(), PluginError> {
    let trimmed_grid =
        crate::plugin::removed_scope_columns::grid_without_removed_scope_columns(layout, plan);
    for (path, bytes) in changes {
        let shown = layout.display(&path.absolute()).to_string();
        if let Some(bytes) = bytes {
            transaction
                .write(path, bytes)
                .map_err(|e| io_error("cannot compose", &e))?;
            outcome.written.push(shown);
        } else {
            transaction
                .remove(path)
                .map_err(|e| io_error("cannot compose", &e))?;
            outcome.removed.push(shown);
        }
    }
    if !plan.install_changed {
        return Ok(());
    }
    if let Some(grid) = trimmed_grid {
        transaction
            .write(&contained_path(layout, &layout.scope_grid_path)?, &grid)
            .map_err(|e| io_error("cannot compose", &e))?;
    }
    let mut db = CompilerDatabase::default();
    let (_inputs, compiled) = compile::load_and_compile_once(&mut db, layout);
    if compiled.n_errors() > 0 {
        let sources = compile::source_texts(&db, &compiled.diagnostics);
        let contributed = plan.contributed.clone();
        let as_given = |path: &Utf8Path| path.to_owned();
        let naming = Naming {
            authored: &as_given,
            installed: &as_given,
        };
        let (diagnostics, sources) = match authored {
            Some(authored) => authored.with_contributed(contributed.clone()).carried_back(
                &compiled.diagnostics,
                &sources,
                &naming,
            ),
            None => (compiled.diagnostics, sources),
        };
        return Err(PluginError::CompileFailed {
            diagnostics,
            sources,
            contributed,
        });
    }
    compile::write_outputs(layout, &compiled)
        .map_err(|error| PluginError::environment(error.to_string()))?;
    // No compile fingerprint is recorded (the invariant at `compile::write_outputs` says why).
    outcome.compiled = Some((compiled.n_stages, compiled.n_sensors));
    outcome.compile_warnings = compiled.n_warnings();
    if let Some(refresh) = refresh {
        conductor::refresh(refresh, layout).map_err(PluginError::Environment)?;
        outcome.conductor_refreshed = true;
    }
    Ok(())
}

/// `aidlc plugin add SOURCE…`.
pub fn add(
    layout: &Layout,
    sources: &[String],
    cwd: &Utf8Path,
) -> Result<ComposeOutcome, PluginError> {
    let authored = FailedCompileFiles::Authored;
    compose_under_lock(layout, &FromDisk, None, authored, |_| {
        let mut added: Vec<ChosenPlugin> = Vec::new();
        for text in sources {
            let plugin = match source::parse_source(text) {
                // Joining an absolute path gives that path.
                SourceSpec::Path(path) => path_plugin(layout, &FromDisk, &cwd.join(path), None)?,
                SourceSpec::Git { url, rev } => git_plugin(layout, &url, rev.as_deref(), cwd)?,
            };
            if added
                .iter()
                .any(|other| other.tree.name() == plugin.tree.name())
            {
                return Err(PluginError::refused(
                    Problem::new("is given twice").of_plugin(plugin.tree.name()),
                ));
            }
            added.push(plugin);
        }
        Ok((added, Vec::new()))
    })
}

/// `add PATH` of a plugin already read from its folder (`tree.root`, canonical): the same
/// guards, sibling dependencies, plan and transaction. The own-tree compile reads the plugin's
/// tree once, with an editor's unsaved text over it, and composes that (docs/decisions.md D52);
/// its sibling dependencies come from `trees` (the language server's warm trees, D54).
pub fn add_tree(
    layout: &Layout,
    tree: PluginTree,
    trees: &dyn TreeReader,
) -> Result<ComposeOutcome, PluginError> {
    compose_under_lock(layout, trees, None, FailedCompileFiles::Installed, |_| {
        Ok((vec![path_plugin_of_tree(layout, tree, None)], Vec::new()))
    })
}

/// A plugin to remove that `harness.json`'s `plugins` still names is refused before any write
/// (docs/decisions.md D51): the selection would name a plugin that is not composed, which the
/// compile refuses, so the removal could only roll back.
fn still_selected(layout: &Layout, names: &[String]) -> Result<Vec<Problem>, PluginError> {
    let path = &layout.harness_json_path;
    let Some(selected) = read_selection(path)? else {
        return Ok(Vec::new());
    };
    let shown = layout.display(path);
    Ok(names
        .iter()
        .filter(|name| selected.contains(*name))
        .map(|name| {
            Problem::new(format!(
                "is still selected: {shown}'s `plugins` names it, and a selection may name only composed plugins"
            ))
            .of_plugin_at(name, shown.clone())
            .with_help(format!(
                "remove \"{name}\" from `plugins` in {shown}, then run `aidlc plugin remove {name}` again"
            ))
        })
        .collect())
}

/// `aidlc plugin remove NAME…`.
pub fn remove(layout: &Layout, names: &[String]) -> Result<ComposeOutcome, PluginError> {
    let authored = FailedCompileFiles::Authored;
    compose_under_lock(layout, &FromDisk, None, authored, |previous| {
        let mut problems = Vec::new();
        for name in names {
            if !previous.plugins.contains_key(name) {
                let known: Vec<&str> = previous.plugins.keys().map(String::as_str).collect();
                problems.push(
                    Problem::new("is not composed in this install")
                        .of_plugin(name)
                        .with_help(if known.is_empty() {
                            "no plugin is composed (aidlc.lock.json records none)".to_owned()
                        } else {
                            format!("composed plugins: {}", known.join(", "))
                        }),
                );
            }
        }
        problems.extend(still_selected(layout, names)?);
        for (name, record) in &previous.plugins {
            if names.contains(name) {
                continue;
            }
            for dependency in &record.dependencies {
                let dependency_name = dependency.split('@').next().unwrap_or(dependency).trim();
                if names.iter().any(|removed| removed == dependency_name) {
                    problems.push(
                        Problem::new(format!(
                            "depends on \"{dependency}\", which would be removed"
                        ))
                        .of_plugin(name)
                        .with_help(format!("remove {name} too, or keep {dependency_name}")),
                    );
                }
            }
        }
        if !problems.is_empty() {
            return Err(PluginError::Refused(problems));
        }
        Ok((Vec::new(), names.to_vec()))
    })
}

/// `aidlc plugin sync`: recompose every recorded plugin, plus each host plugin root in `roots`
/// (`CLAUDE_PLUGIN_ROOT` and friends, as the `SessionStart` hook passes them).
pub fn sync(layout: &Layout, roots: &[Utf8PathBuf]) -> Result<ComposeOutcome, PluginError> {
    let authored = FailedCompileFiles::Authored;
    compose_under_lock(layout, &FromDisk, Some(roots), authored, |_| {
        let mut added: Vec<ChosenPlugin> = Vec::new();
        for root in roots {
            let plugin = path_plugin(layout, &FromDisk, root, None)?;
            if !added
                .iter()
                .any(|other| other.tree.name() == plugin.tree.name())
            {
                added.push(plugin);
            }
        }
        Ok((added, Vec::new()))
    })
}

/// The plugin roots the environment names (`CLAUDE_PLUGIN_ROOT`, `PLUGIN_ROOT`,
/// `AIDLC_PLUGIN_ROOT`), each once, relative ones taken from `cwd`.
pub fn plugin_roots_from(env: &dyn Fn(&str) -> Option<String>, cwd: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut roots: Vec<Utf8PathBuf> = Vec::new();
    // The hosts' names for a plugin's root, in the reference's order.
    let named = [
        env("CLAUDE_PLUGIN_ROOT"),
        env("PLUGIN_ROOT"),
        env("AIDLC_PLUGIN_ROOT"),
    ];
    for value in named.iter().flatten().map(|value| value.trim()) {
        // Joining an absolute path gives that path: only a relative one is taken from `cwd`.
        let path = cwd.join(value);
        if !value.is_empty() && !roots.contains(&path) {
            roots.push(path);
        }
    }
    roots
}

/// One plugin the lock file records, and the folder `sync` reads it from: what
/// `compile --watch` watches for a change to recompose (docs/decisions.md D53).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedSource {
    pub name: String,
    pub kind: SourceKind,
    /// As the lock records it: a path or a git URL.
    pub source: String,
    /// The folder `sync` reads: the path plugin's folder, or a git plugin's kept copy.
    pub root: Utf8PathBuf,
}

/// The plugins `lock` records, in its order, with the folder each is read from.
pub fn recorded_sources(layout: &Layout, lock: &Lock) -> Vec<RecordedSource> {
    lock.plugins
        .iter()
        .map(|(name, record)| RecordedSource {
            name: name.clone(),
            kind: record.kind,
            source: record.source.clone(),
            root: recorded_root(layout, record),
        })
        .collect()
}

/// What a `sync` would change because a composed plugin's source changed since it was
/// composed: the language server's staleness warnings (docs/decisions.md D53).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaleComposition {
    /// The plugins whose source's integrity is no longer the one the lock records, with the
    /// source as the lock names it, in the lock's order.
    pub changed_plugins: Vec<(String, String)>,
    /// Install files (absolute) a sync would rewrite, other than the lock file.
    pub rewritten: Vec<Utf8PathBuf>,
    /// Install files (absolute) a sync would add or remove.
    pub added: Vec<Utf8PathBuf>,
    pub removed: Vec<Utf8PathBuf>,
}

/// Plan the sync of the recorded plugins without applying it: `None` when no plugin's source
/// changed since it was composed (whatever else drifted: `plugin list` and `doctor` report an
/// edited installed copy), or when an interrupted composition's journal is waiting for the
/// next `aidlc plugin add|remove|sync` to roll it back. Takes no lock and writes nothing (not the
/// journal's recovery, not the sync record, not the drop logs); a refusal is the one `sync`
/// would give. The trees come from `trees` (the language server's warm trees, D54).
pub fn stale_composition(
    layout: &Layout,
    trees: &dyn TreeReader,
) -> Result<Option<StaleComposition>, PluginError> {
    if layout.project_dir.join(journal::JOURNAL_DIR).exists() {
        return Ok(None);
    }
    let previous = lock_file::read_lock(&layout.project_dir, layout.harness.dir_name())?;
    if previous.plugins.is_empty() {
        return Ok(None);
    }
    let enabled = read_selection(&layout.harness_json_path)?;
    let mut chosen = chosen_plugins(layout, trees, &previous, Vec::new(), &[])?;
    let changed_plugins: Vec<(String, String)> = previous
        .plugins
        .iter()
        .filter(|(name, record)| {
            chosen.iter().any(|plugin| {
                plugin.tree.name() == *name && plugin.tree.integrity != record.integrity
            })
        })
        .map(|(name, record)| (name.clone(), record.source.clone()))
        .collect();
    if changed_plugins.is_empty() {
        return Ok(None);
    }
    add_sibling_dependencies(layout, trees, &mut chosen)?;
    let chosen = compose::order_plugins(chosen).map_err(PluginError::Refused)?;
    let plan =
        compose::plan(layout, &previous, chosen, enabled.as_ref()).map_err(PluginError::Refused)?;
    let lock_path = lock_file::lock_path(&layout.project_dir);
    let mut stale = StaleComposition {
        changed_plugins,
        ..StaleComposition::default()
    };
    for (path, bytes) in plan.changes {
        if path == lock_path {
            continue;
        }
        match (bytes, path.is_file()) {
            (Some(_), true) => stale.rewritten.push(path),
            (Some(_), false) => stale.added.push(path),
            (None, _) => stale.removed.push(path),
        }
    }
    Ok(Some(stale))
}

/// What [`changed_sources`] found: recorded path plugins, as [`recorded_sources`] gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceCheck {
    /// Path plugins whose source's integrity is no longer the one the lock records.
    pub changed: Vec<RecordedSource>,
    /// Path plugins whose source folder is not there (not checked).
    pub not_there: Vec<RecordedSource>,
    /// How many path plugins' sources were read.
    pub checked: usize,
}

/// The recorded path plugins whose source changed since they were composed, for
/// `aidlc compile` (docs/decisions.md D55): each source folder that is there is read (from
/// `trees`) and its integrity compared with the lock's; a source that is not there (a CI
/// checkout without the plugin's folder) is not checked, a git plugin's kept copy neither
/// (`plugin list` and `doctor` report an edited copy). Nothing while an interrupted
/// composition's journal waits for its rollback, and nothing without a lock file. Takes no
/// lock and writes nothing.
///
/// # Errors
///
/// An unreadable lock file, or a source that is there but cannot be read as a plugin.
pub fn changed_sources(
    layout: &Layout,
    trees: &dyn TreeReader,
) -> Result<SourceCheck, PluginError> {
    let mut check = SourceCheck::default();
    if layout.project_dir.join(journal::JOURNAL_DIR).exists() {
        return Ok(check);
    }
    let previous = lock_file::read_lock(&layout.project_dir, layout.harness.dir_name())?;
    for plugin in recorded_sources(layout, &previous) {
        if plugin.kind != SourceKind::Path {
            continue;
        }
        if !plugin.root.is_dir() {
            check.not_there.push(plugin);
            continue;
        }
        let tree = trees
            .read_tree(&canonical(&plugin.root)?)
            .map_err(PluginError::Refused)?;
        check.checked += 1;
        if tree.integrity != previous.plugins[&plugin.name].integrity {
            check.changed.push(plugin);
        }
    }
    Ok(check)
}

/// `aidlc plugin list`: reads the lock and the selection and writes nothing (no workspace lock,
/// and an interrupted composition's journal is reported, never rolled back).
pub fn list(layout: &Layout) -> Result<Listing, PluginError> {
    let journal_waiting = journal::is_waiting(&layout.project_dir);
    let lock = lock_file::read_lock(&layout.project_dir, layout.harness.dir_name())?;
    let selection = read_selection(&layout.harness_json_path)?;
    let enabled =
        |name: &str| crate::compile::stage_graph::plugins_key::is_enabled(selection.as_ref(), name);
    let mut plugins = vec![ListedPlugin {
        name: "aidlc".to_owned(),
        version: "core".to_owned(),
        enabled: enabled("aidlc"),
        ..ListedPlugin::default()
    }];
    plugins.extend(lock.plugins.iter().map(|(name, record)| ListedPlugin {
        name: name.clone(),
        version: record.version.clone(),
        enabled: enabled(name),
        kind: Some(record.kind),
        source: Some(record.source.clone()),
        commit: record.commit.clone(),
        changed_files: record.changed_files(&layout.project_dir),
    }));
    Ok(Listing {
        journal_waiting,
        selection,
        plugins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::stage_graph::plugins_key::is_enabled;

    #[test]
    fn a_source_beside_the_project_is_recorded_relative_to_it() {
        assert_eq!(
            relative_from(
                Utf8Path::new("/work/project"),
                Utf8Path::new("/work/plugins/p")
            )
            .as_deref(),
            Some("../plugins/p")
        );
        assert_eq!(
            relative_from(Utf8Path::new("/a"), Utf8Path::new("/b")),
            None
        );
    }

    #[test]
    fn plugin_roots_come_from_the_hosts_variables_once_each() {
        let env = |name: &str| match name {
            "CLAUDE_PLUGIN_ROOT" | "PLUGIN_ROOT" => Some("/p/claude".to_owned()),
            "AIDLC_PLUGIN_ROOT" => Some("rel".to_owned()),
            _ => None,
        };
        assert_eq!(
            plugin_roots_from(&env, Utf8Path::new("/cwd")),
            [
                Utf8PathBuf::from("/p/claude"),
                Utf8PathBuf::from("/cwd/rel")
            ]
        );
    }

    #[test]
    fn the_plugins_key_is_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let path = camino::Utf8PathBuf::from_path_buf(dir.path().join("harness.json")).unwrap();
        assert_eq!(read_selection(&path).unwrap(), None);
        std::fs::write(&path, r#"{"harnessDir": ".claude"}"#).unwrap();
        assert_eq!(read_selection(&path).unwrap(), None);
        std::fs::write(&path, r#"{"plugins": ["aidlc", "test-pro"]}"#).unwrap();
        let selection = read_selection(&path).unwrap();
        assert!(is_enabled(selection.as_ref(), "test-pro"));
        assert!(!is_enabled(selection.as_ref(), "other"));
        std::fs::write(&path, r#"{"plugins": []}"#).unwrap();
        assert_eq!(read_selection(&path).unwrap(), Some(BTreeSet::new()));
        for bad in [
            r#"{"plugins": "test-pro"}"#,
            r#"{"plugins": ["Test"]}"#,
            r#"{"plugins": [" test-pro"]}"#,
            r#"{"plugins": [1]}"#,
            r#"{"plugins": ["a", "a"]}"#,
            r#"{"plugins": [], "plugins": []}"#,
            "[",
            "[]",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(read_selection(&path).is_err(), "{bad}");
        }
    }
}
