/**
 * Hostile values for the tests of issue 13: what a middleware may throw or return that runs
 * code (or refuses to) when the bus looks at it. Each carries `SECRET` somewhere a careless
 * bus would copy it from (a message, a thrown value, a name), so a test can check that the
 * secret never reaches a result, a trace or a rejection (R9). Not a test file itself.
 */

import { types } from "node:util";
import {
  Envelope,
  HookBus,
  middleware,
  outcomeJSON,
  RunContext,
  type Answer,
  type FailMode,
  type HookResult,
  type ToolCallEvent,
} from "../index.js";
import { toolCall } from "./support.js";

/** The marker: a bus that keeps R9 never shows it. It is no type name (it has a space). */
export const SECRET = "s3cr3t-0xC0FFEE marker";

/** Every trap a Proxy handler may have. */
export const TRAPS = [
  "apply",
  "construct",
  "defineProperty",
  "deleteProperty",
  "get",
  "getOwnPropertyDescriptor",
  "getPrototypeOf",
  "has",
  "isExtensible",
  "ownKeys",
  "preventExtensions",
  "set",
  "setPrototypeOf",
] as const;

/** A handler whose every trap throws `thrown()` (a fresh value each time). */
export function throwingHandler(thrown: () => unknown): ProxyHandler<object> {
  const handler: Record<string, () => never> = {};
  for (const trap of TRAPS) {
    handler[trap] = () => {
      throw thrown();
    };
  }
  return handler;
}

/** A Proxy (of a function, so `apply` and `construct` count too) whose every trap throws. */
export function trapEverything(thrown: () => unknown = () => new Error(SECRET)): object {
  return new Proxy(function target() {}, throwingHandler(thrown));
}

/** A Proxy whose every trap throws the Proxy itself: whatever the bus catches is hostile again. */
export function selfThrowingProxy(): object {
  const proxy: object = new Proxy(function target() {}, throwingHandler(() => proxy));
  return proxy;
}

/** A revoked Proxy: every operation on it throws a TypeError. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable(new Error(SECRET), {});
  revoke();
  return proxy;
}

/** An object whose `property` getter throws `thrown`. */
export function throwingGetter<T extends object>(target: T, property: PropertyKey, thrown: unknown): T {
  return Object.defineProperty(target, property, {
    get() {
      throw thrown;
    },
    configurable: true,
  });
}

/** An Error subclass whose `name` is a getter answering `name()`. */
export function errorNamed(name: () => unknown): Error {
  class Hostile extends Error {
    override get name(): string {
      return name() as string;
    }
  }
  return new Hostile(SECRET);
}

/** A non-Promise thenable whose `then` does `act(resolve, reject)`. */
export function thenable(act: (resolve: (value: unknown) => void, reject: (reason: unknown) => void) => void): PromiseLike<never> {
  return { then: act } as unknown as PromiseLike<never>;
}

export interface Ran {
  readonly result: HookResult<ToolCallEvent>;
  readonly context: RunContext;
  /** Everything the emit let out: the outcome, the event and the trace, as JSON text. */
  readonly shown: string;
}

/**
 * Emits `tool.before` on a bus with one middleware named `guard` answering `answer()` (a
 * plain function: a synchronous throw stays synchronous), and `after`, which passes.
 */
export async function emitWith(
  answer: () => Answer | PromiseLike<Answer>,
  options: {
    readonly failMode?: FailMode;
    readonly timeout?: string | number | null;
    readonly contracts?: "warn" | "strict";
    /** The event emitted (default `toolCall()`) and the context's run id (default a random one). */
    readonly event?: ToolCallEvent;
    readonly runId?: string;
  } = {},
): Promise<Ran> {
  const bus = new HookBus({ contracts: options.contracts });
  const failMode = options.failMode ?? "closed";
  bus.register(middleware({ name: "guard", hooks: ["tool.before"], failMode, timeout: options.timeout ?? null }, () => answer()));
  bus.register(middleware({ name: "after", hooks: ["tool.before"], failMode: "closed" }, () => undefined));
  const context = new RunContext({ envelope: new Envelope(options.runId === undefined ? {} : { runId: options.runId }) });
  let result: HookResult<ToolCallEvent>;
  try {
    result = await bus.emit("tool.before", options.event ?? toolCall(), context);
  } catch (error) {
    // Not rethrown: the test runner would look into a hostile value (and may die of it).
    throw new Error(`emit rejected (issue 13)${rejectionShowsSecret(error) ? ", showing the secret" : ""}`);
  }
  const shown = JSON.stringify([outcomeJSON(result.outcome), result.event.toJSON(), context.trace.toJSONL()]);
  return { result, context, shown };
}

/** Whether a rejection's reason shows the secret, looked at without running its code. */
function rejectionShowsSecret(reason: unknown): boolean {
  if (typeof reason === "string") return reason.includes(SECRET);
  if (typeof reason !== "object" || reason === null || types.isProxy(reason)) return false;
  try {
    return Object.getOwnPropertyNames(reason).some((key) => {
      const value = Object.getOwnPropertyDescriptor(reason, key)?.value as unknown;
      return typeof value === "string" && value.includes(SECRET);
    });
  } catch {
    return false;
  }
}
