//! The verdict `required-sections` builds: the H2 floor or the template's headings, the marker
//! exemption and the edge block, and its JSON with the keys in the documented order.
//!
//! Invariant: `pass` and `findings_count` always agree with the rules applied so far.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::bolt_dag::EdgeBlock;

/// The generic floor: this many distinct H2 headings.
const H2_FLOOR: usize = 2;

/// The verdict being built. Invariant: `pass` and `findings_count` always agree with the rules
/// applied so far (floor or template, marker exemption, edge block).
pub(super) struct SectionsVerdict {
    pass: bool,
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
    },
}

impl SectionsVerdict {
    pub(super) fn not_markdown() -> Self {
        Self {
            pass: true,
            headings: Vec::new(),
            findings_count: 0,
            marker_exempt: false,
            template: None,
            edge_block: None,
        }
    }

    /// The generic floor over the deliverable's headings.
    pub(super) fn of_headings(headings: Vec<String>) -> Self {
        Self {
            pass: headings.len() >= H2_FLOOR,
            findings_count: H2_FLOOR.saturating_sub(headings.len()),
            headings,
            marker_exempt: false,
            template: None,
            edge_block: None,
        }
    }

    pub(super) fn exempt_marker(&mut self) {
        self.marker_exempt = true;
        self.pass = true;
        self.findings_count = 0;
    }

    /// The template's headings replace the floor: each one missing is one finding.
    pub(super) fn apply_template_headings(&mut self, expected: Vec<String>) {
        let present: HashSet<&str> = self.headings.iter().map(String::as_str).collect();
        let missing: Vec<String> = expected
            .iter()
            .filter(|heading| !present.contains(heading.as_str()))
            .cloned()
            .collect();
        self.pass = missing.is_empty();
        self.findings_count = missing.len();
        self.template = Some(TemplateUse::Applied { expected, missing });
    }

    pub(super) fn apply_edge_block(&mut self, edge_block: EdgeBlock) {
        if edge_block != EdgeBlock::Ok {
            self.pass = false;
            self.findings_count += 1;
        }
        self.edge_block = Some(edge_block);
    }

    pub(super) fn into_json(self) -> Value {
        let mut object = Map::new();
        object.insert("pass".to_owned(), Value::Bool(self.pass));
        object.insert("h2_count".to_owned(), Value::from(self.headings.len()));
        object.insert("headings".to_owned(), Value::from(self.headings));
        object.insert(
            "findings_count".to_owned(),
            Value::from(self.findings_count),
        );
        if self.marker_exempt {
            object.insert("marker_exempt".to_owned(), Value::Bool(true));
        }
        match self.template {
            Some(TemplateUse::Ineligible { config_warning }) => {
                object.insert("template".to_owned(), Value::from("ineligible"));
                object.insert("config_warning".to_owned(), Value::from(config_warning));
            }
            Some(TemplateUse::Applied { expected, missing }) => {
                object.insert("template".to_owned(), Value::from("applied"));
                object.insert("template_expected".to_owned(), Value::from(expected));
                object.insert("template_missing".to_owned(), Value::from(missing));
            }
            None => {}
        }
        if let Some(edge_block) = self.edge_block {
            object.insert("edge_block".to_owned(), Value::from(edge_block.as_str()));
        }
        Value::Object(object)
    }
}
