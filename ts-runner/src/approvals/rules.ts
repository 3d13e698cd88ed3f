/**
 * The approval rules as pure functions (Python's `harnessweaver/approvals/rules.py`; the
 * conformance corpus pins them): a record's status at a time, a decision, a claim. Each
 * refusal is an `ApprovalRefused` whose message names the record, the rule and the values that
 * differ (identities, roles, times), never an argument value.
 */

import { isPlainObject, type JsonObject } from "../json.js";
import { ApprovalRefused, isoTime, pyRepr, pyType, type ApprovalDecision, type ApprovalRecord, type Status } from "./record.js";

/** What a person decides: `edited` (approvals only) replaces the arguments (tool hooks) or the event. */
export interface DecisionInput {
  readonly approved: boolean;
  readonly role?: string | null | undefined;
  readonly by?: string | null | undefined;
  readonly reason?: string | undefined;
  readonly edited?: JsonObject | null | undefined;
}

/** What a claim found: still pending, approved (now used) or denied (now closed). */
export type VerdictKind = "pending" | "approved" | "denied";

/** The record's status, except "expired" for a pending or approved record at or past its expiry. */
export function statusAt(record: ApprovalRecord, now: number): Status | "expired" {
  if ((record.status === "pending" || record.status === "approved") && now >= record.expires_at) return "expired";
  return record.status;
}

function expired(record: ApprovalRecord, now: number): ApprovalRefused {
  return new ApprovalRefused("approval_expired", `approval ${record.id} expired at ${isoTime(record.expires_at)} (now ${isoTime(now)}): file it again`, record.id);
}

function specChanged(record: ApprovalRecord, spec: string): ApprovalRefused {
  return new ApprovalRefused("approval_spec_changed", `approval ${record.id} was filed under spec ${record.spec}, not ${spec}: an approval holds for the spec version it was filed under`, record.id);
}

/**
 * The record once `decision` is made at `now`. Checked in this order: used → replayed, decided
 * (any status but pending) → decided; expired; another spec; another role (a missing one
 * included) when the record names one; an edit that is no JSON object or comes with a denial.
 */
export function decide(record: ApprovalRecord, decision: DecisionInput, now: number, spec: string | null = null): ApprovalRecord {
  if (record.status === "used") {
    throw new ApprovalRefused("approval_replayed", `approval ${record.id} was used already: it is single use`, record.id);
  }
  if (record.status !== "pending") {
    throw new ApprovalRefused("approval_decided", `approval ${record.id} is ${record.status} already: a decision is made once`, record.id);
  }
  if (now >= record.expires_at) throw expired(record, now);
  if (spec !== null && spec !== record.spec) throw specChanged(record, spec);
  const role = decision.role ?? null;
  if (record.approver_role !== null && role !== record.approver_role) {
    const given = role === null ? "no role" : `role ${pyRepr(role)}`;
    throw new ApprovalRefused("approval_wrong_role", `approval ${record.id} is decided by role ${pyRepr(record.approver_role)}, not ${given}`, record.id);
  }
  const edited = decision.edited ?? null;
  if (edited !== null && (!isPlainObject(edited) || decision.approved !== true)) {
    const why = isPlainObject(edited) ? "an approval" : `a JSON object, not a ${pyType(edited)}`;
    throw new ApprovalRefused("approval_invalid_edit", `approval ${record.id}: an edit is ${why}`, record.id);
  }
  const made: ApprovalDecision = {
    approved: decision.approved === true,
    role,
    by: decision.by ?? null,
    reason: decision.reason ?? "",
    at: now,
    edited,
  };
  return { ...record, status: made.approved ? "approved" : "denied", decision: made };
}

/**
 * What an integration meeting the approval of a call it is about to run gets, and the record
 * after. Checked in this order: another spec; another action (identity); used or closed →
 * replayed; expired. Then pending → "pending" (unchanged); denied → "denied", the record
 * closed; approved → "approved", the record used. Single use, strictly: a second claim is
 * refused as replayed, whoever asks.
 */
export function claim(record: ApprovalRecord, identity: string, spec: string, consumer: string, now: number): [VerdictKind, ApprovalRecord] {
  if (spec !== record.spec) throw specChanged(record, spec);
  if (identity !== record.identity) {
    throw new ApprovalRefused("approval_mismatch", `approval ${record.id} binds action ${record.identity}, not ${identity}: an approval holds for the exact action it was filed for`, record.id);
  }
  if (record.status === "used" || record.status === "closed") {
    const by = record.used === null ? "" : ` by ${record.used.by}`;
    throw new ApprovalRefused("approval_replayed", `approval ${record.id} was ${record.status}${by} already: it is single use`, record.id);
  }
  if (now >= record.expires_at) throw expired(record, now);
  if (record.status === "pending") return ["pending", record];
  const used = { at: now, by: consumer };
  if (record.status === "denied") return ["denied", { ...record, status: "closed", used }];
  return ["approved", { ...record, status: "used", used }];
}
