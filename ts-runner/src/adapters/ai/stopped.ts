/** What the caller of `generateText`/`streamText` gets when the harness stops a call. */

import type { HookPoint } from "../../catalogue.js";
import type { Outcome } from "../../outcomes.js";

/** `modified`: a change the SDK cannot carry out (another model, a tool added, a renamed call). */
export type StoppedBy = "block" | "suspend" | "escalate" | "retry" | "modified";

/**
 * The harness stopped a model call (or, after an `Escalate` at a tool hook, the run's next
 * one): the call did not happen. `hook`, `outcome`, `reason` and `code` say why.
 */
export class HarnessStopped extends Error {
  override readonly name = "HarnessStopped";
  readonly hook: HookPoint;
  readonly outcome: StoppedBy;
  readonly reason: string;
  readonly code: string | null;

  constructor(hook: HookPoint, outcome: StoppedBy, reason: string, code: string | null = null) {
    super(`the harness stopped the call at ${hook} (${outcome}): ${reason}`);
    this.hook = hook;
    this.outcome = outcome;
    this.reason = reason;
    this.code = code;
  }

  /** The error for a combined outcome other than Continue. */
  static of(hook: HookPoint, outcome: Exclude<Outcome, { kind: "continue" }>): HarnessStopped {
    const to = outcome.kind === "escalate" && outcome.to !== null ? ` (to ${outcome.to})` : "";
    return new HarnessStopped(hook, outcome.kind, `${outcome.reason}${to}`, outcome.code);
  }
}

/** What the model reads instead of a tool's result (the run loop's own wording). */
export function refusal(hook: "tool.before" | "tool.after", reason: string | null): string {
  const why = reason === null || reason === "" ? "no reason given" : reason;
  return hook === "tool.after" ? `The harness withheld this tool's result: ${why}` : `The harness refused this tool call: ${why}`;
}

/** What the model reads for a call the harness escalated (the run ends before the next model call). */
export function escalation(to: string | null, reason: string): string {
  return `The harness escalated this tool call to ${to ?? "a human"}: ${reason}`;
}
