/**
 * One run of an SDK agent under the bus: its run context, its step count, its tool calls.
 *
 * A `GuardedRun` is made once per run (`adapter.newRun()`) and lives across the run's
 * interruptions: `await run.run(agent, input)`, then, after approving or rejecting on the
 * `RunState`, `await run.run(agent, result.state)`. Every emit of the run uses its one
 * `RunContext` (a stable run id, I21), so its trace records carry run, step and tool.
 *
 * The guarded model and tools find the run in flight through an `AsyncLocalStorage` that
 * `run()` enters (Python's adapter uses a context variable the same way): the SDK calls the
 * model and the tools from the promise chain of `Runner.run`, which keeps it.
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import {
  RunState,
  UserError,
  type Agent,
  type AgentInputItem,
  type ModelRequest as SdkModelRequest,
  type ModelResponse as SdkModelResponse,
  type NonStreamRunOptions,
  type Runner,
  type RunResult,
  type StreamedRunResult,
} from "@openai/agents";
import {
  Envelope,
  ModelRequest,
  ModelRequestEvent,
  ModelResponseEvent,
  RunContext,
  StepEndEvent,
  StepStartEvent,
  TaskEndEvent,
  TaskStartEvent,
  ToolCallEvent,
  ToolResult,
  ToolResultEvent,
  Usage,
  type EventOf,
  type HookBus,
  type HookPoint,
  type HookResult,
  type JsonObject,
  type Trace,
} from "harnessweaver";
import type { Approvals, ApprovalRecord } from "../../approvals/index.js";
import { resolveInterruptions } from "./approvals.js";
import { jsonable, messagesOf, requestTools, responseOf, specOf } from "./convert.js";
import { inputWith, requestWith } from "./rewrite.js";
import { notExpressible, raise, stopFor, stopIn, unchanged } from "./stops.js";
import { GuardedStream } from "./stream.js";

/** What the bus answered for one tool call (by call id) while the call is under way. */
export interface ToolCallRecord {
  /** The chain's answer at `tool.before` (`before.event` is the call as the chain left it). */
  before: HookResult<ToolCallEvent>;
  /** The event as emitted. */
  readonly event: ToolCallEvent;
  /** The answer came through `needsApproval`: a Suspend became an SDK approval. */
  readonly approvalAsked: boolean;
  after?: HookResult<ToolResultEvent>;
  /** The tool threw (seen by a tool made with the adapter's `tool()`, failing.ts): `tool.after`'s `isError`. */
  failed?: boolean;
}

/** A function tool as the adapter reads it. */
export interface ToolLike {
  readonly name: string;
  readonly description?: unknown;
  readonly parameters?: unknown;
}

export interface GuardedRunOptions {
  /** The run id (I21) every trace record names; random when not given. */
  readonly runId?: string;
  /** The trace to write to (a new one when not given): pass one read back to go on with it. */
  readonly trace?: Trace;
  /** How often a Retry asks the chain again (the run loop's `max_retries`, default 2). */
  readonly maxRetries?: number;
  /**
   * Durable approvals (`harness.approvals`, or an `Approvals` on a store the deciders share): a
   * Suspend at `tool.before` files a record, and a resumed `RunState` consults it for each call
   * still awaiting a decision (docs/approvals.md). Absent or null: the SDK's `RunState` alone.
   */
  readonly approvals?: Approvals | null;
}

const CURRENT = new AsyncLocalStorage<GuardedRun>();

/** The guarded run in flight in this async context, if any. */
export function currentRun(): GuardedRun | undefined {
  return CURRENT.getStore();
}

/** The guarded run in flight, or the SDK's `UserError`: guarded code never runs unguarded. */
export function requireRun(what: string): GuardedRun {
  const run = CURRENT.getStore();
  if (run === undefined) {
    throw new UserError(
      `${what} is guarded by harnessweaver: run the agent with adapter.newRun().run(agent, input), which emits its hook points`,
    );
  }
  return run;
}

/** A model turn: the SDK's request, the bus's picture of it, and that picture as `step.start` left it. */
interface Turn {
  readonly request: SdkModelRequest;
  readonly seen: ModelRequest;
  readonly asked: ModelRequest;
}

/** task.end's exit reason when the bus ended the run (a Suspend or a rewrite ends it as a Block). */
const EXIT_REASONS: Readonly<Record<string, string>> = { block: "blocked", escalate: "escalated", retry: "retry_exhausted" };

/** The options of `Runner.run` the adapter leaves to the caller (it sets the stream itself). */
export type RunOptions<TContext = undefined> = Omit<NonStreamRunOptions<TContext>, "stream">;

/** One run under the bus. `ctx` is its run context (`ctx.trace` its records), `steps` the model turns so far. */
export class GuardedRun {
  readonly bus: HookBus;
  readonly ctx: RunContext;
  readonly maxRetries: number;
  readonly runner: Runner;
  /** The approvals book calls are filed in and consulted from, or null. */
  readonly approvals: Approvals | null;
  steps = 0;
  #stepOpen = false;
  #stepUsage = { input: 0, output: 0 };
  #started = false;
  /** The model turn in flight: its SDK request, what the bus was given, and `step.start`'s answer. */
  #turn: Turn | null = null;
  readonly #calls = new Map<string, ToolCallRecord>();
  #decided = new Set<string>();
  /** The approval record filed for (or consulted by) each suspended call, by call id. */
  readonly #records = new Map<string, ApprovalRecord>();

  constructor(bus: HookBus, runner: Runner, options: GuardedRunOptions = {}) {
    const maxRetries = options.maxRetries ?? 2;
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
      throw new RangeError(
        `maxRetries ${String(maxRetries)}: the retries of one operation are a whole number from 0 (the run loop's max_retries, docs/agent.md)`,
      );
    }
    const envelope = options.runId === undefined ? new Envelope() : new Envelope({ runId: options.runId });
    this.bus = bus;
    this.runner = runner;
    this.maxRetries = maxRetries;
    this.approvals = options.approvals ?? null;
    this.ctx = options.trace === undefined ? new RunContext({ envelope }) : new RunContext({ envelope, trace: options.trace });
  }

  get runId(): string {
    return this.ctx.envelope.runId;
  }

  get trace(): Trace {
    return this.ctx.trace;
  }

  emit<H extends HookPoint>(hook: H, event: EventOf<H>): Promise<HookResult<EventOf<H>>> {
    return this.bus.emit(hook, event, this.ctx);
  }

  /**
   * Emit at a point where the run loop answers a Retry by asking the chain again (`task.start`,
   * `step.start`, `model.before`, `tool.before`, `step.end`): after the Retry's delay, up to
   * `maxRetries` times (a `Retry({maxAttempts: n})` lowers that to n - 1). The last answer is
   * returned: a Retry still, once the bound is reached, which the caller acts on.
   */
  async ask<H extends HookPoint>(hook: H, event: EventOf<H>): Promise<HookResult<EventOf<H>>> {
    for (let retries = 0; ; retries++) {
      const result = await this.emit(hook, event);
      const outcome = result.outcome;
      if (outcome.kind !== "retry") return result;
      const bound = outcome.maxAttempts === null ? this.maxRetries : Math.min(this.maxRetries, Math.max(outcome.maxAttempts - 1, 0));
      if (retries >= bound) return result;
      if (outcome.delay) await sleep(outcome.delay * 1000);
    }
  }

  /**
   * `Runner.run(agent, input, options)` under the bus; `input` is the task's input, or the
   * `RunState` of this run to resume. Emits `task.start` once per run and `task.end` whenever a
   * segment stops (`suspended` when it has interruptions), as harnessweaver's run loop does.
   * Rejects with `HarnessStopped` when the bus's answer ended the run.
   */
  async run<TAgent extends Agent<any, any>, TContext = undefined>(
    agent: TAgent,
    input: string | AgentInputItem[] | RunState<TContext, TAgent>,
    options: RunOptions<TContext> = {},
  ): Promise<RunResult<TContext, TAgent>> {
    return CURRENT.run(this, async () => {
      let result: RunResult<TContext, TAgent>;
      try {
        const given = await this.#begin(agent, input);
        result = await this.runner.run(agent, given, { ...options, stream: false });
      } catch (error) {
        throw await this.failed(error);
      }
      return this.finished(result);
    });
  }

  /**
   * `Runner.run(agent, input, {...options, stream: true})` under the bus: the same hook points,
   * records and outcomes as `run`. The SDK's stream is `stream.result` (iterate it, or
   * `stream.result.toTextStream()`); `await stream.completed` for the result once `task.end` has
   * been emitted (its `finalOutput` as `task.end` left it). A stop rejects `stream.completed`
   * with `HarnessStopped` (the SDK's own stream and `completed` reject with the SDK's error).
   */
  async runStreamed<TAgent extends Agent<any, any>, TContext = undefined>(
    agent: TAgent,
    input: string | AgentInputItem[] | RunState<TContext, TAgent>,
    options: RunOptions<TContext> = {},
  ): Promise<GuardedStream<TContext, TAgent>> {
    return CURRENT.run(this, async () => {
      let streamed: StreamedRunResult<TContext, TAgent>;
      try {
        const given = await this.#begin(agent, input);
        // The SDK's run loop goes on in the background, in this async context: it keeps the run.
        streamed = await this.runner.run(agent, given, { ...options, stream: true });
      } catch (error) {
        throw await this.failed(error);
      }
      return new GuardedStream(this, streamed);
    });
  }

  /** What the SDK is to run: the state to resume, or the task's input as `task.start` left it. */
  async #begin<I extends string | AgentInputItem[] | RunState<any, any>>(agent: Agent<any, any>, input: I): Promise<I> {
    if (input instanceof RunState) {
      this.adopt(input);
      // The calls still awaiting a decision: the approval records decide them (a state restored in another process).
      if (this.approvals !== null) await resolveInterruptions(this, this.approvals, input);
      return input;
    }
    if (this.#started) return input;
    return (await this.#taskStart(agent, input as string | AgentInputItem[])) as I;
  }

  /**
   * @internal `task.end` for a segment that failed; what the caller is to throw: the bus's
   * `HarnessStopped` (unwrapped), or the SDK's error as it was. A failure that is not the bus's
   * (the model's, a tool's) is exit reason "error"; its message is never put anywhere (R9).
   */
  async failed(error: unknown): Promise<unknown> {
    const stop = stopIn(error);
    await this.#taskEnd(null, stop === null ? "error" : (EXIT_REASONS[stop.outcome] ?? "blocked"));
    return stop ?? error;
  }

  /** @internal `task.end` for a segment that stopped without failing; the result as it left it. */
  async finished<R extends RunResult<any, any> | StreamedRunResult<any, any>>(result: R): Promise<R> {
    if (result.interruptions.length > 0) {
      await this.#taskEnd(null, "suspended");
      return result;
    }
    const output = await this.#taskEnd(result.finalOutput, "completed");
    if (output.changed) {
      // task.end's answer is what the run reports: an own property over the SDK's getter.
      Object.defineProperty(result, "finalOutput", { value: output.value, configurable: true, enumerable: true });
    }
    return result;
  }

  /**
   * Take the calls awaiting a decision from the SDK's `state` of this run, and (when this
   * `GuardedRun` did not see the run start: a state restored in another process) the step count.
   */
  adopt(state: RunState<any, any>): void {
    this.#decided = new Set(state.getInterruptions().map((item) => callIdOf(item.rawItem)));
    if (!this.#started) {
      this.#started = true;
      this.steps = state._currentTurn;
      this.#stepOpen = this.#decided.size > 0 && this.steps > 0;
    }
  }

  /** Whether the `RunState` this segment resumed holds a decision for the call. */
  decided(callId: string): boolean {
    return this.#decided.has(callId);
  }

  // --- task and step points -----------------------------------------------------------------

  /**
   * `task.start`; the input the SDK is to run: a `Continue(modified)` is the task's input (a
   * text for a text, items for items), so a redaction reaches the model and the run's history.
   */
  async #taskStart(agent: Agent<any, any>, input: string | AgentInputItem[]): Promise<string | AgentInputItem[]> {
    this.#started = true;
    const event = new TaskStartEvent({ task: agent.name, input: jsonable(input) });
    const result = await this.ask("task.start", event);
    if (result.outcome.kind !== "continue" || unchanged(result, event)) {
      raise(stopFor("task.start", result, event, "task input"));
      return input;
    }
    const rewritten = inputWith(input, result.event.input);
    if (rewritten === null) throw notExpressible("task.start", "the chain changed the kind of the task's input (a text to items, or back)");
    return rewritten;
  }

  /**
   * `task.end` for a segment that stopped; the output the run reports, as the run loop reports
   * it: a `Continue(modified)` replaces it, a Block withholds it (`undefined`), any other outcome
   * leaves it (the run is over: nothing is left to suspend or repeat). A step cut short emits no
   * `step.end` and `steps` counts the completed ones; a suspended segment leaves its step open.
   */
  async #taskEnd(output: unknown, exitReason: string): Promise<{ changed: boolean; value: unknown }> {
    if (exitReason === "completed") {
      try {
        await this.endStep();
      } catch (error) {
        // The last step.end stopped the run: it still ends with task.end (its state released).
        const stop = stopIn(error);
        if (stop === null) throw error;
        await this.#taskEnd(null, EXIT_REASONS[stop.outcome] ?? "blocked");
        throw stop;
      }
    }
    const completed = this.#stepOpen ? this.steps - 1 : this.steps;
    if (exitReason !== "completed" && exitReason !== "suspended") this.#stepOpen = false;
    const event = new TaskEndEvent({ output: jsonable(output), exitReason, steps: completed });
    const result = await this.emit("task.end", event);
    if (result.outcome.kind === "continue") {
      return unchanged(result, event) ? { changed: false, value: output } : { changed: true, value: result.event.output };
    }
    return result.outcome.kind === "block" ? { changed: true, value: undefined } : { changed: false, value: output };
  }

  /**
   * A model turn begins: the previous turn's `step.end`, then `step.start` and `model.before`;
   * the request the model is to get. A `Continue(modified)` is applied: `step.start`'s messages
   * are what `model.before` sees, and `model.before`'s request is what the model gets (a redaction,
   * a guard's note; rewrite.ts). A rewrite the SDK's items cannot carry, and any other outcome,
   * end the run before the model is called.
   */
  async startStep(request: SdkModelRequest, model: string): Promise<SdkModelRequest> {
    await this.endStep();
    this.steps += 1;
    this.#stepOpen = true;
    const tools = requestTools(request);
    const messages = messagesOf(request.systemInstructions, request.input);
    const seen = new ModelRequest({ model, messages, tools });
    const start = new StepStartEvent({ step: this.steps, messages, tools });
    const started = await this.ask("step.start", start);
    let asked = seen;
    if (started.outcome.kind !== "continue" || unchanged(started, start)) raise(stopFor("step.start", started, start, "step"));
    else asked = seen.with({ messages: started.event.messages, tools: started.event.tools });
    this.#turn = { request, seen, asked };
    return this.#modelBefore(this.#turn);
  }

  /** `model.before` on the turn's request (as `step.start` left it); the request the model gets. */
  async #modelBefore(turn: Turn): Promise<SdkModelRequest> {
    const { request, seen, asked } = turn;
    const event = new ModelRequestEvent({ step: this.steps, request: asked });
    const result = await this.ask("model.before", event);
    if (result.outcome.kind !== "continue") raise(stopFor("model.before", result, event, "model request"));
    if (asked === seen && unchanged(result, event)) return request;
    const rewritten = requestWith(request, seen, result.event.request);
    if ("refused" in rewritten) throw notExpressible(unchanged(result, event) ? "step.start" : "model.before", `the chain's model request: ${rewritten.refused}`);
    return rewritten.request;
  }

  /**
   * @internal `model.before` asked again for this turn's request, after a Retry at
   * `model.after` (as the run loop does: `step.start` is not asked again); what the model is
   * called with next.
   */
  async modelBeforeAgain(): Promise<SdkModelRequest> {
    if (this.#turn === null) throw new Error("model.before again outside a model turn");
    return this.#modelBefore(this.#turn);
  }

  /**
   * @internal `model.after` inside the model call (model.ts): the delay in seconds before the
   * model is asked again (a Retry within the run's bound, `retries` made so far), or null when
   * the chain admitted the response unchanged; anything else ends the run, as `modelAnswered`.
   */
  async answerInCall(response: Pick<SdkModelResponse, "output" | "usage">, retries: number): Promise<number | null> {
    const [result, event] = await this.#modelAfter(response);
    const outcome = result.outcome;
    if (outcome.kind === "retry") {
      const bound = outcome.maxAttempts === null ? this.maxRetries : Math.min(this.maxRetries, Math.max(outcome.maxAttempts - 1, 0));
      if (retries < bound) return outcome.delay ?? 0;
    }
    raise(stopFor("model.after", result, event, "model response"));
    return null;
  }

  /** `model.after`: the run ends unless the chain admits the response unchanged. */
  async modelAnswered(response: Pick<SdkModelResponse, "output" | "usage">): Promise<void> {
    const [result, event] = await this.#modelAfter(response);
    raise(stopFor("model.after", result, event, "model response"));
  }

  async #modelAfter(response: Pick<SdkModelResponse, "output" | "usage">): Promise<[HookResult<ModelResponseEvent>, ModelResponseEvent]> {
    const converted = responseOf(response);
    this.#stepUsage = {
      input: this.#stepUsage.input + converted.usage.inputTokens,
      output: this.#stepUsage.output + converted.usage.outputTokens,
    };
    const event = new ModelResponseEvent({ step: this.steps, response: converted });
    return [await this.emit("model.after", event), event];
  }

  async endStep(): Promise<void> {
    if (!this.#stepOpen) return;
    const usage = new Usage({ inputTokens: this.#stepUsage.input, outputTokens: this.#stepUsage.output });
    const event = new StepEndEvent({ step: this.steps, usage });
    raise(stopFor("step.end", await this.ask("step.end", event), event, "step"));
    this.#stepOpen = false; // admitted: the step is complete (else it was cut short)
    this.#stepUsage = { input: 0, output: 0 };
  }

  /**
   * The approval record of a suspended call (by call id, or the SDK's interruption item): its
   * `id` is what `harnessweaver approvals approve` takes; `howToDecide(record)` says so.
   * Undefined when no record was filed or consulted for it in this `GuardedRun`.
   */
  approvalOf(call: string | { readonly rawItem: unknown }): ApprovalRecord | undefined {
    return this.#records.get(typeof call === "string" ? call : callIdOf(call.rawItem));
  }

  /** @internal Keeps the record filed or consulted for call `callId`. */
  noteApproval(callId: string, record: ApprovalRecord): void {
    this.#records.set(callId, record);
  }

  // --- tool points ----------------------------------------------------------------------------

  call(callId: string): ToolCallRecord | undefined {
    return this.#calls.get(callId);
  }

  forget(callId: string): void {
    this.#calls.delete(callId);
  }

  /** Emit `tool.before` for a call and keep the answer for the rest of the call. */
  async toolBefore(tool: ToolLike, callId: string, args: JsonObject, approvalAsked: boolean): Promise<ToolCallRecord> {
    const event = new ToolCallEvent({ step: this.steps, tool: specOf(tool), call: { id: callId, name: tool.name, arguments: args } });
    const record: ToolCallRecord = { before: await this.ask("tool.before", event), event, approvalAsked };
    this.#calls.set(callId, record);
    return record;
  }

  /** Emit `tool.after` for a call that ran, with the call as it ran; the answer and the event as emitted. */
  async toolAfter(record: ToolCallRecord, output: unknown): Promise<[HookResult<ToolResultEvent>, ToolResultEvent]> {
    const event = new ToolResultEvent({
      step: this.steps,
      tool: record.event.tool,
      call: record.before.event.call,
      result: new ToolResult({ output: jsonable(output), isError: record.failed === true }),
    });
    record.after = await this.emit("tool.after", event);
    return [record.after, event];
  }
}

/** The call id of an approval item's raw call. */
export function callIdOf(raw: unknown): string {
  const found = typeof raw === "object" && raw !== null ? (raw as { callId?: unknown }).callId : undefined;
  return typeof found === "string" ? found : "";
}
