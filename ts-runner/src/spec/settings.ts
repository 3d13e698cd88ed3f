/**
 * Settings: every key of an item that is not reserved, validated against the middleware's
 * settings schema with ajv (Python: `spec/settings.py`, pydantic). A key the schema does not
 * have is refused unless the schema allows more (`additionalProperties`); defaults are applied.
 * A plain middleware (not a `Configurable`) takes no settings.
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

import { isConfigurable, type Configurable, type SettingsSchema } from "../plugin.js";
import type { Middleware } from "../middleware.js";
import { closest } from "./close.js";
import { RESERVED } from "./model.js";
import { asPydantic, pydanticMessage } from "./pydantic.js";

/**
 * Settings that do not fit: `message` says why, `key` is the first key at fault. `known` is set
 * when only unknown keys are at fault: the other settings (validated, defaults applied), which
 * the middleware is still built from to report the rules between them, as pydantic's validators
 * run beside its unknown-key errors in Python.
 */
export class SettingsProblem extends Error {
  constructor(
    message: string,
    readonly key: string | null,
    readonly known: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
}

const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false, validateFormats: false });
const compiled = new WeakMap<object, ValidateFunction>();

function validator(schema: SettingsSchema): ValidateFunction {
  let found = compiled.get(schema);
  if (found === undefined) {
    found = ajv.compile(schema);
    compiled.set(schema, found);
  }
  return found;
}

function propertiesOf(schema: SettingsSchema): string[] {
  const properties = schema["properties"];
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
}

function unknownKeys(schema: SettingsSchema, settings: Readonly<Record<string, unknown>>): [string, string][] {
  const extra = schema["additionalProperties"];
  if (extra !== undefined && extra !== false) return [];
  const names = propertiesOf(schema);
  return Object.keys(settings)
    .filter((key) => !names.includes(key))
    .map((key) => {
      // A reserved key misspelt (`fail-mode:`) lands here as a setting: name it too.
      const close = closest(key, names, RESERVED);
      const hint = close !== null ? `did you mean ${close}?` : `the settings are ${names.join(", ")}`;
      return [key, `${key}: unknown setting (${hint})`];
    });
}

/**
 * The keys of settings a middleware does not take, each misspelt reserved key with the key it
 * likely meant (`fail-mode` is `fail_mode`, not a setting).
 */
function keysShown(keys: readonly string[]): string {
  return keys
    .map((key) => {
      const close = closest(key, RESERVED);
      return close !== null ? `${key} (did you mean ${close}?)` : key;
    })
    .join(", ");
}

/** The key an ajv error is about, and the error as a problem says it. */
function fault(error: ErrorObject): [string | null, string] {
  const path = error.instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (error.keyword === "required") {
    const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
    return [missing, `${[...path, missing].join(".")}: Field required`];
  }
  const where = path.join(".") || "(settings)";
  return [path[0] ?? null, `${where}: ${pydanticMessage(error) ?? error.message ?? "invalid"}`];
}

/**
 * The settings to build `target` with (validated, defaults applied), or null for a plain
 * middleware; a `SettingsProblem` when they do not fit.
 */
export function validateSettings(
  target: Middleware | Configurable,
  settings: Readonly<Record<string, unknown>>,
): Record<string, unknown> | null {
  const keys = Object.keys(settings);
  if (!isConfigurable(target)) {
    if (keys.length > 0) {
      throw new SettingsProblem(`${target.declaration.name} is a function and takes no settings: ${keysShown(keys)}`, null);
    }
    return null;
  }
  // A schema that allows no settings at all is reported as a plain middleware is.
  if (target.settings["maxProperties"] === 0 && propertiesOf(target.settings).length === 0 && keys.length > 0) {
    throw new SettingsProblem(`${target.declaration.name} takes no settings: ${keysShown(keys)}`, null);
  }
  const faults = unknownKeys(target.settings, settings);
  const data = structuredClone(settings) as Record<string, unknown>;
  const validate = validator(target.settings);
  let known: Record<string, unknown> | null = null;
  if (!validate(data)) {
    const order = propertiesOf(target.settings);
    const rank = (key: string | null) => (key === null ? order.length : order.indexOf(key) < 0 ? order.length : order.indexOf(key));
    // pydantic reports the faults in the order of the fields; `additionalProperties` is said above.
    const more = asPydantic(validate.errors ?? [])
      .filter((error) => error.keyword !== "additionalProperties")
      .map(fault);
    more.sort((a, b) => rank(a[0]) - rank(b[0]));
    const seen = new Set<string>();
    for (const entry of more) {
      if (seen.has(entry[1])) continue;
      seen.add(entry[1]);
      faults.push(entry as [string, string]);
    }
    if (more.length === 0) {
      const unknown = new Set(faults.map(([key]) => key));
      known = structuredClone(Object.fromEntries(Object.entries(settings).filter(([key]) => !unknown.has(key))));
      if (!validate(known)) known = null;
    }
  }
  if (faults.length > 0) {
    const first = faults.find(([key]) => key !== null);
    throw new SettingsProblem(`invalid settings: ${faults.map(([, text]) => text).join("; ")}`, first ? first[0] : null, known);
  }
  return data;
}
