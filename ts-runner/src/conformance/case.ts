/**
 * Running one corpus case on a fresh bus and observing it (INTERPRETING.md §2, §4, §6.1).
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { HookBus } from "../bus.js";
import { HOOK_POINTS, isHookPoint, type HookPoint } from "../catalogue.js";
import { RunContext } from "../context.js";
import type { Overrides } from "../declaration.js";
import { Envelope, FixedClock } from "../envelope.js";
import { HarnessweaverError } from "../errors.js";
import { eventFromJSON, type Event } from "../events.js";
import { isPlainObject } from "../json.js";
import { middleware, type MiddlewareOptions } from "../middleware.js";
import { outcomeJSON } from "../outcomes.js";
import { Behaviours, BehaviourError } from "./behaviours.js";

type Json = Readonly<Record<string, unknown>>;

const DEFAULT_NOW = "2026-11-30T12:00:00+00:00"; // a Monday (§2)
const RAN = new AsyncLocalStorage<string[]>(); // the `ran` list of each emit, concurrent ones apart

/** How the case ended: an observation, or the runner could not run it. */
export type Reply = { readonly actual: Json } | { readonly errored: true; readonly message: string };

export async function runCase(testCase: unknown, samples: Json, features: ReadonlySet<string>): Promise<Reply> {
  const run = new CaseRun(object(testCase, "case"), samples, features);
  try {
    return await run.run();
  } catch (error) {
    return { errored: true, message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}

function object(value: unknown, what: string): Json {
  if (!isPlainObject(value)) throw new BehaviourError(`${what} must be an object, got ${JSON.stringify(value)}`);
  return value;
}

/** Maps a declaration's `register` overrides (corpus spelling) to `Overrides`, values as written. */
function overrides(raw: unknown): Overrides {
  const given = raw === undefined ? {} : object(raw, "register");
  const keys: Record<string, string> = { name: "name", hooks: "hooks", band: "band", fail_mode: "failMode", timeout: "timeout" };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    const mapped = keys[key];
    if (mapped === undefined) throw new BehaviourError(`unknown registration override ${key}`);
    out[mapped] = value;
  }
  return out as Overrides;
}

class CaseRun {
  readonly #bus = new HookBus();
  readonly #envelope: Envelope;
  readonly #contexts = new Map<string, RunContext>();
  readonly #emits: Json[] = [];
  readonly #behaviours: Behaviours;
  #fatal: { error: unknown } | undefined;

  constructor(
    readonly testCase: Json,
    readonly samples: Json,
    features: ReadonlySet<string>,
  ) {
    const given = object(testCase["given"] ?? {}, "given");
    const now = object(given["envelope"] ?? {}, "envelope")["now"] ?? DEFAULT_NOW;
    this.#envelope = new Envelope({ clock: new FixedClock(String(now)), runId: "conformance" });
    this.#behaviours = new Behaviours({
      sample: (hook) => this.#sample(hook),
      register: (decl) => this.#register(decl),
      unregister: (name) => this.#bus.unregister(name as string),
      ran: () => RAN.getStore(),
      fatal: (error) => (this.#fatal ??= { error }),
      features,
    });
  }

  async run(): Promise<Reply> {
    let error: Json | null = null;
    try {
      const given = object(this.testCase["given"] ?? {}, "given");
      for (const decl of list(given["middleware"])) this.#register(decl);
      for (const step of list(this.testCase["when"])) await this.#step(object(step, "step"));
    } catch (thrown) {
      if (!(thrown instanceof HarnessweaverError)) throw thrown;
      error = { kind: thrown.kind, rule: thrown.rule, message: thrown.message };
    }
    if (this.#fatal !== undefined) throw this.#fatal.error;
    const chains = Object.fromEntries(HOOK_POINTS.map((hook) => [hook, this.#bus.chain(hook).map((d) => d.name)]));
    const traces = Object.fromEntries(
      [...this.#contexts].map(([name, context]) => [
        name,
        context.trace.records().map(({ t_ns: _t, duration_ns: _d, ...record }) => record),
      ]),
    );
    return { actual: { error, chains, emits: this.#emits, traces } };
  }

  #sample(hook: unknown): Event {
    if (!isHookPoint(hook)) throw new BehaviourError(`no sample for hook point ${JSON.stringify(hook)}`);
    return eventFromJSON(hook, this.samples[hook]);
  }

  /** Declares (all declaration checks) then registers with the overrides (§2). */
  #register(raw: unknown): void {
    const decl = object(raw, "declaration");
    const given = overrides(decl["register"]);
    const registered = "name" in given ? given.name : decl["name"];
    const body = this.#behaviours.function(String(registered), decl["does"] ?? { return: "none" });
    const options: Record<string, unknown> = { hooks: decl["hooks"], name: decl["name"] };
    if ("band" in decl) options["band"] = decl["band"];
    if ("timeout" in decl) options["timeout"] = decl["timeout"];
    if ("fail_mode" in decl) options["failMode"] = decl["fail_mode"];
    this.#bus.register(middleware(options as unknown as MiddlewareOptions, body), given);
  }

  async #step(step: Json): Promise<void> {
    if ("emit" in step) this.#emits.push(await this.#emit(step));
    else if ("register" in step) this.#register(step["register"]);
    else if ("unregister" in step) this.#bus.unregister(step["unregister"] as string);
    else if ("concurrent" in step) await this.#concurrent(list(step["concurrent"]));
    else throw new BehaviourError(`unknown step ${JSON.stringify(step)}`);
  }

  /** Starts the emits together; completed ones keep their observations, in listed order. */
  async #concurrent(steps: readonly unknown[]): Promise<void> {
    const settled = await Promise.allSettled(steps.map((step) => this.#emit(object(step, "step"))));
    for (const result of settled) if (result.status === "fulfilled") this.#emits.push(result.value);
    const failed = settled.find((result) => result.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  }

  async #emit(step: Json): Promise<Json> {
    const hook = step["emit"];
    const name = String(step["context"] ?? "main");
    let context = this.#contexts.get(name);
    if (context === undefined) this.#contexts.set(name, (context = new RunContext({ envelope: this.#envelope })));
    let event: Event | null = null;
    if ("event_as" in step) event = this.#sample(step["event_as"]);
    else if (isHookPoint(hook)) event = eventFromJSON(hook, step["event"] ?? this.samples[hook]);
    const ran: string[] = [];
    const emitted = context;
    const result = await RAN.run(ran, () => this.#bus.emit(hook as HookPoint, event as Event, emitted));
    return { hook, outcome: outcomeJSON(result.outcome), event: result.event.toJSON(), ran };
  }
}

function list(value: unknown): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new BehaviourError(`expected a list, got ${JSON.stringify(value)}`);
  return value;
}
