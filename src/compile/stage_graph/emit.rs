//! Canonical bytes of `stage-graph.json` (D16–D17, D2): each stage's node filled from
//! its parsed definition, the rule set and its resolved sensors, and written through the
//! protocol's one node writer (`protocol::stage_node`), which knows every key, its place and which
//! graph format carries it ([`graph_format`], D13).
//!
//! Invariant: the output equals `JSON.stringify(nodes, null, 2) + "\n"` of the reference, with
//! node keys in the [gate] `FIELD_ORDER` and nested objects in construction order. Each node's
//! bytes are a tracked value, so the file is assembled from memoised pieces.

use std::sync::Arc;

use crate::compile::db::{CompilerDatabase, SourceFile};
use crate::compile::parse::{parsed_stage, rule_set};
use crate::compile::resolve::{sensor_registry, sensors_applicable};
use crate::compile::stage_graph::format_choice::graph_format;
use crate::compile::stage_graph::numbering::{
    dedup, stage_headers_in_chunk, stage_number, stage_numbering,
};
use crate::compile::stage_graph::plugin_selection::stage_is_enabled;
use crate::compile::stage_graph::stage_chunks::{FactsByStage, StageChunk, chunk_entries};
use crate::compile::syntax::stage::{Located, StageDefinition};
use crate::leaves::diagnostics::{Code, Diagnostic};
use crate::protocol::selection::{FireOn, Severity};
use crate::protocol::stage_node::{ConsumeEntry, NodeBody, RuleEntry, write_node_head};
use camino::Utf8Path;

/// `reviewer_max_iterations` beside a reviewer when the stage names none: the reference's.
const DEFAULT_REVIEWER_MAX_ITERATIONS: u64 = 2;

/// `review_class` beside a reviewer when the stage names none: the reference's.
const DEFAULT_REVIEW_CLASS: &str = "adversarial";

/// Manifests whose `fire_on: gate` or `default_severity: blocking` the install's graph format
/// cannot carry: without those keys in `sensors_applicable` the reference (and this engine)
/// read every binding as write-fired and advisory, so the manifest's wish is said out loud.
/// In a format that carries them, a manifest that is blocking but write-fired is said out loud
/// instead ([`write_fired_blocking_diagnostics`]).
#[salsa::tracked(returns(ref))]
pub fn format_registry_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let (format, source) = *graph_format(db);
    if format.carries_dispatch_fields() {
        return write_fired_blocking_diagnostics(db);
    }
    sensor_registry(db)
        .by_id
        .values()
        .filter_map(|binding| {
            let gate = binding.fire_on == FireOn::Gate;
            let blocking = binding.default_severity == Severity::Blocking;
            let declared = match (gate, blocking) {
                (true, true) => "fire_on: gate and default_severity: blocking",
                (true, false) => "fire_on: gate",
                (false, true) => "default_severity: blocking",
                (false, false) => return None,
            };
            Some(
                Diagnostic::warning(
                    Code::NotInGraphFormat,
                    format!(
                        "sensor \"{}\" declares {declared}, but this install's graph format ({format}, {source}) carries neither: it fires on writes and is advisory",
                        binding.id
                    ),
                )
                .in_file(Utf8Path::new(&binding.path))
                .with_help(
                    "write the newest format with `aidlc compile --graph-format gate`, or drop the declaration",
                ),
            )
        })
        .collect()
}

/// Manifests that declare `default_severity: blocking` and fire on writes (`fire_on: write`, or
/// no `fire_on`): blocking is enforced at the gate only, and a write-fired fire stays advisory,
/// so the manifest's wish is said out loud (a warning on the manifest).
fn write_fired_blocking_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    sensor_registry(db)
        .by_id
        .values()
        .filter(|binding| {
            binding.fire_on == FireOn::Write && binding.default_severity == Severity::Blocking
        })
        .map(|binding| {
            Diagnostic::warning(
                Code::WriteFiredBlocking,
                format!(
                    "sensor \"{}\" declares default_severity: blocking but fires on writes: a write-fired sensor is advisory, only a gate-fired one blocks",
                    binding.id
                ),
            )
            .in_file(Utf8Path::new(&binding.path))
            .with_help(
                "add `fire_on: gate` to enforce it at the stage's gate, or declare `default_severity: advisory`",
            )
        })
        .collect()
}

/// The part of a stage's node that does not depend on its number: its bytes from the `,` that
/// ends the `name` field to the node's closing brace, as [`write_stage_node`] writes them. The
/// head (`slug`, `number`, `name`) is written when the graph is joined, from
/// [`stage_node_heads`]. Keeping the number out of this memo means one stage's edit, which
/// makes the numbering re-validate, leaves the other stages' bodies trusted as they are (see
/// `discover::durability_for`), and a renumbering re-emits no body. Shared (`Arc`) with the
/// chunk memos the join reads ([`stage_node_bodies_in_chunk`]).
#[salsa::tracked(returns(ref))]
pub fn stage_node_body(db: &dyn salsa::Database, file: SourceFile) -> Option<Arc<str>> {
    let stage = parsed_stage(db, file).definition.as_ref()?;
    let mut text = String::new();
    write_stage_node_body(db, file, stage, &mut text);
    Some(Arc::from(text))
}

/// The node bodies of one chunk of the stage list (see [`crate::compile::stage_graph::stage_chunks`]), for
/// the join. Unlike the facts the cross-stage queries gather, these memos do not read the
/// `LOW` marker: a chunk whose files are untouched stays as durable as they are, so after an
/// edit the join confirms one memo per chunk by a durability check instead of looking at
/// every stage's body. (A file's first edit re-runs its chunk without backdating it; that
/// re-joins the graph once, which a change of its node would do anyway.)
#[salsa::tracked(returns(ref))]
pub fn stage_node_bodies_in_chunk<'db>(
    db: &'db dyn salsa::Database,
    chunk: StageChunk<'db>,
) -> Vec<Option<Arc<str>>> {
    chunk_entries(db, chunk)
        .iter()
        .map(|entry| stage_node_body(db, entry.file).clone())
        .collect()
}

/// Each node's head in graph order (`Numbering::order`), as [`write_node_head`] writes it; `None` for a stage without a number. Re-run only when the numbering changes, so joining
/// the graph after an edit writes no head.
#[salsa::tracked(returns(ref))]
pub fn stage_node_heads(db: &dyn salsa::Database) -> Vec<Option<String>> {
    let numbering = stage_numbering(db);
    let headers = FactsByStage::new(db, stage_headers_in_chunk);
    numbering
        .order
        .iter()
        .map(|&file| {
            let header = headers.get(file)?;
            let (number, name) = numbering.by_slug.get(&header.slug)?;
            let mut head = String::new();
            write_node_head(&header.slug, number, name, &mut head);
            Some(head)
        })
        .collect()
}

/// Append the node of `file` to `out` as the graph holds it (indented one level, no comma);
/// `false`, with nothing written, when the stage did not parse or has no number.
pub fn write_stage_node(db: &dyn salsa::Database, file: SourceFile, out: &mut String) -> bool {
    let Some(stage) = parsed_stage(db, file).definition.as_ref() else {
        return false;
    };
    let Some((number, name)) = stage_number(db, file).as_ref() else {
        return false;
    };
    write_node_head(&stage.slug.value, number, name, out);
    write_stage_node_body(db, file, stage, out);
    true
}

/// Every field of the node after `name`, and its closing brace, in the graph's format.
fn write_stage_node_body(
    db: &dyn salsa::Database,
    file: SourceFile,
    stage: &StageDefinition,
    out: &mut String,
) {
    let (format, _) = *graph_format(db);
    node_body(db, file, stage).write(format, out);
}

/// The body of the stage's node, every value borrowed from the stage, the rule set and the
/// stage's resolved sensors; the reviewer's fields only beside a reviewer, with the reference's
/// defaults. Which of them the format writes is the writer's to know.
fn node_body<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    stage: &'db StageDefinition,
) -> NodeBody<'db> {
    let reviewer = stage
        .reviewer
        .as_ref()
        .map(|reviewer| reviewer.value.as_str());
    NodeBody {
        plugin: located_value(stage.plugin.as_ref()),
        enabled: (!stage_is_enabled(db, located_value(stage.plugin.as_ref()), &stage.phase.value))
            .then_some(false),
        phase: &stage.phase.value,
        execution: &stage.execution,
        condition: stage.condition.as_deref(),
        lead_agent: &stage.lead_agent.value,
        support_agents: located_values(&stage.support_agents),
        mode: &stage.mode,
        for_each: stage.for_each.as_deref(),
        workspace_requires: stage.workspace_requires,
        produces: located_values(&stage.produces),
        optional_produces: stage.optional_produces.as_deref(),
        produces_kinds: stage.produces_kinds.as_deref(),
        consumes: stage
            .consumes
            .iter()
            .map(|consume| ConsumeEntry {
                artifact: &consume.artifact.value,
                required: consume.required,
                conditional_on: consume.conditional_on.as_deref(),
            })
            .collect(),
        requires_stage: dedup(
            stage
                .requires_stage
                .iter()
                .map(|required| required.value.as_str()),
        ),
        sensors: located_values(&stage.sensors),
        scopes: &stage.scopes,
        reviewer,
        review_artifact: reviewer.and(located_value(stage.review_artifact.as_ref())),
        reviewer_max_iterations: reviewer.map(|_| {
            stage
                .reviewer_max_iterations
                .unwrap_or(DEFAULT_REVIEWER_MAX_ITERATIONS)
        }),
        review_class: reviewer
            .map(|_| located_value(stage.review_class.as_ref()).unwrap_or(DEFAULT_REVIEW_CLASS)),
        summary_confirmation: located_value(stage.summary_confirmation.as_ref()),
        inputs: stage.inputs.as_deref().unwrap_or(""),
        outputs: stage.outputs.as_deref().unwrap_or(""),
        rules_in_context: rule_set(db)
            .entries
            .iter()
            .filter(|rule| {
                rule.phase
                    .as_deref()
                    .is_none_or(|rule_phase| rule_phase == stage.phase.value)
            })
            .map(|rule| RuleEntry {
                path: &rule.display_path,
                scope: rule.scope,
            })
            .collect(),
        sensors_applicable: &sensors_applicable(db, file).entries,
    }
}

fn located_value(item: Option<&Located<String>>) -> Option<&str> {
    item.map(|item| item.value.as_str())
}

fn located_values(items: &[Located<String>]) -> Vec<&str> {
    items.iter().map(|item| item.value.as_str()).collect()
}

/// The whole `stage-graph.json`, nodes in numeric order, with the trailing newline. Shared
/// (`Arc`), so handing out the megabytes of a large project's graph copies nothing.
#[salsa::tracked]
pub fn stage_graph_json(db: &dyn salsa::Database) -> Arc<String> {
    let bodies = FactsByStage::new(db, stage_node_bodies_in_chunk);
    let nodes: Vec<(&str, &str)> = stage_numbering(db)
        .order
        .iter()
        .zip(stage_node_heads(db))
        .filter_map(|(&file, head)| {
            let body = bodies.get(file)?;
            Some((head.as_deref()?, &**body))
        })
        .collect();
    let mut out = String::with_capacity(
        nodes
            .iter()
            .map(|(head, body)| head.len() + body.len() + 2)
            .sum::<usize>()
            + 4,
    );
    out.push('[');
    for (index, (head, body)) in nodes.iter().enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        out.push_str(head);
        out.push_str(body);
    }
    close_graph_array(&mut out, !nodes.is_empty());
    Arc::new(out)
}

/// The same bytes as [`stage_graph_json`], written node by node without a memo per node: for a
/// one-shot compile, whose database is dropped right after, the memos would only double the
/// memory the graph takes. A large graph is written in runs of consecutive nodes on every core
/// (one database handle per worker, as in `compile::precompute`), and the runs are joined in
/// order; each run is freed as soon as it is copied, so the peak is about one graph and one run.
pub fn stage_graph_text_once(db: &CompilerDatabase) -> String {
    use rayon::prelude::*;
    let order = &stage_numbering(db).order;
    if !crate::compile::discover::worth_parallel(order.len()) {
        // One buffer, written in place: a run joined into a second buffer would copy the whole
        // graph, and a guess too small for it would copy it once more while growing.
        let mut out = String::with_capacity(order.len() * SMALL_GRAPH_BYTES_PER_NODE + 4);
        out.push('[');
        let any_node = write_nodes(db, order, "\n", &mut out);
        close_graph_array(&mut out, any_node);
        return out;
    }
    let run_length = order
        .len()
        .div_ceil(rayon::current_num_threads() * RUNS_PER_THREAD)
        .max(1);
    let runs: Vec<String> = order
        .par_chunks(run_length)
        .map_with(db.clone(), |db, files| {
            // Each node preceded by `,\n`; about 1.7 KB per node, and growing past the guess
            // costs one copy.
            let mut run = String::with_capacity(files.len() * 2048);
            write_nodes(db, files, ",\n", &mut run);
            run
        })
        .collect();
    graph_text_of_runs(runs)
}

/// Runs per worker thread: enough that one slow run does not leave the other cores idle.
const RUNS_PER_THREAD: usize = 4;

/// Room per node when a small graph is written into one buffer: a stage of the default
/// framework takes about 2.6 KB (a generated one about 1.7 KB), and a buffer that has to grow
/// copies everything written so far.
const SMALL_GRAPH_BYTES_PER_NODE: usize = 3 * 1024;

/// Append the nodes of `files` to `out`, the first preceded by `first_separator` and every
/// other by `,\n`; a stage without a node leaves nothing. Whether any node was written.
fn write_nodes(
    db: &dyn salsa::Database,
    files: &[SourceFile],
    first_separator: &'static str,
    out: &mut String,
) -> bool {
    let mut separator = first_separator;
    let mut any_node = false;
    for &file in files {
        let before = out.len();
        out.push_str(separator);
        if write_stage_node(db, file, out) {
            separator = ",\n";
            any_node = true;
        } else {
            out.truncate(before);
        }
    }
    any_node
}

/// `[`, the runs in order (the first node's leading `,` dropped), and the closing bracket.
fn graph_text_of_runs(runs: Vec<String>) -> String {
    let length: usize = runs.iter().map(String::len).sum();
    let mut out = String::with_capacity(length + 4);
    out.push('[');
    for run in runs {
        let run_text = if out.len() == 1 {
            run.strip_prefix(',').unwrap_or(&run)
        } else {
            &run
        };
        out.push_str(run_text);
    }
    let any_node = out.len() > 1;
    close_graph_array(&mut out, any_node);
    out
}

fn close_graph_array(out: &mut String, any_node: bool) {
    out.push_str(if any_node { "\n]\n" } else { "]\n" });
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::compile::db::Project;
    use crate::compile::stage_graph::test_projects::loaded_projects;
    use crate::leaves::js_json::pretty_json;
    use crate::protocol::graph_keys::FIELD_ORDER;

    /// `pretty_json` of the value a written node holds, indented one level: the bytes
    /// `JSON.stringify` gives for the same node, which the writer must have produced.
    fn node_through_values(written: &str) -> String {
        let value: Value = serde_json::from_str(written).unwrap();
        format!("  {}", pretty_json(&value).replace('\n', "\n  "))
    }

    /// A project past the parallel threshold is written in runs on several threads; the bytes
    /// are the memoised graph's all the same.
    #[test]
    fn a_graph_written_in_parallel_runs_equals_the_memoised_graph() {
        let stages = crate::compile::discover::PARALLEL_THRESHOLD + 44;
        let dir = tempfile::tempdir().unwrap();
        let root = camino::Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        crate::synthetic::SyntheticProject::new(stages, 9)
            .with_seed(3)
            .write_to(&root)
            .unwrap();
        let layout =
            crate::compile::discover::Layout::new(&root, crate::harness::Harness::Claude, &|_| {
                None
            });
        let mut db = crate::compile::db::CompilerDatabase::default();
        let _inputs = crate::compile::discover::load_project(&mut db, &layout);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let pool_db = db.clone();
        let in_runs = pool.install(move || stage_graph_text_once(&pool_db));
        assert_eq!(in_runs, **stage_graph_json(&db));
        assert_eq!(in_runs.matches("\n  {\n").count(), stages);
    }

    #[test]
    fn runs_without_nodes_leave_no_separator_behind() {
        let runs =
            |runs: &[&str]| graph_text_of_runs(runs.iter().map(|r| (*r).to_owned()).collect());
        assert_eq!(runs(&[]), "[]\n");
        assert_eq!(runs(&["", ""]), "[]\n");
        assert_eq!(runs(&["", ",\n  {}", "", ",\n  {}"]), "[\n  {},\n  {}\n]\n");
        assert_eq!(
            runs(&["", ",\n  {}"]),
            graph_text_of_runs(vec![",\n  {}".to_owned()])
        );
    }

    #[test]
    fn written_nodes_and_graphs_equal_the_general_path() {
        for project in loaded_projects() {
            let db = &project.db;
            let mut nodes = 0;
            for entry in Project::get(db).stage_files(db) {
                let mut node = String::new();
                if !write_stage_node(db, entry.file, &mut node) {
                    continue;
                }
                assert_eq!(
                    node,
                    node_through_values(&node),
                    "{}: {}",
                    project.name,
                    entry.file.path(db)
                );
                nodes += 1;
            }
            assert!(nodes > 0, "{}: no node was emitted", project.name);
            assert_eq!(
                stage_graph_text_once(db),
                **stage_graph_json(db),
                "{}",
                project.name
            );
        }
    }

    /// The stage with every field, as each graph format writes its node: the bytes are pinned,
    /// so a change of the writer that moves one of them shows in review.
    #[test]
    fn the_stage_with_every_field_is_written_as_each_format_writes_it() {
        let projects = loaded_projects();
        let every_field = projects
            .iter()
            .filter_map(|project| Some((project, project.name.strip_prefix("every field, ")?)));
        let mut formats = 0;
        for (project, format) in every_field {
            let db = &project.db;
            let file = Project::get(db)
                .stage_files(db)
                .iter()
                .find(|entry| {
                    entry
                        .file
                        .path(db)
                        .as_str()
                        .ends_with("/acme-every-field.md")
                })
                .unwrap()
                .file;
            let mut node = String::new();
            assert!(write_stage_node(db, file, &mut node), "{format}");
            insta::assert_snapshot!(format!("every_field_{}", format.replace('.', "_")), node);
            formats += 1;
        }
        assert_eq!(formats, 3);
    }

    #[test]
    fn the_stage_with_every_field_is_emitted_with_each_of_them() {
        let projects = loaded_projects();
        let gate = projects
            .iter()
            .find(|project| project.name == "every field, gate")
            .unwrap();
        let graph = stage_graph_text_once(&gate.db);
        let nodes: Vec<Value> = serde_json::from_str(&graph).unwrap();
        let node = nodes
            .iter()
            .find(|node| node["slug"] == "acme-every-field")
            .unwrap();
        let keys: Vec<&str> = node
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            FIELD_ORDER
                .iter()
                .copied()
                .filter(|key| *key != "enabled")
                .collect::<Vec<_>>()
        );
        assert!(
            graph.contains("\\u0007"),
            "the control character is escaped"
        );
        assert!(
            graph.contains("9007199254740992"),
            "an unsafe integer prints as JavaScript would"
        );
    }
}
