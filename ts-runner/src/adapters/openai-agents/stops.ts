/**
 * What ends an SDK run for the bus: `HarnessStopped`, and when an outcome calls for it.
 *
 * Where the SDK has no way to refuse one operation and go on (a model call, the run's start or
 * end, a step), every outcome but a `Continue` ends the run: the safer mapping
 * (docs/integrations/openai-agents-js.md). A change (`Continue(modified)`) is applied where the
 * SDK can take it (the task's input, the model request: rewrite.ts); where it cannot (a model
 * response, a step's end, a request rewrite its items cannot carry) it ends the run too, since
 * the SDK would go on with the operation unchanged.
 */

import { AgentsError } from "@openai/agents";
import { jsonEqual, type Event, type HookPoint, type HookResult, type OutcomeKind } from "harnessweaver";

/** The outcome kinds that end a run, and `modified` for a change the SDK cannot carry out. */
export type StopKind = Exclude<OutcomeKind, "continue"> | "modified";

/**
 * The bus's answer ended the run: `hook` is the hook point, `outcome` the combined outcome's kind
 * (`block`, `suspend`, `escalate`, `retry`, or `modified`), `reason` and `code` the outcome's own.
 * An `AgentsError`, as the SDK's own errors are; `GuardedRun.run` rejects with it (unwrapped when
 * the SDK wrapped it, e.g. in a `ToolCallError`).
 */
export class HarnessStopped extends AgentsError {
  readonly hook: HookPoint;
  readonly outcome: StopKind;
  readonly reason: string | null;
  readonly code: string | null;

  constructor(hook: HookPoint, outcome: StopKind, reason: string | null, code: string | null) {
    super(`harnessweaver stopped the run at ${hook}: ${outcome} (${reason ?? "no reason given"})`);
    this.name = "HarnessStopped";
    this.hook = hook;
    this.outcome = outcome;
    this.reason = reason;
    this.code = code;
  }
}

/** Whether the chain left the event as it was given (JSON equality, as Python's `==`). */
export function unchanged(result: HookResult, event: Event): boolean {
  return result.event === event || jsonEqual(result.event.toJSON(), event.toJSON());
}

/**
 * The stop `result` calls for where the SDK can only go on or end: `null` for a `Continue` that
 * left `event` as it was; otherwise the run ends (`what` names what a change would have changed).
 */
export function stopFor(hook: HookPoint, result: HookResult, event: Event, what: string): HarnessStopped | null {
  const outcome = result.outcome;
  if (outcome.kind === "continue") {
    if (unchanged(result, event)) return null;
    const reason = `a middleware changed the ${what}, which the OpenAI Agents SDK cannot rewrite`;
    return new HarnessStopped(hook, "modified", reason, "not_expressible");
  }
  return new HarnessStopped(hook, outcome.kind, outcome.reason, outcome.code);
}

/** The stop for a change the SDK cannot carry out at `hook`; `why` says what it is. */
export function notExpressible(hook: HookPoint, why: string): HarnessStopped {
  return new HarnessStopped(hook, "modified", `${why}, which the OpenAI Agents SDK cannot carry out`, "not_expressible");
}

/** Throws the stop, if any. */
export function raise(stop: HarnessStopped | null): void {
  if (stop !== null) throw stop;
}

/**
 * The `HarnessStopped` an SDK error carries: the SDK wraps what a tool, its guardrails or a model
 * throws (`ToolCallError.error`, `cause`), a few levels deep at most.
 */
export function stopIn(error: unknown): HarnessStopped | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof HarnessStopped) return current;
    const inner = current as { readonly error?: unknown; readonly cause?: unknown };
    current = inner.error instanceof Error ? inner.error : inner.cause;
  }
  return null;
}
