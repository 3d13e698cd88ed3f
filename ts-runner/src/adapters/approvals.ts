/**
 * Durable approvals as both adapters use them (docs/approvals.md): a Suspend at `tool.before`
 * files a record in the state store and says how to decide it; a resumed call (in any process
 * sharing the store) consults the record and runs only what it approved, once.
 *
 * The SDKs' own approval flows (the OpenAI Agents `RunState`, the AI SDK's approval responses)
 * carry the pause; the record carries the decision. What is bound is the call's tool and
 * arguments, the spec's identity and the run (`run:<id>`): a call whose arguments changed is
 * another action, and is not approved. Nothing fails open: a refusal of the record (replayed,
 * expired, another spec, arguments that differ...) refuses the call, and a store that is down
 * rejects with `StateUnavailable` for the adapter to fail closed on.
 */

import { ApprovalRefused, howToDecide, type Approvals, type ApprovalRecord } from "../approvals/index.js";
import type { ToolCallEvent } from "../events.js";
import type { Outcome } from "../outcomes.js";

/** What a consulted record says about one call. */
export type Consulted =
  /** Approved, and claimed for this call (used: never again): run `event` (the approver's edit applied). */
  | { readonly kind: "approved"; readonly record: ApprovalRecord; readonly event: ToolCallEvent }
  /** Denied (the record is closed): the call never runs; `reason` is the approver's. */
  | { readonly kind: "denied"; readonly record: ApprovalRecord; readonly reason: string }
  /** Not decided yet (or filed just now): the call waits; `record` says where to decide it. */
  | { readonly kind: "pending"; readonly record: ApprovalRecord }
  /** The record refused this call (`code`: approval_replayed, approval_mismatch, ...): it never runs. */
  | { readonly kind: "refused"; readonly code: string; readonly approval: string | null; readonly message: string };

type SuspendOutcome = Extract<Outcome, { kind: "suspend" }>;

/** Who consumed an approval: the run, the call and the hook (the record's `used.by`). */
export function consumerOf(runId: string, callId: string): string {
  return `run:${runId}/call:${callId}/tool.before`;
}

/** The subject a run's records bind to. */
export function subjectOf(runId: string): string {
  return `run:${runId}`;
}

/** What `file`/`consult` take for a suspended call. */
export interface CallApproval {
  readonly event: ToolCallEvent;
  readonly outcome: SuspendOutcome;
  readonly runId: string;
  readonly filedBy: string;
}

/** Files (idempotently: the binding's open record if there is one) the approval a suspended call waits for. */
export function fileFor(approvals: Approvals, call: CallApproval): Promise<ApprovalRecord> {
  return approvals.file({
    hook: "tool.before",
    event: call.event,
    reason: call.outcome.reason,
    code: call.outcome.code,
    approverRole: call.outcome.approverRole,
    subject: subjectOf(call.runId),
    filedBy: call.filedBy,
  });
}

/**
 * Consults the record for a suspended call about to be resumed: by `id` when the caller knows
 * it (claimed: a different call is `approval_mismatch`), else by the call's binding (the "ask
 * again" pattern: none yet → filed → pending). An approved record is claimed here, once; a
 * refusal is an answer, not an error. Store failures (`StateUnavailable`) are thrown.
 */
export async function consultFor(approvals: Approvals, call: CallApproval & { readonly id?: string | null }): Promise<Consulted> {
  const callId = call.event.call.id;
  const consumer = consumerOf(call.runId, callId);
  try {
    const verdict =
      call.id === undefined || call.id === null
        ? await approvals.consult({
            hook: "tool.before",
            event: call.event,
            reason: call.outcome.reason,
            code: call.outcome.code,
            approverRole: call.outcome.approverRole,
            subject: subjectOf(call.runId),
            filedBy: call.filedBy,
            consumer,
          })
        : await approvals.claim(call.id, { hook: "tool.before", event: call.event, consumer });
    if (verdict.kind === "approved") return { kind: "approved", record: verdict.record, event: verdict.event };
    if (verdict.kind === "denied") return { kind: "denied", record: verdict.record, reason: verdict.record.decision?.reason ?? "" };
    return { kind: "pending", record: verdict.record };
  } catch (error) {
    if (!(error instanceof ApprovalRefused)) throw error;
    return { kind: "refused", code: error.code, approval: error.approval, message: error.message };
  }
}

/**
 * The run loop's wording for a call an approver denied (what the model reads): give it to the
 * SDK as the rejection's message.
 */
export function denial(reason?: string | null): string {
  return `The approver denied this tool call: ${reason === undefined || reason === null || reason === "" ? "no reason given" : reason}`;
}

/** The pause text: the chain's reason and where to decide the record. */
export function pendingText(reason: string, record: ApprovalRecord): string {
  return `approval needed (${reason}): ${howToDecide(record)}`;
}

/** Why a call the record refused does not run (the refusal's code and message: ids, rules, times, never arguments). */
export function refusedText(consulted: Extract<Consulted, { kind: "refused" }>): string {
  const message = consulted.message.startsWith(`${consulted.code}:`) ? consulted.message : `${consulted.code}: ${consulted.message}`;
  return `the approval was refused (${message})`;
}

const RECORD_ID = /\bapproval (ap_[0-9a-f]{16}_[0-9]+)\b/;

/** The record id a pause text (`pendingText`, `howToDecide`) names, or null. */
export function recordIdIn(text: unknown): string | null {
  if (typeof text !== "string") return null;
  return RECORD_ID.exec(text)?.[1] ?? null;
}
