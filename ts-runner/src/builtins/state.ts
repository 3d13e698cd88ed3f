/**
 * What the stateful built-ins share (python/harnessweaver/builtins/_state.py): their `scope`
 * and `lifetime` settings, durations, exactly-once hold ids and the read → compute → swap loop
 * of a record.
 *
 * Every stateful built-in keeps its state on its `StateView` (a `StateSlot` the loader
 * attaches): counters for what is charged (`budget_guard`, `rate_limit`), records for what is
 * remembered (`loop_guard`, `tool_failure_guard`). The key of each is
 * `view.key(scope, envelope, name)`. Python and TypeScript write the same keys and the same
 * JSON, so a Node worker and a Python worker share one count. A store that cannot answer
 * throws `StateUnavailable`; each guard turns it into its fail mode with `unavailable`:
 * closed → `Block` (`state_unavailable`), open → thrown again, so the bus records the failure
 * and the chain goes on. Never a silent allow.
 */

import { randomUUID } from "node:crypto";
import type { Envelope } from "../envelope.js";
import type { Event, TaskEndEvent } from "../events.js";
import { contentIdentity } from "../identity.js";
import type { Block } from "../outcomes.js";
import { StateUnavailable, type StateRecord, type StateView } from "../state/index.js";
import { pythonRepr } from "./repr.js";
import { FINAL_EXIT_REASONS } from "./runs.js";
import { SettingsError } from "./settings.js";

/** How many times a record's read → compute → swap is tried before the store counts as unavailable. */
export const MAX_SWAPS = 16;
/** Seconds a reservation made at `model.before` is held when `model.after` never comes. */
export const RESERVE_TTL = 600;
export const DEFAULT_LIFETIME = "30d";

const UNITS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };
const TEXT = /^([0-9]+(?:\.[0-9]+)?|\.[0-9]+)(ms|s|m|h|d)$/;
const WHERE: Readonly<Record<string, string>> = {
  run: "in this run",
  session: "in this session",
  user: "for this user",
  task: "in this task",
  app: "in this app",
  org: "in this org",
};

/** Python's `repr` of a setting's value, as far as a message shows it. */
function repr(value: unknown): string {
  if (typeof value === "string") return pythonRepr(value);
  if (typeof value === "number") return String(value);
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return JSON.stringify(value);
}

/** A duration setting that is none (Python's `ValueError` of `duration`). */
export class DurationError extends Error {
  override readonly name = "ValueError";
}

/**
 * Seconds of a state duration: a positive finite number of seconds, or a text such as
 * `250ms`, `30s`, `1m`, `12h`, `30d`; a `DurationError` (Python's message) otherwise.
 */
export function duration(value: unknown): number {
  let seconds: number;
  if (typeof value === "string") {
    const match = TEXT.exec(value);
    if (match === null) {
      throw new DurationError(`${pythonRepr(value)} is not a duration: a number of seconds or a number with a unit ms, s, m, h or d (30s, 1m, 12h, 30d)`);
    }
    seconds = Number.parseFloat(match[1] as string) * (UNITS[match[2] as string] as number);
  } else if (typeof value === "number") {
    seconds = value;
  } else {
    throw new DurationError(`${repr(value)} is not a duration`);
  }
  if (!(Number.isFinite(seconds) && seconds > 0)) throw new DurationError(`${repr(value)} is not a positive duration`);
  return seconds;
}

/** `duration(value)`, a bad one being the setting's `SettingsError` (pydantic's "Value error, ..."). */
export function durationSetting(setting: string, value: unknown): number {
  try {
    return duration(value);
  } catch (error) {
    if (error instanceof DurationError) throw new SettingsError(setting, error.message);
    throw error;
  }
}

/** A duration setting as a reason shows it: as written, or a number of seconds as `90s` (`1.5s`). */
export function written(value: string | number): string {
  if (typeof value === "string") return value;
  return Number.isInteger(value) ? `${Math.trunc(value)}s` : `${String(value)}s`;
}

/** `in this run`, `for this user`…: a reason's words for the scope. */
export function where(scope: string): string {
  return WHERE[scope] as string;
}

/** The `scope` and `lifetime` settings every stateful built-in has. */
export function stateSettings(settings: Readonly<Record<string, unknown>>): { readonly scope: string; readonly lifetime: string | number } {
  const scope = (settings["scope"] ?? "run") as string;
  const lifetime = (settings["lifetime"] ?? DEFAULT_LIFETIME) as string | number;
  durationSetting("lifetime", lifetime);
  return { scope, lifetime };
}

/**
 * The hold id of a charge: `{runId}/{step}/{content identity}` (I27), so the same event
 * emitted again (a Retry, a redelivered job, a resumed step) is never charged twice; an event
 * without an identity (outside I-JSON), or any event when not `once`, gets a fresh id.
 */
export function chargeId(envelope: Envelope, event: Event, once = true): string {
  const identity = once ? contentIdentity(event) : null;
  const step = (event as { readonly step?: unknown }).step ?? 0;
  return `${envelope.runId}/${String(step)}/${identity ?? randomUUID().replaceAll("-", "")}`;
}

/** Whether the run is over for good, so its run-scope state is dropped (`runs.ts`). */
export function final(event: TaskEndEvent): boolean {
  return FINAL_EXIT_REASONS.has(event.exitReason);
}

/**
 * The fail mode of a stateful built-in whose store cannot answer: closed → its Block
 * (`state_unavailable`), open → the failure thrown again for the bus to record. Anything
 * else thrown is thrown again as it is.
 */
export function unavailable(view: StateView, error: unknown): Block {
  if (error instanceof StateUnavailable && view.failMode === "closed") return view.unavailable(error);
  throw error;
}

/**
 * Read record `key` (or take `first`, just read), compute `change(value) → [new value, or
 * null: no write; answer]`, swap it in; on a lost swap read again and start over, up to
 * `MAX_SWAPS` times.
 */
export async function update<T>(
  view: StateView,
  key: string,
  change: (value: unknown) => readonly [unknown, T],
  life: number | null,
  first: StateRecord | null = null,
): Promise<T> {
  let given = first;
  for (let i = 0; i < MAX_SWAPS; i++) {
    const record = given ?? (await view.read(key));
    given = null;
    const [value, answer] = change(record.value);
    if (value === null || (await view.swap(key, record.version, value as never, { life }))) return answer;
  }
  throw new StateUnavailable(view.backend, "swap", "lost every race");
}
