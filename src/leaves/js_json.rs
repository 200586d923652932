//! `JSON.stringify(value, null, 2)` as the reference's JavaScript prints it: the one emulation,
//! for every file whose bytes must match what the reference writes (D2): `stage-graph.json`,
//! `scope-grid.json`, the intent registry `intents.json`, and the worker JSON in a detail file.
//!
//! The output has two-space indentation, `[]` and `{}` for empty containers, object keys in
//! JavaScript's order (array-index keys ascending, then the rest as parsed), numbers as
//! `Number.prototype.toString` prints them, and strings escaped as JavaScript escapes them.
//! `serde_json`'s pretty printer already has JavaScript's layout and string escapes; what differs
//! is the key order and the numbers, so for values that only hold strings, booleans, safe
//! integers and keys that are not array indices the two print the same bytes, at the same speed.
//!
//! Must not: import anything from this crate, or add a trailing newline (callers decide).

use std::io;

use serde::ser::{Serialize, SerializeMap as _, SerializeSeq as _, Serializer};
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::{Map, Value};

/// `JSON.stringify(value, null, 2)`: `serde_json`'s serializer, with JavaScript's key order
/// (`JavaScriptValue`) and number form (`JavaScriptFormatter`).
pub fn pretty_json(value: &Value) -> String {
    let mut bytes = Vec::with_capacity(128);
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut bytes, JavaScriptFormatter::default());
    // Invariant: writing into a `Vec` cannot fail, a `Value` always serialises (its keys are
    // strings), and serde_json writes UTF-8 only.
    JavaScriptValue(value)
        .serialize(&mut serializer)
        .unwrap_or_else(|error| unreachable!("serialising a JSON value cannot fail: {error}"));
    String::from_utf8(bytes)
        .unwrap_or_else(|error| unreachable!("serde_json wrote invalid UTF-8: {error}"))
}

/// A value serialised with its object keys in JavaScript's order.
struct JavaScriptValue<'v>(&'v Value);

impl Serialize for JavaScriptValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut sequence = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    sequence.serialize_element(&JavaScriptValue(item))?;
                }
                sequence.end()
            }
            Value::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                // Almost no object has an array-index key; those keep their order without a copy.
                if entries.keys().any(|key| array_index(key).is_some()) {
                    for (key, value) in javascript_key_order(entries) {
                        map.serialize_entry(key, &JavaScriptValue(value))?;
                    }
                } else {
                    for (key, value) in entries {
                        map.serialize_entry(key, &JavaScriptValue(value))?;
                    }
                }
                map.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

/// `serde_json`'s two-space pretty layout (which is `JSON.stringify`'s, empty containers and string
/// escapes included), with numbers as JavaScript prints them: integers exactly while they are
/// safe (|n| ≤ 2^53), anything else as the double it is, in `Number.prototype.toString` form.
#[derive(Default)]
struct JavaScriptFormatter(PrettyFormatter<'static>);

/// The largest integer a JavaScript number holds exactly.
const SAFE_INTEGER: u64 = 1 << 53;

/// The layout methods of [`Formatter`], each forwarded to the pretty formatter as it is.
macro_rules! forward_layout_to_pretty {
    ($($method:ident($($argument:ident: $type:ty)?);)*) => {
        $(
            fn $method<W: ?Sized + io::Write>(
                &mut self,
                writer: &mut W,
                $($argument: $type)?
            ) -> io::Result<()> {
                self.0.$method(writer $(, $argument)?)
            }
        )*
    };
}

impl Formatter for JavaScriptFormatter {
    fn write_u64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        if value <= SAFE_INTEGER {
            self.0.write_u64(writer, value)
        } else {
            self.write_f64(writer, nearest_double(value.into()))
        }
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        if value.unsigned_abs() <= SAFE_INTEGER {
            self.0.write_i64(writer, value)
        } else {
            self.write_f64(writer, nearest_double(value.into()))
        }
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(javascript_double(value).as_bytes())
    }

    forward_layout_to_pretty! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        begin_object_value();
        end_object_value();
    }
}

/// The double nearest `value` (ties to even, as every integer-to-float cast rounds), which is
/// how JavaScript holds an integer past 2^53.
#[expect(
    clippy::cast_precision_loss,
    reason = "JavaScript holds an unsafe integer as the nearest double"
)]
fn nearest_double(value: i128) -> f64 {
    value as f64
}

/// JavaScript enumerates integer-like keys (canonical, up to 2^32 − 2) first, ascending, then the
/// other keys in insertion order (kept by `serde_json`'s `preserve_order`).
fn javascript_key_order(entries: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, (&String, &Value))> = Vec::new();
    let mut named = Vec::new();
    for entry in entries {
        match array_index(entry.0) {
            Some(index) => indexed.push((index, entry)),
            None => named.push(entry),
        }
    }
    indexed.sort_by_key(|(index, _)| *index);
    indexed
        .into_iter()
        .map(|(_, entry)| entry)
        .chain(named)
        .collect()
}

/// The array index a key names: `0`, or digits without a leading zero, below 2^32 − 1.
#[inline]
pub fn array_index(key: &str) -> Option<u32> {
    // Most keys start with a letter: this test is the whole cost of the common case.
    let first = *key.as_bytes().first()?;
    if !first.is_ascii_digit() || (first == b'0' && key.len() > 1) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|index| *index != u32::MAX)
}

/// ECMAScript `Number::toString(10)` (`ryu-js`: the shortest round-trip digits closest to the
/// value, as plain decimals when the decimal point falls within 21 places left of them or 6
/// places right, in `d.ddde±x` form otherwise); `null` for what JSON cannot hold, as
/// `JSON.stringify` writes it.
fn javascript_double(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_owned();
    }
    ryu_js::Buffer::new().format_finite(value).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings printed by node.

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        let cases = [
            ("1.0", "1"),
            ("1.5", "1.5"),
            ("-0.0", "0"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("1e-7", "1e-7"),
            ("1e-6", "0.000001"),
            ("0.000001234", "0.000001234"),
            ("1.5e300", "1.5e+300"),
            ("-2.5e-10", "-2.5e-10"),
            ("12345678901234567890", "12345678901234567000"),
            ("9007199254740993", "9007199254740992"),
            ("-9007199254740992", "-9007199254740992"),
            ("0.1", "0.1"),
            ("100", "100"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("123e-20", "1.23e-18"),
        ];
        for (json, expected) in cases {
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(pretty_json(&value), expected, "{json}");
        }
    }

    #[test]
    fn doubles_pick_the_closest_of_the_shortest_digit_strings() {
        // Rust's `{:e}` prints ...313 and ...13 for these; V8 prints the closer ...312 and ...12.
        for text in [
            "29258736354892.312",
            "272499007847918.12",
            "778118473494118.2",
        ] {
            assert_eq!(javascript_double(text.parse().unwrap()), text);
        }
    }

    #[test]
    fn objects_print_in_javascript_key_order() {
        let value: serde_json::Value = serde_json::from_str(
            r#"{"b":1,"2":[],"1":{},"a":[1,{"x":"é\u0001\u001f\u007f\u2028\""}],"01":2,"4294967295":3,"4294967294":4}"#,
        )
        .unwrap();
        let expected = "{\n  \"1\": {},\n  \"2\": [],\n  \"4294967294\": 4,\n  \"b\": 1,\n  \"a\": [\n    1,\n    {\n      \
            \"x\": \"é\\u0001\\u001f\u{7f}\u{2028}\\\"\"\n    }\n  ],\n  \"01\": 2,\n  \"4294967295\": 3\n}";
        assert_eq!(pretty_json(&value), expected);
    }

    /// The graph, the scope grid and the registry were printed with `serde_json` before this
    /// module was theirs: for what they hold the two agree byte for byte.
    #[test]
    fn strings_integers_and_named_keys_print_as_serde_json_prints_them() {
        let every_control: String = (0_u8..0x20).map(char::from).collect();
        let value = serde_json::json!([
            {
                "slug": "a-b",
                "number": "1.2",
                "text": format!("{every_control}\"\\/\u{7f}é\u{2028}😀"),
                "list": [[], {}, [1, -2, 9_007_199_254_740_992_u64], {"nested": {"deep": [true, false, null]}}],
                "count": 0,
            },
            [],
            {},
            "",
        ]);
        assert_eq!(
            pretty_json(&value),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }
}
