//! The corpus's closed behaviour vocabulary (INTERPRETING.md §3), carried out natively.
//!
//! A behaviour runs on the emitting thread. `sleep` suspends in a way the bus can interrupt:
//! it waits at most until the middleware's deadline and then reports that it was interrupted.
//! `busy` keeps its thread for its whole time, so the bus judges its late answer (I9).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use harnessweaver_core::OutcomeKind;
use serde_json::{Map, Value};

use crate::events::{lookup, put, Catalogue, Event};

/// What a middleware's body ended with.
#[derive(Debug)]
pub enum Reply {
    /// It returned: nothing, an outcome, or a value that is no outcome.
    Returned(Returned),
    /// It raised an exception of this type name (I5).
    Raised(String),
    /// It ended with the runtime's cancellation while the caller was not cancelled (I15).
    Cancelled,
    /// The bus interrupted it at its deadline while it was suspended (I9, I26).
    Interrupted,
    /// The behaviour cannot be carried out: a fault of the case (§3).
    Fault(String),
}

/// An answer a middleware returned.
#[derive(Debug)]
pub enum Returned {
    Nothing,
    /// A JSON value that is not an outcome (`{"return": "value"}`).
    NotAnOutcome,
    Outcome(Outcome),
}

/// An outcome as a middleware built it: its texts and numbers as given (judged by the walk).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub kind: OutcomeKind,
    /// `reason`, `code`, `approver_role`, `to`, `delay`, `max_attempts` as given.
    pub fields: Map<String, Value>,
    pub warnings: Option<Value>,
    pub modified: Option<Event>,
}

/// What a behaviour may ask of the bus it runs on (§3 `register`, `unregister`).
pub trait Host {
    fn register(&self, declaration: &Value) -> Result<(), String>;
    fn unregister(&self, name: &Value) -> Result<(), String>;
    fn catalogue(&self) -> &Catalogue;
    /// Whether the case's clock says it is the weekend.
    fn weekend(&self) -> bool;
}

/// The calls of each `sequence` so far, by the behaviour's address (one run of a case).
#[derive(Debug, Default)]
pub struct Sequences(Mutex<HashMap<usize, usize>>);

impl Sequences {
    fn next(&self, at: &Value) -> usize {
        let mut calls = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = calls.entry(std::ptr::from_ref(at) as usize).or_insert(0);
        *count += 1;
        *count - 1
    }
}

/// One call of a middleware body.
pub struct Call<'a> {
    pub host: &'a dyn Host,
    pub sequences: &'a Sequences,
    /// When the bus interrupts a suspended middleware: its timeout or the chain deadline.
    pub interrupt_at: Option<Instant>,
    /// The case's compiled `cedar` engines, and what their requests read: the hook point
    /// emitted and the `attributes` of the emit's context (§2 `contexts`).
    pub engines: &'a crate::cedar::Engines,
    pub hook: &'a str,
    pub attributes: Option<&'a Value>,
}

impl Call<'_> {
    /// Does behaviour `b` for `event`.
    pub fn perform(&self, b: &Value, event: &Event) -> Reply {
        let then = || b.get("then").unwrap_or(&Value::Null);
        if b.get("return").is_some() {
            return match self.outcome(b, event) {
                Ok(returned) => Reply::Returned(returned),
                Err(fault) => Reply::Fault(fault),
            };
        }
        if let Some(kind) = b.get("raise") {
            return match kind.as_str() {
                Some(kind) => Reply::Raised(kind.to_owned()),
                None => Reply::Fault(format!("raise: {kind} is no type name")),
            };
        }
        if b.get("raise_cancelled").is_some() {
            return Reply::Cancelled;
        }
        if let Some(seconds) = b.get("sleep") {
            let Some(seconds) = seconds.as_f64() else {
                return Reply::Fault(format!("sleep: {seconds} is no number"));
            };
            if !self.sleep(seconds) {
                return Reply::Interrupted;
            }
            return self.perform(then(), event);
        }
        if let Some(seconds) = b.get("busy") {
            // Keeps the thread: nothing can interrupt it.
            std::thread::sleep(Duration::from_secs_f64(seconds.as_f64().unwrap_or(0.0)));
            return self.perform(then(), event);
        }
        if let Some(condition) = b.get("if") {
            let chosen = if self.holds(condition, event) {
                Some(then())
            } else {
                b.get("else")
            };
            // `else` defaults to `{"return": "none"}`.
            return chosen.map_or(Reply::Returned(Returned::Nothing), |b| {
                self.perform(b, event)
            });
        }
        if let Some(steps) = b.get("sequence").and_then(Value::as_array) {
            let call = self.sequences.next(b);
            return match steps.get(call.min(steps.len().saturating_sub(1))) {
                Some(step) => self.perform(step, event),
                None => Reply::Fault("an empty sequence".to_owned()),
            };
        }
        if let Some(settings) = b.get("cedar") {
            return crate::cedar::perform(
                self.engines,
                settings,
                self.hook,
                event,
                self.attributes,
            );
        }
        if let Some(change) = b.get("mutate") {
            return mutate(change, event);
        }
        if let Some(declaration) = b.get("register") {
            if let Err(e) = self.host.register(declaration) {
                return Reply::Fault(format!("the bus refused a behaviour's register: {e}"));
            }
            return self.perform(then(), event);
        }
        if let Some(name) = b.get("unregister") {
            if let Err(e) = self.host.unregister(name) {
                return Reply::Fault(format!("the bus refused a behaviour's unregister: {e}"));
            }
            return self.perform(then(), event);
        }
        Reply::Fault(format!("unknown behaviour {}", crate::text::write(b)))
    }

    /// Sleeps `seconds`, or until the bus interrupts it: false when interrupted.
    fn sleep(&self, seconds: f64) -> bool {
        let wanted = Duration::from_secs_f64(seconds.max(0.0));
        let now = Instant::now();
        match self.interrupt_at {
            Some(at) if now + wanted > at => {
                std::thread::sleep(at.saturating_duration_since(now));
                false
            }
            _ => {
                std::thread::sleep(wanted);
                true
            }
        }
    }

    fn outcome(&self, b: &Value, event: &Event) -> Result<Returned, String> {
        let kind = b["return"].as_str().unwrap_or_default();
        let kind = match kind {
            "none" => return Ok(Returned::Nothing),
            // `null` is the language's nothing (§3).
            "value" if b["value"].is_null() => return Ok(Returned::Nothing),
            "value" => return Ok(Returned::NotAnOutcome),
            other => {
                OutcomeKind::parse(other).ok_or_else(|| format!("unknown return {other:?}"))?
            }
        };
        let mut fields = Map::new();
        for key in [
            "reason",
            "code",
            "approver_role",
            "to",
            "delay",
            "max_attempts",
        ] {
            if let Some(value) = b.get(key) {
                fields.insert(key.to_owned(), value.clone());
            }
        }
        let modified = if kind != OutcomeKind::Continue {
            None
        } else if let Some(change) = b.get("modify") {
            Some(modified(self.host.catalogue(), event, change)?)
        } else if let Some(hook) = b.get("modified_as").and_then(Value::as_str) {
            Some(self.host.catalogue().sample(hook)?)
        } else {
            None
        };
        Ok(Returned::Outcome(Outcome {
            kind,
            fields,
            warnings: b.get("warnings").cloned(),
            modified,
        }))
    }

    fn holds(&self, condition: &Value, event: &Event) -> bool {
        if let Some(weekend) = condition.get("weekend") {
            if weekend.as_bool() != Some(self.host.weekend()) {
                return false;
            }
        }
        if let Some(path) = condition.get("path").and_then(Value::as_str) {
            let value = lookup(&event.data, path);
            if let Some(expected) = condition.get("equals") {
                if !value.is_some_and(|v| json_equal(v, expected)) {
                    return false;
                }
            }
            if let Some(bound) = condition.get("greater_than").and_then(Value::as_f64) {
                if !value.and_then(Value::as_f64).is_some_and(|v| v > bound) {
                    return false;
                }
            }
        }
        true
    }
}

/// JSON equality: `1` equals `1.0`, `true` is not `1`, key order never matters.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A copy of `event` with the `set` and then the `append` changes of §3.
fn modified(catalogue: &Catalogue, event: &Event, change: &Value) -> Result<Event, String> {
    let mut data = (*event.data).clone();
    for (path, value) in change
        .get("set")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        put(&mut data, path, value.clone())?;
    }
    for (path, value) in change
        .get("append")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut items = match lookup(&data, path) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(other) => return Err(format!("append: {path} holds {other}, not a list")),
        };
        items.push(value.clone());
        put(&mut data, path, Value::Array(items))?;
    }
    catalogue.event(&event.type_name, &data)
}

/// §3 `mutate`: an attempt to change the live event, which refuses it (I18) with a
/// `TypeError`. A path that leads nowhere is a fault of the case.
fn mutate(change: &Value, event: &Event) -> Reply {
    let paths = change.get("set").and_then(Value::as_object);
    let Some(path) = paths.and_then(|set| set.keys().next()) else {
        return Reply::Fault("mutate: nothing to set".to_owned());
    };
    // The first assignment raises, so only its path is ever reached.
    let parent = path.rsplit_once('.').map(|(parent, _)| parent);
    let found = parent.map_or(Some(&*event.data), |parent| lookup(&event.data, parent));
    if !found.is_some_and(|v| v.is_object() || v.is_array()) {
        return Reply::Fault(format!("mutate: {path} leads nowhere in the event"));
    }
    Reply::Raised("TypeError".to_owned())
}
