/**
 * The corpus's closed behaviour vocabulary (INTERPRETING.md §3), implemented natively: a
 * case's declaration becomes a real middleware whose body does what its behaviour says.
 *
 * Beyond §3, behind the feature tag `throw-values` (proposed for the corpus):
 * `{"throw": V}` throws the JSON value V itself, not an Error (a rejected promise), and
 * `{"throw": V, "sync": true}` at the top of a behaviour throws it synchronously from a
 * plain (non-async) middleware function.
 */

import type { Envelope } from "../envelope.js";
import type { Event } from "../events.js";
import { frozenJson, isPlainObject, jsonEqual, thawJson } from "../json.js";
import type { Answer, MiddlewareFn } from "../middleware.js";
import { Block, Continue, Escalate, Retry, Suspend } from "../outcomes.js";
import { CedarPolicySet, hookOf } from "../policies/cedar.js";
import { ABSENT, append, lookup, put } from "./paths.js";
import { busy, sleep } from "./waiting.js";

export const THROW_VALUES = "throw-values";
/** The feature of the `cedar` behaviour: declared when @cedar-policy/cedar-wasm is installed. */
export const CEDAR = "cedar";

type Node = Readonly<Record<string, unknown>>;

/** What behaviours need from the case that runs them. */
export interface Host {
  /** The catalogue sample of a hook point, as an event. */
  sample(hook: unknown): Event;
  register(declaration: unknown): void;
  unregister(name: unknown): void;
  /** The `ran` list of the emit in progress. */
  ran(): string[] | undefined;
  /** The runner cannot go on with the case (an unknown behaviour, a failed register step). */
  fatal(error: unknown): void;
  readonly features: ReadonlySet<string>;
}

/** A behaviour the runner cannot perform: the case is reported as `errored`. */
export class BehaviourError extends Error {
  override readonly name = "BehaviourError";
}

export class Behaviours {
  readonly #host: Host;
  /** Calls per `sequence` node (by identity, so a node shared by two registrations counts both). */
  readonly #calls = new Map<object, number>();
  /** The compiled policy set of each `cedar` node: one per declaration. */
  readonly #compiled = new WeakMap<object, CedarPolicySet>();

  constructor(host: Host) {
    this.#host = host;
  }

  /** A middleware body named `name` doing `behaviour`. */
  function(name: string, behaviour: unknown): MiddlewareFn {
    const node = this.#node(behaviour);
    const host = this.#host;
    if ("throw" in node && node["sync"] === true) {
      this.#needs(THROW_VALUES);
      const thrown = frozenJson(node["throw"], "throw");
      return function behaviour() {
        host.ran()?.push(name);
        throw thrown; // deliberately not an Error: the bus records NonErrorThrown (I5)
      };
    }
    const perform = (event: Event, envelope: Envelope, signal: AbortSignal) => this.perform(node, event, envelope, signal);
    return async function behaviour(event, envelope, signal) {
      host.ran()?.push(name);
      return perform(event, envelope, signal);
    };
  }

  async perform(b: Node, event: Event, env: Envelope, signal: AbortSignal): Promise<Answer> {
    const then = () => this.perform(this.#node(b["then"]), event, env, signal);
    if ("return" in b) return this.#answer(b, event);
    if ("raise" in b) throw raised(b["raise"], b["message"]);
    if ("raise_cancelled" in b) {
      // The runtime's cancellation, the caller not cancelled (I15): what an aborted fetch throws.
      const controller = new AbortController();
      controller.abort();
      throw controller.signal.reason;
    }
    if ("throw" in b) {
      this.#needs(THROW_VALUES);
      throw frozenJson(b["throw"], "throw");
    }
    if ("sleep" in b) return sleep(this.#seconds(b["sleep"]), signal).then(then);
    if ("busy" in b) {
      busy(this.#seconds(b["busy"]));
      return then();
    }
    if ("if" in b) {
      const chosen = this.#holds(this.#node(b["if"]), event, env) ? b["then"] : b["else"];
      return this.perform(this.#node(chosen ?? { return: "none" }), event, env, signal);
    }
    if ("sequence" in b) return this.perform(this.#next(b), event, env, signal);
    if ("mutate" in b) {
      mutate(event, this.#node(b["mutate"]), (error) => this.#fatal(error));
      return then();
    }
    if ("cedar" in b) return this.#cedar(this.#node(b["cedar"])).decide(hookOf(event), event, env.attributes);
    if ("register" in b) {
      this.#guard(() => this.#host.register(b["register"]));
      return then();
    }
    if ("unregister" in b) {
      this.#guard(() => this.#host.unregister(b["unregister"]));
      return then();
    }
    throw this.#fatal(new BehaviourError(`unknown behaviour ${JSON.stringify(b)}`));
  }

  /**
   * `{"cedar": {...}}` (I38): the declaration's engine object, compiled on its first call from
   * the texts, named `policies`, `schema` and `entities` in load errors.
   */
  #cedar(node: Node): CedarPolicySet {
    this.#needs(CEDAR);
    let found = this.#compiled.get(node);
    if (found === undefined) {
      const text = (key: string) => (typeof node[key] === "string" ? { file: key, text: node[key] } : null);
      const entities = node["entities"] === undefined || node["entities"] === null ? null : { file: "entities", text: JSON.stringify(node["entities"]) };
      found = CedarPolicySet.compile([text("policies") ?? { file: "policies", text: "" }], {
        schema: text("schema"),
        schemaFormat: node["schema_format"] === "json" ? "json" : "cedar",
        entities,
        namespace: typeof node["namespace"] === "string" ? node["namespace"] : null,
        noDecision: node["no_decision"] === "continue" ? "continue" : "block",
        onError: node["on_error"] === "skip" ? "skip" : "fail",
      });
      this.#compiled.set(node, found);
    }
    return found;
  }

  #answer(b: Node, event: Event): Answer {
    const kind = b["return"];
    const text = (key: string) => b[key] as string;
    // I24: the JSON value as it is, whatever its type (invalid ones are the point).
    const warnings = (b["warnings"] ?? null) as readonly string[] | null;
    const options = { code: b["code"] as string | null, warnings };
    switch (kind) {
      case "none":
        return undefined;
      case "value":
        return thawJson(frozenJson(b["value"], "value")) as unknown as Answer; // not an outcome
      case "continue":
        if ("modify" in b) return Continue(modified(event, this.#node(b["modify"])), { warnings });
        if ("modified_as" in b) return Continue(this.#host.sample(b["modified_as"]), { warnings });
        return Continue(null, { warnings });
      case "block":
        return Block(text("reason"), options);
      case "suspend":
        return Suspend(text("reason"), { ...options, approverRole: b["approver_role"] as string | null });
      case "escalate":
        return Escalate(text("reason"), { ...options, to: b["to"] as string | null });
      case "retry":
        return Retry(text("reason"), {
          ...options,
          delay: b["delay"] as number | null,
          maxAttempts: b["max_attempts"] as number | null,
        });
      default:
        throw this.#fatal(new BehaviourError(`unknown return kind ${JSON.stringify(kind)}`));
    }
  }

  #holds(cond: Node, event: Event, env: Envelope): boolean {
    if ("weekend" in cond && env.clock.isWeekend() !== cond["weekend"]) return false;
    if ("path" in cond) {
      const value = lookup(event.toJSON(), String(cond["path"]));
      if ("equals" in cond && (value === ABSENT || !jsonEqual(value, cond["equals"]))) return false;
      if ("greater_than" in cond && !(typeof value === "number" && value > Number(cond["greater_than"]))) return false;
    }
    return true;
  }

  #next(b: Node): Node {
    const steps = b["sequence"];
    if (!Array.isArray(steps) || steps.length === 0) throw this.#fatal(new BehaviourError("sequence needs behaviours"));
    const calls = this.#calls.get(b) ?? 0;
    this.#calls.set(b, calls + 1);
    return this.#node(steps[Math.min(calls, steps.length - 1)]);
  }

  #node(value: unknown): Node {
    if (!isPlainObject(value)) throw this.#fatal(new BehaviourError(`a behaviour is an object, got ${JSON.stringify(value)}`));
    return value;
  }

  #seconds(value: unknown): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw this.#fatal(new BehaviourError(`a time in seconds is a number ≥ 0, got ${JSON.stringify(value)}`));
    }
    return value;
  }

  #needs(feature: string): void {
    if (!this.#host.features.has(feature)) {
      throw this.#fatal(new BehaviourError(`this behaviour needs the runner feature ${feature}`));
    }
  }

  /** A register/unregister error inside a middleware fails the case as `errored` (§3). */
  #guard(action: () => void): void {
    try {
      action();
    } catch (error) {
      throw this.#fatal(error);
    }
  }

  #fatal(error: unknown): unknown {
    this.#host.fatal(error);
    return error;
  }
}

/** `{"raise": T, "message": M}`: an Error whose `name` is T (I5). */
export function raised(type: unknown, message: unknown): Error {
  const error = new Error(typeof message === "string" ? message : "");
  error.name = String(type);
  return error;
}

/** A copy of `event` with the `set` and `append` changes of §3 applied, in order. */
export function modified(event: Event, change: Node): Event {
  const data = event.toJSON();
  const each = (key: string) => Object.entries(isPlainObject(change[key]) ? change[key] : {});
  for (const [path, value] of each("set")) put(data, path, thawJson(frozenJson(value, path)));
  for (const [path, value] of each("append")) append(data, path, thawJson(frozenJson(value, path)));
  return (event.constructor as unknown as { fromJSON(data: unknown): Event }).fromJSON(data);
}

/**
 * `{"mutate": {"set": {P: V}}}`: tries to change the event itself, as a careless middleware
 * would, assigning V at each path P in place (§3). Events are frozen all the way down (I18), so
 * in strict-mode code the assignment throws a TypeError: the middleware's failure. A path that
 * leads nowhere is the case's fault (`fatal`).
 */
export function mutate(event: Event, change: Node, fatal: (error: unknown) => unknown): void {
  const set = isPlainObject(change["set"]) ? change["set"] : {};
  for (const [path, value] of Object.entries(set)) {
    const parts = path.split(".");
    const last = parts.pop() ?? "";
    let here: unknown = event;
    for (const part of parts) {
      const next = step(here, part);
      if (next === ABSENT) throw fatal(new BehaviourError(`mutate: ${path} leads nowhere in the event`));
      here = next;
    }
    const target = here as Record<string, unknown>;
    target[propertyOf(here, last)] = thawJson(frozenJson(value, path));
  }
}

/** The camelCase property of a model that a JSON key names; other keys are themselves. */
function propertyOf(here: unknown, key: string): string {
  const schema = (here as { constructor?: { schema?: Record<string, { json: string }> } }).constructor?.schema;
  if (schema === undefined || isPlainObject(here) || Array.isArray(here)) return key;
  return Object.entries(schema).find(([, field]) => field.json === key)?.[0] ?? key;
}

function step(here: unknown, part: string): unknown {
  if (Array.isArray(here)) return /^[0-9]+$/.test(part) && Number(part) < here.length ? here[Number(part)] : ABSENT;
  if (typeof here !== "object" || here === null) return ABSENT;
  const key = propertyOf(here, part);
  return Object.hasOwn(here, key) ? (here as Record<string, unknown>)[key] : ABSENT;
}
