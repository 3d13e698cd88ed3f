//! Middleware failures (ruling 9), their stable names (I5) and what a fail mode makes of them
//! (rule 4, rulings 11–12, I6).

use crate::fail_mode::FailMode;
use crate::outcome::OutcomeKind;

/// The kinds of failure of I5.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    Exception = 0,
    /// Answered past its limit (ruling 10, I9).
    Timeout = 1,
    /// Returned neither nothing nor an outcome (ruling 9), or an outcome holding a text that is
    /// no valid text (I16) or a warnings value that is no list of texts (I24): a host judges
    /// its own values and reports this kind to [`crate::walk::Walk::failed`].
    InvalidReturn = 2,
    /// Answered `Continue(modified=e)` with `e` not of the hook point's event type by its real
    /// type (ruling 9, I18).
    WrongEventType = 3,
    /// A modification that broke a hook contract on a strict bus (I14).
    ContractViolation = 4,
    /// The runtime's cancellation raised by the middleware while its caller was not being
    /// cancelled (I15): it awaited something someone else cancelled.
    Cancelled = 5,
    /// Cut off by the chain deadline (I26): it ran past the time left of its emit's chain.
    Deadline = 6,
    /// Not called: its turn came after the chain deadline had passed (I26).
    Skipped = 7,
}

impl FailureKind {
    pub const ALL: [FailureKind; 8] = [
        FailureKind::Exception,
        FailureKind::Timeout,
        FailureKind::InvalidReturn,
        FailureKind::WrongEventType,
        FailureKind::ContractViolation,
        FailureKind::Cancelled,
        FailureKind::Deadline,
        FailureKind::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exception => "exception",
            Self::Timeout => "timeout",
            Self::InvalidReturn => "invalid_return",
            Self::WrongEventType => "wrong_event_type",
            Self::ContractViolation => "contract_violation",
            Self::Cancelled => "cancelled",
            Self::Deadline => "deadline",
            Self::Skipped => "skipped",
        }
    }

    /// The `error` a failure record carries when the failure is not an exception (I5). An
    /// exception carries its own type name instead, so it has none.
    pub fn fixed_error_name(self) -> Option<&'static str> {
        match self {
            Self::Exception => None,
            Self::Timeout => Some("MiddlewareTimeout"),
            Self::InvalidReturn => Some("InvalidReturn"),
            Self::WrongEventType => Some("WrongEventType"),
            Self::ContractViolation => Some("ContractViolation"),
            Self::Cancelled => Some("MiddlewareCancelled"),
            Self::Deadline | Self::Skipped => Some("ChainDeadline"),
        }
    }

    pub fn from_u8(value: u8) -> Option<FailureKind> {
        Self::ALL.get(usize::from(value)).copied()
    }

    pub fn parse(text: &str) -> Option<FailureKind> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// The longest exception type name a failure record holds (I28). Type names are ASCII, so
/// this counts characters, bytes and UTF-16 code units alike.
pub const MAX_TYPE_NAME: usize = 128;

/// The `error` of an `exception` failure whose type name is no type name within
/// [`MAX_TYPE_NAME`] (I28): the same in every implementation, and itself a type name.
pub const UNNAMED_EXCEPTION: &str = "UnnamedException";

/// Whether `text` is a type name (I5, I28): ASCII identifiers joined by dots, at most
/// [`MAX_TYPE_NAME`] characters. Checks at most that many bytes.
pub fn is_type_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_TYPE_NAME {
        return false;
    }
    bytes.split(|&b| b == b'.').all(|part| {
        matches!(part.first(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
            && part.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// The `error` an `exception` failure records for an exception whose type is named `raw`
/// (I28): `raw` when it is a type name, else [`UNNAMED_EXCEPTION`]. A name never carries a
/// message, a secret or a line break into a trace or a log line.
pub fn exception_name(raw: &str) -> &str {
    if is_type_name(raw) {
        raw
    } else {
        UNNAMED_EXCEPTION
    }
}

/// What a failure becomes: the middleware's outcome and its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolution {
    pub outcome: OutcomeKind,
    pub code: Option<&'static str>,
}

/// Closed: Block with `middleware_timeout` for a timeout, `contract_violation` for a broken
/// contract (I14), `chain_deadline` for a middleware cut off or skipped by the chain deadline
/// (I26), `middleware_error` for every other failure (ruling 11). Open: a plain
/// Continue with no code (ruling 12).
pub fn resolve(fail_mode: FailMode, kind: FailureKind) -> Resolution {
    match (fail_mode, kind) {
        (FailMode::Open, _) => Resolution {
            outcome: OutcomeKind::Continue,
            code: None,
        },
        (FailMode::Closed, FailureKind::Timeout) => Resolution {
            outcome: OutcomeKind::Block,
            code: Some("middleware_timeout"),
        },
        (FailMode::Closed, FailureKind::Deadline | FailureKind::Skipped) => Resolution {
            outcome: OutcomeKind::Block,
            code: Some("chain_deadline"),
        },
        (FailMode::Closed, FailureKind::ContractViolation) => Resolution {
            outcome: OutcomeKind::Block,
            code: Some("contract_violation"),
        },
        (FailMode::Closed, _) => Resolution {
            outcome: OutcomeKind::Block,
            code: Some("middleware_error"),
        },
    }
}

/// I6: the reason of a closed failure's Block. It never holds the exception's message (R9).
pub fn closed_reason(name: &str, kind: FailureKind) -> String {
    format!("middleware {name} failed: {}", kind.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_i5() {
        let table: Vec<(&str, Option<&str>)> = FailureKind::ALL
            .iter()
            .map(|k| (k.as_str(), k.fixed_error_name()))
            .collect();
        assert_eq!(
            table,
            [
                ("exception", None),
                ("timeout", Some("MiddlewareTimeout")),
                ("invalid_return", Some("InvalidReturn")),
                ("wrong_event_type", Some("WrongEventType")),
                ("contract_violation", Some("ContractViolation")),
                ("cancelled", Some("MiddlewareCancelled")),
                ("deadline", Some("ChainDeadline")),
                ("skipped", Some("ChainDeadline")),
            ]
        );
        for kind in FailureKind::ALL {
            assert_eq!(FailureKind::parse(kind.as_str()), Some(kind));
            assert_eq!(FailureKind::from_u8(kind as u8), Some(kind));
        }
        assert_eq!(FailureKind::parse("Timeout"), None);
        assert_eq!(FailureKind::from_u8(8), None);
    }

    #[test]
    fn closed_failures_block_with_their_codes_ruling_11() {
        let timeout = resolve(FailMode::Closed, FailureKind::Timeout);
        assert_eq!(timeout.outcome, OutcomeKind::Block);
        assert_eq!(timeout.code, Some("middleware_timeout"));
        for kind in [FailureKind::Deadline, FailureKind::Skipped] {
            assert_eq!(resolve(FailMode::Closed, kind).code, Some("chain_deadline"));
        }
        let contract = resolve(FailMode::Closed, FailureKind::ContractViolation);
        assert_eq!(contract.code, Some("contract_violation"));
        for kind in [
            FailureKind::Exception,
            FailureKind::InvalidReturn,
            FailureKind::WrongEventType,
            FailureKind::Cancelled,
        ] {
            let resolution = resolve(FailMode::Closed, kind);
            assert_eq!(resolution.outcome, OutcomeKind::Block);
            assert_eq!(resolution.code, Some("middleware_error"));
        }
    }

    #[test]
    fn open_failures_continue_without_a_code_ruling_12() {
        for kind in FailureKind::ALL {
            let resolution = resolve(FailMode::Open, kind);
            assert_eq!(resolution.outcome, OutcomeKind::Continue);
            assert_eq!(resolution.code, None);
        }
    }

    #[test]
    fn closed_reasons_of_i6() {
        assert_eq!(
            closed_reason("guard", FailureKind::Exception),
            "middleware guard failed: exception"
        );
        assert_eq!(
            closed_reason("acme.cap", FailureKind::WrongEventType),
            "middleware acme.cap failed: wrong_event_type"
        );
    }

    #[test]
    fn exception_names_of_i28() {
        for name in [
            "ValueError",
            "payments.CardDeclined",
            "_x",
            "a.b_c.D9",
            &"N".repeat(128),
        ] {
            assert_eq!(exception_name(name), name);
        }
        let long = "N".repeat(129);
        for name in [
            "",
            "a b",
            "a\nb",
            ".a",
            "a.",
            "a..b",
            "9a",
            "{\"k\":1}",
            "\u{c4}rger",
            &long,
        ] {
            assert_eq!(exception_name(name), UNNAMED_EXCEPTION, "{name:?}");
        }
        assert!(is_type_name(UNNAMED_EXCEPTION));
    }
}
