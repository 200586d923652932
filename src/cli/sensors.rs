//! `aidlc sensors [ID] [--format human|json]`: what `engine sensor list|describe` show, plus
//! the plugin each sensor comes from (docs/decisions.md D50). The engine's own lines stay the
//! reference's (D47); this command is where people and tools see the plugin.
//!
//! A sensor's plugin is the one the lock file (`aidlc.lock.json`) records as owning its
//! manifest; every other manifest is the core framework's, named `aidlc` as the reference's
//! plugin selection names it. An unreadable lock is an error (exit 2), never "all core".

use serde::Serialize;

use crate::cli::args::{Format, HumanOrJson, SensorsArgs};
use crate::cli::printer::{Printer, error_line};
use crate::cli::project::{CommandResult, resolve_layout, usable_registry};
use crate::compile::stage_graph::plugins_key::CORE_PLUGIN;
use crate::leaves::exit_status::ExitStatus;
use crate::plugin::lock_file::{Lock, read_lock};
use crate::protocol::selection::FireOn;
use crate::runtime::dispatch::registry::{LiveRegistry, LiveSensor};

/// One sensor as `aidlc sensors --format json` prints it: the keys in this order, the optional
/// ones left out when the manifest has none.
#[derive(Debug, Serialize)]
struct SensorRow<'a> {
    id: &'a str,
    kind: &'a str,
    plugin: &'a str,
    command: &'a str,
    default_severity: &'a str,
    fire_on: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    matches: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout_seconds: Option<u64>,
    path: &'a str,
}

impl<'a> SensorRow<'a> {
    fn of(sensor: &'a LiveSensor, lock: &'a Lock) -> Self {
        let manifest = &sensor.manifest;
        Self {
            id: &manifest.id,
            kind: &manifest.kind,
            plugin: lock.owner_of(&sensor.registry_path).unwrap_or(CORE_PLUGIN),
            command: &manifest.command,
            default_severity: manifest.default_severity.as_str(),
            fire_on: manifest.fire_on.as_str(),
            description: &manifest.description,
            category: manifest.category.as_deref(),
            matches: manifest.matches.as_deref(),
            timeout_seconds: manifest.timeout_seconds,
            path: &sensor.registry_path,
        }
    }
}

/// `engine sensor describe`'s lines (D47): `fire_on` only when it is `gate`, and the optional
/// keys only when the manifest has them.
pub(super) fn described_lines(sensor: &LiveSensor) -> Vec<String> {
    let manifest = &sensor.manifest;
    let mut lines = vec![
        format!("id: {}", manifest.id),
        format!("kind: {}", manifest.kind),
        format!("command: {}", manifest.command),
        format!("default_severity: {}", manifest.default_severity.as_str()),
    ];
    if manifest.fire_on == FireOn::Gate {
        lines.push("fire_on: gate".to_owned());
    }
    lines.push(format!("description: {}", manifest.description));
    if let Some(category) = &manifest.category {
        lines.push(format!("category: {category}"));
    }
    if let Some(matches) = &manifest.matches {
        lines.push(format!("matches: {matches}"));
    }
    if let Some(timeout) = manifest.timeout_seconds {
        lines.push(format!("timeout_seconds: {timeout}"));
    }
    lines.push(format!("path: {}", sensor.registry_path));
    lines
}

pub fn run(args: &SensorsArgs) -> CommandResult {
    let printer = Printer::new(Format::Human, false);
    let layout = resolve_layout(&args.project, &printer)?;
    let registry = usable_registry(&layout, &printer).ok_or(ExitStatus::Failure)?;
    let lock = read_lock(&layout.project_dir, layout.harness.dir_name()).map_err(|problem| {
        error_line(
            &printer,
            &problem.headline(),
            Some(
                problem
                    .help()
                    .unwrap_or("fix or restore the lock file; `aidlc plugin sync` rewrites it"),
            ),
        )
    })?;
    if let Some(id) = &args.id {
        return describe_one(&registry, &lock, id, args.format, &printer);
    }
    let rows: Vec<SensorRow<'_>> = registry
        .sensors
        .values()
        .map(|sensor| SensorRow::of(sensor, &lock))
        .collect();
    match args.format {
        HumanOrJson::Human => {
            for row in &rows {
                printer.out(&format!(
                    "{}\t{}\t{}\t{}",
                    row.id, row.kind, row.plugin, row.description
                ));
            }
        }
        HumanOrJson::Json => printer.out(&json_text(&rows)),
    }
    Ok(ExitStatus::Success)
}

/// The sensor `id` of `registry`, or exit 2 naming the known ids.
pub(super) fn known_sensor<'r>(
    registry: &'r LiveRegistry,
    id: &str,
    help: Option<&str>,
    printer: &Printer,
) -> Result<&'r LiveSensor, ExitStatus> {
    registry
        .known(id)
        .map_err(|message| error_line(printer, &message, help))
}

fn describe_one(
    registry: &LiveRegistry,
    lock: &Lock,
    id: &str,
    format: HumanOrJson,
    printer: &Printer,
) -> CommandResult {
    let sensor = known_sensor(registry, id, Some("`aidlc sensors` lists them"), printer)?;
    let row = SensorRow::of(sensor, lock);
    match format {
        HumanOrJson::Human => {
            let mut lines = described_lines(sensor);
            lines.push(format!("plugin: {}", row.plugin));
            printer.out(&lines.join("\n"));
        }
        HumanOrJson::Json => printer.out(&json_text(&row)),
    }
    Ok(ExitStatus::Success)
}

fn json_text(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_else(|error| unreachable!("rows of strings and numbers serialise: {error}"))
}
