/**
 * JSON values: the type of free-form event fields (`input`, `output`, `arguments`…), and the
 * helpers that keep them immutable inside events and comparable the way the corpus compares.
 */

export type JsonPrimitive = null | boolean | number | string;
export type JsonValue = JsonPrimitive | readonly JsonValue[] | JsonObject;
export type JsonObject = { readonly [key: string]: JsonValue };

/** A JSON value that may be changed freely: what `toJSON()` hands out. */
export type MutableJson = JsonPrimitive | MutableJson[] | { [key: string]: MutableJson };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks that `value` is a JSON value and returns a deep, frozen copy of it, so that an event
 * never shares mutable state with its caller. Throws a TypeError naming where the fault is.
 */
export function frozenJson(value: unknown, where: string): JsonValue {
  return copyJson(value, where, new Set(), true) as JsonValue;
}

/** A deep, mutable copy of a JSON value (pydantic's `model_dump` also returns fresh objects). */
export function thawJson(value: JsonValue): MutableJson {
  return copyJson(value, "value", new Set(), false) as MutableJson;
}

function copyJson(value: unknown, where: string, seen: Set<object>, freeze: boolean): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${where}: ${value} is not a JSON number`);
    return value;
  }
  if (typeof value !== "object" || !(Array.isArray(value) || isPlainObject(value))) {
    throw new TypeError(`${where}: ${describe(value)} is not a JSON value`);
  }
  if (seen.has(value)) throw new TypeError(`${where}: a JSON value cannot contain itself`);
  seen.add(value);
  let copy: unknown[] | Record<string, unknown>;
  if (Array.isArray(value)) {
    copy = value.map((item, i) => copyJson(item, `${where}[${i}]`, seen, freeze));
  } else {
    copy = {};
    for (const [key, item] of Object.entries(value)) {
      copy[key] = copyJson(item, `${where}.${key}`, seen, freeze);
    }
  }
  seen.delete(value);
  return freeze ? Object.freeze(copy) : copy;
}

/** JSON equality: key order never matters, `1` equals `1.0`, but `true` is not `1`. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => jsonEqual(item, b[i]))
    );
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]))
    );
  }
  return false;
}

/** A short description of a value's type for messages: "a string", "null", "a Date"… */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === "string" && name !== "Object" ? `a ${name}` : "an object";
  }
  return typeof value === "number" || typeof value === "string" || typeof value === "boolean"
    ? `the ${typeof value} ${JSON.stringify(value)}`
    : `a ${typeof value}`;
}
