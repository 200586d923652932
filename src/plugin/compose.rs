//! The plan: every file's target bytes, from the install's base and the chosen plugins.
//!
//! The base of the install is what it holds without any composed plugin: a file a plugin put
//! there is absent from it, and a stage a contribution changed has the text recorded in the lock
//! before the change. The plan starts from that base and, plugin by plugin (dependencies first,
//! then by name), copies each plugin's primitives, then merges every contribution into its
//! target stage (structural additions in that order, then all fragments of the stage at once,
//! see `splice`), then writes each plugin's sidecar. The changes are the files whose target
//! bytes differ from the disk. Nothing here writes.
//!
//! Refused (every problem is collected, then the plan fails): a file that changed since it was
//! composed; a copy that would overwrite a file the install already has with other bytes; two
//! plugins shipping one path, or one fragment slot, or one consumed artifact with different
//! `required`; an invalid plugin stage (the compile's own stage parser), a scope or agent that
//! declares another owner or reuses an installed name, a sensor manifest the discovery rule
//! would never read; a contribution that is malformed, targets a stage that does not exist,
//! puts a stage under a scope the plugin does not own, or whose anchor is not in the stage.

use std::collections::{BTreeMap, BTreeSet};

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::Layout;
use crate::compile::syntax::document::{self, DocumentKind};
use crate::compile::syntax::manifest::sensor_id_from_file_name;
use crate::compile::syntax::vocabulary::PHASES;
use crate::harness::Harness;
use crate::plugin::Problem;
use crate::plugin::contributed_text::ContributedText;
use crate::plugin::contribution::{self, Contribution};
use crate::plugin::lock_file::{self, Lock, LockedPlugin, LockedStage};
use crate::plugin::manifest::Subtree;
use crate::plugin::opencode_agents;
use crate::plugin::sidecar;
use crate::plugin::tree::{PluginFile, PluginTree};

mod dispatch_check;
mod stage_merge;

use stage_merge::{Additions, merge_contributions};

/// A plugin chosen for the install, with where it came from.
#[derive(Debug, Clone)]
pub struct ChosenPlugin {
    pub tree: PluginTree,
    /// The lock record to write (its `files` and `adopted` are filled by the plan).
    pub record: LockedPlugin,
    /// Files it brings besides its primitives (a git plugin's kept tree), absolute paths.
    pub extra_files: Vec<(Utf8PathBuf, Vec<u8>)>,
}

/// What composing changes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Absolute paths with their new bytes, or `None` to remove; sorted by path.
    pub changes: Vec<(Utf8PathBuf, Option<Vec<u8>>)>,
    pub lock: Lock,
    pub warnings: Vec<Problem>,
    /// Whether a file the compile reads (or the conductor derives from) changes.
    pub install_changed: bool,
    /// Every install file the plan read or looked for, absolute (the sync record's inputs).
    pub read_files: Vec<Utf8PathBuf>,
    /// Every install folder the plan listed, absolute.
    pub listed_folders: Vec<Utf8PathBuf>,
    /// The text contributions wrote into each core stage they change.
    pub contributed: ContributedText,
}

/// Order `chosen` dependencies first, then by name; refuse a dependency that is not chosen or
/// whose version does not satisfy the requirement, and a cycle.
pub fn order_plugins(mut chosen: Vec<ChosenPlugin>) -> Result<Vec<ChosenPlugin>, Vec<Problem>> {
    chosen.sort_by(|a, b| a.tree.name().cmp(b.tree.name()));
    let mut problems = Vec::new();
    for plugin in &chosen {
        for dependency in &plugin.tree.manifest.dependencies {
            if dependency.is_core() {
                continue;
            }
            let problem = match chosen
                .iter()
                .find(|other| other.tree.name() == dependency.name)
            {
                None => Problem::new(format!(
                    "depends on plugin \"{}\", which is not composed",
                    dependency.text
                ))
                .with_help(format!(
                    "add it first: aidlc plugin add <path or git URL of {}>",
                    dependency.name
                )),
                Some(other)
                    if !crate::plugin::manifest::satisfies(
                        dependency,
                        other.tree.manifest.version.as_ref(),
                    ) =>
                {
                    Problem::new(format!(
                        "depends on \"{}\", but plugin \"{}\" is version {}",
                        dependency.text,
                        other.tree.name(),
                        other.tree.manifest.version_text()
                    ))
                }
                Some(_) => continue,
            };
            problems.push(
                problem
                    .of_plugin_at(plugin.tree.name(), &plugin.tree.manifest.path)
                    .at_key_item_in(
                        &plugin.tree.manifest.text,
                        &["dependencies"],
                        Some(&dependency.text),
                    ),
            );
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut ordered: Vec<ChosenPlugin> = Vec::with_capacity(chosen.len());
    while !chosen.is_empty() {
        let ready = chosen.iter().position(|plugin| {
            plugin.tree.manifest.dependencies.iter().all(|dependency| {
                dependency.is_core()
                    || ordered
                        .iter()
                        .any(|done| done.tree.name() == dependency.name)
            })
        });
        let Some(index) = ready else {
            let names: Vec<&str> = chosen.iter().map(|plugin| plugin.tree.name()).collect();
            // Every plugin left waits on another one left: the first one's `dependencies` is
            // where the cycle can be cut.
            let first = &chosen[0];
            return Err(vec![
                Problem::new(format!(
                    "the dependencies of plugins {} form a cycle",
                    names.join(", ")
                ))
                .of_plugin_at(first.tree.name(), &first.tree.manifest.path)
                .at_key_in(&first.tree.manifest.text, &["dependencies"])
                .with_help("remove one of the dependencies"),
            ]);
        };
        ordered.push(chosen.remove(index));
    }
    Ok(ordered)
}

struct Planner<'a> {
    layout: &'a Layout,
    harness_dir: &'a str,
    previous: &'a Lock,
    previously_owned: BTreeSet<String>,
    previously_adopted: BTreeSet<String>,
    /// Project-relative path → target bytes.
    target: BTreeMap<String, Vec<u8>>,
    /// Project-relative path → the plugin that ships it.
    owner: BTreeMap<String, String>,
    adopted: BTreeMap<String, BTreeSet<String>>,
    stages: BTreeMap<String, LockedStage>,
    contributed: ContributedText,
    /// The `name:` rosters of the scope and agent folders, read once, kept up to date as files
    /// are placed.
    rosters: BTreeMap<Utf8PathBuf, Roster>,
    disk_reads: std::cell::RefCell<BTreeMap<String, Option<Vec<u8>>>>,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
}

/// Name → (project-relative file, its `plugin:`).
type Roster = BTreeMap<String, (String, Option<String>)>;

/// Put the file at `path` on `roster` under its `name:`, unless a file already holds that name.
fn enroll(roster: &mut Roster, path: String, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Some(name) = frontmatter_scalar(&text, "name") {
        roster
            .entry(name)
            .or_insert((path, frontmatter_scalar(&text, "plugin")));
    }
}

impl Planner<'_> {
    fn relative(&self, path: &Utf8Path) -> String {
        self.layout.display(path).to_string()
    }

    fn absolute(&self, relative: &str) -> Utf8PathBuf {
        self.layout.project_dir.join(relative)
    }

    /// The file's bytes on disk, read once per plan (nothing writes while a plan is made).
    fn disk(&self, relative: &str) -> Option<Vec<u8>> {
        if let Some(bytes) = self.disk_reads.borrow().get(relative) {
            return bytes.clone();
        }
        let bytes = crate::leaves::fs_util::read_input(&self.absolute(relative)).ok();
        self.disk_reads
            .borrow_mut()
            .insert(relative.to_owned(), bytes.clone());
        bytes
    }

    /// The install without any composed plugin.
    fn base(&self, relative: &str) -> Option<Vec<u8>> {
        if let Some(stage) = self.previous.stages.get(relative) {
            return Some(stage.base.clone().into_bytes());
        }
        if self.previously_owned.contains(relative) && !self.previously_adopted.contains(relative) {
            return None;
        }
        self.disk(relative)
    }

    fn view(&self, relative: &str) -> Option<Vec<u8>> {
        self.target
            .get(relative)
            .cloned()
            .or_else(|| self.base(relative))
    }

    /// Refuse files that changed since they were composed. A composed core stage is in
    /// drift unless it holds its composed text or exactly its base (every contribution
    /// stripped, as the reference's `select-plugins` leaves it when it disables a plugin):
    /// either is composed again from the base.
    fn check_drift(&mut self) {
        for (name, plugin) in &self.previous.plugins {
            for (path, hash) in &plugin.files {
                if plugin.adopted.contains(path) {
                    continue;
                }
                match self.disk(path) {
                    None => self.warnings.push(
                        Problem::warning("was composed but is missing; it is written again")
                            .of_plugin_at(name, path),
                    ),
                    Some(bytes) if lock_file::content_hash(&bytes) != *hash => self.problems.push(
                        Problem::new("changed since it was composed; aidlc does not overwrite or remove it")
                            .of_plugin_at(name, path)
                            .with_help("undo the edit (or make it in the plugin's own file), then run the command again"),
                    ),
                    Some(_) => {}
                }
            }
        }
        for (path, stage) in &self.previous.stages {
            let current = self.disk(path);
            let as_composed = current
                .as_deref()
                .is_some_and(|bytes| lock_file::content_hash(bytes) == stage.composed);
            // Its base exactly: the merged region absent, not edited.
            let stripped = current.as_deref() == Some(stage.base.as_bytes());
            if !as_composed && !stripped {
                self.problems.push(
                    Problem::new("changed since plugin contributions were merged into it; aidlc does not overwrite it")
                        .at_path(path)
                        .with_help("undo the edit; to make the current text the stage's new base (after upgrading the core files, say), remove its entry from `stages` in aidlc.lock.json"),
                );
            }
        }
    }

    /// Put `bytes` at `relative` for `plugin`, unless another plugin ships it or the install
    /// already has other bytes there.
    fn place(&mut self, plugin: &str, relative: String, bytes: Vec<u8>, source: &Utf8Path) {
        if let Some(other) = self.owner.get(&relative) {
            self.problems.push(
                Problem::new(format!(
                    "ships {relative}, which plugin \"{other}\" ships too"
                ))
                .of_plugin_at(plugin, source)
                .with_help("one of the two plugins must rename its file (plugin files carry their plugin's name)"),
            );
            return;
        }
        match self.base(&relative) {
            Some(existing) if existing == bytes => {
                self.adopted
                    .entry(plugin.to_owned())
                    .or_default()
                    .insert(relative.clone());
            }
            Some(_) => {
                self.problems.push(
                    Problem::new(format!(
                        "would overwrite {relative}, which the install already has with other bytes (a core file, another composer's or yours)"
                    ))
                    .of_plugin_at(plugin, source)
                    .with_help("rename the plugin's file to a plugin-namespaced path"),
                );
                return;
            }
            None => {}
        }
        let folder = self.absolute(&relative).parent().map(Utf8Path::to_owned);
        if let Some(roster) = folder.and_then(|folder| self.rosters.get_mut(&folder))
            && crate::plugin::tree::has_extension(&relative, "md")
        {
            enroll(roster, relative.clone(), &bytes);
        }
        self.owner.insert(relative.clone(), plugin.to_owned());
        self.target.insert(relative, bytes);
    }

    /// The roster of `folder` (read on first use).
    fn roster(&mut self, folder: &Utf8Path) -> &Roster {
        if !self.rosters.contains_key(folder) {
            let roster = self.name_roster(folder);
            self.rosters.insert(folder.to_owned(), roster);
        }
        &self.rosters[folder]
    }

    /// The `name:` of every `.md` file in `folder` as the view holds it.
    fn name_roster(&self, folder: &Utf8Path) -> Roster {
        let mut files: BTreeSet<String> = BTreeSet::new();
        if let Ok(entries) = folder.read_dir_utf8() {
            for entry in entries.filter_map(Result::ok) {
                if crate::plugin::tree::has_extension(entry.file_name(), "md") {
                    files.insert(self.relative(entry.path()));
                }
            }
        }
        let prefix = format!("{}/", self.relative(folder));
        files.extend(
            self.target
                .keys()
                .filter(|path| {
                    path.strip_prefix(&prefix).is_some_and(|rest| {
                        !rest.contains('/') && crate::plugin::tree::has_extension(rest, "md")
                    })
                })
                .cloned(),
        );
        let mut roster = BTreeMap::new();
        for path in files {
            if let Some(bytes) = self.view(&path) {
                enroll(&mut roster, path, &bytes);
            }
        }
        roster
    }

    fn copy_primitives(&mut self, plugin: &ChosenPlugin) -> Vec<String> {
        let name = plugin.tree.name().to_owned();
        let mut imported_sensors = Vec::new();
        for subtree in crate::plugin::tree::READ_SUBTREES {
            let Some(folder) = installed_folder(self.layout, subtree) else {
                continue;
            };
            if matches!(subtree, Subtree::Scopes | Subtree::Agents) {
                self.roster(&folder);
            }
            for file in plugin.tree.files_of(subtree) {
                let destination = folder.join(&file.relative);
                let relative = self.relative(&destination);
                let mut bytes = substituted(file, self.harness_dir);
                let opencode_agent = subtree == Subtree::Agents
                    && file.is_markdown()
                    && self.layout.harness == Harness::Opencode;
                if opencode_agent && let Ok(text) = std::str::from_utf8(&bytes) {
                    bytes =
                        opencode_agents::rules_paths_as_memory(text, self.harness_dir).into_bytes();
                }
                let accepted = match subtree {
                    Subtree::Stages if file.is_markdown() => self.check_stage(
                        &plugin.tree,
                        file,
                        &bytes,
                        &relative,
                        &mut imported_sensors,
                    ),
                    Subtree::Scopes | Subtree::Agents if file.is_markdown() => self
                        .check_owned_named_file(&name, file, &bytes, &relative, subtree, &folder),
                    Subtree::Sensors if file.is_markdown() => self.check_sensor_file(&name, file),
                    _ => true,
                };
                if accepted && opencode_agent {
                    self.place_opencode_native_agent(&name, file, &bytes);
                }
                if accepted {
                    self.place(&name, relative, bytes, &file.source);
                }
            }
        }
        for (path, bytes) in &plugin.extra_files {
            let relative = self.relative(path);
            self.place(&name, relative, bytes.clone(), path);
        }
        imported_sensors
    }

    /// On an `OpenCode` install, the agent (its harness copy's `bytes`) in `OpenCode`'s own
    /// roster too, as a subagent; an agent that cannot be one is a warning and stays out.
    fn place_opencode_native_agent(&mut self, plugin: &str, file: &PluginFile, bytes: &[u8]) {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        match opencode_agents::native_agent(text) {
            Ok(native) => {
                let relative = format!(
                    "{}/{}",
                    opencode_agents::NATIVE_AGENTS_FOLDER,
                    file.relative
                );
                self.place(plugin, relative, native.into_bytes(), &file.source);
            }
            Err(refusal) => self
                .warnings
                .push(refusal.of_plugin_at(plugin, &file.source)),
        }
    }

    fn check_stage(
        &mut self,
        tree: &PluginTree,
        file: &PluginFile,
        bytes: &[u8],
        relative: &str,
        imported_sensors: &mut Vec<String>,
    ) -> bool {
        let plugin = tree.name();
        let Ok(text) = std::str::from_utf8(bytes) else {
            self.problems.push(
                Problem::new("the stage file is not UTF-8").of_plugin_at(plugin, &file.source),
            );
            return false;
        };
        let (stage, diagnostics) = crate::compile::syntax::stage::parse_stage(text, &file.source);
        let mut accepted = true;
        for diagnostic in diagnostics
            .into_iter()
            .filter(crate::leaves::diagnostics::Diagnostic::is_error)
        {
            accepted = false;
            self.problems.push(
                Problem::new(format!("the stage file is invalid: {}", diagnostic.message))
                    .of_plugin_at(plugin, &file.source)
                    .with_help(
                        "fix the plugin's stage file; it would break every compile of the install",
                    )
                    .with_located(diagnostic, text.to_owned()),
            );
        }
        let Some(stage) = stage else {
            return false;
        };
        match &stage.plugin {
            Some(declared) if declared.value == plugin => {}
            declared => {
                accepted = false;
                self.problems.push(
                    Problem::new(match declared {
                        Some(other) => format!("the stage declares plugin \"{}\"; owned plugin content must name the plugin that ships it", other.value),
                        None => "the stage declares no plugin identity (`plugin:`)".to_owned(),
                    })
                    .of_plugin_at(plugin, &file.source)
                    .at_key_in(text, &["plugin"])
                    .with_help(format!("write `plugin: {plugin}` in the stage's frontmatter")),
                );
            }
        }
        if stage.mode == "agent-team" {
            accepted = false;
            self.problems.push(
                Problem::new("the stage uses mode \"agent-team\", which no conductor runs yet")
                    .of_plugin_at(plugin, &file.source)
                    .at_key_in(text, &["mode"])
                    .with_help("use inline, subagent, pipeline or mob"),
            );
        }
        let body = crate::compile::syntax::frontmatter::split(text)
            .map_or("", |fm| &text[fm.body_start..]);
        if body.trim().is_empty() {
            accepted = false;
            self.problems.push(
                Problem::new("the stage has no body after its frontmatter (a stage that would route and do nothing)")
                    .of_plugin_at(plugin, &file.source),
            );
        }
        imported_sensors.extend(stage.sensors.iter().map(|sensor| sensor.value.clone()));
        accepted && self.harness_can_dispatch_or_keeps(tree, &stage, relative)
    }

    fn check_owned_named_file(
        &mut self,
        plugin: &str,
        file: &PluginFile,
        bytes: &[u8],
        relative: &str,
        subtree: Subtree,
        roster_folder: &Utf8Path,
    ) -> bool {
        let kind = subtree.key().trim_end_matches('s');
        let text = String::from_utf8_lossy(bytes);
        let mut diagnostics = Vec::new();
        let document_kind = if subtree == Subtree::Scopes {
            DocumentKind::Scope
        } else {
            DocumentKind::Agent
        };
        if document::read_frontmatter(&text, &file.source, document_kind, &mut diagnostics)
            .is_none()
        {
            let mut problem = Problem::new(format!("the {kind} file has no readable frontmatter"))
                .of_plugin_at(plugin, &file.source);
            if let Some(diagnostic) = diagnostics.into_iter().next() {
                problem = problem.with_located(diagnostic, text.to_string());
            }
            self.problems.push(problem);
            return false;
        }
        let declared = frontmatter_scalar(&text, "plugin");
        if declared.as_deref() != Some(plugin) {
            let reason = match &declared {
                Some(other) if other.starts_with("aidlc-") || other == "aidlc" => format!(
                    "the {kind} declares plugin \"{other}\"; \"aidlc\" and the \"aidlc-\" prefix are reserved for core"
                ),
                Some(other) => format!(
                    "the {kind} declares plugin \"{other}\"; owned plugin content must name the plugin that ships it"
                ),
                None => format!("the {kind} declares no plugin identity (`plugin:`)"),
            };
            self.problems.push(
                Problem::new(reason)
                    .of_plugin_at(plugin, &file.source)
                    .at_key_in(&text, &["plugin"])
                    .with_help(format!("write `plugin: {plugin}` in its frontmatter")),
            );
            return false;
        }
        // The live roster: a name placed earlier in this composition (even by this plugin)
        // counts, as the reference reserves each name as it accepts the file.
        let roster = self.rosters.get(roster_folder);
        if let (Some(name), Some(roster)) = (frontmatter_scalar(&text, "name"), roster)
            && let Some((other, _)) = roster.get(&name).cloned()
            && other != relative
        {
            self.problems.push(
                Problem::new(format!(
                    "the {kind} is named \"{name}\", which {other} already is"
                ))
                .of_plugin_at(plugin, &file.source)
                .at_key_in(&text, &["name"])
                .with_help("give it a plugin-namespaced name (`<plugin>-…`)"),
            );
            return false;
        }
        true
    }

    fn check_sensor_file(&mut self, plugin: &str, file: &PluginFile) -> bool {
        let base_name = file.relative.rsplit('/').next().unwrap_or(&file.relative);
        let reason = if file.relative.contains('/') {
            "it is nested in a subfolder, which sensor discovery never reads".to_owned()
        } else if sensor_id_from_file_name(base_name).is_none() {
            format!("\"{base_name}\" is not named aidlc-<id>.md with a lower-case kebab id")
        } else {
            return true;
        };
        self.problems.push(
            Problem::new(format!(
                "the sensor manifest would be composed but never fire: {reason}"
            ))
            .of_plugin_at(plugin, &file.source)
            .with_help("put it at the top of sensors/ as aidlc-<id>.md, with a matching id"),
        );
        false
    }

    fn find_stage(&self, slug: &str) -> Option<String> {
        PHASES.iter().find_map(|phase| {
            let relative = self.relative(
                &self
                    .layout
                    .stages_dir
                    .join(phase)
                    .join(format!("{slug}.md")),
            );
            self.view(&relative).is_some().then_some(relative)
        })
    }
}

/// The folder of the install of `layout` a plugin's `subtree` is copied into; `None` for the
/// subtrees that are not copied (contributions, memory).
pub fn installed_folder(layout: &Layout, subtree: Subtree) -> Option<Utf8PathBuf> {
    let harness_root = layout.project_dir.join(layout.harness.dir_name());
    Some(match subtree {
        Subtree::Stages => layout.stages_dir.clone(),
        Subtree::Scopes => layout.scopes_dir.clone(),
        Subtree::Agents => layout.agents_dir.clone(),
        Subtree::Sensors => layout.sensors_dir.clone(),
        Subtree::Knowledge => harness_root.join("knowledge"),
        Subtree::Tools => harness_root.join("tools"),
        Subtree::Overlays | Subtree::Memory => return None,
    })
}

/// `{{HARNESS_DIR}}` replaced in a Markdown file, other files as they are.
fn substituted(file: &PluginFile, harness_dir: &str) -> Vec<u8> {
    match (file.is_markdown(), file.text()) {
        (true, Some(text)) => text.replace("{{HARNESS_DIR}}", harness_dir).into_bytes(),
        _ => file.bytes.clone(),
    }
}

/// A top-level scalar of a Markdown file's frontmatter, read with the compile's YAML reader.
pub fn frontmatter_scalar(text: &str, key: &str) -> Option<String> {
    let fm = crate::compile::syntax::frontmatter::split(text).ok()?;
    let (root, _) = crate::compile::syntax::yaml::parse_document(text, fm.yaml);
    root?
        .get(key)
        .and_then(document::scalar_string)
        .map(str::to_owned)
}

fn read_contributions(planner: &mut Planner<'_>, plugin: &ChosenPlugin) -> Vec<Contribution> {
    let name = plugin.tree.name();
    let mut contributions = Vec::new();
    for file in plugin.tree.files_of(Subtree::Overlays) {
        let depth = file.relative.matches('/').count();
        if depth != 1 || !file.is_markdown() {
            planner.warnings.push(
                Problem::warning(
                    "is not read: contributions are contributions/<phase>/<stage>.md files",
                )
                .of_plugin_at(name, &file.source),
            );
            continue;
        }
        let Some(text) = file.text() else {
            planner.problems.push(
                Problem::new("the contribution is not UTF-8").of_plugin_at(name, &file.source),
            );
            continue;
        };
        let text = contribution::normalised_text(text);
        match contribution::read_contribution(name, &file.source, &text, planner.harness_dir) {
            Ok(contribution) => {
                planner.warnings.extend(contribution.notes.iter().cloned());
                contributions.push(contribution);
            }
            Err(problems) => planner.problems.extend(problems),
        }
    }
    contributions
}

/// The plan for `chosen` (already ordered by [`order_plugins`]) on the install of `layout`.
pub fn plan(
    layout: &Layout,
    previous: &Lock,
    chosen: Vec<ChosenPlugin>,
    enabled: Option<&BTreeSet<String>>,
) -> Result<Plan, Vec<Problem>> {
    let harness_dir = layout.harness.dir_name();
    let mut planner = Planner {
        layout,
        harness_dir,
        previous,
        previously_owned: previous
            .plugins
            .values()
            .flat_map(|plugin| plugin.files.keys().cloned())
            .collect(),
        previously_adopted: previous
            .plugins
            .values()
            .flat_map(|plugin| plugin.adopted.iter().cloned())
            .collect(),
        target: BTreeMap::new(),
        owner: BTreeMap::new(),
        adopted: BTreeMap::new(),
        stages: BTreeMap::new(),
        contributed: ContributedText::new(),
        rosters: BTreeMap::new(),
        disk_reads: std::cell::RefCell::new(BTreeMap::new()),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    planner.check_drift();
    for plugin in &chosen {
        planner.warnings.extend(plugin.tree.notes.iter().cloned());
    }
    let mut imported: BTreeMap<String, Vec<String>> = chosen
        .iter()
        .map(|plugin| {
            (
                plugin.tree.name().to_owned(),
                planner.copy_primitives(plugin),
            )
        })
        .collect();
    let mut contributions: Vec<Contribution> = Vec::new();
    for plugin in &chosen {
        if !crate::compile::stage_graph::plugins_key::is_enabled(enabled, plugin.tree.name()) {
            let has_contributions = plugin.tree.files_of(Subtree::Overlays).next().is_some();
            planner.warnings.push(
                Problem::warning(format!(
                    "is composed but not enabled by {}'s `plugins`{}; add \"{}\" there to expose its stages, scopes and runners",
                    layout.display(&layout.harness_json_path),
                    if has_contributions { ", so its contributions to other stages are not merged" } else { "" },
                    plugin.tree.name()
                ))
                .of_plugin(plugin.tree.name()),
            );
            continue;
        }
        let read = read_contributions(&mut planner, plugin);
        if let Some(sensors) = imported.get_mut(plugin.tree.name()) {
            sensors.extend(read.iter().flat_map(|c| c.adds.sensors.iter().cloned()));
        }
        contributions.extend(read);
    }
    for plugin in &chosen {
        report_sensor_declarations(
            &mut planner,
            plugin,
            imported
                .get(plugin.tree.name())
                .map_or(&[][..], Vec::as_slice),
        );
    }
    let additions = merge_contributions(&mut planner, &contributions);
    write_sidecars(&mut planner, &chosen, &additions);
    if !planner.problems.is_empty() {
        return Err(planner.problems);
    }
    Ok(finish(planner, chosen))
}

/// Warn about a plugin sensor on disk that nothing declares, and a declared one not on disk.
fn report_sensor_declarations(
    planner: &mut Planner<'_>,
    plugin: &ChosenPlugin,
    imported: &[String],
) {
    let name = plugin.tree.name();
    let on_disk: Vec<(&str, &PluginFile)> = plugin
        .tree
        .files_of(Subtree::Sensors)
        .filter_map(|file| Some((sensor_id_from_file_name(&file.relative)?, file)))
        .collect();
    let declared: Vec<String> = plugin
        .tree
        .manifest
        .declared_sensors
        .clone()
        .unwrap_or_else(|| imported.to_vec());
    let what = if plugin.tree.manifest.declared_sensors.is_some() {
        "the manifest's `aidlc.sensors` list"
    } else {
        "the plugin's stages and contributions"
    };
    for (id, file) in &on_disk {
        if !declared.iter().any(|declared| declared == id) {
            planner.warnings.push(
                Problem::warning(format!(
                    "sensor \"{id}\" is on disk but not declared by {what}: it is composed, and nothing of the plugin fires it"
                ))
                .of_plugin_at(name, &file.source)
                .with_help("import it in a stage's `sensors:` (or list it in `aidlc.sensors`), or remove the file"),
            );
        }
    }
    if let Some(listed) = &plugin.tree.manifest.declared_sensors {
        for id in listed {
            if !on_disk.iter().any(|(on_disk, _)| on_disk == id) {
                planner.warnings.push(
                    Problem::warning(format!(
                        "sensor \"{id}\" is declared in `aidlc.sensors` but the plugin has no sensors/aidlc-{id}.md"
                    ))
                    .of_plugin_at(name, &plugin.tree.manifest.path),
                );
            }
        }
    }
}

fn write_sidecars(planner: &mut Planner<'_>, chosen: &[ChosenPlugin], additions: &Additions) {
    for plugin in chosen {
        let name = plugin.tree.name();
        let Some((_, stages)) = additions.iter().find(|(plugin, _)| plugin == name) else {
            continue;
        };
        let Some(value) = sidecar::sidecar_value(stages) else {
            continue;
        };
        let path = planner
            .layout
            .project_dir
            .join(planner.harness_dir)
            .join("tools/data")
            .join(sidecar::sidecar_file_name(name));
        let relative = planner.relative(&path);
        let previous = planner
            .previously_owned
            .contains(&relative)
            .then(|| planner.disk(&relative))
            .flatten();
        if previous.is_none() && planner.disk(&relative).is_some() {
            planner.problems.push(
                Problem::new(format!("would overwrite {relative}, a sidecar another composer wrote"))
                    .of_plugin(name)
                    .with_help("the install was composed by the reference composer; restore the core files it merged into first"),
            );
            continue;
        }
        let bytes = sidecar::sidecar_bytes(&value, previous.as_deref());
        planner.owner.insert(relative.clone(), name.to_owned());
        planner.target.insert(relative, bytes);
    }
}

fn finish(planner: Planner<'_>, chosen: Vec<ChosenPlugin>) -> Plan {
    let layout = planner.layout;
    let mut lock = Lock::empty(planner.harness_dir);
    for plugin in chosen {
        let name = plugin.tree.name().to_owned();
        let mut record = plugin.record;
        let adopted = planner.adopted.get(&name).cloned().unwrap_or_default();
        record.files = planner
            .owner
            .iter()
            .filter(|(_, owner)| **owner == name)
            .map(|(path, _)| (path.clone(), lock_file::content_hash(&planner.target[path])))
            .collect();
        record.adopted = adopted.into_iter().collect();
        lock.plugins.insert(name, record);
    }
    lock.stages = planner.stages.clone();
    let mut managed: BTreeSet<String> = planner.previously_owned.clone();
    managed.extend(planner.previous.stages.keys().cloned());
    managed.extend(planner.target.keys().cloned());
    let mut changes = Vec::new();
    let mut install_changed = false;
    for path in managed {
        if planner.previously_adopted.contains(&path) && !planner.target.contains_key(&path) {
            continue;
        }
        let desired = planner.view(&path);
        if desired != planner.disk(&path) {
            install_changed = true;
            changes.push((layout.project_dir.join(&path), desired));
        }
    }
    let read_files = planner
        .disk_reads
        .borrow()
        .keys()
        .map(|relative| planner.absolute(relative))
        .collect();
    let listed_folders = planner.rosters.keys().cloned().collect();
    let lock_path = lock_file::lock_path(&layout.project_dir);
    let desired_lock = (!lock.plugins.is_empty()).then(|| lock.to_bytes());
    if desired_lock != crate::leaves::fs_util::read_input(&lock_path).ok() {
        changes.push((lock_path, desired_lock));
    }
    changes.sort_by(|a, b| a.0.cmp(&b.0));
    Plan {
        changes,
        lock,
        warnings: planner.warnings,
        install_changed,
        read_files,
        listed_folders,
        contributed: planner.contributed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::contributed_text::Origin;
    use crate::plugin::tree::TreeReader;

    #[test]
    fn frontmatter_scalars_are_read_with_the_yaml_reader() {
        let text = "---\nname: \"test-pro-validation\"\nplugin: test-pro\n---\nbody\n";
        assert_eq!(
            frontmatter_scalar(text, "name").as_deref(),
            Some("test-pro-validation")
        );
        assert_eq!(
            frontmatter_scalar(text, "plugin").as_deref(),
            Some("test-pro")
        );
        assert_eq!(frontmatter_scalar(text, "missing"), None);
        assert_eq!(frontmatter_scalar("no frontmatter", "name"), None);
    }

    #[test]
    fn the_plan_records_the_text_each_contribution_wrote_even_a_line_equal_to_a_base_line() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().join("project")).unwrap();
        crate::compile::framework::init_project(&project, Harness::Claude, false).unwrap();
        let layout = Layout::new(&project, Harness::Claude, &|_| None);
        let root = Utf8PathBuf::from_path_buf(dir.path().join("acme")).unwrap();
        std::fs::create_dir_all(root.join(".aidlc-plugin")).unwrap();
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            "{\"name\": \"acme\", \"version\": \"1.0.0\"}",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("contributions/operation")).unwrap();
        // `deployment-log` is also the stage's first `produces` item: the merged sensor line
        // equals a base line.
        let contribution = "---\ntarget: deployment-execution\nplugin: acme\nadds:\n  sensors:\n    - deployment-log\nfragments:\n  - anchor: in:Sensors\n    order: 100\n---\n\n## fragment: in:Sensors\n\nread {{HARNESS_DIR}}/tools\n";
        let source = root.join("contributions/operation/deployment-execution.md");
        std::fs::write(&source, contribution).unwrap();
        let tree = crate::plugin::tree::FromDisk.read_tree(&root).unwrap();
        let chosen = ChosenPlugin {
            tree,
            record: LockedPlugin {
                version: "1.0.0".to_owned(),
                kind: lock_file::SourceKind::Path,
                source: root.to_string(),
                rev: None,
                commit: None,
                vendored: None,
                integrity: String::new(),
                dependencies: Vec::new(),
                files: BTreeMap::new(),
                adopted: Vec::new(),
            },
            extra_files: Vec::new(),
        };
        let plan = plan(&layout, &Lock::empty(".claude"), vec![chosen], None).unwrap();
        let stage =
            Utf8PathBuf::from(".claude/aidlc-common/stages/operation/deployment-execution.md");
        let composed = plan
            .changes
            .iter()
            .find(|(path, _)| path.ends_with(&stage))
            .and_then(|(_, bytes)| String::from_utf8(bytes.clone()?).ok())
            .expect("the stage is composed");
        let recorded = &plan.contributed[&stage];
        let texts: Vec<&str> = recorded
            .iter()
            .map(|recorded| &composed[recorded.range.clone()])
            .collect();
        assert_eq!(texts, ["  - deployment-log\n", "read .claude/tools"]);
        assert!(recorded.iter().all(|recorded| recorded.source == source));
        let sensors = composed.find("\nsensors:\n").unwrap();
        assert!(composed.find("  - deployment-log\n").unwrap() < sensors);
        assert!(recorded[0].range.start > sensors);
        let Origin::Adds { entry, value } = &recorded[0].origin else {
            panic!(
                "merged lines are recorded as adds: {:?}",
                recorded[0].origin
            );
        };
        assert_eq!(
            &contribution[entry.clone()],
            "sensors:\n    - deployment-log\n"
        );
        assert_eq!(&contribution[value.clone()], "- deployment-log\n");
    }
}
