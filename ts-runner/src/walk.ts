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
 * What an emit needs is worked out when its chain is planned (registry.ts `Plan`: the hook's
 * catalogue index, its event type, whether any middleware has a timeout), so an emit allocates
 * one `Walk` and the async function's promise, and traces each plain answer as four numbers.
 *
 * An emit whose chain has a timeout, or that the caller may cancel, is also `Watched`
 * (invoke.ts): its result is a promise of its own, which the walk settles when it ends. Only a
 * pending answer can be timed out or cancelled, so the rest is made at the emit's first
 * thenable answer (`Walk.prepare`, still in the emit's async context): the AsyncResource that
 * keeps that context, the place in the list the shared timer serves, the listener on the
 * caller's signal. A chain that answers synchronously needs none of it. It cannot wait longer:
 * once the walk awaits, only a takeover can go on for it, and a takeover needs both the result
 * promise (the stuck async function's own never settles) and the context, made beforehand.
 * When a middleware is still pending at its deadline, the shared timer expires it: the stuck
 * walk is abandoned (its generation moves on, so a late answer is dropped), the timeout is
 * traced and a new walk goes on from the next middleware, in the emit's async context. When
 * the caller's signal aborts while a middleware is pending, the emit rejects with its reason
 * (I12).
 */

import { AsyncResource } from "node:async_hooks";
import { enforceContract, type ContractMode } from "./contracts.js";
import type { Correlation } from "./correlation.js";
import type { Envelope } from "./envelope.js";
import type { Event } from "./events.js";
import { SKIP, turn } from "./deadline.js";
import { closedCode, closedReason, errorName, isCancellation, type FailureKind } from "./failure.js";
import { contentIdentity, type IdentityScheme } from "./identity.js";
import { arm, now, timeoutReason, unwatch, watch, Watched } from "./invoke.js";
import { isModelOf } from "./model.js";
import { Block, Continue, hasInvalidText, isOutcome, severity, type HookResult, type Outcome } from "./outcomes.js";
import type { Entry, Plan } from "./registry.js";
import { emitKey, shapeOf, type Shape, type Trace } from "./trace.js";
import { INVALID, judgeWarnings, type HookWarning } from "./warnings.js";

const CONTINUE = Continue();
/** The warnings of a result that has none (I24): one frozen array, nothing made per emit. */
const NO_WARNINGS: readonly HookWarning[] = Object.freeze([]);

/**
 * One emit in flight: the walk's state, kept here so that a takeover can go on from it. One
 * class for every emit (watched or not), so the walk only ever sees one shape of it.
 */
class Walk extends Watched {
  readonly plan: Plan;
  readonly envelope: Envelope;
  readonly trace: Trace;
  readonly contracts: ContractMode | undefined;
  /** The bus's identity scheme (I27): with one, the hook record identifies `given` and `event`. */
  readonly identity: IdentityScheme | undefined;
  readonly outer: AbortSignal | undefined;
  /** What the trace stores for the emit's number in it and the hook point (`emitKey`). */
  readonly key: number;
  /** The emit's correlation (I21): of the caller's event, whatever the middleware make of it. */
  readonly correlation: Correlation;
  /** The event the caller emitted; `event` is it as the chain has left it so far. */
  readonly given: Event;
  event: Event;
  best: Outcome = CONTINUE;
  bestSeverity = -1;
  /** The warnings of the answers taken so far (I24), once one has some. */
  warned: HookWarning[] | undefined = undefined;
  /** When the emit started (ms, monotonic). */
  readonly tEmit: number;
  /**
   * When the current middleware started (ms, monotonic): the last boundary. Kept here rather
   * than in a local of the walk, where a number held across an `await` is a heap allocation.
   */
  t: number;
  /** Watched, while an answer is awaited: the middleware and its controller. */
  index = 0;
  controller: AbortController | undefined = undefined;
  /** The chain deadline (I26), an instant in ms; Infinity for nearly every emit. */
  chainDeadline: number;
  /** The current middleware's cut-off limit in ms when the chain deadline cuts it off; else 0. */
  cut = 0;
  /** Moves on when the walk is taken over: the abandoned walk then drops what it gets. */
  generation = 0;
  /** Watched emits only: how the result is settled. */
  resolve: ((result: HookResult) => void) | undefined = undefined;
  reject: ((reason: unknown) => void) | undefined = undefined;
  /**
   * Watched emits, from their first pending answer on: the emit's async context (a takeover
   * goes on in it), and the listener on the caller's signal. Until then the emit is not in the
   * list of watched emits: nothing but a pending answer can be timed out or cancelled.
   */
  scope: AsyncResource | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;

  constructor(
    plan: Plan,
    event: Event,
    envelope: Envelope,
    trace: Trace,
    outer: AbortSignal | undefined,
    contracts: ContractMode | undefined,
    tEmit: number,
    budget: number | undefined,
    identity: IdentityScheme | undefined,
  ) {
    super();
    this.chainDeadline = budget === undefined ? Infinity : tEmit + budget;
    this.plan = plan;
    this.envelope = envelope;
    this.trace = trace;
    this.contracts = contracts;
    this.identity = identity;
    this.outer = outer;
    this.key = emitKey(trace.beginEmit(), plan.hookIndex);
    this.correlation = trace.correlate(envelope.runId, plan.hookIndex, event);
    this.given = event;
    this.event = event;
    this.tEmit = tEmit;
    this.t = tEmit;
  }

  /** The timeout of the middleware being waited for ran out at `t`. */
  expire(t: number): void {
    const scope = this.scope;
    if (scope === undefined) return;
    scope.runInAsyncScope(() => {
      this.generation += 1; // the stuck walk's answer, should it come, is dropped
      this.waiting = false;
      const entry = this.plan.entries[this.index];
      if (entry === undefined) return;
      this.controller?.abort(timeoutReason(entry));
      this.controller = undefined;
      const stop = fold(this, entry, failed(entry, overrun(this)), this.t, t);
      this.t = t; // the next middleware starts at t
      if (stop || this.index + 1 >= this.plan.entries.length) finish(this, t);
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

  /** A watched emit's first answer is pending: from now on the deadline and the signal may end it. */
  prepare(): void {
    this.scope = new AsyncResource("harnessweaver.emit");
    watch(this);
    const outer = this.outer;
    if (outer !== undefined) {
      this.onAbort = () => this.cancelled();
      outer.addEventListener("abort", this.onAbort);
    }
  }

  /** No longer watched: the result is about to be settled. */
  end(): void {
    if (this.scope === undefined) return; // never was
    unwatch(this);
    if (this.onAbort !== undefined) this.outer?.removeEventListener("abort", this.onAbort);
  }
}

/** The run whose result promise is being made (the executor runs at once; no closure per emit). */
let starting: Walk | undefined;

function settleWith(resolve: (result: HookResult) => void, reject: (reason: unknown) => void): void {
  const run = starting as Walk;
  run.resolve = resolve;
  run.reject = reject;
}

/**
 * Runs `plan` on `event`. Rejects only when the caller's signal aborts: that cancellation
 * belongs to the caller and is never a failure of a middleware (I12).
 */
export function walk(
  plan: Plan,
  event: Event,
  envelope: Envelope,
  trace: Trace,
  signal: AbortSignal | undefined,
  contracts: ContractMode | undefined,
  budget?: number,
  identity?: IdentityScheme,
): Promise<HookResult> {
  const t = now();
  const run = new Walk(plan, event, envelope, trace, signal, contracts, t, budget, identity);
  // No middleware: nothing to wait for or cancel (the signal was checked before the walk).
  if (plan.entries.length === 0) return Promise.resolve(finish(run, run.tEmit));
  if (!plan.timed && signal === undefined && budget === undefined) return drive(run, 0);
  // Watched: the result is a promise of its own, which a takeover can settle.
  starting = run;
  const result = new Promise<HookResult>(settleWith);
  starting = undefined;
  void drive(run, 0);
  return result;
}

/**
 * Walks the chain from `from`, which starts at `run.t`. Watched runs settle their own promise
 * (and the value returned here is unused); a walk that was taken over returns undefined as
 * soon as it notices.
 */
async function drive(run: Walk, from: number): Promise<HookResult> {
  const { entries, eventType } = run.plan;
  const { envelope, outer, trace, key, correlation, contracts } = run;
  const generation = run.generation;
  const watched = run.resolve !== undefined;
  try {
    for (let i = from; i < entries.length; i++) {
      if (outer !== undefined) outer.throwIfAborted(); // cancelled between two middleware: start no more (I12)
      const entry = entries[i] as Entry;
      let timeoutMs = entry.timeoutMs;
      if (run.chainDeadline !== Infinity) {
        // I26: skipped once the chain deadline has passed, else maybe cut off at it.
        const cut = turn(run.chainDeadline, run.t, timeoutMs);
        run.cut = cut === SKIP ? 0 : cut;
        if (cut === SKIP) {
          if (fold(run, entry, failed(entry, "skipped"), run.t, run.t)) break;
          continue;
        }
        if (cut > 0) timeoutMs = cut;
      }
      const controller = entry.signal ? new AbortController() : undefined;
      const given = run.event;
      let answer: unknown;
      let thrown = false;
      try {
        const call = entry.call; // called as a plain function (`this` undefined)
        answer = call(given, envelope, controller?.signal);
        if (isThenable(answer)) {
          if (watched) {
            if (run.scope === undefined) run.prepare();
            run.index = i;
            run.controller = controller;
            run.waiting = true;
            if (timeoutMs === null) run.deadline = Infinity;
            else arm((run.deadline = run.t + timeoutMs));
          }
          answer = await answer;
        }
      } catch (error) {
        answer = error; // a plain function's throw is a failure like a rejection
        thrown = true;
      }
      if (watched) {
        if (run.generation !== generation) return undefined as never; // taken over: dropped
        run.waiting = false;
      }
      const t0 = run.t;
      const t1 = now(); // the end of this middleware is the start of the next
      run.t = t1;
      let verdict: Verdict;
      if (timeoutMs !== null && t1 - t0 > timeoutMs) verdict = failed(entry, overrun(run)); // late: discarded (ruling 10, I26)
      else if (thrown && isCancellation(answer)) {
        if (outer?.aborted === true) throw outer.reason; // the caller's cancellation: the caller's (I12)
        verdict = failed(entry, "cancelled"); // someone else's: a failure of this middleware (I15)
      } else if (thrown) verdict = failed(entry, "exception", answer);
      else if (answer === undefined || answer === null) {
        // The usual answer: a plain Continue, traced as the entry's shared shape; nothing built.
        trace.add(entry.passed, key, correlation, t0, t1);
        continue;
      } else verdict = judge(answer, entry, eventType);
      if (contracts !== undefined && verdict !== PASSED) verdict = enforceContract(contracts, run.plan.hook, given, entry, verdict);
      if (fold(run, entry, verdict, t0, t1)) break;
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
  const result = finish(run, run.t);
  // A watched run has settled its own promise: this one's result is never read, and settling
  // it with undefined spares a lookup of `then` on the result.
  return watched ? (undefined as never) : result;
}

/** The combined outcome: the hook record, and the result (watched runs settle theirs). */
function finish(run: Walk, tEnd: number): HookResult {
  const combined = run.bestSeverity > 0 ? run.best : CONTINUE;
  const modified = run.bestSeverity === 1;
  const code = codeOf(combined);
  let shape: Shape;
  if (code !== undefined) shape = shapeOf({ kind: "hook", outcome: combined.kind, modified, code });
  else shape = modified || combined !== CONTINUE ? hookShape(combined.kind, modified) : PLAIN_HOOK;
  if (run.identity !== undefined) shape = identified(shape, run.given, run.event);
  run.trace.add(shape, run.key, run.correlation, run.tEmit, tEnd);
  const warnings = run.warned === undefined ? NO_WARNINGS : Object.freeze(run.warned);
  const result: HookResult = Object.freeze({ outcome: combined, event: run.event, warnings });
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
  /** The answer's kept warnings (I24); a failure's are never looked at. */
  readonly warnings?: readonly string[];
}

const PASSED: Verdict = Object.freeze({ outcome: CONTINUE });

/**
 * Traces one middleware's verdict (it ran from `t0` to `t1`, ms) and folds it into the run;
 * true when it stops the chain (a Block: nothing outranks it, ruling 6).
 */
function fold(run: Walk, entry: Entry, verdict: Verdict, t0: number, t1: number): boolean {
  if (verdict === PASSED) {
    run.trace.add(entry.passed, run.key, run.correlation, t0, t1); // nothing built
    return false;
  }
  run.trace.add(middlewareShape(entry, verdict), run.key, run.correlation, t0, t1);
  if (entry.audit) return false; // I25: traced as it would be, counts as a plain Continue
  const { outcome } = verdict;
  if (verdict.warnings !== undefined && verdict.failure === undefined) {
    const name = entry.declaration.name;
    const warned = (run.warned ??= []);
    for (const text of verdict.warnings) warned.push(Object.freeze({ middleware: name, text }));
  }
  if (outcome.kind === "continue" && outcome.modified !== undefined) run.event = outcome.modified;
  const rank = severity(outcome);
  if (rank > run.bestSeverity) {
    run.best = outcome;
    run.bestSeverity = rank;
  }
  return outcome.kind === "block";
}

function judge(answer: unknown, entry: Entry, eventType: Plan["eventType"]): Verdict {
  if (answer === undefined || answer === null) return PASSED;
  if (!isOutcome(answer) || hasInvalidText(answer)) return failed(entry, "invalid_return"); // I16
  // A modified event is one the event classes made: a look-alike or a Proxy (whose traps may
  // throw) is none, and is never looked into (issue 13).
  if (answer.kind === "continue" && answer.modified !== undefined && !isModelOf(answer.modified, eventType)) {
    return failed(entry, "wrong_event_type");
  }
  if (answer.warnings === undefined) return { outcome: answer };
  const warnings = judgeWarnings(answer.warnings); // I24
  if (warnings === INVALID) return failed(entry, "invalid_return");
  return warnings === undefined ? { outcome: answer } : { outcome: answer, warnings };
}

/**
 * What running past the limit is: a timeout, or a `deadline` failure when the chain deadline
 * cut it off (I26), which ends the chain's time whatever the clock says next.
 */
function overrun(run: Walk): FailureKind {
  if (run.cut === 0) return "timeout";
  run.chainDeadline = -Infinity;
  return "deadline";
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

// Every record is traced as a shape and numbers (`Trace.add`: the boundaries in ms), built
// only when read; the common ones (a plain Continue, a hook record without a code) share
// their shape.

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

/**
 * A hook record's shape with the identities of I27: one of its own per emit. The event given
 * is hashed once, the event the chain left once more only when a modification took effect.
 */
function identified(shape: Shape, given: Event, event: Event): Shape {
  const input = contentIdentity(given);
  const enforced = event === given ? input : contentIdentity(event);
  return Object.freeze({ ...shape, input_identity: input, enforced_identity: enforced });
}

function middlewareShape(entry: Entry, verdict: Verdict): Shape {
  const { name, band, failMode } = entry.declaration;
  const { outcome, failure, contract } = verdict;
  const warnings = failure === undefined ? verdict.warnings : undefined;
  const modified = outcome.kind === "continue" && outcome.modified !== undefined;
  return shapeOf({
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
    warnings,
    audit: entry.audit ? true : undefined,
  });
}
