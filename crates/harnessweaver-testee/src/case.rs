//! One case on a fresh bus: its declarations, its steps, and what it observes (§2, §4, §6.1).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use harnessweaver_core::catalogue::{hook_id, CATALOGUE};
use harnessweaver_core::contract::ContractMode;
use harnessweaver_core::deadline::{
    deadline_seconds_ns, deadline_text_ns, deadline_type_error, DeadlineOf,
};
use harnessweaver_core::error::invalid_value;
use harnessweaver_core::identity::IdentityScheme;
use harnessweaver_core::{Error, ErrorKind, HookId, Registry, TraceBuf};
use serde_json::{json, Map, Value};

use crate::behaviours::{Host, Sequences};
use crate::declare;
use crate::emit::Ready;
use crate::events::Catalogue;
use crate::text::{has_lone, notation, shown};

/// Why a case stopped: an error the bus raised (observed), or a fault of the case (errored).
#[derive(Debug)]
pub enum Stop {
    Bus(Error),
    Fault(String),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Bus(e)
    }
}

/// What the registry holds for a middleware: its behaviour.
#[derive(Debug)]
pub struct Payload {
    pub(crate) does: Value,
}

/// A case's bus and contexts.
pub struct CaseRun<'c> {
    pub(crate) catalogue: &'c Catalogue,
    pub(crate) registry: Mutex<Registry<Payload>>,
    pub(crate) contracts: Option<ContractMode>,
    pub(crate) deadlines: Vec<Option<u64>>,
    pub(crate) identity: Option<IdentityScheme>,
    refused: Option<Error>,
    weekend: bool,
    contexts: Mutex<BTreeMap<String, Arc<Mutex<TraceBuf>>>>,
    pub(crate) sequences: Sequences,
    pub(crate) engines: crate::cedar::Engines,
    /// `given.contexts`: each context's envelope attributes (§2).
    given_contexts: Value,
}

pub(crate) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a bus is built with: its contract mode, chain deadlines and identity scheme.
type BusOptions = (
    Option<ContractMode>,
    Vec<Option<u64>>,
    Option<IdentityScheme>,
);

/// `HookBus(contracts=, deadlines=, identity=)`, checked in that order.
fn bus_options(given: &Value) -> Result<BusOptions, Error> {
    let contracts = match given.get("contracts").filter(|v| !v.is_null()) {
        None => None,
        Some(Value::String(text)) => Some(ContractMode::parse(text)?),
        Some(other) => {
            return Err(invalid_value(
                ErrorKind::InvalidContracts,
                "contracts mode",
                &notation(other),
            ))
        }
    };
    let mut deadlines = vec![None; CATALOGUE.len()];
    match given.get("deadlines").filter(|v| !v.is_null()) {
        None => {}
        Some(Value::Object(map)) => {
            for (hook, value) in map {
                let id = hook_id(hook)?;
                deadlines[usize::from(id)] = deadline_ns(Some(value), id, DeadlineOf::HookPoint)?;
            }
        }
        Some(other) => return Err(deadline_type_error("the bus", &notation(other))),
    }
    let identity = match given.get("identity").filter(|v| !v.is_null()) {
        None => None,
        Some(Value::String(text)) if !has_lone(text) => Some(IdentityScheme::parse(text)?),
        Some(other) => {
            return Err(invalid_value(
                ErrorKind::InvalidIdentity,
                "identity scheme",
                &notation(other),
            ))
        }
    };
    Ok((contracts, deadlines, identity))
}

/// Nanoseconds of a chain deadline for `hook` (I26): text with a unit or seconds.
pub(crate) fn deadline_ns(
    value: Option<&Value>,
    hook: HookId,
    of: DeadlineOf,
) -> Result<Option<u64>, Error> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let name = CATALOGUE.get(usize::from(hook)).map_or("", |h| h.name);
    let parsed = match value {
        Value::String(text) if has_lone(text) => Err(deadline_type_error(name, &shown(value))),
        Value::String(text) => deadline_text_ns(name, text, of),
        Value::Number(n) => match n.as_f64().map(|s| deadline_seconds_ns(name, s, of)) {
            Some(Ok(ns)) => Ok(ns),
            _ => Err(deadline_type_error(name, &notation(value))),
        },
        other => Err(deadline_type_error(name, &notation(other))),
    };
    parsed.map(Some)
}

/// Whether the local date of `now` (ISO 8601, its own offset) is a Saturday or Sunday.
fn is_weekend(now: &str) -> bool {
    let date: Vec<i64> = now
        .get(..10)
        .unwrap_or_default()
        .split('-')
        .filter_map(|p| p.parse().ok())
        .collect();
    let [y, m, d] = date[..] else { return false };
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil); 1970-01-01 was a Thursday.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let weekday = (days + 4).rem_euclid(7); // 0 = Sunday
    weekday == 0 || weekday == 6
}

impl<'c> CaseRun<'c> {
    pub fn new(catalogue: &'c Catalogue, case: &Value) -> Self {
        let given = case.get("given").unwrap_or(&Value::Null);
        let (options, refused) = match bus_options(given) {
            Ok(options) => (options, None),
            Err(e) => ((None, vec![None; CATALOGUE.len()], None), Some(e)),
        };
        let now = given
            .pointer("/envelope/now")
            .and_then(Value::as_str)
            .unwrap_or("2026-11-30T12:00:00+00:00");
        CaseRun {
            catalogue,
            registry: Mutex::new(Registry::new()),
            contracts: options.0,
            deadlines: options.1,
            identity: options.2,
            refused,
            weekend: is_weekend(now),
            contexts: Mutex::new(BTreeMap::new()),
            sequences: Sequences::default(),
            engines: crate::cedar::Engines::default(),
            given_contexts: given.get("contexts").cloned().unwrap_or(Value::Null),
        }
    }

    /// Runs the case: `Ok(observation)`, or `Err(message)` when it cannot be run (errored).
    pub fn run(&self, case: &Value) -> Result<Value, String> {
        let mut emits = Vec::new();
        let error = match self.steps(case, &mut emits) {
            Ok(()) => Value::Null,
            Err(Stop::Bus(e)) => json!({
                "kind": e.kind.as_str(),
                "rule": e.kind.rule(),
                "message": e.message,
            }),
            Err(Stop::Fault(message)) => return Err(message),
        };
        let registry = locked(&self.registry);
        let chains: Map<String, Value> = (0..)
            .zip(CATALOGUE.iter())
            .map(|(id, point)| {
                let names = registry
                    .chain(id)
                    .iter()
                    .map(|e| json!(e.decl.name))
                    .collect();
                (point.name.to_owned(), Value::Array(names))
            })
            .collect();
        let traces: Map<String, Value> = locked(&self.contexts)
            .iter()
            .map(|(name, trace)| (name.clone(), Value::Array(untimed(&locked(trace)))))
            .collect();
        Ok(json!({"error": error, "chains": chains, "emits": emits, "traces": traces}))
    }

    fn steps(&self, case: &Value, emits: &mut Vec<Value>) -> Result<(), Stop> {
        if let Some(e) = &self.refused {
            return Err(Stop::Bus(e.clone()));
        }
        let given = case.get("given").unwrap_or(&Value::Null);
        for decl in given
            .get("middleware")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.register(decl)?;
        }
        for step in case
            .get("when")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.step(step, emits)?;
        }
        Ok(())
    }

    fn step(&self, step: &Value, emits: &mut Vec<Value>) -> Result<(), Stop> {
        if step.get("emit").is_some() {
            emits.push(self.emit(step)?);
        } else if let Some(decl) = step.get("register") {
            self.register(decl)?;
        } else if let Some(name) = step.get("unregister") {
            self.unregister(name)?;
        } else if let Some(group) = step.get("concurrent").and_then(Value::as_array) {
            // Started (checked and numbered) in listed order, then each walked on its own
            // thread; an error ends only its own emit (§4).
            let started: Vec<Result<Ready, Stop>> = group
                .iter()
                .map(|sub| match sub.get("emit") {
                    Some(_) => self.prepare(sub),
                    None => Err(Stop::Fault("a concurrent step that is no emit".into())),
                })
                .collect();
            let done: Vec<Result<Value, Stop>> = std::thread::scope(|scope| {
                let handles: Vec<_> = started
                    .into_iter()
                    .map(|ready| ready.map(|ready| scope.spawn(move || self.walk(ready))))
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle?
                            .join()
                            .unwrap_or_else(|_| Err(Stop::Fault("an emit panicked".into())))
                    })
                    .collect()
            });
            let mut first = None;
            for result in done {
                match result {
                    Ok(emit) => emits.push(emit),
                    Err(failed) => {
                        first.get_or_insert(failed);
                    }
                }
            }
            if let Some(stop) = first {
                return Err(stop);
            }
        } else {
            return Err(Stop::Fault(format!(
                "unknown step {}",
                crate::text::write(step)
            )));
        }
        Ok(())
    }

    /// Declares `decl` and registers it with its overrides (§2); an item with `enabled:
    /// false` is checked but not registered (I13).
    fn register(&self, decl: &Value) -> Result<(), Stop> {
        let keys = decl.get("register").cloned().unwrap_or_else(|| json!({}));
        let mut overrides = keys.as_object().cloned().unwrap_or_default();
        let enabled = overrides.remove("enabled").unwrap_or(Value::Bool(true));
        let in_layer = decl.get("in");
        if in_layer.is_none() && keys.get("enabled").is_some() {
            return Err(Stop::Fault(
                "`enabled` belongs to items declared `in` a layer (INTERPRETING.md §2)".into(),
            ));
        }
        let Value::Bool(enabled) = enabled else {
            return Err(Stop::Fault(format!(
                "`enabled` must be true or false, got {enabled}"
            )));
        };
        let declared = declare::declaration(decl)?;
        let layer = match in_layer.filter(|v| !v.is_null()) {
            Some(layer) => Some(declare::layer(Some(layer))?),
            None if !enabled => {
                // `declare_in` without a layer: unknown_layer, like any other value.
                return Err(Stop::Bus(invalid_value(
                    ErrorKind::UnknownLayer,
                    "layer",
                    "None",
                )));
            }
            None => None,
        }
        .flatten();
        let result = declare::overridden(&declared, layer, &Value::Object(overrides))?;
        if enabled {
            let does = decl
                .get("does")
                .cloned()
                .unwrap_or_else(|| json!({"return": "none"}));
            locked(&self.registry).register(result, Payload { does })?;
        }
        Ok(())
    }

    fn unregister(&self, name: &Value) -> Result<(), Stop> {
        let name = declare::text(name, ErrorKind::UnknownMiddleware, "name")?;
        locked(&self.registry).unregister(name)?;
        Ok(())
    }

    /// The envelope attributes of `context` (§2 `contexts`); `None` for a context not named.
    pub(crate) fn attributes(&self, context: &str) -> Option<&Value> {
        self.given_contexts
            .get(context)
            .and_then(|c| c.get("attributes"))
            .filter(|a| !a.is_null())
    }

    pub(crate) fn trace_of(&self, context: &str) -> Arc<Mutex<TraceBuf>> {
        locked(&self.contexts)
            .entry(context.to_owned())
            .or_insert_with(|| Arc::new(Mutex::new(TraceBuf::new())))
            .clone()
    }
}

impl Host for CaseRun<'_> {
    fn register(&self, declaration: &Value) -> Result<(), String> {
        CaseRun::register(self, declaration).map_err(describe)
    }

    fn unregister(&self, name: &Value) -> Result<(), String> {
        CaseRun::unregister(self, name).map_err(describe)
    }

    fn catalogue(&self) -> &Catalogue {
        self.catalogue
    }

    fn weekend(&self) -> bool {
        self.weekend
    }
}

fn describe(stop: Stop) -> String {
    match stop {
        Stop::Bus(e) => e.message,
        Stop::Fault(message) => message,
    }
}

/// A trace's records as its JSON Lines writer writes them, without their timings (§6.1).
fn untimed(trace: &TraceBuf) -> Vec<Value> {
    trace
        .to_jsonl()
        .lines()
        .map(|line| {
            let mut value = serde_json::from_str(line).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                map.remove("t_ns");
                map.remove("duration_ns");
            }
            value
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_weekend;

    #[test]
    fn the_weekend_is_judged_on_the_local_date() {
        assert!(is_weekend("2026-11-28T01:00:00+05:00"));
        assert!(!is_weekend("2026-11-27T22:00:00-05:00"));
        assert!(!is_weekend("2026-11-30T12:00:00+00:00"));
        assert!(is_weekend("2026-11-29T12:00:00+00:00"));
    }
}
