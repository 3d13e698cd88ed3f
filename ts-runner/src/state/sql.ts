/**
 * The counters and records on SQL tables, as one algorithm for PostgreSQL and SQLite
 * (python/harnessweaver/state/postgres.py and sqlite.py do the same on the same tables, so
 * Python and Node workers share them):
 *
 *   hw_state_counter(key TEXT PRIMARY KEY, base DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION)
 *   hw_state_hold(key TEXT, hold TEXT, amount DOUBLE PRECISION NOT NULL,
 *                 expires_at DOUBLE PRECISION NOT NULL, done BOOLEAN NOT NULL, PRIMARY KEY (key, hold))
 *   hw_state_record(key TEXT PRIMARY KEY, version BIGINT NOT NULL, value TEXT NOT NULL, expires_at DOUBLE PRECISION)
 *   indexes hw_state_hold_live (key, expires_at) WHERE NOT done and hw_state_hold_expiry (key, expires_at)
 *
 * A call reads the hold's own row, the live sum and the expired rows through those, never all
 * the rows of a key (thousands of committed marks cost nothing).
 *
 * Times are seconds since the epoch. One transaction per operation: a counter's row is made
 * if missing and locked (PostgreSQL `SELECT ... FOR UPDATE`; SQLite's `BEGIN IMMEDIATE` locks
 * the file) before anything else, then what expired is purged, then the operation acts. A
 * live hold is a row with `done` false; a committed mark one with `done` true (its amount is
 * in the base already).
 */

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
  type CommitOptions,
  type Reservation,
  type ReserveOptions,
  type StateRecord,
  type Store,
  type SwapOptions,
} from "./store.js";

/** One transaction: statements written with `$1, $2…` parameters. */
export interface Tx {
  /** The first row (as an array of its columns), or null. */
  one(sql: string, params?: readonly unknown[]): Promise<unknown[] | null>;
  run(sql: string, params?: readonly unknown[]): Promise<void>;
  /** The store's clock: seconds since the epoch. */
  now(): Promise<number>;
  /** `FOR UPDATE` where the engine has row locks, else "". */
  readonly forUpdate: string;
  /** A boolean as the engine stores it. */
  bool(value: boolean): unknown;
}

interface Counter {
  readonly base: number;
  readonly live: number;
  /** This hold's live amount, or null. */
  readonly held: number | null;
  readonly marked: boolean;
  readonly now: number;
}

const CREATE = "INSERT INTO hw_state_counter (key, base, expires_at) VALUES ($1, 0, NULL) ON CONFLICT (key) DO NOTHING";
/**
 * What is left after the purge, never reading all the rows of a key: the live sum (index
 * hw_state_hold_live: the committed marks are not read), the hold's own live amount and its
 * `done` (its own row, by the primary key). $1 key, $2 now, $3 hold. `NOT done` as written in
 * the partial index (SQLite uses it only for the same term).
 */
const HOLDS =
  "SELECT coalesce((SELECT sum(amount) FROM hw_state_hold WHERE key = $1 AND NOT done AND expires_at > $2), 0), " +
  "(SELECT amount FROM hw_state_hold WHERE key = $1 AND hold = $3 AND NOT done), " +
  "(SELECT done FROM hw_state_hold WHERE key = $1 AND hold = $3)";
const PUT =
  "INSERT INTO hw_state_hold (key, hold, amount, expires_at, done) VALUES ($1, $2, $3, $4, $5) " +
  "ON CONFLICT (key, hold) DO UPDATE SET amount = excluded.amount, expires_at = excluded.expires_at, done = excluded.done";

const num = (value: unknown): number => (typeof value === "number" ? value : Number(value));

/** Lock the counter (made first when `create`), then purge what expired; null when there is none. */
async function counter(tx: Tx, key: string, hold: string, create: boolean): Promise<Counter | null> {
  if (create) await tx.run(CREATE, [key]);
  const row = await tx.one(`SELECT base, expires_at FROM hw_state_counter WHERE key = $1${tx.forUpdate}`, [key]);
  const now = await tx.now();
  if (row === null) return null;
  const [base, expiresAt] = row;
  if (expiresAt !== null && num(expiresAt) <= now) {
    // Its life is over: a fresh counter.
    await tx.run("DELETE FROM hw_state_hold WHERE key = $1", [key]);
    await tx.run("UPDATE hw_state_counter SET base = 0, expires_at = NULL WHERE key = $1", [key]);
    return { base: 0, live: 0, held: null, marked: false, now };
  }
  await tx.run("DELETE FROM hw_state_hold WHERE key = $1 AND expires_at <= $2", [key, now]);
  // The expired rows go through the index hw_state_hold_expiry (key, expires_at).
  const [live, held, marked] = (await tx.one(HOLDS, [key, now, hold])) as unknown[];
  return { base: num(base), live: num(live), held: held === null || held === undefined ? null : num(held), marked: num(marked) === 1 || marked === true, now };
}

async function touch(tx: Tx, key: string, now: number, life: number | null | undefined): Promise<void> {
  await tx.run("UPDATE hw_state_counter SET expires_at = $1 WHERE key = $2", [life === null || life === undefined ? null : now + life, key]);
}

export async function reserveTx(tx: Tx, key: string, hold: string, amount: number, limit: number | null, ttl: number, life: number | null | undefined): Promise<Reservation> {
  const found = (await counter(tx, key, hold, true)) as Counter;
  const total = found.base + found.live;
  if (found.held !== null || found.marked) return reservation(true, total, true);
  if (limit !== null && total + amount > limit) return reservation(false, total, false);
  await tx.run(PUT, [key, hold, amount, found.now + ttl, tx.bool(false)]);
  await touch(tx, key, found.now, life);
  return reservation(true, total + amount, false);
}

export async function commitTx(tx: Tx, key: string, hold: string, amount: number, ttl: number | null | undefined, life: number | null | undefined): Promise<number> {
  const found = (await counter(tx, key, hold, true)) as Counter;
  if (found.marked) return found.base + found.live;
  let live = found.live - (found.held ?? 0);
  let base = found.base;
  if (ttl !== null && ttl !== undefined) {
    // An expiring charge (a rate-limit window).
    await tx.run(PUT, [key, hold, amount, found.now + ttl, tx.bool(false)]);
    live += amount;
  } else {
    await tx.run(PUT, [key, hold, amount, found.now + MARK_TTL, tx.bool(true)]);
    base += amount;
    await tx.run("UPDATE hw_state_counter SET base = $1 WHERE key = $2", [base, key]);
  }
  await touch(tx, key, found.now, life);
  return base + live;
}

export async function releaseTx(tx: Tx, key: string, hold: string): Promise<number> {
  const found = await counter(tx, key, hold, false);
  if (found === null) return 0;
  if (found.held === null) return found.base + found.live;
  await tx.run("DELETE FROM hw_state_hold WHERE key = $1 AND hold = $2 AND NOT done", [key, hold]);
  return found.base + (found.live - found.held);
}

export async function totalTx(tx: Tx, key: string): Promise<number> {
  const found = await counter(tx, key, "", false);
  return found === null ? 0 : found.base + found.live;
}

export async function readTx(tx: Tx, key: string): Promise<StateRecord> {
  const row = await tx.one("SELECT version, value, expires_at FROM hw_state_record WHERE key = $1", [key]);
  const now = await tx.now();
  if (row === null) return stateRecord(null, 0);
  const [version, value, expiresAt] = row;
  if ((expiresAt !== null && num(expiresAt) <= now) || num(version) === 0) return stateRecord(null, 0);
  return stateRecord(JSON.parse(String(value)) as JsonValue, num(version));
}

export async function swapTx(tx: Tx, key: string, version: number, text: string, life: number | null | undefined): Promise<boolean> {
  await tx.run("INSERT INTO hw_state_record (key, version, value, expires_at) VALUES ($1, 0, 'null', NULL) ON CONFLICT (key) DO NOTHING", [key]);
  const [found, expiresAt] = (await tx.one(`SELECT version, expires_at FROM hw_state_record WHERE key = $1${tx.forUpdate}`, [key])) as unknown[];
  const now = await tx.now();
  let current = num(found);
  if (expiresAt !== null && num(expiresAt) <= now) current = 0; // its life is over: no record
  if (current !== version) {
    if (current === 0) await tx.run("DELETE FROM hw_state_record WHERE key = $1", [key]); // leave no placeholder behind
    return false;
  }
  await tx.run("UPDATE hw_state_record SET version = $1, value = $2, expires_at = $3 WHERE key = $4", [
    current + 1,
    text,
    life === null || life === undefined ? null : now + life,
    key,
  ]);
  return true;
}

export async function deleteTx(tx: Tx, keys: readonly string[]): Promise<void> {
  const names = [...new Set(keys)].sort();
  // The counters' locks first, in one order: as every other operation takes them.
  for (const key of names) await tx.one(`SELECT key FROM hw_state_counter WHERE key = $1${tx.forUpdate}`, [key]);
  for (const key of names) {
    await tx.run("DELETE FROM hw_state_hold WHERE key = $1", [key]);
    await tx.run("DELETE FROM hw_state_counter WHERE key = $1", [key]);
    await tx.run("DELETE FROM hw_state_record WHERE key = $1", [key]);
  }
}

/**
 * A store on the SQL tables above: each operation checks its arguments, then runs as one
 * transaction of the backend (`transaction`, which turns any failure into StateUnavailable).
 * PostgresStore and SqliteStore differ only in how they open and run a transaction.
 */
export abstract class SqlStore implements Store {
  abstract readonly backend: "postgres" | "sqlite";

  protected abstract transaction<T>(operation: string, body: (tx: Tx) => Promise<T>): Promise<T>;

  abstract close(): Promise<void>;

  async reserve(key: string, hold: string, amount: number, options: ReserveOptions): Promise<Reservation> {
    checkCounterArgs(key, hold, amount, { limit: options.limit, ttl: options.ttl, ttlRequired: true, life: options.life });
    return this.transaction("reserve", (tx) => reserveTx(tx, key, hold, amount, options.limit, options.ttl, options.life));
  }

  async commit(key: string, hold: string, amount: number, options: CommitOptions = {}): Promise<number> {
    checkCounterArgs(key, hold, amount, { ttl: options.ttl, life: options.life });
    return this.transaction("commit", (tx) => commitTx(tx, key, hold, amount, options.ttl, options.life));
  }

  async release(key: string, hold: string): Promise<number> {
    checkKey(key);
    checkKey(hold, "hold id");
    return this.transaction("release", (tx) => releaseTx(tx, key, hold));
  }

  async total(key: string): Promise<number> {
    checkKey(key);
    return this.transaction("total", (tx) => totalTx(tx, key));
  }

  async read(key: string): Promise<StateRecord> {
    checkKey(key);
    return this.transaction("read", (tx) => readTx(tx, key));
  }

  async swap(key: string, version: number, value: JsonValue, options: SwapOptions = {}): Promise<boolean> {
    checkKey(key);
    checkLife(options.life);
    checkVersion(version);
    const text = dumpJson(value);
    return this.transaction("swap", (tx) => swapTx(tx, key, version, text, options.life));
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) checkKey(key);
    if (keys.length === 0) return;
    await this.transaction("delete", (tx) => deleteTx(tx, keys));
  }
}
