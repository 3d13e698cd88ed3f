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
 *   emit `tool.before` and `tool.after`; a `Suspend` is the SDK's tool-approval flow;
 * - the task: `run.generateText`/`run.streamText` (the SDK's, with the model wrapped and the
 *   tools guarded) or `run.start`/`run.end`/`run.suspend`/`run.fail` around the caller's own
 *   call emit `task.start`, `step.start`/`step.end` around each model call, and `task.end` on
 *   every way the task ends, so that task-level middleware runs and per-run state is released.
 *
 * Every emit uses `run.context` (one `RunContext`, one trace): records carry the run id, the
 * step (the model call, counted from 1) and the tool. Nothing fails open: an outcome the SDK
 * cannot carry out stops the call (docs/integrations/vercel-ai.md).
 */

import { setTimeout as sleep } from "node:timers/promises";
import { generateText, streamText, wrapLanguageModel } from "ai";
import type { LanguageModelMiddleware, ModelMessage, Tool, ToolApprovalStatus, ToolExecutionOptions, ToolSet } from "ai";
import { HookBus } from "../bus.js";
import { RunContext } from "../context.js";
import { Envelope } from "../envelope.js";
import {
  ModelRequestEvent,
  ModelResponseEvent,
  StepEndEvent,
  StepStartEvent,
  TaskEndEvent,
  TaskStartEvent,
  ToolCallEvent,
  ToolResultEvent,
  ToolSpec,
  Usage,
} from "../events.js";
import { jsonEqual, type JsonValue } from "../json.js";
import type { HookResult, Outcome } from "../outcomes.js";
import type { Trace } from "../trace.js";
import { howToDecide, type Approvals, type ApprovalRecord } from "../approvals/index.js";
import { denial, pendingText, refusedText, type Consulted } from "./approvals.js";
import { approvedIn } from "./ai/approval.js";
import { CallRecords } from "./ai/records.js";
import { jsonObject, jsonValue, promptWith, requestOf, toolsWith, toolSpecs } from "./ai/request.js";
import { partsWith, readAll, responseOf, resultWith, streamOf } from "./ai/response.js";
import { escalation, HarnessStopped, refusal } from "./ai/stopped.js";
import { awaitsApproval, exitReasonOf, inputOf, stopIn, textOf, withInput } from "./ai/task.js";
import type { CallOptions } from "./ai/types.js";

export { HarnessStopped, refusal, type StoppedBy } from "./ai/stopped.js";

/** A harness loaded from YAML (anything with a `bus`) or a bus. */
export type Source = HookBus | { readonly bus: HookBus };

export interface AIRunOptions {
  /** The run's context; absent: a new one (with `runId`, if given). */
  readonly context?: RunContext;
  readonly runId?: string;
  readonly trace?: Trace;
  /**
   * Durable approvals (`harness.approvals`, or an `Approvals` on a store the deciders share): a
   * Suspend at `tool.before` files a record whose id the SDK's approval request carries, and an
   * approved call runs only once its record is approved, once (docs/approvals.md). Absent or
   * null: the SDK's approval response alone decides.
   */
  readonly approvals?: Approvals | null;
  /**
   * How often a Retry at `model.after` asks `model.before` and the model again, as the run
   * loop's `max_retries` (default 2; a `Retry({maxAttempts: n})` lowers it to n - 1). Past it,
   * and in a stream, the call stops with `HarnessStopped`.
   */
  readonly maxRetries?: number;
}

/** What `model.before` was asked for one model call: its step, the SDK's params, the bus's picture, as `step.start` left it. */
interface Asked {
  readonly step: number;
  readonly params: CallOptions;
  readonly seen: ReturnType<typeof requestOf>;
  readonly request: ModelRequestEvent["request"];
}

/** `model.after` answered a Retry (its outcome): the caller asks the model again or stops. */
class Retried {
  constructor(readonly outcome: Stop) {}
}

/** What the model answers a generate call. */
type Generated = Awaited<ReturnType<Parameters<NonNullable<LanguageModelMiddleware["wrapGenerate"]>>[0]["doGenerate"]>>;

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
  /** The durable record filed for the call (with `approvals`): its `id` is what `harnessweaver approvals approve` takes. */
  readonly approval: ApprovalRecord | null;
}

type Stop = Exclude<Outcome, { kind: "continue" }>;

/** A task under way: between its `task.start` and the `task.end` that ends it for good. */
interface Task {
  /** The steps it completed (`step.end` admitted). */
  steps: number;
  inputTokens: number;
  outputTokens: number;
  /** Its last segment ended waiting for approvals (`task.end` "suspended"): the next one resumes it. */
  suspended: boolean;
  /** Driven by `run.generateText`/`run.streamText`: the final answer ends it before the SDK gets it. */
  inline: boolean;
}

type GenerateOptions<T extends ToolSet> = Parameters<typeof generateText<T>>[0];
type GenerateResult<T extends ToolSet> = Awaited<ReturnType<typeof generateText<T>>>;
type StreamOptions<T extends ToolSet> = Parameters<typeof streamText<T>>[0];
type StreamResult<T extends ToolSet> = ReturnType<typeof streamText<T>>;
type EndEvent<T extends ToolSet> = Parameters<NonNullable<StreamOptions<T>["onEnd"]>>[0];

export class AIRun {
  readonly bus: HookBus;
  readonly context: RunContext;
  /** The `LanguageModelMiddleware` to give `wrapLanguageModel`. */
  readonly middleware: LanguageModelMiddleware;
  #step = 0;
  /** The step of each model call, by the params object `transformParams` returned. */
  readonly #calls = new WeakMap<CallOptions, number>();
  /** What `model.before` was asked for each model call (by the params it returned): to ask it again after a Retry. */
  readonly #asked = new WeakMap<CallOptions, Asked>();
  /** How often a Retry at `model.after` asks the model again (the run loop's `max_retries`). */
  readonly maxRetries: number;
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
  /** The task under way, if any: while there is one, model calls are steps (`step.start`/`step.end`). */
  #task: Task | null = null;
  #stepOpen = false;
  /** The open step's model answered (`model.after`): the next model call is the next step. */
  #stepAnswered = false;
  #stepTokens = { input: 0, output: 0 };
  /** The task of this SDK call ended with the model's final answer (`run.generateText`/`streamText`). */
  #endedByAnswer = false;
  /** The durable approval records of suspended calls (null: no `approvals`). */
  readonly #records: CallRecords | null;
  /** Errors the model threw (not the harness): a task they end ends as "provider_error". */
  readonly #providerErrors = new WeakSet<object>();

  constructor(source: Source, options: AIRunOptions = {}) {
    const bus = source instanceof HookBus ? source : source.bus;
    if (!(bus instanceof HookBus)) throw new TypeError("AIRun needs a HookBus or a harness with a bus");
    this.bus = bus;
    const maxRetries = options.maxRetries ?? 2;
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
      throw new RangeError(
        `maxRetries ${String(maxRetries)}: the retries of one operation are a whole number from 0 (the run loop's max_retries, docs/agent.md)`,
      );
    }
    this.maxRetries = maxRetries;
    const envelope = new Envelope(options.runId === undefined ? {} : { runId: options.runId });
    this.context = options.context ?? new RunContext(options.trace === undefined ? { envelope } : { envelope, trace: options.trace });
    const approvals = options.approvals ?? null;
    this.#records = approvals === null ? null : new CallRecords(approvals, () => this.context.envelope.runId);
    this.middleware = {
      transformParams: async ({ params, model }) => this.#modelBefore(params, model.modelId),
      wrapGenerate: async ({ doGenerate, params, model }) => {
        const step = this.#calls.get(params) ?? this.#step;
        let result = await this.#fromModel(doGenerate);
        let sent = params;
        for (let retries = 0; ; retries++) {
          const seen = responseOf(result.content, result.finishReason, result.usage);
          const changed = await this.#modelAfter(step, seen, !hasToolCalls(result.content));
          if (changed instanceof Retried) {
            // A Retry (require_citations): model.before and the model again, within the bound.
            [sent, result] = await this.#again(sent, this.#retryDelay(changed.outcome, retries), (p) => model.doGenerate(p));
            continue;
          }
          return changed === null ? result : resultWith(result, seen, changed);
        }
      },
      wrapStream: async ({ doStream, params }) => {
        const step = this.#calls.get(params) ?? this.#step;
        const { stream, ...rest } = await this.#fromModel(doStream);
        const read = await this.#fromModel(() => readAll(stream));
        const usage = read.finish?.usage ?? { inputTokens: {}, outputTokens: {} };
        const finishReason = read.finish?.finishReason ?? { unified: "other" as const, raw: undefined };
        const seen = responseOf(read.content, finishReason, usage as never);
        const changed = await this.#modelAfter(step, seen, !hasToolCalls(read.content));
        // A stream is not asked again: a Retry at model.after stops it (docs/integrations/vercel-ai.md).
        if (changed instanceof Retried) throw HarnessStopped.of("model.after", changed.outcome);
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

  /** What the model did: its errors are marked as the model's (a task they end ends as "provider_error"). */
  async #fromModel<R>(call: () => PromiseLike<R>): Promise<R> {
    try {
      return await call();
    } catch (error) {
      if (typeof error === "object" && error !== null && !(error instanceof HarnessStopped)) this.#providerErrors.add(error);
      throw error;
    }
  }

  async #modelBefore(params: CallOptions, modelId: string): Promise<CallOptions> {
    if (this.#stopped !== null) throw this.#stopped;
    if (this.#endedByAnswer) {
      // The task ended with an answer the SDK was to stop at: a call after it would go unjudged.
      throw new HarnessStopped("task.end", "modified", "the SDK called the model again after the task's final answer, which task.end had judged");
    }
    const seen = requestOf(params, modelId);
    let request = seen.request;
    let step: number;
    if (this.#task === null) step = ++this.#step;
    else {
      this.#task.suspended = false; // a suspended task the caller resumed itself goes on
      // The previous step is over once the model is asked again (its tools have run).
      if (this.#stepOpen && this.#stepAnswered) await this.#endStep();
      if (this.#stepOpen) step = this.#step; // the step's model call again: its last attempt failed
      else {
        step = ++this.#step;
        this.#stepOpen = true;
        this.#stepAnswered = false;
        const start = new StepStartEvent({ step, messages: request.messages, tools: request.tools });
        const started = await this.bus.emit("step.start", start, this.context);
        if (started.outcome.kind !== "continue") throw HarnessStopped.of("step.start", started.outcome);
        // A step's changed messages or tools are what model.before sees and the model gets.
        if (started.outcome.modified !== undefined) request = request.with({ messages: started.event.messages, tools: started.event.tools });
      }
    }
    for (const spec of seen.request.tools) this.#specs.set(spec.name, spec);
    return this.#askModel({ step, params, seen, request });
  }

  /** `model.before` for a call (`request`: as `step.start` left it); the params the model gets. */
  async #askModel(asked: Asked): Promise<CallOptions> {
    const { step, params, seen, request } = asked;
    const result = await this.bus.emit("model.before", new ModelRequestEvent({ step, request }), this.context);
    if (result.outcome.kind !== "continue") throw HarnessStopped.of("model.before", result.outcome);
    let out: CallOptions = { ...params }; // a new object: its step is looked up by identity
    if (result.outcome.modified !== undefined || request !== seen.request) {
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
    this.#asked.set(out, asked);
    return out;
  }

  /**
   * `model.after` answered a Retry: within the run's bound (`retries` made so far) the delay in
   * seconds before `model.before` is asked again and the model called again, as the run loop
   * does (`step.start` is not asked again); past it, the call stops (`HarnessStopped`).
   */
  #retryDelay(outcome: Outcome, retries: number): number {
    if (outcome.kind !== "retry") throw new Error("not a Retry");
    const bound = outcome.maxAttempts === null ? this.maxRetries : Math.min(this.maxRetries, Math.max(outcome.maxAttempts - 1, 0));
    if (retries >= bound) throw HarnessStopped.of("model.after", outcome);
    return outcome.delay ?? 0;
  }

  /** The model called again after a Retry at `model.after`: `model.before` first; the SDK's result. */
  async #again(params: CallOptions, delay: number, call: (params: CallOptions) => PromiseLike<Generated>): Promise<[CallOptions, Generated]> {
    const asked = this.#asked.get(params);
    if (asked === undefined) throw new HarnessStopped("model.after", "retry", "the model cannot be asked again: its call was not seen at model.before");
    if (delay > 0) await sleep(delay * 1000);
    const again = await this.#askModel(asked);
    return [again, await this.#fromModel(() => call(again))];
  }

  /** `model.after`: the chain's response when it changed it, null when it did not. */
  /** `model.after`; `last`: the answer has no tool calls at all (not even the provider's), so the SDK stops after it. */
  async #modelAfter(step: number, seen: ModelResponseEvent["response"], last: boolean): Promise<ModelResponseEvent["response"] | null | Retried> {
    const result = await this.bus.emit("model.after", new ModelResponseEvent({ step, response: seen }), this.context);
    const task = this.#task;
    if (result.outcome.kind === "retry") {
      if (task !== null) this.#spent(task, seen); // the answer asked again was paid for too
      return new Retried(result.outcome);
    }
    if (result.outcome.kind !== "continue") throw HarnessStopped.of("model.after", result.outcome);
    const response = result.outcome.modified === undefined ? seen : result.event.response;
    for (const call of response.message.toolCalls) this.#callSteps.set(call.id, step);
    const changed = result.outcome.modified === undefined ? null : response;
    if (task === null) return changed;
    this.#stepAnswered = true;
    this.#spent(task, seen);
    // An answer without tool calls is the task's last: under run.generateText/streamText the
    // task ends here, so that task.end's output is what the SDK gets (and streams).
    if (!task.inline || !last || response.message.toolCalls.length > 0) return changed;
    this.#endedByAnswer = true;
    const output = await this.end(response.message.content);
    if (jsonEqual(output, response.message.content)) return changed;
    return response.with({ message: response.message.with({ content: textOf(output) }) });
  }

  /** The tokens of a model answer, counted in the open step and the task. */
  #spent(task: Task, seen: ModelResponseEvent["response"]): void {
    this.#stepTokens = { input: this.#stepTokens.input + seen.usage.inputTokens, output: this.#stepTokens.output + seen.usage.outputTokens };
    task.inputTokens += seen.usage.inputTokens;
    task.outputTokens += seen.usage.outputTokens;
  }

  // --- the task: task.start, step.start/step.end, task.end -----------------------------------

  /** Whether a task of this run is under way (started, or suspended waiting for approvals). */
  get running(): boolean {
    return this.#task !== null;
  }

  /** Whether the run's task waits for approvals (its last segment ended "suspended"). */
  get suspended(): boolean {
    return this.#task?.suspended === true;
  }

  /**
   * `task.start` with the task's `input` (any JSON; `task` names the task): the input as the
   * chain left it, for the caller to give the SDK. Any outcome but Continue ends the task
   * (`task.end` with its exit reason) and rejects with `HarnessStopped`. From here until the
   * task ends, each model call through `run.middleware` is a step: `step.start` before its
   * `model.before`, `step.end` once the model is asked again or the task ends.
   */
  async start(input: unknown, options: { readonly task?: string } = {}): Promise<JsonValue> {
    if (this.#task !== null) {
      throw new Error(`run ${this.context.envelope.runId} has a task under way (${this.#task.suspended ? "suspended" : "running"}): end it before starting another`);
    }
    this.#task = { steps: 0, inputTokens: 0, outputTokens: 0, suspended: false, inline: false };
    this.#stopped = null; // an escalation ended the task before; this one is new
    this.#endedByAnswer = false;
    try {
      const event = new TaskStartEvent({ task: options.task ?? "", input: jsonValue(input) });
      const result = await this.bus.emit("task.start", event, this.context);
      if (result.outcome.kind !== "continue") throw HarnessStopped.of("task.start", result.outcome);
      return result.event.input;
    } catch (error) {
      throw await this.fail(error);
    }
  }

  /**
   * The task completed with `output` (the final text): the open step's `step.end`, then
   * `task.end`. Resolves to the output as the chain left it (a `Continue(modified)` replaces
   * it); a Block withholds it: rejects with `HarnessStopped` (hook `task.end`). Other outcomes
   * leave it (the task is over: nothing is left to suspend or repeat).
   */
  async end(output: unknown): Promise<JsonValue> {
    const given = jsonValue(output);
    if (this.#task === null) throw new Error(`run ${this.context.envelope.runId} has no task under way to end`);
    try {
      await this.#endStep();
    } catch (error) {
      throw await this.fail(error);
    }
    const result = await this.#taskEnd(given, "completed");
    if (result.outcome.kind === "block") throw HarnessStopped.of("task.end", result.outcome);
    return result.outcome.kind === "continue" ? result.event.output : given;
  }

  /**
   * The task's segment stopped waiting for approvals: `task.end` "suspended" (the built-in
   * guards keep the run's state). The step stays open; the task goes on when the SDK is called
   * again with the approval responses (`run.generateText` knows it: no `task.start` again).
   */
  async suspend(): Promise<void> {
    if (this.#task === null) throw new Error(`run ${this.context.envelope.runId} has no task under way to suspend`);
    await this.#taskEnd(null, "suspended");
  }

  /**
   * The task failed with `error` (what the SDK threw): `task.end` with the exit reason (the
   * harness's stop: blocked, escalated, retry_exhausted; the model's error: provider_error;
   * anything else: error). Resolves to what to throw: the `HarnessStopped` the error carries, or
   * the error as it was. No task under way (it already ended): the error, nothing emitted.
   */
  async fail(error: unknown): Promise<unknown> {
    if (this.#task === null) return error;
    const stop = stopIn(error);
    await this.#taskEnd(null, stop !== null ? exitReasonOf(stop) : this.#fromProvider(error) ? "provider_error" : "error");
    return stop ?? error;
  }

  #fromProvider(error: unknown): boolean {
    let current: unknown = error;
    for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
      if (this.#providerErrors.has(current)) return true;
      const inner = current as { readonly cause?: unknown; readonly lastError?: unknown };
      current = inner.cause ?? inner.lastError;
    }
    return false;
  }

  /** `step.end` for the open step; anything but a plain Continue stops the task. */
  async #endStep(): Promise<void> {
    if (!this.#stepOpen || this.#task === null) return;
    const usage = new Usage({ inputTokens: this.#stepTokens.input, outputTokens: this.#stepTokens.output });
    const event = new StepEndEvent({ step: this.#step, usage });
    const result = await this.bus.emit("step.end", event, this.context);
    if (result.outcome.kind !== "continue") throw HarnessStopped.of("step.end", result.outcome);
    if (result.outcome.modified !== undefined && !jsonEqual(result.event.toJSON(), event.toJSON())) {
      throw new HarnessStopped("step.end", "modified", "a middleware changed the step's record, which the adapter cannot carry out");
    }
    this.#stepOpen = false;
    this.#stepTokens = { input: 0, output: 0 };
    this.#task.steps += 1;
  }

  /** `task.end`; the task is over unless it is only suspended (then its open step stays open). */
  async #taskEnd(output: JsonValue, exitReason: string) {
    const task = this.#task;
    if (task === null) throw new Error("no task under way");
    if (exitReason === "suspended") task.suspended = true;
    else {
      this.#task = null;
      this.#stepOpen = false; // a step cut short has no step.end
      this.#stepTokens = { input: 0, output: 0 };
      // Nothing resumes a task that ended for good: what its tool calls were answered goes too.
      this.#before.clear();
      this.#callSteps.clear();
      this.#records?.clear();
    }
    const usage = new Usage({ inputTokens: task.inputTokens, outputTokens: task.outputTokens });
    return this.bus.emit("task.end", new TaskEndEvent({ output, exitReason, steps: task.steps, usage }), this.context);
  }

  /** Start the task (`task.start` on the conversation's input), or resume the suspended one. */
  async #open<O extends { readonly prompt?: unknown; readonly messages?: unknown }>(options: O): Promise<O> {
    this.#endedByAnswer = false;
    const task = this.#task;
    if (task !== null) {
      if (!task.suspended) throw new Error(`run ${this.context.envelope.runId} has a task running: one SDK call at a time`);
      task.suspended = false; // the resumption: the approval responses are in the messages
      task.inline = true;
      return options;
    }
    const seen = inputOf(options);
    const changed = await this.start(seen);
    const started = this.#task as Task | null;
    if (started !== null) started.inline = true;
    try {
      return withInput(options, seen, changed);
    } catch (error) {
      throw await this.fail(error);
    }
  }

  #wrapModel<M>(model: M): M {
    if (typeof model !== "object" || model === null) {
      throw new TypeError("run.generateText/run.streamText need a language model object (not a model id): the run wraps it with its middleware");
    }
    return wrapLanguageModel({ model: model as never, middleware: this.middleware }) as M;
  }

  /** How the SDK's call ended when it did not throw and the final answer did not end the task. */
  async #close(content: readonly { readonly type: string }[], text: string): Promise<{ changed: boolean; output: string }> {
    if (this.#task === null) return { changed: false, output: text }; // ended by the final answer
    if (this.#stopped !== null) throw await this.fail(this.#stopped);
    if (awaitsApproval(content)) {
      await this.suspend();
      return { changed: false, output: text };
    }
    // The SDK stopped with tool calls answered (stopWhen): the task completed with the text it has.
    const output = await this.end(text);
    return jsonEqual(output, text) ? { changed: false, output: text } : { changed: true, output: textOf(output) };
  }

  /**
   * `generateText` as a task of this run: `task.start` on the input (`prompt` or `messages`;
   * its change is what the model gets), the model wrapped with `run.middleware` and the tools
   * guarded, every model call a step, and `task.end` however the call ends: with the final
   * answer before the SDK gets it (a change is the answer; a Block rejects with
   * `HarnessStopped`), "suspended" when it stops for approvals (call again with the approval
   * responses: the same task goes on), or the exit reason of an error, which it rethrows.
   */
  async generateText<T extends ToolSet>(options: GenerateOptions<T>): Promise<GenerateResult<T>> {
    const given = await this.#open(options);
    let result: GenerateResult<T>;
    try {
      const tools = given.tools === undefined ? {} : { tools: this.tools(given.tools) };
      result = await generateText<T>({ ...given, ...tools, model: this.#wrapModel(given.model) });
    } catch (error) {
      throw await this.fail(error);
    } finally {
      this.#endedByAnswer = false; // the SDK's call is over
    }
    const closed = await this.#close(result.content, result.text);
    if (closed.changed) Object.defineProperty(result, "text", { value: closed.output, configurable: true, enumerable: true });
    return result;
  }

  /**
   * `streamText` as a task of this run, as `run.generateText` (the final answer is judged whole
   * before any of it streams, so task.end's change is what streams and its Block streams an
   * error instead). The SDK's `onEnd`/`onFinish`, `onError` and `onAbort` of `options` are
   * called after the run's own, which emit `task.end`.
   */
  async streamText<T extends ToolSet>(options: StreamOptions<T>): Promise<StreamResult<T>> {
    const given = await this.#open(options);
    // The caller's callbacks, called after the run's (the SDK's onEnd takes the place of onFinish).
    const { onError, onAbort } = given;
    const theirEnd = given.onEnd ?? given.onFinish;
    const tools = given.tools === undefined ? {} : { tools: this.tools(given.tools) };
    try {
      return streamText<T>({
        ...given,
        ...tools,
        model: this.#wrapModel(given.model),
        onEnd: async (event: EndEvent<T>) => {
          this.#endedByAnswer = false; // the SDK's call is over
          try {
            await this.#close(event.content, event.text);
          } catch {
            // task.end has been emitted; the SDK's stream has already ended
          }
          await theirEnd?.(event);
        },
        onError: async (event: { error: unknown }) => {
          this.#endedByAnswer = false;
          await this.fail(event.error);
          await (onError as ((event: { error: unknown }) => unknown) | undefined)?.(event);
        },
        onAbort: async (event: Parameters<NonNullable<StreamOptions<T>["onAbort"]>>[0]) => {
          this.#endedByAnswer = false;
          await this.fail(new Error("aborted"));
          await onAbort?.(event);
        },
      });
    } catch (error) {
      throw await this.fail(error);
    }
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
    if (execute === undefined || this.#guarded.has(tool)) return tool; // nothing to run, or guarded already
    const own = tool.needsApproval;
    const needsApproval = async (input: unknown, options: { toolCallId: string; messages: unknown[]; context: unknown }) => {
      const before = await this.#askBefore(name, tool, options.toolCallId, input);
      const outcome = before.result?.outcome;
      if (outcome?.kind === "suspend" && before.result !== null && this.#records !== null) {
        // A new pause files its record; a resumption is decided by the record, in `execute`.
        if (!approvedIn(options.messages as ModelMessage[], options.toolCallId)) await this.#records.file(before.result.event, outcome);
        return true;
      }
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
      const records = this.#records;
      if (records === null || before.result === null) return { type: "user-approval", reason: `${outcome.reason}${role}` };
      if (approvedIn(options.messages as ModelMessage[], toolCall.toolCallId)) {
        // The SDK resumes the call: the record decides (claimed here, once; `execute` runs what it approved).
        const consulted = await records.consult(before.result.event, outcome, options.messages as ModelMessage[]);
        return consulted.kind === "approved" ? "approved" : { type: "denied", reason: notRun(consulted, outcome.reason) };
      }
      const record = await records.file(before.result.event, outcome);
      return { type: "user-approval", reason: `${outcome.reason}${role}; ${howToDecide(record)}` };
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
    const approval = (await this.#records?.filed(toolCallId)?.catch(() => null)) ?? null;
    return { toolCallId, reason, approverRole, code, event: before.result.event, approval };
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
    const { outcome } = before.result;
    let event = before.result.event;
    if (outcome.kind === "suspend" && !approvedIn(options.messages, options.toolCallId)) {
      return ours(refusal("tool.before", `approval needed (${outcome.reason}), which was not given for this call`));
    }
    if (outcome.kind === "suspend" && this.#records !== null) {
      // The approval response alone is not the decision: the durable record is (claimed once).
      const consulted = await this.#records.consult(event, outcome, options.messages);
      if (consulted.kind !== "approved") return ours(consulted.kind === "denied" ? denial(consulted.reason) : refusal("tool.before", notRun(consulted, outcome.reason)));
      event = consulted.event; // the approver's edit, if any, is what runs
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

/** Why a resumed call whose record did not approve it does not run. */
function notRun(consulted: Exclude<Consulted, { kind: "approved" }>, reason: string): string {
  if (consulted.kind === "denied") return `approval ${consulted.record.id} was denied: ${consulted.reason === "" ? "no reason given" : consulted.reason}`;
  if (consulted.kind === "pending") return `${pendingText(reason, consulted.record)}; resume once it is decided`;
  return refusedText(consulted);
}

/** Whether a model's answer calls any tool (the SDK's own or the provider's: either makes it go on). */
function hasToolCalls(content: readonly { readonly type: string }[]): boolean {
  return content.some((part) => part.type === "tool-call");
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
