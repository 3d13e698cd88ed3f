/** `HookBus`: register middleware, see the chains, emit events. */

import { catalogueIndex, type HookPoint } from "./catalogue.js";
import { RunContext } from "./context.js";
import { contractMode, type ContractMode } from "./contracts.js";
import { deadlineMs, deadlinesOf } from "./deadline.js";
import { debugEnabled, watched } from "./debug.js";
import type { Duration } from "./duration.js";
import type { Declaration, Overrides } from "./declaration.js";
import { eventTypeMismatch } from "./errors.js";
import { EVENT_TYPES, typeNameOf, type EventOf } from "./events.js";
import type { Layer } from "./layer.js";
import { identityScheme, type IdentityScheme } from "./identity.js";
import { isMiddleware, wantsSignal, type Middleware } from "./middleware.js";
import type { HookResult } from "./outcomes.js";
import { keyedPlan, planFor, Registry, type Call } from "./registry.js";
import { shown } from "./shown.js";
import { walk } from "./walk.js";

/** What a bus is built with. */
export interface HookBusOptions {
  /**
   * The hook-contract mode (I14, docs/contracts.md): undefined (the default) checks nothing;
   * "warn" traces a modification that breaks a contract rule and lets it flow on; "strict"
   * makes it a failure of the middleware (`contract_violation`), handled by its fail mode.
   * Any other value is a `RegistrationError` (`invalid_contracts`) naming it.
   */
  readonly contracts?: ContractMode | undefined;
  /**
   * A chain deadline per hook point (I26, docs/harness-spec.md): a time budget for the whole
   * chain of each emit there, on top of each middleware's timeout (`"2s"`, `0.5`). When it
   * passes, the middleware running is cut off (a `deadline` failure) and the ones not started
   * are skipped (`skipped`); a closed one blocks with code `chain_deadline`. A bad value is a
   * `RegistrationError` (`invalid_deadline`).
   */
  readonly deadlines?: Readonly<Partial<Record<HookPoint, Duration>>> | undefined;
  /**
   * The content-identity scheme (I27): undefined (the default) computes nothing; "jcs-sha256"
   * gives every hook record `input_identity` and `enforced_identity`, the SHA-256 of the
   * RFC 8785 form of the event given and of the event the chain left (null for an event
   * outside I-JSON). Any other value is a `RegistrationError` (`invalid_identity`).
   */
  readonly identity?: IdentityScheme | undefined;
}

export interface EmitOptions {
  /**
   * This emit's own chain deadline (I26: seconds or a duration string; `0` is a budget
   * already spent); the earlier of it and the hook point's applies. A bad value is an
   * `EmitError` (`invalid_deadline`): nothing runs.
   */
  readonly deadline?: Duration | undefined;
  /**
   * Cancels the emit from outside: the middleware running is abandoned (its signal, if it
   * declared one, aborts) and `emit` rejects with the signal's reason. This is not a failure
   * of that middleware:
   * records of middleware that finished stay in the trace, no hook record is written (I12).
   */
  readonly signal?: AbortSignal;
}

/** What `register()` is told: the overrides of I10, or the layer that declares the middleware. */
export interface RegisterOptions<H extends HookPoint = HookPoint> extends Overrides<H> {
  /**
   * Registers the middleware as an item of a harness spec declared in this layer (I13): the
   * layer sets the band (the declared band is ignored), and `band` may only restate it or move
   * it inward (ruling 16); only the profile layers give baseline (S8).
   */
  readonly layer?: Layer | undefined;
}

/**
 * What a chain calls for one middleware (`HookBus.handler`): the event, the envelope and the
 * abort signal of its timeout (`undefined` when it has none); it returns an answer or a promise
 * of one.
 */
export type Handler = (event: unknown, envelope: unknown, signal: AbortSignal | undefined) => unknown;

/**
 * The hook bus: every middleware of a hook point, in a predictable order.
 *
 * Run order is band (baseline, platform, app, task), then registration order; outbound hook
 * points run it in reverse (rules 1-2). The most severe answer wins (rule 3); each
 * middleware's timeout and fail mode are enforced (rule 4); every answer is traced.
 */
export class HookBus {
  readonly #registry = new Registry();
  /**
   * What the chain calls for each registered middleware, by name (`handler`): kept in step
   * with `register` and `unregister` here, so the registry and the emit path stay as they are.
   */
  readonly #handlers = new Map<string, Call>();
  readonly #contracts: ContractMode | undefined;
  /** The chain deadline of each hook point in ms (I26), by catalogue index. */
  readonly #deadlines: readonly (number | undefined)[];
  readonly #identity: IdentityScheme | undefined;

  constructor(options: HookBusOptions = {}) {
    this.#contracts = contractMode(options.contracts);
    this.#deadlines = deadlinesOf(options.deadlines);
    this.#identity = identityScheme(options.identity);
  }

  /** The chain deadline of `hook` in seconds (I26), or undefined. */
  deadline(hook: HookPoint): number | undefined {
    this.#registry.plan(hook); // an unknown hook point is an error, as for `chain`
    const ms = this.#deadlines[catalogueIndex(hook)];
    return ms === undefined ? undefined : ms / 1000;
  }

  /** The hook-contract mode: "warn", "strict" or undefined (nothing checked). */
  get contracts(): ContractMode | undefined {
    return this.#contracts;
  }

  /** The content-identity scheme (I27): "jcs-sha256" or undefined (no identities). */
  get identity(): IdentityScheme | undefined {
    return this.#identity;
  }

  /**
   * Registers a declared middleware. `options` may set the name, band, fail mode and
   * timeout and narrow the hooks (I10); R2 is checked on the result, then the name must be
   * new (I2). With `layer` it is registered as a harness spec's item of that layer: the layer
   * sets the band, which `band` may only restate or move inward (I13, ruling 16, S8); the
   * layer is checked first. Returns the declaration as registered; throws a `RegistrationError`.
   */
  register<H extends HookPoint>(middleware: Middleware<H>, options?: RegisterOptions<H>): Declaration {
    if (!isMiddleware(middleware)) {
      throw new TypeError("register() needs a middleware declared with middleware(options, fn)");
    }
    // The middleware's own function (for an object, `middleware()` made one that calls its
    // method): the walk calls it as it is, without a wrapper of the bus in between.
    let call = middleware.call as Call;
    // NODE_DEBUG=harnessweaver: what it throws goes to stderr too (docs/logging.md); asked here,
    // once, so that with it off the walk calls the middleware's own function.
    if (debugEnabled()) call = watched(call, typeof options?.name === "string" ? options.name : middleware.declaration.name);
    const declaration = this.#registry.register(middleware.declaration, call, options, wantsSignal(middleware));
    this.#handlers.set(declaration.name, call);
    return declaration;
  }

  /** Removes a middleware by name; an emit in flight keeps the chain it started with (I11). */
  unregister(name: string): Declaration {
    const declaration = this.#registry.unregister(name);
    this.#handlers.delete(declaration.name);
    return declaration;
  }

  /**
   * What the chain calls for the middleware registered as `name`: `handler(event, envelope,
   * signal)`, returning an answer or a promise of one. It is the middleware alone, with none
   * of the bus around it (no timeout, fail mode or trace): `harnessweaver bench` times a
   * chain's handlers in a plain loop as the floor an emit is compared with (Python's
   * `HookBus.handler`). An unknown name is a RangeError naming it and the registered names.
   */
  handler(name: string): Handler {
    const found = this.#handlers.get(name);
    if (found !== undefined) return found;
    const known = [...this.#handlers.keys()].sort().join(", ") || "none";
    throw new RangeError(`no middleware ${shown(name)} on this bus (registered: ${known})`);
  }

  /** The run order of `hook`: band, registration order, direction applied. */
  chain(hook: HookPoint): readonly Declaration[] {
    return this.#registry.plan(hook).entries.map((entry) => entry.declaration);
  }

  /**
   * The run order of an event of `hook` whose key (I22: `tool.name` on tool hook points,
   * `request.model` on `model.before`) is `value`: `chain` without the middleware whose
   * matcher does not match it (null: a key absent, which matches).
   */
  chainFor(hook: HookPoint, value: string | null): readonly Declaration[] {
    const plan = this.#registry.plan(hook);
    return (value === null ? plan : planFor(plan, value)).entries.map((entry) => entry.declaration);
  }

  /**
   * Runs `hook`'s chain on `event` in `context` and returns the combined outcome and the
   * event as the chain left it. An unknown hook point or an event of another type is an
   * `EmitError` (I7): then nothing runs and nothing is traced.
   */
  emit<H extends HookPoint>(
    hook: H,
    event: EventOf<H>,
    context: RunContext,
    options?: EmitOptions,
  ): Promise<HookResult<EventOf<H>>> {
    // Not an `async` method: the walk's promise is returned as it is, without one more promise
    // and await around it; a caller error is a rejection all the same. Nothing is allocated
    // before the walk: what the chain needs to know is worked out when it is planned.
    let signal: AbortSignal | undefined;
    let budget: number | undefined;
    let plan;
    try {
      plan = this.#registry.plan(hook);
      if (!(context instanceof RunContext)) throw new TypeError("emit() needs a RunContext");
      if (!(event instanceof plan.eventType)) throw eventTypeMismatch(hook, EVENT_TYPES[hook].typeName, typeNameOf(event));
      budget = this.#deadlines[plan.hookIndex];
      if (options !== undefined) {
        signal = options.signal;
        // I26: the emit's own deadline, checked after the event like I7 (nothing runs).
        if (options.deadline !== undefined) {
          const own = deadlineMs(options.deadline, hook, true, "emit");
          budget = budget === undefined ? own : Math.min(budget, own);
        }
      }
      signal?.throwIfAborted(); // checked first: an I7 caller error runs and traces nothing
    } catch (error) {
      return Promise.reject(error);
    }
    // I22: only a chain with matchers on this hook point reads its key from the event.
    if (plan.key !== null) plan = keyedPlan(plan, event);
    return walk(plan, event, context.envelope, context.trace, signal, this.#contracts, budget, this.#identity) as Promise<
      HookResult<EventOf<H>>
    >;
  }
}
