import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { DEFAULT_LIMIT, Envelope, jsonlSink, MAX_EMIT, RunContext, TaskStartEvent, Trace, TraceFormatError, type TraceRecord } from "../index.js";
import { harness, toolCall } from "../testing/support.js";

interface Read {
  readonly id: string;
  readonly jsonl: string;
  readonly emits: number;
  readonly then: { readonly emits?: number[]; readonly error?: string };
}

/** The shared reads of conformance/cases/trace/reads/ordinal-bounds.json (the Python cores run them too). */
const BOUNDS = fileURLToPath(new URL("../../../conformance/cases/trace/reads/ordinal-bounds.json", import.meta.url));

/** `count` emits through one context into `trace`, one middleware on tool.before; `each` every `every`. */
async function emitInto(trace: Trace, count: number, every = 0, each: (i: number) => void = () => undefined) {
  const { bus, add } = harness();
  add("guard");
  const context = new RunContext({ trace, envelope: new Envelope({ runId: "bounds" }) });
  const event = toolCall();
  for (let i = 1; i <= count; i++) {
    await bus.emit("tool.before", event, context);
    if (every > 0 && i % every === 0) each(i);
  }
}

describe("emit ordinals at their boundaries (I19)", () => {
  it("carry out the shared reads", async () => {
    const reads = (JSON.parse(readFileSync(BOUNDS, "utf8")) as { reads: Read[] }).reads;
    assert.equal(reads.length, 6);
    for (const read of reads) {
      if (read.then.error !== undefined) {
        assert.throws(() => Trace.fromJSONL(read.jsonl), (e: unknown) => e instanceof TraceFormatError && e.kind === read.then.error, read.id);
        continue;
      }
      const trace = Trace.fromJSONL(read.jsonl);
      const { bus } = harness();
      const context = new RunContext({ trace });
      for (let i = 0; i < read.emits; i++) await bus.emit("task.start", new TaskStartEvent({ task: "t" }), context);
      assert.deepEqual(
        trace.records().map((r) => r.emit),
        read.then.emits,
        read.id,
      );
      assert.equal(trace.emits, read.then.emits?.at(-1));
      assert.deepEqual(Trace.fromJSONL(trace.toJSONL()).records(), trace.records());
    }
    assert.equal(MAX_EMIT, 2 ** 53 - 1);
  });
});

interface NestedRead {
  readonly id: string;
  readonly line: { readonly before: string; readonly open: string; readonly depth: number; readonly inner: string; readonly close: string; readonly after: string };
  readonly then: { readonly records?: number; readonly error?: string };
}

/** The shared reads of conformance/cases/trace/reads/nesting.json (the Python cores run them too). */
const NESTING = fileURLToPath(new URL("../../../conformance/cases/trace/reads/nesting.json", import.meta.url));

describe("nesting in a trace line (I32)", () => {
  it("carry out the shared reads: invalid_trace however deep, never a stack error", () => {
    const reads = (JSON.parse(readFileSync(NESTING, "utf8")) as { reads: NestedRead[] }).reads;
    assert.equal(reads.length, 11);
    for (const { id, line, then } of reads) {
      const text = `${line.before}${line.open.repeat(line.depth)}${line.inner}${line.close.repeat(line.depth)}${line.after}\n`;
      if (then.error !== undefined) {
        assert.throws(() => Trace.fromJSONL(text), (e: unknown) => e instanceof TraceFormatError && e.kind === then.error && !/call stack/.test(e.message), id);
        continue;
      }
      assert.equal(Trace.fromJSONL(text).records().length, then.records, id);
    }
  });
});

describe("bounded traces (I20)", () => {
  it("keep the newest records up to their limit, counting the dropped ones", async () => {
    assert.equal(new Trace().limit, DEFAULT_LIMIT);
    assert.equal(new Trace({ limit: null }).limit, null);
    assert.throws(() => new Trace({ limit: 0 }), RangeError);
    assert.throws(() => new Trace({ batch: 0 }), RangeError);
    const trace = new Trace({ limit: 5 });
    await emitInto(trace, 40);
    assert.equal(trace.length, 5);
    assert.equal(trace.dropped, 75);
    assert.deepEqual(
      trace.records().map((r) => [r.emit, r.kind]),
      [[38, "hook"], [39, "outcome"], [39, "hook"], [40, "outcome"], [40, "hook"]],
    );
    assert.equal(trace.at(0)?.emit, 38);
    const line = trace.toJSONL().split("\n")[0] ?? "";
    const text = Array.from({ length: 10 }, (_, i) => line.replace('"emit":38', `"emit":${String(i + 1)}`)).join("\n");
    const read = Trace.fromJSONL(text, { limit: 4 });
    assert.deepEqual(read.records().map((r) => r.emit), [7, 8, 9, 10]);
    assert.equal(read.dropped, 6);
  });

  it("hand back and free what was recorded on drain(), ordinals going on", async () => {
    const trace = new Trace();
    const emits: number[] = [];
    const held: number[] = [];
    await emitInto(trace, 200_000, 10_000, () => {
      held.push(trace.length);
      for (const record of trace.drain()) emits.push(record.emit);
      assert.equal(trace.length, 0);
    });
    assert.deepEqual(held, Array.from({ length: 20 }, () => 20_000));
    assert.equal(emits.length, 400_000);
    assert.ok(emits.every((emit, i) => emit === Math.floor(i / 2) + 1));
    assert.equal(trace.emits, 200_000);
    assert.equal(trace.dropped, 0);
  });

  it("hand every record to a sink in batches and stay bounded", async () => {
    const batches: number[] = [];
    const emits: number[] = [];
    const trace = new Trace({
      batch: 1000,
      sink: (records: TraceRecord[]) => {
        batches.push(records.length);
        for (const record of records) emits.push(record.emit);
      },
    });
    const held: number[] = [];
    await emitInto(trace, 200_000, 997, () => held.push(trace.length));
    assert.ok(Math.max(...held) <= 1002);
    const left = trace.length;
    assert.ok(left > 0);
    assert.equal(trace.flush(), left);
    assert.equal(trace.flush(), 0);
    assert.deepEqual(new Set(batches.slice(0, -1)), new Set([1000]));
    assert.equal(emits.length, 400_000);
    assert.ok(emits.every((emit, i) => emit === Math.floor(i / 2) + 1));
  });

  it("write JSON Lines through jsonlSink, the lines toJSONL writes", async () => {
    let written = "";
    const trace = new Trace({ sink: jsonlSink({ write: (text: string) => (written += text) }), batch: 3 });
    const reference = new Trace();
    await emitInto(trace, 5);
    await emitInto(reference, 5);
    trace.close();
    const untimed = (text: string) =>
      text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => {
          const { t_ns: _t, duration_ns: _d, ...rest } = JSON.parse(l) as TraceRecord;
          return rest;
        });
    assert.deepEqual(untimed(written), untimed(reference.toJSONL()));
    assert.equal(trace.length, 0);
  });

  it("count a failing sink's records as dropped, and throw its error on flush()", async () => {
    const trace = new Trace({
      batch: 4,
      sink: () => {
        throw new Error("secret-sink-detail");
      },
    });
    await emitInto(trace, 10);
    assert.ok(trace.dropped >= 4);
    assert.throws(() => trace.flush(), /secret-sink-detail/);
    assert.equal(trace.length, 0);
    assert.equal(trace.dropped, 20);
  });
});
