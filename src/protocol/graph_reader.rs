//! The one strict reader of `stage-graph.json`'s text: only the fields the dispatcher, the
//! write hook and gate dispatch use, each parsed strictly into a typed value (D4, D13), under
//! the keys `stage_node` spells. Selection (`fire_on`, severity, `matches`) comes from here
//! (D6). The caller reads the file and hands over its text.
//!
//! Invariants:
//! - nothing read here is defaulted: an unknown enum value (`fire_on`, `default_severity`,
//!   `phase`, `for_each`), a value of the wrong type, a missing key, a key written twice, a slug
//!   two nodes share, or a file that is not an array of objects refuses the whole graph with
//!   one [`GraphRefusal`] ("recompile: the graph is not one this version wrote"), never a quiet
//!   advisory or "nothing to do";
//! - the binding shape is decided once per graph ([`GraphShape`]), never per entry: a graph in
//!   which no binding carries `fire_on` or `default_severity` is a reference 2.5/2.6 graph, read
//!   as the reference reads it (every binding write-fired and advisory); once any binding carries
//!   either key, every binding must carry both.

use std::fmt;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::protocol::graph_keys::{CONSUME_ARTIFACT, EntryField, NodeField};
use crate::protocol::selection::{FireOn, Severity};
use crate::protocol::stage_node::{ForEach, GraphConsume, GraphNode, Phase, SensorEntry};

/// The loaded graph: its nodes in file order, and the binding shape they were read with.
#[derive(Debug, Clone)]
pub struct StageGraph {
    pub shape: GraphShape,
    pub nodes: Vec<GraphNode>,
}

/// Which `sensors_applicable` entry shape a graph has (D13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphShape {
    /// The reference 2.5/2.6 shape `{id, path, matches?}`: no binding says when it fires or how
    /// severe it is, and the reference reads every one as write-fired and advisory.
    PreGate,
    /// The [gate] shape `{id, path, fire_on, default_severity, category?, matches?}`, which this
    /// compile writes: every binding carries both keys.
    Gate,
}

/// A value in the graph that this version would never have written: where, which key, and
/// what was found. The one message format for every such refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphRefusal {
    /// `stage "<slug>"`, `node <n>` (1-based, for a node without a usable slug) or `the graph`.
    pub place: String,
    /// The key as a path inside the node, e.g. `sensors_applicable[2].fire_on`.
    pub key: String,
    /// The value found (as JSON, shortened), `missing`, or what is wrong with it.
    pub value: String,
}

impl fmt::Display for GraphRefusal {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "recompile: the graph is not one this version wrote: {}, key {}, value {}",
            self.place, self.key, self.value
        )
    }
}

/// Why a graph text was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphTextError {
    /// Not JSON at all.
    Json(String),
    /// JSON, but not a graph this version wrote.
    Refused(GraphRefusal),
}

/// The graph in `text`, strictly parsed.
pub fn parse_graph(text: &str) -> Result<StageGraph, GraphTextError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let raw = RawSeed(Reading::Graph)
        .deserialize(&mut deserializer)
        .and_then(|raw| deserializer.end().map(|()| raw))
        .map_err(|error| GraphTextError::Json(error.to_string()))?;
    read_graph(&raw).map_err(GraphTextError::Refused)
}

/// One node from its JSON, read as a one-node graph (for tests and tools that build nodes).
pub fn node_from_json(value: &serde_json::Value) -> Result<GraphNode, GraphTextError> {
    let mut graph = parse_graph(&serde_json::Value::Array(vec![value.clone()]).to_string())?;
    Ok(graph.nodes.remove(0))
}

/// `unknown stage slug: "<slug>". Known (first 10): <first ten slugs sorted, joined ", ">`.
pub fn unknown_stage_message(slug: &str, nodes: &[GraphNode]) -> String {
    let mut slugs: Vec<&str> = nodes.iter().map(|node| node.slug.as_str()).collect();
    slugs.sort_unstable();
    slugs.truncate(10);
    format!(
        "unknown stage slug: \"{slug}\". Known (first 10): {}",
        slugs.join(", ")
    )
}

/// The stages that produce `artifact` (in `produces` or `optional_produces`), in graph order.
pub fn producers_of<'a>(nodes: &'a [GraphNode], artifact: &str) -> Vec<&'a GraphNode> {
    nodes
        .iter()
        .filter(|node| {
            node.produces.iter().any(|p| p == artifact)
                || node.optional_produces.iter().any(|p| p == artifact)
        })
        .collect()
}

// --- Strict reading ------------------------------------------------------------------------------

/// The longest value a refusal quotes; a longer one is cut with an ellipsis.
const MAX_SHOWN_VALUE_CHARS: usize = 80;

/// A JSON value as written: objects keep every key in file order, duplicates included, so that
/// a key written twice is refused instead of silently keeping the last one. Strings borrow
/// from the graph's text where they can.
#[derive(Debug, Clone)]
enum RawJson<'t> {
    Null,
    Bool(bool),
    Number(String),
    String(Cow<'t, str>),
    Array(Vec<RawJson<'t>>),
    Object(Vec<(Cow<'t, str>, RawJson<'t>)>),
    /// The value of a key the reader never looks at (see [`Reading`]): parsed and checked as
    /// any other value is, so the same texts are refused, then dropped.
    Unread,
}

impl RawJson<'_> {
    /// The value as a refusal shows it: scalars as JSON (long strings cut), containers by kind.
    fn shown(&self) -> String {
        match self {
            RawJson::Null => "null".to_owned(),
            RawJson::Bool(value) => value.to_string(),
            RawJson::Number(number) => number.clone(),
            RawJson::String(text) => {
                let quoted = serde_json::Value::from(&**text).to_string();
                if quoted.chars().count() <= MAX_SHOWN_VALUE_CHARS {
                    quoted
                } else {
                    let cut: String = quoted.chars().take(MAX_SHOWN_VALUE_CHARS).collect();
                    format!("{cut}…")
                }
            }
            RawJson::Array(_) => "an array".to_owned(),
            RawJson::Object(_) => "an object".to_owned(),
            RawJson::Unread => "a value".to_owned(),
        }
    }
}

/// The node keys the reader reads; the value of any other key is [`RawJson::Unread`]. Reading a
/// key that is not listed here finds it unread, which a test guards.
const READ_NODE_FIELDS: [NodeField; 8] = [
    NodeField::Slug,
    NodeField::Plugin,
    NodeField::Phase,
    NodeField::ForEach,
    NodeField::Produces,
    NodeField::OptionalProduces,
    NodeField::Consumes,
    NodeField::SensorsApplicable,
];

/// How much of a value the reader keeps: everything, or (for the graph, a node, its `consumes`)
/// only what the reader reads. Most of a node (its prose, agents, rules) is never read at fire
/// time, and building and dropping it was most of the cost of loading a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Whole,
    /// The top level: an array of nodes.
    Graph,
    /// One node: the keys of [`READ_NODE_FIELDS`].
    Node,
    /// A node's `consumes`: an array of items.
    Consumes,
    /// One `consumes` item: its `artifact`.
    Consume,
}

impl Reading {
    /// How the elements of an array read so are read.
    fn of_elements(self) -> Reading {
        match self {
            Reading::Graph => Reading::Node,
            Reading::Consumes => Reading::Consume,
            Reading::Whole | Reading::Node | Reading::Consume => Reading::Whole,
        }
    }

    /// How the value of `key` in an object read so is read, `None` when it is not read.
    fn of_value(self, key: &str) -> Option<Reading> {
        match self {
            Reading::Node if key == NodeField::Consumes.key() => Some(Reading::Consumes),
            Reading::Node => READ_NODE_FIELDS
                .iter()
                .any(|field| field.key() == key)
                .then_some(Reading::Whole),
            Reading::Consume => (key == CONSUME_ARTIFACT).then_some(Reading::Whole),
            Reading::Whole | Reading::Graph | Reading::Consumes => Some(Reading::Whole),
        }
    }
}

/// Reads one value as [`Reading`] says.
#[derive(Clone, Copy)]
struct RawSeed(Reading);

impl<'de> DeserializeSeed<'de> for RawSeed {
    type Value = RawJson<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(RawJsonVisitor(self.0))
    }
}

struct RawJsonVisitor(Reading);

impl<'de> Visitor<'de> for RawJsonVisitor {
    type Value = RawJson<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<RawJson<'de>, E> {
        Ok(RawJson::Null)
    }

    fn visit_bool<E>(self, value: bool) -> Result<RawJson<'de>, E> {
        Ok(RawJson::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<RawJson<'de>, E> {
        Ok(RawJson::Number(value.to_string()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<RawJson<'de>, E> {
        Ok(RawJson::Number(value.to_string()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<RawJson<'de>, E> {
        Ok(RawJson::Number(value.to_string()))
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<RawJson<'de>, E> {
        Ok(RawJson::String(Cow::Borrowed(value)))
    }

    fn visit_str<E>(self, value: &str) -> Result<RawJson<'de>, E> {
        Ok(RawJson::String(Cow::Owned(value.to_owned())))
    }

    fn visit_string<E>(self, value: String) -> Result<RawJson<'de>, E> {
        Ok(RawJson::String(Cow::Owned(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawJson<'de>, A::Error> {
        let elements = RawSeed(self.0.of_elements());
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(elements)? {
            items.push(item);
        }
        Ok(RawJson::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawJson<'de>, A::Error> {
        // A node has up to 29 keys and a binding up to 6: one allocation each, instead of a
        // growing vector's several.
        let mut fields = Vec::with_capacity(if self.0 == Reading::Node {
            NodeField::ALL.len()
        } else {
            EntryField::ALL.len()
        });
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let value = if let Some(reading) = self.0.of_value(&key) {
                map.next_value_seed(RawSeed(reading))?
            } else {
                map.next_value::<UnreadValue>()?;
                RawJson::Unread
            };
            fields.push((key, value));
        }
        Ok(RawJson::Object(fields))
    }
}

/// An object's key, borrowed from the text when it has no escape.
struct Key<'t>(Cow<'t, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match RawSeed(Reading::Whole).deserialize(deserializer)? {
            RawJson::String(key) => Ok(Key(key)),
            _ => Err(de::Error::custom("an object key that is not a string")),
        }
    }
}

/// A value the reader does not read, parsed as [`RawJson`] parses one (every number converted,
/// nesting counted) so that exactly the same texts are accepted, and nothing kept. Also the
/// settings reader's (`dispatch::time_limit`), for the same reason.
pub(crate) struct UnreadValue;

impl<'de> Deserialize<'de> for UnreadValue {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UnreadVisitor)
    }
}

struct UnreadVisitor;

impl<'de> Visitor<'de> for UnreadVisitor {
    type Value = UnreadValue;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<UnreadValue, E> {
        Ok(UnreadValue)
    }

    fn visit_bool<E>(self, _: bool) -> Result<UnreadValue, E> {
        Ok(UnreadValue)
    }

    fn visit_i64<E>(self, _: i64) -> Result<UnreadValue, E> {
        Ok(UnreadValue)
    }

    fn visit_u64<E>(self, _: u64) -> Result<UnreadValue, E> {
        Ok(UnreadValue)
    }

    fn visit_f64<E>(self, _: f64) -> Result<UnreadValue, E> {
        Ok(UnreadValue)
    }

    fn visit_str<E>(self, _: &str) -> Result<UnreadValue, E> {
        Ok(UnreadValue)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UnreadValue, A::Error> {
        while seq.next_element::<UnreadValue>()?.is_some() {}
        Ok(UnreadValue)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UnreadValue, A::Error> {
        while map.next_key::<UnreadValue>()?.is_some() {
            map.next_value::<UnreadValue>()?;
        }
        Ok(UnreadValue)
    }
}

/// An object's fields as written, in order.
type Fields<'t> = [(Cow<'t, str>, RawJson<'t>)];

/// The fields of one object of the graph, with where it is for refusals.
struct ObjectReader<'a> {
    place: NodePlace<'a>,
    /// Where the object sits in its node: the node itself, or `sensors_applicable[2]`.
    within: Within<'a>,
    entries: &'a Fields<'a>,
}

/// The key path of an object inside its node, spelled out only when a refusal names a key.
#[derive(Clone, Copy)]
enum Within<'a> {
    Node,
    /// Item `index` of the node's list `list`.
    Item {
        list: &'a str,
        index: usize,
    },
}

/// Where a node is, as a refusal names it: spelled out only when a refusal is made, so that
/// reading an accepted graph formats no place.
#[derive(Clone, Copy)]
enum NodePlace<'a> {
    /// `stage "<slug>"`: the node has a non-empty string slug.
    Stage(&'a str),
    /// `node <n>`, 1-based: the node has no usable slug.
    Numbered(usize),
}

impl NodePlace<'_> {
    fn shown(self) -> String {
        match self {
            NodePlace::Stage(slug) => format!("stage \"{slug}\""),
            NodePlace::Numbered(number) => format!("node {number}"),
        }
    }
}

/// Objects with at most this many keys are checked for a repeated key without allocating.
const KEYS_CHECKED_ON_THE_STACK: usize = 40;

impl<'a> ObjectReader<'a> {
    fn refusal(&self, key: &str, value: impl Into<String>) -> GraphRefusal {
        GraphRefusal {
            place: self.place.shown(),
            key: match self.within {
                Within::Node => key.to_owned(),
                Within::Item { list, index } => format!("{list}[{index}].{key}"),
            },
            value: value.into(),
        }
    }

    /// Every key of the object at most once (`serde_json` would silently keep the last); of
    /// several repeated keys, the first in sorted order is named. Whether any key repeats is
    /// decided on the keys' fingerprints ([`key_fingerprint`]), which compare as integers;
    /// keys are compared as text only where fingerprints tie, and named by sorting the keys
    /// themselves only when one does repeat.
    fn check_no_duplicate_key(&self) -> Result<(), GraphRefusal> {
        let any_repeated = if self.entries.len() <= KEYS_CHECKED_ON_THE_STACK {
            let mut keys = [""; KEYS_CHECKED_ON_THE_STACK];
            for (slot, (key, _)) in keys.iter_mut().zip(self.entries) {
                *slot = key.as_ref();
            }
            any_repeated(&keys[..self.entries.len()], key_fingerprint)
        } else {
            let keys: Vec<&str> = self.entries.iter().map(|(key, _)| key.as_ref()).collect();
            any_repeated(&keys, key_fingerprint)
        };
        if !any_repeated {
            return Ok(());
        }
        let mut keys: Vec<&str> = self.entries.iter().map(|(key, _)| key.as_ref()).collect();
        match first_repeated(&mut keys) {
            Some(key) => Err(self.refusal(key, "written twice in the same object")),
            None => Ok(()),
        }
    }

    fn get(&self, key: &str) -> Option<&'a RawJson<'a>> {
        self.entries
            .iter()
            .find(|(known, _)| known.as_ref() == key)
            .map(|(_, value)| value)
    }

    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn required(&self, key: &str, expected: &str) -> Result<&'a RawJson<'a>, GraphRefusal> {
        self.get(key)
            .ok_or_else(|| self.refusal(key, format!("missing (expected {expected})")))
    }

    fn string(&self, key: &str) -> Result<&'a str, GraphRefusal> {
        match self.required(key, "a string")? {
            RawJson::String(text) => Ok(text.as_ref()),
            other => Err(self.refusal(key, format!("{} (expected a string)", other.shown()))),
        }
    }

    fn non_empty_string(&self, key: &str) -> Result<&'a str, GraphRefusal> {
        let text = self.string(key)?;
        if text.is_empty() {
            return Err(self.refusal(key, "\"\" (expected a non-empty string)"));
        }
        Ok(text)
    }

    /// Absent is `None`; present must be a string (the compile leaves the key out, never null).
    fn optional_string(&self, key: &str) -> Result<Option<&'a str>, GraphRefusal> {
        match self.get(key) {
            None => Ok(None),
            Some(RawJson::String(text)) => Ok(Some(text.as_ref())),
            Some(other) => Err(self.refusal(key, format!("{} (expected a string)", other.shown()))),
        }
    }

    /// One of `allowed` (as written in the graph), parsed by `parse`; the refusal names them.
    fn enum_value<T>(
        &self,
        key: &str,
        allowed: &[&str],
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, GraphRefusal> {
        let value = self.get(key);
        if let Some(RawJson::String(text)) = value
            && let Some(parsed) = parse(text)
        {
            return Ok(parsed);
        }
        let expected = format!("one of {}", allowed.join(" | "));
        Err(match value {
            None => self.refusal(key, format!("missing (expected {expected})")),
            Some(value) => self.refusal(key, format!("{} (expected {expected})", value.shown())),
        })
    }

    fn optional_enum<T>(
        &self,
        key: &str,
        allowed: &[&str],
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, GraphRefusal> {
        if self.has(key) {
            self.enum_value(key, allowed, parse).map(Some)
        } else {
            Ok(None)
        }
    }

    fn string_list(&self, key: &str, required: bool) -> Result<Vec<String>, GraphRefusal> {
        let value = if required {
            self.required(key, "an array of strings")?
        } else {
            match self.get(key) {
                Some(value) => value,
                None => return Ok(Vec::new()),
            }
        };
        let RawJson::Array(items) = value else {
            return Err(self.refusal(
                key,
                format!("{} (expected an array of strings)", value.shown()),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                RawJson::String(text) => Ok(String::from(text.as_ref())),
                other => Err(self.refusal(
                    &format!("{key}[{index}]"),
                    format!("{} (expected a string)", other.shown()),
                )),
            })
            .collect()
    }

    /// A required array of objects, each as its own [`ObjectReader`] with its key path.
    fn objects(&self, key: &'a str) -> Result<Vec<ObjectReader<'a>>, GraphRefusal> {
        let value = self.required(key, "an array of objects")?;
        let RawJson::Array(items) = value else {
            return Err(self.refusal(
                key,
                format!("{} (expected an array of objects)", value.shown()),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                RawJson::Object(entries) => {
                    let entry = ObjectReader {
                        place: self.place,
                        within: Within::Item { list: key, index },
                        entries,
                    };
                    entry.check_no_duplicate_key()?;
                    Ok(entry)
                }
                other => Err(self.refusal(
                    &format!("{key}[{index}]"),
                    format!("{} (expected an object)", other.shown()),
                )),
            })
            .collect()
    }
}

/// A key's length and its first and last (up to) eight bytes, mixed into one integer: equal
/// keys have equal fingerprints; unequal keys almost always differ, and where they tie
/// [`any_repeated`] compares the text.
fn key_fingerprint(key: &str) -> u64 {
    let bytes = key.as_bytes();
    let mut head = [0_u8; 8];
    let mut tail = [0_u8; 8];
    let shown = bytes.len().min(8);
    head[..shown].copy_from_slice(&bytes[..shown]);
    tail[..shown].copy_from_slice(&bytes[bytes.len() - shown..]);
    let mixed = u64::from_le_bytes(head).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from_le_bytes(tail).rotate_left(29)
        ^ (bytes.len() as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    mixed ^ (mixed >> 31)
}

/// Slots of the table [`any_repeated`] fills for up to [`KEYS_CHECKED_ON_THE_STACK`] keys: a
/// power of two, more than three times as many, so that a probe rarely meets another key.
const KEY_TABLE_SLOTS: usize = 128;

/// Whether any key of `keys` appears more than once. Up to [`KEYS_CHECKED_ON_THE_STACK`] keys
/// go into an open-addressed table on the stack, placed by their `fingerprint`; a key is
/// compared as text only with a key of the same fingerprint met on its probe. More keys are
/// sorted by fingerprint, then text, so that equal keys are neighbours.
fn any_repeated(keys: &[&str], fingerprint: fn(&str) -> u64) -> bool {
    if keys.len() > KEYS_CHECKED_ON_THE_STACK {
        let mut sorted: Vec<(u64, &str)> =
            keys.iter().map(|key| (fingerprint(key), *key)).collect();
        sorted.sort_unstable();
        return sorted.windows(2).any(|pair| pair[0] == pair[1]);
    }
    // Each slot holds 1 + the index of the key placed there, 0 when empty.
    let mut slots = [0_u8; KEY_TABLE_SLOTS];
    let mut fingerprints = [0_u64; KEYS_CHECKED_ON_THE_STACK];
    for (index, (key, number)) in keys.iter().zip(1_u8..).enumerate() {
        let print = fingerprint(key);
        fingerprints[index] = print;
        let mut slot = usize::from(print.to_be_bytes()[0]) % KEY_TABLE_SLOTS;
        loop {
            match slots[slot] {
                0 => {
                    slots[slot] = number;
                    break;
                }
                placed => {
                    let other = usize::from(placed - 1);
                    if fingerprints[other] == print && keys[other] == *key {
                        return true;
                    }
                    slot = (slot + 1) % KEY_TABLE_SLOTS;
                }
            }
        }
    }
    false
}

/// The first key of `keys` in sorted order that appears more than once (sorts `keys`).
fn first_repeated<'k>(keys: &mut [&'k str]) -> Option<&'k str> {
    keys.sort_unstable();
    keys.windows(2)
        .find(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
}

fn read_graph(raw: &RawJson<'_>) -> Result<StageGraph, GraphRefusal> {
    let RawJson::Array(items) = raw else {
        return Err(GraphRefusal {
            place: "the graph".to_owned(),
            key: "(top level)".to_owned(),
            value: format!("{} (expected an array of stage nodes)", raw.shown()),
        });
    };
    let mut objects: Vec<(NodePlace<'_>, &Fields<'_>)> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let RawJson::Object(fields) = item else {
            return Err(GraphRefusal {
                place: NodePlace::Numbered(index + 1).shown(),
                key: "(node)".to_owned(),
                value: format!("{} (expected an object)", item.shown()),
            });
        };
        objects.push((node_place(index, fields), fields));
    }
    let shape = graph_shape(&objects);
    let mut nodes: Vec<GraphNode> = Vec::with_capacity(objects.len());
    // Each slug's first node, so that a large graph is not searched once per node. The slugs
    // are borrowed from the nodes' fields, which outlive the map.
    let mut first_with_slug: BTreeMap<&str, usize> = BTreeMap::new();
    for (place, fields) in &objects {
        let fields = ObjectReader {
            place: *place,
            within: Within::Node,
            entries: fields,
        };
        let node = read_node(&fields, shape)?;
        // `read_node` read the slug as a non-empty string, so the place names it.
        let NodePlace::Stage(slug) = *place else {
            unreachable!("a node read has a non-empty string slug")
        };
        if let Some(first) = first_with_slug.get(slug) {
            return Err(fields.refusal(
                NodeField::Slug.key(),
                format!(
                    "\"{}\" (node {} has the same slug; slugs are unique)",
                    node.slug,
                    first + 1
                ),
            ));
        }
        first_with_slug.insert(slug, nodes.len());
        nodes.push(node);
    }
    Ok(StageGraph { shape, nodes })
}

/// `stage "<slug>"` when the node has a string slug, else `node <n>`.
fn node_place<'t>(index: usize, fields: &'t Fields<'t>) -> NodePlace<'t> {
    match fields
        .iter()
        .find(|(key, _)| key.as_ref() == NodeField::Slug.key())
    {
        Some((_, RawJson::String(slug))) if !slug.is_empty() => NodePlace::Stage(slug),
        _ => NodePlace::Numbered(index + 1),
    }
}

/// [`GraphShape::Gate`] as soon as any binding anywhere carries `fire_on` or
/// `default_severity`; entries that are not objects are left for [`read_node`] to refuse.
fn graph_shape(objects: &[(NodePlace<'_>, &Fields<'_>)]) -> GraphShape {
    let carries_selection = |entry: &RawJson<'_>| {
        matches!(entry, RawJson::Object(fields)
        if fields.iter().any(|(key, _)| {
            key == EntryField::FireOn.key() || key == EntryField::DefaultSeverity.key()
        }))
    };
    let any = objects.iter().any(|(_, fields)| {
        fields.iter().any(|(key, value)| {
            key == NodeField::SensorsApplicable.key()
                && matches!(value, RawJson::Array(entries) if entries.iter().any(carries_selection))
        })
    });
    if any {
        GraphShape::Gate
    } else {
        GraphShape::PreGate
    }
}

fn read_node(fields: &ObjectReader<'_>, shape: GraphShape) -> Result<GraphNode, GraphRefusal> {
    fields.check_no_duplicate_key()?;
    let slug = fields.non_empty_string(NodeField::Slug.key())?.to_owned();
    let phase = fields.enum_value(
        NodeField::Phase.key(),
        &Phase::ALL.map(Phase::as_str),
        Phase::from_graph,
    )?;
    let for_each = fields.optional_enum(
        NodeField::ForEach.key(),
        &[ForEach::UnitOfWork.as_str()],
        ForEach::from_graph,
    )?;
    let produces = fields.string_list(NodeField::Produces.key(), true)?;
    let optional_produces = fields.string_list(NodeField::OptionalProduces.key(), false)?;
    let consumes = fields
        .objects(NodeField::Consumes.key())?
        .iter()
        .map(|consume| {
            Ok(GraphConsume {
                artifact: consume.string(CONSUME_ARTIFACT)?.to_owned(),
            })
        })
        .collect::<Result<Vec<_>, GraphRefusal>>()?;
    let sensors_applicable = fields
        .objects(NodeField::SensorsApplicable.key())?
        .iter()
        .map(|entry| read_sensor_entry(entry, shape))
        .collect::<Result<Vec<_>, GraphRefusal>>()?;
    let plugin = fields
        .optional_string(NodeField::Plugin.key())?
        .map(str::to_owned);
    Ok(GraphNode {
        slug,
        phase,
        for_each,
        produces,
        optional_produces,
        consumes,
        sensors_applicable,
        plugin,
    })
}

fn read_sensor_entry(
    entry: &ObjectReader<'_>,
    shape: GraphShape,
) -> Result<SensorEntry, GraphRefusal> {
    let (fire_on, default_severity) = match shape {
        // By the shape's definition no entry of this graph carries either key.
        GraphShape::PreGate => (FireOn::Write, Severity::Advisory),
        GraphShape::Gate => (
            entry.enum_value(
                EntryField::FireOn.key(),
                &FireOn::ALL.map(FireOn::as_str),
                FireOn::from_text,
            )?,
            entry.enum_value(
                EntryField::DefaultSeverity.key(),
                &Severity::ALL.map(Severity::as_str),
                Severity::from_text,
            )?,
        ),
    };
    Ok(SensorEntry {
        id: entry.non_empty_string(EntryField::Id.key())?.to_owned(),
        path: entry.string(EntryField::Path.key())?.to_owned(),
        fire_on,
        default_severity,
        category: entry
            .optional_string(EntryField::Category.key())?
            .map(str::to_owned),
        matches: entry
            .optional_string(EntryField::Matches.key())?
            .map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn gate_entry(id: &str, fire_on: &str, severity: &str) -> serde_json::Value {
        json!({"id": id, "path": format!(".claude/sensors/aidlc-{id}.md"), "fire_on": fire_on, "default_severity": severity, "matches": "**/*.md"})
    }

    fn node(slug: &str, sensors: &serde_json::Value) -> serde_json::Value {
        json!({
            "slug": slug, "number": "2.1", "phase": "inception", "produces": ["doc"],
            "consumes": [{"artifact": "intent-statement", "required": true}],
            "sensors_applicable": sensors,
        })
    }

    fn parse(value: &serde_json::Value) -> Result<StageGraph, GraphTextError> {
        parse_graph(&value.to_string())
    }

    fn refusal(value: &serde_json::Value) -> GraphRefusal {
        match parse(value) {
            Err(GraphTextError::Refused(refusal)) => refusal,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_gate_graph_reads_typed_values() {
        let graph = parse(&json!([node(
            "s",
            &json!([
                gate_entry("shape", "gate", "blocking"),
                gate_entry("linter", "write", "advisory")
            ])
        )]))
        .unwrap();
        assert_eq!(graph.shape, GraphShape::Gate);
        let node = &graph.nodes[0];
        assert_eq!(node.phase, Phase::Inception);
        assert_eq!(node.for_each, None);
        assert_eq!(node.consumes[0].artifact, "intent-statement");
        let selection: Vec<(FireOn, Severity)> = node
            .sensors_applicable
            .iter()
            .map(|entry| (entry.fire_on, entry.default_severity))
            .collect();
        assert_eq!(
            selection,
            [
                (FireOn::Gate, Severity::Blocking),
                (FireOn::Write, Severity::Advisory)
            ]
        );
    }

    #[test]
    fn a_graph_without_selection_keys_is_the_pre_gate_shape_write_fired_and_advisory() {
        let entry = json!({"id": "linter", "path": ".claude/sensors/aidlc-linter.md", "matches": "**/*.ts"});
        let graph = parse(&json!([node("s", &json!([entry])), node("t", &json!([]))])).unwrap();
        assert_eq!(graph.shape, GraphShape::PreGate);
        let entry = &graph.nodes[0].sensors_applicable[0];
        assert_eq!(entry.fire_on, FireOn::Write);
        assert_eq!(entry.default_severity, Severity::Advisory);
    }

    #[test]
    fn once_one_entry_carries_a_selection_key_every_entry_must_carry_both() {
        let bare = json!({"id": "linter", "path": "l.md"});
        let mixed = json!([
            node("s", &json!([gate_entry("shape", "gate", "blocking")])),
            node("t", &json!([bare]))
        ]);
        assert_eq!(
            refusal(&mixed).to_string(),
            "recompile: the graph is not one this version wrote: stage \"t\", key sensors_applicable[0].fire_on, value missing (expected one of write | gate)"
        );
        let only_severity = json!([node(
            "s",
            &json!([{"id": "x", "path": "x.md", "default_severity": "blocking"}])
        )]);
        assert_eq!(refusal(&only_severity).key, "sensors_applicable[0].fire_on");
        let no_severity = json!([node(
            "s",
            &json!([{"id": "x", "path": "x.md", "fire_on": "gate"}])
        )]);
        assert_eq!(
            refusal(&no_severity).key,
            "sensors_applicable[0].default_severity"
        );
    }

    #[test]
    fn unknown_enum_values_are_refused_never_read_as_advisory() {
        for (fire_on, severity, key, shown) in [
            ("gate", "critical", "default_severity", "\"critical\""),
            ("gate", "Blocking", "default_severity", "\"Blocking\""),
            ("bogus", "blocking", "fire_on", "\"bogus\""),
            ("Gate", "advisory", "fire_on", "\"Gate\""),
        ] {
            let found = refusal(&json!([node(
                "s",
                &json!([gate_entry("shape", fire_on, severity)])
            )]));
            assert_eq!(found.place, "stage \"s\"");
            assert_eq!(found.key, format!("sensors_applicable[0].{key}"));
            assert!(found.value.starts_with(shown), "{found}");
        }
        let number = refusal(&json!([node(
            "s",
            &json!([{"id": "x", "path": "x.md", "fire_on": 1, "default_severity": "advisory"}])
        )]));
        assert_eq!(number.value, "1 (expected one of write | gate)", "{number}");
    }

    #[test]
    fn phase_and_for_each_are_read_strictly() {
        let mut bad_phase = node("s", &json!([]));
        bad_phase["phase"] = json!("design");
        let found = refusal(&json!([bad_phase]));
        assert_eq!(
            (found.key.as_str(), found.value.as_str()),
            (
                "phase",
                "\"design\" (expected one of initialization | ideation | inception | construction | operation)"
            )
        );
        let mut no_phase = node("s", &json!([]));
        no_phase.as_object_mut().unwrap().remove("phase");
        assert!(refusal(&json!([no_phase])).value.starts_with("missing"));
        let mut per_team = node("s", &json!([]));
        per_team["for_each"] = json!("team");
        assert_eq!(refusal(&json!([per_team])).key, "for_each");
        let mut per_unit = node("s", &json!([]));
        per_unit["for_each"] = json!("unit-of-work");
        assert!(parse(&json!([per_unit])).unwrap().nodes[0].is_per_unit());
    }

    #[test]
    fn duplicate_slugs_and_duplicate_keys_are_refused() {
        let twice = refusal(&json!([node("s", &json!([])), node("s", &json!([]))]));
        assert_eq!(
            twice.to_string(),
            "recompile: the graph is not one this version wrote: stage \"s\", key slug, value \"s\" (node 1 has the same slug; slugs are unique)"
        );
        let text = r#"[{"slug": "s", "phase": "inception", "produces": [], "consumes": [],
            "sensors_applicable": [{"id": "x", "path": "x.md", "fire_on": "write", "fire_on": "gate", "default_severity": "blocking"}]}]"#;
        match parse_graph(text) {
            Err(GraphTextError::Refused(found)) => {
                assert_eq!(found.key, "sensors_applicable[0].fire_on");
                assert_eq!(found.value, "written twice in the same object");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_graph_that_is_not_an_array_of_objects_is_refused() {
        let object = refusal(&json!({"nodes": []}));
        assert_eq!(
            object.to_string(),
            "recompile: the graph is not one this version wrote: the graph, key (top level), value an object (expected an array of stage nodes)"
        );
        let scalar = refusal(&json!([node("s", &json!([])), "t"]));
        assert_eq!(scalar.place, "node 2");
        assert_eq!(scalar.value, "\"t\" (expected an object)");
        let entry = refusal(&json!([node("s", &json!(["shape"]))]));
        assert_eq!(entry.key, "sensors_applicable[0]");
        assert!(matches!(parse_graph("[{"), Err(GraphTextError::Json(_))));
        assert!(parse(&json!([])).unwrap().nodes.is_empty());
    }

    #[test]
    fn values_of_the_wrong_type_are_refused_and_long_values_are_cut() {
        let mut produces = node("s", &json!([]));
        produces["produces"] = json!(["doc", 7]);
        let found = refusal(&json!([produces]));
        assert_eq!(
            (found.key.as_str(), found.value.as_str()),
            ("produces[1]", "7 (expected a string)")
        );
        let mut long = node("s", &json!([]));
        long["phase"] = json!("x".repeat(500));
        let found = refusal(&json!([long]));
        assert!(found.value.chars().count() < 200, "{found}");
        assert!(found.value.contains('…'), "{found}");
        let no_slug = refusal(&json!([{"phase": "inception"}]));
        assert_eq!(
            (no_slug.place.as_str(), no_slug.key.as_str()),
            ("node 1", "slug")
        );
    }

    /// The values the reader skips are parsed and checked all the same: a number JSON cannot
    /// hold, nesting past `serde_json`'s limit, a broken string are refused wherever they are.
    #[test]
    fn a_value_the_reader_does_not_read_is_still_checked_as_json() {
        let base = node("s", &json!([]));
        let with = |key: &str, raw: &str| {
            let text = base.to_string();
            format!("[{}, \"{key}\": {raw}}}]", &text[..text.len() - 1])
        };
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for key in ["inputs", "rules_in_context", "produces"] {
            for raw in ["1e400", deep.as_str(), "\"\\x\""] {
                assert!(
                    matches!(parse_graph(&with(key, raw)), Err(GraphTextError::Json(_))),
                    "{key}: {raw:.20}"
                );
            }
        }
        let unread = parse_graph(&with("inputs", "{\"any\": [1, \"two\", null]}")).unwrap();
        assert_eq!(unread.nodes[0].slug, "s");
    }

    /// The fingerprint check finds a repeated key exactly when sorting the keys does, also when
    /// every fingerprint ties (so only the text decides) and for keys that share a length and
    /// their first and last eight bytes; a refusal still names the first repeated key in
    /// sorted order, on the stack and past it.
    #[test]
    fn a_repeated_key_is_found_exactly_when_sorting_the_keys_finds_one() {
        let pool: Vec<String> = NodeField::ALL
            .iter()
            .map(|field| field.key().to_owned())
            .chain(EntryField::ALL.iter().map(|field| field.key().to_owned()))
            .chain(
                [
                    "",
                    "a",
                    "abcdefgh-x-abcdefgh",
                    "abcdefgh-y-abcdefgh",
                    "é",
                    "\u{0}",
                ]
                .map(String::from),
            )
            .collect();
        // A small linear congruential sequence: the same key lists on every run.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |bound: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(state >> 33).unwrap() % bound
        };
        for _ in 0..3000 {
            let length = next(KEYS_CHECKED_ON_THE_STACK + 10);
            let keys: Vec<&str> = (0..length)
                .map(|_| pool[next(pool.len())].as_str())
                .collect();
            let expected = first_repeated(&mut keys.clone());
            assert_eq!(
                any_repeated(&keys, key_fingerprint),
                expected.is_some(),
                "{keys:?}"
            );
            assert_eq!(any_repeated(&keys, |_| 0), expected.is_some(), "{keys:?}");
            let entries: Vec<(Cow<'_, str>, RawJson<'_>)> = keys
                .iter()
                .map(|key| (Cow::Borrowed(*key), RawJson::Null))
                .collect();
            let object = ObjectReader {
                place: NodePlace::Numbered(1),
                within: Within::Node,
                entries: &entries,
            };
            match (object.check_no_duplicate_key(), expected) {
                (Ok(()), None) => {}
                (Err(refusal), Some(key)) => assert_eq!(refusal.key, key),
                (found, expected) => panic!("{keys:?}: {found:?}, expected {expected:?}"),
            }
        }
    }

    /// Every key the reader asks a node for is one it keeps.
    #[test]
    fn the_reader_keeps_every_node_key_it_reads() {
        let text =
            json!([node("s", &json!([gate_entry("shape", "gate", "blocking")]))]).to_string();
        let mut deserializer = serde_json::Deserializer::from_str(&text);
        let raw = RawSeed(Reading::Graph)
            .deserialize(&mut deserializer)
            .unwrap();
        let RawJson::Array(nodes) = raw else {
            panic!("an array")
        };
        let RawJson::Object(fields) = &nodes[0] else {
            panic!("an object")
        };
        for (key, value) in fields {
            let read = READ_NODE_FIELDS
                .iter()
                .any(|field| field.key() == key.as_ref());
            assert_eq!(!matches!(value, RawJson::Unread), read, "{key}");
        }
        assert!(
            fields
                .iter()
                .any(|(key, value)| key == "number" && matches!(value, RawJson::Unread))
        );
    }
}
