//! The Cedar request of an event (ruling I38): principal from the envelope's attributes,
//! action from the hook point, resource from the tool or model, and the context record.
//!
//! JSON becomes Cedar values by one rule in every implementation: string → String, bool →
//! Bool, an integral number within ±(2^53 − 1) → Long, `null` left out, array → Set, object →
//! Record. Anything else (another number, a reserved record key, nesting deeper than
//! [`MAX_DEPTH`]) means the request cannot be built: [`RequestError`], whose message names the
//! path and never the value (the arguments may hold secrets).

use std::str::FromStr;

use cedar_policy::{Context, EntityId, EntityTypeName, EntityUid, Request, RestrictedExpression};
use serde_json::Value;

use crate::events::Event;
use crate::text::has_lone;

/// The largest integer every implementation holds exactly (a JSON number as an IEEE double).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
/// How deep a set or record may nest: the converted value itself (`arguments`, `attributes`)
/// is level 1; a set or record at level 33 cannot be built (scalars are never counted).
pub const MAX_DEPTH: usize = 32;
/// Keys Cedar's JSON forms give a meaning of their own: never taken as plain record keys.
const RESERVED_KEYS: [&str; 3] = ["__entity", "__extn", "__expr"];

/// The request cannot be built: raised as `CedarRequestError`.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestError(pub String);

/// The Cedar value of JSON `value` at `path` and nesting level `depth` (the converted root
/// is level 1); `None` for `null` (left out of its record or set).
pub fn to_cedar_value(
    value: &Value,
    path: &str,
    depth: usize,
) -> Result<Option<RestrictedExpression>, RequestError> {
    if depth > MAX_DEPTH && (value.is_array() || value.is_object()) {
        return Err(RequestError(format!(
            "{path}: nesting deeper than {MAX_DEPTH} levels cannot be a Cedar value (I38)"
        )));
    }
    let converted = match value {
        Value::Null => return Ok(None),
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::String(text) => RestrictedExpression::new_string(plain(text, path)?.to_owned()),
        Value::Number(_) => RestrictedExpression::new_long(long(value).ok_or_else(|| {
            RequestError(format!(
                "{path}: a number that is no integer within ±(2^53 - 1) cannot be a Cedar Long (I38)"
            ))
        })?),
        Value::Array(items) => {
            let mut set = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                set.extend(to_cedar_value(item, &format!("{path}.{i}"), depth + 1)?);
            }
            RestrictedExpression::new_set(set)
        }
        Value::Object(map) => {
            let mut fields = Vec::with_capacity(map.len());
            for (key, item) in map {
                let here = format!("{path}.{key}");
                if RESERVED_KEYS.contains(&key.as_str()) {
                    return Err(RequestError(format!(
                        "{here}: the key {key} is reserved by Cedar's JSON forms (I38)"
                    )));
                }
                let key = plain(key, &here)?;
                if let Some(item) = to_cedar_value(item, &here, depth + 1)? {
                    fields.push((key.to_owned(), item));
                }
            }
            // JSON objects hold each key once, so Cedar finds no duplicate here.
            RestrictedExpression::new_record(fields)
                .map_err(|e| RequestError(format!("{path}: {e} (I38)")))?
        }
    };
    Ok(Some(converted))
}

/// An integral JSON number within ±(2^53 − 1) (`12`, `12.0` and `1e1` alike), as an `i64`.
pub fn long(value: &Value) -> Option<i64> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(n) = n.as_i64() {
        return (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER)
            .contains(&n)
            .then_some(n);
    }
    let f = n.as_f64()?;
    // Within the bound every integral double converts exactly (a u64 past i64 is far out).
    #[allow(clippy::cast_precision_loss)]
    let within = f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64;
    #[allow(clippy::cast_possible_truncation)]
    within.then_some(f as i64)
}

/// Text that holds no lone surrogate (no valid text, so no Cedar string).
fn plain<'a>(text: &'a str, path: &str) -> Result<&'a str, RequestError> {
    if has_lone(text) {
        return Err(RequestError(format!(
            "{path}: text with a lone surrogate cannot be a Cedar string (I38)"
        )));
    }
    Ok(text)
}

/// `NS::name`, or `name` without a namespace.
fn type_name(namespace: Option<&str>, name: &str) -> Result<EntityTypeName, RequestError> {
    let full = match namespace {
        Some(ns) => format!("{ns}::{name}"),
        None => name.to_owned(),
    };
    // The namespace was checked at load, so this holds; never a panic all the same.
    EntityTypeName::from_str(&full).map_err(|_| {
        RequestError(format!(
            "{name}: no Cedar entity type in this namespace (I38)"
        ))
    })
}

/// An entity in Cedar's `{type, id}` form: any text is an id, never parsed as Cedar text.
fn entity(
    namespace: Option<&str>,
    kind: &str,
    id: &str,
    path: &str,
) -> Result<EntityUid, RequestError> {
    Ok(EntityUid::from_type_name_and_id(
        type_name(namespace, kind)?,
        EntityId::new(plain(id, path)?),
    ))
}

/// The text at `pointer` in the event, `""` when absent.
fn text_at<'a>(data: &'a Value, pointer: &str) -> &'a str {
    data.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The Cedar request of `event` at hook point `hook`, with the envelope's `attributes`.
pub fn cedar_request(
    hook: &str,
    event: &Event,
    attributes: Option<&Value>,
    namespace: Option<&str>,
) -> Result<Request, RequestError> {
    let data = &*event.data;
    let attribute = |key: &str| attributes.and_then(|a| a.get(key)).and_then(Value::as_str);
    let principal = match (attribute("user"), attribute("agent")) {
        (Some(user), _) => entity(namespace, "User", user, "attributes.user")?,
        (None, Some(agent)) => entity(namespace, "Agent", agent, "attributes.agent")?,
        (None, None) => entity(namespace, "Agent", "anonymous", "principal")?,
    };
    let action = entity(namespace, "Action", hook, "hook")?;
    let step = long(data.get("step").unwrap_or(&Value::Null))
        .ok_or_else(|| RequestError("step: no integer within ±(2^53 - 1) (I38)".to_owned()))?;
    let attributes = match attributes {
        Some(value @ Value::Object(_)) => value.clone(),
        _ => Value::Object(serde_json::Map::new()),
    };
    let mut context = vec![
        (
            "hook".to_owned(),
            RestrictedExpression::new_string(hook.to_owned()),
        ),
        ("step".to_owned(), RestrictedExpression::new_long(step)),
    ];
    let mut field = |key: &str, value: Option<RestrictedExpression>| {
        if let Some(value) = value {
            context.push((key.to_owned(), value));
        }
    };
    field("attributes", to_cedar_value(&attributes, "attributes", 1)?);
    let resource = match hook {
        "tool.before" | "tool.after" => {
            let mut tool = text_at(data, "/call/name");
            if tool.is_empty() {
                tool = text_at(data, "/tool/name");
            }
            let resource = entity(namespace, "Tool", tool, "tool")?;
            field(
                "tool",
                Some(RestrictedExpression::new_string(tool.to_owned())),
            );
            let arguments = data.pointer("/call/arguments").unwrap_or(&Value::Null);
            field("arguments", to_cedar_value(arguments, "arguments", 1)?);
            if hook == "tool.after" {
                let is_error = data.pointer("/result/is_error").and_then(Value::as_bool);
                field(
                    "is_error",
                    Some(RestrictedExpression::new_bool(is_error.unwrap_or(false))),
                );
            }
            resource
        }
        "model.before" => {
            let model = text_at(data, "/request/model");
            let resource = entity(namespace, "Model", model, "model")?;
            field(
                "model",
                Some(RestrictedExpression::new_string(model.to_owned())),
            );
            let offered = data.pointer("/request/tools").and_then(Value::as_array);
            let names = offered
                .into_iter()
                .flatten()
                .map(|tool| tool.get("name").cloned().unwrap_or(Value::Null))
                .collect();
            field("tools", to_cedar_value(&Value::Array(names), "tools", 1)?);
            let count = data
                .pointer("/request/messages")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            field(
                "messages",
                Some(RestrictedExpression::new_long(
                    i64::try_from(count).unwrap_or(i64::MAX),
                )),
            );
            resource
        }
        other => {
            return Err(RequestError(format!(
                "hook: {other} is none of tool.before, tool.after, model.before (I38)"
            )))
        }
    };
    let context =
        Context::from_pairs(context).map_err(|e| RequestError(format!("context: {e} (I38)")))?;
    // Requests are not validated against the schema (I38): no schema here.
    Request::new(principal, action, resource, context, None)
        .map_err(|e| RequestError(format!("request: {e} (I38)")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn converted(value: &Value) -> Result<Option<RestrictedExpression>, RequestError> {
        to_cedar_value(value, "arguments", 1)
    }

    /// A Cedar value written in Cedar.
    fn cedar(text: &str) -> RestrictedExpression {
        RestrictedExpression::from_str(text).unwrap()
    }

    fn field(request: &Request, key: &str) -> Option<RestrictedExpression> {
        let context = request.context().unwrap().clone();
        context.into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn refused(value: &Value) -> String {
        converted(value).expect_err("cannot be built").0
    }

    #[test]
    fn integral_numbers_within_the_safe_range_are_longs_however_written() {
        for text in [
            "12",
            "12.0",
            "1.2e1",
            "-0.0",
            "9007199254740991",
            "-9007199254740991",
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let expected = long(&value).expect(text);
            assert_eq!(
                converted(&value).unwrap(),
                Some(RestrictedExpression::new_long(expected)),
                "{text}"
            );
        }
        assert_eq!(long(&json!(1e3)), Some(1000));
        assert_eq!(long(&json!(-0.0)), Some(0));
    }

    #[test]
    fn other_numbers_cannot_be_built_and_the_message_names_the_path_not_the_value() {
        for value in [
            json!(1.5),
            json!(9_007_199_254_740_992_i64),
            json!(-9_007_199_254_740_992_i64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e300),
        ] {
            let message = refused(&json!({"secret": value}));
            assert!(message.starts_with("arguments.secret: "), "{message}");
            assert!(!message.contains(&value.to_string()), "{message}");
        }
    }

    #[test]
    fn null_is_left_out_of_its_record_and_its_set() {
        let value = json!({"a": null, "b": [1, null, "x"], "c": {"d": null}});
        let expected = cedar(r#"{"b": [1, "x"], "c": {}}"#);
        assert_eq!(converted(&value).unwrap(), Some(expected));
        assert_eq!(converted(&Value::Null).unwrap(), None);
    }

    #[test]
    fn reserved_keys_cannot_be_built_at_any_depth() {
        for key in RESERVED_KEYS {
            let message = refused(&json!({"outer": [{key: {"type": "User", "id": "root"}}]}));
            assert!(
                message.starts_with(&format!("arguments.outer.0.{key}: ")),
                "{message}"
            );
        }
        // Only the exact keys: a key that merely starts like one is plain data.
        assert!(converted(&json!({"__entity_like": 1})).is_ok());
    }

    #[test]
    fn nesting_is_refused_only_past_the_limit() {
        let nested =
            |levels: usize| (0..levels).fold(json!("leaf"), |inner, _| json!({"k": inner}));
        // The root is level 1: 32 nested records (a scalar inside the last) load, 33 do not.
        assert!(converted(&nested(MAX_DEPTH)).is_ok());
        assert!(refused(&nested(MAX_DEPTH + 1)).contains("nesting deeper than 32"));
        let lists = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!([inner]));
        assert!(converted(&lists(MAX_DEPTH)).is_ok());
        assert!(converted(&lists(MAX_DEPTH + 1)).is_err());
    }

    #[test]
    fn a_lone_surrogate_is_no_cedar_string() {
        let marked = char::from_u32(0x10_0000 + 0xDCFF).unwrap();
        let message = refused(&json!({"p": format!("a{marked}")}));
        assert!(message.starts_with("arguments.p: "), "{message}");
    }

    fn event(type_name: &str, data: Value) -> Event {
        Event {
            type_name: Arc::from(type_name),
            data: Arc::new(data),
        }
    }

    fn tool_call(call_name: &str, arguments: &Value) -> Event {
        event(
            "ToolCallEvent",
            json!({"step": 3, "tool": {"name": "spec_name"}, "call": {"name": call_name, "arguments": arguments}}),
        )
    }

    #[test]
    fn the_principal_is_the_user_then_the_agent_then_anonymous() {
        let e = tool_call("refund", &json!({}));
        let principal = |attributes: Value| {
            cedar_request("tool.before", &e, Some(&attributes), None)
                .unwrap()
                .principal()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            principal(json!({"user": "alice", "agent": "bot"})),
            r#"User::"alice""#
        );
        assert_eq!(
            principal(json!({"user": 5, "agent": "bot"})),
            r#"Agent::"bot""#
        );
        assert_eq!(principal(json!({})), r#"Agent::"anonymous""#);
        let none = cedar_request("tool.before", &e, None, Some("Acme::Corp")).unwrap();
        assert_eq!(
            none.principal().unwrap().to_string(),
            r#"Acme::Corp::Agent::"anonymous""#
        );
        assert_eq!(
            none.action().unwrap().to_string(),
            r#"Acme::Corp::Action::"tool.before""#
        );
    }

    #[test]
    fn any_text_is_an_entity_id_never_parsed_as_cedar() {
        let e = tool_call("x\" || true || \"", &json!({}));
        let request = cedar_request("tool.before", &e, None, None).unwrap();
        let resource = request.resource().unwrap();
        assert_eq!(resource.id().unescaped(), "x\" || true || \"");
    }

    #[test]
    fn the_tool_is_the_calls_name_or_the_specs_when_empty() {
        let named =
            cedar_request("tool.before", &tool_call("refund", &json!({})), None, None).unwrap();
        assert_eq!(named.resource().unwrap().to_string(), r#"Tool::"refund""#);
        let empty = cedar_request("tool.before", &tool_call("", &json!({})), None, None).unwrap();
        assert_eq!(
            empty.resource().unwrap().to_string(),
            r#"Tool::"spec_name""#
        );
        let context = empty.context().unwrap().clone();
        let keys: std::collections::BTreeSet<String> =
            context.into_iter().map(|(k, _)| k).collect();
        let expected = ["arguments", "attributes", "hook", "step", "tool"];
        assert_eq!(keys, expected.iter().map(|k| (*k).to_owned()).collect());
        assert_eq!(field(&empty, "tool"), Some(cedar(r#""spec_name""#)));
        assert_eq!(field(&empty, "step"), Some(cedar("3")));
        assert_eq!(field(&empty, "hook"), Some(cedar(r#""tool.before""#)));
        assert_eq!(field(&empty, "attributes"), Some(cedar("{}")));
    }

    #[test]
    fn each_hook_adds_its_own_context_fields() {
        let after = event(
            "ToolResultEvent",
            json!({"step": 1, "tool": {"name": "t"}, "call": {"name": "t", "arguments": {}}, "result": {"is_error": true}}),
        );
        let request = cedar_request("tool.after", &after, None, None).unwrap();
        assert_eq!(field(&request, "is_error"), Some(cedar("true")));
        let model = event(
            "ModelRequestEvent",
            json!({"step": 2, "request": {"model": "m-1", "messages": [{}, {}], "tools": [{"name": "a"}, {"name": "b"}]}}),
        );
        let request = cedar_request("model.before", &model, None, None).unwrap();
        assert_eq!(request.resource().unwrap().to_string(), r#"Model::"m-1""#);
        assert_eq!(field(&request, "messages"), Some(cedar("2")));
        assert_eq!(field(&request, "model"), Some(cedar(r#""m-1""#)));
        assert_eq!(field(&request, "tools"), Some(cedar(r#"["a", "b"]"#)));
        assert_eq!(field(&request, "arguments"), None);
    }

    #[test]
    fn arguments_that_cannot_be_built_fail_the_request() {
        let e = tool_call("t", &json!({"amount": 0.5}));
        let error = cedar_request("tool.before", &e, None, None).unwrap_err();
        assert!(error.0.starts_with("arguments.amount: "), "{}", error.0);
        let attributes = json!({"user": "u", "__extn": {}});
        let error = cedar_request(
            "tool.before",
            &tool_call("t", &json!({})),
            Some(&attributes),
            None,
        )
        .unwrap_err();
        assert!(error.0.starts_with("attributes.__extn: "), "{}", error.0);
    }
}
