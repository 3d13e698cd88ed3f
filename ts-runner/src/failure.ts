/**
 * Failures (ruling 9): their kinds and type names (I5), and what the fail mode makes of them
 * (rulings 11-12, I6).
 */

export type FailureKind = "exception" | "timeout" | "invalid_return" | "wrong_event_type" | "contract_violation" | "cancelled";

const FIXED_NAMES: Readonly<Record<Exclude<FailureKind, "exception">, string>> = {
  timeout: "MiddlewareTimeout",
  invalid_return: "InvalidReturn",
  wrong_event_type: "WrongEventType",
  contract_violation: "ContractViolation",
  cancelled: "MiddlewareCancelled",
};

/** What an `exception` failure records when the thrown value is not an `Error` (I5). */
export const NON_ERROR_THROWN = "NonErrorThrown";

function isError(value: unknown): value is Error {
  // instanceof fails for errors of another realm (vm contexts, workers' structured clones).
  return value instanceof Error || Object.prototype.toString.call(value) === "[object Error]";
}

/**
 * Whether a thrown value is the runtime's cancellation: an `AbortError` (what an aborted
 * `fetch`, timer or stream rejects with, `signal.reason` of a plain `abort()`). Thrown while
 * the caller's own signal has not aborted, it is a failure of kind `cancelled` (I15).
 */
export function isCancellation(thrown: unknown): boolean {
  if (!(thrown instanceof Error || thrown instanceof DOMException)) return false;
  try {
    return thrown.name === "AbortError";
  } catch {
    return false; // a hostile name getter: an ordinary exception, named as errorName can
  }
}

/**
 * The `error` of a failure record: the thrown Error's `name` (its type name, I5), never its
 * message (R9); `NonErrorThrown` for a thrown string, number, undefined…
 */
export function errorName(kind: FailureKind, thrown?: unknown): string {
  if (kind !== "exception") return FIXED_NAMES[kind];
  if (!isError(thrown)) return NON_ERROR_THROWN;
  const name: unknown = thrown.name;
  return typeof name === "string" && name !== "" ? name : "Error";
}

/** A closed failure blocks with this code (ruling 11; I14 for a broken contract). */
export function closedCode(kind: FailureKind): "middleware_timeout" | "middleware_error" | "contract_violation" {
  if (kind === "contract_violation") return "contract_violation";
  return kind === "timeout" ? "middleware_timeout" : "middleware_error";
}

/** The reason of a closed failure's Block (I6); it never holds an exception's message. */
export function closedReason(name: string, kind: FailureKind): string {
  return `middleware ${name} failed: ${kind}`;
}
