/**
 * Checking items before anything is built: what `use` names, the layer rules (decided by the
 * core through `declareIn`), the settings, and ids unique across the harness (Python:
 * `spec/check.py`).
 */

import type { Declaration, Overrides } from "../declaration.js";
import { HarnessweaverError } from "../errors.js";
import { declareIn } from "../layer.js";
import type { Middleware } from "../middleware.js";
import { isConfigurable, type Configurable } from "../plugin.js";
import type { Problems } from "./errors.js";
import type { Item } from "./model.js";
import type { Plugins } from "./resolve.js";
import { SettingsProblem, validateSettings } from "./settings.js";
import { shownValue as shown } from "./shown.js";

/** The item key a core error is about, for the line it is reported at. */
const KEY_OF_KIND: Readonly<Record<string, string>> = {
  invalid_name: "id",
  invalid_hooks: "hooks",
  unknown_hook: "hooks",
  hooks_widened: "hooks",
  invalid_band: "band",
  band_outward: "band",
  baseline_outside_profile: "band",
  invalid_fail_mode: "fail_mode",
  invalid_duration: "timeout",
  baseline_fail_open: "fail_mode",
  invalid_match: "match",
  unknown_match_key: "match",
  match_key_not_carried: "match",
  match_widened: "match",
  invalid_mode: "mode",
  baseline_audit_not_org: "mode",
};

/** An item that passed every check: its middleware, its declaration as registered, its settings. */
export interface Checked {
  readonly item: Item;
  readonly target: Middleware | Configurable;
  readonly declaration: Declaration;
  readonly settings: Record<string, unknown> | null;
  /** What is registered: the middleware, or what a `Configurable` built from the settings
   * (built while checking: a rule between settings that the schema cannot say is a `build`
   * error, which Python's config reports while validating, for every item, selected or not). */
  readonly built: Middleware;
}

/** An item's layer keys (spec spelling) as the core's overrides, values as written. */
export function overridesOf(keys: Readonly<Record<string, unknown>>, name: unknown): Overrides {
  const out: Record<string, unknown> = { name };
  for (const [key, value] of Object.entries(keys)) out[key === "fail_mode" ? "failMode" : key] = value;
  return out as Overrides;
}

function declared(item: Item, target: Middleware | Configurable, problems: Problems): Declaration | null {
  try {
    return declareIn(target.declaration, item.source.layer, overridesOf(item.keys, item.id));
  } catch (error) {
    if (!(error instanceof HarnessweaverError)) throw error;
    problems.core(item.source.file, item.where, item.line(KEY_OF_KIND[error.kind] ?? null), error);
    return null;
  }
}

function settingsOf(item: Item, target: Middleware | Configurable, problems: Problems): [boolean, Record<string, unknown> | null] {
  try {
    return [true, validateSettings(target, item.settings)];
  } catch (error) {
    if (!(error instanceof SettingsProblem)) throw error;
    problems.add(item.source.file, item.where, item.line(error.key), "invalid_settings", error.message);
    return [false, null];
  }
}

/** Every check of one item; null when one failed (its problems are added). */
export function checkItem(item: Item, plugins: Plugins, problems: Problems): Checked | null {
  const [target, why] = plugins.find(item.use);
  if (target === null) {
    problems.add(item.source.file, item.where, item.line("use"), "unknown_use", why);
    return null;
  }
  const declaration = declared(item, target, problems);
  const [ok, settings] = settingsOf(item, target, problems);
  if (!ok) return null;
  let built: Middleware | null = isConfigurable(target) ? null : target;
  if (isConfigurable(target)) {
    try {
      built = target.build(settings ?? {});
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      problems.add(item.source.file, item.where, item.line(), "invalid_settings", `invalid settings: ${text}`);
      return null;
    }
  }
  if (declaration === null || built === null) return null;
  return { item, target, declaration, settings, built };
}

/**
 * Ids are unique in every harness the spec can load: the profiles and the app's items with
 * any one env overlay and any one task (disabled items included). The ids of the base and of
 * each env are collected once, not again for every task.
 */
export function checkIds(
  base: readonly Item[],
  envs: ReadonlyMap<string, readonly Item[]>,
  tasks: ReadonlyMap<string, readonly Item[]>,
  problems: Problems,
): void {
  const firstOfBase = firstIds(base, new Map(), problems);
  for (const env of [[], ...envs.values()]) {
    const firstOfEnv = firstIds(env, firstOfBase, problems);
    for (const task of [[], ...tasks.values()]) firstIds(task, firstOfBase, problems, firstOfEnv);
  }
}

function firstIds(
  items: readonly Item[],
  earlier: ReadonlyMap<string, Item>,
  problems: Problems,
  between?: ReadonlyMap<string, Item>,
): Map<string, Item> {
  const seen = new Map<string, Item>();
  for (const item of items) {
    if (typeof item.id !== "string") continue;
    let first = earlier.get(item.id) ?? between?.get(item.id);
    if (first === undefined) {
      if (!seen.has(item.id)) seen.set(item.id, item);
      first = seen.get(item.id) as Item;
    }
    if (first !== item) {
      problems.add(
        item.source.file,
        item.where,
        item.line("id"),
        "duplicate_id",
        `the id ${shown(item.id)} is already used by ${first.where} at ${String(first.source)}; give one of them its own \`id:\``,
      );
    }
  }
  return seen;
}
