/**
 * Guarded function tools: `tool.before` and `tool.after` at the SDK's own tool points.
 *
 * A guarded tool is a copy of a `FunctionTool` with
 *
 * - `needsApproval`: emits `tool.before` (once per call, the answer kept by call id); a Suspend
 *   makes the SDK interrupt the run for approval (`result.interruptions`);
 * - a tool input guardrail, first: a Block (or a Retry still answered after the chain was asked
 *   again up to the run's bound) answers `rejectContent` with the refusal, so the tool never
 *   runs and the model reads why; an Escalate ends the run;
 * - `invoke` wrapped: the tool runs with the arguments the chain left (a `Continue(modified)` is
 *   what runs), then `tool.after` is emitted and a modified result is what the model reads;
 * - a tool output guardrail, first: a Block (or a Suspend or Retry, which cannot pause or repeat a
 *   call that already ran) withholds the result with `rejectContent`.
 *
 * The tool's own approval policy and guardrails still apply, after the harness's. The wrapped
 * `invoke` also refuses a call the input guardrail did not admit: the SDK always runs that
 * guardrail first, and the check is there so no other path runs the tool unasked.
 */

import {
  defineToolInputGuardrail,
  defineToolOutputGuardrail,
  ToolGuardrailFunctionOutputFactory as Verdict,
  type FunctionTool,
  type RunContext as SdkRunContext,
  type ToolGuardrailFunctionOutput,
} from "@openai/agents";
import { jsonEqual, type HookPoint, type JsonObject } from "harnessweaver";
import { fileFor } from "../approvals.js";
import { FILED_BY } from "./approvals.js";
import { argumentsOf, jsonable } from "./convert.js";
import { requireRun, type GuardedRun, type ToolCallRecord } from "./run.js";
import { HarnessStopped, unchanged } from "./stops.js";

/** The name of the adapter's tool guardrails (as the SDK records guardrail results). */
export const GUARDRAIL = "harnessweaver";

const GUARDED = new WeakSet<object>();

/** Whether `tool` is one the adapter guarded. */
export function isGuardedTool(tool: unknown): boolean {
  return typeof tool === "object" && tool !== null && GUARDED.has(tool);
}

/** What the model reads instead of a tool's result (the run loop's own wording). */
export function refusal(hook: HookPoint, reason: string | null): string {
  const why = reason ?? "no reason given";
  return hook === "tool.after" ? `The harness withheld this tool's result: ${why}` : `The harness refused this tool call: ${why}`;
}

/**
 * The run loop's wording for a call an approver denied, to give the SDK as the rejection:
 * `state.reject(item, { message: denial("too much") })`.
 */
export { denial } from "../approvals.js";

/** A change the SDK cannot carry out: anything but the call's arguments (another tool, another call id). */
function changedBeyondArguments(record: ToolCallRecord): boolean {
  const chained = record.before.event;
  const sameArguments = chained.with({ call: chained.call.with({ arguments: record.event.call.arguments }) });
  return !jsonEqual(sameArguments.toJSON(), record.event.toJSON());
}

function admitted(record: ToolCallRecord): boolean {
  const outcome = record.before.outcome;
  if (outcome.kind === "continue") return !changedBeyondArguments(record);
  return outcome.kind === "suspend" && record.approvalAsked;
}

function beforeVerdict(run: GuardedRun, record: ToolCallRecord): ToolGuardrailFunctionOutput {
  const outcome = record.before.outcome;
  const callId = record.event.call.id;
  if (outcome.kind === "continue") {
    if (!changedBeyondArguments(record)) return Verdict.allow("continue");
    run.forget(callId);
    return Verdict.rejectContent(refusal("tool.before", "a middleware changed the call beyond its arguments, which the SDK cannot run"));
  }
  if (outcome.kind === "suspend" && record.approvalAsked) return Verdict.allow("approved"); // the SDK runs it only once approved
  run.forget(callId);
  if (outcome.kind === "escalate") throw new HarnessStopped("tool.before", "escalate", outcome.reason, outcome.code);
  const reason =
    outcome.kind === "suspend" ? `approval needed (${outcome.reason}), which the SDK could not ask for this call` : outcome.reason;
  return Verdict.rejectContent(refusal("tool.before", reason));
}

function afterVerdict(run: GuardedRun, record: ToolCallRecord | undefined): ToolGuardrailFunctionOutput {
  if (record?.after === undefined) return Verdict.allow("not run"); // the output is already a refusal
  run.forget(record.event.call.id);
  const outcome = record.after.outcome;
  if (outcome.kind === "continue") return Verdict.allow("continue");
  if (outcome.kind === "escalate") throw new HarnessStopped("tool.after", "escalate", outcome.reason, outcome.code);
  return Verdict.rejectContent(refusal("tool.after", outcome.reason));
}

/** A copy of `tool` whose calls pass `tool.before` and `tool.after` (module doc). */
export function guardTool<TContext, Result>(
  tool: FunctionTool<TContext, any, Result>,
): FunctionTool<TContext, any, Result> {
  if (typeof tool !== "object" || tool === null || tool.type !== "function") {
    throw new TypeError(`guardTool takes a function tool (tool({...})), got ${describeTool(tool)}`);
  }
  if (isGuardedTool(tool)) return tool;
  const what = `tool '${tool.name}'`;
  const invoke = tool.invoke;
  const ownPolicy = tool.needsApproval;

  const needsApproval = async (context: SdkRunContext, input: unknown, callId?: string): Promise<boolean> => {
    const run = requireRun(what);
    const args = jsonable(input);
    if (typeof args !== "object" || args === null || Array.isArray(args)) return false; // the input guardrail refuses it
    const record = await run.toolBefore(tool, callId ?? "", args as JsonObject, true);
    const outcome = record.before.outcome;
    if (outcome.kind === "suspend" && run.approvals !== null) {
      // A durable record of the pause, before the SDK interrupts: decided anywhere, consulted on resume.
      const filed = await fileFor(run.approvals, { event: record.before.event, outcome, runId: run.runId, filedBy: FILED_BY });
      run.noteApproval(callId ?? "", filed);
    }
    if (outcome.kind !== "continue") return outcome.kind === "suspend"; // a refusal needs no approver
    return ownPolicy(context, input as never, callId); // the tool's own policy, for what the harness admits
  };

  const before = defineToolInputGuardrail<TContext>({
    name: GUARDRAIL,
    run: async ({ toolCall }) => {
      const run = requireRun(what);
      let record = run.call(toolCall.callId);
      if (record === undefined) {
        // The SDK asked for approval without asking the policy (arguments it could not read),
        // or a resumed RunState holds an approval for the call (restored in another process):
        // the chain is asked now, and its Suspend is that approval.
        const args = argumentsOf(toolCall.arguments);
        if (args === null) return Verdict.rejectContent(refusal("tool.before", "its arguments are not a JSON object"));
        record = await run.toolBefore(tool, toolCall.callId, args, run.decided(toolCall.callId));
      }
      return beforeVerdict(run, record);
    },
  });

  const after = defineToolOutputGuardrail<TContext>({
    name: GUARDRAIL,
    run: async ({ toolCall }) => {
      const run = requireRun(what);
      return afterVerdict(run, run.call(toolCall.callId));
    },
  });

  const guardedInvoke: FunctionTool<TContext, any, Result>["invoke"] = async (context, input, details) => {
    const run = requireRun(what);
    const record = run.call(details?.toolCall?.callId ?? "");
    if (record === undefined || !admitted(record)) return refusal("tool.before", "the harness did not admit this call");
    const chained = record.before.event.call.arguments;
    // Continue(modified): the arguments the chain left are what runs.
    const given = jsonEqual(chained, record.event.call.arguments) ? input : JSON.stringify(chained);
    const output = await invoke(context, given, details);
    const [answer, emitted] = await run.toolAfter(record, output);
    if (answer.outcome.kind === "continue" && !unchanged(answer, emitted)) return answer.event.result.output as Result;
    return output;
  };

  const guarded: FunctionTool<TContext, any, Result> = {
    ...tool,
    needsApproval,
    invoke: guardedInvoke,
    inputGuardrails: [before, ...(tool.inputGuardrails ?? [])],
    outputGuardrails: [after, ...(tool.outputGuardrails ?? [])],
  };
  GUARDED.add(guarded);
  return guarded;
}

function describeTool(tool: unknown): string {
  if (typeof tool !== "object" || tool === null) return typeof tool;
  const { type, name } = tool as { type?: unknown; name?: unknown };
  return `a ${String(type)} tool${typeof name === "string" ? ` '${name}'` : ""}`;
}
