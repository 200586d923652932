//! The graph reader's checks: the gathered values (`gathered`) made into typed nodes, each key
//! checked strictly, in the fixed order the module's doc gives, the first problem refusing the
//! whole graph.

use std::collections::BTreeMap;
use std::str::FromStr;

use super::gathered::{GatheredGraph, Item, KeysMet, Listed, NodeFields, Scalar};
use super::{GraphRefusal, GraphShape, StageGraph};
use crate::protocol::graph_keys::{CONSUME_ARTIFACT, EntryField, NodeField};
use crate::protocol::selection::{FireOn, Severity};
use crate::protocol::stage_node::{ForEach, GraphConsume, GraphNode, Phase, SensorEntry};

/// A closed set of values the graph spells by name (`phase`, `for_each`, `fire_on`,
/// `default_severity`): parsed exactly, and listed in order by a refusal.
trait EnumValue: FromStr + strum::VariantArray + Copy + Into<&'static str> {}

impl<T: FromStr + strum::VariantArray + Copy + Into<&'static str>> EnumValue for T {}

/// The typed graph, or the first problem in check order.
pub(super) fn check_graph(graph: GatheredGraph<'_>) -> Result<StageGraph, GraphRefusal> {
    let items = match graph {
        Listed::Items(items) => items,
        Listed::Other(shown) => {
            return Err(GraphRefusal {
                place: "the graph".to_owned(),
                key: "(top level)".to_owned(),
                value: format!("{shown} (expected an array of stage nodes)"),
            });
        }
    };
    let mut all_fields: Vec<NodeFields<'_>> = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        match item {
            Item::Object(fields) => all_fields.push(fields),
            Item::Other(shown) => {
                return Err(GraphRefusal {
                    place: NodePlace::Numbered(index + 1).shown(),
                    key: "(node)".to_owned(),
                    value: format!("{shown} (expected an object)"),
                });
            }
        }
    }
    let shape = if all_fields.iter().any(|fields| fields.carries_selection) {
        GraphShape::Gate
    } else {
        GraphShape::PreGate
    };
    let mut nodes: Vec<GraphNode> = Vec::with_capacity(all_fields.len());
    // Each slug's first node, so that a large graph is not searched once per node.
    let mut first_with_slug: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, fields) in all_fields.iter().enumerate() {
        let place = node_place(index, fields);
        let object = ObjectChecker {
            place,
            within: Within::Node,
            keys: &fields.keys,
        };
        let node = check_node(&object, fields, shape)?;
        // `check_node` checked the slug as a non-empty string, so the place names it.
        let NodePlace::Stage(slug) = place else {
            unreachable!("a checked node has a non-empty string slug")
        };
        if let Some(first) = first_with_slug.get(slug) {
            return Err(object.refusal(
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

/// `stage "<slug>"` when the node's (first) slug is a non-empty string, else `node <n>`.
fn node_place<'a>(index: usize, fields: &'a NodeFields<'_>) -> NodePlace<'a> {
    match &fields.slug {
        Some(Scalar::Str(slug)) if !slug.is_empty() => NodePlace::Stage(slug),
        _ => NodePlace::Numbered(index + 1),
    }
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

/// The checks of one object of the graph (a node, a `consumes` item, a binding), with where it
/// is for refusals; the values come from the object's gathered fields.
struct ObjectChecker<'a> {
    place: NodePlace<'a>,
    within: Within<'a>,
    keys: &'a KeysMet<'a>,
}

impl<'a> ObjectChecker<'a> {
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
    /// several repeated keys, the first in sorted order is named.
    fn no_repeated_key(&self) -> Result<(), GraphRefusal> {
        match self.keys.first_repeated() {
            Some(key) => Err(self.refusal(key, "written twice in the same object")),
            None => Ok(()),
        }
    }

    fn required<'v, T>(
        &self,
        value: Option<&'v T>,
        key: &str,
        expected: &str,
    ) -> Result<&'v T, GraphRefusal> {
        value.ok_or_else(|| self.refusal(key, format!("missing (expected {expected})")))
    }

    fn string<'v>(
        &self,
        value: Option<&'v Scalar<'_>>,
        key: &str,
    ) -> Result<&'v str, GraphRefusal> {
        match self.required(value, key, "a string")? {
            Scalar::Str(text) => Ok(text.as_ref()),
            other => Err(self.refusal(key, format!("{} (expected a string)", other.shown()))),
        }
    }

    fn non_empty_string<'v>(
        &self,
        value: Option<&'v Scalar<'_>>,
        key: &str,
    ) -> Result<&'v str, GraphRefusal> {
        let text = self.string(value, key)?;
        if text.is_empty() {
            return Err(self.refusal(key, "\"\" (expected a non-empty string)"));
        }
        Ok(text)
    }

    /// Absent is `None`; present must be a string (the compile leaves the key out, never null).
    fn optional_string<'v>(
        &self,
        value: Option<&'v Scalar<'_>>,
        key: &str,
    ) -> Result<Option<&'v str>, GraphRefusal> {
        value.map(|value| self.string(Some(value), key)).transpose()
    }

    /// A node's `enabled`: absent is an enabled stage; the compile writes the key only as
    /// `false` (D14), so any other value is refused, `true` included.
    fn enabled_flag(&self, value: Option<&Scalar<'_>>, key: &str) -> Result<bool, GraphRefusal> {
        match value {
            None => Ok(true),
            Some(Scalar::Bool(false)) => Ok(false),
            Some(other) => Err(self.refusal(
                key,
                format!(
                    "{} (expected false, or no key for an enabled stage)",
                    other.shown()
                ),
            )),
        }
    }

    /// One of `T`'s values as the graph spells them; the refusal names them all.
    fn enum_value<T: EnumValue>(
        &self,
        value: Option<&Scalar<'_>>,
        key: &str,
    ) -> Result<T, GraphRefusal> {
        if let Some(Scalar::Str(text)) = value
            && let Ok(parsed) = text.parse()
        {
            return Ok(parsed);
        }
        let allowed: Vec<&str> = T::VARIANTS.iter().map(|&variant| variant.into()).collect();
        let expected = format!("one of {}", allowed.join(" | "));
        Err(match value {
            None => self.refusal(key, format!("missing (expected {expected})")),
            Some(value) => self.refusal(key, format!("{} (expected {expected})", value.shown())),
        })
    }

    /// The items of a required array; `expected` names what it must be.
    fn items<'v, T>(
        &self,
        value: Option<&'v Listed<T>>,
        key: &str,
        expected: &str,
    ) -> Result<&'v [T], GraphRefusal> {
        match self.required(value, key, expected)? {
            Listed::Items(items) => Ok(items),
            Listed::Other(shown) => {
                Err(self.refusal(key, format!("{shown} (expected {expected})")))
            }
        }
    }

    fn string_list(
        &self,
        value: Option<&Listed<Scalar<'_>>>,
        key: &str,
        required: bool,
    ) -> Result<Vec<String>, GraphRefusal> {
        if value.is_none() && !required {
            return Ok(Vec::new());
        }
        self.items(value, key, "an array of strings")?
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Scalar::Str(text) => Ok(String::from(text.as_ref())),
                other => Err(self.refusal(
                    &format!("{key}[{index}]"),
                    format!("{} (expected a string)", other.shown()),
                )),
            })
            .collect()
    }

    /// A required array of objects, each with its own checker (its key path), every item
    /// checked to be an object without a repeated key before any item's values are.
    fn objects<'v, F>(
        &self,
        value: Option<&'v Listed<Item<F>>>,
        key: &'a str,
        keys_of: impl Fn(&'v F) -> &'v KeysMet<'v>,
    ) -> Result<Vec<(ObjectChecker<'v>, &'v F)>, GraphRefusal>
    where
        'a: 'v,
    {
        self.items(value, key, "an array of objects")?
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Item::Object(fields) => {
                    let checker = ObjectChecker {
                        place: self.place,
                        within: Within::Item { list: key, index },
                        keys: keys_of(fields),
                    };
                    checker.no_repeated_key()?;
                    Ok((checker, fields))
                }
                Item::Other(shown) => Err(self.refusal(
                    &format!("{key}[{index}]"),
                    format!("{shown} (expected an object)"),
                )),
            })
            .collect()
    }
}

fn check_node(
    object: &ObjectChecker<'_>,
    fields: &NodeFields<'_>,
    shape: GraphShape,
) -> Result<GraphNode, GraphRefusal> {
    object.no_repeated_key()?;
    let slug = object
        .non_empty_string(fields.slug.as_ref(), NodeField::Slug.key())?
        .to_owned();
    let plugin = object
        .optional_string(fields.plugin.as_ref(), NodeField::Plugin.key())?
        .map(str::to_owned);
    let enabled = object.enabled_flag(fields.enabled.as_ref(), NodeField::Enabled.key())?;
    let phase: Phase = object.enum_value(fields.phase.as_ref(), NodeField::Phase.key())?;
    let for_each: Option<ForEach> = fields
        .for_each
        .as_ref()
        .map(|value| object.enum_value(Some(value), NodeField::ForEach.key()))
        .transpose()?;
    let produces = object.string_list(fields.produces.as_ref(), NodeField::Produces.key(), true)?;
    let optional_produces = object.string_list(
        fields.optional_produces.as_ref(),
        NodeField::OptionalProduces.key(),
        false,
    )?;
    let consumes = object
        .objects(
            fields.consumes.as_ref(),
            NodeField::Consumes.key(),
            |consume| &consume.keys,
        )?
        .iter()
        .map(|(checker, consume)| {
            Ok(GraphConsume {
                artifact: checker
                    .string(consume.artifact.as_ref(), CONSUME_ARTIFACT)?
                    .to_owned(),
            })
        })
        .collect::<Result<Vec<_>, GraphRefusal>>()?;
    let sensors_applicable = object
        .objects(
            fields.sensors_applicable.as_ref(),
            NodeField::SensorsApplicable.key(),
            |entry| &entry.keys,
        )?
        .iter()
        .map(|(checker, entry)| check_sensor_entry(checker, entry, shape))
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

fn check_sensor_entry(
    checker: &ObjectChecker<'_>,
    entry: &super::gathered::EntryFields<'_>,
    shape: GraphShape,
) -> Result<SensorEntry, GraphRefusal> {
    let (fire_on, default_severity) = match shape {
        // By the shape's definition no entry of this graph carries either key.
        GraphShape::PreGate => (FireOn::Write, Severity::Advisory),
        GraphShape::Gate => (
            checker
                .enum_value::<FireOn>(entry.get(EntryField::FireOn), EntryField::FireOn.key())?,
            checker.enum_value::<Severity>(
                entry.get(EntryField::DefaultSeverity),
                EntryField::DefaultSeverity.key(),
            )?,
        ),
    };
    Ok(SensorEntry {
        id: checker
            .non_empty_string(entry.get(EntryField::Id), EntryField::Id.key())?
            .to_owned(),
        path: checker
            .string(entry.get(EntryField::Path), EntryField::Path.key())?
            .to_owned(),
        fire_on,
        default_severity,
        category: checker
            .optional_string(entry.get(EntryField::Category), EntryField::Category.key())?
            .map(str::to_owned),
        matches: checker
            .optional_string(entry.get(EntryField::Matches), EntryField::Matches.key())?
            .map(str::to_owned),
    })
}
