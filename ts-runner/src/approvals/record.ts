/**
 * The approval record (schema version 1; docs/approvals.md; Python's
 * `harnessweaver/approvals/record.py`): what a pending approval binds to and what became of it.
 *
 * A record is stored as JSON under `hw1/approvals/record/<id>` in the state store, with the
 * same snake_case keys Python writes, so a record filed by a Python worker is decided and
 * claimed by a Node worker and the other way round. The interface mirrors that JSON key for
 * key: there is no renaming layer to drift.
 */

import { contentIdentity } from "../identity.js";
import { isEvent, type Event } from "../events.js";
import { isPlainObject, type JsonObject, type JsonValue } from "../json.js";

/** How long a record is kept past its expiry (decided and used ones too: audit, replay refusal): 7 days, in seconds. */
export const KEEP = 7 * 24 * 3600;

/** The statuses a record is stored with (`statusAt` adds "expired"). */
export const STATUSES = ["pending", "approved", "denied", "used", "closed"] as const;
export type Status = (typeof STATUSES)[number];

/** The refusal codes (`ApprovalRefused.code`). */
export const CODES = [
  "approval_unknown",
  "approval_replayed",
  "approval_decided",
  "approval_expired",
  "approval_spec_changed",
  "approval_mismatch",
  "approval_wrong_role",
  "approval_invalid_edit",
  "approvals_full",
] as const;
export type RefusalCode = (typeof CODES)[number];

/** What a person decided. */
export interface ApprovalDecision {
  readonly approved: boolean;
  readonly role: string | null;
  readonly by: string | null;
  readonly reason: string;
  readonly at: number;
  /** At tool hooks the call's new arguments; elsewhere the whole new event JSON; null: unedited. */
  readonly edited: JsonObject | null;
}

/** Who claimed the record, and when. */
export interface ApprovalUse {
  readonly at: number;
  readonly by: string;
}

/** A record as stored (Python's `ApprovalRecord`), frozen. */
export interface ApprovalRecord {
  readonly v: 1;
  readonly id: string;
  readonly binding: string;
  readonly identity: string;
  readonly action: JsonObject;
  readonly spec: string;
  readonly subject: string | null;
  readonly hook: string;
  readonly tool: string | null;
  readonly reason: string;
  readonly code: string | null;
  readonly approver_role: string | null;
  readonly filed_by: string;
  readonly filed_at: number;
  readonly expires_at: number;
  readonly status: Status;
  readonly decision: ApprovalDecision | null;
  readonly used: ApprovalUse | null;
}

/** A refused approval operation: `code` says which rule, `approval` the record's id (or null); the message is Python's. */
export class ApprovalRefused extends Error {
  override readonly name = "ApprovalRefused";
  readonly code: RefusalCode;
  readonly approval: string | null;

  constructor(code: RefusalCode, message: string, approval: string | null = null) {
    super(message);
    this.code = code;
    this.approval = approval;
  }
}

/** The tool hook points, where an action binds the call's name and arguments (not its id). */
export const TOOL_HOOKS: readonly string[] = ["tool.before", "tool.after"];

/** An event (or its JSON form) as JSON. */
export function eventJson(event: Event | JsonObject): JsonObject {
  if (isEvent(event)) return event.toJSON() as JsonObject;
  if (!isPlainObject(event)) throw new TypeError(`an event is an event model or its JSON object, got ${pyType(event)}`);
  return event;
}

/** Python's name of a JSON value's type, as the Python messages say it. */
export function pyType(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "string") return "str";
  if (Array.isArray(value)) return "list";
  if (isPlainObject(value)) return "dict";
  return typeof value;
}

/** Python's `repr` of a string (the simple cases: what a role name is). */
export function pyRepr(text: string): string {
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/**
 * What an approval at `hook` binds (Python's `action_of`): at `tool.before` the call's name and
 * arguments (never the call id, which changes when an agent calls again); at `tool.after` the
 * result too; at any other hook point `{"hook", "event"}`, the event's JSON form.
 */
export function actionOf(hook: string, event: Event | JsonObject): JsonObject {
  if (typeof hook !== "string" || hook === "") throw new RangeError("an approval's hook is a hook point name such as 'tool.before'");
  const data = eventJson(event);
  if (!TOOL_HOOKS.includes(hook)) return { hook, event: data };
  const call = data["call"];
  if (!isPlainObject(call) || typeof call["name"] !== "string") throw new RangeError(`an event at ${hook} holds its call: an object with a name`);
  const action: Record<string, JsonValue> = { hook, tool: call["name"], arguments: (call["arguments"] ?? {}) as JsonValue };
  if (hook === "tool.after") action["result"] = data["result"] ?? null;
  return action;
}

/** `content_identity(value)`, which an action or a spec must have (I27). */
export function identityOf(value: JsonValue, what: string): string {
  const found = contentIdentity(value);
  if (found === null) throw new RangeError(`${what} has no content identity: it is outside I-JSON (I27)`);
  return found;
}

/** The binding of an action to a spec and a subject: what makes a filing idempotent. */
export function bindingOf(identity: string, spec: string, subject: string | null): string {
  return identityOf({ identity, spec, subject }, "a binding");
}

/** What `specIdentity` reads of a harness (a loaded one: `Harness`). */
export interface SpecSource {
  /** The spec's path; null for a harness built in code (its identity is "code"). */
  readonly spec: string | null;
  readonly task: string | null;
  readonly env: string | null;
  readonly entries: readonly { readonly name: string; readonly use: string | null; readonly settings: Readonly<Record<string, unknown>> }[];
}

/** Settings as JSON, as Python's `json.dumps(default=str)` round trip makes them. */
function settingsJson(settings: unknown): JsonValue {
  const text = JSON.stringify(settings ?? {}, (_key, value: unknown) => {
    if (value === undefined || typeof value === "function" || typeof value === "symbol") return String(value);
    if (typeof value === "bigint") return String(value);
    if (value instanceof Map) return Object.fromEntries(value);
    if (value instanceof Date) return String(value);
    return value;
  });
  return JSON.parse(text) as JsonValue;
}

/**
 * The spec's identity (Python's `spec_identity`): the content identity of the selected task and
 * env and every entry's name, `use` and settings, in order. A decision made for one spec
 * version is refused by another (`approval_spec_changed`). A harness built in code (no spec)
 * is "code": an approval filed there is bound to no spec version.
 */
export function specIdentity(harness: SpecSource): string {
  if (harness.spec === null) return "code";
  const entries = harness.entries.map((entry) => ({ name: entry.name, use: entry.use, settings: settingsJson(entry.settings) }));
  return identityOf({ task: harness.task, env: harness.env, entries }, "the spec");
}

/** A stored record, its required keys checked (a malformed one is refused, never trusted); null stays null. */
export function parseRecord(value: JsonValue | null): ApprovalRecord | null {
  if (value === null) return null;
  if (!isPlainObject(value)) throw new TypeError("an approval record is a JSON object");
  const record = value as unknown as ApprovalRecord;
  const text = (key: keyof ApprovalRecord) => typeof record[key] === "string";
  const num = (key: keyof ApprovalRecord) => typeof record[key] === "number" && Number.isFinite(record[key]);
  const ok =
    record.v === 1 &&
    text("id") &&
    text("binding") &&
    text("identity") &&
    text("spec") &&
    text("hook") &&
    text("filed_by") &&
    num("filed_at") &&
    num("expires_at") &&
    isPlainObject(record.action) &&
    (STATUSES as readonly unknown[]).includes(record.status);
  if (!ok) throw new TypeError("an approval record of schema version 1 (id, binding, identity, action, spec, status, times)");
  return record;
}

/** The record's id for a binding and a serial: `ap_<first 16 hex of the binding>_<serial>`. */
export function recordId(binding: string, serial: number): string {
  return `ap_${binding.slice("sha256:".length, "sha256:".length + 16)}_${serial}`;
}

/** A time as an approver reads it: UTC, seconds, `Z`. */
export function isoTime(seconds: number): string {
  return `${new Date(Math.floor(seconds) * 1000).toISOString().slice(0, 19)}Z`;
}
