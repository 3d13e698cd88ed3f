/**
 * Calling middleware under their timeouts (ruling 10, I9): the clock, the signals and the
 * deadline queue the chain walk (`walk.ts`) uses.
 *
 * Time runs on the monotonic clock (`performance.now()`, fractional milliseconds) from just
 * before a call until its answer arrives. An answer that arrives after the deadline is a
 * timeout, even from a middleware that never yielded to the event loop and so could not be
 * interrupted: its late answer is discarded. A middleware still pending at its deadline is
 * abandoned: its `AbortSignal`, if it asked for one, aborts (reason: a `TimeoutError`
 * DOMException), and the emit goes on without it.
 *
 * The walk awaits each answer inline, so a middleware that answers at once costs no timer, no
 * promise and no closure of the bus. What can take over a walk stuck on a pending answer (its
 * deadline, or the caller's signal) is a `Watched` emit, kept in one list and served by one
 * shared timer: the timer is armed for the earliest deadline that may be pending, re-armed
 * only when a middleware starts with an earlier deadline than it is armed for, and on firing
 * times out what is due and re-arms for what is left. It keeps the process alive only while
 * some emit with a deadline is in flight past the turn of the event loop it started in.
 */

import { performance } from "node:perf_hooks";
import type { Entry } from "./registry.js";

/** Monotonic milliseconds (fractional: sub-microsecond precision). */
export const now: () => number = performance.now.bind(performance);

/** A monotonic instant (from `now()`) as whole nanoseconds, for trace timings. */
export function nanoseconds(ms: number): number {
  return Math.round(ms * 1e6);
}

/** The reason a middleware's signal aborts with when its timeout runs out. */
export function timeoutReason(entry: Entry): DOMException {
  return new DOMException(`middleware ${entry.declaration.name} timed out`, "TimeoutError");
}

/** setTimeout's longest delay; a longer wait re-arms until it is due. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * An emit that something besides its middleware's answers may end: a deadline or the
 * caller's signal. While it waits for an answer, `waiting` is true and `deadline` is when that
 * middleware's time runs out (`Infinity`: never).
 */
export abstract class Watched {
  waiting = false;
  deadline = Infinity;
  /** Links of the list of watched emits. */
  prev: Watched | null = null;
  next: Watched | null = null;

  /** The deadline passed at `t` while it was waiting: the walk goes on without that answer. */
  abstract expire(t: number): void;
}

let head: Watched | null = null;
let inFlight = 0;
let timer: NodeJS.Timeout | undefined;
let timerDue = Infinity;
/** Whether `timer` is referenced (keeps the process alive). */
let refed = false;
/** Whether `keepAlive` is queued (a process.nextTick). */
let checking = false;

// Keeping the process alive. The timer must be referenced while some watched emit waits, so
// the process does not exit before that deadline; and unreferenced as soon as none does. An
// emit whose answers come within the same turn of the event loop (the usual case) never needs
// the reference: the event loop only looks at it once the turn is over. So the timer is
// referenced lazily, by a check queued with process.nextTick (it runs before the event loop
// goes on, after all promise jobs, at most once per turn): still in flight then, it refs the
// timer. It is unreferenced at once when the last watched emit ends (an emit that never
// needed it changes nothing), so no emit flips the timer's state twice per call.

/** Starts watching an emit. */
export function watch(run: Watched): void {
  run.next = head;
  if (head !== null) head.prev = run;
  head = run;
  inFlight += 1;
  if (!refed && !checking) {
    checking = true;
    process.nextTick(keepAlive);
  }
}

/** Stops watching an emit (it finished, or the caller cancelled it). */
export function unwatch(run: Watched): void {
  if (run.prev !== null) run.prev.next = run.next;
  else if (head === run) head = run.next;
  if (run.next !== null) run.next.prev = run.prev;
  run.prev = run.next = null;
  run.waiting = false;
  inFlight -= 1;
  if (inFlight === 0 && refed) {
    refed = false;
    timer?.unref(); // nothing in flight: no reason to keep the process up
  }
}

/** The turn is over: some emit still in flight keeps the process alive until its deadline. */
function keepAlive(): void {
  checking = false;
  if (inFlight > 0 && !refed && timer !== undefined) {
    refed = true;
    timer.ref();
  }
}

/** @internal Whether the shared timer is referenced now (for tests). */
export function timerReferenced(): boolean {
  return refed;
}

/** Makes sure the timer fires no later than `due` (a watched emit's deadline). */
export function arm(due: number): void {
  if (due >= timerDue) return; // the usual case: already armed for an earlier time
  if (timer !== undefined) clearTimeout(timer);
  timerDue = due;
  timer = setTimeout(fire, Math.min(Math.max(0, Math.ceil(due - now())), MAX_DELAY_MS));
  refed = inFlight > 0; // armed for an emit in flight: referenced from the start
  if (!refed) timer.unref();
}

/**
 * The shared timer fired: every watched emit waiting past its deadline expires, and the timer
 * re-arms for the earliest deadline still pending. Timers may fire a little early (libuv keeps
 * whole milliseconds of a cached loop time); then it simply re-arms.
 */
function fire(): void {
  timer = undefined; // a timer that fired no longer holds the process
  timerDue = Infinity;
  refed = false;
  const t = now();
  let next = Infinity;
  const due: Watched[] = [];
  for (let run = head; run !== null; run = run.next) {
    if (!run.waiting) continue;
    if (t - run.deadline > 0) due.push(run);
    else if (run.deadline < next) next = run.deadline;
  }
  for (const run of due) if (run.waiting && t - run.deadline > 0) run.expire(t);
  if (next !== Infinity) arm(next);
}
