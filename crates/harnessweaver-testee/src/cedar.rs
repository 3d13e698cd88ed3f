//! The behaviour `cedar` (ruling I38): a Cedar policy set, compiled once per declaration from
//! the texts the case gives, decides each call on the request `request.rs` builds.
//!
//! Its answers are the built-in's in every implementation: a forbid blocks with the shown ids
//! of the determining policies, a permit continues (or suspends when it asks for approval), no
//! permit is the `no_decision` setting. Failures are raised under the exact type names the
//! other implementations raise (`CedarRequestError`, `CedarEvaluationError`, `CedarLoadError`
//! for texts that do not load, `TypeError` for an event no Cedar policy decides on), so the
//! bus judges them under the middleware's fail mode.

mod engine;
mod request;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use harnessweaver_core::OutcomeKind;
use serde_json::{Map, Value};

use crate::behaviours::{Outcome, Reply, Returned};
use crate::events::Event;
pub use engine::{Decided, Engine};

/// A loaded engine, or why its texts do not load.
type Loaded = Arc<Result<Engine, String>>;

/// The engines of a case's `cedar` behaviours, by the behaviour's address: built on its
/// first call, kept for every later one (a text that does not load fails every call). The
/// settings are kept too, so that another behaviour at a freed address is never taken for it.
#[derive(Default)]
pub struct Engines(Mutex<HashMap<usize, (Value, Loaded)>>);

impl Engines {
    fn of(&self, settings: &Value) -> Loaded {
        let mut engines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = std::ptr::from_ref(settings) as usize;
        match engines.get(&at) {
            Some((kept, loaded)) if kept == settings => loaded.clone(),
            _ => {
                let loaded = Arc::new(Engine::load(settings));
                engines.insert(at, (settings.clone(), loaded.clone()));
                loaded
            }
        }
    }
}

/// I28's bounds on an outcome's texts, in code points.
const MAX_CODE: usize = 128;
const MAX_REASON: usize = 4096;

/// One call of `{"cedar": settings}` at `hook` on `event`, with the envelope's `attributes`.
pub fn perform(
    engines: &Engines,
    settings: &Value,
    hook: &str,
    event: &Event,
    attributes: Option<&Value>,
) -> Reply {
    let engine = engines.of(settings);
    let engine = match &*engine {
        Ok(engine) => engine,
        Err(problem) => {
            eprintln!("harnessweaver-testee: cedar: {problem}");
            return Reply::Raised("CedarLoadError".to_owned());
        }
    };
    match engine.decide(hook, event, attributes) {
        Ok(decided) => Reply::Returned(outcome(decided)),
        Err(raised) => Reply::Raised(raised.to_owned()),
    }
}

/// The outcome of a decision, its texts cut to I28's bounds.
pub fn outcome(decided: Decided) -> Returned {
    let (kind, reason, code, role) = match decided {
        Decided::Continue => (OutcomeKind::Continue, None, None, None),
        Decided::Approval { ids, role } => (
            OutcomeKind::Suspend,
            Some(format!(
                "approval required by Cedar policy {}",
                ids.join(", ")
            )),
            Some(format!("cedar:{}", ids.join(","))),
            role,
        ),
        Decided::Forbidden { ids } => (
            OutcomeKind::Block,
            Some(format!("forbidden by Cedar policy {}", ids.join(", "))),
            Some(format!("cedar:{}", ids.join(","))),
            None,
        ),
        Decided::NoPermit => (
            OutcomeKind::Block,
            Some("no Cedar policy permits this request".to_owned()),
            Some("cedar:no_permit".to_owned()),
            None,
        ),
    };
    let mut fields = Map::new();
    if let Some(reason) = reason {
        fields.insert("reason".into(), Value::String(cut(&reason, MAX_REASON)));
    }
    if let Some(code) = code {
        fields.insert("code".into(), Value::String(cut(&code, MAX_CODE)));
    }
    if let Some(role) = role {
        fields.insert("approver_role".into(), Value::String(role));
    }
    Returned::Outcome(Outcome {
        kind,
        fields,
        warnings: None,
        modified: None,
    })
}

/// The first `max` code points of `text`.
fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(decided: Decided) -> (OutcomeKind, Map<String, Value>) {
        match outcome(decided) {
            Returned::Outcome(o) => (o.kind, o.fields),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_decision_gives_its_outcome_texts() {
        let ids = vec!["a".to_owned(), "b".to_owned()];
        let (kind, f) = fields(Decided::Forbidden { ids: ids.clone() });
        assert_eq!(kind, OutcomeKind::Block);
        assert_eq!(f["reason"], "forbidden by Cedar policy a, b");
        assert_eq!(f["code"], "cedar:a,b");
        assert!(!f.contains_key("approver_role"));
        let (kind, f) = fields(Decided::Approval {
            ids,
            role: Some("ops".into()),
        });
        assert_eq!(kind, OutcomeKind::Suspend);
        assert_eq!(f["reason"], "approval required by Cedar policy a, b");
        assert_eq!(f["code"], "cedar:a,b");
        assert_eq!(f["approver_role"], "ops");
        let (kind, f) = fields(Decided::NoPermit);
        assert_eq!(kind, OutcomeKind::Block);
        assert_eq!(f["reason"], "no Cedar policy permits this request");
        assert_eq!(f["code"], "cedar:no_permit");
        let (kind, f) = fields(Decided::Continue);
        assert_eq!(kind, OutcomeKind::Continue);
        assert!(f.is_empty());
    }

    #[test]
    fn codes_and_reasons_are_cut_to_their_bounds_in_code_points() {
        let ids: Vec<String> = (0..100).map(|i| format!("é{i:03}")).collect();
        let (_, f) = fields(Decided::Forbidden { ids });
        let code = f["code"].as_str().unwrap_or_default();
        assert_eq!(code.chars().count(), MAX_CODE);
        assert!(code.starts_with("cedar:é000,é001"));
        let (_, f) = fields(Decided::Forbidden {
            ids: vec!["x".repeat(5000)],
        });
        assert_eq!(
            f["reason"].as_str().unwrap_or_default().chars().count(),
            MAX_REASON
        );
    }

    #[test]
    fn an_engine_is_built_once_per_behaviour_and_a_bad_text_fails_every_call() {
        let engines = Engines::default();
        let settings = serde_json::json!({"policies": "permit(principal, action, resource);"});
        let first = engines.of(&settings);
        assert!(Arc::ptr_eq(&first, &engines.of(&settings)));
        let bad = serde_json::json!({"policies": "nope"});
        let event = Event {
            type_name: Arc::from("ToolCallEvent"),
            data: Arc::new(serde_json::json!({"tool": {"name": "t"}, "call": {"name": "t"}})),
        };
        for _ in 0..2 {
            let reply = perform(&engines, &bad, "tool.before", &event, None);
            assert!(
                matches!(reply, Reply::Raised(ref kind) if kind == "CedarLoadError"),
                "{reply:?}"
            );
        }
    }
}
