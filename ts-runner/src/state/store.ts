/**
 * The state interface under every stateful middleware (python/harnessweaver/state/store.py;
 * docs/state.md): counters with atomic reserve → commit / release, small JSON records with a
 * version (compare-and-set), lifetimes. Python and TypeScript share each backend's layout, so
 * a Node worker and a Python worker share one budget.
 *
 * A **counter** key holds `base` (the committed sum), live holds `hold → (amount, expiresAt)`
 * and committed marks `hold → expiresAt` (exactly-once marks, kept `MARK_TTL`). Every
 * operation first purges expired holds and marks, all in one atomic step per call:
 *
 * - `reserve`: a hold already live or marked → `{granted: true, total, repeated: true}`, nothing
 *   changes. Else over `limit` → `{granted: false, total, repeated: false}`. Else a live hold
 *   `(amount, now + ttl)` → `{granted: true, total + amount, repeated: false}`.
 * - `commit`: a marked hold → no-op. Else the live hold goes (if any); with `ttl` the charge
 *   stays as a live hold `(amount, now + ttl)` (an expiring charge: rate-limit windows); else
 *   `base += amount` and the hold is marked. A commit whose reservation expired still charges.
 * - `release`: drops the live hold (a marked hold stays charged).
 * - `total`: base + the live unexpired holds; a missing key is 0.
 * - `read` / `swap`: small JSON records with a version (0: none; +1 on every successful swap).
 * - `life`: the key is dropped `life` seconds after its last write (null: kept).
 *
 * Time is the store's own clock where it has one (Redis `TIME`, PostgreSQL
 * `clock_timestamp()`), the process clock for memory and SQLite; seconds as a float.
 */

import { frozenJson, type JsonValue } from "../json.js";

/** How long a committed hold's exactly-once mark is kept: 7 days, in seconds. */
export const MARK_TTL = 7 * 24 * 3600;

/** The backends, by the name a store reports (`store.backend`). */
export type Backend = "memory" | "sqlite" | "redis" | "postgres";

/** What `reserve` answers. */
export interface Reservation {
  /** The amount is held now (or already was: see `repeated`). */
  readonly granted: boolean;
  /** The counter's total after the call: committed base + live holds. */
  readonly total: number;
  /** The hold id was already known (live or committed): nothing charged again. */
  readonly repeated: boolean;
}

/** A small JSON record and its version (Python's `Record`). */
export interface StateRecord {
  /** null: no record. */
  readonly value: JsonValue | null;
  /** 0 when there is none; +1 on every successful swap. */
  readonly version: number;
}

export function reservation(granted: boolean, total: number, repeated: boolean): Reservation {
  return Object.freeze({ granted, total, repeated });
}

export function stateRecord(value: JsonValue | null, version: number): StateRecord {
  return Object.freeze({ value, version });
}

/** The backends a spec's `state.backend` may name. */
export const BACKENDS: readonly Backend[] = ["memory", "sqlite", "redis", "postgres"];

/**
 * The state store could not answer (down, timed out, read-only, full...). The message names
 * the backend, the operation and the kind of failure (an error's class name), never a URL, a
 * path's credentials or a server's message, which may quote either.
 */
export class StateUnavailable extends Error {
  override readonly name = "StateUnavailable";

  readonly backend: string;
  readonly operation: string;
  /** The kind of failure ("timed out", "closed", an error class name), or null. */
  override readonly cause: string | null;

  constructor(backend: string, operation: string, cause: string | null = null) {
    super(`state store ${backend}: ${operation} failed${cause ? `: ${cause}` : ""}`);
    this.backend = backend;
    this.operation = operation;
    this.cause = cause;
  }

  /** The failure `error` of `operation`, named by its class only (its message may quote a URL). */
  static of(backend: string, operation: string, error: unknown): StateUnavailable {
    if (error instanceof StateUnavailable) return error;
    if (error instanceof Error && /^[A-Za-z_][A-Za-z0-9_]*$/.test(error.name)) return new StateUnavailable(backend, operation, error.name);
    return new StateUnavailable(backend, operation, "error");
  }
}

export interface ReserveOptions {
  /** The most the total may reach; null: no limit. */
  readonly limit: number | null;
  /** How long the hold lives, in seconds. */
  readonly ttl: number;
  /** The key is dropped this many seconds after its last write; null/absent: kept. */
  readonly life?: number | null | undefined;
}

export interface CommitOptions {
  /** The charge stays as a live hold this long (an expiring charge) instead of joining the base. */
  readonly ttl?: number | null | undefined;
  readonly life?: number | null | undefined;
}

export interface SwapOptions {
  readonly life?: number | null | undefined;
}

/** The state interface (Python's `Store` protocol): every method is async. */
export interface Store {
  readonly backend: Backend;
  reserve(key: string, hold: string, amount: number, options: ReserveOptions): Promise<Reservation>;
  /** The counter's total after the commit. */
  commit(key: string, hold: string, amount: number, options?: CommitOptions): Promise<number>;
  /** The counter's total after the release. */
  release(key: string, hold: string): Promise<number>;
  total(key: string): Promise<number>;
  read(key: string): Promise<StateRecord>;
  /** Compare-and-set: true if `version` was the record's version (0: none) and `value` is written. */
  swap(key: string, version: number, value: JsonValue, options?: SwapOptions): Promise<boolean>;
  /** Drops the counters and records of these keys. */
  delete(...keys: string[]): Promise<void>;
  close(): Promise<void>;
}

function number(name: string, value: unknown, positive: boolean, optional: boolean): void {
  if ((value === null || value === undefined) && optional) return;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${typeof value}`);
  if (positive && value <= 0) throw new RangeError(`${name} must be greater than 0`);
}

/** A key or hold id is non-empty text (a caller's bug otherwise: a RangeError, never an outage). */
export function checkKey(key: unknown, what = "key"): void {
  if (typeof key !== "string" || key === "") throw new RangeError(`a state ${what} is non-empty text, got ${typeof key}`);
}

/** `life` is null or a positive finite number of seconds. */
export function checkLife(life: unknown): void {
  number("life", life, true, true);
}

/** The arguments of `reserve` / `commit`, checked by every store before it touches its backend. */
export function checkCounterArgs(
  key: unknown,
  hold: unknown,
  amount: unknown,
  options: { limit?: unknown; ttl?: unknown; ttlRequired?: boolean; life?: unknown } = {},
): void {
  checkKey(key);
  checkKey(hold, "hold id");
  number("amount", amount, false, false);
  number("limit", options.limit, false, true);
  number("ttl", options.ttl, true, options.ttlRequired !== true);
  checkLife(options.life);
}

/** A record version is an integer >= 0 (0: no record yet). */
export function checkVersion(version: unknown): void {
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) throw new RangeError("a record version is an int >= 0");
}

/** A record's value as the JSON text every backend stores (compact; not JSON: a RangeError). */
export function dumpJson(value: unknown): string {
  try {
    return JSON.stringify(frozenJson(value, "a state record"));
  } catch (error) {
    throw new RangeError(`a state record is a JSON value: ${error instanceof Error ? error.name : "error"}`);
  }
}
