/**
 * Durable approvals (docs/approvals.md; Python's `harnessweaver.approvals`): a pending approval
 * is a record in the state store, bound to the exact action and the spec's identity, decided
 * from anywhere that shares the store and claimed once.
 */

export {
  actionOf,
  ApprovalRefused,
  CODES,
  KEEP,
  specIdentity,
  STATUSES,
  type ApprovalDecision,
  type ApprovalRecord,
  type ApprovalUse,
  type RefusalCode,
  type SpecSource,
  type Status,
} from "./record.js";
export { claim, decide, statusAt, type DecisionInput, type VerdictKind } from "./rules.js";
export {
  Approvals,
  bindingKey,
  howToDecide,
  INDEX_KEY,
  MAX_OPEN,
  MAX_TRIES,
  recordKey,
  type ApprovalsOptions,
  type ClaimOptions,
  type DecideOptions,
  type FileOptions,
  type Verdict,
} from "./book.js";
export {
  HttpNotifier,
  NotifyFailed,
  SIGNATURE_HEADER,
  sign,
  TIMESTAMP_HEADER,
  verifySignature,
  webUrl,
  type HttpNotifierOptions,
  type Notifier,
  type NotifyCallback,
} from "./notify.js";
export {
  APPROVALS_KEYS,
  DEFAULT_EXPIRES_AFTER,
  ApprovalsConfig,
  ApprovalsConfigError,
  NOTIFY_KEYS,
  parseApprovals,
  type ParseApprovalsOptions,
} from "./config.js";
