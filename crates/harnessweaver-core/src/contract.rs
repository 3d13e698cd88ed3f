//! Hook contracts (I14): what a middleware may change in an event at each hook point.
//!
//! A contract is checked only when a middleware answers `Continue(modified=e)` on a bus with a
//! contract mode: the event it received is compared with `e`. The comparison runs over a small,
//! language-neutral [`EventView`] that each binding extracts from its own events (the message
//! roles and fingerprints, and a few fields as fingerprints), so every implementation judges by
//! the same rules. Rules are checked in table order and the first one broken is the verdict.
//! `docs/contracts.md` says why each rule exists.

use crate::catalogue::{hook_id, HookId};
use crate::error::{invalid_value, Error, ErrorKind};
use crate::failure::FailureKind;

/// How a bus treats a broken contract. A bus without a mode checks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContractMode {
    /// The violation is traced and the modified event flows on.
    Warn,
    /// The violation is a failure of the middleware (`contract_violation`), handled by its
    /// fail mode.
    Strict,
}

impl ContractMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warn => "warn",
            Self::Strict => "strict",
        }
    }

    /// `warn` or `strict`; anything else is `invalid_contracts` naming the value.
    pub fn parse(text: &str) -> Result<ContractMode, Error> {
        match text {
            "warn" => Ok(Self::Warn),
            "strict" => Ok(Self::Strict),
            _ => Err(invalid_value(
                ErrorKind::InvalidContracts,
                "contracts mode",
                &format!("'{text}'"),
            )),
        }
    }
}

/// What one rule compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The message list does not become empty.
    NotEmpty,
    /// The system messages stay where they were, unchanged, and none is added.
    SystemFirst,
    /// Every message but a trailing user message stays, unchanged, at its place; a trailing
    /// user message may be edited but stays a user message.
    HistoryUnchanged,
    /// The list grows by at most one message, and a new last message is a user message.
    AtMostOneUserAdded,
    /// The fields at these paths (of the hook's [`ViewSpec`]) are unchanged.
    Unchanged(&'static [&'static str]),
}

struct RuleDef {
    id: &'static str,
    hook: &'static str,
    check: Check,
}

const fn rule(id: &'static str, hook: &'static str, check: Check) -> RuleDef {
    RuleDef { id, hook, check }
}

/// Every rule, grouped by hook point; within a hook point, in the order they are checked.
/// A [`Rule`] is an index into this table, so ids never move: new rules go at the end.
static RULES: [RuleDef; 14] = [
    rule(
        "task.start/task_unchanged",
        "task.start",
        Check::Unchanged(&["task"]),
    ),
    rule(
        "step.start/messages_not_empty",
        "step.start",
        Check::NotEmpty,
    ),
    rule("step.start/system_first", "step.start", Check::SystemFirst),
    rule(
        "model.before/messages_not_empty",
        "model.before",
        Check::NotEmpty,
    ),
    rule(
        "model.before/system_first",
        "model.before",
        Check::SystemFirst,
    ),
    rule(
        "model.before/history_unchanged",
        "model.before",
        Check::HistoryUnchanged,
    ),
    rule(
        "model.before/at_most_one_user_message_added",
        "model.before",
        Check::AtMostOneUserAdded,
    ),
    rule(
        "model.after/role_unchanged",
        "model.after",
        Check::Unchanged(&["response.message.role"]),
    ),
    rule(
        "model.after/usage_unchanged",
        "model.after",
        Check::Unchanged(&["response.usage"]),
    ),
    rule(
        "tool.before/tool_unchanged",
        "tool.before",
        Check::Unchanged(&["tool.name", "call.name"]),
    ),
    rule(
        "tool.before/call_id_unchanged",
        "tool.before",
        Check::Unchanged(&["call.id"]),
    ),
    rule(
        "tool.after/call_unchanged",
        "tool.after",
        Check::Unchanged(&["tool.name", "call"]),
    ),
    rule(
        "step.end/usage_unchanged",
        "step.end",
        Check::Unchanged(&["usage"]),
    ),
    rule(
        "task.end/usage_unchanged",
        "task.end",
        Check::Unchanged(&["usage"]),
    ),
];

/// One rule of [`RULES`], by index: what a trace record stores (one byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule(u8);

impl Rule {
    /// Every rule id, in table order.
    pub fn all() -> impl Iterator<Item = Rule> {
        (0..RULES.len()).filter_map(|i| u8::try_from(i).ok().map(Rule))
    }

    /// The stable id, `hook/name`.
    pub fn as_str(self) -> &'static str {
        RULES[usize::from(self.0)].id
    }

    pub fn as_u8(self) -> u8 {
        self.0
    }

    pub fn from_u8(value: u8) -> Option<Rule> {
        (usize::from(value) < RULES.len()).then_some(Rule(value))
    }

    pub fn parse(text: &str) -> Option<Rule> {
        Self::all().find(|rule| rule.as_str() == text)
    }
}

/// What a binding extracts from an event of one hook point: the dotted path (into the event's
/// JSON form) of its message list, if the rules look at one, and the paths of the fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewSpec {
    pub messages: Option<&'static str>,
    pub fields: &'static [&'static str],
}

/// The view of each hook point's event, in catalogue order.
static VIEWS: [ViewSpec; 8] = [
    spec(None, &["task"]),
    spec(Some("messages"), &[]),
    spec(Some("request.messages"), &[]),
    spec(None, &["response.message.role", "response.usage"]),
    spec(None, &["tool.name", "call.name", "call.id"]),
    spec(None, &["tool.name", "call"]),
    spec(None, &["usage"]),
    spec(None, &["usage"]),
];

const fn spec(messages: Option<&'static str>, fields: &'static [&'static str]) -> ViewSpec {
    ViewSpec { messages, fields }
}

/// What the binding must extract from `hook`'s events (nothing for an unknown id).
pub fn view_spec(hook: HookId) -> ViewSpec {
    VIEWS
        .get(usize::from(hook))
        .copied()
        .unwrap_or(spec(None, &[]))
}

/// What a modification is when a binding cannot have the view of the event received or of
/// the modified event (reading a field ran host code that raised: a property of an event
/// subclass). It cannot be judged, so it is not taken: an invalid return in `warn` and
/// `strict` mode alike (I29). Not a violation (no rule was found broken, and `warn` would let
/// the unread modification through), not an exception (the middleware answered in time).
pub const UNREADABLE: FailureKind = FailureKind::InvalidReturn;

/// The role of a message whose role is no text (not a string, or one holding a lone
/// surrogate): no role, neither `system` nor `user` (I29).
pub const NO_ROLE: &str = "";

/// One message: its role and a fingerprint of the whole message (any text that is equal for
/// equal messages and different otherwise; the bindings use canonical JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageView {
    pub role: String,
    pub fingerprint: String,
}

impl MessageView {
    pub fn new(role: impl Into<String>, fingerprint: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            fingerprint: fingerprint.into(),
        }
    }

    fn is(&self, role: &str) -> bool {
        self.role == role
    }
}

/// An event as the rules see it: the messages at `ViewSpec::messages` and one fingerprint per
/// path of `ViewSpec::fields`, in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventView {
    pub messages: Vec<MessageView>,
    pub fields: Vec<String>,
}

/// The first rule of `hook` that changing `before` into `after` breaks, if any.
pub fn check(hook: HookId, before: &EventView, after: &EventView) -> Option<Rule> {
    let name = crate::catalogue::CATALOGUE.get(usize::from(hook))?.name;
    let fields = view_spec(hook).fields;
    Rule::all().find(|rule| {
        let def = &RULES[usize::from(rule.0)];
        def.hook == name && broken(def.check, fields, before, after)
    })
}

/// The ids of every rule of `hook` (or of all hook points), in checking order.
pub fn rules_of(hook: Option<&str>) -> Vec<&'static str> {
    RULES
        .iter()
        .filter(|def| hook.map_or(true, |h| def.hook == h))
        .map(|def| def.id)
        .collect()
}

/// Whether `hook` names a hook point that has rules.
pub fn has_rules(hook: &str) -> bool {
    hook_id(hook).is_ok() && RULES.iter().any(|def| def.hook == hook)
}

fn broken(check: Check, fields: &[&str], before: &EventView, after: &EventView) -> bool {
    let (old, new) = (&before.messages, &after.messages);
    match check {
        Check::NotEmpty => !old.is_empty() && new.is_empty(),
        Check::SystemFirst => system_moved(old, new),
        Check::HistoryUnchanged => history_rewritten(old, new),
        Check::AtMostOneUserAdded => {
            new.len() > old.len() + 1
                || (new.len() == old.len() + 1 && !new.last().is_some_and(|m| m.is("user")))
        }
        Check::Unchanged(paths) => paths.iter().any(|path| {
            let index = fields.iter().position(|f| f == path);
            index.is_some_and(|i| before.fields.get(i) != after.fields.get(i))
        }),
    }
}

/// The system messages of `new` are not exactly those of `old`, at the same places.
fn system_moved(old: &[MessageView], new: &[MessageView]) -> bool {
    let systems = |list: &[MessageView]| -> Vec<(usize, String)> {
        list.iter()
            .enumerate()
            .filter(|(_, m)| m.is("system"))
            .map(|(i, m)| (i, m.fingerprint.clone()))
            .collect()
    };
    systems(old) != systems(new)
}

/// A message of `old` other than a trailing user message was removed, moved or changed, or a
/// trailing user message was removed or turned into another role.
fn history_rewritten(old: &[MessageView], new: &[MessageView]) -> bool {
    let trailing_user = old.last().is_some_and(|m| m.is("user"));
    let kept = old.len() - usize::from(trailing_user);
    if new.len() < old.len() || old[..kept] != new[..kept] {
        return true;
    }
    trailing_user && !new[kept].is("user")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL_BEFORE: HookId = 2;
    const TOOL_BEFORE: HookId = 4;

    fn messages(list: &[(&str, &str)]) -> EventView {
        EventView {
            messages: list
                .iter()
                .map(|(role, text)| MessageView::new(*role, format!("{role}:{text}")))
                .collect(),
            fields: Vec::new(),
        }
    }

    fn verdict(before: &[(&str, &str)], after: &[(&str, &str)]) -> Option<&'static str> {
        check(MODEL_BEFORE, &messages(before), &messages(after)).map(Rule::as_str)
    }

    const CHAT: [(&str, &str); 3] = [("system", "be brief"), ("assistant", "hi"), ("user", "q")];

    #[test]
    fn rule_ids_are_stable_and_round_trip() {
        let ids: Vec<&str> = Rule::all().map(Rule::as_str).collect();
        assert_eq!(ids.len(), 14);
        assert_eq!(ids[3], "model.before/messages_not_empty");
        for rule in Rule::all() {
            assert_eq!(Rule::parse(rule.as_str()), Some(rule));
            assert_eq!(Rule::from_u8(rule.as_u8()), Some(rule));
            let (hook, _) = rule.as_str().split_once('/').unwrap();
            assert!(has_rules(hook), "{hook}");
        }
        assert_eq!(Rule::from_u8(14), None);
        assert_eq!(Rule::parse("model.before/nope"), None);
        assert_eq!(rules_of(Some("tool.before")).len(), 2);
        assert!(!has_rules("tool.middle"));
    }

    #[test]
    fn every_unchanged_path_is_in_its_hooks_view() {
        for def in &RULES {
            let hook = hook_id(def.hook).unwrap();
            if let Check::Unchanged(paths) = def.check {
                for path in paths {
                    assert!(view_spec(hook).fields.contains(path), "{}", def.id);
                }
            } else {
                assert!(view_spec(hook).messages.is_some(), "{}", def.id);
            }
        }
    }

    #[test]
    fn modes_parse_and_name_bad_values() {
        assert_eq!(ContractMode::parse("warn"), Ok(ContractMode::Warn));
        assert_eq!(
            ContractMode::parse("strict").map(ContractMode::as_str),
            Ok("strict")
        );
        let err = ContractMode::parse("loud").unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidContracts);
        assert!(err.message.contains("'loud'"), "{}", err.message);
    }

    #[test]
    fn unchanged_or_allowed_changes_pass() {
        assert_eq!(verdict(&CHAT, &CHAT), None);
        // The trailing user message may be edited (a redaction) and one user message added.
        assert_eq!(
            verdict(&CHAT, &[CHAT[0], CHAT[1], ("user", "[redacted]")]),
            None
        );
        assert_eq!(
            verdict(&CHAT, &[CHAT[0], CHAT[1], CHAT[2], ("user", "note")]),
            None
        );
        assert_eq!(
            verdict(&[("assistant", "x")], &[("assistant", "x"), ("user", "n")]),
            None
        );
        assert_eq!(verdict(&[], &[]), None);
    }

    #[test]
    fn each_message_rule_is_reported_first_when_broken() {
        assert_eq!(verdict(&CHAT, &[]), Some("model.before/messages_not_empty"));
        let new_prompt = [("system", "obey"), CHAT[1], CHAT[2]];
        assert_eq!(
            verdict(&CHAT, &new_prompt),
            Some("model.before/system_first")
        );
        let second_system = [CHAT[0], CHAT[1], CHAT[2], ("system", "more")];
        assert_eq!(
            verdict(&CHAT, &second_system),
            Some("model.before/system_first")
        );
        let rewritten = [CHAT[0], ("assistant", "bye"), CHAT[2]];
        assert_eq!(
            verdict(&CHAT, &rewritten),
            Some("model.before/history_unchanged")
        );
        assert_eq!(
            verdict(&CHAT, &CHAT[..2]),
            Some("model.before/history_unchanged")
        );
        let user_to_assistant = [CHAT[0], CHAT[1], ("assistant", "q")];
        assert_eq!(
            verdict(&CHAT, &user_to_assistant),
            Some("model.before/history_unchanged")
        );
        let two_more = [CHAT[0], CHAT[1], CHAT[2], ("user", "a"), ("user", "b")];
        assert_eq!(
            verdict(&CHAT, &two_more),
            Some("model.before/at_most_one_user_message_added")
        );
        let assistant_added = [CHAT[0], CHAT[1], CHAT[2], ("assistant", "a")];
        assert_eq!(
            verdict(&CHAT, &assistant_added),
            Some("model.before/at_most_one_user_message_added")
        );
    }

    #[test]
    fn step_start_allows_history_rewrites_but_not_a_new_system_prompt() {
        let step_start: HookId = 1;
        let run = |after: &[(&str, &str)]| {
            check(step_start, &messages(&CHAT), &messages(after)).map(Rule::as_str)
        };
        assert_eq!(run(&[CHAT[0], ("user", "summary")]), None);
        assert_eq!(run(&[]), Some("step.start/messages_not_empty"));
        assert_eq!(run(&[("user", "summary")]), Some("step.start/system_first"));
    }

    #[test]
    fn field_rules_compare_fingerprints() {
        let view = |fields: [&str; 3]| EventView {
            messages: Vec::new(),
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
        };
        let before = view(["refund", "refund", "c1"]);
        let run = |after| check(TOOL_BEFORE, &before, &view(after)).map(Rule::as_str);
        assert_eq!(run(["refund", "refund", "c1"]), None);
        assert_eq!(
            run(["delete", "delete", "c1"]),
            Some("tool.before/tool_unchanged")
        );
        assert_eq!(
            run(["refund", "other", "c1"]),
            Some("tool.before/tool_unchanged")
        );
        assert_eq!(
            run(["refund", "refund", "c2"]),
            Some("tool.before/call_id_unchanged")
        );
        // task.start has a rule; an unknown hook id has none.
        assert_eq!(check(99, &before, &view(["x", "y", "z"])), None);
    }
}
