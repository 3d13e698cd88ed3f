/**
 * The walk's timeout machinery (one shared timer, answers awaited inline) and the signal a
 * middleware gets only when it declares the parameter.
 */

import assert from "node:assert/strict";
import { AsyncLocalStorage, createHook } from "node:async_hooks";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { Block, Continue, HookBus, middleware, outcomeJSON, RunContext, StepEndEvent, TaskStartEvent, Trace, type MiddlewareObject, type ToolCallEvent } from "../index.js";
import { busy, sleep } from "../conformance/waiting.js";
import { appended, toolCall, trail, untimed } from "../testing/support.js";

const NEVER = new Promise<never>(() => {});

function bus(...declared: Parameters<HookBus["register"]>[0][]): HookBus {
  const b = new HookBus();
  for (const mw of declared) b.register(mw);
  return b;
}

describe("deadlines (ruling 10): one shared timer, answers awaited inline", () => {
  it("times out a middleware that never settles, at its deadline, and goes on", async () => {
    const ran: string[] = [];
    const b = bus(
      middleware({ name: "hangs", hooks: ["tool.before"], failMode: "open", timeout: "30ms" }, () => {
        ran.push("hangs");
        return NEVER;
      }),
      middleware({ name: "after", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async (e) => {
        ran.push("after");
        return Continue(appended(e, "after"));
      }),
    );
    const context = new RunContext();
    const started = performance.now();
    const result = await b.emit("tool.before", toolCall(), context);
    const took = performance.now() - started;
    assert.ok(took >= 29 && took < 2_000, `took ${took} ms`);
    assert.deepEqual(ran, ["hangs", "after"]);
    assert.deepEqual(trail(result.event), ["after"]);
    const records = untimed(context.trace);
    assert.deepEqual(records.map((r) => [r["middleware"], r["kind"], r["failure"]]), [
      ["hangs", "failure", "timeout"],
      ["after", "outcome", undefined],
      [undefined, "hook", undefined],
    ]);
    const hung = context.trace.at(0);
    assert.ok(hung !== undefined && hung.duration_ns >= 29e6, `duration ${hung?.duration_ns}`);
  });

  it("blocks at the deadline of a closed middleware that never settles", async () => {
    const b = bus(middleware({ name: "hangs", hooks: ["tool.before"], failMode: "closed", timeout: 0.02 }, () => NEVER));
    const result = await b.emit("tool.before", toolCall(), new RunContext());
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "block", reason: "middleware hangs failed: timeout", code: "middleware_timeout" });
  });

  it("discards an answer that settles after the deadline passed", async () => {
    let release: (() => void) | undefined;
    const b = bus(
      middleware({ name: "late", hooks: ["tool.before"], failMode: "open", timeout: "20ms" }, async (e) => {
        await new Promise<void>((resolve) => (release = resolve));
        return Continue(appended(e, "late"));
      }),
    );
    const context = new RunContext();
    const result = await b.emit("tool.before", toolCall(), context);
    assert.equal(trail(result.event), undefined);
    release?.(); // the abandoned walk wakes up and must drop the answer
    await sleep(0.01, new AbortController().signal);
    assert.equal(context.trace.length, 2);
    assert.equal(context.trace.at(0)?.failure, "timeout");
  });

  it("treats an answer that arrives late without yielding as a timeout (no timer involved)", async () => {
    const b = bus(middleware({ name: "busy", hooks: ["tool.before"], failMode: "open", timeout: "10ms" }, async (e) => {
      busy(0.03);
      return Continue(appended(e, "late"));
    }));
    const context = new RunContext();
    const result = await b.emit("tool.before", toolCall(), context);
    assert.equal(trail(result.event), undefined);
    assert.equal(context.trace.at(0)?.error, "MiddlewareTimeout");
  });

  it("serves concurrent emits with different deadlines from one timer", async () => {
    const hang = (name: string, timeout: string) =>
      middleware({ name, hooks: ["tool.before"], failMode: "closed", timeout }, () => NEVER);
    const slow = bus(hang("slow", "200ms"));
    const fast = bus(hang("fast", "20ms"));
    const quick = bus(middleware({ name: "quick", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async () => undefined));
    const order: string[] = [];
    const started = performance.now();
    const emits = [
      slow.emit("tool.before", toolCall(), new RunContext()).then(() => order.push("slow")),
      fast.emit("tool.before", toolCall(), new RunContext()).then(() => order.push("fast")),
      quick.emit("tool.before", toolCall(), new RunContext()).then(() => order.push("quick")),
    ];
    await Promise.all(emits);
    assert.deepEqual(order, ["quick", "fast", "slow"]);
    assert.ok(performance.now() - started < 2_000);
  });

  it("goes on after a timeout in the emit's async context", async () => {
    const storage = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const b = bus(
      middleware({ name: "hangs", hooks: ["tool.before"], failMode: "open", timeout: "20ms" }, () => NEVER),
      middleware({ name: "reads", hooks: ["tool.before"], failMode: "open" }, () => void seen.push(storage.getStore())),
    );
    await Promise.all(["a", "b"].map((id) => storage.run(id, () => b.emit("tool.before", toolCall(), new RunContext()))));
    assert.deepEqual(seen.sort(), ["a", "b"]);
  });

  it("watches a timed emit only once an answer is pending, and sees deadlines of chains replanned", async () => {
    // The emit's async context is captured (an AsyncResource) and the emit joins the watched
    // list at its first pending answer; a chain that answers synchronously needs neither.
    let scopes = 0;
    const hook = createHook({ init: (_id, type) => void (type === "harnessweaver.emit" && (scopes += 1)) }).enable();
    try {
      const plain = bus(
        middleware({ name: "sync_a", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, () => undefined),
        middleware({ name: "sync_b", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, (e) => Continue(appended(e, "b"))),
      );
      const context = new RunContext();
      const result = await plain.emit("tool.before", toolCall(), context);
      assert.deepEqual(trail(result.event), ["b"]);
      assert.equal(scopes, 0);
      assert.equal(context.trace.length, 3);

      const mixed = bus(
        middleware({ name: "sync", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, () => undefined),
        middleware({ name: "async_a", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async () => undefined),
        middleware({ name: "async_b", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async () => undefined),
      );
      await mixed.emit("tool.before", toolCall(), new RunContext());
      assert.equal(scopes, 1); // one per emit, however many answers are pending

      // Unregistering the only middleware with a timeout replans the chain as not timed.
      const replanned = bus(
        middleware({ name: "timed", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async () => undefined),
        middleware({ name: "untimed", hooks: ["tool.before"], failMode: "closed" }, async () => undefined),
      );
      await replanned.emit("tool.before", toolCall(), new RunContext());
      assert.equal(scopes, 2);
      replanned.unregister("timed");
      await replanned.emit("tool.before", toolCall(), new RunContext());
      assert.equal(scopes, 2);
      replanned.register(middleware({ name: "hangs", hooks: ["tool.before"], failMode: "closed", timeout: "20ms" }, () => NEVER));
      const late = await replanned.emit("tool.before", toolCall(), new RunContext());
      assert.equal(late.outcome.kind === "block" && late.outcome.code, "middleware_timeout");
    } finally {
      hook.disable();
    }
  });

  it("times out a middleware that stays pending after synchronous ones, in the emit's async context", async () => {
    const storage = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const b = bus(
      middleware({ name: "sync", hooks: ["tool.before"], failMode: "open", timeout: "1s" }, () => undefined),
      middleware({ name: "quick", hooks: ["tool.before"], failMode: "open", timeout: "1s" }, async () => undefined),
      middleware({ name: "hangs", hooks: ["tool.before"], failMode: "open", timeout: "20ms" }, () => NEVER),
      middleware({ name: "reads", hooks: ["tool.before"], failMode: "open", timeout: "1s" }, async () => void seen.push(storage.getStore())),
    );
    const context = new RunContext();
    await storage.run("emit", () => b.emit("tool.before", toolCall(), context));
    assert.deepEqual(seen, ["emit"]);
    assert.deepEqual(untimed(context.trace).map((r) => [r["middleware"], r["kind"]]), [
      ["sync", "outcome"],
      ["quick", "outcome"],
      ["hangs", "failure"],
      ["reads", "outcome"],
      [undefined, "hook"],
    ]);
  });

  it("rejects at once when the caller cancels while a middleware of an untimed chain is pending", async () => {
    const controller = new AbortController();
    const b = bus(
      middleware({ name: "sync", hooks: ["tool.before"], failMode: "closed" }, () => undefined),
      middleware({ name: "hangs", hooks: ["tool.before"], failMode: "closed" }, () => {
        setTimeout(() => controller.abort(new Error("caller gave up")), 5);
        return NEVER;
      }),
    );
    const context = new RunContext();
    await assert.rejects(b.emit("tool.before", toolCall(), context, { signal: controller.signal }), /caller gave up/);
    assert.deepEqual(untimed(context.trace).map((r) => r["middleware"]), ["sync"]);
  });

  it("keeps the process alive while a timed middleware is pending, until its deadline", async () => {
    // Nothing else keeps these processes up: the shared timer must, from the turn after the
    // middleware is found pending (the reference is taken lazily, then).
    const index = new URL("../index.js", import.meta.url).href;
    const script = (emit: string) => `
      const { HookBus, middleware, RunContext, ToolCallEvent } = await import(${JSON.stringify(index)});
      const quick = new HookBus();
      quick.register(middleware({ name: "quick", hooks: ["tool.before"], failMode: "closed", timeout: "50ms" }, async () => undefined));
      const hangs = new HookBus();
      hangs.register(middleware({ name: "hangs", hooks: ["tool.before"], failMode: "closed", timeout: "100ms" }, async () => {
        await null;
        return new Promise(() => {});
      }));
      const event = new ToolCallEvent({ step: 1, tool: { name: "t" }, call: { id: "c", name: "t", arguments: {} } });
      const emit = (b) => b.emit("tool.before", event, new RunContext());
      ${emit}
    `;
    const run = promisify(execFile);
    for (const emit of [
      "console.log((await emit(hangs)).outcome.code);",
      "setTimeout(() => emit(hangs).then((r) => console.log(r.outcome.code)), 5);",
      // The timer is armed (for 50 ms) and unreferenced when the hanging emit starts: the
      // check after the turn must take the reference.
      "await emit(quick); console.log((await emit(hangs)).outcome.code);",
    ]) {
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script(emit)]);
      assert.equal(stdout.trim(), "middleware_timeout", emit);
    }
  });

  it("references the shared timer only while a timed emit is pending past its turn", async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const before = timeouts();
    let release: (() => void) | undefined;
    const b = bus(middleware({ name: "waits", hooks: ["tool.before"], failMode: "closed", timeout: "1m" }, () => new Promise<void>((resolve) => (release = resolve))));
    const pending = b.emit("tool.before", toolCall(), new RunContext());
    await new Promise((resolve) => setImmediate(resolve)); // a turn of the event loop
    assert.equal(timeouts(), before + 1);
    release?.();
    const result = await pending;
    assert.equal(result.outcome.kind, "continue");
    assert.equal(timeouts(), before);
  });

  it("lets the process exit while no emit with a deadline is in flight", async () => {
    // The shared timer is unreferenced once nothing waits on it; emits still complete.
    const b = bus(middleware({ name: "quick", hooks: ["tool.before"], failMode: "closed", timeout: "1m" }, async () => undefined));
    for (let i = 0; i < 3; i++) await b.emit("tool.before", toolCall(), new RunContext());
    const active = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout");
    assert.equal(active.length, 0, `still referenced: ${active.join()}`);
  });
});

describe("the signal is made for middleware that declare it", () => {
  it("hands a fresh AbortSignal to a function that declares a third parameter", async () => {
    const signals: unknown[] = [];
    const b = bus(middleware({ name: "wants", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async (_e, _env, signal) => {
      signals.push(signal);
    }));
    const context = new RunContext();
    await b.emit("tool.before", toolCall(), context);
    await b.emit("tool.before", toolCall(), context);
    assert.equal(signals.length, 2);
    assert.ok(signals.every((s) => s instanceof AbortSignal && !s.aborted));
    assert.notEqual(signals[0], signals[1]);
  });

  it("aborts that signal when the timeout runs out", async () => {
    let signal: AbortSignal | undefined;
    const b = bus(middleware({ name: "hangs", hooks: ["tool.before"], failMode: "open", timeout: "20ms" }, (_e, _env, s) => {
      signal = s;
      return NEVER;
    }));
    await b.emit("tool.before", toolCall(), new RunContext());
    assert.equal(signal?.aborted, true);
    assert.ok(signal?.reason instanceof DOMException && signal.reason.name === "TimeoutError");
  });

  it("makes no signal for a function that declares fewer parameters", async () => {
    const thirds: unknown[] = [];
    const b = bus(
      middleware({ name: "two", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, function two(this: unknown, _e, _env) {
        thirds.push(arguments[2]);
        return undefined;
      }),
      middleware({ name: "rest", hooks: ["tool.before"], failMode: "closed" }, (...args: unknown[]) => void thirds.push(args[2])),
    );
    await b.emit("tool.before", toolCall(), new RunContext());
    assert.deepEqual(thirds, [undefined, undefined]);
  });

  it("still times out a middleware without a signal", async () => {
    const b = bus(middleware({ name: "hangs", hooks: ["tool.before"], failMode: "closed", timeout: "20ms" }, () => NEVER));
    const result = await b.emit("tool.before", toolCall(), new RunContext());
    assert.equal(result.outcome.kind === "block" && result.outcome.code, "middleware_timeout");
  });

  it("looks at the call method's parameters for a middleware object", async () => {
    const seen: unknown[] = [];
    class Wants implements MiddlewareObject<ToolCallEvent> {
      async call(_e: ToolCallEvent, _env: unknown, signal: AbortSignal) {
        seen.push(signal);
        return undefined;
      }
    }
    class Ignores implements MiddlewareObject<ToolCallEvent> {
      async call(_e: ToolCallEvent) {
        seen.push("ignores");
        return undefined;
      }
    }
    const b = bus(
      middleware({ hooks: ["tool.before"], failMode: "closed" }, new Wants()),
      middleware({ hooks: ["tool.before"], failMode: "closed" }, new Ignores()),
    );
    await b.emit("tool.before", toolCall(), new RunContext());
    assert.ok(seen[0] instanceof AbortSignal);
    assert.equal(seen[1], "ignores");
  });

  it("aborts a declared signal when the caller cancels, and rejects (I12)", async () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    const b = bus(middleware({ name: "hangs", hooks: ["tool.before"], failMode: "closed" }, (_e, _env, s) => {
      signal = s;
      setTimeout(() => controller.abort(new Error("caller gave up")), 5);
      return NEVER;
    }));
    const context = new RunContext();
    await assert.rejects(b.emit("tool.before", toolCall(), context, { signal: controller.signal }), /caller gave up/);
    assert.equal(signal?.aborted, true);
    assert.equal(context.trace.length, 0);
  });
});

describe("trace storage", () => {
  it("keeps records identical on every read, in order, frozen", async () => {
    const b = bus(
      middleware({ name: "a", hooks: ["tool.before"], failMode: "closed" }, async () => undefined),
      middleware({ name: "b", hooks: ["tool.before"], failMode: "closed" }, async (e) => Continue(appended(e, "b"))),
    );
    const context = new RunContext();
    await b.emit("tool.before", toolCall(), context);
    const trace = context.trace;
    assert.equal(trace.length, 3);
    assert.equal(trace.at(0), trace.at(-3));
    assert.equal(trace.at(0), trace.records()[0]);
    assert.equal(trace.at(3), undefined);
    assert.ok([...trace].every((record) => Object.isFrozen(record)));
    const correlation = { run: context.envelope.runId, step: 1, tool: "refund_payment" };
    assert.deepEqual(untimed(trace), [
      { emit: 1, hook: "tool.before", ...correlation, kind: "outcome", middleware: "a", band: "app", outcome: "continue", modified: false },
      { emit: 1, hook: "tool.before", ...correlation, kind: "outcome", middleware: "b", band: "app", outcome: "continue", modified: true },
      { emit: 1, hook: "tool.before", ...correlation, kind: "hook", outcome: "continue", modified: true },
    ]);
    for (const record of trace) assert.ok(Number.isInteger(record.t_ns) && Number.isInteger(record.duration_ns) && record.duration_ns >= 0);
  });

  it("keeps many records, of several hook points, shared and whole, across its storage chunks", async () => {
    // Chunks hold 16, 32, ... 4096 records, then 4096 each: these 10,072 records span them all.
    const b = new HookBus();
    b.register(middleware({ name: "first", hooks: ["task.start", "step.end"], failMode: "closed" }, () => undefined));
    b.register(middleware({ name: "second", hooks: ["task.start", "step.end"], failMode: "closed" }, async () => undefined));
    b.register(middleware({ name: "stopper", hooks: ["step.end"], failMode: "closed" }, (e: StepEndEvent) =>
      e.step % 7 === 0 ? Block("stop", { code: "every_seventh" }) : undefined,
    ));
    const context = new RunContext();
    const expected: [number, string, string | undefined, string, unknown][] = [];
    for (let emit = 1; emit <= 3000; emit++) {
      if (emit % 2 === 1) {
        await b.emit("task.start", new TaskStartEvent({ task: "t" }), context);
        for (const name of ["first", "second", undefined]) expected.push([emit, "task.start", name, name === undefined ? "hook" : "outcome", undefined]);
      } else {
        const step = emit / 2;
        await b.emit("step.end", new StepEndEvent({ step }), context);
        // step.end is outbound: the chain runs in reverse; the block stops it at once.
        const code = step % 7 === 0 ? "every_seventh" : undefined;
        const names = code === undefined ? ["stopper", "second", "first", undefined] : ["stopper", undefined];
        for (const name of names) expected.push([emit, "step.end", name, name === undefined ? "hook" : "outcome", name === "stopper" || name === undefined ? code : undefined]);
      }
    }
    const trace = context.trace;
    assert.equal(trace.length, expected.length);
    assert.equal(trace.emits, 3000);
    const records = trace.records();
    assert.deepEqual(records.map((r) => [r.emit, r.hook, r.middleware, r.kind, r.code]), expected);
    for (const i of [0, 15, 16, 47, 48, 8175, 8176, 8177, 10000, expected.length - 1]) {
      assert.equal(trace.at(i), records[i], `record ${i}`);
      assert.equal(trace.at(i - expected.length), records[i], `record ${i - expected.length}`);
    }
    let end = 0;
    for (const record of records) {
      assert.ok(Number.isInteger(record.t_ns) && Number.isInteger(record.duration_ns) && record.duration_ns >= 0);
      if (record.kind !== "hook") {
        assert.ok(record.t_ns >= end, "a middleware starts where the one before it ended");
        end = record.t_ns + record.duration_ns;
      }
    }
    const copy = Trace.fromJSONL(trace.toJSONL());
    assert.deepEqual(copy.records(), records);
    assert.equal(copy.emits, 3000);
  });
});
