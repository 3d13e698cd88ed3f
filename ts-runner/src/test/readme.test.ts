/** The README's example, kept compiling and true. */

import assert from "node:assert/strict";
import { it } from "node:test";
import {
  Block,
  Continue,
  Envelope,
  FixedClock,
  HookBus,
  middleware,
  RunContext,
  Suspend,
  TaskStartEvent,
  ToolCallEvent,
  type MiddlewareObject,
} from "../index.js";

// --- README example begins
/** Refunds asked for at the weekend wait for someone in finance. */
const noWeekendRefunds = middleware(
  { name: "no_weekend_refunds", hooks: ["tool.before"], band: "app", failMode: "closed", timeout: "2s" },
  async (event, env) => {
    if (event.tool.name === "refund_payment" && env.clock.isWeekend()) {
      return Suspend("weekend refunds need approval", { approverRole: "finance" });
    }
    return undefined; // = Continue()
  },
);

/** A middleware with settings is a class; its default name is `refund_cap`. */
class RefundCap implements MiddlewareObject<ToolCallEvent> {
  constructor(private readonly maxUsd: number) {}

  async call(event: ToolCallEvent) {
    const amount = event.call.arguments["amount_usd"];
    if (event.tool.name === "refund_payment" && typeof amount === "number" && amount > this.maxUsd) {
      return Block("over the refund cap", { code: "refund_cap" });
    }
    return undefined;
  }
}

/** To change an event, return a modified copy. */
const redactInput = middleware({ name: "redact_input", hooks: ["task.start"], failMode: "closed" }, async (event) =>
  Continue(event.with({ input: "[redacted]" })),
);

const bus = new HookBus();
bus.register(noWeekendRefunds);
bus.register(middleware({ hooks: ["tool.before"], failMode: "closed" }, new RefundCap(500)));
bus.register(redactInput, { band: "platform" });

const saturday = new Envelope({ clock: new FixedClock("2026-11-28T10:00:00+00:00") });
const context = new RunContext({ envelope: saturday });
const refund = new ToolCallEvent({
  step: 1,
  tool: { name: "refund_payment" },
  call: { id: "call-1", name: "refund_payment", arguments: { order: 42, amount_usd: 900 } },
});
const result = await bus.emit("tool.before", refund, context);
// result.outcome: Block "over the refund cap" (Block outranks Suspend: rule 3)
const started = await bus.emit("task.start", new TaskStartEvent({ task: "refunds", input: "card 4242" }), context);
// started.event.input === "[redacted]"
// context.trace.toJSONL(): one JSON line per middleware, then one per hook point
// --- README example ends

it("the README example runs as the README says", () => {
  assert.deepEqual(
    bus.chain("tool.before").map((d) => d.name),
    ["no_weekend_refunds", "refund_cap"],
  );
  assert.deepEqual({ ...result.outcome }, { kind: "block", reason: "over the refund cap", code: "refund_cap" });
  assert.equal(started.event.input, "[redacted]");
  assert.deepEqual(
    context.trace.records().map((r) => [r.kind, r.middleware, r.outcome, r.code]),
    [
      ["outcome", "no_weekend_refunds", "suspend", undefined],
      ["outcome", "refund_cap", "block", "refund_cap"],
      ["hook", undefined, "block", "refund_cap"],
      ["outcome", "redact_input", "continue", undefined],
      ["hook", undefined, "continue", undefined],
    ],
  );
});
