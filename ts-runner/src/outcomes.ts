/**
 * The five outcomes a middleware answers with, and the combined result of an emit.
 *
 * Outcomes are frozen objects discriminated on `kind`; build them with the helpers `Continue`,
 * `Block`, `Suspend`, `Escalate` and `Retry` (capitalised, like the Python API, and because
 * `continue` is a reserved word). Each helper validates its arguments like the Python
 * constructors. Only objects the helpers made count as outcomes: a look-alike such as
 * `{kind: "block", reason: "…"}` is an invalid return (ruling 9).
 *
 * Severity, most severe first (rule 3): Block > Suspend > Escalate > Retry >
 * Continue(modified) > Continue. Absent optional fields are `null`.
 */

import { parseDurationNs, type Duration } from "./duration.js";
import { HarnessweaverError } from "./errors.js";
import type { Event } from "./events.js";
import { shown } from "./shown.js";
import type { HookWarning } from "./warnings.js";

/** What every outcome may carry (I24): short warnings, as given; judged when the bus takes it. */
export interface Warned {
  /** Absent: none. An array of strings; anything else makes the answer an invalid return. */
  readonly warnings?: readonly string[];
}
/** The options every outcome helper takes. */
export interface WarningsOption {
  readonly warnings?: readonly string[] | null;
}

export interface Continue<E extends Event = Event> extends Warned {
  readonly kind: "continue";
  /** The replacement event for every later middleware and for the operation (absent: none). */
  readonly modified?: E;
}
export interface Block extends Warned {
  readonly kind: "block";
  readonly reason: string;
  readonly code: string | null;
}
export interface Suspend extends Warned {
  readonly kind: "suspend";
  readonly reason: string;
  readonly approverRole: string | null;
  readonly code: string | null;
}
export interface Escalate extends Warned {
  readonly kind: "escalate";
  readonly reason: string;
  readonly to: string | null;
  readonly code: string | null;
}
export interface Retry extends Warned {
  readonly kind: "retry";
  readonly reason: string;
  /** Seconds to wait before the next attempt. */
  readonly delay: number | null;
  readonly maxAttempts: number | null;
  readonly code: string | null;
}

export type Outcome<E extends Event = Event> = Continue<E> | Block | Suspend | Escalate | Retry;
export type OutcomeKind = Outcome["kind"];

/**
 * What `emit` returns: the combined outcome, the event as the chain left it (rulings 7-8) and the
 * warnings of the answers the bus took, in the order the middleware ran (I24).
 */
export interface HookResult<E extends Event = Event> {
  readonly outcome: Outcome<E>;
  readonly event: E;
  readonly warnings: readonly HookWarning[];
}

/** A frozen outcome, with `warnings` only when some were given (so outcomes without stay as they were). */
function warned<T extends object>(outcome: T, options: WarningsOption | undefined): T {
  const warnings = options?.warnings;
  return seal(warnings === undefined || warnings === null ? outcome : { ...outcome, warnings });
}

const made = new WeakSet<object>();

function seal<T extends object>(outcome: T): T {
  made.add(Object.freeze(outcome));
  return outcome;
}

/** Whether `value` is an outcome made by the helpers of this module. */
export function isOutcome(value: unknown): value is Outcome {
  return typeof value === "object" && value !== null && made.has(value);
}

/** A UTF-16 code unit that is half of no surrogate pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function illFormed(text: string | null): boolean {
  return text !== null && LONE_SURROGATE.test(text);
}

/** The longest `reason` an answer may hold, in characters (Unicode code points), I28. */
export const MAX_REASON_CHARS = 4096;

/** The longest `code`, `approverRole` or `to` an answer may hold, in characters, I28. */
export const MAX_TOKEN_CHARS = 128;

/**
 * Whether `text` has more than `max` code points. A string of at most `max` UTF-16 units has
 * at most `max` code points and one of more than `2 * max` units more than `max`: only the
 * strings between are counted, and no more than `max + 1` code points of them.
 */
export function tooLong(text: string | null, max: number): boolean {
  if (text === null || text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

function invalid(text: string | null, max: number): boolean {
  return illFormed(text) || tooLong(text, max);
}

/**
 * Whether a text of `outcome` holds a lone surrogate, which no trace or JSON can carry (I16),
 * or is longer than its bound (I28): the walk judges such an answer an invalid return, as the
 * Python cores do.
 */
export function hasInvalidText(outcome: Outcome): boolean {
  switch (outcome.kind) {
    case "continue":
      return false;
    case "suspend":
      return invalid(outcome.reason, MAX_REASON_CHARS) || invalid(outcome.approverRole, MAX_TOKEN_CHARS) || invalid(outcome.code, MAX_TOKEN_CHARS);
    case "escalate":
      return invalid(outcome.reason, MAX_REASON_CHARS) || invalid(outcome.to, MAX_TOKEN_CHARS) || invalid(outcome.code, MAX_TOKEN_CHARS);
    default:
      return invalid(outcome.reason, MAX_REASON_CHARS) || invalid(outcome.code, MAX_TOKEN_CHARS);
  }
}

function text(owner: string, field: string, value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`${owner}.${field} must be a string, got ${shown(value)}`);
  return value;
}

function optionalText(owner: string, field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new TypeError(`${owner}.${field} must be a string or null, got ${shown(value)}`);
  return value;
}

/** Let the event through; `modified` replaces it for everything after this middleware. */
export function Continue<E extends Event = Event>(modified?: E | null, options?: WarningsOption): Continue<E> {
  const outcome: Continue<E> = modified === undefined || modified === null ? { kind: "continue" } : { kind: "continue", modified };
  return options === undefined ? seal(outcome) : warned(outcome, options);
}

/** Stop: nothing after this middleware runs, and the operation does not happen. */
export function Block(reason: string, options: { readonly code?: string | null } & WarningsOption = {}): Block {
  return warned({ kind: "block", reason: text("Block", "reason", reason), code: optionalText("Block", "code", options.code) }, options);
}

/** Pause until someone in `approverRole` approves. */
export function Suspend(
  reason: string,
  options: { readonly approverRole?: string | null; readonly code?: string | null } & WarningsOption = {},
): Suspend {
  return warned(
    {
      kind: "suspend",
      reason: text("Suspend", "reason", reason),
      approverRole: optionalText("Suspend", "approverRole", options.approverRole),
      code: optionalText("Suspend", "code", options.code),
    },
    options,
  );
}

/** Hand the decision to someone else (`to`). */
export function Escalate(
  reason: string,
  options: { readonly to?: string | null; readonly code?: string | null } & WarningsOption = {},
): Escalate {
  return warned(
    {
      kind: "escalate",
      reason: text("Escalate", "reason", reason),
      to: optionalText("Escalate", "to", options.to),
      code: optionalText("Escalate", "code", options.code),
    },
    options,
  );
}

/**
 * Do the operation again after `delay` (seconds, or a duration such as `"250ms"`: ruling 15),
 * at most `maxAttempts` times (a whole number ≥ 1).
 */
export function Retry(
  reason: string,
  options: { readonly delay?: Duration | null; readonly maxAttempts?: number | null; readonly code?: string | null } & WarningsOption = {},
): Retry {
  return warned(
    {
      kind: "retry",
      reason: text("Retry", "reason", reason),
      delay: retryDelay(options.delay),
      maxAttempts: maxAttempts(options.maxAttempts),
      code: optionalText("Retry", "code", options.code),
    },
    options,
  );
}

function retryDelay(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  try {
    return Number(parseDurationNs(value)) / 1e9;
  } catch (error) {
    if (!(error instanceof HarnessweaverError)) throw error;
    throw new RangeError(
      `Retry.delay must be a positive number of seconds or a duration such as 250ms, got ${shown(value)} (ruling 15)`,
    );
  }
}

function maxAttempts(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1) return value;
  throw new RangeError(`Retry.maxAttempts must be a whole number of at least 1, got ${shown(value)}`);
}

/** Severity (ruling 4): higher is more severe; a Continue that modifies outranks one that does not. */
export function severity(outcome: Outcome): number {
  switch (outcome.kind) {
    case "block":
      return 5;
    case "suspend":
      return 4;
    case "escalate":
      return 3;
    case "retry":
      return 2;
    case "continue":
      return outcome.modified === undefined ? 0 : 1;
  }
}

/** The JSON form of an outcome (INTERPRETING.md §6.2), in the corpus's snake_case spelling. */
export type OutcomeJSON =
  | { kind: "continue"; modified: boolean }
  | { kind: "block"; reason: string; code: string | null }
  | { kind: "suspend"; reason: string; approver_role: string | null; code: string | null }
  | { kind: "escalate"; reason: string; to: string | null; code: string | null }
  | { kind: "retry"; reason: string; delay: number | null; max_attempts: number | null; code: string | null };

export function outcomeJSON(outcome: Outcome): OutcomeJSON {
  switch (outcome.kind) {
    case "continue":
      return { kind: "continue", modified: outcome.modified !== undefined };
    case "block":
      return { kind: "block", reason: outcome.reason, code: outcome.code };
    case "suspend":
      return { kind: "suspend", reason: outcome.reason, approver_role: outcome.approverRole, code: outcome.code };
    case "escalate":
      return { kind: "escalate", reason: outcome.reason, to: outcome.to, code: outcome.code };
    case "retry": {
      const { reason, delay, maxAttempts: max_attempts, code } = outcome;
      return { kind: "retry", reason, delay, max_attempts, code };
    }
  }
}
