//! Declarations and registration overrides from a case's JSON (INTERPRETING.md §2, §5).
//!
//! Values of the wrong JSON type are reported here, field by field in the check order of I4,
//! exactly as the Python binding reports a Python value of the wrong type; the values
//! themselves are judged by the core. A string holding a lone surrogate is no valid text: the
//! error of its field, the string shown with `\udcff` escapes (I17).

use harnessweaver_core::catalogue::hook_id;
use harnessweaver_core::declaration::{
    apply_overrides, declare, validate_name, with_mode_error, Declaration, DeclarationInput,
    Overrides, TimeoutInput,
};
use harnessweaver_core::error::invalid_value;
use harnessweaver_core::layer::{declare_in_layer, Layer};
use harnessweaver_core::matcher::{MatchText, MatchValue};
use harnessweaver_core::{Band, Error, ErrorKind, FailMode};
use serde_json::Value;

use crate::text::{has_lone, notation, shown};

/// The value of `key` in `object` unless absent or `null` (which give nothing, §2).
fn given<'a>(object: &'a Value, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|v| !v.is_null())
}

/// Text of a string-typed field, or the error of `kind` for anything else.
pub fn text<'a>(value: &'a Value, kind: ErrorKind, field: &str) -> Result<&'a str, Error> {
    match value {
        Value::String(s) if !has_lone(s) => Ok(s),
        Value::String(_) => Err(invalid_value(kind, field, &shown(value))),
        other => Err(invalid_value(kind, field, &notation(other))),
    }
}

fn name_text(value: &Value) -> Result<&str, Error> {
    let name = text(value, ErrorKind::InvalidName, "name")?;
    validate_name(name)?;
    Ok(name)
}

fn band_text(value: &Value) -> Result<&str, Error> {
    let band = text(value, ErrorKind::InvalidBand, "band")?;
    Band::parse(band)?;
    Ok(band)
}

fn fail_mode_text(value: Option<&Value>) -> Result<Option<&str>, Error> {
    let Some(value) = value else { return Ok(None) };
    let mode = text(value, ErrorKind::InvalidFailMode, "fail_mode")?;
    FailMode::parse(mode)?;
    Ok(Some(mode))
}

/// The hook names of `hooks`: a list of strings, every item checked to be a string before any
/// is looked up (I4, I17).
fn hook_names(value: &Value) -> Result<Vec<&str>, Error> {
    let not_a_list = || invalid_value(ErrorKind::InvalidHooks, "hooks", &notation(value));
    let Value::Array(items) = value else {
        return Err(not_a_list());
    };
    if items.iter().any(|item| !item.is_string()) {
        return Err(not_a_list());
    }
    if items.is_empty() {
        return Err(invalid_value(ErrorKind::InvalidHooks, "hooks", "[]"));
    }
    let mut names = Vec::with_capacity(items.len());
    for item in items {
        let name = text(item, ErrorKind::UnknownHook, "hook")?;
        hook_id(name)?;
        names.push(name);
    }
    Ok(names)
}

/// A timeout: text with a unit, or seconds as a number (not a boolean, I17).
fn timeout_input(value: &Value) -> Result<TimeoutInput<'_>, Error> {
    let wrong = || invalid_value(ErrorKind::InvalidDuration, "timeout", &notation(value));
    let input = match value {
        Value::String(_) => TimeoutInput::Text(text(value, ErrorKind::InvalidDuration, "timeout")?),
        Value::Number(n) => TimeoutInput::Seconds(n.as_f64().ok_or_else(wrong)?),
        _ => return Err(wrong()),
    };
    input.to_nanos().map_err(|e| match input {
        // A number is shown as Python shows it.
        TimeoutInput::Seconds(_) => wrong(),
        TimeoutInput::Text(_) => e,
    })?;
    Ok(input)
}

/// A `match` text: valid text, or anything else as messages show it (I22).
fn match_text(value: &Value) -> MatchText<'_> {
    match value {
        Value::String(s) if !has_lone(s) => MatchText::Text(s),
        other => MatchText::Bad(shown(other)),
    }
}

type MatchEntries<'a> = Vec<(MatchText<'a>, MatchValue<'a>)>;

/// A `match` argument for the core: `None` when absent or `null`; a value that is not an
/// object is `invalid_match` here; the entries are judged by the core.
fn match_arg(value: Option<&Value>) -> Result<Option<MatchEntries<'_>>, Error> {
    let Some(value) = value else { return Ok(None) };
    let Value::Object(map) = value else {
        return Err(invalid_value(
            ErrorKind::InvalidMatch,
            "match",
            &notation(value),
        ));
    };
    let entries = map
        .iter()
        .map(|(key, item)| {
            let key = if has_lone(key) {
                MatchText::Bad(shown(&Value::String(key.clone())))
            } else {
                MatchText::Text(key.as_str())
            };
            let item = match item {
                Value::String(_) => MatchValue::One(match_text(item)),
                Value::Array(items) => MatchValue::List(items.iter().map(match_text).collect()),
                other => MatchValue::Other(notation(other)),
            };
            (key, item)
        })
        .collect();
    Ok(Some(entries))
}

/// A `mode` (I25): its error, if any, is reported at mode's place in I4 (after match).
fn mode_arg(value: Option<&Value>) -> Result<Option<&str>, Error> {
    value
        .map(|v| text(v, ErrorKind::InvalidMode, "mode"))
        .transpose()
}

/// `@hw.middleware(...)` of a case's declaration, checked in the order of I4. A missing name
/// is the function's own, `behaviour`, as in the Python testee.
pub fn declaration(decl: &Value) -> Result<Declaration, Error> {
    let name =
        name_text(given(decl, "name").unwrap_or(&Value::String("behaviour".into())))?.to_owned();
    let hooks = hook_names(decl.get("hooks").unwrap_or(&Value::Null))?;
    let band = given(decl, "band").map(band_text).transpose()?;
    let fail_mode = fail_mode_text(given(decl, "fail_mode"))?;
    // A missing fail mode is reported before the timeout is looked at (I4).
    let timeout = match (fail_mode, given(decl, "timeout")) {
        (Some(_), Some(t)) => Some(timeout_input(t)?),
        _ => None,
    };
    let entries = match_arg(given(decl, "match"))?;
    let mode = mode_arg(given(decl, "mode"));
    let input = DeclarationInput {
        name: &name,
        hooks: &hooks,
        band,
        fail_mode,
        timeout,
        matcher: entries.as_deref(),
        mode: mode.as_ref().ok().copied().flatten(),
    };
    with_mode_error(declare(&input), mode.map(drop), |e| e)
}

/// The layer of a spec item (I13): `None` for a direct registration.
pub fn layer(value: Option<&Value>) -> Result<Option<Layer>, Error> {
    value
        .map(|v| Layer::parse(text(v, ErrorKind::UnknownLayer, "layer")?))
        .transpose()
}

/// The registration overrides of I10, or a spec item's keys in `layer` (I13), checked in the
/// order of I4 (`null` keeps the declared value).
pub fn overridden(
    decl: &Declaration,
    layer: Option<Layer>,
    keys: &Value,
) -> Result<Declaration, Error> {
    let name = given(keys, "name").map(name_text).transpose()?;
    let hooks = given(keys, "hooks").map(hook_names).transpose()?;
    if let Some(hooks) = &hooks {
        // Widening is judged before any later field (I4).
        let narrowing = Overrides {
            name,
            hooks: Some(hooks),
            ..Overrides::default()
        };
        apply_overrides(decl, &narrowing)?;
    }
    let band = given(keys, "band").map(band_text).transpose()?;
    if let (Some(layer), Some(band)) = (layer, band) {
        // Ruling 16 / S8 at the band's place in the order, before fail_mode and timeout.
        layer.allow(name.unwrap_or(&decl.name), Band::parse(band)?)?;
    }
    let fail_mode = fail_mode_text(given(keys, "fail_mode"))?;
    let timeout = given(keys, "timeout").map(timeout_input).transpose()?;
    let entries = match_arg(given(keys, "match"))?;
    let mode = mode_arg(given(keys, "mode"));
    let overrides = Overrides {
        name,
        hooks: hooks.as_deref(),
        band,
        fail_mode,
        timeout,
        matcher: entries.as_deref(),
        mode: mode.as_ref().ok().copied().flatten(),
    };
    let result = match layer {
        Some(layer) => declare_in_layer(decl, layer, &overrides),
        None => apply_overrides(decl, &overrides),
    };
    with_mode_error(result, mode.map(drop), |e| e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    fn refused(decl: &str) -> Error {
        declaration(&parse(decl).unwrap()).unwrap_err()
    }

    #[test]
    fn values_of_the_wrong_type_are_shown_as_the_other_implementations_show_them() {
        let e = refused(r#"{"name":"g","hooks":"tool.before","fail_mode":"closed"}"#);
        assert_eq!(e.kind, ErrorKind::InvalidHooks);
        assert!(e.message.contains("'tool.before'"), "{}", e.message);
        let e =
            refused(r#"{"name":"g","hooks":["tool.before"],"fail_mode":"closed","timeout":true}"#);
        assert_eq!(e.kind, ErrorKind::InvalidDuration);
        assert!(e.message.contains("True"), "{}", e.message);
    }

    #[test]
    fn a_lone_surrogate_is_no_valid_text_and_is_shown_escaped() {
        let e = refused(r#"{"name":"g\udcff","hooks":["tool.before"],"fail_mode":"closed"}"#);
        assert_eq!(e.kind, ErrorKind::InvalidName);
        assert!(e.message.contains(r"'g\udcff'"), "{}", e.message);
        let e = refused(r#"{"name":"g","hooks":["tool.before\ud800"],"fail_mode":"closed"}"#);
        assert_eq!(e.kind, ErrorKind::UnknownHook);
        assert!(e.message.contains(r"\ud800"), "{}", e.message);
    }

    #[test]
    fn every_item_of_hooks_is_a_string_before_any_is_looked_up() {
        let e = refused(r#"{"name":"g","hooks":["nope",5],"fail_mode":"closed"}"#);
        assert_eq!(e.kind, ErrorKind::InvalidHooks);
    }

    #[test]
    fn null_is_absence_and_a_missing_fail_mode_comes_before_the_timeout() {
        let ok = r#"{"name":"g","hooks":["tool.before"],"fail_mode":"open","band":null,"timeout":null,"match":null,"mode":null}"#;
        let decl = declaration(&parse(ok).unwrap()).unwrap();
        assert_eq!(decl.band, Band::App);
        assert_eq!(decl.timeout_ns, None);
        let e =
            refused(r#"{"name":"g","hooks":["tool.before"],"fail_mode":null,"timeout":"nope"}"#);
        assert_eq!(e.kind, ErrorKind::MissingFailMode);
    }

    #[test]
    fn a_mode_that_is_no_text_is_reported_after_match_and_before_r2() {
        let e = refused(
            r#"{"name":"g","hooks":["tool.before"],"fail_mode":"open","band":"baseline","mode":5}"#,
        );
        assert_eq!(e.kind, ErrorKind::InvalidMode);
        let e = refused(
            r#"{"name":"g","hooks":["tool.before"],"fail_mode":"open","match":[],"mode":5}"#,
        );
        assert_eq!(e.kind, ErrorKind::InvalidMatch);
    }
}
