/**
 * The chain walk: call each middleware of a planned chain, judge its answer, trace it, fold it
 * into the combined outcome.
 *
 * - Severity decides the combined outcome, ties going to the earliest (rulings 4-5).
 * - A Block, including a closed failure, stops the chain (rulings 6, 11).
 * - A Continue(modified) replaces the event for every later middleware; `HookResult.event`
 *   is the event as the last middleware that ran left it (rulings 7-8).
 * - Failures (ruling 9): a throw or rejection, the timeout, a return that is neither nothing
 *   nor an outcome, a modified event of another type. Closed: Block with code
 *   middleware_error / middleware_timeout and reason "middleware NAME failed: KIND" (I6).
 *   Open: a plain Continue; any modification is discarded (ruling 12).
 *
 * One async function (`drive`) runs the chain and awaits each answer inline: a middleware that
 * answers at once costs the bus no promise, closure or timer of its own, and the clock is read
 * once per boundary between two middleware (the end of one is the start of the next).
 *
 * An emit whose chain has a timeout, or that the caller may cancel, is also `Watched`
 * (invoke.ts): its result is a promise of its own, which the walk settles when it ends. When a
 * middleware is still pending at its deadline, the shared timer expires it: the stuck walk is
 * abandoned (its generation moves on, so a late answer is dropped), the timeout is traced and
 * a new walk goes on from the next middleware, in the emit's async context. When the caller's
 * signal aborts while a middleware is pending, the emit rejects with its reason (I12).
 */

import { AsyncResource } from "node:async_hooks";
import { catalogueIndex, type HookPoint } from "./catalogue.js";
import { enforceContract, type ContractMode } from "./contracts.js";
import type { Envelope } from "./envelope.js";
import type { Event } from "./events.js";
import { closedCode, closedReason, errorName, type FailureKind } from "./failure.js";
import { arm, nanoseconds, now, timeoutReason, unwatch, watch, Watched } from "./invoke.js";
import { Block, Continue, isOutcome, severity, type HookResult, type Outcome } from "./outcomes.js";
import { orderedRecord, type TraceRecord } from "./record.js";
import type { Entry } from "./registry.js";
import type { Shape, Trace } from "./trace.js";

export interface WalkInput {
  readonly hook: HookPoint;
  readonly plan: readonly Entry[];
  readonly event: Event;
  /** The event class of the hook point: a modified event must be an instance of it. */
  readonly eventType: abstract new (...args: never) => Event;
  readonly envelope: Envelope;
  readonly trace: Trace;
  readonly signal?: AbortSignal | undefined;
  /** The bus's contract mode (I14); absent: no contract is checked. */
  readonly contracts?: ContractMode | undefined;
}

const CONTINUE = Continue();

/** One emit in flight: the walk's state, kept here so that a takeover can go on from it. */
class Run extends Watched {
  readonly hook: HookPoint;
  /** The hook point's index in the catalogue, as the trace stores it. */
  readonly hookIndex: number;
  readonly plan: readonly Entry[];
  readonly eventType: WalkInput["eventType"];
  readonly contracts: ContractMode | undefined;
  readonly envelope: Envelope;
  readonly trace: Trace;
  readonly emit: number;
  readonly outer: AbortSignal | undefined;
  event: Event;
  best: Outcome = CONTINUE;
  bestSeverity = -1;
  /** When the emit started, and when the middleware now running started (ms, monotonic). */
  readonly tEmit: number;
  t: number;
  /** The middleware being waited for, and its signal's controller (if it asked for one). */
  index = 0;
  controller: AbortController | undefined = undefined;
  /** Moves on when the walk is taken over: the abandoned walk then drops what it gets. */
  generation = 0;
  /** Watched emits only: how the result is settled, and the emit's async context. */
  resolve: ((result: HookResult) => void) | undefined = undefined;
  reject: ((reason: unknown) => void) | undefined = undefined;
  scope: AsyncResource | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;

  constructor(input: WalkInput, t: number) {
    super();
    this.hook = input.hook;
    this.hookIndex = catalogueIndex(input.hook);
    this.contracts = input.contracts;
    this.plan = input.plan;
    this.eventType = input.eventType;
    this.envelope = input.envelope;
    this.trace = input.trace;
    this.outer = input.signal;
    this.event = input.event;
    this.emit = input.trace.beginEmit();
    this.tEmit = t;
    this.t = t;
  }

  /** The timeout of the middleware being waited for ran out at `t`. */
  expire(t: number): void {
    const scope = this.scope;
    if (scope === undefined) return;
    scope.runInAsyncScope(() => {
      this.generation += 1; // the stuck walk's answer, should it come, is dropped
      this.waiting = false;
      const entry = this.plan[this.index];
      if (entry === undefined) return;
      this.controller?.abort(timeoutReason(entry));
      this.controller = undefined;
      const stop = fold(this, entry, failed(entry, "timeout"), t);
      this.t = t; // where the next middleware starts
      if (stop || this.index + 1 >= this.plan.length) finish(this, t);
      else void drive(this, this.index + 1);
    });
  }

  /** The caller's signal aborted (I12): while a middleware is pending, the emit ends now. */
  cancelled(): void {
    if (!this.waiting) return; // between middleware: the walk checks the signal itself
    this.generation += 1;
    this.controller?.abort(this.outer?.reason);
    this.controller = undefined;
    this.end();
    this.reject?.(this.outer?.reason);
  }

  /** No longer watched: the result is about to be settled. */
  end(): void {
    unwatch(this);
    if (this.onAbort !== undefined) this.outer?.removeEventListener("abort", this.onAbort);
  }
}

/**
 * Runs `input.plan` on `input.event`. Rejects only when the caller's signal aborts: that
 * cancellation belongs to the caller and is never a failure of a middleware (I12).
 */
export function walk(input: WalkInput): Promise<HookResult> {
  const run = new Run(input, now());
  const { plan } = input;
  let timed = input.signal !== undefined;
  for (let i = 0; !timed && i < plan.length; i++) timed = (plan[i] as Entry).declaration.timeoutNs !== null;
  if (!timed) return drive(run, 0);
  return new Promise<HookResult>((resolve, reject) => {
    run.resolve = resolve;
    run.reject = reject;
    run.scope = new AsyncResource("harnessweaver.emit");
    watch(run);
    const outer = input.signal;
    if (outer !== undefined) {
      run.onAbort = () => run.cancelled();
      outer.addEventListener("abort", run.onAbort);
    }
    void drive(run, 0);
  });
}

/**
 * Walks the chain from `from`. Watched runs settle their own promise (and the value returned
 * here is unused); a walk that was taken over returns undefined as soon as it notices.
 */
async function drive(run: Run, from: number): Promise<HookResult> {
  const { plan, envelope, outer } = run;
  const generation = run.generation;
  const watched = run.resolve !== undefined;
  let t = run.t;
  try {
    for (let i = from; i < plan.length; i++) {
      outer?.throwIfAborted(); // cancelled between two middleware: start no more (I12)
      const entry = plan[i] as Entry;
      const controller = entry.signal ? new AbortController() : undefined;
      const given = run.event;
      let answer: unknown;
      let thrown = false;
      try {
        answer = entry.call(given, envelope, controller?.signal);
        if (isThenable(answer)) {
          if (watched) {
            run.index = i;
            run.t = t;
            run.controller = controller;
            run.waiting = true;
            const timeoutMs = entry.timeoutMs;
            if (timeoutMs !== null) arm((run.deadline = t + timeoutMs));
            else run.deadline = Infinity;
          }
          answer = await answer;
        }
      } catch (error) {
        answer = error; // a plain function's throw is a failure like a rejection
        thrown = true;
      }
      if (run.generation !== generation) return undefined as never; // taken over: dropped
      run.waiting = false;
      const t1 = now();
      const timeoutMs = entry.timeoutMs;
      let verdict =
        timeoutMs !== null && t1 - t > timeoutMs
          ? failed(entry, "timeout") // late: discarded (ruling 10)
          : thrown
            ? failed(entry, "exception", answer)
            : judge(answer, entry, run.eventType);
      if (run.contracts !== undefined && verdict !== PASSED) verdict = enforceContract(run.contracts, run.hook, given, entry, verdict);
      if (fold(run, entry, verdict, t1, t)) {
        t = t1;
        break;
      }
      t = t1;
    }
  } catch (error) {
    // Only the caller's signal gets here (every call is guarded): the emit rejects (I12).
    if (!watched) throw error;
    if (run.generation === generation) {
      run.generation += 1;
      run.end();
      run.reject?.(error);
    }
    return undefined as never;
  }
  return finish(run, t);
}

/** The combined outcome: the hook record, and the result (watched runs settle theirs). */
function finish(run: Run, tEnd: number): HookResult {
  const combined = run.bestSeverity > 0 ? run.best : CONTINUE;
  const modified = run.bestSeverity === 1;
  const code = codeOf(combined);
  const t_ns = nanoseconds(run.tEmit);
  const duration_ns = nanoseconds(tEnd) - t_ns;
  if (code === undefined) run.trace.add(modified || combined !== CONTINUE ? hookShape(combined.kind, modified) : PLAIN_HOOK, run.emit, run.hookIndex, t_ns, duration_ns);
  else run.trace.push(orderedRecord({ emit: run.emit, hook: run.hook, kind: "hook", outcome: combined.kind, modified, code, t_ns, duration_ns }));
  const result: HookResult = Object.freeze({ outcome: combined, event: run.event });
  if (run.resolve !== undefined) {
    run.generation += 1;
    run.end();
    run.resolve(result);
  }
  return result;
}

/** What one middleware's answer came to. */
interface Verdict {
  readonly outcome: Outcome;
  readonly failure?: { readonly kind: FailureKind; readonly error: string };
  /** The contract rule its modification broke (I14). */
  readonly contract?: string;
}

const PASSED: Verdict = Object.freeze({ outcome: CONTINUE });

/**
 * Traces one middleware's verdict (it ran from `t0`, or `run.t`, to `t1`) and folds it into the
 * run; true when it stops the chain (a Block: nothing outranks it, ruling 6).
 */
function fold(run: Run, entry: Entry, verdict: Verdict, t1: number, t0: number = run.t): boolean {
  const t_ns = nanoseconds(t0);
  const duration_ns = nanoseconds(t1) - t_ns;
  if (verdict === PASSED) {
    run.trace.add(entry.passed, run.emit, run.hookIndex, t_ns, duration_ns); // nothing built
    return false;
  }
  run.trace.push(middlewareRecord(run.emit, run.hook, entry, verdict, t_ns, duration_ns));
  const { outcome } = verdict;
  if (outcome.kind === "continue" && outcome.modified !== undefined) run.event = outcome.modified;
  const rank = severity(outcome);
  if (rank > run.bestSeverity) {
    run.best = outcome;
    run.bestSeverity = rank;
  }
  return outcome.kind === "block";
}

function judge(answer: unknown, entry: Entry, eventType: WalkInput["eventType"]): Verdict {
  if (answer === undefined || answer === null) return PASSED;
  if (!isOutcome(answer)) return failed(entry, "invalid_return");
  if (answer.kind === "continue" && answer.modified !== undefined && !(answer.modified instanceof eventType)) {
    return failed(entry, "wrong_event_type");
  }
  return { outcome: answer };
}

function failed(entry: Entry, kind: FailureKind, thrown?: unknown): Verdict {
  const { name, failMode } = entry.declaration;
  const outcome = failMode === "closed" ? Block(closedReason(name, kind), { code: closedCode(kind) }) : CONTINUE;
  return { outcome, failure: { kind, error: errorName(kind, thrown) } };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  if (value instanceof Promise) return true;
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function codeOf(outcome: Outcome): string | undefined {
  return outcome.kind === "continue" ? undefined : (outcome.code ?? undefined);
}

// The common records (a plain Continue, a hook record without a code) are stored as shared
// shapes and numbers (`Trace.add`), built only when read. Timings are whole nanoseconds: each
// boundary is rounded once, so a duration is the difference of two rounded instants (never < 0).

const HOOK_SHAPES = new Map<string, Shape>();

/** The shared shape of a hook record without a code. */
function hookShape(outcome: Outcome["kind"], modified: boolean): Shape {
  const key = modified ? `${outcome}+` : outcome;
  let shape = HOOK_SHAPES.get(key);
  if (shape === undefined) {
    shape = Object.freeze({ kind: "hook", outcome, modified });
    HOOK_SHAPES.set(key, shape);
  }
  return shape;
}

const PLAIN_HOOK = hookShape("continue", false);

function middlewareRecord(emit: number, hook: HookPoint, entry: Entry, verdict: Verdict, t_ns: number, duration_ns: number): TraceRecord {
  const { name, band, failMode } = entry.declaration;
  const { outcome, failure, contract } = verdict;
  const modified = outcome.kind === "continue" && outcome.modified !== undefined;
  return orderedRecord({
    emit,
    hook,
    kind: failure === undefined ? "outcome" : "failure",
    middleware: name,
    band,
    outcome: outcome.kind,
    modified,
    code: codeOf(outcome),
    failure: failure?.kind,
    error: failure?.error,
    fail_mode: failure === undefined ? undefined : failMode,
    contract,
    t_ns,
    duration_ns,
  });
}
