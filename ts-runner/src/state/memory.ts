/**
 * `MemoryStore`: the state of one process, bounded (python/harnessweaver/state/memory.py).
 *
 * The default when a spec names no backend: each loaded harness gets its own (two harnesses
 * in one process never share run counts), and a stateful middleware never attached to a store
 * makes a private one. At most `maxKeys` keys (counters and records together, least recently
 * used dropped first) and `maxHolds` holds and marks per counter (the ones expiring first
 * dropped first). Time: `performance.now()` (monotonic), or the `clock` given, in seconds.
 */

import { performance } from "node:perf_hooks";
import type { JsonValue } from "../json.js";
import {
  checkCounterArgs,
  checkKey,
  checkLife,
  checkVersion,
  dumpJson,
  MARK_TTL,
  reservation,
  stateRecord,
  StateUnavailable,
  type CommitOptions,
  type Reservation,
  type ReserveOptions,
  type StateRecord,
  type Store,
  type SwapOptions,
} from "./store.js";

/** One key: its counter (base, live holds, marks) and its record, and when each expires. */
class Entry {
  base = 0;
  live = new Map<string, readonly [amount: number, expiresAt: number]>();
  done = new Map<string, number>();
  counterExpires: number | null = null;
  hasCounter = false;
  /** The record's JSON text (a copy: a caller's later changes never reach it). */
  record: string | null = null;
  version = 0;
  recordExpires: number | null = null;

  purge(now: number): void {
    if (this.hasCounter && this.counterExpires !== null && this.counterExpires <= now) {
      this.base = 0;
      this.live = new Map();
      this.done = new Map();
      this.hasCounter = false;
      this.counterExpires = null;
    }
    if (this.version !== 0 && this.recordExpires !== null && this.recordExpires <= now) {
      this.record = null;
      this.version = 0;
      this.recordExpires = null;
    }
    for (const [hold, [, at]] of this.live) if (at <= now) this.live.delete(hold);
    for (const [hold, at] of this.done) if (at <= now) this.done.delete(hold);
  }

  get total(): number {
    let sum = this.base;
    for (const [amount] of this.live.values()) sum += amount;
    return sum;
  }

  get empty(): boolean {
    return !this.hasCounter && this.version === 0;
  }
}

export interface MemoryStoreOptions {
  /** How many keys are kept at most (default 65,536). */
  readonly maxKeys?: number;
  /** How many holds and marks one counter keeps at most (default 65,536). */
  readonly maxHolds?: number;
  /** The clock, in seconds (default: `performance.now() / 1000`). */
  readonly clock?: () => number;
}

export class MemoryStore implements Store {
  readonly backend = "memory" as const;
  readonly maxKeys: number;
  readonly maxHolds: number;
  readonly #clock: () => number;
  readonly #keys = new Map<string, Entry>(); // insertion order: least recently used first
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    const maxKeys = options.maxKeys ?? 65536;
    const maxHolds = options.maxHolds ?? 65536;
    if (!Number.isInteger(maxKeys) || !Number.isInteger(maxHolds) || maxKeys < 1 || maxHolds < 1) {
      throw new RangeError("maxKeys and maxHolds must be at least 1");
    }
    this.maxKeys = maxKeys;
    this.maxHolds = maxHolds;
    this.#clock = options.clock ?? (() => performance.now() / 1000);
  }

  toString(): string {
    return `MemoryStore(keys=${this.#keys.size}, maxKeys=${this.maxKeys})`;
  }

  /** The number of keys held now (expired ones included until touched). */
  get size(): number {
    return this.#keys.size;
  }

  #checkOpen(operation: string): void {
    if (this.#closed) throw new StateUnavailable(this.backend, operation, "closed");
  }

  #get(key: string, now: number, create: boolean): Entry | null {
    let entry = this.#keys.get(key);
    if (entry !== undefined) {
      entry.purge(now);
      this.#keys.delete(key);
      if (entry.empty && !create) return null;
      this.#keys.set(key, entry); // the most recent
      return entry;
    }
    if (!create) return null;
    entry = new Entry();
    this.#keys.set(key, entry);
    while (this.#keys.size > this.maxKeys) {
      const oldest = this.#keys.keys().next();
      if (oldest.done === true) break;
      this.#keys.delete(oldest.value);
    }
    return entry;
  }

  #counter(key: string, now: number, life: number | null | undefined): Entry {
    const entry = this.#get(key, now, true) as Entry;
    entry.hasCounter = true;
    entry.counterExpires = life === null || life === undefined ? null : now + life;
    return entry;
  }

  /** Past `maxHolds`, the marks expiring first go, then the live holds expiring first. */
  #bound(entry: Entry): void {
    let excess = entry.live.size + entry.done.size - this.maxHolds;
    if (excess <= 0) return;
    for (const [hold] of [...entry.done].sort((a, b) => a[1] - b[1]).slice(0, excess)) {
      entry.done.delete(hold);
      excess -= 1;
    }
    if (excess > 0) {
      for (const [hold] of [...entry.live].sort((a, b) => a[1][1] - b[1][1]).slice(0, excess)) entry.live.delete(hold);
    }
  }

  async reserve(key: string, hold: string, amount: number, options: ReserveOptions): Promise<Reservation> {
    checkCounterArgs(key, hold, amount, { limit: options.limit, ttl: options.ttl, ttlRequired: true, life: options.life });
    this.#checkOpen("reserve");
    const now = this.#clock();
    const found = this.#get(key, now, false);
    const total = found === null ? 0 : found.total;
    if (found !== null && (found.live.has(hold) || found.done.has(hold))) return reservation(true, total, true);
    if (options.limit !== null && total + amount > options.limit) return reservation(false, total, false);
    const entry = this.#counter(key, now, options.life);
    entry.live.set(hold, [amount, now + options.ttl]);
    this.#bound(entry);
    return reservation(true, entry.total, false);
  }

  async commit(key: string, hold: string, amount: number, options: CommitOptions = {}): Promise<number> {
    checkCounterArgs(key, hold, amount, { ttl: options.ttl, life: options.life });
    this.#checkOpen("commit");
    const now = this.#clock();
    const found = this.#get(key, now, false);
    if (found !== null && found.done.has(hold)) return found.total;
    const entry = this.#counter(key, now, options.life);
    entry.live.delete(hold);
    if (options.ttl !== null && options.ttl !== undefined) {
      entry.live.set(hold, [amount, now + options.ttl]);
    } else {
      entry.base += amount;
      entry.done.set(hold, now + MARK_TTL);
    }
    this.#bound(entry);
    return entry.total;
  }

  async release(key: string, hold: string): Promise<number> {
    checkKey(key);
    checkKey(hold, "hold id");
    this.#checkOpen("release");
    const entry = this.#get(key, this.#clock(), false);
    if (entry === null) return 0;
    entry.live.delete(hold);
    return entry.total;
  }

  async total(key: string): Promise<number> {
    checkKey(key);
    this.#checkOpen("total");
    const entry = this.#get(key, this.#clock(), false);
    return entry === null ? 0 : entry.total;
  }

  async read(key: string): Promise<StateRecord> {
    checkKey(key);
    this.#checkOpen("read");
    const entry = this.#get(key, this.#clock(), false);
    if (entry === null || entry.version === 0) return stateRecord(null, 0);
    return stateRecord(JSON.parse(entry.record ?? "null") as JsonValue, entry.version);
  }

  async swap(key: string, version: number, value: JsonValue, options: SwapOptions = {}): Promise<boolean> {
    checkKey(key);
    checkLife(options.life);
    checkVersion(version);
    const text = dumpJson(value);
    this.#checkOpen("swap");
    const now = this.#clock();
    const found = this.#get(key, now, false);
    if ((found === null ? 0 : found.version) !== version) return false;
    const entry = this.#get(key, now, true) as Entry;
    entry.record = text;
    entry.version = version + 1;
    entry.recordExpires = options.life === null || options.life === undefined ? null : now + options.life;
    return true;
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) checkKey(key);
    this.#checkOpen("delete");
    for (const key of keys) this.#keys.delete(key);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#keys.clear();
  }
}
