/**
 * Chain deadlines (I26): a time budget for a whole chain, per hook point and per emit.
 *
 * Written like a timeout (ruling 15); an emit's own deadline may also be zero, a budget
 * already spent. A bad value is `invalid_deadline`, naming the value and the hook point.
 */

import { HOOK_POINTS, isHookPoint, type HookPoint } from "./catalogue.js";
import type { Duration } from "./duration.js";
import { parseDurationNs } from "./duration.js";
import { valueError, type HarnessweaverError, type Phase } from "./errors.js";
import { shown } from "./shown.js";

const ZERO_TEXT = /^(0+(?:\.0+)?|\.0+)(ms|s|m)$/;

function invalid(hook: string, value: unknown, phase: Phase): HarnessweaverError {
  return valueError(phase, "invalid_deadline", `deadline of ${hook}`, shown(value));
}

/** Milliseconds of a deadline for `hook`; `emit`: an emit's own (zero allowed). */
export function deadlineMs(value: unknown, hook: string, emit: boolean, phase: Phase): number {
  if (emit && ((typeof value === "string" && ZERO_TEXT.test(value)) || value === 0)) return 0;
  try {
    return Number(parseDurationNs(value, phase)) / 1e6;
  } catch {
    throw invalid(hook, value, phase);
  }
}

/** A bus's deadlines (ms) per catalogue index; `undefined` where there is none. */
export function deadlinesOf(value: Readonly<Partial<Record<HookPoint, Duration>>> | undefined): readonly (number | undefined)[] {
  const out: (number | undefined)[] = HOOK_POINTS.map(() => undefined);
  if (value === undefined || value === null) return out;
  if (typeof value !== "object" || Array.isArray(value)) throw invalid("the bus", value, "register");
  for (const [hook, deadline] of Object.entries(value)) {
    if (!isHookPoint(hook)) throw valueError("register", "unknown_hook", "hook", shown(hook));
    if (deadline === undefined || deadline === null) continue;
    out[HOOK_POINTS.indexOf(hook)] = deadlineMs(deadline, hook, false, "register");
  }
  return out;
}

/** What `turn` says of a middleware whose turn comes after the deadline. */
export const SKIP = -1;

/**
 * I26 for a middleware starting at `t0` (ms): `SKIP` when the deadline has passed; else the
 * milliseconds after which it is cut off (its time left, less than its own timeout), or 0 when
 * its own timeout ends no later than the deadline.
 */
export function turn(deadline: number, t0: number, timeoutMs: number | null): number {
  if (t0 >= deadline) return SKIP;
  const left = deadline - t0;
  return timeoutMs !== null && timeoutMs <= left ? 0 : left;
}
