//! Canonical bytes of `stage-graph.json` (reference §3.5–§3.6, D2).
//!
//! Invariant: the output equals `JSON.stringify(nodes, null, 2) + "\n"` of the reference, with
//! node keys in the [gate] `FIELD_ORDER` and nested objects in construction order. Each node's
//! bytes are a tracked value, so the file is assembled from memoised pieces.
//!
//! The keys a node and a `sensors_applicable` entry carry follow the install's graph format
//! ([`graph_format`], D13): an older format leaves out the keys its reference version never
//! writes, in the same order otherwise.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::db::{CompilerDatabase, SourceFile};
use crate::diagnostics::{Code, Diagnostic};
use crate::graph::format_choice::graph_format;
use crate::graph::numbering::{dedup, stage_headers_in_chunk, stage_number, stage_numbering};
use crate::graph::stage_chunks::{FactsByStage, StageChunk, chunk_entries};
use crate::parse::{parsed_stage, rule_set};
use crate::protocol::graph_format::GraphFormat;
use crate::protocol::pretty_writer::{PrettyWriter, push_json_string};
use crate::protocol::selection::{FireOn, Severity};
use crate::resolve::{sensor_registry, sensors_applicable};
use crate::syntax::stage::Located;
use camino::Utf8Path;

/// The [gate] `FIELD_ORDER`: the 29 top-level keys of a node, in order.
pub const FIELD_ORDER: [&str; 29] = [
    "slug",
    "number",
    "name",
    "plugin",
    "enabled",
    "phase",
    "execution",
    "condition",
    "lead_agent",
    "support_agents",
    "mode",
    "for_each",
    "workspace_requires",
    "produces",
    "optional_produces",
    "produces_kinds",
    "consumes",
    "requires_stage",
    "sensors",
    "scopes",
    "reviewer",
    "review_artifact",
    "reviewer_max_iterations",
    "review_class",
    "summary_confirmation",
    "inputs",
    "outputs",
    "rules_in_context",
    "sensors_applicable",
];

/// Manifests whose `fire_on: gate` or `default_severity: blocking` the install's graph format
/// cannot carry: without those keys in `sensors_applicable` the reference (and this engine)
/// read every binding as write-fired and advisory, so the manifest's wish is said out loud.
#[salsa::tracked(returns(ref))]
pub fn format_registry_diagnostics(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let (format, source) = *graph_format(db);
    if format.carries_dispatch_fields() {
        return Vec::new();
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
                        "sensor \"{}\" declares {declared}, but this install's graph format ({format}, {}) carries neither: it fires on writes and is advisory",
                        binding.id,
                        source.describe()
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

/// The node as a JSON value with keys in `FIELD_ORDER`; `None` when the stage did not parse.
pub fn stage_node_value(db: &dyn salsa::Database, file: SourceFile) -> Option<Value> {
    let stage = parsed_stage(db, file).definition.as_ref()?;
    let (format, _) = *graph_format(db);
    let (number, name) = stage_number(db, file).clone()?;
    let strings = |items: &[crate::syntax::stage::Located<String>]| {
        Value::from(
            items
                .iter()
                .map(|item| item.value.clone())
                .collect::<Vec<_>>(),
        )
    };
    let mut fields: Vec<(&str, Value)> = vec![
        ("slug", json!(stage.slug.value)),
        ("number", json!(number)),
        ("name", json!(name)),
    ];
    if let Some(plugin) = &stage.plugin {
        fields.push(("plugin", json!(plugin.value)));
    }
    fields.push(("phase", json!(stage.phase.value)));
    fields.push(("execution", json!(stage.execution)));
    if let Some(condition) = &stage.condition {
        fields.push(("condition", json!(condition)));
    }
    fields.push(("lead_agent", json!(stage.lead_agent.value)));
    fields.push(("support_agents", strings(&stage.support_agents)));
    fields.push(("mode", json!(stage.mode)));
    if let Some(for_each) = &stage.for_each {
        fields.push(("for_each", json!(for_each)));
    }
    if let Some(workspace_requires) = stage.workspace_requires {
        fields.push(("workspace_requires", json!(workspace_requires)));
    }
    fields.push(("produces", strings(&stage.produces)));
    if let Some(optional) = &stage.optional_produces {
        fields.push(("optional_produces", json!(optional)));
    }
    if let Some(kinds) = &stage.produces_kinds {
        let map: Map<String, Value> = kinds
            .iter()
            .map(|(artifact, kinds)| (artifact.clone(), json!(kinds)))
            .collect();
        fields.push(("produces_kinds", Value::Object(map)));
    }
    let consumes: Vec<Value> = stage
        .consumes
        .iter()
        .map(|consume| {
            let mut entry = Map::new();
            entry.insert("artifact".to_owned(), json!(consume.artifact.value));
            entry.insert("required".to_owned(), json!(consume.required));
            if let Some(condition) = &consume.conditional_on {
                entry.insert("conditional_on".to_owned(), json!(condition));
            }
            Value::Object(entry)
        })
        .collect();
    fields.push(("consumes", Value::from(consumes)));
    fields.push((
        "requires_stage",
        json!(dedup(
            stage.requires_stage.iter().map(|dep| dep.value.clone())
        )),
    ));
    fields.push(("sensors", strings(&stage.sensors)));
    fields.push(("scopes", json!(stage.scopes)));
    if let Some(reviewer) = &stage.reviewer {
        fields.push(("reviewer", json!(reviewer.value)));
        if let Some(artifact) = stage
            .review_artifact
            .as_ref()
            .filter(|_| format.carries_review_artifact())
        {
            fields.push(("review_artifact", json!(artifact.value)));
        }
        fields.push((
            "reviewer_max_iterations",
            json!(stage.reviewer_max_iterations.unwrap_or(2)),
        ));
        if format.carries_review_class() {
            let class = stage
                .review_class
                .as_ref()
                .map_or("adversarial", |class| class.value.as_str());
            fields.push(("review_class", json!(class)));
        }
    }
    if let Some(confirmation) = stage
        .summary_confirmation
        .as_ref()
        .filter(|_| format.carries_review_class())
    {
        fields.push(("summary_confirmation", json!(confirmation.value)));
    }
    fields.push(("inputs", json!(stage.inputs.as_deref().unwrap_or(""))));
    fields.push(("outputs", json!(stage.outputs.as_deref().unwrap_or(""))));
    fields.push(("rules_in_context", rules_value(db, &stage.phase.value)));
    fields.push(("sensors_applicable", sensors_value(db, file, format)));
    let mut node = Map::new();
    for (key, value) in fields {
        debug_assert!(FIELD_ORDER.contains(&key), "{key} is not in FIELD_ORDER");
        node.insert(key.to_owned(), value);
    }
    Some(Value::Object(node))
}

fn rules_value(db: &dyn salsa::Database, phase: &str) -> Value {
    let rules = rule_set(db);
    let entries: Vec<Value> = rules
        .entries
        .iter()
        .filter(|rule| {
            rule.phase
                .as_deref()
                .is_none_or(|rule_phase| rule_phase == phase)
        })
        .map(|rule| {
            let mut entry = Map::new();
            entry.insert("path".to_owned(), json!(rule.display_path));
            entry.insert("scope".to_owned(), json!(rule.scope));
            Value::Object(entry)
        })
        .collect();
    Value::from(entries)
}

/// `{id, path, fire_on, default_severity, category?, matches?}`, or `{id, path, matches?}` in
/// the formats before the gate.
fn sensors_value(db: &dyn salsa::Database, file: SourceFile, format: GraphFormat) -> Value {
    let entries: Vec<Value> = sensors_applicable(db, file)
        .entries
        .iter()
        .map(|binding| {
            let mut entry = Map::new();
            entry.insert("id".to_owned(), json!(binding.id));
            entry.insert("path".to_owned(), json!(binding.path));
            if format.carries_dispatch_fields() {
                entry.insert("fire_on".to_owned(), json!(binding.fire_on.as_str()));
                entry.insert(
                    "default_severity".to_owned(),
                    json!(binding.default_severity.as_str()),
                );
                if let Some(category) = &binding.category {
                    entry.insert("category".to_owned(), json!(category));
                }
            }
            if let Some(matches) = &binding.matches {
                entry.insert("matches".to_owned(), json!(matches));
            }
            Value::Object(entry)
        })
        .collect();
    Value::from(entries)
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

/// The node bodies of one chunk of the stage list (see [`crate::graph::stage_chunks`]), for
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

/// Each node's head in graph order (`Numbering::order`), as [`write_stage_node_head`] writes
/// it; `None` for a stage without a number. Re-run only when the numbering changes, so joining
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
            write_stage_node_head(&header.slug, number, name, &mut head);
            Some(head)
        })
        .collect()
}

/// Append the node of `file` to `out` as the graph holds it (indented one level, no comma);
/// `false`, with nothing written, when the stage did not parse or has no number.
///
/// Invariant: the bytes equal `pretty_json` of [`stage_node_value`] indented one level (the
/// tests compare both on every stage they compile); this writes them without building the
/// value, which is most of the cost of emitting a large graph.
pub fn write_stage_node(db: &dyn salsa::Database, file: SourceFile, out: &mut String) -> bool {
    let Some(stage) = parsed_stage(db, file).definition.as_ref() else {
        return false;
    };
    let Some((number, name)) = stage_number(db, file).as_ref() else {
        return false;
    };
    write_stage_node_head(&stage.slug.value, number, name, out);
    write_stage_node_body(db, file, stage, out);
    true
}

/// `  {`, then the `slug`, `number` and `name` fields: the start of a node, the bytes a
/// [`PrettyWriter`] at depth 1 writes for them (joining a large graph writes ten thousand of
/// these, so the fixed parts are written whole).
fn write_stage_node_head(slug: &str, number: &str, name: &str, out: &mut String) {
    out.push_str("  {\n    \"slug\": ");
    push_json_string(out, slug);
    out.push_str(",\n    \"number\": ");
    push_json_string(out, number);
    out.push_str(",\n    \"name\": ");
    push_json_string(out, name);
}

/// Every field of the node after `name`, and its closing brace.
fn write_stage_node_body(
    db: &dyn salsa::Database,
    file: SourceFile,
    stage: &crate::syntax::stage::StageDefinition,
    out: &mut String,
) {
    let (format, _) = *graph_format(db);
    let mut node = PrettyWriter::continuing_object(out, 1);
    if let Some(plugin) = &stage.plugin {
        node.string_field("plugin", &plugin.value);
    }
    node.string_field("phase", &stage.phase.value);
    node.string_field("execution", &stage.execution);
    if let Some(condition) = &stage.condition {
        node.string_field("condition", condition);
    }
    node.string_field("lead_agent", &stage.lead_agent.value);
    node.string_list_field("support_agents", located_values(&stage.support_agents));
    node.string_field("mode", &stage.mode);
    if let Some(for_each) = &stage.for_each {
        node.string_field("for_each", for_each);
    }
    if let Some(workspace_requires) = stage.workspace_requires {
        node.key("workspace_requires");
        node.bool(workspace_requires);
    }
    node.string_list_field("produces", located_values(&stage.produces));
    if let Some(optional) = &stage.optional_produces {
        node.string_list_field("optional_produces", optional.iter().map(String::as_str));
    }
    if let Some(kinds) = &stage.produces_kinds {
        // Artifact names may be array indices, which JavaScript lists first: the one field
        // written through the general path.
        let map: Map<String, Value> = kinds
            .iter()
            .map(|(artifact, kinds)| (artifact.clone(), json!(kinds)))
            .collect();
        node.key("produces_kinds");
        node.value(&Value::Object(map));
    }
    node.key("consumes");
    node.begin_array();
    for consume in &stage.consumes {
        node.element();
        node.begin_object();
        node.string_field("artifact", &consume.artifact.value);
        node.key("required");
        node.bool(consume.required);
        if let Some(condition) = &consume.conditional_on {
            node.string_field("conditional_on", condition);
        }
        node.end_object();
    }
    node.end_array();
    let requires_stage = dedup(stage.requires_stage.iter().map(|dep| dep.value.clone()));
    node.string_list_field("requires_stage", requires_stage.iter().map(String::as_str));
    node.string_list_field("sensors", located_values(&stage.sensors));
    node.string_list_field("scopes", stage.scopes.iter().map(String::as_str));
    if let Some(reviewer) = &stage.reviewer {
        node.string_field("reviewer", &reviewer.value);
        if let Some(artifact) = stage
            .review_artifact
            .as_ref()
            .filter(|_| format.carries_review_artifact())
        {
            node.string_field("review_artifact", &artifact.value);
        }
        node.key("reviewer_max_iterations");
        node.value(&json!(stage.reviewer_max_iterations.unwrap_or(2)));
        if format.carries_review_class() {
            let class = stage
                .review_class
                .as_ref()
                .map_or("adversarial", |class| class.value.as_str());
            node.string_field("review_class", class);
        }
    }
    if let Some(confirmation) = stage
        .summary_confirmation
        .as_ref()
        .filter(|_| format.carries_review_class())
    {
        node.string_field("summary_confirmation", &confirmation.value);
    }
    node.string_field("inputs", stage.inputs.as_deref().unwrap_or(""));
    node.string_field("outputs", stage.outputs.as_deref().unwrap_or(""));
    node.key("rules_in_context");
    node.begin_array();
    for rule in rule_set(db).entries.iter().filter(|rule| {
        rule.phase
            .as_deref()
            .is_none_or(|rule_phase| rule_phase == stage.phase.value)
    }) {
        node.element();
        node.begin_object();
        node.string_field("path", &rule.display_path);
        node.string_field("scope", rule.scope);
        node.end_object();
    }
    node.end_array();
    node.key("sensors_applicable");
    node.begin_array();
    for binding in &sensors_applicable(db, file).entries {
        node.element();
        node.begin_object();
        node.string_field("id", &binding.id);
        node.string_field("path", &binding.path);
        if format.carries_dispatch_fields() {
            node.string_field("fire_on", binding.fire_on.as_str());
            node.string_field("default_severity", binding.default_severity.as_str());
            if let Some(category) = &binding.category {
                node.string_field("category", category);
            }
        }
        if let Some(matches) = &binding.matches {
            node.string_field("matches", matches);
        }
        node.end_object();
    }
    node.end_array();
    node.end_object();
}

fn located_values(items: &[Located<String>]) -> impl Iterator<Item = &str> {
    items.iter().map(|item| item.value.as_str())
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
    if !crate::discover::worth_parallel(order.len()) {
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
        .map_with(db.clone(), |db, files| nodes_text(db, files))
        .collect();
    graph_text_of_runs(runs)
}

/// Runs per worker thread: enough that one slow run does not leave the other cores idle.
const RUNS_PER_THREAD: usize = 4;

/// Room per node when a small graph is written into one buffer: a stage of the default
/// framework takes about 2.6 KB (a generated one about 1.7 KB), and a buffer that has to grow
/// copies everything written so far.
const SMALL_GRAPH_BYTES_PER_NODE: usize = 3 * 1024;

/// The nodes of `files`, each preceded by `,\n` (the separator that follows the node before it
/// in the file); a stage without a node leaves nothing.
fn nodes_text(db: &dyn salsa::Database, files: &[SourceFile]) -> String {
    // About 1.7 KB per node; growing past the guess costs one copy.
    let mut out = String::with_capacity(files.len() * 2048);
    write_nodes(db, files, ",\n", &mut out);
    out
}

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
    use super::*;
    use crate::db::Project;
    use crate::graph::test_projects::loaded_projects;
    use crate::js_json::pretty_json;

    /// `pretty_json` of the node value, indented one level: what the writer must produce.
    fn node_through_values(db: &dyn salsa::Database, file: SourceFile) -> Option<String> {
        let text = pretty_json(&stage_node_value(db, file)?);
        Some(format!("  {}", text.replace('\n', "\n  ")))
    }

    /// A project past the parallel threshold is written in runs on several threads; the bytes
    /// are the memoised graph's all the same.
    #[test]
    fn a_graph_written_in_parallel_runs_equals_the_memoised_graph() {
        let stages = crate::discover::PARALLEL_THRESHOLD + 44;
        let dir = tempfile::tempdir().unwrap();
        let root = camino::Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        crate::synthetic::SyntheticProject::new(stages, 9)
            .with_seed(3)
            .write_to(&root)
            .unwrap();
        let layout =
            crate::discover::Layout::new(&root, crate::discover::Harness::Claude, &|_| None);
        let mut db = crate::db::CompilerDatabase::default();
        let _inputs = crate::discover::load_project(&mut db, &layout);
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
                let written = write_stage_node(db, entry.file, &mut node).then_some(node);
                assert_eq!(
                    written,
                    node_through_values(db, entry.file),
                    "{}: {}",
                    project.name,
                    entry.file.path(db)
                );
                nodes += usize::from(written.is_some());
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
