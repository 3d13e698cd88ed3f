/**
 * Checking items before anything is built: what `use` names, the layer rules (decided by the
 * core through `declareIn`), the settings, and ids unique across the harness (Python:
 * `spec/check.py`).
 */

import type { Declaration, Overrides } from "../declaration.js";
import { HarnessweaverError } from "../errors.js";
import { SettingsError } from "../builtins/settings.js";
import { declareIn } from "../layer.js";
import type { Middleware } from "../middleware.js";
import { isConfigurable, type Configurable } from "../plugin.js";
import type { Problems } from "./errors.js";
import { HOOK_POINTS } from "../catalogue.js";
import { LoadProblem, loadingIn } from "./files.js";
import { itemHooksOf, refusedHook } from "./hooks.js";
import { Item } from "./model.js";
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
  /** The files the middleware read while it was built, as written (I38). */
  readonly loads: readonly string[];
}

/** An item's layer keys (spec spelling) as the core's overrides, values as written. */
export function overridesOf(keys: Readonly<Record<string, unknown>>, name: unknown): Overrides {
  const out: Record<string, unknown> = { name };
  for (const [key, value] of Object.entries(keys)) out[key === "fail_mode" ? "failMode" : key] = value;
  return out as Overrides;
}

/**
 * The keys a core error's judgement rests on besides its own: once one of them was refused (and
 * set aside), such an error is about a value the user did not write, so it is not said.
 */
const NEEDS: Readonly<Record<string, readonly string[]>> = {
  match_key_not_carried: ["hooks"],
  match_widened: ["hooks"],
  baseline_fail_open: ["band", "fail_mode"],
  baseline_audit_not_org: ["band", "mode"],
};

/**
 * The item's declaration, or null with every key the core refuses reported. The core stops at
 * the first key it refuses; to report the others too, that key is set aside (as if not written)
 * and the item declared again, until the core accepts the rest (Python: `_declare`).
 */
function declared(item: Item, target: Middleware | Configurable, problems: Problems): Declaration | null {
  const keys: Record<string, unknown> = { ...item.keys };
  let name: unknown = item.id;
  const refused = new Set<string>();
  for (;;) {
    try {
      const declaration = declareIn(target.declaration, item.source.layer, overridesOf(keys, name));
      return refused.size > 0 ? null : declaration;
    } catch (error) {
      if (!(error instanceof HarnessweaverError)) throw error;
      const key = KEY_OF_KIND[error.kind] ?? null;
      if (!(NEEDS[error.kind] ?? []).some((needed) => refused.has(needed))) {
        problems.core(item.source.file, item.where, item.line(key), error);
      }
      if (key === "id" && name !== undefined) name = undefined;
      else if (key !== null && key !== "id" && key in keys) delete keys[key];
      else return null; // nothing left to set aside: stop here
      refused.add(key);
    }
  }
}

function settingsOf(item: Item, target: Middleware | Configurable, problems: Problems): [boolean, Record<string, unknown> | null] {
  try {
    return [true, validateSettings(target, item.settings)];
  } catch (error) {
    if (!(error instanceof SettingsProblem)) throw error;
    let message = error.message;
    if (error.known !== null && isConfigurable(target)) {
      const broken = buildError(target, error.known);
      if (broken !== null) message = `${message}; ${broken}`;
    }
    problems.add(item.source.file, item.where, item.line(error.key), "invalid_settings", message);
    return [false, null];
  }
}

const VALUE_ERROR = "Value error, ";

/**
 * Why `target` cannot be built from `settings`, as Python's loader says it (null when it can),
 * and the setting at fault: see `buildFault`.
 */
function buildError(target: Configurable, settings: Record<string, unknown>): string | null {
  try {
    target.build(settings);
    return null;
  } catch (error) {
    return buildFault(error)[1];
  }
}

/**
 * A `build` error as Python's loader says it, and the setting at fault: a rule between settings
 * is `setting: message` (`(settings): message` for the settings as a whole), without pydantic's
 * "Value error, " prefix, which a built-in's `SettingsError` keeps for its messages to be
 * pydantic's.
 */
function buildFault(error: unknown): [string | null, string] {
  if (!(error instanceof SettingsError)) return [null, error instanceof Error ? error.message : String(error)];
  const head = error.setting === null ? "" : `${error.setting}: `;
  const text = error.message.slice(head.length);
  return [error.setting, `${error.setting ?? "(settings)"}: ${text.startsWith(VALUE_ERROR) ? text.slice(VALUE_ERROR.length) : text}`];
}

/**
 * A problem at `key`'s line whose message starts `<file>:<line>: `: the file a setting names,
 * or (`file` null) the declaring file at that key's line (I38).
 */
function loadProblem(item: Item, problems: Problems, error: Pick<LoadProblem, "kind" | "key" | "problem" | "file" | "line">): void {
  const at = item.line(error.key);
  const where = error.file !== null ? `${error.file}:${error.line}` : `${item.source.file}:${at ?? 1}`;
  problems.add(item.source.file, item.where, at, error.kind, `${where}: ${error.problem}`);
}

/**
 * The item with its middleware's default `hooks:` when it names none (`ItemHooks`); null (and
 * a problem) when it names one the middleware does not declare.
 */
function itemHooks(item: Item, target: Middleware | Configurable, problems: Problems): Item | null {
  const chosen = itemHooksOf(target);
  if (chosen === null) return item;
  const declared = HOOK_POINTS.filter((hook) => target.declaration.hooks.includes(hook));
  const refused = refusedHook(item.keys, declared);
  if (refused !== null) {
    const problem = `${item.use} runs on ${declared.join(", ")}, not ${shown(refused)}`;
    loadProblem(item, problems, { kind: chosen.kind, key: "hooks", problem, file: null, line: 1 });
    return null;
  }
  if (item.keys["hooks"] !== undefined && item.keys["hooks"] !== null) return item;
  const keys = { ...item.keys, hooks: [...chosen.default] };
  return new Item(item.where, item.use, item.id, item.label, item.enabled, keys, item.settings, item.source, item.keyLines);
}

/** Every check of one item; null when one failed (its problems are added). */
export function checkItem(given: Item, plugins: Plugins, problems: Problems, folder: string): Checked | null {
  const [target, why] = plugins.find(given.use);
  if (target === null) {
    problems.add(given.source.file, given.where, given.line("use"), "unknown_use", why);
    return null;
  }
  const chosen = itemHooks(given, target, problems);
  const declaration = chosen === null ? null : declared(chosen, target, problems);
  const item = chosen ?? given;
  const [ok, settings] = settingsOf(item, target, problems);
  if (!ok) return null;
  let built: Middleware | null = isConfigurable(target) ? null : target;
  let loads: readonly string[] = [];
  if (isConfigurable(target)) {
    try {
      [built, loads] = loadingIn(folder, () => target.build(settings ?? {}));
    } catch (error) {
      if (error instanceof LoadProblem) {
        loadProblem(item, problems, error); // I38: the file and line of the fault lead
        return null;
      }
      const [setting, text] = buildFault(error);
      problems.add(item.source.file, item.where, item.line(setting), "invalid_settings", `invalid settings: ${text}`);
      return null;
    }
  }
  if (declaration === null || built === null) return null;
  return { item, target, declaration, settings, built, loads };
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
