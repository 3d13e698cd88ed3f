/**
 * Seeing why a middleware threw, locally: `NODE_DEBUG=harnessweaver` (docs/logging.md), the
 * TypeScript side of Python's `harnessweaver.debug` logger.
 *
 * The trace names a failed middleware's exception by its type only (R9): its message may hold
 * a secret. While debugging that is not enough, so with Node's standard switch for a module's
 * debug output set, each value a middleware throws (or rejects with) is written to standard
 * error with its stack, message included, through `util.debuglog`. Never into the trace.
 *
 * As in Python, the switch is read when a middleware is registered: only a middleware
 * registered while it is on runs through the small wrapper below, so with it off the walk calls
 * the very function it called before, and an emit does no extra work.
 */

import { debuglog, inspect } from "node:util";
import { errorName } from "./failure.js";
import type { Call } from "./registry.js";

/** The `util.debuglog` section: `NODE_DEBUG=harnessweaver` switches it on. */
export const DEBUG_SECTION = "harnessweaver";

const log = debuglog(DEBUG_SECTION);

/** Whether `NODE_DEBUG` names `harnessweaver` (asked once per registration). */
export function debugEnabled(): boolean {
  return log.enabled;
}

/** What the thrown value says: its stack (which starts with its message), or how it inspects. */
function shown(thrown: unknown): string {
  try {
    if (thrown instanceof Error && typeof thrown.stack === "string") return thrown.stack;
    return inspect(thrown, { depth: 2, customInspect: false, showProxy: true });
  } catch {
    return "(the thrown value cannot be shown)"; // a hostile getter: the report goes on without it
  }
}

function report(name: string, thrown: unknown): void {
  try {
    log("middleware %s raised %s (the trace records its type only)\n%s", name, errorName("exception", thrown), shown(thrown));
  } catch {
    // Debug output never changes what the bus does.
  }
}

/**
 * `call` as the walk runs it, with whatever it throws (or the promise it returns rejects with)
 * reported and then thrown on unchanged, so the walk classifies the failure exactly as without
 * it. Anything that is not a thenable (an invalid return, ruling 9) is handed on untouched.
 */
export function watched(call: Call, name: string): Call {
  return (event, envelope, signal) => {
    let answer: unknown;
    try {
      answer = call(event, envelope, signal);
    } catch (error) {
      report(name, error);
      throw error;
    }
    if (answer instanceof Promise) {
      return answer.then(undefined, (error: unknown) => {
        report(name, error);
        throw error;
      });
    }
    return answer;
  };
}
