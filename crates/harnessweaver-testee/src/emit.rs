//! One emit step (§4): the caller's checks (I7, I26), the walk of its chain through
//! `drive.rs`, what each middleware's answer means (ruling 9, I14, I16, I18, I24), and the
//! entry of §6.1's `emits` it observes.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use harnessweaver_core::catalogue::{carries_step, carries_tool, hook_id};
use harnessweaver_core::contract::{check, ContractMode};
use harnessweaver_core::deadline::{chain_deadline, DeadlineOf};
use harnessweaver_core::failure::FailureKind;
use harnessweaver_core::identity::{Identities, IdentityScheme, MAX_SAFE_INTEGER};
use harnessweaver_core::matcher::MatchKey;
use harnessweaver_core::registry::Chain;
use harnessweaver_core::trace::Correlation;
use harnessweaver_core::warning::{keep, Warnings};
use harnessweaver_core::{Error, ErrorKind, HookId, OutcomeKind, TraceBuf};
use serde_json::{json, Map, Value};

use crate::behaviours::{Call, Outcome, Reply, Returned};
use crate::case::{deadline_ns, locked, CaseRun, Payload, Stop};
use crate::declare;
use crate::drive::{Best, Drive, Options, Taken};
use crate::events::{contract_view, holds_lone, Event};
use crate::text::{has_lone, replaced};

/// An emit ready to walk: checked, and numbered in its trace.
pub(crate) struct Ready {
    hook_name: String,
    emit: u64,
    hook: HookId,
    event: Event,
    chain: Chain<Payload>,
    trace: Arc<Mutex<TraceBuf>>,
    options: Options,
}
impl CaseRun<'_> {
    /// One emit step (§4): the observation of §6.1's `emits` entry.
    pub(crate) fn emit(&self, step: &Value) -> Result<Value, Stop> {
        let ready = self.prepare(step)?;
        self.walk(ready)
    }

    /// The caller's side of an emit: the event, then the checks in the order the bus makes
    /// them (hook point, event type, the emit's deadline); nothing runs when one fails.
    /// The emit is numbered here, so that concurrent emits are numbered in listed order.
    pub(crate) fn prepare(&self, step: &Value) -> Result<Ready, Stop> {
        let hook_name = step["emit"].as_str().unwrap_or_default();
        let context = step
            .get("context")
            .and_then(Value::as_str)
            .unwrap_or("main");
        let trace = self.trace_of(context);
        let event = if let Some(other) = step.get("event_as").and_then(Value::as_str) {
            Some(self.catalogue.sample(other).map_err(Stop::Fault)?)
        } else if let Some(type_name) = self.catalogue.event_type(hook_name) {
            let event = match step.get("event") {
                Some(data) => self.catalogue.event(type_name, data),
                None => self.catalogue.sample(hook_name),
            };
            Some(event.map_err(Stop::Fault)?)
        } else {
            None
        };
        let hook = hook_id(declare::text(
            &step["emit"],
            ErrorKind::UnknownHook,
            "hook",
        )?)?;
        let event = event.ok_or_else(|| Stop::Fault("no event".into()))?;
        let expected = self
            .catalogue
            .event_type(hook_name)
            .cloned()
            .unwrap_or_default();
        if event.type_name != expected {
            let message = format!(
                "hook point '{hook_name}' takes a {expected}, got {} (I7)",
                event.type_name
            );
            return Err(Stop::Bus(Error::new(ErrorKind::EventTypeMismatch, message)));
        }
        let hook_deadline = self.deadlines[usize::from(hook)];
        let own = deadline_ns(step.get("deadline"), hook, DeadlineOf::Emit)?;
        let budget = chain_deadline(0, hook_deadline, own);
        let chain = {
            let registry = locked(&self.registry);
            match registry.match_key(hook) {
                None => registry.chain(hook),
                Some(key) => registry.chain_for(hook, key_text(key, &event.data)),
            }
        };
        let options = Options {
            contracts: self.contracts,
            budget_ns: budget,
            corr: Arc::new(correlation(hook, context, &event.data)),
        };
        let emit = locked(&trace).begin_emit();
        Ok(Ready {
            hook_name: hook_name.to_owned(),
            emit,
            hook,
            event,
            chain,
            trace,
            options,
        })
    }

    /// Walks the chain of a prepared emit and observes its result.
    pub(crate) fn walk(&self, ready: Ready) -> Result<Value, Stop> {
        let Ready {
            hook_name,
            emit,
            hook,
            event,
            chain,
            trace,
            options,
        } = ready;
        let given = event.clone();
        let mut drive: Drive<Payload, Outcome, Event> =
            Drive::new(chain, hook, event, emit, options);
        let mut ran = Vec::new();
        while let Some(entry) = drive.next() {
            ran.push(json!(entry.decl.name));
            let call = Call {
                host: self,
                sequences: &self.sequences,
                interrupt_at: drive.remaining().map(|left| Instant::now() + left),
            };
            match call.perform(&entry.payload.does, drive.event()) {
                Reply::Returned(returned) => {
                    let taken = judge(returned, hook, drive.event(), drive.contracts());
                    drive.answer(taken);
                }
                Reply::Raised(kind) => {
                    drive.answer(Taken::Failed(FailureKind::Exception, Some(kind)));
                }
                Reply::Cancelled => drive.answer(Taken::Failed(FailureKind::Cancelled, None)),
                Reply::Interrupted => drive.timed_out(),
                Reply::Fault(message) => return Err(Stop::Fault(message)),
            }
        }
        let identities = self.identity.map(|scheme| Identities {
            input: identity(scheme, &given),
            enforced: identity(scheme, drive.event()),
        });
        let finished = drive.finish(&mut locked(&trace), identities);
        let outcome = match finished.outcome {
            None => json!({"kind": "continue", "modified": false}),
            Some(Best::Block { reason, code }) => {
                json!({"kind": "block", "reason": reason, "code": code})
            }
            Some(Best::Answer(outcome)) => outcome_json(&outcome),
        };
        let warnings: Vec<Value> = finished
            .warnings
            .iter()
            .flat_map(|(name, texts)| {
                texts
                    .iter()
                    .map(move |text| json!({"middleware": name, "text": &**text}))
            })
            .collect();
        Ok(json!({
            "hook": hook_name,
            "outcome": outcome,
            "event": *finished.event.data,
            "ran": ran,
            "warnings": warnings,
        }))
    }
}

/// The identity of an event (I27): none for one holding a lone surrogate.
fn identity(scheme: IdentityScheme, event: &Event) -> Option<harnessweaver_core::Identity> {
    if holds_lone(&event.data) {
        None
    } else {
        scheme.identity_of(&event.data)
    }
}

/// The key a matcher reads from the caller's event (I22): text, or `None` (which matches).
fn key_text(key: MatchKey, data: &Value) -> Option<&str> {
    let path = match key {
        MatchKey::Tool => "/tool/name",
        MatchKey::Model => "/request/model",
    };
    data.pointer(path)
        .and_then(Value::as_str)
        .filter(|text| !has_lone(text))
}

/// The run, step and tool of an emit's records (I21), from the caller's event.
fn correlation(hook: HookId, run: &str, data: &Value) -> Correlation {
    let step = if carries_step(hook) {
        data.get("step")
            .and_then(Value::as_u64)
            .filter(|&s| s <= MAX_SAFE_INTEGER)
    } else {
        None
    };
    let tool = if carries_tool(hook) {
        data.pointer("/tool/name")
            .and_then(Value::as_str)
            .map(|t| Arc::from(replaced(t)))
    } else {
        None
    };
    Correlation {
        run: Some(Arc::from(replaced(run))),
        step,
        tool,
    }
}

/// The keys an outcome of each kind shows (§6.2), absent ones as `null`.
fn outcome_json(outcome: &Outcome) -> Value {
    let kind = outcome.kind.as_str();
    if kind == "continue" {
        return json!({"kind": "continue", "modified": outcome.modified.is_some()});
    }
    let keys: &[&str] = match kind {
        "block" => &["reason", "code"],
        "suspend" => &["reason", "approver_role", "code"],
        "escalate" => &["reason", "to", "code"],
        _ => &["reason", "delay", "max_attempts", "code"],
    };
    let mut map = Map::new();
    map.insert("kind".into(), json!(kind));
    for key in keys {
        map.insert(
            (*key).to_owned(),
            outcome.fields.get(*key).cloned().unwrap_or(Value::Null),
        );
    }
    Value::Object(map)
}

/// What a returned value means as an answer (ruling 9, I16, I18, I24), with the contract
/// rule a modification breaks on a bus with a contract mode (I14).
fn judge(
    returned: Returned,
    hook: HookId,
    before: &Event,
    contracts: Option<ContractMode>,
) -> Taken<Outcome, Event> {
    let outcome = match returned {
        Returned::Nothing => {
            return Taken::Outcome {
                kind: OutcomeKind::Continue,
                code: None,
                keep: None,
                modified: None,
                warnings: None,
                broken: None,
            }
        }
        Returned::NotAnOutcome => return Taken::Failed(FailureKind::InvalidReturn, None),
        Returned::Outcome(outcome) => outcome,
    };
    // Texts that are not strings fail when the outcome is built: a TypeError (Python).
    let texts = ["reason", "code", "approver_role", "to"];
    let fields = texts.iter().filter_map(|k| outcome.fields.get(*k));
    if fields.clone().any(|v| !v.is_string() && !v.is_null()) {
        return Taken::Failed(FailureKind::Exception, Some("TypeError".into()));
    }
    if fields.filter_map(Value::as_str).any(has_lone) {
        return Taken::Failed(FailureKind::InvalidReturn, None); // I16
    }
    if let Some(modified) = &outcome.modified {
        if modified.type_name != before.type_name {
            return Taken::Failed(FailureKind::WrongEventType, None); // I18
        }
    }
    let Ok(warnings) = judge_warnings(outcome.warnings.as_ref()) else {
        return Taken::Failed(FailureKind::InvalidReturn, None);
    };
    let broken = match (contracts, &outcome.modified) {
        (Some(_), Some(after)) => check(
            hook,
            &contract_view(hook, &before.data),
            &contract_view(hook, &after.data),
        ),
        _ => None,
    };
    Taken::Outcome {
        kind: outcome.kind,
        code: outcome
            .fields
            .get("code")
            .and_then(Value::as_str)
            .map(str::to_owned),
        modified: outcome.modified.clone(),
        keep: Some(outcome),
        warnings,
        broken,
    }
}

/// An outcome's warnings (I24): a list of texts holding no lone surrogate, bounded; anything
/// else makes the answer invalid.
fn judge_warnings(value: Option<&Value>) -> Result<Option<Warnings>, ()> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let items = value.as_array().ok_or(())?;
    let texts: Vec<&str> = items
        .iter()
        .map(|item| item.as_str().filter(|t| !has_lone(t)).ok_or(()))
        .collect::<Result<_, _>>()?;
    Ok(keep(texts))
}
