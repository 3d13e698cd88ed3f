/**
 * `SqliteStore`: counters and records in one SQLite file, shared by the processes of one
 * machine (python/harnessweaver/state/sqlite.py; the same tables, so a Python and a Node
 * process share them). WAL journal, `BEGIN IMMEDIATE` per operation (the write lock is taken
 * first, so each operation is atomic across processes), a busy timeout. Time is the process
 * clock (seconds since the epoch).
 *
 * It runs on Node's own `node:sqlite` (Node 22.5 and later): on an older Node, `SqliteStore.open`
 * says so. `node:sqlite` is synchronous: an operation holds the event loop for its few
 * statements (and, while another process holds the write lock, up to the busy timeout).
 */

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SqlStore, type Tx } from "./sql.js";
import { StateUnavailable } from "./store.js";

/** The tables (Python's: `done` is an INTEGER 0/1 in SQLite). */
export const SQLITE_SCHEMA: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS hw_state_counter (key TEXT PRIMARY KEY, base DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION)",
  "CREATE TABLE IF NOT EXISTS hw_state_hold (key TEXT NOT NULL, hold TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL, " +
    "expires_at DOUBLE PRECISION NOT NULL, done INTEGER NOT NULL, PRIMARY KEY (key, hold))",
  "CREATE TABLE IF NOT EXISTS hw_state_record (key TEXT PRIMARY KEY, version BIGINT NOT NULL, value TEXT NOT NULL, expires_at DOUBLE PRECISION)",
  "CREATE INDEX IF NOT EXISTS hw_state_hold_live ON hw_state_hold (key, expires_at) WHERE NOT done",
  "CREATE INDEX IF NOT EXISTS hw_state_hold_expiry ON hw_state_hold (key, expires_at)",
];

/** What this module uses of `node:sqlite` (Node >= 22.5), declared here: Node 20's types have none. */
interface Statement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): Record<string, unknown> | undefined;
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
type DatabaseClass = new (path: string) => Database;

/** Why SQLite is not available on this Node, or null when it is. */
export async function sqliteDatabase(): Promise<DatabaseClass> {
  try {
    const name = "node:sqlite"; // not a literal: Node 20 (and its types) have no such module
    const module = (await import(name)) as { DatabaseSync?: DatabaseClass };
    if (module.DatabaseSync !== undefined) return module.DatabaseSync;
  } catch {
    // fall through
  }
  throw new Error(
    `the sqlite state backend needs node:sqlite, which Node ${process.versions.node} does not have: ` +
      "use Node 22.5 or later (or the redis or postgres backend)",
  );
}

/** `$1, $2…` as SQLite's numbered parameters `?1, ?2…`. */
const numbered = (sql: string): string => sql.replace(/\$(\d+)/g, "?$1");

export class SqliteStore extends SqlStore {
  readonly backend = "sqlite" as const;
  readonly path: string;
  readonly #db: Database;
  readonly #statements = new Map<string, Statement>();
  readonly #clock: () => number;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(path: string, db: Database, clock: () => number) {
    super();
    this.path = path;
    this.#db = db;
    this.#clock = clock;
  }

  /** Opens (creating it and its tables if missing) the SQLite file at `path`. */
  static async open(path: string, options: { readonly busyTimeout?: number; readonly clock?: () => number } = {}): Promise<SqliteStore> {
    const Database = await sqliteDatabase();
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeout ?? 5000)}`);
    if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    for (const statement of SQLITE_SCHEMA) db.exec(statement);
    return new SqliteStore(path, db, options.clock ?? (() => Date.now() / 1000));
  }

  override toString(): string {
    return "SqliteStore(sqlite)";
  }

  #prepared(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(numbered(sql));
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** One operation at a time on the one connection (its body awaits between statements). */
  protected override transaction<T>(operation: string, body: (tx: Tx) => Promise<T>): Promise<T> {
    const run = this.#queue.then(() => this.#run(operation, body));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #run<T>(operation: string, body: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#closed) throw new StateUnavailable(this.backend, operation, "closed");
    const now = this.#clock();
    const tx: Tx = {
      forUpdate: "",
      bool: (value) => (value ? 1 : 0),
      one: async (sql, params = []) => {
        const row = this.#prepared(sql).get(...params);
        return row === undefined ? null : Object.values(row);
      },
      run: async (sql, params = []) => {
        this.#prepared(sql).run(...params);
      },
      now: async () => now,
    };
    try {
      this.#db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      throw StateUnavailable.of(this.backend, operation, error);
    }
    try {
      // The body awaits only these synchronous calls: no other operation runs in between.
      const value = await body(tx);
      this.#db.exec("COMMIT");
      return value;
    } catch (error) {
      try {
        this.#db.exec("ROLLBACK");
      } catch {
        // no transaction left to roll back
      }
      throw StateUnavailable.of(this.backend, operation, error);
    }
  }

  override async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }
}
