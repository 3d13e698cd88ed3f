/**
 * Per-run state for built-in middleware that remember what happened earlier in a run
 * (python/harnessweaver/builtins/_runs.py, the same semantics).
 *
 * One middleware instance serves every run of its harness, often several at once, so what it
 * remembers is kept per run, keyed by the envelope's `runId`. The memory is bounded twice: a
 * run's state is dropped when its `task.end` says the run is over for good, and at most
 * `limit` runs are kept in any case, the one used longest ago dropped first, so runs that
 * never end for good (a crash, a caller that stops emitting, a suspended run nobody resumes)
 * cannot make the state grow without bound: a long-running process keeps flat memory.
 *
 * `task.end` also fires when a run only stops (suspended, a provider error, an error, one of
 * the run loop's budgets): such a run keeps its state, so a resumed run goes on with the
 * counts it had. Only the exit reasons after which a run cannot go on drop it; an exit reason
 * this module does not know keeps the state, the safe side, until the bound drops it.
 *
 * Why a Map keyed by run id rather than a WeakMap on the envelope or trace: a run is one id
 * across many envelopes (a caller may make a fresh envelope per emit, and a resumed run gets
 * a new context), which is what Python keys on too.
 */

import type { TaskEndEvent } from "../events.js";

/** How many runs' state one middleware keeps at most (each is a few small counters). */
export const MAX_RUNS = 4096;

/** The exit reasons after which a run cannot be resumed: its state is dropped at `task.end`. */
export const FINAL_EXIT_REASONS: ReadonlySet<string> = new Set(["completed", "blocked", "escalated", "denied", "retry_exhausted"]);

/** The state of each run, made by `factory` on first use; a bounded, LRU mapping. */
export class RunStates<S> {
  readonly #factory: () => S;
  readonly #limit: number;
  // A Map iterates in insertion order: re-inserting a key makes it the most recent.
  readonly #states = new Map<string, S>();

  constructor(factory: () => S, limit: number = MAX_RUNS) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`RunStates limit must be at least 1, got ${limit}`);
    this.#factory = factory;
    this.#limit = limit;
  }

  get size(): number {
    return this.#states.size;
  }

  has(runId: string): boolean {
    return this.#states.has(runId);
  }

  /** The run's state, created if the run is new; the run becomes the most recent. */
  get(runId: string): S {
    let state = this.#states.get(runId);
    if (state === undefined) {
      state = this.#factory();
      this.#states.set(runId, state);
      if (this.#states.size > this.#limit) this.#dropOldest();
    } else {
      this.#states.delete(runId);
      this.#states.set(runId, state);
    }
    return state;
  }

  /**
   * The run's state if it has one (the run becomes the most recent), without creating it: a
   * run that only reads its state, such as a guard refusing a call again and again, is in use
   * all the same.
   */
  peek(runId: string): S | undefined {
    const state = this.#states.get(runId);
    if (state !== undefined) {
      this.#states.delete(runId);
      this.#states.set(runId, state);
    }
    return state;
  }

  /** Forget the run at its `task.end` if it is over for good. */
  end(runId: string, event: TaskEndEvent): void {
    if (FINAL_EXIT_REASONS.has(event.exitReason)) this.#states.delete(runId);
  }

  /** The run ids, least recently used first. */
  keys(): string[] {
    return [...this.#states.keys()];
  }

  #dropOldest(): void {
    const oldest = this.#states.keys().next();
    if (oldest.done !== true) this.#states.delete(oldest.value);
  }
}
