/**
 * The durable approval records of an `AIRun`'s suspended calls (docs/approvals.md): filed when
 * the chain suspends a call (its id and how to decide it go in the SDK's approval request), and
 * consulted when the SDK resumes the call with an approving response, in this process or
 * another sharing the store. Each is asked once per call id and kept until the task ends.
 */

import type { ModelMessage } from "ai";
import { StateUnavailable } from "../../state/store.js";
import type { Approvals, ApprovalRecord } from "../../approvals/index.js";
import type { ToolCallEvent } from "../../events.js";
import type { Outcome } from "../../outcomes.js";
import { consultFor, recordIdIn, type Consulted } from "../approvals.js";
import { requestReason } from "./approval.js";

/** Who files records from this adapter (the record's `filed_by`). */
export const FILED_BY = "vercel-ai";

type Suspend = Extract<Outcome, { kind: "suspend" }>;

export class CallRecords {
  readonly approvals: Approvals;
  readonly #runId: () => string;
  readonly #filed = new Map<string, Promise<ApprovalRecord>>();
  readonly #consulted = new Map<string, Promise<Consulted>>();

  constructor(approvals: Approvals, runId: () => string) {
    this.approvals = approvals;
    this.#runId = runId;
  }

  /** Files the record call `event` waits for (once per call id; the binding's open record if there is one). */
  file(event: ToolCallEvent, outcome: Suspend): Promise<ApprovalRecord> {
    const callId = event.call.id;
    let filed = this.#filed.get(callId);
    if (filed === undefined) {
      filed = this.approvals.file({
        hook: "tool.before",
        event,
        reason: outcome.reason,
        code: outcome.code,
        approverRole: outcome.approverRole,
        subject: `run:${this.#runId()}`,
        filedBy: FILED_BY,
      });
      this.#filed.set(callId, filed);
      filed.catch(() => this.#filed.delete(callId)); // a store that failed is asked again next time
    }
    return filed;
  }

  /** The record filed for call `callId` in this run, if any. */
  filed(callId: string): Promise<ApprovalRecord> | undefined {
    return this.#filed.get(callId);
  }

  /**
   * What the record says about resuming call `event` (once per call id: an approval is claimed
   * once): by the id its approval request names, else by the call's binding. A store that is
   * down is a refusal (fail closed), never an approval.
   */
  consult(event: ToolCallEvent, outcome: Suspend, messages: readonly ModelMessage[]): Promise<Consulted> {
    const callId = event.call.id;
    let consulted = this.#consulted.get(callId);
    if (consulted === undefined) {
      const id = recordIdIn(requestReason(messages, callId));
      consulted = consultFor(this.approvals, { event, outcome, runId: this.#runId(), filedBy: FILED_BY, id }).catch((error: unknown) => {
        if (!(error instanceof StateUnavailable)) throw error;
        return { kind: "refused", code: "state_unavailable", approval: id, message: error.message } as const;
      });
      this.#consulted.set(callId, consulted);
    }
    return consulted;
  }

  /** The task ended for good: nothing resumes its calls. */
  clear(): void {
    this.#filed.clear();
    this.#consulted.clear();
  }
}
