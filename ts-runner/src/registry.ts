/**
 * The registry: middleware by name, and one planned chain per hook point.
 *
 * Registering costs O(1): each hook point keeps its middleware in one Map per band, in
 * registration order (insertion order, as registration orders only grow), which is the run
 * order of an inbound hook point (rules 1-2, rulings 1-2). A change only marks its hook points'
 * plans stale (`null`); the first emit after it plans the chain (reversed for outbound hook
 * points) and the emits after that walk it, so registering n middleware does not replan every
 * chain n times (issue 13). A new frozen array replaces the old one (copy on write): an emit
 * in flight keeps the chain it started with (ruling 3, I11).
 */

import { catalogueIndex, DIRECTIONS, HOOK_POINTS, type HookPoint } from "./catalogue.js";
import { applyOverrides, BANDS, type Declaration, type Overrides } from "./declaration.js";
import { valueError, type Phase } from "./errors.js";
import { declareIn, type Layer } from "./layer.js";
import { admits, CARRIED, keyValue, type MatchKey } from "./matcher.js";
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
  /** Audit mode (I25): its answers are traced, and count as a plain Continue. */
  readonly audit: boolean;
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
  /** The key the chain's matchers read on this hook point (I22), or null: none do. */
  readonly key: MatchKey | null;
  /** The plans of the key values seen, at most `MAX_KEYED_PLANS`, emptied when full. */
  readonly byKey: Map<string, Plan>;
}

/** How many key values a hook point keeps a planned chain for (I22, as the Rust core). */
export const MAX_KEYED_PLANS = 256;

function planOf(hook: HookPoint, entries: readonly Entry[], keyed = true): Plan {
  const timed = entries.some((entry) => entry.timeoutMs !== null);
  const carried = CARRIED[hook];
  const key = keyed && carried !== undefined && entries.some((e) => e.declaration.match?.[carried] !== undefined) ? carried : null;
  return Object.freeze({ hook, hookIndex: catalogueIndex(hook), eventType: EVENT_TYPES[hook], entries: Object.freeze(entries), timed, key, byKey: new Map<string, Plan>() });
}

/**
 * The plan an emit of `event` runs (I22): `plan` itself unless its matchers read a key the
 * event holds as text; then the chain without the middleware that do not match, planned once
 * per key value.
 */
export function keyedPlan(plan: Plan, event: unknown): Plan {
  if (plan.key === null) return plan;
  const value = keyValue(plan.key, event);
  return value === null ? plan : planFor(plan, value);
}

/** `plan` for the key value `value` (see `keyedPlan`). */
export function planFor(plan: Plan, value: string): Plan {
  if (plan.key === null) return plan;
  let found = plan.byKey.get(value);
  if (found === undefined) {
    const entries = plan.entries.filter((e) => admits(e.declaration.match, plan.hook, value));
    found = planOf(plan.hook, entries, false);
    if (plan.byKey.size >= MAX_KEYED_PLANS) plan.byKey.clear();
    plan.byKey.set(value, found);
  }
  return found;
}

export class Registry {
  readonly #entries = new Map<string, Entry>();
  /** Per hook point, per band (outermost first): name to entry, in registration order. */
  readonly #members = new Map<HookPoint, readonly Map<string, Entry>[]>(HOOK_POINTS.map((hook) => [hook, BANDS.map(() => new Map())]));
  /**
   * Keyed by any string (one lookup checks the hook point too); only hook points are in it.
   * `null` once a change made the plan stale, until it is asked for again.
   */
  readonly #plans = new Map<string, Plan | null>(HOOK_POINTS.map((hook) => [hook, planOf(hook, [])]));
  #next = 0;
  #planBuilds = 0;

  /** How many chains were planned: none while middleware are only registered (for tests). */
  get planBuilds(): number {
    return this.#planBuilds;
  }

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
    const audit = final.mode === "audit";
    const plain = { kind: "outcome", middleware: final.name, band: final.band, outcome: "continue", modified: false } as const;
    const passed: Shape = Object.freeze(audit ? { ...plain, audit: true as const } : plain);
    const entry: Entry = Object.freeze({ declaration: final, call, signal, timeoutMs, order: this.#next, passed, audit });
    this.#entries.set(final.name, entry);
    this.#next += 1;
    const band = BANDS.indexOf(final.band);
    for (const hook of final.hooks) {
      this.#members.get(hook)?.[band]?.set(final.name, entry);
      this.#plans.set(hook, null);
    }
    return final;
  }

  /** Removes the middleware called `name`; emits in flight keep their chains (I11). */
  unregister(name: unknown): Declaration {
    const entry = typeof name === "string" ? this.#entries.get(name) : undefined;
    if (entry === undefined) throw valueError("register", "unknown_middleware", "name", shown(name));
    this.#entries.delete(entry.declaration.name);
    const band = BANDS.indexOf(entry.declaration.band);
    for (const hook of entry.declaration.hooks) {
      this.#members.get(hook)?.[band]?.delete(entry.declaration.name);
      this.#plans.set(hook, null);
    }
    return entry.declaration;
  }

  /** The planned chain of `hook`, in run order; an unknown hook point is an `unknown_hook` error. */
  plan(hook: unknown, phase: Phase = "emit"): Plan {
    const plan = typeof hook === "string" ? this.#plans.get(hook) : undefined;
    if (plan === undefined) throw valueError(phase, "unknown_hook", "hook", shown(hook));
    return plan ?? this.#replan(hook as HookPoint);
  }

  /** Plans `hook` from its members: band by band, each in registration order; reversed outbound. */
  #replan(hook: HookPoint): Plan {
    this.#planBuilds += 1;
    const chain: Entry[] = [];
    for (const band of this.#members.get(hook) ?? []) for (const entry of band.values()) chain.push(entry);
    if (DIRECTIONS[hook] === "outbound") chain.reverse();
    const plan = planOf(hook, chain);
    this.#plans.set(hook, plan);
    return plan;
  }
}
