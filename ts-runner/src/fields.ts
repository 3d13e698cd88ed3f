/**
 * Field kinds of the catalogue's types (`string`, `string?`, `integer`, `number`, `boolean`,
 * `json`, `object`, `enum`, a model, a list of models), for `model()` schemas. Every check
 * runs at run time and names where the bad value is.
 */

import { describe, frozenJson, thawJson, type JsonObject, type JsonValue, type MutableJson } from "./json.js";
import { isModelOf, type Field } from "./model.js";

type Check<T> = (value: unknown, where: string) => T;

function bad(where: string, wanted: string, value: unknown): TypeError {
  return new TypeError(`${where} must be ${wanted}, got ${describe(value)}`);
}

/** A field whose JSON form is its value (strings, numbers, booleans, JSON). */
function plain<T extends JsonValue>(key: string, type: string, check: Check<T>, fallback: T): Field<T, T, false> {
  return {
    json: key,
    type,
    required: false,
    fallback: () => fallback,
    fromInit: check,
    fromJSON: check,
    toJSON: (value) => thawJson(value),
  };
}

export function text(key: string, fallback = ""): Field<string, string, false> {
  return plain(key, "string", (v, where) => {
    if (typeof v !== "string") throw bad(where, "a string", v);
    return v;
  }, fallback);
}

export function requiredText(key: string): Field<string, string, true> {
  const field = text(key);
  return { ...field, required: true };
}

export function optionalText(key: string): Field<string | null, string | null, false> {
  return plain<string | null>(key, "string?", (v, where) => {
    if (v !== null && typeof v !== "string") throw bad(where, "a string or null", v);
    return v;
  }, null);
}

export function integer(key: string, fallback = 0): Field<number, number, false> {
  return plain(key, "integer", (v, where) => {
    if (typeof v !== "number" || !Number.isInteger(v)) throw bad(where, "a whole number", v);
    return v;
  }, fallback);
}

export function number(key: string, fallback = 0): Field<number, number, false> {
  return plain(key, "number", (v, where) => {
    if (typeof v !== "number" || !Number.isFinite(v)) throw bad(where, "a finite number", v);
    return v;
  }, fallback);
}

export function flag(key: string, fallback = false): Field<boolean, boolean, false> {
  return plain(key, "boolean", (v, where) => {
    if (typeof v !== "boolean") throw bad(where, "true or false", v);
    return v;
  }, fallback);
}

/** Any JSON value (default null), kept as a frozen copy. */
export function json(key: string): Field<JsonValue, JsonValue, false> {
  return plain(key, "json", frozenJson, null);
}

/** A JSON object (default `{}`), kept as a frozen copy. */
export function object(key: string): Field<JsonObject, JsonObject, false> {
  const empty: JsonObject = Object.freeze({});
  return plain<JsonObject>(key, "object", (v, where) => {
    const copy = frozenJson(v, where);
    if (typeof copy !== "object" || copy === null || Array.isArray(copy)) throw bad(where, "an object", v);
    return copy as JsonObject;
  }, empty);
}

/** One of a few strings; required (the catalogue's only enum, `Message.role`, has no default). */
export function oneOf<const V extends string>(key: string, values: readonly V[]): Field<V, V, true> {
  const check: Check<V> = (v, where) => {
    if (!(values as readonly unknown[]).includes(v)) throw bad(where, `one of ${values.join(", ")}`, v);
    return v as V;
  };
  const missing = (): V => {
    throw new TypeError(`${key} is required`);
  };
  return { json: key, type: "enum", required: true, fallback: missing, fromInit: check, fromJSON: check, toJSON: (value) => value };
}

/** A model class as fields need it: `T` its instances, `I` what its constructor takes. */
export interface ModelType<T extends { toJSON(): MutableJson }, I> {
  new (init: I): T;
  readonly typeName: string;
  fromJSON<U>(this: new (init: never) => U, data: unknown): U;
}

/** A nested model: constructors take an instance or its init object. */
function nested<T extends { toJSON(): MutableJson }, I>(key: string, Cls: ModelType<T, I>, fallback: (() => T) | null) {
  const fromInit = (v: unknown, where: string): T => {
    if (isModelOf(v, Cls)) return v; // a look-alike is copied field by field, or refused
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad(where, `a ${Cls.typeName}`, v);
    return new Cls(v as I);
  };
  const missing = (): T => {
    throw new TypeError(`${key} is required`);
  };
  return {
    json: key,
    type: Cls.typeName,
    fallback: fallback ?? missing,
    fromInit,
    fromJSON: (v: unknown): T => Cls.fromJSON(v),
    toJSON: (value: T): MutableJson => value.toJSON(),
  };
}

export function required<T extends { toJSON(): MutableJson }, I>(key: string, Cls: ModelType<T, I>): Field<T, T | I, true> {
  return { ...nested(key, Cls, null), required: true };
}

export function withDefault<T extends { toJSON(): MutableJson }, I>(key: string, Cls: ModelType<T, I>): Field<T, T | I, false> {
  let shared: T | undefined; // instances are immutable, so one default serves all
  return { ...nested(key, Cls, () => (shared ??= new Cls({} as I))), required: false };
}

/** A list of models (default empty), kept as a frozen array. */
export function list<T extends { toJSON(): MutableJson }, I>(key: string, Cls: ModelType<T, I>): Field<readonly T[], readonly (T | I)[], false> {
  const item = nested(key, Cls, null);
  const each = (parse: (v: unknown, where: string) => T) => (v: unknown, where: string): readonly T[] => {
    if (!Array.isArray(v)) throw bad(where, `a list of ${Cls.typeName}`, v);
    return Object.freeze(v.map((x, i) => parse(x, `${where}[${i}]`)));
  };
  const empty: readonly T[] = Object.freeze([]);
  return {
    json: key,
    type: "list",
    required: false,
    fallback: () => empty,
    fromInit: each(item.fromInit),
    fromJSON: each(item.fromJSON),
    toJSON: (value) => value.map((x) => x.toJSON()),
  };
}
