//! Timeouts (ruling 15): a positive number of seconds, or a string with a unit: `250ms`, `2s`,
//! `1.5s`, `1m`. The core keeps them as whole nanoseconds.
//!
//! Text is parsed exactly in decimal, never through a float, so `0.1s` is exactly
//! 100 000 000 ns. Digits finer than a nanosecond are rounded half-up to the nanosecond (the
//! same rounding that [`duration_from_seconds`] applies to floats); a value that rounds to zero
//! is rejected like zero itself, and so is one that does not fit in a `u64` (about 584 years).

use crate::error::{quote, value_error, Error, ErrorKind};

const TOO_LONG: &str =
    "it is longer than the longest timeout, 18446744073709551615 nanoseconds (about 584 years)";

/// A unit: its length in nanoseconds is `factor × 10^shift`, so multiplying by it is a shift
/// of the decimal point followed by a small multiplication, both exact.
#[derive(Clone, Copy)]
struct Unit {
    factor: u64,
    shift: usize,
}

const MILLISECONDS: Unit = Unit {
    factor: 1,
    shift: 6,
};
const SECONDS: Unit = Unit {
    factor: 1,
    shift: 9,
};
const MINUTES: Unit = Unit {
    factor: 6,
    shift: 10,
};

/// Parses `^(\d+(\.\d+)?|\.\d+)(ms|s|m)$` into nanoseconds.
pub fn parse_duration_text(text: &str) -> Result<u64, Error> {
    let bad = |detail| value_error(ErrorKind::InvalidDuration, "timeout", &quote(text), detail);
    let (number, unit) = split_unit(text).ok_or_else(|| bad(None))?;
    let (whole, fraction) = split_number(number).ok_or_else(|| bad(None))?;
    match exact_nanos(whole, fraction, unit) {
        None => Err(bad(Some(TOO_LONG))),
        Some(0) => Err(bad(None)),
        Some(ns) => Ok(ns),
    }
}

/// Seconds as a float, rounded to the nearest nanosecond. It must be finite, positive, at least
/// one nanosecond once rounded, and fit in a `u64` of nanoseconds.
pub fn duration_from_seconds(seconds: f64) -> Result<u64, Error> {
    let bad = |detail| {
        let shown = format!("{seconds}");
        value_error(ErrorKind::InvalidDuration, "timeout", &shown, detail)
    };
    // NaN fails `> 0.0` as well as `is_finite`; both are spelled out for the reader.
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(bad(None));
    }
    let ns = (seconds * 1e9).round();
    if ns < 1.0 {
        return Err(bad(None));
    }
    // 2^64 is exactly representable; anything at or above it does not fit.
    if ns >= 18_446_744_073_709_551_616.0 {
        return Err(bad(Some(TOO_LONG)));
    }
    // The range checks above make this cast exact: `ns` is a whole number in 1..2^64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(ns as u64)
}

/// Nanoseconds as float seconds, for the host language.
pub fn nanos_to_seconds(ns: u64) -> f64 {
    // Timeouts are far below 2^53 ns (104 days), where the conversion is exact.
    #[allow(clippy::cast_precision_loss)]
    let ns = ns as f64;
    ns / 1e9
}

/// Whether `text` is a zero written as a duration (`0s`, `0ms`, `0.0m`, `.0s`): what ruling 15
/// rejects and an emit's own deadline (I26) accepts.
pub(crate) fn is_zero_text(text: &str) -> bool {
    split_unit(text)
        .and_then(|(number, _)| split_number(number))
        .is_some_and(|(whole, fraction)| whole.bytes().chain(fraction.bytes()).all(|b| b == b'0'))
}

/// Splits off the unit. `ms` is tried before `s` because it ends in `s`.
fn split_unit(text: &str) -> Option<(&str, Unit)> {
    if let Some(number) = text.strip_suffix("ms") {
        return Some((number, MILLISECONDS));
    }
    if let Some(number) = text.strip_suffix('s') {
        return Some((number, SECONDS));
    }
    text.strip_suffix('m').map(|number| (number, MINUTES))
}

/// `\d+(\.\d+)?|\.\d+` into its whole and fractional digits (either may be empty, not both).
fn split_number(number: &str) -> Option<(&str, &str)> {
    let (whole, fraction, point) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, fraction, true),
        None => (number, "", false),
    };
    // With a point the digits after it are required (`1.` is not a number); without one, the
    // whole part is.
    let enough = if point {
        !fraction.is_empty()
    } else {
        !whole.is_empty()
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (enough && digits(whole) && digits(fraction)).then_some((whole, fraction))
}

/// `whole.fraction × unit` in nanoseconds, rounded half-up; `None` when it overflows `u64`.
fn exact_nanos(whole: &str, fraction: &str, unit: Unit) -> Option<u64> {
    // Shift the decimal point `unit.shift` places right: the whole digits, then that many
    // fractional digits (padded with zeros) form an integer; the rest stays a fraction.
    let shifted = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(unit.shift);
    let mut integer: u64 = 0;
    for byte in whole.bytes().chain(shifted) {
        integer = integer.checked_mul(10)?.checked_add(digit(byte))?;
    }
    let rest = fraction.get(unit.shift..).unwrap_or("");
    let rounded_rest = round_half_up(rest, unit.factor);
    integer.checked_mul(unit.factor)?.checked_add(rounded_rest)
}

/// `round_half_up(0.rest × factor)`, exactly, for any number of digits.
///
/// `floor(x + 1/2) = floor((floor(2x) + 1) / 2) = ceil(floor(2x) / 2)`, and
/// `floor(2 × factor × 0.rest)` is the carry out of a long multiplication of the digits by
/// `2 × factor`, done right to left.
fn round_half_up(rest: &str, factor: u64) -> u64 {
    let double = 2 * factor;
    let carry = rest
        .bytes()
        .rev()
        .fold(0, |carry, byte| (digit(byte) * double + carry) / 10);
    carry.div_ceil(2)
}

/// The value of an ASCII digit (callers have checked that it is one).
fn digit(byte: u8) -> u64 {
    u64::from(byte.saturating_sub(b'0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Result<u64, Error> {
        parse_duration_text(s)
    }

    #[test]
    fn units_of_ruling_15() {
        assert_eq!(text("250ms"), Ok(250_000_000));
        assert_eq!(text("2s"), Ok(2_000_000_000));
        assert_eq!(text("1.5s"), Ok(1_500_000_000));
        assert_eq!(text("1m"), Ok(60_000_000_000));
        assert_eq!(text("1.5m"), Ok(90_000_000_000));
        assert_eq!(text(".5s"), Ok(500_000_000));
        assert_eq!(text("007s"), Ok(7_000_000_000));
    }

    #[test]
    fn decimal_is_exact_not_float() {
        assert_eq!(text("0.1s"), Ok(100_000_000));
        assert_eq!(text("0.3s"), Ok(300_000_000));
        assert_eq!(text("0.001ms"), Ok(1_000));
        assert_eq!(text("0.000000001s"), Ok(1));
        assert_eq!(text("0.00000000001m"), Ok(1)); // 0.6 ns
    }

    #[test]
    fn sub_nanosecond_digits_round_half_up() {
        assert_eq!(text("0.0000000015s"), Ok(2));
        assert_eq!(text("0.0000000014999999999999999999s"), Ok(1));
        assert_eq!(text("0.0000005ms"), Ok(1));
        assert_eq!(text("1.0000000005s"), Ok(1_000_000_001));
        assert_eq!(
            text("1.000000000000000000000000000000000001s"),
            Ok(1_000_000_000)
        );
        assert_eq!(text("0.000000000025m"), Ok(2)); // 1.5 ns
        assert!(text("0.00000000000833m").is_err()); // 0.4998 ns
    }

    #[test]
    fn values_that_round_to_zero_are_rejected() {
        for bad in ["0.0000000004s", "0.0000000004999s", "0.0000004ms"] {
            assert_eq!(
                text(bad).unwrap_err().kind,
                ErrorKind::InvalidDuration,
                "{bad}"
            );
        }
    }

    #[test]
    fn u64_overflow_is_an_error_at_the_exact_boundary() {
        assert_eq!(text("18446744073.709551615s"), Ok(u64::MAX));
        let error = text("18446744073.709551616s").unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidDuration);
        assert!(error.message.contains("'18446744073.709551616s'"));
        assert!(error.message.contains("584 years"));
        assert!(text("99999999999999999999999999m").is_err());
    }

    #[test]
    fn anything_else_is_an_error_naming_the_value() {
        let bad = [
            "", "0s", "0ms", "0.0ms", "0m", ".0s", "-1s", "+1s", "2 s", " 2s", "2s ", "2S", "2MS",
            "2M", "2h", "2", "s", "ms", ".s", "1.s", "1..5s", "1.2.3s", "NaN", "nans", "inf",
            "infs", "1e3s", "2sec", "٢s", "2msx", "0x10s", "1_000ms",
        ];
        for value in bad {
            let error = text(value).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidDuration, "{value}");
            assert_eq!(error.kind.rule(), "ruling-15");
            assert!(
                error.message.contains(&format!("'{value}'")),
                "{}",
                error.message
            );
            assert!(error.message.ends_with("(ruling 15)"));
        }
    }

    #[test]
    fn seconds_round_to_the_nearest_nanosecond() {
        assert_eq!(duration_from_seconds(2.0), Ok(2_000_000_000));
        assert_eq!(duration_from_seconds(0.25), Ok(250_000_000));
        assert_eq!(duration_from_seconds(0.1), Ok(100_000_000));
        assert_eq!(duration_from_seconds(1e-9), Ok(1));
        assert_eq!(duration_from_seconds(1.4e-9), Ok(1));
        assert_eq!(duration_from_seconds(1.6e-9), Ok(2));
        assert_eq!(duration_from_seconds(1e10), Ok(10_000_000_000_000_000_000));
    }

    #[test]
    fn bad_seconds_are_errors_naming_the_value() {
        let cases = [
            (0.0, "0"),
            (-0.0, "-0"),
            (-1.0, "-1"),
            (-0.5, "-0.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (4e-10, "0.0000000004"),
            (1e11, "100000000000"),
        ];
        for (value, shown) in cases {
            let error = duration_from_seconds(value).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidDuration, "{value}");
            assert!(
                error.message.contains(&format!("timeout {shown}:")),
                "{}",
                error.message
            );
            assert!(error.message.ends_with("(ruling 15)"));
        }
    }

    #[test]
    fn nanos_convert_back_to_seconds() {
        assert!((nanos_to_seconds(1_500_000_000) - 1.5).abs() < f64::EPSILON);
        assert!((nanos_to_seconds(100_000_000) - 0.1).abs() < f64::EPSILON);
        assert!(nanos_to_seconds(0).abs() < f64::EPSILON);
    }
}
