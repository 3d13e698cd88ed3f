/**
 * The spec's `approvals:` key, checked (Python's `harnessweaver/approvals/config.py`, the same
 * problems word for word): how long a record waits, whom to notify.
 *
 * `approvals: {expires_after: 3600, notify: {url: https://..., secret: ${APPROVALS_SECRET}}}`.
 * `url` and `secret` may hold `${NAME}` references to environment variables (as `state:` does),
 * so a secret lives in the environment, never in the spec. A problem names the key and the
 * variable, never a value: a URL may hold a token and the secret is a secret.
 */

import { isPlainObject } from "../json.js";
import { webUrl } from "./notify.js";
import { pyType } from "./record.js";

export const APPROVALS_KEYS = ["expires_after", "notify"] as const;
export const NOTIFY_KEYS = ["url", "secret"] as const;
/** Seconds a filed record waits for its decision unless the spec says otherwise: one day. */
export const DEFAULT_EXPIRES_AFTER = 86_400;

const REFERENCE = /\$\{([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A checked `approvals:`; `url` and `secret` expanded (null: no notifier). Never shows either. */
export class ApprovalsConfig {
  constructor(
    readonly expiresAfter: number = DEFAULT_EXPIRES_AFTER,
    readonly url: string | null = null,
    readonly secret: string | null = null,
  ) {
    Object.freeze(this);
  }

  toString(): string {
    return `ApprovalsConfig(expires_after=${this.expiresAfter}, notify=${this.url === null ? "no" : "yes"})`;
  }

  toJSON(): object {
    return { expires_after: this.expiresAfter, notify: this.url !== null };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/** An `approvals:` that cannot be used: `problems` are `[key, message]` pairs (key dotted under `approvals`), never a value. */
export class ApprovalsConfigError extends Error {
  override readonly name = "ApprovalsConfigError";
  readonly problems: readonly (readonly [string, string])[];

  constructor(problems: readonly (readonly [string, string])[]) {
    super(problems.map(([key, message]) => `approvals${key ? "." : ""}${key}: ${message}`).join("; "));
    this.problems = problems;
  }
}

function keyName(key: unknown): string {
  return typeof key === "string" && key.length <= 40 ? key : pyType(key);
}

type Mapping = ReadonlyMap<unknown, unknown> | Readonly<Record<string, unknown>>;

function isMapping(value: unknown): value is Mapping {
  return value instanceof Map || isPlainObject(value);
}

function entriesOf(value: Mapping): [unknown, unknown][] {
  return value instanceof Map ? [...value.entries()] : Object.entries(value);
}

function getOf(value: Mapping, key: string): unknown {
  return value instanceof Map ? value.get(key) : (value as Readonly<Record<string, unknown>>)[key];
}

function expand(key: string, value: unknown, environ: Readonly<Record<string, string | undefined>>, problems: [string, string][]): string | null {
  if (typeof value !== "string" || value.trim() === "") {
    problems.push([key, `${key} is text, got ${pyType(value)}`]);
    return null;
  }
  const missing: string[] = [];
  const expanded = value.replace(REFERENCE, (_, name: string) => {
    if (!NAME.test(name)) missing.push(`a reference \${...} must name a variable (${key})`);
    else if (!Object.hasOwn(environ, name) || environ[name] === undefined) missing.push(`the environment variable ${name} referenced by ${key} is not set`);
    else return environ[name];
    return "";
  });
  for (const message of missing) problems.push([key, message]);
  if (missing.length > 0) return null;
  if (expanded.trim() === "") {
    problems.push([key, `${key} is empty once its references are expanded`]);
    return null;
  }
  return expanded;
}

export interface ParseApprovalsOptions {
  /** The environment (default `process.env`). */
  readonly environ?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The checked form of an `approvals:` mapping (null/undefined: the defaults); an `ApprovalsConfigError` lists every problem. */
export function parseApprovals(raw: unknown, options: ParseApprovalsOptions = {}): ApprovalsConfig {
  if (raw === null || raw === undefined) return new ApprovalsConfig();
  if (!isMapping(raw)) {
    throw new ApprovalsConfigError([["", `approvals is a mapping such as {expires_after: 3600}, got ${pyType(raw)}`]]);
  }
  const environ = options.environ ?? process.env;
  const problems: [string, string][] = [];
  for (const [key] of entriesOf(raw)) {
    if (!(APPROVALS_KEYS as readonly unknown[]).includes(key)) problems.push([keyName(key), `unknown key: the keys are ${APPROVALS_KEYS.join(", ")}`]);
  }
  let expiresAfter = DEFAULT_EXPIRES_AFTER;
  const given = getOf(raw, "expires_after");
  if (given !== null && given !== undefined) {
    if (typeof given !== "number" || !Number.isFinite(given) || given <= 0) problems.push(["expires_after", "expires_after is a number of seconds > 0"]);
    else expiresAfter = given;
  }
  let url: string | null = null;
  let secret: string | null = null;
  const notify = getOf(raw, "notify");
  if (notify !== null && notify !== undefined && !isMapping(notify)) {
    problems.push(["notify", `notify is a mapping {url, secret}, got ${pyType(notify)}`]);
  } else if (notify !== null && notify !== undefined) {
    for (const [key] of entriesOf(notify)) {
      if (!(NOTIFY_KEYS as readonly unknown[]).includes(key)) problems.push([`notify.${keyName(key)}`, `unknown key: the keys are ${NOTIFY_KEYS.join(", ")}`]);
    }
    for (const key of NOTIFY_KEYS) {
      const value = getOf(notify, key);
      if (value === null || value === undefined) problems.push([`notify.${key}`, `notify needs ${key}`]);
    }
    const rawUrl = getOf(notify, "url");
    if (rawUrl !== null && rawUrl !== undefined) {
      url = expand("notify.url", rawUrl, environ, problems);
      if (url !== null && !webUrl(url)) {
        problems.push(["notify.url", "notify.url is an http:// or https:// URL"]);
        url = null;
      }
    }
    const rawSecret = getOf(notify, "secret");
    if (rawSecret !== null && rawSecret !== undefined) secret = expand("notify.secret", rawSecret, environ, problems);
  }
  if (problems.length > 0) throw new ApprovalsConfigError(problems);
  return new ApprovalsConfig(expiresAfter, url, secret);
}
