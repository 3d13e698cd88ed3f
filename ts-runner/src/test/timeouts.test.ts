import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Block, Continue, middleware, outcomeJSON } from "../index.js";
import { busy, sleep } from "../conformance/waiting.js";
import { appended, harness, TOOL_CALL, toolCall, trail, untimed } from "../testing/support.js";

const TIMEOUT = { error: "MiddlewareTimeout", failure: "timeout" };

describe("timeouts (ruling 10, I9)", () => {
  it("aborts a suspended middleware's signal at its deadline and stops waiting (closed)", async () => {
    const { bus, ran, context, add } = harness();
    let reason: unknown;
    add("slow", async (_e, signal) => {
      signal.addEventListener("abort", () => (reason = signal.reason));
      await sleep(30, signal);
      return Continue();
    }, { timeout: "50ms" });
    add("after");
    const started = performance.now();
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.ok(performance.now() - started < 5_000);
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "block", reason: "middleware slow failed: timeout", code: "middleware_timeout" });
    assert.ok(reason instanceof DOMException && reason.name === "TimeoutError");
    assert.deepEqual(ran, ["slow"]);
    assert.deepEqual(untimed(context.trace)[0], {
      emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "failure", middleware: "slow", band: "app", outcome: "block", modified: false, code: "middleware_timeout", ...TIMEOUT, fail_mode: "closed",
    });
  });

  it("goes on after an open middleware's timeout, discarding what it would have changed", async () => {
    const { bus, ran, context, add } = harness();
    add("editor", (e) => Continue(appended(e, "edited")));
    add("slow", async (e, signal) => {
      await sleep(30, signal);
      return Continue(appended(e, "late"));
    }, { timeout: 0.05, failMode: "open" });
    add("after", (e) => Continue(appended(e, "after")));
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(ran, ["editor", "slow", "after"]);
    assert.deepEqual(trail(result.event), ["edited", "after"]);
    assert.deepEqual(untimed(context.trace)[1], {
      emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "failure", middleware: "slow", band: "app", outcome: "continue", modified: false, ...TIMEOUT, fail_mode: "open",
    });
  });

  it("treats a late answer from a middleware that never yields as a timeout", async () => {
    const { bus, context, add } = harness();
    add("busy", (e) => {
      busy(0.1);
      return Continue(appended(e, "late"));
    }, { timeout: "20ms" });
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.equal(result.outcome.kind === "block" && result.outcome.code, "middleware_timeout");
    assert.equal(trail(result.event), undefined);
  });

  it("treats a throw after the deadline as a timeout, not an exception", async () => {
    const { bus, context, add } = harness();
    add("busy", () => {
      busy(0.1);
      throw new Error("sk-live-SECRET");
    }, { timeout: "20ms", failMode: "open" });
    await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual([context.trace.at(0)?.failure, context.trace.at(0)?.error], ["timeout", "MiddlewareTimeout"]);
  });

  it("discards a late Block of an open middleware", async () => {
    const { bus, context, add } = harness();
    add("busy", () => {
      busy(0.1);
      return Block("too late", { code: "late" });
    }, { timeout: "20ms", failMode: "open" });
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: false });
    assert.equal(context.trace.at(0)?.failure, "timeout");
  });

  it("treats a late answer after a suspension as a timeout", async () => {
    const { bus, context, add } = harness();
    add("mixed", async (_e, signal) => {
      await sleep(0, signal);
      busy(0.1);
      return Continue();
    }, { timeout: "20ms" });
    assert.equal((await bus.emit("tool.before", toolCall(), context)).outcome.kind, "block");
  });

  it("times out a plain function that blocks past its deadline", async () => {
    const { bus, context } = harness();
    bus.register(middleware({ name: "sync", hooks: ["tool.before"], failMode: "open", timeout: "10ms" }, () => busy(0.05)));
    await bus.emit("tool.before", toolCall(), context);
    assert.equal(context.trace.at(0)?.error, "MiddlewareTimeout");
  });

  it("keeps an answer that arrives in time, and never aborts its signal", async () => {
    const { bus, context, add } = harness();
    let signalled: AbortSignal | undefined;
    add("quick", async (_e, signal) => {
      signalled = signal;
      await sleep(0.01, signal);
      return Block("over the cap", { code: "cap" });
    }, { timeout: "30s" });
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "block", reason: "over the cap", code: "cap" });
    assert.equal(signalled?.aborted, false);
  });

  it("lets registration set or replace the timeout", async () => {
    const { bus, context } = harness();
    const slow = middleware({ name: "slow", hooks: ["tool.before"], failMode: "open", timeout: "1ms" }, async (_e, _env, signal) => sleep(0.02, signal));
    bus.register(slow, { timeout: "30s" });
    await bus.emit("tool.before", toolCall(), context);
    assert.equal(context.trace.at(0)?.kind, "outcome");
    const untimedOne = middleware({ name: "untimed", hooks: ["tool.before"], failMode: "open" }, async (_e, _env, signal) => sleep(30, signal));
    bus.unregister("slow");
    bus.register(untimedOne, { timeout: 0.05 });
    await bus.emit("tool.before", toolCall(), context);
    assert.equal(context.trace.at(-2)?.failure, "timeout");
  });

  it("leaves cancellation by the caller to the caller (I12)", async () => {
    const { bus, ran, context, add } = harness();
    const controller = new AbortController();
    let inner: AbortSignal | undefined;
    add("first");
    add("hanging", async (_e, signal) => {
      inner = signal;
      setTimeout(() => controller.abort(new Error("caller gave up")), 10);
      await sleep(30, signal);
    });
    add("never");
    await assert.rejects(bus.emit("tool.before", toolCall(), context, { signal: controller.signal }), /caller gave up/);
    assert.deepEqual(ran, ["first", "hanging"]);
    assert.equal(inner?.aborted, true);
    assert.deepEqual(untimed(context.trace).map((r) => r["kind"]), ["outcome"]); // no failure, no hook record
    await assert.rejects(bus.emit("tool.before", toolCall(), context, { signal: controller.signal }), /caller gave up/);
  });

  it("treats an AbortError thrown while the caller has cancelled as the caller's (I12, I15)", async () => {
    const { bus, context, add } = harness();
    const controller = new AbortController();
    bus.register(middleware({ name: "fetcher", hooks: ["tool.before"], failMode: "closed" }, () => {
      controller.abort(new Error("caller gave up")); // the caller cancels while it runs...
      throw new DOMException("fetch aborted", "AbortError"); // ...and its fetch rejects
    }));
    add("never");
    await assert.rejects(bus.emit("tool.before", toolCall(), context, { signal: controller.signal }), /caller gave up/);
    assert.deepEqual(untimed(context.trace), []); // not a failure of the middleware, no hook record
  });

  it("ends the emit with the caller's cancellation even when a middleware swallows it (I30)", async () => {
    const { bus, ran, context, add } = harness();
    const controller = new AbortController();
    let answered = false;
    add("first");
    add("swallower", async (_e, signal) => {
      setTimeout(() => controller.abort(new Error("caller gave up")), 5);
      try {
        await sleep(30, signal);
      } catch {
        // bad manners: it answers anyway
      }
      answered = true;
      return Block("blocked anyway", { code: "stubborn" });
    });
    add("never");
    await assert.rejects(bus.emit("tool.before", toolCall(), context, { signal: controller.signal }), /caller gave up/);
    assert.deepEqual(ran, ["first", "swallower"]);
    assert.deepEqual(untimed(context.trace).map((r) => r["middleware"]), ["first"]); // no record of it, no hook record
    await sleep(0.01, new AbortController().signal);
    assert.equal(answered, true); // it did answer, later: dropped
    assert.deepEqual(untimed(context.trace).map((r) => r["middleware"]), ["first"]);
  });

  it("starts no more middleware once the caller has cancelled (I12)", async () => {
    const { bus, ran, context, add } = harness();
    const controller = new AbortController();
    // A plain function: it has finished, and is traced, when the bus sees the cancellation.
    bus.register(middleware({ name: "canceller", hooks: ["tool.before"], failMode: "closed" }, () => {
      controller.abort(new Error("enough"));
    }));
    add("never");
    await assert.rejects(bus.emit("tool.before", toolCall(), context, { signal: controller.signal }), /enough/);
    assert.deepEqual(ran, []);
    assert.deepEqual(untimed(context.trace).map((r) => r["middleware"]), ["canceller"]);
  });
});

describe("waiting behaviours", () => {
  it("sleep resolves, or rejects as soon as the signal aborts", async () => {
    const controller = new AbortController();
    await sleep(0, controller.signal);
    const pending = sleep(30, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(pending, /stop/);
    await assert.rejects(sleep(0, controller.signal), /stop/);
  });

  it("busy blocks for its time without yielding", async () => {
    let ticked = false;
    setImmediate(() => (ticked = true));
    const started = performance.now();
    busy(0.02);
    assert.ok(performance.now() - started >= 20);
    assert.equal(ticked, false);
  });
});
