/**
 * Recipes for hostile values, for the property test of issue 13: fast-check generates (and
 * shrinks, and prints) a recipe, which is plain data; `build` makes the value from it afresh.
 * A counterexample is shown as its recipe, never as the hostile value itself (printing that
 * would run its traps and getters). Not a test file itself.
 */

import fc from "fast-check";
import { Block, Continue, Escalate, Retry, Suspend, type Outcome } from "../index.js";
import { SECRET, TRAPS, thenable } from "./hostile.js";
import { toolCall } from "./support.js";

/** Property keys the bus (or a careless one) might read; symbols by name. */
const KEYS = ["then", "name", "message", "kind", "reason", "code", "modified", "constructor", "toString", "valueOf", "toJSON", "@@toStringTag", "@@toPrimitive", "@@hasInstance"] as const;
type Key = (typeof KEYS)[number];

export type Recipe =
  | { readonly t: "primitive"; readonly value: string | number | boolean | bigint | null | undefined }
  | { readonly t: "symbol" }
  | { readonly t: "error"; readonly type: "Error" | "TypeError" | "RangeError" | "DOMException" | "subclass"; readonly name: NameRecipe; readonly frozen: boolean; readonly proto: Recipe | null }
  | { readonly t: "object"; readonly getters: readonly (readonly [Key, Recipe])[]; readonly cyclic: boolean; readonly proto: Recipe | null }
  | { readonly t: "proxy"; readonly target: Recipe; readonly traps: readonly (typeof TRAPS)[number][]; readonly thrown: Recipe }
  | { readonly t: "revoked" }
  | { readonly t: "thenable"; readonly act: "resolve" | "reject" | "throw" | "never"; readonly value: Recipe }
  | { readonly t: "promise"; readonly act: "resolve" | "reject"; readonly value: Recipe }
  | { readonly t: "continue"; readonly modified: Recipe }
  | { readonly t: "outcome"; readonly kind: Outcome["kind"] }
  | { readonly t: "event" };

/** How an Error subclass's `name` answers: a field, a getter that returns, one that throws. */
export type NameRecipe =
  | { readonly how: "field"; readonly value: string }
  | { readonly how: "returns"; readonly value: Recipe }
  | { readonly how: "throws"; readonly value: Recipe };

/** Strings that sometimes carry the secret (which is never a type name: it has a space). */
const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constant(SECRET), fc.string({ maxLength: 4 }).map((s) => `${s}${SECRET}${s}`));

/** A name: a type name, or one that is none (message-like, huge, empty). */
const names = fc.oneof(
  fc.constantFrom("TypeError", "RefundServiceDown", "payments.CardDeclined", "$weird_Name1"),
  text,
  fc.constant(""),
  fc.nat({ max: 300 }).map((n) => `E${"x".repeat(n)}`),
);

/** Hostile recipes, nested a few levels deep. */
export const recipes: fc.Arbitrary<Recipe> = fc.letrec<{ recipe: Recipe; name: NameRecipe }>((tie) => ({
  recipe: fc.oneof(
    { depthSize: "small", maxDepth: 4, withCrossShrink: true },
    fc.record({ t: fc.constant("primitive" as const), value: fc.oneof(text, fc.double(), fc.boolean(), fc.bigInt(), fc.constantFrom(null, undefined)) }),
    fc.constant({ t: "symbol" as const }),
    fc.constant({ t: "revoked" as const }),
    fc.constant({ t: "event" as const }),
    fc.record({ t: fc.constant("outcome" as const), kind: fc.constantFrom("continue", "block", "suspend", "escalate", "retry") }),
    fc.record({
      t: fc.constant("error" as const),
      type: fc.constantFrom("Error", "TypeError", "RangeError", "DOMException", "subclass"),
      name: tie("name"),
      frozen: fc.boolean(),
      proto: fc.option(tie("recipe"), { freq: 4 }),
    }),
    fc.record({
      t: fc.constant("object" as const),
      getters: fc.array(fc.tuple(fc.constantFrom(...KEYS), tie("recipe")), { maxLength: 3 }),
      cyclic: fc.boolean(),
      proto: fc.option(tie("recipe"), { freq: 4 }),
    }),
    fc.record({
      t: fc.constant("proxy" as const),
      target: tie("recipe"),
      traps: fc.subarray([...TRAPS]),
      thrown: tie("recipe"),
    }),
    fc.record({ t: fc.constant("thenable" as const), act: fc.constantFrom("resolve", "reject", "throw", "never"), value: tie("recipe") }),
    fc.record({ t: fc.constant("promise" as const), act: fc.constantFrom("resolve", "reject"), value: tie("recipe") }),
    fc.record({ t: fc.constant("continue" as const), modified: tie("recipe") }),
  ),
  name: fc.oneof(
    fc.record({ how: fc.constant("field" as const), value: names }),
    fc.record({ how: fc.constant("returns" as const), value: fc.oneof(names.map((value) => ({ t: "primitive" as const, value })), tie("recipe")) }),
    fc.record({ how: fc.constant("throws" as const), value: tie("recipe") }),
  ),
})).recipe;

/**
 * Whether a value built from `recipe` may never settle (a `never` thenable anywhere in it; a
 * string "never" counts too, which only costs that run a timeout it does not need).
 */
export function mayHang(recipe: unknown): boolean {
  if (recipe === "never") return true;
  return typeof recipe === "object" && recipe !== null && Object.values(recipe).some(mayHang);
}

function key(name: Key): PropertyKey {
  if (name === "@@toStringTag") return Symbol.toStringTag;
  if (name === "@@toPrimitive") return Symbol.toPrimitive;
  if (name === "@@hasInstance") return Symbol.hasInstance;
  return name;
}

function outcome(kind: Outcome["kind"]): Outcome {
  switch (kind) {
    case "continue":
      return Continue();
    case "block":
      return Block("no");
    case "suspend":
      return Suspend("wait");
    case "escalate":
      return Escalate("ask");
    case "retry":
      return Retry("again", { delay: 0.5 });
  }
}

/** An object (something a Proxy may wrap, or a prototype may be) made from `recipe`. */
function objectOf(recipe: Recipe): object {
  const value = build(recipe);
  return (typeof value === "object" && value !== null) || typeof value === "function" ? value : { value };
}

/**
 * `promise`, marked handled: a rejected one that the bus never awaits (it is a name, or a
 * modified event) must not end the process as an unhandled rejection. Awaiting it still throws.
 */
function handled(promise: Promise<unknown>): Promise<unknown> {
  promise.catch(() => {});
  return promise;
}

/** The value `recipe` describes, made afresh (a thrown or returned value is built anew on each use). */
export function build(recipe: Recipe): unknown {
  switch (recipe.t) {
    case "primitive":
      return recipe.value;
    case "symbol":
      return Symbol(SECRET);
    case "revoked": {
      const { proxy, revoke } = Proxy.revocable({ message: SECRET }, {});
      revoke();
      return proxy;
    }
    case "event":
      return toolCall({ note: 1 });
    case "outcome":
      return outcome(recipe.kind);
    case "error": {
      const error = errorOf(recipe.type, recipe.name);
      if (recipe.proto !== null) Object.setPrototypeOf(error, objectOf(recipe.proto));
      return recipe.frozen ? Object.freeze(error) : error;
    }
    case "object": {
      const object: Record<PropertyKey, unknown> = { message: SECRET };
      for (const [name, thrown] of recipe.getters) {
        Object.defineProperty(object, key(name), {
          get() {
            throw build(thrown);
          },
          configurable: true,
        });
      }
      if (recipe.cyclic) object["self"] = object;
      if (recipe.proto !== null) Object.setPrototypeOf(object, objectOf(recipe.proto));
      return object;
    }
    case "proxy": {
      const handler: Record<string, () => never> = {};
      for (const trap of recipe.traps) {
        handler[trap] = () => {
          throw build(recipe.thrown);
        };
      }
      return new Proxy(objectOf(recipe.target), handler);
    }
    case "thenable": {
      const { act, value } = recipe;
      return thenable((resolve, reject) => {
        if (act === "resolve") resolve(build(value));
        else if (act === "reject") reject(build(value));
        else if (act === "throw") throw build(value);
      });
    }
    case "promise":
      // Resolving with a thenable may reject too.
      return handled(recipe.act === "resolve" ? Promise.resolve(build(recipe.value)) : Promise.reject(build(recipe.value)));
    case "continue":
      return Continue(build(recipe.modified) as never);
  }
}

function errorOf(type: Extract<Recipe, { t: "error" }>["type"], name: NameRecipe): Error {
  let error: Error;
  if (type === "subclass") {
    class Hostile extends Error {}
    error = new Hostile(SECRET);
  } else if (type === "DOMException") error = new DOMException(SECRET, "AbortError");
  else error = new globalThis[type](SECRET);
  const descriptor: PropertyDescriptor =
    name.how === "field"
      ? { value: name.value }
      : name.how === "returns"
        ? { get: () => build(name.value) }
        : {
            get: () => {
              throw build(name.value);
            },
          };
  return Object.defineProperty(error, "name", { ...descriptor, configurable: true });
}
