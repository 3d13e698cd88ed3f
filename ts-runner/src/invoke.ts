/**
 * Calling one middleware under its timeout (ruling 10, I9).
 *
 * Time runs on the monotonic clock from just before the call until the answer arrives. A
 * middleware that is still pending at its deadline is abandoned: its `AbortSignal` aborts
 * (reason: a `TimeoutError` DOMException) and the bus stops waiting. An answer that arrives
 * after the deadline is a timeout too, even from a middleware that never yielded to the event
 * loop and so could not be interrupted: its late answer is discarded.
 */

import { monotonicNs } from "./monotonic.js";
import type { Entry } from "./registry.js";

/** How a call ended: an answer, a thrown value, or the timeout. */
export type Settled =
  | { readonly kind: "answer"; readonly value: unknown; readonly t0: bigint; readonly t1: bigint }
  | { readonly kind: "thrown"; readonly error: unknown; readonly t0: bigint; readonly t1: bigint }
  | { readonly kind: "timeout"; readonly t0: bigint; readonly t1: bigint };

/** setTimeout's longest delay; longer deadlines are re-armed until they are due. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Calls `entry` and settles it. Rejects only when `outer` (the caller's signal) aborts: that
 * cancellation belongs to the caller and is never a failure of the middleware (I12).
 */
export function invoke(entry: Entry, event: unknown, envelope: unknown, outer?: AbortSignal): Promise<Settled> {
  const controller = new AbortController();
  const timeoutNs = entry.declaration.timeoutNs;
  const t0 = monotonicNs();
  const ended = (value: unknown, kind: "answer" | "thrown"): Settled => {
    const t1 = monotonicNs();
    if (timeoutNs !== null && t1 - t0 > timeoutNs) return { kind: "timeout", t0, t1 }; // late: discarded
    return kind === "answer" ? { kind, value, t0, t1 } : { kind, error: value, t0, t1 };
  };
  let answer: unknown;
  try {
    answer = entry.call(event, envelope, controller.signal);
  } catch (error) {
    return Promise.resolve(ended(error, "thrown")); // a plain function's throw = a rejection
  }
  let thenable: boolean;
  try {
    thenable = isThenable(answer);
  } catch (error) {
    return Promise.resolve(ended(error, "thrown")); // a `then` getter that throws
  }
  if (!thenable) return Promise.resolve(ended(answer, "answer"));
  // No deadline to arm and no caller's signal to listen to: nothing can end the wait but the
  // answer itself, so it is simply awaited (no racing promise, timer or listeners to set up).
  if (timeoutNs === null && outer === undefined) return awaited(answer as PromiseLike<unknown>, t0);
  return new Promise<Settled>((resolve, reject) => {
    let done = false;
    const stop = (): boolean => {
      if (done) return false;
      done = true;
      disarm();
      outer?.removeEventListener("abort", cancelled);
      return true;
    };
    const cancelled = (): void => {
      if (!stop()) return;
      controller.abort(outer?.reason);
      reject(outer?.reason);
    };
    const disarm = timeoutNs === null ? () => {} : deadline(t0 + timeoutNs, () => {
      if (!stop()) return;
      controller.abort(new DOMException(`middleware ${entry.declaration.name} timed out`, "TimeoutError"));
      resolve({ kind: "timeout", t0, t1: monotonicNs() });
    });
    Promise.resolve(answer).then(
      (value) => stop() && resolve(ended(value, "answer")),
      (error: unknown) => stop() && resolve(ended(error, "thrown")),
    );
    if (outer?.aborted) cancelled();
    else outer?.addEventListener("abort", cancelled, { once: true });
  });
}

/** The answer of a middleware without a timeout, called without a caller's signal. */
async function awaited(answer: PromiseLike<unknown>, t0: bigint): Promise<Settled> {
  try {
    const value: unknown = await answer;
    return { kind: "answer", value, t0, t1: monotonicNs() };
  } catch (error) {
    return { kind: "thrown", error, t0, t1: monotonicNs() };
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * Calls `fire` once the monotonic clock passes `due`. Timers may fire a little early (libuv
 * keeps whole milliseconds of a cached loop time), so each firing checks the clock and
 * re-arms for what is left. Returns the function that disarms it.
 */
function deadline(due: bigint, fire: () => void): () => void {
  let handle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const left = due - monotonicNs();
    handle = setTimeout(check, Math.min(Math.max(0, Math.ceil(Number(left) / 1e6)), MAX_DELAY_MS));
  };
  const check = (): void => (monotonicNs() > due ? fire() : arm());
  arm(); // never fires synchronously: the caller finishes setting up first
  return () => clearTimeout(handle);
}
