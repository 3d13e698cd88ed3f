/** Shared helpers of the tests (not a test file itself). */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  Envelope,
  HookBus,
  middleware,
  RunContext,
  ToolCallEvent,
  ToolResultEvent,
  type Answer,
  type Band,
  type Event,
  type FailMode,
  type HookBusOptions,
  type HookPoint,
  type TraceRecord,
} from "../index.js";

/** The shared catalogue, read from the corpus (the package keeps no copy). */
export const CATALOGUE = JSON.parse(
  readFileSync(fileURLToPath(new URL("../../../conformance/catalogue.json", import.meta.url)), "utf8"),
) as {
  hooks: { name: string; direction: string; event: string }[];
  types: Record<string, Record<string, { type: string; default?: unknown; required?: boolean }>>;
  samples: Record<string, unknown>;
};

export function toolCall(args: Record<string, number | string> = { order: 42, amount_usd: 120 }): ToolCallEvent {
  return new ToolCallEvent({
    step: 1,
    tool: { name: "refund_payment" },
    call: { id: "call-1", name: "refund_payment", arguments: args },
  });
}

export function toolResult(): ToolResultEvent {
  return new ToolResultEvent({ step: 1, tool: { name: "refund_payment" }, call: { name: "refund_payment" } });
}

/** The run id of `harness()`'s context: its records carry it (I21). */
export const RUN = "run-1";

/** What the records of an emit of `toolCall()` or `toolResult()` correlate with (I21). */
export const TOOL_CALL = { run: RUN, step: 1, tool: "refund_payment" } as const;

export interface Spec {
  readonly hooks?: readonly HookPoint[];
  readonly band?: Band;
  readonly failMode?: FailMode;
  readonly timeout?: number | string;
}

/** A bus with a `ran` log and a helper to add middleware that log their name, then answer. */
export function harness(options: HookBusOptions = {}) {
  const bus = new HookBus(options);
  const ran: string[] = [];
  const context = new RunContext({ envelope: new Envelope({ runId: RUN }) });
  const add = (name: string, answer: (event: Event, signal: AbortSignal) => Answer | Promise<Answer> = () => undefined, spec: Spec = {}) => {
    const declared = middleware(
      { name, hooks: spec.hooks ?? ["tool.before"], failMode: spec.failMode ?? "closed", band: spec.band, timeout: spec.timeout },
      async (event, _env, signal) => {
        ran.push(name);
        return answer(event, signal);
      },
    );
    return bus.register(declared);
  };
  return { bus, ran, context, add };
}

/** Trace records without their timings (never compared). */
export function untimed(records: Iterable<TraceRecord>): Record<string, unknown>[] {
  return [...records].map(({ t_ns: _t, duration_ns: _d, ...rest }) => rest);
}

/** The trail a chain of `append` middleware left in `call.arguments.trail`. */
export function trail(event: Event): unknown {
  return (event as ToolCallEvent).call.arguments["trail"];
}

/** `event` (a tool event) with `mark` appended to `call.arguments.trail`. */
export function appended(event: Event, mark: string): ToolCallEvent {
  const tool = event as ToolCallEvent;
  const before = tool.call.arguments["trail"];
  const items = Array.isArray(before) ? before : [];
  return tool.with({ call: { ...tool.call, arguments: { ...tool.call.arguments, trail: [...items, mark] } } });
}
