import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Continue, HookBus, outcomeJSON, RegistrationError, EmitError } from "../index.js";
import { sleep } from "../conformance/waiting.js";
import { harness, toolCall, untimed } from "../testing/support.js";

// The corpus (failures/chain-deadline.json) pins outcomes and records; these pin the API.
describe("chain deadlines (I26)", () => {
  it("aborts a suspended middleware at the chain deadline and skips the rest", async () => {
    const { bus, ran, context, add } = harness({ deadlines: { "tool.before": "50ms" } });
    let reason: unknown;
    add("slow", async (_e, signal) => {
      signal.addEventListener("abort", () => (reason = signal.reason));
      await sleep(30, signal);
      return Continue();
    }, { failMode: "open" });
    add("guard");
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["slow"]);
    assert.ok(reason instanceof DOMException && reason.name === "TimeoutError");
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "block", reason: "middleware guard failed: skipped", code: "chain_deadline" });
    assert.deepEqual(untimed(context.trace).map((r) => r["failure"]), ["deadline", "skipped", undefined]);
  });

  it("calls nothing with an emit deadline of 0, and the earlier deadline applies", async () => {
    const { bus, ran, context, add } = harness({ deadlines: { "tool.before": "30s" } });
    add("first", undefined, { failMode: "open" });
    const result = await bus.emit("tool.before", toolCall(), context, { deadline: 0 });
    assert.deepEqual(ran, []);
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: false });
    assert.equal(untimed(context.trace)[0]?.["failure"], "skipped");
  });

  it("refuses bad deadlines with invalid_deadline (I26), naming the hook point", async () => {
    const { bus, ran, context, add } = harness();
    add("guard");
    await assert.rejects(bus.emit("tool.before", toolCall(), context, { deadline: "-1s" }), (error: unknown) => {
      assert.ok(error instanceof EmitError);
      assert.equal(error.kind, "invalid_deadline");
      assert.equal(error.rule, "I26");
      assert.match(error.message, /deadline of tool\.before '-1s'/);
      return true;
    });
    assert.deepEqual(ran, []);
    assert.deepEqual(untimed(context.trace), []);
    assert.throws(() => new HookBus({ deadlines: { "model.after": "0s" } }), RegistrationError);
    assert.throws(() => new HookBus({ deadlines: { "tool.during": "1s" } as never }), RegistrationError);
  });

  it("shows a hook point's deadline in seconds", () => {
    const bus = new HookBus({ deadlines: { "tool.before": "1.5s" } });
    assert.equal(bus.deadline("tool.before"), 1.5);
    assert.equal(bus.deadline("tool.after"), undefined);
  });
});
