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

  constructor(setting: string | null, message: string) {
    super(setting === null ? `Value error, ${message}` : `${setting}: Value error, ${message}`);
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

/** Setting `key`, or null when absent or null. */
export function optional<T>(settings: Readonly<Record<string, unknown>>, key: string): T | null {
  const value = settings[key];
  return value === undefined || value === null ? null : (value as T);
}
