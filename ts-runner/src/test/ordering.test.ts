import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Continue, EmitError, HOOK_POINTS, middleware, RegistrationError, TaskStartEvent, type HookPoint } from "../index.js";
import { appended, harness, toolCall, toolResult, trail } from "../testing/support.js";

const names = (bus: ReturnType<typeof harness>["bus"], hook: HookPoint) => bus.chain(hook).map((d) => d.name);

describe("run order (rules 1-2, rulings 1-2)", () => {
  it("runs inbound hook points baseline, platform, app, task", async () => {
    const { bus, ran, context, add } = harness();
    add("t", undefined, { band: "task" });
    add("a", undefined, { band: "app" });
    add("p", undefined, { band: "platform" });
    add("b", undefined, { band: "baseline" });
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["b", "p", "a", "t"]);
  });

  it("runs outbound hook points in exactly the reverse order", async () => {
    const { bus, ran, context, add } = harness();
    const hooks = ["tool.after"] as const;
    add("b", (e) => Continue(appended(e, "b")), { band: "baseline", hooks });
    add("a1", (e) => Continue(appended(e, "a1")), { hooks });
    add("p", (e) => Continue(appended(e, "p")), { band: "platform", hooks });
    add("a2", (e) => Continue(appended(e, "a2")), { hooks });
    add("t", (e) => Continue(appended(e, "t")), { band: "task", hooks });
    const result = await bus.emit("tool.after", toolResult(), context);
    assert.deepEqual(ran, ["t", "a2", "a1", "p", "b"]);
    assert.deepEqual(trail(result.event), ["t", "a2", "a1", "p", "b"]);
  });

  it("keeps registration order within a band", async () => {
    const { bus, ran, context, add } = harness();
    add("one");
    add("plat", undefined, { band: "platform" });
    add("two");
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["plat", "one", "two"]);
  });

  it("plans every hook point's chain by its direction", () => {
    const { bus, add } = harness();
    add("outer", undefined, { band: "baseline", hooks: HOOK_POINTS });
    add("inner", undefined, { band: "task", hooks: HOOK_POINTS });
    for (const hook of ["task.start", "step.start", "model.before", "tool.before"] as const) {
      assert.deepEqual(names(bus, hook), ["outer", "inner"], hook);
    }
    for (const hook of ["model.after", "tool.after", "step.end", "task.end"] as const) {
      assert.deepEqual(names(bus, hook), ["inner", "outer"], hook);
    }
  });

  it("gives a middleware of several hook points one place in the registration order (I3)", () => {
    const { bus, add } = harness();
    add("first", undefined, { hooks: ["tool.before"] });
    add("both", undefined, { hooks: ["tool.before", "tool.after"] });
    add("last", undefined, { hooks: ["tool.before", "tool.after"] });
    assert.deepEqual(names(bus, "tool.before"), ["first", "both", "last"]);
    assert.deepEqual(names(bus, "tool.after"), ["last", "both"]);
  });

  it("refuses chain() of an unknown hook point", () => {
    const { bus } = harness();
    assert.throws(() => bus.chain("tool.around" as HookPoint), (e: unknown) => e instanceof EmitError && e.kind === "unknown_hook");
  });

  it("applies registration overrides to the order and the trace", async () => {
    const { bus, ran, context, add } = harness();
    add("app_one");
    const declared = middleware({ name: "guard", hooks: ["tool.before", "tool.after"], failMode: "closed" }, async () => {
      ran.push("guard");
    });
    const final = bus.register(declared, { band: "baseline", hooks: ["tool.before"], name: "guard_v2" });
    assert.equal(final.band, "baseline");
    assert.deepEqual(names(bus, "tool.after"), []);
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["guard", "app_one"]);
    assert.equal(context.trace.at(0)?.middleware, "guard_v2");
    assert.equal(context.trace.at(0)?.band, "baseline");
  });
});

describe("registration (I2, ruling 3, I11)", () => {
  it("refuses a name twice and unregistering an unknown name", () => {
    const { bus, add } = harness();
    add("guard");
    assert.throws(() => add("guard"), (e: unknown) => e instanceof RegistrationError && e.kind === "duplicate_name" && e.rule === "I2");
    assert.throws(() => bus.unregister("ghost"), {
      message: "no middleware named 'ghost' is registered: only a registered middleware can be unregistered (I2)",
    });
    assert.deepEqual(names(bus, "tool.before"), ["guard"]);
  });

  it("puts a name registered again at the end", () => {
    const { bus, add } = harness();
    add("a");
    add("b");
    bus.unregister("a");
    add("a");
    assert.deepEqual(names(bus, "tool.before"), ["b", "a"]);
  });

  it("keeps an emit's chain when middleware register during it", async () => {
    const { bus, ran, context, add } = harness();
    add("registrar", () => {
      if (!bus.chain("tool.before").some((d) => d.name === "late")) add("late", undefined, { band: "baseline" });
    });
    add("after");
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["registrar", "after"]);
    ran.length = 0;
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["late", "registrar", "after"]);
  });

  it("keeps an emit's chain when middleware unregister during it", async () => {
    const { bus, ran, context, add } = harness();
    add("remover", () => void bus.unregister("victim"));
    add("victim");
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["remover", "victim"]);
    assert.deepEqual(names(bus, "tool.before"), ["remover"]);
  });

  it("removes an unregistered middleware from every hook point", () => {
    const { bus, add } = harness();
    add("m", undefined, { hooks: ["task.start", "task.end"] });
    const removed = bus.unregister("m");
    assert.equal(removed.name, "m");
    assert.deepEqual([...names(bus, "task.start"), ...names(bus, "task.end")], []);
  });

  it("refuses anything but a declared middleware", () => {
    const { bus } = harness();
    assert.throws(() => bus.register({ declaration: {}, call: () => undefined } as never), TypeError);
  });

  it("gives middleware the hook point's event type", async () => {
    const { bus, context } = harness();
    const seen: unknown[] = [];
    bus.register(middleware({ name: "m", hooks: ["task.start"], failMode: "open" }, (event) => void seen.push(event.task)));
    await bus.emit("task.start", new TaskStartEvent({ task: "refunds" }), context);
    assert.deepEqual(seen, ["refunds"]);
  });
});
