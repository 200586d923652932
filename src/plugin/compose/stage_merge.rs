//! Merging every contribution of one core stage into its text: each contribution's structural
//! additions in their order, then all the stage's fragments at once (`splice`), recording as it
//! writes which text each contribution put where ([`ContributedRange`], docs/decisions.md D52).
//!
//! Invariants:
//! - problems come in the order of the contributions, and for each: its scopes, its consumed
//!   artifacts, its merges, its fragment slots;
//! - every recorded range is moved by each later edit before or across it, so the records of a
//!   composed stage name its final text.

use std::collections::BTreeMap;

use camino::Utf8Path;

use super::{Planner, Roster};
use crate::plugin::Problem;
use crate::plugin::contributed_text::{self, ContributedRange, Origin};
use crate::plugin::contribution::Contribution;
use crate::plugin::lock_file::{self, LockedStage};
use crate::plugin::merge;
use crate::plugin::sidecar::StageAdditions;
use crate::plugin::splice;

/// (plugin, stage slug) → what the plugin added to the stage, in each plugin's reading order.
pub(super) type Additions = Vec<(String, Vec<(String, StageAdditions)>)>;

pub(super) fn merge_contributions(
    planner: &mut Planner<'_>,
    contributions: &[Contribution],
) -> Additions {
    let mut additions: Additions = Vec::new();
    // Each target stage, in the order first targeted, with its contributions in reading order.
    let mut targets: Vec<(String, Vec<&Contribution>)> = Vec::new();
    for contribution in contributions {
        match planner.find_stage(&contribution.target) {
            Some(path) => entry_of(&mut targets, &path).push(contribution),
            None => planner.problems.push(
                Problem::new(format!(
                    "targets stage \"{}\", which the install does not have",
                    contribution.target
                ))
                .of_plugin_at(&contribution.plugin, &contribution.source)
                .at_key_in(&contribution.text, &["target"])
                .with_help("check the `target:` slug (a stage's file name without .md)"),
            ),
        }
    }
    for (path, of_target) in targets {
        merge_into_stage(planner, &path, &of_target, &mut additions);
    }
    additions
}

/// One `adds` field merged into a stage's text.
type MergeInto<'a> = dyn Fn(&mut String) -> Result<merge::Merged, String> + 'a;

/// The value of `key` in `entries`, pushed as the default the first time (keys keep the order
/// they were first asked in).
fn entry_of<'a, T: Default>(entries: &'a mut Vec<(String, T)>, key: &str) -> &'a mut T {
    let index = entries
        .iter()
        .position(|(name, _)| name == key)
        .unwrap_or_else(|| {
            entries.push((key.to_owned(), T::default()));
            entries.len() - 1
        });
    &mut entries[index].1
}

/// What the contributions of one stage have claimed so far: each consumed artifact's plugin and
/// `required`, each fragment slot's plugin, and the fragments to splice, in reading order.
#[derive(Default)]
struct StageClaims<'c> {
    consumed_by: BTreeMap<String, (String, bool)>,
    slots: BTreeMap<(String, u64), String>,
    fragments: Vec<(splice::Fragment, &'c Contribution)>,
}

fn merge_into_stage(
    planner: &mut Planner<'_>,
    path: &str,
    contributions: &[&Contribution],
    additions: &mut Additions,
) {
    let Some(original) = planner.view(path) else {
        return;
    };
    let Ok(original_text) = String::from_utf8(original.clone()) else {
        planner
            .problems
            .push(Problem::new("the stage is not UTF-8").at_path(path));
        return;
    };
    let is_base_file = !planner.owner.contains_key(path);
    if is_base_file && splice::holds_sentinels(&original_text) {
        planner.problems.push(
            Problem::new("already holds plugin fragments composed by another composer (`<!-- plugin:… -->` markers)")
                .at_path(path)
                .with_help("restore the stage's original text (from version control or a fresh copy of the core files), then run the command again"),
        );
        return;
    }
    let mut text = original_text.replace("\r\n", "\n");
    let scope_roster = planner.roster(&planner.layout.scopes_dir.clone()).clone();
    let mut claims = StageClaims::default();
    let mut contributed: Vec<ContributedRange> = Vec::new();
    for contribution in contributions {
        let scopes = owned_scopes(planner, contribution, &scope_roster);
        check_consumes_agree(planner, contribution, &mut claims.consumed_by);
        merge_adds(
            planner,
            contribution,
            &scopes,
            &mut text,
            &mut contributed,
            additions,
        );
        claim_fragment_slots(planner, contribution, &mut claims);
    }
    let Some(text) = splice_recorded(planner, &text, &claims.fragments, &mut contributed) else {
        return;
    };
    if text.as_bytes() == original.as_slice() {
        return;
    }
    if is_base_file {
        planner.stages.insert(
            path.to_owned(),
            LockedStage {
                base: original_text,
                composed: lock_file::content_hash(text.as_bytes()),
            },
        );
        planner
            .contributed
            .insert(planner.layout.display(Utf8Path::new(path)), contributed);
    }
    planner.target.insert(path.to_owned(), text.into_bytes());
}

/// Refuse a value of `contribution`; `key` and `item` say where in its frontmatter it is.
fn refuse(
    planner: &mut Planner<'_>,
    contribution: &Contribution,
    message: String,
    key: &[&str],
    item: Option<&str>,
) {
    planner.problems.push(
        Problem::new(message)
            .of_plugin_at(&contribution.plugin, &contribution.source)
            .at_key_item_in(&contribution.text, key, item),
    );
}

/// The scopes of `adds.scopes` the contribution's plugin owns; the others are refused.
fn owned_scopes(
    planner: &mut Planner<'_>,
    contribution: &Contribution,
    scope_roster: &Roster,
) -> Vec<String> {
    let plugin = contribution.plugin.as_str();
    let mut scopes = Vec::new();
    for scope in &contribution.adds.scopes {
        match scope_roster.get(scope) {
            None => refuse(
                planner,
                contribution,
                format!("adds.scopes \"{scope}\": no installed scope file is named \"{scope}\""),
                &["adds", "scopes"],
                Some(scope),
            ),
            Some((_, owner)) if owner.as_deref() != Some(plugin) => refuse(
                planner,
                contribution,
                format!(
                    "adds.scopes \"{scope}\" is not owned by plugin \"{plugin}\" (its file declares {}); only a plugin's own scopes may be added",
                    owner.as_ref().map_or_else(
                        || "no plugin: it is core's".to_owned(),
                        |owner| format!("plugin \"{owner}\"")
                    )
                ),
                &["adds", "scopes"],
                Some(scope),
            ),
            Some(_) => scopes.push(scope.clone()),
        }
    }
    scopes
}

/// Refuse an artifact another plugin already consumes on the stage with another `required`.
fn check_consumes_agree(
    planner: &mut Planner<'_>,
    contribution: &Contribution,
    consumed_by: &mut BTreeMap<String, (String, bool)>,
) {
    let plugin = contribution.plugin.as_str();
    let stage = contribution.target.as_str();
    for entry in &contribution.adds.consumes {
        match consumed_by.get(&entry.artifact) {
            Some((other, required)) if other != plugin && *required != entry.required => {
                refuse(
                    planner,
                    contribution,
                    format!(
                        "consumes \"{}\" on stage \"{stage}\" with required: {}, but plugin \"{other}\" adds it with required: {required}",
                        entry.artifact, entry.required
                    ),
                    &["adds", "consumes"],
                    Some(&entry.artifact),
                );
            }
            _ => {
                consumed_by.insert(entry.artifact.clone(), (plugin.to_owned(), entry.required));
            }
        }
    }
}

/// Merge the contribution's `adds` fields into `text`, recording each merge's text as this
/// contribution's before the next edits the stage, and what it added in `additions`.
fn merge_adds(
    planner: &mut Planner<'_>,
    contribution: &Contribution,
    scopes: &[String],
    text: &mut String,
    contributed: &mut Vec<ContributedRange>,
    additions: &mut Additions,
) {
    let plugin = contribution.plugin.as_str();
    let stage = contribution.target.as_str();
    let adds = &contribution.adds;
    // The fields in the order they are merged.
    let merges: [(&'static str, &MergeInto<'_>); 5] = [
        ("produces", &|text| {
            merge::merge_names(text, "produces", &adds.produces)
        }),
        ("sensors", &|text| {
            merge::merge_names(text, "sensors", &adds.sensors)
        }),
        ("scopes", &|text| merge::merge_names(text, "scopes", scopes)),
        ("consumes", &|text| {
            merge::merge_consumes(text, &adds.consumes)
        }),
        ("required_sections", &|text| {
            merge::merge_required_sections(text, &adds.required_sections)
        }),
    ];
    for (field, merge) in merges {
        let length_before = text.len();
        let merged = match merge(text) {
            Ok(merged) => merged,
            Err(reason) => {
                refuse(
                    planner,
                    contribution,
                    format!("cannot add to {field} of stage \"{stage}\": {reason}"),
                    &["adds", field],
                    None,
                );
                continue;
            }
        };
        let grown = text.len().cast_signed() - length_before.cast_signed();
        contributed_text::shift_after(contributed, merged.written.start, grown);
        if let Some((entry, value)) = adds.spans.get(field)
            && !merged.written.is_empty()
        {
            contributed.push(ContributedRange {
                range: merged.written,
                source: contribution.source.clone(),
                origin: Origin::Adds {
                    entry: entry.clone(),
                    value: value.clone(),
                },
            });
        }
        for kept in merged.kept {
            planner.warnings.push(
                Problem::warning(format!(
                    "stage \"{stage}\" already consumes \"{}\" with required: {}; the contribution does not change it",
                    kept.artifact, kept.stage_required
                ))
                .of_plugin_at(plugin, &contribution.source)
                .at_key_item_in(&contribution.text, &["adds", "consumes"], Some(&kept.artifact)),
            );
        }
        let record = entry_of(entry_of(additions, plugin), stage);
        record.added.entry(field).or_default().extend(merged.added);
        record.required_sections_created |= field == "required_sections" && merged.created;
    }
}

/// Claim each of the contribution's fragment slots (anchor, order) on the stage; a slot taken
/// twice, by the same plugin or by another, is refused.
fn claim_fragment_slots<'c>(
    planner: &mut Planner<'_>,
    contribution: &'c Contribution,
    claims: &mut StageClaims<'c>,
) {
    let plugin = contribution.plugin.as_str();
    let stage = contribution.target.as_str();
    for fragment in &contribution.fragments {
        let slot = (fragment.anchor_text.clone(), fragment.order);
        let Some(other) = claims.slots.get(&slot) else {
            claims.slots.insert(slot, plugin.to_owned());
            claims.fragments.push((fragment.clone(), contribution));
            continue;
        };
        let message = if other == plugin {
            format!(
                "two fragments of the plugin at anchor \"{}\" order {} of stage \"{stage}\"",
                slot.0, slot.1
            )
        } else {
            format!(
                "fragment at anchor \"{}\" order {} of stage \"{stage}\" conflicts with plugin \"{other}\"'s fragment at the same place",
                slot.0, slot.1
            )
        };
        refuse(
            planner,
            contribution,
            message,
            &["fragments"],
            Some(&fragment.anchor_text),
        );
    }
}

/// `text` with every fragment spliced in, the records moved past each inserted group and one
/// more for each fragment's prose; `None`, with the problem pushed, when a fragment has no place.
fn splice_recorded(
    planner: &mut Planner<'_>,
    text: &str,
    fragments: &[(splice::Fragment, &Contribution)],
    contributed: &mut Vec<ContributedRange>,
) -> Option<String> {
    let pieces: Vec<splice::Fragment> = fragments
        .iter()
        .map(|(fragment, _)| fragment.clone())
        .collect();
    match splice::splice_fragments(text, &pieces) {
        Ok(spliced) => {
            // Groups in the order of the text: each moves what the earlier text recorded
            // after it (offsets of the text before any group was inserted).
            for (at, length) in spliced.inserted.iter().rev() {
                contributed_text::shift_after(contributed, *at, length.cast_signed());
            }
            for ((fragment, contribution), prose) in fragments.iter().zip(spliced.prose) {
                contributed.push(ContributedRange {
                    range: prose,
                    source: contribution.source.clone(),
                    origin: Origin::Fragment {
                        authored_prose: fragment.authored_prose.clone(),
                        authored_at: fragment.authored_at,
                    },
                });
            }
            Some(spliced.text)
        }
        Err((index, reason)) => {
            let (fragment, contribution) = &fragments[index];
            planner.problems.push(
                Problem::new(format!(
                    "fragment \"{}\" order {} cannot be placed in stage \"{}\": {reason}",
                    fragment.anchor_text, fragment.order, contribution.target
                ))
                .of_plugin_at(&contribution.plugin, &contribution.source)
                .at_key_item_in(
                    &contribution.text,
                    &["fragments"],
                    Some(&fragment.anchor_text),
                )
                .with_help("point the fragment at a heading the stage has"),
            );
            None
        }
    }
}
