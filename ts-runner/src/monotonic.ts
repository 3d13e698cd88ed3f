/**
 * The monotonic clock of timeouts and trace timings (ruling 10, I9).
 *
 * `process.hrtime.bigint()` counts from an arbitrary point (on Linux, the boot), which can be
 * past 2^53 ns; trace timings are therefore counted from when this module was loaded, so
 * they stay exact as JSON numbers.
 */

const ORIGIN = process.hrtime.bigint();

/** Monotonic nanoseconds (exact, for deadlines). */
export function monotonicNs(): bigint {
  return process.hrtime.bigint();
}

/** A monotonic instant as a trace's `t_ns`: nanoseconds since this module was loaded. */
export function traceNs(instant: bigint): number {
  return Number(instant - ORIGIN);
}
