/**
 * harnessweaver for the Vercel AI SDK (`ai` 7): `harnessweaver/ai`.
 *
 * One `AIRun` per conversation (keep it across a tool-approval resumption) gives
 *
 * - `run.middleware`, a `LanguageModelMiddleware` for `wrapLanguageModel`: `model.before` in
 *   `transformParams` (the chain's request is what the model gets), `model.after` in
 *   `wrapGenerate`/`wrapStream` (the chain's response is what the SDK gets; a stream is read
 *   to its end first);
 * - `run.tools({...})` / `run.tool(name, tool)`: tools whose `needsApproval` and `execute`
 *   emit `tool.before` and `tool.after`; a `Suspend` is the SDK's tool-approval flow.
 *
 * Every emit uses `run.context` (one `RunContext`, one trace): records carry the run id, the
 * step (the model call, counted from 1) and the tool. Nothing fails open: an outcome the SDK
 * cannot carry out stops the call (docs/integrations/vercel-ai.md).
 */

import type { LanguageModelMiddleware, Tool, ToolApprovalStatus, ToolExecutionOptions, ToolSet } from "ai";
import { HookBus } from "../bus.js";
import { RunContext } from "../context.js";
import { Envelope } from "../envelope.js";
import { ModelRequestEvent, ModelResponseEvent, ToolCallEvent, ToolResultEvent, ToolSpec } from "../events.js";
import type { JsonValue } from "../json.js";
import type { HookResult, Outcome } from "../outcomes.js";
import type { Trace } from "../trace.js";
import { approvedIn } from "./ai/approval.js";
import { jsonObject, jsonValue, promptWith, requestOf, toolsWith, toolSpecs } from "./ai/request.js";
import { partsWith, readAll, responseOf, resultWith, streamOf } from "./ai/response.js";
import { escalation, HarnessStopped, refusal } from "./ai/stopped.js";
import type { CallOptions } from "./ai/types.js";

export { HarnessStopped, refusal, type StoppedBy } from "./ai/stopped.js";

/** A harness loaded from YAML (anything with a `bus`) or a bus. */
export type Source = HookBus | { readonly bus: HookBus };

export interface AIRunOptions {
  /** The run's context; absent: a new one (with `runId`, if given). */
  readonly context?: RunContext;
  readonly runId?: string;
  readonly trace?: Trace;
}

/** What the chain answered at `tool.before` for one call, kept by call id. */
interface Before {
  readonly event: ToolCallEvent;
  /** The chain's answer; null when the call could not be put to it. */
  readonly result: HookResult<ToolCallEvent> | null;
  /** Why the call was refused without asking (arguments that are not a JSON object). */
  readonly refused: string | null;
}

/** A call waiting for approval: what the chain said, for the approver. */
export interface PendingApproval {
  readonly toolCallId: string;
  readonly reason: string;
  readonly approverRole: string | null;
  readonly code: string | null;
  /** The call as the chain left it (what runs once approved). */
  readonly event: ToolCallEvent;
}

type Stop = Exclude<Outcome, { kind: "continue" }>;

export class AIRun {
  readonly bus: HookBus;
  readonly context: RunContext;
  /** The `LanguageModelMiddleware` to give `wrapLanguageModel`. */
  readonly middleware: LanguageModelMiddleware;
  #step = 0;
  /** The step of each model call, by the params object `transformParams` returned. */
  readonly #calls = new WeakMap<CallOptions, number>();
  /** The step whose response made each tool call. */
  readonly #callSteps = new Map<string, number>();
  /** The tools as last offered to the model, by name. */
  readonly #specs = new Map<string, ToolSpec>();
  readonly #before = new Map<string, Promise<Before>>();
  /** What the harness made a call's result (a refusal, the chain's result), by call id. */
  readonly #answered = new Map<string, JsonValue>();
  /** The tools this run guarded (the objects `tool()` returned), with their own approval policy. */
  readonly #guarded = new WeakMap<object, { readonly name: string; readonly own: Tool["needsApproval"] }>();
  /** Set by an Escalate at a tool hook: the run's next model call does not happen. */
  #stopped: HarnessStopped | null = null;

  constructor(source: Source, options: AIRunOptions = {}) {
    const bus = source instanceof HookBus ? source : source.bus;
    if (!(bus instanceof HookBus)) throw new TypeError("AIRun needs a HookBus or a harness with a bus");
    this.bus = bus;
    const envelope = new Envelope(options.runId === undefined ? {} : { runId: options.runId });
    this.context = options.context ?? new RunContext(options.trace === undefined ? { envelope } : { envelope, trace: options.trace });
    this.middleware = {
      transformParams: async ({ params, model }) => this.#modelBefore(params, model.modelId),
      wrapGenerate: async ({ doGenerate, params }) => {
        const step = this.#calls.get(params) ?? this.#step;
        const result = await doGenerate();
        const seen = responseOf(result.content, result.finishReason, result.usage);
        const changed = await this.#modelAfter(step, seen);
        return changed === null ? result : resultWith(result, seen, changed);
      },
      wrapStream: async ({ doStream, params }) => {
        const step = this.#calls.get(params) ?? this.#step;
        const { stream, ...rest } = await doStream();
        const read = await readAll(stream);
        const usage = read.finish?.usage ?? { inputTokens: {}, outputTokens: {} };
        const finishReason = read.finish?.finishReason ?? { unified: "other" as const, raw: undefined };
        const seen = responseOf(read.content, finishReason, usage as never);
        const changed = await this.#modelAfter(step, seen);
        return { ...rest, stream: streamOf(changed === null ? read.parts : partsWith(read, seen, changed)) };
      },
    };
  }

  get trace(): Trace {
    return this.context.trace;
  }

  /** The model calls so far (the step of the last one). */
  get step(): number {
    return this.#step;
  }

  async #modelBefore(params: CallOptions, modelId: string): Promise<CallOptions> {
    if (this.#stopped !== null) throw this.#stopped;
    const step = ++this.#step;
    const seen = requestOf(params, modelId);
    for (const spec of seen.request.tools) this.#specs.set(spec.name, spec);
    const result = await this.bus.emit("model.before", new ModelRequestEvent({ step, request: seen.request }), this.context);
    if (result.outcome.kind !== "continue") throw HarnessStopped.of("model.before", result.outcome);
    let out: CallOptions = { ...params }; // a new object: its step is looked up by identity
    if (result.outcome.modified !== undefined) {
      const changed = result.event.request;
      if (changed.model !== seen.request.model) {
        throw new HarnessStopped("model.before", "modified", `a middleware changed the model to '${changed.model}', which the adapter cannot do`);
      }
      const tools = toolsWith(params.tools, changed.tools);
      if (tools.unknown.length > 0) {
        throw new HarnessStopped("model.before", "modified", `a middleware added tools nothing runs: ${tools.unknown.join(", ")}`);
      }
      out = { ...params, prompt: promptWith(params.prompt, seen, changed.messages) };
      if (params.tools !== undefined || tools.tools.length > 0) out.tools = tools.tools;
    }
    this.#calls.set(out, step);
    return out;
  }

  /** `model.after`: the chain's response when it changed it, null when it did not. */
  async #modelAfter(step: number, seen: ModelResponseEvent["response"]): Promise<ModelResponseEvent["response"] | null> {
    const result = await this.bus.emit("model.after", new ModelResponseEvent({ step, response: seen }), this.context);
    if (result.outcome.kind !== "continue") throw HarnessStopped.of("model.after", result.outcome);
    const response = result.outcome.modified === undefined ? seen : result.event.response;
    for (const call of response.message.toolCalls) this.#callSteps.set(call.id, step);
    return result.outcome.modified === undefined ? null : response;
  }

  /** The tools of `tools` that run in this process (`execute`), guarded; the others as they are. */
  tools<T extends ToolSet>(tools: T): T {
    const out: Record<string, unknown> = {};
    for (const [name, tool] of Object.entries(tools)) out[name] = this.tool(name, tool as Tool);
    return out as T;
  }

  /**
   * `tool` (offered to the model as `name`) with `tool.before` in its `needsApproval` and
   * `execute`, and `tool.after` in `execute`. A tool without `execute` is returned as it is
   * (the SDK does not run it; its calls pass `model.after`).
   */
  tool<T extends Tool>(name: string, tool: T): T {
    const execute = tool.execute;
    if (execute === undefined) return tool;
    const own = tool.needsApproval;
    const needsApproval = async (input: unknown, options: { toolCallId: string; messages: unknown[]; context: unknown }) => {
      const before = await this.#askBefore(name, tool, options.toolCallId, input);
      const outcome = before.result?.outcome;
      if (outcome === undefined || outcome.kind !== "continue") return outcome?.kind === "suspend";
      // What the harness admits still passes the tool's own policy.
      return typeof own === "function" ? Boolean(await (own as (i: unknown, o: unknown) => unknown)(input, options)) : own === true;
    };
    const toModelOutput = tool.toModelOutput;
    const guarded = async (input: unknown, options: ToolExecutionOptions<unknown>) => {
      const run = execute as (i: unknown, o: ToolExecutionOptions<unknown>) => unknown;
      const answer = await this.#execute(name, tool, run, input, options);
      // Kept only for the tool's own toModelOutput, which takes it (and forgets it) next.
      if (answer.ours && toModelOutput !== undefined) this.#answered.set(options.toolCallId, answer.output as JsonValue);
      return answer.output;
    };
    if (toModelOutput === undefined) return this.#keep({ ...tool, needsApproval, execute: guarded } as T, name, own);
    // The tool's own conversion is for its own results, not for what the harness answered.
    const converted = (options: Parameters<typeof toModelOutput>[0]) => {
      if (!this.#answered.has(options.toolCallId)) return toModelOutput(options);
      const output = this.#answered.get(options.toolCallId) ?? null;
      this.#answered.delete(options.toolCallId);
      return typeof output === "string" ? { type: "text" as const, value: output } : { type: "json" as const, value: output };
    };
    return this.#keep({ ...tool, needsApproval, execute: guarded, toModelOutput: converted } as T, name, own);
  }

  #keep<T extends Tool>(guarded: T, name: string, own: Tool["needsApproval"]): T {
    this.#guarded.set(guarded, { name, own });
    return guarded;
  }

  /**
   * A generic `toolApproval` for `generateText`/`streamText` (the SDK's setting replaces the
   * tools' `needsApproval`, which ai 7 deprecates): a call the chain suspends is a
   * `user-approval` whose reason names the chain's reason and approver role; a call it admits
   * follows the tool's own `needsApproval`; a call it refuses needs no approver (`execute`
   * refuses it). Tools this run did not guard need no approval.
   */
  readonly toolApproval = async (options: {
    readonly toolCall: { readonly toolName: string; readonly toolCallId: string; readonly input: unknown };
    readonly tools: Readonly<Record<string, unknown>> | undefined;
    readonly messages: unknown[];
    readonly toolsContext?: unknown;
  }): Promise<ToolApprovalStatus> => {
    const { toolCall } = options;
    const tool = options.tools?.[toolCall.toolName];
    const guarded = typeof tool === "object" && tool !== null ? this.#guarded.get(tool) : undefined;
    if (guarded === undefined || guarded.name !== toolCall.toolName) return undefined;
    const before = await this.#askBefore(guarded.name, tool as Tool, toolCall.toolCallId, toolCall.input);
    const outcome = before.result?.outcome;
    if (outcome?.kind === "suspend") {
      const role = outcome.approverRole === null ? "" : ` (approver: ${outcome.approverRole})`;
      return { type: "user-approval", reason: `${outcome.reason}${role}` };
    }
    if (outcome?.kind !== "continue") return undefined;
    const own = guarded.own;
    const asked = typeof own === "function" ? await (own as (i: unknown, o: unknown) => unknown)(toolCall.input, {
      toolCallId: toolCall.toolCallId,
      messages: options.messages,
      context: (options.toolsContext as Readonly<Record<string, unknown>> | undefined)?.[guarded.name],
    }) : own;
    return asked === true ? "user-approval" : undefined;
  };

  /** The approval the chain waits for on call `toolCallId`, or null when it does not suspend it. */
  async pending(toolCallId: string): Promise<PendingApproval | null> {
    const before = await this.#before.get(toolCallId);
    const outcome = before?.result?.outcome;
    if (before === undefined || before.result === null || outcome?.kind !== "suspend") return null;
    const { reason, approverRole, code } = outcome;
    return { toolCallId, reason, approverRole, code, event: before.result.event };
  }

  #specOf(name: string, tool: Tool): ToolSpec {
    const offered = this.#specs.get(name);
    if (offered !== undefined) return offered;
    const description = typeof tool.description === "string" ? tool.description : "";
    return toolSpecs([{ type: "function", name, description, inputSchema: {} }])[0] ?? new ToolSpec({ name });
  }

  /** `tool.before` for one call: asked once per call id, the answer kept for the resumption. */
  #askBefore(name: string, tool: Tool, toolCallId: string, input: unknown): Promise<Before> {
    let before = this.#before.get(toolCallId);
    if (before === undefined) {
      before = this.#emitBefore(name, tool, toolCallId, input);
      this.#before.set(toolCallId, before);
      before.catch(() => this.#before.delete(toolCallId)); // an emit that failed is asked again
    }
    return before;
  }

  async #emitBefore(name: string, tool: Tool, toolCallId: string, input: unknown): Promise<Before> {
    const args = jsonObject(input);
    const step = this.#callSteps.get(toolCallId) ?? this.#step;
    const event = new ToolCallEvent({ step, tool: this.#specOf(name, tool), call: { id: toolCallId, name, arguments: args ?? {} } });
    if (args === null) return { event, result: null, refused: "its arguments are not a JSON object" };
    return { event, result: await this.bus.emit("tool.before", event, this.context), refused: null };
  }

  /** What the model reads for a call the chain stopped at `hook` (an Escalate also ends the run). */
  #stop(hook: "tool.before" | "tool.after", outcome: Stop): string {
    if (outcome.kind === "escalate") {
      this.#stopped ??= HarnessStopped.of(hook, outcome);
      return escalation(outcome.to, outcome.reason);
    }
    return refusal(hook, outcome.reason);
  }

  async #execute(
    name: string,
    tool: Tool,
    execute: (input: unknown, options: ToolExecutionOptions<unknown>) => unknown,
    input: unknown,
    options: ToolExecutionOptions<unknown>,
  ): Promise<{ readonly output: unknown; readonly ours: boolean }> {
    const ours = (output: unknown) => ({ output, ours: true });
    // Asked here too: a `toolApproval` setting of the caller's replaces `needsApproval`.
    const before = await this.#askBefore(name, tool, options.toolCallId, input);
    if (before.result === null) return ours(refusal("tool.before", before.refused));
    const { outcome, event } = before.result;
    if (outcome.kind === "suspend" && !approvedIn(options.messages, options.toolCallId)) {
      return ours(refusal("tool.before", `approval needed (${outcome.reason}), which was not given for this call`));
    }
    if (outcome.kind !== "continue" && outcome.kind !== "suspend") return ours(this.#stop("tool.before", outcome));
    if (event.call.name !== name || event.call.id !== options.toolCallId) {
      return ours(refusal("tool.before", "a middleware changed the call beyond its arguments, which the SDK cannot run"));
    }
    const args = outcome.kind === "suspend" || outcome.modified !== undefined ? { ...event.call.toJSON()["arguments"] as object } : input;
    let output: unknown;
    let failed: { error: unknown } | null = null;
    try {
      output = await lastOf(execute(args, options));
    } catch (error) {
      failed = { error };
    }
    const result = failed === null ? { output: jsonValue(output) } : { output: messageOf(failed.error), isError: true };
    const after = await this.bus.emit("tool.after", new ToolResultEvent({ ...event, result }), this.context);
    if (after.outcome.kind !== "continue") return ours(this.#stop("tool.after", after.outcome));
    if (after.outcome.modified !== undefined) return ours(after.event.result.output);
    if (failed !== null) throw failed.error;
    return { output, ours: false };
  }
}

/** A tool's result: awaited, or the last value of an async iterable (the earlier ones are preliminary). */
async function lastOf(value: unknown): Promise<unknown> {
  const awaited = await value;
  if (typeof awaited !== "object" || awaited === null || !(Symbol.asyncIterator in awaited)) return awaited;
  let last: unknown;
  for await (const item of awaited as AsyncIterable<unknown>) last = item;
  return last;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
