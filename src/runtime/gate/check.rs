//! `aidlc gate check` as one computation: which intent records to check, the combined plan of
//! their fires with the Sensors switch applied, the parallel run, and the [`GateReport`].
//!
//! It takes inputs the CLI has already resolved (the workspace, the live registry, the graph's
//! nodes, the request) and returns values: it prints nothing, reads no argument and decides no
//! exit status. `gate::command` calls [`intent_records`] and [`plan_check`] after the
//! refusals, then [`PlannedCheck::run`] with the CLI's progress line.
//!
//! Invariants (D4):
//! - a record whose Sensors switch is off (`AIDLC_DISABLE_SENSORS=1`, or `- **Sensors**: off`
//!   in its state) gets every planned fire, and every blocking binding that would not have
//!   fired, turned into a `sensors off` skip: none counts as unfired, it was switched off, not
//!   forgotten; the report names the switch ([`SensorsOff`]), so a run the switch emptied is
//!   "nothing checked", never green, and a blocking binding switched off is never a pass
//!   ([`blocking_bindings_switched_off`]: the check exits 3 when nothing else fails it);
//! - a `--stage` the graph does not have refuses the whole check before any fire runs;
//! - a finding's message and help name files under the project from the repository root, as
//!   its location is shown, never by this machine's absolute path.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use camino::{Utf8Path, Utf8PathBuf};

use crate::protocol::graph_reader::unknown_stage_message;
use crate::protocol::stage_node::GraphNode;
use crate::runtime::dispatch::registry::LiveRegistry;
use crate::runtime::dispatch::time_limit::GateLimits;
use crate::runtime::gate::gate_fires::{
    GatePlan, PlannedFire, plan_gate_fires, relative, run_gate_fires,
};
use crate::runtime::gate::report::{
    FireOnFilter, GateFire, GateReport, GateSkip, PlanIdentity, SensorInfo, SensorsOff, Severity,
    SkipReason,
};
use crate::runtime::workspace::{self, Workspace};

/// What one `aidlc gate check` is asked to do, once its arguments are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRequest {
    /// Only these stages; every stage of the graph when empty.
    pub stages: Vec<String>,
    pub fire_on: FireOnFilter,
    /// `Some((k, n))`: only shard k of n.
    pub shard: Option<(u64, u64)>,
    /// Worker threads (at least one is used).
    pub jobs: usize,
    /// Write audit rows and detail files (false with `--no-record`).
    pub record: bool,
    /// The project folder relative to the repository root (see `gate::repository`).
    pub project_path: Utf8PathBuf,
    /// The dispatch cap of each fire and `--timeout` for the whole run (none by default).
    pub limits: GateLimits,
}

/// The intent records to check: every record of the active space (`all_intents`), the one
/// `intent` names, or the active intent. An empty answer is an error: there is nothing to check.
pub fn intent_records(
    workspace: &Workspace,
    all_intents: bool,
    intent: Option<&str>,
) -> Result<Vec<Utf8PathBuf>, String> {
    let records = if all_intents {
        workspace.intent_records().to_vec()
    } else {
        let chosen = workspace
            .chosen_intent(intent)
            .map_err(|error| error.to_string())?;
        chosen.into_iter().collect()
    };
    if records.is_empty() {
        return Err(format!(
            "no intent record in space \"{}\": nothing to check",
            workspace.space()
        ));
    }
    Ok(records)
}

/// The check of some records, planned and not yet run.
#[derive(Debug, Clone)]
pub struct PlannedCheck {
    request: CheckRequest,
    /// The records' folder names, in the order given.
    intents: Vec<String>,
    plan: GatePlan,
    sensors_off: Option<SensorsOff>,
}

/// Plan the fires of every record in `records` and combine them; a record with its sensors
/// off contributes `sensors off` skips instead of fires. Refuses a planning error (a
/// deliverable escaping its folder) and an unknown `--stage`.
pub fn plan_check(
    workspace: &Workspace,
    nodes: &[GraphNode],
    records: &[Utf8PathBuf],
    request: &CheckRequest,
) -> Result<PlannedCheck, String> {
    let mut combined = GatePlan::default();
    let mut off_in_state: Vec<String> = Vec::new();
    for record in records {
        let mut plan = plan_gate_fires(
            workspace,
            nodes,
            record,
            &request.stages,
            request.fire_on,
            request.shard,
        )
        .map_err(|error| error.to_string())?;
        // The Sensors ceremony, for this record.
        let by_environment = workspace::sensors_off_by_environment();
        if by_environment
            || workspace::read_state_text(record)
                .is_some_and(|text| workspace::sensors_off_in_state(&text))
        {
            if !by_environment {
                off_in_state.push(record.file_name().unwrap_or_default().to_owned());
            }
            switch_off(&mut plan, workspace.project_dir());
        }
        combine(&mut combined, plan);
    }
    if let Some(stage) = request
        .stages
        .iter()
        .find(|stage| !nodes.iter().any(|node| &node.slug == *stage))
    {
        return Err(unknown_stage_message(stage, nodes));
    }
    let sensors_off = if workspace::sensors_off_by_environment() {
        Some(SensorsOff::Environment)
    } else {
        (!off_in_state.is_empty()).then_some(SensorsOff::State {
            intents: off_in_state,
        })
    };
    Ok(PlannedCheck {
        request: request.clone(),
        intents: records
            .iter()
            .filter_map(|record| record.file_name().map(str::to_owned))
            .collect(),
        plan: combined,
        sensors_off,
    })
}

impl PlannedCheck {
    /// How many fires the run will start (for a progress line).
    pub fn fire_count(&self) -> usize {
        self.plan.fires.len()
    }

    /// Run the planned fires and assemble the report. `started` is when the check began (the
    /// report's duration counts from there); `on_fire_done` is called once per finished fire,
    /// from the worker threads.
    pub fn run(
        self,
        workspace: &Workspace,
        registry: &LiveRegistry,
        nodes: &[GraphNode],
        started: Instant,
        on_fire_done: &(dyn Fn() + Sync),
    ) -> GateReport {
        let mut fires = run_gate_fires(
            workspace,
            registry,
            nodes,
            &self.plan.fires,
            self.request.jobs,
            self.request.record,
            &self.request.limits,
            on_fire_done,
        );
        name_project_files_from_the_repository(
            &mut fires,
            workspace.project_dir(),
            &self.request.project_path,
        );
        let sensors = fires
            .iter()
            .map(|fire| fire.sensor_id.as_str())
            .chain(
                self.plan
                    .unfired_bindings
                    .iter()
                    .map(|u| u.sensor_id.as_str()),
            )
            .filter_map(|id| {
                let sensor = registry.sensors.get(id)?;
                let info = SensorInfo {
                    description: sensor.manifest.description.clone(),
                    manifest_path: sensor.registry_path.clone(),
                };
                Some((id.to_owned(), info))
            })
            .collect();
        GateReport {
            sensors,
            duration: started.elapsed(),
            ..self.report_of(fires)
        }
    }

    /// What this check's report holds whatever its fires find: everything planning decides,
    /// with no fire (no sensor descriptions, no duration), and the fires it would run, in plan
    /// order, their deliverables project-relative. `aidlc gate merge` compares each shard's
    /// report with its own.
    pub fn planned_report(&self, project_dir: &Utf8Path) -> (GateReport, Vec<PlannedFire>) {
        let units = self
            .plan
            .fires
            .iter()
            .map(|fire| PlannedFire {
                deliverable: relative(project_dir, &fire.deliverable),
                ..fire.clone()
            })
            .collect();
        (self.clone().report_of(Vec::new()), units)
    }

    /// The report of this plan with `fires`, before the sensors' descriptions and the
    /// duration are known.
    fn report_of(self, fires: Vec<GateFire>) -> GateReport {
        GateReport {
            plan: self.plan_identity(),
            project_path: self.request.project_path,
            intents: self.intents,
            stages_checked: self.plan.stages_checked,
            deliverables_found: self.plan.deliverables_found,
            fires,
            skips: self.plan.skips,
            dead_bindings: self.plan.dead_bindings,
            unfired_bindings: self.plan.unfired_bindings,
            stages: self.request.stages,
            fire_on: self.request.fire_on,
            bindings_selected: self.plan.bindings_selected,
            bindings_not_selected: self.plan.bindings_not_selected,
            sensors_off: self.sensors_off,
            shard: self.request.shard,
            recorded: self.request.record,
            ..GateReport::default()
        }
    }

    /// The identity every shard of this check shares: what was asked (intents, stages,
    /// `--fire-on`), every unit of the whole plan, and everything planning found besides fires
    /// that does not depend on the shard.
    fn plan_identity(&self) -> PlanIdentity {
        let mut hasher = blake3::Hasher::new();
        let mut part = |text: &str| {
            hasher.update(text.as_bytes());
            hasher.update(b"\0");
        };
        part("aidlc gate plan v1");
        for intent in &self.intents {
            part(intent);
        }
        part("stages");
        for stage in &self.request.stages {
            part(stage);
        }
        part(&format!("{:?}", self.request.fire_on));
        part(&self.plan.units_hash.finalize().to_hex());
        part(&format!(
            "{} {} {} {} {}",
            self.plan.planned_units,
            self.plan.stages_checked,
            self.plan.deliverables_found,
            self.plan.bindings_selected,
            self.plan.bindings_not_selected
        ));
        for skip in self
            .plan
            .skips
            .iter()
            .filter(|skip| skip.reason != SkipReason::OtherShard)
        {
            part(&format!("{skip:?}"));
        }
        for dead in &self.plan.dead_bindings {
            part(&format!("{dead:?}"));
        }
        for unfired in &self.plan.unfired_bindings {
            part(&format!("{unfired:?}"));
        }
        part(&format!("{:?}", self.sensors_off));
        PlanIdentity {
            id: hasher.finalize().to_hex().to_string(),
            size: self.plan.planned_units,
        }
    }
}

/// Every finding's message and help with each absolute path under the project written from the
/// repository root, as the report shows locations: a worker is handed the deliverable's
/// absolute path and names files by it (`questions file missing: /…/x-questions.md`), which
/// would show this machine's folders in a CI report. The worker's JSON in the detail file keeps
/// what the worker wrote.
fn name_project_files_from_the_repository(
    fires: &mut [GateFire],
    project_dir: &Utf8Path,
    project_path: &Utf8Path,
) {
    let replacement = if project_path.as_str().is_empty() {
        String::new()
    } else {
        format!("{project_path}/")
    };
    let mut prefixes: Vec<String> = std::iter::once(project_dir.to_owned())
        .chain(project_dir.canonicalize_utf8().ok())
        .map(|dir| format!("{}/", dir.as_str().trim_end_matches('/')))
        .filter(|prefix| prefix.len() > 1)
        .collect();
    // The longer prefix first, so that one that contains the other is replaced whole.
    prefixes.sort_by_key(|prefix| std::cmp::Reverse(prefix.len()));
    prefixes.dedup();
    let relative = |text: &str| {
        prefixes.iter().fold(text.to_owned(), |text, prefix| {
            text.replace(prefix, &replacement)
        })
    };
    for finding in fires.iter_mut().flat_map(|fire| fire.findings.iter_mut()) {
        finding.message = relative(&finding.message);
        if let Some(help) = &finding.help {
            finding.help = Some(relative(help));
        }
    }
}

/// Turn every fire of `plan`, and every blocking binding that would not have fired, into a
/// `sensors off` skip (one without a deliverable for the latter).
fn switch_off(plan: &mut GatePlan, project_dir: &Utf8Path) {
    plan.skips
        .extend(plan.unfired_bindings.drain(..).map(|unfired| GateSkip {
            stage: unfired.stage,
            sensor_id: unfired.sensor_id,
            deliverable: None,
            reason: SkipReason::SensorsOff,
        }));
    plan.skips.extend(plan.fires.drain(..).map(|fire| {
        GateSkip {
            stage: fire.stage,
            sensor_id: fire.sensor_id,
            deliverable: fire
                .deliverable
                .strip_prefix(project_dir)
                .ok()
                .map(Utf8Path::to_owned),
            reason: SkipReason::SensorsOff,
        }
    }));
}

/// The (stage, sensor) of each blocking binding of `nodes` that a Sensors switch kept from
/// running, once each, in report order: none of them passed, so a check that has one is not
/// green (exit 3 unless something else fails it first).
pub fn blocking_bindings_switched_off(
    report: &GateReport,
    nodes: &[GraphNode],
) -> Vec<(String, String)> {
    let mut switched_off: Vec<(String, String)> = Vec::new();
    for skip in report
        .skips
        .iter()
        .filter(|skip| skip.reason == SkipReason::SensorsOff)
    {
        let blocking = nodes
            .iter()
            .filter(|node| node.slug == skip.stage)
            .flat_map(|node| &node.sensors_applicable)
            .any(|entry| {
                entry.id == skip.sensor_id && entry.default_severity == Severity::Blocking
            });
        let binding = (skip.stage.clone(), skip.sensor_id.clone());
        if blocking && !switched_off.contains(&binding) {
            switched_off.push(binding);
        }
    }
    switched_off
}

/// Add one record's plan to the combined one, keeping record order (its fires' places in the
/// whole plan come after the records before it).
fn combine(combined: &mut GatePlan, plan: GatePlan) {
    let offset = combined.planned_units;
    combined
        .fires
        .extend(plan.fires.into_iter().map(|mut fire| {
            fire.plan_index += offset;
            fire
        }));
    combined.planned_units += plan.planned_units;
    combined
        .units_hash
        .update(plan.units_hash.finalize().as_bytes());
    combined.skips.extend(plan.skips);
    combined.dead_bindings.extend(plan.dead_bindings);
    combined.unfired_bindings.extend(plan.unfired_bindings);
    combined.stages_checked += plan.stages_checked;
    combined.deliverables_found += plan.deliverables_found;
    combined.bindings_selected += plan.bindings_selected;
    combined.bindings_not_selected += plan.bindings_not_selected;
}

/// The largest file whose text the human format draws snippets from; a bigger one is pointed
/// at without a snippet.
const MAX_SNIPPET_SOURCE_BYTES: u64 = 8 * 1024 * 1024;

/// The texts of the files the report's findings point at by line (project-relative paths read
/// under `project_dir`), for the human format's snippets. A file that cannot be read, is not a
/// regular file, or is too large is left out: its findings are shown without a snippet.
pub fn finding_sources(
    project_dir: &Utf8Path,
    report: &GateReport,
) -> BTreeMap<Utf8PathBuf, Arc<str>> {
    let mut sources = BTreeMap::new();
    let wanted = report
        .fires
        .iter()
        .flat_map(|fire| &fire.findings)
        .filter(|finding| finding.position().0.is_some())
        .map(|finding| &finding.file);
    for file in wanted {
        if sources.contains_key(file) {
            continue;
        }
        // Opened without blocking and refused unless a regular file; read only up to the limit.
        let path = project_dir.join(file);
        if let Ok(bytes) = crate::leaves::fs_util::read_bounded(&path, MAX_SNIPPET_SOURCE_BYTES) {
            let text: Arc<str> = Arc::from(String::from_utf8_lossy(&bytes).as_ref());
            sources.insert(file.clone(), text);
        }
    }
    sources
}
