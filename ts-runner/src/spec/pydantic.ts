/**
 * An ajv error of a settings schema in pydantic's words, so a setting refused by the schema is
 * the line Python's loader gives (its settings are validated by pydantic, in strict JSON mode,
 * against the model the schema was generated from). The keywords the built-ins' schemas use are
 * translated; any other keeps ajv's text (Python: `spec/settings.py`, pydantic's own messages).
 */

import type { ErrorObject } from "ajv/dist/2020.js";

import { pyRepr } from "./shown.js";

const TYPES: Readonly<Record<string, string>> = {
  integer: "a valid integer",
  number: "a valid number",
  string: "a valid string",
  boolean: "a valid boolean",
  array: "a valid list",
  object: "a valid dictionary",
};

const BOUNDS: Readonly<Record<string, string>> = {
  minimum: "greater than or equal to",
  exclusiveMinimum: "greater than",
  maximum: "less than or equal to",
  exclusiveMaximum: "less than",
};

function shown(value: unknown): string {
  return typeof value === "string" ? pyRepr(value) : String(value);
}

/** `'a', 'b' or 'c'`, as pydantic lists the values of a literal. */
function choices(values: readonly unknown[]): string {
  const texts = values.map(shown);
  return texts.length < 2 ? (texts[0] ?? "") : `${texts.slice(0, -1).join(", ")} or ${texts[texts.length - 1]}`;
}

/** pydantic's message for `error`, or null when it has no translation here. */
export function pydanticMessage(error: ErrorObject): string | null {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "type" && typeof params["type"] === "string" && params["type"] in TYPES) {
    return `Input should be ${TYPES[params["type"]]}`;
  }
  if (error.keyword in BOUNDS) return `Input should be ${BOUNDS[error.keyword]} ${String(params["limit"])}`;
  if (error.keyword === "enum" && Array.isArray(params["allowedValues"])) return `Input should be ${choices(params["allowedValues"])}`;
  if (error.keyword === "minLength" && typeof params["limit"] === "number") {
    return `String should have at least ${params["limit"]} character${params["limit"] === 1 ? "" : "s"}`;
  }
  if (error.keyword === "maxLength" && typeof params["limit"] === "number") {
    return `String should have at most ${params["limit"]} character${params["limit"] === 1 ? "" : "s"}`;
  }
  return null;
}

/**
 * The errors pydantic would give for the same value: an optional setting (`anyOf` of a type and
 * `null`) refused is the error of its type alone, as pydantic reports a nullable field, without
 * ajv's "must be null" and "must match a schema in anyOf".
 */
export function asPydantic(errors: readonly ErrorObject[]): ErrorObject[] {
  const nullable = new Set(
    errors.filter((e) => e.keyword === "type" && (e.params as { type?: unknown }).type === "null").map((e) => e.instancePath),
  );
  return errors.filter(
    (e) => !(nullable.has(e.instancePath) && (e.keyword === "anyOf" || (e.keyword === "type" && (e.params as { type?: unknown }).type === "null"))),
  );
}
