//! The compiled engine of one `cedar` declaration: policies, entities and the optional schema,
//! loaded and checked once; each call evaluated with Cedar's `Authorizer`.

use std::collections::{BTreeSet, HashMap};
use std::str::FromStr;

use cedar_policy::{
    Authorizer, Decision, Entities, EntityTypeName, PolicyId, PolicySet, Schema, ValidationMode,
    Validator,
};
use serde_json::Value;

use super::request::cedar_request;
use crate::events::Event;

/// What Cedar decided, in the terms of the outcome it gives (ids shown and sorted).
#[derive(Debug, PartialEq, Eq)]
pub enum Decided {
    Continue,
    /// Determining permits that ask for approval, and the approver role of the first.
    Approval {
        ids: Vec<String>,
        role: Option<String>,
    },
    /// Determining forbids.
    Forbidden {
        ids: Vec<String>,
    },
    /// No permit applies and `no_decision` is `block`.
    NoPermit,
}

/// One declaration's engine.
pub struct Engine {
    policies: PolicySet,
    entities: Entities,
    namespace: Option<String>,
    /// The shown id of each policy: its `@id` annotation, else Cedar's id.
    shown: HashMap<PolicyId, String>,
    no_decision_blocks: bool,
    errors_fail: bool,
}

/// The hook points a Cedar policy decides on.
const HOOKS: [&str; 3] = ["tool.before", "tool.after", "model.before"];

/// Words a Cedar name may not use (Cedar's reserved identifiers).
const RESERVED: [&str; 10] = [
    "true", "false", "if", "then", "else", "in", "is", "like", "has", "__cedar",
];

fn setting<'a>(settings: &'a Value, key: &str) -> Option<&'a Value> {
    settings.get(key).filter(|v| !v.is_null())
}

/// A setting that is one of `choices` (the first when absent): its index.
fn choice(settings: &Value, key: &str, choices: [&str; 2]) -> Result<usize, String> {
    let Some(value) = setting(settings, key) else {
        return Ok(0);
    };
    value
        .as_str()
        .and_then(|v| choices.iter().position(|c| *c == v))
        .ok_or_else(|| format!("{key}: must be {} or {} (I38)", choices[0], choices[1]))
}

/// A namespace is a Cedar name: identifiers joined by `::`.
fn checked_namespace(namespace: &str) -> Result<(), String> {
    let identifier = |part: &str| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !RESERVED.contains(&part)
    };
    let parsed = EntityTypeName::from_str(&format!("{namespace}::Agent")).is_ok();
    if parsed && namespace.split("::").all(identifier) {
        Ok(())
    } else {
        Err("namespace: not a Cedar name (I38)".to_owned())
    }
}

impl Engine {
    /// Loads `{"policies", "schema"?, "schema_format"?, "entities"?, "namespace"?,
    /// "no_decision"?, "on_error"?}`; `Err` says what does not load.
    pub fn load(settings: &Value) -> Result<Engine, String> {
        let text = match setting(settings, "policies") {
            Some(Value::String(text)) => text.clone(),
            _ => return Err("policies: required, Cedar policy text (I38)".to_owned()),
        };
        let policies = PolicySet::from_str(&text).map_err(|e| format!("policies: {e} (I38)"))?;
        if policies.templates().next().is_some() {
            return Err("policies: a template (?principal, ?resource) is no policy (I38)".into());
        }
        let mut shown: HashMap<PolicyId, String> = HashMap::new();
        let mut seen = BTreeSet::new();
        for policy in policies.policies() {
            let id = policy
                .annotation("id")
                .map_or_else(|| policy.id().to_string(), str::to_owned);
            if !seen.insert(id.clone()) {
                return Err(format!("policies: two policies have the id {id:?} (I38)"));
            }
            shown.insert(policy.id().clone(), id);
        }
        let json_schema = choice(settings, "schema_format", ["cedar", "json"])? == 1;
        let schema = match setting(settings, "schema") {
            None => None,
            Some(Value::String(text)) if json_schema => {
                Some(Schema::from_json_str(text).map_err(|e| format!("schema: {e} (I38)"))?)
            }
            Some(Value::String(text)) => Some(
                Schema::from_cedarschema_str(text)
                    .map_err(|e| format!("schema: {e} (I38)"))?
                    .0,
            ),
            Some(_) => return Err("schema: must be schema text (I38)".to_owned()),
        };
        if let Some(schema) = &schema {
            let result = Validator::new(schema.clone()).validate(&policies, ValidationMode::Strict);
            let first = result.validation_errors().next().map(ToString::to_string);
            if let Some(error) = first {
                return Err(format!(
                    "policies: the schema rejects a policy: {error} (I38)"
                ));
            }
        }
        let entities = match setting(settings, "entities") {
            None => Entities::from_json_value(Value::Array(Vec::new()), schema.as_ref()),
            Some(list @ Value::Array(_)) => {
                Entities::from_json_value(list.clone(), schema.as_ref())
            }
            Some(_) => return Err("entities: must be a list of Cedar entities (I38)".to_owned()),
        }
        .map_err(|e| format!("entities: {e} (I38)"))?;
        let namespace = match setting(settings, "namespace") {
            None => None,
            Some(Value::String(ns)) => {
                checked_namespace(ns)?;
                Some(ns.clone())
            }
            Some(_) => return Err("namespace: not a Cedar name (I38)".to_owned()),
        };
        Ok(Engine {
            policies,
            entities,
            namespace,
            shown,
            no_decision_blocks: choice(settings, "no_decision", ["block", "continue"])? == 0,
            errors_fail: choice(settings, "on_error", ["fail", "skip"])? == 0,
        })
    }

    /// Decides the event of one call; `Err` is the type name of what the middleware raises.
    pub fn decide(
        &self,
        hook: &str,
        event: &Event,
        attributes: Option<&Value>,
    ) -> Result<Decided, &'static str> {
        if !HOOKS.contains(&hook) {
            // Declared for a hook point the built-in refuses when its spec loads (I38); the
            // behaviour form raises what the other testees raise for such an event.
            return Err("TypeError");
        }
        let request =
            cedar_request(hook, event, attributes, self.namespace.as_deref()).map_err(|e| {
                eprintln!("harnessweaver-testee: cedar: {}", e.0);
                "CedarRequestError"
            })?;
        let response = Authorizer::new().is_authorized(&request, &self.policies, &self.entities);
        let diagnostics = response.diagnostics();
        if self.errors_fail && diagnostics.errors().next().is_some() {
            return Err("CedarEvaluationError");
        }
        let determining: Vec<&PolicyId> = diagnostics.reason().collect();
        Ok(match response.decision() {
            Decision::Allow => self.allowed(&determining),
            Decision::Deny if determining.is_empty() => {
                if self.no_decision_blocks {
                    Decided::NoPermit
                } else {
                    Decided::Continue
                }
            }
            Decision::Deny => Decided::Forbidden {
                ids: self.ids(determining.iter().copied()),
            },
        })
    }

    /// The permits that ask for approval suspend; none, and the request continues.
    fn allowed(&self, determining: &[&PolicyId]) -> Decided {
        let approval = |id: &PolicyId| {
            let annotation = |key| self.policies.annotation(id, key);
            annotation("requireApproval").or_else(|| annotation("escalate"))
        };
        let asking: Vec<&PolicyId> = determining
            .iter()
            .copied()
            .filter(|id| approval(id).is_some())
            .collect();
        let ids = self.ids(asking.iter().copied());
        let Some(first) = ids.first() else {
            return Decided::Continue;
        };
        let role = asking
            .iter()
            .find(|id| self.shown.get(**id) == Some(first))
            .and_then(|id| approval(id))
            .filter(|role| !role.is_empty())
            .map(str::to_owned);
        Decided::Approval { ids, role }
    }

    /// Shown ids, deduplicated and sorted by code point (UTF-8 order is code point order).
    fn ids<'a>(&self, policies: impl Iterator<Item = &'a PolicyId>) -> Vec<String> {
        let ids: BTreeSet<String> = policies
            .map(|id| {
                self.shown
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| id.to_string())
            })
            .collect();
        ids.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn call(args: &Value) -> Event {
        Event {
            type_name: Arc::from("ToolCallEvent"),
            data: Arc::new(json!({"step": 1, "tool": {"name": "refund"},
                "call": {"name": "refund", "arguments": args}})),
        }
    }

    fn engine(settings: &Value) -> Engine {
        Engine::load(settings).unwrap_or_else(|e| panic!("{e}"))
    }

    fn decide(policies: &str, args: &Value) -> Result<Decided, &'static str> {
        engine(&json!({"policies": policies})).decide("tool.before", &call(args), None)
    }

    #[test]
    fn a_forbid_blocks_with_the_shown_ids_sorted_by_code_point() {
        let policies = r#"
            permit(principal, action, resource);
            @id("zeta") forbid(principal, action == Action::"tool.before", resource);
            forbid(principal, action, resource) when { context.arguments.amount > 100 };
            @id("Éclair") forbid(principal, action, resource is Tool);
            @id("alpha") forbid(principal, action, resource == Tool::"other");
        "#;
        let decided = decide(policies, &json!({"amount": 500}));
        let ids = ["policy2", "zeta", "Éclair"].map(str::to_owned).to_vec();
        assert_eq!(decided, Ok(Decided::Forbidden { ids }));
        let decided = decide(policies, &json!({"amount": 5}));
        let ids = ["zeta", "Éclair"].map(str::to_owned).to_vec();
        assert_eq!(decided, Ok(Decided::Forbidden { ids }));
    }

    #[test]
    fn a_permit_continues_and_no_permit_is_the_no_decision_setting() {
        assert_eq!(
            decide("permit(principal, action, resource);", &json!({})),
            Ok(Decided::Continue)
        );
        let none = "permit(principal, action, resource == Tool::\"other\");";
        assert_eq!(decide(none, &json!({})), Ok(Decided::NoPermit));
        let lenient = engine(&json!({"policies": none, "no_decision": "continue"}));
        assert_eq!(
            lenient.decide("tool.before", &call(&json!({})), None),
            Ok(Decided::Continue)
        );
    }

    #[test]
    fn permits_asking_for_approval_suspend_with_the_first_ones_role() {
        let policies = r#"
            @id("b-rule") @escalate("finance") permit(principal, action, resource);
            @id("a-rule") @requireApproval("security") @escalate("ops") permit(principal, action, resource);
            @id("plain") permit(principal, action, resource);
            @id("c-rule") @requireApproval permit(principal, action, resource) when { context.arguments.flag };
        "#;
        let decided = decide(policies, &json!({"flag": false}));
        let ids = ["a-rule", "b-rule"].map(str::to_owned).to_vec();
        assert_eq!(
            decided,
            Ok(Decided::Approval {
                ids,
                role: Some("security".into())
            })
        );
        // An annotation without a value gives no role.
        let only_c = r#"@id("c") @requireApproval permit(principal, action, resource);"#;
        let decided = decide(only_c, &json!({}));
        assert_eq!(
            decided,
            Ok(Decided::Approval {
                ids: vec!["c".into()],
                role: None
            })
        );
    }

    #[test]
    fn an_evaluation_error_raises_unless_skipped() {
        let policies = r"
            permit(principal, action, resource);
            forbid(principal, action, resource) when { context.arguments.missing == 1 };
        ";
        assert_eq!(decide(policies, &json!({})), Err("CedarEvaluationError"));
        let skip = engine(&json!({"policies": policies, "on_error": "skip"}));
        assert_eq!(
            skip.decide("tool.before", &call(&json!({})), None),
            Ok(Decided::Continue)
        );
    }

    #[test]
    fn a_request_that_cannot_be_built_raises_its_own_error() {
        let decided = decide("permit(principal, action, resource);", &json!({"x": 0.5}));
        assert_eq!(decided, Err("CedarRequestError"));
        // An event of a hook point no Cedar policy decides on raises what the others raise.
        let engine = engine(&json!({"policies": "permit(principal, action, resource);"}));
        let decided = engine.decide("tool.after2", &call(&json!({})), None);
        assert_eq!(decided, Err("TypeError"));
    }

    #[test]
    fn texts_that_do_not_load_are_refused_once_at_load() {
        let refused = |settings: Value| Engine::load(&settings).err().unwrap_or_default();
        assert!(refused(json!({"policies": "permit(principal"})).starts_with("policies: "));
        let template = "permit(principal == ?principal, action, resource);";
        assert!(refused(json!({"policies": template})).contains("template"));
        let twice = r#"@id("x") permit(principal, action, resource); @id("x") forbid(principal, action, resource);"#;
        assert!(refused(json!({"policies": twice})).contains("\"x\""));
        // A shown id equal to another policy's Cedar id is the same id too.
        let clash = r#"permit(principal, action, resource); @id("policy0") forbid(principal, action, resource);"#;
        assert!(!refused(json!({"policies": clash})).is_empty());
        for ns in ["", "1abc", "Acme::", "a b", "if", "Acme :: Corp", " Acme"] {
            let message = refused(json!({"policies": "", "namespace": ns}));
            assert!(message.starts_with("namespace: "), "{ns:?}: {message}");
        }
        assert!(Engine::load(&json!({"policies": "", "namespace": "Acme::Corp_2"})).is_ok());
        let bad = json!({"policies": "", "no_decision": "allow"});
        assert!(refused(bad).starts_with("no_decision: "));
        assert!(refused(json!({"policies": "", "entities": {"uid": {}}})).starts_with("entities: "));
        assert!(refused(json!({"policies": 5})).starts_with("policies: "));
    }

    #[test]
    fn the_schema_validates_policies_and_entities_strictly_in_either_format() {
        let schema = r#"entity User; entity Agent; entity Tool { owner: String };
            action "tool.before" appliesTo { principal: [User, Agent], resource: [Tool], context: {} };"#;
        let good = r#"permit(principal, action == Action::"tool.before", resource) when { resource.owner == "a" };"#;
        assert!(Engine::load(&json!({"policies": good, "schema": schema})).is_ok());
        let unknown = r"permit(principal, action, resource) when { resource.nope == 1 };";
        let message = Engine::load(&json!({"policies": unknown, "schema": schema})).err();
        assert!(message.is_some_and(|m| m.starts_with("policies: the schema rejects")));
        let entities =
            json!([{"uid": {"type": "Tool", "id": "t"}, "attrs": {"owner": 5}, "parents": []}]);
        let message =
            Engine::load(&json!({"policies": good, "schema": schema, "entities": entities})).err();
        assert!(message.is_some_and(|m| m.starts_with("entities: ")));
        let json_schema = json!({"": {"entityTypes": {"Tool": {}}, "actions": {}}}).to_string();
        let loaded =
            Engine::load(&json!({"policies": "", "schema": json_schema, "schema_format": "json"}));
        assert!(loaded.is_ok());
        let as_cedar = Engine::load(&json!({"policies": "", "schema": json_schema}));
        assert!(as_cedar.is_err(), "JSON is not Cedar schema syntax");
    }

    #[test]
    fn entities_and_the_namespace_reach_the_policies() {
        let settings = json!({
            "namespace": "Acme",
            "policies": r#"permit(principal in Acme::Group::"admins", action, resource is Acme::Tool);"#,
            "entities": [
                {"uid": {"type": "Acme::User", "id": "alice"}, "attrs": {}, "parents": [{"type": "Acme::Group", "id": "admins"}]},
                {"uid": {"type": "Acme::Group", "id": "admins"}, "attrs": {}, "parents": []}
            ],
        });
        let engine = engine(&settings);
        let alice = json!({"user": "alice"});
        assert_eq!(
            engine.decide("tool.before", &call(&json!({})), Some(&alice)),
            Ok(Decided::Continue)
        );
        let bob = json!({"user": "bob"});
        assert_eq!(
            engine.decide("tool.before", &call(&json!({})), Some(&bob)),
            Ok(Decided::NoPermit)
        );
    }
}
