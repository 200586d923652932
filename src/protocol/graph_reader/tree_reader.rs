//! The graph reader as it was before the one-pass reader (`gathered`, `checked`): the text parsed
//! into a tree of every value the reader reads, then read from the tree. Kept for the tests
//! only, as the other half of the differential test in `super::tests`, which holds the two
//! readers to the same graphs, the same refusals and the same JSON errors.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::{
    GraphRefusal, GraphShape, GraphTextError, MAX_SHOWN_VALUE_CHARS, StageGraph, UnreadValue,
};
use crate::protocol::graph_keys::{CONSUME_ARTIFACT, EntryField, NodeField};
use crate::protocol::selection::{FireOn, Severity};
use crate::protocol::stage_node::{ForEach, GraphConsume, GraphNode, Phase, SensorEntry};

/// The graph in `text`, as the tree reader reads it.
pub(super) fn parse_graph_by_tree(text: &str) -> Result<StageGraph, GraphTextError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let raw = RawSeed(Reading::Graph)
        .deserialize(&mut deserializer)
        .and_then(|raw| deserializer.end().map(|()| raw))
        .map_err(|error| GraphTextError::Json(error.to_string()))?;
    read_graph(&raw).map_err(GraphTextError::Refused)
}

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
const READ_NODE_FIELDS: [NodeField; 9] = [
    NodeField::Slug,
    NodeField::Plugin,
    NodeField::Enabled,
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

    /// A node's `enabled`: absent is an enabled stage; the compile writes the key only as
    /// `false` (docs/decisions.md D14), so any other value is refused, `true` included.
    fn enabled_flag(&self, key: &str) -> Result<bool, GraphRefusal> {
        match self.get(key) {
            None => Ok(true),
            Some(RawJson::Bool(false)) => Ok(false),
            Some(other) => Err(self.refusal(
                key,
                format!(
                    "{} (expected false, or no key for an enabled stage)",
                    other.shown()
                ),
            )),
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
    Ok(StageGraph {
        shape,
        nodes,
        disabled: Vec::new(),
    })
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
    let plugin = fields
        .optional_string(NodeField::Plugin.key())?
        .map(str::to_owned);
    let enabled = fields.enabled_flag(NodeField::Enabled.key())?;
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
    Ok(GraphNode {
        slug,
        plugin,
        enabled,
        phase,
        for_each,
        produces,
        optional_produces,
        consumes,
        sensors_applicable,
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
        json!({"id": id, "path": format!(".claude/sensors/aidlc-{id}.md"), "fire_on": fire_on, "default_severity": severity})
    }

    fn node(slug: &str, sensors: &serde_json::Value) -> serde_json::Value {
        json!({"slug": slug, "number": "2.1", "phase": "inception", "produces": ["doc"], "consumes": [], "sensors_applicable": sensors})
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
