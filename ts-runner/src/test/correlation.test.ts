import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runCase } from "../conformance/case.js";
import {
  Continue,
  Envelope,
  HookBus,
  jsonlSink,
  middleware,
  ModelRequestEvent,
  RunContext,
  StepEndEvent,
  StepStartEvent,
  TaskEndEvent,
  TaskStartEvent,
  ToolCallEvent,
  Trace,
  TraceFormatError,
  type HookPoint,
  type TraceRecord,
} from "../index.js";
import { CATALOGUE, RUN, toolCall, toolResult } from "../testing/support.js";

/** The correlation fields of each record, in their key order (absent ones left out). */
function correlations(records: Iterable<TraceRecord>): Record<string, unknown>[] {
  return [...records].map((record) => {
    const keys = Object.keys(record);
    assert.deepEqual(keys.slice(0, 2), ["emit", "hook"]);
    const fields = keys.slice(2, keys.indexOf("kind"));
    return Object.fromEntries(fields.map((key) => [key, record[key as keyof TraceRecord]]));
  });
}

/** A bus with one passing middleware on every hook point. */
function everywhere(): HookBus {
  const bus = new HookBus();
  const hooks = CATALOGUE.hooks.map((hook) => hook.name) as HookPoint[];
  bus.register(middleware({ name: "pass", hooks, failMode: "closed" }, () => undefined));
  return bus;
}

function context(runId: string = RUN, trace: Trace = new Trace()): RunContext {
  return new RunContext({ envelope: new Envelope({ runId }), trace });
}

/** An event of `Cls` made without its checks: a look-alike the caller may emit (I7 checks `instanceof` only). */
function lookAlike<T extends object>(Cls: abstract new (...args: never) => T, fields: object): T {
  return Object.freeze(Object.assign(Object.create(Cls.prototype as object) as T, fields));
}

describe("trace correlation (I21)", () => {
  it("puts run, step and tool on tool.before records, run and step on step.start, run alone on task.start", async () => {
    const bus = everywhere();
    const ctx = context();
    await bus.emit("task.start", new TaskStartEvent({ task: "t" }), ctx);
    await bus.emit("step.start", new StepStartEvent({ step: 3 }), ctx);
    await bus.emit("model.before", new ModelRequestEvent({ step: 3, request: {} }), ctx);
    await bus.emit("tool.before", toolCall(), ctx);
    await bus.emit("tool.after", toolResult(), ctx);
    await bus.emit("step.end", new StepEndEvent({ step: 3 }), ctx);
    await bus.emit("task.end", new TaskEndEvent({ steps: 7 }), ctx);
    const each = (fields: object) => [fields, fields]; // the middleware record, then the hook record
    assert.deepEqual(correlations(ctx.trace), [
      ...each({ run: RUN }),
      ...each({ run: RUN, step: 3 }),
      ...each({ run: RUN, step: 3 }),
      ...each({ run: RUN, step: 1, tool: "refund_payment" }),
      ...each({ run: RUN, step: 1, tool: "refund_payment" }),
      ...each({ run: RUN, step: 3 }),
      ...each({ run: RUN }), // task.end's `steps` is no step
    ]);
    assert.ok(ctx.trace.toJSONL().startsWith('{"emit":1,"hook":"task.start","run":"run-1","kind":"outcome",'));
    assert.ok(ctx.trace.toJSONL().includes('{"emit":4,"hook":"tool.before","run":"run-1","step":1,"tool":"refund_payment","kind":"outcome",'));
  });

  it("comes from the caller's event, never from a middleware's modification", async () => {
    const bus = new HookBus();
    const other = (e: ToolCallEvent) => e.with({ step: 99, tool: { name: "delete_everything" } });
    bus.register(middleware({ name: "rewriter", hooks: ["tool.before"], failMode: "closed" }, (e) => Continue(other(e))));
    bus.register(middleware({ name: "after", hooks: ["tool.before"], failMode: "closed" }, () => undefined));
    const ctx = context();
    const result = await bus.emit("tool.before", toolCall(), ctx);
    assert.equal(result.event.step, 99); // the middleware did change the event
    const asked = { run: RUN, step: 1, tool: "refund_payment" };
    assert.deepEqual(correlations(ctx.trace), [asked, asked, asked]);
  });

  it("leaves out a step that is negative, past 2^53 - 1 or not an integer, and a tool name that is not text", async () => {
    const bus = everywhere();
    const ctx = context();
    const steps: unknown[] = [-1, 2 ** 53, 1e300, -0, 0, Number.MAX_SAFE_INTEGER];
    for (const step of steps) await bus.emit("step.end", new StepEndEvent({ step: step as number }), ctx);
    // Made without checks (a look-alike passes emit's instanceof): any value at all.
    for (const step of [1.5, Number.NaN, Infinity, "2", 2n, null]) await bus.emit("step.end", lookAlike(StepEndEvent, { step }), ctx);
    await bus.emit("tool.before", lookAlike(ToolCallEvent, { step: 4, tool: { name: 42 }, call: {} }), ctx);
    await bus.emit("tool.before", lookAlike(ToolCallEvent, { step: -4, tool: null, call: {} }), ctx);
    const hooks = correlations(ctx.trace).filter((_, i) => i % 2 === 1);
    assert.deepEqual(hooks, [
      { run: RUN },
      { run: RUN },
      { run: RUN },
      { run: RUN, step: 0 },
      { run: RUN, step: 0 },
      { run: RUN, step: Number.MAX_SAFE_INTEGER },
      ...Array.from({ length: 6 }, () => ({ run: RUN })),
      { run: RUN, step: 4 },
      { run: RUN },
    ]);
    assert.ok(Object.is(ctx.trace.at(7)?.step, 0), "-0 is traced as 0");
    assert.deepEqual(Trace.fromJSONL(ctx.trace.toJSONL()).records(), ctx.trace.records());
  });

  it("leaves out what a look-alike event throws on when read, and still traces the emit", async () => {
    const bus = everywhere();
    const ctx = context();
    const throwing = Object.freeze(
      Object.defineProperty(Object.create(ToolCallEvent.prototype as object) as ToolCallEvent, "tool", {
        get() {
          throw new Error("secret");
        },
      }),
    );
    await bus.emit("tool.before", throwing, ctx);
    assert.deepEqual(correlations(ctx.trace), [{ run: RUN }, { run: RUN }]);
  });

  it("writes a surrogate code point of a run id or tool name as U+FFFD", async () => {
    const bus = everywhere();
    const ctx = context("run-\ud800");
    const event = toolCall().with({ tool: { name: "refund\udc00payment" } });
    await bus.emit("tool.before", event, ctx);
    await bus.emit("tool.before", event, ctx);
    const expected = { run: "run-\ufffd", step: 1, tool: "refund\ufffdpayment" };
    assert.deepEqual(correlations(ctx.trace), [expected, expected, expected, expected]);
    const text = ctx.trace.toJSONL();
    assert.ok(text.includes('"run":"run-\ufffd","step":1,"tool":"refund\ufffdpayment"'));
    assert.ok(Buffer.from(text, "utf8").toString("utf8") === text, "the JSON Lines are UTF-8 as written");
    assert.equal(Trace.fromJSONL(text).toJSONL(), text);
  });

  it("names each record's own run when contexts of two runs share one trace, emits interleaved", async () => {
    // Each emit traces `first` at once, then waits at `gate`: the two emits' records interleave.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const bus = new HookBus();
    bus.register(middleware({ name: "first", hooks: ["tool.before"], failMode: "closed" }, () => undefined));
    bus.register(middleware({ name: "gate", hooks: ["tool.before"], failMode: "closed" }, async () => void (await gate)));
    const trace = new Trace();
    const [a, b] = [context("run-a", trace), context("run-b", trace)];
    const both = Promise.all([
      bus.emit("tool.before", toolCall(), a),
      bus.emit("tool.before", toolCall().with({ step: 2, tool: { name: "lookup" } }), b),
    ]);
    open();
    await both;
    await bus.emit("tool.before", toolCall(), a);
    const A = ["run-a", 1, "refund_payment"];
    const B = ["run-b", 2, "lookup"];
    assert.deepEqual(
      trace.records().map((r) => [r.emit, r.middleware ?? r.kind, r.run, r.step, r.tool]),
      [
        [1, "first", ...A],
        [2, "first", ...B],
        [1, "gate", ...A],
        [1, "hook", ...A],
        [2, "gate", ...B],
        [2, "hook", ...B],
        [3, "first", ...A],
        [3, "gate", ...A],
        [3, "hook", ...A],
      ],
    );
    assert.equal(Trace.fromJSONL(trace.toJSONL()).toJSONL(), trace.toJSONL());
  });

  it("reuses the previous emit's correlation while it is the same", () => {
    const trace = new Trace();
    const event = toolCall();
    const first = trace.correlate("r", 4, event);
    assert.equal(trace.correlate("r", 4, toolCall()), first); // equal, not the same event
    assert.ok(Object.isFrozen(first));
    const next = trace.correlate("r", 4, event.with({ step: 2 }));
    assert.notEqual(next, first);
    assert.deepEqual(next, { run: "r", step: 2, tool: "refund_payment" });
    assert.equal(trace.correlate("r", 4, event.with({ step: 2 }).with({})), next);
  });

  it("survives the limit, drain(), a sink and a JSON Lines round trip, across storage chunks", async () => {
    const bus = everywhere();
    const emitSteps = async (ctx: RunContext, from: number, count: number) => {
      // A step per emit, then a stretch of one event (one correlation for many records).
      for (let step = from; step < from + count; step++) {
        const event = new StepEndEvent({ step: step < from + count / 2 ? step : from });
        await bus.emit("step.end", event, ctx);
      }
    };
    const stepOf = (record: TraceRecord, from: number, count: number) => {
      const step = from + record.emit - 1;
      return step < from + count / 2 ? step : from;
    };
    const check = (records: readonly TraceRecord[], from: number, count: number, run: string) => {
      for (const record of records) assert.deepEqual([record.run, record.step], [run, stepOf(record, from, count)], JSON.stringify(record));
    };

    const limited = context("limited", new Trace({ limit: 1000 }));
    await emitSteps(limited, 0, 5000);
    assert.equal(limited.trace.length, 1000);
    assert.equal(limited.trace.dropped, 9000);
    check(limited.trace.records(), 0, 5000, "limited");

    const drained = context("drained");
    await emitSteps(drained, 10, 3000);
    const first = drained.trace.drain();
    await emitSteps(drained, 10, 3000); // emits 3001...6000: steps go on from 3010, half of them
    check(first, 10, 3000, "drained");
    assert.equal(first.length, 6000);
    assert.deepEqual(drained.trace.at(0)?.emit, 3001);
    assert.equal(drained.trace.at(0)?.step, 10); // emit 3001 emitted step 10 again

    let written = "";
    const sunk = context("sunk", new Trace({ sink: jsonlSink({ write: (text: string) => (written += text) }), batch: 500 }));
    await emitSteps(sunk, 0, 3000);
    sunk.trace.close();
    const read = Trace.fromJSONL(written).records();
    assert.equal(read.length, 6000);
    check(read, 0, 3000, "sunk");

    const back = Trace.fromJSONL(limited.trace.toJSONL());
    assert.deepEqual(back.records(), limited.trace.records());
    assert.equal(back.toJSONL(), limited.trace.toJSONL());
  });

  it("gives each context of a corpus case its name as run id (§4)", async () => {
    const reply = await runCase(
      {
        given: { middleware: [{ name: "guard", hooks: ["tool.before"], fail_mode: "closed", does: { return: "none" } }] },
        when: [{ emit: "tool.before" }, { emit: "task.start", context: "other" }],
      },
      CATALOGUE.samples,
      new Set(["timeouts", "concurrency"]),
    );
    assert.ok("actual" in reply);
    const traces = reply.actual["traces"] as Record<string, Record<string, unknown>[]>;
    assert.deepEqual(traces["main"]?.map((r) => [r["run"], r["step"], r["tool"]]), [
      ["main", 1, "refund_payment"],
      ["main", 1, "refund_payment"],
    ]);
    assert.deepEqual(traces["other"]?.map((r) => [r["run"], r["step"], r["tool"]]), [["other", undefined, undefined]]);
  });
});

describe("reading correlation (I21)", () => {
  const line = (fields: string) => `{"emit":1,"hook":"tool.before",${fields}"kind":"hook","outcome":"continue","modified":false}\n`;

  it("reads records with and without it, exactly", () => {
    for (const fields of ["", '"run":"r",', '"run":"r","step":0,', '"run":"r","step":9007199254740991,"tool":"t",', '"step":3,', '"tool":"\u00e9",']) {
      const text = line(fields).replace('"modified":false', '"modified":false,"t_ns":5,"duration_ns":0');
      assert.equal(Trace.fromJSONL(text).toJSONL(), text, fields);
    }
    assert.deepEqual(Trace.fromJSONL(line('"run":null,"step":null,"tool":null,')).records()[0], Trace.fromJSONL(line("")).records()[0]);
  });

  it("rejects a run or tool that is not text and a step that is not an integer from 0 to 2^53 - 1", () => {
    const bad = [
      ['"run":1,', /invalid run 1: a run id is a string \(I21\)/],
      ['"run":["r"],', /invalid run/],
      ['"tool":true,', /invalid tool True: a tool name is a string \(I21\)/],
      ['"tool":{},', /invalid tool/],
      ['"step":-1,', /invalid step -1: a step is an integer from 0 to 9007199254740991 \(I21\)/],
      ['"step":9007199254740992,', /invalid step 9007199254740992/],
      ['"step":1.0,', /invalid step 1\.0/],
      ['"step":1.5,', /invalid step 1\.5/],
      ['"step":"1",', /invalid step/],
      ['"step":false,', /invalid step/],
      // A lone surrogate, which no writer writes (I21 writes U+FFFD), as the Rust core refuses it.
      ['"run":"r\\ud800",', /invalid run: it holds a lone surrogate/],
      ['"tool":"\\udcffx",', /invalid tool: it holds a lone surrogate/],
    ] as const;
    for (const [fields, message] of bad) {
      assert.throws(
        () => Trace.fromJSONL(line(fields)),
        (e: unknown) => e instanceof TraceFormatError && e.kind === "invalid_trace" && message.test(e.message),
        fields,
      );
    }
  });
});

describe("envelope run ids (I21)", () => {
  it("must be strings", () => {
    for (const [runId, shown] of [
      [42, "the number 42"],
      [null, "null"],
      [{}, "an object"],
      [Symbol("s"), "a symbol"],
    ] as const) {
      assert.throws(
        () => new Envelope({ runId: runId as never }),
        (e: unknown) => e instanceof TypeError && e.message === `Envelope runId must be a string, got ${shown} (I21)`,
      );
    }
    assert.equal(new Envelope({ runId: "" }).runId, "");
    assert.match(new Envelope({}).runId, /^[0-9a-f]{32}$/);
  });
});
