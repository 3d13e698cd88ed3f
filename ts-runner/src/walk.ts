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
 */

import type { HookPoint } from "./catalogue.js";
import type { Envelope } from "./envelope.js";
import type { Event } from "./events.js";
import { closedCode, closedReason, errorName, type FailureKind } from "./failure.js";
import { invoke, type Settled } from "./invoke.js";
import { monotonicNs, traceNs } from "./monotonic.js";
import { Block, Continue, isOutcome, severity, type HookResult, type Outcome } from "./outcomes.js";
import { orderedRecord, type TraceRecord } from "./record.js";
import type { Entry } from "./registry.js";
import type { Trace } from "./trace.js";

export interface WalkInput {
  readonly hook: HookPoint;
  readonly plan: readonly Entry[];
  readonly event: Event;
  /** The event class of the hook point: a modified event must be an instance of it. */
  readonly eventType: abstract new (...args: never) => Event;
  readonly envelope: Envelope;
  readonly trace: Trace;
  readonly signal?: AbortSignal | undefined;
}

/** What one middleware's answer came to. */
interface Verdict {
  readonly outcome: Outcome;
  readonly failure?: { readonly kind: FailureKind; readonly error: string };
}

const CONTINUE = Continue();

export async function walk(input: WalkInput): Promise<HookResult> {
  const { hook, plan, trace } = input;
  const emit = trace.beginEmit();
  const tEmit = monotonicNs();
  let event = input.event;
  let best: Outcome = CONTINUE;
  let bestSeverity = -1;
  for (const entry of plan) {
    input.signal?.throwIfAborted(); // cancelled between two middleware: start no more (I12)
    const settled = await invoke(entry, event, input.envelope, input.signal);
    const verdict = judge(settled, entry, input.eventType);
    trace.push(middlewareRecord(emit, hook, entry, verdict, settled));
    const { outcome } = verdict;
    if (outcome.kind === "continue" && outcome.modified !== undefined) event = outcome.modified;
    const rank = severity(outcome);
    if (rank > bestSeverity) [best, bestSeverity] = [outcome, rank];
    if (outcome.kind === "block") break; // nothing outranks Block (ruling 6)
  }
  const combined = bestSeverity > 0 ? best : CONTINUE;
  const tEnd = monotonicNs();
  trace.push(hookRecord(emit, hook, combined, bestSeverity === 1, tEmit, tEnd));
  return Object.freeze({ outcome: combined, event });
}

function judge(settled: Settled, entry: Entry, eventType: WalkInput["eventType"]): Verdict {
  if (settled.kind === "timeout") return failed(entry, "timeout");
  if (settled.kind === "thrown") return failed(entry, "exception", settled.error);
  const answer = settled.value;
  if (answer === undefined || answer === null) return { outcome: CONTINUE };
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

function codeOf(outcome: Outcome): string | undefined {
  return outcome.kind === "continue" ? undefined : (outcome.code ?? undefined);
}

// Records are built on every emit, so the common ones (no code, no failure) are object literals
// with their keys already in the order of FIELDS: the same frozen record `orderedRecord` makes,
// without its generic loop over every key.

function middlewareRecord(emit: number, hook: HookPoint, entry: Entry, verdict: Verdict, settled: Settled): TraceRecord {
  const { name, band, failMode } = entry.declaration;
  const { outcome, failure } = verdict;
  const modified = outcome.kind === "continue" && outcome.modified !== undefined;
  const code = codeOf(outcome);
  const t_ns = traceNs(settled.t0);
  const duration_ns = Number(settled.t1 - settled.t0);
  if (failure === undefined && code === undefined) {
    const record: TraceRecord = { emit, hook, kind: "outcome", middleware: name, band, outcome: outcome.kind, modified, t_ns, duration_ns };
    return Object.freeze(record);
  }
  return orderedRecord({
    emit,
    hook,
    kind: failure === undefined ? "outcome" : "failure",
    middleware: name,
    band,
    outcome: outcome.kind,
    modified,
    code,
    failure: failure?.kind,
    error: failure?.error,
    fail_mode: failure === undefined ? undefined : failMode,
    t_ns,
    duration_ns,
  });
}

function hookRecord(emit: number, hook: HookPoint, combined: Outcome, modified: boolean, tEmit: bigint, tEnd: bigint): TraceRecord {
  const code = codeOf(combined);
  const t_ns = traceNs(tEmit);
  const duration_ns = Number(tEnd - tEmit);
  if (code === undefined) {
    const record: TraceRecord = { emit, hook, kind: "hook", outcome: combined.kind, modified, t_ns, duration_ns };
    return Object.freeze(record);
  }
  return orderedRecord({ emit, hook, kind: "hook", outcome: combined.kind, modified, code, t_ns, duration_ns });
}
