/**
 * Durations (ruling 15): a positive number of seconds, or a string with a unit: `250ms`,
 * `2s`, `1.5s`, `1m`. Text is parsed exactly as a decimal and rounded half-up to the
 * nanosecond (like the Rust core), so `"1.5s"` is exactly 1 500 000 000 ns; a number is
 * rounded half-up from its binary value (like the Python core).
 */

import { valueError, type HarnessweaverError, type Phase } from "./errors.js";
import { shown } from "./shown.js";

/** A timeout or delay as callers write it: seconds, or text such as `"250ms"`. */
export type Duration = number | string;

const TEXT = /^([0-9]+(?:\.[0-9]+)?|\.[0-9]+)(ms|s|m)$/;
const UNIT_NS: Readonly<Record<string, bigint>> = { ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n };
const MAX_NS = 2n ** 64n - 1n;

/** Said of a text timeout whose nanoseconds do not fit in 64 bits (as the Rust core says it). */
const TOO_LONG = "it is longer than the longest timeout, 18446744073709551615 nanoseconds (about 584 years)";

export function durationError(value: unknown, phase: Phase = "declare", detail?: string): HarnessweaverError {
  return valueError(phase, "invalid_duration", "timeout", shown(value), detail);
}

/** Nanoseconds of a duration; throws the ruling-15 error for anything else. */
export function parseDurationNs(value: unknown, phase: Phase = "declare"): bigint {
  let ns: bigint;
  if (typeof value === "string") {
    const match = TEXT.exec(value);
    if (match === null) throw durationError(value, phase);
    ns = textNs(match[1] ?? "", UNIT_NS[match[2] ?? ""] ?? 0n);
    if (ns > MAX_NS) throw durationError(value, phase, TOO_LONG);
  } else if (typeof value === "number") {
    if (!Number.isFinite(value) || value <= 0) throw durationError(value, phase);
    const scaled = Math.floor(value * 1e9 + 0.5);
    if (!Number.isFinite(scaled)) throw durationError(value, phase);
    ns = BigInt(scaled);
  } else {
    throw durationError(value, phase); // booleans, null, objects: never a duration
  }
  if (ns <= 0n || ns > MAX_NS) throw durationError(value, phase);
  return ns;
}

/** Exact decimal × unit, rounded half-up: `digits` is "12", "1.5" or ".25". */
function textNs(digits: string, unitNs: bigint): bigint {
  const [whole = "", fraction = ""] = digits.split(".");
  const scale = 10n ** BigInt(fraction.length);
  const exact = BigInt(`${whole || "0"}${fraction}`) * unitNs; // = ns × scale
  return (2n * exact + scale) / (2n * scale);
}

/** Seconds of a duration (`"250ms"` → 0.25); throws a `DeclarationError` otherwise. */
export function parseDuration(value: Duration): number {
  return Number(parseDurationNs(value)) / 1e9;
}
