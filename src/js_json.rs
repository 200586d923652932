//! `JSON.stringify(value, null, 2)` as the reference's JavaScript prints it: the one emulation,
//! for every file whose bytes must match what the reference writes (D2): `stage-graph.json`,
//! `scope-grid.json`, the intent registry `intents.json`, and the worker JSON in a detail file.
//!
//! The output has two-space indentation, `[]` and `{}` for empty containers, object keys in
//! JavaScript's order (array-index keys ascending, then the rest as parsed), numbers as
//! `Number.prototype.toString` prints them, and strings escaped as JavaScript escapes them.
//! For values that only hold strings, booleans, safe integers and keys that are not array
//! indices, this is also what `serde_json::to_string_pretty` prints.
//!
//! Must not: import anything from this crate, or add a trailing newline (callers decide).

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// `JSON.stringify(value, null, 2)`.
pub fn pretty_json(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, 0);
    out
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&javascript_number(number)),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => write_array(out, items, depth),
        Value::Object(entries) => write_object(out, entries, depth),
    }
}

fn write_array(out: &mut String, items: &[Value], depth: usize) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        push_indent(out, depth + 1);
        write_value(out, item, depth + 1);
    }
    out.push('\n');
    push_indent(out, depth);
    out.push(']');
}

fn write_object(out: &mut String, entries: &Map<String, Value>, depth: usize) {
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push('{');
    let mut write_entry = |index: usize, key: &str, value: &Value| {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        push_indent(out, depth + 1);
        write_string(out, key);
        out.push_str(": ");
        write_value(out, value, depth + 1);
    };
    // Almost no object has an array-index key; those keep their order without a copy.
    if entries.keys().any(|key| array_index(key).is_some()) {
        for (index, (key, value)) in javascript_key_order(entries).into_iter().enumerate() {
            write_entry(index, key, value);
        }
    } else {
        for (index, (key, value)) in entries.iter().enumerate() {
            write_entry(index, key, value);
        }
    }
    out.push('\n');
    push_indent(out, depth);
    out.push('}');
}

fn push_indent(out: &mut String, depth: usize) {
    out.extend(std::iter::repeat_n(' ', depth * 2));
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

fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|index| *index != u32::MAX)
}

/// A JSON string as JavaScript writes it: `"` and `\` escaped, the control characters below
/// U+0020 as `\b \f \n \r \t` or `\u00xx`, everything else (U+007F, U+2028, non-ASCII) as is.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut unescaped_from = 0;
    // Every byte that needs escaping is ASCII, so each slice boundary is a char boundary.
    for (at, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            control if control < 0x20 => "",
            _ => continue,
        };
        out.push_str(&text[unescaped_from..at]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        unescaped_from = at + 1;
    }
    out.push_str(&text[unescaped_from..]);
    out.push('"');
}

/// A JSON number as JavaScript prints it: integers exactly while they are safe (|n| ≤ 2^53),
/// anything else as the double it parses to, in `Number.prototype.toString` form.
fn javascript_number(number: &Number) -> String {
    const SAFE: u64 = 1 << 53;
    if let Some(unsigned) = number.as_u64().filter(|n| *n <= SAFE) {
        return unsigned.to_string();
    }
    if let Some(signed) = number.as_i64().filter(|n| n.unsigned_abs() <= SAFE) {
        return signed.to_string();
    }
    javascript_double(number.as_f64().unwrap_or(f64::NAN))
}

/// ECMAScript `Number::toString(10)`: the shortest round-trip digits, placed as plain decimals
/// when the decimal point falls within 21 places left of them or 6 places right, and in
/// `d.ddde±x` form otherwise.
fn javascript_double(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    // Rust's shortest form has the right number of digits, but where several digit strings of
    // that length round-trip it may not pick the one closest to the value, as ECMAScript
    // requires; formatting to exactly that many digits, which rounds correctly, does.
    let (shortest, _) = scientific_digits(&format!("{:e}", value.abs()));
    let precision = shortest.len().saturating_sub(1);
    let (digits, exponent) = scientific_digits(&format!("{:.precision$e}", value.abs()));
    let sign = if value < 0.0 { "-" } else { "" };
    format!("{sign}{}", place_decimal_point(&digits, exponent))
}

/// The significant digits and the decimal exponent of Rust's `{:e}` form (`1.2345e-7`).
fn scientific_digits(scientific: &str) -> (String, i64) {
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let digits = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse().unwrap_or(0))
}

/// `digits` (d₁d₂…dₖ, no leading zero) times 10^(`exponent` − k + 1), written as JavaScript does.
fn place_decimal_point(digits: &str, exponent: i64) -> String {
    let n_digits = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let point = exponent + 1;
    let count = |n: i64| usize::try_from(n).unwrap_or(0);
    if n_digits <= point && point <= 21 {
        format!("{digits}{}", "0".repeat(count(point - n_digits)))
    } else if 0 < point && point <= 21 {
        let (whole, fraction) = digits.split_at(count(point));
        format!("{whole}.{fraction}")
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat(count(-point)))
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{fraction}e{exponent_sign}{}", exponent.abs())
    }
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
