/**
 * The registry: middleware by name, and one planned chain per hook point.
 *
 * Chains are planned when something is registered or unregistered (sorted by band, then
 * registration order; reversed for outbound hook points: rules 1-2, rulings 1-2), so an emit
 * only walks a prepared array. A new frozen array replaces the old one (copy on write): an
 * emit in flight keeps the chain it started with (ruling 3, I11).
 */

import { catalogueIndex, DIRECTIONS, HOOK_POINTS, type HookPoint } from "./catalogue.js";
import { applyOverrides, BANDS, type Declaration, type Overrides } from "./declaration.js";
import { valueError, type Phase } from "./errors.js";
import { declareIn, type Layer } from "./layer.js";
import { shown } from "./shown.js";
import { EVENT_TYPES } from "./events.js";
import type { Event } from "./events.js";
import type { Shape } from "./trace.js";

/**
 * How the bus calls a middleware: the event of one of its hook points. `signal` is absent for
 * a middleware that does not ask for one (see `middleware()`).
 */
export type Call = (event: unknown, envelope: unknown, signal: AbortSignal | undefined) => unknown;

export interface Entry {
  readonly declaration: Declaration;
  readonly call: Call;
  /** Whether each call is handed an AbortSignal of its own (the middleware asked for one). */
  readonly signal: boolean;
  /** The declaration's timeout in milliseconds (a double, for the walk's clock), or null. */
  readonly timeoutMs: number | null;
  /** Its place in the registration order (I3: one place for all its hook points). */
  readonly order: number;
  /** The shape of its trace records that answer a plain Continue (shared by all of them). */
  readonly passed: Shape;
}

/**
 * The planned chain of one hook point, with what an emit would otherwise work out each time:
 * made when the chain changes, frozen, kept by the emits in flight that use it.
 */
export interface Plan {
  readonly hook: HookPoint;
  /** The hook point's index in the catalogue, as the trace stores it. */
  readonly hookIndex: number;
  /** The event class of the hook point: a modified event must be an instance of it. */
  readonly eventType: abstract new (...args: never) => Event;
  /** The chain, in run order. */
  readonly entries: readonly Entry[];
  /** Whether some middleware of the chain has a timeout (its emits are then watched). */
  readonly timed: boolean;
}

function planOf(hook: HookPoint, entries: readonly Entry[]): Plan {
  const timed = entries.some((entry) => entry.timeoutMs !== null);
  return Object.freeze({ hook, hookIndex: catalogueIndex(hook), eventType: EVENT_TYPES[hook], entries: Object.freeze(entries), timed });
}

export class Registry {
  readonly #entries = new Map<string, Entry>();
  /** Keyed by any string (one lookup checks the hook point too); only hook points are in it. */
  readonly #plans = new Map<string, Plan>(HOOK_POINTS.map((hook) => [hook, planOf(hook, [])]));
  #next = 0;

  /**
   * Registers `call` under `declaration` with the overrides of I10, or as a spec item of
   * `overrides.layer` (I13); returns what took effect.
   */
  register(
    declaration: Declaration,
    call: Call,
    overrides: Overrides & { readonly layer?: Layer | undefined } = {},
    signal = true,
  ): Declaration {
    const { layer, ...item } = overrides;
    const final = layer === undefined || layer === null ? applyOverrides(declaration, item) : declareIn(declaration, layer, item);
    if (this.#entries.has(final.name)) throw valueError("register", "duplicate_name", "name", shown(final.name));
    const timeoutMs = final.timeoutNs === null ? null : Number(final.timeoutNs) / 1e6;
    const passed: Shape = Object.freeze({ kind: "outcome", middleware: final.name, band: final.band, outcome: "continue", modified: false });
    this.#entries.set(final.name, Object.freeze({ declaration: final, call, signal, timeoutMs, order: this.#next, passed }));
    this.#next += 1;
    this.#replan(final.hooks);
    return final;
  }

  /** Removes the middleware called `name`; emits in flight keep their chains (I11). */
  unregister(name: unknown): Declaration {
    const entry = typeof name === "string" ? this.#entries.get(name) : undefined;
    if (entry === undefined) throw valueError("register", "unknown_middleware", "name", shown(name));
    this.#entries.delete(entry.declaration.name);
    this.#replan(entry.declaration.hooks);
    return entry.declaration;
  }

  /** The planned chain of `hook`, in run order; an unknown hook point is an `unknown_hook` error. */
  plan(hook: unknown, phase: Phase = "emit"): Plan {
    const plan = typeof hook === "string" ? this.#plans.get(hook) : undefined;
    if (plan === undefined) throw valueError(phase, "unknown_hook", "hook", shown(hook));
    return plan;
  }

  #replan(hooks: readonly HookPoint[]): void {
    const band = (entry: Entry) => BANDS.indexOf(entry.declaration.band);
    for (const hook of hooks) {
      const chain = [...this.#entries.values()]
        .filter((entry) => entry.declaration.hooks.includes(hook))
        .sort((a, b) => band(a) - band(b) || a.order - b.order);
      if (DIRECTIONS[hook] === "outbound") chain.reverse();
      this.#plans.set(hook, planOf(hook, chain));
    }
  }
}
