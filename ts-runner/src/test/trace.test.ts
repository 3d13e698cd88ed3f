import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Block, Continue, RunContext, StepEndEvent, Suspend, Trace, TRACE_FIELDS, TraceFormatError } from "../index.js";
import { sleep } from "../conformance/waiting.js";
import { appended, harness, RUN, TOOL_CALL, toolCall, untimed } from "../testing/support.js";

/** A trace holding an outcome record, an open failure record and a hook record. */
async function mixed() {
  const { bus, context, add } = harness();
  add("editor", (e) => Continue(appended(e, "x")), { band: "platform" });
  add("flaky", () => Promise.reject(new Error("card x4242 declined")), { failMode: "open" });
  add("approver", () => Suspend("needs approval by alice", { approverRole: "finance", code: "approval" }));
  await bus.emit("tool.before", toolCall(), context);
  return context.trace;
}

describe("trace records (rulings 19-21, I8)", () => {
  it("hold exactly the keys of their kind, in the fixed order", async () => {
    const trace = await mixed();
    assert.deepEqual(trace.records().map(Object.keys), [
      ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "t_ns", "duration_ns"],
      ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "failure", "error", "fail_mode", "t_ns", "duration_ns"],
      ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "code", "t_ns", "duration_ns"],
      ["emit", "hook", "run", "step", "tool", "kind", "outcome", "modified", "code", "t_ns", "duration_ns"],
    ]);
    assert.deepEqual(untimed(trace), [
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "outcome", middleware: "editor", band: "platform", outcome: "continue", modified: true },
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "failure", middleware: "flaky", band: "app", outcome: "continue", modified: false, failure: "exception", error: "Error", fail_mode: "open" },
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "outcome", middleware: "approver", band: "app", outcome: "suspend", modified: false, code: "approval" },
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "hook", outcome: "suspend", modified: false, code: "approval" },
    ]);
    assert.deepEqual([...TRACE_FIELDS], ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "code", "failure", "error", "fail_mode", "contract", "warnings", "audit", "input_identity", "enforced_identity", "t_ns", "duration_ns"]);
  });

  it("of plain answers, timed or not, are frozen with the keys of every other record", async () => {
    const { bus, context, add } = harness();
    add("quiet");
    add("timed", () => null, { timeout: "2s" });
    await bus.emit("tool.before", toolCall(), context);
    const records = context.trace.records();
    assert.ok(records.every((record) => Object.isFrozen(record)));
    assert.deepEqual(records.map(Object.keys), [
      ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "t_ns", "duration_ns"],
      ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "t_ns", "duration_ns"],
      ["emit", "hook", "run", "step", "tool", "kind", "outcome", "modified", "t_ns", "duration_ns"],
    ]);
    assert.deepEqual(untimed(records), [
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "outcome", middleware: "quiet", band: "app", outcome: "continue", modified: false },
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "outcome", middleware: "timed", band: "app", outcome: "continue", modified: false },
      { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "hook", outcome: "continue", modified: false },
    ]);
    for (const record of records) assert.ok(Number.isInteger(record.t_ns) && Number.isInteger(record.duration_ns) && record.duration_ns >= 0);
  });

  it("never hold a reason or a message (R9)", async () => {
    const text = (await mixed()).toJSONL();
    // "x4242", not "4242": the digits alone can occur in a timestamp (t_ns, duration_ns).
    for (const secret of ["x4242", "declined", "alice", "finance", "reason", "message"]) assert.ok(!text.includes(secret), secret);
  });

  it("leave a hook record for a hook point without middleware", async () => {
    const { bus, context } = harness();
    await bus.emit("step.end", new StepEndEvent({}), context);
    assert.deepEqual(untimed(context.trace), [{ emit: 1, hook: "step.end", run: RUN, step: 0, kind: "hook", outcome: "continue", modified: false }]);
  });

  it("number emits per trace, on every hook point, and time them", async () => {
    const { bus, context, add } = harness();
    add("gate", () => Block("no"));
    await bus.emit("step.end", new StepEndEvent({}), context);
    await bus.emit("tool.before", toolCall(), context);
    const other = new RunContext();
    await bus.emit("tool.before", toolCall(), other);
    assert.deepEqual(context.trace.records().map((r) => r.emit), [1, 2, 2]);
    assert.deepEqual(other.trace.records().map((r) => r.emit), [1, 1]);
    assert.equal(context.trace.at(1)?.code, undefined); // an uncoded Block has no code key
    for (const record of context.trace) assert.ok(Number.isInteger(record.t_ns) && record.duration_ns >= 0);
  });

  it("never mix concurrent emits made with separate contexts (ruling 21)", async () => {
    const { bus, add } = harness();
    add("outer", async (_e, signal) => void (await sleep(0, signal)), { band: "baseline" });
    add("editor", async (e, signal) => {
      await sleep(0, signal);
      return Continue(appended(e, "edited"));
    });
    const contexts = [new RunContext(), new RunContext(), new RunContext()];
    await Promise.all(contexts.map((context) => bus.emit("tool.before", toolCall(), context)));
    for (const context of contexts) {
      assert.deepEqual(untimed(context.trace).map((r) => [r["emit"], r["kind"], r["middleware"]]), [
        [1, "outcome", "outer"],
        [1, "outcome", "editor"],
        [1, "hook", undefined],
      ]);
    }
  });
});

describe("JSON Lines (I8)", () => {
  it("writes compact lines, keys in order, and reads them back", async () => {
    const trace = await mixed();
    const text = trace.toJSONL();
    const lines = text.split("\n");
    assert.equal(lines.pop(), "");
    assert.equal(lines.length, 4);
    assert.ok(lines[0]?.startsWith('{"emit":1,"hook":"tool.before","run":"run-1","step":1,"tool":"refund_payment","kind":"outcome","middleware":"editor","band":"platform","outcome":"continue","modified":true,"t_ns":'));
    const back = Trace.fromJSONL(text);
    assert.deepEqual(back.records(), trace.records());
    assert.equal(back.toJSONL(), text);
    assert.equal(back.emits, 1); // numbering goes on after what was read
  });

  it("writes and reads files", async () => {
    const trace = await mixed();
    const file = join(await mkdtemp(join(tmpdir(), "hw-trace-")), "trace.jsonl");
    await trace.writeJSONL(file);
    assert.equal(await readFile(file, "utf8"), trace.toJSONL());
    assert.deepEqual((await Trace.readJSONL(file)).records(), trace.records());
  });

  it("reads lines written by the other implementations, nulls as absent, blank lines skipped", () => {
    const python = [
      '{"emit": 1, "hook": "tool.before", "kind": "failure", "middleware": "guard", "band": "app", "outcome": "block", "modified": false, "code": "middleware_timeout", "failure": "timeout", "error": "MiddlewareTimeout", "fail_mode": "closed", "t_ns": 18446744073709551615, "duration_ns": 0}',
      "",
      '{"emit":1,"hook":"tool.before","kind":"hook","outcome":"block","modified":false,"code":"middleware_timeout","middleware":null}',
    ].join("\r\n");
    const records = Trace.fromJSONL(python).records();
    assert.equal(records.length, 2);
    assert.equal(records[1]?.t_ns, 0);
    assert.equal("middleware" in (records[1] ?? {}), false);
  });

  const base = { emit: 1, hook: "tool.before", kind: "hook", outcome: "continue", modified: false };
  const bad: [string, string, string][] = [
    ["not JSON", "{", "expected a key"],
    ["not an object", "[1]", "not a JSON object"],
    ["a duplicate key", '{"emit":1,"emit":2,"hook":"tool.before","kind":"hook","outcome":"continue","modified":false}', "duplicate field 'emit'"],
    ["an unknown key", JSON.stringify({ ...base, reason: "x" }), "unknown field 'reason'"],
    ["a missing key", JSON.stringify({ ...base, modified: undefined }), "missing field 'modified'"],
    ["emit 0", JSON.stringify({ ...base, emit: 0 }), "emit is an ordinal from 1, not 0"],
    ["a fractional emit", '{"emit":1.0,"hook":"tool.before","kind":"hook","outcome":"continue","modified":false}', "invalid emit 1.0"],
    ["a negative emit", JSON.stringify({ ...base, emit: -1 }), "invalid emit -1"],
    ["an emit too large (I19)", JSON.stringify({ ...base, emit: 2 ** 53 }), "invalid emit 9007199254740992"],
    ["a t_ns too large", '{"emit":1,"hook":"tool.before","kind":"hook","outcome":"continue","modified":false,"t_ns":18446744073709551616}', "invalid t_ns"],
    ["a text of another type", JSON.stringify({ ...base, hook: 7 }), "invalid hook 7"],
    ["an unknown hook", JSON.stringify({ ...base, hook: "tool.during" }), "unknown hook 'tool.during'"],
    ["an unknown kind", JSON.stringify({ ...base, kind: "note" }), "unknown kind 'note'"],
    ["an unknown band", JSON.stringify({ ...base, kind: "outcome", middleware: "m", band: "core" }), "unknown band 'core'"],
    ["modified that is not a boolean", JSON.stringify({ ...base, modified: 1 }), "invalid modified 1"],
    ["modified on a block", JSON.stringify({ ...base, outcome: "block", modified: true }), "modified is true only for a continue, not for 'block'"],
    ["a code on a continue", JSON.stringify({ ...base, code: "x" }), "a continue has no code"],
    ["an outcome record without middleware", JSON.stringify({ ...base, kind: "outcome", band: "app" }), "a outcome record needs middleware"],
    ["a hook record with a band", JSON.stringify({ ...base, band: "app" }), "a hook record has no band"],
    [
      "a failure resolved against its fail mode",
      JSON.stringify({ ...base, kind: "failure", middleware: "m", band: "app", failure: "timeout", error: "MiddlewareTimeout", fail_mode: "closed", outcome: "block", code: "middleware_error" }),
      "a timeout failure of a fail_mode closed middleware is recorded as block with code 'middleware_timeout'",
    ],
  ];
  for (const [title, line, problem] of bad) {
    it(`refuses ${title}, naming the line`, () => {
      assert.throws(
        () => Trace.fromJSONL(`${JSON.stringify(base)}\n\n${line}\n`),
        (error: unknown) => {
          assert.ok(error instanceof TraceFormatError);
          assert.equal(error.kind, "invalid_trace");
          assert.equal(error.rule, "I8");
          assert.ok(error.message.startsWith("invalid trace line 3: "), error.message);
          assert.ok(error.message.includes(problem), error.message);
          return true;
        },
      );
    });
  }
});
