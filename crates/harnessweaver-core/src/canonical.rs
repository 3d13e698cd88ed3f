//! The RFC 8785 (JSON Canonicalization Scheme) bytes of a value inside I-JSON, written straight
//! into a sink (the hash of a content identity, I27; pair of Python's `rfc8785` use in
//! `_pycore/identity.py`).
//!
//! `serde_json_canonicalizer` writes the same bytes (the tests compare the two on every value
//! they build) but takes about 9 µs for a small tool call, most of it per-key allocation; an
//! identity is computed on every emit of a bus with a scheme, so this writer keeps keys
//! borrowed and sorts them by their UTF-16 code units in place. What RFC 8785 leaves to
//! ECMAScript is done by libraries made for it: numbers by `ryu-js` (ECMAScript's
//! `Number.prototype.toString`), strings by `serde_json`, whose escapes are the ones JSON
//! requires and no others, as RFC 8785 §3.2.2.2 asks.

use std::io;

use serde_json::{Number, Value};

/// Writes the canonical form of `value`, which must be inside I-JSON (`identity::in_domain`):
/// an integer beyond 2^53 − 1 would be written exactly, where RFC 8785 has no form for it.
pub fn write<W: io::Write>(value: &Value, out: &mut W) -> io::Result<()> {
    match value {
        Value::Null => out.write_all(b"null"),
        Value::Bool(true) => out.write_all(b"true"),
        Value::Bool(false) => out.write_all(b"false"),
        Value::Number(number) => write_number(number, out),
        Value::String(text) => serde_json::to_writer(&mut *out, text).map_err(io::Error::other),
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.write_all(b",")?;
                }
                write(item, out)?;
            }
            out.write_all(b"]")
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // RFC 8785 §3.2.3: keys in the order of their UTF-16 code units, which differs from
            // code point (and UTF-8) order once a key holds a character above U+FFFF.
            entries.sort_unstable_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.write_all(b"{")?;
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key).map_err(io::Error::other)?;
                out.write_all(b":")?;
                write(item, out)?;
            }
            out.write_all(b"}")
        }
    }
}

/// An integer as its digits; any other number as ECMAScript writes it (`1.0` is `1`, `-0.0`
/// is `0`, `1e-7` stays `1e-7`).
fn write_number<W: io::Write>(number: &Number, out: &mut W) -> io::Result<()> {
    if let Some(n) = number.as_i64() {
        return write!(out, "{n}");
    }
    if let Some(n) = number.as_u64() {
        return write!(out, "{n}");
    }
    let float = number.as_f64().unwrap_or(f64::NAN);
    if !float.is_finite() {
        // A serde_json number is always finite; refusing is the safe answer were it not.
        return Err(io::Error::other(
            "a number that is not finite has no canonical form",
        ));
    }
    out.write_all(ryu_js::Buffer::new().format_finite(float).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(value: &Value) -> String {
        let mut bytes = Vec::new();
        write(value, &mut bytes).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    /// Values at every edge the writer has: numbers ECMAScript writes in each of its forms,
    /// every escape, keys whose UTF-16 order is not their code point order, nesting.
    fn values() -> Vec<Value> {
        let floats = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1e-7,
            1e-6,
            123.456,
            1e15,
            1e20,
            2.5e-9,
            5e-324,
            9_007_199_254_740_991.0,
            f64::MAX,
            4.35,
            0.000_001_5,
        ];
        let mut out: Vec<Value> = floats.iter().map(|f| json!(f)).collect();
        out.extend([
            json!(0),
            json!(-9_007_199_254_740_991_i64),
            json!(9_007_199_254_740_991_u64),
            json!(""),
            json!("\u{0}\u{1}\u{7}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}\"\\/ \u{2028}\u{2029}é\u{1f600}"),
            json!({"\u{e000}": 1, "\u{1f600}": 2, "a": 3, "": 4, "aa": 5, "\u{ff61}": 6, "b": null}),
            json!([[], {}, [null, true, false], {"z": {"y": [1.5, "x"]}, "a": []}]),
        ]);
        out
    }

    #[test]
    fn the_writer_gives_the_library_s_bytes_on_every_edge() {
        for value in values() {
            let expected = serde_json_canonicalizer::to_string(&value).unwrap();
            assert_eq!(ours(&value), expected, "{value}");
            let nested = json!({"k": value, "list": [value.clone(), value.clone()]});
            let expected = serde_json_canonicalizer::to_string(&nested).unwrap();
            assert_eq!(ours(&nested), expected, "{nested}");
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+1F600 is D83D DE00 in UTF-16: before U+E000, though after it in code points.
        let value = json!({"\u{e000}": 1, "\u{1f600}": 2});
        assert_eq!(ours(&value), "{\"\u{1f600}\":2,\"\u{e000}\":1}");
    }
}
