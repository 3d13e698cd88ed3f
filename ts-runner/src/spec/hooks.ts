/**
 * A middleware's hook points as a spec item chooses them, when its middleware says how
 * (Python: `spec/hooks.py`).
 *
 * `setItemHooks(target, {default, kind})`: an item that names no `hooks:` gets `default` (a
 * subset of the declared hook points: `harnessweaver.cedar` decides `tool.before` unless asked
 * for more), and an item naming a hook point the middleware does not declare is a problem of
 * that `kind` (its rule closes the message), reported at the `hooks:` line instead of the
 * core's `hooks_widened`.
 */

import type { HookPoint } from "../catalogue.js";

/** `default`: the hook points of an item without `hooks:`; `kind`: the problem kind of a hook point the middleware does not declare. */
export interface ItemHooks {
  readonly default: readonly HookPoint[];
  readonly kind: "invalid_policy";
}

const chosen = new WeakMap<object, ItemHooks>();

/** Says how an item of `target` chooses its hook points. */
export function setItemHooks(target: object, hooks: ItemHooks): void {
  chosen.set(target, Object.freeze({ default: Object.freeze([...hooks.default]), kind: hooks.kind }));
}

/** How an item of `target` chooses its hook points, if it says. */
export function itemHooksOf(target: object): ItemHooks | null {
  return chosen.get(target) ?? null;
}

/** The first hook point of the item's `hooks:` (a list of strings) that is not declared. */
export function refusedHook(keys: Readonly<Record<string, unknown>>, declared: readonly string[]): string | null {
  const hooks = keys["hooks"];
  if (!Array.isArray(hooks) || !hooks.every((hook) => typeof hook === "string")) return null; // the core says what is wrong
  return (hooks as string[]).find((hook) => !declared.includes(hook)) ?? null;
}
