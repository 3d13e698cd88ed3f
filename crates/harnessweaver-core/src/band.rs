//! Priority bands (rule 1): baseline is outermost, task innermost. The derived order is the
//! run order of an inbound hook point.

use crate::error::{invalid_value, quote, Error, ErrorKind};

#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Band {
    Baseline = 0,
    Platform = 1,
    App = 2,
    Task = 3,
}

impl Band {
    /// Every band, outermost first.
    pub const ALL: [Band; 4] = [Band::Baseline, Band::Platform, Band::App, Band::Task];

    /// One of the four band names, exactly; anything else is `invalid_band` (rule 1).
    pub fn parse(text: &str) -> Result<Band, Error> {
        Self::ALL
            .into_iter()
            .find(|band| band.as_str() == text)
            .ok_or_else(|| invalid_value(ErrorKind::InvalidBand, "band", &quote(text)))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::Platform => "platform",
            Self::App => "app",
            Self::Task => "task",
        }
    }

    /// The band stored as a `u8` in a trace record; `None` for anything else (255 = no band).
    pub fn from_u8(value: u8) -> Option<Band> {
        Self::ALL.get(usize::from(value)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_ordered_outermost_first_rule_1() {
        assert!(Band::Baseline < Band::Platform);
        assert!(Band::Platform < Band::App);
        assert!(Band::App < Band::Task);
        let mut shuffled = [Band::Task, Band::Baseline, Band::App, Band::Platform];
        shuffled.sort();
        assert_eq!(shuffled, Band::ALL);
    }

    #[test]
    fn parse_and_as_str_round_trip() {
        for band in Band::ALL {
            assert_eq!(Band::parse(band.as_str()), Ok(band));
            assert_eq!(Band::from_u8(band as u8), Some(band));
        }
    }

    #[test]
    fn other_names_are_invalid_bands_naming_the_value() {
        for bad in ["core", "", "App", " app", "baseline "] {
            let error = Band::parse(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidBand);
            assert!(error.message.contains(&format!("'{bad}'")));
            assert!(error.message.ends_with("(rule 1)"));
        }
    }

    #[test]
    fn from_u8_rejects_unknown_values() {
        assert_eq!(Band::from_u8(4), None);
        assert_eq!(Band::from_u8(255), None);
    }
}
