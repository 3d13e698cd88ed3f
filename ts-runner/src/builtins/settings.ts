/**
 * The settings of the built-ins: their JSON Schemas, and the rules a schema cannot say.
 *
 * Each built-in's `settings` schema is the `$defs` entry `settings.harnessweaver.<name>` of
 * harness.schema.json, generated from the pydantic model of the Python built-in: the loader
 * validates an item's settings with it (types, ranges, unknown keys, defaults). What pydantic
 * checks in validators (one setting against another, patterns that compile) is checked when
 * the middleware is built: `make` throws a `SettingsError` whose message is Python's.
 */

import type { SettingsSchema } from "../plugin.js";
import { harnessSchema } from "./assets.js";

/** Settings that pass the schema but break a rule between them: the item's settings are invalid. */
export class SettingsError extends Error {
  override readonly name = "SettingsError";
  /** The setting at fault (`block_after`), or null for the settings as a whole. */
  readonly setting: string | null;

  constructor(setting: string | null, message: string, valueError = true) {
    const text = valueError ? `Value error, ${message}` : message;
    super(setting === null ? text : `${setting}: ${text}`);
    this.setting = setting;
  }
}

/** The JSON Schema of built-in `name`'s settings (`$defs["settings.harnessweaver.<name>"]`). */
export function settingsSchema(name: string): SettingsSchema {
  const key = `settings.harnessweaver.${name}`;
  const found = harnessSchema().$defs?.[key];
  if (typeof found !== "object" || found === null || (found as { type?: unknown }).type !== "object") {
    throw new Error(`harness.schema.json has no $defs entry ${key} (contract B)`);
  }
  return found as SettingsSchema;
}

/**
 * `settings`, once every number in it is known to be finite. YAML can write `.inf` and
 * `.nan`, which a JSON Schema's `minimum` lets through (`Infinity` is above 0) and pydantic
 * refuses (`allow_inf_nan=False`, and no integer is infinite): so does every built-in.
 */
export function finite(settings: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  for (const [key, value] of Object.entries(settings)) {
    if (typeof value === "number" && !Number.isFinite(value)) throw new SettingsError(key, "Input should be a finite number", false);
  }
  return settings;
}

/** Setting `key`, or null when absent or null. */
export function optional<T>(settings: Readonly<Record<string, unknown>>, key: string): T | null {
  const value = settings[key];
  return value === undefined || value === null ? null : (value as T);
}
