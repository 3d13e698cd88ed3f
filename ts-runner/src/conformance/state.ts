/**
 * The scripted store of a harness case (`given.harness.state`, INTERPRETING.md §2, I33;
 * python/harnessweaver/conformance/state.py).
 *
 * The case's harness runs on a `MemoryStore` (backend `memory`) seeded before the first emit
 * with committed counter amounts (`seed.counters`: full key → amount, committed under the hold
 * `seed`) and records (`seed.records`: full key → JSON value). While the case's current emit
 * (1-based, counting every emit of the case in step order) is one of `down`, every store call
 * throws `StateUnavailable`: a scripted outage, after which the store answers again with what
 * it held.
 */

import { isPlainObject, type JsonValue } from "../json.js";
import { MemoryStore } from "../state/memory.js";
import {
  StateUnavailable,
  type CommitOptions,
  type Reservation,
  type ReserveOptions,
  type StateRecord,
  type Store,
  type SwapOptions,
} from "../state/store.js";
import { BehaviourError } from "./behaviours.js";

/** The hold id a seeded counter amount is committed under. */
export const SEED_HOLD = "seed";

export class ScriptedStore implements Store {
  readonly backend = "memory" as const;
  readonly inner = new MemoryStore();
  readonly down: ReadonlySet<number>;

  constructor(
    down: unknown,
    readonly emit: () => number,
  ) {
    if (!Array.isArray(down)) throw new BehaviourError("harness.state.down must be a list of emit numbers");
    this.down = new Set(down.map((n) => Number(n)));
  }

  /** Commits `seed.counters` and writes `seed.records` (before any emit). */
  async seed(seed: unknown): Promise<void> {
    if (!isPlainObject(seed)) throw new BehaviourError("harness.state.seed must be an object");
    for (const [key, amount] of Object.entries((seed["counters"] ?? {}) as Record<string, unknown>)) {
      await this.inner.commit(key, SEED_HOLD, Number(amount));
    }
    for (const [key, value] of Object.entries((seed["records"] ?? {}) as Record<string, unknown>)) {
      await this.inner.swap(key, 0, value as JsonValue);
    }
  }

  #check(operation: string): void {
    if (this.down.has(this.emit())) throw new StateUnavailable(this.backend, operation, "scripted outage");
  }

  async reserve(key: string, hold: string, amount: number, options: ReserveOptions): Promise<Reservation> {
    this.#check("reserve");
    return this.inner.reserve(key, hold, amount, options);
  }

  async commit(key: string, hold: string, amount: number, options?: CommitOptions): Promise<number> {
    this.#check("commit");
    return this.inner.commit(key, hold, amount, options);
  }

  async release(key: string, hold: string): Promise<number> {
    this.#check("release");
    return this.inner.release(key, hold);
  }

  async total(key: string): Promise<number> {
    this.#check("total");
    return this.inner.total(key);
  }

  async read(key: string): Promise<StateRecord> {
    this.#check("read");
    return this.inner.read(key);
  }

  async swap(key: string, version: number, value: JsonValue, options?: SwapOptions): Promise<boolean> {
    this.#check("swap");
    return this.inner.swap(key, version, value, options);
  }

  async delete(...keys: string[]): Promise<void> {
    this.#check("delete");
    return this.inner.delete(...keys);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}
