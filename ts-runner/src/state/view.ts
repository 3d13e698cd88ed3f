/**
 * `StateView`: a store as one middleware sees it, with its timeout and its failure rule
 * (python/harnessweaver/state/view.py).
 *
 * A middleware never holds a bare `Store`: it holds a view that knows who it is (the spec
 * layer and item that declared it, its task, its fail mode), so it can build its keys
 * (`key()`), and so that every store call is bounded in time and every failure of the store
 * (a timeout, a refused connection, a read-only file, a server error) arrives as one error,
 * `StateUnavailable`. The rule every stateful middleware follows:
 *
 *     catch (error) {
 *       if (!(error instanceof StateUnavailable)) throw error;
 *       if (view.failMode === "closed") return view.unavailable(error); // Block, state_unavailable
 *       throw error; // open: the bus records the failure, the chain goes on
 *     }
 *
 * Never a silent allow. A built-in declared stateful gets its view from the spec loader (or
 * `attach()`); one never attached makes itself a private `MemoryStore` view.
 */

import type { FailMode } from "../declaration.js";
import type { Envelope } from "../envelope.js";
import type { JsonValue } from "../json.js";
import { Block } from "../outcomes.js";
import { MemoryStore } from "./memory.js";
import { SCOPES, isScope, stateKey, subjectOf } from "./scope.js";
import {
  checkCounterArgs,
  checkKey,
  checkLife,
  checkVersion,
  dumpJson,
  StateUnavailable,
  type CommitOptions,
  type Reservation,
  type ReserveOptions,
  type StateRecord,
  type Store,
  type SwapOptions,
} from "./store.js";

/** Seconds a store call may take before it counts as unavailable (`state.timeout`). */
export const DEFAULT_TIMEOUT = 0.25;
/** The layer of a middleware attached in code without one. */
export const DEFAULT_LAYER = "app";
/** The code of the Block a closed middleware returns when its store cannot answer. */
export const UNAVAILABLE = "state_unavailable";

export interface StateViewOptions {
  readonly layer: string;
  readonly item: string;
  readonly failMode: FailMode;
  /** Seconds (default 0.25). */
  readonly timeout?: number | undefined;
  readonly task?: string | null | undefined;
}

export class StateView {
  readonly store: Store;
  readonly layer: string;
  readonly item: string;
  readonly failMode: FailMode;
  readonly timeout: number;
  readonly task: string | null;

  constructor(store: Store, options: StateViewOptions) {
    if (options.failMode !== "closed" && options.failMode !== "open") {
      throw new RangeError(`failMode is 'closed' or 'open', got ${String(options.failMode)}`);
    }
    const timeout = options.timeout ?? DEFAULT_TIMEOUT;
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
      throw new RangeError("timeout must be a positive finite number of seconds");
    }
    checkKey(options.layer, "layer");
    checkKey(options.item, "item");
    this.store = store;
    this.layer = options.layer;
    this.item = options.item;
    this.failMode = options.failMode;
    this.timeout = timeout;
    this.task = options.task ?? null;
    Object.freeze(this);
  }

  /** A view on a new `MemoryStore` of its own: a middleware never attached. */
  static private(item: string, failMode: FailMode, task: string | null = null): StateView {
    return new StateView(new MemoryStore(), { layer: DEFAULT_LAYER, item, failMode, task });
  }

  /** The store's backend name (`memory`, `sqlite`, `redis`, `postgres`). */
  get backend(): string {
    return this.store.backend;
  }

  toString(): string {
    return `StateView(backend=${this.backend}, layer=${this.layer}, item=${this.item}, failMode=${this.failMode}, timeout=${this.timeout})`;
  }

  /**
   * The full key of counter or record `name` in `scope` for the run of `envelope`; a
   * `LookupError` when the scope needs an envelope attribute that is missing.
   */
  key(scope: string, envelope: Envelope, name: string): string {
    if (!isScope(scope)) throw new RangeError(`unknown scope '${scope}': the scopes are ${SCOPES.join(", ")}`);
    return stateKey(this.layer, this.item, scope, subjectOf(scope, envelope, this.task), name);
  }

  /** The Block of a closed middleware whose store cannot answer. */
  unavailable(error: StateUnavailable): Block {
    return Block(`middleware ${this.item}: state store unavailable (${error.backend})`, { code: UNAVAILABLE });
  }

  async reserve(key: string, hold: string, amount: number, options: ReserveOptions): Promise<Reservation> {
    checkCounterArgs(key, hold, amount, { limit: options.limit, ttl: options.ttl, ttlRequired: true, life: options.life });
    return this.#call("reserve", () => this.store.reserve(key, hold, amount, options));
  }

  async commit(key: string, hold: string, amount: number, options: CommitOptions = {}): Promise<number> {
    checkCounterArgs(key, hold, amount, { ttl: options.ttl, life: options.life });
    return this.#call("commit", () => this.store.commit(key, hold, amount, options));
  }

  async release(key: string, hold: string): Promise<number> {
    checkKey(key);
    checkKey(hold, "hold id");
    return this.#call("release", () => this.store.release(key, hold));
  }

  async total(key: string): Promise<number> {
    checkKey(key);
    return this.#call("total", () => this.store.total(key));
  }

  async read(key: string): Promise<StateRecord> {
    checkKey(key);
    return this.#call("read", () => this.store.read(key));
  }

  async swap(key: string, version: number, value: JsonValue, options: SwapOptions = {}): Promise<boolean> {
    checkKey(key);
    checkVersion(version);
    checkLife(options.life);
    dumpJson(value);
    return this.#call("swap", () => this.store.swap(key, version, value, options));
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) checkKey(key);
    return this.#call("delete", () => this.store.delete(...keys));
  }

  /** `call()` under the timeout; any failure of the store (down, slow, refused, broken) is `StateUnavailable`. */
  async #call<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const backend = this.backend;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StateUnavailable(backend, operation, "timed out")), this.timeout * 1000);
    });
    try {
      return await Promise.race([Promise.resolve().then(call), timeout]);
    } catch (error) {
      throw StateUnavailable.of(backend, operation, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
