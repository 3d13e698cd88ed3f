//! The one error type of the core (INTERPRETING.md §5).
//!
//! `kind` and its rule id are what conformance compares exactly; `message` is prose that is only
//! ever matched with `$contains`, so every message names the bad value verbatim (no escaping,
//! so the raw value is always a substring) and ends with the rule in parentheses.

use std::fmt;

/// The stable error kinds of INTERPRETING.md §5, plus `InvalidTrace` for reading traces (I8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    InvalidName,
    InvalidHooks,
    UnknownHook,
    InvalidBand,
    MissingFailMode,
    InvalidFailMode,
    InvalidDuration,
    BaselineFailOpen,
    HooksWidened,
    DuplicateName,
    UnknownMiddleware,
    EventTypeMismatch,
    InvalidTrace,
    UnknownLayer,
    BandOutward,
    BaselineOutsideProfile,
    InvalidContracts,
    InvalidMatch,
    UnknownMatchKey,
    MatchKeyNotCarried,
    MatchWidened,
    InvalidMode,
    BaselineAuditNotOrg,
    InvalidDeadline,
    InvalidIdentity,
}

impl ErrorKind {
    /// The stable name compared by the conformance driver.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidName => "invalid_name",
            Self::InvalidHooks => "invalid_hooks",
            Self::UnknownHook => "unknown_hook",
            Self::InvalidBand => "invalid_band",
            Self::MissingFailMode => "missing_fail_mode",
            Self::InvalidFailMode => "invalid_fail_mode",
            Self::InvalidDuration => "invalid_duration",
            Self::BaselineFailOpen => "baseline_fail_open",
            Self::HooksWidened => "hooks_widened",
            Self::DuplicateName => "duplicate_name",
            Self::UnknownMiddleware => "unknown_middleware",
            Self::EventTypeMismatch => "event_type_mismatch",
            Self::InvalidTrace => "invalid_trace",
            Self::UnknownLayer => "unknown_layer",
            Self::BandOutward => "band_outward",
            Self::BaselineOutsideProfile => "baseline_outside_profile",
            Self::InvalidContracts => "invalid_contracts",
            Self::InvalidMatch => "invalid_match",
            Self::UnknownMatchKey => "unknown_match_key",
            Self::MatchKeyNotCarried => "match_key_not_carried",
            Self::MatchWidened => "match_widened",
            Self::InvalidMode => "invalid_mode",
            Self::BaselineAuditNotOrg => "baseline_audit_not_org",
            Self::InvalidDeadline => "invalid_deadline",
            Self::InvalidIdentity => "invalid_identity",
        }
    }

    /// The rule id of INTERPRETING.md §5, compared exactly by the conformance driver.
    pub fn rule(self) -> &'static str {
        match self {
            Self::InvalidName => "I1",
            Self::InvalidHooks => "I3",
            Self::UnknownHook => "ruling-2",
            Self::InvalidBand => "rule-1",
            Self::MissingFailMode | Self::InvalidFailMode => "ruling-14",
            Self::InvalidDuration => "ruling-15",
            Self::BaselineFailOpen => "R2",
            Self::HooksWidened => "ruling-18",
            Self::DuplicateName | Self::UnknownMiddleware => "I2",
            Self::EventTypeMismatch => "I7",
            Self::InvalidTrace => "I8",
            Self::UnknownLayer => "I13",
            Self::BandOutward => "ruling-16",
            Self::BaselineOutsideProfile => "S8",
            Self::InvalidContracts => "I14",
            Self::InvalidMatch
            | Self::UnknownMatchKey
            | Self::MatchKeyNotCarried
            | Self::MatchWidened => "I22",
            Self::InvalidMode | Self::BaselineAuditNotOrg => "I25",
            Self::InvalidDeadline => "I26",
            Self::InvalidIdentity => "I27",
        }
    }

    /// The rule as people write it, used at the end of every message: "(ruling 15)".
    pub fn rule_label(self) -> &'static str {
        match self {
            Self::InvalidName => "I1",
            Self::InvalidHooks => "I3",
            Self::UnknownHook => "ruling 2",
            Self::InvalidBand => "rule 1",
            Self::MissingFailMode | Self::InvalidFailMode => "ruling 14",
            Self::InvalidDuration => "ruling 15",
            Self::BaselineFailOpen => "R2",
            Self::HooksWidened => "ruling 18",
            Self::DuplicateName | Self::UnknownMiddleware => "I2",
            Self::EventTypeMismatch => "I7",
            Self::InvalidTrace => "I8",
            Self::UnknownLayer => "I13",
            Self::BandOutward => "ruling 16",
            Self::BaselineOutsideProfile => "S8",
            Self::InvalidContracts => "I14",
            Self::InvalidMatch
            | Self::UnknownMatchKey
            | Self::MatchKeyNotCarried
            | Self::MatchWidened => "I22",
            Self::InvalidMode | Self::BaselineAuditNotOrg => "I25",
            Self::InvalidDeadline => "I26",
            Self::InvalidIdentity => "I27",
        }
    }
}

/// An error of the hook bus: a stable kind and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Quotes a text value for a message. Deliberately no escaping: the conformance matchers look
/// for the raw bad value inside the message.
pub(crate) fn quote(value: &str) -> String {
    format!("'{value}'")
}

/// An error for a value of the wrong *type*, detected by a binding (a timeout `True`, hooks
/// given as a string, a text holding a lone surrogate): the one verdict of I17 for every
/// implementation. `repr` is the value as the host language prints it and is used as is;
/// the message is the same as the one the core gives when it parses a bad value of that kind.
///
/// For the kinds that are about a middleware rather than one value (`missing_fail_mode`,
/// `baseline_fail_open`, `duplicate_name`, `unknown_middleware`) `repr` names the middleware.
pub fn invalid_value(kind: ErrorKind, field: &str, repr: &str) -> Error {
    value_error(kind, field, repr, None)
}

/// Builds every value message: "`<lead> <shown>: <why> (<rule>)`". `detail` replaces the
/// standard explanation when there is something more precise to say (an overflow, say).
pub(crate) fn value_error(
    kind: ErrorKind,
    field: &str,
    shown: &str,
    detail: Option<&str>,
) -> Error {
    let rule = kind.rule_label();
    let explain = detail.map_or_else(|| explanation(kind), str::to_owned);
    let message = match kind {
        ErrorKind::UnknownHook => format!("unknown hook point {shown}: {explain} ({rule})"),
        ErrorKind::MissingFailMode => {
            format!("middleware {shown} declares no {field}: {explain} ({rule})")
        }
        ErrorKind::BaselineFailOpen => format!(
            "middleware {shown} is in the baseline band with fail_mode 'open': {explain} ({rule})"
        ),
        ErrorKind::BaselineAuditNotOrg => format!(
            "middleware {shown} is in the baseline band with mode 'audit': {explain} ({rule})"
        ),
        ErrorKind::DuplicateName => {
            format!("a middleware named {shown} is already registered: {explain} ({rule})")
        }
        ErrorKind::UnknownMiddleware => {
            format!("no middleware named {shown} is registered: {explain} ({rule})")
        }
        ErrorKind::EventTypeMismatch => format!("{field} {shown}: {explain} ({rule})"),
        _ => format!("invalid {field} {shown}: {explain} ({rule})"),
    };
    Error::new(kind, message)
}

/// What the value should have been, per kind.
fn explanation(kind: ErrorKind) -> String {
    let text = match kind {
        ErrorKind::InvalidName => {
            "a middleware name is one or more identifiers joined by dots, such as refund_cap or acme.refund_cap"
        }
        ErrorKind::InvalidHooks => "hooks is a non-empty list of hook point names",
        ErrorKind::UnknownHook => return format!("the hook points are {}", hook_list()),
        ErrorKind::InvalidBand => "a band is one of baseline, platform, app or task",
        ErrorKind::MissingFailMode => {
            "a fail mode is declared, never implied; declare fail_mode='closed' or fail_mode='open'"
        }
        ErrorKind::InvalidFailMode => "fail_mode is 'closed' or 'open'",
        ErrorKind::InvalidDuration => {
            "a timeout is a positive number of seconds or a string with a unit such as 250ms, 2s, 1.5s or 1m"
        }
        ErrorKind::BaselineFailOpen => {
            "baseline middleware always fails closed; declare fail_mode='closed' or use another band"
        }
        ErrorKind::HooksWidened => {
            "a registration may narrow the declared hook points, never widen them"
        }
        ErrorKind::DuplicateName => "a bus holds one middleware of each name",
        ErrorKind::UnknownMiddleware => "only a registered middleware can be unregistered",
        ErrorKind::EventTypeMismatch => "the event is not of the hook point's event type",
        ErrorKind::InvalidTrace => "not a trace record",
        ErrorKind::UnknownLayer => {
            "a layer is one of org_profile, plugin_profile, profile_file, builtin_profile, framework, app, env or task"
        }
        ErrorKind::BandOutward => {
            "a spec item may restate its layer's band or move it inward, never outward"
        }
        ErrorKind::BaselineOutsideProfile => {
            "only profiles (org profiles, plugin profiles, profile files) put middleware in baseline"
        }
        ErrorKind::InvalidContracts => {
            "a contract mode is 'warn' or 'strict', or None to check no contracts"
        }
        ErrorKind::InvalidMatch => {
            "a matcher maps tool or model to a pattern or a list of 1 to 32 patterns of 1 to 128 characters"
        }
        ErrorKind::UnknownMatchKey => "the match keys are tool and model",
        ErrorKind::MatchKeyNotCarried => {
            "tool is carried by tool.before and tool.after, model by model.before"
        }
        ErrorKind::MatchWidened => {
            "a registration may narrow a matcher, never widen it"
        }
        ErrorKind::InvalidMode => "mode is 'enforce' or 'audit'",
        ErrorKind::BaselineAuditNotOrg => {
            "only an org profile item that itself sets mode: audit may audit a baseline middleware"
        }
        ErrorKind::InvalidDeadline => {
            "a chain deadline is a positive number of seconds or a string with a unit such as 250ms, 2s, 1.5s or 1m; an emit's own deadline may also be 0"
        }
        ErrorKind::InvalidIdentity => {
            "the identity scheme is 'jcs-sha256', or None for no identities"
        }
    };
    text.to_owned()
}

/// The catalogue names, for messages about unknown hook points.
fn hook_list() -> String {
    let names: Vec<&str> = crate::catalogue::CATALOGUE.iter().map(|h| h.name).collect();
    names.join(", ")
}

/// Ruling 18: a registration named a hook point the declaration does not have.
pub(crate) fn hooks_widened(hook: &str, middleware: &str, declared: &[&str]) -> Error {
    let kind = ErrorKind::HooksWidened;
    Error::new(
        kind,
        format!(
            "registration of middleware {} widens its hooks with {}: it declares {}; {} ({})",
            quote(middleware),
            quote(hook),
            declared.join(", "),
            explanation(kind),
            kind.rule_label()
        ),
    )
}

/// Ruling 16: a spec item asked for a band outside its layer's.
pub(crate) fn band_outward(middleware: &str, layer: &str, layer_band: &str, band: &str) -> Error {
    let kind = ErrorKind::BandOutward;
    Error::new(
        kind,
        format!(
            "middleware {} declared in the {layer} layer (band {layer_band}) cannot move out to band {}: {} ({})",
            quote(middleware),
            quote(band),
            explanation(kind),
            kind.rule_label()
        ),
    )
}

/// S8: a spec item outside a profile asked for the baseline band.
pub(crate) fn baseline_outside_profile(middleware: &str, layer: &str) -> Error {
    let kind = ErrorKind::BaselineOutsideProfile;
    Error::new(
        kind,
        format!(
            "middleware {} declared in the {layer} layer cannot be placed in band 'baseline': {} ({})",
            quote(middleware),
            explanation(kind),
            kind.rule_label()
        ),
    )
}

/// I8: a trace line that cannot be read back.
pub(crate) fn invalid_trace(line: usize, problem: &str) -> Error {
    Error::new(
        ErrorKind::InvalidTrace,
        format!("invalid trace line {line}: {problem} (I8)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorKind; 25] = [
        ErrorKind::InvalidName,
        ErrorKind::InvalidHooks,
        ErrorKind::UnknownHook,
        ErrorKind::InvalidBand,
        ErrorKind::MissingFailMode,
        ErrorKind::InvalidFailMode,
        ErrorKind::InvalidDuration,
        ErrorKind::BaselineFailOpen,
        ErrorKind::HooksWidened,
        ErrorKind::DuplicateName,
        ErrorKind::UnknownMiddleware,
        ErrorKind::EventTypeMismatch,
        ErrorKind::InvalidTrace,
        ErrorKind::UnknownLayer,
        ErrorKind::BandOutward,
        ErrorKind::BaselineOutsideProfile,
        ErrorKind::InvalidContracts,
        ErrorKind::InvalidMatch,
        ErrorKind::UnknownMatchKey,
        ErrorKind::MatchKeyNotCarried,
        ErrorKind::MatchWidened,
        ErrorKind::InvalidMode,
        ErrorKind::BaselineAuditNotOrg,
        ErrorKind::InvalidDeadline,
        ErrorKind::InvalidIdentity,
    ];

    #[test]
    fn kinds_and_rules_match_interpreting_section_5() {
        let table: Vec<(&str, &str)> = ALL.iter().map(|k| (k.as_str(), k.rule())).collect();
        assert_eq!(
            table,
            [
                ("invalid_name", "I1"),
                ("invalid_hooks", "I3"),
                ("unknown_hook", "ruling-2"),
                ("invalid_band", "rule-1"),
                ("missing_fail_mode", "ruling-14"),
                ("invalid_fail_mode", "ruling-14"),
                ("invalid_duration", "ruling-15"),
                ("baseline_fail_open", "R2"),
                ("hooks_widened", "ruling-18"),
                ("duplicate_name", "I2"),
                ("unknown_middleware", "I2"),
                ("event_type_mismatch", "I7"),
                ("invalid_trace", "I8"),
                ("unknown_layer", "I13"),
                ("band_outward", "ruling-16"),
                ("baseline_outside_profile", "S8"),
                ("invalid_contracts", "I14"),
                ("invalid_match", "I22"),
                ("unknown_match_key", "I22"),
                ("match_key_not_carried", "I22"),
                ("match_widened", "I22"),
                ("invalid_mode", "I25"),
                ("baseline_audit_not_org", "I25"),
                ("invalid_deadline", "I26"),
                ("invalid_identity", "I27"),
            ]
        );
    }

    #[test]
    fn rule_labels_are_the_rule_ids_in_prose() {
        for kind in ALL {
            assert_eq!(kind.rule_label().replace(' ', "-"), kind.rule());
        }
    }

    #[test]
    fn every_value_message_names_the_value_and_the_rule() {
        for kind in ALL {
            let error = invalid_value(kind, "field", "<bad-value>");
            assert_eq!(error.kind, kind);
            assert!(error.message.contains("<bad-value>"), "{}", error.message);
            let rule = format!("({})", kind.rule_label());
            assert!(error.message.ends_with(&rule), "{}", error.message);
        }
    }

    #[test]
    fn duration_message_reads_as_documented() {
        let error = value_error(ErrorKind::InvalidDuration, "timeout", &quote("2 s"), None);
        assert_eq!(
            error.to_string(),
            "invalid timeout '2 s': a timeout is a positive number of seconds or a string with \
             a unit such as 250ms, 2s, 1.5s or 1m (ruling 15)"
        );
    }

    #[test]
    fn values_are_quoted_verbatim() {
        assert_eq!(quote(r#"a'b\"c"#), r#"'a'b\"c'"#);
        let error = invalid_value(ErrorKind::InvalidHooks, "hooks", "'tool.before'");
        assert!(error.message.starts_with("invalid hooks 'tool.before': "));
    }

    #[test]
    fn unknown_hook_lists_the_catalogue() {
        let error = invalid_value(ErrorKind::UnknownHook, "hook", "'tool.around'");
        assert!(error.message.contains("'tool.around'"));
        assert!(error.message.contains("task.start, step.start,"));
        assert!(error.message.contains("task.end (ruling 2)"));
    }

    #[test]
    fn hooks_widened_names_hook_middleware_and_ruling_18() {
        let error = hooks_widened("tool.after", "guard", &["tool.before"]);
        assert_eq!(error.kind, ErrorKind::HooksWidened);
        for part in ["'tool.after'", "'guard'", "tool.before", "(ruling 18)"] {
            assert!(error.message.contains(part), "{}", error.message);
        }
    }

    #[test]
    fn trace_errors_name_the_line() {
        let error = invalid_trace(7, "unknown hook 'x'");
        assert_eq!(error.kind, ErrorKind::InvalidTrace);
        assert_eq!(error.message, "invalid trace line 7: unknown hook 'x' (I8)");
    }

    #[test]
    fn detail_replaces_the_explanation() {
        let error = value_error(ErrorKind::InvalidDuration, "timeout", "1", Some("too long"));
        assert_eq!(error.message, "invalid timeout 1: too long (ruling 15)");
    }

    #[test]
    fn display_is_the_message() {
        let error = Error::new(ErrorKind::InvalidBand, "m");
        assert_eq!(error.to_string(), "m");
        let _: &dyn std::error::Error = &error;
    }
}
