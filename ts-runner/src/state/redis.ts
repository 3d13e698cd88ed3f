/**
 * `RedisStore`: counters and records on a Redis server (python/harnessweaver/state/redis.py),
 * through `ioredis` (an optional peer dependency: installed only by those who use Redis).
 *
 * The layout is Python's, so a Node and a Python worker share one budget. For state key K
 * (wrapped as the hash tag `{K}`, so one key's parts live on one cluster slot):
 * `{K}:base` (a string float), `{K}:live` (hash hold → amount), `{K}:exp` (zset hold →
 * expires_at ms), `{K}:done` (zset hold → expires_at ms: committed marks), `{K}:held` (a string
 * float: the running sum of the live holds, so no call reads them all), and the record
 * `{K}:rec` (hash `v` version, `d` JSON). Every operation is one Lua script (`lua/*.lua`,
 * byte-identical copies of python/harnessweaver/state/lua/), loaded once and run by EVALSHA
 * (loaded again on NOSCRIPT, after a server restart); time is the server's (`TIME`).
 *
 * The URL never appears in an error, a log line or `toString()`.
 */

import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import type { JsonValue } from "../json.js";
import {
  checkCounterArgs,
  checkKey,
  checkLife,
  checkVersion,
  dumpJson,
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

const SCRIPT_NAMES = ["reserve", "commit", "release", "total", "read", "swap", "delete"] as const;
type ScriptName = (typeof SCRIPT_NAMES)[number];

interface Script {
  readonly text: string;
  readonly sha: string;
}

let scripts: ReadonlyMap<ScriptName, Script> | undefined;

/** The scripts that run on one counter: each is `lua/counter.lua` followed by its own text. */
const COUNTER_SCRIPTS: ReadonlySet<ScriptName> = new Set<ScriptName>(["reserve", "commit", "release", "total"]);

/** The Lua scripts, read once (from `lua/` beside this module: src/state/lua, dist/state/lua). */
export function luaScripts(): ReadonlyMap<ScriptName, Script> {
  if (scripts === undefined) {
    const found = new Map<ScriptName, Script>();
    const prelude = readFileSync(new URL("./lua/counter.lua", import.meta.url), "utf8");
    for (const name of SCRIPT_NAMES) {
      const own = readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8");
      // One prelude (time, purge, total, touch) before each counter script, as Python's loader.
      const text = COUNTER_SCRIPTS.has(name) ? prelude + own : own;
      found.set(name, { text, sha: createHash("sha1").update(text).digest("hex") });
    }
    scripts = found;
  }
  return scripts;
}

/** The Redis keys of counter K, in the scripts' KEYS order. */
export function counterKeys(key: string): [string, string, string, string, string] {
  const tag = `{${key}}`;
  return [`${tag}:base`, `${tag}:live`, `${tag}:exp`, `${tag}:done`, `${tag}:held`];
}

/** The Redis key of record K. */
export function recordKey(key: string): string {
  return `{${key}}:rec`;
}

/** A number as the scripts read it (`tonumber`): JavaScript's shortest round-trip text, as Python's `repr`. */
function arg(value: number | null | undefined): string {
  return value === null || value === undefined ? "" : String(value);
}

/** What this module uses of an `ioredis` client (declared here: the package is optional). */
interface RedisClient {
  evalsha(sha: string, numkeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: string[]): Promise<unknown>;
  on(event: "error", listener: (error: unknown) => void): unknown;
  disconnect(): void;
}
type RedisClass = new (url: string, options: Readonly<Record<string, unknown>>) => RedisClient;
type Loaded = { default: unknown; Redis?: unknown };

async function redisClass(): Promise<RedisClass> {
  let loaded: Loaded;
  try {
    const name = "ioredis"; // not a literal: an optional package, and its types are not needed to build this one
    loaded = (await import(name)) as Loaded;
  } catch {
    throw new Error("the redis state backend needs the package ioredis: npm install ioredis");
  }
  return (loaded.Redis ?? loaded.default) as RedisClass;
}

export interface RedisStoreOptions {
  /** How long a connection attempt may take, in milliseconds (default 1000). */
  readonly connectTimeout?: number;
}

export class RedisStore implements Store {
  readonly backend = "redis" as const;
  readonly #url: string;
  readonly #options: RedisStoreOptions;
  #client: Promise<RedisClient> | undefined;
  #closed = false;

  constructor(url: string, options: RedisStoreOptions = {}) {
    if (typeof url !== "string" || !/^rediss?:\/\//.test(url)) throw new RangeError("a redis state URL starts with redis:// or rediss://");
    this.#url = url;
    this.#options = options;
  }

  toString(): string {
    return "RedisStore(redis)";
  }

  /** Never the URL: it may hold a password. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  toJSON(): object {
    return { backend: this.backend };
  }

  #connect(): Promise<RedisClient> {
    this.#client ??= redisClass().then((Redis) => {
      const client = new Redis(this.#url, {
        lazyConnect: false,
        connectTimeout: this.#options.connectTimeout ?? 1000,
        maxRetriesPerRequest: 1, // a command fails fast while the server is away; the client reconnects on its own
        enableOfflineQueue: true,
        retryStrategy: (times: number) => Math.min(50 * times, 1000),
      });
      client.on("error", () => {}); // each failing call says so (StateUnavailable); no log line with the address
      return client;
    });
    return this.#client;
  }

  async #run(operation: string, name: ScriptName, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    if (this.#closed) throw new StateUnavailable(this.backend, operation, "closed");
    try {
      const client = await this.#connect();
      const script = luaScripts().get(name) as Script;
      try {
        return await client.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
        return await client.eval(script.text, keys.length, ...keys, ...args); // loads it again
      }
    } catch (error) {
      throw StateUnavailable.of(this.backend, operation, error);
    }
  }

  async reserve(key: string, hold: string, amount: number, options: ReserveOptions): Promise<Reservation> {
    checkCounterArgs(key, hold, amount, { limit: options.limit, ttl: options.ttl, ttlRequired: true, life: options.life });
    const got = (await this.#run("reserve", "reserve", counterKeys(key), [
      hold,
      arg(amount),
      arg(options.limit),
      arg(options.ttl),
      arg(options.life),
    ])) as [number, string, number];
    return reservation(got[0] === 1, Number.parseFloat(got[1]), got[2] === 1);
  }

  async commit(key: string, hold: string, amount: number, options: CommitOptions = {}): Promise<number> {
    checkCounterArgs(key, hold, amount, { ttl: options.ttl, life: options.life });
    const got = await this.#run("commit", "commit", counterKeys(key), [hold, arg(amount), arg(options.ttl), arg(options.life)]);
    return Number.parseFloat(got as string);
  }

  async release(key: string, hold: string): Promise<number> {
    checkKey(key);
    checkKey(hold, "hold id");
    return Number.parseFloat((await this.#run("release", "release", counterKeys(key), [hold])) as string);
  }

  async total(key: string): Promise<number> {
    checkKey(key);
    return Number.parseFloat((await this.#run("total", "total", counterKeys(key), [])) as string);
  }

  async read(key: string): Promise<StateRecord> {
    checkKey(key);
    const [version, text] = (await this.#run("read", "read", [recordKey(key)], [])) as [number, string];
    if (version === 0) return stateRecord(null, 0);
    return stateRecord(JSON.parse(text) as JsonValue, version);
  }

  async swap(key: string, version: number, value: JsonValue, options: SwapOptions = {}): Promise<boolean> {
    checkKey(key);
    checkLife(options.life);
    checkVersion(version);
    const text = dumpJson(value);
    return (await this.#run("swap", "swap", [recordKey(key)], [String(version), text, arg(options.life)])) === 1;
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) checkKey(key);
    if (keys.length === 0) return;
    const all = keys.flatMap((key) => [...counterKeys(key), recordKey(key)]);
    // One call per state key: a key's parts share one hash slot, different keys may not.
    for (let i = 0; i < all.length; i += 5) await this.#run("delete", "delete", all.slice(i, i + 5), []);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    try {
      (await client).disconnect();
    } catch {
      // never connected: nothing to close
    }
  }
}
