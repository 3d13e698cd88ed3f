//! Matchers (I22): which events of its hook points a middleware applies to.
//!
//! A matcher maps a key (`tool`, `model`) to glob patterns (`*`, `?`, whole name,
//! case-sensitive). It is checked once, when declared or registered; the registry then plans
//! one chain per (hook point, key value), so an emit never matches a pattern itself.
//! Types (a value that is not a string, a list that is not a list) are the binding's to tell:
//! it hands the core [`MatchText::Bad`] with the value as the host language shows it.

use std::sync::Arc;

use crate::catalogue::{hook_name, HookId};
use crate::error::{quote, value_error, Error, ErrorKind};

/// The most patterns one key may list (I22).
pub const MAX_PATTERNS: usize = 32;
/// The most characters (code points) one pattern may hold (I22).
pub const MAX_PATTERN_CHARS: usize = 128;

/// A key a hook point may carry: `tool` (`event.tool.name`) or `model`
/// (`event.request.model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchKey {
    Tool,
    Model,
}

impl MatchKey {
    /// Every key, in the order validation visits them.
    pub const ALL: [Self; 2] = [Self::Tool, Self::Model];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Model => "model",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "tool" => Some(Self::Tool),
            "model" => Some(Self::Model),
            _ => None,
        }
    }

    /// The key `hook` carries, if any (`model.after` carries none: its event has no model).
    pub fn carried_by(hook: HookId) -> Option<Self> {
        match hook_name(hook) {
            "tool.before" | "tool.after" => Some(Self::Tool),
            "model.before" => Some(Self::Model),
            _ => None,
        }
    }
}

/// A checked matcher: for each key it has, 1 to 32 distinct patterns in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Matcher {
    pub tool: Option<Arc<[String]>>,
    pub model: Option<Arc<[String]>>,
}

impl Matcher {
    pub fn patterns(&self, key: MatchKey) -> Option<&[String]> {
        match key {
            MatchKey::Tool => self.tool.as_deref(),
            MatchKey::Model => self.model.as_deref(),
        }
    }

    fn set(&mut self, key: MatchKey, patterns: Arc<[String]>) {
        match key {
            MatchKey::Tool => self.tool = Some(patterns),
            MatchKey::Model => self.model = Some(patterns),
        }
    }

    /// Whether a middleware with this matcher runs on an event of `hook` whose key holds
    /// `value`; `None` is a key that is absent or not text, which matches (I22: a guard that
    /// cannot tell the tool is never skipped). A hook point carrying none of its keys matches.
    pub fn admits(&self, hook: HookId, value: Option<&str>) -> bool {
        let (Some(key), Some(value)) = (MatchKey::carried_by(hook), value) else {
            return true;
        };
        self.patterns(key).map_or(true, |patterns| {
            patterns.iter().any(|p| glob_match(p, value))
        })
    }
}

/// A text as the host language gave it: valid text, or anything else shown as the host
/// language shows it (a number, a string holding a lone surrogate, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchText<'a> {
    Text(&'a str),
    Bad(String),
}

/// A key's value as given: one pattern, a list of them, or something else (shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchValue<'a> {
    One(MatchText<'a>),
    List(Vec<MatchText<'a>>),
    Other(String),
}

/// A `match` mapping's entries in the mapping's order.
pub type MatchInput<'a> = [(MatchText<'a>, MatchValue<'a>)];

/// `*` any run of characters, `?` one character, everything else itself; the whole name.
/// The classic linear backtracking walk: only the last `*` is ever returned to.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

fn invalid(shown: &str, detail: &str) -> Error {
    value_error(ErrorKind::InvalidMatch, "match", shown, Some(detail))
}

/// Checks a `match` mapping (I22) against the hook points it will apply to, in the order of
/// I22: empty, unknown keys, each key's value (`tool`, then `model`), keys not carried.
pub fn parse_matcher(entries: &MatchInput<'_>, hooks: &[HookId]) -> Result<Matcher, Error> {
    let matcher = parse_values(entries)?;
    check_carried(&matcher, MatchKey::ALL, hooks)?;
    Ok(matcher)
}

/// The checks of I22 up to (not including) `match_key_not_carried`.
fn parse_values(entries: &MatchInput<'_>) -> Result<Matcher, Error> {
    if entries.is_empty() {
        return Err(invalid("{}", "a matcher names at least one key"));
    }
    let mut keyed: Vec<(MatchKey, &MatchValue<'_>)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let known = match key {
            MatchText::Text(text) => MatchKey::parse(text),
            MatchText::Bad(_) => None,
        };
        let Some(known) = known else {
            let shown = match key {
                MatchText::Text(text) => quote(text),
                MatchText::Bad(shown) => shown.clone(),
            };
            return Err(value_error(
                ErrorKind::UnknownMatchKey,
                "match key",
                &shown,
                None,
            ));
        };
        keyed.push((known, value));
    }
    let mut matcher = Matcher::default();
    for key in MatchKey::ALL {
        // A host mapping has each key once; were it given twice, the last one stands.
        if let Some((_, value)) = keyed.iter().rev().find(|(k, _)| *k == key) {
            matcher.set(key, parse_patterns(key, value)?);
        }
    }
    Ok(matcher)
}

fn parse_patterns(key: MatchKey, value: &MatchValue<'_>) -> Result<Arc<[String]>, Error> {
    let items: &[MatchText<'_>] = match value {
        MatchValue::One(text) => std::slice::from_ref(text),
        MatchValue::List(items) => items,
        MatchValue::Other(shown) => {
            return Err(invalid(
                shown,
                &format!("match.{} is a pattern or a list of patterns", key.as_str()),
            ))
        }
    };
    if items.is_empty() {
        return Err(invalid(
            "[]",
            &format!("match.{} lists at least one pattern", key.as_str()),
        ));
    }
    if items.len() > MAX_PATTERNS {
        return Err(invalid(
            &format!("{} patterns", items.len()),
            &format!(
                "match.{} lists at most {MAX_PATTERNS} patterns",
                key.as_str()
            ),
        ));
    }
    let mut patterns: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let text = match item {
            MatchText::Text(text) => *text,
            MatchText::Bad(shown) => {
                return Err(invalid(shown, "a pattern is text"));
            }
        };
        if text.is_empty() {
            return Err(invalid("''", "a pattern holds 1 to 128 characters"));
        }
        if text.chars().nth(MAX_PATTERN_CHARS).is_some() {
            return Err(invalid(&quote(text), "a pattern holds 1 to 128 characters"));
        }
        if !patterns.iter().any(|p| p == text) {
            patterns.push(text.to_owned());
        }
    }
    Ok(Arc::from(patterns))
}

/// `match_key_not_carried` for the first of `keys` the matcher has and no hook point carries.
fn check_carried(
    matcher: &Matcher,
    keys: impl IntoIterator<Item = MatchKey>,
    hooks: &[HookId],
) -> Result<(), Error> {
    for key in keys {
        let carried = hooks.iter().any(|&h| MatchKey::carried_by(h) == Some(key));
        if matcher.patterns(key).is_some() && !carried {
            let hooks: Vec<&str> = hooks.iter().map(|&h| hook_name(h)).collect();
            return Err(value_error(
                ErrorKind::MatchKeyNotCarried,
                "match key",
                &quote(key.as_str()),
                Some(&format!(
                    "none of its hook points ({}) carries it; tool is carried by tool.before and tool.after, model by model.before",
                    hooks.join(", ")
                )),
            ));
        }
    }
    Ok(())
}

/// A registration's or spec item's `match` applied to the declared matcher (I22): given keys
/// replace declared ones, which must cover every given pattern; new keys must be carried by
/// `hooks` (the registration's).
pub fn narrow_matcher(
    declared: Option<&Matcher>,
    entries: &MatchInput<'_>,
    hooks: &[HookId],
    middleware: &str,
) -> Result<Matcher, Error> {
    let given = parse_values(entries)?;
    let mut result = declared.cloned().unwrap_or_default();
    let mut added = Vec::new();
    for key in MatchKey::ALL {
        let Some(patterns) = given.patterns(key) else {
            continue;
        };
        match declared.and_then(|d| d.patterns(key)) {
            Some(old) => {
                if let Some(wide) = patterns.iter().find(|p| !covered(p, old)) {
                    return Err(value_error(
                        ErrorKind::MatchWidened,
                        &format!("match.{} of middleware {}", key.as_str(), quote(middleware)),
                        &quote(wide),
                        Some(&format!(
                            "it declares {}; a registration may narrow a matcher (a declared pattern, or a name one matches), never widen it",
                            old.join(", ")
                        )),
                    ));
                }
            }
            None => added.push(key),
        }
        result.set(key, Arc::from(patterns));
    }
    check_carried(&result, added, hooks)?;
    Ok(result)
}

/// Whether `pattern` admits only names `declared` admits (the decidable rule of I22).
fn covered(pattern: &str, declared: &[String]) -> bool {
    declared.iter().any(|d| d == pattern)
        || (!pattern.contains(['*', '?']) && declared.iter().any(|d| glob_match(d, pattern)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::hook_id;

    fn hooks(names: &[&str]) -> Vec<HookId> {
        names.iter().map(|n| hook_id(n).unwrap()).collect()
    }

    fn tool(patterns: &[&'static str]) -> Vec<(MatchText<'static>, MatchValue<'static>)> {
        let items = patterns.iter().map(|p| MatchText::Text(p)).collect();
        vec![(MatchText::Text("tool"), MatchValue::List(items))]
    }

    #[test]
    fn globs_match_whole_names_case_sensitively() {
        assert!(glob_match("refund_*", "refund_payment"));
        assert!(glob_match("refund_*", "refund_"));
        assert!(!glob_match("refund_*", "do_refund_payment"));
        assert!(!glob_match("Refund*", "refund"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("a?c", "aéc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("?", ""));
        assert!(glob_match("*a*b*", "xxaxxbxx"));
        assert!(!glob_match("*a*b", "xxaxxbxx"));
        assert!(glob_match("[x]", "[x]"));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exact2"));
    }

    #[test]
    fn a_missing_key_or_an_uncarried_hook_point_matches() {
        let m = parse_matcher(&tool(&["refund_*"]), &hooks(&["tool.before", "step.end"])).unwrap();
        let before = hook_id("tool.before").unwrap();
        assert!(m.admits(before, Some("refund_x")));
        assert!(!m.admits(before, Some("search")));
        assert!(m.admits(before, None));
        assert!(m.admits(hook_id("step.end").unwrap(), Some("search")));
    }

    #[test]
    fn validation_kinds_in_order() {
        let h = hooks(&["tool.before"]);
        let kind = |entries: &MatchInput<'_>| parse_matcher(entries, &h).unwrap_err().kind;
        assert_eq!(kind(&[]), ErrorKind::InvalidMatch);
        let unknown = [(MatchText::Text("tools"), MatchValue::Other("5".into()))];
        assert_eq!(kind(&unknown), ErrorKind::UnknownMatchKey);
        assert_eq!(kind(&tool(&[])), ErrorKind::InvalidMatch);
        assert_eq!(kind(&tool(&[""])), ErrorKind::InvalidMatch);
        let long: &'static str = Box::leak("x".repeat(129).into_boxed_str());
        assert_eq!(kind(&tool(&[long])), ErrorKind::InvalidMatch);
        let ok: &'static str = Box::leak("é".repeat(128).into_boxed_str());
        assert!(parse_matcher(&tool(&[ok]), &h).is_ok());
        assert_eq!(kind(&tool(&["a"; 33])), ErrorKind::InvalidMatch);
        let model = [(
            MatchText::Text("model"),
            MatchValue::One(MatchText::Text("gpt-*")),
        )];
        let err = parse_matcher(&model, &h).unwrap_err();
        assert_eq!(err.kind, ErrorKind::MatchKeyNotCarried);
        assert!(err.message.contains("'model'") && err.message.contains("I22"));
        let dup = parse_matcher(&tool(&["a", "b", "a"]), &h).unwrap();
        assert_eq!(dup.tool.as_deref().unwrap(), ["a", "b"]);
    }

    #[test]
    fn overrides_narrow_never_widen() {
        let h = hooks(&["tool.before", "model.before"]);
        let declared = parse_matcher(&tool(&["refund_*", "search"]), &h).unwrap();
        let narrowed = narrow_matcher(Some(&declared), &tool(&["refund_payment"]), &h, "g");
        assert_eq!(
            narrowed.unwrap().tool.as_deref().unwrap(),
            ["refund_payment"]
        );
        for wide in ["refund_p*", "*", "other"] {
            let err = narrow_matcher(Some(&declared), &tool(&[wide]), &h, "g").unwrap_err();
            assert_eq!(err.kind, ErrorKind::MatchWidened);
            assert!(err.message.contains(&quote(wide)));
        }
        assert!(narrow_matcher(Some(&declared), &tool(&["search", "refund_*"]), &h, "g").is_ok());
        // A key the declaration lacks may be added where carried.
        let model = [(
            MatchText::Text("model"),
            MatchValue::One(MatchText::Text("gpt-*")),
        )];
        let added = narrow_matcher(Some(&declared), &model, &h, "g").unwrap();
        assert!(added.tool.is_some() && added.model.is_some());
        let only_tool = hooks(&["tool.before"]);
        let err = narrow_matcher(None, &model, &only_tool, "g").unwrap_err();
        assert_eq!(err.kind, ErrorKind::MatchKeyNotCarried);
    }
}
