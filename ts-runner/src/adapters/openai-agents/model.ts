/**
 * The model points: a guarded `Model` emits `step.start`, `model.before` and `model.after`
 * around every call the SDK makes, and a guarded `ModelProvider` hands out guarded models.
 *
 * The SDK's `RunHooks` are event emitters it does not await, so they can observe a model call
 * but never stop one; wrapping the model is the SDK's own extension point that can, and the one
 * that sees the request as it is sent (after the SDK's own `callModelInputFilter`, which stays
 * the caller's): a `Continue(modified)` at `step.start` or `model.before` is the request the
 * inner model gets. A Block (or any outcome but a Continue, or a rewrite the SDK's items cannot
 * carry) rejects before the inner model is called; at `model.after` the response never reaches
 * the run. Either ends the run with `HarnessStopped` (the SDK cannot refuse one model call and
 * go on).
 */

import type {
  Model,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelRetryAdvice,
  ModelRetryAdviceRequest,
  StreamEvent,
} from "@openai/agents";
import { setTimeout as sleep } from "node:timers/promises";
import { modelName } from "./convert.js";
import { requireRun } from "./run.js";
import { stopIn } from "./stops.js";

const GUARDED = new WeakSet<object>();

/** Whether `model` is one the adapter guarded. */
export function isGuardedModel(model: unknown): boolean {
  return typeof model === "object" && model !== null && GUARDED.has(model);
}

/** A `Model` whose every call passes the model points of the run in flight. */
class GuardedModel implements Model {
  readonly #inner: Model;
  readonly #name: string;
  readonly supportsPromptModelSelection?: boolean;

  constructor(inner: Model, name: string | undefined) {
    this.#inner = inner;
    this.#name = modelName(inner, name);
    if (inner.supportsPromptModelSelection !== undefined) this.supportsPromptModelSelection = inner.supportsPromptModelSelection;
    GUARDED.add(this);
  }

  /** The inner model's name, as `model.before`'s request names it. */
  get model(): string {
    return this.#name;
  }

  /**
   * `model.after` is answered inside the call, so a Retry there does what the run loop does:
   * `model.before` is asked again and the model called again, within the run's retry bound
   * (`profile://rag`'s `require_citations` asking an uncited answer again).
   */
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const run = requireRun(`model ${this.#name}`);
    let sent = await run.startStep(request, this.#name);
    for (let retries = 0; ; retries++) {
      const response = await this.#inner.getResponse(sent);
      const delay = await run.answerInCall(response, retries);
      if (delay === null) return response;
      if (delay > 0) await sleep(delay * 1000);
      sent = await run.modelBeforeAgain();
    }
  }

  /**
   * The stream passes through as it comes; the turn's last event (`response_done`, which
   * carries the whole response) is held until `model.after` admits it: a stream the chain
   * refuses ends without it, and the run ends (a Retry too: the response's events are already
   * on their way to the caller, so the model cannot be asked again).
   */
  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const run = requireRun(`model ${this.#name}`);
    const sent = await run.startStep(request, this.#name);
    for await (const event of this.#inner.getStreamedResponse(sent)) {
      if (event.type === "response_done") {
        await run.modelAnswered({ output: event.response.output, usage: event.response.usage as unknown as ModelResponse["usage"] });
      }
      yield event;
    }
  }

  /** The bus's stop is never retried as a model failure; the inner model advises on its own. */
  async getRetryAdvice(args: ModelRetryAdviceRequest): Promise<ModelRetryAdvice | undefined> {
    if (stopIn(args.error) !== null) return { suggested: false, reason: "harnessweaver stopped the run" };
    const advise = this.#inner.getRetryAdvice;
    return typeof advise === "function" ? await advise.call(this.#inner, args) : undefined;
  }
}

/** `model`, guarded (a model already guarded is returned as it is). */
export function guardModel(model: Model, name?: string): Model {
  return isGuardedModel(model) ? model : new GuardedModel(model, name);
}

/** A `ModelProvider` whose models are guarded (by the name the agent gave). */
export function guardProvider(provider: ModelProvider): ModelProvider {
  return {
    async getModel(name?: string): Promise<Model> {
      return guardModel(await provider.getModel(name), name);
    },
  };
}
