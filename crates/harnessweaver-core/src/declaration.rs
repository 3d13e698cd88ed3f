//! Declaring a middleware and overriding its declaration at registration.
//!
//! Checks run in the fixed order of I4 and the first failure is reported: declaration: name,
//! hooks, band, `fail_mode`, timeout, then R2; registration overrides: name, hooks (unknown,
//! then widened), band, `fail_mode`, timeout, then R2 on the result. Type checks (hooks given as
//! a string, a timeout `True`) belong to the binding, which reports them with
//! [`crate::error::invalid_value`] at the same place in this order.

use crate::band::Band;
use crate::catalogue::{hook_id, hook_name, HookId};
use crate::duration::{duration_from_seconds, parse_duration_text};
use crate::error::{hooks_widened, quote, value_error, Error, ErrorKind};
use crate::fail_mode::FailMode;
use crate::layer::Layer;
use crate::matcher::{narrow_matcher, parse_matcher, MatchInput, Matcher};
use crate::mode::{check_baseline_audit, Mode};

/// A checked declaration: hooks are deduplicated and in catalogue order (I3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    pub name: String,
    pub hooks: Vec<HookId>,
    pub band: Band,
    pub fail_mode: FailMode,
    pub timeout_ns: Option<u64>,
    /// Which events of its hook points it applies to (I22); `None` is every event.
    pub matcher: Option<Matcher>,
    /// Enforce or only audit its answers (I25).
    pub mode: Mode,
}

impl Declaration {
    /// The hook point names, in catalogue order.
    pub fn hook_names(&self) -> Vec<&'static str> {
        self.hooks.iter().map(|&id| hook_name(id)).collect()
    }
}

/// A timeout as the host language gave it (ruling 15).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeoutInput<'a> {
    Text(&'a str),
    Seconds(f64),
}

impl TimeoutInput<'_> {
    /// The timeout in nanoseconds.
    pub fn to_nanos(self) -> Result<u64, Error> {
        match self {
            Self::Text(text) => parse_duration_text(text),
            Self::Seconds(seconds) => duration_from_seconds(seconds),
        }
    }
}

/// What `@hw.middleware(...)` declares. `band: None` is the default band, `app`;
/// `fail_mode: None` is a missing fail mode, an error (ruling 14).
#[derive(Debug, Clone, Copy)]
pub struct DeclarationInput<'a> {
    pub name: &'a str,
    pub hooks: &'a [&'a str],
    pub band: Option<&'a str>,
    pub fail_mode: Option<&'a str>,
    pub timeout: Option<TimeoutInput<'a>>,
    /// `match=` (I22); `None` is no matcher.
    pub matcher: Option<&'a MatchInput<'a>>,
    /// `mode=` (I25); `None` is `enforce`.
    pub mode: Option<&'a str>,
}

/// The overrides `register()` may pass (I10); `None` keeps the declared value.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides<'a> {
    pub name: Option<&'a str>,
    pub hooks: Option<&'a [&'a str]>,
    pub band: Option<&'a str>,
    pub fail_mode: Option<&'a str>,
    pub timeout: Option<TimeoutInput<'a>>,
    /// `match=` (I22): narrows the declared matcher.
    pub matcher: Option<&'a MatchInput<'a>>,
    /// `mode=` (I25): either mode.
    pub mode: Option<&'a str>,
}

/// Checks a declaration in the order of I4.
pub fn declare(input: &DeclarationInput<'_>) -> Result<Declaration, Error> {
    validate_name(input.name)?;
    let hooks = parse_hooks(input.hooks)?;
    let band = input.band.map_or(Ok(Band::App), Band::parse)?;
    let Some(fail_mode) = input.fail_mode else {
        let shown = quote(input.name);
        return Err(value_error(
            ErrorKind::MissingFailMode,
            "fail_mode",
            &shown,
            None,
        ));
    };
    let fail_mode = FailMode::parse(fail_mode)?;
    let timeout_ns = input.timeout.map(TimeoutInput::to_nanos).transpose()?;
    let matcher = input
        .matcher
        .map(|entries| parse_matcher(entries, &hooks))
        .transpose()?;
    let mode = input.mode.map_or(Ok(Mode::Enforce), Mode::parse)?;
    let declaration = Declaration {
        name: input.name.to_owned(),
        hooks,
        band,
        fail_mode,
        timeout_ns,
        matcher,
        mode,
    };
    check_baseline_fails_closed(&declaration)?;
    check_baseline_audit(&declaration.name, band, mode, false)?;
    Ok(declaration)
}

/// Applies registration overrides in the order of I4; R2 is checked on the result (I10).
pub fn apply_overrides(
    decl: &Declaration,
    overrides: &Overrides<'_>,
) -> Result<Declaration, Error> {
    override_from(decl, decl.clone(), overrides, None)
}

/// The overrides applied to `start` in the order of I4, hooks narrowed against `decl`'s
/// declared ones, a band override judged by `layer`; R2 on the result, then I25's baseline
/// rule.
pub(crate) fn override_from(
    decl: &Declaration,
    start: Declaration,
    overrides: &Overrides<'_>,
    layer: Option<Layer>,
) -> Result<Declaration, Error> {
    let mut overriding = Overriding {
        decl,
        result: start,
        layer,
        org_says_audit: false,
    };
    if let Some(name) = overrides.name {
        overriding.name(name)?;
    }
    if let Some(hooks) = overrides.hooks {
        overriding.hooks(hooks)?;
    }
    if let Some(band) = overrides.band {
        overriding.band(band)?;
    }
    if let Some(fail_mode) = overrides.fail_mode {
        overriding.fail_mode(fail_mode)?;
    }
    if let Some(timeout) = overrides.timeout {
        overriding.timeout(timeout)?;
    }
    if let Some(entries) = overrides.matcher {
        overriding.matcher(entries)?;
    }
    if let Some(mode) = overrides.mode {
        overriding.mode(mode)?;
    }
    overriding.finish()
}

/// Registration overrides (I10) or a spec item's keys in a layer (I13), given one at a time in
/// the order of I4, each checked as it comes: a binding that must first turn each host value
/// into text or a number reports a value of the wrong type at its own place in that order
/// (I17) by handing the fields over as it converts them. [`Overriding::finish`] checks R2 and
/// I25's baseline rule on the result. [`apply_overrides`] is this with all fields at once.
#[derive(Debug)]
pub struct Overriding<'d> {
    decl: &'d Declaration,
    result: Declaration,
    layer: Option<Layer>,
    org_says_audit: bool,
}

impl<'d> Overriding<'d> {
    /// Overrides of `decl`: at registration (`layer` `None`, I10) or as a spec item of `layer`,
    /// which starts in the layer's band and judges a band override by its rule (I13, ruling 16,
    /// S8).
    pub fn new(decl: &'d Declaration, layer: Option<Layer>) -> Self {
        let result = match layer {
            Some(layer) => Declaration {
                band: layer.band(),
                ..decl.clone()
            },
            None => decl.clone(),
        };
        Self {
            decl,
            result,
            layer,
            org_says_audit: false,
        }
    }

    /// A new name (I1).
    pub fn name(&mut self, name: &str) -> Result<(), Error> {
        validate_name(name)?;
        name.clone_into(&mut self.result.name);
        Ok(())
    }

    /// Hooks that narrow the declared ones (ruling 18).
    pub fn hooks(&mut self, hooks: &[&str]) -> Result<(), Error> {
        let hooks = parse_hooks(hooks)?;
        check_narrowed(self.decl, &hooks)?;
        self.result.hooks = hooks;
        Ok(())
    }

    /// A band (rule 1), allowed by the layer's rule when there is one (ruling 16, S8).
    pub fn band(&mut self, band: &str) -> Result<(), Error> {
        let band = Band::parse(band)?;
        if let Some(layer) = self.layer {
            layer.allow(&self.result.name, band)?;
        }
        self.result.band = band;
        Ok(())
    }

    /// A fail mode (ruling 14).
    pub fn fail_mode(&mut self, fail_mode: &str) -> Result<(), Error> {
        self.result.fail_mode = FailMode::parse(fail_mode)?;
        Ok(())
    }

    /// A timeout (ruling 15).
    pub fn timeout(&mut self, timeout: TimeoutInput<'_>) -> Result<(), Error> {
        self.result.timeout_ns = Some(timeout.to_nanos()?);
        Ok(())
    }

    /// `match=`, narrowing the declared matcher (I22).
    pub fn matcher(&mut self, entries: &MatchInput<'_>) -> Result<(), Error> {
        let declared = self.decl.matcher.as_ref();
        let narrowed = narrow_matcher(declared, entries, &self.result.hooks, &self.result.name)?;
        self.result.matcher = Some(narrowed);
        Ok(())
    }

    /// `mode=` (I25): an org profile item may put a baseline middleware in audit mode.
    pub fn mode(&mut self, mode: &str) -> Result<(), Error> {
        self.result.mode = Mode::parse(mode)?;
        self.org_says_audit =
            self.layer == Some(Layer::OrgProfile) && self.result.mode == Mode::Audit;
        Ok(())
    }

    /// The result, once R2 and I25's baseline rule hold for it.
    pub fn finish(self) -> Result<Declaration, Error> {
        let result = self.result;
        check_baseline_fails_closed(&result)?;
        check_baseline_audit(&result.name, result.band, result.mode, self.org_says_audit)?;
        Ok(result)
    }
}

/// I4 when a `mode` was given that is no text (I25): the host checks the declaration without
/// it, and `mode` is the error it kept. The core's errors that come before mode in the order
/// of I4 stand; the ones after it (R2, the baseline rules of I25) give way to the mode's error,
/// which comes first. `convert` turns the core's error into the host's.
pub fn with_mode_error<T, E>(
    result: Result<T, Error>,
    mode: Result<(), E>,
    convert: impl FnOnce(Error) -> E,
) -> Result<T, E> {
    match (result, mode) {
        (Err(e), Err(mode_error))
            if matches!(
                e.kind,
                ErrorKind::BaselineFailOpen | ErrorKind::BaselineAuditNotOrg
            ) =>
        {
            Err(mode_error)
        }
        (Err(e), _) => Err(convert(e)),
        (Ok(_), Err(mode_error)) => Err(mode_error),
        (Ok(value), Ok(())) => Ok(value),
    }
}

/// I1: one or more identifiers joined by dots,
/// `^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`.
pub fn validate_name(name: &str) -> Result<(), Error> {
    if name.split('.').all(is_identifier) {
        Ok(())
    } else {
        Err(value_error(
            ErrorKind::InvalidName,
            "name",
            &quote(name),
            None,
        ))
    }
}

fn is_identifier(part: &str) -> bool {
    let mut bytes = part.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// I1: a class's default name. An underscore goes before an ASCII capital that follows a
/// lower-case letter or a digit, and before the last capital of a run of capitals that is
/// followed by a lower-case letter; then everything is lower-cased. That is Python's
/// `re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()`, so both
/// cores agree: `RefundCap` → `refund_cap`, `HTTPGuard` → `http_guard`, `Guard2FA` →
/// `guard2_fa`, `OAuth2Token` → `o_auth2_token`.
pub fn snake_case(class_name: &str) -> String {
    let chars: Vec<char> = class_name.chars().collect();
    let mut snake = String::with_capacity(class_name.len() + 4);
    let mut prev: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let next = chars.get(i + 1).copied();
            let after_word = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
            let ends_acronym = prev.is_some_and(|p| p.is_ascii_uppercase())
                && next.is_some_and(|n| n.is_ascii_lowercase());
            if after_word || ends_acronym {
                snake.push('_');
            }
        }
        snake.extend(c.to_lowercase());
        prev = Some(c);
    }
    snake
}

/// I3: a non-empty list of catalogue names; repeats collapse; catalogue order.
fn parse_hooks(names: &[&str]) -> Result<Vec<HookId>, Error> {
    if names.is_empty() {
        return Err(value_error(ErrorKind::InvalidHooks, "hooks", "[]", None));
    }
    let mut hooks = names
        .iter()
        .map(|name| hook_id(name))
        .collect::<Result<Vec<_>, _>>()?;
    hooks.sort_unstable();
    hooks.dedup();
    Ok(hooks)
}

/// Ruling 18: a registration may narrow the declared hooks, never widen them.
fn check_narrowed(decl: &Declaration, hooks: &[HookId]) -> Result<(), Error> {
    match hooks.iter().find(|hook| !decl.hooks.contains(hook)) {
        Some(&hook) => Err(hooks_widened(
            hook_name(hook),
            &decl.name,
            &decl.hook_names(),
        )),
        None => Ok(()),
    }
}

/// R2 (ruling 14): baseline middleware always fails closed.
fn check_baseline_fails_closed(decl: &Declaration) -> Result<(), Error> {
    if decl.band == Band::Baseline && decl.fail_mode == FailMode::Open {
        let shown = quote(&decl.name);
        return Err(value_error(
            ErrorKind::BaselineFailOpen,
            "middleware",
            &shown,
            None,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(name: &'a str, hooks: &'a [&'a str]) -> DeclarationInput<'a> {
        let fail_mode = Some("closed");
        DeclarationInput {
            name,
            hooks,
            band: None,
            fail_mode,
            timeout: None,
            matcher: None,
            mode: None,
        }
    }

    /// Declares `g` on `task.end` (app, closed) after `change` adjusts the input.
    fn declared(change: impl FnOnce(&mut DeclarationInput<'static>)) -> Result<Declaration, Error> {
        let mut decl = input("g", &["task.end"]);
        change(&mut decl);
        declare(&decl)
    }

    /// `guard`: `tool.before` and `tool.after`, app, closed, no timeout.
    fn guard() -> Declaration {
        declare(&input("guard", &["tool.before", "tool.after"])).unwrap()
    }

    /// Applies the overrides `change` sets to `decl`.
    fn overridden(
        decl: &Declaration,
        change: impl FnOnce(&mut Overrides<'static>),
    ) -> Result<Declaration, Error> {
        let mut overrides = Overrides::default();
        change(&mut overrides);
        apply_overrides(decl, &overrides)
    }

    /// One step of an I4 order test: the error expected now, and the fix that moves past it.
    type Fix<T> = &'static dyn Fn(&mut T);

    #[track_caller]
    fn fails(result: Result<Declaration, Error>, kind: ErrorKind) {
        assert_eq!(result.unwrap_err().kind, kind);
    }

    #[test]
    fn a_mode_that_is_no_text_comes_before_the_baseline_rules_only() {
        let bad_mode = || Err::<(), &str>("mode error");
        let baseline = declared(|d| {
            d.band = Some("baseline");
            d.fail_mode = Some("open");
        });
        // R2 comes after mode in I4: the mode's error is reported instead.
        let kept = |e: Error| e.kind.as_str();
        assert_eq!(
            with_mode_error(baseline, bad_mode(), kept),
            Err("mode error")
        );
        // An error before mode stands; a good declaration still fails on its mode.
        let unnamed = declared(|d| d.name = "");
        assert_eq!(
            with_mode_error(unnamed, bad_mode(), kept),
            Err("invalid_name")
        );
        assert_eq!(
            with_mode_error(declared(|_| ()), bad_mode(), kept).err(),
            Some("mode error")
        );
        assert!(with_mode_error(declared(|_| ()), Ok::<(), &str>(()), kept).is_ok());
    }

    #[test]
    fn a_good_declaration_with_defaults() {
        let decl = declare(&input("acme.refund_cap", &["tool.before"])).unwrap();
        assert_eq!(
            (decl.name.as_str(), decl.band, decl.fail_mode),
            ("acme.refund_cap", Band::App, FailMode::Closed)
        );
        assert_eq!(
            (decl.hook_names(), decl.timeout_ns),
            (vec!["tool.before"], None)
        );
    }

    #[test]
    fn hooks_collapse_into_catalogue_order_i3() {
        let decl = declared(|d| d.hooks = &["task.end", "tool.before", "task.end", "task.start"]);
        assert_eq!(
            decl.unwrap().hook_names(),
            ["task.start", "tool.before", "task.end"]
        );
    }

    #[test]
    fn names_follow_i1() {
        for good in ["a", "_", "A1", "acme.refund_cap", "a._b.C9"] {
            assert_eq!(validate_name(good), Ok(()), "{good}");
        }
        for bad in ["", "1a", "a.", ".a", "a..b", "a-b", "a b", "é", "a.1", " a"] {
            let error = validate_name(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidName);
            assert!(error.message.contains(&format!("'{bad}'")) && error.message.ends_with("(I1)"));
        }
    }

    #[test]
    fn empty_and_unknown_hooks_i3_ruling_2() {
        fails(declared(|d| d.hooks = &[]), ErrorKind::InvalidHooks);
        let error = declared(|d| d.hooks = &["tool.before", "tool.around"]).unwrap_err();
        assert_eq!(error.kind, ErrorKind::UnknownHook);
        assert!(error.message.contains("'tool.around'"));
    }

    #[test]
    fn band_defaults_to_app_and_is_checked_rule_1() {
        assert_eq!(
            declared(|d| d.band = Some("task")).unwrap().band,
            Band::Task
        );
        fails(declared(|d| d.band = Some("core")), ErrorKind::InvalidBand);
    }

    #[test]
    fn fail_mode_is_required_ruling_14() {
        let error = declared(|d| d.fail_mode = None).unwrap_err();
        assert_eq!(error.kind, ErrorKind::MissingFailMode);
        for part in ["'g'", "fail_mode='closed'", "(ruling 14)"] {
            assert!(error.message.contains(part), "{}", error.message);
        }
        fails(
            declared(|d| d.fail_mode = Some("shut")),
            ErrorKind::InvalidFailMode,
        );
    }

    #[test]
    fn timeouts_parse_ruling_15() {
        let with = |t| declared(|d| d.timeout = Some(t));
        assert_eq!(
            with(TimeoutInput::Text("250ms")).unwrap().timeout_ns,
            Some(250_000_000)
        );
        assert_eq!(
            with(TimeoutInput::Seconds(2.0)).unwrap().timeout_ns,
            Some(2_000_000_000)
        );
        fails(with(TimeoutInput::Text("2 s")), ErrorKind::InvalidDuration);
        fails(with(TimeoutInput::Seconds(0.0)), ErrorKind::InvalidDuration);
    }

    #[test]
    fn baseline_open_fails_r2() {
        let error =
            declared(|d| (d.band, d.fail_mode) = (Some("baseline"), Some("open"))).unwrap_err();
        assert_eq!(error.kind, ErrorKind::BaselineFailOpen);
        assert!(error.message.contains("'g'") && error.message.ends_with("(R2)"));
        assert_eq!(
            declared(|d| d.band = Some("baseline")).unwrap().band,
            Band::Baseline
        );
    }

    #[test]
    fn declaration_checks_run_in_i4_order() {
        let mut decl = DeclarationInput {
            name: "bad name",
            hooks: &["nope"],
            band: Some("core"),
            fail_mode: Some("shut"),
            timeout: Some(TimeoutInput::Text("soon")),
            matcher: None,
            mode: None,
        };
        let fixes: [(ErrorKind, Fix<DeclarationInput<'static>>); 7] = [
            (ErrorKind::InvalidName, &|d| d.name = "ok"),
            (ErrorKind::UnknownHook, &|d| d.hooks = &["task.end"]),
            (ErrorKind::InvalidBand, &|d| d.band = Some("baseline")),
            (ErrorKind::InvalidFailMode, &|d| d.fail_mode = None),
            (ErrorKind::MissingFailMode, &|d| d.fail_mode = Some("open")),
            (ErrorKind::InvalidDuration, &|d| d.timeout = None),
            (ErrorKind::BaselineFailOpen, &|d| d.band = None),
        ];
        for (expected, fix) in fixes {
            fails(declare(&decl), expected);
            fix(&mut decl);
        }
        assert!(declare(&decl).is_ok());
    }

    #[test]
    fn overrides_set_every_field_i10() {
        let overrides = Overrides {
            name: Some("other"),
            hooks: Some(&["tool.after"]),
            band: Some("baseline"),
            fail_mode: Some("closed"),
            timeout: Some(TimeoutInput::Seconds(2.0)),
            matcher: None,
            mode: None,
        };
        let result = apply_overrides(&guard(), &overrides).unwrap();
        assert_eq!(
            (result.name.as_str(), result.hook_names()),
            ("other", vec!["tool.after"])
        );
        assert_eq!(
            (result.band, result.timeout_ns),
            (Band::Baseline, Some(2_000_000_000))
        );
        assert_eq!(overridden(&guard(), |_| ()), Ok(guard()));
    }

    #[test]
    fn overrides_may_narrow_but_never_widen_hooks_ruling_18() {
        let error = overridden(&guard(), |o| {
            o.hooks = Some(&["tool.before", "model.before"]);
        })
        .unwrap_err();
        assert_eq!(error.kind, ErrorKind::HooksWidened);
        for part in ["'model.before'", "'guard'", "(ruling 18)"] {
            assert!(error.message.contains(part), "{}", error.message);
        }
        fails(
            overridden(&guard(), |o| o.hooks = Some(&[])),
            ErrorKind::InvalidHooks,
        );
    }

    #[test]
    fn r2_is_checked_on_the_overridden_result() {
        let to_baseline_open =
            |o: &mut Overrides<'static>| (o.band, o.fail_mode) = (Some("baseline"), Some("open"));
        fails(
            overridden(&guard(), to_baseline_open),
            ErrorKind::BaselineFailOpen,
        );
        let tracer = Declaration {
            band: Band::Baseline,
            ..guard()
        };
        fails(
            overridden(&tracer, |o| o.fail_mode = Some("open")),
            ErrorKind::BaselineFailOpen,
        );
        let moved_out = overridden(&tracer, |o| {
            (o.band, o.fail_mode) = (Some("app"), Some("open"));
        });
        assert_eq!(moved_out.unwrap().fail_mode, FailMode::Open);
    }

    #[test]
    fn override_checks_run_in_i4_order() {
        let mut overrides = Overrides {
            name: Some("1x"),
            hooks: Some(&["model.before", "nope"]),
            band: Some("core"),
            fail_mode: Some("shut"),
            timeout: Some(TimeoutInput::Text("0s")),
            matcher: None,
            mode: None,
        };
        let fixes: [(ErrorKind, Fix<Overrides<'static>>); 7] = [
            (ErrorKind::InvalidName, &|o| o.name = None),
            (ErrorKind::UnknownHook, &|o| {
                o.hooks = Some(&["model.before"]);
            }),
            (ErrorKind::HooksWidened, &|o| o.hooks = None),
            (ErrorKind::InvalidBand, &|o| o.band = Some("baseline")),
            (ErrorKind::InvalidFailMode, &|o| o.fail_mode = Some("open")),
            (ErrorKind::InvalidDuration, &|o| o.timeout = None),
            (ErrorKind::BaselineFailOpen, &|o| o.band = None),
        ];
        for (expected, fix) in fixes {
            fails(apply_overrides(&guard(), &overrides), expected);
            fix(&mut overrides);
        }
        assert!(apply_overrides(&guard(), &overrides).is_ok());
    }

    #[test]
    fn mode_is_checked_after_match_and_baseline_audit_after_r2_i25() {
        let decl = declared(|d| d.mode = Some("audit")).unwrap();
        assert_eq!(decl.mode, Mode::Audit);
        assert_eq!(declared(|_| ()).unwrap().mode, Mode::Enforce);
        fails(
            declared(|d| (d.timeout, d.mode) = (Some(TimeoutInput::Text("x")), Some("Audit"))),
            ErrorKind::InvalidDuration,
        );
        fails(
            declared(|d| d.mode = Some("dry_run")),
            ErrorKind::InvalidMode,
        );
        fails(
            declared(|d| {
                (d.band, d.mode, d.fail_mode) = (Some("baseline"), Some("audit"), Some("open"));
            }),
            ErrorKind::BaselineFailOpen,
        );
        fails(
            declared(|d| (d.band, d.mode) = (Some("baseline"), Some("audit"))),
            ErrorKind::BaselineAuditNotOrg,
        );
        let audited = overridden(&guard(), |o| o.mode = Some("audit")).unwrap();
        assert_eq!(audited.mode, Mode::Audit);
        assert_eq!(
            overridden(&audited, |o| o.mode = Some("enforce"))
                .unwrap()
                .mode,
            Mode::Enforce
        );
        fails(
            overridden(&guard(), |o| o.mode = Some("")),
            ErrorKind::InvalidMode,
        );
        fails(
            overridden(&guard(), |o| {
                (o.band, o.mode) = (Some("baseline"), Some("audit"));
            }),
            ErrorKind::BaselineAuditNotOrg,
        );
        fails(
            overridden(&audited, |o| o.band = Some("baseline")),
            ErrorKind::BaselineAuditNotOrg,
        );
    }

    #[test]
    fn snake_case_of_class_names_i1() {
        let cases = [
            ("RefundCap", "refund_cap"),
            ("HTTPGuard", "http_guard"),
            ("Guard2FA", "guard2_fa"),
            ("Guard2FACheck", "guard2_fa_check"),
            ("OAuth2Token", "o_auth2_token"),
            ("already_snake", "already_snake"),
            ("My_Class", "my_class"),
            ("_Private", "_private"),
            ("ABC", "abc"),
            ("A", "a"),
            ("", ""),
        ];
        for (class_name, expected) in cases {
            assert_eq!(snake_case(class_name), expected, "{class_name}");
        }
    }

    #[test]
    fn a_matcher_is_checked_after_the_timeout_and_before_r2() {
        use crate::matcher::{MatchText, MatchValue};
        let bad: &'static [(MatchText<'static>, MatchValue<'static>)] = Box::leak(Box::new([(
            MatchText::Text("tool"),
            MatchValue::List(vec![]),
        )]));
        let hooks: &'static [&'static str] = &["tool.before"];
        let with_bad_timeout = declared(|d| {
            (d.hooks, d.matcher, d.timeout) = (hooks, Some(bad), Some(TimeoutInput::Text("soon")));
        });
        fails(with_bad_timeout, ErrorKind::InvalidDuration);
        let baseline_open = declared(|d| {
            (d.hooks, d.matcher) = (hooks, Some(bad));
            (d.band, d.fail_mode) = (Some("baseline"), Some("open"));
        });
        fails(baseline_open, ErrorKind::InvalidMatch);
        let good: &'static [(MatchText<'static>, MatchValue<'static>)] = Box::leak(Box::new([(
            MatchText::Text("tool"),
            MatchValue::One(MatchText::Text("refund_*")),
        )]));
        let declared_ok = declared(|d| (d.hooks, d.matcher) = (hooks, Some(good))).unwrap();
        let narrowed = overridden(&declared_ok, |o| o.matcher = Some(good)).unwrap();
        assert_eq!(narrowed.matcher, declared_ok.matcher);
        let wide: &'static [(MatchText<'static>, MatchValue<'static>)] = Box::leak(Box::new([(
            MatchText::Text("tool"),
            MatchValue::One(MatchText::Text("*")),
        )]));
        fails(
            overridden(&declared_ok, |o| o.matcher = Some(wide)),
            ErrorKind::MatchWidened,
        );
    }

    /// A binding hands the overrides over one at a time (`Overriding`): each is checked as it
    /// comes, in the order of I4, and all at once they give what `apply_overrides` gives.
    #[test]
    fn overrides_given_one_at_a_time_are_checked_in_order_i4() {
        let decl = declare(&input("guard", &["tool.before", "tool.after"])).unwrap();
        let mut staged = Overriding::new(&decl, None);
        staged.name("guard2").unwrap();
        staged.hooks(&["tool.before"]).unwrap();
        staged.band("baseline").unwrap();
        staged.timeout(TimeoutInput::Text("2s")).unwrap();
        let staged = staged.finish().unwrap();
        let at_once = apply_overrides(
            &decl,
            &Overrides {
                name: Some("guard2"),
                hooks: Some(&["tool.before"]),
                band: Some("baseline"),
                timeout: Some(TimeoutInput::Text("2s")),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(staged, at_once);
        // A widening is refused when the hooks come, before any later field is looked at.
        let mut widening = Overriding::new(&decl, None);
        let err = widening.hooks(&["model.before"]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::HooksWidened);
        // R2 only on the result: an open baseline may still be closed by a later field.
        let mut open = Overriding::new(&decl, None);
        open.band("baseline").unwrap();
        open.fail_mode("open").unwrap();
        assert_eq!(open.finish().unwrap_err().kind, ErrorKind::BaselineFailOpen);
        // In a layer, the band is judged by the layer's rule (ruling 16, S8).
        let mut layered = Overriding::new(&decl, Some(Layer::Task));
        assert_eq!(
            layered.band("platform").unwrap_err().kind,
            ErrorKind::BandOutward
        );
    }
}
