/**
 * Running one corpus case on a fresh bus and observing it (INTERPRETING.md §2, §4, §6.1).
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { HookBus, type HookBusOptions } from "../bus.js";
import type { ContractMode } from "../contracts.js";
import { HOOK_POINTS, isHookPoint, type HookPoint } from "../catalogue.js";
import { RunContext } from "../context.js";
import type { Overrides } from "../declaration.js";
import type { Duration } from "../duration.js";
import { Envelope, FixedClock } from "../envelope.js";
import { HarnessweaverError } from "../errors.js";
import { eventFromJSON, type Event } from "../events.js";
import type { IdentityScheme } from "../identity.js";
import { isPlainObject } from "../json.js";
import { declareIn, type Layer } from "../layer.js";
import { middleware, type MiddlewareOptions } from "../middleware.js";
import { outcomeJSON } from "../outcomes.js";
import { Behaviours, BehaviourError } from "./behaviours.js";
import { ApprovalsCase } from "./approvals.js";
import { HarnessCase, problemsJson } from "./harness.js";
import { SpecError } from "../spec/errors.js";

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

const OVERRIDE_KEYS: Readonly<Record<string, string>> = {
  name: "name",
  hooks: "hooks",
  band: "band",
  fail_mode: "failMode",
  timeout: "timeout",
  match: "match",
  mode: "mode",
};

/**
 * Maps a declaration's `register` object (corpus spelling) to `Overrides`, values as written.
 * A spec item (`layered`, §2) may also say `enabled` (a boolean); a registration may not.
 */
function overrides(raw: unknown, layered: boolean): { readonly given: Overrides; readonly enabled: boolean } {
  const given = raw === undefined ? {} : object(raw, "register");
  const out: Record<string, unknown> = {};
  let enabled = true;
  for (const [key, value] of Object.entries(given)) {
    const mapped = OVERRIDE_KEYS[key];
    if (key === "enabled" && layered && typeof value === "boolean") enabled = value;
    else if (key === "enabled") throw new BehaviourError(`enabled must be a boolean of a spec item (with "in"), got ${JSON.stringify(value)}`);
    else if (mapped === undefined) throw new BehaviourError(`unknown registration override ${key}`);
    else out[mapped] = value;
  }
  return { given: out as Overrides, enabled };
}

class CaseRun {
  /** The case's bus; for a harness case (§2, `given.harness`), the one the loader builds. */
  #bus: HookBus;
  /** A harness case's `harnessweaver hooks --format json` document (§6.1). */
  #harness: Json | undefined;
  /** What building the bus as the case gives it threw: observed as the case's error (§6.1). */
  readonly #refused: HarnessweaverError | undefined;
  readonly #clock: FixedClock;
  readonly #contexts = new Map<string, RunContext>();
  readonly #emits: Json[] = [];
  readonly #behaviours: Behaviours;
  /** How many emits the case has begun (the scripted store's `down` counts them, I33). */
  #emitted = 0;
  #fatal: { error: unknown } | undefined;
  /** An approvals case's book and clock (`given.approvals`, I34); its steps' answers. */
  #approvals: ApprovalsCase | undefined;
  readonly #answers: Json[] = [];

  constructor(
    readonly testCase: Json,
    readonly samples: Json,
    features: ReadonlySet<string>,
  ) {
    const given = object(testCase["given"] ?? {}, "given");
    let bus: HookBus;
    try {
      // Passed as written: a bad value is the bus's error, observed like any other.
      bus = new HookBus({
        contracts: given["contracts"] as ContractMode | undefined,
        deadlines: given["deadlines"] as HookBusOptions["deadlines"],
        identity: given["identity"] as IdentityScheme | undefined,
      });
    } catch (error) {
      if (!(error instanceof HarnessweaverError)) throw error;
      this.#refused = error;
      bus = new HookBus(); // its chains are observed: empty, as nothing is registered
    }
    this.#bus = bus;
    const now = object(given["envelope"] ?? {}, "envelope")["now"] ?? DEFAULT_NOW;
    this.#clock = new FixedClock(String(now));
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
    const given = object(this.testCase["given"] ?? {}, "given");
    if ("approvals" in given) {
      // No bus of its own: its steps are the book's (I34).
      this.#approvals = new ApprovalsCase(object(given["approvals"], "approvals"), this.samples);
      return this.#observe(given);
    }
    if (!("harness" in given)) return this.#observe(given);
    const spec = new HarnessCase(object(given["harness"], "harness"), this.#behaviours, () => RAN.getStore(), () => this.#emitted);
    try {
      spec.open();
      let harness;
      try {
        harness = await spec.load();
      } catch (thrown) {
        if (!(thrown instanceof SpecError)) throw thrown;
        // Observed with its problems; no step runs (§6.1).
        const error = { kind: thrown.kind, rule: thrown.rule, message: thrown.message, problems: problemsJson(thrown) };
        return this.#observe(given, error);
      }
      this.#bus = harness.bus;
      this.#harness = spec.document(harness);
      return await this.#observe(given);
    } finally {
      spec.close();
    }
  }

  async #observe(given: Json, refused: Json | null = null): Promise<Reply> {
    let error: Json | null = refused;
    try {
      if (refused === null) {
        if (this.#refused !== undefined) throw this.#refused;
        for (const decl of list(given["middleware"])) this.#register(decl);
        for (const step of list(this.testCase["when"])) await this.#step(object(step, "step"));
      }
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
    const seen: Record<string, unknown> = this.#harness === undefined ? {} : { harness: this.#harness };
    if (this.#approvals !== undefined) seen["approvals"] = this.#answers;
    return { actual: { ...seen, error, chains, emits: this.#emits, traces } };
  }

  #sample(hook: unknown): Event {
    if (!isHookPoint(hook)) throw new BehaviourError(`no sample for hook point ${JSON.stringify(hook)}`);
    return eventFromJSON(hook, this.samples[hook]);
  }

  /**
   * Declares (all declaration checks) then registers with the overrides (§2). With `in` the
   * declaration is a spec item of that layer (I13); one with `enabled: false` is checked the
   * same way but not registered.
   */
  #register(raw: unknown): void {
    const decl = object(raw, "declaration");
    const layered = "in" in decl;
    const { given, enabled } = overrides(decl["register"], layered);
    const registered = given.name ?? decl["name"]; // a null override keeps the declared name
    const body = this.#behaviours.function(String(registered), decl["does"] ?? { return: "none" });
    const options: Record<string, unknown> = { hooks: decl["hooks"], name: decl["name"] };
    if ("band" in decl) options["band"] = decl["band"];
    if ("timeout" in decl) options["timeout"] = decl["timeout"];
    if ("fail_mode" in decl) options["failMode"] = decl["fail_mode"];
    if ("match" in decl) options["match"] = decl["match"];
    if ("mode" in decl) options["mode"] = decl["mode"];
    const declared = middleware(options as unknown as MiddlewareOptions, body);
    const layer = decl["in"] as Layer; // passed as written: an unknown layer is the bus's error
    if (!enabled) declareIn(declared.declaration, layer, given);
    else this.#bus.register(declared, layered ? { ...given, layer } : given);
  }

  async #step(step: Json): Promise<void> {
    if ("emit" in step) this.#emits.push(await this.#emit(step));
    else if ("register" in step) this.#register(step["register"]);
    else if ("unregister" in step) this.#bus.unregister(step["unregister"] as string);
    else if (this.#approvals !== undefined) this.#answers.push(await this.#approvals.step(step));
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
    if (context === undefined) {
      // One clock for the case; each context's run id is its name (§4, I21); its attributes
      // are given.contexts[name].attributes (I33).
      const contexts = object(object(this.testCase["given"] ?? {}, "given")["contexts"] ?? {}, "contexts");
      const attributes = object(object(contexts[name] ?? {}, `contexts.${name}`)["attributes"] ?? {}, "attributes");
      const envelope = new Envelope({ clock: this.#clock, runId: name, attributes });
      this.#contexts.set(name, (context = new RunContext({ envelope })));
    }
    this.#emitted += 1;
    let event: Event | null = null;
    if ("event_as" in step) event = this.#sample(step["event_as"]);
    else if (isHookPoint(hook)) event = eventFromJSON(hook, step["event"] ?? this.samples[hook]);
    const ran: string[] = [];
    const emitted = context;
    // The emit's own chain deadline (I26), passed exactly as written.
    const options = "deadline" in step ? { deadline: step["deadline"] as Duration } : undefined;
    const result = await RAN.run(ran, () => this.#bus.emit(hook as HookPoint, event as Event, emitted, options));
    const warnings = result.warnings.map(({ middleware, text }) => ({ middleware, text }));
    return { hook, outcome: outcomeJSON(result.outcome), event: result.event.toJSON(), ran, warnings };
  }
}

function list(value: unknown): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new BehaviourError(`expected a list, got ${JSON.stringify(value)}`);
  return value;
}
