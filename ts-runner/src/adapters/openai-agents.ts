/**
 * The bus inside the OpenAI Agents SDK for JavaScript (`harnessweaver/openai-agents`; needs the
 * optional peer `@openai/agents`).
 *
 * ```ts
 * const adapter = new OpenAIAgentsAdapter(harness);        // a loaded harness (its .bus) or a HookBus
 * const agent = adapter.guard(myAgent);                    // its function tools and model, guarded
 * const run = adapter.newRun({ runId: "refund-7" });       // one RunContext per run
 * let result = await run.run(agent, "Refund order 7");
 * if (result.interruptions.length > 0) {                   // a Suspend at tool.before
 *   result.state.approve(result.interruptions[0]!);        // or .reject(item, { message: denial("why") })
 *   result = await run.run(agent, result.state);
 * }
 * ```
 *
 * What maps to what, and what the SDK cannot express: docs/integrations/openai-agents-js.md.
 */

import { Agent, Handoff, Runner, type AgentOutputType, type FunctionTool, type Model, type RunConfig, type Tool } from "@openai/agents";
import { HookBus } from "harnessweaver";
import type { Approvals } from "../approvals/index.js";
import { guardModel, guardProvider, isGuardedModel } from "./openai-agents/model.js";
import { GuardedRun, type GuardedRunOptions } from "./openai-agents/run.js";
import { guardTool } from "./openai-agents/tools.js";

export { guardModel, guardProvider, isGuardedModel } from "./openai-agents/model.js";
export { currentRun, GuardedRun, type GuardedRunOptions, type RunOptions, type ToolCallRecord } from "./openai-agents/run.js";
export { GuardedStream } from "./openai-agents/stream.js";
export { HarnessStopped, type StopKind } from "./openai-agents/stops.js";
export { denial, GUARDRAIL, guardTool, isGuardedTool, refusal } from "./openai-agents/tools.js";
export { tool } from "./openai-agents/failing.js";

/** What the adapter takes besides its bus. */
export interface AdapterOptions {
  /** Durable approvals for every run (a run's own `approvals` option overrides it). */
  readonly approvals?: Approvals | null;
}

/** What `newRun` takes: the run's id, trace and retry bound, and the SDK runner's configuration. */
export interface NewRunOptions extends GuardedRunOptions {
  /**
   * The configuration of the SDK `Runner` the run uses (all but its model provider and model are
   * kept as given; those are guarded). Absent: the SDK's defaults.
   */
  readonly runConfig?: Partial<RunConfig>;
}

function busOf(source: unknown): HookBus {
  if (source instanceof HookBus) return source;
  const bus = typeof source === "object" && source !== null ? (source as { bus?: unknown }).bus : undefined;
  if (bus instanceof HookBus) return bus;
  const got = source === null ? "null" : typeof source === "object" ? (source.constructor?.name ?? "Object") : typeof source;
  throw new TypeError(`OpenAIAgentsAdapter takes a harness (with .bus) or a HookBus, got ${got}`);
}

function isModel(value: unknown): value is Model {
  return typeof value === "object" && value !== null && typeof (value as Model).getResponse === "function";
}

/**
 * Puts a harness's bus in front of OpenAI Agents SDK agents. `guard(agent)` guards an agent's
 * function tools and its model (and those of the agents it hands off to); `newRun()` starts a
 * run, whose SDK runner hands out guarded models for the model names agents give.
 */
export class OpenAIAgentsAdapter {
  readonly bus: HookBus;
  /** The durable approvals every run of this adapter files in and consults (null: none). */
  readonly approvals: Approvals | null;

  /**
   * `source`: a harness (`load(...)`'s result: its `.bus` is used) or a `HookBus`.
   * `options.approvals`: durable approvals (`harness.approvals`, or an `Approvals` on a store
   * its deciders share): a suspended call files a record, a resumed `RunState` consults it.
   */
  constructor(source: HookBus | { readonly bus: HookBus }, options: AdapterOptions = {}) {
    this.bus = busOf(source);
    this.approvals = options.approvals ?? null;
  }

  /**
   * A clone of `agent` whose function tools are guarded, and whose model is, when it is a `Model`
   * object (a model name is guarded by the run's runner); so are the agents it hands off to, and
   * theirs (each cloned once, cycles kept). Tools the adapter cannot guard (hosted, computer,
   * shell, apply-patch tools) are refused with a `TypeError`: the SDK runs them without a point
   * the bus could stop, and the adapter never lets a call through unasked. A `Handoff` object is
   * copied with its agent guarded (`handoff.clone({agent})`, the SDK's way to swap its target).
   */
  guard<TContext, TOutput extends AgentOutputType>(agent: Agent<TContext, TOutput>): Agent<TContext, TOutput> {
    return this.#guarded(agent, new Map()) as Agent<TContext, TOutput>;
  }

  #guarded(agent: Agent<any, any>, done: Map<Agent<any, any>, Agent<any, any>>): Agent<any, any> {
    const known = done.get(agent);
    if (known !== undefined) return known;
    const tools = agent.tools.map((tool) => this.#guardedTool(agent, tool));
    const model = isModel(agent.model) ? guardModel(agent.model) : agent.model;
    const clone = agent.clone({ tools, model });
    done.set(agent, clone); // before its handoffs: one that hands back finds this clone
    clone.handoffs = agent.handoffs.map((to) => {
      if (to instanceof Agent) return this.#guarded(to, done);
      return to instanceof Handoff ? to.clone({ agent: this.#guarded(to.agent, done) }) : to;
    });
    return clone;
  }

  #guardedTool(agent: Agent<any, any>, tool: Tool<any>): Tool<any> {
    if (tool.type === "function") return guardTool(tool as FunctionTool<any, any, unknown>);
    throw new TypeError(
      `agent '${agent.name}': tool '${tool.name}' is a ${tool.type} tool, which the harnessweaver adapter cannot guard ` +
        "(only function tools have points where the bus can stop a call): remove it or wrap it in a function tool",
    );
  }

  /** `tool`, guarded (see `guardTool`). */
  guardTool<TContext, Result>(tool: FunctionTool<TContext, any, Result>): FunctionTool<TContext, any, Result> {
    return guardTool(tool);
  }

  /**
   * A run under the bus: a new `RunContext` with `runId` (random when not given) and `trace` (a
   * new one when not given); `maxRetries` bounds how often a Retry asks the chain again, as the
   * run loop's option does. Its SDK `Runner` is made from `runConfig` with the model provider and
   * a `Model` object guarded, so every model call of the run passes the model points.
   */
  newRun(options: NewRunOptions = {}): GuardedRun {
    const { runConfig = {}, ...rest } = options;
    const base = new Runner(runConfig);
    const model = runConfig.model;
    const runner = new Runner({
      ...runConfig,
      modelProvider: guardProvider(base.config.modelProvider),
      ...(isModel(model) && !isGuardedModel(model) ? { model: guardModel(model) } : {}),
    });
    return new GuardedRun(this.bus, runner, { approvals: this.approvals, ...rest });
  }
}
