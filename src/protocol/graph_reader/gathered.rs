//! The graph reader's one pass over the text: each value the reader reads is kept in the shape
//! the checks expect ([`Scalar`], [`Listed`], [`Item`]) or, when the text holds another shape,
//! only as a refusal would show it; every other value is parsed as JSON and dropped
//! ([`UnreadValue`]). Nothing is decided here: `checked` decides, in its fixed order.
//!
//! Invariants:
//! - exactly the texts `serde_json` accepts are accepted: every value, read or not, is parsed to
//!   its end (numbers converted, nesting counted), so a broken value is a JSON error wherever it
//!   is, and no value is ever built that the checks do not look at;
//! - of a key written twice in one object the first value is kept (the second is still parsed),
//!   and every repetition is recorded ([`KeysMet`]) for the check that refuses it;
//! - a node's `carries_selection` counts every `sensors_applicable` of the node, a repeated one
//!   too, because the graph's shape is decided before any node is checked.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::MAX_SHOWN_VALUE_CHARS;
use crate::protocol::graph_keys::{
    CONSUME_ARTIFACT, CONSUME_CONDITIONAL_ON, CONSUME_REQUIRED, ENTRY_KEYS, EntryField,
    FIELD_ORDER, NodeField,
};

/// The whole graph as gathered: an array of node objects, or what the top level was instead.
pub(super) type GatheredGraph<'t> = Listed<Item<NodeFields<'t>>>;

/// Gather the graph from `deserializer` (the caller checks that nothing follows it).
pub(super) fn gather_graph<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<GatheredGraph<'de>, D::Error> {
    GatherSeed::<GatheredGraph<'de>>(PhantomData).deserialize(deserializer)
}

/// A value where the reader expects a string (or, for `enabled`, a boolean).
#[derive(Debug)]
pub(super) enum Scalar<'t> {
    /// Borrowed from the text unless it holds an escape.
    Str(Cow<'t, str>),
    Bool(bool),
    /// Any other value, as a refusal shows it: `null`, a number as JSON, `an array`,
    /// `an object`.
    Other(String),
}

impl Scalar<'_> {
    /// The value as a refusal shows it: scalars as JSON (long strings cut), containers by kind.
    pub(super) fn shown(&self) -> String {
        match self {
            Scalar::Str(text) => shown_string(text),
            Scalar::Bool(value) => value.to_string(),
            Scalar::Other(shown) => shown.clone(),
        }
    }
}

/// A string as a refusal shows it: as JSON, cut with an ellipsis past
/// [`MAX_SHOWN_VALUE_CHARS`].
fn shown_string(text: &str) -> String {
    let quoted = serde_json::Value::from(text).to_string();
    if quoted.chars().count() <= MAX_SHOWN_VALUE_CHARS {
        quoted
    } else {
        let cut: String = quoted.chars().take(MAX_SHOWN_VALUE_CHARS).collect();
        format!("{cut}…")
    }
}

/// A value where the reader expects an array: its items, or what it was instead (as shown).
#[derive(Debug)]
pub(super) enum Listed<T> {
    Items(Vec<T>),
    Other(String),
}

/// A value where the reader expects an object: its gathered fields, or what it was instead (as
/// shown).
#[derive(Debug)]
pub(super) enum Item<F> {
    Object(F),
    Other(String),
}

/// Every key an object holds, for the repeated-key check: which of the object's known keys were
/// met (a bit each), the other keys, and every key met again.
#[derive(Debug, Default)]
pub(super) struct KeysMet<'t> {
    known: u32,
    others: Vec<Cow<'t, str>>,
    repeated: Vec<Cow<'t, str>>,
}

impl<'t> KeysMet<'t> {
    /// Meet known key number `index` (below 32); whether this is its first time.
    fn meet_known(&mut self, index: usize, key: Cow<'t, str>) -> bool {
        let bit = 1_u32 << index;
        if self.known & bit == 0 {
            self.known |= bit;
            true
        } else {
            self.repeated.push(key);
            false
        }
    }

    /// Meet a key the object does not know.
    fn meet_other(&mut self, key: Cow<'t, str>) {
        if self.others.contains(&key) {
            self.repeated.push(key);
        } else {
            self.others.push(key);
        }
    }

    fn has_known(&self, index: usize) -> bool {
        self.known & (1_u32 << index) != 0
    }

    /// Of the keys written more than once, the first in sorted order.
    pub(super) fn first_repeated(&self) -> Option<&str> {
        self.repeated.iter().map(AsRef::as_ref).min()
    }
}

/// The values of a node's keys the reader reads (the first of each, when one repeats).
#[derive(Debug, Default)]
pub(super) struct NodeFields<'t> {
    pub(super) keys: KeysMet<'t>,
    pub(super) slug: Option<Scalar<'t>>,
    pub(super) plugin: Option<Scalar<'t>>,
    pub(super) enabled: Option<Scalar<'t>>,
    pub(super) phase: Option<Scalar<'t>>,
    pub(super) for_each: Option<Scalar<'t>>,
    pub(super) produces: Option<Listed<Scalar<'t>>>,
    pub(super) optional_produces: Option<Listed<Scalar<'t>>>,
    pub(super) consumes: Option<Listed<Item<ConsumeFields<'t>>>>,
    pub(super) sensors_applicable: Option<Listed<Item<EntryFields<'t>>>>,
    /// Whether any `sensors_applicable` of the node holds an entry object carrying `fire_on` or
    /// `default_severity`.
    pub(super) carries_selection: bool,
    /// Where the search for the next key's place starts ([`place_of`]).
    next_place: usize,
}

/// The values of a `sensors_applicable` entry's keys, by [`EntryField`].
#[derive(Debug, Default)]
pub(super) struct EntryFields<'t> {
    pub(super) keys: KeysMet<'t>,
    values: [Option<Scalar<'t>>; EntryField::ALL.len()],
    /// Where the search for the next key's place starts ([`place_of`]).
    next_place: usize,
}

/// The place of `key` in `known`, searched from `start` to the end, then from the beginning:
/// the compile writes an object's keys in their order, so starting after the previous key's
/// place finds the next one at the first or second comparison.
fn place_of(known: &[&str], start: usize, key: &str) -> Option<usize> {
    let (before, from_start) = known.split_at(start.min(known.len()));
    from_start
        .iter()
        .position(|candidate| *candidate == key)
        .map(|offset| start + offset)
        .or_else(|| before.iter().position(|candidate| *candidate == key))
}

impl<'t> EntryFields<'t> {
    pub(super) fn get(&self, field: EntryField) -> Option<&Scalar<'t>> {
        self.values[field as usize].as_ref()
    }

    fn carries_selection(&self) -> bool {
        self.keys.has_known(EntryField::FireOn as usize)
            || self.keys.has_known(EntryField::DefaultSeverity as usize)
    }
}

/// The known keys of a `consumes` item, in the order of their bits.
const CONSUME_KEYS: [&str; 3] = [CONSUME_ARTIFACT, CONSUME_REQUIRED, CONSUME_CONDITIONAL_ON];

/// The value of a `consumes` item's `artifact`.
#[derive(Debug, Default)]
pub(super) struct ConsumeFields<'t> {
    pub(super) keys: KeysMet<'t>,
    pub(super) artifact: Option<Scalar<'t>>,
}

/// How a value of one expected shape is made from whatever JSON value the text holds: a shape
/// other than the expected one becomes what a refusal shows. The scalar is made only when asked
/// for, so that a value nothing reads ([`UnreadValue`]) costs no allocation.
trait Gather<'de>: Sized {
    fn from_scalar(scalar: impl FnOnce() -> Scalar<'de>) -> Self;

    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UnreadValue>()?.is_some() {}
        Ok(Self::from_scalar(|| Scalar::Other("an array".to_owned())))
    }

    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_key::<UnreadValue>()?.is_some() {
            map.next_value::<UnreadValue>()?;
        }
        Ok(Self::from_scalar(|| Scalar::Other("an object".to_owned())))
    }
}

/// The fields of one kind of object, filled key by key.
trait ObjectFields<'de>: Default {
    fn take<A: MapAccess<'de>>(&mut self, key: Cow<'de, str>, map: &mut A) -> Result<(), A::Error>;
}

impl<'de> Gather<'de> for Scalar<'de> {
    fn from_scalar(scalar: impl FnOnce() -> Scalar<'de>) -> Self {
        scalar()
    }
}

impl<'de, T: Gather<'de>> Gather<'de> for Listed<T> {
    fn from_scalar(scalar: impl FnOnce() -> Scalar<'de>) -> Self {
        Listed::Other(scalar().shown())
    }

    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(GatherSeed::<T>(PhantomData))? {
            items.push(item);
        }
        Ok(Listed::Items(items))
    }
}

impl<'de, F: ObjectFields<'de>> Gather<'de> for Item<F> {
    fn from_scalar(scalar: impl FnOnce() -> Scalar<'de>) -> Self {
        Item::Other(scalar().shown())
    }

    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = F::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            fields.take(key, &mut map)?;
        }
        Ok(Item::Object(fields))
    }
}

/// The next value of `map`, gathered as `T`.
fn gather<'de, T: Gather<'de>, A: MapAccess<'de>>(map: &mut A) -> Result<T, A::Error> {
    map.next_value_seed(GatherSeed::<T>(PhantomData))
}

/// Parse and drop the next value of `map`.
fn skip<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<UnreadValue>().map(|UnreadValue| ())
}

impl<'de> ObjectFields<'de> for NodeFields<'de> {
    fn take<A: MapAccess<'de>>(&mut self, key: Cow<'de, str>, map: &mut A) -> Result<(), A::Error> {
        let Some(index) = place_of(FIELD_ORDER, self.next_place, &key) else {
            self.keys.meet_other(key);
            return skip(map);
        };
        self.next_place = index + 1;
        let first = self.keys.meet_known(index, key);
        match NodeField::ALL[index] {
            NodeField::SensorsApplicable => {
                let entries: Listed<Item<EntryFields<'de>>> = gather(map)?;
                self.carries_selection |= matches!(&entries, Listed::Items(items)
                    if items.iter().any(|item| matches!(item, Item::Object(entry) if entry.carries_selection())));
                if first {
                    self.sensors_applicable = Some(entries);
                }
            }
            _ if !first => skip(map)?,
            NodeField::Slug => self.slug = Some(gather(map)?),
            NodeField::Plugin => self.plugin = Some(gather(map)?),
            NodeField::Enabled => self.enabled = Some(gather(map)?),
            NodeField::Phase => self.phase = Some(gather(map)?),
            NodeField::ForEach => self.for_each = Some(gather(map)?),
            NodeField::Produces => self.produces = Some(gather(map)?),
            NodeField::OptionalProduces => self.optional_produces = Some(gather(map)?),
            NodeField::Consumes => self.consumes = Some(gather(map)?),
            _ => skip(map)?,
        }
        Ok(())
    }
}

impl<'de> ObjectFields<'de> for EntryFields<'de> {
    fn take<A: MapAccess<'de>>(&mut self, key: Cow<'de, str>, map: &mut A) -> Result<(), A::Error> {
        let Some(index) = place_of(ENTRY_KEYS, self.next_place, &key) else {
            self.keys.meet_other(key);
            return skip(map);
        };
        self.next_place = index + 1;
        if self.keys.meet_known(index, key) {
            self.values[index] = Some(gather(map)?);
            Ok(())
        } else {
            skip(map)
        }
    }
}

impl<'de> ObjectFields<'de> for ConsumeFields<'de> {
    fn take<A: MapAccess<'de>>(&mut self, key: Cow<'de, str>, map: &mut A) -> Result<(), A::Error> {
        let Some(index) = CONSUME_KEYS.iter().position(|known| *known == key) else {
            self.keys.meet_other(key);
            return skip(map);
        };
        if self.keys.meet_known(index, key) && index == 0 {
            self.artifact = Some(gather(map)?);
            Ok(())
        } else {
            skip(map)
        }
    }
}

/// Gathers one value as `T`.
struct GatherSeed<T>(PhantomData<T>);

impl<'de, T: Gather<'de>> DeserializeSeed<'de> for GatherSeed<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_any(GatherVisitor::<T>(PhantomData))
    }
}

struct GatherVisitor<T>(PhantomData<T>);

impl<'de, T: Gather<'de>> Visitor<'de> for GatherVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Other("null".to_owned())))
    }

    fn visit_bool<E>(self, value: bool) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Bool(value)))
    }

    fn visit_i64<E>(self, value: i64) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Other(value.to_string())))
    }

    fn visit_u64<E>(self, value: u64) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Other(value.to_string())))
    }

    fn visit_f64<E>(self, value: f64) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Other(value.to_string())))
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Str(Cow::Borrowed(value))))
    }

    fn visit_str<E>(self, value: &str) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Str(Cow::Owned(value.to_owned()))))
    }

    fn visit_string<E>(self, value: String) -> Result<T, E> {
        Ok(T::from_scalar(|| Scalar::Str(Cow::Owned(value))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// An object's key, borrowed from the text when it has no escape.
#[derive(Deserialize)]
#[serde(transparent)]
struct Key<'t>(#[serde(borrow)] Cow<'t, str>);

/// A value the reader does not read, parsed as any read value is (every number converted,
/// nesting counted) so that exactly the same texts are accepted, and nothing kept. Also the
/// settings reader's (`dispatch::time_limit`), for the same reason.
pub(crate) struct UnreadValue;

impl<'de> Gather<'de> for UnreadValue {
    fn from_scalar(_: impl FnOnce() -> Scalar<'de>) -> Self {
        UnreadValue
    }
}

impl<'de> Deserialize<'de> for UnreadValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        GatherSeed::<UnreadValue>(PhantomData).deserialize(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit and slot of a known key is its place in `ALL`, which the `as usize` casts rely on.
    #[test]
    fn the_known_keys_are_numbered_by_their_place() {
        for (index, field) in EntryField::ALL.iter().enumerate() {
            assert_eq!(*field as usize, index, "{field:?}");
        }
        for (index, field) in NodeField::ALL.iter().enumerate() {
            assert_eq!(FIELD_ORDER[index], field.key(), "{field:?}");
        }
        assert!(NodeField::ALL.len() <= 32 && EntryField::ALL.len() <= 32);
    }

    #[test]
    fn a_key_is_placed_wherever_the_search_starts() {
        for start in 0..=FIELD_ORDER.len() + 1 {
            for (index, key) in FIELD_ORDER.iter().enumerate() {
                assert_eq!(
                    place_of(FIELD_ORDER, start, key),
                    Some(index),
                    "{key} from {start}"
                );
            }
            assert_eq!(place_of(FIELD_ORDER, start, "zzz"), None);
        }
        assert_eq!(place_of(ENTRY_KEYS, 0, "matches"), Some(5));
    }

    #[test]
    fn a_repeated_key_is_recorded_each_time_and_the_least_is_named() {
        let mut keys = KeysMet::default();
        assert!(keys.meet_known(3, Cow::Borrowed("phase")));
        keys.meet_other(Cow::Borrowed("zz"));
        keys.meet_other(Cow::Borrowed("zz"));
        assert!(!keys.meet_known(3, Cow::Borrowed("phase")));
        assert_eq!(keys.first_repeated(), Some("phase"));
        assert_eq!(KeysMet::default().first_repeated(), None);
    }
}
