//! The targets of `OK` rows, checked where the stage allows: stories must exist, units must be
//! declared and mapped, business rules must exist (and every rule must be targeted or listed),
//! and code paths must be files inside the project, also through symlinks (failure mode E3).

use std::collections::{BTreeMap, BTreeSet};

use camino::Utf8Path;

use super::findings::{Findings, FiredTable};
use super::ids::{IdPattern, extract_ids};
use super::record::{RecordFiles, ids_from_file};
use super::table::Entry;
use super::upstream::{Upstream, unit_of_output_path};
use crate::runtime::sensors::worker_args::resolve_worker_path;

pub(super) fn check_targets(
    fired: &FiredTable<'_>,
    record: Option<&RecordFiles>,
    upstream: &Upstream,
    findings: &mut Findings,
) {
    let ok_entries: Vec<&Entry> = fired
        .table
        .coverage
        .iter()
        .filter(|entry| entry.status == "OK")
        .collect();
    match (fired.stage, record) {
        ("user-stories", Some(record)) => {
            check_named_ids(
                &ok_entries,
                (IdPattern::Us, "USx.y"),
                (&record.stories, "stories.md"),
                findings,
            );
        }
        ("units-generation", _) => check_unit_targets(upstream, &ok_entries, findings),
        ("functional-design", Some(record)) => {
            check_rule_targets(fired, record, upstream, &ok_entries, findings);
        }
        ("code-generation", _) => {
            for entry in &ok_entries {
                findings
                    .invalid_targets
                    .extend(code_target_problem(fired.project_dir, entry));
            }
        }
        _ => {}
    }
}

/// The ids of `pattern` the `OK` rows' targets name, each looked up in `file` (a file that
/// cannot be read or holds none is a reason): a row naming none, and an id `file` lacks, is an
/// invalid target. Gives `file`'s ids and the ids named.
fn check_named_ids(
    ok_entries: &[&Entry],
    (pattern, shape): (IdPattern, &str),
    (path, file): (&Utf8Path, &str),
    findings: &mut Findings,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let (known, reason) = ids_from_file(path, &[pattern], file);
    findings.reasons.extend(reason);
    let mut named = BTreeSet::new();
    for entry in ok_entries {
        let targets = extract_ids(entry.target.as_deref().unwrap_or_default(), &[pattern]);
        if targets.is_empty() {
            findings.invalid_targets.push(format!(
                "{}: target must name at least one {shape} ID",
                entry.id
            ));
        }
        for target in targets {
            if !known.contains(&target) {
                findings.invalid_targets.push(format!(
                    "{}: target {target} is absent from {file}",
                    entry.id
                ));
            }
            named.insert(target);
        }
    }
    (known, named)
}

fn check_unit_targets(upstream: &Upstream, ok_entries: &[&Entry], findings: &mut Findings) {
    let (Some(context), Some(assignments)) = (&upstream.units, &upstream.story_assignments) else {
        return;
    };
    let mut unit_of_alias: BTreeMap<&str, &str> = BTreeMap::new();
    for (unit, alias) in &context.unit_aliases {
        unit_of_alias.insert(alias, unit);
    }
    for entry in ok_entries {
        let raw_target = entry.trimmed_target();
        let unit = if context.units.iter().any(|unit| unit == raw_target) {
            Some(raw_target)
        } else {
            unit_of_alias
                .get(raw_target.to_uppercase().as_str())
                .copied()
        };
        let id = &entry.id;
        match unit {
            None => findings.invalid_targets.push(format!(
                "{id}: target \"{raw_target}\" is not a declared unit"
            )),
            Some(unit)
                if !assignments
                    .get(id)
                    .is_some_and(|units| units.contains(unit)) =>
            {
                findings.invalid_targets.push(format!(
                    "{id}: target \"{raw_target}\" is not mapped in unit-of-work-story-map.md"
                ));
            }
            Some(_) => {}
        }
    }
}

fn check_rule_targets(
    fired: &FiredTable<'_>,
    record: &RecordFiles,
    upstream: &Upstream,
    ok_entries: &[&Entry],
    findings: &mut Findings,
) {
    let unit_folder = match &upstream.units {
        Some(context) => context.unit_folder.clone(),
        None => match unit_of_output_path(fired.output_path) {
            Some((unit, true)) => record.record.join("construction/units").join(unit),
            Some((unit, false)) => record.record.join("construction").join(unit),
            None => return,
        },
    };
    let rules_path = unit_folder.join("functional-design/rules.md");
    let (rules, targeted) = check_named_ids(
        ok_entries,
        (IdPattern::Br, "BRx.y"),
        (&rules_path, "rules.md"),
        findings,
    );
    let explained: BTreeSet<&str> = fired.table.reverse.iter().map(|e| e.id.as_str()).collect();
    findings.orphans.extend(
        rules
            .into_iter()
            .filter(|rule| !targeted.contains(rule) && !explained.contains(rule.as_str())),
    );
}

/// Why a code-generation target is not a file of the project, if it is not.
fn code_target_problem(project_dir: &Utf8Path, entry: &Entry) -> Option<String> {
    let id = &entry.id;
    let target = entry.trimmed_target().replace('\\', "/");
    if target.is_empty() || target.starts_with('/') || is_drive_absolute(&target) {
        return Some(format!(
            "{id}: target must be a workspace-relative file path"
        ));
    }
    let root = resolve_worker_path(project_dir, ".");
    let absolute = resolve_worker_path(&root, &target);
    if !absolute.starts_with(&root) || escapes_through_a_link(&root, &absolute) {
        return Some(format!("{id}: target escapes the project directory"));
    }
    match std::fs::metadata(&absolute) {
        Ok(metadata) if metadata.is_file() => None,
        _ => Some(format!("{id}: target file does not exist: {target}")),
    }
}

/// `C:/…` (after backslashes became `/`).
fn is_drive_absolute(target: &str) -> bool {
    let bytes = target.as_bytes();
    bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/'
}

/// Whether `absolute`, once its links are followed, lies outside the project's real folder.
fn escapes_through_a_link(root: &Utf8Path, absolute: &Utf8Path) -> bool {
    match (root.canonicalize_utf8(), absolute.canonicalize_utf8()) {
        (Ok(real_root), Ok(real_target)) => !real_target.starts_with(real_root),
        _ => false,
    }
}
