/**
 * The mapping of I38 (Python: `policies/request.py`): an event and its envelope's attributes
 * → a Cedar request, shared by `harnessweaver.cedar` and `harnessweaver.authzen`.
 *
 * `cedarRequest(hook, event, attributes, namespace)` gives plain data: `principal`, `action`
 * and `resource` in Cedar's `{type, id}` form (any string is an id; no `Type::"id"` text is
 * ever built), `context` a JSON-able record.
 *
 * JSON → Cedar: a string stays a String, a boolean a Bool, a whole number within ±(2^53−1) a
 * Long (`12`, `12.0` and `1e3` alike), null is left out of its record or set, an array is a
 * Set, an object a Record. Anything else (a fraction, a number past 2^53−1, NaN, a record key
 * Cedar's JSON reads as an escape, nesting deeper than `MAX_DEPTH`, a string with a lone
 * surrogate) means the request cannot be built: `CedarRequestError` naming the path, never
 * the value.
 */

import type { Event, ModelRequestEvent, ToolCallEvent, ToolResultEvent } from "../events.js";
import { isPlainObject } from "../json.js";
import { CedarRequestError } from "./errors.js";

/** The hook points a policy middleware decides on. */
export const POLICY_HOOKS = ["tool.before", "tool.after", "model.before"] as const;
/** One of `POLICY_HOOKS`. */
export type PolicyHook = (typeof POLICY_HOOKS)[number];

/**
 * The largest magnitude a number may have to be a Long: every implementation reads JSON
 * numbers as doubles, so past it two different numbers could be one.
 */
export const MAX_LONG = 2 ** 53 - 1;
/**
 * How deep a converted value may nest: the converted object itself (`arguments`,
 * `attributes`) is level 1; a set or record at level 33 cannot be built.
 */
export const MAX_DEPTH = 32;
/** Record keys Cedar's JSON reads as an entity, extension or expression escape. */
const ESCAPES: ReadonlySet<string> = new Set(["__entity", "__extn", "__expr"]);

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LONG_KEY = 64;
// Any surrogate: JavaScript strings pair them, so an unpaired one is what this finds below.
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A Cedar value in Cedar's JSON form (the mapping never makes an escape). */
export type CedarValue = string | number | boolean | readonly CedarValue[] | { readonly [key: string]: CedarValue };

/** An entity in Cedar's `{type, id}` form. */
export interface EntityUid {
  readonly type: string;
  readonly id: string;
}

/** A Cedar request: `{principal, action, resource, context}`. */
export interface CedarRequest {
  readonly principal: EntityUid;
  readonly action: EntityUid;
  readonly resource: EntityUid;
  readonly context: { readonly [key: string]: CedarValue };
}

/** JSON text of a string as Python's `json.dumps` writes it (ASCII only), for messages both implementations print. */
export function asciiJson(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `path` and one more record key: `.key` for a plain name of at most 64 code points, else `["..."]`, a long key cut to its first 64. */
function keyPath(path: string, key: string): string {
  const points = Array.from(key);
  if (points.length <= LONG_KEY && NAME.test(key)) return `${path}.${key}`;
  const shown = points.length <= LONG_KEY ? key : `${points.slice(0, LONG_KEY).join("")}…`;
  return `${path}[${asciiJson(shown)}]`;
}

function string(value: string, path: string): string {
  // Cedar's strings are Unicode scalar values: a lone surrogate has no form there.
  if (LONE.test(value)) throw new CedarRequestError(path, "a string with a lone surrogate");
  return value;
}

function number(value: number, path: string): number {
  if (Number.isInteger(value) && Math.abs(value) <= MAX_LONG) return value === 0 ? 0 : value; // -0 is the Long 0
  throw new CedarRequestError(path, "a number that is not a whole number within ±(2^53-1)");
}

/**
 * `value` (JSON data) as Cedar's JSON form of a value; null stays null (its record or set
 * leaves it out). `depth` is the level `value` is at (`MAX_DEPTH`).
 */
export function toCedarValue(value: unknown, path: string, depth = 1): CedarValue | null {
  if (value === null || value === undefined || typeof value === "boolean") return value ?? null;
  if (typeof value === "string") return string(value, path);
  if (typeof value === "number") return number(value, path);
  if (Array.isArray(value)) {
    if (depth > MAX_DEPTH) throw new CedarRequestError(path, `a set nested deeper than ${MAX_DEPTH}`);
    const out: CedarValue[] = [];
    value.forEach((item: unknown, i) => {
      const converted = toCedarValue(item, `${path}[${i}]`, depth + 1);
      if (converted !== null) out.push(converted);
    });
    return out;
  }
  if (isPlainObject(value) || (typeof value === "object" && Object.getPrototypeOf(value) === null)) {
    if (depth > MAX_DEPTH) throw new CedarRequestError(path, `a record nested deeper than ${MAX_DEPTH}`);
    const record: Record<string, CedarValue> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const where = keyPath(path, key);
      string(key, where);
      if (ESCAPES.has(key)) throw new CedarRequestError(where, `a record key ${key} (a Cedar JSON escape)`);
      const converted = toCedarValue(item, where, depth + 1);
      if (converted !== null) Object.defineProperty(record, key, { value: converted, enumerable: true, writable: true, configurable: true });
    }
    return record;
  }
  throw new CedarRequestError(path, `a value of type ${typeof value}`);
}

function typed(name: string, namespace: string | null): string {
  return namespace === null ? name : `${namespace}::${name}`;
}

/**
 * `["User", id]` for a string attribute `user`, else `["Agent", id]` for a string `agent`,
 * else `["Agent", "anonymous"]`: the kind and the id, before any namespace.
 */
export function principalOf(attributes: Readonly<Record<string, unknown>>): [kind: string, id: string] {
  const user = Object.hasOwn(attributes, "user") ? attributes["user"] : undefined;
  if (typeof user === "string") return ["User", user];
  const agent = Object.hasOwn(attributes, "agent") ? attributes["agent"] : undefined;
  if (typeof agent === "string") return ["Agent", agent];
  return ["Agent", "anonymous"];
}

/** `["Tool", name]` for a tool event (`call.name`, else `tool.name`), `["Model", request.model]` for a model request. */
export function resourceOf(hook: PolicyHook, event: Event): [kind: string, id: string] {
  if (hook === "model.before") return ["Model", (event as ModelRequestEvent).request.model];
  const call = event as ToolCallEvent;
  return ["Tool", call.call.name || call.tool.name];
}

function contextOf(hook: PolicyHook, event: Event, attributes: Readonly<Record<string, unknown>>, name: string): Record<string, CedarValue> {
  const context: Record<string, CedarValue> = {
    hook,
    step: number((event as ToolCallEvent).step, "context.step"),
    attributes: toCedarValue(attributes, "context.attributes") ?? {},
  };
  if (hook === "model.before") {
    const request = (event as ModelRequestEvent).request;
    context["model"] = name;
    context["tools"] = request.tools.map((spec, i) => string(spec.name, `context.tools[${i}]`));
    context["messages"] = request.messages.length;
  } else {
    context["tool"] = name;
    context["arguments"] = toCedarValue((event as ToolCallEvent).call.arguments, "context.arguments") ?? {};
    if (hook === "tool.after") context["is_error"] = (event as ToolResultEvent).result.isError;
  }
  return context;
}

/**
 * The Cedar request of `event` at `hook` with the envelope's `attributes` (I38), types under
 * `namespace` when it is not null; `CedarRequestError` when it cannot be built.
 */
export function cedarRequest(
  hook: PolicyHook,
  event: Event,
  attributes: Readonly<Record<string, unknown>> | null,
  namespace: string | null,
): CedarRequest {
  if (!(POLICY_HOOKS as readonly string[]).includes(hook)) {
    throw new RangeError(`a policy middleware decides on ${POLICY_HOOKS.join(", ")}, not ${JSON.stringify(hook)}`);
  }
  const given = attributes ?? {};
  const [kind, who] = principalOf(given);
  const [what, name] = resourceOf(hook, event);
  return {
    principal: { type: typed(kind, namespace), id: string(who, "principal") },
    action: { type: typed("Action", namespace), id: hook },
    resource: { type: typed(what, namespace), id: string(name, "resource") },
    context: contextOf(hook, event, given, name),
  };
}
