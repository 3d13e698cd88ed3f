//! JSON text that may hold lone surrogates, and values as error messages show them.
//!
//! The driver sends `\udcff`-style escapes that UTF-8 cannot hold (IMPLEMENTING.md, "Pitfalls").
//! They are read through `serde_json`'s byte strings (which keep them as WTF-8) and held in a
//! `serde_json::Value` as *marks*: the private-use code point `U+10D800 + (unit - 0xD800)`
//! stands for the lone code unit `unit`. Writing turns each mark back into its escape. A real
//! character in the marks' range in the input is refused (the case is reported as errored), so
//! no text is ever misread.

use std::fmt::Write as _;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

const MARK_BASE: u32 = 0x10_0000;
const FIRST_MARK: u32 = MARK_BASE + 0xD800;
const LAST_MARK: u32 = MARK_BASE + 0xDFFF;

/// The lone UTF-16 code unit a mark stands for.
fn marked(c: char) -> Option<u32> {
    let code = u32::from(c);
    (FIRST_MARK..=LAST_MARK)
        .contains(&code)
        .then(|| code - MARK_BASE)
}

/// Whether `text` holds a lone surrogate (so it is no valid text, I16, I17).
pub fn has_lone(text: &str) -> bool {
    text.chars().any(|c| marked(c).is_some())
}

/// `text` with each lone surrogate written as its `\udcff` escape (lower case, I17).
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match marked(c) {
            Some(unit) => {
                let _ = write!(out, "\\u{unit:04x}");
            }
            None => out.push(c),
        }
    }
    out
}

/// `text` with each lone surrogate replaced by U+FFFD (what a trace writes, I21).
pub fn replaced(text: &str) -> String {
    text.chars()
        .map(|c| if marked(c).is_some() { '\u{fffd}' } else { c })
        .collect()
}

/// A JSON string read as WTF-8 bytes.
struct Wtf8(Vec<u8>);

impl<'de> Deserialize<'de> for Wtf8 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl Visitor<'_> for Bytes {
            type Value = Wtf8;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Wtf8, E> {
                Ok(Wtf8(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Wtf8, E> {
                Ok(Wtf8(v))
            }
        }
        deserializer.deserialize_byte_buf(Bytes)
    }
}

impl Wtf8 {
    /// The text with its lone surrogates as marks; an error for a character that is a mark.
    fn into_text(self) -> Result<String, String> {
        let mut out = String::with_capacity(self.0.len());
        let mut rest = &self.0[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    push_checked(&mut out, valid)?;
                    return Ok(out);
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Every part up to here is valid UTF-8 by `valid_up_to`.
                    push_checked(&mut out, std::str::from_utf8(valid).unwrap_or_default())?;
                    // WTF-8 writes a lone surrogate as ED A0..BF xx.
                    let [0xED, b1 @ 0xA0..=0xBF, b2, ..] = *after else {
                        return Err("a string that is not WTF-8".to_owned());
                    };
                    let unit = 0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F);
                    out.extend(char::from_u32(MARK_BASE + unit));
                    rest = &after[3..];
                }
            }
        }
    }
}

fn push_checked(out: &mut String, text: &str) -> Result<(), String> {
    if let Some(c) = text.chars().find(|&c| marked(c).is_some()) {
        return Err(format!(
            "the testee cannot carry U+{:X}: it stands for a lone surrogate here",
            u32::from(c)
        ));
    }
    out.push_str(text);
    Ok(())
}

/// An object's members, each value still raw.
struct Members<'a>(Vec<(Wtf8, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Entries<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Members<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<Wtf8, &'a RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// An array's items, each still raw.
struct Items<'a>(Vec<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Items<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Seq<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Seq<'a> {
            type Value = Items<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Items<'a>, S::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<&'a RawValue>()? {
                    items.push(item);
                }
                Ok(Items(items))
            }
        }
        deserializer.deserialize_seq(Seq(std::marker::PhantomData))
    }
}

/// Reads one JSON text, keeping lone surrogates as marks.
pub fn parse(text: &str) -> Result<Value, String> {
    let raw: &RawValue = serde_json::from_str(text).map_err(|e| e.to_string())?;
    convert(raw)
}

fn convert(raw: &RawValue) -> Result<Value, String> {
    let text = raw.get();
    let failed = |e: serde_json::Error| e.to_string();
    match text.as_bytes().first() {
        Some(b'"') => Ok(Value::String(
            serde_json::from_str::<Wtf8>(text)
                .map_err(failed)?
                .into_text()?,
        )),
        Some(b'{') => {
            let members: Members = serde_json::from_str(text).map_err(failed)?;
            let mut map = Map::new();
            for (key, value) in members.0 {
                map.insert(key.into_text()?, convert(value)?);
            }
            Ok(Value::Object(map))
        }
        Some(b'[') => {
            let items: Items = serde_json::from_str(text).map_err(failed)?;
            items
                .0
                .into_iter()
                .map(convert)
                .collect::<Result<_, _>>()
                .map(Value::Array)
        }
        _ => serde_json::from_str(text).map_err(failed),
    }
}

/// One line of JSON: compact, every mark written back as its escape.
pub fn write(value: &Value) -> String {
    let text = value.to_string();
    if text.is_ascii() {
        text
    } else {
        // A mark appears only inside a string, where its escape is valid JSON.
        escaped(&text)
    }
}

/// A value as error messages show it (the notation every implementation shares, see
/// `ts-runner/src/shown.ts`): text quoted verbatim with its lone surrogates escaped, anything
/// else as Python's `repr` of the JSON value writes it.
pub fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => format!("'{}'", escaped(text)),
        other => notation(other),
    }
}

/// Python's `repr` of a JSON value.
pub fn notation(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => number_notation(n),
        Value::String(text) => quoted(text),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(notation).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", quoted(k), notation(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// Integers as integers (the driver writes integral floats as integers); other numbers as
/// Python writes a float (`1e-05`, `1.5e+16`, `0.25`).
fn number_notation(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let value = n.as_f64().unwrap_or(f64::NAN);
    if value.fract() == 0.0 && value.is_finite() {
        return format!("{value:.0}");
    }
    let exponent = value.abs().log10().floor();
    if !(-4.0..16.0).contains(&exponent) {
        let written = format!("{value:e}");
        let (mantissa, exp) = written.split_once('e').unwrap_or((&written, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{value}")
}

/// A string inside a list or dict, quoted as Python's `repr` quotes it.
fn quoted(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in text.chars() {
        let code = u32::from(c);
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ if c == quote => {
                out.push('\\');
                out.push(c);
            }
            _ if code < 0x20 || code == 0x7f => {
                let _ = write!(out, "\\x{code:02x}");
            }
            _ => match marked(c) {
                Some(unit) => {
                    let _ = write!(out, "\\u{unit:04x}");
                }
                None => out.push(c),
            },
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_round_trip_in_strings_and_keys() {
        let line = r#"{"a\udcffb":["\ud800","x\udfff",1,2.5,null,true],"n":"é😀"}"#;
        let value = parse(line).unwrap();
        let key = value.as_object().unwrap().keys().next().unwrap().clone();
        assert!(has_lone(&key));
        assert!(has_lone(value["a\u{10dcff}b"][0].as_str().unwrap()));
        assert!(!has_lone(value["n"].as_str().unwrap()));
        assert_eq!(write(&value), line);
    }

    #[test]
    fn a_pair_of_escapes_is_one_character() {
        let value = parse(r#""\ud83d\ude00""#).unwrap();
        assert_eq!(value, Value::String("😀".to_owned()));
    }

    #[test]
    fn a_real_mark_character_is_refused() {
        assert!(parse("\"\u{10dcff}\"").is_err());
    }

    #[test]
    fn messages_show_values_as_the_other_implementations_do() {
        let value = parse(r#"["a\udcff", 7, 0.5, 1e-05, true, null, {"k": "it's"}]"#).unwrap();
        assert_eq!(
            shown(&value),
            r#"['a\udcff', 7, 0.5, 1e-05, True, None, {'k': "it's"}]"#
        );
        assert_eq!(shown(&parse(r#""x\udcff""#).unwrap()), r"'x\udcff'");
        assert_eq!(replaced("a\u{10dcff}"), "a\u{fffd}");
    }
}
