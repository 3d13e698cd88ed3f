//! One emit step (§4): the caller's checks (I7, I26), the walk of its chain by the core's
//! `Walk` (which decides every rule of the emit; this file calls the behaviours and does what
//! each verdict says, like the binding's `EmitState`), and the entry of §6.1's `emits` it
//! observes.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harnessweaver_core::catalogue::{carries_step, carries_tool, hook_id};
use harnessweaver_core::deadline::{chain_deadline, DeadlineOf};
use harnessweaver_core::failure::FailureKind;
use harnessweaver_core::identity::{Identities, IdentityScheme, MAX_SAFE_INTEGER};
use harnessweaver_core::matcher::MatchKey;
use harnessweaver_core::registry::Chain;
use harnessweaver_core::trace::Correlation;
use harnessweaver_core::walk::{Options, Step, Walk};
use harnessweaver_core::{Error, ErrorKind, HookId, TraceBuf};
use serde_json::{json, Value};

use crate::answer::{ending_json, judge, Judged};
use crate::behaviours::{Call, Outcome, Reply, Returned};
use crate::case::{deadline_ns, locked, CaseRun, Payload, Stop};
use crate::declare;
use crate::events::{holds_lone, Event};
use crate::text::{has_lone, replaced};

/// An emit ready to walk: checked, and numbered in its trace.
pub(crate) struct Ready {
    hook_name: String,
    context: String,
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
        let correlation = Arc::new(correlation(hook, context, &event.data));
        let options = Options {
            emit: locked(&trace).begin_emit(),
            budget_ns: budget,
            contracts: self.contracts,
            // Every record timed on the precise clock: a testee has no hot path to spare.
            precise: true,
            ..Options::new(hook, correlation)
        };
        Ok(Ready {
            hook_name: hook_name.to_owned(),
            context: context.to_owned(),
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
            context,
            mut event,
            chain,
            trace,
            options,
        } = ready;
        let given = event.clone();
        let mut walk = Walk::new(chain, options);
        // The outcome object the walk said to keep last (`Verdict::keep`).
        let mut kept = None;
        let mut ran = Vec::new();
        loop {
            match walk.next() {
                Step::Call(entry) => ran.push(json!(entry.decl.name)),
                // Not called (I26), and already recorded: nothing to take or keep.
                Step::Skipped(_) => continue,
                Step::Done => break,
            }
            let call = Call {
                host: self,
                sequences: &self.sequences,
                interrupt_at: interrupt_at(&walk),
                engines: &self.engines,
                hook: &hook_name,
                attributes: self.attributes(&context),
            };
            // The walk's verdicts on a failure only ask for a log line, which a testee has no
            // use for (its trace records the failure).
            match call.perform(&walk.entry().payload.does, &event) {
                Reply::Returned(Returned::Nothing) => {
                    walk.continued();
                }
                Reply::Returned(Returned::NotAnOutcome) => {
                    if walk.returned().is_none() {
                        walk.failed(FailureKind::InvalidReturn, None);
                    }
                }
                Reply::Returned(Returned::Outcome(outcome)) => {
                    answered(&mut walk, outcome, &mut event, &mut kept);
                }
                Reply::Raised(kind) => {
                    walk.raised(FailureKind::Exception, Some(&kind));
                }
                Reply::Cancelled => {
                    walk.raised(FailureKind::Cancelled, None);
                }
                Reply::Interrupted => {
                    walk.timed_out();
                }
                Reply::Fault(message) => {
                    // Nothing recorded is lost (ruling 21), even on a case's fault.
                    walk.flush(&mut locked(&trace));
                    return Err(Stop::Fault(message));
                }
            }
        }
        let identities = self.identity.map(|scheme| Identities {
            input: identity(scheme, &given),
            enforced: identity(scheme, &event),
        });
        let ending = walk.finish(&mut locked(&trace), identities);
        let warnings: Vec<Value> = walk
            .warnings()
            .iter()
            .flat_map(|(index, texts)| {
                let name = &walk.chain()[*index].decl.name;
                texts
                    .iter()
                    .map(move |text| json!({"middleware": name, "text": &**text}))
            })
            .collect();
        Ok(json!({
            "hook": hook_name,
            "outcome": ending_json(ending, kept.as_ref()),
            "event": *event.data,
            "ran": ran,
            "warnings": warnings,
        }))
    }
}

/// The current middleware returned `outcome`: judged unless it came too late (ruling 10, I26,
/// recorded by the walk), and what the verdict says done: the modified event goes on, the
/// outcome object is kept.
fn answered(
    walk: &mut Walk<Payload>,
    outcome: Outcome,
    event: &mut Event,
    kept: &mut Option<Outcome>,
) {
    if walk.returned().is_some() {
        return;
    }
    let (hook, contracts) = (walk.hook(), walk.contracts());
    match judge(outcome, hook, event, contracts, walk.texts()) {
        Judged::Failed(kind, exception) => {
            walk.failed(kind, exception);
        }
        Judged::Answer {
            answer,
            keep,
            modified,
            warnings,
            broken,
        } => {
            let verdict = walk.answer(answer, broken, warnings);
            if verdict.accept {
                if let Some(modified) = modified {
                    *event = modified;
                }
            }
            if verdict.keep {
                *kept = Some(*keep);
            }
        }
    }
}

/// When a suspended behaviour is interrupted: at the current middleware's limit (its timeout,
/// or the chain deadline cutting it off, I26); `None` without one.
fn interrupt_at<P>(walk: &Walk<P>) -> Option<Instant> {
    walk.limit_ns()?;
    let left = Duration::try_from_secs_f64(walk.remaining().max(0.0)).ok()?;
    Some(Instant::now() + left)
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

#[cfg(test)]
mod tests {
    use super::*;
    use harnessweaver_core::declaration::{declare, DeclarationInput, TimeoutInput};
    use harnessweaver_core::Registry;

    fn chain(middleware: &[(&str, Option<&str>)]) -> Chain<()> {
        let mut registry = Registry::new();
        for (name, timeout) in middleware {
            let input = DeclarationInput {
                name,
                hooks: &["tool.before"],
                band: None,
                fail_mode: Some("open"),
                timeout: timeout.map(TimeoutInput::Text),
                matcher: None,
                mode: None,
            };
            registry.register(declare(&input).unwrap(), ()).unwrap();
        }
        registry.chain(hook_id("tool.before").unwrap())
    }

    fn walk(chain: Chain<()>, budget_ns: Option<u64>, trace: &mut TraceBuf) -> Walk<()> {
        let options = Options {
            emit: trace.begin_emit(),
            budget_ns,
            ..Options::new(hook_id("tool.before").unwrap(), Arc::new(Correlation::NONE))
        };
        Walk::new(chain, options)
    }

    #[test]
    fn a_suspended_behaviour_is_interrupted_only_at_a_limit() {
        let mut trace = TraceBuf::new();
        let mut unlimited = walk(chain(&[("a", None)]), None, &mut trace);
        assert!(matches!(unlimited.next(), Step::Call(_)));
        assert!(
            interrupt_at(&unlimited).is_none(),
            "no timeout, no deadline"
        );
        let mut timed = walk(chain(&[("a", Some("2s"))]), None, &mut trace);
        let before = Instant::now();
        assert!(matches!(timed.next(), Step::Call(_)));
        let at = interrupt_at(&timed).expect("its timeout");
        assert!(at <= Instant::now() + Duration::from_secs(2) && at > before);
    }

    /// The chain deadline cuts off the first middleware's own timeout (I26): its interruption
    /// comes at the deadline, it fails as `deadline`, and the next one is skipped.
    #[test]
    fn a_cut_off_middleware_fails_as_deadline_and_ends_the_chains_time() {
        let mut trace = TraceBuf::new();
        let chain = chain(&[("a", Some("7200s")), ("b", None)]);
        let mut walk = walk(chain, Some(3_600_000_000_000), &mut trace);
        assert!(matches!(walk.next(), Step::Call(_)));
        let hour = Instant::now() + Duration::from_secs(3600);
        assert!(interrupt_at(&walk).is_some_and(|at| at <= hour));
        walk.timed_out();
        assert!(
            matches!(walk.next(), Step::Skipped(_)),
            "b is skipped: the chain's time has ended"
        );
        assert!(matches!(walk.next(), Step::Done));
        walk.finish(&mut trace, None);
        let failures: Vec<String> = trace
            .iter()
            .filter_map(|view| {
                let value = serde_json::to_value(&view).unwrap();
                value
                    .get("failure")
                    .and_then(|f| f.as_str())
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(failures, ["deadline", "skipped"]);
    }
}
