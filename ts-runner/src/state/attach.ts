/**
 * Stateful middleware and how they get their view (python/harnessweaver/state/view.py
 * `Stateful`, `attach`).
 *
 * A built-in that keeps state makes a `StateSlot` and marks the function it returns with
 * `stateful(fn, slot)`. The spec loader (and `attach()` for code) gives the slot its
 * `StateView` once the middleware is built and registered; a slot never given one makes
 * itself a private `MemoryStore` view on first use (the counts of one process).
 */

import type { FailMode } from "../declaration.js";
import type { Middleware } from "../middleware.js";
import type { Store } from "./store.js";
import { DEFAULT_LAYER, DEFAULT_TIMEOUT, StateView } from "./view.js";

/** Where a stateful middleware keeps its view. */
export class StateSlot {
  #view: StateView | null = null;

  constructor(
    /** The item name of the private view (the declared name). */
    readonly name: string,
    readonly failMode: FailMode,
  ) {}

  /** Use `view` from now on (the spec loader and `attach` call this once). */
  attachState(view: StateView): void {
    if (!(view instanceof StateView)) throw new TypeError("attachState takes a StateView");
    this.#view = view;
  }

  /** Whether a view was attached (not the private one). */
  get attached(): boolean {
    return this.#view !== null;
  }

  /** The attached view, or a private in-memory one made on first use. */
  get view(): StateView {
    return (this.#view ??= StateView.private(this.name, this.failMode));
  }
}

const slots = new WeakMap<object, StateSlot>();

/** Marks `target` (the function or object a middleware is made from) as stateful, its view kept in `slot`. */
export function stateful<T extends object>(target: T, slot: StateSlot): T {
  slots.set(target, slot);
  return target;
}

/** The slot of a built middleware (made by `middleware()` from a function marked `stateful`), or null. */
export function stateSlot(middleware: Middleware | object): StateSlot | null {
  const direct = slots.get(middleware);
  if (direct !== undefined) return direct;
  const call = (middleware as { call?: unknown }).call;
  return typeof call === "function" ? (slots.get(call) ?? null) : null;
}

/** Whether a built middleware keeps state (and so takes a view). */
export function isStateful(middleware: Middleware | object): boolean {
  return stateSlot(middleware) !== null;
}

export interface AttachOptions {
  readonly layer?: string;
  /** The item (default: its declared name). */
  readonly name?: string;
  readonly failMode?: FailMode;
  /** Seconds (default 0.25). */
  readonly timeout?: number;
  readonly task?: string | null;
}

/**
 * Gives a built stateful middleware its view of `store`, as the spec loader does: `name` and
 * `failMode` default to its declaration's, `layer` to "app". Returns the view.
 */
export function attach(middleware: Middleware, store: Store, options: AttachOptions = {}): StateView {
  const slot = stateSlot(middleware);
  if (slot === null) throw new TypeError(`${middleware.declaration.name} is not stateful middleware`);
  const view = new StateView(store, {
    layer: options.layer ?? DEFAULT_LAYER,
    item: options.name ?? middleware.declaration.name,
    failMode: options.failMode ?? middleware.declaration.failMode,
    timeout: options.timeout ?? DEFAULT_TIMEOUT,
    task: options.task ?? null,
  });
  slot.attachState(view);
  return view;
}
