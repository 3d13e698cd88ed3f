/**
 * `PostgresStore`: counters and records in PostgreSQL (python/harnessweaver/state/postgres.py),
 * through `pg` (an optional peer dependency: installed only by those who use PostgreSQL).
 *
 * One transaction per operation (`sql.ts`): a counter's row is made if missing and locked
 * (`SELECT ... FOR UPDATE`) before anything else, so every operation on one key runs one
 * after the other across processes and machines, Python's and Node's alike. Time is the
 * server's (`clock_timestamp()`), in seconds since the epoch. The tables are made if missing,
 * once per store, under a transaction-scoped advisory lock (the same lock as Python's). A
 * connection that failed is dropped, never reused, so the store recovers by itself when the
 * server comes back. The URL never appears in an error or `toString()`.
 */

import { SqlStore, type Tx } from "./sql.js";
import { StateUnavailable } from "./store.js";

/** The tables, as Python makes them (python/harnessweaver/state/postgres.py `SCHEMA`). */
export const SCHEMA: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS hw_state_counter (key TEXT PRIMARY KEY, " + "base DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION)",
  "CREATE TABLE IF NOT EXISTS hw_state_hold (key TEXT NOT NULL, hold TEXT NOT NULL, " +
    "amount DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, " +
    "done BOOLEAN NOT NULL, PRIMARY KEY (key, hold))",
  "CREATE TABLE IF NOT EXISTS hw_state_record (key TEXT PRIMARY KEY, " + "version BIGINT NOT NULL, value TEXT NOT NULL, expires_at DOUBLE PRECISION)",
  "CREATE INDEX IF NOT EXISTS hw_state_hold_live ON hw_state_hold (key, expires_at) WHERE NOT done",
  "CREATE INDEX IF NOT EXISTS hw_state_hold_expiry ON hw_state_hold (key, expires_at)",
];
/** "hw_state": the advisory lock around the CREATEs (Python's `_SCHEMA_LOCK`). */
const SCHEMA_LOCK = "7527590251651495013"; // 0x68775F7374617465

/** What this module uses of `pg` (declared here: the package is optional). */
interface QueryResult {
  readonly rows: readonly unknown[];
}
interface PoolClient {
  on(event: "error", listener: (error: unknown) => void): unknown;
  query(text: string | { text: string; values?: unknown[]; rowMode?: "array" }, values?: unknown[]): Promise<QueryResult>;
  release(destroy?: boolean): void;
}
interface Pool {
  connect(): Promise<PoolClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: unknown) => void): unknown;
}
const listened = new WeakSet<object>();

type PgModule = { Pool: new (config: Readonly<Record<string, unknown>>) => Pool };

async function pgModule(): Promise<PgModule> {
  let loaded: { default?: PgModule } & Partial<PgModule>;
  try {
    const name = "pg"; // not a literal: an optional package, and its types are not needed to build this one
    loaded = (await import(name)) as typeof loaded;
  } catch {
    throw new Error("the postgres state backend needs the package pg: npm install pg");
  }
  return (loaded.Pool === undefined ? loaded.default : loaded) as PgModule;
}

export interface PostgresStoreOptions {
  /** At most this many connections at once (default 10). */
  readonly maxConnections?: number;
  /** How long a connection attempt may take, in milliseconds (default 2000). */
  readonly connectTimeout?: number;
}

export class PostgresStore extends SqlStore {
  readonly backend = "postgres" as const;
  readonly #url: string;
  readonly #options: PostgresStoreOptions;
  #pool: Promise<Pool> | undefined;
  #schemaReady = false;
  #closed = false;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    super();
    if (typeof url !== "string" || url === "") throw new RangeError("a postgres state URL is non-empty text");
    this.#url = url;
    this.#options = options;
  }

  override toString(): string {
    return "PostgresStore(postgres)";
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  toJSON(): object {
    return { backend: this.backend };
  }

  #connect(): Promise<Pool> {
    this.#pool ??= pgModule().then(({ Pool }) => {
      const pool = new Pool({
        connectionString: this.#url,
        max: this.#options.maxConnections ?? 10,
        connectionTimeoutMillis: this.#options.connectTimeout ?? 2000,
        idleTimeoutMillis: 10_000,
        allowExitOnIdle: true,
      });
      pool.on("error", () => {}); // an idle connection that broke is dropped by the pool; the next call reconnects
      return pool;
    });
    return this.#pool;
  }

  async #createTables(client: PoolClient): Promise<void> {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      for (const statement of SCHEMA) await client.query(statement);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
    this.#schemaReady = true;
  }

  /** `body` in a transaction of its own; any failure of the server is StateUnavailable. */
  protected override async transaction<T>(operation: string, body: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#closed) throw new StateUnavailable(this.backend, operation, "closed");
    let client: PoolClient | undefined;
    try {
      client = await (await this.#connect()).connect();
      if (!listened.has(client)) {
        // A connection the server drops while it is checked out says so as an event: the
        // call in flight fails on its own, and the connection is closed at its release.
        client.on("error", () => {});
        listened.add(client);
      }
      if (!this.#schemaReady) await this.#createTables(client);
      const c = client;
      const tx: Tx = {
        forUpdate: " FOR UPDATE",
        bool: (value) => value,
        one: async (sql, params = []) => {
          const result = await c.query({ text: sql, values: params as unknown[], rowMode: "array" });
          return (result.rows[0] as unknown[] | undefined) ?? null;
        },
        run: async (sql, params = []) => {
          await c.query(sql, params as unknown[]);
        },
        now: async () => {
          const result = await c.query({ text: "SELECT extract(epoch FROM clock_timestamp())::float8", rowMode: "array" });
          return Number((result.rows[0] as unknown[])[0]);
        },
      };
      await c.query("BEGIN");
      let value: T;
      try {
        value = await body(tx);
        await c.query("COMMIT");
      } catch (error) {
        await c.query("ROLLBACK").catch(() => {});
        throw error;
      }
      c.release();
      client = undefined;
      return value;
    } catch (error) {
      client?.release(true); // a connection that failed is closed, never reused
      throw StateUnavailable.of(this.backend, operation, error);
    }
  }

  override async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool !== undefined) await (await pool).end().catch(() => {});
  }
}
