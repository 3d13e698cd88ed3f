/**
 * Durable approvals in the OpenAI Agents SDK (docs/approvals.md): a resumed `RunState`'s calls
 * that still await a decision are decided by their approval records.
 *
 * The first segment filed a record when the chain suspended the call (`needsApproval`, in
 * tools.ts). A later segment, in this process or another that shares the store, resumes the
 * serialised state; before the SDK goes on, each interruption nobody decided on the `RunState`
 * is put to the chain again and its record consulted:
 *
 * - approved: claimed (single use) and approved on the state; the call runs once, with the
 *   approver's edit when there is one (the wrapped `invoke` runs the arguments the record left);
 * - denied: rejected on the state, the model reads the approver's denial;
 * - pending: left undecided (the SDK interrupts again); `run.approvalOf(item)` names the record;
 * - refused (replayed, expired, another spec, different arguments...): rejected, the model reads why.
 *
 * A decision the caller made on the `RunState` itself (`state.approve`/`reject`) stands as it is.
 * A store that is down rejects the segment with `StateUnavailable` before anything runs: the
 * state is unchanged, and resuming again later consults again.
 */

import type { RunState, RunToolApprovalItem } from "@openai/agents";
import type { Approvals } from "../../approvals/index.js";
import { consultFor, refusedText } from "../approvals.js";
import { argumentsOf } from "./convert.js";
import { callIdOf, type GuardedRun, type ToolLike } from "./run.js";
import { denial, refusal } from "./tools.js";

/** Who files records from this adapter (the record's `filed_by`). */
export const FILED_BY = "openai-agents-js";

function nameOf(item: RunToolApprovalItem): string {
  const raw = item.rawItem as { readonly name?: unknown };
  return item.toolName ?? (typeof raw.name === "string" ? raw.name : "");
}

function toolOf(item: RunToolApprovalItem, name: string): ToolLike {
  return item.agent.tools.find((tool) => tool.name === name) ?? { name };
}

/** Decides the undecided function-call interruptions of `state` by their approval records (module doc). */
export async function resolveInterruptions(run: GuardedRun, approvals: Approvals, state: RunState<any, any>): Promise<void> {
  for (const item of state.getInterruptions()) {
    if (item.rawItem.type !== "function_call") continue; // only function tools are guarded (the adapter refuses others)
    const callId = callIdOf(item.rawItem);
    const name = nameOf(item);
    if (state._context.isToolApproved({ toolName: name, callId }) !== undefined) continue; // the caller decided it
    const args = argumentsOf(item.rawItem.arguments);
    if (args === null) continue; // not a JSON object: the input guardrail refuses it once approved
    const asked = await run.toolBefore(toolOf(item, name), callId, args, true);
    const outcome = asked.before.outcome;
    if (outcome.kind !== "suspend") continue; // the chain's new answer stands (the guardrails act on it)
    const consulted = await consultFor(approvals, { event: asked.before.event, outcome, runId: run.runId, filedBy: FILED_BY });
    switch (consulted.kind) {
      case "approved":
        run.noteApproval(callId, consulted.record);
        asked.before = { ...asked.before, event: consulted.event }; // the approver's edit is what runs
        state.approve(item);
        break;
      case "denied":
        run.noteApproval(callId, consulted.record);
        run.forget(callId);
        state.reject(item, { message: denial(consulted.reason === "" ? null : consulted.reason) });
        break;
      case "pending":
        run.noteApproval(callId, consulted.record);
        run.forget(callId);
        break;
      case "refused":
        run.forget(callId);
        state.reject(item, { message: refusal("tool.before", refusedText(consulted)) });
        break;
    }
  }
}
