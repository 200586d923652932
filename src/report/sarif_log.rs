//! The shape of a SARIF 2.1.0 log, as the sarif format writes it: one `Serialize` struct per
//! object, its fields in the order they are written (the order of the snapshots), an absent
//! optional value left out. Only the objects and properties the format uses are here; what
//! goes in them is decided in `sarif.rs`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::counts::CountsDocument;
use crate::report::problem::Region;
use crate::runtime::gate::report::PlanIdentity;

/// The log: `$schema`, `version` and its one run.
#[derive(Debug, Serialize)]
pub(super) struct Log<'a> {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: [Run<'a>; 1],
}

/// One run: the tool and its rules, the base URI, and for the gate report the shard, the
/// invocation and the run's property bag.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Run<'a> {
    pub tool: Tool,
    pub original_uri_base_ids: OriginalUriBaseIds<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automation_details: Option<AutomationDetails>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocations: Option<[Invocation<'a>; 1]>,
    pub results: Vec<SarifResult<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<RunProperties<'a>>,
}

#[derive(Debug, Serialize)]
pub(super) struct Tool {
    pub driver: Driver,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Driver {
    pub name: &'static str,
    pub version: String,
    pub semantic_version: String,
    pub information_uri: &'static str,
    pub rules: Vec<Rule>,
}

/// `originalUriBaseIds`: the one base, `%SRCROOT%`.
#[derive(Debug, Serialize)]
pub(super) struct OriginalUriBaseIds<'a> {
    #[serde(rename = "%SRCROOT%")]
    pub source_root: UriBase<'a>,
}

#[derive(Debug, Serialize)]
pub(super) struct UriBase<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<&'a str>,
    pub description: Text,
}

/// A `message` or description: `{"text": …}`.
#[derive(Debug, Serialize)]
pub(super) struct Text {
    pub text: String,
}

impl Text {
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }
}

#[derive(Debug, Serialize)]
pub(super) struct AutomationDetails {
    pub id: String,
}

/// One entry of the driver's `rules`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Rule {
    pub id: String,
    pub name: String,
    pub short_description: Text,
    pub full_description: Text,
    pub help: RuleHelp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<RuleProperties>,
}

#[derive(Debug, Serialize)]
pub(super) struct RuleHelp {
    pub text: String,
    pub markdown: String,
}

#[derive(Debug, Serialize)]
pub(super) struct RuleProperties {
    pub tags: &'static [&'static str],
}

/// One result: its rule, level, text and location, its one partial fingerprint and, when
/// given, its property bag.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SarifResult<'a> {
    pub rule_id: &'a str,
    pub rule_index: usize,
    pub level: &'static str,
    pub message: Text,
    pub locations: [Location; 1],
    pub partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<ResultProperties<'a>>,
}

/// A result's property bag: a fire's, a never-fired binding's, or a compile diagnostic's plugin.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum ResultProperties<'a> {
    Fire(FireProperties<'a>),
    NeverFired(NeverFiredProperties<'a>),
    Plugin { plugin: &'a str },
}

/// The fire's identity; absent values are left out.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FireProperties<'a> {
    pub stage: &'a str,
    pub severity: &'static str,
    pub result: &'static str,
    pub deliverable: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding_rule: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fire_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail_path: Option<&'a str>,
}

/// A never-fired binding's identity; a plugin stage's also names the plugin (D50).
#[derive(Debug, Serialize)]
pub(super) struct NeverFiredProperties<'a> {
    pub stage: &'a str,
    pub severity: &'static str,
    pub result: &'static str,
    pub note: &'static str,
    pub intent: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<&'a str>,
}

/// A physical location: a file under `%SRCROOT%` and a region that always has a line.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Location {
    pub physical_location: PhysicalLocation,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    /// Line 1 when none is known (GitHub places a result by its region).
    pub region: Region,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ArtifactLocation {
    pub uri: String,
    pub uri_base_id: &'static str,
}

/// The gate check's one invocation: whether everything was evaluated, and its notifications.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Invocation<'a> {
    pub execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_execution_notifications: Vec<Notification<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_configuration_notifications: Vec<Notification<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Notification<'a> {
    pub level: &'static str,
    pub message: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<[Location; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub associated_rule: Option<RuleReference<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<DeadBindingProperties<'a>>,
}

#[derive(Debug, Serialize)]
pub(super) struct RuleReference<'a> {
    pub id: &'a str,
    pub index: usize,
}

/// A dead binding names its sensor in the property bag, not as a rule reference: the sensor
/// never fired, so it has no rule in this run.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DeadBindingProperties<'a> {
    pub stage: &'a str,
    pub sensor_id: &'a str,
    pub pattern: &'a str,
}

/// The denominator (D4) in the run's property bag.
#[derive(Debug, Serialize)]
pub(super) struct RunProperties<'a> {
    pub intents: &'a [String],
    pub recorded: bool,
    pub summary: String,
    /// The counts as the JSON report writes them (one writer, `counts.rs`).
    pub counts: CountsDocument<'a>,
    pub plan: &'a PlanIdentity,
}
