/**
 * Which store a harness uses: the spec's `state:` key, read into a `StateConfig`, and
 * `openStore` (python/harnessweaver/state/config.py).
 *
 * `state: {backend: redis, url: "${REDIS_URL}", timeout: 250ms}`. `url` and `path` may hold
 * `${NAME}` references to environment variables, so a credential lives in the environment,
 * never in the spec. Whatever goes wrong names the key and the variable, never a value: a URL
 * may carry a password, and a problem's text reaches logs and terminals.
 */

import { isAbsolute, join } from "node:path";
import { parseDuration, type Duration } from "../duration.js";
import { HarnessweaverError } from "../errors.js";
import { MemoryStore } from "./memory.js";
import { BACKENDS, type Backend, type Store } from "./store.js";
import { DEFAULT_TIMEOUT } from "./view.js";

/** The keys of `state:`. */
export const CONFIG_KEYS = ["backend", "url", "path", "timeout"] as const;

const REFERENCE = /\$\{([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The location key each backend needs (memory none). */
const NEEDS: Readonly<Record<Backend, "url" | "path" | null>> = { memory: null, sqlite: "path", redis: "url", postgres: "url" };

/** A checked `state:`: the backend, where it is (references expanded), each call's timeout in seconds. */
export class StateConfig {
  constructor(
    readonly backend: Backend = "memory",
    readonly url: string | null = null,
    readonly path: string | null = null,
    readonly timeout: number = DEFAULT_TIMEOUT,
  ) {
    Object.freeze(this);
  }

  /** The backend and timeout only: never the URL or path. */
  toString(): string {
    return `StateConfig(backend=${this.backend}, timeout=${this.timeout})`;
  }

  toJSON(): object {
    return { backend: this.backend, timeout: this.timeout };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/** A `state:` that cannot be used: `problems` are `[key, message]` pairs, naming the key (and a variable), never a value. */
export class StateConfigError extends Error {
  override readonly name = "StateConfigError";
  readonly problems: readonly (readonly [string, string])[];

  constructor(problems: readonly (readonly [string, string])[]) {
    super(problems.map(([key, message]) => `state.${key}: ${message}`).join("; "));
    this.problems = problems;
  }
}

function typeName(value: unknown): string {
  // Python's type names, as the Python problems say them.
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "string") return "str";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "dict";
  return typeof value;
}

function expand(key: string, value: unknown, environ: Readonly<Record<string, string | undefined>>, problems: [string, string][]): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string" || value.trim() === "") {
    problems.push([key, `${key} is text, got ${typeName(value)}`]);
    return null;
  }
  const missing: string[] = [];
  const expanded = value.replace(REFERENCE, (_, name: string) => {
    if (!NAME.test(name)) {
      missing.push(`a reference \${...} must name a variable (${key})`);
      return "";
    }
    const found = Object.prototype.hasOwnProperty.call(environ, name) ? environ[name] : undefined;
    if (found === undefined) {
      missing.push(`the environment variable ${name} referenced by ${key} is not set`);
      return "";
    }
    return found;
  });
  for (const message of missing) problems.push([key, message]);
  if (missing.length > 0) return null;
  if (expanded.trim() === "") {
    problems.push([key, `${key} is empty once its references are expanded`]);
    return null;
  }
  return expanded;
}

function isMapping(value: unknown): value is Readonly<Record<string, unknown>> | ReadonlyMap<unknown, unknown> {
  return value instanceof Map || (typeof value === "object" && value !== null && !Array.isArray(value));
}

export interface ParseOptions {
  /** The folder a relative `path` is taken from (the spec's). */
  readonly base?: string | null | undefined;
  /** The environment (default `process.env`). */
  readonly environ?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * The checked form of a `state:` mapping (null/undefined: the default, memory). Throws a
 * `StateConfigError` listing every problem.
 */
export function parseConfig(raw: unknown, options: ParseOptions = {}): StateConfig {
  if (raw === null || raw === undefined) return new StateConfig();
  if (!isMapping(raw)) {
    throw new StateConfigError([["", `state is a mapping such as {backend: sqlite, path: state.db}, got ${typeName(raw)}`]]);
  }
  const entries: [unknown, unknown][] = raw instanceof Map ? [...raw.entries()] : Object.entries(raw);
  const get = (key: string): unknown => entries.find(([k]) => k === key)?.[1];
  const environ = options.environ ?? process.env;
  const problems: [string, string][] = [];
  for (const [key] of entries) {
    if (!(CONFIG_KEYS as readonly unknown[]).includes(key)) {
      const name = typeof key === "string" && key.length <= 40 ? key : typeName(key);
      problems.push([name, `unknown key: the keys are ${CONFIG_KEYS.join(", ")}`]);
    }
  }
  const given = get("backend") ?? "memory";
  let backend: Backend | null = null;
  if ((BACKENDS as readonly unknown[]).includes(given)) backend = given as Backend;
  else problems.push(["backend", `unknown backend: the backends are ${BACKENDS.join(", ")}`]);
  const url = expand("url", get("url"), environ, problems);
  let path = expand("path", get("path"), environ, problems);
  let timeout = DEFAULT_TIMEOUT;
  const rawTimeout = get("timeout");
  if (rawTimeout !== null && rawTimeout !== undefined) {
    try {
      timeout = parseDuration(rawTimeout as Duration);
    } catch (error) {
      if (!(error instanceof HarnessweaverError)) throw error;
      problems.push(["timeout", "timeout is a duration such as 250ms or 1s"]);
    }
  }
  if (backend !== null) {
    const needs = NEEDS[backend];
    for (const key of ["url", "path"] as const) {
      const present = get(key) !== null && get(key) !== undefined;
      if (present && key !== needs) problems.push([key, `backend ${backend} takes no ${key}`]);
      else if (!present && key === needs) problems.push([key, `backend ${backend} needs ${key}`]);
    }
  }
  if (problems.length > 0) throw new StateConfigError(problems);
  if (path !== null && options.base !== null && options.base !== undefined && !isAbsolute(path)) path = join(options.base, path);
  return new StateConfig(backend as Backend, url, path, timeout);
}

/**
 * A new store for `config` (memory when none). Opening connects to nothing: the first call
 * does (a store down at load time is a failure of that call, not of loading). Redis and
 * PostgreSQL need their optional packages (`ioredis`, `pg`); SQLite needs Node's `node:sqlite`
 * (Node 22.5 and later).
 */
export async function openStore(config: StateConfig | null = null): Promise<Store> {
  const chosen = config ?? new StateConfig();
  switch (chosen.backend) {
    case "memory":
      return new MemoryStore();
    case "sqlite": {
      const { SqliteStore } = await import("./sqlite.js");
      return SqliteStore.open(chosen.path as string);
    }
    case "redis": {
      const { RedisStore } = await import("./redis.js");
      return new RedisStore(chosen.url as string);
    }
    case "postgres": {
      const { PostgresStore } = await import("./postgres.js");
      return new PostgresStore(chosen.url as string);
    }
  }
}
