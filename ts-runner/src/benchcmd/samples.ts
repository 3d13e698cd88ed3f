/**
 * The sample events `harnessweaver bench` times by default: one per hook point, the same JSON
 * forms Python's `benchcmd/samples.py` uses (docs/bench.md), built with `eventFromJSON` as the
 * conformance code builds events from a case's JSON. A refund of 20 USD by card: the call the
 * refunds example's middleware look at, small enough to pass its caps.
 */

import type { HookPoint } from "../catalogue.js";
import { eventFromJSON, type Event } from "../events.js";

const REQUEST = "Refund order 1234";
const MESSAGES = [{ role: "user", content: REQUEST }];
const TOOL = { name: "refund_payment", description: "Refund a card payment" };
const CALL = { id: "call_1", name: "refund_payment", arguments: { order_id: "1234", amount_usd: 20 } };
const USAGE = { input_tokens: 120, output_tokens: 30, cost_usd: 0.001 };

/** The JSON form of each hook point's sample event (`model_dump(mode="json")` of Python's). */
export const SAMPLE_JSON: Readonly<Record<HookPoint, unknown>> = Object.freeze({
  "task.start": { task: "sample", input: { request: REQUEST } },
  "step.start": { step: 1, messages: MESSAGES, tools: [TOOL] },
  "model.before": { step: 1, request: { model: "sample-model", messages: MESSAGES, tools: [TOOL] } },
  "model.after": {
    step: 1,
    response: { message: { role: "assistant", content: "", tool_calls: [CALL] }, stop_reason: "tool_use", usage: USAGE },
  },
  "tool.before": { step: 1, tool: TOOL, call: CALL },
  "tool.after": { step: 1, tool: TOOL, call: CALL, result: { output: { status: "refunded", amount_usd: 20 } } },
  "step.end": { step: 1, usage: USAGE },
  "task.end": { output: "Refunded 20 USD for order 1234", exit_reason: "completed", steps: 1, usage: USAGE },
});

/** The sample event of `hook`, a fresh instance (events are frozen; a fresh one costs nothing shared). */
export function sampleEvent(hook: HookPoint): Event {
  return eventFromJSON(hook, SAMPLE_JSON[hook]);
}
