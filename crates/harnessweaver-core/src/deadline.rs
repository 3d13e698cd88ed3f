//! Chain deadlines (I26): a time budget for a whole chain, per hook point and per emit.
//!
//! A deadline is written like a timeout (ruling 15); an emit's own deadline may also be zero,
//! a budget already spent. A bad value is `invalid_deadline` naming the value and the hook
//! point. What a deadline does to the walk is the binding's clock work plus two failure kinds
//! ([`FailureKind::Deadline`](crate::failure::FailureKind), `Skipped`) that the walk resolves
//! like any failure.

use crate::duration::{duration_from_seconds, is_zero_text, parse_duration_text};
use crate::error::{quote, value_error, Error, ErrorKind};

/// Who set the deadline: a hook point's (positive) or an emit's own (zero allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineOf {
    HookPoint,
    Emit,
}

fn invalid(hook: &str, shown: &str) -> Error {
    value_error(
        ErrorKind::InvalidDeadline,
        &format!("deadline of {hook}"),
        shown,
        None,
    )
}

/// Nanoseconds of a deadline written as text (`"250ms"`, `"2s"`; `"0s"` for an emit).
pub fn deadline_text_ns(hook: &str, text: &str, of: DeadlineOf) -> Result<u64, Error> {
    if of == DeadlineOf::Emit && is_zero_text(text) {
        return Ok(0);
    }
    parse_duration_text(text).map_err(|_| invalid(hook, &quote(text)))
}

/// Nanoseconds of a deadline given in seconds (`0` allowed for an emit).
pub fn deadline_seconds_ns(hook: &str, seconds: f64, of: DeadlineOf) -> Result<u64, Error> {
    if of == DeadlineOf::Emit && seconds == 0.0 {
        return Ok(0);
    }
    duration_from_seconds(seconds).map_err(|_| invalid(hook, &format!("{seconds}")))
}

/// A deadline of a type that is no duration (a boolean, a list…), shown as the host prints it.
pub fn deadline_type_error(hook: &str, repr: &str) -> Error {
    invalid(hook, repr)
}

/// The earlier of a hook point's deadline and an emit's own, as an instant: `start` plus the
/// budget, saturating (a budget of centuries is no deadline in practice, never an overflow).
pub fn chain_deadline(start: u64, hook_point: Option<u64>, emit: Option<u64>) -> Option<u64> {
    let budget = match (hook_point, emit) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    budget.map(|ns| start.saturating_add(ns))
}

/// Where a middleware starting at `t0` stands against the chain deadline (I26).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// The deadline has passed (at or before `t0`): skip it.
    Skip,
    /// Time is left but less than its own timeout (or it has none): it is cut off at the
    /// deadline, after this many nanoseconds.
    CutOff(u64),
    /// Its own timeout ends no later than the deadline: timed as before.
    Own,
}

/// I26: skip, cut off, or keep its own timeout.
pub fn turn(deadline: u64, t0: u64, timeout_ns: Option<u64>) -> Turn {
    if t0 >= deadline {
        return Turn::Skip;
    }
    let left = deadline - t0;
    match timeout_ns {
        Some(own) if own <= left => Turn::Own,
        _ => Turn::CutOff(left),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_point_deadlines_are_durations_of_ruling_15() {
        let of = DeadlineOf::HookPoint;
        assert_eq!(deadline_text_ns("tool.before", "2s", of), Ok(2_000_000_000));
        assert_eq!(
            deadline_seconds_ns("tool.before", 0.25, of),
            Ok(250_000_000)
        );
        for bad in ["0s", "-1s", "2 s", "soon", ""] {
            let err = deadline_text_ns("tool.before", bad, of).unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidDeadline);
            assert!(err.message.contains(&format!("'{bad}'")), "{}", err.message);
            assert!(err.message.contains("tool.before") && err.message.ends_with("(I26)"));
        }
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = deadline_seconds_ns("model.after", bad, of).unwrap_err();
            assert_eq!(err.kind.rule(), "I26");
        }
    }

    #[test]
    fn an_emits_deadline_may_be_zero_a_spent_budget() {
        let of = DeadlineOf::Emit;
        for zero in ["0s", "0ms", "0.0m", ".0s", "00s"] {
            assert_eq!(deadline_text_ns("tool.before", zero, of), Ok(0), "{zero}");
        }
        assert_eq!(deadline_seconds_ns("tool.before", 0.0, of), Ok(0));
        assert!(deadline_seconds_ns("tool.before", -0.5, of).is_err());
        assert!(deadline_text_ns("tool.before", "0", of).is_err());
        assert!(deadline_text_ns("tool.before", "0.s", of).is_err());
    }

    #[test]
    fn the_chain_deadline_is_the_earlier_of_the_two() {
        assert_eq!(chain_deadline(100, None, None), None);
        assert_eq!(chain_deadline(100, Some(50), None), Some(150));
        assert_eq!(chain_deadline(100, None, Some(0)), Some(100));
        assert_eq!(chain_deadline(100, Some(50), Some(20)), Some(120));
        assert_eq!(chain_deadline(100, Some(20), Some(50)), Some(120));
        assert_eq!(chain_deadline(u64::MAX - 1, Some(5), None), Some(u64::MAX));
    }

    #[test]
    fn a_middleware_is_skipped_cut_off_or_timed_as_before() {
        assert_eq!(turn(100, 100, None), Turn::Skip);
        assert_eq!(turn(100, 150, Some(10)), Turn::Skip);
        assert_eq!(turn(100, 40, None), Turn::CutOff(60));
        assert_eq!(turn(100, 40, Some(61)), Turn::CutOff(60));
        assert_eq!(turn(100, 40, Some(60)), Turn::Own);
        assert_eq!(turn(100, 40, Some(5)), Turn::Own);
    }
}
