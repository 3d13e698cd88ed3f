/**
 * Immutable data models with a fixed JSON form: the machinery behind the event classes.
 *
 * A model class is declared by a schema: for each camelCase property, the snake_case key of
 * its JSON form, how to check a value, its default. Instances are frozen; `with(update)`
 * makes a modified copy (pydantic's `model_copy(update=...)`); `toJSON()` gives the JSON
 * form with every field, defaults included (`model_dump(mode="json")`); `fromJSON()` parses
 * that form strictly (unknown keys and wrong types are errors, pydantic's `extra="forbid"`).
 */

import { describe, isPlainObject, type MutableJson } from "./json.js";

/** One field of a schema. `I` is what constructors accept; `R` whether the field is required. */
export interface Field<T, I = T, R extends boolean = boolean> {
  readonly json: string;
  readonly required: R;
  /** The field's type as the catalogue writes it (`string`, `integer`, `list`…). */
  readonly type: string;
  /** The default value, for fields that are not required. */
  fallback(): T;
  fromInit(value: unknown, where: string): T;
  fromJSON(value: unknown, where: string): T;
  toJSON(value: T): MutableJson;
  /** Type-level only: what a constructor accepts for this field. */
  readonly __init?: I;
}

export type Schema = { readonly [property: string]: Field<unknown, unknown> };

type ValueOf<F> = F extends Field<infer T, unknown> ? T : never;
type InitOf<F> = F extends Field<unknown, infer I> ? I : never;
type RequiredKeys<S> = { [K in keyof S]: S[K] extends Field<unknown, unknown, true> ? K : never }[keyof S];
type OptionalKeys<S> = Exclude<keyof S, RequiredKeys<S>>;

/** The properties of a model instance. */
export type Props<S extends Schema> = { readonly [K in keyof S]: ValueOf<S[K]> };

/** What the constructor takes: required fields, and optional ones that fall back to defaults. */
export type Init<S extends Schema> = { readonly [K in RequiredKeys<S>]: InitOf<S[K]> } & {
  readonly [K in OptionalKeys<S>]?: InitOf<S[K]> | undefined;
};

export interface ModelMethods<S extends Schema, N extends string = string> {
  /** The type's name: it also keeps types of the same shape apart for the compiler. */
  readonly [Symbol.toStringTag]: N;
  /** The JSON form: every field, defaults included, keys in snake_case, fresh objects. */
  toJSON(): { [key: string]: MutableJson };
  /** A copy with `update` applied, validated like a new instance. */
  with(update: Partial<Init<S>>): this;
}

export type Model<S extends Schema, N extends string = string> = Props<S> & ModelMethods<S, N>;

export interface ModelClass<S extends Schema, N extends string = string> {
  new (init: Init<S>): Model<S, N>;
  /** The type's name, as the catalogue and messages spell it (`ToolCallEvent`). */
  readonly typeName: N;
  readonly schema: S;
  /** Parses the JSON form strictly. */
  fromJSON<T>(this: new (init: never) => T, data: unknown): T;
}

/**
 * Every instance a model class made. A look-alike (an object made with `Object.create` of a
 * model's prototype, a Proxy of an instance) passes `instanceof` yet holds none of the checked
 * fields, or runs code when they are read; only these are models (as only outcomes the helpers
 * made are outcomes). A WeakSet asks a Proxy nothing.
 */
const made = new WeakSet<object>();

/**
 * Whether `value` is an instance that model class `Cls` (or a subclass) made. Runs no code of
 * `value`'s, and never throws: the walk asks it of whatever a middleware answered (issue 13).
 */
export function isModelOf<T>(value: unknown, Cls: abstract new (...args: never) => T): value is T {
  if (typeof value !== "object" || value === null || !made.has(value)) return false;
  try {
    return value instanceof Cls; // an instance built with a hostile new.target may have a Proxy for prototype
  } catch {
    return false;
  }
}

/** Builds the base class of a model type; declare the type as `class X extends model(...) {}`. */
export function model<const N extends string, S extends Schema>(typeName: N, schema: S): ModelClass<S, N> {
  const entries = Object.entries(schema);
  const byJson = new Map(entries.map(([prop, field]) => [field.json, [prop, field] as const]));

  class Base {
    static readonly typeName = typeName;
    static readonly schema = schema;

    get [Symbol.toStringTag](): string {
      return typeName;
    }

    constructor(init: unknown) {
      if (!isPlainObject(init) && !(init instanceof Base)) {
        throw new TypeError(`${typeName} needs an object of its fields, got ${describe(init)}`);
      }
      const given = init as Record<string, unknown>;
      for (const key of Object.keys(given)) {
        if (!Object.hasOwn(schema, key)) throw new TypeError(`${typeName} has no field ${key}`);
      }
      const self = this as unknown as Record<string, unknown>;
      for (const [prop, field] of entries) {
        const value = given[prop];
        if (value !== undefined) self[prop] = field.fromInit(value, `${typeName}.${prop}`);
        else if (field.required) throw new TypeError(`${typeName}.${prop} is required`);
        else self[prop] = field.fallback();
      }
      Object.freeze(this);
      made.add(this);
    }

    static fromJSON(this: new (init: unknown) => Base, data: unknown): Base {
      if (!isPlainObject(data)) throw new TypeError(`${typeName} JSON must be an object, got ${describe(data)}`);
      const init: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(data)) {
        const found = byJson.get(key);
        if (found === undefined) throw new TypeError(`${typeName} has no field "${key}"`);
        init[found[0]] = found[1].fromJSON(value, `${typeName}.${key}`);
      }
      return new this(init);
    }

    toJSON(): { [key: string]: MutableJson } {
      const self = this as unknown as Record<string, unknown>;
      const out: { [key: string]: MutableJson } = {};
      for (const [prop, field] of entries) out[field.json] = field.toJSON(self[prop]);
      return out;
    }

    with(update: Record<string, unknown>): Base {
      const Self = this.constructor as new (init: unknown) => Base;
      return new Self({ ...this, ...update });
    }
  }
  return Base as unknown as ModelClass<S, N>;
}

