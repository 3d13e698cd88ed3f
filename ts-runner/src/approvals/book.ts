/**
 * The approvals book (Python's `harnessweaver/approvals/book.py` class `Approvals`): records in
 * a state store that every process sharing it can file, list, decide and claim.
 *
 * Keys (the same as Python's, so the languages share one book):
 * - `hw1/approvals/record/<id>`: the record;
 * - `hw1/approvals/binding/<binding's 64 hex>`: `{"id": <current id>, "serial": n}`;
 * - `hw1/approvals/index`: `{"ids": [[id, drop_at], ...]}` (drop_at: the record's expiry: an
 *   entry is open until then), at most `MAX_OPEN` entries, pruned on each write.
 *
 * Every write is a compare-and-set loop (read, compute, `swap(version)`, again on a lost race)
 * bounded to `MAX_TRIES`; a store that fails raises `StateUnavailable`, which an integration
 * treats as a refusal (fail closed), never as "go on".
 */

import { eventFromJSON, isEvent, type Event } from "../events.js";
import type { HookPoint } from "../catalogue.js";
import { isPlainObject, type JsonObject, type JsonValue } from "../json.js";
import { StateUnavailable, type StateRecord, type Store } from "../state/store.js";
import { DEFAULT_EXPIRES_AFTER } from "./config.js";
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
  pyType,
  recordId,
  STATUSES,
  TOOL_HOOKS,
  type ApprovalRecord,
  type Status,
} from "./record.js";
import { claim as claimRule, decide, statusAt, type DecisionInput, type VerdictKind } from "./rules.js";

/** The store keys' prefix. */
export const PREFIX = "hw1/approvals";
export const INDEX_KEY = `${PREFIX}/index`;
/** The most entries the index holds (each until its record expires); one more is refused (`approvals_full`). */
export const MAX_OPEN = 10_000;
/** The most compare-and-set attempts one write makes before the store counts as unavailable. */
export const MAX_TRIES = 64;

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

/** An approval id: `ap_<16 hex>_<serial>`. */
const ID = /^ap_[0-9a-f]{16}_[1-9][0-9]{0,15}$/;

function text(name: string, value: unknown, optional = false): void {
  if ((value === null || value === undefined) && optional) return;
  if (typeof value !== "string") throw new TypeError(`${name} is text, got ${pyType(value)}`);
}

/** An id the book could have made, before a store key is made of it. */
function checkId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !ID.test(id)) {
    throw new ApprovalRefused("approval_unknown", "no such approval: an id looks like ap_<16 hex>_<serial>", null);
  }
}

function unknown(id: string): ApprovalRefused {
  return new ApprovalRefused("approval_unknown", `no approval ${id}: never filed, or dropped ${KEEP / 86400} days after it expired`, id);
}

/** A book of approvals in `store` for one spec version (Python's `Approvals`; the same keys and steps). */
export class Approvals {
  readonly store: Store;
  readonly spec: string;
  readonly expiresAfter: number;
  readonly #notify: Notifier | null;
  readonly #clock: () => number;

  constructor(store: Store, options: ApprovalsOptions) {
    if (typeof options.spec !== "string" || options.spec === "") throw new RangeError("an approvals book's spec is its spec identity, non-empty text");
    const expiresAfter = options.expiresAfter ?? DEFAULT_EXPIRES_AFTER;
    if (typeof expiresAfter !== "number" || !Number.isFinite(expiresAfter) || expiresAfter <= 0) {
      throw new RangeError("expires_after is a number of seconds > 0");
    }
    this.store = store;
    this.spec = options.spec;
    this.expiresAfter = expiresAfter;
    this.#notify = options.notify ?? null;
    this.#clock = options.clock ?? (() => Date.now() / 1000);
  }

  /** Never the store's URL. */
  toString(): string {
    return `Approvals(backend=${this.store.backend}, spec=${this.spec})`;
  }

  // -- the store, every failure a StateUnavailable -----------------------------------------

  async #readKey(key: string): Promise<StateRecord> {
    try {
      return await this.store.read(key);
    } catch (error) {
      throw StateUnavailable.of(this.store.backend, "read", error);
    }
  }

  async #swap(key: string, version: number, value: JsonValue, life: number | null): Promise<boolean> {
    try {
      return await this.store.swap(key, version, value, { life });
    } catch (error) {
      throw StateUnavailable.of(this.store.backend, "swap", error);
    }
  }

  #contended(): StateUnavailable {
    return new StateUnavailable(this.store.backend, "swap", `contended ${MAX_TRIES} times`);
  }

  #life(record: ApprovalRecord, now: number): number {
    return Math.max(record.expires_at - now + KEEP, 1);
  }

  async #record(id: string): Promise<[ApprovalRecord | null, number]> {
    const found = await this.#readKey(recordKey(id));
    try {
      return [parseRecord(found.value), found.version];
    } catch {
      // Not a record this version reads: never guessed at (fail closed).
      throw new StateUnavailable(this.store.backend, "read", "invalid approval record");
    }
  }

  // -- filing --------------------------------------------------------------------------------

  async #indexAdd(id: string, dropAt: number): Promise<void> {
    for (let i = 0; i < MAX_TRIES; i++) {
      const now = this.#clock();
      const found = await this.#readKey(INDEX_KEY);
      const kept = parseIndex(found.value).filter(([, at]) => at >= now);
      if (kept.some(([keptId]) => keptId === id)) return;
      if (kept.length >= MAX_OPEN) {
        throw new ApprovalRefused(
          "approvals_full",
          `the approvals index holds ${MAX_OPEN} records already: decide or let some expire before filing more`,
          null,
        );
      }
      kept.push([id, dropAt]);
      if (await this.#swap(INDEX_KEY, found.version, { ids: kept }, null)) return;
    }
    throw this.#contended();
  }

  /** The binding's current record (or null), its serial, the binding as read. */
  async #current(binding: string): Promise<[ApprovalRecord | null, number, StateRecord]> {
    const found = await this.#readKey(bindingKey(binding));
    if (!isPlainObject(found.value)) return [null, 0, found];
    const value = found.value as JsonObject;
    const serial = typeof value["serial"] === "number" && Number.isSafeInteger(value["serial"]) ? value["serial"] : 0;
    const currentId = value["id"];
    let record: ApprovalRecord | null = null;
    if (typeof currentId === "string" && ID.test(currentId)) [record] = await this.#record(currentId);
    return [record, serial, found];
  }

  /**
   * Files an approval for `event` at `hook`. Idempotent per binding (action, spec, subject): the
   * binding's current record while it is pending or approved and unexpired; else a new record
   * (serial + 1), indexed and notified.
   */
  async file(options: FileOptions): Promise<ApprovalRecord> {
    text("reason", options.reason);
    text("code", options.code, true);
    text("approver_role", options.approverRole, true);
    text("subject", options.subject, true);
    text("filed_by", options.filedBy);
    if (options.filedBy === "") throw new RangeError("filed_by names who files (run loop, langchain, mcp proxy...)");
    const action = actionOf(options.hook, options.event);
    const identity = identityOf(action, `the action at ${options.hook}`);
    const subject = options.subject ?? null;
    const binding = bindingOf(identity, this.spec, subject);
    for (let i = 0; i < MAX_TRIES; i++) {
      const now = this.#clock();
      const [current, last, found] = await this.#current(binding);
      if (current !== null && ["pending", "approved"].includes(statusAt(current, now))) return current;
      const serial = last + 1;
      const id = recordId(binding, serial);
      const [existing] = await this.#record(id);
      if (existing !== null) {
        // Another filer wrote it first (or crashed before moving the binding on): point the
        // binding at it and look again.
        await this.#swap(bindingKey(binding), found.version, { id, serial }, this.#life(existing, now));
        continue;
      }
      const record: ApprovalRecord = {
        v: 1,
        id,
        binding,
        identity,
        action,
        spec: this.spec,
        subject,
        hook: options.hook,
        tool: typeof action["tool"] === "string" ? action["tool"] : null,
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
      await this.#indexAdd(id, record.expires_at); // open until it expires
      // A racing filer wrote this serial: it is the one (next round finds it).
      if (!(await this.#swap(recordKey(id), 0, record as unknown as JsonValue, this.#life(record, now)))) continue;
      // The binding lives as long as its record: both go KEEP after the expiry.
      await this.#swap(bindingKey(binding), found.version, { id, serial }, this.#life(record, now));
      if (this.#notify !== null) await this.#tell(record);
      return record;
    }
    throw this.#contended();
  }

  async #tell(record: ApprovalRecord): Promise<void> {
    try {
      await deliver(this.#notify as Notifier, record);
    } catch (error) {
      // Only the kind: a notifier's message may quote its URL, its secret or the record.
      const kind = error instanceof Error && /^[A-Za-z_][A-Za-z0-9_]*$/.test(error.name) ? error.name : typeof error;
      process.emitWarning(`approval ${record.id}: the notifier failed: ${kind}`);
    }
  }

  // -- reading -------------------------------------------------------------------------------

  /** The record `id`; `approval_unknown` when there is none. */
  async get(id: string): Promise<ApprovalRecord> {
    checkId(id);
    const [record] = await this.#record(id);
    if (record === null) throw unknown(id);
    return record;
  }

  /** The index's records in filing order; with `status`, those whose `statusAt` now is it ("expired" included). */
  async list(options: { readonly status?: Status | "expired" | null } = {}): Promise<ApprovalRecord[]> {
    const status = options.status ?? null;
    if (status !== null && !([...STATUSES, "expired"] as string[]).includes(status)) {
      throw new RangeError(`a status is one of ${[...STATUSES, "expired"].join(", ")}`);
    }
    const found = await this.#readKey(INDEX_KEY);
    const now = this.#clock();
    const out: ApprovalRecord[] = [];
    for (const [id] of parseIndex(found.value)) {
      if (!ID.test(id)) continue;
      const [record] = await this.#record(id);
      if (record !== null && (status === null || statusAt(record, now) === status)) out.push(record);
    }
    return out;
  }

  // -- deciding ------------------------------------------------------------------------------

  async #decide(id: string, decision: DecisionInput, spec: string | null): Promise<ApprovalRecord> {
    checkId(id); // approval_unknown before a key is made of it
    for (let i = 0; i < MAX_TRIES; i++) {
      const now = this.#clock();
      const [record, version] = await this.#record(id);
      if (record === null) throw unknown(id);
      const decided = decide(record, decision, now, spec);
      if (await this.#swap(recordKey(id), version, decided as unknown as JsonValue, this.#life(decided, now))) return decided;
    }
    throw this.#contended();
  }

  /** Approves `id` (`spec`: refused unless it was filed under that spec). */
  async approve(id: string, options: DecideOptions = {}): Promise<ApprovalRecord> {
    return this.#decide(id, { approved: true, role: options.role, by: options.by, reason: options.reason, edited: null }, options.spec ?? null);
  }

  async deny(id: string, options: DecideOptions = {}): Promise<ApprovalRecord> {
    return this.#decide(id, { approved: false, role: options.role, by: options.by, reason: options.reason, edited: null }, options.spec ?? null);
  }

  /** Approves `id` with `edited`: at tool hooks the call's new arguments, elsewhere the whole new event JSON. */
  async edit(id: string, edited: JsonObject, options: DecideOptions = {}): Promise<ApprovalRecord> {
    return this.#decide(id, { approved: true, role: options.role, by: options.by, reason: options.reason, edited }, options.spec ?? null);
  }

  // -- claiming ------------------------------------------------------------------------------

  /**
   * What the record `id` says to the call at `hook` with `event`, about to run (`consumer`
   * names it): approved → the record is used (once: whoever asks next is refused
   * `approval_replayed`); denied → closed; pending → unchanged.
   */
  async claim<E extends Event | JsonObject>(id: string, options: ClaimOptions<E>): Promise<Verdict<E>> {
    text("consumer", options.consumer);
    const identity = identityOf(actionOf(options.hook, options.event), `the action at ${options.hook}`);
    checkId(id); // approval_unknown before a key is made of it
    for (let i = 0; i < MAX_TRIES; i++) {
      const now = this.#clock();
      const [record, version] = await this.#record(id);
      if (record === null) throw unknown(id);
      const [kind, claimed] = claimRule(record, identity, this.spec, options.consumer, now);
      if (claimed === record || (await this.#swap(recordKey(id), version, claimed as unknown as JsonValue, this.#life(claimed, now)))) {
        const event = kind === "approved" ? applied(options.hook, options.event, claimed) : options.event;
        return { kind, record: claimed, event };
      }
    }
    throw this.#contended();
  }

  /**
   * Asks again (the hook command, the MCP proxy, an adapter after a restart): the binding's
   * current record decided → claimed; pending → pending; none, used, closed or expired → a new
   * record filed → pending.
   */
  async consult<E extends Event | JsonObject>(options: FileOptions<E> & { readonly consumer: string }): Promise<Verdict<E>> {
    const identity = identityOf(actionOf(options.hook, options.event), `the action at ${options.hook}`);
    const claimOptions = { hook: options.hook, event: options.event, consumer: options.consumer };
    const [current] = await this.#current(bindingOf(identity, this.spec, options.subject ?? null));
    if (current !== null) {
      const status = statusAt(current, this.#clock());
      if (status === "approved" || status === "denied") return this.claim(current.id, claimOptions);
      if (status === "pending") return { kind: "pending", record: current, event: options.event };
    }
    const filed = await this.file(options);
    // Approved between the look and the filing.
    if (filed.status === "approved") return this.claim(filed.id, claimOptions);
    return { kind: "pending", record: filed, event: options.event };
  }
}
