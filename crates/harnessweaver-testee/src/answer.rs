//! What a behaviour's result becomes for the core's walk, and what the walk's ending becomes
//! for §6.2: the testee's share of an emit, like the binding's `judge` and `finish` in
//! `harnessweaver-py/src/walk.rs`. No rule of the bus is decided here: the walk decides.

use harnessweaver_core::contract::{check, ContractMode, Rule};
use harnessweaver_core::failure::FailureKind;
use harnessweaver_core::outcome::{text_bound, within};
use harnessweaver_core::symbol::{Texts, NO_SYM};
use harnessweaver_core::walk::{Answer, Ending};
use harnessweaver_core::warning::{keep, Warnings};
use harnessweaver_core::HookId;
use serde_json::{json, Map, Value};

use crate::behaviours::Outcome;
use crate::events::{contract_view, Event};
use crate::text::has_lone;

/// A returned outcome, judged: an answer for `Walk::answer` with the objects the verdict
/// speaks of, or a failure for `Walk::failed`.
pub(crate) enum Judged {
    Answer {
        answer: Answer,
        /// The outcome object, kept when the verdict says so ([`Verdict::keep`]).
        ///
        /// [`Verdict::keep`]: harnessweaver_core::walk::Verdict::keep
        keep: Box<Outcome>,
        /// The modified event, taken when the verdict accepts it.
        modified: Option<Event>,
        /// What the answer keeps of its warnings (I24).
        warnings: Option<Warnings>,
        /// The contract rule its modification breaks, looked for only on a bus with a contract
        /// mode (I14).
        broken: Option<Rule>,
    },
    /// A failure of I5, with the exception's type name for `exception`.
    Failed(FailureKind, Option<&'static str>),
}

/// What a returned outcome means as an answer (ruling 9, I16, I18, I24), its code interned in
/// the walk's `texts`.
pub(crate) fn judge(
    outcome: Outcome,
    hook: HookId,
    before: &Event,
    contracts: Option<ContractMode>,
    texts: &mut Texts,
) -> Judged {
    // Texts that are not strings fail when the outcome is built: a TypeError (Python).
    let fields = ["reason", "code", "approver_role", "to"];
    let fields = fields.iter().filter_map(|k| outcome.fields.get(*k));
    if fields.clone().any(|v| !v.is_string() && !v.is_null()) {
        return Judged::Failed(FailureKind::Exception, Some("TypeError"));
    }
    if fields.filter_map(Value::as_str).any(has_lone) {
        return Judged::Failed(FailureKind::InvalidReturn, None); // I16
    }
    if !texts_within_bounds(&outcome) {
        return Judged::Failed(FailureKind::InvalidReturn, None); // I28
    }
    if let Some(modified) = &outcome.modified {
        if modified.type_name != before.type_name {
            return Judged::Failed(FailureKind::WrongEventType, None); // I18
        }
    }
    let Ok(warnings) = judge_warnings(outcome.warnings.as_ref()) else {
        return Judged::Failed(FailureKind::InvalidReturn, None);
    };
    let broken = match (contracts, &outcome.modified) {
        (Some(_), Some(after)) => check(
            hook,
            &contract_view(hook, &before.data),
            &contract_view(hook, &after.data),
        ),
        _ => None,
    };
    let code = outcome.fields.get("code").and_then(Value::as_str);
    let answer = Answer::Outcome {
        kind: outcome.kind,
        modified: outcome.modified.is_some(),
        code: code.map_or(NO_SYM, |code| texts.intern(code)),
    };
    Judged::Answer {
        answer,
        modified: outcome.modified.clone(),
        keep: Box::new(outcome),
        warnings,
        broken,
    }
}

/// Whether each text of an outcome is within its bound (I28). A lone surrogate's mark counts
/// one character, as the lone code point does in Python.
fn texts_within_bounds(outcome: &Outcome) -> bool {
    ["reason", "code", "approver_role", "to"].iter().all(|key| {
        let text = outcome.fields.get(*key).and_then(Value::as_str);
        !matches!(text, Some(t) if !within(t, text_bound(key)))
    })
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

/// The combined outcome of §6.2 for the walk's ending: the outcome object kept last, the
/// fresh Block of a closed failure (I6), or a plain `Continue`.
pub(crate) fn ending_json(ending: Ending, kept: Option<&Outcome>) -> Value {
    match (ending, kept) {
        (Ending::Kept, Some(kept)) => outcome_json(kept),
        (Ending::Block { reason, code }, _) => {
            let code = harnessweaver_core::symbol::text(code).unwrap_or_default();
            json!({"kind": "block", "reason": reason, "code": code})
        }
        _ => json!({"kind": "continue", "modified": false}),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use harnessweaver_core::catalogue::hook_id;
    use harnessweaver_core::OutcomeKind;

    use super::*;

    fn event(type_name: &str) -> Event {
        Event {
            type_name: Arc::from(type_name),
            data: Arc::new(json!({})),
        }
    }

    fn block(fields: Value, warnings: Option<Value>) -> Outcome {
        Outcome {
            kind: OutcomeKind::Block,
            fields: match fields {
                Value::Object(fields) => fields,
                _ => Map::new(),
            },
            warnings,
            modified: None,
        }
    }

    fn judged(outcome: Outcome, texts: &mut Texts) -> Judged {
        let hook = hook_id("tool.before").unwrap();
        judge(outcome, hook, &event("ToolCallEvent"), None, texts)
    }

    #[test]
    fn a_good_outcome_is_an_answer_with_its_code_interned_in_the_walks_texts() {
        let mut texts = Texts::new();
        let outcome = block(json!({"reason": "cap", "code": "over_cap"}), None);
        let Judged::Answer { answer, keep, .. } = judged(outcome, &mut texts) else {
            panic!("a Block with text fields is an answer");
        };
        let Answer::Outcome { kind, code, .. } = answer else {
            panic!("an outcome");
        };
        assert_eq!(kind, OutcomeKind::Block);
        assert_eq!(
            harnessweaver_core::symbol::text(code).as_deref(),
            Some("over_cap")
        );
        assert_eq!(
            outcome_json(&keep),
            json!({"kind": "block", "reason": "cap", "code": "over_cap"})
        );
    }

    #[test]
    fn what_cannot_be_an_answer_is_the_failure_the_other_implementations_see() {
        let mut texts = Texts::new();
        let failure = |judged: Judged| match judged {
            Judged::Failed(kind, exception) => Some((kind, exception)),
            Judged::Answer { .. } => None,
        };
        // A reason that is no text fails as the outcome is built (a TypeError in Python).
        let typed = judged(block(json!({"reason": 7}), None), &mut texts);
        assert_eq!(
            failure(typed),
            Some((FailureKind::Exception, Some("TypeError")))
        );
        // I24: warnings that are no list of texts make the answer invalid.
        let warned = judged(
            block(json!({"reason": "r"}), Some(json!("one"))),
            &mut texts,
        );
        assert_eq!(failure(warned), Some((FailureKind::InvalidReturn, None)));
        // I18: a modified event of another type.
        let mut wrong = block(json!({"reason": "r"}), None);
        wrong.kind = OutcomeKind::Continue;
        wrong.modified = Some(event("ModelRequestEvent"));
        assert_eq!(
            failure(judged(wrong, &mut texts)),
            Some((FailureKind::WrongEventType, None))
        );
    }

    #[test]
    fn the_ending_becomes_the_combined_outcome_of_section_6_2() {
        let kept = block(json!({"reason": "cap"}), None);
        assert_eq!(
            ending_json(Ending::Kept, Some(&kept)),
            json!({"kind": "block", "reason": "cap", "code": null})
        );
        let closed = Ending::Block {
            reason: "middleware a failed: exception".into(),
            code: harnessweaver_core::symbol::intern("middleware_error"),
        };
        assert_eq!(
            ending_json(closed, Some(&kept)),
            json!({"kind": "block", "reason": "middleware a failed: exception",
                   "code": "middleware_error"})
        );
        assert_eq!(
            ending_json(Ending::Continue, Some(&kept)),
            json!({"kind": "continue", "modified": false})
        );
    }
}
