import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Block,
  Continue,
  EmitError,
  Escalate,
  middleware,
  outcomeJSON,
  Retry,
  Suspend,
  TaskStartEvent,
  type Event,
  type HookPoint,
} from "../index.js";
import { appended, harness, toolCall, toolResult, trail, untimed } from "../testing/support.js";

describe("combining outcomes (rule 3, rulings 4-8)", () => {
  it("counts nothing (undefined or null) as Continue()", async () => {
    const { bus, context, add } = harness();
    add("a", () => undefined);
    add("b", () => null);
    add("c", () => Continue());
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: false });
    assert.deepEqual(
      untimed(context.trace).map((r) => [r["outcome"], r["modified"]]),
      [["continue", false], ["continue", false], ["continue", false], ["continue", false]],
    );
  });

  const pairs = [
    ["block over suspend", Suspend("s"), Block("b"), "block"],
    ["suspend over escalate", Escalate("e"), Suspend("s"), "suspend"],
    ["escalate over retry", Retry("r"), Escalate("e"), "escalate"],
    ["retry over continue(modified)", Continue(toolCall({ x: 1 })), Retry("r"), "retry"],
    ["continue(modified) over continue", Continue(), Continue(toolCall({ x: 1 })), "continue"],
  ] as const;
  for (const [title, first, second, kind] of pairs) {
    it(`ranks ${title}, whichever runs first`, async () => {
      for (const order of [[first, second], [second, first]]) {
        const { bus, context, add } = harness();
        add("one", () => order[0]);
        add("two", () => order[1]);
        const { outcome } = await bus.emit("tool.before", toolCall(), context);
        assert.equal(outcome.kind, kind);
        if (kind === "continue") assert.notEqual(outcome.kind === "continue" && outcome.modified, undefined);
      }
    });
  }

  it("gives ties to the earliest in run order, with its fields", async () => {
    const { bus, context, add } = harness();
    add("s1", () => Suspend("first", { approverRole: "finance", code: "c1" }));
    add("s2", () => Suspend("second", { approverRole: "legal" }));
    const { outcome } = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(outcomeJSON(outcome), { kind: "suspend", reason: "first", approver_role: "finance", code: "c1" });
  });

  it("gives outbound ties to the innermost, which runs first", async () => {
    const { bus, context, add } = harness();
    const hooks = ["tool.after"] as const;
    add("outer", () => Retry("outer", { delay: 1 }), { band: "baseline", hooks });
    add("inner", () => Retry("inner", { delay: 5, maxAttempts: 2 }), { band: "task", hooks });
    const { outcome } = await bus.emit("tool.after", toolResult(), context);
    assert.deepEqual(outcomeJSON(outcome), { kind: "retry", reason: "inner", delay: 5, max_attempts: 2, code: null });
  });

  it("stops the chain at a Block, inbound and outbound (ruling 6)", async () => {
    for (const hook of ["tool.before", "tool.after"] as const) {
      const { bus, ran, context, add } = harness();
      add("outer", undefined, { band: "baseline", hooks: [hook] });
      add("gate", () => Block("stop", { code: "policy" }), { hooks: [hook] });
      add("inner", undefined, { band: "task", hooks: [hook] });
      const event = hook === "tool.before" ? toolCall() : toolResult();
      await bus.emit(hook as HookPoint, event as Event, context);
      assert.deepEqual(ran, hook === "tool.before" ? ["outer", "gate"] : ["inner", "gate"]);
      assert.deepEqual(untimed(context.trace).map((r) => r["kind"]), ["outcome", "outcome", "hook"]);
    }
  });

  it("chains modifications: each middleware sees the previous ones (detail-modified)", async () => {
    const { bus, context, add } = harness();
    const seen: unknown[] = [];
    add("a", (e) => Continue(appended(e, "a")));
    add("b", (e) => {
      seen.push(trail(e));
      return Continue(appended(e, "b"));
    });
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(seen, [["a"]]);
    assert.deepEqual(trail(result.event), ["a", "b"]);
  });

  it("keeps modifications made before a Block in the result (ruling 7)", async () => {
    const { bus, context, add } = harness();
    add("editor", (e) => Continue(appended(e, "edited")));
    add("gate", () => Block("stop"));
    add("never", (e) => Continue(appended(e, "never")));
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.equal(result.outcome.kind, "block");
    assert.deepEqual(trail(result.event), ["edited"]);
  });

  it("carries the modified event whatever the combined outcome (ruling 8)", async () => {
    const { bus, context, add } = harness();
    add("approver", () => Suspend("wait"));
    add("editor", (e) => Continue(appended(e, "edited")));
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.equal(result.outcome.kind, "suspend");
    assert.deepEqual(trail(result.event), ["edited"]);
    assert.ok(Object.isFrozen(result));
  });

  it("returns the emitted event itself when nothing modifies it", async () => {
    const { bus, context, add } = harness();
    add("quiet");
    const event = toolCall({ amount_usd: 900 });
    assert.equal((await bus.emit("tool.before", event, context)).event, event);
  });

  it("accepts plain (non-async) middleware answers", async () => {
    const { bus, context } = harness();
    bus.register(middleware({ name: "sync", hooks: ["tool.before"], failMode: "closed" }, () => Escalate("now", { to: "ops" })));
    assert.equal((await bus.emit("tool.before", toolCall(), context)).outcome.kind, "escalate");
  });
});

describe("caller errors (I7)", () => {
  it("refuses an event of another hook point: nothing runs, nothing is traced", async () => {
    const { bus, ran, context, add } = harness();
    add("guard");
    await assert.rejects(bus.emit("tool.before", toolResult() as never, context), {
      name: "EmitError",
      kind: "event_type_mismatch",
      rule: "I7",
      message: "hook point 'tool.before' takes a ToolCallEvent, got ToolResultEvent (I7)",
    });
    await assert.rejects(bus.emit("task.end", new TaskStartEvent({}) as never, context), EmitError);
    await assert.rejects(bus.emit("task.end", { output: null } as never, context), /got Object \(I7\)/);
    assert.deepEqual(ran, []);
    assert.equal(context.trace.length, 0);
    assert.equal(context.trace.emits, 0);
  });

  it("refuses an unknown hook point: nothing runs, nothing is traced", async () => {
    const { bus, context } = harness();
    await assert.rejects(bus.emit("tool.during" as HookPoint, toolCall() as never, context), (e: unknown) => {
      assert.ok(e instanceof EmitError);
      assert.equal(e.kind, "unknown_hook");
      assert.ok(e.message.startsWith("unknown hook point 'tool.during': the hook points are task.start, "));
      return true;
    });
    assert.equal(context.trace.length, 0);
  });
});
