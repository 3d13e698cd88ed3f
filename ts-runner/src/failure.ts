/**
 * Failures (ruling 9): their kinds and type names (I5), and what the fail mode makes of them
 * (rulings 11-12, I6).
 */

import { types } from "node:util";

export type FailureKind = "exception" | "timeout" | "invalid_return" | "wrong_event_type" | "contract_violation" | "cancelled" | "deadline" | "skipped";

const FIXED_NAMES: Readonly<Record<Exclude<FailureKind, "exception">, string>> = {
  timeout: "MiddlewareTimeout",
  invalid_return: "InvalidReturn",
  wrong_event_type: "WrongEventType",
  contract_violation: "ContractViolation",
  cancelled: "MiddlewareCancelled",
  deadline: "ChainDeadline", // cut off by the chain deadline (I26)
  skipped: "ChainDeadline", // not called: the chain deadline had passed (I26)
};

/** What an `exception` failure records when the thrown value is not an `Error` (I5). */
export const NON_ERROR_THROWN = "NonErrorThrown";

/** What it records for an `Error` whose `name` is no type name (or cannot be read), I28. */
export const UNNAMED_EXCEPTION = "UnnamedException";

/** The longest `name` recorded as a type name (I28): ASCII, so code units and code points agree. */
export const MAX_TYPE_NAME = 128;

/**
 * A type name (I5, I28): ASCII identifiers joined by dots, like `TypeError` or
 * `payments.CardDeclined`. A message-like name (spaces, line breaks) is none, so a `name`
 * getter that answers the message cannot carry it into the trace (R9).
 */
const TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Whether `text` is a type name of at most MAX_TYPE_NAME characters (I28). */
export function isTypeName(text: string): boolean {
  return text.length <= MAX_TYPE_NAME && TYPE_NAME.test(text);
}

/**
 * Whether `value` is an Error, asked without running its code: a Proxy never is (the bus runs
 * none of its traps: they may throw, or answer anything); a native Error is, of any realm
 * (`isNativeError` reads an internal slot); anything else is when `Error.prototype` is on its
 * prototype chain, a walk that a Proxy in that chain may break off with a throw.
 */
function isError(value: unknown): value is Error {
  if (typeof value !== "object" || value === null || types.isProxy(value)) return false;
  if (types.isNativeError(value)) return true;
  try {
    return value instanceof Error;
  } catch {
    return false; // what it threw is dropped unread: it may be as hostile as the value
  }
}

/**
 * Whether a thrown value is the runtime's cancellation: an `AbortError` (what an aborted
 * `fetch`, timer or stream rejects with, `signal.reason` of a plain `abort()`). Thrown while
 * the caller's own signal has not aborted, it is a failure of kind `cancelled` (I15).
 */
export function isCancellation(thrown: unknown): boolean {
  if (!isError(thrown)) return false; // a DOMException is an Error here; a Proxy never is
  try {
    return thrown.name === "AbortError";
  } catch {
    return false; // a hostile name getter: an ordinary exception, named as errorName can
  }
}

/**
 * The `error` of a failure record: the thrown Error's `name` (its type name, I5), never its
 * message (R9); `NonErrorThrown` for a thrown string, number, undefined, Proxy… An Error whose
 * `name` getter throws, or whose `name` is not a type name (not a string, empty, longer than
 * MAX_TYPE_NAME, not ASCII identifiers joined by dots) is recorded as `UnnamedException` (I28). Never throws: the
 * walk calls it on whatever a middleware threw (issue 13).
 */
export function errorName(kind: FailureKind, thrown?: unknown): string {
  if (kind !== "exception") return FIXED_NAMES[kind];
  if (!isError(thrown)) return NON_ERROR_THROWN;
  let name: unknown;
  try {
    name = thrown.name; // may be a getter, or inherited from a Proxy
  } catch {
    return UNNAMED_EXCEPTION;
  }
  return typeof name === "string" && isTypeName(name) ? name : UNNAMED_EXCEPTION;
}

/** A closed failure blocks with this code (ruling 11; I14 for a broken contract). */
export function closedCode(kind: FailureKind): "middleware_timeout" | "middleware_error" | "contract_violation" | "chain_deadline" {
  if (kind === "contract_violation") return "contract_violation";
  if (kind === "deadline" || kind === "skipped") return "chain_deadline"; // I26
  return kind === "timeout" ? "middleware_timeout" : "middleware_error";
}

/** The reason of a closed failure's Block (I6); it never holds an exception's message. */
export function closedReason(name: string, kind: FailureKind): string {
  return `middleware ${name} failed: ${kind}`;
}
