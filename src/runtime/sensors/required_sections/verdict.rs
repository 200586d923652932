//! The verdict `required-sections` builds: the H2 floor or the template's headings, the marker
//! exemption and the edge block, and its JSON with the keys in the reference's order.
//!
//! Invariant: `findings_count` always agrees with the rules applied so far, and the verdict
//! passes exactly when it is 0.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::bolt_dag::EdgeBlock;
use crate::leaves::english::counted;
use crate::protocol::finding::Finding;
use crate::runtime::sensors::finding::verdict_json;

/// The generic floor: this many distinct H2 headings.
const H2_FLOOR: usize = 2;

/// The verdict being built. Invariant: `findings_count` always agrees with the rules applied so
/// far (floor or template, marker exemption, edge block); the verdict passes when it is 0.
#[derive(Default)]
pub(super) struct SectionsVerdict {
    headings: Vec<String>,
    findings_count: usize,
    marker_exempt: bool,
    pub(super) template: Option<TemplateUse>,
    edge_block: Option<EdgeBlock>,
}

pub(super) enum TemplateUse {
    Ineligible {
        config_warning: String,
    },
    Applied {
        expected: Vec<String>,
        missing: Vec<String>,
        /// Where the template is, for the findings' help.
        template_path: String,
    },
}

impl SectionsVerdict {
    /// The generic floor over the deliverable's headings.
    pub(super) fn of_headings(headings: Vec<String>) -> Self {
        Self {
            findings_count: H2_FLOOR.saturating_sub(headings.len()),
            headings,
            ..Self::default()
        }
    }

    pub(super) fn exempt_marker(&mut self) {
        self.marker_exempt = true;
        self.findings_count = 0;
    }

    /// The template's headings replace the floor: each one missing is one finding.
    pub(super) fn apply_template_headings(&mut self, expected: Vec<String>, template_path: &str) {
        let present: HashSet<&str> = self.headings.iter().map(String::as_str).collect();
        let missing: Vec<String> = expected
            .iter()
            .filter(|heading| !present.contains(heading.as_str()))
            .cloned()
            .collect();
        self.findings_count = missing.len();
        self.template = Some(TemplateUse::Applied {
            expected,
            missing,
            template_path: template_path.to_owned(),
        });
    }

    pub(super) fn apply_edge_block(&mut self, edge_block: EdgeBlock) {
        if edge_block != EdgeBlock::Ok {
            self.findings_count += 1;
        }
        self.edge_block = Some(edge_block);
    }

    /// The verdict's JSON, keys in the reference's order, then `diagnostics` (each finding on
    /// `file`, the deliverable as fired) when it failed.
    pub(super) fn into_json(self, file: &str) -> Value {
        let pass = self.findings_count == 0;
        let located = if pass { Vec::new() } else { self.located(file) };
        let (template, config_warning, expected, missing) = match self.template {
            Some(TemplateUse::Ineligible { config_warning }) => {
                (Some("ineligible"), Some(config_warning), None, None)
            }
            Some(TemplateUse::Applied {
                expected, missing, ..
            }) => (Some("applied"), None, Some(expected), Some(missing)),
            None => (None, None, None, None),
        };
        verdict_json(
            [
                ("pass", Some(json!(pass))),
                ("h2_count", Some(json!(self.headings.len()))),
                ("headings", Some(json!(self.headings))),
                ("findings_count", Some(json!(self.findings_count))),
                ("marker_exempt", self.marker_exempt.then_some(json!(true))),
                ("template", template.map(Value::from)),
                ("config_warning", config_warning.map(Value::from)),
                ("template_expected", expected.map(Value::from)),
                ("template_missing", missing.map(Value::from)),
                (
                    "edge_block",
                    self.edge_block
                        .as_ref()
                        .map(|edge_block| json!(<&str>::from(edge_block))),
                ),
            ],
            &located,
        )
    }

    /// One finding per missing template heading (else one for the floor's shortfall), and one
    /// for an edge block that is not `ok`.
    fn located(&self, file: &str) -> Vec<Finding> {
        let mut located = Vec::new();
        match &self.template {
            Some(TemplateUse::Applied {
                missing,
                template_path,
                ..
            }) => {
                located.extend(missing.iter().map(|heading| {
                    Finding::at_file(
                        file,
                        "missing-heading",
                        format!("missing the heading `{heading}` its template requires"),
                    )
                    .with_help(format!(
                        "add a `{heading}` section; the template is {template_path}"
                    ))
                }));
            }
            _ if self.findings_count > usize::from(self.edge_block_failed()) => {
                located.push(
                    Finding::at_file(
                        file,
                        "too-few-headings",
                        format!(
                            "has {}; at least {H2_FLOOR} are required",
                            counted(self.headings.len(), "distinct `## ` heading")
                        ),
                    )
                    .with_help(format!(
                        "give the document at least {H2_FLOOR} `## ` sections (a template for it names the ones it needs)"
                    )),
                );
            }
            _ => {}
        }
        if let Some(edge_block) = self
            .edge_block
            .as_ref()
            .filter(|_| self.edge_block_failed())
        {
            located.push(edge_block_finding(file, edge_block));
        }
        located
    }

    fn edge_block_failed(&self) -> bool {
        self.edge_block
            .as_ref()
            .is_some_and(|edge_block| *edge_block != EdgeBlock::Ok)
    }
}

fn edge_block_finding(file: &str, edge_block: &EdgeBlock) -> Finding {
    let block = "```yaml block declaring `units:`";
    let (message, help) = match edge_block {
        EdgeBlock::Absent => (
            format!("has no Bolt DAG ({block})"),
            format!("add a {block} with a `- name:` and `depends_on:` per unit"),
        ),
        EdgeBlock::Malformed { detail } => (
            format!("its Bolt DAG is malformed: {detail}"),
            "fix the `units:` block: each unit once, with known dependencies and none on itself"
                .to_owned(),
        ),
        EdgeBlock::Cyclic => (
            "its Bolt DAG has a dependency cycle".to_owned(),
            "break the cycle in the units' `depends_on:` lists".to_owned(),
        ),
        EdgeBlock::Ok => (String::new(), String::new()),
    };
    Finding::at_file(file, "bolt-dag", message).with_help(help)
}
