//! Events as JSON values, checked and completed from `catalogue.json` (INTERPRETING.md §6.3).
//!
//! An event is its type's name and its JSON form with every field present (defaults filled
//! in). Events are never changed in place (I18): a modification is a new event.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The catalogue shipped with this testee, for when the driver names no corpus.
const BUILT_IN: &str = include_str!("../../../conformance/catalogue.json");

/// One event: the name of its type and its complete JSON form.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub type_name: Arc<str>,
    pub data: Arc<Value>,
}

/// The hook points, event types and samples of the catalogue.
#[derive(Debug)]
pub struct Catalogue {
    /// Hook point name to its event type's name, in catalogue order.
    pub hooks: Vec<(String, Arc<str>)>,
    types: Map<String, Value>,
    samples: HashMap<String, Event>,
}

impl Catalogue {
    /// The corpus's catalogue (`$HARNESSWEAVER_CORPUS/catalogue.json`) or the built-in copy.
    pub fn load() -> Result<Catalogue, String> {
        let text = match std::env::var_os("HARNESSWEAVER_CORPUS") {
            Some(dir) => std::fs::read_to_string(std::path::Path::new(&dir).join("catalogue.json"))
                .unwrap_or_else(|_| BUILT_IN.to_owned()),
            None => BUILT_IN.to_owned(),
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let mut catalogue = Catalogue {
            hooks: Vec::new(),
            types: value["types"].as_object().cloned().unwrap_or_default(),
            samples: HashMap::new(),
        };
        for hook in value["hooks"].as_array().into_iter().flatten() {
            let name = hook["name"].as_str().unwrap_or_default().to_owned();
            let event = hook["event"].as_str().unwrap_or_default();
            catalogue.hooks.push((name, Arc::from(event)));
        }
        for (hook, type_name) in catalogue.hooks.clone() {
            let sample = value["samples"].get(&hook).cloned().unwrap_or(Value::Null);
            let event = catalogue.event(&type_name, &sample)?;
            catalogue.samples.insert(hook, event);
        }
        Ok(catalogue)
    }

    /// The event type of hook point `hook`, if it is one.
    pub fn event_type(&self, hook: &str) -> Option<&Arc<str>> {
        self.hooks.iter().find(|(h, _)| h == hook).map(|(_, t)| t)
    }

    /// The catalogue's sample event of `hook`.
    pub fn sample(&self, hook: &str) -> Result<Event, String> {
        self.samples
            .get(hook)
            .cloned()
            .ok_or_else(|| format!("no sample event for {hook:?}"))
    }

    /// `data` checked as an event of `type_name`, defaults filled in.
    pub fn event(&self, type_name: &Arc<str>, data: &Value) -> Result<Event, String> {
        let data = self.model(type_name, data, type_name)?;
        Ok(Event {
            type_name: type_name.clone(),
            data: Arc::new(data),
        })
    }

    fn model(&self, name: &str, data: &Value, at: &str) -> Result<Value, String> {
        let fields = self
            .types
            .get(name)
            .and_then(Value::as_object)
            .ok_or_else(|| format!("unknown type {name}"))?;
        let given = data
            .as_object()
            .ok_or_else(|| format!("{at} must be an object"))?;
        if let Some(extra) = given.keys().find(|k| !fields.contains_key(*k)) {
            return Err(format!("{at} has no field {extra:?}"));
        }
        let mut out = Map::new();
        for (key, field) in fields {
            let here = format!("{at}.{key}");
            let value = match given.get(key) {
                Some(value) => self.field(field, value, &here)?,
                None if field["required"] == Value::Bool(true) => {
                    return Err(format!("{here} is required"))
                }
                None => self.field(field, &field["default"], &here)?,
            };
            out.insert(key.clone(), value);
        }
        Ok(Value::Object(out))
    }

    fn field(&self, field: &Value, value: &Value, at: &str) -> Result<Value, String> {
        let kind = field["type"].as_str().unwrap_or_default();
        let ok = match kind {
            "string" => value.is_string(),
            "string?" => value.is_string() || value.is_null(),
            "integer" => value.is_i64() || value.is_u64() || is_integral(value),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "json" => true,
            "object" => value.is_object(),
            "enum" => field["values"]
                .as_array()
                .is_some_and(|values| values.contains(value)),
            "list" => {
                let items = field["items"].as_str().unwrap_or_default();
                let list = value
                    .as_array()
                    .ok_or_else(|| format!("{at} must be a list"))?;
                let checked = list
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.model(items, item, &format!("{at}.{i}")))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(Value::Array(checked));
            }
            model => return self.model(model, value, at),
        };
        if ok {
            Ok(value.clone())
        } else {
            Err(format!("{at} must be of type {kind}"))
        }
    }
}

fn is_integral(value: &Value) -> bool {
    value.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// The value at a dotted path of a JSON form: object keys and list indices.
pub fn lookup<'a>(data: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(data, |here, part| match here {
        Value::Object(map) => map.get(part),
        Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// Puts `value` at a dotted path, creating absent object keys along it (§3 `modify`).
pub fn put(data: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut here = data;
    let parts: Vec<&str> = path.split('.').collect();
    let (last, parents) = parts.split_last().ok_or("an empty path")?;
    for part in parents {
        here = match here {
            Value::Array(items) => part
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get_mut(i))
                .ok_or_else(|| format!("{path}: no item {part}"))?,
            Value::Object(map) => map
                .entry((*part).to_owned())
                .or_insert_with(|| Value::Object(Map::new())),
            _ => return Err(format!("{path} leads nowhere")),
        };
    }
    match here {
        Value::Array(items) => {
            let slot = last
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get_mut(i))
                .ok_or_else(|| format!("{path}: no item {last}"))?;
            *slot = value;
        }
        Value::Object(map) => {
            map.insert((*last).to_owned(), value);
        }
        _ => return Err(format!("{path} leads nowhere")),
    }
    Ok(())
}

/// The view of an event that the contract rules of `hook` compare (I14): at each path the core
/// names, message roles and fingerprints, and field fingerprints (canonical JSON; a string is
/// its own text), as the Python binding builds it.
pub fn contract_view(
    hook: harnessweaver_core::HookId,
    data: &Value,
) -> harnessweaver_core::EventView {
    use harnessweaver_core::contract::{view_spec, MessageView};
    let spec = view_spec(hook);
    let fingerprint = |value: Option<&Value>| match value {
        Some(Value::String(text)) => text.clone(),
        Some(value) => crate::text::write(value),
        None => String::new(),
    };
    let messages = spec
        .messages
        .and_then(|path| lookup(data, path))
        .and_then(Value::as_array)
        .map(|messages| {
            messages
                .iter()
                .map(|m| {
                    let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
                    MessageView::new(role, fingerprint(Some(m)))
                })
                .collect()
        })
        .unwrap_or_default();
    let fields = spec
        .fields
        .iter()
        .map(|path| fingerprint(lookup(data, path)))
        .collect();
    harnessweaver_core::EventView { messages, fields }
}

/// Whether a JSON value holds a lone surrogate in any string or key (no identity, I27).
pub fn holds_lone(value: &Value) -> bool {
    match value {
        Value::String(text) => crate::text::has_lone(text),
        Value::Array(items) => items.iter().any(holds_lone),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| crate::text::has_lone(k) || holds_lone(v)),
        _ => false,
    }
}
