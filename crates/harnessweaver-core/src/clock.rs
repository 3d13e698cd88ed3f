//! Clocks for deadlines and trace timings.
//!
//! A precise monotonic read costs 20 ns on bare metal but 60–70 ns on a virtual machine (a
//! paravirtual clock behind the vDSO), more than everything else the core does for a
//! middleware. So per-middleware times come from the *coarse* monotonic clock (the same clock,
//! read at its last tick: about 10 ns, resolution of a few milliseconds) unless precision
//! matters: a timeout too short for that resolution, or a trace that asks for precise timings.
//! A deadline judged on the coarse clock is off by at most its resolution, which for the
//! timeouts that use it (at least [`COARSE_FACTOR`] resolutions) is under 0.4 %.
//!
//! Both clocks count nanoseconds on the same base (`CLOCK_MONOTONIC` on Linux), so their
//! readings compare. Where no coarse clock exists, the coarse read is a precise one.

use std::sync::OnceLock;

/// A timeout of at least this many coarse-clock resolutions is judged on the coarse clock.
pub const COARSE_FACTOR: u64 = 256;

#[cfg(target_os = "linux")]
fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clock ids exist on every Linux since
    // 2.6.32, and on failure `ts` keeps zeros, which only makes a reading early.
    unsafe { libc::clock_gettime(clock, &raw mut ts) };
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// Precise monotonic nanoseconds.
#[cfg(target_os = "linux")]
pub fn precise_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// Coarse monotonic nanoseconds: cheap, never ahead of [`precise_ns`], at most
/// [`coarse_resolution_ns`] behind it.
#[cfg(target_os = "linux")]
pub fn coarse_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC_COARSE)
}

/// The coarse clock's resolution in nanoseconds (0 where there is no coarse clock).
#[cfg(target_os = "linux")]
pub fn coarse_resolution_ns() -> u64 {
    static RESOLUTION: OnceLock<u64> = OnceLock::new();
    *RESOLUTION.get_or_init(|| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: as in `read`.
        let status = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &raw mut ts) };
        let nanos = u64::try_from(ts.tv_nsec).unwrap_or(u64::MAX);
        if status == 0 && ts.tv_sec == 0 {
            nanos
        } else {
            u64::MAX // an unusable coarse clock: judge every deadline precisely
        }
    })
}

#[cfg(not(target_os = "linux"))]
fn since_epoch() -> u64 {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    let elapsed = EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos();
    u64::try_from(elapsed).unwrap_or(u64::MAX)
}

#[cfg(not(target_os = "linux"))]
pub fn precise_ns() -> u64 {
    since_epoch()
}

#[cfg(not(target_os = "linux"))]
pub fn coarse_ns() -> u64 {
    since_epoch()
}

#[cfg(not(target_os = "linux"))]
pub fn coarse_resolution_ns() -> u64 {
    0
}

/// Whether a middleware with this timeout must be timed on the precise clock.
pub fn needs_precise(timeout_ns: u64) -> bool {
    timeout_ns / COARSE_FACTOR < coarse_resolution_ns()
}

/// A reading of the precise clock when `precise`, else of the coarse one.
pub fn now(precise: bool) -> u64 {
    if precise {
        precise_ns()
    } else {
        coarse_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clocks_share_a_base_and_coarse_is_never_ahead() {
        let coarse = coarse_ns();
        let precise = precise_ns();
        assert!(coarse <= precise);
        let resolution = coarse_resolution_ns();
        if resolution > 0 && resolution < u64::MAX {
            assert!(precise - coarse <= resolution * 2, "{precise} vs {coarse}");
        }
    }

    #[test]
    fn short_timeouts_are_timed_precisely() {
        let resolution = coarse_resolution_ns();
        if resolution == 0 {
            assert!(!needs_precise(1)); // no coarse clock: every read is precise anyway
        } else if resolution < u64::MAX {
            assert!(needs_precise(resolution * 10));
            assert!(!needs_precise(resolution * COARSE_FACTOR));
        }
    }

    #[test]
    fn readings_do_not_go_backwards() {
        let mut last = precise_ns();
        for _ in 0..1000 {
            let next = precise_ns();
            assert!(next >= last);
            last = next;
        }
    }
}
