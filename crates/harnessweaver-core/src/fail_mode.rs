//! Fail modes (rule 4, ruling 14): declared, never implied.

use crate::error::{invalid_value, quote, Error, ErrorKind};

/// What a failure of the middleware does: `Closed` blocks, `Open` continues. Stored in trace
/// records as its discriminant (0 closed, 1 open).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailMode {
    Closed,
    Open,
}

impl FailMode {
    /// `closed` or `open`, exactly; anything else is `invalid_fail_mode` (ruling 14).
    pub fn parse(text: &str) -> Result<FailMode, Error> {
        match text {
            "closed" => Ok(Self::Closed),
            "open" => Ok(Self::Open),
            _ => Err(invalid_value(
                ErrorKind::InvalidFailMode,
                "fail_mode",
                &quote(text),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Open => "open",
        }
    }

    /// The fail mode stored as a `u8` in a trace record; `None` for anything else.
    pub fn from_u8(value: u8) -> Option<FailMode> {
        match value {
            0 => Some(Self::Closed),
            1 => Some(Self::Open),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_as_str_round_trip() {
        for mode in [FailMode::Closed, FailMode::Open] {
            assert_eq!(FailMode::parse(mode.as_str()), Ok(mode));
            assert_eq!(FailMode::from_u8(mode as u8), Some(mode));
        }
        assert_eq!(FailMode::Closed as u8, 0);
        assert_eq!(FailMode::Open as u8, 1);
        assert_eq!(FailMode::from_u8(255), None);
    }

    #[test]
    fn other_values_are_invalid_fail_modes_ruling_14() {
        for bad in ["Closed", "", "fail-open", "opened"] {
            let error = FailMode::parse(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidFailMode);
            assert_eq!(error.kind.rule(), "ruling-14");
            assert!(error.message.contains(&format!("'{bad}'")));
            assert!(error.message.ends_with("(ruling 14)"));
        }
    }
}
