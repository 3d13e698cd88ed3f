//! Audit mode (I25): a middleware either enforces its answers or only records what it would
//! have done. How the walk treats an audited answer is in `walk.rs`
//! ([`crate::walk::Walk::audited`]); who may audit a baseline middleware is checked here.

use crate::band::Band;
use crate::error::{invalid_value, quote, value_error, Error, ErrorKind};

/// What a middleware's answers do: `Enforce` (the default) acts on them, `Audit` only traces
/// them (`"audit": true`) and counts as a plain `Continue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    #[default]
    Enforce,
    Audit,
}

impl Mode {
    /// `enforce` or `audit`, exactly; anything else is `invalid_mode` (I25).
    pub fn parse(text: &str) -> Result<Mode, Error> {
        match text {
            "enforce" => Ok(Self::Enforce),
            "audit" => Ok(Self::Audit),
            _ => Err(invalid_value(ErrorKind::InvalidMode, "mode", &quote(text))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enforce => "enforce",
            Self::Audit => "audit",
        }
    }

    pub fn is_audit(self) -> bool {
        self == Self::Audit
    }
}

/// I25: a baseline middleware is audited only when an org profile item itself says so
/// (`org_says_audit`); anything else auditing one is `baseline_audit_not_org`.
pub(crate) fn check_baseline_audit(
    name: &str,
    band: Band,
    mode: Mode,
    org_says_audit: bool,
) -> Result<(), Error> {
    if band == Band::Baseline && mode == Mode::Audit && !org_says_audit {
        return Err(value_error(
            ErrorKind::BaselineAuditNotOrg,
            "middleware",
            &quote(name),
            None,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_and_rejects_the_rest() {
        for mode in [Mode::Enforce, Mode::Audit] {
            assert_eq!(Mode::parse(mode.as_str()), Ok(mode));
        }
        for bad in ["", "Audit", "AUDIT", "dry_run", "warn", " audit"] {
            let error = Mode::parse(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidMode);
            assert!(
                error.message.contains(&format!("'{bad}'")),
                "{}",
                error.message
            );
            assert!(error.message.ends_with("(I25)"), "{}", error.message);
        }
        assert_eq!(Mode::default(), Mode::Enforce);
    }

    #[test]
    fn only_the_org_audits_baseline() {
        assert!(check_baseline_audit("g", Band::Baseline, Mode::Enforce, false).is_ok());
        assert!(check_baseline_audit("g", Band::Baseline, Mode::Audit, true).is_ok());
        assert!(check_baseline_audit("g", Band::App, Mode::Audit, false).is_ok());
        let error = check_baseline_audit("g", Band::Baseline, Mode::Audit, false).unwrap_err();
        assert_eq!(error.kind, ErrorKind::BaselineAuditNotOrg);
        assert!(error.message.contains("'g'") && error.message.ends_with("(I25)"));
    }
}
