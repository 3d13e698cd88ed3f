/**
 * `middleware()`: declaring a function, or an object with a `call` method, as middleware.
 *
 * The declaration is validated when `middleware()` runs (ruling 14: `failMode` is required;
 * ruling 15: durations; R2: no `open` in the baseline band), in the order of I4.
 *
 * A middleware is called as `(event, envelope, signal)`. It may be an `async` function (the
 * usual form) or a plain one: a plain function's synchronous throw is a failure like a
 * rejected promise, and its returned value is judged like a resolved one. `signal` is an
 * `AbortSignal` that aborts when the middleware's timeout runs out (the bus then stops
 * waiting for it): pass it on to `fetch`, timers and the like so abandoned work stops.
 * Returning `undefined` or `null` means `Continue()`.
 *
 * The signal is made only for a middleware that asks for it by declaring the parameter: a
 * function (or `call` method) with three or more parameters (`fn.length >= 3`) gets a fresh
 * `AbortSignal` on every call; one declared with fewer gets `undefined` as its third argument,
 * and the bus makes no signal for it. A rest parameter (`(...args)`) or a default value
 * (`signal = x`) does not count in `fn.length`: declare `signal` as a plain third parameter.
 * Whether or not it has a signal, a middleware still times out (ruling 10).
 */

import type { HookPoint } from "./catalogue.js";
import { declare, snakeCase, type Band, type Declaration, type DeclarationOptions, type FailMode, type Mode } from "./declaration.js";
import type { Duration } from "./duration.js";
import type { MatchOptions } from "./matcher.js";
import type { Envelope } from "./envelope.js";
import type { Event, EventOf } from "./events.js";
import type { Outcome } from "./outcomes.js";

/** What a middleware may answer: an outcome, or nothing (= `Continue()`). */
export type Answer<E extends Event = Event> = Outcome<E> | null | undefined | void;

/**
 * A middleware function. Declare `signal` (a plain third parameter) to be handed an
 * `AbortSignal` that aborts when the timeout runs out; without it, none is made.
 */
export type MiddlewareFn<E extends Event = Event> = (
  event: E,
  envelope: Envelope,
  signal: AbortSignal,
) => Answer<E> | PromiseLike<Answer<E>>;

/**
 * A middleware written as a class: its default name is the class name in snake case (I1).
 * As for a function, `call` is handed an `AbortSignal` only when it declares the parameter.
 */
export interface MiddlewareObject<E extends Event = Event> {
  call(event: E, envelope: Envelope, signal: AbortSignal): Answer<E> | PromiseLike<Answer<E>>;
}

export interface MiddlewareOptions<H extends HookPoint = HookPoint> {
  /** The hook points it attaches to; registration may narrow them, never widen them. */
  readonly hooks: readonly H[];
  /** Required: "closed" (a failure blocks) or "open" (it is recorded and the chain goes on). */
  readonly failMode: FailMode;
  /** The default band ("app"); registration may set another. */
  readonly band?: Band | undefined;
  /** A duration ("2s", "250ms") or seconds; none by default. */
  readonly timeout?: Duration | null | undefined;
  /** Which events it applies to (I22): `{ tool: "refund_*" }`; none: every event. */
  readonly match?: MatchOptions | null | undefined;
  /** `"enforce"` (the default) or `"audit"`: traced as what it would do, counts as a plain Continue (I25). */
  readonly mode?: Mode | null | undefined;
  /** Defaults to the function's name, or the class name in snake case. */
  readonly name?: string | undefined;
}

/** A declared middleware, ready for `bus.register()`. */
export interface Middleware<H extends HookPoint = HookPoint> {
  readonly declaration: Declaration;
  /** Calls the middleware as the bus does. */
  call(event: EventOf<H>, envelope: Envelope, signal: AbortSignal): Answer<EventOf<H>> | PromiseLike<Answer<EventOf<H>>>;
}

const made = new WeakSet<object>();
/** The declared middleware whose function declares a third parameter (`signal`). */
const signalled = new WeakSet<object>();

/**
 * Whether the bus hands `declared` an `AbortSignal` on each call: true when its function (or
 * `call` method) declares three or more parameters (`fn.length >= 3`).
 */
export function wantsSignal(declared: Middleware): boolean {
  return signalled.has(declared);
}

/** Whether `value` was made by `middleware()`. */
export function isMiddleware(value: unknown): value is Middleware {
  return typeof value === "object" && value !== null && made.has(value);
}

/**
 * Declares `target` as middleware of `options.hooks`; the event type follows from the hooks
 * (`hooks: ["tool.before"]` → `ToolCallEvent`). Throws a `DeclarationError` (I4 order) for a
 * bad declaration and a `TypeError` when `target` is neither a function nor has `call`.
 */
export function middleware<const H extends HookPoint>(
  options: MiddlewareOptions<H>,
  target: MiddlewareFn<EventOf<H>> | MiddlewareObject<EventOf<H>>,
): Middleware<H> {
  const call = callable(target);
  const given: unknown = (options as { readonly name?: unknown }).name;
  const name = given === undefined || given === null ? defaultName(target) : given;
  const declaration = declare({ ...options, name } as unknown as DeclarationOptions<H>);
  const declared: Middleware<H> = Object.freeze({ declaration, call });
  made.add(declared);
  const fn: unknown = typeof target === "function" ? target : target.call;
  if (typeof fn === "function" && fn.length >= 3) signalled.add(declared);
  return declared;
}

function callable<E extends Event>(target: MiddlewareFn<E> | MiddlewareObject<E>): MiddlewareFn<E> {
  if (typeof target === "function") return target;
  if (typeof target === "object" && target !== null && typeof target.call === "function") {
    return (event, envelope, signal) => target.call(event, envelope, signal);
  }
  throw new TypeError("middleware needs a function, or an object with a call(event, envelope, signal) method");
}

function defaultName(target: object): string {
  if (typeof target === "function") return target.name;
  return snakeCase(target.constructor.name);
}
