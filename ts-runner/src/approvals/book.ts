/**
 * The approvals book (Python's `harnessweaver/approvals/book.py` class `Approvals`): records in
 * a state store that every process sharing it can file, list, decide and claim.
 *
 * Keys (the same as Python's, so the languages share one book):
 * - `hw1/approvals/record/<id>`: the record;
 * - `hw1/approvals/binding/<binding's 64 hex>`: `{"id": <current id>, "serial": n}`;
 * - `hw1/approvals/index`: `{"ids": [[id, drop_at], ...]}`, at most `MAX_OPEN` entries whose
 *   `drop_at` (the record's expiry) is still ahead, pruned on each write.
 *
 * Every write is a compare-and-set loop (read, compute, `swap(version)`, again on a lost race)
 * bounded to `MAX_TRIES`; a store that fails raises `StateUnavailable`, which an integration
 * treats as a refusal (fail closed), never as "go on".
 */

import { eventFromJSON, isEvent, type Event } from "../events.js";
import type { HookPoint } from "../catalogue.js";
import { isPlainObject, type JsonObject, type JsonValue } from "../json.js";
import { StateUnavailable, type Store } from "../state/store.js";
import { deliver, type Notifier } from "./notify.js";
import {
  actionOf,
  ApprovalRefused,
  bindingOf,
  eventJson,
  identityOf,
  isoTime,
  KEEP,
  parseRecord,
  recordId,
  TOOL_HOOKS,
  type ApprovalRecord,
  type Status,
} from "./record.js";
import { claim as claimRule, decide, statusAt, type DecisionInput, type VerdictKind } from "./rules.js";

/** The store keys' prefix. */
export const PREFIX = "hw1/approvals";
export const INDEX_KEY = `${PREFIX}/index`;
/** The most open (unexpired) records the index holds; one more is refused (`approvals_full`). */
export const MAX_OPEN = 10_000;
/** The most compare-and-set attempts one write makes before the store counts as unavailable. */
export const MAX_TRIES = 64;
/** How long a record stays pending by default: one day, in seconds. */
export const DEFAULT_EXPIRES_AFTER = 86_400;

export function recordKey(id: string): string {
  return `${PREFIX}/record/${id}`;
}

export function bindingKey(binding: string): string {
  return `${PREFIX}/binding/${binding.slice("sha256:".length)}`;
}

/** What a claim or a consult answers: the verdict, the record after, and the event to go on with (any edit applied). */
export interface Verdict<E extends Event | JsonObject = Event | JsonObject> {
  readonly kind: VerdictKind;
  readonly record: ApprovalRecord;
  readonly event: E;
}

export interface ApprovalsOptions {
  /** The spec's identity (`specIdentity(harness)`), or "code" for a harness built in code. */
  readonly spec: string;
  /** Seconds a new record stays pending (default one day). */
  readonly expiresAfter?: number;
  /** Told of each new record; a failure is logged by type name and never stops the filing. */
  readonly notify?: Notifier | null;
  /** The time, in epoch seconds (default the process's). */
  readonly clock?: () => number;
}

/** What filing takes (`file`, `consult`). */
export interface FileOptions<E extends Event | JsonObject = Event | JsonObject> {
  readonly hook: string;
  readonly event: E;
  readonly reason: string;
  readonly code?: string | null;
  readonly approverRole?: string | null;
  readonly subject?: string | null;
  /** Who files: "run loop", "openai-agents-js", "vercel-ai", ... */
  readonly filedBy: string;
}

export interface DecideOptions {
  readonly role?: string | null;
  readonly by?: string | null;
  readonly reason?: string;
  /** The decider's spec identity: a record filed for another is refused (`approval_spec_changed`). */
  readonly spec?: string | null;
}

export interface ClaimOptions<E extends Event | JsonObject = Event | JsonObject> {
  readonly hook: string;
  readonly event: E;
  /** Names this call (run id + step + hook; session + call id ...): recorded as who used the approval. */
  readonly consumer: string;
}

type Binding = { id: string; serial: number };

function parseBinding(value: JsonValue | null): Binding | null {
  if (!isPlainObject(value)) return null;
  const { id, serial } = value as { id?: unknown; serial?: unknown };
  if (typeof id !== "string" || typeof serial !== "number" || !Number.isSafeInteger(serial)) return null;
  return { id, serial };
}

function parseIndex(value: JsonValue | null): [string, number][] {
  if (!isPlainObject(value) || !Array.isArray(value["ids"])) return [];
  const out: [string, number][] = [];
  for (const entry of value["ids"] as unknown[]) {
    if (Array.isArray(entry) && typeof entry[0] === "string" && typeof entry[1] === "number") out.push([entry[0], entry[1]]);
  }
  return out;
}

/** The line an integration puts in its pause or refusal message: which approval, and how to decide it. */
export function howToDecide(record: ApprovalRecord): string {
  const role = record.approver_role === null ? "" : `role ${record.approver_role}, `;
  return (
    `approval ${record.id} is ${record.status} (${role}expires ${isoTime(record.expires_at)}): decide it with ` +
    `\`harnessweaver approvals approve ${record.id}\` or \`harnessweaver approvals deny ${record.id}\``
  );
}

/** The event to go on with once `record` is decided: `event` with the approver's edit applied. */
function applied<E extends Event | JsonObject>(hook: string, event: E, record: ApprovalRecord): E {
  const edited = record.decision?.approved === true ? record.decision.edited : null;
  if (edited === null) return event;
  let data: JsonObject;
  if (TOOL_HOOKS.includes(hook)) {
    const original = eventJson(event);
    const call = isPlainObject(original["call"]) ? (original["call"] as JsonObject) : {};
    data = { ...original, call: { ...call, arguments: edited } };
  } else {
    data = edited;
  }
  return (isEvent(event) ? eventFromJSON(hook as HookPoint, data) : data) as E;
}

/** A book of approvals in `store` for one spec (Python's `Approvals`). */
export class Approvals {
  readonly store: Store;
  readonly spec: string;
  readonly expiresAfter: number;
  readonly #notify: Notifier | null;
  readonly #clock: () => number;

  constructor(store: Store, options: ApprovalsOptions) {
    if (typeof options.spec !== "string" || options.spec === "") throw new RangeError("Approvals needs the spec's identity (spec)");
    const expiresAfter = options.expiresAfter ?? DEFAULT_EXPIRES_AFTER;
    if (typeof expiresAfter !== "number" || !Number.isFinite(expiresAfter) || expiresAfter <= 0) {
      throw new RangeError("expiresAfter is a number of seconds > 0");
    }
    this.store = store;
    this.spec = options.spec;
    this.expiresAfter = expiresAfter;
    this.#notify = options.notify ?? null;
    this.#clock = options.clock ?? (() => Date.now() / 1000);
  }

  #now(): number {
    return this.#clock();
  }

  #contention(operation: string): StateUnavailable {
    return new StateUnavailable(this.store.backend, `approvals ${operation}`, "too many concurrent writes");
  }

  async #read(id: string): Promise<[ApprovalRecord | null, number]> {
    const found = await this.store.read(recordKey(id));
    try {
      return [parseRecord(found.value), found.version];
    } catch {
      // A record no implementation wrote: refused (fail closed), never trusted.
      throw new StateUnavailable(this.store.backend, "approvals read", "malformed record");
    }
  }

  #life(record: ApprovalRecord, now: number): number {
    return Math.max(record.expires_at - now, 0) + KEEP;
  }

  /** The binding's current record, if its id is known and the record is there. */
  async #current(binding: string): Promise<[Binding | null, number, ApprovalRecord | null]> {
    const found = await this.store.read(bindingKey(binding));
    const current = parseBinding(found.value);
    if (current === null) return [null, found.version, null];
    const [record] = await this.#read(current.id);
    return [current, found.version, record];
  }

  /** Adds `id` to the index (pruned of what has expired); `approvals_full` when `MAX_OPEN` are open. */
  async #index(id: string, dropAt: number): Promise<void> {
    for (let i = 0; i < MAX_TRIES; i++) {
      const now = this.#now();
      const found = await this.store.read(INDEX_KEY);
      const ids = parseIndex(found.value).filter(([, drop]) => drop >= now);
      if (ids.length >= MAX_OPEN) {
        throw new ApprovalRefused("approvals_full", `${ids.length} approvals are open, the most the book holds is ${MAX_OPEN}`, id);
      }
      ids.push([id, dropAt]);
      if (await this.store.swap(INDEX_KEY, found.version, { ids })) return;
    }
    throw this.#contention("index");
  }

  /**
   * Files an approval for `event` at `hook`. Idempotent per binding (action, spec, subject): the
   * binding's current record while it is pending or approved and unexpired; else a new record
   * (serial + 1), indexed and notified.
   */
  async file(options: FileOptions): Promise<ApprovalRecord> {
    const action = actionOf(options.hook, options.event);
    const identity = identityOf(action, "the action");
    const subject = options.subject ?? null;
    const binding = bindingOf(identity, this.spec, subject);
    for (let i = 0; i < MAX_TRIES; i++) {
      const [current, version, existing] = await this.#current(binding);
      const now = this.#now();
      if (existing !== null) {
        const status = statusAt(existing, now);
        if (status === "pending" || status === "approved") return existing;
      }
      const serial = (current?.serial ?? 0) + 1;
      const id = recordId(binding, serial);
      // The binding first: its compare-and-set makes the serial (and so the id) this filer's own.
      if (!(await this.store.swap(bindingKey(binding), version, { id, serial }, { life: this.expiresAfter + KEEP }))) continue;
      const tool = TOOL_HOOKS.includes(options.hook) ? (action["tool"] as string) : null;
      const record: ApprovalRecord = {
        v: 1,
        id,
        binding,
        identity,
        action,
        spec: this.spec,
        subject,
        hook: options.hook,
        tool,
        reason: options.reason,
        code: options.code ?? null,
        approver_role: options.approverRole ?? null,
        filed_by: options.filedBy,
        filed_at: now,
        expires_at: now + this.expiresAfter,
        status: "pending",
        decision: null,
        used: null,
      };
      await this.#index(id, record.expires_at);
      if (!(await this.store.swap(recordKey(id), 0, record as unknown as JsonValue, { life: this.#life(record, now) }))) {
        throw this.#contention("file"); // the serial was ours: another writer of this id is a bug
      }
      await this.#tell(record);
      return record;
    }
    throw this.#contention("file");
  }

  async #tell(record: ApprovalRecord): Promise<void> {
    if (this.#notify === null) return;
    try {
      await deliver(this.#notify, record);
    } catch (error) {
      // Only the kind: a notifier's message may quote its URL, its secret or the record.
      const kind = error instanceof Error && /^[A-Za-z_][A-Za-z0-9_]*$/.test(error.name) ? error.name : typeof error;
      process.emitWarning(`harnessweaver approvals: notifying of ${record.id} failed (${kind})`);
    }
  }

  /** The record `id`; `approval_unknown` when there is none. */
  async get(id: string): Promise<ApprovalRecord> {
    const [record] = await this.#read(id);
    if (record === null) throw new ApprovalRefused("approval_unknown", `no approval ${id} in this store`, id);
    return record;
  }

  /** The indexed records, oldest first; with `status`, those whose `statusAt` now is it. */
  async list(options: { readonly status?: Status | "expired" | null } = {}): Promise<ApprovalRecord[]> {
    const found = await this.store.read(INDEX_KEY);
    const now = this.#now();
    const out: ApprovalRecord[] = [];
    for (const [id] of parseIndex(found.value)) {
      const [record] = await this.#read(id);
      if (record === null) continue;
      if (options.status !== undefined && options.status !== null && statusAt(record, now) !== options.status) continue;
      out.push(record);
    }
    return out.sort((a, b) => a.filed_at - b.filed_at);
  }

  async #decide(id: string, decision: DecisionInput, spec: string | null): Promise<ApprovalRecord> {
    for (let i = 0; i < MAX_TRIES; i++) {
      const [record, version] = await this.#read(id);
      if (record === null) throw new ApprovalRefused("approval_unknown", `no approval ${id} in this store`, id);
      const now = this.#now();
      const decided = decide(record, decision, now, spec);
      if (await this.store.swap(recordKey(id), version, decided as unknown as JsonValue, { life: this.#life(decided, now) })) return decided;
    }
    throw this.#contention("decide");
  }

  async approve(id: string, options: DecideOptions = {}): Promise<ApprovalRecord> {
    return this.#decide(id, { approved: true, role: options.role, by: options.by, reason: options.reason }, options.spec ?? null);
  }

  async deny(id: string, options: DecideOptions = {}): Promise<ApprovalRecord> {
    return this.#decide(id, { approved: false, role: options.role, by: options.by, reason: options.reason }, options.spec ?? null);
  }

  /** Approves `id` with `edited`: at tool hooks the call's new arguments, elsewhere the whole new event JSON. */
  async edit(id: string, edited: JsonObject, options: DecideOptions = {}): Promise<ApprovalRecord> {
    return this.#decide(id, { approved: true, role: options.role, by: options.by, reason: options.reason, edited }, options.spec ?? null);
  }

  /** The rules' claim on the stored record `id`, for the call `event` at `hook`, written back (compare-and-set). */
  async claim<E extends Event | JsonObject>(id: string, options: ClaimOptions<E>): Promise<Verdict<E>> {
    const identity = identityOf(actionOf(options.hook, options.event), "the action");
    for (let i = 0; i < MAX_TRIES; i++) {
      const [record, version] = await this.#read(id);
      if (record === null) throw new ApprovalRefused("approval_unknown", `no approval ${id} in this store`, id);
      const now = this.#now();
      const [kind, after] = claimRule(record, identity, this.spec, options.consumer, now);
      if (kind === "pending") return { kind, record, event: options.event };
      if (await this.store.swap(recordKey(id), version, after as unknown as JsonValue, { life: this.#life(after, now) })) {
        return { kind, record: after, event: applied(options.hook, options.event, after) };
      }
    }
    throw this.#contention("claim");
  }

  /**
   * Asks again for a call (the hook command, the MCP proxy, an adapter after a restart): the
   * binding's current record approved or denied → claimed; pending → pending; none, used,
   * closed or expired → a new record is filed → pending.
   */
  async consult<E extends Event | JsonObject>(options: FileOptions<E> & { readonly consumer: string }): Promise<Verdict<E>> {
    const identity = identityOf(actionOf(options.hook, options.event), "the action");
    const binding = bindingOf(identity, this.spec, options.subject ?? null);
    for (let i = 0; i < MAX_TRIES; i++) {
      const [, , record] = await this.#current(binding);
      const status = record === null ? null : statusAt(record, this.#now());
      if (record !== null && (status === "approved" || status === "denied")) {
        return this.claim(record.id, { hook: options.hook, event: options.event, consumer: options.consumer });
      }
      if (record !== null && status === "pending") return { kind: "pending", record, event: options.event };
      const filed = await this.file(options);
      // Decided between the look and the filing: claim it on the next round.
      if (statusAt(filed, this.#now()) === "pending") return { kind: "pending", record: filed, event: options.event };
    }
    throw this.#contention("consult");
  }
}
